//! Builders the simulator's end-to-end tests share.

#![allow(dead_code)]

use sim::config::{CpuConfig, CpuCycles, NodeConfig, PortConfig, RouteConfig};

/// A CPU that costs nothing: hardware forwarding, so timing is the links' alone.
pub fn cpu_free() -> CpuConfig {
    CpuConfig { profile: "asic".into(), hz: 0, queue_limit: 1000, cycles: CpuCycles::default() }
}

/// A host (or, with `forward`, a router) with these ports and static routes.
pub fn node(name: &str, ports: Vec<PortConfig>, routes: Vec<RouteConfig>, forward: bool) -> NodeConfig {
    NodeConfig {
        name: name.into(),
        role: if forward { "router".into() } else { "host".into() },
        ports,
        bridge: None,
        ip_forward: forward,
        routes,
        nat: None,
        ipsec: vec![],
        cpu: cpu_free(),
        arp_timeout_ns: 120_000_000_000,
        reassembly_timeout_ns: 30_000_000_000,
    }
}

/// An IP port of `mtu` with an address, for an ATM link: no link addresses (CLIP
/// resolves with ATMARP).
pub fn atm_port(name: &str, mac_last: u8, address: Option<(std::net::Ipv4Addr, u8)>, mtu: u16) -> PortConfig {
    PortConfig { name: name.into(), mac: [2, 0, 0, 0, 0, mac_last], address, mtu, point_to_point: true }
}

/// An ATM link between two ports on OC-3 with LLC/SNAP and these PVCs.
pub fn atm_link(name: &str, a: (u32, u16), b: (u32, u16), pvcs: &[(u16, u16)]) -> sim::config::LinkConfig {
    use sim::atm::config::{AtmLinkConfig, PvcConfig, ServiceCategory};
    use sim::config::PortRef;
    sim::config::LinkConfig::Atm(Box::new(AtmLinkConfig {
        name: name.into(),
        a: PortRef { node: a.0, port: a.1 },
        b: PortRef { node: b.0, port: b.1 },
        phy: "oc3".into(),
        cell_rate_bps: None,
        delay_ns: 0,
        encapsulation: "llc-snap".into(),
        pvcs: pvcs.iter().map(|&(vpi, vci)| PvcConfig { vpi, vci, service: ServiceCategory::Ubr, pcr_bps: None }).collect(),
        nic_queue_frames: 64,
    }))
}

/// An ATM switch node with `ports` ATM ports (no addresses, hardware forwarding).
pub fn atm_switch_node(name: &str, ports: u16) -> NodeConfig {
    let mut n = node(name, (0..ports).map(|p| atm_port(&format!("atm{p}"), 100 + p as u8, None, 9180)).collect(), vec![], false);
    n.role = "atm-switch".into();
    n
}
