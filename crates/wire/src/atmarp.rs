//! ATMARP and InATMARP: address resolution in a Classical IP logical IP subnet.
//!
//! Standards a reader must know:
//!
//! * RFC 2225 (Classical IP and ARP over ATM) §8.7 "ATMARP and InATMARP Packet Format":
//!   after the fixed part (hrd, pro, shtl, sstl, op, spln, thtl, tstl, tpln) come the
//!   source ATM number, source ATM subaddress, source protocol address, then the same
//!   three for the target, each as long as its type-and-length octet says.
//!   §8.7.1: ar$hrd is 19 (ATM Forum address family); §8.7.2 the opcodes
//!   (1 request, 2 reply, 8 InATMARP request, 9 InATMARP reply, 10 NAK);
//!   §8.7.4 the type-and-length octet: bit 7 reserved (0), bit 6 the address type
//!   (0 ATM Forum NSAPA format, 1 E.164), bits 5–0 the length in octets.
//! * RFC 2225 §8.7 and RFC 2684 §4.1: carried on the VC as LLC/SNAP with OUI 00-00-00
//!   and PID 0x0806 (the ARP EtherType).
//! * ATM Forum UNI 3.1 §5.1.3.1: the 20-octet NSAP-format ATM address.
//!
//! [`Repr`] models IPv4 over NSAP-format ATM numbers without subaddresses, the form a
//! LIS of ATM-attached hosts uses; a zero-length address field (an unknown target
//! ATM number in a request, an InATMARP request's unknown target IP) is `None`. Any
//! other combination parses as `Err(Unsupported)`.

use crate::ethernet::EtherType;
use crate::ipv4::Address as Ipv4Address;
use crate::lane::{AtmAddress, ATM_ADDRESS_LEN};
use crate::{Error, Result};

/// RFC 2225 §8.7.1: ar$hrd for the ATM Forum address family.
pub const HARDWARE_ATM_FORUM: u16 = 19;

crate::enum_with_unknown! {
    /// ar$op (RFC 2225 §8.7.2).
    pub enum Operation(u16) {
        Request = 1,
        Reply = 2,
        InRequest = 8,
        InReply = 9,
        Nak = 10,
    }
}

/// The fixed part: hrd 2, pro 2, shtl 1, sstl 1, op 2, spln 1, thtl 1, tstl 1, tpln 1.
pub const FIXED_LEN: usize = 12;
/// RFC 2225 §8.7.4: the type bit of a type-and-length octet (set: E.164).
pub const TL_E164: u8 = 0x40;
/// RFC 2225 §8.7.4: the length bits of a type-and-length octet.
pub const TL_LEN_MASK: u8 = 0x3f;

/// Byte ranges of the fixed fields (RFC 2225 §8.7).
pub mod field {
    use crate::Field;
    pub const HRD: Field = 0..2;
    pub const PRO: Field = 2..4;
    pub const SHTL: usize = 4;
    pub const SSTL: usize = 5;
    pub const OP: Field = 6..8;
    pub const SPLN: usize = 8;
    pub const THTL: usize = 9;
    pub const TSTL: usize = 10;
    pub const TPLN: usize = 11;
    /// The variable part starts here.
    pub const ADDRESSES: usize = 12;
}

/// A view over an ATMARP packet.
#[derive(Debug, Clone)]
pub struct Packet<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Packet<T> {
    pub const fn new_unchecked(buffer: T) -> Packet<T> {
        Packet { buffer }
    }

    /// A view after checking that the fixed part and every address the lengths name
    /// are present.
    pub fn new_checked(buffer: T) -> Result<Packet<T>> {
        let p = Packet::new_unchecked(buffer);
        p.check_len()?;
        Ok(p)
    }

    pub fn check_len(&self) -> Result<()> {
        let b = self.buffer.as_ref();
        if b.len() < FIXED_LEN || b.len() < FIXED_LEN + self.addresses_len() {
            return Err(Error::Truncated);
        }
        Ok(())
    }

    fn addresses_len(&self) -> usize {
        let b = self.buffer.as_ref();
        [field::SHTL, field::SSTL, field::THTL, field::TSTL]
            .iter()
            .map(|&i| usize::from(b[i] & TL_LEN_MASK))
            .sum::<usize>()
            + usize::from(b[field::SPLN])
            + usize::from(b[field::TPLN])
    }

    /// Octets the packet takes (fixed part and addresses).
    pub fn total_len(&self) -> usize {
        FIXED_LEN + self.addresses_len()
    }

    pub fn hardware(&self) -> u16 {
        u16::from_be_bytes([self.buffer.as_ref()[0], self.buffer.as_ref()[1]])
    }
    pub fn protocol(&self) -> EtherType {
        EtherType::from(u16::from_be_bytes([self.buffer.as_ref()[2], self.buffer.as_ref()[3]]))
    }
    pub fn operation(&self) -> Operation {
        let b = self.buffer.as_ref();
        Operation::from(u16::from_be_bytes([b[6], b[7]]))
    }
    pub fn shtl(&self) -> u8 {
        self.buffer.as_ref()[field::SHTL]
    }
    pub fn sstl(&self) -> u8 {
        self.buffer.as_ref()[field::SSTL]
    }
    pub fn spln(&self) -> u8 {
        self.buffer.as_ref()[field::SPLN]
    }
    pub fn thtl(&self) -> u8 {
        self.buffer.as_ref()[field::THTL]
    }
    pub fn tstl(&self) -> u8 {
        self.buffer.as_ref()[field::TSTL]
    }
    pub fn tpln(&self) -> u8 {
        self.buffer.as_ref()[field::TPLN]
    }

    /// The six variable fields in order: sha, ssa, spa, tha, tsa, tpa.
    pub fn addresses(&self) -> [&[u8]; 6] {
        let b = self.buffer.as_ref();
        let lens = [
            usize::from(self.shtl() & TL_LEN_MASK),
            usize::from(self.sstl() & TL_LEN_MASK),
            usize::from(self.spln()),
            usize::from(self.thtl() & TL_LEN_MASK),
            usize::from(self.tstl() & TL_LEN_MASK),
            usize::from(self.tpln()),
        ];
        let mut at = field::ADDRESSES;
        let mut out: [&[u8]; 6] = [&[]; 6];
        for (i, len) in lens.into_iter().enumerate() {
            out[i] = &b[at..at + len];
            at += len;
        }
        out
    }
}

/// An ATMARP packet of an IPv4 LIS with NSAP-format ATM numbers (module doc).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Repr {
    pub operation: Operation,
    pub source_atm: Option<AtmAddress>,
    pub source_ip: Option<Ipv4Address>,
    pub target_atm: Option<AtmAddress>,
    pub target_ip: Option<Ipv4Address>,
}

fn atm_of(bytes: &[u8], tl: u8) -> Result<Option<AtmAddress>> {
    match bytes.len() {
        0 => Ok(None),
        ATM_ADDRESS_LEN if tl & TL_E164 == 0 => Ok(Some(AtmAddress::from_bytes(bytes))),
        _ => Err(Error::Unsupported),
    }
}

fn ip_of(bytes: &[u8]) -> Result<Option<Ipv4Address>> {
    match bytes.len() {
        0 => Ok(None),
        4 => Ok(Some(Ipv4Address::new(bytes[0], bytes[1], bytes[2], bytes[3]))),
        _ => Err(Error::Unsupported),
    }
}

impl Repr {
    pub fn parse<T: AsRef<[u8]> + ?Sized>(packet: &Packet<&T>) -> Result<Repr> {
        packet.check_len()?;
        if packet.hardware() != HARDWARE_ATM_FORUM || packet.protocol() != EtherType::Ipv4 {
            return Err(Error::Unsupported);
        }
        // Bit 7 of each type-and-length octet is reserved and must be zero (§8.7.4).
        if [packet.shtl(), packet.sstl(), packet.thtl(), packet.tstl()].iter().any(|tl| tl & 0x80 != 0) {
            return Err(Error::Malformed);
        }
        let [sha, ssa, spa, tha, tsa, tpa] = packet.addresses();
        if !ssa.is_empty() || !tsa.is_empty() {
            return Err(Error::Unsupported);
        }
        Ok(Repr {
            operation: packet.operation(),
            source_atm: atm_of(sha, packet.shtl())?,
            source_ip: ip_of(spa)?,
            target_atm: atm_of(tha, packet.thtl())?,
            target_ip: ip_of(tpa)?,
        })
    }

    pub fn buffer_len(&self) -> usize {
        let atm = |a: &Option<AtmAddress>| if a.is_some() { ATM_ADDRESS_LEN } else { 0 };
        let ip = |a: &Option<Ipv4Address>| if a.is_some() { 4 } else { 0 };
        FIXED_LEN + atm(&self.source_atm) + ip(&self.source_ip) + atm(&self.target_atm) + ip(&self.target_ip)
    }

    /// Writes the packet into the first [`buffer_len`](Self::buffer_len) octets.
    pub fn emit(&self, buffer: &mut [u8]) {
        let b = &mut buffer[..self.buffer_len()];
        b[field::HRD].copy_from_slice(&HARDWARE_ATM_FORUM.to_be_bytes());
        b[field::PRO].copy_from_slice(&u16::from(EtherType::Ipv4).to_be_bytes());
        let tl = |a: &Option<AtmAddress>| if a.is_some() { ATM_ADDRESS_LEN as u8 } else { 0 };
        let pl = |a: &Option<Ipv4Address>| if a.is_some() { 4u8 } else { 0 };
        b[field::SHTL] = tl(&self.source_atm);
        b[field::SSTL] = 0;
        b[field::OP].copy_from_slice(&u16::from(self.operation).to_be_bytes());
        b[field::SPLN] = pl(&self.source_ip);
        b[field::THTL] = tl(&self.target_atm);
        b[field::TSTL] = 0;
        b[field::TPLN] = pl(&self.target_ip);
        let mut at = field::ADDRESSES;
        let mut put = |bytes: &[u8]| {
            b[at..at + bytes.len()].copy_from_slice(bytes);
            at += bytes.len();
        };
        if let Some(a) = &self.source_atm {
            put(&a.0);
        }
        if let Some(a) = &self.source_ip {
            put(&a.octets());
        }
        if let Some(a) = &self.target_atm {
            put(&a.0);
        }
        if let Some(a) = &self.target_ip {
            put(&a.octets());
        }
    }

    /// The packet as bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut v = vec![0; self.buffer_len()];
        self.emit(&mut v);
        v
    }
}

#[cfg(test)]
mod test {
    use super::*;

    fn nsap(last: u8) -> AtmAddress {
        // An ICD-format NSAP (AFI 0x47), ESI 02:00:00:00:00:xx, selector 0.
        let mut a = [0u8; 20];
        a[0] = 0x47;
        a[1] = 0x00;
        a[2] = 0x05;
        a[13..19].copy_from_slice(&[0x02, 0, 0, 0, 0, last]);
        AtmAddress(a)
    }

    /// An ATMARP request from 192.0.2.1 (ATM number nsap(1)) for 192.0.2.2, written
    /// field by field from RFC 2225 §8.7.
    static REQUEST_BYTES: [u8; 12 + 20 + 4 + 4] = [
        0x00, 0x13, // ar$hrd 19
        0x08, 0x00, // ar$pro IPv4
        0x14, // ar$shtl: NSAPA, 20 octets
        0x00, // ar$sstl: no subaddress
        0x00, 0x01, // ar$op request
        0x04, // ar$spln
        0x00, // ar$thtl: target ATM number unknown
        0x00, // ar$tstl
        0x04, // ar$tpln
        0x47, 0x00, 0x05, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x02, 0, 0, 0, 0, 0x01, 0x00, // ar$sha
        192, 0, 2, 1, // ar$spa
        192, 0, 2, 2, // ar$tpa
    ];

    fn request() -> Repr {
        Repr {
            operation: Operation::Request,
            source_atm: Some(nsap(1)),
            source_ip: Some(Ipv4Address::new(192, 0, 2, 1)),
            target_atm: None,
            target_ip: Some(Ipv4Address::new(192, 0, 2, 2)),
        }
    }

    #[test]
    fn test_parse() {
        let p = Packet::new_checked(&REQUEST_BYTES[..]).unwrap();
        assert_eq!(p.total_len(), REQUEST_BYTES.len());
        assert_eq!(Repr::parse(&p).unwrap(), request());
    }

    #[test]
    fn test_emit() {
        assert_eq!(request().to_bytes(), REQUEST_BYTES.to_vec());
    }

    #[test]
    fn reply_and_inatmarp_round_trip() {
        let reply =
            Repr { operation: Operation::Reply, target_atm: Some(nsap(1)), source_atm: Some(nsap(2)), ..request() };
        let inreq = Repr {
            operation: Operation::InRequest,
            source_atm: Some(nsap(1)),
            target_ip: None,
            target_atm: Some(nsap(2)),
            ..request()
        };
        for r in [reply, inreq] {
            let bytes = r.to_bytes();
            assert_eq!(bytes.len(), r.buffer_len());
            let again = Repr::parse(&Packet::new_checked(&bytes[..]).unwrap()).unwrap();
            assert_eq!(again, r);
            assert_eq!(again.to_bytes(), bytes);
        }
    }

    #[test]
    fn truncated_and_foreign_never_panic() {
        for n in 0..REQUEST_BYTES.len() {
            assert!(Packet::new_checked(&REQUEST_BYTES[..n]).is_err(), "{n} octets");
        }
        let mut e164 = REQUEST_BYTES;
        e164[field::SHTL] |= TL_E164;
        assert_eq!(Repr::parse(&Packet::new_checked(&e164[..]).unwrap()), Err(Error::Unsupported));
        let mut reserved = REQUEST_BYTES;
        reserved[field::SHTL] |= 0x80;
        assert!(
            Packet::new_checked(&reserved[..]).is_err() || Repr::parse(&Packet::new_unchecked(&reserved[..])).is_err()
        );
        let mut ethernet = REQUEST_BYTES;
        ethernet[1] = 1;
        assert_eq!(Repr::parse(&Packet::new_checked(&ethernet[..]).unwrap()), Err(Error::Unsupported));
    }
}
