//! Loss recovery: fast retransmit and recovery (RFC 6582, RFC 6675), PRR (RFC 6937),
//! RACK-TLP (RFC 8985) and the retransmission timeout (RFC 6298).

use super::*;

impl TcpSocket {
    /// Outside recovery, a loss was inferred (DupThresh, IsLost, or RACK): fast
    /// retransmit, or the failure of an MTU probe.
    ///
    /// Whether the loss may start a new recovery depends on the recovery in use, both
    /// rules comparing the cumulative ACK with `recover` (here an exclusive end: the
    /// SND.MAX at which the last recovery or timeout began, one above the RFCs'
    /// "highest sequence number transmitted"):
    /// - SACK (RFC 6675 §5, §5.1): a new recovery may start once "HighACK is greater
    ///   than or equal to" RecoveryPoint = HighData, i.e. SND.UNA − 1 ≥ recover − 1:
    ///   `snd_una >= recover`. The first segment sent above the last recovery point can
    ///   so be fast-retransmitted as soon as the previous recovery has ended (ns-3's
    ///   `m_highRxAckMark >= m_recover` in `TcpSocketBase::DupAck` is the same rule).
    /// - NewReno without SACK (RFC 6582 §3.2 step 2): only if the cumulative ACK
    ///   "covers more than recover", which the RFC spells out as ack_number − 1 >
    ///   recover: `snd_una > recover`, so duplicate ACKs caused by go-back-N
    ///   retransmissions after a timeout do not start a second recovery (the optional
    ///   heuristics of RFC 6582 §4 are not modelled).
    pub(super) fn loss_detected(&mut self) {
        let after_last = if self.sack_ok { self.snd_una >= self.recover } else { self.snd_una > self.recover };
        match self.recovery {
            Recovery::None => {
                if self.mtup.probe.is_some_and(|(_, start, _)| start == self.snd_una) {
                    // Linux `tcp_mtup_probe_failed`: the probe was lost, not the path
                    // congested (RFC 4821 §7.6.2): the search's top comes down and the
                    // probe's data goes again in ordinary segments, cwnd untouched.
                    let (mtu, _, _) = self.mtup.probe.take().expect("probe");
                    self.mtup.search_high = mtu - 1;
                    self.stats.mtu_probes_failed += 1;
                    self.sync_mss(self.pmtu);
                    self.probe_recovery_cwnd = Some(self.cc.cwnd);
                    self.enter_recovery_keeping_cwnd();
                } else if after_last {
                    // RFC 6582 §3.2 step 2: not for data sent before the last recovery.
                    self.enter_recovery();
                }
            }
            Recovery::NewReno { .. } | Recovery::Sack { .. } => {}
        }
    }

    /// In fast recovery, or in the recovery after a timeout (until everything sent
    /// before it is acknowledged): RFC 8985's "in recovery".
    pub(super) fn in_loss_recovery(&self) -> bool {
        self.recovery != Recovery::None || self.snd_una < self.recover
    }

    /// RFC 8985 §6.2 and §7.4 for one ACK, after the scoreboard took its SACK blocks.
    pub(super) fn rack_on_ack(&mut self, now: u64, ack: SeqNumber, pure_dup: bool) {
        let min_rtt = self.stats.rtt_min_ns;
        let Some(rack) = self.rack.as_mut() else { return };
        rack.on_ack(now, self.snd_una, self.board.blocks(), min_rtt);
        // §7.4, TLP_process_ack (no DSACK here, so its DSACK test never holds).
        let mut repaired = false;
        if let Some(end) = rack.tlp_end_seq.filter(|&end| ack >= end) {
            if !rack.tlp_is_retrans || pure_dup {
                // New data delivered, or the probe duplicated the original: no loss.
                rack.tlp_end_seq = None;
            } else if ack > end {
                // §7.4.2: the probe repaired a loss (the only one, since no other
                // recovery started): reduce the window.
                rack.tlp_end_seq = None;
                repaired = true;
            }
        }
        if repaired && self.recovery == Recovery::None {
            let flight = (self.snd_max - self.snd_una) as u64;
            self.hystart.on_loss(false);
            self.cc.on_congestion_event(flight, self.smss);
        }
        self.rack_detect_loss(now);
        self.arm_loss_timer(now);
    }

    /// RFC 8985 §6.2 steps 4–5; a loss found outside recovery starts one (§6.2: "if
    /// any segment is newly marked lost, ... fast recovery").
    pub(super) fn rack_detect_loss(&mut self, now: u64) {
        let in_recovery = self.in_loss_recovery();
        let (min_rtt, srtt, thresh) = (self.stats.rtt_min_ns, self.rtt.srtt(), self.cfg.dup_ack_threshold);
        let Some(rack) = self.rack.as_mut() else { return };
        let reo_wnd = rack.reo_wnd(min_rtt, srtt, in_recovery, thresh);
        let (newly, lost_rtx) = rack.detect_loss(now, reo_wnd);
        self.stats.rack_lost += u64::from(newly);
        if newly > 0 && self.recovery == Recovery::None {
            self.loss_detected();
        } else if let (Some(sent), Recovery::Sack { .. }) = (lost_rtx, self.recovery) {
            // RFC 5681 §4.3: "the loss of a retransmission [...] should be taken as two
            // indications of congestion and, therefore, cwnd (and ssthresh) MUST be
            // lowered twice". Once per round: only for a retransmission sent after the
            // last reduction, at the rate that reduction set. (Linux instead bounds what
            // recovery sends with PRR, RFC 6937, which this model does not have; without
            // either, RFC 6675 refills the pipe to ssthresh each time RACK frees it.)
            if sent >= self.rtx_cut_at && self.prr.is_none() {
                let flight = (self.snd_max - self.snd_una) as u64;
                self.cc.on_congestion_event(flight, self.smss);
                self.rtx_cut_at = now;
            }
        }
    }

    /// RFC 8985 §7.2: a probe may be scheduled (SACK and RACK in use, data in flight,
    /// not in recovery, no probe outstanding). Linux also waits while anything is
    /// SACKed (its Disorder state; RACK's reordering timer covers that case).
    pub(super) fn tlp_eligible(&self) -> bool {
        let Some(rack) = &self.rack else { return false };
        self.cfg.tlp
            && matches!(
                self.state,
                State::Established | State::CloseWait | State::FinWait1 | State::Closing | State::LastAck
            )
            && self.snd_max > self.snd_una
            && !self.in_loss_recovery()
            && rack.tlp_end_seq.is_none()
            && !self.tlp_pending
            && self.board.is_empty()
    }

    /// Arms the loss timer after an ACK or new data (RFC 8985 §8): RACK's reordering
    /// timer when a segment's window is running, else the TLP probe timer when a probe
    /// may go, never later than the RTO; else none.
    pub(super) fn arm_loss_timer(&mut self, now: u64) {
        if let Some(at) = self.rack.as_ref().and_then(|r| r.reo_at) {
            self.loss_at = Some((at, LossTimer::Reorder));
            return;
        }
        if !self.tlp_eligible() {
            self.loss_at = None;
            return;
        }
        // §7.2 TLP_calc_PTO: 2·SRTT, plus max_ack_delay with one segment in flight;
        // 1 s without an SRTT; no later than the RTO.
        let pto = match self.rtt.srtt() {
            Some(srtt) => {
                let one = (self.snd_max - self.snd_una) as u64 <= u64::from(self.smss);
                2 * srtt + if one { TLP_MAX_ACK_DELAY_NS } else { 0 }
            }
            None => TLP_PTO_NO_SRTT_NS,
        };
        let at = self.rto_at.map_or(now + pto, |rto| rto.min(now + pto));
        self.loss_at = Some((at, LossTimer::Probe));
    }

    /// The loss timer fired.
    pub(super) fn on_loss_timer(&mut self, now: u64, kind: LossTimer) {
        match kind {
            LossTimer::Reorder => {
                self.rack_detect_loss(now);
                self.arm_loss_timer(now);
            }
            LossTimer::Probe => {
                if self.tlp_eligible() {
                    self.tlp_pending = true;
                }
                // §7.3: after the probe, the RTO is armed again, not the PTO.
                if self.snd_max > self.snd_una {
                    self.rto_at = Some(now + self.rtt.rto());
                }
            }
        }
    }

    /// §7.3 TLP_send_probe: one segment of new data if the peer's window allows,
    /// else the last segment sent, again; regardless of cwnd (as Linux).
    pub(super) fn probe_plan_tlp(&self) -> Option<Plan> {
        if let Some(plan) = self.new_data_plan(u64::MAX) {
            return Some(plan);
        }
        if self.snd_nxt != self.snd_max || self.snd_max <= self.snd_una {
            return None;
        }
        // The last segment as it was sent (Linux `tcp_send_loss_probe` takes the tail
        // of the retransmission queue, its last MSS-sized piece), so the probe repeats
        // a whole segment rather than straddling two.
        let last = self.rack.as_ref().and_then(|r| r.segments().last().map(|s| s.start));
        let tail = self.snd_max - (self.smss as usize).min(self.snd_max - self.snd_una);
        let start = last.map_or(tail, |s| s.max(tail)).max(self.snd_una);
        Some(self.plan_data(start, self.snd_max))
    }

    /// Recovery for a lost MTU probe: the retransmissions of fast recovery without its
    /// window reduction (the window is restored when it ends).
    pub(super) fn enter_recovery_keeping_cwnd(&mut self) {
        self.rack_enter_recovery();
        self.recover = self.snd_max;
        self.high_rxt = self.snd_una;
        self.retransmit_first = true;
        self.rtt_timing = None;
        self.recovery = if self.sack_ok {
            Recovery::Sack { recovery_point: self.snd_max }
        } else {
            Recovery::NewReno { recover: self.snd_max, partial_seen: false }
        };
    }

    /// RFC 8985 §7.1: fast recovery ends any TLP episode and cancels the probe; no
    /// earlier retransmission counts in the pipe (HighRxt restarts at SND.UNA).
    pub(super) fn rack_enter_recovery(&mut self) {
        self.tlp_pending = false;
        if matches!(self.loss_at, Some((_, LossTimer::Probe))) {
            self.loss_at = None;
        }
        if let Some(rack) = self.rack.as_mut() {
            rack.tlp_end_seq = None;
            rack.on_enter_recovery();
        }
    }

    /// Fast retransmit: RFC 5681 §3.2 steps 2–3, RFC 6582 §3.2 step 2, RFC 6675 §5.
    pub(super) fn enter_recovery(&mut self) {
        self.rack_enter_recovery();
        self.rtx_cut_at = self.now;
        self.stats.fast_retransmits += 1;
        self.probe_recovery_cwnd = None;
        self.hystart.on_loss(false);
        let flight = (self.snd_max - self.snd_una) as u64;
        self.cc.on_congestion_event(flight, self.smss);
        self.recover = self.snd_max;
        self.high_rxt = self.snd_una;
        self.retransmit_first = true;
        self.rtt_timing = None;
        if self.sack_ok {
            self.recovery = Recovery::Sack { recovery_point: self.snd_max };
            if self.cfg.prr {
                // RFC 6937 §3.1: at the start of recovery; RecoverFS = snd.nxt − snd.una.
                self.prr = Some(Prr { delivered: 0, out: 0, recover_fs: flight });
            }
        } else {
            self.cc.cwnd = self.cc.ssthresh + 3 * u64::from(self.smss);
            self.recovery = Recovery::NewReno { recover: self.snd_max, partial_seen: false };
        }
    }

    /// RFC 6937 §3.1 "on every ACK during recovery" (PRR-SSRB): the ACK delivered
    /// DeliveredData = Δsnd.una + ΔSACKd octets; while pipe > ssthresh the sender may
    /// have sent ⌈prr_delivered·ssthresh/RecoverFS⌉ in all, else it grows back to
    /// ssthresh by at most max(prr_delivered − prr_out, DeliveredData) + MSS; cwnd =
    /// pipe + sndcnt. sndcnt is rounded up to whole segments, as Linux's
    /// `tcp_cwnd_reduction` counts packets (so the fast retransmit is the first).
    pub(super) fn prr_on_ack(&mut self, old_una: SeqNumber, sacked_before: u64) {
        if !matches!(self.recovery, Recovery::Sack { .. }) {
            self.prr = None;
            return;
        }
        let delivered = ((self.snd_una - old_una) as u64 + self.board.sacked_bytes()).saturating_sub(sacked_before);
        let thresh = self.cfg.dup_ack_threshold;
        let (pipe, _) = match &self.rack {
            Some(rack) => self.rack_pipe_and_next_lost(rack),
            None => self.board.pipe_and_next_lost(self.snd_una, self.snd_max, self.high_rxt, thresh, self.smss),
        };
        let (smss, ssthresh) = (u64::from(self.smss), self.cc.ssthresh);
        let Some(prr) = self.prr.as_mut() else { return };
        prr.delivered += delivered;
        let sndcnt = if pipe > ssthresh {
            // Proportional rate reduction.
            (prr.delivered.saturating_mul(ssthresh)).div_ceil(prr.recover_fs.max(1)).saturating_sub(prr.out)
        } else {
            // Slow start reduction bound.
            let limit = prr.delivered.saturating_sub(prr.out).max(delivered) + smss;
            (ssthresh - pipe).min(limit)
        };
        self.cc.cwnd = pipe + sndcnt.div_ceil(smss) * smss;
    }

    /// RFC 6675 §4 pipe and NextSeg() rule 1 from RACK's per-segment record: a segment
    /// is lost when RACK marked it or IsLost() holds (Linux 4.4–4.17 ran both), and a
    /// retransmission is in the pipe until RACK finds it lost too, when the segment
    /// becomes the next to send again (RFC 8985 §2.2's lost retransmissions).
    pub(super) fn rack_pipe_and_next_lost(&self, rack: &Rack) -> (u64, Option<(SeqNumber, SeqNumber)>) {
        let thresh = self.cfg.dup_ack_threshold;
        let mut pipe = 0u64;
        let mut next = None;
        for seg in rack.segments().filter(|s| !s.sacked) {
            let len = (seg.end - seg.start) as u64;
            let lost = seg.lost || self.board.is_lost(seg.start, thresh, self.smss);
            if !lost {
                pipe += len;
            }
            if seg.rtx_in_flight {
                pipe += len;
            } else if lost && next.is_none() {
                next = Some((seg.start, seg.end.min(seg.start + self.smss as usize)));
            }
        }
        (pipe, next)
    }

    /// The retransmission timer expired (RFC 6298 §5.4–5.6; RFC 5681 §3.1; RFC 6582
    /// §4; RFC 2018 §8), or the persist timer when the peer's window is zero.
    pub(super) fn on_rto(&mut self) {
        match self.state {
            State::SynSent | State::SynReceived => {
                self.stats.timeouts += 1;
                self.rtt.back_off();
                self.snd_nxt = self.iss;
                self.rtt_timing = None;
                return;
            }
            State::Closed | State::Listen | State::TimeWait => return,
            _ => {}
        }
        if self.snd_wnd == 0 || (self.snd_max == self.snd_una && self.has_unsent()) {
            // Persist (RFC 9293 §3.8.6.1): probe the closed window, back off, leave
            // the congestion window alone. With a window open but too small to use
            // (SWS avoidance holding) and nothing in flight, this is §3.8.6.2.1's
            // override timer: send what fits.
            self.rtt.back_off();
            self.probe_pending = true;
            self.snd_nxt = self.snd_una;
            return;
        }
        if self.snd_max == self.snd_una {
            return;
        }
        self.stats.timeouts += 1;
        // Linux `tcp_write_timeout`: the head segment sent first at `retrans_stamp`
        // (taken as one RTO before the first timeout) and still unacknowledged after
        // the model time of `tcp_retries1` backed-off timeouts from `TCP_RTO_MIN`,
        // ((2 << 3) − 1) × 200 ms = 3 s: a black hole is suspected.
        let first_sent = *self.retrans_stamp.get_or_insert(self.now.saturating_sub(self.rtt.rto()));
        if self.now.saturating_sub(first_sent) >= ((2u64 << RETRIES1) - 1) * RTO_BASE_NS {
            self.black_hole_detected();
        }
        if let Some((mtu, _, _)) = self.mtup.probe.take() {
            // A probe lost to a timeout counts as failed (RFC 4821 §7.6.2).
            self.mtup.search_high = self.mtup.search_high.min(mtu - 1);
            self.stats.mtu_probes_failed += 1;
            self.sync_mss(self.pmtu);
        }
        self.probe_recovery_cwnd = None;
        let flight = (self.snd_max - self.snd_una) as u64;
        self.cc.on_rto(flight, self.smss);
        self.hystart.on_loss(true);
        self.rtt.back_off();
        self.snd_nxt = self.snd_una;
        self.high_rxt = self.snd_una;
        self.recover = self.snd_max;
        self.recovery = Recovery::None;
        self.prr = None;
        self.board.clear();
        self.dup_acks = 0;
        self.retransmit_first = false;
        self.hold_timer = false;
        self.rtt_timing = None;
        self.forget_rack_marks();
    }

    /// After a timeout or an MTU change (go-back-N): RFC 8985 §6.3, every segment is
    /// lost and goes again; the loss timer and any probe are dropped (§7.1).
    pub(super) fn forget_rack_marks(&mut self) {
        self.loss_at = None;
        self.tlp_pending = false;
        if let Some(rack) = self.rack.as_mut() {
            rack.on_rto();
        }
    }
}
