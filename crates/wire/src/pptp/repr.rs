//! A control message as plain values: parse and emit the header, and each body through
//! its own message type.

use super::*;

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
        use ControlType as C;
        Ok(match p.control_type() {
            C::StartControlConnectionRequest => Repr::StartControlConnectionRequest(StartControl::parse(p, false)),
            C::StartControlConnectionReply => Repr::StartControlConnectionReply(StartControl::parse(p, true)),
            C::StopControlConnectionRequest => {
                Repr::StopControlConnectionRequest { reason: p.u8_at(field::stop::REASON_OR_RESULT) }
            }
            C::StopControlConnectionReply => Repr::StopControlConnectionReply {
                result_code: p.u8_at(field::stop::REASON_OR_RESULT),
                error_code: ErrorCode::from(p.u8_at(field::stop::ERROR_CODE)),
            },
            C::EchoRequest => Repr::EchoRequest { identifier: p.u32_at(field::echo::IDENTIFIER) },
            C::EchoReply => Repr::EchoReply {
                identifier: p.u32_at(field::echo::IDENTIFIER),
                result_code: p.u8_at(field::echo::RESULT_CODE),
                error_code: ErrorCode::from(p.u8_at(field::echo::ERROR_CODE)),
            },
            C::OutgoingCallRequest => Repr::OutgoingCallRequest(OutgoingCallRequest::parse(p)),
            C::OutgoingCallReply => Repr::OutgoingCallReply(OutgoingCallReply::parse(p)),
            C::IncomingCallRequest => Repr::IncomingCallRequest(IncomingCallRequest::parse(p)),
            C::IncomingCallReply => Repr::IncomingCallReply(IncomingCallReply::parse(p)),
            C::IncomingCallConnected => Repr::IncomingCallConnected(IncomingCallConnected::parse(p)),
            C::CallClearRequest => Repr::CallClearRequest { call_id: p.u16_at(field::ccrq::CALL_ID) },
            C::CallDisconnectNotify => Repr::CallDisconnectNotify(CallDisconnectNotify::parse(p)),
            C::WanErrorNotify => Repr::WanErrorNotify(WanErrorNotify::parse(p)),
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
            Repr::StartControlConnectionRequest(s) => s.emit(p, false),
            Repr::StartControlConnectionReply(s) => s.emit(p, true),
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
            Repr::OutgoingCallRequest(m) => m.emit(p),
            Repr::OutgoingCallReply(m) => m.emit(p),
            Repr::IncomingCallRequest(m) => m.emit(p),
            Repr::IncomingCallReply(m) => m.emit(p),
            Repr::IncomingCallConnected(m) => m.emit(p),
            Repr::CallClearRequest { call_id } => p.set_u16(field::ccrq::CALL_ID, *call_id),
            Repr::CallDisconnectNotify(m) => m.emit(p),
            Repr::WanErrorNotify(m) => m.emit(p),
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
