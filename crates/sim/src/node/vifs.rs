//! A node's virtual interfaces: OpenVPN ends (TAP ports and TUN interfaces) and PPPoE
//! sessions (PPP interfaces), stacked on the node's ports and on each other.
//!
//! A tunnel is an interface with its own MTU (DESIGN.md: "tunnels are interfaces stacked
//! on other interfaces"); what it rides on follows from where its packets go:
//!
//! - An OpenVPN **TAP** end is an Ethernet port of the node (it may be routed, carry a
//!   PPPoE session, or be a member of the node's bridge, as an OpenVPN server bridging
//!   its TAP device to a LAN port does). A frame sent on it is sealed whole (Linux's
//!   tun driver does not police the MTU of frames handed to it; the port's MTU bounds
//!   what the IP stack sends there) and leaves as UDP from the node's stack, routed like
//!   any datagram: fragmented after encapsulation if it exceeds the egress MTU, or split
//!   by OpenVPN's own `--fragment` before that. A datagram for the tunnel's socket is
//!   opened and its frame received on the TAP port as if from a wire.
//! - An OpenVPN **TUN** end is a point-to-point IP interface: the stack routes into it,
//!   fragments a packet larger than its MTU before encapsulation (RFC 791 §3.2, DF
//!   clear), and the sealed packet is sent as above.
//! - With `proto tcp` an end's packets go length-prefixed on its TCP connection
//!   (`openvpn_tcp`), whose segments the stack routes as it does the UDP datagrams; a
//!   segment for that connection is the end's, and each packet it completes is opened
//!   as a datagram would be. The CPU cost per seal and open is the same as over UDP;
//!   the segments themselves are the stack's ordinary work.
//! - A **PPPoE** end is a PPP interface over one Ethernet-like port (a link's port or a
//!   TAP port): IPv4 packets routed to it are fragmented to the PPP MTU, then carried in
//!   session frames once discovery, LCP, authentication and IPCP are done (`pppoe`,
//!   `ppp`); session and discovery frames arriving on its port are its.
//!
//! DF and ICMP "fragmentation needed" are the stack's (`ip::IpStack::fit_mtu`); this
//! module adds no PMTU logic of its own.
//!
//! CPU: every seal and open costs `per_openvpn_packet` plus `per_byte_openvpn` per octet
//! of the data packet; every PPPoE session frame an end sends or takes `per_pppoe_packet`
//! (a bridge passing PPPoE frames on pays only its bridging). The work is charged to the
//! job that did it (a received frame's, or the node's own send); work a timer did (a
//! retransmitted control packet) to the node's next job.

use std::net::Ipv4Addr;

use wire::ethernet::{self, Address as Mac, EtherType};
use wire::{ipv4, tcp, udp, IpProtocol};

use super::{Effects, Node, PortUse};
use crate::config::NodeConfig;
use crate::link::ppp::auth::{Authenticator, CHAP_VALUE_LEN};
use crate::link::ppp::ipcp::IpcpOptions;
use crate::link::ppp::lcp::{Auth, LcpOptions};
use crate::link::ppp::PppLink;
use crate::node::ip::{ethernet_frame, Iface};
use crate::rng::{stream_key, RandomStream};
use crate::tunnel::openvpn::OpenVpnEnd;
use crate::tunnel::pppoe::PppoeEnd;
use crate::tunnel::vif::Vif;
use qoslab_plan::{OpenVpnDev, PppAuth};

fn seeded(mac: Mac, purpose: &str) -> RandomStream {
    let id = mac.0.iter().fold(0u64, |a, &b| (a << 8) | u64::from(b));
    RandomStream::from_key(stream_key(0, id, purpose))
}

/// The PPP link of PPPoE end `k` on the port with `mac` (server: authenticator, challenge
/// and the address to assign; client: credentials), its magic number and challenge seeded
/// from the MAC.
fn pppoe_link(c: &crate::config::PppoeConfig, k: usize, mac: Mac, auth: Auth) -> PppLink {
    let magic = seeded(mac, &format!("ppp-magic-{k}")).next_u64() as u32 | 1;
    if c.server {
        let mut challenge = [0u8; CHAP_VALUE_LEN];
        let mut stream = seeded(mac, &format!("chap-challenge-{k}"));
        for chunk in challenge.chunks_mut(8) {
            chunk.copy_from_slice(&stream.next_u64().to_le_bytes()[..chunk.len()]);
        }
        let authenticator = match auth {
            Auth::Chap => Authenticator::chap(c.ac_name.as_bytes(), c.secret.as_bytes(), challenge, 1),
            Auth::MsChapV2 => Authenticator::mschapv2(c.ac_name.as_bytes(), c.secret.as_bytes(), challenge, 1),
            Auth::Pap => Authenticator::pap(c.user.as_bytes(), c.secret.as_bytes()),
        };
        PppLink::new(
            LcpOptions::new(c.mtu, magic, Some(auth), None),
            IpcpOptions { local: c.local, assign: Some(c.peer), peer: None },
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
    }
}

impl Node {
    /// Builds the OpenVPN and PPPoE ends of `config` on the node's ports and stack.
    pub(crate) fn attach_vifs(&mut self, config: &NodeConfig) -> Result<(), String> {
        self.attach_openvpn(config)?;
        self.attach_pppoe(config)?;
        self.attach_pptp(config)
    }

    /// The OpenVPN ends: a TAP end on one of the node's ports, a TUN end as a
    /// point-to-point interface of the stack.
    fn attach_openvpn(&mut self, config: &NodeConfig) -> Result<(), String> {
        for (k, c) in config.openvpn.iter().enumerate() {
            let fail = |e: String| format!("node {}: openvpn[{k}] ({}): {e}", config.name, c.name);
            let end = OpenVpnEnd::new(c).map_err(fail)?;
            match c.dev {
                OpenVpnDev::Tap => {
                    let port = c
                        .port
                        .filter(|&p| usize::from(p) < self.port_names.len())
                        .ok_or_else(|| fail("a TAP end needs one of the node's ports".into()))?;
                    self.vifs.tap_of_port.insert(port, k);
                }
                OpenVpnDev::Tun => {
                    let iface = Iface {
                        name: c.name.clone(),
                        mac: Mac([0; 6]),
                        addr: None,
                        mtu: usize::from(c.mtu),
                        resolve: false,
                    };
                    let index = self.ip.add_point_to_point(iface, &c.protects, true).map_err(fail)?;
                    self.vifs.by_iface.insert(index, Vif::Tun(k));
                    self.vifs.tun_iface.insert(k, index);
                }
            }
            self.vifs.openvpn.push(end);
        }
        Ok(())
    }

    /// The PPPoE ends, each a PPP interface of the stack on a routed or TAP port.
    fn attach_pppoe(&mut self, config: &NodeConfig) -> Result<(), String> {
        for (k, c) in config.pppoe.iter().enumerate() {
            let fail = |e: String| format!("node {}: pppoe[{k}] ({}): {e}", config.name, c.name);
            let port = usize::from(c.port);
            if port >= self.port_names.len() {
                return Err(fail(format!("no port {}", c.port)));
            }
            if self.port_use[port] == PortUse::Bridged {
                return Err(fail(format!(
                    "port {} is a bridge member: PPPoE runs on a routed port or a TAP port",
                    self.port_names[port]
                )));
            }
            let auth = match c.auth {
                PppAuth::Chap => Auth::Chap,
                PppAuth::Pap => Auth::Pap,
                PppAuth::Mschapv2 => return Err(fail("auth: PPPoE authenticates with CHAP or PAP".into())),
            };
            // RFC 2516 §7: the MRU MUST NOT be negotiated above 1492.
            if c.mtu > wire::pppoe::MTU as u16 || c.mtu < 68 {
                return Err(fail(format!("mtu {}: 68 to 1492 over PPPoE (RFC 791, RFC 2516 §7)", c.mtu)));
            }
            let mac = self.port_macs[port];
            let link = pppoe_link(c, k, mac, auth);
            let end = if c.server {
                if c.session_id == 0 {
                    return Err(fail("a server's session id must not be 0 (RFC 2516 §5.4)".into()));
                }
                PppoeEnd::server(mac, c.service_name.as_bytes(), c.ac_name.as_bytes(), c.session_id, link)
            } else {
                PppoeEnd::client(mac, c.service_name.as_bytes(), &(k as u32 + 1).to_be_bytes(), link)
            };
            let iface =
                Iface { name: c.name.clone(), mac, addr: Some((c.local, 32)), mtu: usize::from(c.mtu), resolve: false };
            let index = self
                .ip
                .add_point_to_point(iface, &c.routes, false)
                .map_err(|e| format!("node {}: {e}", config.name))?;
            self.vifs.by_iface.insert(index, Vif::Ppp(k));
            self.vifs.pppoe.push(end);
            self.vifs.pppoe_port.push(c.port);
            self.vifs.pppoe_iface.push(index);
            self.vifs.pppoe_checked.push(false);
            self.vifs.pppoe_local.push(c.local);
        }
        Ok(())
    }

    /// Whether packets to `dst` can leave now: a route through a PPP interface needs
    /// its session up (IPCP Opened). An application started before that would lose its
    /// first packets, so the world waits for it (as one runs iperf after `pppd` is up).
    pub fn route_up(&self, dst: Ipv4Addr) -> bool {
        match self.ip.route(dst).and_then(|(iface, _)| self.vifs.of_iface(iface)) {
            Some(Vif::Ppp(k)) => self.vifs.pppoe[k].is_up(),
            Some(Vif::Pptp(k)) => self.vifs.pptp.ends[k].is_up(),
            Some(Vif::Tun(k)) => self.vifs.openvpn[k].stream.as_ref().is_none_or(|s| s.is_up()),
            _ => true,
        }
    }

    /// When the node's stack or its virtual interfaces next need waking.
    #[inline(always)]
    pub fn poll_at(&self) -> Option<u64> {
        // Asked after every packet the node handles: the plain node (no PPPoE, PPTP or
        // OpenVPN end) answers from its IP stack alone, inline.
        let at = self.ip.poll_at();
        if self.vifs.pppoe.is_empty() && self.vifs.pptp.ends.is_empty() && self.vifs.openvpn.is_empty() {
            return at;
        }
        self.vif_poll_at(at)
    }

    /// [`poll_at`](Self::poll_at) for a node with virtual interfaces; `at` is its stack's.
    #[inline(never)]
    fn vif_poll_at(&self, at: Option<u64>) -> Option<u64> {
        let start = (!self.vifs.started && self.vifs.pppoe.iter().any(|e| !e.server)).then_some(0);
        [at, start, self.pptp_poll_at(), self.openvpn_poll_at()]
            .into_iter()
            .chain(self.vifs.pppoe.iter().map(PppoeEnd::poll_at))
            .flatten()
            .min()
    }

    /// Handles the timers due at `now` (ARP, reassembly, PPPoE and PPP) outside a CPU job.
    pub fn on_timer(&mut self, now: u64) -> Effects {
        let mut fx = Effects::default();
        let mut outs = Vec::new();
        self.ip.on_timer(now, &mut outs);
        self.apply(now, outs, &mut fx);
        let start = !self.vifs.started;
        self.vifs.started = true;
        for k in 0..self.vifs.pppoe.len() {
            let mut frames = Vec::new();
            if start {
                self.vifs.pppoe[k].start(now, &mut frames);
            }
            if self.vifs.pppoe[k].poll_at().is_some_and(|t| t <= now) {
                self.vifs.pppoe[k].on_timer(now, &mut frames);
            }
            self.pppoe_emit(now, k, frames, &mut fx);
            self.check_ipcp(k, &mut fx);
        }
        self.pptp_on_timer(now, &mut fx);
        self.openvpn_on_timer(now, &mut fx);
        // Work done outside a CPU job is charged to the next one (as `Node::process`
        // does for the stack's own sends).
        self.unbilled += fx.cycles;
        fx.cycles = 0.0;
        fx
    }

    /// Sends the frames PPPoE end `k` made, charging each session frame.
    fn pppoe_emit(&mut self, now: u64, k: usize, frames: Vec<Vec<u8>>, fx: &mut Effects) {
        let port = self.vifs.pppoe_port[k];
        for f in frames {
            if f.get(12..14) == Some(&[0x88, 0x64][..]) {
                fx.cycles += self.cycles.per_pppoe_packet as f64;
            }
            self.port_send(now, port, f, fx);
        }
    }

    /// A frame leaves by port `port`: onto its link, or into its TAP tunnel.
    #[inline(always)]
    pub(crate) fn port_send(&mut self, now: u64, port: u16, frame: Vec<u8>, fx: &mut Effects) {
        match self.vifs.tap(port) {
            Some(k) => {
                if let Some(c) = self.vifs.capture.as_mut() {
                    c.push((port, now, frame.clone()));
                }
                self.seal_and_send(now, k, &frame, fx)
            }
            None => {
                // Read only for a CPU with a clock (see `process_into`).
                if !self.cpu.is_free() {
                    fx.cycles += self.cipher_cycles(port, frame.len());
                }
                fx.send.push((port, frame));
            }
        }
    }

    /// An IP interface's frame (Ethernet header written by the stack) for a virtual
    /// interface: into the PPPoE session or the TUN tunnel.
    #[inline(never)]
    pub(crate) fn vif_send(&mut self, now: u64, vif: Vif, frame: Vec<u8>, fx: &mut Effects) {
        let packet = &frame[ethernet::HEADER_LEN..];
        match vif {
            Vif::Tun(k) => self.seal_and_send(now, k, packet, fx),
            Vif::Pptp(k) => self.pptp_send(now, k, packet, fx),
            Vif::Ppp(k) => match self.vifs.pppoe[k].send_ipv4(packet) {
                Ok(f) => self.pppoe_emit(now, k, vec![f], fx),
                Err(reason) => fx.drops.push((
                    None,
                    format!("{}: {reason}", self.ip.ifaces[self.vifs.pppoe_iface[k]].name),
                    Some(packet.to_vec()),
                )),
            },
        }
    }

    /// Seals `payload` into OpenVPN end `k` and sends the UDP datagrams from the stack.
    fn seal_and_send(&mut self, now: u64, k: usize, payload: &[u8], fx: &mut Effects) {
        let end = &mut self.vifs.openvpn[k];
        let before = end.counters;
        let mut packets = Vec::new();
        if let Err(reason) = end.seal(payload, &mut packets) {
            fx.drops.push((None, reason, None));
            return;
        }
        let cycles = self.openvpn_cycles(k, before);
        if let Some(stream) = self.vifs.openvpn[k].stream.as_mut() {
            let mut segments = Vec::new();
            for p in packets {
                if let Err(reason) = stream.send(now, &p, &mut segments) {
                    fx.drops.push((
                        None,
                        format!("{}: {reason}", self.vifs.openvpn[k].config.name),
                        Some(payload.to_vec()),
                    ));
                    break;
                }
            }
            // A packet the socket holds (Nagle, the window) leaves no frame for the
            // world to bill this work with: it goes to the node's next job.
            if segments.is_empty() {
                self.unbilled += cycles;
            } else {
                fx.cycles += cycles;
            }
            self.openvpn_segments(now, k, segments, fx);
            return;
        }
        fx.cycles += cycles;
        let c = &self.vifs.openvpn[k].config;
        let (local, local_port, to) = (c.local, c.local_port, std::net::SocketAddrV4::new(c.remote, c.remote_port));
        let mut outs = Vec::new();
        for p in packets {
            self.ip.send_udp_outer(now, local, local_port, to, &p, &mut outs);
        }
        self.apply(now, outs, fx);
    }

    /// Sends the TCP segments of OpenVPN end `k`'s stream transport from its address
    /// (the segments are the stack's ordinary work, as PPTP's control connection's).
    fn openvpn_segments(&mut self, now: u64, k: usize, segments: Vec<Vec<u8>>, fx: &mut Effects) {
        let c = &self.vifs.openvpn[k].config;
        let (local, remote) = (c.local, c.remote);
        let mut outs = Vec::new();
        for s in segments {
            self.ip.send_datagram_outer(now, local, remote, IpProtocol::Tcp, &s, &mut outs);
        }
        self.apply(now, outs, fx);
    }

    /// When the OpenVPN ends' TCP connections next need waking.
    fn openvpn_poll_at(&self) -> Option<u64> {
        self.vifs.openvpn.iter().filter_map(|e| e.stream.as_ref().and_then(|s| s.poll_at())).min()
    }

    /// Starts the OpenVPN TCP connections and runs their timers due at `now`.
    fn openvpn_on_timer(&mut self, now: u64, fx: &mut Effects) {
        for k in 0..self.vifs.openvpn.len() {
            let Some(stream) = self.vifs.openvpn[k].stream.as_mut() else { continue };
            if stream.poll_at().is_none_or(|t| t > now) {
                continue;
            }
            let mut segments = Vec::new();
            stream.on_timer(now, &mut segments);
            self.openvpn_segments(now, k, segments, fx);
        }
    }

    /// A TCP segment delivered to the node: an OpenVPN end's stream if it claims it
    /// (then the packets it completes are opened here, `true`).
    fn openvpn_tcp_local(&mut self, now: u64, packet: &[u8], fx: &mut Effects) -> bool {
        let Ok(ip) = ipv4::Packet::new_checked(packet) else { return false };
        let Ok(segment) = tcp::Packet::new_checked(ip.payload()) else { return false };
        let (src, dst, sport, dport) = (ip.src_addr(), ip.dst_addr(), segment.src_port(), segment.dst_port());
        let Some(k) =
            self.vifs.openvpn.iter().position(|e| e.stream.as_ref().is_some_and(|s| s.claims(src, sport, dst, dport)))
        else {
            return false;
        };
        let Ok(repr) = tcp::Repr::parse(&segment, &src, &dst) else {
            fx.drops.push((None, "TCP checksum error".into(), Some(packet.to_vec())));
            return true;
        };
        let mut segments = Vec::new();
        let stream = self.vifs.openvpn[k].stream.as_mut().expect("claimed");
        let packets = stream.input(now, &repr, segment.payload(), &mut segments);
        self.openvpn_segments(now, k, segments, fx);
        match packets {
            Err(reason) => fx.drops.push((None, format!("{}: {reason}", self.vifs.openvpn[k].config.name), None)),
            Ok(packets) => {
                for p in packets {
                    self.openvpn_open(now, k, &p, None, fx);
                }
            }
        }
        true
    }

    fn openvpn_cycles(&self, k: usize, before: crate::tunnel::openvpn::Counters) -> f64 {
        let after = self.vifs.openvpn[k].counters;
        let packets = (after.sealed - before.sealed) + (after.opened - before.opened);
        packets as f64 * self.cycles.per_openvpn_packet as f64
            + (after.bytes - before.bytes) as f64 * self.cycles.per_byte_openvpn
    }

    /// A datagram the stack delivered locally: an OpenVPN end's if it claims it (then
    /// opened here, `true`), else the applications'.
    #[inline]
    pub(crate) fn vif_local(&mut self, now: u64, packet: &[u8], fx: &mut Effects) -> bool {
        // The plain node's every delivery asks: answered without the tunnels' code.
        if self.vifs.pptp.ends.is_empty() && self.vifs.openvpn.is_empty() {
            return false;
        }
        self.tunnel_local(now, packet, fx)
    }

    /// [`vif_local`](Self::vif_local) for a node with PPTP or OpenVPN ends.
    #[inline(never)]
    fn tunnel_local(&mut self, now: u64, packet: &[u8], fx: &mut Effects) -> bool {
        if self.pptp_local(now, packet, fx) {
            return true;
        }
        if self.vifs.openvpn.is_empty() {
            return false;
        }
        let Ok(ip) = ipv4::Packet::new_checked(packet) else { return false };
        if ip.next_header() == IpProtocol::Tcp {
            return self.openvpn_tcp_local(now, packet, fx);
        }
        if ip.next_header() != IpProtocol::Udp {
            return false;
        }
        let Ok(datagram) = udp::Packet::new_checked(ip.payload()) else { return false };
        let (src, dst, sport, dport) = (ip.src_addr(), ip.dst_addr(), datagram.src_port(), datagram.dst_port());
        let Some(k) = self.vifs.openvpn.iter().position(|e| e.stream.is_none() && e.claims(src, sport, dst, dport))
        else {
            return false;
        };
        self.openvpn_open(now, k, datagram.payload(), Some(packet), fx);
        true
    }

    /// Opens one OpenVPN packet of end `k` (from a UDP datagram, `outer` its IPv4
    /// packet, or cut from the TCP stream) and delivers what it completes.
    fn openvpn_open(&mut self, now: u64, k: usize, bytes: &[u8], outer: Option<&[u8]>, fx: &mut Effects) {
        let before = self.vifs.openvpn[k].counters;
        let opened = self.vifs.openvpn[k].open(now, bytes);
        fx.cycles += self.openvpn_cycles(k, before);
        match opened {
            Ok(None) => {}
            Err(reason) => fx.drops.push((None, reason, outer.map(<[u8]>::to_vec))),
            Ok(Some(inner)) => {
                if let Some(&port) = self.vifs.tap_of_port.iter().find(|(_, &e)| e == k).map(|(p, _)| p) {
                    if let Some(c) = self.vifs.capture.as_mut() {
                        c.push((port, now, inner.clone()));
                    }
                    self.port_input(now, port, inner, fx);
                } else if let Some(&iface) = self.vifs.tun_iface.get(&k) {
                    let mut outs = Vec::new();
                    self.ip.input(
                        now,
                        iface,
                        ethernet_frame(Mac::default(), Mac::BROADCAST, EtherType::Ipv4, &inner),
                        &mut outs,
                    );
                    fx.cycles += self.forwarding_cycles();
                    self.apply(now, outs, fx);
                }
            }
        }
    }

    /// A PPPoE frame (discovery or session EtherType) received on routed port `port`.
    #[inline(never)]
    pub(crate) fn pppoe_input(&mut self, now: u64, port: u16, frame: Vec<u8>, fx: &mut Effects) {
        let session = ethernet::Frame::new_checked(&frame[..]).is_ok_and(|f| f.ethertype() == EtherType::PppoeSession);
        let mut claimed = false;
        for k in 0..self.vifs.pppoe.len() {
            if self.vifs.pppoe_port[k] != port {
                continue;
            }
            let mut frames = Vec::new();
            let result = self.vifs.pppoe[k].input(now, &frame, &mut frames);
            if result.not_mine {
                continue;
            }
            claimed = true;
            if session {
                fx.cycles += self.cycles.per_pppoe_packet as f64;
            }
            self.pppoe_emit(now, k, frames, fx);
            if let Some(reason) = result.drop {
                fx.drops.push((Some(port), reason, None));
            }
            if let Some(packet) = result.ipv4 {
                let iface = self.vifs.pppoe_iface[k];
                let mut outs = Vec::new();
                self.ip.input(
                    now,
                    iface,
                    ethernet_frame(Mac::default(), Mac::BROADCAST, EtherType::Ipv4, &packet),
                    &mut outs,
                );
                fx.cycles += self.forwarding_cycles();
                self.apply(now, outs, fx);
            }
            self.check_ipcp(k, fx);
            // A broadcast (PADI) may interest several ACs of the node; unicast is one end's.
            if !frame[..6].iter().all(|&b| b == 0xff) {
                break;
            }
        }
        if !claimed {
            let what = if session {
                "PPPoE session frame for no session of"
            } else {
                "PPPoE discovery frame for no PPPoE end on"
            };
            fx.drops.push((Some(port), format!("{what} {}", self.port_names[usize::from(port)]), None));
        }
    }

    /// Once IPCP opens, the address it settled must be the configured one (the
    /// applications were set up with it).
    fn check_ipcp(&mut self, k: usize, fx: &mut Effects) {
        let end = &self.vifs.pppoe[k];
        if self.vifs.pppoe_checked[k] || !end.is_up() {
            return;
        }
        self.vifs.pppoe_checked[k] = true;
        let got = end.link.local_address();
        let want = self.vifs.pppoe_local[k];
        if got != want {
            fx.drops.push((
                None,
                format!(
                    "IPCP gave {} the address {got}, not the configured {want}",
                    self.ip.ifaces[self.vifs.pppoe_iface[k]].name
                ),
                None,
            ));
        }
    }
}
