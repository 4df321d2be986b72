//! crates/wire/src/atmarp.rs: ATMARP and InATMARP (RFC 2225).
#![no_main]
use libfuzzer_sys::fuzz_target;
use wire::atmarp::{Packet, Repr};

fuzz_target!(|data: &[u8]| {
    if let Ok(packet) = Packet::new_checked(data) {
        let _ = packet.addresses();
        if let Ok(repr) = Repr::parse(&packet) {
            let mut buf = vec![0u8; repr.buffer_len()];
            repr.emit(&mut buf);
            let again = Packet::new_checked(&buf[..]).expect("emitted packet checks");
            assert_eq!(Repr::parse(&again), Ok(repr));
        }
    }
});
