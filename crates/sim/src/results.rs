//! What a run measured, as plain records serialised to JSON for Python.
//!
//! The record is versioned (`"schema"`: [`RESULTS_SCHEMA`]) and its JSON Schema, generated
//! from these types ([`results_schema`]), is checked in as `schema/results.schema.json`
//! (`tests/results_schema.rs` fails when they differ); docs/results-schema.md documents it.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::app::stats::{FlowStats, Histogram, LatencySummary};
use crate::config::{FlowConfig, SimConfig};
use crate::node::Node;
use crate::tcp::hystart::Exit;
use crate::tcp::report::{IntervalRecord, TraceColumns};
use crate::tcp::TcpStats;

/// A drop, kept for `qoslab reach` and reports.
#[derive(Debug, Clone)]
pub struct DropRecord {
    pub time_ns: u64,
    pub node: u32,
    pub port: Option<u16>,
    pub reason: String,
    pub flow: Option<u32>,
    pub summary: String,
}

/// The version of the results' JSON, the `schema` field of every results record.
/// Raised whenever a field is added, renamed, retyped or given another meaning.
pub const RESULTS_SCHEMA: u32 = 1;

/// The results' JSON Schema (draft 2020-12), as `schema/results.schema.json` holds it:
/// the contract of what a run *writes* (a field skipped when empty is optional).
pub fn results_schema() -> serde_json::Value {
    let generator = schemars::generate::SchemaSettings::draft2020_12().for_serialize().into_generator();
    serde_json::to_value(generator.into_root_schema_for::<Results>()).expect("a JSON Schema is JSON")
}

/// What a run returns: per-flow, per-link and per-node counters, the drops, and the
/// optional parts of the models a run used (docs/results-schema.md).
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct Results {
    /// The version of this record's JSON: [`RESULTS_SCHEMA`].
    pub schema: u32,
    pub sim_time_ns: u64,
    pub events: u64,
    pub flows: Vec<FlowResult>,
    pub links: Vec<LinkResult>,
    pub nodes: Vec<NodeResult>,
    pub drop_log: Vec<DropEntry>,
    /// Seed 004's adaptive routers: switches, ratios over time, ARQ counters.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub adaptive: Vec<crate::node::adaptive_router::AdaptiveRouterResult>,
    /// Frames seen on every port, and on every 802.11 medium, when capturing.
    #[serde(skip)]
    pub captures: Vec<Capture>,
    /// What a streaming capture wrote (files, records, bytes, a cut by a size limit).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub capture: Option<CaptureSummary>,
    /// ATM counters (cells, losses, SVC set-ups), when the run has ATM links.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub atm: Option<crate::atm::AtmStats>,
}

/// Frames seen at one point: (time, bytes).
pub type Frames = Vec<(u64, Vec<u8>)>;

/// The frames of one capture point, for a pcap file.
#[derive(Debug)]
pub struct Capture {
    /// The file name without extension: `<node>-<port>` or `<wifi link>-air`.
    pub name: String,
    /// Ethernet II frames (ports), or the air's PPDUs: a radiotap header and the 802.11
    /// MAC frame without FCS, each PPDU once at its start (LINKTYPE_IEEE802_11_RADIOTAP).
    pub dot11: bool,
    /// ERF records of type AAL5 (LINKTYPE_ERF, 197): an ATM port's CPCS-PDUs.
    pub erf: bool,
    pub frames: Frames,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct FlowResult {
    pub id: u32,
    pub kind: &'static str,
    pub sent: u64,
    pub received: u64,
    pub lost: u64,
    pub duplicates: u64,
    /// Datagrams that arrived after a higher-numbered one (RFC 4737 §3.3); left out
    /// of the JSON when none did.
    #[serde(skip_serializing_if = "is_zero")]
    pub reordered: u64,
    pub bytes_received: u64,
    /// UDP, ping, UDP echo (docs/metrics.md#window): of `received`, those that arrived
    /// after the sending stopped, while the path drained.
    pub drained: u64,
    /// UDP, ping, UDP echo: datagrams that arrived after the window's end; counted in
    /// `lost`, never in `received`, the latency or the goodput.
    pub late: u64,
    pub first_rx_ns: Option<u64>,
    pub last_rx_ns: Option<u64>,
    /// UDP, ping, UDP echo: the goodput's divisor, the receiving interval
    /// (docs/metrics.md#goodput); TCP: the measurement window's length, the interval
    /// `throughput_bps` is over.
    pub receive_interval_ns: u64,
    /// UDP, ping, UDP echo: payload bits received over `receive_interval_ns`, per
    /// second; TCP: data bits the receiver got in order inside the measurement window
    /// over the window's length (`tcp.window`, docs/metrics.md "TCP").
    pub throughput_bps: f64,
    pub latency_ns: Option<LatencySummary>,
    pub jitter_ns: Option<f64>,
    pub rtt_ns: Vec<u64>,
    /// TCP flows: what the sender's socket counted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tcp: Option<TcpResult>,
    /// UDP echo flows: the forward direction as the echo server counted it, and the
    /// round trips (`received` counts the echoes back at the source).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub echo: Option<EchoResult>,
    /// Sent = received + dropped + in the network at the end (docs/metrics.md,
    /// "Conservation"); set by the world after `collect`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub conservation: Option<crate::conservation::FlowConservation>,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct EchoResult {
    /// Datagrams that reached the echo server: forward loss is `sent` less these, reverse
    /// loss these less `received`.
    pub forward_received: u64,
    pub forward_duplicates: u64,
    /// Datagrams that reached the server after the window's end (not in `forward_received`).
    pub forward_late: u64,
    /// One-way delay source → server (the simulator knows both clocks).
    pub forward_latency_ns: Option<LatencySummary>,
    pub rtt_ns: Option<LatencySummary>,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct TcpResult {
    pub bytes_sent: u64,
    pub retransmits: u64,
    pub fast_retransmits: u64,
    pub timeouts: u64,
    pub srtt_ns: Option<u64>,
    pub cwnd_bytes: u64,
    /// When the receiver had the last byte of a sized transfer.
    pub completed_ns: Option<u64>,
    /// Data octets cumulatively acknowledged (iperf3's sender bytes as the peer saw them).
    pub bytes_acked: u64,
    /// When the sender had the last byte of a sized transfer acknowledged.
    pub acked_ns: Option<u64>,
    /// When the sender sent its first data octet (ttcp's clock starts at its first write).
    pub first_tx_ns: Option<u64>,
    /// Data octets the receiver's first in-order delivery handed over, at `first_rx_ns`
    /// (they crossed the path before the receiver's clock started).
    pub first_rx_bytes: u64,
    /// When the application started and (for a timed test) stopped: the configured
    /// times, later by however long it waited for its PPP link to come up.
    pub start_ns: u64,
    pub stop_ns: u64,
    /// Largest congestion window, octets (iperf3 `max_snd_cwnd`).
    pub max_cwnd_bytes: u64,
    /// RTT samples' smallest, mean and largest, ns (iperf3 `min_rtt`, `mean_rtt`, `max_rtt`).
    pub min_rtt_ns: Option<u64>,
    pub mean_rtt_ns: Option<u64>,
    pub max_rtt_ns: Option<u64>,
    pub dup_acks: u64,
    /// Tail loss probes sent (RFC 8985 §7.3).
    pub tlp_probes: u64,
    /// Segments RACK marked lost (RFC 8985 §6.2), lost retransmissions included.
    pub rack_lost: u64,
    /// Slow start left early by HyStart: when, at what cwnd, and why.
    pub hystart_exit: Option<HyStartExit>,
    /// The cumulative counters at the end of the measurement window (iperf3's test
    /// interval, from `start_ns`): a timed test's stop, a sized transfer's last byte at
    /// the receiver (or its time limit, or the run's end). The flow's summary counts
    /// these; the last interval record ends here and equals it.
    pub window: IntervalRecord,
    /// Data octets the receiver got in order after the window ended (a deep queue
    /// draining after the stop): reported apart, never added to the window's.
    pub bytes_after_stop: u64,
    /// iperf3-style interval records (cumulative counters at each interval's end).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub intervals: Vec<IntervalRecord>,
    /// Per-ACK trace of the sender, in columns, when asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trace: Option<TraceColumns>,
    /// What the sender learned of the path MTU.
    #[serde(flatten)]
    pub path: TcpPathResult,
}

/// The sender's path MTU state at the end, and how it got there.
#[derive(Debug, Clone, Copy, Serialize, schemars::JsonSchema)]
pub struct TcpPathResult {
    /// The sender's MSS at the end (data octets per full segment).
    pub mss_bytes: u32,
    /// The IP packet size of its full segments at the end: the path MTU it ended at.
    pub path_mtu_bytes: u32,
    /// ICMP "fragmentation needed" about its segments it accepted.
    pub frag_needed_received: u64,
    pub mss_reductions: u64,
    /// RFC 4821 black hole detections (Linux `tcp_mtu_probing`).
    pub black_holes_detected: u64,
    pub mtu_probes: u64,
    pub mtu_probes_failed: u64,
    /// The longest time inside the measurement window the receiver got no new byte
    /// (from the window's start; to its end if the transfer had not finished).
    pub longest_stall_ns: u64,
    /// How long the receiver had got no new byte when the window ended, the transfer
    /// unfinished (zero if it finished): a stall at the end.
    pub stall_at_end_ns: u64,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct HyStartExit {
    pub time_ns: u64,
    pub cwnd_bytes: u64,
    pub reason: &'static str,
}

/// What the world hands over of one TCP flow.
pub(crate) struct TcpFlowInputs {
    pub id: u32,
    pub bytes_sent: u64,
    pub bytes_received: u64,
    pub retransmits: u64,
    pub fast_retransmits: u64,
    pub timeouts: u64,
    pub srtt_ns: Option<u64>,
    pub cwnd_bytes: u64,
    pub start_ns: u64,
    pub stop_ns: u64,
    pub first_rx_ns: Option<u64>,
    pub first_rx_bytes: u64,
    pub last_rx_ns: Option<u64>,
    pub completed_ns: Option<u64>,
    pub path: TcpPathResult,
    pub acked_ns: Option<u64>,
    pub first_tx_ns: Option<u64>,
    /// The sender's counters.
    pub client: TcpStats,
    pub hystart_exit: Option<Exit>,
    pub intervals: Vec<IntervalRecord>,
    pub trace: Option<TraceColumns>,
    /// The counters at the end of the measurement window.
    pub window: IntervalRecord,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct LinkResult {
    pub name: String,
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// Busy fraction per direction (a → b, b → a); for 802.11 one number, the airtime.
    pub utilization: Vec<f64>,
    /// Frames sent per direction; for 802.11 per member (AP first).
    pub frames: Vec<u64>,
    pub drops: u64,
    /// 802.11 only: per member (AP first) attempts, retries and receive losses.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub members: Vec<WifiMemberResult>,
    /// Frames in = out + dropped + queued at the end, per direction (a → b, b → a), per
    /// member's transmitter for 802.11 (docs/metrics.md, "Conservation"); set by the
    /// world after `collect`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub conservation: Vec<crate::conservation::LinkConservation>,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct WifiMemberResult {
    pub attempts: u64,
    pub retries: u64,
    pub frames_sent: u64,
    pub retry_drops: u64,
    pub queue_drops: u64,
    pub airtime_ns: u64,
    pub rx_collisions: u64,
    pub rx_errors: u64,
    /// Beacons the AP sent (docs/metrics.md, 802.11); left out of the JSON when none.
    #[serde(skip_serializing_if = "is_zero")]
    pub beacons: u64,
}

/// What the world hands over of one BSS.
pub(crate) struct WifiLinkInputs {
    pub name: String,
    pub airtime_busy_ns: u64,
    pub members: Vec<crate::wifi::bss::MemberStats>,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct TableEntry {
    pub ip: String,
    pub mac: String,
    pub port: String,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct BridgeEntry {
    pub mac: String,
    pub port: String,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct NodeResult {
    pub name: String,
    pub role: String,
    pub cpu_profile: String,
    pub cpu_utilization: f64,
    /// Over `SimConfig::cpu_window_ns` (the test's traffic), when one is given.
    pub cpu_utilization_window: Option<f64>,
    pub cpu_drops: u64,
    pub forwarded: u64,
    pub arp_table: Vec<TableEntry>,
    pub l3f_table: Vec<TableEntry>,
    pub bridge_table: Vec<BridgeEntry>,
    pub drops: BTreeMap<String, u64>,
    /// Per IPsec tunnel (SA pair) of the node, in configuration order: packets and
    /// bytes sealed and opened.
    pub ipsec: Vec<crate::tunnel::SaReport>,
    /// ICMP "fragmentation needed" the node sent (RFC 1191 §4), DF packets too big it
    /// dropped without one (a black hole, or a rate limit), and ICMP errors its rate
    /// limit held back.
    pub frag_needed_sent: u64,
    pub frag_needed_silent: u64,
    pub icmp_rate_limited: u64,
    pub icmp_filtered: u64,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct DropEntry {
    pub time_ns: u64,
    pub node: String,
    pub port: Option<String>,
    pub reason: String,
    pub flow: Option<u32>,
    pub summary: String,
}

pub(crate) struct Inputs<'a> {
    pub tcp: Vec<TcpFlowInputs>,
    pub config: &'a SimConfig,
    pub nodes: &'a [Node],
    /// Point-to-point links, with `utilization` holding busy nanoseconds until turned
    /// into fractions here.
    pub links: Vec<LinkResult>,
    pub wifi: Vec<WifiLinkInputs>,
    pub stats: &'a BTreeMap<u32, FlowStats>,
    /// UDP echo flows: the server's count of the forward direction, and the round trips.
    pub echo: BTreeMap<u32, (&'a FlowStats, &'a Histogram)>,
    pub drop_counts: &'a [BTreeMap<String, u64>],
    pub drop_log: &'a [DropRecord],
    pub events: u64,
    pub now: u64,
}

pub(crate) fn collect(mut inputs: Inputs<'_>) -> Results {
    let now = inputs.now;
    let mut tcp = std::mem::take(&mut inputs.tcp);
    let flows = inputs
        .config
        .flows
        .iter()
        .map(|flow| {
            if let Some(t) = tcp.iter_mut().find(|t| t.id == flow.id()) {
                return tcp_flow_result(t);
            }
            udp_flow_result(flow, &inputs.stats[&flow.id()], inputs.echo.get(&flow.id()).copied(), now)
        })
        .collect();
    let fraction = |busy: u64| if now > 0 { busy.min(now) as f64 / now as f64 } else { 0.0 };
    let mut links: Vec<LinkResult> = inputs
        .links
        .into_iter()
        .map(|l| LinkResult { utilization: l.utilization.iter().map(|&busy| fraction(busy as u64)).collect(), ..l })
        .collect();
    links.extend(inputs.wifi.iter().map(|w| wifi_link_result(w, fraction(w.airtime_busy_ns))));
    let nodes = inputs
        .nodes
        .iter()
        .enumerate()
        .map(|(i, n)| node_result(n, &inputs.config.nodes[i], &inputs.drop_counts[i], now))
        .collect();
    let drop_log = inputs
        .drop_log
        .iter()
        .map(|d| DropEntry {
            time_ns: d.time_ns,
            node: inputs.nodes[d.node as usize].name.clone(),
            port: d.port.map(|p| inputs.nodes[d.node as usize].port_name(p).to_string()),
            reason: d.reason.clone(),
            flow: d.flow,
            summary: d.summary.clone(),
        })
        .collect();
    Results {
        schema: RESULTS_SCHEMA,
        sim_time_ns: now,
        events: inputs.events,
        flows,
        links,
        nodes,
        drop_log,
        adaptive: Vec::new(),
        captures: Vec::new(),
        capture: None,
        atm: None,
    }
}

/// A TCP flow's result: goodput over its measurement window, and the sender's counters.
fn tcp_flow_result(t: &mut TcpFlowInputs) -> FlowResult {
    // Goodput: data octets delivered in order inside the measurement window,
    // over the window (iperf3's receiver sum); the drain after it is apart.
    let interval = t.window.end_ns.saturating_sub(t.start_ns);
    let window_bytes = t.window.bytes_received;
    FlowResult {
        id: t.id,
        kind: "tcp",
        sent: t.bytes_sent,
        received: t.bytes_received,
        lost: 0,
        duplicates: 0,
        reordered: 0,
        bytes_received: t.bytes_received,
        drained: 0,
        late: 0,
        first_rx_ns: t.first_rx_ns,
        last_rx_ns: t.last_rx_ns,
        receive_interval_ns: interval,
        throughput_bps: if interval > 0 { window_bytes as f64 * 8.0 * 1e9 / interval as f64 } else { 0.0 },
        latency_ns: None,
        jitter_ns: None,
        rtt_ns: Vec::new(),
        tcp: Some(TcpResult {
            bytes_sent: t.bytes_sent,
            retransmits: t.retransmits,
            fast_retransmits: t.fast_retransmits,
            timeouts: t.timeouts,
            srtt_ns: t.srtt_ns,
            cwnd_bytes: t.cwnd_bytes,
            completed_ns: t.completed_ns,
            path: t.path,
            bytes_acked: t.client.bytes_acked,
            acked_ns: t.acked_ns,
            first_tx_ns: t.first_tx_ns,
            first_rx_bytes: t.first_rx_bytes,
            start_ns: t.start_ns,
            stop_ns: t.stop_ns,
            max_cwnd_bytes: t.client.max_cwnd,
            min_rtt_ns: t.client.rtt_min_ns,
            mean_rtt_ns: t.client.rtt_sum_ns.checked_div(t.client.rtt_samples),
            max_rtt_ns: (t.client.rtt_samples > 0).then_some(t.client.rtt_max_ns),
            dup_acks: t.client.dup_acks,
            tlp_probes: t.client.tlp_probes,
            rack_lost: t.client.rack_lost,
            hystart_exit: t.hystart_exit.map(|e| HyStartExit { time_ns: e.at, cwnd_bytes: e.cwnd, reason: e.reason }),
            intervals: std::mem::take(&mut t.intervals),
            trace: t.trace.take(),
            window: t.window,
            bytes_after_stop: t.bytes_received - window_bytes,
        }),
        echo: None,
        conservation: None,
    }
}

/// A UDP, ping or UDP echo flow's result from its receiver's statistics (`s`) and, for an
/// echo flow, the server's count and the round trips.
fn udp_flow_result(flow: &FlowConfig, s: &FlowStats, echo: Option<(&FlowStats, &Histogram)>, now: u64) -> FlowResult {
    let kind = match flow {
        FlowConfig::Udp { .. } => "udp",
        FlowConfig::Ping { .. } => "ping",
        FlowConfig::UdpEcho { .. } => "udp-echo",
        FlowConfig::UdpReplay { .. } => "udp-replay",
        FlowConfig::Tcp { .. } => unreachable!("TCP flows are reported by tcp_flow_result"),
    };
    // The sending interval (cut at the run's end), stretched to the receiving
    // interval when the arrivals took longer (docs/metrics.md#goodput).
    let (start, stop) = flow.sending_ns();
    let interval_ns = s.receive_interval_ns(stop.min(now).saturating_sub(start));
    FlowResult {
        id: flow.id(),
        kind,
        sent: s.sent,
        received: s.received,
        lost: s.sent.saturating_sub(s.received),
        duplicates: s.duplicates,
        reordered: s.reordered,
        bytes_received: s.bytes_received,
        drained: s.drained,
        late: s.late,
        first_rx_ns: s.first_rx_ns,
        last_rx_ns: s.last_rx_ns,
        receive_interval_ns: interval_ns,
        throughput_bps: if interval_ns > 0 { s.bytes_received as f64 * 8.0 * 1e9 / interval_ns as f64 } else { 0.0 },
        latency_ns: s.latency.summary(),
        jitter_ns: s.jitter.value(),
        rtt_ns: s.rtt_ns.clone(),
        tcp: None,
        echo: echo.map(|(forward, rtt)| EchoResult {
            forward_received: forward.received,
            forward_duplicates: forward.duplicates,
            forward_late: forward.late,
            forward_latency_ns: forward.latency.summary(),
            rtt_ns: rtt.summary(),
        }),
        conservation: None,
    }
}

/// An 802.11 cell's result: its medium's busy fraction (`utilization`) and each member's
/// counters.
fn wifi_link_result(w: &WifiLinkInputs, utilization: f64) -> LinkResult {
    LinkResult {
        name: w.name.clone(),
        kind: "wifi",
        utilization: vec![utilization],
        frames: w.members.iter().map(|m| m.frames_sent).collect(),
        drops: w.members.iter().map(|m| m.dropped + m.queue_drops).sum(),
        members: w
            .members
            .iter()
            .map(|m| WifiMemberResult {
                attempts: m.attempts,
                retries: m.retries,
                frames_sent: m.frames_sent,
                retry_drops: m.dropped,
                queue_drops: m.queue_drops,
                airtime_ns: m.airtime_ns,
                rx_collisions: m.rx_collisions,
                rx_errors: m.rx_errors,
                beacons: m.beacons,
            })
            .collect(),
        conservation: Vec::new(),
    }
}

/// A node's result: CPU, forwarding, its tables at the end, drops by reason and its
/// IPsec SAs in the order of its configuration.
fn node_result(n: &Node, config: &crate::config::NodeConfig, drops: &BTreeMap<String, u64>, now: u64) -> NodeResult {
    let iface_name = |iface: usize| n.ip.ifaces[iface].name.clone();
    NodeResult {
        name: n.name.clone(),
        role: n.role.clone(),
        cpu_profile: n.cpu.config.profile.clone(),
        cpu_utilization: n.cpu.utilization(now),
        cpu_utilization_window: n.cpu.window_utilization(),
        cpu_drops: n.cpu.drops,
        forwarded: n.ip.counters.forwarded,
        arp_table: n
            .ip
            .arp_table(now)
            .into_iter()
            .map(|(ip, mac, iface)| TableEntry { ip: ip.to_string(), mac: mac.to_string(), port: iface_name(iface) })
            .collect(),
        l3f_table: n
            .l3f_table(now)
            .into_iter()
            .map(|(ip, mac, port)| TableEntry {
                ip: ip.to_string(),
                mac: mac.to_string(),
                port: n.port_name(port).to_string(),
            })
            .collect(),
        bridge_table: n
            .bridge_table(now)
            .into_iter()
            .map(|(mac, port)| BridgeEntry { mac: mac.to_string(), port: n.port_name(port).to_string() })
            .collect(),
        drops: drops.clone(),
        ipsec: {
            let order = |r: &crate::tunnel::SaReport| config.ipsec.iter().position(|c| c.name == r.name);
            let mut reports = n.ip.sa_reports();
            reports.sort_by_key(order);
            reports
        },
        frag_needed_sent: n.ip.counters.frag_needed_sent,
        frag_needed_silent: n.ip.counters.frag_needed_silent,
        icmp_rate_limited: n.ip.counters.icmp_rate_limited,
        icmp_filtered: n.ip.counters.icmp_filtered,
    }
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// What a run's capture files hold (`capture` in the results JSON, docs/metrics.md
/// "Capture"): written by a sink that writes files.
#[derive(Debug, Clone, Default, Serialize, schemars::JsonSchema)]
pub struct CaptureSummary {
    /// Files written (one per capture point).
    pub files: u64,
    /// Records written, over all files.
    pub frames: u64,
    /// Records whose frame was longer than `snaplen` and is cut to it.
    pub truncated: u64,
    /// Bytes of all files: a 24-byte file header each, a 16-byte record header and the
    /// captured bytes per record.
    pub bytes: u64,
    /// The snapshot length of every file (its header's snaplen field).
    pub snaplen: u32,
    /// The limit on `bytes` (`--pcap-max-size`), if one was set.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_bytes: Option<u64>,
    /// Where the capture stopped because the next record would have passed `max_bytes`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cut: Option<CaptureCut>,
}

/// The first record a size limit kept out; nothing after it was written either.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct CaptureCut {
    /// When its frame was seen, ns since the start of the run.
    pub time_ns: u64,
    /// Its number among all the frames seen, over all points, from 1 (so
    /// `frame - 1` were written before the cut).
    pub frame: u64,
    /// The capture point (file name without extension) that saw it.
    pub point: String,
}
