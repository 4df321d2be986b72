//! Fragmentation (RFC 791 §2.3, §3.2): sizes, counts, and the fragmenter.

use super::*;

/// Why a datagram could not be fragmented.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FragmentError {
    /// The input is not a valid IPv4 packet (or its options are malformed).
    Parse(Error),
    /// DF is set and the datagram exceeds the MTU: the caller drops it and sends ICMP
    /// Destination Unreachable code 4 with this MTU (RFC 791 §3.2, RFC 1191 §4).
    DontFragment { mtu: usize },
    /// The MTU leaves no room for 8 octets of data after a header (below RFC 791's 68
    /// for large options).
    MtuTooSmall,
}

impl From<Error> for FragmentError {
    fn from(e: Error) -> Self {
        FragmentError::Parse(e)
    }
}

impl fmt::Display for FragmentError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FragmentError::Parse(e) => write!(f, "cannot fragment: {e}"),
            FragmentError::DontFragment { mtu } => write!(f, "DF set and datagram exceeds MTU {mtu}"),
            FragmentError::MtuTooSmall => write!(f, "MTU too small to carry 8 octets of data"),
        }
    }
}

impl std::error::Error for FragmentError {}

/// Data octets per fragment that fit `mtu` after `header_len`, rounded down to 8
/// (RFC 791 §3.2: NFB, the number of fragment blocks). Zero when nothing fits.
pub fn max_fragment_payload(header_len: usize, mtu: usize) -> usize {
    mtu.saturating_sub(header_len) & !(FRAG_UNIT - 1)
}

/// The data length of each fragment when `payload_len` octets are sent over `mtu` with a
/// first header of `first_header_len` and later headers of `rest_header_len` (only
/// copied options, RFC 791 §3.2). A datagram that fits gives one entry. `None` when the
/// MTU cannot carry 8 octets of data.
pub fn fragment_sizes(
    payload_len: usize,
    first_header_len: usize,
    rest_header_len: usize,
    mtu: usize,
) -> Option<Vec<usize>> {
    if first_header_len + payload_len <= mtu {
        return Some(vec![payload_len]);
    }
    let first = max_fragment_payload(first_header_len, mtu);
    let rest = max_fragment_payload(rest_header_len, mtu);
    if first == 0 || rest == 0 {
        return None;
    }
    let mut sizes = vec![first];
    let mut left = payload_len - first;
    while left > 0 {
        let n = if rest_header_len + left <= mtu { left } else { rest };
        sizes.push(n);
        left -= n;
    }
    Some(sizes)
}

/// How many fragments `payload_len` octets of data become over `mtu` when every fragment
/// has a `header_len` header; 1 when it fits, `None` when the MTU cannot carry 8 octets.
pub fn fragment_count(payload_len: usize, header_len: usize, mtu: usize) -> Option<usize> {
    if header_len + payload_len <= mtu {
        return Some(1);
    }
    let per = max_fragment_payload(header_len, mtu);
    if per == 0 {
        return None;
    }
    Some(payload_len.div_ceil(per))
}

/// Splits the datagram `packet` (a whole IPv4 packet, possibly itself a fragment) into
/// fragments of at most `mtu` octets per RFC 791 §3.2 and hands each to `out`, in
/// order. Returns the number of fragments.
///
/// * A datagram that fits is passed through unchanged (one call).
/// * With DF set and too long: `Err(DontFragment)`, nothing emitted.
/// * Every fragment but the last carries a multiple of 8 data octets and MF; the last
///   keeps the input's MF (so re-fragmenting a fragment is correct). Offsets add to the
///   input's offset.
/// * The first fragment keeps all options; later ones only the copied options
///   (RFC 791 §3.1 copied flag), padded to a word.
/// * Each fragment's Total Length and checksum are recomputed.
pub fn fragment(packet: &[u8], mtu: usize, mut out: impl FnMut(&[u8])) -> core::result::Result<usize, FragmentError> {
    let view = Packet::new_checked(packet)?;
    let repr = Repr::parse(&view)?;
    let payload = view.payload();
    if repr.buffer_len() <= mtu {
        out(&packet[..repr.buffer_len()]);
        return Ok(1);
    }
    if repr.dont_frag {
        return Err(FragmentError::DontFragment { mtu });
    }
    let rest_options = repr.options.copied()?;
    let rest_header_len = HEADER_LEN + rest_options.padded_len();
    let sizes =
        fragment_sizes(payload.len(), repr.header_len(), rest_header_len, mtu).ok_or(FragmentError::MtuTooSmall)?;

    let mut buf = vec![0u8; mtu];
    let mut offset = 0usize;
    let count = sizes.len();
    for (i, &size) in sizes.iter().enumerate() {
        let last = i + 1 == count;
        let frag = Repr {
            payload_len: size,
            more_frags: if last { repr.more_frags } else { true },
            frag_offset: repr.frag_offset + (offset / FRAG_UNIT) as u16,
            options: if i == 0 { repr.options } else { rest_options },
            ..repr
        };
        let len = frag.buffer_len();
        let header_len = frag.header_len();
        frag.emit(&mut Packet::new_unchecked(&mut buf[..len]));
        buf[header_len..len].copy_from_slice(&payload[offset..offset + size]);
        out(&buf[..len]);
        offset += size;
    }
    Ok(count)
}
