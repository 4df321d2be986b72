//! Transmission Control Protocol segments.
//!
//! Standards a reader must know:
//!
//! * RFC 9293 — the header (§3.1: ports, sequence and acknowledgment numbers, data
//!   offset, control bits, window, checksum over the pseudo-header, urgent pointer),
//!   the options EOL, NOP and MSS (§3.2), sequence-number arithmetic (§3.4);
//! * RFC 3168 §6.1 — the ECE and CWR control bits (RFC 3540's NS bit is historic,
//!   RFC 8311 §3; it is exposed on [`Packet`] as the low reserved bit only);
//! * RFC 7323 — Window Scale (§2) and Timestamps (§3);
//! * RFC 2018 — SACK-Permitted and SACK blocks (§2, §3);
//! * RFC 1071 — the checksum arithmetic ([`crate::checksum`]).
//!
//! [`Repr::emit`] lays options out as Linux does (tcp_options_write): MSS, then
//! SACK-Permitted + Timestamps (or NOP NOP + one of them), NOP + Window Scale,
//! NOP NOP + SACK blocks, then any options kept raw, padded with EOL to a word.
//! Parsing and emitting never allocate: a bare ACK is two fixed-size copies.

use core::{cmp, fmt, ops};

use crate::ipv4::{Address, Protocol};
use crate::{checksum, Error, Field, Result};

/// The header without options (RFC 9293 §3.1: Data Offset minimum 5 words).
pub const HEADER_LEN: usize = 20;
/// Largest options area: Data Offset is 4 bits, at most 15 words (RFC 9293 §3.1).
pub const MAX_OPTIONS_LEN: usize = 40;
/// RFC 9293 §3.7.1 (and RFC 1122 §4.2.2.6): the MSS assumed when none is received.
pub const DEFAULT_MSS: u16 = 536;
/// RFC 7323 §2.3: the largest usable window shift.
pub const MAX_WINDOW_SHIFT: u8 = 14;

/// Byte ranges of the header (RFC 9293 §3.1, "Header Format").
pub mod field {
    use crate::Field;

    /// Source Port.
    pub const SRC_PORT: Field = 0..2;
    /// Destination Port.
    pub const DST_PORT: Field = 2..4;
    /// Sequence Number of the first data octet (or the ISN when SYN is set).
    pub const SEQ_NUM: Field = 4..8;
    /// Acknowledgment Number, valid when ACK is set.
    pub const ACK_NUM: Field = 8..12;
    /// Data Offset (4 bits), reserved (4 bits) and the 8 control bits.
    pub const FLAGS: Field = 12..14;
    /// Window, in octets before scaling (RFC 7323 §2.2).
    pub const WIN_SIZE: Field = 14..16;
    /// Checksum over pseudo-header, header and data.
    pub const CHECKSUM: Field = 16..18;
    /// Urgent Pointer, an offset from the sequence number, valid when URG is set.
    pub const URGENT: Field = 18..20;
    /// Options start after the fixed header and run to Data Offset * 4.
    pub const OPTIONS_START: usize = 20;
}

/// Control bits in the low 12 bits of [`field::FLAGS`] (RFC 9293 §3.1, RFC 3168 §6.1).
mod flags {
    pub const FIN: u16 = 0x001;
    pub const SYN: u16 = 0x002;
    pub const RST: u16 = 0x004;
    pub const PSH: u16 = 0x008;
    pub const ACK: u16 = 0x010;
    pub const URG: u16 = 0x020;
    pub const ECE: u16 = 0x040;
    pub const CWR: u16 = 0x080;
    /// RFC 3540 nonce sum, historic (RFC 8311 §3); the lowest reserved bit.
    pub const NS: u16 = 0x100;
    pub const ALL: u16 = 0xfff;
}

#[inline]
fn be16(data: &[u8], f: Field) -> u16 {
    u16::from_be_bytes([data[f.start], data[f.start + 1]])
}

/// Rounds up to a whole number of 32-bit words (RFC 9293 §3.1, Data Offset).
#[inline]
const fn round4(n: usize) -> usize {
    (n + 3) & !3
}

#[inline]
fn be32(data: &[u8], f: Field) -> u32 {
    u32::from_be_bytes([data[f.start], data[f.start + 1], data[f.start + 2], data[f.start + 3]])
}

mod options;
mod packet;
mod repr;
mod seq;

pub use options::*;
pub use packet::*;
pub use repr::*;
pub use seq::*;

#[cfg(test)]
mod test {
    use super::*;
    use proptest::prelude::*;

    const SRC: Address = Address::new(192, 168, 1, 1);
    const DST: Address = Address::new(192, 168, 1, 2);

    // A bare ACK 49152 -> 80, seq 0x01234567, ack 0x89abcdef, window 0x0100.
    // Checksum by hand, 16-bit words:
    //   pseudo-header c0a8 0101 c0a8 0102 0006 0014
    //   header        c000 0050 0123 4567 89ab cdef 5010 0100 0000 0000
    // computed independently in `test_checksum_by_hand`.
    static ACK_BYTES: [u8; 20] = [
        0xc0, 0x00, 0x00, 0x50, 0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef, 0x50, 0x10, 0x01, 0x00, 0xcd, 0x0a,
        0x00, 0x00,
    ];

    // A Linux-style SYN: MSS 1460, SACK-Permitted, TS (1, 0), NOP, WS 7; 40-byte header.
    static SYN_BYTES: [u8; 40] = [
        0xc0, 0x00, 0x00, 0x50, 0x00, 0x00, 0x00, 0x64, 0x00, 0x00, 0x00, 0x00, 0xa0, 0x02, 0xfa, 0xf0, 0x00, 0x00,
        0x00, 0x00, // fixed header, checksum filled in the test
        0x02, 0x04, 0x05, 0xb4, // MSS 1460
        0x04, 0x02, // SACK-Permitted
        0x08, 0x0a, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, // TS 1, 0
        0x01, // NOP
        0x03, 0x03, 0x07, // WS 7
    ];

    fn ack_repr() -> Repr {
        Repr {
            ack_number: Some(SeqNumber::from_u32(0x89ab_cdef)),
            ..Repr::new(49152, 80, Control::None, SeqNumber::from_u32(0x0123_4567), 0x0100)
        }
    }

    fn syn_repr() -> Repr {
        Repr {
            max_seg_size: Some(1460),
            sack_permitted: true,
            timestamp: Some((1, 0)),
            window_scale: Some(7),
            ..Repr::new(49152, 80, Control::Syn, SeqNumber(100), 64240)
        }
    }

    fn ones_complement(words: &[u32]) -> u16 {
        let mut s: u32 = words.iter().sum();
        while s >> 16 != 0 {
            s = (s & 0xffff) + (s >> 16);
        }
        !(s as u16)
    }

    #[test]
    fn test_checksum_by_hand() {
        let words = [
            0xc0a8, 0x0101, 0xc0a8, 0x0102, 0x0006, 0x0014, 0xc000, 0x0050, 0x0123, 0x4567, 0x89ab, 0xcdef, 0x5010,
            0x0100, 0, 0,
        ];
        assert_eq!(ones_complement(&words), 0xcd0a);
    }

    #[test]
    fn test_parse_ack() {
        let p = Packet::new_checked(&ACK_BYTES[..]).unwrap();
        assert_eq!(p.src_port(), 49152);
        assert_eq!(p.dst_port(), 80);
        assert_eq!(p.seq_number(), SeqNumber::from_u32(0x0123_4567));
        assert_eq!(p.ack_number().as_u32(), 0x89ab_cdef);
        assert_eq!(p.header_len(), 20);
        assert!(p.ack() && !p.syn() && !p.fin() && !p.rst() && !p.psh() && !p.urg() && !p.ece() && !p.cwr());
        assert_eq!(p.window_len(), 256);
        assert_eq!(p.checksum(), 0xcd0a);
        assert!(p.verify_checksum(&SRC, &DST));
        assert_eq!(p.segment_len(), 0);
        assert_eq!(Repr::parse(&p, &SRC, &DST).unwrap(), ack_repr());
    }

    #[test]
    fn test_emit_ack() {
        let mut bytes = [0xffu8; 20];
        ack_repr().emit(&mut Packet::new_unchecked(&mut bytes[..]), &SRC, &DST, |_| ());
        assert_eq!(bytes, ACK_BYTES);
    }

    #[test]
    fn test_syn_options() {
        let mut expected = SYN_BYTES;
        Packet::new_unchecked(&mut expected[..]).fill_checksum(&SRC, &DST);
        let mut bytes = [0u8; 40];
        syn_repr().emit(&mut Packet::new_unchecked(&mut bytes[..]), &SRC, &DST, |_| ());
        assert_eq!(bytes, expected);
        let p = Packet::new_checked(&bytes[..]).unwrap();
        assert_eq!(p.segment_len(), 1);
        assert_eq!(Repr::parse(&p, &SRC, &DST).unwrap(), syn_repr());
        let opts: Vec<_> = OptionIter::new(p.options()).map(|o| o.unwrap()).collect();
        assert_eq!(
            opts,
            vec![
                TcpOption::MaxSegmentSize(1460),
                TcpOption::SackPermitted,
                TcpOption::TimeStamp { tsval: 1, tsecr: 0 },
                TcpOption::NoOperation,
                TcpOption::WindowScale(7)
            ]
        );
    }

    #[test]
    fn test_sack_and_unknown() {
        let mut repr = ack_repr();
        repr.timestamp = Some((7, 8));
        repr.sack_ranges = [Some((1000, 2000)), Some((3000, 4000)), Some((5000, 6000))];
        // 12 (TS) + 4 + 24 (3 blocks) = 40.
        assert_eq!(repr.header_len(), 60);
        let mut buf = vec![0u8; repr.buffer_len()];
        repr.emit(&mut Packet::new_unchecked(&mut buf[..]), &SRC, &DST, |_| ());
        assert_eq!(&buf[32..36], &[1, 1, 5, 26]);
        assert_eq!(Repr::parse(&Packet::new_checked(&buf[..]).unwrap(), &SRC, &DST).unwrap(), repr);

        // An unknown option (User Timeout) is kept and takes room from SACK blocks.
        repr.other_options.push(&TcpOption::Unknown { kind: 28, data: &[0x80, 0x10] }).unwrap();
        assert_eq!(repr.header_len(), 56); // 12 + (4 + 16: 2 blocks) + 4
        let mut buf = vec![0u8; repr.buffer_len()];
        repr.emit(&mut Packet::new_unchecked(&mut buf[..]), &SRC, &DST, |_| ());
        let parsed = Repr::parse(&Packet::new_checked(&buf[..]).unwrap(), &SRC, &DST).unwrap();
        assert_eq!(parsed.sack_ranges, [Some((1000, 2000)), Some((3000, 4000)), None]);
        assert_eq!(parsed.other_options.as_bytes(), &[28, 4, 0x80, 0x10]);
    }

    #[test]
    fn test_control_bits_all_sixteen() {
        // RFC 9293 §3.1's four low flag bits, every combination: at most one of SYN,
        // FIN, RST is accepted (PSH kept beside none of them), any two are malformed.
        for bits in 0u8..16 {
            let (fin, syn, rst, psh) = (bits & 1 != 0, bits & 2 != 0, bits & 4 != 0, bits & 8 != 0);
            let mut seg = ACK_BYTES;
            seg[13] = (seg[13] & 0xf0) | bits;
            Packet::new_unchecked(&mut seg[..]).fill_checksum(&SRC, &DST);
            let parsed = Repr::parse(&Packet::new_unchecked(&seg[..]), &SRC, &DST).map(|r| r.control);
            let expected = match (u8::from(syn) + u8::from(fin) + u8::from(rst), syn, fin, rst) {
                (0, ..) if psh => Ok(Control::Psh),
                (0, ..) => Ok(Control::None),
                (1, true, _, _) => Ok(Control::Syn),
                (1, _, true, _) => Ok(Control::Fin),
                (1, _, _, true) => Ok(Control::Rst),
                _ => Err(Error::Malformed),
            };
            assert_eq!(parsed, expected, "flag bits {bits:#06b}");
        }
    }

    #[test]
    fn test_errors() {
        assert_eq!(Packet::new_checked(&ACK_BYTES[..19]).unwrap_err(), Error::Truncated);
        let mut bad = ACK_BYTES;
        bad[12] = 0x40; // data offset 4
        assert_eq!(Packet::new_checked(&bad[..]).unwrap_err(), Error::Malformed);
        bad[12] = 0x60; // data offset 6, buffer 20
        assert_eq!(Packet::new_checked(&bad[..]).unwrap_err(), Error::Truncated);
        let mut bad = ACK_BYTES;
        bad[19] = 1;
        assert_eq!(Repr::parse(&Packet::new_unchecked(&bad[..]), &SRC, &DST).unwrap_err(), Error::Checksum);
        let mut bad = ACK_BYTES;
        bad[13] |= 0x03; // SYN+FIN
        Packet::new_unchecked(&mut bad[..]).fill_checksum(&SRC, &DST);
        assert_eq!(Repr::parse(&Packet::new_unchecked(&bad[..]), &SRC, &DST).unwrap_err(), Error::Malformed);
        // MSS with length 3.
        assert_eq!(TcpOption::parse(&[2, 3, 5]).unwrap_err(), Error::Malformed);
        assert_eq!(TcpOption::parse(&[2, 4, 5]).unwrap_err(), Error::Truncated);
        assert_eq!(TcpOption::parse(&[5, 11, 0, 0, 0, 0, 0, 0, 0, 0, 0]).unwrap_err(), Error::Malformed);
        assert_eq!(TcpOption::parse(&[30, 1]).unwrap_err(), Error::Malformed);
        assert_eq!(TcpOption::parse(&[]).unwrap_err(), Error::Truncated);
    }

    #[test]
    fn test_seq_number() {
        let a = SeqNumber::from_u32(0xffff_fff0);
        let b = a + 0x20;
        assert_eq!(b.as_u32(), 0x10);
        assert!(a < b);
        assert!(b > a);
        assert_eq!(b - a, 0x20);
        assert_eq!(b - 0x20usize, a);
        assert_eq!(a.max(b), b);
        assert_eq!(a.min(b), a);
        let mut c = a;
        c += 1;
        assert_eq!(c.as_u32(), 0xffff_fff1);
        assert_eq!(format!("{a}"), "4294967280");
    }

    #[test]
    #[should_panic(expected = "underflow")]
    fn test_seq_number_underflow() {
        let _ = SeqNumber(1) - SeqNumber(2);
    }

    prop_compose! {
        fn arb_other()(kind in 9u8..=253, data in proptest::collection::vec(any::<u8>(), 0..6), two in any::<bool>()) -> OtherOptions {
            let mut o = OtherOptions::empty();
            o.push(&TcpOption::Unknown { kind, data: &data }).unwrap();
            if two { o.push(&TcpOption::Unknown { kind: 254, data: &[0xf9, 0x89] }).unwrap(); }
            o
        }
    }

    prop_compose! {
        fn arb_repr()(src_port in 1u16.., dst_port in 1u16.., control in 0..5u8, seq in any::<i32>(),
                      ack in proptest::option::of(any::<i32>()), window_len in any::<u16>(),
                      window_scale in proptest::option::of(0u8..15), max_seg_size in proptest::option::of(any::<u16>()),
                      sack_permitted in any::<bool>(),
                      sack in proptest::collection::vec(any::<(u32, u32)>(), 0..=3),
                      timestamp in proptest::option::of(any::<(u32, u32)>()), ece in any::<bool>(), cwr in any::<bool>(),
                      other in arb_other(), payload_len in 0usize..100) -> Repr {
            let control = [Control::None, Control::Psh, Control::Syn, Control::Fin, Control::Rst][usize::from(control)];
            let mut sack_ranges = [None; 3];
            for (slot, r) in sack_ranges.iter_mut().zip(sack) { *slot = Some(r); }
            Repr { src_port, dst_port, control, seq_number: SeqNumber(seq), ack_number: ack.map(SeqNumber),
                   window_len, window_scale, max_seg_size, sack_permitted, sack_ranges, timestamp, ece, cwr,
                   other_options: other, payload_len }
        }
    }

    proptest! {
        #[test]
        fn roundtrip(repr in arb_repr(), s in any::<u32>(), d in any::<u32>()) {
            let (s, d) = (Address::from(s), Address::from(d));
            prop_assert!(repr.header_len() <= 60);
            let mut a = vec![0u8; repr.buffer_len()];
            repr.emit(&mut Packet::new_unchecked(&mut a[..]), &s, &d, |p| p.fill(0x5a));
            let parsed = Repr::parse(&Packet::new_checked(&a[..]).unwrap(), &s, &d).unwrap();
            let mut b = vec![0u8; parsed.buffer_len()];
            parsed.emit(&mut Packet::new_unchecked(&mut b[..]), &s, &d, |p| p.fill(0x5a));
            prop_assert_eq!(&a, &b);
            if repr.layout().1 == repr.sack_ranges.iter().flatten().count() {
                // Everything fitted: the parse is exact.
                prop_assert_eq!(parsed, repr);
            }
        }

        #[test]
        fn timestamps_and_sack_roundtrip(ts in any::<(u32, u32)>(), sack in proptest::collection::vec(any::<(u32, u32)>(), 0..=3),
                                         seq in any::<u32>(), ack in any::<u32>(), payload_len in 0usize..50) {
            // The layout a timestamps connection sends on nearly every segment (the
            // parser's fast path): NOP NOP TS, then NOP NOP SACK with 0..=3 blocks.
            let mut repr = Repr::new(49152, 80, Control::None, SeqNumber::from_u32(seq), 1000);
            repr.ack_number = Some(SeqNumber::from_u32(ack));
            repr.timestamp = Some(ts);
            for (slot, r) in repr.sack_ranges.iter_mut().zip(&sack) { *slot = Some(*r); }
            repr.payload_len = payload_len;
            let mut a = vec![0u8; repr.buffer_len()];
            repr.emit(&mut Packet::new_unchecked(&mut a[..]), &SRC, &DST, |p| p.fill(7));
            prop_assert_eq!(a.len(), HEADER_LEN + 12 + if sack.is_empty() { 0 } else { 4 + 8 * sack.len() } + payload_len);
            prop_assert_eq!(Repr::parse(&Packet::new_checked(&a[..]).unwrap(), &SRC, &DST).unwrap(), repr);
        }

        #[test]
        fn emit_append_equals_emit(repr in arb_repr(), s in any::<u32>(), d in any::<u32>(),
                                   data in proptest::collection::vec(any::<u8>(), 0..3000), prefix in 0usize..40) {
            let (s, d) = (Address::from(s), Address::from(d));
            let repr = Repr { payload_len: data.len(), ..repr };
            for (payload, copy) in [(Payload::Bytes(&data), data.clone()), (Payload::Zeros(data.len()), vec![0; data.len()])] {
                // `emit` over a buffer already holding the payload, checksum by
                // `fill_checksum` over the whole segment.
                let mut want = vec![0u8; repr.header_len()];
                want.extend_from_slice(&copy);
                repr.emit(&mut Packet::new_unchecked(&mut want[..]), &s, &d, |_| ());
                // Appended after other octets to a buffer that held garbage.
                let mut frame = vec![0xeeu8; 200];
                frame.truncate(prefix);
                repr.emit_append(&mut frame, &s, &d, payload);
                prop_assert_eq!(&frame[..prefix], &vec![0xeeu8; prefix][..]);
                prop_assert_eq!(&frame[prefix..], &want[..]);
                prop_assert!(Packet::new_checked(&frame[prefix..]).unwrap().verify_checksum(&s, &d));
                // At an offset of a buffer that held garbage and was cut short (`start`
                // past its length, or before it): the octets kept are untouched, the
                // ones it grew by before `start` are zeros.
                let start = 34;
                let mut frame = vec![0xeeu8; 3100];
                frame.truncate(prefix);
                repr.emit_at(&mut frame, start, &s, &d, payload);
                let kept = prefix.min(start);
                prop_assert_eq!(&frame[..kept], &vec![0xeeu8; kept][..]);
                prop_assert_eq!(&frame[kept..start], &vec![0u8; start - kept][..]);
                prop_assert_eq!(&frame[start..], &want[..]);
            }
        }

        #[test]
        fn parse_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..80)) {
            if let Ok(p) = Packet::new_checked(&bytes[..]) {
                let _ = Repr::parse(&p, &SRC, &DST);
                for o in OptionIter::new(p.options()) { let _ = o; }
            }
        }
    }
}
