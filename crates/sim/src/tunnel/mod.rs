//! Tunnels: IPsec (ESP and AH), OpenVPN over UDP and TCP, PPPoE and PPTP, each a sans-IO
//! model that the node meets through one trait, [`TunnelEnd`].
//!
//! A tunnel end is handed what is routed into it (an inner IPv4 packet, or an Ethernet
//! frame for a TAP end) and what the node receives for it (an outer datagram delivered
//! to the node, or a frame on the port it rides on), and is woken by one timer
//! ([`TunnelEnd::poll_at`]). It answers with an ordered list of [`Action`]s in a
//! [`TunnelIo`]: outer packets and datagrams to route, frames to send on a port, inner
//! packets or frames received, drops, and the CPU cycles its work cost. Whoever drives
//! it carries the actions out in order, so the end never touches the node or the stack.
//!
//! Two drivers, one trait. IPsec is part of the IP layer (RFC 4301 §5: the SPD and SAD
//! are consulted on the stack's own output and input path; Linux's xfrm): the stack
//! holds its ends (`IpStack::add_tunnel`, `add_transport`) and drives them where the
//! packet is, fitting an inner packet to the tunnel (RFC 4459 §3) before handing it
//! over. OpenVPN, PPPoE and PPTP are daemons or drivers above or beside the stack
//! (openvpn, pppd, pptpd on a tun or ppp device): the node holds them and drives them
//! between its ports and its stack (`crate::node::tunnels`). Which driver an end has is
//! decided by where its attach function puts it, in the tunnel's own file.
//!
//! Transport mode (IPsec) is no interface: it transforms the node's own datagrams in
//! place between their IPv4 header and payload (RFC 4301 §4.1), on the stack's output
//! path after routing and on its input path before delivery. It is the second method
//! set of the same trait ([`TunnelEnd::selects`], [`protect`](TunnelEnd::protect),
//! [`unprotect`](TunnelEnd::unprotect)) rather than a trait of its own, so that every
//! SA, whatever its mode, is one kind of thing to the node: one report, one
//! conservation hook, one way to be attached.
//!
//! Adding a tunnel: its wire file (crates/wire), its model file here implementing
//! [`TunnelEnd`] with an `attach` function, the `pub mod` line and one line in
//! [`attach_all`], its plan struct and its lowering (docs/extending.md).

pub mod ipsec;
pub mod openvpn;
pub mod openvpn_end;
pub mod openvpn_tcp;
pub mod pppoe;
pub mod pppoe_end;
pub mod pptp;

use std::net::{Ipv4Addr, SocketAddrV4};

use wire::ethernet::{self, Address as Mac, EtherType};
use wire::{ipv4, IpProtocol};

use crate::config::{CpuCycles, NodeConfig, TunnelFragment};

/// Octets reserved in front of an IPv4 packet in [`Action::Routed`] and
/// [`Action::Inner`] buffers: an Ethernet header (the stack's own headroom), so that
/// nobody copies a packet to put a header in front of it.
pub const HEADROOM: usize = ethernet::HEADER_LEN;

/// Something a tunnel end wants done, in the order it wants it.
#[derive(Debug)]
pub enum Action {
    /// CPU cycles the end's work cost, charged to the job that did it.
    Cycles(f64),
    /// CPU cycles of work that leaves no frame now (a packet a TCP socket holds):
    /// charged to the node's next job.
    Unbilled(f64),
    /// A whole outer IPv4 packet the end built (IPsec: AH covers its header), after
    /// [`HEADROOM`] octets, to be routed over real interfaces (RFC 4301 §5.1.2.1: an
    /// outer packet never goes back into a tunnel).
    Routed(Vec<u8>),
    /// An outer datagram whose IPv4 header the stack writes (PPTP's GRE and TCP,
    /// OpenVPN's TCP segments), routed as [`Routed`](Action::Routed).
    Datagram { src: Ipv4Addr, dst: Ipv4Addr, protocol: IpProtocol, payload: Vec<u8> },
    /// An outer UDP datagram (OpenVPN over UDP), routed as [`Routed`](Action::Routed).
    Udp { src: Ipv4Addr, src_port: u16, to: SocketAddrV4, payload: Vec<u8> },
    /// An Ethernet frame to send on port `port` (PPPoE on its port).
    Frame { port: u16, frame: Vec<u8> },
    /// An inner IPv4 packet received on the end's interface, after [`HEADROOM`]
    /// octets (which hold an Ethernet header for the node's stack to read).
    Inner(Vec<u8>),
    /// An Ethernet frame received on the end's TAP port.
    TapFrame(Vec<u8>),
    /// A drop with its reason (and the packet, so that conservation finds its flow),
    /// on the port it happened at if there is one.
    Drop { port: Option<u16>, reason: String, packet: Option<Vec<u8>> },
}

/// What a tunnel end hands back: its actions, in order.
#[derive(Debug, Default)]
pub struct TunnelIo {
    pub actions: Vec<Action>,
    /// The IPv4 Identification the stack reserved for the outer packet of this send,
    /// for an end that writes its outer header itself (IPsec); 0 from the node.
    pub ident: u16,
}

impl TunnelIo {
    /// An inner packet received, in a buffer with an Ethernet header in front (from
    /// nobody, to broadcast), as a frame from a point-to-point device reaches the stack.
    pub fn inner(&mut self, packet: &[u8]) {
        let mut frame = Vec::with_capacity(HEADROOM + packet.len());
        frame.resize(HEADROOM, 0);
        let repr = ethernet::Repr { src_addr: Mac::default(), dst_addr: Mac::BROADCAST, ethertype: EtherType::Ipv4 };
        repr.emit(&mut ethernet::Frame::new_unchecked(&mut frame[..]));
        frame.extend_from_slice(packet);
        self.actions.push(Action::Inner(frame));
    }

    /// A drop at no port.
    pub fn drop(&mut self, reason: String, packet: Option<Vec<u8>>) {
        self.actions.push(Action::Drop { port: None, reason, packet });
    }
}

/// A tunnel end, as the node and its stack meet it (see the module doc).
pub trait TunnelEnd {
    /// The end's name (its interface's, as the scenario names it).
    fn name(&self) -> &str;

    // --- Where it sits ---------------------------------------------------------------

    /// The IP interface it is (tunnel mode, TUN, PPP), if it is one.
    fn interface(&self) -> Option<usize> {
        None
    }
    /// The port it is (an OpenVPN TAP end: frames sent on that port go into it).
    fn tap_port(&self) -> Option<u16> {
        None
    }
    /// The port whose frames it reads ([`receive_frame`](Self::receive_frame): PPPoE).
    fn rides_on_port(&self) -> Option<u16> {
        None
    }
    /// Whether packets routed into it can leave now (a PPP session up, a TCP
    /// connection established). The world holds applications back until then.
    fn is_up(&self) -> bool {
        true
    }

    // --- What it carries ---------------------------------------------------------------

    /// An inner IPv4 packet routed into its interface, or an Ethernet frame sent on
    /// its TAP port: encapsulates it and says what to send.
    fn send(&mut self, now: u64, inner: &[u8], io: &mut TunnelIo);
    /// Whether the whole (reassembled) IPv4 datagram `packet`, delivered to the node,
    /// is this end's.
    fn claims(&self, _packet: &[u8]) -> bool {
        false
    }
    /// Opens a claimed datagram and says what it completes (inner packets, replies).
    /// An error drops the datagram for that reason (the caller holds the packet).
    fn receive(&mut self, now: u64, packet: &[u8], io: &mut TunnelIo) -> Result<(), String>;
    /// A frame received on [`rides_on_port`](Self::rides_on_port): whether it was this
    /// end's (several ends may ride on one port).
    fn receive_frame(&mut self, _now: u64, _frame: &[u8], _io: &mut TunnelIo) -> bool {
        false
    }

    // --- Its one timer --------------------------------------------------------------------

    /// When it next needs waking.
    fn poll_at(&self) -> Option<u64> {
        None
    }
    /// Woken at `now` (the node's timer: every end is asked, each does what is due).
    fn on_timer(&mut self, _now: u64, _io: &mut TunnelIo) {}

    // --- Its MTU rule -----------------------------------------------------------------

    /// Its own (outer) address: the source of packets the node itself sends into it.
    fn local(&self) -> Option<Ipv4Addr> {
        None
    }
    /// The far end's (outer) address, whose path MTU bounds the tunnel's when the
    /// stack drives it; `None` when its MTU is its interface's alone.
    fn remote(&self) -> Option<Ipv4Addr> {
        None
    }
    /// The largest inner packet whose encapsulation fits one outer packet of
    /// `outer_mtu` octets (the default is IP in IP's, RFC 2003: one 20-octet header).
    fn inner_mtu(&self, outer_mtu: usize) -> usize {
        outer_mtu.saturating_sub(ipv4::HEADER_LEN)
    }
    /// Where an inner packet too big for the tunnel is fragmented (RFC 4459 §3).
    fn fragment(&self) -> TunnelFragment {
        TunnelFragment::After
    }

    // --- Transport mode (IPsec; see the module doc) -------------------------------------

    /// Whether the whole outbound IPv4 datagram `packet` (from this node) is this
    /// transport-mode SA's.
    fn selects(&self, _packet: &[u8]) -> bool {
        false
    }
    /// How specific its selector is: among SAs that select a packet the most specific
    /// wins (ties: the first added).
    fn specificity(&self) -> u8 {
        0
    }
    /// Appends the protected datagram to `out`.
    fn protect(&mut self, _packet: &[u8], _out: &mut Vec<u8>) -> Result<(), String> {
        Err(format!("{}: not a transport-mode SA", self.name()))
    }
    /// Checks a claimed datagram; appends the restored datagram to `out`.
    fn unprotect(&mut self, _packet: &[u8], _out: &mut Vec<u8>) -> Result<(), String> {
        Err(format!("{}: not a transport-mode SA", self.name()))
    }

    // --- Its report and what it holds -----------------------------------------------------

    /// What an IPsec SA pair carried; None for other tunnels.
    fn sa_report(&self) -> Option<SaReport> {
        None
    }
    /// The flow packet ESP packet `seq` of outbound SPI `spi` carried, if this sealed
    /// it (conservation).
    fn sealed(&self, _spi: u32, _seq: u32) -> Option<crate::conservation::Found> {
        None
    }
    /// Each packet it holds (fragments waiting for the rest), for the census.
    fn held_packets(&self, _each: &mut dyn FnMut(&[u8])) {}
    /// The packets it discarded without a drop record (OpenVPN's incomplete fragmented
    /// packets after FRAG_TTL_SEC), with the reason, taken once.
    fn take_abandoned(&mut self) -> Vec<(&'static str, Vec<u8>)> {
        Vec::new()
    }
    /// The TCP byte stream that carries its packets, if one does (OpenVPN over TCP):
    /// the census reads what it holds toward its peer.
    fn stream(&self) -> Option<&openvpn_tcp::StreamTransport> {
        None
    }
}

/// What a tunnel's attach function may ask of the node it is attached to.
pub trait Host {
    /// The node's ports: how many, and each one's name, MAC and whether it is a bridge
    /// member.
    fn port_count(&self) -> usize;
    fn port_name(&self, port: u16) -> &str;
    fn port_mac(&self, port: u16) -> Mac;
    fn port_bridged(&self, port: u16) -> bool;
    /// Whether `addr` is an address of one of the node's interfaces.
    fn has_address(&self, addr: Ipv4Addr) -> bool;
    /// The node's CPU costs.
    fn cycles(&self) -> &CpuCycles;
    /// Adds a point-to-point IP interface the node carries itself (TUN, PPP) with a
    /// route to each of `routes`; `tunnel`: never the way out for an outer packet.
    /// Returns the interface index.
    fn add_interface(&mut self, iface: Interface, routes: &[(Ipv4Addr, u8)], tunnel: bool) -> Result<usize, String>;
    /// Adds a tunnel-mode end the stack drives as interface `iface` (its address is
    /// ignored) with a route to each of `protects`.
    fn add_stack_tunnel(&mut self, iface: Interface, protects: &[(Ipv4Addr, u8)], end: Box<dyn TunnelEnd>);
    /// Adds a transport-mode end the stack drives on the node's own datagrams.
    fn add_transport(&mut self, end: Box<dyn TunnelEnd>);
    /// Adds an end the node drives.
    fn add_end(&mut self, end: Box<dyn TunnelEnd>);
}

/// A new IP interface for [`Host::add_interface`].
#[derive(Debug, Clone)]
pub struct Interface {
    pub name: String,
    pub mac: Mac,
    pub addr: Option<(Ipv4Addr, u8)>,
    pub mtu: usize,
}

/// Attaches every tunnel end of `config` to its node. The order is the results': it
/// numbers the interfaces (OpenVPN TUN, then PPPoE, then PPTP, after IPsec's) and the
/// ends the node serves, timers and claims alike (PPPoE, PPTP, then OpenVPN).
pub fn attach_all(config: &NodeConfig, host: &mut dyn Host) -> Result<(), String> {
    ipsec::attach(config, host)?;
    let openvpn = openvpn_end::attach(config, host)?;
    let pppoe = pppoe_end::attach(config, host)?;
    let pptp = pptp::end::attach(config, host)?;
    for end in pppoe.into_iter().chain(pptp).chain(openvpn) {
        host.add_end(end);
    }
    Ok(())
}

/// Whether an Ethernet frame is a tunnel's own (not IP's): PPPoE's EtherTypes. The
/// node offers such frames on a routed port to the ends riding on it, never to IP.
pub fn is_tunnel_frame(frame: &[u8]) -> bool {
    pppoe_end::is_pppoe(frame)
}

/// Why a tunnel's frame ([`is_tunnel_frame`]) no end on port `port_name` took is
/// dropped.
pub fn unclaimed_frame(frame: &[u8], port_name: &str) -> String {
    pppoe_end::unclaimed(frame, port_name)
}

/// What one end's SA pair carried, for reports: per tunnel (VPN) packet and byte counts.
/// Bytes are those after the IPv4 header of the ESP/AH datagram (ESP: header to ICV,
/// what the cipher and the HMAC went over), as `IpCounters::esp_bytes` counts them.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
pub struct SaReport {
    pub name: String,
    /// "tunnel" or "transport".
    pub mode: &'static str,
    /// "esp" or "ah".
    pub protocol: &'static str,
    pub spi_out: u32,
    pub spi_in: u32,
    pub sealed_packets: u64,
    pub sealed_bytes: u64,
    pub opened_packets: u64,
    pub opened_bytes: u64,
    /// Datagrams claimed by the inbound SA that failed to open (ICV, padding).
    pub failed: u64,
}

#[cfg(test)]
mod tests;
