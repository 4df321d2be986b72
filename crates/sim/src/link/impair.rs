//! Impairments a link applies per frame: random loss, and token-bucket rate limits.
//!
//! Every model here is a plain value, sans-IO: it never reads a clock or owns a random
//! stream. A link (or a decorator around one, `Lossy<L>` in STYLE.md's words, after
//! smoltcp's `phy/fault_injector.rs`) holds the model and its **own** stream, e.g.
//! `RunSeed::stream(link_id, "loss")`, and asks once per frame. So adding loss to one
//! link never moves another component's randomness.
//!
//! Standards and papers a reader must know:
//!
//! * E. N. Gilbert, "Capacity of a burst-noise channel", Bell System Technical Journal
//!   39(5), 1960: the two-state Markov channel, errors only in the bad state.
//! * E. O. Elliott, "Estimates of error rates for codes on burst-noise channels", BSTJ
//!   42(5), 1963: the same chain with errors in the good state too.
//! * G. Haßlinger and O. Hohlfeld, "The Gilbert-Elliott model for packet loss in real
//!   time services on the Internet", MMB 2008: the packet-loss reading used here, and
//!   the parameter names `p`, `r`, `1-k`, `1-h` that Linux netem's `loss gemodel` takes.
//! * RFC 2697 (single rate three colour marker, srTCM) §3 and RFC 2698 (two rate, trTCM)
//!   §3: the token buckets, their initial fill and the colour-blind metering rule that
//!   [`Policer`] and [`Shaper`] follow.
//!
//! # Token-bucket arithmetic
//!
//! RFC 2697 §3 adds one token (byte) to the bucket CIR/8 times a second. Here the bucket
//! fills continuously and exactly: its level is kept in units of 10⁻⁹ bit, so a span of
//! `d` ns at `rate` bit/s adds exactly `d × rate` units and a frame of `n` bytes costs
//! `n × 8 × 10⁹`. No rounding ever happens in the policer; the shaper rounds a wait
//! **up** to the next nanosecond, so it can never send faster than its rate.

use std::fmt;

use crate::rng::RandomStream;
use crate::time::SimTime;

/// Why an impairment's parameters were refused.
#[derive(Debug, Clone, PartialEq)]
pub enum ImpairError {
    /// A probability outside `[0, 1]` (or NaN); names the parameter.
    Probability { name: &'static str, value: f64 },
    /// A mean burst length below one frame, or not finite.
    BurstLength(f64),
    /// A (mean loss, mean burst) pair no simple Gilbert chain reaches: `p` would exceed 1.
    Unreachable { mean_loss: f64, mean_burst: f64 },
    /// A token bucket of rate 0 bit/s.
    ZeroRate,
    /// A token bucket of depth 0 bytes passes nothing.
    ZeroBurst,
}

impl fmt::Display for ImpairError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ImpairError::Probability { name, value } => {
                write!(f, "{name} = {value} is not a probability in [0, 1]")
            }
            ImpairError::BurstLength(b) => {
                write!(f, "a mean loss burst of {b} frames is impossible: a burst is at least 1 frame")
            }
            ImpairError::Unreachable { mean_loss, mean_burst } => write!(
                f,
                "mean loss {mean_loss} with mean bursts of {mean_burst} frames needs p = \
                 loss / (burst × (1 − loss)) > 1; lengthen the bursts or lower the loss"
            ),
            ImpairError::ZeroRate => write!(f, "a token bucket rate of 0 bit/s never refills"),
            ImpairError::ZeroBurst => write!(f, "a token bucket of 0 bytes passes nothing"),
        }
    }
}

impl std::error::Error for ImpairError {}

fn probability(name: &'static str, value: f64) -> Result<f64, ImpairError> {
    if (0.0..=1.0).contains(&value) {
        Ok(value)
    } else {
        Err(ImpairError::Probability { name, value })
    }
}

/// Independent loss: each frame is dropped with probability `p`, whatever came before
/// (netem `loss random`, dummynet `plr`, seed 002's "1 % loss").
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bernoulli {
    /// Drop probability per frame. Invariant: `0 ≤ p ≤ 1` ([`Bernoulli::new`] checks it;
    /// [`RandomStream::bernoulli`] panics on anything else).
    pub p: f64,
}

impl Bernoulli {
    pub fn new(p: f64) -> Result<Bernoulli, ImpairError> {
        Ok(Bernoulli { p: probability("p", p)? })
    }

    /// One draw: `true` drops the frame.
    #[inline]
    pub fn drop(&mut self, rng: &mut RandomStream) -> bool {
        rng.bernoulli(self.p)
    }
}

/// The state of a [`GilbertElliott`] chain.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GeState {
    Good,
    Bad,
}

/// Bursty loss: the Gilbert-Elliott two-state Markov chain, one step per frame.
///
/// # Parameterisation (Gilbert 1960, Elliott 1963; netem's `loss gemodel p r 1-h 1-k`)
///
/// ```text
///            p                        G → B with probability p, B → G with r;
///     ┌──── ───► ────┐                a frame is lost with probability 1 − k in G
///    (G)            (B)               and 1 − h in B.
///     └──── ◄─── ────┘
///            r
/// ```
///
/// Gilbert's channel has `k = 1` (no loss in G); the *simple* Gilbert model also has
/// `h = 0` (every frame in B is lost); Elliott's generalisation allows `k < 1`.
///
/// Stationary state probabilities: `π_G = r / (p + r)`, `π_B = p / (p + r)`.
///
/// * **Mean loss**: `π_G (1 − k) + π_B (1 − h)`.
/// * **Mean time in B**: the sojourn is geometric, `1 / r` frames (and `1 / p` in G).
/// * **Mean loss burst** (a run of consecutive losses): exactly `1 / r` in the simple
///   Gilbert model, where losses are the bad-state sojourns. With `h > 0` or `k < 1`
///   runs of losses no longer coincide with sojourns; [`GilbertElliott::mean_burst`]
///   returns the simple model's `1 / r` and says so.
///
/// A frame's fate is drawn from the state it meets, then the chain steps (the order
/// netem's `loss_gilb_ell` uses). The first frame meets a state drawn from the
/// stationary distribution, so a short run is not biased towards G.
#[derive(Debug, Clone, PartialEq)]
pub struct GilbertElliott {
    p: f64,
    r: f64,
    k: f64,
    h: f64,
    /// `None` until the first frame draws it from the stationary distribution.
    state: Option<GeState>,
}

impl GilbertElliott {
    /// The general chain: transition probabilities `p` (G→B) and `r` (B→G), and `k`,
    /// `h` the probabilities that a frame *survives* in G and in B.
    pub fn new(p: f64, r: f64, k: f64, h: f64) -> Result<GilbertElliott, ImpairError> {
        Ok(GilbertElliott {
            p: probability("p", p)?,
            r: probability("r", r)?,
            k: probability("k", k)?,
            h: probability("h", h)?,
            state: None,
        })
    }

    /// The simple Gilbert model (`k = 1`, `h = 0`) with the given long-run loss rate and
    /// mean loss-burst length in frames: `r = 1 / burst`, `p = loss · r / (1 − loss)`
    /// (from `loss = p / (p + r)`).
    ///
    /// `mean_loss = 0` gives a chain that never loses. Refused: `mean_loss` outside
    /// `[0, 1)`, `mean_burst < 1`, and pairs that need `p > 1` (short bursts at high loss:
    /// `mean_loss > mean_burst / (1 + mean_burst)`).
    pub fn from_loss_and_burst(mean_loss: f64, mean_burst: f64) -> Result<GilbertElliott, ImpairError> {
        if !(0.0..1.0).contains(&mean_loss) {
            return Err(ImpairError::Probability { name: "mean loss", value: mean_loss });
        }
        if !(mean_burst.is_finite() && mean_burst >= 1.0) {
            return Err(ImpairError::BurstLength(mean_burst));
        }
        let r = 1.0 / mean_burst;
        let p = mean_loss * r / (1.0 - mean_loss);
        if p > 1.0 {
            return Err(ImpairError::Unreachable { mean_loss, mean_burst });
        }
        GilbertElliott::new(p, r, 1.0, 0.0)
    }

    pub fn p(&self) -> f64 {
        self.p
    }
    pub fn r(&self) -> f64 {
        self.r
    }
    pub fn k(&self) -> f64 {
        self.k
    }
    pub fn h(&self) -> f64 {
        self.h
    }

    /// The state the next frame will meet, once the first frame has drawn it.
    pub fn state(&self) -> Option<GeState> {
        self.state
    }

    /// Stationary probability of the bad state, `p / (p + r)`. A chain with
    /// `p = r = 0` never moves; it is then taken to start in G and this is 0.
    pub fn bad_fraction(&self) -> f64 {
        if self.p + self.r == 0.0 {
            0.0
        } else {
            self.p / (self.p + self.r)
        }
    }

    /// Long-run loss rate: `π_G (1 − k) + π_B (1 − h)`.
    pub fn mean_loss(&self) -> f64 {
        let bad = self.bad_fraction();
        (1.0 - bad) * (1.0 - self.k) + bad * (1.0 - self.h)
    }

    /// Mean bad-state sojourn, `1 / r` frames: the mean loss burst of the simple Gilbert
    /// model (`k = 1`, `h = 0`); see the type's doc for other parameters. Infinite when
    /// `r = 0`.
    pub fn mean_burst(&self) -> f64 {
        1.0 / self.r
    }

    /// One frame: `true` drops it. Always draws two numbers, the frame's fate and the
    /// chain's step (three on the first frame, which also draws the starting state), so
    /// the stream's use does not depend on the parameters' values.
    pub fn drop(&mut self, rng: &mut RandomStream) -> bool {
        let state = match self.state {
            Some(s) => s,
            None => {
                if rng.bernoulli(self.bad_fraction()) {
                    GeState::Bad
                } else {
                    GeState::Good
                }
            }
        };
        let (survive, leave, other) = match state {
            GeState::Good => (self.k, self.p, GeState::Bad),
            GeState::Bad => (self.h, self.r, GeState::Good),
        };
        let lost = !rng.bernoulli(survive);
        self.state = Some(if rng.bernoulli(leave) { other } else { state });
        lost
    }
}

/// A loss model as a link holds it.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum LossModel {
    /// Nothing is lost, and no random number is drawn.
    #[default]
    None,
    Bernoulli(Bernoulli),
    GilbertElliott(GilbertElliott),
}

impl LossModel {
    /// Whether the next frame is dropped, drawing from the link's own loss stream
    /// (asked for every frame a link delivers: inline).
    #[inline]
    pub fn drop(&mut self, rng: &mut RandomStream) -> bool {
        match self {
            LossModel::None => false,
            LossModel::Bernoulli(m) => m.drop(rng),
            LossModel::GilbertElliott(m) => m.drop(rng),
        }
    }

    /// The long-run loss rate the model is configured for.
    pub fn mean_loss(&self) -> f64 {
        match self {
            LossModel::None => 0.0,
            LossModel::Bernoulli(m) => m.p,
            LossModel::GilbertElliott(m) => m.mean_loss(),
        }
    }
}

/// One byte in bucket units (10⁻⁹ bit): 8 bits × 10⁹.
const UNITS_PER_BYTE: u128 = 8 * 1_000_000_000;

/// A token bucket of `rate_bps` and depth `burst_bytes`, full at time 0 (RFC 2697 §3:
/// "The token buckets C and E are initially (at time 0) full").
#[derive(Debug, Clone, PartialEq, Eq)]
struct Bucket {
    rate_bps: u64,
    burst_bytes: u64,
    /// Level at `at`, in 10⁻⁹ bit. Invariant: `level ≤ burst_bytes × 8 × 10⁹`.
    level: u128,
    at: SimTime,
}

impl Bucket {
    fn new(rate_bps: u64, burst_bytes: u64) -> Result<Bucket, ImpairError> {
        if rate_bps == 0 {
            return Err(ImpairError::ZeroRate);
        }
        if burst_bytes == 0 {
            return Err(ImpairError::ZeroBurst);
        }
        Ok(Bucket { rate_bps, burst_bytes, level: u128::from(burst_bytes) * UNITS_PER_BYTE, at: SimTime::ZERO })
    }

    fn depth(&self) -> u128 {
        u128::from(self.burst_bytes) * UNITS_PER_BYTE
    }

    /// Fills the bucket up to `now`. Panics if `now` is before the last update.
    fn fill_to(&mut self, now: SimTime) {
        assert!(now >= self.at, "token bucket: time went backwards ({now} < {})", self.at);
        let added = u128::from(now.0 - self.at.0) * u128::from(self.rate_bps);
        self.level = (self.level + added).min(self.depth());
        self.at = now;
    }
}

/// A token-bucket policer, as a firewall's `limit` (nftables `limit rate … burst …`,
/// a Cisco `police cir … bc …`): a frame that finds enough tokens passes and takes them;
/// any other frame is dropped and takes none.
///
/// This is RFC 2697's single-rate meter in colour-blind mode (§3.1) with the excess
/// bucket of size EBS = 0, so no packet is ever yellow: green passes, red is dropped
/// (RFC 2697 §2 leaves the action to the implementation; policing drops). A frame longer
/// than the bucket is always red. The bucket fills continuously (see the module doc)
/// where RFC 2697 adds whole bytes; the two agree at every whole-byte instant.
///
/// Over any interval `[s, t]`, the bytes passed are at most `burst + rate·(t − s)/8`
/// (the bucket's arrival curve), and a source that always has a frame waiting gets
/// exactly that, less at most one frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Policer {
    bucket: Bucket,
    /// Frames and bytes passed and dropped so far.
    pub passed_frames: u64,
    pub passed_bytes: u64,
    pub dropped_frames: u64,
    pub dropped_bytes: u64,
}

impl Policer {
    /// A policer of committed rate `rate_bps` (RFC 2697 CIR, in bit/s here) and bucket
    /// depth `burst_bytes` (CBS), full at time 0.
    pub fn new(rate_bps: u64, burst_bytes: u64) -> Result<Policer, ImpairError> {
        Ok(Policer {
            bucket: Bucket::new(rate_bps, burst_bytes)?,
            passed_frames: 0,
            passed_bytes: 0,
            dropped_frames: 0,
            dropped_bytes: 0,
        })
    }

    pub fn rate_bps(&self) -> u64 {
        self.bucket.rate_bps
    }
    pub fn burst_bytes(&self) -> u64 {
        self.bucket.burst_bytes
    }

    /// Whole bytes of tokens in the bucket at its last update.
    pub fn tokens_bytes(&self) -> u64 {
        (self.bucket.level / UNITS_PER_BYTE) as u64
    }

    /// Meters a frame of `len` bytes arriving at `now`: `true` if it conforms and passes
    /// (RFC 2697 §3.1: `Tc ≥ B`, then `Tc -= B`), `false` if it is dropped.
    ///
    /// # Panics
    /// If `now` is earlier than a previous call's: a model is fed in time order.
    pub fn conform(&mut self, now: SimTime, len: usize) -> bool {
        self.bucket.fill_to(now);
        let cost = len as u128 * UNITS_PER_BYTE;
        if self.bucket.level >= cost {
            self.bucket.level -= cost;
            self.passed_frames += 1;
            self.passed_bytes += len as u64;
            true
        } else {
            self.dropped_frames += 1;
            self.dropped_bytes += len as u64;
            false
        }
    }
}

/// A token-bucket shaper (Linux `tbf`, a Cisco `shape average`): frames never get
/// dropped by it but wait until the bucket holds their length, in arrival order.
///
/// The same bucket as [`Policer`] (RFC 2697 §3 metering, full at time 0); where a
/// policer colours a non-conforming frame red, the shaper delays it to the first
/// instant it would be green (RFC 2475 §2.3.3.3 "shapers"). It is a calculator, not a
/// queue: [`Shaper::departure`] says when a frame may leave and the link keeps the
/// frame until then. Departures are FIFO: no frame leaves before the one before it.
///
/// Output over any window `[s, t]` of departures is at most `burst + rate·(t − s)/8`
/// bytes; a backlog of frames totalling the bucket depth leaves at once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shaper {
    bucket: Bucket,
}

impl Shaper {
    pub fn new(rate_bps: u64, burst_bytes: u64) -> Result<Shaper, ImpairError> {
        Ok(Shaper { bucket: Bucket::new(rate_bps, burst_bytes)? })
    }

    pub fn rate_bps(&self) -> u64 {
        self.bucket.rate_bps
    }
    pub fn burst_bytes(&self) -> u64 {
        self.bucket.burst_bytes
    }

    /// The departure time of the last frame scheduled (time 0 before any).
    pub fn last_departure(&self) -> SimTime {
        self.bucket.at
    }

    /// Schedules a frame of `len` bytes that arrives at `now`, and returns when it may
    /// leave: at `now` if the bucket holds `len` bytes then (and the previous frame has
    /// left), otherwise at the first nanosecond at which it does. `None` for a frame
    /// longer than the bucket, which never conforms (Linux `tbf` drops it too); the
    /// shaper's state is then unchanged.
    ///
    /// `now` may be earlier than the last departure: the frame queues behind it, since
    /// a frame never leaves before the one scheduled before it.
    pub fn departure(&mut self, now: SimTime, len: usize) -> Option<SimTime> {
        let cost = len as u128 * UNITS_PER_BYTE;
        if cost > self.bucket.depth() {
            return None;
        }
        let start = now.max(self.bucket.at);
        self.bucket.fill_to(start);
        let leave = if self.bucket.level >= cost {
            start
        } else {
            let missing = cost - self.bucket.level;
            let wait = missing.div_ceil(u128::from(self.bucket.rate_bps));
            let wait = u64::try_from(wait).expect("shaper: wait overflows u64 ns");
            let leave = SimTime(start.0.checked_add(wait).expect("shaper: departure overflows u64 ns"));
            self.bucket.fill_to(leave);
            leave
        };
        self.bucket.level -= cost;
        Some(leave)
    }
}

#[cfg(test)]
mod test {
    use super::*;
    use crate::rng::RunSeed;

    #[test]
    fn constructors_refuse_bad_parameters() {
        assert!(Bernoulli::new(1.01).is_err());
        assert!(Bernoulli::new(f64::NAN).is_err());
        assert!(GilbertElliott::new(0.1, -0.1, 1.0, 0.0).is_err());
        assert!(GilbertElliott::from_loss_and_burst(0.01, 0.5).is_err());
        assert!(GilbertElliott::from_loss_and_burst(1.0, 3.0).is_err());
        // loss 0.6 with bursts of 1: p = 0.6 / 0.4 = 1.5.
        let e = GilbertElliott::from_loss_and_burst(0.6, 1.0).unwrap_err();
        assert!(matches!(e, ImpairError::Unreachable { .. }), "{e}");
        assert_eq!(Policer::new(0, 10), Err(ImpairError::ZeroRate));
        assert_eq!(Shaper::new(10, 0).unwrap_err(), ImpairError::ZeroBurst);
        assert!(ImpairError::ZeroRate.to_string().contains("0 bit/s"));
    }

    #[test]
    fn from_loss_and_burst_solves_the_formulas() {
        let ge = GilbertElliott::from_loss_and_burst(0.01, 4.0).unwrap();
        assert!((ge.r() - 0.25).abs() < 1e-15);
        // p = 0.01 × 0.25 / 0.99
        assert!((ge.p() - 0.0025 / 0.99).abs() < 1e-15);
        assert!((ge.mean_loss() - 0.01).abs() < 1e-15);
        assert!((ge.mean_burst() - 4.0).abs() < 1e-12);
        assert_eq!((ge.k(), ge.h()), (1.0, 0.0));
    }

    #[test]
    fn none_draws_nothing_and_certainties_hold() {
        let mut a = RunSeed(1).stream(0, "loss");
        let mut b = RunSeed(1).stream(0, "loss");
        assert!(!(0..100).any(|_| LossModel::None.drop(&mut a)));
        assert_eq!(a.next_u64(), b.next_u64(), "LossModel::None consumed randomness");
        let mut all = LossModel::Bernoulli(Bernoulli::new(1.0).unwrap());
        assert!((0..100).all(|_| all.drop(&mut a)));
        // A chain that starts and stays bad, losing everything there.
        let mut stuck = GilbertElliott::new(1.0, 0.0, 1.0, 0.0).unwrap();
        assert!((0..100).all(|_| stuck.drop(&mut a)));
        assert_eq!(stuck.state(), Some(GeState::Bad));
    }

    #[test]
    fn policer_is_the_rfc2697_green_red_rule() {
        // 8000 bit/s = 1 byte/ms, bucket 100 bytes.
        let mut pol = Policer::new(8_000, 100).unwrap();
        assert!(pol.conform(SimTime::ZERO, 100));
        assert!(!pol.conform(SimTime::ZERO, 1), "empty bucket: red");
        assert!(!pol.conform(SimTime::from_millis(49), 50), "49 tokens < 50");
        assert!(pol.conform(SimTime::from_millis(50), 50), "red took no tokens");
        assert_eq!(pol.tokens_bytes(), 0);
        // Idle for a long time: the bucket holds its depth, no more.
        assert!(!pol.conform(SimTime::from_secs(100), 101));
        assert_eq!(pol.tokens_bytes(), 100);
        assert_eq!((pol.passed_frames, pol.dropped_frames, pol.passed_bytes, pol.dropped_bytes), (2, 3, 150, 152));
    }

    #[test]
    fn shaper_waits_to_the_nanosecond() {
        // 1 Mbit/s: a byte is 8 µs of tokens. Bucket 1000 bytes.
        let mut sh = Shaper::new(1_000_000, 1000).unwrap();
        assert_eq!(sh.departure(SimTime::ZERO, 1000), Some(SimTime::ZERO));
        // Longer than the bucket: never conforms.
        assert_eq!(sh.departure(SimTime::ZERO, 1001), None);
        assert_eq!(sh.departure(SimTime::ZERO, 100), Some(SimTime::from_micros(800)));
        // Arrives before the previous frame left: queues behind it.
        assert_eq!(sh.departure(SimTime::from_micros(10), 1), Some(SimTime::from_micros(808)));
        // 3 bits at 7 bit/s: ceil(3e9 / 7) ns.
        let mut odd = Shaper::new(7, 1).unwrap();
        assert_eq!(odd.departure(SimTime::ZERO, 1), Some(SimTime::ZERO));
        assert_eq!(odd.departure(SimTime::ZERO, 1), Some(SimTime(8_000_000_000u64.div_ceil(7))));
    }

    #[test]
    #[should_panic(expected = "backwards")]
    fn policer_refuses_time_going_backwards() {
        let mut pol = Policer::new(8_000, 100).unwrap();
        pol.conform(SimTime::from_millis(5), 1);
        pol.conform(SimTime::from_millis(4), 1);
    }
}
