//! Configurations the cargo-fuzz `config` target (crates/wire/fuzz) found panicking in
//! the core, fed as the Python binding feeds them (`serde_json` into `SimConfig`, then
//! `sim::validate`): each must now be refused with the offending field named.

fn refusal(json: &str) -> String {
    let config: sim::config::SimConfig = serde_json::from_str(json).expect("the input decodes");
    match sim::validate(config) {
        Ok(()) => panic!("accepted"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn route_prefix_length_45() {
    // RFC 4632 §3.1: a prefix is 0 to 32 bits; /45 shifted past the mask's word.
    let e = refusal(include_str!("../../wire/fuzz/seeds/config/regression-route-prefix-45"));
    assert!(e.contains("/45"), "{e}");
}

#[test]
fn openvpn_protects_prefix_length_42() {
    let e = refusal(include_str!("../../wire/fuzz/seeds/config/regression-openvpn-protects-42"));
    assert!(e.contains("/42") && e.contains("openvpn"), "{e}");
}

#[test]
fn atm_switch_on_a_node_that_does_not_exist() {
    let e = refusal(include_str!("../../wire/fuzz/seeds/config/regression-atm-switch-node"));
    assert!(e.contains("atm.switches[") && e.contains("does not exist"), "{e}");
}
