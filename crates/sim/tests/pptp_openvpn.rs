//! PPTP over an OpenVPN TAP tunnel (seed 002 §3.4, Fig. 5), in whole runs: the TCP
//! control connection to port 1723 (SCCRQ, SCCRP, OCRQ, OCRP) comes first, then the
//! PPP link in enhanced GRE (LCP, MS-CHAPv2, IPCP), then data; the largest datagram
//! that crosses without fragmentation follows from the layer sizes.
//!
//! ```text
//! client ─wan─ vpnserver (eth1 + tap0 bridged) ─lan─ pptpd
//!   tap0 ═══ OpenVPN/UDP 1194 ═══ tap0
//!   ppp0 ─────────── PPTP (TCP 1723 + GRE) ─────────── pptpd ppp0
//! ```

use std::net::Ipv4Addr;

use sim::config::*;
use wire::ethernet::{self, EtherType};
use wire::{gre, ipv4, pptp, tcp, IpProtocol};

mod common;
use common::node;

const S: u64 = 1_000_000_000;
const CLIENT_WAN: Ipv4Addr = Ipv4Addr::new(198, 51, 100, 2);
const SERVER_WAN: Ipv4Addr = Ipv4Addr::new(198, 51, 100, 1);
const CLIENT_TAP: Ipv4Addr = Ipv4Addr::new(10, 8, 0, 2);
const PPTPD: Ipv4Addr = Ipv4Addr::new(10, 8, 0, 1);
const CLIENT_PPP: Ipv4Addr = Ipv4Addr::new(192, 168, 50, 2);
const SERVER_PPP: Ipv4Addr = Ipv4Addr::new(192, 168, 50, 1);
/// Seed 002 §3.2: the TAP interface's MTU.
const TAP_MTU: u16 = 1430;
/// Seed 002 §3.4: the outer IPv4 header (RFC 791: 20), GRE with key and sequence
/// number (RFC 2637 §4.1: 4 + 4 + 4) and PPP's compressed protocol field (1).
const PPTP_OVERHEAD: u16 = 20 + 12 + 1;

fn port(name: &str, mac: u8, address: Option<(Ipv4Addr, u8)>, mtu: u16) -> PortConfig {
    PortConfig { name: name.into(), mac: [2, 0, 0, 0, 0, mac], address, mtu, point_to_point: false, promiscuous: false }
}

fn ethernet(name: &str, a: (u32, u16), b: (u32, u16)) -> LinkConfig {
    LinkConfig::Ethernet {
        name: name.into(),
        a: PortRef { node: a.0, port: a.1 },
        b: PortRef { node: b.0, port: b.1 },
        rate_bps: 100_000_000,
        delay_ns: 10_000,
        jitter_ns: 0,
        queue_frames: 1000,
        queue_bytes: 1_600_000,
        impair: Default::default(),
    }
}

fn openvpn(server: bool, port: u16) -> OpenVpnConfig {
    OpenVpnConfig {
        name: "tap0".into(),
        dev: qoslab_plan::from_name("tap").unwrap(),
        server,
        port: Some(port),
        local: if server { SERVER_WAN } else { CLIENT_WAN },
        remote: if server { CLIENT_WAN } else { SERVER_WAN },
        local_port: 1194,
        remote_port: 1194,
        proto: qoslab_plan::from_name("udp").unwrap(),
        cipher: qoslab_plan::from_name("none").unwrap(),
        auth: qoslab_plan::from_name("sha1").unwrap(),
        replay: false,
        fragment: None,
        mtu: TAP_MTU,
        protects: vec![],
        key: 0,
    }
}

fn pptp_end(server: bool, secret: &str, mtu: u16) -> PptpConfig {
    PptpConfig {
        name: "ppp0".into(),
        server,
        local: if server { PPTPD } else { CLIENT_TAP },
        remote: if server { CLIENT_TAP } else { PPTPD },
        auth: qoslab_plan::from_name("mschapv2").unwrap(),
        user: "alice".into(),
        secret: secret.into(),
        mtu,
        ppp_local: if server { SERVER_PPP } else { CLIENT_PPP },
        ppp_peer: if server { CLIENT_PPP } else { SERVER_PPP },
        routes: vec![(if server { CLIENT_PPP } else { SERVER_PPP }, 32)],
        call_id: if server { 0x4000 } else { 0x0100 },
        recv_window: 64,
    }
}

fn network(secret: &str, mtu: u16, flows: Vec<FlowConfig>, cycles: CpuCycles) -> SimConfig {
    let mut client = node(
        "client",
        vec![port("eth0", 1, Some((CLIENT_WAN, 24)), 1500), port("tap0", 2, Some((CLIENT_TAP, 24)), TAP_MTU)],
        vec![],
        false,
    );
    client.openvpn.push(openvpn(false, 1));
    client.pptp.push(pptp_end(false, secret, mtu));
    client.cpu.cycles = cycles;
    let mut vpn = node(
        "vpnserver",
        vec![
            port("eth0", 10, Some((SERVER_WAN, 24)), 1500),
            port("eth1", 11, None, 1500),
            port("tap0", 12, None, TAP_MTU),
        ],
        vec![],
        true,
    );
    vpn.bridge = Some(BridgeConfig {
        ports: vec![1, 2],
        mode: BridgeMode::L2,
        mac: [2, 0, 0, 0, 0, 11],
        address: None,
        aging_ns: 300 * S,
    });
    vpn.openvpn.push(openvpn(true, 2));
    let mut server = node("pptpd", vec![port("eth0", 30, Some((PPTPD, 24)), 1500)], vec![], false);
    server.pptp.push(pptp_end(true, "s3cret", mtu));
    server.cpu.cycles = cycles;
    let links = vec![ethernet("wan", (0, 0), (1, 0)), ethernet("lan", (1, 1), (2, 0))];
    SimConfig {
        seed: 2,
        duration_ns: 5 * S,
        nodes: vec![client, vpn, server],
        links,
        flows,
        capture: true,
        ..Default::default()
    }
}

fn udp(payload: u32) -> FlowConfig {
    FlowConfig::Udp {
        id: 1,
        from: 0,
        to: SERVER_PPP,
        dst_port: 9,
        payload,
        rate_pps: 50.0,
        start_ns: S,
        stop_ns: 2 * S,
        dont_fragment: false,
        dst_mac: None,
        src_mac: None,
    }
}

fn frames<'a>(results: &'a sim::results::Results, capture: &str) -> &'a [(u64, Vec<u8>)] {
    &results.captures.iter().find(|c| c.name == capture).unwrap_or_else(|| panic!("no capture {capture}")).frames
}

/// The IPv4 packets of an Ethernet capture.
fn ip_packets(frames: &[(u64, Vec<u8>)]) -> Vec<Vec<u8>> {
    frames
        .iter()
        .filter_map(|(_, f)| {
            let eth = ethernet::Frame::new_checked(&f[..]).ok()?;
            (eth.ethertype() == EtherType::Ipv4).then(|| eth.payload().to_vec())
        })
        .collect()
}

#[test]
fn control_connection_then_ppp_in_gre_then_data() {
    let mtu = TAP_MTU - PPTP_OVERHEAD;
    let results = sim::simulate(network("s3cret", mtu, vec![udp(200)], CpuCycles::default())).unwrap();
    let flow = &results.flows[0];
    assert!(
        flow.received > 40,
        "UDP crossed the tunnel: {:?}; drops {:#?}",
        flow,
        &results.drop_log[..results.drop_log.len().min(10)]
    );
    // On the client's TAP port (tcpdump -i tap0): PPTP control messages on TCP 1723
    // first, in RFC 2637 §3.1 order, then GRE.
    let mut order = Vec::new();
    for p in ip_packets(frames(&results, "client-tap0")) {
        let ip = ipv4::Packet::new_checked(&p[..]).unwrap();
        match ip.next_header() {
            IpProtocol::Tcp => {
                let seg = tcp::Packet::new_checked(ip.payload()).unwrap();
                assert!(seg.src_port() == pptp::PORT || seg.dst_port() == pptp::PORT);
                let mut rest = seg.payload();
                while let Ok(Some(len)) = pptp::next_message(rest) {
                    let repr = pptp::Repr::parse(&pptp::Packet::new_checked(&rest[..len]).unwrap()).unwrap();
                    order.push(format!("{:?}", repr.control_type()));
                    rest = &rest[len..];
                }
            }
            IpProtocol::Gre => {
                let g = gre::Packet::new_checked(ip.payload()).unwrap();
                assert_eq!(gre::Repr::parse(&g).unwrap().version, gre::Version::Enhanced);
                if order.last().map(String::as_str) != Some("GRE") {
                    order.push("GRE".into());
                }
            }
            other => panic!("unexpected {other:?} on tap0"),
        }
    }
    assert_eq!(
        order[..5],
        [
            "StartControlConnectionRequest",
            "StartControlConnectionReply",
            "OutgoingCallRequest",
            "OutgoingCallReply",
            "GRE"
        ],
        "{order:?}"
    );
    // The PPP link came up with the configured addresses.
    assert!(!results.drop_log.iter().any(|d| d.reason.contains("IPCP gave")), "{:#?}", results.drop_log);
}

/// Data packets the client sent in GRE on its TAP port: (outer IPv4 length, fragment?).
fn outer_data(results: &sim::results::Results) -> Vec<(usize, bool)> {
    ip_packets(frames(results, "client-tap0"))
        .iter()
        .filter_map(|p| {
            let ip = ipv4::Packet::new_checked(&p[..]).ok()?;
            let fragment = ip.more_frags() || ip.frag_offset() != 0;
            (ip.next_header() == IpProtocol::Gre && ip.src_addr() == CLIENT_TAP).then_some((p.len(), fragment))
        })
        .collect()
}

#[test]
fn the_largest_unfragmented_datagram_is_the_tap_mtu_less_33() {
    // Seed 002 §3.4: 1430 - 20 - 12 - 1 = 1397. A datagram of exactly the PPTP MTU
    // (UDP payload = MTU - 28) leaves as one outer packet filling the TAP MTU.
    let mtu = TAP_MTU - PPTP_OVERHEAD;
    assert_eq!(mtu, 1397);
    let results = sim::simulate(network("s3cret", mtu, vec![udp(u32::from(mtu) - 28)], CpuCycles::default())).unwrap();
    assert!(results.flows[0].received > 40);
    let data: Vec<_> = outer_data(&results).into_iter().filter(|&(len, _)| len > 1000).collect();
    assert!(!data.is_empty());
    assert!(data.iter().all(|&(len, frag)| len == usize::from(TAP_MTU) && !frag), "{data:?}");
    // One octet more of PPP MTU and the same datagram plus one: the outer packet no
    // longer fits the TAP and is fragmented after encapsulation.
    let results =
        sim::simulate(network("s3cret", mtu + 1, vec![udp(u32::from(mtu) - 27)], CpuCycles::default())).unwrap();
    assert!(results.flows[0].received > 40);
    assert!(outer_data(&results).iter().any(|&(_, frag)| frag), "an outer fragment on tap0");
}

#[test]
fn a_wrong_password_keeps_ip_down() {
    let results = sim::simulate(network("guess", 1397, vec![udp(200)], CpuCycles::default())).unwrap();
    assert_eq!(results.flows[0].received, 0);
}

#[test]
fn the_server_cpu_pays_each_gre_packet_and_octet() {
    // Only PPTP's costs switched on, at 1 GHz: pptpd's busy time is the sum over every
    // GRE packet it sent or took (its eth0 capture) of per-packet + per-octet work.
    let (per_packet, per_byte) = (50_000u64, 20.0);
    let mut config = network("s3cret", 1397, vec![udp(972)], CpuCycles::default());
    let cycles = CpuCycles { per_pptp_packet: per_packet, per_byte_pptp: per_byte, ..CpuCycles::default() };
    config.nodes[2].cpu = CpuConfig {
        profile: "t".into(),
        hz: 1_000_000_000,
        queue_limit: 1000,
        cycles,
        atm_nic: Default::default(),
        rx_latency: Default::default(),
    };
    let results = sim::simulate(config).unwrap();
    assert_eq!((results.flows[0].sent, results.flows[0].received), (50, 50));
    let expected: f64 = ip_packets(frames(&results, "pptpd-eth0"))
        .iter()
        .filter_map(|p| {
            let ip = ipv4::Packet::new_checked(&p[..]).ok()?;
            (ip.next_header() == IpProtocol::Gre).then(|| per_packet as f64 + per_byte * ip.payload().len() as f64)
        })
        .sum();
    let busy_ns = results.nodes[2].cpu_utilization * (5 * S) as f64;
    assert!(expected > 50.0 * per_packet as f64);
    // Work a timer does (a lone 12-octet acknowledgment) is billed to the node's next
    // job; the last one or two of the run find no next job. Everything else is billed
    // exactly.
    let lone_ack = per_packet as f64 + per_byte * 12.0;
    let unbilled = (expected - busy_ns) / lone_ack;
    assert!(
        (unbilled - unbilled.round()).abs() < 1e-6 && (0.0..=2.0).contains(&unbilled.round()),
        "busy {busy_ns} ns, computed {expected} ns at 1 GHz"
    );
}
