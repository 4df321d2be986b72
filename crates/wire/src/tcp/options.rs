//! Options (RFC 9293 §3.2, RFC 7323, RFC 2018): kinds, a borrowed option, the raw
//! options a `Repr` keeps, and the iterator and writer over an options area.

use super::*;

/// Appends octets to an options area (see `Repr::emit_options`).
pub(super) struct OptionWriter<'a> {
    pub(super) out: &'a mut [u8],
    pub(super) at: usize,
}

impl OptionWriter<'_> {
    #[inline]
    pub(super) fn put(&mut self, bytes: &[u8]) {
        self.out[self.at..self.at + bytes.len()].copy_from_slice(bytes);
        self.at += bytes.len();
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
