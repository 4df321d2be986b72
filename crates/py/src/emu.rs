//! Binding for the link emulator (crates/emu): two TUN/TAP descriptors and a plan link
//! in, the counters out as JSON. The run releases the GIL; the Python backend calls it in
//! a child process of its own, which SIGTERM or the stop descriptor ends cleanly.

use std::os::fd::BorrowedFd;

use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::prelude::*;

/// Forwards frames between the devices open on `fd_a` (the link's `a` end) and `fd_b`
/// (`b`) through the plan link `link_json` (Ethernet or serial, with its impairments) in
/// real time, until `stop_fd` (a pipe's read end or an eventfd) is readable or closed, or
/// the process gets SIGTERM or SIGINT. The descriptors stay the caller's (opened
/// `IFF_TAP | IFF_NO_PI`, or `IFF_TUN | IFF_NO_PI` for a serial line); they are made
/// non-blocking. The loss streams are those of link `link_index` of a run of `seed`.
/// `spin_us`: poll without sleeping this long before each deadline, fixed (default: 50 µs,
/// growing up to 500 µs while the kernel wakes the thread late; crates/emu `Options`).
/// `busy_poll`: never sleep (one core at 100 %, the shortest reads).
/// `fifo_priority`: run under SCHED_FIFO at this priority (1-99, needs root) while it runs.
/// `kernel_arrivals`: offer each frame at its kernel timestamp on the sending TAP (default;
/// crates/emu `stamps`), or, false, at the instant it is read.
/// Returns the report (crates/emu `Report`) as JSON. Raises ValueError for a link the
/// emulator refuses, OSError for a descriptor it cannot use.
#[pyfunction]
#[pyo3(signature = (fd_a, fd_b, link_json, seed, stop_fd, link_index=0, spin_us=None, busy_poll=false, fifo_priority=None, kernel_arrivals=true))]
#[allow(clippy::too_many_arguments)]
pub fn emulate_link(
    py: Python<'_>,
    fd_a: i32,
    fd_b: i32,
    link_json: &str,
    seed: u64,
    stop_fd: i32,
    link_index: usize,
    spin_us: Option<u64>,
    busy_poll: bool,
    fifo_priority: Option<i32>,
    kernel_arrivals: bool,
) -> PyResult<String> {
    let link: sim::config::LinkConfig =
        serde_json::from_str(link_json).map_err(|e| PyValueError::new_err(format!("plan link: {e}")))?;
    let open = |fd: i32, end: &str| {
        if fd < 0 {
            return Err(PyValueError::new_err(format!("fd_{end}: a file descriptor, not {fd}")));
        }
        // SAFETY: the caller keeps `fd` open for this call; the device holds a duplicate.
        emu::device::Device::from_fd(unsafe { BorrowedFd::borrow_raw(fd) })
            .map_err(|e| PyOSError::new_err(format!("fd_{end}: {e}")))
    };
    let (a, b) = (open(fd_a, "a")?, open(fd_b, "b")?);
    if stop_fd < 0 {
        return Err(PyValueError::new_err(format!("stop_fd: a file descriptor, not {stop_fd}")));
    }
    let mut options =
        emu::Options { stop_on_signals: true, busy_poll, fifo_priority, kernel_arrivals, ..Default::default() };
    if let Some(us) = spin_us {
        options.spin_ns = us * 1000;
        options.spin_max_ns = us * 1000;
    }
    let report = py
        .detach(|| {
            // SAFETY: as above, the caller keeps `stop_fd` open for this call.
            let stop = unsafe { BorrowedFd::borrow_raw(stop_fd) };
            emu::emulate(&link, seed, link_index, [&a, &b], Some(stop), &options)
        })
        .map_err(|e| match e {
            emu::Error::Config(m) => PyValueError::new_err(m),
            emu::Error::Io(e) => PyOSError::new_err(e.to_string()),
        })?;
    Ok(serde_json::to_string(&report).expect("a report prints"))
}

/// The plan ports `(node, port)` of link number `link_index`'s ends in `plan_json` (a
/// lowered plan), in the order [`emulate_plan_link`] takes their descriptors: a line's
/// `a` and `b`, an 802.11 cell's members with the AP first. Raises ValueError for a link
/// the emulator does not run.
#[pyfunction]
pub fn emulated_link_ends(plan_json: &str, link_index: usize) -> PyResult<Vec<(u32, u16)>> {
    let config = plan_of(plan_json)?;
    emu::link_ends(&config, link_index).map_err(PyValueError::new_err)
}

/// As [`emulate_link`], for link number `link_index` of the plan `plan_json` (any link the
/// emulator runs: a line, or an 802.11 cell with one TAP per member), one descriptor per
/// end in `fds` in the order of [`emulated_link_ends`]. The link's random streams are
/// those of the simulator's run of `seed` (default: the plan's).
#[pyfunction]
#[pyo3(signature = (fds, plan_json, link_index, stop_fd, seed=None, spin_us=None, busy_poll=false, fifo_priority=None))]
#[allow(clippy::too_many_arguments)]
pub fn emulate_plan_link(
    py: Python<'_>,
    fds: Vec<i32>,
    plan_json: &str,
    link_index: usize,
    stop_fd: i32,
    seed: Option<u64>,
    spin_us: Option<u64>,
    busy_poll: bool,
    fifo_priority: Option<i32>,
) -> PyResult<String> {
    let mut config = plan_of(plan_json)?;
    if let Some(seed) = seed {
        config.seed = seed;
    }
    let mut devices = Vec::with_capacity(fds.len());
    for (end, &fd) in fds.iter().enumerate() {
        if fd < 0 {
            return Err(PyValueError::new_err(format!("fds[{end}]: a file descriptor, not {fd}")));
        }
        // SAFETY: the caller keeps `fd` open for this call; the device holds a duplicate.
        let device = emu::device::Device::from_fd(unsafe { BorrowedFd::borrow_raw(fd) })
            .map_err(|e| PyOSError::new_err(format!("fds[{end}]: {e}")))?;
        devices.push(device);
    }
    if stop_fd < 0 {
        return Err(PyValueError::new_err(format!("stop_fd: a file descriptor, not {stop_fd}")));
    }
    let mut options = emu::Options { stop_on_signals: true, busy_poll, fifo_priority, ..Default::default() };
    if let Some(us) = spin_us {
        options.spin_ns = us * 1000;
        options.spin_max_ns = us * 1000;
    }
    let report = py
        .detach(|| {
            // SAFETY: as above, the caller keeps `stop_fd` open for this call.
            let stop = unsafe { BorrowedFd::borrow_raw(stop_fd) };
            let ends: Vec<&emu::device::Device> = devices.iter().collect();
            emu::emulate_plan(&config, link_index, &ends, Some(stop), &options)
        })
        .map_err(|e| match e {
            emu::Error::Config(m) => PyValueError::new_err(m),
            emu::Error::Io(e) => PyOSError::new_err(e.to_string()),
        })?;
    Ok(serde_json::to_string(&report).expect("a report prints"))
}

/// Runs the end of tunnel `name` of the plan node `node_json` (PPPoE, or IPsec in
/// tunnel mode) in the calling process's network namespace: a TUN device named after
/// the tunnel, raw sockets on the outer side (crates/emu `tunnel`), until `stop_fd` is
/// readable or closed, or SIGTERM or SIGINT. Writes `ready\n` to `notify_fd` once the
/// device and sockets are open, `up\n` when the end can carry packets. Returns the
/// report (crates/emu `TunnelReport`) as JSON. Raises ValueError for a tunnel it does
/// not run, OSError for a device or socket it cannot open.
#[pyfunction]
#[pyo3(signature = (node_json, name, stop_fd, notify_fd=None))]
pub fn run_tunnel(
    py: Python<'_>,
    node_json: &str,
    name: &str,
    stop_fd: i32,
    notify_fd: Option<i32>,
) -> PyResult<String> {
    let node: sim::config::NodeConfig =
        serde_json::from_str(node_json).map_err(|e| PyValueError::new_err(format!("plan node: {e}")))?;
    if stop_fd < 0 || notify_fd.is_some_and(|fd| fd < 0) {
        return Err(PyValueError::new_err("stop_fd and notify_fd: file descriptors"));
    }
    let options = emu::tunnel::TunnelOptions { stop_on_signals: true };
    let report = py
        .detach(|| {
            // SAFETY: the caller keeps both descriptors open for this call.
            let stop = unsafe { BorrowedFd::borrow_raw(stop_fd) };
            let notify = notify_fd.map(|fd| unsafe { BorrowedFd::borrow_raw(fd) });
            emu::tunnel::run_tunnel(&node, name, Some(stop), notify, &options)
        })
        .map_err(|e| match e {
            emu::Error::Config(m) => PyValueError::new_err(m),
            emu::Error::Io(e) => PyOSError::new_err(e.to_string()),
        })?;
    Ok(serde_json::to_string(&report).expect("a report prints"))
}

fn plan_of(plan_json: &str) -> PyResult<sim::config::SimConfig> {
    sim::config::from_json(plan_json).map_err(|e| PyValueError::new_err(format!("plan: {e}")))
}
