//! The receivers' side: the end of a transmission at every member (collisions, frame
//! errors, NAV, EIFS), responses due SIFS later, and delivery with duplicate detection.

use super::*;

impl Bss {
    // -- receivers -------------------------------------------------------------

    pub(super) fn transmission_ended(&mut self, t: Nanos, id: u64) {
        let index = self.on_air.iter().position(|tx| tx.id == id).expect("an ending transmission is on the air");
        let tx = self.on_air.swap_remove(index);
        let n = self.members.len();
        // Whether the frame's addressee took it (for a frame no Ack will confirm).
        let mut addressee_got = false;
        for r in 0..n {
            if r == tx.sender {
                continue;
            }
            addressee_got |= self.received_by(t, r, &tx);
        }
        self.sender_after(t, &tx, addressee_got);
    }

    /// The end of `tx` at member `r`, not its sender: unheard, missed while transmitting,
    /// lost (collision, frame error), overheard (NAV), or received and answered. Returns
    /// whether `r` is the addressee and took the data frame.
    fn received_by(&mut self, t: Nanos, r: usize, tx: &OnAir) -> bool {
        let hears = self.hears[r][tx.sender];
        let for_r = tx.receiver == Some(r);
        let awaited = for_r
            && matches!(
                self.members[r].state,
                State::Exchanging { awaiting: Some(a), .. } if a.kind == tx.kind
            );
        if !hears {
            return false; // the response timeout, if any, decides
        }
        if tx.deaf[r] {
            // Transmitting during the frame: never received, no EIFS either.
            if awaited {
                self.exchange_failed(t, r);
            }
            return false;
        }
        let is_data_for_r = tx.kind == FrameKind::Data && (for_r || tx.receiver.is_none());
        let member = &mut self.members[r];
        let mut ok = !tx.lost[r];
        if !ok && is_data_for_r {
            member.stats.rx_collisions += 1;
        }
        if ok
            && tx.kind == FrameKind::Data
            && member.frame_error_rate > 0.0
            && member.error_stream.bernoulli(member.frame_error_rate)
        {
            ok = false;
            if is_data_for_r {
                member.stats.rx_errors += 1;
            }
        }
        member.dcf.notify_rx_end(t, ok);
        if !ok {
            if awaited {
                self.exchange_failed(t, r);
            }
            return false;
        }
        let addressed_to_r = for_r || (tx.kind == FrameKind::Data && tx.receiver.is_none());
        if !addressed_to_r {
            if tx.nav > 0 {
                member.dcf.notify_nav(t, t + tx.nav);
            }
            return false;
        }
        self.respond(t, r, tx, for_r, awaited);
        tx.kind == FrameKind::Data && for_r
    }

    /// Member `r` received `tx` whole and is among its addressees: a data frame is
    /// delivered (and acknowledged SIFS later), an RTS answered with CTS when the NAV is
    /// idle, an awaited CTS or Ack moves the exchange on.
    fn respond(&mut self, t: Nanos, r: usize, tx: &OnAir, for_r: bool, awaited: bool) {
        let sifs = self.params.phy.sifs;
        match tx.kind {
            FrameKind::Data => {
                self.deliver(t, r, tx);
                if for_r && self.params.link_acks {
                    let ack = Scheduled::Ack { to: tx.sender };
                    self.schedule(t + sifs, PHASE_SEND, Event::Send(r, ack));
                }
            }
            FrameKind::Rts => {
                if !self.members[r].dcf.is_medium_busy(t) {
                    let phy = self.params.member_phy(tx.sender);
                    let cts_rate = phy.control_response_rate(self.rts_rate());
                    let cts = phy.response_time(CTS_LEN, cts_rate);
                    let nav = tx.nav.saturating_sub(sifs + cts);
                    let what = Scheduled::Cts { to: tx.sender, nav };
                    self.schedule(t + sifs, PHASE_SEND, Event::Send(r, what));
                }
            }
            FrameKind::Cts if awaited => {
                self.cancel_timeout(r);
                let member = &mut self.members[r];
                member.dcf.on_cts_received();
                if let State::Exchanging { plan, .. } = member.state {
                    member.state = State::Exchanging { plan, awaiting: None };
                }
                self.schedule(t + sifs, PHASE_SEND, Event::Send(r, Scheduled::Data));
            }
            FrameKind::Ack if awaited => self.exchange_succeeded(t, r),
            FrameKind::Cts | FrameKind::Ack | FrameKind::CtsToSelf => {}
        }
    }

    /// The sender's side of `tx`'s end, after the receivers (group frames: Delivered,
    /// then TxDone): wait for the response, or finish the exchange.
    fn sender_after(&mut self, t: Nanos, tx: &OnAir, addressee_got: bool) {
        let sender = tx.sender;
        match tx.kind {
            FrameKind::Data if tx.receiver.is_some() && self.params.link_acks => {
                self.await_response(t, sender, FrameKind::Ack)
            }
            FrameKind::Data => {
                if tx.receiver.is_some() && !addressee_got {
                    // No Ack will tell the sender; the medium knows it was lost.
                    self.outbox.push(BssEvent::Dropped {
                        member: sender,
                        mpdu: tx.mpdu.clone().unwrap_or_default(),
                        reason: DropReason::NotReceived,
                        delivered: false,
                    });
                }
                self.exchange_succeeded(t, sender)
            }
            FrameKind::Rts => self.await_response(t, sender, FrameKind::Cts),
            FrameKind::Cts | FrameKind::CtsToSelf | FrameKind::Ack => {}
        }
    }

    pub(super) fn deliver(&mut self, t: Nanos, r: usize, tx: &OnAir) {
        let mpdu = tx.mpdu.as_ref().expect("data frames carry their MPDU");
        if !is_data_mpdu(mpdu) {
            return; // a beacon: the receiving MAC consumes it
        }
        let member = &mut self.members[r];
        if tx.receiver.is_some() && is_data_mpdu(mpdu) {
            let sequence = u16::from_le_bytes([mpdu[22], mpdu[23]]) >> 4;
            let retry = mpdu[1] & RETRY_BIT != 0;
            let last = member.last_sequence_from[tx.sender].replace(sequence);
            if retry && last == Some(sequence) {
                member.stats.duplicates += 1;
                return;
            }
        }
        member.stats.received += 1;
        if tx.receiver.is_some() {
            // The sender's frame under exchange is the head of its queue.
            if let Some(head) = self.members[tx.sender].queue.front_mut() {
                head.delivered = true;
            }
        }
        self.outbox.push(BssEvent::Delivered { to: r, from: tx.sender, mpdu: mpdu.clone(), at: t });
    }
}
