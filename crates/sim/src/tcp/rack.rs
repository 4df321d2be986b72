//! RACK-TLP loss detection, RFC 8985: the per-segment transmission record and the
//! time-based loss inference of RACK (§6), with the state of Tail Loss Probe (§7).
//!
//! RACK keeps, for every segment sent and not cumulatively acknowledged, when it was
//! last (re)transmitted (§6.1 `Segment.xmit_ts`). On each ACK it remembers the most
//! recently *sent* segment that has been delivered (`RACK.xmit_ts`, `RACK.end_seq`,
//! `RACK.rtt`, §6.2 step 2), and declares lost every segment sent before it whose
//! time has passed by more than a reordering window (step 5):
//!
//! `Segment.xmit_ts + RACK.rtt + RACK.reo_wnd <= now`.
//!
//! Because the test is on transmission *times*, a retransmission that is lost again
//! is found as soon as something sent after it is SACKed, and a single SACKed probe
//! at the tail (TLP) reveals the losses before it, where RFC 6675's DupThresh needs
//! three later segments and a lost retransmission otherwise waits for the RTO.
//!
//! The reordering window (§6.2 step 4) is `min(reo_wnd_mult · min_RTT / 4, SRTT)`, or
//! zero while no reordering has been seen and the sender is in recovery or has at
//! least DupThresh segments SACKed. Its adaptation by DSACK rounds (`reo_wnd_mult`
//! growing) is not modelled: the simulator's receivers send no DSACK (RFC 2883), so
//! `reo_wnd_mult` stays 1 and the window is the fixed min_RTT/4.
//!
//! The socket (`socket.rs`) uses the marks in RFC 6675's pipe and NextSeg() beside
//! IsLost(), starts a recovery on them, and lowers the window a second time when a
//! retransmission is found lost (RFC 5681 §4.3), once per round of retransmissions.
//!
//! Departures, as Linux (`tcp_rack_advance`, net/ipv4/tcp_recovery.c) does them: a
//! retransmitted segment's delivery is ambiguous when its RTT is below min_RTT and is
//! then ignored (§6.2 step 2's second test); the TSecr test (step 2's first) is not
//! made, since RFC 7323 §4.3 makes a receiver echo, for an out-of-order segment, the
//! timestamp of the last in-order one. min_RTT is the smallest sample of the
//! connection (Linux filters over 300 s, longer than any run here).

use std::collections::VecDeque;

use wire::tcp::SeqNumber;

/// One segment sent and not yet cumulatively acknowledged (RFC 8985 §6.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sent {
    /// Sequence range `[start, end)`.
    pub start: SeqNumber,
    pub end: SeqNumber,
    /// When it was last sent, ns (§6.1 `Segment.xmit_ts`).
    pub xmit_ts: u64,
    /// Sent more than once (§6.1 `Segment.retransmitted`).
    pub retransmitted: bool,
    /// Marked lost by RACK (§6.1 `Segment.lost`), until it is sent again and that
    /// copy too is found lost.
    pub lost: bool,
    /// A retransmission of it is believed in the network (Linux `TCPCB_SACKED_RETRANS`):
    /// set when it is retransmitted in recovery, cleared when RACK finds that
    /// retransmission lost, so it goes again.
    pub rtx_in_flight: bool,
    /// SACKed.
    pub sacked: bool,
}

/// RACK's per-connection state (RFC 8985 §6.1) and TLP's (§7.1).
#[derive(Debug, Clone, Default)]
pub struct Rack {
    /// Segments sent and not cumulatively acknowledged, in sequence order, disjoint.
    segs: VecDeque<Sent>,
    /// `RACK.xmit_ts` and `RACK.end_seq`: the most recently sent segment delivered.
    xmit: Option<(u64, SeqNumber)>,
    /// `RACK.rtt`: the RTT of that segment, ns.
    rtt: u64,
    /// `RACK.fack`: the highest end sequence delivered.
    fack: Option<SeqNumber>,
    /// `RACK.reordering_seen`.
    reordering_seen: bool,
    /// When the RACK reordering timer should fire (§6.2 step 5's timeout), ns.
    pub reo_at: Option<u64>,
    /// `TLP.end_seq`: SND.NXT when the probe went, while its episode lasts (§7.1).
    pub tlp_end_seq: Option<SeqNumber>,
    /// `TLP.is_retrans`: the probe was a retransmission (§7.1).
    pub tlp_is_retrans: bool,
}

/// What one ACK delivered, for the socket.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Delivered {
    /// Segments newly marked lost by this ACK (or the timer).
    pub newly_lost: u32,
}

/// RFC 8985 §6.2 `RACK_sent_after(t1, seq1, t2, seq2)`.
fn sent_after(t1: u64, seq1: SeqNumber, t2: u64, seq2: SeqNumber) -> bool {
    t1 > t2 || (t1 == t2 && seq1 > seq2)
}

impl Rack {
    /// A fresh state.
    pub fn new() -> Rack {
        Rack::default()
    }

    /// The records, in sequence order.
    pub fn segments(&self) -> impl Iterator<Item = &Sent> {
        self.segs.iter()
    }

    /// True when a segment is SACKed (RFC 8985 `RACK.segs_sacked` > 0).
    pub fn segs_sacked(&self) -> usize {
        self.segs.iter().filter(|s| s.sacked).count()
    }

    /// Splits the record holding `at` so that one starts there.
    fn split_at(&mut self, at: SeqNumber) {
        if let Some(i) = self.segs.iter().position(|s| s.start < at && at < s.end) {
            let mut right = self.segs[i];
            right.start = at;
            self.segs[i].end = at;
            self.segs.insert(i + 1, right);
        }
    }

    /// §6.2 "upon transmitting": `[start, end)` sent at `now`; what lies below
    /// `snd_max` is a retransmission, the rest new. `in_recovery` marks the
    /// retransmission as in flight for the pipe.
    pub fn on_send(&mut self, start: SeqNumber, end: SeqNumber, snd_max: SeqNumber, now: u64, in_recovery: bool) {
        if end <= start {
            return;
        }
        let old_end = end.min(snd_max);
        if start < old_end {
            self.split_at(start);
            self.split_at(old_end);
            for s in self.segs.iter_mut().filter(|s| s.start >= start && s.end <= old_end) {
                s.xmit_ts = now;
                s.retransmitted = true;
                s.lost = false;
                s.rtx_in_flight = in_recovery;
            }
        }
        let new_start = start.max(snd_max);
        if new_start < end {
            self.segs.push_back(Sent {
                start: new_start,
                end,
                xmit_ts: now,
                retransmitted: false,
                lost: false,
                rtx_in_flight: false,
                sacked: false,
            });
        }
    }

    /// RFC 8985 §6.2 steps 1–3 for one ACK: the cumulative ACK `snd_una` and the SACKed
    /// ranges `sacked` (the scoreboard, sorted). Updates RACK.xmit_ts/end_seq/rtt and
    /// RACK.fack, drops what is cumulatively acknowledged. `min_rtt` is the connection's
    /// smallest RTT sample.
    pub fn on_ack(&mut self, now: u64, snd_una: SeqNumber, sacked: &[(SeqNumber, SeqNumber)], min_rtt: Option<u64>) {
        self.split_at(snd_una);
        for &(s, e) in sacked {
            self.split_at(s);
            self.split_at(e);
        }
        let mut delivered: Vec<Sent> = Vec::new();
        while let Some(first) = self.segs.front() {
            if first.end > snd_una {
                break;
            }
            let seg = self.segs.pop_front().expect("front");
            if !seg.sacked {
                delivered.push(seg);
            }
        }
        let mut j = 0;
        for seg in self.segs.iter_mut() {
            while j < sacked.len() && sacked[j].1 <= seg.start {
                j += 1;
            }
            if j == sacked.len() {
                break;
            }
            let (s, e) = sacked[j];
            if !seg.sacked && s <= seg.start && seg.end <= e {
                seg.sacked = true;
                delivered.push(*seg);
            }
        }
        // Step 3, RACK_detect_reordering, in sequence order (the cumulatively acked
        // ones came first, then the SACKed ones above them, each in order).
        for seg in &delivered {
            match self.fack {
                Some(f) if seg.end <= f => {
                    if seg.end < f && !seg.retransmitted {
                        self.reordering_seen = true;
                    }
                }
                _ => self.fack = Some(seg.end),
            }
        }
        // Step 2, RACK_update, in order of transmission: the last valid one sets
        // RACK.rtt.
        delivered.sort_by(|a, b| {
            a.xmit_ts.cmp(&b.xmit_ts).then(a.end.partial_cmp(&b.end).unwrap_or(std::cmp::Ordering::Equal))
        });
        for seg in &delivered {
            let rtt = now.saturating_sub(seg.xmit_ts);
            if seg.retransmitted && min_rtt.is_some_and(|m| rtt < m) {
                // Ambiguous: the original may be what arrived.
                continue;
            }
            self.rtt = rtt;
            let newer = match self.xmit {
                None => true,
                Some((t, e)) => sent_after(seg.xmit_ts, seg.end, t, e),
            };
            if newer {
                self.xmit = Some((seg.xmit_ts, seg.end));
            }
        }
    }

    /// §6.2 step 4, `RACK_update_reo_wnd` without DSACK: min_RTT/4 (RACK.reo_wnd_mult
    /// stays 1), at most SRTT; zero when no reordering was seen and the sender is in
    /// recovery or holds `dup_thresh` SACKed segments.
    pub fn reo_wnd(&self, min_rtt: Option<u64>, srtt: Option<u64>, in_recovery: bool, dup_thresh: u32) -> u64 {
        if !self.reordering_seen && (in_recovery || self.segs_sacked() >= dup_thresh as usize) {
            return 0;
        }
        // §6.2 step 4: "RACK.min_RTT / 4".
        let w = min_rtt.unwrap_or(0) / 4;
        srtt.map_or(w, |s| w.min(s))
    }

    /// §6.2 step 5, `RACK_detect_loss_and_arm_timer`: marks lost every unSACKed segment
    /// sent before RACK.xmit_ts whose time is up, and sets [`Rack::reo_at`] for the
    /// earliest of the others. Returns the segments newly marked and, if retransmissions
    /// were among them, when the last of those was sent.
    pub fn detect_loss(&mut self, now: u64, reo_wnd: u64) -> (u32, Option<u64>) {
        self.reo_at = None;
        let Some((rack_ts, rack_end)) = self.xmit else { return (0, None) };
        let mut newly = 0;
        let mut lost_rtx: Option<u64> = None;
        let mut timeout = 0u64;
        for seg in self.segs.iter_mut() {
            if seg.sacked || (seg.lost && !seg.rtx_in_flight) {
                // Already lost and not sent again since (§6.2: INFINITE_TS).
                continue;
            }
            if !sent_after(rack_ts, rack_end, seg.xmit_ts, seg.end) {
                continue;
            }
            let deadline = seg.xmit_ts + self.rtt + reo_wnd;
            if deadline <= now {
                if seg.retransmitted {
                    lost_rtx = Some(lost_rtx.map_or(seg.xmit_ts, |t| t.max(seg.xmit_ts)));
                }
                seg.lost = true;
                seg.rtx_in_flight = false;
                newly += 1;
            } else {
                timeout = timeout.max(deadline - now);
            }
        }
        if timeout > 0 {
            self.reo_at = Some(now + timeout);
        }
        (newly, lost_rtx)
    }

    /// RFC 8985 §6.3 (and RFC 2018 §8 after a timeout): SACK information is
    /// forgotten, no retransmission is believed in flight; go-back-N resends it all.
    pub fn on_rto(&mut self) {
        for s in self.segs.iter_mut() {
            s.sacked = false;
            s.rtx_in_flight = false;
            s.lost = true;
        }
        self.reo_at = None;
        self.tlp_end_seq = None;
        self.tlp_is_retrans = false;
    }

    /// A new fast recovery begins: no retransmission counts as in flight (the socket's
    /// HighRxt restarts at SND.UNA, RFC 6675 §5).
    pub fn on_enter_recovery(&mut self) {
        for s in self.segs.iter_mut() {
            s.rtx_in_flight = false;
        }
    }

    /// Forgets everything (connection reset, go-back-N after an MTU change).
    pub fn clear(&mut self) {
        *self = Rack::default();
    }
}

#[cfg(test)]
mod test {
    use super::*;

    const MS: u64 = 1_000_000;

    fn seq(n: u32) -> SeqNumber {
        SeqNumber::from_u32(n)
    }

    /// Five segments of 100 octets from 0, sent 1 ms apart from t = 0.
    fn five() -> Rack {
        let mut r = Rack::new();
        for i in 0..5u32 {
            r.on_send(seq(i * 100), seq(i * 100 + 100), seq(i * 100), u64::from(i) * MS, false);
        }
        r
    }

    #[test]
    fn a_sack_of_a_later_segment_marks_an_earlier_one_after_rtt_plus_window() {
        let mut r = five();
        // Segment 3 (sent at 3 ms) SACKed at 53 ms: RACK.rtt = 50 ms.
        r.on_ack(53 * MS, seq(0), &[(seq(300), seq(400))], Some(50 * MS));
        assert_eq!(r.rtt, 50 * MS);
        assert_eq!(r.xmit, Some((3 * MS, seq(400))));
        // reo_wnd = 50/4 = 12.5 ms (one SACKed segment < DupThresh, not in recovery).
        let w = r.reo_wnd(Some(50 * MS), Some(50 * MS), false, 3);
        assert_eq!(w, 12_500_000);
        // Segment 0 is lost at 0 + 50 + 12.5 ms; segments 1 and 2 later; 4 was sent
        // after RACK.xmit_ts and is never judged by it.
        assert_eq!(r.detect_loss(53 * MS, w), (0, None));
        assert_eq!(r.reo_at, Some(2 * MS + 50 * MS + 12_500_000));
        assert_eq!(r.detect_loss(62_500_000, w), (1, None));
        assert_eq!(r.detect_loss(64_500_000, w), (2, None));
        assert!(r.segments().filter(|s| s.lost).map(|s| s.start).eq([seq(0), seq(100), seq(200)]));
        assert_eq!(r.reo_at, None);
    }

    #[test]
    fn reordering_is_seen_when_an_old_segment_arrives_below_fack() {
        let mut r = five();
        r.on_ack(53 * MS, seq(0), &[(seq(300), seq(400))], Some(50 * MS));
        assert!(!r.reordering_seen);
        // Segment 1, never retransmitted, SACKed below RACK.fack = 400.
        r.on_ack(54 * MS, seq(0), &[(seq(100), seq(200)), (seq(300), seq(400))], Some(50 * MS));
        assert!(r.reordering_seen);
        // With reordering seen the window stays min_RTT/4 in recovery too.
        assert_eq!(r.reo_wnd(Some(40 * MS), Some(50 * MS), true, 3), 10 * MS);
    }

    #[test]
    fn cumulative_ack_splits_and_drops() {
        let mut r = five();
        r.on_ack(60 * MS, seq(150), &[], Some(50 * MS));
        assert_eq!(r.segments().next().map(|s| (s.start, s.end)), Some((seq(150), seq(200))));
        assert_eq!(r.segments().count(), 4);
    }
}
