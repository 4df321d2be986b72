//! crates/wire/src/atm.rs: ATM cell headers and the HEC (ITU-T I.361, I.432.1).
#![no_main]
use libfuzzer_sys::fuzz_target;
use wire::atm::{self, Cell, Format, HecReceiver, Repr, HEADER_LEN};

fuzz_target!(|data: &[u8]| {
    if let Ok(cell) = Cell::new_checked(data) {
        for format in [Format::Uni, Format::Nni] {
            if let Ok(repr) = Repr::parse(&cell, format) {
                let mut buf = data.to_vec();
                repr.emit(&mut Cell::new_unchecked(&mut buf[..]));
                assert_eq!(Repr::parse(&Cell::new_checked(&buf[..]).unwrap(), format), Ok(repr));
            }
        }
    }
    let mut receiver = HecReceiver::new();
    for chunk in data.chunks_exact(HEADER_LEN) {
        let mut header: [u8; HEADER_LEN] = chunk.try_into().unwrap();
        let _ = atm::check_hec(&header);
        let _ = receiver.receive(&mut header);
        let mut h = header;
        let _ = atm::correct_header(&mut h);
    }
});
