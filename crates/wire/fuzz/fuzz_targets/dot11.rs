//! crates/wire/src/dot11/: IEEE 802.11 data and control frame headers, FCS.
#![no_main]
use libfuzzer_sys::fuzz_target;
use wire::dot11::{self, Frame, Repr};

fuzz_target!(|data: &[u8]| {
    if let Ok(frame) = Frame::new_checked(data) {
        if let Ok(repr) = Repr::parse(&frame) {
            let mut buf = vec![0u8; repr.buffer_len()];
            repr.emit(&mut Frame::new_unchecked(&mut buf[..]));
            let again = Repr::parse(&Frame::new_checked(&buf[..]).expect("emitted header checks"))
                .expect("emitted header parses");
            assert_eq!(repr, again);
        }
    }
    let _ = dot11::check_fcs(data);
    let _ = dot11::decapsulate(data);
});
