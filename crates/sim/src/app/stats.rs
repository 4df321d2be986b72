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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
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

/// How an arrival counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arrival {
    /// The first copy, inside the window.
    Received,
    /// A copy of a datagram that arrived before.
    Duplicate,
    /// The first copy, after the window's end.
    Late,
}

/// What one flow did.
///
/// Arrivals are counted against the flow's measurement window (docs/metrics.md#window):
/// up to `end_ns` they are received; later they are late, counted in `late` and nowhere
/// else (not received, no latency, no jitter, no goodput: RFC 2544 §23 and §26.3 count a
/// frame that comes after the wait as lost). Received arrivals after `stop_ns`, the end
/// of the sending, are counted in `drained` as well: what the path still held when the
/// sending stopped.
#[derive(Debug, Clone)]
pub struct FlowStats {
    pub sent: u64,
    /// Distinct datagrams that arrived inside the window.
    pub received: u64,
    pub bytes_received: u64,
    /// Of `received`, those that arrived after the sending stopped (`stop_ns`).
    pub drained: u64,
    /// Distinct datagrams that arrived after the window's end (`end_ns`).
    pub late: u64,
    /// The window: the end of the sending, and the end of the wait after it.
    pub stop_ns: u64,
    pub end_ns: u64,
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

impl Default for FlowStats {
    /// A flow whose window never ends: every arrival until the run stops is received.
    fn default() -> Self {
        FlowStats::with_window(u64::MAX, u64::MAX)
    }
}

impl FlowStats {
    /// A flow measured over a window whose sending ends at `stop_ns` and whose wait for
    /// what is still on the way ends at `end_ns`.
    pub fn with_window(stop_ns: u64, end_ns: u64) -> Self {
        FlowStats {
            sent: 0,
            received: 0,
            bytes_received: 0,
            drained: 0,
            late: 0,
            stop_ns,
            end_ns,
            first_rx_ns: None,
            last_rx_ns: None,
            latency: Histogram::default(),
            jitter: Jitter::default(),
            rtt_ns: Vec::new(),
            duplicates: 0,
            reordered: 0,
            highest: None,
            seen: Vec::new(),
        }
    }

    /// Moves the window later by `ns` (the application started late, waiting for its link).
    pub fn delay_window(&mut self, ns: u64) {
        self.stop_ns = self.stop_ns.saturating_add(ns);
        self.end_ns = self.end_ns.saturating_add(ns);
    }

    /// Records the arrival of datagram `seq` sent at `sent_ns`, carrying `bytes` of
    /// payload, and says how it counted.
    pub fn record_arrival(&mut self, seq: u32, sent_ns: u64, received_ns: u64, bytes: u64) -> Arrival {
        let word = seq as usize / 64;
        if word >= self.seen.len() {
            self.seen.resize(word + 1, 0);
        }
        let bit = 1u64 << (seq % 64);
        if self.seen[word] & bit != 0 {
            self.duplicates += 1;
            return Arrival::Duplicate;
        }
        self.seen[word] |= bit;
        if received_ns > self.end_ns {
            self.late += 1;
            return Arrival::Late;
        }
        if received_ns > self.stop_ns {
            self.drained += 1;
        }
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
        Arrival::Received
    }

    /// Whether datagram `seq` has arrived (at least once, in the window or late).
    pub fn has_received(&self, seq: u32) -> bool {
        self.seen.get(seq as usize / 64).is_some_and(|w| w & (1u64 << (seq % 64)) != 0)
    }

    /// The receiving interval in ns, the divisor of the goodput (docs/metrics.md#goodput):
    /// the span from the first to the last arrival in the window, stretched by one mean
    /// inter-arrival time ((last − first) · n / (n − 1) for n arrivals), and never shorter
    /// than `sending_ns`, the sending interval. A steady flow that loses nothing is then
    /// measured over exactly its sending interval, and a flow that filled a queue over the
    /// time that queue took to drain: n arrivals through a bottleneck that needs τ per
    /// datagram span at least (n − 1)·τ, so n datagrams over this interval are never more
    /// than the bottleneck carries.
    pub fn receive_interval_ns(&self, sending_ns: u64) -> u64 {
        receive_interval_ns(self.received, self.first_rx_ns, self.last_rx_ns, sending_ns)
    }
}

/// [`FlowStats::receive_interval_ns`] of `n` arrivals from `first` to `last`.
pub fn receive_interval_ns(n: u64, first: Option<u64>, last: Option<u64>, sending_ns: u64) -> u64 {
    let stretched = match (first, last) {
        (Some(first), Some(last)) if n > 1 => {
            let span = u128::from(last.saturating_sub(first));
            (span * u128::from(n)).div_ceil(u128::from(n - 1)) as u64
        }
        _ => 0,
    };
    stretched.max(sending_ns)
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
    fn arrivals_after_the_window_are_late_and_counted_nowhere_else() {
        // Sending stops at 100, the wait ends at 200.
        let mut f = FlowStats::with_window(100, 200);
        assert_eq!(f.record_arrival(0, 0, 50, 10), Arrival::Received);
        assert_eq!(f.record_arrival(1, 90, 150, 10), Arrival::Received); // after the stop, inside the wait: drained
        assert_eq!(f.record_arrival(2, 95, 200, 10), Arrival::Received); // at the window's end: still inside
        assert_eq!(f.record_arrival(3, 99, 201, 10), Arrival::Late); // after it
        assert_eq!(f.record_arrival(3, 99, 202, 10), Arrival::Duplicate); // and its copy
        assert_eq!((f.received, f.bytes_received, f.drained, f.late, f.duplicates), (3, 30, 2, 1, 1));
        assert_eq!(f.last_rx_ns, Some(200));
        assert_eq!(f.latency.count(), 3);
    }

    #[test]
    fn receive_interval_is_the_sending_interval_for_a_steady_flow() {
        // 10 datagrams sent 1000 ns apart over [0, 10 000), each 300 ns on the way: the
        // arrivals span 9 gaps, stretched by one: the sending interval exactly.
        let mut f = FlowStats::default();
        for i in 0..10u32 {
            f.record_arrival(i, u64::from(i) * 1000, u64::from(i) * 1000 + 300, 100);
        }
        assert_eq!(f.receive_interval_ns(10_000), 10_000);
    }

    #[test]
    fn receive_interval_of_a_drained_queue_bounds_the_rate_by_the_bottleneck() {
        // 100 datagrams sent in 1000 ns through a bottleneck that delivers one per 50 ns
        // from t = 50: arrivals at 50, 100, … 5000. Over the sending interval they would
        // be 100 per 1000 ns, twenty times the bottleneck; over the receiving interval
        // (4950 · 100/99 = 5000 ns) they are one per 50 ns, the bottleneck's rate.
        let mut f = FlowStats::default();
        for i in 0..100u32 {
            f.record_arrival(i, u64::from(i) * 10, 50 * (u64::from(i) + 1), 100);
        }
        let interval = f.receive_interval_ns(1000);
        assert_eq!(interval, 5000);
        assert!(f.received * 50 <= interval);
    }

    #[test]
    fn duplicates_do_not_count_twice() {
        let mut f = FlowStats::default();
        f.record_arrival(3, 0, 10, 100);
        f.record_arrival(3, 0, 12, 100);
        assert_eq!((f.received, f.duplicates, f.bytes_received), (1, 1, 100));
    }
}
