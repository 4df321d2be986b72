//! UDP echo (RFC 862) between two hosts: the server returns every datagram, round trips
//! against IEEE 802.3 arithmetic written here, and loss counted in the direction it
//! happens, within binomial bounds computed here.

use std::net::Ipv4Addr;

use sim::config::*;

const MBPS_100: u64 = 100_000_000;
const DELAY_NS: u64 = 1_000;
const PAYLOAD: u32 = 1_000;
const COUNT: u32 = 10_000;
const INTERVAL_NS: u64 = 100_000;
/// How many standard deviations a seeded count may stray (as in impair_serial.rs).
const SD: f64 = 5.0;

fn node(name: &str, mac: u8, addr: [u8; 4]) -> NodeConfig {
    NodeConfig {
        name: name.into(),
        role: qoslab_plan::from_name("host").unwrap(),
        ports: vec![PortConfig {
            name: "eth0".into(),
            mac: [2, 0, 0, 0, 0, mac],
            address: Some((Ipv4Addr::from(addr), 24)),
            mtu: 1500,
            point_to_point: false,
            promiscuous: false,
        }],
        bridge: None,
        ip_forward: false,
        routes: vec![],
        nat: None,
        ipsec: vec![],
        openvpn: vec![],
        pppoe: vec![],
        pptp: vec![],
        cpu: CpuConfig {
            profile: "asic".into(),
            hz: 0,
            queue_limit: 1000,
            cycles: CpuCycles::default(),
            atm_nic: Default::default(),
            rx_latency: Default::default(),
        },
        arp_timeout_ns: 120_000_000_000,
        reassembly_timeout_ns: 30_000_000_000,
        pmtu: Default::default(),
    }
}

/// Host a (10.0.0.1) echoes off host b (10.0.0.2) over 100 Mbit/s Ethernet. A ping at
/// time 0 fills both ARP caches (with three tries one second apart, as a lossy link
/// needs), so the echo, from `start_ns`, carries only datagrams.
fn config(impair: [Impairment; 2], start_ns: u64) -> SimConfig {
    let echo = FlowConfig::UdpEcho {
        id: 1,
        from: 0,
        to: Ipv4Addr::new(10, 0, 0, 2),
        dst_port: 7,
        payload: PAYLOAD,
        count: COUNT,
        interval_ns: INTERVAL_NS,
        start_ns,
    };
    let learn = FlowConfig::Ping {
        id: 0,
        from: 0,
        to: Ipv4Addr::new(10, 0, 0, 2),
        count: 1,
        interval_ns: 1_000_000_000,
        payload: 56,
        start_ns: 0,
    };
    SimConfig {
        seed: 3,
        duration_ns: start_ns + u64::from(COUNT) * INTERVAL_NS + 100_000_000,
        nodes: vec![node("a", 1, [10, 0, 0, 1]), node("b", 2, [10, 0, 0, 2])],
        links: vec![LinkConfig::Ethernet {
            name: "a-b".into(),
            a: PortRef { node: 0, port: 0 },
            b: PortRef { node: 1, port: 0 },
            rate_bps: MBPS_100,
            delay_ns: DELAY_NS,
            jitter_ns: 0,
            queue_frames: 100,
            queue_bytes: 1_000_000,
            impair,
        }],
        flows: vec![learn, echo],
        ..Default::default()
    }
}

/// IEEE 802.3: from the first preamble bit to the last FCS bit, preamble 7 + SFD 1 +
/// frame (padded to 60) + FCS 4 bytes, in ns: when the receiver has the frame. (The
/// 12-byte inter-frame gap after it keeps the sender idle but delays no one.)
fn arrival_ns(frame_without_fcs: u64, rate_bps: u64) -> u64 {
    ((frame_without_fcs.max(60) + 12) * 8 * 1_000_000_000).div_ceil(rate_bps)
}

/// The Ethernet frame (header, no FCS) of one echo datagram: 14 + IPv4 20 + UDP 8 + payload.
fn echo_frame() -> u64 {
    14 + 20 + 8 + u64::from(PAYLOAD)
}

#[test]
fn every_datagram_comes_back_after_two_serializations() {
    // The echo starts 1 ms in, once the ping's ARP exchange and round trip are over.
    let results = sim::simulate(config(Default::default(), 1_000_000)).unwrap();
    let flow = results.flows.iter().find(|f| f.id == 1).unwrap();
    let echo = flow.echo.as_ref().expect("an echo flow reports its echo");
    assert_eq!(flow.kind, "udp-echo");
    assert_eq!(
        (flow.sent, echo.forward_received, flow.received),
        (u64::from(COUNT), u64::from(COUNT), u64::from(COUNT))
    );
    assert_eq!((flow.duplicates, echo.forward_duplicates), (0, 0));
    assert_eq!(flow.bytes_received, u64::from(COUNT) * u64::from(PAYLOAD));
    // 1042-byte frames: (1042 + 12) × 8 bits at 100 Mbit/s = 84.32 µs each way, + 1 µs.
    let one_way = arrival_ns(echo_frame(), MBPS_100) + DELAY_NS;
    assert_eq!(one_way, 85_320);
    let rtt = echo.rtt_ns.expect("round trips");
    assert_eq!(rtt.min, 2 * one_way);
    assert_eq!(echo.forward_latency_ns.unwrap().min, one_way);
    // Nothing queues (a frame takes 85 µs of each 100 µs gap; echoes go the other way)
    // and the ping filled the ARP caches: every round trip is the minimum.
    assert_eq!(rtt.max, 2 * one_way);
    // The echo's own ports: no drop at all in a clean run.
    assert!(results.drop_log.is_empty(), "{:?}", results.drop_log);
}

#[test]
fn the_first_datagram_waits_for_arp_when_nothing_learned_first() {
    let mut c = config(Default::default(), 0);
    c.flows.remove(0);
    let results = sim::simulate(c).unwrap();
    let flow = &results.flows[0];
    let rtt = flow.echo.as_ref().unwrap().rtt_ns.unwrap();
    let one_way = arrival_ns(echo_frame(), MBPS_100) + DELAY_NS;
    assert_eq!(rtt.min, 2 * one_way);
    // ARP request and reply (42 bytes, padded to 60) before the first datagram goes; b
    // learns a from the request (RFC 826), so the echo needs no ARP of its own.
    assert_eq!(rtt.max, 2 * one_way + 2 * (arrival_ns(42, MBPS_100) + DELAY_NS));
    assert_eq!(flow.received, u64::from(COUNT));
}

/// Losses in one direction, counted from the drop log, match the direction's count, and
/// the count is within `SD` standard deviations of Binomial(n, p).
fn assert_binomial(lost: u64, n: u64, p: f64) {
    let (mean, sd) = (n as f64 * p, (n as f64 * p * (1.0 - p)).sqrt());
    assert!((lost as f64 - mean).abs() <= SD * sd, "{lost} lost of {n}, expected {mean} ± {}", SD * sd);
}

fn lost_at(results: &sim::results::Results, node: &str) -> u64 {
    results
        .drop_log
        .iter()
        .filter(|d| d.flow == Some(1) && d.node == node && d.reason.starts_with("lost on link a-b"))
        .count() as u64
}

#[test]
fn forward_loss_shows_forward_only() {
    let p = 0.05;
    let mut impair: [Impairment; 2] = Default::default();
    impair[0].loss = Some(LossConfig::Bernoulli { p });
    let results = sim::simulate(config(impair, 4_000_000_000)).unwrap();
    let flow = results.flows.iter().find(|f| f.id == 1).unwrap();
    let echo = flow.echo.as_ref().unwrap();
    assert_eq!(flow.sent, u64::from(COUNT));
    let forward_lost = flow.sent - echo.forward_received;
    assert_eq!(forward_lost, lost_at(&results, "b"), "every forward loss is a frame lost on a → b");
    assert_binomial(forward_lost, flow.sent, p);
    assert_eq!(flow.received, echo.forward_received, "nothing lost on the way back");
}

#[test]
fn reverse_loss_shows_reverse_only() {
    let p = 0.05;
    let mut impair: [Impairment; 2] = Default::default();
    impair[1].loss = Some(LossConfig::Bernoulli { p });
    let results = sim::simulate(config(impair, 4_000_000_000)).unwrap();
    let flow = results.flows.iter().find(|f| f.id == 1).unwrap();
    let echo = flow.echo.as_ref().unwrap();
    assert_eq!(echo.forward_received, flow.sent, "nothing lost on the way out");
    let reverse_lost = echo.forward_received - flow.received;
    assert_eq!(reverse_lost, lost_at(&results, "a"), "every reverse loss is a frame lost on b → a");
    assert_binomial(reverse_lost, echo.forward_received, p);
    // The survivors' round trips are untouched by the losses.
    assert_eq!(echo.rtt_ns.unwrap().max, 2 * (arrival_ns(echo_frame(), MBPS_100) + DELAY_NS));
}

#[test]
fn a_payload_shorter_than_the_probe_is_refused() {
    let mut c = config(Default::default(), 0);
    if let FlowConfig::UdpEcho { payload, .. } = &mut c.flows[1] {
        *payload = 8;
    }
    let err = sim::simulate(c).unwrap_err().to_string();
    assert!(err.contains("flows[1].payload"), "{err}");
}

#[test]
fn payloads_past_an_ipv4_datagram_are_refused_not_run() {
    // RFC 791 §3.1: 65,535 bytes in all; after 20 of IPv4 and 8 of UDP or of the ICMP
    // echo header, 65,507. One more is a configuration error naming the flow, never a
    // run that loses every datagram (UDP, 65,508-65,527 bytes) or a panic.
    let at = |payload: u32, ping: bool| {
        let mut c = config(Default::default(), 0);
        let flow = if ping { 0 } else { 1 };
        match &mut c.flows[flow] {
            FlowConfig::Ping { payload: p, .. } | FlowConfig::UdpEcho { payload: p, .. } => *p = payload,
            _ => unreachable!(),
        }
        (sim::simulate(c).err().map(|e| e.to_string()), flow)
    };
    for ping in [false, true] {
        let (ok, _) = at(65_507, ping);
        assert!(ok.is_none(), "65,507 bytes run: {ok:?}");
        for payload in [65_508, 65_527, 1_000_000_000] {
            let (refused, flow) = at(payload, ping);
            let refused = refused.expect("refused");
            assert!(refused.contains(&format!("flows[{flow}].payload")), "{refused}");
        }
    }
}
