//! IPsec in the simulator: ESP (RFC 4303) or AH (RFC 4302), in tunnel mode as a virtual
//! interface of a node (RFC 4301 §5.1.2.1) or in transport mode on the node's own
//! traffic with one peer (RFC 4303 §3.1.1, RFC 4302 §3.1.1).
//!
//! An [`IpsecTunnel`] is one end of a tunnel-mode SA pair: the outbound SA seals every
//! packet the stack routes into the tunnel (the whole inner IPv4 packet, next header 4)
//! behind an outer IPv4 header from `local` to `remote`; the inbound SA opens ESP (or
//! verifies and strips AH) from `remote` with its SPI. The bytes are real: `wire::esp`
//! pads (RFC 4303 §2.4), encrypts and computes the ICV with the RustCrypto ciphers;
//! `wire::ah` computes the ICV over the immutable fields (RFC 4302 §3.3.3); so the
//! overhead, the padding and the fragmentation they cause fall out of the packets.
//!
//! What the stack does around it (see `ip`): it routes the `protects` destinations to
//! the tunnel interface, fragments an inner packet larger than the tunnel MTU before
//! encapsulation, routes the outer packet normally (never back into a tunnel) and
//! fragments it after encapsulation if it exceeds the egress MTU; it reassembles the
//! outer fragments before decapsulation and takes the inner packet as received on the
//! tunnel interface.
//!
//! An [`IpsecTransport`] is one end of a transport-mode SA pair between two hosts. It
//! selects the node's own outbound packets to `remote` (and, when configured, of one IP
//! protocol, from one local and to one remote UDP/TCP port: several SAs to one host are
//! told apart so, as RFC 4301 §4.4.1.1's SPD selectors do); the stack inserts ESP or AH between the IPv4
//! header and the payload of the whole datagram and only then routes and fragments it
//! (RFC 4303 §3.1.1: transport mode applies to whole datagrams; a host fragments the
//! ESP packet). Inbound, the reassembled datagram is verified and restored, then
//! delivered as if it had arrived so.
//!
//! Keys: no IKE is modelled. Both ends derive each direction's keys from that
//! direction's SPI ([`derive_key`]), so a configuration with matching SPIs agrees.
//! IVs: a seeded stream per SA for CBC (RFC 3602 §3 asks for unpredictable IVs; a
//! seeded stream is reproducible and as good for the bytes on the wire), the sequence
//! number for GCM (RFC 4106 §3.1 asks only for uniqueness).
//!
//! Each SA pair counts the packets and bytes it sealed and opened ([`SaReport`]): what
//! each tunnel (VPN) carried, for the node's results.
//!
//! Not modelled: anti-replay (RFC 4303 §3.4.3, RFC 4302 §3.4.3; the sequence number is
//! sent, not checked), SA lifetimes and rekeying, the inbound SPD check that drops clear
//! packets which should have been protected (RFC 4301 §5.2), ESN, TFC padding, SA
//! bundles (one SA per packet: the most specific transport SA, else the route).

use std::net::Ipv4Addr;

use wire::ipsec::{Auth, Cipher, Mode, OuterHeader, SecurityAssociation};
use wire::{ah, esp, ipv4, udp, IpProtocol};

use crate::config::{IpsecTunnelConfig, TunnelFragment};
use crate::node::ip::DEFAULT_TTL;
use crate::rng::{stream_key, RandomStream};
use crate::tunnel::{Action, Host, Interface, SaReport, TunnelEnd, TunnelIo, HEADROOM};
use qoslab_plan::{IpsecAuth, IpsecCipher, IpsecProtocol};

/// The key material of the SA with SPI `spi`: `len` bytes from a stream named by the
/// SPI and `purpose` ("enc" or "auth"). Both ends of a tunnel compute the same bytes.
pub fn derive_key(spi: u32, purpose: &str, len: usize) -> Vec<u8> {
    let mut stream = RandomStream::from_key(stream_key(0, u64::from(spi), &format!("ipsec-{purpose}-key")));
    let mut key = Vec::with_capacity(len + 8);
    while key.len() < len {
        key.extend_from_slice(&stream.next_u64().to_le_bytes());
    }
    key.truncate(len);
    key
}

/// The tunnel-mode SA with SPI `spi`, keys derived by [`derive_key`].
pub fn security_association(spi: u32, cipher: Cipher, auth: Auth) -> Result<SecurityAssociation, String> {
    security_association_in(spi, cipher, auth, Mode::Tunnel)
}

/// The SA with SPI `spi` in `mode`, keys derived by [`derive_key`].
pub fn security_association_in(
    spi: u32,
    cipher: Cipher,
    auth: Auth,
    mode: Mode,
) -> Result<SecurityAssociation, String> {
    let enc = derive_key(spi, "enc", cipher.key_len());
    let mac = derive_key(spi, "auth", auth.key_len());
    SecurityAssociation::new(spi, cipher, auth, &enc, &mac, mode).map_err(|e| match e {
        wire::Error::Unsupported => {
            format!("{cipher} carries its own ICV (RFC 4106): auth must be \"none\", not \"{auth}\"")
        }
        e => format!("SA {spi:#x}: {e:?}"),
    })
}

/// Bytes after the IPv4 header of the datagram at the start of `packet` (by its total
/// length and IHL, RFC 791 §3.1).
fn after_ip_header(packet: &[u8]) -> u64 {
    ipv4::Packet::new_checked(packet).map_or(0, |v| (usize::from(v.total_len()) - v.header_len()) as u64)
}

/// ESP or AH.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    Esp,
    Ah,
}

impl Protocol {
    fn ip_protocol(self) -> IpProtocol {
        match self {
            Protocol::Esp => IpProtocol::Esp,
            Protocol::Ah => IpProtocol::Ah,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Protocol::Esp => "ESP",
            Protocol::Ah => "AH",
        }
    }
}

#[derive(Debug, Clone, Copy, Default)]
struct SaCounts {
    sealed_packets: u64,
    sealed_bytes: u64,
    opened_packets: u64,
    opened_bytes: u64,
    failed: u64,
}

/// The wire crate's cipher for the one the plan names.
fn wire_cipher(cipher: IpsecCipher) -> Cipher {
    use wire::ipsec::AesKeySize::{Aes128, Aes192, Aes256};
    match cipher {
        IpsecCipher::Null => Cipher::Null,
        IpsecCipher::TripleDesCbc => Cipher::TripleDesCbc,
        IpsecCipher::Aes128Cbc => Cipher::AesCbc(Aes128),
        IpsecCipher::Aes192Cbc => Cipher::AesCbc(Aes192),
        IpsecCipher::Aes256Cbc => Cipher::AesCbc(Aes256),
        IpsecCipher::Aes128Gcm => Cipher::AesGcm(Aes128),
        IpsecCipher::Aes256Gcm => Cipher::AesGcm(Aes256),
    }
}

/// The wire crate's integrity algorithm for the one the plan names.
fn wire_auth(auth: IpsecAuth) -> Auth {
    match auth {
        IpsecAuth::None => Auth::None,
        IpsecAuth::HmacMd5_96 => Auth::HmacMd5_96,
        IpsecAuth::HmacSha1_96 => Auth::HmacSha1_96,
        IpsecAuth::HmacSha256_128 => Auth::HmacSha256_128,
    }
}

/// The outbound and inbound SAs of one end, and what builds and opens their packets.
struct SaPair {
    protocol: Protocol,
    outbound: SecurityAssociation,
    inbound: SecurityAssociation,
    /// The CBC IVs of the outbound SA.
    ivs: RandomStream,
    counts: SaCounts,
    /// ESP: the flow packet (if any) each outbound sequence number carried, index
    /// `seq - 1`, so that conservation can charge an encrypted packet's drop (or find it
    /// in the network) to its flow.
    sealed: Vec<Option<crate::conservation::Found>>,
}

impl SaPair {
    /// The pair of `config` in `mode`; an unknown name, a reserved SPI, HMAC with GCM, AH
    /// with a cipher or without an integrity algorithm is an error naming it.
    fn new(config: &IpsecTunnelConfig, mode: Mode) -> Result<SaPair, String> {
        let protocol = match config.protocol {
            IpsecProtocol::Esp => Protocol::Esp,
            IpsecProtocol::Ah => Protocol::Ah,
        };
        let (cipher, auth) = (wire_cipher(config.cipher), wire_auth(config.auth));
        if protocol == Protocol::Ah {
            if cipher != Cipher::Null {
                return Err(format!("AH does not encrypt (RFC 4302): cipher must be \"null\", not \"{cipher}\""));
            }
            if auth == Auth::None {
                return Err("AH always carries an ICV (RFC 4302 §3.2): auth must not be \"none\"".into());
            }
        }
        for (what, spi) in [("spi_out", config.spi_out), ("spi_in", config.spi_in)] {
            // RFC 4303 §2.1, RFC 4302 §2.4: 1..=255 are reserved by IANA, 0 is local.
            if spi < 256 {
                return Err(format!("{what} {spi}: SPIs 0 to 255 are reserved (RFC 4303 §2.1)"));
            }
        }
        Ok(SaPair {
            protocol,
            outbound: security_association_in(config.spi_out, cipher, auth, mode)?,
            inbound: security_association_in(config.spi_in, cipher, auth, mode)?,
            ivs: RandomStream::from_key(stream_key(0, u64::from(config.spi_out), "ipsec-iv")),
            counts: SaCounts::default(),
            sealed: Vec::new(),
        })
    }

    fn next_iv(&mut self) -> Vec<u8> {
        let len = self.outbound.iv_len();
        if self.outbound.cipher.is_aead() {
            // RFC 4106 §3.1: the explicit IV must be unique per key; the sequence is.
            let mut iv = vec![0u8; len];
            iv[len - 4..].copy_from_slice(&self.outbound.seq.to_be_bytes());
            return iv;
        }
        let mut iv = Vec::with_capacity(len + 8);
        while iv.len() < len {
            iv.extend_from_slice(&self.ivs.next_u64().to_le_bytes());
        }
        iv.truncate(len);
        iv
    }

    /// Builds the outbound packet with `build` (given the SA and an IV) and advances the
    /// sequence number.
    fn seal(
        &mut self,
        name: &str,
        inner: &[u8],
        out: &mut Vec<u8>,
        build: impl FnOnce(&SecurityAssociation, &[u8], &mut Vec<u8>) -> wire::Result<()>,
    ) -> Result<(), String> {
        if self.outbound.seq == 0 {
            // RFC 4303 §3.3.3 (RFC 4302 §3.3.2): the counter must not cycle; the SA would
            // be replaced.
            return Err(format!("{name}: sequence numbers of SA {:#x} used up", self.outbound.spi));
        }
        let iv = if self.protocol == Protocol::Esp { self.next_iv() } else { Vec::new() };
        let start = out.len();
        build(&self.outbound, &iv, out)
            .map_err(|e| format!("{name}: {} encapsulation: {e:?}", self.protocol.name()))?;
        if self.protocol == Protocol::Esp {
            let index = self.outbound.seq as usize - 1;
            if self.sealed.len() < index {
                self.sealed.resize(index, None);
            }
            self.sealed.push(crate::conservation::flow_packet(inner));
        }
        self.outbound.next_seq();
        self.counts.sealed_packets += 1;
        self.counts.sealed_bytes += after_ip_header(&out[start..]);
        Ok(())
    }

    /// The flow packet ESP packet `seq` of outbound SA `spi` carried, if this pair sealed it.
    fn sealed_packet(&self, spi: u32, seq: u32) -> Option<crate::conservation::Found> {
        if spi != self.outbound.spi || seq == 0 {
            return None;
        }
        self.sealed.get(seq as usize - 1).copied().flatten()
    }

    fn report(&self, name: &str, mode: &'static str) -> SaReport {
        let c = self.counts;
        SaReport {
            name: name.to_string(),
            mode,
            protocol: match self.protocol {
                Protocol::Esp => "esp",
                Protocol::Ah => "ah",
            },
            spi_out: self.outbound.spi,
            spi_in: self.inbound.spi,
            sealed_packets: c.sealed_packets,
            sealed_bytes: c.sealed_bytes,
            opened_packets: c.opened_packets,
            opened_bytes: c.opened_bytes,
            failed: c.failed,
        }
    }

    /// Whether `packet` is ESP/AH from `remote` to `local` with the inbound SPI.
    fn claims(&self, packet: &[u8], local: Ipv4Addr, remote: Ipv4Addr) -> bool {
        let Ok(view) = ipv4::Packet::new_checked(packet) else { return false };
        if view.next_header() != self.protocol.ip_protocol() || view.src_addr() != remote || view.dst_addr() != local {
            return false;
        }
        let spi = match self.protocol {
            Protocol::Esp => esp::Packet::new_checked(view.payload()).map(|p| p.spi()),
            Protocol::Ah => ah::Packet::new_checked(view.payload()).map(|p| p.spi()),
        };
        spi.is_ok_and(|spi| spi == self.inbound.spi)
    }

    /// Opens ESP (verifies and strips AH) by the inbound SA's mode.
    fn open(&mut self, name: &str, remote: Ipv4Addr, packet: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
        let result = match self.protocol {
            Protocol::Esp => esp::decapsulate(&self.inbound, packet, out),
            Protocol::Ah => ah::strip(&self.inbound, packet, out),
        };
        match result {
            Ok(_) => {
                self.counts.opened_packets += 1;
                self.counts.opened_bytes += after_ip_header(packet);
            }
            Err(_) => self.counts.failed += 1,
        }
        result.map(|_| ()).map_err(|e| {
            let why = match (e, self.protocol) {
                (wire::Error::Checksum, Protocol::Esp) => "the ICV does not verify (RFC 4303 §3.4.4)".to_string(),
                (wire::Error::Checksum, Protocol::Ah) => "the ICV does not verify (RFC 4302 §3.4.4)".to_string(),
                (wire::Error::Unsupported, Protocol::Esp) => {
                    "a dummy packet (next header 59, RFC 4303 §2.6)".to_string()
                }
                (e, _) => format!("{e:?}"),
            };
            format!("{} from {remote} on {name} dropped: {why}", self.protocol.name())
        })
    }
}

/// One end of an IPsec tunnel (see the module doc).
pub struct IpsecTunnel {
    pub name: String,
    pub local: Ipv4Addr,
    pub remote: Ipv4Addr,
    sas: SaPair,
    fragment: TunnelFragment,
}

/// The name the ESP-only first version had.
pub type EspTunnel = IpsecTunnel;

impl std::fmt::Debug for IpsecTunnel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IpsecTunnel")
            .field("name", &self.name)
            .field("protocol", &self.sas.protocol)
            .field("local", &self.local)
            .field("remote", &self.remote)
            .field("spi_out", &self.sas.outbound.spi)
            .field("spi_in", &self.sas.inbound.spi)
            .finish()
    }
}

impl IpsecTunnel {
    /// The tunnel of `config`; an unknown cipher, auth or protocol name, a reserved SPI,
    /// HMAC with GCM, or AH with a cipher is an error naming it.
    pub fn new(config: &IpsecTunnelConfig) -> Result<IpsecTunnel, String> {
        Ok(IpsecTunnel {
            name: config.name.clone(),
            local: config.local,
            remote: config.remote,
            sas: SaPair::new(config, Mode::Tunnel)?,
            fragment: config.fragment,
        })
    }

    /// The outbound SA (its `seq` is the next sequence number to send).
    pub fn outbound(&self) -> &SecurityAssociation {
        &self.sas.outbound
    }
}

impl IpsecTunnel {
    /// Seals the IPv4 packet `inner` and appends the outer IPv4 packet, with
    /// Identification `ident`, to `out`.
    pub fn encapsulate(&mut self, inner: &[u8], ident: u16, out: &mut Vec<u8>) -> Result<(), String> {
        let outer = OuterHeader { src: self.local, dst: self.remote, ttl: DEFAULT_TTL, ident };
        let protocol = self.sas.protocol;
        self.sas.seal(&self.name, inner, out, |sa, iv, out| match protocol {
            Protocol::Esp => esp::encapsulate_tunnel(sa, &outer, inner, iv, out),
            Protocol::Ah => ah::insert_tunnel(sa, &outer, inner, out),
        })
    }

    /// Checks and opens a claimed datagram; appends the inner IPv4 packet to `out`.
    pub fn decapsulate(&mut self, packet: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
        self.sas.open(&self.name, self.remote, packet, out)
    }
}

impl TunnelEnd for IpsecTunnel {
    fn name(&self) -> &str {
        &self.name
    }

    /// Tunnel mode (RFC 4301 §5.1.2.1): the outer packet, after the stack's headroom,
    /// with the Identification the stack reserved; the inner packet dropped if the SA
    /// cannot seal it.
    fn send(&mut self, _now: u64, inner: &[u8], io: &mut TunnelIo) {
        let mut outer = vec![0u8; HEADROOM];
        match self.encapsulate(inner, io.ident, &mut outer) {
            Ok(()) => io.actions.push(Action::Routed(outer)),
            Err(reason) => io.drop(reason, Some(inner.to_vec())),
        }
    }

    fn claims(&self, packet: &[u8]) -> bool {
        self.sas.claims(packet, self.local, self.remote)
    }

    fn receive(&mut self, _now: u64, packet: &[u8], io: &mut TunnelIo) -> Result<(), String> {
        let mut inner = Vec::with_capacity(packet.len());
        inner.resize(HEADROOM, 0);
        self.decapsulate(packet, &mut inner)?;
        io.actions.push(Action::Inner(inner));
        Ok(())
    }

    fn local(&self) -> Option<Ipv4Addr> {
        Some(self.local)
    }

    fn sa_report(&self) -> Option<SaReport> {
        Some(self.sas.report(&self.name, "tunnel"))
    }

    fn sealed(&self, spi: u32, seq: u32) -> Option<crate::conservation::Found> {
        self.sas.sealed_packet(spi, seq)
    }

    fn remote(&self) -> Option<Ipv4Addr> {
        Some(self.remote)
    }

    /// The largest inner packet whose tunnel-mode packet fits `outer_mtu`, as Linux's
    /// `esp4_get_mtu`: ESP: outer header, ESP header and IV, the inner packet with its
    /// 2-octet trailer padded to the alignment (RFC 4303 §2.4), the ICV; AH: outer
    /// header, AH header with its ICV padded to 32 bits (RFC 4302 §2.2).
    fn inner_mtu(&self, outer_mtu: usize) -> usize {
        let sa = &self.sas.outbound;
        match self.sas.protocol {
            Protocol::Esp => {
                let room = outer_mtu.saturating_sub(ipv4::HEADER_LEN + esp::HEADER_LEN + sa.iv_len() + sa.icv_len());
                let align = sa.alignment();
                (room / align * align).saturating_sub(esp::TRAILER_LEN)
            }
            Protocol::Ah => outer_mtu.saturating_sub(ipv4::HEADER_LEN + ah::FIXED_LEN + sa.icv_len().div_ceil(4) * 4),
        }
    }

    fn fragment(&self) -> TunnelFragment {
        self.fragment
    }
}

/// One end of a transport-mode SA pair (see the module doc).
pub struct IpsecTransport {
    pub name: String,
    pub local: Ipv4Addr,
    pub remote: Ipv4Addr,
    select_protocol: Option<IpProtocol>,
    select_local_port: Option<u16>,
    select_remote_port: Option<u16>,
    sas: SaPair,
}

impl std::fmt::Debug for IpsecTransport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IpsecTransport")
            .field("name", &self.name)
            .field("protocol", &self.sas.protocol)
            .field("remote", &self.remote)
            .field("select_protocol", &self.select_protocol)
            .field("select_local_port", &self.select_local_port)
            .field("select_remote_port", &self.select_remote_port)
            .finish()
    }
}

impl IpsecTransport {
    /// The transport-mode end of `config`; errors as [`IpsecTunnel::new`], and a port
    /// selector on a protocol without ports.
    pub fn new(config: &IpsecTunnelConfig) -> Result<IpsecTransport, String> {
        let select_protocol = config.select_protocol.map(IpProtocol::from);
        let has_port = config.select_local_port.is_some() || config.select_remote_port.is_some();
        if has_port && !matches!(select_protocol, None | Some(IpProtocol::Udp | IpProtocol::Tcp)) {
            return Err(format!(
                "a port selector with select_protocol {}: only UDP (17) and TCP (6) have ports",
                config.select_protocol.unwrap_or(0)
            ));
        }
        Ok(IpsecTransport {
            name: config.name.clone(),
            local: config.local,
            remote: config.remote,
            select_protocol,
            select_local_port: config.select_local_port,
            select_remote_port: config.select_remote_port,
            sas: SaPair::new(config, Mode::Transport)?,
        })
    }

    /// The outbound SA (its `seq` is the next sequence number to send).
    pub fn outbound(&self) -> &SecurityAssociation {
        &self.sas.outbound
    }
}

/// The (source, destination) ports of a UDP or TCP datagram (both start with them).
fn ports(protocol: IpProtocol, payload: &[u8]) -> Option<(u16, u16)> {
    if !matches!(protocol, IpProtocol::Udp | IpProtocol::Tcp) || payload.len() < udp::HEADER_LEN {
        return None;
    }
    Some((u16::from_be_bytes([payload[0], payload[1]]), u16::from_be_bytes([payload[2], payload[3]])))
}

impl TunnelEnd for IpsecTransport {
    fn name(&self) -> &str {
        &self.name
    }

    /// Transport mode has no interface to route into (its method set is `selects`,
    /// `protect` and `unprotect`): a packet handed here is dropped.
    fn send(&mut self, _now: u64, inner: &[u8], io: &mut TunnelIo) {
        io.drop(format!("{}: a transport-mode SA is no interface", self.name), Some(inner.to_vec()));
    }

    fn receive(&mut self, _now: u64, _packet: &[u8], _io: &mut TunnelIo) -> Result<(), String> {
        Err(format!("{}: a transport-mode SA is no interface (the stack calls unprotect)", self.name))
    }

    fn selects(&self, packet: &[u8]) -> bool {
        let Ok(view) = ipv4::Packet::new_checked(packet) else { return false };
        if view.dst_addr() != self.remote || view.src_addr() != self.local || view.is_fragment() {
            return false;
        }
        let protocol = view.next_header();
        if self.select_protocol.is_some_and(|p| p != protocol) {
            return false;
        }
        if self.select_local_port.is_none() && self.select_remote_port.is_none() {
            return true;
        }
        // Outbound, the local port is the source and the remote port the destination.
        ports(protocol, view.payload()).is_some_and(|(src, dst)| {
            self.select_local_port.is_none_or(|p| p == src) && self.select_remote_port.is_none_or(|p| p == dst)
        })
    }

    fn specificity(&self) -> u8 {
        u8::from(self.select_protocol.is_some())
            + 2 * u8::from(self.select_local_port.is_some())
            + 2 * u8::from(self.select_remote_port.is_some())
    }

    fn protect(&mut self, packet: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
        let protocol = self.sas.protocol;
        self.sas.seal(&self.name, packet, out, |sa, iv, out| match protocol {
            Protocol::Esp => esp::encapsulate_transport(sa, packet, iv, out),
            Protocol::Ah => ah::insert_transport(sa, packet, out),
        })
    }

    fn claims(&self, packet: &[u8]) -> bool {
        self.sas.claims(packet, self.local, self.remote)
    }

    fn unprotect(&mut self, packet: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
        self.sas.open(&self.name, self.remote, packet, out)
    }

    fn sa_report(&self) -> Option<SaReport> {
        Some(self.sas.report(&self.name, "transport"))
    }

    fn sealed(&self, spi: u32, seq: u32) -> Option<crate::conservation::Found> {
        self.sas.sealed_packet(spi, seq)
    }
}

/// The node's IPsec SAs (its plan's `ipsec` list): tunnel mode as interfaces the stack
/// drives, transport mode on the node's own traffic.
pub fn attach(config: &crate::config::NodeConfig, host: &mut dyn Host) -> Result<(), String> {
    for (i, t) in config.ipsec.iter().enumerate() {
        let fail = |e: String| format!("node {}: ipsec[{i}] ({}): {e}", config.name, t.name);
        if !host.has_address(t.local) {
            return Err(fail(format!("local address {} is not an address of the node", t.local)));
        }
        match t.mode {
            qoslab_plan::IpsecMode::Tunnel => {
                let tunnel = IpsecTunnel::new(t).map_err(fail)?;
                let iface = Interface {
                    name: t.name.clone(),
                    mac: wire::ethernet::Address([0; 6]),
                    addr: None,
                    mtu: usize::from(t.mtu),
                };
                host.add_stack_tunnel(iface, &t.protects, Box::new(tunnel));
            }
            qoslab_plan::IpsecMode::Transport => host.add_transport(Box::new(IpsecTransport::new(t).map_err(fail)?)),
        }
    }
    Ok(())
}

#[cfg(test)]
mod test {
    use super::*;
    use qoslab_plan::IpsecMode;

    fn config(spi_out: u32, spi_in: u32, local: [u8; 4], remote: [u8; 4]) -> IpsecTunnelConfig {
        IpsecTunnelConfig {
            name: "ipsec0".into(),
            local: Ipv4Addr::from(local),
            remote: Ipv4Addr::from(remote),
            spi_out,
            spi_in,
            cipher: IpsecCipher::TripleDesCbc,
            auth: IpsecAuth::HmacSha1_96,
            protects: vec![],
            mtu: 1500,
            mode: IpsecMode::Tunnel,
            protocol: IpsecProtocol::Esp,
            select_protocol: None,
            select_local_port: None,
            select_remote_port: None,
            fragment: TunnelFragment::After,
        }
    }

    fn inner() -> Vec<u8> {
        let repr = ipv4::Repr::new(Ipv4Addr::new(10, 0, 1, 1), Ipv4Addr::new(10, 0, 2, 1), IpProtocol::Udp, 12, 64);
        let mut packet = Vec::new();
        repr.encapsulate(&[7u8; 12], &mut packet);
        packet
    }

    #[test]
    fn the_two_ends_agree_and_the_bytes_are_esp() {
        let mut a = EspTunnel::new(&config(0x1000, 0x1001, [10, 0, 1, 1], [10, 0, 2, 1])).unwrap();
        let mut b = EspTunnel::new(&config(0x1001, 0x1000, [10, 0, 2, 1], [10, 0, 1, 1])).unwrap();
        let mut outer = Vec::new();
        a.encapsulate(&inner(), 9, &mut outer).unwrap();
        // 20 outer + 8 ESP + 8 IV + (32 inner + 2 → 40) + 12 ICV.
        assert_eq!(outer.len(), 20 + 8 + 8 + 40 + 12);
        assert!(b.claims(&outer));
        assert!(!a.claims(&outer), "a does not take its own ESP");
        let mut back = Vec::new();
        b.decapsulate(&outer, &mut back).unwrap();
        assert_eq!(back, inner());
        // The sequence number advances; the IV changes.
        let mut second = Vec::new();
        a.encapsulate(&inner(), 10, &mut second).unwrap();
        assert_eq!(esp::Packet::new_checked(&second[20..]).unwrap().seq_number(), 2);
        assert_ne!(outer[28..36], second[28..36]);
    }

    #[test]
    fn the_inner_mtu_is_the_largest_packet_whose_esp_fits() {
        let a = EspTunnel::new(&config(0x1000, 0x1001, [10, 0, 1, 1], [10, 0, 2, 1])).unwrap();
        // 3DES-CBC (8-byte blocks and IV) with HMAC-SHA1-96 (12 bytes) in 1500:
        // 20 + 8 + 8 + pad8(L + 2) + 12 ≤ 1500 → pad8(L + 2) ≤ 1452 → L ≤ 1448 - 2 = 1446.
        let mtu = a.inner_mtu(1500);
        assert_eq!(mtu, 1446);
        for (len, fits) in [(mtu, true), (mtu + 1, false)] {
            let repr =
                ipv4::Repr::new(Ipv4Addr::new(10, 0, 1, 1), Ipv4Addr::new(10, 0, 2, 1), IpProtocol::Udp, len - 20, 64);
            let mut packet = Vec::new();
            repr.encapsulate(&vec![0u8; len - 20], &mut packet);
            let mut outer = Vec::new();
            let mut t = EspTunnel::new(&config(0x1000, 0x1001, [10, 0, 1, 1], [10, 0, 2, 1])).unwrap();
            t.encapsulate(&packet, 1, &mut outer).unwrap();
            assert_eq!(outer.len() <= 1500, fits, "{len}: {}", outer.len());
        }
    }

    #[test]
    fn a_changed_byte_is_refused() {
        let mut a = EspTunnel::new(&config(0x1000, 0x1001, [10, 0, 1, 1], [10, 0, 2, 1])).unwrap();
        let mut b = EspTunnel::new(&config(0x1001, 0x1000, [10, 0, 2, 1], [10, 0, 1, 1])).unwrap();
        let mut outer = Vec::new();
        a.encapsulate(&inner(), 9, &mut outer).unwrap();
        outer[40] ^= 1;
        let err = b.decapsulate(&outer, &mut Vec::new()).unwrap_err();
        assert!(err.contains("ICV"), "{err}");
    }

    #[test]
    fn bad_configurations_are_named() {
        let mut c = config(0x1000, 7, [10, 0, 1, 1], [10, 0, 2, 1]);
        assert!(EspTunnel::new(&c).unwrap_err().contains("reserved"));
        c.spi_in = 0x2000;
        c.cipher = IpsecCipher::Aes128Gcm;
        assert!(EspTunnel::new(&c).unwrap_err().contains("auth must be"));
        c.auth = IpsecAuth::None;
        assert!(EspTunnel::new(&c).is_ok());
    }

    #[test]
    fn transport_mode_esp_and_ah_restore_the_datagram_and_refuse_a_change() {
        for (protocol, cipher, len) in [("esp", "3des-cbc", 20 + 8 + 8 + 16 + 12), ("ah", "null", 20 + 24 + 12)] {
            let mut ca = config(0x1000, 0x1001, [10, 0, 1, 1], [10, 0, 2, 1]);
            let mut cb = config(0x1001, 0x1000, [10, 0, 2, 1], [10, 0, 1, 1]);
            for c in [&mut ca, &mut cb] {
                c.mode = IpsecMode::Transport;
                c.protocol = qoslab_plan::from_name(protocol).unwrap();
                c.cipher = qoslab_plan::from_name(cipher).unwrap();
            }
            let mut a = IpsecTransport::new(&ca).unwrap();
            let mut b = IpsecTransport::new(&cb).unwrap();
            assert!(a.selects(&inner()) && !b.selects(&inner()));
            let mut protected = Vec::new();
            a.protect(&inner(), &mut protected).unwrap();
            assert_eq!(protected.len(), len, "{protocol}");
            assert!(b.claims(&protected) && !a.claims(&protected));
            let mut back = Vec::new();
            b.unprotect(&protected, &mut back).unwrap();
            assert_eq!(back, inner(), "{protocol}");
            protected[len - 13] ^= 1; // the payload (AH) or the ciphertext (ESP)
            let err = b.unprotect(&protected, &mut Vec::new()).unwrap_err();
            assert!(err.contains("ICV"), "{protocol}: {err}");
        }
    }

    #[test]
    fn selectors_and_bad_transport_configurations() {
        let mut c = config(0x1000, 0x1001, [10, 0, 1, 1], [10, 0, 2, 1]);
        c.mode = IpsecMode::Transport;
        c.select_protocol = Some(17);
        c.select_remote_port = Some(9);
        let t = IpsecTransport::new(&c).unwrap();
        assert_eq!(t.specificity(), 3);
        let mut packet = inner();
        assert!(!t.selects(&packet), "UDP ports 0x0707, not 9");
        packet[20..22].copy_from_slice(&9u16.to_be_bytes()); // source port: the local one
        assert!(!t.selects(&packet), "9 is the remote (destination) port of the selector");
        packet[22..24].copy_from_slice(&9u16.to_be_bytes()); // destination port
        assert!(t.selects(&packet));
        c.select_remote_port = None;
        c.select_local_port = Some(9);
        let server = IpsecTransport::new(&c).unwrap();
        packet[22..24].copy_from_slice(&4000u16.to_be_bytes());
        assert!(server.selects(&packet), "the echo server's reply leaves from its local port 9");
        c.select_protocol = Some(1);
        assert!(IpsecTransport::new(&c).unwrap_err().contains("have ports"));
        c.select_local_port = None;
        c.select_protocol = None;
        c.protocol = IpsecProtocol::Ah;
        assert!(IpsecTransport::new(&c).unwrap_err().contains("does not encrypt"));
        c.cipher = IpsecCipher::Null;
        c.auth = IpsecAuth::None;
        assert!(IpsecTransport::new(&c).unwrap_err().contains("always carries an ICV"));
    }
}
