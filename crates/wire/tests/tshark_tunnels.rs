//! Cross-checks of PPP, HDLC-like framing, PPPoE, GRE/enhanced GRE and OpenVPN against
//! tshark's dissectors. The Ethernet, IPv4 and UDP headers around them are written by
//! hand here (other modules own them), with real checksums.

mod common;

use wire::checksum;
use wire::gre;
use wire::hdlc;
use wire::openvpn::{self, Auth, Cipher, DataChannel, DataOpcode};
use wire::pcap::LinkType;
use wire::ppp::{self, ChapBody, ChapRepr, Code, ControlPacket, ControlRepr, LcpOption};
use wire::pppoe::{self, DiscoveryRepr, SessionRepr, Tag};

const HOST: [u8; 6] = [0x02, 0x00, 0x00, 0x00, 0x00, 0x01];
const AC: [u8; 6] = [0x02, 0x00, 0x00, 0x00, 0x00, 0x02];

fn ethernet(dst: [u8; 6], src: [u8; 6], ether_type: u16, payload: &[u8]) -> Vec<u8> {
    let mut frame = Vec::with_capacity(14 + payload.len());
    frame.extend_from_slice(&dst);
    frame.extend_from_slice(&src);
    frame.extend_from_slice(&ether_type.to_be_bytes());
    frame.extend_from_slice(payload);
    frame
}

/// A 20-octet IPv4 header (RFC 791 §3.1) with a correct header checksum, then `payload`.
fn ipv4(protocol: u8, src: [u8; 4], dst: [u8; 4], payload: &[u8]) -> Vec<u8> {
    let total = u16::try_from(20 + payload.len()).unwrap();
    let mut packet = vec![0x45, 0x00];
    packet.extend_from_slice(&total.to_be_bytes());
    packet.extend_from_slice(&[0x12, 0x34, 0x40, 0x00, 64, protocol, 0, 0]);
    packet.extend_from_slice(&src);
    packet.extend_from_slice(&dst);
    let sum = checksum::checksum(&packet);
    packet[10..12].copy_from_slice(&sum.to_be_bytes());
    packet.extend_from_slice(payload);
    packet
}

/// A UDP datagram (RFC 768) with its pseudo-header checksum.
fn udp(src: [u8; 4], dst: [u8; 4], sport: u16, dport: u16, payload: &[u8]) -> Vec<u8> {
    let len = u16::try_from(8 + payload.len()).unwrap();
    let mut datagram = Vec::new();
    datagram.extend_from_slice(&sport.to_be_bytes());
    datagram.extend_from_slice(&dport.to_be_bytes());
    datagram.extend_from_slice(&len.to_be_bytes());
    datagram.extend_from_slice(&[0, 0]);
    datagram.extend_from_slice(payload);
    let acc = checksum::accumulate(checksum::pseudo_header(src, dst, 17, len), &datagram);
    let mut sum = !checksum::fold(acc);
    if sum == 0 {
        sum = 0xffff;
    }
    datagram[6..8].copy_from_slice(&sum.to_be_bytes());
    datagram
}

/// An inner IPv4 packet to carry: ICMP-less, protocol 253 (experimentation), 8 octets.
fn inner_ipv4() -> Vec<u8> {
    ipv4(253, [10, 0, 0, 1], [10, 0, 0, 2], b"qoslab!!")
}

fn control(code: u8, identifier: u8, data: &[u8]) -> Vec<u8> {
    let repr = ControlRepr { code, identifier, data };
    let mut out = vec![0u8; repr.buffer_len()];
    repr.emit(&mut ControlPacket::new_unchecked(&mut out[..]));
    out
}

#[test]
fn pppoe_discovery_and_session() {
    let padi = DiscoveryRepr::new(pppoe::Code::Padi, 0)
        .tag(Tag::service_name(b"iwas"))
        .tag(Tag::host_uniq(&[0xde, 0xad, 0xbe, 0xef]));
    let mut padi_bytes = vec![0u8; padi.buffer_len()];
    padi.emit(&mut pppoe::Packet::new_unchecked(&mut padi_bytes[..]));

    let pads = DiscoveryRepr::new(pppoe::Code::Pads, 0x1234).tag(Tag::service_name(b"iwas")).tag(Tag::ac_name(b"ac-1"));
    let mut pads_bytes = vec![0u8; pads.buffer_len()];
    pads.emit(&mut pppoe::Packet::new_unchecked(&mut pads_bytes[..]));

    let session = SessionRepr { session_id: 0x1234, protocol: ppp::Protocol::Ipv4, payload_len: 0 };
    let mut data_bytes = Vec::new();
    session.encapsulate(&inner_ipv4(), &mut data_bytes);

    // LCP Configure-Request over the session: MRU 1492 (RFC 2516 §7), magic number, CHAP.
    let mut options = Vec::new();
    ppp::emit_lcp_options(
        &[
            LcpOption::Mru(1492),
            LcpOption::MagicNumber(0x0a0b_0c0d),
            LcpOption::AuthProtocol { protocol: ppp::Protocol::Chap, data: &[5] },
        ],
        &mut options,
    );
    let lcp = control(Code::ConfigureRequest.into(), 7, &options);
    let mut lcp_bytes = Vec::new();
    SessionRepr { protocol: ppp::Protocol::Lcp, ..session }.encapsulate(&lcp, &mut lcp_bytes);

    // CHAP Challenge (RFC 1994 §4.1).
    let chap = ChapRepr { identifier: 3, body: ChapBody::Challenge { value: &[0x11; 16], name: b"pppoe-server" } };
    let mut chap_packet = vec![0u8; chap.buffer_len()];
    chap.emit(&mut ControlPacket::new_unchecked(&mut chap_packet[..]));
    let mut chap_bytes = Vec::new();
    SessionRepr { protocol: ppp::Protocol::Chap, ..session }.encapsulate(&chap_packet, &mut chap_bytes);

    let frames = vec![
        ethernet([0xff; 6], HOST, 0x8863, &padi_bytes),
        ethernet(HOST, AC, 0x8863, &pads_bytes),
        ethernet(AC, HOST, 0x8864, &data_bytes),
        ethernet(AC, HOST, 0x8864, &lcp_bytes),
        ethernet(HOST, AC, 0x8864, &chap_bytes),
    ];
    let Some(rows) = common::fields(
        LinkType::Ethernet,
        &frames,
        &[
            "pppoe.version",
            "pppoe.type",
            "pppoe.code",
            "pppoe.session_id",
            "pppoe.payload_length",
            "pppoed.tags.service_name",
            "pppoed.tags.host_uniq",
            "pppoed.tags.ac_name",
            "ppp.protocol",
            "ip.dst",
            "lcp.opt.mru",
            "lcp.opt.magic_number",
            "lcp.opt.auth_protocol",
            "chap.code",
            "chap.value_size",
            "chap.name",
        ],
        &[],
    ) else {
        return;
    };
    let padi_row = &rows[0];
    assert_eq!(padi_row[0..5], ["1", "1", "0x09", "0x0000", "16"]);
    assert_eq!(padi_row[5], "iwas");
    assert_eq!(padi_row[6], "deadbeef");
    let pads_row = &rows[1];
    assert_eq!(pads_row[2..5], ["0x65", "0x1234", "16"]);
    assert_eq!(pads_row[7], "ac-1");
    let data_row = &rows[2];
    assert_eq!(data_row[2..5], ["0x00", "0x1234", "30"]); // 2 + a 28-octet datagram
    assert_eq!(data_row[8], "0x0021");
    assert_eq!(data_row[9], "10.0.0.2");
    let lcp_row = &rows[3];
    assert_eq!(lcp_row[8], "0xc021");
    assert_eq!(lcp_row[10..13], ["1492", "0x0a0b0c0d", "0xc223"]);
    let chap_row = &rows[4];
    assert_eq!(chap_row[8], "0xc223");
    assert_eq!(chap_row[13..16], ["1", "16", "pppoe-server"]);

    let text = common::verbose(LinkType::Ethernet, &frames, &[]).unwrap();
    common::assert_clean(&text);
}

#[test]
fn ppp_in_hdlc_like_framing() {
    let config = hdlc::Config::default();
    let mut ipv4_ppp = Vec::new();
    ppp::Repr { protocol: ppp::Protocol::Ipv4, pfc: false }.encapsulate(&inner_ipv4(), &mut ipv4_ppp);
    let mut echo = Vec::new();
    ppp::Repr { protocol: ppp::Protocol::Lcp, pfc: false }
        .encapsulate(&control(Code::EchoRequest.into(), 1, &[0, 0, 0, 0]), &mut echo);
    let frames =
        [config.frame(&ipv4_ppp), config.frame(&echo), hdlc::Config { fcs: hdlc::Fcs::Fcs32, ..config }.frame(&echo)];
    // LINKTYPE_PPP_HDLC frames are de-stuffed, flags removed; tshark reads the FCS only
    // when told its width.
    let Some(rows) = common::fields(
        LinkType::PppHdlc,
        &frames[..2],
        &["ppp.address", "ppp.control", "ppp.protocol", "ppp.fcs_16", "ppp.fcs.status", "ip.src", "ppp.code"],
        &["-o", "ppp.fcs_type:16-Bit"],
    ) else {
        return;
    };
    let fcs = |frame: &[u8]| u16::from_le_bytes([frame[frame.len() - 2], frame[frame.len() - 1]]);
    assert_eq!(rows[0][0..3], ["0xff", "0x03", "0x0021"]);
    assert_eq!(rows[0][3], format!("0x{:04x}", fcs(&frames[0])));
    assert_eq!(rows[0][4], "1"); // PROTO_CHECKSUM_E_GOOD
    assert_eq!(rows[0][5], "10.0.0.1");
    assert_eq!(rows[1][2], "0xc021");
    assert_eq!(rows[1][4], "1");
    // Our hand-computed FCS of hdlc.rs's LCP Echo-Request vector.
    assert_eq!(rows[1][3], "0xf16e");
    assert_eq!(rows[1][6], "9");
    let text = common::verbose(LinkType::PppHdlc, &frames[..2], &["-o", "ppp.fcs_type:16-Bit"]).unwrap();
    common::assert_clean(&text);

    let rows = common::fields(
        LinkType::PppHdlc,
        &frames[2..],
        &["ppp.protocol", "ppp.fcs_32", "ppp.fcs.status"],
        &["-o", "ppp.fcs_type:32-Bit"],
    )
    .unwrap();
    let f = &frames[2];
    let fcs32 = u32::from_le_bytes([f[f.len() - 4], f[f.len() - 3], f[f.len() - 2], f[f.len() - 1]]);
    assert_eq!(rows[0], ["0xc021", &format!("0x{fcs32:08x}"), "1"]);
}

#[test]
fn gre_and_enhanced_gre() {
    let outer_src = [192, 0, 2, 1];
    let outer_dst = [192, 0, 2, 2];
    // RFC 2784 + RFC 2890 GRE with checksum, key and sequence, carrying IPv4.
    let plain = gre::Repr {
        checksum: true,
        key: Some(0x0102_0304),
        sequence: Some(42),
        ..gre::Repr::gre(wire::EtherType::Ipv4)
    };
    let mut gre_v0 = Vec::new();
    plain.encapsulate(&inner_ipv4(), &mut gre_v0);

    // PPTP (RFC 2637 §4.1): a PPP frame with address and control, sequence, no ack.
    let mut ppp_frame = vec![0xff, 0x03];
    ppp::Repr { protocol: ppp::Protocol::Ipv4, pfc: false }.encapsulate(&inner_ipv4(), &mut ppp_frame);
    let mut pptp = Vec::new();
    gre::Repr::pptp(0x4000, 0, Some(7), None).encapsulate(&ppp_frame, &mut pptp);
    // And one with ACFC and PFC (seed 002 §3.4's one-octet PPP header) plus an ack.
    let mut compressed = Vec::new();
    ppp::Repr { protocol: ppp::Protocol::Ipv4, pfc: true }.encapsulate(&inner_ipv4(), &mut compressed);
    let mut pptp_ack = Vec::new();
    gre::Repr::pptp(0x4001, 0, Some(8), Some(6)).encapsulate(&compressed, &mut pptp_ack);

    let frames: Vec<Vec<u8>> = [gre_v0, pptp, pptp_ack]
        .iter()
        .map(|g| ethernet(AC, HOST, 0x0800, &ipv4(47, outer_src, outer_dst, g)))
        .collect();
    let Some(rows) = common::fields(
        LinkType::Ethernet,
        &frames,
        &[
            "gre.flags.checksum",
            "gre.flags.key",
            "gre.flags.sequence_number",
            "gre.flags.ack",
            "gre.flags.version",
            "gre.proto",
            "gre.checksum.status",
            "gre.key",
            "gre.key.payload_length",
            "gre.key.call_id",
            "gre.sequence_number",
            "gre.ack_number",
            "ppp.protocol",
            "ip.dst",
        ],
        &[],
    ) else {
        return;
    };
    let v0 = &rows[0];
    assert_eq!(v0[0..7], ["1", "1", "1", "", "0", "0x0800", "1"]); // checksum good
    assert_eq!(v0[7], "0x01020304");
    assert_eq!(v0[10], "42");
    assert_eq!(v0[13], "192.0.2.2,10.0.0.2");
    let v1 = &rows[1];
    assert_eq!(v1[0..6], ["0", "1", "1", "0", "1", "0x880b"]);
    assert_eq!(v1[8..12], [ppp_frame.len().to_string().as_str(), "16384", "7", ""]);
    assert_eq!(v1[12], "0x0021");
    assert_eq!(v1[13], "192.0.2.2,10.0.0.2");
    let v1a = &rows[2];
    assert_eq!(v1a[3], "1");
    assert_eq!(v1a[8..12], [compressed.len().to_string().as_str(), "16385", "8", "6"]);
    assert_eq!(v1a[12], "0x0021");
    assert_eq!(v1a[13], "192.0.2.2,10.0.0.2");

    let text = common::verbose(LinkType::Ethernet, &frames, &[]).unwrap();
    common::assert_clean(&text);
}

#[test]
fn openvpn_data_over_udp() {
    let client = [198, 51, 100, 1];
    let server = [198, 51, 100, 2];
    // Seed 002's L2-VPN: an Ethernet frame (PPPoE session) inside P_DATA_V2, cipher none,
    // auth SHA1, as the paper counts it (no packet id) and as OpenVPN sends it (with).
    let mut session = Vec::new();
    SessionRepr { session_id: 0x1234, protocol: ppp::Protocol::Ipv4, payload_len: 0 }
        .encapsulate(&inner_ipv4(), &mut session);
    let tap_frame = ethernet(AC, HOST, 0x8864, &session);
    let paper = DataChannel {
        opcode: DataOpcode::V2 { peer_id: 5 },
        key_id: 1,
        replay: false,
        hmac_key: vec![0x0b; 20],
        ..DataChannel::new(Cipher::None, Auth::Sha1)
    };
    let default = DataChannel { replay: true, ..paper.clone() };
    let gcm_v1 = DataChannel { opcode: DataOpcode::V1, key_id: 2, ..DataChannel::new(Cipher::Aes256Gcm, Auth::Sha1) };

    let mut packets = Vec::new();
    for (channel, pid) in [(&paper, 1u32), (&default, 2), (&gcm_v1, 3)] {
        let mut out = Vec::new();
        channel.encapsulate(pid, &[], &tap_frame, &mut out);
        assert_eq!(out.len(), tap_frame.len() + channel.overhead(tap_frame.len()));
        packets.push(out);
    }
    let frames: Vec<Vec<u8>> = packets
        .iter()
        .map(|p| ethernet(AC, HOST, 0x0800, &ipv4(17, client, server, &udp(client, server, 40000, openvpn::PORT, p))))
        .collect();
    let options = ["-d", "udp.port==1194,openvpn"];
    let Some(rows) = common::fields(
        LinkType::Ethernet,
        &frames,
        &["openvpn.opcode", "openvpn.keyid", "openvpn.peerid", "openvpn.data", "pppoe.session_id"],
        &options,
    ) else {
        return;
    };
    assert_eq!(rows[0][0..3], ["0x09", "1", "5"]);
    assert_eq!(rows[1][0..3], ["0x09", "1", "5"]);
    assert_eq!(rows[2][0..3], ["0x06", "2", ""]);
    // tshark shows everything after the peer id as data: it has no way to know the HMAC
    // length or the packet id of the data channel, so it does not dissect the inner
    // Ethernet frame (no PPPoE found), whatever its tls-auth preferences say.
    let hex = |b: &[u8]| b.iter().map(|x| format!("{x:02x}")).collect::<String>();
    assert_eq!(rows[0][3], hex(&packets[0][4..]));
    assert_eq!(rows[1][3], hex(&packets[1][4..]));
    assert_eq!(rows[2][3], hex(&packets[2][1..]));
    assert!(rows.iter().all(|r| r[4].is_empty()));
    // Its tls-auth preferences (HMAC size, packet-id format) apply to control packets
    // only: even with them set, a data packet's HMAC and packet id stay opaque.
    let tls_auth = [
        "-d",
        "udp.port==1194,openvpn",
        "-o",
        "openvpn.tls_auth_detection_override:TRUE",
        "-o",
        "openvpn.tls_auth:TRUE",
        "-o",
        "openvpn.tls_auth_hmac_size:20",
        "-o",
        "openvpn.long_format:FALSE",
    ];
    let with_prefs = common::fields(
        LinkType::Ethernet,
        &frames,
        &["openvpn.opcode", "openvpn.hmac", "openvpn.pid", "openvpn.data"],
        &tls_auth,
    )
    .unwrap();
    assert_eq!(with_prefs[1], ["0x09", "", "", &hex(&packets[1][4..])]);
    // Our own decapsulation finds the TAP frame again.
    assert_eq!(paper.decapsulate(&packets[0]).unwrap().payload, tap_frame);
    assert_eq!(default.decapsulate(&packets[1]).unwrap().packet_id, Some(2));

    let text = common::verbose(LinkType::Ethernet, &frames, &options).unwrap();
    common::assert_clean(&text);
}
