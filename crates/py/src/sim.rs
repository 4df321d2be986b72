//! Bindings for the simulator: a configuration in, results out, as JSON; captures
//! written as pcap files. The run releases the GIL.

use std::path::Path;

use pyo3::exceptions::{PyOSError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;

use crate::capture::PcapDir;

// Raised when a simulation stops early (a budget exceeded); the message names what.
pyo3::create_exception!(_core, SimulationError, PyRuntimeError);

/// The plan's JSON Schema (`qoslab_plan::plan_schema`, the text of
/// `schema/plan.schema.json`) and its version, so Python can check its models against
/// the types this core was built from.
#[pyfunction]
pub fn plan_schema() -> (String, u32) {
    let text = serde_json::to_string_pretty(&sim::config::plan_schema()).expect("a schema prints") + "\n";
    (text, sim::config::PLAN_SCHEMA)
}

/// Why an 802.11 cell of `standard` cannot send the PLCP `preamble` (both spelt as the
/// plan spells them), or `None` if it can: `qoslab_plan::WifiStandard::preamble_problem`,
/// the one statement of the rule, which the scenario's refusal asks for here.
#[pyfunction]
pub fn wifi_preamble_problem(standard: &str, preamble: &str) -> PyResult<Option<&'static str>> {
    let standard: sim::config::WifiStandard =
        sim::config::from_name(standard).map_err(|e| PyValueError::new_err(format!("standard: {e}")))?;
    let preamble: sim::config::Preamble =
        sim::config::from_name(preamble).map_err(|e| PyValueError::new_err(format!("preamble: {e}")))?;
    Ok(standard.preamble_problem(preamble))
}

/// The results' JSON Schema (`sim::results::results_schema`, the text of
/// `schema/results.schema.json`) and its version.
#[pyfunction]
pub fn results_schema() -> (String, u32) {
    let text = serde_json::to_string_pretty(&sim::results::results_schema()).expect("a schema prints") + "\n";
    (text, sim::results::RESULTS_SCHEMA)
}

/// Checks that the simulator accepts `config_json` (decodes it and builds the network,
/// runs nothing). Raises ValueError with the refused field and why.
#[pyfunction]
pub fn validate(py: Python<'_>, config_json: &str) -> PyResult<()> {
    let config: sim::config::SimConfig = sim::config::from_json(config_json)
        .map_err(|e| PyValueError::new_err(format!("simulation configuration: {e}")))?;
    py.detach(|| sim::validate(config)).map_err(|e| PyValueError::new_err(e.to_string()))
}

/// Runs the simulation described by `config_json` (crates/sim/src/config.rs) and returns
/// its results as JSON. With `pcap_dir`, writes one pcap per port, `<node>-<port>.pcap`,
/// one of the 802.11 frames on the air per wifi link, `<link>-air.pcap`, and one of
/// the AAL5 PDUs per ATM port that carried any, `<node>-<port>-aal5.pcap`, record by
/// record as the run goes (crate::capture); each record keeps at most `snaplen` bytes
/// of its frame, and with `max_bytes` the files together stay within it (the results'
/// `capture` says where the capture was cut).
#[pyfunction]
#[pyo3(signature = (config_json, pcap_dir=None, snaplen=None, max_bytes=None))]
pub fn simulate(
    py: Python<'_>,
    config_json: &str,
    pcap_dir: Option<&str>,
    snaplen: Option<u32>,
    max_bytes: Option<u64>,
) -> PyResult<String> {
    let mut config: sim::config::SimConfig = sim::config::from_json(config_json)
        .map_err(|e| PyValueError::new_err(format!("simulation configuration: {e}")))?;
    let snaplen = snaplen.unwrap_or(wire::pcap::SNAPLEN);
    if snaplen == 0 {
        return Err(PyValueError::new_err("snaplen: a snapshot length of at least 1 byte"));
    }
    let results = match pcap_dir {
        Some(dir) => {
            std::fs::create_dir_all(dir).map_err(|e| PyOSError::new_err(format!("{dir}: {e}")))?;
            let sink = Box::new(PcapDir::new(Path::new(dir), snaplen, max_bytes));
            py.detach(|| sim::simulate_into(config, sink))
        }
        None => {
            // Nothing would read the frames: do not keep them.
            config.capture = false;
            py.detach(|| sim::simulate(config))
        }
    }
    .map_err(|e| match e {
        sim::world::RunError::Config(c) => PyValueError::new_err(c.to_string()),
        sim::world::RunError::Budget(m) => SimulationError::new_err(m),
        sim::world::RunError::Capture(m) => PyOSError::new_err(m),
    })?;
    serde_json::to_string(&results).map_err(|e| PyRuntimeError::new_err(e.to_string()))
}
