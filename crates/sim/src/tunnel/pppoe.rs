//! PPPoE (RFC 2516) as a sans-IO endpoint: discovery, then a PPP link in a session.
//!
//! Standards: RFC 2516 §5.1-§5.5 (PADI broadcast with a Service-Name; an Access
//! Concentrator that can serve it answers with a unicast PADO carrying its AC-Name and
//! the Service-Name, and "MUST NOT respond" otherwise; the host picks one offer and
//! sends a unicast PADR echoing Host-Uniq and AC-Cookie; the AC confirms with PADS and a
//! unique non-zero SESSION_ID, or a PADS with Service-Name-Error and SESSION_ID 0; PADT
//! ends the session), §5.1 (no PADO in time: resend the PADI and double the wait),
//! §6 (session frames, EtherType 0x8864, the PPP protocol field first), §7 (LCP over
//! PPPoE: MRU at most 1492). Host-Uniq and AC-Cookie: RFC 2516 Appendix A.
//!
//! Seed 002 §2.2: several PPPoE servers on one layer-2 segment coexist "by specifying
//! service tag of PPPoE for each server": the client names its service, and only the
//! server offering it answers. A client asking for any service (an empty Service-Name,
//! RFC 2516 §5.1) takes the first offer.
//!
//! Frames in and out are whole Ethernet frames (no FCS); IPv4 datagrams in and out are
//! the PPP link's (protocol 0x0021) once IPCP is Opened.

use wire::ethernet::{self, Address as Mac, EtherType};
use wire::ppp::Protocol;
use wire::pppoe::{self, Code, DiscoveryRepr, Packet, SessionRepr, Tag, TagType};

use crate::link::ppp::{PppLink, PppOut};

/// rp-pppoe's PADI_TIMEOUT (pppoe.h): 5 s before the first PADI is sent again,
/// doubled each time (RFC 2516 §5.1); the same wait for the PADS.
pub const DISCOVERY_TIMEOUT_NS: u64 = 5_000_000_000;
/// rp-pppoe's MAX_PADI_ATTEMPTS: 3.
pub const DISCOVERY_ATTEMPTS: u32 = 3;

/// Where a client is in discovery (RFC 2516 §5).
#[derive(Debug, Clone, PartialEq, Eq)]
enum Stage {
    Idle,
    /// PADI sent, waiting for an offer.
    Initiating,
    /// PADR sent to the AC at `ac`.
    Requesting {
        ac: Mac,
        cookie: Option<Vec<u8>>,
    },
    Session {
        peer: Mac,
        id: u16,
    },
    /// Discovery or the session failed; the reason.
    Failed(String),
}

/// One end of a PPPoE session: a client (host) or a server (Access Concentrator).
#[derive(Debug)]
pub struct PppoeEnd {
    pub server: bool,
    /// The MAC of the port it runs on.
    pub mac: Mac,
    pub service: Vec<u8>,
    /// The AC's name (server) — RFC 2516 App. A: AC-Name.
    pub ac_name: Vec<u8>,
    /// Server: the session id it hands out.
    session_id: u16,
    host_uniq: Vec<u8>,
    stage: Stage,
    timer: Option<u64>,
    wait: u64,
    attempts: u32,
    pub link: PppLink,
    /// Offers (PADO) ignored because they named another service.
    pub offers_ignored: u64,
}

/// What a frame did.
#[derive(Debug, Default)]
pub struct Input {
    /// An IPv4 datagram the session delivered.
    pub ipv4: Option<Vec<u8>>,
    /// The frame was not this end's (another session or AC, or not PPPoE at all).
    pub not_mine: bool,
    /// Why the frame was dropped, if it was.
    pub drop: Option<String>,
}

fn frame(src: Mac, dst: Mac, ethertype: EtherType, payload_len: usize, fill: impl FnOnce(&mut [u8])) -> Vec<u8> {
    let mut bytes = vec![0u8; ethernet::HEADER_LEN + payload_len];
    ethernet::Repr { src_addr: src, dst_addr: dst, ethertype }
        .emit(&mut ethernet::Frame::new_unchecked(&mut bytes[..]));
    fill(&mut bytes[ethernet::HEADER_LEN..]);
    bytes
}

fn discovery(src: Mac, dst: Mac, repr: &DiscoveryRepr<'_>) -> Vec<u8> {
    frame(src, dst, EtherType::PppoeDiscovery, repr.buffer_len(), |b| repr.emit(&mut Packet::new_unchecked(b)))
}

impl PppoeEnd {
    /// A client: `host_uniq` tells its discovery packets apart (RFC 2516 App. A).
    pub fn client(mac: Mac, service: &[u8], host_uniq: &[u8], link: PppLink) -> PppoeEnd {
        PppoeEnd::new(false, mac, service, b"", 0, host_uniq, link)
    }

    /// A server offering `service` under `ac_name`, with the session id it assigns.
    pub fn server(mac: Mac, service: &[u8], ac_name: &[u8], session_id: u16, link: PppLink) -> PppoeEnd {
        PppoeEnd::new(true, mac, service, ac_name, session_id, b"", link)
    }

    fn new(
        server: bool,
        mac: Mac,
        service: &[u8],
        ac_name: &[u8],
        session_id: u16,
        host_uniq: &[u8],
        link: PppLink,
    ) -> PppoeEnd {
        PppoeEnd {
            server,
            mac,
            service: service.to_vec(),
            ac_name: ac_name.to_vec(),
            session_id,
            host_uniq: host_uniq.to_vec(),
            stage: Stage::Idle,
            timer: None,
            wait: DISCOVERY_TIMEOUT_NS,
            attempts: 0,
            link,
            offers_ignored: 0,
        }
    }

    /// Whether IPv4 may be sent (session up, IPCP Opened).
    pub fn is_up(&self) -> bool {
        matches!(self.stage, Stage::Session { .. }) && self.link.is_ip_up()
    }

    /// The session (peer MAC, id), once confirmed.
    pub fn session(&self) -> Option<(Mac, u16)> {
        match self.stage {
            Stage::Session { peer, id } => Some((peer, id)),
            _ => None,
        }
    }

    /// Why discovery or the link failed, if it did.
    pub fn failure(&self) -> Option<String> {
        match &self.stage {
            Stage::Failed(why) => Some(why.clone()),
            _ => self.link.failure.clone(),
        }
    }

    /// A client starts discovery with a broadcast PADI (RFC 2516 §5.1).
    pub fn start(&mut self, now: u64, out: &mut Vec<Vec<u8>>) {
        if self.server || self.stage != Stage::Idle {
            return;
        }
        self.stage = Stage::Initiating;
        self.attempts = 0;
        self.wait = DISCOVERY_TIMEOUT_NS;
        self.send_padi(now, out);
    }

    fn send_padi(&mut self, now: u64, out: &mut Vec<Vec<u8>>) {
        let repr = DiscoveryRepr::new(Code::Padi, 0)
            .tag(Tag::service_name(&self.service))
            .tag(Tag::host_uniq(&self.host_uniq));
        out.push(discovery(self.mac, Mac::BROADCAST, &repr));
        self.arm(now);
    }

    fn arm(&mut self, now: u64) {
        self.attempts += 1;
        self.timer = Some(now + self.wait);
        self.wait *= 2;
    }

    pub fn poll_at(&self) -> Option<u64> {
        match self.stage {
            Stage::Session { .. } => self.link.poll_at(),
            _ => self.timer,
        }
    }

    pub fn on_timer(&mut self, now: u64, out: &mut Vec<Vec<u8>>) {
        if let Stage::Session { peer, id } = self.stage {
            let mut ppp = PppOut::new();
            self.link.on_timer(now, &mut ppp);
            self.session_frames(peer, id, ppp, out);
            return;
        }
        if self.timer.is_none_or(|t| t > now) {
            return;
        }
        self.timer = None;
        if self.attempts >= DISCOVERY_ATTEMPTS {
            let what = if self.stage == Stage::Initiating { "no PADO offering the service" } else { "no PADS" };
            self.stage =
                Stage::Failed(format!("PPPoE discovery failed: {what} after {DISCOVERY_ATTEMPTS} tries (RFC 2516 §5)"));
            return;
        }
        match self.stage.clone() {
            Stage::Initiating => self.send_padi(now, out),
            Stage::Requesting { ac, cookie } => self.send_padr(now, ac, cookie.as_deref(), out),
            _ => {}
        }
    }

    fn send_padr(&mut self, now: u64, ac: Mac, cookie: Option<&[u8]>, out: &mut Vec<Vec<u8>>) {
        let mut repr = DiscoveryRepr::new(Code::Padr, 0)
            .tag(Tag::service_name(&self.service))
            .tag(Tag::host_uniq(&self.host_uniq));
        if let Some(c) = cookie {
            repr = repr.tag(Tag::ac_cookie(c));
        }
        out.push(discovery(self.mac, ac, &repr));
        self.arm(now);
    }

    fn session_frames(&self, peer: Mac, id: u16, ppp: PppOut, out: &mut Vec<Vec<u8>>) {
        for (protocol, info) in ppp {
            out.push(session_frame(self.mac, peer, id, protocol, &info));
        }
    }

    /// Encapsulates an IPv4 datagram for the session (RFC 2516 §6, PPP protocol 0x0021);
    /// refused while IPCP is not Opened.
    pub fn send_ipv4(&self, packet: &[u8]) -> Result<Vec<u8>, String> {
        match self.stage {
            Stage::Session { peer, id } if self.link.is_ip_up() => {
                Ok(session_frame(self.mac, peer, id, Protocol::Ipv4, packet))
            }
            _ => Err(match self.failure() {
                Some(why) => format!("PPPoE session down: {why}"),
                None => "PPPoE session not up yet (discovery, LCP, authentication or IPCP under way)".into(),
            }),
        }
    }

    /// A received frame (PPPoE discovery or session EtherType) on this end's port.
    pub fn input(&mut self, now: u64, bytes: &[u8], out: &mut Vec<Vec<u8>>) -> Input {
        let mut result = Input::default();
        let Ok(eth) = ethernet::Frame::new_checked(bytes) else {
            result.not_mine = true;
            return result;
        };
        let (src, dst, ethertype) = (eth.src_addr(), eth.dst_addr(), eth.ethertype());
        if dst != self.mac && !dst.is_broadcast() {
            result.not_mine = true;
            return result;
        }
        let payload = &bytes[ethernet::HEADER_LEN..];
        let Ok(packet) = Packet::new_checked(payload) else {
            result.drop = Some("malformed PPPoE packet".into());
            return result;
        };
        match ethertype {
            EtherType::PppoeSession => self.input_session(now, src, &packet, out, &mut result),
            EtherType::PppoeDiscovery => self.input_discovery(now, src, &packet, out, &mut result),
            _ => result.not_mine = true,
        }
        result
    }

    fn input_session(
        &mut self,
        now: u64,
        src: Mac,
        packet: &Packet<&[u8]>,
        out: &mut Vec<Vec<u8>>,
        result: &mut Input,
    ) {
        let Ok(repr) = SessionRepr::parse(packet) else {
            result.drop = Some("malformed PPPoE session packet".into());
            return;
        };
        let Stage::Session { peer, id } = self.stage else {
            result.not_mine = true;
            return;
        };
        if src != peer || repr.session_id != id {
            result.not_mine = true;
            return;
        }
        let info = &packet.payload()[pppoe::PPP_PROTOCOL_LEN..];
        if repr.protocol == Protocol::Ipv4 {
            if self.link.is_ip_up() {
                result.ipv4 = Some(info.to_vec());
            } else {
                // RFC 1661 §3.6 / RFC 1332 §2: no IP before IPCP is Opened.
                result.drop = Some("IPv4 on a PPPoE session before IPCP opened".into());
            }
            return;
        }
        let mut ppp = PppOut::new();
        self.link.input(now, repr.protocol, info, &mut ppp);
        self.session_frames(peer, id, ppp, out);
    }

    fn input_discovery(
        &mut self,
        now: u64,
        src: Mac,
        packet: &Packet<&[u8]>,
        out: &mut Vec<Vec<u8>>,
        result: &mut Input,
    ) {
        let Ok(repr) = DiscoveryRepr::parse(packet) else {
            result.drop = Some("malformed PPPoE discovery packet".into());
            return;
        };
        if self.server {
            self.server_discovery(now, src, &repr, out, result);
        } else {
            self.client_discovery(now, src, &repr, out, result);
        }
    }

    /// A discovery packet at an Access Concentrator: PADI answered with a PADO when the
    /// service is ours, PADR confirmed with a PADS (or refused), PADT ends the session.
    fn server_discovery(
        &mut self,
        now: u64,
        src: Mac,
        repr: &DiscoveryRepr<'_>,
        out: &mut Vec<Vec<u8>>,
        result: &mut Input,
    ) {
        let find = |kind: TagType| repr.tags.iter().find(|t| t.kind == kind).map(|t| t.value);
        let service = find(TagType::ServiceName);
        match repr.code {
            Code::Padi | Code::Padr => {
                // RFC 2516 §5.1: an empty Service-Name asks for any service.
                let serves = service.is_some_and(|s| s.is_empty() || s == &self.service[..]);
                let host_uniq = find(TagType::HostUniq);
                if repr.code == Code::Padi {
                    if !serves {
                        // RFC 2516 §5.2: an AC that cannot serve the PADI MUST NOT answer.
                        result.not_mine = true;
                        return;
                    }
                    let cookie = cookie_for(src);
                    let mut pado = DiscoveryRepr::new(Code::Pado, 0)
                        .tag(Tag::ac_name(&self.ac_name))
                        .tag(Tag::service_name(&self.service))
                        .tag(Tag::ac_cookie(&cookie));
                    if let Some(h) = host_uniq {
                        pado = pado.tag(Tag::host_uniq(h));
                    }
                    out.push(discovery(self.mac, src, &pado));
                    return;
                }
                // PADR (unicast to us): confirm, or Service-Name-Error with id 0.
                let busy = matches!(self.stage, Stage::Session { peer, .. } if peer != src);
                let (id, mut pads) = if serves && !busy {
                    (
                        self.session_id,
                        DiscoveryRepr::new(Code::Pads, self.session_id).tag(Tag::service_name(&self.service)),
                    )
                } else {
                    let error = Tag { kind: TagType::ServiceNameError, value: b"" };
                    (
                        0,
                        DiscoveryRepr::new(Code::Pads, 0)
                            .tag(Tag::service_name(service.unwrap_or_default()))
                            .tag(error),
                    )
                };
                if let Some(h) = host_uniq {
                    pads = pads.tag(Tag::host_uniq(h));
                }
                out.push(discovery(self.mac, src, &pads));
                if id != 0 && self.stage != (Stage::Session { peer: src, id }) {
                    self.stage = Stage::Session { peer: src, id };
                    let mut ppp = PppOut::new();
                    self.link.start(now, &mut ppp);
                    self.session_frames(src, id, ppp, out);
                }
            }
            Code::Padt => {
                if self.session().is_some_and(|(peer, id)| peer == src && id == repr.session_id) {
                    self.stage = Stage::Failed("the client sent PADT".into());
                }
            }
            _ => result.not_mine = true,
        }
    }

    /// A discovery packet at a host: a PADO for our service answered with a PADR, the
    /// PADS that opens the session (or refuses it), a PADT that ends it.
    fn client_discovery(
        &mut self,
        now: u64,
        src: Mac,
        repr: &DiscoveryRepr<'_>,
        out: &mut Vec<Vec<u8>>,
        result: &mut Input,
    ) {
        let find = |kind: TagType| repr.tags.iter().find(|t| t.kind == kind).map(|t| t.value);
        let service = find(TagType::ServiceName);
        // A client: only answers to our own discovery (Host-Uniq) are ours.
        if find(TagType::HostUniq).is_some_and(|h| h != &self.host_uniq[..]) {
            result.not_mine = true;
            return;
        }
        match (repr.code, &self.stage) {
            (Code::Pado, Stage::Initiating) => {
                let offers = service.is_some_and(|s| self.service.is_empty() || s == &self.service[..]);
                if !offers {
                    self.offers_ignored += 1;
                    return;
                }
                let cookie = find(TagType::AcCookie).map(<[u8]>::to_vec);
                self.stage = Stage::Requesting { ac: src, cookie: cookie.clone() };
                self.attempts = 0;
                self.wait = DISCOVERY_TIMEOUT_NS;
                self.send_padr(now, src, cookie.as_deref(), out);
            }
            (Code::Pads, Stage::Requesting { ac, .. }) if *ac == src => {
                if repr.session_id == 0 || find(TagType::ServiceNameError).is_some() {
                    self.stage = Stage::Failed("the AC refused the service (PADS with Service-Name-Error)".into());
                    self.timer = None;
                    return;
                }
                self.stage = Stage::Session { peer: src, id: repr.session_id };
                self.timer = None;
                let mut ppp = PppOut::new();
                self.link.start(now, &mut ppp);
                self.session_frames(src, repr.session_id, ppp, out);
            }
            (Code::Padt, Stage::Session { peer, id }) if *peer == src && *id == repr.session_id => {
                self.stage = Stage::Failed("the AC sent PADT".into());
            }
            // A late offer from a second AC, or a stray answer: ignored.
            _ => {}
        }
    }
}

/// A session-stage frame carrying `info` of PPP `protocol`.
pub fn session_frame(src: Mac, dst: Mac, id: u16, protocol: Protocol, info: &[u8]) -> Vec<u8> {
    let repr = SessionRepr { session_id: id, protocol, payload_len: info.len() };
    frame(src, dst, EtherType::PppoeSession, repr.buffer_len(), |b| {
        let mut packet = Packet::new_unchecked(b);
        repr.emit(&mut packet);
        packet.payload_mut()[pppoe::PPP_PROTOCOL_LEN..].copy_from_slice(info);
    })
}

/// An AC-Cookie bound to the host's MAC (RFC 2516 App. A suggests one the AC can check
/// without state); here the MAC's bytes reversed.
fn cookie_for(host: Mac) -> Vec<u8> {
    host.0.iter().rev().copied().collect()
}

#[cfg(test)]
mod test {
    use super::*;
    use crate::link::ppp::auth::Authenticator;
    use crate::link::ppp::ipcp::IpcpOptions;
    use crate::link::ppp::lcp::{Auth, LcpOptions};
    use std::net::Ipv4Addr;

    const CLIENT: Mac = Mac([2, 0, 0, 0, 0, 1]);

    fn server(mac: u8, service: &[u8], session: u16) -> PppoeEnd {
        let link = PppLink::new(
            LcpOptions::new(1492, 0x1000 + u32::from(mac), Some(Auth::Chap), None),
            IpcpOptions {
                local: Ipv4Addr::new(192, 0, 2, mac),
                assign: Some(Ipv4Addr::new(192, 0, 2, 100)),
                peer: None,
            },
            Some(Authenticator::chap(b"ac", b"pw", [mac; 16], 1)),
            None,
        );
        PppoeEnd::server(Mac([2, 0, 0, 0, 0, mac]), service, b"ac", session, link)
    }

    fn client(service: &[u8]) -> PppoeEnd {
        let link = PppLink::new(
            LcpOptions::new(1492, 0x77, None, Some(Auth::Chap)),
            IpcpOptions { local: Ipv4Addr::UNSPECIFIED, assign: None, peer: None },
            None,
            Some((b"client".to_vec(), b"pw".to_vec())),
        );
        PppoeEnd::client(CLIENT, service, &[0xab, 0xcd], link)
    }

    /// Carries frames between the ends as a shared segment (broadcasts to all) until quiet.
    fn segment(ends: &mut [PppoeEnd], first: Vec<Vec<u8>>) -> Vec<Vec<u8>> {
        let mut log = Vec::new();
        let mut queue = first;
        for _ in 0..100 {
            if queue.is_empty() {
                break;
            }
            let mut next = Vec::new();
            for f in queue {
                let src = ethernet::Frame::new_checked(&f[..]).unwrap().src_addr();
                for e in ends.iter_mut().filter(|e| e.mac != src) {
                    e.input(1, &f, &mut next);
                }
                log.push(f);
            }
            queue = next;
        }
        log
    }

    fn code(f: &[u8]) -> (u16, u8) {
        let eth = ethernet::Frame::new_checked(f).unwrap();
        (u16::from(eth.ethertype()), f[15])
    }

    #[test]
    fn padi_bytes_are_rfc2516() {
        let mut c = client(b"org-a");
        let mut out = Vec::new();
        c.start(0, &mut out);
        // dst broadcast, EtherType 8863, ver/type 0x11, code 0x09, session 0, length
        // 4+5 + 4+2 = 15; Service-Name 0101 0005 "org-a"; Host-Uniq 0103 0002 abcd.
        let expected: Vec<u8> = [
            &[0xff; 6][..],
            &CLIENT.0,
            &[0x88, 0x63, 0x11, 0x09, 0x00, 0x00, 0x00, 0x0f, 0x01, 0x01, 0x00, 0x05],
            b"org-a",
            &[0x01, 0x03, 0x00, 0x02, 0xab, 0xcd],
        ]
        .concat();
        assert_eq!(out[0], expected);
        assert_eq!(c.poll_at(), Some(DISCOVERY_TIMEOUT_NS));
    }

    #[test]
    fn the_client_joins_the_server_of_its_service() {
        let mut ends = vec![client(b"org-b"), server(10, b"org-a", 0x11), server(20, b"org-b", 0x22)];
        let mut first = Vec::new();
        ends[0].start(0, &mut first);
        let log = segment(&mut ends, first);
        assert!(ends[0].is_up(), "{:?}", ends[0].failure());
        assert_eq!(ends[0].session(), Some((Mac([2, 0, 0, 0, 0, 20]), 0x22)));
        assert!(ends[2].is_up() && ends[1].session().is_none());
        // Only org-b's AC offered (RFC 2516 §5.2 MUST NOT respond otherwise).
        let pados: Vec<_> = log.iter().filter(|f| code(f) == (0x8863, 0x07)).collect();
        assert_eq!(pados.len(), 1);
        assert_eq!(&pados[0][6..12], &[2, 0, 0, 0, 0, 20]);
        let order: Vec<u8> = log.iter().filter(|f| code(f).0 == 0x8863).map(|f| f[15]).collect();
        assert_eq!(order, [0x09, 0x07, 0x19, 0x65], "PADI, PADO, PADR, PADS");
        // Session frames carry the session id and the client's IP flows once IPCP opened.
        let data = ends[0].send_ipv4(&[0x45; 20]).unwrap();
        assert_eq!(&data[12..14], &[0x88, 0x64]);
        assert_eq!(u16::from_be_bytes([data[16], data[17]]), 0x22);
        assert_eq!(&data[20..22], &[0x00, 0x21]);
        let mut out = Vec::new();
        assert_eq!(ends[2].input(2, &data, &mut out).ipv4.unwrap(), vec![0x45; 20]);
    }

    #[test]
    fn no_offer_for_the_service_fails_after_three_padis() {
        let mut ends = vec![client(b"org-c"), server(10, b"org-a", 1)];
        let mut first = Vec::new();
        ends[0].start(0, &mut first);
        segment(&mut ends, first);
        let mut out = Vec::new();
        // 5 s, then 10 s: the second and third PADI; after 20 s more, failure.
        for at in [5, 15, 35] {
            assert_eq!(ends[0].poll_at(), Some(at * 1_000_000_000));
            ends[0].on_timer(at * 1_000_000_000, &mut out);
        }
        assert_eq!(out.len(), 2);
        assert!(ends[0].failure().unwrap().contains("no PADO"));
    }
}
