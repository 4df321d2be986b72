//! Loss models, token buckets and serial lines against numbers computed here, from the
//! formulas and the bytes, never from the models' own output.

use sim::link::impair::{Bernoulli, GilbertElliott, LossModel, Policer, Shaper};
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
    let passed: u64 = (0..=t_ms).filter(|&ms| pol.conform(SimTime::from_millis(ms), len)).count() as u64 * len as u64;
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

// ---------------------------------------------------------------------------------------
// Serial lines
// ---------------------------------------------------------------------------------------

use sim::link::serial::{
    line_time_ns, CompressionRatio, Duplex, Framing, RejectReason, SerialConfig, SerialError, SerialFormat, SerialLine,
};
use wire::hdlc;

/// Ones' complement sum of 16-bit words (RFC 1071), folded and inverted.
fn inet_checksum(chunks: &[&[u8]]) -> u16 {
    let mut sum = 0u32;
    for chunk in chunks {
        for pair in chunk.chunks(2) {
            let word = u32::from(pair[0]) << 8 | u32::from(*pair.get(1).unwrap_or(&0));
            sum += word;
        }
    }
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// A 40-byte TCP ACK (20-byte IPv4 + 20-byte TCP header, no options, no data) from
/// 192.168.1.2:1025 to 10.0.0.1:5001 (ttcp), with correct IP and TCP checksums. The
/// source address starts with 0xC0, SLIP's END, so SLIP must escape it.
fn tcp_ack(ip_id: u16, seq: u32, ack: u32) -> Vec<u8> {
    let src = [192, 168, 1, 2];
    let dst = [10, 0, 0, 1];
    let mut ip = vec![0x45, 0x00, 0x00, 40];
    ip.extend_from_slice(&ip_id.to_be_bytes());
    ip.extend_from_slice(&[0x40, 0x00, 64, 6, 0, 0]); // DF, TTL 64, TCP, checksum 0
    ip.extend_from_slice(&src);
    ip.extend_from_slice(&dst);
    let ck = inet_checksum(&[&ip]);
    ip[10..12].copy_from_slice(&ck.to_be_bytes());
    let mut tcp = vec![0x04, 0x01, 0x13, 0x89];
    tcp.extend_from_slice(&seq.to_be_bytes());
    tcp.extend_from_slice(&ack.to_be_bytes());
    tcp.extend_from_slice(&[0x50, 0x10, 0x40, 0x00, 0, 0, 0, 0]); // offset 5, ACK, window 16384
    let pseudo = [&src[..], &dst[..], &[0, 6, 0, 20]].concat();
    let ck = inet_checksum(&[&pseudo, &tcp]);
    tcp[16..18].copy_from_slice(&ck.to_be_bytes());
    [ip, tcp].concat()
}

/// `ceil(chars × bits_per_char × 10⁹ / rate)` for a whole number of bits per character.
fn expected_ns(chars: usize, bits_per_char: u64, rate: u64) -> u64 {
    (chars as u64 * bits_per_char * 1_000_000_000).div_ceil(rate)
}

fn slip_escapes(bytes: &[u8]) -> usize {
    bytes.iter().filter(|&&b| b == 0xC0 || b == 0xDB).count()
}

fn line(config: SerialConfig) -> SerialLine {
    SerialLine::new(config).unwrap()
}

fn send_one(line: &mut SerialLine, frame: Vec<u8>) -> u64 {
    line.enqueue(0, frame.clone()).unwrap();
    let (out, ns) = line.start_next(0).unwrap();
    line.finish(0);
    assert_eq!(line.arrive(0, out), Ok(frame), "the far end gets the datagram that was sent");
    ns
}

/// What crosses the line for one datagram, and what comes out at the far end.
fn cross(line: &mut SerialLine, frame: Vec<u8>) -> (Vec<u8>, Result<Vec<u8>, &'static str>) {
    line.enqueue(0, frame).unwrap();
    let (packet, _) = line.start_next(0).unwrap();
    line.finish(0);
    (packet.clone(), line.arrive(0, packet))
}

/// RFC 1144 §4.2 over a lossy line: after a lost frame the receiver tosses compressed
/// packets (their deltas would apply to the wrong header); the TCP sender times out and
/// retransmits, the receiver's duplicate ACK changes nothing, so the compressor sends it
/// UNCOMPRESSED_TCP (A.2, "case 0"), which re-synchronises the decompressor.
#[test]
fn cslip_recovers_after_a_lost_frame() {
    let mut l = line(SerialConfig { framing: Framing::cslip_default(), ..SerialConfig::new(9600) });
    let (p, got) = cross(&mut l, tcp_ack(1, 1, 1000));
    assert_eq!(p[0] & 0xf0, 0x70, "the first ACK goes UNCOMPRESSED_TCP (RFC 1144 Appendix B: 0x70)");
    assert_eq!(got.unwrap(), tcp_ack(1, 1, 1000));
    let (p, got) = cross(&mut l, tcp_ack(2, 1, 3920));
    assert!(p.len() <= 6 && p[0] & 0x80 != 0, "a COMPRESSED_TCP ACK of a few octets");
    assert_eq!(got.unwrap(), tcp_ack(2, 1, 3920));
    // The next ACK is lost on the line.
    l.enqueue(0, tcp_ack(3, 1, 6840)).unwrap();
    l.start_next(0).unwrap();
    l.finish(0);
    l.lost(0);
    // Later ACKs are compressed relative to the lost one: tossed, not mis-decoded.
    let (p, got) = cross(&mut l, tcp_ack(4, 1, 9760));
    assert!(p[0] & 0x80 != 0);
    assert!(got.is_err());
    assert_eq!(l.dirs[0].tossed, 1);
    // The sender retransmits; the receiver repeats its ACK: uncompressed, and it resyncs.
    let (p, got) = cross(&mut l, tcp_ack(5, 1, 9760));
    assert_eq!(p[0] & 0xf0, 0x70, "a duplicate ACK goes UNCOMPRESSED_TCP");
    assert_eq!(got.unwrap(), tcp_ack(5, 1, 9760));
    let (_, got) = cross(&mut l, tcp_ack(6, 1, 12680));
    assert_eq!(got.unwrap(), tcp_ack(6, 1, 12680), "compressed ACKs decode again");
}

/// Seed 004: a 40-byte ACK over SLIP, 8N1, 1200 b/s takes (42 + escapes) × 10 bits.
#[test]
fn slip_ack_at_1200_bps() {
    let ack = tcp_ack(1, 1000, 2000);
    assert_eq!(ack.len(), 40);
    let escapes = slip_escapes(&ack);
    assert!(escapes >= 1, "the 0xC0 of 192.168.1.2 is escaped");
    let want = expected_ns(40 + 2 + escapes, 10, 1200);
    let framing = Framing::default();
    assert_eq!(line_time_ns(&ack, &framing, SerialFormat::N81, 1200, CompressionRatio::NONE), want);
    let mut l = line(SerialConfig::new(1200));
    assert_eq!(send_one(&mut l, ack), want);
    // Without the leading END, one octet less.
    let no_lead = Framing::Slip(wire::slip::Framing::new(false));
    assert_eq!(
        line_time_ns(&tcp_ack(1, 1000, 2000), &no_lead, SerialFormat::N81, 1200, CompressionRatio::NONE),
        expected_ns(40 + 1 + escapes, 10, 1200)
    );
}

/// RFC 1144 over SLIP: the first ACK of a connection goes UNCOMPRESSED_TCP (40 bytes);
/// then each ACK is the change mask (A bit), the TCP checksum and the ack delta, 1 byte
/// for 1–255 and 3 (0, then 16 bits) otherwise, the IP ID's +1 being implicit (§3.2.2).
/// So 4 bytes when acking small segments, 6 for 1460-byte ones; the connection number
/// is left out since it does not change.
#[test]
fn cslip_steady_state_ack() {
    let mut l = line(SerialConfig { framing: Framing::cslip_default(), ..SerialConfig::new(1200) });
    let first = tcp_ack(100, 1, 5000);
    let mut octets = 40 + 2 + slip_escapes(&first);
    assert_eq!(send_one(&mut l, first), expected_ns(octets, 10, 1200));
    let mut ack_no = 5000u32;
    for (i, advance) in [200u32, 200, 1460, 2920, 100].into_iter().enumerate() {
        ack_no += advance;
        let ack = tcp_ack(101 + i as u16, 1, ack_no);
        let mut compressed = vec![0x80 | 0x04, ack[36], ack[37]]; // SLIP type bit | A; checksum
        if advance < 256 {
            compressed.push(advance as u8);
        } else {
            compressed.extend_from_slice(&[0, (advance >> 8) as u8, advance as u8]);
        }
        assert!((3..=6).contains(&compressed.len()));
        let on_line = compressed.len() + 2 + slip_escapes(&compressed);
        octets += on_line;
        assert_eq!(send_one(&mut l, ack), expected_ns(on_line, 10, 1200), "ACK advancing {advance}");
    }
    assert_eq!(l.dirs[0].line_octets_sent, octets as u64);
    assert_eq!(l.dirs[0].bytes_sent, 6 * 40);
}

/// RFC 1662 Appendix C.2 FCS-16, bit by bit (not the wire crate's table), sent least
/// significant octet first.
fn fcs16(data: &[u8]) -> [u8; 2] {
    let mut fcs = 0xffffu16;
    for &b in data {
        fcs ^= u16::from(b);
        for _ in 0..8 {
            fcs = if fcs & 1 != 0 { (fcs >> 1) ^ 0x8408 } else { fcs >> 1 };
        }
    }
    (!fcs).to_le_bytes()
}

/// PPP over 8N1: flag, FF 03, protocol 0x0021, the datagram, FCS-16, flag; with ACCM 0
/// only 0x7E and 0x7D are escaped, with the default ACCM every byte below 0x20 too.
#[test]
fn ppp_ack_over_8n1() {
    let ack = tcp_ack(7, 1000, 2000);
    let body = [&[0xff, 0x03, 0x00, 0x21][..], &ack].concat();
    let frame = [body.clone(), fcs16(&body).to_vec()].concat();
    let flag_escapes = frame.iter().filter(|&&b| b == 0x7e || b == 0x7d).count();
    let control_chars = frame.iter().filter(|&&b| b < 0x20).count();
    assert!(control_chars > 5, "0x03 and the zeros of the headers");
    let ppp_frame = [&[0x00, 0x21][..], &ack].concat();

    for (accm, escapes) in [(0u32, flag_escapes), (hdlc::DEFAULT_ACCM, flag_escapes + control_chars)] {
        let framing = Framing::Ppp { hdlc: hdlc::Config { accm, ..hdlc::Config::default() }, pfc: false };
        let want = expected_ns(2 + 4 + 40 + 2 + escapes, 10, 1200);
        assert_eq!(
            line_time_ns(&ppp_frame, &framing, SerialFormat::N81, 1200, CompressionRatio::NONE),
            want,
            "ACCM {accm:#x}"
        );
        let mut l = line(SerialConfig { framing, ..SerialConfig::new(1200) });
        assert_eq!(send_one(&mut l, ack.clone()), want, "line, ACCM {accm:#x}");
    }

    // ACFC and PFC: 7E 21 <ack> FCS 7E.
    let body = [&[0x21][..], &ack].concat();
    let frame = [body.clone(), fcs16(&body).to_vec()].concat();
    let escapes = frame.iter().filter(|&&b| b == 0x7e || b == 0x7d).count();
    let framing = Framing::Ppp { hdlc: hdlc::Config { accm: 0, acfc: true, ..hdlc::Config::default() }, pfc: true };
    let mut l = line(SerialConfig { framing, ..SerialConfig::new(1200) });
    assert_eq!(send_one(&mut l, ack), expected_ns(2 + 1 + 40 + 2 + escapes, 10, 1200));
}

/// 7E1 is 10 bits a character like 8N1 (7 data + parity), 8N2 is 11, 8O2 12.
#[test]
fn character_formats_count_their_bits() {
    let ack = tcp_ack(1, 1000, 2000);
    let chars = 42 + slip_escapes(&ack);
    let framing = Framing::default();
    for (format, bits) in [("7E1", 10u64), ("8N2", 11), ("8O2", 12), ("8N1", 10)] {
        let f: SerialFormat = format.parse().unwrap();
        assert_eq!(
            line_time_ns(&ack, &framing, f, 2400, CompressionRatio::NONE),
            expected_ns(chars, bits, 2400),
            "{format}"
        );
    }
    // A 7-bit line cannot carry SLIP's 8-bit bytes.
    let seven: SerialFormat = "7E1".parse().unwrap();
    let err = SerialLine::new(SerialConfig { format: seven, ..SerialConfig::new(2400) }).unwrap_err();
    assert_eq!(err, SerialError::NotEightBit(seven));
    assert!(err.to_string().contains("7 data bits"), "{err}");
    // 8N2 is accepted.
    let mut l = line(SerialConfig { format: "8n2".parse().unwrap(), ..SerialConfig::new(2400) });
    assert_eq!(send_one(&mut l, ack), expected_ns(chars, 11, 2400));
}

#[test]
fn compression_ratio_two_halves_the_line_time() {
    // 42 octets at 9600 b/s 8N1: 420 bits = 43.75 ms; at 2:1, 21.875 ms.
    let payload = [0x45u8; 40];
    let framing = Framing::default();
    let plain = line_time_ns(&payload, &framing, SerialFormat::N81, 9600, CompressionRatio::NONE);
    let halved = line_time_ns(&payload, &framing, SerialFormat::N81, 9600, CompressionRatio::V42BIS_TYPICAL);
    assert_eq!(plain, 43_750_000);
    assert_eq!(halved, 21_875_000);
    assert_eq!(CompressionRatio::new(2, 1).unwrap(), CompressionRatio::V42BIS_TYPICAL);
    // Seed 004's sweet spot: 33.6 kb/s with 2:1 sends a SLIP ACK as fast as 67.2 kb/s.
    let ack = tcp_ack(1, 1000, 2000);
    assert_eq!(
        line_time_ns(&ack, &framing, SerialFormat::N81, 33_600, CompressionRatio::V42BIS_TYPICAL),
        line_time_ns(&ack, &framing, SerialFormat::N81, 67_200, CompressionRatio::NONE)
    );
}

#[test]
fn rate_zero_and_other_bad_configurations_are_refused() {
    let err = SerialLine::new(SerialConfig::new(0)).unwrap_err();
    assert_eq!(err, SerialError::ZeroRate);
    assert!(err.to_string().contains("0 b/s"), "{err}");
    assert_eq!(SerialLine::new(SerialConfig::new(299)).unwrap_err(), SerialError::RateTooLow(299));
    assert!(SerialLine::new(SerialConfig::new(300)).is_ok());
    assert_eq!(
        SerialLine::new(SerialConfig { queue_frames: 0, ..SerialConfig::new(1200) }).unwrap_err(),
        SerialError::ZeroQueue
    );
    let bad_slots = Framing::Cslip { slip: Default::default(), slots: 0 };
    assert_eq!(
        SerialLine::new(SerialConfig { framing: bad_slots, ..SerialConfig::new(1200) }).unwrap_err(),
        SerialError::VjSlots(0)
    );
    assert!(CompressionRatio::new(1, 2).is_err());
}

#[test]
#[should_panic(expected = "0 b/s")]
fn line_time_at_rate_zero_panics() {
    line_time_ns(&[1, 2, 3], &Framing::default(), SerialFormat::N81, 0, CompressionRatio::NONE);
}

#[test]
fn queue_is_drop_tail_and_simplex_sends_one_way() {
    let mut l = line(SerialConfig { queue_frames: 2, duplex: Duplex::Simplex, ..SerialConfig::new(9600) });
    assert!(l.enqueue(0, vec![1; 10]).is_ok());
    assert!(l.enqueue(0, vec![2; 10]).is_ok());
    let rejected = l.enqueue(0, vec![3; 10]).unwrap_err();
    assert_eq!((rejected.reason, rejected.frame), (RejectReason::QueueFull, vec![3; 10]));
    assert_eq!(l.dirs[0].drops, 1);
    assert_eq!(l.enqueue(1, vec![4]).unwrap_err().reason, RejectReason::Simplex);
    assert_eq!(l.backlog(0), 2);
    let (first, ns) = l.start_next(0).unwrap();
    assert_eq!(first, vec![1; 10]);
    assert_eq!(ns, expected_ns(12, 10, 9600));
    assert!(l.start_next(0).is_none(), "one frame on the line at a time");
    assert_eq!(l.backlog(0), 2, "one queued, one on the line");
    // The queue has room again while the first is on the line.
    assert!(l.enqueue(0, vec![5; 10]).is_ok());
    l.finish(0);
    assert_eq!(l.start_next(0).unwrap().0, vec![2; 10]);
    assert_eq!((l.dirs[0].frames_sent, l.dirs[0].bytes_sent, l.dirs[0].line_octets_sent), (2, 20, 24));
    assert_eq!(l.dirs[0].busy_ns, 2 * expected_ns(12, 10, 9600));
    // Full duplex: both ends send at once, independently.
    let mut fd = line(SerialConfig::new(9600));
    fd.enqueue(0, vec![0; 5]).unwrap();
    fd.enqueue(1, vec![0; 5]).unwrap();
    assert!(fd.start_next(0).is_some() && fd.start_next(1).is_some());
}
