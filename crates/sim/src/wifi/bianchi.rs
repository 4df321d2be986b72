//! Bianchi's saturation throughput model of the 802.11 DCF, an analytical
//! reference for the simulated DCF in benchmarks and reports.
//!
//! G. Bianchi, "Performance Analysis of the IEEE 802.11 Distributed Coordination
//! Function", IEEE JSAC 18(3):535–547, March 2000. With n always-backlogged
//! stations, W = CWmin + 1 and m backoff stages (CWmax + 1 = 2^m W), each station
//! transmits in a slot with probability τ and a transmission collides with
//! probability p, where (eq. 7 and 9)
//!
//! ```text
//! τ = 2(1 − 2p) / ((1 − 2p)(W + 1) + pW(1 − (2p)^m)),    p = 1 − (1 − τ)^(n−1)
//! ```
//!
//! and the saturation throughput is (eq. 13)
//!
//! ```text
//! S = P_s P_tr E[P] / ((1 − P_tr) σ + P_tr P_s T_s + P_tr (1 − P_s) T_c)
//! P_tr = 1 − (1 − τ)^n,   P_s = n τ (1 − τ)^(n−1) / P_tr.
//! ```
//!
//! The model assumes unlimited retries and ideal channel; the fixed point is
//! solved here by bisection on p, using τ's form without the removable
//! singularity at p = ½: τ = 2 / (1 + W + pW Σ_{k<m} (2p)^k).

use super::phy::{PhyParams, Rate};
use super::Nanos;

/// Inputs of Bianchi's model.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BianchiInputs {
    /// Number of saturated stations n ≥ 1.
    pub stations: u32,
    /// aCWmin (W = cw_min + 1).
    pub cw_min: u32,
    /// m, the number of doublings from CWmin + 1 to CWmax + 1.
    pub max_backoff_stage: u32,
    /// σ, the slot time.
    pub slot: Nanos,
    /// T_s, the time the medium is busy for a successful transmission, including
    /// the DIFS that follows it.
    pub success_time: Nanos,
    /// T_c, the time the medium is busy for a collision, including the wait
    /// that follows it.
    pub collision_time: Nanos,
    /// E\[P\], the payload bits of a frame (what counts as throughput).
    pub payload_bits: u64,
}

/// The solved model.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BianchiSolution {
    /// τ, the probability that a station transmits in a slot.
    pub tau: f64,
    /// p, the probability that a transmission collides.
    pub collision_probability: f64,
    /// S, the saturation throughput of all stations together, in bit/s.
    pub throughput_bps: f64,
}

impl BianchiInputs {
    /// Basic access (no RTS/CTS) of `stations` stations sending `msdu_len`-byte
    /// payloads in `mpdu_len`-byte MPDUs at `data_rate` on `phy`:
    /// T_s = data + SIFS + Ack + DIFS, T_c = data + EIFS (Bianchi took DIFS; in
    /// 802.11 the stations that hear the collision defer EIFS, §10.3.2.3.7).
    pub fn basic_access(phy: &PhyParams, stations: u32, msdu_len: usize, mpdu_len: usize, data_rate: Rate) -> Self {
        let data = phy.ppdu_time(mpdu_len, data_rate);
        BianchiInputs {
            stations,
            cw_min: phy.cw_min,
            max_backoff_stage: ((phy.cw_max + 1) / (phy.cw_min + 1)).trailing_zeros(),
            slot: phy.slot,
            success_time: data + phy.sifs + phy.ack_time(data_rate) + phy.difs(),
            collision_time: data + phy.eifs(),
            payload_bits: 8 * msdu_len as u64,
        }
    }

    /// τ as a function of p (Bianchi eq. 7).
    pub fn tau_given_p(&self, p: f64) -> f64 {
        let w = (self.cw_min + 1) as f64;
        let stages: f64 = (0..self.max_backoff_stage).map(|k| (2.0 * p).powi(k as i32)).sum();
        2.0 / (1.0 + w + p * w * stages)
    }

    /// Solves the fixed point and the throughput.
    ///
    /// # Panics
    /// If `stations` is 0.
    pub fn solve(&self) -> BianchiSolution {
        assert!(self.stations >= 1, "Bianchi's model needs at least one station");
        let n = self.stations as i32;
        let excess = |p: f64| p - (1.0 - (1.0 - self.tau_given_p(p)).powi(n - 1));
        // excess(0) ≤ 0 < excess(1) and excess increases with p: bisect.
        let (mut lo, mut hi) = (0.0_f64, 1.0_f64);
        for _ in 0..200 {
            let mid = 0.5 * (lo + hi);
            if excess(mid) > 0.0 {
                hi = mid;
            } else {
                lo = mid;
            }
        }
        let p = 0.5 * (lo + hi);
        let tau = self.tau_given_p(p);
        let p_tr = 1.0 - (1.0 - tau).powi(n);
        let p_s = n as f64 * tau * (1.0 - tau).powi(n - 1) / p_tr;
        let mean_slot_ns = (1.0 - p_tr) * self.slot as f64
            + p_tr * p_s * self.success_time as f64
            + p_tr * (1.0 - p_s) * self.collision_time as f64;
        let throughput_bps = p_s * p_tr * self.payload_bits as f64 / mean_slot_ns * 1e9;
        BianchiSolution { tau, collision_probability: p, throughput_bps }
    }
}

#[cfg(test)]
mod test {
    use super::*;
    use crate::wifi::phy::{data_mpdu_len, Preamble, Security};

    #[test]
    fn one_station_is_the_per_frame_formula_with_mean_backoff() {
        // 802.11b, 11 Mb/s, long preamble, 1500-byte MSDU, written out by hand:
        // DIFS 50 + 31/2 × 20 + (192 + ⌈8 × 1536 / 11⌉) + SIFS 10 + Ack (192 + 56).
        let per_frame_us = 50.0 + 15.5 * 20.0 + (192.0 + 1118.0) + 10.0 + 248.0;
        let expected = 1500.0 * 8.0 / per_frame_us * 1e6;
        let phy = PhyParams::dot11b(Preamble::Long);
        let inputs =
            BianchiInputs::basic_access(&phy, 1, 1500, data_mpdu_len(1500, Security::None, false), Rate::Cck11);
        assert_eq!(inputs.max_backoff_stage, 5);
        let s = inputs.solve();
        assert!(s.collision_probability < 1e-12);
        assert!((s.throughput_bps - expected).abs() / expected < 1e-9, "{} vs {expected}", s.throughput_bps);
    }

    #[test]
    fn fixed_point_agrees_with_damped_iteration_on_the_original_form() {
        let phy = PhyParams::dot11b(Preamble::Long);
        for n in [2, 5, 10, 20, 50] {
            let inputs = BianchiInputs::basic_access(&phy, n, 1500, 1536, Rate::Cck11);
            let s = inputs.solve();
            // Iterate τ ← f(p(τ)) with eq. 7 as printed (away from p = ½).
            let (w, m) = (32.0_f64, 5);
            let mut tau = 0.05_f64;
            for _ in 0..10_000 {
                let p = 1.0 - (1.0 - tau).powi(n as i32 - 1);
                let next = 2.0 * (1.0 - 2.0 * p) / ((1.0 - 2.0 * p) * (w + 1.0) + p * w * (1.0 - (2.0 * p).powi(m)));
                tau = 0.5 * tau + 0.5 * next;
            }
            let p = 1.0 - (1.0 - tau).powi(n as i32 - 1);
            assert!((s.tau - tau).abs() < 1e-9, "n={n}: τ {} vs {tau}", s.tau);
            assert!((s.collision_probability - p).abs() < 1e-9, "n={n}: p");
        }
    }

    #[test]
    fn more_stations_collide_more() {
        let phy = PhyParams::dot11b(Preamble::Long);
        let p: Vec<f64> = [1, 2, 5, 10, 50]
            .iter()
            .map(|&n| BianchiInputs::basic_access(&phy, n, 1500, 1536, Rate::Cck11).solve().collision_probability)
            .collect();
        assert!(p.windows(2).all(|w| w[0] < w[1]), "{p:?}");
    }
}
