//! The three ways seed 000 §2 joins a wired LAN to a Wi-Fi LAN, checked on real frames:
//! built with `wire`, passed through `sim::node::forward`, parsed back with `wire` (which
//! verifies every checksum).
//!
//! - L3F: seed 000 Fig. 6 replayed ARP exchange by ARP exchange; the ARP tables WS1 and
//!   WS2 build from the replies they get must be the seed's Tables 2 and 3.
//! - NAT: seed 000 §2.3 / Fig. 7, station A as an ICS host between LAN2 (inside,
//!   192.168.0.0/24) and LAN1 (outside, 192.168.1.101).

use std::collections::{BTreeMap, VecDeque};
use std::net::{Ipv4Addr, SocketAddrV4};

use sim::node::forward::{
    DropReason, Inbound, L3fBridge, L3fEntry, LearningBridge, Nat, NatProtocol, Output, PortForward,
};
use wire::arp::{self, Operation};
use wire::ethernet::{self, Address as Mac, EtherType};
use wire::icmpv4;
use wire::ipv4::{self, Protocol};
use wire::tcp;
use wire::udp;

const S: u64 = 1_000_000_000;

// ---------------------------------------------------------------------------------
// Seed 000 Fig. 6: WS1 — AP ~~wireless~~ station A (L3F bridge) — WS2.
//
// Seed 000 §2.2 names the ports: station A receives WS1's ARP request "on its port 1",
// and sends WS1's packets to WS2 "via Port-2". WS1 sits on the AP's wired LAN (LAN1), so
// port 1 is station A's wireless adapter (MAC-A1), facing the AP and, through it, WS1;
// port 2 is its Ethernet adapter (MAC-A2), on WS2's LAN2.
// ---------------------------------------------------------------------------------

const MAC_A1: [u8; 6] = [0x00, 0x0a, 0x0a, 0x00, 0x00, 0xa1];
const MAC_A2: [u8; 6] = [0x00, 0x0a, 0x0a, 0x00, 0x00, 0xa2];
const MAC_1: [u8; 6] = [0x00, 0x01, 0x01, 0x00, 0x00, 0x01];
const MAC_2: [u8; 6] = [0x00, 0x02, 0x02, 0x00, 0x00, 0x02];
const MAC_AP: [u8; 6] = [0x00, 0x0c, 0x41, 0x00, 0x00, 0x01];

const IP_AP: Ipv4Addr = Ipv4Addr::new(192, 168, 1, 1);
const IP_WS1: Ipv4Addr = Ipv4Addr::new(192, 168, 1, 100);
const IP_A: Ipv4Addr = Ipv4Addr::new(192, 168, 1, 101);
const IP_WS2: Ipv4Addr = Ipv4Addr::new(192, 168, 1, 102);

/// The seed's names for the MACs of Fig. 6.
fn mac_name(mac: [u8; 6]) -> &'static str {
    match mac {
        MAC_A1 => "MAC-A1",
        MAC_A2 => "MAC-A2",
        MAC_1 => "MAC-1",
        MAC_2 => "MAC-2",
        MAC_AP => "MAC-AP",
        _ => "?",
    }
}

/// A host on one of the bridge's segments: answers ARP requests for its own address
/// (RFC 826) and records the ARP replies addressed to it.
struct Host {
    ip: Ipv4Addr,
    mac: [u8; 6],
    port: u16,
    /// IP → MAC, from the ARP replies this host received.
    arp_table: BTreeMap<Ipv4Addr, [u8; 6]>,
}

fn arp_frame(src: [u8; 6], dst: [u8; 6], repr: &arp::Repr) -> Vec<u8> {
    let mut body = vec![0; repr.buffer_len()];
    repr.emit(&mut arp::Packet::new_unchecked(&mut body[..]));
    let mut frame = Vec::new();
    ethernet::Repr { src_addr: Mac(src), dst_addr: Mac(dst), ethertype: EtherType::Arp }
        .encapsulate(&body, false, &mut frame);
    frame
}

fn parse_arp(frame: &[u8]) -> Option<(ethernet::Repr, arp::Repr)> {
    let (eth, body) = ethernet::decapsulate(frame, false).ok()?;
    if eth.ethertype != EtherType::Arp {
        return None;
    }
    Some((eth, arp::Repr::parse(&arp::Packet::new_checked(body).ok()?).ok()?))
}

/// The Fig. 6 network: the bridge, its two segments and their hosts.
struct Fig6 {
    bridge: L3fBridge,
    hosts: Vec<Host>,
    now: u64,
    /// Every frame the bridge sent: (port, frame).
    sent: Vec<(u16, Vec<u8>)>,
}

impl Fig6 {
    fn new() -> Fig6 {
        let mut bridge = L3fBridge::new(&[(1, MAC_A1), (2, MAC_A2)], Some(IP_A), 24);
        bridge.set_gateway(Some(IP_AP));
        let host = |ip, mac, port| Host { ip, mac, port, arp_table: BTreeMap::new() };
        Fig6 {
            bridge,
            hosts: vec![host(IP_WS1, MAC_1, 1), host(IP_AP, MAC_AP, 1), host(IP_WS2, MAC_2, 2)],
            now: 0,
            sent: Vec::new(),
        }
    }

    fn host(&self, ip: Ipv4Addr) -> &Host {
        self.hosts.iter().find(|h| h.ip == ip).unwrap()
    }

    /// `from` broadcasts "who has `target`" and the network runs until it is quiet.
    fn arp(&mut self, from: Ipv4Addr, target: Ipv4Addr) {
        let h = self.host(from);
        let request = arp::Repr::request(Mac(h.mac), h.ip, target);
        let frame = arp_frame(h.mac, [0xff; 6], &request);
        self.run(h.port, Some(h.mac), frame);
    }

    /// Delivers `frame`, sent on segment `port` by host `sender` (or by the bridge when
    /// `None`), to the segment's hosts and to the bridge, and everything that follows.
    fn run(&mut self, port: u16, sender: Option<[u8; 6]>, frame: Vec<u8>) {
        let mut queue = VecDeque::from([(port, sender, frame)]);
        while let Some((port, sender, frame)) = queue.pop_front() {
            self.now += 1_000; // 1 µs a hop
            let dst = ethernet::Frame::new_checked(&frame[..]).unwrap().dst_addr();
            for h in self.hosts.iter_mut().filter(|h| h.port == port && Some(h.mac) != sender) {
                if dst != Mac(h.mac) && !dst.is_broadcast() {
                    continue;
                }
                let Some((_, arp)) = parse_arp(&frame) else { continue };
                let arp::Repr::EthernetIpv4 {
                    operation,
                    source_hardware_addr,
                    source_protocol_addr,
                    target_protocol_addr,
                    ..
                } = arp;
                if target_protocol_addr != h.ip {
                    continue;
                }
                match operation {
                    Operation::Request => {
                        let reply = arp::Repr::reply_to(&arp, Mac(h.mac));
                        queue.push_back((port, Some(h.mac), arp_frame(h.mac, source_hardware_addr.0, &reply)));
                    }
                    Operation::Reply => {
                        h.arp_table.insert(source_protocol_addr, source_hardware_addr.0);
                    }
                    _ => {}
                }
            }
            if sender.is_some() {
                let mut out = Vec::new();
                // A frame the bridge does not want (e.g. an ARP request a host on the
                // same segment answers) is dropped with a reason; nothing to deliver.
                let _ = self.bridge.process(self.now, port, &frame, &mut out);
                for (output, frame) in out {
                    if let Output::Port(p) = output {
                        self.sent.push((p, frame.clone()));
                        queue.push_back((p, None, frame));
                    }
                }
            }
        }
    }

    /// `host`'s ARP table with the seed's MAC names.
    fn arp_table(&self, ip: Ipv4Addr) -> Vec<(Ipv4Addr, &'static str)> {
        self.host(ip).arp_table.iter().map(|(&ip, &mac)| (ip, mac_name(mac))).collect()
    }

    /// Seed 000 §2.2 in full: WS1 → station A, WS1 → WS2, WS2 → WS1, WS2 → the gateway,
    /// WS2 → station A.
    fn converse() -> Fig6 {
        let mut net = Fig6::new();
        net.arp(IP_WS1, IP_A);
        net.arp(IP_WS1, IP_WS2);
        net.arp(IP_WS2, IP_WS1);
        net.arp(IP_WS2, IP_AP);
        net.arp(IP_WS2, IP_A);
        net
    }
}

#[test]
fn l3f_fig6_arp_tables_are_the_seeds_tables_2_and_3() {
    let net = Fig6::converse();

    // Seed 000 Table 2, "ARP Table of 192.168.1.100 in FIG. 6".
    let table_2 = vec![(Ipv4Addr::new(192, 168, 1, 101), "MAC-A1"), (Ipv4Addr::new(192, 168, 1, 102), "MAC-A1")];
    // Seed 000 Table 3, "ARP Table of 192.168.1.102 in FIG. 6".
    let table_3 = vec![
        (Ipv4Addr::new(192, 168, 1, 1), "MAC-A2"),
        (Ipv4Addr::new(192, 168, 1, 100), "MAC-A2"),
        (Ipv4Addr::new(192, 168, 1, 101), "MAC-A2"),
    ];
    assert_eq!(net.arp_table(IP_WS1), table_2);
    assert_eq!(net.arp_table(IP_WS2), table_3);

    // "WS1 does not know WS2 and WS2 does not know WS1", but the bridge knows both
    // (Fig. 6's L3F table), and the gateway, which WS2 asked for.
    let l3f = net.bridge.table(net.now);
    assert!(l3f.contains(&L3fEntry { ip: IP_WS1, port: 1, mac: MAC_1 }));
    assert!(l3f.contains(&L3fEntry { ip: IP_WS2, port: 2, mac: MAC_2 }));
    assert!(l3f.contains(&L3fEntry { ip: IP_AP, port: 1, mac: MAC_AP }));
    assert_eq!(l3f.len(), 3);
}

#[test]
fn l3f_fig6_every_frame_on_a_port_carries_that_ports_mac() {
    // What makes L3F work through a station adapter (seed 000 §2.1, Table 1): it can
    // only send frames whose source is its own MAC.
    let net = Fig6::converse();
    assert!(!net.sent.is_empty());
    for (port, frame) in &net.sent {
        let own = if *port == 1 { MAC_A1 } else { MAC_A2 };
        let (eth, arp) = parse_arp(frame).expect("only ARP in this exchange");
        assert_eq!(eth.src_addr, Mac(own), "Ethernet source on port {port}");
        let arp::Repr::EthernetIpv4 { source_hardware_addr, .. } = arp;
        assert_eq!(source_hardware_addr, Mac(own), "ARP sender hardware address on port {port}");
    }
    // The bridge asked on the other side for what it did not know, as itself: the
    // request for WS2 went out on port 2 only, from MAC-A2 and 192.168.1.101.
    let asks: Vec<_> = net
        .sent
        .iter()
        .filter_map(|(p, f)| parse_arp(f).map(|(_, a)| (*p, a)))
        .filter(|(_, a)| matches!(a, arp::Repr::EthernetIpv4 { operation: Operation::Request, .. }))
        .collect();
    assert_eq!(
        asks,
        vec![(2, arp::Repr::request(Mac(MAC_A2), IP_A, IP_WS2)), (1, arp::Repr::request(Mac(MAC_A1), IP_A, IP_AP)),]
    );
}

fn udp_datagram(src: SocketAddrV4, dst: SocketAddrV4, ttl: u8, payload: &[u8]) -> Vec<u8> {
    let mut segment = Vec::new();
    udp::Repr { src_port: src.port(), dst_port: dst.port() }.encapsulate(src.ip(), dst.ip(), payload, &mut segment);
    let mut repr = ipv4::Repr::new(*src.ip(), *dst.ip(), Protocol::Udp, segment.len(), ttl);
    repr.ident = 0x1234;
    let mut packet = Vec::new();
    repr.encapsulate(&segment, &mut packet);
    packet
}

fn ethernet_frame(src: [u8; 6], dst: [u8; 6], payload: &[u8]) -> Vec<u8> {
    let mut frame = Vec::new();
    ethernet::Repr { src_addr: Mac(src), dst_addr: Mac(dst), ethertype: EtherType::Ipv4 }
        .encapsulate(payload, false, &mut frame);
    frame
}

/// Parses a forwarded frame back with `wire`: the Ethernet header, the IPv4 datagram
/// (header checksum verified) and its UDP datagram (checksum verified).
fn parse_udp_frame(frame: &[u8]) -> (ethernet::Repr, ipv4::Repr, udp::Repr, Vec<u8>) {
    let (eth, body) = ethernet::decapsulate(frame, false).unwrap();
    let ip_packet = ipv4::Packet::new_checked(body).unwrap();
    let ip = ipv4::Repr::parse(&ip_packet).expect("IPv4 header and checksum");
    let datagram = body[..ip.buffer_len()].to_vec();
    let segment = udp::Packet::new_checked(ip_packet.payload()).unwrap();
    let u = udp::Repr::parse(&segment, &ip.src_addr, &ip.dst_addr).expect("UDP checksum");
    (eth, ip, u, datagram)
}

#[test]
fn l3f_fig6_unicast_is_relayed_with_a_new_mac_header_and_the_ip_datagram_untouched() {
    let mut net = Fig6::converse();
    let now = net.now;
    // WS1 (Windows, TTL 128) sends to WS2 at the MAC its ARP table gives: MAC-A1.
    let to_ws2 = net.host(IP_WS1).arp_table[&IP_WS2];
    assert_eq!(to_ws2, MAC_A1);
    for payload_len in [4usize, 1472] {
        let datagram =
            udp_datagram(SocketAddrV4::new(IP_WS1, 1025), SocketAddrV4::new(IP_WS2, 7), 128, &vec![0x5a; payload_len]);
        let mut out = Vec::new();
        net.bridge.process(now, 1, &ethernet_frame(MAC_1, to_ws2, &datagram), &mut out).unwrap();
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].0, Output::Port(2));
        let (eth, ip, u, forwarded) = parse_udp_frame(&out[0].1);
        // Seed 000 §2.2: "MAC-2 as the destination address and its own MAC address
        // (MAC-A2) as the source address ... exported via Port-2 to WS2".
        assert_eq!((eth.src_addr, eth.dst_addr), (Mac(MAC_A2), Mac(MAC_2)));
        // A bridge: the IP datagram is byte for byte what WS1 sent, TTL included.
        assert_eq!(forwarded, datagram);
        assert_eq!(ip.hop_limit, 128);
        assert_eq!((u.src_port, u.dst_port), (1025, 7));
    }

    // WS2 → WS1, the other way, through MAC-A2 and out of port 1 from MAC-A1.
    let datagram = udp_datagram(SocketAddrV4::new(IP_WS2, 7), SocketAddrV4::new(IP_WS1, 1025), 128, b"echo");
    let mut out = Vec::new();
    net.bridge.process(now, 2, &ethernet_frame(MAC_2, MAC_A2, &datagram), &mut out).unwrap();
    let (eth, _, _, forwarded) = parse_udp_frame(&out[0].1);
    assert_eq!((out[0].0, eth.src_addr, eth.dst_addr), (Output::Port(1), Mac(MAC_A1), Mac(MAC_1)));
    assert_eq!(forwarded, datagram);

    // WS2 surfs the Internet through its default gateway, 192.168.1.1 at MAC-A2: the
    // bridge relays to the AP.
    let datagram =
        udp_datagram(SocketAddrV4::new(IP_WS2, 3000), SocketAddrV4::new(Ipv4Addr::new(198, 51, 100, 7), 53), 128, b"q");
    out.clear();
    net.bridge.process(now, 2, &ethernet_frame(MAC_2, MAC_A2, &datagram), &mut out).unwrap();
    let (eth, _, _, forwarded) = parse_udp_frame(&out[0].1);
    assert_eq!((out[0].0, eth.src_addr, eth.dst_addr), (Output::Port(1), Mac(MAC_A1), Mac(MAC_AP)));
    assert_eq!(forwarded, datagram);

    // To station A itself: up to its own stack, untouched.
    let datagram = udp_datagram(SocketAddrV4::new(IP_WS1, 1025), SocketAddrV4::new(IP_A, 7), 128, b"hi");
    let frame = ethernet_frame(MAC_1, MAC_A1, &datagram);
    out.clear();
    net.bridge.process(now, 1, &frame, &mut out).unwrap();
    assert_eq!(out, vec![(Output::Local, frame)]);

    // A destination nobody has heard of is dropped, with the reason.
    let datagram =
        udp_datagram(SocketAddrV4::new(IP_WS1, 1025), SocketAddrV4::new(Ipv4Addr::new(192, 168, 1, 77), 7), 128, b"?");
    out.clear();
    let r = net.bridge.process(now, 1, &ethernet_frame(MAC_1, MAC_A1, &datagram), &mut out);
    let reason = r.unwrap_err();
    assert_eq!(reason, DropReason::L3fUnknownDestination { ip: Ipv4Addr::new(192, 168, 1, 77) });
    assert_eq!(reason.at("a").to_string(), "L3F bridge on a: no L3F table entry for 192.168.1.77");
    assert!(out.iter().all(|(o, _)| *o == Output::Port(2)), "only ARP requests on the other side");
}

#[test]
fn l3f_broadcasts_flood_to_the_other_ports_and_go_up() {
    let mut net = Fig6::converse();
    for dst in [Ipv4Addr::BROADCAST, Ipv4Addr::new(192, 168, 1, 255)] {
        // NetBIOS name service, as Windows broadcasts it.
        let datagram = udp_datagram(SocketAddrV4::new(IP_WS2, 137), SocketAddrV4::new(dst, 137), 128, b"nbns");
        let frame = ethernet_frame(MAC_2, [0xff; 6], &datagram);
        let mut out = Vec::new();
        net.bridge.process(net.now, 2, &frame, &mut out).unwrap();
        assert_eq!(out.len(), 2);
        let (eth, _, _, forwarded) = parse_udp_frame(&out[0].1);
        assert_eq!((out[0].0, eth.src_addr, eth.dst_addr), (Output::Port(1), Mac(MAC_A1), Mac::BROADCAST));
        assert_eq!(forwarded, datagram);
        assert_eq!(out[1], (Output::Local, frame));
    }
    // A gratuitous ARP from WS2 is passed on as the bridge's own announcement, so WS1
    // keeps WS2 at MAC-A1.
    let announce = arp::Repr::request(Mac(MAC_2), IP_WS2, IP_WS2);
    let mut out = Vec::new();
    net.bridge.process(net.now, 2, &arp_frame(MAC_2, [0xff; 6], &announce), &mut out).unwrap();
    let (eth, arp) = parse_arp(&out[0].1).unwrap();
    assert_eq!((out.len(), out[0].0, eth.src_addr), (1, Output::Port(1), Mac(MAC_A1)));
    assert_eq!(arp, arp::Repr::request(Mac(MAC_A1), IP_WS2, IP_WS2));
}

#[test]
fn l2f_relays_other_hosts_source_macs_which_a_station_adapter_cannot_send() {
    // Seed 000 §2.1, Fig. 5: station A as an 802.1D bridge (one bridge MAC, port 1 the
    // wireless adapter). WS2's frame to WS1 leaves port 1 with MAC-2 as its source: an
    // 802.11 station sends only three-address frames with its own address as SA (Table 1
    // has no case 11 for adapters), so the frame cannot reach WS1 as it is.
    let mut bridge = LearningBridge::new(&[1, 2], 300 * S, MAC_A1);
    let datagram = udp_datagram(SocketAddrV4::new(IP_WS2, 7), SocketAddrV4::new(IP_WS1, 1025), 128, b"l2f");
    let frame = ethernet_frame(MAC_2, MAC_1, &datagram);
    let f = bridge.forward(0, 2, &frame);
    assert_eq!(f.to_ports.iter().collect::<Vec<_>>(), vec![1], "unknown WS1: flooded to port 1");
    let (eth, _) = ethernet::decapsulate(&frame, false).unwrap();
    assert_eq!(eth.src_addr, Mac(MAC_2), "an 802.1D bridge relays the frame unchanged");
    assert_ne!(eth.src_addr, Mac(MAC_A1));
}

// ---------------------------------------------------------------------------------
// Seed 000 §2.3, Fig. 7: station A as an ICS host. Outside (wireless, LAN1):
// 192.168.1.101; inside (wired, LAN2): 192.168.0.1, with WS2 at 192.168.0.102.
// ---------------------------------------------------------------------------------

const OUTSIDE: Ipv4Addr = Ipv4Addr::new(192, 168, 1, 101);
const INSIDE_WS2: Ipv4Addr = Ipv4Addr::new(192, 168, 0, 102);
const INSIDE_WS3: Ipv4Addr = Ipv4Addr::new(192, 168, 0, 103);
const OUTSIDE_WS1: Ipv4Addr = Ipv4Addr::new(192, 168, 1, 100);
const UDP_TIMEOUT: u64 = 30 * S;

fn ics() -> Nat {
    Nat::new(OUTSIDE, UDP_TIMEOUT, &[])
}

fn ping(src: Ipv4Addr, dst: Ipv4Addr, request: bool, ident: u16, seq_no: u16) -> Vec<u8> {
    let data = b"abcdefghijklmnopqrstuvwabcdefghi"; // Windows ping's 32 bytes
    let repr = if request {
        icmpv4::Repr::EchoRequest { ident, seq_no, data }
    } else {
        icmpv4::Repr::EchoReply { ident, seq_no, data }
    };
    let mut icmp = Vec::new();
    repr.encapsulate(&mut icmp);
    let mut packet = Vec::new();
    ipv4::Repr::new(src, dst, Protocol::Icmp, icmp.len(), 128).encapsulate(&icmp, &mut packet);
    packet
}

/// Parses an ICMP echo datagram with `wire` (both checksums verified).
fn parse_echo(packet: &[u8]) -> (ipv4::Repr, u16, u16) {
    let ip_packet = ipv4::Packet::new_checked(packet).unwrap();
    let ip = ipv4::Repr::parse(&ip_packet).expect("IPv4 checksum");
    let msg = icmpv4::Packet::new_checked(ip_packet.payload()).unwrap();
    match icmpv4::Repr::parse(&msg).expect("ICMP checksum") {
        icmpv4::Repr::EchoRequest { ident, seq_no, .. } | icmpv4::Repr::EchoReply { ident, seq_no, .. } => {
            (ip, ident, seq_no)
        }
        other => panic!("not an echo: {other:?}"),
    }
}

fn parse_udp(packet: &[u8]) -> (ipv4::Repr, udp::Repr) {
    let ip_packet = ipv4::Packet::new_checked(packet).unwrap();
    let ip = ipv4::Repr::parse(&ip_packet).expect("IPv4 checksum");
    let u = udp::Repr::parse(&udp::Packet::new_checked(ip_packet.payload()).unwrap(), &ip.src_addr, &ip.dst_addr)
        .expect("UDP checksum");
    (ip, u)
}

fn sock(ip: Ipv4Addr, port: u16) -> SocketAddrV4 {
    SocketAddrV4::new(ip, port)
}

#[test]
fn nat_inside_ping_goes_out_masqueraded_and_its_reply_comes_back() {
    let mut nat = ics();
    let mut p = ping(INSIDE_WS2, OUTSIDE_WS1, true, 0x0200, 1);
    nat.outbound(0, &mut p).unwrap();
    let (ip, ident, seq) = parse_echo(&p);
    assert_eq!((ip.src_addr, ip.dst_addr, ident, seq), (OUTSIDE, OUTSIDE_WS1, 0x0200, 1));
    assert_eq!(ip.hop_limit, 128, "NAT translates; decrementing TTL is the router's job");

    let mut reply = ping(OUTSIDE_WS1, OUTSIDE, false, ident, 1);
    assert_eq!(nat.inbound(S, &mut reply), Ok(Inbound::Translated));
    let (ip, ident, seq) = parse_echo(&reply);
    assert_eq!((ip.src_addr, ip.dst_addr, ident, seq), (OUTSIDE_WS1, INSIDE_WS2, 0x0200, 1));

    // A second inside host with the same identifier gets another one outside.
    let mut p = ping(INSIDE_WS3, OUTSIDE_WS1, true, 0x0200, 1);
    nat.outbound(S, &mut p).unwrap();
    let (ip, ident, _) = parse_echo(&p);
    assert_eq!((ip.src_addr, ident), (OUTSIDE, 0x0201));
    let mut reply = ping(OUTSIDE_WS1, OUTSIDE, false, 0x0201, 1);
    nat.inbound(S, &mut reply).unwrap();
    assert_eq!(parse_echo(&reply).0.dst_addr, INSIDE_WS3);
    assert_eq!(parse_echo(&reply).1, 0x0200);
}

#[test]
fn nat_inside_udp_flow_is_translated_both_ways_with_one_mapping_per_inside_endpoint() {
    let mut nat = ics();
    let ws2 = sock(INSIDE_WS2, 5000);
    let mut out = udp_datagram(ws2, sock(OUTSIDE_WS1, 7), 128, b"0123456789");
    nat.outbound(0, &mut out).unwrap();
    let (ip, u) = parse_udp(&out);
    assert_eq!((ip.src_addr, u.src_port, ip.dst_addr, u.dst_port), (OUTSIDE, 5000, OUTSIDE_WS1, 7));

    let mut back = udp_datagram(sock(OUTSIDE_WS1, 7), sock(OUTSIDE, 5000), 128, b"0123456789");
    assert_eq!(nat.inbound(S, &mut back), Ok(Inbound::Translated));
    let (ip, u) = parse_udp(&back);
    assert_eq!((ip.dst_addr, u.dst_port), (INSIDE_WS2, 5000));
    assert_eq!(back, udp_datagram(sock(OUTSIDE_WS1, 7), ws2, 128, b"0123456789"));

    // RFC 4787 REQ-1: the same inside endpoint keeps its outside port towards another
    // remote; another inside host with the same port gets a different one.
    let mut other_remote = udp_datagram(ws2, sock(Ipv4Addr::new(192, 168, 1, 1), 53), 128, b"q");
    nat.outbound(S, &mut other_remote).unwrap();
    assert_eq!(parse_udp(&other_remote).1.src_port, 5000);
    let mut ws3 = udp_datagram(sock(INSIDE_WS3, 5000), sock(OUTSIDE_WS1, 7), 128, b"q");
    nat.outbound(S, &mut ws3).unwrap();
    assert_eq!(parse_udp(&ws3).1.src_port, 5001);

    // A UDP datagram without checksum keeps none (RFC 768).
    let mut no_sum = udp_datagram(sock(INSIDE_WS2, 6000), sock(OUTSIDE_WS1, 7), 128, b"z");
    let hl = ipv4::HEADER_LEN;
    no_sum[hl + 6..hl + 8].fill(0);
    nat.outbound(S, &mut no_sum).unwrap();
    assert_eq!(&no_sum[hl + 6..hl + 8], &[0, 0]);
    parse_udp(&no_sum);

    let m = nat.mappings(S);
    assert_eq!(m.len(), 3);
    assert_eq!((m[0].protocol, m[0].inside, m[0].outside), (NatProtocol::Udp, ws2, sock(OUTSIDE, 5000)));
    assert_eq!(m[0].remotes, vec![sock(IP_AP, 53), sock(OUTSIDE_WS1, 7)]);
}

#[test]
fn nat_tcp_connection_is_translated_with_valid_checksums() {
    let mut nat = ics();
    let (client, server) = (sock(INSIDE_WS2, 1066), sock(OUTSIDE_WS1, 80));
    let segment = |src: SocketAddrV4, dst: SocketAddrV4, control, ack: Option<u32>| {
        let mut repr = tcp::Repr::new(src.port(), dst.port(), control, tcp::SeqNumber::from_u32(1000), 65535);
        repr.ack_number = ack.map(tcp::SeqNumber::from_u32);
        repr.max_seg_size = Some(1460);
        let mut seg = Vec::new();
        repr.encapsulate(src.ip(), dst.ip(), b"GET /", &mut seg);
        let mut packet = Vec::new();
        ipv4::Repr::new(*src.ip(), *dst.ip(), Protocol::Tcp, seg.len(), 128).encapsulate(&seg, &mut packet);
        packet
    };
    let parse = |p: &[u8]| {
        let ip_packet = ipv4::Packet::new_checked(p).unwrap();
        let ip = ipv4::Repr::parse(&ip_packet).unwrap();
        let t = tcp::Repr::parse(&tcp::Packet::new_checked(ip_packet.payload()).unwrap(), &ip.src_addr, &ip.dst_addr)
            .expect("TCP checksum");
        (ip, t)
    };
    let mut syn = segment(client, server, tcp::Control::Syn, None);
    nat.outbound(0, &mut syn).unwrap();
    let (ip, t) = parse(&syn);
    assert_eq!((ip.src_addr, t.src_port, t.max_seg_size), (OUTSIDE, 1066, Some(1460)));
    let mut syn_ack = segment(server, sock(OUTSIDE, 1066), tcp::Control::Syn, Some(1001));
    nat.inbound(S, &mut syn_ack).unwrap();
    assert_eq!(syn_ack, segment(server, client, tcp::Control::Syn, Some(1001)));
    // Established: the mapping outlives the UDP timeout by far (RFC 5382 REQ-5).
    assert_eq!(nat.poll_at(), Some(S + 7_440 * S));
}

#[test]
fn nat_drops_unsolicited_inbound_traffic_with_the_reason() {
    // Seed 000 §2.3: "we still cannot send ICMP traffic ... from 192.168.1.100
    // (outside) to 192.168.0.102 (inside)".
    let mut nat = ics();
    let mut p = ping(OUTSIDE_WS1, INSIDE_WS2, true, 1, 1);
    let before = p.clone();
    let reason = nat.inbound(0, &mut p).unwrap_err();
    assert_eq!(
        reason.at("a").to_string(),
        "NAT on a: no mapping for inbound ICMP to 192.168.0.102 (unsolicited; ICS forwards only traffic initiated inside)"
    );
    assert_eq!(p, before, "a dropped packet is left as it was");
    let mut u = udp_datagram(sock(OUTSIDE_WS1, 1025), sock(INSIDE_WS2, 5001), 128, b"x");
    let reason = nat.inbound(0, &mut u).unwrap_err();
    assert_eq!(reason, DropReason::NatNoMapping { protocol: NatProtocol::Udp, dst: sock(INSIDE_WS2, 5001) });
    assert_eq!(
        reason.at("a").to_string(),
        "NAT on a: no mapping for inbound UDP to 192.168.0.102:5001 (unsolicited; ICS forwards only traffic initiated inside)"
    );

    // Unsolicited traffic for the ICS host's own address is its own stack's business.
    let mut p = ping(OUTSIDE_WS1, OUTSIDE, true, 1, 1);
    assert_eq!(nat.inbound(0, &mut p), Ok(Inbound::ToSelf));
    let mut u = udp_datagram(sock(OUTSIDE_WS1, 1025), sock(OUTSIDE, 5001), 128, b"x");
    assert_eq!(nat.inbound(0, &mut u), Ok(Inbound::ToSelf));

    // A mapping admits only the endpoint it was opened towards (RFC 4787 §5,
    // address-and-port-dependent filtering).
    let mut out = udp_datagram(sock(INSIDE_WS2, 5000), sock(OUTSIDE_WS1, 7), 128, b"x");
    nat.outbound(0, &mut out).unwrap();
    let mut stranger = udp_datagram(sock(OUTSIDE_WS1, 8), sock(OUTSIDE, 5000), 128, b"x");
    assert_eq!(
        nat.inbound(0, &mut stranger),
        Err(DropReason::NatFiltered {
            protocol: NatProtocol::Udp,
            dst: sock(OUTSIDE, 5000),
            from: sock(OUTSIDE_WS1, 8)
        })
    );
}

#[test]
fn nat_port_forward_lets_one_outside_port_in() {
    let forward = PortForward { protocol: "udp".parse().unwrap(), port: 5001, to: INSIDE_WS2, to_port: 6001 };
    let mut nat = Nat::new(OUTSIDE, UDP_TIMEOUT, &[forward]);
    let mut inbound = udp_datagram(sock(OUTSIDE_WS1, 1025), sock(OUTSIDE, 5001), 128, b"rfc2544");
    assert_eq!(nat.inbound(0, &mut inbound), Ok(Inbound::Translated));
    assert_eq!(inbound, udp_datagram(sock(OUTSIDE_WS1, 1025), sock(INSIDE_WS2, 6001), 128, b"rfc2544"));
    let mut reply = udp_datagram(sock(INSIDE_WS2, 6001), sock(OUTSIDE_WS1, 1025), 128, b"ok");
    nat.outbound(S, &mut reply).unwrap();
    assert_eq!(reply, udp_datagram(sock(OUTSIDE, 5001), sock(OUTSIDE_WS1, 1025), 128, b"ok"));
    assert!(nat.mappings(S)[0].forwarded);
    // Other ports stay closed to the inside.
    let mut other = udp_datagram(sock(OUTSIDE_WS1, 1025), sock(INSIDE_WS2, 6002), 128, b"x");
    assert!(nat.inbound(S, &mut other).is_err());
}

#[test]
fn nat_mappings_expire_after_their_idle_timeout() {
    let mut nat = ics();
    let mut out = udp_datagram(sock(INSIDE_WS2, 5000), sock(OUTSIDE_WS1, 7), 128, b"x");
    nat.outbound(0, &mut out).unwrap();
    let mut p = ping(INSIDE_WS2, OUTSIDE_WS1, true, 9, 1);
    nat.outbound(0, &mut p).unwrap();
    assert_eq!(nat.poll_at(), Some(UDP_TIMEOUT));
    // A reply refreshes the mapping (inbound refresh).
    let reply = || udp_datagram(sock(OUTSIDE_WS1, 7), sock(OUTSIDE, 5000), 128, b"x");
    assert_eq!(nat.inbound(UDP_TIMEOUT - 1, &mut reply()), Ok(Inbound::Translated));
    assert_eq!(nat.inbound(2 * UDP_TIMEOUT - 2, &mut reply()), Ok(Inbound::Translated));
    // 30 s of silence: gone; the port is the ICS host's again.
    let t = 3 * UDP_TIMEOUT - 2;
    assert_eq!(nat.inbound(t, &mut reply()), Ok(Inbound::ToSelf));
    // The echo mapping lived its 60 s (RFC 5508 REQ-1) and is gone too.
    nat.expire(t);
    assert!(nat.mappings(t).is_empty());
    assert_eq!(nat.poll_at(), None);
}

#[test]
fn nat_translates_icmp_errors_with_the_packet_they_quote() {
    let mut nat = ics();
    let original = udp_datagram(sock(INSIDE_WS2, 5000), sock(OUTSIDE_WS1, 9), 128, b"discard me");
    let mut out = original.clone();
    nat.outbound(0, &mut out).unwrap();

    // WS1 has nothing on port 9: port unreachable, quoting what it received.
    let error = |to: Ipv4Addr, from: Ipv4Addr, quoted: &[u8]| {
        let repr = icmpv4::Repr::DstUnreachable {
            reason: icmpv4::DstUnreachable::PortUnreachable,
            next_hop_mtu: 0,
            header: icmpv4::quote(quoted).unwrap(),
        };
        let mut icmp = Vec::new();
        repr.encapsulate(&mut icmp);
        let mut packet = Vec::new();
        ipv4::Repr::new(from, to, Protocol::Icmp, icmp.len(), 128).encapsulate(&icmp, &mut packet);
        packet
    };
    let mut inbound = error(OUTSIDE, OUTSIDE_WS1, &out);
    assert_eq!(nat.inbound(S, &mut inbound), Ok(Inbound::Translated));
    // What WS2 gets is exactly the error WS1 would have sent had there been no NAT:
    // outer destination, quoted source address and port, quoted IP and UDP checksums
    // and the ICMP checksum all restored (RFC 5508 REQ-3).
    assert_eq!(inbound, error(INSIDE_WS2, OUTSIDE_WS1, &original));

    // The other way: a port-forwarded datagram WS2 refuses.
    let forward = PortForward { protocol: NatProtocol::Udp, port: 5001, to: INSIDE_WS2, to_port: 5001 };
    let mut nat = Nat::new(OUTSIDE, UDP_TIMEOUT, &[forward]);
    let original = udp_datagram(sock(OUTSIDE_WS1, 1025), sock(OUTSIDE, 5001), 128, b"anyone?");
    let mut translated = original.clone();
    nat.inbound(0, &mut translated).unwrap();
    let mut refusal = error(OUTSIDE_WS1, INSIDE_WS2, &translated);
    nat.outbound(S, &mut refusal).unwrap();
    assert_eq!(refusal, error(OUTSIDE_WS1, OUTSIDE, &original));

    // A Time Exceeded about an echo request, from a router on the way.
    let mut nat = ics();
    let request = ping(INSIDE_WS2, Ipv4Addr::new(203, 0, 113, 9), true, 0x0300, 4);
    let mut out = request.clone();
    nat.outbound(0, &mut out).unwrap();
    let exceeded = |to: Ipv4Addr, quoted: &[u8]| {
        let repr = icmpv4::Repr::TimeExceeded {
            reason: icmpv4::TimeExceeded::TtlExpired,
            header: icmpv4::quote(quoted).unwrap(),
        };
        let mut icmp = Vec::new();
        repr.encapsulate(&mut icmp);
        let mut packet = Vec::new();
        ipv4::Repr::new(IP_AP, to, Protocol::Icmp, icmp.len(), 255).encapsulate(&icmp, &mut packet);
        packet
    };
    let mut back = exceeded(OUTSIDE, &out);
    assert_eq!(nat.inbound(S, &mut back), Ok(Inbound::Translated));
    assert_eq!(back, exceeded(INSIDE_WS2, &request));
}

// ---------------------------------------------------------------------------------
// Cross-check with tshark, an implementation of ARP, IPv4, UDP and ICMP that owes
// nothing to `wire`. Skipped when tshark is absent, unless QOSLAB_REQUIRE_TSHARK is set.
// ---------------------------------------------------------------------------------

/// tshark's `fields` for each frame of a pcap of `link_type`, or `None` without tshark.
fn tshark(link_type: wire::pcap::LinkType, frames: &[Vec<u8>], fields: &[&str]) -> Option<Vec<Vec<String>>> {
    use std::process::Command;
    if Command::new("tshark").arg("--version").output().is_err() {
        assert!(std::env::var_os("QOSLAB_REQUIRE_TSHARK").is_none(), "tshark is required but not on PATH");
        eprintln!("tshark not found: dissector check skipped");
        return None;
    }
    static COUNTER: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let path = std::env::temp_dir().join(format!("qoslab-forwarding-{}-{n}.pcap", std::process::id()));
    let mut writer = wire::pcap::Writer::new(std::fs::File::create(&path).unwrap(), link_type).unwrap();
    for (i, f) in frames.iter().enumerate() {
        writer.write_frame(i as u64 * 1_000, f).unwrap();
    }
    writer.into_inner().unwrap();
    let mut cmd = Command::new("tshark");
    cmd.args(["-n", "-r"]).arg(&path);
    cmd.args(["-o", "ip.check_checksum:TRUE", "-o", "udp.check_checksum:TRUE", "-o", "tcp.check_checksum:TRUE"]);
    cmd.args(["-T", "fields", "-E", "separator=|", "-E", "occurrence=a", "-E", "aggregator=,"]);
    for f in fields {
        cmd.args(["-e", f]);
    }
    let out = cmd.output().unwrap();
    let _ = std::fs::remove_file(&path);
    assert!(out.status.success(), "tshark: {}", String::from_utf8_lossy(&out.stderr));
    Some(String::from_utf8(out.stdout).unwrap().lines().map(|l| l.split('|').map(str::to_owned).collect()).collect())
}

fn colon_mac(mac: [u8; 6]) -> String {
    mac.iter().map(|b| format!("{b:02x}")).collect::<Vec<_>>().join(":")
}

#[test]
fn tshark_reads_the_l3f_frames_as_the_seed_describes_them() {
    let mut net = Fig6::converse();
    let datagram = udp_datagram(SocketAddrV4::new(IP_WS1, 1025), SocketAddrV4::new(IP_WS2, 7), 128, b"seed 000");
    let mut out = Vec::new();
    net.bridge.process(net.now, 1, &ethernet_frame(MAC_1, MAC_A1, &datagram), &mut out).unwrap();
    let mut frames: Vec<Vec<u8>> = net.sent.iter().map(|(_, f)| f.clone()).collect();
    frames.push(out[0].1.clone());
    let fields =
        ["eth.src", "arp.src.hw_mac", "arp.src.proto_ipv4", "ip.ttl", "ip.checksum.status", "udp.checksum.status"];
    let Some(rows) = tshark(wire::pcap::LinkType::Ethernet, &frames, &fields) else { return };
    assert_eq!(rows.len(), frames.len());
    for (row, (port, _)) in rows.iter().zip(&net.sent) {
        let own = colon_mac(if *port == 1 { MAC_A1 } else { MAC_A2 });
        assert_eq!((&row[0], &row[1]), (&own, &own), "ARP from port {port}: {row:?}");
    }
    let last = rows.last().unwrap();
    assert_eq!(last[0], colon_mac(MAC_A2));
    // TTL untouched, IP and UDP checksums good (status 1).
    assert_eq!((&last[3][..], &last[4][..], &last[5][..]), ("128", "1", "1"));
}

#[test]
fn tshark_verifies_the_checksums_nat_rewrote() {
    let mut nat = ics();
    let mut packets = Vec::new();
    let mut p = ping(INSIDE_WS2, OUTSIDE_WS1, true, 0x0200, 1);
    nat.outbound(0, &mut p).unwrap();
    packets.push(p);
    let mut u = udp_datagram(sock(INSIDE_WS2, 5000), sock(OUTSIDE_WS1, 9), 128, b"odd length");
    nat.outbound(0, &mut u).unwrap();
    packets.push(u.clone());
    // WS1's port unreachable about it, translated back in.
    let repr = icmpv4::Repr::DstUnreachable {
        reason: icmpv4::DstUnreachable::PortUnreachable,
        next_hop_mtu: 0,
        header: icmpv4::quote(&u).unwrap(),
    };
    let mut icmp = Vec::new();
    repr.encapsulate(&mut icmp);
    let mut e = Vec::new();
    ipv4::Repr::new(OUTSIDE_WS1, OUTSIDE, Protocol::Icmp, icmp.len(), 128).encapsulate(&icmp, &mut e);
    nat.inbound(S, &mut e).unwrap();
    packets.push(e);
    let fields =
        ["ip.src", "ip.dst", "ip.checksum.status", "icmp.checksum.status", "udp.checksum.status", "udp.srcport"];
    let Some(rows) = tshark(wire::pcap::LinkType::Ipv4, &packets, &fields) else { return };
    assert_eq!(rows[0][..4], ["192.168.1.101", "192.168.1.100", "1", "1"]);
    assert_eq!(rows[1][..3], ["192.168.1.101", "192.168.1.100", "1"]);
    assert_eq!(rows[1][4..], ["1", "5000"]);
    // The error and the header it quotes: both IP checksums good, the ICMP checksum good,
    // the quoted source restored to WS2's.
    assert_eq!(rows[2][..4], ["192.168.1.100,192.168.0.102", "192.168.0.102,192.168.1.100", "1,1", "1"]);
}

// ---------------------------------------------------------------------------------
// Any bytes: the models never panic (they parse what arrives on a port).
// ---------------------------------------------------------------------------------

mod never_panic {
    use super::*;
    use proptest::prelude::*;

    /// Valid frames of the kinds the models see, then cut and bit-flipped.
    fn frames() -> impl Strategy<Value = Vec<u8>> {
        let seeds = [
            arp_frame(MAC_1, [0xff; 6], &arp::Repr::request(Mac(MAC_1), IP_WS1, IP_WS2)),
            ethernet_frame(MAC_1, MAC_A1, &udp_datagram(sock(IP_WS1, 1), sock(IP_WS2, 2), 64, b"x")),
            ethernet_frame(MAC_1, MAC_A1, &ping(IP_WS1, IP_WS2, true, 1, 1)),
            ethernet_frame(MAC_1, MAC_A1, &unreachable()),
        ];
        (0..seeds.len(), any::<usize>(), proptest::collection::vec((any::<usize>(), any::<u8>()), 0..4)).prop_map(
            move |(i, cut, flips)| {
                let mut f = seeds[i].clone();
                for (at, x) in flips {
                    let n = f.len();
                    f[at % n] ^= x;
                }
                f.truncate(cut % (f.len() + 1));
                f
            },
        )
    }

    /// WS1's port unreachable about the datagram [`ics_with_mapping`] sent out.
    fn unreachable() -> Vec<u8> {
        let mut u = udp_datagram(sock(INSIDE_WS2, 5000), sock(OUTSIDE_WS1, 9), 128, b"x");
        ics_with_mapping(&mut u);
        let repr = icmpv4::Repr::DstUnreachable {
            reason: icmpv4::DstUnreachable::PortUnreachable,
            next_hop_mtu: 0,
            header: icmpv4::quote(&u).unwrap(),
        };
        let mut icmp = Vec::new();
        repr.encapsulate(&mut icmp);
        let mut e = Vec::new();
        ipv4::Repr::new(OUTSIDE_WS1, OUTSIDE, Protocol::Icmp, icmp.len(), 128).encapsulate(&icmp, &mut e);
        e
    }

    fn ics_with_mapping(u: &mut [u8]) -> Nat {
        let mut nat = ics();
        nat.outbound(0, u).unwrap();
        nat
    }

    proptest! {
        #[test]
        fn l2_l3f_and_nat_take_any_bytes(frame in frames(), junk in proptest::collection::vec(any::<u8>(), 0..80)) {
            let mut l2 = LearningBridge::new(&[1, 2], 300 * S, MAC_A1);
            let mut l3f = Fig6::converse().bridge;
            let mut nat = ics_with_mapping(&mut udp_datagram(sock(INSIDE_WS2, 5000), sock(OUTSIDE_WS1, 9), 128, b"x"));
            for bytes in [&frame, &junk] {
                l2.forward(0, 1, bytes);
                let mut out = Vec::new();
                let _ = l3f.process(S, 1, bytes, &mut out);
                let _ = l3f.process(S, 2, bytes, &mut out);
                let payload = bytes.get(ethernet::HEADER_LEN..).unwrap_or(&[]).to_vec();
                let _ = l3f.send_local(S, &payload, &mut out);
                let (mut a, mut b) = (payload.clone(), payload.clone());
                let _ = nat.outbound(0, &mut a);
                let _ = nat.inbound(0, &mut b);
            }
        }
    }
}
