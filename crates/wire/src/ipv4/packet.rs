//! The checked view over a datagram's bytes (RFC 791 §3.1).

use super::*;

/// A read/write view of an IPv4 packet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Packet<T: AsRef<[u8]>> {
    /// The whole datagram; `Repr::emit` writes the header into it directly.
    pub(super) buffer: T,
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
