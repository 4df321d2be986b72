//! ATM service categories (ATM Forum TM 4.0, af-tm-0056.000): strict-priority category
//! queues at a switch port, VBR's dual GCRA at the NIC, ABR's RM-cell loop. Expected
//! figures are computed here from the line rate and the traffic contracts.

mod common;

use std::net::Ipv4Addr;

use common::{atm_link, atm_port, atm_switch_node, node};
use sim::atm::config::{AtmConfig, CrossConnect, ServiceCategory, SwitchConfig, VcEnd};
use sim::config::{FlowConfig, LinkConfig, NodeConfig, SimConfig};

const MS: u64 = 1_000_000;
/// G.707 §10.1.1: OC-3c carries 149.76 Mb/s of 424-bit cells.
const OC3_BPS: f64 = 149_760_000.0;
const OC3_CELLS_PER_S: f64 = OC3_BPS / 424.0;

fn ip(last: u8) -> Ipv4Addr {
    Ipv4Addr::new(192, 0, 2, last)
}

fn host(name: &str, last: u8) -> NodeConfig {
    node(name, vec![atm_port("atm0", last, Some((ip(last), 24)), 9180)], vec![], false)
}

/// Cells of one UDP datagram over CLIP with LLC/SNAP: UDP + IP (28), LLC/SNAP (8,
/// RFC 2684 §5.1), AAL5 trailer (8, I.363.5), in 48-octet payloads.
fn cells_per_datagram(payload: u32) -> f64 {
    f64::from((payload + 28 + 8 + 8).div_ceil(48))
}

/// src1 (node 0) and src2 (node 1) send through one switch (node 3) to sink (node 2):
/// src1 on PVC 0/100 → sink 0/100, src2 on 0/100 → sink 0/101. Both share the
/// switch's port 2. `service` and `pcr` set src1's and src2's contracts (the sink's
/// PVCs take the same category).
fn shared_port(services: [(ServiceCategory, Option<u64>); 2], sw: impl FnOnce(&mut SwitchConfig)) -> SimConfig {
    let mut s = SwitchConfig {
        node: 3,
        cross_connects: vec![
            CrossConnect { a: VcEnd { port: 0, vpi: 0, vci: 100 }, b: VcEnd { port: 2, vpi: 0, vci: 100 } },
            CrossConnect { a: VcEnd { port: 1, vpi: 0, vci: 100 }, b: VcEnd { port: 2, vpi: 0, vci: 101 } },
        ],
        ..Default::default()
    };
    sw(&mut s);
    let mut links = vec![
        atm_link("l1", (0, 0), (3, 0), &[(0, 100)]),
        atm_link("l2", (1, 0), (3, 1), &[(0, 100)]),
        atm_link("l3", (3, 2), (2, 0), &[(0, 100), (0, 101)]),
    ];
    for (i, (service, pcr)) in services.into_iter().enumerate() {
        if let LinkConfig::Atm(l) = &mut links[i] {
            l.pvcs[0].service = service;
            l.pvcs[0].pcr_bps = pcr;
        }
        if let LinkConfig::Atm(l) = &mut links[2] {
            l.pvcs[i].service = service;
            l.pvcs[i].pcr_bps = pcr;
        }
    }
    SimConfig {
        seed: 1,
        duration_ns: 1_000 * MS,
        nodes: vec![host("src1", 1), host("src2", 2), host("sink", 3), atm_switch_node("sw", 3)],
        links,
        atm: AtmConfig { switches: vec![s], ..Default::default() },
        ..Default::default()
    }
}

fn udp(id: u32, from: u32, payload: u32, rate_pps: f64) -> FlowConfig {
    FlowConfig::Udp {
        id,
        from,
        to: ip(3),
        dst_port: 9,
        payload,
        rate_pps,
        start_ns: 100 * MS,
        stop_ns: 900 * MS,
        dont_fragment: false,
        dst_mac: None,
        src_mac: None,
    }
}

#[test]
fn cbr_keeps_its_rate_beside_a_ubr_flood_and_ubr_takes_the_rest() {
    let payload = 1472;
    let cells = cells_per_datagram(payload);
    let pcr = 50_000_000u64;
    // A CBR VC is served before UBR at the shared port: it keeps its PCR whole, and UBR
    // (saturating, at the line rate, with EPD so that what it gets is whole frames) has
    // the rest of the port's cell slots.
    let mut config = shared_port([(ServiceCategory::Cbr, Some(pcr)), (ServiceCategory::Ubr, None)], |s| {
        s.epd_threshold_cells = Some(512)
    });
    config.flows = vec![udp(1, 0, payload, 0.0), udp(2, 1, payload, 0.0)];
    let r = sim::simulate(config.clone()).unwrap();
    let (cbr, ubr) = (&r.flows[0], &r.flows[1]);
    let pcr_cells = pcr as f64 / 424.0;
    let cbr_expected = pcr_cells / cells * f64::from(payload) * 8.0;
    let ubr_expected = (OC3_CELLS_PER_S - pcr_cells) / cells * f64::from(payload) * 8.0;
    eprintln!(
        "CBR {:.3} Mb/s (expected {:.3}), UBR {:.3} Mb/s (expected {:.3})",
        cbr.throughput_bps / 1e6,
        cbr_expected / 1e6,
        ubr.throughput_bps / 1e6,
        ubr_expected / 1e6
    );
    assert_eq!(cbr.lost, 0, "CBR loses nothing: {cbr:?}");
    assert!(
        (cbr.throughput_bps - cbr_expected).abs() / cbr_expected < 0.01,
        "CBR {:.2} Mb/s vs {:.2}",
        cbr.throughput_bps / 1e6,
        cbr_expected / 1e6
    );
    assert!(
        (ubr.throughput_bps - ubr_expected).abs() / ubr_expected < 0.02,
        "UBR {:.2} Mb/s vs {:.2}",
        ubr.throughput_bps / 1e6,
        ubr_expected / 1e6
    );
    let atm = r.atm.as_ref().unwrap();
    assert!(atm.epd_cells[0] > 0, "the UBR flood is cut by EPD");
    assert_eq!(atm.frames_corrupt, 0);

    // The same shaped source declared UBR shares the FIFO with the flood: it loses.
    let mut fifo = shared_port([(ServiceCategory::Ubr, Some(pcr)), (ServiceCategory::Ubr, None)], |s| {
        s.epd_threshold_cells = Some(512)
    });
    fifo.flows = config.flows.clone();
    let r = sim::simulate(fifo).unwrap();
    assert!(
        r.flows[0].lost > 0 && r.flows[0].throughput_bps < 0.97 * cbr_expected,
        "as UBR the 50 Mb/s VC loses: {:?}",
        r.flows[0]
    );
}

#[test]
fn vbr_sends_mbs_cells_at_the_pcr_then_converges_to_the_scr() {
    let (pcr, scr, mbs) = (100_000_000u64, 10_000_000u64, 100u32);
    let mut config = shared_port([(ServiceCategory::Vbr, Some(pcr)), (ServiceCategory::Ubr, None)], |_| {});
    // src1's PVC and the sink's end of it (its own cells on it take the same contract).
    for i in [0, 2] {
        if let LinkConfig::Atm(l) = &mut config.links[i] {
            l.pvcs[0].scr_bps = Some(scr);
            l.pvcs[0].mbs_cells = Some(mbs);
        }
    }
    config.capture = true;
    config.duration_ns = 700 * MS;
    // Two-cell datagrams (52 + 44 = 96 octets), as fast as the NIC takes them.
    let payload = 52;
    assert_eq!(cells_per_datagram(payload), 2.0);
    config.flows = vec![FlowConfig::Udp {
        id: 1,
        from: 0,
        to: ip(3),
        dst_port: 9,
        payload,
        rate_pps: 0.0,
        start_ns: 100 * MS,
        stop_ns: 600 * MS,
        dont_fragment: false,
        dst_mac: None,
        src_mac: None,
    }];
    let r = sim::simulate(config).unwrap();
    let cap = r.captures.iter().find(|c| c.name.starts_with("sink")).expect("the sink's capture");
    let arrivals: Vec<f64> = cap.frames.iter().filter(|(t, _)| *t >= 100 * MS).map(|(t, _)| *t as f64).collect();
    assert!(arrivals.len() > 1000, "{} frames", arrivals.len());
    // TM 4.0 §4.5.2 from idle, in seconds: cell k conforms to GCRA(Tp, 0) and
    // GCRA(Ts, BT) from max(k·Tp, k·Ts − BT), BT = (MBS − 1)(Ts − Tp); a frame arrives
    // with its second cell.
    let (tp, ts) = (424.0 / pcr as f64, 424.0 / scr as f64);
    let bt = f64::from(mbs - 1) * (ts - tp);
    let cell = |k: f64| (k * tp).max(k * ts - bt);
    let slot = 424.0 / OC3_BPS;
    for (i, &a) in arrivals.iter().enumerate().take(200) {
        let expected = cell(2.0 * i as f64 + 1.0) - cell(1.0);
        let got = (a - arrivals[0]) * 1e-9;
        assert!((got - expected).abs() <= 2.0 * slot, "frame {i}: {got:.7} s vs {expected:.7} s");
    }
    // The first MBS cells (50 frames) leave at the PCR, the 51st frame waits for the SCR.
    let burst = (arrivals[49] - arrivals[0]) * 1e-9;
    assert!((burst - 98.0 * tp).abs() <= 2.0 * slot, "burst of {mbs} cells in {burst} s");
    assert!((arrivals[51] - arrivals[50]) * 1e-9 > 1.9 * ts - 2.0 * slot);
    // Long run: the SCR. Frames between 300 and 600 ms.
    let n = arrivals.iter().filter(|&&t| (300.0e6..600.0e6).contains(&t)).count() as f64;
    let expected = scr as f64 / 424.0 / 2.0 * 0.3;
    eprintln!(
        "VBR: burst {:.1} µs for {mbs} cells (PCR: {:.1}); {n} frames in 300 ms vs {expected:.0} at the SCR",
        burst * 1e6,
        98.0 * tp * 1e6
    );
    assert!((n - expected).abs() / expected < 0.01, "{n} frames in 300 ms vs {expected:.0} at the SCR");
}

/// Two sources offering 100 Mb/s of UDP payload each (about 115 Mb/s of cells) into one
/// OC-3 port (149.76 Mb/s).
fn two_sources(service: ServiceCategory) -> sim::results::Results {
    let pcr = if service == ServiceCategory::Abr { Some(OC3_BPS as u64) } else { None };
    let mut config = shared_port([(service, pcr), (service, pcr)], |_| {});
    let payload = 1472;
    let pps = 100e6 / (f64::from(payload) * 8.0);
    config.flows = vec![udp(1, 0, payload, pps), udp(2, 1, payload, pps)];
    sim::simulate(config).unwrap()
}

#[test]
fn abr_sources_share_a_port_fairly_without_cell_loss_where_ubr_loses_frames() {
    let payload = 1472;
    let cells = cells_per_datagram(payload);
    // TM 4.0 §5.10.4 rule 3: one in-rate cell in Nrm = 32 is a forward RM cell.
    let fair = OC3_CELLS_PER_S / 2.0 * 31.0 / 32.0 / cells * f64::from(payload) * 8.0;

    let abr = two_sources(ServiceCategory::Abr);
    let atm = abr.atm.as_ref().unwrap();
    let sent: u64 = atm.cells.iter().map(|c| c[0] + c[1]).sum();
    assert!(atm.cells_lost[0] * 1000 <= sent, "ABR loses (almost) no cells: {} of {sent}", atm.cells_lost[0]);
    assert_eq!(atm.frames_corrupt, 0);
    assert!(atm.qos.rm_ci_marked > 0 && atm.qos.rm_turned > 0, "{:?}", atm.qos);
    for f in &abr.flows {
        assert!(
            (f.throughput_bps - fair).abs() / fair < 0.1,
            "ABR flow {}: {:.2} Mb/s vs fair share {:.2}",
            f.id,
            f.throughput_bps / 1e6,
            fair / 1e6
        );
        // The excess over the share waits at (and is dropped whole by) the source NIC.
        assert!(f.lost > 0);
    }
    for v in &atm.qos.abr[..2] {
        assert!(v.backward_rm_ci > 0 && v.min_acr_bps < v.max_acr_bps, "{v:?}");
        assert!(v.max_acr_bps <= OC3_BPS + 1.0);
    }
    let abr_total: f64 = abr.flows.iter().map(|f| f.throughput_bps).sum();
    eprintln!(
        "ABR flows {:?} Mb/s (fair {:.2}), lost at NIC {:?}, cells lost {}, ACR {:?}",
        abr.flows.iter().map(|f| f.throughput_bps / 1e6).collect::<Vec<_>>(),
        fair / 1e6,
        abr.flows.iter().map(|f| f.lost).collect::<Vec<_>>(),
        atm.cells_lost[0],
        atm.qos.abr.iter().map(|v| (v.min_acr_bps / 1e6, v.max_acr_bps / 1e6, v.acr_bps / 1e6)).collect::<Vec<_>>()
    );

    let ubr = two_sources(ServiceCategory::Ubr);
    let atm = ubr.atm.as_ref().unwrap();
    assert!(atm.cells_lost[0] > 0 && atm.frames_corrupt > 0, "UBR loses cells and so frames: {atm:?}");
    let ubr_total: f64 = ubr.flows.iter().map(|f| f.throughput_bps).sum();
    eprintln!("two sources at 100 Mb/s each on one OC-3 port: ABR {:.1} Mb/s, UBR {:.1} Mb/s of whole datagrams; UBR lost {} cells", abr_total / 1e6, ubr_total / 1e6, atm.cells_lost[0]);
    assert!(
        ubr_total < 0.9 * abr_total,
        "UBR {:.1} Mb/s vs ABR {:.1} Mb/s of whole datagrams",
        ubr_total / 1e6,
        abr_total / 1e6
    );
}

#[test]
fn abr_rate_stays_between_mcr_and_pcr() {
    // MCR 70 Mb/s each (140 of the port's 149.76 reserved), ICR 100 Mb/s: the CI cuts
    // (RDF × ACR, TM 4.0 §5.10.4 rule 8) stop at the MCR, the increases at the PCR.
    let (mcr, icr, pcr) = (70_000_000u64, 100_000_000u64, OC3_BPS as u64);
    let mut config = shared_port([(ServiceCategory::Abr, Some(pcr)), (ServiceCategory::Abr, Some(pcr))], |_| {});
    for i in [0, 1] {
        if let LinkConfig::Atm(l) = &mut config.links[i] {
            l.pvcs[0].mcr_bps = mcr;
            l.pvcs[0].icr_bps = Some(icr);
        }
    }
    let pps = 100e6 / (1472.0 * 8.0);
    config.flows = vec![udp(1, 0, 1472, pps), udp(2, 1, 1472, pps)];
    let r = sim::simulate(config).unwrap();
    let atm = r.atm.as_ref().unwrap();
    for v in &atm.qos.abr[..2] {
        assert!(v.min_acr_bps >= mcr as f64 - 1e-3 && v.max_acr_bps <= pcr as f64 + 1e-3, "{v:?}");
        assert!((v.min_acr_bps - mcr as f64).abs() < 1.0, "the MCR floor is reached: {v:?}");
        assert!(v.backward_rm_ci > 0);
    }
}

#[test]
fn each_category_queue_has_its_own_limit() {
    // UBR queue of 100 cells, CBR queue of 2: CBR at 50 Mb/s beside UBR paced at 120
    // Mb/s of payload (about 138 Mb/s of cells, more than the ~100 Mb/s CBR leaves).
    let (ubr_limit, pcr) = (100u64, 50_000_000u64);
    let mut config = shared_port([(ServiceCategory::Cbr, Some(pcr)), (ServiceCategory::Ubr, None)], |s| {
        s.category_queue_cells.cbr = Some(2);
        s.category_queue_cells.ubr = Some(ubr_limit as usize);
    });
    let payload = 1472;
    config.flows = vec![udp(1, 0, payload, 0.0), udp(2, 1, payload, 120e6 / (f64::from(payload) * 8.0))];
    let r = sim::simulate(config).unwrap();
    let (cbr, ubr) = (&r.flows[0], &r.flows[1]);
    // A CBR cell waits at most for the cell in service: two cells of queue are enough.
    assert_eq!(cbr.lost, 0, "{cbr:?}");
    assert!(ubr.lost > 0, "the UBR queue overflows: {ubr:?}");
    // A whole UBR datagram's one-way delay: its 32 cells on the first link, at most
    // `ubr_limit` cells queued ahead of its last cell at the port, its 32 cells on the
    // second link (interleaved with CBR: at most 32 more slots), and slot alignments.
    // (With the default 1024-cell queue the same run peaks at about 4.4 ms.)
    let slot_ns = 424e9 / OC3_BPS;
    let cells = cells_per_datagram(payload);
    let bound = (ubr_limit as f64 + 3.0 * cells + 4.0) * slot_ns;
    let max = ubr.latency_ns.as_ref().unwrap().max as f64;
    assert!(max <= bound, "UBR one-way delay {max} ns > {bound:.0} ns with a {ubr_limit}-cell queue");
    assert!(max >= ubr_limit as f64 * slot_ns, "the queue did fill: {max} ns");
}
