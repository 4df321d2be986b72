//! IPsec ESP in tunnel mode as a virtual interface of a node (RFC 4301 §5.1.2.1, RFC
//! 4303 §3.1.2).
//!
//! An [`EspTunnel`] is one end of an SA pair: the outbound SA seals every packet the
//! stack routes into the tunnel (the whole inner IPv4 packet, next header 4) behind an
//! outer IPv4 header from `local` to `remote`; the inbound SA opens ESP from `remote`
//! with its SPI. The bytes are real: `wire::esp` pads (RFC 4303 §2.4), encrypts and
//! computes the ICV with the RustCrypto ciphers, so the overhead, the padding and the
//! fragmentation they cause fall out of the packets.
//!
//! What the stack does around it (see `ip`): it routes the `protects` destinations to
//! the tunnel interface, fragments an inner packet larger than the tunnel MTU before
//! encapsulation, routes the outer packet normally (never back into a tunnel) and
//! fragments it after encapsulation if it exceeds the egress MTU; it reassembles the
//! outer fragments before decapsulation and takes the inner packet as received on the
//! tunnel interface.
//!
//! Keys: no IKE is modelled. Both ends derive each direction's keys from that
//! direction's SPI ([`derive_key`]), so a configuration with matching SPIs agrees.
//! IVs: a seeded stream per SA for CBC (RFC 3602 §3 asks for unpredictable IVs; a
//! seeded stream is reproducible and as good for the bytes on the wire), the sequence
//! number for GCM (RFC 4106 §3.1 asks only for uniqueness).
//!
//! Not modelled: anti-replay (RFC 4303 §3.4.3; the sequence number is sent, not
//! checked), SA lifetimes and rekeying, the inbound SPD check that drops clear packets
//! which should have been protected (RFC 4301 §5.2), ESN, TFC padding.

use std::net::Ipv4Addr;

use wire::esp;
use wire::ipsec::{Auth, Cipher, Mode, OuterHeader, SecurityAssociation};
use wire::{ipv4, IpProtocol};

use crate::config::IpsecTunnelConfig;
use crate::ip::{Tunnel, DEFAULT_TTL};
use crate::rng::{stream_key, RandomStream};

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
    let enc = derive_key(spi, "enc", cipher.key_len());
    let mac = derive_key(spi, "auth", auth.key_len());
    SecurityAssociation::new(spi, cipher, auth, &enc, &mac, Mode::Tunnel).map_err(|e| match e {
        wire::Error::Unsupported => format!("{cipher} carries its own ICV (RFC 4106): auth must be \"none\", not \"{auth}\""),
        e => format!("SA {spi:#x}: {e:?}"),
    })
}

/// One end of an ESP tunnel (see the module doc).
pub struct EspTunnel {
    pub name: String,
    pub local: Ipv4Addr,
    pub remote: Ipv4Addr,
    outbound: SecurityAssociation,
    inbound: SecurityAssociation,
    /// The CBC IVs of the outbound SA.
    ivs: RandomStream,
}

impl std::fmt::Debug for EspTunnel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EspTunnel")
            .field("name", &self.name)
            .field("local", &self.local)
            .field("remote", &self.remote)
            .field("spi_out", &self.outbound.spi)
            .field("spi_in", &self.inbound.spi)
            .finish()
    }
}

impl EspTunnel {
    /// The tunnel of `config`; an unknown cipher or auth name, a reserved SPI or HMAC
    /// with GCM is an error naming it.
    pub fn new(config: &IpsecTunnelConfig) -> Result<EspTunnel, String> {
        let cipher: Cipher = config.cipher.parse().map_err(|e| format!("{e}"))?;
        let auth: Auth = config.auth.parse().map_err(|e| format!("{e}"))?;
        for (what, spi) in [("spi_out", config.spi_out), ("spi_in", config.spi_in)] {
            // RFC 4303 §2.1: 1..=255 are reserved by IANA, 0 is for local use only.
            if spi < 256 {
                return Err(format!("{what} {spi}: SPIs 0 to 255 are reserved (RFC 4303 §2.1)"));
            }
        }
        Ok(EspTunnel {
            name: config.name.clone(),
            local: config.local,
            remote: config.remote,
            outbound: security_association(config.spi_out, cipher, auth)?,
            inbound: security_association(config.spi_in, cipher, auth)?,
            ivs: RandomStream::from_key(stream_key(0, u64::from(config.spi_out), "ipsec-iv")),
        })
    }

    /// The outbound SA (its `seq` is the next sequence number to send).
    pub fn outbound(&self) -> &SecurityAssociation {
        &self.outbound
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
}

impl Tunnel for EspTunnel {
    fn encapsulate(&mut self, inner: &[u8], ident: u16, out: &mut Vec<u8>) -> Result<(), String> {
        if self.outbound.seq == 0 {
            // RFC 4303 §3.3.3: the counter must not cycle; the SA would be replaced.
            return Err(format!("{}: sequence numbers of SA {:#x} used up", self.name, self.outbound.spi));
        }
        let iv = self.next_iv();
        let outer = OuterHeader { src: self.local, dst: self.remote, ttl: DEFAULT_TTL, ident };
        esp::encapsulate_tunnel(&self.outbound, &outer, inner, &iv, out).map_err(|e| format!("{}: ESP encapsulation: {e:?}", self.name))?;
        self.outbound.next_seq();
        Ok(())
    }

    fn claims(&self, packet: &[u8]) -> bool {
        let Ok(view) = ipv4::Packet::new_checked(packet) else { return false };
        view.next_header() == IpProtocol::Esp
            && view.src_addr() == self.remote
            && view.dst_addr() == self.local
            && esp::Packet::new_checked(view.payload()).is_ok_and(|p| p.spi() == self.inbound.spi)
    }

    fn decapsulate(&mut self, packet: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
        esp::decapsulate(&self.inbound, packet, out).map(|_| ()).map_err(|e| {
            let why = match e {
                wire::Error::Checksum => "the ICV does not verify (RFC 4303 §3.4.4)".to_string(),
                wire::Error::Unsupported => "a dummy packet (next header 59, RFC 4303 §2.6)".to_string(),
                e => format!("{e:?}"),
            };
            format!("ESP from {} on {} dropped: {why}", self.remote, self.name)
        })
    }

    fn local(&self) -> Ipv4Addr {
        self.local
    }
}

#[cfg(test)]
mod test {
    use super::*;

    fn config(spi_out: u32, spi_in: u32, local: [u8; 4], remote: [u8; 4]) -> IpsecTunnelConfig {
        IpsecTunnelConfig {
            name: "ipsec0".into(),
            local: Ipv4Addr::from(local),
            remote: Ipv4Addr::from(remote),
            spi_out,
            spi_in,
            cipher: "3des-cbc".into(),
            auth: "hmac-sha1-96".into(),
            protects: vec![],
            mtu: 1500,
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
        c.cipher = "rot13".into();
        assert!(EspTunnel::new(&c).unwrap_err().contains("3des-cbc"));
        c.cipher = "aes-128-gcm".into();
        assert!(EspTunnel::new(&c).unwrap_err().contains("auth must be"));
        c.auth = "none".into();
        assert!(EspTunnel::new(&c).is_ok());
    }
}
