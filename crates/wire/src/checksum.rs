//! The Internet checksum: RFC 791 §3.1, RFC 1071 (computation), RFC 1624 (update).

/// Adds `data` into a 32-bit one's-complement accumulator, 16 bits at a time, big-endian;
/// an odd final byte is padded with zero on the right (RFC 1071 §4.1).
///
/// Long inputs are summed 32 bits at a time into a 64-bit accumulator and folded back
/// (RFC 1071 §2(B): the sum may be computed in any word size and folded, since
/// 2^16 ≡ 1 mod 2^16 − 1); the folded value is the same one's-complement sum, and for
/// any input with a non-zero byte the same 16-bit result as the 16-bit loop.
pub fn accumulate(acc: u32, data: &[u8]) -> u32 {
    let mut wide = u64::from(acc);
    let mut words = data.chunks_exact(4);
    for w in &mut words {
        wide += u64::from(u32::from_be_bytes([w[0], w[1], w[2], w[3]]));
    }
    let rest = words.remainder();
    let mut pairs = rest.chunks_exact(2);
    for pair in &mut pairs {
        wide += u64::from(u16::from_be_bytes([pair[0], pair[1]]));
    }
    if let [last] = pairs.remainder() {
        wide += u64::from(*last) << 8;
    }
    // Fold 64 → 32 bits keeping the one's-complement value (the callers keep adding
    // to a u32 and fold at the end).
    while wide >> 32 != 0 {
        wide = (wide & 0xffff_ffff) + (wide >> 32);
    }
    let folded = wide as u32;
    // Leave room for the callers' further additions, as the 16-bit loop did.
    if folded > 0xffff_0000 {
        (folded & 0xffff) + (folded >> 16)
    } else {
        folded
    }
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
    fn wide_sum_equals_the_16_bit_loop() {
        let reference = |data: &[u8]| {
            let mut acc: u64 = 0;
            for pair in data.chunks(2) {
                acc += u64::from(u16::from_be_bytes([pair[0], *pair.get(1).unwrap_or(&0)]));
            }
            while acc >> 16 != 0 {
                acc = (acc & 0xffff) + (acc >> 16);
            }
            acc as u16
        };
        let mut x: u32 = 12345;
        for len in [0usize, 1, 2, 3, 4, 5, 7, 8, 20, 1447, 1448, 1500, 9000, 65535] {
            let data: Vec<u8> = (0..len)
                .map(|_| {
                    x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
                    (x >> 16) as u8
                })
                .collect();
            assert_eq!(sum(&data), reference(&data), "length {len}");
            let ff = vec![0xffu8; len];
            assert_eq!(sum(&ff), reference(&ff), "all ones, length {len}");
        }
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
