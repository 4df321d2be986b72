//! crates/wire/src/arp.rs: ARP over Ethernet (RFC 826).
#![no_main]
use libfuzzer_sys::fuzz_target;
use wire::arp::{Packet, Repr};

fuzz_target!(|data: &[u8]| {
    if let Ok(packet) = Packet::new_checked(data) {
        if let Ok(repr) = Repr::parse(&packet) {
            let mut buf = vec![0u8; repr.buffer_len()];
            repr.emit(&mut Packet::new_unchecked(&mut buf[..]));
            let again = Repr::parse(&Packet::new_checked(&buf[..]).expect("emitted packet checks"))
                .expect("emitted packet parses");
            assert_eq!(repr, again);
        }
    }
});
