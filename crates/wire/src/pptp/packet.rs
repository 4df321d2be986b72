//! The checked view over a control message's bytes (RFC 2637 §1.4, §2).

use super::*;

/// A PPTP control message (RFC 2637 §2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Packet<T: AsRef<[u8]>> {
    /// The whole message; `Repr::emit` zeroes it before writing the fields.
    pub(super) buffer: T,
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

    pub(super) fn u8_at(&self, at: usize) -> u8 {
        self.buffer.as_ref()[at]
    }

    pub(super) fn u16_at(&self, f: Field) -> u16 {
        let d = &self.buffer.as_ref()[f];
        u16::from_be_bytes([d[0], d[1]])
    }

    pub(super) fn u32_at(&self, f: Field) -> u32 {
        let d = &self.buffer.as_ref()[f];
        u32::from_be_bytes([d[0], d[1], d[2], d[3]])
    }

    pub(super) fn array_at<const N: usize>(&self, f: Field) -> [u8; N] {
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
    pub(super) fn set_u16(&mut self, f: Field, v: u16) {
        self.buffer.as_mut()[f].copy_from_slice(&v.to_be_bytes());
    }

    pub(super) fn set_u32(&mut self, f: Field, v: u32) {
        self.buffer.as_mut()[f].copy_from_slice(&v.to_be_bytes());
    }

    pub(super) fn set_u8(&mut self, at: usize, v: u8) {
        self.buffer.as_mut()[at] = v;
    }

    pub(super) fn set_bytes(&mut self, f: Field, v: &[u8]) {
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
