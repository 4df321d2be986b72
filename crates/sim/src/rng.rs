//! Seeded random streams: one per (run seed, component, purpose), no global state.
//!
//! # Derivation
//!
//! ns-3 gives each random variable its own substream of one MRG32k3a generator, picked
//! by (run, stream number); the stream numbers are handed out in creation order, so
//! adding a node can shift every other node's randomness. Here a stream's seed is a
//! **hash of its name** instead, so streams are independent of creation order: adding
//! a node or a purpose never changes another stream.
//!
//! The hash is a SplitMix64 sponge (Steele, Lea & Flood, "Fast splittable
//! pseudorandom number generators", OOPSLA 2014; the finaliser is Stafford's "Mix13"):
//!
//! ```text
//! mix64(z)  = z ^= z >> 30; z *= 0xBF58476D1CE4E5B9; z ^= z >> 27; z *= 0x94D049BB133111EB; z ^ (z >> 31)
//! absorb(h, w) = mix64((h + 0x9E3779B97F4A7C15) ^ w)          (wrapping +)
//! key = absorb over [run_seed, component, each 8-byte little-endian chunk of purpose
//!       (the last zero-padded), purpose length in bytes], starting from h = 0x716F_736C_6162 ("qoslab")
//! ```
//!
//! The generator's 256-bit state is then the first four outputs of SplitMix64 seeded
//! with `key` (`s[i] = mix64(key + (i+1) × 0x9E3779B97F4A7C15)`), the seeding Vigna
//! recommends for xoshiro. We write that expansion ourselves rather than call
//! `seed_from_u64`, so a change in a crate's seeding can never change a published run.
//!
//! # Generator
//!
//! [`rand_xoshiro::Xoshiro256PlusPlus`] (Blackman & Vigna 2019) rather than
//! `rand_chacha::ChaCha8Rng`: nothing here needs cryptographic strength, xoshiro256++
//! passes BigCrush, costs about a nanosecond per `u64` (ChaCha8 two to four times more,
//! which matters at millions of events per second), and its 32-byte state is cheap to
//! keep one per component. Its output for a given state is fixed by the algorithm, so
//! results do not depend on the crate's version.
//!
//! Integer and Bernoulli draws are exact and portable. `exponential` uses `f64::ln`,
//! which is bit-identical on one platform but not guaranteed across libms; a model
//! whose output must match across platforms should draw integers.

use rand_core::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

use crate::time::Duration;

/// SplitMix64's increment: 2⁶⁴ / φ, odd.
const GOLDEN_GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;
/// Start of the key sponge, "qoslab" in ASCII, so our keys differ from a bare SplitMix64.
const SPONGE_START: u64 = 0x716F_736C_6162;

/// SplitMix64's output function (Stafford's Mix13): a bijection on `u64` whose every
/// output bit depends on every input bit.
pub const fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

const fn absorb(h: u64, word: u64) -> u64 {
    mix64(h.wrapping_add(GOLDEN_GAMMA) ^ word)
}

/// The 64-bit key of the stream named (run seed, component, purpose); see the module doc.
pub fn stream_key(run_seed: u64, component: u64, purpose: &str) -> u64 {
    let mut h = absorb(SPONGE_START, run_seed);
    h = absorb(h, component);
    for chunk in purpose.as_bytes().chunks(8) {
        let mut word = [0u8; 8];
        word[..chunk.len()].copy_from_slice(chunk);
        h = absorb(h, u64::from_le_bytes(word));
    }
    absorb(h, purpose.len() as u64)
}

/// The scenario's seed; hands out one named stream per (component, purpose).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RunSeed(pub u64);

impl RunSeed {
    /// The stream for `component` (a node, link or other model's id) and `purpose`
    /// (`"dcf-backoff"`, `"loss"`, …). The same triple always gives the same stream,
    /// whatever other streams exist or were made first.
    pub fn stream(self, component: u64, purpose: &str) -> RandomStream {
        RandomStream::from_key(stream_key(self.0, component, purpose))
    }
}

/// One independent random stream. Not `Clone`, so a stream cannot be duplicated by
/// accident and replayed twice.
#[derive(Debug)]
pub struct RandomStream {
    generator: Xoshiro256PlusPlus,
}

impl RandomStream {
    /// The stream with the given key (normally from [`stream_key`] via [`RunSeed::stream`]).
    pub fn from_key(key: u64) -> RandomStream {
        let mut seed = [0u8; 32];
        for (i, word) in seed.chunks_exact_mut(8).enumerate() {
            let state_word = mix64(key.wrapping_add(GOLDEN_GAMMA.wrapping_mul(i as u64 + 1)));
            word.copy_from_slice(&state_word.to_le_bytes());
        }
        // Four consecutive SplitMix64 outputs are distinct images of distinct inputs
        // under a bijection, so at most one is zero: the all-zero state is impossible.
        RandomStream { generator: Xoshiro256PlusPlus::from_seed(seed) }
    }

    /// 64 uniformly random bits.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.generator.next_u64()
    }

    /// A uniform integer in `[0, n]`, both ends included, without bias (e.g. a DCF
    /// backoff slot in `[0, CW]`, IEEE 802.11-2020 §10.23.2).
    ///
    /// Lemire's multiply-and-reject ("Fast random integer generation in an interval",
    /// ACM TOMACS 2019): one multiplication, and a division only in the rare case that
    /// may need a rejection.
    #[inline]
    pub fn uniform_inclusive(&mut self, n: u64) -> u64 {
        let Some(range) = n.checked_add(1) else {
            return self.next_u64(); // [0, u64::MAX]: every value once.
        };
        let mut product = u128::from(self.next_u64()) * u128::from(range);
        if (product as u64) < range {
            // 2⁶⁴ mod range: the low words below it belong to an over-represented value.
            let threshold = range.wrapping_neg() % range;
            while (product as u64) < threshold {
                product = u128::from(self.next_u64()) * u128::from(range);
            }
        }
        (product >> 64) as u64
    }

    /// A uniform `f64` in `[0, 1)`: the top 53 bits as a fraction, so every value is a
    /// multiple of 2⁻⁵³ and 1.0 is never returned.
    #[inline]
    pub fn uniform_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// `true` with probability `p`. `p = 0` is never true and `p = 1` always is.
    /// Panics if `p` is not in `[0, 1]`.
    #[inline]
    pub fn bernoulli(&mut self, p: f64) -> bool {
        assert!((0.0..=1.0).contains(&p), "bernoulli: probability {p} is not in [0, 1]");
        self.uniform_f64() < p
    }

    /// An exponential variate with the given mean, by inversion: `-mean · ln(1 - U)`
    /// with `U` in `[0, 1)`, so the logarithm's argument is in `(0, 1]` and finite.
    #[inline]
    pub fn exponential(&mut self, mean: f64) -> f64 {
        -mean * (1.0 - self.uniform_f64()).ln()
    }

    /// An exponential span with the given mean, rounded to the nearest nanosecond
    /// (e.g. Poisson arrivals).
    pub fn exponential_duration(&mut self, mean: Duration) -> Duration {
        let ns = self.exponential(mean.as_nanos() as f64).round();
        Duration::from_nanos(if ns >= u64::MAX as f64 { u64::MAX } else { ns as u64 })
    }
}

#[cfg(test)]
mod test {
    use super::*;
    use rand_xoshiro::SplitMix64;

    /// Our hand-written SplitMix64 expansion against rand_xoshiro's independent one.
    #[test]
    fn expansion_matches_reference_splitmix64() {
        for key in [0u64, 1, 0xDEAD_BEEF, u64::MAX] {
            let mut reference = SplitMix64::seed_from_u64(key);
            let mut seed = [0u8; 32];
            for word in seed.chunks_exact_mut(8) {
                word.copy_from_slice(&reference.next_u64().to_le_bytes());
            }
            let mut expected = Xoshiro256PlusPlus::from_seed(seed);
            let mut ours = RandomStream::from_key(key);
            for _ in 0..8 {
                assert_eq!(ours.next_u64(), expected.next_u64());
            }
        }
    }

    /// Published SplitMix64 outputs for seed 0 (first three values of Vigna's
    /// splitmix64.c with x = 0), which `mix64` must reproduce.
    #[test]
    fn mix64_reference_values() {
        assert_eq!(mix64(GOLDEN_GAMMA), 0xE220_A839_7B1D_CDAF);
        assert_eq!(mix64(GOLDEN_GAMMA.wrapping_mul(2)), 0x6E78_9E6A_A1B9_65F4);
        assert_eq!(mix64(GOLDEN_GAMMA.wrapping_mul(3)), 0x06C4_5D18_8009_454F);
    }

    /// Pins the derivation: if this changes, every published result changes with it.
    /// The values were computed by an independent Python transcription of the module
    /// doc's formulas and of xoshiro256++ (`rotl(s0 + s3, 23) + s0`).
    #[test]
    fn derivation_is_pinned() {
        assert_eq!(stream_key(1, 0, "dcf-backoff"), 11_799_585_525_973_628_469);
        assert_eq!(RunSeed(1).stream(0, "dcf-backoff").next_u64(), 10_288_446_400_538_583_498);
    }

    fn draws(stream: &mut RandomStream, n: usize) -> Vec<u64> {
        (0..n).map(|_| stream.next_u64()).collect()
    }

    #[test]
    fn streams_do_not_depend_on_creation_order() {
        let seed = RunSeed(42);
        // Run A: nodes 0, 1, 2 created in order, each drawing as it is created.
        let a: Vec<Vec<u64>> = (0..3).map(|node| draws(&mut seed.stream(node, "loss"), 16)).collect();
        // Run B: a new node 7 and another purpose appear first, then the nodes in reverse.
        let mut extra = seed.stream(7, "loss");
        let _ = draws(&mut extra, 100);
        let mut other_purpose = seed.stream(1, "dcf-backoff");
        let _ = draws(&mut other_purpose, 100);
        let mut b: Vec<Vec<u64>> = (0..3).rev().map(|node| draws(&mut seed.stream(node, "loss"), 16)).collect();
        b.reverse();
        assert_eq!(a, b);
    }

    #[test]
    fn names_separate_streams() {
        let first = |seed: u64, comp: u64, purpose: &str| RunSeed(seed).stream(comp, purpose).next_u64();
        let base = first(1, 2, "loss");
        assert_ne!(base, first(2, 2, "loss"));
        assert_ne!(base, first(1, 3, "loss"));
        assert_ne!(base, first(1, 2, "loss2"));
        // Zero padding of the last chunk must not collide with a real NUL byte.
        assert_ne!(first(1, 2, "ab"), first(1, 2, "ab\0"));
        // Swapping component and seed gives another stream.
        assert_ne!(first(1, 2, "x"), first(2, 1, "x"));
    }

    #[test]
    fn uniform_inclusive_stays_in_range_and_hits_both_ends() {
        let mut s = RunSeed(3).stream(0, "test");
        assert_eq!(s.uniform_inclusive(0), 0);
        let mut seen = [false; 8];
        for _ in 0..1_000 {
            let v = s.uniform_inclusive(7) as usize;
            seen[v] = true;
        }
        assert!(seen.iter().all(|&x| x));
        let _ = s.uniform_inclusive(u64::MAX);
    }

    /// Chi-square test of uniformity for CW = 31 (32 slots), 320 000 draws. With 31
    /// degrees of freedom the 0.1 % critical value is 61.1.
    #[test]
    fn uniform_inclusive_is_uniform() {
        let mut s = RunSeed(4).stream(0, "test");
        let mut counts = [0u64; 32];
        let draws = 320_000;
        for _ in 0..draws {
            counts[s.uniform_inclusive(31) as usize] += 1;
        }
        let expected = draws as f64 / 32.0;
        let chi2: f64 = counts.iter().map(|&c| (c as f64 - expected).powi(2) / expected).sum();
        assert!(chi2 < 61.1, "chi-square {chi2}");
    }

    /// A range of 3·2⁶² + 1 values: `x mod range` would give the values below 2⁶² two
    /// preimages each and put 62.5 % of draws in the lower half; unbiased is 50 %.
    #[test]
    fn uniform_inclusive_rejects_for_awkward_ranges() {
        let mut s = RunSeed(5).stream(0, "test");
        let n = (1u64 << 63) + (1u64 << 62); // range 3·2⁶² + 1
        let lower = (0..20_000).filter(|_| s.uniform_inclusive(n) <= n / 2).count();
        assert!((9_500..10_500).contains(&lower), "{lower} of 20000 in the lower half");
    }

    #[test]
    fn uniform_f64_and_bernoulli() {
        let mut s = RunSeed(6).stream(0, "test");
        let mut sum = 0.0;
        for _ in 0..100_000 {
            let u = s.uniform_f64();
            assert!((0.0..1.0).contains(&u));
            sum += u;
        }
        assert!((sum / 100_000.0 - 0.5).abs() < 0.005);
        assert!(!(0..1000).any(|_| s.bernoulli(0.0)));
        assert!((0..1000).all(|_| s.bernoulli(1.0)));
        let hits = (0..100_000).filter(|_| s.bernoulli(0.01)).count();
        // Binomial(1e5, 0.01): mean 1000, sd 31.5; ±5 sd.
        assert!((843..1158).contains(&hits), "{hits}");
    }

    #[test]
    #[should_panic(expected = "not in [0, 1]")]
    fn bernoulli_rejects_bad_probability() {
        RunSeed(0).stream(0, "test").bernoulli(1.5);
    }

    #[test]
    fn exponential_mean_and_duration() {
        let mut s = RunSeed(7).stream(0, "test");
        let n = 200_000;
        let mean: f64 = (0..n).map(|_| s.exponential(2.0)).sum::<f64>() / n as f64;
        // sd of the sample mean is 2/sqrt(2e5) = 0.0045; ±5 sd.
        assert!((mean - 2.0).abs() < 0.023, "{mean}");
        let total: u64 = (0..n).map(|_| s.exponential_duration(Duration::from_micros(100)).as_nanos()).sum();
        let mean_ns = total as f64 / n as f64;
        assert!((mean_ns - 100_000.0).abs() < 1_150.0, "{mean_ns}");
    }
}
