//! IEEE 802.11 (Wi-Fi) models: PHY timing of 802.11b and 802.11g, the DCF
//! channel access of a station, and Bianchi's analytical saturation model as a
//! reference for them.
//!
//! Standards a reader must know: IEEE Std 802.11-2020, clauses 9 (frame
//! formats), 10.3 (DCF), 12 (WEP/TKIP/CCMP framing), 15 and 16 (DSSS and
//! HR/DSSS, "802.11b"), 17 and 18 (OFDM and ERP, "802.11g"); G. Bianchi,
//! "Performance Analysis of the IEEE 802.11 Distributed Coordination Function",
//! IEEE JSAC 18(3), March 2000.
//!
//! * [`phy`] — frame durations, interframe spaces, rates, frame exchange timelines.
//! * [`dcf`] — the sans-IO DCF entity of one station (ns-3's
//!   `ChannelAccessManager` design: analytical backoff end, one timer).
//! * [`bianchi`] — saturation throughput of n stations.
//! * [`adapter`] — what a port does between Ethernet frames and MPDUs: the address
//!   rules of Table 9-26 for stations, APs and IBSS (seed 000 §2.1) and the ciphers.
//! * [`bss`] — the shared medium of one BSS: a DCF and a queue per member,
//!   collisions per receiver (hidden terminals), Ack/RTS/CTS/NAV/EIFS, one timer.
//! * [`cell`] — the cell as a link (`crate::link::Link`): the medium, each member's
//!   adapter, the AP's relay within the BSS, the air's delay.
//!
//! Everything here is sans-IO: time comes in as `now`, randomness as a value or a
//! closure from the caller.

pub mod adapter;
pub mod bianchi;
pub mod bss;
pub mod cell;
pub mod dcf;
pub mod phy;

/// Simulated time in nanoseconds. The engine's `SimTime` wraps the same `u64`;
/// this alias keeps the switch to it a one-line change.
pub type Nanos = u64;

pub use adapter::{Adapter, CipherCost, Converted, DropReason, ForeignSource, LinkCipher, Role};
pub use bianchi::{BianchiInputs, BianchiSolution};
pub use bss::{AirFrame, BeaconParams, Bss, BssEvent, BssParams, FrameKind, MemberStats};
pub use dcf::{Access, AfterFailure, Dcf, DcfParams, FailedAttempt};
pub use phy::{FrameExchange, PhyParams, Preamble, Protection, Rate, Security, Standard};
