//! The Internet checksum: RFC 791 §3.1, RFC 1071 (computation), RFC 1624 (update).

/// Adds `data` into a 32-bit one's-complement accumulator, 16 bits at a time, big-endian;
/// an odd final byte is padded with zero on the right (RFC 1071 §4.1).
pub fn accumulate(mut acc: u32, data: &[u8]) -> u32 {
    let mut chunks = data.chunks_exact(2);
    for pair in &mut chunks {
        acc += u32::from(u16::from_be_bytes([pair[0], pair[1]]));
    }
    if let [last] = chunks.remainder() {
        acc += u32::from(*last) << 8;
    }
    acc
}

/// Folds the carries of an accumulator back into 16 bits (end-around carry).
pub fn fold(mut acc: u32) -> u16 {
    while acc >> 16 != 0 {
        acc = (acc & 0xffff) + (acc >> 16);
    }
    acc as u16
}

/// The one's-complement sum of `data`, not yet complemented.
pub fn sum(data: &[u8]) -> u16 {
    fold(accumulate(0, data))
}

/// The checksum to put in a header: the complement of the one's-complement sum.
pub fn checksum(data: &[u8]) -> u16 {
    !sum(data)
}

/// Sum of the IPv4 pseudo-header used by UDP and TCP (RFC 768, RFC 9293 §3.1).
pub fn pseudo_header(src: [u8; 4], dst: [u8; 4], protocol: u8, length: u16) -> u32 {
    let mut acc = accumulate(0, &src);
    acc = accumulate(acc, &dst);
    acc += u32::from(protocol);
    acc += u32::from(length);
    acc
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn rfc1071_example() {
        // RFC 1071 §3 worked example: 00 01 f2 03 f4 f5 f6 f7 sums to ddf2.
        let data = [0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7];
        assert_eq!(sum(&data), 0xddf2);
        assert_eq!(checksum(&data), !0xddf2);
    }

    #[test]
    fn odd_length_pads_right() {
        assert_eq!(sum(&[0xab]), 0xab00);
    }

    #[test]
    fn verifying_a_checksummed_buffer_gives_zero() {
        let mut data = vec![0x45, 0x00, 0x00, 0x1c, 0x12, 0x34, 0x40, 0x00, 0x40, 0x11, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2];
        let c = checksum(&data);
        data[10..12].copy_from_slice(&c.to_be_bytes());
        assert_eq!(checksum(&data), 0);
    }
}
