//! crates/wire/src/gre.rs: GRE (RFC 2784, 2890) and PPTP's enhanced GRE (RFC 2637 §4.1).
#![no_main]
use libfuzzer_sys::fuzz_target;
use wire::gre::{Packet, Repr};

fuzz_target!(|data: &[u8]| {
    if let Ok(packet) = Packet::new_checked(data) {
        if let Ok(repr) = Repr::parse(&packet) {
            let payload = packet.payload();
            let mut buf = vec![0u8; repr.buffer_len(payload.len())];
            buf[repr.header_len()..].copy_from_slice(payload);
            repr.emit(&mut Packet::new_unchecked(&mut buf[..]));
            let again = Packet::new_checked(&buf[..]).expect("emitted header checks");
            assert_eq!(Repr::parse(&again), Ok(repr));
            assert_eq!(again.payload(), payload);
        }
    }
});
