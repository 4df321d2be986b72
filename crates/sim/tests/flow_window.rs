//! A flow's measurement window (docs/metrics.md#window, #goodput): a UDP flow offered at
//! twice a 10 Mb/s bottleneck behind a 100 Mb/s link fills the router's queue; what
//! drains after the sending stops is counted as drained, what arrives after the window
//! is late (lost), and the goodput never exceeds the bottleneck's rate for the payload,
//! computed here from IEEE 802.3 framing.

use std::net::Ipv4Addr;

use sim::config::*;

mod common;
use common::node;

const MS: u64 = 1_000_000;
const S: u64 = 1_000 * MS;
const PAYLOAD: u64 = 1472;
/// 1472 + UDP 8 + IPv4 20 + Ethernet header 14 + FCS 4, and preamble 8 + gap 12 (IEEE 802.3 §4.4.2).
const WIRE_BYTES: u64 = PAYLOAD + 8 + 20 + 18 + 20;
const BOTTLENECK_BPS: u64 = 10_000_000;
const QUEUE: usize = 1000;

fn port(name: &str, mac: u8, addr: [u8; 4]) -> PortConfig {
    PortConfig {
        name: name.into(),
        mac: [2, 0, 0, 0, 0, mac],
        address: Some((Ipv4Addr::from(addr), 24)),
        mtu: 1500,
        point_to_point: false,
        promiscuous: false,
    }
}

fn ethernet(name: &str, a: (u32, u16), b: (u32, u16), rate_bps: u64) -> LinkConfig {
    LinkConfig::Ethernet {
        name: name.into(),
        a: PortRef { node: a.0, port: a.1 },
        b: PortRef { node: b.0, port: b.1 },
        rate_bps,
        delay_ns: 0,
        jitter_ns: 0,
        queue_frames: QUEUE,
        queue_bytes: QUEUE * 1518,
        impair: Default::default(),
    }
}

/// a — 100 Mb/s — r — 10 Mb/s — b; a ping at 0 resolves ARP, then a UDP flow of 1472-byte
/// payloads at 20 Mb/s of frames from 1 s for `send_ns`.
fn overload(send_ns: u64, window: Option<(u64, u64)>, duration_ns: u64) -> SimConfig {
    let via =
        |gw: [u8; 4]| vec![RouteConfig { destination: Ipv4Addr::UNSPECIFIED, prefix_len: 0, via: Ipv4Addr::from(gw) }];
    let nodes = vec![
        node("a", vec![port("eth0", 1, [10, 0, 0, 1])], via([10, 0, 0, 2]), false),
        node("r", vec![port("eth0", 2, [10, 0, 0, 2]), port("eth1", 3, [10, 0, 1, 1])], vec![], true),
        node("b", vec![port("eth0", 4, [10, 0, 1, 2])], via([10, 0, 1, 1]), false),
    ];
    let links = vec![ethernet("l1", (0, 0), (1, 0), 100_000_000), ethernet("l2", (1, 1), (2, 0), BOTTLENECK_BPS)];
    let pps = 2.0 * BOTTLENECK_BPS as f64 / (WIRE_BYTES * 8) as f64;
    let flows = vec![
        FlowConfig::Ping {
            id: 0,
            from: 0,
            to: Ipv4Addr::new(10, 0, 1, 2),
            count: 1,
            interval_ns: S,
            payload: 56,
            start_ns: 0,
        },
        FlowConfig::Udp {
            id: 1,
            from: 0,
            to: Ipv4Addr::new(10, 0, 1, 2),
            dst_port: 9,
            payload: PAYLOAD as u32,
            rate_pps: pps,
            start_ns: S,
            stop_ns: S + send_ns,
            dont_fragment: false,
            dst_mac: None,
            src_mac: None,
        },
    ];
    let windows = window.map(|(stop_ns, end_ns)| vec![WindowConfig { flow: 1, stop_ns, end_ns }]).unwrap_or_default();
    SimConfig { seed: 1, duration_ns, nodes, links, flows, windows, ..Default::default() }
}

/// Payload bits per second the 10 Mb/s link carries of these datagrams.
fn bottleneck_goodput_bps() -> f64 {
    BOTTLENECK_BPS as f64 * PAYLOAD as f64 / WIRE_BYTES as f64
}

#[test]
fn goodput_of_an_overloaded_flow_is_the_bottleneck_not_the_queue() {
    // 2 s at twice the bottleneck: 1000 frames queue at the router and drain for ~1.2 s
    // after the sending stops, inside the 2 s wait.
    let stop = 3 * S;
    let r = sim::simulate(overload(2 * S, Some((stop, stop + 2 * S)), stop + 2 * S)).unwrap();
    let f = &r.flows[1];
    assert!(f.drained >= QUEUE as u64 - 1, "the queue drained after the stop: {}", f.drained);
    assert_eq!(f.late, 0);
    assert!(f.last_rx_ns.unwrap() > stop + S, "the drain lasted beyond a second");
    let bound = bottleneck_goodput_bps();
    assert!(f.throughput_bps <= bound, "{} above the bottleneck's {bound}", f.throughput_bps);
    assert!(f.throughput_bps > 0.999 * bound, "{} well below the bottleneck's {bound}", f.throughput_bps);
    // Over the sending interval alone it would have been far above the line.
    assert!(f.bytes_received as f64 * 8.0 / 2.0 > 1.4 * bound);
}

#[test]
fn arrivals_after_the_window_are_late_and_lost() {
    // The window ends 0.5 s after the stop while the queue needs ~1.2 s to drain; the run
    // goes on to see the rest arrive. 0.5 s of the bottleneck is 0.5 / (1538 × 8 / 10^7)
    // = 406 frames drained inside the window; the rest of the 1000 queued are late.
    let stop = 3 * S;
    let r = sim::simulate(overload(2 * S, Some((stop, stop + S / 2)), stop + 3 * S)).unwrap();
    let f = &r.flows[1];
    let frame_ns = WIRE_BYTES * 8 * 1_000_000_000 / BOTTLENECK_BPS;
    let in_wait = (S / 2) / frame_ns;
    assert!(f.drained.abs_diff(in_wait) <= 1, "drained {} expected {in_wait}", f.drained);
    assert!(f.late >= QUEUE as u64 - in_wait - 1, "late {}", f.late);
    assert!(f.last_rx_ns.unwrap() <= stop + S / 2);
    assert_eq!(f.lost, f.sent - f.received);
    assert!(f.lost >= f.late);
    assert!(f.throughput_bps <= bottleneck_goodput_bps());
}

#[test]
fn a_flow_without_a_window_counts_every_arrival_of_the_run() {
    let r = sim::simulate(overload(2 * S, None, 5 * S)).unwrap();
    let f = &r.flows[1];
    assert_eq!(f.late, 0);
    assert!(f.drained >= QUEUE as u64 - 1);
    assert!(f.throughput_bps <= bottleneck_goodput_bps());
}

#[test]
fn a_window_for_no_flow_is_refused() {
    let mut c = overload(S, None, 3 * S);
    c.windows = vec![WindowConfig { flow: 9, stop_ns: S, end_ns: 2 * S }];
    let err = sim::simulate(c).unwrap_err().to_string();
    assert!(err.contains("windows[0].flow"), "{err}");
    let mut c = overload(S, None, 3 * S);
    c.windows = vec![WindowConfig { flow: 1, stop_ns: 2 * S, end_ns: S }];
    assert!(sim::simulate(c).unwrap_err().to_string().contains("windows[0].end_ns"));
}
