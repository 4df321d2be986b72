//! crates/wire/src/mschapv2.rs: the MS-CHAPv2 Response value and Success/Failure
//! messages (RFC 2759).
#![no_main]
use libfuzzer_sys::fuzz_target;
use wire::mschapv2::{self, ResponseRepr};

fuzz_target!(|data: &[u8]| {
    if let Ok(repr) = ResponseRepr::parse(data) {
        assert_eq!(ResponseRepr::parse(&repr.emit()), Ok(repr));
    }
    let _ = mschapv2::success_auth_string(data);
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = mschapv2::nt_password_hash(text);
        let _ = mschapv2::success_message(text, text);
    }
});
