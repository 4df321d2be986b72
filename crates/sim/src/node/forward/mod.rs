//! How a node forwards frames between its ports: the three ways seed 000 §2 joins a wired
//! LAN to a Wi-Fi LAN through one station's single wireless adapter.
//!
//! - [`learning`]: the IEEE 802.1D-2004 learning bridge (seed 000 §2.1, "L2F"): relays
//!   on MAC addresses, so a frame it sends on a station adapter carries another host's
//!   source MAC, which the adapter cannot send (seed 000 Table 1: a station has no
//!   four-address case 11). That is why L2F fails there.
//! - [`l3f`]: the Windows XP "layer-3 forwarding" bridge of seed 000 §2.2: one IP subnet
//!   on both sides, proxy ARP, unicast relayed on IP addresses with the Ethernet header
//!   rebuilt, so every frame it sends on a port carries that port's own MAC.
//! - [`nat`]: NAPT (masquerading) as Windows ICS (seed 000 §2.3) and Linux's MASQUERADE
//!   do: RFC 3022 §2.2, RFC 4787 (UDP), RFC 5382 (TCP), RFC 5508 (ICMP).
//!
//! All three are sans-IO (see STYLE.md, "Protocol models"): they never read a clock or
//! schedule anything. Time comes in as `now`, nanoseconds of simulated time, and what to
//! send comes out as values. The simulator's node calls them from its frame-processing
//! step; the real-time emulator can do the same.
//!
//! Frames handled here are Ethernet II frames without FCS (destination, source,
//! EtherType, payload), as a host's bridge driver sees them whatever the medium; the
//! 802.11 link turns them into and out of its three-address frames.
//!
//! When a frame or packet is not forwarded, the models say why with a [`DropReason`],
//! which prints as a sentence for `qoslab reach`.

pub mod l3f;
pub mod learning;
pub mod nat;

use std::fmt;
use std::net::{Ipv4Addr, SocketAddrV4};

pub use l3f::{L3fBridge, L3fEntry, Output};
pub use learning::{Forwarding, LearningBridge, PortSet};
pub use nat::{Inbound, Mapping, Nat, NatProtocol, PortForward};

/// Simulated time in nanoseconds (the engine's `SimTime` wraps the same `u64`).
pub type Nanos = u64;

/// Why a forwarding model did not pass a frame or packet on.
///
/// `Display` gives a sentence naming the model (`"NAT: …"`); [`DropReason::at`] names the
/// node too (`"NAT on a: …"`), which is what `qoslab reach` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DropReason {
    /// The frame or packet could not be parsed (`what` names the layer).
    Malformed { model: Model, what: &'static str, error: wire::Error },

    /// 802.1D §7.7.1: the destination was learned on the port the frame came in on, so
    /// the frame is already on the destination's segment.
    SameSegment { model: Model, port: u16 },
    /// A frame offered on a port that is not a member of the bridge.
    NotMember { model: Model, port: u16 },
    /// 802.1D §7.12.6: frames to the reserved addresses 01-80-C2-00-00-00..0F are never
    /// relayed (they are delivered to the bridge itself).
    ReservedGroup,
    /// A frame whose source address is a group address (invalid, IEEE 802.3 §3.2.3).
    GroupSource,
    /// The frame is longer than the egress port's MTU (what follows its Ethernet header,
    /// less an 802.1Q tag, exceeds the MTU): Linux's bridge frees it silently at
    /// transmission (`learning::fits_port_mtu`).
    OverPortMtu { port: u16, length: usize, mtu: u16 },

    /// L3F relays IPv4 and ARP only; other EtherTypes are dropped.
    L3fEtherType(u16),
    /// A unicast frame addressed to another station of the incoming segment.
    L3fNotAddressedToBridge { port: u16 },
    /// A frame with one of the bridge's own MACs as source came back in (a loop).
    L3fOwnFrame { port: u16 },
    /// The IPv4 destination is not in the L3F table (and no ARP has found it yet).
    L3fUnknownDestination { ip: Ipv4Addr },
    /// An ARP request for an address the L3F table places on the asker's own port: the
    /// owner answers it itself.
    L3fArpSameSegment { target: Ipv4Addr, port: u16 },
    /// An ARP reply nobody here was waiting for, addressed to another station.
    L3fArpNotForBridge,
    /// The bridge's own IP stack sent to an address not (yet) resolved; ARP requests went
    /// out on every port.
    L3fUnresolved { ip: Ipv4Addr },
    /// An off-subnet destination and no gateway known to reach it.
    L3fNoGateway { ip: Ipv4Addr },

    /// No mapping and no port forward for an inbound packet: traffic not initiated
    /// inside (seed 000 §2.3).
    NatNoMapping { protocol: NatProtocol, dst: SocketAddrV4 },
    /// A mapping exists, but not for this remote endpoint (RFC 4787 §5
    /// address-and-port-dependent filtering, as Linux conntrack does).
    NatFiltered { protocol: NatProtocol, dst: SocketAddrV4, from: SocketAddrV4 },
    /// A fragment: the node reassembles before translating (as Linux's conntrack does).
    NatFragment,
    /// A protocol NAPT cannot translate (only TCP, UDP and ICMP are).
    NatProtocol(u8),
    /// An outbound ICMP message that is neither an echo request nor an error about a
    /// translated packet.
    NatIcmpType(u8),
    /// Every outside port of the protocol is in use.
    NatPortsExhausted { protocol: NatProtocol },
}

/// Which model dropped a frame (for the sentence's subject).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Model {
    Bridge,
    L3f,
    Nat,
}

impl Model {
    fn subject(self) -> &'static str {
        match self {
            Model::Bridge => "bridge",
            Model::L3f => "L3F bridge",
            Model::Nat => "NAT",
        }
    }
}

impl DropReason {
    /// The model that dropped the frame.
    pub fn model(&self) -> Model {
        use DropReason::*;
        match self {
            Malformed { model, .. } | SameSegment { model, .. } | NotMember { model, .. } => *model,
            ReservedGroup | GroupSource | OverPortMtu { .. } => Model::Bridge,
            L3fEtherType(_)
            | L3fNotAddressedToBridge { .. }
            | L3fOwnFrame { .. }
            | L3fUnknownDestination { .. }
            | L3fArpSameSegment { .. }
            | L3fArpNotForBridge
            | L3fUnresolved { .. }
            | L3fNoGateway { .. } => Model::L3f,
            NatNoMapping { .. }
            | NatFiltered { .. }
            | NatFragment
            | NatProtocol(_)
            | NatIcmpType(_)
            | NatPortsExhausted { .. } => Model::Nat,
        }
    }

    /// The sentence with the node named: `"NAT on a: no mapping for inbound …"`.
    pub fn at<'a>(&'a self, node: &'a str) -> impl fmt::Display + 'a {
        At { reason: self, node }
    }

    fn detail(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use DropReason::*;
        match self {
            Malformed { what, error, .. } => write!(f, "{what} not parsed ({error})"),
            SameSegment { port, .. } => {
                write!(f, "destination is on the incoming port {port}; filtered (IEEE 802.1D §7.7.1)")
            }
            NotMember { port, .. } => write!(f, "port {port} is not a member of the bridge"),
            ReservedGroup => {
                write!(f, "reserved group address 01-80-C2-00-00-0x is never relayed (IEEE 802.1D §7.12.6)")
            }
            GroupSource => write!(f, "source address is a group address"),
            OverPortMtu { port, length, mtu } => write!(
                f,
                "{length} bytes after the Ethernet header exceed port {port}'s MTU {mtu}; dropped at transmission (Linux net/bridge/br_forward.c br_dev_queue_push_xmit)"
            ),
            L3fEtherType(t) => write!(f, "EtherType {t:#06x} is neither IPv4 nor ARP; L3F relays only those"),
            L3fNotAddressedToBridge { port } => {
                write!(f, "unicast frame on port {port} addressed to another station of that segment")
            }
            L3fOwnFrame { port } => write!(f, "a frame from the bridge's own MAC came back in on port {port}"),
            L3fUnknownDestination { ip } => write!(f, "no L3F table entry for {ip}"),
            L3fArpSameSegment { target, port } => {
                write!(f, "ARP for {target} is answered by its owner on the same port {port}")
            }
            L3fArpNotForBridge => write!(f, "ARP reply addressed to another station"),
            L3fUnresolved { ip } => write!(f, "{ip} not resolved yet; ARP requests sent on every port"),
            L3fNoGateway { ip } => write!(f, "{ip} is off the subnet and no gateway is known"),
            NatNoMapping { protocol: nat::NatProtocol::Icmp, dst } => write!(
                f,
                "no mapping for inbound ICMP to {} (unsolicited; ICS forwards only traffic initiated inside)",
                dst.ip()
            ),
            NatNoMapping { protocol, dst } => write!(
                f,
                "no mapping for inbound {protocol} to {dst} (unsolicited; ICS forwards only traffic initiated inside)"
            ),
            NatFiltered { protocol, dst, from } => write!(
                f,
                "inbound {protocol} from {from} to {dst} filtered: the mapping was opened towards other endpoints"
            ),
            NatFragment => write!(f, "fragment; datagrams are reassembled before translation"),
            NatProtocol(p) => write!(f, "IP protocol {p} is not translated (only TCP, UDP and ICMP are)"),
            NatIcmpType(t) => {
                write!(f, "ICMP type {t} is neither an echo request nor an error about a translated packet")
            }
            NatPortsExhausted { protocol } => write!(f, "no free outside {protocol} port"),
        }
    }
}

impl fmt::Display for DropReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: ", self.model().subject())?;
        self.detail(f)
    }
}

struct At<'a> {
    reason: &'a DropReason,
    node: &'a str,
}

impl fmt::Display for At<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} on {}: ", self.reason.model().subject(), self.node)?;
        self.reason.detail(f)
    }
}

impl std::error::Error for DropReason {}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn reasons_print_as_sentences_naming_the_node() {
        let r = DropReason::NatNoMapping {
            protocol: NatProtocol::Icmp,
            dst: SocketAddrV4::new(Ipv4Addr::new(192, 168, 0, 102), 7),
        };
        assert_eq!(
            r.at("a").to_string(),
            "NAT on a: no mapping for inbound ICMP to 192.168.0.102 \
             (unsolicited; ICS forwards only traffic initiated inside)"
        );
        assert!(r.to_string().starts_with("NAT: no mapping"));
        let r = DropReason::L3fUnknownDestination { ip: Ipv4Addr::new(192, 168, 1, 9) };
        assert_eq!(r.at("a").to_string(), "L3F bridge on a: no L3F table entry for 192.168.1.9");
    }
}
