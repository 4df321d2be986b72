//! qoslab's real-time link emulator: one link of a plan (Ethernet, or a serial line with
//! SLIP, CSLIP or PPP framing, between two TUN/TAP devices; an 802.11 cell, or the ATM
//! network for Classical IP over ATM, with a TAP per end), with the simulator's own link
//! models run against the monotonic clock.
//!
//! - [`line`]: the line, sans-IO: crates/sim's own `Line` (serializer, queue, each
//!   direction's loss, shaper or policer), built by the world's constructor and driven
//!   through the `Link` trait by `now` in ns; counters per direction and reason.
//! - [`device`]: the TUN/TAP ends, opened by name or handed over as descriptors.
//! - [`emulate`] (`run.rs`): the loop (one thread, `ppoll`, a spin before deadlines), a
//!   stop on a descriptor or a signal, and the [`Report`] it returns.
//! - [`lateness`]: how late each write was against the model's arrival time.
//! - [`tunnel`]: a user-space tunnel end (PPPoE, IPsec tunnel mode): crates/sim's own
//!   `TunnelEnd` between a TUN device and raw sockets, for what the kernel lacks.
//! - [`stamps`]: when each frame came into its TAP, from the kernel's timestamp (a packet
//!   socket on the device), so that a frame is offered at that instant, not at its read.
//!
//! - [`shared`]: a link with many ends (an 802.11 cell: crates/sim's own `WifiCell`,
//!   built by the world's constructor), one TAP per member.
//!
//! What the plan has and the emulator does not (yet): ATM links (refused with the link
//! named); jitter (the plan has none: the delay is constant, so frames of a
//! direction arrive in the order sent).

pub mod device;
pub mod lateness;
pub mod line;
pub mod nfqueue;
mod run;
pub mod shared;
mod signal;
pub mod stamps;
pub mod transport;
pub mod tunnel;

pub use run::{emulate, emulate_plan, link_ends, DirectionReport, Error, Options, Report, REPORT_SCHEMA};
