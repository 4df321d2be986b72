//! crates/wire/src/lane.rs: LAN Emulation data frames and control frames (ATM Forum
//! af-lane-0021.000 / 0084.000).
#![no_main]
use libfuzzer_sys::fuzz_target;
use wire::lane::{self, ControlFrame, ControlRepr, DataFrame, DataRepr};

fuzz_target!(|data: &[u8]| {
    if let Ok(frame) = DataFrame::new_checked(data) {
        if let Ok(repr) = DataRepr::parse(&frame) {
            let mut buf = data.to_vec();
            repr.emit(&mut DataFrame::new_unchecked(&mut buf[..]));
            assert_eq!(DataRepr::parse(&DataFrame::new_checked(&buf[..]).unwrap()), Ok(repr));
        }
    }
    let _ = lane::decapsulate(data);
    let _ = lane::is_control(data);
    if let Ok(frame) = ControlFrame::new_checked(data) {
        if let Ok(repr) = ControlRepr::parse(&frame) {
            let mut buf = vec![0u8; repr.buffer_len()];
            repr.emit(&mut ControlFrame::new_unchecked(&mut buf[..]));
            let again = ControlFrame::new_checked(&buf[..]).expect("emitted control frame checks");
            assert_eq!(ControlRepr::parse(&again), Ok(repr));
            let _ = repr.elan_name();
        }
    }
});
