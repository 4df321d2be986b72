//! Classical IP over ATM end to end: PVCs with InATMARP, SVCs through an ATMARP server
//! and UNI signalling, cell loss and early packet discard at a switch. Expected numbers
//! are computed here from the standards (cell counts, line rates), not taken from the
//! simulator.

mod common;

use std::net::Ipv4Addr;

use common::{atm_link, atm_port, atm_switch_node, node};
use sim::atm::config::{AtmConfig, CrossConnect, LisConfig, SwitchConfig, VcEnd};
use sim::config::{FlowConfig, NodeConfig, SimConfig};

const MS: u64 = 1_000_000;
/// G.707 §10.1.1: OC-3c carries 149.76 Mb/s of cells.
const OC3_CELLS_PER_S: f64 = 149_760_000.0 / 424.0;

fn ip(last: u8) -> Ipv4Addr {
    Ipv4Addr::new(192, 0, 2, last)
}

fn host(name: &str, last: u8, mtu: u16) -> NodeConfig {
    node(name, vec![atm_port("atm0", last, Some((ip(last), 24)), mtu)], vec![], false)
}

fn switch(node: u32, cross: &[(u16, u16, u16)]) -> SwitchConfig {
    SwitchConfig {
        node,
        queue_cells: 1024,
        epd_threshold_cells: None,
        ppd: false,
        signalling_ns: MS,
        cross_connects: cross
            .iter()
            .map(|&(a, b, vci)| CrossConnect { a: VcEnd { port: a, vpi: 0, vci }, b: VcEnd { port: b, vpi: 0, vci } })
            .collect(),
        ..Default::default()
    }
}

/// ws1 (node 0) — switch (node 2) — ws2 (node 1), PVC 0/100 end to end.
fn pvc_pair(mtu: u16) -> SimConfig {
    SimConfig {
        seed: 1,
        duration_ns: 1_000 * MS,
        nodes: vec![host("ws1", 1, mtu), host("ws2", 2, mtu), atm_switch_node("sw", 2)],
        links: vec![atm_link("l1", (0, 0), (2, 0), &[(0, 100)]), atm_link("l2", (2, 1), (1, 0), &[(0, 100)])],
        atm: AtmConfig {
            switches: vec![switch(2, &[(0, 1, 100)])],
            lis: vec![],
            host_signalling_ns: 0,
            ..Default::default()
        },
        ..Default::default()
    }
}

fn udp(from: u32, to: Ipv4Addr, payload: u32, start: u64, stop: u64) -> FlowConfig {
    FlowConfig::Udp {
        id: from,
        from,
        to,
        dst_port: 9,
        payload,
        rate_pps: 0.0,
        start_ns: start,
        stop_ns: stop,
        dont_fragment: false,
        dst_mac: None,
        src_mac: None,
    }
}

/// Cells of one UDP datagram over CLIP with LLC/SNAP: UDP + IP headers (28), LLC/SNAP
/// (8, RFC 2684 §5.1), AAL5 trailer (8, I.363.5), in 48-octet payloads.
fn cells_per_datagram(payload: u64) -> u64 {
    (payload + 28 + 8 + 8).div_ceil(48)
}

#[test]
fn pvc_udp_fills_the_oc3_cell_rate() {
    for payload in [1472u32, 9152] {
        let mut config = pvc_pair(9180);
        config.flows = vec![udp(0, ip(2), payload, 100 * MS, 900 * MS)];
        let r = sim::simulate(config).unwrap();
        let f = &r.flows[0];
        assert!(f.received > 0 && f.lost == 0, "{payload}: {} of {} received", f.received, f.sent);
        // Whole datagrams per second at line rate, payload bits each.
        let expected = OC3_CELLS_PER_S / cells_per_datagram(u64::from(payload)) as f64 * f64::from(payload) * 8.0;
        let rel = (f.throughput_bps - expected).abs() / expected;
        assert!(rel < 0.01, "payload {payload}: {:.3} Mb/s vs {:.3} Mb/s", f.throughput_bps / 1e6, expected / 1e6);
        let atm = r.atm.as_ref().unwrap();
        assert!(atm.inatmarp_requests >= 2, "InATMARP on the PVC at both ends");
        assert_eq!(atm.frames_corrupt, 0);
    }
}

#[test]
fn pvc_ping_takes_store_and_forward_cell_times() {
    let mut config = pvc_pair(9180);
    config.flows = vec![FlowConfig::Ping {
        id: 7,
        from: 0,
        to: ip(2),
        count: 3,
        interval_ns: 100 * MS,
        payload: 56,
        start_ns: 100 * MS,
    }];
    let r = sim::simulate(config).unwrap();
    let f = &r.flows[0];
    assert_eq!(f.received, 3);
    // 56 + 8 (ICMP) + 20 (IP) + 8 (LLC/SNAP) + 8 (trailer) = 100 octets: 3 cells. One
    // way: 3 slots on the first link, the last cell then one more slot on the second.
    let cell_ns = 1e9 / OC3_CELLS_PER_S;
    for &rtt in &f.rtt_ns {
        let lo = 2.0 * 4.0 * cell_ns - 2.0;
        let hi = 2.0 * 5.0 * cell_ns + 2.0; // at most one slot of alignment each way
        assert!((lo..=hi).contains(&(rtt as f64)), "rtt {rtt} ns not in [{lo:.0}, {hi:.0}]");
    }
}

/// Three hosts on one switch, SVCs only; the switch serves ATMARP for the LIS.
fn svc_lis(signalling_ns: u64) -> SimConfig {
    let mut sw = switch(3, &[]);
    sw.signalling_ns = signalling_ns;
    SimConfig {
        seed: 1,
        duration_ns: 2_000 * MS,
        nodes: vec![host("ws1", 1, 9180), host("ws2", 2, 9180), host("ws3", 3, 9180), atm_switch_node("sw", 3)],
        links: vec![
            atm_link("l1", (0, 0), (3, 0), &[]),
            atm_link("l2", (1, 0), (3, 1), &[]),
            atm_link("l3", (2, 0), (3, 2), &[]),
        ],
        atm: AtmConfig {
            switches: vec![sw],
            lis: vec![LisConfig { network: ip(0), prefix_len: 24, server: 3 }],
            host_signalling_ns: 0,
            ..Default::default()
        },
        ..Default::default()
    }
}

#[test]
fn svc_set_up_on_first_packet_through_the_atmarp_server() {
    let setup = 5 * MS;
    let mut config = svc_lis(setup);
    config.flows = vec![FlowConfig::Ping {
        id: 1,
        from: 0,
        to: ip(2),
        count: 4,
        interval_ns: 100 * MS,
        payload: 56,
        start_ns: 100 * MS,
    }];
    let r = sim::simulate(config).unwrap();
    let f = &r.flows[0];
    let atm = r.atm.as_ref().unwrap();
    // Three registrations with the server, then ws1 → ws2.
    assert_eq!(atm.svc_setups, 4, "{atm:?}");
    // A call to the server on the switch: the switch processes the SETUP (`setup`) and
    // answers. Host to host: the switch processes SETUP and CONNECT, each `setup`.
    let mut times = atm.svc_setup_ns.clone();
    times.sort_unstable();
    assert!(times[..3].iter().all(|&t| t >= setup && t < setup + MS / 10), "{times:?}");
    assert!(times[3] >= 2 * setup && times[3] < 2 * setup + MS / 10, "{times:?}");
    assert!(atm.atmarp_requests >= 4, "three registrations and one resolution");
    assert_eq!(f.received, 4, "the first echo waits for ATMARP and the SVC, none is lost");
    // The first round trip carries ATMARP through the server and the call set-up.
    assert!(f.rtt_ns[0] > 2 * setup, "first rtt {} ns", f.rtt_ns[0]);
    assert!(f.rtt_ns[1] < 100_000, "later rtts are cell times: {} ns", f.rtt_ns[1]);
}

#[test]
fn svc_to_an_unknown_address_is_naked() {
    let mut config = svc_lis(MS);
    config.flows = vec![FlowConfig::Ping {
        id: 1,
        from: 0,
        to: ip(9),
        count: 2,
        interval_ns: 100 * MS,
        payload: 56,
        start_ns: 100 * MS,
    }];
    let r = sim::simulate(config).unwrap();
    assert_eq!(r.flows[0].received, 0);
    let log = &r.drop_log;
    assert!(
        log.iter().any(|d| d.reason.contains("ATMARP_NAK")),
        "{:?}",
        log.iter().map(|d| &d.reason).collect::<Vec<_>>()
    );
}

/// ws1 and ws2 each send 60 % of the line rate to ws3: the switch port to ws3
/// overflows. (Two sources at exactly the line rate would lock out: the one whose cells
/// reach the queue first in every slot takes every free place, a FIFO's phase effect.)
fn congested(epd: Option<usize>, ppd: bool) -> sim::results::Results {
    let mut config = SimConfig {
        seed: 1,
        duration_ns: 600 * MS,
        nodes: vec![host("ws1", 1, 9180), host("ws2", 2, 9180), host("ws3", 3, 9180), atm_switch_node("sw", 4)],
        links: vec![
            atm_link("l1", (0, 0), (3, 0), &[(0, 100)]),
            atm_link("l2", (1, 0), (3, 1), &[(0, 101)]),
            atm_link("l3", (2, 0), (3, 2), &[(0, 100), (0, 101)]),
        ],
        // Different rates and start times, so that the two sources' phases drift.
        flows: vec![paced(0, 9152, 1100.0, 100 * MS), paced(1, 9152, 1093.0, 100 * MS + 333_333)],
        atm: AtmConfig {
            switches: vec![switch(3, &[(0, 2, 100), (1, 2, 101)])],
            lis: vec![],
            host_signalling_ns: 0,
            ..Default::default()
        },
        ..Default::default()
    };
    config.atm.switches[0].queue_cells = 256;
    config.atm.switches[0].epd_threshold_cells = epd;
    config.atm.switches[0].ppd = ppd;
    sim::simulate(config).unwrap()
}

/// 1100 datagrams/s of 9152 octets: 193 cells each, 60 % of OC-3's 1830 frames/s.
fn paced(from: u32, payload: u32, pps: f64, start_ns: u64) -> FlowConfig {
    FlowConfig::Udp {
        id: from,
        from,
        to: ip(3),
        dst_port: 9,
        payload,
        rate_pps: pps,
        start_ns,
        stop_ns: 500 * MS,
        dont_fragment: false,
        dst_mac: None,
        src_mac: None,
    }
}

#[test]
fn cell_loss_destroys_frames_and_epd_saves_them() {
    let plain = congested(None, false);
    let epd = congested(Some(128), false);
    let good = |r: &sim::results::Results| r.flows.iter().map(|f| f.received).sum::<u64>();
    let atm = plain.atm.as_ref().unwrap();
    assert!(atm.cells_lost[0] > 0, "the output queue overflowed");
    assert!(
        atm.frames_corrupt > 0,
        "lost cells lose frames: {atm:?} {:?}",
        plain.flows.iter().map(|f| (f.sent, f.received)).collect::<Vec<_>>()
    );
    // Offered 2 × line rate into one port: at most one line's worth of whole frames.
    let cells = cells_per_datagram(9152);
    let max_frames = (0.4 * OC3_CELLS_PER_S / cells as f64) as u64 + 2;
    assert!(good(&epd) <= max_frames);
    // Romanow & Floyd 1995: dropping whole frames keeps the goodput near the line
    // rate, while cell drops spread over frames waste most of it.
    assert!(good(&epd) as f64 > 0.9 * max_frames as f64, "EPD goodput {} of {max_frames}", good(&epd));
    assert!(good(&plain) < good(&epd), "drop-tail {} vs EPD {}", good(&plain), good(&epd));
    let ppd = congested(None, true);
    assert!(good(&ppd) >= good(&plain), "PPD {} vs drop-tail {}", good(&ppd), good(&plain));
}

#[test]
fn a_cross_connect_on_a_missing_port_and_an_mtu_over_aal5_are_refused() {
    let mut config = pvc_pair(9180);
    config.atm.switches[0].cross_connects[0].b.port = 7;
    let err = sim::simulate(config).err().unwrap().to_string();
    assert!(err.contains("cross_connects[0]") && err.contains("no ATM port 7"), "{err}");
    let config = pvc_pair(65_535);
    let err = sim::simulate(config).err().unwrap().to_string();
    assert!(err.contains("65543") && err.contains("65535"), "{err}");
}

#[test]
fn a_cbr_vc_is_shaped_to_its_peak_cell_rate_and_atm25_is_slower() {
    use sim::atm::config::ServiceCategory;
    use sim::config::LinkConfig;
    // CBR at a PCR of 50 Mb/s of cells on ws1's PVC (TM 4.0 §4.5.1: cells no closer
    // than 1/PCR on average), and both links at 25.6 Mb/s (af-phy-0040).
    let payload = 1472u32;
    let cells = cells_per_datagram(u64::from(payload)) as f64;
    for (pcr, phy, expected_cells_per_s) in
        [(Some(50_000_000u64), "oc3", 50_000_000.0 / 424.0), (None, "25m", (25_600_000 * 53 / 54) as f64 / 424.0)]
    {
        let mut config = pvc_pair(9180);
        if let LinkConfig::Atm(l) = &mut config.links[0] {
            if let Some(p) = pcr {
                l.pvcs[0].service = ServiceCategory::Cbr;
                l.pvcs[0].pcr_bps = Some(p);
            }
        }
        for link in &mut config.links {
            if let LinkConfig::Atm(l) = link {
                l.phy = qoslab_plan::from_name(phy).unwrap();
            }
        }
        config.flows = vec![udp(0, ip(2), payload, 100 * MS, 900 * MS)];
        let r = sim::simulate(config).unwrap();
        let f = &r.flows[0];
        let expected = expected_cells_per_s / cells * f64::from(payload) * 8.0;
        let rel = (f.throughput_bps - expected).abs() / expected;
        assert!(rel < 0.01, "{pcr:?} {phy}: {:.3} vs {:.3} Mb/s", f.throughput_bps / 1e6, expected / 1e6);
    }
}

#[test]
fn an_atmarp_server_on_a_host_serves_its_lis() {
    let mut config = svc_lis(MS);
    // ws3 (node 2) serves ATMARP instead of the switch.
    config.atm.lis[0].server = 2;
    config.flows = vec![FlowConfig::Ping {
        id: 1,
        from: 0,
        to: ip(2),
        count: 3,
        interval_ns: 100 * MS,
        payload: 56,
        start_ns: 100 * MS,
    }];
    let r = sim::simulate(config).unwrap();
    assert_eq!(r.flows[0].received, 3);
    // ws1 and ws2 register with ws3 (a host-to-host call each), then ws1 calls ws2.
    assert_eq!(r.atm.as_ref().unwrap().svc_setups, 3);
}

#[test]
fn software_sar_costs_the_host_cpu_per_cell() {
    // ws2 segments and reassembles in software: 100 cycles per cell at 1 GHz, nothing else.
    let mut config = pvc_pair(9180);
    config.nodes[1].cpu = sim::config::CpuConfig {
        profile: "sar".into(),
        hz: 1_000_000_000,
        queue_limit: 100,
        cycles: sim::config::CpuCycles { per_atm_cell: 100.0, ..Default::default() },
        atm_nic: Default::default(),
        rx_latency: Default::default(),
    };
    let count = 10u64;
    config.flows = vec![FlowConfig::Ping {
        id: 1,
        from: 0,
        to: ip(2),
        count: count as u32,
        interval_ns: 50 * MS,
        payload: 1000,
        start_ns: 100 * MS,
    }];
    let r = sim::simulate(config).unwrap();
    assert_eq!(r.flows[0].received, count);
    // Each echo request and reply: 1000 + 8 (ICMP) + 20 (IP) + 8 (LLC/SNAP) + 8 (AAL5
    // trailer) = 1044 octets, 22 cells, reassembled once and segmented once at ws2.
    let cells = 1044u64.div_ceil(48);
    let busy_ns = r.nodes[1].cpu_utilization * r.sim_time_ns as f64;
    let expected = (count * 2 * cells * 100) as f64;
    assert!((busy_ns - expected).abs() < 1.0 + expected * 1e-9, "{busy_ns} ns vs {expected} ns");
}

#[test]
fn a_slow_adapter_paces_pdus_by_its_set_up_and_cell_rate() {
    // ws1's adapter: 50 µs per PDU, then 100,000 cells/s (10 µs a cell), on an OC-3
    // that could take 353,208. Each 1472-octet datagram is 32 cells
    // (cells_per_datagram), so the engine serves one every 50 + 32 × 10 = 370 µs.
    let mut config = pvc_pair(9180);
    config.nodes[0].cpu.atm_nic = sim::config::AtmNicCost { sar_pdu_ns: 50_000, sar_cell_rate: 100_000 };
    config.flows = vec![udp(0, ip(2), 1472, 100 * MS, 900 * MS)];
    let r = sim::simulate(config).unwrap();
    let f = &r.flows[0];
    let period_ns = 50_000 + cells_per_datagram(1472) * 10_000;
    assert_eq!(period_ns, 370_000);
    let expected = (800 * MS) as f64 / period_ns as f64;
    assert!((f.received as f64 - expected).abs() <= 2.0, "{} datagrams received, {expected:.1} expected", f.received);
    // The cells of one PDU leave 10 µs apart, not back to back: the link carried at most
    // the engine's cell rate.
    let cells_per_s = f.received as f64 * cells_per_datagram(1472) as f64 / 0.8;
    assert!(cells_per_s < 100_000.0 * 32.0 / 37.0 + 100.0, "{cells_per_s} cells/s");
}

#[test]
fn an_adapter_at_line_rate_changes_nothing() {
    // sar_cell_rate above the line's and no set-up: the line binds, as with no model.
    let run = |nic: sim::config::AtmNicCost| {
        let mut config = pvc_pair(9180);
        config.nodes[0].cpu.atm_nic = nic;
        config.flows = vec![udp(0, ip(2), 1472, 100 * MS, 900 * MS)];
        sim::simulate(config).unwrap().flows[0].received
    };
    assert_eq!(run(Default::default()), run(sim::config::AtmNicCost { sar_pdu_ns: 0, sar_cell_rate: 1_000_000 }));
}
