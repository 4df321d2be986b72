//! PPTP's control connection (RFC 2637 §1.3, §2): the start of the connection, the call,
//! keep-alives, and the stop.

use wire::pptp::{self, result, ErrorCode, OutgoingCallReply, OutgoingCallRequest, Repr, StartControl};

use super::*;

/// RFC 2637 §3.1.4: "the recommended value" to establish the control connection.
pub const ESTABLISH_TIMEOUT_NS: u64 = 60 * SECOND;

/// RFC 2637 §3.1.4: an Echo-Request after 60 s without a control message.
pub const KEEPALIVE_NS: u64 = 60 * SECOND;

/// RFC 2637 §3.1.4: no Echo-Reply within 60 s closes the connection.
pub const ECHO_TIMEOUT_NS: u64 = 60 * SECOND;

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

pub(super) fn start_control(host: &[u8]) -> StartControl {
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
