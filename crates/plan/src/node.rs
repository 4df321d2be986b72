//! A node of the plan: its ports, bridge, routes, NAT, CPU and path-MTU behaviour.
//! Its tunnel ends are in [`crate::tunnel`].

use std::net::Ipv4Addr;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::tunnel::{IpsecTunnelConfig, OpenVpnConfig, PppoeConfig, PptpConfig};

/// A node: its ports, how it forwards, its CPU.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NodeConfig {
    pub name: String,
    /// The role named in the scenario, for reports only; behaviour follows the fields below.
    pub role: NodeRole,
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

/// The kinds of node a scenario names (its `role`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum NodeRole {
    /// An end system.
    Host,
    /// An IP router.
    Router,
    /// A bridging (or L3F, or ICS) host (seed 000).
    Bridge,
    /// An 802.11 access point bridging its cell and its wired ports.
    Ap,
    /// An access point that also routes to a WAN port (a SOHO router).
    ApRouter,
    /// An Ethernet switch.
    Switch,
    /// An ATM switch.
    AtmSwitch,
    /// A LAN emulation server (LECS, LES, BUS) on an ATM port.
    LaneServer,
    /// An MPOA server (a router on the emulated LANs).
    MpoaServer,
}

/// What a node does about packets too big for the next hop, and what it remembers of
/// the path MTUs it learns (RFC 1191). Every default is Linux's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default, JsonSchema)]
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
/// A physical port of a node.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
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
    /// Promiscuous mode: the NIC passes up every frame it receives, whatever its
    /// destination MAC, not only its own, broadcasts and multicasts (a sniffing tester
    /// port, seed 000 §3: IXIA port 2 "captured" frames addressed to station A). On a
    /// port of an L2 bridge (which hears every frame anyway, IEEE 802.1D-2004 §7.5) it
    /// is Windows XP's bridge adapter of seed 000 §3, Fig. 10: a frame arriving on this
    /// port addressed to the bridge's own MAC is relayed to every other port as well
    /// as delivered to the node. Default false.
    #[serde(default)]
    pub promiscuous: bool,
}

/// Ports joined into one bridge.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum BridgeMode {
    /// IEEE 802.1D learning bridge.
    L2,
    /// Seed 000 §2.2: forwarding on IP addresses with proxy ARP (Windows XP's L3F).
    L3f,
}

/// A static route.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RouteConfig {
    pub destination: Ipv4Addr,
    pub prefix_len: u8,
    /// The next hop; it must be on a connected subnet.
    pub via: Ipv4Addr,
}

/// NAT (masquerading) on one interface, as Windows ICS or a SOHO router's WAN does.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
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
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PortForward {
    pub protocol: ForwardProtocol,
    pub port: u16,
    pub to: Ipv4Addr,
    pub to_port: u16,
}

/// The transport protocol of a port forward.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ForwardProtocol {
    /// TCP (RFC 9293).
    Tcp,
    /// UDP (RFC 768).
    Udp,
}

/// The cost model of a node's CPU: a single server with a queue.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
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
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
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
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AtmNicCost {
    /// Set-up time per AAL5 PDU sent, ns.
    pub sar_pdu_ns: u64,
    /// Cells per second the engine segments at most; 0 = the line's cell rate.
    pub sar_cell_rate: u64,
}

/// Cycles per operation; the profile data file says where each number comes from.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, JsonSchema)]
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
