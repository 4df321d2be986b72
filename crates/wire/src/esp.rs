//! IP Encapsulating Security Payload, ESP (RFC 4303).
//!
//! Standards a reader must know:
//!
//! * RFC 4303 §2 (packet format): SPI (4 bytes), sequence number (4), then the payload
//!   data, which starts with the cipher's IV, then padding, pad length (1), next header
//!   (1), all encrypted, then the ICV. §2.4: the plaintext from payload to next header
//!   is a multiple of the cipher block size and of 4 bytes; default padding bytes are
//!   1, 2, 3, ... §3.3.3: sequence numbers. §3.1.1/§3.1.2: transport and tunnel mode.
//! * RFC 4301 §4.1 (modes), §5.1.2.1 (tunnel outer header).
//! * The algorithms of [`crate::ipsec`]: RFC 2410, 2451, 3602, 4106 (ciphers) and RFC
//!   2403, 2404, 4868 (integrity). With a separate integrity algorithm the ICV covers
//!   SPI, sequence, IV and ciphertext (encrypt-then-MAC, RFC 4303 §3.3.4); with AES-GCM
//!   the SPI and sequence are the AAD (RFC 4106 §5).
//!
//! [`Packet`] and [`Repr`] view the clear header only: the rest can only be read with the
//! SA. [`seal`] and [`open`] build and check a whole ESP packet; [`encapsulate_transport`],
//! [`encapsulate_tunnel`] and [`decapsulate`] do the same around a whole IPv4 packet.
//! Extended sequence numbers and TFC padding are not modelled.

use crate::ipsec::{ip, Mode, OuterHeader, SecurityAssociation};
use crate::{Error, IpProtocol, Result};

/// RFC 4303 §2: SPI and sequence number, the part sent in the clear.
pub const HEADER_LEN: usize = 8;
/// RFC 4303 §2: pad length and next header, the fixed part of the trailer.
pub const TRAILER_LEN: usize = 2;
/// RFC 4303 §2.4: the pad length field is one byte.
pub const MAX_PAD_LEN: usize = 255;
/// RFC 4303 §2.6: next header 59 marks a dummy packet, to be dropped on receipt.
pub const NO_NEXT_HEADER: u8 = 59;

/// Byte ranges of the clear ESP header (RFC 4303 §2).
pub mod field {
    use crate::{Field, Rest};

    /// RFC 4303 §2.1: Security Parameters Index.
    pub const SPI: Field = 0..4;
    /// RFC 4303 §2.2: sequence number.
    pub const SEQ: Field = 4..8;
    /// RFC 4303 §2.3: payload data (IV and ciphertext), padding, trailer and ICV.
    pub const PAYLOAD: Rest = 8..;
}

/// A read/write view of an ESP packet's bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Packet<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Packet<T> {
    /// Wraps `buffer` without checking its length.
    pub const fn new_unchecked(buffer: T) -> Packet<T> {
        Packet { buffer }
    }

    /// Wraps `buffer` after checking it holds the clear header.
    pub fn new_checked(buffer: T) -> Result<Packet<T>> {
        let packet = Self::new_unchecked(buffer);
        packet.check_len()?;
        Ok(packet)
    }

    /// `Truncated` when shorter than the 8-byte header.
    pub fn check_len(&self) -> Result<()> {
        if self.buffer.as_ref().len() < HEADER_LEN {
            Err(Error::Truncated)
        } else {
            Ok(())
        }
    }

    pub fn into_inner(self) -> T {
        self.buffer
    }

    /// RFC 4303 §2.1.
    pub fn spi(&self) -> u32 {
        let b = &self.buffer.as_ref()[field::SPI];
        u32::from_be_bytes([b[0], b[1], b[2], b[3]])
    }

    /// RFC 4303 §2.2.
    pub fn seq_number(&self) -> u32 {
        let b = &self.buffer.as_ref()[field::SEQ];
        u32::from_be_bytes([b[0], b[1], b[2], b[3]])
    }

    /// Everything after the header: IV, ciphertext and ICV.
    pub fn payload(&self) -> &[u8] {
        &self.buffer.as_ref()[field::PAYLOAD]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    pub fn set_spi(&mut self, value: u32) {
        self.buffer.as_mut()[field::SPI].copy_from_slice(&value.to_be_bytes());
    }

    pub fn set_seq_number(&mut self, value: u32) {
        self.buffer.as_mut()[field::SEQ].copy_from_slice(&value.to_be_bytes());
    }

    pub fn payload_mut(&mut self) -> &mut [u8] {
        &mut self.buffer.as_mut()[field::PAYLOAD]
    }
}

/// The clear part of an ESP header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Repr {
    pub spi: u32,
    pub seq: u32,
}

impl Repr {
    pub fn parse<T: AsRef<[u8]> + ?Sized>(packet: &Packet<&T>) -> Result<Repr> {
        packet.check_len()?;
        Ok(Repr { spi: packet.spi(), seq: packet.seq_number() })
    }

    pub const fn header_len(&self) -> usize {
        HEADER_LEN
    }

    pub const fn buffer_len(&self) -> usize {
        HEADER_LEN
    }

    /// Writes the header; panics when the buffer is shorter than 8 bytes.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]> + ?Sized>(&self, packet: &mut Packet<&mut T>) {
        packet.set_spi(self.spi);
        packet.set_seq_number(self.seq);
    }
}

/// RFC 4303 §2.4: the padding bytes for `payload_len` bytes of payload, the fewest that
/// make payload + padding + 2 a multiple of [`SecurityAssociation::alignment`].
pub fn padding_len(sa: &SecurityAssociation, payload_len: usize) -> usize {
    let align = sa.alignment();
    (align - (payload_len + TRAILER_LEN) % align) % align
}

/// The bytes ESP adds to `payload_len` bytes (header, IV, padding, trailer, ICV).
/// The tunnel-mode outer IPv4 header is not counted: it is a layer of its own.
pub fn overhead(sa: &SecurityAssociation, payload_len: usize) -> usize {
    HEADER_LEN + sa.iv_len() + padding_len(sa, payload_len) + TRAILER_LEN + sa.icv_len()
}

/// The length of the ESP packet [`seal`] builds from `payload_len` bytes.
pub fn sealed_len(sa: &SecurityAssociation, payload_len: usize) -> usize {
    payload_len + overhead(sa, payload_len)
}

/// [`overhead`] as named fields, header first: spi, sequence, iv, padding, pad length,
/// next header, icv.
pub fn overhead_fields(sa: &SecurityAssociation, payload_len: usize) -> Vec<(&'static str, usize)> {
    vec![
        ("spi", field::SPI.len()),
        ("sequence", field::SEQ.len()),
        ("iv", sa.iv_len()),
        ("padding", padding_len(sa, payload_len)),
        ("pad length", 1),
        ("next header", 1),
        ("icv", sa.icv_len()),
    ]
}

/// The largest payload whose ESP packet fits in `room` bytes (e.g. MTU minus the IPv4
/// header in transport mode), or `None` when not even an empty one fits.
pub fn max_payload(sa: &SecurityAssociation, room: usize) -> Option<usize> {
    // The overhead varies with the padding by less than one alignment unit, so start
    // from the smallest overhead and step down.
    let fixed = HEADER_LEN + sa.iv_len() + TRAILER_LEN + sa.icv_len();
    let mut n = room.checked_sub(fixed)?;
    loop {
        if sealed_len(sa, n) <= room {
            return Some(n);
        }
        n = n.checked_sub(1)?;
    }
}

/// Builds a whole ESP packet (RFC 4303 §3.3) and appends it to `out`: header with
/// `sa.spi` and `sa.seq` (the caller advances it, [`SecurityAssociation::next_seq`]),
/// `iv` (the caller's: `sa.iv_len()` bytes, unpredictable for CBC (RFC 3602 §3), unique
/// for GCM (RFC 4106 §3.1)), the encrypted `payload` + default padding + pad length +
/// `next_header`, then the ICV.
///
/// Errors: `Malformed` when the SA's keys or `iv` have the wrong length; `Unsupported`
/// for HMAC with GCM.
pub fn seal(
    sa: &SecurityAssociation,
    next_header: IpProtocol,
    payload: &[u8],
    iv: &[u8],
    out: &mut Vec<u8>,
) -> Result<()> {
    sa.check()?;
    if iv.len() != sa.iv_len() {
        return Err(Error::Malformed);
    }
    let pad = padding_len(sa, payload.len());
    let start = out.len();
    let total = sealed_len(sa, payload.len());
    out.reserve(total);
    out.extend_from_slice(&sa.spi.to_be_bytes());
    out.extend_from_slice(&sa.seq.to_be_bytes());
    out.extend_from_slice(iv);
    let body = out.len();
    out.extend_from_slice(payload);
    // RFC 4303 §2.4: "the Padding bytes are initialized with a series of (unsigned,
    // 1-byte) integer values. The first padding byte ... is numbered 1".
    out.extend((1..=pad).map(|i| i as u8));
    out.push(pad as u8);
    out.push(u8::from(next_header));
    let body_end = out.len();
    out.resize(start + total, 0);
    let (head, rest) = out[start..].split_at_mut(body - start);
    let (body_bytes, icv) = rest.split_at_mut(body_end - body);
    sa.cipher.encrypt(&sa.enc_key, iv, &head[..HEADER_LEN], body_bytes, &mut icv[..sa.cipher.icv_len()])?;
    if !sa.cipher.is_aead() {
        // RFC 4303 §3.3.4: the ICV covers the ESP packet minus the ICV, after encryption.
        let covered = &out[start..body_end];
        let mut tag = vec![0u8; sa.auth.icv_len()];
        sa.auth.compute(&sa.auth_key, &[covered], &mut tag);
        out[body_end..].copy_from_slice(&tag);
    }
    Ok(())
}

/// Checks and decrypts a whole ESP packet built with `sa` (RFC 4303 §3.4) and returns its
/// next header and payload. The sequence number is not checked against a replay window:
/// read it with [`Packet::seq_number`].
///
/// Errors: `Truncated` when shorter than the SA's minimum; `Malformed` for another SPI, a
/// ciphertext that is not whole blocks, or padding that is not 1, 2, 3, ...;
/// `Checksum` when the ICV does not verify (checked before decrypting).
pub fn open(sa: &SecurityAssociation, bytes: &[u8]) -> Result<(IpProtocol, Vec<u8>)> {
    sa.check()?;
    let packet = Packet::new_checked(bytes)?;
    if packet.spi() != sa.spi {
        return Err(Error::Malformed);
    }
    let iv_end = HEADER_LEN + sa.iv_len();
    if bytes.len() < iv_end + TRAILER_LEN + sa.icv_len() {
        return Err(Error::Truncated);
    }
    let icv_start = bytes.len() - sa.icv_len();
    if !(icv_start - iv_end).is_multiple_of(sa.block_size()) {
        return Err(Error::Malformed);
    }
    let iv = &bytes[HEADER_LEN..iv_end];
    let mut body = bytes[iv_end..icv_start].to_vec();
    if sa.cipher.is_aead() {
        sa.cipher.decrypt(&sa.enc_key, iv, &bytes[..HEADER_LEN], &mut body, &bytes[icv_start..])?;
    } else {
        sa.auth.verify(&sa.auth_key, &[&bytes[..icv_start]], &bytes[icv_start..])?;
        sa.cipher.decrypt(&sa.enc_key, iv, &[], &mut body, &[])?;
    }
    let n = body.len();
    let next_header = body[n - 1];
    let pad = usize::from(body[n - 2]);
    if pad + TRAILER_LEN > n {
        return Err(Error::Malformed);
    }
    let payload_len = n - TRAILER_LEN - pad;
    // RFC 4303 §2.4: a receiver SHOULD check the default padding values.
    if body[payload_len..n - TRAILER_LEN].iter().enumerate().any(|(i, &b)| usize::from(b) != i + 1) {
        return Err(Error::Malformed);
    }
    body.truncate(payload_len);
    Ok((IpProtocol::from(next_header), body))
}

/// Transport mode over IPv4 (RFC 4303 §3.1.1): takes a whole IPv4 packet, puts ESP between
/// its header and its payload, and appends the result to `out` (protocol 50, total length
/// and header checksum updated; IPv4 options are kept).
///
/// Errors: those of [`ip`] parsing (`Truncated`, `Malformed`) and of [`seal`];
/// `Unsupported` for a fragment (transport mode applies to whole datagrams only) or a
/// result past 65,535 bytes.
pub fn encapsulate_transport(sa: &SecurityAssociation, ip_packet: &[u8], iv: &[u8], out: &mut Vec<u8>) -> Result<()> {
    let (ihl, total) = ip::lengths(ip_packet)?;
    if ip::is_fragment(ip_packet) {
        return Err(Error::Unsupported);
    }
    let start = out.len();
    out.extend_from_slice(&ip_packet[..ihl]);
    let protocol = IpProtocol::from(ip_packet[ip::PROTOCOL]);
    if let Err(e) = seal(sa, protocol, &ip_packet[ihl..total], iv, out) {
        out.truncate(start);
        return Err(e);
    }
    let new_total = out.len() - start;
    let header = &mut out[start..start + ihl];
    if let Err(e) = ip::set_total_len(header, new_total) {
        out.truncate(start);
        return Err(e);
    }
    header[ip::PROTOCOL] = IpProtocol::Esp.into();
    ip::fill_checksum(header);
    Ok(())
}

/// Tunnel mode over IPv4 (RFC 4303 §3.1.2, RFC 4301 §5.1.2.1): seals the whole
/// `inner_packet` (next header 4) behind a new 20-byte outer header and appends both to
/// `out`.
///
/// Errors: as [`encapsulate_transport`], fragments excepted (a tunnel carries them).
pub fn encapsulate_tunnel(
    sa: &SecurityAssociation,
    outer: &OuterHeader,
    inner_packet: &[u8],
    iv: &[u8],
    out: &mut Vec<u8>,
) -> Result<()> {
    let (_, total) = ip::lengths(inner_packet)?;
    let inner = &inner_packet[..total];
    let esp_len = sealed_len(sa, total);
    let start = out.len();
    ip::emit_outer(outer, inner, IpProtocol::Esp.into(), esp_len, out)?;
    if let Err(e) = seal(sa, IpProtocol::IpIp, inner, iv, out) {
        out.truncate(start);
        return Err(e);
    }
    Ok(())
}

/// The inverse of [`encapsulate_transport`] and [`encapsulate_tunnel`], by `sa.mode`:
/// checks and decrypts the ESP in `ip_packet` and appends to `out` the original packet
/// (transport: the received header with protocol, length and checksum restored; tunnel:
/// the inner packet). Returns the ESP next header.
///
/// Errors: those of [`open`]; `Malformed` when the outer protocol is not ESP, or when a
/// tunnel-mode SA finds a next header other than IPv4 (4); `Unsupported` for a dummy
/// packet (next header 59, RFC 4303 §2.6), which the caller drops.
pub fn decapsulate(sa: &SecurityAssociation, ip_packet: &[u8], out: &mut Vec<u8>) -> Result<IpProtocol> {
    let (ihl, total) = ip::lengths(ip_packet)?;
    if IpProtocol::from(ip_packet[ip::PROTOCOL]) != IpProtocol::Esp {
        return Err(Error::Malformed);
    }
    let (next_header, payload) = open(sa, &ip_packet[ihl..total])?;
    if u8::from(next_header) == NO_NEXT_HEADER {
        return Err(Error::Unsupported);
    }
    match sa.mode {
        Mode::Tunnel => {
            if next_header != IpProtocol::IpIp {
                return Err(Error::Malformed);
            }
            out.extend_from_slice(&payload);
        }
        Mode::Transport => {
            let start = out.len();
            out.extend_from_slice(&ip_packet[..ihl]);
            out.extend_from_slice(&payload);
            let new_total = out.len() - start;
            let header = &mut out[start..start + ihl];
            ip::set_total_len(header, new_total)?;
            header[ip::PROTOCOL] = next_header.into();
            ip::fill_checksum(header);
        }
    }
    Ok(next_header)
}

#[cfg(test)]
mod test {
    use super::*;
    use crate::ipsec::{AesKeySize, Auth, Cipher};
    use proptest::prelude::*;

    fn hex(s: &str) -> Vec<u8> {
        let s: String = s.chars().filter(|c| !c.is_whitespace()).collect();
        (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
    }

    const TDES_KEY: &str = "0123456789abcdef23456789abcdef01456789abcdef0123";
    const SHA1_KEY: &str = "1112131415161718191a1b1c1d1e1f2021222324";

    fn sa_3des_sha1() -> SecurityAssociation {
        SecurityAssociation::new(
            0x1000,
            Cipher::TripleDesCbc,
            Auth::HmacSha1_96,
            &hex(TDES_KEY),
            &hex(SHA1_KEY),
            Mode::Transport,
        )
        .unwrap()
    }

    /// A UDP datagram 5000 -> 5001 carrying "qoslab ipsec", checksum 0 (RFC 768: none).
    fn udp() -> Vec<u8> {
        let mut d = hex("13881389 0014 0000");
        d.extend_from_slice(b"qoslab ipsec");
        d
    }

    // ESP, 3DES-CBC + HMAC-SHA1-96, SPI 0x1000, sequence 1, IV 0001020304050607, carrying
    // udp(): 20 bytes + padding 01 02 + pad length 02 + next header 11 = 24 bytes, 3 blocks.
    // Computed independently with Python: `cryptography` (decrepit TripleDES, CBC mode)
    // and the standard `hmac` module over SPI..ciphertext.
    static ESP_3DES_SHA1: [u8; 52] = [
        0x00, 0x00, 0x10, 0x00, 0x00, 0x00, 0x00, 0x01, // SPI, sequence
        0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, // IV
        // ciphertext (24 bytes, 3 blocks)
        0xe2, 0x44, 0x5f, 0x10, 0x4f, 0x92, 0x92, 0x4b, 0xc3, 0xa3, 0x2a, 0xfd, 0x5e, 0xd8, 0x91, 0x60, //
        0x55, 0x76, 0x14, 0x76, 0xb1, 0xb6, 0xca, 0xbf, //
        // ICV: HMAC-SHA1 over bytes 0..40, leftmost 96 bits
        0x33, 0xf5, 0x54, 0x70, 0xad, 0x32, 0xf7, 0x81, 0x36, 0x53, 0x5b, 0x4f,
    ];

    #[test]
    fn test_parse() {
        let packet = Packet::new_checked(&ESP_3DES_SHA1[..]).unwrap();
        assert_eq!(Repr::parse(&packet), Ok(Repr { spi: 0x1000, seq: 1 }));
        assert_eq!(packet.payload().len(), 44);
    }

    #[test]
    fn test_emit() {
        let mut bytes = [0u8; 8];
        Repr { spi: 0x1000, seq: 1 }.emit(&mut Packet::new_unchecked(&mut bytes[..]));
        assert_eq!(bytes, ESP_3DES_SHA1[..8]);
    }

    #[test]
    fn truncated_header() {
        assert_eq!(Packet::new_checked(&ESP_3DES_SHA1[..7]).unwrap_err(), Error::Truncated);
        assert_eq!(Repr::parse(&Packet::new_unchecked(&[0u8; 3][..])), Err(Error::Truncated));
    }

    #[test]
    fn seal_matches_the_independent_vector() {
        let mut out = Vec::new();
        seal(&sa_3des_sha1(), IpProtocol::Udp, &udp(), &hex("0001020304050607"), &mut out).unwrap();
        assert_eq!(out, ESP_3DES_SHA1);
    }

    #[test]
    fn open_the_independent_vector() {
        let (nh, payload) = open(&sa_3des_sha1(), &ESP_3DES_SHA1).unwrap();
        assert_eq!(nh, IpProtocol::Udp);
        assert_eq!(payload, udp());
    }

    #[test]
    fn bad_icv_is_a_checksum_error() {
        let mut bytes = ESP_3DES_SHA1;
        bytes[51] ^= 1;
        assert_eq!(open(&sa_3des_sha1(), &bytes), Err(Error::Checksum));
        let mut bytes = ESP_3DES_SHA1;
        bytes[20] ^= 1; // ciphertext: the ICV catches it
        assert_eq!(open(&sa_3des_sha1(), &bytes), Err(Error::Checksum));
    }

    #[test]
    fn errors_never_panic() {
        let sa = sa_3des_sha1();
        for len in 0..ESP_3DES_SHA1.len() {
            assert!(open(&sa, &ESP_3DES_SHA1[..len]).is_err());
        }
        let mut other = sa.clone();
        other.spi = 0x2000;
        assert_eq!(open(&other, &ESP_3DES_SHA1), Err(Error::Malformed));
    }

    #[test]
    fn bad_padding_is_malformed() {
        // NULL encryption so the padding can be changed and the ICV recomputed.
        let sa =
            SecurityAssociation::new(7, Cipher::Null, Auth::HmacSha1_96, &[], &hex(SHA1_KEY), Mode::Transport).unwrap();
        let mut out = Vec::new();
        seal(&sa, IpProtocol::Udp, &[0xaa; 5], &[], &mut out).unwrap();
        // 5 + 1 padding + 2 = 8: padding is one byte, 0x01, at offset 8 + 5.
        assert_eq!(&out[13..16], &[1, 1, 17]);
        let resign = |bytes: &mut Vec<u8>| {
            let n = bytes.len() - 12;
            let mut icv = [0u8; 12];
            Auth::HmacSha1_96.compute(&hex(SHA1_KEY), &[&bytes[..n]], &mut icv);
            bytes[n..].copy_from_slice(&icv);
        };
        let mut bad = out.clone();
        bad[13] = 9;
        resign(&mut bad);
        assert_eq!(open(&sa, &bad), Err(Error::Malformed));
        let mut bad = out.clone();
        bad[14] = 200; // pad length past the data
        resign(&mut bad);
        assert_eq!(open(&sa, &bad), Err(Error::Malformed));
        assert_eq!(open(&sa, &out).unwrap(), (IpProtocol::Udp, vec![0xaa; 5]));
    }

    #[test]
    fn padding_follows_rfc4303() {
        let sa = sa_3des_sha1();
        // (payload + pad + 2) % 8 == 0 with the fewest pad bytes.
        for len in 0..64 {
            let pad = padding_len(&sa, len);
            assert!(pad < 8);
            assert_eq!((len + pad + 2) % 8, 0);
        }
        let aes = SecurityAssociation::new(
            1,
            Cipher::AesCbc(AesKeySize::Aes128),
            Auth::HmacSha1_96,
            &[0; 16],
            &[0; 20],
            Mode::Transport,
        )
        .unwrap();
        assert_eq!(padding_len(&aes, 20), 10);
        let gcm =
            SecurityAssociation::new(1, Cipher::AesGcm(AesKeySize::Aes128), Auth::None, &[0; 20], &[], Mode::Transport)
                .unwrap();
        assert_eq!(padding_len(&gcm, 21), 1); // 4-byte alignment only
        assert_eq!(padding_len(&gcm, 22), 0);
    }

    #[test]
    fn overhead_fields_sum_to_overhead() {
        let sa = sa_3des_sha1();
        assert_eq!(
            overhead_fields(&sa, 20),
            vec![
                ("spi", 4),
                ("sequence", 4),
                ("iv", 8),
                ("padding", 2),
                ("pad length", 1),
                ("next header", 1),
                ("icv", 12)
            ]
        );
        for len in 0..100 {
            let sum: usize = overhead_fields(&sa, len).iter().map(|(_, n)| n).sum();
            assert_eq!(sum, overhead(&sa, len));
        }
    }

    const MTU: usize = 1500;
    const IPV4: usize = 20;
    const UDP: usize = 8;

    // Seed 003 §4.1: plain UDP fragments beyond 1472 bytes of payload (1500 - 20 - 8);
    // with ESP transport 3DES-CBC + HMAC-SHA1-96 the knee moves to 1438.
    #[test]
    fn knee_1438_through_overhead() {
        assert_eq!(MTU - IPV4 - UDP, 1472);
        let sa = sa_3des_sha1();
        let datagram = max_payload(&sa, MTU - IPV4).unwrap();
        assert_eq!(datagram - UDP, 1438);
        // Independently: 8 (SPI, seq) + 8 (IV) + ceil8(1446 + 2) = 1448 + 12 (ICV) = 1476;
        // + 20 = 1496 <= 1500. One byte more: ceil8(1449) = 1456 -> 1504 > 1500.
        assert_eq!(IPV4 + UDP + 1438 + overhead(&sa, UDP + 1438), 1496);
        assert_eq!(IPV4 + UDP + 1439 + overhead(&sa, UDP + 1439), 1504);
    }

    #[test]
    fn knee_1438_through_sealed_bytes() {
        let mut sa = sa_3des_sha1();
        let iv = [0x5a; 8];
        let mut largest = 0;
        for payload in 1400..1480 {
            // A real IPv4 + UDP packet, then transport-mode ESP on it.
            let udp_len = UDP + payload;
            let mut packet = vec![0x45, 0, 0, 0, 0, 1, 0x40, 0, 64, 17, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2];
            packet[2..4].copy_from_slice(&((IPV4 + udp_len) as u16).to_be_bytes());
            ip::fill_checksum(&mut packet[..IPV4]);
            packet.extend_from_slice(&[0x13, 0x88, 0x13, 0x89]);
            packet.extend_from_slice(&(udp_len as u16).to_be_bytes());
            packet.extend_from_slice(&[0, 0]);
            packet.extend_from_slice(&vec![0x61; payload]);
            let mut out = Vec::new();
            sa.seq = payload as u32;
            encapsulate_transport(&sa, &packet, &iv, &mut out).unwrap();
            if out.len() <= MTU {
                largest = payload;
            }
        }
        assert_eq!(largest, 1438);
    }

    fn all_sas() -> Vec<SecurityAssociation> {
        let mut sas = Vec::new();
        for cipher in Cipher::ALL {
            for auth in Auth::ALL {
                if cipher.is_aead() && auth != Auth::None {
                    continue;
                }
                let ek: Vec<u8> = (0..cipher.key_len() as u8).collect();
                let ak: Vec<u8> = (0..auth.key_len() as u8).map(|b| b ^ 0x5c).collect();
                sas.push(SecurityAssociation::new(0x0100_0001, cipher, auth, &ek, &ak, Mode::Transport).unwrap());
            }
        }
        sas
    }

    #[test]
    fn every_sa_round_trips_and_detects_tampering() {
        for sa in all_sas() {
            for len in [0, 1, 7, 8, 15, 16, 17, 100] {
                let payload: Vec<u8> = (0..len as u8).collect();
                let iv = vec![0x42; sa.iv_len()];
                let mut out = Vec::new();
                seal(&sa, IpProtocol::Tcp, &payload, &iv, &mut out).unwrap();
                assert_eq!(out.len(), sealed_len(&sa, len), "{} {}", sa.cipher, sa.auth);
                assert_eq!((out.len() - HEADER_LEN - sa.iv_len() - sa.icv_len()) % sa.alignment(), 0);
                assert_eq!(open(&sa, &out).unwrap(), (IpProtocol::Tcp, payload.clone()));
                if sa.icv_len() > 0 {
                    let last = out.len() - 1;
                    out[last] ^= 0x01;
                    assert_eq!(open(&sa, &out), Err(Error::Checksum), "{} {}", sa.cipher, sa.auth);
                }
            }
        }
    }

    #[test]
    fn gcm_matches_an_independent_vector() {
        // AES-128-GCM, key 000102..0f, salt 10111213, SPI 0x0100_0001, seq 1,
        // IV 4242424242424242, payload 00 01 02 03 04 05 06 (7 bytes) + pad 01 + 01 06
        // (next header TCP): computed with Python `cryptography` AESGCM, AAD = SPI||seq.
        let sa = SecurityAssociation::new(
            0x0100_0001,
            Cipher::AesGcm(AesKeySize::Aes128),
            Auth::None,
            &(0..20u8).collect::<Vec<_>>(),
            &[],
            Mode::Transport,
        )
        .unwrap();
        let mut out = Vec::new();
        seal(&sa, IpProtocol::Tcp, &[0, 1, 2, 3, 4, 5, 6], &[0x42; 8], &mut out).unwrap();
        assert_eq!(out, hex(GCM_VECTOR));
    }

    const GCM_VECTOR: &str = "01000001 00000001 4242424242424242 \
        510c1e19e2955c102d638bf5 27714468e94890a8754620280944f3b3";

    #[test]
    fn wrong_iv_length_is_an_error() {
        let sa = sa_3des_sha1();
        assert_eq!(seal(&sa, IpProtocol::Udp, b"x", &[0; 7], &mut Vec::new()), Err(Error::Malformed));
    }

    #[test]
    fn tunnel_mode_round_trip() {
        let mut sa = sa_3des_sha1();
        sa.mode = Mode::Tunnel;
        let mut inner = vec![0x45, 0xb8, 0, 28, 0, 9, 0x40, 0, 63, 17, 0, 0, 192, 168, 1, 2, 192, 168, 2, 3];
        ip::fill_checksum(&mut inner);
        inner.extend_from_slice(&[0x13, 0x88, 0x13, 0x89, 0, 8, 0, 0]);
        let outer = OuterHeader { src: [10, 0, 0, 1].into(), dst: [10, 0, 0, 2].into(), ttl: 64, ident: 77 };
        let mut out = Vec::new();
        encapsulate_tunnel(&sa, &outer, &inner, &[7; 8], &mut out).unwrap();
        assert_eq!(out.len(), 20 + sealed_len(&sa, 28));
        assert_eq!(out[1], 0xb8, "DSCP EF and ECN copied");
        assert_eq!(out[6] & 0x40, 0x40, "DF copied");
        assert_eq!(out[9], 50);
        assert_eq!(crate::checksum::checksum(&out[..20]), 0);
        let mut back = Vec::new();
        assert_eq!(decapsulate(&sa, &out, &mut back), Ok(IpProtocol::IpIp));
        assert_eq!(back, inner);
        // The same bytes under a transport-mode SA: a next header of 4 is put back as is.
        sa.mode = Mode::Transport;
        let mut back = Vec::new();
        assert_eq!(decapsulate(&sa, &out, &mut back), Ok(IpProtocol::IpIp));
    }

    #[test]
    fn transport_mode_round_trip_and_fragments() {
        let sa = sa_3des_sha1();
        let mut packet = vec![0x45, 0, 0, 40, 0, 1, 0, 0, 64, 17, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2];
        ip::fill_checksum(&mut packet);
        packet.extend_from_slice(&udp());
        let mut out = Vec::new();
        encapsulate_transport(&sa, &packet, &[1; 8], &mut out).unwrap();
        assert_eq!(out[9], 50);
        assert_eq!(usize::from(u16::from_be_bytes([out[2], out[3]])), out.len());
        assert_eq!(crate::checksum::checksum(&out[..20]), 0);
        let mut back = Vec::new();
        assert_eq!(decapsulate(&sa, &out, &mut back), Ok(IpProtocol::Udp));
        assert_eq!(back, packet);
        let mut frag = packet.clone();
        frag[6] = 0x20; // MF
        ip::fill_checksum(&mut frag[..20]);
        assert_eq!(encapsulate_transport(&sa, &frag, &[1; 8], &mut Vec::new()), Err(Error::Unsupported));
        assert_eq!(decapsulate(&sa, &packet, &mut Vec::new()), Err(Error::Malformed), "not ESP");
    }

    proptest! {
        #[test]
        fn repr_emit_parse_emit(spi in any::<u32>(), seq in any::<u32>()) {
            let repr = Repr { spi, seq };
            let mut a = vec![0u8; repr.buffer_len()];
            repr.emit(&mut Packet::new_unchecked(&mut a[..]));
            let parsed = Repr::parse(&Packet::new_checked(&a[..]).unwrap()).unwrap();
            prop_assert_eq!(parsed, repr);
            let mut b = vec![0u8; parsed.buffer_len()];
            parsed.emit(&mut Packet::new_unchecked(&mut b[..]));
            prop_assert_eq!(a, b);
        }

        #[test]
        fn seal_open_round_trip(payload in proptest::collection::vec(any::<u8>(), 0..300), which in 0usize..22, nh in any::<u8>()) {
            let sas = all_sas();
            let sa = &sas[which % sas.len()];
            let iv = vec![0x24; sa.iv_len()];
            let mut out = Vec::new();
            seal(sa, IpProtocol::from(nh), &payload, &iv, &mut out).unwrap();
            prop_assert_eq!(open(sa, &out).unwrap(), (IpProtocol::from(nh), payload));
        }

        #[test]
        fn open_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..120), which in 0usize..22) {
            let sas = all_sas();
            let sa = &sas[which % sas.len()];
            let _ = open(sa, &bytes);
            let _ = decapsulate(sa, &bytes, &mut Vec::new());
        }
    }
}
