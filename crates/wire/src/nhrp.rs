//! NHRP packets (RFC 2332) as MPOA uses them for shortcut resolution.
//!
//! Standards a reader must know:
//!
//! * RFC 2332 §5.1 the 20-octet fixed header: ar$afn (NBMA address family; 3 = NSAP,
//!   the "Address Family Numbers" registry), ar$pro.type (0x0800 for IPv4), ar$pro.snap
//!   (5 octets, zero unless ar$pro.type is 0x0080), ar$hopcnt, ar$pktsz (the whole
//!   packet), ar$chksum (the IP checksum of the whole packet, RFC 1071), ar$extoff (0:
//!   no extensions), ar$op.version (1), ar$op.type, ar$shtl and ar$sstl (type-and-length
//!   octets of the source NBMA address and subaddress: bit 6 clear = NSAP, bits 5-0 the
//!   length).
//! * RFC 2332 §5.2.0.1 the common mandatory part: Src Proto Len, Dst Proto Len, Flags,
//!   Request ID, the source NBMA address and subaddress, source and destination
//!   protocol addresses, then Client Information Entries (§5.2.0.1: Code, Prefix
//!   Length, unused, MTU, Holding Time, Cli Addr T/L, Cli SAddr T/L, Cli Proto Len,
//!   Preference, then the client's NBMA address, subaddress and protocol address).
//! * af-mpoa-0087.000 §7.1 (MPOA packet formats): MPOA Resolution Request and Reply
//!   are NHRP packets with ar$op.type 134 and 135. MPOA's extensions (egress cache
//!   tag, ATM service category) are not modelled: ar$extoff is 0.
//! * RFC 2332 §5 / RFC 2684 §5.1: carried on a VC as LLC/SNAP with OUI 00-00-5E and
//!   PID 0x0003.
//!
//! [`Repr`] models IPv4 over NSAP-format ATM numbers without subaddresses, with at most
//! one CIE (a reply's answer).

use crate::checksum;
use crate::ipv4::Address as Ipv4Address;
use crate::lane::{AtmAddress, ATM_ADDRESS_LEN};
use crate::{Error, Result};

/// The fixed header's length, RFC 2332 §5.1.
pub const FIXED_LEN: usize = 20;
/// ar$afn for NSAP addresses (IANA Address Family Numbers: 3).
pub const AFN_NSAP: u16 = 3;
/// ar$op.version for NHRP (RFC 2332 §5.1).
pub const VERSION: u8 = 1;
/// The LLC/SNAP header of an NHRP packet: LLC AA-AA-03, OUI 00-00-5E, PID 0x0003.
pub const LLC_SNAP: [u8; 8] = [0xaa, 0xaa, 0x03, 0x00, 0x00, 0x5e, 0x00, 0x03];

crate::enum_with_unknown! {
    /// ar$op.type: RFC 2332 §5.1 and af-mpoa-0087.000 §7.1.
    pub enum Operation(u8) {
        ResolutionRequest = 1,
        ResolutionReply = 2,
        MpoaResolutionRequest = 134,
        MpoaResolutionReply = 135,
    }
}

/// RFC 2332 §5.2.0.1 CIE Code 0: success.
pub const CODE_SUCCESS: u8 = 0;
/// RFC 2332 §5.2.2: CIE Code 12, no binding exists.
pub const CODE_NO_BINDING: u8 = 12;

/// One Client Information Entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cie {
    pub code: u8,
    pub prefix_len: u8,
    pub mtu: u16,
    /// Seconds.
    pub holding_time: u16,
    pub client_nbma: Option<AtmAddress>,
    pub client_ip: Option<Ipv4Address>,
}

/// An NHRP (or MPOA) resolution request or reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Repr {
    pub operation: Operation,
    pub hop_count: u8,
    pub flags: u16,
    pub request_id: u32,
    pub source_nbma: AtmAddress,
    pub source_ip: Ipv4Address,
    pub destination_ip: Ipv4Address,
    pub cie: Option<Cie>,
}

fn tl(a: Option<AtmAddress>) -> u8 {
    if a.is_some() {
        ATM_ADDRESS_LEN as u8
    } else {
        0
    }
}

impl Repr {
    pub fn buffer_len(&self) -> usize {
        FIXED_LEN
            + 8
            + ATM_ADDRESS_LEN
            + 8
            + self.cie.map_or(0, |c| 12 + usize::from(tl(c.client_nbma)) + if c.client_ip.is_some() { 4 } else { 0 })
    }

    /// The packet's octets, checksum filled in.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut b = Vec::with_capacity(self.buffer_len());
        b.extend_from_slice(&AFN_NSAP.to_be_bytes());
        b.extend_from_slice(&0x0800u16.to_be_bytes());
        b.extend_from_slice(&[0; 5]);
        b.push(self.hop_count);
        b.extend_from_slice(&(self.buffer_len() as u16).to_be_bytes());
        b.extend_from_slice(&[0, 0, 0, 0]); // checksum, extoff
        b.extend_from_slice(&[VERSION, u8::from(self.operation), ATM_ADDRESS_LEN as u8, 0]);
        b.extend_from_slice(&[4, 4]);
        b.extend_from_slice(&self.flags.to_be_bytes());
        b.extend_from_slice(&self.request_id.to_be_bytes());
        b.extend_from_slice(&self.source_nbma.0);
        b.extend_from_slice(&self.source_ip.octets());
        b.extend_from_slice(&self.destination_ip.octets());
        if let Some(c) = self.cie {
            b.extend_from_slice(&[c.code, c.prefix_len, 0, 0]);
            b.extend_from_slice(&c.mtu.to_be_bytes());
            b.extend_from_slice(&c.holding_time.to_be_bytes());
            b.extend_from_slice(&[tl(c.client_nbma), 0, if c.client_ip.is_some() { 4 } else { 0 }, 0]);
            if let Some(a) = c.client_nbma {
                b.extend_from_slice(&a.0);
            }
            if let Some(ip) = c.client_ip {
                b.extend_from_slice(&ip.octets());
            }
        }
        let sum = checksum::checksum(&b);
        b[12..14].copy_from_slice(&sum.to_be_bytes());
        b
    }

    /// Parses a packet; a bad checksum or version is `Err(Malformed)`, another address
    /// family, subaddresses or E.164 numbers `Err(Unsupported)`.
    pub fn parse(b: &[u8]) -> Result<Repr> {
        if b.len() < FIXED_LEN + 8 {
            return Err(Error::Truncated);
        }
        let size = usize::from(u16::from_be_bytes([b[10], b[11]]));
        if size < FIXED_LEN + 8 || size > b.len() {
            return Err(Error::Truncated);
        }
        let b = &b[..size];
        if b[16] != VERSION || checksum::checksum(b) != 0 {
            return Err(Error::Malformed);
        }
        if u16::from_be_bytes([b[0], b[1]]) != AFN_NSAP
            || u16::from_be_bytes([b[2], b[3]]) != 0x0800
            || b[18] != ATM_ADDRESS_LEN as u8
            || b[19] != 0
            || b[20] != 4
            || b[21] != 4
        {
            return Err(Error::Unsupported);
        }
        let ip = |at: usize| -> Result<Ipv4Address> {
            b.get(at..at + 4).map(|s| Ipv4Address::new(s[0], s[1], s[2], s[3])).ok_or(Error::Truncated)
        };
        let mut at = FIXED_LEN + 8;
        let source_nbma = AtmAddress::from_bytes(b.get(at..at + ATM_ADDRESS_LEN).ok_or(Error::Truncated)?);
        at += ATM_ADDRESS_LEN;
        let source_ip = ip(at)?;
        let destination_ip = ip(at + 4)?;
        at += 8;
        let cie = if at < b.len() {
            let h = b.get(at..at + 12).ok_or(Error::Truncated)?;
            if h[9] != 0 || h[8] & 0x40 != 0 || !matches!(h[8], 0 | 20) || !matches!(h[10], 0 | 4) {
                return Err(Error::Unsupported);
            }
            at += 12;
            let client_nbma = if h[8] == 20 {
                let a = AtmAddress::from_bytes(b.get(at..at + 20).ok_or(Error::Truncated)?);
                at += 20;
                Some(a)
            } else {
                None
            };
            let client_ip = if h[10] == 4 { Some(ip(at)?) } else { None };
            Some(Cie {
                code: h[0],
                prefix_len: h[1],
                mtu: u16::from_be_bytes([h[4], h[5]]),
                holding_time: u16::from_be_bytes([h[6], h[7]]),
                client_nbma,
                client_ip,
            })
        } else {
            None
        };
        Ok(Repr {
            operation: Operation::from(b[17]),
            hop_count: b[9],
            flags: u16::from_be_bytes([b[22], b[23]]),
            request_id: u32::from_be_bytes([b[24], b[25], b[26], b[27]]),
            source_nbma,
            source_ip,
            destination_ip,
            cie,
        })
    }
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn mpoa_resolution_request_bytes() {
        let src = AtmAddress([0x47; 20]);
        let r = Repr {
            operation: Operation::MpoaResolutionRequest,
            hop_count: 1,
            flags: 0,
            request_id: 0x0102_0304,
            source_nbma: src,
            source_ip: Ipv4Address::new(10, 0, 1, 1),
            destination_ip: Ipv4Address::new(10, 0, 2, 1),
            cie: None,
        };
        let b = r.to_bytes();
        // 20 fixed + 8 mandatory + 20 NBMA + 4 + 4 = 56 octets.
        assert_eq!(b.len(), 56);
        // ar$afn 3 (NSAP), ar$pro.type 0x0800, snap zero, hopcnt 1, pktsz 56.
        assert_eq!(&b[..12], &[0, 3, 8, 0, 0, 0, 0, 0, 0, 1, 0, 56][..]);
        // extoff 0, version 1, op 134, shtl 20 (NSAP), sstl 0, proto lens 4/4.
        assert_eq!(&b[14..23], &[0, 0, 1, 134, 20, 0, 4, 4, 0][..]);
        assert_eq!(&b[24..28], &[1, 2, 3, 4]);
        assert_eq!(&b[48..56], &[10, 0, 1, 1, 10, 0, 2, 1]);
        // The checksum is RFC 1071's over the whole packet: recomputed independently.
        let mut sum: u32 = 0;
        for (i, pair) in b.chunks(2).enumerate() {
            if i != 6 {
                sum += u32::from(u16::from_be_bytes([pair[0], pair[1]]));
            }
        }
        while sum > 0xffff {
            sum = (sum & 0xffff) + (sum >> 16);
        }
        assert_eq!(u16::from_be_bytes([b[12], b[13]]), !(sum as u16));
        assert_eq!(Repr::parse(&b).unwrap(), r);
    }

    #[test]
    fn reply_with_cie_round_trips_and_corruption_is_caught() {
        let r = Repr {
            operation: Operation::MpoaResolutionReply,
            hop_count: 1,
            flags: 0,
            request_id: 7,
            source_nbma: AtmAddress([1; 20]),
            source_ip: Ipv4Address::new(10, 0, 1, 1),
            destination_ip: Ipv4Address::new(10, 0, 2, 1),
            cie: Some(Cie {
                code: CODE_SUCCESS,
                prefix_len: 32,
                mtu: 1500,
                holding_time: 1200,
                client_nbma: Some(AtmAddress([9; 20])),
                client_ip: Some(Ipv4Address::new(10, 0, 2, 1)),
            }),
        };
        let mut b = r.to_bytes();
        assert_eq!(b.len(), 56 + 12 + 20 + 4);
        // CIE: code, prefix, unused, MTU 1500, holding 1200 s, T/L 20, 0, 4, preference.
        assert_eq!(&b[56..68], &[0, 32, 0, 0, 0x05, 0xdc, 0x04, 0xb0, 20, 0, 4, 0][..]);
        assert_eq!(Repr::parse(&b).unwrap(), r);
        b[60] ^= 1;
        assert_eq!(Repr::parse(&b), Err(Error::Malformed));
        assert_eq!(Repr::parse(&b[..30]), Err(Error::Truncated));
    }
}
