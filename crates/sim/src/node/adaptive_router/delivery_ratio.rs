//! A channel's delivery ratio for seed 004's router: the share of the last outcomes that
//! were deliveries, over a sliding window. See the router's overview in [`super`].

use std::collections::VecDeque;

use super::link_arq::Action;

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
/// ([`super::link_arq::LinkArq::on_ack`]); a lost link ack counts as a failure, which the seed allows for
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

#[cfg(test)]
mod test {
    use super::*;

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
}
