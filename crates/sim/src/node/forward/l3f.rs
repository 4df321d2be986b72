//! The Windows XP "layer-3 forwarding" (L3F) bridge: seed 000 §2.2 and Fig. 6.
//!
//! One IP subnet on both sides of the bridge; the bridge forwards on IP addresses and
//! answers ARP for the hosts of the other side (proxy ARP: RFC 1027, "Using ARP to
//! implement transparent subnet gateways", and RFC 925, "Multi-LAN Address Resolution";
//! seed 000 ref. \[8\], The Cable Guy, "How the Windows XP Network Bridge Works",
//! January 2002). ARP itself is RFC 826. Step by step, as seed 000 §2.2 describes it:
//!
//! 1. **Learn.** Every ARP request or reply, and every IPv4 packet, that arrives on a
//!    port teaches the bridge its sender: IP address → (port, MAC). Seed 000 Fig. 6 calls
//!    this the L3F table.
//! 2. **ARP for the bridge** (target = the bridge's own IP): reply with the MAC of the
//!    port the request came in on.
//! 3. **ARP for a known host on another port:** reply on its behalf with the MAC of the
//!    incoming port (proxy ARP). A host on the asker's own port answers for itself.
//! 4. **ARP for an unknown host:** send the bridge's own ARP request, sender = the
//!    outgoing port's MAC and the bridge's IP, on every port but the incoming one, and
//!    remember the asker; when the reply comes back, learn the target and answer the
//!    asker as in 3.
//! 5. **IPv4 unicast** addressed (at layer 2) to the incoming port: if its destination is
//!    in the table on another port, send it there with a new Ethernet header: source =
//!    the outgoing port's MAC, destination = the table's MAC. The IP datagram is not
//!    touched (no TTL decrement: it is a bridge).
//! 6. **The bridge's own IP** → up to the local stack.
//! 7. **Broadcasts and multicasts** → every other port, and up to the local stack.
//!
//! Everything the bridge sends on a port carries that port's own MAC as its Ethernet
//! (and ARP sender) hardware address. That is why L3F works through a station's wireless
//! adapter, which can only send its own source address (seed 000 §2.1 and Table 1),
//! where the 802.1D bridge of [`super::learning`] does not. The hosts on each side see
//! every host of the other side at the bridge port's MAC: seed 000 Tables 2 and 3.
//!
//! Choices where the seed is silent, documented here:
//! - Off-subnet destinations (the Internet through the AP, seed 000 §2.2 last
//!   paragraph) are relayed to the gateway's table entry, when [`L3fBridge::set_gateway`]
//!   has named one: a host's default route points at the bridge port's MAC (proxy ARP for
//!   the gateway), so the bridge must route the packet to the real gateway the way its own
//!   IP stack would. Off-subnet sources are not learned.
//! - A unicast IPv4 destination not in the table is dropped and ARP requests for it are
//!   sent (at most once per [`PENDING_TIMEOUT_NS`]), so the next packet gets through.
//!   The bridge's *own* datagrams are held instead, the latest one per unresolved
//!   address, as an IP stack's ARP does (RFC 1122 §2.3.2.2: "SHOULD save (rather than
//!   discard) at least one (the latest) packet"), and sent when the address resolves;
//!   one replaced or unresolved after [`HOLD_TIMEOUT_NS`] is dropped
//!   ([`L3fBridge::take_dropped`]).
//! - Gratuitous ARP (sender = target, RFC 5227 §2.4 announcements) is learned and
//!   re-announced on the other ports with the port's MAC, so the other side keeps
//!   pointing at the bridge.
//! - Without an own IP address the bridge treats every address as on-subnet, and uses
//!   the original asker's IP as the sender of the ARP requests it re-issues.
//!
//! Sans-IO: `now` comes in with each frame; table entries and pending requests age
//! against it.

use std::collections::BTreeMap;
use std::net::Ipv4Addr;

use wire::arp::{self, Operation};
use wire::ethernet::{self, Address as MacAddress, EtherType, Frame};
use wire::ipv4;

use super::{DropReason, Model, Nanos};

/// How long the bridge waits for the reply to an ARP request it re-issued before the
/// asker is forgotten (Windows XP and Linux retransmit ARP after 1 s; the asker will ask
/// again).
pub const PENDING_TIMEOUT_NS: Nanos = 1_000_000_000;

/// How long the bridge holds its own datagram for an unresolved address before dropping
/// it: three ARP requests one second apart, as Linux (`mcast_solicit` 3, `retrans_time`
/// 1 s) and Windows XP (`ArpRetryCount` 3) give up.
pub const HOLD_TIMEOUT_NS: Nanos = 3 * PENDING_TIMEOUT_NS;

/// Where a frame goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Output {
    /// Out of this port of the bridge.
    Port(u16),
    /// Up to the node's own IP stack (the frame as received).
    Local,
}

/// A row of the L3F table (seed 000 Fig. 6).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct L3fEntry {
    pub ip: Ipv4Addr,
    pub port: u16,
    pub mac: [u8; 6],
}

#[derive(Debug, Clone, Copy)]
struct Learned {
    port: u16,
    mac: MacAddress,
    seen: Nanos,
}

/// A host that asked for an unknown address and waits for the bridge's proxy reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Pending {
    target: Ipv4Addr,
    asker_ip: Ipv4Addr,
    asker_mac: MacAddress,
    asker_port: u16,
    since: Nanos,
}

/// The L3F bridge of seed 000 §2.2.
#[derive(Debug, Clone)]
pub struct L3fBridge {
    /// (port, that port's MAC), ordered by port.
    ports: Vec<(u16, MacAddress)>,
    own_ip: Option<Ipv4Addr>,
    prefix_len: u8,
    gateway: Option<Ipv4Addr>,
    aging_ns: Nanos,
    table: BTreeMap<Ipv4Addr, Learned>,
    pending: Vec<Pending>,
    /// Targets the bridge sent its own ARP requests for, and when.
    solicited: BTreeMap<Ipv4Addr, Nanos>,
    /// The bridge's own datagram waiting for its next hop to resolve: hop → (since, packet).
    held: BTreeMap<Ipv4Addr, (Nanos, Vec<u8>)>,
    /// Held datagrams given up (replaced or timed out), with why, until taken.
    dropped: Vec<(DropReason, Vec<u8>)>,
    next_sweep: Nanos,
}

impl L3fBridge {
    /// A bridge over `ports` (each with its own MAC), with the node's own address on the
    /// bridge (`own_ip`/`prefix_len`, the subnet both sides share). Entries age after
    /// 802.1D's 300 s unless [`with_aging`](Self::with_aging) says otherwise.
    pub fn new(ports: &[(u16, [u8; 6])], own_ip: Option<Ipv4Addr>, prefix_len: u8) -> L3fBridge {
        let mut ports: Vec<(u16, MacAddress)> = ports.iter().map(|&(p, m)| (p, MacAddress(m))).collect();
        ports.sort_by_key(|&(p, _)| p);
        L3fBridge {
            ports,
            own_ip,
            prefix_len: prefix_len.min(32),
            gateway: None,
            aging_ns: super::learning::DEFAULT_AGING_NS,
            table: BTreeMap::new(),
            pending: Vec::new(),
            held: BTreeMap::new(),
            dropped: Vec::new(),
            solicited: BTreeMap::new(),
            next_sweep: 0,
        }
    }

    /// Entries not refreshed for `aging_ns` are forgotten (the node's `BridgeConfig`).
    pub fn with_aging(mut self, aging_ns: Nanos) -> L3fBridge {
        self.aging_ns = aging_ns;
        self
    }

    /// The gateway off-subnet destinations are relayed to (the node's default gateway).
    pub fn set_gateway(&mut self, gateway: Option<Ipv4Addr>) {
        self.gateway = gateway;
    }

    /// The MAC of `port`, if it is a member.
    pub fn port_mac(&self, port: u16) -> Option<[u8; 6]> {
        self.mac_of(port).map(|m| m.0)
    }

    /// The live L3F table ordered by IP (seed 000 Fig. 6).
    pub fn table(&self, now: Nanos) -> Vec<L3fEntry> {
        self.table
            .iter()
            .filter(|(_, l)| self.live(now, l))
            .map(|(&ip, l)| L3fEntry { ip, port: l.port, mac: l.mac.0 })
            .collect()
    }

    /// The live entry for `ip`.
    pub fn lookup(&self, now: Nanos, ip: Ipv4Addr) -> Option<L3fEntry> {
        self.table.get(&ip).filter(|l| self.live(now, l)).map(|l| L3fEntry { ip, port: l.port, mac: l.mac.0 })
    }

    /// Receives `frame` on `in_port` at `now` and appends what to send to `out`.
    /// `Ok` when the frame was used (which may send nothing, e.g. an ARP reply that
    /// answered nobody); `Err` says why it was dropped.
    pub fn process(
        &mut self,
        now: Nanos,
        in_port: u16,
        frame: &[u8],
        out: &mut Vec<(Output, Vec<u8>)>,
    ) -> Result<(), DropReason> {
        self.sweep(now);
        let view = Frame::new_checked(frame).map_err(|e| malformed("Ethernet header", e))?;
        let eth = ethernet::Repr::parse(&view).map_err(|e| malformed("Ethernet header", e))?;
        let Some(in_mac) = self.mac_of(in_port) else {
            return Err(DropReason::NotMember { model: Model::L3f, port: in_port });
        };
        if eth.src_addr.is_multicast() {
            return Err(DropReason::GroupSource);
        }
        if self.ports.iter().any(|&(_, m)| m == eth.src_addr) {
            return Err(DropReason::L3fOwnFrame { port: in_port });
        }
        let payload = &frame[ethernet::HEADER_LEN..];
        match eth.ethertype {
            EtherType::Arp => self.arp(now, in_port, in_mac, &eth, payload, out),
            EtherType::Ipv4 => self.ipv4(now, in_port, in_mac, &eth, frame, out),
            other => Err(DropReason::L3fEtherType(other.into())),
        }
    }

    /// The bridge's own datagrams given up since the last call: a held one replaced by a
    /// later one for the same address, or still unresolved after [`HOLD_TIMEOUT_NS`]
    /// (noticed at the next [`send_local`](Self::send_local)); each `L3fUnresolved`.
    pub fn take_dropped(&mut self) -> Vec<(DropReason, Vec<u8>)> {
        std::mem::take(&mut self.dropped)
    }

    /// Datagrams of the node's own stack held for an unresolved address.
    pub fn held_len(&self) -> usize {
        self.held.len()
    }

    /// Each datagram held for an unresolved address (the end-of-run census of
    /// `conservation`: they are still in the network).
    pub fn held_packets(&self, note: &mut dyn FnMut(&[u8])) {
        self.held.values().for_each(|(_, packet)| note(packet));
    }

    /// Sends an IPv4 datagram from the node's own stack: to the port and MAC the table
    /// gives for its destination (or its gateway), or to every port for a broadcast or
    /// multicast. For an unresolved destination ARP requests go out on every port and the
    /// datagram is held (the latest per address, RFC 1122 §2.3.2.2) until the address
    /// resolves; the one it replaces goes to [`take_dropped`](Self::take_dropped).
    pub fn send_local(
        &mut self,
        now: Nanos,
        packet: &[u8],
        out: &mut Vec<(Output, Vec<u8>)>,
    ) -> Result<(), DropReason> {
        self.sweep(now);
        let ip = ipv4::Packet::new_checked(packet).map_err(|e| malformed("IPv4 header", e))?;
        let dst = ip.dst_addr();
        if self.is_broadcast(dst) || dst.is_multicast() {
            let dst_mac = group_mac(dst);
            for &(port, mac) in &self.ports {
                out.push((Output::Port(port), ethernet_frame(mac, dst_mac, EtherType::Ipv4, packet)));
            }
            return Ok(());
        }
        let hop = self.next_hop(dst)?;
        match self.lookup(now, hop) {
            Some(e) => {
                let mac = self.mac_of(e.port).expect("table ports are members");
                out.push((Output::Port(e.port), ethernet_frame(mac, MacAddress(e.mac), EtherType::Ipv4, packet)));
                Ok(())
            }
            None => {
                self.solicit(now, hop, None, ip.src_addr(), out);
                if let Some((_, older)) = self.held.insert(hop, (now, packet.to_vec())) {
                    self.dropped.push((DropReason::L3fUnresolved { ip: hop }, older));
                }
                Ok(())
            }
        }
    }

    /// Sends the datagram held for `ip`, now that the table knows it.
    fn release_held(&mut self, now: Nanos, ip: Ipv4Addr, out: &mut Vec<(Output, Vec<u8>)>) {
        if self.held.is_empty() {
            return;
        }
        let hops: Vec<Ipv4Addr> = self.held.keys().copied().filter(|&hop| hop == ip).collect();
        for hop in hops {
            let Some(e) = self.lookup(now, hop) else { continue };
            let (_, packet) = self.held.remove(&hop).expect("held");
            let mac = self.mac_of(e.port).expect("table ports are members");
            out.push((Output::Port(e.port), ethernet_frame(mac, MacAddress(e.mac), EtherType::Ipv4, &packet)));
        }
    }

    fn arp(
        &mut self,
        now: Nanos,
        in_port: u16,
        in_mac: MacAddress,
        eth: &ethernet::Repr,
        payload: &[u8],
        out: &mut Vec<(Output, Vec<u8>)>,
    ) -> Result<(), DropReason> {
        let packet = arp::Packet::new_checked(payload).map_err(|e| malformed("ARP packet", e))?;
        let repr = arp::Repr::parse(&packet).map_err(|e| malformed("ARP packet", e))?;
        let arp::Repr::EthernetIpv4 {
            operation,
            source_hardware_addr: sha,
            source_protocol_addr: spa,
            target_hardware_addr: tha,
            target_protocol_addr: tpa,
        } = repr;
        // Step 1: learn the sender (and send what the bridge held for it).
        self.learn(now, spa, in_port, sha);
        self.release_held(now, spa, out);

        // RFC 5227 §2.4 announcements (sender = target): pass on with the port's MAC.
        if spa == tpa && !spa.is_unspecified() && Some(spa) != self.own_ip {
            for &(port, mac) in self.ports.iter().filter(|&&(p, _)| p != in_port) {
                let announce = arp::Repr::request(mac, spa, spa);
                out.push((Output::Port(port), arp_frame(mac, MacAddress::BROADCAST, &announce)));
            }
            return Ok(());
        }

        match operation {
            Operation::Request => {
                // Step 2: for the bridge itself.
                if Some(tpa) == self.own_ip {
                    out.push((Output::Port(in_port), arp_frame(in_mac, sha, &arp::Repr::reply_to(&repr, in_mac))));
                    return Ok(());
                }
                // Step 3: proxy for a known host of another port.
                if let Some(entry) = self.lookup(now, tpa) {
                    if entry.port == in_port {
                        return Err(DropReason::L3fArpSameSegment { target: tpa, port: in_port });
                    }
                    out.push((Output::Port(in_port), arp_frame(in_mac, sha, &arp::Repr::reply_to(&repr, in_mac))));
                    return Ok(());
                }
                // Step 4: ask the other ports, remember the asker.
                self.pending.retain(|p| !(p.target == tpa && p.asker_ip == spa && p.asker_mac == sha));
                self.pending.push(Pending {
                    target: tpa,
                    asker_ip: spa,
                    asker_mac: sha,
                    asker_port: in_port,
                    since: now,
                });
                self.solicited.remove(&tpa); // the asker retried: ask again now
                self.solicit(now, tpa, Some(in_port), spa, out);
                Ok(())
            }
            Operation::Reply => self.arp_reply(now, in_port, eth.dst_addr, (spa, tha, tpa), out),
            _ => Err(malformed("ARP packet", wire::Error::Unsupported)),
        }
    }

    /// An ARP reply (`spa` the sender, `tha` and `tpa` the target) that reached the bridge:
    /// answered to the hosts that asked for the sender (seed 000 §2.2, step 4).
    fn arp_reply(
        &mut self,
        now: Nanos,
        in_port: u16,
        dst: MacAddress,
        (spa, tha, tpa): (Ipv4Addr, MacAddress, Ipv4Addr),
        out: &mut Vec<(Output, Vec<u8>)>,
    ) -> Result<(), DropReason> {
        let for_us = self.ports.iter().any(|&(_, m)| m == dst || m == tha)
            || dst.is_broadcast()
            || (Some(tpa) == self.own_ip && self.own_ip.is_some());
        if !for_us {
            return Err(DropReason::L3fArpNotForBridge);
        }
        // Step 4, second half: answer those who asked for the sender.
        self.solicited.remove(&spa);
        let answered: Vec<Pending> = self.pending.iter().filter(|p| p.target == spa).copied().collect();
        self.pending.retain(|p| p.target != spa);
        for p in answered {
            if p.asker_port == in_port || now.saturating_sub(p.since) >= PENDING_TIMEOUT_NS {
                continue;
            }
            let mac = self.mac_of(p.asker_port).expect("askers are on member ports");
            let reply = arp::Repr::EthernetIpv4 {
                operation: Operation::Reply,
                source_hardware_addr: mac,
                source_protocol_addr: spa,
                target_hardware_addr: p.asker_mac,
                target_protocol_addr: p.asker_ip,
            };
            out.push((Output::Port(p.asker_port), arp_frame(mac, p.asker_mac, &reply)));
        }
        Ok(())
    }

    fn ipv4(
        &mut self,
        now: Nanos,
        in_port: u16,
        in_mac: MacAddress,
        eth: &ethernet::Repr,
        frame: &[u8],
        out: &mut Vec<(Output, Vec<u8>)>,
    ) -> Result<(), DropReason> {
        let payload = &frame[ethernet::HEADER_LEN..];
        let ip = ipv4::Packet::new_checked(payload).map_err(|e| malformed("IPv4 header", e))?;
        let (src, dst) = (ip.src_addr(), ip.dst_addr());
        // Step 1: learn the source (and send what the bridge held for it).
        self.learn(now, src, in_port, eth.src_addr);
        self.release_held(now, src, out);

        // Step 7: broadcasts and multicasts go everywhere else, and up.
        if eth.dst_addr.is_multicast() || self.is_broadcast(dst) || dst.is_multicast() {
            for &(port, mac) in self.ports.iter().filter(|&&(p, _)| p != in_port) {
                out.push((Output::Port(port), ethernet_frame(mac, eth.dst_addr, EtherType::Ipv4, payload)));
            }
            out.push((Output::Local, frame.to_vec()));
            return Ok(());
        }
        if eth.dst_addr != in_mac {
            return Err(DropReason::L3fNotAddressedToBridge { port: in_port });
        }
        // Step 6: for the bridge itself.
        if Some(dst) == self.own_ip {
            out.push((Output::Local, frame.to_vec()));
            return Ok(());
        }
        // Step 5: relay on the L3F table with a new Ethernet header.
        let hop = self.next_hop(dst)?;
        match self.lookup(now, hop) {
            Some(e) if e.port == in_port => Err(DropReason::SameSegment { model: Model::L3f, port: in_port }),
            Some(e) => {
                let mac = self.mac_of(e.port).expect("table ports are members");
                out.push((Output::Port(e.port), ethernet_frame(mac, MacAddress(e.mac), EtherType::Ipv4, payload)));
                Ok(())
            }
            None => {
                self.solicit(now, hop, Some(in_port), src, out);
                Err(DropReason::L3fUnknownDestination { ip: hop })
            }
        }
    }

    /// Sends the bridge's own ARP request for `target` on every port but `except`, with
    /// the port's MAC and the bridge's IP (or `fallback_ip` without one) as sender, unless
    /// one went out less than [`PENDING_TIMEOUT_NS`] ago.
    fn solicit(
        &mut self,
        now: Nanos,
        target: Ipv4Addr,
        except: Option<u16>,
        fallback_ip: Ipv4Addr,
        out: &mut Vec<(Output, Vec<u8>)>,
    ) {
        if let Some(&at) = self.solicited.get(&target) {
            if now.saturating_sub(at) < PENDING_TIMEOUT_NS {
                return;
            }
        }
        self.solicited.insert(target, now);
        let sender_ip = self.own_ip.unwrap_or(fallback_ip);
        for &(port, mac) in self.ports.iter().filter(|&&(p, _)| Some(p) != except) {
            let request = arp::Repr::request(mac, sender_ip, target);
            out.push((Output::Port(port), arp_frame(mac, MacAddress::BROADCAST, &request)));
        }
    }

    /// Records `ip` at (`port`, `mac`) when it is a host of the subnet that is not the
    /// bridge: not 0.0.0.0, not a broadcast, not a group MAC, not one of the bridge's MACs.
    fn learn(&mut self, now: Nanos, ip: Ipv4Addr, port: u16, mac: MacAddress) {
        if ip.is_unspecified()
            || ip.is_multicast()
            || self.is_broadcast(ip)
            || Some(ip) == self.own_ip
            || !self.on_subnet(ip)
            || !mac.is_unicast()
            || self.ports.iter().any(|&(_, m)| m == mac)
        {
            return;
        }
        self.table.insert(ip, Learned { port, mac, seen: now });
    }

    /// The address to look up for `dst`: itself on the subnet, else the gateway.
    fn next_hop(&self, dst: Ipv4Addr) -> Result<Ipv4Addr, DropReason> {
        if self.on_subnet(dst) {
            Ok(dst)
        } else {
            self.gateway.ok_or(DropReason::L3fNoGateway { ip: dst })
        }
    }

    fn on_subnet(&self, ip: Ipv4Addr) -> bool {
        match self.own_ip {
            None => true,
            Some(own) => {
                let mask = prefix_mask(self.prefix_len);
                u32::from(ip) & mask == u32::from(own) & mask
            }
        }
    }

    /// The limited broadcast, or the subnet's directed broadcast (RFC 919, RFC 922).
    fn is_broadcast(&self, ip: Ipv4Addr) -> bool {
        if ip.is_broadcast() {
            return true;
        }
        match self.own_ip {
            Some(own) if self.prefix_len < 31 => {
                let mask = prefix_mask(self.prefix_len);
                u32::from(ip) == (u32::from(own) & mask) | !mask
            }
            _ => false,
        }
    }

    fn mac_of(&self, port: u16) -> Option<MacAddress> {
        self.ports.iter().find(|&&(p, _)| p == port).map(|&(_, m)| m)
    }

    fn live(&self, now: Nanos, l: &Learned) -> bool {
        now.saturating_sub(l.seen) < self.aging_ns
    }

    /// Forgets aged entries and stale askers, at most once per ageing time.
    fn sweep(&mut self, now: Nanos) {
        if !self.held.is_empty() {
            let expired: Vec<Ipv4Addr> = self
                .held
                .iter()
                .filter(|(_, (since, _))| now.saturating_sub(*since) >= HOLD_TIMEOUT_NS)
                .map(|(ip, _)| *ip)
                .collect();
            for ip in expired {
                let (_, packet) = self.held.remove(&ip).expect("held");
                self.dropped.push((DropReason::L3fUnresolved { ip }, packet));
            }
        }
        if now < self.next_sweep {
            return;
        }
        let aging = self.aging_ns;
        self.table.retain(|_, l| now.saturating_sub(l.seen) < aging);
        self.pending.retain(|p| now.saturating_sub(p.since) < PENDING_TIMEOUT_NS);
        self.solicited.retain(|_, &mut at| now.saturating_sub(at) < PENDING_TIMEOUT_NS);
        self.next_sweep = now.saturating_add(aging.clamp(1, PENDING_TIMEOUT_NS));
    }
}

fn malformed(what: &'static str, error: wire::Error) -> DropReason {
    DropReason::Malformed { model: Model::L3f, what, error }
}

fn prefix_mask(prefix_len: u8) -> u32 {
    if prefix_len == 0 {
        0
    } else {
        u32::MAX << (32 - u32::from(prefix_len.min(32)))
    }
}

/// RFC 1112 §6.4: an IPv4 multicast group's MAC is 01-00-5E and its low 23 bits; the
/// broadcasts map to FF-FF-FF-FF-FF-FF (RFC 894).
fn group_mac(ip: Ipv4Addr) -> MacAddress {
    if ip.is_multicast() {
        let o = ip.octets();
        MacAddress([0x01, 0x00, 0x5e, o[1] & 0x7f, o[2], o[3]])
    } else {
        MacAddress::BROADCAST
    }
}

fn ethernet_frame(src: MacAddress, dst: MacAddress, ethertype: EtherType, payload: &[u8]) -> Vec<u8> {
    let mut frame = Vec::with_capacity(ethernet::HEADER_LEN + payload.len().max(ethernet::MIN_PAYLOAD_LEN));
    ethernet::Repr { src_addr: src, dst_addr: dst, ethertype }.encapsulate(payload, false, &mut frame);
    frame
}

fn arp_frame(src: MacAddress, dst: MacAddress, repr: &arp::Repr) -> Vec<u8> {
    let mut body = vec![0; repr.buffer_len()];
    repr.emit(&mut arp::Packet::new_unchecked(&mut body[..]));
    ethernet_frame(src, dst, EtherType::Arp, &body)
}

#[cfg(test)]
mod test {
    use super::*;

    const A1: [u8; 6] = [0x02, 0xa1, 0, 0, 0, 1];
    const A2: [u8; 6] = [0x02, 0xa2, 0, 0, 0, 2];
    const M1: [u8; 6] = [0x02, 0, 0, 0, 0, 1];
    const M2: [u8; 6] = [0x02, 0, 0, 0, 0, 2];
    const IP_A: Ipv4Addr = Ipv4Addr::new(192, 168, 1, 101);
    const IP_1: Ipv4Addr = Ipv4Addr::new(192, 168, 1, 100);
    const IP_2: Ipv4Addr = Ipv4Addr::new(192, 168, 1, 102);

    fn bridge() -> L3fBridge {
        L3fBridge::new(&[(1, A1), (2, A2)], Some(IP_A), 24)
    }

    fn parse_arp(frame: &[u8]) -> (ethernet::Repr, arp::Repr) {
        let (eth, body) = ethernet::decapsulate(frame, false).unwrap();
        (eth, arp::Repr::parse(&arp::Packet::new_checked(body).unwrap()).unwrap())
    }

    fn request(sha: [u8; 6], spa: Ipv4Addr, tpa: Ipv4Addr) -> Vec<u8> {
        arp_frame(MacAddress(sha), MacAddress::BROADCAST, &arp::Repr::request(MacAddress(sha), spa, tpa))
    }

    #[test]
    fn arp_for_the_bridge_is_answered_with_the_incoming_ports_mac() {
        let mut b = bridge();
        let mut out = Vec::new();
        b.process(0, 2, &request(M2, IP_2, IP_A), &mut out).unwrap();
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].0, Output::Port(2));
        let (eth, arp) = parse_arp(&out[0].1);
        assert_eq!((eth.src_addr, eth.dst_addr), (MacAddress(A2), MacAddress(M2)));
        assert_eq!(arp, arp::Repr::reply_to(&arp::Repr::request(MacAddress(M2), IP_2, IP_A), MacAddress(A2)));
        assert_eq!(b.table(0), vec![L3fEntry { ip: IP_2, port: 2, mac: M2 }]);
    }

    #[test]
    fn arp_for_a_host_on_the_askers_own_port_is_left_to_that_host() {
        let mut b = bridge();
        let mut out = Vec::new();
        b.process(0, 1, &request(M1, IP_1, IP_A), &mut out).unwrap();
        out.clear();
        let r = b.process(0, 1, &request([2, 0, 0, 0, 0, 9], Ipv4Addr::new(192, 168, 1, 9), IP_1), &mut out);
        assert_eq!(r, Err(DropReason::L3fArpSameSegment { target: IP_1, port: 1 }));
        assert!(out.is_empty());
    }

    #[test]
    fn an_unanswered_asker_is_forgotten_after_the_timeout() {
        let mut b = bridge();
        let mut out = Vec::new();
        b.process(0, 1, &request(M1, IP_1, IP_2), &mut out).unwrap();
        assert_eq!(out.len(), 1);
        out.clear();
        let reply = arp::Repr::reply_to(&arp::Repr::request(MacAddress(A2), IP_A, IP_2), MacAddress(M2));
        b.process(PENDING_TIMEOUT_NS, 2, &arp_frame(MacAddress(M2), MacAddress(A2), &reply), &mut out).unwrap();
        assert!(out.is_empty(), "a reply after the timeout answers nobody");
        assert_eq!(b.lookup(PENDING_TIMEOUT_NS, IP_2).map(|e| e.port), Some(2));
    }

    #[test]
    fn other_ethertypes_and_frames_for_other_stations_are_dropped() {
        let mut b = bridge();
        let mut out = Vec::new();
        let ipv6 = ethernet_frame(MacAddress(M1), MacAddress(A1), EtherType::Ipv6, &[0x60; 40]);
        assert_eq!(b.process(0, 1, &ipv6, &mut out), Err(DropReason::L3fEtherType(0x86dd)));
        let mut datagram = Vec::new();
        ipv4::Repr::new(IP_1, IP_2, ipv4::Protocol::Udp, 0, 64).encapsulate(&[], &mut datagram);
        let other = ethernet_frame(MacAddress(M1), MacAddress([2, 0, 0, 0, 0, 7]), EtherType::Ipv4, &datagram);
        assert_eq!(b.process(0, 1, &other, &mut out), Err(DropReason::L3fNotAddressedToBridge { port: 1 }));
        assert!(out.is_empty());
    }

    #[test]
    fn unknown_unicast_is_dropped_and_resolved_for_the_next_packet() {
        let mut b = bridge();
        let mut out = Vec::new();
        let mut datagram = Vec::new();
        ipv4::Repr::new(IP_1, IP_2, ipv4::Protocol::Udp, 0, 64).encapsulate(&[], &mut datagram);
        let f = ethernet_frame(MacAddress(M1), MacAddress(A1), EtherType::Ipv4, &datagram);
        assert_eq!(b.process(0, 1, &f, &mut out), Err(DropReason::L3fUnknownDestination { ip: IP_2 }));
        assert_eq!(out.len(), 1);
        let (eth, arp) = parse_arp(&out[0].1);
        assert_eq!((out[0].0, eth.src_addr), (Output::Port(2), MacAddress(A2)));
        assert_eq!(arp, arp::Repr::request(MacAddress(A2), IP_A, IP_2));
        // A second packet within the second does not send another request.
        out.clear();
        assert!(b.process(1, 1, &f, &mut out).is_err());
        assert!(out.is_empty());
    }

    #[test]
    fn the_latest_own_datagram_is_held_and_an_unresolved_one_is_dropped_after_the_timeout() {
        let mut b = bridge();
        let mut out = Vec::new();
        let (mut first, mut second) = (Vec::new(), Vec::new());
        ipv4::Repr::new(IP_A, IP_2, ipv4::Protocol::Udp, 0, 64).encapsulate(&[1], &mut first);
        ipv4::Repr::new(IP_A, IP_2, ipv4::Protocol::Udp, 0, 64).encapsulate(&[2], &mut second);
        b.send_local(0, &first, &mut out).unwrap();
        b.send_local(10, &second, &mut out).unwrap();
        // RFC 1122 §2.3.2.2 keeps the latest: the first is given up.
        assert_eq!(b.take_dropped(), vec![(DropReason::L3fUnresolved { ip: IP_2 }, first.clone())]);
        assert_eq!(b.held_len(), 1);
        // Nobody answers within HOLD_TIMEOUT_NS: the held one is dropped at the next send.
        let mut third = Vec::new();
        ipv4::Repr::new(IP_A, IP_1, ipv4::Protocol::Udp, 0, 64).encapsulate(&[3], &mut third);
        b.send_local(10 + HOLD_TIMEOUT_NS, &third, &mut out).unwrap();
        assert_eq!(b.take_dropped(), vec![(DropReason::L3fUnresolved { ip: IP_2 }, second)]);
        assert_eq!(b.held_len(), 1);
    }

    #[test]
    fn entries_age() {
        let mut b = bridge().with_aging(10);
        let mut out = Vec::new();
        b.process(0, 1, &request(M1, IP_1, IP_A), &mut out).unwrap();
        assert_eq!(b.table(9).len(), 1);
        assert!(b.table(10).is_empty());
    }

    #[test]
    fn the_local_stack_sends_through_the_table() {
        let mut b = bridge();
        let mut out = Vec::new();
        let mut datagram = Vec::new();
        ipv4::Repr::new(IP_A, IP_2, ipv4::Protocol::Udp, 0, 64).encapsulate(&[], &mut datagram);
        // RFC 1122 §2.3.2.2: the datagram waits while ARP resolves (requests on every port).
        assert_eq!(b.send_local(0, &datagram, &mut out), Ok(()));
        assert_eq!(out.iter().map(|o| o.0).collect::<Vec<_>>(), vec![Output::Port(1), Output::Port(2)]);
        assert_eq!(b.held_len(), 1);
        out.clear();
        // The request from IP_2 resolves it: the held datagram goes out with it.
        b.process(0, 2, &request(M2, IP_2, IP_A), &mut out).unwrap();
        let sent: Vec<_> =
            out.iter().filter(|o| ethernet::decapsulate(&o.1, false).unwrap().0.ethertype == EtherType::Ipv4).collect();
        assert_eq!(sent.len(), 1);
        let (eth, body) = ethernet::decapsulate(&sent[0].1, false).unwrap();
        assert_eq!((sent[0].0, eth.src_addr, eth.dst_addr), (Output::Port(2), MacAddress(A2), MacAddress(M2)));
        assert_eq!(&body[..datagram.len()], &datagram[..]);
        assert_eq!((b.held_len(), b.take_dropped().len()), (0, 0));
        out.clear();
        b.send_local(1, &datagram, &mut out).unwrap();
        let (eth, body) = ethernet::decapsulate(&out[0].1, false).unwrap();
        assert_eq!((out[0].0, eth.src_addr, eth.dst_addr), (Output::Port(2), MacAddress(A2), MacAddress(M2)));
        assert_eq!(&body[..datagram.len()], &datagram[..]);
    }
}
