//! Tunnels: IPsec (ESP and AH), OpenVPN over UDP and TCP, PPPoE and PPTP, each a sans-IO
//! model, and the virtual interfaces ([`vif`], [`pptp_vif`]) that make them interfaces of
//! a node.
//!
//! The IP stack (`crate::node::ip`) takes a tunnel-mode tunnel as a [`Tunnel`] interface
//! and a transport-mode SA as a [`Transport`]; IPsec is both. OpenVPN, PPPoE and PPTP are
//! the node's virtual interfaces ([`vif::Vif`]).

pub mod ipsec;
pub mod openvpn;
pub mod openvpn_tcp;
pub mod pppoe;
pub mod pptp;
pub mod pptp_vif;
pub mod vif;

use std::net::Ipv4Addr;

use wire::ipv4;

use crate::config::TunnelFragment;

/// A virtual interface whose packets travel inside other IPv4 packets (RFC 4301 §5.1.2.1
/// tunnel mode). The stack routes into it, gives it whole inner packets and routes what
/// it returns; it hands it the received datagrams it claims.
pub trait Tunnel {
    /// Encapsulates the IPv4 packet `inner` and appends the outer IPv4 packet, with
    /// Identification `ident`, to `out`.
    fn encapsulate(&mut self, inner: &[u8], ident: u16, out: &mut Vec<u8>) -> Result<(), String>;
    /// Whether the received (whole, reassembled) IPv4 datagram `packet` is this tunnel's.
    fn claims(&self, packet: &[u8]) -> bool;
    /// Checks and opens a claimed datagram; appends the inner IPv4 packet to `out`.
    fn decapsulate(&mut self, packet: &[u8], out: &mut Vec<u8>) -> Result<(), String>;
    /// The tunnel's own (outer) address: the source of packets the node itself sends
    /// into it.
    fn local(&self) -> Ipv4Addr;
    /// What an IPsec tunnel carried (per-tunnel counts); None for other tunnels.
    fn sa_report(&self) -> Option<SaReport> {
        None
    }
    /// The flow packet ESP packet `seq` of outbound SPI `spi` carried, if this sealed it
    /// (conservation).
    fn sealed(&self, _spi: u32, _seq: u32) -> Option<crate::conservation::Found> {
        None
    }
    /// The far end's (outer) address, whose path MTU bounds the tunnel's; `None` when
    /// the tunnel does not know it (its MTU is then its interface's alone).
    fn remote(&self) -> Option<Ipv4Addr> {
        None
    }
    /// The largest inner packet whose encapsulation fits `outer_mtu` octets. The default
    /// is IP in IP's (RFC 2003: one 20-octet header); tunnels with more overhead (ESP's
    /// padding, a UDP and VPN header) say theirs.
    fn inner_mtu(&self, outer_mtu: usize) -> usize {
        outer_mtu.saturating_sub(ipv4::HEADER_LEN)
    }
    /// Where an inner packet too big for the tunnel is fragmented (RFC 4459 §3).
    fn fragment(&self) -> TunnelFragment {
        TunnelFragment::After
    }
}

/// A transport-mode security association (RFC 4301 §4.1): it transforms whole datagrams
/// the node itself sends, in place between their IPv4 header and payload.
pub trait Transport {
    /// Whether the whole outbound IPv4 datagram `packet` (from this node) is this SA's.
    fn selects(&self, packet: &[u8]) -> bool;
    /// How specific the selector is: among SAs that select a packet the most specific
    /// wins (ties: the first added).
    fn specificity(&self) -> u8;
    /// Appends the protected datagram to `out`.
    fn protect(&mut self, packet: &[u8], out: &mut Vec<u8>) -> Result<(), String>;
    /// Whether the received (whole, reassembled) datagram `packet` is this SA's.
    fn claims(&self, packet: &[u8]) -> bool;
    /// Checks a claimed datagram; appends the restored datagram to `out`.
    fn unprotect(&mut self, packet: &[u8], out: &mut Vec<u8>) -> Result<(), String>;
    /// What the SA pair carried (per-tunnel counts); None if it keeps none.
    fn sa_report(&self) -> Option<SaReport> {
        None
    }
    /// The flow packet ESP packet `seq` of outbound SPI `spi` carried, if this sealed it
    /// (conservation).
    fn sealed(&self, _spi: u32, _seq: u32) -> Option<crate::conservation::Found> {
        None
    }
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
