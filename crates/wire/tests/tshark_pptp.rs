//! PPTP control messages (RFC 2637 §2) on TCP port 1723 and the enhanced GRE data
//! packets beside them, built by this crate and dissected by tshark's `pptp` and `gre`
//! dissectors. One message per TCP segment, the sequence numbers running on so that
//! tshark reassembles nothing.

mod common;

use wire::ipv4::{self, Address, Protocol};
use wire::pcap::LinkType;
use wire::pptp::{self, result, ControlType, ErrorCode, OutgoingCallReply, OutgoingCallRequest, Repr, StartControl};
use wire::{gre, ppp, tcp, EtherType};

const PNS: Address = Address::new(10, 8, 0, 2);
const PAC: Address = Address::new(10, 8, 0, 1);

const CHECKS: [&str; 6] =
    ["-o", "ip.check_checksum:TRUE", "-o", "tcp.check_checksum:TRUE", "-o", "tcp.relative_sequence_numbers:FALSE"];

fn ethernet(ip: &[u8]) -> Vec<u8> {
    let mut frame = vec![0x02, 0, 0, 0, 0, 0x02, 0x02, 0, 0, 0, 0, 0x01];
    frame.extend_from_slice(&u16::from(EtherType::Ipv4).to_be_bytes());
    frame.extend_from_slice(ip);
    frame
}

fn ip(src: Address, dst: Address, protocol: Protocol, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    ipv4::Repr { dont_frag: true, ..ipv4::Repr::new(src, dst, protocol, 0, 64) }.encapsulate(payload, &mut out);
    out
}

/// Each message in its own segment, PNS → PAC on even indices, PAC → PNS on odd.
fn control_frames(messages: &[(bool, Repr)]) -> Vec<Vec<u8>> {
    let (mut pns_seq, mut pac_seq) = (1_000u32, 5_000u32);
    messages
        .iter()
        .map(|(from_pns, repr)| {
            let mut bytes = Vec::new();
            repr.encode(&mut bytes);
            let (src, dst, sport, dport, seq, ack) = if *from_pns {
                (PNS, PAC, 40_000, pptp::PORT, &mut pns_seq, pac_seq)
            } else {
                (PAC, PNS, pptp::PORT, 40_000, &mut pac_seq, pns_seq)
            };
            let t = tcp::Repr {
                ack_number: Some(tcp::SeqNumber::from_u32(ack)),
                ..tcp::Repr::new(sport, dport, tcp::Control::Psh, tcp::SeqNumber::from_u32(*seq), 64_000)
            };
            *seq = seq.wrapping_add(bytes.len() as u32);
            let mut seg = Vec::new();
            t.encapsulate(&src, &dst, &bytes, &mut seg);
            ethernet(&ip(src, dst, Protocol::Tcp, &seg))
        })
        .collect()
}

#[test]
fn control_connection_and_call() {
    let sccrq = StartControl::request(pptp::FRAMING_SYNC, pptp::BEARER_ANALOG, 0x0100, b"pns.example", b"qoslab");
    let sccrp = StartControl {
        result_code: result::start::SUCCESS,
        framing_capabilities: pptp::FRAMING_ASYNC | pptp::FRAMING_SYNC,
        bearer_capabilities: pptp::BEARER_ANALOG | pptp::BEARER_DIGITAL,
        maximum_channels: 1,
        ..StartControl::request(0, 0, 0x0200, b"pac.example", b"qoslab")
    };
    let ocrq = OutgoingCallRequest {
        call_id: 0x1234,
        call_serial: 7,
        minimum_bps: 300,
        maximum_bps: 100_000_000,
        bearer_type: 3,
        framing_type: 3,
        recv_window: 64,
        processing_delay: 0,
        phone_length: 4,
        phone_number: pptp::text(b"5550"),
        subaddress: pptp::text(b""),
    };
    let ocrp = OutgoingCallReply {
        call_id: 0x4321,
        peer_call_id: 0x1234,
        result_code: result::outgoing::CONNECTED,
        error_code: ErrorCode::None,
        cause_code: 0,
        connect_speed: 100_000_000,
        recv_window: 32,
        processing_delay: 0,
        physical_channel: 0,
    };
    let messages = [
        (true, Repr::StartControlConnectionRequest(sccrq)),
        (false, Repr::StartControlConnectionReply(sccrp)),
        (true, Repr::OutgoingCallRequest(ocrq)),
        (false, Repr::OutgoingCallReply(ocrp)),
        (true, Repr::SetLinkInfo { peer_call_id: 0x4321, send_accm: 0xffff_ffff, receive_accm: 0 }),
        (false, Repr::EchoRequest { identifier: 0x0a0b_0c0d }),
        (true, Repr::EchoReply { identifier: 0x0a0b_0c0d, result_code: result::ok::OK, error_code: ErrorCode::None }),
        (true, Repr::CallClearRequest { call_id: 0x1234 }),
        (false, Repr::StopControlConnectionRequest { reason: result::stop_reason::NONE }),
        (true, Repr::StopControlConnectionReply { result_code: result::ok::OK, error_code: ErrorCode::None }),
    ];
    let frames = control_frames(&messages);
    let Some(text) = common::verbose(LinkType::Ethernet, &frames, &CHECKS) else {
        return;
    };
    common::assert_clean(&text);
    let fields = [
        "pptp.length",
        "pptp.type",
        "pptp.magic_cookie",
        "pptp.control_message_type",
        "pptp.protocol_version",
        "pptp.framing_capabilities",
        "pptp.bearer_capabilities",
        "pptp.maximum_channels",
        "pptp.firmware_revision",
        "pptp.host_name",
        "pptp.vendor_name",
        "pptp.control_result",
        "pptp.call_id",
        "pptp.peer_call_id",
        "pptp.packet_receive_window_size",
        "pptp.minimum_bps",
        "pptp.maximum_bps",
        "pptp.phone_number",
        "pptp.out_result",
        "pptp.connect_speed",
        "pptp.identifier",
        "pptp.echo_result",
        "pptp.send_accm",
        "pptp.reason",
        "pptp.stop_result",
    ];
    let rows = common::fields(LinkType::Ethernet, &frames, &fields, &CHECKS).unwrap();
    let col = |row: usize, name: &str| rows[row][fields.iter().position(|f| *f == name).unwrap()].clone();
    assert_eq!(rows.len(), messages.len());
    for (i, (_, repr)) in messages.iter().enumerate() {
        // Length, Message Type 1, the Magic Cookie and the type, as RFC 2637 §2 lays out.
        assert_eq!(col(i, "pptp.length"), repr.buffer_len().to_string(), "message {i}");
        assert_eq!(col(i, "pptp.type"), "1");
        assert_eq!(col(i, "pptp.magic_cookie"), "0x1a2b3c4d");
        assert_eq!(col(i, "pptp.control_message_type"), u16::from(repr.control_type()).to_string());
    }
    // SCCRQ: version 1.0 (0x0100), framing 2, bearer 1, names.
    assert_eq!(col(0, "pptp.protocol_version"), "256");
    assert_eq!(col(0, "pptp.framing_capabilities"), "2");
    assert_eq!(col(0, "pptp.bearer_capabilities"), "1");
    assert_eq!(col(0, "pptp.maximum_channels"), "0");
    assert_eq!(col(0, "pptp.firmware_revision"), "256");
    assert_eq!(col(0, "pptp.host_name"), "pns.example");
    assert_eq!(col(0, "pptp.vendor_name"), "qoslab");
    // SCCRP: Result 1 at octet 14, the capabilities after it.
    assert_eq!(col(1, "pptp.control_result"), "1");
    assert_eq!(col(1, "pptp.framing_capabilities"), "3");
    assert_eq!(col(1, "pptp.maximum_channels"), "1");
    assert_eq!(col(1, "pptp.host_name"), "pac.example");
    // OCRQ and OCRP: the Call IDs and windows each side announces.
    assert_eq!(col(2, "pptp.call_id"), "4660");
    assert_eq!(col(2, "pptp.minimum_bps"), "300");
    assert_eq!(col(2, "pptp.maximum_bps"), "100000000");
    assert_eq!(col(2, "pptp.packet_receive_window_size"), "64");
    assert_eq!(col(2, "pptp.phone_number"), "5550");
    assert_eq!(col(3, "pptp.call_id"), "17185");
    assert_eq!(col(3, "pptp.peer_call_id"), "4660");
    assert_eq!(col(3, "pptp.out_result"), "1");
    assert_eq!(col(3, "pptp.connect_speed"), "100000000");
    assert_eq!(col(3, "pptp.packet_receive_window_size"), "32");
    // SLI, Echo, CCRQ, Stop.
    assert_eq!(col(4, "pptp.peer_call_id"), "17185");
    assert_eq!(col(4, "pptp.send_accm"), "0xffffffff");
    assert_eq!(col(5, "pptp.identifier"), "168496141");
    assert_eq!(col(6, "pptp.identifier"), "168496141");
    assert_eq!(col(6, "pptp.echo_result"), "1");
    assert_eq!(col(7, "pptp.call_id"), "4660");
    assert_eq!(col(8, "pptp.reason"), "1");
    assert_eq!(col(9, "pptp.stop_result"), "1");
    assert_eq!(ControlType::from(15), ControlType::SetLinkInfo);
}

#[test]
fn call_messages_of_the_incoming_side_and_errors() {
    use wire::pptp::{
        CallDisconnectNotify, IncomingCallConnected, IncomingCallReply, IncomingCallRequest, WanErrorNotify,
    };
    let messages = [
        (
            false,
            Repr::IncomingCallRequest(IncomingCallRequest {
                call_id: 9,
                call_serial: 2,
                bearer_type: 1,
                physical_channel: 5,
                dialed_length: 3,
                dialing_length: 4,
                dialed_number: pptp::text(b"123"),
                dialing_number: pptp::text(b"4567"),
                subaddress: pptp::text(b""),
            }),
        ),
        (
            true,
            Repr::IncomingCallReply(IncomingCallReply {
                call_id: 77,
                peer_call_id: 9,
                result_code: result::incoming::CONNECT,
                error_code: ErrorCode::None,
                recv_window: 16,
                transmit_delay: 0,
            }),
        ),
        (
            false,
            Repr::IncomingCallConnected(IncomingCallConnected {
                peer_call_id: 77,
                connect_speed: 64_000,
                recv_window: 8,
                transmit_delay: 0,
                framing_type: 1,
            }),
        ),
        (
            false,
            Repr::WanErrorNotify(WanErrorNotify {
                peer_call_id: 77,
                crc_errors: 1,
                framing_errors: 2,
                hardware_overruns: 3,
                buffer_overruns: 4,
                timeout_errors: 5,
                alignment_errors: 6,
            }),
        ),
        (
            false,
            Repr::CallDisconnectNotify(CallDisconnectNotify {
                call_id: 9,
                result_code: result::disconnect::REQUEST,
                error_code: ErrorCode::None,
                cause_code: 0,
                call_statistics: pptp::text(b"bye"),
            }),
        ),
    ];
    let frames = control_frames(&messages);
    let Some(text) = common::verbose(LinkType::Ethernet, &frames, &CHECKS) else {
        return;
    };
    common::assert_clean(&text);
    let fields = [
        "pptp.control_message_type",
        "pptp.call_id",
        "pptp.peer_call_id",
        "pptp.dialed_number",
        "pptp.dialing_number",
        "pptp.physical_channel_id",
        "pptp.in_result",
        "pptp.packet_receive_window_size",
        "pptp.connect_speed",
        "pptp.crc_errors",
        "pptp.alignment_errors",
        "pptp.disc_result",
        "pptp.call_Statistics",
    ];
    let rows = common::fields(LinkType::Ethernet, &frames, &fields, &CHECKS).unwrap();
    assert_eq!(rows[0][..6], ["9", "9", "", "123", "4567", "5"]);
    assert_eq!(rows[1][..3], ["10", "77", "9"]);
    assert_eq!(rows[1][6..8], ["1", "16"]);
    assert_eq!(rows[2][0], "11");
    assert_eq!(rows[2][2], "77");
    assert_eq!(rows[2][7..9], ["8", "64000"]);
    assert_eq!(rows[3][0], "14");
    assert_eq!(rows[3][9..11], ["1", "6"]);
    assert_eq!(rows[4][0], "13");
    assert_eq!(rows[4][1], "9");
    assert_eq!(rows[4][11..13], ["4", "bye"]);
}

#[test]
fn enhanced_gre_data_and_ack_only() {
    // A data packet (S and A set) carrying a PFC'd PPP frame with an inner IPv4 packet,
    // then an acknowledgment alone (A set, no S, no payload), RFC 2637 §4.1 and §4.2.
    let inner = ip(Address::new(192, 168, 7, 2), Address::new(192, 168, 7, 1), Protocol::Unknown(253), b"qoslab!!");
    let mut ppp_frame = Vec::new();
    ppp::Repr { protocol: ppp::Protocol::Ipv4, pfc: false }.encapsulate(&inner, &mut ppp_frame);
    let mut data = Vec::new();
    gre::Repr::pptp(0x4321, 0, Some(0), Some(5)).encapsulate(&ppp_frame, &mut data);
    let mut ack = Vec::new();
    gre::Repr::pptp(0x1234, 0, None, Some(0)).encapsulate(&[], &mut ack);
    let frames = vec![ethernet(&ip(PNS, PAC, Protocol::Gre, &data)), ethernet(&ip(PAC, PNS, Protocol::Gre, &ack))];
    let Some(text) = common::verbose(LinkType::Ethernet, &frames, &CHECKS) else {
        return;
    };
    common::assert_clean(&text);
    let fields = [
        "frame.protocols",
        "gre.flags.version",
        "gre.key.payload_length",
        "gre.key.call_id",
        "gre.sequence_number",
        "gre.ack_number",
    ];
    let rows = common::fields(LinkType::Ethernet, &frames, &fields, &CHECKS).unwrap();
    assert_eq!(rows[0][0], "eth:ethertype:ip:gre:ppp:ip:data");
    assert_eq!(rows[0][1..], ["1", &ppp_frame.len().to_string(), "17185", "0", "5"]);
    assert_eq!(rows[1][0], "eth:ethertype:ip:gre");
    assert_eq!(rows[1][1..], ["1", "0", "4660", "", "0"]);
}
