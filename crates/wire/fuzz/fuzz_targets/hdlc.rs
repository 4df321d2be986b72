//! crates/wire/src/hdlc.rs: PPP in HDLC-like framing (RFC 1662): a de-stuffed frame,
//! octet stuffing, and a received byte stream.
#![no_main]
use libfuzzer_sys::fuzz_target;
use wire::hdlc::{self, Config, Fcs, Frame, Repr, DEFAULT_ACCM};

fuzz_target!(|data: &[u8]| {
    for fcs in [Fcs::Fcs16, Fcs::Fcs32] {
        if let Ok(frame) = Frame::new_checked(data).map(|f| Frame::with_fcs(f.into_inner(), fcs)) {
            if frame.check_len().is_ok() {
                if let Ok(repr) = Repr::parse(&frame) {
                    let ppp = frame.ppp();
                    let mut buf = vec![0u8; repr.buffer_len(ppp.len())];
                    let h = repr.header_len();
                    buf[h..h + ppp.len()].copy_from_slice(ppp);
                    repr.emit(&mut Frame::with_fcs(&mut buf[..], fcs));
                    let again = Frame::with_fcs(&buf[..], fcs);
                    assert_eq!(Repr::parse(&again), Ok(repr));
                    assert_eq!(again.ppp(), ppp);
                }
            }
        }
        // Any PPP frame survives framing and de-framing, whatever ACCM and ACFC.
        let accm = if data.first().is_some_and(|b| b & 1 == 1) { 0 } else { DEFAULT_ACCM };
        let config = Config { accm, acfc: data.get(1).is_some_and(|b| b & 1 == 1), fcs };
        let mut line = Vec::new();
        config.encapsulate(data, &mut line);
        assert_eq!(line.len(), config.wire_len(data));
        let decoded = config.decode_stream(&line);
        // Only a PPP frame with a valid protocol field (RFC 1661 §2: two octets, the first
        // even and the second odd; PFC's one octet is odd, 0xff reserved) is sure to come
        // back: under ACFC a receiver reads a leading ff as the address (§6.6), so a frame
        // starting ff 03 loses them, and one starting ff and anything else is discarded
        // (RFC 1662 §3.1: unrecognised control).
        let valid_protocol = match data {
            [first, second, ..] if first & 1 == 0 => second & 1 == 1,
            [first, ..] => first & 1 == 1 && *first != 0xff,
            [] => false,
        };
        if valid_protocol && (data.len() >= 2 || !config.repr_for(data).acfc) {
            assert_eq!(decoded, vec![Ok(data.to_vec())], "{config:?}");
        }
        let _ = config.decode_stream(data);
    }
    let mut stuffed = Vec::new();
    hdlc::stuff(data, DEFAULT_ACCM, &mut stuffed);
    assert_eq!(stuffed.len(), hdlc::stuffed_len(data, DEFAULT_ACCM));
    assert_eq!(hdlc::unstuff(&stuffed, DEFAULT_ACCM).as_deref(), Ok(data));
    let _ = hdlc::unstuff(data, 0);
});
