//! The emulated 802.11 cell without devices (crates/emu `shared`, the simulator's own
//! `WifiCell` built by `sim::world::cell_of_plan`): the station adapter's address rule
//! and a frame's airtime checked against IEEE 802.11-2020 written here, with a clock the
//! test sets.

use emu::line::EndKind;
use emu::shared::Shared;
use sim::config::SimConfig;

/// What the cell delivered: (end, frame, scheduled arrival ns).
type Delivered = Vec<(usize, Vec<u8>, u64)>;

const AP_MAC: [u8; 6] = [2, 0, 0, 0, 0, 1];
const STA_MAC: [u8; 6] = [2, 0, 0, 1, 0, 1];

/// A node's CPU that costs nothing (the cell does not ask it).
const CPU: &str = r#"{"atm_nic": {"sar_cell_rate": 0, "sar_pdu_ns": 0}, "cycles": {"per_atm_cell": 0.0,
    "per_bridge_lookup": 0, "per_byte_aes": 0.0, "per_byte_copied": 0.0, "per_byte_esp": 0.0,
    "per_byte_openvpn": 0.0, "per_byte_pptp": 0.0, "per_byte_rc4": 0.0, "per_esp_packet": 0,
    "per_nat_translation": 0, "per_openvpn_packet": 0, "per_pppoe_packet": 0, "per_pptp_packet": 0,
    "per_route_lookup": 0, "per_rx_packet": 0, "per_tx_packet": 0}, "hz": 0, "profile": "ideal",
    "queue_limit": 1000, "rx_latency": {"per_byte_ns": 0.0, "per_frame_ns": 0}}"#;

/// A plan of an AP and one station in an 802.11b cell at 11 Mb/s, long preamble, open,
/// no beacons (so nothing else is on the air).
fn plan(foreign_source: &str) -> SimConfig {
    let node = |name: &str, mac: [u8; 6], address: &str| {
        format!(
            r#"{{"name": "{name}", "role": "host", "arp_timeout_ns": 120000000000, "bridge": null,
                "ip_forward": false, "ipsec": [], "nat": null, "openvpn": [], "pppoe": [], "pptp": [],
                "reassembly_timeout_ns": 30000000000, "routes": [],
                "pmtu": {{"expires_ns": 600000000000, "filter_icmp_unreachable": false, "frag_needed": "mtu",
                    "icmp_burst": 6, "icmp_ratelimit_ns": 1000000000, "min_pmtu": 552,
                    "rate_limit_frag_needed": false}},
                "ports": [{{"name": "wlan0", "mac": {mac:?}, "address": ["{address}", 24], "mtu": 1500,
                    "point_to_point": false, "promiscuous": false}}],
                "cpu": {CPU}}}"#
        )
    };
    let json = format!(
        r#"{{"schema": {schema}, "seed": 3, "duration_ns": 1000000000, "capture": false, "flows": [],
            "adaptive": [], "atm": {{"host_signalling_ns": 0, "lis": [], "switches": [],
                "lane": {{"clients": [], "elans": [], "lecs": null, "mpoa": null}}}},
            "nodes": [{ap}, {sta}],
            "links": [{{"type": "wifi", "name": "air", "standard": "802.11b", "rate_bps": 11000000,
                "preamble": "long", "security": "open", "ap": {{"node": 0, "port": 0}},
                "stations": [{{"node": 1, "port": 0}}], "foreign_source": "{foreign_source}",
                "access": "idle-difs", "beacon": null, "channel": 6, "control_preamble": "bss", "delay_ns": 0,
                "frame_error_rate": [0.0, 0.0], "hears": null, "link_acks": true, "member_preamble": [],
                "member_queue_frames": [100, 1000], "queue_frames": 1000, "relay": true, "retry_limit": 7,
                "rts_threshold": 2347, "wds": false, "wds_members": [false, false]}}]}}"#,
        schema = sim::config::PLAN_SCHEMA,
        ap = node("ap", AP_MAC, "10.0.0.1"),
        sta = node("sta", STA_MAC, "10.0.0.2"),
    );
    sim::config::from_json(&json).expect("a plan")
}

/// An Ethernet II frame (IPv4 EtherType) of `payload` bytes of data.
fn frame(dst: [u8; 6], src: [u8; 6], payload: usize) -> Vec<u8> {
    let mut f = Vec::new();
    f.extend_from_slice(&dst);
    f.extend_from_slice(&src);
    f.extend_from_slice(&0x0800u16.to_be_bytes());
    f.extend((0..payload).map(|i| i as u8));
    f
}

fn offer(cell: &mut Shared, now: u64, from: usize, frame: &[u8], out: &mut Delivered) {
    cell.offer(now, from, frame, &mut |to, f, at| {
        out.push((to, f.to_vec(), at));
        true
    });
}

fn advance(cell: &mut Shared, now: u64, out: &mut Delivered) {
    cell.advance(now, &mut |to, f, at| {
        out.push((to, f.to_vec(), at));
        true
    });
}

#[test]
fn a_station_sends_its_own_frames_and_refuses_a_foreign_source() {
    let config = plan("drop");
    let mut cell = Shared::of_plan(&config, 0, &[EndKind::Tap; 2]).unwrap().expect("a cell");
    assert_eq!(cell.end_names(), ["ap/wlan0", "sta/wlan0"]);
    let mut out = Vec::new();
    // A bridge behind the station relays a frame from another host's MAC: a station
    // adapter sends 3-address frames only, with its own MAC as the source (IEEE
    // 802.11-2020 Table 9-26, To DS: Address 2 = TA = SA), so it cannot carry it.
    let foreign = frame(AP_MAC, [6, 0, 0, 0, 0, 9], 100);
    offer(&mut cell, 1_000_000, 1, &foreign, &mut out);
    advance(&mut cell, 100_000_000, &mut out);
    assert!(out.is_empty());
    let refused = &cell.counters(1).refused;
    assert_eq!(refused.values().map(|c| c.frames).sum::<u64>(), 1);
    assert!(refused.keys().all(|r| r.contains("Table 9-26")), "{refused:?}");
    // Its own frame reaches the AP's end as the station's stack wrote it.
    let own = frame(AP_MAC, STA_MAC, 1000);
    offer(&mut cell, 200_000_000, 1, &own, &mut out);
    advance(&mut cell, 300_000_000, &mut out);
    assert_eq!(out.len(), 1);
    let (to, got, at) = &out[0];
    assert_eq!((*to, got), (0, &own));
    assert_eq!(cell.counters(0).delivered.frames, 1);
    // On a medium idle for longer than DIFS the frame goes at once (§10.3.4.2) and
    // arrives when its last bit does (no propagation delay): the HR/DSSS TXTIME
    // (§16.3.4: long PLCP preamble and header 192 µs, then ceil(8 L / 11) µs) of the
    // MPDU: 24-byte header, 8 of LLC/SNAP (RFC 1042), the 1000-byte MSDU, 4 of FCS.
    let mpdu = 24 + 8 + 1000 + 4;
    let txtime_us = 192 + (8 * mpdu as u64).div_ceil(11);
    assert_eq!(*at - 200_000_000, txtime_us * 1000);
}

#[test]
fn with_foreign_source_rewrite_the_station_sends_it_from_its_own_mac() {
    let mut cell = Shared::of_plan(&plan("rewrite"), 0, &[EndKind::Tap; 2]).unwrap().expect("a cell");
    let mut out = Vec::new();
    let foreign = frame(AP_MAC, [6, 0, 0, 0, 0, 9], 100);
    offer(&mut cell, 1_000_000, 1, &foreign, &mut out);
    advance(&mut cell, 100_000_000, &mut out);
    assert_eq!(out.len(), 1);
    // Address 2 (the SA the AP sees) is the station's own MAC: the host behind it is lost.
    assert_eq!(&out[0].1[6..12], &STA_MAC);
    assert_eq!(&out[0].1[12..], &foreign[12..]);
}

#[test]
fn a_line_is_not_a_shared_link_and_ends_must_match_members() {
    let config = plan("drop");
    let refusal = |index: usize, ends: &[EndKind]| Shared::of_plan(&config, index, ends).err().expect("refused");
    assert!(refusal(0, &[EndKind::Tap; 3]).contains("2 ends"));
    assert!(refusal(0, &[EndKind::Tap, EndKind::Tun]).contains("TAP"));
    assert!(refusal(1, &[EndKind::Tap; 2]).contains("the plan has 1 links"));
}
