//! A PPPoE end as a [`TunnelEnd`] of its node: a PPP interface over one Ethernet-like
//! port (a link's port or an OpenVPN TAP port). IPv4 packets routed to it are
//! fragmented to the PPP MTU by the stack, then carried in session frames once
//! discovery, LCP, authentication and IPCP are done (`pppoe`, `link::ppp`); session and
//! discovery frames arriving on its port are offered to it.
//!
//! CPU: every PPPoE session frame an end sends or takes costs `per_pppoe_packet` (a
//! bridge passing PPPoE frames on pays only its bridging).

use std::net::Ipv4Addr;

use wire::ethernet::{self, Address as Mac, EtherType};

use crate::config::{NodeConfig, PppoeConfig, TunnelFragment};
use crate::link::ppp::auth::{Authenticator, CHAP_VALUE_LEN};
use crate::link::ppp::ipcp::IpcpOptions;
use crate::link::ppp::lcp::{Auth, LcpOptions};
use crate::link::ppp::PppLink;
use crate::rng::{stream_key, RandomStream};
use crate::tunnel::pppoe::PppoeEnd;
use crate::tunnel::{Action, Host, Interface, TunnelEnd, TunnelIo};

/// Whether an Ethernet frame carries PPPoE (RFC 2516 §4: 0x8863, 0x8864).
pub fn is_pppoe(frame: &[u8]) -> bool {
    ethernet::Frame::new_checked(frame)
        .is_ok_and(|f| matches!(f.ethertype(), EtherType::PppoeDiscovery | EtherType::PppoeSession))
}

fn is_session(frame: &[u8]) -> bool {
    ethernet::Frame::new_checked(frame).is_ok_and(|f| f.ethertype() == EtherType::PppoeSession)
}

/// Why a PPPoE frame no end on port `port_name` took is dropped.
pub fn unclaimed(frame: &[u8], port_name: &str) -> String {
    let what = if is_session(frame) {
        "PPPoE session frame for no session of"
    } else {
        "PPPoE discovery frame for no PPPoE end on"
    };
    format!("{what} {port_name}")
}

fn seeded(mac: Mac, purpose: &str) -> RandomStream {
    let id = mac.0.iter().fold(0u64, |a, &b| (a << 8) | u64::from(b));
    RandomStream::from_key(stream_key(0, id, purpose))
}

/// The PPP link of PPPoE end `k` on the port with `mac` (server: authenticator, challenge
/// and the address to assign; client: credentials), its magic number and challenge seeded
/// from the MAC.
fn pppoe_link(c: &PppoeConfig, k: usize, mac: Mac, auth: Auth) -> PppLink {
    let magic = seeded(mac, &format!("ppp-magic-{k}")).next_u64() as u32 | 1;
    if c.server {
        let mut challenge = [0u8; CHAP_VALUE_LEN];
        let mut stream = seeded(mac, &format!("chap-challenge-{k}"));
        for chunk in challenge.chunks_mut(8) {
            chunk.copy_from_slice(&stream.next_u64().to_le_bytes()[..chunk.len()]);
        }
        let authenticator = match auth {
            Auth::Chap => Authenticator::chap(c.ac_name.as_bytes(), c.secret.as_bytes(), challenge, 1),
            Auth::MsChapV2 => Authenticator::mschapv2(c.ac_name.as_bytes(), c.secret.as_bytes(), challenge, 1),
            Auth::Pap => Authenticator::pap(c.user.as_bytes(), c.secret.as_bytes()),
        };
        PppLink::new(
            LcpOptions::new(c.mtu, magic, Some(auth), None),
            IpcpOptions { local: c.local, assign: Some(c.peer), peer: None },
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
    }
}

/// A PPPoE end attached to a node.
#[derive(Debug)]
pub struct PppoeIface {
    pub end: PppoeEnd,
    name: String,
    port: u16,
    iface: usize,
    /// The configured local address (what IPCP must settle on), and whether IPCP's
    /// result was checked against it.
    local: Ipv4Addr,
    checked: bool,
    /// Clients start discovery at the node's first wake-up.
    started: bool,
    per_frame: u64,
}

/// The PPPoE ends of `config`, each a PPP interface of the stack on a routed or TAP
/// port. Returned in order, for the node to add.
pub fn attach(config: &NodeConfig, host: &mut dyn Host) -> Result<Vec<Box<dyn TunnelEnd>>, String> {
    let mut ends: Vec<Box<dyn TunnelEnd>> = Vec::new();
    for (k, c) in config.pppoe.iter().enumerate() {
        let fail = |e: String| format!("node {}: pppoe[{k}] ({}): {e}", config.name, c.name);
        if usize::from(c.port) >= host.port_count() {
            return Err(fail(format!("no port {}", c.port)));
        }
        if host.port_bridged(c.port) {
            return Err(fail(format!(
                "port {} is a bridge member: PPPoE runs on a routed port or a TAP port",
                host.port_name(c.port)
            )));
        }
        let auth = match c.auth {
            qoslab_plan::PppAuth::Chap => Auth::Chap,
            qoslab_plan::PppAuth::Pap => Auth::Pap,
            qoslab_plan::PppAuth::Mschapv2 => return Err(fail("auth: PPPoE authenticates with CHAP or PAP".into())),
        };
        // RFC 2516 §7: the MRU MUST NOT be negotiated above 1492.
        if c.mtu > wire::pppoe::MTU as u16 || c.mtu < 68 {
            return Err(fail(format!("mtu {}: 68 to 1492 over PPPoE (RFC 791, RFC 2516 §7)", c.mtu)));
        }
        let mac = host.port_mac(c.port);
        let link = pppoe_link(c, k, mac, auth);
        let end = if c.server {
            if c.session_id == 0 {
                return Err(fail("a server's session id must not be 0 (RFC 2516 §5.4)".into()));
            }
            PppoeEnd::server(mac, c.service_name.as_bytes(), c.ac_name.as_bytes(), c.session_id, link)
        } else {
            PppoeEnd::client(mac, c.service_name.as_bytes(), &(k as u32 + 1).to_be_bytes(), link)
        };
        let new = Interface { name: c.name.clone(), mac, addr: Some((c.local, 32)), mtu: usize::from(c.mtu) };
        let iface = host.add_interface(new, &c.routes, false).map_err(|e| format!("node {}: {e}", config.name))?;
        let per_frame = host.cycles().per_pppoe_packet;
        let (name, port, local) = (c.name.clone(), c.port, c.local);
        ends.push(Box::new(PppoeIface { end, name, port, iface, local, checked: false, started: false, per_frame }));
    }
    Ok(ends)
}

impl PppoeIface {
    /// Sends the frames it made on its port, charging each session frame.
    fn emit(&self, frames: Vec<Vec<u8>>, io: &mut TunnelIo) {
        for frame in frames {
            if frame.get(12..14) == Some(&[0x88, 0x64][..]) {
                io.actions.push(Action::Cycles(self.per_frame as f64));
            }
            io.actions.push(Action::Frame { port: self.port, frame });
        }
    }

    /// Once IPCP opens, the address it settled must be the configured one (the
    /// applications were set up with it).
    fn check_ipcp(&mut self, io: &mut TunnelIo) {
        if self.checked || !self.end.is_up() {
            return;
        }
        self.checked = true;
        let got = self.end.link.local_address();
        if got != self.local {
            io.drop(format!("IPCP gave {} the address {got}, not the configured {}", self.name, self.local), None);
        }
    }
}

impl TunnelEnd for PppoeIface {
    fn name(&self) -> &str {
        &self.name
    }

    fn interface(&self) -> Option<usize> {
        Some(self.iface)
    }

    fn rides_on_port(&self) -> Option<u16> {
        Some(self.port)
    }

    fn is_up(&self) -> bool {
        self.end.is_up()
    }

    fn send(&mut self, _now: u64, packet: &[u8], io: &mut TunnelIo) {
        match self.end.send_ipv4(packet) {
            Ok(frame) => self.emit(vec![frame], io),
            Err(reason) => io.drop(format!("{}: {reason}", self.name), Some(packet.to_vec())),
        }
    }

    fn receive(&mut self, _now: u64, _packet: &[u8], _io: &mut TunnelIo) -> Result<(), String> {
        Err(format!("{}: PPPoE takes frames on its port, not datagrams", self.name))
    }

    /// A PPPoE frame on its port: discovery, or its session's.
    fn receive_frame(&mut self, now: u64, frame: &[u8], io: &mut TunnelIo) -> bool {
        let mut frames = Vec::new();
        let result = self.end.input(now, frame, &mut frames);
        if result.not_mine {
            return false;
        }
        if is_session(frame) {
            io.actions.push(Action::Cycles(self.per_frame as f64));
        }
        self.emit(frames, io);
        if let Some(reason) = result.drop {
            io.actions.push(Action::Drop { port: Some(self.port), reason, packet: None });
        }
        if let Some(packet) = result.ipv4 {
            io.inner(&packet);
        }
        self.check_ipcp(io);
        true
    }

    fn poll_at(&self) -> Option<u64> {
        let start = (!self.started && !self.end.server).then_some(0);
        start.into_iter().chain(self.end.poll_at()).min()
    }

    /// Starts discovery at the first wake-up (a client), then its timers due at `now`.
    fn on_timer(&mut self, now: u64, io: &mut TunnelIo) {
        let mut frames = Vec::new();
        if !self.started {
            self.started = true;
            self.end.start(now, &mut frames);
        }
        if self.end.poll_at().is_some_and(|t| t <= now) {
            self.end.on_timer(now, &mut frames);
        }
        self.emit(frames, io);
        self.check_ipcp(io);
    }

    /// RFC 2516 §7: 6 octets of PPPoE header and 2 of PPP protocol field in front of
    /// the packet, inside the Ethernet payload (hence 1492 in 1500).
    fn inner_mtu(&self, outer_mtu: usize) -> usize {
        outer_mtu.saturating_sub(wire::pppoe::HEADER_LEN + wire::pppoe::PPP_PROTOCOL_LEN)
    }

    /// The stack fragments to the PPP MTU before framing (RFC 791 §3.2).
    fn fragment(&self) -> TunnelFragment {
        TunnelFragment::Before
    }
}
