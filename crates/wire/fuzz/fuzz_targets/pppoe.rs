//! crates/wire/src/pppoe.rs: PPPoE discovery and session packets (RFC 2516).
#![no_main]
use libfuzzer_sys::fuzz_target;
use wire::pppoe::{DiscoveryRepr, Packet, Repr, SessionRepr, Tag};

fuzz_target!(|data: &[u8]| {
    if let Ok(packet) = Packet::new_checked(data) {
        if let Ok(repr) = Repr::parse(&packet) {
            let mut buf = vec![0u8; repr.buffer_len()];
            buf[repr.header_len()..].copy_from_slice(packet.payload());
            repr.emit(&mut Packet::new_unchecked(&mut buf[..]));
            assert_eq!(Repr::parse(&Packet::new_checked(&buf[..]).expect("emitted packet checks")), Ok(repr));
        }
        if let Ok(repr) = DiscoveryRepr::parse(&packet) {
            let mut buf = vec![0u8; repr.buffer_len()];
            repr.emit(&mut Packet::new_unchecked(&mut buf[..]));
            let again = Packet::new_checked(&buf[..]).expect("emitted discovery packet checks");
            assert_eq!(DiscoveryRepr::parse(&again), Ok(repr));
        }
        if let Ok(repr) = SessionRepr::parse(&packet) {
            let mut out = Vec::new();
            repr.encapsulate(&packet.payload()[2..], &mut out);
            let again = Packet::new_checked(&out[..]).expect("emitted session packet checks");
            assert_eq!(SessionRepr::parse(&again), Ok(repr));
        }
    }
    if let Ok((tag, len)) = Tag::parse(data) {
        let mut buf = vec![0u8; tag.buffer_len()];
        assert_eq!(tag.emit(&mut buf), len);
        assert_eq!(Tag::parse(&buf), Ok((tag, len)));
    }
});
