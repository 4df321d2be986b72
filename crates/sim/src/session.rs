//! Many tests on one network: the network's configuration is decoded once, and each test
//! runs in a world of its own built from it.
//!
//! A sweep over 1,000 pings among 1,000 hosts, or a scenario with 1,000 tests, runs
//! 1,000 simulations of one network that differ only in their traffic. Decoding the
//! network's 1.2 MB of JSON for each is most of the core's time per test. A
//! [`Session`] keeps the decoded network; [`Session::config`] gives a test's whole
//! [`SimConfig`]: the network's, with the fields a test sets ([`TestPart`]) replaced.
//! That is the configuration the test would have had alone, field for field, so its
//! world and its results are the same, byte for byte (crates/sim/tests/session.rs, and
//! tests/test_sweep_session.py over every example's tests, compare the bytes).
//!
//! Each test still gets a fresh [`World`]: worlds are never shared or reused between
//! tests, because a world carries the state its run leaves (ARP caches, learnt bridge
//! tables, queues, timers, random streams): a test run after another in one world would
//! not measure what it measures alone.

use serde::Deserialize;

use crate::config::{BudgetConfig, FlowConfig, SimConfig, WindowConfig};
use crate::results::Results;
use crate::world::{RunError, World};

/// What one test sets in a configuration on top of its network: its traffic, its run
/// length and its seed (python/qoslab/backends/sim.py `Network.with_flows`, and the CPU
/// window `run_tests` adds). A field left out keeps the network configuration's value.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TestPart {
    pub seed: Option<u64>,
    pub duration_ns: Option<u64>,
    pub flows: Option<Vec<FlowConfig>>,
    pub capture: Option<bool>,
    pub budget: Option<BudgetConfig>,
    pub cpu_window_ns: Option<Option<(u64, u64)>>,
    pub windows: Option<Vec<WindowConfig>>,
}

/// A network decoded once, for the tests run on it.
#[derive(Debug, Clone)]
pub struct Session {
    network: SimConfig,
}

impl Session {
    pub fn new(network: SimConfig) -> Session {
        Session { network }
    }

    /// The whole configuration of one test on this network.
    pub fn config(&self, test: TestPart) -> SimConfig {
        let mut config = self.network.clone();
        let TestPart { seed, duration_ns, flows, capture, budget, cpu_window_ns, windows } = test;
        if let Some(v) = seed {
            config.seed = v;
        }
        if let Some(v) = duration_ns {
            config.duration_ns = v;
        }
        if let Some(v) = flows {
            config.flows = v;
        }
        if let Some(v) = capture {
            config.capture = v;
        }
        if let Some(v) = budget {
            config.budget = v;
        }
        if let Some(v) = cpu_window_ns {
            config.cpu_window_ns = v;
        }
        if let Some(v) = windows {
            config.windows = v;
        }
        config
    }

    /// Runs one test in a world of its own (as [`crate::simulate`]).
    pub fn simulate(&self, test: TestPart) -> Result<Results, RunError> {
        crate::simulate(self.config(test))
    }

    /// Builds a test's world without running it (as [`crate::validate`]).
    pub fn world(&self, test: TestPart) -> Result<World, RunError> {
        World::new(self.config(test))
    }
}
