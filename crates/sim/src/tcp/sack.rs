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
        ranges >= dup_thresh || octets > u64::from(dup_thresh - 1) * u64::from(smss)
    }

    /// The unSACKed runs `[start, end)` from `snd_una` up to `high_data`; the last
    /// run (above every SACKed range) is included.
    pub fn holes(&self, snd_una: SeqNumber, high_data: SeqNumber) -> Vec<(SeqNumber, SeqNumber)> {
        let mut holes = Vec::with_capacity(self.blocks.len() + 1);
        let mut at = snd_una;
        for &(s, e) in &self.blocks {
            if s > at {
                holes.push((at, s));
            }
            at = at.max(e);
        }
        if high_data > at {
            holes.push((at, high_data));
        }
        holes
    }

    /// RFC 6675 §4 pipe: octets believed in the network. `high_rxt` is the end of the
    /// highest retransmitted octet (exclusive), `snd_una` when nothing was.
    pub fn pipe(&self, snd_una: SeqNumber, high_data: SeqNumber, high_rxt: SeqNumber, dup_thresh: u32, smss: u32) -> u64 {
        let mut pipe = 0u64;
        for (s, e) in self.holes(snd_una, high_data) {
            if !self.is_lost(s, dup_thresh, smss) {
                pipe += (e - s) as u64;
            }
            if high_rxt > s {
                pipe += (high_rxt.min(e) - s) as u64;
            }
        }
        pipe
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
        self.next_in_holes(snd_una, high_data, high_rxt, smss, |s| self.is_lost(s, dup_thresh, smss))
    }

    /// NextSeg() rule 3: the first unSACKed octet at or above `high_rxt` with SACKed
    /// octets above it (rule 1's (1.a) and (1.b) without (1.c)).
    pub fn next_rule3(&self, snd_una: SeqNumber, high_data: SeqNumber, high_rxt: SeqNumber, smss: u32) -> Option<(SeqNumber, SeqNumber)> {
        let top = self.highest_sacked()?;
        self.next_in_holes(snd_una, high_data.min(top), high_rxt, smss, |_| true)
    }

    fn next_in_holes(
        &self,
        snd_una: SeqNumber,
        high_data: SeqNumber,
        high_rxt: SeqNumber,
        smss: u32,
        ok: impl Fn(SeqNumber) -> bool,
    ) -> Option<(SeqNumber, SeqNumber)> {
        let top = self.highest_sacked()?;
        for (s, e) in self.holes(snd_una, high_data.min(top)) {
            let s = s.max(high_rxt);
            if s < e && ok(s) {
                return Some((s, e.min(s + smss as usize)));
            }
        }
        None
    }
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

    #[test]
    fn advance_trims() {
        let mut sb = board();
        sb.advance(seq(1200));
        assert_eq!(sb.blocks()[0], (seq(1200), seq(1400)));
        sb.advance(seq(1500));
        assert_eq!(sb.blocks(), &[(seq(1500), seq(2000))]);
    }
}
