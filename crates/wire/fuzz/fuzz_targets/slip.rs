//! crates/wire/src/slip.rs: SLIP framing (RFC 1055), one frame and a byte stream.
#![no_main]
use libfuzzer_sys::fuzz_target;
use wire::slip::{self, BadEscape, Decoder, Framing};

fuzz_target!(|data: &[u8]| {
    let _ = slip::decapsulate(data);
    let mut decoder = Decoder::new(1006);
    let _ = decoder.decode(data);
    let mut keep = Decoder::new(64).with_policy(BadEscape::Keep);
    for &b in data {
        let _ = keep.push(b);
    }
    // Any payload survives encoding and decoding.
    if !data.is_empty() {
        for framing in [Framing::new(false), Framing::new(true)] {
            let mut out = Vec::new();
            framing.encapsulate(data, &mut out);
            assert_eq!(out.len(), framing.encoded_len(data));
            assert_eq!(slip::decapsulate(&out).as_deref(), Ok(data));
            let mut d = Decoder::new(data.len());
            assert_eq!(d.decode(&out), vec![Ok(data.to_vec())]);
        }
    }
});
