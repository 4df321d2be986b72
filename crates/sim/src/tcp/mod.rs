//! TCP as a sans-IO model: a socket takes `now` and segments, returns segments to send
//! and tells when it next needs waking ([`TcpSocket::poll_at`]).
//!
//! Standards a reader must know:
//!
//! * RFC 9293 — the state machine (§3.3.2), sequence checks and segment arrival
//!   (§3.10.7), the window (§3.8.6), MSS (§3.7.1);
//! * RFC 5681 — slow start, congestion avoidance, fast retransmit, delayed ACKs (§4.2);
//! * RFC 6582 — NewReno fast recovery with partial ACKs;
//! * RFC 2018 and RFC 6675 — SACK blocks and the pipe-based loss recovery;
//! * RFC 8985 — RACK-TLP: time-based loss detection and tail loss probes;
//! * RFC 6298 — the retransmission timer; RFC 6928 — the initial window of ten;
//! * RFC 7323 — window scaling and timestamps; RFC 9438 — CUBIC; RFC 9406 — HyStart++;
//! * RFC 1122 §4.2.3.4 / RFC 896 — Nagle's algorithm and sender silly-window avoidance.
//!
//! Time is `u64` nanoseconds of simulated time throughout. The model never reads a
//! clock: the engine passes `now` into [`TcpSocket::process`] and
//! [`TcpSocket::dispatch`], and turns [`TcpSocket::poll_at`] into one timer.
//!
//! - [`config`]: [`TcpConfig`], every knob typed with its default and source;
//! - [`rtt`]: the RFC 6298 estimator;
//! - [`congestion`]: NewReno (RFC 5681/6582) and CUBIC (RFC 9438) window rules;
//! - [`linux_cubic`]: CUBIC's avoidance as Linux's tcp_cubic.c computes it;
//! - [`hystart`]: leaving slow start early, Linux's HyStart or RFC 9406 HyStart++;
//! - [`sack`]: the RFC 6675 scoreboard (IsLost, pipe, NextSeg);
//! - [`rack`]: RFC 8985 RACK's per-segment record and loss inference, TLP's state;
//! - [`socket`]: the connection itself;
//! - [`report`]: interval records (iperf3 `-i`) and per-ACK traces in columns.

pub mod config;
pub mod congestion;
pub mod hystart;
pub mod linux_cubic;
pub mod rack;
pub mod report;
pub mod rtt;
pub mod sack;
pub mod socket;

pub use config::{CongestionControl, CubicAlpha, CwndGrowth, HyStartMode, TcpConfig};
pub use socket::{MtuProbing, State, TcpSocket, TcpStats, TraceRecord};
