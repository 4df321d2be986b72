//! The 802.11 distributed coordination function (DCF) of one station, sans-IO.
//!
//! Standards a reader must know (IEEE Std 802.11-2020):
//!
//! * §10.3.2.3 interframe spaces: a station may start a frame exchange after the
//!   medium has been idle for DIFS (§10.3.2.3.5), or for EIFS (§10.3.2.3.7) when
//!   the last frame it received was in error — until it receives a good frame.
//! * §10.3.2.4 virtual carrier sense: the NAV set from Duration fields keeps the
//!   medium busy as if energy were on it.
//! * §10.3.4.2 basic access: a frame that arrives while the medium has been idle
//!   for at least DIFS/EIFS and no backoff is pending goes at once; otherwise the
//!   random backoff of §10.3.4.3 runs.
//! * §10.3.4.3 backoff: draw a slot count uniformly in [0, CW]; count it down by
//!   one at the end of each slot during which the medium stayed idle, counting
//!   only after DIFS/EIFS of idle medium; freeze while the medium is busy; send
//!   when it reaches zero. A backoff also follows every transmission attempt,
//!   even with nothing more to send ("post-backoff").
//! * §10.3.3 contention window: CW = aCWmin, then 2(CW + 1) − 1 after each failed
//!   attempt up to aCWmax; back to aCWmin after a success or a discard.
//! * §10.3.4.4 retransmit limits: frames no longer than dot11RTSThreshold count
//!   failures in the short retry count, against dot11ShortRetryLimit (7); longer
//!   ones (sent after RTS/CTS) in the long retry count, against
//!   dot11LongRetryLimit (4). A failed RTS counts as short. The short count is
//!   reset by a CTS, each by the Ack of a frame of its kind.
//!
//! The model follows ns-3's `ChannelAccessManager`
//! (src/wifi/model/channel-access-manager.h): it remembers when the medium was
//! last busy, when the NAV and our own transmission end and when the last
//! reception ended and how, and computes the end of the backoff analytically.
//! There is no event per slot: [`Dcf::poll_at`] is the one timer the owner arms.
//! Every method takes `now`; none reads a clock or schedules anything. Random
//! slot counts come from the caller through `draw_backoff(cw) -> slots`, so the
//! model stays deterministic and scripted tests can force them.
//!
//! One deliberate difference from ns-3, a setting ([`Access`]): when a frame arrives
//! while the medium is idle and no backoff is pending, ns-3 waits DIFS counted from
//! the arrival; by default this model sends at the end of DIFS counted from the
//! medium going idle — at once on a long-idle medium — as §10.3.4.2 reads, and falls
//! back to a backoff (drawn at the request, used only then) if the medium turns busy
//! before. `Access::ArrivalDifs` is ns-3's reading.
//!
//! Protocol of use, for the owner (the MAC or the engine):
//! 1. report every medium event: `notify_busy_start` (CCA busy, a reception
//!    starting), `notify_rx_end`, `notify_tx_start` (our own PPDUs, including
//!    Acks and CTSs we answer with), `notify_nav`;
//! 2. `request_access` when a frame is queued and no exchange of ours is under
//!    way (the next frame is requested after `on_tx_success`/`on_tx_failure`),
//!    and arm a timer at `poll_at()`; re-arm whenever `poll_at()` changes after
//!    a notification;
//! 3. at the timer, `poll(now)`: if true, transmit now (and `notify_tx_start`);
//! 4. when the exchange ends, `on_tx_success` (Ack received), `on_cts_received`
//!    (CTS after our RTS) or `on_tx_failure` (Ack or CTS timeout).
//!
//! Access granted at a slot boundary is not revoked by a busy notification at
//! that same instant: two stations whose backoffs end in the same slot both
//! transmit and collide, as in the standard.

use super::phy::PhyParams;
use super::Nanos;

/// DCF parameters of a station: PHY timing and MAC MIB values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DcfParams {
    /// aSlotTime.
    pub slot: Nanos,
    /// DIFS = SIFS + 2 × slot (§10.3.2.3.5).
    pub difs: Nanos,
    /// EIFS = SIFS + AckTxTime + DIFS (§10.3.2.3.7).
    pub eifs: Nanos,
    /// aCWmin; of the form 2^k − 1.
    pub cw_min: u32,
    /// aCWmax; of the form 2^k − 1, ≥ `cw_min`.
    pub cw_max: u32,
    /// dot11ShortRetryLimit; the MIB default is 7 (Annex C).
    pub short_retry_limit: u32,
    /// dot11LongRetryLimit; the MIB default is 4 (Annex C).
    pub long_retry_limit: u32,
    /// dot11RTSThreshold in bytes: MPDUs longer than this are sent after RTS/CTS
    /// and count against the long retry limit. Default 2347 (802.11-1999's MIB
    /// default, above any MPDU: RTS/CTS off).
    pub rts_threshold: usize,
    /// When a frame that finds the medium idle and no backoff pending may go.
    pub access: Access,
}

/// Basic access of a frame that arrives while the medium is idle and no backoff is
/// pending (the only case where the readings differ): the plan's type.
pub use qoslab_plan::Access;

/// dot11ShortRetryLimit default (Annex C), defined once in the plan.
pub use qoslab_plan::DEFAULT_SHORT_RETRY_LIMIT;
/// dot11LongRetryLimit default (Annex C).
pub const DEFAULT_LONG_RETRY_LIMIT: u32 = 4;
/// dot11RTSThreshold default of 802.11-1999, longer than any 802.11b/g MPDU.
pub const DEFAULT_RTS_THRESHOLD: usize = 2347;

impl DcfParams {
    /// Parameters of a station on `phy`, with the MIB defaults.
    pub fn from_phy(phy: &PhyParams) -> Self {
        DcfParams {
            slot: phy.slot,
            difs: phy.difs(),
            eifs: phy.eifs(),
            cw_min: phy.cw_min,
            cw_max: phy.cw_max,
            short_retry_limit: DEFAULT_SHORT_RETRY_LIMIT,
            long_retry_limit: DEFAULT_LONG_RETRY_LIMIT,
            rts_threshold: DEFAULT_RTS_THRESHOLD,
            access: Access::IdleDifs,
        }
    }
}

/// What failed to be answered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FailedAttempt {
    /// An RTS got no CTS.
    Rts,
    /// A data or management MPDU of `mpdu_len` bytes got no Ack.
    Mpdu {
        /// Length of the MPDU, compared with dot11RTSThreshold.
        mpdu_len: usize,
    },
}

/// What the owner must do with the frame after a failed attempt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AfterFailure {
    /// Send it again: request access (the backoff is already drawn).
    Retry,
    /// The retry limit is reached: drop the frame (§10.3.4.4).
    Discard,
}

/// A backoff procedure in progress.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Backoff {
    /// Slots still to count down.
    slots_left: u32,
    /// Slots are counted from this instant (or from the end of DIFS/EIFS, if
    /// later): the draw time, then the boundary of the last slot counted.
    counted_to: Nanos,
}

/// The DCF channel access state of one station.
#[derive(Clone, Debug)]
pub struct Dcf {
    params: DcfParams,
    /// Current contention window; `cw_min ≤ cw ≤ cw_max`.
    cw: u32,
    /// Station short retry count (SSRC).
    short_retry_count: u32,
    /// Station long retry count (SLRC).
    long_retry_count: u32,
    /// End of the latest CCA-busy period announced (energy on the medium).
    busy_end: Nanos,
    /// End of our latest transmission.
    tx_end: Nanos,
    /// End of the NAV.
    nav_end: Nanos,
    /// End of the latest reception, and whether it was received correctly.
    rx_end: Nanos,
    rx_ok: bool,
    /// End of our latest frame exchange (Ack received or timed out); DIFS
    /// counts from here too.
    exchange_end: Nanos,
    /// The backoff procedure in progress, if any.
    backoff: Option<Backoff>,
    /// When access was requested, while it is pending.
    requested_at: Option<Nanos>,
    /// Slots drawn at a request that waits for DIFS without a backoff; they
    /// become the backoff if the medium turns busy first.
    contingent_slots: Option<u32>,
    /// The instant access was granted, once reached and until `poll` takes it.
    granted_at: Option<Nanos>,
}

impl Dcf {
    /// A station that has seen an idle medium since time 0 (so it must still wait
    /// DIFS from 0 before its first frame), with CW = aCWmin.
    pub fn new(params: DcfParams) -> Self {
        assert!(params.cw_min <= params.cw_max, "aCWmin must not exceed aCWmax");
        assert!(params.slot > 0, "aSlotTime must be positive");
        Dcf {
            params,
            cw: params.cw_min,
            short_retry_count: 0,
            long_retry_count: 0,
            busy_end: 0,
            tx_end: 0,
            nav_end: 0,
            rx_end: 0,
            rx_ok: true,
            exchange_end: 0,
            backoff: None,
            requested_at: None,
            contingent_slots: None,
            granted_at: None,
        }
    }

    /// The parameters.
    pub fn params(&self) -> &DcfParams {
        &self.params
    }

    /// The current contention window.
    pub fn cw(&self) -> u32 {
        self.cw
    }

    /// Station short retry count.
    pub fn short_retry_count(&self) -> u32 {
        self.short_retry_count
    }

    /// Station long retry count.
    pub fn long_retry_count(&self) -> u32 {
        self.long_retry_count
    }

    /// Backoff slots still to count at `now`, 0 if no backoff is in progress.
    pub fn backoff_slots_left(&self, now: Nanos) -> u32 {
        let mut copy = self.clone();
        copy.advance(now);
        copy.backoff.map_or(0, |b| b.slots_left)
    }

    /// Whether an access request is pending.
    pub fn is_access_requested(&self) -> bool {
        self.requested_at.is_some()
    }

    /// Whether an MPDU of `mpdu_len` bytes must be preceded by RTS/CTS
    /// (longer than dot11RTSThreshold).
    pub fn needs_rts(&self, mpdu_len: usize) -> bool {
        mpdu_len > self.params.rts_threshold
    }

    /// Whether the medium is busy at `now`, physically, virtually (NAV) or by
    /// our own transmission.
    pub fn is_medium_busy(&self, now: Nanos) -> bool {
        now < self.busy_end.max(self.tx_end).max(self.nav_end)
    }

    /// The medium is busy from `now` to `until` (CCA busy, or a reception that
    /// starts now and is expected to last that long).
    pub fn notify_busy_start(&mut self, now: Nanos, until: Nanos) {
        self.advance(now);
        self.busy_end = self.busy_end.max(until);
        self.medium_turned_busy(now, until);
    }

    /// A reception ended at `now`; `ok` is false when the frame was in error (or
    /// the PHY could not decode it), which makes the next wait EIFS instead of
    /// DIFS until a frame is received correctly.
    pub fn notify_rx_end(&mut self, now: Nanos, ok: bool) {
        self.advance(now);
        self.rx_end = self.rx_end.max(now);
        self.rx_ok = ok;
    }

    /// We start transmitting a PPDU of `duration`.
    pub fn notify_tx_start(&mut self, now: Nanos, duration: Nanos) {
        self.advance(now);
        self.tx_end = self.tx_end.max(now + duration);
        self.medium_turned_busy(now, now + duration);
    }

    /// A received Duration field sets the NAV until `until`; the NAV only grows
    /// (§10.3.2.4).
    pub fn notify_nav(&mut self, now: Nanos, until: Nanos) {
        self.advance(now);
        self.nav_end = self.nav_end.max(until);
        self.medium_turned_busy(now, until);
    }

    /// A frame is queued at `now`: ask for the medium. `draw_backoff(cw)` must
    /// return a slot count uniform in `[0, cw]`; it is called at most once, only
    /// if this request may need a backoff. Requesting while a request is pending
    /// does nothing.
    ///
    /// # Panics
    /// If `draw_backoff` returns more than `cw`.
    pub fn request_access(&mut self, now: Nanos, draw_backoff: impl FnMut(u32) -> u32) {
        self.advance(now);
        if self.requested_at.is_some() {
            return;
        }
        self.requested_at = Some(now);
        if self.backoff.is_some() {
            return; // a backoff (counting or frozen) decides
        }
        if self.is_medium_busy(now) {
            let slots = self.draw(draw_backoff);
            self.backoff = Some(Backoff { slots_left: slots, counted_to: now });
        } else if self.params.access == Access::IdleDifs && self.ifs_end() <= now {
            self.granted_at = Some(now); // idle for DIFS/EIFS already: go (§10.3.4.2)
        } else {
            self.contingent_slots = Some(self.draw(draw_backoff));
        }
    }

    /// Withdraws a pending request (the queue was flushed). A backoff in
    /// progress goes on counting as a post-backoff.
    pub fn cancel_access(&mut self, now: Nanos) {
        self.advance(now);
        self.requested_at = None;
        self.granted_at = None;
        self.contingent_slots = None;
    }

    /// When this station will start transmitting if nothing else happens on the
    /// medium: DIFS or EIFS after the medium goes idle, plus the remaining
    /// backoff slots. `None` if no access is requested.
    pub fn poll_at(&self) -> Option<Nanos> {
        let requested_at = self.requested_at?;
        if let Some(at) = self.granted_at {
            return Some(at);
        }
        Some(match self.backoff {
            Some(b) => self.backoff_end(b),
            None => self.idle_access_at(requested_at),
        })
    }

    /// When a request made at `requested_at`, with no backoff, is granted if the
    /// medium stays idle ([`Access`]).
    fn idle_access_at(&self, requested_at: Nanos) -> Nanos {
        match self.params.access {
            Access::IdleDifs => requested_at.max(self.ifs_end()),
            Access::ArrivalDifs => {
                let ifs = if self.rx_ok { self.params.difs } else { self.params.eifs };
                (requested_at + ifs).max(self.ifs_end())
            }
        }
    }

    /// Whether access is granted at `now`. When it is, the request is consumed:
    /// the owner transmits now and reports it with [`notify_tx_start`](Self::notify_tx_start).
    pub fn poll(&mut self, now: Nanos) -> bool {
        self.advance(now);
        match self.granted_at {
            Some(at) if at <= now => {
                self.granted_at = None;
                self.requested_at = None;
                self.contingent_slots = None;
                true
            }
            _ => false,
        }
    }

    /// The frame exchange ended well at `now` (the Ack of an `mpdu_len`-byte
    /// MPDU arrived): CW back to aCWmin, the retry count of the frame's kind
    /// reset, and a post-transmission backoff drawn (§10.3.4.3).
    ///
    /// # Panics
    /// If `draw_backoff` returns more than `cw`.
    pub fn on_tx_success(&mut self, now: Nanos, mpdu_len: usize, draw_backoff: impl FnMut(u32) -> u32) {
        self.advance(now);
        self.exchange_end = self.exchange_end.max(now);
        if self.needs_rts(mpdu_len) {
            self.long_retry_count = 0;
        } else {
            self.short_retry_count = 0;
        }
        self.cw = self.params.cw_min;
        let slots = self.draw(draw_backoff);
        self.backoff = Some(Backoff { slots_left: slots, counted_to: now });
    }

    /// A CTS answered our RTS: the short retry count is reset (§10.3.4.4); the
    /// exchange goes on without a new backoff.
    pub fn on_cts_received(&mut self) {
        self.short_retry_count = 0;
    }

    /// The Ack or CTS timeout expired at `now`. Counts the failure against the
    /// short or long retry limit; below it, doubles CW (up to aCWmax) and draws
    /// the retransmission's backoff; at it, tells to discard the frame, resets
    /// CW and the counts, and draws a post-backoff. Either way the owner calls
    /// [`request_access`](Self::request_access) for its next frame.
    ///
    /// # Panics
    /// If `draw_backoff` returns more than `cw`.
    pub fn on_tx_failure(
        &mut self,
        now: Nanos,
        attempt: FailedAttempt,
        draw_backoff: impl FnMut(u32) -> u32,
    ) -> AfterFailure {
        self.advance(now);
        self.exchange_end = self.exchange_end.max(now);
        let long = matches!(attempt, FailedAttempt::Mpdu { mpdu_len } if self.needs_rts(mpdu_len));
        let (count, limit) = if long {
            (&mut self.long_retry_count, self.params.long_retry_limit)
        } else {
            (&mut self.short_retry_count, self.params.short_retry_limit)
        };
        *count += 1;
        let outcome = if *count >= limit {
            self.short_retry_count = 0;
            self.long_retry_count = 0;
            self.cw = self.params.cw_min;
            AfterFailure::Discard
        } else {
            self.cw = (2 * (self.cw + 1) - 1).min(self.params.cw_max);
            AfterFailure::Retry
        };
        let slots = self.draw(draw_backoff);
        self.backoff = Some(Backoff { slots_left: slots, counted_to: now });
        outcome
    }

    // -- internals ---------------------------------------------------------

    fn draw(&self, mut draw_backoff: impl FnMut(u32) -> u32) -> u32 {
        let slots = draw_backoff(self.cw);
        assert!(slots <= self.cw, "backoff draw {slots} outside [0, {}]", self.cw);
        slots
    }

    /// End of DIFS (or EIFS after a reception in error) following the latest
    /// busy period: where backoff slots may start counting.
    fn ifs_end(&self) -> Nanos {
        let p = &self.params;
        let after_busy = self.busy_end.max(self.tx_end).max(self.nav_end).max(self.exchange_end) + p.difs;
        let after_rx = self.rx_end + if self.rx_ok { p.difs } else { p.eifs };
        after_busy.max(after_rx)
    }

    fn count_start(&self, b: Backoff) -> Nanos {
        b.counted_to.max(self.ifs_end())
    }

    fn backoff_end(&self, b: Backoff) -> Nanos {
        self.count_start(b) + b.slots_left as Nanos * self.params.slot
    }

    /// Brings the backoff count up to `now` from what is known before any event
    /// at `now` is applied, and latches the grant if its time has come.
    fn advance(&mut self, now: Nanos) {
        if let Some(mut b) = self.backoff {
            let start = self.count_start(b);
            if start <= now {
                let idle_slots = (now - start) / self.params.slot;
                let counted = idle_slots.min(b.slots_left as Nanos) as u32;
                b.slots_left -= counted;
                b.counted_to = start + counted as Nanos * self.params.slot;
            }
            if b.slots_left == 0 && self.count_start(b) <= now {
                // The backoff is over; a pending request is granted at its end.
                self.backoff = None;
                if self.requested_at.is_some() && self.granted_at.is_none() {
                    self.granted_at = Some(self.count_start(b));
                }
            } else {
                self.backoff = Some(b);
            }
        } else if let (Some(requested_at), None) = (self.requested_at, self.granted_at) {
            let at = self.idle_access_at(requested_at);
            if at <= now {
                self.granted_at = Some(at);
            }
        }
    }

    /// The medium turned busy at `now` until `until`: a request waiting for DIFS
    /// without a backoff now needs one (§10.3.4.2).
    fn medium_turned_busy(&mut self, now: Nanos, until: Nanos) {
        if until > now && self.requested_at.is_some() && self.granted_at.is_none() && self.backoff.is_none() {
            if let Some(slots) = self.contingent_slots.take() {
                self.backoff = Some(Backoff { slots_left: slots, counted_to: now });
            }
        }
    }
}

#[cfg(test)]
mod test {
    use super::*;
    use crate::wifi::phy::{PhyParams, Preamble};

    const US: Nanos = 1_000;
    const SLOT: Nanos = 20 * US;
    const DIFS: Nanos = 50 * US;
    /// SIFS 10 + Ack at 1 Mb/s long preamble (192 + 14 × 8) + DIFS 50.
    const EIFS: Nanos = (10 + 304 + 50) * US;

    /// An 802.11b station (slot 20 µs, DIFS 50 µs, EIFS 364 µs).
    fn station() -> Dcf {
        Dcf::new(DcfParams::from_phy(&PhyParams::dot11b(Preamble::Long)))
    }

    /// A draw that always returns `slots`.
    fn forced(slots: u32) -> impl FnMut(u32) -> u32 {
        move |_cw| slots
    }

    fn no_draw(_cw: u32) -> u32 {
        panic!("no backoff should be drawn here")
    }

    #[test]
    fn a_frame_on_a_long_idle_medium_goes_at_once_or_after_difs_by_the_access_rule() {
        // §10.3.4.2: idle ≥ DIFS at the arrival: transmit at once, no backoff drawn.
        let mut s = station();
        s.request_access(10_000 * US, no_draw);
        assert_eq!(s.poll_at(), Some(10_000 * US));
        // ns-3's reading: DIFS counted from the arrival.
        let mut params = DcfParams::from_phy(&PhyParams::dot11b(Preamble::Long));
        params.access = Access::ArrivalDifs;
        let mut s = Dcf::new(params);
        s.request_access(10_000 * US, forced(3));
        assert_eq!(s.poll_at(), Some(10_000 * US + DIFS));
        assert!(!s.poll(10_000 * US + DIFS - 1));
        assert!(s.poll(10_000 * US + DIFS));
        // Busy during that DIFS: the backoff drawn at the request runs after the busy period.
        let mut s = Dcf::new(params);
        s.request_access(10_000 * US, forced(3));
        s.notify_busy_start(10_020 * US, 10_500 * US);
        assert_eq!(s.poll_at(), Some(10_500 * US + DIFS + 3 * SLOT));
        // Arriving 40 µs after the medium went idle: DIFS from the arrival (1090) against
        // DIFS from the medium going idle (1050).
        let mut s = Dcf::new(params);
        s.notify_busy_start(0, 1000 * US);
        s.request_access(1040 * US, forced(0));
        assert_eq!(s.poll_at(), Some(1090 * US));
        let mut s = station();
        s.notify_busy_start(0, 1000 * US);
        s.request_access(1040 * US, forced(0));
        assert_eq!(s.poll_at(), Some(1050 * US));
    }

    #[test]
    fn frozen_backoff_resumes_and_fires_at_the_computed_time() {
        let mut s = station();
        s.notify_busy_start(0, 1000 * US);
        s.request_access(100 * US, forced(5));
        // Medium idle at 1000; DIFS to 1050; 5 slots to 1150.
        assert_eq!(s.poll_at(), Some(1150 * US));
        // Busy again 2.5 slots past DIFS: two whole slots counted, three left.
        s.notify_busy_start(1100 * US, 1400 * US);
        assert_eq!(s.backoff_slots_left(1100 * US), 3);
        assert_eq!(s.poll_at(), Some((1400 + 50 + 3 * 20) * US));
        assert!(!s.poll(1509 * US));
        assert!(s.poll(1510 * US));
        assert_eq!(s.poll_at(), None);
    }

    #[test]
    fn only_whole_idle_slots_count() {
        // Busy exactly at the end of slot 2: it counted.
        let mut s = station();
        s.notify_busy_start(0, 1000 * US);
        s.request_access(0, forced(5));
        s.notify_busy_start(1050 * US + 2 * SLOT, 2000 * US);
        assert_eq!(s.poll_at(), Some(2000 * US + DIFS + 3 * SLOT));
        // Busy 1 ns before the end of slot 2: only one slot counted.
        let mut s = station();
        s.notify_busy_start(0, 1000 * US);
        s.request_access(0, forced(5));
        s.notify_busy_start(1050 * US + 2 * SLOT - 1, 2000 * US);
        assert_eq!(s.poll_at(), Some(2000 * US + DIFS + 4 * SLOT));
        // Busy during DIFS: nothing counted.
        let mut s = station();
        s.notify_busy_start(0, 1000 * US);
        s.request_access(0, forced(5));
        s.notify_busy_start(1049 * US, 2000 * US);
        assert_eq!(s.poll_at(), Some(2000 * US + DIFS + 5 * SLOT));
    }

    #[test]
    fn several_freezes_keep_the_count() {
        let mut s = station();
        s.notify_busy_start(0, 100 * US);
        s.request_access(0, forced(10));
        let mut idle_from = 100 * US;
        // Four busy periods each after 2 slots and a bit.
        for _ in 0..4 {
            let busy_at = idle_from + DIFS + 2 * SLOT + 7 * US;
            s.notify_busy_start(busy_at, busy_at + 300 * US);
            idle_from = busy_at + 300 * US;
        }
        assert_eq!(s.poll_at(), Some(idle_from + DIFS + 2 * SLOT));
    }

    #[test]
    fn idle_medium_grants_at_once_without_backoff() {
        let mut s = station();
        s.notify_busy_start(0, 500 * US);
        s.request_access(800 * US, no_draw);
        assert_eq!(s.poll_at(), Some(800 * US));
        assert!(s.poll(800 * US));
    }

    #[test]
    fn request_within_difs_waits_for_difs_then_backs_off_if_busy() {
        let mut s = station();
        s.notify_busy_start(0, 1000 * US);
        s.request_access(1020 * US, forced(3));
        assert_eq!(s.poll_at(), Some(1050 * US));
        // Another station takes the medium before our DIFS ends.
        s.notify_busy_start(1040 * US, 1200 * US);
        assert_eq!(s.poll_at(), Some(1200 * US + DIFS + 3 * SLOT));
    }

    #[test]
    fn eifs_after_a_bad_reception_difs_after_a_good_one() {
        let mut s = station();
        s.notify_busy_start(0, 500 * US);
        s.notify_rx_end(500 * US, false);
        s.request_access(100 * US, forced(2));
        assert_eq!(s.poll_at(), Some(500 * US + EIFS + 2 * SLOT));

        let mut s = station();
        s.notify_busy_start(0, 500 * US);
        s.notify_rx_end(500 * US, true);
        s.request_access(100 * US, forced(2));
        assert_eq!(s.poll_at(), Some(500 * US + DIFS + 2 * SLOT));
    }

    #[test]
    fn a_good_reception_ends_eifs() {
        let mut s = station();
        s.request_access(0, forced(4));
        s.notify_busy_start(10 * US, 500 * US);
        s.notify_rx_end(500 * US, false);
        assert_eq!(s.poll_at(), Some(500 * US + EIFS + 4 * SLOT));
        // A correct frame received during the EIFS resynchronises the station.
        s.notify_busy_start(600 * US, 700 * US);
        s.notify_rx_end(700 * US, true);
        assert_eq!(s.poll_at(), Some(700 * US + DIFS + 4 * SLOT));
    }

    #[test]
    fn nav_defers_like_a_busy_medium() {
        let mut s = station();
        s.notify_busy_start(0, 100 * US);
        s.request_access(0, forced(1));
        s.notify_rx_end(100 * US, true);
        s.notify_nav(100 * US, 900 * US);
        assert!(s.is_medium_busy(500 * US));
        assert_eq!(s.poll_at(), Some(900 * US + DIFS + SLOT));
    }

    #[test]
    fn contention_window_doubles_to_cw_max_and_retry_limit_discards() {
        let mut s = station();
        let mut cws = Vec::new();
        let mut record = |cw: u32| {
            cws.push(cw);
            0
        };
        let mut now = 0;
        s.notify_busy_start(0, 10 * US);
        s.request_access(now, &mut record);
        let mut attempts = 0;
        loop {
            now = s.poll_at().unwrap();
            assert!(s.poll(now));
            attempts += 1;
            s.notify_tx_start(now, 1310 * US);
            now += 1310 * US + 272 * US; // data + Ack timeout
            match s.on_tx_failure(now, FailedAttempt::Mpdu { mpdu_len: 1536 }, &mut record) {
                AfterFailure::Retry => s.request_access(now, &mut record),
                AfterFailure::Discard => break,
            }
        }
        assert_eq!(attempts, 7);
        // The CW of each attempt, then the post-backoff after the discard.
        assert_eq!(cws, [31, 63, 127, 255, 511, 1023, 1023, 31]);
        assert_eq!(s.cw(), 31);
        assert_eq!(s.short_retry_count(), 0);
    }

    #[test]
    fn long_frames_count_against_the_long_retry_limit() {
        let mut params = DcfParams::from_phy(&PhyParams::dot11b(Preamble::Long));
        params.rts_threshold = 500;
        let mut s = Dcf::new(params);
        assert!(s.needs_rts(1536) && !s.needs_rts(500));
        let mut now = 0;
        let mut attempts = 0;
        let long = FailedAttempt::Mpdu { mpdu_len: 1536 };
        loop {
            s.request_access(now, forced(0));
            now = s.poll_at().unwrap();
            assert!(s.poll(now));
            attempts += 1;
            // The RTS fails once, then the CTS comes and the data fails.
            now += 1000 * US;
            assert_eq!(s.on_tx_failure(now, FailedAttempt::Rts, forced(0)), AfterFailure::Retry);
            s.request_access(now, forced(0));
            now = s.poll_at().unwrap();
            assert!(s.poll(now));
            s.on_cts_received();
            assert_eq!(s.short_retry_count(), 0);
            now += 1000 * US;
            if s.on_tx_failure(now, long, forced(0)) == AfterFailure::Discard {
                break;
            }
        }
        assert_eq!(attempts, 4);
        assert_eq!(s.long_retry_count(), 0);
    }

    #[test]
    fn success_resets_cw_and_starts_a_post_backoff() {
        let mut s = station();
        // Idle since 0 but not yet for DIFS: a contingent backoff is drawn, unused.
        s.request_access(0, forced(7));
        let t0 = s.poll_at().unwrap();
        assert_eq!(t0, DIFS);
        assert!(s.poll(t0));
        s.notify_tx_start(t0, 1310 * US);
        let fail_at = t0 + 1310 * US + 272 * US;
        s.on_tx_failure(fail_at, FailedAttempt::Mpdu { mpdu_len: 1536 }, forced(1));
        assert_eq!(s.cw(), 63);
        s.request_access(fail_at, no_draw);
        let t1 = s.poll_at().unwrap();
        assert_eq!(t1, fail_at + DIFS + SLOT);
        assert!(s.poll(t1));
        s.notify_tx_start(t1, 1310 * US);
        let ack_end = t1 + 1310 * US + 10 * US + 248 * US;
        s.notify_busy_start(ack_end - 248 * US, ack_end);
        s.notify_rx_end(ack_end, true);
        s.on_tx_success(ack_end, 1536, forced(4));
        assert_eq!(s.cw(), 31);
        // Post-backoff counts with no frame queued ...
        assert_eq!(s.backoff_slots_left(ack_end + DIFS + 3 * SLOT), 1);
        // ... so a frame queued after it ended goes at once ...
        let mut later = s.clone();
        later.request_access(ack_end + DIFS + 10 * SLOT, no_draw);
        assert_eq!(later.poll_at(), Some(ack_end + DIFS + 10 * SLOT));
        // ... and one queued during it waits for its end.
        s.request_access(ack_end + DIFS + SLOT, no_draw);
        assert_eq!(s.poll_at(), Some(ack_end + DIFS + 4 * SLOT));
    }

    #[test]
    fn a_busy_start_in_the_granted_slot_does_not_revoke_access() {
        let mut a = station();
        a.notify_busy_start(0, 100 * US);
        a.request_access(0, forced(3));
        let at = a.poll_at().unwrap();
        // The other station's PPDU starts in the same instant and is reported first.
        a.notify_busy_start(at, at + 500 * US);
        assert_eq!(a.poll_at(), Some(at));
        assert!(a.poll(at));
    }

    #[test]
    #[should_panic(expected = "outside")]
    fn a_draw_above_cw_is_refused() {
        let mut s = station();
        s.notify_busy_start(0, 100 * US);
        s.request_access(0, forced(32));
    }
}
