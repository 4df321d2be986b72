//! A point-to-point line (Ethernet or serial): per direction the sending end's queue and
//! serializer (the kind's model, [`LineKind`]), the impairments ([`DirectionImpairment`]:
//! loss, jitter, a policer or a shaper, as `tc` applies them), and the frames on their way
//! to the far end. Sans-IO: it implements [`Link`]; the simulator's world drives it by its
//! steps ([`Line::offer_frame`], [`Line::gate`], [`Line::start_next`], [`Line::launch`],
//! [`Line::finish`], [`Line::arrive`]), each one engine event in its place.
//!
//! Every frame in flight carries a tag of the driver's (`T`): the simulator keeps there
//! the place its arrival event has in the engine's order; a driver with no engine keeps
//! `()`.

use std::collections::VecDeque;

use wire::ethernet::{self, Address as Mac, EtherType};

use super::ethernet::{ethernet_last_bit_ns, EthernetLink};
use super::impair::{LossModel, Policer, Shaper};
use super::serial::SerialLine;
use super::{Link, LinkConservation, LinkEvent, Offer, PortRef};
use crate::conservation::LineTally;
use crate::time::SimTime;

/// How the reasons a line gives for its drops begin (the drop log's words): a driver that
/// counts drops by reason (crates/emu) tells them apart by these, not by a copy of them.
pub mod reason {
    /// The policer found too few tokens (RFC 2697 colour-blind, red dropped).
    pub const POLICED: &str = "policed";
    /// The shaper's backlog would exceed its `queue_bytes` (`tc tbf limit`).
    pub const SHAPER_QUEUE_FULL: &str = "shaper queue full";
    /// The direction's queue is full (drop-tail).
    pub const QUEUE_FULL: &str = "output queue full (drop-tail)";
    /// Longer than the shaper's bucket: it never conforms.
    pub const SHAPER_OVERSIZE: &str = "frame longer than the shaper's bucket";
    /// The direction's loss model lost it on the way.
    pub const LOST: &str = "lost on link";
}

/// The kind of a point-to-point line.
pub enum LineKind {
    Ethernet(EthernetLink),
    /// A serial line carries IP datagrams: the line strips the Ethernet header the
    /// node's stack wrote and puts one back at the far end.
    Serial {
        name: String,
        ends: [PortRef; 2],
        line: SerialLine,
    },
}

/// What happens to one direction's frames besides being carried.
pub struct DirectionImpairment {
    pub loss: LossModel,
    pub loss_text: String,
    pub rng: crate::rng::RandomStream,
    pub shaper: Option<Shaper>,
    /// Bytes that may wait for the shaper's tokens (`tc tbf limit`), if limited.
    pub shaper_queue_bytes: Option<u64>,
    /// The next frame has been granted its shaper departure at this time.
    pub shaped_until: Option<u64>,
    pub policer: Option<Policer>,
    pub lost: u64,
    /// Jitter, ns: each frame's propagation delay is the line's delay plus U, U uniform
    /// in [0, jitter_ns] (integer ns), drawn from `jitter_rng`; 0 draws nothing.
    pub jitter_ns: u64,
    /// The direction's jitter stream, its own and not the loss model's: setting a
    /// jitter does not change which frames are lost.
    pub jitter_rng: crate::rng::RandomStream,
}

/// A point-to-point line between two ports; see the module doc.
pub struct Line<T> {
    pub kind: LineKind,
    pub impair: [DirectionImpairment; 2],
    /// Per direction, the frames sent and not yet arrived (serializing or propagating),
    /// in the order they arrive: (the driver's tag, arrival ns, frame). A direction
    /// sends one frame at a time and no frame arrives before the one sent before it
    /// ([`Line::arrival_ns`]), so frames arrive in the order they were sent.
    in_flight: [VecDeque<(T, u64, Vec<u8>)>; 2],
    /// Per direction, when the last frame sent arrives (or arrived) at the far end.
    last_arrival: [u64; 2],
    /// Per direction, when the serializer is done with the frame it sends (the end of
    /// the inter-frame gap on Ethernet).
    tx_end: [u64; 2],
    /// Per direction, frames offered, delivered and dropped (see `crate::conservation`).
    pub tally: [LineTally; 2],
}

/// What the shaper says about the head frame of a free direction ([`Line::gate`]).
#[derive(Debug, PartialEq, Eq)]
pub enum Gate {
    /// It may go now.
    Go,
    /// It waits for tokens, and the time it may go was given before.
    Waiting,
    /// It waits for tokens until this time (new: the driver wakes the line then).
    HoldUntil(u64),
    /// It is longer than the bucket and can never go: it was taken off the queue and
    /// dropped; the reason and the packet the drop log describes.
    TooLong { reason: String, packet: Option<Vec<u8>> },
}

/// What reached the far end ([`Line::arrive`]).
#[derive(Debug, PartialEq, Eq)]
pub enum Arrival {
    /// The frame, as the receiving node's stack takes it.
    Delivered(Vec<u8>),
    /// Lost by the direction's loss model: the reason and the packet the log describes.
    Lost { reason: String, packet: Option<Vec<u8>> },
    /// Carried, but the receiving end could not take it (a CSLIP packet tossed).
    Refused(&'static str),
}

impl<T: Copy> Line<T> {
    /// The line's name, as the scenario gives it.
    pub fn name(&self) -> &str {
        match &self.kind {
            LineKind::Ethernet(l) => &l.name,
            LineKind::Serial { name, .. } => name,
        }
    }

    /// A line with nothing sent yet.
    pub fn new(kind: LineKind, impair: [DirectionImpairment; 2]) -> Line<T> {
        Line {
            kind,
            impair,
            in_flight: Default::default(),
            last_arrival: [0; 2],
            tx_end: [0; 2],
            tally: Default::default(),
        }
    }

    #[inline]
    pub fn ends(&self) -> [PortRef; 2] {
        match &self.kind {
            LineKind::Ethernet(l) => l.ends,
            LineKind::Serial { ends, .. } => *ends,
        }
    }

    #[inline]
    pub fn delay_ns(&self) -> u64 {
        match &self.kind {
            LineKind::Ethernet(l) => l.delay_ns,
            LineKind::Serial { line, .. } => line.config().delay_ns,
        }
    }

    /// When the frame whose last bit leaves end `from` at `last_bit_ns` reaches the far
    /// end: after the line's delay plus, with a jitter, U uniform in [0, jitter] from the
    /// direction's jitter stream, and never before the frame sent before it. A cable or a
    /// serial line does not reorder its bits, so a frame delayed by jitter holds back the
    /// ones behind it (they arrive at its instant, in order). Linux `tc netem` with `delay
    /// D J` and no `rate` does reorder: its tfifo queue sorts packets by their own send
    /// time, D plus each one's draw (net/sched/sch_netem.c; the netem wiki's "Packet
    /// re-ordering"), which no cable does; with `rate`, netem counts a packet's time from
    /// the one before it, as this model does.
    /// Without jitter it draws nothing and is `last_bit_ns + delay`.
    #[inline]
    pub fn arrival_ns(&mut self, from: usize, last_bit_ns: u64) -> u64 {
        let mut at = last_bit_ns + self.delay_ns();
        let impair = &mut self.impair[from];
        if impair.jitter_ns > 0 {
            at = (at + impair.jitter_rng.uniform_inclusive(impair.jitter_ns)).max(self.last_arrival[from]);
        }
        self.last_arrival[from] = at;
        at
    }

    /// The bytes of `frame` this line carries and meters: the Ethernet frame without
    /// FCS, or a serial line's IP datagram.
    #[inline]
    fn carried_len(&self, frame: &[u8]) -> usize {
        match &self.kind {
            LineKind::Ethernet(_) => frame.len(),
            LineKind::Serial { .. } => frame.len().saturating_sub(ethernet::HEADER_LEN),
        }
    }

    #[inline]
    fn queued_bytes(&self, from: usize) -> usize {
        match &self.kind {
            LineKind::Ethernet(l) => l.queued_bytes(from),
            LineKind::Serial { line, .. } => line.queued_bytes(from),
        }
    }

    /// Why the policer or the shaper's queue limit refuses `frame` at end `from`, if it does.
    #[inline]
    fn meter(&mut self, now: u64, from: usize, frame: &[u8]) -> Option<String> {
        // A direction with no policer and no shaper queue limit (most) refuses nothing:
        // answered before measuring the frame and the backlog.
        let impair = &self.impair[from];
        if impair.policer.is_none() && (impair.shaper.is_none() || impair.shaper_queue_bytes.is_none()) {
            return None;
        }
        let len = self.carried_len(frame);
        let backlog = self.queued_bytes(from);
        let impair = &mut self.impair[from];
        if let Some(policer) = impair.policer.as_mut() {
            if !policer.conform(SimTime::from_nanos(now), len) {
                return Some(format!(
                    "{}: over {} bit/s with a {}-byte bucket",
                    reason::POLICED,
                    policer.rate_bps(),
                    policer.burst_bytes()
                ));
            }
        }
        match impair.shaper_queue_bytes {
            Some(limit) if impair.shaper.is_some() && (backlog + len) as u64 > limit => {
                Some(format!("{} ({limit} bytes waiting for tokens)", reason::SHAPER_QUEUE_FULL))
            }
            _ => None,
        }
    }

    #[inline]
    fn enqueue(&mut self, from: usize, frame: Vec<u8>) -> Result<(), Vec<u8>> {
        match &mut self.kind {
            LineKind::Ethernet(l) => l.enqueue(from, frame),
            LineKind::Serial { line, .. } => {
                let packet = frame.get(ethernet::HEADER_LEN..).unwrap_or_default().to_vec();
                line.enqueue(from, packet).map_err(|_| frame)
            }
        }
    }

    /// `frame` offered at end `from`: counted, metered (policer, shaper queue limit) and
    /// queued, or refused with the reason.
    #[inline]
    pub fn offer_frame(&mut self, now: u64, from: usize, frame: Vec<u8>) -> Offer {
        self.tally[from].offered += 1;
        if let Some(reason) = self.meter(now, from, &frame) {
            self.tally[from].dropped += 1;
            return Offer::Dropped { reason, frame };
        }
        if let Err(frame) = self.enqueue(from, frame) {
            self.tally[from].dropped += 1;
            return Offer::Dropped { reason: reason::QUEUE_FULL.into(), frame };
        }
        Offer::Accepted
    }

    /// The length of the next frame waiting at `from`, if any.
    #[inline]
    pub fn peek_len(&self, from: usize) -> Option<usize> {
        match &self.kind {
            LineKind::Ethernet(l) => l.peek_len(from),
            LineKind::Serial { line, .. } => line.peek_len(from),
        }
    }

    /// Whether the serializer of `from` is sending a frame.
    #[inline]
    pub fn busy(&self, from: usize) -> bool {
        match &self.kind {
            LineKind::Ethernet(l) => l.dirs[from].busy,
            LineKind::Serial { line, .. } => line.dirs[from].busy,
        }
    }

    /// What the shaper of `from` says about the head frame, of `len` octets, at `now`
    /// (RFC 2697 bucket); [`Gate::Go`] without a shaper.
    #[inline]
    pub fn gate(&mut self, now: u64, from: usize, len: usize) -> Gate {
        let impair = &mut self.impair[from];
        let Some(shaper) = impair.shaper.as_mut() else { return Gate::Go };
        match impair.shaped_until {
            Some(t) if t > now => Gate::Waiting,
            Some(_) => {
                impair.shaped_until = None;
                Gate::Go
            }
            None => match shaper.departure(SimTime::from_nanos(now), len) {
                Some(t) if t.as_nanos() > now => {
                    impair.shaped_until = Some(t.as_nanos());
                    Gate::HoldUntil(t.as_nanos())
                }
                Some(_) => Gate::Go,
                None => {
                    let reason = format!("{} on link {}", reason::SHAPER_OVERSIZE, self.name());
                    let Some((frame, _, _)) = self.start_next(now, from) else { return Gate::Waiting };
                    self.finish(from);
                    self.tally[from].dropped += 1;
                    Gate::TooLong { reason, packet: frame.get(ethernet::HEADER_LEN..).map(<[u8]>::to_vec) }
                }
            },
        }
    }

    /// The next frame to send at `from`, the time the sender stays busy with it, and
    /// the time until its last bit is out (Ethernet's inter-frame gap comes after); the
    /// serializer is busy until [`finish`](Self::finish).
    #[inline(always)]
    pub fn start_next(&mut self, now: u64, from: usize) -> Option<(Vec<u8>, u64, u64)> {
        let started = match &mut self.kind {
            LineKind::Ethernet(l) => {
                let rate = l.rate_bps;
                l.start_next(from).map(|(frame, busy)| {
                    let last_bit = ethernet_last_bit_ns(frame.len(), rate);
                    (frame, busy, last_bit)
                })
            }
            LineKind::Serial { line, .. } => line.start_next(from).map(|(frame, busy)| (frame, busy, busy)),
        };
        if let Some((_, busy, _)) = &started {
            self.tx_end[from] = now + busy;
        }
        started
    }

    /// `frame`, started at `from`, is on its way and arrives at `arrive_ns`; `tag` is the
    /// driver's. Whether it is the only frame on its way (the driver wakes the line at
    /// its arrival; the later ones follow it).
    #[inline]
    pub fn launch(&mut self, from: usize, tag: T, arrive_ns: u64, frame: Vec<u8>) -> bool {
        let in_flight = &mut self.in_flight[from];
        // `arrival_ns` puts no frame before the one sent before it: it arrives after
        // every frame in flight (the FIFO is sound).
        assert!(in_flight.back().is_none_or(|&(_, last, _)| last <= arrive_ns), "frames in flight arrive in order");
        in_flight.push_back((tag, arrive_ns, frame));
        in_flight.len() == 1
    }

    /// The tag of the next frame to arrive from `from`, if one is on its way.
    #[inline]
    pub fn next_arrival(&self, from: usize) -> Option<T> {
        self.in_flight[from].front().map(|&(tag, _, _)| tag)
    }

    /// Frames sent from `from` and not yet arrived (serializing or propagating).
    #[inline]
    pub fn in_flight_len(&self, from: usize) -> usize {
        self.in_flight[from].len()
    }

    /// The serializer of `from` is done with its frame.
    #[inline]
    pub fn finish(&mut self, from: usize) {
        match &mut self.kind {
            LineKind::Ethernet(l) => l.finish(from),
            LineKind::Serial { line, .. } => line.finish(from),
        }
    }

    /// The first frame on its way from `from` reaches the far end: lost by the
    /// direction's loss model, or received (a serial line's datagram given its Ethernet
    /// header back, a CSLIP packet decompressed).
    #[inline]
    pub fn arrive(&mut self, from: usize) -> Arrival {
        let (_, _, frame) = self.in_flight[from].pop_front().expect("a frame in flight");
        let impair = &mut self.impair[from];
        if impair.loss.drop(&mut impair.rng) {
            impair.lost += 1;
            self.tally[from].dropped += 1;
            let reason = format!("{} {} ({})", reason::LOST, self.name(), self.impair[from].loss_text);
            let packet = match &mut self.kind {
                LineKind::Serial { line, .. } => {
                    // A CSLIP receiver is told, and tosses until re-synchronised.
                    line.lost(from);
                    Some(frame)
                }
                LineKind::Ethernet(_) => frame.get(ethernet::HEADER_LEN..).map(<[u8]>::to_vec),
            };
            return Arrival::Lost { reason, packet };
        }
        let delivered = match &mut self.kind {
            LineKind::Ethernet(_) => Ok(frame),
            LineKind::Serial { line, .. } => line.arrive(from, frame).map(|datagram| {
                // Sized once for the datagram too: no reallocation when it is appended.
                let mut frame = Vec::with_capacity(ethernet::HEADER_LEN + datagram.len());
                frame.resize(ethernet::HEADER_LEN, 0);
                ethernet::Repr { src_addr: Mac::default(), dst_addr: Mac::BROADCAST, ethertype: EtherType::Ipv4 }
                    .emit(&mut ethernet::Frame::new_unchecked(&mut frame[..]));
                frame.extend_from_slice(&datagram);
                frame
            }),
        };
        match delivered {
            Ok(frame) => {
                self.tally[from].delivered += 1;
                Arrival::Delivered(frame)
            }
            Err(reason) => {
                self.tally[from].dropped += 1;
                Arrival::Refused(reason)
            }
        }
    }

    /// Frames waiting (not yet sent) at `from`, each handed to `each`.
    fn queued(&self, from: usize, each: &mut dyn FnMut(&[u8])) {
        match &self.kind {
            LineKind::Ethernet(l) => l.queued(from).for_each(each),
            LineKind::Serial { line, .. } => line.queued(from).for_each(each),
        }
    }

    /// Time each direction's serializer was busy, ns, and the frames it sent.
    pub fn busy_ns_and_frames(&self) -> [(u64, u64); 2] {
        match &self.kind {
            LineKind::Ethernet(l) => l.dirs.each_ref().map(|d| (d.busy_ns, d.frames_sent)),
            LineKind::Serial { line, .. } => line.dirs.each_ref().map(|d| (d.busy_ns, d.frames_sent)),
        }
    }

    /// One step of a driver with no engine: the serializer of `from` at `now`, done
    /// with its frame if its time is over, starts the next one when the shaper lets it.
    fn poll_sender(&mut self, now: u64, from: usize, out: &mut Vec<LinkEvent>)
    where
        T: Default,
    {
        let node = self.ends()[from].0;
        if self.busy(from) {
            if self.tx_end[from] > now {
                return;
            }
            self.finish(from);
            out.push(LinkEvent::Sent { node });
        }
        let Some(len) = self.peek_len(from) else { return };
        match self.gate(now, from, len) {
            Gate::Go => {}
            Gate::Waiting | Gate::HoldUntil(_) => return,
            Gate::TooLong { reason, packet } => {
                let port = self.ends()[from].1;
                out.push(LinkEvent::dropped((node, Some(port)), reason, packet.clone(), packet));
                return;
            }
        }
        if let Some((frame, _, last_bit_ns)) = self.start_next(now, from) {
            let arrive = self.arrival_ns(from, now + last_bit_ns);
            self.launch(from, T::default(), arrive, frame);
        }
    }
}

impl<T: Copy + Default> Link for Line<T> {
    fn name(&self) -> &str {
        Line::name(self)
    }

    fn kind(&self) -> &'static str {
        match &self.kind {
            LineKind::Ethernet(_) => "ethernet",
            LineKind::Serial { .. } => "serial",
        }
    }

    #[inline]
    fn offer(&mut self, now: u64, from: usize, frame: Vec<u8>) -> Offer {
        self.offer_frame(now, from, frame)
    }

    #[inline]
    fn backlog(&mut self, _now: u64, from: usize) -> usize {
        match &self.kind {
            LineKind::Ethernet(l) => l.backlog(from),
            LineKind::Serial { line, .. } => line.backlog(from),
        }
    }

    fn held(&self, each: &mut dyn FnMut(&[u8])) {
        for from in 0..2 {
            self.queued(from, each);
            for (_, _, frame) in &self.in_flight[from] {
                each(frame);
            }
        }
    }

    fn drops(&self) -> u64 {
        let lost: u64 = self.impair.iter().map(|d| d.lost).sum();
        let refused: u64 = match &self.kind {
            LineKind::Ethernet(l) => l.dirs.iter().map(|d| d.drops).sum(),
            LineKind::Serial { line, .. } => line.dirs.iter().map(|d| d.drops).sum(),
        };
        refused + lost
    }

    fn conservation(&self) -> Vec<LinkConservation> {
        (0..2)
            .map(|from| {
                let t = self.tally[from];
                let mut waiting = 0;
                self.queued(from, &mut |_| waiting += 1);
                LinkConservation {
                    frames_in: t.offered,
                    frames_out: t.delivered,
                    dropped: t.dropped,
                    queued: (waiting + self.in_flight[from].len()) as u64,
                }
            })
            .collect()
    }

    fn poll_at(&self) -> Option<u64> {
        (0..2)
            .filter_map(|from| {
                let sender = if self.busy(from) {
                    Some(self.tx_end[from])
                } else if self.peek_len(from).is_some() {
                    // A frame waits at a free serializer: now, or when the shaper said.
                    Some(self.impair[from].shaped_until.unwrap_or(0))
                } else {
                    None
                };
                let arrival = self.in_flight[from].front().map(|&(_, at, _)| at);
                sender.into_iter().chain(arrival).min()
            })
            .min()
    }

    fn poll(&mut self, now: u64, out: &mut Vec<LinkEvent>) {
        for from in 0..2 {
            while self.in_flight[from].front().is_some_and(|&(_, at, _)| at <= now) {
                let to = self.ends()[1 - from];
                let (node, port) = to;
                match self.arrive(from) {
                    Arrival::Delivered(frame) => out.push(LinkEvent::Delivered { to, frame }),
                    Arrival::Lost { reason, packet } => {
                        out.push(LinkEvent::dropped((node, Some(port)), reason, packet.clone(), packet))
                    }
                    Arrival::Refused(reason) => {
                        out.push(LinkEvent::dropped((node, Some(port)), reason.to_string(), None, None))
                    }
                }
            }
            self.poll_sender(now, from, out);
        }
    }
}
