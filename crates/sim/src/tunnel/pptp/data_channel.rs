//! PPTP's data channel: enhanced GRE (RFC 2637 §4) carrying PPP, with sequence numbers,
//! acknowledgements and the sliding window of §4.4.

use std::collections::VecDeque;

use wire::gre;

use super::*;

/// Where an acknowledgment due has no data packet to ride on, it goes alone after this
/// delay, or at once when half our receive window is unacknowledged (RFC 2637 §4.2.5
/// allows either; the delay is this model's choice, TCP's 200 ms delayed-ACK bound of
/// Linux, and is well below the sender's initial time-out).
pub const ACK_DELAY_NS: u64 = 200_000_000;

/// The Acknowledgment Time-Out before any round trip was measured: RFC 2637 §4.4 gives
/// none; RFC 6298 §2.1's initial RTO of 1 s is used.
pub const INITIAL_ATO_NS: u64 = SECOND;

/// Data packets held while the transmit window is closed, in multiples of the peer's
/// window; more are dropped ("PPTP transmit window full"). The model's choice.
pub const PENDING_WINDOWS: usize = 2;

/// Counters of a data channel.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct GreCounters {
    pub data_sent: u64,
    pub ack_only_sent: u64,
    pub data_received: u64,
    /// §4.3: duplicates and late (out-of-sequence) packets discarded.
    pub out_of_sequence: u64,
    /// §4.4: acknowledgment time-outs (each halves the window).
    pub timeouts: u64,
    /// Packets dropped because the window stayed closed with the hold queue full.
    pub window_drops: u64,
    /// Octets of GRE packets sent and taken (header included), for CPU accounting.
    pub bytes: u64,
}

/// The enhanced-GRE data channel of one call, one side (RFC 2637 §4).
#[derive(Debug)]
pub struct Gre {
    /// The peer's Call ID: the Key of every packet we send (§4.1).
    pub peer_call_id: u16,
    /// Our Call ID: what the peer puts in the packets it sends us.
    pub call_id: u16,
    /// Our receive window (what we announced).
    recv_window: u16,
    /// The peer's receive window: our transmit window's ceiling (§4.2.1).
    peer_window: u16,
    /// The transmit window now (§4.2.1-§4.2.3).
    pub tx_window: u16,
    /// Packets acknowledged since the window last changed (§4.2.3).
    acked_in_window: u32,
    next_seq: u32,
    /// Sent and not yet acknowledged: (sequence, time sent).
    outstanding: VecDeque<(u32, u64)>,
    /// PPP frames waiting for the window to open.
    pending: VecDeque<Vec<u8>>,
    /// The last sequence number received and taken (§4.3), and the last acknowledged.
    last_rx: Option<u32>,
    last_acked: Option<u32>,
    ack_due: Option<u64>,
    /// §4.4.1 state.
    rtt: Option<(f64, f64)>,
    pub ato_ns: u64,
    pub counters: GreCounters,
}

/// `a` is after `b` in 32-bit sequence space.
fn seq_after(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) > 0
}

impl Gre {
    pub fn new(call_id: u16, peer_call_id: u16, recv_window: u16, peer_window: u16) -> Gre {
        let peer_window = peer_window.max(1);
        Gre {
            peer_call_id,
            call_id,
            recv_window: recv_window.max(1),
            peer_window,
            // RFC 2637 §4.2.1: half the peer's size, at least one packet.
            tx_window: peer_window.div_ceil(2).max(1),
            acked_in_window: 0,
            next_seq: 0,
            outstanding: VecDeque::new(),
            pending: VecDeque::new(),
            last_rx: None,
            last_acked: None,
            ack_due: None,
            rtt: None,
            ato_ns: INITIAL_ATO_NS,
            counters: GreCounters::default(),
        }
    }

    fn ack_value(&mut self) -> Option<u32> {
        let ack = self.last_rx.filter(|&r| self.last_acked != Some(r))?;
        self.last_acked = Some(ack);
        self.ack_due = None;
        Some(ack)
    }

    fn emit(&mut self, now: u64, frame: &[u8], out: &mut Vec<Vec<u8>>) {
        let seq = self.next_seq;
        self.next_seq = self.next_seq.wrapping_add(1);
        let ack = self.ack_value();
        let mut packet = Vec::with_capacity(16 + frame.len());
        gre::Repr::pptp(self.peer_call_id, 0, Some(seq), ack).encapsulate(frame, &mut packet);
        self.outstanding.push_back((seq, now));
        self.counters.data_sent += 1;
        self.counters.bytes += packet.len() as u64;
        out.push(packet);
    }

    /// Sends a PPP frame now if the window is open, else holds it (§4.2.1: "the
    /// transmitter stops sending packets when the number of packets awaiting
    /// acknowledgement is equal to the current window size"). `Err` when dropped.
    pub fn send(&mut self, now: u64, frame: Vec<u8>, out: &mut Vec<Vec<u8>>) -> Result<(), String> {
        if self.outstanding.len() < usize::from(self.tx_window) && self.pending.is_empty() {
            self.emit(now, &frame, out);
            return Ok(());
        }
        if self.pending.len() >= PENDING_WINDOWS * usize::from(self.peer_window) {
            self.counters.window_drops += 1;
            return Err("PPTP transmit window full (RFC 2637 §4.2.1) and its hold queue too".into());
        }
        self.pending.push_back(frame);
        Ok(())
    }

    fn release(&mut self, now: u64, out: &mut Vec<Vec<u8>>) {
        while self.outstanding.len() < usize::from(self.tx_window) {
            let Some(frame) = self.pending.pop_front() else { break };
            self.emit(now, &frame, out);
        }
    }

    /// §4.4.1 with the sample of the packet an acknowledgment names (§4.2.5).
    fn sample(&mut self, sample_ns: u64) {
        let s = sample_ns as f64;
        let (rtt, dev) = match self.rtt {
            None => (s, s / 2.0),
            Some((rtt, dev)) => {
                let diff = s - rtt;
                (rtt + diff / 8.0, dev + (diff.abs() - dev) / 4.0)
            }
        };
        self.rtt = Some((rtt, dev));
        self.ato_ns = (rtt + 4.0 * dev).ceil() as u64;
    }

    /// A GRE packet from the peer (its GRE header and PPP frame): returns the PPP frame
    /// of a data packet taken, `Ok(None)` for an acknowledgment alone or a packet
    /// discarded as out of sequence, `Err` for one that is not this call's.
    pub fn input(&mut self, now: u64, bytes: &[u8], out: &mut Vec<Vec<u8>>) -> Result<Option<Vec<u8>>, String> {
        let packet = gre::Packet::new_checked(bytes).map_err(|e| format!("GRE: {e}"))?;
        let repr = gre::Repr::parse(&packet).map_err(|e| format!("enhanced GRE: {e}"))?;
        if repr.version != gre::Version::Enhanced || repr.call_id() != Some(self.call_id) {
            return Err(format!("GRE packet for no PPTP call of ours (call id {:?})", repr.call_id()));
        }
        if let Some(ack) = repr.ack {
            let mut newest = None;
            while let Some(&(seq, at)) = self.outstanding.front() {
                if seq_after(seq, ack) {
                    break;
                }
                self.outstanding.pop_front();
                self.acked_in_window += 1;
                newest = Some((seq, at));
            }
            if let Some((seq, at)) = newest.filter(|&(seq, _)| seq == ack) {
                let _ = seq;
                self.sample(now.saturating_sub(at));
            }
            // §4.2.3: a window's worth acknowledged opens the window by one packet.
            if self.acked_in_window >= u32::from(self.tx_window) && self.tx_window < self.peer_window {
                self.tx_window += 1;
                self.acked_in_window = 0;
            }
            self.release(now, out);
        }
        let len = repr.payload_length().map_or(0, usize::from);
        let Some(seq) = repr.sequence else { return Ok(None) };
        if self.last_rx.is_some_and(|last| !seq_after(seq, last)) {
            self.counters.out_of_sequence += 1;
            return Ok(None);
        }
        self.last_rx = Some(seq);
        self.counters.data_received += 1;
        self.counters.bytes += bytes.len() as u64;
        let unacked = self.last_acked.map_or(seq.wrapping_add(1), |a| seq.wrapping_sub(a));
        if unacked >= u32::from(self.recv_window).div_ceil(2) {
            self.ack_due = Some(now);
        } else {
            self.ack_due.get_or_insert(now + ACK_DELAY_NS);
        }
        Ok(Some(packet.payload()[..len].to_vec()))
    }

    pub fn poll_at(&self) -> Option<u64> {
        let timeout = self.outstanding.front().map(|&(_, at)| at + self.ato_ns);
        [self.ack_due, timeout].into_iter().flatten().min()
    }

    /// Sends an acknowledgment alone if one is due, and handles a time-out (§4.2.2:
    /// the window halves; the packets given up on stop counting against it).
    pub fn on_timer(&mut self, now: u64, out: &mut Vec<Vec<u8>>) {
        if self.outstanding.front().is_some_and(|&(_, at)| at + self.ato_ns <= now) {
            self.counters.timeouts += 1;
            self.tx_window = self.tx_window.div_ceil(2).max(1);
            self.acked_in_window = 0;
            self.outstanding.clear();
            self.release(now, out);
        }
        if self.ack_due.is_some_and(|t| t <= now) {
            if let Some(ack) = self.ack_value() {
                let mut packet = Vec::with_capacity(12);
                gre::Repr::pptp(self.peer_call_id, 0, None, Some(ack)).encapsulate(&[], &mut packet);
                self.counters.ack_only_sent += 1;
                self.counters.bytes += packet.len() as u64;
                out.push(packet);
            }
            self.ack_due = None;
        }
    }
}
