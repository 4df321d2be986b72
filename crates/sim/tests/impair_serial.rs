//! Loss models, token buckets and serial lines against numbers computed here, from the
//! formulas and the bytes, never from the models' own output.

use sim::impair::{Bernoulli, GilbertElliott, LossModel, Policer, Shaper};
use sim::rng::RunSeed;
use sim::time::SimTime;

/// How many standard deviations a seeded statistic may stray. With fixed seeds the tests
/// are deterministic; 5 sd keeps them meaningful (a wrong formula moves the count by far
/// more) without tuning them to a lucky seed.
const SD: f64 = 5.0;

fn count_drops(model: &mut LossModel, seed: u64, n: usize) -> (usize, Vec<usize>) {
    let mut rng = RunSeed(seed).stream(17, "loss");
    let mut drops = 0;
    let mut runs = Vec::new();
    let mut run = 0;
    for _ in 0..n {
        if model.drop(&mut rng) {
            drops += 1;
            run += 1;
        } else if run > 0 {
            runs.push(run);
            run = 0;
        }
    }
    (drops, runs)
}

#[test]
fn bernoulli_long_run_loss_is_binomial() {
    let n = 2_000_000usize;
    for (seed, p) in [(1u64, 0.01), (2, 0.3)] {
        let mut m = LossModel::Bernoulli(Bernoulli::new(p).unwrap());
        let (drops, _) = count_drops(&mut m, seed, n);
        let mean = n as f64 * p;
        let sd = (n as f64 * p * (1.0 - p)).sqrt();
        assert!((drops as f64 - mean).abs() <= SD * sd, "p {p}: {drops} drops, expected {mean} ± {}", SD * sd);
    }
}

/// Variance of the number of losses in `n` frames of a stationary Gilbert-Elliott chain:
/// `n [L(1−L) + 2 (e_B − e_G)² π_G π_B λ / (1 − λ)]` with `e` the loss probability of a
/// state and `λ = 1 − p − r` the chain's second eigenvalue (the covariance of two frames
/// `m` apart is `(e_B − e_G)² π_G π_B λ^m`). For independent losses it is binomial.
fn ge_count_sd(n: usize, p: f64, r: f64, k: f64, h: f64) -> (f64, f64) {
    let (pi_b, pi_g) = (p / (p + r), r / (p + r));
    let (e_g, e_b) = (1.0 - k, 1.0 - h);
    let loss = pi_g * e_g + pi_b * e_b;
    let lambda = 1.0 - p - r;
    let per_frame = loss * (1.0 - loss) + 2.0 * (e_b - e_g).powi(2) * pi_g * pi_b * lambda / (1.0 - lambda);
    (n as f64 * loss, (n as f64 * per_frame).sqrt())
}

#[test]
fn gilbert_elliott_long_run_loss() {
    let n = 4_000_000usize;
    // The simple Gilbert chain from (1 % loss, bursts of 4), and a general Elliott one.
    let simple = GilbertElliott::from_loss_and_burst(0.01, 4.0).unwrap();
    let general = GilbertElliott::new(0.02, 0.3, 0.995, 0.4).unwrap();
    for (seed, ge) in [(3u64, simple), (4, general)] {
        let (mean, sd) = ge_count_sd(n, ge.p(), ge.r(), ge.k(), ge.h());
        let (drops, _) = count_drops(&mut LossModel::GilbertElliott(ge.clone()), seed, n);
        assert!((drops as f64 - mean).abs() <= SD * sd, "{ge:?}: {drops} drops, expected {mean} ± {}", SD * sd);
    }
}

#[test]
fn gilbert_mean_burst_is_one_over_r() {
    let n = 4_000_000usize;
    for (seed, loss, burst) in [(5u64, 0.01, 4.0), (6, 0.05, 10.0), (7, 0.02, 1.0)] {
        let ge = GilbertElliott::from_loss_and_burst(loss, burst).unwrap();
        let r = 1.0 / burst;
        let (_, runs) = count_drops(&mut LossModel::GilbertElliott(ge), seed, n);
        // Each run is a geometric sojourn in B: mean 1/r, variance (1 − r)/r².
        let mean_run = runs.iter().sum::<usize>() as f64 / runs.len() as f64;
        let sd = ((1.0 - r) / (r * r) / runs.len() as f64).sqrt();
        assert!(
            (mean_run - burst).abs() <= SD * sd.max(1e-9),
            "loss {loss}, burst {burst}: mean run {mean_run} over {} runs, ± {}",
            runs.len(),
            SD * sd
        );
        // Bernoulli losses at the same rate would give runs of 1/(1−loss), much shorter.
    }
}

#[test]
fn same_seed_same_losses() {
    let ge = GilbertElliott::from_loss_and_burst(0.05, 3.0).unwrap();
    let a = count_drops(&mut LossModel::GilbertElliott(ge.clone()), 9, 10_000);
    let b = count_drops(&mut LossModel::GilbertElliott(ge), 9, 10_000);
    assert_eq!(a, b);
}

/// A source that always has a frame waiting sees the policer pass exactly
/// `burst + rate·t/8` bytes in `[0, t]`.
#[test]
fn policer_passes_rate_times_t_plus_burst() {
    // 8000 bit/s is 1 byte/ms; bucket 1500 bytes; 100-byte frames every ms through 1 s.
    let (rate, burst, len) = (8_000u64, 1_500u64, 100usize);
    let mut pol = Policer::new(rate, burst).unwrap();
    let t_ms = 1_000u64;
    let passed: u64 = (0..=t_ms)
        .filter(|&ms| pol.conform(SimTime::from_millis(ms), len))
        .count() as u64
        * len as u64;
    assert_eq!(passed, burst + rate * t_ms / 1000 / 8);
    assert_eq!(passed, 2_500);

    // 1 Mbit/s with one-byte frames every µs for 10 ms: 3000 + 1250 bytes, not one more.
    let (rate, burst) = (1_000_000u64, 3_000u64);
    let mut pol = Policer::new(rate, burst).unwrap();
    let t_us = 10_000u64;
    let passed = (0..=t_us).filter(|&us| pol.conform(SimTime::from_micros(us), 1)).count() as u64;
    assert_eq!(passed, burst + rate * t_us / 1_000_000 / 8);
}

/// Bytes passed over every window of arrivals stay within `burst + rate·Δt/8`, whatever
/// the arrival pattern (a deterministic pseudo-random one here).
#[test]
fn policer_respects_the_arrival_curve_on_every_window() {
    let (rate, burst) = (64_000u64, 2_000u64);
    let mut pol = Policer::new(rate, burst).unwrap();
    let mut rng = RunSeed(11).stream(0, "arrivals");
    let mut now = 0u64;
    let mut passed: Vec<(u64, u64)> = Vec::new(); // (time ns, bytes)
    for _ in 0..3_000 {
        now += rng.uniform_inclusive(20_000_000); // up to 20 ms apart
        let len = 40 + rng.uniform_inclusive(1_460) as usize;
        if pol.conform(SimTime(now), len) {
            passed.push((now, len as u64));
        }
    }
    assert!(passed.len() > 100);
    assert_window_bound(&passed, rate, burst);
}

/// For every i ≤ j: Σ bytes of events i..=j ≤ burst + rate·(t_j − t_i)/8, in exact
/// integers (× 8·10⁹).
fn assert_window_bound(events: &[(u64, u64)], rate: u64, burst: u64) {
    let mut prefix = vec![0u128];
    for &(_, b) in events {
        prefix.push(prefix.last().unwrap() + u128::from(b));
    }
    for i in 0..events.len() {
        for j in i..events.len() {
            let bytes = prefix[j + 1] - prefix[i];
            let dt = u128::from(events[j].0 - events[i].0);
            assert!(
                bytes * 8_000_000_000 <= u128::from(burst) * 8_000_000_000 + u128::from(rate) * dt,
                "{bytes} bytes in {dt} ns exceed {burst} + {rate} bit/s"
            );
        }
    }
}

#[test]
fn shaper_output_never_exceeds_the_envelope() {
    let (rate, burst) = (128_000u64, 3_000u64);
    let mut sh = Shaper::new(rate, burst).unwrap();
    let mut rng = RunSeed(12).stream(0, "arrivals");
    let mut now = 0u64;
    let mut out: Vec<(u64, u64)> = Vec::new();
    let mut last = 0u64;
    let mut offered = 0u64;
    for _ in 0..2_000 {
        // Bursty arrivals, on average far above the rate.
        now += if rng.bernoulli(0.9) { 0 } else { rng.uniform_inclusive(200_000_000) };
        let len = 40 + rng.uniform_inclusive(1_460);
        let leave = sh.departure(SimTime(now), len as usize).expect("shorter than the bucket").0;
        assert!(leave >= now, "left before it arrived");
        assert!(leave >= last, "departures out of order");
        last = leave;
        offered += len;
        out.push((leave, len));
    }
    assert_window_bound(&out, rate, burst);
    assert!(offered > burst * 100);
}

/// Everything offered at time 0: frame i leaves at the first nanosecond at which
/// `burst + rate·t/8` covers the bytes up to and including it.
#[test]
fn backlogged_shaper_runs_exactly_at_the_rate() {
    let (rate, burst) = (33_600u64, 1_000u64);
    let mut sh = Shaper::new(rate, burst).unwrap();
    let mut rng = RunSeed(13).stream(0, "sizes");
    let mut cumulative = 0u128;
    for _ in 0..500 {
        let len = 1 + rng.uniform_inclusive(998);
        cumulative += u128::from(len);
        let expected = (cumulative.saturating_sub(u128::from(burst)) * 8_000_000_000).div_ceil(u128::from(rate));
        assert_eq!(sh.departure(SimTime::ZERO, len as usize).unwrap().0 as u128, expected);
    }
}

#[test]
fn shaper_lets_a_bucket_sized_burst_through_at_once() {
    let (rate, burst) = (1_000_000u64, 4_500u64);
    let mut sh = Shaper::new(rate, burst).unwrap();
    // Drain, then wait long enough for the bucket to refill completely.
    for _ in 0..10 {
        sh.departure(SimTime::ZERO, 1_500).unwrap();
    }
    let t = SimTime::from_secs(10);
    let leaves: Vec<SimTime> = (0..3).map(|_| sh.departure(t, 1_500).unwrap()).collect();
    assert_eq!(leaves, vec![t; 3], "a burst of the bucket's depth leaves at once");
    // The next byte waits one byte's worth of tokens: 8 µs at 1 Mbit/s.
    assert_eq!(sh.departure(t, 1), Some(t + sim::time::Duration::from_micros(8)));
}
