//! Path MTU discovery end to end, checked on the captured packets with `wire`'s parsers
//! and numbers computed here from the RFCs:
//!
//! a ──1500── r1 ──1400── r2 ──1500── b
//!
//! The 1400-byte link sits between two routers, so neither host's own MTU (nor b's MSS
//! option, 1460) tells it: only RFC 1191 (ICMP "fragmentation needed") or RFC 4821
//! (probing) can find it.

mod common;

use std::net::Ipv4Addr;

use common::{default_via, ethernet_100m, ip_packets, node, port_mtu};
use sim::config::{
    FlowConfig, FragNeeded, IpsecTunnelConfig, NodeConfig, RouteConfig, SimConfig, TcpOptions, TunnelFragment,
};
use sim::results::Results;
use wire::icmpv4::{self, DstUnreachable};
use wire::{ipv4, tcp, IpProtocol};

const S: u64 = 1_000_000_000;
const A: Ipv4Addr = Ipv4Addr::new(10, 0, 1, 1);
const R1_LAN: Ipv4Addr = Ipv4Addr::new(10, 0, 1, 254);
const B: Ipv4Addr = Ipv4Addr::new(10, 0, 3, 1);
/// The bottleneck link's MTU.
const NARROW: u16 = 1400;

/// The path with the middle link's MTU `middle`; `edit` changes the routers.
fn network(
    middle: u16,
    flows: Vec<FlowConfig>,
    duration_ns: u64,
    edit: impl FnOnce(&mut NodeConfig, &mut NodeConfig),
) -> SimConfig {
    let route = |net: [u8; 4], via: [u8; 4]| {
        vec![RouteConfig { destination: Ipv4Addr::from(net), prefix_len: 24, via: Ipv4Addr::from(via) }]
    };
    let a = node("a", vec![port_mtu("eth0", 1, A, 1500)], default_via(R1_LAN), false);
    let mut r1 = node(
        "r1",
        vec![port_mtu("eth0", 2, R1_LAN, 1500), port_mtu("eth1", 3, Ipv4Addr::new(10, 0, 2, 1), middle)],
        route([10, 0, 3, 0], [10, 0, 2, 2]),
        true,
    );
    let mut r2 = node(
        "r2",
        vec![
            port_mtu("eth0", 4, Ipv4Addr::new(10, 0, 2, 2), middle),
            port_mtu("eth1", 5, Ipv4Addr::new(10, 0, 3, 254), 1500),
        ],
        route([10, 0, 1, 0], [10, 0, 2, 1]),
        true,
    );
    let b = node("b", vec![port_mtu("eth0", 6, B, 1500)], default_via(Ipv4Addr::new(10, 0, 3, 254)), false);
    edit(&mut r1, &mut r2);
    SimConfig {
        seed: 1,
        duration_ns,
        nodes: vec![a, r1, r2, b],
        links: vec![
            ethernet_100m("a-r1", (0, 0), (1, 0)),
            ethernet_100m("r1-r2", (1, 1), (2, 0)),
            ethernet_100m("r2-b", (2, 1), (3, 0)),
        ],
        flows,
        capture: true,
        ..Default::default()
    }
}

fn tcp_flow(bytes: u64, options: TcpOptions) -> FlowConfig {
    FlowConfig::Tcp {
        id: 1,
        from: 0,
        to: B,
        dst_port: 5001,
        bytes: Some(bytes),
        start_ns: S / 10,
        stop_ns: 60 * S,
        tcp: options,
        interval_ns: None,
        trace: false,
    }
}

fn udp_flow(dont_fragment: bool) -> FlowConfig {
    // 1472 bytes of UDP payload: a 1500-byte datagram, iperf's default on Ethernet.
    FlowConfig::Udp {
        id: 1,
        from: 0,
        to: B,
        dst_port: 9,
        payload: 1472,
        rate_pps: 100.0,
        start_ns: S / 10,
        stop_ns: S / 10 + S / 2,
        dont_fragment,
        dst_mac: None,
        src_mac: None,
    }
}

fn run(config: SimConfig) -> Results {
    sim::simulate(config).expect("the run completes")
}

fn node_result<'a>(results: &'a Results, name: &str) -> &'a sim::results::NodeResult {
    results.nodes.iter().find(|n| n.name == name).expect("node")
}

/// The ICMP "fragmentation needed" messages in `packets`: (time, next-hop MTU, quoted
/// IPv4 header), each checked against its checksum by `wire`.
fn frag_needed(packets: &[(u64, Vec<u8>)]) -> Vec<(u64, u16, ipv4::Repr)> {
    packets
        .iter()
        .filter_map(|(t, p)| {
            let ip = ipv4::Packet::new_checked(&p[..]).ok()?;
            if ip.next_header() != IpProtocol::Icmp {
                return None;
            }
            let icmp = icmpv4::Packet::new_checked(ip.payload()).ok()?;
            assert!(icmp.verify_checksum(), "ICMP checksum");
            match icmpv4::Repr::parse(&icmp).ok()? {
                icmpv4::Repr::DstUnreachable { reason: DstUnreachable::FragRequired, next_hop_mtu, header } => {
                    assert_eq!(icmp.msg_code(), 4, "RFC 792: code 4, fragmentation needed and DF set");
                    Some((
                        *t,
                        next_hop_mtu,
                        ipv4::Repr::parse_truncated(&ipv4::Packet::new_unchecked(header)).expect("quoted header"),
                    ))
                }
                _ => None,
            }
        })
        .collect()
}

/// TCP segments `from` sent in `packets`: (time, IP length, DF, data length, flags SYN+ACK).
fn tcp_segments(packets: &[(u64, Vec<u8>)], from: Ipv4Addr) -> Vec<(u64, usize, bool, usize, bool)> {
    packets
        .iter()
        .filter_map(|(t, p)| {
            let ip = ipv4::Packet::new_checked(&p[..]).ok()?;
            if ip.next_header() != IpProtocol::Tcp || ip.src_addr() != from {
                return None;
            }
            let seg = tcp::Packet::new_checked(ip.payload()).ok()?;
            Some((*t, usize::from(ip.total_len()), ip.dont_frag(), seg.payload().len(), seg.syn() && seg.ack()))
        })
        .collect()
}

#[test]
fn tcp_learns_the_narrow_link_from_icmp_and_sends_no_more_than_it() {
    let results = run(network(NARROW, vec![tcp_flow(2_000_000, TcpOptions::default())], 10 * S, |_, _| {}));
    let flow = &results.flows[0];
    let tcp = flow.tcp.as_ref().unwrap();
    assert!(tcp.completed_ns.is_some(), "the transfer completes");
    assert_eq!(flow.bytes_received, 2_000_000);
    assert_eq!(tcp.path.path_mtu_bytes, u32::from(NARROW), "RFC 1191: the sender ends at the narrow link's MTU");
    assert!(tcp.path.frag_needed_received >= 1);
    assert!(node_result(&results, "r1").frag_needed_sent >= 1);
    assert_eq!(tcp.timeouts, 0, "ICMP repairs the loss at once, no timeout (tcp_simple_retransmit)");
    assert_eq!(tcp.fast_retransmits, 0, "and it is no congestion event");

    let at_a = ip_packets(&results, "a-eth0");
    let icmps = frag_needed(&at_a);
    let (first, mtu, quoted) = icmps.first().cloned().expect("an ICMP frag-needed reached a");
    assert_eq!(mtu, NARROW, "RFC 1191 §4: the next-hop MTU");
    assert_eq!((quoted.src_addr, quoted.dst_addr, quoted.next_header), (A, B, IpProtocol::Tcp));
    assert!(quoted.dont_frag && quoted.buffer_len() > usize::from(NARROW), "it quotes a too-big DF segment");

    let sent = tcp_segments(&at_a, A);
    assert!(sent.iter().all(|s| s.2), "RFC 1191 §3: every segment with DF");
    assert!(sent.iter().any(|s| s.0 < first && s.1 == 1500), "full 1500-byte segments before the ICMP");
    let after: Vec<_> = sent.iter().filter(|s| s.0 > first).collect();
    assert!(!after.is_empty());
    assert!(after.iter().all(|s| s.1 <= usize::from(NARROW)), "no segment above 1400 bytes of IP afterwards");
    // 1400 − 20 (IPv4) − 20 (TCP) − 12 (timestamps, RFC 7323 §3.2 as Linux lays it out).
    assert_eq!(after.iter().map(|s| s.3).max(), Some(usize::from(NARROW) - 20 - 20 - 12));
    // Nothing was fragmented on the way.
    assert!(ip_packets(&results, "b-eth0").iter().all(|(_, p)| !ipv4::Packet::new_unchecked(&p[..]).is_fragment()));
}

#[test]
fn without_pmtu_discovery_tcp_sends_without_df_and_the_router_fragments() {
    let options = TcpOptions { pmtu_discovery: Some(false), ..TcpOptions::default() };
    let results = run(network(NARROW, vec![tcp_flow(500_000, options)], 10 * S, |_, _| {}));
    assert_eq!(results.flows[0].bytes_received, 500_000);
    assert!(frag_needed(&ip_packets(&results, "a-eth0")).is_empty());
    let sent = tcp_segments(&ip_packets(&results, "a-eth0"), A);
    assert!(sent.iter().all(|s| !s.2), "DF clear (ip_no_pmtu_disc=1)");
    assert!(ip_packets(&results, "r1-eth1").iter().any(|(_, p)| ipv4::Packet::new_unchecked(&p[..]).more_frags()));
}

#[test]
fn udp_without_df_is_fragmented_at_the_router_and_reassembled() {
    let results = run(network(NARROW, vec![udp_flow(false)], S, |_, _| {}));
    let flow = &results.flows[0];
    assert_eq!(flow.sent, 50);
    assert_eq!(flow.received, 50, "every datagram reassembled at b");
    // RFC 791 §3.2: 1480 data bytes over a 1400 MTU: a first fragment of the largest
    // multiple of 8 that fits, the rest after it.
    let first_data = (usize::from(NARROW) - 20) / 8 * 8;
    let expected = [20 + first_data, 20 + 1480 - first_data];
    let on_narrow: Vec<usize> = ip_packets(&results, "r1-eth1")
        .iter()
        .filter(|(_, p)| ipv4::Packet::new_unchecked(&p[..]).next_header() == IpProtocol::Udp)
        .map(|(_, p)| p.len())
        .collect();
    assert_eq!(on_narrow.len(), 100);
    assert_eq!(on_narrow[..2], expected[..]);
    assert!(frag_needed(&ip_packets(&results, "a-eth0")).is_empty(), "no ICMP for DF-clear datagrams");
}

#[test]
fn udp_with_df_is_dropped_and_icmp_code_4_brings_back_1400() {
    let results = run(network(NARROW, vec![udp_flow(true)], S, |_, _| {}));
    let flow = &results.flows[0];
    assert_eq!(flow.received, 0);
    let icmps = frag_needed(&ip_packets(&results, "a-eth0"));
    assert_eq!(icmps.len(), 1, "one ICMP: then a knows the path MTU and refuses the rest itself (EMSGSIZE)");
    let (_, mtu, quoted) = &icmps[0];
    // The field must be the next hop's MTU, the MTU of the r1-r2 link (RFC 1191 §4).
    assert_eq!(*mtu, NARROW);
    assert_eq!((quoted.src_addr, quoted.dst_addr), (A, B));
    assert_eq!(quoted.buffer_len(), 20 + 8 + 1472, "the quoted Total Length is the datagram's");
    assert!(quoted.dont_frag);
    let a = node_result(&results, "a");
    let refused: u64 = a.drops.iter().filter(|(r, _)| r.contains("EMSGSIZE")).map(|(_, n)| n).sum();
    assert_eq!(refused, flow.sent - 1);
    assert_eq!(node_result(&results, "r1").frag_needed_sent, 1);
}

#[test]
fn an_old_router_that_reports_mtu_zero_makes_the_host_use_the_plateau_table() {
    let results = run(network(NARROW, vec![tcp_flow(1_000_000, TcpOptions::default())], 10 * S, |r1, _| {
        r1.pmtu.frag_needed = FragNeeded::ZeroMtu
    }));
    let tcp = results.flows[0].tcp.as_ref().unwrap();
    assert!(tcp.completed_ns.is_some());
    // RFC 1191 §5 and the table of §7: the plateau below the quoted 1500 is 1492, which
    // still does not pass; below 1492 the next is 1006.
    let plateaus = [65535u32, 32000, 17914, 8166, 4352, 2002, 1492, 1006, 508, 296, 68];
    let mut mtu = 1500;
    while mtu > u32::from(NARROW) {
        mtu = *plateaus.iter().find(|&&p| p < mtu).unwrap();
    }
    assert_eq!(tcp.path.path_mtu_bytes, mtu);
    assert!(frag_needed(&ip_packets(&results, "a-eth0")).iter().all(|i| i.1 == 0));
}

#[test]
fn a_black_hole_stalls_bulk_data_after_the_handshake_and_mtu_probing_recovers() {
    let silent = |r1: &mut NodeConfig, _: &mut NodeConfig| r1.pmtu.frag_needed = FragNeeded::Silent;
    let duration = 20 * S;
    let stuck = run(network(NARROW, vec![tcp_flow(4_000_000, TcpOptions::default())], duration, silent));
    let flow = &stuck.flows[0];
    let tcp = flow.tcp.as_ref().unwrap();
    let at_b = ip_packets(&stuck, "b-eth0");
    assert!(tcp_segments(&at_b, B).iter().any(|s| s.4), "the handshake succeeds: b sent its SYN-ACK");
    assert_eq!(flow.bytes_received, 0, "no data byte gets through");
    assert!(tcp.timeouts >= 3 && tcp.retransmits > 0);
    assert!(tcp.path.longest_stall_ns >= duration - S, "stalled to the end");
    assert!(frag_needed(&ip_packets(&stuck, "a-eth0")).is_empty());
    let r1 = node_result(&stuck, "r1");
    assert_eq!(r1.frag_needed_sent, 0);
    assert!(r1.frag_needed_silent > 0);

    let probing = TcpOptions { mtu_probing: Some(1), ..TcpOptions::default() };
    let fixed = run(network(NARROW, vec![tcp_flow(4_000_000, probing)], duration, silent));
    let flow = &fixed.flows[0];
    let tcp = flow.tcp.as_ref().unwrap();
    assert!(tcp.completed_ns.is_some(), "with tcp_mtu_probing=1 the transfer completes");
    assert_eq!(flow.bytes_received, 4_000_000);
    assert!(tcp.path.black_holes_detected >= 1);
    // Linux's black hole detection waits the model time of tcp_retries1 = 3 backed-off
    // timeouts from TCP_RTO_MIN: (2^4 − 1) × 200 ms = 3 s.
    assert!(tcp.path.longest_stall_ns >= 3 * S, "{}", tcp.path.longest_stall_ns);
    assert!(tcp.path.longest_stall_ns < 5 * S, "{}", tcp.path.longest_stall_ns);
    // RFC 4821 §7.2-7.6 as Linux searches: from tcp_base_mss 1024 (an MTU of
    // 1024 + 52) up to 1500, probing the middle until the range is under 8 bytes; a
    // probe passes when it fits the 1400-byte link.
    let (mut low, mut high) = (1024 + 52, 1500);
    while high - low >= 8 {
        let probe = (low + high) / 2;
        if probe <= u32::from(NARROW) {
            low = probe;
        } else {
            high = probe - 1;
        }
    }
    assert_eq!(tcp.path.path_mtu_bytes, low, "the search ends at the largest MTU it proved");
    assert!(tcp.path.mtu_probes > tcp.path.mtu_probes_failed && tcp.path.mtu_probes_failed > 0);
    let sent_after = tcp_segments(&ip_packets(&fixed, "a-eth0"), A);
    assert!(sent_after.iter().any(|s| s.3 > 0 && s.1 <= usize::from(NARROW)));
}

fn esp(
    name: &str,
    local: [u8; 4],
    remote: [u8; 4],
    spi_out: u32,
    spi_in: u32,
    protects: [u8; 4],
    fragment: TunnelFragment,
) -> IpsecTunnelConfig {
    IpsecTunnelConfig {
        name: name.into(),
        local: Ipv4Addr::from(local),
        remote: Ipv4Addr::from(remote),
        spi_out,
        spi_in,
        cipher: qoslab_plan::from_name("3des-cbc").unwrap(),
        auth: qoslab_plan::from_name("hmac-sha1-96").unwrap(),
        protects: vec![(Ipv4Addr::from(protects), 24)],
        mtu: 1500,
        mode: qoslab_plan::from_name("tunnel").unwrap(),
        protocol: qoslab_plan::from_name("esp").unwrap(),
        select_protocol: None,
        select_local_port: None,
        select_remote_port: None,
        fragment,
    }
}

/// r1 and r2 as security gateways with an ESP tunnel (3DES-CBC, HMAC-SHA1-96) over a
/// 1500-byte middle link.
fn tunnelled(fragment: TunnelFragment) -> impl FnOnce(&mut NodeConfig, &mut NodeConfig) {
    move |r1, r2| {
        // The tunnel's routes replace the static ones (which would win a tie).
        r1.routes.clear();
        r2.routes.clear();
        r1.ipsec.push(esp("ipsec0", [10, 0, 2, 1], [10, 0, 2, 2], 0x1000, 0x1001, [10, 0, 3, 0], fragment));
        r2.ipsec.push(esp("ipsec0", [10, 0, 2, 2], [10, 0, 2, 1], 0x1001, 0x1000, [10, 0, 1, 0], fragment));
    }
}

/// RFC 4303 §2.4 and §3.1.2: a tunnel-mode ESP packet of an `inner`-byte packet with
/// 3DES-CBC (8-byte IV and blocks) and HMAC-SHA1-96 (12-byte ICV).
fn esp_len(inner: usize) -> usize {
    20 + 8 + 8 + (inner + 2).div_ceil(8) * 8 + 12
}

#[test]
fn a_tunnel_sends_icmp_with_its_effective_mtu_and_tcp_follows() {
    let results =
        run(network(1500, vec![tcp_flow(1_000_000, TcpOptions::default())], 10 * S, tunnelled(TunnelFragment::Before)));
    // The largest inner packet whose ESP packet fits 1500 (RFC 4301 §8.2.1).
    let effective = (1..=1500).rev().find(|&n| esp_len(n) <= 1500).unwrap();
    let icmps = frag_needed(&ip_packets(&results, "a-eth0"));
    assert!(!icmps.is_empty());
    assert!(icmps.iter().all(|i| usize::from(i.1) == effective), "{icmps:?}");
    let tcp = results.flows[0].tcp.as_ref().unwrap();
    assert!(tcp.completed_ns.is_some());
    assert_eq!(tcp.path.path_mtu_bytes as usize, effective);
    assert!(ip_packets(&results, "r1-eth1").iter().all(|(_, p)| !ipv4::Packet::new_unchecked(&p[..]).is_fragment()));
}

#[test]
fn a_tunnel_fragments_before_or_after_encapsulation_as_configured() {
    let effective = (1..=1500).rev().find(|&n| esp_len(n) <= 1500).unwrap();
    for fragment in [TunnelFragment::Before, TunnelFragment::After] {
        let results = run(network(1500, vec![udp_flow(false)], S, tunnelled(fragment)));
        assert_eq!(results.flows[0].received, 50, "{fragment:?}");
        let outer: Vec<Vec<u8>> = ip_packets(&results, "r1-eth1")
            .into_iter()
            .map(|(_, p)| p)
            .filter(|p| {
                let ip = ipv4::Packet::new_unchecked(&p[..]);
                ip.src_addr() == Ipv4Addr::new(10, 0, 2, 1) && (ip.next_header() == IpProtocol::Esp || ip.is_fragment())
            })
            .collect();
        let sizes: Vec<usize> = outer.iter().take(2).map(|p| p.len()).collect();
        match fragment {
            TunnelFragment::Before => {
                // The 1500-byte datagram cut to the effective MTU (RFC 791 §3.2), then
                // each fragment sealed: two whole ESP packets.
                let first = 20 + (effective - 20) / 8 * 8;
                let second = 20 + 1480 - (first - 20);
                assert_eq!(sizes, vec![esp_len(first), esp_len(second)]);
                assert!(outer.iter().all(|p| !ipv4::Packet::new_unchecked(&p[..]).is_fragment()));
            }
            TunnelFragment::After => {
                // One ESP packet of the whole datagram, fragmented to 1500.
                let whole = esp_len(1500);
                assert_eq!(sizes, vec![1500, 20 + whole - 1500]);
                assert!(ipv4::Packet::new_unchecked(&outer[0][..]).more_frags());
            }
        }
    }
}

#[test]
fn tcp_over_a_transport_mode_sa_is_fragmented_after_the_transform_not_stalled() {
    // a and b protect their traffic to each other with transport-mode ESP; the
    // full-size DF segments plus ESP exceed a's 1500-byte link.
    let sa = |local: Ipv4Addr, remote: Ipv4Addr, spi_out: u32, spi_in: u32| IpsecTunnelConfig {
        mode: qoslab_plan::from_name("transport").unwrap(),
        protects: vec![],
        ..esp("sa", local.octets(), remote.octets(), spi_out, spi_in, [0, 0, 0, 0], TunnelFragment::After)
    };
    let mut config = network(1500, vec![tcp_flow(300_000, TcpOptions::default())], 10 * S, |_, _| {});
    config.nodes[0].ipsec.push(sa(A, B, 0x2000, 0x2001));
    config.nodes[3].ipsec.push(sa(B, A, 0x2001, 0x2000));
    let results = run(config);
    assert_eq!(results.flows[0].bytes_received, 300_000);
    let esp_fragments = ip_packets(&results, "a-eth0")
        .iter()
        .filter(|(_, p)| {
            let ip = ipv4::Packet::new_unchecked(&p[..]);
            ip.src_addr() == A && ip.is_fragment() && !ip.dont_frag()
        })
        .count();
    assert!(esp_fragments > 0, "the ESP datagrams are fragmented at a, without DF");
}
