//! The sending half (RFC 1144 §3.2.3, A.2 `sl_compress_tcp`): per-connection state and
//! the decision what to send.

use super::*;

/// The saved header of one connection: the IPv4 and TCP headers of its last packet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Saved {
    pub(super) header: Vec<u8>,
    pub(super) ihl: usize,
}

impl Saved {
    pub(super) fn tcp(&self) -> &[u8] {
        &self.header[self.ihl..]
    }

    /// Data length of the packet this header came from (IPv4 total length - headers).
    pub(super) fn data_len(&self) -> u32 {
        u32::from(be16(&self.header, ip::LEN)).wrapping_sub(self.header.len() as u32)
    }

    fn same_connection(&self, p: &[u8], ihl: usize) -> bool {
        self.header[ip::SRC..ip::DST + 4] == p[ip::SRC..ip::DST + 4]
            && self.tcp()[tcp::SRC_PORT..tcp::SRC_PORT + 4] == p[ihl..ihl + 4]
    }

    /// What changed from this saved header to `packet`'s (RFC 1144 §3.2.3, A.2
    /// `sl_compress_tcp`), or `None` when the change cannot be encoded and the packet
    /// must go as UNCOMPRESSED_TCP.
    fn deltas(&self, packet: &[u8], ihl: usize, thl: usize) -> Option<Deltas> {
        let hlen = ihl + thl;
        let th = &packet[ihl..];
        let oh = &self.header;
        let oth = self.tcp();

        // Only what RFC 1144 expects to change may change: version/IHL/TOS, DF/fragment
        // word, TTL/protocol, data offset, the flags the format cannot carry, options.
        let unchanged = oh.len() == hlen
            && oh[ip::VER_IHL..ip::TOS + 1] == packet[ip::VER_IHL..ip::TOS + 1]
            && oh[ip::FLAGS_FRAG..ip::PROTOCOL + 1] == packet[ip::FLAGS_FRAG..ip::PROTOCOL + 1] // + TTL
            && oh[20..ihl] == packet[20..ihl]
            && oth[tcp::OFFSET] == th[tcp::OFFSET]
            && oth[tcp::FLAGS] & !(tcp::PSH | tcp::URG) == th[tcp::FLAGS] & !(tcp::PSH | tcp::URG)
            && oth[20..] == th[20..thl];
        if !unchanged {
            return None;
        }

        let urgent = if th[tcp::FLAGS] & tcp::URG != 0 {
            Some(be16(th, tcp::URGENT))
        } else if be16(th, tcp::URGENT) != be16(oth, tcp::URGENT) {
            // The urgent pointer moved without URG: the format cannot say so.
            return None;
        } else {
            None
        };
        let window = be16(th, tcp::WINDOW).wrapping_sub(be16(oth, tcp::WINDOW));
        let window = (window != 0).then_some(window);
        let ack = be32(th, tcp::ACK).wrapping_sub(be32(oth, tcp::ACK));
        let seq = be32(th, tcp::SEQ).wrapping_sub(be32(oth, tcp::SEQ));
        if ack > 0xffff || seq > 0xffff {
            return None;
        }
        let ack = (ack != 0).then_some(ack as u16);
        let seq = (seq != 0).then_some(seq as u16);
        let old_len = be16(oh, ip::LEN);
        let old_data = self.data_len();
        match (urgent, window, ack, seq) {
            (None, None, None, None) => {
                // Nothing changed. A data packet after a bare ACK is normal on an
                // interactive connection: compress. Anything else is a retransmission or
                // a window probe: send it whole in case the receiver missed the last one.
                let new_len = be16(packet, ip::LEN);
                if !(new_len != old_len && usize::from(old_len) == hlen) {
                    return None;
                }
            }
            // The real changes look like a special case: cannot be encoded.
            (Some(_), Some(_), None, Some(_)) | (Some(_), Some(_), Some(_), Some(_)) => {
                return None;
            }
            (None, None, Some(a), Some(s)) if a == s && u32::from(s) == old_data => {
                return Some(Deltas::EchoedInteractive);
            }
            (None, None, None, Some(s)) if u32::from(s) == old_data => {
                return Some(Deltas::UnidirectionalData);
            }
            _ => {}
        }
        Some(Deltas::Explicit { urgent, window, ack, seq })
    }
}

/// The sending half of RFC 1144: per-connection state and the compression decision.
#[derive(Debug, Clone)]
pub struct Compressor {
    slots: Vec<Option<Saved>>,
    /// Slot numbers, most recently used first (A.2 keeps a ring; same order).
    lru: Vec<u8>,
    last_xmit: Option<u8>,
    compress_slot_id: bool,
}

impl Default for Compressor {
    fn default() -> Self {
        Compressor::new(DEFAULT_SLOTS)
    }
}

impl Compressor {
    /// A compressor with `slots` connection states (RFC 1144 MAX_STATES; 16 by default).
    ///
    /// # Panics
    /// When `slots` is 0 or more than [`MAX_SLOTS`]: a configuration error.
    pub fn new(slots: usize) -> Self {
        assert!((1..=MAX_SLOTS).contains(&slots), "VJ slots must be 1..=256, not {slots}");
        Compressor {
            slots: vec![None; slots],
            // The least recently used slot (the last) is taken first: slot 0, then 1...
            lru: (0..slots).rev().map(|s| s as u8).collect(),
            last_xmit: None,
            compress_slot_id: true,
        }
    }

    /// Whether the connection number may be left out when it equals the last one sent
    /// (RFC 1332 §4 Comp-Slot-Id; always on for SLIP).
    pub fn with_compress_slot_id(mut self, on: bool) -> Self {
        self.compress_slot_id = on;
        self
    }

    /// Number of slots.
    pub fn slots(&self) -> usize {
        self.slots.len()
    }

    /// Compresses one IPv4 datagram (RFC 1144 §3.2.3, A.2 `sl_compress_tcp`), appending
    /// what goes on the link to `out`, and returns its type. TYPE_IP and UNCOMPRESSED_TCP
    /// output is the datagram itself (the latter with the slot in the protocol byte);
    /// COMPRESSED_TCP output is the compressed header followed by the TCP data.
    pub fn compress(&mut self, packet: &[u8], out: &mut Vec<u8>) -> PacketType {
        let Some((ihl, thl)) = self.compressible(packet) else {
            out.extend_from_slice(packet);
            return PacketType::Ip;
        };
        let hlen = ihl + thl;
        let slot = match self.find_connection(packet, ihl) {
            Ok(slot) => slot,
            // A new connection: the receiver learns its slot uncompressed.
            Err(fresh) => return self.uncompressed(fresh, packet, ihl, hlen, out),
        };
        let Some(old) = self.slots[usize::from(slot)].as_ref() else {
            return self.uncompressed(slot, packet, ihl, hlen, out);
        };
        let Some(deltas) = old.deltas(packet, ihl, thl) else {
            return self.uncompressed(slot, packet, ihl, hlen, out);
        };
        let th = &packet[ihl..];
        let id = be16(packet, ip::ID).wrapping_sub(be16(&old.header, ip::ID));
        let repr = Repr {
            connection: (!self.compress_slot_id || self.last_xmit != Some(slot)).then_some(slot),
            push: th[tcp::FLAGS] & tcp::PSH != 0,
            tcp_checksum: be16(th, tcp::CHECKSUM),
            deltas,
            ip_id: (id != 1).then_some(id),
        };
        self.slots[usize::from(slot)] = Some(Saved { header: packet[..hlen].to_vec(), ihl });
        self.last_xmit = Some(slot);
        repr.write(out);
        out.extend_from_slice(&packet[hlen..]);
        PacketType::CompressedTcp
    }

    /// The slot of `packet`'s connection, most recently used first, moved to the front:
    /// `Ok` when it was known, else `Err` with the least recently used slot, now
    /// emptied and taken for it.
    fn find_connection(&mut self, packet: &[u8], ihl: usize) -> core::result::Result<u8, u8> {
        let found = self
            .lru
            .iter()
            .position(|&s| self.slots[usize::from(s)].as_ref().is_some_and(|saved| saved.same_connection(packet, ihl)));
        match found {
            Some(pos) => {
                let slot = self.lru.remove(pos);
                self.lru.insert(0, slot);
                Ok(slot)
            }
            None => {
                let slot = self.lru.pop().unwrap_or(0);
                self.lru.insert(0, slot);
                self.slots[usize::from(slot)] = None;
                Err(slot)
            }
        }
    }

    /// The datagram can be compressed at all: IPv4, TCP, not a fragment, lengths
    /// consistent, header checksum right, and ACK the only one of SYN/FIN/RST/ACK set.
    fn compressible(&self, p: &[u8]) -> Option<(usize, usize)> {
        let (ihl, thl) = tcp_ip_lengths(p)?;
        let ok = p[ip::PROTOCOL] == ip::TCP
            && be16(p, ip::FLAGS_FRAG) & 0x3fff == 0
            && usize::from(be16(p, ip::LEN)) == p.len()
            && checksum::checksum(&p[..ihl]) == 0
            && ihl + thl <= MAX_HEADER
            && p[ihl + tcp::FLAGS] & (tcp::SYN | tcp::FIN | tcp::RST | tcp::ACK_FLAG) == tcp::ACK_FLAG;
        ok.then_some((ihl, thl))
    }

    fn uncompressed(&mut self, slot: u8, packet: &[u8], ihl: usize, hlen: usize, out: &mut Vec<u8>) -> PacketType {
        self.slots[usize::from(slot)] = Some(Saved { header: packet[..hlen].to_vec(), ihl });
        self.last_xmit = Some(slot);
        let start = out.len();
        out.extend_from_slice(packet);
        out[start + ip::PROTOCOL] = slot;
        PacketType::UncompressedTcp
    }
}
