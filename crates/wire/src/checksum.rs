//! The Internet checksum: RFC 791 §3.1, RFC 1071 (computation), RFC 1624 (update).

/// Adds `data` into a 32-bit one's-complement accumulator, 16 bits at a time, big-endian;
/// an odd final byte is padded with zero on the right (RFC 1071 §4.1).
///
/// Long inputs are summed 64 bits at a time into 128-bit lanes and folded back
/// (RFC 1071 §2(B): the sum may be computed in any word size and folded, since
/// 2^16 ≡ 1 mod 2^16 − 1). The words are read little-endian, which needs no byte swap
/// and keeps the lanes independent; RFC 1071 §2(B) "byte order independence":
/// the little-endian sum is the big-endian one with its two octets swapped, so the
/// folded sum is swapped back once at the end. The folded value is the same
/// one's-complement sum, and for any input with a non-zero byte the same 16-bit result
/// as the 16-bit loop.
#[inline]
pub fn accumulate(acc: u32, data: &[u8]) -> u32 {
    let (whole, tail) = data.split_at(data.len() / BLOCK * BLOCK);
    let mut little = if whole.is_empty() { 0 } else { u64::from(sum_blocks(whole)) };
    let mut words = tail.chunks_exact(4);
    for w in &mut words {
        little += u64::from(u32::from_le_bytes([w[0], w[1], w[2], w[3]]));
    }
    let mut wide = u64::from(acc) + u64::from(fold64(little).swap_bytes());
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

/// Octets summed a block at a time by [`sum_blocks`].
const BLOCK: usize = 32;

/// The one's-complement sum of `blocks` (a multiple of [`BLOCK`] octets) read as
/// little-endian words, folded to 16 bits (zero only when every octet is zero).
///
/// With AVX2 (detected at run time) 32-bit words are added into eight 64-bit lanes,
/// four at once; otherwise [`sum_blocks_scalar`]. Both give the same folded sum
/// (RFC 1071 §2(B): any word size, folded; §2(A)/(C): any order, lanes in parallel).
#[inline]
fn sum_blocks(blocks: &[u8]) -> u16 {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") {
        // SAFETY: `sum_blocks_avx2` needs only AVX2, which the CPU has (checked just
        // above); it is safe code compiled to use those instructions.
        #[allow(unsafe_code)]
        return unsafe { sum_blocks_avx2(blocks) };
    }
    sum_blocks_scalar(blocks)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn sum_blocks_avx2(blocks: &[u8]) -> u16 {
    // A 32-bit word zero-extended into a 64-bit lane, and the compiler turns the eight lanes into two 4×64-bit vector adds per block.
    let mut lanes = [0u64; BLOCK / 4];
    for block in blocks.chunks_exact(BLOCK) {
        for (lane, w) in lanes.iter_mut().zip(block.chunks_exact(4)) {
            *lane += u64::from(u32::from_le_bytes([w[0], w[1], w[2], w[3]]));
        }
    }
    // Each lane is below 2^32 per block, so their sum fits for any slice below 2^29 blocks.
    fold64(lanes.iter().sum())
}

/// [`sum_blocks`] without vector instructions: independent lanes (no carry chain
/// between them), each adding 64-bit words into 128 bits: an add and an
/// add-with-carry per 8 octets, no overflow below 2^64 words.
fn sum_blocks_scalar(blocks: &[u8]) -> u16 {
    const LANES: usize = BLOCK / 8;
    let mut lanes = [0u128; LANES];
    for block in blocks.chunks_exact(BLOCK) {
        for (lane, w) in lanes.iter_mut().zip(block.chunks_exact(8)) {
            *lane += u128::from(u64::from_le_bytes([w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7]]));
        }
    }
    fold64(lanes.iter().map(|&l| u64::from(fold128(l))).sum())
}

/// Folds a sum to 16 bits with end-around carries; zero only when `v` is zero.
#[inline]
fn fold128(v: u128) -> u16 {
    // 2^64 ≡ 1 (mod 2^16 − 1); the sum of the halves is below 2^65.
    let v = (v & u128::from(u64::MAX)) + (v >> 64);
    fold64((v as u64 & 0xffff_ffff) + (v >> 32) as u64)
}

/// As [`fold128`], for 64 bits.
#[inline]
fn fold64(v: u64) -> u16 {
    let mut v = (v & 0xffff_ffff) + (v >> 32);
    while v >> 16 != 0 {
        v = (v & 0xffff) + (v >> 16);
    }
    v as u16
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

/// [`sum`] of a slice whose length is a multiple of 4 octets (an IPv4 header: IHL
/// counts 32-bit words, RFC 791 §3.1), specialised for that case: every 32-bit word is
/// added into 64 bits, with no tail and no vector path, and folded once
/// (RFC 1071 §2(B): any word size, folded). Equal to `sum(data)`: both are the
/// end-around-carry fold of the same one's-complement sum, zero only when every octet
/// is. Panics in debug builds if the length is not a multiple of 4.
#[inline]
pub fn sum_words32(data: &[u8]) -> u16 {
    debug_assert_eq!(data.len() % 4, 0, "sum_words32 takes whole 32-bit words");
    let mut wide: u64 = 0;
    for w in data.chunks_exact(4) {
        wide += u64::from(u32::from_be_bytes([w[0], w[1], w[2], w[3]]));
    }
    // Below 2^32 words the sum of the halves fits 33 bits; three folds reach 16 bits.
    wide = (wide & 0xffff_ffff) + (wide >> 32);
    wide = (wide & 0xffff) + (wide >> 16);
    wide = (wide & 0xffff) + (wide >> 16);
    wide = (wide & 0xffff) + (wide >> 16);
    wide as u16
}

/// The checksum to put in a header: the complement of the one's-complement sum.
pub fn checksum(data: &[u8]) -> u16 {
    !sum(data)
}

/// Sum of the IPv4 pseudo-header used by UDP and TCP (RFC 768, RFC 9293 §3.1).
pub fn pseudo_header(src: [u8; 4], dst: [u8; 4], protocol: u8, length: u16) -> u32 {
    let word = |b: [u8; 4]| u32::from(u16::from_be_bytes([b[0], b[1]])) + u32::from(u16::from_be_bytes([b[2], b[3]]));
    word(src) + word(dst) + u32::from(protocol) + u32::from(length)
}

#[cfg(test)]
mod test {
    use super::*;

    /// `len` pseudo-random octets from a linear congruential generator with state `x`
    /// (the C standard's example constants): reproducible test data, no crate needed.
    fn lcg_bytes(x: &mut u32, len: usize) -> Vec<u8> {
        (0..len)
            .map(|_| {
                *x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
                (*x >> 16) as u8
            })
            .collect()
    }

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
        for len in
            [0usize, 1, 2, 3, 4, 5, 7, 8, 20, 31, 32, 33, 34, 35, 36, 63, 64, 65, 66, 1447, 1448, 1500, 9000, 65535]
        {
            let data = lcg_bytes(&mut x, len);
            assert_eq!(sum(&data), reference(&data), "length {len}");
            let ff = vec![0xffu8; len];
            assert_eq!(sum(&ff), reference(&ff), "all ones, length {len}");
            // Carried in from an earlier call (a pseudo-header, RFC 1624's ~HC), and a
            // sum split at an odd offset is not: the split must fall on a 16-bit word.
            let (head, tail) = data.split_at(len / 4 * 2);
            let mut with_head = reference(head).to_be_bytes().to_vec();
            with_head.extend_from_slice(tail);
            assert_eq!(fold(accumulate(accumulate(0, head), tail)), reference(&with_head), "split, length {len}");
        }
    }

    #[test]
    fn vector_and_scalar_block_sums_agree() {
        // Whichever path `sum_blocks` takes on this CPU, the scalar one must agree.
        let mut x: u32 = 777;
        for blocks in [1usize, 2, 3, 46, 47, 281, 2048] {
            let data = lcg_bytes(&mut x, blocks * BLOCK);
            assert_eq!(sum_blocks(&data), sum_blocks_scalar(&data), "{blocks} blocks");
            let ff = vec![0xffu8; blocks * BLOCK];
            assert_eq!(sum_blocks(&ff), sum_blocks_scalar(&ff), "all ones, {blocks} blocks");
        }
    }

    #[test]
    fn pseudo_header_sums_its_12_octets() {
        // RFC 9293 §3.1: source, destination, zero, PTCL, TCP length, as 16-bit words.
        let (src, dst) = ([192, 168, 255, 1], [10, 0, 0, 254]);
        let mut bytes = [0u8; 12];
        bytes[..4].copy_from_slice(&src);
        bytes[4..8].copy_from_slice(&dst);
        bytes[9] = 6;
        bytes[10..].copy_from_slice(&1480u16.to_be_bytes());
        assert_eq!(fold(pseudo_header(src, dst, 6, 1480)), sum(&bytes));
    }

    #[test]
    fn word32_sum_equals_the_general_sum() {
        // Every IPv4 header length (20..=60 octets, RFC 791 §3.1 IHL 5..=15), random
        // and all-ones and all-zero contents, against the general routine above.
        let mut x: u32 = 4242;
        for len in (0..=60).step_by(4) {
            let data = lcg_bytes(&mut x, len);
            assert_eq!(sum_words32(&data), sum(&data), "length {len}");
            for fill in [0x00u8, 0xff] {
                let same = vec![fill; len];
                assert_eq!(sum_words32(&same), sum(&same), "{fill:#x} × {len}");
            }
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
