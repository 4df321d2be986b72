//! Internet Control Message Protocol for IPv4.
//!
//! Standards a reader must know:
//!
//! * RFC 792 — message formats: Echo and Echo Reply, Destination Unreachable, Time
//!   Exceeded, Parameter Problem, each error quoting "the internet header plus the
//!   first 64 bits of the original data datagram"; the checksum over the whole message;
//! * RFC 1191 §4 — Destination Unreachable code 4 ("fragmentation needed and DF set")
//!   carries the Next-Hop MTU in the low 16 bits of the second word (Path MTU Discovery);
//! * RFC 1122 §3.2.2 — the further Destination Unreachable codes 6–12, and §3.3.2:
//!   Time Exceeded code 1 is sent only if fragment zero was received;
//! * RFC 1812 §4.3.2.3, §5.2.7.1 — routers may quote as much of the original as fits in
//!   576 octets; codes 13–15.

use core::fmt;

use crate::ipv4;
use crate::{checksum, Error, Result};

/// The fixed part of every message: type, code, checksum and one 32-bit word (RFC 792).
pub const HEADER_LEN: usize = 8;
/// RFC 792: an error quotes the original IP header plus 64 bits of its data.
pub const QUOTED_DATA_LEN: usize = 8;
/// RFC 1812 §4.3.2.3: an ICMP error datagram should not exceed 576 octets.
pub const MAX_ERROR_DATAGRAM: usize = ipv4::MIN_REASSEMBLY;

crate::enum_with_unknown! {
    /// The Type field (RFC 792; IANA "icmp-parameters").
    pub enum Message(u8) {
        /// RFC 792: Echo Reply.
        EchoReply = 0,
        /// RFC 792: Destination Unreachable.
        DstUnreachable = 3,
        /// RFC 792: Source Quench (deprecated by RFC 6633).
        SourceQuench = 4,
        /// RFC 792: Redirect.
        Redirect = 5,
        /// RFC 792: Echo.
        EchoRequest = 8,
        /// RFC 1256: Router Advertisement.
        RouterAdvert = 9,
        /// RFC 1256: Router Solicitation.
        RouterSolicit = 10,
        /// RFC 792: Time Exceeded.
        TimeExceeded = 11,
        /// RFC 792: Parameter Problem.
        ParamProblem = 12,
        /// RFC 792: Timestamp.
        Timestamp = 13,
        /// RFC 792: Timestamp Reply.
        TimestampReply = 14,
    }
}

crate::enum_with_unknown! {
    /// Destination Unreachable codes (RFC 792, RFC 1122 §3.2.2.1, RFC 1812 §5.2.7.1).
    pub enum DstUnreachable(u8) {
        /// RFC 792: net unreachable.
        NetUnreachable = 0,
        /// RFC 792: host unreachable.
        HostUnreachable = 1,
        /// RFC 792: protocol unreachable.
        ProtoUnreachable = 2,
        /// RFC 792: port unreachable.
        PortUnreachable = 3,
        /// RFC 792 / RFC 1191 §4: fragmentation needed and DF set; carries the next-hop MTU.
        FragRequired = 4,
        /// RFC 792: source route failed.
        SrcRouteFailed = 5,
        /// RFC 1122: destination network unknown.
        DstNetUnknown = 6,
        /// RFC 1122: destination host unknown.
        DstHostUnknown = 7,
        /// RFC 1122: source host isolated.
        SrcHostIsolated = 8,
        /// RFC 1122: communication with destination network administratively prohibited.
        NetProhibited = 9,
        /// RFC 1122: communication with destination host administratively prohibited.
        HostProhibited = 10,
        /// RFC 1122: network unreachable for type of service.
        NetUnreachToS = 11,
        /// RFC 1122: host unreachable for type of service.
        HostUnreachToS = 12,
        /// RFC 1812: communication administratively prohibited.
        CommProhibited = 13,
        /// RFC 1812: host precedence violation.
        HostPrecedenceViolation = 14,
        /// RFC 1812: precedence cutoff in effect.
        PrecedenceCutoff = 15,
    }
}

crate::enum_with_unknown! {
    /// Time Exceeded codes (RFC 792).
    pub enum TimeExceeded(u8) {
        /// Time to live exceeded in transit.
        TtlExpired = 0,
        /// Fragment reassembly time exceeded.
        FragExpired = 1,
    }
}

crate::enum_with_unknown! {
    /// Parameter Problem codes (RFC 792, RFC 1108, RFC 1812 §5.2.7.3).
    pub enum ParamProblem(u8) {
        /// RFC 792: the pointer indicates the error.
        AtPointer = 0,
        /// RFC 1108: a required option is missing.
        MissingOption = 1,
        /// RFC 1812: bad length.
        BadLength = 2,
    }
}

/// Byte ranges of the message (RFC 792).
pub mod field {
    use crate::Field;

    /// Type.
    pub const TYPE: usize = 0;
    /// Code.
    pub const CODE: usize = 1;
    /// Checksum over the whole ICMP message.
    pub const CHECKSUM: Field = 2..4;
    /// Echo / Echo Reply: Identifier.
    pub const ECHO_IDENT: Field = 4..6;
    /// Echo / Echo Reply: Sequence Number.
    pub const ECHO_SEQNO: Field = 6..8;
    /// Destination Unreachable code 4: Next-Hop MTU (RFC 1191 §4); bytes 4..6 unused.
    pub const NEXT_HOP_MTU: Field = 6..8;
    /// Parameter Problem: Pointer to the octet in error.
    pub const POINTER: usize = 4;
    /// Redirect: Gateway Internet Address.
    pub const GATEWAY: Field = 4..8;
    /// The second 32-bit word, whatever it holds.
    pub const REST_OF_HEADER: Field = 4..8;
    /// Echo data, or the quoted original datagram of an error.
    pub const DATA: usize = 8;
}

#[inline]
fn be16(data: &[u8], f: crate::Field) -> u16 {
    u16::from_be_bytes([data[f.start], data[f.start + 1]])
}

/// The part of `original` an error message quotes per RFC 792: its IP header with
/// options plus the first 8 data octets (less if the datagram is shorter).
pub fn quote(original: &[u8]) -> Result<&[u8]> {
    let packet = ipv4::Packet::new_unchecked(original);
    packet.check_header_len()?;
    let end = (packet.header_len() + QUOTED_DATA_LEN).min(original.len());
    Ok(&original[..end])
}

/// The part of `original` a router quotes per RFC 1812 §4.3.2.3: as much as fits in an
/// ICMP error datagram of at most `max_datagram` octets (576 there) carried in an IP
/// header of `ip_header_len`, and never less than [`quote`] gives.
pub fn quote_up_to(original: &[u8], ip_header_len: usize, max_datagram: usize) -> Result<&[u8]> {
    let minimum = quote(original)?.len();
    let room = max_datagram.saturating_sub(ip_header_len + HEADER_LEN);
    Ok(&original[..room.max(minimum).min(original.len())])
}

/// A read/write view of an ICMPv4 message; the buffer is the whole message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Packet<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Packet<T> {
    /// Wraps a buffer without checking it.
    pub const fn new_unchecked(buffer: T) -> Packet<T> {
        Packet { buffer }
    }

    /// Wraps a buffer after [`check_len`](Self::check_len).
    pub fn new_checked(buffer: T) -> Result<Packet<T>> {
        let packet = Self::new_unchecked(buffer);
        packet.check_len()?;
        Ok(packet)
    }

    /// Checks the 8-octet header is present.
    pub fn check_len(&self) -> Result<()> {
        if self.buffer.as_ref().len() < HEADER_LEN {
            Err(Error::Truncated)
        } else {
            Ok(())
        }
    }

    /// Returns the underlying buffer.
    pub fn into_inner(self) -> T {
        self.buffer
    }

    /// RFC 792: Type.
    #[inline]
    pub fn msg_type(&self) -> Message {
        Message::from(self.buffer.as_ref()[field::TYPE])
    }

    /// RFC 792: Code.
    #[inline]
    pub fn msg_code(&self) -> u8 {
        self.buffer.as_ref()[field::CODE]
    }

    /// RFC 792: Checksum.
    #[inline]
    pub fn checksum(&self) -> u16 {
        be16(self.buffer.as_ref(), field::CHECKSUM)
    }

    /// RFC 792 Echo: Identifier.
    #[inline]
    pub fn echo_ident(&self) -> u16 {
        be16(self.buffer.as_ref(), field::ECHO_IDENT)
    }

    /// RFC 792 Echo: Sequence Number.
    #[inline]
    pub fn echo_seq_no(&self) -> u16 {
        be16(self.buffer.as_ref(), field::ECHO_SEQNO)
    }

    /// RFC 1191 §4: Next-Hop MTU of a "fragmentation needed" message.
    #[inline]
    pub fn next_hop_mtu(&self) -> u16 {
        be16(self.buffer.as_ref(), field::NEXT_HOP_MTU)
    }

    /// RFC 792 Parameter Problem: Pointer.
    #[inline]
    pub fn pointer(&self) -> u8 {
        self.buffer.as_ref()[field::POINTER]
    }

    /// RFC 792 Redirect: Gateway Internet Address.
    #[inline]
    pub fn gateway(&self) -> ipv4::Address {
        let d = self.buffer.as_ref();
        ipv4::Address::new(d[4], d[5], d[6], d[7])
    }

    /// The second 32-bit word, raw.
    #[inline]
    pub fn rest_of_header(&self) -> [u8; 4] {
        let d = self.buffer.as_ref();
        [d[4], d[5], d[6], d[7]]
    }

    /// RFC 792: true when the one's-complement sum over the whole message is all ones.
    pub fn verify_checksum(&self) -> bool {
        checksum::sum(self.buffer.as_ref()) == 0xffff
    }
}

impl<'a, T: AsRef<[u8]> + ?Sized> Packet<&'a T> {
    /// Echo data or the quoted datagram.
    pub fn data(&self) -> &'a [u8] {
        &self.buffer.as_ref()[field::DATA..]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    /// Sets Type.
    #[inline]
    pub fn set_msg_type(&mut self, value: Message) {
        self.buffer.as_mut()[field::TYPE] = value.into();
    }

    /// Sets Code.
    #[inline]
    pub fn set_msg_code(&mut self, value: u8) {
        self.buffer.as_mut()[field::CODE] = value;
    }

    /// Sets the Checksum field as given.
    #[inline]
    pub fn set_checksum(&mut self, value: u16) {
        self.buffer.as_mut()[field::CHECKSUM].copy_from_slice(&value.to_be_bytes());
    }

    /// Sets the Echo Identifier.
    #[inline]
    pub fn set_echo_ident(&mut self, value: u16) {
        self.buffer.as_mut()[field::ECHO_IDENT].copy_from_slice(&value.to_be_bytes());
    }

    /// Sets the Echo Sequence Number.
    #[inline]
    pub fn set_echo_seq_no(&mut self, value: u16) {
        self.buffer.as_mut()[field::ECHO_SEQNO].copy_from_slice(&value.to_be_bytes());
    }

    /// Sets the Next-Hop MTU (RFC 1191 §4).
    #[inline]
    pub fn set_next_hop_mtu(&mut self, value: u16) {
        self.buffer.as_mut()[field::NEXT_HOP_MTU].copy_from_slice(&value.to_be_bytes());
    }

    /// Sets the Parameter Problem Pointer.
    #[inline]
    pub fn set_pointer(&mut self, value: u8) {
        self.buffer.as_mut()[field::POINTER] = value;
    }

    /// Sets the Redirect Gateway.
    #[inline]
    pub fn set_gateway(&mut self, value: ipv4::Address) {
        self.buffer.as_mut()[field::GATEWAY].copy_from_slice(&value.octets());
    }

    /// Sets the second 32-bit word, raw.
    #[inline]
    pub fn set_rest_of_header(&mut self, value: [u8; 4]) {
        self.buffer.as_mut()[field::REST_OF_HEADER].copy_from_slice(&value);
    }

    /// Computes and writes the checksum over the whole message (RFC 792).
    pub fn fill_checksum(&mut self) {
        self.set_checksum(0);
        let sum = checksum::checksum(self.buffer.as_ref());
        self.set_checksum(sum);
    }

    /// Echo data or the quoted datagram, mutable.
    pub fn data_mut(&mut self) -> &mut [u8] {
        &mut self.buffer.as_mut()[field::DATA..]
    }
}

impl<T: AsRef<[u8]>> AsRef<[u8]> for Packet<T> {
    fn as_ref(&self) -> &[u8] {
        self.buffer.as_ref()
    }
}

/// An ICMPv4 message as plain values. Error messages borrow the quoted original
/// datagram (`header`: its IP header with options and at least 8 data octets, or
/// fewer if the original was shorter), kept byte-exact.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Repr<'a> {
    /// RFC 792 Echo (type 8).
    EchoRequest { ident: u16, seq_no: u16, data: &'a [u8] },
    /// RFC 792 Echo Reply (type 0).
    EchoReply { ident: u16, seq_no: u16, data: &'a [u8] },
    /// RFC 792 Destination Unreachable (type 3); `next_hop_mtu` per RFC 1191 §4 for
    /// code 4, zero otherwise.
    DstUnreachable { reason: DstUnreachable, next_hop_mtu: u16, header: &'a [u8] },
    /// RFC 792 Time Exceeded (type 11).
    TimeExceeded { reason: TimeExceeded, header: &'a [u8] },
    /// RFC 792 Parameter Problem (type 12).
    ParamProblem { reason: ParamProblem, pointer: u8, header: &'a [u8] },
}

impl<'a> Repr<'a> {
    /// Parses a message, verifying its checksum. Echo codes other than 0 are malformed;
    /// an error message must quote at least an IPv4 header (version 4, IHL octets
    /// present). Other types are `Unsupported`.
    pub fn parse<T: AsRef<[u8]> + ?Sized>(packet: &Packet<&'a T>) -> Result<Repr<'a>> {
        packet.check_len()?;
        if !packet.verify_checksum() {
            return Err(Error::Checksum);
        }
        let quoted = |data: &'a [u8]| -> Result<&'a [u8]> {
            let ip = ipv4::Packet::new_unchecked(data);
            ip.check_header_len()?;
            if ip.version() != 4 {
                return Err(Error::Malformed);
            }
            Ok(data)
        };
        match (packet.msg_type(), packet.msg_code()) {
            (Message::EchoRequest, 0) => {
                Ok(Repr::EchoRequest { ident: packet.echo_ident(), seq_no: packet.echo_seq_no(), data: packet.data() })
            }
            (Message::EchoReply, 0) => {
                Ok(Repr::EchoReply { ident: packet.echo_ident(), seq_no: packet.echo_seq_no(), data: packet.data() })
            }
            (Message::EchoRequest | Message::EchoReply, _) => Err(Error::Malformed),
            (Message::DstUnreachable, code) => Ok(Repr::DstUnreachable {
                reason: DstUnreachable::from(code),
                next_hop_mtu: packet.next_hop_mtu(),
                header: quoted(packet.data())?,
            }),
            (Message::TimeExceeded, code) => {
                Ok(Repr::TimeExceeded { reason: TimeExceeded::from(code), header: quoted(packet.data())? })
            }
            (Message::ParamProblem, code) => Ok(Repr::ParamProblem {
                reason: ParamProblem::from(code),
                pointer: packet.pointer(),
                header: quoted(packet.data())?,
            }),
            _ => Err(Error::Unsupported),
        }
    }

    /// "Fragmentation needed and DF set" for the datagram `original`, advertising
    /// `mtu` (RFC 1191 §4), quoting its header and 8 octets (RFC 792).
    pub fn frag_required(original: &'a [u8], mtu: u16) -> Result<Repr<'a>> {
        Ok(Repr::DstUnreachable { reason: DstUnreachable::FragRequired, next_hop_mtu: mtu, header: quote(original)? })
    }

    /// The quoted original datagram of an error message, `None` for Echo.
    pub fn quoted(&self) -> Option<&'a [u8]> {
        match *self {
            Repr::DstUnreachable { header, .. }
            | Repr::TimeExceeded { header, .. }
            | Repr::ParamProblem { header, .. } => Some(header),
            _ => None,
        }
    }

    /// The quoted IP header of an error, parsed without requiring its data
    /// ([`ipv4::Repr::parse_truncated`]); `None` for Echo.
    pub fn quoted_ip_repr(&self) -> Option<Result<ipv4::Repr>> {
        self.quoted().map(|q| ipv4::Repr::parse_truncated(&ipv4::Packet::new_unchecked(q)))
    }

    /// Octets of the whole message.
    pub fn buffer_len(&self) -> usize {
        HEADER_LEN
            + match *self {
                Repr::EchoRequest { data, .. } | Repr::EchoReply { data, .. } => data.len(),
                Repr::DstUnreachable { header, .. }
                | Repr::TimeExceeded { header, .. }
                | Repr::ParamProblem { header, .. } => header.len(),
            }
    }

    /// The fixed header, 8.
    pub const fn header_len(&self) -> usize {
        HEADER_LEN
    }

    /// Writes the whole message and its checksum. Panics if the buffer is shorter than
    /// [`buffer_len`](Self::buffer_len); the checksum covers exactly `buffer_len()` octets.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, packet: &mut Packet<T>) {
        let len = self.buffer_len();
        let mut p = Packet::new_unchecked(&mut packet.buffer.as_mut()[..len]);
        p.set_rest_of_header([0; 4]);
        let data = match *self {
            Repr::EchoRequest { ident, seq_no, data } | Repr::EchoReply { ident, seq_no, data } => {
                let request = matches!(self, Repr::EchoRequest { .. });
                p.set_msg_type(if request { Message::EchoRequest } else { Message::EchoReply });
                p.set_msg_code(0);
                p.set_echo_ident(ident);
                p.set_echo_seq_no(seq_no);
                data
            }
            Repr::DstUnreachable { reason, next_hop_mtu, header } => {
                p.set_msg_type(Message::DstUnreachable);
                p.set_msg_code(reason.into());
                p.set_next_hop_mtu(next_hop_mtu);
                header
            }
            Repr::TimeExceeded { reason, header } => {
                p.set_msg_type(Message::TimeExceeded);
                p.set_msg_code(reason.into());
                header
            }
            Repr::ParamProblem { reason, pointer, header } => {
                p.set_msg_type(Message::ParamProblem);
                p.set_msg_code(reason.into());
                p.set_pointer(pointer);
                header
            }
        };
        p.data_mut().copy_from_slice(data);
        p.fill_checksum();
    }

    /// Appends the whole message to `out`.
    pub fn encapsulate(&self, out: &mut Vec<u8>) {
        let start = out.len();
        out.resize(start + self.buffer_len(), 0);
        self.emit(&mut Packet::new_unchecked(&mut out[start..]));
    }

    /// The octets of the ICMP header, field by field (RFC 792), for `qoslab mtu`; echo
    /// data and quoted datagrams are payload.
    pub fn overhead_fields(&self, _payload_len: usize) -> Vec<(&'static str, usize)> {
        let mut fields = vec![("type", 1), ("code", 1), ("checksum", 2)];
        match self {
            Repr::EchoRequest { .. } | Repr::EchoReply { .. } => {
                fields.extend([("identifier", 2), ("sequence number", 2)])
            }
            Repr::DstUnreachable { .. } => fields.extend([("unused", 2), ("next-hop MTU", 2)]),
            Repr::TimeExceeded { .. } => fields.push(("unused", 4)),
            Repr::ParamProblem { .. } => fields.extend([("pointer", 1), ("unused", 3)]),
        }
        fields
    }
}

impl fmt::Display for Repr<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Repr::EchoRequest { ident, seq_no, data } => {
                write!(f, "ICMPv4 echo request id={ident} seq={seq_no} len={}", data.len())
            }
            Repr::EchoReply { ident, seq_no, data } => {
                write!(f, "ICMPv4 echo reply id={ident} seq={seq_no} len={}", data.len())
            }
            Repr::DstUnreachable { reason, next_hop_mtu, .. } => {
                write!(f, "ICMPv4 destination unreachable {reason:?}")?;
                if *reason == DstUnreachable::FragRequired {
                    write!(f, " mtu={next_hop_mtu}")?;
                }
                Ok(())
            }
            Repr::TimeExceeded { reason, .. } => write!(f, "ICMPv4 time exceeded {reason:?}"),
            Repr::ParamProblem { reason, pointer, .. } => write!(f, "ICMPv4 parameter problem {reason:?} at {pointer}"),
        }
    }
}

#[cfg(test)]
mod test {
    use super::*;
    use proptest::prelude::*;

    // Echo request, id 0x1234, seq 1, data "abcdefgh". Checksum by hand:
    // 0800 + 0000 + 1234 + 0001 + 6162 + 6364 + 6566 + 6768 = 0x1_abc9 -> 0xabca; ~ = 0x5435.
    static ECHO_BYTES: [u8; 16] =
        [0x08, 0x00, 0x54, 0x35, 0x12, 0x34, 0x00, 0x01, 0x61, 0x62, 0x63, 0x64, 0x65, 0x66, 0x67, 0x68];

    // The original: an IPv4/UDP header (from ipv4's test vector) plus 8 octets of UDP.
    static ORIGINAL: [u8; 32] = [
        0x45, 0x00, 0x05, 0xdc, 0x1c, 0x46, 0x40, 0x00, 0x40, 0x11, 0x00, 0x00, 0xc0, 0xa8, 0x01, 0x01, 0xc0, 0xa8,
        0x01, 0x02, 0xc0, 0x00, 0x00, 0x35, 0x05, 0xc8, 0x00, 0x00, 0xaa, 0xbb, 0xcc, 0xdd,
    ];

    fn original() -> Vec<u8> {
        let mut o = ORIGINAL.to_vec();
        ipv4::Packet::new_unchecked(&mut o[..]).fill_checksum();
        o
    }

    #[test]
    fn test_checksum_by_hand() {
        let words: u32 = [0x0800u32, 0, 0x1234, 0x0001, 0x6162, 0x6364, 0x6566, 0x6768].iter().sum();
        let folded = (words & 0xffff) + (words >> 16);
        assert_eq!(!(folded as u16), 0x5435);
    }

    #[test]
    fn test_parse_echo() {
        let p = Packet::new_checked(&ECHO_BYTES[..]).unwrap();
        assert_eq!(p.msg_type(), Message::EchoRequest);
        assert_eq!(p.msg_code(), 0);
        assert_eq!(p.checksum(), 0x5435);
        assert_eq!(p.echo_ident(), 0x1234);
        assert_eq!(p.echo_seq_no(), 1);
        assert!(p.verify_checksum());
        assert_eq!(Repr::parse(&p).unwrap(), Repr::EchoRequest { ident: 0x1234, seq_no: 1, data: b"abcdefgh" });
    }

    #[test]
    fn test_emit_echo() {
        let repr = Repr::EchoRequest { ident: 0x1234, seq_no: 1, data: b"abcdefgh" };
        let mut v = Vec::new();
        repr.encapsulate(&mut v);
        assert_eq!(v, ECHO_BYTES);
        let reply = Repr::EchoReply { ident: 0x1234, seq_no: 1, data: b"abcdefgh" };
        let mut r = Vec::new();
        reply.encapsulate(&mut r);
        assert_eq!(r[0], 0);
        // Type 8 -> 0 changes the first word by 0x0800, so the checksum by +0x0800.
        assert_eq!(u16::from_be_bytes([r[2], r[3]]), 0x5435 + 0x0800);
    }

    #[test]
    fn test_frag_required() {
        let orig = original();
        let repr = Repr::frag_required(&orig, 1400).unwrap();
        assert_eq!(repr.quoted().unwrap().len(), 28);
        let mut v = Vec::new();
        repr.encapsulate(&mut v);
        assert_eq!(&v[..2], &[3, 4]);
        assert_eq!(&v[4..8], &[0, 0, 0x05, 0x78]);
        assert_eq!(&v[8..], &orig[..28]);
        let p = Packet::new_checked(&v[..]).unwrap();
        assert_eq!(p.next_hop_mtu(), 1400);
        let parsed = Repr::parse(&p).unwrap();
        assert_eq!(parsed, repr);
        let ip = parsed.quoted_ip_repr().unwrap().unwrap();
        assert_eq!(ip.payload_len, 1480);
        assert!(ip.dont_frag);
    }

    #[test]
    fn test_time_exceeded_and_param_problem() {
        let orig = original();
        for repr in [
            Repr::TimeExceeded { reason: TimeExceeded::FragExpired, header: &orig[..28] },
            Repr::ParamProblem { reason: ParamProblem::AtPointer, pointer: 9, header: &orig[..28] },
            Repr::DstUnreachable { reason: DstUnreachable::Unknown(99), next_hop_mtu: 0, header: &orig },
        ] {
            let mut v = Vec::new();
            repr.encapsulate(&mut v);
            assert_eq!(Repr::parse(&Packet::new_checked(&v[..]).unwrap()).unwrap(), repr);
        }
        assert_eq!(quote_up_to(&orig, 20, 576).unwrap().len(), 32);
        assert_eq!(quote_up_to(&orig, 20, 40).unwrap().len(), 28);
    }

    #[test]
    fn test_errors() {
        assert_eq!(Packet::new_checked(&ECHO_BYTES[..7]).unwrap_err(), Error::Truncated);
        let mut bad = ECHO_BYTES;
        bad[15] ^= 1;
        assert_eq!(Repr::parse(&Packet::new_unchecked(&bad[..])).unwrap_err(), Error::Checksum);
        let mut bad = ECHO_BYTES;
        bad[1] = 1;
        Packet::new_unchecked(&mut bad[..]).fill_checksum();
        assert_eq!(Repr::parse(&Packet::new_unchecked(&bad[..])).unwrap_err(), Error::Malformed);
        let mut bad = ECHO_BYTES;
        bad[0] = 13;
        Packet::new_unchecked(&mut bad[..]).fill_checksum();
        assert_eq!(Repr::parse(&Packet::new_unchecked(&bad[..])).unwrap_err(), Error::Unsupported);
        // An error quoting less than an IP header.
        let mut short = vec![3, 1, 0, 0, 0, 0, 0, 0, 0x45, 0, 0, 20];
        Packet::new_unchecked(&mut short[..]).fill_checksum();
        assert_eq!(Repr::parse(&Packet::new_unchecked(&short[..])).unwrap_err(), Error::Truncated);
        assert_eq!(quote(&ORIGINAL[..10]).unwrap_err(), Error::Truncated);
    }

    proptest! {
        #[test]
        fn roundtrip(kind in 0..5u8, a in any::<u16>(), b in any::<u16>(), code in any::<u8>(),
                     data in proptest::collection::vec(any::<u8>(), 0..64)) {
            let orig = original();
            let quoted = &orig[..(20 + data.len() % 13).min(32)];
            let repr = match kind {
                0 => Repr::EchoRequest { ident: a, seq_no: b, data: &data },
                1 => Repr::EchoReply { ident: a, seq_no: b, data: &data },
                2 => Repr::DstUnreachable { reason: DstUnreachable::from(code), next_hop_mtu: b, header: quoted },
                3 => Repr::TimeExceeded { reason: TimeExceeded::from(code), header: quoted },
                _ => Repr::ParamProblem { reason: ParamProblem::from(code), pointer: code, header: quoted },
            };
            let mut x = Vec::new();
            repr.encapsulate(&mut x);
            let parsed = Repr::parse(&Packet::new_checked(&x[..]).unwrap()).unwrap();
            prop_assert_eq!(parsed, repr);
            let mut y = Vec::new();
            parsed.encapsulate(&mut y);
            prop_assert_eq!(x, y);
        }

        #[test]
        fn parse_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
            if let Ok(p) = Packet::new_checked(&bytes[..]) {
                if let Ok(r) = Repr::parse(&p) { let _ = r.quoted_ip_repr(); }
            }
        }
    }
}
