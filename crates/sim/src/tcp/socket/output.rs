//! The send side: what the next segment carries (new data, retransmissions, probes),
//! its header and options, and the application's writes.

use super::*;

impl TcpSocket {
    /// Runs expired timers at `now`, then emits every segment the socket may send
    /// now, in order, as `(header, payload)`; `header.payload_len` is the payload's
    /// length.
    pub fn dispatch(&mut self, now: u64, mut emit: impl FnMut(Repr, &[u8])) {
        self.dispatch_payloads(now, |repr, payload| match payload {
            Payload::Bytes(bytes) => emit(*repr, bytes),
            Payload::Zeros(n) => emit(*repr, &ZEROS[..n]),
        });
    }

    /// As [`dispatch`](Self::dispatch), handing a bulk sender's payload out as
    /// [`Payload::Zeros`] (no buffer to copy or checksum) and queued bytes as
    /// [`Payload::Bytes`].
    pub fn dispatch_payloads(&mut self, now: u64, mut emit: impl FnMut(&Repr, Payload<'_>)) {
        self.send_idle = false;
        self.now = now;
        if self.timewait_at.is_some_and(|t| t <= now) {
            self.enter_closed();
        }
        if let Some((at, kind)) = self.loss_at.filter(|&(t, _)| t <= now) {
            debug_assert!(at <= now);
            self.loss_at = None;
            self.on_loss_timer(now, kind);
        }
        if self.rto_at.is_some_and(|t| t <= now) {
            self.rto_at = None;
            self.on_rto();
        }
        if self.delack_at.is_some_and(|t| t <= now) {
            self.delack_at = None;
            self.ack_now = true;
        }
        if self.rst_pending {
            self.rst_pending = false;
            let mut rst = Repr::new(self.local_port, self.remote_port, Control::Rst, self.snd_nxt, 0);
            rst.ack_number = Some(self.rcv_nxt);
            self.stats.segments_sent += 1;
            emit(&rst, Payload::Bytes(&[]));
            return;
        }
        let mut sent_new = false;
        while let Some(plan) = self.next_segment() {
            sent_new |= plan.seq >= self.snd_max && !plan.syn;
            self.send_plan(now, plan, &mut emit);
        }
        // §7.3: a probe that could not go (no window, nothing sent) is dropped; the
        // RTO is already armed again.
        self.tlp_pending = false;
        // RFC 8985 §7.2: (re)schedule the probe after sending new data.
        if sent_new && self.rack.is_some() && !matches!(self.loss_at, Some((_, LossTimer::Reorder))) {
            self.arm_loss_timer(now);
        }
        if self.ack_now && self.is_synchronized() {
            self.header(now, Control::None, self.snd_nxt, 0);
            self.stats.segments_sent += 1;
            emit(&self.out, Payload::Bytes(&[]));
        }
        // Persist timer (RFC 9293 §3.8.6.1): data waits behind a window too small to
        // use with nothing in flight, so no ACK will come to open it unless we probe.
        if self.rto_at.is_none()
            && self.snd_una == self.snd_max
            && self.has_unsent()
            && matches!(self.state, State::Established | State::CloseWait)
        {
            self.rto_at = Some(now + self.rtt.rto());
        }
        // The loop above stopped at `next_segment() == None`, and what ran since (the
        // probe flag, the loss timer, the ACK's header, the persist timer) is none of
        // its inputs (the debug assertion in `poll_at` checks it).
        self.send_idle = true;
    }

    /// The next segment to send, if any: SYN, SYN-ACK, a retransmission, new data or
    /// a FIN, under the windows, Nagle and sender SWS avoidance.
    pub(super) fn next_segment(&self) -> Option<Plan> {
        match self.state {
            State::SynSent | State::SynReceived => {
                return (self.snd_nxt == self.iss).then_some(Plan { seq: self.iss, len: 0, syn: true, fin: false });
            }
            State::Established | State::CloseWait | State::FinWait1 | State::Closing | State::LastAck => {}
            _ => return None,
        }
        // Nothing sent unacknowledged, no data queued and no FIN: every rule below (a
        // probe, a retransmission, new data, the FIN) needs one of them. The receiver
        // of a one-way transfer asks this after every segment it takes.
        if self.snd_max == self.snd_una && self.tx_len == 0 && self.fin_seq.is_none() {
            debug_assert!(self.next_segment_established().is_none());
            return None;
        }
        self.next_segment_established()
    }

    /// [`next_segment`](Self::next_segment) in a state that may send data.
    pub(super) fn next_segment_established(&self) -> Option<Plan> {
        let smss = self.smss as usize;
        if self.tlp_pending {
            if let Some(plan) = self.probe_plan_tlp() {
                return Some(plan);
            }
        }
        // Fast retransmit / partial ACK: the first unacknowledged segment,
        // regardless of cwnd (RFC 5681 §3.2 step 3, RFC 6675 §5 step 4.3).
        if self.retransmit_first && self.snd_max > self.snd_una {
            let mut end = self.snd_una + smss.min(self.snd_max - self.snd_una);
            if let Some(&(s, _)) = self.board.blocks().first() {
                end = end.min(s.max(self.snd_una + 1));
            }
            return Some(self.plan_data(self.snd_una, end));
        }
        if let Recovery::Sack { .. } = self.recovery {
            // RFC 6675 §5 step (C): while cwnd − pipe ≥ 1 SMSS, NextSeg().
            let thresh = self.cfg.dup_ack_threshold;
            let (pipe, lost) = match &self.rack {
                Some(rack) => self.rack_pipe_and_next_lost(rack),
                None => self.board.pipe_and_next_lost(self.snd_una, self.snd_max, self.high_rxt, thresh, self.smss),
            };
            if self.cc.cwnd < pipe + u64::from(self.smss) {
                return None;
            }
            if let Some((s, e)) = lost {
                return Some(self.plan_data(s, e));
            }
            if let Some(plan) = self.new_data_plan(u64::MAX) {
                return Some(plan);
            }
            let rule3 = self.board.next_rule3(self.snd_una, self.snd_max, self.high_rxt, self.smss);
            return rule3.map(|(s, e)| self.plan_data(s, e));
        }
        if let Some(plan) = self.probe_plan() {
            return Some(plan);
        }
        let flight = (self.snd_nxt - self.snd_una) as u64;
        let wnd = self.cc.cwnd.min(self.cfg.max_window.map_or(u64::MAX, u64::from)).min(self.send_buffer_limit());
        if let Some(plan) = self.new_data_plan(wnd.saturating_sub(flight)) {
            return Some(plan);
        }
        // A FIN alone once every data octet is sent (again after a timeout).
        if let Some(fin) = self.fin_seq {
            if self.snd_nxt == fin {
                return Some(Plan { seq: fin, len: 0, syn: false, fin: true });
            }
        }
        None
    }

    /// Bytes mode bounds what is in flight by the queue itself; bulk by the buffer,
    /// less what the writer has not filled again.
    pub(super) fn send_buffer_limit(&self) -> u64 {
        if self.bulk.is_some() {
            u64::from(self.cfg.send_buffer).saturating_sub(self.unwritten)
        } else {
            u64::MAX
        }
    }

    /// New (or, after a timeout, resent) data at `snd_nxt` within `room` octets of
    /// congestion window and the peer's window.
    #[inline(always)]
    pub(super) fn new_data_plan(&self, room: u64) -> Option<Plan> {
        // Full-sized is what fits beside the options this segment carries.
        let smss = u64::from(self.current_mss());
        let base = self.tx_base();
        if self.snd_nxt < base {
            return None;
        }
        let sent = (self.snd_nxt - base) as u64;
        let unsent = self.tx_len.saturating_sub(sent);
        if unsent == 0 {
            return None;
        }
        let peer_room = self.snd_wnd.saturating_sub((self.snd_nxt - self.snd_una) as u64);
        if peer_room == 0 {
            // Zero-window probe (RFC 9293 §3.8.6.1): one octet beyond the window, when
            // the persist timer says so.
            return (self.probe_pending && self.snd_wnd == 0).then(|| self.plan_range(self.snd_nxt, self.snd_nxt + 1));
        }
        let len = smss.min(unsent).min(room).min(peer_room);
        if len == 0 {
            return None;
        }
        if len < smss {
            let flight = self.snd_nxt > self.snd_una;
            if len < unsent {
                if room < peer_room {
                    // Cut by the congestion window (or the fixed window, or the send
                    // buffer): the rest goes when an ACK opens it, as whole segments.
                    return None;
                }
                // Cut by the peer's window: sender SWS avoidance (RFC 9293
                // §3.8.6.2.1): send only (3) at least Fs = 1/2 of the largest window
                // the peer offered, or (4) when the override (persist) timer expired.
                if 2 * len < self.max_snd_wnd && !self.probe_pending {
                    return None;
                }
            } else if self.cfg.nagle && flight && self.fin_seq.is_none() {
                // Nagle (RFC 896): the last short piece waits for the ACK, unless it
                // carries the FIN (Linux's tcp_nagle_test).
                return None;
            }
        }
        Some(self.plan_range(self.snd_nxt, self.snd_nxt + len as usize))
    }

    /// A segment covering `[start, end)` of sequence space past the SYN: data octets,
    /// with the FIN when the range reaches it.
    pub(super) fn plan_range(&self, start: SeqNumber, end: SeqNumber) -> Plan {
        if let Some(fin) = self.fin_seq {
            if start >= fin {
                return Plan { seq: fin, len: 0, syn: false, fin: true };
            }
            if end > fin {
                return Plan { seq: start, len: fin - start, syn: false, fin: true };
            }
            if end == fin {
                return Plan { seq: start, len: end - start, syn: false, fin: true };
            }
        }
        Plan { seq: start, len: end - start, syn: false, fin: false }
    }

    pub(super) fn send_plan(&mut self, now: u64, plan: Plan, emit: &mut impl FnMut(&Repr, Payload<'_>)) {
        let end = plan.seq + (plan.len + usize::from(plan.syn) + usize::from(plan.fin));
        let retransmit = plan.seq < self.snd_max;
        if !plan.syn {
            let in_recovery = self.recovery != Recovery::None;
            if let Some(rack) = self.rack.as_mut() {
                rack.on_send(plan.seq, end, self.snd_max, now, in_recovery);
            }
        }
        if self.tlp_pending {
            // RFC 8985 §7.3: the probe; TLP.end_seq is SND.NXT after it.
            self.tlp_pending = false;
            self.stats.tlp_probes += 1;
            if let Some(rack) = self.rack.as_mut() {
                rack.tlp_end_seq = Some(self.snd_max.max(end));
                rack.tlp_is_retrans = retransmit;
            }
        }
        let offset = if plan.len > 0 { plan.seq - self.tx_base() } else { 0 };
        let control = self.plan_control(&plan, offset);
        self.header(now, control, plan.seq, plan.len);
        if plan.syn {
            self.syn_options(now);
        }
        self.stats.segments_sent += 1;
        self.stats.bytes_sent += plan.len as u64;
        if !retransmit && plan.len > self.smss as usize {
            self.mtup.probe = Some((self.mss_to_mtu(plan.len as u32), plan.seq, end));
            self.stats.mtu_probes += 1;
        }
        if retransmit {
            self.stats.retransmits += 1;
            self.stats.bytes_retransmitted += plan.len as u64;
            // Karn: a retransmission spoils the timed segment.
            self.rtt_timing = None;
        } else if self.rtt_timing.is_none() && !self.ts_ok {
            self.rtt_timing = Some((end, now));
        }
        if self.retransmit_first && plan.seq == self.snd_una {
            self.retransmit_first = false;
        }
        if self.recovery != Recovery::None && retransmit {
            self.high_rxt = self.high_rxt.max(end);
        }
        if let Some(prr) = self.prr.as_mut() {
            // RFC 6937 §3.1: prr_out += (data sent).
            prr.out += plan.len as u64;
        }
        if plan.seq == self.snd_nxt || plan.syn {
            self.snd_nxt = end;
        }
        self.snd_max = self.snd_max.max(end);
        if plan.len > 0 {
            self.probe_pending = false;
        }
        if self.rto_at.is_none() {
            // RFC 6298 §5.1.
            self.rto_at = Some(now + self.rtt.rto());
        }
        let payload = if plan.len == 0 {
            Payload::Bytes(&[])
        } else if self.bulk.is_some() {
            Payload::Zeros(plan.len)
        } else {
            self.scratch.clear();
            self.scratch.extend(self.tx.range(offset..offset + plan.len));
            Payload::Bytes(&self.scratch)
        };
        emit(&self.out, payload);
    }

    /// The control bits of the segment `plan` (its data at `offset` in the send queue):
    /// SYN, FIN, or PSH on the segment that empties what the application gave.
    fn plan_control(&self, plan: &Plan, offset: usize) -> Control {
        if plan.syn {
            Control::Syn
        } else if plan.fin {
            Control::Fin
        } else if plan.len > 0 && self.bulk.is_none() && (offset + plan.len) as u64 == self.tx_len {
            // Linux marks the segment that empties the send queue.
            Control::Psh
        } else if plan.len > 0
            && self.bulk.is_some()
            && self.cfg.send_low_water.is_some()
            && (offset + plan.len) as u64 == self.written_octets()
        {
            // 4.4BSD tcp_output: "If we're sending everything we've got, set PUSH."
            Control::Psh
        } else {
            Control::None
        }
    }

    /// Fills `out` with a header from this socket: ACK (except on our first SYN),
    /// window, timestamps, SACK blocks; clears the pending ACK.
    #[inline(always)]
    pub(super) fn header(&mut self, now: u64, control: Control, seq: SeqNumber, len: usize) {
        let syn = control == Control::Syn;
        let window = self.advertise_window(syn);
        let ack_number = if self.state != State::SynSent {
            self.last_ack_sent = self.rcv_nxt;
            self.segs_unacked = 0;
            self.ack_now = false;
            self.delack_at = None;
            Some(self.rcv_nxt)
        } else {
            None
        };
        let timestamp = (self.ts_ok || (syn && self.cfg.timestamps && self.state == State::SynSent))
            .then(|| (Self::ts_clock(now), self.ts_recent));
        let repr = &mut self.out;
        repr.src_port = self.local_port;
        repr.dst_port = self.remote_port;
        repr.control = control;
        repr.seq_number = seq;
        repr.ack_number = ack_number;
        repr.window_len = window;
        repr.window_scale = None;
        repr.max_seg_size = None;
        repr.sack_permitted = false;
        repr.timestamp = timestamp;
        repr.payload_len = len;
        repr.sack_ranges = [None; 3];
        if self.sack_ok && !syn && !self.ooo.is_empty() {
            // RFC 2018 §4: the block with the newest segment first, then the others
            // newest first.
            // The three most recently touched, as a stable sort by `touched` (newest
            // first) would give them, without allocating for the sort.
            let mut newest: [Option<&OooBlock>; 3] = [None; 3];
            for b in &self.ooo {
                if let Some(i) = newest.iter().position(|n| n.is_none_or(|n| b.touched > n.touched)) {
                    newest[i..].rotate_right(1);
                    newest[i] = Some(b);
                }
            }
            for (slot, b) in repr.sack_ranges.iter_mut().zip(newest.into_iter().flatten()) {
                *slot = Some((b.start.as_u32(), b.end.as_u32()));
            }
        }
    }

    /// SYN options: MSS always; WS, SACK-Permitted, TS as configured, and on a
    /// SYN-ACK only those the peer offered (RFC 7323 §1.3, RFC 2018 §2).
    pub(super) fn syn_options(&mut self, now: u64) {
        let repr = &mut self.out;
        repr.max_seg_size = Some(self.cfg.mss);
        let active = self.state == State::SynSent;
        if self.cfg.window_scaling && (active || self.ws_ok) {
            repr.window_scale = Some(self.rcv_shift);
        }
        repr.sack_permitted = self.cfg.sack && (active || self.sack_ok);
        if self.cfg.timestamps && (active || self.ts_ok) {
            repr.timestamp = Some((Self::ts_clock(now), self.ts_recent));
        }
    }

    pub(super) fn request_fin(&mut self) {
        if self.fin_seq.is_none() {
            self.fin_seq = Some(self.tx_base() + self.tx_len.min(1 << 30) as usize);
        }
    }

    /// The octets queued to send from the first unacknowledged one on (bytes mode), with
    /// that octet's sequence number; and the octets received in order and not yet read,
    /// with the sequence number they end at (RCV.NXT). For conservation's census of a
    /// stream that carries packets (OpenVPN over TCP).
    pub fn stream_buffers(&self) -> (StreamBuffer<'_>, StreamBuffer<'_>) {
        ((self.tx_base(), &self.tx), (self.rcv_nxt, &self.rx))
    }

    /// Sequence number of the first unacknowledged data octet (past the SYN).
    pub(super) fn tx_base(&self) -> SeqNumber {
        if self.snd_una == self.iss {
            self.iss + 1
        } else {
            self.snd_una
        }
    }

    pub(super) fn sent_data_octets(&self) -> u64 {
        let base = self.tx_base();
        if self.snd_max > base {
            (self.snd_max - base) as u64
        } else {
            0
        }
    }

    /// A bulk writer with a low water mark (4.4BSD `sosend`): `acked` octets left the
    /// send buffer; it writes again, filling all the space, once the space reaches the
    /// mark (`so_snd.sb_lowat`), and never past the end of a sized transfer.
    pub(super) fn writer_refill(&mut self, acked: u64) {
        let Some(lowat) = self.cfg.send_low_water else { return };
        if self.bulk.is_none() {
            return;
        }
        self.unwritten += acked;
        self.writer_run(u64::from(lowat));
    }

    /// 4.4BSD `sosend` for a stream socket, one write call of `write_size` octets after
    /// another: it sleeps while the space is below both the rest of the call and the
    /// low water mark; awake, it writes as much of the call as the space takes.
    pub(super) fn writer_run(&mut self, lowat: u64) {
        let call = if self.cfg.write_size == 0 { u64::MAX } else { u64::from(self.cfg.write_size) };
        loop {
            // What the application still has to write, past what the buffer holds.
            let left = self.tx_len.saturating_sub(self.written_octets());
            if left == 0 || self.unwritten == 0 {
                return;
            }
            if self.call_left == 0 {
                self.call_left = call.min(left);
            }
            let r = self.call_left.min(left);
            if self.unwritten < r && self.unwritten < lowat {
                return;
            }
            let w = self.unwritten.min(r);
            self.unwritten -= w;
            self.call_left = r - w;
        }
    }

    /// Octets the bulk writer has put in the send buffer, counted from its first
    /// octet (`tx_base`): the buffer less the space not yet written, at most all.
    pub(super) fn written_octets(&self) -> u64 {
        (u64::from(self.cfg.send_buffer).saturating_sub(self.unwritten)).min(self.tx_len)
    }

    pub(super) fn drain_tx(&mut self, n: u64) {
        if self.bulk.is_none() {
            let n = (n as usize).min(self.tx.len());
            self.tx.drain(..n);
        }
        if self.bulk != Some(true) {
            self.tx_len = self.tx_len.saturating_sub(n);
        }
    }
}
