//! A COMPRESSED_TCP header as plain values: the change mask and its deltas (RFC 1144
//! §3.2.2-3).

use super::*;

/// What changed in the TCP header, RFC 1144 §3.2.2-3.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Deltas {
    /// The general form: each present field in U, W, A, S order.
    Explicit {
        /// U: the urgent pointer (a value, not a delta); `Some` also means URG set.
        urgent: Option<u16>,
        /// W: window delta, modulo 2^16 (may be a decrease).
        window: Option<u16>,
        /// A: acknowledgement number increase.
        ack: Option<u16>,
        /// S: sequence number increase.
        seq: Option<u16>,
    },
    /// SA*: seq and ack both advance by the previous packet's data length.
    EchoedInteractive,
    /// S*: seq advances by the previous packet's data length.
    UnidirectionalData,
}

impl Deltas {
    /// No field changed.
    pub const NONE: Deltas = Deltas::Explicit { urgent: None, window: None, ack: None, seq: None };
}

/// A COMPRESSED_TCP header, RFC 1144 §3.2.2.
///
/// Invariant: an `Explicit` whose present fields are exactly {S, W, U} or {S, A, W, U}
/// has no encoding (those masks mean the special cases); `parse` never returns one and
/// [`Compressor`] never builds one. [`Repr::is_encodable`] tells.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Repr {
    /// C: the connection (slot) number, or `None` for "same as the last packet".
    pub connection: Option<u8>,
    /// P: the TCP PSH flag.
    pub push: bool,
    /// The TCP checksum of the original segment.
    pub tcp_checksum: u16,
    /// The TCP field changes.
    pub deltas: Deltas,
    /// I: the IP ID delta when it is not +1.
    pub ip_id: Option<u16>,
}

impl Repr {
    /// The change mask this header encodes to (without the SLIP type bit).
    pub fn change_mask(&self) -> u8 {
        let mut m = 0;
        if self.connection.is_some() {
            m |= change::C;
        }
        if self.ip_id.is_some() {
            m |= change::I;
        }
        if self.push {
            m |= change::P;
        }
        m | match self.deltas {
            Deltas::EchoedInteractive => change::SPECIAL_I,
            Deltas::UnidirectionalData => change::SPECIAL_D,
            Deltas::Explicit { urgent, window, ack, seq } => {
                (if urgent.is_some() { change::U } else { 0 })
                    | (if window.is_some() { change::W } else { 0 })
                    | (if ack.is_some() { change::A } else { 0 })
                    | (if seq.is_some() { change::S } else { 0 })
            }
        }
    }

    /// Whether the header has an encoding (see the type's invariant).
    pub fn is_encodable(&self) -> bool {
        match self.deltas {
            Deltas::Explicit { .. } => {
                let special = self.change_mask() & change::SPECIALS_MASK;
                special != change::SPECIAL_I && special != change::SPECIAL_D
            }
            _ => true,
        }
    }

    /// Parses a compressed header; the data is `packet.payload()`.
    pub fn parse<T: AsRef<[u8]> + ?Sized>(packet: &Packet<&T>) -> Result<Repr> {
        packet.check_len()?;
        let b = packet.buffer.as_ref();
        let mask = packet.change_mask();
        let mut at = packet.checksum_at() + 2;
        let mut take = |bit: u8| -> Result<Option<u16>> {
            if mask & bit != 0 {
                read_delta(b, &mut at).map(Some)
            } else {
                Ok(None)
            }
        };
        let deltas = match mask & change::SPECIALS_MASK {
            change::SPECIAL_I => Deltas::EchoedInteractive,
            change::SPECIAL_D => Deltas::UnidirectionalData,
            _ => {
                let urgent = take(change::U)?;
                let window = take(change::W)?;
                let ack = take(change::A)?;
                let seq = take(change::S)?;
                Deltas::Explicit { urgent, window, ack, seq }
            }
        };
        let ip_id = take(change::I)?;
        Ok(Repr {
            connection: packet.connection(),
            push: mask & change::P != 0,
            tcp_checksum: packet.tcp_checksum(),
            deltas,
            ip_id,
        })
    }

    /// Length of the compressed header.
    pub fn header_len(&self) -> usize {
        let opt = |v: Option<u16>| v.map_or(0, delta_len);
        let deltas = match self.deltas {
            Deltas::Explicit { urgent, window, ack, seq } => opt(urgent) + opt(window) + opt(ack) + opt(seq),
            _ => 0,
        };
        1 + usize::from(self.connection.is_some()) + 2 + deltas + opt(self.ip_id)
    }

    /// Same as [`Repr::header_len`]: the header is all this layer adds.
    pub fn buffer_len(&self) -> usize {
        self.header_len()
    }

    /// Writes the header into the first `header_len()` bytes. The first byte's bit 0x80
    /// is cleared (the PPP form); [`slip_mark`] sets it for SLIP.
    ///
    /// # Panics
    /// When the buffer is shorter than `header_len()`.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]> + ?Sized>(&self, packet: &mut Packet<&mut T>) {
        let mut v = Vec::with_capacity(MAX_HEADER_LEN);
        self.write(&mut v);
        packet.buffer.as_mut()[..v.len()].copy_from_slice(&v);
    }

    /// Appends the header to `out`.
    pub fn write(&self, out: &mut Vec<u8>) {
        out.push(self.change_mask());
        if let Some(c) = self.connection {
            out.push(c);
        }
        out.extend_from_slice(&self.tcp_checksum.to_be_bytes());
        if let Deltas::Explicit { urgent, window, ack, seq } = self.deltas {
            for v in [urgent, window, ack, seq].into_iter().flatten() {
                push_delta(out, v);
            }
        }
        if let Some(id) = self.ip_id {
            push_delta(out, id);
        }
    }

    /// Named overhead of this compressed header (the data follows unchanged).
    pub fn overhead_fields(&self, _payload_len: usize) -> Vec<(&'static str, usize)> {
        let opt = |v: Option<u16>| v.map_or(0, delta_len);
        let mut f = vec![("change mask", 1)];
        if self.connection.is_some() {
            f.push(("connection", 1));
        }
        f.push(("tcp checksum", 2));
        if let Deltas::Explicit { urgent, window, ack, seq } = self.deltas {
            f.push(("urgent", opt(urgent)));
            f.push(("delta window", opt(window)));
            f.push(("delta ack", opt(ack)));
            f.push(("delta seq", opt(seq)));
        }
        f.push(("delta ip id", opt(self.ip_id)));
        f
    }
}
