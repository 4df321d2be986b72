//! Ethernet II and IEEE 802.3 MAC frames, and the IEEE 802.1Q VLAN tag.
//!
//! Standards a reader must know:
//!
//! * IEEE Std 802.3-2018 §3.1.1 (MAC frame format), §3.2 (the fields: preamble §3.2.1,
//!   SFD §3.2.2, addresses §3.2.3, Length/Type §3.2.6, data and PAD §3.2.7,
//!   FCS §3.2.9), §3.5 (tagged frames), §4.4.2 (MAC parameters: interPacketGap 96 bit
//!   times, minFrameSize 512 bits, maxUntaggedFrameSize 1518 octets).
//! * IEEE Std 802.1Q-2018 §9.6 (the VLAN tag: TPID 0x8100 then the TCI holding PCP,
//!   DEI and VID).
//! * IEEE Std 802-2014 §8.2 (the I/G and U/L bits of a MAC address) and the IEEE
//!   "EtherType" registry for the type values.
//!
//! A frame as this module sees it starts at the destination address and runs to the end
//! of the MAC client data and PAD; the FCS is handled by the whole-frame functions
//! [`fcs`], [`append_fcs`], [`check_fcs`], [`Repr::encapsulate`] and [`decapsulate`],
//! because pcap's `LINKTYPE_ETHERNET` carries frames without it.
//!
//! A value of the Length/Type field up to 1500 (0x05DC) is an IEEE 802.3 length and the
//! data that follows starts with an IEEE 802.2 LLC header ([`crate::llc`]); a value of
//! 0x0600 or more is an EtherType (Ethernet II). Values in between are undefined
//! (IEEE 802.3 §3.2.6): [`Repr::parse`] and [`Ieee8023Repr::parse`] reject them.

use core::fmt;

use crate::crc::ETHERNET_FCS;
use crate::{Error, Result};

crate::enum_with_unknown! {
    /// EtherType values (IEEE 802 numbers registry, IANA "ieee-802-numbers").
    pub enum EtherType(u16) {
        Ipv4 = 0x0800,
        Arp = 0x0806,
        /// IEEE 802.1Q customer VLAN tag.
        Vlan = 0x8100,
        Ipv6 = 0x86dd,
        /// RFC 2516 §4: PPPoE discovery stage.
        PppoeDiscovery = 0x8863,
        /// RFC 2516 §4: PPPoE session stage.
        PppoeSession = 0x8864,
        /// RFC 2637 §4.1 / RFC 1701: PPP carried in enhanced GRE.
        Ppp = 0x880b,
        /// RFC 1701: transparent Ethernet bridging, Ethernet carried in GRE.
        TransparentEthernetBridging = 0x6558,
        /// IEEE Std 802-2014 §9.2.2: Local Experimental EtherType 1 (seed 004's link
        /// acknowledgements, [`crate::linkarq`]).
        LocalExperimental1 = 0x88b5,
    }
}

/// A 48-bit IEEE 802 MAC address.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Address(pub [u8; 6]);

impl Address {
    pub const BROADCAST: Address = Address([0xff; 6]);

    /// Reads an address from the first six bytes of `data`; panics if shorter.
    pub fn from_bytes(data: &[u8]) -> Address {
        let mut bytes = [0u8; 6];
        bytes.copy_from_slice(&data[..6]);
        Address(bytes)
    }

    pub const fn as_bytes(&self) -> &[u8] {
        &self.0
    }

    /// The individual/group bit (IEEE 802 §8.2): set for multicast and broadcast.
    pub const fn is_multicast(&self) -> bool {
        self.0[0] & 0x01 != 0
    }

    pub fn is_broadcast(&self) -> bool {
        *self == Self::BROADCAST
    }

    pub const fn is_unicast(&self) -> bool {
        !self.is_multicast()
    }

    /// The universal/local bit (IEEE 802 §8.2).
    pub const fn is_local(&self) -> bool {
        self.0[0] & 0x02 != 0
    }
}

impl fmt::Display for Address {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let b = self.0;
        write!(f, "{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}", b[0], b[1], b[2], b[3], b[4], b[5])
    }
}

/// Destination + source + Length/Type (IEEE 802.3 §3.1.1).
pub const HEADER_LEN: usize = 14;
/// Frame check sequence, a CRC-32 (IEEE 802.3 §3.2.9).
pub const FCS_LEN: usize = 4;
/// Shortest frame, destination address through FCS: minFrameSize = 512 bits
/// (IEEE 802.3 §4.4.2, §3.2.7).
pub const MIN_FRAME_LEN: usize = 64;
/// Longest untagged frame including FCS: maxUntaggedFrameSize (IEEE 802.3 §4.4.2).
pub const MAX_FRAME_LEN: usize = 1518;
/// Longest frame carrying one IEEE 802.1Q tag: maxBasicFrameSize (IEEE 802.3 §3.2.7, §3.5).
pub const MAX_TAGGED_FRAME_LEN: usize = 1522;
/// Preamble octets, 0x55 each (IEEE 802.3 §3.2.1).
pub const PREAMBLE_LEN: usize = 7;
/// Start frame delimiter, 0xD5 (IEEE 802.3 §3.2.2).
pub const SFD_LEN: usize = 1;
/// interPacketGap, in bit times (IEEE 802.3 §4.4.2).
pub const IFG_BITS: usize = 96;
/// Largest MAC client data field of an untagged frame (IEEE 802.3 §3.2.7: 1500 octets).
pub const MTU: usize = 1500;
/// Smallest MAC client data + PAD of an untagged frame: 64 − 14 − 4 (IEEE 802.3 §3.2.7).
pub const MIN_PAYLOAD_LEN: usize = MIN_FRAME_LEN - HEADER_LEN - FCS_LEN;
/// Largest value of the Length/Type field read as a length, 1500 = 0x05DC (IEEE 802.3 §3.2.6).
pub const MAX_LENGTH_VALUE: u16 = 1500;
/// Smallest value of the Length/Type field read as a type, 0x0600 (IEEE 802.3 §3.2.6).
pub const MIN_TYPE_VALUE: u16 = 0x0600;

/// Byte ranges of the Ethernet header (IEEE 802.3 §3.1.1).
pub mod field {
    use crate::{Field, Rest};
    /// Destination address (IEEE 802.3 §3.2.3).
    pub const DESTINATION: Field = 0..6;
    /// Source address (IEEE 802.3 §3.2.3).
    pub const SOURCE: Field = 6..12;
    /// Length/Type (IEEE 802.3 §3.2.6), big endian.
    pub const LENGTH_TYPE: Field = 12..14;
    /// MAC client data and PAD (IEEE 802.3 §3.2.7).
    pub const PAYLOAD: Rest = 14..;
}

/// What the Length/Type field says (IEEE 802.3 §3.2.6).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TypeOrLength {
    /// 0x0600 and above: an EtherType (Ethernet II).
    Type(EtherType),
    /// 0..=1500: the number of MAC client data octets (IEEE 802.3 length; LLC follows).
    Length(u16),
}

impl TypeOrLength {
    /// Classifies a raw field value. Values 1501..=1535 are undefined by IEEE 802.3
    /// §3.2.6; they come back as `Type(EtherType::Unknown(v))` and [`Self::is_defined`]
    /// says false.
    pub fn from_raw(value: u16) -> TypeOrLength {
        if value <= MAX_LENGTH_VALUE {
            TypeOrLength::Length(value)
        } else {
            TypeOrLength::Type(EtherType::from(value))
        }
    }

    /// The raw 16-bit value of the field.
    pub fn raw(&self) -> u16 {
        match *self {
            TypeOrLength::Type(t) => u16::from(t),
            TypeOrLength::Length(l) => l,
        }
    }

    /// False for the undefined range 1501..=1535 (IEEE 802.3 §3.2.6).
    pub fn is_defined(&self) -> bool {
        let v = self.raw();
        v <= MAX_LENGTH_VALUE || v >= MIN_TYPE_VALUE
    }
}

/// A checked view over an Ethernet II or IEEE 802.3 frame, destination address first,
/// without preamble, SFD or FCS.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Frame<T> {
    /// Wraps a buffer without checking its length.
    pub const fn new_unchecked(buffer: T) -> Frame<T> {
        Frame { buffer }
    }

    /// Wraps a buffer after [`Self::check_len`].
    pub fn new_checked(buffer: T) -> Result<Frame<T>> {
        let frame = Self::new_unchecked(buffer);
        frame.check_len()?;
        Ok(frame)
    }

    /// `Err(Truncated)` when the buffer cannot hold the 14-byte header.
    pub fn check_len(&self) -> Result<()> {
        if self.buffer.as_ref().len() < HEADER_LEN {
            Err(Error::Truncated)
        } else {
            Ok(())
        }
    }

    pub fn into_inner(self) -> T {
        self.buffer
    }

    /// Header length; always [`HEADER_LEN`] (an 802.1Q tag is read as the payload's
    /// first header, [`VlanRepr`]).
    pub const fn header_len() -> usize {
        HEADER_LEN
    }

    /// Destination address (IEEE 802.3 §3.2.3).
    pub fn dst_addr(&self) -> Address {
        Address::from_bytes(&self.buffer.as_ref()[field::DESTINATION])
    }

    /// Source address (IEEE 802.3 §3.2.3).
    pub fn src_addr(&self) -> Address {
        Address::from_bytes(&self.buffer.as_ref()[field::SOURCE])
    }

    /// The raw Length/Type field (IEEE 802.3 §3.2.6).
    pub fn length_type_raw(&self) -> u16 {
        let d = &self.buffer.as_ref()[field::LENGTH_TYPE];
        u16::from_be_bytes([d[0], d[1]])
    }

    /// The Length/Type field read as an EtherType, whatever its value.
    pub fn ethertype(&self) -> EtherType {
        EtherType::from(self.length_type_raw())
    }

    /// The Length/Type field classified (IEEE 802.3 §3.2.6).
    pub fn length_or_type(&self) -> TypeOrLength {
        TypeOrLength::from_raw(self.length_type_raw())
    }

    /// Everything after the header: MAC client data and any PAD.
    pub fn payload(&self) -> &[u8] {
        &self.buffer.as_ref()[field::PAYLOAD]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Frame<T> {
    pub fn set_dst_addr(&mut self, value: Address) {
        self.buffer.as_mut()[field::DESTINATION].copy_from_slice(&value.0);
    }

    pub fn set_src_addr(&mut self, value: Address) {
        self.buffer.as_mut()[field::SOURCE].copy_from_slice(&value.0);
    }

    pub fn set_length_type_raw(&mut self, value: u16) {
        self.buffer.as_mut()[field::LENGTH_TYPE].copy_from_slice(&value.to_be_bytes());
    }

    pub fn set_ethertype(&mut self, value: EtherType) {
        self.set_length_type_raw(u16::from(value));
    }

    pub fn set_length_or_type(&mut self, value: TypeOrLength) {
        self.set_length_type_raw(value.raw());
    }

    pub fn payload_mut(&mut self) -> &mut [u8] {
        &mut self.buffer.as_mut()[field::PAYLOAD]
    }
}

impl<T: AsRef<[u8]>> AsRef<[u8]> for Frame<T> {
    fn as_ref(&self) -> &[u8] {
        self.buffer.as_ref()
    }
}

/// An Ethernet II header (Length/Type holds an EtherType, IEEE 802.3 §3.2.6).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Repr {
    pub src_addr: Address,
    pub dst_addr: Address,
    /// At least 0x0600 ([`MIN_TYPE_VALUE`]); `EtherType::Vlan` when an 802.1Q tag
    /// follows ([`VlanRepr`]).
    pub ethertype: EtherType,
}

impl Repr {
    /// Parses an Ethernet II header. `Err(Unsupported)` for an IEEE 802.3 length frame
    /// (use [`Ieee8023Repr`]), `Err(Malformed)` for the undefined values 1501..=1535.
    pub fn parse<T: AsRef<[u8]> + ?Sized>(frame: &Frame<&T>) -> Result<Repr> {
        frame.check_len()?;
        let raw = frame.length_type_raw();
        if raw <= MAX_LENGTH_VALUE {
            return Err(Error::Unsupported);
        }
        if raw < MIN_TYPE_VALUE {
            return Err(Error::Malformed);
        }
        Ok(Repr { src_addr: frame.src_addr(), dst_addr: frame.dst_addr(), ethertype: frame.ethertype() })
    }

    pub const fn header_len(&self) -> usize {
        HEADER_LEN
    }

    pub const fn buffer_len(&self) -> usize {
        HEADER_LEN
    }

    /// Writes the header; panics if the buffer is shorter than [`HEADER_LEN`].
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]> + ?Sized>(&self, frame: &mut Frame<&mut T>) {
        frame.set_dst_addr(self.dst_addr);
        frame.set_src_addr(self.src_addr);
        frame.set_ethertype(self.ethertype);
    }

    /// Appends the whole frame to `out`: header, `payload`, PAD up to the minimum frame
    /// (IEEE 802.3 §3.2.7; a tagged frame's payload starts with the 4-byte tag rest, so
    /// pass the whole tagged payload) and, when `with_fcs`, the FCS (§3.2.9).
    pub fn encapsulate(&self, payload: &[u8], with_fcs: bool, out: &mut Vec<u8>) {
        let start = out.len();
        out.resize(start + HEADER_LEN, 0);
        self.emit(&mut Frame::new_unchecked(&mut out[start..]));
        out.extend_from_slice(payload);
        out.resize(out.len() + pad_len(payload.len()), 0);
        if with_fcs {
            let fcs = fcs(&out[start..]);
            out.extend_from_slice(&fcs.to_le_bytes());
        }
    }

    /// Named byte counts this layer adds to a `payload_len`-byte payload (for
    /// `qoslab mtu`): header fields, PAD (IEEE 802.3 §3.2.7, may be 0), then the FCS
    /// when `with_fcs`.
    pub fn overhead_fields(&self, payload_len: usize, with_fcs: bool) -> Vec<(&'static str, usize)> {
        let mut v = vec![("destination", 6), ("source", 6), ("ethertype", 2), ("padding", pad_len(payload_len))];
        if with_fcs {
            v.push(("fcs", FCS_LEN));
        }
        v
    }
}

/// An IEEE 802.3 header whose Length/Type field is a length (IEEE 802.3 §3.2.6): the
/// MAC client data, an LLC PDU, is `length` octets, and anything after it up to the FCS
/// is PAD.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Ieee8023Repr {
    pub src_addr: Address,
    pub dst_addr: Address,
    /// MAC client data octets, 0..=1500 ([`MAX_LENGTH_VALUE`]).
    pub length: u16,
}

impl Ieee8023Repr {
    /// Parses an 802.3 length header. `Err(Unsupported)` for an EtherType frame,
    /// `Err(Malformed)` for 1501..=1535, `Err(Truncated)` when the buffer holds fewer
    /// than `length` data octets.
    pub fn parse<T: AsRef<[u8]> + ?Sized>(frame: &Frame<&T>) -> Result<Ieee8023Repr> {
        frame.check_len()?;
        let raw = frame.length_type_raw();
        if raw >= MIN_TYPE_VALUE {
            return Err(Error::Unsupported);
        }
        if raw > MAX_LENGTH_VALUE {
            return Err(Error::Malformed);
        }
        if frame.payload().len() < raw as usize {
            return Err(Error::Truncated);
        }
        Ok(Ieee8023Repr { src_addr: frame.src_addr(), dst_addr: frame.dst_addr(), length: raw })
    }

    pub const fn header_len(&self) -> usize {
        HEADER_LEN
    }

    /// Header plus data plus PAD, without FCS.
    pub fn buffer_len(&self) -> usize {
        HEADER_LEN + self.length as usize + pad_len(self.length as usize)
    }

    /// Writes the header; panics if the buffer is shorter than [`HEADER_LEN`].
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]> + ?Sized>(&self, frame: &mut Frame<&mut T>) {
        frame.set_dst_addr(self.dst_addr);
        frame.set_src_addr(self.src_addr);
        frame.set_length_type_raw(self.length);
    }

    /// The MAC client data of a parsed frame, without PAD.
    pub fn data<'a>(&self, frame: &Frame<&'a [u8]>) -> &'a [u8] {
        let buf: &'a [u8] = frame.buffer;
        let end = (HEADER_LEN + self.length as usize).min(buf.len());
        &buf[HEADER_LEN.min(end)..end]
    }

    /// Appends a whole 802.3 frame carrying `data` (an LLC PDU, at most 1500 octets;
    /// panics when longer): header with length, data, PAD, and the FCS when `with_fcs`.
    pub fn encapsulate(src_addr: Address, dst_addr: Address, data: &[u8], with_fcs: bool, out: &mut Vec<u8>) {
        assert!(data.len() <= MTU, "802.3 data longer than 1500 octets");
        let repr = Ieee8023Repr { src_addr, dst_addr, length: data.len() as u16 };
        let start = out.len();
        out.resize(start + HEADER_LEN, 0);
        repr.emit(&mut Frame::new_unchecked(&mut out[start..]));
        out.extend_from_slice(data);
        out.resize(out.len() + pad_len(data.len()), 0);
        if with_fcs {
            let fcs = fcs(&out[start..]);
            out.extend_from_slice(&fcs.to_le_bytes());
        }
    }

    /// Named byte counts (see [`Repr::overhead_fields`]); the field is "length" here.
    pub fn overhead_fields(&self, payload_len: usize, with_fcs: bool) -> Vec<(&'static str, usize)> {
        let mut v = vec![("destination", 6), ("source", 6), ("length", 2), ("padding", pad_len(payload_len))];
        if with_fcs {
            v.push(("fcs", FCS_LEN));
        }
        v
    }
}

/// The frame check sequence of a frame given from destination address through PAD
/// (IEEE 802.3 §3.2.9): CRC-32 as [`crate::crc::ETHERNET_FCS`]. Append it with
/// `to_le_bytes()` (the CRC is sent least significant bit first, so its low byte goes
/// first), or use [`append_fcs`].
pub fn fcs(frame_without_fcs: &[u8]) -> u32 {
    ETHERNET_FCS.checksum(frame_without_fcs)
}

/// Appends the FCS of everything in `frame` (IEEE 802.3 §3.2.9).
pub fn append_fcs(frame: &mut Vec<u8>) {
    let value = fcs(frame);
    frame.extend_from_slice(&value.to_le_bytes());
}

/// Checks the last four bytes of `frame_with_fcs` against the FCS of the rest and
/// returns the frame without them. `Err(Truncated)` when shorter than header + FCS,
/// `Err(Checksum)` on a mismatch.
pub fn check_fcs(frame_with_fcs: &[u8]) -> Result<&[u8]> {
    if frame_with_fcs.len() < HEADER_LEN + FCS_LEN {
        return Err(Error::Truncated);
    }
    let (body, tail) = frame_with_fcs.split_at(frame_with_fcs.len() - FCS_LEN);
    let got = u32::from_le_bytes([tail[0], tail[1], tail[2], tail[3]]);
    if got != fcs(body) {
        return Err(Error::Checksum);
    }
    Ok(body)
}

/// Inverse of [`Repr::encapsulate`] for Ethernet II frames: checks and strips the FCS
/// when `with_fcs`, parses the header and returns the payload. The payload still holds
/// any PAD, which only the upper layer's own length can tell from data.
pub fn decapsulate(frame: &[u8], with_fcs: bool) -> Result<(Repr, &[u8])> {
    let body = if with_fcs { check_fcs(frame)? } else { frame };
    let view = Frame::new_checked(body)?;
    let repr = Repr::parse(&view)?;
    Ok((repr, &body[HEADER_LEN..]))
}

/// PAD octets needed after `payload_len` octets of MAC client data in an untagged frame
/// so the frame reaches [`MIN_FRAME_LEN`] (IEEE 802.3 §3.2.7).
pub const fn pad_len(payload_len: usize) -> usize {
    MIN_PAYLOAD_LEN.saturating_sub(payload_len)
}

/// Octets on the wire for `payload_len` octets of MAC client data: preamble, SFD,
/// header, optional 802.1Q tag, data, PAD and FCS (IEEE 802.3 §3.1.1, §3.5). A tagged
/// frame is also at least 64 octets (IEEE 802.3 §3.2.7), so it needs 4 fewer PAD octets.
pub const fn wire_len(payload_len: usize, with_vlan: bool) -> usize {
    let tag = if with_vlan { VlanRepr::LEN } else { 0 };
    let frame = HEADER_LEN + tag + payload_len + FCS_LEN;
    let frame = if frame < MIN_FRAME_LEN { MIN_FRAME_LEN } else { frame };
    PREAMBLE_LEN + SFD_LEN + frame
}

/// Bit times one frame holds the medium including the following interpacket gap:
/// `wire_len * 8 + 96` (IEEE 802.3 §4.4.2). At 1 Gb/s a bit time is 1 ns.
pub const fn wire_bits_with_ifg(payload_len: usize, with_vlan: bool) -> usize {
    wire_len(payload_len, with_vlan) * 8 + IFG_BITS
}

/// The physical-layer overhead of each frame in named octets: preamble, SFD and the
/// interpacket gap expressed in octets (IEEE 802.3 §3.2.1, §3.2.2, §4.4.2).
pub fn physical_overhead_fields() -> Vec<(&'static str, usize)> {
    vec![("preamble", PREAMBLE_LEN), ("sfd", SFD_LEN), ("interpacket gap", IFG_BITS / 8)]
}

/// The IEEE 802.1Q tag control information (IEEE 802.1Q §9.6).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct VlanTag {
    /// Priority code point, 3 bits (0..=7).
    pub pcp: u8,
    /// Drop eligible indicator, 1 bit.
    pub dei: bool,
    /// VLAN identifier, 12 bits (0..=4095; 0 = priority tag only, 4095 reserved).
    pub vid: u16,
}

impl VlanTag {
    /// Splits a TCI: PCP in bits 15..13, DEI bit 12, VID bits 11..0.
    pub const fn from_tci(tci: u16) -> VlanTag {
        VlanTag { pcp: (tci >> 13) as u8, dei: tci & 0x1000 != 0, vid: tci & 0x0fff }
    }

    /// Packs the TCI; fields wider than their bits are masked.
    pub const fn tci(&self) -> u16 {
        ((self.pcp as u16 & 0x7) << 13) | ((self.dei as u16) << 12) | (self.vid & 0x0fff)
    }
}

/// Byte ranges of the 802.1Q header as it follows an Ethernet header whose type is
/// 0x8100 (the TPID, IEEE 802.1Q §9.5): TCI, then the encapsulated Length/Type.
pub mod vlan_field {
    use crate::Field;
    /// Tag control information (IEEE 802.1Q §9.6).
    pub const TCI: Field = 0..2;
    /// The inner Length/Type (IEEE 802.3 §3.5).
    pub const ETHERTYPE: Field = 2..4;
}

/// The four octets an 802.1Q tag adds: the TPID sits in the outer Ethernet type field
/// (0x8100), so what follows it is the TCI and the inner EtherType. The 4-byte header
/// at the start of a frame's payload when `Repr::ethertype` is `EtherType::Vlan`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct VlanRepr {
    pub tag: VlanTag,
    /// The EtherType of what the tag encloses.
    pub ethertype: EtherType,
}

impl VlanRepr {
    /// Octets the tag adds to a frame (IEEE 802.3 §3.5: 4).
    pub const LEN: usize = 4;

    /// Parses TCI + inner type from the start of `payload`.
    pub fn parse(payload: &[u8]) -> Result<VlanRepr> {
        if payload.len() < Self::LEN {
            return Err(Error::Truncated);
        }
        let tci = u16::from_be_bytes([payload[0], payload[1]]);
        let ethertype = EtherType::from(u16::from_be_bytes([payload[2], payload[3]]));
        Ok(VlanRepr { tag: VlanTag::from_tci(tci), ethertype })
    }

    pub const fn buffer_len(&self) -> usize {
        Self::LEN
    }

    /// Writes TCI + inner type; panics if `out` is shorter than 4.
    pub fn emit(&self, out: &mut [u8]) {
        out[vlan_field::TCI].copy_from_slice(&self.tag.tci().to_be_bytes());
        out[vlan_field::ETHERTYPE].copy_from_slice(&u16::from(self.ethertype).to_be_bytes());
    }

    /// Named byte counts of the tag (the TPID is in the outer type field).
    pub fn overhead_fields(&self, _payload_len: usize) -> Vec<(&'static str, usize)> {
        vec![("vlan tci", 2), ("vlan ethertype", 2)]
    }
}

#[cfg(test)]
mod test {
    use super::*;
    use proptest::prelude::*;

    // An ARP request (RFC 826) from 00:11:22:33:44:55 / 192.0.2.1 for 192.0.2.2,
    // broadcast, without FCS, padded to 60 octets with 18 zero octets (IEEE 802.3 §3.2.7).
    static FRAME_BYTES: [u8; 60] = [
        0xff, 0xff, 0xff, 0xff, 0xff, 0xff, // destination: broadcast
        0x00, 0x11, 0x22, 0x33, 0x44, 0x55, // source
        0x08, 0x06, // EtherType ARP
        0x00, 0x01, 0x08, 0x00, 0x06, 0x04, 0x00, 0x01, // htype, ptype, hlen, plen, op
        0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 192, 0, 2, 1, // sender
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 192, 0, 2, 2, // target
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, // PAD
    ];
    // python3 -c "import zlib;print(hex(zlib.crc32(bytes(FRAME_BYTES))))" (zlib's CRC-32
    // is the 802.3 one), sent low byte first.
    const FRAME_FCS: u32 = 0x99da_f206;

    fn repr() -> Repr {
        Repr {
            dst_addr: Address::BROADCAST,
            src_addr: Address([0x00, 0x11, 0x22, 0x33, 0x44, 0x55]),
            ethertype: EtherType::Arp,
        }
    }

    #[test]
    fn test_parse() {
        let frame = Frame::new_checked(&FRAME_BYTES[..]).unwrap();
        assert_eq!(frame.dst_addr(), Address::BROADCAST);
        assert_eq!(frame.src_addr(), Address([0x00, 0x11, 0x22, 0x33, 0x44, 0x55]));
        assert_eq!(frame.length_or_type(), TypeOrLength::Type(EtherType::Arp));
        assert_eq!(frame.payload().len(), 46);
        assert_eq!(Repr::parse(&frame).unwrap(), repr());
    }

    #[test]
    fn test_emit() {
        let mut out = Vec::new();
        repr().encapsulate(&FRAME_BYTES[14..42], false, &mut out);
        assert_eq!(&out[..], &FRAME_BYTES[..]);
    }

    #[test]
    fn test_fcs() {
        assert_eq!(fcs(&FRAME_BYTES), FRAME_FCS);
        let mut out = Vec::new();
        repr().encapsulate(&FRAME_BYTES[14..42], true, &mut out);
        assert_eq!(out.len(), MIN_FRAME_LEN);
        assert_eq!(&out[60..], &FRAME_FCS.to_le_bytes());
        // The CRC-32 residue: the CRC of a frame with its FCS is the constant
        // 0x2144DF1C, the complement of the reflected residue 0xDEBB20E3 (IEEE 802.3 §3.2.9).
        assert_eq!(fcs(&out), 0x2144_df1c);
        let (r, payload) = decapsulate(&out, true).unwrap();
        assert_eq!(r, repr());
        assert_eq!(payload, &FRAME_BYTES[14..]);
        out[20] ^= 1;
        assert_eq!(decapsulate(&out, true), Err(Error::Checksum));
        assert_eq!(check_fcs(&out[..17]), Err(Error::Truncated));
    }

    #[test]
    fn test_truncated() {
        assert_eq!(Frame::new_checked(&FRAME_BYTES[..13]), Err(Error::Truncated));
        assert!(Frame::new_checked(&FRAME_BYTES[..14]).is_ok());
    }

    #[test]
    fn test_length_or_type() {
        let mut bytes = FRAME_BYTES;
        let mut frame = Frame::new_unchecked(&mut bytes[..]);
        frame.set_length_type_raw(1500);
        assert_eq!(frame.length_or_type(), TypeOrLength::Length(1500));
        frame.set_length_type_raw(1501);
        assert!(!frame.length_or_type().is_defined());
        frame.set_length_type_raw(0x0600);
        assert_eq!(frame.length_or_type(), TypeOrLength::Type(EtherType::Unknown(0x0600)));
        assert!(frame.length_or_type().is_defined());
        let frame = Frame::new_unchecked(&bytes[..]);
        assert_eq!(Ieee8023Repr::parse(&frame), Err(Error::Unsupported));
        let mut bytes = FRAME_BYTES;
        Frame::new_unchecked(&mut bytes[..]).set_length_type_raw(1535);
        assert_eq!(Repr::parse(&Frame::new_unchecked(&bytes[..])), Err(Error::Malformed));
        assert_eq!(Ieee8023Repr::parse(&Frame::new_unchecked(&bytes[..])), Err(Error::Malformed));
        Frame::new_unchecked(&mut bytes[..]).set_length_type_raw(40);
        assert_eq!(Repr::parse(&Frame::new_unchecked(&bytes[..])), Err(Error::Unsupported));
        Frame::new_unchecked(&mut bytes[..]).set_length_type_raw(47);
        assert_eq!(Ieee8023Repr::parse(&Frame::new_unchecked(&bytes[..])), Err(Error::Truncated));
    }

    #[test]
    fn test_ieee8023() {
        // 802.3 frame carrying a 3-byte LLC PDU (a NULL-SAP XID-less UI: 00 00 03).
        let src = Address([2, 0, 0, 0, 0, 1]);
        let dst = Address([2, 0, 0, 0, 0, 2]);
        let mut out = Vec::new();
        Ieee8023Repr::encapsulate(src, dst, &[0, 0, 3], false, &mut out);
        assert_eq!(out.len(), 60);
        assert_eq!(&out[12..17], &[0x00, 0x03, 0, 0, 3]);
        let frame = Frame::new_checked(&out[..]).unwrap();
        let repr = Ieee8023Repr::parse(&frame).unwrap();
        assert_eq!(repr, Ieee8023Repr { src_addr: src, dst_addr: dst, length: 3 });
        assert_eq!(repr.data(&frame), &[0, 0, 3]);
        assert_eq!(repr.buffer_len(), 60);
    }

    #[test]
    fn test_sizes() {
        // Hand computation: a 46-byte payload is a 64-byte frame; with 8 bytes of
        // preamble+SFD it is 72 bytes, 576 bits, plus a 96-bit gap = 672 bits.
        assert_eq!(pad_len(0), 46);
        assert_eq!(pad_len(46), 0);
        assert_eq!(pad_len(1500), 0);
        assert_eq!(wire_len(46, false), 72);
        assert_eq!(wire_len(0, false), 72);
        assert_eq!(wire_bits_with_ifg(46, false), 672);
        // Full-size frame: 8 + 14 + 1500 + 4 = 1526 octets, 12208 + 96 = 12304 bits
        // (the well-known 81,274 frames/s at 1 Gb/s: 1e9 / 12304).
        assert_eq!(wire_len(1500, false), 1526);
        assert_eq!(wire_bits_with_ifg(1500, false), 12304);
        assert_eq!(wire_len(1500, true), 1530);
        // A tagged frame needs only 42 bytes of data to reach 64.
        assert_eq!(wire_len(42, true), 72);
        assert_eq!(wire_len(0, true), 72);
        assert_eq!(MAX_FRAME_LEN, HEADER_LEN + MTU + FCS_LEN);
        assert_eq!(MAX_TAGGED_FRAME_LEN, MAX_FRAME_LEN + VlanRepr::LEN);
        let f = repr().overhead_fields(10, true);
        assert_eq!(f, vec![("destination", 6), ("source", 6), ("ethertype", 2), ("padding", 36), ("fcs", 4)]);
        assert_eq!(repr().overhead_fields(100, false).iter().map(|x| x.1).sum::<usize>(), 14);
    }

    #[test]
    fn test_vlan() {
        // TCI 0xA07B: PCP 5, DEI 0, VID 123; inner type IPv4.
        let bytes = [0xa0, 0x7b, 0x08, 0x00];
        let v = VlanRepr::parse(&bytes).unwrap();
        assert_eq!(v, VlanRepr { tag: VlanTag { pcp: 5, dei: false, vid: 123 }, ethertype: EtherType::Ipv4 });
        let mut out = [0u8; 4];
        v.emit(&mut out);
        assert_eq!(out, bytes);
        assert_eq!(VlanTag::from_tci(0x1fff), VlanTag { pcp: 0, dei: true, vid: 4095 });
        assert_eq!(VlanRepr::parse(&bytes[..3]), Err(Error::Truncated));
    }

    fn arb_addr() -> impl Strategy<Value = Address> {
        any::<[u8; 6]>().prop_map(Address)
    }

    proptest! {
        #[test]
        fn roundtrip(src in arb_addr(), dst in arb_addr(), et in 0x0600u16..) {
            let repr = Repr { src_addr: src, dst_addr: dst, ethertype: EtherType::from(et) };
            let mut a = [0u8; HEADER_LEN];
            repr.emit(&mut Frame::new_unchecked(&mut a[..]));
            let parsed = Repr::parse(&Frame::new_checked(&a[..]).unwrap()).unwrap();
            prop_assert_eq!(parsed, repr);
            let mut b = [0u8; HEADER_LEN];
            parsed.emit(&mut Frame::new_unchecked(&mut b[..]));
            prop_assert_eq!(a, b);
        }

        #[test]
        fn roundtrip_8023(src in arb_addr(), dst in arb_addr(), data in proptest::collection::vec(any::<u8>(), 0..1500)) {
            let mut a = Vec::new();
            Ieee8023Repr::encapsulate(src, dst, &data, true, &mut a);
            let body = check_fcs(&a).unwrap();
            let frame = Frame::new_checked(body).unwrap();
            let repr = Ieee8023Repr::parse(&frame).unwrap();
            prop_assert_eq!(repr.data(&frame), &data[..]);
            let mut b = vec![0u8; repr.buffer_len()];
            repr.emit(&mut Frame::new_unchecked(&mut b[..]));
            prop_assert_eq!(&b[..HEADER_LEN], &a[..HEADER_LEN]);
        }

        #[test]
        fn roundtrip_vlan(tci in any::<u16>(), et in any::<u16>()) {
            let v = VlanRepr { tag: VlanTag::from_tci(tci), ethertype: EtherType::from(et) };
            let mut a = [0u8; 4];
            v.emit(&mut a);
            prop_assert_eq!(u16::from_be_bytes([a[0], a[1]]), tci);
            prop_assert_eq!(VlanRepr::parse(&a).unwrap(), v);
        }

        #[test]
        fn parse_never_panics(data in proptest::collection::vec(any::<u8>(), 0..80)) {
            if let Ok(f) = Frame::new_checked(&data[..]) {
                let _ = Repr::parse(&f);
                let _ = Ieee8023Repr::parse(&f);
                if let Ok(r) = Ieee8023Repr::parse(&f) { let _ = r.data(&f); }
            }
            let _ = decapsulate(&data, true);
            let _ = VlanRepr::parse(&data);
        }
    }
}
