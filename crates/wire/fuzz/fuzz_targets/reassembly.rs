//! crates/wire/src/reassembly.rs: IPv4 reassembly (RFC 791 §3.2, RFC 815) of an
//! arbitrary sequence of packets, under both overlap policies; fragmenting a datagram
//! and reassembling its fragments in any order gives it back.
#![no_main]
use libfuzzer_sys::fuzz_target;
use wire::ipv4;
use wire::reassembly::{Config, OverlapPolicy, Reassembler};

fuzz_target!(|data: &[u8]| {
    for overlap in [OverlapPolicy::Overwrite, OverlapPolicy::DropDatagram] {
        let config = Config { max_datagrams: 4, max_bytes: 16 * 1024, overlap, ..Config::default() };
        let mut reassembler = Reassembler::new(config);
        // Records: [time step, length hi, length lo, bytes...].
        let mut now = 0u64;
        let mut rest = data;
        while rest.len() >= 3 {
            now += u64::from(rest[0]) * 1_000_000_000;
            let len = usize::from(u16::from_be_bytes([rest[1], rest[2]])).min(rest.len() - 3);
            let _ = reassembler.process(now, &rest[3..3 + len]);
            let _ = reassembler.expire(now);
            let _ = reassembler.poll_at();
            rest = &rest[3 + len..];
        }
        assert!(reassembler.len() <= config.max_datagrams);
    }
    // A whole datagram, fragmented and fed back in reverse order, comes back whole.
    if let Ok(packet) = ipv4::Packet::new_checked(data) {
        if let Ok(repr) = ipv4::Repr::parse(&packet) {
            if repr.more_frags || repr.frag_offset != 0 {
                return;
            }
            let whole = &data[..repr.buffer_len()];
            let mut fragments = Vec::new();
            if ipv4::fragment(whole, 68 + usize::from(data[1] & 0x7f) * 8, |f| fragments.push(f.to_vec())).is_ok() {
                let mut reassembler = Reassembler::new(Config::default());
                let mut got = None;
                for f in fragments.iter().rev() {
                    if let Some(d) = reassembler.process(0, f).expect("a fragment of a good datagram is accepted") {
                        got = Some(d);
                    }
                }
                let got = got.expect("the datagram is reassembled");
                let back = ipv4::Repr::parse(&ipv4::Packet::new_checked(&got[..]).unwrap()).unwrap();
                assert_eq!(back.payload_len, repr.payload_len);
                assert_eq!(&got[back.header_len()..], &whole[repr.header_len()..]);
            }
        }
    }
});
