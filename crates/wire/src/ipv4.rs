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

/// A read/write view of an IPv4 packet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Packet<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Packet<T> {
    /// Wraps a buffer without checking it; getters may panic on a short buffer.
    pub const fn new_unchecked(buffer: T) -> Packet<T> {
        Packet { buffer }
    }

    /// Wraps a buffer after [`check_len`](Self::check_len).
    pub fn new_checked(buffer: T) -> Result<Packet<T>> {
        let packet = Self::new_unchecked(buffer);
        packet.check_len()?;
        Ok(packet)
    }

    /// Checks that the fixed header, the options (IHL) and the data (Total Length) are
    /// all inside the buffer and that IHL ≥ 5 and Total Length ≥ IHL*4 (RFC 791 §3.1).
    /// The buffer may be longer than Total Length (link-layer padding); the extra bytes
    /// are not part of [`payload`](Self::payload).
    pub fn check_len(&self) -> Result<()> {
        self.check_header_len()?;
        let len = self.buffer.as_ref().len();
        let total = usize::from(self.total_len());
        if total < self.header_len() {
            Err(Error::Malformed)
        } else if len < total {
            Err(Error::Truncated)
        } else {
            Ok(())
        }
    }

    /// Checks only that the header with its options is present, for a header quoted in
    /// an ICMP error (RFC 792), whose data is cut after 8 octets.
    pub fn check_header_len(&self) -> Result<()> {
        let len = self.buffer.as_ref().len();
        if len < HEADER_LEN {
            return Err(Error::Truncated);
        }
        let header_len = self.header_len();
        if header_len < HEADER_LEN {
            Err(Error::Malformed)
        } else if len < header_len {
            Err(Error::Truncated)
        } else {
            Ok(())
        }
    }

    /// Returns the underlying buffer.
    pub fn into_inner(self) -> T {
        self.buffer
    }

    /// RFC 791 §3.1: Version, 4 for IPv4.
    #[inline]
    pub fn version(&self) -> u8 {
        self.buffer.as_ref()[field::VER_IHL] >> 4
    }

    /// RFC 791 §3.1: Internet Header Length in 32-bit words (5..=15).
    #[inline]
    pub fn ihl(&self) -> u8 {
        self.buffer.as_ref()[field::VER_IHL] & 0x0f
    }

    /// The header length in octets, IHL*4.
    #[inline]
    pub fn header_len(&self) -> usize {
        usize::from(self.ihl()) * 4
    }

    /// RFC 791 §3.1: the Type of Service octet.
    #[inline]
    pub fn tos(&self) -> u8 {
        self.buffer.as_ref()[field::TOS]
    }

    /// RFC 2474 §3: the Differentiated Services Code Point, the high 6 bits of TOS.
    #[inline]
    pub fn dscp(&self) -> u8 {
        self.tos() >> 2
    }

    /// RFC 3168 §5: the ECN field, the low 2 bits of TOS.
    #[inline]
    pub fn ecn(&self) -> u8 {
        self.tos() & 0x03
    }

    /// RFC 791 §3.1: Total Length, header and data, in octets.
    #[inline]
    pub fn total_len(&self) -> u16 {
        be16(self.buffer.as_ref(), field::LENGTH)
    }

    /// RFC 791 §3.1: Identification.
    #[inline]
    pub fn ident(&self) -> u16 {
        be16(self.buffer.as_ref(), field::IDENT)
    }

    /// RFC 791 §3.1: the reserved flag (bit 0), which must be zero.
    #[inline]
    pub fn reserved_flag(&self) -> bool {
        be16(self.buffer.as_ref(), field::FLG_OFF) & FLAG_RESERVED != 0
    }

    /// RFC 791 §3.1: Don't Fragment.
    #[inline]
    pub fn dont_frag(&self) -> bool {
        be16(self.buffer.as_ref(), field::FLG_OFF) & FLAG_DF != 0
    }

    /// RFC 791 §3.1: More Fragments.
    #[inline]
    pub fn more_frags(&self) -> bool {
        be16(self.buffer.as_ref(), field::FLG_OFF) & FLAG_MF != 0
    }

    /// RFC 791 §3.1: Fragment Offset, in units of 8 octets, as on the wire.
    #[inline]
    pub fn frag_offset(&self) -> u16 {
        be16(self.buffer.as_ref(), field::FLG_OFF) & OFFSET_MASK
    }

    /// The Fragment Offset in octets (the field times 8).
    #[inline]
    pub fn frag_offset_bytes(&self) -> usize {
        usize::from(self.frag_offset()) * FRAG_UNIT
    }

    /// True when this packet is a fragment: MF set or a non-zero offset (RFC 791 §3.2).
    #[inline]
    pub fn is_fragment(&self) -> bool {
        be16(self.buffer.as_ref(), field::FLG_OFF) & (FLAG_MF | OFFSET_MASK) != 0
    }

    /// RFC 791 §3.1: Time to Live.
    #[inline]
    pub fn ttl(&self) -> u8 {
        self.buffer.as_ref()[field::TTL]
    }

    /// Alias of [`ttl`](Self::ttl), with smoltcp's name.
    #[inline]
    pub fn hop_limit(&self) -> u8 {
        self.ttl()
    }

    /// RFC 791 §3.1: Protocol.
    #[inline]
    pub fn next_header(&self) -> Protocol {
        Protocol::from(self.buffer.as_ref()[field::PROTOCOL])
    }

    /// RFC 791 §3.1: Header Checksum.
    #[inline]
    pub fn checksum(&self) -> u16 {
        be16(self.buffer.as_ref(), field::CHECKSUM)
    }

    /// RFC 791 §3.1: Source Address.
    #[inline]
    pub fn src_addr(&self) -> Address {
        let d = self.buffer.as_ref();
        Address::new(d[12], d[13], d[14], d[15])
    }

    /// RFC 791 §3.1: Destination Address.
    #[inline]
    pub fn dst_addr(&self) -> Address {
        let d = self.buffer.as_ref();
        Address::new(d[16], d[17], d[18], d[19])
    }

    /// RFC 791 §3.1: true when the one's-complement sum of the header is all ones.
    pub fn verify_checksum(&self) -> bool {
        let data = self.buffer.as_ref();
        checksum::sum_words32(&data[..self.header_len()]) == 0xffff
    }

    /// RFC 791 §3.1: the options bytes, including any end-of-list padding.
    pub fn options(&self) -> &[u8] {
        &self.buffer.as_ref()[field::OPTIONS_START..self.header_len()]
    }

    /// The header bytes, options included.
    pub fn header(&self) -> &[u8] {
        &self.buffer.as_ref()[..self.header_len()]
    }
}

impl<'a, T: AsRef<[u8]> + ?Sized> Packet<&'a T> {
    /// The data after the header, up to Total Length (link padding excluded).
    pub fn payload(&self) -> &'a [u8] {
        let data = self.buffer.as_ref();
        &data[self.header_len()..usize::from(self.total_len())]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    /// Sets Version.
    #[inline]
    pub fn set_version(&mut self, value: u8) {
        let d = self.buffer.as_mut();
        d[field::VER_IHL] = (d[field::VER_IHL] & 0x0f) | (value << 4);
    }

    /// Sets IHL from a header length in octets (a multiple of 4, 20..=60).
    #[inline]
    pub fn set_header_len(&mut self, value: usize) {
        let d = self.buffer.as_mut();
        d[field::VER_IHL] = (d[field::VER_IHL] & 0xf0) | ((value / 4) as u8 & 0x0f);
    }

    /// Sets the Type of Service octet.
    #[inline]
    pub fn set_tos(&mut self, value: u8) {
        self.buffer.as_mut()[field::TOS] = value;
    }

    /// Sets the DSCP (RFC 2474), keeping ECN.
    #[inline]
    pub fn set_dscp(&mut self, value: u8) {
        let tos = (self.tos() & 0x03) | (value << 2);
        self.set_tos(tos);
    }

    /// Sets the ECN field (RFC 3168), keeping DSCP.
    #[inline]
    pub fn set_ecn(&mut self, value: u8) {
        let tos = (self.tos() & 0xfc) | (value & 0x03);
        self.set_tos(tos);
    }

    /// Sets Total Length.
    #[inline]
    pub fn set_total_len(&mut self, value: u16) {
        self.buffer.as_mut()[field::LENGTH].copy_from_slice(&value.to_be_bytes());
    }

    /// Sets Identification.
    #[inline]
    pub fn set_ident(&mut self, value: u16) {
        self.buffer.as_mut()[field::IDENT].copy_from_slice(&value.to_be_bytes());
    }

    #[inline]
    fn set_flg_off(&mut self, mask: u16, value: u16) {
        let raw = be16(self.buffer.as_ref(), field::FLG_OFF);
        let raw = (raw & !mask) | (value & mask);
        self.buffer.as_mut()[field::FLG_OFF].copy_from_slice(&raw.to_be_bytes());
    }

    /// Clears the three flags.
    #[inline]
    pub fn clear_flags(&mut self) {
        self.set_flg_off(0xe000, 0);
    }

    /// Sets the reserved flag (RFC 791 §3.1; RFC 3514 is a joke).
    #[inline]
    pub fn set_reserved_flag(&mut self, value: bool) {
        self.set_flg_off(FLAG_RESERVED, if value { FLAG_RESERVED } else { 0 });
    }

    /// Sets Don't Fragment.
    #[inline]
    pub fn set_dont_frag(&mut self, value: bool) {
        self.set_flg_off(FLAG_DF, if value { FLAG_DF } else { 0 });
    }

    /// Sets More Fragments.
    #[inline]
    pub fn set_more_frags(&mut self, value: bool) {
        self.set_flg_off(FLAG_MF, if value { FLAG_MF } else { 0 });
    }

    /// Sets Fragment Offset in 8-octet units (the low 13 bits are kept).
    #[inline]
    pub fn set_frag_offset(&mut self, units: u16) {
        self.set_flg_off(OFFSET_MASK, units);
    }

    /// Sets Fragment Offset from octets, which must be a multiple of 8 below 65,536.
    #[inline]
    pub fn set_frag_offset_bytes(&mut self, bytes: usize) {
        debug_assert!(bytes & (FRAG_UNIT - 1) == 0, "fragment offset {bytes} is not a multiple of 8");
        self.set_frag_offset((bytes / FRAG_UNIT) as u16);
    }

    /// Sets Time to Live.
    #[inline]
    pub fn set_ttl(&mut self, value: u8) {
        self.buffer.as_mut()[field::TTL] = value;
    }

    /// A router's hop (RFC 1812 §5.3.1): Time to Live lowered by one (it must be at
    /// least 1) and the Header Checksum updated incrementally by RFC 1624 Eqn. 3,
    /// HC' = ~(~HC + ~m + m'), m the 16-bit word of TTL and Protocol. For a header whose
    /// checksum verifies (the caller checked it), the result equals a full recompute
    /// ([`fill_checksum`](Self::fill_checksum)): both are the complement of the one
    /// non-zero 16-bit one's-complement value congruent to the new header's sum.
    #[inline]
    pub fn decrement_ttl(&mut self) {
        let data = self.buffer.as_mut();
        let ttl = data[field::TTL];
        debug_assert!(ttl >= 1, "decrement_ttl on TTL 0");
        let old = u16::from_be_bytes([ttl, data[field::PROTOCOL]]);
        let new = u16::from_be_bytes([ttl - 1, data[field::PROTOCOL]]);
        let hc = be16(data, field::CHECKSUM);
        let sum = u32::from(!hc) + u32::from(!old) + u32::from(new);
        data[field::TTL] = ttl - 1;
        data[field::CHECKSUM].copy_from_slice(&(!checksum::fold(sum)).to_be_bytes());
    }

    /// Alias of [`set_ttl`](Self::set_ttl).
    #[inline]
    pub fn set_hop_limit(&mut self, value: u8) {
        self.set_ttl(value);
    }

    /// Sets Protocol.
    #[inline]
    pub fn set_next_header(&mut self, value: Protocol) {
        self.buffer.as_mut()[field::PROTOCOL] = value.into();
    }

    /// Sets the Header Checksum field as given.
    #[inline]
    pub fn set_checksum(&mut self, value: u16) {
        self.buffer.as_mut()[field::CHECKSUM].copy_from_slice(&value.to_be_bytes());
    }

    /// Sets Source Address.
    #[inline]
    pub fn set_src_addr(&mut self, value: Address) {
        self.buffer.as_mut()[field::SRC_ADDR].copy_from_slice(&value.octets());
    }

    /// Sets Destination Address.
    #[inline]
    pub fn set_dst_addr(&mut self, value: Address) {
        self.buffer.as_mut()[field::DST_ADDR].copy_from_slice(&value.octets());
    }

    /// Computes and writes the Header Checksum (RFC 791 §3.1, RFC 1071).
    pub fn fill_checksum(&mut self) {
        self.set_checksum(0);
        let header_len = self.header_len();
        let sum = !checksum::sum_words32(&self.buffer.as_ref()[..header_len]);
        self.set_checksum(sum);
    }

    /// The options bytes, mutable.
    pub fn options_mut(&mut self) -> &mut [u8] {
        let header_len = self.header_len();
        &mut self.buffer.as_mut()[field::OPTIONS_START..header_len]
    }

    /// The data after the header up to Total Length, mutable.
    pub fn payload_mut(&mut self) -> &mut [u8] {
        let (start, end) = (self.header_len(), usize::from(self.total_len()));
        &mut self.buffer.as_mut()[start..end]
    }
}

impl<T: AsRef<[u8]>> AsRef<[u8]> for Packet<T> {
    fn as_ref(&self) -> &[u8] {
        self.buffer.as_ref()
    }
}

crate::enum_with_unknown! {
    /// The option-type octet (RFC 791 §3.1, Options; IANA "ip-parameters").
    /// Bit 0 is the copied flag, bits 1-2 the class, bits 3-7 the number.
    pub enum OptionKind(u8) {
        /// RFC 791: End of Option List (type 0).
        EndOfList = 0,
        /// RFC 791: No Operation (type 1).
        NoOperation = 1,
        /// RFC 791: Record Route (type 7).
        RecordRoute = 7,
        /// RFC 791: Internet Timestamp (type 68).
        Timestamp = 68,
        /// RFC 1108: Security (type 130).
        Security = 130,
        /// RFC 791: Loose Source and Record Route (type 131).
        LooseSourceRoute = 131,
        /// RFC 791: Stream Identifier (type 136), obsolete.
        StreamId = 136,
        /// RFC 791: Strict Source and Record Route (type 137).
        StrictSourceRoute = 137,
        /// RFC 2113: Router Alert (type 148).
        RouterAlert = 148,
    }
}

impl OptionKind {
    /// RFC 791 §3.1: the copied flag; when set the option is copied into all fragments.
    pub fn copied(self) -> bool {
        u8::from(self) & 0x80 != 0
    }

    /// RFC 791 §3.1: the option class (0 control, 2 debugging and measurement).
    pub fn class(self) -> u8 {
        (u8::from(self) >> 5) & 0x03
    }

    /// RFC 791 §3.1: the option number.
    pub fn number(self) -> u8 {
        u8::from(self) & 0x1f
    }
}

/// One IPv4 option, borrowed from the options bytes (RFC 791 §3.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ipv4Option<'a> {
    /// End of Option List: the remaining bytes are padding.
    EndOfList,
    /// No Operation, used to align the next option.
    NoOperation,
    /// Record Route: `pointer` (1-based, minimum 4) and the route data (4 bytes per address).
    RecordRoute { pointer: u8, route: &'a [u8] },
    /// Loose Source and Record Route, same layout as Record Route.
    LooseSourceRoute { pointer: u8, route: &'a [u8] },
    /// Strict Source and Record Route, same layout as Record Route.
    StrictSourceRoute { pointer: u8, route: &'a [u8] },
    /// Internet Timestamp: pointer (minimum 5), overflow (4 bits), flag (4 bits) and data.
    Timestamp { pointer: u8, overflow: u8, flags: u8, data: &'a [u8] },
    /// RFC 2113 Router Alert, value 0 = "router shall examine packet".
    RouterAlert { value: u16 },
    /// Any other option, kept as its type and the bytes after the length octet.
    Unknown { kind: u8, data: &'a [u8] },
}

impl<'a> Ipv4Option<'a> {
    /// The option-type octet.
    pub fn kind(&self) -> OptionKind {
        match *self {
            Ipv4Option::EndOfList => OptionKind::EndOfList,
            Ipv4Option::NoOperation => OptionKind::NoOperation,
            Ipv4Option::RecordRoute { .. } => OptionKind::RecordRoute,
            Ipv4Option::LooseSourceRoute { .. } => OptionKind::LooseSourceRoute,
            Ipv4Option::StrictSourceRoute { .. } => OptionKind::StrictSourceRoute,
            Ipv4Option::Timestamp { .. } => OptionKind::Timestamp,
            Ipv4Option::RouterAlert { .. } => OptionKind::RouterAlert,
            Ipv4Option::Unknown { kind, .. } => OptionKind::from(kind),
        }
    }

    /// RFC 791 §3.1: whether the option is copied into every fragment.
    pub fn copied(&self) -> bool {
        self.kind().copied()
    }

    /// Octets this option takes, type and length included.
    pub fn buffer_len(&self) -> usize {
        match *self {
            Ipv4Option::EndOfList | Ipv4Option::NoOperation => 1,
            Ipv4Option::RecordRoute { route, .. }
            | Ipv4Option::LooseSourceRoute { route, .. }
            | Ipv4Option::StrictSourceRoute { route, .. } => 3 + route.len(),
            Ipv4Option::Timestamp { data, .. } => 4 + data.len(),
            Ipv4Option::RouterAlert { .. } => 4,
            Ipv4Option::Unknown { data, .. } => 2 + data.len(),
        }
    }

    /// Parses the option at the start of `buffer`, returning it and the bytes after it.
    pub fn parse(buffer: &'a [u8]) -> Result<(Ipv4Option<'a>, &'a [u8])> {
        let (&kind, _) = buffer.split_first().ok_or(Error::Truncated)?;
        match OptionKind::from(kind) {
            OptionKind::EndOfList => return Ok((Ipv4Option::EndOfList, &buffer[1..])),
            OptionKind::NoOperation => return Ok((Ipv4Option::NoOperation, &buffer[1..])),
            _ => {}
        }
        let len = usize::from(*buffer.get(1).ok_or(Error::Truncated)?);
        if len < 2 {
            return Err(Error::Malformed);
        }
        if buffer.len() < len {
            return Err(Error::Truncated);
        }
        let (body, rest) = (&buffer[2..len], &buffer[len..]);
        let option = match OptionKind::from(kind) {
            k @ (OptionKind::RecordRoute | OptionKind::LooseSourceRoute | OptionKind::StrictSourceRoute) => {
                let (&pointer, route) = body.split_first().ok_or(Error::Malformed)?;
                match k {
                    OptionKind::RecordRoute => Ipv4Option::RecordRoute { pointer, route },
                    OptionKind::LooseSourceRoute => Ipv4Option::LooseSourceRoute { pointer, route },
                    _ => Ipv4Option::StrictSourceRoute { pointer, route },
                }
            }
            OptionKind::Timestamp => {
                if body.len() < 2 {
                    return Err(Error::Malformed);
                }
                Ipv4Option::Timestamp {
                    pointer: body[0],
                    overflow: body[1] >> 4,
                    flags: body[1] & 0x0f,
                    data: &body[2..],
                }
            }
            OptionKind::RouterAlert => {
                if body.len() != 2 {
                    return Err(Error::Malformed);
                }
                Ipv4Option::RouterAlert { value: u16::from_be_bytes([body[0], body[1]]) }
            }
            _ => Ipv4Option::Unknown { kind, data: body },
        };
        Ok((option, rest))
    }

    /// Writes the option at the start of `buffer` and returns the bytes after it.
    /// Panics if `buffer` is shorter than [`buffer_len`](Self::buffer_len) or the option
    /// is longer than 255 octets.
    pub fn emit<'b>(&self, buffer: &'b mut [u8]) -> &'b mut [u8] {
        let len = self.buffer_len();
        let (out, rest) = buffer.split_at_mut(len);
        out[0] = self.kind().into();
        match *self {
            Ipv4Option::EndOfList | Ipv4Option::NoOperation => {}
            Ipv4Option::RecordRoute { pointer, route }
            | Ipv4Option::LooseSourceRoute { pointer, route }
            | Ipv4Option::StrictSourceRoute { pointer, route } => {
                out[1] = len as u8;
                out[2] = pointer;
                out[3..].copy_from_slice(route);
            }
            Ipv4Option::Timestamp { pointer, overflow, flags, data } => {
                out[1] = len as u8;
                out[2] = pointer;
                out[3] = (overflow << 4) | (flags & 0x0f);
                out[4..].copy_from_slice(data);
            }
            Ipv4Option::RouterAlert { value } => {
                out[1] = 4;
                out[2..4].copy_from_slice(&value.to_be_bytes());
            }
            Ipv4Option::Unknown { kind, data } => {
                out[0] = kind;
                out[1] = len as u8;
                out[2..].copy_from_slice(data);
            }
        }
        rest
    }
}

/// Iterates the options of an options area; stops after End of Option List (the rest is
/// padding) and yields one `Err` then stops on a malformed option.
#[derive(Debug, Clone)]
pub struct OptionIter<'a> {
    rest: &'a [u8],
}

impl<'a> OptionIter<'a> {
    /// Iterates raw options bytes, e.g. [`Packet::options`].
    pub fn new(bytes: &'a [u8]) -> Self {
        OptionIter { rest: bytes }
    }
}

impl<'a> Iterator for OptionIter<'a> {
    type Item = Result<Ipv4Option<'a>>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.rest.is_empty() {
            return None;
        }
        match Ipv4Option::parse(self.rest) {
            Ok((Ipv4Option::EndOfList, _)) => {
                self.rest = &[];
                Some(Ok(Ipv4Option::EndOfList))
            }
            Ok((option, rest)) => {
                self.rest = rest;
                Some(Ok(option))
            }
            Err(e) => {
                self.rest = &[];
                Some(Err(e))
            }
        }
    }
}

/// The options area of a header, byte-exact, without allocation (RFC 791 §3.1).
///
/// Invariant: `len <= MAX_OPTIONS_LEN`. A parsed header's options are a multiple of 4
/// long (padding included); options built with [`push`](Self::push) may not be, and
/// [`Repr::emit`] pads them with zero octets (End of Option List), as RFC 791 asks.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Options {
    bytes: [u8; MAX_OPTIONS_LEN],
    len: u8,
}

impl Default for Options {
    fn default() -> Self {
        Self::empty()
    }
}

impl Options {
    /// No options.
    pub const fn empty() -> Options {
        Options { bytes: [0; MAX_OPTIONS_LEN], len: 0 }
    }

    /// Options from raw bytes; `Err(Malformed)` when longer than 40 octets. The bytes are
    /// kept as given, not validated; [`iter`](Self::iter) reports malformed options.
    pub fn new(raw: &[u8]) -> Result<Options> {
        if raw.len() > MAX_OPTIONS_LEN {
            return Err(Error::Malformed);
        }
        let mut options = Options::empty();
        options.bytes[..raw.len()].copy_from_slice(raw);
        options.len = raw.len() as u8;
        Ok(options)
    }

    /// An empty Record Route option with room for `slots` addresses (RFC 791 §3.1,
    /// Record Route: pointer starts at 4), padded with End of Option List.
    pub fn record_route(slots: usize) -> Result<Options> {
        let zeros = [0u8; MAX_OPTIONS_LEN];
        let route = zeros.get(..slots * 4).ok_or(Error::Malformed)?;
        let mut options = Options::empty();
        options.push(&Ipv4Option::RecordRoute { pointer: 4, route })?;
        Ok(options)
    }

    /// The bytes, as they will be written (before padding to a word).
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes[..usize::from(self.len)]
    }

    /// Length in octets before padding.
    pub fn len(&self) -> usize {
        usize::from(self.len)
    }

    /// True when there are no options.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Length once padded to a whole number of 32-bit words.
    pub fn padded_len(&self) -> usize {
        round4(self.len())
    }

    /// Iterates the typed options.
    pub fn iter(&self) -> OptionIter<'_> {
        OptionIter::new(self.as_bytes())
    }

    /// Appends one option; `Err(Truncated)` when it does not fit in 40 octets.
    pub fn push(&mut self, option: &Ipv4Option) -> Result<()> {
        let at = self.len();
        let need = option.buffer_len();
        if at + need > MAX_OPTIONS_LEN || need > 255 {
            return Err(Error::Truncated);
        }
        option.emit(&mut self.bytes[at..at + need]);
        self.len += need as u8;
        Ok(())
    }

    /// The options with the copied flag, for fragments after the first (RFC 791 §3.2,
    /// fragmentation procedure, step "copy options with the copy flag"). NOP and EOL are
    /// not copied; the result is padded by [`Repr::emit`].
    pub fn copied(&self) -> Result<Options> {
        let mut out = Options::empty();
        let mut rest = self.as_bytes();
        while !rest.is_empty() {
            let (option, after) = Ipv4Option::parse(rest)?;
            if option == Ipv4Option::EndOfList {
                break;
            }
            if option.copied() {
                let len = rest.len() - after.len();
                let at = out.len();
                out.bytes[at..at + len].copy_from_slice(&rest[..len]);
                out.len += len as u8;
            }
            rest = after;
        }
        Ok(out)
    }
}

impl fmt::Debug for Options {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

/// The IPv4 header as plain values (RFC 791 §3.1).
///
/// Not kept: the reserved flag (parsed as ignored, emitted as zero) and the checksum
/// (verified by [`parse`](Self::parse), computed by [`emit`](Self::emit)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Repr {
    pub src_addr: Address,
    pub dst_addr: Address,
    /// The Protocol field.
    pub next_header: Protocol,
    /// Octets after the header; header_len() + payload_len ≤ 65,535.
    pub payload_len: usize,
    /// Time to Live.
    pub hop_limit: u8,
    /// The whole TOS octet: DSCP << 2 | ECN.
    pub tos: u8,
    /// Identification.
    pub ident: u16,
    pub dont_frag: bool,
    pub more_frags: bool,
    /// Fragment Offset in 8-octet units, as on the wire (≤ 0x1fff); see
    /// [`frag_offset_bytes`](Self::frag_offset_bytes).
    pub frag_offset: u16,
    pub options: Options,
}

impl Repr {
    /// A plain unfragmented header with no options, TOS 0 and ident 0.
    pub fn new(src_addr: Address, dst_addr: Address, next_header: Protocol, payload_len: usize, hop_limit: u8) -> Repr {
        Repr {
            src_addr,
            dst_addr,
            next_header,
            payload_len,
            hop_limit,
            tos: 0,
            ident: 0,
            dont_frag: false,
            more_frags: false,
            frag_offset: 0,
            options: Options::empty(),
        }
    }

    /// Parses a whole packet: version 4, lengths consistent, checksum good.
    pub fn parse<T: AsRef<[u8]> + ?Sized>(packet: &Packet<&T>) -> Result<Repr> {
        packet.check_len()?;
        Self::parse_header(packet)
    }

    /// Parses a header whose data may be cut short, as quoted in an ICMP error (RFC 792):
    /// only the header must be present; `payload_len` comes from Total Length.
    pub fn parse_truncated<T: AsRef<[u8]> + ?Sized>(packet: &Packet<&T>) -> Result<Repr> {
        packet.check_header_len()?;
        if usize::from(packet.total_len()) < packet.header_len() {
            return Err(Error::Malformed);
        }
        Self::parse_header(packet)
    }

    fn parse_header<T: AsRef<[u8]> + ?Sized>(packet: &Packet<&T>) -> Result<Repr> {
        if packet.version() != 4 {
            return Err(Error::Malformed);
        }
        if !packet.verify_checksum() {
            return Err(Error::Checksum);
        }
        Ok(Repr {
            src_addr: packet.src_addr(),
            dst_addr: packet.dst_addr(),
            next_header: packet.next_header(),
            payload_len: usize::from(packet.total_len()) - packet.header_len(),
            hop_limit: packet.ttl(),
            tos: packet.tos(),
            ident: packet.ident(),
            dont_frag: packet.dont_frag(),
            more_frags: packet.more_frags(),
            frag_offset: packet.frag_offset(),
            options: Options::new(packet.options())?,
        })
    }

    /// Header length in octets, options padded to a word.
    pub fn header_len(&self) -> usize {
        HEADER_LEN + self.options.padded_len()
    }

    /// Header plus payload: what Total Length will say.
    pub fn buffer_len(&self) -> usize {
        self.header_len() + self.payload_len
    }

    /// The DSCP (RFC 2474).
    pub fn dscp(&self) -> u8 {
        self.tos >> 2
    }

    /// The ECN codepoint (RFC 3168).
    pub fn ecn(&self) -> u8 {
        self.tos & 0x03
    }

    /// The Fragment Offset in octets.
    pub fn frag_offset_bytes(&self) -> usize {
        usize::from(self.frag_offset) * FRAG_UNIT
    }

    /// Writes the header (not the payload) and its checksum. Panics if the buffer is
    /// shorter than [`header_len`](Self::header_len).
    #[inline(always)]
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, packet: &mut Packet<T>) {
        let header_len = self.header_len();
        // The fixed 20 octets are built in a local array: with no options (nearly
        // every packet) they are summed there and copied once.
        let mut h = [0u8; HEADER_LEN];
        h[field::VER_IHL] = 0x40 | (header_len / 4) as u8;
        h[field::TOS] = self.tos;
        h[field::LENGTH].copy_from_slice(&(self.buffer_len() as u16).to_be_bytes());
        h[field::IDENT].copy_from_slice(&self.ident.to_be_bytes());
        let mut flg_off = self.frag_offset & OFFSET_MASK;
        if self.dont_frag {
            flg_off |= FLAG_DF;
        }
        if self.more_frags {
            flg_off |= FLAG_MF;
        }
        h[field::FLG_OFF].copy_from_slice(&flg_off.to_be_bytes());
        h[field::TTL] = self.hop_limit;
        h[field::PROTOCOL] = self.next_header.into();
        h[field::SRC_ADDR].copy_from_slice(&self.src_addr.octets());
        h[field::DST_ADDR].copy_from_slice(&self.dst_addr.octets());
        let d = &mut packet.buffer.as_mut()[..header_len];
        if header_len == HEADER_LEN {
            let sum = !checksum::sum_words32(&h);
            h[field::CHECKSUM].copy_from_slice(&sum.to_be_bytes());
            d.copy_from_slice(&h);
            return;
        }
        d[..HEADER_LEN].copy_from_slice(&h);
        let options = self.options.as_bytes();
        let opts = &mut d[field::OPTIONS_START..];
        opts[..options.len()].copy_from_slice(options);
        opts[options.len()..].fill(0); // RFC 791: pad with End of Option List
        packet.fill_checksum();
    }

    /// Appends header and `payload` to `out`; `payload_len` is taken from `payload`.
    pub fn encapsulate(&self, payload: &[u8], out: &mut Vec<u8>) {
        let repr = Repr { payload_len: payload.len(), ..*self };
        let start = out.len();
        out.resize(start + repr.header_len(), 0);
        repr.emit(&mut Packet::new_unchecked(&mut out[start..]));
        out.extend_from_slice(payload);
    }

    /// The octets this header adds, field by field (RFC 791 §3.1), for `qoslab mtu`.
    pub fn overhead_fields(&self, _payload_len: usize) -> Vec<(&'static str, usize)> {
        let mut fields = vec![
            ("version/IHL", 1),
            ("TOS", 1),
            ("total length", 2),
            ("identification", 2),
            ("flags/fragment offset", 2),
            ("TTL", 1),
            ("protocol", 1),
            ("header checksum", 2),
            ("source", 4),
            ("destination", 4),
        ];
        if !self.options.is_empty() {
            fields.push(("options", self.options.padded_len()));
        }
        fields
    }
}

impl fmt::Display for Repr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "IPv4 src={} dst={} proto={:?} len={} ttl={} id={:#06x}",
            self.src_addr, self.dst_addr, self.next_header, self.payload_len, self.hop_limit, self.ident
        )?;
        if self.dont_frag {
            write!(f, " DF")?;
        }
        if self.more_frags {
            write!(f, " MF")?;
        }
        if self.frag_offset != 0 {
            write!(f, " off={}", self.frag_offset_bytes())?;
        }
        Ok(())
    }
}

/// Why a datagram could not be fragmented.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FragmentError {
    /// The input is not a valid IPv4 packet (or its options are malformed).
    Parse(Error),
    /// DF is set and the datagram exceeds the MTU: the caller drops it and sends ICMP
    /// Destination Unreachable code 4 with this MTU (RFC 791 §3.2, RFC 1191 §4).
    DontFragment { mtu: usize },
    /// The MTU leaves no room for 8 octets of data after a header (below RFC 791's 68
    /// for large options).
    MtuTooSmall,
}

impl From<Error> for FragmentError {
    fn from(e: Error) -> Self {
        FragmentError::Parse(e)
    }
}

impl fmt::Display for FragmentError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FragmentError::Parse(e) => write!(f, "cannot fragment: {e}"),
            FragmentError::DontFragment { mtu } => write!(f, "DF set and datagram exceeds MTU {mtu}"),
            FragmentError::MtuTooSmall => write!(f, "MTU too small to carry 8 octets of data"),
        }
    }
}

impl std::error::Error for FragmentError {}

/// Data octets per fragment that fit `mtu` after `header_len`, rounded down to 8
/// (RFC 791 §3.2: NFB, the number of fragment blocks). Zero when nothing fits.
pub fn max_fragment_payload(header_len: usize, mtu: usize) -> usize {
    mtu.saturating_sub(header_len) & !(FRAG_UNIT - 1)
}

/// The data length of each fragment when `payload_len` octets are sent over `mtu` with a
/// first header of `first_header_len` and later headers of `rest_header_len` (only
/// copied options, RFC 791 §3.2). A datagram that fits gives one entry. `None` when the
/// MTU cannot carry 8 octets of data.
pub fn fragment_sizes(
    payload_len: usize,
    first_header_len: usize,
    rest_header_len: usize,
    mtu: usize,
) -> Option<Vec<usize>> {
    if first_header_len + payload_len <= mtu {
        return Some(vec![payload_len]);
    }
    let first = max_fragment_payload(first_header_len, mtu);
    let rest = max_fragment_payload(rest_header_len, mtu);
    if first == 0 || rest == 0 {
        return None;
    }
    let mut sizes = vec![first];
    let mut left = payload_len - first;
    while left > 0 {
        let n = if rest_header_len + left <= mtu { left } else { rest };
        sizes.push(n);
        left -= n;
    }
    Some(sizes)
}

/// How many fragments `payload_len` octets of data become over `mtu` when every fragment
/// has a `header_len` header; 1 when it fits, `None` when the MTU cannot carry 8 octets.
pub fn fragment_count(payload_len: usize, header_len: usize, mtu: usize) -> Option<usize> {
    if header_len + payload_len <= mtu {
        return Some(1);
    }
    let per = max_fragment_payload(header_len, mtu);
    if per == 0 {
        return None;
    }
    Some(payload_len.div_ceil(per))
}

/// Splits the datagram `packet` (a whole IPv4 packet, possibly itself a fragment) into
/// fragments of at most `mtu` octets per RFC 791 §3.2 and hands each to `out`, in
/// order. Returns the number of fragments.
///
/// * A datagram that fits is passed through unchanged (one call).
/// * With DF set and too long: `Err(DontFragment)`, nothing emitted.
/// * Every fragment but the last carries a multiple of 8 data octets and MF; the last
///   keeps the input's MF (so re-fragmenting a fragment is correct). Offsets add to the
///   input's offset.
/// * The first fragment keeps all options; later ones only the copied options
///   (RFC 791 §3.1 copied flag), padded to a word.
/// * Each fragment's Total Length and checksum are recomputed.
pub fn fragment(packet: &[u8], mtu: usize, mut out: impl FnMut(&[u8])) -> core::result::Result<usize, FragmentError> {
    let view = Packet::new_checked(packet)?;
    let repr = Repr::parse(&view)?;
    let payload = view.payload();
    if repr.buffer_len() <= mtu {
        out(&packet[..repr.buffer_len()]);
        return Ok(1);
    }
    if repr.dont_frag {
        return Err(FragmentError::DontFragment { mtu });
    }
    let rest_options = repr.options.copied()?;
    let rest_header_len = HEADER_LEN + rest_options.padded_len();
    let sizes =
        fragment_sizes(payload.len(), repr.header_len(), rest_header_len, mtu).ok_or(FragmentError::MtuTooSmall)?;

    let mut buf = vec![0u8; mtu];
    let mut offset = 0usize;
    let count = sizes.len();
    for (i, &size) in sizes.iter().enumerate() {
        let last = i + 1 == count;
        let frag = Repr {
            payload_len: size,
            more_frags: if last { repr.more_frags } else { true },
            frag_offset: repr.frag_offset + (offset / FRAG_UNIT) as u16,
            options: if i == 0 { repr.options } else { rest_options },
            ..repr
        };
        let len = frag.buffer_len();
        let header_len = frag.header_len();
        frag.emit(&mut Packet::new_unchecked(&mut buf[..len]));
        buf[header_len..len].copy_from_slice(&payload[offset..offset + size]);
        out(&buf[..len]);
        offset += size;
    }
    Ok(count)
}

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
