//! qoslab's deterministic discrete-event simulator: the engine and the network models.
//!
//! - [`time`]: simulated time in integer nanoseconds, and exact transmission times.
//! - [`engine`]: the scheduler, a heap of plain events keyed `(time, insertion order)`.
//! - [`wake`]: a model's timer slot, the one rule by which a model's "wake me at" is armed.
//! - [`rng`]: one seeded random stream per (run seed, component, purpose).
//! - [`node`]: a node (ports, bridge, CPU) and what it holds: the IPv4 stack, path MTU,
//!   the CPU server, bridges and NAT (`node::forward`), seed 004's adaptive router.
//! - [`link`]: point-to-point lines (Ethernet, serial), their impairments and PPP.
//! - [`tunnel`]: IPsec, OpenVPN (UDP and TCP), PPPoE and PPTP, and the virtual interfaces
//!   they are.
//! - [`wifi`]: the 802.11 medium and DCF.
//! - [`atm`]: ATM cells, switches, AAL5, CLIP (ATMARP) and UNI signalling.
//! - [`tcp`]: the TCP socket and its congestion control.
//! - [`app`]: test traffic (probes and sources) and the flows' statistics.
//! - [`config`]: the lowered network a run starts from; [`world`] runs it; [`results`]
//!   is what comes out, [`conservation`] accounts for every datagram in it.
//!
//! Determinism is the contract: the same scenario and seed give byte-identical
//! results. Nothing here reads the wall clock, hashes in a random order or shares
//! random state between components.

pub mod app;
pub mod atm;
pub mod capture;
pub mod config;
pub mod conservation;
pub mod engine;
pub mod link;
pub mod node;
pub mod results;
pub mod rng;
pub mod session;
pub mod tcp;
pub mod time;
pub mod tunnel;
pub mod wake;
pub mod wifi;
pub mod world;

/// Runs a simulation from its configuration JSON; returns the results.
/// With `config.capture`, the frames of every capture point are in
/// `Results::captures` (kept in memory: [`simulate_into`] hands them on as they come).
pub fn simulate(config: config::SimConfig) -> Result<results::Results, world::RunError> {
    if config.capture {
        return simulate_into(config, Box::new(capture::Memory::default()));
    }
    world::World::new(config)?.run()
}

/// Runs a simulation, capturing: every frame a capture point sees goes to `sink` as it
/// is seen, and the sink says what it wrote in the results (`Results::capture`).
pub fn simulate_into(
    mut config: config::SimConfig,
    sink: Box<dyn capture::CaptureSink>,
) -> Result<results::Results, world::RunError> {
    config.capture = true;
    let mut world = world::World::new(config)?;
    world.capture_to(sink)?;
    world.run()
}

/// Builds the world of a configuration without running it: every refusal `simulate`
/// would give before its first event, so that `qoslab check` refuses what `run` would.
pub fn validate(config: config::SimConfig) -> Result<(), world::RunError> {
    world::World::new(config).map(|_| ())
}
