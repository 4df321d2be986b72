//! crates/sim: the configuration decoder and checks, exactly as crates/py's
//! `validate` calls them (the JSON Python sends, decoded, then the world built without
//! running it). Must return an error, never panic, and finish.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(config) = serde_json::from_str::<sim::config::SimConfig>(text) {
        let _ = sim::validate(config);
    }
});
