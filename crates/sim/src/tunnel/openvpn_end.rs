//! An OpenVPN end as a [`TunnelEnd`] of its node: where it sits, what it sends and
//! takes, what its work costs.
//!
//! - A **TAP** end is an Ethernet port of the node (it may be routed, carry a PPPoE
//!   session, or be a member of the node's bridge, as an OpenVPN server bridging its
//!   TAP device to a LAN port does). A frame sent on it is sealed whole (Linux's tun
//!   driver does not police the MTU of frames handed to it; the port's MTU bounds what
//!   the IP stack sends there) and leaves as UDP from the node's stack, routed like any
//!   datagram: fragmented after encapsulation if it exceeds the egress MTU, or split by
//!   OpenVPN's own `--fragment` before that. A datagram for the tunnel's socket is
//!   opened and its frame received on the TAP port as if from a wire.
//! - A **TUN** end is a point-to-point IP interface: the stack routes into it, fragments
//!   a packet larger than its MTU before encapsulation (RFC 791 §3.2, DF clear), and the
//!   sealed packet is sent as above.
//! - With `proto tcp` an end's packets go length-prefixed on its TCP connection
//!   (`openvpn_tcp`), whose segments the stack routes as it does the UDP datagrams; a
//!   segment for that connection is the end's, and each packet it completes is opened as
//!   a datagram would be. The CPU cost per seal and open is the same as over UDP; the
//!   segments themselves are the stack's ordinary work.
//!
//! CPU: every seal and open costs `per_openvpn_packet` plus `per_byte_openvpn` per octet
//! of the data packet, charged to the job that did it; work whose packet a TCP socket
//! holds (Nagle, the window) to the node's next job.

use std::net::SocketAddrV4;

use wire::{ethernet, ipv4, tcp, udp, IpProtocol};

use crate::config::{NodeConfig, TunnelFragment};
use crate::tunnel::openvpn::{Counters, OpenVpnEnd, FRAGMENT_EXPIRED};
use crate::tunnel::openvpn_tcp::StreamTransport;
use crate::tunnel::{Action, Host, Interface, TunnelEnd, TunnelIo};

/// An OpenVPN end attached to a node.
#[derive(Debug)]
pub struct OpenVpnIface {
    pub end: OpenVpnEnd,
    /// TUN: its IP interface.
    iface: Option<usize>,
    /// TAP: the port it is.
    tap: Option<u16>,
    per_packet: u64,
    per_byte: f64,
}

/// The OpenVPN ends of `config`: a TAP end on one of the node's ports, a TUN end as a
/// point-to-point interface of the stack. Returned in order, for the node to add.
pub fn attach(config: &NodeConfig, host: &mut dyn Host) -> Result<Vec<Box<dyn TunnelEnd>>, String> {
    let mut ends: Vec<Box<dyn TunnelEnd>> = Vec::new();
    for (k, c) in config.openvpn.iter().enumerate() {
        let fail = |e: String| format!("node {}: openvpn[{k}] ({}): {e}", config.name, c.name);
        let end = OpenVpnEnd::new(c).map_err(fail)?;
        let (mut iface, mut tap) = (None, None);
        match c.dev {
            qoslab_plan::OpenVpnDev::Tap => {
                let port = c
                    .port
                    .filter(|&p| usize::from(p) < host.port_count())
                    .ok_or_else(|| fail("a TAP end needs one of the node's ports".into()))?;
                tap = Some(port);
            }
            qoslab_plan::OpenVpnDev::Tun => {
                let new = Interface {
                    name: c.name.clone(),
                    mac: ethernet::Address([0; 6]),
                    addr: None,
                    mtu: usize::from(c.mtu),
                };
                iface = Some(host.add_interface(new, &c.protects, true).map_err(fail)?);
            }
        }
        let cycles = host.cycles();
        let (per_packet, per_byte) = (cycles.per_openvpn_packet, cycles.per_byte_openvpn);
        ends.push(Box::new(OpenVpnIface { end, iface, tap, per_packet, per_byte }));
    }
    Ok(ends)
}

impl OpenVpnIface {
    /// The cycles of the seals and opens since `before`.
    fn cycles(&self, before: Counters) -> f64 {
        let after = self.end.counters;
        let packets = (after.sealed - before.sealed) + (after.opened - before.opened);
        packets as f64 * self.per_packet as f64 + (after.bytes - before.bytes) as f64 * self.per_byte
    }

    /// The TCP segments of its stream transport, from its address.
    fn segments(&self, segments: Vec<Vec<u8>>, io: &mut TunnelIo) {
        let c = &self.end.config;
        for payload in segments {
            io.actions.push(Action::Datagram { src: c.local, dst: c.remote, protocol: IpProtocol::Tcp, payload });
        }
    }

    /// Opens one packet (from a UDP datagram, or cut from the TCP stream) and hands on
    /// what it completes: a frame on the TAP port, or a packet on the TUN interface.
    fn open(&mut self, now: u64, bytes: &[u8], io: &mut TunnelIo) -> Result<(), String> {
        let before = self.end.counters;
        let opened = self.end.open(now, bytes);
        io.actions.push(Action::Cycles(self.cycles(before)));
        match opened? {
            None => {}
            Some(inner) if self.tap.is_some() => io.actions.push(Action::TapFrame(inner)),
            Some(inner) if self.iface.is_some() => io.inner(&inner),
            Some(_) => {}
        }
        Ok(())
    }

    /// The TCP segment in `packet` (a whole IPv4 datagram) for its stream.
    fn receive_segment(&mut self, now: u64, packet: &[u8], io: &mut TunnelIo) -> Result<(), String> {
        let ip = ipv4::Packet::new_checked(packet).map_err(|_| "malformed IPv4 packet".to_string())?;
        let segment = tcp::Packet::new_checked(ip.payload()).map_err(|_| "malformed TCP segment".to_string())?;
        let (src, dst) = (ip.src_addr(), ip.dst_addr());
        let repr = tcp::Repr::parse(&segment, &src, &dst).map_err(|_| "TCP checksum error".to_string())?;
        let mut segments = Vec::new();
        let Some(stream) = self.end.stream.as_mut() else { return Err("no TCP stream".into()) };
        let packets = stream.input(now, &repr, segment.payload(), &mut segments);
        self.segments(segments, io);
        match packets {
            Err(reason) => io.drop(format!("{}: {reason}", self.end.config.name), None),
            Ok(packets) => {
                for p in packets {
                    if let Err(reason) = self.open(now, &p, io) {
                        io.drop(reason, None);
                    }
                }
            }
        }
        Ok(())
    }
}

impl TunnelEnd for OpenVpnIface {
    fn name(&self) -> &str {
        &self.end.config.name
    }

    fn interface(&self) -> Option<usize> {
        self.iface
    }

    fn tap_port(&self) -> Option<u16> {
        self.tap
    }

    fn is_up(&self) -> bool {
        self.end.stream.as_ref().is_none_or(StreamTransport::is_up)
    }

    /// Seals `payload` (a TUN packet or a TAP frame) and sends it as UDP datagrams, or
    /// on its TCP connection.
    fn send(&mut self, now: u64, payload: &[u8], io: &mut TunnelIo) {
        let before = self.end.counters;
        let mut packets = Vec::new();
        if let Err(reason) = self.end.seal(payload, &mut packets) {
            io.drop(reason, None);
            return;
        }
        let cycles = self.cycles(before);
        if let Some(stream) = self.end.stream.as_mut() {
            let mut segments = Vec::new();
            for p in packets {
                if let Err(reason) = stream.send(now, &p, &mut segments) {
                    io.drop(format!("{}: {reason}", self.end.config.name), Some(payload.to_vec()));
                    break;
                }
            }
            // A packet the socket holds leaves no frame for the world to bill this work
            // with: it goes to the node's next job.
            io.actions.push(if segments.is_empty() { Action::Unbilled(cycles) } else { Action::Cycles(cycles) });
            self.segments(segments, io);
            return;
        }
        io.actions.push(Action::Cycles(cycles));
        let c = &self.end.config;
        let to = SocketAddrV4::new(c.remote, c.remote_port);
        for payload in packets {
            io.actions.push(Action::Udp { src: c.local, src_port: c.local_port, to, payload });
        }
    }

    /// A UDP datagram for its socket (over UDP), or a segment of its connection (TCP).
    fn claims(&self, packet: &[u8]) -> bool {
        let Ok(ip) = ipv4::Packet::new_checked(packet) else { return false };
        let (src, dst) = (ip.src_addr(), ip.dst_addr());
        match ip.next_header() {
            IpProtocol::Tcp => {
                let Ok(segment) = tcp::Packet::new_checked(ip.payload()) else { return false };
                self.end.stream.as_ref().is_some_and(|s| s.claims(src, segment.src_port(), dst, segment.dst_port()))
            }
            IpProtocol::Udp => {
                let Ok(datagram) = udp::Packet::new_checked(ip.payload()) else { return false };
                self.end.stream.is_none() && self.end.claims(src, datagram.src_port(), dst, datagram.dst_port())
            }
            _ => false,
        }
    }

    fn receive(&mut self, now: u64, packet: &[u8], io: &mut TunnelIo) -> Result<(), String> {
        if self.end.stream.is_some() {
            return self.receive_segment(now, packet, io);
        }
        let ip = ipv4::Packet::new_checked(packet).map_err(|_| "malformed IPv4 packet".to_string())?;
        let datagram = udp::Packet::new_checked(ip.payload()).map_err(|_| "malformed UDP datagram".to_string())?;
        self.open(now, datagram.payload(), io)
    }

    fn poll_at(&self) -> Option<u64> {
        self.end.stream.as_ref().and_then(StreamTransport::poll_at)
    }

    /// Starts its TCP connection and runs its timers due at `now`.
    fn on_timer(&mut self, now: u64, io: &mut TunnelIo) {
        let Some(stream) = self.end.stream.as_mut() else { return };
        if stream.poll_at().is_none_or(|t| t > now) {
            return;
        }
        let mut segments = Vec::new();
        stream.on_timer(now, &mut segments);
        self.segments(segments, io);
    }

    fn local(&self) -> Option<std::net::Ipv4Addr> {
        Some(self.end.config.local)
    }

    fn remote(&self) -> Option<std::net::Ipv4Addr> {
        Some(self.end.config.remote)
    }

    /// The largest inner packet (TUN) or frame's IP packet (TAP, behind its 14-octet
    /// Ethernet header) whose data packet fits one outer packet of `outer_mtu`: less
    /// the IPv4 header (RFC 791), UDP's 8 octets (RFC 768) or TCP's 20 and OpenVPN's
    /// 2-octet length prefix, and the data channel's overhead for that payload (opcode
    /// and peer id, HMAC or tag, packet id, IV and CBC padding: `wire::openvpn`).
    fn inner_mtu(&self, outer_mtu: usize) -> usize {
        let transport = if self.end.stream.is_some() { 20 + 2 } else { udp::HEADER_LEN };
        let room = outer_mtu.saturating_sub(ipv4::HEADER_LEN + transport);
        let frame = if self.tap.is_some() { ethernet::HEADER_LEN } else { 0 };
        let payload = (0..=room).rev().find(|&n| n + self.end.overhead(n) <= room).unwrap_or(0);
        payload.saturating_sub(frame)
    }

    /// TUN: the stack fragments to the interface MTU before sealing; TAP: the outer UDP
    /// datagram is fragmented after (or split by `--fragment`).
    fn fragment(&self) -> TunnelFragment {
        if self.tap.is_some() {
            TunnelFragment::After
        } else {
            TunnelFragment::Before
        }
    }

    fn held_packets(&self, each: &mut dyn FnMut(&[u8])) {
        self.end.held_fragments(each);
    }

    fn take_abandoned(&mut self) -> Vec<(&'static str, Vec<u8>)> {
        self.end.abandoned.drain(..).map(|p| (FRAGMENT_EXPIRED, p)).collect()
    }

    fn stream(&self) -> Option<&StreamTransport> {
        self.end.stream.as_ref()
    }
}
