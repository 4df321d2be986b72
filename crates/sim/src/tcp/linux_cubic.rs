//! CUBIC's congestion avoidance as Linux's `net/ipv4/tcp_cubic.c` computes it
//! (`bictcp_update`, its `tcp_friendliness` block and `tcp_cong_avoid_ai`), for
//! [`CubicAlpha::Linux`](super::CubicAlpha::Linux): whole packets, the clock in jiffies,
//! and the rule that recomputes the growth rate `cnt` only when cwnd changed or
//! `HZ/32` jiffies passed (`if (ca->last_cwnd == cwnd && (s32)(tcp_jiffies32 -
//! ca->last_time) <= HZ / 32) return;`). On a path of a few milliseconds' RTT that rule
//! holds cwnd for several RTTs after each reduction and after each step while the
//! Reno-friendly estimate (`tcp_cwnd`, RFC 9438's W_est) climbs unseen, then lets cwnd
//! catch up at most one packet per two acknowledged (`cnt >= 2`): Linux's window trails
//! RFC 9438 §4.3's `cwnd = W_est` there.

/// CONFIG_HZ of the kernel whose TCP the emulation backend runs (6.18 here,
/// /proc/config.gz `CONFIG_HZ=250`, Debian's default): one jiffy is 4 ms.
pub const LINUX_HZ: u64 = 250;
const JIFFY_NS: u64 = 1_000_000_000 / LINUX_HZ;
/// tcp_cubic.c `BICTCP_BETA_SCALE` (1024) and the module parameter `beta` = 717 (β ≈ 0.7).
const BETA_SCALE: u64 = 1024;
const BETA: u64 = 717;
/// tcp_cubic.c `beta_scale = 8*(BICTCP_BETA_SCALE+beta) / 3 / (BICTCP_BETA_SCALE - beta)`
/// (integer: 15): `tcp_cwnd` gains one packet per `cwnd·15/8` acknowledged, α = 8/15 ≈
/// 3(1 − β)/(1 + β).
const FRIENDLY_SCALE: u64 = 8 * (BETA_SCALE + BETA) / 3 / (BETA_SCALE - BETA);
/// tcp_cubic.c `BICTCP_HZ` = 10: CUBIC's time in 1/1024 s.
const BICTCP_HZ: u32 = 10;
/// tcp_cubic.c `bic_scale` = 41: `cube_rtt_scale = bic_scale * 10` = 410, C = 410/1024.
const CUBE_RTT_SCALE: u128 = 410;
/// tcp_cubic.c `cube_factor = 1ull << (10+3*BICTCP_HZ)` / (bic_scale * 10).
const CUBE_FACTOR: u64 = (1u64 << (10 + 3 * BICTCP_HZ)) / 410;

/// The `struct bictcp` fields congestion avoidance uses, and `tp->snd_cwnd_cnt`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LinuxCubic {
    /// `cnt`: packets acknowledged per packet of growth.
    pub cnt: u64,
    /// `last_max_cwnd` (W_max), packets; 0 after a timeout.
    pub last_max_cwnd: u64,
    last_cwnd: u64,
    last_time: u64,
    origin: u64,
    /// `bic_K` in 1/1024 s.
    k: u64,
    /// `delay_min`, ns (Linux: µs); 0 before the first sample.
    delay_min: u64,
    /// `epoch_start` in jiffies (Linux's 0 = none).
    epoch_start: Option<u64>,
    ack_cnt: u64,
    /// `tcp_cwnd`: the Reno-friendly estimate, packets.
    pub tcp_cwnd: u64,
    /// `tp->snd_cwnd_cnt` of `tcp_cong_avoid_ai`.
    cwnd_cnt: u64,
    /// Octets acknowledged short of a whole packet, carried to the next ACK.
    rest: u64,
}

impl LinuxCubic {
    /// `cubictcp_cong_avoid` in congestion avoidance: an ACK of `acked` octets at `now`
    /// with cwnd `cwnd` octets; returns the new cwnd in octets.
    pub fn on_ack(&mut self, now: u64, cwnd: u64, smss: u64, acked: u64) -> u64 {
        let packets = (self.rest + acked) / smss;
        self.rest = (self.rest + acked) % smss;
        if packets == 0 {
            return cwnd;
        }
        let w = (cwnd / smss).max(1);
        self.update(now / JIFFY_NS, w, packets);
        let w = self.cong_avoid_ai(w, packets);
        if w * smss > cwnd {
            w * smss
        } else {
            cwnd
        }
    }

    /// `bictcp_update(ca, cwnd, acked)`.
    fn update(&mut self, jiffies: u64, cwnd: u64, acked: u64) {
        self.ack_cnt += acked;
        if self.last_cwnd == cwnd && jiffies.saturating_sub(self.last_time) <= LINUX_HZ / 32 {
            return;
        }
        // "The CUBIC function can update ca->cnt at most once per jiffy."
        if !(self.epoch_start.is_some() && jiffies == self.last_time) {
            self.last_cwnd = cwnd;
            self.last_time = jiffies;
            self.cubic_cnt(jiffies, cwnd, acked);
        }
        // tcp_friendliness.
        let delta = (cwnd * FRIENDLY_SCALE) >> 3;
        while self.ack_cnt > delta {
            self.ack_cnt -= delta;
            self.tcp_cwnd += 1;
        }
        if self.tcp_cwnd > cwnd {
            let max_cnt = cwnd / (self.tcp_cwnd - cwnd);
            self.cnt = self.cnt.min(max_cnt);
        }
        // "The maximum rate of cwnd increase CUBIC allows is 1 packet per 2 packets ACKed".
        self.cnt = self.cnt.max(2);
    }

    /// The cubic function's part of `bictcp_update`: the epoch, K and `cnt` toward
    /// `bic_target` at t + `delay_min`.
    fn cubic_cnt(&mut self, jiffies: u64, cwnd: u64, acked: u64) {
        let start = *self.epoch_start.get_or_insert_with(|| {
            self.ack_cnt = acked;
            self.tcp_cwnd = cwnd;
            if self.last_max_cwnd <= cwnd {
                self.k = 0;
                self.origin = cwnd;
            } else {
                self.k = ((CUBE_FACTOR as f64) * (self.last_max_cwnd - cwnd) as f64).cbrt() as u64;
                self.origin = self.last_max_cwnd;
            }
            jiffies
        });
        // t = jiffies since the epoch + usecs_to_jiffies(delay_min) (rounded up), in 1/1024 s.
        let t = ((jiffies - start + self.delay_min.div_ceil(JIFFY_NS)) << BICTCP_HZ) / LINUX_HZ;
        let offs = u128::from(t.abs_diff(self.k));
        let delta = ((CUBE_RTT_SCALE * offs * offs * offs) >> (10 + 3 * BICTCP_HZ)) as u64;
        let target = if t < self.k { self.origin.saturating_sub(delta) } else { self.origin + delta };
        self.cnt = if target > cwnd { cwnd / (target - cwnd) } else { 100 * cwnd };
        // "The initial growth of cubic function may be too conservative when the
        // available bandwidth is still unknown": 5 % per RTT at least.
        if self.last_max_cwnd == 0 && self.cnt > 20 {
            self.cnt = 20;
        }
    }

    /// `tcp_cong_avoid_ai(tp, ca->cnt, acked)`: cwnd in packets after `acked` more.
    fn cong_avoid_ai(&mut self, mut cwnd: u64, acked: u64) -> u64 {
        let w = self.cnt.max(1);
        if self.cwnd_cnt >= w {
            self.cwnd_cnt = 0;
            cwnd += 1;
        }
        self.cwnd_cnt += acked;
        if self.cwnd_cnt >= w {
            let delta = self.cwnd_cnt / w;
            self.cwnd_cnt -= delta * w;
            cwnd += delta;
        }
        cwnd
    }

    /// `bictcp_recalc_ssthresh` at a congestion event with cwnd `cwnd` octets (and
    /// `tcp_init_cwnd_reduction`'s `snd_cwnd_cnt = 0`): returns ssthresh in octets,
    /// `max(cwnd·717/1024, 2)` packets.
    pub fn on_loss(&mut self, cwnd: u64, smss: u64) -> u64 {
        let w = cwnd / smss;
        self.epoch_start = None;
        self.last_max_cwnd = if w < self.last_max_cwnd { w * (BETA_SCALE + BETA) / (2 * BETA_SCALE) } else { w };
        self.cwnd_cnt = 0;
        self.rest = 0;
        (w * BETA / BETA_SCALE).max(2) * smss
    }

    /// `bictcp_acked`: `delay_min` from an RTT sample at `now`, except in the first
    /// second of an epoch ("Discard delay samples right after fast recovery").
    pub fn on_rtt_sample(&mut self, now: u64, rtt: u64) {
        if self.epoch_start.is_some_and(|start| now / JIFFY_NS - start < LINUX_HZ) {
            return;
        }
        let rtt = rtt.max(1000);
        if self.delay_min == 0 || self.delay_min > rtt {
            self.delay_min = rtt;
        }
    }
}
