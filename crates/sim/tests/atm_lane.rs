//! LAN Emulation v1 and MPOA end to end: the client's join sequence (af-lane-0021.000
//! §5.1), LE_ARP and flooding through the BUS (§7.1.5), the BUS's capacity, Ethernet
//! edge devices bridging into an ELAN, and an MPOA shortcut past a router. Expected
//! numbers are computed here from the standards (frame and cell sizes, line rates).

mod common;

use std::net::Ipv4Addr;

use common::{atm_link, atm_port, atm_switch_node, node};
use sim::atm::config::{AtmConfig, SwitchConfig};
use sim::atm::lane::{ElanConfig, LaneConfig, LecConfig, MpoaConfig};
use sim::config::{
    BridgeConfig, BridgeMode, FlowConfig, LinkConfig, NodeConfig, PortConfig, PortRef, RouteConfig, SimConfig,
};

const MS: u64 = 1_000_000;

fn ip(net: u8, last: u8) -> Ipv4Addr {
    Ipv4Addr::new(10, 0, net, last)
}

fn lan_port(name: &str, mac_last: u8, address: Option<(Ipv4Addr, u8)>) -> PortConfig {
    PortConfig {
        name: name.into(),
        mac: [2, 0, 0, 0, 0, mac_last],
        address,
        mtu: 1500,
        point_to_point: false,
        promiscuous: false,
    }
}

fn switch(node: u32) -> SwitchConfig {
    SwitchConfig {
        node,
        queue_cells: 1024,
        epd_threshold_cells: None,
        ppd: false,
        signalling_ns: MS,
        cross_connects: vec![],
        ..Default::default()
    }
}

fn elan(name: &str, server: (u32, u16)) -> ElanConfig {
    let p = PortRef { node: server.0, port: server.1 };
    ElanConfig {
        name: name.into(),
        les: p,
        bus: p,
        bus_cells_per_second: 53_000,
        bus_frames_per_second: None,
        bus_queue_frames: 64,
    }
}

fn lec(n: u32, elan: usize, proxy: bool) -> LecConfig {
    LecConfig { port: PortRef { node: n, port: 0 }, elan, proxy }
}

fn eth(name: &str, a: (u32, u16), b: (u32, u16), rate: u64) -> LinkConfig {
    LinkConfig::Ethernet {
        name: name.into(),
        a: PortRef { node: a.0, port: a.1 },
        b: PortRef { node: b.0, port: b.1 },
        rate_bps: rate,
        delay_ns: 0,
        jitter_ns: 0,
        queue_frames: 1000,
        queue_bytes: 10_000_000,
        impair: Default::default(),
    }
}

/// h1 (0), h2 (1) as LE clients, the LANE server (2, LECS + LES + BUS), one switch (3).
fn two_hosts() -> SimConfig {
    let mut srv = node("srv", vec![atm_port("atm0", 50, None, 1500)], vec![], false);
    srv.role = qoslab_plan::from_name("lane-server").unwrap();
    SimConfig {
        seed: 1,
        duration_ns: 1_000 * MS,
        nodes: vec![
            node("h1", vec![lan_port("atm0", 1, Some((ip(0, 1), 24)))], vec![], false),
            node("h2", vec![lan_port("atm0", 2, Some((ip(0, 2), 24)))], vec![], false),
            srv,
            atm_switch_node("sw", 3),
        ],
        links: vec![
            atm_link("l1", (0, 0), (3, 0), &[]),
            atm_link("l2", (1, 0), (3, 1), &[]),
            atm_link("l3", (2, 0), (3, 2), &[]),
        ],
        atm: AtmConfig {
            switches: vec![switch(3)],
            lane: LaneConfig {
                elans: vec![elan("elan1", (2, 0))],
                lecs: Some(PortRef { node: 2, port: 0 }),
                clients: vec![lec(0, 0, false), lec(1, 0, false)],
                ..Default::default()
            },
            ..Default::default()
        },
        ..Default::default()
    }
}

/// No cell may arrive on a VC a switch does not know, and no frame be corrupt.
fn assert_clean(r: &sim::results::Results) {
    let atm = r.atm.as_ref().unwrap();
    assert!(atm.unknown_vc_cells.iter().all(|&c| c == 0), "cells on unknown VCs: {:?}", atm.unknown_vc_cells);
    assert_eq!(atm.frames_corrupt, 0);
}

fn log_of(r: &sim::results::Results, node: u32) -> Vec<String> {
    r.atm.as_ref().unwrap().lane.log.iter().filter(|(_, n, _)| *n == node).map(|(_, _, s)| s.clone()).collect()
}

#[test]
fn join_follows_configure_join_and_bus_connect() {
    let r = sim::simulate(two_hosts()).unwrap();
    assert_clean(&r);
    let lane = &r.atm.as_ref().unwrap().lane;
    assert_eq!(lane.joined.len(), 2, "both clients operational: {:?}", lane.log);
    // §5.1: LECS connect and configuration, join, then BUS connect through an LE_ARP
    // for the broadcast MAC.
    let want = [
        "sends LE_CONFIGURE_REQUEST",
        "receives LE_CONFIGURE_RESPONSE",
        "sends LE_JOIN_REQUEST",
        "receives LE_JOIN_RESPONSE",
        "sends LE_ARP_REQUEST",
        "receives LE_ARP_RESPONSE",
        "operational",
    ];
    for n in [0, 1] {
        assert_eq!(log_of(&r, n), want, "client {n}");
    }
    // The server answered each request once: 2 × (configure, join, ARP).
    let srv = log_of(&r, 2);
    assert_eq!(srv.iter().filter(|s| s.starts_with("sends")).count(), 6);
    // Each call takes two switch hops' signalling (SETUP and CONNECT, 1 ms each, through
    // one switch): four calls (LECS, LES, BUS, and the BUS's call back is concurrent)
    // place the join after at least 3 set-ups of 2 ms.
    for (_, t) in &lane.joined {
        assert!(*t >= 6 * MS, "joined at {t} ns");
    }
}

#[test]
fn first_packets_flood_through_the_bus_until_the_data_direct_vcc() {
    let mut c = two_hosts();
    c.flows = vec![FlowConfig::Ping {
        id: 1,
        from: 0,
        to: ip(0, 2),
        count: 5,
        interval_ns: 100 * MS,
        payload: 56,
        start_ns: 100 * MS,
    }];
    let r = sim::simulate(c).unwrap();
    assert_eq!(r.flows[0].received, 5, "{:?}", r.atm.as_ref().unwrap().lane.log);
    assert_clean(&r);
    let lane = &r.atm.as_ref().unwrap().lane;
    // One ARP request (broadcast) through the BUS.
    assert_eq!(lane.broadcast_frames, 1);
    // h1 knows h2's MAC from its ARP reply, but not its ATM address: the first echo
    // request goes through the BUS (C10 = 1) while h1 LE_ARPs; h2 the same for the ARP
    // reply. Then data-direct VCCs: both LE_ARP at about the same time, so both may
    // call (LANE v1 lets clients keep or release a duplicate), no more flooding.
    assert_eq!(lane.unknown_frames, 2);
    assert!((1..=2).contains(&lane.data_direct_vccs), "{}", lane.data_direct_vccs);
    // Each client flooded one frame to the other, so each flushes the BUS path once
    // before switching to the data-direct VCC; the target answers every flush.
    assert_eq!(lane.flush_requests, 2);
    assert_eq!(lane.flush_responses, 2);
    assert_eq!(lane.bus_frames_in, lane.broadcast_frames + lane.unknown_frames + lane.flush_requests);
    // The BUS echoes to both clients: 5 frames × 2 leaves; each drops its own.
    assert_eq!(lane.bus_frames_out, 5);
    // Order at h1 after it is operational: the LE_ARP for h2 precedes everything direct.
    let log = log_of(&r, 0);
    let op = log.iter().position(|s| s == "operational").unwrap();
    assert_eq!(log[op + 1], "sends LE_ARP_REQUEST");
    assert_eq!(log[op + 2], "receives LE_ARP_RESPONSE");
}

/// h1 sends 200 datagrams/s to h2 from the start through a BUS that serves 20
/// frames/s (50 ms each): the first datagram to h2 waits 50 ms in the BUS while the
/// LE_ARP and the data-direct SVC take a few ms.
fn slow_bus(flush: bool) -> sim::results::Results {
    let mut c = two_hosts();
    c.atm.lane.flush = flush;
    c.atm.lane.elans[0].bus_frames_per_second = Some(20);
    c.flows = vec![FlowConfig::Udp {
        id: 1,
        from: 0,
        to: ip(0, 2),
        dst_port: 9,
        payload: 100,
        rate_pps: 200.0,
        start_ns: 100 * MS,
        stop_ns: 600 * MS,
        dont_fragment: false,
        dst_mac: None,
        src_mac: None,
    }];
    sim::simulate(c).unwrap()
}

#[test]
fn flush_keeps_frames_in_order_across_the_switch_to_the_data_direct_vcc() {
    // Without the flush protocol the frames held for the data-direct VCC overtake the
    // one still queued in the BUS: the receiver sees it late (RFC 4737 §3.3 reordering).
    let r = slow_bus(false);
    assert_clean(&r);
    let lane = &r.atm.as_ref().unwrap().lane;
    assert!(lane.unknown_frames >= 1 && lane.data_direct_vccs >= 1);
    assert_eq!(lane.flush_requests, 0);
    assert!(r.flows[0].reordered >= 1, "without flush: {} reordered", r.flows[0].reordered);
    // With it (LE_FLUSH_REQUEST down the BUS path behind the flooded frame, frames held
    // until the LE_FLUSH_RESPONSE), nothing arrives out of order and nothing is lost
    // that the run without flush delivered (at 200/s the frames held during the
    // ~100 ms flush stay under the client's queue of 64).
    let f = slow_bus(true);
    assert_clean(&f);
    let lane = &f.atm.as_ref().unwrap().lane;
    assert!(
        lane.flush_requests >= 1 && lane.flush_responses == lane.flush_requests,
        "{} requests, {} responses",
        lane.flush_requests,
        lane.flush_responses
    );
    assert!(lane.held_by_flush > 0);
    assert_eq!(f.flows[0].reordered, 0);
    assert_eq!(f.flows[0].received, r.flows[0].received);
    // The flush request left h1 after its flooded frame and before any direct frame:
    // the order of h1's control log.
    let log = log_of(&f, 0);
    let flush = log.iter().position(|s| s == "sends LE_FLUSH_REQUEST").expect("h1 flushed");
    assert!(log[flush..].iter().any(|s| s == "receives LE_FLUSH_RESPONSE"));
}

#[test]
fn le_arp_entries_age_out_after_c17_and_are_resolved_again() {
    // af-lane-0021.000 C17 Aging Time, 300 s: a ping every 10 s for 400 s.
    let mut c = two_hosts();
    c.duration_ns = 401_000 * MS;
    c.flows = vec![FlowConfig::Ping {
        id: 1,
        from: 0,
        to: ip(0, 2),
        count: 40,
        interval_ns: 10_000 * MS,
        payload: 56,
        start_ns: 100 * MS,
    }];
    let r = sim::simulate(c).unwrap();
    assert_eq!(r.flows[0].received, 40);
    assert_clean(&r);
    let lane = &r.atm.as_ref().unwrap().lane;
    // Each client's entry for the other expires once in 400 s.
    assert_eq!(lane.le_arp_aged, 2, "{:?}", lane.log);
    let h1: Vec<(u64, String)> = lane.log.iter().filter(|(_, n, _)| *n == 0).map(|(t, _, s)| (*t, s.clone())).collect();
    // h1 resolved h2 when the first echo request left (after the BUS's LE_ARP at the join).
    let responses: Vec<u64> = h1.iter().filter(|(_, s)| s == "receives LE_ARP_RESPONSE").map(|(t, _)| *t).collect();
    assert_eq!(responses.len(), 3, "BUS, h2, h2 again: {h1:?}");
    let verified = responses[1];
    // The entry expires at the first echo request sent 300 s or more after that: the
    // requests leave at 0.1 s + k × 10 s.
    let first_stale = (0..40u64).map(|k| 100 * MS + k * 10_000 * MS).find(|&t| t >= verified + 300_000 * MS).unwrap();
    let aged = h1.iter().find(|(_, s)| s.contains("aged out")).map(|(t, _)| *t).unwrap();
    assert_eq!(aged, first_stale);
    // ... and is asked for again at once, then verified anew.
    let asked: Vec<u64> = h1.iter().filter(|(_, s)| s == "sends LE_ARP_REQUEST").map(|(t, _)| *t).collect();
    assert_eq!(asked.len(), 3);
    assert_eq!(asked[2], aged);
    assert!(responses[2] > aged);
}

#[test]
fn bus_forwards_at_its_cell_rate_and_drops_above() {
    let mut c = two_hosts();
    c.duration_ns = 1_200 * MS;
    // h1 floods subnet broadcasts at OC-3 line rate: all of it goes through the BUS.
    c.flows = vec![FlowConfig::Udp {
        id: 1,
        from: 0,
        to: ip(0, 255),
        dst_port: 9,
        payload: 1472,
        rate_pps: 0.0,
        start_ns: 200 * MS,
        stop_ns: 1_200 * MS,
        dont_fragment: false,
        dst_mac: None,
        src_mac: None,
    }];
    let r = sim::simulate(c).unwrap();
    let lane = &r.atm.as_ref().unwrap().lane;
    // 1472 + 8 (UDP) + 20 (IP) + 14 (802.3) + 2 (LE header) + 8 (AAL5 trailer) = 1524:
    // 32 cells. At 53,000 cells/s the BUS serves 1,656.25 frames/s.
    let cells = (1472u64 + 8 + 20 + 14 + 2 + 8).div_ceil(48);
    assert_eq!(cells, 32);
    let expected = 53_000.0 / cells as f64;
    let served = lane.bus_frames_out as f64 / 1.0;
    assert!((served - expected).abs() / expected < 0.01, "BUS served {served} frames/s, expected {expected:.1}");
    // The source sends at the OC-3 cell rate, 353,207.5 / 32 frames/s; what the BUS
    // cannot serve it drops.
    let offered = 149_760_000.0 / 424.0 / cells as f64;
    let dropped = lane.bus_frames_dropped as f64;
    assert!(
        (dropped - (offered - expected)).abs() / (offered - expected) < 0.02,
        "{dropped} dropped, expected {:.0}",
        offered - expected
    );
}

#[test]
fn bus_frame_limit_applies_when_set() {
    let mut c = two_hosts();
    c.atm.lane.elans[0].bus_frames_per_second = Some(1_000);
    c.atm.lane.elans[0].bus_cells_per_second = 10_000_000;
    c.flows = vec![FlowConfig::Udp {
        id: 1,
        from: 0,
        to: ip(0, 255),
        dst_port: 9,
        payload: 100,
        rate_pps: 0.0,
        start_ns: 200 * MS,
        stop_ns: 1_000 * MS,
        dont_fragment: false,
        dst_mac: None,
        src_mac: None,
    }];
    let r = sim::simulate(c).unwrap();
    let lane = &r.atm.as_ref().unwrap().lane;
    let per_s = lane.bus_frames_out as f64 / 0.8;
    assert!((per_s - 1000.0).abs() < 15.0, "{per_s} frames/s");
}

/// pc1 (4) — e1 (0, edge device) =ATM= e2 (1) — pc2 (5); the LANE server (2), switch (3).
fn edge_devices(rate: u64) -> SimConfig {
    let mut c = two_hosts();
    for (i, name) in [(0usize, "e1"), (1, "e2")] {
        let mut n =
            node(name, vec![lan_port("atm0", 10 + i as u8, None), lan_port("eth0", 20 + i as u8, None)], vec![], false);
        n.role = qoslab_plan::from_name("switch").unwrap();
        n.bridge = Some(BridgeConfig {
            ports: vec![0, 1],
            mode: BridgeMode::L2,
            mac: [2, 0, 0, 0, 0, 10 + i as u8],
            address: None,
            aging_ns: 300_000 * MS,
        });
        c.nodes[i] = n;
    }
    c.nodes.push(node("pc1", vec![lan_port("eth0", 31, Some((ip(0, 31), 24)))], vec![], false));
    c.nodes.push(node("pc2", vec![lan_port("eth0", 32, Some((ip(0, 32), 24)))], vec![], false));
    c.links.push(eth("e-pc1", (4, 0), (0, 1), rate));
    c.links.push(eth("e-pc2", (1, 1), (5, 0), rate));
    c.atm.lane.clients = vec![lec(0, 0, true), lec(1, 0, true)];
    c
}

#[test]
fn ethernet_to_ethernet_through_edge_devices_fills_10_mbps() {
    let mut c = edge_devices(10_000_000);
    c.duration_ns = 2_100 * MS;
    c.flows = vec![FlowConfig::Udp {
        id: 1,
        from: 4,
        to: ip(0, 32),
        dst_port: 9,
        payload: 1472,
        rate_pps: 0.0,
        start_ns: 100 * MS,
        stop_ns: 2_100 * MS,
        dont_fragment: false,
        dst_mac: None,
        src_mac: None,
    }];
    let r = sim::simulate(c).unwrap();
    assert_clean(&r);
    let f = &r.flows[0];
    // IEEE 802.3 at 10 Mb/s: 1472 + 28 + 14 + 4 (FCS) = 1518 octets plus 8 of preamble
    // and 12 of inter-frame gap per frame.
    let expected = 10e6 * 1472.0 / 1538.0;
    let rel = (f.throughput_bps - expected).abs() / expected;
    assert!(rel < 0.01, "{:.3} Mb/s vs {:.3}", f.throughput_bps / 1e6, expected / 1e6);
    assert!(f.lost as f64 <= 0.01 * f.sent as f64, "{} of {} lost", f.lost, f.sent);
    let lane = &r.atm.as_ref().unwrap().lane;
    // The proxies join without registering a MAC; pc2's MAC is found by the LES
    // forwarding the LE_ARP to the proxies: one unknown frame per direction at most.
    assert!(lane.unknown_frames <= 3, "{} unknown frames", lane.unknown_frames);
    assert!(lane.direct_frames > 1000);
}

/// Two ELANs joined by a router that runs the MPS: h1 (0) in elan1 (10.0.1.0/24),
/// h2 (1) in elan2 (10.0.2.0/24), router (4) with a LANE port in each.
fn two_elans(mpoa: bool) -> SimConfig {
    let mut c = two_hosts();
    c.nodes[0] = node(
        "h1",
        vec![lan_port("atm0", 1, Some((ip(1, 1), 24)))],
        vec![RouteConfig { destination: Ipv4Addr::UNSPECIFIED, prefix_len: 0, via: ip(1, 254) }],
        false,
    );
    c.nodes[1] = node(
        "h2",
        vec![lan_port("atm0", 2, Some((ip(2, 1), 24)))],
        vec![RouteConfig { destination: Ipv4Addr::UNSPECIFIED, prefix_len: 0, via: ip(2, 254) }],
        false,
    );
    c.nodes[3] = atm_switch_node("sw", 5);
    let r: NodeConfig = node(
        "rs",
        vec![lan_port("atm0", 40, Some((ip(1, 254), 24))), lan_port("atm1", 41, Some((ip(2, 254), 24)))],
        vec![],
        true,
    );
    c.nodes.push(r);
    c.links.push(atm_link("l4", (4, 0), (3, 3), &[]));
    c.links.push(atm_link("l5", (4, 1), (3, 4), &[]));
    c.atm.lane.elans = vec![elan("elan1", (2, 0)), elan("elan2", (2, 0))];
    c.atm.lane.clients = vec![
        lec(0, 0, false),
        lec(1, 1, false),
        lec(4, 0, false),
        LecConfig { port: PortRef { node: 4, port: 1 }, elan: 1, proxy: false },
    ];
    if mpoa {
        c.atm.lane.mpoa = Some(MpoaConfig {
            servers: vec![PortRef { node: 4, port: 0 }, PortRef { node: 4, port: 1 }],
            shortcut_frames: 10,
            shortcut_time_ns: 1_000 * MS,
        });
    }
    c
}

#[test]
fn mpoa_shortcut_after_ten_packets_in_a_second() {
    let mut c = two_elans(true);
    c.flows = vec![FlowConfig::Ping {
        id: 1,
        from: 0,
        to: ip(2, 1),
        count: 30,
        interval_ns: 20 * MS,
        payload: 56,
        start_ns: 100 * MS,
    }];
    let r = sim::simulate(c).unwrap();
    assert_eq!(r.flows[0].received, 30, "{:?}", r.atm.as_ref().unwrap().lane.log);
    assert_clean(&r);
    let lane = &r.atm.as_ref().unwrap().lane;
    // Both MPCs (h1 for requests, h2 for replies) cross 10 packets in 1 s.
    assert_eq!(lane.mpoa_resolution_requests, 2);
    assert_eq!(lane.shortcuts, 2);
    // The first ten packets each way went through the router; the 20 ms spacing leaves
    // time for resolution and set-up before the 11th or 12th.
    assert!(
        lane.shortcut_packets >= 2 * 17 && lane.shortcut_packets <= 2 * 20,
        "{} on shortcuts",
        lane.shortcut_packets
    );
    // Without MPOA everything goes through the router.
    let mut c = two_elans(false);
    c.flows = vec![FlowConfig::Ping {
        id: 1,
        from: 0,
        to: ip(2, 1),
        count: 30,
        interval_ns: 20 * MS,
        payload: 56,
        start_ns: 100 * MS,
    }];
    let r = sim::simulate(c).unwrap();
    assert_eq!(r.flows[0].received, 30);
    assert_eq!(r.atm.as_ref().unwrap().lane.shortcut_packets, 0);
}

/// Three ELANs in a row, two routers, each running an MPS: h1 (0) in elan1
/// (10.0.1.0/24), rA (4) between elan1 and elan2 (10.0.2.0/24), rB (5) between elan2
/// and elan3 (10.0.3.0/24), h2 (1) in elan3. h1's MPS (rA's) does not serve h2.
fn three_elans() -> SimConfig {
    let mut c = two_hosts();
    let dflt = |via| vec![RouteConfig { destination: Ipv4Addr::UNSPECIFIED, prefix_len: 0, via }];
    c.nodes[0] = node("h1", vec![lan_port("atm0", 1, Some((ip(1, 1), 24)))], dflt(ip(1, 254)), false);
    c.nodes[1] = node("h2", vec![lan_port("atm0", 2, Some((ip(3, 1), 24)))], dflt(ip(3, 254)), false);
    c.nodes[3] = atm_switch_node("sw", 7);
    let net = |n: u8| RouteConfig { destination: ip(n, 0), prefix_len: 24, via: Ipv4Addr::UNSPECIFIED };
    let ra = node(
        "rA",
        vec![lan_port("atm0", 40, Some((ip(1, 254), 24))), lan_port("atm1", 41, Some((ip(2, 253), 24)))],
        vec![RouteConfig { via: ip(2, 254), ..net(3) }],
        true,
    );
    let rb = node(
        "rB",
        vec![lan_port("atm0", 60, Some((ip(2, 254), 24))), lan_port("atm1", 61, Some((ip(3, 254), 24)))],
        vec![RouteConfig { via: ip(2, 253), ..net(1) }],
        true,
    );
    c.nodes.push(ra);
    c.nodes.push(rb);
    c.links.push(atm_link("l4", (4, 0), (3, 3), &[]));
    c.links.push(atm_link("l5", (4, 1), (3, 4), &[]));
    c.links.push(atm_link("l6", (5, 0), (3, 5), &[]));
    c.links.push(atm_link("l7", (5, 1), (3, 6), &[]));
    c.atm.lane.elans = vec![elan("elan1", (2, 0)), elan("elan2", (2, 0)), elan("elan3", (2, 0))];
    let lc = |n: u32, port: u16, elan: usize| LecConfig { port: PortRef { node: n, port }, elan, proxy: false };
    c.atm.lane.clients = vec![lc(0, 0, 0), lc(1, 0, 2), lc(4, 0, 0), lc(4, 1, 1), lc(5, 0, 1), lc(5, 1, 2)];
    let mps = |n: u32, port: u16| PortRef { node: n, port };
    c.atm.lane.mpoa = Some(MpoaConfig {
        servers: vec![mps(4, 0), mps(4, 1), mps(5, 0), mps(5, 1)],
        shortcut_frames: 10,
        shortcut_time_ns: 1_000 * MS,
    });
    c
}

#[test]
fn nhrp_resolution_crosses_two_next_hop_servers() {
    let mut c = three_elans();
    c.flows = vec![FlowConfig::Ping {
        id: 1,
        from: 0,
        to: ip(3, 1),
        count: 30,
        interval_ns: 20 * MS,
        payload: 56,
        start_ns: 100 * MS,
    }];
    let r = sim::simulate(c).unwrap();
    let lane = &r.atm.as_ref().unwrap().lane;
    assert_eq!(r.flows[0].received, 30, "{:?}", lane.log);
    assert_clean(&r);
    // RFC 2332 §5.2.1: h1's MPS (rA) does not serve 10.0.3.1, so it forwards the
    // request to the next NHS on the routed path (rB's MPS), which answers; rA relays
    // the answer to h1's MPC. The same for h2's replies the other way: two forwards,
    // two relays, two MPOA requests and two MPOA replies.
    assert_eq!(lane.mpoa_resolution_requests, 2);
    assert_eq!(lane.nhrp_forwarded, 2);
    assert_eq!(lane.nhrp_relayed, 2);
    assert_eq!(lane.mpoa_resolution_replies, 2);
    let ra = log_of(&r, 4);
    let rb = log_of(&r, 5);
    assert!(ra.iter().any(|s| s == "sends NHRP Resolution Request for 10.0.3.1"), "{ra:?}");
    assert!(rb.iter().any(|s| s == "sends NHRP Resolution Reply for 10.0.3.1"), "{rb:?}");
    assert!(ra.iter().any(|s| s == "sends MPOA Resolution Reply for 10.0.3.1"), "{ra:?}");
    // Each host's MPC opens a shortcut straight to the other's (the egress MPC named in
    // the reply), past both routers: after the first ten packets or so each way.
    assert_eq!(lane.shortcuts, 2);
    assert!(
        lane.shortcut_packets >= 2 * 17 && lane.shortcut_packets <= 2 * 20,
        "{} on shortcuts",
        lane.shortcut_packets
    );
}
