//! crates/wire/src/ppp.rs: the PPP protocol field (RFC 1661 §2), LCP/IPCP control
//! packets and options (§5, §6), CHAP (RFC 1994).
#![no_main]
use libfuzzer_sys::fuzz_target;
use wire::ppp::{self, ChapRepr, ControlPacket, ControlRepr, Frame, LcpOption, Repr};

fuzz_target!(|data: &[u8]| {
    if let Ok(frame) = Frame::new_checked(data) {
        if let Ok(repr) = Repr::parse(&frame) {
            let payload = frame.payload();
            let mut out = Vec::new();
            repr.encapsulate(payload, &mut out);
            let again = Frame::new_checked(&out[..]).expect("emitted frame checks");
            assert_eq!(Repr::parse(&again), Ok(repr));
            assert_eq!(again.payload(), payload);
        }
    }
    let _ = ppp::parse_protocol(data);
    if let Ok(packet) = ControlPacket::new_checked(data) {
        if let Ok(repr) = ControlRepr::parse(&packet) {
            let mut buf = vec![0u8; repr.buffer_len()];
            repr.emit(&mut ControlPacket::new_unchecked(&mut buf[..]));
            assert_eq!(ControlRepr::parse(&ControlPacket::new_checked(&buf[..]).unwrap()), Ok(repr));
            for option in repr.lcp_options().flatten() {
                let mut b = vec![0u8; option.buffer_len()];
                assert_eq!(option.emit(&mut b), b.len());
                assert_eq!(LcpOption::parse(&b).map(|(o, _)| o), Ok(option));
            }
        }
        if let Ok(repr) = ChapRepr::parse(&packet) {
            let mut buf = vec![0u8; repr.buffer_len()];
            repr.emit(&mut ControlPacket::new_unchecked(&mut buf[..]));
            assert_eq!(ChapRepr::parse(&ControlPacket::new_checked(&buf[..]).unwrap()), Ok(repr));
        }
    }
    let _ = LcpOption::parse(data);
});
