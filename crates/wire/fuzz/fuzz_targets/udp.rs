//! crates/wire/src/udp.rs: the UDP header (RFC 768).
#![no_main]
use libfuzzer_sys::fuzz_target;
use wire::ipv4::Address;
use wire::udp::{Packet, Repr};

const SRC: Address = Address::new(192, 0, 2, 1);
const DST: Address = Address::new(192, 0, 2, 2);

fuzz_target!(|data: &[u8]| {
    if let Ok(packet) = Packet::new_checked(data) {
        if let Ok(repr) = Repr::parse(&packet, &SRC, &DST) {
            let payload = packet.payload();
            let mut out = Vec::new();
            repr.encapsulate(&SRC, &DST, payload, &mut out);
            let again_packet = Packet::new_checked(&out[..]).expect("emitted datagram checks");
            let again = Repr::parse(&again_packet, &SRC, &DST).expect("emitted datagram parses");
            assert_eq!(repr, again);
            assert_eq!(again_packet.payload(), payload);
        }
    }
});
