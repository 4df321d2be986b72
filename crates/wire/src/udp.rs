//! User Datagram Protocol.
//!
//! Standards a reader must know:
//!
//! * RFC 768 — the header (source port, destination port, length, checksum) and the
//!   checksum over the IPv4 pseudo-header, header and data; a transmitted checksum of
//!   zero means "no checksum", so a computed zero is sent as all ones;
//! * RFC 1071 — the checksum arithmetic ([`crate::checksum`]);
//! * RFC 1122 §4.1.3.4 — a receiver verifies a non-zero checksum and discards on failure.

use core::fmt;

use crate::ipv4::{Address, Protocol};
use crate::{checksum, Error, Result};

/// The header length (RFC 768, "Format").
pub const HEADER_LEN: usize = 8;

/// Byte ranges of the header (RFC 768, "Format").
pub mod field {
    use crate::Field;

    /// Source Port; zero when unused.
    pub const SRC_PORT: Field = 0..2;
    /// Destination Port.
    pub const DST_PORT: Field = 2..4;
    /// Length of header and data in octets, at least 8.
    pub const LENGTH: Field = 4..6;
    /// Checksum over pseudo-header, header and data; zero = not computed.
    pub const CHECKSUM: Field = 6..8;
}

#[inline]
fn be16(data: &[u8], f: crate::Field) -> u16 {
    u16::from_be_bytes([data[f.start], data[f.start + 1]])
}

/// A read/write view of a UDP datagram.
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

    /// Checks the header is present, Length ≥ 8 and the buffer holds Length octets
    /// (RFC 768; a longer buffer is allowed, the excess is not payload).
    pub fn check_len(&self) -> Result<()> {
        let len = self.buffer.as_ref().len();
        if len < HEADER_LEN {
            return Err(Error::Truncated);
        }
        let field_len = usize::from(self.len());
        if field_len < HEADER_LEN {
            Err(Error::Malformed)
        } else if len < field_len {
            Err(Error::Truncated)
        } else {
            Ok(())
        }
    }

    /// Returns the underlying buffer.
    pub fn into_inner(self) -> T {
        self.buffer
    }

    /// RFC 768: Source Port.
    #[inline]
    pub fn src_port(&self) -> u16 {
        be16(self.buffer.as_ref(), field::SRC_PORT)
    }

    /// RFC 768: Destination Port.
    #[inline]
    pub fn dst_port(&self) -> u16 {
        be16(self.buffer.as_ref(), field::DST_PORT)
    }

    /// RFC 768: Length, header and data.
    #[inline]
    pub fn len(&self) -> u16 {
        be16(self.buffer.as_ref(), field::LENGTH)
    }

    /// True when Length is zero (never for a valid datagram; for clippy's sake).
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// RFC 768: Checksum.
    #[inline]
    pub fn checksum(&self) -> u16 {
        be16(self.buffer.as_ref(), field::CHECKSUM)
    }

    /// RFC 768: true when the checksum is zero (not computed) or verifies over the
    /// pseudo-header of `src`/`dst`, the header and the data up to Length.
    pub fn verify_checksum(&self, src: &Address, dst: &Address) -> bool {
        if self.checksum() == 0 {
            return true;
        }
        let len = self.len();
        let data = &self.buffer.as_ref()[..usize::from(len)];
        let acc = checksum::pseudo_header(src.octets(), dst.octets(), Protocol::Udp.into(), len);
        checksum::fold(checksum::accumulate(acc, data)) == 0xffff
    }
}

impl<'a, T: AsRef<[u8]> + ?Sized> Packet<&'a T> {
    /// The data after the header, up to Length.
    pub fn payload(&self) -> &'a [u8] {
        &self.buffer.as_ref()[HEADER_LEN..usize::from(self.len())]
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

    /// Sets Length.
    #[inline]
    pub fn set_len(&mut self, value: u16) {
        self.buffer.as_mut()[field::LENGTH].copy_from_slice(&value.to_be_bytes());
    }

    /// Sets the Checksum field as given (zero disables it, RFC 768).
    #[inline]
    pub fn set_checksum(&mut self, value: u16) {
        self.buffer.as_mut()[field::CHECKSUM].copy_from_slice(&value.to_be_bytes());
    }

    /// Computes and writes the checksum over pseudo-header, header and data up to
    /// Length; a computed zero is written as 0xffff (RFC 768).
    pub fn fill_checksum(&mut self, src: &Address, dst: &Address) {
        self.set_checksum(0);
        let len = self.len();
        let acc = checksum::pseudo_header(src.octets(), dst.octets(), Protocol::Udp.into(), len);
        let sum = !checksum::fold(checksum::accumulate(acc, &self.buffer.as_ref()[..usize::from(len)]));
        self.set_checksum(if sum == 0 { 0xffff } else { sum });
    }

    /// The data after the header up to Length, mutable.
    pub fn payload_mut(&mut self) -> &mut [u8] {
        let len = usize::from(self.len());
        &mut self.buffer.as_mut()[HEADER_LEN..len]
    }
}

impl<T: AsRef<[u8]>> AsRef<[u8]> for Packet<T> {
    fn as_ref(&self) -> &[u8] {
        self.buffer.as_ref()
    }
}

/// The UDP header as plain values; the payload length is passed beside it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Repr {
    pub src_port: u16,
    pub dst_port: u16,
}

impl Repr {
    /// Parses a datagram carried from `src` to `dst`, verifying a non-zero checksum
    /// (RFC 1122 §4.1.3.4). Destination port 0 is reserved and rejected as malformed.
    pub fn parse<T: AsRef<[u8]> + ?Sized>(packet: &Packet<&T>, src: &Address, dst: &Address) -> Result<Repr> {
        packet.check_len()?;
        if packet.dst_port() == 0 {
            return Err(Error::Malformed);
        }
        if !packet.verify_checksum(src, dst) {
            return Err(Error::Checksum);
        }
        Ok(Repr { src_port: packet.src_port(), dst_port: packet.dst_port() })
    }

    /// The header length, 8.
    pub const fn header_len(&self) -> usize {
        HEADER_LEN
    }

    /// Header plus `payload_len` octets.
    pub const fn buffer_len(&self, payload_len: usize) -> usize {
        HEADER_LEN + payload_len
    }

    /// Writes the header with Length = 8 + `payload_len`, lets `emit_payload` fill the
    /// data, then computes the checksum. Panics if the buffer is shorter than
    /// 8 + `payload_len` or if that exceeds 65,535.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(
        &self,
        packet: &mut Packet<T>,
        src: &Address,
        dst: &Address,
        payload_len: usize,
        emit_payload: impl FnOnce(&mut [u8]),
    ) {
        let len = u16::try_from(HEADER_LEN + payload_len).expect("UDP datagram longer than 65,535 octets");
        packet.set_src_port(self.src_port);
        packet.set_dst_port(self.dst_port);
        packet.set_len(len);
        emit_payload(packet.payload_mut());
        packet.fill_checksum(src, dst);
    }

    /// Appends header and `payload` to `out`, checksum filled.
    pub fn encapsulate(&self, src: &Address, dst: &Address, payload: &[u8], out: &mut Vec<u8>) {
        let start = out.len();
        out.resize(start + HEADER_LEN + payload.len(), 0);
        self.emit(&mut Packet::new_unchecked(&mut out[start..]), src, dst, payload.len(), |p| {
            p.copy_from_slice(payload)
        });
    }

    /// The octets UDP adds (RFC 768), for `qoslab mtu`.
    pub fn overhead_fields(&self, _payload_len: usize) -> Vec<(&'static str, usize)> {
        vec![("source port", 2), ("destination port", 2), ("length", 2), ("checksum", 2)]
    }
}

impl fmt::Display for Repr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "UDP src={} dst={}", self.src_port, self.dst_port)
    }
}

#[cfg(test)]
mod test {
    use super::*;
    use proptest::prelude::*;

    const SRC: Address = Address::new(192, 168, 1, 1);
    const DST: Address = Address::new(192, 168, 1, 2);

    // Ports 49152 -> 53, length 12, data "abcd". Checksum by hand:
    // pseudo-header c0a8+0101+c0a8+0102+0011+000c = 0x1_8370;
    // header c000+0035+000c = 0xc041; data 6162+6364 = 0xc4c6.
    // 0x18370 + 0xc041 + 0xc4c6 = 0x3_0877 -> 0x087a; complement 0xf785.
    static PACKET_BYTES: [u8; 12] = [0xc0, 0x00, 0x00, 0x35, 0x00, 0x0c, 0xf7, 0x85, 0x61, 0x62, 0x63, 0x64];

    #[test]
    fn test_parse() {
        let packet = Packet::new_checked(&PACKET_BYTES[..]).unwrap();
        assert_eq!(packet.src_port(), 49152);
        assert_eq!(packet.dst_port(), 53);
        assert_eq!(packet.len(), 12);
        assert_eq!(packet.checksum(), 0xf785);
        assert!(packet.verify_checksum(&SRC, &DST));
        assert_eq!(packet.payload(), b"abcd");
        assert_eq!(Repr::parse(&packet, &SRC, &DST).unwrap(), Repr { src_port: 49152, dst_port: 53 });
    }

    #[test]
    fn test_emit() {
        let mut bytes = [0u8; 12];
        Repr { src_port: 49152, dst_port: 53 }
            .emit(&mut Packet::new_unchecked(&mut bytes[..]), &SRC, &DST, 4, |p| p.copy_from_slice(b"abcd"));
        assert_eq!(bytes, PACKET_BYTES);
        let mut v = vec![0xee];
        Repr { src_port: 49152, dst_port: 53 }.encapsulate(&SRC, &DST, b"abcd", &mut v);
        assert_eq!(&v[1..], &PACKET_BYTES);
    }

    #[test]
    fn test_zero_checksum() {
        let mut bytes = PACKET_BYTES;
        bytes[6] = 0;
        bytes[7] = 0;
        let p = Packet::new_checked(&bytes[..]).unwrap();
        assert!(p.verify_checksum(&SRC, &DST));
        // A sum that comes out zero is sent as 0xffff. Find data that makes it so:
        // choose the last data word to cancel the rest.
        let mut bytes = PACKET_BYTES;
        bytes[6..8].copy_from_slice(&[0, 0]);
        bytes[10..12].copy_from_slice(&[0, 0]);
        let partial =
            checksum::fold(checksum::accumulate(checksum::pseudo_header(SRC.octets(), DST.octets(), 17, 12), &bytes));
        // Adding !partial makes the sum 0xffff, so the checksum computes to zero.
        bytes[10..12].copy_from_slice(&(!partial).to_be_bytes());
        let mut p = Packet::new_unchecked(&mut bytes[..]);
        p.fill_checksum(&SRC, &DST);
        assert_eq!(p.checksum(), 0xffff);
        assert!(p.verify_checksum(&SRC, &DST));
    }

    #[test]
    fn test_errors() {
        assert_eq!(Packet::new_checked(&PACKET_BYTES[..7]).unwrap_err(), Error::Truncated);
        assert_eq!(Packet::new_checked(&PACKET_BYTES[..11]).unwrap_err(), Error::Truncated);
        let mut bad = PACKET_BYTES;
        bad[5] = 7;
        assert_eq!(Packet::new_checked(&bad[..]).unwrap_err(), Error::Malformed);
        let mut bad = PACKET_BYTES;
        bad[11] ^= 1;
        assert_eq!(Repr::parse(&Packet::new_unchecked(&bad[..]), &SRC, &DST).unwrap_err(), Error::Checksum);
        assert_eq!(
            Repr::parse(&Packet::new_unchecked(&PACKET_BYTES[..]), &SRC, &Address::new(192, 168, 1, 3)).unwrap_err(),
            Error::Checksum
        );
    }

    proptest! {
        #[test]
        fn roundtrip(src_port in any::<u16>(), dst_port in 1u16.., payload in proptest::collection::vec(any::<u8>(), 0..600),
                     s in any::<u32>(), d in any::<u32>()) {
            let (s, d) = (Address::from(s), Address::from(d));
            let repr = Repr { src_port, dst_port };
            let mut a = Vec::new();
            repr.encapsulate(&s, &d, &payload, &mut a);
            let p = Packet::new_checked(&a[..]).unwrap();
            let parsed = Repr::parse(&p, &s, &d).unwrap();
            prop_assert_eq!(parsed, repr);
            prop_assert_eq!(p.payload(), &payload[..]);
            let mut b = Vec::new();
            parsed.encapsulate(&s, &d, p.payload(), &mut b);
            prop_assert_eq!(a, b);
        }

        #[test]
        fn parse_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..40)) {
            if let Ok(p) = Packet::new_checked(&bytes[..]) {
                let _ = Repr::parse(&p, &SRC, &DST);
            }
        }
    }
}
