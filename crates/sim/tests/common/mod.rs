//! Builders the simulator's end-to-end tests share.

#![allow(dead_code)]

use sim::config::{CpuConfig, CpuCycles, NodeConfig, PortConfig, RouteConfig};

/// A CPU that costs nothing: hardware forwarding, so timing is the links' alone.
pub fn cpu_free() -> CpuConfig {
    CpuConfig {
        profile: "asic".into(),
        hz: 0,
        queue_limit: 1000,
        cycles: CpuCycles::default(),
        atm_nic: Default::default(),
        rx_latency: Default::default(),
    }
}

/// A host (or, with `forward`, a router) with these ports and static routes.
pub fn node(name: &str, ports: Vec<PortConfig>, routes: Vec<RouteConfig>, forward: bool) -> NodeConfig {
    NodeConfig {
        name: name.into(),
        role: if forward { qoslab_plan::NodeRole::Router } else { qoslab_plan::NodeRole::Host },
        ports,
        bridge: None,
        ip_forward: forward,
        routes,
        nat: None,
        ipsec: vec![],
        openvpn: vec![],
        pppoe: vec![],
        pptp: vec![],
        cpu: cpu_free(),
        arp_timeout_ns: 120_000_000_000,
        reassembly_timeout_ns: 30_000_000_000,
        pmtu: Default::default(),
    }
}

/// An IP port of `mtu` with an address, for an ATM link: no link addresses (CLIP
/// resolves with ATMARP).
pub fn atm_port(name: &str, mac_last: u8, address: Option<(std::net::Ipv4Addr, u8)>, mtu: u16) -> PortConfig {
    PortConfig {
        name: name.into(),
        mac: [2, 0, 0, 0, 0, mac_last],
        address,
        mtu,
        point_to_point: true,
        promiscuous: false,
    }
}

/// An ATM link between two ports on OC-3 with LLC/SNAP and these PVCs.
pub fn atm_link(name: &str, a: (u32, u16), b: (u32, u16), pvcs: &[(u16, u16)]) -> sim::config::LinkConfig {
    use sim::atm::config::{AtmLinkConfig, PvcConfig, ServiceCategory};
    use sim::config::PortRef;
    sim::config::LinkConfig::Atm(Box::new(AtmLinkConfig {
        name: name.into(),
        a: PortRef { node: a.0, port: a.1 },
        b: PortRef { node: b.0, port: b.1 },
        phy: qoslab_plan::from_name("oc3").unwrap(),
        cell_rate_bps: None,
        delay_ns: 0,
        encapsulation: qoslab_plan::from_name("llc-snap").unwrap(),
        pvcs: pvcs
            .iter()
            .map(|&(vpi, vci)| PvcConfig { vpi, vci, service: ServiceCategory::Ubr, ..Default::default() })
            .collect(),
        nic_queue_frames: 64,
    }))
}

/// An ATM switch node with `ports` ATM ports (no addresses, hardware forwarding).
pub fn atm_switch_node(name: &str, ports: u16) -> NodeConfig {
    let mut n = node(
        name,
        (0..ports).map(|p| atm_port(&format!("atm{p}"), 100 + p as u8, None, 9180)).collect(),
        vec![],
        false,
    );
    n.role = qoslab_plan::from_name("atm-switch").unwrap();
    n
}

/// An IP port `name` with MAC 02:00:00:00:00:`mac`, address `addr`/24 and IP MTU `mtu`.
pub fn port_mtu(name: &str, mac: u8, addr: std::net::Ipv4Addr, mtu: u16) -> PortConfig {
    PortConfig {
        name: name.into(),
        mac: [2, 0, 0, 0, 0, mac],
        address: Some((addr, 24)),
        mtu,
        point_to_point: false,
        promiscuous: false,
    }
}

/// A default route via `gw`.
pub fn default_via(gw: std::net::Ipv4Addr) -> Vec<RouteConfig> {
    vec![RouteConfig { destination: std::net::Ipv4Addr::UNSPECIFIED, prefix_len: 0, via: gw }]
}

/// A 100 Mbit/s full-duplex Ethernet link between (node, port) `a` and `b`, 1 µs long.
pub fn ethernet_100m(name: &str, a: (u32, u16), b: (u32, u16)) -> sim::config::LinkConfig {
    sim::config::LinkConfig::Ethernet {
        name: name.into(),
        a: sim::config::PortRef { node: a.0, port: a.1 },
        b: sim::config::PortRef { node: b.0, port: b.1 },
        rate_bps: 100_000_000,
        delay_ns: 1_000,
        jitter_ns: 0,
        queue_frames: 1000,
        queue_bytes: 10_000_000,
        impair: Default::default(),
    }
}

/// The IPv4 packets of the Ethernet frames capture point `capture` saw, with their
/// times.
pub fn ip_packets(results: &sim::results::Results, capture: &str) -> Vec<(u64, Vec<u8>)> {
    let cap = results.captures.iter().find(|c| c.name == capture).unwrap_or_else(|| panic!("no capture {capture}"));
    cap.frames
        .iter()
        .filter_map(|(t, f)| {
            let frame = wire::ethernet::Frame::new_checked(&f[..]).ok()?;
            (frame.ethertype() == wire::ethernet::EtherType::Ipv4).then(|| (*t, frame.payload().to_vec()))
        })
        .collect()
}
