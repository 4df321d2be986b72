//! The packet view and header (`ssl_pkt.h`), and the length prefix of TCP transports.

use super::*;

/// An OpenVPN packet as carried in a UDP datagram (or after the TCP length prefix).
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

    /// The opcode octet, and the peer id for `P_DATA_V2`, must be present.
    pub fn check_len(&self) -> Result<()> {
        if self.buffer.as_ref().len() < self.header_len() {
            Err(Error::Truncated)
        } else {
            Ok(())
        }
    }

    pub fn into_inner(self) -> T {
        self.buffer
    }

    /// The opcode (top 5 bits of the first octet).
    pub fn opcode(&self) -> Opcode {
        Opcode::from(self.buffer.as_ref()[field::OPCODE_KEY_ID] >> OPCODE_SHIFT)
    }

    /// The key id (low 3 bits of the first octet).
    pub fn key_id(&self) -> u8 {
        self.buffer.as_ref()[field::OPCODE_KEY_ID] & KEY_ID_MASK
    }

    /// 4 for `P_DATA_V2` (opcode and peer id), else 1.
    pub fn header_len(&self) -> usize {
        match self.buffer.as_ref().first() {
            Some(b) if b >> OPCODE_SHIFT == u8::from(Opcode::DataV2) => 1 + PEER_ID_LEN,
            _ => 1,
        }
    }

    /// The peer id of a `P_DATA_V2` packet.
    pub fn peer_id(&self) -> Option<u32> {
        (self.opcode() == Opcode::DataV2).then(|| {
            let d = &self.buffer.as_ref()[field::PEER_ID];
            u32::from_be_bytes([0, d[0], d[1], d[2]])
        })
    }

    /// Everything after the header.
    pub fn payload(&self) -> &[u8] {
        &self.buffer.as_ref()[self.header_len()..]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    pub fn set_opcode(&mut self, value: Opcode) {
        let b = &mut self.buffer.as_mut()[field::OPCODE_KEY_ID];
        *b = (u8::from(value) << OPCODE_SHIFT) | (*b & KEY_ID_MASK);
    }

    pub fn set_key_id(&mut self, value: u8) {
        let b = &mut self.buffer.as_mut()[field::OPCODE_KEY_ID];
        *b = (*b & !KEY_ID_MASK) | (value & KEY_ID_MASK);
    }

    /// Writes the 24-bit peer id (the opcode must be `P_DATA_V2`).
    pub fn set_peer_id(&mut self, value: u32) {
        let bytes = value.to_be_bytes();
        self.buffer.as_mut()[field::PEER_ID].copy_from_slice(&bytes[1..4]);
    }

    pub fn payload_mut(&mut self) -> &mut [u8] {
        let at = self.header_len();
        &mut self.buffer.as_mut()[at..]
    }
}

/// The packet header: opcode, key id and, for `P_DATA_V2`, the peer id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Repr {
    pub opcode: Opcode,
    /// 0–7.
    pub key_id: u8,
    /// `Some` exactly for `P_DATA_V2`; 24 bits.
    pub peer_id: Option<u32>,
}

impl Repr {
    /// Opcode values beyond the table (0, 12–31) are `Unsupported`.
    pub fn parse<T: AsRef<[u8]> + ?Sized>(packet: &Packet<&T>) -> Result<Repr> {
        packet.check_len()?;
        if let Opcode::Unknown(_) = packet.opcode() {
            return Err(Error::Unsupported);
        }
        Ok(Repr { opcode: packet.opcode(), key_id: packet.key_id(), peer_id: packet.peer_id() })
    }

    pub fn header_len(&self) -> usize {
        if self.opcode == Opcode::DataV2 {
            1 + PEER_ID_LEN
        } else {
            1
        }
    }

    pub fn buffer_len(&self, payload_len: usize) -> usize {
        self.header_len() + payload_len
    }

    /// Writes the header; a `P_DATA_V2` without a peer id gets [`PEER_ID_UNDEF`].
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]> + ?Sized>(&self, packet: &mut Packet<&mut T>) {
        packet.buffer.as_mut()[field::OPCODE_KEY_ID] =
            (u8::from(self.opcode) << OPCODE_SHIFT) | (self.key_id & KEY_ID_MASK);
        if self.opcode == Opcode::DataV2 {
            packet.set_peer_id(self.peer_id.unwrap_or(PEER_ID_UNDEF));
        }
    }

    pub(super) fn header_bytes(&self) -> Vec<u8> {
        let mut out = vec![0u8; self.header_len()];
        self.emit(&mut Packet::new_unchecked(&mut out[..]));
        out
    }
}

/// Appends `packet` to a TCP stream with its 16-bit length prefix (`proto.h`,
/// "packet length" of stream transports). Panics over 65,535 octets.
pub fn encapsulate_tcp(packet: &[u8], out: &mut Vec<u8>) {
    let len = u16::try_from(packet.len()).expect("OpenVPN packet over 65535 octets");
    out.extend_from_slice(&len.to_be_bytes());
    out.extend_from_slice(packet);
}

/// Reads one length-prefixed packet from the start of a TCP stream; returns the packet
/// and the octets consumed.
pub fn parse_tcp(stream: &[u8]) -> Result<(&[u8], usize)> {
    let len = match stream {
        [hi, lo, ..] => usize::from(u16::from_be_bytes([*hi, *lo])),
        _ => return Err(Error::Truncated),
    };
    let packet = stream.get(TCP_LENGTH_LEN..TCP_LENGTH_LEN + len).ok_or(Error::Truncated)?;
    Ok((packet, TCP_LENGTH_LEN + len))
}
