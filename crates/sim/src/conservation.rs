//! Conservation: every datagram a flow sent is received, dropped (with its reason) or
//! still in the network when the run ends; every frame a link took in left it, was
//! dropped or is still queued.
//!
//! The per-packet path only counts (a few integers per link, a bit per dropped
//! datagram); what is still in the network is found once, at the end, by looking into
//! every buffer that holds frames (link queues and wires, 802.11 queues, CPU queues, ARP
//! and reassembly queues, tunnels, ATM) for the packets of each flow, at any depth of
//! encapsulation. docs/metrics.md ("Conservation") defines the numbers.

use std::collections::BTreeMap;
use std::net::Ipv4Addr;

use serde::Serialize;

use crate::app::probe::PROBE_HEADER_LEN;

/// A packet of a flow found in some bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Found {
    /// A UDP datagram or ICMP echo carrying the probe of `flow`, datagram `seq`.
    Probe { flow: u32, seq: u32 },
    /// A TCP segment `src:src_port → dst:dst_port`.
    Tcp { src: Ipv4Addr, src_port: u16, dst: Ipv4Addr, dst_port: u16 },
    /// An ESP packet (RFC 4303 §2): encrypted, so what it carries is known only to the
    /// SA that sealed it (`ip::IpStack::sealed_packet`).
    Esp { spi: u32, seq: u32 },
}

/// The flow packet that the IPv4 packet `packet` itself is (not one inside it).
pub fn flow_packet(packet: &[u8]) -> Option<Found> {
    let b = *packet.first()?;
    if b >> 4 != 4 || (b & 0x0f) < 5 {
        return None;
    }
    match packet_at(packet, 0)? {
        (Found::Esp { .. }, _) => None,
        (found, _) => Some(found),
    }
}

/// IP protocol numbers (IANA): ICMP 1, TCP 6, UDP 17.
const ICMP: u8 = 1;
const TCP: u8 = 6;
const UDP: u8 = 17;
const ESP: u8 = 50;
const AH: u8 = 51;
/// RFC 792: Echo Reply 0, Echo Request 8.
const ICMP_ECHO_TYPES: [u8; 2] = [0, 8];

/// Calls `found` for every IPv4 packet in `bytes` (at any offset: a bare packet, one in an
/// Ethernet frame or 802.11 MPDU, or one inside a tunnel's payload) that is the first
/// fragment (offset 0) of a UDP datagram or ICMP echo carrying a probe, or of a TCP
/// segment. A header is taken as one only when its version, length and header checksum
/// (RFC 791 §3.1) hold, so a chance match in payload bytes is one in 65536 of the
/// places that already look like a header; the caller further keeps only the flows of
/// the run. The packet may be cut short after the probe (a partial AAL5 PDU).
///
/// `found` answers whether the packet is one of the run's flows' own: then nothing is
/// inside it (a test payload carries no packet) and the scan goes on after it, so a
/// dropped test datagram costs a header's parse, not a pass over its payload.
pub fn scan(bytes: &[u8], mut found: impl FnMut(Found) -> bool) {
    let mut i = 0;
    while i + 20 <= bytes.len() {
        let b = bytes[i];
        if b >> 4 == 4 && (b & 0x0f) >= 5 {
            if let Some((hit, next)) = packet_at(bytes, i) {
                // An inner packet starts after this one's headers at the earliest.
                i = if found(hit) { packet_end(bytes, i).max(next) } else { next };
                continue;
            }
        }
        i += 1;
    }
}

/// RFC 791 §3.1: the one's complement sum of the header's 16-bit words, checksum
/// included, is all ones. Summed here in place: a header is a few words, and this runs
/// on every dropped packet.
#[inline]
fn header_checksum_holds(header: &[u8]) -> bool {
    let mut sum: u32 = header.chunks_exact(2).map(|w| u32::from(u16::from_be_bytes([w[0], w[1]]))).sum();
    sum = (sum & 0xffff) + (sum >> 16);
    sum = (sum & 0xffff) + (sum >> 16);
    sum == 0xffff
}

/// Where the IPv4 packet whose header starts at `bytes[at]` ends (its Total Length).
fn packet_end(bytes: &[u8], at: usize) -> usize {
    (at + usize::from(u16::from_be_bytes([bytes[at + 2], bytes[at + 3]]))).min(bytes.len())
}

/// The flow packet whose IPv4 header starts at `bytes[at]`, and where its headers end.
fn packet_at(bytes: &[u8], at: usize) -> Option<(Found, usize)> {
    let ihl = usize::from(bytes[at] & 0x0f) * 4;
    let header = bytes.get(at..at + ihl)?;
    let total = usize::from(u16::from_be_bytes([header[2], header[3]]));
    if total < ihl || !header_checksum_holds(header) {
        return None;
    }
    // Fragment offset (13 bits): only the first fragment carries the transport header.
    if u16::from_be_bytes([header[6], header[7]]) & 0x1fff != 0 {
        return None;
    }
    let src = Ipv4Addr::new(header[12], header[13], header[14], header[15]);
    let dst = Ipv4Addr::new(header[16], header[17], header[18], header[19]);
    let (mut l4, mut protocol) = (at + ihl, header[9]);
    // RFC 4302 §2: an AH header (transport mode) sits before the transport header; its
    // Payload Len is its length in 32-bit words minus 2.
    while protocol == AH {
        let ah = bytes.get(l4..l4 + 2)?;
        protocol = ah[0];
        l4 += (usize::from(ah[1]) + 2) * 4;
    }
    match protocol {
        UDP | ICMP => {
            if protocol == ICMP && !ICMP_ECHO_TYPES.contains(bytes.get(l4)?) {
                return None;
            }
            // UDP header and ICMP echo header: 8 octets each (RFC 768, RFC 792).
            let probe = bytes.get(l4 + 8..l4 + 8 + PROBE_HEADER_LEN)?;
            let flow = u32::from_be_bytes(probe[0..4].try_into().ok()?);
            let seq = u32::from_be_bytes(probe[4..8].try_into().ok()?);
            Some((Found::Probe { flow, seq }, l4 + 8))
        }
        TCP => {
            let ports = bytes.get(l4..l4 + 4)?;
            let src_port = u16::from_be_bytes([ports[0], ports[1]]);
            let dst_port = u16::from_be_bytes([ports[2], ports[3]]);
            // A TCP payload is a byte stream: a packet in it (a tunnel's, OpenVPN over
            // TCP) is the stream's until the far end cuts it out, whatever happens to
            // this segment (a lost segment is sent again). The stream's ends are
            // looked into instead (`openvpn_tcp::StreamTransport::held_toward`).
            Some((Found::Tcp { src, src_port, dst, dst_port }, (at + total).min(bytes.len()).max(l4 + 20)))
        }
        ESP => {
            let h = bytes.get(l4..l4 + 8)?;
            let spi = u32::from_be_bytes(h[0..4].try_into().ok()?);
            let seq = u32::from_be_bytes(h[4..8].try_into().ok()?);
            // What follows is ciphertext (or, with the null cipher, a packet the SA
            // already names): skip the whole packet.
            Some((Found::Esp { spi, seq }, (at + total).min(bytes.len()).max(l4 + 8)))
        }
        _ => None,
    }
}

/// Whether an 802.11 MPDU (open) carries a link ARQ frame (`wire::linkarq`, EtherType
/// 0x88B5 after LLC/SNAP, RFC 1042): its datagram is the ARQ sender's until acknowledged
/// or given up, whatever happens to this transmission.
pub fn is_link_arq(mpdu: &[u8]) -> bool {
    const SNAP_ARQ: [u8; 8] = [0xaa, 0xaa, 0x03, 0, 0, 0, 0x88, 0xb5];
    // After a 3-address (24 octets) or 4-address (30) MAC header, with QoS Control (+2).
    [24, 26, 30, 32].iter().any(|&at| mpdu.get(at..at + 8) == Some(&SNAP_ARQ[..]))
}

/// A set of datagram sequence numbers, one bit each.
#[derive(Debug, Default, Clone)]
pub struct SeqSet(Vec<u64>);

impl SeqSet {
    /// Adds `seq`; `true` if it was not there.
    pub fn insert(&mut self, seq: u32) -> bool {
        let word = seq as usize / 64;
        if word >= self.0.len() {
            self.0.resize(word + 1, 0);
        }
        let bit = 1u64 << (seq % 64);
        let new = self.0[word] & bit == 0;
        self.0[word] |= bit;
        new
    }

    pub fn contains(&self, seq: u32) -> bool {
        self.0.get(seq as usize / 64).is_some_and(|w| w & (1u64 << (seq % 64)) != 0)
    }
}

/// The drops of one flow's packets.
#[derive(Debug, Default)]
pub struct FlowLedger {
    /// UDP-family flows: per datagram (by sequence number) the reason of its first drop,
    /// as 1 + its index in `reasons`; 0 if it was never dropped. Two octets per datagram
    /// sent, grown only when one is dropped.
    first_drop: Vec<u16>,
    reasons: Vec<String>,
    /// TCP flows: segments dropped, by reason.
    pub segment_drops: BTreeMap<String, u64>,
}

impl FlowLedger {
    /// Datagram `seq` was dropped for `reason` (only its first drop counts: a copy of
    /// it, flooded by a bridge, may die elsewhere too).
    pub fn drop_datagram(&mut self, seq: u32, reason: &str) {
        let i = seq as usize;
        if i >= self.first_drop.len() {
            self.first_drop.resize(i + 1, 0);
        }
        if self.first_drop[i] != 0 {
            return;
        }
        let index = match self.reasons.iter().position(|r| r == reason) {
            Some(index) => index,
            None if self.reasons.len() < usize::from(u16::MAX - 1) => {
                self.reasons.push(reason.to_string());
                self.reasons.len() - 1
            }
            // More distinct reasons than fit: the rest share the last one's slot.
            None => self.reasons.len() - 1,
        };
        self.first_drop[i] = index as u16 + 1;
    }

    /// Why datagram `seq` was first dropped, if it was: an index into [`reasons`](Self::reasons).
    pub fn drop_of(&self, seq: u32) -> Option<usize> {
        match self.first_drop.get(seq as usize) {
            Some(&r) if r > 0 => Some(usize::from(r) - 1),
            _ => None,
        }
    }

    /// The reasons datagrams were dropped for, in the order first seen.
    pub fn reasons(&self) -> &[String] {
        &self.reasons
    }

    pub fn drop_segment(&mut self, reason: &str) {
        *self.segment_drops.entry(reason.to_string()).or_insert(0) += 1;
    }
}

/// The identity of one flow at the end of a run.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct FlowConservation {
    /// What is counted: "datagrams" (UDP, echo, ping: each datagram once, by its
    /// sequence number) or "segments" (TCP: every segment either socket sent).
    pub unit: &'static str,
    pub sent: u64,
    pub received: u64,
    pub dropped: u64,
    /// Still queued or on a wire when the run ended.
    pub in_network: u64,
    /// `dropped` by reason.
    pub drops: BTreeMap<String, u64>,
}

impl FlowConservation {
    /// Whether sent = received + dropped + in network.
    pub fn holds(&self) -> bool {
        self.sent == self.received + self.dropped + self.in_network
    }
}

/// The identity of one link (or one direction, or one 802.11 member's transmitter).
#[derive(Debug, Clone, Copy, Default, Serialize, schemars::JsonSchema)]
pub struct LinkConservation {
    /// Frames handed to the link (accepted or refused).
    pub frames_in: u64,
    /// Frames the link delivered (p2p: to the far end's node; 802.11: acknowledged or
    /// sent to a group; ATM: cells switched out).
    pub frames_out: u64,
    pub dropped: u64,
    /// Frames in its queue or on its wire at the end.
    pub queued: u64,
}

impl LinkConservation {
    pub fn holds(&self) -> bool {
        self.frames_in == self.frames_out + self.dropped + self.queued
    }
}

/// Per direction of a point-to-point line: frames offered, delivered and dropped there.
#[derive(Debug, Default, Clone, Copy)]
pub struct LineTally {
    pub offered: u64,
    pub delivered: u64,
    pub dropped: u64,
}

#[cfg(test)]
mod test {
    use super::*;

    fn udp_packet(flow: u32, seq: u32) -> Vec<u8> {
        let mut payload = crate::app::probe::Probe { flow, seq, sent_ns: 7 }.payload(64);
        let mut segment = Vec::new();
        let (src, dst) = (Ipv4Addr::new(10, 0, 0, 1), Ipv4Addr::new(10, 0, 0, 2));
        wire::udp::Repr { src_port: 1, dst_port: 2 }.encapsulate(&src, &dst, &payload, &mut segment);
        payload.clear();
        let repr = wire::ipv4::Repr::new(src, dst, wire::IpProtocol::Udp, segment.len(), 64);
        let mut packet = vec![0u8; 20 + segment.len()];
        let mut view = wire::ipv4::Packet::new_unchecked(&mut packet[..]);
        repr.emit(&mut view);
        view.payload_mut().copy_from_slice(&segment);
        view.fill_checksum();
        packet
    }

    #[test]
    fn a_probe_is_found_bare_behind_headers_and_inside_a_tunnel() {
        let inner = udp_packet(3, 41);
        let mut hits = Vec::new();
        scan(&inner, |f| {
            hits.push(f);
            false
        });
        assert_eq!(hits, vec![Found::Probe { flow: 3, seq: 41 }]);
        // Behind 14 octets of Ethernet header, and as the payload of an outer datagram.
        let mut frame = vec![0u8; 14];
        frame.extend(&inner);
        let outer = udp_packet(0x3000_0000, 0);
        let mut tunnel = outer.clone();
        tunnel.extend(&frame);
        hits.clear();
        scan(&tunnel, |f| {
            hits.push(f);
            false
        });
        assert!(hits.contains(&Found::Probe { flow: 3, seq: 41 }), "{hits:?}");
    }

    #[test]
    fn a_header_with_a_bad_checksum_is_not_a_packet() {
        let mut packet = udp_packet(3, 41);
        packet[10] ^= 0x01;
        let mut hits = 0;
        scan(&packet, |_| {
            hits += 1;
            false
        });
        assert_eq!(hits, 0);
    }

    #[test]
    fn seq_set_counts_each_once() {
        let mut s = SeqSet::default();
        assert!(s.insert(200));
        assert!(!s.insert(200));
        assert!(s.contains(200) && !s.contains(199));
    }
}
