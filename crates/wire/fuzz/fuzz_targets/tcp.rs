//! crates/wire/src/tcp/: the TCP header and options (RFC 9293, 7323, 2018).
#![no_main]
use libfuzzer_sys::fuzz_target;
use wire::ipv4::Address;
use wire::tcp::{Packet, Repr, TcpOption};

const SRC: Address = Address::new(192, 0, 2, 1);
const DST: Address = Address::new(192, 0, 2, 2);

fuzz_target!(|data: &[u8]| {
    if let Ok(packet) = Packet::new_checked(data) {
        if let Ok(repr) = Repr::parse(&packet, &SRC, &DST) {
            let payload = &data[packet.header_len()..];
            let mut buf = vec![0u8; repr.buffer_len()];
            repr.emit(&mut Packet::new_unchecked(&mut buf[..]), &SRC, &DST, |p| p.copy_from_slice(&payload[..p.len()]));
            let again = Repr::parse(&Packet::new_checked(&buf[..]).expect("emitted segment checks"), &SRC, &DST)
                .expect("emitted segment parses");
            assert_eq!(repr, again);
        }
    }
    let mut rest = data;
    while let Ok((next, option)) = TcpOption::parse(rest) {
        let mut buf = vec![0u8; option.buffer_len()];
        option.emit(&mut buf);
        assert_eq!(TcpOption::parse(&buf).map(|(_, o)| o), Ok(option));
        if next.len() >= rest.len() {
            break;
        }
        rest = next;
    }
});
