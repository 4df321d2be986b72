//! The receive side: in-order and out-of-order data, the FIN, delayed ACKs and the
//! window advertised (RFC 9293 §3.8.6.2's receiver SWS avoidance).

use super::*;

impl TcpSocket {
    /// Accepts segment text at `seq` (already found acceptable).
    pub(super) fn receive_data(&mut self, now: u64, seq: SeqNumber, payload: &[u8], push: bool) {
        let (mut seq, mut data) = (seq, payload);
        if seq < self.rcv_nxt {
            let skip = (self.rcv_nxt - seq).min(data.len());
            data = &data[skip..];
            seq = self.rcv_nxt;
        }
        // Trim to the window advertised.
        let right = self.rcv_adv.max(self.rcv_nxt);
        if seq + data.len() > right {
            data = &data[..right - seq];
        }
        self.rcv_mss = self.rcv_mss.max(payload.len() as u32);
        if data.is_empty() {
            // A duplicate: ACK at once so a lost ACK is repaired.
            self.ack_now = true;
            return;
        }
        if seq == self.rcv_nxt {
            self.deliver(data);
            let had_gap = !self.ooo.is_empty();
            while let Some(first) = self.ooo.first() {
                if first.start > self.rcv_nxt {
                    break;
                }
                let block = self.ooo.remove(0);
                if block.end > self.rcv_nxt {
                    let skip = self.rcv_nxt - block.start;
                    if self.sink {
                        self.stats.bytes_received += (block.end - self.rcv_nxt) as u64;
                    } else {
                        self.rx.extend(&block.data[skip..]);
                        self.stats.bytes_received += (block.data.len() - skip) as u64;
                    }
                    self.rcv_nxt = block.end;
                }
            }
            if had_gap {
                // RFC 5681 §4.2: ACK at once a segment that fills a gap.
                self.ack_now = true;
            } else if push && self.cfg.ack_on_push {
                // NetBSD tcp_input (TCP_REASS, header prediction): TH_PUSH → TF_ACKNOW.
                self.ack_now = true;
            } else {
                self.segs_unacked = self.segs_unacked.saturating_add(1);
                self.schedule_ack(now);
                if self.sink && self.cfg.window_update_on_read {
                    self.sink_window_update();
                }
            }
        } else {
            self.insert_ooo(seq, data);
            // RFC 5681 §4.2: an out-of-order segment is ACKed at once (a dup ACK).
            self.ack_now = true;
        }
    }

    /// A sink stands for an application that reads every octet at once; the read
    /// opens the window, and the window update a real stack sends then is sent here:
    /// 4.4BSD's `tcp_output` rule, an update when the right edge can move by half the
    /// buffer. That matters when a segment or two fill the buffer (seed 001's 9180 and
    /// 64 K MTUs with small buffers): without it the receiver waits for its delayed-ACK
    /// timer after each. (BSD's other clause, two segments, is the delayed-ACK rule
    /// already applied by `schedule_ack`.) Only while the window the peer holds is
    /// under two segments, as Linux's `__tcp_cleanup_rbuf` waits until the offered
    /// window has shrunk: a large buffer at the start, when the SYN's unscaled window
    /// is all the peer knows, does not turn the first segment's ACK into an immediate one.
    pub(super) fn sink_window_update(&mut self) {
        let edge = self.rcv_nxt + self.rcv_free() as usize;
        let offered = if self.rcv_adv > self.rcv_nxt { (self.rcv_adv - self.rcv_nxt) as u64 } else { 0 };
        if edge > self.rcv_adv
            && 2 * (edge - self.rcv_adv) as u64 >= u64::from(self.cfg.recv_buffer)
            && offered < 2 * u64::from(self.cfg.mss)
        {
            self.ack_now = true;
        }
    }

    pub(super) fn deliver(&mut self, data: &[u8]) {
        if !self.sink {
            self.rx.extend(data);
        }
        self.stats.bytes_received += data.len() as u64;
        self.rcv_nxt += data.len();
    }

    /// RFC 5681 §4.2 / RFC 1122 §4.2.3.2: ACK every `delayed_ack_segments` full-sized
    /// segments, else within the delayed-ACK timeout.
    pub(super) fn schedule_ack(&mut self, now: u64) {
        let Some(delay) = self.cfg.delayed_ack else {
            self.ack_now = true;
            return;
        };
        let unacked = (self.rcv_nxt - self.last_ack_sent) as u64;
        let due = if self.cfg.delayed_ack_any_segment {
            self.segs_unacked >= self.cfg.delayed_ack_segments.max(1)
        } else {
            unacked >= u64::from(self.cfg.delayed_ack_segments.max(1)) * u64::from(self.rcv_mss)
        };
        if due {
            self.ack_now = true;
        } else if self.delack_at.is_none() {
            let d = delay.as_nanos().max(1);
            // 4.4BSD: the next tick of tcp_fasttimo's host-wide clock, else a full delay.
            self.delack_at = Some(if self.cfg.delayed_ack_clock { (now / d + 1) * d } else { now + d });
        }
    }

    pub(super) fn insert_ooo(&mut self, seq: SeqNumber, data: &[u8]) {
        let (lo, hi) = (seq, seq + data.len());
        let (mut start, mut end) = (lo, hi);
        // The blocks this one touches are merged into it; their data is kept aside
        // only when there is data (a sink keeps none, so merging allocates nothing).
        let keep_data = !self.sink;
        let mut merged: Vec<OooBlock> = Vec::new();
        self.ooo.retain(|b| {
            if b.end < lo || b.start > hi {
                true
            } else {
                start = start.min(b.start);
                end = end.max(b.end);
                if keep_data {
                    merged.push(b.clone());
                }
                false
            }
        });
        let mut bytes = Vec::new();
        if !self.sink {
            bytes = vec![0; end - start];
            for b in &merged {
                let at = b.start - start;
                bytes[at..at + b.data.len()].copy_from_slice(&b.data);
            }
            let at = seq - start;
            bytes[at..at + data.len()].copy_from_slice(data);
        }
        self.ooo_clock += 1;
        let block = OooBlock { start, end, data: bytes, touched: self.ooo_clock };
        let at = self.ooo.iter().position(|b| b.start > start).unwrap_or(self.ooo.len());
        self.ooo.insert(at, block);
    }

    /// Takes the peer's FIN once every octet before it has arrived.
    pub(super) fn consume_fin(&mut self, now: u64) {
        let Some(fin) = self.rx_fin else { return };
        if self.rcv_nxt != fin {
            return;
        }
        self.rcv_nxt = fin + 1;
        self.ack_now = true;
        match self.state {
            State::SynReceived | State::Established => self.state = State::CloseWait,
            State::FinWait1 => {
                if self.fin_acked() {
                    self.enter_time_wait(now);
                } else {
                    self.state = State::Closing;
                }
            }
            State::FinWait2 => self.enter_time_wait(now),
            _ => {}
        }
    }

    /// The window field to send; moves `rcv_adv`. Receiver SWS avoidance (RFC 1122
    /// §4.2.3.3): the right edge moves only by min(buffer/2, MSS) or more, and never
    /// back (RFC 9293 §3.8.6.2.2). A SYN's window is never scaled (RFC 7323 §2.2).
    #[inline(always)]
    pub(super) fn advertise_window(&mut self, syn: bool) -> u16 {
        let free = self.rcv_free().min(1 << 30) as usize;
        if syn {
            let win = free.min(usize::from(u16::MAX));
            if self.state != State::SynSent {
                self.rcv_adv = self.rcv_adv.max(self.rcv_nxt + win);
            }
            return win as u16;
        }
        let mut edge = self.rcv_nxt + free;
        let threshold = (self.cfg.recv_buffer / 2).min(u32::from(self.cfg.mss)) as usize;
        // Also from a closed window: it stays closed until it can open by the
        // threshold (RFC 9293 §3.8.6.2.2), else it would open by a few octets.
        if edge > self.rcv_adv && edge - self.rcv_adv < threshold {
            edge = self.rcv_adv;
        }
        let edge = edge.max(self.rcv_adv);
        let win = ((edge - self.rcv_nxt) >> self.rcv_shift).min(usize::from(u16::MAX));
        self.rcv_adv = self.rcv_adv.max(self.rcv_nxt + (win << self.rcv_shift));
        win as u16
    }

    /// Free receive buffer, bounded by the fixed maximum window.
    pub(super) fn rcv_free(&self) -> u64 {
        let used = if self.sink { 0 } else { self.rx.len() as u64 };
        let free = u64::from(self.cfg.recv_buffer).saturating_sub(used);
        free.min(self.cfg.max_window.map_or(u64::MAX, u64::from))
    }

    /// The shift that fits the largest window we may offer in 16 bits (RFC 7323 §2.3).
    pub(super) fn wanted_rcv_shift(&self) -> u8 {
        if !self.cfg.window_scaling {
            return 0;
        }
        let limit = u64::from(self.cfg.recv_buffer).min(self.cfg.max_window.map_or(u64::MAX, u64::from));
        let mut shift = 0;
        while shift < MAX_WINDOW_SHIFT && limit >> shift > u64::from(u16::MAX) {
            shift += 1;
        }
        shift
    }
}
