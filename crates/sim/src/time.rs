//! Simulated time: integer nanoseconds, never a float and never the wall clock.
//!
//! Two types keep instants and spans apart, as `std::time::{Instant, Duration}` and
//! ns-3's `Time` do (ns-3 uses one type; two types let the compiler catch
//! `instant + instant`):
//!
//! - [`SimTime`]: an instant, nanoseconds since the start of the run.
//! - [`Duration`]: a non-negative span of nanoseconds.
//!
//! `u64` nanoseconds reach 584 years, far past any run. Arithmetic uses the plain
//! operators, so it panics on overflow or on a negative result in debug builds (tests)
//! and wraps in release; `checked_*` variants exist where a caller must handle it.
//!
//! Serialisation time of a frame is [`tx_time`]: `ceil(bits × 10⁹ / rate)` in exact
//! integer arithmetic. Rounding up means a frame's last bit is never delivered early,
//! and that back-to-back frames never exceed the line rate (a sum of ceilings is at
//! least the exact sum), so a link model can never send faster than its rate.

use std::fmt;
use std::iter::Sum;
use std::ops::{Add, AddAssign, Div, Mul, Sub, SubAssign};

const NANOS_PER_MICRO: u64 = 1_000;
const NANOS_PER_MILLI: u64 = 1_000_000;
const NANOS_PER_SEC: u64 = 1_000_000_000;

/// An instant of simulated time, in nanoseconds since the start of the run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SimTime(pub u64);

/// A span of simulated time, in nanoseconds. Never negative.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Duration(pub u64);

impl SimTime {
    /// The start of every run.
    pub const ZERO: SimTime = SimTime(0);
    /// The last representable instant (about 584 years).
    pub const MAX: SimTime = SimTime(u64::MAX);

    pub const fn from_nanos(ns: u64) -> SimTime {
        SimTime(ns)
    }
    pub const fn from_micros(us: u64) -> SimTime {
        SimTime(us * NANOS_PER_MICRO)
    }
    pub const fn from_millis(ms: u64) -> SimTime {
        SimTime(ms * NANOS_PER_MILLI)
    }
    pub const fn from_secs(s: u64) -> SimTime {
        SimTime(s * NANOS_PER_SEC)
    }
    pub const fn as_nanos(self) -> u64 {
        self.0
    }
    /// Seconds as `f64`, for reports and plots only; never feed it back into time.
    pub fn as_secs_f64(self) -> f64 {
        Duration(self.0).as_secs_f64()
    }
    /// The span since the start of the run.
    pub const fn since_start(self) -> Duration {
        Duration(self.0)
    }
    /// `self - earlier`, or `None` if `earlier` is later than `self`.
    pub const fn checked_duration_since(self, earlier: SimTime) -> Option<Duration> {
        match self.0.checked_sub(earlier.0) {
            Some(ns) => Some(Duration(ns)),
            None => None,
        }
    }
    /// `self - earlier`, or zero if `earlier` is later than `self`.
    pub const fn saturating_duration_since(self, earlier: SimTime) -> Duration {
        Duration(self.0.saturating_sub(earlier.0))
    }
    /// `self + d`, or `None` past [`SimTime::MAX`].
    pub const fn checked_add(self, d: Duration) -> Option<SimTime> {
        match self.0.checked_add(d.0) {
            Some(ns) => Some(SimTime(ns)),
            None => None,
        }
    }
}

impl Duration {
    pub const ZERO: Duration = Duration(0);
    pub const MAX: Duration = Duration(u64::MAX);

    pub const fn from_nanos(ns: u64) -> Duration {
        Duration(ns)
    }
    pub const fn from_micros(us: u64) -> Duration {
        Duration(us * NANOS_PER_MICRO)
    }
    pub const fn from_millis(ms: u64) -> Duration {
        Duration(ms * NANOS_PER_MILLI)
    }
    pub const fn from_secs(s: u64) -> Duration {
        Duration(s * NANOS_PER_SEC)
    }
    /// The nearest whole nanosecond to `secs` (halves away from zero), for turning a
    /// configuration value into time once, at load. Panics on a negative, NaN or
    /// out-of-range value.
    pub fn from_secs_f64(secs: f64) -> Duration {
        let ns = (secs * NANOS_PER_SEC as f64).round();
        assert!(ns >= 0.0 && ns <= u64::MAX as f64, "duration of {secs} s is not representable in u64 nanoseconds");
        Duration(ns as u64)
    }
    pub const fn as_nanos(self) -> u64 {
        self.0
    }
    /// Whole microseconds, truncated.
    pub const fn as_micros(self) -> u64 {
        self.0 / NANOS_PER_MICRO
    }
    /// Whole milliseconds, truncated.
    pub const fn as_millis(self) -> u64 {
        self.0 / NANOS_PER_MILLI
    }
    /// Seconds as `f64`, for reports and plots only; never feed it back into time.
    pub fn as_secs_f64(self) -> f64 {
        // Split so that whole seconds are exact and only the fraction is rounded.
        (self.0 / NANOS_PER_SEC) as f64 + (self.0 % NANOS_PER_SEC) as f64 / NANOS_PER_SEC as f64
    }
    pub const fn is_zero(self) -> bool {
        self.0 == 0
    }
    pub const fn checked_add(self, rhs: Duration) -> Option<Duration> {
        match self.0.checked_add(rhs.0) {
            Some(ns) => Some(Duration(ns)),
            None => None,
        }
    }
    pub const fn checked_sub(self, rhs: Duration) -> Option<Duration> {
        match self.0.checked_sub(rhs.0) {
            Some(ns) => Some(Duration(ns)),
            None => None,
        }
    }
    pub const fn saturating_sub(self, rhs: Duration) -> Duration {
        Duration(self.0.saturating_sub(rhs.0))
    }
    pub const fn checked_mul(self, factor: u64) -> Option<Duration> {
        match self.0.checked_mul(factor) {
            Some(ns) => Some(Duration(ns)),
            None => None,
        }
    }
}

/// Time to serialise `bits` at `rate_bps` bit/s, rounded **up** to a whole nanosecond:
/// `ceil(bits × 10⁹ / rate_bps)`, computed exactly in 128-bit integers.
///
/// Rounding up keeps a link from ever exceeding its rate (see the module doc).
/// Examples: 1500 bytes at 100 Mbit/s is exactly 120 µs; 1 bit at 3 bit/s is
/// 333 333 334 ns. Panics if `rate_bps` is zero or the result exceeds [`Duration::MAX`].
pub fn tx_time(bits: u64, rate_bps: u64) -> Duration {
    assert!(rate_bps > 0, "tx_time: a link rate of 0 bit/s never finishes sending");
    // Every frame's bit count times 10⁹ fits 64 bits (below 2.3 GB): the same quotient
    // without a 128-bit division, which this runs twice per frame sent.
    if let Some(numerator) = bits.checked_mul(NANOS_PER_SEC) {
        return Duration(numerator.div_ceil(rate_bps));
    }
    let numerator = u128::from(bits) * u128::from(NANOS_PER_SEC);
    let ns = numerator.div_ceil(u128::from(rate_bps));
    Duration(u64::try_from(ns).expect("tx_time: transmission time overflows u64 nanoseconds"))
}

/// [`tx_time`] of `bytes` octets.
pub fn tx_time_bytes(bytes: u64, rate_bps: u64) -> Duration {
    let bits = bytes.checked_mul(8).expect("tx_time_bytes: bit count overflows u64");
    tx_time(bits, rate_bps)
}

/// Whole bits a `rate_bps` link sends in `d`, rounded **down**: `floor(d × rate / 10⁹)`.
/// The counterpart of [`tx_time`]: `bits_in(tx_time(b, r), r) >= b` for every `b`, `r`.
pub fn bits_in(d: Duration, rate_bps: u64) -> u64 {
    let bits = u128::from(d.0) * u128::from(rate_bps) / u128::from(NANOS_PER_SEC);
    u64::try_from(bits).unwrap_or(u64::MAX)
}

impl Add<Duration> for SimTime {
    type Output = SimTime;
    fn add(self, rhs: Duration) -> SimTime {
        SimTime(self.0 + rhs.0)
    }
}
impl AddAssign<Duration> for SimTime {
    fn add_assign(&mut self, rhs: Duration) {
        self.0 += rhs.0;
    }
}
impl Sub<Duration> for SimTime {
    type Output = SimTime;
    fn sub(self, rhs: Duration) -> SimTime {
        SimTime(self.0 - rhs.0)
    }
}
impl SubAssign<Duration> for SimTime {
    fn sub_assign(&mut self, rhs: Duration) {
        self.0 -= rhs.0;
    }
}
/// The span between two instants; panics in debug if `rhs` is later than `self`.
impl Sub<SimTime> for SimTime {
    type Output = Duration;
    fn sub(self, rhs: SimTime) -> Duration {
        Duration(self.0 - rhs.0)
    }
}
impl Add for Duration {
    type Output = Duration;
    fn add(self, rhs: Duration) -> Duration {
        Duration(self.0 + rhs.0)
    }
}
impl AddAssign for Duration {
    fn add_assign(&mut self, rhs: Duration) {
        self.0 += rhs.0;
    }
}
impl Sub for Duration {
    type Output = Duration;
    fn sub(self, rhs: Duration) -> Duration {
        Duration(self.0 - rhs.0)
    }
}
impl SubAssign for Duration {
    fn sub_assign(&mut self, rhs: Duration) {
        self.0 -= rhs.0;
    }
}
impl Mul<u64> for Duration {
    type Output = Duration;
    fn mul(self, rhs: u64) -> Duration {
        Duration(self.0 * rhs)
    }
}
impl Mul<Duration> for u64 {
    type Output = Duration;
    fn mul(self, rhs: Duration) -> Duration {
        Duration(self * rhs.0)
    }
}
/// Truncating division, like integer division.
impl Div<u64> for Duration {
    type Output = Duration;
    fn div(self, rhs: u64) -> Duration {
        Duration(self.0 / rhs)
    }
}
impl Sum for Duration {
    fn sum<I: Iterator<Item = Duration>>(iter: I) -> Duration {
        iter.fold(Duration::ZERO, |a, b| a + b)
    }
}

/// Writes `ns` in the largest unit that keeps it ≥ 1: `"750 ns"`, `"12.500 µs"`,
/// `"1.500 ms"`, `"2.000 s"`. Three decimals, truncated (never rounded up into the
/// next unit), from integer arithmetic only.
fn write_nanos(f: &mut fmt::Formatter<'_>, ns: u64) -> fmt::Result {
    let (unit_ns, unit) = if ns >= NANOS_PER_SEC {
        (NANOS_PER_SEC, "s")
    } else if ns >= NANOS_PER_MILLI {
        (NANOS_PER_MILLI, "ms")
    } else if ns >= NANOS_PER_MICRO {
        (NANOS_PER_MICRO, "µs")
    } else {
        return write!(f, "{ns} ns");
    };
    let whole = ns / unit_ns;
    let thousandths = (ns % unit_ns) / (unit_ns / 1000);
    write!(f, "{whole}.{thousandths:03} {unit}")
}

impl fmt::Display for Duration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_nanos(f, self.0)
    }
}

/// Shown as the span since the start of the run, e.g. `"1.500 ms"`.
impl fmt::Display for SimTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_nanos(f, self.0)
    }
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn constructors_agree() {
        assert_eq!(Duration::from_secs(2), Duration::from_nanos(2_000_000_000));
        assert_eq!(Duration::from_millis(3), Duration::from_micros(3_000));
        assert_eq!(SimTime::from_millis(1) + Duration::from_micros(500), SimTime(1_500_000));
        assert_eq!(SimTime::from_secs(1) - SimTime::from_millis(250), Duration::from_millis(750));
        assert_eq!(Duration::from_secs_f64(0.0000015), Duration::from_nanos(1_500));
        assert_eq!(Duration::from_millis(10) / 4, Duration::from_micros(2_500));
        assert_eq!(3 * Duration::from_micros(20), Duration::from_micros(60));
        let total: Duration = [Duration(1), Duration(2), Duration(3)].into_iter().sum();
        assert_eq!(total, Duration(6));
    }

    #[test]
    fn display_picks_unit_and_truncates() {
        assert_eq!(Duration::from_micros(1_500).to_string(), "1.500 ms");
        assert_eq!(Duration::from_nanos(750).to_string(), "750 ns");
        assert_eq!(Duration::from_nanos(0).to_string(), "0 ns");
        assert_eq!(Duration::from_nanos(12_500).to_string(), "12.500 µs");
        assert_eq!(Duration::from_nanos(1_999_999).to_string(), "1.999 ms");
        assert_eq!(Duration::from_secs(2).to_string(), "2.000 s");
        assert_eq!(SimTime::from_nanos(3_000_001_000).to_string(), "3.000 s");
    }

    #[test]
    fn secs_f64_is_exact_for_whole_seconds() {
        assert_eq!(Duration::from_millis(1_500).as_secs_f64(), 1.5);
        assert_eq!(SimTime::from_secs(86_400 * 365).as_secs_f64(), 31_536_000.0);
    }

    #[test]
    fn checked_and_saturating() {
        assert_eq!(SimTime(5).checked_duration_since(SimTime(7)), None);
        assert_eq!(SimTime(5).saturating_duration_since(SimTime(7)), Duration::ZERO);
        assert_eq!(SimTime::MAX.checked_add(Duration(1)), None);
        assert_eq!(Duration(1).checked_sub(Duration(2)), None);
        assert_eq!(Duration::MAX.checked_mul(2), None);
    }

    #[test]
    #[cfg(debug_assertions)]
    #[should_panic]
    fn overflow_panics_in_debug() {
        let _ = SimTime::MAX + Duration(1);
    }

    #[test]
    fn tx_time_known_values() {
        // 1500-byte frame at 100 Mbit/s: 12 000 bits / 1e8 = 120 µs exactly.
        assert_eq!(tx_time_bytes(1500, 100_000_000), Duration::from_micros(120));
        // One 53-byte ATM cell at OC-3c payload rate 149.76 Mbit/s: 424/149.76e6 s
        // = 2831.196... ns, rounded up.
        assert_eq!(tx_time(424, 149_760_000), Duration(2832));
        // 1 bit at 3 bit/s = 333 333 333.33 ns, rounded up.
        assert_eq!(tx_time(1, 3), Duration(333_333_334));
        // 802.11b: 8 bits at 11 Mbit/s = 727.27 ns -> 728 ns.
        assert_eq!(tx_time(8, 11_000_000), Duration(728));
        assert_eq!(tx_time(0, 1), Duration::ZERO);
        // No intermediate overflow: u64::MAX bits at 1 Tbit/s.
        assert_eq!(tx_time(u64::MAX, 1_000_000_000_000), Duration(18_446_744_073_709_552));
    }

    #[test]
    fn tx_time_is_the_ceiling() {
        // Checked against the definition with floats where they are exact enough.
        for (bits, rate) in [(12_000u64, 11_000_000u64), (9_180 * 8, 155_520_000), (576 * 8, 1200)] {
            let exact = bits as f64 * 1e9 / rate as f64;
            let got = tx_time(bits, rate).as_nanos() as f64;
            assert!(got >= exact && got < exact + 1.0, "{bits} bits at {rate}: {got} vs {exact}");
            assert!(bits_in(tx_time(bits, rate), rate) >= bits);
        }
    }

    #[test]
    #[should_panic(expected = "0 bit/s")]
    fn tx_time_zero_rate_panics() {
        let _ = tx_time(8, 0);
    }
}
