//! The retransmission timeout estimator of RFC 6298, in integer nanoseconds.
//!
//! RFC 6298 §2: the first sample R sets SRTT = R, RTTVAR = R/2; later samples set
//! RTTVAR = (1 − β)·RTTVAR + β·|SRTT − R| then SRTT = (1 − α)·SRTT + α·R with
//! α = 1/8, β = 1/4; RTO = SRTT + max(G, 4·RTTVAR), at least `min_rto` (§2.4) and at
//! most `max_rto` (§2.5). Each expiry doubles the RTO (§5.5), up to `max_rto` or the
//! optional backoff cap; a new valid sample ends the backoff (Karn's algorithm, §5).
//!
//! Linux differs: it floors RTTVAR's contribution at `min_rto` rather than the RTO
//! itself (RTO ≥ SRTT + 200 ms). The RFC's form is used here.

/// RFC 6298 state. All values in nanoseconds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RttEstimator {
    srtt: Option<u64>,
    rttvar: u64,
    /// RTO before backoff, from the formula (or the initial RTO before any sample).
    base_rto: u64,
    /// Number of doublings since the last valid sample (RFC 6298 §5.5).
    backoff: u32,
    min_rto: u64,
    max_rto: u64,
    backoff_cap: Option<u64>,
    granularity: u64,
}

impl RttEstimator {
    /// A fresh estimator: RTO = `initial` until the first sample (RFC 6298 §2.1).
    pub fn new(initial: u64, min_rto: u64, max_rto: u64, backoff_cap: Option<u64>, granularity: u64) -> Self {
        RttEstimator {
            srtt: None,
            rttvar: 0,
            base_rto: initial,
            backoff: 0,
            min_rto,
            max_rto,
            backoff_cap,
            granularity,
        }
    }

    /// Smoothed RTT, once a sample has been taken.
    pub fn srtt(&self) -> Option<u64> {
        self.srtt
    }

    /// RTT variation.
    pub fn rttvar(&self) -> u64 {
        self.rttvar
    }

    /// Backoffs since the last sample.
    pub fn backoff(&self) -> u32 {
        self.backoff
    }

    /// Feeds one RTT measurement R (RFC 6298 §2.2, §2.3) and ends any backoff.
    pub fn sample(&mut self, r: u64) {
        match self.srtt {
            None => {
                self.srtt = Some(r);
                self.rttvar = r / 2;
            }
            Some(srtt) => {
                // RTTVAR first, with the old SRTT (§2.3 "the above SHOULD be computed
                // using RTTVAR then SRTT").
                self.rttvar = (3 * self.rttvar + srtt.abs_diff(r)) / 4;
                self.srtt = Some((7 * srtt + r) / 8);
            }
        }
        let srtt = self.srtt.unwrap_or(r);
        let rto = srtt + self.granularity.max(4 * self.rttvar);
        self.base_rto = rto.clamp(self.min_rto, self.max_rto);
        self.backoff = 0;
    }

    /// The RTO now in force: the base doubled once per backoff, at most `max_rto`
    /// and at most the backoff cap if there is one (the cap never raises the RTO).
    pub fn rto(&self) -> u64 {
        let doubled = self.base_rto.saturating_mul(1u64.checked_shl(self.backoff).unwrap_or(u64::MAX));
        let mut rto = doubled.min(self.max_rto);
        if let Some(cap) = self.backoff_cap {
            if self.backoff > 0 {
                rto = rto.min(cap.max(self.base_rto));
            }
        }
        rto
    }

    /// The timer expired: double the RTO (RFC 6298 §5.5).
    pub fn back_off(&mut self) {
        self.backoff = self.backoff.saturating_add(1).min(63);
    }
}

#[cfg(test)]
mod test {
    use super::*;

    const MS: u64 = 1_000_000;

    fn est() -> RttEstimator {
        RttEstimator::new(1000 * MS, 200 * MS, 60_000 * MS, None, MS)
    }

    #[test]
    fn initial_rto_is_one_second() {
        assert_eq!(est().rto(), 1000 * MS);
    }

    #[test]
    fn first_and_second_samples_follow_rfc6298() {
        let mut e = est();
        e.sample(100 * MS);
        // SRTT = 100, RTTVAR = 50, RTO = 100 + 200 = 300 ms.
        assert_eq!(e.srtt(), Some(100 * MS));
        assert_eq!(e.rttvar(), 50 * MS);
        assert_eq!(e.rto(), 300 * MS);
        e.sample(200 * MS);
        // RTTVAR = 3/4·50 + 1/4·100 = 62.5; SRTT = 7/8·100 + 1/8·200 = 112.5.
        assert_eq!(e.rttvar(), 62_500_000);
        assert_eq!(e.srtt(), Some(112_500_000));
        assert_eq!(e.rto(), 112_500_000 + 250 * MS);
    }

    #[test]
    fn min_rto_floors_small_rtts() {
        let mut e = est();
        e.sample(MS);
        assert_eq!(e.rto(), 200 * MS);
    }

    #[test]
    fn backoff_doubles_up_to_max_and_cap() {
        let mut e = est();
        for k in 0..6 {
            assert_eq!(e.rto(), (1000 * MS) << k);
            e.back_off();
        }
        for _ in 0..100 {
            e.back_off();
        }
        assert_eq!(e.rto(), 60_000 * MS);
        let mut capped = RttEstimator::new(1000 * MS, 20 * MS, 60_000 * MS, Some(100 * MS), MS);
        capped.sample(10 * MS); // RTO = max(20, 10 + 20) = 30 ms
        assert_eq!(capped.rto(), 30 * MS);
        capped.back_off();
        assert_eq!(capped.rto(), 60 * MS);
        capped.back_off();
        assert_eq!(capped.rto(), 100 * MS);
        capped.back_off();
        assert_eq!(capped.rto(), 100 * MS);
        capped.sample(10 * MS);
        assert_eq!(capped.backoff(), 0);
    }
}
