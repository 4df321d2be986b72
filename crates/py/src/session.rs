//! Bindings for a session (crates/sim/src/session.rs): a network's configuration decoded
//! once, each test on it run from its own part, in a world of its own; the results are
//! the JSON `simulate` gives for the test's whole configuration, byte for byte.

use std::path::Path;

use pyo3::exceptions::{PyOSError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;

use crate::capture::PcapDir;
use crate::sim::SimulationError;

/// A network decoded once (its whole configuration as JSON, traffic or none), for the
/// tests run on it with `simulate(test_json)`.
#[pyclass(frozen, module = "qoslab._core")]
pub struct Session {
    inner: sim::session::Session,
}

#[pymethods]
impl Session {
    #[new]
    fn new(py: Python<'_>, network_json: &str) -> PyResult<Session> {
        let config: sim::config::SimConfig = py
            .detach(|| sim::config::from_json(network_json))
            .map_err(|e| PyValueError::new_err(format!("simulation configuration: {e}")))?;
        Ok(Session { inner: sim::session::Session::new(config) })
    }

    /// Checks that the simulator accepts one test on this network (builds its world, runs
    /// nothing), as `qoslab._core.validate` for the whole configuration. Raises ValueError
    /// with the refused field and why.
    fn validate(&self, py: Python<'_>, test_json: &str) -> PyResult<()> {
        let test: sim::session::TestPart = sim::config::from_json(test_json)
            .map_err(|e| PyValueError::new_err(format!("simulation configuration: {e}")))?;
        py.detach(|| self.inner.world(test).map(|_| ())).map_err(|e| PyValueError::new_err(e.to_string()))
    }

    /// Runs one test on this network: `test_json` holds what the test sets (seed,
    /// duration_ns, flows, capture, budget, cpu_window_ns, windows; crates/sim/src/session.rs
    /// `TestPart`), the rest is the network's. As `qoslab._core.simulate` for the whole
    /// configuration: the same results, captures and errors.
    #[pyo3(signature = (test_json, pcap_dir=None, snaplen=None, max_bytes=None))]
    fn simulate(
        &self,
        py: Python<'_>,
        test_json: &str,
        pcap_dir: Option<&str>,
        snaplen: Option<u32>,
        max_bytes: Option<u64>,
    ) -> PyResult<String> {
        let test: sim::session::TestPart = sim::config::from_json(test_json)
            .map_err(|e| PyValueError::new_err(format!("simulation configuration: {e}")))?;
        let snaplen = snaplen.unwrap_or(wire::pcap::SNAPLEN);
        if snaplen == 0 {
            return Err(PyValueError::new_err("snaplen: a snapshot length of at least 1 byte"));
        }
        let mut config = self.inner.config(test);
        let results = match pcap_dir {
            Some(dir) => {
                std::fs::create_dir_all(dir).map_err(|e| PyOSError::new_err(format!("{dir}: {e}")))?;
                let sink = Box::new(PcapDir::new(Path::new(dir), snaplen, max_bytes));
                py.detach(|| sim::simulate_into(config, sink))
            }
            None => {
                // Nothing would read the frames: do not keep them (as `simulate`).
                config.capture = false;
                py.detach(|| sim::simulate(config))
            }
        }
        .map_err(|e| match e {
            sim::world::RunError::Config(c) => PyValueError::new_err(c.to_string()),
            sim::world::RunError::Budget(m) => SimulationError::new_err(m),
            sim::world::RunError::Capture(m) => PyOSError::new_err(m),
        })?;
        py.detach(|| serde_json::to_string(&results)).map_err(|e| PyRuntimeError::new_err(e.to_string()))
    }
}
