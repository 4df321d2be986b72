//! Seed 004's adaptive upstream: a router that sends towards a peer router over a radio
//! (with link acks) or a modem, whichever delivers (the simulator's `upstream`).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// One adaptive upstream between two routers, as lowered from the scenario's
/// `[node.NAME.adaptive]` table (the Python model documents each default and its source).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AdaptiveConfig {
    /// The router that chooses (seed 004's home router).
    pub node: u32,
    /// Its port on the radio (an 802.11 cell the peer is a member of).
    pub radio_port: u16,
    /// Its port on the modem (a serial line whose other end is the peer).
    pub modem_port: u16,
    /// The router at the other end (campus).
    pub peer: u32,
    /// The peer's port on the radio.
    pub peer_radio_port: u16,
    /// `ArqConfig::initial_timeout_ns` (the simulator's `adaptive`).
    pub initial_timeout_ns: u64,
    /// `ArqConfig::max_timeout_ns` (the simulator's `adaptive`): seed 004's 100 ms.
    pub max_timeout_ns: u64,
    /// `ArqConfig::max_attempts` (the simulator's `adaptive`).
    pub max_attempts: u32,
    /// `RatioConfig::window` (the simulator's `adaptive`).
    pub ratio_window: usize,
    /// `RatioConfig::min_samples` (the simulator's `adaptive`).
    pub ratio_min_samples: usize,
    /// `ChooserConfig::low` (the simulator's `adaptive`).
    pub low: f64,
    /// `ChooserConfig::high` (the simulator's `adaptive`).
    pub high: f64,
    /// `ChooserConfig::probe_interval_ns` (the simulator's `adaptive`).
    pub probe_interval_ns: u64,
    /// Shortest time between two samples of the ratios in the results.
    pub sample_interval_ns: u64,
}

impl AdaptiveConfig {
    /// Refuses what the sans-IO models would panic on, naming the field.
    pub fn check(&self) -> Result<(), (&'static str, String)> {
        if self.initial_timeout_ns == 0 {
            return Err(("initial_timeout_ns", "must be positive".into()));
        }
        if self.max_timeout_ns < self.initial_timeout_ns {
            return Err(("max_timeout_ns", "must be at least initial_timeout_ns".into()));
        }
        if self.max_attempts == 0 {
            return Err(("max_attempts", "at least one transmission".into()));
        }
        if self.ratio_window == 0 || self.ratio_min_samples > self.ratio_window {
            return Err(("ratio_window", "a positive window at least ratio_min_samples long".into()));
        }
        if !((0.0..=1.0).contains(&self.low) && (0.0..=1.0).contains(&self.high) && self.low <= self.high) {
            return Err(("low", format!("need 0 <= low <= high <= 1, found low {} high {}", self.low, self.high)));
        }
        if self.probe_interval_ns == 0 {
            return Err(("probe_interval_ns", "must be positive".into()));
        }
        Ok(())
    }
}
