//! crates/wire/src/cslip/: Van Jacobson TCP/IP header compression (RFC 1144).
#![no_main]
use libfuzzer_sys::fuzz_target;
use wire::cslip::{self, Compressor, Decompressor, Packet, PacketType, Repr};
use wire::ipv4;

fuzz_target!(|data: &[u8]| {
    if let Ok(packet) = Packet::new_checked(data) {
        if let Ok(repr) = Repr::parse(&packet) {
            let mut buf = vec![0u8; repr.buffer_len()];
            repr.emit(&mut Packet::new_unchecked(&mut buf[..]));
            let again = Repr::parse(&Packet::new_checked(&buf[..]).expect("emitted header checks"))
                .expect("emitted header parses");
            assert_eq!(repr, again);
        }
    }
    let mut marked = data.to_vec();
    let _ = cslip::slip_unmark(&mut marked);
    // A received stream: records of [kind, length, bytes...] fed to a decompressor.
    let mut decompressor = Decompressor::new(16);
    let mut rest = data;
    while rest.len() >= 2 {
        let kind = match rest[0] % 3 {
            0 => PacketType::Ip,
            1 => PacketType::UncompressedTcp,
            _ => PacketType::CompressedTcp,
        };
        let len = usize::from(rest[1]).min(rest.len() - 2);
        let mut out = Vec::new();
        let _ = decompressor.decompress(kind, &rest[2..2 + len], &mut out);
        rest = &rest[2 + len..];
    }
    // The same bytes as datagrams through a compressor and a decompressor: RFC 1144's
    // promise is that the decompressor rebuilds each datagram exactly. Only datagrams
    // whose IPv4 header checks are compared (the decompressor recomputes the IP
    // checksum, RFC 1144 §4.2).
    let mut compressor = Compressor::new(4);
    let mut decompressor = Decompressor::new(4);
    let mut rest = data;
    while rest.len() >= 2 {
        let len = usize::from(u16::from_be_bytes([rest[0], rest[1]])).min(rest.len() - 2);
        let datagram = &rest[2..2 + len];
        rest = &rest[2 + len..];
        let mut line = Vec::new();
        let kind = compressor.compress(datagram, &mut line);
        let mut out = Vec::new();
        let received = decompressor.decompress(kind, &line, &mut out);
        let checks = ipv4::Packet::new_checked(datagram).is_ok_and(|p| ipv4::Repr::parse(&p).is_ok());
        if checks && kind != PacketType::Ip {
            assert!(received.is_ok(), "{kind:?} {received:?}");
            assert_eq!(out, datagram, "{kind:?}");
        }
    }
});
