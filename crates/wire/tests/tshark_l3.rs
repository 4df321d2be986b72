//! IPv4, ICMPv4, UDP and TCP bytes built by this crate, dissected by tshark.
//!
//! Frames are Ethernet II with a hand-written 14-byte header (ethernet.rs belongs to
//! another group), EtherType IPv4.

mod common;

use std::time::Instant;

use wire::ipv4::{self, Address, Ipv4Option, Options, Protocol};
use wire::pcap::LinkType;
use wire::reassembly::{Config, Reassembler, RFC791_TIMEOUT_NS};
use wire::{icmpv4, tcp, udp, EtherType};

const SRC: Address = Address::new(192, 0, 2, 1);
const DST: Address = Address::new(198, 51, 100, 7);

fn ethernet(ip: &[u8]) -> Vec<u8> {
    let mut frame = vec![0x02, 0, 0, 0, 0, 0x02, 0x02, 0, 0, 0, 0, 0x01];
    frame.extend_from_slice(&u16::from(EtherType::Ipv4).to_be_bytes());
    frame.extend_from_slice(ip);
    frame
}

fn ip_repr(protocol: Protocol, ident: u16) -> ipv4::Repr {
    ipv4::Repr { ident, tos: 0xb8, dont_frag: true, ..ipv4::Repr::new(SRC, DST, protocol, 0, 64) }
}

fn ip_packet(repr: ipv4::Repr, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    repr.encapsulate(payload, &mut out);
    out
}

const CHECKS: [&str; 8] = [
    "-o",
    "ip.check_checksum:TRUE",
    "-o",
    "udp.check_checksum:TRUE",
    "-o",
    "tcp.check_checksum:TRUE",
    "-o",
    "tcp.relative_sequence_numbers:FALSE",
];

/// tshark's checksum status values: 1 is "Good".
const GOOD: &str = "1";

fn dissect(frames: &[Vec<u8>], fields: &[&str]) -> Option<Vec<Vec<String>>> {
    let text = common::verbose(LinkType::Ethernet, frames, &CHECKS)?;
    common::assert_clean(&text);
    common::fields(LinkType::Ethernet, frames, fields, &CHECKS)
}

#[test]
fn ipv4_header_and_options() {
    let mut options = Options::record_route(3).unwrap();
    options.push(&Ipv4Option::NoOperation).unwrap();
    options.push(&Ipv4Option::RouterAlert { value: 0 }).unwrap();
    let mut udp_bytes = Vec::new();
    udp::Repr { src_port: 5000, dst_port: 6000 }.encapsulate(&SRC, &DST, b"hello", &mut udp_bytes);
    let repr = ipv4::Repr { options, ..ip_repr(Protocol::Udp, 0xbeef) };
    let frame = ethernet(&ip_packet(repr, &udp_bytes));
    let Some(rows) = dissect(
        &[frame],
        &[
            "ip.len",
            "ip.id",
            "ip.flags.df",
            "ip.frag_offset",
            "ip.checksum.status",
            "ip.dsfield.dscp",
            "ip.hdr_len",
            "ip.opt.type",
            "ip.opt.ptr",
            "ip.opt.ra",
            "ip.ttl",
        ],
    ) else {
        return;
    };
    let r = &rows[0];
    assert_eq!(r[0], (repr.header_len() + 13).to_string());
    assert_eq!(r[1], "0xbeef");
    assert_eq!(r[2], "1");
    assert_eq!(r[3], "0");
    assert_eq!(r[4], GOOD);
    assert_eq!(r[5], "46");
    assert_eq!(r[6], "40"); // 20 + RR (3+12) + NOP + RA (4) = 36 -> padded 40
                            // Option types: Record Route 7, NOP 1, Router Alert 148, EOL 0 (padding).
    assert!(r[7].starts_with("7,1,148"), "{}", r[7]);
    assert_eq!(r[8], "4");
    assert_eq!(r[9], "0");
    assert_eq!(r[10], "64");
}

#[test]
fn udp_ports_length_checksum() {
    let payload = vec![0x42; 333];
    let mut udp_bytes = Vec::new();
    udp::Repr { src_port: 40000, dst_port: 33333 }.encapsulate(&SRC, &DST, &payload, &mut udp_bytes);
    let frame = ethernet(&ip_packet(ip_repr(Protocol::Udp, 1), &udp_bytes));
    let Some(rows) = dissect(&[frame], &["udp.srcport", "udp.dstport", "udp.length", "udp.checksum.status"]) else {
        return;
    };
    assert_eq!(rows[0], vec!["40000", "33333", "341", GOOD]);
}

#[test]
fn tcp_syn_ack_sack() {
    let syn = tcp::Repr {
        max_seg_size: Some(1460),
        sack_permitted: true,
        timestamp: Some((123_456, 0)),
        window_scale: Some(7),
        cwr: true,
        ece: true,
        ..tcp::Repr::new(43210, 80, tcp::Control::Syn, tcp::SeqNumber::from_u32(3_000_000_000), 64240)
    };
    let ack = tcp::Repr {
        ack_number: Some(tcp::SeqNumber::from_u32(17)),
        timestamp: Some((123_999, 555)),
        sack_ranges: [Some((1000, 2000)), Some((3000, 4000)), None],
        ece: true,
        ..tcp::Repr::new(43210, 80, tcp::Control::None, tcp::SeqNumber::from_u32(3_000_000_001), 502)
    };
    let data = tcp::Repr {
        ack_number: Some(tcp::SeqNumber::from_u32(17)),
        ..tcp::Repr::new(43210, 80, tcp::Control::Psh, tcp::SeqNumber::from_u32(3_000_000_001), 502)
    };
    let mut frames = Vec::new();
    for (repr, payload) in [(syn, &b""[..]), (ack, &b""[..]), (data, &b"GET / HTTP/1.0\r\n\r\n"[..])] {
        let mut seg = Vec::new();
        repr.encapsulate(&SRC, &DST, payload, &mut seg);
        frames.push(ethernet(&ip_packet(ip_repr(Protocol::Tcp, 2), &seg)));
    }
    let Some(rows) = dissect(
        &frames,
        &[
            "tcp.flags",
            "tcp.seq",
            "tcp.ack",
            "tcp.hdr_len",
            "tcp.window_size_value",
            "tcp.options.mss_val",
            "tcp.options.wscale.shift",
            "tcp.options.sack_perm",
            "tcp.options.timestamp.tsval",
            "tcp.options.timestamp.tsecr",
            "tcp.options.sack_le",
            "tcp.options.sack_re",
            "tcp.checksum.status",
            "tcp.len",
        ],
    ) else {
        return;
    };
    // SYN with ECE and CWR: 0x0c2 (ECN setup SYN, RFC 3168 §6.1.1).
    assert_eq!(rows[0][0], "0x00c2");
    assert_eq!(rows[0][1], "3000000000");
    assert_eq!(rows[0][3], "40");
    assert_eq!(rows[0][4], "64240");
    assert_eq!(rows[0][5], "1460");
    assert_eq!(rows[0][6], "7");
    assert!(!rows[0][7].is_empty());
    assert_eq!(rows[0][8], "123456");
    assert_eq!(rows[0][9], "0");
    assert_eq!(rows[0][12], GOOD);

    assert_eq!(rows[1][0], "0x0050"); // ACK + ECE
    assert_eq!(rows[1][1], "3000000001");
    assert_eq!(rows[1][2], "17");
    assert_eq!(rows[1][3], "52"); // 20 + 12 (TS) + 20 (NOP NOP SACK x2)
    assert_eq!(rows[1][8], "123999");
    assert_eq!(rows[1][9], "555");
    assert_eq!(rows[1][10], "1000,3000");
    assert_eq!(rows[1][11], "2000,4000");
    assert_eq!(rows[1][12], GOOD);

    assert_eq!(rows[2][0], "0x0018"); // PSH + ACK
    assert_eq!(rows[2][3], "20");
    assert_eq!(rows[2][12], GOOD);
    assert_eq!(rows[2][13], "18");
}

#[test]
fn icmp_echo_and_frag_needed() {
    let echo = icmpv4::Repr::EchoRequest { ident: 0x1234, seq_no: 7, data: b"qoslab ping payload" };
    let mut echo_bytes = Vec::new();
    echo.encapsulate(&mut echo_bytes);
    let echo_frame = ethernet(&ip_packet(ip_repr(Protocol::Icmp, 3), &echo_bytes));

    // A 1500-byte DF datagram meets a 1400 MTU: fragment() refuses, the router answers.
    let mut big_udp = Vec::new();
    udp::Repr { src_port: 1111, dst_port: 2222 }.encapsulate(&SRC, &DST, &[0u8; 1472], &mut big_udp);
    let original = ip_packet(ip_repr(Protocol::Udp, 4), &big_udp);
    assert_eq!(ipv4::fragment(&original, 1400, |_| ()), Err(ipv4::FragmentError::DontFragment { mtu: 1400 }));
    let error = icmpv4::Repr::frag_required(&original, 1400).unwrap();
    let mut error_bytes = Vec::new();
    error.encapsulate(&mut error_bytes);
    let router = Address::new(203, 0, 113, 1);
    let back = ipv4::Repr { ident: 5, ..ipv4::Repr::new(router, SRC, Protocol::Icmp, 0, 255) };
    let error_frame = ethernet(&ip_packet(back, &error_bytes));

    let Some(rows) = dissect(
        &[echo_frame, error_frame],
        &["icmp.type", "icmp.code", "icmp.ident", "icmp.seq", "icmp.checksum.status", "icmp.mtu", "udp.dstport"],
    ) else {
        return;
    };
    assert_eq!(rows[0][..5], ["8", "0", "4660", "7", GOOD]);
    assert_eq!(rows[1][0], "3");
    assert_eq!(rows[1][1], "4");
    assert_eq!(rows[1][4], GOOD);
    assert_eq!(rows[1][5], "1400");
    assert_eq!(rows[1][6], "2222"); // the quoted UDP header
}

#[test]
fn fragmented_udp_reassembled_by_tshark() {
    // A 4000-byte UDP datagram (8 header + 3992 data) at MTU 1500: 1480 + 1480 + 1040.
    let data: Vec<u8> = (0..3992).map(|i| (i % 253) as u8).collect();
    let mut udp_bytes = Vec::new();
    udp::Repr { src_port: 7000, dst_port: 7001 }.encapsulate(&SRC, &DST, &data, &mut udp_bytes);
    assert_eq!(udp_bytes.len(), 4000);
    let repr = ipv4::Repr { dont_frag: false, ..ip_repr(Protocol::Udp, 0x5151) };
    let datagram = ip_packet(repr, &udp_bytes);
    let mut fragments = Vec::new();
    let n = ipv4::fragment(&datagram, 1500, |f| fragments.push(f.to_vec())).unwrap();
    assert_eq!(n, 3);
    assert_eq!(ipv4::fragment_count(4000, 20, 1500), Some(3));

    // Our own reassembler gives the datagram back.
    let mut r = Reassembler::default();
    let mut whole = None;
    for f in fragments.iter().rev() {
        whole = r.process(0, f).unwrap();
    }
    assert_eq!(whole.as_deref(), Some(&datagram[..]));

    let frames: Vec<Vec<u8>> = fragments.iter().map(|f| ethernet(f)).collect();
    let Some(rows) = dissect(
        &frames,
        &[
            "ip.len",
            "ip.flags.mf",
            "ip.frag_offset",
            "ip.checksum.status",
            "ip.fragment.count",
            "ip.reassembled.length",
            "udp.length",
            "udp.checksum.status",
        ],
    ) else {
        return;
    };
    // tshark shows ip.frag_offset in 8-octet units, as on the wire.
    assert_eq!(rows[0][..4], ["1500", "1", "0", GOOD]);
    assert_eq!(rows[1][..4], ["1500", "1", "185", GOOD]);
    assert_eq!(rows[2][..4], ["1060", "0", "370", GOOD]);
    let last = &rows[2];
    assert_eq!(last[4], "3");
    assert_eq!(last[5], "4000");
    assert_eq!(last[6], "4000");
    assert_eq!(last[7], GOOD);
}

#[test]
fn reassembly_timeout_sends_time_exceeded() {
    let mut udp_bytes = Vec::new();
    udp::Repr { src_port: 9, dst_port: 9 }.encapsulate(&SRC, &DST, &[7u8; 3000], &mut udp_bytes);
    let datagram = ip_packet(ipv4::Repr { dont_frag: false, ..ip_repr(Protocol::Udp, 77) }, &udp_bytes);
    let mut fragments = Vec::new();
    ipv4::fragment(&datagram, 1500, |f| fragments.push(f.to_vec())).unwrap();
    let mut r = Reassembler::new(Config { timeout: RFC791_TIMEOUT_NS, ..Config::default() });
    assert_eq!(r.process(0, &fragments[0]), Ok(None));
    let due = r.poll_at().unwrap();
    assert_eq!(due, RFC791_TIMEOUT_NS);
    let expired = r.expire(due);
    let quote = expired[0].quote.as_deref().unwrap();
    let icmp = icmpv4::Repr::TimeExceeded { reason: icmpv4::TimeExceeded::FragExpired, header: quote };
    let mut icmp_bytes = Vec::new();
    icmp.encapsulate(&mut icmp_bytes);
    let back = ipv4::Repr::new(DST, SRC, Protocol::Icmp, 0, 64);
    let frame = ethernet(&ip_packet(back, &icmp_bytes));
    let Some(rows) = dissect(&[frame], &["icmp.type", "icmp.code", "icmp.checksum.status", "ip.id"]) else {
        return;
    };
    assert_eq!(rows[0][..3], ["11", "1", GOOD]);
    assert!(rows[0][3].ends_with("0x004d"), "{}", rows[0][3]); // the quoted ident 77
}

/// Encode + decode of an Ethernet + IPv4 + TCP bare ACK; the target is 5 million per
/// second in release. Run with
/// `cargo test --release -p qoslab-wire --test tshark_l3 -- --ignored --nocapture`.
#[test]
#[ignore]
fn ack_encode_decode_rate() {
    let ip = ipv4::Repr { dont_frag: true, ident: 0, ..ipv4::Repr::new(SRC, DST, Protocol::Tcp, 20, 64) };
    let mut frame = [0u8; 54];
    frame[12..14].copy_from_slice(&u16::from(EtherType::Ipv4).to_be_bytes());
    let n: u32 = 20_000_000;
    let start = Instant::now();
    let mut check = 0u64;
    for i in 0..n {
        let ack = tcp::Repr {
            ack_number: Some(tcp::SeqNumber(i as i32)),
            ..tcp::Repr::new(43210, 80, tcp::Control::None, tcp::SeqNumber(i as i32 ^ 0x55), 502)
        };
        ip.emit(&mut ipv4::Packet::new_unchecked(&mut frame[14..34]));
        ack.emit(&mut tcp::Packet::new_unchecked(&mut frame[34..54]), &SRC, &DST, |_| ());
        let frame = std::hint::black_box(&frame);
        assert_eq!(u16::from_be_bytes([frame[12], frame[13]]), 0x0800);
        let p = ipv4::Packet::new_checked(&frame[14..]).unwrap();
        let ip_back = ipv4::Repr::parse(&p).unwrap();
        let t = tcp::Packet::new_checked(p.payload()).unwrap();
        let back = tcp::Repr::parse(&t, &ip_back.src_addr, &ip_back.dst_addr).unwrap();
        check = check.wrapping_add(u64::from(back.ack_number.unwrap().as_u32()));
    }
    let secs = start.elapsed().as_secs_f64();
    let rate = f64::from(n) / secs;
    println!("Ethernet+IPv4+TCP ACK encode+decode: {rate:.0}/s ({:.1} ns each, check {check})", 1e9 / rate);
    assert!(rate > 5e6, "{rate:.0}/s below 5 million/s");
}
