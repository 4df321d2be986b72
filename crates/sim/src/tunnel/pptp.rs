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

use std::collections::VecDeque;
use std::net::Ipv4Addr;

use wire::gre;
use wire::ppp::{self, Protocol};
use wire::pptp::{self, result, ErrorCode, OutgoingCallReply, OutgoingCallRequest, Repr, StartControl};
use wire::tcp::{self, SeqNumber};
use wire::IpProtocol;

use crate::link::ppp::{PppLink, PppOut};
use crate::tcp::{State as TcpState, TcpConfig, TcpSocket};

const SECOND: u64 = 1_000_000_000;
/// RFC 2637 §3.1.4: "the recommended value" to establish the control connection.
pub const ESTABLISH_TIMEOUT_NS: u64 = 60 * SECOND;
/// RFC 2637 §3.1.4: an Echo-Request after 60 s without a control message.
pub const KEEPALIVE_NS: u64 = 60 * SECOND;
/// RFC 2637 §3.1.4: no Echo-Reply within 60 s closes the connection.
pub const ECHO_TIMEOUT_NS: u64 = 60 * SECOND;
/// Where an acknowledgment due has no data packet to ride on, it goes alone after this
/// delay, or at once when half our receive window is unacknowledged (RFC 2637 §4.2.5
/// allows either; the delay is this model's choice, TCP's 200 ms delayed-ACK bound of
/// Linux, and is well below the sender's initial time-out).
pub const ACK_DELAY_NS: u64 = 200_000_000;
/// The Acknowledgment Time-Out before any round trip was measured: RFC 2637 §4.4 gives
/// none; RFC 6298 §2.1's initial RTO of 1 s is used.
pub const INITIAL_ATO_NS: u64 = SECOND;
/// Data packets held while the transmit window is closed, in multiples of the peer's
/// window; more are dropped ("PPTP transmit window full"). The model's choice.
pub const PENDING_WINDOWS: usize = 2;

/// The role of a PPTP end (RFC 2637 §1.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// PPTP Network Server side that places the call: the client (`pptp` of pptp-linux).
    Pns,
    /// PPTP Access Concentrator: the server (`pptpd`).
    Pac,
}

/// Control connection states (RFC 2637 §3.1.1-§3.1.2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ControlState {
    Idle,
    /// PNS: SCCRQ sent. PAC: waiting for SCCRQ.
    WaitCtlReply,
    Established,
    /// Stop-Control-Connection-Request sent.
    WaitStopReply,
    Closed(String),
}

/// Call states (RFC 2637 §3.2.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallState {
    Idle,
    /// PNS: OCRQ sent.
    WaitReply,
    Established {
        peer_call_id: u16,
        peer_window: u16,
    },
    Cleared,
}

/// What the control connection tells its owner.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// The call is up: GRE may flow with these parameters.
    CallUp { peer_call_id: u16, peer_window: u16 },
    /// The call went down (Call-Disconnect-Notify, Call-Clear-Request, failure).
    CallDown(String),
    /// The control connection closed: the TCP connection is to be closed too.
    Closed(String),
}

/// The control connection and its one call, one side of it (sans-IO: messages in,
/// messages out; `poll_at` for its timers).
#[derive(Debug)]
pub struct Control {
    pub role: Role,
    pub state: ControlState,
    pub call: CallState,
    /// Our Call ID (PNS: in OCRQ; PAC: in OCRP); the peer keys our GRE with it.
    pub call_id: u16,
    /// Our Packet Recv. Window Size.
    pub recv_window: u16,
    pub host_name: Vec<u8>,
    call_serial: u16,
    /// Time the last control message arrived (keep-alive, §3.1.4).
    last_rx: u64,
    /// Echo-Request outstanding: identifier and deadline.
    echo: Option<(u32, u64)>,
    next_echo: u32,
    /// Deadline to reach Established (§3.1.4).
    establish_by: Option<u64>,
    /// Messages sent and received, by type, in order (for tests and traces).
    pub log: Vec<(bool, pptp::ControlType)>,
}

fn start_control(host: &[u8]) -> StartControl {
    // RFC 2637 §2.1: framing and bearer capabilities as pptp-linux and Windows send
    // them (synchronous framing, analog access); Maximum Channels 0 from a PNS.
    StartControl::request(
        pptp::FRAMING_ASYNC | pptp::FRAMING_SYNC,
        pptp::BEARER_ANALOG | pptp::BEARER_DIGITAL,
        1,
        host,
        b"qoslab",
    )
}

impl Control {
    pub fn new(role: Role, call_id: u16, recv_window: u16, host_name: &[u8]) -> Control {
        Control {
            role,
            state: ControlState::Idle,
            call: CallState::Idle,
            call_id,
            recv_window,
            host_name: host_name.to_vec(),
            call_serial: 1,
            last_rx: 0,
            echo: None,
            next_echo: 1,
            establish_by: None,
            log: Vec::new(),
        }
    }

    fn send(&mut self, repr: Repr, out: &mut Vec<Repr>) {
        self.log.push((true, repr.control_type()));
        out.push(repr);
    }

    /// The TCP connection is up (PNS: connected; PAC: accepted). The PNS sends SCCRQ.
    pub fn start(&mut self, now: u64, out: &mut Vec<Repr>) {
        if self.state != ControlState::Idle {
            return;
        }
        self.state = ControlState::WaitCtlReply;
        self.last_rx = now;
        self.establish_by = Some(now + ESTABLISH_TIMEOUT_NS);
        if self.role == Role::Pns {
            let host = self.host_name.clone();
            self.send(Repr::StartControlConnectionRequest(start_control(&host)), out);
        }
    }

    pub fn poll_at(&self) -> Option<u64> {
        match self.state {
            ControlState::WaitCtlReply => self.establish_by,
            ControlState::Established => Some(self.echo.map_or(self.last_rx + KEEPALIVE_NS, |(_, d)| d)),
            _ => None,
        }
    }

    pub fn on_timer(&mut self, now: u64, out: &mut Vec<Repr>) -> Option<Event> {
        match self.state {
            ControlState::WaitCtlReply if self.establish_by.is_some_and(|t| t <= now) => {
                Some(self.close_with("control connection not established within 60 s (RFC 2637 §3.1.4)"))
            }
            ControlState::Established => match self.echo {
                Some((_, deadline)) if deadline <= now => {
                    Some(self.close_with("no Echo-Reply within 60 s (RFC 2637 §3.1.4)"))
                }
                None if self.last_rx + KEEPALIVE_NS <= now => {
                    let identifier = self.next_echo;
                    self.next_echo = self.next_echo.wrapping_add(1);
                    self.echo = Some((identifier, now + ECHO_TIMEOUT_NS));
                    self.send(Repr::EchoRequest { identifier }, out);
                    None
                }
                _ => None,
            },
            _ => None,
        }
    }

    fn close_with(&mut self, why: &str) -> Event {
        self.state = ControlState::Closed(why.into());
        self.call = CallState::Cleared;
        Event::Closed(why.into())
    }

    /// The PNS hangs up: Call-Clear-Request, then Stop-Control-Connection-Request
    /// (RFC 2637 §2.12, §2.3).
    pub fn close(&mut self, out: &mut Vec<Repr>) {
        if self.state != ControlState::Established {
            return;
        }
        if matches!(self.call, CallState::Established { .. } | CallState::WaitReply) && self.role == Role::Pns {
            self.send(Repr::CallClearRequest { call_id: self.call_id }, out);
        }
        self.send(Repr::StopControlConnectionRequest { reason: result::stop_reason::NONE }, out);
        self.state = ControlState::WaitStopReply;
    }

    /// One control message from the peer.
    pub fn input(&mut self, now: u64, repr: Repr, out: &mut Vec<Repr>) -> Option<Event> {
        self.log.push((false, repr.control_type()));
        self.last_rx = now;
        match (self.role, &self.state, repr) {
            (_, _, Repr::EchoRequest { identifier }) => {
                self.send(
                    Repr::EchoReply { identifier, result_code: result::ok::OK, error_code: ErrorCode::None },
                    out,
                );
                None
            }
            (_, _, Repr::EchoReply { identifier, .. }) => {
                if self.echo.is_some_and(|(id, _)| id == identifier) {
                    self.echo = None;
                }
                None
            }
            (Role::Pac, ControlState::WaitCtlReply, Repr::StartControlConnectionRequest(req)) => {
                self.start_request(req, out)
            }
            (Role::Pns, ControlState::WaitCtlReply, Repr::StartControlConnectionReply(rep)) => {
                self.start_reply(rep, out)
            }
            (Role::Pac, ControlState::Established, Repr::OutgoingCallRequest(req)) => {
                self.outgoing_call_request(req, out)
            }
            (Role::Pns, ControlState::Established, Repr::OutgoingCallReply(rep))
                if rep.peer_call_id == self.call_id =>
            {
                if rep.result_code != result::outgoing::CONNECTED {
                    self.call = CallState::Cleared;
                    return Some(Event::CallDown(format!("Outgoing-Call-Reply result {}", rep.result_code)));
                }
                self.call = CallState::Established { peer_call_id: rep.call_id, peer_window: rep.recv_window.max(1) };
                Some(Event::CallUp { peer_call_id: rep.call_id, peer_window: rep.recv_window.max(1) })
            }
            (Role::Pac, ControlState::Established, Repr::CallClearRequest { call_id }) => {
                let ours = matches!(self.call, CallState::Established { peer_call_id, .. } if peer_call_id == call_id);
                if !ours {
                    return None;
                }
                let cdn = pptp::CallDisconnectNotify {
                    call_id: self.call_id,
                    result_code: result::disconnect::REQUEST,
                    error_code: ErrorCode::None,
                    cause_code: 0,
                    call_statistics: [0; pptp::STATS_LEN],
                };
                self.send(Repr::CallDisconnectNotify(cdn), out);
                self.call = CallState::Cleared;
                Some(Event::CallDown("Call-Clear-Request from the PNS".into()))
            }
            (Role::Pns, _, Repr::CallDisconnectNotify(cdn)) => {
                let ours =
                    matches!(self.call, CallState::Established { peer_call_id, .. } if peer_call_id == cdn.call_id);
                if !ours {
                    return None;
                }
                self.call = CallState::Cleared;
                Some(Event::CallDown(format!("Call-Disconnect-Notify result {}", cdn.result_code)))
            }
            (_, _, Repr::StopControlConnectionRequest { .. }) => {
                self.send(
                    Repr::StopControlConnectionReply { result_code: result::ok::OK, error_code: ErrorCode::None },
                    out,
                );
                Some(self.close_with("the peer stopped the control connection"))
            }
            (_, ControlState::WaitStopReply, Repr::StopControlConnectionReply { .. }) => {
                Some(self.close_with("stopped"))
            }
            // Set-Link-Info, WAN-Error-Notify and anything out of place: nothing to do
            // (RFC 2637 §2.14-§2.15 are informational for a PNS).
            _ => None,
        }
    }

    /// At the PAC, the PNS's Start-Control-Connection-Request: answered, and the control
    /// connection established unless the version is another.
    fn start_request(&mut self, req: StartControl, out: &mut Vec<Repr>) -> Option<Event> {
        // RFC 2637 §2.2: version 1.0 is all there is; another is refused.
        let ok = req.protocol_version == pptp::PROTOCOL_VERSION;
        let host = self.host_name.clone();
        let reply = StartControl {
            result_code: if ok { result::start::SUCCESS } else { result::start::VERSION_NOT_SUPPORTED },
            maximum_channels: 1,
            ..start_control(&host)
        };
        self.send(Repr::StartControlConnectionReply(reply), out);
        if ok {
            self.state = ControlState::Established;
            None
        } else {
            Some(self.close_with("PNS asked for another PPTP version"))
        }
    }

    /// At the PNS, the PAC's Start-Control-Connection-Reply: on success the call is asked
    /// for (Outgoing-Call-Request, RFC 2637 §2.7).
    fn start_reply(&mut self, rep: StartControl, out: &mut Vec<Repr>) -> Option<Event> {
        if rep.result_code != result::start::SUCCESS {
            return Some(self.close_with(&format!("Start-Control-Connection-Reply result {}", rep.result_code)));
        }
        self.state = ControlState::Established;
        let serial = self.call_serial;
        self.call_serial = self.call_serial.wrapping_add(1);
        let ocrq = OutgoingCallRequest {
            call_id: self.call_id,
            call_serial: serial,
            // RFC 2637 §2.7: the speeds the PNS accepts; pptp-linux asks 2400 to
            // 10,000,000 b/s; the numbers are informational here.
            minimum_bps: 2_400,
            maximum_bps: 10_000_000,
            bearer_type: 3,
            framing_type: 3,
            recv_window: self.recv_window,
            processing_delay: 0,
            phone_length: 0,
            phone_number: [0; pptp::PHONE_LEN],
            subaddress: [0; pptp::PHONE_LEN],
        };
        self.send(Repr::OutgoingCallRequest(ocrq), out);
        self.call = CallState::WaitReply;
        None
    }

    /// At the PAC, the PNS's Outgoing-Call-Request: connected, or busy when a call is up.
    fn outgoing_call_request(&mut self, req: OutgoingCallRequest, out: &mut Vec<Repr>) -> Option<Event> {
        let busy = matches!(self.call, CallState::Established { .. });
        let reply = OutgoingCallReply {
            call_id: self.call_id,
            peer_call_id: req.call_id,
            result_code: if busy { result::outgoing::BUSY } else { result::outgoing::CONNECTED },
            error_code: ErrorCode::None,
            cause_code: 0,
            connect_speed: req.maximum_bps,
            recv_window: self.recv_window,
            processing_delay: 0,
            physical_channel: 0,
        };
        self.send(Repr::OutgoingCallReply(reply), out);
        if busy {
            return None;
        }
        self.call = CallState::Established { peer_call_id: req.call_id, peer_window: req.recv_window.max(1) };
        Some(Event::CallUp { peer_call_id: req.call_id, peer_window: req.recv_window.max(1) })
    }
}

/// Counters of a data channel.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct GreCounters {
    pub data_sent: u64,
    pub ack_only_sent: u64,
    pub data_received: u64,
    /// §4.3: duplicates and late (out-of-sequence) packets discarded.
    pub out_of_sequence: u64,
    /// §4.4: acknowledgment time-outs (each halves the window).
    pub timeouts: u64,
    /// Packets dropped because the window stayed closed with the hold queue full.
    pub window_drops: u64,
    /// Octets of GRE packets sent and taken (header included), for CPU accounting.
    pub bytes: u64,
}

/// The enhanced-GRE data channel of one call, one side (RFC 2637 §4).
#[derive(Debug)]
pub struct Gre {
    /// The peer's Call ID: the Key of every packet we send (§4.1).
    pub peer_call_id: u16,
    /// Our Call ID: what the peer puts in the packets it sends us.
    pub call_id: u16,
    /// Our receive window (what we announced).
    recv_window: u16,
    /// The peer's receive window: our transmit window's ceiling (§4.2.1).
    peer_window: u16,
    /// The transmit window now (§4.2.1-§4.2.3).
    pub tx_window: u16,
    /// Packets acknowledged since the window last changed (§4.2.3).
    acked_in_window: u32,
    next_seq: u32,
    /// Sent and not yet acknowledged: (sequence, time sent).
    outstanding: VecDeque<(u32, u64)>,
    /// PPP frames waiting for the window to open.
    pending: VecDeque<Vec<u8>>,
    /// The last sequence number received and taken (§4.3), and the last acknowledged.
    last_rx: Option<u32>,
    last_acked: Option<u32>,
    ack_due: Option<u64>,
    /// §4.4.1 state.
    rtt: Option<(f64, f64)>,
    pub ato_ns: u64,
    pub counters: GreCounters,
}

/// `a` is after `b` in 32-bit sequence space.
fn seq_after(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) > 0
}

impl Gre {
    pub fn new(call_id: u16, peer_call_id: u16, recv_window: u16, peer_window: u16) -> Gre {
        let peer_window = peer_window.max(1);
        Gre {
            peer_call_id,
            call_id,
            recv_window: recv_window.max(1),
            peer_window,
            // RFC 2637 §4.2.1: half the peer's size, at least one packet.
            tx_window: peer_window.div_ceil(2).max(1),
            acked_in_window: 0,
            next_seq: 0,
            outstanding: VecDeque::new(),
            pending: VecDeque::new(),
            last_rx: None,
            last_acked: None,
            ack_due: None,
            rtt: None,
            ato_ns: INITIAL_ATO_NS,
            counters: GreCounters::default(),
        }
    }

    fn ack_value(&mut self) -> Option<u32> {
        let ack = self.last_rx.filter(|&r| self.last_acked != Some(r))?;
        self.last_acked = Some(ack);
        self.ack_due = None;
        Some(ack)
    }

    fn emit(&mut self, now: u64, frame: &[u8], out: &mut Vec<Vec<u8>>) {
        let seq = self.next_seq;
        self.next_seq = self.next_seq.wrapping_add(1);
        let ack = self.ack_value();
        let mut packet = Vec::with_capacity(16 + frame.len());
        gre::Repr::pptp(self.peer_call_id, 0, Some(seq), ack).encapsulate(frame, &mut packet);
        self.outstanding.push_back((seq, now));
        self.counters.data_sent += 1;
        self.counters.bytes += packet.len() as u64;
        out.push(packet);
    }

    /// Sends a PPP frame now if the window is open, else holds it (§4.2.1: "the
    /// transmitter stops sending packets when the number of packets awaiting
    /// acknowledgement is equal to the current window size"). `Err` when dropped.
    pub fn send(&mut self, now: u64, frame: Vec<u8>, out: &mut Vec<Vec<u8>>) -> Result<(), String> {
        if self.outstanding.len() < usize::from(self.tx_window) && self.pending.is_empty() {
            self.emit(now, &frame, out);
            return Ok(());
        }
        if self.pending.len() >= PENDING_WINDOWS * usize::from(self.peer_window) {
            self.counters.window_drops += 1;
            return Err("PPTP transmit window full (RFC 2637 §4.2.1) and its hold queue too".into());
        }
        self.pending.push_back(frame);
        Ok(())
    }

    fn release(&mut self, now: u64, out: &mut Vec<Vec<u8>>) {
        while self.outstanding.len() < usize::from(self.tx_window) {
            let Some(frame) = self.pending.pop_front() else { break };
            self.emit(now, &frame, out);
        }
    }

    /// §4.4.1 with the sample of the packet an acknowledgment names (§4.2.5).
    fn sample(&mut self, sample_ns: u64) {
        let s = sample_ns as f64;
        let (rtt, dev) = match self.rtt {
            None => (s, s / 2.0),
            Some((rtt, dev)) => {
                let diff = s - rtt;
                (rtt + diff / 8.0, dev + (diff.abs() - dev) / 4.0)
            }
        };
        self.rtt = Some((rtt, dev));
        self.ato_ns = (rtt + 4.0 * dev).ceil() as u64;
    }

    /// A GRE packet from the peer (its GRE header and PPP frame): returns the PPP frame
    /// of a data packet taken, `Ok(None)` for an acknowledgment alone or a packet
    /// discarded as out of sequence, `Err` for one that is not this call's.
    pub fn input(&mut self, now: u64, bytes: &[u8], out: &mut Vec<Vec<u8>>) -> Result<Option<Vec<u8>>, String> {
        let packet = gre::Packet::new_checked(bytes).map_err(|e| format!("GRE: {e}"))?;
        let repr = gre::Repr::parse(&packet).map_err(|e| format!("enhanced GRE: {e}"))?;
        if repr.version != gre::Version::Enhanced || repr.call_id() != Some(self.call_id) {
            return Err(format!("GRE packet for no PPTP call of ours (call id {:?})", repr.call_id()));
        }
        if let Some(ack) = repr.ack {
            let mut newest = None;
            while let Some(&(seq, at)) = self.outstanding.front() {
                if seq_after(seq, ack) {
                    break;
                }
                self.outstanding.pop_front();
                self.acked_in_window += 1;
                newest = Some((seq, at));
            }
            if let Some((seq, at)) = newest.filter(|&(seq, _)| seq == ack) {
                let _ = seq;
                self.sample(now.saturating_sub(at));
            }
            // §4.2.3: a window's worth acknowledged opens the window by one packet.
            if self.acked_in_window >= u32::from(self.tx_window) && self.tx_window < self.peer_window {
                self.tx_window += 1;
                self.acked_in_window = 0;
            }
            self.release(now, out);
        }
        let len = repr.payload_length().map_or(0, usize::from);
        let Some(seq) = repr.sequence else { return Ok(None) };
        if self.last_rx.is_some_and(|last| !seq_after(seq, last)) {
            self.counters.out_of_sequence += 1;
            return Ok(None);
        }
        self.last_rx = Some(seq);
        self.counters.data_received += 1;
        self.counters.bytes += bytes.len() as u64;
        let unacked = self.last_acked.map_or(seq.wrapping_add(1), |a| seq.wrapping_sub(a));
        if unacked >= u32::from(self.recv_window).div_ceil(2) {
            self.ack_due = Some(now);
        } else {
            self.ack_due.get_or_insert(now + ACK_DELAY_NS);
        }
        Ok(Some(packet.payload()[..len].to_vec()))
    }

    pub fn poll_at(&self) -> Option<u64> {
        let timeout = self.outstanding.front().map(|&(_, at)| at + self.ato_ns);
        [self.ack_due, timeout].into_iter().flatten().min()
    }

    /// Sends an acknowledgment alone if one is due, and handles a time-out (§4.2.2:
    /// the window halves; the packets given up on stop counting against it).
    pub fn on_timer(&mut self, now: u64, out: &mut Vec<Vec<u8>>) {
        if self.outstanding.front().is_some_and(|&(_, at)| at + self.ato_ns <= now) {
            self.counters.timeouts += 1;
            self.tx_window = self.tx_window.div_ceil(2).max(1);
            self.acked_in_window = 0;
            self.outstanding.clear();
            self.release(now, out);
        }
        if self.ack_due.is_some_and(|t| t <= now) {
            if let Some(ack) = self.ack_value() {
                let mut packet = Vec::with_capacity(12);
                gre::Repr::pptp(self.peer_call_id, 0, None, Some(ack)).encapsulate(&[], &mut packet);
                self.counters.ack_only_sent += 1;
                self.counters.bytes += packet.len() as u64;
                out.push(packet);
            }
            self.ack_due = None;
        }
    }
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
