//! When each frame came into its TAP, from the kernel: a packet socket on the device, in
//! the device's own network namespace, that sees every frame the kernel transmits into
//! the TAP (`PACKET_OUTGOING`) with its software timestamp (`SO_TIMESTAMPNS`, taken in
//! `dev_queue_xmit_nit` just before the TAP queues it for the emulator to read).
//!
//! Why: the loop used to offer a frame to the link at the instant it read it. A read
//! waits for the thread to wake, and on a kernel built `PREEMPT_NONE` a woken SCHED_FIFO
//! thread waits for the task on its CPU to leave the kernel (up to hundreds of µs under
//! load): the frame was timed late by that much, and no spin before deadlines covers it.
//! With the kernel's timestamp the frame is offered at the instant it entered the TAP,
//! and on a link with a delay the wake-up is hidden in it.
//!
//! Each read frame is matched to the stamp of the same frame: its length and first
//! [`HEAD`] bytes, searched from the oldest stamp not yet matched (frames leave a TAP in
//! the order the kernel transmitted them; stamps before the match are of frames the TAP
//! dropped, its ring full, and are discarded). A frame with no matching stamp (the
//! socket's buffer overflowed) is timed from its read, and counted.
//!
//! Both clocks: the timestamps are CLOCK_REALTIME; the loop runs on CLOCK_MONOTONIC
//! ([`Clock`]), and a stamp is moved onto it by the two clocks' offset, read again each
//! second (it changes only when the real-time clock is stepped), the tightest of eight
//! bracketed reads.

use std::cell::Cell;
use std::collections::VecDeque;
use std::ffi::c_ulong;
use std::io;
use std::mem::{size_of, zeroed};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

use serde::Serialize;

use crate::device::Device;
use crate::lateness::{Lateness, LatenessReport};
use crate::line::{EndKind, Sink};

/// Bytes of each frame's start kept with its stamp to match it: Ethernet's header, an
/// IPv4 header with its identification and checksum, and the transport's ports and
/// sequence numbers, so two frames in flight together rarely share it.
const HEAD: usize = 64;
/// Stamps read per `recvmmsg`.
const BATCH: usize = 64;
/// Stamps kept waiting for their frame; older ones go first (their frames were dropped).
const KEEP: usize = 8192;
/// The socket's receive buffer: room for [`KEEP`] clones of small frames and some
/// thousands of full ones (an skb's truesize of a 1514-byte frame is about 2.3 kB).
const RCVBUF: libc::c_int = 16 << 20;

/// linux/if_tun.h: `TUNGETDEVNETNS = _IO('T', 227)`, a new descriptor of the device's
/// network namespace (Linux 5.2).
const TUNGETDEVNETNS: c_ulong = 0x54e3;
/// asm-generic/socket.h: `SO_TIMESTAMPNS_OLD` (`SCM_TIMESTAMPNS`: a `struct timespec`
/// of the frame's software timestamp), `SO_ATTACH_FILTER`, `SO_RCVBUFFORCE`.
const SO_TIMESTAMPNS: libc::c_int = 35;
const SO_ATTACH_FILTER: libc::c_int = 26;
const SO_RCVBUFFORCE: libc::c_int = 33;
/// linux/if_ether.h: every protocol.
const ETH_P_ALL: u16 = 0x0003;
/// linux/if_packet.h: the frame is going out of the device.
const PACKET_OUTGOING: u32 = 4;
/// linux/filter.h: classic BPF's ancillary load of `skb->pkt_type`.
const SKF_AD_OFF: i32 = -0x1000;
const SKF_AD_PKTTYPE: i32 = 4;
/// linux/bpf_common.h opcodes: `BPF_LD | BPF_W | BPF_ABS` (0x00 | 0x00 | 0x20),
/// `BPF_JMP | BPF_JEQ | BPF_K` (0x05 | 0x10 | 0x00), `BPF_RET | BPF_K` (0x06 | 0x00).
const BPF_LD_W_ABS: u16 = 0x20;
const BPF_JMP_JEQ_K: u16 = 0x15;
const BPF_RET_K: u16 = 0x06;

/// The loop's clock: CLOCK_MONOTONIC in ns since the loop started, and the kernel's
/// CLOCK_REALTIME timestamps moved onto it.
pub struct Clock {
    start: i128,
    /// CLOCK_REALTIME − CLOCK_MONOTONIC, ns, and when (monotonic, ns) it was last read.
    offset: Cell<(i128, i128)>,
}

/// How often the two clocks' offset is read again: it changes only when the real-time
/// clock is stepped (both clocks are slewed alike by NTP).
const OFFSET_EVERY_NS: i128 = 1_000_000_000;
/// Reads of the offset, the tightest bracket taken: a read interrupted between its clock
/// reads (an interrupt, a softirq: tens of µs on a busy machine) would be off by half the
/// gap, and so would every frame timed with it.
const OFFSET_TRIES: usize = 8;

fn clock_ns(id: libc::clockid_t) -> i128 {
    // SAFETY: clock_gettime writes one timespec.
    let mut ts: libc::timespec = unsafe { zeroed() };
    unsafe { libc::clock_gettime(id, &mut ts) };
    i128::from(ts.tv_sec) * 1_000_000_000 + i128::from(ts.tv_nsec)
}

/// CLOCK_REALTIME − CLOCK_MONOTONIC, ns: the real-time clock read between two reads of the
/// monotonic one (vDSO reads, some tens of ns apart), against their mean; of
/// [`OFFSET_TRIES`] reads, the one whose monotonic reads were closest.
fn measure_offset() -> i128 {
    let mut best = (i128::MAX, 0);
    for _ in 0..OFFSET_TRIES {
        let before = clock_ns(libc::CLOCK_MONOTONIC);
        let real = clock_ns(libc::CLOCK_REALTIME);
        let after = clock_ns(libc::CLOCK_MONOTONIC);
        if after - before < best.0 {
            best = (after - before, real - (before + after) / 2);
        }
    }
    best.1
}

impl Clock {
    pub fn start() -> Clock {
        let start = clock_ns(libc::CLOCK_MONOTONIC);
        Clock { start, offset: Cell::new((measure_offset(), start)) }
    }

    /// Now, ns since the start.
    #[inline]
    pub fn now(&self) -> u64 {
        (clock_ns(libc::CLOCK_MONOTONIC) - self.start).max(0) as u64
    }

    /// A CLOCK_REALTIME instant (a kernel timestamp), ns, on this clock.
    pub fn from_realtime(&self, real_ns: i128) -> u64 {
        self.on_loop(real_ns, self.realtime_offset())
    }

    fn on_loop(&self, real_ns: i128, offset: i128) -> u64 {
        (real_ns - offset - self.start).max(0) as u64
    }

    /// CLOCK_REALTIME − CLOCK_MONOTONIC, ns, read again if the last read is older than
    /// [`OFFSET_EVERY_NS`].
    fn realtime_offset(&self) -> i128 {
        let (offset, at) = self.offset.get();
        let mono = clock_ns(libc::CLOCK_MONOTONIC);
        if mono - at < OFFSET_EVERY_NS {
            return offset;
        }
        let offset = measure_offset();
        self.offset.set((offset, mono));
        offset
    }
}

/// What one direction's arrival instants came from, for the report.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ArrivalReport {
    /// "kernel": frames were offered at their kernel timestamp where one matched;
    /// "read": at the instant they were read (no stamp socket, and `why`).
    pub clock: &'static str,
    /// Why there is no stamp socket (with "read").
    #[serde(skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
    /// Frames offered at their kernel timestamp.
    pub stamped: u64,
    /// Frames read with no matching stamp, offered at their read instant.
    pub unstamped: u64,
    /// Stamps of frames never read (the TAP dropped them, or the run stopped first).
    pub stamps_unmatched: u64,
    /// Per stamped frame: read instant − kernel timestamp, ns: how long it waited in the
    /// TAP, what timing from the read would have added.
    pub read_wait_ns: LatenessReport,
    /// Frames whose arrival instant was before the line's time when they were offered
    /// (the line never goes back: they are offered at its time), and by how much, ns.
    pub behind_line_ns: LatenessReport,
}

/// One stamp: when the frame came (loop clock, ns), its length and its first bytes.
struct Stamp {
    at: u64,
    len: usize,
    head: [u8; HEAD],
}

/// The arrival instants of one device's frames.
pub struct Arrivals {
    socket: Option<OwnedFd>,
    why: Option<String>,
    stamps: VecDeque<Stamp>,
    heads: Vec<[u8; HEAD]>,
    controls: Vec<[u64; 8]>,
    stamped: u64,
    unstamped: u64,
    discarded: u64,
    read_wait: Lateness,
    behind: Lateness,
}

impl Arrivals {
    /// Arrivals timed from the read instant (`why` says why not from the kernel).
    pub fn from_reads(why: String) -> Arrivals {
        Arrivals {
            socket: None,
            why: Some(why),
            stamps: VecDeque::new(),
            heads: Vec::new(),
            controls: Vec::new(),
            stamped: 0,
            unstamped: 0,
            discarded: 0,
            read_wait: Lateness::default(),
            behind: Lateness::default(),
        }
    }

    /// The kernel's timestamps of the frames `device` (a TAP) is given to send, or the
    /// read instants, saying why, where they cannot be had (a TUN device; no
    /// CAP_SYS_ADMIN to enter its namespace; a kernel before 5.2).
    pub fn open(device: &Device) -> Arrivals {
        if device.kind() != EndKind::Tap {
            return Arrivals::from_reads("a TUN device has no link layer a packet socket stamps".into());
        }
        match stamp_socket(device) {
            Ok(fd) => Arrivals {
                socket: Some(fd),
                why: None,
                heads: vec![[0; HEAD]; BATCH],
                controls: vec![[0; 8]; BATCH],
                ..Arrivals::from_reads(String::new())
            },
            Err(e) => Arrivals::from_reads(format!("no kernel timestamps on {}: {e}", device.name())),
        }
    }

    /// The instant `frame`, read at `read_at`, came into the device (loop clock, ns).
    pub fn arrival(&mut self, frame: &[u8], read_at: u64, clock: &Clock) -> u64 {
        if self.socket.is_none() {
            return read_at;
        }
        // The socket is read only when no stamp already read matches: one recvmmsg for
        // up to BATCH frames (a frame's stamp is queued before the frame is in the TAP).
        if self.find(frame).is_none() {
            self.drain(clock);
        }
        self.take(frame, read_at)
    }

    /// Where the oldest stamp read that matches `frame` is (its length and first bytes).
    fn find(&self, frame: &[u8]) -> Option<usize> {
        let n = frame.len().min(HEAD);
        self.stamps.iter().position(|s| s.len == frame.len() && s.head[..n] == frame[..n])
    }

    /// The stamp of `frame` among those drained (the oldest that matches), the ones
    /// before it discarded; or `read_at` when none matches.
    fn take(&mut self, frame: &[u8], read_at: u64) -> u64 {
        match self.find(frame) {
            Some(i) => {
                self.discarded += i as u64;
                self.stamps.drain(..i);
                let stamp = self.stamps.pop_front().expect("found");
                self.stamped += 1;
                // A stamp a little after the read (the two clocks' offset read apart)
                // is the read.
                let at = stamp.at.min(read_at);
                self.read_wait.record(read_at - at);
                at
            }
            None => {
                self.unstamped += 1;
                read_at
            }
        }
    }

    /// The frame offered at `at` found the line already at `line_now`.
    pub fn behind_line(&mut self, at: u64, line_now: u64) {
        if at < line_now {
            self.behind.record(line_now - at);
        }
    }

    /// Reads every stamp waiting on the socket.
    fn drain(&mut self, clock: &Clock) {
        let Some(fd) = self.socket.as_ref().map(AsRawFd::as_raw_fd) else { return };
        let offset = clock.realtime_offset();
        loop {
            // SAFETY: zeroed iovec/msghdr/mmsghdr are valid; each points below into
            // `heads` and `controls`, which outlive the call.
            let mut iov: [libc::iovec; BATCH] = unsafe { zeroed() };
            let mut msgs: [libc::mmsghdr; BATCH] = unsafe { zeroed() };
            for k in 0..BATCH {
                iov[k] = libc::iovec { iov_base: self.heads[k].as_mut_ptr().cast(), iov_len: HEAD };
                msgs[k].msg_hdr.msg_iov = &mut iov[k];
                msgs[k].msg_hdr.msg_iovlen = 1;
                msgs[k].msg_hdr.msg_control = self.controls[k].as_mut_ptr().cast();
                msgs[k].msg_hdr.msg_controllen = size_of::<[u64; 8]>();
            }
            // MSG_TRUNC: each message's length is the frame's, not the part copied.
            let got = unsafe {
                libc::recvmmsg(
                    fd,
                    msgs.as_mut_ptr(),
                    BATCH as libc::c_uint,
                    libc::MSG_DONTWAIT | libc::MSG_TRUNC,
                    std::ptr::null_mut(),
                )
            };
            if got <= 0 {
                return;
            }
            for (k, msg) in msgs.iter().enumerate().take(got as usize) {
                let Some(real) = timestamp(&msg.msg_hdr) else { continue };
                let at = clock.on_loop(real, offset);
                if self.stamps.len() == KEEP {
                    self.stamps.pop_front();
                    self.discarded += 1;
                }
                self.stamps.push_back(Stamp { at, len: msg.msg_len as usize, head: self.heads[k] });
            }
            if (got as usize) < BATCH {
                return;
            }
        }
    }

    pub fn report(&self) -> ArrivalReport {
        ArrivalReport {
            clock: if self.socket.is_some() { "kernel" } else { "read" },
            why: self.why.clone().filter(|w| !w.is_empty()),
            stamped: self.stamped,
            unstamped: self.unstamped,
            stamps_unmatched: self.discarded + self.stamps.len() as u64,
            read_wait_ns: self.read_wait.report(),
            behind_line_ns: self.behind.report(),
        }
    }
}

/// The loop's reading side: a buffer and the arrival instants of each device, and the
/// latest instant the model was polled or offered a frame at.
pub struct Intake {
    bufs: Vec<Vec<u8>>,
    arrivals: Vec<Arrivals>,
    /// Per device, the frame read ahead and not yet offered: (its length, its arrival).
    head: Vec<Option<(usize, u64)>>,
    reads: Vec<usize>,
    model_now: u64,
}

/// What [`Intake`] offers frames to: the loop's link model (a line, a cell, the ATM
/// network), in time order.
pub trait Intaken {
    /// Offers `frame` from end `from` at `now`.
    fn offer(&mut self, now: u64, from: usize, frame: &[u8], sink: &mut Sink<'_>);
    /// Does what is due by `now`.
    fn advance(&mut self, now: u64, sink: &mut Sink<'_>);
    /// Whether a frame stamped before the instant the model was last advanced to is
    /// taken at its stamp (a line: its serializer starts no earlier than it is free) or
    /// at the model's instant (a cell's or the ATM network's events run in time order).
    fn takes_past(&self) -> bool;
}

impl Intake {
    /// Kernel timestamps on every end (`kernel_arrivals`), or the read instants; buffers
    /// of `frame_buffer` bytes.
    pub fn new(ends: &[&Device], kernel_arrivals: bool, frame_buffer: usize) -> Intake {
        let k = ends.len();
        let arrivals = if kernel_arrivals {
            ends.iter().map(|d| Arrivals::open(d)).collect()
        } else {
            (0..k).map(|_| Arrivals::from_reads("kernel_arrivals off".to_string())).collect()
        };
        Intake { bufs: vec![vec![0; frame_buffer]; k], arrivals, head: vec![None; k], reads: vec![0; k], model_now: 0 }
    }

    /// Reads what waits on the `readable` devices (up to `batch` frames each), one frame
    /// ahead per device, and offers each to `model` at the instant it came, the devices'
    /// frames earliest first; then polls the model up to now. Err: the read error that
    /// ends the run.
    pub fn offer_waiting(
        &mut self,
        model: &mut dyn Intaken,
        ends: &[&Device],
        readable: &mut [bool],
        clock: &Clock,
        batch: usize,
        sink: &mut Sink<'_>,
    ) -> Result<(), String> {
        self.reads.fill(0);
        loop {
            for end in 0..ends.len() {
                while self.head[end].is_none() && readable[end] && self.reads[end] < batch {
                    match ends[end].read(&mut self.bufs[end]) {
                        Ok(n) => {
                            self.reads[end] += 1;
                            let at = self.arrivals[end].arrival(&self.bufs[end][..n], clock.now(), clock);
                            self.head[end] = Some((n, at));
                        }
                        Err(e) if e.kind() == io::ErrorKind::WouldBlock => readable[end] = false,
                        Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                        Err(e) => return Err(format!("error reading {}: {e}", ends[end].name())),
                    }
                }
            }
            let earliest = (0..ends.len()).filter_map(|e| self.head[e].map(|(_, at)| (at, e))).min();
            let Some((_, end)) = earliest else { break };
            let (n, at) = self.head[end].take().expect("chosen");
            // The model never goes back (see `Intaken::takes_past`).
            self.arrivals[end].behind_line(at, self.model_now);
            let offer_at = if model.takes_past() { at } else { self.model_now.max(at) };
            self.model_now = self.model_now.max(at);
            model.offer(offer_at, end, &self.bufs[end][..n], sink);
        }
        self.model_now = self.model_now.max(clock.now());
        model.advance(self.model_now, sink);
        Ok(())
    }

    /// Per end, in the order of the devices, the instants its frames were offered at.
    pub fn report(&self) -> Vec<ArrivalReport> {
        self.arrivals.iter().map(Arrivals::report).collect()
    }
}

/// The SCM_TIMESTAMPNS of a received message, CLOCK_REALTIME ns.
fn timestamp(hdr: &libc::msghdr) -> Option<i128> {
    // SAFETY: the CMSG_* walk stays within msg_control/msg_controllen as the kernel set them.
    unsafe {
        let mut c = libc::CMSG_FIRSTHDR(hdr);
        while !c.is_null() {
            if (*c).cmsg_level == libc::SOL_SOCKET && (*c).cmsg_type == SO_TIMESTAMPNS {
                let ts: libc::timespec = std::ptr::read_unaligned(libc::CMSG_DATA(c).cast());
                return Some(i128::from(ts.tv_sec) * 1_000_000_000 + i128::from(ts.tv_nsec));
            }
            c = libc::CMSG_NXTHDR(hdr, c);
        }
    }
    None
}

/// The calling thread back in the network namespace it was in, on drop.
struct NamespaceGuard(OwnedFd);

impl Drop for NamespaceGuard {
    fn drop(&mut self) {
        // SAFETY: setns with a namespace descriptor this guard holds.
        unsafe { libc::setns(self.0.as_raw_fd(), libc::CLONE_NEWNET) };
    }
}

fn check(r: libc::c_int, what: &str) -> io::Result<libc::c_int> {
    if r < 0 {
        let e = io::Error::last_os_error();
        Err(io::Error::new(e.kind(), format!("{what}: {e}")))
    } else {
        Ok(r)
    }
}

/// A packet socket bound to `device` in the device's own namespace (entered for the
/// socket's creation and left), which receives only what goes out of the device (a
/// classic BPF filter on `pkt_type`), with software receive timestamps.
fn stamp_socket(device: &Device) -> io::Result<OwnedFd> {
    // SAFETY: plain system calls on descriptors owned here; each result is checked.
    unsafe {
        let netns = check(libc::ioctl(device.as_raw_fd(), TUNGETDEVNETNS), "TUNGETDEVNETNS")?;
        let netns = OwnedFd::from_raw_fd(netns);
        let home = check(
            libc::open(c"/proc/thread-self/ns/net".as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC),
            "/proc/thread-self/ns/net",
        )?;
        let home = NamespaceGuard(OwnedFd::from_raw_fd(home));
        check(libc::setns(netns.as_raw_fd(), libc::CLONE_NEWNET), "setns into the device's namespace")?;
        // Protocol 0: no frame comes until the bind below, after the filter is on.
        let fd = check(
            libc::socket(libc::AF_PACKET, libc::SOCK_RAW | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC, 0),
            "socket(AF_PACKET)",
        )?;
        let fd = OwnedFd::from_raw_fd(fd);
        let raw = fd.as_raw_fd();
        let filter = [
            libc::sock_filter { code: BPF_LD_W_ABS, jt: 0, jf: 0, k: (SKF_AD_OFF + SKF_AD_PKTTYPE) as u32 },
            libc::sock_filter { code: BPF_JMP_JEQ_K, jt: 0, jf: 1, k: PACKET_OUTGOING },
            libc::sock_filter { code: BPF_RET_K, jt: 0, jf: 0, k: u32::MAX },
            libc::sock_filter { code: BPF_RET_K, jt: 0, jf: 0, k: 0 },
        ];
        let prog = libc::sock_fprog { len: filter.len() as u16, filter: filter.as_ptr().cast_mut() };
        setsockopt(raw, SO_ATTACH_FILTER, &prog, "SO_ATTACH_FILTER")?;
        setsockopt(raw, SO_TIMESTAMPNS, &1 as &libc::c_int, "SO_TIMESTAMPNS")?;
        setsockopt(raw, SO_RCVBUFFORCE, &RCVBUF, "SO_RCVBUFFORCE")?;
        let index = check(
            libc::if_nametoindex(std::ffi::CString::new(device.name()).expect("no NUL").as_ptr()) as libc::c_int,
            "if_nametoindex",
        )?;
        if index == 0 {
            return Err(io::Error::new(io::ErrorKind::NotFound, format!("no device {}", device.name())));
        }
        let mut addr: libc::sockaddr_ll = zeroed();
        addr.sll_family = libc::AF_PACKET as u16;
        addr.sll_protocol = ETH_P_ALL.to_be();
        addr.sll_ifindex = index;
        check(
            libc::bind(raw, (&addr as *const libc::sockaddr_ll).cast(), size_of::<libc::sockaddr_ll>() as u32),
            "bind",
        )?;
        drop(home);
        Ok(fd)
    }
}

fn setsockopt<T>(fd: RawFd, name: libc::c_int, value: &T, what: &str) -> io::Result<()> {
    // SAFETY: `value` is valid for size_of::<T>() bytes.
    let r = unsafe {
        libc::setsockopt(fd, libc::SOL_SOCKET, name, (value as *const T).cast(), size_of::<T>() as libc::socklen_t)
    };
    check(r, what).map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(stamps: &[(u64, &[u8])]) -> Arrivals {
        // No socket: the stamps stand for those a drain would have read.
        let mut a = Arrivals::from_reads(String::new());
        for &(at, frame) in stamps {
            let mut head = [0; HEAD];
            let n = frame.len().min(HEAD);
            head[..n].copy_from_slice(&frame[..n]);
            a.stamps.push_back(Stamp { at, len: frame.len(), head });
        }
        a
    }

    fn matched(a: &mut Arrivals, frame: &[u8], read_at: u64) -> u64 {
        a.take(frame, read_at)
    }

    #[test]
    fn a_frame_takes_its_own_stamp_and_skips_those_of_frames_the_tap_dropped() {
        let (f1, f2, f3) = ([1u8; 100], [2u8; 100], [3u8; 60]);
        let mut a = with(&[(1_000, &f1), (2_000, &f2), (3_000, &f3)]);
        // f2 was dropped by the TAP: f3's read skips its stamp.
        assert_eq!(matched(&mut a, &f1, 5_000), 1_000);
        assert_eq!(matched(&mut a, &f3, 6_000), 3_000);
        // A frame with no stamp (the socket's buffer overflowed) keeps its read instant.
        assert_eq!(matched(&mut a, &[9u8; 100], 7_000), 7_000);
        let r = a.report();
        assert_eq!((r.stamped, r.unstamped, r.stamps_unmatched), (2, 1, 1));
        assert_eq!(r.read_wait_ns.max, 4_000);
        // The same bytes at another length are another frame.
        let mut b = with(&[(1_000, &[7u8; 80][..])]);
        assert_eq!(matched(&mut b, &[7u8; 81], 2_000), 2_000);
    }

    #[test]
    fn the_realtime_offset_moves_a_stamp_onto_the_loop_clock() {
        let clock = Clock::start();
        let real = clock_ns(libc::CLOCK_REALTIME);
        let on_loop = real - clock.realtime_offset() - clock.start;
        let now = clock.now() as i128;
        // The real-time instant just read is the loop's now, within the reads' spacing.
        assert!((on_loop - now).abs() < 1_000_000, "{on_loop} vs {now}");
    }
}
