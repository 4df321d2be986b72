//! A TCP sender's retransmission timer, through the world's timer slot (`sim::wake`),
//! fires at the time RFC 6298 gives, computed here from the run's own RTT sample.
//!
//! a ──100 Mb/s, 50 ms── r ──1400-byte MTU── b
//!
//! r drops every full-sized data segment silently (a PMTU black hole: DF set, no ICMP),
//! so after the handshake no data segment is ever acknowledged and only the RTO, backed
//! off, retransmits. TLP and RACK are off: nothing but the RTO sends again. Timestamps
//! are off too, so the RTT sample is RFC 6298 §3's timed segment (the SYN), in ns.

mod common;

use std::net::Ipv4Addr;

use common::{default_via, ip_packets, node, port_mtu};
use sim::config::{FlowConfig, FragNeeded, LinkConfig, PortRef, SimConfig, TcpOptions};
use wire::{ipv4, tcp, IpProtocol};

const MS: u64 = 1_000_000;
const S: u64 = 1_000_000_000;
const A: Ipv4Addr = Ipv4Addr::new(10, 0, 1, 1);
const R_LAN: Ipv4Addr = Ipv4Addr::new(10, 0, 1, 254);
const B: Ipv4Addr = Ipv4Addr::new(10, 0, 2, 1);
const START: u64 = S / 10;
const DURATION: u64 = 5 * S;
/// RFC 6298 §2.4's floor as Linux sets it (TCP_RTO_MIN) and the socket's default.
const MIN_RTO: u64 = 200 * MS;
/// RFC 6298 §2.2's clock granularity G, the socket's default (a 1 ms timer tick).
const G: u64 = MS;

fn link(name: &str, a: (u32, u16), b: (u32, u16), delay_ns: u64) -> LinkConfig {
    LinkConfig::Ethernet {
        name: name.into(),
        a: PortRef { node: a.0, port: a.1 },
        b: PortRef { node: b.0, port: b.1 },
        rate_bps: 100_000_000,
        delay_ns,
        jitter_ns: 0,
        queue_frames: 1000,
        queue_bytes: 10_000_000,
        impair: Default::default(),
    }
}

fn network() -> SimConfig {
    let a = node("a", vec![port_mtu("eth0", 1, A, 1500)], default_via(R_LAN), false);
    // r's two networks are its own: it needs no route.
    let mut r = node(
        "r",
        vec![port_mtu("eth0", 2, R_LAN, 1500), port_mtu("eth1", 3, Ipv4Addr::new(10, 0, 2, 254), 1400)],
        vec![],
        true,
    );
    r.pmtu.frag_needed = FragNeeded::Silent;
    // b's own MTU is 1500, so its MSS option (1460) does not tell a about the narrow link.
    let b = node("b", vec![port_mtu("eth0", 4, B, 1500)], default_via(Ipv4Addr::new(10, 0, 2, 254)), false);
    let options = TcpOptions { tlp: Some(false), rack: Some(false), timestamps: Some(false), ..TcpOptions::default() };
    SimConfig {
        seed: 1,
        duration_ns: DURATION,
        nodes: vec![a, r, b],
        links: vec![link("a-r", (0, 0), (1, 0), 50 * MS), link("r-b", (1, 1), (2, 0), 1_000)],
        flows: vec![FlowConfig::Tcp {
            id: 1,
            from: 0,
            to: B,
            dst_port: 5001,
            bytes: Some(1_000_000),
            start_ns: START,
            stop_ns: 5 * S,
            tcp: options,
            interval_ns: None,
            trace: false,
        }],
        capture: true,
        ..Default::default()
    }
}

/// The TCP segments in `packets` from `from`: (time, SYN and ACK both set, data length).
fn segments(packets: &[(u64, Vec<u8>)], from: Ipv4Addr) -> Vec<(u64, bool, usize)> {
    packets
        .iter()
        .filter_map(|(t, p)| {
            let ip = ipv4::Packet::new_checked(&p[..]).ok()?;
            if ip.next_header() != IpProtocol::Tcp || ip.src_addr() != from {
                return None;
            }
            let seg = tcp::Packet::new_checked(ip.payload()).ok()?;
            Some((*t, seg.syn() && seg.ack(), seg.payload().len()))
        })
        .collect()
}

#[test]
fn the_rto_fires_at_rfc_6298s_time_and_backs_off() {
    let results = sim::simulate(network()).expect("the run completes");
    let at_a = ip_packets(&results, "a-eth0");
    // The nodes' CPUs cost nothing, so a's port sees a segment leave when the socket
    // sends it and the SYN-ACK arrive when the socket gets it.
    let syn_ack = segments(&at_a, B).into_iter().find(|s| s.1).expect("b's SYN-ACK reaches a").0;
    // RFC 6298 §2.2: the first sample R (the SYN sent at connect, the flow's start, to
    // its SYN-ACK; ARP for the router is inside it) sets SRTT = R, RTTVAR = R/2, RTO = SRTT + max(G, 4·RTTVAR); §2.4:
    // at least 1 s, which Linux and this socket lower to 200 ms.
    let r = syn_ack - START;
    let rto = (r + G.max(4 * (r / 2))).max(MIN_RTO);
    assert!(rto > MIN_RTO, "the link's delay, not the floor, sets this RTO: {rto} ns");
    let data: Vec<u64> = segments(&at_a, A).into_iter().filter(|s| s.2 > 0).map(|s| s.0).collect();
    // The initial window leaves with the handshake's ACK; the timer runs from then
    // (§5.1, and §5.3 restarts it on the SYN-ACK, which acknowledges the SYN).
    let first = data[0];
    assert_eq!(first, syn_ack);
    let retransmits: Vec<u64> = data.iter().copied().filter(|&t| t > first).collect();
    // §5.4-§5.6: on expiry the earliest segment goes again, the RTO doubles and the
    // timer restarts: expiries at RTO, 3·RTO, 7·RTO, 15·RTO after the first send.
    let expected: Vec<u64> = (1..=4u32).map(|k| first + ((1u64 << k) - 1) * rto).filter(|&t| t < DURATION).collect();
    assert!(expected.len() >= 3, "the run sees at least three expiries");
    assert_eq!(retransmits, expected, "one retransmission at each RFC 6298 expiry, R = {r} ns, RTO = {rto} ns");
}
