//! The Point-to-Point Protocol: the protocol field and the control-protocol packets.
//!
//! Standards a reader must know:
//!
//! * RFC 1661 (PPP): §2 the encapsulation (protocol field, information, padding), §5 the
//!   packet format shared by the LCP-like control protocols (code, identifier, length,
//!   data), §6 the LCP configuration options, §6.5 Protocol-Field-Compression (PFC) and
//!   §6.6 Address-and-Control-Field-Compression (ACFC, handled in `hdlc.rs`).
//! * RFC 1994 (CHAP) §4: Challenge/Response/Success/Failure, which reuse the §5 header.
//! * RFC 1332 (IPCP), RFC 5072 (IPv6CP), RFC 1962 (CCP), RFC 1334 (PAP), RFC 3748 (EAP):
//!   the protocol numbers only.
//!
//! The assigned numbers are IANA's "PPP DLL Protocol Numbers" registry.
//!
//! A PPP frame here is what RFC 1661 §2 draws: a protocol field of one or two octets,
//! then the information field. The HDLC-like framing around it (flags, address, control,
//! FCS, octet stuffing) lives in [`crate::hdlc`]; PPPoE's framing in [`crate::pppoe`];
//! enhanced GRE's in [`crate::gre`].

use crate::{Error, Result};

crate::enum_with_unknown! {
    /// RFC 1661 §2 protocol field values (IANA "PPP DLL Protocol Numbers").
    pub enum Protocol(u16) {
        /// RFC 1661 §2: padding protocol.
        Padding = 0x0001,
        /// RFC 1332 §2: Internet Protocol version 4.
        Ipv4 = 0x0021,
        /// RFC 1144 / RFC 1332 §4: Van Jacobson compressed TCP/IP.
        VjCompressed = 0x002d,
        /// RFC 1144 / RFC 1332 §4: Van Jacobson uncompressed TCP/IP.
        VjUncompressed = 0x002f,
        /// RFC 1990: PPP Multilink.
        Multilink = 0x003d,
        /// RFC 5072 §3: Internet Protocol version 6.
        Ipv6 = 0x0057,
        /// RFC 1962 §2: a datagram compressed by the CCP-negotiated method.
        CompressedDatagram = 0x00fd,
        /// RFC 1332 §2: IP Control Protocol.
        Ipcp = 0x8021,
        /// RFC 5072 §4: IPv6 Control Protocol.
        Ipv6cp = 0x8057,
        /// RFC 1962 §2: Compression Control Protocol.
        Ccp = 0x80fd,
        /// RFC 1661 §5: Link Control Protocol.
        Lcp = 0xc021,
        /// RFC 1334 §2: Password Authentication Protocol.
        Pap = 0xc023,
        /// RFC 1989: Link Quality Report.
        Lqr = 0xc025,
        /// RFC 1994 §4: Challenge-Handshake Authentication Protocol.
        Chap = 0xc223,
        /// RFC 3748 §4: Extensible Authentication Protocol.
        Eap = 0xc227,
    }
}

impl Protocol {
    /// RFC 1661 §2: a valid protocol number has the least significant bit of its low
    /// octet set and that of its high octet clear ("odd, with an even high octet").
    pub fn is_valid(self) -> bool {
        let v = u16::from(self);
        v & 0x0001 == 0x0001 && v & 0x0100 == 0
    }

    /// RFC 1661 §6.5: with PFC negotiated, values 0x0000–0x00ff may be sent as one
    /// octet (their high octet, zero, is dropped). LCP and the other control protocols
    /// (≥ 0x8000) never are.
    pub fn is_compressible(self) -> bool {
        u16::from(self) <= 0x00ff
    }

    /// The length of the protocol field for this protocol: 1 with PFC for a
    /// compressible value, 2 otherwise (RFC 1661 §2, §6.5).
    pub fn field_len(self, pfc: bool) -> usize {
        if pfc && self.is_compressible() {
            1
        } else {
            2
        }
    }
}

/// Reads a protocol field, compressed or not, from the start of `data`; returns the
/// protocol and the field's length. RFC 1661 §6.5: an odd first octet is a one-octet
/// (compressed) field, since every valid high octet is even.
pub fn parse_protocol(data: &[u8]) -> Result<(Protocol, usize)> {
    match data {
        [] => Err(Error::Truncated),
        [first, ..] if first & 1 == 1 => Ok((Protocol::from(u16::from(*first)), 1)),
        [_] => Err(Error::Truncated),
        [hi, lo, ..] => Ok((Protocol::from(u16::from_be_bytes([*hi, *lo])), 2)),
    }
}

/// Writes the protocol field at the start of `buf`, one octet when `pfc` and the value
/// fits (RFC 1661 §6.5), and returns its length. Panics if `buf` is too short.
pub fn emit_protocol(protocol: Protocol, pfc: bool, buf: &mut [u8]) -> usize {
    let value = u16::from(protocol);
    if protocol.field_len(pfc) == 1 {
        buf[0] = value as u8;
        1
    } else {
        buf[..2].copy_from_slice(&value.to_be_bytes());
        2
    }
}

/// RFC 1661 §6.1: the default Maximum-Receive-Unit, 1500 octets of information and
/// padding (the protocol field not counted).
pub const DEFAULT_MRU: u16 = 1500;

/// A PPP frame (RFC 1661 §2): a protocol field of one or two octets, then the
/// information field (plus any padding, which PPP cannot tell from information).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Frame<T> {
    pub const fn new_unchecked(buffer: T) -> Frame<T> {
        Frame { buffer }
    }

    pub fn new_checked(buffer: T) -> Result<Frame<T>> {
        let frame = Frame::new_unchecked(buffer);
        frame.check_len()?;
        Ok(frame)
    }

    /// Ensures the protocol field is whole.
    pub fn check_len(&self) -> Result<()> {
        parse_protocol(self.buffer.as_ref()).map(|_| ())
    }

    pub fn into_inner(self) -> T {
        self.buffer
    }

    /// The protocol field's length: 1 when compressed (first octet odd), else 2.
    pub fn header_len(&self) -> usize {
        match self.buffer.as_ref().first() {
            Some(b) if b & 1 == 1 => 1,
            _ => 2,
        }
    }

    /// RFC 1661 §2: the protocol field.
    pub fn protocol(&self) -> Protocol {
        let data = self.buffer.as_ref();
        if self.header_len() == 1 {
            Protocol::from(u16::from(data[0]))
        } else {
            Protocol::from(u16::from_be_bytes([data[0], data[1]]))
        }
    }

    /// RFC 1661 §2: the information field (and padding).
    pub fn payload(&self) -> &[u8] {
        &self.buffer.as_ref()[self.header_len()..]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Frame<T> {
    /// Writes `protocol` into the field's present width; a one-octet field takes only
    /// the low octet, so the caller must have chosen the width with [`Protocol::field_len`].
    pub fn set_protocol(&mut self, protocol: Protocol) {
        let width = self.header_len();
        let value = u16::from(protocol);
        let data = self.buffer.as_mut();
        if width == 1 {
            data[0] = value as u8;
        } else {
            data[..2].copy_from_slice(&value.to_be_bytes());
        }
    }

    pub fn payload_mut(&mut self) -> &mut [u8] {
        let start = self.header_len();
        &mut self.buffer.as_mut()[start..]
    }
}

/// The PPP encapsulation of RFC 1661 §2.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Repr {
    pub protocol: Protocol,
    /// Send the protocol field in one octet when it fits (PFC negotiated, RFC 1661 §6.5).
    /// After parsing: true when the field was one octet.
    pub pfc: bool,
}

impl Repr {
    pub fn parse<T: AsRef<[u8]> + ?Sized>(frame: &Frame<&T>) -> Result<Repr> {
        let (protocol, len) = parse_protocol(frame.buffer.as_ref())?;
        Ok(Repr { protocol, pfc: len == 1 })
    }

    /// The protocol field's length.
    pub fn header_len(&self) -> usize {
        self.protocol.field_len(self.pfc)
    }

    pub fn buffer_len(&self, payload_len: usize) -> usize {
        self.header_len() + payload_len
    }

    /// Writes the protocol field; the payload is the caller's.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]> + ?Sized>(&self, frame: &mut Frame<&mut T>) {
        emit_protocol(self.protocol, self.pfc, frame.buffer.as_mut());
    }

    /// Appends the protocol field and `payload` to `out`.
    pub fn encapsulate(&self, payload: &[u8], out: &mut Vec<u8>) {
        let mut field = [0u8; 2];
        let n = emit_protocol(self.protocol, self.pfc, &mut field);
        out.extend_from_slice(&field[..n]);
        out.extend_from_slice(payload);
    }

    /// The named byte counts PPP adds to a payload: only its protocol field.
    pub fn overhead_fields(&self, _payload_len: usize) -> Vec<(&'static str, usize)> {
        vec![("ppp protocol", self.header_len())]
    }
}

crate::enum_with_unknown! {
    /// RFC 1661 §5 codes of LCP (and, for codes 1–7, of IPCP, RFC 1332 §2, and CCP,
    /// RFC 1962 §2, which reuse them).
    pub enum Code(u8) {
        /// RFC 1661 §5.1.
        ConfigureRequest = 1,
        /// RFC 1661 §5.2.
        ConfigureAck = 2,
        /// RFC 1661 §5.3.
        ConfigureNak = 3,
        /// RFC 1661 §5.4.
        ConfigureReject = 4,
        /// RFC 1661 §5.5.
        TerminateRequest = 5,
        /// RFC 1661 §5.5.
        TerminateAck = 6,
        /// RFC 1661 §5.6.
        CodeReject = 7,
        /// RFC 1661 §5.7.
        ProtocolReject = 8,
        /// RFC 1661 §5.8.
        EchoRequest = 9,
        /// RFC 1661 §5.8.
        EchoReply = 10,
        /// RFC 1661 §5.9.
        DiscardRequest = 11,
    }
}

crate::enum_with_unknown! {
    /// RFC 1994 §4 CHAP codes.
    pub enum ChapCode(u8) {
        /// RFC 1994 §4.1.
        Challenge = 1,
        /// RFC 1994 §4.1.
        Response = 2,
        /// RFC 1994 §4.2.
        Success = 3,
        /// RFC 1994 §4.2.
        Failure = 4,
    }
}

/// Byte ranges of the RFC 1661 §5 control-packet header.
pub mod field {
    use crate::{Field, Rest};
    /// RFC 1661 §5: Code.
    pub const CODE: usize = 0;
    /// RFC 1661 §5: Identifier, matching requests and replies.
    pub const IDENTIFIER: usize = 1;
    /// RFC 1661 §5: Length of code, identifier, length and data.
    pub const LENGTH: Field = 2..4;
    /// RFC 1661 §5: Data, up to Length.
    pub const DATA: Rest = 4..;
}

/// Length of the RFC 1661 §5 header (code, identifier, length).
pub const CONTROL_HEADER_LEN: usize = 4;

/// A control-protocol packet (LCP, IPCP, CCP, CHAP, PAP share it): RFC 1661 §5.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ControlPacket<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> ControlPacket<T> {
    pub const fn new_unchecked(buffer: T) -> ControlPacket<T> {
        ControlPacket { buffer }
    }

    pub fn new_checked(buffer: T) -> Result<ControlPacket<T>> {
        let packet = ControlPacket::new_unchecked(buffer);
        packet.check_len()?;
        Ok(packet)
    }

    /// RFC 1661 §5: the header must be whole, Length at least 4 and within the buffer
    /// (octets past Length are padding and ignored).
    pub fn check_len(&self) -> Result<()> {
        let data = self.buffer.as_ref();
        if data.len() < CONTROL_HEADER_LEN {
            return Err(Error::Truncated);
        }
        let length = usize::from(self.length());
        if length < CONTROL_HEADER_LEN {
            Err(Error::Malformed)
        } else if length > data.len() {
            Err(Error::Truncated)
        } else {
            Ok(())
        }
    }

    pub fn into_inner(self) -> T {
        self.buffer
    }

    /// RFC 1661 §5: Code.
    pub fn code(&self) -> u8 {
        self.buffer.as_ref()[field::CODE]
    }

    /// RFC 1661 §5: Identifier.
    pub fn identifier(&self) -> u8 {
        self.buffer.as_ref()[field::IDENTIFIER]
    }

    /// RFC 1661 §5: Length.
    pub fn length(&self) -> u16 {
        let d = &self.buffer.as_ref()[field::LENGTH];
        u16::from_be_bytes([d[0], d[1]])
    }

    /// RFC 1661 §5: Data, without any padding after Length.
    pub fn data(&self) -> &[u8] {
        &self.buffer.as_ref()[CONTROL_HEADER_LEN..usize::from(self.length())]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> ControlPacket<T> {
    pub fn set_code(&mut self, value: u8) {
        self.buffer.as_mut()[field::CODE] = value;
    }

    pub fn set_identifier(&mut self, value: u8) {
        self.buffer.as_mut()[field::IDENTIFIER] = value;
    }

    pub fn set_length(&mut self, value: u16) {
        self.buffer.as_mut()[field::LENGTH].copy_from_slice(&value.to_be_bytes());
    }

    /// The data field as far as Length says.
    pub fn data_mut(&mut self) -> &mut [u8] {
        let end = usize::from(self.length());
        &mut self.buffer.as_mut()[CONTROL_HEADER_LEN..end]
    }
}

/// A control packet of any control protocol (RFC 1661 §5); `code` is raw because its
/// meaning depends on the protocol: [`Code`] for LCP/IPCP/CCP, [`ChapCode`] for CHAP.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ControlRepr<'a> {
    pub code: u8,
    pub identifier: u8,
    pub data: &'a [u8],
}

impl<'a> ControlRepr<'a> {
    pub fn parse<T: AsRef<[u8]> + ?Sized>(packet: &ControlPacket<&'a T>) -> Result<ControlRepr<'a>> {
        packet.check_len()?;
        let data = packet.buffer.as_ref();
        let length = usize::from(packet.length());
        Ok(ControlRepr {
            code: packet.code(),
            identifier: packet.identifier(),
            data: &data[CONTROL_HEADER_LEN..length],
        })
    }

    pub fn header_len(&self) -> usize {
        CONTROL_HEADER_LEN
    }

    pub fn buffer_len(&self) -> usize {
        CONTROL_HEADER_LEN + self.data.len()
    }

    /// Writes header and data. Panics if the buffer is short or the packet exceeds
    /// 65,535 octets (a caller bug: no PPP link carries that).
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]> + ?Sized>(&self, packet: &mut ControlPacket<&mut T>) {
        let length = u16::try_from(self.buffer_len()).expect("control packet over 65535 octets");
        packet.set_code(self.code);
        packet.set_identifier(self.identifier);
        packet.set_length(length);
        packet.data_mut().copy_from_slice(self.data);
    }

    /// The data read as LCP configuration options (meaningful for Configure-* codes).
    pub fn lcp_options(&self) -> LcpOptionIter<'a> {
        LcpOptionIter::new(self.data)
    }
}

crate::enum_with_unknown! {
    /// RFC 1661 §6 LCP configuration option types.
    pub enum LcpOptionType(u8) {
        /// RFC 1661 §6.1.
        Mru = 1,
        /// RFC 1662 §7.1 (was RFC 1548 §6.2).
        Accm = 2,
        /// RFC 1661 §6.2.
        AuthProtocol = 3,
        /// RFC 1661 §6.3.
        QualityProtocol = 4,
        /// RFC 1661 §6.4.
        MagicNumber = 5,
        /// RFC 1661 §6.5.
        Pfc = 7,
        /// RFC 1661 §6.6.
        Acfc = 8,
    }
}

/// One LCP configuration option (RFC 1661 §6: type, length, data).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LcpOption<'a> {
    /// RFC 1661 §6.1: Maximum-Receive-Unit.
    Mru(u16),
    /// RFC 1662 §7.1: Async-Control-Character-Map.
    Accm(u32),
    /// RFC 1661 §6.2: Authentication-Protocol, e.g. CHAP with algorithm 5 (MD5).
    AuthProtocol { protocol: Protocol, data: &'a [u8] },
    /// RFC 1661 §6.3: Quality-Protocol.
    QualityProtocol { protocol: Protocol, data: &'a [u8] },
    /// RFC 1661 §6.4: Magic-Number.
    MagicNumber(u32),
    /// RFC 1661 §6.5: Protocol-Field-Compression.
    Pfc,
    /// RFC 1661 §6.6: Address-and-Control-Field-Compression.
    Acfc,
    /// Any other option, kept as it was.
    Unknown { kind: u8, data: &'a [u8] },
}

impl<'a> LcpOption<'a> {
    /// Parses one option from the start of `data`; returns it and its length.
    pub fn parse(data: &'a [u8]) -> Result<(LcpOption<'a>, usize)> {
        let (kind, len) = match data {
            [kind, len, ..] => (*kind, usize::from(*len)),
            _ => return Err(Error::Truncated),
        };
        if len < 2 {
            return Err(Error::Malformed);
        }
        let body = data.get(2..len).ok_or(Error::Truncated)?;
        let fixed = |n: usize| if body.len() == n { Ok(()) } else { Err(Error::Malformed) };
        let option = match LcpOptionType::from(kind) {
            LcpOptionType::Mru => {
                fixed(2)?;
                LcpOption::Mru(u16::from_be_bytes([body[0], body[1]]))
            }
            LcpOptionType::Accm => {
                fixed(4)?;
                LcpOption::Accm(u32::from_be_bytes([body[0], body[1], body[2], body[3]]))
            }
            LcpOptionType::MagicNumber => {
                fixed(4)?;
                LcpOption::MagicNumber(u32::from_be_bytes([body[0], body[1], body[2], body[3]]))
            }
            LcpOptionType::AuthProtocol | LcpOptionType::QualityProtocol => {
                if body.len() < 2 {
                    return Err(Error::Malformed);
                }
                let protocol = Protocol::from(u16::from_be_bytes([body[0], body[1]]));
                let data = &body[2..];
                if kind == u8::from(LcpOptionType::AuthProtocol) {
                    LcpOption::AuthProtocol { protocol, data }
                } else {
                    LcpOption::QualityProtocol { protocol, data }
                }
            }
            LcpOptionType::Pfc => {
                fixed(0)?;
                LcpOption::Pfc
            }
            LcpOptionType::Acfc => {
                fixed(0)?;
                LcpOption::Acfc
            }
            LcpOptionType::Unknown(_) => LcpOption::Unknown { kind, data: body },
        };
        Ok((option, len))
    }

    pub fn kind(&self) -> LcpOptionType {
        match self {
            LcpOption::Mru(_) => LcpOptionType::Mru,
            LcpOption::Accm(_) => LcpOptionType::Accm,
            LcpOption::AuthProtocol { .. } => LcpOptionType::AuthProtocol,
            LcpOption::QualityProtocol { .. } => LcpOptionType::QualityProtocol,
            LcpOption::MagicNumber(_) => LcpOptionType::MagicNumber,
            LcpOption::Pfc => LcpOptionType::Pfc,
            LcpOption::Acfc => LcpOptionType::Acfc,
            LcpOption::Unknown { kind, .. } => LcpOptionType::from(*kind),
        }
    }

    /// The option's length including type and length octets.
    pub fn buffer_len(&self) -> usize {
        2 + match self {
            LcpOption::Mru(_) => 2,
            LcpOption::Accm(_) | LcpOption::MagicNumber(_) => 4,
            LcpOption::AuthProtocol { data, .. } | LcpOption::QualityProtocol { data, .. } => 2 + data.len(),
            LcpOption::Pfc | LcpOption::Acfc => 0,
            LcpOption::Unknown { data, .. } => data.len(),
        }
    }

    /// Writes the option at the start of `buf`; returns its length. Panics if `buf` is
    /// short or the option is longer than 255 octets.
    pub fn emit(&self, buf: &mut [u8]) -> usize {
        let len = self.buffer_len();
        buf[0] = u8::from(self.kind());
        buf[1] = u8::try_from(len).expect("LCP option over 255 octets");
        let body = &mut buf[2..len];
        match self {
            LcpOption::Mru(v) => body.copy_from_slice(&v.to_be_bytes()),
            LcpOption::Accm(v) | LcpOption::MagicNumber(v) => body.copy_from_slice(&v.to_be_bytes()),
            LcpOption::AuthProtocol { protocol, data } | LcpOption::QualityProtocol { protocol, data } => {
                body[..2].copy_from_slice(&u16::from(*protocol).to_be_bytes());
                body[2..].copy_from_slice(data);
            }
            LcpOption::Pfc | LcpOption::Acfc => {}
            LcpOption::Unknown { data, .. } => body.copy_from_slice(data),
        }
        len
    }
}

/// Iterates over the LCP options of a Configure-* packet's data; yields an error once
/// and then stops on a malformed option.
#[derive(Debug, Clone)]
pub struct LcpOptionIter<'a> {
    data: &'a [u8],
    failed: bool,
}

impl<'a> LcpOptionIter<'a> {
    pub fn new(data: &'a [u8]) -> LcpOptionIter<'a> {
        LcpOptionIter { data, failed: false }
    }
}

impl<'a> Iterator for LcpOptionIter<'a> {
    type Item = Result<LcpOption<'a>>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed || self.data.is_empty() {
            return None;
        }
        match LcpOption::parse(self.data) {
            Ok((option, len)) => {
                self.data = &self.data[len..];
                Some(Ok(option))
            }
            Err(e) => {
                self.failed = true;
                Some(Err(e))
            }
        }
    }
}

/// Appends `options` to `out` (the data of an LCP Configure-Request, say).
pub fn emit_lcp_options(options: &[LcpOption<'_>], out: &mut Vec<u8>) {
    for option in options {
        let start = out.len();
        out.resize(start + option.buffer_len(), 0);
        option.emit(&mut out[start..]);
    }
}

/// The body of a CHAP packet (RFC 1994 §4).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChapBody<'a> {
    /// RFC 1994 §4.1: Value-Size (1 octet), Value, Name.
    Challenge { value: &'a [u8], name: &'a [u8] },
    /// RFC 1994 §4.1: Value-Size, Value (for MD5, the 16-octet hash), Name.
    Response { value: &'a [u8], name: &'a [u8] },
    /// RFC 1994 §4.2: a Message of any length.
    Success { message: &'a [u8] },
    /// RFC 1994 §4.2: a Message of any length.
    Failure { message: &'a [u8] },
}

/// A CHAP packet (RFC 1994 §4), carried in a PPP frame of protocol 0xc223.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChapRepr<'a> {
    pub identifier: u8,
    pub body: ChapBody<'a>,
}

impl<'a> ChapRepr<'a> {
    pub fn parse<T: AsRef<[u8]> + ?Sized>(packet: &ControlPacket<&'a T>) -> Result<ChapRepr<'a>> {
        let control = ControlRepr::parse(packet)?;
        let data = control.data;
        let value_and_name = || -> Result<(&'a [u8], &'a [u8])> {
            let size = usize::from(*data.first().ok_or(Error::Malformed)?);
            let value = data.get(1..1 + size).ok_or(Error::Malformed)?;
            Ok((value, &data[1 + size..]))
        };
        let body = match ChapCode::from(control.code) {
            ChapCode::Challenge => {
                let (value, name) = value_and_name()?;
                ChapBody::Challenge { value, name }
            }
            ChapCode::Response => {
                let (value, name) = value_and_name()?;
                ChapBody::Response { value, name }
            }
            ChapCode::Success => ChapBody::Success { message: data },
            ChapCode::Failure => ChapBody::Failure { message: data },
            ChapCode::Unknown(_) => return Err(Error::Unsupported),
        };
        Ok(ChapRepr { identifier: control.identifier, body })
    }

    pub fn code(&self) -> ChapCode {
        match self.body {
            ChapBody::Challenge { .. } => ChapCode::Challenge,
            ChapBody::Response { .. } => ChapCode::Response,
            ChapBody::Success { .. } => ChapCode::Success,
            ChapBody::Failure { .. } => ChapCode::Failure,
        }
    }

    pub fn buffer_len(&self) -> usize {
        CONTROL_HEADER_LEN
            + match self.body {
                ChapBody::Challenge { value, name } | ChapBody::Response { value, name } => {
                    1 + value.len() + name.len()
                }
                ChapBody::Success { message } | ChapBody::Failure { message } => message.len(),
            }
    }

    /// Writes the packet. Panics if the buffer is short or a value is over 255 octets.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]> + ?Sized>(&self, packet: &mut ControlPacket<&mut T>) {
        let length = u16::try_from(self.buffer_len()).expect("CHAP packet over 65535 octets");
        packet.set_code(u8::from(self.code()));
        packet.set_identifier(self.identifier);
        packet.set_length(length);
        let data = packet.data_mut();
        match self.body {
            ChapBody::Challenge { value, name } | ChapBody::Response { value, name } => {
                data[0] = u8::try_from(value.len()).expect("CHAP value over 255 octets");
                data[1..1 + value.len()].copy_from_slice(value);
                data[1 + value.len()..].copy_from_slice(name);
            }
            ChapBody::Success { message } | ChapBody::Failure { message } => data.copy_from_slice(message),
        }
    }
}

#[cfg(test)]
mod test {
    use super::*;
    use proptest::prelude::*;

    // An LCP Configure-Request in a PPP frame, computed by hand from RFC 1661 §5.1, §6:
    // protocol c021; code 1, id 1, length 23 (0x17);
    // MRU 1492 (01 04 05d4), Magic-Number 0x12345678 (05 06 ...), PFC (07 02),
    // ACFC (08 02), Auth-Protocol CHAP with MD5 (03 05 c223 05).
    static LCP_BYTES: [u8; 25] = [
        0xc0, 0x21, 0x01, 0x01, 0x00, 0x17, 0x01, 0x04, 0x05, 0xd4, 0x05, 0x06, 0x12, 0x34, 0x56, 0x78, 0x07, 0x02,
        0x08, 0x02, 0x03, 0x05, 0xc2, 0x23, 0x05,
    ];

    // A CHAP Challenge (RFC 1994 §4.1): code 1, id 0x2a, length 4+1+4+3 = 12,
    // value size 4, value de ad be ef, name "bas".
    static CHAP_BYTES: [u8; 12] = [0x01, 0x2a, 0x00, 0x0c, 0x04, 0xde, 0xad, 0xbe, 0xef, b'b', b'a', b's'];

    #[test]
    fn test_parse_lcp() {
        let frame = Frame::new_checked(&LCP_BYTES[..]).unwrap();
        assert_eq!(frame.protocol(), Protocol::Lcp);
        assert_eq!(Repr::parse(&frame).unwrap(), Repr { protocol: Protocol::Lcp, pfc: false });
        let packet = ControlPacket::new_checked(frame.payload()).unwrap();
        assert_eq!(Code::from(packet.code()), Code::ConfigureRequest);
        assert_eq!(packet.identifier(), 1);
        assert_eq!(packet.length(), 23);
        let repr = ControlRepr::parse(&packet).unwrap();
        let options: Vec<_> = repr.lcp_options().collect::<Result<_>>().unwrap();
        assert_eq!(
            options,
            vec![
                LcpOption::Mru(1492),
                LcpOption::MagicNumber(0x1234_5678),
                LcpOption::Pfc,
                LcpOption::Acfc,
                LcpOption::AuthProtocol { protocol: Protocol::Chap, data: &[5] },
            ]
        );
    }

    #[test]
    fn test_emit_lcp() {
        let mut data = Vec::new();
        emit_lcp_options(
            &[
                LcpOption::Mru(1492),
                LcpOption::MagicNumber(0x1234_5678),
                LcpOption::Pfc,
                LcpOption::Acfc,
                LcpOption::AuthProtocol { protocol: Protocol::Chap, data: &[5] },
            ],
            &mut data,
        );
        let control = ControlRepr { code: Code::ConfigureRequest.into(), identifier: 1, data: &data };
        let mut body = vec![0u8; control.buffer_len()];
        control.emit(&mut ControlPacket::new_unchecked(&mut body[..]));
        let mut out = Vec::new();
        Repr { protocol: Protocol::Lcp, pfc: true }.encapsulate(&body, &mut out);
        // LCP is never compressed, even with PFC (RFC 1661 §6.5).
        assert_eq!(out, LCP_BYTES);
    }

    #[test]
    fn protocol_field_compression() {
        let mut out = Vec::new();
        Repr { protocol: Protocol::Ipv4, pfc: true }.encapsulate(&[0x45], &mut out);
        assert_eq!(out, [0x21, 0x45]);
        let frame = Frame::new_checked(&out[..]).unwrap();
        assert_eq!(frame.header_len(), 1);
        assert_eq!(frame.protocol(), Protocol::Ipv4);
        assert_eq!(Repr::parse(&frame).unwrap(), Repr { protocol: Protocol::Ipv4, pfc: true });
        assert_eq!(parse_protocol(&[0x00, 0x21]).unwrap(), (Protocol::Ipv4, 2));
        assert_eq!(Repr { protocol: Protocol::Ipv4, pfc: false }.overhead_fields(1400), vec![("ppp protocol", 2)]);
        assert!(Protocol::Ipv4.is_valid() && Protocol::Lcp.is_valid());
        assert!(!Protocol::Unknown(0x0100).is_valid());
    }

    #[test]
    fn test_chap() {
        let packet = ControlPacket::new_checked(&CHAP_BYTES[..]).unwrap();
        let repr = ChapRepr::parse(&packet).unwrap();
        assert_eq!(
            repr,
            ChapRepr { identifier: 0x2a, body: ChapBody::Challenge { value: &[0xde, 0xad, 0xbe, 0xef], name: b"bas" } }
        );
        let mut out = vec![0u8; repr.buffer_len()];
        repr.emit(&mut ControlPacket::new_unchecked(&mut out[..]));
        assert_eq!(out, CHAP_BYTES);
        // Value-Size past the end.
        let mut bad = CHAP_BYTES;
        bad[4] = 9;
        assert_eq!(ChapRepr::parse(&ControlPacket::new_unchecked(&bad[..])), Err(Error::Malformed));
    }

    #[test]
    fn errors() {
        assert_eq!(Frame::new_checked(&[][..]).unwrap_err(), Error::Truncated);
        assert_eq!(Frame::new_checked(&[0xc0][..]).unwrap_err(), Error::Truncated);
        assert_eq!(ControlPacket::new_checked(&[1, 1, 0][..]).unwrap_err(), Error::Truncated);
        assert_eq!(ControlPacket::new_checked(&[1, 1, 0, 3][..]).unwrap_err(), Error::Malformed);
        assert_eq!(ControlPacket::new_checked(&[1, 1, 0, 9, 0][..]).unwrap_err(), Error::Truncated);
        // Padding past Length is ignored (RFC 1661 §5).
        let p = ControlPacket::new_checked(&[9, 1, 0, 8, 1, 2, 3, 4, 0, 0][..]).unwrap();
        assert_eq!(p.data(), &[1, 2, 3, 4]);
        // Options: bad length, truncated, wrong fixed size.
        assert_eq!(LcpOption::parse(&[1, 1]), Err(Error::Malformed));
        assert_eq!(LcpOption::parse(&[1, 4, 5]), Err(Error::Truncated));
        assert_eq!(LcpOption::parse(&[1, 3, 5]), Err(Error::Malformed));
        let mut it = LcpOptionIter::new(&[7, 2, 1, 0]);
        assert_eq!(it.next(), Some(Ok(LcpOption::Pfc)));
        assert_eq!(it.next(), Some(Err(Error::Malformed)));
        assert_eq!(it.next(), None);
    }

    fn protocol_strategy() -> impl Strategy<Value = Protocol> {
        // Valid protocol numbers only (RFC 1661 §2): odd, even high octet.
        (0u16..0x8000).prop_map(|v| Protocol::from(((v << 1) | 1) & !0x0100))
    }

    fn lcp_option_strategy() -> impl Strategy<Value = (u8, u16, u32, Vec<u8>)> {
        (0u8..8, any::<u16>(), any::<u32>(), proptest::collection::vec(any::<u8>(), 0..8))
    }

    proptest! {
        #[test]
        fn ppp_roundtrip(protocol in protocol_strategy(), pfc in any::<bool>(), payload in proptest::collection::vec(any::<u8>(), 0..32)) {
            let mut out = Vec::new();
            Repr { protocol, pfc }.encapsulate(&payload, &mut out);
            let frame = Frame::new_checked(&out[..]).unwrap();
            let repr = Repr::parse(&frame).unwrap();
            prop_assert_eq!(repr.protocol, protocol);
            prop_assert_eq!(frame.payload(), &payload[..]);
            let mut again = vec![0u8; repr.buffer_len(payload.len())];
            repr.emit(&mut Frame::new_unchecked(&mut again[..]));
            again[repr.header_len()..].copy_from_slice(&payload);
            prop_assert_eq!(again, out);
        }

        #[test]
        fn control_roundtrip(code in any::<u8>(), identifier in any::<u8>(), data in proptest::collection::vec(any::<u8>(), 0..64)) {
            let repr = ControlRepr { code, identifier, data: &data };
            let mut out = vec![0u8; repr.buffer_len()];
            repr.emit(&mut ControlPacket::new_unchecked(&mut out[..]));
            let packet = ControlPacket::new_checked(&out[..]).unwrap();
            let parsed = ControlRepr::parse(&packet).unwrap();
            prop_assert_eq!(parsed, repr);
            let mut again = vec![0u8; parsed.buffer_len()];
            parsed.emit(&mut ControlPacket::new_unchecked(&mut again[..]));
            prop_assert_eq!(again, out);
        }

        #[test]
        fn lcp_option_roundtrip((kind, short, long, data) in lcp_option_strategy()) {
            let option = match kind {
                0 => LcpOption::Mru(short),
                1 => LcpOption::Accm(long),
                2 => LcpOption::AuthProtocol { protocol: Protocol::from(short), data: &data },
                3 => LcpOption::QualityProtocol { protocol: Protocol::from(short), data: &data },
                4 => LcpOption::MagicNumber(long),
                5 => LcpOption::Pfc,
                6 => LcpOption::Acfc,
                _ => LcpOption::Unknown { kind: 0x80 | (short as u8), data: &data },
            };
            let mut out = Vec::new();
            emit_lcp_options(&[option], &mut out);
            let (parsed, len) = LcpOption::parse(&out).unwrap();
            prop_assert_eq!(len, out.len());
            prop_assert_eq!(parsed, option);
        }

        #[test]
        fn chap_roundtrip(code in 1u8..5, identifier in any::<u8>(), value in proptest::collection::vec(any::<u8>(), 0..20), name in proptest::collection::vec(any::<u8>(), 0..20)) {
            let body = match code {
                1 => ChapBody::Challenge { value: &value, name: &name },
                2 => ChapBody::Response { value: &value, name: &name },
                3 => ChapBody::Success { message: &name },
                _ => ChapBody::Failure { message: &name },
            };
            let repr = ChapRepr { identifier, body };
            let mut out = vec![0u8; repr.buffer_len()];
            repr.emit(&mut ControlPacket::new_unchecked(&mut out[..]));
            let parsed = ChapRepr::parse(&ControlPacket::new_checked(&out[..]).unwrap()).unwrap();
            prop_assert_eq!(parsed, repr);
        }

        #[test]
        fn parsers_never_panic(data in proptest::collection::vec(any::<u8>(), 0..64)) {
            if let Ok(frame) = Frame::new_checked(&data[..]) {
                let _ = Repr::parse(&frame);
            }
            if let Ok(packet) = ControlPacket::new_checked(&data[..]) {
                let _ = ChapRepr::parse(&packet);
                let _ = ControlRepr::parse(&packet).map(|r| r.lcp_options().count());
            }
        }
    }
}
