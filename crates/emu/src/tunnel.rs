//! A user-space tunnel end: crates/sim's own sans-IO [`TunnelEnd`] of one tunnel of one
//! node, driven in real time between a TUN device (the tunnel's interface) and the
//! outer side, for the tunnels this machine's kernel lacks (PPP, ESP, AH, GRE; issue 17).
//!
//! The end is built by the simulator's own constructor ([`sim::tunnel::attach_all`]) on
//! a [`Host`] that records what the attach functions ask for instead of a simulated
//! node, and the end of the named tunnel is kept: the same model, the same seeds
//! (magic numbers, CHAP challenges, SPIs and keys) as in a simulation of the plan.
//!
//! - Inner side: a TUN device named after the tunnel (`IFF_TUN | IFF_NO_PI`), made
//!   here in the calling thread's namespace; the caller gives it the plan's address,
//!   MTU and routes once [`run_tunnel`] says it is ready. What the kernel routes into
//!   it goes to [`TunnelEnd::send`]; [`Action::Inner`] packets are written to it.
//! - Outer side, PPPoE (the end [`rides on a port`](TunnelEnd::rides_on_port)): two
//!   `AF_PACKET` sockets on that port's interface, EtherTypes 0x8863 (discovery) and
//!   0x8864 (session) (RFC 2516 §4), whole Ethernet frames both ways
//!   ([`TunnelEnd::receive_frame`], [`Action::Frame`]). Frames this host sent itself
//!   (`PACKET_OUTGOING`) are not offered back.
//! - Outer side, IPsec tunnel mode (an end the IP stack drives, RFC 4301 §5): a raw
//!   IPv4 socket of protocol ESP (50) or AH (51) receives the whole datagrams, the
//!   kernel having reassembled them ([`TunnelEnd::claims`], [`TunnelEnd::receive`]);
//!   the outer packets the end writes ([`Action::Routed`]) go out whole through an
//!   `IPPROTO_RAW` socket (`IP_HDRINCL`: the model's header, which AH covers, is sent
//!   as it is), routed by the kernel. One too big for its route's MTU is fragmented
//!   here (RFC 791 §3.2, `wire::ipv4::fragment`), as the simulator's stack fragments
//!   it after encapsulation ([`TunnelFragment::After`]); the kernel does not fragment an
//!   `IP_HDRINCL` packet (`raw_send_hdrinc` answers EMSGSIZE).
//!
//! - Outer side, PPTP (RFC 2637): the model's control connection is its own TCP
//!   (crates/sim `tcp`, as pptpd's peer sees it), not the kernel's: its segments and its
//!   enhanced GRE packets go out through raw IPv4 sockets of protocols TCP (6) and GRE
//!   (47) bound to the end's outer address, the kernel writing the IPv4 header
//!   ([`Action::Datagram`]), and come back through the same sockets. The kernel's TCP
//!   sees the segments too and would answer them with resets (no socket of its own has
//!   the port): the caller drops those in the namespace's nftables output hook, all but
//!   the end's own segments, which carry [`PPTP_MARK`].
//!
//! - IPsec transport mode (RFC 4301 §4.1): the SA transforms the kernel's own
//!   datagrams, which no TUN device sees: nftables queues them to the end through
//!   NFQUEUE ([`crate::nfqueue`]), which returns each protected or restored
//!   ([`crate::transport`]).
//!
//! Not run here: OpenVPN (the real openvpn runs it).
//!
//! The end's single timer ([`TunnelEnd::poll_at`]) is the loop's `ppoll` timeout; its
//! actions are carried out in order.

use std::collections::BTreeMap;
use std::io;
use std::net::Ipv4Addr;
use std::os::fd::{AsRawFd, BorrowedFd, OwnedFd, RawFd};
use std::time::Instant;

use serde::Serialize;
use sim::config::{CpuCycles, NodeConfig};
use sim::tunnel::{Action, Host, Interface, TunnelEnd, TunnelIo, HEADROOM};
use wire::ethernet::{Address as Mac, EtherType};
use wire::ipv4;

use crate::device::Device;
use crate::line::EndKind;
use crate::signal::SignalGuard;
use crate::Error;

/// The version of the report's JSON; a change of its shape raises it.
pub const TUNNEL_REPORT_SCHEMA: u32 = 1;

/// The largest datagram or frame read at once: a 65 535-octet IPv4 datagram and an
/// Ethernet header.
pub(crate) const BUFFER: usize = 65_536 + 64;

/// RFC 2516 §4: the EtherTypes of PPPoE discovery and session frames.
const ETH_P_PPPOE_DISC: u16 = 0x8863;
const ETH_P_PPPOE_SES: u16 = 0x8864;

/// linux/if_packet.h: a frame this host sent, seen by a packet socket.
const PACKET_OUTGOING: u8 = 4;
/// linux/if_packet.h: `getsockopt(SOL_PACKET, PACKET_STATISTICS)`, a `tpacket_stats`
/// (packets, drops) since the last read.
const PACKET_STATISTICS: libc::c_int = 6;

/// Each outer socket's receive buffer, octets (`SO_RCVBUFFORCE`, root): Linux's default
/// (`net.core.rmem_default`, 208 kB) holds some 140 full-size frames, which a TCP flow
/// through the tunnel overruns while the daemon is descheduled on a loaded machine; what
/// still overflows is counted (`"receive queue full"`).
pub(crate) const RECEIVE_BUFFER: libc::c_int = 8 << 20;

/// The drop reason of frames or datagrams the kernel discarded because an outer
/// socket's receive queue was full (their octets unknown: counted 0).
pub const QUEUE_FULL: &str = "receive queue full (outer socket)";

/// The drop reason of datagrams the kernel did not queue to a transport-mode end for
/// want of room (its queue or the end's netlink socket; their octets unknown: counted 0).
pub const NFQUEUE_FULL: &str = "queue full (nfqueue)";

/// IANA protocol numbers (RFC 4303 §2: ESP 50; RFC 4302 §2: AH 51; RFC 2784: GRE 47).
const IPPROTO_ESP: i32 = 50;
const IPPROTO_GRE: i32 = 47;
const IPPROTO_AH: i32 = 51;

/// Packets and octets.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Count {
    pub packets: u64,
    pub bytes: u64,
}

impl Count {
    pub(crate) fn add(&mut self, bytes: usize) {
        self.packets += 1;
        self.bytes += bytes as u64;
    }
}

/// One PPPoE discovery packet (RFC 2516 §5) the end sent or took, as the wire says.
#[derive(Debug, Clone, Serialize)]
pub struct DiscoveryEvent {
    /// "out" (sent) or "in" (offered to the end).
    pub direction: &'static str,
    /// "PADI", "PADO", "PADR", "PADS", "PADT".
    pub code: String,
    pub session_id: u16,
    /// Since the start of the loop, ns.
    pub at_ns: u64,
}

/// What a tunnel end did, from start to stop (docs/metrics.md, "User-space tunnels").
#[derive(Debug, Clone, Serialize)]
pub struct TunnelReport {
    pub schema: u32,
    pub node: String,
    pub tunnel: String,
    /// "pppoe", "ipsec" or "pptp".
    pub kind: &'static str,
    /// The TUN device (the tunnel's interface).
    pub device: String,
    /// What carries the outer side: the port's interface (PPPoE) or "ip" (raw IPv4).
    pub outer: String,
    pub duration_ns: u64,
    /// "stop fd", "stop fd closed", "SIGTERM", "SIGINT", or the error that ended it.
    pub stopped_by: String,
    /// When the end first said packets can leave ([`TunnelEnd::is_up`]: PPPoE's IPCP
    /// Opened), ns after the start; None if never.
    pub up_after_ns: Option<u64>,
    /// Inner packets the kernel routed into the TUN device and the end was handed.
    pub inner_in: Count,
    /// Inner packets the end delivered, written to the TUN device.
    pub inner_out: Count,
    /// Outer frames (PPPoE) or IPv4 packets (fragments counted each) sent.
    pub outer_out: Count,
    /// Outer frames or datagrams the end took as its own.
    pub outer_in: Count,
    /// Outer frames or datagrams read that were not the end's (another session, SPI,
    /// or a frame of the other EtherType's socket).
    pub outer_not_mine: Count,
    /// Drops by reason: the model's own (its reason text) and the daemon's (a write
    /// the kernel refused: "send: ...").
    pub dropped: BTreeMap<String, Count>,
    /// PPPoE: the discovery packets, in order (empty for other tunnels).
    pub discovery: Vec<DiscoveryEvent>,
}

impl TunnelReport {
    pub(crate) fn new(node: &NodeConfig, name: &str, kind: &'static str, device: &str, outer: String) -> TunnelReport {
        TunnelReport {
            schema: TUNNEL_REPORT_SCHEMA,
            node: node.name.clone(),
            tunnel: name.to_string(),
            kind,
            device: device.to_string(),
            outer,
            duration_ns: 0,
            stopped_by: String::new(),
            up_after_ns: None,
            inner_in: Count::default(),
            inner_out: Count::default(),
            outer_out: Count::default(),
            outer_in: Count::default(),
            outer_not_mine: Count::default(),
            dropped: BTreeMap::new(),
            discovery: Vec::new(),
        }
    }

    pub(crate) fn drop(&mut self, reason: String, bytes: usize) {
        self.dropped.entry(reason).or_default().add(bytes);
    }
}

/// Which of the simulator's drivers an end has (crates/sim tunnel/mod.rs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Driver {
    /// Tunnel mode, driven by the IP stack (IPsec).
    Stack,
    /// A transport-mode SA (IPsec).
    Transport,
    /// Driven by the node (OpenVPN, PPPoE, PPTP).
    Node,
}

/// A [`Host`] that records what the attach functions ask for, in place of the
/// simulator's node: the same constructor builds the same ends.
struct Collect<'a> {
    node: &'a NodeConfig,
    macs: Vec<Mac>,
    ends: Vec<(Driver, Box<dyn TunnelEnd>)>,
    interfaces: usize,
}

impl Host for Collect<'_> {
    fn port_count(&self) -> usize {
        self.node.ports.len()
    }
    fn port_name(&self, port: u16) -> &str {
        &self.node.ports[usize::from(port)].name
    }
    fn port_mac(&self, port: u16) -> Mac {
        self.macs[usize::from(port)]
    }
    fn port_bridged(&self, port: u16) -> bool {
        self.node.bridge.as_ref().is_some_and(|b| b.ports.contains(&port))
    }
    fn has_address(&self, addr: Ipv4Addr) -> bool {
        let bridge = self.node.bridge.as_ref().and_then(|b| b.address);
        self.node.ports.iter().filter_map(|p| p.address).chain(bridge).any(|(a, _)| a == addr)
    }
    fn cycles(&self) -> &CpuCycles {
        &self.node.cpu.cycles
    }
    fn add_interface(&mut self, _iface: Interface, _routes: &[(Ipv4Addr, u8)], _tunnel: bool) -> Result<usize, String> {
        // The interface is the TUN device; the caller gives it the plan's address,
        // MTU and routes.
        self.interfaces += 1;
        Ok(self.interfaces - 1)
    }
    fn add_stack_tunnel(&mut self, _iface: Interface, _protects: &[(Ipv4Addr, u8)], end: Box<dyn TunnelEnd>) {
        self.interfaces += 1;
        self.ends.push((Driver::Stack, end));
    }
    fn add_transport(&mut self, end: Box<dyn TunnelEnd>) {
        self.ends.push((Driver::Transport, end));
    }
    fn add_end(&mut self, end: Box<dyn TunnelEnd>) {
        self.ends.push((Driver::Node, end));
    }
}

/// The end of tunnel `name` at `node`, built by the simulator's constructor, with the
/// kind this daemon runs it as ("pppoe" or "ipsec"); a clear refusal for the others.
fn build_end(node: &NodeConfig, name: &str) -> Result<(&'static str, Box<dyn TunnelEnd>), Error> {
    let macs = node.ports.iter().map(|p| Mac(p.mac)).collect();
    let mut host = Collect { node, macs, ends: Vec::new(), interfaces: 0 };
    sim::tunnel::attach_all(node, &mut host).map_err(Error::Config)?;
    let kind = if node.pppoe.iter().any(|c| c.name == name) {
        "pppoe"
    } else if node.ipsec.iter().any(|c| c.name == name) {
        "ipsec"
    } else if node.pptp.iter().any(|c| c.name == name) {
        "pptp"
    } else if node.openvpn.iter().any(|c| c.name == name) {
        return Err(Error::Config(format!("node {}: tunnel {name} is OpenVPN: the real openvpn runs it", node.name)));
    } else {
        return Err(Error::Config(format!("node {}: no tunnel end named {name}", node.name)));
    };
    let at = host.ends.iter().position(|(_, e)| e.name() == name).expect("attach_all attached every end of the node");
    let (driver, end) = host.ends.swap_remove(at);
    Ok((if driver == Driver::Transport { "ipsec-transport" } else { kind }, end))
}

/// The outer side of an end.
enum Outer {
    /// PPPoE: discovery and session sockets on the port's interface.
    Frames { ifname: String, discovery: OwnedFd, session: OwnedFd },
    /// IPsec and PPTP: a raw IPv4 socket per protocol the end takes (IPsec: ESP or AH;
    /// PPTP: TCP and GRE, bound to the end's outer address, which also sends its
    /// [`Action::Datagram`]s with the kernel's header), and an `IPPROTO_RAW` one for
    /// the whole packets of [`Action::Routed`].
    Ip { sockets: Vec<(i32, OwnedFd)>, send: OwnedFd, mtu: BTreeMap<Ipv4Addr, usize> },
}

/// The firewall mark of a PPTP end's own outer packets (`SO_MARK`): the namespace's
/// nftables rule that drops the kernel's resets of the model's control connection lets
/// its segments pass, and the routing rule that sends everything else through the PPTP
/// routes' table lets them by, so that an outer packet never goes back into the tunnel
/// (python/qoslab/backends/emu/tunnels.py).
pub const PPTP_MARK: u32 = 0x52;

impl Outer {
    fn open(node: &NodeConfig, kind: &str, end: &dyn TunnelEnd) -> io::Result<Outer> {
        if kind == "pppoe" {
            let port = end.rides_on_port().expect("a PPPoE end rides on a port");
            let ifname = node.ports[usize::from(port)].name.clone();
            let (discovery, _) = packet_socket(&ifname, ETH_P_PPPOE_DISC)?;
            let (session, _) = packet_socket(&ifname, ETH_P_PPPOE_SES)?;
            return Ok(Outer::Frames { ifname, discovery, session });
        }
        let sockets = if kind == "pptp" {
            let local = end.local().expect("a PPTP end has an outer address");
            vec![
                (libc::IPPROTO_TCP, bound_raw(libc::IPPROTO_TCP, local, Some(PPTP_MARK))?),
                (IPPROTO_GRE, bound_raw(IPPROTO_GRE, local, Some(PPTP_MARK))?),
            ]
        } else {
            let protocol = match node.ipsec.iter().find(|c| c.name == end.name()).map(|c| c.protocol) {
                Some(sim::config::IpsecProtocol::Ah) => IPPROTO_AH,
                _ => IPPROTO_ESP,
            };
            vec![(protocol, socket(libc::AF_INET, libc::SOCK_RAW, protocol, "raw IPv4 socket")?)]
        };
        let send = socket(libc::AF_INET, libc::SOCK_RAW, libc::IPPROTO_RAW, "IPPROTO_RAW socket")?;
        Ok(Outer::Ip { sockets, send, mtu: BTreeMap::new() })
    }

    fn name(&self) -> String {
        match self {
            Outer::Frames { ifname, .. } => ifname.clone(),
            Outer::Ip { .. } => "ip".into(),
        }
    }

    /// The descriptors to poll.
    fn fds(&self) -> Vec<RawFd> {
        match self {
            Outer::Frames { discovery, session, .. } => vec![discovery.as_raw_fd(), session.as_raw_fd()],
            Outer::Ip { sockets, .. } => sockets.iter().map(|(_, fd)| fd.as_raw_fd()).collect(),
        }
    }

    /// What the outer sockets' receive queues dropped since they were made.
    fn queue_drops(&self) -> u64 {
        match self {
            Outer::Frames { discovery, session, .. } => {
                packet_drops(discovery.as_raw_fd()) + packet_drops(session.as_raw_fd())
            }
            Outer::Ip { sockets, .. } => sockets.iter().map(|(_, fd)| raw_drops(fd.as_raw_fd())).sum(),
        }
    }

    /// Sends one Ethernet frame (PPPoE) on the socket of its EtherType.
    fn send_frame(&self, frame: &[u8]) -> io::Result<()> {
        let Outer::Frames { discovery, session, .. } = self else {
            return Err(io::Error::new(io::ErrorKind::Unsupported, "a frame from an end with no port"));
        };
        let fd = if frame.get(12..14) == Some(&ETH_P_PPPOE_DISC.to_be_bytes()[..]) { discovery } else { session };
        // SAFETY: `frame` is valid for its length; the socket is bound to its interface.
        let n = unsafe { libc::send(fd.as_raw_fd(), frame.as_ptr().cast(), frame.len(), 0) };
        if n < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// Sends one whole IPv4 packet (fragmented first if its route's MTU is smaller);
    /// returns the packets sent and their octets.
    fn send_ip(&mut self, packet: &[u8]) -> io::Result<Vec<usize>> {
        let Outer::Ip { send, mtu, .. } = self else {
            return Err(io::Error::new(io::ErrorKind::Unsupported, "an IPv4 packet from an end with no IP side"));
        };
        let view = wire::ipv4::Packet::new_checked(packet)
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, format!("outer packet: {e}")))?;
        let dst = view.dst_addr();
        let path = match mtu.get(&dst) {
            Some(&m) => m,
            None => {
                let m = route_mtu(dst)?;
                mtu.insert(dst, m);
                m
            }
        };
        let mut sent = Vec::new();
        let mut error = None;
        wire::ipv4::fragment(packet, path, |piece| match send_to(send.as_raw_fd(), piece, dst) {
            Ok(()) => sent.push(piece.len()),
            Err(e) => error = Some(e),
        })
        .map_err(|e| {
            io::Error::new(io::ErrorKind::InvalidData, format!("outer packet of {} octets: {e:?}", packet.len()))
        })?;
        match error {
            Some(e) => Err(e),
            None => Ok(sent),
        }
    }
}

impl Outer {
    /// Sends `payload` as an IPv4 datagram of `protocol` to `dst` from the socket bound
    /// to the end's address, the kernel writing the header (and fragmenting, RFC 791).
    fn send_datagram(&self, protocol: wire::IpProtocol, dst: Ipv4Addr, payload: &[u8]) -> io::Result<()> {
        let number = i32::from(u8::from(protocol));
        let Outer::Ip { sockets, .. } = self else {
            return Err(io::Error::new(io::ErrorKind::Unsupported, "a datagram from an end with no IP side"));
        };
        let Some((_, fd)) = sockets.iter().find(|(p, _)| *p == number) else {
            return Err(io::Error::new(io::ErrorKind::Unsupported, format!("no socket of protocol {number}")));
        };
        send_to(fd.as_raw_fd(), payload, dst)
    }
}

/// The code of a PPPoE discovery frame and its session id, if it is one (RFC 2516 §5).
fn discovery_code(frame: &[u8]) -> Option<(String, u16)> {
    let eth = wire::ethernet::Frame::new_checked(frame).ok()?;
    if eth.ethertype() != EtherType::PppoeDiscovery {
        return None;
    }
    let packet = wire::pppoe::Packet::new_checked(eth.payload()).ok()?;
    let repr = wire::pppoe::DiscoveryRepr::parse(&packet).ok()?;
    let code = format!("{:?}", repr.code).to_uppercase();
    Some((code, repr.session_id))
}

/// How the loop runs.
#[derive(Debug, Clone, Copy, Default)]
pub struct TunnelOptions {
    /// Stop cleanly on SIGTERM and SIGINT (see `signal`).
    pub stop_on_signals: bool,
}

/// Runs the end of tunnel `name` at `node` (the plan's node, every tunnel end of it
/// attached as the simulator attaches them, this one kept) until `stop` is readable or
/// closed, or a signal with `options.stop_on_signals`. Once its TUN device and sockets
/// are open it writes `ready\n` to `notify` (after `inner_mtu N\n` for an end with a far
/// address: [`TunnelEnd::inner_mtu`] of its route's MTU), and `up\n` when the end first
/// says packets can leave. Returns its report.
pub fn run_tunnel(
    node: &NodeConfig,
    name: &str,
    stop: Option<BorrowedFd<'_>>,
    notify: Option<BorrowedFd<'_>>,
    options: &TunnelOptions,
) -> Result<TunnelReport, Error> {
    let (kind, mut end) = build_end(node, name)?;
    if kind == "ipsec-transport" {
        return crate::transport::run_transport(node, name, end, stop, notify, options);
    }
    let tun = Device::open(name, EndKind::Tun)?;
    let mut outer = Outer::open(node, kind, &*end)?;
    let signals = if options.stop_on_signals { SignalGuard::install()? } else { None };
    let mut report = TunnelReport::new(node, name, kind, tun.name(), outer.name());
    // The largest inner packet whose outer packet fits the route to the far end (RFC
    // 4301 §8.2.1), for the caller's routes into the device: DF packets above it get
    // "fragmentation needed" with it from the kernel, as the simulator's stack sends.
    if let Some(remote) = end.remote() {
        say(notify, format!("inner_mtu {}\n", end.inner_mtu(route_mtu(remote)?)).as_bytes());
    }
    say(notify, b"ready\n");
    let start = Instant::now();
    let now = || start.elapsed().as_nanos() as u64;
    let mut buf = vec![0u8; BUFFER];
    let mut ident: u16 = 0;
    let outer_fds = outer.fds();
    let stopped_by = loop {
        // The end's timer, and what its work asks for.
        let t = now();
        if end.poll_at().is_some_and(|at| at <= t) {
            let mut io = TunnelIo::default();
            end.on_timer(t, &mut io);
            carry_out(io, &mut outer, &tun, &mut report, t);
        }
        if report.up_after_ns.is_none() && end.is_up() {
            report.up_after_ns = Some(now());
            say(notify, b"up\n");
        }
        // Wait for a packet, the stop, a signal or the timer.
        let mut fds: Vec<libc::pollfd> = [Some(tun.as_raw_fd())]
            .into_iter()
            .chain(outer_fds.iter().map(|&fd| Some(fd)))
            .chain([stop.map(|s| s.as_raw_fd()), signals.as_ref().map(SignalGuard::fd)])
            .map(|fd| libc::pollfd { fd: fd.unwrap_or(-1), events: libc::POLLIN, revents: 0 })
            .collect();
        if let Err(e) = wait(&mut fds, end.poll_at().map(|at| at.saturating_sub(now()))) {
            if e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            break format!("ppoll: {e}");
        }
        let k = fds.len();
        if fds[k - 1].revents != 0 {
            break signals.as_ref().and_then(SignalGuard::caught).unwrap_or("signal").to_string();
        }
        if fds[k - 2].revents != 0 {
            break if fds[k - 2].revents & libc::POLLIN != 0 { "stop fd" } else { "stop fd closed" }.to_string();
        }
        // Inner packets the kernel routed into the tunnel, then outer frames or datagrams.
        if fds[0].revents & libc::POLLIN != 0 {
            take_inner(&mut *end, &tun, &mut outer, &mut report, &mut buf, &mut ident, &now)?;
        }
        for (i, &fd) in outer_fds.iter().enumerate() {
            if fds[1 + i].revents & libc::POLLIN != 0 {
                take_outer(&mut *end, fd, &tun, &mut outer, &mut report, &mut buf, &now)?;
            }
        }
    };
    report.duration_ns = now();
    report.stopped_by = stopped_by;
    let lost = outer.queue_drops();
    if lost > 0 {
        report.dropped.insert(QUEUE_FULL.into(), Count { packets: lost, bytes: 0 });
    }
    Ok(report)
}

/// Writes `what` (a line: `ready`, `up`, `inner_mtu N`) to the caller's `notify` descriptor, if any.
pub(crate) fn say(notify: Option<BorrowedFd<'_>>, what: &[u8]) {
    if let Some(fd) = notify {
        // SAFETY: `what` is valid for its length; the caller keeps `fd` open.
        unsafe { libc::write(fd.as_raw_fd(), what.as_ptr().cast(), what.len()) };
    }
}

/// Sleeps in `ppoll` on `fds` for at most `timeout_ns` (None: until one is ready).
fn wait(fds: &mut [libc::pollfd], timeout_ns: Option<u64>) -> io::Result<()> {
    let ts = timeout_ns.map(|ns| libc::timespec {
        tv_sec: (ns / 1_000_000_000) as libc::time_t,
        tv_nsec: (ns % 1_000_000_000) as libc::c_long,
    });
    let ts_ptr = ts.as_ref().map_or(std::ptr::null(), |t| t as *const libc::timespec);
    // SAFETY: `fds` holds initialised pollfds; `ts_ptr` is null or points at `ts`.
    if unsafe { libc::ppoll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, ts_ptr, std::ptr::null()) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Every inner packet waiting on the TUN device, handed to the end.
fn take_inner(
    end: &mut dyn TunnelEnd,
    tun: &Device,
    outer: &mut Outer,
    report: &mut TunnelReport,
    buf: &mut [u8],
    ident: &mut u16,
    now: &dyn Fn() -> u64,
) -> Result<(), Error> {
    loop {
        let len = match tun.read(buf) {
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(()),
            Err(e) => return Err(Error::Io(e)),
        };
        report.inner_in.add(len);
        let t = now();
        *ident = ident.wrapping_add(1);
        let mut io = TunnelIo { ident: *ident, ..TunnelIo::default() };
        end.send(t, &buf[..len], &mut io);
        carry_out(io, outer, tun, report, t);
    }
}

/// Every frame or datagram waiting on outer socket `fd`, offered to the end.
fn take_outer(
    end: &mut dyn TunnelEnd,
    fd: RawFd,
    tun: &Device,
    outer: &mut Outer,
    report: &mut TunnelReport,
    buf: &mut [u8],
    now: &dyn Fn() -> u64,
) -> Result<(), Error> {
    while let Some((len, pkttype)) = receive(fd, buf)? {
        if pkttype == PACKET_OUTGOING {
            continue; // this host's own frame (another socket's), not received
        }
        let t = now();
        let packet = &buf[..len];
        let mut io = TunnelIo::default();
        let mine = match outer {
            Outer::Frames { .. } => {
                let taken = end.receive_frame(t, packet, &mut io);
                if let Some((code, session_id)) = discovery_code(packet).filter(|_| taken) {
                    report.discovery.push(DiscoveryEvent { direction: "in", code, session_id, at_ns: t });
                }
                taken
            }
            Outer::Ip { .. } => {
                let claimed = end.claims(packet);
                if claimed {
                    if let Err(reason) = end.receive(t, packet, &mut io) {
                        report.drop(reason, len);
                    }
                }
                claimed
            }
        };
        if mine {
            report.outer_in.add(len);
        } else {
            report.outer_not_mine.add(len);
        }
        carry_out(io, outer, tun, report, t);
    }
    Ok(())
}

/// Carries out an end's actions in order.
fn carry_out(io: TunnelIo, outer: &mut Outer, tun: &Device, report: &mut TunnelReport, now: u64) {
    for action in io.actions {
        match action {
            Action::Cycles(_) | Action::Unbilled(_) => {} // real CPUs pay here
            Action::Routed(packet) => match outer.send_ip(&packet[HEADROOM..]) {
                Ok(sent) => sent.into_iter().for_each(|n| report.outer_out.add(n)),
                Err(e) => report.drop(format!("send: {e}"), packet.len() - HEADROOM),
            },
            Action::Frame { frame, .. } => match outer.send_frame(&frame) {
                Ok(()) => {
                    report.outer_out.add(frame.len());
                    if let Some((code, session_id)) = discovery_code(&frame) {
                        report.discovery.push(DiscoveryEvent { direction: "out", code, session_id, at_ns: now });
                    }
                }
                Err(e) => report.drop(format!("send: {e}"), frame.len()),
            },
            Action::Inner(packet) => match tun.write(&packet[HEADROOM..]) {
                Ok(()) => report.inner_out.add(packet.len() - HEADROOM),
                Err(e) => report.drop(format!("write to {}: {e}", tun.name()), packet.len() - HEADROOM),
            },
            Action::Datagram { payload, protocol, dst, .. } => match outer.send_datagram(protocol, dst, &payload) {
                Ok(()) => report.outer_out.add(ipv4::HEADER_LEN + payload.len()),
                Err(e) => report.drop(format!("send: {e}"), payload.len()),
            },
            Action::Udp { payload, .. } => {
                report.drop("an outer UDP datagram: not sent by the user-space daemon".into(), payload.len())
            }
            Action::TapFrame(frame) => {
                report.drop("a TAP frame: not carried by the user-space daemon".into(), frame.len())
            }
            Action::Drop { reason, packet, .. } => report.drop(reason, packet.map_or(0, |p| p.len())),
        }
    }
}

#[path = "tunnel_sockets.rs"]
pub(crate) mod sockets;
use sockets::*;

#[cfg(test)]
#[path = "tunnel_tests.rs"]
mod test;
