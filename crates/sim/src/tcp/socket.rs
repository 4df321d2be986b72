//! One TCP connection: the RFC 9293 state machine with RFC 5681/6582/6675 loss
//! recovery, RFC 6298 timers and RFC 7323 options, as a sans-IO model.
//!
//! The engine feeds every arriving segment to [`TcpSocket::process`], then calls
//! [`TcpSocket::dispatch`] to collect what the socket sends, and wakes it again at
//! [`TcpSocket::poll_at`]. IP addresses, checksums and bytes on the wire are the
//! engine's (the [`wire::tcp::Repr`] emit does them); the socket sees port numbers.
//!
//! Sequence layout: the SYN takes `iss`, data octet k of the stream is `iss + 1 + k`,
//! the FIN follows the last octet. `snd_una ≤ snd_nxt ≤ snd_max`: `snd_max` is the
//! highest sequence ever sent (RFC 6675's HighData), `snd_nxt` where new sending
//! continues; after a timeout `snd_nxt` goes back to `snd_una` (go-back-N) and the
//! octets up to `snd_max` are resent as retransmissions.

use std::collections::VecDeque;

use wire::tcp::{Control, Repr, SeqNumber, DEFAULT_MSS, MAX_WINDOW_SHIFT};

use super::config::TcpConfig;
use super::congestion::Congestion;
use super::rtt::RttEstimator;
use super::sack::Scoreboard;

/// Zeros a bulk sender hands out as payload, so no payload is ever copied.
static ZEROS: [u8; 65536] = [0; 65536];

/// Octets of the Timestamps option with its two NOPs (RFC 7323 §3.2, Linux layout):
/// the data of a segment shrinks by this much when timestamps are on.
const TIMESTAMP_OPTION_LEN: u32 = 12;

/// The connection states of RFC 9293 §3.3.2.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum State {
    Closed,
    Listen,
    SynSent,
    SynReceived,
    Established,
    FinWait1,
    FinWait2,
    CloseWait,
    Closing,
    LastAck,
    TimeWait,
}

/// Counters of one connection.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TcpStats {
    /// Segments emitted (all kinds).
    pub segments_sent: u64,
    /// Segments given to `process`.
    pub segments_received: u64,
    /// Data octets sent, retransmissions included.
    pub bytes_sent: u64,
    /// Data octets cumulatively acknowledged by the peer.
    pub bytes_acked: u64,
    /// Data octets delivered in order to the application (or the sink).
    pub bytes_received: u64,
    /// Segments sent again (fast retransmit, partial ACK, SACK holes, timeouts).
    pub retransmits: u64,
    /// Data octets sent again.
    pub bytes_retransmitted: u64,
    /// Loss recoveries entered by duplicate ACKs or SACK (fast retransmits).
    pub fast_retransmits: u64,
    /// Retransmission timer expiries (zero-window probes not counted).
    pub timeouts: u64,
    /// Duplicate ACKs received.
    pub dup_acks: u64,
}

/// One row of the per-ACK trace: the sender's state after an ACK was processed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TraceRecord {
    /// When the ACK arrived, ns.
    pub now: u64,
    /// Congestion window, octets.
    pub cwnd: u64,
    /// Slow-start threshold, octets (`u64::MAX` before the first loss).
    pub ssthresh: u64,
    /// Smoothed RTT, ns.
    pub srtt: Option<u64>,
    /// The RTT sample this ACK gave, ns.
    pub rtt_sample: Option<u64>,
    /// Retransmission timeout in force, ns.
    pub rto: u64,
    /// Octets sent and not cumulatively acknowledged.
    pub bytes_in_flight: u64,
    /// The cumulative ACK, wire value.
    pub snd_una: u32,
    /// In fast recovery.
    pub in_recovery: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Recovery {
    None,
    /// RFC 6582: `recover` is the highest sequence sent when recovery began.
    NewReno { recover: SeqNumber, partial_seen: bool },
    /// RFC 6675 §5: RecoveryPoint.
    Sack { recovery_point: SeqNumber },
}

/// A segment the sender has decided to send.
#[derive(Debug, Clone, Copy)]
struct Plan {
    seq: SeqNumber,
    len: usize,
    syn: bool,
    fin: bool,
}

/// An out-of-order run of received octets `[start, end)`; `data` is empty in sink mode.
#[derive(Debug, Clone)]
struct OooBlock {
    start: SeqNumber,
    end: SeqNumber,
    data: Vec<u8>,
    /// When this block last grew (a counter), to report the newest SACK block first.
    touched: u64,
}

/// One TCP endpoint. See the module documentation.
#[derive(Debug, Clone)]
pub struct TcpSocket {
    cfg: TcpConfig,
    state: State,
    /// The latest `now` seen, ns.
    now: u64,
    /// Opened by `listen` (a reset in SYN-RECEIVED returns to LISTEN).
    passive: bool,
    local_port: u16,
    remote_port: u16,

    // Send side (RFC 9293 §3.3.1).
    iss: SeqNumber,
    snd_una: SeqNumber,
    snd_nxt: SeqNumber,
    snd_max: SeqNumber,
    snd_wnd: u64,
    max_snd_wnd: u64,
    snd_wl1: SeqNumber,
    snd_wl2: SeqNumber,
    /// Window field of the last ACK, unscaled, for the duplicate-ACK test.
    last_win_field: u16,
    snd_shift: u8,
    rcv_shift: u8,
    /// Queued octets from the first unacknowledged data octet on (bytes mode).
    tx: VecDeque<u8>,
    /// Octets queued from the first unacknowledged data octet on (both modes).
    tx_len: u64,
    /// Bulk mode: payload is zeros, never copied. `unlimited` never runs out.
    bulk: Option<bool>,
    /// Where our FIN goes, once the application closed.
    fin_seq: Option<SeqNumber>,
    rst_pending: bool,
    probe_pending: bool,
    smss: u32,
    scratch: Vec<u8>,

    // Receive side.
    irs: SeqNumber,
    rcv_nxt: SeqNumber,
    /// Right edge of the window last advertised.
    rcv_adv: SeqNumber,
    rx: VecDeque<u8>,
    sink: bool,
    ooo: Vec<OooBlock>,
    ooo_clock: u64,
    rx_fin: Option<SeqNumber>,
    ack_now: bool,
    delack_at: Option<u64>,
    last_ack_sent: SeqNumber,
    rcv_mss: u32,

    // Options in effect.
    ws_ok: bool,
    sack_ok: bool,
    ts_ok: bool,
    ts_recent: u32,

    // Timers and estimators.
    rto_at: Option<u64>,
    timewait_at: Option<u64>,
    rtt: RttEstimator,
    /// Karn: the segment being timed, `(end sequence, sent at)`.
    rtt_timing: Option<(SeqNumber, u64)>,
    cc: Congestion,
    recovery: Recovery,
    /// RFC 6582 `recover`, kept after recovery to refuse a second fast retransmit
    /// for the same window of data (§3.2 step 2), and set at a timeout (§4).
    recover: SeqNumber,
    dup_acks: u32,
    /// RFC 6675 scoreboard of what the peer SACKed.
    board: Scoreboard,
    /// RFC 6675 HighRxt, exclusive end.
    high_rxt: SeqNumber,
    /// Retransmit the segment at `snd_una` now (fast retransmit, partial ACK).
    retransmit_first: bool,
    /// RFC 6582 Impatient: hold the timer on partial ACKs after the first.
    hold_timer: bool,

    stats: TcpStats,
    trace: Option<Vec<TraceRecord>>,
}

impl TcpSocket {
    /// A closed socket with this configuration.
    pub fn new(cfg: TcpConfig) -> TcpSocket {
        let rtt = RttEstimator::new(
            cfg.initial_rto.as_nanos(),
            cfg.min_rto.as_nanos(),
            cfg.max_rto.as_nanos(),
            cfg.rto_backoff_cap.map(|d| d.as_nanos()),
            cfg.clock_granularity.as_nanos(),
        );
        let smss = u32::from(cfg.mss);
        let cc = Congestion::new(cfg.congestion_control, smss, cfg.initial_window);
        let zero = SeqNumber::default();
        TcpSocket {
            state: State::Closed,
            now: 0,
            passive: false,
            local_port: 0,
            remote_port: 0,
            iss: zero,
            snd_una: zero,
            snd_nxt: zero,
            snd_max: zero,
            snd_wnd: 0,
            max_snd_wnd: 0,
            snd_wl1: zero,
            snd_wl2: zero,
            last_win_field: 0,
            snd_shift: 0,
            rcv_shift: 0,
            tx: VecDeque::new(),
            tx_len: 0,
            bulk: None,
            fin_seq: None,
            rst_pending: false,
            probe_pending: false,
            smss,
            scratch: Vec::new(),
            irs: zero,
            rcv_nxt: zero,
            rcv_adv: zero,
            rx: VecDeque::new(),
            sink: false,
            ooo: Vec::new(),
            ooo_clock: 0,
            rx_fin: None,
            ack_now: false,
            delack_at: None,
            last_ack_sent: zero,
            rcv_mss: u32::from(DEFAULT_MSS).min(smss),
            ws_ok: false,
            sack_ok: false,
            ts_ok: false,
            ts_recent: 0,
            rto_at: None,
            timewait_at: None,
            rtt,
            rtt_timing: None,
            cc,
            recovery: Recovery::None,
            recover: zero,
            dup_acks: 0,
            board: Scoreboard::new(),
            high_rxt: zero,
            retransmit_first: false,
            hold_timer: false,
            stats: TcpStats::default(),
            trace: None,
            cfg,
        }
    }

    // ----- the application's side -------------------------------------------------

    /// Passive open (RFC 9293 §3.10.1): CLOSED → LISTEN on `local_port`; `iss` is
    /// the initial send sequence number the SYN-ACK will carry.
    pub fn listen(&mut self, local_port: u16, iss: SeqNumber) {
        assert_eq!(self.state, State::Closed, "listen on an open socket");
        self.reset_connection(iss);
        self.local_port = local_port;
        self.passive = true;
        self.state = State::Listen;
    }

    /// Active open (RFC 9293 §3.10.1): CLOSED → SYN-SENT; the SYN goes out at the
    /// next [`dispatch`](Self::dispatch).
    pub fn connect(&mut self, now: u64, local_port: u16, remote_port: u16, iss: SeqNumber) {
        assert_eq!(self.state, State::Closed, "connect on an open socket");
        self.now = now;
        self.reset_connection(iss);
        self.local_port = local_port;
        self.remote_port = remote_port;
        self.passive = false;
        self.rcv_shift = self.wanted_rcv_shift();
        self.state = State::SynSent;
    }

    /// Close (RFC 9293 §3.10.4): a FIN follows the queued data. A bulk sender with
    /// unlimited data stops at what it has sent.
    pub fn close(&mut self) {
        if self.bulk == Some(true) {
            self.tx_len = self.sent_data_octets();
            self.bulk = Some(false);
        }
        match self.state {
            State::Listen | State::SynSent => self.enter_closed(),
            State::SynReceived => self.request_fin(),
            State::Established => {
                self.request_fin();
                self.state = State::FinWait1;
            }
            State::CloseWait => {
                self.request_fin();
                self.state = State::LastAck;
            }
            _ => {}
        }
    }

    /// Abort (RFC 9293 §3.10.5): send a RST and go to CLOSED.
    pub fn abort(&mut self) {
        if matches!(
            self.state,
            State::SynReceived | State::Established | State::FinWait1 | State::FinWait2 | State::CloseWait
        ) {
            self.rst_pending = true;
        }
        self.enter_closed();
    }

    /// Queues application data (bytes mode); returns how much fitted in the send
    /// buffer. Nothing is queued after `close` or in bulk mode.
    pub fn send_slice(&mut self, data: &[u8]) -> usize {
        if self.fin_seq.is_some() || self.bulk.is_some() || !self.may_send_state() {
            return 0;
        }
        let room = (self.cfg.send_buffer as usize).saturating_sub(self.tx.len());
        let n = room.min(data.len());
        self.tx.extend(&data[..n]);
        self.tx_len += n as u64;
        n
    }

    /// Bulk mode (an iperf-like source): `Some(n)` queues `n` more octets, `None`
    /// gives an unlimited supply. Payload is zeros handed out without copying. In
    /// flight it is bounded by `send_buffer` as queued bytes would be.
    pub fn send_bulk(&mut self, octets: Option<u64>) {
        assert!(self.tx.is_empty(), "bulk mode after bytes were queued");
        if self.fin_seq.is_some() {
            return;
        }
        match octets {
            Some(n) => {
                self.bulk = Some(false);
                self.tx_len += n;
            }
            None => {
                self.bulk = Some(true);
                self.tx_len = u64::MAX / 4;
            }
        }
    }

    /// Sink mode: received data is counted and dropped at once, as a reader that
    /// always keeps up (the window stays fully open).
    pub fn set_sink(&mut self, sink: bool) {
        self.sink = sink;
    }

    /// Reads in-order received data; returns the octets copied. Opens the window
    /// with an immediate update when it grew by min(buffer/2, MSS) (RFC 1122
    /// §4.2.3.3).
    pub fn recv_slice(&mut self, buf: &mut [u8]) -> usize {
        let n = buf.len().min(self.rx.len());
        for (dst, src) in buf.iter_mut().zip(self.rx.drain(..n)) {
            *dst = src;
        }
        if n > 0 && self.is_synchronized() {
            let edge = self.rcv_nxt + self.rcv_free() as usize;
            let threshold = (self.cfg.recv_buffer / 2).min(self.cfg.mss.into()) as usize;
            if edge > self.rcv_adv && edge - self.rcv_adv >= threshold {
                self.ack_now = true;
            }
        }
        n
    }

    /// Octets waiting to be read.
    pub fn recv_queue(&self) -> usize {
        self.rx.len()
    }

    /// Octets queued and not yet acknowledged.
    pub fn send_queue(&self) -> u64 {
        self.tx_len
    }

    /// Room left in the send buffer (bytes mode).
    pub fn send_capacity(&self) -> usize {
        (self.cfg.send_buffer as usize).saturating_sub(self.tx.len())
    }

    /// True once the peer has sent its FIN and every octet before it was delivered.
    pub fn peer_closed(&self) -> bool {
        self.rx_fin.is_some_and(|f| self.rcv_nxt > f)
    }

    /// Starts collecting a [`TraceRecord`] per ACK.
    pub fn enable_trace(&mut self) {
        self.trace.get_or_insert_with(Vec::new);
    }

    /// Takes the trace collected so far.
    pub fn take_trace(&mut self) -> Vec<TraceRecord> {
        self.trace.as_mut().map(std::mem::take).unwrap_or_default()
    }

    // ----- observation -------------------------------------------------------------

    pub fn state(&self) -> State {
        self.state
    }
    pub fn config(&self) -> &TcpConfig {
        &self.cfg
    }
    pub fn stats(&self) -> &TcpStats {
        &self.stats
    }
    pub fn local_port(&self) -> u16 {
        self.local_port
    }
    pub fn remote_port(&self) -> u16 {
        self.remote_port
    }
    /// Congestion window, octets.
    pub fn cwnd(&self) -> u64 {
        self.cc.cwnd
    }
    /// Slow-start threshold, octets.
    pub fn ssthresh(&self) -> u64 {
        self.cc.ssthresh
    }
    /// The congestion controller, for traces and tests.
    pub fn congestion(&self) -> &Congestion {
        &self.cc
    }
    /// Smoothed RTT, ns.
    pub fn srtt(&self) -> Option<u64> {
        self.rtt.srtt()
    }
    /// Retransmission timeout in force, ns.
    pub fn rto(&self) -> u64 {
        self.rtt.rto()
    }
    /// Sender MSS in effect: data octets per full segment.
    pub fn smss(&self) -> u32 {
        self.smss
    }
    /// Peer's window, octets (scaled).
    pub fn snd_wnd(&self) -> u64 {
        self.snd_wnd
    }
    /// Window scale shifts in effect, (ours applied to what we advertise, the
    /// peer's applied to what it advertises).
    pub fn window_shifts(&self) -> (u8, u8) {
        (self.rcv_shift, self.snd_shift)
    }
    /// SACK negotiated.
    pub fn sack_enabled(&self) -> bool {
        self.sack_ok
    }
    /// Timestamps negotiated.
    pub fn timestamps_enabled(&self) -> bool {
        self.ts_ok
    }
    /// Octets sent and not yet cumulatively acknowledged.
    pub fn bytes_in_flight(&self) -> u64 {
        (self.snd_max - self.snd_una) as u64
    }
    /// In fast recovery.
    pub fn in_recovery(&self) -> bool {
        self.recovery != Recovery::None
    }
    /// True when `repr` belongs to this socket (ports match, or LISTEN on the port).
    pub fn accepts(&self, repr: &Repr) -> bool {
        match self.state {
            State::Closed => false,
            State::Listen => repr.dst_port == self.local_port,
            _ => repr.dst_port == self.local_port && repr.src_port == self.remote_port,
        }
    }

    /// When the socket next needs [`dispatch`](Self::dispatch): the latest `now` it
    /// saw when it has something to send at once, else its earliest timer.
    pub fn poll_at(&self) -> Option<u64> {
        if self.rst_pending || self.ack_now || self.next_segment().is_some() {
            return Some(self.now);
        }
        [self.rto_at, self.delack_at, self.timewait_at].into_iter().flatten().min()
    }

    // ----- input -------------------------------------------------------------------

    /// Takes one arriving segment for this socket at `now`. Returns an immediate
    /// reply that carries no data (a RST); everything else is sent by `dispatch`.
    pub fn process(&mut self, now: u64, repr: &Repr, payload: &[u8]) -> Option<Repr> {
        debug_assert_eq!(repr.payload_len, payload.len());
        self.now = now;
        self.stats.segments_received += 1;
        match self.state {
            State::Closed => self.reset_for(repr),
            State::Listen => self.process_listen(repr),
            State::SynSent => self.process_syn_sent(now, repr),
            _ => self.process_synchronized(now, repr, payload),
        }
    }

    fn process_listen(&mut self, repr: &Repr) -> Option<Repr> {
        if repr.control == Control::Rst {
            return None;
        }
        if repr.ack_number.is_some() {
            return self.reset_for(repr);
        }
        if repr.control != Control::Syn {
            return None;
        }
        self.remote_port = repr.src_port;
        self.accept_syn_options(repr);
        self.irs = repr.seq_number;
        self.rcv_nxt = repr.seq_number + 1;
        self.rcv_adv = self.rcv_nxt;
        self.snd_wnd = u64::from(repr.window_len);
        self.max_snd_wnd = self.snd_wnd;
        self.snd_wl1 = repr.seq_number;
        self.state = State::SynReceived;
        None
    }

    fn process_syn_sent(&mut self, now: u64, repr: &Repr) -> Option<Repr> {
        // RFC 9293 §3.10.7.3.
        let ack_ok = match repr.ack_number {
            Some(ack) if ack <= self.iss || ack > self.snd_max => {
                return if repr.control == Control::Rst { None } else { self.reset_for(repr) };
            }
            Some(_) => true,
            None => false,
        };
        if repr.control == Control::Rst {
            if ack_ok {
                self.enter_closed();
            }
            return None;
        }
        if repr.control != Control::Syn {
            return None;
        }
        self.accept_syn_options(repr);
        self.irs = repr.seq_number;
        self.rcv_nxt = repr.seq_number + 1;
        self.rcv_adv = self.rcv_nxt;
        self.snd_wnd = u64::from(repr.window_len);
        self.max_snd_wnd = self.snd_wnd;
        self.snd_wl1 = repr.seq_number;
        if let Some(ack) = repr.ack_number {
            self.snd_wl2 = ack;
            self.syn_acked(now, ack, repr);
            self.state = State::Established;
            self.ack_now = true;
        } else {
            // Simultaneous open: SYN-SENT → SYN-RECEIVED, resend our SYN as SYN-ACK.
            self.state = State::SynReceived;
            self.snd_nxt = self.iss;
        }
        None
    }

    fn process_synchronized(&mut self, now: u64, repr: &Repr, payload: &[u8]) -> Option<Repr> {
        let seg_len = payload.len() + repr.control.len();
        // A retransmitted SYN in SYN-RECEIVED: send the SYN-ACK again.
        if self.state == State::SynReceived && repr.control == Control::Syn && repr.seq_number == self.irs {
            self.snd_nxt = self.iss;
            return None;
        }
        // TIME-WAIT: the only thing that can arrive is a retransmission of the
        // peer's FIN; acknowledge it and restart the 2·MSL wait (RFC 9293 §3.10.7.4).
        if self.state == State::TimeWait && repr.control == Control::Fin {
            self.ack_now = true;
            self.enter_time_wait(now);
            return None;
        }
        // RFC 9293 §3.10.7.4, first: the sequence number test.
        if !self.acceptable(repr.seq_number, seg_len) {
            if repr.control != Control::Rst {
                self.ack_now = true;
            }
            return None;
        }
        // Second: RST. RFC 5961 §3.2: only an exact match resets; otherwise a
        // challenge ACK.
        if repr.control == Control::Rst {
            if repr.seq_number == self.rcv_nxt {
                if self.state == State::SynReceived && self.passive {
                    let (port, iss) = (self.local_port, self.iss);
                    self.enter_closed();
                    self.listen(port, iss);
                } else {
                    self.enter_closed();
                }
            } else {
                self.ack_now = true;
            }
            return None;
        }
        // Fourth: SYN in a synchronized state, RFC 5961 §4: challenge ACK.
        if repr.control == Control::Syn {
            self.ack_now = true;
            return None;
        }
        // Fifth: the ACK field.
        let ack = repr.ack_number?;
        if self.ts_ok {
            if let Some((tsval, _)) = repr.timestamp {
                // RFC 7323 §4.3: remember TSval of a segment at or before the last
                // ACK sent, so the echo reflects the oldest unacknowledged segment.
                if repr.seq_number <= self.last_ack_sent && tsval.wrapping_sub(self.ts_recent) < 1 << 31 {
                    self.ts_recent = tsval;
                }
            }
        }
        if self.state == State::SynReceived {
            if ack <= self.snd_una || ack > self.snd_max {
                return self.reset_for(repr);
            }
            self.snd_wnd = u64::from(repr.window_len) << self.snd_shift;
            self.max_snd_wnd = self.snd_wnd;
            self.snd_wl1 = repr.seq_number;
            self.snd_wl2 = ack;
            self.syn_acked(now, ack, repr);
            self.state = if self.fin_seq.is_some() { State::FinWait1 } else { State::Established };
        } else if !self.process_ack(now, repr, payload.len(), ack) {
            return None;
        }
        // Our FIN acknowledged?
        if self.fin_acked() {
            match self.state {
                State::FinWait1 => self.state = State::FinWait2,
                State::Closing => self.enter_time_wait(now),
                State::LastAck => {
                    self.enter_closed();
                    return None;
                }
                _ => {}
            }
        }
        if self.state == State::TimeWait {
            return None;
        }
        // Seventh: segment text.
        if !payload.is_empty() && matches!(self.state, State::Established | State::FinWait1 | State::FinWait2) {
            self.receive_data(now, repr.seq_number, payload);
        }
        // Eighth: FIN.
        if repr.control == Control::Fin
            && matches!(self.state, State::Established | State::FinWait1 | State::FinWait2)
        {
            self.rx_fin = Some(repr.seq_number + payload.len());
        }
        self.consume_fin(now);
        None
    }

    /// RFC 9293 §3.10.7.4 acceptability of a segment of `len` sequence octets.
    fn acceptable(&self, seq: SeqNumber, len: usize) -> bool {
        let wnd = if self.rcv_adv > self.rcv_nxt { self.rcv_adv - self.rcv_nxt } else { 0 };
        let in_window = |s: SeqNumber| self.rcv_nxt <= s && s < self.rcv_nxt + wnd;
        match (len, wnd) {
            (0, 0) => seq == self.rcv_nxt,
            (0, _) => seq == self.rcv_nxt || in_window(seq),
            (_, 0) => false,
            (_, _) => in_window(seq) || in_window(seq + (len - 1)),
        }
    }

    /// Processes the ACK field in a synchronized state. False when the segment must
    /// be dropped (an ACK for data never sent).
    fn process_ack(&mut self, now: u64, repr: &Repr, data_len: usize, ack: SeqNumber) -> bool {
        if ack > self.snd_max {
            self.ack_now = true;
            return false;
        }
        let in_flight = self.snd_max > self.snd_una;
        let win_field = repr.window_len;
        let newly_sacked = if self.sack_ok { self.absorb_sack(ack, repr) } else { 0 };
        // RFC 9293 §3.10.7.4: SND.WL1/WL2 guard the window update.
        if ack >= self.snd_una
            && (self.snd_wl1 < repr.seq_number || (self.snd_wl1 == repr.seq_number && self.snd_wl2 <= ack))
        {
            self.snd_wnd = u64::from(win_field) << self.snd_shift;
            self.max_snd_wnd = self.max_snd_wnd.max(self.snd_wnd);
            self.snd_wl1 = repr.seq_number;
            self.snd_wl2 = ack;
            if self.snd_wnd > 0 {
                self.probe_pending = false;
            }
        }
        let mut rtt_sample = None;
        if ack > self.snd_una {
            let acked = ack - self.snd_una;
            let fin_octet = usize::from(self.fin_seq.is_some_and(|f| ack > f));
            let data_acked = (acked - fin_octet) as u64;
            self.drain_tx(data_acked);
            self.stats.bytes_acked += data_acked;
            self.snd_una = ack;
            if self.snd_nxt < ack {
                self.snd_nxt = ack;
            }
            if self.high_rxt < ack {
                self.high_rxt = ack;
            }
            self.board.advance(ack);
            // RTT: timestamps on every ACK of new data (RFC 7323 §4.1), else the one
            // timed segment (RFC 6298 §3, Karn).
            rtt_sample = match (self.ts_ok, repr.timestamp) {
                (true, Some((_, tsecr))) if tsecr != 0 => {
                    Some(u64::from(Self::ts_clock(now).wrapping_sub(tsecr)) * 1000)
                }
                _ => match self.rtt_timing {
                    Some((end, sent)) if ack >= end => Some(now - sent),
                    _ => None,
                },
            };
            if self.rtt_timing.is_some_and(|(end, _)| ack >= end) {
                self.rtt_timing = None;
            }
            if let Some(r) = rtt_sample {
                self.rtt.sample(r);
            }
            self.dup_acks = 0;
            self.on_new_ack(now, acked as u64, data_acked);
            // RFC 6298 §5.2/§5.3.
            if self.snd_una == self.snd_max {
                self.rto_at = None;
            } else if !self.hold_timer {
                self.rto_at = Some(now + self.rtt.rto());
            }
            self.hold_timer = false;
        } else if ack == self.snd_una
            && in_flight
            && data_len == 0
            && repr.control.is_empty()
            && (win_field == self.last_win_field || newly_sacked > 0)
        {
            // RFC 5681 §2 duplicate ACK (RFC 6675 also counts one that SACKs new data).
            self.stats.dup_acks += 1;
            self.dup_acks += 1;
            self.on_dup_ack();
        }
        self.last_win_field = win_field;
        if let Some(trace) = self.trace.as_mut() {
            trace.push(TraceRecord {
                now,
                cwnd: self.cc.cwnd,
                ssthresh: self.cc.ssthresh,
                srtt: self.rtt.srtt(),
                rtt_sample,
                rto: self.rtt.rto(),
                bytes_in_flight: (self.snd_max - self.snd_una) as u64,
                snd_una: self.snd_una.as_u32(),
                in_recovery: self.recovery != Recovery::None,
            });
        }
        // Persist timer (RFC 9293 §3.8.6.1): data waits behind a zero window with
        // nothing in flight, so no ACK will come to reopen it unless we probe.
        if self.snd_wnd == 0 && self.snd_una == self.snd_max && self.rto_at.is_none() && self.has_unsent() {
            self.rto_at = Some(now + self.rtt.rto());
        }
        true
    }

    fn has_unsent(&self) -> bool {
        self.snd_nxt >= self.tx_base() && self.tx_len > (self.snd_nxt - self.tx_base()) as u64
    }

    /// Adds the segment's SACK blocks to the scoreboard; returns octets newly SACKed.
    fn absorb_sack(&mut self, ack: SeqNumber, repr: &Repr) -> u64 {
        let una = self.snd_una.max(ack);
        let mut new = 0;
        for (l, r) in repr.sack_ranges.iter().flatten() {
            new += self.board.add(una, self.snd_max, SeqNumber::from_u32(*l), SeqNumber::from_u32(*r));
        }
        new
    }

    /// The cumulative ACK advanced by `acked` sequence octets (`data_acked` of data).
    fn on_new_ack(&mut self, now: u64, acked: u64, data_acked: u64) {
        let smss = u64::from(self.smss);
        match self.recovery {
            Recovery::None => {
                self.cc.on_ack(now, data_acked, self.smss, self.rtt.srtt());
            }
            Recovery::NewReno { recover, partial_seen } => {
                if self.snd_una >= recover {
                    // RFC 6582 §3.2 step 3, full ACK: cwnd = min(ssthresh,
                    // max(FlightSize, SMSS) + SMSS).
                    let flight = (self.snd_max - self.snd_una) as u64;
                    self.cc.cwnd = self.cc.ssthresh.min(flight.max(smss) + smss);
                    self.recovery = Recovery::None;
                } else {
                    // Step 4, partial ACK: retransmit the first unacknowledged segment,
                    // deflate by the octets acked, add back one SMSS if at least one
                    // SMSS was acked; reset the timer only on the first (Impatient).
                    self.retransmit_first = true;
                    let add = if acked >= smss { smss } else { 0 };
                    self.cc.cwnd = (self.cc.cwnd.saturating_sub(acked) + add).max(smss);
                    self.hold_timer = partial_seen;
                    self.recovery = Recovery::NewReno { recover, partial_seen: true };
                }
            }
            Recovery::Sack { recovery_point } => {
                // RFC 6675 §5: recovery ends when the cumulative ACK reaches
                // RecoveryPoint; until then cwnd stays at ssthresh and pipe governs.
                if self.snd_una >= recovery_point {
                    self.recovery = Recovery::None;
                }
            }
        }
    }

    fn on_dup_ack(&mut self) {
        match self.recovery {
            Recovery::None => {
                let threshold = self.dup_acks >= self.cfg.dup_ack_threshold;
                // RFC 6675 §5: or when IsLost(HighACK + 1).
                let lost = self.sack_ok && self.board.is_lost(self.snd_una, self.cfg.dup_ack_threshold, self.smss);
                // RFC 6582 §3.2 step 2: not for data sent before the last recovery.
                if (threshold || lost) && self.snd_una > self.recover {
                    self.enter_recovery();
                }
            }
            Recovery::NewReno { .. } => {
                // RFC 6582 §3.2 step 4 / RFC 5681 §3.2 step 4: inflate.
                self.cc.cwnd += u64::from(self.smss);
            }
            Recovery::Sack { .. } => {}
        }
    }

    /// Fast retransmit: RFC 5681 §3.2 steps 2–3, RFC 6582 §3.2 step 2, RFC 6675 §5.
    fn enter_recovery(&mut self) {
        self.stats.fast_retransmits += 1;
        let flight = (self.snd_max - self.snd_una) as u64;
        self.cc.on_congestion_event(flight, self.smss);
        self.recover = self.snd_max;
        self.high_rxt = self.snd_una;
        self.retransmit_first = true;
        self.rtt_timing = None;
        if self.sack_ok {
            self.recovery = Recovery::Sack { recovery_point: self.snd_max };
        } else {
            self.cc.cwnd = self.cc.ssthresh + 3 * u64::from(self.smss);
            self.recovery = Recovery::NewReno { recover: self.snd_max, partial_seen: false };
        }
    }

    /// Accepts segment text at `seq` (already found acceptable).
    fn receive_data(&mut self, now: u64, seq: SeqNumber, payload: &[u8]) {
        let (mut seq, mut data) = (seq, payload);
        if seq < self.rcv_nxt {
            let skip = (self.rcv_nxt - seq).min(data.len());
            data = &data[skip..];
            seq = self.rcv_nxt;
        }
        // Trim to the window advertised.
        let right = self.rcv_adv.max(self.rcv_nxt);
        if seq + data.len() > right {
            data = &data[..right - seq];
        }
        self.rcv_mss = self.rcv_mss.max(payload.len() as u32);
        if data.is_empty() {
            // A duplicate: ACK at once so a lost ACK is repaired.
            self.ack_now = true;
            return;
        }
        if seq == self.rcv_nxt {
            self.deliver(data);
            let had_gap = !self.ooo.is_empty();
            while let Some(first) = self.ooo.first() {
                if first.start > self.rcv_nxt {
                    break;
                }
                let block = self.ooo.remove(0);
                if block.end > self.rcv_nxt {
                    let skip = self.rcv_nxt - block.start;
                    if self.sink {
                        self.stats.bytes_received += (block.end - self.rcv_nxt) as u64;
                    } else {
                        self.rx.extend(&block.data[skip..]);
                        self.stats.bytes_received += (block.data.len() - skip) as u64;
                    }
                    self.rcv_nxt = block.end;
                }
            }
            if had_gap {
                // RFC 5681 §4.2: ACK at once a segment that fills a gap.
                self.ack_now = true;
            } else {
                self.schedule_ack(now);
                if self.sink {
                    self.sink_window_update();
                }
            }
        } else {
            self.insert_ooo(seq, data);
            // RFC 5681 §4.2: an out-of-order segment is ACKed at once (a dup ACK).
            self.ack_now = true;
        }
    }

    /// A sink stands for an application that reads every octet at once; the read
    /// opens the window, and the window update a real stack sends then is sent here:
    /// 4.4BSD's `tcp_output` rule, an update when the right edge can move by half the
    /// buffer. That matters when a segment or two fill the buffer (seed 001's 9180 and
    /// 64 K MTUs with small buffers): without it the receiver waits for its delayed-ACK
    /// timer after each. (BSD's other clause, two segments, is the delayed-ACK rule
    /// already applied by `schedule_ack`.)
    fn sink_window_update(&mut self) {
        let edge = self.rcv_nxt + self.rcv_free() as usize;
        if edge > self.rcv_adv && 2 * (edge - self.rcv_adv) as u64 >= u64::from(self.cfg.recv_buffer) {
            self.ack_now = true;
        }
    }

    fn deliver(&mut self, data: &[u8]) {
        if !self.sink {
            self.rx.extend(data);
        }
        self.stats.bytes_received += data.len() as u64;
        self.rcv_nxt += data.len();
    }

    /// RFC 5681 §4.2 / RFC 1122 §4.2.3.2: ACK every `delayed_ack_segments` full-sized
    /// segments, else within the delayed-ACK timeout.
    fn schedule_ack(&mut self, now: u64) {
        let Some(delay) = self.cfg.delayed_ack else {
            self.ack_now = true;
            return;
        };
        let unacked = (self.rcv_nxt - self.last_ack_sent) as u64;
        if unacked >= u64::from(self.cfg.delayed_ack_segments.max(1)) * u64::from(self.rcv_mss) {
            self.ack_now = true;
        } else if self.delack_at.is_none() {
            self.delack_at = Some(now + delay.as_nanos());
        }
    }

    fn insert_ooo(&mut self, seq: SeqNumber, data: &[u8]) {
        let (mut start, mut end) = (seq, seq + data.len());
        let mut merged: Vec<OooBlock> = Vec::new();
        self.ooo.retain(|b| {
            if b.end < start || b.start > end {
                true
            } else {
                merged.push(b.clone());
                false
            }
        });
        for b in &merged {
            start = start.min(b.start);
            end = end.max(b.end);
        }
        let mut bytes = Vec::new();
        if !self.sink {
            bytes = vec![0; end - start];
            for b in &merged {
                let at = b.start - start;
                bytes[at..at + b.data.len()].copy_from_slice(&b.data);
            }
            let at = seq - start;
            bytes[at..at + data.len()].copy_from_slice(data);
        }
        self.ooo_clock += 1;
        let block = OooBlock { start, end, data: bytes, touched: self.ooo_clock };
        let at = self.ooo.iter().position(|b| b.start > start).unwrap_or(self.ooo.len());
        self.ooo.insert(at, block);
    }

    /// Takes the peer's FIN once every octet before it has arrived.
    fn consume_fin(&mut self, now: u64) {
        let Some(fin) = self.rx_fin else { return };
        if self.rcv_nxt != fin {
            return;
        }
        self.rcv_nxt = fin + 1;
        self.ack_now = true;
        match self.state {
            State::SynReceived | State::Established => self.state = State::CloseWait,
            State::FinWait1 => {
                if self.fin_acked() {
                    self.enter_time_wait(now);
                } else {
                    self.state = State::Closing;
                }
            }
            State::FinWait2 => self.enter_time_wait(now),
            _ => {}
        }
    }

    // ----- output ------------------------------------------------------------------

    /// Runs expired timers at `now`, then emits every segment the socket may send
    /// now, in order, as `(header, payload)`; `header.payload_len` is the payload's
    /// length.
    pub fn dispatch(&mut self, now: u64, mut emit: impl FnMut(Repr, &[u8])) {
        self.now = now;
        if self.timewait_at.is_some_and(|t| t <= now) {
            self.enter_closed();
        }
        if self.rto_at.is_some_and(|t| t <= now) {
            self.rto_at = None;
            self.on_rto();
        }
        if self.delack_at.is_some_and(|t| t <= now) {
            self.delack_at = None;
            self.ack_now = true;
        }
        if self.rst_pending {
            self.rst_pending = false;
            let mut rst = Repr::new(self.local_port, self.remote_port, Control::Rst, self.snd_nxt, 0);
            rst.ack_number = Some(self.rcv_nxt);
            self.stats.segments_sent += 1;
            emit(rst, &[]);
            return;
        }
        while let Some(plan) = self.next_segment() {
            self.send_plan(now, plan, &mut emit);
        }
        if self.ack_now && self.is_synchronized() {
            let repr = self.header(now, Control::None, self.snd_nxt, 0);
            self.stats.segments_sent += 1;
            emit(repr, &[]);
        }
    }

    /// The next segment to send, if any: SYN, SYN-ACK, a retransmission, new data or
    /// a FIN, under the windows, Nagle and sender SWS avoidance.
    fn next_segment(&self) -> Option<Plan> {
        match self.state {
            State::SynSent | State::SynReceived => {
                return (self.snd_nxt == self.iss).then_some(Plan { seq: self.iss, len: 0, syn: true, fin: false });
            }
            State::Established | State::CloseWait | State::FinWait1 | State::Closing | State::LastAck => {}
            _ => return None,
        }
        let smss = self.smss as usize;
        // Fast retransmit / partial ACK: the first unacknowledged segment,
        // regardless of cwnd (RFC 5681 §3.2 step 3, RFC 6675 §5 step 4.3).
        if self.retransmit_first && self.snd_max > self.snd_una {
            let mut end = self.snd_una + smss.min(self.snd_max - self.snd_una);
            if let Some(&(s, _)) = self.board.blocks().first() {
                end = end.min(s.max(self.snd_una + 1));
            }
            return Some(self.plan_range(self.snd_una, end));
        }
        if let Recovery::Sack { .. } = self.recovery {
            // RFC 6675 §5 step (C): while cwnd − pipe ≥ 1 SMSS, NextSeg().
            let thresh = self.cfg.dup_ack_threshold;
            let pipe = self.board.pipe(self.snd_una, self.snd_max, self.high_rxt, thresh, self.smss);
            if self.cc.cwnd < pipe + u64::from(self.smss) {
                return None;
            }
            if let Some((s, e)) = self.board.next_lost(self.snd_una, self.snd_max, self.high_rxt, thresh, self.smss) {
                return Some(self.plan_range(s, e));
            }
            if let Some(plan) = self.new_data_plan(u64::MAX) {
                return Some(plan);
            }
            let rule3 = self.board.next_rule3(self.snd_una, self.snd_max, self.high_rxt, self.smss);
            return rule3.map(|(s, e)| self.plan_range(s, e));
        }
        let flight = (self.snd_nxt - self.snd_una) as u64;
        let wnd = self.cc.cwnd.min(self.cfg.max_window.map_or(u64::MAX, u64::from)).min(self.send_buffer_limit());
        if let Some(plan) = self.new_data_plan(wnd.saturating_sub(flight)) {
            return Some(plan);
        }
        // A FIN alone once every data octet is sent (again after a timeout).
        if let Some(fin) = self.fin_seq {
            if self.snd_nxt == fin {
                return Some(Plan { seq: fin, len: 0, syn: false, fin: true });
            }
        }
        None
    }

    /// Bytes mode bounds what is in flight by the queue itself; bulk by the buffer.
    fn send_buffer_limit(&self) -> u64 {
        if self.bulk.is_some() {
            u64::from(self.cfg.send_buffer)
        } else {
            u64::MAX
        }
    }

    /// New (or, after a timeout, resent) data at `snd_nxt` within `room` octets of
    /// congestion window and the peer's window.
    fn new_data_plan(&self, room: u64) -> Option<Plan> {
        let smss = u64::from(self.smss);
        let base = self.tx_base();
        if self.snd_nxt < base {
            return None;
        }
        let sent = (self.snd_nxt - base) as u64;
        let unsent = self.tx_len.saturating_sub(sent);
        if unsent == 0 {
            return None;
        }
        let peer_room = self.snd_wnd.saturating_sub((self.snd_nxt - self.snd_una) as u64);
        if peer_room == 0 && self.probe_pending {
            // Zero-window probe (RFC 9293 §3.8.6.1): one octet beyond the window.
            return Some(self.plan_range(self.snd_nxt, self.snd_nxt + 1));
        }
        let len = smss.min(unsent).min(room).min(peer_room);
        if len == 0 {
            return None;
        }
        if len < smss {
            let flight = self.snd_nxt > self.snd_una;
            if len < unsent {
                // Sender SWS avoidance (RFC 1122 §4.2.3.4): a partial segment cut by
                // a window only when nothing is in flight and it is at least half the
                // largest window the peer offered.
                if flight || len < self.max_snd_wnd / 2 {
                    return None;
                }
            } else if self.cfg.nagle && flight && self.fin_seq.is_none() {
                // Nagle (RFC 896): the last short piece waits for the ACK, unless it
                // carries the FIN (Linux's tcp_nagle_test).
                return None;
            }
        }
        Some(self.plan_range(self.snd_nxt, self.snd_nxt + len as usize))
    }

    /// A segment covering `[start, end)` of sequence space past the SYN: data octets,
    /// with the FIN when the range reaches it.
    fn plan_range(&self, start: SeqNumber, end: SeqNumber) -> Plan {
        if let Some(fin) = self.fin_seq {
            if start >= fin {
                return Plan { seq: fin, len: 0, syn: false, fin: true };
            }
            if end > fin {
                return Plan { seq: start, len: fin - start, syn: false, fin: true };
            }
            if end == fin {
                return Plan { seq: start, len: end - start, syn: false, fin: true };
            }
        }
        Plan { seq: start, len: end - start, syn: false, fin: false }
    }

    fn send_plan(&mut self, now: u64, plan: Plan, emit: &mut impl FnMut(Repr, &[u8])) {
        let end = plan.seq + (plan.len + usize::from(plan.syn) + usize::from(plan.fin));
        let retransmit = plan.seq < self.snd_max;
        let offset = if plan.len > 0 { plan.seq - self.tx_base() } else { 0 };
        let control = if plan.syn {
            Control::Syn
        } else if plan.fin {
            Control::Fin
        } else if plan.len > 0 && self.bulk.is_none() && (offset + plan.len) as u64 == self.tx_len {
            // Linux marks the segment that empties the send queue.
            Control::Psh
        } else {
            Control::None
        };
        let mut repr = self.header(now, control, plan.seq, plan.len);
        if plan.syn {
            self.syn_options(now, &mut repr);
        }
        self.stats.segments_sent += 1;
        self.stats.bytes_sent += plan.len as u64;
        if retransmit {
            self.stats.retransmits += 1;
            self.stats.bytes_retransmitted += plan.len as u64;
            // Karn: a retransmission spoils the timed segment.
            self.rtt_timing = None;
        } else if self.rtt_timing.is_none() && !self.ts_ok {
            self.rtt_timing = Some((end, now));
        }
        if self.retransmit_first && plan.seq == self.snd_una {
            self.retransmit_first = false;
        }
        if self.recovery != Recovery::None && retransmit {
            self.high_rxt = self.high_rxt.max(end);
        }
        if plan.seq == self.snd_nxt || plan.syn {
            self.snd_nxt = end;
        }
        self.snd_max = self.snd_max.max(end);
        if plan.len > 0 && self.snd_wnd == 0 {
            self.probe_pending = false;
        }
        if self.rto_at.is_none() {
            // RFC 6298 §5.1.
            self.rto_at = Some(now + self.rtt.rto());
        }
        let payload: &[u8] = if plan.len == 0 {
            &[]
        } else if self.bulk.is_some() {
            &ZEROS[..plan.len]
        } else {
            self.scratch.clear();
            self.scratch.extend(self.tx.range(offset..offset + plan.len));
            &self.scratch
        };
        emit(repr, payload);
    }

    /// A header from this socket: ACK (except on our first SYN), window, timestamps,
    /// SACK blocks; clears the pending ACK.
    fn header(&mut self, now: u64, control: Control, seq: SeqNumber, len: usize) -> Repr {
        let syn = control == Control::Syn;
        let window = self.advertise_window(syn);
        let mut repr = Repr::new(self.local_port, self.remote_port, control, seq, window);
        repr.payload_len = len;
        if self.state != State::SynSent {
            repr.ack_number = Some(self.rcv_nxt);
            self.last_ack_sent = self.rcv_nxt;
            self.ack_now = false;
            self.delack_at = None;
        }
        if self.ts_ok || (syn && self.cfg.timestamps && self.state == State::SynSent) {
            repr.timestamp = Some((Self::ts_clock(now), self.ts_recent));
        }
        if self.sack_ok && !syn && !self.ooo.is_empty() {
            // RFC 2018 §4: the block with the newest segment first, then the others
            // newest first.
            let mut blocks: Vec<&OooBlock> = self.ooo.iter().collect();
            blocks.sort_by_key(|b| std::cmp::Reverse(b.touched));
            for (slot, b) in repr.sack_ranges.iter_mut().zip(blocks) {
                *slot = Some((b.start.as_u32(), b.end.as_u32()));
            }
        }
        repr
    }

    /// SYN options: MSS always; WS, SACK-Permitted, TS as configured, and on a
    /// SYN-ACK only those the peer offered (RFC 7323 §1.3, RFC 2018 §2).
    fn syn_options(&mut self, now: u64, repr: &mut Repr) {
        repr.max_seg_size = Some(self.cfg.mss);
        let active = self.state == State::SynSent;
        if self.cfg.window_scaling && (active || self.ws_ok) {
            repr.window_scale = Some(self.rcv_shift);
        }
        repr.sack_permitted = self.cfg.sack && (active || self.sack_ok);
        if self.cfg.timestamps && (active || self.ts_ok) {
            repr.timestamp = Some((Self::ts_clock(now), self.ts_recent));
        }
    }

    /// The window field to send; moves `rcv_adv`. Receiver SWS avoidance (RFC 1122
    /// §4.2.3.3): the right edge moves only by min(buffer/2, MSS) or more, and never
    /// back (RFC 9293 §3.8.6.2.2). A SYN's window is never scaled (RFC 7323 §2.2).
    fn advertise_window(&mut self, syn: bool) -> u16 {
        let free = self.rcv_free().min(1 << 30) as usize;
        if syn {
            let win = free.min(usize::from(u16::MAX));
            if self.state != State::SynSent {
                self.rcv_adv = self.rcv_adv.max(self.rcv_nxt + win);
            }
            return win as u16;
        }
        let mut edge = self.rcv_nxt + free;
        let threshold = (self.cfg.recv_buffer / 2).min(u32::from(self.cfg.mss)) as usize;
        if edge > self.rcv_adv && self.rcv_adv > self.rcv_nxt && edge - self.rcv_adv < threshold {
            edge = self.rcv_adv;
        }
        let edge = edge.max(self.rcv_adv);
        let win = ((edge - self.rcv_nxt) >> self.rcv_shift).min(usize::from(u16::MAX));
        self.rcv_adv = self.rcv_adv.max(self.rcv_nxt + (win << self.rcv_shift));
        win as u16
    }

    /// Free receive buffer, bounded by the fixed maximum window.
    fn rcv_free(&self) -> u64 {
        let used = if self.sink { 0 } else { self.rx.len() as u64 };
        let free = u64::from(self.cfg.recv_buffer).saturating_sub(used);
        free.min(self.cfg.max_window.map_or(u64::MAX, u64::from))
    }

    /// The retransmission timer expired (RFC 6298 §5.4–5.6; RFC 5681 §3.1; RFC 6582
    /// §4; RFC 2018 §8), or the persist timer when the peer's window is zero.
    fn on_rto(&mut self) {
        match self.state {
            State::SynSent | State::SynReceived => {
                self.stats.timeouts += 1;
                self.rtt.back_off();
                self.snd_nxt = self.iss;
                self.rtt_timing = None;
                return;
            }
            State::Closed | State::Listen | State::TimeWait => return,
            _ => {}
        }
        if self.snd_wnd == 0 {
            // Persist: probe the closed window, back off, leave the window alone.
            self.rtt.back_off();
            self.probe_pending = true;
            self.snd_nxt = self.snd_una;
            return;
        }
        if self.snd_max == self.snd_una {
            return;
        }
        self.stats.timeouts += 1;
        let flight = (self.snd_max - self.snd_una) as u64;
        self.cc.on_rto(flight, self.smss);
        self.rtt.back_off();
        self.snd_nxt = self.snd_una;
        self.high_rxt = self.snd_una;
        self.recover = self.snd_max;
        self.recovery = Recovery::None;
        self.board.clear();
        self.dup_acks = 0;
        self.retransmit_first = false;
        self.hold_timer = false;
        self.rtt_timing = None;
    }

    // ----- helpers -----------------------------------------------------------------

    fn reset_connection(&mut self, iss: SeqNumber) {
        self.iss = iss;
        self.snd_una = iss;
        self.snd_nxt = iss;
        self.snd_max = iss;
        self.recover = iss;
        self.high_rxt = iss;
        self.snd_wl2 = iss;
        self.fin_seq = None;
        self.rx_fin = None;
        self.ooo.clear();
        self.board.clear();
        self.recovery = Recovery::None;
        self.rto_at = None;
        self.delack_at = None;
        self.timewait_at = None;
        self.rtt_timing = None;
    }

    /// The shift that fits the largest window we may offer in 16 bits (RFC 7323 §2.3).
    fn wanted_rcv_shift(&self) -> u8 {
        if !self.cfg.window_scaling {
            return 0;
        }
        let limit = u64::from(self.cfg.recv_buffer).min(self.cfg.max_window.map_or(u64::MAX, u64::from));
        let mut shift = 0;
        while shift < MAX_WINDOW_SHIFT && limit >> shift > u64::from(u16::MAX) {
            shift += 1;
        }
        shift
    }

    /// Option negotiation from the peer's SYN or SYN-ACK.
    fn accept_syn_options(&mut self, repr: &Repr) {
        let peer_mss = repr.max_seg_size.unwrap_or(DEFAULT_MSS);
        self.ws_ok = self.cfg.window_scaling && repr.window_scale.is_some();
        if self.ws_ok {
            self.snd_shift = repr.window_scale.unwrap_or(0).min(MAX_WINDOW_SHIFT);
            self.rcv_shift = self.wanted_rcv_shift();
        } else {
            self.snd_shift = 0;
            self.rcv_shift = 0;
        }
        self.sack_ok = self.cfg.sack && repr.sack_permitted;
        self.ts_ok = self.cfg.timestamps && repr.timestamp.is_some();
        if let (true, Some((tsval, _))) = (self.ts_ok, repr.timestamp) {
            self.ts_recent = tsval;
        }
        let options = if self.ts_ok { TIMESTAMP_OPTION_LEN } else { 0 };
        self.smss = u32::from(self.cfg.mss.min(peer_mss)).saturating_sub(options).max(1);
        self.rcv_mss = u32::from(DEFAULT_MSS).min(self.smss);
        self.cc = Congestion::new(self.cfg.congestion_control, self.smss, self.cfg.initial_window);
        let syn_window = self.rcv_free().min(u64::from(u16::MAX)) as usize;
        self.rcv_adv = repr.seq_number + 1 + syn_window;
    }

    /// Our SYN is acknowledged by `ack`.
    fn syn_acked(&mut self, now: u64, ack: SeqNumber, repr: &Repr) {
        self.snd_una = ack;
        self.snd_nxt = self.snd_nxt.max(ack);
        let sample = match (self.ts_ok, repr.timestamp) {
            (true, Some((_, tsecr))) if tsecr != 0 => Some(u64::from(Self::ts_clock(now).wrapping_sub(tsecr)) * 1000),
            _ => self.rtt_timing.map(|(_, sent)| now - sent),
        };
        self.rtt_timing = None;
        if let Some(r) = sample {
            self.rtt.sample(r);
        }
        self.rto_at = None;
    }

    fn request_fin(&mut self) {
        if self.fin_seq.is_none() {
            self.fin_seq = Some(self.tx_base() + self.tx_len.min(1 << 30) as usize);
        }
    }

    fn fin_acked(&self) -> bool {
        self.fin_seq.is_some_and(|f| self.snd_una > f)
    }

    /// Sequence number of the first unacknowledged data octet (past the SYN).
    fn tx_base(&self) -> SeqNumber {
        if self.snd_una == self.iss {
            self.iss + 1
        } else {
            self.snd_una
        }
    }

    fn sent_data_octets(&self) -> u64 {
        let base = self.tx_base();
        if self.snd_max > base {
            (self.snd_max - base) as u64
        } else {
            0
        }
    }

    fn drain_tx(&mut self, n: u64) {
        if self.bulk.is_none() {
            let n = (n as usize).min(self.tx.len());
            self.tx.drain(..n);
        }
        if self.bulk != Some(true) {
            self.tx_len = self.tx_len.saturating_sub(n);
        }
    }

    fn enter_closed(&mut self) {
        self.state = State::Closed;
        self.rto_at = None;
        self.delack_at = None;
        self.timewait_at = None;
        self.ack_now = false;
    }

    fn enter_time_wait(&mut self, now: u64) {
        self.state = State::TimeWait;
        self.rto_at = None;
        self.timewait_at = Some(now + 2 * self.cfg.msl.as_nanos());
    }

    /// RFC 9293 §3.10.7.1: the RST answering a segment that has no connection.
    fn reset_for(&self, repr: &Repr) -> Option<Repr> {
        if repr.control == Control::Rst {
            return None;
        }
        Some(match repr.ack_number {
            Some(ack) => Repr::new(repr.dst_port, repr.src_port, Control::Rst, ack, 0),
            None => {
                let mut rst = Repr::new(repr.dst_port, repr.src_port, Control::Rst, SeqNumber::default(), 0);
                rst.ack_number = Some(repr.seq_number + repr.segment_len());
                rst
            }
        })
    }

    fn may_send_state(&self) -> bool {
        matches!(
            self.state,
            State::Closed | State::Listen | State::SynSent | State::SynReceived | State::Established | State::CloseWait
        )
    }

    fn is_synchronized(&self) -> bool {
        matches!(
            self.state,
            State::Established
                | State::FinWait1
                | State::FinWait2
                | State::CloseWait
                | State::Closing
                | State::LastAck
                | State::TimeWait
        )
    }

    /// The timestamp clock: microseconds, plus one so TSval is never the "no echo"
    /// zero at the start of a run.
    fn ts_clock(now: u64) -> u32 {
        ((now / 1000) as u32).wrapping_add(1)
    }
}
