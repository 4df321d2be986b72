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
