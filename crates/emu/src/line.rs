//! One emulated point-to-point line, sans-IO: crates/sim's own models driven by a clock
//! the caller reads.
//!
//! The models are the simulator's, not copies: [`EthernetLink`] or [`SerialLine`] (queue,
//! drop-tail limits, serializer, time on the wire), and per direction the impairments the
//! world builds for the same plan ([`sim::world::direction_impairment`]: Bernoulli or
//! Gilbert-Elliott loss with the link's own random stream, a shaper or a policer). This
//! file is the glue the world's `world/lines.rs` is for a simulated line, in the same
//! order: a frame is metered (policer, shaper queue limit) and queued when it is offered,
//! held by the shaper until its tokens are there, serialized one at a time, and its fate
//! drawn from the loss model when it arrives, `last bit + delay` after it started.
//!
//! Time is nanoseconds since the emulator started (CLOCK_MONOTONIC in `run.rs`). Every
//! event is handled at its own scheduled time, not at the (later) instant the caller gets
//! round to it: a frame waiting behind another starts when the one before it ends on the
//! model's timeline, so a late wake-up delays one delivery but never slows the line.
//!
//! A serial line carries IP datagrams. An end on a TUN device (IFF_TUN) reads and writes
//! them as they are; an end on a TAP device (IFF_TAP) reads Ethernet frames, whose 14-byte
//! header is taken off (frames that are not IPv4, or IPv6 on PPP, are dropped: a SLIP line
//! carries IPv4 only, RFC 1055) and put back at the far end, addressed to the MAC the far
//! kernel sends from (learned from its frames; broadcast until then). The TAP's kernel
//! must not ARP on it (`ip link set DEV arp off`): a serial line has no ARP.

use std::collections::VecDeque;

use serde::Serialize;
use sim::config::LinkConfig;
use sim::link::ethernet::{ethernet_last_bit_ns, EthernetLink};
use sim::link::line::DirectionImpairment;
use sim::link::serial::{Framing, SerialLine};
use sim::time::SimTime;
use sim::world::{direction_impairment, serial_line, SerialPpp};
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
    fn add(&mut self, bytes: usize) {
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

/// The line model of the plan's link.
enum Model {
    Ethernet(EthernetLink),
    Serial(SerialLine),
}

/// A frame on its way: started (serializing) or propagating.
struct InFlight {
    /// When its last bit reaches the far end, ns.
    arrival_ns: u64,
    /// What crosses the line (the Ethernet frame, the datagram, a CSLIP packet).
    frame: Vec<u8>,
    /// Its length as it was offered.
    offered_len: usize,
}

struct Direction {
    impair: DirectionImpairment,
    /// In arrival order: the delay is constant and one frame is serialized at a time.
    in_flight: VecDeque<InFlight>,
    /// When the frame being serialized ends (the next may start), if one is.
    tx_done_ns: Option<u64>,
    counters: DirectionCounters,
}

/// The next thing due on the line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Due {
    Arrival,
    TxDone,
    Shaper,
}

/// Where a delivered frame goes: `(end, frame, scheduled arrival ns) -> written`.
pub type Sink<'a> = dyn FnMut(usize, &[u8], u64) -> bool + 'a;

/// An emulated point-to-point line between end 0 (the plan's `a`) and end 1 (`b`).
pub struct Line {
    name: String,
    model: Model,
    ends: [EndKind; 2],
    dirs: [Direction; 2],
    /// A serial line on TAPs: the MAC each end's kernel sends from, once seen.
    macs: [Option<[u8; 6]>; 2],
}

impl Line {
    /// The line of the plan's `link` (Ethernet or serial) with its impairments, their loss
    /// streams those of link number `link_index` of a run of `seed` (as the simulator's,
    /// so the same frames by order are lost), between ends of the given kinds.
    pub fn new(link: &LinkConfig, seed: u64, link_index: usize, ends: [EndKind; 2]) -> Result<Line, String> {
        let i = link_index;
        let (name, model, impair) = match link {
            LinkConfig::Ethernet { name, a, b, rate_bps, delay_ns, queue_frames, queue_bytes, impair } => {
                if let Some(end) = ends.iter().position(|&e| e == EndKind::Tun) {
                    return Err(format!(
                        "links[{i}]: an Ethernet link carries Ethernet frames: end {} must be a TAP device \
                         (IFF_TAP), not TUN",
                        ["a", "b"][end]
                    ));
                }
                if *rate_bps == 0 {
                    return Err(format!("links[{i}].rate_bps: a link's rate must be positive"));
                }
                let link = EthernetLink {
                    name: name.clone(),
                    ends: [(a.node, a.port), (b.node, b.port)],
                    rate_bps: *rate_bps,
                    delay_ns: *delay_ns,
                    queue_frames: *queue_frames,
                    queue_bytes: *queue_bytes,
                    dirs: Default::default(),
                };
                (name, Model::Ethernet(link), impair)
            }
            LinkConfig::Serial {
                name,
                rate_bps,
                format,
                framing,
                clocking,
                acfc,
                pfc,
                fcs_bits,
                compression,
                delay_ns,
                queue_frames,
                impair,
                ..
            } => {
                let ppp = SerialPpp { clocking: *clocking, acfc: *acfc, pfc: *pfc, fcs_bits: *fcs_bits };
                let line = serial_line(i, *rate_bps, format, *framing, ppp, *compression, *delay_ns, *queue_frames)
                    .map_err(|e| e.to_string())?;
                (name, Model::Serial(line), impair)
            }
            LinkConfig::Wifi(w) => {
                return Err(format!(
                    "links[{i}] ({}): 802.11 cells are not emulated yet, only Ethernet and serial links",
                    w.name
                ))
            }
            LinkConfig::Atm(_) => {
                return Err(format!("links[{i}]: ATM links are not emulated yet, only Ethernet and serial links"))
            }
        };
        let direction = |d: usize| -> Result<Direction, String> {
            let field = format!("links[{i}].impair[{d}]");
            Ok(Direction {
                impair: direction_impairment(&impair[d], seed, i, d, &field).map_err(|e| e.to_string())?,
                in_flight: VecDeque::new(),
                tx_done_ns: None,
                counters: DirectionCounters::default(),
            })
        };
        Ok(Line { name: name.clone(), model, ends, dirs: [direction(0)?, direction(1)?], macs: [None; 2] })
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// "ethernet" or "serial".
    pub fn kind(&self) -> &'static str {
        match self.model {
            Model::Ethernet(_) => "ethernet",
            Model::Serial(_) => "serial",
        }
    }

    pub fn ends(&self) -> [EndKind; 2] {
        self.ends
    }

    /// The counters of the direction from end `from`.
    pub fn counters(&self, from: usize) -> &DirectionCounters {
        &self.dirs[from].counters
    }

    /// A frame read from end `from` at `now`. Everything due by `now` happens first (so a
    /// frame never starts before it came); deliveries go to `sink`.
    pub fn offer(&mut self, now: u64, from: usize, frame: &[u8], sink: &mut Sink<'_>) {
        self.advance(now, sink);
        self.dirs[from].counters.offered.add(frame.len());
        let carried = match (&self.model, self.ends[from]) {
            (Model::Ethernet(_), _) => frame.to_vec(),
            (Model::Serial(line), end) => {
                let ppp = matches!(line.config().framing, Framing::Ppp { .. } | Framing::PppSync { .. });
                let datagram = match end {
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
                    Some(4) => datagram.to_vec(),
                    Some(6) if ppp => datagram.to_vec(),
                    _ => return self.drop(from, DropReason::NotIp, frame.len()),
                }
            }
        };
        if let Some(reason) = self.meter(now, from, carried.len()) {
            return self.drop(from, reason, frame.len());
        }
        let queued = match &mut self.model {
            Model::Ethernet(l) => l.enqueue(from, carried).is_ok(),
            Model::Serial(l) => l.enqueue(from, carried).is_ok(),
        };
        if !queued {
            return self.drop(from, DropReason::QueueFull, frame.len());
        }
        self.try_start(now, from);
    }

    /// Handles everything due by `now`, each at its own time, earliest first.
    pub fn advance(&mut self, now: u64, sink: &mut Sink<'_>) {
        while let Some((at, from, due)) = self.next_due() {
            if at > now {
                return;
            }
            match due {
                Due::Arrival => self.arrive(from, sink),
                Due::TxDone => {
                    self.dirs[from].tx_done_ns = None;
                    match &mut self.model {
                        Model::Ethernet(l) => l.finish(from),
                        Model::Serial(l) => l.finish(from),
                    }
                    self.try_start(at, from);
                }
                Due::Shaper => self.try_start(at, from),
            }
        }
    }

    /// When the line next needs [`Self::advance`]: ns, or `None` while it is idle.
    pub fn next_wake(&self) -> Option<u64> {
        self.next_due().map(|(at, _, _)| at)
    }

    /// What end `from` holds at the moment: frames queued, and frames started and not
    /// yet arrived (being serialized or propagating), as offered.
    pub fn held(&self, from: usize) -> (Count, Count) {
        let header = self.header_len(from);
        let mut queued = Count::default();
        let frames: Box<dyn Iterator<Item = &[u8]>> = match &self.model {
            Model::Ethernet(l) => Box::new(l.queued(from)),
            Model::Serial(l) => Box::new(l.queued(from)),
        };
        for frame in frames {
            queued.add(frame.len() + header);
        }
        let mut in_flight = Count::default();
        for f in &self.dirs[from].in_flight {
            in_flight.add(f.offered_len);
        }
        (queued, in_flight)
    }

    /// Bytes an offered frame had besides what the line carries: the Ethernet header a
    /// serial line on a TAP takes off.
    fn header_len(&self, from: usize) -> usize {
        match (&self.model, self.ends[from]) {
            (Model::Serial(_), EndKind::Tap) => HEADER_LEN,
            _ => 0,
        }
    }

    fn drop(&mut self, from: usize, reason: DropReason, bytes: usize) {
        self.dirs[from].counters.dropped.count(reason).add(bytes);
    }

    /// The policer's verdict and the shaper's queue limit, as the world's `Line::meter`.
    fn meter(&mut self, now: u64, from: usize, len: usize) -> Option<DropReason> {
        let backlog = match &self.model {
            Model::Ethernet(l) => l.queued_bytes(from),
            Model::Serial(l) => l.queued_bytes(from),
        };
        let impair = &mut self.dirs[from].impair;
        if let Some(policer) = impair.policer.as_mut() {
            if !policer.conform(SimTime(now), len) {
                return Some(DropReason::Policed);
            }
        }
        match impair.shaper_queue_bytes {
            Some(limit) if impair.shaper.is_some() && (backlog + len) as u64 > limit => {
                Some(DropReason::ShaperQueueFull)
            }
            _ => None,
        }
    }

    fn busy(&self, from: usize) -> bool {
        match &self.model {
            Model::Ethernet(l) => l.dirs[from].busy,
            Model::Serial(l) => l.dirs[from].busy,
        }
    }

    fn peek_len(&self, from: usize) -> Option<usize> {
        match &self.model {
            Model::Ethernet(l) => l.peek_len(from),
            Model::Serial(l) => l.peek_len(from),
        }
    }

    /// Starts the next frame at `from` at `now` if the serializer is free and the shaper
    /// (if any) lets it go, as the world's `start_tx_len`. A frame longer than the
    /// shaper's bucket is dropped and the next one tried.
    fn try_start(&mut self, now: u64, from: usize) {
        loop {
            if self.busy(from) {
                return;
            }
            let Some(len) = self.peek_len(from) else { return };
            let impair = &mut self.dirs[from].impair;
            if let Some(shaper) = impair.shaper.as_mut() {
                match impair.shaped_until {
                    Some(t) if t > now => return,
                    Some(_) => impair.shaped_until = None,
                    None => match shaper.departure(SimTime(now), len) {
                        Some(t) if t.0 > now => {
                            impair.shaped_until = Some(t.0);
                            return;
                        }
                        Some(_) => {}
                        None => {
                            self.start_next(from);
                            match &mut self.model {
                                Model::Ethernet(l) => l.finish(from),
                                Model::Serial(l) => l.finish(from),
                            }
                            let offered = len + self.header_len(from);
                            self.drop(from, DropReason::ShaperOversize, offered);
                            continue;
                        }
                    },
                }
            }
            let Some((frame, wire_ns, last_bit_ns)) = self.start_next(from) else { return };
            let delay = match &self.model {
                Model::Ethernet(l) => l.delay_ns,
                Model::Serial(l) => l.config().delay_ns,
            };
            let offered_len = len + self.header_len(from);
            let dir = &mut self.dirs[from];
            dir.tx_done_ns = Some(now + wire_ns);
            dir.in_flight.push_back(InFlight { arrival_ns: now + last_bit_ns + delay, frame, offered_len });
            return;
        }
    }

    /// The model's next frame, its time on the wire, and the time until its last bit is
    /// out (Ethernet's inter-frame gap keeps the sender busy after it).
    fn start_next(&mut self, from: usize) -> Option<(Vec<u8>, u64, u64)> {
        match &mut self.model {
            Model::Ethernet(l) => {
                let rate = l.rate_bps;
                l.start_next(from).map(|(frame, busy)| {
                    let last_bit = ethernet_last_bit_ns(frame.len(), rate);
                    (frame, busy, last_bit)
                })
            }
            Model::Serial(l) => l.start_next(from).map(|(frame, busy)| (frame, busy, busy)),
        }
    }

    /// The first frame in flight from `from` reached the far end: lost, or delivered.
    fn arrive(&mut self, from: usize, sink: &mut Sink<'_>) {
        let to = 1 - from;
        let dir = &mut self.dirs[from];
        let f = dir.in_flight.pop_front().expect("a frame in flight");
        let impair = &mut dir.impair;
        if impair.loss.drop(&mut impair.rng) {
            impair.lost += 1;
            if let Model::Serial(l) = &mut self.model {
                l.lost(from);
            }
            return self.drop(from, DropReason::Lost, f.offered_len);
        }
        let out = match &mut self.model {
            Model::Ethernet(_) => f.frame,
            Model::Serial(l) => match l.arrive(from, f.frame) {
                Ok(datagram) => match self.ends[to] {
                    EndKind::Tun => datagram,
                    EndKind::Tap => self.ethernet_frame(from, &datagram),
                },
                Err(_) => return self.drop(from, DropReason::CslipTossed, f.offered_len),
            },
        };
        if sink(to, &out, f.arrival_ns) {
            self.dirs[from].counters.delivered.add(out.len());
        } else {
            self.drop(from, DropReason::WriteFailed, f.offered_len);
        }
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

    /// The earliest thing due: (time, direction, what).
    fn next_due(&self) -> Option<(u64, usize, Due)> {
        let mut best: Option<(u64, usize, Due)> = None;
        for (from, dir) in self.dirs.iter().enumerate() {
            let candidates = [
                dir.in_flight.front().map(|f| (f.arrival_ns, Due::Arrival)),
                dir.tx_done_ns.map(|t| (t, Due::TxDone)),
                dir.impair.shaped_until.map(|t| (t, Due::Shaper)),
            ];
            for (at, due) in candidates.into_iter().flatten() {
                if best.is_none_or(|(b, _, _)| at < b) {
                    best = Some((at, from, due));
                }
            }
        }
        best
    }
}
