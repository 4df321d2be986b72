//! Bindings for the simulator: a configuration in, results out, as JSON; captures
//! written as pcap files. The run releases the GIL.

use std::path::Path;

use pyo3::exceptions::{PyOSError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;

use wire::pcap::{LinkType, Writer};

// Raised when a simulation stops early (a budget exceeded); the message names what.
pyo3::create_exception!(_core, SimulationError, PyRuntimeError);

/// Checks that the simulator accepts `config_json` (decodes it and builds the network,
/// runs nothing). Raises ValueError with the refused field and why.
#[pyfunction]
pub fn validate(py: Python<'_>, config_json: &str) -> PyResult<()> {
    let config: sim::config::SimConfig =
        serde_json::from_str(config_json).map_err(|e| PyValueError::new_err(format!("simulation configuration: {e}")))?;
    py.detach(|| sim::validate(config)).map_err(|e| PyValueError::new_err(e.to_string()))
}

/// Runs the simulation described by `config_json` (crates/sim/src/config.rs) and returns
/// its results as JSON. With `pcap_dir`, writes one pcap per port, `<node>-<port>.pcap`,
/// and one of the 802.11 frames on the air per wifi link, `<link>-air.pcap`.
#[pyfunction]
#[pyo3(signature = (config_json, pcap_dir=None))]
pub fn simulate(py: Python<'_>, config_json: &str, pcap_dir: Option<&str>) -> PyResult<String> {
    let mut config: sim::config::SimConfig =
        serde_json::from_str(config_json).map_err(|e| PyValueError::new_err(format!("simulation configuration: {e}")))?;
    config.capture |= pcap_dir.is_some();
    let results = py.detach(|| sim::simulate(config)).map_err(|e| match e {
        sim::world::RunError::Config(c) => PyValueError::new_err(c.to_string()),
        sim::world::RunError::Budget(m) => SimulationError::new_err(m),
    })?;
    if let Some(dir) = pcap_dir {
        std::fs::create_dir_all(dir).map_err(|e| PyOSError::new_err(format!("{dir}: {e}")))?;
        for capture in &results.captures {
            let path = Path::new(dir).join(format!("{}.pcap", capture.name));
            let file = std::fs::File::create(&path).map_err(|e| PyOSError::new_err(format!("{}: {e}", path.display())))?;
            let link = if capture.dot11 {
                LinkType::Ieee80211Radiotap
            } else if capture.erf {
                LinkType::Unknown(197) // LINKTYPE_ERF
            } else {
                LinkType::Ethernet
            };
            let mut writer = Writer::new(std::io::BufWriter::new(file), link).map_err(|e| PyOSError::new_err(e.to_string()))?;
            for (time, frame) in &capture.frames {
                writer.write_frame(*time, frame).map_err(|e| PyOSError::new_err(e.to_string()))?;
            }
            writer.into_inner().map_err(|e| PyOSError::new_err(e.to_string()))?;
        }
    }
    serde_json::to_string(&results).map_err(|e| PyRuntimeError::new_err(e.to_string()))
}
