//! A PPP link: LCP, then authentication, then IPCP, before IPv4 flows (RFC 1661 §3).
//!
//! Standards: RFC 1661 §3.2 (the phase diagram: Dead, Establish, Authenticate, Network,
//! Terminate), §3.4 (in Establish only LCP is taken; others are silently discarded),
//! §3.5 (in Authenticate only LCP, authentication and link-quality packets; the
//! Network phase begins only once authentication succeeded, failure goes to
//! Terminate), §3.6 (NCPs such as IPCP, RFC 1332, open in the Network phase; IPv4
//! datagrams flow only while IPCP is Opened), §5.7 (Protocol-Reject of an unknown
//! protocol once LCP is Opened), §5.8 (Echo-Reply to Echo-Request).
//!
//! Sans-IO: `start`, `input` and `on_timer` append (protocol, information) pairs to send;
//! `poll_at` is the earliest timer of the automata inside.

use std::net::Ipv4Addr;

use wire::ppp::{Code, ControlPacket, ControlRepr, Protocol};

use super::auth::{Authenticator, Outcome, Peer};
use super::fsm::{control, Fsm, Signal};
use super::ipcp::IpcpOptions;
use super::lcp::{Auth, LcpOptions};

/// RFC 1661 §3.2 phases.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    Dead,
    Establish,
    Authenticate,
    Network,
    Terminate,
}

/// What a PPP link sends: the protocol field and the information field.
pub type PppOut = Vec<(Protocol, Vec<u8>)>;

/// One end of a PPP link.
#[derive(Debug)]
pub struct PppLink {
    pub lcp: Fsm<LcpOptions>,
    pub ipcp: Fsm<IpcpOptions>,
    /// The authenticator side, if this end demands authentication.
    authenticator: Option<Authenticator>,
    /// This end's credentials for the peer: (user/name, secret) for CHAP or PAP.
    credentials: Option<(Vec<u8>, Vec<u8>)>,
    peer: Option<Peer>,
    /// Authentication still owed: (ours of the peer, the peer's of us).
    pending: (bool, bool),
    phase: Phase,
    /// MS-CHAPv2's Peer-Challenge (RFC 2759 §4: 16 random octets), drawn by the owner
    /// from its seeded stream ([`PppLink::set_peer_challenge`]).
    peer_challenge: [u8; 16],
    /// Why the link terminated, if it did.
    pub failure: Option<String>,
    next_id: u8,
}

fn tag(protocol: Protocol, packets: Vec<Vec<u8>>, out: &mut PppOut) {
    out.extend(packets.into_iter().map(|p| (protocol, p)));
}

impl PppLink {
    /// `authenticator`: the check this end makes of its peer (the server's); its
    /// protocol must match `lcp.require`. `credentials`: the name and secret this end
    /// answers with when the peer demands authentication (`lcp.willing`).
    pub fn new(
        lcp: LcpOptions,
        ipcp: IpcpOptions,
        authenticator: Option<Authenticator>,
        credentials: Option<(Vec<u8>, Vec<u8>)>,
    ) -> PppLink {
        PppLink {
            lcp: Fsm::new(lcp),
            ipcp: Fsm::new(ipcp),
            authenticator,
            credentials,
            peer: None,
            pending: (false, false),
            phase: Phase::Dead,
            peer_challenge: [0; 16],
            failure: None,
            next_id: 1,
        }
    }

    /// The Peer-Challenge this end sends if it answers MS-CHAPv2 (RFC 2759 §4).
    pub fn set_peer_challenge(&mut self, challenge: [u8; 16]) {
        self.peer_challenge = challenge;
    }

    pub fn phase(&self) -> Phase {
        self.phase
    }

    /// Whether IPv4 datagrams may flow (IPCP Opened, RFC 1332 §2).
    pub fn is_ip_up(&self) -> bool {
        self.phase == Phase::Network && self.ipcp.is_opened()
    }

    /// The address IPCP settled for this end.
    pub fn local_address(&self) -> Ipv4Addr {
        self.ipcp.options.local
    }

    /// The largest information field the peer takes (its MRU, RFC 1661 §6.1).
    pub fn peer_mru(&self) -> u16 {
        self.lcp.options.peer_mru
    }

    /// The lower layer is up (PPPoE's session confirmed): LCP opens (Open, then Up).
    pub fn start(&mut self, now: u64, out: &mut PppOut) {
        self.phase = Phase::Establish;
        let mut packets = Vec::new();
        self.lcp.open(now, &mut packets);
        self.lcp.up(now, &mut packets);
        tag(Protocol::Lcp, packets, out);
    }

    pub fn poll_at(&self) -> Option<u64> {
        [
            self.lcp.poll_at(),
            self.ipcp.poll_at(),
            self.authenticator.as_ref().and_then(Authenticator::poll_at),
            self.peer.as_ref().and_then(Peer::poll_at),
        ]
        .into_iter()
        .flatten()
        .min()
    }

    pub fn on_timer(&mut self, now: u64, out: &mut PppOut) {
        let mut packets = Vec::new();
        let signal = self.lcp.on_timer(now, &mut packets);
        tag(Protocol::Lcp, std::mem::take(&mut packets), out);
        self.lcp_signal(now, signal, out);
        let signal = self.ipcp.on_timer(now, &mut packets);
        tag(Protocol::Ipcp, std::mem::take(&mut packets), out);
        if signal == Some(Signal::Finished) && self.phase == Phase::Network {
            self.terminate(now, "IPCP did not converge (Max-Configure)".into(), out);
        }
        if let Some(a) = self.authenticator.as_mut() {
            let outcome = a.on_timer(now, &mut packets);
            tag(Protocol::Chap, std::mem::take(&mut packets), out);
            if outcome.is_some() {
                self.authenticated(now, true, outcome, out);
            }
        }
        if let Some(p) = self.peer.as_mut() {
            let outcome = p.on_timer(now, &mut packets);
            tag(Protocol::Pap, std::mem::take(&mut packets), out);
            if outcome.is_some() {
                self.authenticated(now, false, outcome, out);
            }
        }
    }

    /// A received PPP frame's protocol and information field. IPv4 is the caller's
    /// (allowed when [`is_ip_up`](Self::is_ip_up)); anything else not known here is
    /// Protocol-Rejected once LCP is Opened.
    pub fn input(&mut self, now: u64, protocol: Protocol, info: &[u8], out: &mut PppOut) {
        let mut packets = Vec::new();
        match protocol {
            Protocol::Lcp => {
                let code = info.first().copied().map(Code::from);
                match code {
                    Some(Code::EchoRequest) if self.lcp.is_opened() => {
                        // RFC 1661 §5.8: Echo-Reply with our magic number and the data.
                        let mut data = self.lcp.options.magic.to_be_bytes().to_vec();
                        data.extend_from_slice(info.get(8..).unwrap_or_default());
                        packets.push(control(Code::EchoReply, info[1], &data));
                    }
                    Some(Code::EchoReply | Code::DiscardRequest | Code::ProtocolReject) => {}
                    _ => {
                        let signal = self.lcp.input(now, info, &mut packets);
                        tag(Protocol::Lcp, std::mem::take(&mut packets), out);
                        self.lcp_signal(now, signal, out);
                    }
                }
                tag(Protocol::Lcp, packets, out);
            }
            Protocol::Chap | Protocol::Pap if self.phase == Phase::Authenticate || self.phase == Phase::Network => {
                let ours = match (protocol, self.lcp.options.require) {
                    (Protocol::Chap, Some(Auth::Chap | Auth::MsChapV2)) => {
                        // CHAP: the authenticator takes Responses, the peer the rest.
                        info.first() == Some(&2)
                    }
                    (Protocol::Pap, Some(Auth::Pap)) => info.first() == Some(&super::auth::PAP_REQUEST),
                    _ => false,
                };
                if ours {
                    let outcome = self.authenticator.as_mut().and_then(|a| a.input(info, &mut packets));
                    tag(protocol, std::mem::take(&mut packets), out);
                    if outcome.is_some() {
                        self.authenticated(now, true, outcome, out);
                    }
                } else if let Some(p) = self.peer.as_mut() {
                    let outcome = p.input(info, &mut packets);
                    tag(protocol, packets, out);
                    if outcome.is_some() {
                        self.authenticated(now, false, outcome, out);
                    }
                }
            }
            // RFC 1661 §3.5: NCP packets before the Network phase are silently discarded.
            Protocol::Ipcp if self.phase == Phase::Network => {
                let signal = self.ipcp.input(now, info, &mut packets);
                tag(Protocol::Ipcp, packets, out);
                if signal == Some(Signal::Finished) {
                    self.terminate(now, "IPCP closed by the peer".into(), out);
                }
            }
            Protocol::Chap | Protocol::Pap | Protocol::Ipcp | Protocol::Ipv4 => {}
            other if self.lcp.is_opened() => {
                // RFC 1661 §5.7: Protocol-Reject carries the protocol and the information.
                let mut data = u16::from(other).to_be_bytes().to_vec();
                data.extend_from_slice(info);
                let id = self.next_id;
                self.next_id = self.next_id.wrapping_add(1);
                out.push((Protocol::Lcp, control(Code::ProtocolReject, id, &data)));
            }
            _ => {}
        }
    }

    fn lcp_signal(&mut self, now: u64, signal: Option<Signal>, out: &mut PppOut) {
        match signal {
            Some(Signal::Up) => {
                // RFC 1661 §3.5: authenticate if either end asked for it.
                let require = self.lcp.options.require;
                let owed = self.lcp.options.peer_requires;
                self.pending = (require.is_some(), owed.is_some());
                self.peer = match (owed, &self.credentials) {
                    (Some(Auth::Chap), Some((name, secret))) => Some(Peer::chap(name, secret)),
                    (Some(Auth::Pap), Some((name, secret))) => Some(Peer::pap(name, secret)),
                    (Some(Auth::MsChapV2), Some((name, secret))) => {
                        Some(Peer::mschapv2(name, secret, self.peer_challenge))
                    }
                    _ => None,
                };
                self.phase = Phase::Authenticate;
                let mut packets = Vec::new();
                if let Some(a) = self.authenticator.as_mut() {
                    a.start(now, &mut packets);
                    let protocol = if require == Some(Auth::Pap) { Protocol::Pap } else { Protocol::Chap };
                    tag(protocol, std::mem::take(&mut packets), out);
                }
                if let Some(p) = self.peer.as_mut() {
                    p.start(now, &mut packets);
                    tag(Protocol::Pap, packets, out);
                }
                self.maybe_network(now, out);
            }
            Some(Signal::Down) => {
                self.phase = Phase::Terminate;
            }
            Some(Signal::Finished) => {
                if self.failure.is_none() {
                    self.failure = Some("LCP finished: the peer did not answer or closed the link".into());
                }
                self.phase = Phase::Dead;
            }
            _ => {}
        }
    }

    fn authenticated(&mut self, now: u64, ours: bool, outcome: Option<Outcome>, out: &mut PppOut) {
        match outcome {
            Some(Outcome::Success) => {
                if ours {
                    self.pending.0 = false;
                } else {
                    self.pending.1 = false;
                }
                self.maybe_network(now, out);
            }
            Some(Outcome::Failure) => {
                let who = if ours { "the peer failed our authentication" } else { "the peer refused our credentials" };
                self.terminate(now, who.into(), out);
            }
            None => {}
        }
    }

    fn maybe_network(&mut self, now: u64, out: &mut PppOut) {
        if self.phase == Phase::Authenticate && self.pending == (false, false) {
            self.phase = Phase::Network;
            let mut packets = Vec::new();
            self.ipcp.open(now, &mut packets);
            self.ipcp.up(now, &mut packets);
            tag(Protocol::Ipcp, packets, out);
        }
    }

    /// RFC 1661 §3.7: close LCP (Terminate-Request) and remember why.
    fn terminate(&mut self, now: u64, why: String, out: &mut PppOut) {
        self.failure.get_or_insert(why);
        self.phase = Phase::Terminate;
        let mut packets = Vec::new();
        self.lcp.close(now, &mut packets);
        tag(Protocol::Lcp, packets, out);
    }
}

/// Whether a control packet is `code` of LCP or IPCP (for tests and traces).
pub fn control_code(info: &[u8]) -> Option<Code> {
    let view = ControlPacket::new_checked(info).ok()?;
    ControlRepr::parse(&view).ok().map(|r| Code::from(r.code))
}

#[cfg(test)]
mod test {
    use super::*;

    fn pair(client_secret: &[u8]) -> (PppLink, PppLink) {
        let server = PppLink::new(
            LcpOptions::new(1492, 0xaaaa, Some(Auth::Chap), None),
            IpcpOptions { local: Ipv4Addr::new(192, 0, 2, 1), assign: Some(Ipv4Addr::new(192, 0, 2, 2)), peer: None },
            Some(Authenticator::chap(b"srv", b"s3cret", [9; 16], 1)),
            None,
        );
        let client = PppLink::new(
            LcpOptions::new(1492, 0xbbbb, None, Some(Auth::Chap)),
            IpcpOptions { local: Ipv4Addr::UNSPECIFIED, assign: None, peer: None },
            None,
            Some((b"client".to_vec(), client_secret.to_vec())),
        );
        (server, client)
    }

    /// Runs the two ends until quiet; returns what crossed, in order: (from server, protocol, code).
    fn converse(server: &mut PppLink, client: &mut PppLink) -> Vec<(bool, Protocol, u8)> {
        let mut log = Vec::new();
        let (mut to_client, mut to_server) = (PppOut::new(), PppOut::new());
        server.start(0, &mut to_client);
        client.start(0, &mut to_server);
        for _ in 0..50 {
            if to_client.is_empty() && to_server.is_empty() {
                break;
            }
            for (p, info) in std::mem::take(&mut to_client) {
                log.push((true, p, info[0]));
                client.input(1, p, &info, &mut to_server);
            }
            for (p, info) in std::mem::take(&mut to_server) {
                log.push((false, p, info[0]));
                server.input(1, p, &info, &mut to_client);
            }
        }
        log
    }

    #[test]
    fn lcp_then_chap_then_ipcp_in_rfc1661_phase_order() {
        let (mut server, mut client) = pair(b"s3cret");
        let log = converse(&mut server, &mut client);
        assert!(server.is_ip_up() && client.is_ip_up());
        assert_eq!(client.local_address(), Ipv4Addr::new(192, 0, 2, 2));
        assert_eq!(client.peer_mru(), 1492);
        let first = |p: Protocol| log.iter().position(|e| e.1 == p).unwrap();
        let last = |p: Protocol| log.iter().rposition(|e| e.1 == p).unwrap();
        assert!(last(Protocol::Lcp) < first(Protocol::Chap), "authentication after LCP is Opened (§3.5)");
        assert!(last(Protocol::Chap) < first(Protocol::Ipcp), "IPCP after authentication (§3.5, §3.6)");
        let chap: Vec<_> = log.iter().filter(|e| e.1 == Protocol::Chap).map(|e| (e.0, e.2)).collect();
        assert_eq!(chap, [(true, 1), (false, 2), (true, 3)], "Challenge, Response, Success (RFC 1994 §4)");
    }

    #[test]
    fn a_wrong_secret_terminates_before_ipcp() {
        let (mut server, mut client) = pair(b"guess");
        let log = converse(&mut server, &mut client);
        assert!(!server.is_ip_up() && !client.is_ip_up());
        assert!(log.iter().all(|e| e.1 != Protocol::Ipcp), "no NCP without authentication");
        assert!(log.iter().any(|e| e.1 == Protocol::Chap && e.2 == 4), "CHAP Failure sent");
        assert!(log.iter().any(|e| e.1 == Protocol::Lcp && e.2 == u8::from(Code::TerminateRequest)));
        assert!(server.failure.as_deref().unwrap().contains("failed our authentication"));
    }
}
