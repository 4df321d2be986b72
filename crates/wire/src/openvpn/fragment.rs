//! The `--fragment` header and the splitting of `fragment.c` (`fragment_outgoing`).

use super::*;

crate::enum_with_unknown! {
    /// `fragment.h`: the fragment type, bits 0–1 of the fragment header.
    pub enum FragmentType(u8) {
        /// FRAG_WHOLE: not fragmented.
        Whole = 0,
        /// FRAG_YES_NOTLAST: a fragment, not the last.
        NotLast = 1,
        /// FRAG_YES_LAST: the last fragment; carries the maximum fragment size.
        Last = 2,
        /// FRAG_TEST: reserved for MTU tests, not implemented by OpenVPN.
        Test = 3,
    }
}

/// `fragment.h`: the 32-bit `--fragment` header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FragmentHeader {
    pub kind: FragmentType,
    /// FRAG_SEQ_ID: the datagram's sequence id, shared by its fragments (8 bits).
    pub seq_id: u8,
    /// FRAG_ID: this fragment's index, 0–31 (5 bits; MAX_FRAGS is 32).
    pub frag_id: u8,
    /// FRAG_SIZE: for `Last`, the maximum fragment size, a multiple of 4 below 65,536
    /// (sent divided by 4 in 14 bits); 0 otherwise.
    pub max_frag_size: u16,
}

/// `fragment.h` FRAG_* masks and shifts.
mod frag {
    pub const TYPE_MASK: u32 = 0x3;
    pub const SEQ_ID_MASK: u32 = 0xff;
    pub const SEQ_ID_SHIFT: u32 = 2;
    pub const ID_MASK: u32 = 0x1f;
    pub const ID_SHIFT: u32 = 10;
    pub const SIZE_MASK: u32 = 0x3fff;
    pub const SIZE_SHIFT: u32 = 15;
    pub const SIZE_ROUND_SHIFT: u32 = 2;
    /// MAX_FRAGS.
    pub const MAX_FRAGS: usize = 32;
}

impl FragmentHeader {
    /// FRAG_WHOLE with every other bit zero, as `fragment_outgoing` sends it.
    pub const WHOLE: FragmentHeader =
        FragmentHeader { kind: FragmentType::Whole, seq_id: 0, frag_id: 0, max_frag_size: 0 };

    /// Decodes the header from its 32-bit value; `fragment_incoming` rejects a whole
    /// packet with sequence or fragment bits ("spurious FRAG_WHOLE flags"), a size not a
    /// multiple of 4 cannot be sent, and FRAG_TEST is not implemented (`Unsupported`).
    pub fn from_u32(value: u32) -> Result<FragmentHeader> {
        let kind = FragmentType::from((value & frag::TYPE_MASK) as u8);
        let seq_id = ((value >> frag::SEQ_ID_SHIFT) & frag::SEQ_ID_MASK) as u8;
        let frag_id = ((value >> frag::ID_SHIFT) & frag::ID_MASK) as u8;
        let max_frag_size = match kind {
            FragmentType::Last => (((value >> frag::SIZE_SHIFT) & frag::SIZE_MASK) << frag::SIZE_ROUND_SHIFT) as u16,
            _ => 0,
        };
        match kind {
            FragmentType::Whole if seq_id != 0 || frag_id != 0 => Err(Error::Malformed),
            FragmentType::Test | FragmentType::Unknown(_) => Err(Error::Unsupported),
            _ => Ok(FragmentHeader { kind, seq_id, frag_id, max_frag_size }),
        }
    }

    /// Encodes the header as `fragment_prepend_flags` does.
    pub fn to_u32(self) -> u32 {
        let mut value = (u32::from(u8::from(self.kind)) & frag::TYPE_MASK)
            | ((u32::from(self.seq_id) & frag::SEQ_ID_MASK) << frag::SEQ_ID_SHIFT)
            | ((u32::from(self.frag_id) & frag::ID_MASK) << frag::ID_SHIFT);
        if self.kind == FragmentType::Last {
            value |= ((u32::from(self.max_frag_size) >> frag::SIZE_ROUND_SHIFT) & frag::SIZE_MASK) << frag::SIZE_SHIFT;
        }
        value
    }

    pub fn parse(data: &[u8]) -> Result<FragmentHeader> {
        match data {
            [a, b, c, d, ..] => FragmentHeader::from_u32(u32::from_be_bytes([*a, *b, *c, *d])),
            _ => Err(Error::Truncated),
        }
    }

    pub fn emit(&self, buf: &mut [u8]) {
        buf[..FRAGMENT_HEADER_LEN].copy_from_slice(&self.to_u32().to_be_bytes());
    }
}

/// Splits a datagram of `len` octets (already compression-framed) into `--fragment`
/// pieces no longer than `max_frag_size`, as `fragment_outgoing` does: one `Whole` piece
/// when it fits, else pieces of `optimal_fragment_size` (a multiple of 4 that evens out
/// the last piece), numbered from 0, the last carrying that size. Returns each piece's
/// header and byte range; `Malformed` when more than 32 pieces would be needed or
/// `max_frag_size` is below 4.
pub fn split_fragments(seq_id: u8, max_frag_size: usize, len: usize) -> Result<Vec<(FragmentHeader, Field)>> {
    if len <= max_frag_size {
        return Ok(vec![(FragmentHeader::WHOLE, 0..len)]);
    }
    let aligned = max_frag_size & !3;
    if aligned == 0 || aligned > usize::from(u16::MAX) {
        return Err(Error::Malformed);
    }
    // fragment.c optimal_fragment_size.
    let (div, rem) = (len / aligned, len % aligned);
    let size = if div > 0 && rem > 0 && rem < aligned * 3 / 4 {
        aligned.min((max_frag_size - (max_frag_size - rem) / (div + 1) + 3) & !3)
    } else {
        aligned
    };
    if len > size * frag::MAX_FRAGS {
        return Err(Error::Malformed);
    }
    let mut pieces = Vec::new();
    let mut at = 0;
    let mut frag_id = 0u8;
    while at < len {
        let end = (at + size).min(len);
        let last = end == len;
        let header = FragmentHeader {
            kind: if last { FragmentType::Last } else { FragmentType::NotLast },
            seq_id,
            frag_id,
            max_frag_size: if last { size as u16 } else { 0 },
        };
        pieces.push((header, at..end));
        at = end;
        frag_id += 1;
    }
    Ok(pieces)
}
