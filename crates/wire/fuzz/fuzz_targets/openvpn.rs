//! crates/wire/src/openvpn/: the OpenVPN packet header, the TCP length prefix, the
//! fragment header, and opening arbitrary data-channel packets under every cipher.
#![no_main]
use libfuzzer_sys::fuzz_target;
use wire::openvpn::{self, Auth, Cipher, DataChannel, FragmentHeader, Packet, Repr};

fuzz_target!(|data: &[u8]| {
    if let Ok(packet) = Packet::new_checked(data) {
        if let Ok(repr) = Repr::parse(&packet) {
            let payload = packet.payload();
            let mut buf = vec![0u8; repr.buffer_len(payload.len())];
            buf[repr.header_len()..].copy_from_slice(payload);
            repr.emit(&mut Packet::new_unchecked(&mut buf[..]));
            let again = Packet::new_checked(&buf[..]).expect("emitted header checks");
            assert_eq!(Repr::parse(&again), Ok(repr));
        }
    }
    if let Ok((packet, used)) = openvpn::parse_tcp(data) {
        let mut out = Vec::new();
        openvpn::encapsulate_tcp(packet, &mut out);
        assert_eq!(openvpn::parse_tcp(&out), Ok((packet, used)));
    }
    if let Ok(header) = FragmentHeader::parse(data) {
        let mut buf = [0u8; 4];
        header.emit(&mut buf);
        assert_eq!(FragmentHeader::parse(&buf), Ok(header));
    }
    let Some((&choice, rest)) = data.split_first() else { return };
    let ciphers =
        [Cipher::None, Cipher::BfCbc, Cipher::Aes128Cbc, Cipher::Aes256Cbc, Cipher::Aes128Gcm, Cipher::Aes256Gcm];
    let auths = [Auth::None, Auth::Sha1, Auth::Sha256, Auth::Sha512];
    let mut channel =
        DataChannel::new(ciphers[usize::from(choice) % ciphers.len()], auths[usize::from(choice / 8) % auths.len()]);
    channel.fragment = choice & 0x40 != 0;
    channel.replay = choice & 0x80 != 0;
    let _ = channel.decapsulate(rest);
    // What the channel seals, it opens again.
    let iv = vec![0x44; channel.iv_len()];
    let mut sealed = Vec::new();
    channel.encapsulate(7, &iv, rest, &mut sealed);
    let opened = channel.decapsulate(&sealed).expect("a sealed packet opens");
    assert_eq!(opened.payload, rest);
});
