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

mod input;

mod mss;

mod output;

mod receive;

mod recovery;
mod state;

use std::collections::VecDeque;

use wire::tcp::{Control, Payload, Repr, SeqNumber, DEFAULT_MSS, MAX_OPTIONS_LEN, MAX_WINDOW_SHIFT};

use super::config::TcpConfig;

use super::congestion::Congestion;

use super::hystart::{AckInfo, HyStart, Verdict};

use super::rack::Rack;

use super::rtt::RttEstimator;

use super::sack::Scoreboard;

/// Octets of one direction of the stream held by the socket, and the sequence number that
/// locates them (see [`TcpSocket::stream_buffers`]).
pub type StreamBuffer<'a> = (SeqNumber, &'a VecDeque<u8>);

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

/// The RTT estimator and RTO bounds of `cfg` (RFC 6298).
fn rtt_estimator(cfg: &TcpConfig) -> RttEstimator {
    RttEstimator::new(
        cfg.initial_rto.as_nanos(),
        cfg.min_rto.as_nanos(),
        cfg.max_rto.as_nanos(),
        cfg.rto_backoff_cap.map(|d| d.as_nanos()),
        cfg.clock_granularity.as_nanos(),
    )
}

/// The congestion control of `cfg` for an SMSS of `smss` octets.
fn congestion(cfg: &TcpConfig, smss: u32) -> Congestion {
    let mut cc = Congestion::new(cfg.congestion_control, smss, cfg.initial_window);
    cc.set_growth(cfg.cwnd_growth, cfg.slow_start_limit);
    cc.set_cubic_alpha(cfg.cubic_alpha);
    cc
}

impl TcpSocket {
    /// A closed socket with this configuration.
    pub fn new(cfg: TcpConfig) -> TcpSocket {
        let rtt = rtt_estimator(&cfg);
        let smss = u32::from(cfg.mss);
        let cc = congestion(&cfg, smss);
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

    // ----- RACK-TLP (RFC 8985) -----------------------------------------------------

    // ----- output ------------------------------------------------------------------

    // ----- helpers -----------------------------------------------------------------

    /// The timestamp clock: microseconds, plus one so TSval is never the "no echo"
    /// zero at the start of a run.
    fn ts_clock(now: u64) -> u32 {
        ((now / 1000) as u32).wrapping_add(1)
    }
}
