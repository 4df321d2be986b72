//! Adaptive upstream for seed 004's asymmetric router: link-layer acknowledgements
//! between the two routers, a per-channel delivery-ratio estimate, and a chooser that
//! returns TCP acknowledgements over the radio or over the modem, with hysteresis.
//!
//! Seed 004 (Maggs, "Asymmetric Wireless Networking") describes the mechanism:
//!
//! * "I decided that I would implement my own acknowledgements mechanism by adding a
//!   networking layer between TCP and IP" — [`LinkArq`];
//! * "it moderated the maximum backoff time so that it never exceed a tenth of a
//!   second" — [`ArqConfig::max_timeout_ns`] defaults to 100 ms;
//! * "Building on top of the router's acknowledgements mechanism, the router now has
//!   the capacity to adaptively decide whether to send packets from home to school
//!   using the radio transmitter or the modem, based on the percentage of packets sent
//!   using the transmitter that are successfully received at the campus end" —
//!   [`DeliveryRatio`] and [`ChannelChooser`];
//! * hidden terminals (Wireless Andrew's omni transceivers cannot hear the faint
//!   home-to-campus signal) make the radio **upstream** lossy, while "packets transmitted
//!   from campus to home are only very rarely lost": so link acks (downstream) are
//!   taken as reliable, and a missing ack is charged to the upstream frame.
//!
//! Where the seed is silent (initial timeout, retry limit, estimator, thresholds, probing)
//! each default says what was chosen and why.
//!
//! Standards a reader should know: IEEE 802.11-2020 §10.3.2.x (ack after each unicast
//! frame, retry limits `dot11ShortRetryLimit` = 7), RFC 4303 §3.4.3 (the anti-replay
//! sliding window the receiver's duplicate check follows), RFC 1982 (serial-number
//! comparison of wrapping sequence numbers).
//!
//! All three models are sans-IO (STYLE.md): they take `now` (`u64` ns of simulated time,
//! as [`crate::tcp`] and [`crate::wifi`] do) and inputs, return what to send, and say
//! when they next need waking with `poll_at()`. They draw no random numbers: the
//! backoff has no jitter (one sender per point-to-point ARQ, so there is no contention
//! among ARQ senders to break up), so the same inputs always give the same outputs.

use std::collections::{BTreeMap, VecDeque};

/// One millisecond in nanoseconds.
const MS: u64 = 1_000_000;

// ---------------------------------------------------------------------------------------
// Link ARQ
// ---------------------------------------------------------------------------------------

/// Configuration of one end's link ARQ.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ArqConfig {
    /// Timeout after the first transmission, ns. Later timeouts double, up to
    /// [`Self::max_timeout_ns`]. Seed 004 is silent; 10 ms is chosen because the
    /// upstream carries 40-byte TCP ACKs (seed 004: "40-byte datagrams") whose time on
    /// a 2 Mb/s WaveLAN is well under a millisecond, but a link ack may wait behind a
    /// 1500-byte downstream frame (6 ms at 2 Mb/s): 10 ms covers that without waiting
    /// long on a real loss.
    pub initial_timeout_ns: u64,
    /// Cap on the backoff, ns. Seed 004: "it moderated the maximum backoff time so that
    /// it never exceed a tenth of a second" — 100 ms.
    pub max_timeout_ns: u64,
    /// Transmissions of one frame, the first included, before it is dropped (≥ 1).
    /// Seed 004 is silent; 7 is IEEE 802.11's `dot11ShortRetryLimit` default (also an
    /// attempt count), so with the defaults a frame is given up 450 ms after its first
    /// send (10+20+40+80+100+100+100).
    pub max_attempts: u32,
    /// Octets of a link ack frame, for the world to charge on the return channel.
    /// Seed 004 is silent; 8 = a 4-byte sequence number, a type byte, padding to
    /// 8 bytes, so acks are small next to a 40-byte TCP ACK.
    pub ack_len: u32,
    /// Sequence numbers the receiver remembers behind the highest one seen, for
    /// duplicate suppression (a multiple of 64, ≥ 64). RFC 4303 §3.4.3 asks at least
    /// 32 and defaults to 64 for IPsec; here a frame may be retried for 450 ms while new
    /// frames go on (≈ 5000 40-byte frames/s fit a 2 Mb/s radio), so 4096 keeps any
    /// frame still being retried inside the window.
    pub dup_window: u32,
}

impl Default for ArqConfig {
    fn default() -> Self {
        ArqConfig {
            initial_timeout_ns: 10 * MS,
            max_timeout_ns: 100 * MS,
            max_attempts: 7,
            ack_len: 8,
            dup_window: 4096,
        }
    }
}

impl ArqConfig {
    /// The timeout armed after transmission number `attempt` (1 = the first send):
    /// `min(initial × 2^(attempt−1), max)`, without overflow.
    pub fn timeout_after(&self, attempt: u32) -> u64 {
        let shift = attempt.saturating_sub(1);
        let t = if shift >= 64 { u64::MAX } else { self.initial_timeout_ns.saturating_mul(1u64 << shift) };
        t.min(self.max_timeout_ns)
    }
}

/// Link sequence number on the wire: 32 bits, wrapping, compared as RFC 1982 serial
/// numbers.
pub type Seq = u32;

/// What the sender asks the world to do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    /// Put a data frame on the channel. `attempt` is 1 for the first transmission.
    Transmit { seq: Seq, frame_id: u64, len: u32, attempt: u32 },
    /// The frame timed out after its last allowed attempt and is dropped.
    GiveUp { seq: Seq, frame_id: u64, attempts: u32 },
}

impl Action {
    /// True for what follows a timeout (a retransmission or a give-up): each one means
    /// an attempt went unacknowledged, a failure for [`DeliveryRatio`].
    pub fn is_timeout(&self) -> bool {
        match *self {
            Action::Transmit { attempt, .. } => attempt > 1,
            Action::GiveUp { .. } => true,
        }
    }
}

/// A link ack to send back to the peer (small: [`ArqConfig::ack_len`] octets).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ack {
    pub seq: Seq,
    pub len: u32,
}

/// What the receiver made of a data frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RxVerdict {
    /// New: hand the frame up, and send the ack.
    Deliver(Ack),
    /// Already delivered (its ack was lost or late): do not hand it up, but ack again,
    /// or the sender would retry it to the limit.
    Duplicate(Ack),
    /// Older than the duplicate window: whether it was delivered is unknown, so it is
    /// neither handed up nor acked (RFC 4303 §3.4.3 drops such packets too); the sender
    /// counts it lost.
    TooOld,
}

impl RxVerdict {
    /// The ack to send, if any.
    pub fn ack(&self) -> Option<Ack> {
        match *self {
            RxVerdict::Deliver(a) | RxVerdict::Duplicate(a) => Some(a),
            RxVerdict::TooOld => None,
        }
    }
    pub fn deliver(&self) -> bool {
        matches!(self, RxVerdict::Deliver(_))
    }
}

/// A frame the peer acknowledged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Acked {
    pub seq: Seq,
    pub frame_id: u64,
    /// Transmissions made before the ack came (1 = acked on the first try).
    pub attempts: u32,
    /// First send to ack, ns.
    pub delay_ns: u64,
}

/// Counters of one end. Invariants: `acked + dropped + in_flight == frames`;
/// `transmissions == frames + retransmissions`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ArqCounters {
    /// Frames handed to [`LinkArq::send`].
    pub frames: u64,
    /// Data transmissions of any attempt.
    pub transmissions: u64,
    pub retransmissions: u64,
    pub acked: u64,
    pub acked_first_try: u64,
    pub dropped: u64,
    /// Acks for no frame in flight (already acked, given up, or unknown).
    pub stale_acks: u64,
    /// Receiver: frames handed up.
    pub delivered: u64,
    /// Receiver: duplicates suppressed (re-acked).
    pub duplicates: u64,
    /// Receiver: frames older than the window (not acked).
    pub too_old: u64,
    /// Receiver: acks sent.
    pub acks_sent: u64,
}

#[derive(Clone, Copy, Debug)]
struct Outstanding {
    frame_id: u64,
    len: u32,
    attempts: u32,
    first_sent: u64,
    deadline: u64,
}

/// One router's end of the link ARQ: a sender of its own frames (selective repeat,
/// one timer per frame, exponential backoff capped) and a receiver of the peer's
/// (ack every frame, suppress duplicates).
#[derive(Clone, Debug)]
pub struct LinkArq {
    config: ArqConfig,
    /// Frames sent so far; frame number `n` carries `Seq` `n as u32`. Never wraps, so
    /// the map below iterates in send order.
    next_n: u64,
    outstanding: BTreeMap<u64, Outstanding>,
    /// Highest sequence number received, once any.
    rx_top: Option<Seq>,
    /// Bit `s % dup_window` set when `s` (within the window behind `rx_top`) was seen.
    rx_seen: Vec<u64>,
    counters: ArqCounters,
}

impl LinkArq {
    /// Panics if the configuration is unusable (zero attempts, zero timeout, a window
    /// that is not a positive multiple of 64 or exceeds 2³¹).
    pub fn new(config: ArqConfig) -> LinkArq {
        assert!(config.max_attempts >= 1, "ArqConfig: max_attempts must be at least 1");
        assert!(config.initial_timeout_ns > 0, "ArqConfig: initial_timeout_ns must be > 0");
        assert!(
            config.max_timeout_ns >= config.initial_timeout_ns,
            "ArqConfig: max_timeout_ns is below initial_timeout_ns"
        );
        assert!(
            config.dup_window >= 64 && config.dup_window.is_multiple_of(64) && config.dup_window <= 1 << 31,
            "ArqConfig: dup_window must be a multiple of 64 in [64, 2^31]"
        );
        LinkArq {
            config,
            next_n: 0,
            outstanding: BTreeMap::new(),
            rx_top: None,
            rx_seen: vec![0; (config.dup_window / 64) as usize],
            counters: ArqCounters::default(),
        }
    }

    pub fn config(&self) -> &ArqConfig {
        &self.config
    }
    pub fn counters(&self) -> &ArqCounters {
        &self.counters
    }
    /// Frames sent and neither acked nor dropped.
    pub fn in_flight(&self) -> usize {
        self.outstanding.len()
    }

    /// Sends a new frame now: returns its first transmission and arms its timer.
    /// Call when the frame goes on the channel (the timeout runs from `now`).
    pub fn send(&mut self, now: u64, frame_id: u64, len: u32) -> Vec<Action> {
        let n = self.next_n;
        self.next_n += 1;
        let deadline = now.saturating_add(self.config.timeout_after(1));
        self.outstanding.insert(n, Outstanding { frame_id, len, attempts: 1, first_sent: now, deadline });
        self.counters.frames += 1;
        self.counters.transmissions += 1;
        vec![Action::Transmit { seq: n as Seq, frame_id, len, attempt: 1 }]
    }

    /// The frame number a received ack's `seq` names, if it is one sent so far.
    fn number_of(&self, seq: Seq) -> Option<u64> {
        let back = u64::from((self.next_n as Seq).wrapping_sub(seq));
        if back == 0 || back > self.next_n {
            return None;
        }
        Some(self.next_n - back)
    }

    /// The peer acknowledged `seq`: stops its timer. `None` for a stale ack.
    pub fn on_ack(&mut self, now: u64, seq: Seq) -> Option<Acked> {
        let Some(o) = self.number_of(seq).and_then(|n| self.outstanding.remove(&n)) else {
            self.counters.stale_acks += 1;
            return None;
        };
        self.counters.acked += 1;
        if o.attempts == 1 {
            self.counters.acked_first_try += 1;
        }
        Some(Acked { seq, frame_id: o.frame_id, attempts: o.attempts, delay_ns: now.saturating_sub(o.first_sent) })
    }

    /// When the earliest retransmission timer expires, if any frame is in flight.
    pub fn poll_at(&self) -> Option<u64> {
        self.outstanding.values().map(|o| o.deadline).min()
    }

    /// Handles every timer due at `now`, in send order: a retransmission with the next
    /// (doubled, capped) timeout, or a give-up after the last attempt.
    pub fn on_timer(&mut self, now: u64) -> Vec<Action> {
        let mut actions = Vec::new();
        let mut gone = Vec::new();
        for (&n, o) in self.outstanding.iter_mut() {
            if o.deadline > now {
                continue;
            }
            if o.attempts >= self.config.max_attempts {
                actions.push(Action::GiveUp { seq: n as Seq, frame_id: o.frame_id, attempts: o.attempts });
                gone.push(n);
                continue;
            }
            o.attempts += 1;
            o.deadline = now.saturating_add(self.config.timeout_after(o.attempts));
            actions.push(Action::Transmit { seq: n as Seq, frame_id: o.frame_id, len: o.len, attempt: o.attempts });
            self.counters.transmissions += 1;
            self.counters.retransmissions += 1;
        }
        for n in gone {
            self.outstanding.remove(&n);
            self.counters.dropped += 1;
        }
        actions
    }

    fn seen_bit(&mut self, seq: Seq) -> (&mut u64, u64) {
        let i = seq % self.config.dup_window;
        (&mut self.rx_seen[(i / 64) as usize], 1u64 << (i % 64))
    }

    /// Whether a frame `seq` was delivered here (within the duplicate window; one newer
    /// than any seen, or too old to be delivered, was not), for conservation.
    pub fn has_delivered(&self, seq: Seq) -> bool {
        let Some(top) = self.rx_top else { return false };
        if (seq.wrapping_sub(top) as i32) > 0 || top.wrapping_sub(seq) >= self.config.dup_window {
            return false;
        }
        let i = seq % self.config.dup_window;
        self.rx_seen[(i / 64) as usize] & (1u64 << (i % 64)) != 0
    }

    /// A data frame `seq` arrived from the peer: deliver it or not, and ack it or not.
    pub fn on_frame(&mut self, _now: u64, seq: Seq) -> RxVerdict {
        let window = self.config.dup_window;
        let ack = Ack { seq, len: self.config.ack_len };
        let ahead = match self.rx_top {
            None => {
                self.rx_top = Some(seq);
                let (word, bit) = self.seen_bit(seq);
                *word |= bit;
                self.counters.delivered += 1;
                self.counters.acks_sent += 1;
                return RxVerdict::Deliver(ack);
            }
            Some(top) => seq.wrapping_sub(top) as i32,
        };
        let top = self.rx_top.unwrap_or(seq);
        let verdict = if ahead > 0 {
            // Newer than anything seen: forget the slots that fall out of the window.
            if ahead as u32 >= window {
                self.rx_seen.iter_mut().for_each(|w| *w = 0);
            } else {
                for k in 1..=ahead as u32 {
                    let (word, bit) = self.seen_bit(top.wrapping_add(k));
                    *word &= !bit;
                }
            }
            self.rx_top = Some(seq);
            let (word, bit) = self.seen_bit(seq);
            *word |= bit;
            RxVerdict::Deliver(ack)
        } else if top.wrapping_sub(seq) >= window {
            RxVerdict::TooOld
        } else {
            let (word, bit) = self.seen_bit(seq);
            if *word & bit != 0 {
                RxVerdict::Duplicate(ack)
            } else {
                *word |= bit;
                RxVerdict::Deliver(ack)
            }
        };
        match verdict {
            RxVerdict::Deliver(_) => self.counters.delivered += 1,
            RxVerdict::Duplicate(_) => self.counters.duplicates += 1,
            RxVerdict::TooOld => self.counters.too_old += 1,
        }
        if verdict.ack().is_some() {
            self.counters.acks_sent += 1;
        }
        verdict
    }
}

// ---------------------------------------------------------------------------------------
// Delivery ratio
// ---------------------------------------------------------------------------------------

/// Configuration of a [`DeliveryRatio`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RatioConfig {
    /// Outcomes remembered. Seed 004 gives "the percentage of packets sent", no window;
    /// 100 is chosen so one outcome moves the ratio by exactly one percentage point,
    /// and the estimate's standard deviation at the 90 % threshold, √(0.9·0.1/100) = 3 %,
    /// is below the hysteresis band (7 points), so noise alone rarely crosses it.
    pub window: usize,
    /// Outcomes needed before [`DeliveryRatio::ratio`] gives an estimate. 50: half the
    /// window, a standard deviation of ≤ 4.3 % at the threshold.
    pub min_samples: usize,
}

impl Default for RatioConfig {
    fn default() -> Self {
        RatioConfig { window: 100, min_samples: 50 }
    }
}

/// The fraction of transmissions on one channel that the far end received, over the
/// last `window` attempts (a sliding window, not an EWMA: its estimate is a plain
/// proportion whose error is binomial and whose memory is exactly `window` attempts,
/// and it is exact in integers, so thresholds compare without rounding drift).
///
/// **Per attempt, not per frame.** Seed 004 bases the choice on "the percentage of
/// packets sent using the transmitter that are successfully received at the campus
/// end": every transmission counts. Per-frame delivery after ARQ would hide the
/// channel: with 7 attempts a channel losing half its frames still delivers
/// 1 − 0.5⁷ ≈ 99 % of them, at the price of the delays seed 004 complains about.
/// Feed it one failure per timeout ([`Action::is_timeout`]) and one success per ack
/// ([`LinkArq::on_ack`]); a lost link ack counts as a failure, which the seed allows for
/// (downstream losses are "only very rarely" seen).
#[derive(Clone, Debug)]
pub struct DeliveryRatio {
    config: RatioConfig,
    outcomes: VecDeque<bool>,
    successes: usize,
    total_attempts: u64,
    total_successes: u64,
}

impl DeliveryRatio {
    /// Panics on a zero window or `min_samples` above the window.
    pub fn new(config: RatioConfig) -> DeliveryRatio {
        assert!(config.window > 0, "RatioConfig: window must be > 0");
        assert!(config.min_samples <= config.window, "RatioConfig: min_samples exceeds window");
        DeliveryRatio {
            config,
            outcomes: VecDeque::with_capacity(config.window),
            successes: 0,
            total_attempts: 0,
            total_successes: 0,
        }
    }

    /// One attempt's outcome.
    pub fn record(&mut self, delivered: bool) {
        if self.outcomes.len() == self.config.window && self.outcomes.pop_front() == Some(true) {
            self.successes -= 1;
        }
        self.outcomes.push_back(delivered);
        self.successes += usize::from(delivered);
        self.total_attempts += 1;
        self.total_successes += u64::from(delivered);
    }

    /// Records what an ARQ sender's actions imply: one failure per timeout.
    pub fn record_actions(&mut self, actions: &[Action]) {
        for _ in actions.iter().filter(|a| a.is_timeout()) {
            self.record(false);
        }
    }

    /// Successes / attempts over the window, once `min_samples` are in.
    pub fn ratio(&self) -> Option<f64> {
        (self.outcomes.len() >= self.config.min_samples && !self.outcomes.is_empty())
            .then(|| self.successes as f64 / self.outcomes.len() as f64)
    }
    /// (successes, attempts) in the window.
    pub fn window_counts(&self) -> (usize, usize) {
        (self.successes, self.outcomes.len())
    }
    /// (successes, attempts) since creation.
    pub fn lifetime_counts(&self) -> (u64, u64) {
        (self.total_successes, self.total_attempts)
    }
}

// ---------------------------------------------------------------------------------------
// Channel chooser
// ---------------------------------------------------------------------------------------

/// The two upstream channels of seed 004's router.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Channel {
    /// The WaveLAN transmitter, home to campus.
    Radio,
    /// The modem's SLIP line.
    Modem,
}

/// Configuration of a [`ChannelChooser`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ChooserConfig {
    /// Leave the radio when its ratio falls strictly below this. Seed 004: "Once packet
    /// losses approach 10%, a typical TCP implementation backs off so much that it
    /// effectively shuts down" — 0.90.
    pub low: f64,
    /// Return to the radio when its ratio rises strictly above this. Seed 004 gives no
    /// number; 0.97 (3 % loss) makes the band 7 points, over twice the estimate's
    /// standard deviation at 90 % with the default window (see [`RatioConfig::window`]).
    pub high: f64,
    /// While on the modem, how often the world should send a probe frame over the radio
    /// so its ratio keeps being measured (nothing else goes over it then, and a frozen
    /// estimate would never rise above `high`). Seed 004 is silent on how the router
    /// noticed recovery; 50 ms (20 probes/s of ~48 octets, < 1 % of 2 Mb/s) refills the
    /// default window in 5 s.
    pub probe_interval_ns: u64,
    /// The channel at start: the radio, as the seed's router was first built.
    pub initial: Channel,
}

impl Default for ChooserConfig {
    fn default() -> Self {
        ChooserConfig { low: 0.90, high: 0.97, probe_interval_ns: 50 * MS, initial: Channel::Radio }
    }
}

/// A change of channel, with the estimates that caused it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Switch {
    pub at_ns: u64,
    pub from: Channel,
    pub to: Channel,
    pub radio_ratio: Option<f64>,
    pub modem_ratio: Option<f64>,
}

/// Picks the upstream channel from the two delivery ratios, with hysteresis:
///
/// * on the radio, switch to the modem when the radio's ratio < `low` and the modem's
///   ratio is unknown or higher than the radio's (no point leaving for a worse line);
/// * on the modem, switch back when the radio's ratio > `high`, or when the modem's
///   ratio is known and lower than the radio's (the line failed).
///
/// Between `low` and `high` it stays where it is. An unknown radio ratio never causes
/// a switch.
#[derive(Clone, Debug)]
pub struct ChannelChooser {
    config: ChooserConfig,
    current: Channel,
    next_probe: Option<u64>,
    switches: Vec<Switch>,
}

impl ChannelChooser {
    /// Panics unless `0 ≤ low ≤ high ≤ 1` and the probe interval is positive.
    pub fn new(config: ChooserConfig) -> ChannelChooser {
        assert!(
            (0.0..=1.0).contains(&config.low) && (0.0..=1.0).contains(&config.high) && config.low <= config.high,
            "ChooserConfig: need 0 <= low <= high <= 1"
        );
        assert!(config.probe_interval_ns > 0, "ChooserConfig: probe_interval_ns must be > 0");
        ChannelChooser { config, current: config.initial, next_probe: None, switches: Vec::new() }
    }

    /// The channel upstream frames should take now.
    pub fn channel(&self) -> Channel {
        self.current
    }
    /// Every switch so far, in time order.
    pub fn switches(&self) -> &[Switch] {
        &self.switches
    }

    /// Re-evaluates the choice from the current estimates (call after each recorded
    /// outcome). Returns the switch if the channel changed.
    pub fn update(&mut self, now: u64, radio: Option<f64>, modem: Option<f64>) -> Option<Switch> {
        let r = radio?;
        let to = match self.current {
            Channel::Radio if r < self.config.low && modem.is_none_or(|m| m > r) => Channel::Modem,
            Channel::Modem if r > self.config.high || modem.is_some_and(|m| m < r) => Channel::Radio,
            _ => return None,
        };
        let switch = Switch { at_ns: now, from: self.current, to, radio_ratio: radio, modem_ratio: modem };
        self.current = to;
        self.next_probe = (to == Channel::Modem).then(|| now.saturating_add(self.config.probe_interval_ns));
        self.switches.push(switch);
        Some(switch)
    }

    /// When the next radio probe is due (only while on the modem).
    pub fn poll_at(&self) -> Option<u64> {
        self.next_probe
    }

    /// True if a probe should go over the radio now; re-arms the probe timer.
    pub fn on_timer(&mut self, now: u64) -> bool {
        match self.next_probe {
            Some(t) if t <= now => {
                self.next_probe = Some(now.saturating_add(self.config.probe_interval_ns));
                true
            }
            _ => false,
        }
    }
}

#[cfg(test)]
mod test {
    use super::*;

    fn arq() -> LinkArq {
        LinkArq::new(ArqConfig::default())
    }

    #[test]
    fn timeout_doubles_then_caps() {
        let c = ArqConfig::default();
        let got: Vec<u64> = (1..=8).map(|a| c.timeout_after(a) / MS).collect();
        assert_eq!(got, [10, 20, 40, 80, 100, 100, 100, 100]);
        assert_eq!(c.timeout_after(200), 100 * MS); // no overflow on huge attempt numbers
    }

    #[test]
    fn ack_on_first_try_stops_timer() {
        let mut a = arq();
        assert_eq!(a.send(0, 7, 40), [Action::Transmit { seq: 0, frame_id: 7, len: 40, attempt: 1 }]);
        assert_eq!(a.poll_at(), Some(10 * MS));
        let acked = a.on_ack(3 * MS, 0).unwrap();
        assert_eq!((acked.frame_id, acked.attempts, acked.delay_ns), (7, 1, 3 * MS));
        assert_eq!(a.poll_at(), None);
        assert_eq!(a.on_ack(4 * MS, 0), None);
        assert_eq!(a.counters().stale_acks, 1);
        assert_eq!(a.counters().acked_first_try, 1);
    }

    #[test]
    fn on_timer_before_deadline_does_nothing() {
        let mut a = arq();
        a.send(0, 1, 40);
        assert!(a.on_timer(10 * MS - 1).is_empty());
        assert_eq!(a.on_timer(10 * MS).len(), 1);
    }

    #[test]
    fn receiver_window_forgets_old_and_handles_reordering() {
        let mut a = LinkArq::new(ArqConfig { dup_window: 64, ..ArqConfig::default() });
        assert!(a.on_frame(0, 5).deliver());
        assert!(a.on_frame(0, 3).deliver()); // late but new
        assert_eq!(a.on_frame(0, 3), RxVerdict::Duplicate(Ack { seq: 3, len: 8 }));
        assert!(a.on_frame(0, 100).deliver());
        assert_eq!(a.on_frame(0, 5), RxVerdict::TooOld); // 95 behind, window 64
        assert!(a.on_frame(0, 40).deliver()); // 60 behind: inside, never seen
        assert_eq!(a.counters().too_old, 1);
        assert_eq!(a.counters().acks_sent, 5);
    }

    #[test]
    fn sequence_numbers_wrap() {
        let mut a = arq();
        a.next_n = u64::from(u32::MAX); // next frame carries seq u32::MAX
        a.send(0, 1, 40);
        a.send(0, 2, 40);
        assert_eq!(a.on_ack(1, u32::MAX).map(|x| x.frame_id), Some(1));
        assert_eq!(a.on_ack(1, 0).map(|x| x.frame_id), Some(2));
        let mut b = arq();
        assert!(b.on_frame(0, u32::MAX - 1).deliver());
        assert!(b.on_frame(0, 1).deliver()); // ahead across the wrap
        assert!(!b.on_frame(0, u32::MAX - 1).deliver());
        assert!(b.on_frame(0, u32::MAX).deliver());
    }

    #[test]
    fn ratio_window_slides() {
        let mut r = DeliveryRatio::new(RatioConfig { window: 4, min_samples: 2 });
        r.record(false);
        assert_eq!(r.ratio(), None);
        r.record(true);
        assert_eq!(r.ratio(), Some(0.5));
        for _ in 0..4 {
            r.record(true);
        }
        assert_eq!(r.ratio(), Some(1.0));
        assert_eq!(r.lifetime_counts(), (5, 6));
    }

    #[test]
    fn chooser_ignores_unknown_and_worse_modem() {
        let mut c = ChannelChooser::new(ChooserConfig::default());
        assert_eq!(c.update(0, None, Some(1.0)), None);
        assert_eq!(c.update(0, Some(0.5), Some(0.4)), None); // modem worse: stay
        assert!(c.update(1, Some(0.5), Some(0.99)).is_some());
        assert_eq!(c.poll_at(), Some(1 + 50 * MS));
        // The modem line fails: back to the radio although it is below `high`.
        assert_eq!(c.update(2, Some(0.5), Some(0.2)).map(|s| s.to), Some(Channel::Radio));
        assert_eq!(c.poll_at(), None);
    }
}
