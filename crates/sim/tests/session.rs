//! A session (crates/sim/src/session.rs) decodes a network once and runs each test on it
//! in a world of its own: every test's results must be byte for byte those of the same
//! test run alone from its whole configuration, whatever ran before on the session.

mod common;

use std::net::Ipv4Addr;

use common::{ethernet_100m, node, port_mtu};
use sim::config::{FlowConfig, SimConfig};
use sim::session::{Session, TestPart};

/// Three hosts on a chain a - r - b (r forwards), no traffic: the network part.
fn network() -> SimConfig {
    SimConfig {
        seed: 7,
        duration_ns: 1_000_000_000,
        nodes: vec![
            node(
                "a",
                vec![port_mtu("eth0", 1, Ipv4Addr::new(10, 0, 0, 1), 1500)],
                common::default_via(Ipv4Addr::new(10, 0, 0, 254)),
                false,
            ),
            node(
                "r",
                vec![
                    port_mtu("eth0", 2, Ipv4Addr::new(10, 0, 0, 254), 1500),
                    port_mtu("eth1", 3, Ipv4Addr::new(10, 0, 1, 254), 1500),
                ],
                vec![],
                true,
            ),
            node(
                "b",
                vec![port_mtu("eth0", 4, Ipv4Addr::new(10, 0, 1, 1), 1500)],
                common::default_via(Ipv4Addr::new(10, 0, 1, 254)),
                false,
            ),
        ],
        links: vec![ethernet_100m("a-r", (0, 0), (1, 0)), ethernet_100m("r-b", (1, 1), (2, 0))],
        ..Default::default()
    }
}

fn udp(from: u32, to: Ipv4Addr, payload: u32, rate_pps: f64, stop_ns: u64) -> FlowConfig {
    FlowConfig::Udp {
        id: 0,
        from,
        to,
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

/// The JSON of a test's part, as python/qoslab/backends/sim.py sends it.
fn part(seed: u64, duration_ns: u64, flow: &FlowConfig) -> String {
    serde_json::json!({"seed": seed, "duration_ns": duration_ns, "flows": [flow], "capture": false}).to_string()
}

#[test]
fn each_test_on_a_session_gets_the_results_it_gets_alone() {
    // The network travels as JSON, as from Python, and is decoded once.
    let text = serde_json::to_string(&network()).unwrap();
    let session = Session::new(serde_json::from_str(&text).unwrap());
    let tests = [
        (1, 200_000_000, udp(0, Ipv4Addr::new(10, 0, 1, 1), 100, 1000.0, 100_000_000)),
        (2, 300_000_000, udp(2, Ipv4Addr::new(10, 0, 0, 1), 1400, 5000.0, 200_000_000)),
        (1, 200_000_000, udp(0, Ipv4Addr::new(10, 0, 1, 1), 100, 1000.0, 100_000_000)),
        (9, 100_000_000, udp(0, Ipv4Addr::new(10, 0, 0, 254), 500, 20000.0, 50_000_000)),
    ];
    for (seed, duration_ns, flow) in &tests {
        let test: TestPart = serde_json::from_str(&part(*seed, *duration_ns, flow)).unwrap();
        let via_session = serde_json::to_string(&session.simulate(test).unwrap()).unwrap();
        // Alone: the whole configuration written out and decoded from one text.
        let mut whole: serde_json::Value = serde_json::from_str(&text).unwrap();
        for (k, v) in
            serde_json::from_str::<serde_json::Value>(&part(*seed, *duration_ns, flow)).unwrap().as_object().unwrap()
        {
            whole[k] = v.clone();
        }
        let alone = sim::simulate(serde_json::from_value(whole).unwrap()).unwrap();
        let alone = serde_json::to_string(&alone).unwrap();
        assert_eq!(via_session, alone, "seed {seed}");
        // The test measured something: its flow's datagrams arrived.
        let results: serde_json::Value = serde_json::from_str(&via_session).unwrap();
        assert!(results["flows"][0]["received"].as_u64().unwrap_or(0) > 0, "{}", results["flows"][0]);
    }
}

#[test]
fn a_field_a_test_does_not_set_is_refused() {
    let err = serde_json::from_str::<TestPart>(r#"{"nodes": []}"#).unwrap_err();
    assert!(err.to_string().contains("unknown field `nodes`"), "{err}");
}

#[test]
fn a_test_the_network_refuses_is_refused_as_alone() {
    let session = Session::new(network());
    let bad = udp(5, Ipv4Addr::new(10, 0, 1, 1), 100, 1000.0, 100_000_000); // no node 5
    let test: TestPart = serde_json::from_str(&part(1, 200_000_000, &bad)).unwrap();
    let mut whole = network();
    whole.seed = 1;
    whole.duration_ns = 200_000_000;
    whole.flows = vec![bad];
    let alone = sim::simulate(whole).unwrap_err();
    assert_eq!(session.simulate(test).unwrap_err(), alone);
}
