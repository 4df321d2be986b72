//! How late the emulator delivers: per frame, the instant its write to the far device
//! returned minus the arrival time the model scheduled for it (both CLOCK_MONOTONIC).
//!
//! This is the emulator's own view. It leaves out what happens before the emulator reads
//! a frame (the device's ring and the wake-up) and after its write (the far kernel's
//! receive path); the tests and benchmarks/emu_link.py measure the whole error against
//! kernel timestamps on both devices.

use serde::Serialize;

/// Below this, 1 µs buckets; above it, 100 µs buckets up to [`COARSE_END_NS`].
const FINE_END_NS: u64 = 10_000_000;
const FINE_NS: u64 = 1_000;
/// Lateness of a second or more goes in one overflow bucket (its maximum is still exact).
const COARSE_END_NS: u64 = 1_000_000_000;
const COARSE_NS: u64 = 100_000;
const FINE_BUCKETS: usize = (FINE_END_NS / FINE_NS) as usize;
const BUCKETS: usize = FINE_BUCKETS + ((COARSE_END_NS - FINE_END_NS) / COARSE_NS) as usize + 1;

/// A histogram of lateness: 1 µs resolution below 10 ms, 100 µs to 1 s.
#[derive(Debug, Clone)]
pub struct Lateness {
    buckets: Vec<u64>,
    frames: u64,
    sum_ns: u128,
    max_ns: u64,
}

impl Default for Lateness {
    fn default() -> Lateness {
        Lateness { buckets: vec![0; BUCKETS], frames: 0, sum_ns: 0, max_ns: 0 }
    }
}

/// Lateness percentiles of the frames delivered, ns. A percentile is the upper edge of
/// the bucket that holds it (so it is never below the true value, and at most 1 µs above
/// it under 10 ms).
#[derive(Debug, Default, Clone, Copy, PartialEq, Serialize)]
pub struct LatenessReport {
    pub frames: u64,
    pub mean: f64,
    pub p50: u64,
    pub p99: u64,
    pub p999: u64,
    pub max: u64,
}

impl Lateness {
    /// One frame `ns` late.
    #[inline]
    pub fn record(&mut self, ns: u64) {
        let bucket = if ns < FINE_END_NS {
            (ns / FINE_NS) as usize
        } else if ns < COARSE_END_NS {
            FINE_BUCKETS + ((ns - FINE_END_NS) / COARSE_NS) as usize
        } else {
            BUCKETS - 1
        };
        self.buckets[bucket] += 1;
        self.frames += 1;
        self.sum_ns += u128::from(ns);
        self.max_ns = self.max_ns.max(ns);
    }

    /// The upper edge of the bucket holding the `q`-quantile (the smallest bucket edge
    /// below which at least `q` of the frames fall), capped at the maximum seen.
    pub fn quantile(&self, q: f64) -> u64 {
        if self.frames == 0 {
            return 0;
        }
        let rank = ((q * self.frames as f64).ceil() as u64).clamp(1, self.frames);
        let mut seen = 0;
        for (i, &n) in self.buckets.iter().enumerate() {
            seen += n;
            if seen >= rank {
                let edge = if i < FINE_BUCKETS {
                    (i as u64 + 1) * FINE_NS
                } else if i == BUCKETS - 1 {
                    self.max_ns
                } else {
                    FINE_END_NS + (i - FINE_BUCKETS + 1) as u64 * COARSE_NS
                };
                return edge.min(self.max_ns);
            }
        }
        self.max_ns
    }

    pub fn report(&self) -> LatenessReport {
        LatenessReport {
            frames: self.frames,
            mean: if self.frames == 0 { 0.0 } else { self.sum_ns as f64 / self.frames as f64 },
            p50: self.quantile(0.5),
            p99: self.quantile(0.99),
            p999: self.quantile(0.999),
            max: self.max_ns,
        }
    }
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn quantiles_of_a_known_sample() {
        // 1000 frames: 0.5 µs, 1.5 µs, … (i + 0.5) µs. The 50th percentile is the 500th
        // value, 499.5 µs, in the bucket [499, 500) µs: reported as 500 µs.
        let mut l = Lateness::default();
        for i in 0..1000u64 {
            l.record(i * 1000 + 500);
        }
        assert_eq!(l.quantile(0.5), 500_000);
        // The 990th value, 989.5 µs → 990 µs; the 999th, 998.5 µs → 999 µs.
        assert_eq!(l.quantile(0.99), 990_000);
        assert_eq!(l.quantile(0.999), 999_000);
        // The maximum caps the last bucket's edge.
        assert_eq!(l.quantile(1.0), 999_500);
        let r = l.report();
        assert_eq!((r.frames, r.max), (1000, 999_500));
        assert!((r.mean - 500_000.0).abs() < 1e-6);
    }

    #[test]
    fn coarse_and_overflow_buckets() {
        let mut l = Lateness::default();
        l.record(25_050_000); // 25.05 ms: the coarse bucket [25.0, 25.1) ms
        assert_eq!(l.quantile(0.5), 25_050_000, "capped at the maximum");
        l.record(3_000_000_000);
        assert_eq!(l.quantile(0.5), 25_100_000);
        assert_eq!(l.quantile(1.0), 3_000_000_000);
        assert_eq!(Lateness::default().quantile(0.99), 0);
    }
}
