//! Generic Routing Encapsulation, and the enhanced GRE that carries PPTP's PPP frames.
//!
//! Standards a reader must know:
//!
//! * RFC 2784 (GRE): §2.1 the header (C bit, Reserved0, Ver, Protocol Type), §2.5 the
//!   optional Checksum and Reserved1, §2.3 which reserved bits a receiver must check.
//! * RFC 2890 (Key and Sequence Number Extensions): §2 the K and S bits, §2.1 the Key,
//!   §2.2 the Sequence Number.
//! * RFC 2637 (PPTP) §4.1: the enhanced GRE header, version 1, Protocol Type 0x880b (PPP),
//!   the Key field split into Payload Length (high 16 bits) and Call ID (low 16 bits),
//!   optional Sequence Number (S) and Acknowledgment Number (A, a flag in the second
//!   octet).
//! * RFC 1701 for the Routing (R) bit, the strict source route (s) bit and the recursion
//!   count, which this module recognises but does not model (`Error::Unsupported`).
//!
//! Wire order of the optional fields: Checksum+Reserved1 (C), Key (K), Sequence (S),
//! Acknowledgment (A, version 1 only).

use crate::checksum;
use crate::{Error, EtherType, Result};

/// RFC 2784 §2.1: the flags/version word and the Protocol Type.
pub const BASE_HEADER_LEN: usize = 4;
/// RFC 2784 §2.5: Checksum (2) and Reserved1 (2), present when C is set.
pub const CHECKSUM_LEN: usize = 4;
/// RFC 2890 §2.1: the Key.
pub const KEY_LEN: usize = 4;
/// RFC 2890 §2.2: the Sequence Number.
pub const SEQUENCE_LEN: usize = 4;
/// RFC 2637 §4.1: the Acknowledgment Number.
pub const ACK_LEN: usize = 4;

/// RFC 2784 §2.1: Checksum Present (bit 0).
pub const FLAG_C: u16 = 0x8000;
/// RFC 1701 §2.1: Routing Present (bit 1).
pub const FLAG_R: u16 = 0x4000;
/// RFC 2890 §2: Key Present (bit 2).
pub const FLAG_K: u16 = 0x2000;
/// RFC 2890 §2: Sequence Number Present (bit 3).
pub const FLAG_S: u16 = 0x1000;
/// RFC 1701 §2.1: Strict Source Route (bit 4).
pub const FLAG_STRICT: u16 = 0x0800;
/// RFC 1701 §2.1: Recursion Control (bits 5–7).
pub const RECURSION_MASK: u16 = 0x0700;
/// RFC 2637 §4.1: Acknowledgment Sequence Number Present (bit 8).
pub const FLAG_A: u16 = 0x0080;
/// RFC 2637 §4.1 / RFC 2784 §2.1: the remaining flags, which must be zero (bits 9–12).
pub const FLAGS_RESERVED: u16 = 0x0078;
/// RFC 2784 §2.1: Version (bits 13–15).
pub const VERSION_MASK: u16 = 0x0007;

crate::enum_with_unknown! {
    /// RFC 2784 §2.1, RFC 2637 §4.1: the Version field.
    pub enum Version(u8) {
        /// RFC 2784: GRE.
        Gre = 0,
        /// RFC 2637 §4.1: enhanced GRE of PPTP.
        Enhanced = 1,
    }
}

/// Byte ranges of the fixed part (RFC 2784 §2.1); the optional fields follow at offsets
/// the flags decide ([`Packet::key_offset`] and so on).
pub mod field {
    use crate::{Field, Rest};
    /// RFC 2784 §2.1: C, Reserved0, Ver (with K, S of RFC 2890 and A of RFC 2637).
    pub const FLAGS_VERSION: Field = 0..2;
    /// RFC 2784 §2.1: Protocol Type, an EtherType.
    pub const PROTOCOL: Field = 2..4;
    /// RFC 2784 §2.5: Checksum, when C is set.
    pub const CHECKSUM: Field = 4..6;
    /// RFC 2784 §2.5: Reserved1, when C is set.
    pub const RESERVED1: Field = 6..8;
    /// Everything after the fixed part.
    pub const OPTIONAL: Rest = 4..;
}

/// A GRE packet (RFC 2784, RFC 2890, RFC 2637 §4.1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Packet<T: AsRef<[u8]>> {
    buffer: T,
}

fn read_u32(data: &[u8], at: usize) -> u32 {
    u32::from_be_bytes([data[at], data[at + 1], data[at + 2], data[at + 3]])
}

impl<T: AsRef<[u8]>> Packet<T> {
    pub const fn new_unchecked(buffer: T) -> Packet<T> {
        Packet { buffer }
    }

    pub fn new_checked(buffer: T) -> Result<Packet<T>> {
        let packet = Packet::new_unchecked(buffer);
        packet.check_len()?;
        Ok(packet)
    }

    /// The fixed part, then every optional field the flags announce, must be present.
    pub fn check_len(&self) -> Result<()> {
        let len = self.buffer.as_ref().len();
        if len < BASE_HEADER_LEN || len < self.header_len() {
            Err(Error::Truncated)
        } else {
            Ok(())
        }
    }

    pub fn into_inner(self) -> T {
        self.buffer
    }

    /// RFC 2784 §2.1: the first 16 bits (flags and version).
    pub fn flags_version(&self) -> u16 {
        let d = &self.buffer.as_ref()[field::FLAGS_VERSION];
        u16::from_be_bytes([d[0], d[1]])
    }

    /// RFC 2784 §2.1: Checksum Present.
    pub fn checksum_present(&self) -> bool {
        self.flags_version() & FLAG_C != 0
    }

    /// RFC 1701 §2.1: Routing Present.
    pub fn routing_present(&self) -> bool {
        self.flags_version() & FLAG_R != 0
    }

    /// RFC 2890 §2: Key Present.
    pub fn key_present(&self) -> bool {
        self.flags_version() & FLAG_K != 0
    }

    /// RFC 2890 §2: Sequence Number Present.
    pub fn sequence_present(&self) -> bool {
        self.flags_version() & FLAG_S != 0
    }

    /// RFC 2637 §4.1: Acknowledgment Number Present (meaningful in version 1 only).
    pub fn ack_present(&self) -> bool {
        self.flags_version() & FLAG_A != 0 && self.version() == Version::Enhanced
    }

    /// RFC 1701 §2.1: Recursion Control.
    pub fn recursion(&self) -> u8 {
        ((self.flags_version() & RECURSION_MASK) >> 8) as u8
    }

    /// RFC 2784 §2.1: Version.
    pub fn version(&self) -> Version {
        Version::from((self.flags_version() & VERSION_MASK) as u8)
    }

    /// RFC 2784 §2.1: Protocol Type.
    pub fn protocol(&self) -> EtherType {
        let d = &self.buffer.as_ref()[field::PROTOCOL];
        EtherType::from(u16::from_be_bytes([d[0], d[1]]))
    }

    /// Offset of the Key (RFC 2890 §2.1), after Checksum+Reserved1 when present (or
    /// RFC 1701's Offset when R is set).
    pub fn key_offset(&self) -> usize {
        let cr = self.checksum_present() || self.routing_present();
        BASE_HEADER_LEN + if cr { CHECKSUM_LEN } else { 0 }
    }

    /// Offset of the Sequence Number (RFC 2890 §2.2).
    pub fn sequence_offset(&self) -> usize {
        self.key_offset() + if self.key_present() { KEY_LEN } else { 0 }
    }

    /// Offset of the Acknowledgment Number (RFC 2637 §4.1).
    pub fn ack_offset(&self) -> usize {
        self.sequence_offset() + if self.sequence_present() { SEQUENCE_LEN } else { 0 }
    }

    /// The whole header length the flags announce (RFC 1701 routing entries not counted).
    pub fn header_len(&self) -> usize {
        if self.buffer.as_ref().len() < BASE_HEADER_LEN {
            return BASE_HEADER_LEN;
        }
        self.ack_offset() + if self.ack_present() { ACK_LEN } else { 0 }
    }

    /// RFC 2784 §2.5: Checksum; `None` without the C bit.
    pub fn checksum(&self) -> Option<u16> {
        self.checksum_present().then(|| {
            let d = &self.buffer.as_ref()[field::CHECKSUM];
            u16::from_be_bytes([d[0], d[1]])
        })
    }

    /// RFC 2784 §2.5: Reserved1; `None` without the C bit.
    pub fn reserved1(&self) -> Option<u16> {
        self.checksum_present().then(|| {
            let d = &self.buffer.as_ref()[field::RESERVED1];
            u16::from_be_bytes([d[0], d[1]])
        })
    }

    /// RFC 2890 §2.1: Key; `None` without the K bit.
    pub fn key(&self) -> Option<u32> {
        self.key_present().then(|| read_u32(self.buffer.as_ref(), self.key_offset()))
    }

    /// RFC 2637 §4.1: the Key's high half, the Payload Length (version 1).
    pub fn key_payload_length(&self) -> Option<u16> {
        self.key().map(|k| (k >> 16) as u16)
    }

    /// RFC 2637 §4.1: the Key's low half, the peer's Call ID (version 1).
    pub fn key_call_id(&self) -> Option<u16> {
        self.key().map(|k| k as u16)
    }

    /// RFC 2890 §2.2 / RFC 2637 §4.1: Sequence Number; `None` without the S bit.
    pub fn sequence(&self) -> Option<u32> {
        self.sequence_present().then(|| read_u32(self.buffer.as_ref(), self.sequence_offset()))
    }

    /// RFC 2637 §4.1: Acknowledgment Number; `None` without the A bit.
    pub fn ack(&self) -> Option<u32> {
        self.ack_present().then(|| read_u32(self.buffer.as_ref(), self.ack_offset()))
    }

    /// The payload after the header.
    pub fn payload(&self) -> &[u8] {
        &self.buffer.as_ref()[self.header_len()..]
    }

    /// RFC 2784 §2.5: the checksum over header and payload verifies (true when absent).
    pub fn verify_checksum(&self) -> bool {
        !self.checksum_present() || checksum::checksum(self.buffer.as_ref()) == 0
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    /// Writes the flags and version word; set it before the optional fields, whose
    /// offsets depend on it.
    pub fn set_flags_version(&mut self, value: u16) {
        self.buffer.as_mut()[field::FLAGS_VERSION].copy_from_slice(&value.to_be_bytes());
    }

    pub fn set_protocol(&mut self, value: EtherType) {
        self.buffer.as_mut()[field::PROTOCOL].copy_from_slice(&u16::from(value).to_be_bytes());
    }

    /// Writes Checksum (the C bit must be set).
    pub fn set_checksum(&mut self, value: u16) {
        self.buffer.as_mut()[field::CHECKSUM].copy_from_slice(&value.to_be_bytes());
    }

    /// Writes Reserved1 (the C bit must be set).
    pub fn set_reserved1(&mut self, value: u16) {
        self.buffer.as_mut()[field::RESERVED1].copy_from_slice(&value.to_be_bytes());
    }

    /// Writes the Key (the K bit must be set).
    pub fn set_key(&mut self, value: u32) {
        let at = self.key_offset();
        self.buffer.as_mut()[at..at + KEY_LEN].copy_from_slice(&value.to_be_bytes());
    }

    /// Writes the Sequence Number (the S bit must be set).
    pub fn set_sequence(&mut self, value: u32) {
        let at = self.sequence_offset();
        self.buffer.as_mut()[at..at + SEQUENCE_LEN].copy_from_slice(&value.to_be_bytes());
    }

    /// Writes the Acknowledgment Number (version 1 with the A bit set).
    pub fn set_ack(&mut self, value: u32) {
        let at = self.ack_offset();
        self.buffer.as_mut()[at..at + ACK_LEN].copy_from_slice(&value.to_be_bytes());
    }

    pub fn payload_mut(&mut self) -> &mut [u8] {
        let at = self.header_len();
        &mut self.buffer.as_mut()[at..]
    }

    /// RFC 2784 §2.5: computes the checksum over header and payload (checksum field
    /// zero while summing) and writes it.
    pub fn fill_checksum(&mut self) {
        self.set_checksum(0);
        let value = checksum::checksum(self.buffer.as_ref());
        self.set_checksum(value);
    }
}

/// A GRE header. Version 0 is RFC 2784 with RFC 2890's key and sequence number;
/// version 1 is PPTP's enhanced GRE (RFC 2637 §4.1), for which [`Repr::pptp`] is the
/// constructor and the invariants are: protocol PPP (0x880b), no checksum, key present.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Repr {
    pub version: Version,
    pub protocol: EtherType,
    /// RFC 2784 §2.5: carry a checksum over header and payload (version 0 only).
    pub checksum: bool,
    /// RFC 2890 §2.1 Key; in version 1 payload length (high 16) and call ID (low 16).
    pub key: Option<u32>,
    /// RFC 2890 §2.2 / RFC 2637 §4.1.
    pub sequence: Option<u32>,
    /// RFC 2637 §4.1, version 1 only.
    pub ack: Option<u32>,
}

impl Repr {
    /// Plain RFC 2784 GRE carrying `protocol`, no optional fields.
    pub fn gre(protocol: EtherType) -> Repr {
        Repr { version: Version::Gre, protocol, checksum: false, key: None, sequence: None, ack: None }
    }

    /// PPTP's enhanced GRE header (RFC 2637 §4.1). PPTP data packets carry a sequence
    /// number; an acknowledgment may ride along or travel alone with no payload.
    pub fn pptp(call_id: u16, payload_len: u16, sequence: Option<u32>, ack: Option<u32>) -> Repr {
        Repr {
            version: Version::Enhanced,
            protocol: EtherType::Ppp,
            checksum: false,
            key: Some((u32::from(payload_len) << 16) | u32::from(call_id)),
            sequence,
            ack,
        }
    }

    /// RFC 2637 §4.1: the Call ID half of the key (version 1).
    pub fn call_id(&self) -> Option<u16> {
        self.key.map(|k| k as u16)
    }

    /// RFC 2637 §4.1: the Payload Length half of the key (version 1).
    pub fn payload_length(&self) -> Option<u16> {
        self.key.map(|k| (k >> 16) as u16)
    }

    /// Parses and checks a header. Version 0: R, s and recursion bits set (RFC 1701
    /// source routing) are `Unsupported` (RFC 2784 §2.3 has receivers discard them);
    /// a bad checksum is `Checksum`. Version 1: anything RFC 2637 §4.1 fixes (C=0,
    /// R=0, K=1, s=0, recursion 0, flags 0, protocol 0x880b) is `Malformed`; and the
    /// Payload Length must fit the payload. Other versions are `Unsupported`.
    pub fn parse<T: AsRef<[u8]> + ?Sized>(packet: &Packet<&T>) -> Result<Repr> {
        packet.check_len()?;
        let flags = packet.flags_version();
        match packet.version() {
            Version::Gre => {
                if flags & (FLAG_R | FLAG_STRICT | RECURSION_MASK) != 0 {
                    return Err(Error::Unsupported);
                }
                if !packet.verify_checksum() {
                    return Err(Error::Checksum);
                }
                Ok(Repr {
                    version: Version::Gre,
                    protocol: packet.protocol(),
                    checksum: packet.checksum_present(),
                    key: packet.key(),
                    sequence: packet.sequence(),
                    ack: None,
                })
            }
            Version::Enhanced => {
                if flags & (FLAG_C | FLAG_R | FLAG_STRICT | RECURSION_MASK | FLAGS_RESERVED) != 0
                    || !packet.key_present()
                    || packet.protocol() != EtherType::Ppp
                {
                    return Err(Error::Malformed);
                }
                let payload_length = packet.key_payload_length().unwrap_or(0);
                if usize::from(payload_length) > packet.payload().len() {
                    return Err(Error::Truncated);
                }
                Ok(Repr {
                    version: Version::Enhanced,
                    protocol: packet.protocol(),
                    checksum: false,
                    key: packet.key(),
                    sequence: packet.sequence(),
                    ack: packet.ack(),
                })
            }
            Version::Unknown(_) => Err(Error::Unsupported),
        }
    }

    /// The flags and version word this header is sent with.
    pub fn flags_version(&self) -> u16 {
        let mut flags = u16::from(u8::from(self.version)) & VERSION_MASK;
        if self.checksum {
            flags |= FLAG_C;
        }
        if self.key.is_some() {
            flags |= FLAG_K;
        }
        if self.sequence.is_some() {
            flags |= FLAG_S;
        }
        if self.ack.is_some() && self.version == Version::Enhanced {
            flags |= FLAG_A;
        }
        flags
    }

    pub fn header_len(&self) -> usize {
        BASE_HEADER_LEN
            + if self.checksum { CHECKSUM_LEN } else { 0 }
            + if self.key.is_some() { KEY_LEN } else { 0 }
            + if self.sequence.is_some() { SEQUENCE_LEN } else { 0 }
            + if self.ack.is_some() && self.version == Version::Enhanced { ACK_LEN } else { 0 }
    }

    pub fn buffer_len(&self, payload_len: usize) -> usize {
        self.header_len() + payload_len
    }

    /// Writes the header. With `checksum` set the checksum is computed over the whole
    /// buffer, so the payload must already be in place (or call `fill_checksum` after).
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]> + ?Sized>(&self, packet: &mut Packet<&mut T>) {
        packet.set_flags_version(self.flags_version());
        packet.set_protocol(self.protocol);
        if self.checksum {
            packet.set_reserved1(0);
        }
        if let Some(key) = self.key {
            packet.set_key(key);
        }
        if let Some(seq) = self.sequence {
            packet.set_sequence(seq);
        }
        if let (Some(ack), Version::Enhanced) = (self.ack, self.version) {
            packet.set_ack(ack);
        }
        if self.checksum {
            packet.fill_checksum();
        }
    }

    /// Appends header and `payload` to `out`. For enhanced GRE the key's Payload Length
    /// is set to `payload.len()` (RFC 2637 §4.1), whatever `self` said; the checksum,
    /// when asked for, covers the payload.
    pub fn encapsulate(&self, payload: &[u8], out: &mut Vec<u8>) {
        let mut repr = *self;
        if repr.version == Version::Enhanced {
            let call_id = repr.call_id().unwrap_or(0);
            let len = u16::try_from(payload.len()).expect("PPTP payload over 65535 octets");
            repr.key = Some((u32::from(len) << 16) | u32::from(call_id));
        }
        let start = out.len();
        out.resize(start + repr.buffer_len(payload.len()), 0);
        let header_len = repr.header_len();
        out[start + header_len..].copy_from_slice(payload);
        repr.emit(&mut Packet::new_unchecked(&mut out[start..]));
    }

    /// The named octets this header adds (seed 002 §3.4 counts PPTP's GRE as 12:
    /// base 4, key 4, sequence 4).
    pub fn overhead_fields(&self, _payload_len: usize) -> Vec<(&'static str, usize)> {
        let mut fields = vec![("flags/version", 2), ("protocol type", 2)];
        if self.checksum {
            fields.push(("checksum", 2));
            fields.push(("reserved1", 2));
        }
        if self.key.is_some() {
            if self.version == Version::Enhanced {
                fields.push(("key: payload length", 2));
                fields.push(("key: call id", 2));
            } else {
                fields.push(("key", 4));
            }
        }
        if self.sequence.is_some() {
            fields.push(("sequence", 4));
        }
        if self.ack.is_some() && self.version == Version::Enhanced {
            fields.push(("ack", 4));
        }
        fields
    }
}

#[cfg(test)]
mod test {
    use super::*;
    use proptest::prelude::*;

    // GRE (RFC 2784 + RFC 2890) with C, K, S: flags 0xb000, protocol IPv4, checksum
    // 0xfedd (computed by hand: one's complement of the 16-bit sum of all 20 octets with
    // the field zero), reserved1 0, key 0x01020304, sequence 7, payload 45 00 00 14.
    static GRE_BYTES: [u8; 20] = [
        0xb0, 0x00, 0x08, 0x00, 0xfe, 0xdd, 0x00, 0x00, 0x01, 0x02, 0x03, 0x04, 0x00, 0x00, 0x00, 0x07, 0x45, 0x00,
        0x00, 0x14,
    ];

    // Enhanced GRE (RFC 2637 §4.1) with K, S, A: 0x3081, protocol 0x880b, payload length
    // 3, call ID 0x4000, sequence 5, ack 4, then a PPP frame 21 45 00 (PFC'd IPv4).
    static PPTP_BYTES: [u8; 23] = [
        0x30, 0x81, 0x88, 0x0b, 0x00, 0x03, 0x40, 0x00, 0x00, 0x00, 0x00, 0x05, 0x00, 0x00, 0x00, 0x04, 0x21, 0x45,
        0x00, 0x00, 0x00, 0x00, 0x00,
    ];

    #[test]
    fn test_parse_gre() {
        let packet = Packet::new_checked(&GRE_BYTES[..]).unwrap();
        assert!(packet.checksum_present() && packet.key_present() && packet.sequence_present());
        assert_eq!(packet.checksum(), Some(0xfedd));
        assert!(packet.verify_checksum());
        assert_eq!(packet.header_len(), 16);
        let repr = Repr::parse(&packet).unwrap();
        assert_eq!(
            repr,
            Repr {
                version: Version::Gre,
                protocol: EtherType::Ipv4,
                checksum: true,
                key: Some(0x0102_0304),
                sequence: Some(7),
                ack: None
            }
        );
        assert_eq!(packet.payload(), &[0x45, 0, 0, 0x14]);
    }

    #[test]
    fn test_emit_gre() {
        let repr = Repr { checksum: true, key: Some(0x0102_0304), sequence: Some(7), ..Repr::gre(EtherType::Ipv4) };
        let mut out = Vec::new();
        repr.encapsulate(&[0x45, 0, 0, 0x14], &mut out);
        assert_eq!(out, GRE_BYTES);
    }

    #[test]
    fn test_pptp() {
        let packet = Packet::new_checked(&PPTP_BYTES[..]).unwrap();
        assert_eq!(packet.version(), Version::Enhanced);
        assert_eq!(packet.key_payload_length(), Some(3));
        assert_eq!(packet.key_call_id(), Some(0x4000));
        assert_eq!(packet.sequence(), Some(5));
        assert_eq!(packet.ack(), Some(4));
        let repr = Repr::parse(&packet).unwrap();
        assert_eq!(repr, Repr::pptp(0x4000, 3, Some(5), Some(4)));
        // Encapsulating a 7-octet payload rewrites the payload length.
        let mut out = Vec::new();
        Repr::pptp(0x4000, 0, Some(5), Some(4)).encapsulate(&PPTP_BYTES[16..], &mut out);
        let mut expected = PPTP_BYTES;
        expected[5] = 7;
        assert_eq!(out, expected);
        // Seed 002 §3.4: 12 octets of GRE for a data packet with sequence, no ack.
        let fields = Repr::pptp(1, 0, Some(0), None).overhead_fields(1400);
        assert_eq!(fields.iter().map(|f| f.1).sum::<usize>(), 12);
        assert_eq!(
            fields,
            vec![
                ("flags/version", 2),
                ("protocol type", 2),
                ("key: payload length", 2),
                ("key: call id", 2),
                ("sequence", 4)
            ]
        );
    }

    #[test]
    fn errors() {
        assert_eq!(Packet::new_checked(&GRE_BYTES[..3]).unwrap_err(), Error::Truncated);
        assert_eq!(Packet::new_checked(&GRE_BYTES[..15]).unwrap_err(), Error::Truncated);
        let mut bad = GRE_BYTES;
        bad[19] ^= 1;
        assert_eq!(Repr::parse(&Packet::new_unchecked(&bad[..])), Err(Error::Checksum));
        let mut routed = GRE_BYTES;
        routed[0] |= 0x40;
        assert_eq!(Repr::parse(&Packet::new_unchecked(&routed[..])), Err(Error::Unsupported));
        let mut v2 = GRE_BYTES;
        v2[1] = 2;
        assert_eq!(Repr::parse(&Packet::new_unchecked(&v2[..])), Err(Error::Unsupported));
        // Enhanced GRE without the key, or with another protocol, or a checksum.
        let mut nokey = PPTP_BYTES;
        nokey[0] &= !0x20;
        assert_eq!(Repr::parse(&Packet::new_unchecked(&nokey[..])), Err(Error::Malformed));
        let mut ipv4 = PPTP_BYTES;
        ipv4[2..4].copy_from_slice(&[0x08, 0x00]);
        assert_eq!(Repr::parse(&Packet::new_unchecked(&ipv4[..])), Err(Error::Malformed));
        // Payload length past the end.
        let mut long = PPTP_BYTES;
        long[5] = 8;
        assert_eq!(Repr::parse(&Packet::new_unchecked(&long[..])), Err(Error::Truncated));
    }

    fn repr_strategy() -> impl Strategy<Value = Repr> {
        let v0 = (any::<u16>(), any::<bool>(), proptest::option::of(any::<u32>()), proptest::option::of(any::<u32>()))
            .prop_map(|(p, checksum, key, sequence)| Repr { checksum, key, sequence, ..Repr::gre(EtherType::from(p)) });
        let v1 = (any::<u16>(), proptest::option::of(any::<u32>()), proptest::option::of(any::<u32>()))
            .prop_map(|(call, seq, ack)| Repr::pptp(call, 0, seq, ack));
        prop_oneof![v0, v1]
    }

    proptest! {
        #[test]
        fn roundtrip(repr in repr_strategy(), payload in proptest::collection::vec(any::<u8>(), 0..64)) {
            let mut out = Vec::new();
            repr.encapsulate(&payload, &mut out);
            let packet = Packet::new_checked(&out[..]).unwrap();
            let parsed = Repr::parse(&packet).unwrap();
            prop_assert_eq!(packet.payload(), &payload[..]);
            let mut again = Vec::new();
            parsed.encapsulate(&payload, &mut again);
            prop_assert_eq!(again, out);
            prop_assert_eq!(parsed.overhead_fields(payload.len()).iter().map(|f| f.1).sum::<usize>(), parsed.header_len());
        }

        #[test]
        fn parse_never_panics(data in proptest::collection::vec(any::<u8>(), 0..40)) {
            let _ = Repr::parse(&Packet::new_unchecked(&data[..]));
        }
    }
}
