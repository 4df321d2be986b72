//! crates/wire/src/aal5.rs: AAL5 CPCS-PDUs (ITU-T I.363.5): trailer, decoding, and
//! reassembly from cell payloads.
#![no_main]
use libfuzzer_sys::fuzz_target;
use wire::aal5::{self, Pdu, Reassembler, Repr, Trailer};
use wire::atm::PAYLOAD_LEN;

fuzz_target!(|data: &[u8]| {
    if let Ok(pdu) = Pdu::new_checked(data) {
        if let Ok(repr) = Repr::parse(&pdu) {
            let mut buf = data.to_vec();
            buf.resize(repr.buffer_len(), 0);
            repr.emit(&mut Pdu::new_unchecked(&mut buf[..]));
            assert_eq!(Repr::parse(&Pdu::new_checked(&buf[..]).unwrap()), Ok(repr));
            assert_eq!(aal5::decode(&buf).map(<[u8]>::len), Ok(usize::from(repr.length)));
        }
    }
    let _ = Trailer::new_checked(data);
    let _ = aal5::decode_with_trailer(data);
    // Cell payloads, the last octet of each saying whether it ends the SDU.
    let mut reassembler = Reassembler::with_max_sdu_len(1 + usize::from(data.first().copied().unwrap_or(0)) * 64);
    for chunk in data.chunks(PAYLOAD_LEN + 1) {
        let (payload, end) = chunk.split_at(chunk.len().min(PAYLOAD_LEN));
        let _ = reassembler.push(payload, end.first().is_some_and(|b| b & 1 == 1));
    }
    // Any SDU survives encoding and decoding.
    if !data.is_empty() && data.len() <= 65_535 {
        let mut pdu = Vec::new();
        aal5::encode(data, 1, 0, &mut pdu).expect("an SDU of 1..=65,535 octets encodes");
        assert_eq!(aal5::decode(&pdu), Ok(data));
    }
});
