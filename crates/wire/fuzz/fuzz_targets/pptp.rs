//! crates/wire/src/pptp/: PPTP control messages (RFC 2637 §2) and the TCP stream
//! that carries them.
#![no_main]
use libfuzzer_sys::fuzz_target;
use wire::pptp::{self, Packet, Repr};

fuzz_target!(|data: &[u8]| {
    if let Ok(packet) = Packet::new_checked(data) {
        if let Ok(repr) = Repr::parse(&packet) {
            let mut out = Vec::new();
            repr.encode(&mut out);
            assert_eq!(Repr::parse(&Packet::new_checked(&out[..]).expect("emitted message checks")), Ok(repr));
        }
    }
    let mut rest = data;
    while let Ok(Some(len)) = pptp::next_message(rest) {
        let _ = Packet::new_checked(&rest[..len]).map(|p| Repr::parse(&p));
        rest = &rest[len..];
    }
});
