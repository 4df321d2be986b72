//! Internet Protocol version 4.
//!
//! Standards a reader must know:
//!
//! * RFC 791 — the header (§3.1), the options (§3.1, "Options"), fragmentation and
//!   reassembly (§3.2, "Fragmentation and Reassembly" and the worked procedures);
//! * RFC 1071 — the header checksum computation (see [`crate::checksum`]);
//! * RFC 2474 / RFC 3168 — the TOS octet split into DSCP (6 bits) and ECN (2 bits);
//! * RFC 2113 — the Router Alert option;
//! * RFC 6864 — the Identification field of atomic datagrams (DF set, not a fragment).
//!
//! Two levels, as everywhere in this crate: [`Packet`], a checked view over bytes, and
//! [`Repr`], the plain header. Options are kept byte-exact in [`Options`] (a fixed
//! 40-byte buffer, no allocation) and read through a typed iterator of [`Ipv4Option`].
//!
//! [`fragment`] splits a datagram per RFC 791 §3.2; [`crate::reassembly`] puts it back.

use core::fmt;

use crate::{checksum, Error, Field, Result};

/// An IPv4 address; the standard library's type, so that callers need no conversion.
pub type Address = std::net::Ipv4Addr;

crate::enum_with_unknown! {
    /// IANA "protocol-numbers" (RFC 791 §3.1, the Protocol field).
    pub enum Protocol(u8) {
        Icmp = 1,
        Tcp = 6,
        Udp = 17,
        /// RFC 2003: IP in IP.
        IpIp = 4,
        /// RFC 2784 / RFC 2637: GRE and enhanced GRE.
        Gre = 47,
        /// RFC 4303: IPsec Encapsulating Security Payload.
        Esp = 50,
        /// RFC 4302: IPsec Authentication Header.
        Ah = 51,
    }
}

/// Length of the fixed header without options (RFC 791 §3.1: IHL minimum is 5 words).
pub const HEADER_LEN: usize = 20;
/// Largest options area: IHL is 4 bits, so at most 15 words = 60 bytes of header (RFC 791 §3.1).
pub const MAX_OPTIONS_LEN: usize = 40;
/// Largest header, 15 words (RFC 791 §3.1, IHL).
pub const MAX_HEADER_LEN: usize = HEADER_LEN + MAX_OPTIONS_LEN;
/// Largest datagram: Total Length is 16 bits (RFC 791 §3.1).
pub const MAX_PACKET_LEN: usize = 65_535;
/// "Every internet module must be able to forward a datagram of 68 octets without
/// further fragmentation" (RFC 791 §3.2, Fragmentation): the smallest legal MTU.
pub const MIN_MTU: usize = 68;
/// "Every internet destination must be able to receive a datagram of 576 octets either
/// in one piece or in fragments to be reassembled" (RFC 791 §3.1, Total Length).
pub const MIN_REASSEMBLY: usize = 576;
/// Fragment offsets count units of 8 octets (RFC 791 §3.1, Fragment Offset).
pub const FRAG_UNIT: usize = 8;

/// Byte ranges of the header fields (RFC 791 §3.1, "Internet Header Format").
pub mod field {
    use crate::Field;

    /// Version (high 4 bits) and IHL in 32-bit words (low 4 bits).
    pub const VER_IHL: usize = 0;
    /// Type of Service; today DSCP (high 6 bits, RFC 2474) and ECN (low 2 bits, RFC 3168).
    pub const TOS: usize = 1;
    /// Total Length of the datagram, header and data, in octets.
    pub const LENGTH: Field = 2..4;
    /// Identification, shared by the fragments of one datagram.
    pub const IDENT: Field = 4..6;
    /// Flags (reserved, DF, MF) in the top 3 bits and Fragment Offset in the low 13.
    pub const FLG_OFF: Field = 6..8;
    /// Time to Live.
    pub const TTL: usize = 8;
    /// Protocol of the data (IANA protocol numbers).
    pub const PROTOCOL: usize = 9;
    /// Header Checksum, over the header only.
    pub const CHECKSUM: Field = 10..12;
    /// Source Address.
    pub const SRC_ADDR: Field = 12..16;
    /// Destination Address.
    pub const DST_ADDR: Field = 16..20;
    /// Options start right after the fixed header and run to IHL*4.
    pub const OPTIONS_START: usize = 20;
}

/// RFC 791 §3.1, Flags bit 0: reserved, must be zero.
const FLAG_RESERVED: u16 = 0x8000;
/// RFC 791 §3.1, Flags bit 1: Don't Fragment.
const FLAG_DF: u16 = 0x4000;
/// RFC 791 §3.1, Flags bit 2: More Fragments.
const FLAG_MF: u16 = 0x2000;
/// RFC 791 §3.1: Fragment Offset is the low 13 bits.
const OFFSET_MASK: u16 = 0x1fff;

/// Reads a big-endian u16 from a field the caller has proved present.
#[inline]
fn be16(data: &[u8], f: Field) -> u16 {
    u16::from_be_bytes([data[f.start], data[f.start + 1]])
}

/// Rounds up to a multiple of 4 (the header is a whole number of 32-bit words).
#[inline]
const fn round4(n: usize) -> usize {
    (n + 3) & !3
}
mod fragment;
mod options;
mod packet;
mod repr;

pub use fragment::*;
pub use options::*;
pub use packet::*;
pub use repr::*;

#[cfg(test)]
mod test {
    use super::*;
    use proptest::prelude::*;

    // A UDP datagram header from 192.168.1.1 to 192.168.1.2, ident 0x1c46, DF, TTL 64,
    // Total Length 24 (4 bytes of data). Checksum computed by hand: the 16-bit words
    // 4500 0018 1c46 4000 4011 0000 c0a8 0101 c0a8 0102 sum to 0x2_64c2, folded 0x64c4,
    // complement 0x9b3b.
    static PACKET_BYTES: [u8; 24] = [
        0x45, 0x00, 0x00, 0x18, 0x1c, 0x46, 0x40, 0x00, 0x40, 0x11, 0x9b, 0x3b, 0xc0, 0xa8, 0x01, 0x01, 0xc0, 0xa8,
        0x01, 0x02, 0xde, 0xad, 0xbe, 0xef,
    ];

    #[test]
    fn decrement_ttl_equals_a_full_recompute() {
        // RFC 1624 Eqn. 3 against RFC 1071's sum over the whole header, on headers whose
        // old checksum is valid, with TTLs at the edges and with and without options;
        // with protocol and addresses chosen so that some sums land on 0xffff / 0x0000.
        let mut x: u32 = 99;
        let mut next = || {
            x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
            (x >> 16) as u8
        };
        for ihl in [5u8, 6, 15] {
            for round in 0..2000 {
                let len = usize::from(ihl) * 4;
                let mut h: Vec<u8> = (0..len).map(|_| next()).collect();
                h[0] = 0x40 | ihl;
                h[field::TTL] = match round % 4 {
                    0 => 1,
                    1 => 255,
                    _ => next().max(1),
                };
                if round % 7 == 0 {
                    h[12..20].fill(0xff);
                    h[2..8].fill(0);
                }
                let mut p = Packet::new_unchecked(&mut h[..]);
                p.fill_checksum();
                let mut full = h.clone();
                let mut q = Packet::new_unchecked(&mut full[..]);
                let ttl = q.ttl();
                q.set_ttl(ttl - 1);
                q.fill_checksum();
                let mut p = Packet::new_unchecked(&mut h[..]);
                p.decrement_ttl();
                assert_eq!(h, full, "IHL {ihl}, round {round}");
                assert!(Packet::new_unchecked(&h[..]).verify_checksum());
            }
        }
    }

    fn packet_repr() -> Repr {
        Repr {
            src_addr: Address::new(192, 168, 1, 1),
            dst_addr: Address::new(192, 168, 1, 2),
            next_header: Protocol::Udp,
            payload_len: 4,
            hop_limit: 64,
            tos: 0,
            ident: 0x1c46,
            dont_frag: true,
            more_frags: false,
            frag_offset: 0,
            options: Options::empty(),
        }
    }

    #[test]
    fn test_checksum_by_hand() {
        // An independent computation of the checksum in PACKET_BYTES.
        let words: u32 = [0x4500u32, 0x0018, 0x1c46, 0x4000, 0x4011, 0, 0xc0a8, 0x0101, 0xc0a8, 0x0102].iter().sum();
        let folded = (words & 0xffff) + (words >> 16);
        assert_eq!(!(folded as u16), 0x9b3b);
    }

    #[test]
    fn test_parse() {
        let packet = Packet::new_checked(&PACKET_BYTES[..]).unwrap();
        assert_eq!(packet.version(), 4);
        assert_eq!(packet.header_len(), 20);
        assert_eq!(packet.total_len(), 24);
        assert_eq!(packet.ident(), 0x1c46);
        assert!(packet.dont_frag());
        assert!(!packet.more_frags());
        assert_eq!(packet.frag_offset(), 0);
        assert_eq!(packet.ttl(), 64);
        assert_eq!(packet.next_header(), Protocol::Udp);
        assert_eq!(packet.checksum(), 0x9b3b);
        assert!(packet.verify_checksum());
        assert_eq!(packet.payload(), &[0xde, 0xad, 0xbe, 0xef]);
        assert_eq!(Repr::parse(&packet).unwrap(), packet_repr());
    }

    #[test]
    fn test_emit() {
        let mut bytes = [0xa5u8; 24];
        let mut packet = Packet::new_unchecked(&mut bytes[..]);
        packet_repr().emit(&mut packet);
        packet.payload_mut().copy_from_slice(&[0xde, 0xad, 0xbe, 0xef]);
        assert_eq!(bytes, PACKET_BYTES);
        let mut v = Vec::new();
        packet_repr().encapsulate(&[0xde, 0xad, 0xbe, 0xef], &mut v);
        assert_eq!(v, PACKET_BYTES);
    }

    #[test]
    fn test_setters() {
        let mut bytes = PACKET_BYTES;
        let mut p = Packet::new_unchecked(&mut bytes[..]);
        p.set_dscp(46);
        p.set_ecn(2);
        assert_eq!(p.tos(), 0xba);
        p.set_more_frags(true);
        p.set_frag_offset(185);
        assert!(p.dont_frag() && p.more_frags());
        assert_eq!(p.frag_offset_bytes(), 1480);
        p.set_dont_frag(false);
        p.set_reserved_flag(true);
        assert!(p.reserved_flag() && !p.dont_frag() && p.is_fragment());
        p.clear_flags();
        assert_eq!(p.frag_offset(), 185);
        p.fill_checksum();
        assert!(p.verify_checksum());
    }

    #[test]
    fn test_errors() {
        assert_eq!(Packet::new_checked(&PACKET_BYTES[..19]).unwrap_err(), Error::Truncated);
        assert_eq!(Packet::new_checked(&PACKET_BYTES[..23]).unwrap_err(), Error::Truncated);
        let mut bad = PACKET_BYTES;
        bad[0] = 0x44; // IHL 4
        assert_eq!(Packet::new_checked(&bad[..]).unwrap_err(), Error::Malformed);
        let mut bad = PACKET_BYTES;
        bad[3] = 0x10; // total length 16 < 20
        assert_eq!(Packet::new_checked(&bad[..]).unwrap_err(), Error::Malformed);
        let mut bad = PACKET_BYTES;
        bad[0] = 0x65;
        assert_eq!(Repr::parse(&Packet::new_unchecked(&bad[..])).unwrap_err(), Error::Malformed);
        let mut bad = PACKET_BYTES;
        bad[8] = 63; // TTL changed, checksum stale
        assert_eq!(Repr::parse(&Packet::new_unchecked(&bad[..])).unwrap_err(), Error::Checksum);
        // Link padding after Total Length is allowed and excluded.
        let mut padded = PACKET_BYTES.to_vec();
        padded.extend_from_slice(&[0; 22]);
        let p = Packet::new_checked(&padded[..]).unwrap();
        assert_eq!(p.payload().len(), 4);
    }

    // 24-byte header with a Record Route of one slot (7, 7, 4, 0.0.0.0) then EOL.
    #[test]
    fn test_options() {
        let opts = Options::record_route(1).unwrap();
        assert_eq!(opts.as_bytes(), &[7, 7, 4, 0, 0, 0, 0]);
        assert_eq!(opts.padded_len(), 8);
        let repr = Repr { options: opts, payload_len: 0, ..packet_repr() };
        let mut buf = vec![0u8; repr.buffer_len()];
        repr.emit(&mut Packet::new_unchecked(&mut buf[..]));
        assert_eq!(buf[0], 0x47);
        assert_eq!(&buf[20..28], &[7, 7, 4, 0, 0, 0, 0, 0]);
        let p = Packet::new_checked(&buf[..]).unwrap();
        let parsed = Repr::parse(&p).unwrap();
        let items: Vec<_> = parsed.options.iter().collect();
        assert_eq!(items, vec![Ok(Ipv4Option::RecordRoute { pointer: 4, route: &[0; 4] }), Ok(Ipv4Option::EndOfList)]);
        assert!(!OptionKind::RecordRoute.copied());
        assert!(OptionKind::LooseSourceRoute.copied());
        assert!(OptionKind::RouterAlert.copied());
        assert_eq!(OptionKind::Timestamp.class(), 2);
        assert_eq!(OptionKind::Timestamp.number(), 4);

        let mut o = Options::empty();
        o.push(&Ipv4Option::RecordRoute { pointer: 4, route: &[0; 8] }).unwrap();
        o.push(&Ipv4Option::NoOperation).unwrap();
        o.push(&Ipv4Option::RouterAlert { value: 0 }).unwrap();
        o.push(&Ipv4Option::LooseSourceRoute { pointer: 4, route: &[10, 0, 0, 1] }).unwrap();
        o.push(&Ipv4Option::Timestamp { pointer: 5, overflow: 0, flags: 0, data: &[0; 4] }).unwrap();
        let c = o.copied().unwrap();
        assert_eq!(c.as_bytes(), &[148, 4, 0, 0, 131, 7, 4, 10, 0, 0, 1]);
        assert_eq!(o.push(&Ipv4Option::RecordRoute { pointer: 4, route: &[0; 36] }), Err(Error::Truncated));
        // Malformed options are reported by the iterator, not by parse.
        let bad = Options::new(&[7, 1, 0, 0]).unwrap();
        assert_eq!(bad.iter().next(), Some(Err(Error::Malformed)));
        let bad = Options::new(&[7, 9, 4, 0]).unwrap();
        assert_eq!(bad.iter().next(), Some(Err(Error::Truncated)));
        assert_eq!(Options::new(&[0; 41]).unwrap_err(), Error::Malformed);
    }

    fn udp_datagram(payload_len: usize, options: Options) -> Vec<u8> {
        let repr = Repr { options, dont_frag: false, ident: 0x4242, payload_len, ..packet_repr() };
        let payload: Vec<u8> = (0..payload_len).map(|i| (i * 7) as u8).collect();
        let mut v = Vec::new();
        repr.encapsulate(&payload, &mut v);
        v
    }

    #[test]
    fn test_fragment() {
        // 4008 data octets at MTU 1500: 1480 + 1480 + 1048 (RFC 791 §3.2, NFB = 185).
        let dgram = udp_datagram(4008, Options::empty());
        let mut frags = Vec::new();
        let n = fragment(&dgram, 1500, |f| frags.push(f.to_vec())).unwrap();
        assert_eq!(n, 3);
        assert_eq!(fragment_count(4008, 20, 1500), Some(3));
        assert_eq!(fragment_sizes(4008, 20, 20, 1500), Some(vec![1480, 1480, 1048]));
        let mut data = Vec::new();
        for (i, f) in frags.iter().enumerate() {
            let p = Packet::new_checked(&f[..]).unwrap();
            assert!(p.verify_checksum());
            assert!(f.len() <= 1500);
            assert_eq!(p.ident(), 0x4242);
            assert_eq!(p.frag_offset_bytes(), i * 1480);
            assert_eq!(p.more_frags(), i < 2);
            data.extend_from_slice(p.payload());
        }
        assert_eq!(data, &dgram[20..]);
    }

    #[test]
    fn test_fragment_options_and_df() {
        let mut opts = Options::empty();
        opts.push(&Ipv4Option::RecordRoute { pointer: 4, route: &[0; 8] }).unwrap(); // not copied
        opts.push(&Ipv4Option::RouterAlert { value: 0 }).unwrap(); // copied
        let dgram = udp_datagram(200, opts);
        let mut frags = Vec::new();
        fragment(&dgram, 100, |f| frags.push(f.to_vec())).unwrap();
        let first = Packet::new_checked(&frags[0][..]).unwrap();
        assert_eq!(first.header_len(), 36);
        assert_eq!(first.payload().len(), 64);
        for f in &frags[1..] {
            let p = Packet::new_checked(&f[..]).unwrap();
            assert_eq!(p.options(), &[148, 4, 0, 0]);
            assert!(p.payload().len() <= 76);
        }
        let total: usize = frags.iter().map(|f| Packet::new_checked(&f[..]).unwrap().payload().len()).sum();
        assert_eq!(total, 200);

        let mut df = udp_datagram(2000, Options::empty());
        Packet::new_unchecked(&mut df[..]).set_dont_frag(true);
        Packet::new_unchecked(&mut df[..]).fill_checksum();
        assert_eq!(fragment(&df, 1500, |_| ()), Err(FragmentError::DontFragment { mtu: 1500 }));
        // Fits: passed through even with DF.
        assert_eq!(fragment(&df, 2020, |f| assert_eq!(f, &df[..])), Ok(1));
        assert_eq!(fragment(&dgram, 20, |_| ()), Err(FragmentError::MtuTooSmall));
        assert_eq!(fragment(&dgram[..10], 20, |_| ()), Err(FragmentError::Parse(Error::Truncated)));
    }

    #[test]
    fn test_refragment() {
        // Fragmenting a non-last fragment keeps MF on every piece and adds offsets.
        let dgram = udp_datagram(3000, Options::empty());
        let mut frags = Vec::new();
        fragment(&dgram, 1500, |f| frags.push(f.to_vec())).unwrap();
        let mut small = Vec::new();
        fragment(&frags[1], 576, |f| small.push(f.to_vec())).unwrap();
        let offs: Vec<_> = small.iter().map(|f| Packet::new_unchecked(&f[..]).frag_offset_bytes()).collect();
        assert_eq!(offs, vec![1480, 2032, 2584]);
        assert!(small.iter().all(|f| Packet::new_unchecked(&f[..]).more_frags()));
    }

    prop_compose! {
        fn arb_options()(raw in proptest::collection::vec(any::<u8>(), 0..=10), n in 0usize..=40) -> Options {
            // Arbitrary raw bytes of arbitrary length: options are opaque to the round trip.
            let mut v = raw; v.resize(n.min(40), 0x01);
            Options::new(&v).unwrap()
        }
    }

    prop_compose! {
        fn arb_repr()(src in any::<u32>(), dst in any::<u32>(), proto in any::<u8>(), payload_len in 0usize..1400,
                      ttl in any::<u8>(), tos in any::<u8>(), ident in any::<u16>(), df in any::<bool>(),
                      mf in any::<bool>(), off in 0u16..0x2000, options in arb_options()) -> Repr {
            Repr { src_addr: Address::from(src), dst_addr: Address::from(dst), next_header: Protocol::from(proto),
                   payload_len, hop_limit: ttl, tos, ident, dont_frag: df, more_frags: mf, frag_offset: off, options }
        }
    }

    proptest! {
        #[test]
        fn roundtrip(repr in arb_repr()) {
            let mut a = vec![0u8; repr.buffer_len()];
            repr.emit(&mut Packet::new_unchecked(&mut a[..]));
            let parsed = Repr::parse(&Packet::new_checked(&a[..]).unwrap()).unwrap();
            prop_assert_eq!(parsed.options.len(), repr.options.padded_len());
            let mut b = vec![0u8; parsed.buffer_len()];
            parsed.emit(&mut Packet::new_unchecked(&mut b[..]));
            prop_assert_eq!(a, b);
        }

        #[test]
        fn emitted_checksum_is_the_rfc1071_sum(repr in arb_repr()) {
            // RFC 791 §3.1 / RFC 1071 §4.1: the complement of the 16-bit one's-complement
            // sum of the header with the checksum field zero, summed here word by word.
            let mut a = vec![0u8; repr.buffer_len()];
            repr.emit(&mut Packet::new_unchecked(&mut a[..]));
            let mut header = a[..repr.header_len()].to_vec();
            header[10..12].fill(0);
            let mut acc: u32 = header.chunks(2).map(|w| u32::from(u16::from_be_bytes([w[0], w[1]]))).sum();
            while acc >> 16 != 0 {
                acc = (acc & 0xffff) + (acc >> 16);
            }
            prop_assert_eq!(u16::from_be_bytes([a[10], a[11]]), !(acc as u16));
        }

        #[test]
        fn parse_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..80)) {
            if let Ok(p) = Packet::new_checked(&bytes[..]) {
                if let Ok(r) = Repr::parse(&p) { for o in r.options.iter() { let _ = o; } }
            }
            let _ = Repr::parse_truncated(&Packet::new_unchecked(&bytes[..]));
            let _ = fragment(&bytes, 68, |_| ());
        }

        #[test]
        fn fragments_cover_payload(len in 0usize..5000, mtu in 68usize..1600) {
            let dgram = udp_datagram(len, Options::empty());
            let mut data = Vec::new();
            let mut expect_off = 0;
            fragment(&dgram, mtu, |f| {
                let p = Packet::new_checked(f).unwrap();
                assert!(f.len() <= mtu && p.verify_checksum());
                assert_eq!(p.frag_offset_bytes(), expect_off);
                if p.more_frags() { assert_eq!(p.payload().len() % 8, 0); }
                expect_off += p.payload().len();
                data.extend_from_slice(p.payload());
            }).unwrap();
            prop_assert_eq!(&data[..], &dgram[20..]);
        }
    }
}
