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
        openvpn: vec![],
        pppoe: vec![],
        pptp: vec![],
        cpu: cpu_free(),
        arp_timeout_ns: 120_000_000_000,
        reassembly_timeout_ns: 30_000_000_000,
    }
}
