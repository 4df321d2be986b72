//! End-to-end runs over Ethernet: timing against IEEE 802.3 arithmetic written here,
//! forwarding through routers, and determinism.

use std::net::Ipv4Addr;

use sim::config::*;

mod common;
use common::node;

const MBPS_100: u64 = 100_000_000;

fn port(name: &str, mac: u8, addr: [u8; 4], len: u8) -> PortConfig {
    PortConfig {
        name: name.into(),
        mac: [2, 0, 0, 0, 0, mac],
        address: Some((Ipv4Addr::from(addr), len)),
        mtu: 1500,
        point_to_point: false,
        promiscuous: false,
    }
}

fn ethernet(name: &str, a: (u32, u16), b: (u32, u16), delay_ns: u64) -> LinkConfig {
    LinkConfig::Ethernet {
        name: name.into(),
        a: PortRef { node: a.0, port: a.1 },
        b: PortRef { node: b.0, port: b.1 },
        rate_bps: MBPS_100,
        delay_ns,
        jitter_ns: 0,
        queue_frames: 100,
        queue_bytes: 1_000_000,
        impair: Default::default(),
    }
}

fn two_hosts(flows: Vec<FlowConfig>, duration_ns: u64) -> SimConfig {
    SimConfig {
        seed: 1,
        duration_ns,
        nodes: vec![
            node("a", vec![port("eth0", 1, [10, 0, 0, 1], 24)], vec![], false),
            node("b", vec![port("eth0", 2, [10, 0, 0, 2], 24)], vec![], false),
        ],
        links: vec![ethernet("a-b", (0, 0), (1, 0), 1_000)],
        flows,
        ..Default::default()
    }
}

fn udp(id: u32, from: u32, to: [u8; 4], payload: u32, rate_pps: f64, stop_ns: u64) -> FlowConfig {
    FlowConfig::Udp {
        id,
        from,
        to: Ipv4Addr::from(to),
        dst_port: 9,
        payload,
        rate_pps,
        start_ns: 0,
        stop_ns,
        dont_fragment: false,
        dst_mac: None,
        src_mac: None,
    }
}

/// IEEE 802.3: from the first preamble bit to the last FCS bit, preamble 7 + SFD 1 +
/// frame (padded to 60) + FCS 4 bytes, in ns: when the receiver has the frame. (The
/// 12-byte inter-frame gap after it keeps the sender idle but delays no one.)
fn arrival_ns(frame_without_fcs: u64, rate_bps: u64) -> u64 {
    ((frame_without_fcs.max(60) + 12) * 8 * 1_000_000_000).div_ceil(rate_bps)
}

#[test]
fn constant_rate_udp_latency_is_serialization_plus_propagation() {
    let config = two_hosts(vec![udp(1, 0, [10, 0, 0, 2], 1472, 1000.0, 1_000_000_000)], 1_100_000_000);
    let results = sim::simulate(config).unwrap();
    let flow = &results.flows[0];
    assert_eq!(flow.sent, 1000);
    assert_eq!(flow.received, 1000);
    let latency = flow.latency_ns.unwrap();
    // 1472 + UDP 8 + IPv4 20 + Ethernet 14 = 1514 bytes; plus 1 µs propagation.
    let expected = arrival_ns(1514, MBPS_100) + 1_000;
    assert_eq!(latency.min, expected);
    // The first datagram waits for ARP: request and reply (42-byte frames padded to 60).
    assert_eq!(latency.max, expected + 2 * (arrival_ns(42, MBPS_100) + 1_000));
    assert_eq!(flow.jitter_ns.map(|j| j < 100.0), Some(true));
}

/// Datagrams sent exactly as the previous frame's inter-frame gap ends: each finds the
/// line free at that very instant and never waits. 1184 + 42 = 1226-byte frames are
/// 1226 + 24 = 1250 bytes on the wire, 100 µs at 100 Mbit/s, and 10 000 datagrams per
/// second are one every 100 µs. A ping first resolves ARP so that no datagram waits for
/// it. Nothing queues behind a frame, so no frame needs an event for the end of its
/// sending: the run takes about two events per datagram (its send and its arrival).
#[test]
fn datagrams_at_exactly_line_rate_never_wait() {
    let ping = FlowConfig::Ping {
        id: 1,
        from: 0,
        to: Ipv4Addr::new(10, 0, 0, 2),
        count: 1,
        interval_ns: 1_000_000,
        payload: 56,
        start_ns: 0,
    };
    let udp = FlowConfig::Udp {
        id: 2,
        from: 0,
        to: Ipv4Addr::new(10, 0, 0, 2),
        dst_port: 9,
        payload: 1184,
        rate_pps: 10_000.0,
        start_ns: 1_000_000,
        stop_ns: 101_000_000,
        dont_fragment: false,
        dst_mac: None,
        src_mac: None,
    };
    let results = sim::simulate(two_hosts(vec![ping, udp], 102_000_000)).unwrap();
    let flow = &results.flows[1];
    assert_eq!((flow.sent, flow.received), (1000, 1000));
    let latency = flow.latency_ns.unwrap();
    let expected = arrival_ns(1226, MBPS_100) + 1_000;
    assert_eq!((latency.min, latency.max), (expected, expected));
    // The line a -> b was busy 100 µs per datagram (and for the ping and an ARP frame).
    let busy = results.links[0].utilization[0] * 102_000_000.0;
    assert!((busy - 1000.0 * 100_000.0).abs() < 30_000.0, "busy {busy} ns");
    assert!(results.events < 2 * 1000 + 20, "{} events", results.events);
}

#[test]
fn saturating_udp_fills_the_line() {
    let config = two_hosts(vec![udp(1, 0, [10, 0, 0, 2], 1472, 0.0, 1_000_000_000)], 1_000_000_000);
    let results = sim::simulate(config).unwrap();
    let flow = &results.flows[0];
    // Payload share of the line: 1472 of 1538 bytes per frame on the wire.
    let expected = MBPS_100 as f64 * 1472.0 / 1538.0;
    let measured = flow.throughput_bps;
    assert!((measured - expected).abs() / expected < 0.005, "{measured} vs {expected}");
    assert!(results.links[0].utilization[0] > 0.99);
}

#[test]
fn ping_through_two_routers() {
    // a (10.0.1.1) — r1 — (10.0.2.0/24) — r2 — b (10.0.3.1)
    let nodes = vec![
        node(
            "a",
            vec![port("eth0", 1, [10, 0, 1, 1], 24)],
            vec![RouteConfig { destination: Ipv4Addr::UNSPECIFIED, prefix_len: 0, via: Ipv4Addr::new(10, 0, 1, 254) }],
            false,
        ),
        node(
            "r1",
            vec![port("eth0", 2, [10, 0, 1, 254], 24), port("eth1", 3, [10, 0, 2, 1], 24)],
            vec![RouteConfig {
                destination: Ipv4Addr::new(10, 0, 3, 0),
                prefix_len: 24,
                via: Ipv4Addr::new(10, 0, 2, 2),
            }],
            true,
        ),
        node(
            "r2",
            vec![port("eth0", 4, [10, 0, 2, 2], 24), port("eth1", 5, [10, 0, 3, 254], 24)],
            vec![RouteConfig {
                destination: Ipv4Addr::new(10, 0, 1, 0),
                prefix_len: 24,
                via: Ipv4Addr::new(10, 0, 2, 1),
            }],
            true,
        ),
        node(
            "b",
            vec![port("eth0", 6, [10, 0, 3, 1], 24)],
            vec![RouteConfig { destination: Ipv4Addr::UNSPECIFIED, prefix_len: 0, via: Ipv4Addr::new(10, 0, 3, 254) }],
            false,
        ),
    ];
    let links =
        vec![ethernet("l1", (0, 0), (1, 0), 0), ethernet("l2", (1, 1), (2, 0), 0), ethernet("l3", (2, 1), (3, 0), 0)];
    let flows = vec![FlowConfig::Ping {
        id: 7,
        from: 0,
        to: Ipv4Addr::new(10, 0, 3, 1),
        count: 3,
        interval_ns: 1_000_000_000,
        payload: 56,
        start_ns: 0,
    }];
    let config = SimConfig { seed: 1, duration_ns: 3_500_000_000, nodes, links, flows, ..Default::default() };
    let results = sim::simulate(config).unwrap();
    let ping = &results.flows[0];
    assert_eq!((ping.sent, ping.received), (3, 3));
    // Once ARP is resolved, an echo and its reply each cross three links: 98-byte frames
    // (56 data + 8 ICMP + 20 IPv4 + 14 Ethernet).
    assert_eq!(ping.rtt_ns[1], 6 * arrival_ns(98, MBPS_100));
    assert_eq!(results.nodes[1].forwarded, 6);
    assert!(results.nodes[1].arp_table.len() == 2);
}

#[test]
fn unreachable_destination_is_explained() {
    let config = two_hosts(vec![udp(1, 0, [10, 0, 0, 9], 100, 10.0, 500_000_000)], 5_000_000_000);
    let results = sim::simulate(config).unwrap();
    assert_eq!(results.flows[0].received, 0);
    let reasons: Vec<&str> = results.drop_log.iter().map(|d| d.reason.as_str()).collect();
    assert!(reasons.iter().any(|r| r.contains("no ARP reply from 10.0.0.9")), "{reasons:?}");
}

#[test]
fn same_seed_same_results() {
    let run = || {
        let config = two_hosts(
            vec![udp(1, 0, [10, 0, 0, 2], 200, 0.0, 200_000_000), udp(2, 1, [10, 0, 0, 1], 500, 3000.0, 200_000_000)],
            250_000_000,
        );
        serde_json::to_string(&sim::simulate(config).unwrap()).unwrap()
    };
    assert_eq!(run(), run());
}

#[test]
fn event_budget_stops_with_a_message() {
    let mut config = two_hosts(vec![udp(1, 0, [10, 0, 0, 2], 1472, 0.0, 1_000_000_000)], 1_000_000_000);
    config.budget.max_events = 1000;
    let err = sim::simulate(config).unwrap_err().to_string();
    assert!(err.contains("event") && err.contains("1000"), "{err}");
}

#[test]
fn bernoulli_loss_on_one_direction() {
    let mut config = two_hosts(vec![udp(1, 0, [10, 0, 0, 2], 100, 10_000.0, 1_000_000_000)], 1_100_000_000);
    if let LinkConfig::Ethernet { impair, .. } = &mut config.links[0] {
        impair[0].loss = Some(LossConfig::Bernoulli { p: 0.1 });
    }
    let results = sim::simulate(config).unwrap();
    let flow = &results.flows[0];
    let lost = (flow.sent - flow.received) as f64;
    // 10,000 datagrams at p = 0.1: mean 1000, standard deviation 30; allow 5 sigma.
    assert!((lost - 1000.0).abs() < 150.0, "{lost}");
    assert!(results.drop_log.iter().any(|d| d.reason.contains("lost on link a-b (Bernoulli loss p = 0.1)")));
}

#[test]
fn a_shaper_limits_the_rate() {
    let mut config = two_hosts(vec![udp(1, 0, [10, 0, 0, 2], 1472, 0.0, 2_000_000_000)], 2_000_000_000);
    if let LinkConfig::Ethernet { impair, .. } = &mut config.links[0] {
        impair[0].shaper =
            Some(ShaperConfig { rate_bps: 2_000_000, burst_bytes: 3_000, police: false, queue_bytes: None });
    }
    let results = sim::simulate(config).unwrap();
    // The bucket counts the 1514-byte frames: 2 Mb/s of frames is 2e6 × 1472/1514 b/s
    // of UDP payload (the burst adds at most 3000 bytes over the 2 s).
    let expected = 2e6 * 1472.0 / 1514.0;
    let measured = results.flows[0].throughput_bps;
    assert!((measured - expected).abs() / expected < 0.01, "{measured} vs {expected}");
}

#[test]
fn slip_line_latency_is_the_characters_on_the_line() {
    let nodes = vec![
        NodeConfig {
            ports: vec![PortConfig { point_to_point: true, ..port("sl0", 1, [10, 0, 0, 1], 24) }],
            ..node("a", vec![], vec![], false)
        },
        NodeConfig {
            ports: vec![PortConfig { point_to_point: true, ..port("sl0", 2, [10, 0, 0, 2], 24) }],
            ..node("b", vec![], vec![], false)
        },
    ];
    let links = vec![LinkConfig::Serial {
        name: "modem".into(),
        a: PortRef { node: 0, port: 0 },
        b: PortRef { node: 1, port: 0 },
        rate_bps: 1200,
        format: "8n1".into(),
        framing: qoslab_plan::from_name("slip").unwrap(),
        clocking: qoslab_plan::from_name("async").unwrap(),
        acfc: false,
        pfc: false,
        fcs_bits: 16,
        compression: 1.0,
        delay_ns: 0,
        jitter_ns: 0,
        queue_frames: 10,
        impair: Default::default(),
    }];
    let flows = vec![udp(1, 0, [10, 0, 0, 2], 40, 1.0, 5_000_000_000)];
    let config = SimConfig { seed: 1, duration_ns: 6_000_000_000, nodes, links, flows, ..Default::default() };
    let results = sim::simulate(config).unwrap();
    let flow = &results.flows[0];
    assert_eq!((flow.sent, flow.received), (5, 5));
    // RFC 1055: 68 bytes of datagram (40 + UDP 8 + IPv4 20) between two ENDs, plus an
    // escape for each END or ESC byte inside; 8N1 sends 10 bits a character at 1200 b/s.
    let latency = flow.latency_ns.unwrap();
    let line_ns = |chars: u64| chars * 10 * 1_000_000_000 / 1200;
    assert!(latency.min >= line_ns(70) && latency.max <= line_ns(70 + 6), "{latency:?}");
}

fn tcp_flow(bytes: Option<u64>, stop_ns: u64) -> FlowConfig {
    FlowConfig::Tcp {
        id: 5,
        from: 0,
        to: Ipv4Addr::new(10, 0, 0, 2),
        dst_port: 5201,
        bytes,
        start_ns: 0,
        stop_ns,
        tcp: TcpOptions::default(),
        interval_ns: None,
        trace: false,
    }
}

#[test]
fn bulk_tcp_fills_the_line() {
    // A 64 KiB window (43 segments) fits the 100-frame queue: no drop, so this measures
    // the path, not loss recovery.
    let mut flow = tcp_flow(None, 2_000_000_000);
    if let FlowConfig::Tcp { tcp, .. } = &mut flow {
        tcp.max_window = Some(65_535);
    }
    let results = sim::simulate(two_hosts(vec![flow], 2_100_000_000)).unwrap();
    let flow = &results.flows[0];
    // Linux defaults: timestamps on, so 1448 bytes of data in each 1500-byte packet, in
    // 1538 bytes on the wire (IEEE 802.3 overheads); slow start costs a few ms of 2 s.
    let line = MBPS_100 as f64 * 1448.0 / 1538.0;
    assert!(
        flow.throughput_bps > 0.98 * line && flow.throughput_bps <= line,
        "{} vs {line}: {:?} {:?}",
        flow.throughput_bps,
        flow.tcp,
        results.links
    );
    assert_eq!(flow.tcp.as_ref().unwrap().retransmits, 0);
}

#[test]
fn bulk_tcp_interval_reports_and_trace() {
    // iperf3 -t 2 -i 0.5 with a 64 KiB window: four intervals, each carrying the line
    // rate once slow start is over, and the per-ACK trace when asked for.
    let mut flow = tcp_flow(None, 2_000_000_000);
    if let FlowConfig::Tcp { tcp, interval_ns, trace, .. } = &mut flow {
        tcp.max_window = Some(65_535);
        *interval_ns = Some(500_000_000);
        *trace = true;
    }
    let results = sim::simulate(two_hosts(vec![flow], 2_100_000_000)).unwrap();
    let tcp = results.flows[0].tcp.as_ref().unwrap();
    let ends: Vec<u64> = tcp.intervals.iter().map(|r| r.end_ns).collect();
    assert_eq!(ends, vec![500_000_000, 1_000_000_000, 1_500_000_000, 2_000_000_000]);
    let line = MBPS_100 as f64 * 1448.0 / 1538.0;
    let mut before = 0;
    for (i, r) in tcp.intervals.iter().enumerate() {
        let rate = (r.bytes_received - before) as f64 * 8.0 / 0.5;
        before = r.bytes_received;
        // The first interval pays for the handshake and slow start.
        let low = if i == 0 { 0.9 } else { 0.99 };
        assert!(rate > low * line && rate <= 1.001 * line, "interval {i}: {rate} vs {line}");
        assert!(r.cwnd_bytes > 0 && r.srtt_ns.is_some() && r.retransmits == 0);
        assert!(r.bytes_acked <= r.bytes_sent && r.bytes_received <= r.bytes_sent);
    }
    let trace = tcp.trace.as_ref().expect("trace asked for");
    let n = trace.time_ns.len();
    assert!(n > 1000, "one row per ACK: {n}");
    assert!([trace.cwnd_bytes.len(), trace.srtt_ns.len(), trace.retransmits.len(), trace.in_recovery.len()]
        .iter()
        .all(|&l| l == n));
    assert!(trace.time_ns.windows(2).all(|w| w[0] <= w[1]));
    assert_eq!(*trace.cwnd_bytes.last().unwrap(), tcp.cwnd_bytes);
    assert!(tcp.min_rtt_ns.unwrap() <= tcp.mean_rtt_ns.unwrap() && tcp.mean_rtt_ns.unwrap() <= tcp.max_rtt_ns.unwrap());
}

#[test]
fn a_short_timed_test_counts_its_window_not_the_drain() {
    // iperf3 -t 0.2 -i 1 with Linux's buffers: the sender's socket holds far more than
    // 0.2 s of the line, and flushes it after the stop. The window is [start, stop]:
    // that flush is `bytes_after_stop`, and the goodput stays under the line's capacity
    // for 1448-byte segments (1538 bytes on the wire, IEEE 802.3 overheads).
    let stop = 200_000_000;
    let mut flow = tcp_flow(None, stop);
    if let FlowConfig::Tcp { interval_ns, .. } = &mut flow {
        *interval_ns = Some(1_000_000_000);
    }
    let results = sim::simulate(two_hosts(vec![flow], 3_000_000_000)).unwrap();
    let flow = &results.flows[0];
    let tcp = flow.tcp.as_ref().unwrap();
    let line = MBPS_100 as f64 * 1448.0 / 1538.0;
    assert_eq!(tcp.window.end_ns, stop);
    let window_rate = tcp.window.bytes_received as f64 * 8.0 / (stop as f64 / 1e9);
    assert!(window_rate <= line && window_rate > 0.5 * line, "{window_rate} vs {line}");
    assert!((flow.throughput_bps - window_rate).abs() < 1e-6 * line);
    assert!(tcp.window.bytes_acked <= tcp.window.bytes_received);
    // The drain is there, apart, and the two add up to what the receiver got.
    assert!(tcp.bytes_after_stop > 0);
    assert_eq!(tcp.window.bytes_received + tcp.bytes_after_stop, flow.bytes_received);
    // One interval, partial, ending at the stop with the window's counters.
    assert_eq!(tcp.intervals, vec![tcp.window]);
}

#[test]
fn a_sized_transfer_over_a_lossy_link_completes_exactly() {
    let mut config = two_hosts(vec![tcp_flow(Some(2_000_000), 60_000_000_000)], 60_000_000_000);
    if let LinkConfig::Ethernet { impair, .. } = &mut config.links[0] {
        impair[0].loss = Some(LossConfig::Bernoulli { p: 0.01 });
    }
    let results = sim::simulate(config).unwrap();
    let flow = &results.flows[0];
    let tcp = flow.tcp.as_ref().unwrap();
    assert_eq!(flow.bytes_received, 2_000_000);
    assert!(tcp.completed_ns.is_some());
    assert!(tcp.retransmits > 0);
    // Its window ends at its last byte: everything is in it, nothing after.
    assert_eq!(tcp.window.end_ns, tcp.completed_ns.unwrap());
    assert_eq!((tcp.window.bytes_received, tcp.bytes_after_stop), (2_000_000, 0));
    assert_eq!(tcp.path.stall_at_end_ns, 0);
}

#[test]
fn a_slow_cpu_limits_what_its_host_sends() {
    // 10^6 cycles per sent packet at 1 GHz: 1 ms of CPU each, so at most 1000 packets/s
    // leave, whatever the 100 Mb/s link could carry.
    let mut config = two_hosts(vec![udp(1, 0, [10, 0, 0, 2], 1472, 0.0, 2_000_000_000)], 2_000_000_000);
    config.nodes[0].cpu = CpuConfig {
        profile: "slow".into(),
        hz: 1_000_000_000,
        queue_limit: 10,
        cycles: CpuCycles { per_tx_packet: 1_000_000, ..CpuCycles::default() },
        atm_nic: Default::default(),
        rx_latency: Default::default(),
    };
    let results = sim::simulate(config).unwrap();
    let expected = 1000.0 * 1472.0 * 8.0;
    let measured = results.flows[0].throughput_bps;
    assert!((measured - expected).abs() / expected < 0.01, "{measured} vs {expected}");
    assert!(results.nodes[0].cpu_utilization > 0.99);
}
