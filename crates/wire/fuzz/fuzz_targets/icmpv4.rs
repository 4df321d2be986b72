//! crates/wire/src/icmpv4.rs: ICMP echo and error messages (RFC 792, RFC 1191).
#![no_main]
use libfuzzer_sys::fuzz_target;
use wire::icmpv4::{self, Packet, Repr};

fuzz_target!(|data: &[u8]| {
    if let Ok(packet) = Packet::new_checked(data) {
        if let Ok(repr) = Repr::parse(&packet) {
            let mut buf = vec![0u8; repr.buffer_len()];
            repr.emit(&mut Packet::new_unchecked(&mut buf[..]));
            let again = Repr::parse(&Packet::new_checked(&buf[..]).expect("emitted message checks"))
                .expect("emitted message parses");
            assert_eq!(repr, again);
        }
    }
    let _ = icmpv4::quote(data);
    let _ = icmpv4::quote_up_to(data, 20, 576);
});
