//! crates/emu `tunnel`: the end built by the simulator's constructor, and what it refuses.
use super::*;

/// A host with one Ethernet port (10.0.0.1/24) and the tunnel ends of `extra`.
fn node(extra: serde_json::Value) -> NodeConfig {
    let mut config = serde_json::json!({
        "name": "h",
        "role": "host",
        "ports": [{"name": "eth0", "mac": [2, 0, 0, 0, 0, 1], "address": ["10.0.0.1", 24], "mtu": 1500}],
        "cpu": {"profile": "asic", "hz": 0, "queue_limit": 10,
                "cycles": serde_json::to_value(CpuCycles::default()).unwrap()},
        "arp_timeout_ns": 60_000_000_000u64,
        "reassembly_timeout_ns": 30_000_000_000u64,
    });
    for (k, v) in extra.as_object().unwrap() {
        config[k] = v.clone();
    }
    serde_json::from_value(config).unwrap()
}

fn ipsec(name: &str, mode: &str) -> serde_json::Value {
    serde_json::json!({
        "name": name, "local": "10.0.0.1", "remote": "10.0.0.2", "spi_out": 0x1000, "spi_in": 0x1001,
        "cipher": "3des-cbc", "auth": "hmac-sha1-96", "protects": [["10.9.0.0", 16]], "mtu": 1500,
        "protocol": "esp", "mode": mode,
    })
}

fn refusal(node: &NodeConfig, name: &str) -> String {
    match build_end(node, name) {
        Err(Error::Config(m)) => m,
        Err(e) => panic!("not a refusal: {e}"),
        Ok((kind, _)) => panic!("{name} was built as {kind}"),
    }
}

#[test]
fn the_named_end_is_built_with_its_kind_and_the_rest_is_refused_with_the_reason() {
    let config = node(serde_json::json!({"ipsec": [ipsec("vpn0", "tunnel"), ipsec("vpn1", "transport")]}));
    let (kind, end) = build_end(&config, "vpn0").unwrap();
    assert_eq!((kind, end.name()), ("ipsec", "vpn0"));
    // RFC 4303: the tunnel-mode end of the plan, its far end the outer destination.
    assert_eq!(end.remote(), Some(Ipv4Addr::new(10, 0, 0, 2)));
    // A transport-mode SA is built too, for the NFQUEUE end (transport.rs).
    let (kind, end) = build_end(&config, "vpn1").unwrap();
    assert_eq!((kind, end.name()), ("ipsec-transport", "vpn1"));
    assert!(refusal(&config, "vpn9").contains("no tunnel end named vpn9"));
}

#[test]
fn a_pppoe_client_starts_discovery_with_a_broadcast_padi_on_its_port() {
    let pppoe = serde_json::json!([{
        "name": "ppp0", "port": 0, "server": false, "service_name": "", "auth": "chap",
        "user": "u", "secret": "s", "mtu": 1492, "local": "192.0.2.2", "peer": "192.0.2.1",
        "routes": [["192.0.2.1", 32]],
    }]);
    let config = node(serde_json::json!({ "pppoe": pppoe }));
    let (kind, mut end) = build_end(&config, "ppp0").unwrap();
    assert_eq!((kind, end.rides_on_port()), ("pppoe", Some(0)));
    assert_eq!(end.poll_at(), Some(0));
    let mut io = TunnelIo::default();
    end.on_timer(0, &mut io);
    let frames: Vec<&Vec<u8>> = io
        .actions
        .iter()
        .filter_map(|a| if let Action::Frame { frame, .. } = a { Some(frame) } else { None })
        .collect();
    assert_eq!(frames.len(), 1);
    // RFC 2516 §5.1: to the broadcast address, code 0x09, session 0.
    assert_eq!(&frames[0][..6], &[0xff; 6]);
    assert_eq!(discovery_code(frames[0]), Some(("PADI".to_string(), 0)));
}
