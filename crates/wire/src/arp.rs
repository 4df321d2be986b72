//! The Address Resolution Protocol.
//!
//! Standards a reader must know:
//!
//! * RFC 826 (An Ethernet Address Resolution Protocol), "Packet format": hardware
//!   type, protocol type, hardware and protocol address lengths, opcode, then sender
//!   and target hardware and protocol addresses, lengths as the header says.
//! * RFC 5227 (IPv4 address conflict detection) for the probe and announcement forms
//!   (a request with sender protocol address 0.0.0.0, or with sender = target).
//! * IANA "arp-parameters" for the hardware type and opcode numbers (RFC 903 adds the
//!   reverse opcodes 3 and 4).
//!
//! The view reads any hardware and protocol lengths; [`Repr`] models Ethernet/IPv4,
//! the only combination qoslab uses, and returns `Err(Unsupported)` for the others.

use crate::ethernet::{Address as EthernetAddress, EtherType};
use crate::ipv4::Address as Ipv4Address;
use crate::{Error, Result};

crate::enum_with_unknown! {
    /// ar$hrd, the hardware address space (RFC 826; IANA arp-parameters).
    pub enum Hardware(u16) {
        /// 10 Mb/s Ethernet, used for all IEEE 802.3 and 802.11 networks.
        Ethernet = 1,
        /// IEEE 802 networks (RFC 1042).
        Ieee802 = 6,
    }
}

crate::enum_with_unknown! {
    /// ar$op (RFC 826; RFC 903 for the reverse operations).
    pub enum Operation(u16) {
        Request = 1,
        Reply = 2,
        /// RFC 903 RARP request.
        ReverseRequest = 3,
        /// RFC 903 RARP reply.
        ReverseReply = 4,
    }
}

/// The fixed part: hrd (2), pro (2), hln (1), pln (1), op (2) (RFC 826).
pub const FIXED_LEN: usize = 8;
/// An Ethernet/IPv4 ARP packet: 8 + 2 × (6 + 4) = 28 octets (RFC 826).
pub const ETHERNET_IPV4_LEN: usize = 28;

/// Byte ranges of the ARP fields (RFC 826 "Packet format").
pub mod field {
    use crate::Field;
    /// ar$hrd, hardware type.
    pub const HTYPE: Field = 0..2;
    /// ar$pro, protocol type (an EtherType).
    pub const PTYPE: Field = 2..4;
    /// ar$hln, hardware address length.
    pub const HLEN: usize = 4;
    /// ar$pln, protocol address length.
    pub const PLEN: usize = 5;
    /// ar$op, opcode.
    pub const OPER: Field = 6..8;

    /// ar$sha, sender hardware address.
    pub const fn sha(hlen: u8, _plen: u8) -> Field {
        let start = OPER.end;
        start..(start + hlen as usize)
    }
    /// ar$spa, sender protocol address.
    pub const fn spa(hlen: u8, plen: u8) -> Field {
        let start = sha(hlen, plen).end;
        start..(start + plen as usize)
    }
    /// ar$tha, target hardware address.
    pub const fn tha(hlen: u8, plen: u8) -> Field {
        let start = spa(hlen, plen).end;
        start..(start + hlen as usize)
    }
    /// ar$tpa, target protocol address.
    pub const fn tpa(hlen: u8, plen: u8) -> Field {
        let start = tha(hlen, plen).end;
        start..(start + plen as usize)
    }
}

/// A checked view over an ARP packet.
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

    /// `Err(Truncated)` unless the buffer holds the fixed part and the four addresses
    /// whose lengths it states.
    pub fn check_len(&self) -> Result<()> {
        let len = self.buffer.as_ref().len();
        if len < FIXED_LEN || len < field::tpa(self.hardware_len(), self.protocol_len()).end {
            Err(Error::Truncated)
        } else {
            Ok(())
        }
    }

    pub fn into_inner(self) -> T {
        self.buffer
    }

    fn u16_at(&self, f: crate::Field) -> u16 {
        let d = &self.buffer.as_ref()[f];
        u16::from_be_bytes([d[0], d[1]])
    }

    pub fn hardware_type(&self) -> Hardware {
        Hardware::from(self.u16_at(field::HTYPE))
    }

    pub fn protocol_type(&self) -> EtherType {
        EtherType::from(self.u16_at(field::PTYPE))
    }

    pub fn hardware_len(&self) -> u8 {
        self.buffer.as_ref()[field::HLEN]
    }

    pub fn protocol_len(&self) -> u8 {
        self.buffer.as_ref()[field::PLEN]
    }

    pub fn operation(&self) -> Operation {
        Operation::from(self.u16_at(field::OPER))
    }

    pub fn source_hardware_addr(&self) -> &[u8] {
        &self.buffer.as_ref()[field::sha(self.hardware_len(), self.protocol_len())]
    }

    pub fn source_protocol_addr(&self) -> &[u8] {
        &self.buffer.as_ref()[field::spa(self.hardware_len(), self.protocol_len())]
    }

    pub fn target_hardware_addr(&self) -> &[u8] {
        &self.buffer.as_ref()[field::tha(self.hardware_len(), self.protocol_len())]
    }

    pub fn target_protocol_addr(&self) -> &[u8] {
        &self.buffer.as_ref()[field::tpa(self.hardware_len(), self.protocol_len())]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    fn set_u16_at(&mut self, f: crate::Field, value: u16) {
        self.buffer.as_mut()[f].copy_from_slice(&value.to_be_bytes());
    }

    pub fn set_hardware_type(&mut self, value: Hardware) {
        self.set_u16_at(field::HTYPE, u16::from(value));
    }

    pub fn set_protocol_type(&mut self, value: EtherType) {
        self.set_u16_at(field::PTYPE, u16::from(value));
    }

    pub fn set_hardware_len(&mut self, value: u8) {
        self.buffer.as_mut()[field::HLEN] = value;
    }

    pub fn set_protocol_len(&mut self, value: u8) {
        self.buffer.as_mut()[field::PLEN] = value;
    }

    pub fn set_operation(&mut self, value: Operation) {
        self.set_u16_at(field::OPER, u16::from(value));
    }

    /// Set the lengths first; panics if `value` is not `hardware_len` octets.
    pub fn set_source_hardware_addr(&mut self, value: &[u8]) {
        let f = field::sha(self.hardware_len(), self.protocol_len());
        self.buffer.as_mut()[f].copy_from_slice(value);
    }

    pub fn set_source_protocol_addr(&mut self, value: &[u8]) {
        let f = field::spa(self.hardware_len(), self.protocol_len());
        self.buffer.as_mut()[f].copy_from_slice(value);
    }

    pub fn set_target_hardware_addr(&mut self, value: &[u8]) {
        let f = field::tha(self.hardware_len(), self.protocol_len());
        self.buffer.as_mut()[f].copy_from_slice(value);
    }

    pub fn set_target_protocol_addr(&mut self, value: &[u8]) {
        let f = field::tpa(self.hardware_len(), self.protocol_len());
        self.buffer.as_mut()[f].copy_from_slice(value);
    }
}

impl<T: AsRef<[u8]>> AsRef<[u8]> for Packet<T> {
    fn as_ref(&self) -> &[u8] {
        self.buffer.as_ref()
    }
}

/// A high-level ARP packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Repr {
    /// Hardware type 1 (Ethernet), protocol type 0x0800, lengths 6 and 4 (RFC 826).
    EthernetIpv4 {
        operation: Operation,
        source_hardware_addr: EthernetAddress,
        source_protocol_addr: Ipv4Address,
        target_hardware_addr: EthernetAddress,
        target_protocol_addr: Ipv4Address,
    },
}

impl Repr {
    /// A "who has `target` tell `source`" request (RFC 826): target hardware address zero.
    pub fn request(
        source_hardware_addr: EthernetAddress,
        source_protocol_addr: Ipv4Address,
        target_protocol_addr: Ipv4Address,
    ) -> Repr {
        Repr::EthernetIpv4 {
            operation: Operation::Request,
            source_hardware_addr,
            source_protocol_addr,
            target_hardware_addr: EthernetAddress::default(),
            target_protocol_addr,
        }
    }

    /// The reply to `request` from the holder of its target protocol address
    /// (RFC 826 "Packet Reception": swap sender and target, fill in our hardware address).
    pub fn reply_to(request: &Repr, our_hardware_addr: EthernetAddress) -> Repr {
        let Repr::EthernetIpv4 { source_hardware_addr, source_protocol_addr, target_protocol_addr, .. } = *request;
        Repr::EthernetIpv4 {
            operation: Operation::Reply,
            source_hardware_addr: our_hardware_addr,
            source_protocol_addr: target_protocol_addr,
            target_hardware_addr: source_hardware_addr,
            target_protocol_addr: source_protocol_addr,
        }
    }

    /// `Err(Unsupported)` for any hardware/protocol combination but Ethernet/IPv4 with
    /// lengths 6/4.
    pub fn parse<T: AsRef<[u8]> + ?Sized>(packet: &Packet<&T>) -> Result<Repr> {
        packet.check_len()?;
        match (packet.hardware_type(), packet.protocol_type(), packet.hardware_len(), packet.protocol_len()) {
            (Hardware::Ethernet, EtherType::Ipv4, 6, 4) => {
                let spa = packet.source_protocol_addr();
                let tpa = packet.target_protocol_addr();
                Ok(Repr::EthernetIpv4 {
                    operation: packet.operation(),
                    source_hardware_addr: EthernetAddress::from_bytes(packet.source_hardware_addr()),
                    source_protocol_addr: Ipv4Address::new(spa[0], spa[1], spa[2], spa[3]),
                    target_hardware_addr: EthernetAddress::from_bytes(packet.target_hardware_addr()),
                    target_protocol_addr: Ipv4Address::new(tpa[0], tpa[1], tpa[2], tpa[3]),
                })
            }
            _ => Err(Error::Unsupported),
        }
    }

    pub const fn buffer_len(&self) -> usize {
        match self {
            Repr::EthernetIpv4 { .. } => ETHERNET_IPV4_LEN,
        }
    }

    pub const fn header_len(&self) -> usize {
        self.buffer_len()
    }

    /// Writes the packet; panics if the buffer is shorter than [`Self::buffer_len`].
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]> + ?Sized>(&self, packet: &mut Packet<&mut T>) {
        let Repr::EthernetIpv4 {
            operation,
            source_hardware_addr,
            source_protocol_addr,
            target_hardware_addr,
            target_protocol_addr,
        } = *self;
        packet.set_hardware_type(Hardware::Ethernet);
        packet.set_protocol_type(EtherType::Ipv4);
        packet.set_hardware_len(6);
        packet.set_protocol_len(4);
        packet.set_operation(operation);
        packet.set_source_hardware_addr(&source_hardware_addr.0);
        packet.set_source_protocol_addr(&source_protocol_addr.octets());
        packet.set_target_hardware_addr(&target_hardware_addr.0);
        packet.set_target_protocol_addr(&target_protocol_addr.octets());
    }

    /// Named byte counts of the packet; ARP carries no payload.
    pub fn overhead_fields(&self, _payload_len: usize) -> Vec<(&'static str, usize)> {
        vec![
            ("hardware type", 2),
            ("protocol type", 2),
            ("hardware length", 1),
            ("protocol length", 1),
            ("operation", 2),
            ("sender hardware address", 6),
            ("sender protocol address", 4),
            ("target hardware address", 6),
            ("target protocol address", 4),
        ]
    }
}

#[cfg(test)]
mod test {
    use super::*;
    use proptest::prelude::*;

    // "Who has 192.0.2.2? Tell 192.0.2.1" from 00:11:22:33:44:55, laid out by hand
    // from RFC 826's packet format.
    static PACKET_BYTES: [u8; 28] = [
        0x00, 0x01, // hrd: Ethernet
        0x08, 0x00, // pro: IPv4
        0x06, 0x04, // hln, pln
        0x00, 0x01, // op: request
        0x00, 0x11, 0x22, 0x33, 0x44, 0x55, // sha
        192, 0, 2, 1, // spa
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, // tha
        192, 0, 2, 2, // tpa
    ];

    fn repr() -> Repr {
        Repr::request(
            EthernetAddress([0x00, 0x11, 0x22, 0x33, 0x44, 0x55]),
            Ipv4Address::new(192, 0, 2, 1),
            Ipv4Address::new(192, 0, 2, 2),
        )
    }

    #[test]
    fn test_parse() {
        let p = Packet::new_checked(&PACKET_BYTES[..]).unwrap();
        assert_eq!(p.hardware_type(), Hardware::Ethernet);
        assert_eq!(p.protocol_type(), EtherType::Ipv4);
        assert_eq!(p.operation(), Operation::Request);
        assert_eq!(p.target_protocol_addr(), &[192, 0, 2, 2]);
        assert_eq!(Repr::parse(&p).unwrap(), repr());
    }

    #[test]
    fn test_emit() {
        let mut buf = [0xffu8; 28];
        repr().emit(&mut Packet::new_unchecked(&mut buf[..]));
        assert_eq!(buf, PACKET_BYTES);
    }

    #[test]
    fn test_reply() {
        let mac = EthernetAddress([2, 0, 0, 0, 0, 2]);
        let reply = Repr::reply_to(&repr(), mac);
        assert_eq!(
            reply,
            Repr::EthernetIpv4 {
                operation: Operation::Reply,
                source_hardware_addr: mac,
                source_protocol_addr: Ipv4Address::new(192, 0, 2, 2),
                target_hardware_addr: EthernetAddress([0x00, 0x11, 0x22, 0x33, 0x44, 0x55]),
                target_protocol_addr: Ipv4Address::new(192, 0, 2, 1),
            }
        );
    }

    #[test]
    fn test_errors() {
        assert_eq!(Packet::new_checked(&PACKET_BYTES[..27]), Err(Error::Truncated));
        assert_eq!(Packet::new_checked(&PACKET_BYTES[..7]), Err(Error::Truncated));
        let mut bytes = PACKET_BYTES;
        bytes[4] = 8; // hln 8: now 32 bytes are needed
        assert_eq!(Packet::new_checked(&bytes[..]), Err(Error::Truncated));
        let mut bytes = PACKET_BYTES;
        bytes[3] = 0xdd; // pro 0x08dd
        assert_eq!(Repr::parse(&Packet::new_checked(&bytes[..]).unwrap()), Err(Error::Unsupported));
        let mut bytes = PACKET_BYTES;
        bytes[7] = 9;
        let p = Packet::new_checked(&bytes[..]).unwrap();
        assert_eq!(p.operation(), Operation::Unknown(9));
        assert_eq!(Repr::parse(&p).unwrap().buffer_len(), 28);
        assert_eq!(repr().overhead_fields(0).iter().map(|x| x.1).sum::<usize>(), ETHERNET_IPV4_LEN);
    }

    proptest! {
        #[test]
        fn roundtrip(op in any::<u16>(), sha in any::<[u8; 6]>(), spa in any::<[u8; 4]>(), tha in any::<[u8; 6]>(), tpa in any::<[u8; 4]>()) {
            let repr = Repr::EthernetIpv4 {
                operation: Operation::from(op),
                source_hardware_addr: EthernetAddress(sha),
                source_protocol_addr: Ipv4Address::from(spa),
                target_hardware_addr: EthernetAddress(tha),
                target_protocol_addr: Ipv4Address::from(tpa),
            };
            let mut a = [0u8; 28];
            repr.emit(&mut Packet::new_unchecked(&mut a[..]));
            let parsed = Repr::parse(&Packet::new_checked(&a[..]).unwrap()).unwrap();
            prop_assert_eq!(parsed, repr);
            let mut b = [0u8; 28];
            parsed.emit(&mut Packet::new_unchecked(&mut b[..]));
            prop_assert_eq!(a, b);
        }

        #[test]
        fn parse_never_panics(data in proptest::collection::vec(any::<u8>(), 0..40)) {
            if let Ok(p) = Packet::new_checked(&data[..]) {
                let _ = Repr::parse(&p);
                let _ = p.target_protocol_addr();
            }
        }
    }
}
