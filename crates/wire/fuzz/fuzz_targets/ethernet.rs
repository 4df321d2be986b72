//! crates/wire/src/ethernet.rs: Ethernet II, IEEE 802.3 length frames, 802.1Q tags, FCS.
#![no_main]
use libfuzzer_sys::fuzz_target;
use wire::ethernet::{self, Frame, Ieee8023Repr, Repr, VlanRepr};

fuzz_target!(|data: &[u8]| {
    if let Ok(frame) = Frame::new_checked(data) {
        if let Ok(repr) = Repr::parse(&frame) {
            let mut buf = vec![0u8; repr.buffer_len()];
            repr.emit(&mut Frame::new_unchecked(&mut buf[..]));
            let again = Repr::parse(&Frame::new_checked(&buf[..]).expect("emitted header checks"))
                .expect("emitted header parses");
            assert_eq!(repr, again);
        }
        if let Ok(repr) = Ieee8023Repr::parse(&frame) {
            let mut buf = data.to_vec();
            buf.resize(buf.len().max(repr.buffer_len()), 0);
            repr.emit(&mut Frame::new_unchecked(&mut buf[..]));
            let again = Ieee8023Repr::parse(&Frame::new_checked(&buf[..]).expect("emitted frame checks"))
                .expect("emitted frame parses");
            assert_eq!(repr, again);
        }
    }
    if let Ok(tag) = VlanRepr::parse(data) {
        let mut buf = vec![0u8; tag.buffer_len()];
        tag.emit(&mut buf);
        assert_eq!(VlanRepr::parse(&buf), Ok(tag));
    }
    let _ = ethernet::check_fcs(data);
    let _ = ethernet::decapsulate(data, true);
    let _ = ethernet::decapsulate(data, false);
});
