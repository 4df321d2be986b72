//! The link-layer acknowledgement frames of seed 004's router (a DOS "NETRoute-PC"
//! derivative), carried in Ethernet II frames between the two routers over the radio.
//!
//! Standards a reader must know:
//!
//! * IEEE Std 802-2014 §9.2.2: EtherType 0x88B5, "Local Experimental EtherType 1", for
//!   protocols that are not registered — this one is a reconstruction: seed 004 describes
//!   the mechanism ("adding a networking layer between TCP and IP", acknowledgements
//!   between the routers) but not its bytes, so the format below is qoslab's own.
//! * RFC 1982: the 32-bit sequence number wraps and is compared as a serial number.
//!
//! Layout (8 octets, then the payload):
//!
//! ```text
//!  0      1      2      3      4      5      6      7
//! +------+------+------+------+------+------+------+------+-------------
//! | kind |      reserved (0)  |       sequence number     | payload ...
//! +------+------+------+------+------+------+------+------+-------------
//! ```
//!
//! `kind` 0 is a data frame (the payload is an IPv4 datagram), 1 an acknowledgement of
//! `sequence` (no payload), 2 a probe: a data frame with no payload, sent only to
//! measure the channel. The header is the 8 octets that
//! `sim::node::adaptive_router::link_arq::ArqConfig::ack_len` charges for an ack.

use crate::{Error, Result};

/// The EtherType the frames travel under (IEEE Std 802-2014 §9.2.2).
pub const ETHERTYPE: u16 = 0x88b5;
/// Octets before the payload.
pub const HEADER_LEN: usize = 8;

crate::enum_with_unknown! {
    /// What a frame is.
    pub enum Kind(u8) {
        /// Carries a datagram; the receiver acknowledges it.
        Data = 0,
        /// Acknowledges the data or probe frame of the same sequence number.
        Ack = 1,
        /// A data frame without a datagram, sent to keep measuring the channel.
        Probe = 2,
    }
}

/// Byte ranges of the header.
pub mod field {
    use crate::{Field, Rest};
    pub const KIND: usize = 0;
    pub const RESERVED: Field = 1..4;
    pub const SEQUENCE: Field = 4..8;
    pub const PAYLOAD: Rest = 8..;
}

/// A checked view of a link-ARQ frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Packet<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Packet<T> {
    pub const fn new_unchecked(buffer: T) -> Packet<T> {
        Packet { buffer }
    }

    pub fn new_checked(buffer: T) -> Result<Packet<T>> {
        let packet = Packet::new_unchecked(buffer);
        packet.check_len()?;
        Ok(packet)
    }

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

    pub fn kind(&self) -> Kind {
        Kind::from(self.buffer.as_ref()[field::KIND])
    }

    pub fn reserved(&self) -> [u8; 3] {
        let d = &self.buffer.as_ref()[field::RESERVED];
        [d[0], d[1], d[2]]
    }

    pub fn sequence(&self) -> u32 {
        let d = &self.buffer.as_ref()[field::SEQUENCE];
        u32::from_be_bytes([d[0], d[1], d[2], d[3]])
    }

    pub fn payload(&self) -> &[u8] {
        &self.buffer.as_ref()[field::PAYLOAD]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    pub fn set_kind(&mut self, kind: Kind) {
        self.buffer.as_mut()[field::KIND] = kind.into();
    }

    pub fn clear_reserved(&mut self) {
        self.buffer.as_mut()[field::RESERVED].fill(0);
    }

    pub fn set_sequence(&mut self, value: u32) {
        self.buffer.as_mut()[field::SEQUENCE].copy_from_slice(&value.to_be_bytes());
    }
}

/// A parsed header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Repr {
    pub kind: Kind,
    pub sequence: u32,
}

impl Repr {
    /// Refuses an unknown kind and non-zero reserved octets. Whatever follows the
    /// header of an ack or a probe is Ethernet padding (a frame is padded to 60 octets
    /// without FCS, IEEE 802.3 §3.2.8) and is ignored, as an IPv4 receiver ignores
    /// octets beyond its Total Length.
    pub fn parse<T: AsRef<[u8]>>(packet: &Packet<T>) -> Result<Repr> {
        packet.check_len()?;
        if packet.reserved() != [0; 3] {
            return Err(Error::Malformed);
        }
        match packet.kind() {
            Kind::Unknown(_) => Err(Error::Unsupported),
            kind => Ok(Repr { kind, sequence: packet.sequence() }),
        }
    }

    pub const fn buffer_len(&self) -> usize {
        HEADER_LEN
    }

    /// Writes the header at the start of `packet`.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, packet: &mut Packet<T>) {
        packet.set_kind(self.kind);
        packet.clear_reserved();
        packet.set_sequence(self.sequence);
    }

    /// Appends the header and `payload` to `out`.
    pub fn encapsulate(&self, payload: &[u8], out: &mut Vec<u8>) {
        let start = out.len();
        out.resize(start + HEADER_LEN, 0);
        self.emit(&mut Packet::new_unchecked(&mut out[start..]));
        out.extend_from_slice(payload);
    }
}

#[cfg(test)]
mod test {
    use super::*;

    static ACK_BYTES: [u8; 8] = [0x01, 0x00, 0x00, 0x00, 0x12, 0x34, 0x56, 0x78];

    #[test]
    fn test_parse() {
        let packet = Packet::new_checked(&ACK_BYTES[..]).unwrap();
        assert_eq!(Repr::parse(&packet).unwrap(), Repr { kind: Kind::Ack, sequence: 0x1234_5678 });
    }

    #[test]
    fn test_emit() {
        let mut out = Vec::new();
        Repr { kind: Kind::Ack, sequence: 0x1234_5678 }.encapsulate(&[], &mut out);
        assert_eq!(out, ACK_BYTES);
    }

    #[test]
    fn data_round_trip_and_refusals() {
        let mut out = Vec::new();
        Repr { kind: Kind::Data, sequence: u32::MAX }.encapsulate(&[0x45, 0, 0, 20], &mut out);
        let p = Packet::new_checked(&out[..]).unwrap();
        assert_eq!(Repr::parse(&p).unwrap().sequence, u32::MAX);
        assert_eq!(p.payload(), [0x45, 0, 0, 20]);
        assert_eq!(Packet::new_checked(&out[..7]).unwrap_err(), Error::Truncated);
        let mut bad = ACK_BYTES;
        bad[2] = 1;
        assert_eq!(Repr::parse(&Packet::new_unchecked(&bad[..])).unwrap_err(), Error::Malformed);
        bad = ACK_BYTES;
        bad[0] = 9;
        assert_eq!(Repr::parse(&Packet::new_unchecked(&bad[..])).unwrap_err(), Error::Unsupported);
        // An ack padded to Ethernet's minimum frame parses as the ack.
        let mut padded = ACK_BYTES.to_vec();
        padded.resize(60 - 14, 0);
        assert_eq!(
            Repr::parse(&Packet::new_unchecked(&padded[..])).unwrap(),
            Repr { kind: Kind::Ack, sequence: 0x1234_5678 }
        );
    }
}
