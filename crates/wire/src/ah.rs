//! IP Authentication Header, AH (RFC 4302), over IPv4.
//!
//! Standards a reader must know:
//!
//! * RFC 4302 §2 (header format): next header (1 byte), payload length (1: the AH length
//!   in 32-bit words minus 2), reserved (2, zero), SPI (4), sequence number (4), ICV
//!   (variable, padded to a multiple of 32 bits for IPv4, §2.6).
//! * RFC 4302 §3.3.3: the ICV covers the IP header with its mutable fields zeroed
//!   (§3.3.3.1.1.1: TOS, flags, fragment offset, TTL, header checksum; options per
//!   §3.3.3.1.1.2 and Appendix A1), the AH header with the ICV zeroed, and the payload.
//! * RFC 4302 §3.1.1/§3.1.2 and RFC 4301 §4.1, §5.1.2.1: transport and tunnel modes.
//! * RFC 791 §3.1 (the IPv4 header), and the integrity algorithms of [`crate::ipsec`]
//!   (RFC 2403, RFC 2404, RFC 4868).
//!
//! [`Packet`] / [`Repr`] are the AH header alone. [`insert_transport`],
//! [`insert_tunnel`], [`verify`] and [`strip`] work on whole IPv4 packets. Extended
//! sequence numbers are not modelled. With source routing, RFC 4302 §3.3.3.1.1.1 has the
//! sender compute the ICV with the final destination in the header: that is left to the
//! caller (this file zeroes the source-route options and uses the header as given).

use crate::ipsec::{ip, Auth, Mode, OuterHeader, SecurityAssociation};
use crate::{Error, IpProtocol, Result};

/// RFC 4302 §2: the fixed part of the header, before the ICV.
pub const FIXED_LEN: usize = 12;

/// Byte ranges of the AH header (RFC 4302 §2).
pub mod field {
    use crate::Field;

    /// RFC 4302 §2.1: the protocol after AH.
    pub const NEXT_HEADER: usize = 0;
    /// RFC 4302 §2.2: AH length in 32-bit words, minus 2.
    pub const LENGTH: usize = 1;
    /// RFC 4302 §2.3: reserved, zero.
    pub const RESERVED: Field = 2..4;
    /// RFC 4302 §2.4: Security Parameters Index.
    pub const SPI: Field = 4..8;
    /// RFC 4302 §2.5: sequence number.
    pub const SEQ: Field = 8..12;
    /// RFC 4302 §2.6: integrity check value, from here to the header length.
    pub const ICV_START: usize = 12;
}

/// A read/write view of an AH header and what follows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Packet<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Packet<T> {
    pub const fn new_unchecked(buffer: T) -> Packet<T> {
        Packet { buffer }
    }

    pub fn new_checked(buffer: T) -> Result<Packet<T>> {
        let packet = Self::new_unchecked(buffer);
        packet.check_len()?;
        Ok(packet)
    }

    /// `Truncated` when shorter than 12 bytes or than the payload length field says;
    /// `Malformed` when that field gives a header shorter than 12 bytes (RFC 4302 §2.2).
    pub fn check_len(&self) -> Result<()> {
        let len = self.buffer.as_ref().len();
        if len < FIXED_LEN {
            return Err(Error::Truncated);
        }
        let header_len = self.header_len();
        if header_len < FIXED_LEN {
            return Err(Error::Malformed);
        }
        if len < header_len {
            return Err(Error::Truncated);
        }
        Ok(())
    }

    pub fn into_inner(self) -> T {
        self.buffer
    }

    /// RFC 4302 §2.1.
    pub fn next_header(&self) -> IpProtocol {
        IpProtocol::from(self.buffer.as_ref()[field::NEXT_HEADER])
    }

    /// RFC 4302 §2.2: the raw field, 32-bit words minus 2.
    pub fn payload_len(&self) -> u8 {
        self.buffer.as_ref()[field::LENGTH]
    }

    /// The AH length in bytes, from the payload length field.
    pub fn header_len(&self) -> usize {
        (usize::from(self.payload_len()) + 2) * 4
    }

    /// RFC 4302 §2.3.
    pub fn reserved(&self) -> u16 {
        let b = &self.buffer.as_ref()[field::RESERVED];
        u16::from_be_bytes([b[0], b[1]])
    }

    /// RFC 4302 §2.4.
    pub fn spi(&self) -> u32 {
        let b = &self.buffer.as_ref()[field::SPI];
        u32::from_be_bytes([b[0], b[1], b[2], b[3]])
    }

    /// RFC 4302 §2.5.
    pub fn seq_number(&self) -> u32 {
        let b = &self.buffer.as_ref()[field::SEQ];
        u32::from_be_bytes([b[0], b[1], b[2], b[3]])
    }

    /// RFC 4302 §2.6: the ICV field, padding included.
    pub fn icv(&self) -> &[u8] {
        &self.buffer.as_ref()[field::ICV_START..self.header_len()]
    }

    /// What AH protects after itself.
    pub fn payload(&self) -> &[u8] {
        &self.buffer.as_ref()[self.header_len()..]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    pub fn set_next_header(&mut self, value: IpProtocol) {
        self.buffer.as_mut()[field::NEXT_HEADER] = value.into();
    }

    pub fn set_payload_len(&mut self, value: u8) {
        self.buffer.as_mut()[field::LENGTH] = value;
    }

    pub fn set_reserved(&mut self, value: u16) {
        self.buffer.as_mut()[field::RESERVED].copy_from_slice(&value.to_be_bytes());
    }

    pub fn set_spi(&mut self, value: u32) {
        self.buffer.as_mut()[field::SPI].copy_from_slice(&value.to_be_bytes());
    }

    pub fn set_seq_number(&mut self, value: u32) {
        self.buffer.as_mut()[field::SEQ].copy_from_slice(&value.to_be_bytes());
    }

    pub fn icv_mut(&mut self) -> &mut [u8] {
        let end = self.header_len();
        &mut self.buffer.as_mut()[field::ICV_START..end]
    }

    pub fn payload_mut(&mut self) -> &mut [u8] {
        let start = self.header_len();
        &mut self.buffer.as_mut()[start..]
    }
}

/// An AH header.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Repr {
    pub next_header: IpProtocol,
    pub spi: u32,
    pub seq: u32,
    /// The ICV field as carried, padding included. Emitting pads it with zeros to a
    /// multiple of 4 bytes (RFC 4302 §2.6, IPv4); at most 1012 bytes.
    pub icv: Vec<u8>,
}

impl Repr {
    /// Reads the header. The reserved field is not checked (RFC 4302 §2.3: receivers
    /// include it in the ICV, which catches a change).
    pub fn parse<T: AsRef<[u8]> + ?Sized>(packet: &Packet<&T>) -> Result<Repr> {
        packet.check_len()?;
        Ok(Repr {
            next_header: packet.next_header(),
            spi: packet.spi(),
            seq: packet.seq_number(),
            icv: packet.icv().to_vec(),
        })
    }

    /// The AH length in bytes: 12 + the ICV padded to 32 bits.
    pub fn header_len(&self) -> usize {
        FIXED_LEN + self.icv.len().div_ceil(4) * 4
    }

    pub fn buffer_len(&self) -> usize {
        self.header_len()
    }

    /// Writes the header; panics when the buffer is shorter than `header_len()` or the
    /// ICV is longer than the length field can say.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]> + ?Sized>(&self, packet: &mut Packet<&mut T>) {
        let words = self.header_len() / 4 - 2;
        let words = u8::try_from(words).expect("AH ICV too long for the payload length field");
        packet.set_next_header(self.next_header);
        packet.set_payload_len(words);
        packet.set_reserved(0);
        packet.set_spi(self.spi);
        packet.set_seq_number(self.seq);
        let icv = packet.icv_mut();
        icv.fill(0);
        icv[..self.icv.len()].copy_from_slice(&self.icv);
    }
}

/// RFC 4302 §2.6: the ICV field length for the SA's algorithm, padded to 32 bits.
pub fn icv_field_len(sa: &SecurityAssociation) -> usize {
    sa.auth.icv_len().div_ceil(4) * 4
}

/// The bytes AH adds to a packet under `sa` (the same for every payload; the tunnel-mode
/// outer IPv4 header is a layer of its own and not counted).
pub fn overhead(sa: &SecurityAssociation) -> usize {
    FIXED_LEN + icv_field_len(sa)
}

/// [`overhead`] as named fields, in header order.
pub fn overhead_fields(sa: &SecurityAssociation, _payload_len: usize) -> Vec<(&'static str, usize)> {
    let mut fields = vec![
        ("next header", 1),
        ("payload len", 1),
        ("reserved", 2),
        ("spi", 4),
        ("sequence", 4),
        ("icv", sa.auth.icv_len()),
    ];
    let pad = icv_field_len(sa) - sa.auth.icv_len();
    if pad > 0 {
        fields.push(("icv padding", pad));
    }
    fields
}

/// RFC 4302 Appendix A1: IPv4 options included in the ICV as they are (End of Options,
/// No Operation, Security, Extended Security, Commercial Security, Router Alert, Sender
/// Directed Multi-Destination Delivery). Every other option is zeroed, type and length
/// included (§3.3.3.1.1.2).
const IMMUTABLE_OPTIONS: [u8; 7] = [0, 1, 130, 133, 134, 148, 149];

/// Copies the IPv4 header with the mutable fields zeroed (RFC 4302 §3.3.3.1.1).
fn zeroed_header(header: &[u8]) -> Result<Vec<u8>> {
    let mut h = header.to_vec();
    h[ip::TOS] = 0;
    h[ip::FLG_OFF].fill(0);
    h[ip::TTL] = 0;
    h[ip::CHECKSUM].fill(0);
    let mut i = ip::HEADER_LEN;
    while i < h.len() {
        let kind = h[i];
        match kind {
            0 => break, // End of Options: the rest is padding, immutable.
            1 => i += 1,
            _ => {
                let len = usize::from(*h.get(i + 1).ok_or(Error::Malformed)?);
                if len < 2 || i + len > h.len() {
                    return Err(Error::Malformed);
                }
                if !IMMUTABLE_OPTIONS.contains(&kind) {
                    h[i..i + len].fill(0);
                }
                i += len;
            }
        }
    }
    Ok(h)
}

/// The ICV of an IPv4 packet `packet` (`ihl` header bytes, then an AH header at `ihl`).
fn compute_icv(sa: &SecurityAssociation, packet: &[u8], ihl: usize, ah_len: usize) -> Result<Vec<u8>> {
    let header = zeroed_header(&packet[..ihl])?;
    let mut ah = packet[ihl..ihl + ah_len].to_vec();
    ah[field::ICV_START..].fill(0);
    let mut icv = vec![0u8; sa.auth.icv_len()];
    sa.auth.compute(&sa.auth_key, &[&header, &ah, &packet[ihl + ah_len..]], &mut icv);
    Ok(icv)
}

fn check_sa(sa: &SecurityAssociation) -> Result<()> {
    if sa.auth == Auth::None {
        // RFC 4302 §3.2: AH always carries an ICV.
        return Err(Error::Unsupported);
    }
    if sa.auth_key.len() != sa.auth.key_len() {
        return Err(Error::Malformed);
    }
    Ok(())
}

/// Writes an AH header (ICV zero) with `next_header`, `sa.spi` and `sa.seq` at `out[at..]`.
fn emit_blank(sa: &SecurityAssociation, next_header: IpProtocol, out: &mut [u8]) {
    let repr = Repr { next_header, spi: sa.spi, seq: sa.seq, icv: vec![0; icv_field_len(sa)] };
    repr.emit(&mut Packet::new_unchecked(out));
}

/// Transport mode (RFC 4302 §3.1.1): inserts AH between the IPv4 header of `ip_packet`
/// and its payload, and appends the result to `out`: protocol 51, total length and
/// header checksum updated, AH next header = the original protocol, sequence `sa.seq`
/// (the caller advances it), ICV computed over the packet as sent.
///
/// Errors: `Truncated`/`Malformed` for a bad IPv4 header or options; `Unsupported` for
/// an SA without an integrity algorithm, a fragment (RFC 4302 §3.1.1: whole datagrams
/// only) or a result past 65,535 bytes; `Malformed` for a wrong key length.
pub fn insert_transport(sa: &SecurityAssociation, ip_packet: &[u8], out: &mut Vec<u8>) -> Result<()> {
    check_sa(sa)?;
    let (ihl, total) = ip::lengths(ip_packet)?;
    if ip::is_fragment(ip_packet) {
        return Err(Error::Unsupported);
    }
    let ah_len = overhead(sa);
    let mut packet = Vec::with_capacity(total + ah_len);
    packet.extend_from_slice(&ip_packet[..ihl]);
    packet.resize(ihl + ah_len, 0);
    packet.extend_from_slice(&ip_packet[ihl..total]);
    ip::set_total_len(&mut packet[..ihl], total + ah_len)?;
    packet[ip::PROTOCOL] = IpProtocol::Ah.into();
    emit_blank(sa, IpProtocol::from(ip_packet[ip::PROTOCOL]), &mut packet[ihl..ihl + ah_len]);
    let icv = compute_icv(sa, &packet, ihl, ah_len)?;
    packet[ihl + FIXED_LEN..ihl + FIXED_LEN + icv.len()].copy_from_slice(&icv);
    ip::fill_checksum(&mut packet[..ihl]);
    out.extend_from_slice(&packet);
    Ok(())
}

/// Tunnel mode (RFC 4302 §3.1.2, RFC 4301 §5.1.2.1): puts a new outer IPv4 header and AH
/// (next header 4) in front of the whole `inner_packet` and appends the result to `out`.
///
/// Errors: as [`insert_transport`], fragments excepted (a tunnel carries them).
pub fn insert_tunnel(
    sa: &SecurityAssociation,
    outer: &OuterHeader,
    inner_packet: &[u8],
    out: &mut Vec<u8>,
) -> Result<()> {
    check_sa(sa)?;
    let (_, total) = ip::lengths(inner_packet)?;
    let inner = &inner_packet[..total];
    let ah_len = overhead(sa);
    let mut packet = Vec::with_capacity(ip::HEADER_LEN + ah_len + total);
    ip::emit_outer(outer, inner, IpProtocol::Ah.into(), ah_len + total, &mut packet)?;
    let ihl = ip::HEADER_LEN;
    packet.resize(ihl + ah_len, 0);
    packet.extend_from_slice(inner);
    emit_blank(sa, IpProtocol::IpIp, &mut packet[ihl..ihl + ah_len]);
    let icv = compute_icv(sa, &packet, ihl, ah_len)?;
    packet[ihl + FIXED_LEN..ihl + FIXED_LEN + icv.len()].copy_from_slice(&icv);
    out.extend_from_slice(&packet);
    Ok(())
}

/// Checks the AH of an IPv4 packet (RFC 4302 §3.4) and returns its header. The sequence
/// number is not checked against a replay window.
///
/// Errors: `Truncated`/`Malformed` for a bad IPv4 or AH header; `Malformed` when the
/// protocol is not AH, the SPI is not `sa.spi` or the ICV field is not the algorithm's
/// length; `Checksum` when the ICV does not verify; `Unsupported` for an SA without an
/// integrity algorithm.
pub fn verify(sa: &SecurityAssociation, ip_packet: &[u8]) -> Result<Repr> {
    check_sa(sa)?;
    let (ihl, total) = ip::lengths(ip_packet)?;
    if IpProtocol::from(ip_packet[ip::PROTOCOL]) != IpProtocol::Ah {
        return Err(Error::Malformed);
    }
    let packet = &ip_packet[..total];
    let ah = Packet::new_checked(&packet[ihl..])?;
    let repr = Repr::parse(&ah)?;
    if repr.spi != sa.spi || repr.icv.len() != icv_field_len(sa) {
        return Err(Error::Malformed);
    }
    let header = zeroed_header(&packet[..ihl])?;
    let ah_len = ah.header_len();
    let mut ah_zeroed = packet[ihl..ihl + ah_len].to_vec();
    ah_zeroed[field::ICV_START..].fill(0);
    sa.auth.verify(&sa.auth_key, &[&header, &ah_zeroed, &packet[ihl + ah_len..]], &repr.icv[..sa.auth.icv_len()])?;
    Ok(repr)
}

/// Verifies (as [`verify`]) and removes AH, appending to `out` by `sa.mode`: transport,
/// the packet without AH (protocol, total length and checksum restored; TOS, TTL and
/// the rest as received); tunnel, the inner packet. Returns the AH next header.
///
/// Errors: those of [`verify`]; `Malformed` when a tunnel-mode SA finds a next header
/// other than IPv4 (4).
pub fn strip(sa: &SecurityAssociation, ip_packet: &[u8], out: &mut Vec<u8>) -> Result<IpProtocol> {
    let repr = verify(sa, ip_packet)?;
    let (ihl, total) = ip::lengths(ip_packet)?;
    let payload = &ip_packet[ihl + repr.header_len()..total];
    match sa.mode {
        Mode::Tunnel => {
            if repr.next_header != IpProtocol::IpIp {
                return Err(Error::Malformed);
            }
            out.extend_from_slice(payload);
        }
        Mode::Transport => {
            let start = out.len();
            out.extend_from_slice(&ip_packet[..ihl]);
            out.extend_from_slice(payload);
            let new_total = out.len() - start;
            let header = &mut out[start..start + ihl];
            ip::set_total_len(header, new_total)?;
            header[ip::PROTOCOL] = repr.next_header.into();
            ip::fill_checksum(header);
        }
    }
    Ok(repr.next_header)
}

#[cfg(test)]
mod test {
    use super::*;
    use crate::ipsec::Cipher;
    use proptest::prelude::*;

    fn hex(s: &str) -> Vec<u8> {
        let s: String = s.chars().filter(|c| !c.is_whitespace()).collect();
        (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
    }

    const SHA1_KEY: &str = "1112131415161718191a1b1c1d1e1f2021222324";

    fn sa(auth: Auth, mode: Mode) -> SecurityAssociation {
        let key: Vec<u8> = match auth {
            Auth::HmacSha1_96 => hex(SHA1_KEY),
            other => (0..other.key_len() as u8).collect(),
        };
        SecurityAssociation::new(0x2000, Cipher::Null, auth, &[], &key, mode).unwrap()
    }

    /// IPv4 10.0.0.1 -> 10.0.0.2, TOS 0xb8, id 0x1234, DF, TTL 64, UDP 5000 -> 5001
    /// "qoslab ipsec" (UDP checksum 0), header checksum computed.
    fn udp_packet() -> Vec<u8> {
        let mut p = hex("45b8 0028 1234 4000 4011 0000 0a000001 0a000002");
        ip::fill_checksum(&mut p);
        p.extend(hex("13881389 0014 0000"));
        p.extend_from_slice(b"qoslab ipsec");
        p
    }

    // udp_packet() with transport-mode AH, HMAC-SHA1-96, SPI 0x2000, sequence 1:
    // total length 0x28 + 24 = 0x40, protocol 51, header checksum 0x139d; AH next header
    // 17, payload length 4 (24 bytes / 4 - 2). Computed independently with Python: the
    // ICV by `hmac` over the header with TOS, flags/offset, TTL and checksum zeroed
    // (45 00 0040 1234 0000 00 33 0000 0a000001 0a000002), the AH with its ICV zeroed and
    // the UDP datagram; the checksum by RFC 1071 summing.
    static PACKET_BYTES: [u8; 64] = [
        0x45, 0xb8, 0x00, 0x40, 0x12, 0x34, 0x40, 0x00, 0x40, 0x33, 0x13, 0x9d, // IPv4
        0x0a, 0x00, 0x00, 0x01, 0x0a, 0x00, 0x00, 0x02, //
        0x11, 0x04, 0x00, 0x00, 0x00, 0x00, 0x20, 0x00, 0x00, 0x00, 0x00, 0x01, // AH fixed part
        0xe7, 0x2b, 0x36, 0x0d, 0x72, 0xbf, 0x9d, 0x2b, 0x88, 0x33, 0x19, 0x21, // ICV
        0x13, 0x88, 0x13, 0x89, 0x00, 0x14, 0x00, 0x00, // UDP
        b'q', b'o', b's', b'l', b'a', b'b', b' ', b'i', b'p', b's', b'e', b'c',
    ];
    const PACKET_ICV: &str = "e72b360d72bf9d2b88331921";

    fn expected_packet() -> Vec<u8> {
        PACKET_BYTES.to_vec()
    }

    #[test]
    fn test_parse() {
        let p = expected_packet();
        let ah = Packet::new_checked(&p[20..]).unwrap();
        assert_eq!(ah.header_len(), 24);
        assert_eq!(ah.payload().len(), 20);
        assert_eq!(ah.reserved(), 0);
        let repr = Repr::parse(&ah).unwrap();
        assert_eq!(repr, Repr { next_header: IpProtocol::Udp, spi: 0x2000, seq: 1, icv: hex(PACKET_ICV) });
    }

    #[test]
    fn test_emit() {
        let repr = Repr { next_header: IpProtocol::Udp, spi: 0x2000, seq: 1, icv: hex(PACKET_ICV) };
        let mut bytes = vec![0u8; repr.buffer_len()];
        repr.emit(&mut Packet::new_unchecked(&mut bytes[..]));
        assert_eq!(bytes, expected_packet()[20..44]);
    }

    #[test]
    fn insert_transport_matches_the_independent_vector() {
        let mut out = Vec::new();
        insert_transport(&sa(Auth::HmacSha1_96, Mode::Transport), &udp_packet(), &mut out).unwrap();
        assert_eq!(out, expected_packet());
        assert_eq!(crate::checksum::checksum(&out[..20]), 0);
    }

    #[test]
    fn verify_and_strip() {
        let s = sa(Auth::HmacSha1_96, Mode::Transport);
        let p = expected_packet();
        assert_eq!(verify(&s, &p).unwrap().seq, 1);
        let mut back = Vec::new();
        assert_eq!(strip(&s, &p, &mut back), Ok(IpProtocol::Udp));
        assert_eq!(back, udp_packet());
    }

    #[test]
    fn mutable_fields_do_not_matter() {
        let s = sa(Auth::HmacSha1_96, Mode::Transport);
        let mut p = expected_packet();
        // A router lowers TTL, remarks DSCP and fixes the checksum: still valid.
        p[8] = 3;
        p[1] = 0x00;
        ip::fill_checksum(&mut p[..20]);
        assert!(verify(&s, &p).is_ok());
        // Changing an immutable field (identification) breaks it.
        p[5] ^= 1;
        ip::fill_checksum(&mut p[..20]);
        assert_eq!(verify(&s, &p), Err(Error::Checksum));
    }

    #[test]
    fn tampering_is_a_checksum_error() {
        let s = sa(Auth::HmacSha1_96, Mode::Transport);
        for at in [12, 22, 30, 40, 50, 63] {
            let mut p = expected_packet();
            p[at] ^= 0x10;
            ip::fill_checksum(&mut p[..20]);
            assert_eq!(verify(&s, &p), Err(Error::Checksum), "byte {at}");
        }
    }

    #[test]
    fn errors() {
        let s = sa(Auth::HmacSha1_96, Mode::Transport);
        let p = expected_packet();
        for len in 0..p.len() {
            assert!(verify(&s, &p[..len]).is_err());
        }
        let mut other = s.clone();
        other.spi = 1;
        assert_eq!(verify(&other, &p), Err(Error::Malformed));
        assert_eq!(verify(&s, &udp_packet()), Err(Error::Malformed), "not AH");
        let mut none = s.clone();
        none.auth = Auth::None;
        none.auth_key.clear();
        assert_eq!(insert_transport(&none, &udp_packet(), &mut Vec::new()), Err(Error::Unsupported));
        // AH payload length 0 gives an 8-byte header: malformed.
        assert_eq!(Packet::new_checked(&[17u8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0][..]).unwrap_err(), Error::Malformed);
        assert_eq!(Packet::new_checked(&[17u8, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0][..]).unwrap_err(), Error::Truncated);
        assert_eq!(Packet::new_checked(&[17u8; 11][..]).unwrap_err(), Error::Truncated);
    }

    #[test]
    fn options_are_zeroed_or_kept() {
        let s = sa(Auth::HmacSha256_128, Mode::Transport);
        // IHL 7: Router Alert (immutable, 94 04 0000) then Record Route (mutable, 07 03 04) + EOL.
        let mut p = hex("47000024 00010000 40110000 0a000001 0a000002 94040000 07030400");
        ip::fill_checksum(&mut p);
        p.extend(hex("13881389 0008 0000"));
        let mut out = Vec::new();
        insert_transport(&s, &p, &mut out).unwrap();
        assert_eq!(verify(&s, &out).map(|r| r.next_header), Ok(IpProtocol::Udp));
        // A router records its address in Record Route: still valid.
        out[24 + 2] = 0x08;
        ip::fill_checksum(&mut out[..28]);
        assert!(verify(&s, &out).is_ok());
        // Router Alert value changed: invalid.
        out[22] = 1;
        ip::fill_checksum(&mut out[..28]);
        assert_eq!(verify(&s, &out), Err(Error::Checksum));
        // An option running past the header is malformed.
        let mut bad = hex("46000020 00010000 40110000 0a000001 0a000002 07090400");
        ip::fill_checksum(&mut bad);
        bad.extend(hex("13881389 0008 0000"));
        assert_eq!(insert_transport(&s, &bad, &mut Vec::new()), Err(Error::Malformed));
    }

    #[test]
    fn tunnel_round_trip() {
        let s = sa(Auth::HmacMd5_96, Mode::Tunnel);
        let outer = OuterHeader { src: [192, 0, 2, 1].into(), dst: [192, 0, 2, 2].into(), ttl: 64, ident: 9 };
        let inner = udp_packet();
        let mut out = Vec::new();
        insert_tunnel(&s, &outer, &inner, &mut out).unwrap();
        assert_eq!(out.len(), 20 + 24 + inner.len());
        assert_eq!((out[9], out[20]), (51, 4));
        assert_eq!(crate::checksum::checksum(&out[..20]), 0);
        let mut back = Vec::new();
        assert_eq!(strip(&s, &out, &mut back), Ok(IpProtocol::IpIp));
        assert_eq!(back, inner);
    }

    #[test]
    fn overhead_fields_sum_to_overhead() {
        for auth in [Auth::HmacMd5_96, Auth::HmacSha1_96, Auth::HmacSha256_128] {
            let s = sa(auth, Mode::Transport);
            let sum: usize = overhead_fields(&s, 100).iter().map(|(_, n)| n).sum();
            assert_eq!(sum, overhead(&s));
        }
        assert_eq!(overhead(&sa(Auth::HmacSha1_96, Mode::Transport)), 24);
        assert_eq!(overhead(&sa(Auth::HmacSha256_128, Mode::Transport)), 28);
    }

    #[test]
    fn icv_padding_to_32_bits() {
        let repr = Repr { next_header: IpProtocol::Tcp, spi: 5, seq: 6, icv: vec![0xee; 10] };
        assert_eq!(repr.header_len(), 24);
        let mut bytes = [0u8; 24];
        repr.emit(&mut Packet::new_unchecked(&mut bytes[..]));
        assert_eq!(bytes[1], 4);
        assert_eq!(&bytes[22..], &[0, 0]);
    }

    proptest! {
        #[test]
        fn repr_emit_parse_emit(nh in any::<u8>(), spi in any::<u32>(), seq in any::<u32>(),
                                words in 0usize..16, fill in any::<u8>()) {
            let repr = Repr { next_header: IpProtocol::from(nh), spi, seq, icv: vec![fill; words * 4] };
            let mut a = vec![0u8; repr.buffer_len()];
            repr.emit(&mut Packet::new_unchecked(&mut a[..]));
            let parsed = Repr::parse(&Packet::new_checked(&a[..]).unwrap()).unwrap();
            prop_assert_eq!(&parsed, &repr);
            let mut b = vec![0u8; parsed.buffer_len()];
            parsed.emit(&mut Packet::new_unchecked(&mut b[..]));
            prop_assert_eq!(a, b);
        }

        #[test]
        fn insert_verify_strip(payload in proptest::collection::vec(any::<u8>(), 0..200), which in 0usize..3, ttl in any::<u8>()) {
            let auth = [Auth::HmacMd5_96, Auth::HmacSha1_96, Auth::HmacSha256_128][which];
            let s = sa(auth, Mode::Transport);
            let mut p = hex("45000000 00070000 00060000 0a000001 0a000002");
            p[8] = ttl;
            p[2..4].copy_from_slice(&((20 + payload.len()) as u16).to_be_bytes());
            ip::fill_checksum(&mut p);
            p.extend_from_slice(&payload);
            let mut out = Vec::new();
            insert_transport(&s, &p, &mut out).unwrap();
            let mut back = Vec::new();
            prop_assert_eq!(strip(&s, &out, &mut back), Ok(IpProtocol::Tcp));
            prop_assert_eq!(back, p);
        }

        #[test]
        fn parsing_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..100)) {
            let s = sa(Auth::HmacSha1_96, Mode::Transport);
            let _ = verify(&s, &bytes);
            let _ = strip(&s, &bytes, &mut Vec::new());
            if let Ok(p) = Packet::new_checked(&bytes[..]) {
                let _ = Repr::parse(&p);
            }
        }
    }
}
