//! The simulator's input: a network lowered from a scenario, every name resolved.
//!
//! Python (`qoslab.backends.sim`) turns a user's scenario into this: nodes with their
//! ports, MAC and IP addresses and routes; links between ports; traffic. Nothing here is
//! a default to be guessed: the lowering fills every field, and the simulator refuses a
//! configuration it cannot run with a message naming the field (see [`SimConfig::check`]).
//!
//! The same configuration and seed always give the same results.

use std::net::Ipv4Addr;

use serde::{Deserialize, Serialize};

/// A whole simulation run.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SimConfig {
    /// The scenario seed; every random stream derives from it (see `rng`).
    pub seed: u64,
    /// Simulated time to run, in nanoseconds.
    pub duration_ns: u64,
    pub nodes: Vec<NodeConfig>,
    pub links: Vec<LinkConfig>,
    #[serde(default)]
    pub flows: Vec<FlowConfig>,
    /// Keep every frame each port sends and receives, for pcap files.
    #[serde(default)]
    pub capture: bool,
    /// Stop with an error instead of exhausting memory or time.
    #[serde(default)]
    pub budget: BudgetConfig,
    /// [from, until) in nanoseconds: each node's CPU utilisation is reported over this
    /// window as well (a test's traffic interval, without the learning and draining
    /// around it). None = only over the whole run.
    #[serde(default)]
    pub cpu_window_ns: Option<(u64, u64)>,
    /// ATM switches, PVC cross-connects and CLIP subnets (the links are in `links`).
    #[serde(default)]
    pub atm: crate::atm::AtmConfig,
    /// Seed 004's adaptive routers: a router that sends towards a peer router over a
    /// radio (with link acks) or a modem, whichever delivers (see `node::adaptive_router`).
    #[serde(default)]
    pub adaptive: Vec<crate::node::adaptive_router::config::AdaptiveConfig>,
    /// The measurement windows of UDP, ping and UDP echo flows, by flow id
    /// (docs/metrics.md#window). A flow without one ends its sending at its own stop and
    /// counts every arrival until the run ends.
    #[serde(default)]
    pub windows: Vec<WindowConfig>,
}

/// The measurement window of one flow (docs/metrics.md#window): it opens at the flow's
/// first send. Arrivals up to `end_ns` are received; later ones are late, counted apart
/// and never as received, in the latency or in the goodput (RFC 2544 §23 waits "about
/// 2 seconds" for frames still in the device, §26.3 counts what did not arrive as lost).
/// Received arrivals after `stop_ns`, the end of the sending as the method counts it (an
/// RFC 2544 trial's stop, shared by the trial's flows), are also counted as drained.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WindowConfig {
    pub flow: u32,
    pub stop_ns: u64,
    pub end_ns: u64,
}

/// Limits that stop a run cleanly, naming what grew.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct BudgetConfig {
    /// Events processed at most.
    pub max_events: u64,
    /// Events pending in the scheduler at most.
    pub max_pending: usize,
    /// Frames held in all queues together at most.
    pub max_queued_frames: usize,
}

impl Default for BudgetConfig {
    fn default() -> Self {
        BudgetConfig { max_events: 2_000_000_000, max_pending: 4_000_000, max_queued_frames: 4_000_000 }
    }
}

/// A node: its ports, how it forwards, its CPU.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodeConfig {
    pub name: String,
    /// The role named in the scenario, for reports only; behaviour follows the fields below.
    pub role: String,
    pub ports: Vec<PortConfig>,
    /// A bridge joining some ports into one segment, with the node's own IP on it.
    #[serde(default)]
    pub bridge: Option<BridgeConfig>,
    /// Forward IP packets between interfaces (a router, an ICS host, an AP router).
    #[serde(default)]
    pub ip_forward: bool,
    /// Static routes; connected routes come from the interfaces' addresses.
    #[serde(default)]
    pub routes: Vec<RouteConfig>,
    /// Network address translation on one interface (ICS, a SOHO router's WAN).
    #[serde(default)]
    pub nat: Option<NatConfig>,
    pub cpu: CpuConfig,
    /// Seconds an ARP cache entry lives (Windows XP: 120 s for a used entry; Linux ~30 s
    /// reachable). RFC 1122 §2.3.2.1 asks for a timeout, not a value.
    pub arp_timeout_ns: u64,
    /// IPv4 reassembly timeout (RFC 791 suggests 15 s; Linux uses 30 s).
    pub reassembly_timeout_ns: u64,
    /// IPsec ESP tunnels ending at this node, each a virtual interface (see `ipsec`).
    #[serde(default)]
    pub ipsec: Vec<IpsecTunnelConfig>,
    /// Path MTU behaviour: what the node sends when a DF packet does not fit, its ICMP
    /// rate limit and its PMTU cache (see `pmtu`).
    #[serde(default)]
    pub pmtu: PmtuConfig,
    /// OpenVPN tunnel ends at this node (see `openvpn` and `vif`).
    #[serde(default)]
    pub openvpn: Vec<OpenVpnConfig>,
    /// PPPoE session ends at this node, each a PPP interface (see `pppoe` and `vif`).
    #[serde(default)]
    pub pppoe: Vec<PppoeConfig>,
    /// PPTP tunnel ends at this node, each a PPP interface (see `pptp` and `pptp_vif`).
    #[serde(default)]
    pub pptp: Vec<PptpConfig>,
}

/// One end of a PPTP tunnel (RFC 2637; seed 002 §3.4): a TCP control connection from
/// `local` to `remote`'s port 1723 (the client, PNS, opens it), then one call whose PPP
/// link rides in enhanced GRE between the same addresses, routed by the node's stack.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PptpConfig {
    /// The PPP interface's name (`ppp0`).
    pub name: String,
    /// The PAC (`pptpd`: listens on 1723, authenticates, assigns the address).
    pub server: bool,
    /// Outer addresses: this end's and the other end's.
    pub local: Ipv4Addr,
    pub remote: Ipv4Addr,
    /// "mschapv2" (RFC 2759), "chap" (RFC 1994, MD5) or "pap" (RFC 1334): what the
    /// server demands.
    pub auth: String,
    /// The client's name and the shared secret.
    pub user: String,
    pub secret: String,
    /// The interface MTU; also the MRU each end requests in LCP (RFC 1661 §6.1).
    pub mtu: u16,
    /// This end's address on the PPP link (for a client, the one the server assigns).
    pub ppp_local: Ipv4Addr,
    /// The other end's PPP address (a server assigns it to the client with IPCP).
    pub ppp_peer: Ipv4Addr,
    /// Destinations routed into the PPP interface (the peer's address at least).
    pub routes: Vec<(Ipv4Addr, u8)>,
    /// This end's Call ID (RFC 2637 §2.7-§2.8).
    pub call_id: u16,
    /// Packet Recv. Window Size announced (RFC 2637 §2.7-§2.8). RFC 2637 fixes no
    /// value; 64 is what Windows' PPTP client and server announce.
    #[serde(default = "default_pptp_window")]
    pub recv_window: u16,
}

fn default_clocking() -> String {
    "async".into()
}

fn default_fcs_bits() -> u32 {
    16
}

fn default_pptp_window() -> u16 {
    64
}

/// One end of an OpenVPN tunnel (seed 002 §3.2). Its packets are UDP datagrams between
/// `local`:`local_port` and `remote`:`remote_port`, routed by the node's stack (so they
/// ride on whatever interface leads to `remote`, a link or another tunnel).
///
/// - `dev = "tap"`: the tunnel is the Ethernet port `port` of the node (a TAP device):
///   frames the node sends on it (its own, or its bridge's) are sealed whole; frames
///   opened are received on it. The port's MTU bounds what the IP stack sends on it.
/// - `dev = "tun"`: the tunnel is a point-to-point IP interface with MTU `mtu` and
///   routes to `protects`; IPv4 packets routed there are fragmented to `mtu` first
///   (DF clear), sealed whole, and the outer datagram is fragmented by the egress
///   interface if it must be.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OpenVpnConfig {
    /// The interface name (`tap0`, `tun0`, or the scenario's tunnel name).
    pub name: String,
    /// "tap" or "tun".
    pub dev: String,
    /// The server end (its direction keys are the server's).
    pub server: bool,
    /// TAP: the index of the node's port that is the TAP device.
    #[serde(default)]
    pub port: Option<u16>,
    pub local: Ipv4Addr,
    pub remote: Ipv4Addr,
    /// OpenVPN's port 1194 (IANA) on the server; the client's source port.
    pub local_port: u16,
    pub remote_port: u16,
    /// "udp" ("tcp" is refused: not modelled yet).
    pub proto: String,
    /// `--cipher`: "none", "bf-cbc", "aes-128-cbc", "aes-256-cbc", "aes-128-gcm", "aes-256-gcm".
    pub cipher: String,
    /// `--auth`: "none", "sha1", "sha256", "sha512".
    pub auth: String,
    /// Send the 4-octet packet id (`--replay`). Seed 002 §3.2 counts none.
    #[serde(default)]
    pub replay: bool,
    /// `--fragment max`: no UDP payload larger than this; `None` = off.
    #[serde(default)]
    pub fragment: Option<u16>,
    /// TUN: the interface's MTU (unused for TAP, whose port has its own).
    pub mtu: u16,
    /// TUN: destinations routed into the tunnel.
    #[serde(default)]
    pub protects: Vec<(Ipv4Addr, u8)>,
    /// The number both ends derive their keys from (the scenario's tunnel index).
    pub key: u32,
}

/// One end of a PPPoE session (RFC 2516), a PPP interface of the node over the
/// Ethernet-like port `port` (a link's port or an OpenVPN TAP port).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PppoeConfig {
    /// The PPP interface's name (`ppp0`).
    pub name: String,
    pub port: u16,
    /// The Access Concentrator (answers discovery, authenticates, assigns the address).
    pub server: bool,
    /// RFC 2516 App. A Service-Name: the server offers it, the client asks for it
    /// (empty: any service).
    pub service_name: String,
    /// The AC-Name a server sends.
    #[serde(default)]
    pub ac_name: String,
    /// The session id a server assigns (non-zero, RFC 2516 §5.4).
    #[serde(default)]
    pub session_id: u16,
    /// "chap" (RFC 1994, MD5) or "pap" (RFC 1334): what the server demands.
    pub auth: String,
    /// The client's name and the shared secret.
    pub user: String,
    pub secret: String,
    /// The interface MTU; also the MRU each end requests in LCP (RFC 1661 §6.1; at most
    /// 1492 over PPPoE, RFC 2516 §7).
    pub mtu: u16,
    /// This end's address on the PPP link (for a client, the one the server assigns).
    pub local: Ipv4Addr,
    /// The other end's address (a server assigns it to the client with IPCP).
    pub peer: Ipv4Addr,
    /// Destinations routed into the PPP interface (the peer's address at least).
    pub routes: Vec<(Ipv4Addr, u8)>,
}

/// What a node does about packets too big for the next hop, and what it remembers of
/// the path MTUs it learns (RFC 1191). Every default is Linux's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PmtuConfig {
    /// What a router sends back when a DF packet exceeds the next-hop MTU. Default
    /// `Mtu`: ICMP Destination Unreachable code 4 with the next-hop MTU (RFC 1191 §4,
    /// a MUST). `ZeroMtu`: the same without the MTU, as pre-RFC 1191 routers (RFC 792)
    /// send. `Silent`: nothing, a PMTU black hole (RFC 2923 §2.1).
    pub frag_needed: FragNeeded,
    /// Drop ICMP Destination Unreachable messages this node would forward or receive,
    /// as a firewall that filters "all ICMP" does (RFC 2923 §2.1, RFC 4890's IPv6
    /// advice says why not to). Default false.
    pub filter_icmp_unreachable: bool,
    /// ICMP error rate limit per destination: one message per this many nanoseconds
    /// with a burst of `icmp_burst`. Linux `net.ipv4.icmp_ratelimit` 1000 ms, and its
    /// token bucket (`inet_peer_xrlim_allow`) holds `XRLIM_BURST_FACTOR` 6 messages;
    /// it applies to the types in `icmp_ratemask` 0x1818 (Destination Unreachable,
    /// Source Quench, Time Exceeded, Parameter Problem). 0 = no limit.
    pub icmp_ratelimit_ns: u64,
    /// Burst of the rate limit, in messages (Linux 6).
    pub icmp_burst: u32,
    /// Rate-limit "fragmentation needed" too. Default false: Linux exempts it
    /// (`icmpv4_mask_allow`: "Don't limit PMTU discovery"); Cisco IOS limits it with
    /// `ip icmp rate-limit unreachable df`.
    pub rate_limit_frag_needed: bool,
    /// How long a learned path MTU lasts before the first-hop MTU is tried again:
    /// RFC 1191 §6.3 suggests 10 minutes; Linux `ip_rt_mtu_expires` is 600 s.
    pub expires_ns: u64,
    /// The smallest path MTU a host accepts from an ICMP message; a smaller one sets
    /// this one. Linux `net.ipv4.route.min_pmtu` 552 (512 + 20 + 20); RFC 1191 §3 only
    /// forbids going below 68.
    pub min_pmtu: u16,
}

/// The reply of a router to a DF packet too big for its next hop.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum FragNeeded {
    /// ICMP type 3 code 4 with the next-hop MTU (RFC 1191 §4).
    #[default]
    Mtu,
    /// ICMP type 3 code 4 with the MTU field zero (RFC 792; RFC 1191 §5 old routers).
    ZeroMtu,
    /// No ICMP at all: a black hole.
    Silent,
}

impl Default for PmtuConfig {
    fn default() -> Self {
        PmtuConfig {
            frag_needed: FragNeeded::Mtu,
            filter_icmp_unreachable: false,
            icmp_ratelimit_ns: 1_000_000_000,
            icmp_burst: 6,
            rate_limit_frag_needed: false,
            expires_ns: 600_000_000_000,
            min_pmtu: 552,
        }
    }
}

/// One end of an IPsec SA pair, ESP or AH, in tunnel or transport mode (RFC 4301 §4.1).
/// In tunnel mode (RFC 4301 §5.1.2.1; RFC 4303 §3.1.2) a virtual interface of the node:
/// packets the stack routes to a `protects` destination are sealed and sent from `local`
/// to `remote` inside an outer IPv4 header; ESP (AH) from `remote` with SPI `spi_in` is
/// opened and its inner packet taken as received on this interface.
///
/// The keys are not configured: both ends derive them from the SPI of each direction
/// (`ipsec::derive_key`), which stands in for IKE. Nothing in a simulation is secret.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IpsecTunnelConfig {
    /// The interface name, for reports (`ipsec0`).
    pub name: String,
    /// The outer source: one of the node's own addresses.
    pub local: Ipv4Addr,
    /// The outer destination: the other end's address.
    pub remote: Ipv4Addr,
    /// SPI of the outbound SA (the other end's `spi_in`). RFC 4303 §2.1: 1..=255 are
    /// reserved, 0 is never sent.
    pub spi_out: u32,
    /// SPI of the inbound SA (the other end's `spi_out`).
    pub spi_in: u32,
    /// `wire::ipsec::Cipher` by name: "null", "3des-cbc", "aes-128-cbc", "aes-256-gcm", ...
    pub cipher: String,
    /// `wire::ipsec::Auth` by name: "none", "hmac-md5-96", "hmac-sha1-96", "hmac-sha256-128".
    pub auth: String,
    /// Destinations routed into the tunnel: (network, prefix length).
    pub protects: Vec<(Ipv4Addr, u8)>,
    /// The tunnel interface's MTU: larger inner packets are fragmented before
    /// encapsulation (or refused with DF); the outer packet is fragmented after
    /// encapsulation when it exceeds the egress interface's MTU. Unused in transport mode.
    pub mtu: u16,
    /// "tunnel" (a virtual interface, RFC 4301 §5.1.2.1) or "transport" (RFC 4303
    /// §3.1.1, RFC 4302 §3.1.1: the node's own packets to and from `remote` carry ESP or
    /// AH between their IPv4 header and payload; `protects` and `mtu` are unused).
    #[serde(default = "default_ipsec_mode")]
    pub mode: String,
    /// "esp" (RFC 4303) or "ah" (RFC 4302; `cipher` must be "null").
    #[serde(default = "default_ipsec_protocol")]
    pub protocol: String,
    /// Transport mode: besides the peer's address, the SA selects only this IP protocol
    /// (RFC 4301 §4.4.1.1 "Next Layer Protocol")...
    #[serde(default)]
    pub select_protocol: Option<u8>,
    /// ... and only UDP or TCP from this local port (RFC 4301 §4.4.1.1 "Local Port";
    /// outbound, the source port) ...
    #[serde(default)]
    pub select_local_port: Option<u16>,
    /// ... and to this remote port ("Remote Port"; outbound, the destination port), so
    /// that several SAs to one host are told apart, as an SPD's entries are. The most
    /// specific SA that selects a packet wins (RFC 4301 §4.4.1: the SPD is ordered and
    /// the more specific entries come first).
    #[serde(default)]
    pub select_remote_port: Option<u16>,
    /// Tunnel mode, an inner packet larger than the tunnel can carry unfragmented:
    /// `Before` fragments the inner packet to the tunnel's effective MTU (the largest
    /// inner packet whose ESP/AH packet fits the path MTU to `remote`, and at most
    /// `mtu`) and seals each fragment, as Linux does for IPv4 ESP tunnels (the xfrm
    /// route's MTU, `esp4_get_mtu`); `After` seals inner packets up to `mtu` whole and
    /// fragments the outer packet (RFC 4459 §3 discusses both). With DF set on the inner
    /// packet either way an ICMP "fragmentation needed" carries the effective MTU
    /// back (RFC 4301 §8.2.1). Default `After`, the first version's behaviour.
    #[serde(default)]
    pub fragment: TunnelFragment,
}

/// Where a tunnel fragments a packet too big for it (RFC 4459 §3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum TunnelFragment {
    /// The inner packet, before encapsulation (pre-fragmentation).
    Before,
    /// The outer packet, after encapsulation (post-fragmentation).
    #[default]
    After,
}

fn default_ipsec_mode() -> String {
    "tunnel".into()
}

fn default_ipsec_protocol() -> String {
    "esp".into()
}

/// A physical port of a node.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PortConfig {
    /// The interface name as reports show it (`eth0`, `wlan0`).
    pub name: String,
    pub mac: [u8; 6],
    /// The port's own IPv4 address and prefix length, if it has one (not when bridged).
    #[serde(default)]
    pub address: Option<(Ipv4Addr, u8)>,
    /// The IP MTU of the port.
    pub mtu: u16,
    /// A point-to-point line (serial): no link addresses, no ARP; IP packets go straight
    /// to the other end.
    #[serde(default)]
    pub point_to_point: bool,
}

/// Ports joined into one bridge.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BridgeConfig {
    /// Indices into the node's ports.
    pub ports: Vec<u16>,
    pub mode: BridgeMode,
    /// The bridge interface's MAC (the node's own frames on the bridge use it).
    pub mac: [u8; 6],
    /// The bridge interface's IPv4 address, if the node has one on this segment.
    #[serde(default)]
    pub address: Option<(Ipv4Addr, u8)>,
    /// IEEE 802.1D-2004 §7.9.2: dynamic entries age out after 300 s by default.
    pub aging_ns: u64,
}

/// How a bridge forwards.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum BridgeMode {
    /// IEEE 802.1D learning bridge.
    L2,
    /// Seed 000 §2.2: forwarding on IP addresses with proxy ARP (Windows XP's L3F).
    L3f,
}

/// A static route.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RouteConfig {
    pub destination: Ipv4Addr,
    pub prefix_len: u8,
    /// The next hop; it must be on a connected subnet.
    pub via: Ipv4Addr,
}

/// NAT (masquerading) on one interface, as Windows ICS or a SOHO router's WAN does.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NatConfig {
    /// The outside interface: a port index, or `None` for the bridge interface.
    pub outside_port: Option<u16>,
    #[serde(default)]
    pub port_forwards: Vec<PortForward>,
    /// Idle timeout of a UDP mapping (Linux nf_conntrack: 30 s unreplied, 180 s assured).
    pub udp_timeout_ns: u64,
}

/// An inbound port forward: outside `protocol`/`port` to an inside address and port.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PortForward {
    pub protocol: String,
    pub port: u16,
    pub to: Ipv4Addr,
    pub to_port: u16,
}

/// The cost model of a node's CPU: a single server with a queue.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CpuConfig {
    /// The profile's name, for reports.
    pub profile: String,
    /// Clock rate; 0 means the node forwards in hardware at no CPU cost.
    pub hz: u64,
    /// Jobs (frames) waiting for the CPU at most; more are dropped.
    pub queue_limit: usize,
    pub cycles: CpuCycles,
    /// The machine's ATM adapter, if its segmentation is slower than the line.
    #[serde(default)]
    pub atm_nic: AtmNicCost,
    /// The receive path's latency before the CPU (adapter, interrupt, driver).
    #[serde(default)]
    pub rx_latency: RxLatency,
}

/// The latency of a node's receive path before its CPU takes a frame: the adapter's
/// transfer to host memory, its interrupt and the driver's deferred call (a Windows
/// NDIS miniport's DPC). The CPU is not busy meanwhile and frames overlap in it, in
/// order (a pipeline): it delays every frame by `per_frame_ns + per_byte_ns × length`
/// without limiting the rate. Both 0 (the default): frames reach the CPU on arrival.
/// The profile data file says where each number comes from.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RxLatency {
    /// Fixed part, ns per frame.
    pub per_frame_ns: u64,
    /// Part that grows with the frame, ns per byte of the Ethernet frame (header and
    /// payload, no FCS) as the node's port hands it over.
    pub per_byte_ns: f64,
}

/// An ATM adapter's segmentation engine (the NIC's own processor and its DMA over the
/// host bus, not the host CPU): before the first cell of each AAL5 PDU it spends
/// `sar_pdu_ns` (descriptor fetch, DMA set-up), then it hands the link at most
/// `sar_cell_rate` cells per second; the next PDU waits for the last cell. Both 0 (the
/// default): segmentation at line rate with no set-up, as a hardware SAR chip does.
/// Not modelled: the engine's work on VBR and ABR VCs, whose contracts pace their cells
/// themselves, and reassembly, taken at line rate. The profile data file says where
/// each number comes from.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AtmNicCost {
    /// Set-up time per AAL5 PDU sent, ns.
    pub sar_pdu_ns: u64,
    /// Cells per second the engine segments at most; 0 = the line's cell rate.
    pub sar_cell_rate: u64,
}

/// Cycles per operation; the profile data file says where each number comes from.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CpuCycles {
    pub per_rx_packet: u64,
    pub per_tx_packet: u64,
    pub per_byte_copied: f64,
    pub per_bridge_lookup: u64,
    pub per_route_lookup: u64,
    pub per_nat_translation: u64,
    /// RC4 (WEP, TKIP) per encrypted or decrypted byte.
    pub per_byte_rc4: f64,
    /// AES (CCMP) per encrypted or decrypted byte.
    pub per_byte_aes: f64,
    /// IPsec ESP: cipher and HMAC per byte of every ESP packet sealed or opened.
    #[serde(default)]
    pub per_byte_esp: f64,
    /// IPsec ESP: the fixed cost of each encapsulation or decapsulation (SA lookup,
    /// header building, the HMAC's final blocks).
    #[serde(default)]
    pub per_esp_packet: u64,
    /// ATM: segmentation or reassembly of one cell by the host CPU (0 when the NIC does
    /// SAR in hardware, as the ForeRunnerLE155 of seed 001 §2.6 does).
    #[serde(default)]
    pub per_atm_cell: f64,
    /// OpenVPN: the fixed cost of sealing or opening one data packet (UDP socket,
    /// packet header, HMAC finalisation).
    #[serde(default)]
    pub per_openvpn_packet: u64,
    /// OpenVPN: HMAC and cipher per octet of every data packet sealed or opened.
    #[serde(default)]
    pub per_byte_openvpn: f64,
    /// PPPoE: encapsulating or decapsulating one session frame (the PPP channel work).
    #[serde(default)]
    pub per_pppoe_packet: u64,
    /// PPTP: encapsulating or decapsulating one enhanced-GRE packet (PPP channel, GRE
    /// header, sequence and acknowledgment bookkeeping).
    #[serde(default)]
    pub per_pptp_packet: u64,
    /// PPTP: per octet of every GRE packet sent or taken (the copy into and out of the
    /// PPP channel).
    #[serde(default)]
    pub per_byte_pptp: f64,
}

/// A link between ports.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case", deny_unknown_fields)]
pub enum LinkConfig {
    /// A full-duplex point-to-point Ethernet link.
    Ethernet {
        name: String,
        a: PortRef,
        b: PortRef,
        rate_bps: u64,
        delay_ns: u64,
        /// Each end's output queue: frames and bytes at most (drop-tail).
        queue_frames: usize,
        queue_bytes: usize,
        /// Loss and rate limits of each direction: `[a → b, b → a]`.
        #[serde(default)]
        impair: [Impairment; 2],
    },
    /// An asynchronous serial line (a modem or a null-modem cable) carrying SLIP, CSLIP
    /// or PPP between two point-to-point ports.
    Serial {
        name: String,
        a: PortRef,
        b: PortRef,
        rate_bps: u64,
        /// Character format, e.g. "8n1".
        format: String,
        /// "slip", "cslip" or "ppp".
        framing: String,
        /// "async" (start-stop characters in `format`, the default) or "sync" (PPP in
        /// bit-synchronous HDLC framing, RFC 1662 §5: 8 bits per octet plus inserted
        /// zero bits; `format` unused; framing must be "ppp").
        #[serde(default = "default_clocking")]
        clocking: String,
        /// PPP only: the link options LCP negotiated. Address-and-Control-Field-
        /// Compression (RFC 1661 §6.6), Protocol-Field-Compression (§6.5), and the FCS
        /// in bits, 16 (RFC 1662 §C.2, the default) or 32 (RFC 1570 §2.1, §C.3).
        #[serde(default)]
        acfc: bool,
        #[serde(default)]
        pfc: bool,
        #[serde(default = "default_fcs_bits")]
        fcs_bits: u32,
        /// Modem compression as a ratio (2.0 for 2:1); 1.0 for none.
        compression: f64,
        delay_ns: u64,
        queue_frames: usize,
        #[serde(default)]
        impair: [Impairment; 2],
    },
    /// An 802.11 infrastructure BSS (or an ad hoc cell when `ap` is `None`).
    Wifi(Box<WifiConfig>),
    /// An ATM link of cells (see `atm`).
    Atm(Box<crate::atm::AtmLinkConfig>),
}

/// What one direction of a link does to frames besides carrying them.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Impairment {
    #[serde(default)]
    pub loss: Option<LossConfig>,
    /// A token-bucket shaper (frames wait for tokens before they go on the line) or,
    /// with `police`, a policer (frames without tokens are dropped).
    #[serde(default)]
    pub shaper: Option<ShaperConfig>,
}

/// A loss model (see `impair`).
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
#[serde(tag = "model", rename_all = "kebab-case", deny_unknown_fields)]
pub enum LossConfig {
    /// Each frame lost with probability `p`.
    Bernoulli { p: f64 },
    /// Gilbert-Elliott: p good→bad, r bad→good, k and h the delivery probabilities in the
    /// good and bad states.
    GilbertElliott { p: f64, r: f64, k: f64, h: f64 },
}

/// A token bucket (RFC 2697 §3) on one direction of a link.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShaperConfig {
    pub rate_bps: u64,
    pub burst_bytes: u64,
    /// Police instead of shape: a frame that finds too few tokens is dropped at once
    /// (colour-blind srTCM with red dropped, RFC 2697 §3.3; Linux `tc police … drop`,
    /// a firewall's rate limit) rather than held until its tokens are there. Default false.
    #[serde(default)]
    pub police: bool,
    /// Shaping only: most bytes that may wait for tokens; a frame that would make the
    /// backlog exceed it is dropped (Linux `tc tbf limit`). Default none: frames wait in
    /// the link's own queue, limited only by it.
    #[serde(default)]
    pub queue_bytes: Option<u64>,
}

/// An 802.11 BSS.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WifiConfig {
    pub name: String,
    /// "802.11b" or "802.11g".
    pub standard: String,
    /// Data rate of every station, bit/s.
    pub rate_bps: u64,
    /// "long" or "short" PLCP preamble (802.11b).
    pub preamble: String,
    /// "open", "wep-40", "wep-104", "tkip" or "ccmp".
    pub security: String,
    pub ap: Option<PortRef>,
    pub stations: Vec<PortRef>,
    /// RTS/CTS for MPDUs longer than this many bytes (2347: never).
    pub rts_threshold: u32,
    /// `hears[i][j]`: member i hears member j (members: the AP first, then stations).
    #[serde(default)]
    pub hears: Option<Vec<Vec<bool>>>,
    /// Frame error rate of frames received by each member (same order as `hears`).
    #[serde(default)]
    pub frame_error_rate: Vec<f64>,
    /// Four-address (WDS) frames between these members; station adapters send three.
    #[serde(default)]
    pub wds: bool,
    /// What an AP does with a frame whose source MAC is not the sending station's:
    /// "drop" (what APs do) or "rewrite" (adapters that overwrite the source address).
    pub foreign_source: String,
    /// The transmit queue of each member, frames.
    pub queue_frames: usize,
    /// Per-member transmit queues, frames (same order as `hears`), overriding
    /// `queue_frames`; empty (the default): every member has `queue_frames`.
    #[serde(default)]
    pub member_queue_frames: Vec<usize>,
    /// Per-member PLCP preamble of the data frames it sends, "long" or "short" (same
    /// order as `hears`), overriding `preamble`; empty (the default): every member
    /// sends `preamble`. A station's driver may send long preambles in a cell whose AP
    /// sends short ones (IEEE 802.11-2020 §16.2.2.2: the long format is mandatory).
    #[serde(default)]
    pub member_preamble: Vec<String>,
    /// dot11ShortRetryLimit: attempts of a frame, the first included (default 7,
    /// IEEE 802.11-2020 Annex C; 1 for seed 004's WaveLAN, which never retried).
    #[serde(default = "default_retry_limit")]
    pub retry_limit: u32,
    /// Unicast data frames are acknowledged (an Ack after SIFS, retries on its
    /// absence). Default true (IEEE 802.11-2020 §10.3.2.11); false for seed 004's
    /// WaveLAN, which "does not provide any acknowledgements mechanism".
    #[serde(default = "default_true")]
    pub link_acks: bool,
    /// The AP relays frames from one of its stations to another (and group frames back
    /// into the BSS), as the distribution function does (IEEE 802.11-2020 §4.5.4.2,
    /// §11.3). Default true; false is client isolation (hostapd `ap_isolate=1`).
    #[serde(default = "default_true")]
    pub relay: bool,
    /// Per member (same order as `hears`): whether it exchanges 4-address frames with
    /// the AP (both ends must be WDS-capable, IEEE 802.11-2020 Table 9-26); empty (the
    /// default): every member as `wds`.
    #[serde(default)]
    pub wds_members: Vec<bool>,
    /// One-way propagation delay of the air, ns (default 0): a frame reaches the
    /// receiving node this long after its reception ended on the medium. The MAC's own
    /// timing does not shift (its ACKTimeout budgets up to a slot of round trip), so the
    /// lowering accepts at most half a slot.
    #[serde(default)]
    pub delay_ns: u64,
    /// DCF basic access on an idle medium: "idle-difs" (IEEE 802.11-2020 §10.3.4.2, the
    /// default) or "arrival-difs" (ns-3); see `wifi::dcf::Access`.
    #[serde(default = "default_access")]
    pub access: String,
    /// Control responses' PLCP preamble: "bss" (the BSS's `preamble`, the default) or
    /// "long" (see `wifi::phy::PhyParams::control_preamble`).
    #[serde(default = "default_control_preamble")]
    pub control_preamble: String,
    /// The AP's beacons; none (the default): no beacons.
    #[serde(default)]
    pub beacon: Option<BeaconConfig>,
    /// The 2.4 GHz channel (1-14): the beacons' DS Parameter Set and the capture's
    /// radiotap Channel; none: unknown (no radiotap Channel field). Informational: no
    /// interference between cells is modelled.
    #[serde(default)]
    pub channel: Option<u8>,
}

fn default_control_preamble() -> String {
    "bss".into()
}

/// Beacons of an AP (IEEE 802.11-2020 §11.1.3.2).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BeaconConfig {
    /// dot11BeaconPeriod, ns (102 400 000 = 100 TU is the usual value); a whole number of
    /// TU (1024 µs) for the Beacon Interval field.
    pub interval_ns: u64,
    /// Rate of the beacons, bit/s (a basic rate: 1 Mb/s on most APs).
    pub rate_bps: u64,
    /// The SSID the beacons carry (0-32 bytes).
    pub ssid: String,
}

fn default_access() -> String {
    "idle-difs".into()
}

fn default_true() -> bool {
    true
}

fn default_retry_limit() -> u32 {
    crate::wifi::dcf::DEFAULT_SHORT_RETRY_LIMIT
}

/// A node's port by index.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PortRef {
    pub node: u32,
    pub port: u16,
}

/// The most data an IPv4 datagram of 65,535 bytes (RFC 791 §3.1: Total Length is 16
/// bits) carries after its 20-byte header and an 8-byte UDP (RFC 768) or ICMP echo
/// (RFC 792) header: 65,507, as Linux's `ping -s` and UDP sockets allow.
pub const MAX_IPV4_PAYLOAD_AFTER_8: u32 = 65_535 - 20 - 8;

/// Traffic.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
#[allow(
    clippy::large_enum_variant,
    reason = "a run decodes a few flows once and keeps them in one Vec; boxing the TCP variant would change the configuration's Rust shape, not its cost"
)]
pub enum FlowConfig {
    /// UDP datagrams at a constant rate, or back to back when `rate_pps` is 0 (saturating:
    /// the sender keeps its interface queue non-empty). Each datagram carries a sequence
    /// number and its send time, as iperf's and IXIA's test frames do.
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
    },
    /// ICMP echo requests.
    Ping { id: u32, from: u32, to: Ipv4Addr, count: u32, interval_ns: u64, payload: u32, start_ns: u64 },
    /// UDP echo (RFC 862): `from` sends `count` datagrams of `payload` bytes (a probe at
    /// the start) to `to`:`dst_port` every `interval_ns`; the node holding `to` sends each
    /// one back unchanged to the port it came from. Loss is counted each way: at the echo
    /// server (forward) and back at the source (reverse), with the round-trip time.
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
    /// A bulk TCP transfer, as iperf3 or ttcp make: `from` connects to `to` at `start_ns`
    /// and sends `bytes` (or without end until `stop_ns`); the receiver discards the data.
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

/// What a TCP flow sets differently from `tcp::TcpConfig`'s defaults (Linux's).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TcpOptions {
    /// "cubic" (default) or "newreno".
    #[serde(default)]
    pub congestion: Option<String>,
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
    /// A cap on the exponential RTO backoff (seed 004's router: 100 ms).
    #[serde(default)]
    pub rto_cap_ns: Option<u64>,
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
    /// "off" (default), "classic" (Linux CUBIC's HyStart) or "hystart++" (RFC 9406).
    #[serde(default)]
    pub hystart: Option<String>,
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
    pub cwnd_growth: Option<String>,
    /// Slow start's L in segments with byte counting (default 2, RFC 3465 §2.2); 0 = no
    /// bound (Linux since 3.9).
    #[serde(default)]
    pub slow_start_limit: Option<u32>,
    /// CUBIC's Reno-friendly α: "rfc9438" (default) or "constant" (Linux, ns-3).
    #[serde(default)]
    pub cubic_alpha: Option<String>,
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
            | FlowConfig::UdpEcho { id, .. } => *id,
        }
    }

    /// The sending interval [start, stop) in ns: a UDP flow's configured times; `count`
    /// datagrams one gap apart for ping and UDP echo (one gap each, the last one's too).
    pub fn sending_ns(&self) -> (u64, u64) {
        match self {
            FlowConfig::Udp { start_ns, stop_ns, .. } | FlowConfig::Tcp { start_ns, stop_ns, .. } => {
                (*start_ns, *stop_ns)
            }
            FlowConfig::Ping { start_ns, count, interval_ns, .. }
            | FlowConfig::UdpEcho { start_ns, count, interval_ns, .. } => {
                (*start_ns, start_ns.saturating_add(u64::from(*count).saturating_mul(*interval_ns)))
            }
        }
    }
}

impl SimConfig {
    /// The window of flow `id`: (stop of the sending, end of the wait); without a
    /// configured one, the flow's own stop and no end.
    pub fn window(&self, flow: &FlowConfig) -> (u64, u64) {
        match self.windows.iter().find(|w| w.flow == flow.id()) {
            Some(w) => (w.stop_ns, w.end_ns),
            None => (flow.sending_ns().1, u64::MAX),
        }
    }
}

/// A configuration the simulator cannot run, with the field that says so.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    pub field: String,
    pub message: String,
}

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.field, self.message)
    }
}

impl std::error::Error for ConfigError {}

impl SimConfig {
    /// Refuses what cannot run: dangling port references, a port on two links, zero
    /// rates, a bridge with fewer than two ports, a wifi cell without members.
    pub fn check(&self) -> Result<(), ConfigError> {
        let fail = |field: String, message: String| Err(ConfigError { field, message });
        let mut attached = std::collections::BTreeSet::new();
        let mut attach = |r: &PortRef, field: String| -> Result<(), ConfigError> {
            let node = self
                .nodes
                .get(r.node as usize)
                .ok_or_else(|| ConfigError { field: field.clone(), message: format!("no node {}", r.node) })?;
            if node.ports.get(r.port as usize).is_none() {
                return Err(ConfigError { field, message: format!("node {} has no port {}", node.name, r.port) });
            }
            if !attached.insert((r.node, r.port)) {
                return Err(ConfigError { field, message: format!("port {}:{} is on two links", node.name, r.port) });
            }
            Ok(())
        };
        for (i, link) in self.links.iter().enumerate() {
            match link {
                LinkConfig::Ethernet { a, b, rate_bps, .. } | LinkConfig::Serial { a, b, rate_bps, .. } => {
                    attach(a, format!("links[{i}].a"))?;
                    attach(b, format!("links[{i}].b"))?;
                    if *rate_bps == 0 {
                        return fail(format!("links[{i}].rate_bps"), "a link's rate must be positive".into());
                    }
                }
                LinkConfig::Atm(l) => {
                    attach(&l.a, format!("links[{i}].a"))?;
                    attach(&l.b, format!("links[{i}].b"))?;
                }
                LinkConfig::Wifi(w) => {
                    if let Some(ap) = &w.ap {
                        attach(ap, format!("links[{i}].ap"))?;
                    }
                    for (j, s) in w.stations.iter().enumerate() {
                        attach(s, format!("links[{i}].stations[{j}]"))?;
                    }
                    if w.stations.is_empty() {
                        return fail(format!("links[{i}].stations"), "a wifi cell needs at least one station".into());
                    }
                    if w.rate_bps == 0 {
                        return fail(format!("links[{i}].rate_bps"), "a link's rate must be positive".into());
                    }
                }
            }
        }
        for (i, node) in self.nodes.iter().enumerate() {
            if let Some(bridge) = &node.bridge {
                if bridge.ports.len() < 2 {
                    return fail(
                        format!("nodes[{i}].bridge.ports"),
                        format!("bridge {} needs two ports or more", node.name),
                    );
                }
                for &p in &bridge.ports {
                    if node.ports.get(p as usize).is_none() {
                        return fail(format!("nodes[{i}].bridge.ports"), format!("node {} has no port {p}", node.name));
                    }
                }
            }
        }
        for (i, flow) in self.flows.iter().enumerate() {
            let from = match flow {
                FlowConfig::Udp { from, payload, .. } | FlowConfig::UdpEcho { from, payload, .. } => {
                    if *payload < crate::app::probe::PROBE_HEADER_LEN as u32 {
                        return fail(
                            format!("flows[{i}].payload"),
                            format!(
                                "a UDP test payload carries a {}-byte probe header",
                                crate::app::probe::PROBE_HEADER_LEN
                            ),
                        );
                    }
                    if *payload > MAX_IPV4_PAYLOAD_AFTER_8 {
                        return fail(format!("flows[{i}].payload"), format!("a UDP payload of {payload} bytes: an IPv4 datagram carries at most {MAX_IPV4_PAYLOAD_AFTER_8} after the UDP header (RFC 791 §3.1, RFC 768)"));
                    }
                    *from
                }
                FlowConfig::Ping { from, payload, .. } => {
                    if *payload > MAX_IPV4_PAYLOAD_AFTER_8 {
                        return fail(format!("flows[{i}].payload"), format!("an ICMP echo of {payload} data bytes: an IPv4 datagram carries at most {MAX_IPV4_PAYLOAD_AFTER_8} after the echo header (RFC 791 §3.1, RFC 792)"));
                    }
                    *from
                }
                FlowConfig::Tcp { from, .. } => *from,
            };
            if self.nodes.get(from as usize).is_none() {
                return fail(format!("flows[{i}].from"), format!("no node {from}"));
            }
        }
        for (i, w) in self.windows.iter().enumerate() {
            match self.flows.iter().find(|f| f.id() == w.flow) {
                None => return fail(format!("windows[{i}].flow"), format!("no flow {}", w.flow)),
                Some(FlowConfig::Tcp { .. }) => {
                    return fail(
                        format!("windows[{i}].flow"),
                        format!("flow {} is TCP, measured by its own rules", w.flow),
                    )
                }
                Some(_) => {}
            }
            if w.end_ns < w.stop_ns {
                return fail(
                    format!("windows[{i}].end_ns"),
                    format!("the window ends ({} ns) before the sending stops ({} ns)", w.end_ns, w.stop_ns),
                );
            }
        }
        Ok(())
    }
}
