//! Measurement: per-flow counters, one-way latency distribution, RFC 3550 jitter.
//!
//! Latency samples go into a log-linear histogram (as HdrHistogram does): exact
//! minimum, maximum and mean, and percentiles within 1/128 (0.8 %) of the true value,
//! in constant memory however long the run.

use serde::Serialize;

/// Sub-buckets per power of two: the relative resolution of percentiles is 1/128.
const SUB_BUCKET_BITS: u32 = 7;
const SUB_BUCKETS: usize = 1 << SUB_BUCKET_BITS;

/// A log-linear histogram of nanosecond values.
#[derive(Debug, Clone, Default)]
pub struct Histogram {
    counts: Vec<u64>,
    total: u64,
    sum: u128,
    min: u64,
    max: u64,
}

impl Histogram {
    fn index(value: u64) -> usize {
        if value < SUB_BUCKETS as u64 {
            return value as usize;
        }
        let exponent = 63 - value.leading_zeros(); // >= SUB_BUCKET_BITS
        let shift = exponent - SUB_BUCKET_BITS;
        let mantissa = (value >> shift) as usize - SUB_BUCKETS; // 0..SUB_BUCKETS
        SUB_BUCKETS + (shift as usize) * SUB_BUCKETS + mantissa
    }

    /// The smallest value of a bucket (values in a bucket differ by less than 1/128).
    fn lowest(index: usize) -> u64 {
        if index < SUB_BUCKETS {
            return index as u64;
        }
        let shift = ((index - SUB_BUCKETS) / SUB_BUCKETS) as u32;
        let mantissa = ((index - SUB_BUCKETS) % SUB_BUCKETS + SUB_BUCKETS) as u64;
        mantissa << shift
    }

    pub fn record(&mut self, value: u64) {
        let index = Self::index(value);
        if index >= self.counts.len() {
            self.counts.resize(index + 1, 0);
        }
        self.counts[index] += 1;
        if self.total == 0 || value < self.min {
            self.min = value;
        }
        self.max = self.max.max(value);
        self.total += 1;
        self.sum += u128::from(value);
    }

    pub fn count(&self) -> u64 {
        self.total
    }

    /// The value at quantile `q` in [0, 1]: the lowest value of the bucket holding the
    /// sample of rank ceil(q·n), clamped to the exact minimum and maximum.
    pub fn quantile(&self, q: f64) -> Option<u64> {
        if self.total == 0 {
            return None;
        }
        let rank = ((q * self.total as f64).ceil() as u64).clamp(1, self.total);
        let mut seen = 0;
        for (index, &count) in self.counts.iter().enumerate() {
            seen += count;
            if seen >= rank {
                return Some(Self::lowest(index).clamp(self.min, self.max));
            }
        }
        Some(self.max)
    }

    pub fn summary(&self) -> Option<LatencySummary> {
        (self.total > 0).then(|| LatencySummary {
            min: self.min,
            mean: (self.sum / u128::from(self.total)) as u64,
            p50: self.quantile(0.50).unwrap_or(0),
            p90: self.quantile(0.90).unwrap_or(0),
            p99: self.quantile(0.99).unwrap_or(0),
            max: self.max,
        })
    }
}

/// Latency statistics in nanoseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct LatencySummary {
    pub min: u64,
    pub mean: u64,
    pub p50: u64,
    pub p90: u64,
    pub p99: u64,
    pub max: u64,
}

/// RFC 3550 §6.4.1 interarrival jitter: J += (|D(i-1,i)| − J)/16, with D the change in
/// transit time between consecutive packets, kept here in nanoseconds as a float.
#[derive(Debug, Clone, Copy, Default)]
pub struct Jitter {
    last_transit: Option<i128>,
    jitter: f64,
}

impl Jitter {
    pub fn record(&mut self, sent_ns: u64, received_ns: u64) {
        let transit = i128::from(received_ns) - i128::from(sent_ns);
        if let Some(last) = self.last_transit {
            let d = (transit - last).abs() as f64;
            self.jitter += (d - self.jitter) / 16.0;
        }
        self.last_transit = Some(transit);
    }

    pub fn value(&self) -> Option<f64> {
        self.last_transit.map(|_| self.jitter)
    }
}

/// What one flow did.
#[derive(Debug, Clone, Default)]
pub struct FlowStats {
    pub sent: u64,
    pub received: u64,
    pub bytes_received: u64,
    pub first_rx_ns: Option<u64>,
    pub last_rx_ns: Option<u64>,
    pub latency: Histogram,
    pub jitter: Jitter,
    pub rtt_ns: Vec<u64>,
    /// Highest sequence number received, to count duplicates and reordering honestly.
    pub duplicates: u64,
    /// Arrivals with a sequence number below the highest one received before them
    /// (RFC 4737 §3.3, Type-P-Reordered: s < NextExp).
    pub reordered: u64,
    highest: Option<u32>,
    seen: Vec<u64>,
}

impl FlowStats {
    /// Records the arrival of datagram `seq` sent at `sent_ns`, carrying `bytes` of payload.
    pub fn record_arrival(&mut self, seq: u32, sent_ns: u64, received_ns: u64, bytes: u64) {
        let word = seq as usize / 64;
        if word >= self.seen.len() {
            self.seen.resize(word + 1, 0);
        }
        let bit = 1u64 << (seq % 64);
        if self.seen[word] & bit != 0 {
            self.duplicates += 1;
            return;
        }
        self.seen[word] |= bit;
        match self.highest {
            Some(h) if seq < h => self.reordered += 1,
            _ => self.highest = Some(seq),
        }
        self.received += 1;
        self.bytes_received += bytes;
        self.first_rx_ns.get_or_insert(received_ns);
        self.last_rx_ns = Some(received_ns);
        self.latency.record(received_ns.saturating_sub(sent_ns));
        self.jitter.record(sent_ns, received_ns);
    }

    /// Whether datagram `seq` has arrived (at least once).
    pub fn has_received(&self, seq: u32) -> bool {
        self.seen.get(seq as usize / 64).is_some_and(|w| w & (1u64 << (seq % 64)) != 0)
    }
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn histogram_is_exact_below_128_and_within_resolution_above() {
        let mut h = Histogram::default();
        for v in 0..100 {
            h.record(v);
        }
        assert_eq!(h.quantile(0.5), Some(49));
        assert_eq!(h.summary().unwrap().max, 99);
        let mut h = Histogram::default();
        for v in (1..=10_000u64).map(|i| i * 1_000) {
            h.record(v);
        }
        let p90 = h.quantile(0.9).unwrap() as f64;
        assert!((p90 - 9_000_000.0).abs() / 9_000_000.0 < 1.0 / 128.0, "{p90}");
        assert_eq!(h.summary().unwrap().mean, 5_000_500);
    }

    #[test]
    fn bucket_bounds_are_consistent() {
        for v in [0u64, 1, 127, 128, 129, 255, 256, 1 << 20, (1 << 20) + 12345, u64::MAX / 3] {
            let i = Histogram::index(v);
            assert!(Histogram::lowest(i) <= v);
            assert!(Histogram::index(Histogram::lowest(i)) == i);
        }
    }

    #[test]
    fn jitter_of_constant_delay_is_zero_and_rfc3550_smoothing() {
        let mut j = Jitter::default();
        for i in 0..10 {
            j.record(i * 1000, i * 1000 + 500);
        }
        assert_eq!(j.value(), Some(0.0));
        let mut j = Jitter::default();
        j.record(0, 100);
        j.record(1000, 1260); // D = 160
        assert!((j.value().unwrap() - 10.0).abs() < 1e-9); // 160/16
    }

    #[test]
    fn late_arrivals_count_as_reordered() {
        let mut f = FlowStats::default();
        for seq in [0u32, 1, 3, 2, 4, 5] {
            f.record_arrival(seq, 0, 1, 10);
        }
        // RFC 4737 §3.3: only 2 arrives after a higher number (3).
        assert_eq!(f.reordered, 1);
    }

    #[test]
    fn duplicates_do_not_count_twice() {
        let mut f = FlowStats::default();
        f.record_arrival(3, 0, 10, 100);
        f.record_arrival(3, 0, 12, 100);
        assert_eq!((f.received, f.duplicates, f.bytes_received), (1, 1, 100));
    }
}
