//! `qoslab._core`: thin PyO3 bindings over crates/wire and crates/sim.
//!
//! No model logic lives here: conversions between Python and Rust values, and errors
//! mapped once. Long computations release the GIL.

use pyo3::prelude::*;

mod capture;
mod emu;
mod encap;
mod session;
mod sim;
mod toml_spans;

/// The version of the Rust core, which equals the Python package's.
#[pyfunction]
fn core_version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

/// How the core was compiled: `"pgo"` when scripts/install.sh built it profile-guided
/// (it sets `QOSLAB_CORE_BUILD` for that build), else `"release"`. Benchmarks record it.
#[pyfunction]
fn core_build() -> &'static str {
    option_env!("QOSLAB_CORE_BUILD").unwrap_or("release")
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(core_version, m)?)?;
    m.add_function(wrap_pyfunction!(core_build, m)?)?;
    m.add_function(wrap_pyfunction!(toml_spans::toml_key_spans, m)?)?;
    m.add_function(wrap_pyfunction!(encap::wrap, m)?)?;
    m.add_function(wrap_pyfunction!(encap::ipv4_fragment, m)?)?;
    m.add_function(wrap_pyfunction!(encap::openvpn_fragment, m)?)?;
    m.add_function(wrap_pyfunction!(encap::serial_line_bits, m)?)?;
    m.add_function(wrap_pyfunction!(encap::sync_line_bits, m)?)?;
    m.add_function(wrap_pyfunction!(encap::write_pcap, m)?)?;
    m.add_function(wrap_pyfunction!(sim::simulate, m)?)?;
    m.add_function(wrap_pyfunction!(sim::validate, m)?)?;
    m.add_function(wrap_pyfunction!(emu::emulate_link, m)?)?;
    m.add_function(wrap_pyfunction!(emu::emulate_plan_link, m)?)?;
    m.add_function(wrap_pyfunction!(emu::emulated_link_ends, m)?)?;
    m.add_function(wrap_pyfunction!(emu::run_tunnel, m)?)?;
    m.add_class::<session::Session>()?;
    m.add_function(wrap_pyfunction!(sim::plan_schema, m)?)?;
    m.add_function(wrap_pyfunction!(sim::wifi_preamble_problem, m)?)?;
    m.add_function(wrap_pyfunction!(sim::results_schema, m)?)?;
    m.add("SimulationError", m.py().get_type::<sim::SimulationError>())?;
    Ok(())
}
