//! PPTP control messages (the control connection on TCP port 1723).
//!
//! Standards a reader must know:
//!
//! * RFC 2637 (PPTP) §1.3 and §2: every control message begins with the same 12
//!   octets — Length (of the whole message), PPTP Message Type (1 = Control Message),
//!   Magic Cookie 0x1A2B3C4D, Control Message Type, Reserved0 — then a body whose size
//!   the Control Message Type fixes (§2.1–§2.15). §2.16 the general Error Codes.
//! * The data channel (PPP frames in enhanced GRE, RFC 2637 §4.1) is `gre.rs`.
//!
//! The fifteen message types and their (fixed) lengths:
//!
//! | type | message | octets | RFC 2637 |
//! |---|---|---|---|
//! | 1 | Start-Control-Connection-Request | 156 | §2.1 |
//! | 2 | Start-Control-Connection-Reply | 156 | §2.2 |
//! | 3 | Stop-Control-Connection-Request | 16 | §2.3 |
//! | 4 | Stop-Control-Connection-Reply | 16 | §2.4 |
//! | 5 | Echo-Request | 16 | §2.5 |
//! | 6 | Echo-Reply | 20 | §2.6 |
//! | 7 | Outgoing-Call-Request | 168 | §2.7 |
//! | 8 | Outgoing-Call-Reply | 32 | §2.8 |
//! | 9 | Incoming-Call-Request | 220 | §2.9 |
//! | 10 | Incoming-Call-Reply | 24 | §2.10 |
//! | 11 | Incoming-Call-Connected | 28 | §2.11 |
//! | 12 | Call-Clear-Request | 16 | §2.12 |
//! | 13 | Call-Disconnect-Notify | 148 | §2.13 |
//! | 14 | WAN-Error-Notify | 40 | §2.14 |
//! | 15 | Set-Link-Info | 24 | §2.15 |
//!
//! Reserved fields are written as zero and not checked on parse (RFC 2637 §2 says
//! they "MUST be 0"; the Repr has no place for another value, so a message with a
//! non-zero reserved field re-emits with it cleared). Text fields (Host Name, Vendor
//! Name, Phone Number, Subaddress, Call Statistics) are fixed-size octet arrays,
//! NUL-padded; [`text`] pads and [`text_str`] trims.

use crate::{Error, Field, Result};

/// RFC 2637 §1.3 (and IANA): the control connection's TCP port.
pub const PORT: u16 = 1723;
/// RFC 2637 §2: the Magic Cookie, "always sent as the constant 0x1A2B3C4D".
pub const MAGIC_COOKIE: u32 = 0x1A2B_3C4D;
/// RFC 2637 §2.1: Protocol Version 1, revision 0.
pub const PROTOCOL_VERSION: u16 = 0x0100;
/// RFC 2637 §2: the header common to every control message.
pub const HEADER_LEN: usize = 12;
/// RFC 2637 §2.1: Host Name and Vendor Name are 64 octets.
pub const NAME_LEN: usize = 64;
/// RFC 2637 §2.7: Phone Number and Subaddress are 64 octets.
pub const PHONE_LEN: usize = 64;
/// RFC 2637 §2.13: Call Statistics is 128 octets.
pub const STATS_LEN: usize = 128;

/// RFC 2637 §2.1: Framing Capabilities bits (asynchronous, synchronous).
pub const FRAMING_ASYNC: u32 = 1;
pub const FRAMING_SYNC: u32 = 2;
/// RFC 2637 §2.1: Bearer Capabilities bits (analog, digital).
pub const BEARER_ANALOG: u32 = 1;
pub const BEARER_DIGITAL: u32 = 2;

crate::enum_with_unknown! {
    /// RFC 2637 §2: PPTP Message Type.
    pub enum MessageType(u16) {
        Control = 1,
        /// Named by the RFC, no message defined.
        Management = 2,
    }
}

crate::enum_with_unknown! {
    /// RFC 2637 §2: Control Message Type.
    pub enum ControlType(u16) {
        StartControlConnectionRequest = 1,
        StartControlConnectionReply = 2,
        StopControlConnectionRequest = 3,
        StopControlConnectionReply = 4,
        EchoRequest = 5,
        EchoReply = 6,
        OutgoingCallRequest = 7,
        OutgoingCallReply = 8,
        IncomingCallRequest = 9,
        IncomingCallReply = 10,
        IncomingCallConnected = 11,
        CallClearRequest = 12,
        CallDisconnectNotify = 13,
        WanErrorNotify = 14,
        SetLinkInfo = 15,
    }
}

impl ControlType {
    /// The fixed length of the whole message (header included), RFC 2637 §2.1–§2.15.
    pub fn message_len(self) -> Option<usize> {
        Some(match self {
            ControlType::StartControlConnectionRequest | ControlType::StartControlConnectionReply => 156,
            ControlType::StopControlConnectionRequest
            | ControlType::StopControlConnectionReply
            | ControlType::EchoRequest
            | ControlType::CallClearRequest => 16,
            ControlType::EchoReply => 20,
            ControlType::OutgoingCallRequest => 168,
            ControlType::OutgoingCallReply => 32,
            ControlType::IncomingCallRequest => 220,
            ControlType::IncomingCallReply | ControlType::SetLinkInfo => 24,
            ControlType::IncomingCallConnected => 28,
            ControlType::CallDisconnectNotify => 148,
            ControlType::WanErrorNotify => 40,
            ControlType::Unknown(_) => return None,
        })
    }
}

crate::enum_with_unknown! {
    /// RFC 2637 §2.16: General Error Codes, carried with a Result Code of "General
    /// Error" in the replies.
    pub enum ErrorCode(u8) {
        None = 0,
        NotConnected = 1,
        BadFormat = 2,
        BadValue = 3,
        NoResource = 4,
        BadCallId = 5,
        PacError = 6,
    }
}

/// Result Codes, per message (their meanings differ from message to message).
pub mod result {
    /// RFC 2637 §2.2 Start-Control-Connection-Reply.
    pub mod start {
        pub const SUCCESS: u8 = 1;
        pub const GENERAL_ERROR: u8 = 2;
        pub const ALREADY_EXISTS: u8 = 3;
        pub const NOT_AUTHORIZED: u8 = 4;
        pub const VERSION_NOT_SUPPORTED: u8 = 5;
    }
    /// RFC 2637 §2.3 Stop-Control-Connection-Request Reason.
    pub mod stop_reason {
        pub const NONE: u8 = 1;
        pub const STOP_PROTOCOL: u8 = 2;
        pub const STOP_LOCAL_SHUTDOWN: u8 = 3;
    }
    /// RFC 2637 §2.4 Stop-Control-Connection-Reply and §2.6 Echo-Reply.
    pub mod ok {
        pub const OK: u8 = 1;
        pub const GENERAL_ERROR: u8 = 2;
    }
    /// RFC 2637 §2.8 Outgoing-Call-Reply.
    pub mod outgoing {
        pub const CONNECTED: u8 = 1;
        pub const GENERAL_ERROR: u8 = 2;
        pub const NO_CARRIER: u8 = 3;
        pub const BUSY: u8 = 4;
        pub const NO_DIAL_TONE: u8 = 5;
        pub const TIME_OUT: u8 = 6;
        pub const DO_NOT_ACCEPT: u8 = 7;
    }
    /// RFC 2637 §2.10 Incoming-Call-Reply.
    pub mod incoming {
        pub const CONNECT: u8 = 1;
        pub const GENERAL_ERROR: u8 = 2;
        pub const DO_NOT_ACCEPT: u8 = 3;
    }
    /// RFC 2637 §2.13 Call-Disconnect-Notify.
    pub mod disconnect {
        pub const LOST_CARRIER: u8 = 1;
        pub const GENERAL_ERROR: u8 = 2;
        pub const ADMIN_SHUTDOWN: u8 = 3;
        pub const REQUEST: u8 = 4;
    }
}

/// Byte ranges: the common header, then each message's body (offsets from the start of
/// the message, as RFC 2637 §2.1–§2.15 draw them).
pub mod field {
    use crate::{Field, Rest};
    /// RFC 2637 §2: Length of the whole message.
    pub const LENGTH: Field = 0..2;
    pub const MESSAGE_TYPE: Field = 2..4;
    pub const MAGIC_COOKIE: Field = 4..8;
    pub const CONTROL_TYPE: Field = 8..10;
    pub const RESERVED0: Field = 10..12;
    pub const BODY: Rest = 12..;

    /// §2.1 Start-Control-Connection-Request and §2.2 -Reply (the Reply has Result and
    /// Error Code where the Request has Reserved1).
    pub mod start {
        use crate::Field;
        pub const PROTOCOL_VERSION: Field = 12..14;
        pub const RESULT_CODE: usize = 14;
        pub const ERROR_CODE: usize = 15;
        pub const FRAMING_CAPABILITIES: Field = 16..20;
        pub const BEARER_CAPABILITIES: Field = 20..24;
        pub const MAXIMUM_CHANNELS: Field = 24..26;
        pub const FIRMWARE_REVISION: Field = 26..28;
        pub const HOST_NAME: Field = 28..92;
        pub const VENDOR_NAME: Field = 92..156;
    }
    /// §2.3 Stop-Control-Connection-Request (Reason) and §2.4 -Reply (Result, Error).
    pub mod stop {
        pub const REASON_OR_RESULT: usize = 12;
        pub const ERROR_CODE: usize = 13;
    }
    /// §2.5 Echo-Request and §2.6 Echo-Reply.
    pub mod echo {
        use crate::Field;
        pub const IDENTIFIER: Field = 12..16;
        pub const RESULT_CODE: usize = 16;
        pub const ERROR_CODE: usize = 17;
    }
    /// §2.7 Outgoing-Call-Request.
    pub mod ocrq {
        use crate::Field;
        pub const CALL_ID: Field = 12..14;
        pub const CALL_SERIAL: Field = 14..16;
        pub const MINIMUM_BPS: Field = 16..20;
        pub const MAXIMUM_BPS: Field = 20..24;
        pub const BEARER_TYPE: Field = 24..28;
        pub const FRAMING_TYPE: Field = 28..32;
        pub const RECV_WINDOW: Field = 32..34;
        pub const PROCESSING_DELAY: Field = 34..36;
        pub const PHONE_LENGTH: Field = 36..38;
        pub const PHONE_NUMBER: Field = 40..104;
        pub const SUBADDRESS: Field = 104..168;
    }
    /// §2.8 Outgoing-Call-Reply.
    pub mod ocrp {
        use crate::Field;
        pub const CALL_ID: Field = 12..14;
        pub const PEER_CALL_ID: Field = 14..16;
        pub const RESULT_CODE: usize = 16;
        pub const ERROR_CODE: usize = 17;
        pub const CAUSE_CODE: Field = 18..20;
        pub const CONNECT_SPEED: Field = 20..24;
        pub const RECV_WINDOW: Field = 24..26;
        pub const PROCESSING_DELAY: Field = 26..28;
        pub const PHYSICAL_CHANNEL: Field = 28..32;
    }
    /// §2.9 Incoming-Call-Request.
    pub mod icrq {
        use crate::Field;
        pub const CALL_ID: Field = 12..14;
        pub const CALL_SERIAL: Field = 14..16;
        pub const BEARER_TYPE: Field = 16..20;
        pub const PHYSICAL_CHANNEL: Field = 20..24;
        pub const DIALED_LENGTH: Field = 24..26;
        pub const DIALING_LENGTH: Field = 26..28;
        pub const DIALED_NUMBER: Field = 28..92;
        pub const DIALING_NUMBER: Field = 92..156;
        pub const SUBADDRESS: Field = 156..220;
    }
    /// §2.10 Incoming-Call-Reply.
    pub mod icrp {
        use crate::Field;
        pub const CALL_ID: Field = 12..14;
        pub const PEER_CALL_ID: Field = 14..16;
        pub const RESULT_CODE: usize = 16;
        pub const ERROR_CODE: usize = 17;
        pub const RECV_WINDOW: Field = 18..20;
        pub const TRANSMIT_DELAY: Field = 20..22;
    }
    /// §2.11 Incoming-Call-Connected.
    pub mod iccn {
        use crate::Field;
        pub const PEER_CALL_ID: Field = 12..14;
        pub const CONNECT_SPEED: Field = 16..20;
        pub const RECV_WINDOW: Field = 20..22;
        pub const TRANSMIT_DELAY: Field = 22..24;
        pub const FRAMING_TYPE: Field = 24..28;
    }
    /// §2.12 Call-Clear-Request.
    pub mod ccrq {
        use crate::Field;
        pub const CALL_ID: Field = 12..14;
    }
    /// §2.13 Call-Disconnect-Notify.
    pub mod cdn {
        use crate::Field;
        pub const CALL_ID: Field = 12..14;
        pub const RESULT_CODE: usize = 14;
        pub const ERROR_CODE: usize = 15;
        pub const CAUSE_CODE: Field = 16..18;
        pub const CALL_STATISTICS: Field = 20..148;
    }
    /// §2.14 WAN-Error-Notify.
    pub mod wen {
        use crate::Field;
        pub const PEER_CALL_ID: Field = 12..14;
        pub const CRC_ERRORS: Field = 16..20;
        pub const FRAMING_ERRORS: Field = 20..24;
        pub const HARDWARE_OVERRUNS: Field = 24..28;
        pub const BUFFER_OVERRUNS: Field = 28..32;
        pub const TIMEOUT_ERRORS: Field = 32..36;
        pub const ALIGNMENT_ERRORS: Field = 36..40;
    }
    /// §2.15 Set-Link-Info.
    pub mod sli {
        use crate::Field;
        pub const PEER_CALL_ID: Field = 12..14;
        pub const SEND_ACCM: Field = 16..20;
        pub const RECEIVE_ACCM: Field = 20..24;
    }
}

/// A fixed-size text field from `s`: copied, NUL-padded, cut at `N` octets.
pub fn text<const N: usize>(s: &[u8]) -> [u8; N] {
    let mut out = [0u8; N];
    let n = s.len().min(N);
    out[..n].copy_from_slice(&s[..n]);
    out
}

/// The text of a NUL-padded field: the octets before the first NUL.
pub fn text_str(t: &[u8]) -> &[u8] {
    let end = t.iter().position(|&b| b == 0).unwrap_or(t.len());
    &t[..end]
}

/// A PPTP control message (RFC 2637 §2).
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

    /// The header must be present and the Length field must cover the header and fit
    /// the buffer; a known Control Message Type must have its own length (RFC 2637 §2.x
    /// fixes every one), so every body getter reads inside the buffer.
    pub fn check_len(&self) -> Result<()> {
        let data = self.buffer.as_ref();
        if data.len() < HEADER_LEN {
            return Err(Error::Truncated);
        }
        let length = usize::from(self.length());
        if length < HEADER_LEN {
            return Err(Error::Malformed);
        }
        if length > data.len() {
            return Err(Error::Truncated);
        }
        if let Some(fixed) = self.control_type().message_len() {
            if length != fixed {
                return Err(Error::Malformed);
            }
        }
        Ok(())
    }

    pub fn into_inner(self) -> T {
        self.buffer
    }

    fn u16_at(&self, f: Field) -> u16 {
        let d = &self.buffer.as_ref()[f];
        u16::from_be_bytes([d[0], d[1]])
    }

    fn u32_at(&self, f: Field) -> u32 {
        let d = &self.buffer.as_ref()[f];
        u32::from_be_bytes([d[0], d[1], d[2], d[3]])
    }

    fn array_at<const N: usize>(&self, f: Field) -> [u8; N] {
        let mut out = [0u8; N];
        out.copy_from_slice(&self.buffer.as_ref()[f]);
        out
    }

    /// RFC 2637 §2: Length, of the whole message in octets.
    pub fn length(&self) -> u16 {
        self.u16_at(field::LENGTH)
    }

    pub fn message_type(&self) -> MessageType {
        MessageType::from(self.u16_at(field::MESSAGE_TYPE))
    }

    pub fn magic_cookie(&self) -> u32 {
        self.u32_at(field::MAGIC_COOKIE)
    }

    pub fn control_type(&self) -> ControlType {
        ControlType::from(self.u16_at(field::CONTROL_TYPE))
    }

    pub fn reserved0(&self) -> u16 {
        self.u16_at(field::RESERVED0)
    }

    /// The body after the common header, up to Length.
    pub fn body(&self) -> &[u8] {
        &self.buffer.as_ref()[field::BODY][..usize::from(self.length()) - HEADER_LEN]
    }

    /// The Call ID of a call-scoped message (the sender's own for OCRQ, OCRP, ICRQ,
    /// ICRP, CCRQ, CDN; the peer's for ICCN, WEN, SLI); `None` for the others.
    pub fn call_id(&self) -> Option<u16> {
        use ControlType::*;
        let f = match self.control_type() {
            OutgoingCallRequest => field::ocrq::CALL_ID,
            OutgoingCallReply => field::ocrp::CALL_ID,
            IncomingCallRequest => field::icrq::CALL_ID,
            IncomingCallReply => field::icrp::CALL_ID,
            IncomingCallConnected => field::iccn::PEER_CALL_ID,
            CallClearRequest => field::ccrq::CALL_ID,
            CallDisconnectNotify => field::cdn::CALL_ID,
            WanErrorNotify => field::wen::PEER_CALL_ID,
            SetLinkInfo => field::sli::PEER_CALL_ID,
            _ => return None,
        };
        Some(self.u16_at(f))
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    fn set_u16(&mut self, f: Field, v: u16) {
        self.buffer.as_mut()[f].copy_from_slice(&v.to_be_bytes());
    }

    fn set_u32(&mut self, f: Field, v: u32) {
        self.buffer.as_mut()[f].copy_from_slice(&v.to_be_bytes());
    }

    fn set_u8(&mut self, at: usize, v: u8) {
        self.buffer.as_mut()[at] = v;
    }

    fn set_bytes(&mut self, f: Field, v: &[u8]) {
        self.buffer.as_mut()[f].copy_from_slice(v);
    }

    pub fn set_length(&mut self, v: u16) {
        self.set_u16(field::LENGTH, v);
    }

    pub fn set_message_type(&mut self, v: MessageType) {
        self.set_u16(field::MESSAGE_TYPE, v.into());
    }

    pub fn set_magic_cookie(&mut self, v: u32) {
        self.set_u32(field::MAGIC_COOKIE, v);
    }

    pub fn set_control_type(&mut self, v: ControlType) {
        self.set_u16(field::CONTROL_TYPE, v.into());
    }

    pub fn set_reserved0(&mut self, v: u16) {
        self.set_u16(field::RESERVED0, v);
    }
}

/// §2.1 Start-Control-Connection-Request (the Reply adds Result and Error Code).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StartControl {
    pub protocol_version: u16,
    /// Reply only ([`result::start`]); zero (Reserved1) in the Request.
    pub result_code: u8,
    pub error_code: ErrorCode,
    /// [`FRAMING_ASYNC`] | [`FRAMING_SYNC`].
    pub framing_capabilities: u32,
    /// [`BEARER_ANALOG`] | [`BEARER_DIGITAL`].
    pub bearer_capabilities: u32,
    /// "A PNS MUST set this field to 0" (§2.1).
    pub maximum_channels: u16,
    pub firmware_revision: u16,
    pub host_name: [u8; NAME_LEN],
    pub vendor_name: [u8; NAME_LEN],
}

/// §2.7 Outgoing-Call-Request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OutgoingCallRequest {
    /// The PNS's Call ID: the peer puts it in the Key of GRE packets for this call.
    pub call_id: u16,
    pub call_serial: u16,
    pub minimum_bps: u32,
    pub maximum_bps: u32,
    /// 1 analog, 2 digital, 3 any.
    pub bearer_type: u32,
    /// 1 asynchronous, 2 synchronous, 3 either.
    pub framing_type: u32,
    /// "Packet Recv. Window Size": the most data packets the PNS will buffer (§4.4).
    pub recv_window: u16,
    /// In 1/10 s; "for a PNS ... SHOULD be set to zero" (§2.7).
    pub processing_delay: u16,
    pub phone_length: u16,
    pub phone_number: [u8; PHONE_LEN],
    pub subaddress: [u8; PHONE_LEN],
}

/// §2.8 Outgoing-Call-Reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OutgoingCallReply {
    /// The PAC's own Call ID.
    pub call_id: u16,
    /// The Call ID of the OCRQ this answers.
    pub peer_call_id: u16,
    /// [`result::outgoing`].
    pub result_code: u8,
    pub error_code: ErrorCode,
    pub cause_code: u16,
    pub connect_speed: u32,
    pub recv_window: u16,
    pub processing_delay: u16,
    pub physical_channel: u32,
}

/// §2.9 Incoming-Call-Request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IncomingCallRequest {
    pub call_id: u16,
    pub call_serial: u16,
    pub bearer_type: u32,
    pub physical_channel: u32,
    pub dialed_length: u16,
    pub dialing_length: u16,
    pub dialed_number: [u8; PHONE_LEN],
    pub dialing_number: [u8; PHONE_LEN],
    pub subaddress: [u8; PHONE_LEN],
}

/// §2.10 Incoming-Call-Reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IncomingCallReply {
    pub call_id: u16,
    pub peer_call_id: u16,
    /// [`result::incoming`].
    pub result_code: u8,
    pub error_code: ErrorCode,
    pub recv_window: u16,
    pub transmit_delay: u16,
}

/// §2.11 Incoming-Call-Connected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IncomingCallConnected {
    pub peer_call_id: u16,
    pub connect_speed: u32,
    pub recv_window: u16,
    pub transmit_delay: u16,
    pub framing_type: u32,
}

/// §2.13 Call-Disconnect-Notify.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CallDisconnectNotify {
    pub call_id: u16,
    /// [`result::disconnect`].
    pub result_code: u8,
    pub error_code: ErrorCode,
    pub cause_code: u16,
    pub call_statistics: [u8; STATS_LEN],
}

/// §2.14 WAN-Error-Notify: the PAC's error counters since the call began.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WanErrorNotify {
    pub peer_call_id: u16,
    pub crc_errors: u32,
    pub framing_errors: u32,
    pub hardware_overruns: u32,
    pub buffer_overruns: u32,
    pub timeout_errors: u32,
    pub alignment_errors: u32,
}

/// A parsed control message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Repr {
    StartControlConnectionRequest(StartControl),
    StartControlConnectionReply(StartControl),
    /// §2.3: Reason ([`result::stop_reason`]).
    StopControlConnectionRequest {
        reason: u8,
    },
    /// §2.4: Result ([`result::ok`]) and Error Code.
    StopControlConnectionReply {
        result_code: u8,
        error_code: ErrorCode,
    },
    /// §2.5.
    EchoRequest {
        identifier: u32,
    },
    /// §2.6.
    EchoReply {
        identifier: u32,
        result_code: u8,
        error_code: ErrorCode,
    },
    OutgoingCallRequest(OutgoingCallRequest),
    OutgoingCallReply(OutgoingCallReply),
    IncomingCallRequest(IncomingCallRequest),
    IncomingCallReply(IncomingCallReply),
    IncomingCallConnected(IncomingCallConnected),
    /// §2.12: the PNS's own Call ID.
    CallClearRequest {
        call_id: u16,
    },
    CallDisconnectNotify(CallDisconnectNotify),
    WanErrorNotify(WanErrorNotify),
    /// §2.15.
    SetLinkInfo {
        peer_call_id: u16,
        send_accm: u32,
        receive_accm: u32,
    },
}

impl StartControl {
    /// A Request as a PNS sends it (§2.1): version 1.0, no result, "MUST set Maximum
    /// Channels to 0".
    pub fn request(framing: u32, bearer: u32, firmware: u16, host: &[u8], vendor: &[u8]) -> StartControl {
        StartControl {
            protocol_version: PROTOCOL_VERSION,
            result_code: 0,
            error_code: ErrorCode::None,
            framing_capabilities: framing,
            bearer_capabilities: bearer,
            maximum_channels: 0,
            firmware_revision: firmware,
            host_name: text(host),
            vendor_name: text(vendor),
        }
    }
}

impl Repr {
    pub fn control_type(&self) -> ControlType {
        match self {
            Repr::StartControlConnectionRequest(_) => ControlType::StartControlConnectionRequest,
            Repr::StartControlConnectionReply(_) => ControlType::StartControlConnectionReply,
            Repr::StopControlConnectionRequest { .. } => ControlType::StopControlConnectionRequest,
            Repr::StopControlConnectionReply { .. } => ControlType::StopControlConnectionReply,
            Repr::EchoRequest { .. } => ControlType::EchoRequest,
            Repr::EchoReply { .. } => ControlType::EchoReply,
            Repr::OutgoingCallRequest(_) => ControlType::OutgoingCallRequest,
            Repr::OutgoingCallReply(_) => ControlType::OutgoingCallReply,
            Repr::IncomingCallRequest(_) => ControlType::IncomingCallRequest,
            Repr::IncomingCallReply(_) => ControlType::IncomingCallReply,
            Repr::IncomingCallConnected(_) => ControlType::IncomingCallConnected,
            Repr::CallClearRequest { .. } => ControlType::CallClearRequest,
            Repr::CallDisconnectNotify(_) => ControlType::CallDisconnectNotify,
            Repr::WanErrorNotify(_) => ControlType::WanErrorNotify,
            Repr::SetLinkInfo { .. } => ControlType::SetLinkInfo,
        }
    }

    /// Parses a control message. A PPTP Message Type other than Control, or an unknown
    /// Control Message Type, is `Unsupported`; a wrong Magic Cookie is `Malformed`
    /// (RFC 2637 §2: "used as a basic check of incoming messages"); a Length that is
    /// not the type's own is `Malformed`.
    pub fn parse<T: AsRef<[u8]> + ?Sized>(packet: &Packet<&T>) -> Result<Repr> {
        packet.check_len()?;
        if packet.magic_cookie() != MAGIC_COOKIE {
            return Err(Error::Malformed);
        }
        if packet.message_type() != MessageType::Control {
            return Err(Error::Unsupported);
        }
        let p = packet;
        let b = |at: usize| p.buffer.as_ref()[at];
        use ControlType as C;
        Ok(match p.control_type() {
            t @ (C::StartControlConnectionRequest | C::StartControlConnectionReply) => {
                use field::start as f;
                let reply = t == C::StartControlConnectionReply;
                let s = StartControl {
                    protocol_version: p.u16_at(f::PROTOCOL_VERSION),
                    result_code: if reply { b(f::RESULT_CODE) } else { 0 },
                    error_code: if reply { ErrorCode::from(b(f::ERROR_CODE)) } else { ErrorCode::None },
                    framing_capabilities: p.u32_at(f::FRAMING_CAPABILITIES),
                    bearer_capabilities: p.u32_at(f::BEARER_CAPABILITIES),
                    maximum_channels: p.u16_at(f::MAXIMUM_CHANNELS),
                    firmware_revision: p.u16_at(f::FIRMWARE_REVISION),
                    host_name: p.array_at(f::HOST_NAME),
                    vendor_name: p.array_at(f::VENDOR_NAME),
                };
                if reply {
                    Repr::StartControlConnectionReply(s)
                } else {
                    Repr::StartControlConnectionRequest(s)
                }
            }
            C::StopControlConnectionRequest => {
                Repr::StopControlConnectionRequest { reason: b(field::stop::REASON_OR_RESULT) }
            }
            C::StopControlConnectionReply => Repr::StopControlConnectionReply {
                result_code: b(field::stop::REASON_OR_RESULT),
                error_code: ErrorCode::from(b(field::stop::ERROR_CODE)),
            },
            C::EchoRequest => Repr::EchoRequest { identifier: p.u32_at(field::echo::IDENTIFIER) },
            C::EchoReply => Repr::EchoReply {
                identifier: p.u32_at(field::echo::IDENTIFIER),
                result_code: b(field::echo::RESULT_CODE),
                error_code: ErrorCode::from(b(field::echo::ERROR_CODE)),
            },
            C::OutgoingCallRequest => {
                use field::ocrq as f;
                Repr::OutgoingCallRequest(OutgoingCallRequest {
                    call_id: p.u16_at(f::CALL_ID),
                    call_serial: p.u16_at(f::CALL_SERIAL),
                    minimum_bps: p.u32_at(f::MINIMUM_BPS),
                    maximum_bps: p.u32_at(f::MAXIMUM_BPS),
                    bearer_type: p.u32_at(f::BEARER_TYPE),
                    framing_type: p.u32_at(f::FRAMING_TYPE),
                    recv_window: p.u16_at(f::RECV_WINDOW),
                    processing_delay: p.u16_at(f::PROCESSING_DELAY),
                    phone_length: p.u16_at(f::PHONE_LENGTH),
                    phone_number: p.array_at(f::PHONE_NUMBER),
                    subaddress: p.array_at(f::SUBADDRESS),
                })
            }
            C::OutgoingCallReply => {
                use field::ocrp as f;
                Repr::OutgoingCallReply(OutgoingCallReply {
                    call_id: p.u16_at(f::CALL_ID),
                    peer_call_id: p.u16_at(f::PEER_CALL_ID),
                    result_code: b(f::RESULT_CODE),
                    error_code: ErrorCode::from(b(f::ERROR_CODE)),
                    cause_code: p.u16_at(f::CAUSE_CODE),
                    connect_speed: p.u32_at(f::CONNECT_SPEED),
                    recv_window: p.u16_at(f::RECV_WINDOW),
                    processing_delay: p.u16_at(f::PROCESSING_DELAY),
                    physical_channel: p.u32_at(f::PHYSICAL_CHANNEL),
                })
            }
            C::IncomingCallRequest => {
                use field::icrq as f;
                Repr::IncomingCallRequest(IncomingCallRequest {
                    call_id: p.u16_at(f::CALL_ID),
                    call_serial: p.u16_at(f::CALL_SERIAL),
                    bearer_type: p.u32_at(f::BEARER_TYPE),
                    physical_channel: p.u32_at(f::PHYSICAL_CHANNEL),
                    dialed_length: p.u16_at(f::DIALED_LENGTH),
                    dialing_length: p.u16_at(f::DIALING_LENGTH),
                    dialed_number: p.array_at(f::DIALED_NUMBER),
                    dialing_number: p.array_at(f::DIALING_NUMBER),
                    subaddress: p.array_at(f::SUBADDRESS),
                })
            }
            C::IncomingCallReply => {
                use field::icrp as f;
                Repr::IncomingCallReply(IncomingCallReply {
                    call_id: p.u16_at(f::CALL_ID),
                    peer_call_id: p.u16_at(f::PEER_CALL_ID),
                    result_code: b(f::RESULT_CODE),
                    error_code: ErrorCode::from(b(f::ERROR_CODE)),
                    recv_window: p.u16_at(f::RECV_WINDOW),
                    transmit_delay: p.u16_at(f::TRANSMIT_DELAY),
                })
            }
            C::IncomingCallConnected => {
                use field::iccn as f;
                Repr::IncomingCallConnected(IncomingCallConnected {
                    peer_call_id: p.u16_at(f::PEER_CALL_ID),
                    connect_speed: p.u32_at(f::CONNECT_SPEED),
                    recv_window: p.u16_at(f::RECV_WINDOW),
                    transmit_delay: p.u16_at(f::TRANSMIT_DELAY),
                    framing_type: p.u32_at(f::FRAMING_TYPE),
                })
            }
            C::CallClearRequest => Repr::CallClearRequest { call_id: p.u16_at(field::ccrq::CALL_ID) },
            C::CallDisconnectNotify => {
                use field::cdn as f;
                Repr::CallDisconnectNotify(CallDisconnectNotify {
                    call_id: p.u16_at(f::CALL_ID),
                    result_code: b(f::RESULT_CODE),
                    error_code: ErrorCode::from(b(f::ERROR_CODE)),
                    cause_code: p.u16_at(f::CAUSE_CODE),
                    call_statistics: p.array_at(f::CALL_STATISTICS),
                })
            }
            C::WanErrorNotify => {
                use field::wen as f;
                Repr::WanErrorNotify(WanErrorNotify {
                    peer_call_id: p.u16_at(f::PEER_CALL_ID),
                    crc_errors: p.u32_at(f::CRC_ERRORS),
                    framing_errors: p.u32_at(f::FRAMING_ERRORS),
                    hardware_overruns: p.u32_at(f::HARDWARE_OVERRUNS),
                    buffer_overruns: p.u32_at(f::BUFFER_OVERRUNS),
                    timeout_errors: p.u32_at(f::TIMEOUT_ERRORS),
                    alignment_errors: p.u32_at(f::ALIGNMENT_ERRORS),
                })
            }
            C::SetLinkInfo => Repr::SetLinkInfo {
                peer_call_id: p.u16_at(field::sli::PEER_CALL_ID),
                send_accm: p.u32_at(field::sli::SEND_ACCM),
                receive_accm: p.u32_at(field::sli::RECEIVE_ACCM),
            },
            C::Unknown(_) => return Err(Error::Unsupported),
        })
    }

    /// The whole message's length (fixed by its type).
    pub fn buffer_len(&self) -> usize {
        self.control_type().message_len().expect("every Repr has a known type")
    }

    /// Writes the message into the first `buffer_len()` octets (reserved fields zero).
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]> + ?Sized>(&self, packet: &mut Packet<&mut T>) {
        let len = self.buffer_len();
        packet.buffer.as_mut()[..len].fill(0);
        packet.set_length(len as u16);
        packet.set_message_type(MessageType::Control);
        packet.set_magic_cookie(MAGIC_COOKIE);
        packet.set_control_type(self.control_type());
        packet.set_reserved0(0);
        let p = packet;
        match self {
            Repr::StartControlConnectionRequest(s) | Repr::StartControlConnectionReply(s) => {
                use field::start as f;
                p.set_u16(f::PROTOCOL_VERSION, s.protocol_version);
                if matches!(self, Repr::StartControlConnectionReply(_)) {
                    p.set_u8(f::RESULT_CODE, s.result_code);
                    p.set_u8(f::ERROR_CODE, s.error_code.into());
                }
                p.set_u32(f::FRAMING_CAPABILITIES, s.framing_capabilities);
                p.set_u32(f::BEARER_CAPABILITIES, s.bearer_capabilities);
                p.set_u16(f::MAXIMUM_CHANNELS, s.maximum_channels);
                p.set_u16(f::FIRMWARE_REVISION, s.firmware_revision);
                p.set_bytes(f::HOST_NAME, &s.host_name);
                p.set_bytes(f::VENDOR_NAME, &s.vendor_name);
            }
            Repr::StopControlConnectionRequest { reason } => p.set_u8(field::stop::REASON_OR_RESULT, *reason),
            Repr::StopControlConnectionReply { result_code, error_code } => {
                p.set_u8(field::stop::REASON_OR_RESULT, *result_code);
                p.set_u8(field::stop::ERROR_CODE, (*error_code).into());
            }
            Repr::EchoRequest { identifier } => p.set_u32(field::echo::IDENTIFIER, *identifier),
            Repr::EchoReply { identifier, result_code, error_code } => {
                p.set_u32(field::echo::IDENTIFIER, *identifier);
                p.set_u8(field::echo::RESULT_CODE, *result_code);
                p.set_u8(field::echo::ERROR_CODE, (*error_code).into());
            }
            Repr::OutgoingCallRequest(m) => {
                use field::ocrq as f;
                p.set_u16(f::CALL_ID, m.call_id);
                p.set_u16(f::CALL_SERIAL, m.call_serial);
                p.set_u32(f::MINIMUM_BPS, m.minimum_bps);
                p.set_u32(f::MAXIMUM_BPS, m.maximum_bps);
                p.set_u32(f::BEARER_TYPE, m.bearer_type);
                p.set_u32(f::FRAMING_TYPE, m.framing_type);
                p.set_u16(f::RECV_WINDOW, m.recv_window);
                p.set_u16(f::PROCESSING_DELAY, m.processing_delay);
                p.set_u16(f::PHONE_LENGTH, m.phone_length);
                p.set_bytes(f::PHONE_NUMBER, &m.phone_number);
                p.set_bytes(f::SUBADDRESS, &m.subaddress);
            }
            Repr::OutgoingCallReply(m) => {
                use field::ocrp as f;
                p.set_u16(f::CALL_ID, m.call_id);
                p.set_u16(f::PEER_CALL_ID, m.peer_call_id);
                p.set_u8(f::RESULT_CODE, m.result_code);
                p.set_u8(f::ERROR_CODE, m.error_code.into());
                p.set_u16(f::CAUSE_CODE, m.cause_code);
                p.set_u32(f::CONNECT_SPEED, m.connect_speed);
                p.set_u16(f::RECV_WINDOW, m.recv_window);
                p.set_u16(f::PROCESSING_DELAY, m.processing_delay);
                p.set_u32(f::PHYSICAL_CHANNEL, m.physical_channel);
            }
            Repr::IncomingCallRequest(m) => {
                use field::icrq as f;
                p.set_u16(f::CALL_ID, m.call_id);
                p.set_u16(f::CALL_SERIAL, m.call_serial);
                p.set_u32(f::BEARER_TYPE, m.bearer_type);
                p.set_u32(f::PHYSICAL_CHANNEL, m.physical_channel);
                p.set_u16(f::DIALED_LENGTH, m.dialed_length);
                p.set_u16(f::DIALING_LENGTH, m.dialing_length);
                p.set_bytes(f::DIALED_NUMBER, &m.dialed_number);
                p.set_bytes(f::DIALING_NUMBER, &m.dialing_number);
                p.set_bytes(f::SUBADDRESS, &m.subaddress);
            }
            Repr::IncomingCallReply(m) => {
                use field::icrp as f;
                p.set_u16(f::CALL_ID, m.call_id);
                p.set_u16(f::PEER_CALL_ID, m.peer_call_id);
                p.set_u8(f::RESULT_CODE, m.result_code);
                p.set_u8(f::ERROR_CODE, m.error_code.into());
                p.set_u16(f::RECV_WINDOW, m.recv_window);
                p.set_u16(f::TRANSMIT_DELAY, m.transmit_delay);
            }
            Repr::IncomingCallConnected(m) => {
                use field::iccn as f;
                p.set_u16(f::PEER_CALL_ID, m.peer_call_id);
                p.set_u32(f::CONNECT_SPEED, m.connect_speed);
                p.set_u16(f::RECV_WINDOW, m.recv_window);
                p.set_u16(f::TRANSMIT_DELAY, m.transmit_delay);
                p.set_u32(f::FRAMING_TYPE, m.framing_type);
            }
            Repr::CallClearRequest { call_id } => p.set_u16(field::ccrq::CALL_ID, *call_id),
            Repr::CallDisconnectNotify(m) => {
                use field::cdn as f;
                p.set_u16(f::CALL_ID, m.call_id);
                p.set_u8(f::RESULT_CODE, m.result_code);
                p.set_u8(f::ERROR_CODE, m.error_code.into());
                p.set_u16(f::CAUSE_CODE, m.cause_code);
                p.set_bytes(f::CALL_STATISTICS, &m.call_statistics);
            }
            Repr::WanErrorNotify(m) => {
                use field::wen as f;
                p.set_u16(f::PEER_CALL_ID, m.peer_call_id);
                p.set_u32(f::CRC_ERRORS, m.crc_errors);
                p.set_u32(f::FRAMING_ERRORS, m.framing_errors);
                p.set_u32(f::HARDWARE_OVERRUNS, m.hardware_overruns);
                p.set_u32(f::BUFFER_OVERRUNS, m.buffer_overruns);
                p.set_u32(f::TIMEOUT_ERRORS, m.timeout_errors);
                p.set_u32(f::ALIGNMENT_ERRORS, m.alignment_errors);
            }
            Repr::SetLinkInfo { peer_call_id, send_accm, receive_accm } => {
                p.set_u16(field::sli::PEER_CALL_ID, *peer_call_id);
                p.set_u32(field::sli::SEND_ACCM, *send_accm);
                p.set_u32(field::sli::RECEIVE_ACCM, *receive_accm);
            }
        }
    }

    /// The message as bytes (appended to `out`), as it goes into the TCP stream.
    pub fn encode(&self, out: &mut Vec<u8>) {
        let start = out.len();
        out.resize(start + self.buffer_len(), 0);
        self.emit(&mut Packet::new_unchecked(&mut out[start..]));
    }
}

/// Splits the next whole message off a TCP byte stream (RFC 2637 §1.3: messages are
/// sent back to back on the control connection; each one's Length says where it
/// ends). `Ok(None)` when more octets are needed; `Err` when the stream is not PPTP
/// (a Length below the header), after which it cannot be resynchronised.
pub fn next_message(stream: &[u8]) -> Result<Option<usize>> {
    if stream.len() < field::LENGTH.end {
        return Ok(None);
    }
    let len = usize::from(u16::from_be_bytes([stream[0], stream[1]]));
    if len < HEADER_LEN {
        return Err(Error::Malformed);
    }
    Ok((stream.len() >= len).then_some(len))
}

#[cfg(test)]
mod test {
    use super::*;
    use proptest::prelude::*;

    // Echo-Request (RFC 2637 §2.5), identifier 0xdeadbeef, written out field by field:
    // Length 16, Message Type 1, Magic Cookie, Control Type 5, Reserved0, Identifier.
    static ECHO_BYTES: [u8; 16] =
        [0x00, 0x10, 0x00, 0x01, 0x1a, 0x2b, 0x3c, 0x4d, 0x00, 0x05, 0x00, 0x00, 0xde, 0xad, 0xbe, 0xef];

    // Outgoing-Call-Reply (§2.8): Length 32, type 8, Call ID 0x0102, Peer's Call ID
    // 0x0304, Result 1 (Connected), Error 0, Cause 0, Connect Speed 100,000,000,
    // Window 64, Delay 0, Physical Channel 0.
    static OCRP_BYTES: [u8; 32] = [
        0x00, 0x20, 0x00, 0x01, 0x1a, 0x2b, 0x3c, 0x4d, 0x00, 0x08, 0x00, 0x00, 0x01, 0x02, 0x03, 0x04, 0x01, 0x00,
        0x00, 0x00, 0x05, 0xf5, 0xe1, 0x00, 0x00, 0x40, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    ];

    fn encode(repr: &Repr) -> Vec<u8> {
        let mut out = Vec::new();
        repr.encode(&mut out);
        out
    }

    #[test]
    fn test_parse_echo() {
        let packet = Packet::new_checked(&ECHO_BYTES[..]).unwrap();
        assert_eq!(packet.length(), 16);
        assert_eq!(packet.message_type(), MessageType::Control);
        assert_eq!(packet.magic_cookie(), MAGIC_COOKIE);
        assert_eq!(packet.control_type(), ControlType::EchoRequest);
        assert_eq!(Repr::parse(&packet).unwrap(), Repr::EchoRequest { identifier: 0xdead_beef });
        assert_eq!(encode(&Repr::EchoRequest { identifier: 0xdead_beef }), ECHO_BYTES);
    }

    #[test]
    fn test_parse_emit_ocrp() {
        let repr = Repr::OutgoingCallReply(OutgoingCallReply {
            call_id: 0x0102,
            peer_call_id: 0x0304,
            result_code: result::outgoing::CONNECTED,
            error_code: ErrorCode::None,
            cause_code: 0,
            connect_speed: 100_000_000,
            recv_window: 64,
            processing_delay: 0,
            physical_channel: 0,
        });
        let packet = Packet::new_checked(&OCRP_BYTES[..]).unwrap();
        assert_eq!(packet.call_id(), Some(0x0102));
        assert_eq!(Repr::parse(&packet).unwrap(), repr);
        assert_eq!(encode(&repr), OCRP_BYTES);
    }

    #[test]
    fn test_start_request_layout() {
        let repr = Repr::StartControlConnectionRequest(StartControl::request(
            FRAMING_SYNC,
            BEARER_ANALOG,
            0x1234,
            b"pns",
            b"qoslab",
        ));
        let bytes = encode(&repr);
        assert_eq!(bytes.len(), 156);
        assert_eq!(&bytes[..12], &[0, 156, 0, 1, 0x1a, 0x2b, 0x3c, 0x4d, 0, 1, 0, 0]);
        // Protocol version 1.0, Reserved1, framing 2, bearer 1, channels 0, firmware.
        assert_eq!(&bytes[12..28], &[1, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0x12, 0x34]);
        assert_eq!(&bytes[28..31], b"pns");
        assert!(bytes[31..92].iter().all(|&b| b == 0));
        assert_eq!(&bytes[92..98], b"qoslab");
        let Repr::StartControlConnectionRequest(s) = Repr::parse(&Packet::new_checked(&bytes[..]).unwrap()).unwrap()
        else {
            panic!()
        };
        assert_eq!(text_str(&s.host_name), b"pns");
        assert_eq!(text_str(&s.vendor_name), b"qoslab");
    }

    #[test]
    fn errors() {
        assert_eq!(Packet::new_checked(&ECHO_BYTES[..11]).unwrap_err(), Error::Truncated);
        assert_eq!(Packet::new_checked(&ECHO_BYTES[..15]).unwrap_err(), Error::Truncated);
        let mut cookie = ECHO_BYTES;
        cookie[7] = 0x4e;
        assert_eq!(Repr::parse(&Packet::new_unchecked(&cookie[..])), Err(Error::Malformed));
        let mut mgmt = ECHO_BYTES;
        mgmt[3] = 2;
        assert_eq!(Repr::parse(&Packet::new_unchecked(&mgmt[..])), Err(Error::Unsupported));
        let mut unknown = ECHO_BYTES;
        unknown[9] = 16;
        assert_eq!(Repr::parse(&Packet::new_unchecked(&unknown[..])), Err(Error::Unsupported));
        // An Echo-Request must be 16 octets: a 20-octet one is malformed.
        let mut long = ECHO_BYTES.to_vec();
        long.extend_from_slice(&[0; 4]);
        long[1] = 20;
        assert_eq!(Packet::new_checked(&long[..]).unwrap_err(), Error::Malformed);
        let mut tiny = ECHO_BYTES;
        tiny[1] = 4;
        assert_eq!(Packet::new_checked(&tiny[..]).unwrap_err(), Error::Malformed);
    }

    #[test]
    fn stream_split() {
        let mut stream = ECHO_BYTES.to_vec();
        stream.extend_from_slice(&OCRP_BYTES[..10]);
        assert_eq!(next_message(&stream), Ok(Some(16)));
        assert_eq!(next_message(&stream[16..]), Ok(None));
        assert_eq!(next_message(&[0]), Ok(None));
        assert_eq!(next_message(&[0, 3, 0]), Err(Error::Malformed));
    }

    fn arr<const N: usize>() -> impl Strategy<Value = [u8; N]> {
        proptest::collection::vec(any::<u8>(), N).prop_map(|v| v.try_into().unwrap())
    }

    fn error_code() -> impl Strategy<Value = ErrorCode> {
        any::<u8>().prop_map(ErrorCode::from)
    }

    fn start(reply: bool) -> impl Strategy<Value = StartControl> {
        (any::<(u16, u8, u32, u32, u16, u16)>(), error_code(), arr::<64>(), arr::<64>()).prop_map(
            move |((v, r, f, b, m, fw), e, h, vn)| StartControl {
                protocol_version: v,
                result_code: if reply { r } else { 0 },
                error_code: if reply { e } else { ErrorCode::None },
                framing_capabilities: f,
                bearer_capabilities: b,
                maximum_channels: m,
                firmware_revision: fw,
                host_name: h,
                vendor_name: vn,
            },
        )
    }

    fn repr_strategy() -> impl Strategy<Value = Repr> {
        prop_oneof![
            start(false).prop_map(Repr::StartControlConnectionRequest),
            start(true).prop_map(Repr::StartControlConnectionReply),
            any::<u8>().prop_map(|reason| Repr::StopControlConnectionRequest { reason }),
            (any::<u8>(), error_code())
                .prop_map(|(r, e)| Repr::StopControlConnectionReply { result_code: r, error_code: e }),
            any::<u32>().prop_map(|identifier| Repr::EchoRequest { identifier }),
            (any::<u32>(), any::<u8>(), error_code()).prop_map(|(i, r, e)| Repr::EchoReply {
                identifier: i,
                result_code: r,
                error_code: e
            }),
            (any::<(u16, u16, u32, u32, u32, u32, u16, u16, u16)>(), arr::<64>(), arr::<64>()).prop_map(
                |((c, s, mn, mx, bt, ft, w, d, pl), ph, sa)| {
                    Repr::OutgoingCallRequest(OutgoingCallRequest {
                        call_id: c,
                        call_serial: s,
                        minimum_bps: mn,
                        maximum_bps: mx,
                        bearer_type: bt,
                        framing_type: ft,
                        recv_window: w,
                        processing_delay: d,
                        phone_length: pl,
                        phone_number: ph,
                        subaddress: sa,
                    })
                }
            ),
            (any::<(u16, u16, u8, u16, u32, u16, u16, u32)>(), error_code()).prop_map(
                |((c, pc, r, cc, sp, w, d, ch), e)| {
                    Repr::OutgoingCallReply(OutgoingCallReply {
                        call_id: c,
                        peer_call_id: pc,
                        result_code: r,
                        error_code: e,
                        cause_code: cc,
                        connect_speed: sp,
                        recv_window: w,
                        processing_delay: d,
                        physical_channel: ch,
                    })
                }
            ),
            (any::<(u16, u16, u32, u32, u16, u16)>(), arr::<64>(), arr::<64>(), arr::<64>()).prop_map(
                |((c, s, bt, ch, l1, l2), n1, n2, sa)| {
                    Repr::IncomingCallRequest(IncomingCallRequest {
                        call_id: c,
                        call_serial: s,
                        bearer_type: bt,
                        physical_channel: ch,
                        dialed_length: l1,
                        dialing_length: l2,
                        dialed_number: n1,
                        dialing_number: n2,
                        subaddress: sa,
                    })
                }
            ),
            (any::<(u16, u16, u8, u16, u16)>(), error_code()).prop_map(|((c, pc, r, w, d), e)| {
                Repr::IncomingCallReply(IncomingCallReply {
                    call_id: c,
                    peer_call_id: pc,
                    result_code: r,
                    error_code: e,
                    recv_window: w,
                    transmit_delay: d,
                })
            }),
            any::<(u16, u32, u16, u16, u32)>().prop_map(|(pc, sp, w, d, ft)| {
                Repr::IncomingCallConnected(IncomingCallConnected {
                    peer_call_id: pc,
                    connect_speed: sp,
                    recv_window: w,
                    transmit_delay: d,
                    framing_type: ft,
                })
            }),
            any::<u16>().prop_map(|call_id| Repr::CallClearRequest { call_id }),
            (any::<(u16, u8, u16)>(), error_code(), arr::<128>()).prop_map(|((c, r, cc), e, st)| {
                Repr::CallDisconnectNotify(CallDisconnectNotify {
                    call_id: c,
                    result_code: r,
                    error_code: e,
                    cause_code: cc,
                    call_statistics: st,
                })
            }),
            any::<(u16, u32, u32, u32, u32, u32, u32)>().prop_map(|(pc, a, b, c, d, e, f)| {
                Repr::WanErrorNotify(WanErrorNotify {
                    peer_call_id: pc,
                    crc_errors: a,
                    framing_errors: b,
                    hardware_overruns: c,
                    buffer_overruns: d,
                    timeout_errors: e,
                    alignment_errors: f,
                })
            }),
            any::<(u16, u32, u32)>().prop_map(|(pc, s, r)| Repr::SetLinkInfo {
                peer_call_id: pc,
                send_accm: s,
                receive_accm: r
            }),
        ]
    }

    proptest! {
        #[test]
        fn roundtrip(repr in repr_strategy()) {
            let bytes = encode(&repr);
            prop_assert_eq!(bytes.len(), repr.buffer_len());
            prop_assert_eq!(next_message(&bytes), Ok(Some(bytes.len())));
            let parsed = Repr::parse(&Packet::new_checked(&bytes[..]).unwrap()).unwrap();
            prop_assert_eq!(&parsed, &repr);
            prop_assert_eq!(encode(&parsed), bytes);
        }

        #[test]
        fn parse_never_panics(data in proptest::collection::vec(any::<u8>(), 0..240)) {
            let _ = Repr::parse(&Packet::new_unchecked(&data[..]));
            let _ = Packet::new_checked(&data[..]).map(|p| (p.call_id(), p.body().len()));
        }
    }
}
