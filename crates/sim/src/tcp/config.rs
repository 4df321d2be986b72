//! The typed configuration of one TCP endpoint. Every field has its default beside it,
//! and where the default comes from (an RFC or Linux's value).

use crate::time::Duration;

pub use super::hystart::HyStartMode;

/// Which congestion control rules grow and cut the window, what an ACK grows it by, and
/// CUBIC's Reno-friendly estimate: the plan's enums (`qoslab_plan::flow`), one vocabulary
/// from the scenario to the socket.
pub use qoslab_plan::flow::{CongestionControl, CubicAlpha, CwndGrowth};

/// One endpoint's TCP settings.
#[derive(Debug, Clone, PartialEq)]
pub struct TcpConfig {
    /// MSS this endpoint advertises and the largest segment it sends, in data octets,
    /// before options. Default 1460: an Ethernet MTU of 1500 minus 20 IP and 20 TCP
    /// octets (RFC 9293 §3.7.1, RFC 6691); use [`TcpConfig::for_mtu`] for another MTU.
    /// The data per segment is this minus 12 when timestamps are in use, as Linux does.
    pub mss: u16,
    /// Send buffer in octets: how much the application may queue ahead of the
    /// cumulative ACK, so also a bound on the octets in flight (as in Linux, where
    /// unacknowledged data stays in the send buffer). Default 4 MiB, the maximum of
    /// Linux's `tcp_wmem` that autotuning grows to on a long fat path (autotuning
    /// itself is not modelled); seed 001 fixes 16–64 KiB.
    pub send_buffer: u32,
    /// Receive buffer in octets: the largest window this endpoint advertises.
    /// Default 6 MiB, the maximum of Linux's `tcp_rmem` (autotuning not modelled).
    pub recv_buffer: u32,
    /// A fixed maximum window in octets, or none. It caps both the window this
    /// endpoint advertises and the octets it keeps in flight, whatever the buffers and
    /// the congestion window say: NetBSD 1.1's 16 KiB socket buffers, or a window a
    /// test method fixes. Default none.
    pub max_window: Option<u32>,
    /// Offer the Window Scale option (RFC 7323 §2). Default on (Linux
    /// `tcp_window_scaling=1`); scaling is in effect only when both SYNs carry it.
    pub window_scaling: bool,
    /// Offer SACK-Permitted (RFC 2018 §2) and, when both sides do, send SACK blocks
    /// and recover with RFC 6675. Default on (Linux `tcp_sack=1`).
    pub sack: bool,
    /// Offer Timestamps (RFC 7323 §3) and, when both sides do, take an RTT sample from
    /// every ACK's TSecr. Default on (Linux `tcp_timestamps=1`).
    pub timestamps: bool,
    /// Delayed ACK timer (RFC 5681 §4.2, RFC 1122 §4.2.3.2: at most 500 ms), or none to
    /// acknowledge every segment at once. Default 40 ms, Linux's `TCP_DELACK_MIN`;
    /// BSD stacks use 200 ms (`tcp_delack_ticks`).
    pub delayed_ack: Option<Duration>,
    /// Acknowledge at once when this many full-sized segments are unacknowledged
    /// (RFC 5681 §4.2: "at least every second full-sized segment"). Default 2.
    pub delayed_ack_segments: u32,
    /// Count every in-order data segment toward [`delayed_ack_segments`], whatever its
    /// size, instead of full-sized segments' worth of octets. Microsoft's rule in
    /// Windows NT 3.5x/4.0 and later ("TCP/IP Implementation Details", Delayed
    /// Acknowledgments: an ACK is sent when "no ACK was sent for the previous segment
    /// received", or when no other segment arrives within 200 ms): two segments of
    /// any size draw an ACK, and one segment alone waits for the timer. Default off:
    /// RFC 5681 §4.2's "every second full-sized segment", as Linux and BSD count it
    /// (octets ≥ 2·MSS).
    ///
    /// [`delayed_ack_segments`]: TcpConfig::delayed_ack_segments
    pub delayed_ack_any_segment: bool,
    /// Send a window update as soon as the application's read lets the right edge of
    /// the window move by half the receive buffer or more while the peer holds less
    /// than two segments of window (4.4BSD `tcp_output`'s rule, run from the read's
    /// `pru_rcvd`; Linux's `__tcp_cleanup_rbuf`). Off: the window reopens only on the
    /// ACKs of the delayed-ACK rule, as Microsoft describes Windows NT's receiver (an
    /// ACK only for a second segment or after the 200 ms timer). Default on.
    pub window_update_on_read: bool,
    /// Nagle's algorithm (RFC 896, RFC 1122 §4.2.3.4): hold a short segment while data
    /// is unacknowledged. Default on, as in every stack unless `TCP_NODELAY`.
    pub nagle: bool,
    /// Acknowledge at once an in-order segment that carries PSH. NetBSD's tcp_input
    /// does (rev 1.10 of 1994, NetBSD 1.0, through rev 1.23.4.2 of NetBSD 1.2: in the
    /// header-prediction path and in `TCP_REASS`, `TH_PUSH` sets `TF_ACKNOW` where
    /// 4.4BSD-Lite sets `TF_DELACK`). Default off, as Linux and 4.4BSD-Lite.
    pub ack_on_push: bool,
    /// The delayed-ACK timer is one clock for the whole host ticking every
    /// `delayed_ack` from time 0, not a timer started per segment: a delayed ACK goes at
    /// the next tick, 0 to `delayed_ack` later. 4.4BSD's `tcp_fasttimo` runs every
    /// 200 ms (`PR_FASTHZ` = 5) and sends every connection's pending `TF_DELACK` (Wright
    /// and Stevens, TCP/IP Illustrated vol. 2, §25.4). Default off (Linux's per-socket
    /// timer).
    pub delayed_ack_clock: bool,
    /// The writer of a bulk sender as 4.4BSD's `sosend` writes: blocked on a full send
    /// buffer, it writes again only once at least this many octets are free
    /// (`so_snd.sb_lowat`, which `soreserve` sets to `MCLBYTES`, 2048 on i386), then
    /// fills all the space; and the segment that sends the last octet written carries
    /// PSH (4.4BSD `tcp_output`: "If we're sending everything we've got, set PUSH").
    /// None (default): the buffer is refilled at once, PSH is not set on bulk data.
    pub send_low_water: Option<u32>,
    /// The octets of one write call of that writer (ttcp `-l`, 8192 by default), whose
    /// tail `sosend` writes even below the low water mark; 0 (default) = one endless
    /// call. Only with [`TcpConfig::send_low_water`].
    pub write_size: u32,
    /// Lower bound of the RTO. RFC 6298 §2.4 says 1 s; Linux uses 200 ms
    /// (`TCP_RTO_MIN`), which is the default here.
    pub min_rto: Duration,
    /// Upper bound of the RTO (RFC 6298 §2.5: "at least 60 seconds"); Linux's
    /// `TCP_RTO_MAX` is 120 s. Default 60 s.
    pub max_rto: Duration,
    /// RTO before any RTT sample (RFC 6298 §2.1: 1 s; Linux `TCP_TIMEOUT_INIT` 1 s).
    pub initial_rto: Duration,
    /// Cap on the RTO as exponential backoff doubles it (RFC 6298 §5.5), or none.
    /// Seed 004's router capped its backoff at 100 ms. Default none (only `max_rto`).
    pub rto_backoff_cap: Option<Duration>,
    /// Clock granularity G of RFC 6298 §2.2 (RTO = SRTT + max(G, 4·RTTVAR)).
    /// Default 1 ms (Linux with HZ=1000).
    pub clock_granularity: Duration,
    /// Congestion control. Default CUBIC, as Linux.
    pub congestion_control: CongestionControl,
    /// Leaving slow start on a rising RTT before the first loss: Linux CUBIC's HyStart
    /// or RFC 9406 HyStart++, with either congestion control. Default off (plain RFC
    /// 5681 slow start), as the ns-3 comparisons and the Mathis checks need; Linux's own
    /// default is [`HyStartMode::Classic`] (`tcp_cubic` `hystart=1`).
    pub hystart: HyStartMode,
    /// Initial window in segments (RFC 6928: 10; Linux `TCP_INIT_CWND` 10).
    pub initial_window: u32,
    /// CUBIC's Reno-friendly α. Default [`CubicAlpha::Rfc9438`].
    pub cubic_alpha: CubicAlpha,
    /// Window growth per octet or per ACK. Default [`CwndGrowth::Bytes`], as Linux.
    pub cwnd_growth: CwndGrowth,
    /// Slow start's L with [`CwndGrowth::Bytes`]: the most one ACK adds, in segments,
    /// or none for no bound. Default 2, RFC 3465 §2.2's L = 2·SMSS; Linux since 3.9
    /// ("tcp: remove Appropriate Byte Count support") adds every packet acknowledged,
    /// bounded only by ssthresh: none.
    pub slow_start_limit: Option<u32>,
    /// Duplicate ACKs that trigger fast retransmit (RFC 5681 §3.2, RFC 6675
    /// DupThresh). Default 3.
    pub dup_ack_threshold: u32,
    /// RACK time-based loss detection (RFC 8985 §6), with SACK only (as Linux's
    /// `tcp_recovery` bit 0x1): a segment is lost once one sent after it was delivered
    /// and its RTT plus a reordering window has passed, which finds lost
    /// retransmissions without the RTO. Used beside RFC 6675's DupThresh rule, as
    /// Linux 4.4–4.17 did. Default on: Linux's `tcp_recovery=1` since 4.4 ("tcp: use RACK to
    /// detect losses", Documentation/networking/ip-sysctl.txt `tcp_recovery`); off is
    /// the RFC 6675 recovery alone.
    pub rack: bool,
    /// Proportional Rate Reduction (RFC 6937, PRR-SSRB) in SACK recovery: each ACK lets
    /// out data in proportion to what it delivered, ssthresh/RecoverFS of it while the
    /// pipe is above ssthresh, then up to ssthresh by slow start, instead of RFC 6675's
    /// cwnd = ssthresh at once. Counted in whole segments as Linux's
    /// `tcp_cwnd_reduction`. Linux's default since 3.2 ("tcp: Proportional Rate
    /// Reduction for TCP"); default off here, RFC 6675 alone, as ns-3's
    /// `TcpClassicRecovery` the comparisons use.
    pub prr: bool,
    /// Tail Loss Probe (RFC 8985 §7), with SACK and RACK only: when no ACK comes for
    /// PTO = 2·SRTT (+ 200 ms with one segment in flight), one segment of new data, or
    /// the last one again, is sent to draw an ACK whose SACK lets RACK find the tail
    /// losses before the RTO would. Default on: Linux's `tcp_early_retrans=3` since
    /// 3.10 ("tcp: Tail loss probe (TLP)", ip-sysctl.txt `tcp_early_retrans`).
    pub tlp: bool,
    /// Maximum segment lifetime; TIME-WAIT lasts 2·MSL (RFC 9293 §3.4.2 suggests
    /// 2 min). Default 30 s, so TIME-WAIT is 60 s as Linux's `TCP_TIMEWAIT_LEN`.
    pub msl: Duration,
    /// Path MTU discovery (RFC 1191 §3, §6.4): DF on every segment; an ICMP
    /// "fragmentation needed" lowers the MSS and the segments it lost are sent again at
    /// once, without a congestion response (Linux `tcp_v4_mtu_reduced`,
    /// `tcp_simple_retransmit`). Default on, Linux's `ip_no_pmtu_disc=0`; off is
    /// `ip_no_pmtu_disc=1` (DF clear, routers fragment).
    pub pmtu_discovery: bool,
    /// Packetization-layer PMTUD (RFC 4821) as Linux's `tcp_mtu_probing`: 0 never;
    /// 1 once black hole detection fires (the head segment unacknowledged through
    /// `tcp_retries1` = 3 backed-off timeouts, `retransmits_timed_out`), then the MSS
    /// falls to `base_mss` and probes search upwards; 2 from the start. Default 0, as
    /// Linux.
    pub mtu_probing: u8,
    /// The MSS probing starts from (Linux `tcp_base_mss`: 1024 since 4.2, 512 before;
    /// RFC 4821 §7.2 suggests 1024-octet packets as a safe start).
    pub base_mss: u16,
}

impl Default for TcpConfig {
    fn default() -> Self {
        TcpConfig {
            mss: 1460,
            send_buffer: 4 * 1024 * 1024,
            recv_buffer: 6 * 1024 * 1024,
            max_window: None,
            window_scaling: true,
            sack: true,
            timestamps: true,
            delayed_ack: Some(Duration::from_millis(40)),
            delayed_ack_segments: 2,
            delayed_ack_any_segment: false,
            window_update_on_read: true,
            nagle: true,
            ack_on_push: false,
            delayed_ack_clock: false,
            send_low_water: None,
            write_size: 0,
            min_rto: Duration::from_millis(200),
            max_rto: Duration::from_secs(60),
            initial_rto: Duration::from_secs(1),
            rto_backoff_cap: None,
            clock_granularity: Duration::from_millis(1),
            congestion_control: CongestionControl::Cubic,
            hystart: HyStartMode::Off,
            initial_window: 10,
            cubic_alpha: CubicAlpha::Rfc9438,
            cwnd_growth: CwndGrowth::Bytes,
            slow_start_limit: Some(2),
            dup_ack_threshold: 3,
            rack: true,
            prr: false,
            tlp: true,
            msl: Duration::from_secs(30),
            pmtu_discovery: true,
            mtu_probing: 0,
            base_mss: 1024,
        }
    }
}

impl TcpConfig {
    /// The default configuration with the MSS for a route MTU: MTU − 20 (IPv4 header
    /// without options) − 20 (TCP header without options), RFC 9293 §3.7.1.
    /// Panics when the MTU is below RFC 791's 68.
    pub fn for_mtu(mtu: u32) -> TcpConfig {
        assert!(mtu >= 68, "an IPv4 MTU is at least 68 octets (RFC 791)");
        let mss = u16::try_from(mtu - 40).unwrap_or(u16::MAX);
        TcpConfig { mss, ..TcpConfig::default() }
    }
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn mss_from_mtu() {
        assert_eq!(TcpConfig::for_mtu(1500).mss, 1460);
        assert_eq!(TcpConfig::for_mtu(576).mss, 536);
        assert_eq!(TcpConfig::for_mtu(9180).mss, 9140);
        assert_eq!(TcpConfig::for_mtu(65535).mss, 65495);
    }
}
