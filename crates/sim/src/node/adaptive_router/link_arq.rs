//! Link-layer ARQ between seed 004's two routers: each datagram sent over the radio in a
//! numbered frame, retransmitted after a timeout that doubles up to a cap, until the peer's
//! link ack comes or the last attempt is given up; the receiver acks every frame and
//! suppresses duplicates in a sliding window. See the router's overview in [`super`].

use std::collections::BTreeMap;

/// One millisecond in nanoseconds.
const MS: u64 = 1_000_000;

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
}
