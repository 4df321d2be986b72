//! The option negotiation automaton that LCP and IPCP share (RFC 1661 §4).
//!
//! Standards: RFC 1661 §4.1 (the state transition table), §4.2-§4.4 (states, events,
//! actions), §4.6 (Restart timer 3 s, Max-Terminate 2, Max-Configure 10, Max-Failure 5),
//! §5 (the Configure-/Terminate-/Code-Reject packets). RFC 1332 §2 reuses it for IPCP.
//!
//! Sans-IO: the automaton takes `now` and events, writes the control packets it sends
//! (code, identifier, length, data: RFC 1661 §5) to `out`, reports This-Layer-Up/Down/
//! Finished in its return value, and says when it next needs waking ([`Fsm::poll_at`]).
//! What the options mean is the protocol's, behind the [`Options`] trait.
//!
//! Modelled events: Up, Open, Close, TO+, TO-, RCR+, RCR-, RCA, RCN, RTR, RTA, RUC. Not
//! modelled: Down (a simulated Ethernet or tunnel never goes down under PPP), RXJ±
//! (Code-/Protocol-Reject of a code the peer must know is answered as RUC), RXR (Echo
//! and Discard are answered by the protocol, outside the automaton).

use wire::ppp::{Code, ControlPacket, ControlRepr};

/// RFC 1661 §4.6: "The Restart timer ... default value SHOULD be three (3) seconds."
pub const RESTART_NS: u64 = 3_000_000_000;
/// RFC 1661 §4.6: Max-Terminate default 2.
pub const MAX_TERMINATE: u32 = 2;
/// RFC 1661 §4.6: Max-Configure default 10.
pub const MAX_CONFIGURE: u32 = 10;
/// RFC 1661 §4.6: Max-Failure default 5 (Configure-Naks before Configure-Rejects).
pub const MAX_FAILURE: u32 = 5;

/// RFC 1661 §4.2 states.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    Initial,
    Starting,
    Closed,
    Stopped,
    Closing,
    Stopping,
    ReqSent,
    AckRcvd,
    AckSent,
    Opened,
}

/// What the layer above hears (RFC 1661 §4.4: tlu, tld, tls, tlf).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signal {
    /// This-Layer-Up: the automaton entered Opened.
    Up,
    /// This-Layer-Down: it left Opened.
    Down,
    /// This-Layer-Started.
    Started,
    /// This-Layer-Finished: the link may be released (Closed or Stopped entered).
    Finished,
}

/// How a protocol reads and answers Configure-Request options (RFC 1661 §5.1-§5.4).
pub trait Options {
    /// The data (options) of our next Configure-Request.
    fn request(&self) -> Vec<u8>;
    /// The peer's Configure-Request options: `Ok(())` to acknowledge all of them, or the
    /// code (Configure-Nak or Configure-Reject) and the options it carries. `reject_naks`
    /// is set once Max-Failure Naks were sent (RFC 1661 §4.6): Nak becomes Reject.
    fn check(&mut self, data: &[u8], reject_naks: bool) -> Result<(), (Code, Vec<u8>)>;
    /// The peer acknowledged our request (its data are our options).
    fn acked(&mut self, data: &[u8]);
    /// The peer sent Configure-Nak (`nak`) or Configure-Reject for our request: adjust
    /// the next request.
    fn refused(&mut self, nak: bool, data: &[u8]);
}

/// One control protocol's automaton.
#[derive(Debug)]
pub struct Fsm<O> {
    pub options: O,
    state: State,
    /// Identifier of our last Configure-Request (RFC 1661 §5.1: a reply must match it).
    request_id: u8,
    next_id: u8,
    restart_count: u32,
    failures: u32,
    timer: Option<u64>,
}

impl<O: Options> Fsm<O> {
    pub fn new(options: O) -> Fsm<O> {
        Fsm { options, state: State::Initial, request_id: 0, next_id: 1, restart_count: 0, failures: 0, timer: None }
    }

    pub fn state(&self) -> State {
        self.state
    }

    pub fn is_opened(&self) -> bool {
        self.state == State::Opened
    }

    /// When the Restart timer expires, if it runs.
    pub fn poll_at(&self) -> Option<u64> {
        self.timer
    }

    fn id(&mut self) -> u8 {
        let id = self.next_id;
        self.next_id = self.next_id.wrapping_add(1);
        id
    }

    /// irc: Initialize-Restart-Count for configuring (`terminate` false) or terminating.
    fn irc(&mut self, terminate: bool) {
        self.restart_count = if terminate { MAX_TERMINATE } else { MAX_CONFIGURE };
        self.failures = 0;
    }

    /// scr: Send-Configure-Request (decrements the restart counter, arms the timer).
    fn scr(&mut self, now: u64, out: &mut Vec<Vec<u8>>) {
        self.request_id = self.id();
        let data = self.options.request();
        out.push(control(Code::ConfigureRequest, self.request_id, &data));
        self.restart_count = self.restart_count.saturating_sub(1);
        self.timer = Some(now + RESTART_NS);
    }

    /// str: Send-Terminate-Request.
    fn str(&mut self, now: u64, out: &mut Vec<Vec<u8>>) {
        let id = self.id();
        out.push(control(Code::TerminateRequest, id, &[]));
        self.restart_count = self.restart_count.saturating_sub(1);
        self.timer = Some(now + RESTART_NS);
    }

    /// Event Up: the lower layer is ready (RFC 1661 §4.3).
    pub fn up(&mut self, now: u64, out: &mut Vec<Vec<u8>>) -> Option<Signal> {
        match self.state {
            State::Initial => self.state = State::Closed,
            State::Starting => {
                self.irc(false);
                self.scr(now, out);
                self.state = State::ReqSent;
            }
            _ => {}
        }
        None
    }

    /// Event Open: the administrator (here the link's configuration) allows the link.
    pub fn open(&mut self, now: u64, out: &mut Vec<Vec<u8>>) -> Option<Signal> {
        match self.state {
            State::Initial => {
                self.state = State::Starting;
                return Some(Signal::Started);
            }
            State::Closed => {
                self.irc(false);
                self.scr(now, out);
                self.state = State::ReqSent;
            }
            State::Closing => self.state = State::Stopping,
            _ => {}
        }
        None
    }

    /// Event Close (RFC 1661 §4.3): terminate the link.
    pub fn close(&mut self, now: u64, out: &mut Vec<Vec<u8>>) -> Option<Signal> {
        match self.state {
            State::Starting => {
                self.state = State::Initial;
                Some(Signal::Finished)
            }
            State::Stopped => {
                self.state = State::Closed;
                None
            }
            State::Stopping => {
                self.state = State::Closing;
                None
            }
            State::ReqSent | State::AckRcvd | State::AckSent => {
                self.irc(true);
                self.str(now, out);
                self.state = State::Closing;
                None
            }
            State::Opened => {
                self.irc(true);
                self.str(now, out);
                self.state = State::Closing;
                Some(Signal::Down)
            }
            _ => None,
        }
    }

    /// The Restart timer expired at `now` (TO+ or TO-).
    pub fn on_timer(&mut self, now: u64, out: &mut Vec<Vec<u8>>) -> Option<Signal> {
        if self.timer.is_none_or(|t| t > now) {
            return None;
        }
        self.timer = None;
        let more = self.restart_count > 0;
        match (self.state, more) {
            (State::Closing | State::Stopping, true) => {
                self.str(now, out);
                None
            }
            (State::ReqSent | State::AckRcvd, true) => {
                self.scr(now, out);
                self.state = State::ReqSent;
                None
            }
            (State::AckSent, true) => {
                self.scr(now, out);
                None
            }
            (State::Closing, false) => {
                self.state = State::Closed;
                Some(Signal::Finished)
            }
            (State::Stopping | State::ReqSent | State::AckRcvd | State::AckSent, false) => {
                // RFC 1661 §4.3 TO-: the peer never answered; the link gives up.
                self.state = State::Stopped;
                Some(Signal::Finished)
            }
            _ => None,
        }
    }

    /// A received control packet of this protocol (RFC 1661 §5). Codes other than
    /// 1-7 are the protocol's to handle before calling this (LCP's Echo, Discard, ...).
    pub fn input(&mut self, now: u64, packet: &[u8], out: &mut Vec<Vec<u8>>) -> Option<Signal> {
        let Ok(view) = ControlPacket::new_checked(packet) else { return None };
        let Ok(repr) = ControlRepr::parse(&view) else { return None };
        match Code::from(repr.code) {
            Code::ConfigureRequest => self.rcr(now, repr, out),
            Code::ConfigureAck if repr.identifier == self.request_id => self.rca(now, repr.data, out),
            Code::ConfigureNak | Code::ConfigureReject if repr.identifier == self.request_id => {
                self.rcn(now, Code::from(repr.code) == Code::ConfigureNak, repr.data, out)
            }
            // RFC 1661 §5.2-§5.4: a reply that does not match the last request is discarded.
            Code::ConfigureAck | Code::ConfigureNak | Code::ConfigureReject => None,
            Code::TerminateRequest => self.rtr(now, repr.identifier, out),
            Code::TerminateAck => self.rta(now, out),
            Code::CodeReject => None,
            _ => {
                // RUC: Send-Code-Reject with the rejected packet (RFC 1661 §5.6).
                let id = self.id();
                out.push(control(Code::CodeReject, id, packet));
                None
            }
        }
    }

    fn rcr(&mut self, now: u64, repr: ControlRepr<'_>, out: &mut Vec<Vec<u8>>) -> Option<Signal> {
        let verdict = self.options.check(repr.data, self.failures >= MAX_FAILURE);
        let good = verdict.is_ok();
        let reply = |out: &mut Vec<Vec<u8>>| match &verdict {
            Ok(()) => out.push(control(Code::ConfigureAck, repr.identifier, repr.data)),
            Err((code, data)) => out.push(control(*code, repr.identifier, data)),
        };
        if !good && verdict.as_ref().is_err_and(|(c, _)| *c == Code::ConfigureNak) {
            self.failures += 1;
        }
        match self.state {
            State::Closed => {
                // sta
                out.push(control(Code::TerminateAck, repr.identifier, &[]));
                None
            }
            State::Stopped => {
                self.irc(false);
                self.scr(now, out);
                reply(out);
                self.state = if good { State::AckSent } else { State::ReqSent };
                None
            }
            State::ReqSent | State::AckSent => {
                reply(out);
                self.state = if good { State::AckSent } else { State::ReqSent };
                None
            }
            State::AckRcvd => {
                reply(out);
                if good {
                    self.state = State::Opened;
                    self.timer = None;
                    Some(Signal::Up)
                } else {
                    None
                }
            }
            State::Opened => {
                // tld, scr, then the reply: renegotiation.
                self.scr(now, out);
                reply(out);
                self.state = if good { State::AckSent } else { State::ReqSent };
                Some(Signal::Down)
            }
            _ => None,
        }
    }

    fn rca(&mut self, now: u64, data: &[u8], out: &mut Vec<Vec<u8>>) -> Option<Signal> {
        match self.state {
            State::Closed | State::Stopped => {
                out.push(control(Code::TerminateAck, self.request_id, &[]));
                None
            }
            State::ReqSent => {
                self.options.acked(data);
                self.irc(false);
                self.state = State::AckRcvd;
                // The timer keeps running until the peer's request is acknowledged.
                None
            }
            State::AckRcvd => {
                // x: crossed connection, send a new request.
                self.scr(now, out);
                self.state = State::ReqSent;
                None
            }
            State::AckSent => {
                self.options.acked(data);
                self.irc(false);
                self.state = State::Opened;
                self.timer = None;
                Some(Signal::Up)
            }
            State::Opened => {
                self.scr(now, out);
                self.state = State::ReqSent;
                Some(Signal::Down)
            }
            _ => None,
        }
    }

    fn rcn(&mut self, now: u64, nak: bool, data: &[u8], out: &mut Vec<Vec<u8>>) -> Option<Signal> {
        match self.state {
            State::Closed | State::Stopped => {
                out.push(control(Code::TerminateAck, self.request_id, &[]));
                None
            }
            State::ReqSent | State::AckSent => {
                self.options.refused(nak, data);
                self.irc(false);
                self.scr(now, out);
                None
            }
            State::AckRcvd => {
                self.options.refused(nak, data);
                self.scr(now, out);
                self.state = State::ReqSent;
                None
            }
            State::Opened => {
                self.options.refused(nak, data);
                self.scr(now, out);
                self.state = State::ReqSent;
                Some(Signal::Down)
            }
            _ => None,
        }
    }

    fn rtr(&mut self, now: u64, id: u8, out: &mut Vec<Vec<u8>>) -> Option<Signal> {
        out.push(control(Code::TerminateAck, id, &[]));
        match self.state {
            State::AckRcvd | State::AckSent => {
                self.state = State::ReqSent;
                None
            }
            State::Opened => {
                // tld, zrc: wait one restart period before finishing (RFC 1661 §4.4 zrc).
                self.restart_count = 0;
                self.timer = Some(now + RESTART_NS);
                self.state = State::Stopping;
                Some(Signal::Down)
            }
            _ => None,
        }
    }

    fn rta(&mut self, now: u64, out: &mut Vec<Vec<u8>>) -> Option<Signal> {
        match self.state {
            State::Closing => {
                self.timer = None;
                self.state = State::Closed;
                Some(Signal::Finished)
            }
            State::Stopping => {
                self.timer = None;
                self.state = State::Stopped;
                Some(Signal::Finished)
            }
            State::AckRcvd => {
                self.state = State::ReqSent;
                None
            }
            State::Opened => {
                self.scr(now, out);
                self.state = State::ReqSent;
                Some(Signal::Down)
            }
            _ => None,
        }
    }
}

/// A control packet's bytes (RFC 1661 §5: code, identifier, length, data).
pub fn control(code: Code, identifier: u8, data: &[u8]) -> Vec<u8> {
    let repr = ControlRepr { code: u8::from(code), identifier, data };
    let mut bytes = vec![0u8; repr.buffer_len()];
    repr.emit(&mut ControlPacket::new_unchecked(&mut bytes[..]));
    bytes
}

#[cfg(test)]
mod test {
    use super::*;

    /// Options that accept everything and request one fixed option.
    #[derive(Debug, Default)]
    struct Plain {
        acked: bool,
    }

    impl Options for Plain {
        fn request(&self) -> Vec<u8> {
            vec![1, 4, 0x05, 0xd4] // MRU 1492
        }
        fn check(&mut self, _data: &[u8], _reject: bool) -> Result<(), (Code, Vec<u8>)> {
            Ok(())
        }
        fn acked(&mut self, _data: &[u8]) {
            self.acked = true;
        }
        fn refused(&mut self, _nak: bool, _data: &[u8]) {}
    }

    fn started() -> Fsm<Plain> {
        let mut fsm = Fsm::new(Plain::default());
        let mut out = Vec::new();
        assert_eq!(fsm.open(0, &mut out), Some(Signal::Started));
        fsm.up(0, &mut out);
        assert_eq!(fsm.state(), State::ReqSent);
        assert_eq!(out.len(), 1);
        fsm
    }

    #[test]
    fn two_ends_open_by_rfc1661_table() {
        let (mut a, mut b) = (started(), started());
        let mut out_a = Vec::new();
        let mut out_b = Vec::new();
        // Each end's first request, as the test's `started` made them.
        let req_a = control(Code::ConfigureRequest, 1, &[1, 4, 0x05, 0xd4]);
        let req_b = req_a.clone();
        // b receives a's request: RCR+ in Req-Sent → sca, Ack-Sent.
        assert_eq!(b.input(1, &req_a, &mut out_b), None);
        assert_eq!(b.state(), State::AckSent);
        assert_eq!(out_b[0][0], u8::from(Code::ConfigureAck));
        assert_eq!(out_b[0][1], 1, "the Ack carries the request's identifier (RFC 1661 §5.2)");
        // a receives the Ack: RCA in Req-Sent → Ack-Rcvd.
        assert_eq!(a.input(2, &out_b[0], &mut out_a), None);
        assert_eq!(a.state(), State::AckRcvd);
        // a receives b's request: RCR+ in Ack-Rcvd → sca, tlu, Opened.
        assert_eq!(a.input(3, &req_b, &mut out_a), Some(Signal::Up));
        assert!(a.is_opened() && a.options.acked);
        // b receives a's Ack: RCA in Ack-Sent → tlu, Opened.
        assert_eq!(b.input(4, &out_a[0], &mut out_b), Some(Signal::Up));
        assert!(b.is_opened());
        assert_eq!(a.poll_at(), None, "the Restart timer stops in Opened");
    }

    #[test]
    fn restart_timer_resends_then_gives_up() {
        let mut a = started();
        let mut out = Vec::new();
        // Max-Configure 10: the first request and nine more, then TO- → Stopped.
        for _ in 0..9 {
            let now = a.poll_at().unwrap();
            assert_eq!(now % RESTART_NS, 0);
            assert_eq!(a.on_timer(now, &mut out), None);
        }
        assert_eq!(out.len(), 9);
        let now = a.poll_at().unwrap();
        assert_eq!(a.on_timer(now, &mut out), Some(Signal::Finished));
        assert_eq!(a.state(), State::Stopped);
        assert_eq!(now, 10 * RESTART_NS);
    }

    #[test]
    fn stale_ack_is_discarded_and_unknown_code_rejected() {
        let mut a = started();
        let mut out = Vec::new();
        let stale = control(Code::ConfigureAck, 77, &[1, 4, 0x05, 0xd4]);
        assert_eq!(a.input(1, &stale, &mut out), None);
        assert_eq!(a.state(), State::ReqSent);
        assert!(out.is_empty());
        let odd = [42u8, 9, 0, 4];
        a.input(2, &odd, &mut out);
        assert_eq!(out[0][0], u8::from(Code::CodeReject));
        assert_eq!(&out[0][4..], &odd, "Code-Reject carries the rejected packet (RFC 1661 §5.6)");
    }

    #[test]
    fn terminate_request_in_opened_acks_and_goes_down() {
        let (mut a, mut b) = (started(), started());
        let mut o = Vec::new();
        let req = control(Code::ConfigureRequest, 1, &[1, 4, 0x05, 0xd4]);
        b.input(0, &req, &mut o);
        let ack = o.pop().unwrap();
        a.input(0, &ack, &mut o);
        a.input(0, &req, &mut o);
        assert!(a.is_opened());
        o.clear();
        let term = control(Code::TerminateRequest, 9, &[]);
        assert_eq!(a.input(5, &term, &mut o), Some(Signal::Down));
        assert_eq!(o[0][..2], [u8::from(Code::TerminateAck), 9]);
        assert_eq!(a.state(), State::Stopping);
        assert_eq!(a.on_timer(5 + RESTART_NS, &mut o), Some(Signal::Finished));
    }
}
