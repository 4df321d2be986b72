//! One emulated point-to-point line, sans-IO: crates/sim's own line driven through its
//! `Link` trait by a clock the caller reads.
//!
//! The line is the simulator's `sim::link::line::Line`, built from the plan's link by
//! the constructor the world builds its lines with ([`sim::world::line_of_plan`]: the
//! Ethernet or serial serializer and queue, and per direction Bernoulli or
//! Gilbert-Elliott loss with the link's own random stream, a shaper or a policer). This
//! file only drives it: a frame read from a device is [`Link::offer`]ed at the instant it
//! was read, and the line is [`Link::poll`]ed at each instant its [`Link::poll_at`]
//! names, in turn, up to the caller's `now`; what it hands back is written to the far
//! device or counted as a drop, by reason.
//!
//! Time is nanoseconds since the emulator started (CLOCK_MONOTONIC in `run.rs`). The line
//! is polled at its own instants, not at the (later) one the caller gets round to: a
//! frame waiting behind another starts when the one before it ends on the model's
//! timeline, so a late wake-up delays one delivery but never slows the line.
//!
//! A serial line carries IP datagrams. An end on a TUN device (IFF_TUN) reads and writes
//! them as they are; an end on a TAP device (IFF_TAP) reads Ethernet frames, whose 14-byte
//! header the line takes off (frames that are not IPv4, or IPv6 on PPP, are dropped: a
//! SLIP line carries IPv4 only, RFC 1055) and put back at the far end, addressed to the
//! MAC the far kernel sends from (learned from its frames; broadcast until then, which
//! `run.rs` readdresses to the far device's own MAC, since Linux forwards only frames
//! addressed to its device). The TAP's kernel must not ARP on it (`ip link set DEV arp
//! off`): a serial line has no ARP.

use std::collections::VecDeque;

use serde::Serialize;
use sim::config::{LinkConfig, SerialFraming};
use sim::link::line::{reason, Line as SimLine};
use sim::link::{Link, LinkDrop, LinkEvent, Offer, PortRef};
use sim::world::line_of_plan;
use wire::ethernet::HEADER_LEN;

/// What an end of the line is on the host.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum EndKind {
    /// A TAP device opened `IFF_TAP | IFF_NO_PI`: Ethernet frames without FCS.
    Tap,
    /// A TUN device opened `IFF_TUN | IFF_NO_PI`: IP datagrams (serial lines only).
    Tun,
}

/// Why a frame offered to the line was not delivered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DropReason {
    /// The direction's queue held `queue_frames` frames or `queue_bytes` bytes (drop-tail).
    QueueFull,
    /// The policer found too few tokens (RFC 2697 colour-blind, red dropped).
    Policed,
    /// The shaper's backlog would exceed its `queue_bytes` (`tc tbf limit`).
    ShaperQueueFull,
    /// Longer than the shaper's bucket: it never conforms.
    ShaperOversize,
    /// The loss model (Bernoulli or Gilbert-Elliott) lost it on the line.
    Lost,
    /// Not an IP datagram a serial line carries (ARP, or IPv6 on SLIP).
    NotIp,
    /// A CSLIP receiver tossed it after a lost frame (RFC 1144 §4.2).
    CslipTossed,
    /// Writing it to the far device failed (the device is down or gone).
    WriteFailed,
}

/// Frames and the bytes they held (as read from or written to the device: an Ethernet
/// frame without FCS on a TAP, the IP datagram on a TUN).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Count {
    pub frames: u64,
    pub bytes: u64,
}

impl Count {
    pub(crate) fn add(&mut self, bytes: usize) {
        self.frames += 1;
        self.bytes += bytes as u64;
    }

    fn plus(self, other: Count) -> Count {
        Count { frames: self.frames + other.frames, bytes: self.bytes + other.bytes }
    }
}

/// Frames dropped by one direction, by reason (see [`DropReason`]).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Drops {
    pub queue_full: Count,
    pub policed: Count,
    pub shaper_queue_full: Count,
    pub shaper_oversize: Count,
    pub lost: Count,
    pub not_ip: Count,
    pub cslip_tossed: Count,
    pub write_failed: Count,
}

impl Drops {
    fn count(&mut self, reason: DropReason) -> &mut Count {
        match reason {
            DropReason::QueueFull => &mut self.queue_full,
            DropReason::Policed => &mut self.policed,
            DropReason::ShaperQueueFull => &mut self.shaper_queue_full,
            DropReason::ShaperOversize => &mut self.shaper_oversize,
            DropReason::Lost => &mut self.lost,
            DropReason::NotIp => &mut self.not_ip,
            DropReason::CslipTossed => &mut self.cslip_tossed,
            DropReason::WriteFailed => &mut self.write_failed,
        }
    }

    /// Every reason together.
    pub fn total(&self) -> Count {
        [
            self.queue_full,
            self.policed,
            self.shaper_queue_full,
            self.shaper_oversize,
            self.lost,
            self.not_ip,
            self.cslip_tossed,
            self.write_failed,
        ]
        .into_iter()
        .fold(Count::default(), Count::plus)
    }
}

/// One direction's counters. Conservation: `offered = delivered + dropped + queued + in
/// flight` ([`Line::held`]), in frames always and in bytes except on CSLIP (a
/// decompressed datagram need not be as long as the one compressed).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct DirectionCounters {
    /// Frames read from the sending end's device.
    pub offered: Count,
    /// Frames written to the far end's device.
    pub delivered: Count,
    pub dropped: Drops,
}

/// Where a delivered frame goes: `(end, frame, scheduled arrival ns) -> written`.
pub type Sink<'a> = dyn FnMut(usize, &[u8], u64) -> bool + 'a;

/// An emulated point-to-point line between end 0 (the plan's `a`) and end 1 (`b`).
pub struct Line {
    /// The simulator's line, driven through [`Link`] only (and asked how many frames
    /// of a direction are on their way, for [`Line::held`]).
    line: SimLine<()>,
    /// The plan's ports of the ends, which the line's events name.
    ports: [PortRef; 2],
    ends: [EndKind; 2],
    /// A serial line (it carries IP datagrams, not Ethernet frames).
    serial: bool,
    /// A serial line with PPP framing carries IPv6 too (RFC 5072); SLIP only IPv4.
    ipv6: bool,
    /// Per direction, the length as offered of each frame the line holds, in the order
    /// the frames leave it: one queue, one serializer and a constant delay keep a
    /// direction's frames in order, so each frame's fate is the front one's.
    held: [VecDeque<usize>; 2],
    counters: [DirectionCounters; 2],
    /// A serial line on TAPs: the MAC each end's kernel sends from, once seen.
    macs: [Option<[u8; 6]>; 2],
    /// The line's time: the instant of its last poll, ns (it never goes back).
    now: u64,
    /// What the last poll handed back (kept to reuse its allocation).
    events: Vec<LinkEvent>,
}

impl Line {
    /// The line of the plan's `link` (Ethernet or serial) with its impairments, their loss
    /// streams those of link number `link_index` of a run of `seed` (as the simulator's,
    /// so the same frames by order are lost), between ends of the given kinds.
    pub fn new(link: &LinkConfig, seed: u64, link_index: usize, ends: [EndKind; 2]) -> Result<Line, String> {
        let i = link_index;
        match link {
            LinkConfig::Ethernet { .. } => {
                if let Some(end) = ends.iter().position(|&e| e == EndKind::Tun) {
                    return Err(format!(
                        "links[{i}]: an Ethernet link carries Ethernet frames: end {} must be a TAP device \
                         (IFF_TAP), not TUN",
                        ["a", "b"][end]
                    ));
                }
            }
            LinkConfig::Serial { .. } => {}
            LinkConfig::Wifi(_) | LinkConfig::Atm(_) => {
                return Err(format!(
                    "links[{i}]: an 802.11 cell or an ATM link is not a line: emulate it with the whole plan \
                     (emu::emulate_plan)"
                ))
            }
        }
        let line = line_of_plan::<()>(link, seed, i)
            .map_err(|e| e.to_string())?
            .ok_or_else(|| format!("links[{i}]: not a point-to-point line"))?;
        let ipv6 = matches!(link, LinkConfig::Serial { framing: SerialFraming::Ppp, .. });
        Ok(Line {
            serial: matches!(link, LinkConfig::Serial { .. }),
            ipv6,
            ports: line.ends(),
            line,
            ends,
            held: Default::default(),
            counters: Default::default(),
            macs: [None; 2],
            now: 0,
            events: Vec::new(),
        })
    }

    pub fn name(&self) -> &str {
        Link::name(&self.line)
    }

    /// "ethernet" or "serial".
    pub fn kind(&self) -> &'static str {
        Link::kind(&self.line)
    }

    pub fn ends(&self) -> [EndKind; 2] {
        self.ends
    }

    /// The counters of the direction from end `from`.
    pub fn counters(&self, from: usize) -> &DirectionCounters {
        &self.counters[from]
    }

    /// A frame read from end `from` at `now`. Everything due by `now` happens first (so a
    /// frame never starts before it came); deliveries go to `sink`.
    pub fn offer(&mut self, now: u64, from: usize, frame: &[u8], sink: &mut Sink<'_>) {
        self.advance(now, sink);
        let now = now.max(self.now);
        self.counters[from].offered.add(frame.len());
        let Some(carried) = self.as_offered(from, frame) else {
            return self.drop(from, DropReason::NotIp, frame.len());
        };
        match self.line.offer(now, from, carried) {
            Offer::Accepted => self.held[from].push_back(frame.len()),
            Offer::Dropped { reason, .. } => {
                let why = if reason.starts_with(reason::POLICED) {
                    DropReason::Policed
                } else if reason.starts_with(reason::SHAPER_QUEUE_FULL) {
                    DropReason::ShaperQueueFull
                } else {
                    DropReason::QueueFull
                };
                return self.drop(from, why, frame.len());
            }
        }
        // A free serializer starts it now.
        self.poll(now, sink);
    }

    /// `frame`, read from end `from`, as the line takes it: an Ethernet frame (a serial
    /// line takes its header off); `None` if a serial line does not carry it.
    fn as_offered(&mut self, from: usize, frame: &[u8]) -> Option<Vec<u8>> {
        if !self.serial {
            return Some(frame.to_vec());
        }
        let datagram = match self.ends[from] {
            EndKind::Tun => frame,
            EndKind::Tap => {
                if frame.len() >= HEADER_LEN {
                    self.macs[from] = Some(frame[6..12].try_into().expect("six bytes"));
                }
                match frame.get(12..14).map(|t| u16::from_be_bytes([t[0], t[1]])) {
                    Some(0x0800) | Some(0x86dd) => &frame[HEADER_LEN..],
                    _ => &[][..],
                }
            }
        };
        match datagram.first().map(|b| b >> 4) {
            Some(4) => {}
            Some(6) if self.ipv6 => {}
            _ => return None,
        }
        Some(match self.ends[from] {
            EndKind::Tap => frame.to_vec(),
            // The line takes off a header it does not read: zeros stand for it.
            EndKind::Tun => [&[0u8; HEADER_LEN][..], datagram].concat(),
        })
    }

    /// Handles everything due by `now`, each at its own time, earliest first.
    pub fn advance(&mut self, now: u64, sink: &mut Sink<'_>) {
        while let Some(at) = self.next_wake() {
            if at > now {
                return;
            }
            self.poll(at, sink);
        }
    }

    /// When the line next needs [`Self::advance`]: ns, or `None` while it is idle.
    pub fn next_wake(&self) -> Option<u64> {
        self.line.poll_at().map(|at| at.max(self.now))
    }

    /// Polls the line at `at` and hands on what it gives back. Every arrival it hands
    /// back is due at `at`: the line is polled at each instant it names, in turn.
    fn poll(&mut self, at: u64, sink: &mut Sink<'_>) {
        self.now = at;
        let mut events = std::mem::take(&mut self.events);
        self.line.poll(at, &mut events);
        for event in events.drain(..) {
            match event {
                LinkEvent::Delivered { to, frame } => self.deliver(at, self.end_of(to), frame, sink),
                LinkEvent::Dropped(drop) => {
                    let LinkDrop { at: (node, port), reason, .. } = *drop;
                    let end = self.end_of((node, port.unwrap_or_default()));
                    // A frame too long for the shaper is dropped at its sender's port,
                    // a lost or refused one at the receiver's.
                    let (from, why) = if reason.starts_with(reason::SHAPER_OVERSIZE) {
                        (end, DropReason::ShaperOversize)
                    } else if reason.starts_with(reason::LOST) {
                        (1 - end, DropReason::Lost)
                    } else {
                        (1 - end, DropReason::CslipTossed)
                    };
                    let offered = self.held[from].pop_front().expect("a frame the line held");
                    self.drop(from, why, offered);
                }
                LinkEvent::Sent { .. } => {}
            }
        }
        self.events = events;
    }

    /// The end of the line at the plan's port `port`.
    fn end_of(&self, port: PortRef) -> usize {
        usize::from(self.ports[1] == port)
    }

    /// `frame`, as the line hands it to end `to` at `at`, written there.
    fn deliver(&mut self, at: u64, to: usize, frame: Vec<u8>, sink: &mut Sink<'_>) {
        let from = 1 - to;
        let offered = self.held[from].pop_front().expect("a frame the line held");
        let out = if self.serial {
            // The line puts back a header of its own: the device's is the far kernel's.
            let datagram = &frame[HEADER_LEN..];
            match self.ends[to] {
                EndKind::Tun => datagram.to_vec(),
                EndKind::Tap => self.ethernet_frame(from, datagram),
            }
        } else {
            frame
        };
        if sink(to, &out, at) {
            self.counters[from].delivered.add(out.len());
        } else {
            self.drop(from, DropReason::WriteFailed, offered);
        }
    }

    /// What end `from` holds at the moment: frames queued, and frames started and not
    /// yet arrived (being serialized or propagating), as offered.
    pub fn held(&self, from: usize) -> (Count, Count) {
        let on_the_way = self.line.in_flight_len(from);
        let (mut queued, mut in_flight) = (Count::default(), Count::default());
        for (i, &len) in self.held[from].iter().enumerate() {
            if i < on_the_way {
                in_flight.add(len)
            } else {
                queued.add(len)
            }
        }
        (queued, in_flight)
    }

    /// Whether this driver's account of the direction from `from` agrees, frame for
    /// frame, with the line's own ([`Link::conservation`]): what the line took in is what
    /// was offered less what it was never given (not IP on a serial line); what it handed
    /// out was delivered or failed to be written; its drops are the others; what it
    /// holds is what this driver holds lengths of.
    pub fn agrees_with_line(&self, from: usize) -> bool {
        let c = &self.counters[from];
        let d = &c.dropped;
        let Some(line) = self.line.conservation().into_iter().nth(from) else { return false };
        let line_drops = d.total().frames - d.not_ip.frames - d.write_failed.frames;
        line.frames_in == c.offered.frames - d.not_ip.frames
            && line.frames_out == c.delivered.frames + d.write_failed.frames
            && line.dropped == line_drops
            && line.queued == self.held[from].len() as u64
    }

    fn drop(&mut self, from: usize, reason: DropReason, bytes: usize) {
        self.counters[from].dropped.count(reason).add(bytes);
    }

    /// A serial line's datagram from `from` as an Ethernet frame for the far end's TAP:
    /// to the MAC the far kernel sends from (broadcast until it has sent), from the
    /// sending end's (a locally administered address if that end is a TUN).
    fn ethernet_frame(&self, from: usize, datagram: &[u8]) -> Vec<u8> {
        let to = 1 - from;
        let dst = self.macs[to].unwrap_or([0xff; 6]);
        let src = self.macs[from].unwrap_or([0x02, 0, 0, 0, 0, from as u8 + 1]);
        let ethertype: u16 = if datagram.first().map(|b| b >> 4) == Some(6) { 0x86dd } else { 0x0800 };
        let mut frame = Vec::with_capacity(HEADER_LEN + datagram.len());
        frame.extend_from_slice(&dst);
        frame.extend_from_slice(&src);
        frame.extend_from_slice(&ethertype.to_be_bytes());
        frame.extend_from_slice(datagram);
        frame
    }
}
