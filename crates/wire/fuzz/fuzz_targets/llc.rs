//! crates/wire/src/llc.rs: IEEE 802.2 LLC and SNAP headers.
#![no_main]
use libfuzzer_sys::fuzz_target;
use wire::llc::{Control, Packet, Repr};

fuzz_target!(|data: &[u8]| {
    if let Ok(packet) = Packet::new_checked(data) {
        if let Ok(repr) = Repr::parse(&packet) {
            let mut buf = vec![0u8; repr.header_len()];
            repr.emit(&mut Packet::new_unchecked(&mut buf[..]));
            let again = Repr::parse(&Packet::new_checked(&buf[..]).expect("emitted header checks"))
                .expect("emitted header parses");
            assert_eq!(repr, again);
        }
    }
    if let Ok(control) = Control::parse(data) {
        let mut buf = vec![0u8; control.len()];
        control.emit(&mut buf);
        assert_eq!(Control::parse(&buf), Ok(control));
    }
});
