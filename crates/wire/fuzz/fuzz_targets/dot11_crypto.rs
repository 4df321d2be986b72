//! crates/wire/src/dot11_crypto.rs, the receive side: WEP, TKIP and CCMP headers
//! (IEEE 802.11-2020 §12.5), WEP and CCMP decapsulation of arbitrary bodies.
#![no_main]
use libfuzzer_sys::fuzz_target;
use wire::dot11_crypto::{self, CcmpHeader, CcmpRepr, TkipHeader, TkipRepr, WepFrame, WepRepr, CCMP_TK_LEN};

fuzz_target!(|data: &[u8]| {
    if let Ok(frame) = WepFrame::new_checked(data) {
        if let Ok(repr) = WepRepr::parse(&frame) {
            let mut buf = data.to_vec();
            repr.emit(&mut WepFrame::new_unchecked(&mut buf[..]));
            assert_eq!(WepRepr::parse(&WepFrame::new_checked(&buf[..]).unwrap()), Ok(repr));
        }
    }
    if let Ok(header) = TkipHeader::new_checked(data) {
        if let Ok(repr) = TkipRepr::parse(&header) {
            let mut buf = data.to_vec();
            repr.emit(&mut TkipHeader::new_unchecked(&mut buf[..]));
            assert_eq!(TkipRepr::parse(&TkipHeader::new_checked(&buf[..]).unwrap()), Ok(repr));
        }
    }
    if let Ok(header) = CcmpHeader::new_checked(data) {
        if let Ok(repr) = CcmpRepr::parse(&header) {
            let mut buf = data.to_vec();
            repr.emit(&mut CcmpHeader::new_unchecked(&mut buf[..]));
            assert_eq!(CcmpRepr::parse(&CcmpHeader::new_checked(&buf[..]).unwrap()), Ok(repr));
        }
    }
    // The first octet splits the input into a MAC header and a body.
    if let Some((&split, rest)) = data.split_first() {
        let split = usize::from(split).min(rest.len());
        let (mac_header, body) = rest.split_at(split);
        let mut out = Vec::new();
        let _ = dot11_crypto::wep_decapsulate(&[1, 2, 3, 4, 5], body, &mut out);
        let _ = dot11_crypto::wep_decapsulate(&[7; 13], body, &mut out);
        let _ = dot11_crypto::ccmp_decapsulate(&[9; CCMP_TK_LEN], mac_header, body, &mut out);
        let _ = dot11_crypto::ccmp_aad(mac_header);
        let _ = dot11_crypto::ccmp_nonce(mac_header, 0x0000_ffff_ffff_ffff);
    }
});
