//! The event loop and the sender's side: contention grants, exchange plans (RTS/CTS,
//! CTS-to-self, data, Ack), transmissions, timeouts, retries and beacons.

use super::*;

impl Bss {
    // -- the event loop ------------------------------------------------------

    pub(super) fn next_instant(&self) -> Option<Nanos> {
        let own = self.events.keys().next().map(|k| k.0);
        let grants =
            self.members.iter().filter(|m| matches!(m.state, State::Contending)).filter_map(|m| m.dcf.poll_at()).min();
        match (own, grants) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    pub(super) fn advance_to(&mut self, now: Nanos) {
        while let Some(t) = self.next_instant().filter(|&t| t <= now) {
            self.step(t.max(self.now));
        }
        self.now = self.now.max(now);
    }

    /// Everything due at `t`: the medium's events in key order, then DCF grants.
    pub(super) fn step(&mut self, t: Nanos) {
        self.now = t;
        let mut progressed = false;
        while let Some(entry) = self.events.first_entry() {
            if entry.key().0 > t {
                break;
            }
            let (_, event) = entry.remove_entry();
            progressed = true;
            match event {
                Event::TxEnd(id) => self.transmission_ended(t, id),
                Event::Timeout(member) => self.response_timed_out(t, member),
                Event::Send(member, what) => self.send_scheduled(t, member, what),
                Event::Tbtt => self.beacon_due(t),
            }
        }
        for m in 0..self.members.len() {
            let member = &mut self.members[m];
            if !matches!(member.state, State::Contending) || member.dcf.poll_at().is_none_or(|at| at > t) {
                continue;
            }
            if !member.dcf.poll(t) {
                continue;
            }
            progressed = true;
            if member.on_air_until > t {
                // Our own Ack or CTS is on the air: the access is lost; back off.
                member.dcf.cancel_access(t);
                member.request_access(t);
            } else {
                self.start_exchange(t, m);
            }
        }
        assert!(progressed, "BSS medium: nothing to do at {t} ns although due");
    }

    pub(super) fn schedule(&mut self, at: Nanos, phase: u8, event: Event) -> EventKey {
        let key = (at, phase, self.next_seq);
        self.next_seq += 1;
        self.events.insert(key, event);
        key
    }

    // -- senders -------------------------------------------------------------

    pub(super) fn plan(&self, m: usize, queued: &Queued) -> Plan {
        let p = &self.params;
        let phy = p.member_phy(m);
        let psdu_len = queued.mpdu.len() + FCS_LEN;
        let rate = match (&p.beacon, queued.beacon) {
            (Some(b), true) => b.rate,
            _ if queued.dest.is_some() => p.rate,
            _ => p.group_rate(),
        };
        let protection = if queued.dest.is_some() && psdu_len > p.rts_threshold {
            Protection::RtsCts
        } else {
            phy.protection_for(rate)
        };
        // The rate of RTS and CTS-to-self, as PhyParams::data_exchange picks it.
        let protection_rate = match rate.class() {
            ModulationClass::ErpOfdm if protection != Protection::None => phy.protection_rate(),
            _ => phy.control_response_rate(rate),
        };
        Plan {
            psdu_len,
            dest: queued.dest,
            rate,
            protection_rate,
            protection,
            timeline: phy.data_exchange(psdu_len, rate, protection, 0),
            ack_timeout: phy.ack_timeout(rate),
            cts_timeout: phy.ack_timeout(protection_rate),
        }
    }

    /// The DCF granted `m` the medium at `t`: the first frame of its exchange goes.
    pub(super) fn start_exchange(&mut self, t: Nanos, m: usize) {
        let head = self.members[m].queue.front().expect("contending with a frame");
        let plan = self.plan(m, head);
        let member = &mut self.members[m];
        let head = member.queue.front_mut().expect("contending with a frame");
        if !head.beacon {
            member.stats.attempts += 1;
        }
        if head.attempts > 0 {
            member.stats.retries += 1;
        }
        head.attempts += 1;
        member.state = State::Exchanging { plan, awaiting: None };
        let ex = plan.timeline;
        match plan.protection {
            Protection::RtsCts => {
                let rts = ex.rts.expect("an RTS/CTS timeline has an RTS");
                let nav = ex.duration_rts_us.unwrap_or(0) as Nanos * MICROS;
                self.transmit(t, m, FrameKind::Rts, plan.dest, rts, nav, plan.protection_rate, None);
            }
            Protection::CtsToSelf => {
                let cts = ex.cts.expect("a CTS-to-self timeline has a CTS");
                let nav = match plan.dest {
                    Some(_) => ex.duration_cts_us.unwrap_or(0) as Nanos * MICROS,
                    None => ex.sifs + ex.data,
                };
                self.transmit(t, m, FrameKind::CtsToSelf, None, cts, nav, plan.protection_rate, None);
                self.schedule(t + cts + ex.sifs, PHASE_SEND, Event::Send(m, Scheduled::Data));
            }
            Protection::None => self.transmit_data(t, m, plan),
        }
    }

    pub(super) fn transmit_data(&mut self, t: Nanos, m: usize, plan: Plan) {
        // Without link acks nothing follows the frame: Duration 0, as a group frame's.
        let nav = if self.params.link_acks { plan.data_nav() } else { 0 };
        let head = self.members[m].queue.front_mut().expect("exchanging a frame");
        if is_data_mpdu(&head.mpdu) {
            let duration_us = (nav / MICROS) as u16;
            head.mpdu[2..4].copy_from_slice(&duration_us.to_le_bytes());
        }
        if head.beacon {
            // The Timestamp is the TSF at the transmission (§9.4.1.10, §11.1.3.1); the
            // TSF here counts µs from time 0.
            head.mpdu[MIN_DATA_HEADER..MIN_DATA_HEADER + 8].copy_from_slice(&(t / MICROS).to_le_bytes());
        }
        let mpdu = head.mpdu.clone();
        self.transmit(t, m, FrameKind::Data, plan.dest, plan.timeline.data, nav, plan.rate, Some(mpdu));
    }

    /// Puts a frame on the air: collisions with what is already there, busy medium
    /// for every member that hears it, and its end scheduled.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn transmit(
        &mut self,
        t: Nanos,
        sender: usize,
        kind: FrameKind,
        receiver: Option<usize>,
        duration: Nanos,
        nav: Nanos,
        rate: Rate,
        mpdu: Option<Vec<u8>>,
    ) {
        let n = self.members.len();
        if self.capture {
            // The preamble of the exchange's starter: the sender of a data frame or RTS,
            // the receiver of an Ack or CTS.
            let preamble = match (kind, receiver) {
                (FrameKind::Ack | FrameKind::Cts, Some(starter)) => self.params.member_phy(starter).control_preamble,
                (FrameKind::Ack | FrameKind::Cts, None) => self.params.phy.control_preamble,
                _ => self.params.member_phy(sender).preamble,
            };
            // A 1 Mb/s PPDU always has the long format (§16.2.2.3); OFDM has neither.
            let short_preamble =
                preamble == Preamble::Short && rate.class() == ModulationClass::DsssCck && rate != Rate::Dsss1;
            self.air.push(AirFrame {
                start: t,
                sender,
                receiver,
                kind,
                duration_us: nav.div_ceil(MICROS).min(32_767) as u16,
                rate,
                short_preamble,
                mpdu: mpdu.clone(),
            });
        }
        let end = t + duration;
        let mut lost = vec![false; n];
        let mut deaf = vec![false; n];
        deaf[sender] = true;
        for other in &mut self.on_air {
            // Each transmitter is deaf to the other's frame; a third member that hears
            // both loses both.
            other.deaf[sender] = true;
            deaf[other.sender] = true;
            for (r, lost_at_r) in lost.iter_mut().enumerate() {
                if r != sender && r != other.sender && self.hears[r][sender] && self.hears[r][other.sender] {
                    other.lost[r] = true;
                    *lost_at_r = true;
                }
            }
        }
        let id = self.next_tx_id;
        self.next_tx_id += 1;
        self.on_air.push(OnAir { id, sender, kind, receiver, nav, mpdu, lost, deaf });
        let member = &mut self.members[sender];
        member.dcf.notify_tx_start(t, duration);
        member.on_air_until = end;
        member.stats.airtime_ns += duration;
        for r in 0..n {
            if r != sender && self.hears[r][sender] {
                self.members[r].dcf.notify_busy_start(t, end);
            }
        }
        self.busy_ns += end.saturating_sub(t.max(self.busy_until));
        self.busy_until = self.busy_until.max(end);
        self.schedule(end, PHASE_TX_END, Event::TxEnd(id));
    }

    pub(super) fn send_scheduled(&mut self, t: Nanos, m: usize, what: Scheduled) {
        let sifs_response = !matches!(what, Scheduled::Data);
        if sifs_response && self.members[m].on_air_until > t {
            return; // already transmitting: the response cannot go
        }
        match what {
            Scheduled::Ack { to } => {
                // In the preamble of the exchange's starter (`member_phy`).
                let phy = self.params.member_phy(to);
                let ack = phy.ack_time(self.params.rate);
                let rate = phy.control_response_rate(self.params.rate);
                self.transmit(t, m, FrameKind::Ack, Some(to), ack, 0, rate, None);
            }
            Scheduled::Cts { to, nav } => {
                let phy = self.params.member_phy(to);
                let cts_rate = phy.control_response_rate(self.rts_rate());
                let cts = phy.response_time(CTS_LEN, cts_rate);
                self.transmit(t, m, FrameKind::Cts, Some(to), cts, nav, cts_rate, None);
            }
            Scheduled::Data => {
                if let State::Exchanging { plan, .. } = self.members[m].state {
                    self.transmit_data(t, m, plan);
                }
            }
        }
    }

    /// The rate RTS frames go at (unicast data at the BSS rate).
    pub(super) fn rts_rate(&self) -> Rate {
        let p = &self.params;
        match p.rate.class() {
            ModulationClass::ErpOfdm => p.phy.protection_rate(),
            ModulationClass::DsssCck => p.phy.control_response_rate(p.rate),
        }
    }

    pub(super) fn await_response(&mut self, t: Nanos, m: usize, kind: FrameKind) {
        let State::Exchanging { plan, .. } = self.members[m].state else {
            return;
        };
        let wait = match kind {
            FrameKind::Cts => plan.cts_timeout,
            _ => plan.ack_timeout,
        };
        let key = self.schedule(t + wait, PHASE_TIMEOUT, Event::Timeout(m));
        self.members[m].state = State::Exchanging { plan, awaiting: Some(Awaiting { kind, timeout: Some(key) }) };
    }

    pub(super) fn response_timed_out(&mut self, t: Nanos, m: usize) {
        let State::Exchanging { plan, awaiting: Some(awaiting) } = self.members[m].state else {
            return;
        };
        let response_on_air =
            self.on_air.iter().any(|tx| tx.receiver == Some(m) && tx.kind == awaiting.kind && self.hears[m][tx.sender]);
        if response_on_air {
            // A response started in time: its end decides (§10.3.2.9).
            self.members[m].state = State::Exchanging { plan, awaiting: Some(Awaiting { timeout: None, ..awaiting }) };
        } else {
            self.exchange_failed(t, m);
        }
    }

    pub(super) fn cancel_timeout(&mut self, m: usize) {
        if let State::Exchanging { awaiting: Some(Awaiting { timeout: Some(key), .. }), .. } = self.members[m].state {
            self.events.remove(&key);
        }
    }

    pub(super) fn exchange_succeeded(&mut self, t: Nanos, m: usize) {
        self.cancel_timeout(m);
        let member = &mut self.members[m];
        let State::Exchanging { plan, .. } = member.state else {
            return;
        };
        member.dcf.on_tx_success(t, plan.psdu_len, Member::draw(&mut member.backoff_stream));
        let sent = member.queue.pop_front().expect("exchanging a frame");
        if sent.beacon {
            member.stats.beacons += 1;
        } else {
            member.stats.frames_sent += 1;
        }
        self.outbox.push(BssEvent::TxDone { member: m, ok: true });
        self.next_frame(t, m);
    }

    pub(super) fn exchange_failed(&mut self, t: Nanos, m: usize) {
        self.cancel_timeout(m);
        let member = &mut self.members[m];
        let State::Exchanging { plan, awaiting: Some(awaiting) } = member.state else {
            return;
        };
        let attempt = match awaiting.kind {
            FrameKind::Cts => FailedAttempt::Rts,
            _ => FailedAttempt::Mpdu { mpdu_len: plan.psdu_len },
        };
        let after = member.dcf.on_tx_failure(t, attempt, Member::draw(&mut member.backoff_stream));
        match after {
            AfterFailure::Retry => {
                let head = member.queue.front_mut().expect("exchanging a frame");
                if is_data_mpdu(&head.mpdu) {
                    head.mpdu[1] |= RETRY_BIT;
                }
            }
            AfterFailure::Discard => {
                let head = member.queue.pop_front().expect("exchanging a frame");
                member.stats.dropped += 1;
                self.outbox.push(BssEvent::Dropped {
                    member: m,
                    delivered: head.delivered,
                    mpdu: head.mpdu,
                    reason: DropReason::RetryLimit { attempts: head.attempts },
                });
                self.outbox.push(BssEvent::TxDone { member: m, ok: false });
            }
        }
        self.next_frame(t, m);
    }

    /// A TBTT: the AP's beacon becomes its next frame (§11.1.3.2), behind only a frame
    /// whose exchange has begun; the next TBTT is scheduled.
    pub(super) fn beacon_due(&mut self, t: Nanos) {
        let Some(beacon) = &self.params.beacon else { return };
        let (interval, mut mpdu) = (beacon.interval, beacon.mpdu.clone());
        self.schedule(t + interval, PHASE_SEND, Event::Tbtt);
        let ap = &mut self.members[0];
        if ap.queue.iter().any(|q| q.beacon) {
            return; // the last one has not gone yet
        }
        // One modulo-4096 counter numbers management and non-QoS data frames (§10.3.2.14.2).
        let sequence_control = ap.next_sequence << 4;
        mpdu[22..24].copy_from_slice(&sequence_control.to_le_bytes());
        ap.next_sequence = (ap.next_sequence + 1) % SEQUENCE_MODULUS;
        let queued = Queued { beacon: true, mpdu, dest: None, attempts: 0, delivered: false };
        let at = match ap.state {
            State::Idle => 0,
            State::Contending if ap.queue.front().is_some_and(|h| h.attempts == 0) => 0,
            _ => 1,
        };
        ap.queue.insert(at.min(ap.queue.len()), queued);
        if matches!(ap.state, State::Idle) {
            ap.request_access(t);
        }
    }

    pub(super) fn next_frame(&mut self, t: Nanos, m: usize) {
        let member = &mut self.members[m];
        if member.queue.is_empty() {
            member.state = State::Idle;
        } else {
            member.request_access(t);
        }
    }
}
