//! The node's tunnel ends (OpenVPN, PPPoE, PPTP: the ends the node drives; IPsec's the
//! stack drives, see `crate::tunnel`), and how the node carries out what they ask.
//!
//! A tunnel is an interface with its own MTU (DESIGN.md: "tunnels are interfaces stacked
//! on other interfaces"); what it rides on follows from where its packets go. The node
//! hands an end what is routed into its interface (the packet) or sent on its TAP port
//! (the frame), the datagrams delivered to the node that it claims, and the frames on
//! the port it rides on; it wakes every end at its timer. Each answers with
//! [`Action`]s, carried out here in order: consecutive outer datagrams are routed by the
//! stack together (one batch of outputs), everything else as it comes. Nothing here
//! knows a kind of tunnel: what is per kind is in the tunnel's own file.
//!
//! DF and ICMP "fragmentation needed" are the stack's (`ip::IpStack::fit_mtu`); this
//! module adds no PMTU logic of its own.
//!
//! CPU: each end says what its work cost ([`Action::Cycles`]), charged to the job that
//! did it (a received frame's, or the node's own send); work a timer did (a
//! retransmitted control packet) goes to the node's next job.

use std::collections::BTreeMap;
use std::net::Ipv4Addr;

use wire::ethernet::{self, Address as Mac};

use super::{Effects, Node, PortUse};
use crate::config::CpuCycles;
use crate::node::ip::{Iface, Out};
use crate::tunnel::{Action, Host, Interface, TunnelEnd, TunnelIo};

/// The tunnel ends of one node and where each sits.
#[derive(Default)]
pub struct Tunnels {
    /// In the order the node serves them (timers and claims alike).
    pub(crate) ends: Vec<Box<dyn TunnelEnd>>,
    /// IP interface → end.
    by_iface: BTreeMap<usize, usize>,
    /// TAP port → end.
    tap_of_port: BTreeMap<u16, usize>,
    /// Port → the ends riding on it, in order.
    on_port: BTreeMap<u16, Vec<usize>>,
    /// When capturing: the frames sent and received on TAP ports, (port, time, frame),
    /// as `tcpdump -i tap0` shows them.
    pub capture: Option<Vec<(u16, u64, Vec<u8>)>>,
}

impl std::fmt::Debug for Tunnels {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.ends.iter().map(|e| e.name())).finish()
    }
}

impl Tunnels {
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// The end on TAP port `port`, if the port is one.
    pub fn tap(&self, port: u16) -> Option<usize> {
        self.tap_of_port.get(&port).copied()
    }

    /// The ends, in the order the node serves them.
    pub fn ends(&self) -> impl Iterator<Item = &dyn TunnelEnd> {
        self.ends.iter().map(|e| &**e)
    }

    /// The ends, to take what they hold at the end of a run.
    pub fn ends_mut(&mut self) -> impl Iterator<Item = &mut Box<dyn TunnelEnd>> {
        self.ends.iter_mut()
    }
}

/// What a tunnel's attach function sees of the node being built.
impl Host for Node {
    fn port_count(&self) -> usize {
        self.port_names.len()
    }

    fn port_name(&self, port: u16) -> &str {
        &self.port_names[usize::from(port)]
    }

    fn port_mac(&self, port: u16) -> Mac {
        self.port_macs[usize::from(port)]
    }

    fn port_bridged(&self, port: u16) -> bool {
        self.port_use[usize::from(port)] == PortUse::Bridged
    }

    fn has_address(&self, addr: Ipv4Addr) -> bool {
        self.ip.ifaces.iter().any(|f| f.addr.is_some_and(|(a, _)| a == addr))
    }

    fn cycles(&self) -> &CpuCycles {
        &self.cycles
    }

    fn add_interface(&mut self, iface: Interface, routes: &[(Ipv4Addr, u8)], tunnel: bool) -> Result<usize, String> {
        let Interface { name, mac, addr, mtu } = iface;
        self.ip.add_point_to_point(Iface { name, mac, addr, mtu, resolve: false }, routes, tunnel)
    }

    fn add_stack_tunnel(&mut self, iface: Interface, protects: &[(Ipv4Addr, u8)], end: Box<dyn TunnelEnd>) {
        let Interface { name, mac, addr, mtu } = iface;
        self.ip.add_tunnel(Iface { name, mac, addr, mtu, resolve: false }, protects, end);
    }

    fn add_transport(&mut self, end: Box<dyn TunnelEnd>) {
        self.ip.add_transport(end);
    }

    fn add_end(&mut self, end: Box<dyn TunnelEnd>) {
        let t = &mut self.tunnels;
        let k = t.ends.len();
        if let Some(iface) = end.interface() {
            t.by_iface.insert(iface, k);
        }
        if let Some(port) = end.tap_port() {
            t.tap_of_port.insert(port, k);
        }
        if let Some(port) = end.rides_on_port() {
            t.on_port.entry(port).or_default().push(k);
        }
        t.ends.push(end);
    }
}

impl Node {
    /// Whether packets to `dst` can leave now: a route through a tunnel end needs it up
    /// (a PPP session's IPCP Opened, a TCP connection established). An application
    /// started before that would lose its first packets, so the world waits for it (as
    /// one runs iperf after `pppd` is up).
    pub fn route_up(&self, dst: Ipv4Addr) -> bool {
        match self.ip.route(dst).and_then(|(iface, _)| self.tunnels.by_iface.get(&iface)) {
            Some(&k) => self.tunnels.ends[k].is_up(),
            None => true,
        }
    }

    /// When the node's stack or its tunnel ends next need waking.
    #[inline(always)]
    pub fn poll_at(&self) -> Option<u64> {
        // Asked after every packet the node handles: the plain node (no tunnel end)
        // answers from its IP stack alone, inline.
        let at = self.ip.poll_at();
        if self.tunnels.ends.is_empty() {
            return at;
        }
        self.tunnels_poll_at(at)
    }

    /// [`poll_at`](Self::poll_at) for a node with tunnel ends; `at` is its stack's.
    #[inline(never)]
    fn tunnels_poll_at(&self, at: Option<u64>) -> Option<u64> {
        self.tunnels.ends.iter().filter_map(|e| e.poll_at()).chain(at).min()
    }

    /// Handles the timers due at `now` (the stack's, then every end's) outside a CPU job.
    pub fn on_timer(&mut self, now: u64) -> Effects {
        let mut fx = Effects::default();
        let mut outs = Vec::new();
        self.ip.on_timer(now, &mut outs);
        self.apply(now, outs, &mut fx);
        for k in 0..self.tunnels.ends.len() {
            let mut io = TunnelIo::default();
            self.tunnels.ends[k].on_timer(now, &mut io);
            self.carry_out(now, k, io, &mut fx);
        }
        // Work done outside a CPU job is charged to the next one (as `Node::process`
        // does for the stack's own sends).
        self.unbilled += fx.cycles;
        fx.cycles = 0.0;
        fx
    }

    /// A frame leaves by port `port`: onto its link, or into its TAP tunnel.
    #[inline(always)]
    pub(crate) fn port_send(&mut self, now: u64, port: u16, frame: Vec<u8>, fx: &mut Effects) {
        match self.tunnels.tap(port) {
            Some(k) => {
                if let Some(c) = self.tunnels.capture.as_mut() {
                    c.push((port, now, frame.clone()));
                }
                self.end_send(now, k, &frame, fx)
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

    /// The end carrying IP interface `iface`, if one does.
    #[inline]
    pub(crate) fn end_of_iface(&self, iface: usize) -> Option<usize> {
        if self.tunnels.ends.is_empty() {
            return None;
        }
        self.tunnels.by_iface.get(&iface).copied()
    }

    /// An IP interface's frame (Ethernet header written by the stack) for end `k`.
    #[inline(never)]
    pub(crate) fn iface_send(&mut self, now: u64, k: usize, frame: Vec<u8>, fx: &mut Effects) {
        self.end_send(now, k, &frame[ethernet::HEADER_LEN..], fx);
    }

    /// Hands end `k` what is routed into it (a packet) or sent on its TAP port (a frame).
    fn end_send(&mut self, now: u64, k: usize, inner: &[u8], fx: &mut Effects) {
        let mut io = TunnelIo::default();
        self.tunnels.ends[k].send(now, inner, &mut io);
        self.carry_out(now, k, io, fx);
    }

    /// A datagram the stack delivered locally: a tunnel end's if one claims it (then
    /// handled here, `true`), else the applications'.
    #[inline]
    pub(crate) fn tunnel_local(&mut self, now: u64, packet: &[u8], fx: &mut Effects) -> bool {
        // The plain node's every delivery asks: answered without the tunnels' code.
        if self.tunnels.ends.is_empty() {
            return false;
        }
        self.end_local(now, packet, fx)
    }

    /// [`tunnel_local`](Self::tunnel_local) for a node with tunnel ends: the first end
    /// that claims the datagram takes it.
    #[inline(never)]
    fn end_local(&mut self, now: u64, packet: &[u8], fx: &mut Effects) -> bool {
        let Some(k) = self.tunnels.ends.iter().position(|e| e.claims(packet)) else { return false };
        let mut io = TunnelIo::default();
        let result = self.tunnels.ends[k].receive(now, packet, &mut io);
        self.carry_out(now, k, io, fx);
        if let Err(reason) = result {
            fx.drops.push((None, reason, Some(packet.to_vec())));
        }
        true
    }

    /// A tunnel's own frame (`tunnel::is_tunnel_frame`: PPPoE) received on routed port
    /// `port`: offered to the ends riding on the port, in order, until one takes it (a
    /// broadcast, PPPoE's PADI, to every one: it may interest several ACs of the node).
    #[inline(never)]
    pub(crate) fn tunnel_frame_input(&mut self, now: u64, port: u16, frame: Vec<u8>, fx: &mut Effects) {
        let riding = self.tunnels.on_port.get(&port).cloned().unwrap_or_default();
        let broadcast = frame[..6].iter().all(|&b| b == 0xff);
        let mut claimed = false;
        for k in riding {
            let mut io = TunnelIo::default();
            if !self.tunnels.ends[k].receive_frame(now, &frame, &mut io) {
                continue;
            }
            claimed = true;
            self.carry_out(now, k, io, fx);
            if !broadcast {
                break;
            }
        }
        if !claimed {
            let reason = crate::tunnel::unclaimed_frame(&frame, &self.port_names[usize::from(port)]);
            fx.drops.push((Some(port), reason, None));
        }
    }

    /// Carries out what end `k` asked for, in order; consecutive outer datagrams are
    /// routed as one batch of the stack's outputs.
    fn carry_out(&mut self, now: u64, k: usize, io: TunnelIo, fx: &mut Effects) {
        let mut outs: Vec<Out> = Vec::new();
        for action in io.actions {
            match action {
                Action::Datagram { src, dst, protocol, payload } => {
                    self.ip.send_datagram_outer(now, src, dst, protocol, &payload, &mut outs);
                }
                Action::Udp { src, src_port, to, payload } => {
                    self.ip.send_udp_outer(now, src, src_port, to, &payload, &mut outs);
                }
                other => {
                    if !outs.is_empty() {
                        self.apply(now, std::mem::take(&mut outs), fx);
                    }
                    self.carry_out_one(now, k, other, fx);
                }
            }
        }
        if !outs.is_empty() {
            self.apply(now, outs, fx);
        }
    }

    /// One action of end `k` other than an outer datagram.
    fn carry_out_one(&mut self, now: u64, k: usize, action: Action, fx: &mut Effects) {
        match action {
            Action::Cycles(c) => fx.cycles += c,
            Action::Unbilled(c) => self.unbilled += c,
            Action::Frame { port, frame } => self.port_send(now, port, frame, fx),
            Action::Inner(frame) => {
                let Some(iface) = self.tunnels.ends[k].interface() else { return };
                let mut outs = Vec::new();
                self.ip.input(now, iface, frame, &mut outs);
                fx.cycles += self.forwarding_cycles();
                self.apply(now, outs, fx);
            }
            Action::TapFrame(frame) => {
                let Some(port) = self.tunnels.ends[k].tap_port() else { return };
                if let Some(c) = self.tunnels.capture.as_mut() {
                    c.push((port, now, frame.clone()));
                }
                self.port_input(now, port, frame, fx);
            }
            Action::Drop { port, reason, packet } => fx.drops.push((port, reason, packet)),
            // The node routes only datagrams whose header the stack writes; a whole
            // outer packet is an IPsec end's, which the stack drives.
            Action::Routed(outer) => fx.drops.push((
                None,
                format!("{}: a whole outer packet is for the stack's tunnels only", self.tunnels.ends[k].name()),
                outer.get(crate::tunnel::HEADROOM..).map(<[u8]>::to_vec),
            )),
            Action::Datagram { src, dst, protocol, payload } => {
                let mut outs = Vec::new();
                self.ip.send_datagram_outer(now, src, dst, protocol, &payload, &mut outs);
                self.apply(now, outs, fx);
            }
            Action::Udp { src, src_port, to, payload } => {
                let mut outs = Vec::new();
                self.ip.send_udp_outer(now, src, src_port, to, &payload, &mut outs);
                self.apply(now, outs, fx);
            }
        }
    }
}
