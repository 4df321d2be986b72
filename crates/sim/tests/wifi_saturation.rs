//! Saturation checks of the 802.11 DCF entity with the PHY durations, driven by
//! a plain loop (no engine): always-backlogged stations sending 1500-byte MSDUs
//! at 11 Mb/s on 802.11b.
//!
//! The references are written here from the standard's formulas (IEEE
//! 802.11-2020 clauses 10.3 and 16), not taken from the code under test:
//!
//! * one station: per frame DIFS + CWmin/2 slots + PLCP + MPDU + SIFS + Ack;
//! * n stations: Bianchi (2000), whose fixed point the library solves and whose
//!   n = 1 case is checked against the per-frame formula in its unit tests.

use sim::wifi::bianchi::BianchiInputs;
use sim::wifi::dcf::{AfterFailure, Dcf, DcfParams, FailedAttempt};
use sim::wifi::phy::{PhyParams, Preamble, Rate};
use sim::wifi::Nanos;

const MSDU_LEN: usize = 1500;
/// 24-byte header + 8 LLC/SNAP + 1500 + 4 FCS.
const MPDU_LEN: usize = 1536;

/// SplitMix64: a tiny seeded generator, enough for uniform slot draws.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [0, cw] (the modulo bias is below 1e-16 for cw ≤ 1023).
    fn slots(&mut self, cw: u32) -> u32 {
        (self.next_u64() % (cw as u64 + 1)) as u32
    }
}

/// One always-backlogged station alone on the medium; returns the MSDU
/// throughput in Mb/s over `frames` frames.
fn one_station_throughput_mbps(phy: &PhyParams, frames: u64, seed: u64) -> f64 {
    let mut rng = SplitMix64(seed);
    let mut dcf = Dcf::new(DcfParams::from_phy(phy));
    let data = phy.ppdu_time(MPDU_LEN, Rate::Cck11);
    let ack = phy.ack_time(Rate::Cck11);
    let mut now: Nanos = 0;
    dcf.request_access(now, |cw| rng.slots(cw));
    for _ in 0..frames {
        let at = dcf.poll_at().expect("a request is pending");
        assert!(at >= now);
        assert!(dcf.poll(at));
        dcf.notify_tx_start(at, data);
        let ack_start = at + data + phy.sifs;
        dcf.notify_busy_start(ack_start, ack_start + ack);
        now = ack_start + ack;
        dcf.notify_rx_end(now, true);
        dcf.on_tx_success(now, MPDU_LEN, |cw| rng.slots(cw));
        dcf.request_access(now, |cw| rng.slots(cw));
    }
    (frames * MSDU_LEN as u64 * 8) as f64 / now as f64 * 1e3
}

/// Per-frame time of one station, from the formulas: DIFS (SIFS + 2 slots) +
/// CWmin/2 slots + PLCP + ⌈8 × MPDU / 11⌉ µs + SIFS + Ack at 2 Mb/s (the highest
/// basic rate ≤ 11 Mb/s with basic rates {1, 2}). Result in µs.
fn analytical_frame_time_us(plcp_us: f64) -> f64 {
    let (slot, sifs, cw_min) = (20.0, 10.0, 31.0);
    let difs = sifs + 2.0 * slot;
    let data = plcp_us + (8.0 * MPDU_LEN as f64 / 11.0).ceil();
    let ack = plcp_us + 8.0 * 14.0 / 2.0;
    difs + cw_min / 2.0 * slot + data + sifs + ack
}

#[test]
fn one_saturated_station_matches_the_per_frame_formula() {
    for (preamble, plcp_us) in [(Preamble::Long, 192.0), (Preamble::Short, 96.0)] {
        let phy = PhyParams::dot11b(preamble);
        let measured = one_station_throughput_mbps(&phy, 50_000, 2000);
        let analytical = MSDU_LEN as f64 * 8.0 / analytical_frame_time_us(plcp_us);
        let error = (measured - analytical).abs() / analytical;
        eprintln!(
            "802.11b 11 Mb/s {preamble:?} preamble: measured {measured:.4} Mb/s, analytical {analytical:.4} Mb/s"
        );
        assert!(error < 0.02, "{preamble:?}: {measured} vs {analytical} Mb/s");
    }
}

/// What a run of several saturated stations did.
#[derive(Debug, Default)]
struct ContentionStats {
    delivered: u64,
    collisions: u64,
    discarded: u64,
    elapsed: Nanos,
    per_station_delivered: Vec<u64>,
}

impl ContentionStats {
    fn throughput_mbps(&self) -> f64 {
        (self.delivered * MSDU_LEN as u64 * 8) as f64 / self.elapsed as f64 * 1e3
    }
}

/// `n` saturated stations sending to an access point that only acknowledges,
/// everyone hearing everyone. Events at one instant are delivered as a simple
/// engine would: a station whose backoff ends starts sending, and the medium
/// reports it busy to every station not sending — including one whose own
/// backoff ends at that same instant and whose timer has not fired yet; that
/// one must still send (same slot), and the two collide.
fn contend(phy: &PhyParams, n: usize, delivered_target: u64, seed: u64) -> ContentionStats {
    let mut rng = SplitMix64(seed);
    let mut stations: Vec<Dcf> = (0..n).map(|_| Dcf::new(DcfParams::from_phy(phy))).collect();
    let data = phy.ppdu_time(MPDU_LEN, Rate::Cck11);
    let ack = phy.ack_time(Rate::Cck11);
    let ack_timeout = phy.ack_timeout(Rate::Cck11);
    let mut stats = ContentionStats { per_station_delivered: vec![0; n], ..Default::default() };
    for s in &mut stations {
        s.request_access(0, |cw| rng.slots(cw));
    }
    let mut last_event: Nanos = 0;
    while stats.delivered < delivered_target {
        let t = stations.iter().filter_map(Dcf::poll_at).min().expect("every station is backlogged");
        assert!(t >= last_event, "time went backwards");
        let due: Vec<usize> = (0..n).filter(|&i| stations[i].poll_at() == Some(t)).collect();
        let mut sending = vec![false; n];
        for &i in &due {
            assert!(stations[i].poll(t), "station {i} granted at {t} must send");
            stations[i].notify_tx_start(t, data);
            sending[i] = true;
            for j in (0..n).filter(|&j| !sending[j]) {
                stations[j].notify_busy_start(t, t + data);
            }
        }
        let data_end = t + data;
        if let [winner] = due[..] {
            let ack_start = data_end + phy.sifs;
            let ack_end = ack_start + ack;
            for j in (0..n).filter(|&j| j != winner) {
                let s = &mut stations[j];
                s.notify_rx_end(data_end, true);
                s.notify_nav(data_end, ack_end); // Duration = SIFS + Ack
            }
            for s in &mut stations {
                s.notify_busy_start(ack_start, ack_end);
                s.notify_rx_end(ack_end, true);
            }
            stations[winner].on_tx_success(ack_end, MPDU_LEN, |cw| rng.slots(cw));
            stations[winner].request_access(ack_end, |cw| rng.slots(cw));
            stats.delivered += 1;
            stats.per_station_delivered[winner] += 1;
            last_event = ack_end;
        } else {
            stats.collisions += 1;
            for j in (0..n).filter(|&j| !sending[j]) {
                stations[j].notify_rx_end(data_end, false); // garbled: EIFS
            }
            let timeout = data_end + ack_timeout;
            for &i in &due {
                let failed = FailedAttempt::Mpdu { mpdu_len: MPDU_LEN };
                if stations[i].on_tx_failure(timeout, failed, |cw| rng.slots(cw)) == AfterFailure::Discard {
                    stats.discarded += 1;
                }
                stations[i].request_access(timeout, |cw| rng.slots(cw));
            }
            last_event = timeout;
        }
        stats.elapsed = last_event;
    }
    stats
}

#[test]
fn two_stations_collide_in_the_same_slot_and_recover() {
    let phy = PhyParams::dot11b(Preamble::Long);
    let stats = contend(&phy, 2, 20_000, 7);
    eprintln!("two stations: {stats:?}, {:.4} Mb/s", stats.throughput_mbps());
    // Collisions happen (same slot → both fail) ...
    assert!(stats.collisions > 0);
    // ... at about the rate Bianchi predicts for n = 2 (p ≈ 0.06): the share
    // of attempts that collide is 2C / (D + 2C).
    let attempts = stats.delivered + 2 * stats.collisions;
    let collided_share = 2.0 * stats.collisions as f64 / attempts as f64;
    let mut inputs = BianchiInputs::basic_access(&phy, 2, MSDU_LEN, MPDU_LEN, Rate::Cck11);
    // With two stations both are senders in a collision: they wait the Ack
    // timeout (SIFS + slot + 192 µs) then DIFS, not EIFS.
    inputs.collision_time = phy.ppdu_time(MPDU_LEN, Rate::Cck11) + (10 + 20 + 192 + 50) * 1_000;
    let model = inputs.solve();
    eprintln!(
        "two stations: collided share {collided_share:.4}, Bianchi p {:.4}; throughput {:.4} vs {:.4} Mb/s",
        model.collision_probability,
        stats.throughput_mbps(),
        model.throughput_bps / 1e6
    );
    assert!((collided_share - model.collision_probability).abs() < 0.01);
    // ... and are handled: both stations keep delivering, nothing is lost
    // for good at this load, and the pair carries about what the model says.
    assert!(stats.per_station_delivered.iter().all(|&d| d > 9_000), "{:?}", stats.per_station_delivered);
    assert_eq!(stats.discarded, 0);
    let error = (stats.throughput_mbps() - model.throughput_bps / 1e6).abs() / (model.throughput_bps / 1e6);
    assert!(error < 0.02, "two stations: {error}");
}

#[test]
fn several_stations_follow_bianchi() {
    let phy = PhyParams::dot11b(Preamble::Long);
    for n in [5, 10] {
        let stats = contend(&phy, n, 20_000, 11 + n as u64);
        let model = BianchiInputs::basic_access(&phy, n as u32, MSDU_LEN, MPDU_LEN, Rate::Cck11).solve();
        let measured = stats.throughput_mbps();
        let predicted = model.throughput_bps / 1e6;
        eprintln!(
            "n={n}: measured {measured:.4} Mb/s, Bianchi {predicted:.4} Mb/s (p {:.4}), collisions {}, discarded {}",
            model.collision_probability, stats.collisions, stats.discarded
        );
        assert!((measured - predicted).abs() / predicted < 0.03, "n={n}: {measured} vs {predicted}");
    }
}
