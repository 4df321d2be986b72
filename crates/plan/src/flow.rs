//! Traffic: the flows a test sends, and the TCP options of a bulk transfer.

use std::net::Ipv4Addr;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Octets of the probe header at the start of every UDP test payload: flow id (4),
/// sequence number (4), send time in ns (8), as the simulator's `app::Probe` writes it.
pub const PROBE_HEADER_LEN: usize = 16;

/// The most data an IPv4 datagram of 65,535 bytes (RFC 791 §3.1: Total Length is 16
/// bits) carries after its 20-byte header and an 8-byte UDP (RFC 768) or ICMP echo
/// (RFC 792) header: 65,507, as Linux's `ping -s` and UDP sockets allow.
pub const MAX_IPV4_PAYLOAD_AFTER_8: u32 = 65_535 - 20 - 8;

/// Traffic.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum FlowConfig {
    /// UDP datagrams at a constant rate, or back to back when `rate_pps` is 0 (saturating:
    /// the sender keeps its interface queue non-empty). Each datagram carries a sequence
    /// number and its send time, as iperf's and IXIA's test frames do.
    #[schemars(title = "UdpFlow")]
    Udp {
        id: u32,
        from: u32,
        to: Ipv4Addr,
        dst_port: u16,
        /// UDP payload bytes (at least 16: sequence and timestamp).
        payload: u32,
        rate_pps: f64,
        start_ns: u64,
        stop_ns: u64,
        /// Set DF on every datagram (iperf3 `--dont-fragment`, Linux
        /// `IP_PMTUDISC_DO`): a datagram larger than the path MTU the sender knows is
        /// refused at the sender (EMSGSIZE), and a router that cannot forward one
        /// drops it and answers ICMP "fragmentation needed". Default false: the
        /// datagrams are fragmented wherever they do not fit.
        #[serde(default)]
        dont_fragment: bool,
        /// A raw stream, as a hardware tester (IXIA, Spirent) sends one: every frame
        /// carries this destination MAC, written by the sender, with no ARP and whatever
        /// station holds `to` (seed 000 §3, Fig. 10: frames to station A's wireless
        /// adapter, received by a sniffing port elsewhere). The sender's route still
        /// picks the interface, and the IPv4 header still goes to `to`. None (default):
        /// the stack resolves the next hop by ARP (RFC 826), as a host's socket does.
        #[serde(default)]
        dst_mac: Option<[u8; 6]>,
        /// With `dst_mac`: the source MAC the frames carry (seed 000 Fig. 10's "any
        /// virtual MAC address"); None: the sending interface's own.
        #[serde(default)]
        src_mac: Option<[u8; 6]>,
    },
    /// ICMP echo requests.
    #[schemars(title = "PingFlow")]
    Ping { id: u32, from: u32, to: Ipv4Addr, count: u32, interval_ns: u64, payload: u32, start_ns: u64 },
    /// UDP echo (RFC 862): `from` sends `count` datagrams of `payload` bytes (a probe at
    /// the start) to `to`:`dst_port` every `interval_ns`; the node holding `to` sends each
    /// one back unchanged to the port it came from. Loss is counted each way: at the echo
    /// server (forward) and back at the source (reverse), with the round-trip time.
    #[schemars(title = "UdpEchoFlow")]
    UdpEcho {
        id: u32,
        from: u32,
        to: Ipv4Addr,
        dst_port: u16,
        payload: u32,
        count: u32,
        interval_ns: u64,
        start_ns: u64,
    },
    /// A replayed capture (the `pcap.replay` test): UDP datagrams of given payload sizes
    /// at given times, each carrying the probe as a `Udp` flow's datagram does. Datagram
    /// `k` of pass `p` (both from 0) is sent at `start_ns + p·period_ns + offsets_ns[k]`
    /// with `payloads[k]` octets of UDP payload. The lowering reads the schedule from
    /// the capture file; the capture's addresses and ports are not replayed.
    #[schemars(title = "UdpReplayFlow")]
    UdpReplay {
        id: u32,
        from: u32,
        to: Ipv4Addr,
        dst_port: u16,
        /// Each datagram's UDP payload, octets: at least 16 (the probe), at most 65,507.
        payloads: Vec<u32>,
        /// Each datagram's send time after the pass's start, ns: as many as `payloads`,
        /// the first 0, never decreasing.
        offsets_ns: Vec<u64>,
        /// How many times the schedule is sent (the test's `loop`), at least 1.
        passes: u32,
        /// From one pass's start to the next one's, ns: not below the last offset, so
        /// the passes do not overlap (unused with one pass).
        period_ns: u64,
        start_ns: u64,
        /// The end of the sending interval (docs/metrics.md#goodput), after the last
        /// datagram's send time.
        stop_ns: u64,
        /// Set DF on every datagram, as a `Udp` flow's `dont_fragment`.
        #[serde(default)]
        dont_fragment: bool,
    },
    /// A bulk TCP transfer, as iperf3 or ttcp make: `from` connects to `to` at `start_ns`
    /// and sends `bytes` (or without end until `stop_ns`); the receiver discards the data.
    #[schemars(title = "TcpFlow")]
    Tcp {
        id: u32,
        from: u32,
        to: Ipv4Addr,
        dst_port: u16,
        #[serde(default)]
        bytes: Option<u64>,
        start_ns: u64,
        stop_ns: u64,
        #[serde(default)]
        tcp: TcpOptions,
        /// Interval reports (iperf3 `-i`): counters every this many ns from `start_ns`.
        #[serde(default)]
        interval_ns: Option<u64>,
        /// Keep the sender's per-ACK trace (cwnd, RTT, retransmissions); big, so opt-in.
        #[serde(default)]
        trace: bool,
    },
}

/// Which congestion control rules grow and cut the window.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum CongestionControl {
    /// RFC 5681 slow start and congestion avoidance, with RFC 6582 NewReno recovery
    /// (or RFC 6675 SACK recovery when SACK is negotiated).
    NewReno,
    /// RFC 9438 CUBIC (C = 0.4, β = 0.7, fast convergence on), Linux's default since
    /// 2.6.19. HyStart is a separate choice, the socket\'s `hystart`.
    #[default]
    Cubic,
}

/// What an ACK of new data grows the congestion window by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum CwndGrowth {
    /// Appropriate Byte Counting (RFC 3465): slow start adds the octets acknowledged,
    /// at most the socket\'s `slow_start_limit` segments (L) per ACK; congestion
    /// avoidance adds one SMSS per cwnd of octets acknowledged (NewReno) or counts the
    /// segments acknowledged (CUBIC). Linux counts packets acknowledged the same way
    /// (`tcp_slow_start`, `tcp_cong_avoid_ai`), so delayed ACKs do not slow it down.
    #[default]
    Bytes,
    /// Once per ACK (RFC 5681 §3.1 Eq. 2 and 3): slow start adds min(N, SMSS), congestion
    /// avoidance SMSS·SMSS/cwnd, whatever the ACK covers: with an ACK every second
    /// segment the window opens half as fast. 4.4BSD's tcp_input (Wright and Stevens,
    /// TCP/IP Illustrated vol. 2, §29 "open the congestion window") and its
    /// descendants (NetBSD 1.1), and ns-3's `TcpNewReno`.
    Acks,
    /// 4.4BSD's own rule (Net/3 `tcp_input`, "open the congestion window"; unchanged in
    /// NetBSD 1.0's tcp_input.c rev 1.10 and NetBSD 1.2's rev 1.23.4.2): once per ACK of
    /// new data, slow start adds `t_maxseg` while cwnd ≤ ssthresh, and above it
    /// avoidance adds `maxseg·maxseg/cwnd + maxseg/8` (integer arithmetic), the extra
    /// eighth "to help larger windows open quickly enough".
    #[serde(rename = "4.4bsd")]
    Bsd44,
}

/// CUBIC's Reno-friendly estimate W_est (RFC 9438 §4.3): how fast it grows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum CubicAlpha {
    /// RFC 9438 §4.3: α_cubic = 3(1 − β)/(1 + β) while W_est < cwnd_prior, then 1.
    #[default]
    Rfc9438,
    /// α_cubic always (RFC 8312 §4.2's estimate): Linux's `tcp_friendliness` in
    /// tcp_cubic.c (one segment per `cwnd·beta_scale/8` acknowledged) and ns-3's
    /// `TcpCubic` never switch to 1.
    Constant,
    /// Linux's tcp_cubic.c as it runs (`crates/sim/src/tcp/linux_cubic.rs`): the
    /// constant α of `tcp_friendliness`, in whole packets, with `bictcp_update`'s rule
    /// that recomputes the growth rate only when cwnd changed or HZ/32 jiffies passed
    /// (HZ = 250), and ssthresh = max(cwnd·717/1024, 2) packets.
    Linux,
}

/// Which slow-start exit heuristic runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum HyStartMode {
    /// Plain RFC 5681 slow start to the first loss (Linux `hystart=0`).
    #[default]
    Off,
    /// Linux CUBIC's HyStart (ACK train and delay increase, `hystart=1`,
    /// `hystart_detect=3`, Linux's own default).
    Classic,
    /// RFC 9406 HyStart++ (delay increase, then Conservative Slow Start).
    #[serde(rename = "hystart++")]
    PlusPlus,
}

/// What a TCP flow sets differently from `tcp::TcpConfig`'s defaults (Linux's).
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TcpOptions {
    /// Congestion control (default CUBIC); the socket's `congestion_control`.
    #[serde(default)]
    pub congestion: Option<CongestionControl>,
    /// Maximum segment size; by default the route MTU less 40 (RFC 9293 §3.7.1).
    #[serde(default)]
    pub mss: Option<u16>,
    #[serde(default)]
    pub send_buffer: Option<u32>,
    #[serde(default)]
    pub recv_buffer: Option<u32>,
    /// A fixed largest window (NetBSD 1.1's 16 KiB in seed 004).
    #[serde(default)]
    pub max_window: Option<u32>,
    #[serde(default)]
    pub sack: Option<bool>,
    #[serde(default)]
    pub timestamps: Option<bool>,
    #[serde(default)]
    pub window_scaling: Option<bool>,
    #[serde(default)]
    pub delayed_ack_ns: Option<u64>,
    #[serde(default)]
    pub min_rto_ns: Option<u64>,
    /// A cap on the exponential RTO backoff (seed 004's router: 100 ms): the scenario's
    /// and the socket's `rto_backoff_cap`, in ns.
    #[serde(default)]
    pub rto_backoff_cap_ns: Option<u64>,
    /// Path MTU discovery (RFC 1191): DF on every segment, the MSS lowered on ICMP
    /// "fragmentation needed". Default on (Linux `ip_no_pmtu_disc=0`).
    #[serde(default)]
    pub pmtu_discovery: Option<bool>,
    /// Packetization-layer PMTUD (RFC 4821), Linux `tcp_mtu_probing`: 0 off (default),
    /// 1 on once a black hole is suspected, 2 always on.
    #[serde(default)]
    pub mtu_probing: Option<u8>,
    /// The MSS probing starts from (Linux `tcp_base_mss`, 1024 since 4.2).
    #[serde(default)]
    pub base_mss: Option<u16>,
    /// Slow start's exit heuristic (default off).
    #[serde(default)]
    pub hystart: Option<HyStartMode>,
    /// Nagle's algorithm (default on).
    #[serde(default)]
    pub nagle: Option<bool>,
    /// ACK at once after this many full-sized segments (default 2, RFC 5681 §4.2).
    #[serde(default)]
    pub delayed_ack_segments: Option<u32>,
    /// ACK at once an in-order segment with PSH (NetBSD's tcp_input; default off).
    #[serde(default)]
    pub ack_on_push: Option<bool>,
    /// The delayed ACK waits for the next tick of a host-wide clock of period
    /// `delayed_ack_ns` (4.4BSD `tcp_fasttimo`), not a full period (default off).
    #[serde(default)]
    pub delayed_ack_clock: Option<bool>,
    /// A bulk writer refills the send buffer once this many octets are free (4.4BSD
    /// `so_snd.sb_lowat`) and PSH marks the last octet written; 0 or none = refilled at
    /// once, no PSH (default).
    #[serde(default)]
    pub send_low_water: Option<u32>,
    /// That writer's write call in octets (ttcp `-l`); 0 or none = one endless call.
    #[serde(default)]
    pub write_size: Option<u32>,
    /// Count segments of any size toward `delayed_ack_segments` (Windows NT's rule;
    /// default off, RFC 5681's full-sized segments).
    #[serde(default)]
    pub delayed_ack_any_segment: Option<bool>,
    /// Duplicate ACKs that trigger fast retransmit (default 3, RFC 5681 §3.2; Windows
    /// NT 4.0 SP2 and later: TcpMaxDupAcks, default 2).
    #[serde(default)]
    pub dup_ack_threshold: Option<u32>,
    /// A window update when the application's read opens the window by half the
    /// buffer (4.4BSD, Linux; default on); off for Windows NT 4.0.
    #[serde(default)]
    pub window_update_on_read: Option<bool>,
    /// Initial window, segments (default 10, RFC 6928).
    #[serde(default)]
    pub initial_window: Option<u32>,
    /// RACK loss detection (RFC 8985 §6), default on as Linux's `tcp_recovery=1`.
    #[serde(default)]
    pub rack: Option<bool>,
    /// Tail Loss Probe (RFC 8985 §7), default on as Linux's `tcp_early_retrans=3`.
    #[serde(default)]
    pub tlp: Option<bool>,
    /// Window growth: "bytes" (RFC 3465, default), "acks" (RFC 5681 once per ACK) or
    /// "4.4bsd" (Net/3's per-ACK rule with avoidance's extra maxseg/8).
    #[serde(default)]
    pub cwnd_growth: Option<CwndGrowth>,
    /// Slow start's L in segments with byte counting (default 2, RFC 3465 §2.2); 0 = no
    /// bound (Linux since 3.9).
    #[serde(default)]
    pub slow_start_limit: Option<u32>,
    /// CUBIC's Reno-friendly α: "rfc9438" (default), "constant" (RFC 8312, ns-3) or
    /// "linux" (tcp_cubic.c's arithmetic and update rule).
    #[serde(default)]
    pub cubic_alpha: Option<CubicAlpha>,
    /// Proportional Rate Reduction (RFC 6937) in SACK recovery (default off).
    #[serde(default)]
    pub prr: Option<bool>,
    /// RTO before the first RTT sample, which times the SYN (default 1 s, RFC 6298 §2.1).
    #[serde(default)]
    pub initial_rto_ns: Option<u64>,
}

impl FlowConfig {
    pub fn id(&self) -> u32 {
        match self {
            FlowConfig::Udp { id, .. }
            | FlowConfig::Ping { id, .. }
            | FlowConfig::Tcp { id, .. }
            | FlowConfig::UdpEcho { id, .. }
            | FlowConfig::UdpReplay { id, .. } => *id,
        }
    }

    /// The sending interval [start, stop) in ns: a UDP or replay flow's configured times; `count`
    /// datagrams one gap apart for ping and UDP echo (one gap each, the last one's too).
    pub fn sending_ns(&self) -> (u64, u64) {
        match self {
            FlowConfig::Udp { start_ns, stop_ns, .. }
            | FlowConfig::Tcp { start_ns, stop_ns, .. }
            | FlowConfig::UdpReplay { start_ns, stop_ns, .. } => (*start_ns, *stop_ns),
            FlowConfig::Ping { start_ns, count, interval_ns, .. }
            | FlowConfig::UdpEcho { start_ns, count, interval_ns, .. } => {
                (*start_ns, start_ns.saturating_add(u64::from(*count).saturating_mul(*interval_ns)))
            }
        }
    }

    /// A replay flow's schedule can be sent: as many sizes as times, each size a probe's
    /// at least and an IPv4 datagram's at most, times from 0 and never decreasing, passes
    /// that do not overlap, and a sending interval that ends after the last datagram.
    /// `Err((field, message))` names the flow's field; `Ok` for other kinds of flow.
    pub fn check_replay(&self) -> Result<(), (&'static str, String)> {
        let FlowConfig::UdpReplay { payloads, offsets_ns, passes, period_ns, start_ns, stop_ns, .. } = self else {
            return Ok(());
        };
        if payloads.is_empty() {
            return Err(("payloads", "a replay sends one datagram or more".into()));
        }
        if offsets_ns.len() != payloads.len() {
            return Err((
                "offsets_ns",
                format!("{} send times for {} datagrams: one each", offsets_ns.len(), payloads.len()),
            ));
        }
        if let Some(k) = payloads.iter().position(|&p| p < PROBE_HEADER_LEN as u32 || p > MAX_IPV4_PAYLOAD_AFTER_8) {
            return Err((
                "payloads",
                format!(
                    "datagram {k} carries {} octets: a replayed UDP payload carries the {PROBE_HEADER_LEN}-octet probe \
                     and at most {MAX_IPV4_PAYLOAD_AFTER_8} octets (RFC 791 §3.1, RFC 768)",
                    payloads[k]
                ),
            ));
        }
        if offsets_ns[0] != 0 {
            return Err(("offsets_ns", format!("the first datagram is sent at the start (0), not {}", offsets_ns[0])));
        }
        if let Some(k) = offsets_ns.windows(2).position(|w| w[1] < w[0]) {
            return Err(("offsets_ns", format!("datagram {} is sent before datagram {k}", k + 1)));
        }
        let last = *offsets_ns.last().expect("not empty");
        if *passes == 0 {
            return Err(("passes", "a replay sends its schedule once or more".into()));
        }
        if *passes > 1 && *period_ns < last {
            return Err(("period_ns", format!("a pass of {last} ns cannot start again every {period_ns} ns")));
        }
        let end = u64::from(*passes - 1)
            .checked_mul(*period_ns)
            .and_then(|t| t.checked_add(last))
            .and_then(|t| t.checked_add(*start_ns));
        match end {
            None => Err(("period_ns", "the last datagram's send time is past 2^64 ns".into())),
            Some(end) if *stop_ns <= end => Err((
                "stop_ns",
                format!("the sending interval ends at {stop_ns} ns, not after the last datagram's send time {end} ns"),
            )),
            Some(_) => Ok(()),
        }
    }

    /// A replay flow's send time of datagram `seq` (counted over all passes), ns after
    /// the flow's start; `None` past the last one or for another kind of flow.
    pub fn replay_offset_ns(&self, seq: u64) -> Option<u64> {
        let FlowConfig::UdpReplay { offsets_ns, passes, period_ns, .. } = self else { return None };
        let n = offsets_ns.len() as u64;
        if n == 0 || seq >= n * u64::from(*passes) {
            return None;
        }
        Some((seq / n).saturating_mul(*period_ns).saturating_add(offsets_ns[(seq % n) as usize]))
    }
}

#[cfg(test)]
mod test {
    use super::*;

    fn replay(payloads: Vec<u32>, offsets_ns: Vec<u64>, passes: u32, period_ns: u64, stop_ns: u64) -> FlowConfig {
        FlowConfig::UdpReplay {
            id: 1,
            from: 0,
            to: Ipv4Addr::LOCALHOST,
            dst_port: 9,
            payloads,
            offsets_ns,
            passes,
            period_ns,
            start_ns: 1_000,
            stop_ns,
            dont_fragment: false,
        }
    }

    /// Two passes of 0 and 30 ns, 40 ns apart from 1000 ns: the last send is at
    /// 1000 + 40 + 30 = 1070 ns, so the sending interval must end after it.
    #[test]
    fn a_replay_schedule_is_checked_field_by_field() {
        let field = |f: FlowConfig| f.check_replay().err().map(|(field, _)| field);
        assert_eq!(field(replay(vec![16, 1472], vec![0, 30], 2, 40, 1_071)), None);
        assert_eq!(field(replay(vec![16, 1472], vec![0, 30], 2, 40, 1_070)), Some("stop_ns"));
        assert_eq!(field(replay(vec![], vec![], 1, 0, 2_000)), Some("payloads"));
        assert_eq!(field(replay(vec![16], vec![0, 5], 1, 0, 2_000)), Some("offsets_ns"));
        // Below the 16-octet probe, and above what an IPv4 datagram carries after UDP's 8.
        assert_eq!(field(replay(vec![15], vec![0], 1, 0, 2_000)), Some("payloads"));
        assert_eq!(field(replay(vec![65_508], vec![0], 1, 0, 2_000)), Some("payloads"));
        assert_eq!(field(replay(vec![16, 16], vec![5, 6], 1, 0, 2_000)), Some("offsets_ns"));
        assert_eq!(field(replay(vec![16, 16, 16], vec![0, 6, 5], 1, 0, 2_000)), Some("offsets_ns"));
        assert_eq!(field(replay(vec![16, 16], vec![0, 30], 0, 40, 2_000)), Some("passes"));
        // A pass that would start before the last one ended.
        assert_eq!(field(replay(vec![16, 16], vec![0, 30], 2, 29, 2_000)), Some("period_ns"));
        assert_eq!(field(replay(vec![16, 16], vec![0, 30], u32::MAX, u64::MAX / 2, u64::MAX)), Some("period_ns"));
    }

    #[test]
    fn a_replay_offset_counts_passes() {
        let f = replay(vec![16, 16, 16], vec![0, 5, 5], 2, 20, 1_100);
        let offsets: Vec<_> = (0..7).map(|k| f.replay_offset_ns(k)).collect();
        assert_eq!(offsets, [Some(0), Some(5), Some(5), Some(20), Some(25), Some(25), None]);
    }
}
