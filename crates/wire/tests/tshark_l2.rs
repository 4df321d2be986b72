//! Link-layer frames built with `wire::{ethernet, llc, arp, dot11}` and dissected by
//! tshark: every field tshark reports must equal what the Reprs encoded, and the
//! verbose dissection must be free of malformed-packet and bad-checksum errors.

mod common;

use std::net::Ipv4Addr;

use wire::arp;
use wire::dot11::{self, DataRepr, QosControl};
use wire::ethernet::{self, Address, EtherType, VlanRepr, VlanTag};
use wire::llc;
use wire::pcap::LinkType;

const H1: Address = Address([0x02, 0x11, 0x22, 0x33, 0x44, 0x01]);
const H2: Address = Address([0x02, 0x11, 0x22, 0x33, 0x44, 0x02]);
const AP: Address = Address([0x02, 0xaa, 0xbb, 0xcc, 0xdd, 0x0a]);
const AP2: Address = Address([0x02, 0xaa, 0xbb, 0xcc, 0xdd, 0x0b]);
const IP1: Ipv4Addr = Ipv4Addr::new(192, 0, 2, 1);
const IP2: Ipv4Addr = Ipv4Addr::new(192, 0, 2, 2);

/// tshark prints Ethernet addresses as lower-case colon-separated hex, as Display does.
fn mac(a: Address) -> String {
    a.to_string()
}

fn arp_bytes(repr: &arp::Repr) -> Vec<u8> {
    let mut buf = vec![0u8; repr.buffer_len()];
    repr.emit(&mut arp::Packet::new_unchecked(&mut buf[..]));
    buf
}

fn arp_request() -> arp::Repr {
    arp::Repr::request(H1, IP1, IP2)
}

fn arp_reply() -> arp::Repr {
    arp::Repr::reply_to(&arp_request(), H2)
}

#[test]
fn ethernet_ii_with_arp() {
    let eth_req = ethernet::Repr { src_addr: H1, dst_addr: Address::BROADCAST, ethertype: EtherType::Arp };
    let eth_rep = ethernet::Repr { src_addr: H2, dst_addr: H1, ethertype: EtherType::Arp };
    let mut f1 = Vec::new();
    eth_req.encapsulate(&arp_bytes(&arp_request()), false, &mut f1);
    let mut f2 = Vec::new();
    eth_rep.encapsulate(&arp_bytes(&arp_reply()), false, &mut f2);
    assert_eq!(f1.len(), 60);
    let frames = vec![f1, f2];
    let names = [
        "eth.dst",
        "eth.src",
        "eth.type",
        "eth.padding",
        "arp.opcode",
        "arp.src.hw_mac",
        "arp.src.proto_ipv4",
        "arp.dst.hw_mac",
        "arp.dst.proto_ipv4",
    ];
    let Some(rows) = common::fields(LinkType::Ethernet, &frames, &names, &[]) else { return };
    assert_eq!(
        rows[0],
        [
            "ff:ff:ff:ff:ff:ff",
            &mac(H1),
            "0x0806",
            &"00".repeat(18),
            "1",
            &mac(H1),
            "192.0.2.1",
            "00:00:00:00:00:00",
            "192.0.2.2"
        ]
    );
    assert_eq!(
        rows[1],
        [&mac(H1), &mac(H2), "0x0806", &"00".repeat(18), "2", &mac(H2), "192.0.2.2", &mac(H1), "192.0.2.1"]
    );
    common::assert_clean(&common::verbose(LinkType::Ethernet, &frames, &[]).unwrap());
}

#[test]
fn ethernet_fcs_is_good() {
    // Full frames with FCS, as on the wire; tshark is told the FCS is always there and
    // to check it.
    let eth = ethernet::Repr { src_addr: H1, dst_addr: H2, ethertype: EtherType::Arp };
    let mut short = Vec::new();
    eth.encapsulate(&arp_bytes(&arp_request()), true, &mut short);
    assert_eq!(short.len(), ethernet::MIN_FRAME_LEN);
    let mut long = Vec::new();
    eth.encapsulate(&[0x5a; 1500], true, &mut long);
    assert_eq!(long.len(), ethernet::MAX_FRAME_LEN);
    let fcs_short = ethernet::fcs(&short[..60]);
    let frames = vec![short, long];
    let opts = ["-o", "eth.fcs:Always", "-o", "eth.check_fcs:TRUE"];
    let Some(rows) = common::fields(LinkType::Ethernet, &frames, &["eth.fcs", "eth.fcs.status", "frame.len"], &opts)
    else {
        return;
    };
    // tshark shows the four FCS octets as a big-endian number; the FCS goes out low
    // byte first (IEEE 802.3 §3.2.9), so it reads byte-swapped.
    assert_eq!(rows[0], [format!("{:#010x}", fcs_short.swap_bytes()).as_str(), "1", "64"]);
    assert_eq!(rows[1][1], "1");
    assert_eq!(rows[1][2], "1518");
    common::assert_clean(&common::verbose(LinkType::Ethernet, &frames, &opts).unwrap());
}

#[test]
fn vlan_tagged_arp() {
    let eth = ethernet::Repr { src_addr: H1, dst_addr: Address::BROADCAST, ethertype: EtherType::Vlan };
    let tag = VlanRepr { tag: VlanTag { pcp: 5, dei: true, vid: 1234 }, ethertype: EtherType::Arp };
    let mut payload = vec![0u8; VlanRepr::LEN];
    tag.emit(&mut payload);
    payload.extend_from_slice(&arp_bytes(&arp_request()));
    let mut frame = Vec::new();
    eth.encapsulate(&payload, false, &mut frame);
    let frames = vec![frame];
    let names = ["eth.type", "vlan.priority", "vlan.dei", "vlan.id", "vlan.etype", "arp.opcode"];
    let Some(rows) = common::fields(LinkType::Ethernet, &frames, &names, &[]) else { return };
    assert_eq!(rows[0], ["0x8100", "5", "1", "1234", "0x0806", "1"]);
    common::assert_clean(&common::verbose(LinkType::Ethernet, &frames, &[]).unwrap());
}

#[test]
fn ieee8023_with_llc() {
    // 802.3 length frame carrying LLC/SNAP (RFC 1042) + ARP, and one carrying a plain
    // LLC TEST command (U-format, P set) from the null SAP to SAP 0x42.
    let mut snap = Vec::new();
    llc::Repr::ethertype(EtherType::Arp).encapsulate(&arp_bytes(&arp_request()), &mut snap);
    let mut f1 = Vec::new();
    ethernet::Ieee8023Repr::encapsulate(H1, H2, &snap, false, &mut f1);
    let mut test_pdu = Vec::new();
    let test_cmd = llc::Repr::Llc {
        dsap: 0x42,
        ssap: 0x00,
        control: llc::Control::Unnumbered { modifier: llc::control::TEST, poll_final: true },
    };
    test_cmd.encapsulate(b"hello", &mut test_pdu);
    let mut f2 = Vec::new();
    ethernet::Ieee8023Repr::encapsulate(H1, H2, &test_pdu, false, &mut f2);
    let frames = vec![f1, f2];
    let names =
        ["eth.len", "llc.dsap", "llc.ssap", "llc.control", "llc.oui", "llc.type", "arp.opcode", "arp.dst.proto_ipv4"];
    let Some(rows) = common::fields(LinkType::Ethernet, &frames, &names, &[]) else { return };
    assert_eq!(rows[0], ["36", "0xaa", "0xaa", "0x0003", "0", "0x0806", "1", "192.0.2.2"]);
    assert_eq!(rows[1][..4], ["8", "0x42", "0x00", "0x00f3"]);
    common::assert_clean(&common::verbose(LinkType::Ethernet, &frames, &[]).unwrap());
}

/// Options telling tshark that every 802.11 frame ends in an FCS and to verify it.
const WLAN_FCS: [&str; 4] = ["-o", "wlan.check_fcs:TRUE", "-o", "wlan.check_checksum:TRUE"];

#[test]
fn dot11_data_four_ds_cases() {
    // IEEE 802.11-2020 Table 9-26 (seed 000 Table 1), ARP over LLC/SNAP in each case.
    // H1 sends to H2; AP/AP2 are the access points (and WDS radios).
    let cases = [
        DataRepr::ibss(H2, H1, AP).with_sequence(1, 0),
        DataRepr::from_ap(H2, AP, H1).with_sequence(2, 0).with_duration(44),
        DataRepr::to_ap(AP, H1, H2).with_sequence(3, 0).with_duration(314),
        DataRepr::wds(AP2, AP, H2, H1).with_sequence(4095, 0),
    ];
    let frames: Vec<Vec<u8>> = cases
        .iter()
        .map(|c| {
            let mut out = Vec::new();
            c.encapsulate_ethertype(EtherType::Arp, &arp_bytes(&arp_request()), &mut out);
            out
        })
        .collect();
    let names = [
        "wlan.fc.ds",
        "wlan.ra",
        "wlan.ta",
        "wlan.da",
        "wlan.sa",
        "wlan.bssid",
        "wlan.duration",
        "wlan.seq",
        "wlan.fcs.status",
        "llc.type",
        "arp.src.proto_ipv4",
    ];
    let Some(rows) = common::fields(LinkType::Ieee80211, &frames, &names, &WLAN_FCS) else { return };
    for (repr, row) in cases.iter().zip(&rows) {
        let ds = format!("{:#04x}", repr.addresses.ds_field());
        let bssid = repr.bssid().map(mac).unwrap_or_default();
        assert_eq!(
            row,
            &[
                ds.as_str(),
                &mac(repr.receiver()),
                &mac(repr.transmitter()),
                &mac(repr.destination()),
                &mac(repr.source()),
                &bssid,
                &repr.duration.to_string(),
                &repr.sequence_number.to_string(),
                "1",
                "0x0806",
                "192.0.2.1",
            ],
            "case {repr:?}"
        );
    }
    // The seed's Table 1 labels, read as wlan.fc.ds: WS=>WS 00, WAP=>WS 10, WS=>WAP 01,
    // WAP=>WAP 11.
    assert_eq!(rows.iter().map(|r| r[0].as_str()).collect::<Vec<_>>(), ["0x00", "0x02", "0x01", "0x03"]);
    common::assert_clean(&common::verbose(LinkType::Ieee80211, &frames, &WLAN_FCS).unwrap());
}

#[test]
fn dot11_qos_data() {
    let mut repr = DataRepr::to_ap(AP, H1, H2).with_qos(6).with_sequence(77, 3);
    repr.retry = true;
    repr.more_fragments = true;
    repr.qos = Some(QosControl { tid: 6, eosp: false, ack_policy: 1, amsdu_present: false, upper: 0 });
    let mut frame = Vec::new();
    repr.encapsulate_ethertype(EtherType::Arp, &arp_bytes(&arp_reply()), &mut frame);
    let mut wds = Vec::new();
    DataRepr::wds(AP2, AP, H2, H1).with_qos(3).encapsulate_ethertype(
        EtherType::Arp,
        &arp_bytes(&arp_reply()),
        &mut wds,
    );
    // Defragmentation off: the first frame is fragment 3 with More Fragments set.
    let mut opts = WLAN_FCS.to_vec();
    opts.extend(["-o", "wlan.defragment:FALSE"]);
    let frames = vec![frame, wds];
    let names = [
        "wlan.fc.type_subtype",
        "wlan.fc.retry",
        "wlan.fc.frag",
        "wlan.seq",
        "wlan.frag",
        "wlan.qos.tid",
        "wlan.qos.ack",
        "wlan.fcs.status",
    ];
    let Some(rows) = common::fields(LinkType::Ieee80211, &frames, &names, &opts) else { return };
    assert_eq!(rows[0], ["0x0028", "1", "1", "77", "3", "6", "0x0001", "1"]);
    assert_eq!(rows[1], ["0x0028", "0", "0", "0", "0", "3", "0x0000", "1"]);
    common::assert_clean(&common::verbose(LinkType::Ieee80211, &frames, &opts).unwrap());
}

#[test]
fn dot11_control_frames() {
    let reprs = [
        dot11::Repr::Rts { duration: 500, receiver: AP, transmitter: H1 },
        dot11::Repr::Cts { duration: 400, receiver: H1 },
        dot11::Repr::Ack { duration: 0, receiver: H1 },
    ];
    let frames: Vec<Vec<u8>> = reprs
        .iter()
        .map(|r| {
            let mut out = Vec::new();
            r.encapsulate(&[], &mut out);
            out
        })
        .collect();
    assert_eq!(frames.iter().map(Vec::len).collect::<Vec<_>>(), [dot11::RTS_LEN, dot11::CTS_LEN, dot11::ACK_LEN]);
    let names = ["wlan.fc.type_subtype", "wlan.duration", "wlan.ra", "wlan.ta", "wlan.fcs.status", "frame.len"];
    let Some(rows) = common::fields(LinkType::Ieee80211, &frames, &names, &WLAN_FCS) else { return };
    assert_eq!(rows[0], ["0x001b", "500", &mac(AP), &mac(H1), "1", "20"]);
    assert_eq!(rows[1], ["0x001c", "400", &mac(H1), "", "1", "14"]);
    assert_eq!(rows[2], ["0x001d", "0", &mac(H1), "", "1", "14"]);
    for (r, row) in reprs.iter().zip(&rows) {
        assert_eq!(row[0], format!("{:#06x}", r.frame_control().type_subtype()));
    }
    common::assert_clean(&common::verbose(LinkType::Ieee80211, &frames, &WLAN_FCS).unwrap());
}

#[test]
fn dot11_bad_fcs_is_flagged() {
    // The negative control: tshark must see a corrupted FCS, or the checks above
    // would prove nothing.
    let mut frame = Vec::new();
    dot11::Repr::Ack { duration: 0, receiver: H1 }.encapsulate(&[], &mut frame);
    frame[13] ^= 0xff;
    let Some(rows) = common::fields(LinkType::Ieee80211, &[frame], &["wlan.fcs.status"], &WLAN_FCS) else { return };
    assert_eq!(rows[0], ["0"]);
}
