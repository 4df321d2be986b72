//! IPsec in transport mode (RFC 4303 §3.1.1, RFC 4302 §3.1.1) and AH in both modes, in
//! whole runs between two hosts across a router:
//!
//! ```text
//! c (10.0.1.1) — r — h (10.0.2.1)
//! ```
//! Seed 003 §4.1: with ESP (3DES-CBC + HMAC-SHA1-96) the largest unfragmented UDP
//! payload on a 1500-byte path drops from 1472 to 1438, the transport-mode number; and
//! up to three VPNs run from one client to one host, told apart here by port.

use std::net::Ipv4Addr;

use sim::config::*;
use wire::ethernet;
use wire::ipsec::{Auth, Cipher, Mode};
use wire::{ah, esp, ipv4, udp, IpProtocol};

const S: u64 = 1_000_000_000;
const C: Ipv4Addr = Ipv4Addr::new(10, 0, 1, 1);
const H: Ipv4Addr = Ipv4Addr::new(10, 0, 2, 1);

fn node(name: &str, addr: Ipv4Addr, mac: u8, gateway: Option<Ipv4Addr>) -> NodeConfig {
    NodeConfig {
        name: name.into(),
        role: qoslab_plan::from_name("host").unwrap(),
        ports: vec![PortConfig {
            name: "eth0".into(),
            mac: [2, 0, 0, 0, 0, mac],
            address: Some((addr, 24)),
            mtu: 1500,
            point_to_point: false,
            promiscuous: false,
        }],
        bridge: None,
        ip_forward: false,
        routes: gateway
            .map(|via| RouteConfig { destination: Ipv4Addr::UNSPECIFIED, prefix_len: 0, via })
            .into_iter()
            .collect(),
        nat: None,
        cpu: CpuConfig {
            profile: "asic".into(),
            hz: 0,
            queue_limit: 1000,
            cycles: CpuCycles::default(),
            atm_nic: Default::default(),
            rx_latency: Default::default(),
        },
        arp_timeout_ns: 120 * S,
        reassembly_timeout_ns: 30 * S,
        pmtu: Default::default(),
        ipsec: vec![],
        openvpn: vec![],
        pppoe: vec![],
        pptp: vec![],
    }
}

fn ethernet(name: &str, a: (u32, u16), b: (u32, u16)) -> LinkConfig {
    LinkConfig::Ethernet {
        name: name.into(),
        a: PortRef { node: a.0, port: a.1 },
        b: PortRef { node: b.0, port: b.1 },
        rate_bps: 100_000_000,
        delay_ns: 1_000,
        jitter_ns: 0,
        queue_frames: 1000,
        queue_bytes: 10_000_000,
        impair: Default::default(),
    }
}

/// One end of SA pair `n` between c and h (SPI 0x1000 + 2n from c, one more back).
fn sa(n: u32, from_c: bool, mode: &str, protocol: &str, port: Option<u16>) -> IpsecTunnelConfig {
    let (local, remote) = if from_c { (C, H) } else { (H, C) };
    let spi = 0x1000 + 2 * n;
    let (spi_out, spi_in) = if from_c { (spi, spi + 1) } else { (spi + 1, spi) };
    IpsecTunnelConfig {
        name: format!("sa{n}"),
        local,
        remote,
        spi_out,
        spi_in,
        cipher: qoslab_plan::from_name(if protocol == "ah" { "null" } else { "3des-cbc" }).unwrap(),
        auth: qoslab_plan::from_name("hmac-sha1-96").unwrap(),
        protects: vec![(remote, 32)],
        mtu: 1500,
        mode: qoslab_plan::from_name(mode).unwrap(),
        protocol: qoslab_plan::from_name(protocol).unwrap(),
        select_protocol: port.map(|_| 17),
        // The port is h's (the server's): c's remote port, h's local one.
        select_local_port: if from_c { None } else { port },
        select_remote_port: if from_c { port } else { None },
        fragment: Default::default(),
    }
}

/// c, r, h with the SA pairs `sas` (mode, protocol, port selector: a UDP port of h).
fn network(sas: &[(&str, &str, Option<u16>)], flows: Vec<FlowConfig>, duration_ns: u64) -> SimConfig {
    let mut c = node("c", C, 1, Some(Ipv4Addr::new(10, 0, 1, 254)));
    let mut h = node("h", H, 2, Some(Ipv4Addr::new(10, 0, 2, 254)));
    for (n, &(mode, protocol, port)) in sas.iter().enumerate() {
        c.ipsec.push(sa(n as u32, true, mode, protocol, port));
        h.ipsec.push(sa(n as u32, false, mode, protocol, port));
    }
    let mut r = node("r", Ipv4Addr::new(10, 0, 1, 254), 10, None);
    r.role = qoslab_plan::from_name("router").unwrap();
    r.ip_forward = true;
    r.ports.push(PortConfig {
        name: "eth1".into(),
        mac: [2, 0, 0, 0, 0, 11],
        address: Some((Ipv4Addr::new(10, 0, 2, 254), 24)),
        mtu: 1500,
        point_to_point: false,
        promiscuous: false,
    });
    SimConfig {
        seed: 3,
        duration_ns,
        nodes: vec![c, r, h],
        links: vec![ethernet("c-r", (0, 0), (1, 0)), ethernet("r-h", (1, 1), (2, 0))],
        flows,
        capture: true,
        ..Default::default()
    }
}

fn udp_flow(id: u32, from: u32, to: Ipv4Addr, dst_port: u16, payload: u32, rate_pps: f64, stop_ns: u64) -> FlowConfig {
    FlowConfig::Udp {
        id,
        from,
        to,
        dst_port,
        payload,
        rate_pps,
        start_ns: 0,
        stop_ns,
        dont_fragment: false,
        dst_mac: None,
        src_mac: None,
    }
}

/// The IPv4 packets of the frames a capture point saw.
fn packets(results: &sim::results::Results, capture: &str) -> Vec<Vec<u8>> {
    let cap = results.captures.iter().find(|c| c.name == capture).unwrap_or_else(|| panic!("no capture {capture}"));
    cap.frames
        .iter()
        .filter_map(|(_, f)| {
            let frame = ethernet::Frame::new_checked(&f[..]).ok()?;
            (frame.ethertype() == ethernet::EtherType::Ipv4).then(|| frame.payload().to_vec())
        })
        .collect()
}

fn from_c(results: &sim::results::Results) -> Vec<Vec<u8>> {
    packets(results, "r-eth0").into_iter().filter(|p| ipv4::Packet::new_unchecked(&p[..]).src_addr() == C).collect()
}

fn is_fragment(packet: &[u8]) -> bool {
    let ip = ipv4::Packet::new_unchecked(packet);
    ip.more_frags() || ip.frag_offset() != 0
}

/// RFC 4303 §2.4 in transport mode with 3DES-CBC (8-byte blocks and IV, RFC 2451) and
/// HMAC-SHA1-96 (12-byte ICV, RFC 2404): IPv4 20 + ESP header 8 + IV 8 + the UDP
/// datagram and the 2 trailer bytes padded to 8 + ICV 12.
fn transport_len(udp_payload: usize) -> usize {
    20 + 8 + 8 + (8 + udp_payload + 2).div_ceil(8) * 8 + 12
}

#[test]
fn the_transport_mode_knee_is_seed_003s_1438() {
    let largest = (0..1500).filter(|&p| transport_len(p) <= 1500).max().unwrap();
    assert_eq!(largest, 1438, "seed 003 §4.1");
    let to_h =
        sim::tunnel::ipsec::security_association_in(0x1000, Cipher::TripleDesCbc, Auth::HmacSha1_96, Mode::Transport)
            .unwrap();
    for (sas, payload, pieces) in [
        (&[][..], 1472usize, 1usize),
        (&[][..], 1473, 2),
        (&[("transport", "esp", None)][..], 1438, 1),
        (&[("transport", "esp", None)][..], 1439, 2),
    ] {
        let results = sim::simulate(network(sas, vec![udp_flow(1, 0, H, 9, payload as u32, 10.0, S / 2)], S)).unwrap();
        assert_eq!(
            (results.flows[0].sent, results.flows[0].received),
            (5, 5),
            "payload {payload}: {:?}",
            results.drop_log
        );
        let wire = from_c(&results);
        assert_eq!(wire.len(), 5 * pieces, "{} SAs, payload {payload}", sas.len());
        assert!(wire.iter().all(|p| is_fragment(p) == (pieces > 1)));
        if sas.is_empty() {
            continue;
        }
        // Fragmentation after ESP: every piece is of the ESP datagram (protocol 50).
        assert!(wire.iter().all(|p| ipv4::Packet::new_unchecked(&p[..]).next_header() == IpProtocol::Esp));
        if pieces == 1 {
            assert!(wire.iter().all(|p| p.len() == transport_len(payload)));
            assert_eq!(wire[0].len(), 1496);
            // The SA restores the original datagram: same addresses, UDP to port 9.
            let mut clear = Vec::new();
            esp::decapsulate(&to_h, &wire[0], &mut clear).unwrap();
            let ip = ipv4::Packet::new_checked(&clear[..]).unwrap();
            assert_eq!(
                (ip.src_addr(), ip.dst_addr(), ip.next_header(), ip.total_len()),
                (C, H, IpProtocol::Udp, 20 + 8 + 1438)
            );
            let datagram = udp::Packet::new_checked(ip.payload()).unwrap();
            assert_eq!((datagram.dst_port(), datagram.payload().len()), (9, payload));
        }
    }
}

#[test]
fn several_sas_to_one_host_are_told_apart_by_port() {
    // sa0 takes everything between c and h that the more specific sa1 (UDP port 10) and
    // sa2 (UDP port 11) do not; the flow to port 9 and the ping go by sa0.
    let sas = [("transport", "esp", None), ("transport", "esp", Some(10)), ("transport", "esp", Some(11))];
    // The ping first: it resolves the gateway (RFC 1122 queues few packets meanwhile).
    let mut flows: Vec<FlowConfig> = (0..3u16)
        .map(|i| FlowConfig::Udp {
            id: u32::from(i) + 1,
            from: 0,
            to: H,
            dst_port: 9 + i,
            payload: 200,
            rate_pps: 20.0,
            start_ns: S / 20,
            stop_ns: S / 20 + S / 2,
            dont_fragment: false,
            dst_mac: None,
            src_mac: None,
        })
        .collect();
    flows.push(FlowConfig::Ping { id: 4, from: 0, to: H, count: 3, interval_ns: S / 10, payload: 56, start_ns: 0 });
    let results = sim::simulate(network(&sas, flows, S)).unwrap();
    for f in &results.flows {
        assert_eq!(f.sent, f.received, "{:?}", results.drop_log);
    }
    assert_eq!(results.flows[0].received, 10);
    let mut per_spi = std::collections::BTreeMap::new();
    for p in packets(&results, "r-eth0") {
        let ip = ipv4::Packet::new_checked(&p[..]).unwrap();
        assert_eq!(ip.next_header(), IpProtocol::Esp, "a clear packet between c and h");
        *per_spi.entry(esp::Packet::new_checked(ip.payload()).unwrap().spi()).or_insert(0) += 1;
    }
    // From c: 10 datagrams each on 0x1000 (with 3 echo requests), 0x1002, 0x1004; back
    // from h: the 3 echo replies on 0x1001.
    assert_eq!(per_spi.into_iter().collect::<Vec<_>>(), vec![(0x1000, 13), (0x1001, 3), (0x1002, 10), (0x1004, 10)]);
    // Each end reports what each of its SA pairs carried, in configuration order. ESP
    // bytes: everything after the IPv4 header (RFC 4303 §2), computed independently.
    let esp = |ip_payload: usize| (transport_len(ip_payload - 8) - 20) as u64;
    let (udp, ping) = (esp(8 + 200), esp(8 + 56));
    let c = &results.nodes[0].ipsec;
    let counts: Vec<_> = c
        .iter()
        .map(|r| (r.name.as_str(), r.spi_out, r.sealed_packets, r.sealed_bytes, r.opened_packets, r.opened_bytes))
        .collect();
    assert_eq!(
        counts,
        vec![
            ("sa0", 0x1000, 13, 10 * udp + 3 * ping, 3, 3 * ping),
            ("sa1", 0x1002, 10, 10 * udp, 0, 0),
            ("sa2", 0x1004, 10, 10 * udp, 0, 0)
        ]
    );
    let h = &results.nodes[2].ipsec;
    assert_eq!(
        h.iter().map(|r| (r.opened_packets, r.sealed_packets, r.failed)).collect::<Vec<_>>(),
        vec![(13, 3, 0), (10, 0, 0), (10, 0, 0)]
    );
}

#[test]
fn ah_in_transport_mode_authenticates_and_is_verified() {
    let flows = vec![
        udp_flow(1, 0, H, 9, 1000, 20.0, S / 2),
        FlowConfig::Ping { id: 2, from: 0, to: H, count: 3, interval_ns: S / 10, payload: 56, start_ns: 0 },
    ];
    let results = sim::simulate(network(&[("transport", "ah", None)], flows, S)).unwrap();
    assert_eq!((results.flows[0].received, results.flows[1].received), (10, 3), "{:?}", results.drop_log);
    let to_h =
        sim::tunnel::ipsec::security_association_in(0x1000, Cipher::Null, Auth::HmacSha1_96, Mode::Transport).unwrap();
    let wire = from_c(&results);
    assert_eq!(wire.len(), 13);
    for p in &wire {
        let ip = ipv4::Packet::new_checked(&p[..]).unwrap();
        assert_eq!(ip.next_header(), IpProtocol::Ah);
        // The ICV verifies on the packet as c sent it.
        let repr = ah::verify(&to_h, p).unwrap();
        assert_eq!(repr.spi, 0x1000);
        assert!(matches!(repr.next_header, IpProtocol::Udp | IpProtocol::Icmp));
        // AH adds 24 bytes (12 fixed + the 12-byte ICV, RFC 4302 §2), and the data is clear.
        if repr.next_header == IpProtocol::Udp {
            assert_eq!(p.len(), 20 + 24 + 8 + 1000);
        }
    }
    // The copy h received went through r (TTL 63): TTL is mutable and out of the ICV.
    let at_h =
        packets(&results, "h-eth0").into_iter().find(|p| ipv4::Packet::new_unchecked(&p[..]).src_addr() == C).unwrap();
    assert_eq!(ipv4::Packet::new_unchecked(&at_h[..]).ttl(), 63);
    ah::verify(&to_h, &at_h).unwrap();
}

#[test]
fn ah_in_tunnel_mode_carries_the_inner_packet() {
    let flows = vec![
        udp_flow(1, 0, H, 9, 500, 20.0, S / 2),
        FlowConfig::Ping { id: 2, from: 0, to: H, count: 3, interval_ns: S / 10, payload: 56, start_ns: 0 },
    ];
    let results = sim::simulate(network(&[("tunnel", "ah", None)], flows, S)).unwrap();
    assert_eq!((results.flows[0].received, results.flows[1].received), (10, 3), "{:?}", results.drop_log);
    let to_h =
        sim::tunnel::ipsec::security_association_in(0x1000, Cipher::Null, Auth::HmacSha1_96, Mode::Tunnel).unwrap();
    for p in from_c(&results) {
        let repr = ah::verify(&to_h, &p).unwrap();
        assert_eq!(repr.next_header, IpProtocol::IpIp, "next header 4: a whole IPv4 packet inside");
        let mut inner = Vec::new();
        ah::strip(&to_h, &p, &mut inner).unwrap();
        let ip = ipv4::Packet::new_checked(&inner[..]).unwrap();
        assert_eq!((ip.src_addr(), ip.dst_addr()), (C, H));
    }
}

#[test]
fn a_transport_sa_the_peer_lacks_drops_with_its_spi() {
    let mut config = network(&[("transport", "ah", None)], vec![udp_flow(1, 0, H, 9, 100, 10.0, S / 2)], S);
    config.nodes[2].ipsec.clear();
    let results = sim::simulate(config).unwrap();
    assert_eq!(results.flows[0].received, 0);
    assert!(
        results.drop_log.iter().any(|d| d.reason.contains("AH from 10.0.1.1 with SPI 0x1000: no security association")),
        "{:?}",
        results.drop_log
    );
}

#[test]
fn cpu_busy_time_grows_with_the_transport_sas_carrying_traffic() {
    // Seed 003: a 300 MHz client, up to three VPNs to one host. c sends h a flow on
    // each of ports 9, 10, 11; the first k of them are protected by SA pairs selecting
    // their port, so c seals k flows' worth of ESP.
    let hz = 300_000_000u64;
    let cycles = CpuCycles {
        per_rx_packet: 1000,
        per_tx_packet: 1000,
        per_byte_esp: 150.0,
        per_esp_packet: 5000,
        ..CpuCycles::default()
    };
    let (rate, payload) = (100.0, 1000u32);
    let mut utilization = Vec::new();
    for k in 0..=3u16 {
        let sas: Vec<(&str, &str, Option<u16>)> = (0..k).map(|i| ("transport", "esp", Some(9 + i))).collect();
        let flows = (0..3u16).map(|i| udp_flow(u32::from(i) + 1, 0, H, 9 + i, payload, rate, S)).collect();
        let mut config = network(&sas, flows, S);
        config.capture = false;
        config.nodes[0].cpu = CpuConfig {
            profile: "slow".into(),
            hz,
            queue_limit: 1000,
            cycles,
            atm_nic: Default::default(),
            rx_latency: Default::default(),
        };
        let results = sim::simulate(config).unwrap();
        for f in &results.flows {
            assert_eq!((f.sent, f.received), (100, 100), "{k} SAs: {:?}", results.drop_log);
        }
        utilization.push(results.nodes[0].cpu_utilization);
    }
    let esp_len = transport_len(payload as usize) - 20;
    assert_eq!(esp_len, 8 + 8 + 1016 + 12);
    let per_sa = rate * (5000.0 + 150.0 * esp_len as f64) / hz as f64;
    for k in 1..=3 {
        let step = utilization[k] - utilization[k - 1];
        // The same datagrams leave either way and per_byte_copied is 0: ESP is the difference.
        assert!((step - per_sa).abs() < 0.02 * per_sa, "step {step} vs {per_sa} ({utilization:?})");
    }
}
