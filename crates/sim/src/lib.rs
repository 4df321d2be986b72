//! qoslab's deterministic discrete-event simulator: the engine and the network models.
//!
//! - [`time`]: simulated time in integer nanoseconds, and exact transmission times.
//! - [`engine`]: the scheduler, a heap of plain events keyed `(time, insertion order)`.
//! - [`rng`]: one seeded random stream per (run seed, component, purpose).
//! - [`wifi`]: the 802.11 medium and DCF.
//!
//! Determinism is the contract: the same scenario and seed give byte-identical
//! results. Nothing here reads the wall clock, hashes in a random order or shares
//! random state between components.

pub mod engine;
pub mod forward;
pub mod rng;
pub mod time;
pub mod wifi;
