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
mod messages;
mod packet;
mod repr;

pub use messages::*;
pub use packet::*;
pub use repr::*;

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
