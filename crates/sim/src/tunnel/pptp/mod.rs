//! PPTP (RFC 2637) as sans-IO machines: the control connection, the call, and the
//! enhanced-GRE data channel that carries a PPP link.
//!
//! Standards a reader must know:
//!
//! * RFC 2637 §1.3, §3.1: the PNS (client) opens a TCP connection to the PAC's port
//!   1723 and sends Start-Control-Connection-Request; the PAC answers with a Reply.
//!   §3.1.4 (Keep Alives and Timers): a control connection not established within a
//!   minute is closed; after 60 s without a control message a peer sends an
//!   Echo-Request and closes the connection if no Echo-Reply comes within 60 s.
//!   §3.2.4, §2.7-§2.8: the PNS places an Outgoing-Call-Request with its Call ID and
//!   Packet Recv. Window Size; the PAC answers Outgoing-Call-Reply with its own Call ID,
//!   the PNS's as Peer's Call ID, and its window. §2.12-§2.13: Call-Clear-Request from
//!   the PNS, Call-Disconnect-Notify from the PAC; §2.3-§2.4 Stop-Control-Connection.
//! * RFC 2637 §4.1: each data packet carries the *peer's* Call ID in the GRE Key, a
//!   Sequence Number, and, when one is due, an Acknowledgment Number (piggybacked);
//!   an acknowledgment may travel alone without S or payload.
//!   §4.2.1: the transmit window starts at half the peer's Recv. Window Size (at least
//!   one packet); the sender stops when that many packets await acknowledgment.
//!   §4.2.2: on a time-out the window halves (rounded up, minimum one).
//!   §4.2.3: each window's worth acknowledged without time-out opens it by one, up to
//!   the peer's size. §4.2.5: an Acknowledgment covers every packet at or below it; the
//!   round-trip sample is taken from the packet it names. §4.4.1: the adaptive
//!   Acknowledgment Time-Out, ATO = RTT + χ·DEV with α = 1/8, β = 1/4, χ = 4.
//!   §4.3: out-of-sequence packets may be discarded; as Linux's pptp driver does
//!   (drivers/net/ppp/pptp.c: a sequence number not above the last one taken is
//!   dropped), a duplicate or late packet is discarded, never reordered. Data packets
//!   are never retransmitted (PPP tolerates loss): a time-out only closes the window and
//!   frees the packets it gave up on.
//!
//! The PPP link inside is `ppp::PppLink` with PFC and ACFC asked for (RFC 1661 §6.5,
//! §6.6), as PPTP clients do, so an IPv4 frame's PPP header is the single octet 0x21
//! (seed 002 §3.4). LCP frames always carry address/control and a two-octet protocol.

mod control;
mod data_channel;
pub mod end;

pub use control::{CallState, Control, ControlState, Event};
pub use data_channel::{Gre, GreCounters};

use std::net::Ipv4Addr;

use wire::ppp::{self, Protocol};
use wire::pptp::{self, Repr};
use wire::tcp::{self, SeqNumber};
use wire::IpProtocol;

use crate::link::ppp::{PppLink, PppOut};
use crate::tcp::{State as TcpState, TcpConfig, TcpSocket};

const SECOND: u64 = 1_000_000_000;

/// The role of a PPTP end (RFC 2637 §1.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// PPTP Network Server side that places the call: the client (`pptp` of pptp-linux).
    Pns,
    /// PPTP Access Concentrator: the server (`pptpd`).
    Pac,
}

/// A PPP frame for PPTP's GRE payload: address/control unless the peer took ACFC,
/// the protocol in one octet when the peer took PFC and it fits; LCP always in full
/// (RFC 1661 §6.5, §6.6).
pub fn ppp_frame(protocol: Protocol, info: &[u8], pfc: bool, acfc: bool) -> Vec<u8> {
    let lcp = protocol == Protocol::Lcp;
    let mut frame = Vec::with_capacity(4 + info.len());
    if !acfc || lcp {
        frame.extend_from_slice(&[0xff, 0x03]);
    }
    let mut field = [0u8; 2];
    let n = ppp::emit_protocol(protocol, pfc && !lcp, &mut field);
    frame.extend_from_slice(&field[..n]);
    frame.extend_from_slice(info);
    frame
}

/// Splits a received PPP frame into protocol and information (either form accepted).
pub fn parse_ppp_frame(frame: &[u8]) -> Option<(Protocol, &[u8])> {
    let rest = frame.strip_prefix(&[0xff, 0x03]).unwrap_or(frame);
    let (protocol, n) = ppp::parse_protocol(rest).ok()?;
    Some((protocol, &rest[n..]))
}

/// What an end sends: IP protocol (TCP or GRE) and the transport bytes (a TCP segment
/// with its checksum, or a GRE packet), from `local` to `remote`.
pub type Datagrams = Vec<(IpProtocol, Vec<u8>)>;

/// Who an end is and what it announces.
#[derive(Debug, Clone)]
pub struct Params {
    pub role: Role,
    pub local: Ipv4Addr,
    pub remote: Ipv4Addr,
    /// The PNS's ephemeral TCP port (ignored for the PAC, which listens on 1723).
    pub local_port: u16,
    /// Our Call ID (RFC 2637 §2.7, §2.8).
    pub call_id: u16,
    /// Our Packet Recv. Window Size (RFC 2637 §2.7, §2.8).
    pub recv_window: u16,
    /// Host Name in our Start-Control-Connection message (RFC 2637 §2.1).
    pub host_name: Vec<u8>,
}

/// One end of a PPTP tunnel: the TCP control connection, the call's GRE channel, and
/// the PPP link they carry.
#[derive(Debug)]
pub struct PptpEnd {
    pub local: Ipv4Addr,
    pub remote: Ipv4Addr,
    pub local_port: u16,
    pub remote_port: u16,
    pub tcp: TcpSocket,
    stream: Vec<u8>,
    pub control: Control,
    pub gre: Option<Gre>,
    pub link: PppLink,
    started: bool,
    pub failure: Option<String>,
    /// When the call came up and when IPCP opened (traces and tests).
    pub call_up_at: Option<u64>,
}

impl PptpEnd {
    /// `local_port`: the PNS's ephemeral port (the PAC's is 1723). `iss` the TCP
    /// initial sequence number (from the node's seeded stream).
    pub fn new(p: Params, mut link: PppLink) -> PptpEnd {
        let Params { role, local, remote, local_port, call_id, recv_window, host_name: host } = p;
        let host = &host[..];
        link.lcp.options.compress = true;
        let remote_port = if role == Role::Pns { pptp::PORT } else { 0 };
        let local_port = if role == Role::Pac { pptp::PORT } else { local_port };
        PptpEnd {
            local,
            remote,
            local_port,
            remote_port,
            tcp: TcpSocket::new(TcpConfig::default()),
            stream: Vec::new(),
            control: Control::new(role, call_id, recv_window, host),
            gre: None,
            link,
            started: false,
            failure: None,
            call_up_at: None,
        }
    }

    pub fn role(&self) -> Role {
        self.control.role
    }

    /// IPv4 may flow: call up, IPCP Opened.
    pub fn is_up(&self) -> bool {
        self.gre.is_some() && self.link.is_ip_up()
    }

    /// PNS: connect to the PAC's port 1723; PAC: listen on it (RFC 2637 §1.3).
    pub fn start(&mut self, now: u64, iss: u32, out: &mut Datagrams) {
        if self.started {
            return;
        }
        self.started = true;
        match self.role() {
            Role::Pns => self.tcp.connect(now, self.local_port, pptp::PORT, SeqNumber(iss as i32)),
            Role::Pac => self.tcp.listen(pptp::PORT, SeqNumber(iss as i32)),
        }
        self.flush_tcp(now, out);
    }

    /// Whether a TCP segment from `src:sport` to our `dport` is this end's.
    pub fn claims_tcp(&self, src: Ipv4Addr, sport: u16, dport: u16) -> bool {
        src == self.remote && dport == self.local_port && (self.remote_port == 0 || sport == self.remote_port)
    }

    pub fn poll_at(&self) -> Option<u64> {
        let start = (!self.started).then_some(0);
        [
            start,
            self.tcp.poll_at(),
            self.control.poll_at(),
            self.gre.as_ref().and_then(Gre::poll_at),
            self.gre.as_ref().and_then(|_| self.link.poll_at()),
        ]
        .into_iter()
        .flatten()
        .min()
    }

    pub fn on_timer(&mut self, now: u64, out: &mut Datagrams) {
        let mut msgs = Vec::new();
        if let Some(e) = self.control.on_timer(now, &mut msgs) {
            self.event(now, e, out);
        }
        self.send_control(msgs);
        if self.gre.is_some() {
            let mut ppp = PppOut::new();
            self.link.on_timer(now, &mut ppp);
            self.send_ppp(now, ppp, out);
            let mut packets = Vec::new();
            if let Some(g) = self.gre.as_mut() {
                g.on_timer(now, &mut packets);
            }
            out.extend(packets.into_iter().map(|p| (IpProtocol::Gre, p)));
        }
        self.flush_tcp(now, out);
    }

    /// A TCP segment of the control connection.
    pub fn input_tcp(&mut self, now: u64, repr: &tcp::Repr, payload: &[u8], out: &mut Datagrams) {
        if self.remote_port == 0 && repr.control == tcp::Control::Syn {
            self.remote_port = repr.src_port;
        }
        let was = self.tcp.state();
        if let Some(rst) = self.tcp.process(now, repr, payload) {
            self.push_segment(rst, &[], out);
        }
        if was != TcpState::Established && self.tcp.state() == TcpState::Established {
            let mut msgs = Vec::new();
            self.control.start(now, &mut msgs);
            self.send_control(msgs);
        }
        // GRE the messages start (the PPP link's first LCP packets) leaves after the
        // TCP segment carrying the message that brought the call up, as pptpd starts
        // pppd only once its Outgoing-Call-Reply is written.
        let mut gre_out = Datagrams::new();
        let mut buf = vec![0u8; self.tcp.recv_queue()];
        let n = self.tcp.recv_slice(&mut buf);
        self.stream.extend_from_slice(&buf[..n]);
        loop {
            match pptp::next_message(&self.stream) {
                Ok(Some(len)) => {
                    let message: Vec<u8> = self.stream.drain(..len).collect();
                    let parsed = pptp::Packet::new_checked(&message[..]).and_then(|p| Repr::parse(&p));
                    let mut msgs = Vec::new();
                    match parsed {
                        Ok(repr) => {
                            if let Some(e) = self.control.input(now, repr, &mut msgs) {
                                self.event(now, e, &mut gre_out);
                            }
                        }
                        // RFC 2637 has no error reply to a malformed message: it is
                        // noted and skipped (its Length kept the stream in step).
                        Err(e) => {
                            self.failure.get_or_insert(format!("bad PPTP control message: {e}"));
                        }
                    }
                    self.send_control(msgs);
                }
                Ok(None) => break,
                Err(e) => {
                    self.failure.get_or_insert(format!("PPTP control stream out of step: {e}"));
                    self.tcp.abort();
                    break;
                }
            }
        }
        self.flush_tcp(now, out);
        out.extend(gre_out);
    }

    fn send_control(&mut self, msgs: Vec<Repr>) {
        for m in msgs {
            let mut bytes = Vec::new();
            m.encode(&mut bytes);
            self.tcp.send_slice(&bytes);
        }
    }

    fn event(&mut self, now: u64, e: Event, out: &mut Datagrams) {
        match e {
            Event::CallUp { peer_call_id, peer_window } => {
                self.gre = Some(Gre::new(self.control.call_id, peer_call_id, self.control.recv_window, peer_window));
                self.call_up_at = Some(now);
                let mut ppp = PppOut::new();
                self.link.start(now, &mut ppp);
                self.send_ppp(now, ppp, out);
            }
            Event::CallDown(why) => {
                self.gre = None;
                self.failure.get_or_insert(why);
            }
            Event::Closed(why) => {
                self.gre = None;
                self.failure.get_or_insert(why);
                self.tcp.close();
            }
        }
    }

    fn push_segment(&self, repr: tcp::Repr, payload: &[u8], out: &mut Datagrams) {
        let mut segment = Vec::with_capacity(repr.buffer_len());
        repr.encapsulate(&self.local, &self.remote, payload, &mut segment);
        out.push((IpProtocol::Tcp, segment));
    }

    fn flush_tcp(&mut self, now: u64, out: &mut Datagrams) {
        let mut segments = Vec::new();
        self.tcp.dispatch(now, |repr, payload| segments.push((repr, payload.to_vec())));
        for (repr, payload) in segments {
            self.push_segment(repr, &payload, out);
        }
    }

    fn send_ppp(&mut self, now: u64, ppp: PppOut, out: &mut Datagrams) {
        let (pfc, acfc) = (self.link.lcp.options.peer_pfc, self.link.lcp.options.peer_acfc);
        let Some(g) = self.gre.as_mut() else { return };
        let mut packets = Vec::new();
        for (protocol, info) in ppp {
            let _ = g.send(now, ppp_frame(protocol, &info, pfc, acfc), &mut packets);
        }
        out.extend(packets.into_iter().map(|p| (IpProtocol::Gre, p)));
    }

    /// A GRE packet from the peer: an IPv4 datagram the link delivered, if any.
    pub fn input_gre(&mut self, now: u64, bytes: &[u8], out: &mut Datagrams) -> Result<Option<Vec<u8>>, String> {
        let Some(g) = self.gre.as_mut() else { return Err("GRE before the PPTP call is up".into()) };
        let mut packets = Vec::new();
        let frame = g.input(now, bytes, &mut packets);
        out.extend(packets.into_iter().map(|p| (IpProtocol::Gre, p)));
        let Some(frame) = frame? else { return Ok(None) };
        let (protocol, info) = parse_ppp_frame(&frame).ok_or("malformed PPP frame in GRE")?;
        if protocol == Protocol::Ipv4 {
            // RFC 1332 §2: no IP before IPCP is Opened.
            return if self.link.is_ip_up() {
                Ok(Some(info.to_vec()))
            } else {
                Err("IPv4 in PPTP before IPCP opened".into())
            };
        }
        let mut ppp = PppOut::new();
        self.link.input(now, protocol, info, &mut ppp);
        self.send_ppp(now, ppp, out);
        Ok(None)
    }

    /// An IPv4 datagram for the tunnel (PPP protocol 0x0021 in GRE).
    pub fn send_ipv4(&mut self, now: u64, packet: &[u8], out: &mut Datagrams) -> Result<(), String> {
        if !self.is_up() {
            return Err(match &self.failure {
                Some(why) => format!("PPTP tunnel down: {why}"),
                None => {
                    "PPTP tunnel not up yet (control connection, call, LCP, authentication or IPCP under way)".into()
                }
            });
        }
        let frame = ppp_frame(Protocol::Ipv4, packet, self.link.lcp.options.peer_pfc, self.link.lcp.options.peer_acfc);
        let g = self.gre.as_mut().expect("up");
        let mut packets = Vec::new();
        let sent = g.send(now, frame, &mut packets);
        out.extend(packets.into_iter().map(|p| (IpProtocol::Gre, p)));
        sent
    }

    /// The PNS hangs up (Call-Clear-Request, Stop-Control-Connection-Request).
    pub fn close(&mut self, now: u64, out: &mut Datagrams) {
        let mut msgs = Vec::new();
        self.control.close(&mut msgs);
        self.send_control(msgs);
        self.flush_tcp(now, out);
    }
}

#[cfg(test)]
mod test {
    use super::*;
    use crate::link::ppp::auth::Authenticator;
    use crate::link::ppp::ipcp::IpcpOptions;
    use crate::link::ppp::lcp::{Auth, LcpOptions};
    use wire::gre;
    use wire::pptp::{result, ErrorCode};

    use super::control::start_control;
    use super::control::{ECHO_TIMEOUT_NS, ESTABLISH_TIMEOUT_NS, KEEPALIVE_NS};
    use super::data_channel::ACK_DELAY_NS;
    use std::collections::VecDeque;
    use wire::pptp::ControlType as T;

    fn pair() -> (Control, Control) {
        (Control::new(Role::Pns, 0x0100, 64, b"pns"), Control::new(Role::Pac, 0x0200, 32, b"pac"))
    }

    /// Delivers every message of `from` to `to` and returns what `to` answered and its events.
    fn deliver(now: u64, msgs: Vec<Repr>, to: &mut Control) -> (Vec<Repr>, Vec<Event>) {
        let (mut out, mut events) = (Vec::new(), Vec::new());
        for m in msgs {
            // Through the bytes, as the TCP stream carries them.
            let mut bytes = Vec::new();
            m.encode(&mut bytes);
            let parsed = Repr::parse(&pptp::Packet::new_checked(&bytes[..]).unwrap()).unwrap();
            events.extend(to.input(now, parsed, &mut out));
        }
        (out, events)
    }

    #[test]
    fn control_connection_then_outgoing_call() {
        let (mut pns, mut pac) = pair();
        let mut out = Vec::new();
        pac.start(0, &mut out);
        assert!(out.is_empty(), "the PAC waits for the SCCRQ (RFC 2637 §3.1.2)");
        pns.start(0, &mut out);
        let Repr::StartControlConnectionRequest(sccrq) = &out[0] else { panic!("{out:?}") };
        assert_eq!((sccrq.protocol_version, sccrq.maximum_channels), (0x0100, 0), "RFC 2637 §2.1");
        let (sccrp, ev) = deliver(0, out, &mut pac);
        assert!(ev.is_empty());
        assert_eq!(pac.state, ControlState::Established);
        let (ocrq, ev) = deliver(1, sccrp, &mut pns);
        assert!(ev.is_empty());
        let Repr::OutgoingCallRequest(req) = &ocrq[0] else { panic!("{ocrq:?}") };
        assert_eq!((req.call_id, req.recv_window), (0x0100, 64));
        assert_eq!(pns.call, CallState::WaitReply);
        let (ocrp, ev) = deliver(2, ocrq, &mut pac);
        assert_eq!(ev, vec![Event::CallUp { peer_call_id: 0x0100, peer_window: 64 }]);
        let Repr::OutgoingCallReply(rep) = &ocrp[0] else { panic!() };
        assert_eq!((rep.call_id, rep.peer_call_id, rep.result_code, rep.recv_window), (0x0200, 0x0100, 1, 32));
        let (none, ev) = deliver(3, ocrp, &mut pns);
        assert!(none.is_empty());
        assert_eq!(ev, vec![Event::CallUp { peer_call_id: 0x0200, peer_window: 32 }]);
        let types: Vec<_> = pns.log.iter().map(|&(sent, t)| (sent, t)).collect();
        assert_eq!(
            types,
            [
                (true, T::StartControlConnectionRequest),
                (false, T::StartControlConnectionReply),
                (true, T::OutgoingCallRequest),
                (false, T::OutgoingCallReply)
            ]
        );

        // Hang-up: CCRQ and StopCCRQ from the PNS; CDN and StopCCRP from the PAC.
        let mut out = Vec::new();
        pns.close(&mut out);
        assert_eq!(
            out.iter().map(Repr::control_type).collect::<Vec<_>>(),
            [T::CallClearRequest, T::StopControlConnectionRequest]
        );
        let (answers, ev) = deliver(4, out, &mut pac);
        assert_eq!(
            answers.iter().map(Repr::control_type).collect::<Vec<_>>(),
            [T::CallDisconnectNotify, T::StopControlConnectionReply]
        );
        assert!(matches!(ev[..], [Event::CallDown(_), Event::Closed(_)]));
        let (_, ev) = deliver(5, answers, &mut pns);
        assert!(matches!(ev[..], [Event::CallDown(_), Event::Closed(_)]));
    }

    #[test]
    fn keepalive_echo_and_dead_peer() {
        let (mut pns, mut pac) = pair();
        let mut out = Vec::new();
        pac.start(0, &mut out);
        pns.start(0, &mut out);
        let (sccrp, _) = deliver(0, std::mem::take(&mut out), &mut pac);
        deliver(0, sccrp, &mut pns);
        // RFC 2637 §3.1.4: 60 s without a message → Echo-Request.
        assert_eq!(pns.poll_at(), Some(KEEPALIVE_NS));
        assert!(pns.on_timer(KEEPALIVE_NS - 1, &mut out).is_none() && out.is_empty());
        pns.on_timer(KEEPALIVE_NS, &mut out);
        let Repr::EchoRequest { identifier } = out[0] else { panic!("{out:?}") };
        let (reply, _) = deliver(KEEPALIVE_NS + 5, std::mem::take(&mut out), &mut pac);
        assert_eq!(reply, vec![Repr::EchoReply { identifier, result_code: 1, error_code: ErrorCode::None }]);
        deliver(KEEPALIVE_NS + 10, reply, &mut pns);
        assert_eq!(pns.poll_at(), Some(2 * KEEPALIVE_NS + 10), "the reply counts as traffic");
        // Now the PAC goes silent: the next Echo-Request goes unanswered for 60 s.
        pns.on_timer(2 * KEEPALIVE_NS + 10, &mut out);
        assert_eq!(out.len(), 1);
        assert_eq!(pns.poll_at(), Some(2 * KEEPALIVE_NS + 10 + ECHO_TIMEOUT_NS));
        let ev = pns.on_timer(2 * KEEPALIVE_NS + 10 + ECHO_TIMEOUT_NS, &mut out);
        assert!(matches!(ev, Some(Event::Closed(_))));
        assert!(matches!(pns.state, ControlState::Closed(_)));
    }

    #[test]
    fn establishment_times_out_and_versions_are_checked() {
        let mut pns = Control::new(Role::Pns, 1, 64, b"pns");
        let mut out = Vec::new();
        pns.start(0, &mut out);
        assert!(pns.on_timer(ESTABLISH_TIMEOUT_NS - 1, &mut out).is_none());
        assert!(matches!(pns.on_timer(ESTABLISH_TIMEOUT_NS, &mut out), Some(Event::Closed(_))));
        let mut pac = Control::new(Role::Pac, 2, 64, b"pac");
        pac.start(0, &mut out);
        let mut req = start_control(b"x");
        req.protocol_version = 0x0200;
        let mut answers = Vec::new();
        assert!(matches!(pac.input(1, Repr::StartControlConnectionRequest(req), &mut answers), Some(Event::Closed(_))));
        let Repr::StartControlConnectionReply(rep) = &answers[0] else { panic!() };
        assert_eq!(rep.result_code, result::start::VERSION_NOT_SUPPORTED);
    }

    fn data(gre_packet: &[u8]) -> gre::Repr {
        gre::Repr::parse(&gre::Packet::new_checked(gre_packet).unwrap()).unwrap()
    }

    #[test]
    fn gre_window_opens_from_half_and_halves_on_timeout() {
        // The peer announced 8: the window starts at 4 (RFC 2637 §4.2.1).
        let mut tx = Gre::new(0x10, 0x20, 64, 8);
        let mut out = Vec::new();
        for i in 0..10u8 {
            tx.send(0, vec![0x21, i], &mut out).unwrap();
        }
        assert_eq!(out.len(), 4);
        let first = data(&out[0]);
        assert_eq!(
            (first.call_id(), first.sequence, first.ack, first.payload_length()),
            (Some(0x20), Some(0), None, Some(2))
        );
        assert_eq!(out.iter().map(|p| data(p).sequence.unwrap()).collect::<Vec<_>>(), [0, 1, 2, 3]);
        // An acknowledgment alone of packet 3 (all four, §4.2.5), 10 ms later: a
        // window's worth, so the window opens to 5 (§4.2.3) and five more go.
        let mut ack = Vec::new();
        gre::Repr::pptp(0x10, 0, None, Some(3)).encapsulate(&[], &mut ack);
        out.clear();
        assert_eq!(tx.input(10_000_000, &ack, &mut out), Ok(None));
        assert_eq!(tx.tx_window, 5);
        assert_eq!(out.iter().map(|p| data(p).sequence.unwrap()).collect::<Vec<_>>(), [4, 5, 6, 7, 8]);
        // §4.4.1 with one sample of 10 ms: RTT 10 ms, DEV 5 ms, ATO = 10 + 4·5 = 30 ms.
        assert_eq!(tx.ato_ns, 30_000_000);
        // No acknowledgment: the time-out halves the window (5 → 3, §4.2.2) and the
        // last held packet goes.
        assert_eq!(tx.poll_at(), Some(10_000_000 + 30_000_000));
        out.clear();
        tx.on_timer(40_000_000, &mut out);
        assert_eq!((tx.tx_window, tx.counters.timeouts), (3, 1));
        assert_eq!(out.iter().map(|p| data(p).sequence.unwrap()).collect::<Vec<_>>(), [9]);
    }

    #[test]
    fn gre_receiver_discards_out_of_sequence_and_acknowledges() {
        let mut rx = Gre::new(0x10, 0x20, 8, 8);
        let packet = |seq: u32| {
            let mut p = Vec::new();
            gre::Repr::pptp(0x10, 0, Some(seq), None).encapsulate(&[0x21, seq as u8], &mut p);
            p
        };
        let mut out = Vec::new();
        assert_eq!(rx.input(0, &packet(0), &mut out), Ok(Some(vec![0x21, 0])));
        assert_eq!(rx.input(1, &packet(2), &mut out), Ok(Some(vec![0x21, 2])));
        // Late (1 after 2) and duplicate (2): discarded (RFC 2637 §4.3, as Linux does).
        assert_eq!(rx.input(2, &packet(1), &mut out), Ok(None));
        assert_eq!(rx.input(3, &packet(2), &mut out), Ok(None));
        assert_eq!(rx.counters.out_of_sequence, 2);
        // Packets for another call are not ours.
        let mut other = Vec::new();
        gre::Repr::pptp(0x11, 0, Some(9), None).encapsulate(&[0x21], &mut other);
        assert!(rx.input(4, &other, &mut out).is_err());
        // Two taken of a window of 8: the ack waits ACK_DELAY for data to ride on.
        assert_eq!(rx.poll_at(), Some(ACK_DELAY_NS));
        rx.send(5, vec![0x21, 0xaa], &mut out).unwrap();
        let sent = data(&out[0]);
        assert_eq!((sent.sequence, sent.ack), (Some(0), Some(2)), "piggybacked (RFC 2637 §4.1)");
        assert_eq!(rx.poll_at(), Some(5 + rx.ato_ns), "nothing due but the sender's time-out");
        // Four unacknowledged (half of 8) → an acknowledgment alone at once.
        for s in 3..7 {
            rx.input(10, &packet(s), &mut out).unwrap();
        }
        assert_eq!(rx.poll_at(), Some(10));
        out.clear();
        rx.on_timer(10, &mut out);
        let alone = data(&out[0]);
        assert_eq!((alone.sequence, alone.ack, alone.payload_length(), out[0].len()), (None, Some(6), Some(0), 12));
        assert_eq!(rx.counters.ack_only_sent, 1);
    }

    #[test]
    fn ppp_frames_compress_only_when_agreed() {
        assert_eq!(ppp_frame(Protocol::Ipv4, &[0x45], true, true), [0x21, 0x45]);
        assert_eq!(ppp_frame(Protocol::Ipv4, &[0x45], false, false), [0xff, 0x03, 0x00, 0x21, 0x45]);
        // RFC 1661 §6.5/§6.6: LCP never compressed.
        assert_eq!(ppp_frame(Protocol::Lcp, &[1], true, true), [0xff, 0x03, 0xc0, 0x21, 1]);
        assert_eq!(parse_ppp_frame(&[0x21, 0x45]), Some((Protocol::Ipv4, &[0x45][..])));
        assert_eq!(parse_ppp_frame(&[0xff, 0x03, 0xc0, 0x21, 1]), Some((Protocol::Lcp, &[1][..])));
    }

    fn ends(secret: &[u8]) -> (PptpEnd, PptpEnd) {
        let (pns_ip, pac_ip) = (Ipv4Addr::new(10, 8, 0, 2), Ipv4Addr::new(10, 8, 0, 1));
        let mut client_link = PppLink::new(
            LcpOptions::new(1400, 0x1111, None, Some(Auth::MsChapV2)),
            IpcpOptions { local: Ipv4Addr::UNSPECIFIED, assign: None, peer: None },
            None,
            Some((b"alice".to_vec(), secret.to_vec())),
        );
        client_link.set_peer_challenge([7; 16]);
        let server_link = PppLink::new(
            LcpOptions::new(1400, 0x2222, Some(Auth::MsChapV2), None),
            IpcpOptions {
                local: Ipv4Addr::new(192, 168, 9, 1),
                assign: Some(Ipv4Addr::new(192, 168, 9, 2)),
                peer: None,
            },
            Some(Authenticator::mschapv2(b"pptpd", b"s3cret", [9; 16], 1)),
            None,
        );
        (
            PptpEnd::new(
                Params {
                    role: Role::Pns,
                    local: pns_ip,
                    remote: pac_ip,
                    local_port: 40_000,
                    call_id: 0x0100,
                    recv_window: 64,
                    host_name: b"pns".to_vec(),
                },
                client_link,
            ),
            PptpEnd::new(
                Params {
                    role: Role::Pac,
                    local: pac_ip,
                    remote: pns_ip,
                    local_port: 0,
                    call_id: 0x0200,
                    recv_window: 64,
                    host_name: b"pac".to_vec(),
                },
                server_link,
            ),
        )
    }

    /// Runs two ends against each other over a lossless 1 ms path until quiet or
    /// `until`; returns every datagram in the order sent: (from PNS, protocol, bytes).
    fn run(a: &mut PptpEnd, b: &mut PptpEnd, until: u64) -> Vec<(bool, IpProtocol, Vec<u8>)> {
        let mut log = Vec::new();
        let mut queue: VecDeque<(u64, bool, IpProtocol, Vec<u8>)> = VecDeque::new();
        let mut now = 0;
        let mut out = Vec::new();
        b.start(0, 77, &mut out);
        a.start(0, 1000, &mut out);
        queue.extend(out.drain(..).map(|(p, d)| (1_000_000, true, p, d)));
        while now < until {
            let next_timer = [a.poll_at(), b.poll_at()].into_iter().flatten().min();
            let next_packet = queue.front().map(|q| q.0);
            let Some(t) = [next_timer, next_packet].into_iter().flatten().min() else { break };
            now = t.max(now);
            if next_packet == Some(t) {
                let (_, from_a, protocol, bytes) = queue.pop_front().unwrap();
                log.push((from_a, protocol, bytes.clone()));
                let to = if from_a { &mut *b } else { &mut *a };
                match protocol {
                    IpProtocol::Tcp => {
                        let seg = tcp::Packet::new_checked(&bytes[..]).unwrap();
                        let repr = tcp::Repr::parse(&seg, &to.remote, &to.local).unwrap();
                        to.input_tcp(now, &repr, seg.payload(), &mut out);
                    }
                    _ => {
                        to.input_gre(now, &bytes, &mut out).unwrap();
                    }
                }
                queue.extend(out.drain(..).map(|(p, d)| (now + 1_000_000, !from_a, p, d)));
            } else {
                for (end, from_a) in [(&mut *a, true), (&mut *b, false)] {
                    if end.poll_at().is_some_and(|p| p <= now) {
                        end.on_timer(now, &mut out);
                        queue.extend(out.drain(..).map(|(p, d)| (now + 1_000_000, from_a, p, d)));
                    }
                }
            }
        }
        log
    }

    #[test]
    fn tunnel_comes_up_in_rfc_order_and_carries_ipv4_with_13_octets_of_gre_and_ppp() {
        let (mut pns, mut pac) = ends(b"s3cret");
        let log = run(&mut pns, &mut pac, 5_000_000_000);
        assert!(pns.is_up() && pac.is_up(), "{:?} {:?}", pns.failure, pac.failure);
        assert_eq!(pns.link.local_address(), Ipv4Addr::new(192, 168, 9, 2));
        // Every TCP segment carrying control messages precedes the first GRE packet.
        let first_gre = log.iter().position(|(_, p, _)| *p == IpProtocol::Gre).unwrap();
        let last_control = log
            .iter()
            .rposition(|(_, p, b)| {
                *p == IpProtocol::Tcp && !tcp::Packet::new_checked(&b[..]).unwrap().payload().is_empty()
            })
            .unwrap();
        assert!(last_control < first_gre, "control exchange (SCCRQ..OCRP) before data");
        // The PPP link negotiated inside GRE: LCP (with PFC/ACFC), MS-CHAPv2 (c223,
        // algorithm 0x81), IPCP, in that order.
        let protocols: Vec<Protocol> = log
            .iter()
            .filter(|(_, p, _)| *p == IpProtocol::Gre)
            .filter_map(|(_, _, b)| {
                let g = gre::Packet::new_checked(&b[..]).unwrap();
                (!g.payload().is_empty()).then(|| parse_ppp_frame(g.payload()).unwrap().0)
            })
            .collect();
        let first = |p: Protocol| protocols.iter().position(|&x| x == p).unwrap();
        assert!(first(Protocol::Lcp) < first(Protocol::Chap) && first(Protocol::Chap) < first(Protocol::Ipcp));
        assert!(pns.link.lcp.options.peer_pfc && pns.link.lcp.options.peer_acfc);
        // A data packet: GRE 12 octets (+4 when an ack rides along) and PPP 1 octet
        // (seed 002 §3.4), then the datagram.
        let datagram = [0x45u8; 100];
        let mut out = Vec::new();
        pns.send_ipv4(6_000_000_000, &datagram, &mut out).unwrap();
        let (protocol, bytes) = &out[0];
        assert_eq!(*protocol, IpProtocol::Gre);
        let g = data(bytes);
        let header = g.header_len();
        assert_eq!(header, if g.ack.is_some() { 16 } else { 12 });
        assert_eq!(bytes.len(), header + 1 + datagram.len());
        assert_eq!(bytes[header], 0x21);
        let mut back = Vec::new();
        assert_eq!(pac.input_gre(6_001_000_000, bytes, &mut back), Ok(Some(datagram.to_vec())));
        // The control log at the PNS follows RFC 2637 §3.1/§3.2.4.
        let types: Vec<_> = pns.control.log.iter().map(|&(sent, t)| (sent, t)).collect();
        assert_eq!(
            types[..4],
            [
                (true, T::StartControlConnectionRequest),
                (false, T::StartControlConnectionReply),
                (true, T::OutgoingCallRequest),
                (false, T::OutgoingCallReply)
            ]
        );
    }

    #[test]
    fn wrong_password_never_brings_ip_up() {
        let (mut pns, mut pac) = ends(b"guess");
        run(&mut pns, &mut pac, 5_000_000_000);
        assert!(pns.gre.is_some(), "the call itself is up");
        assert!(!pns.is_up() && !pac.is_up());
        assert!(pns.link.failure.is_some());
        let mut out = Vec::new();
        assert!(pns.send_ipv4(0, &[0x45; 20], &mut out).is_err());
    }
}
