//! crates/wire/src/rfc2684.rs: multiprotocol encapsulation over AAL5 (RFC 2684).
#![no_main]
use libfuzzer_sys::fuzz_target;
use wire::rfc2684::{self, Encapsulation, Packet, Repr};

fuzz_target!(|data: &[u8]| {
    if let Ok(packet) = Packet::new_checked(data) {
        if let Ok(repr) = Repr::parse(&packet) {
            let mut buf = data.to_vec();
            repr.emit(&mut Packet::new_unchecked(&mut buf[..]));
            assert_eq!(Repr::parse(&Packet::new_checked(&buf[..]).unwrap()), Ok(repr));
        }
    }
    for encapsulation in Encapsulation::ALL {
        if let Ok(repr) = Repr::parse_sdu(encapsulation, data) {
            // RFC 2684 §5: an LLC-encapsulated VC carries routed and bridged PDUs alike,
            // the header says which; a VC-multiplexed one carries only its own (§6).
            if encapsulation.is_llc() {
                assert!(repr.encapsulation().is_llc());
            } else {
                assert_eq!(repr.encapsulation(), encapsulation);
            }
        }
        let _ = rfc2684::decapsulate(encapsulation, data);
    }
});
