//! NAPT ("masquerading"), as Windows Internet Connection Sharing (seed 000 §2.3) and
//! Linux's `MASQUERADE` target do it.
//!
//! Standards a reader must know:
//! - RFC 3022 §2.2 (Traditional NAT, NAPT): inside hosts share the one outside address;
//!   outbound packets get it as their source, and their source port (TCP, UDP) or ICMP
//!   query identifier is mapped to one the NAT owns; §4.1 the checksum updates.
//! - RFC 4787 (UDP): REQ-1 endpoint-independent mapping (one inside address and port keep
//!   one outside port whatever they send to); REQ-3 the port range (an inside port in
//!   1024–65535 is never mapped below 1024) and port preservation when the port is free;
//!   REQ-5 the mapping timer; REQ-6 outbound refresh. §5 filtering: here, by default,
//!   address-and-port-dependent (what Linux conntrack effectively does).
//! - RFC 5382 (TCP): endpoint-independent mapping too; REQ-5 an established connection
//!   idles out after at least 2 h 4 min, a transitory one after 4 min.
//! - RFC 5508 (ICMP): REQ-1 query (echo) mappings on the identifier, idle timeout at
//!   least 60 s; REQ-3 an ICMP error is translated with the packet it quotes: the outer
//!   address, the quoted header's addresses and ports, and all three checksums.
//! - RFC 1624: incremental checksum update, Eqn. 3: HC' = ~(~HC + ~m + m').
//!
//! Seed 000 §2.3 is the behaviour to reproduce: "traffic initiated from LAN2" (inside)
//! works, replies come back translated, and "any traffic initiated from outside hosts
//! cannot be forwarded to internal hosts": an unsolicited inbound packet for an inside
//! address is dropped with [`DropReason::NatNoMapping`].
//!
//! Choices documented here:
//! - [`Nat::inbound`] returns [`Inbound::ToSelf`] for an unsolicited packet addressed to
//!   the outside address itself (a ping to the ICS host, a test flow to it, an ICMP error
//!   about its own traffic): the node's own stack takes it, as on the real host.
//! - Packets from the outside address itself (the NAT host's own traffic) are left as
//!   they are by [`Nat::outbound`]; port forwards reserve their outside ports.
//! - Fragments are refused ([`DropReason::NatFragment`]): the node reassembles before
//!   translating, as Linux's conntrack (nf_defrag_ipv4) does.
//! - Only TCP, UDP and ICMP are translated.
//!
//! Sans-IO: `now` comes in with each packet; [`Nat::poll_at`] says when the next mapping
//! expires, [`Nat::expire`] removes those that have.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::net::{Ipv4Addr, SocketAddrV4};
use std::str::FromStr;

use wire::icmpv4::{self, Message};
use wire::ipv4::{self, Protocol};
use wire::{tcp, udp};

use super::{DropReason, Model, Nanos};

/// RFC 5382 REQ-5: an established TCP mapping lives at least 2 h 4 min idle.
pub const TCP_ESTABLISHED_TIMEOUT_NS: Nanos = 7_440 * 1_000_000_000;
/// RFC 5382 REQ-5: a transitory TCP mapping (opening or closing) lives 4 min idle.
pub const TCP_TRANSITORY_TIMEOUT_NS: Nanos = 240 * 1_000_000_000;
/// RFC 5508 REQ-1: an ICMP query mapping lives at least 60 s idle.
pub const ICMP_QUERY_TIMEOUT_NS: Nanos = 60 * 1_000_000_000;

/// The protocols NAPT translates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum NatProtocol {
    Udp,
    Tcp,
    /// ICMP queries, mapped on the echo identifier (RFC 5508).
    Icmp,
}

impl fmt::Display for NatProtocol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            NatProtocol::Udp => "UDP",
            NatProtocol::Tcp => "TCP",
            NatProtocol::Icmp => "ICMP",
        })
    }
}

/// `"udp"` or `"tcp"`, any case (the config's `PortForward::protocol`).
impl FromStr for NatProtocol {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.to_ascii_lowercase().as_str() {
            "udp" => Ok(NatProtocol::Udp),
            "tcp" => Ok(NatProtocol::Tcp),
            _ => Err(format!("unknown protocol {s:?} (expected udp or tcp)")),
        }
    }
}

/// An inbound port forward: outside `protocol`/`port` to `to`:`to_port` inside.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PortForward {
    pub protocol: NatProtocol,
    pub port: u16,
    pub to: Ipv4Addr,
    pub to_port: u16,
}

/// RFC 4787 §5: which inbound packets a mapping lets in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Filtering {
    /// Any remote endpoint.
    EndpointIndependent,
    /// Remote addresses the inside endpoint sent to.
    AddressDependent,
    /// Remote address and port pairs the inside endpoint sent to (Linux conntrack).
    #[default]
    AddressAndPortDependent,
}

/// What [`Nat::inbound`] did with a packet it let through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Inbound {
    /// Rewritten to its inside destination: route it inside.
    Translated,
    /// Addressed to the outside address and matching no mapping or forward: the node's
    /// own stack takes it, unchanged.
    ToSelf,
}

/// A mapping, for reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mapping {
    pub protocol: NatProtocol,
    /// The inside address and port (or ICMP identifier).
    pub inside: SocketAddrV4,
    /// The outside address and port (or identifier) it is mapped to.
    pub outside: SocketAddrV4,
    /// The remote endpoints the inside sent to (or that came in through a port forward).
    pub remotes: Vec<SocketAddrV4>,
    /// Nanoseconds since the mapping was last used.
    pub idle_ns: Nanos,
    /// Created by a port forward rather than by an outbound packet.
    pub forwarded: bool,
}

#[derive(Debug, Clone)]
struct Entry {
    inside: SocketAddrV4,
    remotes: BTreeSet<SocketAddrV4>,
    last_used: Nanos,
    forwarded: bool,
    /// TCP: packets went both ways (RFC 5382's "established").
    tcp_seen_in: bool,
    tcp_seen_out: bool,
    /// TCP: a RST, or FINs both ways (transitory again).
    tcp_closing: bool,
    tcp_fin_in: bool,
    tcp_fin_out: bool,
}

/// A NAPT translator for one outside address.
#[derive(Debug, Clone)]
pub struct Nat {
    outside_ip: Ipv4Addr,
    udp_timeout_ns: Nanos,
    filtering: Filtering,
    forwards: Vec<PortForward>,
    /// (protocol, inside endpoint) → outside port.
    by_inside: BTreeMap<(NatProtocol, SocketAddrV4), u16>,
    /// (protocol, outside port) → mapping.
    by_outside: BTreeMap<(NatProtocol, u16), Entry>,
    next_sweep: Nanos,
}

/// The endpoints of a datagram (for ICMP queries, the identifier is the querier's port).
#[derive(Debug, Clone, Copy)]
struct Flow {
    protocol: NatProtocol,
    src: SocketAddrV4,
    dst: SocketAddrV4,
}

impl Nat {
    /// A NAT masquerading behind `outside_ip`, UDP mappings idling out after
    /// `udp_timeout_ns` (RFC 4787 REQ-5 asks for at least 2 min; Linux uses 30 s
    /// unreplied and 180 s assured), with static `port_forwards`.
    pub fn new(outside_ip: Ipv4Addr, udp_timeout_ns: Nanos, port_forwards: &[PortForward]) -> Nat {
        Nat {
            outside_ip,
            udp_timeout_ns,
            filtering: Filtering::default(),
            forwards: port_forwards.to_vec(),
            by_inside: BTreeMap::new(),
            by_outside: BTreeMap::new(),
            next_sweep: 0,
        }
    }

    /// RFC 4787 §5 filtering (address-and-port-dependent unless set).
    pub fn with_filtering(mut self, filtering: Filtering) -> Nat {
        self.filtering = filtering;
        self
    }

    pub fn outside_ip(&self) -> Ipv4Addr {
        self.outside_ip
    }

    /// Translates an IPv4 datagram going out: source address → the outside address,
    /// source port or echo identifier → the mapped one (a mapping is created if none
    /// exists), checksums updated. ICMP errors about inbound-translated packets are
    /// translated with their quote (RFC 5508 REQ-3).
    pub fn outbound(&mut self, now: Nanos, packet: &mut [u8]) -> Result<(), DropReason> {
        self.sweep(now);
        let ip = ipv4::Packet::new_checked(&packet[..]).map_err(|e| malformed("IPv4 header", e))?;
        let src = ip.src_addr();
        if src == self.outside_ip {
            return Ok(());
        }
        if ip.more_frags() || ip.frag_offset() != 0 {
            return Err(DropReason::NatFragment);
        }
        let (hl, total, proto) = (ip.header_len(), usize::from(ip.total_len()), ip.next_header());
        if proto == Protocol::Icmp {
            let msg = icmpv4::Packet::new_checked(&packet[hl..total]).map_err(|e| malformed("ICMP message", e))?;
            match msg.msg_type() {
                Message::EchoRequest => {}
                Message::DstUnreachable | Message::TimeExceeded | Message::ParamProblem | Message::SourceQuench => {
                    return self.outbound_error(now, packet);
                }
                other => return Err(DropReason::NatIcmpType(other.into())),
            }
        }
        let flow = flow_of(&packet[..])?;
        let key = (flow.protocol, flow.src);
        let port = match self.by_inside.get(&key) {
            Some(&port) if self.live(now, flow.protocol, port) => port,
            _ => {
                if let Some(old) = self.by_inside.remove(&key) {
                    self.by_outside.remove(&(flow.protocol, old));
                }
                let port = self.allocate(flow.protocol, flow.src.port())?;
                self.by_inside.insert(key, port);
                self.by_outside.insert((flow.protocol, port), Entry::new(flow.src, now, false));
                port
            }
        };
        let entry = self.by_outside.get_mut(&(flow.protocol, port)).expect("both maps agree");
        entry.last_used = now;
        entry.remotes.insert(flow.dst);
        if flow.protocol == NatProtocol::Tcp {
            entry.tcp_seen_out = true;
            let (fin, rst) = tcp_fin_rst(&packet[hl..total]);
            entry.tcp_fin_out |= fin;
            entry.tcp_closing |= rst || (entry.tcp_fin_in && entry.tcp_fin_out);
        }
        rewrite_source(packet, SocketAddrV4::new(self.outside_ip, port));
        Ok(())
    }

    /// Translates an IPv4 datagram coming in: a reply through a mapping, or a new flow
    /// through a port forward, gets its inside destination; an ICMP error quoting a
    /// translated packet is translated with its quote. Unsolicited traffic for an inside
    /// address is dropped with the reason; for the outside address it goes to the node
    /// itself ([`Inbound::ToSelf`]).
    pub fn inbound(&mut self, now: Nanos, packet: &mut [u8]) -> Result<Inbound, DropReason> {
        self.sweep(now);
        let ip = ipv4::Packet::new_checked(&packet[..]).map_err(|e| malformed("IPv4 header", e))?;
        let dst = ip.dst_addr();
        if ip.more_frags() || ip.frag_offset() != 0 {
            return Err(DropReason::NatFragment);
        }
        let (hl, total, proto) = (ip.header_len(), usize::from(ip.total_len()), ip.next_header());
        if dst != self.outside_ip {
            return Err(self.unsolicited(packet));
        }
        if proto == Protocol::Icmp {
            let msg = icmpv4::Packet::new_checked(&packet[hl..total]).map_err(|e| malformed("ICMP message", e))?;
            match msg.msg_type() {
                Message::EchoReply => {}
                Message::DstUnreachable | Message::TimeExceeded | Message::ParamProblem | Message::SourceQuench => {
                    return self.inbound_error(now, packet);
                }
                _ => return Ok(Inbound::ToSelf),
            }
        }
        let flow = match flow_of(&packet[..]) {
            Ok(flow) => flow,
            Err(DropReason::NatProtocol(_)) => return Ok(Inbound::ToSelf),
            Err(e) => return Err(e),
        };
        let key = (flow.protocol, flow.dst.port());
        if !self.live(now, flow.protocol, flow.dst.port()) {
            self.forget(key);
            let forward = self.forwards.iter().find(|f| f.protocol == flow.protocol && f.port == flow.dst.port());
            let Some(&forward) = forward else { return Ok(Inbound::ToSelf) };
            let inside = SocketAddrV4::new(forward.to, forward.to_port);
            if let Some(old) = self.by_inside.insert((flow.protocol, inside), forward.port) {
                self.by_outside.remove(&(flow.protocol, old));
            }
            self.by_outside.insert(key, Entry::new(inside, now, true));
        }
        let filtering = self.filtering;
        let entry = self.by_outside.get_mut(&key).expect("checked live above");
        if !entry.forwarded && !entry.admits(filtering, flow.src) {
            return Err(DropReason::NatFiltered { protocol: flow.protocol, dst: flow.dst, from: flow.src });
        }
        entry.last_used = now;
        if entry.forwarded {
            entry.remotes.insert(flow.src);
        }
        if flow.protocol == NatProtocol::Tcp {
            entry.tcp_seen_in = true;
            let (fin, rst) = tcp_fin_rst(&packet[hl..total]);
            entry.tcp_fin_in |= fin;
            entry.tcp_closing |= rst || (entry.tcp_fin_in && entry.tcp_fin_out);
        }
        let inside = entry.inside;
        rewrite_destination(packet, inside);
        Ok(Inbound::Translated)
    }

    /// The live mappings, ordered by protocol and outside port.
    pub fn mappings(&self, now: Nanos) -> Vec<Mapping> {
        self.by_outside
            .iter()
            .filter(|(&(p, port), _)| self.live(now, p, port))
            .map(|(&(protocol, port), e)| Mapping {
                protocol,
                inside: e.inside,
                outside: SocketAddrV4::new(self.outside_ip, port),
                remotes: e.remotes.iter().copied().collect(),
                idle_ns: now.saturating_sub(e.last_used),
                forwarded: e.forwarded,
            })
            .collect()
    }

    /// When the next mapping expires, if any (the engine arms one timer for it).
    pub fn poll_at(&self) -> Option<Nanos> {
        self.by_outside.iter().map(|(&(p, _), e)| e.last_used.saturating_add(self.timeout(p, e))).min()
    }

    /// Removes the mappings idle for their timeout at `now`.
    pub fn expire(&mut self, now: Nanos) {
        let dead: Vec<(NatProtocol, u16)> =
            self.by_outside.keys().copied().filter(|&(p, port)| !self.live(now, p, port)).collect();
        for key in dead {
            self.forget(key);
        }
    }

    fn sweep(&mut self, now: Nanos) {
        if now >= self.next_sweep {
            self.expire(now);
            self.next_sweep = now.saturating_add(1_000_000_000);
        }
    }

    fn forget(&mut self, key: (NatProtocol, u16)) {
        if let Some(e) = self.by_outside.remove(&key) {
            if self.by_inside.get(&(key.0, e.inside)) == Some(&key.1) {
                self.by_inside.remove(&(key.0, e.inside));
            }
        }
    }

    fn timeout(&self, protocol: NatProtocol, e: &Entry) -> Nanos {
        match protocol {
            NatProtocol::Udp => self.udp_timeout_ns,
            NatProtocol::Icmp => ICMP_QUERY_TIMEOUT_NS,
            NatProtocol::Tcp if e.tcp_seen_in && e.tcp_seen_out && !e.tcp_closing => TCP_ESTABLISHED_TIMEOUT_NS,
            NatProtocol::Tcp => TCP_TRANSITORY_TIMEOUT_NS,
        }
    }

    fn live(&self, now: Nanos, protocol: NatProtocol, port: u16) -> bool {
        self.by_outside
            .get(&(protocol, port))
            .is_some_and(|e| now.saturating_sub(e.last_used) < self.timeout(protocol, e))
    }

    /// RFC 4787 REQ-3: keep the inside port if it is free (port preservation), else the
    /// next free one in the same range (0–1023 or 1024–65535); identifiers anywhere.
    fn allocate(&mut self, protocol: NatProtocol, preferred: u16) -> Result<u16, DropReason> {
        let (lo, hi) = match protocol {
            NatProtocol::Icmp => (0u16, u16::MAX),
            _ if preferred < 1024 => (1, 1023),
            _ => (1024, u16::MAX),
        };
        let preferred = preferred.clamp(lo, hi);
        let span = u32::from(hi - lo) + 1;
        for i in 0..span {
            let port = lo + ((u32::from(preferred - lo) + i) % span) as u16;
            let reserved = self.forwards.iter().any(|f| f.protocol == protocol && f.port == port);
            if !reserved && !self.by_outside.contains_key(&(protocol, port)) {
                return Ok(port);
            }
        }
        Err(DropReason::NatPortsExhausted { protocol })
    }

    fn unsolicited(&self, packet: &[u8]) -> DropReason {
        match flow_of(packet) {
            Ok(flow) => DropReason::NatNoMapping { protocol: flow.protocol, dst: flow.dst },
            Err(DropReason::NatIcmpType(_)) => {
                let dst = ipv4::Packet::new_unchecked(packet).dst_addr();
                DropReason::NatNoMapping { protocol: NatProtocol::Icmp, dst: SocketAddrV4::new(dst, 0) }
            }
            Err(e) => e,
        }
    }

    /// An inside host's ICMP error about a packet that came in through a mapping: the
    /// quote's destination is the inside endpoint.
    fn outbound_error(&mut self, now: Nanos, packet: &mut [u8]) -> Result<(), DropReason> {
        let (quoted_flow, quoted_at) = quoted(packet)?;
        let key = (quoted_flow.protocol, quoted_flow.dst);
        let port = match self.by_inside.get(&key) {
            Some(&port) if self.live(now, key.0, port) => port,
            _ => return Err(DropReason::NatIcmpType(packet[quoted_at - icmpv4::HEADER_LEN])),
        };
        rewrite_quote(packet, quoted_at, false, SocketAddrV4::new(self.outside_ip, port));
        let outside = self.outside_ip;
        rewrite_ip_addr(packet, true, outside);
        Ok(())
    }

    /// A remote's ICMP error about a packet we translated out: the quote's source is
    /// our outside address and mapped port.
    fn inbound_error(&mut self, now: Nanos, packet: &mut [u8]) -> Result<Inbound, DropReason> {
        let (quoted_flow, quoted_at) = quoted(packet)?;
        if *quoted_flow.src.ip() != self.outside_ip {
            return Ok(Inbound::ToSelf);
        }
        let key = (quoted_flow.protocol, quoted_flow.src.port());
        if !self.live(now, key.0, key.1) {
            return Ok(Inbound::ToSelf);
        }
        let inside = self.by_outside[&key].inside;
        rewrite_quote(packet, quoted_at, true, inside);
        rewrite_ip_addr(packet, false, *inside.ip());
        Ok(Inbound::Translated)
    }
}

impl Entry {
    fn new(inside: SocketAddrV4, now: Nanos, forwarded: bool) -> Entry {
        Entry {
            inside,
            remotes: BTreeSet::new(),
            last_used: now,
            forwarded,
            tcp_seen_in: false,
            tcp_seen_out: false,
            tcp_closing: false,
            tcp_fin_in: false,
            tcp_fin_out: false,
        }
    }

    fn admits(&self, filtering: Filtering, from: SocketAddrV4) -> bool {
        match filtering {
            Filtering::EndpointIndependent => true,
            Filtering::AddressDependent => self.remotes.iter().any(|r| r.ip() == from.ip()),
            Filtering::AddressAndPortDependent => self.remotes.contains(&from),
        }
    }
}

fn malformed(what: &'static str, error: wire::Error) -> DropReason {
    DropReason::Malformed { model: Model::Nat, what, error }
}

fn ipv4_header_len(packet: &[u8]) -> usize {
    ipv4::Packet::new_unchecked(packet).header_len()
}

/// The endpoints of a whole (or quoted, `truncated`) datagram: ports for TCP and UDP,
/// the identifier as the port of both ends for an ICMP echo or echo reply.
fn endpoints(packet: &[u8], truncated: bool) -> Result<Flow, DropReason> {
    let ip = ipv4::Packet::new_unchecked(packet);
    let (src, dst, hl) = (ip.src_addr(), ip.dst_addr(), ip.header_len());
    let end = if truncated { packet.len() } else { usize::from(ip.total_len()) };
    let body = &packet[hl..end];
    let need = |n: usize, what| if body.len() < n { Err(malformed(what, wire::Error::Truncated)) } else { Ok(()) };
    let ports = |b: &[u8]| (u16::from_be_bytes([b[0], b[1]]), u16::from_be_bytes([b[2], b[3]]));
    match ip.next_header() {
        Protocol::Udp | Protocol::Tcp => {
            let protocol = if ip.next_header() == Protocol::Udp { NatProtocol::Udp } else { NatProtocol::Tcp };
            if !truncated {
                if protocol == NatProtocol::Udp {
                    udp::Packet::new_checked(body).map_err(|e| malformed("UDP header", e))?;
                } else {
                    tcp::Packet::new_checked(body).map_err(|e| malformed("TCP header", e))?;
                }
            }
            need(4, "transport ports")?;
            let (sport, dport) = ports(body);
            Ok(Flow { protocol, src: SocketAddrV4::new(src, sport), dst: SocketAddrV4::new(dst, dport) })
        }
        Protocol::Icmp => {
            need(icmpv4::HEADER_LEN, "ICMP message")?;
            let msg = icmpv4::Packet::new_unchecked(body);
            match msg.msg_type() {
                Message::EchoRequest | Message::EchoReply => {
                    let id = msg.echo_ident();
                    Ok(Flow {
                        protocol: NatProtocol::Icmp,
                        src: SocketAddrV4::new(src, id),
                        dst: SocketAddrV4::new(dst, id),
                    })
                }
                other => Err(DropReason::NatIcmpType(other.into())),
            }
        }
        other => Err(DropReason::NatProtocol(other.into())),
    }
}

fn flow_of(packet: &[u8]) -> Result<Flow, DropReason> {
    let mut flow = endpoints(packet, false)?;
    if flow.protocol == NatProtocol::Icmp {
        // The identifier belongs to the querier: it is the "port" of the echo request's
        // source and of the echo reply's destination; the other end has none.
        let request =
            icmpv4::Packet::new_unchecked(&packet[ipv4_header_len(packet)..]).msg_type() == Message::EchoRequest;
        if request {
            flow.dst.set_port(0);
        } else {
            flow.src.set_port(0);
        }
    }
    Ok(flow)
}

/// The flow of the datagram an ICMP error quotes, and the offset of the quote.
fn quoted(packet: &[u8]) -> Result<(Flow, usize), DropReason> {
    let hl = ipv4_header_len(packet);
    let total = usize::from(ipv4::Packet::new_unchecked(packet).total_len());
    let msg = icmpv4::Packet::new_checked(&packet[hl..total]).map_err(|e| malformed("ICMP message", e))?;
    let repr = icmpv4::Repr::parse(&msg).map_err(|e| malformed("ICMP message", e))?;
    let quote = repr.quoted().ok_or(malformed("ICMP error", wire::Error::Unsupported))?;
    ipv4::Repr::parse_truncated(&ipv4::Packet::new_unchecked(quote)).map_err(|e| malformed("quoted IPv4 header", e))?;
    let at = hl + icmpv4::HEADER_LEN;
    let mut flow = endpoints(&packet[at..total], true)?;
    if flow.protocol == NatProtocol::Icmp {
        // A quoted echo request: the identifier is the source's (our side's) port.
        flow.dst.set_port(0);
    }
    Ok((flow, at))
}

/// RFC 1624 Eqn. 3: the checksum `hc` after the 16-bit-aligned bytes `old` became `new`.
fn checksum_update(hc: u16, old: &[u8], new: &[u8]) -> u16 {
    let mut acc = u32::from(!hc);
    acc = wire::checksum::accumulate(acc, new);
    for pair in old.chunks(2) {
        let word = u16::from_be_bytes([pair[0], *pair.get(1).unwrap_or(&0)]);
        acc += u32::from(!word);
    }
    !wire::checksum::fold(acc)
}

/// Updates the transport checksum at `at` (an absolute offset) of a packet whose
/// pseudo-header address and port changed from `old` to `new`. UDP's "no checksum" (0)
/// stays 0, and a computed 0 is sent as 0xffff (RFC 768).
fn fix_transport_checksum(buf: &mut [u8], at: usize, udp: bool, old: &[u8], new: &[u8]) {
    if at + 2 > buf.len() {
        return; // a short quote that does not hold the checksum
    }
    let hc = u16::from_be_bytes([buf[at], buf[at + 1]]);
    if udp && hc == 0 {
        return;
    }
    let mut c = checksum_update(hc, old, new);
    if udp && c == 0 {
        c = 0xffff;
    }
    buf[at..at + 2].copy_from_slice(&c.to_be_bytes());
}

/// Rewrites the source (`source = true`) or destination endpoint of the datagram at the
/// start of `buf` (which may be a truncated quote): address, port or echo identifier,
/// and the transport or ICMP checksum incrementally; the IP header checksum recomputed.
fn rewrite_endpoint(buf: &mut [u8], source: bool, to: SocketAddrV4) {
    let hl = ipv4_header_len(buf);
    let proto = ipv4::Packet::new_unchecked(&buf[..]).next_header();
    let addr_field = if source { ipv4::field::SRC_ADDR } else { ipv4::field::DST_ADDR };
    let old_addr: [u8; 4] = buf[addr_field.clone()].try_into().expect("4 bytes");
    let new_addr = to.ip().octets();
    let port_at = hl + if source { 0 } else { 2 };
    match proto {
        Protocol::Udp | Protocol::Tcp => {
            let old_port = [buf[port_at], buf[port_at + 1]];
            let new_port = to.port().to_be_bytes();
            let old = [old_addr[0], old_addr[1], old_addr[2], old_addr[3], old_port[0], old_port[1]];
            let new = [new_addr[0], new_addr[1], new_addr[2], new_addr[3], new_port[0], new_port[1]];
            let (csum_at, udp) = match proto {
                Protocol::Udp => (hl + udp::field::CHECKSUM.start, true),
                _ => (hl + tcp::field::CHECKSUM.start, false),
            };
            buf[port_at..port_at + 2].copy_from_slice(&new_port);
            fix_transport_checksum(buf, csum_at, udp, &old, &new);
        }
        Protocol::Icmp => {
            // Echo identifier: no pseudo-header in the ICMP checksum (RFC 792).
            let at = hl + icmpv4::field::ECHO_IDENT.start;
            let is_ours = {
                let t = Message::from(buf[hl + icmpv4::field::TYPE]);
                matches!(t, Message::EchoRequest | Message::EchoReply)
            };
            if is_ours && at + 2 <= buf.len() {
                let old = [buf[at], buf[at + 1]];
                let new = to.port().to_be_bytes();
                buf[at..at + 2].copy_from_slice(&new);
                let total = usize::from(ipv4::Packet::new_unchecked(&buf[..]).total_len());
                if total <= buf.len() && hl < total {
                    // The whole message is here: recompute. RFC 1624's Eqn. 3 gives 0x0000
                    // for a message whose data sum to zero (an echo of zeros with id 0 and
                    // seq 0), where the only valid checksum is 0xffff.
                    icmpv4::Packet::new_unchecked(&mut buf[hl..total]).fill_checksum();
                } else {
                    fix_transport_checksum(buf, hl + icmpv4::field::CHECKSUM.start, false, &old, &new);
                }
            }
        }
        _ => {}
    }
    rewrite_ip_addr(buf, source, *to.ip());
}

/// Sets the source or destination address of the datagram at the start of `buf` and
/// recomputes its header checksum.
fn rewrite_ip_addr(buf: &mut [u8], source: bool, to: Ipv4Addr) {
    let mut ip = ipv4::Packet::new_unchecked(&mut buf[..]);
    if source {
        ip.set_src_addr(to);
    } else {
        ip.set_dst_addr(to);
    }
    ip.fill_checksum();
}

fn rewrite_source(packet: &mut [u8], to: SocketAddrV4) {
    rewrite_endpoint(packet, true, to);
}

fn rewrite_destination(packet: &mut [u8], to: SocketAddrV4) {
    rewrite_endpoint(packet, false, to);
}

/// Rewrites the quoted datagram at `at` (its source when `source`), then the ICMP
/// message's checksum over the changed quote.
fn rewrite_quote(packet: &mut [u8], at: usize, source: bool, to: SocketAddrV4) {
    let total = usize::from(ipv4::Packet::new_unchecked(&packet[..]).total_len());
    rewrite_endpoint(&mut packet[at..total], source, to);
    let hl = ipv4_header_len(packet);
    icmpv4::Packet::new_unchecked(&mut packet[hl..total]).fill_checksum();
}

/// (FIN, RST) of a TCP segment.
fn tcp_fin_rst(segment: &[u8]) -> (bool, bool) {
    match tcp::Packet::new_checked(segment) {
        Ok(t) => (t.fin(), t.rst()),
        Err(_) => (false, false),
    }
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn an_echo_of_zeros_keeps_a_valid_checksum() {
        // Echo id 0, seq 0, 56 zero bytes: its data sum to zero, so its checksum must be
        // 0xffff; translating the id there and back must leave it verifiable.
        let inside = Ipv4Addr::new(192, 168, 0, 2);
        let remote = Ipv4Addr::new(192, 168, 1, 100);
        let mut nat = Nat::new(Ipv4Addr::new(192, 168, 1, 101), 30_000_000_000, &[]);
        let echo = icmpv4::Repr::EchoRequest { ident: 0, seq_no: 0, data: &[0; 56] };
        let mut body = Vec::new();
        echo.encapsulate(&mut body);
        let mut packet = Vec::new();
        ipv4::Repr::new(inside, remote, Protocol::Icmp, body.len(), 64).encapsulate(&body, &mut packet);
        nat.outbound(0, &mut packet).unwrap();
        let out = ipv4::Packet::new_checked(&packet[..]).unwrap();
        let ident = icmpv4::Packet::new_checked(out.payload()).unwrap().echo_ident();
        let reply = icmpv4::Repr::EchoReply { ident, seq_no: 0, data: &[0; 56] };
        let mut body = Vec::new();
        reply.encapsulate(&mut body);
        let mut back = Vec::new();
        ipv4::Repr::new(remote, Ipv4Addr::new(192, 168, 1, 101), Protocol::Icmp, body.len(), 64)
            .encapsulate(&body, &mut back);
        assert_eq!(nat.inbound(1, &mut back), Ok(Inbound::Translated));
        let ip = ipv4::Packet::new_checked(&back[..]).unwrap();
        let icmp = icmpv4::Packet::new_checked(ip.payload()).unwrap();
        assert!(icmp.verify_checksum(), "checksum {:#06x}", icmp.checksum());
        assert_eq!(icmp.echo_ident(), 0);
    }

    /// RFC 793 §3.1 / RFC 9293 §3.1, written out here rather than taken from `wire`:
    /// the 16-bit one's complement of the one's complement sum over the pseudo-header
    /// (source and destination address, zero, protocol, TCP length) and the segment. A
    /// segment whose checksum field is right sums, field included, to 0xffff, so this
    /// returns 0 for it.
    fn tcp_checksum_residue(packet: &[u8]) -> u16 {
        let hl = usize::from(packet[0] & 0x0f) * 4;
        let total = usize::from(u16::from_be_bytes([packet[2], packet[3]]));
        let segment = &packet[hl..total];
        let mut words: Vec<u32> = Vec::new();
        for pair in packet[12..20].chunks(2) {
            words.push(u32::from(u16::from_be_bytes([pair[0], pair[1]])));
        }
        words.push(6); // zero octet, protocol 6 (TCP)
        words.push(segment.len() as u32);
        for pair in segment.chunks(2) {
            words.push(u32::from(u16::from_be_bytes([pair[0], *pair.get(1).unwrap_or(&0)])));
        }
        let mut sum: u32 = words.iter().sum();
        while sum > 0xffff {
            sum = (sum & 0xffff) + (sum >> 16);
        }
        !(sum as u16)
    }

    fn tcp_packet(
        src: SocketAddrV4,
        dst: SocketAddrV4,
        control: tcp::Control,
        ack: Option<u32>,
        payload: &[u8],
    ) -> Vec<u8> {
        let mut repr = tcp::Repr::new(src.port(), dst.port(), control, tcp::SeqNumber::from_u32(0x1000_0000), 65_535);
        repr.ack_number = ack.map(tcp::SeqNumber::from_u32);
        repr.max_seg_size = (control == tcp::Control::Syn).then_some(1460);
        repr.payload_len = payload.len();
        let mut segment = Vec::new();
        repr.encapsulate(src.ip(), dst.ip(), payload, &mut segment);
        let mut packet = Vec::new();
        ipv4::Repr::new(*src.ip(), *dst.ip(), Protocol::Tcp, segment.len(), 64).encapsulate(&segment, &mut packet);
        packet
    }

    #[test]
    fn translated_tcp_segments_keep_a_valid_checksum() {
        // RFC 3022 §4.1: NAPT rewrites the source address and port of outbound TCP and
        // the destination of replies; the TCP checksum covers both through the
        // pseudo-header and the port field, so each must verify after the rewrite. The
        // inside port is taken by a port forward so the NAT must pick another one (the
        // port field changes too), and the payloads have odd lengths (a trailing octet).
        let outside = Ipv4Addr::new(203, 0, 113, 1);
        let inside = SocketAddrV4::new(Ipv4Addr::new(192, 168, 0, 2), 49_152);
        let server = SocketAddrV4::new(Ipv4Addr::new(203, 0, 113, 2), 5201);
        let taken =
            PortForward { protocol: NatProtocol::Tcp, port: 49_152, to: Ipv4Addr::new(192, 168, 0, 9), to_port: 22 };
        let mut nat = Nat::new(outside, 30_000_000_000, &[taken]);
        let payloads: [&[u8]; 4] = [b"", b"x", &[0xff; 1461], &[0x5a; 7]];
        let mut mapped = None;
        for (i, payload) in payloads.iter().enumerate() {
            let control = if i == 0 { tcp::Control::Syn } else { tcp::Control::None };
            let ack = (i > 0).then_some(0x4000_0001);
            let mut out = tcp_packet(inside, server, control, ack, payload);
            assert_eq!(tcp_checksum_residue(&out), 0, "the test's own segment is valid");
            nat.outbound(i as u64, &mut out).unwrap();
            let ip = ipv4::Packet::new_checked(&out[..]).unwrap();
            assert!(ip.verify_checksum());
            assert_eq!(ip.src_addr(), outside);
            let port = tcp::Packet::new_checked(ip.payload()).unwrap().src_port();
            assert_ne!(port, 49_152, "the forwarded port is reserved");
            assert_eq!(*mapped.get_or_insert(port), port, "one mapping for the connection");
            assert_eq!(tcp_checksum_residue(&out), 0, "outbound segment {i}: checksum after translation");

            // The server's answer to the translated endpoint, translated back.
            let answer = if i == 0 { tcp::Control::Syn } else { tcp::Control::None };
            let mut back = tcp_packet(server, SocketAddrV4::new(outside, port), answer, Some(0x1000_0001), payload);
            assert_eq!(nat.inbound(i as u64, &mut back), Ok(Inbound::Translated));
            let ip = ipv4::Packet::new_checked(&back[..]).unwrap();
            assert!(ip.verify_checksum());
            assert_eq!(
                (ip.dst_addr(), tcp::Packet::new_checked(ip.payload()).unwrap().dst_port()),
                (*inside.ip(), inside.port())
            );
            assert_eq!(tcp_checksum_residue(&back), 0, "inbound segment {i}: checksum after translation");
        }
        // RFC 3022 §2.2 / seed 000 §2.3: a SYN from outside to the outside address on a
        // port with no mapping is not let in (it goes to the NAT host's own stack); to an
        // inside address it is dropped.
        let mut syn = tcp_packet(server, SocketAddrV4::new(outside, 6000), tcp::Control::Syn, None, b"");
        assert_eq!(nat.inbound(10, &mut syn), Ok(Inbound::ToSelf));
        let mut syn = tcp_packet(server, inside, tcp::Control::Syn, None, b"");
        assert_eq!(
            nat.inbound(10, &mut syn),
            Err(DropReason::NatNoMapping { protocol: NatProtocol::Tcp, dst: inside })
        );
    }

    #[test]
    fn rfc1624_incremental_update_matches_recomputation() {
        // RFC 1624 §4's example: checksum 0xdd2f, a field changing from 0x5555 to
        // 0x3285: Eqn. 3 gives 0x0000, as recomputation does (Eqn. 2 gave -0, 0xffff).
        assert_eq!(checksum_update(0xdd2f, &[0x55, 0x55], &[0x32, 0x85]), 0x0000);
        // And on a real header, against wire's full computation.
        let mut h = Vec::new();
        ipv4::Repr::new(Ipv4Addr::new(10, 0, 0, 1), Ipv4Addr::new(10, 0, 0, 2), Protocol::Udp, 0, 64)
            .encapsulate(&[], &mut h);
        let hc = ipv4::Packet::new_unchecked(&h[..]).checksum();
        let new = [192, 168, 1, 101];
        let updated = checksum_update(hc, &h[12..16], &new);
        h[12..16].copy_from_slice(&new);
        let mut p = ipv4::Packet::new_unchecked(&mut h[..]);
        p.fill_checksum();
        assert_eq!(updated, p.checksum());
    }

    #[test]
    fn ports_are_preserved_when_free_and_stay_in_their_range() {
        let fwd = PortForward { protocol: NatProtocol::Udp, port: 5001, to: Ipv4Addr::new(10, 0, 0, 2), to_port: 5001 };
        let mut nat = Nat::new(Ipv4Addr::new(192, 168, 1, 101), 60, &[fwd]);
        assert_eq!(nat.allocate(NatProtocol::Udp, 40000), Ok(40000));
        assert_eq!(nat.allocate(NatProtocol::Udp, 5001), Ok(5002), "forwarded ports are reserved");
        assert_eq!(nat.allocate(NatProtocol::Udp, 53), Ok(53));
        assert_eq!(nat.allocate(NatProtocol::Udp, 65535), Ok(65535));
        nat.by_outside
            .insert((NatProtocol::Udp, 65535), Entry::new(SocketAddrV4::new(Ipv4Addr::LOCALHOST, 1), 0, false));
        assert_eq!(nat.allocate(NatProtocol::Udp, 65535), Ok(1024), "wraps within 1024-65535");
    }
}
