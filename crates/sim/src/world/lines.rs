//! Point-to-point lines (Ethernet and serial) in the world: per direction a queue, a serializer,
//! the impairments, and the frames in flight; sending a node's frame out of a port.

use super::*;
use qoslab_plan::{name_of, Clocking, SerialFraming};

/// A point-to-point link of the world: Ethernet or a serial line.
pub(super) enum LineKind {
    Ethernet(EthernetLink),
    /// A serial line carries IP datagrams: the world strips the Ethernet header the
    /// node's stack wrote and puts one back at the far end.
    Serial {
        name: String,
        ends: [(u32, u16); 2],
        line: SerialLine,
    },
}

/// What happens to one direction's frames besides being carried. Public so that a
/// real-time driver of the same line models (crates/emu) builds it as the world does.
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
}

pub(super) struct Line {
    pub(super) kind: LineKind,
    pub(super) impair: [DirectionImpairment; 2],
    /// Per direction, the frames sent and not yet arrived (serializing or propagating)
    /// in the order they arrive, each with its arrival's place in the event order. The delay
    /// is constant and a direction sends one frame at a time, so frames arrive in the
    /// order they were sent: only the first has its `EthArrive` in the engine's heap,
    /// and each arrival schedules the next one's in the place it reserved (see
    /// `engine`'s Reservations), so the events run exactly as if each frame had its own.
    pub(super) in_flight: [VecDeque<(Reservation, Vec<u8>)>; 2],
    /// Per direction, whether the end of a frame's sending may be left out of the
    /// engine while nothing waits behind it: an `EthTxDone` with an empty queue only
    /// frees the serializer, unless a shaper holds the next frame or the sending node
    /// has a saturating source to refill (see `World::lazy_tx_done`).
    pub(super) lazy_tx_done: [bool; 2],
    /// Per direction, the place of the `EthTxDone` of the frame being sent when it was
    /// left out of the engine (see `World::settle_tx_done`).
    pub(super) tx_done: [Option<Reservation>; 2],
    /// Per direction, frames offered, delivered and dropped (see `crate::conservation`).
    pub(super) tally: [LineTally; 2],
}

impl Line {
    /// A line with nothing sent yet.
    pub(super) fn new(kind: LineKind, impair: [DirectionImpairment; 2]) -> Line {
        Line {
            kind,
            impair,
            in_flight: Default::default(),
            lazy_tx_done: [false; 2],
            tx_done: [None; 2],
            tally: Default::default(),
        }
    }

    pub(super) fn name(&self) -> &str {
        match &self.kind {
            LineKind::Ethernet(l) => &l.name,
            LineKind::Serial { name, .. } => name,
        }
    }

    #[inline]
    pub(super) fn ends(&self) -> [(u32, u16); 2] {
        match &self.kind {
            LineKind::Ethernet(l) => l.ends,
            LineKind::Serial { ends, .. } => *ends,
        }
    }

    #[inline]
    pub(super) fn delay_ns(&self) -> u64 {
        match &self.kind {
            LineKind::Ethernet(l) => l.delay_ns,
            LineKind::Serial { line, .. } => line.config().delay_ns,
        }
    }

    /// The bytes of `frame` this line carries and meters: the Ethernet frame without
    /// FCS, or a serial line's IP datagram.
    #[inline]
    pub(super) fn carried_len(&self, frame: &[u8]) -> usize {
        match &self.kind {
            LineKind::Ethernet(_) => frame.len(),
            LineKind::Serial { .. } => frame.len().saturating_sub(ethernet::HEADER_LEN),
        }
    }

    #[inline]
    pub(super) fn queued_bytes(&self, from: usize) -> usize {
        match &self.kind {
            LineKind::Ethernet(l) => l.queued_bytes(from),
            LineKind::Serial { line, .. } => line.queued_bytes(from),
        }
    }

    /// Why the policer or the shaper's queue limit refuses `frame` at end `from`, if it does.
    #[inline]
    pub(super) fn meter(&mut self, now: u64, from: usize, frame: &[u8]) -> Option<String> {
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
                    "policed: over {} bit/s with a {}-byte bucket",
                    policer.rate_bps(),
                    policer.burst_bytes()
                ));
            }
        }
        match impair.shaper_queue_bytes {
            Some(limit) if impair.shaper.is_some() && (backlog + len) as u64 > limit => {
                Some(format!("shaper queue full ({limit} bytes waiting for tokens)"))
            }
            _ => None,
        }
    }

    #[inline]
    pub(super) fn enqueue(&mut self, from: usize, frame: Vec<u8>) -> Result<(), Vec<u8>> {
        match &mut self.kind {
            LineKind::Ethernet(l) => l.enqueue(from, frame),
            LineKind::Serial { line, .. } => {
                let packet = frame.get(ethernet::HEADER_LEN..).unwrap_or_default().to_vec();
                line.enqueue(from, packet).map_err(|_| frame)
            }
        }
    }

    #[inline]
    pub(super) fn peek_len(&self, from: usize) -> Option<usize> {
        match &self.kind {
            LineKind::Ethernet(l) => l.peek_len(from),
            LineKind::Serial { line, .. } => line.peek_len(from),
        }
    }

    /// The next frame to send at `from`, the time the sender stays busy with it, and
    /// the time until its last bit is out (Ethernet's inter-frame gap comes after).
    #[inline(always)]
    pub(super) fn start_next(&mut self, from: usize) -> Option<(Vec<u8>, u64, u64)> {
        match &mut self.kind {
            LineKind::Ethernet(l) => {
                let rate = l.rate_bps;
                l.start_next(from).map(|(frame, busy)| {
                    let last_bit = crate::link::ethernet::ethernet_last_bit_ns(frame.len(), rate);
                    (frame, busy, last_bit)
                })
            }
            LineKind::Serial { line, .. } => line.start_next(from).map(|(frame, busy)| (frame, busy, busy)),
        }
    }

    #[inline]
    pub(super) fn finish(&mut self, from: usize) {
        match &mut self.kind {
            LineKind::Ethernet(l) => l.finish(from),
            LineKind::Serial { line, .. } => line.finish(from),
        }
    }

    pub(super) fn backlog(&self, from: usize) -> usize {
        match &self.kind {
            LineKind::Ethernet(l) => l.backlog(from),
            LineKind::Serial { line, .. } => line.backlog(from),
        }
    }

    /// What crossed the line from end `from`, as the receiving node's stack takes it
    /// (a CSLIP packet decompressed), or why nothing is delivered.
    pub(super) fn delivered(&mut self, from: usize, frame: Vec<u8>) -> Result<Vec<u8>, &'static str> {
        match &mut self.kind {
            LineKind::Ethernet(_) => Ok(frame),
            LineKind::Serial { line, .. } => {
                let datagram = line.arrive(from, frame)?;
                Ok(crate::node::ip::ethernet_frame(
                    Mac::default(),
                    Mac::BROADCAST,
                    ethernet::EtherType::Ipv4,
                    &datagram,
                ))
            }
        }
    }

    /// What end `from` sent was lost on the line.
    pub(super) fn lost(&mut self, from: usize) {
        if let LineKind::Serial { line, .. } = &mut self.kind {
            line.lost(from);
        }
    }
}

/// A serial line's clocking and PPP options, as the configuration gives them.
pub struct SerialPpp {
    pub clocking: Clocking,
    pub acfc: bool,
    pub pfc: bool,
    pub fcs_bits: u32,
}

impl World {
    /// The serializer of `link` at end `from` finished a frame: the next one starts, and
    /// a saturating source at the sender is refilled.
    pub(super) fn line_tx_done(&mut self, now: u64, link: u32, from: u8) -> Result<(), RunError> {
        let l = &mut self.links[link as usize];
        l.finish(from as usize);
        let node = l.ends()[from as usize].0;
        // A direction whose EthTxDone may be left out has no saturating source
        // at its sender (see `Line::lazy_tx_done`): nothing to refill.
        let refill = !l.lazy_tx_done[from as usize];
        self.start_tx(now, link, from)?;
        if refill {
            self.refill_saturating(now, node)?;
        }
        Ok(())
    }

    /// The first frame in flight on `link` from end `from` reached the far end: lost by
    /// the direction's loss model, or received by the node there.
    pub(super) fn line_arrive(&mut self, now: u64, link: u32, from: u8) -> Result<(), RunError> {
        let l = &mut self.links[link as usize];
        let in_flight = &mut l.in_flight[from as usize];
        let (_, frame) = in_flight.pop_front().expect("a frame in flight");
        if let Some(&(next, _)) = in_flight.front() {
            self.engine.schedule_reserved(next, Event::EthArrive { link, from });
        }
        let (node, port) = l.ends()[1 - from as usize];
        let impair = &mut l.impair[from as usize];
        let lost = impair.loss.drop(&mut impair.rng);
        if let Some(u) = self.adaptive_routers.iter_mut().find(|u| u.modem_link == link && u.modem_end == from) {
            u.modem_outcome(now, !lost);
        }
        let l = &mut self.links[link as usize];
        let impair = &mut l.impair[from as usize];
        if lost {
            impair.lost += 1;
            l.tally[from as usize].dropped += 1;
            let reason = format!("lost on link {} ({})", l.name(), l.impair[from as usize].loss_text);
            let summary = if matches!(l.kind, LineKind::Serial { .. }) {
                Some(frame)
            } else {
                frame.get(ethernet::HEADER_LEN..).map(<[u8]>::to_vec)
            };
            l.lost(from as usize);
            self.record_drop(now, node, Some(port), reason, summary.as_deref());
            return Ok(());
        }
        match l.delivered(from as usize, frame) {
            Ok(frame) => {
                l.tally[from as usize].delivered += 1;
                self.receive(now, node, port, frame)?
            }
            Err(reason) => {
                l.tally[from as usize].dropped += 1;
                self.record_drop(now, node, Some(port), reason.to_string(), None)
            }
        }
        Ok(())
    }

    /// A frame leaves a node's port onto its link.
    pub(super) fn transmit_port(
        &mut self,
        now: u64,
        node: u32,
        port: u16,
        frame: Vec<u8>,
        priority: bool,
    ) -> Result<(), RunError> {
        if let Some(c) = self.capture.as_mut() {
            c.port(node, port, now, &frame).map_err(RunError::Capture)?;
        }
        match self.attachments[node as usize][port as usize] {
            Attachment::Ethernet { link, end } => {
                let tally = &mut self.links[link as usize].tally[end as usize];
                tally.offered += 1;
                if let Some(reason) = self.links[link as usize].meter(now, end as usize, &frame) {
                    self.links[link as usize].tally[end as usize].dropped += 1;
                    self.record_drop(now, node, Some(port), reason, frame.get(14..));
                    return Ok(());
                }
                if let Err(frame) = self.links[link as usize].enqueue(end as usize, frame) {
                    self.links[link as usize].tally[end as usize].dropped += 1;
                    self.record_drop(now, node, Some(port), "output queue full (drop-tail)".into(), frame.get(14..));
                    return Ok(());
                }
                self.queued_frames += 1;
                self.settle_tx_done(link, end);
                if self.queued_frames > self.config.budget.max_queued_frames {
                    return Err(RunError::Budget(format!(
                        "frames queued in the network exceeded {} (the output queue of {} port {} grew without bound)",
                        self.config.budget.max_queued_frames,
                        self.nodes[node as usize].name,
                        self.nodes[node as usize].port_name(port)
                    )));
                }
                self.start_tx(now, link, end)
            }
            Attachment::Wifi { bss, member } => self.transmit_wifi(now, node, port, (bss, member), frame, priority),
            Attachment::Atm { ep } => self.atm_transmit(now, node, ep, frame),
            Attachment::Unattached | Attachment::AtmSwitch => {
                self.record_drop(now, node, Some(port), "port is not attached to any link".into(), None);
                Ok(())
            }
        }
    }

    /// Starts sending the next frame waiting at end `from` of `link`, if the serializer
    /// is free. Many calls find it busy or nothing waiting: that is answered inline.
    #[inline(always)]
    pub(super) fn start_tx(&mut self, now: u64, link: u32, from: u8) -> Result<(), RunError> {
        let l = &self.links[link as usize];
        // Nothing to start while a frame is being sent or when none waits.
        if is_busy(l, from as usize) {
            return Ok(());
        }
        match l.peek_len(from as usize) {
            None => Ok(()),
            Some(len) => self.start_tx_len(now, link, from, len),
        }
    }

    /// [`start_tx`](Self::start_tx) once a frame of `len` octets waits at a free end.
    #[inline(never)]
    pub(super) fn start_tx_len(&mut self, now: u64, link: u32, from: u8, len: usize) -> Result<(), RunError> {
        let l = &mut self.links[link as usize];
        // A shaper holds the next frame until its tokens are there (RFC 2697 bucket).
        {
            let impair = &mut l.impair[from as usize];
            if let Some(shaper) = impair.shaper.as_mut() {
                match impair.shaped_until {
                    Some(t) if t > now => return Ok(()),
                    Some(_) => impair.shaped_until = None,
                    None => match shaper.departure(SimTime::from_nanos(now), len) {
                        Some(t) if t.as_nanos() > now => {
                            impair.shaped_until = Some(t.as_nanos());
                            self.engine.schedule_at(t, Event::EthTxDone { link, from }).map_err(budget)?;
                            return Ok(());
                        }
                        Some(_) => {}
                        None => {
                            let name = l.name().to_string();
                            let (node, port) = l.ends()[from as usize];
                            if let Some((frame, _, _)) = l.start_next(from as usize) {
                                l.finish(from as usize);
                                l.tally[from as usize].dropped += 1;
                                self.queued_frames -= 1;
                                self.record_drop(
                                    now,
                                    node,
                                    Some(port),
                                    format!("frame longer than the shaper's bucket on link {name}"),
                                    frame.get(ethernet::HEADER_LEN..),
                                );
                            }
                            return Ok(());
                        }
                    },
                }
            }
        }
        let l = &mut self.links[link as usize];
        let Some((frame, wire_ns, last_bit_ns)) = l.start_next(from as usize) else { return Ok(()) };
        self.queued_frames -= 1;
        let delay = l.delay_ns();
        let done = SimTime::from_nanos(now + wire_ns);
        if l.lazy_tx_done[from as usize] && l.peek_len(from as usize).is_none() {
            // Nothing waits behind this frame: its EthTxDone keeps its place in the
            // order but enters the engine only if a frame is queued before then.
            l.tx_done[from as usize] = Some(self.engine.reserve_at(done).map_err(budget)?);
        } else {
            self.engine.schedule_at(done, Event::EthTxDone { link, from }).map_err(budget)?;
        }
        let arrival = self.engine.reserve_at(SimTime::from_nanos(now + last_bit_ns + delay)).map_err(budget)?;
        let in_flight = &mut self.links[link as usize].in_flight[from as usize];
        // The delay is the line's own and constant, and this frame started after the
        // last one ended: it arrives after every frame in flight (the FIFO is sound).
        assert!(in_flight.back().is_none_or(|&(last, _)| last < arrival), "frames in flight arrive in order");
        let first = in_flight.is_empty();
        in_flight.push_back((arrival, frame));
        if first {
            self.engine.schedule_reserved(arrival, Event::EthArrive { link, from });
        }
        Ok(())
    }

    /// A frame was queued at end `from` of `link`: the `EthTxDone` left out of the
    /// engine for the frame being sent (see `start_tx`) has either passed — it would have
    /// found the queue empty and only freed the serializer, which is done now — or is
    /// still to come, and is scheduled in its place to start the queued frame. Either
    /// way the run is the same as if it had been scheduled when the frame started; only
    /// the events counter no longer counts the ones that were never needed.
    pub(super) fn settle_tx_done(&mut self, link: u32, from: u8) {
        let l = &mut self.links[link as usize];
        if let Some(done) = l.tx_done[from as usize].take() {
            if self.engine.has_passed(done) {
                self.engine.forget(done);
                l.finish(from as usize);
            } else {
                self.engine.schedule_reserved(done, Event::EthTxDone { link, from });
            }
        }
    }
}

/// One direction's impairments from the plan's `Impairment`: the loss model with the
/// link's own stream (`RunSeed(seed).stream(link, "loss a->b" or "loss b->a")`), and the
/// shaper or policer; a refusal names `field`.
pub fn direction_impairment(
    config: &Impairment,
    seed: u64,
    link: usize,
    direction: usize,
    field: &str,
) -> Result<DirectionImpairment, RunError> {
    let fail = |message: String| RunError::Config(ConfigError { field: field.to_string(), message });
    let (loss, loss_text) = match config.loss {
        None => (LossModel::None, String::new()),
        Some(LossConfig::Bernoulli { p }) => (
            LossModel::Bernoulli(Bernoulli::new(p).map_err(|e| fail(e.to_string()))?),
            format!("Bernoulli loss p = {p}"),
        ),
        Some(LossConfig::GilbertElliott { p, r, k, h }) => (
            LossModel::GilbertElliott(GilbertElliott::new(p, r, k, h).map_err(|e| fail(e.to_string()))?),
            format!("Gilbert-Elliott loss p = {p}, r = {r}, k = {k}, h = {h}"),
        ),
    };
    let (mut shaper, mut policer, mut shaper_queue_bytes) = (None, None, None);
    if let Some(s) = config.shaper {
        if s.police {
            if s.queue_bytes.is_some() {
                return Err(fail("a policer holds no queue (queue_bytes is for shaping)".into()));
            }
            policer = Some(Policer::new(s.rate_bps, s.burst_bytes).map_err(|e| fail(e.to_string()))?);
        } else {
            shaper = Some(Shaper::new(s.rate_bps, s.burst_bytes).map_err(|e| fail(e.to_string()))?);
            shaper_queue_bytes = s.queue_bytes;
        }
    }
    let purpose = if direction == 0 { "loss a->b" } else { "loss b->a" };
    Ok(DirectionImpairment {
        loss,
        loss_text,
        rng: RunSeed(seed).stream(link as u64, purpose),
        shaper,
        shaper_queue_bytes,
        shaped_until: None,
        policer,
        lost: 0,
    })
}

/// The report of a point-to-point line.
pub(super) fn line_result(line: &Line) -> crate::results::LinkResult {
    let lost: u64 = line.impair.iter().map(|d| d.lost).sum();
    match &line.kind {
        LineKind::Ethernet(l) => crate::results::LinkResult {
            name: l.name.clone(),
            kind: "ethernet",
            utilization: l.dirs.iter().map(|d| d.busy_ns as f64).collect(),
            frames: l.dirs.iter().map(|d| d.frames_sent).collect(),
            drops: l.dirs.iter().map(|d| d.drops).sum::<u64>() + lost,
            members: Vec::new(),
            conservation: Vec::new(),
        },
        LineKind::Serial { name, line, .. } => crate::results::LinkResult {
            name: name.clone(),
            kind: "serial",
            utilization: line.dirs.iter().map(|d| d.busy_ns as f64).collect(),
            frames: line.dirs.iter().map(|d| d.frames_sent).collect(),
            drops: line.dirs.iter().map(|d| d.drops).sum::<u64>() + lost,
            members: Vec::new(),
            conservation: Vec::new(),
        },
    }
}

/// Whether the serializer of `from` is sending a frame.
pub(super) fn is_busy(line: &Line, from: usize) -> bool {
    match &line.kind {
        LineKind::Ethernet(l) => l.dirs[from].busy,
        LineKind::Serial { line, .. } => line.dirs[from].busy,
    }
}

/// A serial line from its configuration, refusing what it cannot be with the field named.
#[allow(clippy::too_many_arguments)]
pub fn serial_line(
    index: usize,
    rate_bps: u64,
    format: &str,
    framing: SerialFraming,
    ppp: SerialPpp,
    compression: f64,
    delay_ns: u64,
    queue_frames: usize,
) -> Result<SerialLine, RunError> {
    let fail = |field: &str, message: String| {
        RunError::Config(ConfigError { field: format!("links[{index}].{field}"), message })
    };
    let mut config = SerialConfig::new(rate_bps);
    config.format = format.parse().map_err(|_| fail("format", format!("not a character format: {format:?}")))?;
    config.framing = match framing {
        SerialFraming::Slip => Framing::Slip(wire::slip::Framing { leading_end: true }),
        SerialFraming::Cslip => Framing::cslip_default(),
        SerialFraming::Ppp => Framing::ppp_default(),
    };
    let fcs = match ppp.fcs_bits {
        16 => wire::hdlc::Fcs::Fcs16,
        32 => wire::hdlc::Fcs::Fcs32,
        other => return Err(fail("fcs_bits", format!("expected 16 or 32 (RFC 1662 Appendix C), found {other}"))),
    };
    if framing != SerialFraming::Ppp && (ppp.acfc || ppp.pfc || ppp.fcs_bits != 16) {
        return Err(fail(
            "framing",
            format!("ACFC, PFC and the FCS length are PPP options, but the framing is {:?}", name_of(&framing)),
        ));
    }
    if let Framing::Ppp { hdlc, pfc } = &mut config.framing {
        hdlc.acfc = ppp.acfc;
        hdlc.fcs = fcs;
        *pfc = ppp.pfc;
    }
    match ppp.clocking {
        Clocking::Async => {}
        Clocking::Sync => match config.framing {
            Framing::Ppp { hdlc, pfc } => config.framing = Framing::PppSync { hdlc, pfc },
            _ => {
                return Err(fail(
                    "clocking",
                    format!(
                        "a synchronous line carries PPP in bit-synchronous HDLC framing (RFC 1662 §5), not {:?}",
                        name_of(&framing)
                    ),
                ))
            }
        },
    }
    // The ratio as a fraction over 1000 (2.0 → 2000/1000).
    let num = (compression * 1000.0).round() as u32;
    config.compression = CompressionRatio::new(num, 1000).map_err(|e| fail("compression", e.to_string()))?;
    config.delay_ns = delay_ns;
    config.queue_frames = queue_frames;
    SerialLine::new(config).map_err(|e| {
        let field = if matches!(e, SerialError::SyncCompression) { "compression" } else { "rate_bps" };
        fail(field, e.to_string())
    })
}
