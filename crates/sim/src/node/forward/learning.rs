//! The IEEE 802.1D learning bridge (seed 000 §2.1, "L2F", Windows XP's default bridge).
//!
//! Standards a reader must know, IEEE Std 802.1D-2004:
//!
//! - §7.7, the Forwarding Process: a frame is never sent back on the port it came in on
//!   (§7.7.1); a frame whose destination the Filtering Database places on another port
//!   goes to that port only, and a frame to an unknown individual address or to a group
//!   address goes to every other port (§7.7.2, §7.9.4, "flooding").
//! - §7.8, the Learning Process: the source address of a received frame, when it is an
//!   individual address, is recorded (or refreshed) with the port it came in on.
//! - §7.9, the Filtering Database: dynamic entries are removed when they have not been
//!   refreshed for the Ageing Time (§7.9.2; recommended 300 s, range 10 s – 1 000 000 s).
//! - §7.12.6: frames to the reserved addresses 01-80-C2-00-00-00 … 0F are not relayed.
//!
//! Not modelled: the spanning tree (every member port is Forwarding), static entries,
//! VLANs, and a capacity limit on the Filtering Database.
//!
//! Sans-IO: `now` comes in with each frame; the model keeps no timers. Ageing is checked
//! when the table is read, and old entries are swept every Ageing Time.

use std::collections::BTreeMap;

use wire::ethernet::{Address as MacAddress, Frame};

use super::{DropReason, Model, Nanos};

/// IEEE 802.1D-2004 §7.9.2: the recommended Ageing Time, 300 s.
pub const DEFAULT_AGING_NS: Nanos = 300_000_000_000;

/// A set of port numbers, as a bitset: the first 64 ports inline (no allocation per
/// frame for the bridges of hosts and APs), the rest on the heap (a switch with 1,000
/// ports).
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct PortSet {
    low: u64,
    high: Vec<u64>,
}

impl PortSet {
    pub const fn empty() -> PortSet {
        PortSet { low: 0, high: Vec::new() }
    }

    pub fn insert(&mut self, port: u16) {
        if port < 64 {
            self.low |= 1 << port;
            return;
        }
        let word = usize::from(port / 64) - 1;
        if word >= self.high.len() {
            self.high.resize(word + 1, 0);
        }
        self.high[word] |= 1 << (port % 64);
    }

    pub fn remove(&mut self, port: u16) {
        if port < 64 {
            self.low &= !(1 << port);
        } else if let Some(w) = self.high.get_mut(usize::from(port / 64) - 1) {
            *w &= !(1 << (port % 64));
        }
    }

    pub fn contains(&self, port: u16) -> bool {
        if port < 64 {
            return self.low & (1 << port) != 0;
        }
        self.high.get(usize::from(port / 64) - 1).is_some_and(|w| w & (1 << (port % 64)) != 0)
    }

    pub fn is_empty(&self) -> bool {
        self.low == 0 && self.high.iter().all(|&w| w == 0)
    }

    pub fn len(&self) -> usize {
        self.low.count_ones() as usize + self.high.iter().map(|w| w.count_ones() as usize).sum::<usize>()
    }

    /// The ports in increasing order.
    pub fn iter(&self) -> impl Iterator<Item = u16> + '_ {
        let words = std::iter::once(self.low).chain(self.high.iter().copied());
        words.enumerate().flat_map(|(i, mut w)| {
            std::iter::from_fn(move || {
                (w != 0).then(|| {
                    let bit = w.trailing_zeros();
                    w &= w - 1;
                    (i * 64) as u16 + bit as u16
                })
            })
        })
    }

    /// The single port, when the set holds exactly one.
    pub fn single(&self) -> Option<u16> {
        if self.len() == 1 {
            self.iter().next()
        } else {
            None
        }
    }
}

/// 802.1Q TPID (IEEE 802.1Q-2018 §9.5): a tagged frame's EtherType field.
const ETHERTYPE_VLAN: u16 = 0x8100;
/// IEEE 802.1Q-2018 §9.3: the tag is 4 octets (Linux `VLAN_HLEN`).
const VLAN_TAG_LEN: usize = 4;

/// Whether a frame (Ethernet header, no FCS) may leave by a bridge port whose MTU is
/// `mtu`; if not, how long it is after its header.
///
/// Linux drops the others silently at transmission (no ICMP: a bridge does not route,
/// and does not fragment). The rule is that of Linux 3.10, the kernel of CentOS 7 (seed
/// 002 §4's OpenVPN server, bridging its TAP device), net/bridge/br_forward.c
/// `br_dev_queue_push_xmit`: `packet_length(skb) > skb->dev->mtu && !skb_is_gso(skb)`
/// frees the frame, where `packet_length` is `skb->len` (the bytes after the Ethernet
/// header, which is pushed only after the test) less `VLAN_HLEN` when the frame is
/// 802.1Q-tagged. (Later kernels test `is_skb_forwardable`, which allows `mtu +
/// hard_header_len + VLAN_HLEN`, untagged frames too; the simulator has no GSO: every
/// frame is one on the wire.)
pub fn fits_port_mtu(frame: &[u8], mtu: u16) -> Result<(), usize> {
    let after_header = frame.len().saturating_sub(wire::ethernet::HEADER_LEN);
    let tagged = frame.get(12..14) == Some(&ETHERTYPE_VLAN.to_be_bytes()[..]);
    let length = if tagged { after_header.saturating_sub(VLAN_TAG_LEN) } else { after_header };
    if length > usize::from(mtu) {
        Err(length)
    } else {
        Ok(())
    }
}

impl FromIterator<u16> for PortSet {
    fn from_iter<I: IntoIterator<Item = u16>>(iter: I) -> Self {
        let mut set = PortSet::empty();
        for p in iter {
            set.insert(p);
        }
        set
    }
}

/// What to do with one received frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Forwarding {
    /// Ports to send the frame on, unchanged. Never holds the incoming port.
    pub to_ports: PortSet,
    /// Pass the frame up to the node's own stack (own MAC, or a group address).
    pub local: bool,
    /// Why the frame goes nowhere, when `to_ports` is empty and `local` is false.
    pub dropped: Option<DropReason>,
}

impl Forwarding {
    fn drop(reason: DropReason) -> Forwarding {
        Forwarding { to_ports: PortSet::empty(), local: false, dropped: Some(reason) }
    }
}

/// A dynamic Filtering Database entry (IEEE 802.1D-2004 §7.9.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Entry {
    port: u16,
    /// When the entry was created or last refreshed.
    seen: Nanos,
}

/// An IEEE 802.1D learning bridge over a set of member ports.
#[derive(Debug, Clone)]
pub struct LearningBridge {
    ports: PortSet,
    aging_ns: Nanos,
    own_mac: MacAddress,
    /// MAC → (port, last seen); ordered so that reports are deterministic.
    fdb: BTreeMap<[u8; 6], Entry>,
    /// When stale entries are next swept out of `fdb`.
    next_sweep: Nanos,
    /// Ports in promiscuous mode (Windows XP's bridge adapters, seed 000 §3, Fig. 10):
    /// a frame for `own_mac` received on one of them is relayed too.
    promiscuous: PortSet,
}

impl LearningBridge {
    /// A bridge over `ports` (numbers below 64; panics otherwise), ageing dynamic entries
    /// after `aging_ns` ([`DEFAULT_AGING_NS`] is 802.1D's 300 s), with `own_mac` the
    /// bridge interface's address (frames to it go to the local stack).
    pub fn new(ports: &[u16], aging_ns: Nanos, own_mac: [u8; 6]) -> LearningBridge {
        LearningBridge {
            ports: ports.iter().copied().collect(),
            aging_ns,
            own_mac: MacAddress(own_mac),
            fdb: BTreeMap::new(),
            next_sweep: aging_ns,
            promiscuous: PortSet::empty(),
        }
    }

    /// The bridge with `ports` in promiscuous mode. IEEE 802.1D-2004 §7.5 submits a
    /// frame addressed to the bridge itself to its own stack only, never relays it (as
    /// Linux's bridge does with its ports' local entries, net/bridge/br_input.c
    /// `br_handle_frame_finish`). Seed 000 §3 (Fig. 10) found Windows XP's bridge,
    /// whose adapters it puts in promiscuous mode ([11]), doing otherwise: "all frames
    /// received by this wireless adapter were forwarded to all the ports of switch 2",
    /// frames "of any destination MAC address are received and passed to all LAN ports
    /// in the same broadcast domain". So a frame for `own_mac` received on a
    /// promiscuous port is relayed to every other port, and still delivered to the
    /// node: it is addressed to the node's adapter, whose driver passes it up whatever
    /// the mode (the seed says it was forwarded, not that it was taken from the host),
    /// as a group-addressed frame goes both ways (§7.7).
    pub fn with_promiscuous(mut self, ports: &[u16]) -> LearningBridge {
        self.promiscuous = ports.iter().copied().collect();
        self
    }

    /// The member ports.
    pub fn ports(&self) -> PortSet {
        self.ports.clone()
    }

    /// The bridge interface's own MAC.
    pub fn own_mac(&self) -> [u8; 6] {
        self.own_mac.0
    }

    /// Receives `frame` on `in_port` at `now`: learns its source (§7.8) and says where it
    /// goes (§7.7). A frame on a port that is not a member, or too short for an Ethernet
    /// header, goes nowhere.
    pub fn forward(&mut self, now: Nanos, in_port: u16, frame: &[u8]) -> Forwarding {
        let frame = match Frame::new_checked(frame) {
            Ok(f) => f,
            Err(error) => {
                return Forwarding::drop(DropReason::Malformed { model: Model::Bridge, what: "Ethernet header", error })
            }
        };
        if !self.ports.contains(in_port) {
            return Forwarding::drop(DropReason::NotMember { model: Model::Bridge, port: in_port });
        }
        let (src, dst) = (frame.src_addr(), frame.dst_addr());
        if src.is_multicast() {
            return Forwarding::drop(DropReason::GroupSource);
        }
        if src != self.own_mac {
            self.learn(now, src, in_port);
        }
        let mut others = self.ports.clone();
        others.remove(in_port);
        if dst.is_multicast() {
            if is_reserved_group(dst) {
                return Forwarding { to_ports: PortSet::empty(), local: true, dropped: None };
            }
            return Forwarding { to_ports: others, local: true, dropped: None };
        }
        if dst == self.own_mac {
            let to_ports = if self.promiscuous.contains(in_port) { others } else { PortSet::empty() };
            return Forwarding { to_ports, local: true, dropped: None };
        }
        match self.lookup(now, dst) {
            Some(port) if port == in_port => Forwarding::drop(DropReason::SameSegment { model: Model::Bridge, port }),
            Some(port) => Forwarding { to_ports: std::iter::once(port).collect(), local: false, dropped: None },
            None => Forwarding { to_ports: others, local: false, dropped: None },
        }
    }

    /// The ports a frame from the node's own stack goes to: the learned port of its
    /// destination, or every member port for a group or unknown destination. Nothing is
    /// learned from it.
    pub fn transmit(&self, now: Nanos, frame: &[u8]) -> PortSet {
        let Ok(frame) = Frame::new_checked(frame) else { return PortSet::empty() };
        let dst = frame.dst_addr();
        if dst.is_multicast() {
            return self.ports.clone();
        }
        match self.lookup(now, dst) {
            Some(port) => std::iter::once(port).collect(),
            None => self.ports.clone(),
        }
    }

    /// The live entries, ordered by MAC: (MAC, port, age in ns).
    pub fn table(&self, now: Nanos) -> Vec<([u8; 6], u16, Nanos)> {
        self.fdb
            .iter()
            .filter(|(_, e)| self.live(now, e))
            .map(|(mac, e)| (*mac, e.port, now.saturating_sub(e.seen)))
            .collect()
    }

    /// The port `mac` was learned on, if the entry is live.
    pub fn lookup(&self, now: Nanos, mac: MacAddress) -> Option<u16> {
        self.fdb.get(&mac.0).filter(|e| self.live(now, e)).map(|e| e.port)
    }

    fn live(&self, now: Nanos, e: &Entry) -> bool {
        now.saturating_sub(e.seen) < self.aging_ns
    }

    /// §7.8: create or refresh the entry; a station that moved is moved.
    fn learn(&mut self, now: Nanos, mac: MacAddress, port: u16) {
        self.fdb.insert(mac.0, Entry { port, seen: now });
        if now >= self.next_sweep {
            let aging = self.aging_ns;
            self.fdb.retain(|_, e| now.saturating_sub(e.seen) < aging);
            self.next_sweep = now.saturating_add(aging);
        }
    }
}

/// IEEE 802.1D-2004 §7.12.6: 01-80-C2-00-00-00 … 01-80-C2-00-00-0F.
fn is_reserved_group(mac: MacAddress) -> bool {
    mac.0[..5] == [0x01, 0x80, 0xc2, 0x00, 0x00] && mac.0[5] <= 0x0f
}

#[cfg(test)]
mod test {

    #[test]
    fn port_sets_hold_a_thousand_ports() {
        let set: PortSet = [0u16, 63, 64, 999].into_iter().collect();
        assert_eq!(set.iter().collect::<Vec<_>>(), vec![0, 63, 64, 999]);
        assert_eq!(set.len(), 4);
        assert!(set.contains(999) && !set.contains(998));
        let mut one = PortSet::empty();
        one.insert(700);
        assert_eq!(one.single(), Some(700));
        one.remove(700);
        assert!(one.is_empty());
    }

    use super::*;
    use wire::ethernet::{EtherType, Repr};

    const BRIDGE: [u8; 6] = [0x02, 0, 0, 0, 0, 0xbb];
    const H1: [u8; 6] = [0x02, 0, 0, 0, 0, 1];
    const H2: [u8; 6] = [0x02, 0, 0, 0, 0, 2];
    const H3: [u8; 6] = [0x02, 0, 0, 0, 0, 3];
    const S: Nanos = 1_000_000_000;

    fn frame(src: [u8; 6], dst: [u8; 6]) -> Vec<u8> {
        let mut out = Vec::new();
        let repr = Repr { src_addr: MacAddress(src), dst_addr: MacAddress(dst), ethertype: EtherType::Ipv4 };
        repr.encapsulate(&[0x45; 46], false, &mut out);
        out
    }

    fn ports(list: &[u16]) -> PortSet {
        list.iter().copied().collect()
    }

    fn bridge() -> LearningBridge {
        LearningBridge::new(&[0, 1, 2], DEFAULT_AGING_NS, BRIDGE)
    }

    #[test]
    fn unknown_unicast_floods_then_learned_destination_goes_to_one_port() {
        let mut b = bridge();
        let f = b.forward(0, 0, &frame(H1, H2));
        assert_eq!((f.to_ports, f.local), (ports(&[1, 2]), false));
        // H2 answers from port 2: H1 is known on port 0.
        let f = b.forward(S, 2, &frame(H2, H1));
        assert_eq!(f.to_ports, ports(&[0]));
        let f = b.forward(2 * S, 0, &frame(H1, H2));
        assert_eq!(f.to_ports, ports(&[2]));
        assert_eq!(b.table(2 * S), vec![(H1, 0, 0), (H2, 2, S)]);
    }

    #[test]
    fn destination_on_the_incoming_port_is_filtered() {
        let mut b = bridge();
        b.forward(0, 1, &frame(H3, H1));
        let f = b.forward(S, 1, &frame(H1, H3));
        assert!(f.to_ports.is_empty() && !f.local);
        assert_eq!(f.dropped, Some(DropReason::SameSegment { model: Model::Bridge, port: 1 }));
    }

    #[test]
    fn group_frames_flood_and_go_up_and_are_not_learned_as_sources() {
        let mut b = bridge();
        let f = b.forward(0, 1, &frame(H1, [0xff; 6]));
        assert_eq!((f.to_ports, f.local), (ports(&[0, 2]), true));
        let f = b.forward(0, 1, &frame(H1, [0x01, 0x00, 0x5e, 0, 0, 1]));
        assert_eq!((f.to_ports, f.local), (ports(&[0, 2]), true));
        let f = b.forward(0, 1, &frame([0x01, 0, 0x5e, 0, 0, 9], H1));
        assert_eq!(f.dropped, Some(DropReason::GroupSource));
        assert_eq!(b.table(0), vec![(H1, 1, 0)]);
    }

    #[test]
    fn reserved_group_addresses_are_not_relayed() {
        let mut b = bridge();
        let stp = [0x01, 0x80, 0xc2, 0, 0, 0];
        let f = b.forward(0, 0, &frame(H1, stp));
        assert_eq!((f.to_ports, f.local), (PortSet::empty(), true));
    }

    #[test]
    fn own_mac_goes_up_only_and_own_frames_are_not_learned() {
        let mut b = bridge();
        let f = b.forward(0, 0, &frame(H1, BRIDGE));
        assert_eq!((f.to_ports, f.local), (PortSet::empty(), true));
        b.forward(0, 2, &frame(BRIDGE, H1));
        assert_eq!(b.lookup(0, MacAddress(BRIDGE)), None);
        assert_eq!(b.transmit(0, &frame(BRIDGE, H1)), ports(&[0]));
        assert_eq!(b.transmit(0, &frame(BRIDGE, H2)), ports(&[0, 1, 2]));
    }

    #[test]
    fn a_promiscuous_port_relays_frames_for_the_bridge_itself_as_seed_000_fig_10_found() {
        // IEEE 802.1D-2004 §7.5: a frame addressed to the bridge goes up only.
        let mut plain = bridge();
        let f = plain.forward(0, 0, &frame(H1, BRIDGE));
        assert_eq!((f.to_ports, f.local), (PortSet::empty(), true));
        // Seed 000 §3: with the adapter (port 0) promiscuous, the frame also goes to
        // every other port; it is still the node's, so it goes up as well.
        let mut xp = bridge().with_promiscuous(&[0]);
        let f = xp.forward(0, 0, &frame(H1, BRIDGE));
        assert_eq!((f.to_ports, f.local), (ports(&[1, 2]), true));
        // Only on the promiscuous port: on port 1 the rule is §7.5's.
        let f = xp.forward(0, 1, &frame(H2, BRIDGE));
        assert_eq!((f.to_ports, f.local), (PortSet::empty(), true));
        // Other frames are relayed as by any 802.1D bridge (§7.7): learned H2 on port 1.
        let f = xp.forward(S, 0, &frame(H1, H2));
        assert_eq!((f.to_ports, f.local), (ports(&[1]), false));
    }

    #[test]
    fn entries_age_out_after_the_ageing_time_unless_refreshed() {
        let mut b = LearningBridge::new(&[0, 1, 2], 10 * S, BRIDGE);
        b.forward(0, 0, &frame(H1, H2));
        b.forward(5 * S, 1, &frame(H2, H1));
        // Just under 10 s after H1 was seen it is still known; at 10 s it has aged out
        // and frames to it flood again (§7.9.2).
        assert_eq!(b.forward(10 * S - 1, 1, &frame(H2, H1)).to_ports, ports(&[0]));
        assert_eq!(b.forward(10 * S, 1, &frame(H2, H1)).to_ports, ports(&[0, 2]));
        assert_eq!(b.table(10 * S), vec![(H2, 1, 0)]);
        // Refreshing keeps an entry: H2 was seen at 10 s, so it lives until 20 s.
        assert_eq!(b.table(19 * S), vec![(H2, 1, 9 * S)]);
        assert!(b.table(20 * S).is_empty());
        // The sweep removes dead entries from memory too.
        b.forward(40 * S, 0, &frame(H3, [0xff; 6]));
        assert_eq!(b.fdb.len(), 1);
    }

    #[test]
    fn a_station_that_moves_is_relearned() {
        let mut b = bridge();
        b.forward(0, 0, &frame(H1, H2));
        b.forward(S, 2, &frame(H1, H2));
        assert_eq!(b.lookup(S, MacAddress(H1)), Some(2));
    }

    #[test]
    fn a_frame_one_byte_over_the_port_mtu_is_dropped_as_linux_3_10_does() {
        // Linux 3.10 net/bridge/br_forward.c br_dev_queue_push_xmit frees a frame when
        // skb->len (the bytes after the 14-byte Ethernet header), less 4 for an 802.1Q
        // tag, exceeds the egress device's MTU. Seed 002's TAP: MTU 1430.
        let mtu = 1430u16;
        let untagged = |after: usize| {
            let mut f = vec![0u8; 14 + after];
            f[12..14].copy_from_slice(&[0x88, 0x64]); // PPPoE session
            f
        };
        assert_eq!(fits_port_mtu(&untagged(1430), mtu), Ok(()));
        assert_eq!(fits_port_mtu(&untagged(1431), mtu), Err(1431));
        // Seed 002: a PPPoE frame carrying a 1423-byte PPP packet is 6 (PPPoE) + 2 (PPP
        // protocol) + 1423 = 1431 bytes after its header: one over the TAP's 1430.
        assert_eq!(fits_port_mtu(&untagged(6 + 2 + 1423), mtu), Err(1431));
        assert_eq!(fits_port_mtu(&untagged(6 + 2 + 1422), mtu), Ok(()));
        // A tagged frame may be 4 bytes longer (packet_length subtracts VLAN_HLEN).
        let mut tagged = untagged(1434);
        tagged[12..14].copy_from_slice(&[0x81, 0x00]);
        assert_eq!(fits_port_mtu(&tagged, mtu), Ok(()));
        tagged.push(0);
        assert_eq!(fits_port_mtu(&tagged, mtu), Err(1431));
    }
}
