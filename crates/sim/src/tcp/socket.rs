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
//!
//! Path MTU: the MSS follows the path MTU the IP layer knows (RFC 1191 §6.4,
//! [`TcpSocket::set_path_mtu`]); an ICMP "fragmentation needed" lowers it and resends
//! what was in flight at once ([`TcpSocket::on_frag_needed`], Linux's
//! `tcp_v4_mtu_reduced`); packetization-layer PMTUD (RFC 4821) is Linux's
//! `tcp_mtu_probing`: black hole detection, then probes that search the MTU upwards
//! ([`MtuProbing`]).

use std::collections::VecDeque;

use wire::tcp::{Control, Payload, Repr, SeqNumber, DEFAULT_MSS, MAX_OPTIONS_LEN, MAX_WINDOW_SHIFT};

use super::config::TcpConfig;
use super::congestion::Congestion;
use super::hystart::{AckInfo, HyStart, Verdict};
use super::rack::Rack;
use super::rtt::RttEstimator;
use super::sack::Scoreboard;

/// Zeros a bulk sender hands out as payload, so no payload is ever copied.
static ZEROS: [u8; 65536] = [0; 65536];

/// Octets of the Timestamps option with its two NOPs (RFC 7323 §3.2, Linux layout):
/// the data of a segment shrinks by this much when timestamps are on.
const TIMESTAMP_OPTION_LEN: u32 = 12;
/// IPv4 and TCP headers without options: MTU − this = MSS (RFC 9293 §3.7.1).
const HEADERS_LEN: u32 = 40;
/// Linux `tcp_min_snd_mss`: the smallest MSS the sender uses whatever it is told.
const MIN_SND_MSS: u32 = 48;
/// Linux `tcp_probe_threshold`: probing stops when the search range is narrower.
const PROBE_THRESHOLD: u32 = 8;
/// Linux `tcp_retries1`: timeouts before black hole detection (and a route re-check).
const RETRIES1: u32 = 3;
/// Linux `TCP_RTO_MIN`, the base of the model timeout of `retransmits_timed_out`.
const RTO_BASE_NS: u64 = 200_000_000;
/// Linux `tcp_mtu_probe`: a probe goes only with at least this many segments of cwnd.
const PROBE_MIN_CWND: u64 = 11;
/// RFC 8985 §7.2: the PTO when no SRTT is known, 1 s.
const TLP_PTO_NO_SRTT_NS: u64 = 1_000_000_000;
/// RFC 8985 §7.2 `TLP.max_ack_delay`, added to the PTO when one segment is in flight
/// (its ACK may be delayed): the RFC's worst-case delayed-ACK timer WCDelAckT, 200 ms,
/// which is also what Linux adds (`TCP_RTO_MIN`).
const TLP_MAX_ACK_DELAY_NS: u64 = 200_000_000;

/// What the loss timer armed beside the RTO is for (RFC 8985 §8: the RACK reordering
/// timer and the TLP probe timer, one at a time, never later than the RTO).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LossTimer {
    /// RFC 8985 §6.2 step 5: RACK's reordering window of a segment runs out.
    Reorder,
    /// RFC 8985 §7.2: the probe timeout (PTO).
    Probe,
}

/// The state of packetization-layer PMTUD (RFC 4821 §7; Linux `icsk_mtup`). MTUs are
/// IP packet sizes: the search runs over what the path carries, `search_low` known to
/// work, `search_high` the most it may carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MtuProbing {
    pub enabled: bool,
    pub search_low: u32,
    pub search_high: u32,
    /// The probe in flight: its MTU and sequence range.
    probe: Option<(u32, SeqNumber, SeqNumber)>,
}

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
    /// ICMP "fragmentation needed" about this connection's segments, accepted.
    pub frag_needed: u64,
    /// Times the MSS went down for the path MTU (ICMP, or black hole detection).
    pub mss_reductions: u64,
    /// Black hole detections (RFC 4821 §7.7 / Linux `tcp_mtu_probing`).
    pub black_holes: u64,
    /// MTU probes sent, and those found lost.
    pub mtu_probes: u64,
    pub mtu_probes_failed: u64,
    /// RTT samples taken, their sum, smallest and largest, ns (iperf3's min, mean and
    /// max RTT).
    pub rtt_samples: u64,
    pub rtt_sum_ns: u64,
    pub rtt_min_ns: Option<u64>,
    pub rtt_max_ns: u64,
    /// Largest congestion window, octets (iperf3 `max_snd_cwnd`).
    pub max_cwnd: u64,
    /// Segments RACK marked lost (RFC 8985 §6.2 step 5), retransmissions included.
    pub rack_lost: u64,
    /// Tail loss probes sent (RFC 8985 §7.3).
    pub tlp_probes: u64,
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
    /// Segments retransmitted so far.
    pub retransmits: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Recovery {
    None,
    /// RFC 6582: `recover` is the highest sequence sent when recovery began.
    NewReno {
        recover: SeqNumber,
        partial_seen: bool,
    },
    /// RFC 6675 §5: RecoveryPoint.
    Sack {
        recovery_point: SeqNumber,
    },
}

/// RFC 6937 §3.1's variables for one recovery, in octets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Prr {
    /// prr_delivered: data delivered to the receiver since recovery began.
    delivered: u64,
    /// prr_out: data sent since recovery began.
    out: u64,
    /// RecoverFS: snd.nxt − snd.una when recovery began.
    recover_fs: u64,
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
    /// Bulk mode with [`TcpConfig::send_low_water`]: octets of the send buffer freed by
    /// ACKs that the writer has not filled again (it waits until they reach the low
    /// water mark, as 4.4BSD's `sosend`).
    unwritten: u64,
    /// What is left of the writer's current write call (4.4BSD `uio_resid`), with
    /// [`TcpConfig::send_low_water`]; 0 before the first.
    call_left: u64,
    /// Where our FIN goes, once the application closed.
    fin_seq: Option<SeqNumber>,
    rst_pending: bool,
    probe_pending: bool,
    smss: u32,
    /// The largest MSS either side allows (ours and the peer's, Linux `mss_clamp`).
    mss_clamp: u32,
    /// The path MTU the MSS follows (Linux `icsk_pmtu_cookie`).
    pmtu: u32,
    mtup: MtuProbing,
    /// When the head segment was first retransmitted by a timeout (Linux
    /// `retrans_stamp`), for black hole detection.
    retrans_stamp: Option<u64>,
    /// The congestion window to restore when a recovery entered for a lost MTU probe
    /// ends (a probe loss is not congestion, RFC 4821 §7.6.2).
    probe_recovery_cwnd: Option<u64>,
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
    /// In-order data segments received since the last ACK sent (for
    /// `delayed_ack_any_segment`).
    segs_unacked: u32,
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
    hystart: HyStart,
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
    /// RFC 8985 RACK-TLP state, when `cfg.rack` and SACK is in use.
    rack: Option<Rack>,
    /// The RACK reordering or TLP timer, never later than `rto_at` (RFC 8985 §8).
    loss_at: Option<(u64, LossTimer)>,
    /// The PTO fired: the next segment is the probe (RFC 8985 §7.3).
    tlp_pending: bool,
    /// When the window was last lowered for a congestion event (fast recovery or a lost
    /// retransmission), ns: a lost retransmission sent before it lowers it no more.
    rtx_cut_at: u64,
    /// RFC 6937 PRR state of the current SACK recovery, when `cfg.prr`.
    prr: Option<Prr>,

    stats: TcpStats,
    trace: Option<Vec<TraceRecord>>,

    /// True from the end of [`dispatch`](Self::dispatch), which sends until
    /// [`next_segment`](Self::next_segment) is `None`, to the next call of any other
    /// `&mut self` method, which clears it first: every field is private, so nothing
    /// else can change what `next_segment` reads in between. [`poll_at`](Self::poll_at)
    /// then knows there is nothing to send without asking `next_segment` again.
    send_idle: bool,

    /// The header [`header`](Self::header) fills for the segment being sent, handed to
    /// `dispatch`'s emitter by reference. Kept between segments so that the fields no
    /// header from this socket sets (the ECN bits and unknown options) are not written
    /// again for every segment: `header` writes every other field each time.
    out: Repr,
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
        let mut cc = Congestion::new(cfg.congestion_control, smss, cfg.initial_window);
        cc.set_growth(cfg.cwnd_growth, cfg.slow_start_limit);
        cc.set_cubic_alpha(cfg.cubic_alpha);
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
            unwritten: 0,
            call_left: 0,
            fin_seq: None,
            rst_pending: false,
            probe_pending: false,
            smss,
            mss_clamp: u32::from(cfg.mss),
            pmtu: u32::from(cfg.mss) + HEADERS_LEN,
            mtup: MtuProbing { enabled: false, search_low: 0, search_high: 0, probe: None },
            retrans_stamp: None,
            probe_recovery_cwnd: None,
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
            segs_unacked: 0,
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
            hystart: HyStart::new(cfg.hystart),
            prr: None,
            recovery: Recovery::None,
            recover: zero,
            dup_acks: 0,
            board: Scoreboard::new(),
            high_rxt: zero,
            retransmit_first: false,
            hold_timer: false,
            rack: None,
            loss_at: None,
            tlp_pending: false,
            rtx_cut_at: 0,
            stats: TcpStats::default(),
            trace: None,
            send_idle: false,
            out: Repr::new(0, 0, Control::None, zero, 0),
            cfg,
        }
    }

    // ----- the application's side -------------------------------------------------

    /// Passive open (RFC 9293 §3.10.1): CLOSED → LISTEN on `local_port`; `iss` is
    /// the initial send sequence number the SYN-ACK will carry.
    pub fn listen(&mut self, local_port: u16, iss: SeqNumber) {
        self.send_idle = false;
        assert_eq!(self.state, State::Closed, "listen on an open socket");
        self.reset_connection(iss);
        self.local_port = local_port;
        self.passive = true;
        self.state = State::Listen;
    }

    /// Active open (RFC 9293 §3.10.1): CLOSED → SYN-SENT; the SYN goes out at the
    /// next [`dispatch`](Self::dispatch).
    pub fn connect(&mut self, now: u64, local_port: u16, remote_port: u16, iss: SeqNumber) {
        self.send_idle = false;
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
        self.send_idle = false;
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
        self.send_idle = false;
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
        self.send_idle = false;
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
        self.send_idle = false;
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
        // The writer has filled the buffer with whole write calls and part of one.
        let ws = u64::from(self.cfg.write_size);
        self.unwritten = 0;
        self.call_left = if ws > 0 { (ws - self.written_octets() % ws) % ws } else { 0 };
    }

    /// Sink mode: received data is counted and dropped at once, as a reader that
    /// always keeps up (the window stays fully open).
    pub fn set_sink(&mut self, sink: bool) {
        self.send_idle = false;
        self.sink = sink;
    }

    /// Reads in-order received data; returns the octets copied. Opens the window
    /// with an immediate update when it grew by min(buffer/2, MSS) (RFC 1122
    /// §4.2.3.3), unless `window_update_on_read` is off.
    pub fn recv_slice(&mut self, buf: &mut [u8]) -> usize {
        self.send_idle = false;
        let n = buf.len().min(self.rx.len());
        for (dst, src) in buf.iter_mut().zip(self.rx.drain(..n)) {
            *dst = src;
        }
        if n > 0 && self.is_synchronized() && self.cfg.window_update_on_read {
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
        self.send_idle = false;
        self.trace.get_or_insert_with(Vec::new);
    }

    /// True when [`enable_trace`](Self::enable_trace) was called.
    pub fn is_tracing(&self) -> bool {
        self.trace.is_some()
    }

    /// Takes the trace collected so far.
    pub fn take_trace(&mut self) -> Vec<TraceRecord> {
        self.send_idle = false;
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
    /// The slow-start exit heuristic (its exit, if it took one).
    pub fn hystart(&self) -> &HyStart {
        &self.hystart
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
    /// The IP packet size of the sender's full segments: the path MTU it was told, or
    /// what MTU probing found, whichever is smaller.
    pub fn effective_mtu(&self) -> u32 {
        self.mss_to_mtu(self.smss)
    }
    /// The state of MTU probing.
    pub fn mtu_probing(&self) -> MtuProbing {
        self.mtup
    }

    // ----- path MTU ----------------------------------------------------------------

    /// Octets of TCP options on every data segment.
    fn options_len(&self) -> u32 {
        if self.ts_ok {
            TIMESTAMP_OPTION_LEN
        } else {
            0
        }
    }

    /// Octets of SACK option the next segment carries: the blocks [`header`](Self::header)
    /// puts in (RFC 2018 §3: at most three beside timestamps), 8 each, after two NOPs,
    /// kind and length (Linux `tcp_established_options`).
    fn sack_option_len(&self) -> u32 {
        if !self.sack_ok || self.ooo.is_empty() {
            return 0;
        }
        let room = MAX_OPTIONS_LEN as u32 - self.options_len();
        let blocks = (self.ooo.len() as u32).min(3).min((room - 4) / 8);
        4 + 8 * blocks
    }

    /// Linux `tcp_current_mss`: the data octets of a segment sent now. `smss` leaves room
    /// only for the options every data segment carries (timestamps); the SACK blocks of
    /// a receiver with data out of order come out of the data, so that the packet still
    /// fits the path MTU (RFC 9293 §3.7.1 and RFC 6691 §2: the MSS counts data only,
    /// and options the sender adds shorten the segment).
    fn current_mss(&self) -> u32 {
        self.smss.saturating_sub(self.sack_option_len()).max(1)
    }

    /// A data segment covering at most [`current_mss`](Self::current_mss) octets from
    /// `start` towards `end` (a retransmission: the rest goes in the next one).
    fn plan_data(&self, start: SeqNumber, end: SeqNumber) -> Plan {
        self.plan_range(start, end.min(start + self.current_mss() as usize))
    }

    /// Linux `tcp_mtu_to_mss`: the data octets of a segment in an `mtu`-octet packet.
    fn mtu_to_mss(&self, mtu: u32) -> u32 {
        let mss = mtu.saturating_sub(HEADERS_LEN).min(self.mss_clamp).max(MIN_SND_MSS);
        mss.saturating_sub(self.options_len()).max(1)
    }

    /// Linux `tcp_mss_to_mtu`.
    fn mss_to_mtu(&self, mss: u32) -> u32 {
        mss + HEADERS_LEN + self.options_len()
    }

    /// Linux `tcp_sync_mss`: the MSS for path MTU `pmtu`, and no more than MTU probing
    /// has found to work.
    fn sync_mss(&mut self, pmtu: u32) {
        if self.mtup.search_high > pmtu {
            self.mtup.search_high = pmtu;
        }
        self.pmtu = pmtu;
        let mut mss = self.mtu_to_mss(pmtu);
        if self.mtup.enabled {
            mss = mss.min(self.mtu_to_mss(self.mtup.search_low));
        }
        if mss < self.smss {
            self.stats.mss_reductions += 1;
        }
        self.smss = mss;
    }

    /// Linux `tcp_mtup_init`, once the options are known.
    fn mtup_init(&mut self) {
        self.mtup = MtuProbing {
            enabled: self.cfg.mtu_probing > 1,
            search_high: self.mss_clamp + HEADERS_LEN,
            search_low: self.mss_to_mtu(u32::from(self.cfg.base_mss)),
            probe: None,
        };
    }

    /// The path MTU to the peer is `mtu` as the IP layer knows it now (its first hop,
    /// lowered by "fragmentation needed", raised again when that aged out, RFC 1191
    /// §6.3): the MSS follows (RFC 1191 §6.4). Sends nothing again.
    pub fn set_path_mtu(&mut self, mtu: u32) {
        self.send_idle = false;
        if mtu != self.pmtu && self.cfg.pmtu_discovery {
            self.sync_mss(mtu);
        }
    }

    /// An ICMP "fragmentation needed" quoting our segment with sequence number `seq`,
    /// the path MTU now `mtu` (Linux `tcp_v4_err`, `tcp_v4_mtu_reduced`). A quoted
    /// sequence outside what is in flight is ignored (RFC 5927 §4.1, as Linux does). When
    /// the MTU went down, the MSS follows and every segment in flight, too big now, is
    /// sent again at once: a go-back-N without a congestion response, as Linux's
    /// `tcp_simple_retransmit` ("we do not increase amount of data in network, but units
    /// changed"; its cwnd counts segments, so ours keeps their number). Returns whether
    /// the message was accepted.
    pub fn on_frag_needed(&mut self, now: u64, seq: SeqNumber, mtu: u32) -> bool {
        self.send_idle = false;
        self.now = now;
        if matches!(self.state, State::Listen | State::Closed) || seq < self.snd_una || seq > self.snd_max {
            return false;
        }
        self.stats.frag_needed += 1;
        if !self.cfg.pmtu_discovery || mtu >= self.pmtu {
            return true;
        }
        let old = u64::from(self.smss);
        self.sync_mss(mtu);
        let new = u64::from(self.smss);
        if new < old {
            self.cc.cwnd = (self.cc.cwnd * new / old).max(new);
            if self.cc.ssthresh != u64::MAX {
                self.cc.ssthresh = (self.cc.ssthresh * new / old).max(2 * new);
            }
        }
        self.simple_retransmit();
        true
    }

    /// Every segment in flight again from `snd_una`, as after a timeout but with the
    /// windows left alone; duplicate ACKs for what was in flight start no fast
    /// retransmit (RFC 6582 `recover`, Linux's Loss state).
    fn simple_retransmit(&mut self) {
        if self.snd_max == self.snd_una {
            return;
        }
        self.snd_nxt = self.snd_una;
        self.high_rxt = self.snd_una;
        self.recover = self.snd_max;
        self.recovery = Recovery::None;
        self.prr = None;
        self.board.clear();
        self.dup_acks = 0;
        self.retransmit_first = false;
        self.hold_timer = false;
        self.rtt_timing = None;
        self.forget_rack_marks();
        if let Some((mtu, _, _)) = self.mtup.probe.take() {
            self.mtup.search_high = self.mtup.search_high.min(mtu - 1);
        }
    }

    /// Linux `tcp_mtu_probing`, called when the head segment has gone unacknowledged
    /// through `tcp_retries1` backed-off timeouts (RFC 4821 §7.7 black hole): the
    /// first time probing starts from `base_mss`; after that the floor halves.
    fn black_hole_detected(&mut self) {
        if self.cfg.mtu_probing == 0 {
            return;
        }
        self.stats.black_holes += 1;
        if !self.mtup.enabled {
            self.mtup.enabled = true;
        } else {
            let mss = (self.mtu_to_mss(self.mtup.search_low) >> 1).min(u32::from(self.cfg.base_mss)).max(MIN_SND_MSS);
            self.mtup.search_low = self.mss_to_mtu(mss);
        }
        self.sync_mss(self.pmtu);
    }

    /// The MTU probe to send now, if probing may (Linux `tcp_mtu_probe`): a segment of
    /// the middle of the search range, new data, with room behind it for the segments
    /// whose duplicate ACKs would tell its loss.
    fn probe_plan(&self) -> Option<Plan> {
        let m = &self.mtup;
        if !m.enabled
            || m.probe.is_some()
            || self.recovery != Recovery::None
            || self.snd_nxt != self.snd_max
            || self.fin_seq.is_some()
        {
            return None;
        }
        let smss = u64::from(self.smss);
        if self.cc.cwnd < PROBE_MIN_CWND * smss || (self.sack_ok && !self.board.blocks().is_empty()) {
            return None;
        }
        if self.sack_option_len() > 0 {
            // Linux `tcp_mtu_probe` (`rx_opt.num_sacks`): the probe's SACK blocks would
            // take octets from the size being probed.
            return None;
        }
        if m.search_high < m.search_low + PROBE_THRESHOLD {
            return None;
        }
        let probe = self.mtu_to_mss((m.search_high + m.search_low) / 2);
        if probe > self.mtu_to_mss(m.search_high) || probe <= self.smss {
            return None;
        }
        let needed = u64::from(probe) + u64::from(self.cfg.dup_ack_threshold + 1) * smss;
        let base = self.tx_base();
        if self.snd_nxt < base {
            return None;
        }
        let unsent = self.tx_len.saturating_sub((self.snd_nxt - base) as u64);
        let flight = (self.snd_nxt - self.snd_una) as u64;
        if unsent < needed || self.snd_wnd < needed || flight + needed > self.snd_wnd {
            return None;
        }
        if flight / smss + 2 > self.cc.cwnd / smss {
            return None;
        }
        Some(Plan { seq: self.snd_nxt, len: probe as usize, syn: false, fin: false })
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
        debug_assert!(!self.send_idle || self.next_segment().is_none(), "send_idle went stale");
        if self.rst_pending || self.ack_now || (!self.send_idle && self.next_segment().is_some()) {
            return Some(self.now);
        }
        // The earliest of the timers that are set (the same as flattening the four and
        // taking the minimum): an unset one counts as u64::MAX, and the minimum is a time
        // only when some timer is set (one set at u64::MAX itself included).
        let (rto, loss) = (self.rto_at, self.loss_at.map(|(t, _)| t));
        let (delack, timewait) = (self.delack_at, self.timewait_at);
        let at = |t: Option<u64>| t.unwrap_or(u64::MAX);
        let earliest = at(rto).min(at(loss)).min(at(delack)).min(at(timewait));
        let any = rto.is_some() | loss.is_some() | delack.is_some() | timewait.is_some();
        any.then_some(earliest)
    }

    // ----- input -------------------------------------------------------------------

    /// Takes one arriving segment for this socket at `now`. Returns an immediate
    /// reply that carries no data (a RST); everything else is sent by `dispatch`.
    pub fn process(&mut self, now: u64, repr: &Repr, payload: &[u8]) -> Option<Repr> {
        self.send_idle = false;
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
            self.receive_data(now, repr.seq_number, payload, repr.control == Control::Psh);
        }
        // Eighth: FIN.
        if repr.control == Control::Fin && matches!(self.state, State::Established | State::FinWait1 | State::FinWait2)
        {
            self.rx_fin = Some(repr.seq_number + payload.len());
        }
        if self.rx_fin.is_some() {
            self.consume_fin(now);
        }
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
        let old_una = self.snd_una;
        let win_field = repr.window_len;
        // Most ACKs carry no SACK block: the three empty slots are seen at once.
        let has_sack = repr.sack_ranges != [None; 3];
        // RFC 6937 DeliveredData counts the change in SACKed octets too.
        let sacked_before = if self.cfg.prr && self.sack_ok { self.board.sacked_bytes() } else { 0 };
        let newly_sacked = if self.sack_ok && has_sack { self.absorb_sack(ack, repr) } else { 0 };
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
            self.writer_refill(data_acked);
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
                self.take_rtt_sample(r);
            }
            self.dup_acks = 0;
            self.retrans_stamp = None;
            if let Some((mtu, _, end)) = self.mtup.probe {
                if ack >= end {
                    // Linux `tcp_mtup_probe_success`: the probe's size works.
                    self.mtup.probe = None;
                    self.mtup.search_low = mtu;
                    self.sync_mss(self.pmtu);
                }
            }
            if self.recovery == Recovery::None && self.cc.in_slow_start() {
                let info = AckInfo {
                    now,
                    ack,
                    snd_nxt: self.snd_max,
                    rtt: rtt_sample,
                    cwnd: self.cc.cwnd,
                    smss: self.smss,
                    srtt: self.rtt.srtt(),
                };
                let verdict = self.hystart.on_ack(info);
                if verdict == Verdict::Exit {
                    self.cc.ssthresh = self.cc.cwnd;
                }
            }
            self.on_new_ack(now, acked as u64, data_acked);
            self.stats.max_cwnd = self.stats.max_cwnd.max(self.cc.cwnd);
            // RFC 6298 §5.2/§5.3.
            if self.snd_una == self.snd_max {
                self.rto_at = None;
            } else if !self.hold_timer {
                self.rto_at = Some(now + self.rtt.rto());
            }
            self.hold_timer = false;
        } else if ack == self.snd_una
            && in_flight
            && self.snd_wnd > 0
            && data_len == 0
            && repr.control.is_empty()
            && (win_field == self.last_win_field || newly_sacked > 0)
        {
            // RFC 5681 §2 duplicate ACK (RFC 6675 also counts one that SACKs new data).
            // Not while the window is closed: the answers to zero-window probes say
            // nothing about loss (Linux counts none either: its probes carry old data).
            self.stats.dup_acks += 1;
            self.dup_acks += 1;
            self.on_dup_ack();
        }
        if self.rack.is_some() {
            let pure_dup = ack == old_una && data_len == 0 && win_field == self.last_win_field && newly_sacked == 0;
            self.rack_on_ack(now, ack, pure_dup);
        }
        if self.prr.is_some() {
            self.prr_on_ack(old_una, sacked_before);
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
                retransmits: self.stats.retransmits,
            });
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
            Recovery::None if self.cc.in_slow_start() => {
                let plain = self.cc.slow_start_increment(data_acked, self.smss);
                self.cc.cwnd += self.hystart.slow_start_increase(data_acked, smss, plain);
            }
            Recovery::None => {
                self.cc.on_ack(now, data_acked, self.smss, self.rtt.srtt());
            }
            Recovery::NewReno { recover, partial_seen } => {
                if self.snd_una >= recover {
                    // RFC 6582 §3.2 step 3, full ACK: cwnd = min(ssthresh,
                    // max(FlightSize, SMSS) + SMSS).
                    let flight = (self.snd_max - self.snd_una) as u64;
                    self.cc.cwnd = self.cc.ssthresh.min(flight.max(smss) + smss);
                    if let Some(cwnd) = self.probe_recovery_cwnd.take() {
                        self.cc.cwnd = cwnd;
                    }
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
                    if self.prr.take().is_some() {
                        // RFC 6937 §3.1: on leaving recovery, cwnd = ssthresh.
                        self.cc.cwnd = self.cc.ssthresh;
                    }
                    if let Some(cwnd) = self.probe_recovery_cwnd.take() {
                        self.cc.cwnd = cwnd;
                    }
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
                if threshold || lost {
                    self.loss_detected();
                }
            }
            Recovery::NewReno { .. } => {
                // RFC 6582 §3.2 step 4 / RFC 5681 §3.2 step 4: inflate.
                self.cc.cwnd += u64::from(self.smss);
            }
            Recovery::Sack { .. } => {}
        }
    }

    /// Outside recovery, a loss was inferred (DupThresh, IsLost, or RACK): fast
    /// retransmit, or the failure of an MTU probe.
    ///
    /// Whether the loss may start a new recovery depends on the recovery in use, both
    /// rules comparing the cumulative ACK with `recover` (here an exclusive end: the
    /// SND.MAX at which the last recovery or timeout began, one above the RFCs'
    /// "highest sequence number transmitted"):
    /// - SACK (RFC 6675 §5, §5.1): a new recovery may start once "HighACK is greater
    ///   than or equal to" RecoveryPoint = HighData, i.e. SND.UNA − 1 ≥ recover − 1:
    ///   `snd_una >= recover`. The first segment sent above the last recovery point can
    ///   so be fast-retransmitted as soon as the previous recovery has ended (ns-3's
    ///   `m_highRxAckMark >= m_recover` in `TcpSocketBase::DupAck` is the same rule).
    /// - NewReno without SACK (RFC 6582 §3.2 step 2): only if the cumulative ACK
    ///   "covers more than recover", which the RFC spells out as ack_number − 1 >
    ///   recover: `snd_una > recover`, so duplicate ACKs caused by go-back-N
    ///   retransmissions after a timeout do not start a second recovery (the optional
    ///   heuristics of RFC 6582 §4 are not modelled).
    fn loss_detected(&mut self) {
        let after_last = if self.sack_ok { self.snd_una >= self.recover } else { self.snd_una > self.recover };
        match self.recovery {
            Recovery::None => {
                if self.mtup.probe.is_some_and(|(_, start, _)| start == self.snd_una) {
                    // Linux `tcp_mtup_probe_failed`: the probe was lost, not the path
                    // congested (RFC 4821 §7.6.2): the search's top comes down and the
                    // probe's data goes again in ordinary segments, cwnd untouched.
                    let (mtu, _, _) = self.mtup.probe.take().expect("probe");
                    self.mtup.search_high = mtu - 1;
                    self.stats.mtu_probes_failed += 1;
                    self.sync_mss(self.pmtu);
                    self.probe_recovery_cwnd = Some(self.cc.cwnd);
                    self.enter_recovery_keeping_cwnd();
                } else if after_last {
                    // RFC 6582 §3.2 step 2: not for data sent before the last recovery.
                    self.enter_recovery();
                }
            }
            Recovery::NewReno { .. } | Recovery::Sack { .. } => {}
        }
    }

    // ----- RACK-TLP (RFC 8985) -----------------------------------------------------

    /// In fast recovery, or in the recovery after a timeout (until everything sent
    /// before it is acknowledged): RFC 8985's "in recovery".
    fn in_loss_recovery(&self) -> bool {
        self.recovery != Recovery::None || self.snd_una < self.recover
    }

    /// RFC 8985 §6.2 and §7.4 for one ACK, after the scoreboard took its SACK blocks.
    fn rack_on_ack(&mut self, now: u64, ack: SeqNumber, pure_dup: bool) {
        let min_rtt = self.stats.rtt_min_ns;
        let Some(rack) = self.rack.as_mut() else { return };
        rack.on_ack(now, self.snd_una, self.board.blocks(), min_rtt);
        // §7.4, TLP_process_ack (no DSACK here, so its DSACK test never holds).
        let mut repaired = false;
        if let Some(end) = rack.tlp_end_seq.filter(|&end| ack >= end) {
            if !rack.tlp_is_retrans || pure_dup {
                // New data delivered, or the probe duplicated the original: no loss.
                rack.tlp_end_seq = None;
            } else if ack > end {
                // §7.4.2: the probe repaired a loss (the only one, since no other
                // recovery started): reduce the window.
                rack.tlp_end_seq = None;
                repaired = true;
            }
        }
        if repaired && self.recovery == Recovery::None {
            let flight = (self.snd_max - self.snd_una) as u64;
            self.hystart.on_loss(false);
            self.cc.on_congestion_event(flight, self.smss);
        }
        self.rack_detect_loss(now);
        self.arm_loss_timer(now);
    }

    /// RFC 8985 §6.2 steps 4–5; a loss found outside recovery starts one (§6.2: "if
    /// any segment is newly marked lost, ... fast recovery").
    fn rack_detect_loss(&mut self, now: u64) {
        let in_recovery = self.in_loss_recovery();
        let (min_rtt, srtt, thresh) = (self.stats.rtt_min_ns, self.rtt.srtt(), self.cfg.dup_ack_threshold);
        let Some(rack) = self.rack.as_mut() else { return };
        let reo_wnd = rack.reo_wnd(min_rtt, srtt, in_recovery, thresh);
        let (newly, lost_rtx) = rack.detect_loss(now, reo_wnd);
        self.stats.rack_lost += u64::from(newly);
        if newly > 0 && self.recovery == Recovery::None {
            self.loss_detected();
        } else if let (Some(sent), Recovery::Sack { .. }) = (lost_rtx, self.recovery) {
            // RFC 5681 §4.3: "the loss of a retransmission [...] should be taken as two
            // indications of congestion and, therefore, cwnd (and ssthresh) MUST be
            // lowered twice". Once per round: only for a retransmission sent after the
            // last reduction, at the rate that reduction set. (Linux instead bounds what
            // recovery sends with PRR, RFC 6937, which this model does not have; without
            // either, RFC 6675 refills the pipe to ssthresh each time RACK frees it.)
            if sent >= self.rtx_cut_at && self.prr.is_none() {
                let flight = (self.snd_max - self.snd_una) as u64;
                self.cc.on_congestion_event(flight, self.smss);
                self.rtx_cut_at = now;
            }
        }
    }

    /// RFC 8985 §7.2: a probe may be scheduled (SACK and RACK in use, data in flight,
    /// not in recovery, no probe outstanding). Linux also waits while anything is
    /// SACKed (its Disorder state; RACK's reordering timer covers that case).
    fn tlp_eligible(&self) -> bool {
        let Some(rack) = &self.rack else { return false };
        self.cfg.tlp
            && matches!(
                self.state,
                State::Established | State::CloseWait | State::FinWait1 | State::Closing | State::LastAck
            )
            && self.snd_max > self.snd_una
            && !self.in_loss_recovery()
            && rack.tlp_end_seq.is_none()
            && !self.tlp_pending
            && self.board.is_empty()
    }

    /// Arms the loss timer after an ACK or new data (RFC 8985 §8): RACK's reordering
    /// timer when a segment's window is running, else the TLP probe timer when a probe
    /// may go, never later than the RTO; else none.
    fn arm_loss_timer(&mut self, now: u64) {
        if let Some(at) = self.rack.as_ref().and_then(|r| r.reo_at) {
            self.loss_at = Some((at, LossTimer::Reorder));
            return;
        }
        if !self.tlp_eligible() {
            self.loss_at = None;
            return;
        }
        // §7.2 TLP_calc_PTO: 2·SRTT, plus max_ack_delay with one segment in flight;
        // 1 s without an SRTT; no later than the RTO.
        let pto = match self.rtt.srtt() {
            Some(srtt) => {
                let one = (self.snd_max - self.snd_una) as u64 <= u64::from(self.smss);
                2 * srtt + if one { TLP_MAX_ACK_DELAY_NS } else { 0 }
            }
            None => TLP_PTO_NO_SRTT_NS,
        };
        let at = self.rto_at.map_or(now + pto, |rto| rto.min(now + pto));
        self.loss_at = Some((at, LossTimer::Probe));
    }

    /// The loss timer fired.
    fn on_loss_timer(&mut self, now: u64, kind: LossTimer) {
        match kind {
            LossTimer::Reorder => {
                self.rack_detect_loss(now);
                self.arm_loss_timer(now);
            }
            LossTimer::Probe => {
                if self.tlp_eligible() {
                    self.tlp_pending = true;
                }
                // §7.3: after the probe, the RTO is armed again, not the PTO.
                if self.snd_max > self.snd_una {
                    self.rto_at = Some(now + self.rtt.rto());
                }
            }
        }
    }

    /// §7.3 TLP_send_probe: one segment of new data if the peer's window allows,
    /// else the last segment sent, again; regardless of cwnd (as Linux).
    fn probe_plan_tlp(&self) -> Option<Plan> {
        if let Some(plan) = self.new_data_plan(u64::MAX) {
            return Some(plan);
        }
        if self.snd_nxt != self.snd_max || self.snd_max <= self.snd_una {
            return None;
        }
        // The last segment as it was sent (Linux `tcp_send_loss_probe` takes the tail
        // of the retransmission queue, its last MSS-sized piece), so the probe repeats
        // a whole segment rather than straddling two.
        let last = self.rack.as_ref().and_then(|r| r.segments().last().map(|s| s.start));
        let tail = self.snd_max - (self.smss as usize).min(self.snd_max - self.snd_una);
        let start = last.map_or(tail, |s| s.max(tail)).max(self.snd_una);
        Some(self.plan_data(start, self.snd_max))
    }

    /// Recovery for a lost MTU probe: the retransmissions of fast recovery without its
    /// window reduction (the window is restored when it ends).
    fn enter_recovery_keeping_cwnd(&mut self) {
        self.rack_enter_recovery();
        self.recover = self.snd_max;
        self.high_rxt = self.snd_una;
        self.retransmit_first = true;
        self.rtt_timing = None;
        self.recovery = if self.sack_ok {
            Recovery::Sack { recovery_point: self.snd_max }
        } else {
            Recovery::NewReno { recover: self.snd_max, partial_seen: false }
        };
    }

    /// RFC 8985 §7.1: fast recovery ends any TLP episode and cancels the probe; no
    /// earlier retransmission counts in the pipe (HighRxt restarts at SND.UNA).
    fn rack_enter_recovery(&mut self) {
        self.tlp_pending = false;
        if matches!(self.loss_at, Some((_, LossTimer::Probe))) {
            self.loss_at = None;
        }
        if let Some(rack) = self.rack.as_mut() {
            rack.tlp_end_seq = None;
            rack.on_enter_recovery();
        }
    }

    /// Fast retransmit: RFC 5681 §3.2 steps 2–3, RFC 6582 §3.2 step 2, RFC 6675 §5.
    fn enter_recovery(&mut self) {
        self.rack_enter_recovery();
        self.rtx_cut_at = self.now;
        self.stats.fast_retransmits += 1;
        self.probe_recovery_cwnd = None;
        self.hystart.on_loss(false);
        let flight = (self.snd_max - self.snd_una) as u64;
        self.cc.on_congestion_event(flight, self.smss);
        self.recover = self.snd_max;
        self.high_rxt = self.snd_una;
        self.retransmit_first = true;
        self.rtt_timing = None;
        if self.sack_ok {
            self.recovery = Recovery::Sack { recovery_point: self.snd_max };
            if self.cfg.prr {
                // RFC 6937 §3.1: at the start of recovery; RecoverFS = snd.nxt − snd.una.
                self.prr = Some(Prr { delivered: 0, out: 0, recover_fs: flight });
            }
        } else {
            self.cc.cwnd = self.cc.ssthresh + 3 * u64::from(self.smss);
            self.recovery = Recovery::NewReno { recover: self.snd_max, partial_seen: false };
        }
    }

    /// RFC 6937 §3.1 "on every ACK during recovery" (PRR-SSRB): the ACK delivered
    /// DeliveredData = Δsnd.una + ΔSACKd octets; while pipe > ssthresh the sender may
    /// have sent ⌈prr_delivered·ssthresh/RecoverFS⌉ in all, else it grows back to
    /// ssthresh by at most max(prr_delivered − prr_out, DeliveredData) + MSS; cwnd =
    /// pipe + sndcnt. sndcnt is rounded up to whole segments, as Linux's
    /// `tcp_cwnd_reduction` counts packets (so the fast retransmit is the first).
    fn prr_on_ack(&mut self, old_una: SeqNumber, sacked_before: u64) {
        if !matches!(self.recovery, Recovery::Sack { .. }) {
            self.prr = None;
            return;
        }
        let delivered = ((self.snd_una - old_una) as u64 + self.board.sacked_bytes()).saturating_sub(sacked_before);
        let thresh = self.cfg.dup_ack_threshold;
        let (pipe, _) = match &self.rack {
            Some(rack) => self.rack_pipe_and_next_lost(rack),
            None => self.board.pipe_and_next_lost(self.snd_una, self.snd_max, self.high_rxt, thresh, self.smss),
        };
        let (smss, ssthresh) = (u64::from(self.smss), self.cc.ssthresh);
        let Some(prr) = self.prr.as_mut() else { return };
        prr.delivered += delivered;
        let sndcnt = if pipe > ssthresh {
            // Proportional rate reduction.
            (prr.delivered.saturating_mul(ssthresh)).div_ceil(prr.recover_fs.max(1)).saturating_sub(prr.out)
        } else {
            // Slow start reduction bound.
            let limit = prr.delivered.saturating_sub(prr.out).max(delivered) + smss;
            (ssthresh - pipe).min(limit)
        };
        self.cc.cwnd = pipe + sndcnt.div_ceil(smss) * smss;
    }

    /// Accepts segment text at `seq` (already found acceptable).
    fn receive_data(&mut self, now: u64, seq: SeqNumber, payload: &[u8], push: bool) {
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
            } else if push && self.cfg.ack_on_push {
                // NetBSD tcp_input (TCP_REASS, header prediction): TH_PUSH → TF_ACKNOW.
                self.ack_now = true;
            } else {
                self.segs_unacked = self.segs_unacked.saturating_add(1);
                self.schedule_ack(now);
                if self.sink && self.cfg.window_update_on_read {
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
    /// already applied by `schedule_ack`.) Only while the window the peer holds is
    /// under two segments, as Linux's `__tcp_cleanup_rbuf` waits until the offered
    /// window has shrunk: a large buffer at the start, when the SYN's unscaled window
    /// is all the peer knows, does not turn the first segment's ACK into an immediate one.
    fn sink_window_update(&mut self) {
        let edge = self.rcv_nxt + self.rcv_free() as usize;
        let offered = if self.rcv_adv > self.rcv_nxt { (self.rcv_adv - self.rcv_nxt) as u64 } else { 0 };
        if edge > self.rcv_adv
            && 2 * (edge - self.rcv_adv) as u64 >= u64::from(self.cfg.recv_buffer)
            && offered < 2 * u64::from(self.cfg.mss)
        {
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
        let due = if self.cfg.delayed_ack_any_segment {
            self.segs_unacked >= self.cfg.delayed_ack_segments.max(1)
        } else {
            unacked >= u64::from(self.cfg.delayed_ack_segments.max(1)) * u64::from(self.rcv_mss)
        };
        if due {
            self.ack_now = true;
        } else if self.delack_at.is_none() {
            let d = delay.as_nanos().max(1);
            // 4.4BSD: the next tick of tcp_fasttimo's host-wide clock, else a full delay.
            self.delack_at = Some(if self.cfg.delayed_ack_clock { (now / d + 1) * d } else { now + d });
        }
    }

    fn insert_ooo(&mut self, seq: SeqNumber, data: &[u8]) {
        let (lo, hi) = (seq, seq + data.len());
        let (mut start, mut end) = (lo, hi);
        // The blocks this one touches are merged into it; their data is kept aside
        // only when there is data (a sink keeps none, so merging allocates nothing).
        let keep_data = !self.sink;
        let mut merged: Vec<OooBlock> = Vec::new();
        self.ooo.retain(|b| {
            if b.end < lo || b.start > hi {
                true
            } else {
                start = start.min(b.start);
                end = end.max(b.end);
                if keep_data {
                    merged.push(b.clone());
                }
                false
            }
        });
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
        self.dispatch_payloads(now, |repr, payload| match payload {
            Payload::Bytes(bytes) => emit(*repr, bytes),
            Payload::Zeros(n) => emit(*repr, &ZEROS[..n]),
        });
    }

    /// As [`dispatch`](Self::dispatch), handing a bulk sender's payload out as
    /// [`Payload::Zeros`] (no buffer to copy or checksum) and queued bytes as
    /// [`Payload::Bytes`].
    pub fn dispatch_payloads(&mut self, now: u64, mut emit: impl FnMut(&Repr, Payload<'_>)) {
        self.send_idle = false;
        self.now = now;
        if self.timewait_at.is_some_and(|t| t <= now) {
            self.enter_closed();
        }
        if let Some((at, kind)) = self.loss_at.filter(|&(t, _)| t <= now) {
            debug_assert!(at <= now);
            self.loss_at = None;
            self.on_loss_timer(now, kind);
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
            emit(&rst, Payload::Bytes(&[]));
            return;
        }
        let mut sent_new = false;
        while let Some(plan) = self.next_segment() {
            sent_new |= plan.seq >= self.snd_max && !plan.syn;
            self.send_plan(now, plan, &mut emit);
        }
        // §7.3: a probe that could not go (no window, nothing sent) is dropped; the
        // RTO is already armed again.
        self.tlp_pending = false;
        // RFC 8985 §7.2: (re)schedule the probe after sending new data.
        if sent_new && self.rack.is_some() && !matches!(self.loss_at, Some((_, LossTimer::Reorder))) {
            self.arm_loss_timer(now);
        }
        if self.ack_now && self.is_synchronized() {
            self.header(now, Control::None, self.snd_nxt, 0);
            self.stats.segments_sent += 1;
            emit(&self.out, Payload::Bytes(&[]));
        }
        // Persist timer (RFC 9293 §3.8.6.1): data waits behind a window too small to
        // use with nothing in flight, so no ACK will come to open it unless we probe.
        if self.rto_at.is_none()
            && self.snd_una == self.snd_max
            && self.has_unsent()
            && matches!(self.state, State::Established | State::CloseWait)
        {
            self.rto_at = Some(now + self.rtt.rto());
        }
        // The loop above stopped at `next_segment() == None`, and what ran since (the
        // probe flag, the loss timer, the ACK's header, the persist timer) is none of
        // its inputs (the debug assertion in `poll_at` checks it).
        self.send_idle = true;
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
        // Nothing sent unacknowledged, no data queued and no FIN: every rule below (a
        // probe, a retransmission, new data, the FIN) needs one of them. The receiver
        // of a one-way transfer asks this after every segment it takes.
        if self.snd_max == self.snd_una && self.tx_len == 0 && self.fin_seq.is_none() {
            debug_assert!(self.next_segment_established().is_none());
            return None;
        }
        self.next_segment_established()
    }

    /// [`next_segment`](Self::next_segment) in a state that may send data.
    fn next_segment_established(&self) -> Option<Plan> {
        let smss = self.smss as usize;
        if self.tlp_pending {
            if let Some(plan) = self.probe_plan_tlp() {
                return Some(plan);
            }
        }
        // Fast retransmit / partial ACK: the first unacknowledged segment,
        // regardless of cwnd (RFC 5681 §3.2 step 3, RFC 6675 §5 step 4.3).
        if self.retransmit_first && self.snd_max > self.snd_una {
            let mut end = self.snd_una + smss.min(self.snd_max - self.snd_una);
            if let Some(&(s, _)) = self.board.blocks().first() {
                end = end.min(s.max(self.snd_una + 1));
            }
            return Some(self.plan_data(self.snd_una, end));
        }
        if let Recovery::Sack { .. } = self.recovery {
            // RFC 6675 §5 step (C): while cwnd − pipe ≥ 1 SMSS, NextSeg().
            let thresh = self.cfg.dup_ack_threshold;
            let (pipe, lost) = match &self.rack {
                Some(rack) => self.rack_pipe_and_next_lost(rack),
                None => self.board.pipe_and_next_lost(self.snd_una, self.snd_max, self.high_rxt, thresh, self.smss),
            };
            if self.cc.cwnd < pipe + u64::from(self.smss) {
                return None;
            }
            if let Some((s, e)) = lost {
                return Some(self.plan_data(s, e));
            }
            if let Some(plan) = self.new_data_plan(u64::MAX) {
                return Some(plan);
            }
            let rule3 = self.board.next_rule3(self.snd_una, self.snd_max, self.high_rxt, self.smss);
            return rule3.map(|(s, e)| self.plan_data(s, e));
        }
        if let Some(plan) = self.probe_plan() {
            return Some(plan);
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

    /// RFC 6675 §4 pipe and NextSeg() rule 1 from RACK's per-segment record: a segment
    /// is lost when RACK marked it or IsLost() holds (Linux 4.4–4.17 ran both), and a
    /// retransmission is in the pipe until RACK finds it lost too, when the segment
    /// becomes the next to send again (RFC 8985 §2.2's lost retransmissions).
    fn rack_pipe_and_next_lost(&self, rack: &Rack) -> (u64, Option<(SeqNumber, SeqNumber)>) {
        let thresh = self.cfg.dup_ack_threshold;
        let mut pipe = 0u64;
        let mut next = None;
        for seg in rack.segments().filter(|s| !s.sacked) {
            let len = (seg.end - seg.start) as u64;
            let lost = seg.lost || self.board.is_lost(seg.start, thresh, self.smss);
            if !lost {
                pipe += len;
            }
            if seg.rtx_in_flight {
                pipe += len;
            } else if lost && next.is_none() {
                next = Some((seg.start, seg.end.min(seg.start + self.smss as usize)));
            }
        }
        (pipe, next)
    }

    /// Bytes mode bounds what is in flight by the queue itself; bulk by the buffer,
    /// less what the writer has not filled again.
    fn send_buffer_limit(&self) -> u64 {
        if self.bulk.is_some() {
            u64::from(self.cfg.send_buffer).saturating_sub(self.unwritten)
        } else {
            u64::MAX
        }
    }

    /// New (or, after a timeout, resent) data at `snd_nxt` within `room` octets of
    /// congestion window and the peer's window.
    #[inline(always)]
    fn new_data_plan(&self, room: u64) -> Option<Plan> {
        // Full-sized is what fits beside the options this segment carries.
        let smss = u64::from(self.current_mss());
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
        if peer_room == 0 {
            // Zero-window probe (RFC 9293 §3.8.6.1): one octet beyond the window, when
            // the persist timer says so.
            return (self.probe_pending && self.snd_wnd == 0).then(|| self.plan_range(self.snd_nxt, self.snd_nxt + 1));
        }
        let len = smss.min(unsent).min(room).min(peer_room);
        if len == 0 {
            return None;
        }
        if len < smss {
            let flight = self.snd_nxt > self.snd_una;
            if len < unsent {
                if room < peer_room {
                    // Cut by the congestion window (or the fixed window, or the send
                    // buffer): the rest goes when an ACK opens it, as whole segments.
                    return None;
                }
                // Cut by the peer's window: sender SWS avoidance (RFC 9293
                // §3.8.6.2.1): send only (3) at least Fs = 1/2 of the largest window
                // the peer offered, or (4) when the override (persist) timer expired.
                if 2 * len < self.max_snd_wnd && !self.probe_pending {
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

    fn send_plan(&mut self, now: u64, plan: Plan, emit: &mut impl FnMut(&Repr, Payload<'_>)) {
        let end = plan.seq + (plan.len + usize::from(plan.syn) + usize::from(plan.fin));
        let retransmit = plan.seq < self.snd_max;
        if !plan.syn {
            let in_recovery = self.recovery != Recovery::None;
            if let Some(rack) = self.rack.as_mut() {
                rack.on_send(plan.seq, end, self.snd_max, now, in_recovery);
            }
        }
        if self.tlp_pending {
            // RFC 8985 §7.3: the probe; TLP.end_seq is SND.NXT after it.
            self.tlp_pending = false;
            self.stats.tlp_probes += 1;
            if let Some(rack) = self.rack.as_mut() {
                rack.tlp_end_seq = Some(self.snd_max.max(end));
                rack.tlp_is_retrans = retransmit;
            }
        }
        let offset = if plan.len > 0 { plan.seq - self.tx_base() } else { 0 };
        let control = if plan.syn {
            Control::Syn
        } else if plan.fin {
            Control::Fin
        } else if plan.len > 0 && self.bulk.is_none() && (offset + plan.len) as u64 == self.tx_len {
            // Linux marks the segment that empties the send queue.
            Control::Psh
        } else if plan.len > 0
            && self.bulk.is_some()
            && self.cfg.send_low_water.is_some()
            && (offset + plan.len) as u64 == self.written_octets()
        {
            // 4.4BSD tcp_output: "If we're sending everything we've got, set PUSH."
            Control::Psh
        } else {
            Control::None
        };
        self.header(now, control, plan.seq, plan.len);
        if plan.syn {
            self.syn_options(now);
        }
        self.stats.segments_sent += 1;
        self.stats.bytes_sent += plan.len as u64;
        if !retransmit && plan.len > self.smss as usize {
            self.mtup.probe = Some((self.mss_to_mtu(plan.len as u32), plan.seq, end));
            self.stats.mtu_probes += 1;
        }
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
        if let Some(prr) = self.prr.as_mut() {
            // RFC 6937 §3.1: prr_out += (data sent).
            prr.out += plan.len as u64;
        }
        if plan.seq == self.snd_nxt || plan.syn {
            self.snd_nxt = end;
        }
        self.snd_max = self.snd_max.max(end);
        if plan.len > 0 {
            self.probe_pending = false;
        }
        if self.rto_at.is_none() {
            // RFC 6298 §5.1.
            self.rto_at = Some(now + self.rtt.rto());
        }
        let payload = if plan.len == 0 {
            Payload::Bytes(&[])
        } else if self.bulk.is_some() {
            Payload::Zeros(plan.len)
        } else {
            self.scratch.clear();
            self.scratch.extend(self.tx.range(offset..offset + plan.len));
            Payload::Bytes(&self.scratch)
        };
        emit(&self.out, payload);
    }

    /// Fills `out` with a header from this socket: ACK (except on our first SYN),
    /// window, timestamps, SACK blocks; clears the pending ACK.
    #[inline(always)]
    fn header(&mut self, now: u64, control: Control, seq: SeqNumber, len: usize) {
        let syn = control == Control::Syn;
        let window = self.advertise_window(syn);
        let ack_number = if self.state != State::SynSent {
            self.last_ack_sent = self.rcv_nxt;
            self.segs_unacked = 0;
            self.ack_now = false;
            self.delack_at = None;
            Some(self.rcv_nxt)
        } else {
            None
        };
        let timestamp = (self.ts_ok || (syn && self.cfg.timestamps && self.state == State::SynSent))
            .then(|| (Self::ts_clock(now), self.ts_recent));
        let repr = &mut self.out;
        repr.src_port = self.local_port;
        repr.dst_port = self.remote_port;
        repr.control = control;
        repr.seq_number = seq;
        repr.ack_number = ack_number;
        repr.window_len = window;
        repr.window_scale = None;
        repr.max_seg_size = None;
        repr.sack_permitted = false;
        repr.timestamp = timestamp;
        repr.payload_len = len;
        repr.sack_ranges = [None; 3];
        if self.sack_ok && !syn && !self.ooo.is_empty() {
            // RFC 2018 §4: the block with the newest segment first, then the others
            // newest first.
            // The three most recently touched, as a stable sort by `touched` (newest
            // first) would give them, without allocating for the sort.
            let mut newest: [Option<&OooBlock>; 3] = [None; 3];
            for b in &self.ooo {
                if let Some(i) = newest.iter().position(|n| n.is_none_or(|n| b.touched > n.touched)) {
                    newest[i..].rotate_right(1);
                    newest[i] = Some(b);
                }
            }
            for (slot, b) in repr.sack_ranges.iter_mut().zip(newest.into_iter().flatten()) {
                *slot = Some((b.start.as_u32(), b.end.as_u32()));
            }
        }
    }

    /// SYN options: MSS always; WS, SACK-Permitted, TS as configured, and on a
    /// SYN-ACK only those the peer offered (RFC 7323 §1.3, RFC 2018 §2).
    fn syn_options(&mut self, now: u64) {
        let repr = &mut self.out;
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
    #[inline(always)]
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
        // Also from a closed window: it stays closed until it can open by the
        // threshold (RFC 9293 §3.8.6.2.2), else it would open by a few octets.
        if edge > self.rcv_adv && edge - self.rcv_adv < threshold {
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
        if self.snd_wnd == 0 || (self.snd_max == self.snd_una && self.has_unsent()) {
            // Persist (RFC 9293 §3.8.6.1): probe the closed window, back off, leave
            // the congestion window alone. With a window open but too small to use
            // (SWS avoidance holding) and nothing in flight, this is §3.8.6.2.1's
            // override timer: send what fits.
            self.rtt.back_off();
            self.probe_pending = true;
            self.snd_nxt = self.snd_una;
            return;
        }
        if self.snd_max == self.snd_una {
            return;
        }
        self.stats.timeouts += 1;
        // Linux `tcp_write_timeout`: the head segment sent first at `retrans_stamp`
        // (taken as one RTO before the first timeout) and still unacknowledged after
        // the model time of `tcp_retries1` backed-off timeouts from `TCP_RTO_MIN`,
        // ((2 << 3) − 1) × 200 ms = 3 s: a black hole is suspected.
        let first_sent = *self.retrans_stamp.get_or_insert(self.now.saturating_sub(self.rtt.rto()));
        if self.now.saturating_sub(first_sent) >= ((2u64 << RETRIES1) - 1) * RTO_BASE_NS {
            self.black_hole_detected();
        }
        if let Some((mtu, _, _)) = self.mtup.probe.take() {
            // A probe lost to a timeout counts as failed (RFC 4821 §7.6.2).
            self.mtup.search_high = self.mtup.search_high.min(mtu - 1);
            self.stats.mtu_probes_failed += 1;
            self.sync_mss(self.pmtu);
        }
        self.probe_recovery_cwnd = None;
        let flight = (self.snd_max - self.snd_una) as u64;
        self.cc.on_rto(flight, self.smss);
        self.hystart.on_loss(true);
        self.rtt.back_off();
        self.snd_nxt = self.snd_una;
        self.high_rxt = self.snd_una;
        self.recover = self.snd_max;
        self.recovery = Recovery::None;
        self.prr = None;
        self.board.clear();
        self.dup_acks = 0;
        self.retransmit_first = false;
        self.hold_timer = false;
        self.rtt_timing = None;
        self.forget_rack_marks();
    }

    /// After a timeout or an MTU change (go-back-N): RFC 8985 §6.3, every segment is
    /// lost and goes again; the loss timer and any probe are dropped (§7.1).
    fn forget_rack_marks(&mut self) {
        self.loss_at = None;
        self.tlp_pending = false;
        if let Some(rack) = self.rack.as_mut() {
            rack.on_rto();
        }
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
        self.prr = None;
        self.rto_at = None;
        self.delack_at = None;
        self.segs_unacked = 0;
        self.timewait_at = None;
        self.rtt_timing = None;
        self.rack = None;
        self.loss_at = None;
        self.tlp_pending = false;
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
        // RACK needs SACK (RFC 8985 §6: it infers from SACKed segments; Linux runs it
        // only on SACK connections, `tcp_is_sack`).
        self.rack = (self.cfg.rack && self.sack_ok).then(Rack::new);
        self.ts_ok = self.cfg.timestamps && repr.timestamp.is_some();
        if let (true, Some((tsval, _))) = (self.ts_ok, repr.timestamp) {
            self.ts_recent = tsval;
        }
        self.mss_clamp = u32::from(self.cfg.mss.min(peer_mss));
        self.mtup_init();
        self.smss = self.mss_clamp.saturating_sub(self.options_len()).max(1);
        if self.cfg.pmtu_discovery || self.mtup.enabled {
            let pmtu = self.pmtu;
            self.sync_mss(pmtu);
        }
        self.rcv_mss = u32::from(DEFAULT_MSS).min(self.smss);
        self.cc = Congestion::new(self.cfg.congestion_control, self.smss, self.cfg.initial_window);
        self.cc.set_growth(self.cfg.cwnd_growth, self.cfg.slow_start_limit);
        self.cc.set_cubic_alpha(self.cfg.cubic_alpha);
        self.hystart = HyStart::new(self.cfg.hystart);
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
            self.take_rtt_sample(r);
        }
        self.rto_at = None;
    }

    /// One RTT measurement: into the RFC 6298 estimator and the statistics.
    fn take_rtt_sample(&mut self, r: u64) {
        self.rtt.sample(r);
        let st = &mut self.stats;
        st.rtt_samples += 1;
        st.rtt_sum_ns += r;
        st.rtt_min_ns = Some(st.rtt_min_ns.map_or(r, |m| m.min(r)));
        st.rtt_max_ns = st.rtt_max_ns.max(r);
    }

    fn request_fin(&mut self) {
        if self.fin_seq.is_none() {
            self.fin_seq = Some(self.tx_base() + self.tx_len.min(1 << 30) as usize);
        }
    }

    fn fin_acked(&self) -> bool {
        self.fin_seq.is_some_and(|f| self.snd_una > f)
    }

    /// The octets queued to send from the first unacknowledged one on (bytes mode), with
    /// that octet's sequence number; and the octets received in order and not yet read,
    /// with the sequence number they end at (RCV.NXT). For conservation's census of a
    /// stream that carries packets (OpenVPN over TCP).
    pub fn stream_buffers(&self) -> ((SeqNumber, &VecDeque<u8>), (SeqNumber, &VecDeque<u8>)) {
        ((self.tx_base(), &self.tx), (self.rcv_nxt, &self.rx))
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

    /// A bulk writer with a low water mark (4.4BSD `sosend`): `acked` octets left the
    /// send buffer; it writes again, filling all the space, once the space reaches the
    /// mark (`so_snd.sb_lowat`), and never past the end of a sized transfer.
    fn writer_refill(&mut self, acked: u64) {
        let Some(lowat) = self.cfg.send_low_water else { return };
        if self.bulk.is_none() {
            return;
        }
        self.unwritten += acked;
        self.writer_run(u64::from(lowat));
    }

    /// 4.4BSD `sosend` for a stream socket, one write call of `write_size` octets after
    /// another: it sleeps while the space is below both the rest of the call and the
    /// low water mark; awake, it writes as much of the call as the space takes.
    fn writer_run(&mut self, lowat: u64) {
        let call = if self.cfg.write_size == 0 { u64::MAX } else { u64::from(self.cfg.write_size) };
        loop {
            // What the application still has to write, past what the buffer holds.
            let left = self.tx_len.saturating_sub(self.written_octets());
            if left == 0 || self.unwritten == 0 {
                return;
            }
            if self.call_left == 0 {
                self.call_left = call.min(left);
            }
            let r = self.call_left.min(left);
            if self.unwritten < r && self.unwritten < lowat {
                return;
            }
            let w = self.unwritten.min(r);
            self.unwritten -= w;
            self.call_left = r - w;
        }
    }

    /// Octets the bulk writer has put in the send buffer, counted from its first
    /// octet (`tx_base`): the buffer less the space not yet written, at most all.
    fn written_octets(&self) -> u64 {
        (u64::from(self.cfg.send_buffer).saturating_sub(self.unwritten)).min(self.tx_len)
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
        self.loss_at = None;
        self.delack_at = None;
        self.timewait_at = None;
        self.ack_now = false;
    }

    fn enter_time_wait(&mut self, now: u64) {
        self.state = State::TimeWait;
        self.rto_at = None;
        self.loss_at = None;
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
