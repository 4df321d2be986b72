//! CUBIC's window against RFC 9438's formulas, computed here independently:
//! W_cubic(t) = C·(t − K)³ + W_max with K = ∛((W_max − cwnd_epoch)/C), C = 0.4,
//! β = 0.7 (§4.2, §4.6), and the Reno-friendly W_est (§4.3).

use sim::tcp::congestion::Congestion;
use sim::tcp::{CongestionControl, CubicAlpha};

const SMSS: u32 = 1000;
const MS: u64 = 1_000_000;

/// A flow at `w_max` segments takes a loss at t = 0, then every RTT acknowledges a
/// window's worth of segments one by one, evenly spread. Returns (t, cwnd in
/// segments) at each RTT boundary.
fn run(w_max: u64, rtt: u64, secs: u64) -> Vec<(f64, f64)> {
    let mut cc = Congestion::new(CongestionControl::Cubic, SMSS, 10);
    cc.cwnd = w_max * u64::from(SMSS);
    cc.on_congestion_event(cc.cwnd, SMSS);
    let mut now = 0;
    let mut out = Vec::new();
    while now < secs * 1000 * MS {
        out.push((now as f64 * 1e-9, cc.cwnd as f64 / f64::from(SMSS)));
        let acks = cc.cwnd / u64::from(SMSS);
        for i in 0..acks {
            cc.on_ack(now + rtt * i / acks, u64::from(SMSS), SMSS, Some(rtt));
        }
        now += rtt;
    }
    out
}

#[test]
fn reduction_is_beta() {
    let w = run(100, 100 * MS, 1);
    assert_eq!(w[0].1, 70.0);
}

#[test]
fn window_follows_the_cubic_function() {
    // W_max = 1000 segments at 100 ms: K = ∛(300/0.4) ≈ 9.1 s, and W_est (70 % of
    // W_max plus about half a segment per RTT) stays far below the curve, so the
    // Reno-friendly region never applies and cwnd must follow W_cubic alone.
    let (c, beta, w_max) = (0.4f64, 0.7f64, 1000.0f64);
    let k = (w_max * (1.0 - beta) / c).cbrt();
    let rtt = 0.1;
    let w = |t: f64| c * (t - k).powi(3) + w_max;
    let trace = run(1000, 100 * MS, 13);
    for &(t, cwnd) in &trace {
        // The sender aims at W(t + RTT) one RTT ahead (§4.4–4.5), so cwnd lies
        // between the curve now and the curve one RTT on (one segment of rounding).
        assert!(cwnd >= w(t) - 1.0 && cwnd <= w(t + rtt) + 1.0, "t={t:.1}: cwnd {cwnd:.2}, W(t) {:.2}", w(t));
    }
    // Concave, plateau at W_max around K, then convex beyond.
    let at_k = trace.iter().min_by(|a, b| (a.0 - k).abs().total_cmp(&(b.0 - k).abs())).unwrap();
    assert!((at_k.1 - w_max).abs() < 1.5, "{at_k:?}");
    assert!(trace.last().unwrap().1 > 1020.0);
}

#[test]
fn reno_friendly_region_on_short_rtts() {
    // At 1 ms RTT the cubic curve is flat on the scale of an RTT, so W_est is larger
    // and cwnd = W_est (§4.3). W_est grows α = 3(1 − β)/(1 + β) segments per RTT
    // until it reaches cwnd_prior (100), then one per RTT.
    let alpha = 3.0 * (1.0 - 0.7) / (1.0 + 0.7);
    let w_est = |rtts: f64| {
        let to_prior = 30.0 / alpha;
        if rtts <= to_prior {
            70.0 + alpha * rtts
        } else {
            100.0 + (rtts - to_prior)
        }
    };
    let w_cubic = |t: f64| 0.4 * (t - 75f64.cbrt()).powi(3) + 100.0;
    let trace = run(100, MS, 1);
    for i in [20, 40, 100, 500] {
        let (t, cwnd) = trace[i];
        let expected = w_est(i as f64);
        assert!(expected > w_cubic(t));
        // cwnd moves once per ACK while W_est is computed per whole RTT here:
        // allow 1 % and two segments.
        assert!((cwnd - expected).abs() < 2.0 + 0.01 * expected, "RTT {i}: cwnd {cwnd:.2}, W_est {expected:.2}");
    }
}

#[test]
fn fast_convergence_lowers_w_max() {
    let mut cc = Congestion::new(CongestionControl::Cubic, SMSS, 10);
    cc.cwnd = 100_000;
    cc.on_congestion_event(cc.cwnd, SMSS);
    // A loss again at 80 segments, below W_max = 100: W_max = 80·(1 + β)/2 = 68 (§4.7).
    cc.cwnd = 80_000;
    cc.on_congestion_event(cc.cwnd, SMSS);
    assert!((cc.cubic().unwrap().w_max - 68.0).abs() < 1e-9);
    assert_eq!(cc.cwnd, 56_000);
}

/// The growth of W_est over one window of ACKs once it is above cwnd_prior (RFC 9438
/// §4.3), in segments, for the given α rule: a loss at 100 segments (cwnd 70, W_max =
/// cwnd_prior = 100, K = ∛(30/0.4) ≈ 4.2 s), then ACKs of one segment every RTT/cwnd at
/// RTT 20 ms. W_est gains α·(segments acked)/cwnd: ≈ 0.53 a window, and W_cubic stays
/// below it for the first seconds (the Reno-friendly region, cwnd = W_est).
fn w_est_gain_above_cwnd_prior(alpha: CubicAlpha) -> f64 {
    let rtt = 20 * MS;
    let mut cc = Congestion::new(CongestionControl::Cubic, SMSS, 10);
    cc.set_cubic_alpha(alpha);
    cc.cwnd = 100 * u64::from(SMSS);
    cc.on_congestion_event(cc.cwnd, SMSS);
    let mut now = 0;
    let ack = |cc: &mut Congestion, now: &mut u64| {
        *now += rtt / (cc.cwnd / u64::from(SMSS));
        cc.on_ack(*now, u64::from(SMSS), SMSS, Some(rtt));
    };
    cc.on_ack(now, u64::from(SMSS), SMSS, Some(rtt));
    while cc.cubic().unwrap().w_est < cc.cubic().unwrap().cwnd_prior + 5.0 {
        ack(&mut cc, &mut now);
        assert!(now < 3000 * MS, "W_est never passed cwnd_prior");
    }
    let c = cc.cubic().unwrap();
    // Still the Reno-friendly region.
    assert!(c.w_cubic(now as f64 * 1e-9) < c.w_est);
    let before = c.w_est;
    for _ in 0..cc.cwnd / u64::from(SMSS) {
        ack(&mut cc, &mut now);
    }
    cc.cubic().unwrap().w_est - before
}

#[test]
fn reno_friendly_alpha_switches_to_one_above_cwnd_prior_per_rfc_9438() {
    // §4.3: α_cubic = 3(1 − β)/(1 + β) ≈ 0.529 below cwnd_prior, 1 once W_est ≥ cwnd_prior.
    let gain = w_est_gain_above_cwnd_prior(CubicAlpha::Rfc9438);
    assert!((gain - 1.0).abs() < 0.02, "gain {gain}");
}

#[test]
fn constant_alpha_keeps_3_1_minus_beta_over_1_plus_beta() {
    // RFC 8312 §4.2 / Linux tcp_friendliness / ns-3 TcpCubic: α_cubic throughout.
    let alpha = 3.0 * (1.0 - 0.7) / (1.0 + 0.7);
    let gain = w_est_gain_above_cwnd_prior(CubicAlpha::Constant);
    assert!((gain - alpha).abs() < 0.02, "gain {gain}, α {alpha}");
}

/// Linux's tcp_cubic.c (`CubicAlpha::Linux`) after a loss at 12 packets on a 4-ms path:
/// ACKs of two packets every millisecond. The arithmetic below is the kernel's, written
/// out here. `bictcp_recalc_ssthresh`: ssthresh = max(⌊12·717/1024⌋, 2) = 8 packets,
/// last_max_cwnd = 12. First ACK: the epoch starts (tcp_cwnd = 8), K = ⌊∛(2^40/410·(12 −
/// 8))⌋ in 1/1024 s, bic_target = 12 − ⌊410·K³/2^40⌋, cnt = 8/(bic_target − 8): cwnd is
/// 9 once cnt packets are acknowledged. The next ACK recomputes (cwnd changed): the
/// target is now at or below 9, cnt = 100·cwnd. From then on `bictcp_update` returns at
/// once while cwnd is unchanged and at most HZ/32 = 7 jiffies of 4 ms (HZ = 250) have
/// passed: cwnd holds 9 whatever W_est does. The first computation after that turns the
/// packets counted since the epoch into tcp_cwnd (one per ⌊9·15/8⌋ = 16, strictly
/// more each time), cnt = max(9/(tcp_cwnd − 9), 2), and `tcp_cong_avoid_ai` adds one
/// packet for the credit held at the old cnt plus ⌊2/cnt⌋ for this ACK.
#[test]
fn linux_cubic_holds_cwnd_for_hz_over_32_then_catches_up_with_w_est() {
    let seg = u64::from(SMSS);
    let mut cc = Congestion::new(CongestionControl::Cubic, SMSS, 10);
    cc.set_cubic_alpha(CubicAlpha::Linux);
    cc.cwnd = 12 * seg;
    cc.on_congestion_event(cc.cwnd, SMSS);
    assert_eq!(cc.ssthresh, (12 * 717 / 1024) * seg);
    assert_eq!(cc.cwnd, 8 * seg);
    let k = ((1u64 << 40) as f64 / 410.0 * 4.0).cbrt() as u128;
    let target = 12 - ((410 * k.pow(3)) >> 40) as u64;
    assert!(target > 8);
    let first_cnt = 8 / (target - 8);
    let jiffy = 4 * MS;
    let t0 = 25 * jiffy; // the epoch starts on a jiffy boundary
    let ack = |cc: &mut Congestion, i: u64| cc.on_ack(t0 + i * MS, 2 * seg, SMSS, Some(4 * MS));
    // cwnd reaches 9 with the ACK that brings the packets counted to first_cnt.
    let step = first_cnt.div_ceil(2) - 1;
    for i in 0..step {
        ack(&mut cc, i);
        assert_eq!(cc.cwnd, 8 * seg, "ACK {i}");
    }
    ack(&mut cc, step);
    assert_eq!(cc.cwnd, 9 * seg);
    // The recomputation at the next ACK, then the hold.
    let recomputed = (t0 + (step + 1) * MS) / jiffy;
    let mut i = step + 1;
    while (t0 + i * MS) / jiffy - recomputed <= 7 {
        ack(&mut cc, i);
        assert_eq!(cc.cwnd, 9 * seg, "held at ACK {i}");
        i += 1;
    }
    assert_eq!(i - (step + 1), 32, "the hold lasts 8 jiffies of 4 ms");
    ack(&mut cc, i);
    let (mut ack_cnt, mut tcp_cwnd) = (2 * (i + 1), 8);
    while ack_cnt > 9 * 15 / 8 {
        ack_cnt -= 9 * 15 / 8;
        tcp_cwnd += 1;
    }
    let linux = &cc.cubic().unwrap().linux;
    assert_eq!(linux.tcp_cwnd, tcp_cwnd);
    let cnt = (9 / (tcp_cwnd - 9)).max(2);
    assert_eq!(linux.cnt, cnt);
    assert_eq!(cc.cwnd, (9 + 1 + 2 / cnt) * seg);
}

#[test]
fn linux_cubic_fast_convergence_and_ssthresh_in_whole_packets() {
    // bictcp_recalc_ssthresh: a loss at 10 packets below last_max_cwnd = 12 sets
    // last_max_cwnd = 10·(1024 + 717)/2048 = 8 (8.5 truncated), ssthresh = ⌊10·717/1024⌋ = 7.
    let mut cc = Congestion::new(CongestionControl::Cubic, SMSS, 10);
    cc.set_cubic_alpha(CubicAlpha::Linux);
    cc.cwnd = 12 * u64::from(SMSS);
    cc.on_congestion_event(cc.cwnd, SMSS);
    assert_eq!(cc.cubic().unwrap().linux.last_max_cwnd, 12);
    cc.cwnd = 10 * u64::from(SMSS);
    cc.on_congestion_event(cc.cwnd, SMSS);
    assert_eq!(cc.cubic().unwrap().linux.last_max_cwnd, 10 * 1741 / 2048);
    assert_eq!(cc.ssthresh, 7 * u64::from(SMSS));
    // At 2 packets the floor of 2 holds: max(⌊2·717/1024⌋ = 1, 2).
    cc.cwnd = 2 * u64::from(SMSS);
    cc.on_congestion_event(cc.cwnd, SMSS);
    assert_eq!(cc.ssthresh, 2 * u64::from(SMSS));
}

#[test]
fn rfc9438_cwnd_follows_w_est_on_every_ack_where_linux_holds() {
    // The same ACKs under RFC 9438 §4.3 (cwnd = W_est at each ACK, here with the
    // constant α): cwnd has grown long before the 32 ms Linux holds it.
    let mut cc = Congestion::new(CongestionControl::Cubic, SMSS, 10);
    cc.set_cubic_alpha(CubicAlpha::Constant);
    cc.cwnd = 12 * u64::from(SMSS);
    cc.on_congestion_event(cc.cwnd, SMSS);
    let start = cc.cwnd;
    for i in 0..20 {
        cc.on_ack(100 * MS + i * MS, 2 * u64::from(SMSS), SMSS, Some(4 * MS));
    }
    // W_est gains α·40/cwnd ≈ 0.529·40/8.4 ≈ 2.5 segments over those 20 ACKs.
    assert!(cc.cwnd >= start + 2 * u64::from(SMSS), "cwnd {}", cc.cwnd);
}
