//! The tunnel ends of a node: IPsec (ESP, AH), OpenVPN, PPPoE, PPTP.

use std::net::Ipv4Addr;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// One end of a PPTP tunnel (RFC 2637; seed 002 §3.4): a TCP control connection from
/// `local` to `remote`'s port 1723 (the client, PNS, opens it), then one call whose PPP
/// link rides in enhanced GRE between the same addresses, routed by the node's stack.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PptpConfig {
    /// The PPP interface's name (`ppp0`).
    pub name: String,
    /// The PAC (`pptpd`: listens on 1723, authenticates, assigns the address).
    pub server: bool,
    /// Outer addresses: this end's and the other end's.
    pub local: Ipv4Addr,
    pub remote: Ipv4Addr,
    /// What the server demands.
    pub auth: PppAuth,
    /// The client's name and the shared secret.
    pub user: String,
    pub secret: String,
    /// The interface MTU; also the MRU each end requests in LCP (RFC 1661 §6.1).
    pub mtu: u16,
    /// This end's address on the PPP link (for a client, the one the server assigns).
    pub ppp_local: Ipv4Addr,
    /// The other end's PPP address (a server assigns it to the client with IPCP).
    pub ppp_peer: Ipv4Addr,
    /// Destinations routed into the PPP interface (the peer's address at least).
    pub routes: Vec<(Ipv4Addr, u8)>,
    /// This end's Call ID (RFC 2637 §2.7-§2.8).
    pub call_id: u16,
    /// Packet Recv. Window Size announced (RFC 2637 §2.7-§2.8). RFC 2637 fixes no
    /// value; 64 is what Windows' PPTP client and server announce.
    #[serde(default = "default_pptp_window")]
    pub recv_window: u16,
}
fn default_pptp_window() -> u16 {
    64
}

/// One end of an OpenVPN tunnel (seed 002 §3.2). Its packets are UDP datagrams between
/// `local`:`local_port` and `remote`:`remote_port`, routed by the node's stack (so they
/// ride on whatever interface leads to `remote`, a link or another tunnel).
///
/// - `dev = "tap"`: the tunnel is the Ethernet port `port` of the node (a TAP device):
///   frames the node sends on it (its own, or its bridge's) are sealed whole; frames
///   opened are received on it. The port's MTU bounds what the IP stack sends on it.
/// - `dev = "tun"`: the tunnel is a point-to-point IP interface with MTU `mtu` and
///   routes to `protects`; IPv4 packets routed there are fragmented to `mtu` first
///   (DF clear), sealed whole, and the outer datagram is fragmented by the egress
///   interface if it must be.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OpenVpnConfig {
    /// The interface name (`tap0`, `tun0`, or the scenario's tunnel name).
    pub name: String,
    /// A TAP (Ethernet) or TUN (IP) device.
    pub dev: OpenVpnDev,
    /// The server end (its direction keys are the server's).
    pub server: bool,
    /// TAP: the index of the node's port that is the TAP device.
    #[serde(default)]
    pub port: Option<u16>,
    pub local: Ipv4Addr,
    pub remote: Ipv4Addr,
    /// OpenVPN's port 1194 (IANA) on the server; the client's source port.
    pub local_port: u16,
    pub remote_port: u16,
    /// `--proto`: what carries the tunnel's packets.
    pub proto: OpenVpnProto,
    /// `--cipher`.
    pub cipher: OpenVpnCipher,
    /// `--auth`.
    pub auth: OpenVpnAuth,
    /// Send the 4-octet packet id (`--replay`). Seed 002 §3.2 counts none.
    #[serde(default)]
    pub replay: bool,
    /// `--fragment max`: no UDP payload larger than this; `None` = off.
    #[serde(default)]
    pub fragment: Option<u16>,
    /// TUN: the interface's MTU (unused for TAP, whose port has its own).
    pub mtu: u16,
    /// TUN: destinations routed into the tunnel.
    #[serde(default)]
    pub protects: Vec<(Ipv4Addr, u8)>,
    /// The number both ends derive their keys from (the scenario's tunnel index).
    pub key: u32,
}

/// One end of a PPPoE session (RFC 2516), a PPP interface of the node over the
/// Ethernet-like port `port` (a link's port or an OpenVPN TAP port).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PppoeConfig {
    /// The PPP interface's name (`ppp0`).
    pub name: String,
    pub port: u16,
    /// The Access Concentrator (answers discovery, authenticates, assigns the address).
    pub server: bool,
    /// RFC 2516 App. A Service-Name: the server offers it, the client asks for it
    /// (empty: any service).
    pub service_name: String,
    /// The AC-Name a server sends.
    #[serde(default)]
    pub ac_name: String,
    /// The session id a server assigns (non-zero, RFC 2516 §5.4).
    #[serde(default)]
    pub session_id: u16,
    /// What the server demands: CHAP or PAP (MS-CHAPv2 is PPTP's).
    pub auth: PppAuth,
    /// The client's name and the shared secret.
    pub user: String,
    pub secret: String,
    /// The interface MTU; also the MRU each end requests in LCP (RFC 1661 §6.1; at most
    /// 1492 over PPPoE, RFC 2516 §7).
    pub mtu: u16,
    /// This end's address on the PPP link (for a client, the one the server assigns).
    pub local: Ipv4Addr,
    /// The other end's address (a server assigns it to the client with IPCP).
    pub peer: Ipv4Addr,
    /// Destinations routed into the PPP interface (the peer's address at least).
    pub routes: Vec<(Ipv4Addr, u8)>,
}
/// In tunnel mode (RFC 4301 §5.1.2.1; RFC 4303 §3.1.2) a virtual interface of the node:
/// packets the stack routes to a `protects` destination are sealed and sent from `local`
/// to `remote` inside an outer IPv4 header; ESP (AH) from `remote` with SPI `spi_in` is
/// opened and its inner packet taken as received on this interface.
///
/// The keys are not configured: both ends derive them from the SPI of each direction
/// (`ipsec::derive_key`), which stands in for IKE. Nothing in a simulation is secret.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct IpsecTunnelConfig {
    /// The interface name, for reports (`ipsec0`).
    pub name: String,
    /// The outer source: one of the node's own addresses.
    pub local: Ipv4Addr,
    /// The outer destination: the other end's address.
    pub remote: Ipv4Addr,
    /// SPI of the outbound SA (the other end's `spi_in`). RFC 4303 §2.1: 1..=255 are
    /// reserved, 0 is never sent.
    pub spi_out: u32,
    /// SPI of the inbound SA (the other end's `spi_out`).
    pub spi_in: u32,
    /// The ESP cipher (`wire::ipsec::Cipher`).
    pub cipher: IpsecCipher,
    /// The integrity algorithm (`wire::ipsec::Auth`).
    pub auth: IpsecAuth,
    /// Destinations routed into the tunnel: (network, prefix length).
    pub protects: Vec<(Ipv4Addr, u8)>,
    /// The tunnel interface's MTU: larger inner packets are fragmented before
    /// encapsulation (or refused with DF); the outer packet is fragmented after
    /// encapsulation when it exceeds the egress interface's MTU. Unused in transport mode.
    pub mtu: u16,
    /// Tunnel mode (the default) or transport mode.
    #[serde(default)]
    pub mode: IpsecMode,
    /// ESP (the default) or AH.
    #[serde(default)]
    pub protocol: IpsecProtocol,
    /// Transport mode: besides the peer's address, the SA selects only this IP protocol
    /// (RFC 4301 §4.4.1.1 "Next Layer Protocol")...
    #[serde(default)]
    pub select_protocol: Option<u8>,
    /// ... and only UDP or TCP from this local port (RFC 4301 §4.4.1.1 "Local Port";
    /// outbound, the source port) ...
    #[serde(default)]
    pub select_local_port: Option<u16>,
    /// ... and to this remote port ("Remote Port"; outbound, the destination port), so
    /// that several SAs to one host are told apart, as an SPD's entries are. The most
    /// specific SA that selects a packet wins (RFC 4301 §4.4.1: the SPD is ordered and
    /// the more specific entries come first).
    #[serde(default)]
    pub select_remote_port: Option<u16>,
    /// Tunnel mode, an inner packet larger than the tunnel can carry unfragmented:
    /// `Before` fragments the inner packet to the tunnel's effective MTU (the largest
    /// inner packet whose ESP/AH packet fits the path MTU to `remote`, and at most
    /// `mtu`) and seals each fragment, as Linux does for IPv4 ESP tunnels (the xfrm
    /// route's MTU, `esp4_get_mtu`); `After` seals inner packets up to `mtu` whole and
    /// fragments the outer packet (RFC 4459 §3 discusses both). With DF set on the inner
    /// packet either way an ICMP "fragmentation needed" carries the effective MTU
    /// back (RFC 4301 §8.2.1). Default `After`, the first version's behaviour.
    #[serde(default)]
    pub fragment: TunnelFragment,
}

/// Where a tunnel fragments a packet too big for it (RFC 4459 §3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum TunnelFragment {
    /// The inner packet, before encapsulation (pre-fragmentation).
    Before,
    /// The outer packet, after encapsulation (post-fragmentation).
    #[default]
    After,
}

/// RFC 4301 §4.1: how an SA carries the packets it protects.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum IpsecMode {
    /// A virtual interface (RFC 4301 §5.1.2.1): packets routed to `protects` are sealed
    /// whole inside an outer IPv4 header.
    #[default]
    Tunnel,
    /// RFC 4303 §3.1.1, RFC 4302 §3.1.1: the node's own packets to and from `remote`
    /// carry ESP or AH between their IPv4 header and payload; `protects` and `mtu` are
    /// unused.
    Transport,
}

/// The IPsec protocol of an SA.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum IpsecProtocol {
    /// Encapsulating Security Payload (RFC 4303).
    #[default]
    Esp,
    /// Authentication Header (RFC 4302); its `cipher` must be `null`.
    Ah,
}

/// An ESP cipher, as `wire::ipsec::Cipher` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub enum IpsecCipher {
    /// RFC 2410: no confidentiality.
    #[serde(rename = "null")]
    Null,
    /// RFC 2451: triple DES (EDE) in CBC mode.
    #[serde(rename = "3des-cbc")]
    TripleDesCbc,
    /// RFC 3602: AES-128 in CBC mode.
    #[serde(rename = "aes-128-cbc")]
    Aes128Cbc,
    /// RFC 3602: AES-192 in CBC mode.
    #[serde(rename = "aes-192-cbc")]
    Aes192Cbc,
    /// RFC 3602: AES-256 in CBC mode.
    #[serde(rename = "aes-256-cbc")]
    Aes256Cbc,
    /// RFC 4106: AES-128 in GCM with a 16-octet ICV.
    #[serde(rename = "aes-128-gcm")]
    Aes128Gcm,
    /// RFC 4106: AES-256 in GCM with a 16-octet ICV.
    #[serde(rename = "aes-256-gcm")]
    Aes256Gcm,
}

/// An IPsec integrity algorithm, as `wire::ipsec::Auth` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub enum IpsecAuth {
    /// No separate integrity (ESP with a combined-mode cipher, or confidentiality only).
    #[serde(rename = "none")]
    None,
    /// RFC 2403: HMAC-MD5-96.
    #[serde(rename = "hmac-md5-96")]
    HmacMd5_96,
    /// RFC 2404: HMAC-SHA-1-96.
    #[serde(rename = "hmac-sha1-96")]
    HmacSha1_96,
    /// RFC 4868 §2.1: HMAC-SHA-256-128.
    #[serde(rename = "hmac-sha256-128")]
    HmacSha256_128,
}

/// An OpenVPN end's virtual device.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum OpenVpnDev {
    /// An Ethernet device: frames are sealed whole (a layer-2 VPN).
    Tap,
    /// A point-to-point IP device: IPv4 packets are sealed.
    Tun,
}

/// What carries an OpenVPN tunnel's packets (`--proto`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum OpenVpnProto {
    /// UDP datagrams, one packet each.
    Udp,
    /// One TCP connection, each packet prefixed by its 2-octet length.
    Tcp,
}

/// OpenVPN's data channel cipher (`--cipher`), as `wire::openvpn::Cipher` models it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub enum OpenVpnCipher {
    /// No encryption.
    #[serde(rename = "none")]
    None,
    /// Blowfish in CBC mode (OpenVPN 2's old default).
    #[serde(rename = "bf-cbc")]
    BfCbc,
    /// AES-128 in CBC mode.
    #[serde(rename = "aes-128-cbc")]
    Aes128Cbc,
    /// AES-256 in CBC mode.
    #[serde(rename = "aes-256-cbc")]
    Aes256Cbc,
    /// AES-128 in GCM (AEAD).
    #[serde(rename = "aes-128-gcm")]
    Aes128Gcm,
    /// AES-256 in GCM (AEAD).
    #[serde(rename = "aes-256-gcm")]
    Aes256Gcm,
}

/// OpenVPN's data channel HMAC (`--auth`), as `wire::openvpn::Auth` models it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum OpenVpnAuth {
    /// No HMAC.
    None,
    /// HMAC-SHA1, OpenVPN's default.
    Sha1,
    /// HMAC-SHA256.
    Sha256,
    /// HMAC-SHA512.
    Sha512,
}

/// The PPP authentication protocol a server demands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum PppAuth {
    /// PAP (RFC 1334).
    Pap,
    /// CHAP with MD5 (RFC 1994).
    Chap,
    /// MS-CHAPv2 (RFC 2759): PPTP only.
    Mschapv2,
}
