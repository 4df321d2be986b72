//! OpenVPN over TCP (`proto tcp`) in whole runs: a TUN tunnel whose packets ride one TCP
//! connection client → server port 1194, each behind its 16-bit length (OpenVPN's stream
//! format); loss on the WAN is repaired by that TCP, where over UDP it reaches the flow.
//!
//! ```text
//! client ─wan─ server (router) ─lan─ host
//!   tun0 ═══ OpenVPN/TCP 1194 ═══ tun0      (protects 10.9.0.0/24 at the client)
//! ```

use std::collections::BTreeMap;
use std::net::Ipv4Addr;

use sim::config::*;
use wire::openvpn::{Opcode, Packet};
use wire::{ipv4, tcp, IpProtocol};

mod common;
use common::{ip_packets, node, port_mtu};

const S: u64 = 1_000_000_000;
const CLIENT_WAN: Ipv4Addr = Ipv4Addr::new(198, 51, 100, 2);
const SERVER_WAN: Ipv4Addr = Ipv4Addr::new(198, 51, 100, 1);
const LAN_HOST: Ipv4Addr = Ipv4Addr::new(10, 9, 0, 2);

fn tun(server: bool, proto: &str) -> OpenVpnConfig {
    OpenVpnConfig {
        name: "tun0".into(),
        dev: qoslab_plan::from_name("tun").unwrap(),
        server,
        port: None,
        local: if server { SERVER_WAN } else { CLIENT_WAN },
        remote: if server { CLIENT_WAN } else { SERVER_WAN },
        local_port: 1194,
        remote_port: 1194,
        proto: qoslab_plan::from_name(proto).unwrap(),
        cipher: qoslab_plan::from_name("none").unwrap(),
        auth: qoslab_plan::from_name("sha1").unwrap(),
        replay: false,
        fragment: None,
        mtu: 1500,
        protects: if server { vec![(CLIENT_WAN, 32)] } else { vec![(Ipv4Addr::new(10, 9, 0, 0), 24)] },
        key: 0,
    }
}

/// The network with the tunnel over `proto`, loss `p` each way on the WAN.
fn network(proto: &str, p: f64, flows: Vec<FlowConfig>, duration_ns: u64) -> SimConfig {
    let mut client = node("client", vec![port_mtu("eth0", 1, CLIENT_WAN, 1500)], vec![], false);
    client.openvpn.push(tun(false, proto));
    let mut server = node(
        "server",
        vec![port_mtu("eth0", 10, SERVER_WAN, 1500), port_mtu("eth1", 11, Ipv4Addr::new(10, 9, 0, 1), 1500)],
        vec![],
        true,
    );
    server.openvpn.push(tun(true, proto));
    let host = node(
        "host",
        vec![port_mtu("eth0", 20, LAN_HOST, 1500)],
        common::default_via(Ipv4Addr::new(10, 9, 0, 1)),
        false,
    );
    let mut wan = common::ethernet_100m("wan", (0, 0), (1, 0));
    if let LinkConfig::Ethernet { impair, delay_ns, .. } = &mut wan {
        *delay_ns = 5_000_000;
        let loss = Impairment { loss: Some(LossConfig::Bernoulli { p }), shaper: None };
        *impair = [loss.clone(), loss];
    }
    let links = vec![wan, common::ethernet_100m("lan", (1, 1), (2, 0))];
    SimConfig {
        seed: 4,
        duration_ns,
        nodes: vec![client, server, host],
        links,
        flows,
        capture: true,
        ..Default::default()
    }
}

fn udp_flow(count: u64) -> FlowConfig {
    FlowConfig::Udp {
        id: 1,
        from: 0,
        to: LAN_HOST,
        dst_port: 9,
        payload: 200,
        rate_pps: 200.0,
        start_ns: S,
        stop_ns: S + count * S / 200,
        dont_fragment: false,
        dst_mac: None,
        src_mac: None,
    }
}

/// The client → server TCP stream on the WAN (seen at the client's port), from the
/// octet after the SYN, with retransmissions folded in; and where each segment began.
fn client_stream(results: &sim::results::Results) -> (Vec<u8>, Vec<usize>) {
    let mut isn = None;
    let mut pieces: BTreeMap<u32, Vec<u8>> = BTreeMap::new();
    for (_, p) in ip_packets(results, "client-eth0") {
        let ip = ipv4::Packet::new_checked(&p[..]).unwrap();
        if ip.src_addr() != CLIENT_WAN {
            continue;
        }
        assert_eq!(ip.next_header(), IpProtocol::Tcp, "only TCP leaves the client on the WAN");
        let seg = tcp::Packet::new_checked(ip.payload()).unwrap();
        assert_eq!(seg.dst_port(), 1194);
        assert!((32_768..=60_999).contains(&seg.src_port()), "an ephemeral client port");
        if seg.syn() {
            isn = Some(seg.seq_number().0 as u32);
        }
        if !seg.payload().is_empty() {
            let offset = (seg.seq_number().0 as u32).wrapping_sub(isn.unwrap().wrapping_add(1));
            pieces.entry(offset).or_insert_with(|| seg.payload().to_vec());
        }
    }
    let mut stream = Vec::new();
    let mut starts = Vec::new();
    for (offset, data) in pieces {
        let offset = offset as usize;
        if offset > stream.len() {
            break; // a hole at the end of the run
        }
        if offset + data.len() > stream.len() {
            starts.push(offset);
            stream.extend_from_slice(&data[stream.len() - offset..]);
        }
    }
    (stream, starts)
}

/// Cuts the stream into length-prefixed packets (the 2-octet big-endian length read
/// here, not by the wire crate); returns the packets and where each began.
fn packets(stream: &[u8]) -> Vec<(usize, &[u8])> {
    let mut out = Vec::new();
    let mut at = 0;
    while at + 2 <= stream.len() {
        let len = usize::from(stream[at]) << 8 | usize::from(stream[at + 1]);
        if at + 2 + len > stream.len() {
            break;
        }
        out.push((at, &stream[at + 2..at + 2 + len]));
        at += 2 + len;
    }
    out
}

#[test]
fn a_tcp_transfer_crosses_and_the_wan_stream_is_length_prefixed_openvpn() {
    let flow = FlowConfig::Tcp {
        id: 1,
        from: 0,
        to: LAN_HOST,
        dst_port: 5201,
        bytes: Some(300_000),
        start_ns: S / 2,
        stop_ns: 20 * S,
        tcp: TcpOptions::default(),
        interval_ns: None,
        trace: false,
    };
    let results = sim::simulate(network("tcp", 0.0, vec![flow], 10 * S)).unwrap();
    let tcp = results.flows[0].tcp.as_ref().unwrap();
    assert!(tcp.completed_ns.is_some(), "the transfer completes; drops: {:?}", results.drop_log.first());
    assert_eq!(results.flows[0].bytes_received, 300_000);

    let (stream, starts) = client_stream(&results);
    let cut = packets(&stream);
    // Every packet is P_DATA_V2 (opcode 9, 1 + 3 octets), HMAC-SHA1 (20), then one whole
    // inner IPv4 packet from the client to the host: 24 octets of OpenVPN around it.
    let mut inner_payload = 0;
    for (_, p) in &cut {
        let packet = Packet::new_checked(*p).unwrap();
        assert_eq!(packet.opcode(), Opcode::DataV2);
        let inner = ipv4::Packet::new_checked(&p[24..]).unwrap();
        assert_eq!(usize::from(inner.total_len()), p.len() - 24, "one whole inner packet");
        assert_eq!((inner.src_addr(), inner.dst_addr()), (CLIENT_WAN, LAN_HOST));
        let seg = tcp::Packet::new_checked(inner.payload()).unwrap();
        inner_payload += seg.payload().len();
    }
    // The packets tile the stream up to its end (the last may be cut off by the run).
    let last = cut.last().unwrap();
    assert!(stream.len() - (last.0 + 2 + last.1.len()) < 2 + 1600);
    assert!(inner_payload >= 300_000, "the inner transfer's data (with its retransmissions): {inner_payload}");
    // A stream, not a datagram per segment: full-size inner packets (1500 + 24 + 2 > the
    // 1460-octet MSS) span segments, so packet and segment boundaries part ways.
    let boundaries: std::collections::BTreeSet<usize> = cut.iter().map(|(at, _)| *at).collect();
    let straddled = starts.iter().filter(|s| !boundaries.contains(s)).count();
    assert!(straddled > cut.len() / 2, "{straddled} of {} segments start inside a packet", starts.len());
}

#[test]
fn one_percent_wan_loss_reaches_the_flow_over_udp_but_not_over_tcp() {
    let count = 2_000;
    let over_tcp = sim::simulate(network("tcp", 0.01, vec![udp_flow(count)], 20 * S)).unwrap();
    let over_udp = sim::simulate(network("udp", 0.01, vec![udp_flow(count)], 20 * S)).unwrap();
    let (t, u) = (&over_tcp.flows[0], &over_udp.flows[0]);
    assert_eq!(t.sent, count);
    assert_eq!(u.sent, count);
    // Over TCP the outer connection retransmits what the WAN lost: every datagram arrives.
    assert_eq!(t.received, count, "drops: {:?}", over_tcp.drop_log.first());
    // The WAN did lose segments (retransmissions seen at the client's port).
    let (stream, _) = client_stream(&over_tcp);
    let sent_octets: usize = ip_packets(&over_tcp, "client-eth0")
        .iter()
        .filter(|(_, p)| p[12..16] == CLIENT_WAN.octets())
        .map(|(_, p)| tcp::Packet::new_checked(&p[20..]).unwrap().payload().len())
        .sum();
    assert!(sent_octets > stream.len(), "retransmitted octets: {}", sent_octets - stream.len());
    assert_eq!(packets(&stream).len() as u64, count);
    // Over UDP each datagram crosses the WAN once, lost with p = 1 %: binomial(2000, 0.01)
    // has mean 20 and standard deviation 4.45; within 3 of them.
    let lost = count - u.received;
    assert!((7..=33).contains(&lost), "lost {lost} of {count} over UDP");
}

#[test]
fn the_client_cpu_pays_each_seal_as_over_udp() {
    let mut config = network("tcp", 0.0, vec![udp_flow(100)], 3 * S);
    let cycles = CpuCycles { per_openvpn_packet: 10_000, per_byte_openvpn: 10.0, ..CpuCycles::default() };
    config.nodes[0].cpu = CpuConfig {
        profile: "t".into(),
        hz: 1_000_000_000,
        queue_limit: 1000,
        cycles,
        atm_nic: Default::default(),
        rx_latency: Default::default(),
    };
    let results = sim::simulate(config).unwrap();
    assert_eq!((results.flows[0].sent, results.flows[0].received), (100, 100));
    // Each packet in the stream was sealed once: the per-packet cost and, per octet, the
    // packet as OpenVPN made it (without the 2-octet length), as over UDP.
    let (stream, _) = client_stream(&results);
    let expected: f64 = packets(&stream).iter().map(|(_, p)| 10_000.0 + 10.0 * p.len() as f64).sum();
    let busy_ns = results.nodes[0].cpu_utilization * (3 * S) as f64;
    assert!((busy_ns - expected).abs() < 1.0, "busy {busy_ns} ns, computed {expected} ns at 1 GHz");
}
