//! PPP over Ethernet.
//!
//! Standards a reader must know:
//!
//! * RFC 2516 (PPPoE): §4 the packet (VER, TYPE, CODE, SESSION_ID, LENGTH, payload) and
//!   the two EtherTypes (0x8863 discovery, 0x8864 session), §5 the discovery stage
//!   (PADI, PADO, PADR, PADS, PADT), §6 the session stage, §7 LCP considerations (the
//!   MRU of 1492, no Protocol-Field-Compression, no ACFC), Appendix A the TAGs.
//! * RFC 4638: the PPP-Max-Payload tag (MTU above 1492); RFC 1661 §2 for the PPP protocol
//!   field the session stage carries (see [`crate::ppp`]).
//!
//! Session stage: Ethernet (0x8864) | PPPoE header (6) | PPP protocol (2) | PPP payload.
//! Discovery stage: Ethernet (0x8863) | PPPoE header (6) | TAGs (type 2, length 2, value).

use crate::ppp;
use crate::{Error, Result};

/// RFC 2516 §4: the PPPoE header is six octets.
pub const HEADER_LEN: usize = 6;
/// RFC 2516 §7: the PPP protocol field is always two octets in PPPoE (PFC is not used).
pub const PPP_PROTOCOL_LEN: usize = 2;
/// RFC 2516 §4: VER, which MUST be 0x1.
pub const VERSION: u8 = 1;
/// RFC 2516 §4: TYPE, which MUST be 0x1.
pub const TYPE: u8 = 1;
/// RFC 2516 §7: the Maximum-Receive-Unit MUST NOT be negotiated above 1492 (Ethernet's
/// 1500 less the 6-octet PPPoE header and the 2-octet PPP protocol field).
pub const MTU: usize = 1492;
/// RFC 2516 §4: the length of a tag header (TAG_TYPE, TAG_LENGTH).
pub const TAG_HEADER_LEN: usize = 4;

crate::enum_with_unknown! {
    /// RFC 2516 §4, §5: CODE.
    pub enum Code(u8) {
        /// RFC 2516 §6: session data.
        Session = 0x00,
        /// RFC 2516 §5.2: PPPoE Active Discovery Offer.
        Pado = 0x07,
        /// RFC 2516 §5.1: PPPoE Active Discovery Initiation.
        Padi = 0x09,
        /// RFC 2516 §5.3: PPPoE Active Discovery Request.
        Padr = 0x19,
        /// RFC 2516 §5.4: PPPoE Active Discovery Session-confirmation.
        Pads = 0x65,
        /// RFC 2516 §5.5: PPPoE Active Discovery Terminate.
        Padt = 0xa7,
    }
}

impl Code {
    /// The EtherType a packet of this code travels in (RFC 2516 §4).
    pub fn ether_type(self) -> crate::EtherType {
        if self == Code::Session {
            crate::EtherType::PppoeSession
        } else {
            crate::EtherType::PppoeDiscovery
        }
    }
}

crate::enum_with_unknown! {
    /// RFC 2516 Appendix A: TAG_TYPE values.
    pub enum TagType(u16) {
        /// RFC 2516 App. A: End-Of-List, no value; optional, ends the list.
        EndOfList = 0x0000,
        /// RFC 2516 App. A: Service-Name, UTF-8, empty meaning any service.
        ServiceName = 0x0101,
        /// RFC 2516 App. A: AC-Name, the access concentrator's name.
        AcName = 0x0102,
        /// RFC 2516 App. A: Host-Uniq, opaque host data echoed by the AC.
        HostUniq = 0x0103,
        /// RFC 2516 App. A: AC-Cookie, opaque AC data echoed in the PADR.
        AcCookie = 0x0104,
        /// RFC 2516 App. A: Vendor-Specific, a 4-octet vendor id then data.
        VendorSpecific = 0x0105,
        /// RFC 2516 App. A: Relay-Session-Id, added by relays.
        RelaySessionId = 0x0110,
        /// RFC 4638: PPP-Max-Payload (section not checked here).
        PppMaxPayload = 0x0120,
        /// RFC 2516 App. A: Service-Name-Error.
        ServiceNameError = 0x0201,
        /// RFC 2516 App. A: AC-System-Error.
        AcSystemError = 0x0202,
        /// RFC 2516 App. A: Generic-Error.
        GenericError = 0x0203,
    }
}

/// Byte ranges of the PPPoE header (RFC 2516 §4).
pub mod field {
    use crate::{Field, Rest};
    /// RFC 2516 §4: VER (high nibble) and TYPE (low nibble).
    pub const VER_TYPE: usize = 0;
    /// RFC 2516 §4: CODE.
    pub const CODE: usize = 1;
    /// RFC 2516 §4: SESSION_ID, 0 during discovery until the PADS.
    pub const SESSION_ID: Field = 2..4;
    /// RFC 2516 §4: LENGTH of the payload, not counting the header or Ethernet padding.
    pub const LENGTH: Field = 4..6;
    /// RFC 2516 §4: payload.
    pub const PAYLOAD: Rest = 6..;
}

/// A PPPoE packet (RFC 2516 §4), as carried in an Ethernet payload (which may add
/// padding after LENGTH octets; it is ignored).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Packet<T: AsRef<[u8]>> {
    buffer: T,
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

    /// The header must be whole and LENGTH octets of payload present.
    pub fn check_len(&self) -> Result<()> {
        let len = self.buffer.as_ref().len();
        if len < HEADER_LEN || len < HEADER_LEN + usize::from(self.length()) {
            Err(Error::Truncated)
        } else {
            Ok(())
        }
    }

    pub fn into_inner(self) -> T {
        self.buffer
    }

    /// RFC 2516 §4: VER.
    pub fn version(&self) -> u8 {
        self.buffer.as_ref()[field::VER_TYPE] >> 4
    }

    /// RFC 2516 §4: TYPE.
    pub fn pppoe_type(&self) -> u8 {
        self.buffer.as_ref()[field::VER_TYPE] & 0x0f
    }

    /// RFC 2516 §4: CODE.
    pub fn code(&self) -> Code {
        Code::from(self.buffer.as_ref()[field::CODE])
    }

    /// RFC 2516 §4: SESSION_ID.
    pub fn session_id(&self) -> u16 {
        let d = &self.buffer.as_ref()[field::SESSION_ID];
        u16::from_be_bytes([d[0], d[1]])
    }

    /// RFC 2516 §4: LENGTH. Reads zero on a buffer shorter than the header.
    pub fn length(&self) -> u16 {
        match self.buffer.as_ref().get(field::LENGTH) {
            Some(d) => u16::from_be_bytes([d[0], d[1]]),
            None => 0,
        }
    }

    /// The payload, LENGTH octets (Ethernet padding excluded).
    pub fn payload(&self) -> &[u8] {
        &self.buffer.as_ref()[HEADER_LEN..HEADER_LEN + usize::from(self.length())]
    }

    /// The discovery TAGs of the payload.
    pub fn tags(&self) -> TagIter<'_> {
        TagIter::new(self.payload())
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    pub fn set_version(&mut self, value: u8) {
        let b = &mut self.buffer.as_mut()[field::VER_TYPE];
        *b = (*b & 0x0f) | (value << 4);
    }

    pub fn set_pppoe_type(&mut self, value: u8) {
        let b = &mut self.buffer.as_mut()[field::VER_TYPE];
        *b = (*b & 0xf0) | (value & 0x0f);
    }

    pub fn set_code(&mut self, value: Code) {
        self.buffer.as_mut()[field::CODE] = value.into();
    }

    pub fn set_session_id(&mut self, value: u16) {
        self.buffer.as_mut()[field::SESSION_ID].copy_from_slice(&value.to_be_bytes());
    }

    pub fn set_length(&mut self, value: u16) {
        self.buffer.as_mut()[field::LENGTH].copy_from_slice(&value.to_be_bytes());
    }

    pub fn payload_mut(&mut self) -> &mut [u8] {
        let end = HEADER_LEN + usize::from(self.length());
        &mut self.buffer.as_mut()[HEADER_LEN..end]
    }
}

/// The PPPoE header (RFC 2516 §4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Repr {
    pub code: Code,
    pub session_id: u16,
    /// LENGTH: octets of payload after the header.
    pub payload_len: u16,
}

impl Repr {
    /// Rejects a VER or TYPE other than 1 as `Unsupported`.
    pub fn parse<T: AsRef<[u8]> + ?Sized>(packet: &Packet<&T>) -> Result<Repr> {
        packet.check_len()?;
        if packet.version() != VERSION || packet.pppoe_type() != TYPE {
            return Err(Error::Unsupported);
        }
        Ok(Repr { code: packet.code(), session_id: packet.session_id(), payload_len: packet.length() })
    }

    pub fn header_len(&self) -> usize {
        HEADER_LEN
    }

    pub fn buffer_len(&self) -> usize {
        HEADER_LEN + usize::from(self.payload_len)
    }

    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]> + ?Sized>(&self, packet: &mut Packet<&mut T>) {
        packet.set_version(VERSION);
        packet.set_pppoe_type(TYPE);
        packet.set_code(self.code);
        packet.set_session_id(self.session_id);
        packet.set_length(self.payload_len);
    }

    /// The named header fields (RFC 2516 §4).
    pub fn overhead_fields(&self, _payload_len: usize) -> Vec<(&'static str, usize)> {
        vec![("ver/type", 1), ("code", 1), ("session id", 2), ("length", 2)]
    }
}

/// One discovery TAG (RFC 2516 Appendix A).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tag<'a> {
    pub kind: TagType,
    pub value: &'a [u8],
}

impl<'a> Tag<'a> {
    /// RFC 2516 App. A: a Service-Name; empty asks for any service.
    pub fn service_name(name: &'a [u8]) -> Tag<'a> {
        Tag { kind: TagType::ServiceName, value: name }
    }

    /// RFC 2516 App. A: an AC-Name.
    pub fn ac_name(name: &'a [u8]) -> Tag<'a> {
        Tag { kind: TagType::AcName, value: name }
    }

    /// RFC 2516 App. A: a Host-Uniq.
    pub fn host_uniq(value: &'a [u8]) -> Tag<'a> {
        Tag { kind: TagType::HostUniq, value }
    }

    /// RFC 2516 App. A: an AC-Cookie.
    pub fn ac_cookie(value: &'a [u8]) -> Tag<'a> {
        Tag { kind: TagType::AcCookie, value }
    }

    /// RFC 2516 App. A: a Relay-Session-Id.
    pub fn relay_session_id(value: &'a [u8]) -> Tag<'a> {
        Tag { kind: TagType::RelaySessionId, value }
    }

    /// RFC 2516 App. A: End-Of-List.
    pub fn end_of_list() -> Tag<'a> {
        Tag { kind: TagType::EndOfList, value: &[] }
    }

    /// Parses one TAG at the start of `data`; returns it and its length.
    pub fn parse(data: &'a [u8]) -> Result<(Tag<'a>, usize)> {
        if data.len() < TAG_HEADER_LEN {
            return Err(Error::Truncated);
        }
        let kind = TagType::from(u16::from_be_bytes([data[0], data[1]]));
        let len = usize::from(u16::from_be_bytes([data[2], data[3]]));
        let value = data.get(TAG_HEADER_LEN..TAG_HEADER_LEN + len).ok_or(Error::Truncated)?;
        if kind == TagType::EndOfList && len != 0 {
            return Err(Error::Malformed);
        }
        Ok((Tag { kind, value }, TAG_HEADER_LEN + len))
    }

    pub fn buffer_len(&self) -> usize {
        TAG_HEADER_LEN + self.value.len()
    }

    /// Writes the TAG at the start of `buf`; returns its length. Panics if `buf` is
    /// short or the value is over 65,535 octets.
    pub fn emit(&self, buf: &mut [u8]) -> usize {
        let len = u16::try_from(self.value.len()).expect("PPPoE tag over 65535 octets");
        buf[0..2].copy_from_slice(&u16::from(self.kind).to_be_bytes());
        buf[2..4].copy_from_slice(&len.to_be_bytes());
        buf[4..4 + self.value.len()].copy_from_slice(self.value);
        self.buffer_len()
    }
}

/// Iterates over the TAGs of a discovery payload. Stops after End-Of-List (RFC 2516
/// App. A: nothing after it is a TAG), and after yielding an error once.
#[derive(Debug, Clone)]
pub struct TagIter<'a> {
    data: &'a [u8],
    done: bool,
}

impl<'a> TagIter<'a> {
    pub fn new(data: &'a [u8]) -> TagIter<'a> {
        TagIter { data, done: false }
    }
}

impl<'a> Iterator for TagIter<'a> {
    type Item = Result<Tag<'a>>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done || self.data.is_empty() {
            return None;
        }
        match Tag::parse(self.data) {
            Ok((tag, len)) => {
                self.data = &self.data[len..];
                self.done = tag.kind == TagType::EndOfList;
                Some(Ok(tag))
            }
            Err(e) => {
                self.done = true;
                Some(Err(e))
            }
        }
    }
}

/// A discovery-stage packet (RFC 2516 §5): header and TAGs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiscoveryRepr<'a> {
    pub code: Code,
    /// Zero in PADI, PADO and PADR; the session in PADS and PADT (RFC 2516 §5).
    pub session_id: u16,
    pub tags: Vec<Tag<'a>>,
}

impl<'a> DiscoveryRepr<'a> {
    /// A discovery packet with no tags yet; add them with [`DiscoveryRepr::tag`].
    pub fn new(code: Code, session_id: u16) -> DiscoveryRepr<'a> {
        DiscoveryRepr { code, session_id, tags: Vec::new() }
    }

    /// Builder step: appends a TAG.
    pub fn tag(mut self, tag: Tag<'a>) -> DiscoveryRepr<'a> {
        self.tags.push(tag);
        self
    }

    /// Parses header and TAGs; a session-stage code is `Malformed` here.
    pub fn parse<T: AsRef<[u8]> + ?Sized>(packet: &Packet<&'a T>) -> Result<DiscoveryRepr<'a>> {
        let header = Repr::parse(packet)?;
        if header.code == Code::Session {
            return Err(Error::Malformed);
        }
        let data: &'a [u8] = packet.buffer.as_ref();
        let payload = &data[HEADER_LEN..HEADER_LEN + usize::from(header.payload_len)];
        let tags = TagIter::new(payload).collect::<Result<Vec<_>>>()?;
        Ok(DiscoveryRepr { code: header.code, session_id: header.session_id, tags })
    }

    pub fn payload_len(&self) -> usize {
        self.tags.iter().map(Tag::buffer_len).sum()
    }

    pub fn buffer_len(&self) -> usize {
        HEADER_LEN + self.payload_len()
    }

    /// Writes header and TAGs. Panics if the buffer is short or the TAGs exceed 65,535
    /// octets.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]> + ?Sized>(&self, packet: &mut Packet<&mut T>) {
        let payload_len = u16::try_from(self.payload_len()).expect("PPPoE payload over 65535 octets");
        Repr { code: self.code, session_id: self.session_id, payload_len }.emit(packet);
        let mut at = 0;
        let payload = packet.payload_mut();
        for tag in &self.tags {
            at += tag.emit(&mut payload[at..]);
        }
    }
}

/// A session-stage packet's header (RFC 2516 §6) with the PPP protocol field it starts
/// with (RFC 2516 §7: always two octets).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SessionRepr {
    pub session_id: u16,
    pub protocol: ppp::Protocol,
    /// Octets of PPP information after the protocol field.
    pub payload_len: usize,
}

impl SessionRepr {
    /// A discovery code is `Malformed` here; LENGTH below 2 (no protocol field) too.
    pub fn parse<T: AsRef<[u8]> + ?Sized>(packet: &Packet<&T>) -> Result<SessionRepr> {
        let header = Repr::parse(packet)?;
        if header.code != Code::Session {
            return Err(Error::Malformed);
        }
        let payload = packet.payload();
        if payload.len() < PPP_PROTOCOL_LEN {
            return Err(Error::Malformed);
        }
        Ok(SessionRepr {
            session_id: header.session_id,
            protocol: ppp::Protocol::from(u16::from_be_bytes([payload[0], payload[1]])),
            payload_len: payload.len() - PPP_PROTOCOL_LEN,
        })
    }

    /// PPPoE header and PPP protocol field.
    pub fn header_len(&self) -> usize {
        HEADER_LEN + PPP_PROTOCOL_LEN
    }

    pub fn buffer_len(&self) -> usize {
        self.header_len() + self.payload_len
    }

    /// Writes the PPPoE header and the PPP protocol field; the PPP information is the
    /// caller's (`packet.payload_mut()[2..]`). Panics if the buffer is short or the
    /// payload exceeds LENGTH's 65,535.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]> + ?Sized>(&self, packet: &mut Packet<&mut T>) {
        let payload_len = u16::try_from(PPP_PROTOCOL_LEN + self.payload_len).expect("PPPoE payload over 65535 octets");
        Repr { code: Code::Session, session_id: self.session_id, payload_len }.emit(packet);
        ppp::emit_protocol(self.protocol, false, packet.payload_mut());
    }

    /// Appends the PPPoE header, the protocol field and `ppp_payload` to `out`
    /// (`self.payload_len` is taken from `ppp_payload`).
    pub fn encapsulate(&self, ppp_payload: &[u8], out: &mut Vec<u8>) {
        let repr = SessionRepr { payload_len: ppp_payload.len(), ..*self };
        let start = out.len();
        out.resize(start + repr.buffer_len(), 0);
        let mut packet = Packet::new_unchecked(&mut out[start..]);
        repr.emit(&mut packet);
        packet.payload_mut()[PPP_PROTOCOL_LEN..].copy_from_slice(ppp_payload);
    }

    /// The named octets the session stage adds (seed 002 §3.3 counts these 8 as "PPP
    /// header takes 8 bytes in PPPoE").
    pub fn overhead_fields(&self, _payload_len: usize) -> Vec<(&'static str, usize)> {
        vec![("ver/type", 1), ("code", 1), ("session id", 2), ("length", 2), ("ppp protocol", 2)]
    }
}

#[cfg(test)]
mod test {
    use super::*;
    use proptest::prelude::*;

    // A PADI (RFC 2516 §5.1), computed by hand: ver/type 0x11, code 0x09, session 0,
    // length 16; Service-Name "iwas" (0101 0004 69 77 61 73), Host-Uniq 0x12345678
    // (0103 0004 12 34 56 78).
    static PADI_BYTES: [u8; 22] = [
        0x11, 0x09, 0x00, 0x00, 0x00, 0x10, 0x01, 0x01, 0x00, 0x04, b'i', b'w', b'a', b's', 0x01, 0x03, 0x00, 0x04,
        0x12, 0x34, 0x56, 0x78,
    ];

    // A session packet (RFC 2516 §6): session 0x0042, length 2 + 4, protocol 0x0021
    // (IPv4), four octets of datagram, then two octets of Ethernet padding.
    static SESSION_BYTES: [u8; 14] =
        [0x11, 0x00, 0x00, 0x42, 0x00, 0x06, 0x00, 0x21, 0x45, 0x00, 0x00, 0x14, 0x00, 0x00];

    #[test]
    fn test_parse_padi() {
        let packet = Packet::new_checked(&PADI_BYTES[..]).unwrap();
        assert_eq!(packet.version(), 1);
        assert_eq!(packet.pppoe_type(), 1);
        assert_eq!(packet.code(), Code::Padi);
        assert_eq!(packet.session_id(), 0);
        assert_eq!(packet.length(), 16);
        let repr = DiscoveryRepr::parse(&packet).unwrap();
        assert_eq!(
            repr,
            DiscoveryRepr::new(Code::Padi, 0)
                .tag(Tag::service_name(b"iwas"))
                .tag(Tag::host_uniq(&[0x12, 0x34, 0x56, 0x78]))
        );
    }

    #[test]
    fn test_emit_padi() {
        let repr = DiscoveryRepr::new(Code::Padi, 0)
            .tag(Tag::service_name(b"iwas"))
            .tag(Tag::host_uniq(&[0x12, 0x34, 0x56, 0x78]));
        let mut out = vec![0u8; repr.buffer_len()];
        repr.emit(&mut Packet::new_unchecked(&mut out[..]));
        assert_eq!(out, PADI_BYTES);
    }

    #[test]
    fn test_session() {
        let packet = Packet::new_checked(&SESSION_BYTES[..]).unwrap();
        assert_eq!(packet.payload(), &SESSION_BYTES[6..12]);
        let repr = SessionRepr::parse(&packet).unwrap();
        assert_eq!(repr, SessionRepr { session_id: 0x42, protocol: ppp::Protocol::Ipv4, payload_len: 4 });
        let mut out = Vec::new();
        repr.encapsulate(&[0x45, 0x00, 0x00, 0x14], &mut out);
        assert_eq!(out, SESSION_BYTES[..12]);
        let total: usize = repr.overhead_fields(1492).iter().map(|f| f.1).sum();
        assert_eq!(total, 8);
        // Seed 002 §3.3: the TAP interface's MTU of 1430 leaves 1430 - 8 = 1422 for IP;
        // on plain Ethernet 1500 - 8 = 1492 (RFC 2516 §7).
        assert_eq!(1430 - total, 1422);
        assert_eq!(1500 - total, MTU);
    }

    #[test]
    fn errors() {
        assert_eq!(Packet::new_checked(&PADI_BYTES[..5]).unwrap_err(), Error::Truncated);
        assert_eq!(Packet::new_checked(&PADI_BYTES[..21]).unwrap_err(), Error::Truncated);
        let mut bad = PADI_BYTES;
        bad[0] = 0x21;
        assert_eq!(Repr::parse(&Packet::new_unchecked(&bad[..])), Err(Error::Unsupported));
        // A tag running past the payload.
        let mut bad = PADI_BYTES;
        bad[17] = 0x05;
        assert_eq!(DiscoveryRepr::parse(&Packet::new_unchecked(&bad[..])), Err(Error::Truncated));
        // Codes of the wrong stage.
        assert_eq!(SessionRepr::parse(&Packet::new_unchecked(&PADI_BYTES[..])), Err(Error::Malformed));
        assert_eq!(DiscoveryRepr::parse(&Packet::new_unchecked(&SESSION_BYTES[..])), Err(Error::Malformed));
        // A session packet too short for its protocol field.
        let short = [0x11, 0x00, 0x00, 0x42, 0x00, 0x01, 0x00];
        assert_eq!(SessionRepr::parse(&Packet::new_unchecked(&short[..])), Err(Error::Malformed));
        // End-Of-List ends the iteration.
        let tags = [0x00, 0x00, 0x00, 0x00, 0x01, 0x01, 0x00, 0x00];
        assert_eq!(TagIter::new(&tags).count(), 1);
    }

    fn tag_strategy() -> impl Strategy<Value = (u16, Vec<u8>)> {
        (1u16..0x300, proptest::collection::vec(any::<u8>(), 0..16))
    }

    proptest! {
        #[test]
        fn discovery_roundtrip(code in prop_oneof![Just(Code::Padi), Just(Code::Pado), Just(Code::Padr), Just(Code::Pads), Just(Code::Padt)],
                               session_id in any::<u16>(), raw in proptest::collection::vec(tag_strategy(), 0..5)) {
            let tags: Vec<Tag> = raw.iter().map(|(k, v)| Tag { kind: TagType::from(*k), value: v }).collect();
            let repr = DiscoveryRepr { code, session_id, tags };
            let mut out = vec![0u8; repr.buffer_len()];
            repr.emit(&mut Packet::new_unchecked(&mut out[..]));
            let parsed = DiscoveryRepr::parse(&Packet::new_checked(&out[..]).unwrap()).unwrap();
            prop_assert_eq!(&parsed, &repr);
            let mut again = vec![0u8; parsed.buffer_len()];
            parsed.emit(&mut Packet::new_unchecked(&mut again[..]));
            prop_assert_eq!(again, out);
        }

        #[test]
        fn session_roundtrip(session_id in any::<u16>(), protocol in any::<u16>(), payload in proptest::collection::vec(any::<u8>(), 0..64)) {
            let repr = SessionRepr { session_id, protocol: ppp::Protocol::from(protocol), payload_len: payload.len() };
            let mut out = Vec::new();
            repr.encapsulate(&payload, &mut out);
            let packet = Packet::new_checked(&out[..]).unwrap();
            let parsed = SessionRepr::parse(&packet).unwrap();
            prop_assert_eq!(parsed, repr);
            prop_assert_eq!(&packet.payload()[2..], &payload[..]);
            let header = Repr::parse(&packet).unwrap();
            let mut again = out.clone();
            header.emit(&mut Packet::new_unchecked(&mut again[..]));
            prop_assert_eq!(again, out);
        }

        #[test]
        fn parse_never_panics(data in proptest::collection::vec(any::<u8>(), 0..64)) {
            let packet = Packet::new_unchecked(&data[..]);
            let _ = Repr::parse(&packet);
            let _ = DiscoveryRepr::parse(&packet);
            let _ = SessionRepr::parse(&packet);
        }
    }
}
