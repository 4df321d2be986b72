//! Congestion window rules: NewReno (RFC 5681 §3.1, RFC 6582) and CUBIC (RFC 9438).
//!
//! [`Congestion`] holds cwnd and ssthresh in octets and applies the algorithm's growth
//! on new ACKs and its reduction on a congestion event or a timeout. The recovery
//! mechanics (which segment to retransmit, NewReno's window inflation, RFC 6675's
//! pipe) live in the socket; this module only says how large the window is.

/// 4.4BSD's TCP_MAXWIN (tcp.h): the largest unscaled window, 65 535 octets.
const TCP_MAXWIN: u64 = 65_535;

use super::config::{CongestionControl, CubicAlpha, CwndGrowth};
use super::linux_cubic::LinuxCubic;

/// RFC 9438 §5.1: C = 0.4.
pub const CUBIC_C: f64 = 0.4;
/// RFC 9438 §4.6: β_cubic = 0.7.
pub const CUBIC_BETA: f64 = 0.7;

/// cwnd, ssthresh and the algorithm's private state.
#[derive(Debug, Clone, PartialEq)]
pub struct Congestion {
    /// Congestion window in octets.
    pub cwnd: u64,
    /// Slow-start threshold in octets; "arbitrarily high" at first (RFC 5681 §3.1).
    pub ssthresh: u64,
    /// Octets acknowledged in congestion avoidance not yet turned into growth.
    bytes_acked: u64,
    /// Per octet or per ACK ([`TcpConfig::cwnd_growth`](super::TcpConfig::cwnd_growth)).
    growth: CwndGrowth,
    /// Slow start's L in segments for [`CwndGrowth::Bytes`], none for no bound.
    ss_limit: Option<u32>,
    /// CUBIC's Reno-friendly α rule.
    alpha: CubicAlpha,
    algo: Algo,
}

#[derive(Debug, Clone, PartialEq)]
enum Algo {
    NewReno,
    Cubic(Cubic),
}

/// CUBIC's state (RFC 9438 §4), windows in segments of SMSS.
#[derive(Debug, Clone, PartialEq)]
pub struct Cubic {
    /// W_max: the window just before the last reduction (after fast convergence).
    pub w_max: f64,
    /// cwnd_prior: the window at the last congestion event (§4.3's α switch).
    pub cwnd_prior: f64,
    /// Start of the current congestion-avoidance epoch, ns; none until the first ACK
    /// in congestion avoidance after a reduction or slow start.
    pub epoch_start: Option<u64>,
    /// K of the current epoch, seconds (§4.2 Eq. 2).
    pub k: f64,
    /// The plateau W_cubic climbs to in this epoch (W_max, or cwnd when above it).
    pub origin: f64,
    /// W_est of the Reno-friendly region (§4.3), segments.
    pub w_est: f64,
    /// Fractional octets of growth not yet added to cwnd.
    frac: f64,
    /// tcp_cubic.c's own state, for [`CubicAlpha::Linux`].
    pub linux: LinuxCubic,
}

impl Cubic {
    /// Congestion avoidance on an ACK of `acked` octets (RFC 9438 §4.2-§4.5): the epoch
    /// started when needed, the Reno-friendly estimate W_est, and the growth towards
    /// W_cubic(t + RTT). Returns the octets cwnd grows by (whole octets; the fraction is
    /// kept for the next ACK).
    fn on_ack(&mut self, now: u64, cwnd: u64, smss: u64, acked: u64, srtt: Option<u64>, alpha: CubicAlpha) -> u64 {
        let s = smss as f64;
        let w = cwnd as f64 / s;
        let start = match self.epoch_start {
            Some(start) => start,
            None => {
                // Epoch start (RFC 9438 §4.2): K from the distance up to W_max,
                // or K = 0 when cwnd is already above it (Linux's
                // bictcp_update); W_est starts at cwnd (§4.3).
                if self.w_max <= w {
                    self.k = 0.0;
                    self.origin = w;
                } else {
                    self.k = ((self.w_max - w) / CUBIC_C).cbrt();
                    self.origin = self.w_max;
                }
                self.w_est = w;
                self.epoch_start = Some(now);
                now
            }
        };
        let t = now.saturating_sub(start) as f64 * 1e-9;
        let rtt = srtt.unwrap_or(0) as f64 * 1e-9;
        let segs_acked = acked as f64 / s;
        // §4.3: the Reno-friendly estimate; α = 1 once W_est reaches cwnd_prior.
        let alpha = if alpha == CubicAlpha::Rfc9438 && self.w_est >= self.cwnd_prior {
            1.0
        } else {
            3.0 * (1.0 - CUBIC_BETA) / (1.0 + CUBIC_BETA)
        };
        self.w_est += alpha * segs_acked / w;
        let new_w = if self.w_cubic(t) < self.w_est {
            // Reno-friendly region: cwnd = W_est.
            self.w_est
        } else {
            // §4.4/§4.5: target = W_cubic(t + RTT) within [cwnd, 1.5·cwnd],
            // cwnd grows by (target − cwnd)/cwnd per segment acked.
            let target = self.w_cubic(t + rtt).clamp(w, 1.5 * w);
            w + (target - w) / w * segs_acked
        };
        let grow = (new_w - w).max(0.0) * s + self.frac;
        let whole = grow.floor();
        self.frac = grow - whole;
        whole as u64
    }

    /// W_cubic(t) = C·(t − K)³ + W_max (RFC 9438 §4.2 Eq. 1), t in seconds since the
    /// epoch, in segments.
    pub fn w_cubic(&self, t: f64) -> f64 {
        CUBIC_C * (t - self.k).powi(3) + self.origin
    }
}

impl Congestion {
    /// The initial window of `iw` segments (RFC 6928 §2 bounds it further by
    /// 14600 octets for IW10 only through min(10·MSS, max(2·MSS, 14600)); the plain
    /// product is used, as Linux does).
    pub fn new(kind: CongestionControl, smss: u32, iw: u32) -> Congestion {
        let algo = match kind {
            CongestionControl::NewReno => Algo::NewReno,
            CongestionControl::Cubic => Algo::Cubic(Cubic {
                w_max: 0.0,
                cwnd_prior: 0.0,
                epoch_start: None,
                k: 0.0,
                origin: 0.0,
                w_est: 0.0,
                frac: 0.0,
                linux: LinuxCubic::default(),
            }),
        };
        Congestion {
            cwnd: u64::from(iw.max(1)) * u64::from(smss),
            ssthresh: u64::MAX,
            bytes_acked: 0,
            growth: CwndGrowth::Bytes,
            ss_limit: Some(2),
            alpha: CubicAlpha::Rfc9438,
            algo,
        }
    }

    /// Sets how ACKs grow the window: `growth`, and for byte counting slow start's L
    /// in segments (none: unbounded). [`Congestion::new`] starts with byte
    /// counting and RFC 3465's L = 2.
    pub fn set_growth(&mut self, growth: CwndGrowth, slow_start_limit: Option<u32>) {
        self.growth = growth;
        self.ss_limit = slow_start_limit;
    }

    /// Sets CUBIC's Reno-friendly α rule ([`CubicAlpha`]); [`Congestion::new`] starts
    /// with RFC 9438's.
    pub fn set_cubic_alpha(&mut self, alpha: CubicAlpha) {
        self.alpha = alpha;
    }

    /// How much slow start adds for an ACK of `acked` new octets: RFC 3465 §2.2
    /// min(N, L·SMSS) when counting bytes; RFC 5681 §3.1 Eq. 2 min(N, SMSS) per ACK.
    pub fn slow_start_increment(&self, acked: u64, smss: u32) -> u64 {
        match self.growth {
            CwndGrowth::Bytes => acked.min(self.ss_limit.map_or(u64::MAX, |l| u64::from(l) * u64::from(smss))),
            CwndGrowth::Acks => acked.min(u64::from(smss)),
            // Net/3: `incr = tp->t_maxseg`, whatever the ACK covers.
            CwndGrowth::Bsd44 => u64::from(smss),
        }
    }

    /// CUBIC's state, for traces and tests.
    pub fn cubic(&self) -> Option<&Cubic> {
        match &self.algo {
            Algo::Cubic(c) => Some(c),
            Algo::NewReno => None,
        }
    }

    /// True below ssthresh (RFC 5681 §3.1: slow start when cwnd < ssthresh).
    pub fn in_slow_start(&self) -> bool {
        self.cwnd < self.ssthresh
    }

    /// New data acknowledged outside loss recovery: `acked` octets at `now`, with the
    /// smoothed RTT `srtt` (ns) if known.
    pub fn on_ack(&mut self, now: u64, acked: u64, smss: u32, srtt: Option<u64>) {
        let smss = u64::from(smss);
        if self.growth == CwndGrowth::Bsd44 && matches!(self.algo, Algo::NewReno) {
            // Net/3 tcp_input: `if (cw > tp->snd_ssthresh) incr = incr * incr / cw +
            // incr / 8;` (slow start while cwnd ≤ ssthresh, one maxseg per ACK).
            // `tp->snd_cwnd = min(cw + incr, TCP_MAXWIN << tp->snd_scale)`: at most
            // 65 535 octets (scaling is not applied here; NetBSD 1.1's 16 KiB buffers
            // never ask for it). A window already above the cap stays.
            let incr = if self.cwnd > self.ssthresh { smss * smss / self.cwnd.max(1) + smss / 8 } else { smss };
            self.cwnd = (self.cwnd + incr).min(TCP_MAXWIN.max(self.cwnd));
            return;
        }
        if self.in_slow_start() {
            self.cwnd += self.slow_start_increment(acked, smss as u32);
            return;
        }
        // Per ACK, an ACK counts for at most one SMSS however much it covers (RFC 5681
        // §3.1: "increment cwnd by at most SMSS bytes for each ACK received").
        let acked = match self.growth {
            CwndGrowth::Bytes => acked,
            CwndGrowth::Acks | CwndGrowth::Bsd44 => acked.min(smss),
        };
        match &mut self.algo {
            Algo::NewReno if self.growth == CwndGrowth::Acks => {
                // RFC 5681 §3.1 Eq. 3, once per ACK: cwnd += SMSS·SMSS/cwnd, at least
                // one octet (4.4BSD tcp_input's `incr * incr / cw`; ns-3
                // TcpNewReno::CongestionAvoidance).
                self.cwnd += (smss * smss / self.cwnd.max(1)).max(1);
            }
            Algo::NewReno => {
                // RFC 5681 §3.1 / RFC 3465 §2.1: one SMSS per cwnd of octets acked.
                self.bytes_acked += acked;
                if self.bytes_acked >= self.cwnd {
                    self.bytes_acked -= self.cwnd;
                    self.cwnd += smss;
                }
            }
            Algo::Cubic(c) if self.alpha == CubicAlpha::Linux => {
                self.cwnd = c.linux.on_ack(now, self.cwnd, smss, acked)
            }
            Algo::Cubic(c) => self.cwnd += c.on_ack(now, self.cwnd, smss, acked, srtt, self.alpha),
        }
    }

    /// An RTT sample `rtt` (ns) taken at `now`: Linux CUBIC's `delay_min`
    /// ([`CubicAlpha::Linux`]); the other rules use the smoothed RTT given to `on_ack`.
    pub fn on_rtt_sample(&mut self, now: u64, rtt: u64) {
        if let (Algo::Cubic(c), CubicAlpha::Linux) = (&mut self.algo, self.alpha) {
            c.linux.on_rtt_sample(now, rtt);
        }
    }

    /// A congestion event detected by duplicate ACKs or SACK (fast retransmit):
    /// sets ssthresh and cwnd = ssthresh. `flight` is FlightSize in octets.
    pub fn on_congestion_event(&mut self, flight: u64, smss: u32) {
        let smss = u64::from(smss);
        self.bytes_acked = 0;
        match &mut self.algo {
            Algo::NewReno => {
                // RFC 5681 Eq. 4.
                self.ssthresh = (flight / 2).max(2 * smss);
            }
            Algo::Cubic(c) => {
                let w = self.cwnd as f64 / smss as f64;
                // §4.7 fast convergence.
                c.w_max = if w < c.w_max { w * (1.0 + CUBIC_BETA) / 2.0 } else { w };
                c.cwnd_prior = w;
                c.epoch_start = None;
                c.w_est = 0.0;
                c.frac = 0.0;
                // §4.6: ssthresh = cwnd·β_cubic (cwnd, as Linux and the RFC's text;
                // FlightSize is the RFC 5681 choice), at least 2 segments; Linux in
                // whole packets, β = 717/1024 (`bictcp_recalc_ssthresh`).
                self.ssthresh = if self.alpha == CubicAlpha::Linux {
                    c.linux.on_loss(self.cwnd, smss)
                } else {
                    ((self.cwnd as f64 * CUBIC_BETA) as u64).max(2 * smss)
                };
            }
        }
        self.cwnd = self.ssthresh;
    }

    /// The retransmission timer expired: ssthresh as for a congestion event, then
    /// cwnd = LW = 1 SMSS (RFC 5681 §3.1 Eq. 4 and the loss window; RFC 9438 §4.8).
    /// CUBIC's first congestion avoidance after a timeout starts from K = 0 with W_max
    /// the window it starts at (RFC 9438 §4.8; Linux's `bictcp_reset` on entering its
    /// Loss state sets `last_max_cwnd` = 0, as ns-3's `CubicReset`): W_max is cleared.
    pub fn on_rto(&mut self, flight: u64, smss: u32) {
        self.on_congestion_event(flight, smss);
        if let Algo::Cubic(c) = &mut self.algo {
            c.w_max = 0.0;
            // Linux: the Loss state's `bictcp_reset` clears all of `struct bictcp`.
            c.linux = LinuxCubic::default();
        }
        self.cwnd = u64::from(smss);
    }
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn newreno_slow_start_then_linear() {
        let mut cc = Congestion::new(CongestionControl::NewReno, 1000, 10);
        assert_eq!(cc.cwnd, 10_000);
        cc.on_ack(0, 1000, 1000, None);
        assert_eq!(cc.cwnd, 11_000);
        cc.on_ack(0, 5000, 1000, None); // at most 2·SMSS per ACK
        assert_eq!(cc.cwnd, 13_000);
        cc.on_congestion_event(20_000, 1000);
        assert_eq!((cc.ssthresh, cc.cwnd), (10_000, 10_000));
        for _ in 0..10 {
            cc.on_ack(0, 1000, 1000, None);
        }
        assert_eq!(cc.cwnd, 11_000);
        cc.on_rto(11_000, 1000);
        assert_eq!((cc.ssthresh, cc.cwnd), (5_500, 1000));
    }

    #[test]
    fn cubic_after_a_timeout_starts_with_k_zero_at_its_own_window() {
        // RFC 9438 §4.8: after a timeout, the first congestion avoidance stage uses
        // Eq. 1 with K = 0 and W_max = the window at its start.
        let mut cc = Congestion::new(CongestionControl::Cubic, 1000, 10);
        cc.cwnd = 100_000;
        cc.on_rto(100_000, 1000);
        assert_eq!((cc.ssthresh, cc.cwnd), (70_000, 1000));
        // Slow start up to ssthresh, then the first ACK in congestion avoidance.
        cc.cwnd = cc.ssthresh;
        cc.on_ack(5_000_000, 1000, 1000, Some(20_000_000));
        let c = cc.cubic().unwrap();
        assert_eq!(c.k, 0.0);
        assert_eq!(c.origin, 70.0);
        // A fast-retransmit reduction keeps W_max (§4.6): K > 0 towards it.
        let mut cc = Congestion::new(CongestionControl::Cubic, 1000, 10);
        cc.cwnd = 100_000;
        cc.on_congestion_event(100_000, 1000);
        cc.on_ack(5_000_000, 1000, 1000, Some(20_000_000));
        let c = cc.cubic().unwrap();
        assert!((c.k - (30.0f64 / 0.4).cbrt()).abs() < 1e-9);
        assert_eq!(c.origin, 100.0);
    }

    #[test]
    fn cubic_reduction_and_fast_convergence() {
        let mut cc = Congestion::new(CongestionControl::Cubic, 1000, 10);
        cc.cwnd = 100_000;
        cc.on_congestion_event(100_000, 1000);
        assert_eq!(cc.ssthresh, 70_000);
        assert_eq!(cc.cubic().unwrap().w_max, 100.0);
        // A second loss below W_max: W_max = 70·(1 + 0.7)/2 = 59.5.
        cc.on_congestion_event(70_000, 1000);
        assert!((cc.cubic().unwrap().w_max - 59.5).abs() < 1e-9);
        assert_eq!(cc.cwnd, 49_000);
    }
}
