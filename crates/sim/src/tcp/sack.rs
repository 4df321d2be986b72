//! The SACK scoreboard and the loss-recovery queries of RFC 6675 §4.
//!
//! The scoreboard keeps the octets SACKed above the cumulative ACK as sorted, disjoint,
//! merged ranges. RFC 6675's per-segment routines become per-hole here: every octet of
//! one hole (an unSACKed run between SACKed ranges) has the same SACKed octets above
//! it, so IsLost() answers the same for the whole hole.
//!
//! IsLost(SeqNum) (§4): DupThresh discontiguous SACKed ranges above it, or more than
//! (DupThresh − 1)·SMSS SACKed octets above it. Pipe (§4): every unSACKed octet up to
//! HighData counts once if not lost, and once more if it was retransmitted. NextSeg()
//! rules 1 and 3 are [`Scoreboard::next_lost`] and [`Scoreboard::next_rule3`]; rule 2
//! (new data) is the socket's; rule 4 (rescue retransmission, a MAY) is not done.

use wire::tcp::SeqNumber;

/// SACKed ranges above the cumulative ACK, `[start, end)`, sorted and disjoint.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Scoreboard {
    blocks: Vec<(SeqNumber, SeqNumber)>,
}

impl Scoreboard {
    /// An empty scoreboard.
    pub fn new() -> Self {
        Scoreboard::default()
    }

    /// Forgets every SACK (RFC 2018 §8: after a timeout the sender ignores prior SACK
    /// information, since the receiver may have reneged).
    pub fn clear(&mut self) {
        self.blocks.clear();
    }

    /// True when nothing is SACKed.
    pub fn is_empty(&self) -> bool {
        self.blocks.is_empty()
    }

    /// The SACKed ranges.
    pub fn blocks(&self) -> &[(SeqNumber, SeqNumber)] {
        &self.blocks
    }

    /// Drops what the cumulative ACK `snd_una` now covers.
    pub fn advance(&mut self, snd_una: SeqNumber) {
        self.blocks.retain(|&(_, end)| end > snd_una);
        if let Some(first) = self.blocks.first_mut() {
            first.0 = first.0.max(snd_una);
        }
    }

    /// Records one SACK block `[start, end)`, ignoring what lies at or below `snd_una`
    /// or beyond `high_data` (a block for data never sent is bogus, RFC 2018 §3).
    /// Returns the octets newly SACKed.
    pub fn add(&mut self, snd_una: SeqNumber, high_data: SeqNumber, start: SeqNumber, end: SeqNumber) -> u64 {
        let start = start.max(snd_una);
        let end = end.min(high_data);
        if end <= start {
            return 0;
        }
        let before = self.sacked_bytes();
        let mut new_start = start;
        let mut new_end = end;
        // Merge every block that overlaps or touches [start, end).
        self.blocks.retain(|&(s, e)| {
            if e < new_start || s > new_end {
                true
            } else {
                new_start = new_start.min(s);
                new_end = new_end.max(e);
                false
            }
        });
        let at = self.blocks.iter().position(|&(s, _)| s > new_start).unwrap_or(self.blocks.len());
        self.blocks.insert(at, (new_start, new_end));
        self.sacked_bytes() - before
    }

    /// Total SACKed octets.
    pub fn sacked_bytes(&self) -> u64 {
        self.blocks.iter().map(|&(s, e)| (e - s) as u64).sum()
    }

    /// The end of the highest SACKed range.
    pub fn highest_sacked(&self) -> Option<SeqNumber> {
        self.blocks.last().map(|&(_, e)| e)
    }

    /// True when `seq` is SACKed.
    pub fn is_sacked(&self, seq: SeqNumber) -> bool {
        self.blocks.iter().any(|&(s, e)| s <= seq && seq < e)
    }

    /// RFC 6675 §4 IsLost(seq).
    pub fn is_lost(&self, seq: SeqNumber, dup_thresh: u32, smss: u32) -> bool {
        let mut ranges = 0u32;
        let mut octets = 0u64;
        for &(s, e) in &self.blocks {
            if e > seq + 1 {
                ranges += 1;
                octets += (e - s.max(seq + 1)) as u64;
            }
        }
        lost(ranges, octets, dup_thresh, smss)
    }

    /// The unSACKed runs `[start, end)` from `snd_una` up to `high_data`; the last
    /// run (above every SACKed range) is included.
    pub fn holes(&self, snd_una: SeqNumber, high_data: SeqNumber) -> Vec<(SeqNumber, SeqNumber)> {
        self.holes_above(snd_una, high_data).map(|(s, e, _, _)| (s, e)).collect()
    }

    /// The runs of [`holes`](Self::holes), in order and without allocating, each with
    /// the SACKed ranges and octets above it: what IsLost() counts for any octet `x`
    /// of the hole. A range after the hole starts past it (above `x + 1`) and counts
    /// whole; a range before it ends at or below the hole's start (not above `x + 1`).
    /// So they are the running totals of the ranges not yet passed, and the last hole
    /// has none above it.
    fn holes_above(
        &self,
        snd_una: SeqNumber,
        high_data: SeqNumber,
    ) -> impl Iterator<Item = (SeqNumber, SeqNumber, u32, u64)> + '_ {
        let mut ranges = self.blocks.len() as u32;
        let mut octets = self.sacked_bytes();
        let mut at = snd_una;
        let mut blocks = self.blocks.iter();
        let mut last = Some(());
        std::iter::from_fn(move || {
            for &(s, e) in blocks.by_ref() {
                let hole = (s > at).then_some((at, s, ranges, octets));
                at = at.max(e);
                ranges -= 1;
                octets -= (e - s) as u64;
                if hole.is_some() {
                    return hole;
                }
            }
            last.take().filter(|_| high_data > at).map(|_| (at, high_data, ranges, octets))
        })
    }

    /// RFC 6675 §4 pipe: octets believed in the network. `high_rxt` is the end of the
    /// highest retransmitted octet (exclusive), `snd_una` when nothing was.
    pub fn pipe(
        &self,
        snd_una: SeqNumber,
        high_data: SeqNumber,
        high_rxt: SeqNumber,
        dup_thresh: u32,
        smss: u32,
    ) -> u64 {
        self.pipe_and_next_lost(snd_una, high_data, high_rxt, dup_thresh, smss).0
    }

    /// [`pipe`](Self::pipe) and [`next_lost`](Self::next_lost) from one walk over the
    /// holes (a sender in SACK recovery asks both before every segment). Rule 1 looks
    /// only below the highest SACKed octet: at the holes with SACKed ranges above them,
    /// which leaves out the last run.
    pub fn pipe_and_next_lost(
        &self,
        snd_una: SeqNumber,
        high_data: SeqNumber,
        high_rxt: SeqNumber,
        dup_thresh: u32,
        smss: u32,
    ) -> (u64, Option<(SeqNumber, SeqNumber)>) {
        let mut pipe = 0u64;
        let mut next = None;
        for (s, e, ranges, octets) in self.holes_above(snd_una, high_data) {
            let is_lost = lost(ranges, octets, dup_thresh, smss);
            if !is_lost {
                pipe += (e - s) as u64;
            }
            if high_rxt > s {
                pipe += (high_rxt.min(e) - s) as u64;
            }
            if next.is_none() && ranges > 0 && is_lost {
                let s = s.max(high_rxt);
                if s < e {
                    next = Some((s, e.min(s + smss as usize)));
                }
            }
        }
        (pipe, next)
    }

    /// NextSeg() rule 1: the first unSACKed octet at or above `high_rxt` that IsLost,
    /// as `[start, end)` of at most `smss` octets within its hole.
    pub fn next_lost(
        &self,
        snd_una: SeqNumber,
        high_data: SeqNumber,
        high_rxt: SeqNumber,
        dup_thresh: u32,
        smss: u32,
    ) -> Option<(SeqNumber, SeqNumber)> {
        self.next_in_holes(snd_una, high_data, high_rxt, smss, |ranges, octets| lost(ranges, octets, dup_thresh, smss))
    }

    /// NextSeg() rule 3: the first unSACKed octet at or above `high_rxt` with SACKed
    /// octets above it (rule 1's (1.a) and (1.b) without (1.c)).
    pub fn next_rule3(
        &self,
        snd_una: SeqNumber,
        high_data: SeqNumber,
        high_rxt: SeqNumber,
        smss: u32,
    ) -> Option<(SeqNumber, SeqNumber)> {
        let top = self.highest_sacked()?;
        self.next_in_holes(snd_una, high_data.min(top), high_rxt, smss, |_, _| true)
    }

    /// The first hole octet at or above `high_rxt` for whose hole `ok(ranges, octets
    /// SACKed above)` holds, below the highest SACKed octet.
    fn next_in_holes(
        &self,
        snd_una: SeqNumber,
        high_data: SeqNumber,
        high_rxt: SeqNumber,
        smss: u32,
        ok: impl Fn(u32, u64) -> bool,
    ) -> Option<(SeqNumber, SeqNumber)> {
        let top = self.highest_sacked()?;
        for (s, e, ranges, octets) in self.holes_above(snd_una, high_data.min(top)) {
            let s = s.max(high_rxt);
            if s < e && ok(ranges, octets) {
                return Some((s, e.min(s + smss as usize)));
            }
        }
        None
    }
}

/// RFC 6675 §4 IsLost() from what is SACKed above the octet: DupThresh discontiguous
/// ranges, or more than (DupThresh − 1)·SMSS octets.
fn lost(ranges: u32, octets: u64, dup_thresh: u32, smss: u32) -> bool {
    ranges >= dup_thresh || octets > u64::from(dup_thresh - 1) * u64::from(smss)
}

#[cfg(test)]
mod test {
    use super::*;

    fn seq(n: u32) -> SeqNumber {
        SeqNumber::from_u32(n)
    }

    /// Ten segments of 100 octets from 1000; segments 0 and 4 lost, the others SACKed.
    fn board() -> Scoreboard {
        let mut sb = Scoreboard::new();
        let una = seq(1000);
        let high = seq(2000);
        assert_eq!(sb.add(una, high, seq(1100), seq(1400)), 300);
        assert_eq!(sb.add(una, high, seq(1500), seq(1700)), 200);
        assert_eq!(sb.add(una, high, seq(1700), seq(2000)), 300);
        assert_eq!(sb.add(una, high, seq(1600), seq(1800)), 0);
        sb
    }

    #[test]
    fn blocks_merge() {
        let sb = board();
        assert_eq!(sb.blocks(), &[(seq(1100), seq(1400)), (seq(1500), seq(2000))]);
        assert_eq!(sb.sacked_bytes(), 800);
        assert!(sb.is_sacked(seq(1100)) && !sb.is_sacked(seq(1400)));
    }

    #[test]
    fn holes_lost_and_pipe() {
        let sb = board();
        assert_eq!(sb.holes(seq(1000), seq(2000)), vec![(seq(1000), seq(1100)), (seq(1400), seq(1500))]);
        assert!(sb.is_lost(seq(1000), 3, 100));
        // 500 SACKed octets above 1400 > 2·100.
        assert!(sb.is_lost(seq(1400), 3, 100));
        // Both holes lost, none retransmitted: nothing in the network.
        assert_eq!(sb.pipe(seq(1000), seq(2000), seq(1000), 3, 100), 0);
        // After retransmitting the first hole it counts once.
        assert_eq!(sb.pipe(seq(1000), seq(2000), seq(1100), 3, 100), 100);
        assert_eq!(sb.next_lost(seq(1000), seq(2000), seq(1000), 3, 100), Some((seq(1000), seq(1100))));
        assert_eq!(sb.next_lost(seq(1000), seq(2000), seq(1100), 3, 100), Some((seq(1400), seq(1500))));
        assert_eq!(sb.next_lost(seq(1000), seq(2000), seq(1500), 3, 100), None);
    }

    #[test]
    fn not_lost_with_too_little_sacked_above() {
        let mut sb = Scoreboard::new();
        sb.add(seq(0), seq(1000), seq(100), seq(200));
        assert!(!sb.is_lost(seq(0), 3, 100));
        assert_eq!(sb.pipe(seq(0), seq(1000), seq(0), 3, 100), 900);
        assert_eq!(sb.next_lost(seq(0), seq(1000), seq(0), 3, 100), None);
        assert_eq!(sb.next_rule3(seq(0), seq(1000), seq(0), 100), Some((seq(0), seq(100))));
    }

    /// pipe, NextSeg() rules 1 and 3 against RFC 6675 §4's definitions applied octet by
    /// octet (IsLost() asked of every octet, pipe summed per octet), on random
    /// scoreboards.
    #[test]
    fn per_hole_queries_equal_the_per_octet_definitions() {
        let mut x: u32 = 99;
        let mut rand = |n: u32| {
            x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
            (x >> 8) % n
        };
        for _ in 0..300 {
            // Near the wrap of the sequence space.
            let una = seq(0xffff_f000u32.wrapping_add(rand(0x2000)));
            let high = una + (1 + rand(2000)) as usize;
            let mut sb = Scoreboard::new();
            for _ in 0..rand(8) {
                let start = una + rand(2100) as usize;
                sb.add(una, high, start, start + (1 + rand(300)) as usize);
            }
            let high_rxt = una + rand(2000) as usize;
            let (thresh, smss) = (1 + rand(4), 1 + rand(200));
            let octets = |from: SeqNumber, to: SeqNumber| (0..(to - from)).map(move |i| from + i);
            let unsacked = |o: SeqNumber| !sb.is_sacked(o);
            let mut pipe = 0u64;
            for o in octets(una, high).filter(|&o| unsacked(o)) {
                pipe += u64::from(!sb.is_lost(o, thresh, smss)) + u64::from(o < high_rxt);
            }
            assert_eq!(sb.pipe(una, high, high_rxt, thresh, smss), pipe, "{sb:?}");
            let top = sb.highest_sacked();
            let first = |ok: &dyn Fn(SeqNumber) -> bool| {
                let top = top?;
                let limit = high.min(top);
                let o = octets(high_rxt.max(una), limit.max(high_rxt.max(una))).find(|&o| unsacked(o) && ok(o))?;
                let mut end = o;
                while end < limit && unsacked(end) && end - o < smss as usize {
                    end += 1;
                }
                Some((o, end))
            };
            assert_eq!(
                sb.next_lost(una, high, high_rxt, thresh, smss),
                first(&|o| sb.is_lost(o, thresh, smss)),
                "{sb:?}"
            );
            assert_eq!(sb.next_rule3(una, high, high_rxt, smss), first(&|_| true), "{sb:?}");
            let both = (sb.pipe(una, high, high_rxt, thresh, smss), sb.next_lost(una, high, high_rxt, thresh, smss));
            assert_eq!(sb.pipe_and_next_lost(una, high, high_rxt, thresh, smss), both, "{sb:?}");
        }
    }

    #[test]
    fn advance_trims() {
        let mut sb = board();
        sb.advance(seq(1200));
        assert_eq!(sb.blocks()[0], (seq(1200), seq(1400)));
        sb.advance(seq(1500));
        assert_eq!(sb.blocks(), &[(seq(1500), seq(2000))]);
    }
}
