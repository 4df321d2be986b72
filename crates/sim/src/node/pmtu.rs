//! Path MTU discovery in the IP stack: the host's per-destination PMTU cache, the
//! plateau table for routers that do not say their MTU, and the token bucket that
//! limits a node's ICMP errors. Sans-IO, as the rest of the stack: every call takes
//! `now`.
//!
//! Standards a reader must know:
//!
//! * RFC 1191 — Path MTU Discovery: the router's "fragmentation needed" carries the
//!   next-hop MTU (§4); a host never raises its estimate on such a message and never
//!   goes below 68 (§3); old routers that send no MTU are handled with the plateau
//!   table (§5, §7); estimates age out so that a larger MTU is tried again (§6.3);
//! * RFC 1812 §4.3.2.8 — a router SHOULD limit the rate of the ICMP errors it sends;
//! * RFC 4821 — packetization-layer PMTUD (the TCP side is in `tcp::socket`);
//! * RFC 2923 §2.1 — PMTUD black holes.
//!
//! Where the RFCs leave a value open, Linux's is used (see `config::PmtuConfig`).

use std::collections::BTreeMap;
use std::net::Ipv4Addr;

/// RFC 791 §3.2: every IPv4 module must forward a 68-octet datagram unfragmented;
/// RFC 1191 §3: a host MUST NOT reduce its estimate below it.
pub const MIN_IPV4_MTU: usize = 68;

/// RFC 1191 §7, Table 7-1: the plateaus of likely path MTUs.
pub const PLATEAUS: [u16; 11] = [65535, 32000, 17914, 8166, 4352, 2002, 1492, 1006, 508, 296, 68];

/// RFC 1191 §5: a "fragmentation needed" whose Next-Hop MTU is zero (an RFC 792 router)
/// makes the host try the largest plateau below the Total Length of the datagram the
/// message quotes.
pub fn plateau_below(total_len: u16) -> u16 {
    PLATEAUS.iter().copied().find(|&p| p < total_len).unwrap_or(MIN_IPV4_MTU as u16)
}

#[derive(Debug, Clone, Copy)]
struct Entry {
    mtu: usize,
    expires: u64,
    /// A message said less than `min_pmtu`: the estimate is `min_pmtu` and the host
    /// stops setting DF there (Linux's locked MTU, `ip_dont_fragment`).
    locked: bool,
}

/// A host's learned path MTUs, per destination (RFC 1191 §6.2: per destination, as
/// Linux keeps them in the FIB nexthop exceptions).
#[derive(Debug, Clone)]
pub struct PmtuCache {
    entries: BTreeMap<Ipv4Addr, Entry>,
    expires_ns: u64,
    min_pmtu: usize,
}

impl PmtuCache {
    pub fn new(expires_ns: u64, min_pmtu: usize) -> PmtuCache {
        PmtuCache { entries: BTreeMap::new(), expires_ns, min_pmtu: min_pmtu.max(MIN_IPV4_MTU) }
    }

    /// The learned path MTU to `dst` at `now`, if one is alive (RFC 1191 §6.3: an aged
    /// estimate is forgotten, so the first-hop MTU applies again).
    pub fn get(&self, now: u64, dst: Ipv4Addr) -> Option<usize> {
        self.get_until(now, dst).map(|(mtu, _)| mtu)
    }

    /// [`get`](Self::get) and when its answer ages out: the estimate holds while the
    /// clock is before the second value (an entry changes only by `learn`).
    pub fn get_until(&self, now: u64, dst: Ipv4Addr) -> Option<(usize, u64)> {
        self.entries.get(&dst).filter(|e| e.expires > now).map(|e| (e.mtu, e.expires))
    }

    /// A "fragmentation needed" said `reported` (already a plateau if the router sent 0)
    /// for `dst`, whose current path MTU is `current`. Returns the new estimate when it
    /// went down. RFC 1191 §3: never raised by a message; Linux `__ip_rt_update_pmtu`:
    /// a value below `min_pmtu` sets `min_pmtu` (never below 68).
    pub fn learn(&mut self, now: u64, dst: Ipv4Addr, reported: usize, current: usize) -> Option<usize> {
        let locked = reported < self.min_pmtu;
        let mtu = reported.max(self.min_pmtu).min(current);
        // Nothing new: not lower, and not a lock that was not there.
        let newly_locked = locked && !self.locked(now, dst);
        if mtu >= current && !newly_locked {
            return None;
        }
        self.entries.insert(dst, Entry { mtu, expires: now + self.expires_ns, locked });
        Some(mtu)
    }

    /// Whether the estimate to `dst` is locked at `min_pmtu` (send without DF).
    pub fn locked(&self, now: u64, dst: Ipv4Addr) -> bool {
        self.entries.get(&dst).is_some_and(|e| e.expires > now && e.locked)
    }
}

/// The token bucket of Linux's `inet_peer_xrlim_allow`, one per destination: a token
/// every `interval_ns`, at most `burst` kept; each ICMP error costs one.
#[derive(Debug, Clone)]
pub struct IcmpRateLimit {
    interval_ns: u64,
    burst: u64,
    /// Per destination: (tokens in nanoseconds of credit, when last updated).
    peers: BTreeMap<Ipv4Addr, (u64, u64)>,
}

impl IcmpRateLimit {
    pub fn new(interval_ns: u64, burst: u32) -> IcmpRateLimit {
        IcmpRateLimit { interval_ns, burst: u64::from(burst.max(1)), peers: BTreeMap::new() }
    }

    /// Whether an ICMP error to `dst` may be sent at `now` (and spends the token).
    /// A destination not seen yet starts with a full bucket, as Linux's new
    /// `inet_peer` does (`rate_tokens` 0 but `rate_last` long ago).
    pub fn allow(&mut self, now: u64, dst: Ipv4Addr) -> bool {
        if self.interval_ns == 0 {
            return true;
        }
        let cap = self.burst * self.interval_ns;
        let (tokens, last) = self.peers.get(&dst).copied().unwrap_or((cap, now));
        let tokens = (tokens + (now - last)).min(cap);
        let (tokens, ok) = if tokens >= self.interval_ns { (tokens - self.interval_ns, true) } else { (tokens, false) };
        self.peers.insert(dst, (tokens, now));
        ok
    }
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn plateaus_follow_rfc1191_table() {
        // RFC 1191 §7: 1500-byte Ethernet datagram through an old router → 1492.
        assert_eq!(plateau_below(1500), 1492);
        assert_eq!(plateau_below(1492), 1006);
        assert_eq!(plateau_below(576), 508);
        assert_eq!(plateau_below(68), 68);
        assert_eq!(plateau_below(9000), 8166);
    }

    #[test]
    fn the_cache_only_goes_down_and_ages_out() {
        let mut c = PmtuCache::new(600, 552);
        let dst = Ipv4Addr::new(10, 0, 0, 1);
        assert_eq!(c.learn(0, dst, 1400, 1500), Some(1400));
        assert_eq!(c.get(10, dst), Some(1400));
        assert_eq!(c.learn(10, dst, 1450, 1400), None, "never raised by a message");
        assert_eq!(c.learn(10, dst, 300, 1400), Some(552), "Linux min_pmtu");
        assert!(c.locked(10, dst), "and DF is no longer set");
        assert_eq!(c.get(610, dst), None, "aged out after 600");
    }

    #[test]
    fn the_rate_limit_is_a_token_bucket_per_destination() {
        let mut r = IcmpRateLimit::new(1000, 6);
        let a = Ipv4Addr::new(10, 0, 0, 1);
        let sent = (0..10).filter(|_| r.allow(0, a)).count();
        assert_eq!(sent, 6, "a burst of 6");
        assert!(!r.allow(999, a));
        assert!(r.allow(1000, a), "one more after a second");
        assert!(r.allow(1000, Ipv4Addr::new(10, 0, 0, 2)), "another destination has its own bucket");
    }
}
