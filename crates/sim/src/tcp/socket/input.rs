//! Segments arriving (RFC 9293 §3.10.7): in LISTEN, SYN-SENT and the synchronized states;
//! the ACK's processing, SACK, new and duplicate ACKs, the SYN's options and RTT samples.

use super::*;

impl TcpSocket {
    /// Takes one arriving segment for this socket at `now`. Returns an immediate
    /// reply that carries no data (a RST); everything else is sent by `dispatch`.
    pub fn process(&mut self, now: u64, repr: &Repr, payload: &[u8]) -> Option<Repr> {
        self.send_idle = false;
        debug_assert_eq!(repr.payload_len, payload.len());
        self.now = now;
        self.stats.segments_received += 1;
        match self.state {
            State::Closed => self.reset_for(repr),
            State::Listen => self.process_listen(repr),
            State::SynSent => self.process_syn_sent(now, repr),
            _ => self.process_synchronized(now, repr, payload),
        }
    }

    pub(super) fn process_listen(&mut self, repr: &Repr) -> Option<Repr> {
        if repr.control == Control::Rst {
            return None;
        }
        if repr.ack_number.is_some() {
            return self.reset_for(repr);
        }
        if repr.control != Control::Syn {
            return None;
        }
        self.remote_port = repr.src_port;
        self.accept_syn_options(repr);
        self.irs = repr.seq_number;
        self.rcv_nxt = repr.seq_number + 1;
        self.rcv_adv = self.rcv_nxt;
        self.snd_wnd = u64::from(repr.window_len);
        self.max_snd_wnd = self.snd_wnd;
        self.snd_wl1 = repr.seq_number;
        self.state = State::SynReceived;
        None
    }

    pub(super) fn process_syn_sent(&mut self, now: u64, repr: &Repr) -> Option<Repr> {
        // RFC 9293 §3.10.7.3.
        let ack_ok = match repr.ack_number {
            Some(ack) if ack <= self.iss || ack > self.snd_max => {
                return if repr.control == Control::Rst { None } else { self.reset_for(repr) };
            }
            Some(_) => true,
            None => false,
        };
        if repr.control == Control::Rst {
            if ack_ok {
                self.enter_closed();
            }
            return None;
        }
        if repr.control != Control::Syn {
            return None;
        }
        self.accept_syn_options(repr);
        self.irs = repr.seq_number;
        self.rcv_nxt = repr.seq_number + 1;
        self.rcv_adv = self.rcv_nxt;
        self.snd_wnd = u64::from(repr.window_len);
        self.max_snd_wnd = self.snd_wnd;
        self.snd_wl1 = repr.seq_number;
        if let Some(ack) = repr.ack_number {
            self.snd_wl2 = ack;
            self.syn_acked(now, ack, repr);
            self.state = State::Established;
            self.ack_now = true;
        } else {
            // Simultaneous open: SYN-SENT → SYN-RECEIVED, resend our SYN as SYN-ACK.
            self.state = State::SynReceived;
            self.snd_nxt = self.iss;
        }
        None
    }

    pub(super) fn process_synchronized(&mut self, now: u64, repr: &Repr, payload: &[u8]) -> Option<Repr> {
        let seg_len = payload.len() + repr.control.len();
        // A retransmitted SYN in SYN-RECEIVED: send the SYN-ACK again.
        if self.state == State::SynReceived && repr.control == Control::Syn && repr.seq_number == self.irs {
            self.snd_nxt = self.iss;
            return None;
        }
        // TIME-WAIT: the only thing that can arrive is a retransmission of the
        // peer's FIN; acknowledge it and restart the 2·MSL wait (RFC 9293 §3.10.7.4).
        if self.state == State::TimeWait && repr.control == Control::Fin {
            self.ack_now = true;
            self.enter_time_wait(now);
            return None;
        }
        // RFC 9293 §3.10.7.4, first: the sequence number test.
        if !self.acceptable(repr.seq_number, seg_len) {
            if repr.control != Control::Rst {
                self.ack_now = true;
            }
            return None;
        }
        // Second: RST. RFC 5961 §3.2: only an exact match resets; otherwise a
        // challenge ACK.
        if repr.control == Control::Rst {
            self.process_rst(repr);
            return None;
        }
        // Fourth: SYN in a synchronized state, RFC 5961 §4: challenge ACK.
        if repr.control == Control::Syn {
            self.ack_now = true;
            return None;
        }
        // Fifth: the ACK field.
        let ack = repr.ack_number?;
        self.update_ts_recent(repr);
        if self.state == State::SynReceived {
            if ack <= self.snd_una || ack > self.snd_max {
                return self.reset_for(repr);
            }
            self.snd_wnd = u64::from(repr.window_len) << self.snd_shift;
            self.max_snd_wnd = self.snd_wnd;
            self.snd_wl1 = repr.seq_number;
            self.snd_wl2 = ack;
            self.syn_acked(now, ack, repr);
            self.state = if self.fin_seq.is_some() { State::FinWait1 } else { State::Established };
        } else if !self.process_ack(now, repr, payload.len(), ack) {
            return None;
        }
        // Our FIN acknowledged?
        if self.fin_acked() {
            match self.state {
                State::FinWait1 => self.state = State::FinWait2,
                State::Closing => self.enter_time_wait(now),
                State::LastAck => {
                    self.enter_closed();
                    return None;
                }
                _ => {}
            }
        }
        if self.state == State::TimeWait {
            return None;
        }
        // Seventh: segment text.
        if !payload.is_empty() && matches!(self.state, State::Established | State::FinWait1 | State::FinWait2) {
            self.receive_data(now, repr.seq_number, payload, repr.control == Control::Psh);
        }
        // Eighth: FIN.
        if repr.control == Control::Fin && matches!(self.state, State::Established | State::FinWait1 | State::FinWait2)
        {
            self.rx_fin = Some(repr.seq_number + payload.len());
        }
        if self.rx_fin.is_some() {
            self.consume_fin(now);
        }
        None
    }

    /// An acceptable RST (RFC 5961 §3.2): an exact match resets (a passive open goes back
    /// to LISTEN), any other gets a challenge ACK.
    fn process_rst(&mut self, repr: &Repr) {
        if repr.seq_number == self.rcv_nxt {
            if self.state == State::SynReceived && self.passive {
                let (port, iss) = (self.local_port, self.iss);
                self.enter_closed();
                self.listen(port, iss);
            } else {
                self.enter_closed();
            }
        } else {
            self.ack_now = true;
        }
    }

    /// RFC 7323 §4.3: TS.Recent from a segment at or before the last ACK sent.
    fn update_ts_recent(&mut self, repr: &Repr) {
        if self.ts_ok {
            if let Some((tsval, _)) = repr.timestamp {
                // RFC 7323 §4.3: remember TSval of a segment at or before the last
                // ACK sent, so the echo reflects the oldest unacknowledged segment.
                if repr.seq_number <= self.last_ack_sent && tsval.wrapping_sub(self.ts_recent) < 1 << 31 {
                    self.ts_recent = tsval;
                }
            }
        }
    }

    /// RFC 9293 §3.10.7.4 acceptability of a segment of `len` sequence octets.
    pub(super) fn acceptable(&self, seq: SeqNumber, len: usize) -> bool {
        let wnd = if self.rcv_adv > self.rcv_nxt { self.rcv_adv - self.rcv_nxt } else { 0 };
        let in_window = |s: SeqNumber| self.rcv_nxt <= s && s < self.rcv_nxt + wnd;
        match (len, wnd) {
            (0, 0) => seq == self.rcv_nxt,
            (0, _) => seq == self.rcv_nxt || in_window(seq),
            (_, 0) => false,
            (_, _) => in_window(seq) || in_window(seq + (len - 1)),
        }
    }

    /// Processes the ACK field in a synchronized state. False when the segment must
    /// be dropped (an ACK for data never sent).
    pub(super) fn process_ack(&mut self, now: u64, repr: &Repr, data_len: usize, ack: SeqNumber) -> bool {
        if ack > self.snd_max {
            self.ack_now = true;
            return false;
        }
        let in_flight = self.snd_max > self.snd_una;
        let old_una = self.snd_una;
        let win_field = repr.window_len;
        // Most ACKs carry no SACK block: the three empty slots are seen at once.
        let has_sack = repr.sack_ranges != [None; 3];
        // RFC 6937 DeliveredData counts the change in SACKed octets too.
        let sacked_before = if self.cfg.prr && self.sack_ok { self.board.sacked_bytes() } else { 0 };
        let newly_sacked = if self.sack_ok && has_sack { self.absorb_sack(ack, repr) } else { 0 };
        self.update_send_window(repr, ack);
        let mut rtt_sample = None;
        if ack > self.snd_una {
            rtt_sample = self.ack_new_data(now, repr, ack);
        } else if ack == self.snd_una
            && in_flight
            && self.snd_wnd > 0
            && data_len == 0
            && repr.control.is_empty()
            && (win_field == self.last_win_field || newly_sacked > 0)
        {
            // RFC 5681 §2 duplicate ACK (RFC 6675 also counts one that SACKs new data).
            // Not while the window is closed: the answers to zero-window probes say
            // nothing about loss (Linux counts none either: its probes carry old data).
            self.stats.dup_acks += 1;
            self.dup_acks += 1;
            self.on_dup_ack();
        }
        if self.rack.is_some() {
            let pure_dup = ack == old_una && data_len == 0 && win_field == self.last_win_field && newly_sacked == 0;
            self.rack_on_ack(now, ack, pure_dup);
        }
        if self.prr.is_some() {
            self.prr_on_ack(old_una, sacked_before);
        }
        self.last_win_field = win_field;
        self.trace_ack(now, rtt_sample);
        true
    }

    /// RFC 9293 §3.10.7.4: the send window from an acceptable ACK, SND.WL1/WL2 guarding
    /// the update.
    fn update_send_window(&mut self, repr: &Repr, ack: SeqNumber) {
        if ack >= self.snd_una
            && (self.snd_wl1 < repr.seq_number || (self.snd_wl1 == repr.seq_number && self.snd_wl2 <= ack))
        {
            self.snd_wnd = u64::from(repr.window_len) << self.snd_shift;
            self.max_snd_wnd = self.max_snd_wnd.max(self.snd_wnd);
            self.snd_wl1 = repr.seq_number;
            self.snd_wl2 = ack;
            if self.snd_wnd > 0 {
                self.probe_pending = false;
            }
        }
    }

    /// An ACK of new data: the send buffer drained, SND.UNA advanced, an RTT sample taken,
    /// a path MTU probe confirmed, HyStart and congestion control told, the RTO re-armed
    /// (RFC 6298 §5.2-§5.3). Returns the RTT sample.
    fn ack_new_data(&mut self, now: u64, repr: &Repr, ack: SeqNumber) -> Option<u64> {
        let acked = ack - self.snd_una;
        let fin_octet = usize::from(self.fin_seq.is_some_and(|f| ack > f));
        let data_acked = (acked - fin_octet) as u64;
        self.drain_tx(data_acked);
        self.writer_refill(data_acked);
        self.stats.bytes_acked += data_acked;
        self.snd_una = ack;
        if self.snd_nxt < ack {
            self.snd_nxt = ack;
        }
        if self.high_rxt < ack {
            self.high_rxt = ack;
        }
        self.board.advance(ack);
        let rtt_sample = self.ack_rtt_sample(now, repr, ack);
        self.dup_acks = 0;
        self.retrans_stamp = None;
        if let Some((mtu, _, end)) = self.mtup.probe {
            if ack >= end {
                // Linux `tcp_mtup_probe_success`: the probe's size works.
                self.mtup.probe = None;
                self.mtup.search_low = mtu;
                self.sync_mss(self.pmtu);
            }
        }
        self.hystart_on_ack(now, ack, rtt_sample);
        self.on_new_ack(now, acked as u64, data_acked);
        self.stats.max_cwnd = self.stats.max_cwnd.max(self.cc.cwnd);
        // RFC 6298 §5.2/§5.3.
        if self.snd_una == self.snd_max {
            self.rto_at = None;
        } else if !self.hold_timer {
            self.rto_at = Some(now + self.rtt.rto());
        }
        self.hold_timer = false;
        rtt_sample
    }

    /// The RTT an ACK of new data measures: timestamps on every one (RFC 7323 §4.1), else
    /// the one timed segment (RFC 6298 §3, Karn); the timed segment is done with.
    fn ack_rtt_sample(&mut self, now: u64, repr: &Repr, ack: SeqNumber) -> Option<u64> {
        // RTT: timestamps on every ACK of new data (RFC 7323 §4.1), else the one
        // timed segment (RFC 6298 §3, Karn).
        let rtt_sample = match (self.ts_ok, repr.timestamp) {
            (true, Some((_, tsecr))) if tsecr != 0 => Some(u64::from(Self::ts_clock(now).wrapping_sub(tsecr)) * 1000),
            _ => match self.rtt_timing {
                Some((end, sent)) if ack >= end => Some(now - sent),
                _ => None,
            },
        };
        if self.rtt_timing.is_some_and(|(end, _)| ack >= end) {
            self.rtt_timing = None;
        }
        if let Some(r) = rtt_sample {
            self.take_rtt_sample(r);
        }
        rtt_sample
    }

    /// HyStart's look at an ACK in slow start outside recovery: on its exit, slow start
    /// ends here (ssthresh = cwnd).
    fn hystart_on_ack(&mut self, now: u64, ack: SeqNumber, rtt_sample: Option<u64>) {
        if self.recovery == Recovery::None && self.cc.in_slow_start() {
            let info = AckInfo {
                now,
                ack,
                snd_nxt: self.snd_max,
                rtt: rtt_sample,
                cwnd: self.cc.cwnd,
                smss: self.smss,
                srtt: self.rtt.srtt(),
            };
            let verdict = self.hystart.on_ack(info);
            if verdict == Verdict::Exit {
                self.cc.ssthresh = self.cc.cwnd;
            }
        }
    }

    /// The trace's record of an ACK processed, when the socket is tracing.
    fn trace_ack(&mut self, now: u64, rtt_sample: Option<u64>) {
        if let Some(trace) = self.trace.as_mut() {
            trace.push(TraceRecord {
                now,
                cwnd: self.cc.cwnd,
                ssthresh: self.cc.ssthresh,
                srtt: self.rtt.srtt(),
                rtt_sample,
                rto: self.rtt.rto(),
                bytes_in_flight: (self.snd_max - self.snd_una) as u64,
                snd_una: self.snd_una.as_u32(),
                in_recovery: self.recovery != Recovery::None,
                retransmits: self.stats.retransmits,
            });
        }
    }

    pub(super) fn has_unsent(&self) -> bool {
        self.snd_nxt >= self.tx_base() && self.tx_len > (self.snd_nxt - self.tx_base()) as u64
    }

    /// Adds the segment's SACK blocks to the scoreboard; returns octets newly SACKed.
    pub(super) fn absorb_sack(&mut self, ack: SeqNumber, repr: &Repr) -> u64 {
        let una = self.snd_una.max(ack);
        let mut new = 0;
        for (l, r) in repr.sack_ranges.iter().flatten() {
            new += self.board.add(una, self.snd_max, SeqNumber::from_u32(*l), SeqNumber::from_u32(*r));
        }
        new
    }

    /// The cumulative ACK advanced by `acked` sequence octets (`data_acked` of data).
    pub(super) fn on_new_ack(&mut self, now: u64, acked: u64, data_acked: u64) {
        let smss = u64::from(self.smss);
        match self.recovery {
            Recovery::None if self.cc.in_slow_start() => {
                let plain = self.cc.slow_start_increment(data_acked, self.smss);
                self.cc.cwnd += self.hystart.slow_start_increase(data_acked, smss, plain);
            }
            Recovery::None => {
                self.cc.on_ack(now, data_acked, self.smss, self.rtt.srtt());
            }
            Recovery::NewReno { recover, partial_seen } => {
                if self.snd_una >= recover {
                    // RFC 6582 §3.2 step 3, full ACK: cwnd = min(ssthresh,
                    // max(FlightSize, SMSS) + SMSS).
                    let flight = (self.snd_max - self.snd_una) as u64;
                    self.cc.cwnd = self.cc.ssthresh.min(flight.max(smss) + smss);
                    if let Some(cwnd) = self.probe_recovery_cwnd.take() {
                        self.cc.cwnd = cwnd;
                    }
                    self.recovery = Recovery::None;
                } else {
                    // Step 4, partial ACK: retransmit the first unacknowledged segment,
                    // deflate by the octets acked, add back one SMSS if at least one
                    // SMSS was acked; reset the timer only on the first (Impatient).
                    self.retransmit_first = true;
                    let add = if acked >= smss { smss } else { 0 };
                    self.cc.cwnd = (self.cc.cwnd.saturating_sub(acked) + add).max(smss);
                    self.hold_timer = partial_seen;
                    self.recovery = Recovery::NewReno { recover, partial_seen: true };
                }
            }
            Recovery::Sack { recovery_point } => {
                // RFC 6675 §5: recovery ends when the cumulative ACK reaches
                // RecoveryPoint; until then cwnd stays at ssthresh and pipe governs.
                if self.snd_una >= recovery_point {
                    self.recovery = Recovery::None;
                    if self.prr.take().is_some() {
                        // RFC 6937 §3.1: on leaving recovery, cwnd = ssthresh.
                        self.cc.cwnd = self.cc.ssthresh;
                    }
                    if let Some(cwnd) = self.probe_recovery_cwnd.take() {
                        self.cc.cwnd = cwnd;
                    }
                }
            }
        }
    }

    pub(super) fn on_dup_ack(&mut self) {
        match self.recovery {
            Recovery::None => {
                let threshold = self.dup_acks >= self.cfg.dup_ack_threshold;
                // RFC 6675 §5: or when IsLost(HighACK + 1).
                let lost = self.sack_ok && self.board.is_lost(self.snd_una, self.cfg.dup_ack_threshold, self.smss);
                if threshold || lost {
                    self.loss_detected();
                }
            }
            Recovery::NewReno { .. } => {
                // RFC 6582 §3.2 step 4 / RFC 5681 §3.2 step 4: inflate.
                self.cc.cwnd += u64::from(self.smss);
            }
            Recovery::Sack { .. } => {}
        }
    }

    /// Option negotiation from the peer's SYN or SYN-ACK.
    pub(super) fn accept_syn_options(&mut self, repr: &Repr) {
        let peer_mss = repr.max_seg_size.unwrap_or(DEFAULT_MSS);
        self.ws_ok = self.cfg.window_scaling && repr.window_scale.is_some();
        if self.ws_ok {
            self.snd_shift = repr.window_scale.unwrap_or(0).min(MAX_WINDOW_SHIFT);
            self.rcv_shift = self.wanted_rcv_shift();
        } else {
            self.snd_shift = 0;
            self.rcv_shift = 0;
        }
        self.sack_ok = self.cfg.sack && repr.sack_permitted;
        // RACK needs SACK (RFC 8985 §6: it infers from SACKed segments; Linux runs it
        // only on SACK connections, `tcp_is_sack`).
        self.rack = (self.cfg.rack && self.sack_ok).then(Rack::new);
        self.ts_ok = self.cfg.timestamps && repr.timestamp.is_some();
        if let (true, Some((tsval, _))) = (self.ts_ok, repr.timestamp) {
            self.ts_recent = tsval;
        }
        self.mss_clamp = u32::from(self.cfg.mss.min(peer_mss));
        self.mtup_init();
        self.smss = self.mss_clamp.saturating_sub(self.options_len()).max(1);
        if self.cfg.pmtu_discovery || self.mtup.enabled {
            let pmtu = self.pmtu;
            self.sync_mss(pmtu);
        }
        self.rcv_mss = u32::from(DEFAULT_MSS).min(self.smss);
        self.cc = Congestion::new(self.cfg.congestion_control, self.smss, self.cfg.initial_window);
        self.cc.set_growth(self.cfg.cwnd_growth, self.cfg.slow_start_limit);
        self.cc.set_cubic_alpha(self.cfg.cubic_alpha);
        self.hystart = HyStart::new(self.cfg.hystart);
        let syn_window = self.rcv_free().min(u64::from(u16::MAX)) as usize;
        self.rcv_adv = repr.seq_number + 1 + syn_window;
    }

    /// Our SYN is acknowledged by `ack`.
    pub(super) fn syn_acked(&mut self, now: u64, ack: SeqNumber, repr: &Repr) {
        self.snd_una = ack;
        self.snd_nxt = self.snd_nxt.max(ack);
        let sample = match (self.ts_ok, repr.timestamp) {
            (true, Some((_, tsecr))) if tsecr != 0 => Some(u64::from(Self::ts_clock(now).wrapping_sub(tsecr)) * 1000),
            _ => self.rtt_timing.map(|(_, sent)| now - sent),
        };
        self.rtt_timing = None;
        if let Some(r) = sample {
            self.take_rtt_sample(r);
        }
        self.rto_at = None;
    }

    /// One RTT measurement: into the RFC 6298 estimator and the statistics.
    pub(super) fn take_rtt_sample(&mut self, r: u64) {
        self.rtt.sample(r);
        self.cc.on_rtt_sample(self.now, r);
        let st = &mut self.stats;
        st.rtt_samples += 1;
        st.rtt_sum_ns += r;
        st.rtt_min_ns = Some(st.rtt_min_ns.map_or(r, |m| m.min(r)));
        st.rtt_max_ns = st.rtt_max_ns.max(r);
    }

    pub(super) fn fin_acked(&self) -> bool {
        self.fin_seq.is_some_and(|f| self.snd_una > f)
    }
}
