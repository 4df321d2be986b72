//! A PPTP end as a [`TunnelEnd`] of its node.
//!
//! A PPTP end is a point-to-point IP interface (`ppp0`) with the tunnel's MTU: IPv4
//! packets the stack routes to it are fragmented to that MTU (RFC 791, DF clear), then
//! framed in PPP (one-octet protocol field once PFC/ACFC are agreed) and enhanced GRE
//! (RFC 2637 §4.1) and sent from the end's outer address as IP protocol 47, routed by
//! the node's stack (so over whatever leads to the other end: a link, a TAP tunnel),
//! never back into a tunnel interface of the node. The control connection is a TCP
//! connection between the same addresses, client port → 1723, made by the node itself.
//! TCP segments and GRE packets delivered to the node that belong to an end are its.
//!
//! CPU (seed 002 issue 4: every encapsulation costs per packet and per byte on both
//! ends): each GRE packet an end sends or takes costs `per_pptp_packet` plus
//! `per_byte_pptp` per octet of the GRE packet (header, PPP and payload). The control
//! connection's TCP segments are the stack's ordinary work.

use std::net::Ipv4Addr;

use wire::ethernet::Address as Mac;
use wire::{ipv4, tcp, IpProtocol};

use super::{Datagrams, Params, PptpEnd, Role};
use crate::config::{NodeConfig, PptpConfig, TunnelFragment};
use crate::link::ppp::auth::{Authenticator, CHAP_VALUE_LEN};
use crate::link::ppp::ipcp::IpcpOptions;
use crate::link::ppp::lcp::{Auth, LcpOptions};
use crate::link::ppp::PppLink;
use crate::rng::{stream_key, RandomStream};
use crate::tunnel::{Action, Host, Interface, TunnelEnd, TunnelIo};

fn seeded(addr: Ipv4Addr, purpose: &str) -> RandomStream {
    RandomStream::from_key(stream_key(0, u64::from(u32::from(addr)), purpose))
}

fn bytes16(stream: &mut RandomStream) -> [u8; 16] {
    let mut out = [0u8; 16];
    for chunk in out.chunks_mut(8) {
        chunk.copy_from_slice(&stream.next_u64().to_le_bytes());
    }
    out
}

/// The PPP link of an end (server: authenticator and address to assign; client:
/// credentials), as PPPoE builds it.
fn link(c: &PptpConfig, k: usize) -> Result<PppLink, String> {
    let auth = match c.auth {
        qoslab_plan::PppAuth::Mschapv2 => Auth::MsChapV2,
        qoslab_plan::PppAuth::Chap => Auth::Chap,
        qoslab_plan::PppAuth::Pap => Auth::Pap,
    };
    if c.mtu < 68 {
        return Err(format!("mtu {}: at least 68 (RFC 791)", c.mtu));
    }
    let magic = seeded(c.local, &format!("pptp-magic-{k}")).next_u64() as u32 | 1;
    let mut link = if c.server {
        let challenge: [u8; CHAP_VALUE_LEN] = bytes16(&mut seeded(c.local, &format!("pptp-challenge-{k}")));
        let authenticator = match auth {
            Auth::MsChapV2 => Authenticator::mschapv2(b"pptpd", c.secret.as_bytes(), challenge, 1),
            Auth::Chap => Authenticator::chap(b"pptpd", c.secret.as_bytes(), challenge, 1),
            Auth::Pap => Authenticator::pap(c.user.as_bytes(), c.secret.as_bytes()),
        };
        PppLink::new(
            LcpOptions::new(c.mtu, magic, Some(auth), None),
            IpcpOptions { local: c.ppp_local, assign: Some(c.ppp_peer), peer: None },
            Some(authenticator),
            None,
        )
    } else {
        PppLink::new(
            LcpOptions::new(c.mtu, magic, None, Some(auth)),
            IpcpOptions { local: Ipv4Addr::UNSPECIFIED, assign: None, peer: None },
            None,
            Some((c.user.as_bytes().to_vec(), c.secret.as_bytes().to_vec())),
        )
    };
    link.set_peer_challenge(bytes16(&mut seeded(c.local, &format!("pptp-peer-challenge-{k}"))));
    Ok(link)
}

/// A PPTP end attached to a node.
#[derive(Debug)]
pub struct PptpIface {
    pub end: PptpEnd,
    name: String,
    iface: usize,
    /// The configured PPP address (what IPCP must settle on), and whether IPCP's
    /// result was checked against it.
    ppp_local: Ipv4Addr,
    checked: bool,
    /// The TCP initial sequence number of its control connection (seeded).
    iss: u32,
    per_packet: u64,
    per_byte: f64,
}

/// The PPTP ends of `config`, each a PPP interface of the stack. Returned in order,
/// for the node to add.
pub fn attach(config: &NodeConfig, host: &mut dyn Host) -> Result<Vec<Box<dyn TunnelEnd>>, String> {
    let mut ends: Vec<Box<dyn TunnelEnd>> = Vec::new();
    for (k, c) in config.pptp.iter().enumerate() {
        let fail = |e: String| format!("node {}: pptp[{k}] ({}): {e}", config.name, c.name);
        let link = link(c, k).map_err(fail)?;
        let mut ports = seeded(c.local, &format!("pptp-port-{k}"));
        // An ephemeral port (Linux's default range 32768-60999) and an ISS.
        let local_port = 32_768 + ports.uniform_inclusive(60_999 - 32_768) as u16;
        let iss = ports.next_u64() as u32;
        let role = if c.server { Role::Pac } else { Role::Pns };
        let params = Params {
            role,
            local: c.local,
            remote: c.remote,
            local_port,
            call_id: c.call_id,
            recv_window: c.recv_window.max(1),
            host_name: config.name.as_bytes().to_vec(),
        };
        let new = Interface {
            name: c.name.clone(),
            mac: Mac([0; 6]),
            addr: Some((c.ppp_local, 32)),
            mtu: usize::from(c.mtu),
        };
        let iface = host.add_interface(new, &c.routes, true).map_err(|e| format!("node {}: {e}", config.name))?;
        let cycles = host.cycles();
        ends.push(Box::new(PptpIface {
            end: PptpEnd::new(params, link),
            name: c.name.clone(),
            iface,
            ppp_local: c.ppp_local,
            checked: false,
            iss,
            per_packet: cycles.per_pptp_packet,
            per_byte: cycles.per_byte_pptp,
        }));
    }
    Ok(ends)
}

impl PptpIface {
    /// GRE packets and octets it has handled so far.
    fn work(&self) -> (u64, u64) {
        self.end.gre.as_ref().map_or((0, 0), |g| {
            let c = g.counters;
            (c.data_sent + c.ack_only_sent + c.data_received + c.out_of_sequence, c.bytes)
        })
    }

    fn cycles(&self, before: (u64, u64)) -> f64 {
        let (packets, bytes) = self.work();
        // A call that came up in this step starts its counters at zero.
        let (p0, b0) = if packets >= before.0 { before } else { (0, 0) };
        (packets - p0) as f64 * self.per_packet as f64 + (bytes.saturating_sub(b0)) as f64 * self.per_byte
    }

    /// Sends what it made from its outer address, charging its GRE work since `before`.
    fn emit(&mut self, datagrams: Datagrams, before: (u64, u64), io: &mut TunnelIo) {
        io.actions.push(Action::Cycles(self.cycles(before)));
        let (src, dst) = (self.end.local, self.end.remote);
        for (protocol, payload) in datagrams {
            io.actions.push(Action::Datagram { src, dst, protocol, payload });
        }
        self.check_ipcp(io);
    }

    /// Once IPCP opens, the address it settled must be the configured one.
    fn check_ipcp(&mut self, io: &mut TunnelIo) {
        if self.checked || !self.end.is_up() {
            return;
        }
        self.checked = true;
        let (got, want) = (self.end.link.local_address(), self.ppp_local);
        if got != want {
            io.drop(format!("IPCP gave {} the address {got}, not the configured {want}", self.name), None);
        }
    }
}

impl TunnelEnd for PptpIface {
    fn name(&self) -> &str {
        &self.name
    }

    fn interface(&self) -> Option<usize> {
        Some(self.iface)
    }

    fn is_up(&self) -> bool {
        self.end.is_up()
    }

    /// An IPv4 packet routed to its interface.
    fn send(&mut self, now: u64, packet: &[u8], io: &mut TunnelIo) {
        let before = self.work();
        let mut out = Datagrams::new();
        if let Err(reason) = self.end.send_ipv4(now, packet, &mut out) {
            io.drop(format!("{}: {reason}", self.name), Some(packet.to_vec()));
        }
        self.emit(out, before, io);
    }

    /// A segment of its control connection, or a GRE packet of its call.
    fn claims(&self, packet: &[u8]) -> bool {
        let Ok(ip) = ipv4::Packet::new_checked(packet) else { return false };
        let (src, dst) = (ip.src_addr(), ip.dst_addr());
        if self.end.remote != src || self.end.local != dst {
            return false;
        }
        match ip.next_header() {
            IpProtocol::Tcp => tcp::Packet::new_checked(ip.payload())
                .is_ok_and(|s| self.end.claims_tcp(src, s.src_port(), s.dst_port())),
            IpProtocol::Gre => {
                let call = wire::gre::Packet::new_checked(ip.payload()).ok().and_then(|g| g.key_call_id());
                call == Some(self.end.control.call_id)
            }
            _ => false,
        }
    }

    fn receive(&mut self, now: u64, packet: &[u8], io: &mut TunnelIo) -> Result<(), String> {
        let ip = ipv4::Packet::new_checked(packet).map_err(|_| "malformed IPv4 packet".to_string())?;
        let (src, dst) = (ip.src_addr(), ip.dst_addr());
        let before = self.work();
        let mut out = Datagrams::new();
        if ip.next_header() == IpProtocol::Tcp {
            let segment = tcp::Packet::new_checked(ip.payload()).map_err(|_| "malformed TCP segment".to_string())?;
            let repr = tcp::Repr::parse(&segment, &src, &dst).map_err(|_| "TCP checksum error".to_string())?;
            self.end.input_tcp(now, &repr, segment.payload(), &mut out);
            self.emit(out, before, io);
            return Ok(());
        }
        let delivered = self.end.input_gre(now, ip.payload(), &mut out);
        // The packet taken counts even when the call was not up (nothing to bill).
        self.emit(out, before, io);
        if let Some(inner) = delivered? {
            io.inner(&inner);
        }
        Ok(())
    }

    fn poll_at(&self) -> Option<u64> {
        self.end.poll_at()
    }

    /// Timers due at `now`: start (the client connects, the server listens), TCP, the
    /// control connection's keep-alive, GRE acknowledgments and time-outs, PPP.
    fn on_timer(&mut self, now: u64, io: &mut TunnelIo) {
        if self.end.poll_at().is_none_or(|t| t > now) {
            return;
        }
        let before = self.work();
        let mut out = Datagrams::new();
        self.end.start(now, self.iss, &mut out);
        self.end.on_timer(now, &mut out);
        self.emit(out, before, io);
    }

    fn local(&self) -> Option<Ipv4Addr> {
        Some(self.end.local)
    }

    fn remote(&self) -> Option<Ipv4Addr> {
        Some(self.end.remote)
    }

    /// The largest inner packet one outer packet of `outer_mtu` carries: less the IPv4
    /// header (RFC 791), the enhanced GRE header with its sequence and acknowledgment
    /// numbers (RFC 2637 §4.1: 8 + 4 + 4 octets), and the PPP header (RFC 1661 §2:
    /// address and control 2 octets unless ACFC is agreed, protocol 2 or 1 with PFC,
    /// RFC 1661 §6.5, §6.6).
    fn inner_mtu(&self, outer_mtu: usize) -> usize {
        let options = &self.end.link.lcp.options;
        let ppp = if options.peer_acfc { 0 } else { 2 } + if options.peer_pfc { 1 } else { 2 };
        outer_mtu.saturating_sub(ipv4::HEADER_LEN + wire::gre::BASE_HEADER_LEN + 4 + 4 + 4 + ppp)
    }

    /// The stack fragments to the PPP MTU before framing (RFC 791 §3.2, DF clear).
    fn fragment(&self) -> TunnelFragment {
        TunnelFragment::Before
    }
}
