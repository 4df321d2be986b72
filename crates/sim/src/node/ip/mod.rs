//! The IPv4 stack of a node: ARP, routing, forwarding, fragmentation and reassembly,
//! ICMP, and delivery to local sockets. Sans-IO: it takes `now` and frames, and returns
//! what to send, what to deliver and what it dropped (with a reason a person can read).
//!
//! Standards: RFC 826 (ARP, with the merge rule of its "packet reception" algorithm),
//! RFC 1122 §2.3.2 (ARP cache timeout, queueing while resolving), RFC 791 (IPv4,
//! fragmentation §3.2), RFC 792 (ICMP), RFC 1191 §4 (fragmentation needed carries the
//! next-hop MTU), RFC 1812 §5.3.1 (TTL decrement on forwarding), §5.2.7.1 (ICMP source).
//!
//! Tunnels the stack drives (IPsec ESP or AH in tunnel mode, `tunnel::ipsec`, met through
//! `tunnel::TunnelEnd` like every tunnel end) are virtual interfaces: routes
//! to the destinations a tunnel protects lead to its interface; a packet routed there is
//! fragmented to the tunnel MTU if it must be, encapsulated, and the outer packet routed
//! again by the routes of real interfaces only (fragmented after encapsulation if it
//! exceeds the egress MTU). An inbound datagram a tunnel claims is reassembled, opened,
//! and its inner packet taken as received on the tunnel interface.
//!
//! Transport-mode SAs (the `TunnelEnd` transport method set) act on the node's own datagrams: the most specific
//! one that selects a whole outbound datagram transforms it before it is routed and
//! fragmented; an inbound datagram one claims is reassembled, restored and delivered.
//!
//! Path MTU (see `pmtu`): a packet with DF set that does not fit the next hop is dropped
//! with an ICMP "fragmentation needed" carrying the next-hop MTU (RFC 1191 §4) to its
//! source, or to the node itself when it made the packet (as Linux's `ip_fragment`
//! does). A received "fragmentation needed" lowers the node's estimate of the path MTU
//! to the quoted destination (RFC 1191 §3, §5 for old routers), which then bounds what
//! the node sends there until it ages out (§6.3); the message also goes up to the
//! sockets (the world hands it to TCP). A tunnel's effective MTU follows the path MTU
//! to its far end less its overhead (RFC 4301 §8.2.1); where the inner packet is cut,
//! before or after encapsulation, is [`TunnelFragment`] (RFC 4459 §3), decided in
//! [`IpStack::fit_tunnel`] for every tunnel the stack drives.

mod input;
mod output;

use std::collections::{BTreeMap, VecDeque};

use std::net::Ipv4Addr;

use wire::ethernet::{self, Address as Mac, EtherType};

use wire::icmpv4::{self, DstUnreachable, TimeExceeded};

use wire::{arp, ipv4, reassembly, udp, IpProtocol};

use crate::config::{FragNeeded, PmtuConfig, RouteConfig, TunnelFragment};

use crate::node::pmtu::{self, IcmpRateLimit, PmtuCache};

use crate::tunnel::{Action, TunnelEnd, TunnelIo};

/// RFC 1122 §2.3.2.2: at least one packet SHOULD be kept while an address resolves;
/// Linux kept three (`unres_qlen`) for years.
pub const ARP_PENDING_LIMIT: usize = 3;

/// Linux `retrans_time` 1 s and `mcast_solicit` 3: three requests a second apart.
pub const ARP_RETRY_NS: u64 = 1_000_000_000;

pub const ARP_TRIES: u32 = 3;

/// RFC 1700 / Linux's `ip_default_ttl`.
pub const DEFAULT_TTL: u8 = 64;

/// An IP interface: a port, or a bridge's interface.
#[derive(Debug, Clone)]
pub struct Iface {
    pub name: String,
    pub mac: Mac,
    pub addr: Option<(Ipv4Addr, u8)>,
    pub mtu: usize,
    /// Resolve next hops with ARP. Off for an interface whose link layer resolves by
    /// itself (an L3F bridge): packets leave with a broadcast destination for it to fill.
    pub resolve: bool,
}

impl Iface {
    fn contains(&self, ip: Ipv4Addr) -> bool {
        self.addr.is_some_and(|(a, len)| same_subnet(a, ip, len))
    }

    fn is_broadcast_for(&self, ip: Ipv4Addr) -> bool {
        ip.is_broadcast() || self.addr.is_some_and(|(a, len)| len < 31 && ip == subnet_broadcast(a, len))
    }
}

fn mask(len: u8) -> u32 {
    if len == 0 {
        0
    } else {
        u32::MAX << (32 - u32::from(len))
    }
}

pub fn same_subnet(a: Ipv4Addr, b: Ipv4Addr, len: u8) -> bool {
    (u32::from(a) ^ u32::from(b)) & mask(len) == 0
}

pub fn subnet_broadcast(a: Ipv4Addr, len: u8) -> Ipv4Addr {
    Ipv4Addr::from(u32::from(a) | !mask(len))
}

/// Bytes reserved before an IPv4 packet inside the stack: room for the Ethernet header,
/// so that a forwarded packet is rewritten in place, never copied.
const HEADROOM: usize = ethernet::HEADER_LEN;

/// Where a transport header starts in a frame for [`IpStack::send_datagram_in`]: after
/// the headroom and an IPv4 header without options.
pub const TRANSPORT_OFFSET: usize = HEADROOM + ipv4::HEADER_LEN;

/// A frame buffer holding `packet` after [`HEADROOM`] bytes.
fn with_headroom(packet: &[u8]) -> Vec<u8> {
    let mut frame = Vec::with_capacity(HEADROOM + packet.len());
    frame.resize(HEADROOM, 0);
    frame.extend_from_slice(packet);
    frame
}

/// Something the stack wants done.
#[derive(Debug)]
pub enum Out {
    /// An Ethernet frame (no FCS) to send on an interface.
    Frame { iface: usize, frame: Vec<u8> },
    /// A datagram for a local socket or the ping application: the whole IPv4 datagram is
    /// `packet[at..]` (a received frame keeps its Ethernet header in front, so that its
    /// bytes are not moved).
    Local { iface: usize, packet: Vec<u8>, at: usize },
    /// A packet the stack dropped, and why.
    Drop { reason: String, packet: Option<Vec<u8>> },
}

/// A path MTU answer and what it depends on (see [`IpStack::path_mtu_memo`]); the
/// default holds nowhere.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PathMtuMemo {
    /// The path MTU.
    pub mtu: usize,
    epoch: u64,
    until: u64,
    iface: usize,
    iface_mtu: usize,
}

/// A tunnel and the interface it is.
struct TunnelIface {
    iface: usize,
    hook: Box<dyn TunnelEnd>,
}

/// Network address translation applied by the stack on one interface.
pub trait Translator {
    /// An IPv4 datagram leaving through the outside interface: rewrite its source.
    fn outbound(&mut self, now: u64, packet: &mut [u8]) -> Result<(), String>;
    /// An IPv4 datagram arriving on the outside interface: rewrite its destination, or
    /// `Err` when no mapping or forward covers it.
    fn inbound(&mut self, now: u64, packet: &mut [u8]) -> Result<(), String>;
}

#[derive(Debug, Clone, Copy)]
struct ArpEntry {
    mac: Mac,
    iface: usize,
    expires: u64,
}

#[derive(Debug)]
struct Pending {
    iface: usize,
    /// Frames (the packet after [`HEADROOM`]) waiting for the address.
    packets: VecDeque<Vec<u8>>,
    tries: u32,
    next_try: u64,
}

#[derive(Debug, Clone, Copy)]
struct Route {
    network: u32,
    prefix_len: u8,
    /// `mask(prefix_len)`, kept so that a lookup (two per packet sent) does not
    /// rebuild it; set only by [`Route::new`], and a route is never changed after.
    mask: u32,
    via: Option<Ipv4Addr>,
    iface: usize,
}

impl Route {
    fn new(network: Ipv4Addr, prefix_len: u8, via: Option<Ipv4Addr>, iface: usize) -> Route {
        let mask = mask(prefix_len);
        Route { network: u32::from(network) & mask, prefix_len, mask, via, iface }
    }
}

/// Counters a report shows.
#[derive(Debug, Clone, Copy, Default)]
pub struct IpCounters {
    pub forwarded: u64,
    /// Packets whose addresses the NAT rewrote (either way).
    pub translated: u64,
    pub delivered: u64,
    pub fragments_sent: u64,
    pub reassembled: u64,
    pub arp_requests: u64,
    /// IPsec packets (ESP or AH, tunnel or transport mode) built, and those opened or
    /// tried.
    pub esp_sealed: u64,
    pub esp_opened: u64,
    /// Bytes after the IPv4 header of those packets (ESP: header to ICV, what the cipher
    /// and HMAC went over; AH: the header and what it protects).
    pub esp_bytes: u64,
    /// ICMP "fragmentation needed" sent to other nodes (RFC 1191 §4).
    pub frag_needed_sent: u64,
    /// DF packets too big for the next hop dropped without a word (a black hole, or
    /// the rate limit).
    pub frag_needed_silent: u64,
    /// "Fragmentation needed" received (from routers, or from the node's own stack
    /// for a packet it could not send).
    pub frag_needed_received: u64,
    /// ICMP errors the rate limit held back (RFC 1812 §4.3.2.8).
    pub icmp_rate_limited: u64,
    /// ICMP Destination Unreachable messages dropped by the filter.
    pub icmp_filtered: u64,
}

/// The IPv4 stack of one node.
pub struct IpStack {
    pub ifaces: Vec<Iface>,
    arp: BTreeMap<Ipv4Addr, ArpEntry>,
    pending: BTreeMap<Ipv4Addr, Pending>,
    /// The pieces of one datagram being sent (see `send_routed`), empty between uses.
    pieces_scratch: Vec<Vec<u8>>,
    routes: Vec<Route>,
    pub forward: bool,
    reassembler: reassembly::Reassembler,
    ident: u16,
    arp_timeout: u64,
    /// NAT on an outside interface.
    nat: Option<(usize, Box<dyn Translator>)>,
    /// Tunnel interfaces.
    tunnels: Vec<TunnelIface>,
    /// Transport-mode SAs, most specific first.
    transports: Vec<Box<dyn TunnelEnd>>,
    /// The tunnel ends' actions for one packet: kept between packets so that the
    /// IPsec path allocates no list (empty between uses).
    tunnel_io: TunnelIo,
    /// What the node does about packets too big, and its ICMP rate limit.
    pmtu_config: PmtuConfig,
    /// Path MTUs learned from "fragmentation needed".
    pmtu: PmtuCache,
    /// Bumped whenever a path MTU may change other than by aging (see
    /// [`IpStack::path_mtu_memo`]).
    path_epoch: u64,
    icmp_limit: IcmpRateLimit,
    /// Tunnel interfaces the node carries itself (OpenVPN TUN): outer packets avoid them.
    outer_bypass: Vec<usize>,
    pub counters: IpCounters,
}

impl std::fmt::Debug for IpStack {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IpStack").field("ifaces", &self.ifaces).field("forward", &self.forward).finish()
    }
}

impl IpStack {
    /// A stack over `ifaces` with `routes`; a route whose next hop is on no connected
    /// subnet is an error naming it.
    pub fn new(
        ifaces: Vec<Iface>,
        routes: &[RouteConfig],
        forward: bool,
        arp_timeout: u64,
        reassembly_timeout: u64,
    ) -> Result<IpStack, String> {
        // RFC 4632 §3.1: an IPv4 prefix is 0 to 32 bits. Checked before any mask is
        // computed from one (a longer one would shift past the word).
        for iface in &ifaces {
            if let Some((addr, len)) = iface.addr.filter(|&(_, len)| len > 32) {
                return Err(format!("interface {}: prefix length /{len} of {addr} is above 32", iface.name));
            }
        }
        if let Some(route) = routes.iter().find(|r| r.prefix_len > 32) {
            return Err(format!("route to {}/{}: a prefix length is 0 to 32", route.destination, route.prefix_len));
        }
        let mut table = Vec::new();
        for (i, iface) in ifaces.iter().enumerate() {
            if let Some((addr, len)) = iface.addr {
                table.push(Route::new(addr, len, None, i));
            }
        }
        for route in routes {
            let iface = ifaces.iter().position(|i| i.contains(route.via)).ok_or_else(|| {
                format!(
                    "route to {}/{} via {}: the next hop is on no connected subnet",
                    route.destination, route.prefix_len, route.via
                )
            })?;
            table.push(Route::new(route.destination, route.prefix_len, Some(route.via), iface));
        }
        // Longest prefix first; among equals, connected before static (stable sort).
        table.sort_by_key(|r| std::cmp::Reverse(r.prefix_len));
        let config = reassembly::Config { timeout: reassembly_timeout, ..reassembly::Config::default() };
        Ok(IpStack {
            ifaces,
            arp: BTreeMap::new(),
            pending: BTreeMap::new(),
            pieces_scratch: Vec::new(),
            routes: table,
            forward,
            reassembler: reassembly::Reassembler::new(config),
            ident: 1,
            arp_timeout,
            nat: None,
            tunnels: Vec::new(),
            transports: Vec::new(),
            tunnel_io: TunnelIo::default(),
            pmtu_config: PmtuConfig::default(),
            pmtu: PmtuCache::new(PmtuConfig::default().expires_ns, usize::from(PmtuConfig::default().min_pmtu)),
            path_epoch: 0,
            icmp_limit: IcmpRateLimit::new(PmtuConfig::default().icmp_ratelimit_ns, PmtuConfig::default().icmp_burst),
            outer_bypass: Vec::new(),
            counters: IpCounters::default(),
        })
    }

    /// Sets what the node does about packets too big and its ICMP rate limit (the
    /// defaults are Linux's); forgets what the PMTU cache held.
    pub fn set_pmtu(&mut self, config: PmtuConfig) {
        self.path_epoch += 1;
        self.pmtu = PmtuCache::new(config.expires_ns, usize::from(config.min_pmtu));
        self.icmp_limit = IcmpRateLimit::new(config.icmp_ratelimit_ns, config.icmp_burst);
        self.pmtu_config = config;
    }

    /// The path MTU to `dst` the node knows at `now`: its first hop's MTU, lowered by
    /// what "fragmentation needed" taught it (RFC 1191 §6.2). For a destination behind
    /// a tunnel, the tunnel's effective MTU.
    #[inline]
    pub fn path_mtu(&self, now: u64, dst: Ipv4Addr) -> Option<usize> {
        self.path_mtu_memo(now, dst).map(|m| m.mtu)
    }

    /// [`path_mtu`](Self::path_mtu) with what its answer depends on, so that a caller
    /// asking for the same `dst` again (a TCP socket, before every send) can keep it
    /// while [`path_mtu_holds`](Self::path_mtu_holds). The answer is the route's
    /// interface MTU lowered by the learned estimate to `dst`; it changes only when
    /// (a) the routes, interfaces or PMTU table change — `add_tunnel`,
    /// `add_point_to_point`, `set_pmtu` and a learned "fragmentation needed" bump
    /// `path_epoch` —, (b) the learned estimate ages out (`until`: its expiry, RFC 1191
    /// §6.3), or (c) the interface's `mtu` field is written (compared on each check).
    /// A tunnel's MTU follows its hook and the outer path: never kept (`until` 0).
    pub fn path_mtu_memo(&self, now: u64, dst: Ipv4Addr) -> Option<PathMtuMemo> {
        let (iface, _) = self.lookup(dst, false)?;
        let (first_hop, mut until) = match self.tunnel_of(iface) {
            Some(t) => (self.tunnel_mtu(now, t), 0),
            None => (self.ifaces[iface].mtu, u64::MAX),
        };
        let mtu = match self.pmtu.get_until(now, dst) {
            Some((learned, expires)) => {
                until = until.min(expires);
                learned.min(first_hop)
            }
            None => first_hop,
        };
        Some(PathMtuMemo { mtu, epoch: self.path_epoch, until, iface, iface_mtu: self.ifaces[iface].mtu })
    }

    /// Whether `memo` (made by [`path_mtu_memo`](Self::path_mtu_memo) of this stack)
    /// is still what `path_mtu` answers at `now` for its destination.
    #[inline]
    pub fn path_mtu_holds(&self, memo: &PathMtuMemo, now: u64) -> bool {
        // (`until` is 0 in a default memo: nothing is indexed then.)
        now < memo.until && memo.epoch == self.path_epoch && self.ifaces[memo.iface].mtu == memo.iface_mtu
    }

    /// The path MTU over real interfaces only (what a tunnel's outer packets meet).
    fn outer_path_mtu(&self, now: u64, dst: Ipv4Addr) -> Option<usize> {
        let (iface, _) = self.lookup(dst, true)?;
        let first_hop = self.ifaces[iface].mtu;
        Some(self.pmtu.get(now, dst).map_or(first_hop, |m| m.min(first_hop)))
    }

    /// The effective MTU of tunnel `t`: its interface MTU, and at most the largest inner
    /// packet whose outer packet fits the path MTU to the far end (RFC 4301 §8.2.1;
    /// Linux's xfrm route MTU).
    fn tunnel_mtu(&self, now: u64, t: usize) -> usize {
        let tunnel = &self.tunnels[t];
        let configured = self.ifaces[tunnel.iface].mtu;
        match tunnel.hook.remote().and_then(|r| self.outer_path_mtu(now, r)) {
            Some(outer) => configured.min(tunnel.hook.inner_mtu(outer)).max(pmtu::MIN_IPV4_MTU),
            None => configured,
        }
    }

    /// Translates addresses on interface `outside` (ICS, a SOHO router's WAN).
    pub fn set_nat(&mut self, outside: usize, translator: Box<dyn Translator>) {
        self.nat = Some((outside, translator));
    }

    /// Adds a tunnel as interface `iface` (its `addr` is ignored: a tunnel interface has
    /// none) with a route to each of `protects`. Returns the interface index.
    pub fn add_tunnel(&mut self, mut iface: Iface, protects: &[(Ipv4Addr, u8)], hook: Box<dyn TunnelEnd>) -> usize {
        self.path_epoch += 1;
        iface.addr = None;
        iface.resolve = false;
        let index = self.ifaces.len();
        self.ifaces.push(iface);
        for &(network, prefix_len) in protects {
            self.routes.push(Route::new(network, prefix_len, None, index));
        }
        // Longest prefix first; among equals the earlier entry (connected, static, then
        // the tunnels in order) wins.
        self.routes.sort_by_key(|r| std::cmp::Reverse(r.prefix_len));
        self.tunnels.push(TunnelIface { iface: index, hook });
        index
    }

    /// Adds a point-to-point interface whose frames the node carries itself (a PPP
    /// link, an OpenVPN TUN device): no ARP, a route through it to each of `routes`.
    /// Packets routed there are fragmented to its MTU like any interface's. Returns
    /// the interface index.
    /// A `tunnel` interface (an OpenVPN TUN device) is, like an IPsec tunnel, never
    /// the way out for an outer packet (see [`send_udp_outer`](Self::send_udp_outer)).
    pub fn add_point_to_point(
        &mut self,
        mut iface: Iface,
        routes: &[(Ipv4Addr, u8)],
        tunnel: bool,
    ) -> Result<usize, String> {
        // RFC 4632 §3.1: 0 to 32 bits (found by the config fuzz target: /98 here panicked).
        if let Some(&(network, len)) = routes.iter().find(|r| r.1 > 32) {
            return Err(format!("route to {network}/{len} on {}: a prefix length is 0 to 32", iface.name));
        }
        self.path_epoch += 1;
        iface.resolve = false;
        let index = self.ifaces.len();
        if tunnel {
            self.outer_bypass.push(index);
        }
        self.ifaces.push(iface);
        for &(network, prefix_len) in routes {
            self.routes.push(Route::new(network, prefix_len, None, index));
        }
        // Longest prefix first; among equals the earlier entry wins (stable sort).
        self.routes.sort_by_key(|r| std::cmp::Reverse(r.prefix_len));
        Ok(index)
    }

    /// Adds a transport-mode SA for the node's own traffic.
    pub fn add_transport(&mut self, hook: Box<dyn TunnelEnd>) {
        self.transports.push(hook);
        // Stable: among equally specific SAs the first added wins.
        self.transports.sort_by_key(|t| std::cmp::Reverse(t.specificity()));
    }

    /// What each IPsec SA pair of the node carried: tunnels, then transport-mode SAs.
    /// The flow packet ESP packet `seq` of outbound SPI `spi` carried, if one of this
    /// stack's SAs sealed it (conservation).
    pub fn sealed_packet(&self, spi: u32, seq: u32) -> Option<crate::conservation::Found> {
        self.tunnels
            .iter()
            .find_map(|t| t.hook.sealed(spi, seq))
            .or_else(|| self.transports.iter().find_map(|t| t.sealed(spi, seq)))
    }

    pub fn sa_reports(&self) -> Vec<crate::tunnel::SaReport> {
        let tunnels = self.tunnels.iter().filter_map(|t| t.hook.sa_report());
        tunnels.chain(self.transports.iter().filter_map(|t| t.sa_report())).collect()
    }

    fn tunnel_of(&self, iface: usize) -> Option<usize> {
        self.tunnels.iter().position(|t| t.iface == iface)
    }

    fn is_own(&self, ip: Ipv4Addr) -> bool {
        self.ifaces.iter().any(|i| i.addr.is_some_and(|(a, _)| a == ip))
    }

    /// The route for `dst`: (interface, next hop).
    pub fn route(&self, dst: Ipv4Addr) -> Option<(usize, Ipv4Addr)> {
        self.lookup(dst, false)
    }

    /// The route for `dst`, over real interfaces only when `bypass_tunnels` (the outer
    /// packet of a tunnel never goes back into one: it is already transformed).
    fn lookup(&self, dst: Ipv4Addr, bypass_tunnels: bool) -> Option<(usize, Ipv4Addr)> {
        let d = u32::from(dst);
        self.routes
            .iter()
            .filter(|r| !bypass_tunnels || (self.tunnel_of(r.iface).is_none() && !self.outer_bypass.contains(&r.iface)))
            .find(|r| d & r.mask == r.network)
            .map(|r| (r.iface, r.via.unwrap_or(dst)))
    }

    /// The address this node sends from on interface `iface`.
    pub fn source_address(&self, iface: usize) -> Option<Ipv4Addr> {
        self.source_for(iface)
    }

    /// The source address for a packet leaving on `iface`.
    fn source_for(&self, iface: usize) -> Option<Ipv4Addr> {
        if let Some(t) = self.tunnel_of(iface) {
            return self.tunnels[t].hook.local();
        }
        self.ifaces[iface].addr.map(|(a, _)| a).or_else(|| self.ifaces.iter().find_map(|i| i.addr.map(|(a, _)| a)))
    }

    /// The next IP identification (RFC 6864: unique per source, destination, protocol
    /// while fragments may be alive; one counter per node is enough).
    pub fn next_ident(&mut self) -> u16 {
        let id = self.ident;
        self.ident = self.ident.wrapping_add(1);
        id
    }

    /// Every packet the stack holds at the end of a run (for the census of
    /// `conservation`): frames waiting for ARP, and partial datagrams being reassembled
    /// (fragment zero's header followed by the data so far).
    pub fn held_packets(&self, mut each: impl FnMut(&[u8])) {
        for pending in self.pending.values() {
            for packet in &pending.packets {
                each(packet);
            }
        }
        let mut joined = Vec::new();
        for (header, data) in self.reassembler.partial_first_fragments() {
            joined.clear();
            joined.extend_from_slice(header);
            joined.extend_from_slice(data);
            each(&joined);
        }
    }

    /// ARP cache entries still valid at `now`: (ip, mac, iface).
    pub fn arp_table(&self, now: u64) -> Vec<(Ipv4Addr, Mac, usize)> {
        self.arp.iter().filter(|(_, e)| e.expires > now).map(|(ip, e)| (*ip, e.mac, e.iface)).collect()
    }

    /// When the stack next needs waking: ARP retries and reassembly timeouts.
    #[inline(always)]
    pub fn poll_at(&self) -> Option<u64> {
        if self.pending.is_empty() {
            return self.reassembler.poll_at(); // asked after every packet: no ARP wait, usually
        }
        self.arp_poll_at()
    }

    /// [`poll_at`](Self::poll_at) while packets wait for ARP.
    #[inline(never)]
    fn arp_poll_at(&self) -> Option<u64> {
        let arp = self.pending.values().map(|p| p.next_try).min();
        match (arp, self.reassembler.poll_at()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Handles timers due at `now`.
    pub fn on_timer(&mut self, now: u64, out: &mut Vec<Out>) {
        let due: Vec<Ipv4Addr> = self.pending.iter().filter(|(_, p)| p.next_try <= now).map(|(ip, _)| *ip).collect();
        for ip in due {
            let Some(pending) = self.pending.get_mut(&ip) else { continue };
            if pending.tries >= ARP_TRIES {
                let pending = self.pending.remove(&ip).expect("present");
                for frame in pending.packets {
                    out.push(Out::Drop {
                        reason: format!("no ARP reply from {ip} after {ARP_TRIES} requests (host unreachable)"),
                        packet: Some(frame[HEADROOM..].to_vec()),
                    });
                }
                continue;
            }
            pending.tries += 1;
            pending.next_try = now + ARP_RETRY_NS;
            let iface = pending.iface;
            self.arp_request(iface, ip, out);
        }
        for expired in self.reassembler.expire(now) {
            out.push(Out::Drop { reason: "IPv4 reassembly timed out (fragments lost)".into(), packet: expired.quote });
        }
    }
}

/// Whether `packet` (a whole IPv4 packet or its first fragment) is ICMP Destination
/// Unreachable (type 3).
fn is_dst_unreachable(packet: &[u8]) -> bool {
    let view = ipv4::Packet::new_unchecked(packet);
    view.next_header() == IpProtocol::Icmp
        && view.frag_offset() == 0
        && view.payload().first() == Some(&u8::from(icmpv4::Message::DstUnreachable))
}

#[derive(Debug, Clone, Copy)]
enum ErrorKind {
    TimeExceeded,
    NetUnreachable,
    FragNeeded(u16),
}

fn arp_bytes(repr: &arp::Repr) -> Vec<u8> {
    let mut bytes = vec![0u8; repr.buffer_len()];
    repr.emit(&mut arp::Packet::new_unchecked(&mut bytes[..]));
    bytes
}

/// Writes an Ethernet II header into the first 14 bytes of `frame`.
fn write_ethernet_header(frame: &mut [u8], src: Mac, dst: Mac, ethertype: EtherType) {
    ethernet::Repr { src_addr: src, dst_addr: dst, ethertype }
        .emit(&mut ethernet::Frame::new_unchecked(&mut frame[..]));
}

/// An Ethernet II frame without FCS or padding (the link pads and counts them).
pub fn ethernet_frame(src: Mac, dst: Mac, ethertype: EtherType, payload: &[u8]) -> Vec<u8> {
    let mut frame = Vec::with_capacity(ethernet::HEADER_LEN + payload.len());
    frame.resize(ethernet::HEADER_LEN, 0);
    ethernet::Repr { src_addr: src, dst_addr: dst, ethertype }
        .emit(&mut ethernet::Frame::new_unchecked(&mut frame[..]));
    frame.extend_from_slice(payload);
    frame
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn prefix_lengths_above_32_are_refused_not_shifted() {
        // Found by crates/wire/fuzz (config): a lowered seed 004 configuration with a
        // route's prefix_len 45 panicked (debug) computing its mask, or wrapped (release).
        // RFC 4632 §3.1: 0 to 32 bits.
        let iface = |len| Iface {
            name: "eth0".into(),
            mac: Mac([2, 0, 0, 0, 0, 1]),
            addr: Some((Ipv4Addr::new(198, 51, 100, 129), len)),
            mtu: 1500,
            resolve: true,
        };
        let route = |prefix_len| RouteConfig {
            destination: Ipv4Addr::new(198, 51, 100, 192),
            prefix_len,
            via: Ipv4Addr::new(198, 51, 100, 130),
        };
        assert!(IpStack::new(vec![iface(30)], &[route(26)], true, 0, 0).is_ok());
        assert!(IpStack::new(vec![iface(32)], &[], true, 0, 0).is_ok());
        let e = IpStack::new(vec![iface(30)], &[route(45)], true, 0, 0).err().unwrap();
        assert!(e.contains("/45"), "{e}");
        let e = IpStack::new(vec![iface(33)], &[], true, 0, 0).err().unwrap();
        assert!(e.contains("/33"), "{e}");
        // The same for a tunnel's or PPP interface's routes (found next: /98 there).
        let mut stack = IpStack::new(vec![iface(30)], &[], true, 0, 0).unwrap();
        let tun = Iface { name: "tun0".into(), mac: Mac([0; 6]), addr: None, mtu: 1400, resolve: false };
        let e = stack.add_point_to_point(tun.clone(), &[(Ipv4Addr::new(10, 0, 0, 0), 98)], true).err().unwrap();
        assert!(e.contains("/98"), "{e}");
        assert!(stack.add_point_to_point(tun, &[(Ipv4Addr::new(10, 0, 0, 0), 8)], true).is_ok());
    }

    fn host(addr: [u8; 4], mac: u8, gateway: Option<[u8; 4]>) -> IpStack {
        let iface = Iface {
            name: "eth0".into(),
            mac: Mac([2, 0, 0, 0, 0, mac]),
            addr: Some((Ipv4Addr::from(addr), 24)),
            mtu: 1500,
            resolve: true,
        };
        let routes: Vec<RouteConfig> = gateway
            .map(|g| RouteConfig { destination: Ipv4Addr::UNSPECIFIED, prefix_len: 0, via: Ipv4Addr::from(g) })
            .into_iter()
            .collect();
        IpStack::new(vec![iface], &routes, false, 60_000_000_000, 30_000_000_000).unwrap()
    }

    fn frames(out: &[Out]) -> Vec<Vec<u8>> {
        out.iter().filter_map(|o| if let Out::Frame { frame, .. } = o { Some(frame.clone()) } else { None }).collect()
    }

    #[test]
    fn ping_resolves_arp_then_is_answered() {
        let mut a = host([10, 0, 0, 1], 1, None);
        let mut b = host([10, 0, 0, 2], 2, None);
        let mut out = Vec::new();
        a.send_ping(0, Ipv4Addr::new(10, 0, 0, 2), 1, 1, b"hi", &mut out);
        let request = frames(&out);
        assert_eq!(request.len(), 1, "an ARP request, the ping waits");
        let mut out_b = Vec::new();
        b.input(10, 0, request[0].clone(), &mut out_b);
        let reply = frames(&out_b);
        out.clear();
        a.input(20, 0, reply[0].clone(), &mut out);
        let ping = frames(&out);
        assert_eq!(ping.len(), 1, "the queued echo request goes out");
        out_b.clear();
        b.input(30, 0, ping[0].clone(), &mut out_b);
        let echo_reply = frames(&out_b);
        assert_eq!(echo_reply.len(), 1, "b knows a from the request (RFC 826) and answers");
        out.clear();
        a.input(40, 0, echo_reply[0].clone(), &mut out);
        assert!(matches!(out.as_slice(), [Out::Local { .. }]));
        assert_eq!(a.arp_table(40).len(), 1);
        assert_eq!(b.arp_table(40).len(), 1);
    }

    #[test]
    fn routes_longest_prefix_and_refuses_unreachable_next_hop() {
        let stack = host([10, 0, 0, 1], 1, Some([10, 0, 0, 254]));
        assert_eq!(stack.route(Ipv4Addr::new(10, 0, 0, 9)), Some((0, Ipv4Addr::new(10, 0, 0, 9))));
        assert_eq!(stack.route(Ipv4Addr::new(8, 8, 8, 8)), Some((0, Ipv4Addr::new(10, 0, 0, 254))));
        let iface = Iface {
            name: "eth0".into(),
            mac: Mac([2, 0, 0, 0, 0, 1]),
            addr: Some((Ipv4Addr::new(10, 0, 0, 1), 24)),
            mtu: 1500,
            resolve: true,
        };
        let bad = [RouteConfig { destination: Ipv4Addr::UNSPECIFIED, prefix_len: 0, via: Ipv4Addr::new(10, 9, 9, 9) }];
        assert!(IpStack::new(vec![iface], &bad, false, 1, 1).unwrap_err().contains("no connected subnet"));
    }

    #[test]
    fn arp_gives_up_after_three_tries() {
        let mut a = host([10, 0, 0, 1], 1, None);
        let mut out = Vec::new();
        a.send_udp(0, 1000, Ipv4Addr::new(10, 0, 0, 7), 9, b"x", &mut out);
        for t in 1..=3u64 {
            let at = a.poll_at().unwrap();
            assert_eq!(at, t * ARP_RETRY_NS);
            a.on_timer(at, &mut out);
        }
        assert_eq!(a.counters.arp_requests, 3);
        assert!(out.iter().any(|o| matches!(o, Out::Drop { reason, .. } if reason.contains("no ARP reply"))));
    }

    /// A memo of `path_mtu` holds exactly while the answer would be the same: a learned
    /// estimate, an interface added or an MTU written ends it, and it ages out with the
    /// estimate (RFC 1191 §6.3), never before or after.
    #[test]
    fn a_path_mtu_memo_holds_until_the_answer_changes() {
        let mut a = host([10, 0, 0, 1], 1, Some([10, 0, 0, 254]));
        let dst = Ipv4Addr::new(8, 8, 8, 8);
        assert!(!a.path_mtu_holds(&PathMtuMemo::default(), 0), "a default memo holds nowhere");
        let first = a.path_mtu_memo(0, dst).unwrap();
        assert_eq!(first.mtu, 1500);
        assert!(a.path_mtu_holds(&first, 0) && a.path_mtu_holds(&first, u64::MAX - 1), "nothing learned: no expiry");
        // "Fragmentation needed" for our datagram to `dst`, next-hop MTU 1400.
        let mut quoted = Vec::new();
        ipv4::Repr::new(Ipv4Addr::new(10, 0, 0, 1), dst, IpProtocol::Tcp, 1480, DEFAULT_TTL)
            .encapsulate(&[0u8; 1480], &mut quoted);
        let learned_at = 1_000;
        a.frag_needed_received(learned_at, 1400, &quoted[..28]);
        assert!(!a.path_mtu_holds(&first, learned_at), "a learned estimate ends the memo");
        let lowered = a.path_mtu_memo(learned_at, dst).unwrap();
        assert_eq!(lowered.mtu, 1400);
        // A message that teaches nothing new (not lower) changes nothing.
        a.frag_needed_received(learned_at + 1, 1450, &quoted[..28]);
        assert!(a.path_mtu_holds(&lowered, learned_at + 1));
        // Aging: the estimate is gone at its expiry, when the first hop's MTU is back.
        let expiry = learned_at + PmtuConfig::default().expires_ns;
        assert_eq!(a.path_mtu(expiry - 1, dst), Some(1400));
        assert!(a.path_mtu_holds(&lowered, expiry - 1));
        assert_eq!(a.path_mtu(expiry, dst), Some(1500));
        assert!(!a.path_mtu_holds(&lowered, expiry), "the memo ages out with the estimate");
        let aged = a.path_mtu_memo(expiry, dst).unwrap();
        assert_eq!(aged.mtu, 1500);
        assert!(a.path_mtu_holds(&aged, u64::MAX - 1), "an aged-out estimate never comes back by itself");
        // An interface MTU written, or an interface and routes added.
        a.ifaces[0].mtu = 1492;
        assert!(!a.path_mtu_holds(&aged, expiry));
        assert_eq!(a.path_mtu_memo(expiry, dst).unwrap().mtu, 1492);
        let before = a.path_mtu_memo(expiry, dst).unwrap();
        let ppp = Iface { name: "ppp0".into(), mac: Mac([0; 6]), addr: None, mtu: 1400, resolve: false };
        a.add_point_to_point(ppp, &[(Ipv4Addr::new(8, 8, 8, 0), 24)], false).unwrap();
        assert!(!a.path_mtu_holds(&before, expiry), "a new route may take the destination");
        assert_eq!(a.path_mtu(expiry, dst), Some(1400));
    }

    #[test]
    fn large_datagrams_are_fragmented_to_the_mtu() {
        let mut a = host([10, 0, 0, 1], 1, None);
        a.arp
            .insert(Ipv4Addr::new(10, 0, 0, 2), ArpEntry { mac: Mac([2, 0, 0, 0, 0, 2]), iface: 0, expires: u64::MAX });
        let mut out = Vec::new();
        a.send_udp(0, 1000, Ipv4Addr::new(10, 0, 0, 2), 9, &[0u8; 3000], &mut out);
        let sizes: Vec<usize> = frames(&out).iter().map(|f| f.len() - 14).collect();
        assert_eq!(sizes, vec![1500, 1500, 3008 + 20 - 2 * 1480]);
    }
}
