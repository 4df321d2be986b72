//! The checked view over a MAC frame's bytes (§9.2.3), without the FCS.

use super::*;

/// A checked view over an IEEE 802.11 MAC frame from Frame Control to the end of the
/// frame body, without FCS.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Frame<T> {
    pub const fn new_unchecked(buffer: T) -> Frame<T> {
        Frame { buffer }
    }

    pub fn new_checked(buffer: T) -> Result<Frame<T>> {
        let frame = Self::new_unchecked(buffer);
        frame.check_len()?;
        Ok(frame)
    }

    /// `Err(Truncated)` unless the buffer holds the whole MAC header that Frame Control
    /// announces.
    pub fn check_len(&self) -> Result<()> {
        let len = self.buffer.as_ref().len();
        if len < FRAME_CONTROL_LEN || len < self.header_len() {
            Err(Error::Truncated)
        } else {
            Ok(())
        }
    }

    pub fn into_inner(self) -> T {
        self.buffer
    }

    fn u16_le(&self, f: crate::Field) -> u16 {
        let d = &self.buffer.as_ref()[f];
        u16::from_le_bytes([d[0], d[1]])
    }

    /// The raw Frame Control (§9.2.4.1).
    pub fn frame_control_raw(&self) -> u16 {
        self.u16_le(field::FRAME_CONTROL)
    }

    pub fn frame_control(&self) -> FrameControl {
        FrameControl::from_raw(self.frame_control_raw())
    }

    /// MAC header length from Frame Control (§9.2.3).
    pub fn header_len(&self) -> usize {
        self.frame_control().header_len()
    }

    /// Duration/ID (§9.2.4.2): a duration in µs when bit 15 is clear.
    pub fn duration_id(&self) -> u16 {
        self.u16_le(field::DURATION_ID)
    }

    /// Address 1, always the receiver address (§9.2.4.3.4).
    pub fn addr1(&self) -> Address {
        Address::from_bytes(&self.buffer.as_ref()[field::ADDR1])
    }

    /// Address 2; present in data, management, RTS and other 16-octet control headers.
    pub fn addr2(&self) -> Address {
        Address::from_bytes(&self.buffer.as_ref()[field::ADDR2])
    }

    /// Address 3; data and management frames only.
    pub fn addr3(&self) -> Address {
        Address::from_bytes(&self.buffer.as_ref()[field::ADDR3])
    }

    /// Sequence Control raw (§9.2.4.4); data and management frames only.
    pub fn sequence_control(&self) -> u16 {
        self.u16_le(field::SEQUENCE_CONTROL)
    }

    /// Sequence number, 12 bits (§9.2.4.4.2).
    pub fn sequence_number(&self) -> u16 {
        self.sequence_control() >> 4
    }

    /// Fragment number, 4 bits (§9.2.4.4.3).
    pub fn fragment_number(&self) -> u8 {
        (self.sequence_control() & 0xf) as u8
    }

    /// Address 4; data frames with To DS = From DS = 1 only.
    pub fn addr4(&self) -> Address {
        Address::from_bytes(&self.buffer.as_ref()[field::ADDR4])
    }

    /// Where QoS Control starts: after Address 4 when present (§9.3.2.1).
    pub fn qos_control_offset(&self) -> usize {
        let fc = self.frame_control();
        if fc.to_ds && fc.from_ds {
            DATA_HEADER_LEN_4ADDR
        } else {
            DATA_HEADER_LEN
        }
    }

    /// QoS Control raw (§9.2.4.5); QoS data subtypes only.
    pub fn qos_control(&self) -> u16 {
        let at = self.qos_control_offset();
        self.u16_le(at..at + QOS_CONTROL_LEN)
    }

    /// The frame body after the MAC header (§9.2.4.7).
    pub fn payload(&self) -> &[u8] {
        &self.buffer.as_ref()[self.header_len()..]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Frame<T> {
    fn set_u16_le(&mut self, f: crate::Field, value: u16) {
        self.buffer.as_mut()[f].copy_from_slice(&value.to_le_bytes());
    }

    pub fn set_frame_control(&mut self, value: FrameControl) {
        self.set_u16_le(field::FRAME_CONTROL, value.raw());
    }

    pub fn set_duration_id(&mut self, value: u16) {
        self.set_u16_le(field::DURATION_ID, value);
    }

    pub fn set_addr1(&mut self, value: Address) {
        self.buffer.as_mut()[field::ADDR1].copy_from_slice(&value.0);
    }

    pub fn set_addr2(&mut self, value: Address) {
        self.buffer.as_mut()[field::ADDR2].copy_from_slice(&value.0);
    }

    pub fn set_addr3(&mut self, value: Address) {
        self.buffer.as_mut()[field::ADDR3].copy_from_slice(&value.0);
    }

    pub fn set_sequence_control(&mut self, value: u16) {
        self.set_u16_le(field::SEQUENCE_CONTROL, value);
    }

    /// Sets sequence (12 bits) and fragment (4 bits) numbers; wider values are masked.
    pub fn set_sequence(&mut self, sequence_number: u16, fragment_number: u8) {
        self.set_sequence_control((sequence_number << 4) | (fragment_number as u16 & 0xf));
    }

    pub fn set_addr4(&mut self, value: Address) {
        self.buffer.as_mut()[field::ADDR4].copy_from_slice(&value.0);
    }

    /// Set Frame Control first: the offset depends on Address 4's presence.
    pub fn set_qos_control(&mut self, value: u16) {
        let at = self.qos_control_offset();
        self.set_u16_le(at..at + QOS_CONTROL_LEN, value);
    }

    pub fn payload_mut(&mut self) -> &mut [u8] {
        let at = self.header_len();
        &mut self.buffer.as_mut()[at..]
    }
}

impl<T: AsRef<[u8]>> AsRef<[u8]> for Frame<T> {
    fn as_ref(&self) -> &[u8] {
        self.buffer.as_ref()
    }
}
