//! PPTP ends as virtual interfaces of a node (the node-side glue of `pptp`).
//!
//! A PPTP end is a point-to-point IP interface (`ppp0`) with the tunnel's MTU: IPv4
//! packets the stack routes to it are fragmented to that MTU (RFC 791, DF clear), then
//! framed in PPP (one-octet protocol field once PFC/ACFC are agreed) and enhanced GRE
//! (RFC 2637 §4.1) and sent from the end's outer address as IP protocol 47, routed by
//! the node's stack (so over whatever leads to the other end: a link, a TAP tunnel),
//! never back into a tunnel interface of the node. The control connection is a TCP
//! connection between the same addresses, client port → 1723, made by the node itself.
//! TCP segments and GRE packets delivered to the node that belong to an end are its.
//!
//! CPU (seed 002 issue 4: every encapsulation costs per packet and per byte on both
//! ends): each GRE packet an end sends or takes costs `per_pptp_packet` plus
//! `per_byte_pptp` per octet of the GRE packet (header, PPP and payload). The control
//! connection's TCP segments are the stack's ordinary work.

use std::net::Ipv4Addr;

use wire::ethernet::{Address as Mac, EtherType};
use wire::{ipv4, tcp, IpProtocol};

use super::{Effects, Node};
use crate::config::{NodeConfig, PptpConfig};
use crate::link::ppp::auth::{Authenticator, CHAP_VALUE_LEN};
use crate::link::ppp::ipcp::IpcpOptions;
use crate::link::ppp::lcp::{Auth, LcpOptions};
use crate::link::ppp::PppLink;
use crate::node::ip::{ethernet_frame, Iface};
use crate::rng::{stream_key, RandomStream};
use crate::tunnel::pptp::{Datagrams, Params, PptpEnd, Role};
use crate::tunnel::vif::Vif;
use qoslab_plan::PppAuth;

fn seeded(addr: Ipv4Addr, purpose: &str) -> RandomStream {
    RandomStream::from_key(stream_key(0, u64::from(u32::from(addr)), purpose))
}

fn bytes16(stream: &mut RandomStream) -> [u8; 16] {
    let mut out = [0u8; 16];
    for chunk in out.chunks_mut(8) {
        chunk.copy_from_slice(&stream.next_u64().to_le_bytes());
    }
    out
}

/// The PPP link of an end (server: authenticator and address to assign; client:
/// credentials), as PPPoE builds it.
fn link(c: &PptpConfig, k: usize) -> Result<PppLink, String> {
    let auth = match c.auth {
        PppAuth::Mschapv2 => Auth::MsChapV2,
        PppAuth::Chap => Auth::Chap,
        PppAuth::Pap => Auth::Pap,
    };
    if c.mtu < 68 {
        return Err(format!("mtu {}: at least 68 (RFC 791)", c.mtu));
    }
    let magic = seeded(c.local, &format!("pptp-magic-{k}")).next_u64() as u32 | 1;
    let mut link = if c.server {
        let challenge: [u8; CHAP_VALUE_LEN] = bytes16(&mut seeded(c.local, &format!("pptp-challenge-{k}")));
        let authenticator = match auth {
            Auth::MsChapV2 => Authenticator::mschapv2(b"pptpd", c.secret.as_bytes(), challenge, 1),
            Auth::Chap => Authenticator::chap(b"pptpd", c.secret.as_bytes(), challenge, 1),
            Auth::Pap => Authenticator::pap(c.user.as_bytes(), c.secret.as_bytes()),
        };
        PppLink::new(
            LcpOptions::new(c.mtu, magic, Some(auth), None),
            IpcpOptions { local: c.ppp_local, assign: Some(c.ppp_peer), peer: None },
            Some(authenticator),
            None,
        )
    } else {
        PppLink::new(
            LcpOptions::new(c.mtu, magic, None, Some(auth)),
            IpcpOptions { local: Ipv4Addr::UNSPECIFIED, assign: None, peer: None },
            None,
            Some((c.user.as_bytes().to_vec(), c.secret.as_bytes().to_vec())),
        )
    };
    link.set_peer_challenge(bytes16(&mut seeded(c.local, &format!("pptp-peer-challenge-{k}"))));
    Ok(link)
}

impl Node {
    /// Builds the PPTP ends of `config` as PPP interfaces of the node.
    pub(crate) fn attach_pptp(&mut self, config: &NodeConfig) -> Result<(), String> {
        for (k, c) in config.pptp.iter().enumerate() {
            let fail = |e: String| format!("node {}: pptp[{k}] ({}): {e}", config.name, c.name);
            let link = link(c, k).map_err(fail)?;
            let mut ports = seeded(c.local, &format!("pptp-port-{k}"));
            // An ephemeral port (Linux's default range 32768-60999) and an ISS.
            let local_port = 32_768 + ports.uniform_inclusive(60_999 - 32_768) as u16;
            let iss = ports.next_u64() as u32;
            let role = if c.server { Role::Pac } else { Role::Pns };
            let params = Params {
                role,
                local: c.local,
                remote: c.remote,
                local_port,
                call_id: c.call_id,
                recv_window: c.recv_window.max(1),
                host_name: config.name.as_bytes().to_vec(),
            };
            let iface = Iface {
                name: c.name.clone(),
                mac: Mac([0; 6]),
                addr: Some((c.ppp_local, 32)),
                mtu: usize::from(c.mtu),
                resolve: false,
            };
            let index =
                self.ip.add_point_to_point(iface, &c.routes, true).map_err(|e| format!("node {}: {e}", config.name))?;
            self.vifs.by_iface_insert(index, Vif::Pptp(k));
            let v = &mut self.vifs.pptp;
            v.ends.push(PptpEnd::new(params, link));
            v.iface.push(index);
            v.checked.push(false);
            v.ppp_local.push(c.ppp_local);
            v.iss.push(iss);
        }
        Ok(())
    }

    /// Sends what end `k` made from its outer address, charging its GRE work.
    fn pptp_emit(&mut self, now: u64, k: usize, datagrams: Datagrams, before: (u64, u64), fx: &mut Effects) {
        fx.cycles += self.pptp_cycles(k, before);
        let end = &self.vifs.pptp.ends[k];
        let (src, dst) = (end.local, end.remote);
        let mut outs = Vec::new();
        for (protocol, bytes) in datagrams {
            self.ip.send_datagram_outer(now, src, dst, protocol, &bytes, &mut outs);
        }
        self.apply(now, outs, fx);
        self.pptp_check_ipcp(k, fx);
    }

    /// GRE packets and octets end `k` has handled so far.
    fn pptp_work(&self, k: usize) -> (u64, u64) {
        self.vifs.pptp.ends[k].gre.as_ref().map_or((0, 0), |g| {
            let c = g.counters;
            (c.data_sent + c.ack_only_sent + c.data_received + c.out_of_sequence, c.bytes)
        })
    }

    fn pptp_cycles(&self, k: usize, before: (u64, u64)) -> f64 {
        let (packets, bytes) = self.pptp_work(k);
        // A call that came up in this step starts its counters at zero.
        let (p0, b0) = if packets >= before.0 { before } else { (0, 0) };
        (packets - p0) as f64 * self.cycles.per_pptp_packet as f64
            + (bytes.saturating_sub(b0)) as f64 * self.cycles.per_byte_pptp
    }

    /// When the PPTP ends next need waking.
    pub(crate) fn pptp_poll_at(&self) -> Option<u64> {
        self.vifs.pptp.ends.iter().filter_map(PptpEnd::poll_at).min()
    }

    /// Timers due at `now`: start (the client connects, the server listens), TCP, the
    /// control connection's keep-alive, GRE acknowledgments and time-outs, PPP.
    pub(crate) fn pptp_on_timer(&mut self, now: u64, fx: &mut Effects) {
        for k in 0..self.vifs.pptp.ends.len() {
            if self.vifs.pptp.ends[k].poll_at().is_none_or(|t| t > now) {
                continue;
            }
            let before = self.pptp_work(k);
            let mut out = Datagrams::new();
            let iss = self.vifs.pptp.iss[k];
            let end = &mut self.vifs.pptp.ends[k];
            end.start(now, iss, &mut out);
            end.on_timer(now, &mut out);
            self.pptp_emit(now, k, out, before, fx);
        }
    }

    /// An IPv4 packet routed to PPTP interface `k`.
    pub(crate) fn pptp_send(&mut self, now: u64, k: usize, packet: &[u8], fx: &mut Effects) {
        let before = self.pptp_work(k);
        let mut out = Datagrams::new();
        if let Err(reason) = self.vifs.pptp.ends[k].send_ipv4(now, packet, &mut out) {
            let name = self.ip.ifaces[self.vifs.pptp.iface[k]].name.clone();
            fx.drops.push((None, format!("{name}: {reason}"), Some(packet.to_vec())));
        }
        self.pptp_emit(now, k, out, before, fx);
    }

    /// A datagram the stack delivered locally: a PPTP end's TCP segment or GRE packet
    /// (then handled here, `true`), else not PPTP's.
    pub(crate) fn pptp_local(&mut self, now: u64, packet: &[u8], fx: &mut Effects) -> bool {
        if self.vifs.pptp.ends.is_empty() {
            return false;
        }
        let Ok(ip) = ipv4::Packet::new_checked(packet) else { return false };
        let (src, dst) = (ip.src_addr(), ip.dst_addr());
        let mine = |e: &PptpEnd| e.remote == src && e.local == dst;
        match ip.next_header() {
            IpProtocol::Tcp => {
                let Ok(segment) = tcp::Packet::new_checked(ip.payload()) else { return false };
                let (sport, dport) = (segment.src_port(), segment.dst_port());
                let Some(k) = self.vifs.pptp.ends.iter().position(|e| mine(e) && e.claims_tcp(src, sport, dport))
                else {
                    return false;
                };
                let Ok(repr) = tcp::Repr::parse(&segment, &src, &dst) else {
                    fx.drops.push((None, "TCP checksum error".into(), Some(packet.to_vec())));
                    return true;
                };
                let before = self.pptp_work(k);
                let mut out = Datagrams::new();
                self.vifs.pptp.ends[k].input_tcp(now, &repr, segment.payload(), &mut out);
                self.pptp_emit(now, k, out, before, fx);
                true
            }
            IpProtocol::Gre => {
                let call = wire::gre::Packet::new_checked(ip.payload()).ok().and_then(|g| g.key_call_id());
                let Some(k) = self.vifs.pptp.ends.iter().position(|e| mine(e) && call == Some(e.control.call_id))
                else {
                    return false;
                };
                let before = self.pptp_work(k);
                let mut out = Datagrams::new();
                let delivered = self.vifs.pptp.ends[k].input_gre(now, ip.payload(), &mut out);
                // The packet taken counts even when the call was not up (nothing to bill).
                self.pptp_emit(now, k, out, before, fx);
                match delivered {
                    Err(reason) => fx.drops.push((None, reason, Some(packet.to_vec()))),
                    Ok(None) => {}
                    Ok(Some(inner)) => {
                        let iface = self.vifs.pptp.iface[k];
                        let mut outs = Vec::new();
                        self.ip.input(
                            now,
                            iface,
                            ethernet_frame(Mac::default(), Mac::BROADCAST, EtherType::Ipv4, &inner),
                            &mut outs,
                        );
                        fx.cycles += self.forwarding_cycles();
                        self.apply(now, outs, fx);
                    }
                }
                true
            }
            _ => false,
        }
    }

    /// Once IPCP opens, the address it settled must be the configured one.
    fn pptp_check_ipcp(&mut self, k: usize, fx: &mut Effects) {
        let v = &mut self.vifs.pptp;
        if v.checked[k] || !v.ends[k].is_up() {
            return;
        }
        v.checked[k] = true;
        let (got, want) = (v.ends[k].link.local_address(), v.ppp_local[k]);
        if got != want {
            let name = &self.ip.ifaces[v.iface[k]].name;
            fx.drops.push((None, format!("IPCP gave {name} the address {got}, not the configured {want}"), None));
        }
    }
}
