//! The plan's closed sets are enums: an unknown name is refused where the plan is read,
//! with the path of its field, and the 802.11 preamble rule is stated once
//! (`WifiStandard::preamble_problem`) and applied by `SimConfig::check`.

use qoslab_plan::{from_json, from_name, name_of, Preamble, SimConfig, WifiStandard};
use serde_json::{json, Value};

/// An AP and a station in one 802.11 cell at 2 Mb/s, nothing else.
fn wifi_plan(standard: &str, preamble: &str, member_preamble: &[&str]) -> Value {
    let node = |name: &str, role: &str, last: u8| {
        json!({
            "name": name, "role": role,
            "ports": [{"name": "wlan0", "mac": [2, 0, 0, 0, 0, last], "address": [format!("10.0.0.{last}"), 24], "mtu": 1500}],
            "cpu": {"profile": "none", "hz": 0, "queue_limit": 10, "cycles": {
                "per_rx_packet": 0, "per_tx_packet": 0, "per_byte_copied": 0.0, "per_bridge_lookup": 0,
                "per_route_lookup": 0, "per_nat_translation": 0, "per_byte_rc4": 0.0, "per_byte_aes": 0.0}},
            "arp_timeout_ns": 1, "reassembly_timeout_ns": 1,
        })
    };
    json!({
        "schema": qoslab_plan::PLAN_SCHEMA, "seed": 1, "duration_ns": 1,
        "nodes": [node("ap", "ap", 1), node("sta", "host", 2)],
        "links": [{"type": "wifi", "name": "cell", "standard": standard, "rate_bps": 2_000_000,
            "preamble": preamble, "member_preamble": member_preamble, "security": "open",
            "ap": {"node": 0, "port": 0}, "stations": [{"node": 1, "port": 0}], "rts_threshold": 2347,
            "foreign_source": "drop", "queue_frames": 10}],
    })
}

fn read(plan: &Value) -> Result<SimConfig, qoslab_plan::ConfigError> {
    from_json(&plan.to_string())
}

#[test]
fn an_unknown_name_is_refused_at_its_field() {
    assert!(read(&wifi_plan("802.11b", "short", &[])).is_ok());
    for (path, value, field) in [
        ("/links/0/standard", "802.11n", "links[0].standard"),
        ("/links/0/member_preamble/1", "medium", "links[0].member_preamble[1]"),
        ("/nodes/1/role", "gateway", "nodes[1].role"),
    ] {
        let mut plan = wifi_plan("802.11b", "long", &["long", "long"]);
        *plan.pointer_mut(path).unwrap() = value.into();
        let e = read(&plan).unwrap_err();
        assert_eq!(e.field, field, "{e}");
        assert!(e.message.starts_with(&format!("unknown variant `{value}`, expected")), "{e}");
    }
}

#[test]
fn the_spellings_are_the_standards_names() {
    // IEEE 802.11-2020's clause 15 PHY is "802.11" (DSSS); 802.11b is clause 16, 802.11g clause 18.
    for (name, standard) in [
        ("802.11", WifiStandard::Dot11),
        ("802.11b", WifiStandard::Dot11b),
        ("802.11g", WifiStandard::Dot11g),
        ("802.11g-mixed", WifiStandard::Dot11gMixed),
    ] {
        assert_eq!(from_name::<WifiStandard>(name).unwrap(), standard);
        assert_eq!(name_of(&standard), name);
    }
    assert!(from_name::<WifiStandard>("802.11a").unwrap_err().contains("unknown variant `802.11a`"));
}

#[test]
fn dsss_has_only_the_long_preamble_and_the_check_says_where() {
    // Clause 15 defines one PLCP format; HR/DSSS (§16.2.2.3) and ERP have the short one too.
    assert!(!WifiStandard::Dot11.allows_short_preamble());
    for s in [WifiStandard::Dot11b, WifiStandard::Dot11g, WifiStandard::Dot11gMixed] {
        assert!(s.allows_short_preamble());
        assert_eq!(s.preamble_problem(Preamble::Short), None);
    }
    let rule = WifiStandard::Dot11.preamble_problem(Preamble::Short).unwrap();
    assert_eq!(WifiStandard::Dot11.preamble_problem(Preamble::Long), None);
    let e = read(&wifi_plan("802.11", "short", &[])).unwrap().check().unwrap_err();
    assert_eq!((e.field.as_str(), e.message.as_str()), ("links[0].preamble", rule));
    let e = read(&wifi_plan("802.11", "long", &["long", "short"])).unwrap().check().unwrap_err();
    assert_eq!((e.field.as_str(), e.message.as_str()), ("links[0].member_preamble[1]", rule));
    read(&wifi_plan("802.11", "long", &["long", "long"])).unwrap().check().unwrap();
    read(&wifi_plan("802.11b", "short", &["long", "short"])).unwrap().check().unwrap();
}
