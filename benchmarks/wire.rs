//! crates/wire: encode plus decode of a full-size TCP/IPv4/Ethernet frame and of a bare
//! 40-byte TCP acknowledgement, on one core.
//!
//! Encode: Ethernet, IPv4 and TCP headers emitted into a reused buffer with both
//! checksums computed. Decode: the checked views opened and every `Repr` parsed, which
//! verifies both checksums again. The payload bytes are written once, outside the loop,
//! as a NIC's DMA would have them in place.
//!
//! Run: `cargo bench -p qoslab-benchmarks --bench wire` (target: 5 million ACKs per second).

use std::hint::black_box;
use std::time::Duration;

use qoslab_benchmarks::measure;
use wire::ethernet::{self, Address as Mac, EtherType};
use wire::ipv4::{self, Address};
use wire::tcp::{self, Control, SeqNumber};
use wire::IpProtocol;

const SRC: Address = Address::new(192, 0, 2, 1);
const DST: Address = Address::new(192, 0, 2, 2);

fn tcp_repr(payload_len: usize) -> tcp::Repr {
    tcp::Repr {
        src_port: 49152,
        dst_port: 5001,
        control: if payload_len > 0 { Control::Psh } else { Control::None },
        seq_number: SeqNumber(0x1234_5678),
        ack_number: Some(SeqNumber(0x0abc_def0)),
        window_len: 64240,
        window_scale: None,
        max_seg_size: None,
        sack_permitted: false,
        sack_ranges: [None; 3],
        timestamp: None,
        ece: false,
        cwr: false,
        other_options: tcp::OtherOptions::default(),
        payload_len,
    }
}

/// Encodes one frame into `frame` (already sized) and returns its length.
fn encode(frame: &mut [u8], tcp_repr: &tcp::Repr) -> usize {
    let eth = ethernet::Repr {
        src_addr: Mac([2, 0, 0, 0, 0, 1]),
        dst_addr: Mac([2, 0, 0, 0, 0, 2]),
        ethertype: EtherType::Ipv4,
    };
    let ip = ipv4::Repr::new(SRC, DST, IpProtocol::Tcp, tcp_repr.buffer_len(), 64);
    eth.emit(&mut ethernet::Frame::new_unchecked(&mut frame[..]));
    let ip_buf = &mut frame[ethernet::HEADER_LEN..];
    ip.emit(&mut ipv4::Packet::new_unchecked(&mut ip_buf[..]));
    let tcp_buf = &mut ip_buf[ip.header_len()..];
    tcp_repr.emit(&mut tcp::Packet::new_unchecked(&mut tcp_buf[..]), &SRC, &DST, |_| ());
    ethernet::HEADER_LEN + ip.buffer_len()
}

/// Parses and verifies a frame; returns the TCP payload length.
fn decode(frame: &[u8]) -> usize {
    let eth_frame = ethernet::Frame::new_checked(frame).expect("ethernet");
    let eth = ethernet::Repr::parse(&eth_frame).expect("ethernet repr");
    assert_eq!(eth.ethertype, EtherType::Ipv4);
    let ip_packet = ipv4::Packet::new_checked(eth_frame.payload()).expect("ipv4");
    let ip = ipv4::Repr::parse(&ip_packet).expect("ipv4 repr");
    let segment = tcp::Packet::new_checked(ip_packet.payload()).expect("tcp");
    tcp::Repr::parse(&segment, &ip.src_addr, &ip.dst_addr).expect("tcp repr").payload_len
}

fn bench(name: &'static str, payload_len: usize) {
    let repr = tcp_repr(payload_len);
    let mut frame = vec![0u8; ethernet::HEADER_LEN + ipv4::HEADER_LEN + repr.buffer_len()];
    for (i, byte) in frame.iter_mut().enumerate() {
        *byte = i as u8; // payload content that is not all zeros, for honest checksums
    }
    let len = encode(&mut frame, &repr);
    assert_eq!(decode(&frame[..len]), payload_len, "round trip");
    let m = measure(name, Duration::from_secs(2), || {
        let len = encode(black_box(&mut frame), black_box(&repr));
        black_box(decode(black_box(&frame[..len])));
    });
    eprintln!("{name}: {:.2} million encode+decode per second ({len}-byte frame)", m.per_second() / 1e6);
    println!("{}", m.json("frames"));
}

fn main() {
    bench("wire_tcp_ack_40", 0);
    bench("wire_tcp_full_1500", 1460);
}
