//! The real-time loop: one thread, one link (a line, a cell or the ATM network), a device
//! per end.
//!
//! Each turn delivers what is due (writes to the far device), reads what waits on the
//! devices (each frame offered at the instant it is read), then sleeps in `ppoll` until a
//! device has a frame, the stop descriptor or a signal wakes it, or the line's next
//! deadline less the spin comes; the last stretch before a deadline it polls without
//! sleeping. The spin is `spin_ns` or more: as long as the latest of the last
//! [`OVERSHOOTS`] timed sleeps ended after it was due, up to `spin_max_ns`. Measured on
//! the 2-core development VM (kernel built `PREEMPT_NONE`, load 7): a SCHED_FIFO thread's
//! sleep of 950 µs ended 33 µs late at the median, 175 µs at the 99th percentile, since a
//! woken thread waits for the task on its CPU to leave the kernel; a fixed 50 µs spin then
//! left the write late by over 100 µs at p99 in some runs (benchmarks/README.md). The thread's timer slack is 1 ns while it runs (`PR_SET_TIMERSLACK`; the
//! default 50 µs would round every sleep up by that much).

use std::io;
use std::os::fd::{AsRawFd, BorrowedFd};

use serde::Serialize;
use sim::config::{LinkConfig, SimConfig};

use crate::device::Device;
use crate::lateness::{Lateness, LatenessReport};
use crate::line::{Count, DirectionCounters, EndKind, Line, Sink};
use crate::shared::{Conservation, EndReport, Shared, SharedReport};
use crate::signal::SignalGuard;
use crate::stamps::{ArrivalReport, Clock, Intake, Intaken};

/// The version of the report's JSON; a change of its shape raises it.
pub const REPORT_SCHEMA: u32 = 4;

/// Timed sleeps whose overshoot sets the spin (the spin is their largest, so one late
/// wake-up in this many raises it until that many more have ended in time).
const OVERSHOOTS: usize = 64;

/// Frames read from one device in one turn before the line is looked at again.
const READ_BATCH: usize = 64;
/// The largest frame a TAP hands over: a 65 535-byte IP datagram and its header.
const FRAME_BUFFER: usize = 65_536 + 64;

/// How the loop waits.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// Poll without sleeping at least this long before each deadline, ns. A sleep in
    /// `ppoll` ends some tens of µs late on a busy machine; default 50 µs (measured in
    /// benchmarks/emu_link.py). 0, with `spin_max_ns` 0: always sleep.
    pub spin_ns: u64,
    /// The spin grows, up to this, to the largest overshoot of the last [`OVERSHOOTS`]
    /// timed sleeps (how late the kernel woke the thread), so that a machine that wakes
    /// it late still finds it polling at the deadline; default 500 µs (at most half a
    /// core while frames come one a millisecond). Equal to `spin_ns`: a fixed spin.
    pub spin_max_ns: u64,
    /// Never sleep: poll the devices without a timeout, even while the line is idle, so a
    /// frame is read as soon as it is in the device (a sleeping thread on a virtual
    /// machine takes tens of µs to wake). One core at 100 %. Not with `fifo_priority`:
    /// the kernel's real-time throttling (`sched_rt_runtime_us`, 950 ms of each second)
    /// then stops the thread for 50 ms every second (measured: p99 43 ms). Default off.
    pub busy_poll: bool,
    /// Stop cleanly on SIGTERM and SIGINT (see `signal`); default off, the Python
    /// binding turns it on.
    pub stop_on_signals: bool,
    /// Run the loop's thread under SCHED_FIFO at this priority (1-99; needs
    /// CAP_SYS_NICE), restored when it returns. On a loaded machine a normal thread waits
    /// for a CPU for milliseconds after its frame or deadline came; a real-time one does
    /// not (benchmarks/emu_link.py measures both). Default none: the caller's policy.
    pub fifo_priority: Option<i32>,
    /// Offer each frame at the instant it came into its TAP, from the kernel's timestamp
    /// (`stamps`), not at the instant it was read; default on. Without CAP_SYS_ADMIN (to
    /// open the packet socket in the device's namespace) the read instant is used and the
    /// report's `arrivals` says why.
    pub kernel_arrivals: bool,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            spin_ns: 50_000,
            spin_max_ns: 500_000,
            busy_poll: false,
            stop_on_signals: false,
            fifo_priority: None,
            kernel_arrivals: true,
        }
    }
}

/// The calling thread under SCHED_FIFO, and its previous policy restored on drop.
struct RealTime {
    policy: libc::c_int,
    param: libc::sched_param,
}

impl RealTime {
    fn enter(priority: i32) -> io::Result<RealTime> {
        // SAFETY: sched_getscheduler/getparam/setscheduler on the calling thread (pid 0)
        // with a valid sched_param.
        unsafe {
            let policy = libc::sched_getscheduler(0);
            let mut param: libc::sched_param = std::mem::zeroed();
            if policy < 0 || libc::sched_getparam(0, &mut param) < 0 {
                return Err(io::Error::last_os_error());
            }
            let fifo = libc::sched_param { sched_priority: priority };
            if libc::sched_setscheduler(0, libc::SCHED_FIFO, &fifo) < 0 {
                let e = io::Error::last_os_error();
                return Err(io::Error::new(e.kind(), format!("SCHED_FIFO priority {priority}: {e}")));
            }
            Ok(RealTime { policy, param })
        }
    }
}

impl Drop for RealTime {
    fn drop(&mut self) {
        // SAFETY: as in `enter`.
        unsafe { libc::sched_setscheduler(0, self.policy, &self.param) };
    }
}

/// The spin before each deadline: `spin_ns`, or the largest overshoot of the last
/// [`OVERSHOOTS`] timed sleeps, whichever is longer, up to `spin_max_ns`.
struct Spin {
    floor: u64,
    cap: u64,
    recent: [u64; OVERSHOOTS],
    next: usize,
    ns: u64,
    /// Every timed sleep's overshoot, for the report.
    overshoot: Lateness,
}

impl Spin {
    fn new(options: &Options) -> Spin {
        let (floor, cap) = (options.spin_ns, options.spin_max_ns.max(options.spin_ns));
        Spin { floor, cap, recent: [0; OVERSHOOTS], next: 0, ns: floor, overshoot: Lateness::default() }
    }

    /// A sleep that was due to end at `due` ended at `woke` (ns).
    fn slept(&mut self, due: u64, woke: u64) {
        let late = woke.saturating_sub(due);
        self.overshoot.record(late);
        self.recent[self.next] = late;
        self.next = (self.next + 1) % OVERSHOOTS;
        self.ns = self.recent.iter().copied().max().unwrap_or(0).clamp(self.floor, self.cap);
    }
}

/// Why the emulator could not start.
#[derive(Debug)]
pub enum Error {
    /// The link is one the emulator refuses (names the plan's field).
    Config(String),
    /// A device or the system refused.
    Io(io::Error),
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::Config(m) => write!(f, "{m}"),
            Error::Io(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for Error {}

impl From<io::Error> for Error {
    fn from(e: io::Error) -> Error {
        Error::Io(e)
    }
}

/// One direction's account when the emulator stopped.
#[derive(Debug, Clone, Serialize)]
pub struct DirectionReport {
    pub from: &'static str,
    pub to: &'static str,
    #[serde(flatten)]
    pub counters: DirectionCounters,
    /// In the queue, not yet started, when the emulator stopped.
    pub queued_at_stop: Count,
    /// Started and not yet arrived (serializing or propagating) when it stopped.
    pub in_flight_at_stop: Count,
    /// How late the writes were against the model's arrival times (see `lateness`).
    pub lateness_ns: LatenessReport,
}

impl DirectionReport {
    /// Frames offered = delivered + dropped + queued + in flight.
    pub fn balances(&self) -> bool {
        let c = &self.counters;
        c.offered.frames
            == c.delivered.frames
                + c.dropped.total().frames
                + self.queued_at_stop.frames
                + self.in_flight_at_stop.frames
    }
}

/// What an emulator did, from start to stop.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub schema: u32,
    /// The plan's link name and kind ("ethernet", "serial", "wifi" or "atm").
    pub link: String,
    pub kind: &'static str,
    pub ends: Vec<EndKind>,
    pub devices: Vec<String>,
    pub seed: u64,
    pub spin_ns: u64,
    pub spin_max_ns: u64,
    /// How late the timed sleeps ended (woken − due, ns; `frames` counts the sleeps): the
    /// wake-up latency the spin covers.
    pub wake_overshoot_ns: LatenessReport,
    /// Whether the loop never slept.
    pub busy_poll: bool,
    /// The SCHED_FIFO priority the loop ran at, if any.
    pub fifo_priority: Option<i32>,
    /// From the start of the loop to the stop, ns.
    pub duration_ns: u64,
    /// "stop fd", "stop fd closed", "SIGTERM", "SIGINT", or the error that ended it.
    pub stopped_by: String,
    /// A line's `[a → b, b → a]`; empty for a cell or the ATM network.
    pub directions: Vec<DirectionReport>,
    /// A cell's members (the AP first) or the ATM network's host endpoints, in the order
    /// of the devices; empty for a line.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub members: Vec<EndReport>,
    /// A cell's or the ATM network's own account at the stop; none for a line.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shared: Option<SharedReport>,
    /// Per end, in the order of the devices (a line's `[a → b, b → a]`, a cell's members),
    /// the instant each frame it sent was offered at: its kernel timestamp on the sending
    /// device, or its read (see `stamps`).
    pub arrivals: Vec<ArrivalReport>,
}

/// What the loop drives: a line (two ends) or a link with many ends.
enum Model {
    /// Boxed: the line holds its queues and impairments inline (1.5 kB).
    Line(Box<Line>),
    Shared(Shared),
}

impl Intaken for Model {
    fn offer(&mut self, now: u64, from: usize, frame: &[u8], sink: &mut Sink<'_>) {
        Model::offer(self, now, from, frame, sink);
    }

    fn advance(&mut self, now: u64, sink: &mut Sink<'_>) {
        Model::advance(self, now, sink);
    }

    fn takes_past(&self) -> bool {
        matches!(self, Model::Line(_))
    }
}

impl Model {
    fn offer(&mut self, now: u64, from: usize, frame: &[u8], sink: &mut Sink<'_>) {
        match self {
            Model::Line(l) => l.offer(now, from, frame, sink),
            Model::Shared(s) => s.offer(now, from, frame, sink),
        }
    }

    fn advance(&mut self, now: u64, sink: &mut Sink<'_>) {
        match self {
            Model::Line(l) => l.advance(now, sink),
            Model::Shared(s) => s.advance(now, sink),
        }
    }

    fn next_wake(&self) -> Option<u64> {
        match self {
            Model::Line(l) => l.next_wake(),
            Model::Shared(s) => s.next_wake(),
        }
    }

    /// Which lateness a write to end `to` counts in: a line's by its direction (the
    /// sender's end), a shared link's by its receiver.
    fn lateness_slot(&self, to: usize) -> usize {
        match self {
            Model::Line(_) => 1 - to,
            Model::Shared(_) => to,
        }
    }
}

/// The thread's timer slack set to 1 ns, and restored on drop.
struct TimerSlack(libc::c_int);

impl TimerSlack {
    fn tight() -> TimerSlack {
        // SAFETY: PR_GET/SET_TIMERSLACK take and return plain integers.
        unsafe {
            let old = libc::prctl(libc::PR_GET_TIMERSLACK, 0, 0, 0, 0);
            libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0);
            TimerSlack(old)
        }
    }
}

impl Drop for TimerSlack {
    fn drop(&mut self) {
        if self.0 > 0 {
            // SAFETY: as above.
            unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, self.0 as libc::c_ulong, 0, 0, 0) };
        }
    }
}

/// What one wait on the devices and the stop descriptors saw.
enum Woken {
    /// Which devices have frames to read (none when the wait timed out or a signal
    /// interrupted it).
    Devices(Vec<bool>),
    /// The run stops, and why.
    Stop(String),
}

/// Waits at most `timeout_ns` (None: until something happens) for a frame on any
/// device, the stop descriptor or a signal (`fds`: the devices, stop, signals).
fn wait(fds: &mut [libc::pollfd], timeout_ns: Option<u64>, ends: &[&Device], signals: Option<&SignalGuard>) -> Woken {
    let ts = timeout_ns.map(|ns| libc::timespec {
        tv_sec: (ns / 1_000_000_000) as libc::time_t,
        tv_nsec: (ns % 1_000_000_000) as libc::c_long,
    });
    let ts_ptr = ts.as_ref().map_or(std::ptr::null(), |t| t as *const libc::timespec);
    // SAFETY: `fds` is an array of initialised pollfd; `ts_ptr` is null or points at `ts`.
    let n = unsafe { libc::ppoll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, ts_ptr, std::ptr::null()) };
    let k = ends.len();
    if n < 0 {
        let e = io::Error::last_os_error();
        if e.kind() == io::ErrorKind::Interrupted {
            return Woken::Devices(vec![false; k]);
        }
        return Woken::Stop(format!("ppoll: {e}"));
    }
    if fds[k + 1].revents != 0 {
        return Woken::Stop(signals.and_then(SignalGuard::caught).unwrap_or("signal").to_string());
    }
    if fds[k].revents != 0 {
        return Woken::Stop(if fds[k].revents & libc::POLLIN != 0 { "stop fd" } else { "stop fd closed" }.to_string());
    }
    let mut readable = vec![false; k];
    for end in 0..k {
        let revents = fds[end].revents;
        if revents & (libc::POLLERR | libc::POLLHUP | libc::POLLNVAL) != 0 && revents & libc::POLLIN == 0 {
            return Woken::Stop(format!("device {} is gone", ends[end].name()));
        }
        readable[end] = revents & libc::POLLIN != 0;
    }
    Woken::Devices(readable)
}

/// The run's report: a line's counters per direction, what it held at the stop, and
/// each direction's lateness; a shared link's per member, and its own account.
fn report(
    model: &Model,
    ends: &[&Device],
    seed: u64,
    options: &Options,
    duration_ns: u64,
    stopped_by: String,
    lateness: &[Lateness],
) -> Report {
    let (link, kind) = match model {
        Model::Line(l) => (l.name().to_string(), l.kind()),
        Model::Shared(s) => (s.name().to_string(), s.kind()),
    };
    let (mut directions, mut members, mut shared) = (Vec::new(), Vec::new(), None);
    match model {
        Model::Line(line) => {
            for from in 0..2 {
                let (queued_at_stop, in_flight_at_stop) = line.held(from);
                directions.push(DirectionReport {
                    from: ["a", "b"][from],
                    to: ["b", "a"][from],
                    counters: *line.counters(from),
                    queued_at_stop,
                    in_flight_at_stop,
                    lateness_ns: lateness[from].report(),
                });
            }
        }
        Model::Shared(s) => {
            for (end, device) in ends.iter().enumerate() {
                members.push(EndReport {
                    port: s.end_names()[end].clone(),
                    device: device.name().to_string(),
                    counters: s.counters(end).clone(),
                    lateness_ns: lateness[end].report(),
                });
            }
            let conservation = s
                .conservation()
                .into_iter()
                .map(|c| Conservation {
                    frames_in: c.frames_in,
                    frames_out: c.frames_out,
                    dropped: c.dropped,
                    queued: c.queued,
                })
                .collect();
            shared = Some(SharedReport { held_at_stop: s.held(), conservation });
        }
    }
    Report {
        schema: REPORT_SCHEMA,
        link,
        kind,
        ends: ends.iter().map(|d| d.kind()).collect(),
        devices: ends.iter().map(|d| d.name().to_string()).collect(),
        seed,
        spin_ns: options.spin_ns,
        spin_max_ns: options.spin_max_ns.max(options.spin_ns),
        wake_overshoot_ns: LatenessReport::default(),
        busy_poll: options.busy_poll,
        fifo_priority: options.fifo_priority,
        duration_ns,
        stopped_by,
        directions,
        members,
        shared,
        arrivals: Vec::new(),
    }
}

/// A serial line's datagram for a TAP whose kernel has not sent on the line yet: the
/// line addresses it to broadcast (line.rs `ethernet_frame`), and Linux forwards only
/// frames addressed to the device itself (net/ipv4/ip_forward.c: `pkt_type !=
/// PACKET_HOST` is dropped), so a router that never sends on a one-way line (seed 004's
/// r1, which only receives acknowledgements on it) would drop every datagram. Addressed
/// here to the device's own MAC, as a SLIP device hands every datagram to its own host.
/// `None`: the frame goes as it is.
fn serial_to_unknown_kernel(serial: bool, end: &Device, frame: &[u8]) -> Option<Vec<u8>> {
    if !serial || end.kind() != EndKind::Tap || frame.len() < 6 || frame[..6] != [0xff; 6] {
        return None;
    }
    let mac = end.hw_addr().ok()?;
    let mut addressed = frame.to_vec();
    addressed[..6].copy_from_slice(&mac);
    Some(addressed)
}

/// Emulates the plan's `link` (Ethernet or serial) between `ends[0]` (its `a`) and
/// `ends[1]` (its `b`) in real time until `stop` is readable or closed (a pipe or an
/// eventfd), or a signal comes with `options.stop_on_signals`. The loss streams are those
/// of link number `link_index` of a run of `seed`.
pub fn emulate(
    link: &LinkConfig,
    seed: u64,
    link_index: usize,
    ends: [&Device; 2],
    stop: Option<BorrowedFd<'_>>,
    options: &Options,
) -> Result<Report, Error> {
    let line = Line::new(link, seed, link_index, [ends[0].kind(), ends[1].kind()]).map_err(Error::Config)?;
    drive(Model::Line(Box::new(line)), &ends, seed, stop, options)
}

/// Emulates link number `link_index` of the plan `config` between `ends`, one device
/// per end of the link ([`link_ends`]: a line's `a` and `b`, a cell's members with the
/// AP first), in real time, as [`emulate`]; the link's random streams (loss, a cell's
/// backoffs and frame errors) are those of the simulator's run of `config.seed`.
pub fn emulate_plan(
    config: &SimConfig,
    link_index: usize,
    ends: &[&Device],
    stop: Option<BorrowedFd<'_>>,
    options: &Options,
) -> Result<Report, Error> {
    let kinds: Vec<EndKind> = ends.iter().map(|d| d.kind()).collect();
    let model = match Shared::of_plan(config, link_index, &kinds).map_err(Error::Config)? {
        Some(shared) => Model::Shared(shared),
        None => {
            let Some(link) = config.links.get(link_index) else {
                return Err(Error::Config(format!("links[{link_index}]: the plan has {} links", config.links.len())));
            };
            let [a, b] = ends else {
                return Err(Error::Config(format!(
                    "links[{link_index}]: a line has two ends, {} devices given",
                    ends.len()
                )));
            };
            let line = Line::new(link, config.seed, link_index, [a.kind(), b.kind()]).map_err(Error::Config)?;
            Model::Line(Box::new(line))
        }
    };
    drive(model, ends, config.seed, stop, options)
}

/// The plan ports of link number `link_index`'s ends, in the order [`emulate_plan`]
/// takes their devices: a line's `a` and `b`, a cell's members (the AP first), the ATM
/// network's host endpoints (any of its links names the whole network).
pub fn link_ends(config: &SimConfig, link_index: usize) -> Result<Vec<(u32, u16)>, String> {
    let i = link_index;
    match config.links.get(i) {
        None => Err(format!("links[{i}]: the plan has {} links", config.links.len())),
        Some(LinkConfig::Ethernet { a, b, .. } | LinkConfig::Serial { a, b, .. }) => {
            Ok(vec![(a.node, a.port), (b.node, b.port)])
        }
        Some(LinkConfig::Wifi(_) | LinkConfig::Atm(_)) => {
            Ok(crate::shared::shared_ends(config, i)?.unwrap_or_default())
        }
    }
}

/// The loop: reads each device, offers what it reads to the model, writes what the
/// model delivers, until a stop.
fn drive(
    mut model: Model,
    ends: &[&Device],
    seed: u64,
    stop: Option<BorrowedFd<'_>>,
    options: &Options,
) -> Result<Report, Error> {
    let serial = matches!(&model, Model::Line(l) if l.kind() == "serial");
    let signals = if options.stop_on_signals { SignalGuard::install()? } else { None };
    let _slack = TimerSlack::tight();
    let _realtime = options.fifo_priority.map(RealTime::enter).transpose()?;
    let clock = Clock::start();
    let now = || clock.now();
    let k = ends.len();
    let mut lateness = vec![Lateness::default(); k];
    let mut intake = Intake::new(ends, options.kernel_arrivals, FRAME_BUFFER);
    let poll = |fd: Option<i32>| libc::pollfd { fd: fd.unwrap_or(-1), events: libc::POLLIN, revents: 0 };
    let mut fds: Vec<libc::pollfd> = ends.iter().map(|d| poll(Some(d.as_raw_fd()))).collect();
    fds.push(poll(stop.map(|s| s.as_raw_fd())));
    fds.push(poll(signals.as_ref().map(SignalGuard::fd)));
    let mut readable = vec![false; k];
    let mut spin = Spin::new(options);
    let slots: Vec<usize> = (0..k).map(|to| model.lateness_slot(to)).collect();
    let stopped_by = loop {
        let mut sink = |to: usize, frame: &[u8], at: u64| -> bool {
            let written = match serial_to_unknown_kernel(serial, ends[to], frame) {
                Some(addressed) => ends[to].write(&addressed).is_ok(),
                None => ends[to].write(frame).is_ok(),
            };
            if written {
                lateness[slots[to]].record(now().saturating_sub(at));
            }
            written
        };
        // What waits on the devices first, each frame at the instant it came, earliest
        // first (the model is polled in time order); then what is due by now.
        if let Err(e) = intake.offer_waiting(&mut model, ends, &mut readable, &clock, READ_BATCH, &mut sink) {
            break e;
        }
        let before = now();
        let timeout = match model.next_wake() {
            _ if options.busy_poll => Some(0),
            Some(t) => Some(t.saturating_sub(before).saturating_sub(spin.ns)),
            None => None,
        };
        match wait(&mut fds, timeout, ends, signals.as_ref()) {
            Woken::Devices(r) => {
                // A timed sleep that nothing cut short: how late the kernel woke us.
                if let (Some(t @ 1..), false) = (timeout, r.iter().any(|&x| x)) {
                    spin.slept(before + t, now());
                }
                readable = r;
            }
            Woken::Stop(why) => break why,
        }
    };
    let duration_ns = now();
    let mut report = report(&model, ends, seed, options, duration_ns, stopped_by, &lateness);
    report.wake_overshoot_ns = spin.overshoot.report();
    report.arrivals = intake.report();
    debug_assert!(report.directions.iter().all(DirectionReport::balances), "the emulator's counters balance");
    if let Model::Line(line) = &model {
        debug_assert!((0..2).all(|from| line.agrees_with_line(from)), "the emulator's counters are the line's");
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_spin_covers_the_latest_late_wake_ups_within_its_bounds() {
        let mut spin = Spin::new(&Options::default());
        assert_eq!(spin.ns, 50_000, "spin_ns before any sleep");
        spin.slept(1_000_000, 1_010_000);
        assert_eq!(spin.ns, 50_000, "a wake-up 10 µs late is within the floor");
        spin.slept(2_000_000, 2_200_000);
        assert_eq!(spin.ns, 200_000, "200 µs late: the spin grows to it");
        spin.slept(3_000_000, 5_000_000);
        assert_eq!(spin.ns, 500_000, "2 ms late: capped at spin_max_ns");
        // The 2 ms overshoot leaves the window after OVERSHOOTS more sleeps; the 200 µs one,
        // one sleep before it, has left it too.
        for k in 0..OVERSHOOTS as u64 {
            spin.slept(10_000_000 + k * 1_000_000, 10_000_000 + k * 1_000_000);
        }
        assert_eq!(spin.ns, 50_000);
        assert_eq!(spin.overshoot.report().frames, 3 + OVERSHOOTS as u64);
        assert_eq!(spin.overshoot.report().max, 2_000_000);
        // A fixed spin (spin_max_ns below spin_ns) never grows.
        let mut fixed = Spin::new(&Options { spin_ns: 50_000, spin_max_ns: 0, ..Options::default() });
        fixed.slept(0, 1_000_000);
        assert_eq!(fixed.ns, 50_000);
    }
}
