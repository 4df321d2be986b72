//! crates/wire/src/esp.rs, ah.rs and ipsec.rs: ESP (RFC 4303) and AH (RFC 4302)
//! headers, and opening, verifying and stripping arbitrary packets under every
//! cipher and integrity algorithm; sealing then opening gives the payload back.
#![no_main]
use libfuzzer_sys::fuzz_target;
use wire::ipsec::{Auth, Cipher, Mode, SecurityAssociation};
use wire::{ah, esp, IpProtocol};

fuzz_target!(|data: &[u8]| {
    if let Ok(packet) = esp::Packet::new_checked(data) {
        if let Ok(repr) = esp::Repr::parse(&packet) {
            let mut buf = vec![0u8; repr.buffer_len()];
            repr.emit(&mut esp::Packet::new_unchecked(&mut buf[..]));
            assert_eq!(esp::Repr::parse(&esp::Packet::new_checked(&buf[..]).unwrap()), Ok(repr));
        }
    }
    if let Ok(packet) = ah::Packet::new_checked(data) {
        if let Ok(repr) = ah::Repr::parse(&packet) {
            let mut buf = vec![0u8; repr.buffer_len()];
            repr.emit(&mut ah::Packet::new_unchecked(&mut buf[..]));
            let again = ah::Repr::parse(&ah::Packet::new_checked(&buf[..]).expect("emitted AH checks"))
                .expect("emitted AH parses");
            assert_eq!(again, repr);
        }
    }
    let Some((&choice, rest)) = data.split_first() else { return };
    let cipher = Cipher::ALL[usize::from(choice) % Cipher::ALL.len()];
    let auth = Auth::ALL[usize::from(choice / 8) % Auth::ALL.len()];
    let mode = if choice & 0x80 != 0 { Mode::Tunnel } else { Mode::Transport };
    let Ok(sa) = SecurityAssociation::new(
        0x1000,
        cipher,
        auth,
        &vec![0x11; cipher.key_len()],
        &vec![0x22; auth.key_len()],
        mode,
    ) else {
        return;
    };
    let mut out = Vec::new();
    let _ = esp::open(&sa, rest);
    let _ = esp::decapsulate(&sa, rest, &mut out);
    let _ = ah::verify(&sa, rest);
    let _ = ah::strip(&sa, rest, &mut out);
    let iv = vec![0x33; sa.iv_len()];
    let mut sealed = Vec::new();
    if esp::seal(&sa, IpProtocol::Udp, rest, &iv, &mut sealed).is_ok() {
        assert_eq!(esp::open(&sa, &sealed), Ok((IpProtocol::Udp, rest.to_vec())));
    }
});
