//! The checked view over a segment's bytes (RFC 9293 §3.1).

use super::*;

/// A read/write view of a TCP segment. The buffer is the whole segment (the IP
/// payload): TCP has no length field, the checksum covers the buffer to its end.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Packet<T: AsRef<[u8]>> {
    /// The whole segment; `Repr` reads and writes it directly (sibling module).
    pub(super) buffer: T,
}

impl<T: AsRef<[u8]>> Packet<T> {
    /// Wraps a buffer without checking it.
    pub const fn new_unchecked(buffer: T) -> Packet<T> {
        Packet { buffer }
    }

    /// Wraps a buffer after [`check_len`](Self::check_len).
    pub fn new_checked(buffer: T) -> Result<Packet<T>> {
        let packet = Self::new_unchecked(buffer);
        packet.check_len()?;
        Ok(packet)
    }

    /// Checks the fixed header is present, Data Offset ≥ 5 and the options fit in the
    /// buffer (RFC 9293 §3.1).
    pub fn check_len(&self) -> Result<()> {
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

    /// RFC 9293 §3.1: Source Port.
    #[inline]
    pub fn src_port(&self) -> u16 {
        be16(self.buffer.as_ref(), field::SRC_PORT)
    }

    /// RFC 9293 §3.1: Destination Port.
    #[inline]
    pub fn dst_port(&self) -> u16 {
        be16(self.buffer.as_ref(), field::DST_PORT)
    }

    /// RFC 9293 §3.1: Sequence Number.
    #[inline]
    pub fn seq_number(&self) -> SeqNumber {
        SeqNumber::from_u32(be32(self.buffer.as_ref(), field::SEQ_NUM))
    }

    /// RFC 9293 §3.1: Acknowledgment Number (meaningful only when ACK is set).
    #[inline]
    pub fn ack_number(&self) -> SeqNumber {
        SeqNumber::from_u32(be32(self.buffer.as_ref(), field::ACK_NUM))
    }

    #[inline]
    fn raw_flags(&self) -> u16 {
        be16(self.buffer.as_ref(), field::FLAGS)
    }

    /// The 12 bits after Data Offset: reserved bits and control bits.
    #[inline]
    pub fn flags(&self) -> u16 {
        self.raw_flags() & flags::ALL
    }

    /// RFC 9293 §3.1: Data Offset in 32-bit words.
    #[inline]
    pub fn data_offset(&self) -> u8 {
        (self.raw_flags() >> 12) as u8
    }

    /// Header length in octets, Data Offset * 4.
    #[inline]
    pub fn header_len(&self) -> usize {
        usize::from(self.data_offset()) * 4
    }

    /// RFC 9293 §3.1: FIN.
    #[inline]
    pub fn fin(&self) -> bool {
        self.raw_flags() & flags::FIN != 0
    }

    /// RFC 9293 §3.1: SYN.
    #[inline]
    pub fn syn(&self) -> bool {
        self.raw_flags() & flags::SYN != 0
    }

    /// RFC 9293 §3.1: RST.
    #[inline]
    pub fn rst(&self) -> bool {
        self.raw_flags() & flags::RST != 0
    }

    /// RFC 9293 §3.1: PSH.
    #[inline]
    pub fn psh(&self) -> bool {
        self.raw_flags() & flags::PSH != 0
    }

    /// RFC 9293 §3.1: ACK.
    #[inline]
    pub fn ack(&self) -> bool {
        self.raw_flags() & flags::ACK != 0
    }

    /// RFC 9293 §3.1: URG.
    #[inline]
    pub fn urg(&self) -> bool {
        self.raw_flags() & flags::URG != 0
    }

    /// RFC 3168 §6.1: ECN-Echo.
    #[inline]
    pub fn ece(&self) -> bool {
        self.raw_flags() & flags::ECE != 0
    }

    /// RFC 3168 §6.1: Congestion Window Reduced.
    #[inline]
    pub fn cwr(&self) -> bool {
        self.raw_flags() & flags::CWR != 0
    }

    /// RFC 3540 nonce sum (historic, RFC 8311 §3): the lowest reserved bit.
    #[inline]
    pub fn ns(&self) -> bool {
        self.raw_flags() & flags::NS != 0
    }

    /// RFC 9293 §3.1: Window.
    #[inline]
    pub fn window_len(&self) -> u16 {
        be16(self.buffer.as_ref(), field::WIN_SIZE)
    }

    /// RFC 9293 §3.1: Checksum.
    #[inline]
    pub fn checksum(&self) -> u16 {
        be16(self.buffer.as_ref(), field::CHECKSUM)
    }

    /// RFC 9293 §3.1: Urgent Pointer.
    #[inline]
    pub fn urgent_at(&self) -> u16 {
        be16(self.buffer.as_ref(), field::URGENT)
    }

    /// The options bytes, padding included.
    pub fn options(&self) -> &[u8] {
        &self.buffer.as_ref()[field::OPTIONS_START..self.header_len()]
    }

    /// Sequence space the segment occupies: data plus one each for SYN and FIN.
    pub fn segment_len(&self) -> usize {
        let data = self.buffer.as_ref().len() - self.header_len();
        data + usize::from(self.syn()) + usize::from(self.fin())
    }

    /// RFC 9293 §3.1: true when the checksum over the pseudo-header of `src`/`dst`, the
    /// header and the data (the whole buffer) verifies.
    pub fn verify_checksum(&self, src: &Address, dst: &Address) -> bool {
        let data = self.buffer.as_ref();
        let Ok(len) = u16::try_from(data.len()) else { return false };
        let acc = checksum::pseudo_header(src.octets(), dst.octets(), Protocol::Tcp.into(), len);
        checksum::fold(checksum::accumulate(acc, data)) == 0xffff
    }
}

impl<'a, T: AsRef<[u8]> + ?Sized> Packet<&'a T> {
    /// The data after the options.
    pub fn payload(&self) -> &'a [u8] {
        &self.buffer.as_ref()[self.header_len()..]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    /// Sets Source Port.
    #[inline]
    pub fn set_src_port(&mut self, value: u16) {
        self.buffer.as_mut()[field::SRC_PORT].copy_from_slice(&value.to_be_bytes());
    }

    /// Sets Destination Port.
    #[inline]
    pub fn set_dst_port(&mut self, value: u16) {
        self.buffer.as_mut()[field::DST_PORT].copy_from_slice(&value.to_be_bytes());
    }

    /// Sets Sequence Number.
    #[inline]
    pub fn set_seq_number(&mut self, value: SeqNumber) {
        self.buffer.as_mut()[field::SEQ_NUM].copy_from_slice(&value.as_u32().to_be_bytes());
    }

    /// Sets Acknowledgment Number.
    #[inline]
    pub fn set_ack_number(&mut self, value: SeqNumber) {
        self.buffer.as_mut()[field::ACK_NUM].copy_from_slice(&value.as_u32().to_be_bytes());
    }

    #[inline]
    fn set_raw_flags(&mut self, value: u16) {
        self.buffer.as_mut()[field::FLAGS].copy_from_slice(&value.to_be_bytes());
    }

    #[inline]
    fn set_flag(&mut self, bit: u16, value: bool) {
        let raw = self.raw_flags();
        self.set_raw_flags(if value { raw | bit } else { raw & !bit });
    }

    /// Clears all reserved and control bits, keeping Data Offset.
    #[inline]
    pub fn clear_flags(&mut self) {
        let raw = self.raw_flags();
        self.set_raw_flags(raw & !flags::ALL);
    }

    /// Sets Data Offset from a header length in octets (a multiple of 4, 20..=60).
    #[inline]
    pub fn set_header_len(&mut self, value: usize) {
        let raw = self.raw_flags();
        self.set_raw_flags((raw & flags::ALL) | (((value / 4) as u16) << 12));
    }

    /// Sets FIN.
    #[inline]
    pub fn set_fin(&mut self, value: bool) {
        self.set_flag(flags::FIN, value)
    }

    /// Sets SYN.
    #[inline]
    pub fn set_syn(&mut self, value: bool) {
        self.set_flag(flags::SYN, value)
    }

    /// Sets RST.
    #[inline]
    pub fn set_rst(&mut self, value: bool) {
        self.set_flag(flags::RST, value)
    }

    /// Sets PSH.
    #[inline]
    pub fn set_psh(&mut self, value: bool) {
        self.set_flag(flags::PSH, value)
    }

    /// Sets ACK.
    #[inline]
    pub fn set_ack(&mut self, value: bool) {
        self.set_flag(flags::ACK, value)
    }

    /// Sets URG.
    #[inline]
    pub fn set_urg(&mut self, value: bool) {
        self.set_flag(flags::URG, value)
    }

    /// Sets ECE.
    #[inline]
    pub fn set_ece(&mut self, value: bool) {
        self.set_flag(flags::ECE, value)
    }

    /// Sets CWR.
    #[inline]
    pub fn set_cwr(&mut self, value: bool) {
        self.set_flag(flags::CWR, value)
    }

    /// Sets the historic NS bit.
    #[inline]
    pub fn set_ns(&mut self, value: bool) {
        self.set_flag(flags::NS, value)
    }

    /// Sets Window.
    #[inline]
    pub fn set_window_len(&mut self, value: u16) {
        self.buffer.as_mut()[field::WIN_SIZE].copy_from_slice(&value.to_be_bytes());
    }

    /// Sets the Checksum field as given.
    #[inline]
    pub fn set_checksum(&mut self, value: u16) {
        self.buffer.as_mut()[field::CHECKSUM].copy_from_slice(&value.to_be_bytes());
    }

    /// Sets Urgent Pointer.
    #[inline]
    pub fn set_urgent_at(&mut self, value: u16) {
        self.buffer.as_mut()[field::URGENT].copy_from_slice(&value.to_be_bytes());
    }

    /// Computes and writes the checksum over pseudo-header, header and data (the whole
    /// buffer, which must be at most 65,535 octets).
    pub fn fill_checksum(&mut self, src: &Address, dst: &Address) {
        self.set_checksum(0);
        let data = self.buffer.as_ref();
        let acc = checksum::pseudo_header(src.octets(), dst.octets(), Protocol::Tcp.into(), data.len() as u16);
        let sum = !checksum::fold(checksum::accumulate(acc, data));
        self.set_checksum(sum);
    }

    /// The options bytes, mutable.
    pub fn options_mut(&mut self) -> &mut [u8] {
        let header_len = self.header_len();
        &mut self.buffer.as_mut()[field::OPTIONS_START..header_len]
    }

    /// The data after the options, mutable.
    pub fn payload_mut(&mut self) -> &mut [u8] {
        let header_len = self.header_len();
        &mut self.buffer.as_mut()[header_len..]
    }
}

impl<T: AsRef<[u8]>> AsRef<[u8]> for Packet<T> {
    fn as_ref(&self) -> &[u8] {
        self.buffer.as_ref()
    }
}
