//! Leaving slow start before the first loss: HyStart as Linux's CUBIC does it, and
//! HyStart++ (RFC 9406).
//!
//! Both watch the RTT during slow start, round by round (a round ends when the ACK
//! passes the `snd_nxt` of its start), and set ssthresh = cwnd when the queue starts
//! to build, so that slow start stops before it overshoots into a burst of losses.
//!
//! * [`HyStartMode::Classic`] follows Linux's `tcp_cubic.c` (`hystart_update`, v5.7 and
//!   later, `hystart_detect=3`): from a window of 16 segments (`hystart_low_window`),
//!   (a) the ACK train — ACKs closer than 2 ms apart (`hystart_ack_delta_us`) keep
//!   arriving for longer than half the minimum RTT after the round began — or (b) the
//!   delay increase — the smallest of the round's first 8 RTT samples
//!   (`HYSTART_MIN_SAMPLES`) exceeds the minimum RTT by clamp(minRTT/8, 4 ms, 16 ms)
//!   (`HYSTART_DELAY_THRESH`) — ends slow start at once.
//! * [`HyStartMode::PlusPlus`] follows RFC 9406 §4: the delay increase against the last
//!   round's minimum (same thresholds, §4.3's constants), then Conservative Slow Start
//!   (CSS) growing a quarter as fast for up to 5 rounds, back to slow start if the RTT
//!   falls again, ssthresh = cwnd when CSS ends. Only in the initial slow start (§4.3
//!   "SHOULD use HyStart++ only for the initial slow start").
//!
//! RTT samples are the socket's: one per ACK of new data with timestamps (RFC 7323),
//! else one per round (RFC 6298 §3's timed segment); Linux has one per ACK either way
//! from its per-segment send times, so without timestamps the delay test here sees
//! fewer samples than Linux's (the ACK-train test does not need them).

use wire::tcp::SeqNumber;

/// Which slow-start exit heuristic runs: the plan's enum (`qoslab_plan::flow`).
pub use qoslab_plan::flow::HyStartMode;

/// Linux `hystart_low_window`: no detection below 16 segments.
const LOW_WINDOW_SEGMENTS: u64 = 16;
/// Linux `hystart_ack_delta_us`: ACKs this close (ns) belong to one train.
const ACK_DELTA_NS: u64 = 2_000_000;
/// Linux `HYSTART_MIN_SAMPLES`, RFC 9406 §4.3 `N_RTT_SAMPLE`.
const N_RTT_SAMPLE: u32 = 8;
/// RFC 9406 §4.3 `MIN_RTT_THRESH` / Linux `HYSTART_DELAY_MIN`, ns.
const MIN_RTT_THRESH_NS: u64 = 4_000_000;
/// RFC 9406 §4.3 `MAX_RTT_THRESH` / Linux `HYSTART_DELAY_MAX`, ns.
const MAX_RTT_THRESH_NS: u64 = 16_000_000;
/// RFC 9406 §4.3 `MIN_RTT_DIVISOR` (Linux: `delay_min >> 3`).
const MIN_RTT_DIVISOR: u64 = 8;
/// RFC 9406 §4.3 `CSS_GROWTH_DIVISOR`.
pub const CSS_GROWTH_DIVISOR: u64 = 4;
/// RFC 9406 §4.3 `CSS_ROUNDS`.
const CSS_ROUNDS: u32 = 5;
/// RFC 9406 §4.3: L, the most SMSS one ACK may add in slow start, for a sender that
/// does not pace.
pub const PLUS_PLUS_L: u64 = 8;
/// Linux's `hystart_ack_delay`: the ACK-train threshold allows for delayed ACKs of a
/// 64 KiB GSO burst sent at the pacing rate, at most 1 ms (`sk_gso_max_size` · 4 /
/// pacing rate, the rate 2·cwnd/SRTT in slow start, `tcp_pacing_ss_ratio` = 200 %).
const GSO_MAX_SIZE: u64 = 65_536;

/// What the last ACK made of slow start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Keep on as before.
    Continue,
    /// End slow start now: ssthresh = cwnd.
    Exit,
}

/// What HyStart sees of one ACK of new data.
#[derive(Debug, Clone, Copy)]
pub struct AckInfo {
    /// Arrival time, ns.
    pub now: u64,
    /// The cumulative ACK.
    pub ack: SeqNumber,
    /// The next sequence number to send (the highest sent).
    pub snd_nxt: SeqNumber,
    /// This ACK's RTT sample, ns.
    pub rtt: Option<u64>,
    /// cwnd before this ACK's growth, octets.
    pub cwnd: u64,
    pub smss: u32,
    /// Smoothed RTT, ns.
    pub srtt: Option<u64>,
}

/// Why slow start ended early, and when.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Exit {
    /// Simulated time, ns.
    pub at: u64,
    /// cwnd at the exit, octets.
    pub cwnd: u64,
    /// "ack-train", "delay" (classic) or "css" (HyStart++ after its CSS rounds).
    pub reason: &'static str,
}

/// The state of either heuristic.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HyStart {
    mode: HyStartMode,
    /// End of the current round: the round ends when the cumulative ACK passes it.
    round_end: Option<SeqNumber>,
    /// Classic: start of the round and last ACK of the train, ns.
    round_start: u64,
    last_ack: u64,
    /// Minimum RTT seen (Linux `delay_min`), ns.
    delay_min: Option<u64>,
    /// Minimum RTT of this round (Linux `curr_rtt`, RFC 9406 `currentRoundMinRTT`).
    current_round_min: Option<u64>,
    /// RFC 9406 `lastRoundMinRTT`.
    last_round_min: Option<u64>,
    samples: u32,
    /// RFC 9406: `cssBaselineMinRtt` while in CSS, and the rounds spent there.
    css_baseline: Option<u64>,
    css_rounds: u32,
    /// Done for this slow start (classic: `found`; HyStart++: after its initial slow start).
    done: bool,
    exit: Option<Exit>,
    /// HyStart++: when CSS was last entered, and cwnd then (octets).
    css_entry: Option<(u64, u64)>,
}

impl HyStart {
    pub fn new(mode: HyStartMode) -> HyStart {
        HyStart {
            mode,
            round_end: None,
            round_start: 0,
            last_ack: 0,
            delay_min: None,
            current_round_min: None,
            last_round_min: None,
            samples: 0,
            css_baseline: None,
            css_rounds: 0,
            done: mode == HyStartMode::Off,
            exit: None,
            css_entry: None,
        }
    }

    pub fn mode(&self) -> HyStartMode {
        self.mode
    }

    /// The last early exit from slow start, if any.
    pub fn exit(&self) -> Option<Exit> {
        self.exit
    }

    /// HyStart++: when Conservative Slow Start was last entered, and cwnd then.
    pub fn css_entry(&self) -> Option<(u64, u64)> {
        self.css_entry
    }

    /// In RFC 9406's Conservative Slow Start.
    pub fn in_css(&self) -> bool {
        self.css_baseline.is_some()
    }

    /// Slow start's growth on one ACK of `acked` octets: RFC 9406's L = 8 and ÷ 4 in
    /// CSS while HyStart++ runs, else `plain`, what the window's own rule adds
    /// ([`Congestion::slow_start_increment`](super::congestion::Congestion::slow_start_increment)).
    pub fn slow_start_increase(&self, acked: u64, smss: u64, plain: u64) -> u64 {
        match self.mode {
            HyStartMode::PlusPlus if !self.done => {
                let inc = acked.min(PLUS_PLUS_L * smss);
                if self.in_css() {
                    inc / CSS_GROWTH_DIVISOR
                } else {
                    inc
                }
            }
            _ => plain,
        }
    }

    /// An ACK of new data in slow start, outside loss recovery.
    pub fn on_ack(&mut self, a: AckInfo) -> Verdict {
        if let Some(r) = a.rtt {
            let r = r.max(1);
            self.delay_min = Some(self.delay_min.map_or(r, |m| m.min(r)));
        }
        if self.done {
            return Verdict::Continue;
        }
        match self.mode {
            HyStartMode::Off => Verdict::Continue,
            HyStartMode::Classic => self.classic(a),
            HyStartMode::PlusPlus => self.plus_plus(a),
        }
    }

    fn new_round(&mut self, ack: SeqNumber, snd_nxt: SeqNumber) -> bool {
        let ended = self.round_end.is_none_or(|end| ack > end);
        if ended {
            self.round_end = Some(snd_nxt);
        }
        ended
    }

    fn classic(&mut self, a: AckInfo) -> Verdict {
        let AckInfo { now, ack, snd_nxt, rtt, cwnd, smss, srtt } = a;
        // tcp_cubic.c cubictcp_acked: only from hystart_low_window on.
        if cwnd < LOW_WINDOW_SEGMENTS * u64::from(smss) {
            return Verdict::Continue;
        }
        let Some(delay_min) = self.delay_min else { return Verdict::Continue };
        // bictcp_hystart_reset at the start of each round.
        if self.new_round(ack, snd_nxt) {
            self.round_start = now;
            self.last_ack = now;
            self.current_round_min = None;
            self.samples = 0;
        }
        // ACK train.
        if now.saturating_sub(self.last_ack) <= ACK_DELTA_NS {
            self.last_ack = now;
            let ack_delay = srtt.map_or(0, |s| {
                // pacing rate = 2·cwnd/SRTT octets per second.
                let rate = (2 * u128::from(cwnd) * 1_000_000_000 / u128::from(s.max(1))).max(1);
                (u128::from(GSO_MAX_SIZE) * 4 * 1_000_000_000 / rate).min(1_000_000) as u64
            });
            let threshold = (delay_min + ack_delay) / 2;
            if now - self.round_start > threshold {
                return self.found(now, cwnd, "ack-train");
            }
        }
        // Delay increase.
        if let Some(r) = rtt {
            self.current_round_min = Some(self.current_round_min.map_or(r, |m| m.min(r)));
            if self.samples < N_RTT_SAMPLE {
                self.samples += 1;
            } else if self.current_round_min.is_some_and(|c| c > delay_min + rtt_thresh(delay_min)) {
                return self.found(now, cwnd, "delay");
            }
        }
        Verdict::Continue
    }

    fn plus_plus(&mut self, a: AckInfo) -> Verdict {
        let AckInfo { now, ack, snd_nxt, rtt, cwnd, .. } = a;
        // RFC 9406 §4.2: at the start of each round.
        if self.new_round(ack, snd_nxt) {
            if self.in_css() {
                self.css_rounds += 1;
                if self.css_rounds >= CSS_ROUNDS {
                    // "If CSS_ROUNDS rounds are complete, enter congestion avoidance
                    // by setting the ssthresh to the current cwnd."
                    return self.found(now, cwnd, "css");
                }
            }
            self.last_round_min = self.current_round_min;
            self.current_round_min = None;
            self.samples = 0;
        }
        if let Some(r) = rtt {
            self.current_round_min = Some(self.current_round_min.map_or(r, |m| m.min(r)));
            self.samples += 1;
        }
        if self.samples < N_RTT_SAMPLE {
            return Verdict::Continue;
        }
        let Some(current) = self.current_round_min else { return Verdict::Continue };
        match self.css_baseline {
            None => {
                let Some(last) = self.last_round_min else { return Verdict::Continue };
                if current >= last + rtt_thresh(last) {
                    self.css_baseline = Some(current);
                    self.css_rounds = 0;
                    self.css_entry = Some((now, cwnd));
                }
            }
            Some(baseline) => {
                if current < baseline {
                    // "The slow start exit was spurious": back to slow start.
                    self.css_baseline = None;
                    self.css_rounds = 0;
                }
            }
        }
        Verdict::Continue
    }

    fn found(&mut self, now: u64, cwnd: u64, reason: &'static str) -> Verdict {
        self.done = true;
        self.css_baseline = None;
        self.exit = Some(Exit { at: now, cwnd, reason });
        Verdict::Exit
    }

    /// A loss ended slow start (fast retransmit) or restarted it (`timeout`). RFC 9406
    /// §4.2–4.3: HyStart++ is over for good; Linux's CUBIC resets HyStart and its
    /// minimum RTT on a timeout (`bictcp_reset`, `bictcp_hystart_reset`) and runs it
    /// again in the next slow start.
    pub fn on_loss(&mut self, timeout: bool) {
        self.css_baseline = None;
        match self.mode {
            HyStartMode::Classic if timeout => {
                self.done = false;
                self.delay_min = None;
                self.round_end = None;
            }
            _ => self.done = true,
        }
    }
}

/// clamp(minRTT / 8, 4 ms, 16 ms): RFC 9406 §4.2 `RttThresh`, Linux
/// `HYSTART_DELAY_THRESH(delay_min >> 3)`.
fn rtt_thresh(min_rtt: u64) -> u64 {
    (min_rtt / MIN_RTT_DIVISOR).clamp(MIN_RTT_THRESH_NS, MAX_RTT_THRESH_NS)
}

#[cfg(test)]
mod test {
    use super::*;

    const MS: u64 = 1_000_000;
    const SMSS: u32 = 1000;

    fn seq(n: u32) -> SeqNumber {
        SeqNumber::from_u32(n)
    }

    #[test]
    fn thresholds_are_clamped() {
        assert_eq!(rtt_thresh(10 * MS), 4 * MS);
        assert_eq!(rtt_thresh(80 * MS), 10 * MS);
        assert_eq!(rtt_thresh(500 * MS), 16 * MS);
    }

    #[test]
    fn off_never_exits() {
        let mut h = HyStart::new(HyStartMode::Off);
        for i in 0..100u32 {
            let rtt = Some((10 + u64::from(i)) * MS);
            let v = h.on_ack(AckInfo {
                now: u64::from(i) * MS,
                ack: seq(i * 1000),
                snd_nxt: seq(i * 1000 + 50_000),
                rtt,
                cwnd: 100_000,
                smss: SMSS,
                srtt: rtt,
            });
            assert_eq!(v, Verdict::Continue);
        }
        assert_eq!(h.slow_start_increase(5000, 1000, 1234), 1234, "not HyStart++: the window's own rule");
    }

    /// Rounds of `acks` ACKs `gap` apart; round k's RTT samples are `rtt(k)`.
    fn rounds(h: &mut HyStart, n: u32, acks: u32, gap: u64, rtt: impl Fn(u32) -> u64) -> Option<(u32, u32)> {
        let mut now = 0;
        let mut ack = 0u32;
        for k in 0..n {
            // The round ends with its last ACK: the next round's first ACK passes it.
            let snd_nxt = seq(ack + acks * 1000);
            for i in 0..acks {
                ack += 1000;
                now += gap;
                let r = Some(rtt(k));
                if h.on_ack(AckInfo { now, ack: seq(ack), snd_nxt, rtt: r, cwnd: 32_000, smss: SMSS, srtt: r })
                    == Verdict::Exit
                {
                    return Some((k, i));
                }
            }
            now += 100 * MS;
        }
        None
    }

    #[test]
    fn classic_delay_increase() {
        // ACKs 5 ms apart: no train. minRTT 40 ms: threshold clamp(5, 4, 16) = 5 ms; a
        // round at 46 ms exits after its first 8 samples (the 9th ACK), one at 44 does not.
        let mut h = HyStart::new(HyStartMode::Classic);
        assert_eq!(rounds(&mut h, 4, 20, 5 * MS, |k| if k < 2 { 40 * MS } else { 44 * MS }), None);
        let mut h = HyStart::new(HyStartMode::Classic);
        assert_eq!(rounds(&mut h, 4, 20, 5 * MS, |k| if k < 2 { 40 * MS } else { 46 * MS }), Some((2, 8)));
        assert_eq!(h.exit().unwrap().reason, "delay");
    }

    #[test]
    fn classic_ack_train() {
        // ACKs 1 ms apart, minRTT 20 ms: the train exits once it lasts more than
        // (20 ms + ack delay) / 2; with cwnd 32 kB at SRTT 20 ms the pacing rate is
        // 3.2 MB/s and the ack delay min(1 ms, 262 144 / 3.2 MB/s) = 1 ms: 10.5 ms, so
        // the ACK 11 ms after the round's first ends it (the 12th of the round).
        let mut h = HyStart::new(HyStartMode::Classic);
        assert_eq!(rounds(&mut h, 3, 30, MS, |_| 20 * MS), Some((0, 11)));
        assert_eq!(h.exit().unwrap().reason, "ack-train");
    }

    #[test]
    fn plus_plus_css_then_exit() {
        // Round 0 sets lastRoundMinRTT = 40 ms; round 1 at 46 ms ≥ 40 + 5: CSS (its
        // baseline 46); five more rounds at 46 without a fall: ssthresh = cwnd at the
        // start of the 5th round after the CSS entry.
        let mut h = HyStart::new(HyStartMode::PlusPlus);
        let exit = rounds(&mut h, 10, 10, 5 * MS, |k| if k == 0 { 40 * MS } else { 46 * MS });
        assert_eq!(exit, Some((6, 0)));
        assert_eq!(h.exit().unwrap().reason, "css");
    }

    #[test]
    fn plus_plus_css_is_left_when_rtt_falls() {
        let mut h = HyStart::new(HyStartMode::PlusPlus);
        // Entry to CSS in round 1, then the RTT falls below the baseline in round 2.
        let exit = rounds(&mut h, 3, 10, 5 * MS, |k| [40 * MS, 46 * MS, 41 * MS][k as usize]);
        assert_eq!(exit, None);
        assert!(!h.in_css());
        assert_eq!(h.slow_start_increase(9000, 1000, 2000), 8000, "L = 8 SMSS outside CSS");
    }

    #[test]
    fn plus_plus_growth_in_css_is_a_quarter() {
        let mut h = HyStart::new(HyStartMode::PlusPlus);
        rounds(&mut h, 2, 10, 5 * MS, |k| if k == 0 { 40 * MS } else { 46 * MS });
        assert!(h.in_css());
        assert_eq!(h.slow_start_increase(2000, 1000, 2000), 500);
        h.on_loss(false);
        assert_eq!(h.slow_start_increase(2000, 1000, 1500), 1500, "after a loss, plain slow start");
    }
}
