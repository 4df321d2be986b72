//! crates/wire/src/nhrp.rs: NHRP resolution requests and replies (RFC 2332).
#![no_main]
use libfuzzer_sys::fuzz_target;
use wire::nhrp::Repr;

fuzz_target!(|data: &[u8]| {
    if let Ok(repr) = Repr::parse(data) {
        let bytes = repr.to_bytes();
        assert_eq!(bytes.len(), repr.buffer_len());
        assert_eq!(Repr::parse(&bytes), Ok(repr));
    }
});
