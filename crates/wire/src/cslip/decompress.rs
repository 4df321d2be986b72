//! The receiving half (RFC 1144 §3.3, A.3 `sl_uncompress_tcp`): rebuilding each
//! header from the saved one, and tossing after a frame error (§3.3.2).

use super::*;

/// What [`Decompressor::decompress`] did with a packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Received {
    /// A datagram was appended to the output.
    Delivered,
    /// RFC 1144 §4.2: discarded, since a frame was lost and this compressed packet does
    /// not name its connection (no C bit), so it may be relative to the lost one.
    Tossed,
}

/// The receiving half of RFC 1144.
#[derive(Debug, Clone)]
pub struct Decompressor {
    slots: Vec<Option<Saved>>,
    last_recv: Option<u8>,
    toss: bool,
}

impl Default for Decompressor {
    fn default() -> Self {
        Decompressor::new(DEFAULT_SLOTS)
    }
}

impl Decompressor {
    /// A decompressor with `slots` connection states; it starts tossing, as A.4
    /// `sl_compress_init` does, until a packet names its connection.
    ///
    /// # Panics
    /// When `slots` is 0 or more than [`MAX_SLOTS`].
    pub fn new(slots: usize) -> Self {
        assert!((1..=MAX_SLOTS).contains(&slots), "VJ slots must be 1..=256, not {slots}");
        Decompressor { slots: vec![None; slots], last_recv: None, toss: true }
    }

    /// RFC 1144 §4.2 (A.3 TYPE_ERROR): the link layer lost or damaged a frame. Compressed
    /// packets without the C bit are tossed until an UNCOMPRESSED_TCP packet or a
    /// COMPRESSED_TCP packet with the C bit arrives.
    pub fn frame_error(&mut self) {
        self.toss = true;
    }

    /// Whether packets without a connection number are being tossed.
    pub fn is_tossing(&self) -> bool {
        self.toss
    }

    /// Restores one received packet of type `kind` (A.3 `sl_uncompress_tcp`), appending
    /// the datagram to `out`. Any error also starts tossing, as the sample code does.
    pub fn decompress(&mut self, kind: PacketType, input: &[u8], out: &mut Vec<u8>) -> Result<Received> {
        let result = match kind {
            PacketType::Ip => {
                out.extend_from_slice(input);
                Ok(Received::Delivered)
            }
            PacketType::UncompressedTcp => self.uncompressed(input, out),
            PacketType::CompressedTcp => self.compressed(input, out),
        };
        if result.is_err() {
            self.toss = true;
        }
        result
    }

    fn uncompressed(&mut self, input: &[u8], out: &mut Vec<u8>) -> Result<Received> {
        let (ihl, thl) = tcp_ip_lengths(input).ok_or(Error::Malformed)?;
        let slot = input[ip::PROTOCOL];
        if usize::from(slot) >= self.slots.len() || ihl + thl > MAX_HEADER {
            return Err(Error::Malformed);
        }
        let start = out.len();
        out.extend_from_slice(input);
        out[start + ip::PROTOCOL] = ip::TCP;
        self.slots[usize::from(slot)] = Some(Saved { header: out[start..start + ihl + thl].to_vec(), ihl });
        self.last_recv = Some(slot);
        self.toss = false;
        Ok(Received::Delivered)
    }

    fn compressed(&mut self, input: &[u8], out: &mut Vec<u8>) -> Result<Received> {
        let packet = Packet::new_checked(input)?;
        let repr = Repr::parse(&packet)?;
        let slot = match repr.connection {
            Some(slot) => {
                if usize::from(slot) >= self.slots.len() {
                    return Err(Error::Malformed);
                }
                self.toss = false;
                self.last_recv = Some(slot);
                slot
            }
            None if self.toss => return Ok(Received::Tossed),
            None => self.last_recv.ok_or(Error::Malformed)?,
        };
        let saved = self.slots[usize::from(slot)].as_mut().ok_or(Error::Malformed)?;
        let data = packet.payload();
        let hlen = saved.header.len();
        let total = u16::try_from(hlen + data.len()).map_err(|_| Error::Malformed)?;
        let prev_data = saved.data_len();
        let ihl = saved.ihl;
        let h = &mut saved.header;

        let mut flags = h[ihl + tcp::FLAGS] & !(tcp::PSH | tcp::URG);
        if repr.push {
            flags |= tcp::PSH;
        }
        let seq = be32(h, ihl + tcp::SEQ);
        let ack = be32(h, ihl + tcp::ACK);
        match repr.deltas {
            Deltas::EchoedInteractive => {
                put32(h, ihl + tcp::SEQ, seq.wrapping_add(prev_data));
                put32(h, ihl + tcp::ACK, ack.wrapping_add(prev_data));
            }
            Deltas::UnidirectionalData => put32(h, ihl + tcp::SEQ, seq.wrapping_add(prev_data)),
            Deltas::Explicit { urgent, window, ack: da, seq: ds } => {
                if let Some(u) = urgent {
                    flags |= tcp::URG;
                    put16(h, ihl + tcp::URGENT, u);
                }
                if let Some(w) = window {
                    let win = be16(h, ihl + tcp::WINDOW).wrapping_add(w);
                    put16(h, ihl + tcp::WINDOW, win);
                }
                if let Some(a) = da {
                    put32(h, ihl + tcp::ACK, ack.wrapping_add(u32::from(a)));
                }
                if let Some(s) = ds {
                    put32(h, ihl + tcp::SEQ, seq.wrapping_add(u32::from(s)));
                }
            }
        }
        h[ihl + tcp::FLAGS] = flags;
        let id = be16(h, ip::ID).wrapping_add(repr.ip_id.unwrap_or(1));
        put16(h, ip::ID, id);
        put16(h, ihl + tcp::CHECKSUM, repr.tcp_checksum);
        put16(h, ip::LEN, total);
        put16(h, ip::CHECKSUM, 0);
        let sum = checksum::checksum(&h[..ihl]);
        put16(h, ip::CHECKSUM, sum);
        out.extend_from_slice(h);
        out.extend_from_slice(data);
        Ok(Received::Delivered)
    }
}
