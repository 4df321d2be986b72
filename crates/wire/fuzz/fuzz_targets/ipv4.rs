//! crates/wire/src/ipv4/: the IPv4 header and its options (RFC 791), fragmentation.
#![no_main]
use libfuzzer_sys::fuzz_target;
use wire::ipv4::{self, Ipv4Option, Packet, Repr};

fuzz_target!(|data: &[u8]| {
    if let Ok(packet) = Packet::new_checked(data) {
        if let Ok(repr) = Repr::parse(&packet) {
            // Header and payload as they were, then the header written from the Repr.
            let mut buf = vec![0u8; repr.buffer_len()];
            let payload = &data[packet.header_len()..repr.buffer_len()];
            buf[repr.header_len()..].copy_from_slice(payload);
            repr.emit(&mut Packet::new_unchecked(&mut buf[..]));
            let again = Repr::parse(&Packet::new_checked(&buf[..]).expect("emitted packet checks"))
                .expect("emitted packet parses");
            assert_eq!(repr, again);
            // Fragment to a small MTU: every fragment parses, and they carry the payload.
            let mtu = 68 + usize::from(data[0] & 0x3f) * 8;
            let mut carried = 0;
            if ipv4::fragment(&data[..repr.buffer_len()], mtu, |f| {
                let p = Packet::new_checked(f).expect("fragment checks");
                let r = Repr::parse(&p).expect("fragment parses");
                assert!(r.buffer_len() <= mtu.max(repr.header_len() + 8));
                carried += r.payload_len;
            })
            .is_ok()
            {
                assert_eq!(carried, repr.payload_len);
            }
        }
        let _ = Repr::parse_truncated(&packet);
    }
    let mut rest = data;
    while let Ok((option, next)) = Ipv4Option::parse(rest) {
        let mut buf = vec![0u8; option.buffer_len()];
        option.emit(&mut buf);
        assert_eq!(Ipv4Option::parse(&buf).map(|(o, _)| o), Ok(option));
        if next.len() >= rest.len() {
            break;
        }
        rest = next;
    }
});
