//! Point-to-point lines (Ethernet and serial) in the world: each `link::line::Line` driven
//! by engine events in their places (reservations for arrivals, a lazy end of sending),
//! and a node's frame sent out of a port onto whichever link it is attached to.

use super::*;
use qoslab_plan::{name_of, Clocking, SerialFraming};

/// A line of the world: the link model, and what the engine keeps of it.
pub(super) struct LineSlot {
    /// The line; each frame in flight tagged with its `EthArrive`'s place in the event
    /// order. Only the first frame in flight has its `EthArrive` in the engine's heap, and
    /// each arrival schedules the next one's in the place it reserved (see `engine`'s
    /// Reservations), so the events run exactly as if each frame had its own.
    pub(super) line: Line<Reservation>,
    /// Per direction, whether the end of a frame's sending may be left out of the
    /// engine while nothing waits behind it: an `EthTxDone` with an empty queue only
    /// frees the serializer, unless a shaper holds the next frame or the sending node
    /// has a saturating source to refill (see `World::lazy_tx_done`).
    pub(super) lazy_tx_done: [bool; 2],
    /// Per direction, the place of the `EthTxDone` of the frame being sent when it was
    /// left out of the engine (see `World::settle_tx_done`).
    pub(super) tx_done: [Option<Reservation>; 2],
}

impl LineSlot {
    pub(super) fn new(line: Line<Reservation>) -> LineSlot {
        LineSlot { line, lazy_tx_done: [false; 2], tx_done: [None; 2] }
    }
}

impl World {
    /// The serializer of `link` at end `from` finished a frame: the next one starts, and
    /// a saturating source at the sender is refilled.
    pub(super) fn line_tx_done(&mut self, now: u64, link: u32, from: u8) -> Result<(), RunError> {
        let l = &mut self.links[link as usize];
        l.line.finish(from as usize);
        let node = l.line.ends()[from as usize].0;
        // A direction whose EthTxDone may be left out has no saturating source
        // at its sender (see `LineSlot::lazy_tx_done`): nothing to refill.
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
        let line = &mut self.links[link as usize].line;
        let arrival = line.arrive(from as usize);
        if let Some(next) = line.next_arrival(from as usize) {
            self.engine.schedule_reserved(next, Event::EthArrive { link, from });
        }
        let (node, port) = line.ends()[1 - from as usize];
        let lost = matches!(arrival, LineArrival::Lost { .. });
        if let Some(u) = self.adaptive_routers.iter_mut().find(|u| u.modem_link == link && u.modem_end == from) {
            u.modem_outcome(now, !lost);
        }
        match arrival {
            LineArrival::Delivered(frame) => self.receive(now, node, port, frame)?,
            LineArrival::Lost { reason, packet } => self.record_drop(now, node, Some(port), reason, packet.as_deref()),
            LineArrival::Refused(reason) => self.record_drop(now, node, Some(port), reason.to_string(), None),
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
        let offer = match self.attachments[node as usize][port as usize] {
            Attachment::Ethernet { link, end } => {
                match self.links[link as usize].line.offer(now, end as usize, frame) {
                    Offer::Accepted => return self.line_queued(now, node, port, link, end),
                    refused => refused,
                }
            }
            Attachment::Wifi { bss, member } => {
                let cell = &mut self.bsses[bss as usize].cell;
                let offer = if priority {
                    cell.offer_priority(now, member as usize, frame)
                } else {
                    cell.offer(now, member as usize, frame)
                };
                if offer == Offer::Accepted {
                    return self.arm_bss_timer(bss);
                }
                offer
            }
            Attachment::Atm { ep } => return self.atm_transmit(now, node, ep, frame),
            Attachment::Unattached | Attachment::AtmSwitch => {
                self.record_drop(now, node, Some(port), "port is not attached to any link".into(), None);
                return Ok(());
            }
        };
        if let Offer::Dropped { reason, frame } = offer {
            self.record_drop(now, node, Some(port), reason, frame.get(ethernet::HEADER_LEN..));
        }
        Ok(())
    }

    /// A frame was queued at end `end` of line `link`: counted against the budget, and
    /// sent if the serializer is free.
    fn line_queued(&mut self, now: u64, node: u32, port: u16, link: u32, end: u8) -> Result<(), RunError> {
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

    /// Starts sending the next frame waiting at end `from` of `link`, if the serializer
    /// is free. Many calls find it busy or nothing waiting: that is answered inline.
    #[inline(always)]
    pub(super) fn start_tx(&mut self, now: u64, link: u32, from: u8) -> Result<(), RunError> {
        let l = &self.links[link as usize].line;
        // Nothing to start while a frame is being sent or when none waits.
        if l.busy(from as usize) {
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
        match l.line.gate(now, from as usize, len) {
            Gate::Go => {}
            Gate::Waiting => return Ok(()),
            Gate::HoldUntil(t) => {
                self.engine.schedule_at(SimTime::from_nanos(t), Event::EthTxDone { link, from }).map_err(budget)?;
                return Ok(());
            }
            Gate::TooLong { reason, packet } => {
                let (node, port) = l.line.ends()[from as usize];
                self.queued_frames -= 1;
                self.record_drop(now, node, Some(port), reason, packet.as_deref());
                return Ok(());
            }
        }
        let Some((frame, wire_ns, last_bit_ns)) = l.line.start_next(now, from as usize) else { return Ok(()) };
        self.queued_frames -= 1;
        let done = SimTime::from_nanos(now + wire_ns);
        if l.lazy_tx_done[from as usize] && l.line.peek_len(from as usize).is_none() {
            // Nothing waits behind this frame: its EthTxDone keeps its place in the
            // order but enters the engine only if a frame is queued before then.
            l.tx_done[from as usize] = Some(self.engine.reserve_at(done).map_err(budget)?);
        } else {
            self.engine.schedule_at(done, Event::EthTxDone { link, from }).map_err(budget)?;
        }
        let arrive_ns = l.line.arrival_ns(from as usize, now + last_bit_ns);
        let arrival = self.engine.reserve_at(SimTime::from_nanos(arrive_ns)).map_err(budget)?;
        if self.links[link as usize].line.launch(from as usize, arrival, arrive_ns, frame) {
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
                l.line.finish(from as usize);
            } else {
                self.engine.schedule_reserved(done, Event::EthTxDone { link, from });
            }
        }
    }
}

/// The point-to-point line of the plan's link number `index` (Ethernet or serial) in a
/// run of `seed`: the kind's serializer and queue, and per direction the impairments,
/// their loss streams the link's own (so the same frames, by order, are lost wherever
/// the line runs); `None` for an 802.11 cell or an ATM link, which are not lines. The
/// one constructor of a line from the plan: the world builds its lines with it, and the
/// real-time emulator (crates/emu) the line it drives through the `Link` trait.
pub fn line_of_plan<T: Copy>(link: &LinkConfig, seed: u64, index: usize) -> Result<Option<Line<T>>, RunError> {
    let impairments = |impair: &[Impairment; 2], jitter_ns: u64| -> Result<[DirectionImpairment; 2], RunError> {
        Ok([
            direction_impairment(&impair[0], jitter_ns, seed, index, 0, &format!("links[{index}].impair[0]"))?,
            direction_impairment(&impair[1], jitter_ns, seed, index, 1, &format!("links[{index}].impair[1]"))?,
        ])
    };
    let (kind, impair) = match link {
        LinkConfig::Ethernet { name, a, b, rate_bps, delay_ns, jitter_ns, queue_frames, queue_bytes, impair } => {
            // The plan's own check refuses it first in a simulation (`SimConfig::check`);
            // said here too for a driver that takes one link of a plan.
            if *rate_bps == 0 {
                let field = format!("links[{index}].rate_bps");
                return Err(RunError::Config(ConfigError { field, message: "a link's rate must be positive".into() }));
            }
            let ethernet = EthernetLink {
                name: name.clone(),
                ends: [(a.node, a.port), (b.node, b.port)],
                rate_bps: *rate_bps,
                delay_ns: *delay_ns,
                queue_frames: *queue_frames,
                queue_bytes: *queue_bytes,
                dirs: Default::default(),
            };
            (LineKind::Ethernet(ethernet), impairments(impair, *jitter_ns)?)
        }
        LinkConfig::Serial {
            name,
            a,
            b,
            rate_bps,
            format,
            framing,
            clocking,
            acfc,
            pfc,
            fcs_bits,
            compression,
            delay_ns,
            jitter_ns,
            queue_frames,
            impair,
        } => {
            let ppp = SerialPpp { clocking: *clocking, acfc: *acfc, pfc: *pfc, fcs_bits: *fcs_bits };
            let line = serial_line(index, *rate_bps, format, *framing, ppp, *compression, *delay_ns, *queue_frames)?;
            let ends = [(a.node, a.port), (b.node, b.port)];
            (LineKind::Serial { name: name.clone(), ends, line }, impairments(impair, *jitter_ns)?)
        }
        LinkConfig::Wifi(_) | LinkConfig::Atm(_) => return Ok(None),
    };
    Ok(Some(Line::new(kind, impair)))
}

/// One direction's impairments from the plan's `Impairment`: the loss model with the
/// link's own stream (`RunSeed(seed).stream(link, "loss a->b" or "loss b->a")`), and the
/// shaper or policer, and the link's jitter with its own stream
/// (`stream(link, "jitter a->b" or "jitter b->a")`); a refusal names `field`.
fn direction_impairment(
    config: &Impairment,
    jitter_ns: u64,
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
        jitter_ns,
        jitter_rng: RunSeed(seed).stream(link as u64, if direction == 0 { "jitter a->b" } else { "jitter b->a" }),
    })
}

/// The report of a point-to-point line.
pub(super) fn line_result(slot: &LineSlot) -> crate::results::LinkResult {
    let line = &slot.line;
    let sent = line.busy_ns_and_frames();
    crate::results::LinkResult {
        name: line.name().to_string(),
        kind: line.kind(),
        utilization: sent.iter().map(|&(busy_ns, _)| busy_ns as f64).collect(),
        frames: sent.iter().map(|&(_, frames)| frames).collect(),
        drops: line.drops(),
        members: Vec::new(),
        conservation: Vec::new(),
    }
}

/// A serial line's clocking and PPP options, as the configuration gives them.
struct SerialPpp {
    clocking: Clocking,
    acfc: bool,
    pfc: bool,
    fcs_bits: u32,
}

/// A serial line from its configuration, refusing what it cannot be with the field named.
#[allow(clippy::too_many_arguments)]
fn serial_line(
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
