//! qoslab's deterministic discrete-event simulator: the engine and the network models.
//!
//! - [`time`]: simulated time in integer nanoseconds, and exact transmission times.
//! - [`engine`]: the scheduler, a heap of plain events keyed `(time, insertion order)`.
//! - [`rng`]: one seeded random stream per (run seed, component, purpose).
//! - [`wifi`]: the 802.11 medium and DCF.
//! - [`atm`]: ATM cells, switches, AAL5, CLIP (ATMARP) and UNI signalling.
//! - [`config`]: the lowered network a run starts from; [`world`] runs it; [`results`]
//!   is what comes out.
//! - [`upstream`]: seed 004's adaptive router (radio with link ARQ, or modem) in a world.
//! - [`link`], [`node`], [`ip`], [`ipsec`], [`cpu`], [`forward`], [`app`], [`stats`]: the models.
//!
//! Determinism is the contract: the same scenario and seed give byte-identical
//! results. Nothing here reads the wall clock, hashes in a random order or shares
//! random state between components.

pub mod adaptive;
pub mod app;
pub mod atm;
pub mod config;
pub mod conservation;
pub mod cpu;
pub mod engine;
pub mod forward;
pub mod impair;
pub mod ip;
pub mod ipsec;
pub mod link;
pub mod node;
pub mod pmtu;
pub mod openvpn;
pub mod openvpn_tcp;
pub mod ppp;
pub mod pppoe;
pub mod pptp;
pub mod pptp_vif;
pub mod results;
pub mod rng;
pub mod serial;
pub mod stats;
pub mod tcp;
pub mod time;
pub mod upstream;
pub mod vif;
pub mod wifi;
pub mod world;

/// Runs a simulation from its configuration JSON; returns the results.
pub fn simulate(config: config::SimConfig) -> Result<results::Results, world::RunError> {
    world::World::new(config)?.run()
}

/// Builds the world of a configuration without running it: every refusal `simulate`
/// would give before its first event, so that `qoslab check` refuses what `run` would.
pub fn validate(config: config::SimConfig) -> Result<(), world::RunError> {
    world::World::new(config).map(|_| ())
}
