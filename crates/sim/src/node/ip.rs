//! The IPv4 stack of a node: ARP, routing, forwarding, fragmentation and reassembly,
//! ICMP, and delivery to local sockets. Sans-IO: it takes `now` and frames, and returns
//! what to send, what to deliver and what it dropped (with a reason a person can read).
//!
//! Standards: RFC 826 (ARP, with the merge rule of its "packet reception" algorithm),
//! RFC 1122 §2.3.2 (ARP cache timeout, queueing while resolving), RFC 791 (IPv4,
//! fragmentation §3.2), RFC 792 (ICMP), RFC 1191 §4 (fragmentation needed carries the
//! next-hop MTU), RFC 1812 §5.3.1 (TTL decrement on forwarding), §5.2.7.1 (ICMP source).
//!
//! Tunnels (IPsec ESP or AH in tunnel mode, see `ipsec`) are virtual interfaces: routes
//! to the destinations a tunnel protects lead to its interface; a packet routed there is
//! fragmented to the tunnel MTU if it must be, encapsulated, and the outer packet routed
//! again by the routes of real interfaces only (fragmented after encapsulation if it
//! exceeds the egress MTU). An inbound datagram a tunnel claims is reassembled, opened,
//! and its inner packet taken as received on the tunnel interface.
//!
//! Transport-mode SAs (`Transport`) act on the node's own datagrams: the most specific
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
//! [`IpStack::fit_tunnel`] for every kind of tunnel.

use std::collections::{BTreeMap, VecDeque};
use std::net::Ipv4Addr;

use wire::ethernet::{self, Address as Mac, EtherType};
use wire::icmpv4::{self, DstUnreachable, TimeExceeded};
use wire::{arp, ipv4, reassembly, udp, IpProtocol};

use crate::config::{FragNeeded, PmtuConfig, RouteConfig, TunnelFragment};
use crate::node::pmtu::{self, IcmpRateLimit, PmtuCache};
use crate::tunnel::{Transport, Tunnel};

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
    hook: Box<dyn Tunnel>,
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
    transports: Vec<Box<dyn Transport>>,
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
    pub fn add_tunnel(&mut self, mut iface: Iface, protects: &[(Ipv4Addr, u8)], hook: Box<dyn Tunnel>) -> usize {
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
    pub fn add_transport(&mut self, hook: Box<dyn Transport>) {
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
            return Some(self.tunnels[t].hook.local());
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

    fn arp_request(&mut self, iface: usize, target: Ipv4Addr, out: &mut Vec<Out>) {
        let Some(source) = self.source_for(iface) else { return };
        let mac = self.ifaces[iface].mac;
        let repr = arp::Repr::request(mac, source, target);
        self.counters.arp_requests += 1;
        out.push(Out::Frame { iface, frame: ethernet_frame(mac, Mac::BROADCAST, EtherType::Arp, &arp_bytes(&repr)) });
    }

    /// A frame arriving on interface `iface` addressed to it (or broadcast). The frame's
    /// buffer is reused for whatever the packet becomes (forwarded, answered).
    #[inline]
    pub fn input(&mut self, now: u64, iface: usize, frame: Vec<u8>, out: &mut Vec<Out>) {
        if let Some((packet, at)) = self.input_for_self(now, iface, frame, out) {
            out.push(Out::Local { iface, packet, at });
        }
    }

    /// As [`input`](Self::input), except that a datagram for the node itself received
    /// on `iface`, which `input` hands on as its last output (`Out::Local { iface, .. }`,
    /// nothing is pushed after it), is returned instead: (buffer, offset of the datagram
    /// in it). The node's per-packet path takes it without the round trip through `out`.
    #[inline]
    pub fn input_for_self(
        &mut self,
        now: u64,
        iface: usize,
        frame: Vec<u8>,
        out: &mut Vec<Out>,
    ) -> Option<(Vec<u8>, usize)> {
        let ethertype = match ethernet::Frame::new_checked(&frame[..]) {
            Ok(f) => f.ethertype(),
            Err(_) => {
                out.push(Out::Drop { reason: "malformed Ethernet frame".into(), packet: None });
                return None;
            }
        };
        match ethertype {
            EtherType::Arp => {
                self.input_arp(now, iface, &frame[HEADROOM..], out);
                None
            }
            EtherType::Ipv4 => self.input_ipv4(now, iface, frame, out),
            other => {
                out.push(Out::Drop {
                    reason: format!("no protocol for EtherType {:#06x}", u16::from(other)),
                    packet: None,
                });
                None
            }
        }
    }

    fn input_arp(&mut self, now: u64, iface: usize, payload: &[u8], out: &mut Vec<Out>) {
        let Ok(packet) = arp::Packet::new_checked(payload) else { return };
        let Ok(repr) = arp::Repr::parse(&packet) else { return };
        let arp::Repr::EthernetIpv4 {
            operation, source_hardware_addr, source_protocol_addr, target_protocol_addr, ..
        } = repr;
        // RFC 826 "Packet Reception": update an existing entry; add one only when the
        // request is for us.
        let for_us = self.ifaces[iface].addr.is_some_and(|(a, _)| a == target_protocol_addr);
        if (self.arp.contains_key(&source_protocol_addr) || for_us) && !source_protocol_addr.is_unspecified() {
            self.arp.insert(
                source_protocol_addr,
                ArpEntry { mac: source_hardware_addr, iface, expires: now + self.arp_timeout },
            );
            self.flush_pending(source_protocol_addr, out);
        }
        if for_us && operation == arp::Operation::Request {
            let mac = self.ifaces[iface].mac;
            let reply = arp::Repr::reply_to(&repr, mac);
            out.push(Out::Frame {
                iface,
                frame: ethernet_frame(mac, source_hardware_addr, EtherType::Arp, &arp_bytes(&reply)),
            });
        }
    }

    fn flush_pending(&mut self, ip: Ipv4Addr, out: &mut Vec<Out>) {
        let Some(pending) = self.pending.remove(&ip) else { return };
        let Some(entry) = self.arp.get(&ip).copied() else { return };
        let src_mac = self.ifaces[entry.iface].mac;
        for mut frame in pending.packets {
            write_ethernet_header(&mut frame, src_mac, entry.mac, EtherType::Ipv4);
            out.push(Out::Frame { iface: entry.iface, frame });
        }
    }

    /// The IPv4 datagram after the headroom of `frame`: what [`deliver_for_self`](Self::deliver_for_self)
    /// returns for the node itself, `None` when it was forwarded, dropped or consumed.
    fn input_ipv4(
        &mut self,
        now: u64,
        iface: usize,
        mut frame: Vec<u8>,
        out: &mut Vec<Out>,
    ) -> Option<(Vec<u8>, usize)> {
        let Ok(view) = ipv4::Packet::new_checked(&frame[HEADROOM..]) else {
            out.push(Out::Drop { reason: "malformed IPv4 packet".into(), packet: None });
            return None;
        };
        if !view.verify_checksum() {
            out.push(Out::Drop {
                reason: "IPv4 header checksum error".into(),
                packet: Some(frame[HEADROOM..].to_vec()),
            });
            return None;
        }
        let total = usize::from(view.total_len());
        frame.truncate(HEADROOM + total); // Ethernet padding
        if self.pmtu_config.filter_icmp_unreachable && is_dst_unreachable(&frame[HEADROOM..]) {
            self.counters.icmp_filtered += 1;
            out.push(Out::Drop {
                reason: "ICMP Destination Unreachable filtered (firewall)".into(),
                packet: Some(frame[HEADROOM..].to_vec()),
            });
            return None;
        }
        let mut dst = ipv4::Packet::new_unchecked(&frame[HEADROOM..]).dst_addr();
        if let Some((outside, nat)) = self.nat.as_mut() {
            if *outside == iface && !self.ifaces[iface].is_broadcast_for(dst) {
                match nat.inbound(now, &mut frame[HEADROOM..]) {
                    Ok(()) => {
                        self.counters.translated += 1;
                        dst = ipv4::Packet::new_unchecked(&frame[HEADROOM..]).dst_addr();
                    }
                    Err(reason) => {
                        let own = self.ifaces.iter().any(|i| i.addr.is_some_and(|(a, _)| a == dst));
                        if !own {
                            out.push(Out::Drop { reason, packet: Some(frame[HEADROOM..].to_vec()) });
                            return None;
                        }
                    }
                }
            }
        }
        if self.is_own(dst) || self.ifaces[iface].is_broadcast_for(dst) {
            return self.deliver_for_self(now, iface, frame, HEADROOM, out);
        }
        if self.forward {
            self.forward_packet(now, iface, frame, out);
        } else {
            out.push(Out::Drop {
                reason: format!("{dst} is not an address of this host (IP forwarding off)"),
                packet: Some(frame[HEADROOM..].to_vec()),
            });
        }
        None
    }

    /// A datagram for this node, `packet[at..]` (`at` > 0 when it still follows its
    /// frame's Ethernet header).
    fn deliver(&mut self, now: u64, iface: usize, packet: Vec<u8>, at: usize, out: &mut Vec<Out>) {
        if let Some((packet, at)) = self.deliver_for_self(now, iface, packet, at, out) {
            out.push(Out::Local { iface, packet, at });
        }
    }

    /// [`deliver`](Self::deliver), returning the datagram for the node's own sockets
    /// (buffer and offset) instead of pushing it as `Out::Local` (see
    /// [`input_for_self`](Self::input_for_self)); `None` when the stack consumed it.
    fn deliver_for_self(
        &mut self,
        now: u64,
        iface: usize,
        packet: Vec<u8>,
        at: usize,
        out: &mut Vec<Out>,
    ) -> Option<(Vec<u8>, usize)> {
        let (mut packet, at) = if ipv4::Packet::new_unchecked(&packet[at..]).is_fragment() {
            match self.reassembler.process(now, &packet[at..]) {
                Ok(Some(whole)) => {
                    self.counters.reassembled += 1;
                    (whole, 0)
                }
                Ok(None) => return None,
                Err(e) => {
                    out.push(Out::Drop {
                        reason: format!("IPv4 reassembly: {e:?}"),
                        packet: Some(packet[at..].to_vec()),
                    });
                    return None;
                }
            }
        } else {
            (packet, at)
        };
        if matches!(ipv4::Packet::new_unchecked(&packet[at..]).next_header(), IpProtocol::Esp | IpProtocol::Ah) {
            packet.drain(..at);
            if let Some(t) = self.transports.iter().position(|t| t.claims(&packet)) {
                self.input_transport(now, iface, t, packet, out);
            } else {
                self.input_esp(now, packet, out);
            }
            return None;
        }
        let view = ipv4::Packet::new_unchecked(&packet[at..]);
        if view.next_header() == IpProtocol::Icmp {
            if let Ok(icmp) = icmpv4::Packet::new_checked(view.payload()) {
                if let Ok(icmpv4::Repr::DstUnreachable { reason: DstUnreachable::FragRequired, next_hop_mtu, header }) =
                    icmpv4::Repr::parse(&icmp)
                {
                    self.frag_needed_received(now, next_hop_mtu, header);
                }
                if let Ok(icmpv4::Repr::EchoRequest { ident, seq_no, data }) = icmpv4::Repr::parse(&icmp) {
                    let reply = icmpv4::Repr::EchoReply { ident, seq_no, data };
                    let mut body = Vec::with_capacity(reply.buffer_len());
                    reply.encapsulate(&mut body);
                    let (src, dst) = (view.dst_addr(), view.src_addr());
                    let src = if src.is_broadcast() { self.source_for(iface).unwrap_or(src) } else { src };
                    self.counters.delivered += 1;
                    self.send_datagram(now, src, dst, IpProtocol::Icmp, &body, out);
                    return None;
                }
            }
        }
        self.counters.delivered += 1;
        Some((packet, at))
    }

    /// A whole transport-mode ESP/AH datagram SA `t` claims: checked, restored and
    /// delivered as received on `iface`.
    fn input_transport(&mut self, now: u64, iface: usize, t: usize, packet: Vec<u8>, out: &mut Vec<Out>) {
        let view = ipv4::Packet::new_unchecked(&packet[..]);
        self.counters.esp_opened += 1;
        self.counters.esp_bytes += (usize::from(view.total_len()) - view.header_len()) as u64;
        let mut restored = Vec::with_capacity(packet.len());
        match self.transports[t].unprotect(&packet, &mut restored) {
            Ok(()) => self.deliver(now, iface, restored, 0, out),
            Err(reason) => out.push(Out::Drop { reason, packet: Some(packet) }),
        }
    }

    /// A whole ESP or AH datagram for this node: the tunnel whose inbound SA it names
    /// opens it, and the inner packet is taken as received on the tunnel's interface.
    fn input_esp(&mut self, now: u64, packet: Vec<u8>, out: &mut Vec<Out>) {
        let Some(t) = self.tunnels.iter().position(|t| t.hook.claims(&packet)) else {
            let view = ipv4::Packet::new_unchecked(&packet[..]);
            let (what, spi) = if view.next_header() == IpProtocol::Ah {
                ("AH", wire::ah::Packet::new_checked(view.payload()).map(|p| p.spi()).unwrap_or(0))
            } else {
                ("ESP", wire::esp::Packet::new_checked(view.payload()).map(|p| p.spi()).unwrap_or(0))
            };
            // RFC 4303 §3.4.2, RFC 4302 §3.4.2: no SA for the SPI (and addresses): discard.
            out.push(Out::Drop {
                reason: format!("{what} from {} with SPI {spi:#x}: no security association", view.src_addr()),
                packet: Some(packet),
            });
            return;
        };
        let view = ipv4::Packet::new_unchecked(&packet[..]);
        self.counters.esp_opened += 1;
        self.counters.esp_bytes += (usize::from(view.total_len()) - view.header_len()) as u64;
        let mut inner = Vec::with_capacity(packet.len());
        inner.resize(HEADROOM, 0);
        let iface = self.tunnels[t].iface;
        match self.tunnels[t].hook.decapsulate(&packet, &mut inner) {
            Ok(()) => {
                if let Some((packet, at)) = self.input_ipv4(now, iface, inner, out) {
                    out.push(Out::Local { iface, packet, at });
                }
            }
            Err(reason) => out.push(Out::Drop { reason, packet: Some(packet) }),
        }
    }

    /// Seals the packet after the headroom of `frame` into tunnel `t` (fragmenting it
    /// before or after encapsulation, see [`fit_tunnel`](Self::fit_tunnel)) and routes
    /// the outer packets.
    fn send_into_tunnel(&mut self, now: u64, t: usize, frame: Vec<u8>, arrived_on: Option<usize>, out: &mut Vec<Out>) {
        let mut pieces = Vec::new();
        if !self.fit_tunnel(now, t, frame, arrived_on, &mut pieces, out) {
            return;
        }
        for piece in pieces {
            let ident = self.next_ident();
            let mut outer = vec![0u8; HEADROOM];
            match self.tunnels[t].hook.encapsulate(&piece[HEADROOM..], ident, &mut outer) {
                Ok(()) => {
                    self.counters.esp_sealed += 1;
                    self.counters.esp_bytes += (outer.len() - HEADROOM - ipv4::HEADER_LEN) as u64;
                    self.send_routed(now, outer, None, true, out);
                }
                Err(reason) => out.push(Out::Drop { reason, packet: Some(piece[HEADROOM..].to_vec()) }),
            }
        }
    }

    /// The pieces of a packet for tunnel `t` (RFC 4459 §3), for every kind of tunnel:
    /// with DF set it must fit the tunnel's effective MTU whole (else "fragmentation
    /// needed" with that MTU goes back, RFC 4301 §8.2.1); with DF clear it is fragmented
    /// to the effective MTU before encapsulation ([`TunnelFragment::Before`], so no
    /// outer packet needs fragmenting) or only to the interface MTU, leaving the outer
    /// packet to be fragmented after encapsulation ([`TunnelFragment::After`]).
    pub fn fit_tunnel(
        &mut self,
        now: u64,
        t: usize,
        frame: Vec<u8>,
        arrived_on: Option<usize>,
        pieces: &mut Vec<Vec<u8>>,
        out: &mut Vec<Out>,
    ) -> bool {
        let iface = self.tunnels[t].iface;
        let effective = self.tunnel_mtu(now, t);
        let limit = match self.tunnels[t].hook.fragment() {
            TunnelFragment::Before => effective,
            TunnelFragment::After => self.ifaces[iface].mtu,
        };
        self.fit(now, iface, limit, effective, frame, arrived_on, pieces, out)
    }

    /// The MTU the packet after the headroom of `frame` meets leaving on `iface`: the
    /// interface's, or for the node's own packets the path MTU it knows to their
    /// destination (then [`fit`](Self::fit) cuts it into pieces that fit, RFC 791 §3.2,
    /// or refuses it).
    fn egress_mtu(&mut self, now: u64, iface: usize, frame: &mut [u8], arrived_on: Option<usize>) -> usize {
        let mut mtu = self.ifaces[iface].mtu;
        if arrived_on.is_none() {
            let dst = ipv4::Packet::new_unchecked(&frame[HEADROOM..]).dst_addr();
            if let Some(learned) = self.pmtu.get(now, dst) {
                mtu = mtu.min(learned);
            }
            if self.pmtu.locked(now, dst) {
                // Linux: a path MTU below min_pmtu is locked and the node's packets
                // there go without DF (`ip_dont_fragment`), so routers fragment them.
                let mut view = ipv4::Packet::new_unchecked(&mut frame[HEADROOM..]);
                if view.dont_frag() {
                    view.set_dont_frag(false);
                    view.fill_checksum();
                }
            }
        }
        mtu
    }

    /// Cuts the packet after the headroom of `frame` to `mtu` (DF clear), or refuses it
    /// when it exceeds `df_mtu` with DF set: a forwarded packet's source gets an ICMP
    /// "fragmentation needed" with `df_mtu` (RFC 1191 §4, as the node's
    /// [`PmtuConfig::frag_needed`] says), the node's own packet is reported to its own
    /// stack and sockets the same way (Linux's `ip_fragment` sends itself the ICMP).
    #[allow(clippy::too_many_arguments)]
    fn fit(
        &mut self,
        now: u64,
        iface: usize,
        mtu: usize,
        df_mtu: usize,
        frame: Vec<u8>,
        arrived_on: Option<usize>,
        pieces: &mut Vec<Vec<u8>>,
        out: &mut Vec<Out>,
    ) -> bool {
        let len = frame.len() - HEADROOM;
        let dont_frag = ipv4::Packet::new_unchecked(&frame[HEADROOM..]).dont_frag();
        if len <= mtu && (!dont_frag || len <= df_mtu) {
            pieces.push(frame);
            return true;
        }
        if dont_frag {
            let reason =
                format!("{len}-byte packet with DF set exceeds the {df_mtu}-byte MTU of {}", self.ifaces[iface].name);
            match arrived_on {
                Some(arrived) => {
                    let reported = match self.pmtu_config.frag_needed {
                        FragNeeded::Mtu => Some(df_mtu as u16),
                        FragNeeded::ZeroMtu => Some(0),
                        FragNeeded::Silent => None,
                    };
                    let sent = reported.is_some_and(|m| {
                        self.icmp_error(now, arrived, &frame[HEADROOM..], ErrorKind::FragNeeded(m), out)
                    });
                    if sent {
                        self.counters.frag_needed_sent += 1;
                    } else {
                        self.counters.frag_needed_silent += 1;
                    }
                    let reason =
                        if reported.is_none() { format!("{reason}; no ICMP sent (PMTU black hole)") } else { reason };
                    out.push(Out::Drop { reason, packet: Some(frame[HEADROOM..].to_vec()) });
                }
                None => {
                    out.push(Out::Drop {
                        reason: format!("{reason} (EMSGSIZE at the sender)"),
                        packet: Some(frame[HEADROOM..].to_vec()),
                    });
                    self.notify_self(now, iface, &frame[HEADROOM..], df_mtu as u16, out);
                }
            }
            return false;
        }
        let before = pieces.len();
        if ipv4::fragment(&frame[HEADROOM..], mtu, |f| pieces.push(with_headroom(f))).is_err() {
            pieces.truncate(before);
            out.push(Out::Drop {
                reason: format!("cannot fragment to MTU {mtu}"),
                packet: Some(frame[HEADROOM..].to_vec()),
            });
            return false;
        }
        self.counters.fragments_sent += (pieces.len() - before) as u64;
        true
    }

    /// Forwards the IPv4 packet held after the headroom of `frame`, in place.
    fn forward_packet(&mut self, now: u64, iface: usize, mut frame: Vec<u8>, out: &mut Vec<Out>) {
        let view = ipv4::Packet::new_unchecked(&frame[HEADROOM..]);
        let (src, dst, ttl) = (view.src_addr(), view.dst_addr(), view.ttl());
        if ttl <= 1 {
            // RFC 1812 §5.3.1: a packet whose TTL would reach zero is dropped with an
            // ICMP Time Exceeded back to its source.
            self.icmp_error(now, iface, &frame[HEADROOM..], ErrorKind::TimeExceeded, out);
            out.push(Out::Drop {
                reason: format!("TTL expired forwarding {src} -> {dst}"),
                packet: Some(frame[HEADROOM..].to_vec()),
            });
            return;
        }
        let mut view = ipv4::Packet::new_unchecked(&mut frame[HEADROOM..]);
        // input_ipv4 verified the header checksum (and NAT keeps it valid), so the
        // incremental update gives the same octets as a recompute.
        view.decrement_ttl();
        let Some((egress, _)) = self.route(dst) else {
            self.icmp_error(now, iface, &frame[HEADROOM..], ErrorKind::NetUnreachable, out);
            out.push(Out::Drop { reason: format!("no route to {dst}"), packet: Some(frame[HEADROOM..].to_vec()) });
            return;
        };
        if let Some((outside, nat)) = self.nat.as_mut() {
            if *outside == egress {
                if let Err(reason) = nat.outbound(now, &mut frame[HEADROOM..]) {
                    out.push(Out::Drop { reason, packet: Some(frame[HEADROOM..].to_vec()) });
                    return;
                }
                self.counters.translated += 1;
            }
        }
        self.counters.forwarded += 1;
        self.send_frame(now, frame, Some(iface), out);
    }

    /// Sends a transport payload from this node: builds the IPv4 header (DF clear).
    pub fn send_datagram(
        &mut self,
        now: u64,
        src: Ipv4Addr,
        dst: Ipv4Addr,
        protocol: IpProtocol,
        payload: &[u8],
        out: &mut Vec<Out>,
    ) {
        self.send_datagram_df(now, src, dst, protocol, payload, false, out);
    }

    /// As [`send_datagram`](Self::send_datagram), with DF as `dont_frag` says (a TCP
    /// doing path MTU discovery sets it, RFC 1191 §3).
    #[allow(clippy::too_many_arguments)]
    pub fn send_datagram_df(
        &mut self,
        now: u64,
        src: Ipv4Addr,
        dst: Ipv4Addr,
        protocol: IpProtocol,
        payload: &[u8],
        dont_frag: bool,
        out: &mut Vec<Out>,
    ) {
        let mut repr = ipv4::Repr::new(src, dst, protocol, payload.len(), DEFAULT_TTL);
        repr.ident = self.next_ident();
        repr.dont_frag = dont_frag;
        let mut frame = Vec::with_capacity(HEADROOM + repr.buffer_len());
        frame.resize(HEADROOM, 0);
        repr.encapsulate(payload, &mut frame);
        self.send_own(now, frame, repr.header_len(), out);
    }

    /// As [`send_datagram_df`](Self::send_datagram_df), for a payload already written
    /// in `frame` after [`TRANSPORT_OFFSET`] octets (TCP's hot path: one buffer for the
    /// whole frame, the payload never copied). The IPv4 header is written in place.
    #[allow(clippy::too_many_arguments)]
    pub fn send_datagram_in(
        &mut self,
        now: u64,
        src: Ipv4Addr,
        dst: Ipv4Addr,
        protocol: IpProtocol,
        mut frame: Vec<u8>,
        dont_frag: bool,
        out: &mut Vec<Out>,
    ) {
        let mut repr = ipv4::Repr::new(src, dst, protocol, frame.len() - TRANSPORT_OFFSET, DEFAULT_TTL);
        repr.ident = self.next_ident();
        repr.dont_frag = dont_frag;
        debug_assert_eq!(repr.header_len(), ipv4::HEADER_LEN);
        repr.emit(&mut ipv4::Packet::new_unchecked(&mut frame[HEADROOM..]));
        self.send_own(now, frame, ipv4::HEADER_LEN, out);
    }

    /// Sends a tunnel's outer datagram (PPTP's TCP and GRE): routed never into a tunnel
    /// interface the node carries itself, as [`send_udp_outer`](Self::send_udp_outer).
    pub fn send_datagram_outer(
        &mut self,
        now: u64,
        src: Ipv4Addr,
        dst: Ipv4Addr,
        protocol: IpProtocol,
        payload: &[u8],
        out: &mut Vec<Out>,
    ) {
        let mut repr = ipv4::Repr::new(src, dst, protocol, payload.len(), DEFAULT_TTL);
        repr.ident = self.next_ident();
        let mut frame = Vec::with_capacity(HEADROOM + repr.buffer_len());
        frame.resize(HEADROOM, 0);
        repr.encapsulate(payload, &mut frame);
        self.send_routed(now, frame, None, true, out);
    }

    /// Sends a datagram this node made (after [`HEADROOM`], with an IPv4 header of
    /// `header_len` bytes). RFC 4301 §5.1: the SPD decides before the datagram is routed;
    /// a transport-mode SA transforms the whole datagram, which is fragmented afterwards
    /// if it must be.
    #[inline(always)]
    fn send_own(&mut self, now: u64, mut frame: Vec<u8>, header_len: usize, out: &mut Vec<Out>) {
        if let Some(t) = self.transports.iter().position(|t| t.selects(&frame[HEADROOM..])) {
            let mut protected = vec![0u8; HEADROOM];
            if let Err(reason) = self.transports[t].protect(&frame[HEADROOM..], &mut protected) {
                out.push(Out::Drop { reason, packet: Some(frame[HEADROOM..].to_vec()) });
                return;
            }
            self.counters.esp_sealed += 1;
            self.counters.esp_bytes += (protected.len() - HEADROOM - header_len) as u64;
            frame = protected;
            // The socket sized the datagram without the transform's overhead (Linux
            // counts it in the MSS; this model does not): a protected datagram that no
            // longer fits the path MTU is fragmented here (RFC 4303 §3.1.1: after the
            // transform), without DF, rather than refused with nothing to tell the socket.
            let dst = ipv4::Packet::new_unchecked(&frame[HEADROOM..]).dst_addr();
            if self.path_mtu(now, dst).is_some_and(|mtu| frame.len() - HEADROOM > mtu) {
                let mut view = ipv4::Packet::new_unchecked(&mut frame[HEADROOM..]);
                if view.dont_frag() {
                    view.set_dont_frag(false);
                    view.fill_checksum();
                }
            }
        }
        self.send_frame(now, frame, None, out);
    }

    /// Sends a UDP datagram of `payload_len` bytes that `fill` writes in place: one buffer
    /// for the whole frame, no copy (the traffic generators' hot path). DF clear.
    pub fn send_udp_with(
        &mut self,
        now: u64,
        src_port: u16,
        to: std::net::SocketAddrV4,
        payload_len: usize,
        fill: impl FnOnce(&mut [u8]),
        out: &mut Vec<Out>,
    ) {
        self.send_udp_df(now, src_port, to, payload_len, false, fill, out);
    }

    /// As [`send_udp_with`](Self::send_udp_with), with DF as `dont_frag` says
    /// (iperf3 `--dont-fragment`).
    #[allow(clippy::too_many_arguments)]
    pub fn send_udp_df(
        &mut self,
        now: u64,
        src_port: u16,
        to: std::net::SocketAddrV4,
        payload_len: usize,
        dont_frag: bool,
        fill: impl FnOnce(&mut [u8]),
        out: &mut Vec<Out>,
    ) {
        let (dst, dst_port) = (*to.ip(), to.port());
        let Some((iface, _)) = self.route(dst) else {
            out.push(Out::Drop { reason: format!("no route to {dst}"), packet: None });
            return;
        };
        let Some(src) = self.source_for(iface) else {
            out.push(Out::Drop { reason: "no IPv4 address to send from".into(), packet: None });
            return;
        };
        let udp_len = udp::HEADER_LEN + payload_len;
        let mut repr = ipv4::Repr::new(src, dst, IpProtocol::Udp, udp_len, DEFAULT_TTL);
        repr.ident = self.next_ident();
        repr.dont_frag = dont_frag;
        let ip_len = repr.header_len();
        let mut frame = vec![0u8; HEADROOM + ip_len + udp_len];
        udp::Repr { src_port, dst_port }.emit(
            &mut udp::Packet::new_unchecked(&mut frame[HEADROOM + ip_len..]),
            &src,
            &dst,
            payload_len,
            fill,
        );
        repr.emit(&mut ipv4::Packet::new_unchecked(&mut frame[HEADROOM..]));
        self.send_own(now, frame, ip_len, out);
    }

    /// Sends a tunnel's outer UDP datagram (OpenVPN's): from `src`, routed over any
    /// interface but a tunnel's (RFC 4301 §5.1.2.1's rule for outer packets: the packet is
    /// already transformed), fragmented after encapsulation if it exceeds the egress MTU.
    pub fn send_udp_outer(
        &mut self,
        now: u64,
        src: Ipv4Addr,
        src_port: u16,
        to: std::net::SocketAddrV4,
        payload: &[u8],
        out: &mut Vec<Out>,
    ) {
        let (dst, dst_port) = (*to.ip(), to.port());
        let udp_len = udp::HEADER_LEN + payload.len();
        let mut repr = ipv4::Repr::new(src, dst, IpProtocol::Udp, udp_len, DEFAULT_TTL);
        repr.ident = self.next_ident();
        let ip_len = repr.header_len();
        let mut frame = vec![0u8; HEADROOM + ip_len + udp_len];
        udp::Repr { src_port, dst_port }.emit(
            &mut udp::Packet::new_unchecked(&mut frame[HEADROOM + ip_len..]),
            &src,
            &dst,
            payload.len(),
            |data| data.copy_from_slice(payload),
        );
        repr.emit(&mut ipv4::Packet::new_unchecked(&mut frame[HEADROOM..]));
        self.send_routed(now, frame, None, true, out);
    }

    /// Sends a UDP datagram from this node; the source address is the egress interface's.
    pub fn send_udp(
        &mut self,
        now: u64,
        src_port: u16,
        dst: Ipv4Addr,
        dst_port: u16,
        payload: &[u8],
        out: &mut Vec<Out>,
    ) {
        let to = std::net::SocketAddrV4::new(dst, dst_port);
        self.send_udp_with(now, src_port, to, payload.len(), |data| data.copy_from_slice(payload), out);
    }

    /// Sends an ICMP echo request from this node.
    pub fn send_ping(&mut self, now: u64, dst: Ipv4Addr, ident: u16, seq_no: u16, data: &[u8], out: &mut Vec<Out>) {
        let Some((iface, _)) = self.route(dst) else {
            out.push(Out::Drop { reason: format!("no route to {dst}"), packet: None });
            return;
        };
        let Some(src) = self.source_for(iface) else { return };
        let repr = icmpv4::Repr::EchoRequest { ident, seq_no, data };
        let mut body = Vec::with_capacity(repr.buffer_len());
        repr.encapsulate(&mut body);
        self.send_datagram(now, src, dst, IpProtocol::Icmp, &body, out);
    }

    /// Routes, fragments and resolves an IPv4 datagram (without link header).
    /// `arrived_on` is the interface a forwarded packet came in on (for ICMP errors),
    /// `None` for local traffic.
    pub fn send_ip(&mut self, now: u64, packet: Vec<u8>, arrived_on: Option<usize>, out: &mut Vec<Out>) {
        self.send_frame(now, with_headroom(&packet), arrived_on, out);
    }

    /// As [`send_ip`](Self::send_ip), for a packet already after [`HEADROOM`] bytes.
    fn send_frame(&mut self, now: u64, frame: Vec<u8>, arrived_on: Option<usize>, out: &mut Vec<Out>) {
        self.send_routed(now, frame, arrived_on, false, out);
    }

    /// Routes (over real interfaces only when `bypass_tunnels`), fragments and resolves.
    fn send_routed(
        &mut self,
        now: u64,
        frame: Vec<u8>,
        arrived_on: Option<usize>,
        bypass_tunnels: bool,
        out: &mut Vec<Out>,
    ) {
        let view = ipv4::Packet::new_unchecked(&frame[HEADROOM..]);
        let dst = view.dst_addr();
        let (iface, next_hop) = if dst.is_broadcast() {
            match self.ifaces.iter().position(|i| i.addr.is_some()) {
                Some(i) => (i, dst),
                None => return,
            }
        } else if let Some(route) = self.lookup(dst, bypass_tunnels) {
            route
        } else {
            out.push(Out::Drop { reason: format!("no route to {dst}"), packet: Some(frame[HEADROOM..].to_vec()) });
            return;
        };
        if let Some(t) = self.tunnel_of(iface) {
            self.send_into_tunnel(now, t, frame, arrived_on, out);
            return;
        }
        let mut frame = frame;
        let mtu = self.egress_mtu(now, iface, &mut frame, arrived_on);
        if frame.len() - HEADROOM <= mtu {
            // It fits whole, DF or not: what `fit` would hand on alone.
            self.resolve_and_send(now, iface, next_hop, frame, out);
            return;
        }
        // A scratch vector kept between packets (taken: a nested send starts a new one).
        let mut pieces = std::mem::take(&mut self.pieces_scratch);
        if self.fit(now, iface, mtu, mtu, frame, arrived_on, &mut pieces, out) {
            for piece in pieces.drain(..) {
                self.resolve_and_send(now, iface, next_hop, piece, out);
            }
        }
        pieces.clear();
        self.pieces_scratch = pieces;
    }

    #[inline(always)]
    fn resolve_and_send(&mut self, now: u64, iface: usize, next_hop: Ipv4Addr, mut frame: Vec<u8>, out: &mut Vec<Out>) {
        let src_mac = self.ifaces[iface].mac;
        if self.ifaces[iface].is_broadcast_for(next_hop) || !self.ifaces[iface].resolve {
            write_ethernet_header(&mut frame, src_mac, Mac::BROADCAST, EtherType::Ipv4);
            out.push(Out::Frame { iface, frame });
            return;
        }
        if let Some(entry) = self.arp.get(&next_hop).filter(|e| e.expires > now) {
            write_ethernet_header(&mut frame, src_mac, entry.mac, EtherType::Ipv4);
            out.push(Out::Frame { iface: entry.iface, frame });
            return;
        }
        match self.pending.get_mut(&next_hop) {
            Some(pending) => {
                if pending.packets.len() >= ARP_PENDING_LIMIT {
                    out.push(Out::Drop {
                        reason: format!("ARP queue for {next_hop} full"),
                        packet: Some(frame[HEADROOM..].to_vec()),
                    });
                } else {
                    pending.packets.push_back(frame);
                }
            }
            None => {
                let mut packets = VecDeque::new();
                packets.push_back(frame);
                self.pending.insert(next_hop, Pending { iface, packets, tries: 1, next_try: now + ARP_RETRY_NS });
                self.arp_request(iface, next_hop, out);
            }
        }
    }

    /// Sends an ICMP error about `original` to its source; `false` when none was sent
    /// (RFC 1122 §3.2.2's exceptions, or the rate limit).
    fn icmp_error(&mut self, now: u64, iface: usize, original: &[u8], kind: ErrorKind, out: &mut Vec<Out>) -> bool {
        let view = ipv4::Packet::new_unchecked(original);
        let src = view.src_addr();
        // RFC 1122 §3.2.2: never an ICMP error about an ICMP error, a fragment other than
        // the first, or a broadcast.
        if view.frag_offset() != 0 || src.is_broadcast() || src.is_unspecified() {
            return false;
        }
        if view.next_header() == IpProtocol::Icmp {
            let is_error = icmpv4::Packet::new_checked(view.payload())
                .ok()
                .and_then(|p| icmpv4::Repr::parse(&p).ok())
                .is_some_and(|r| !matches!(r, icmpv4::Repr::EchoRequest { .. } | icmpv4::Repr::EchoReply { .. }));
            if is_error {
                return false;
            }
        }
        // RFC 1812 §4.3.2.8: a router SHOULD limit its ICMP error rate. Linux limits the
        // types of `icmp_ratemask` (all three here) per destination, except
        // "fragmentation needed" (`icmpv4_mask_allow`), which PMTUD must not lose.
        let limited = !matches!(kind, ErrorKind::FragNeeded(_)) || self.pmtu_config.rate_limit_frag_needed;
        if limited && !self.icmp_limit.allow(now, src) {
            self.counters.icmp_rate_limited += 1;
            return false;
        }
        let Ok(quote) = icmpv4::quote(original) else { return false };
        let repr = match kind {
            ErrorKind::TimeExceeded => icmpv4::Repr::TimeExceeded { reason: TimeExceeded::TtlExpired, header: quote },
            ErrorKind::NetUnreachable => {
                icmpv4::Repr::DstUnreachable { reason: DstUnreachable::NetUnreachable, next_hop_mtu: 0, header: quote }
            }
            ErrorKind::FragNeeded(mtu) => {
                icmpv4::Repr::DstUnreachable { reason: DstUnreachable::FragRequired, next_hop_mtu: mtu, header: quote }
            }
        };
        let mut body = Vec::with_capacity(repr.buffer_len());
        repr.encapsulate(&mut body);
        // RFC 1812 §4.3.2.4: the source is the address of the interface the ICMP leaves by;
        // the interface the packet came in on is a fair stand-in on these paths.
        let Some(from) = self.source_for(iface) else { return false };
        self.send_datagram(now, from, src, IpProtocol::Icmp, &body, out);
        true
    }

    /// The node's own packet `original` could not leave by `iface` with DF set: its
    /// stack and sockets learn it as from an ICMP "fragmentation needed" with `mtu`
    /// (Linux's `ip_fragment` sends the ICMP to the local source).
    fn notify_self(&mut self, now: u64, iface: usize, original: &[u8], mtu: u16, out: &mut Vec<Out>) {
        let Ok(repr) = icmpv4::Repr::frag_required(original, mtu) else { return };
        let mut body = Vec::with_capacity(repr.buffer_len());
        repr.encapsulate(&mut body);
        let own = ipv4::Packet::new_unchecked(original).src_addr();
        let ip = ipv4::Repr::new(own, own, IpProtocol::Icmp, body.len(), DEFAULT_TTL);
        let mut packet = Vec::with_capacity(ip.buffer_len());
        ip.encapsulate(&body, &mut packet);
        self.deliver(now, iface, packet, 0, out);
    }

    /// An ICMP "fragmentation needed" delivered to this node: the path MTU to the quoted
    /// destination goes down (RFC 1191 §3), to the plateau below the quoted length when
    /// the router said 0 (§5). Only for datagrams this node sent (RFC 5927 §4.1: the
    /// quoted source must be ours).
    fn frag_needed_received(&mut self, now: u64, next_hop_mtu: u16, quoted: &[u8]) {
        let quoted = ipv4::Packet::new_unchecked(quoted);
        if quoted.check_header_len().is_err() || !self.is_own(quoted.src_addr()) {
            return;
        }
        self.counters.frag_needed_received += 1;
        let dst = quoted.dst_addr();
        let reported = if next_hop_mtu == 0 { pmtu::plateau_below(quoted.total_len()) } else { next_hop_mtu };
        let current = self.path_mtu(now, dst).unwrap_or(usize::from(reported));
        if self.pmtu.learn(now, dst, usize::from(reported).max(pmtu::MIN_IPV4_MTU), current).is_some() {
            self.path_epoch += 1;
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
