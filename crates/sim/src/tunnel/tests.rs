//! Every kind of tunnel end reached through [`TunnelEnd`] alone, its MTU rule checked
//! against the arithmetic of its standard written here: what one outer packet of a
//! given MTU leaves for the inner packet.

use std::net::Ipv4Addr;

use serde_json::json;
use wire::{ipv4, IpProtocol};

use super::{Action, TunnelEnd, TunnelIo, HEADROOM};
use crate::config::{CpuCycles, NodeConfig};
use crate::node::Node;

/// A host with one Ethernet port (10.0.0.1/24) and the tunnel ends `extra` lists
/// (plan fields `openvpn`, `pppoe`, `pptp`, `ipsec`).
fn node(extra: serde_json::Value) -> Node {
    let mut config = json!({
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
    let config: NodeConfig = serde_json::from_value(config).unwrap();
    Node::new(&config).unwrap()
}

/// The node's only end.
fn only_end(node: &Node) -> &dyn TunnelEnd {
    let ends: Vec<&dyn TunnelEnd> = node.tunnels.ends().collect();
    assert_eq!(ends.len(), 1);
    ends[0]
}

fn ipsec(cipher: &str, auth: &str, protocol: &str) -> Box<dyn TunnelEnd> {
    let config = serde_json::from_value(json!({
        "name": "ipsec0", "local": "10.0.0.1", "remote": "10.0.9.1", "spi_out": 0x1000, "spi_in": 0x1001,
        "cipher": cipher, "auth": auth, "protects": [["10.9.0.0", 16]], "mtu": 1500, "protocol": protocol,
    }))
    .unwrap();
    Box::new(super::ipsec::IpsecTunnel::new(&config).unwrap())
}

/// An IPv4 packet of `len` octets.
fn packet(len: usize) -> Vec<u8> {
    let repr = ipv4::Repr::new(Ipv4Addr::new(10, 9, 0, 1), Ipv4Addr::new(10, 9, 0, 2), IpProtocol::Udp, len - 20, 64);
    let mut bytes = Vec::new();
    repr.encapsulate(&vec![7u8; len - 20], &mut bytes);
    bytes
}

/// The outer packet's length when `end` seals an inner packet of `len` octets.
fn sealed_len(end: &mut dyn TunnelEnd, len: usize) -> usize {
    let mut io = TunnelIo::default();
    end.send(0, &packet(len), &mut io);
    match io.actions.as_slice() {
        [Action::Routed(outer)] => outer.len() - HEADROOM,
        other => panic!("sealing {len} octets: {other:?}"),
    }
}

#[test]
fn esp_leaves_the_room_rfc_4303_pads_to_the_cipher_block() {
    // RFC 4303 §2: outer IPv4 20, SPI and sequence number 8, the IV, then the inner
    // packet and its 2-octet trailer padded to the cipher's block (§2.4), then the ICV.
    // 3DES-CBC: 8-octet block and IV (RFC 2451); HMAC-SHA1-96: 12-octet ICV (RFC 2404).
    // 1500 - 20 - 8 - 8 - 12 = 1452 for the padded payload: 1448 in whole blocks, 2 of
    // it the trailer.
    let mut end = ipsec("3des-cbc", "hmac-sha1-96", "esp");
    assert_eq!(end.inner_mtu(1500), 1446);
    assert_eq!(sealed_len(&mut *end, 1446), 20 + 8 + 8 + 1448 + 12);
    assert!(sealed_len(&mut *end, 1447) > 1500);
    // AES-CBC: 16-octet block and IV (RFC 3602): 1500 - 20 - 8 - 16 - 12 = 1444, 1440
    // in whole blocks.
    let mut end = ipsec("aes-128-cbc", "hmac-sha1-96", "esp");
    assert_eq!(end.inner_mtu(1500), 1438);
    assert_eq!(sealed_len(&mut *end, 1438), 1500 - 4);
    assert!(sealed_len(&mut *end, 1439) > 1500);
    // AES-GCM (RFC 4106 §3, §6): 8-octet IV, 16-octet ICV, 4-octet alignment:
    // 1500 - 20 - 8 - 8 - 16 = 1448, already aligned.
    let mut end = ipsec("aes-128-gcm", "none", "esp");
    assert_eq!(end.inner_mtu(1500), 1446);
    assert_eq!(sealed_len(&mut *end, 1446), 1500);
    assert!(sealed_len(&mut *end, 1447) > 1500);
}

#[test]
fn ah_takes_its_12_octets_and_the_icv() {
    // RFC 4302 §2: 12 octets of fixed header and the ICV (12 for HMAC-SHA1-96, RFC
    // 2404), the whole a multiple of 32 bits (§2.2).
    let mut end = ipsec("null", "hmac-sha1-96", "ah");
    assert_eq!(end.inner_mtu(1500), 1500 - 20 - 12 - 12);
    assert_eq!(sealed_len(&mut *end, 1456), 1500);
}

fn openvpn(dev: &str, proto: &str, replay: bool) -> Node {
    let mut end = json!({
        "name": "tun0", "dev": dev, "server": false, "local": "10.0.0.1", "remote": "10.0.0.2",
        "local_port": 1194, "remote_port": 1194, "proto": proto, "cipher": "none", "auth": "sha1",
        "replay": replay, "fragment": null, "mtu": 1500, "protects": [["10.9.0.0", 16]], "key": 0,
    });
    if dev == "tap" {
        end["port"] = json!(0);
    }
    node(json!({"openvpn": [end]}))
}

#[test]
fn openvpn_leaves_what_its_headers_leave() {
    // The data channel with `cipher none` and `auth sha1`: opcode and key id 1 octet,
    // peer id 3, HMAC-SHA1 20 (FIPS 180-4: a 160-bit digest), as seed 002 §3.2 counts
    // them; `--replay` adds the 4-octet packet id. Over UDP: IPv4 20 and UDP 8 (RFC 768).
    assert_eq!(only_end(&openvpn("tun", "udp", false)).inner_mtu(1500), 1500 - 20 - 8 - 24);
    assert_eq!(only_end(&openvpn("tun", "udp", true)).inner_mtu(1500), 1500 - 20 - 8 - 24 - 4);
    // Over TCP: a 20-octet TCP header (RFC 9293) and OpenVPN's 2-octet length prefix.
    assert_eq!(only_end(&openvpn("tun", "tcp", false)).inner_mtu(1500), 1500 - 20 - 20 - 2 - 24);
    // TAP carries the Ethernet frame: its 14-octet header (IEEE 802.3 §3.1) too.
    assert_eq!(only_end(&openvpn("tap", "udp", false)).inner_mtu(1500), 1500 - 20 - 8 - 24 - 14);
}

#[test]
fn pppoe_leaves_1492_of_1500() {
    // RFC 2516 §7: the 6-octet PPPoE header and the 2-octet PPP protocol field.
    let node = node(json!({"pppoe": [{
        "name": "ppp0", "port": 0, "server": false, "service_name": "", "auth": "chap",
        "user": "u", "secret": "s", "mtu": 1492, "local": "10.1.0.2", "peer": "10.1.0.1", "routes": [],
    }]}));
    assert_eq!(only_end(&node).inner_mtu(1500), 1492);
}

#[test]
fn pptp_leaves_what_enhanced_gre_and_ppp_leave() {
    // RFC 2637 §4.1: the enhanced GRE header is 8 octets with the key (payload length
    // and call id), and 4 each for the sequence and acknowledgment numbers; before LCP
    // agrees ACFC and PFC, PPP adds address and control (2) and a 2-octet protocol
    // (RFC 1662 §3.1, RFC 1661 §2). Outer IPv4: 20.
    let node = node(json!({"pptp": [{
        "name": "ppp0", "server": false, "local": "10.0.0.1", "remote": "10.0.0.2", "auth": "mschapv2",
        "user": "u", "secret": "s", "mtu": 1400, "ppp_local": "10.1.0.2", "ppp_peer": "10.1.0.1",
        "routes": [], "call_id": 1,
    }]}));
    assert_eq!(only_end(&node).inner_mtu(1500), 1500 - 20 - 16 - 4);
}
