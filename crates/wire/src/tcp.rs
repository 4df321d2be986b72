//! Transmission Control Protocol segments.
//!
//! Standards a reader must know:
//!
//! * RFC 9293 — the header (§3.1: ports, sequence and acknowledgment numbers, data
//!   offset, control bits, window, checksum over the pseudo-header, urgent pointer),
//!   the options EOL, NOP and MSS (§3.2), sequence-number arithmetic (§3.4);
//! * RFC 3168 §6.1 — the ECE and CWR control bits (RFC 3540's NS bit is historic,
//!   RFC 8311 §3; it is exposed on [`Packet`] as the low reserved bit only);
//! * RFC 7323 — Window Scale (§2) and Timestamps (§3);
//! * RFC 2018 — SACK-Permitted and SACK blocks (§2, §3);
//! * RFC 1071 — the checksum arithmetic ([`crate::checksum`]).
//!
//! [`Repr::emit`] lays options out as Linux does (tcp_options_write): MSS, then
//! SACK-Permitted + Timestamps (or NOP NOP + one of them), NOP + Window Scale,
//! NOP NOP + SACK blocks, then any options kept raw, padded with EOL to a word.
//! Parsing and emitting never allocate: a bare ACK is two fixed-size copies.

use core::{cmp, fmt, ops};

use crate::ipv4::{Address, Protocol};
use crate::{checksum, Error, Field, Result};

/// The header without options (RFC 9293 §3.1: Data Offset minimum 5 words).
pub const HEADER_LEN: usize = 20;
/// Largest options area: Data Offset is 4 bits, at most 15 words (RFC 9293 §3.1).
pub const MAX_OPTIONS_LEN: usize = 40;
/// RFC 9293 §3.7.1 (and RFC 1122 §4.2.2.6): the MSS assumed when none is received.
pub const DEFAULT_MSS: u16 = 536;
/// RFC 7323 §2.3: the largest usable window shift.
pub const MAX_WINDOW_SHIFT: u8 = 14;

/// Byte ranges of the header (RFC 9293 §3.1, "Header Format").
pub mod field {
    use crate::Field;

    /// Source Port.
    pub const SRC_PORT: Field = 0..2;
    /// Destination Port.
    pub const DST_PORT: Field = 2..4;
    /// Sequence Number of the first data octet (or the ISN when SYN is set).
    pub const SEQ_NUM: Field = 4..8;
    /// Acknowledgment Number, valid when ACK is set.
    pub const ACK_NUM: Field = 8..12;
    /// Data Offset (4 bits), reserved (4 bits) and the 8 control bits.
    pub const FLAGS: Field = 12..14;
    /// Window, in octets before scaling (RFC 7323 §2.2).
    pub const WIN_SIZE: Field = 14..16;
    /// Checksum over pseudo-header, header and data.
    pub const CHECKSUM: Field = 16..18;
    /// Urgent Pointer, an offset from the sequence number, valid when URG is set.
    pub const URGENT: Field = 18..20;
    /// Options start after the fixed header and run to Data Offset * 4.
    pub const OPTIONS_START: usize = 20;
}

/// Control bits in the low 12 bits of [`field::FLAGS`] (RFC 9293 §3.1, RFC 3168 §6.1).
mod flags {
    pub const FIN: u16 = 0x001;
    pub const SYN: u16 = 0x002;
    pub const RST: u16 = 0x004;
    pub const PSH: u16 = 0x008;
    pub const ACK: u16 = 0x010;
    pub const URG: u16 = 0x020;
    pub const ECE: u16 = 0x040;
    pub const CWR: u16 = 0x080;
    /// RFC 3540 nonce sum, historic (RFC 8311 §3); the lowest reserved bit.
    pub const NS: u16 = 0x100;
    pub const ALL: u16 = 0xfff;
}

#[inline]
fn be16(data: &[u8], f: Field) -> u16 {
    u16::from_be_bytes([data[f.start], data[f.start + 1]])
}

/// Rounds up to a whole number of 32-bit words (RFC 9293 §3.1, Data Offset).
#[inline]
const fn round4(n: usize) -> usize {
    (n + 3) & !3
}

/// Appends octets to an options area (see `Repr::emit_options`).
struct OptionWriter<'a> {
    out: &'a mut [u8],
    at: usize,
}

impl OptionWriter<'_> {
    #[inline]
    fn put(&mut self, bytes: &[u8]) {
        self.out[self.at..self.at + bytes.len()].copy_from_slice(bytes);
        self.at += bytes.len();
    }
}

#[inline]
fn be32(data: &[u8], f: Field) -> u32 {
    u32::from_be_bytes([data[f.start], data[f.start + 1], data[f.start + 2], data[f.start + 3]])
}

/// A TCP sequence number: 32-bit modular arithmetic, ordered by the sign of the
/// wrapping difference (RFC 9293 §3.4; RFC 1982 serial-number style, as smoltcp).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SeqNumber(pub i32);

impl SeqNumber {
    /// From the 32-bit wire value.
    pub const fn from_u32(value: u32) -> SeqNumber {
        SeqNumber(value as i32)
    }

    /// The 32-bit wire value.
    pub const fn as_u32(self) -> u32 {
        self.0 as u32
    }

    /// The later of two sequence numbers.
    pub fn max(self, rhs: SeqNumber) -> SeqNumber {
        if self > rhs {
            self
        } else {
            rhs
        }
    }

    /// The earlier of two sequence numbers.
    pub fn min(self, rhs: SeqNumber) -> SeqNumber {
        if self < rhs {
            self
        } else {
            rhs
        }
    }
}

impl fmt::Display for SeqNumber {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.as_u32())
    }
}

impl ops::Add<usize> for SeqNumber {
    type Output = SeqNumber;

    /// Panics when `rhs` exceeds 2^31 - 1, which no window can reach.
    fn add(self, rhs: usize) -> SeqNumber {
        let rhs = i32::try_from(rhs).expect("attempt to add to sequence number with overflow");
        SeqNumber(self.0.wrapping_add(rhs))
    }
}

impl ops::Sub<usize> for SeqNumber {
    type Output = SeqNumber;

    /// Panics when `rhs` exceeds 2^31 - 1.
    fn sub(self, rhs: usize) -> SeqNumber {
        let rhs = i32::try_from(rhs).expect("attempt to subtract from sequence number with overflow");
        SeqNumber(self.0.wrapping_sub(rhs))
    }
}

impl ops::AddAssign<usize> for SeqNumber {
    fn add_assign(&mut self, rhs: usize) {
        *self = *self + rhs;
    }
}

impl ops::Sub for SeqNumber {
    type Output = usize;

    /// The distance from `rhs` up to `self`; panics when `rhs` is after `self`.
    fn sub(self, rhs: SeqNumber) -> usize {
        let result = self.0.wrapping_sub(rhs.0);
        usize::try_from(result).expect("attempt to subtract sequence numbers with underflow")
    }
}

impl PartialOrd for SeqNumber {
    fn partial_cmp(&self, other: &SeqNumber) -> Option<cmp::Ordering> {
        self.0.wrapping_sub(other.0).partial_cmp(&0)
    }
}

/// A read/write view of a TCP segment. The buffer is the whole segment (the IP
/// payload): TCP has no length field, the checksum covers the buffer to its end.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Packet<T: AsRef<[u8]>> {
    buffer: T,
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

crate::enum_with_unknown! {
    /// Option kinds (IANA "tcp-parameters").
    pub enum OptionKind(u8) {
        /// RFC 9293 §3.2: End of Option List.
        EndOfList = 0,
        /// RFC 9293 §3.2: No-Operation.
        NoOperation = 1,
        /// RFC 9293 §3.2: Maximum Segment Size, length 4.
        MaxSegmentSize = 2,
        /// RFC 7323 §2.2: Window Scale, length 3.
        WindowScale = 3,
        /// RFC 2018 §2: SACK-Permitted, length 2.
        SackPermitted = 4,
        /// RFC 2018 §3: SACK, length 2 + 8n.
        Sack = 5,
        /// RFC 7323 §3.2: Timestamps, length 10.
        Timestamp = 8,
        /// RFC 2385: TCP MD5 signature, length 18.
        Md5Signature = 19,
        /// RFC 5482: User Timeout, length 4.
        UserTimeout = 28,
        /// RFC 5925: TCP Authentication Option.
        Authentication = 29,
        /// RFC 8684: Multipath TCP.
        Multipath = 30,
        /// RFC 7413: TCP Fast Open cookie.
        FastOpen = 34,
    }
}

/// One TCP option, borrowed from the options bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TcpOption<'a> {
    /// RFC 9293 §3.2: End of Option List; the rest is padding.
    EndOfList,
    /// RFC 9293 §3.2: No-Operation.
    NoOperation,
    /// RFC 9293 §3.2: Maximum Segment Size.
    MaxSegmentSize(u16),
    /// RFC 7323 §2.2: the shift count (values above 14 are kept; RFC 7323 §2.3 says a
    /// receiver uses 14 instead).
    WindowScale(u8),
    /// RFC 2018 §2.
    SackPermitted,
    /// RFC 2018 §3: up to four (left edge, right edge) blocks.
    SackRange([Option<(u32, u32)>; 4]),
    /// RFC 7323 §3.2: TSval and TSecr.
    TimeStamp { tsval: u32, tsecr: u32 },
    /// Any other option: its kind and the bytes after the length octet.
    Unknown { kind: u8, data: &'a [u8] },
}

impl<'a> TcpOption<'a> {
    /// Parses the option at the start of `buffer`; returns the bytes after it and the option.
    pub fn parse(buffer: &'a [u8]) -> Result<(&'a [u8], TcpOption<'a>)> {
        let (&kind, _) = buffer.split_first().ok_or(Error::Truncated)?;
        match OptionKind::from(kind) {
            OptionKind::EndOfList => return Ok((&buffer[1..], TcpOption::EndOfList)),
            OptionKind::NoOperation => return Ok((&buffer[1..], TcpOption::NoOperation)),
            _ => {}
        }
        let len = usize::from(*buffer.get(1).ok_or(Error::Truncated)?);
        if len < 2 {
            return Err(Error::Malformed);
        }
        if buffer.len() < len {
            return Err(Error::Truncated);
        }
        let (data, rest) = (&buffer[2..len], &buffer[len..]);
        let option = match (OptionKind::from(kind), len) {
            (OptionKind::MaxSegmentSize, 4) => TcpOption::MaxSegmentSize(u16::from_be_bytes([data[0], data[1]])),
            (OptionKind::WindowScale, 3) => TcpOption::WindowScale(data[0]),
            (OptionKind::SackPermitted, 2) => TcpOption::SackPermitted,
            (OptionKind::Sack, 10 | 18 | 26 | 34) => {
                let mut blocks = [None; 4];
                for (slot, b) in blocks.iter_mut().zip(data.chunks_exact(8)) {
                    *slot = Some((be32(b, 0..4), be32(b, 4..8)));
                }
                TcpOption::SackRange(blocks)
            }
            (OptionKind::Timestamp, 10) => TcpOption::TimeStamp { tsval: be32(data, 0..4), tsecr: be32(data, 4..8) },
            (
                OptionKind::MaxSegmentSize
                | OptionKind::WindowScale
                | OptionKind::SackPermitted
                | OptionKind::Sack
                | OptionKind::Timestamp,
                _,
            ) => return Err(Error::Malformed),
            _ => TcpOption::Unknown { kind, data },
        };
        Ok((rest, option))
    }

    /// The kind octet.
    pub fn kind(&self) -> OptionKind {
        match *self {
            TcpOption::EndOfList => OptionKind::EndOfList,
            TcpOption::NoOperation => OptionKind::NoOperation,
            TcpOption::MaxSegmentSize(_) => OptionKind::MaxSegmentSize,
            TcpOption::WindowScale(_) => OptionKind::WindowScale,
            TcpOption::SackPermitted => OptionKind::SackPermitted,
            TcpOption::SackRange(_) => OptionKind::Sack,
            TcpOption::TimeStamp { .. } => OptionKind::Timestamp,
            TcpOption::Unknown { kind, .. } => OptionKind::from(kind),
        }
    }

    /// Octets the option takes, kind and length included.
    pub fn buffer_len(&self) -> usize {
        match *self {
            TcpOption::EndOfList | TcpOption::NoOperation => 1,
            TcpOption::MaxSegmentSize(_) => 4,
            TcpOption::WindowScale(_) => 3,
            TcpOption::SackPermitted => 2,
            TcpOption::SackRange(blocks) => 2 + 8 * blocks.iter().flatten().count(),
            TcpOption::TimeStamp { .. } => 10,
            TcpOption::Unknown { data, .. } => 2 + data.len(),
        }
    }

    /// Writes the option at the start of `buffer`, returns the bytes after it. Panics
    /// if `buffer` is shorter than [`buffer_len`](Self::buffer_len).
    pub fn emit<'b>(&self, buffer: &'b mut [u8]) -> &'b mut [u8] {
        let len = self.buffer_len();
        let (out, rest) = buffer.split_at_mut(len);
        out[0] = self.kind().into();
        if len > 1 {
            out[1] = len as u8;
        }
        match *self {
            TcpOption::EndOfList | TcpOption::NoOperation | TcpOption::SackPermitted => {}
            TcpOption::MaxSegmentSize(mss) => out[2..4].copy_from_slice(&mss.to_be_bytes()),
            TcpOption::WindowScale(shift) => out[2] = shift,
            TcpOption::SackRange(blocks) => {
                for ((l, r), b) in blocks.iter().flatten().zip(out[2..].chunks_exact_mut(8)) {
                    b[0..4].copy_from_slice(&l.to_be_bytes());
                    b[4..8].copy_from_slice(&r.to_be_bytes());
                }
            }
            TcpOption::TimeStamp { tsval, tsecr } => {
                out[2..6].copy_from_slice(&tsval.to_be_bytes());
                out[6..10].copy_from_slice(&tsecr.to_be_bytes());
            }
            TcpOption::Unknown { kind, data } => {
                out[0] = kind;
                out[2..].copy_from_slice(data);
            }
        }
        rest
    }
}

/// Options a [`Repr`] does not model, kept raw and in order (kind, length, data), so a
/// segment with, e.g., an MD5 signature or a Fast Open cookie survives parse → emit.
/// Fixed capacity, no allocation. Invariant: `len <= MAX_OPTIONS_LEN`.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct OtherOptions {
    bytes: [u8; MAX_OPTIONS_LEN],
    len: u8,
}

impl Default for OtherOptions {
    fn default() -> Self {
        Self::empty()
    }
}

impl OtherOptions {
    /// None.
    pub const fn empty() -> Self {
        OtherOptions { bytes: [0; MAX_OPTIONS_LEN], len: 0 }
    }

    /// The raw bytes.
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes[..usize::from(self.len)]
    }

    /// Length in octets.
    pub fn len(&self) -> usize {
        usize::from(self.len)
    }

    /// True when there are none.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Appends one option in wire form (`Unknown { kind, data }` or any other);
    /// `Err(Truncated)` when it does not fit in 40 octets.
    pub fn push(&mut self, option: &TcpOption) -> Result<()> {
        let at = self.len();
        let need = option.buffer_len();
        if at + need > MAX_OPTIONS_LEN {
            return Err(Error::Truncated);
        }
        option.emit(&mut self.bytes[at..at + need]);
        self.len += need as u8;
        Ok(())
    }

    /// Iterates the kept options.
    pub fn iter(&self) -> OptionIter<'_> {
        OptionIter { rest: self.as_bytes() }
    }
}

impl fmt::Debug for OtherOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

/// Iterates options bytes; stops after EOL, yields one `Err` and stops on a malformed one.
#[derive(Debug, Clone)]
pub struct OptionIter<'a> {
    rest: &'a [u8],
}

impl<'a> OptionIter<'a> {
    /// Iterates raw options bytes, e.g. [`Packet::options`].
    pub fn new(bytes: &'a [u8]) -> Self {
        OptionIter { rest: bytes }
    }
}

impl<'a> Iterator for OptionIter<'a> {
    type Item = Result<TcpOption<'a>>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.rest.is_empty() {
            return None;
        }
        match TcpOption::parse(self.rest) {
            Ok((_, TcpOption::EndOfList)) => {
                self.rest = &[];
                Some(Ok(TcpOption::EndOfList))
            }
            Ok((rest, option)) => {
                self.rest = rest;
                Some(Ok(option))
            }
            Err(e) => {
                self.rest = &[];
                Some(Err(e))
            }
        }
    }
}

/// The SYN/FIN/RST/PSH control bits a segment carries, as smoltcp models them: at most
/// one of SYN, FIN, RST; PSH is kept only on a segment with none of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Control {
    #[default]
    None,
    Psh,
    Syn,
    Fin,
    Rst,
}

impl Control {
    /// Sequence space the control bit occupies (RFC 9293 §3.4: SYN and FIN count one).
    pub const fn len(self) -> usize {
        match self {
            Control::Syn | Control::Fin => 1,
            _ => 0,
        }
    }

    /// True when [`len`](Self::len) is zero.
    pub const fn is_empty(self) -> bool {
        self.len() == 0
    }
}

/// The data after a header, for [`Repr::emit_append`]: octets, or a run of zero
/// octets (a bulk sender's payload, which needs no buffer of its own).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Payload<'a> {
    Bytes(&'a [u8]),
    Zeros(usize),
}

impl Payload<'_> {
    /// Octets of data.
    pub fn len(&self) -> usize {
        match *self {
            Payload::Bytes(b) => b.len(),
            Payload::Zeros(n) => n,
        }
    }

    /// True when there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A TCP header as plain values (RFC 9293 §3.1), with the options a stack uses.
///
/// Not kept: URG and the urgent pointer (emitted as zero), PSH together with
/// SYN/FIN/RST, the NS bit, and the exact placement of NOP padding (emit uses
/// Linux's layout). Unknown options are kept raw in `other_options`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Repr {
    pub src_port: u16,
    pub dst_port: u16,
    pub control: Control,
    pub seq_number: SeqNumber,
    /// Present exactly when the ACK bit is set.
    pub ack_number: Option<SeqNumber>,
    /// The Window field, unscaled.
    pub window_len: u16,
    /// RFC 7323 §2: the shift count of a Window Scale option.
    pub window_scale: Option<u8>,
    /// RFC 9293 §3.2: a Maximum Segment Size option.
    pub max_seg_size: Option<u16>,
    /// RFC 2018 §2: a SACK-Permitted option.
    pub sack_permitted: bool,
    /// RFC 2018 §3: up to three SACK blocks (a parsed fourth is dropped); emit writes
    /// as many as fit in the 40 option octets.
    pub sack_ranges: [Option<(u32, u32)>; 3],
    /// RFC 7323 §3: (TSval, TSecr).
    pub timestamp: Option<(u32, u32)>,
    /// RFC 3168 §6.1: ECN-Echo.
    pub ece: bool,
    /// RFC 3168 §6.1: Congestion Window Reduced.
    pub cwr: bool,
    /// Options not modelled above, raw; emitted after the others when they fit.
    pub other_options: OtherOptions,
    /// Data octets after the header.
    pub payload_len: usize,
}

impl Repr {
    /// A bare segment: no options, no flags but `control`, no ACK.
    pub fn new(src_port: u16, dst_port: u16, control: Control, seq_number: SeqNumber, window_len: u16) -> Repr {
        Repr {
            src_port,
            dst_port,
            control,
            seq_number,
            ack_number: None,
            window_len,
            window_scale: None,
            max_seg_size: None,
            sack_permitted: false,
            sack_ranges: [None; 3],
            timestamp: None,
            ece: false,
            cwr: false,
            other_options: OtherOptions::empty(),
            payload_len: 0,
        }
    }

    /// Parses a segment carried from `src` to `dst` (the buffer is the whole segment),
    /// verifying the checksum. Port 0 and SYN/FIN/RST combinations are malformed.
    #[inline(always)]
    pub fn parse<T: AsRef<[u8]> + ?Sized>(packet: &Packet<&T>, src: &Address, dst: &Address) -> Result<Repr> {
        packet.check_len()?;
        let data = packet.buffer.as_ref();
        // The fixed header read once from a 20-octet array (check_len saw it is there).
        let h: &[u8; HEADER_LEN] = data[..HEADER_LEN].try_into().map_err(|_| Error::Truncated)?;
        let word16 = |at: usize| u16::from_be_bytes([h[at], h[at + 1]]);
        let word32 = |at: usize| u32::from_be_bytes([h[at], h[at + 1], h[at + 2], h[at + 3]]);
        let (src_port, dst_port) = (word16(field::SRC_PORT.start), word16(field::DST_PORT.start));
        if src_port == 0 || dst_port == 0 {
            return Err(Error::Malformed);
        }
        if !packet.verify_checksum(src, dst) {
            return Err(Error::Checksum);
        }
        let raw = word16(field::FLAGS.start);
        let bit = |f: u16| raw & f != 0;
        // The four low flag bits (FIN, SYN, RST, PSH) index the control they make: PSH
        // alone, or at most one of SYN, FIN, RST, with or without PSH.
        const CONTROLS: [Option<Control>; 16] = {
            let mut t = [None; 16];
            t[0] = Some(Control::None);
            t[flags::PSH as usize] = Some(Control::Psh);
            let mut psh = 0;
            while psh <= flags::PSH as usize {
                t[flags::SYN as usize | psh] = Some(Control::Syn);
                t[flags::FIN as usize | psh] = Some(Control::Fin);
                t[flags::RST as usize | psh] = Some(Control::Rst);
                psh += flags::PSH as usize;
            }
            t
        };
        let Some(control) = CONTROLS[usize::from(raw & 0xf)] else { return Err(Error::Malformed) };
        let header_len = usize::from(raw >> 12) * 4;
        let seq = SeqNumber::from_u32(word32(field::SEQ_NUM.start));
        let mut repr = Repr::new(src_port, dst_port, control, seq, word16(field::WIN_SIZE.start));
        repr.ack_number = bit(flags::ACK).then(|| SeqNumber::from_u32(word32(field::ACK_NUM.start)));
        repr.ece = bit(flags::ECE);
        repr.cwr = bit(flags::CWR);
        repr.payload_len = data.len() - header_len;

        let mut options = &data[HEADER_LEN..header_len];
        // Fast path for the options of nearly every segment of a connection with
        // timestamps (RFC 7323 Appendix A's layout: NOP, NOP, Timestamps), alone or
        // followed by NOP, NOP, SACK (RFC 2018 §3) as Linux sends them; the loop below
        // gives the same result, option by option.
        if let [1, 1, 8, 10, t0, t1, t2, t3, e0, e1, e2, e3, rest @ ..] = options {
            let sack = match rest {
                [] => Some(&[][..]),
                [1, 1, 5, len, blocks @ ..] if usize::from(*len) == blocks.len() + 2 && matches!(len, 10 | 18 | 26) => {
                    Some(blocks)
                }
                _ => None,
            };
            if let Some(blocks) = sack {
                repr.timestamp =
                    Some((u32::from_be_bytes([*t0, *t1, *t2, *t3]), u32::from_be_bytes([*e0, *e1, *e2, *e3])));
                for (slot, b) in repr.sack_ranges.iter_mut().zip(blocks.chunks_exact(8)) {
                    *slot = Some((be32(b, 0..4), be32(b, 4..8)));
                }
                options = &[];
            }
        }
        while !options.is_empty() {
            let (rest, option) = TcpOption::parse(options)?;
            match option {
                TcpOption::EndOfList => break,
                TcpOption::NoOperation => {}
                TcpOption::MaxSegmentSize(v) => repr.max_seg_size = Some(v),
                TcpOption::WindowScale(v) => repr.window_scale = Some(v),
                TcpOption::SackPermitted => repr.sack_permitted = true,
                TcpOption::SackRange(blocks) => repr.sack_ranges = [blocks[0], blocks[1], blocks[2]],
                TcpOption::TimeStamp { tsval, tsecr } => repr.timestamp = Some((tsval, tsecr)),
                other @ TcpOption::Unknown { .. } => repr.other_options.push(&other)?,
            }
            options = rest;
        }
        Ok(repr)
    }

    /// (octets of the options before SACK, SACK blocks that fit, raw octets of
    /// other_options that fit) under Linux's layout.
    fn layout(&self) -> (usize, usize, usize) {
        // Nearly every segment of a connection with timestamps: those alone, the
        // answer the general computation below gives for them.
        if let (None, false, Some(_), None, true, [None, None, None]) = (
            self.max_seg_size,
            self.sack_permitted,
            self.timestamp,
            self.window_scale,
            self.other_options.is_empty(),
            self.sack_ranges,
        ) {
            return (12, 0, 0);
        }
        let mut base = 0;
        if self.max_seg_size.is_some() {
            base += 4;
        }
        if self.sack_permitted || self.timestamp.is_some() {
            base += if self.timestamp.is_some() { 12 } else { 4 };
        }
        if self.window_scale.is_some() {
            base += 4;
        }
        let other = self.other_options.len();
        let other = if base + round4(other) <= MAX_OPTIONS_LEN { other } else { 0 };
        let room = MAX_OPTIONS_LEN - base - round4(other);
        let wanted = self.sack_ranges.iter().flatten().count();
        let blocks = if room >= 12 { wanted.min((room - 4) / 8) } else { 0 };
        (base, blocks, other)
    }

    /// Header length in octets, options padded to a word (at most 60).
    pub fn header_len(&self) -> usize {
        Self::header_len_of(self.layout())
    }

    /// [`header_len`](Self::header_len) for a [`layout`](Self::layout) already made.
    #[inline]
    fn header_len_of((base, blocks, other): (usize, usize, usize)) -> usize {
        let sack = if blocks > 0 { 4 + 8 * blocks } else { 0 };
        HEADER_LEN + base + sack + round4(other)
    }

    /// Header plus data.
    pub fn buffer_len(&self) -> usize {
        self.header_len() + self.payload_len
    }

    /// Sequence space: data plus one each for SYN and FIN.
    pub fn segment_len(&self) -> usize {
        self.payload_len + self.control.len()
    }

    /// True for a segment with no data and no SYN/FIN (a pure ACK or RST).
    pub fn is_empty(&self) -> bool {
        self.segment_len() == 0
    }

    /// Writes the header, lets `emit_payload` fill the `payload_len` data octets (pass
    /// `|_| ()` when they are already in place), then computes the checksum over the
    /// first `buffer_len()` octets. Panics if the buffer is shorter than `buffer_len()`.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(
        &self,
        packet: &mut Packet<T>,
        src: &Address,
        dst: &Address,
        emit_payload: impl FnOnce(&mut [u8]),
    ) {
        let layout = self.layout();
        let header_len = Self::header_len_of(layout);
        let total = header_len + self.payload_len;
        let buf = &mut packet.buffer.as_mut()[..total];
        self.emit_header(&mut buf[..header_len], layout);
        emit_payload(&mut buf[header_len..]);
        Packet::new_unchecked(buf).fill_checksum(src, dst);
    }

    /// Appends the segment to `frame`: this header, then `payload` (its length, not
    /// `payload_len`, counts), checksum filled. The same octets as [`emit`](Self::emit)
    /// over a buffer holding the payload; the payload is read once, to copy it, and
    /// its checksum is summed once. [`Payload::Zeros`] is written without a source
    /// buffer and adds nothing to the sum (RFC 1071 §2: a one's-complement sum of
    /// zero words is zero), so only the header is summed for it.
    #[inline(always)]
    pub fn emit_append(&self, frame: &mut Vec<u8>, src: &Address, dst: &Address, payload: Payload<'_>) {
        self.emit_at(frame, frame.len(), src, dst, payload);
    }

    /// As [`emit_append`](Self::emit_append), with the segment at octet `start` of
    /// `frame` (cut there if it is longer); octets the frame grows by before `start`
    /// are zeros, filled together with the header's room (a frame cleared for its
    /// lower layers' headers is extended once).
    #[inline(always)]
    pub fn emit_at(&self, frame: &mut Vec<u8>, start: usize, src: &Address, dst: &Address, payload: Payload<'_>) {
        let layout = self.layout();
        let header_len = Self::header_len_of(layout);
        let total = header_len + payload.len();
        frame.truncate(start);
        match payload {
            Payload::Bytes(bytes @ [_, ..]) => {
                frame.reserve(start + total - frame.len());
                frame.resize(start + header_len, 0);
                frame.extend_from_slice(bytes);
            }
            // Header and zeros (or nothing: a pure ACK) in one fill; the header is
            // written over below.
            Payload::Bytes([]) => frame.resize(start + header_len, 0),
            Payload::Zeros(n) => frame.resize(start + header_len + n, 0),
        }
        let segment = &mut frame[start..];
        let (header, data) = segment.split_at_mut(header_len);
        self.emit_header(header, layout);
        // The header is whole 32-bit words (Data Offset counts them, RFC 9293 §3.1),
        // and the data starts on a 16-bit boundary: the two sums add (RFC 1071 §2(A)).
        let mut acc = checksum::pseudo_header(src.octets(), dst.octets(), Protocol::Tcp.into(), total as u16);
        // A header with timestamps alone (nearly every segment) is 32 octets: summed
        // at that fixed length, the loop unrolls to eight words.
        acc += u32::from(match <&[u8; HEADER_LEN + 12]>::try_from(&*header) {
            Ok(fixed) => checksum::sum_words32(fixed),
            Err(_) => checksum::sum_words32(header),
        });
        if let Payload::Bytes([_, ..]) = payload {
            acc = checksum::accumulate(acc, data);
        }
        header[field::CHECKSUM].copy_from_slice(&(!checksum::fold(acc)).to_be_bytes());
    }

    /// Writes the fixed header (checksum zero) and the options of `layout` into
    /// `buf`, which is exactly the header's length.
    fn emit_header(&self, buf: &mut [u8], layout: (usize, usize, usize)) {
        let header_len = buf.len();
        let mut raw = ((header_len / 4) as u16) << 12;
        raw |= match self.control {
            Control::None => 0,
            Control::Psh => flags::PSH,
            Control::Syn => flags::SYN,
            Control::Fin => flags::FIN,
            Control::Rst => flags::RST,
        };
        if self.ack_number.is_some() {
            raw |= flags::ACK;
        }
        if self.ece {
            raw |= flags::ECE;
        }
        if self.cwr {
            raw |= flags::CWR;
        }
        // The fixed 20 octets built in a local array (checksum and urgent pointer
        // zero) and copied once.
        let mut h = [0u8; HEADER_LEN];
        h[field::SRC_PORT].copy_from_slice(&self.src_port.to_be_bytes());
        h[field::DST_PORT].copy_from_slice(&self.dst_port.to_be_bytes());
        h[field::SEQ_NUM].copy_from_slice(&self.seq_number.0.to_be_bytes());
        h[field::ACK_NUM].copy_from_slice(&self.ack_number.unwrap_or_default().0.to_be_bytes());
        h[field::FLAGS].copy_from_slice(&raw.to_be_bytes());
        h[field::WIN_SIZE].copy_from_slice(&self.window_len.to_be_bytes());
        let (fixed, options) = buf.split_at_mut(HEADER_LEN);
        fixed.copy_from_slice(&h);
        if !options.is_empty() {
            self.emit_options(options, layout);
        }
    }

    fn emit_options(&self, out: &mut [u8], (base, blocks, other): (usize, usize, usize)) {
        // Written octet by octet in Linux's order (`tcp_options_write`); the same bytes
        // as emitting each `TcpOption` in turn, without its generic length and kind work
        // (this runs once per segment sent).
        const NOP: u8 = 1;
        // With timestamps, `layout` counts 12 octets before SACK only when there is no
        // MSS or window scale option (4 more each): timestamps alone, unless
        // SACK-Permitted takes the NOPs' place.
        if let (12, false, Some((tsval, tsecr)), 0) = (base, self.sack_permitted, self.timestamp, other) {
            // Nearly every segment of a connection with timestamps: NOP, NOP,
            // Timestamps (RFC 7323 Appendix A), then SACK blocks if any; the octets the
            // general writer below would put.
            let ts = [NOP, NOP, OptionKind::Timestamp.into(), 10];
            if let (0, Ok(o)) = (blocks, <&mut [u8; 12]>::try_from(&mut *out)) {
                // Timestamps alone: twelve octets written in place.
                o[..4].copy_from_slice(&ts);
                o[4..8].copy_from_slice(&tsval.to_be_bytes());
                o[8..].copy_from_slice(&tsecr.to_be_bytes());
                return;
            }
            let mut o = [0u8; MAX_OPTIONS_LEN];
            o[..4].copy_from_slice(&ts);
            o[4..8].copy_from_slice(&tsval.to_be_bytes());
            o[8..12].copy_from_slice(&tsecr.to_be_bytes());
            if blocks > 0 {
                o[12..16].copy_from_slice(&[NOP, NOP, OptionKind::Sack.into(), (2 + 8 * blocks) as u8]);
                for (b, &(left, right)) in
                    o[16..].chunks_exact_mut(8).zip(self.sack_ranges.iter().flatten().take(blocks))
                {
                    b[..4].copy_from_slice(&left.to_be_bytes());
                    b[4..].copy_from_slice(&right.to_be_bytes());
                }
            }
            out.copy_from_slice(&o[..out.len()]);
            return;
        }
        let mut w = OptionWriter { out, at: 0 };
        if let Some(mss) = self.max_seg_size {
            w.put(&[OptionKind::MaxSegmentSize.into(), 4]);
            w.put(&mss.to_be_bytes());
        }
        match (self.sack_permitted, self.timestamp) {
            (sack_permitted, Some((tsval, tsecr))) => {
                w.put(&if sack_permitted { [OptionKind::SackPermitted.into(), 2] } else { [NOP, NOP] });
                w.put(&[OptionKind::Timestamp.into(), 10]);
                w.put(&tsval.to_be_bytes());
                w.put(&tsecr.to_be_bytes());
            }
            (true, None) => w.put(&[NOP, NOP, OptionKind::SackPermitted.into(), 2]),
            (false, None) => {}
        }
        if let Some(shift) = self.window_scale {
            w.put(&[NOP, OptionKind::WindowScale.into(), 3, shift]);
        }
        if blocks > 0 {
            w.put(&[NOP, NOP, OptionKind::Sack.into(), (2 + 8 * blocks) as u8]);
            for &(left, right) in self.sack_ranges.iter().flatten().take(blocks) {
                w.put(&left.to_be_bytes());
                w.put(&right.to_be_bytes());
            }
        }
        w.put(&self.other_options.as_bytes()[..other]);
        w.out[w.at..].fill(0); // RFC 9293 §3.2: pad with End of Option List
    }

    /// Appends header and `payload` to `out`, checksum filled; `payload_len` is taken
    /// from `payload`.
    pub fn encapsulate(&self, src: &Address, dst: &Address, payload: &[u8], out: &mut Vec<u8>) {
        let repr = Repr { payload_len: payload.len(), ..*self };
        let start = out.len();
        out.resize(start + repr.buffer_len(), 0);
        repr.emit(&mut Packet::new_unchecked(&mut out[start..]), src, dst, |p| p.copy_from_slice(payload));
    }

    /// The octets this header adds, field by field (RFC 9293 §3.1), for `qoslab mtu`.
    pub fn overhead_fields(&self, _payload_len: usize) -> Vec<(&'static str, usize)> {
        let mut fields = vec![
            ("source port", 2),
            ("destination port", 2),
            ("sequence number", 4),
            ("acknowledgment number", 4),
            ("data offset/flags", 2),
            ("window", 2),
            ("checksum", 2),
            ("urgent pointer", 2),
        ];
        let options = self.header_len() - HEADER_LEN;
        if options > 0 {
            fields.push(("options", options));
        }
        fields
    }
}

impl fmt::Display for Repr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "TCP src={} dst={}", self.src_port, self.dst_port)?;
        match self.control {
            Control::Syn => write!(f, " syn")?,
            Control::Fin => write!(f, " fin")?,
            Control::Rst => write!(f, " rst")?,
            Control::Psh => write!(f, " psh")?,
            Control::None => {}
        }
        write!(f, " seq={}", self.seq_number)?;
        if let Some(ack) = self.ack_number {
            write!(f, " ack={ack}")?;
        }
        write!(f, " win={} len={}", self.window_len, self.payload_len)?;
        if let Some(mss) = self.max_seg_size {
            write!(f, " mss={mss}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod test {
    use super::*;
    use proptest::prelude::*;

    const SRC: Address = Address::new(192, 168, 1, 1);
    const DST: Address = Address::new(192, 168, 1, 2);

    // A bare ACK 49152 -> 80, seq 0x01234567, ack 0x89abcdef, window 0x0100.
    // Checksum by hand, 16-bit words:
    //   pseudo-header c0a8 0101 c0a8 0102 0006 0014
    //   header        c000 0050 0123 4567 89ab cdef 5010 0100 0000 0000
    // computed independently in `test_checksum_by_hand`.
    static ACK_BYTES: [u8; 20] = [
        0xc0, 0x00, 0x00, 0x50, 0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef, 0x50, 0x10, 0x01, 0x00, 0xcd, 0x0a,
        0x00, 0x00,
    ];

    // A Linux-style SYN: MSS 1460, SACK-Permitted, TS (1, 0), NOP, WS 7; 40-byte header.
    static SYN_BYTES: [u8; 40] = [
        0xc0, 0x00, 0x00, 0x50, 0x00, 0x00, 0x00, 0x64, 0x00, 0x00, 0x00, 0x00, 0xa0, 0x02, 0xfa, 0xf0, 0x00, 0x00,
        0x00, 0x00, // fixed header, checksum filled in the test
        0x02, 0x04, 0x05, 0xb4, // MSS 1460
        0x04, 0x02, // SACK-Permitted
        0x08, 0x0a, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, // TS 1, 0
        0x01, // NOP
        0x03, 0x03, 0x07, // WS 7
    ];

    fn ack_repr() -> Repr {
        Repr {
            ack_number: Some(SeqNumber::from_u32(0x89ab_cdef)),
            ..Repr::new(49152, 80, Control::None, SeqNumber::from_u32(0x0123_4567), 0x0100)
        }
    }

    fn syn_repr() -> Repr {
        Repr {
            max_seg_size: Some(1460),
            sack_permitted: true,
            timestamp: Some((1, 0)),
            window_scale: Some(7),
            ..Repr::new(49152, 80, Control::Syn, SeqNumber(100), 64240)
        }
    }

    fn ones_complement(words: &[u32]) -> u16 {
        let mut s: u32 = words.iter().sum();
        while s >> 16 != 0 {
            s = (s & 0xffff) + (s >> 16);
        }
        !(s as u16)
    }

    #[test]
    fn test_checksum_by_hand() {
        let words = [
            0xc0a8, 0x0101, 0xc0a8, 0x0102, 0x0006, 0x0014, 0xc000, 0x0050, 0x0123, 0x4567, 0x89ab, 0xcdef, 0x5010,
            0x0100, 0, 0,
        ];
        assert_eq!(ones_complement(&words), 0xcd0a);
    }

    #[test]
    fn test_parse_ack() {
        let p = Packet::new_checked(&ACK_BYTES[..]).unwrap();
        assert_eq!(p.src_port(), 49152);
        assert_eq!(p.dst_port(), 80);
        assert_eq!(p.seq_number(), SeqNumber::from_u32(0x0123_4567));
        assert_eq!(p.ack_number().as_u32(), 0x89ab_cdef);
        assert_eq!(p.header_len(), 20);
        assert!(p.ack() && !p.syn() && !p.fin() && !p.rst() && !p.psh() && !p.urg() && !p.ece() && !p.cwr());
        assert_eq!(p.window_len(), 256);
        assert_eq!(p.checksum(), 0xcd0a);
        assert!(p.verify_checksum(&SRC, &DST));
        assert_eq!(p.segment_len(), 0);
        assert_eq!(Repr::parse(&p, &SRC, &DST).unwrap(), ack_repr());
    }

    #[test]
    fn test_emit_ack() {
        let mut bytes = [0xffu8; 20];
        ack_repr().emit(&mut Packet::new_unchecked(&mut bytes[..]), &SRC, &DST, |_| ());
        assert_eq!(bytes, ACK_BYTES);
    }

    #[test]
    fn test_syn_options() {
        let mut expected = SYN_BYTES;
        Packet::new_unchecked(&mut expected[..]).fill_checksum(&SRC, &DST);
        let mut bytes = [0u8; 40];
        syn_repr().emit(&mut Packet::new_unchecked(&mut bytes[..]), &SRC, &DST, |_| ());
        assert_eq!(bytes, expected);
        let p = Packet::new_checked(&bytes[..]).unwrap();
        assert_eq!(p.segment_len(), 1);
        assert_eq!(Repr::parse(&p, &SRC, &DST).unwrap(), syn_repr());
        let opts: Vec<_> = OptionIter::new(p.options()).map(|o| o.unwrap()).collect();
        assert_eq!(
            opts,
            vec![
                TcpOption::MaxSegmentSize(1460),
                TcpOption::SackPermitted,
                TcpOption::TimeStamp { tsval: 1, tsecr: 0 },
                TcpOption::NoOperation,
                TcpOption::WindowScale(7)
            ]
        );
    }

    #[test]
    fn test_sack_and_unknown() {
        let mut repr = ack_repr();
        repr.timestamp = Some((7, 8));
        repr.sack_ranges = [Some((1000, 2000)), Some((3000, 4000)), Some((5000, 6000))];
        // 12 (TS) + 4 + 24 (3 blocks) = 40.
        assert_eq!(repr.header_len(), 60);
        let mut buf = vec![0u8; repr.buffer_len()];
        repr.emit(&mut Packet::new_unchecked(&mut buf[..]), &SRC, &DST, |_| ());
        assert_eq!(&buf[32..36], &[1, 1, 5, 26]);
        assert_eq!(Repr::parse(&Packet::new_checked(&buf[..]).unwrap(), &SRC, &DST).unwrap(), repr);

        // An unknown option (User Timeout) is kept and takes room from SACK blocks.
        repr.other_options.push(&TcpOption::Unknown { kind: 28, data: &[0x80, 0x10] }).unwrap();
        assert_eq!(repr.header_len(), 56); // 12 + (4 + 16: 2 blocks) + 4
        let mut buf = vec![0u8; repr.buffer_len()];
        repr.emit(&mut Packet::new_unchecked(&mut buf[..]), &SRC, &DST, |_| ());
        let parsed = Repr::parse(&Packet::new_checked(&buf[..]).unwrap(), &SRC, &DST).unwrap();
        assert_eq!(parsed.sack_ranges, [Some((1000, 2000)), Some((3000, 4000)), None]);
        assert_eq!(parsed.other_options.as_bytes(), &[28, 4, 0x80, 0x10]);
    }

    #[test]
    fn test_control_bits_all_sixteen() {
        // RFC 9293 §3.1's four low flag bits, every combination: at most one of SYN,
        // FIN, RST is accepted (PSH kept beside none of them), any two are malformed.
        for bits in 0u8..16 {
            let (fin, syn, rst, psh) = (bits & 1 != 0, bits & 2 != 0, bits & 4 != 0, bits & 8 != 0);
            let mut seg = ACK_BYTES;
            seg[13] = (seg[13] & 0xf0) | bits;
            Packet::new_unchecked(&mut seg[..]).fill_checksum(&SRC, &DST);
            let parsed = Repr::parse(&Packet::new_unchecked(&seg[..]), &SRC, &DST).map(|r| r.control);
            let expected = match (u8::from(syn) + u8::from(fin) + u8::from(rst), syn, fin, rst) {
                (0, ..) if psh => Ok(Control::Psh),
                (0, ..) => Ok(Control::None),
                (1, true, _, _) => Ok(Control::Syn),
                (1, _, true, _) => Ok(Control::Fin),
                (1, _, _, true) => Ok(Control::Rst),
                _ => Err(Error::Malformed),
            };
            assert_eq!(parsed, expected, "flag bits {bits:#06b}");
        }
    }

    #[test]
    fn test_errors() {
        assert_eq!(Packet::new_checked(&ACK_BYTES[..19]).unwrap_err(), Error::Truncated);
        let mut bad = ACK_BYTES;
        bad[12] = 0x40; // data offset 4
        assert_eq!(Packet::new_checked(&bad[..]).unwrap_err(), Error::Malformed);
        bad[12] = 0x60; // data offset 6, buffer 20
        assert_eq!(Packet::new_checked(&bad[..]).unwrap_err(), Error::Truncated);
        let mut bad = ACK_BYTES;
        bad[19] = 1;
        assert_eq!(Repr::parse(&Packet::new_unchecked(&bad[..]), &SRC, &DST).unwrap_err(), Error::Checksum);
        let mut bad = ACK_BYTES;
        bad[13] |= 0x03; // SYN+FIN
        Packet::new_unchecked(&mut bad[..]).fill_checksum(&SRC, &DST);
        assert_eq!(Repr::parse(&Packet::new_unchecked(&bad[..]), &SRC, &DST).unwrap_err(), Error::Malformed);
        // MSS with length 3.
        assert_eq!(TcpOption::parse(&[2, 3, 5]).unwrap_err(), Error::Malformed);
        assert_eq!(TcpOption::parse(&[2, 4, 5]).unwrap_err(), Error::Truncated);
        assert_eq!(TcpOption::parse(&[5, 11, 0, 0, 0, 0, 0, 0, 0, 0, 0]).unwrap_err(), Error::Malformed);
        assert_eq!(TcpOption::parse(&[30, 1]).unwrap_err(), Error::Malformed);
        assert_eq!(TcpOption::parse(&[]).unwrap_err(), Error::Truncated);
    }

    #[test]
    fn test_seq_number() {
        let a = SeqNumber::from_u32(0xffff_fff0);
        let b = a + 0x20;
        assert_eq!(b.as_u32(), 0x10);
        assert!(a < b);
        assert!(b > a);
        assert_eq!(b - a, 0x20);
        assert_eq!(b - 0x20usize, a);
        assert_eq!(a.max(b), b);
        assert_eq!(a.min(b), a);
        let mut c = a;
        c += 1;
        assert_eq!(c.as_u32(), 0xffff_fff1);
        assert_eq!(format!("{a}"), "4294967280");
    }

    #[test]
    #[should_panic(expected = "underflow")]
    fn test_seq_number_underflow() {
        let _ = SeqNumber(1) - SeqNumber(2);
    }

    prop_compose! {
        fn arb_other()(kind in 9u8..=253, data in proptest::collection::vec(any::<u8>(), 0..6), two in any::<bool>()) -> OtherOptions {
            let mut o = OtherOptions::empty();
            o.push(&TcpOption::Unknown { kind, data: &data }).unwrap();
            if two { o.push(&TcpOption::Unknown { kind: 254, data: &[0xf9, 0x89] }).unwrap(); }
            o
        }
    }

    prop_compose! {
        fn arb_repr()(src_port in 1u16.., dst_port in 1u16.., control in 0..5u8, seq in any::<i32>(),
                      ack in proptest::option::of(any::<i32>()), window_len in any::<u16>(),
                      window_scale in proptest::option::of(0u8..15), max_seg_size in proptest::option::of(any::<u16>()),
                      sack_permitted in any::<bool>(),
                      sack in proptest::collection::vec(any::<(u32, u32)>(), 0..=3),
                      timestamp in proptest::option::of(any::<(u32, u32)>()), ece in any::<bool>(), cwr in any::<bool>(),
                      other in arb_other(), payload_len in 0usize..100) -> Repr {
            let control = [Control::None, Control::Psh, Control::Syn, Control::Fin, Control::Rst][usize::from(control)];
            let mut sack_ranges = [None; 3];
            for (slot, r) in sack_ranges.iter_mut().zip(sack) { *slot = Some(r); }
            Repr { src_port, dst_port, control, seq_number: SeqNumber(seq), ack_number: ack.map(SeqNumber),
                   window_len, window_scale, max_seg_size, sack_permitted, sack_ranges, timestamp, ece, cwr,
                   other_options: other, payload_len }
        }
    }

    proptest! {
        #[test]
        fn roundtrip(repr in arb_repr(), s in any::<u32>(), d in any::<u32>()) {
            let (s, d) = (Address::from(s), Address::from(d));
            prop_assert!(repr.header_len() <= 60);
            let mut a = vec![0u8; repr.buffer_len()];
            repr.emit(&mut Packet::new_unchecked(&mut a[..]), &s, &d, |p| p.fill(0x5a));
            let parsed = Repr::parse(&Packet::new_checked(&a[..]).unwrap(), &s, &d).unwrap();
            let mut b = vec![0u8; parsed.buffer_len()];
            parsed.emit(&mut Packet::new_unchecked(&mut b[..]), &s, &d, |p| p.fill(0x5a));
            prop_assert_eq!(&a, &b);
            if repr.layout().1 == repr.sack_ranges.iter().flatten().count() {
                // Everything fitted: the parse is exact.
                prop_assert_eq!(parsed, repr);
            }
        }

        #[test]
        fn timestamps_and_sack_roundtrip(ts in any::<(u32, u32)>(), sack in proptest::collection::vec(any::<(u32, u32)>(), 0..=3),
                                         seq in any::<u32>(), ack in any::<u32>(), payload_len in 0usize..50) {
            // The layout a timestamps connection sends on nearly every segment (the
            // parser's fast path): NOP NOP TS, then NOP NOP SACK with 0..=3 blocks.
            let mut repr = Repr::new(49152, 80, Control::None, SeqNumber::from_u32(seq), 1000);
            repr.ack_number = Some(SeqNumber::from_u32(ack));
            repr.timestamp = Some(ts);
            for (slot, r) in repr.sack_ranges.iter_mut().zip(&sack) { *slot = Some(*r); }
            repr.payload_len = payload_len;
            let mut a = vec![0u8; repr.buffer_len()];
            repr.emit(&mut Packet::new_unchecked(&mut a[..]), &SRC, &DST, |p| p.fill(7));
            prop_assert_eq!(a.len(), HEADER_LEN + 12 + if sack.is_empty() { 0 } else { 4 + 8 * sack.len() } + payload_len);
            prop_assert_eq!(Repr::parse(&Packet::new_checked(&a[..]).unwrap(), &SRC, &DST).unwrap(), repr);
        }

        #[test]
        fn emit_append_equals_emit(repr in arb_repr(), s in any::<u32>(), d in any::<u32>(),
                                   data in proptest::collection::vec(any::<u8>(), 0..3000), prefix in 0usize..40) {
            let (s, d) = (Address::from(s), Address::from(d));
            let repr = Repr { payload_len: data.len(), ..repr };
            for (payload, copy) in [(Payload::Bytes(&data), data.clone()), (Payload::Zeros(data.len()), vec![0; data.len()])] {
                // `emit` over a buffer already holding the payload, checksum by
                // `fill_checksum` over the whole segment.
                let mut want = vec![0u8; repr.header_len()];
                want.extend_from_slice(&copy);
                repr.emit(&mut Packet::new_unchecked(&mut want[..]), &s, &d, |_| ());
                // Appended after other octets to a buffer that held garbage.
                let mut frame = vec![0xeeu8; 200];
                frame.truncate(prefix);
                repr.emit_append(&mut frame, &s, &d, payload);
                prop_assert_eq!(&frame[..prefix], &vec![0xeeu8; prefix][..]);
                prop_assert_eq!(&frame[prefix..], &want[..]);
                prop_assert!(Packet::new_checked(&frame[prefix..]).unwrap().verify_checksum(&s, &d));
                // At an offset of a buffer that held garbage and was cut short (`start`
                // past its length, or before it): the octets kept are untouched, the
                // ones it grew by before `start` are zeros.
                let start = 34;
                let mut frame = vec![0xeeu8; 3100];
                frame.truncate(prefix);
                repr.emit_at(&mut frame, start, &s, &d, payload);
                let kept = prefix.min(start);
                prop_assert_eq!(&frame[..kept], &vec![0xeeu8; kept][..]);
                prop_assert_eq!(&frame[kept..start], &vec![0u8; start - kept][..]);
                prop_assert_eq!(&frame[start..], &want[..]);
            }
        }

        #[test]
        fn parse_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..80)) {
            if let Ok(p) = Packet::new_checked(&bytes[..]) {
                let _ = Repr::parse(&p, &SRC, &DST);
                for o in OptionIter::new(p.options()) { let _ = o; }
            }
        }
    }
}
