//! The simulated network: nodes, links and traffic, driven by the engine.
//!
//! Events are small plain values; frames in flight live in a slab and events carry their
//! slot. Every model is sans-IO (the IP stack, bridges, the 802.11 medium, the CPU): the
//! world is the only place that turns their "wake me at" into engine timers.

use std::collections::{BTreeMap, VecDeque};
use std::net::Ipv4Addr;

use wire::{arp, icmpv4, ipv4, tcp, udp, IpProtocol};

use wire::ethernet::{self, Address as Mac};

use crate::app::{Probe, Source};
use crate::atm::{AtmEvent, AtmNet, AtmOut};
use crate::capture::{CaptureSink, Capturing};

#[path = "atm/world_glue.rs"]
mod atm_glue;
#[path = "world_census.rs"]
mod census;
use crate::config::{ConfigError, FlowConfig, LinkConfig, SimConfig};
use crate::config::{Impairment, LossConfig};
use crate::conservation::{FlowLedger, LineTally};
use crate::engine::{Engine, EngineError, EventId, Reservation};
use crate::impair::{Bernoulli, GilbertElliott, LossModel, Policer, Shaper};
use crate::link::EthernetLink;
use crate::node::{Effects, Job, Node};
use crate::results::{self, Results};
use crate::rng::RunSeed;
use crate::serial::{CompressionRatio, Framing, SerialConfig, SerialError, SerialLine};
use crate::stats::{Arrival, FlowStats, Histogram};
use crate::tcp::report::{IntervalRecorder, TraceColumns};
use crate::tcp::{TcpConfig, TcpSocket};
use crate::time::Duration;
use crate::time::SimTime;
use crate::upstream::{Tx, Upstream};
use crate::wifi::adapter::{Adapter, CipherCost, DropReason, ForeignSource, LinkCipher, Role as WifiRole};
use crate::wifi::bss::{AirFrame, BeaconParams, Bss, BssEvent, BssParams, FrameKind};

/// The engine's events.
#[derive(Debug, Clone, Copy)]
pub enum Event {
    /// The serializer of `link` at end `from` finished a frame.
    EthTxDone { link: u32, from: u8 },
    /// The first frame in flight on `link` from end `from` reached the far end.
    EthArrive { link: u32, from: u8 },
    /// The CPU of `node` finished its job.
    CpuDone { node: u32 },
    /// The first frame in the receive path of `node` (`CpuConfig::rx_latency`) reached its CPU.
    RxReady { node: u32 },
    /// The IP stack of `node` asked to be woken.
    IpTimer { node: u32 },
    /// Traffic source `source` sends its next datagram.
    Send { source: u32 },
    /// The 802.11 medium of `bss` asked to be woken.
    BssTimer { bss: u32 },
    /// A TCP socket (`side` 0: the sender, 1: the receiver) of flow `flow` asked to be woken.
    TcpTimer { flow: u32, side: u8 },
    /// The ATM network's own events (cells, signalling).
    Atm(AtmEvent),
    /// Adaptive upstream `index` (seed 004's router) asked to be woken.
    Upstream { index: u32 },
    /// The first frame in flight on the air of `bss` (its propagation delay) reached its receiver.
    WifiArrive { bss: u32 },
}

/// A TCP flow: the sender's and the receiver's sockets and where they live.
struct TcpFlow {
    id: u32,
    nodes: [u32; 2],
    /// Each side's own address and port.
    addrs: [Ipv4Addr; 2],
    ports: [u16; 2],
    /// The far end as each side sees it: the sender's is the receiver's address and
    /// port; the receiver's is the sender as its SYN arrived, which a NAT on the way has
    /// rewritten to its outside address and mapped port (RFC 3022 §2.2): the listening
    /// socket answers that endpoint, as a real server's accepted socket does.
    peers: [(Ipv4Addr, u16); 2],
    sockets: [TcpSocket; 2],
    timers: [Option<(u64, EventId)>; 2],
    /// Each side's last path MTU answer from its node's stack (see `tcp_dispatch`).
    path_mtu: [crate::ip::PathMtuMemo; 2],
    bytes: Option<u64>,
    start_ns: u64,
    stop_ns: u64,
    first_rx_ns: Option<u64>,
    /// Data octets the receiver's first in-order delivery handed over (at `first_rx_ns`).
    first_rx_bytes: u64,
    last_rx_ns: Option<u64>,
    /// When the receiver had every byte of a sized transfer.
    completed_ns: Option<u64>,
    /// When the receiver last got new bytes (the start before any), and the longest
    /// time it went without inside the measurement window: a PMTU black hole shows as a
    /// stall.
    last_progress_ns: u64,
    longest_stall_ns: u64,
    /// How long the receiver had gone without a new byte when the window ended (zero
    /// for a sized transfer that finished): a stall at the end.
    stall_at_end_ns: u64,
    /// The flow's counters at the end of its measurement window (iperf3's test
    /// interval): a timed test's stop, a sized transfer's last byte at the receiver (or
    /// its time limit). What arrives later is the drain, reported apart.
    window: Option<crate::tcp::report::IntervalRecord>,
    /// When the sender had every byte of a sized transfer acknowledged.
    acked_ns: Option<u64>,
    /// When the sender sent its first data octet.
    first_tx_ns: Option<u64>,
    intervals: Option<IntervalRecorder>,
    /// Segments either socket handed to its stack, and segments that reached the
    /// other socket (conservation, see `crate::conservation`).
    segments_sent: u64,
    segments_arrived: u64,
}

impl TcpFlow {
    /// Before an event of this flow at `now`: the interval boundaries it passed. A
    /// timed test's reports end at its stop (`finish` adds the last): the events of the
    /// drain after it (retransmissions, their ACKs) add no interval.
    fn tick(&mut self, now: u64) {
        let now = if self.bytes.is_none() { now.min(self.stop_ns) } else { now };
        if let Some(r) = self.intervals.as_mut() {
            r.advance(now, &self.sockets[0], &self.sockets[1]);
        }
    }

    /// The measurement window ends at `end`, with the sockets as they are now: its
    /// totals, the last interval, and the stall at its end, once.
    fn close_window(&mut self, end: u64) {
        if self.window.is_some() {
            return;
        }
        if let Some(r) = self.intervals.as_mut() {
            r.close(end, &self.sockets[0], &self.sockets[1]);
        }
        // A transfer that has not finished is stalled from its last new byte to the end.
        self.stall_at_end_ns = if self.completed_ns.is_some() { 0 } else { end.saturating_sub(self.last_progress_ns) };
        self.longest_stall_ns = self.longest_stall_ns.max(self.stall_at_end_ns);
        self.window = Some(crate::tcp::report::IntervalRecord::now(end, &self.sockets[0], &self.sockets[1]));
    }
}

/// A UDP echo flow (RFC 862): what the echo server counted and the round trips.
struct EchoFlow {
    /// The sending node and its (client) port.
    from: u32,
    src_port: u16,
    /// The echo server's port.
    dst_port: u16,
    /// Datagrams that reached the echo server, counted there.
    forward: FlowStats,
    rtt: Histogram,
}

/// Where a port is attached.
#[derive(Debug, Clone, Copy)]
enum Attachment {
    Ethernet {
        link: u32,
        end: u8,
    },
    /// Member `member` of BSS `bss` (the AP is member 0 when there is one).
    Wifi {
        bss: u32,
        member: u16,
    },
    /// A host's ATM port: endpoint `ep` of the ATM network.
    Atm {
        ep: u32,
    },
    /// A port of an ATM switch: cells only, the node's stack never uses it.
    AtmSwitch,
    Unattached,
}

/// A point-to-point link of the world: Ethernet or a serial line.
enum LineKind {
    Ethernet(EthernetLink),
    /// A serial line carries IP datagrams: the world strips the Ethernet header the
    /// node's stack wrote and puts one back at the far end.
    Serial {
        name: String,
        ends: [(u32, u16); 2],
        line: SerialLine,
    },
}

/// What happens to one direction's frames besides being carried.
struct DirectionImpairment {
    loss: LossModel,
    loss_text: String,
    rng: crate::rng::RandomStream,
    shaper: Option<Shaper>,
    /// Bytes that may wait for the shaper's tokens (`tc tbf limit`), if limited.
    shaper_queue_bytes: Option<u64>,
    /// The next frame has been granted its shaper departure at this time.
    shaped_until: Option<u64>,
    policer: Option<Policer>,
    lost: u64,
}

struct Line {
    kind: LineKind,
    impair: [DirectionImpairment; 2],
    /// Per direction, the frames sent and not yet arrived (serializing or propagating)
    /// in the order they arrive, each with its arrival's place in the event order. The delay
    /// is constant and a direction sends one frame at a time, so frames arrive in the
    /// order they were sent: only the first has its `EthArrive` in the engine's heap,
    /// and each arrival schedules the next one's in the place it reserved (see
    /// `engine`'s Reservations), so the events run exactly as if each frame had its own.
    in_flight: [VecDeque<(Reservation, Vec<u8>)>; 2],
    /// Per direction, whether the end of a frame's sending may be left out of the
    /// engine while nothing waits behind it: an `EthTxDone` with an empty queue only
    /// frees the serializer, unless a shaper holds the next frame or the sending node
    /// has a saturating source to refill (see `World::lazy_tx_done`).
    lazy_tx_done: [bool; 2],
    /// Per direction, the place of the `EthTxDone` of the frame being sent when it was
    /// left out of the engine (see `World::settle_tx_done`).
    tx_done: [Option<Reservation>; 2],
    /// Per direction, frames offered, delivered and dropped (see `crate::conservation`).
    tally: [LineTally; 2],
}

impl Line {
    fn name(&self) -> &str {
        match &self.kind {
            LineKind::Ethernet(l) => &l.name,
            LineKind::Serial { name, .. } => name,
        }
    }

    #[inline]
    fn ends(&self) -> [(u32, u16); 2] {
        match &self.kind {
            LineKind::Ethernet(l) => l.ends,
            LineKind::Serial { ends, .. } => *ends,
        }
    }

    #[inline]
    fn delay_ns(&self) -> u64 {
        match &self.kind {
            LineKind::Ethernet(l) => l.delay_ns,
            LineKind::Serial { line, .. } => line.config().delay_ns,
        }
    }

    /// The bytes of `frame` this line carries and meters: the Ethernet frame without
    /// FCS, or a serial line's IP datagram.
    #[inline]
    fn carried_len(&self, frame: &[u8]) -> usize {
        match &self.kind {
            LineKind::Ethernet(_) => frame.len(),
            LineKind::Serial { .. } => frame.len().saturating_sub(ethernet::HEADER_LEN),
        }
    }

    #[inline]
    fn queued_bytes(&self, from: usize) -> usize {
        match &self.kind {
            LineKind::Ethernet(l) => l.queued_bytes(from),
            LineKind::Serial { line, .. } => line.queued_bytes(from),
        }
    }

    /// Why the policer or the shaper's queue limit refuses `frame` at end `from`, if it does.
    #[inline]
    fn meter(&mut self, now: u64, from: usize, frame: &[u8]) -> Option<String> {
        // A direction with no policer and no shaper queue limit (most) refuses nothing:
        // answered before measuring the frame and the backlog.
        let impair = &self.impair[from];
        if impair.policer.is_none() && (impair.shaper.is_none() || impair.shaper_queue_bytes.is_none()) {
            return None;
        }
        let len = self.carried_len(frame);
        let backlog = self.queued_bytes(from);
        let impair = &mut self.impair[from];
        if let Some(policer) = impair.policer.as_mut() {
            if !policer.conform(SimTime::from_nanos(now), len) {
                return Some(format!(
                    "policed: over {} bit/s with a {}-byte bucket",
                    policer.rate_bps(),
                    policer.burst_bytes()
                ));
            }
        }
        match impair.shaper_queue_bytes {
            Some(limit) if impair.shaper.is_some() && (backlog + len) as u64 > limit => {
                Some(format!("shaper queue full ({limit} bytes waiting for tokens)"))
            }
            _ => None,
        }
    }

    #[inline]
    fn enqueue(&mut self, from: usize, frame: Vec<u8>) -> Result<(), Vec<u8>> {
        match &mut self.kind {
            LineKind::Ethernet(l) => l.enqueue(from, frame),
            LineKind::Serial { line, .. } => {
                let packet = frame.get(ethernet::HEADER_LEN..).unwrap_or_default().to_vec();
                line.enqueue(from, packet).map_err(|_| frame)
            }
        }
    }

    #[inline]
    fn peek_len(&self, from: usize) -> Option<usize> {
        match &self.kind {
            LineKind::Ethernet(l) => l.peek_len(from),
            LineKind::Serial { line, .. } => line.peek_len(from),
        }
    }

    /// The next frame to send at `from`, the time the sender stays busy with it, and
    /// the time until its last bit is out (Ethernet's inter-frame gap comes after).
    #[inline(always)]
    fn start_next(&mut self, from: usize) -> Option<(Vec<u8>, u64, u64)> {
        match &mut self.kind {
            LineKind::Ethernet(l) => {
                let rate = l.rate_bps;
                l.start_next(from).map(|(frame, busy)| {
                    let last_bit = crate::link::ethernet_last_bit_ns(frame.len(), rate);
                    (frame, busy, last_bit)
                })
            }
            LineKind::Serial { line, .. } => line.start_next(from).map(|(frame, busy)| (frame, busy, busy)),
        }
    }

    #[inline]
    fn finish(&mut self, from: usize) {
        match &mut self.kind {
            LineKind::Ethernet(l) => l.finish(from),
            LineKind::Serial { line, .. } => line.finish(from),
        }
    }

    fn backlog(&self, from: usize) -> usize {
        match &self.kind {
            LineKind::Ethernet(l) => l.backlog(from),
            LineKind::Serial { line, .. } => line.backlog(from),
        }
    }

    /// What crossed the line from end `from`, as the receiving node's stack takes it
    /// (a CSLIP packet decompressed), or why nothing is delivered.
    fn delivered(&mut self, from: usize, frame: Vec<u8>) -> Result<Vec<u8>, &'static str> {
        match &mut self.kind {
            LineKind::Ethernet(_) => Ok(frame),
            LineKind::Serial { line, .. } => {
                let datagram = line.arrive(from, frame)?;
                Ok(crate::ip::ethernet_frame(Mac::default(), Mac::BROADCAST, ethernet::EtherType::Ipv4, &datagram))
            }
        }
    }

    /// What end `from` sent was lost on the line.
    fn lost(&mut self, from: usize) {
        if let LineKind::Serial { line, .. } = &mut self.kind {
            line.lost(from);
        }
    }
}

fn direction_impairment(
    config: &Impairment,
    seed: u64,
    link: usize,
    direction: usize,
    field: &str,
) -> Result<DirectionImpairment, RunError> {
    let fail = |message: String| RunError::Config(ConfigError { field: field.to_string(), message });
    let (loss, loss_text) = match config.loss {
        None => (LossModel::None, String::new()),
        Some(LossConfig::Bernoulli { p }) => (
            LossModel::Bernoulli(Bernoulli::new(p).map_err(|e| fail(e.to_string()))?),
            format!("Bernoulli loss p = {p}"),
        ),
        Some(LossConfig::GilbertElliott { p, r, k, h }) => (
            LossModel::GilbertElliott(GilbertElliott::new(p, r, k, h).map_err(|e| fail(e.to_string()))?),
            format!("Gilbert-Elliott loss p = {p}, r = {r}, k = {k}, h = {h}"),
        ),
    };
    let (mut shaper, mut policer, mut shaper_queue_bytes) = (None, None, None);
    if let Some(s) = config.shaper {
        if s.police {
            if s.queue_bytes.is_some() {
                return Err(fail("a policer holds no queue (queue_bytes is for shaping)".into()));
            }
            policer = Some(Policer::new(s.rate_bps, s.burst_bytes).map_err(|e| fail(e.to_string()))?);
        } else {
            shaper = Some(Shaper::new(s.rate_bps, s.burst_bytes).map_err(|e| fail(e.to_string()))?);
            shaper_queue_bytes = s.queue_bytes;
        }
    }
    let purpose = if direction == 0 { "loss a->b" } else { "loss b->a" };
    Ok(DirectionImpairment {
        loss,
        loss_text,
        rng: RunSeed(seed).stream(link as u64, purpose),
        shaper,
        shaper_queue_bytes,
        shaped_until: None,
        policer,
        lost: 0,
    })
}

/// An 802.11 BSS in the world: the medium, and each member's port and adapter.
struct BssState {
    name: String,
    /// The 2.4 GHz channel, if the configuration gives it (radiotap Channel).
    channel: Option<u8>,
    bss: Bss,
    members: Vec<(u32, u16)>,
    adapters: Vec<Adapter>,
    macs: Vec<Mac>,
    has_ap: bool,
    wds: bool,
    /// MACs behind WDS stations, learned from 4-address uplink frames (their SA).
    behind: BTreeMap<Mac, usize>,
    timer: Option<(u64, EventId)>,
    /// The AP relays frames between its stations (`WifiConfig::relay`).
    relay: bool,
    /// Propagation delay of the air, ns, and the frames on their way: (due, to, from, MPDU).
    delay_ns: u64,
    in_flight: VecDeque<(u64, usize, usize, Vec<u8>)>,
}

impl BssState {
    /// Whether `frame`, received by station `to`, is a group frame a host behind that WDS
    /// station sent, relayed back by the AP.
    fn echoes_behind(&self, to: usize, frame: &[u8]) -> bool {
        if !(self.wds && self.has_ap && to != 0) {
            return false;
        }
        let Ok(eth) = ethernet::Frame::new_checked(frame) else { return false };
        eth.dst_addr().is_multicast() && self.behind.get(&eth.src_addr()) == Some(&to)
    }

    /// Whether the AP relays `frame` (an Ethernet frame it received from station `from`)
    /// back into the BSS, and whether it also goes up to the AP's own node: a group frame
    /// does both, a frame for another member of the BSS (or for a host behind a WDS
    /// station) is only relayed, anything else only goes up.
    fn relay_within_bss(&self, from: usize, frame: &[u8]) -> (bool, bool) {
        if !self.relay {
            return (false, true);
        }
        let Ok(eth) = ethernet::Frame::new_checked(frame) else { return (false, true) };
        let dst = eth.dst_addr();
        if dst.is_multicast() {
            return (true, true);
        }
        let member =
            self.macs.iter().position(|m| *m == dst).or_else(|| self.behind.get(&dst).copied().filter(|_| self.wds));
        match member {
            Some(i) if i != 0 && i != from => (true, false),
            _ => (false, true),
        }
    }
}

/// A drop, kept for `qoslab reach` and reports.
#[derive(Debug, Clone)]
pub struct DropRecord {
    pub time_ns: u64,
    pub node: u32,
    pub port: Option<u16>,
    pub reason: String,
    pub flow: Option<u32>,
    pub summary: String,
}

/// At most this many drops are kept with their details; all are counted.
const DROP_LOG_LIMIT: usize = 10_000;
/// How often a TCP application waiting for its PPP link to come up looks again.
const LINK_UP_POLL_NS: u64 = 10_000_000;
/// A saturating source keeps this many frames waiting at its node.
const SATURATION_BACKLOG: usize = 2;

/// Why a run stopped early.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunError {
    Config(ConfigError),
    Budget(String),
    /// A capture's sink could not write (a full disk): the run stops.
    Capture(String),
}

impl std::fmt::Display for RunError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RunError::Config(e) => write!(f, "configuration: {e}"),
            RunError::Budget(m) => write!(f, "{m}"),
            RunError::Capture(m) => write!(f, "capture: {m}"),
        }
    }
}

impl std::error::Error for RunError {}

/// A simulation ready to run.
pub struct World {
    config: SimConfig,
    engine: Engine<Event>,
    pub nodes: Vec<Node>,
    links: Vec<Line>,
    bsses: Vec<BssState>,
    attachments: Vec<Vec<Attachment>>,
    /// Buffers of delivered packets, reused for the TCP segments sent (see `tcp_frame`).
    spare_frames: Vec<Vec<u8>>,
    /// Emptied [`Effects`] whose vectors keep their capacity, and scratch vectors of the
    /// per-packet path: taken and given back around each use (a nested use finds them
    /// taken and starts a new one), so a steady flow allocates nothing per packet.
    spare_fx: Vec<Effects>,
    scratch_outs: Vec<crate::ip::Out>,
    scratch_segments: Vec<(usize, Vec<u8>)>,
    ip_timers: Vec<Option<(u64, EventId)>>,
    sources: Vec<Source>,
    tcp: Vec<TcpFlow>,
    /// Source index → TCP flow index.
    tcp_of_source: BTreeMap<usize, usize>,
    /// UDP echo flows by flow id.
    echo: BTreeMap<u32, EchoFlow>,
    stats: BTreeMap<u32, FlowStats>,
    drop_counts: Vec<BTreeMap<String, u64>>,
    drop_log: Vec<DropRecord>,
    /// Drops of each flow's packets, by flow id (see `crate::conservation`).
    ledger: BTreeMap<u32, FlowLedger>,
    /// Where captured frames go, as they are seen (`capture_to`); None: not capturing.
    capture: Option<Capturing>,
    /// Nodes with TAP ports, when capturing: they keep their TAP frames until the
    /// world hands them on after each event.
    tap_nodes: Vec<u32>,
    queued_frames: usize,
    atm: Option<AtmNet>,
    atm_out: AtmOut,
    /// Seed 004's adaptive upstreams (see `upstream`).
    upstreams: Vec<Upstream>,
    /// How long each source's start has waited for its PPP link (see `send_from`).
    deferred_ns: Vec<u64>,
    /// When the run stops: the configured duration, moved later by the longest wait of
    /// a source for its link, so that a test whose PPPoE session came up late still
    /// gets its whole duration and drain (as one runs iperf -t 10 once pppd is up).
    end_ns: u64,
}

impl World {
    pub fn new(config: SimConfig) -> Result<World, RunError> {
        config.check().map_err(RunError::Config)?;
        let mut nodes = Vec::with_capacity(config.nodes.len());
        for (i, n) in config.nodes.iter().enumerate() {
            nodes.push(
                Node::new(n)
                    .map_err(|message| RunError::Config(ConfigError { field: format!("nodes[{i}]"), message }))?,
            );
            if let (Some((from, until)), Some(node)) = (config.cpu_window_ns, nodes.last_mut()) {
                node.cpu.set_window(from, until);
            }
        }
        let mut attachments: Vec<Vec<Attachment>> =
            config.nodes.iter().map(|n| vec![Attachment::Unattached; n.ports.len()]).collect();
        let mut links = Vec::new();
        let mut bsses = Vec::new();
        for (index, link) in config.links.iter().enumerate() {
            match link {
                LinkConfig::Ethernet { name, a, b, rate_bps, delay_ns, queue_frames, queue_bytes, impair } => {
                    let id = links.len() as u32;
                    attachments[a.node as usize][a.port as usize] = Attachment::Ethernet { link: id, end: 0 };
                    attachments[b.node as usize][b.port as usize] = Attachment::Ethernet { link: id, end: 1 };
                    let ethernet = EthernetLink {
                        name: name.clone(),
                        ends: [(a.node, a.port), (b.node, b.port)],
                        rate_bps: *rate_bps,
                        delay_ns: *delay_ns,
                        queue_frames: *queue_frames,
                        queue_bytes: *queue_bytes,
                        dirs: Default::default(),
                    };
                    let impair = [
                        direction_impairment(&impair[0], config.seed, index, 0, &format!("links[{index}].impair[0]"))?,
                        direction_impairment(&impair[1], config.seed, index, 1, &format!("links[{index}].impair[1]"))?,
                    ];
                    links.push(Line {
                        kind: LineKind::Ethernet(ethernet),
                        impair,
                        in_flight: Default::default(),
                        lazy_tx_done: [false; 2],
                        tx_done: [None; 2],
                        tally: Default::default(),
                    });
                }
                LinkConfig::Serial {
                    name,
                    a,
                    b,
                    rate_bps,
                    format,
                    framing,
                    clocking,
                    acfc,
                    pfc,
                    fcs_bits,
                    compression,
                    delay_ns,
                    queue_frames,
                    impair,
                } => {
                    let id = links.len() as u32;
                    attachments[a.node as usize][a.port as usize] = Attachment::Ethernet { link: id, end: 0 };
                    attachments[b.node as usize][b.port as usize] = Attachment::Ethernet { link: id, end: 1 };
                    let ppp = SerialPpp { clocking, acfc: *acfc, pfc: *pfc, fcs_bits: *fcs_bits };
                    let line =
                        serial_line(index, *rate_bps, format, framing, ppp, *compression, *delay_ns, *queue_frames)?;
                    let impair = [
                        direction_impairment(&impair[0], config.seed, index, 0, &format!("links[{index}].impair[0]"))?,
                        direction_impairment(&impair[1], config.seed, index, 1, &format!("links[{index}].impair[1]"))?,
                    ];
                    links.push(Line {
                        kind: LineKind::Serial { name: name.clone(), ends: [(a.node, a.port), (b.node, b.port)], line },
                        impair,
                        in_flight: Default::default(),
                        lazy_tx_done: [false; 2],
                        tx_done: [None; 2],
                        tally: Default::default(),
                    });
                }
                LinkConfig::Wifi(w) => {
                    let id = bsses.len() as u32;
                    let state = bss_state(&config, w, id, index, &mut nodes)?;
                    for (member, &(node, port)) in state.members.iter().enumerate() {
                        attachments[node as usize][port as usize] = Attachment::Wifi { bss: id, member: member as u16 };
                    }
                    bsses.push(state);
                }
                LinkConfig::Atm(_) => {}
            }
        }
        let atm = World::build_atm(&config, &mut nodes, &mut attachments)?;
        let mut tcp = Vec::new();
        let mut tcp_of_source = BTreeMap::new();
        for (i, flow) in config.flows.iter().enumerate() {
            if let FlowConfig::Tcp {
                id,
                from,
                to,
                dst_port,
                bytes,
                start_ns,
                stop_ns,
                tcp: options,
                interval_ns,
                trace,
            } = flow
            {
                let field = |f: &str| format!("flows[{i}].{f}");
                let server_node = nodes
                    .iter()
                    .position(|n| n.ip.ifaces.iter().any(|f| f.addr.is_some_and(|(a, _)| a == *to)))
                    .ok_or_else(|| {
                        RunError::Config(ConfigError {
                            field: field("to"),
                            message: format!("no node has the address {to}"),
                        })
                    })? as u32;
                let client_stack = &nodes[*from as usize].ip;
                let (iface, _) = client_stack.route(*to).ok_or_else(|| {
                    RunError::Config(ConfigError {
                        field: field("to"),
                        message: format!("node {} has no route to {to}", nodes[*from as usize].name),
                    })
                })?;
                let src = client_stack.source_address(iface).ok_or_else(|| {
                    RunError::Config(ConfigError {
                        field: field("from"),
                        message: "the sending node has no IPv4 address".into(),
                    })
                })?;
                let mtu = client_stack.ifaces[iface].mtu as u32;
                let tcp_config = tcp_config(options, mtu)
                    .map_err(|message| RunError::Config(ConfigError { field: field("tcp"), message }))?;
                if *interval_ns == Some(0) {
                    return Err(RunError::Config(ConfigError {
                        field: field("interval_ns"),
                        message: "an interval of zero".into(),
                    }));
                }
                let mut client = TcpSocket::new(tcp_config.clone());
                if *trace {
                    client.enable_trace();
                }
                let mut server = TcpSocket::new(tcp_config);
                // RFC 1191 §3: each end starts from the MTU of its first hop.
                client.set_path_mtu(mtu);
                if let Some(back) = nodes[server_node as usize].ip.path_mtu(0, src) {
                    server.set_path_mtu(back as u32);
                }
                // The receiver's initial sequence number: any value works (RFC 9293 §3.4.1
                // wants it unpredictable; a simulation wants it reproducible).
                server.listen(*dst_port, wire::tcp::SeqNumber(0x4000_0000));
                server.set_sink(true);
                tcp_of_source.insert(i, tcp.len());
                tcp.push(TcpFlow {
                    id: *id,
                    nodes: [*from, server_node],
                    addrs: [src, *to],
                    ports: [EPHEMERAL_PORT + tcp.len() as u16, *dst_port],
                    peers: [(*to, *dst_port), (src, EPHEMERAL_PORT + tcp.len() as u16)],
                    sockets: [client, server],
                    timers: [None, None],
                    path_mtu: Default::default(),
                    bytes: *bytes,
                    start_ns: *start_ns,
                    stop_ns: *stop_ns,
                    first_rx_ns: None,
                    first_rx_bytes: 0,
                    acked_ns: None,
                    first_tx_ns: None,
                    intervals: interval_ns.map(|p| IntervalRecorder::new(*start_ns, p)),
                    last_rx_ns: None,
                    completed_ns: None,
                    last_progress_ns: *start_ns,
                    longest_stall_ns: 0,
                    segments_sent: 0,
                    segments_arrived: 0,
                    stall_at_end_ns: 0,
                    window: None,
                });
            }
        }
        let mut echo = BTreeMap::new();
        for (i, flow) in config.flows.iter().enumerate() {
            if let FlowConfig::UdpEcho { id, from, dst_port, .. } = flow {
                // Each echo flow its own client port, as each echo client has its socket.
                let src_port = ECHO_CLIENT_PORT + i as u16;
                let (stop, end) = config.window(flow);
                echo.insert(
                    *id,
                    EchoFlow {
                        from: *from,
                        src_port,
                        dst_port: *dst_port,
                        forward: FlowStats::with_window(stop, end),
                        rtt: Histogram::default(),
                    },
                );
            }
        }
        let engine = Engine::with_budget(config.budget.max_events, config.budget.max_pending);
        let sources: Vec<Source> = config.flows.iter().cloned().map(Source::new).collect();
        for line in links.iter_mut() {
            for from in 0..2 {
                let node = line.ends()[from].0;
                let saturating = sources.iter().any(|s| s.is_saturating() && source_node(&s.config) == node);
                line.lazy_tx_done[from] = line.impair[from].shaper.is_none() && !saturating;
            }
        }
        let stats = config
            .flows
            .iter()
            .map(|f| {
                let (stop, end) = config.window(f);
                (f.id(), FlowStats::with_window(stop, end))
            })
            .collect();
        let n = nodes.len();
        if config.capture {
            for node in nodes.iter_mut() {
                node.vifs.capture = Some(Vec::new());
            }
        }
        let tap_nodes = if config.capture {
            (0..n)
                .filter(|&i| (0..config.nodes[i].ports.len()).any(|p| nodes[i].vifs.tap(p as u16).is_some()))
                .map(|i| i as u32)
                .collect()
        } else {
            Vec::new()
        };
        let upstreams = upstreams(&config, &attachments, &bsses)?;
        Ok(World {
            deferred_ns: vec![0; sources.len()],
            end_ns: config.duration_ns,
            config,
            engine,
            nodes,
            links,
            bsses,
            attachments,
            spare_frames: Vec::new(),
            spare_fx: Vec::new(),
            scratch_outs: Vec::new(),
            scratch_segments: Vec::new(),
            ip_timers: vec![None; n],
            sources,
            tcp,
            tcp_of_source,
            echo,
            stats,
            drop_counts: vec![BTreeMap::new(); n],
            drop_log: Vec::new(),
            ledger: BTreeMap::new(),
            capture: None,
            tap_nodes,
            queued_frames: 0,
            atm,
            atm_out: AtmOut::default(),
            upstreams,
        })
    }

    /// Hands every frame a capture point sees to `sink`, as it is seen (see
    /// `crate::capture`); needs `config.capture` (which keeps the 802.11 media's and the
    /// TAP ports' frames). Opens a point per port and per 802.11 medium now.
    pub fn capture_to(&mut self, sink: Box<dyn CaptureSink>) -> Result<(), RunError> {
        let ports: Vec<Vec<String>> = self
            .config
            .nodes
            .iter()
            .zip(&self.nodes)
            .map(|(c, node)| {
                (0..c.ports.len()).map(|p| format!("{}-{}", node.name, node.port_name(p as u16))).collect()
            })
            .collect();
        let media: Vec<String> = self.bsses.iter().map(|b| b.name.clone()).collect();
        self.capture = Some(Capturing::new(sink, &ports, &media).map_err(RunError::Capture)?);
        Ok(())
    }

    /// Hands on the frames the nodes' TAP ports and the 802.11 media kept during an
    /// event, in the order they were seen.
    fn pass_captures(&mut self) -> Result<(), RunError> {
        for &node in &self.tap_nodes {
            let kept = self.nodes[node as usize].vifs.capture.as_mut().map(std::mem::take).unwrap_or_default();
            if let Some(c) = self.capture.as_mut() {
                for (port, t, frame) in kept {
                    c.port(node, port, t, &frame).map_err(RunError::Capture)?;
                }
            }
        }
        for (i, b) in self.bsses.iter_mut().enumerate() {
            let air = b.bss.take_air();
            if let Some(c) = self.capture.as_mut() {
                for f in &air {
                    // Each PPDU once, at its start, as a capture of the air shows it.
                    c.air(i, f.start, &air_record(f, &b.macs, b.channel)).map_err(RunError::Capture)?;
                }
            }
        }
        Ok(())
    }

    /// Runs to the configured duration and returns the results.
    pub fn run(mut self) -> Result<Results, RunError> {
        for (i, source) in self.sources.iter().enumerate() {
            let at = SimTime::from_nanos(source.start_ns());
            self.engine.schedule_at(at, Event::Send { source: i as u32 }).map_err(budget)?;
        }
        self.atm_start()?;
        // Timers the nodes want from the start (PPPoE clients begin discovery at 0).
        for node in 0..self.nodes.len() {
            self.arm_ip_timer(node as u32)?;
        }
        // An AP's beacons run from time 0, traffic or not.
        for bss in 0..self.bsses.len() {
            self.arm_bss_timer(bss as u32)?;
        }
        let passing = self.config.capture;
        while let Some((now, event)) = self.engine.step_if_before(SimTime::from_nanos(self.end_ns)).map_err(budget)? {
            self.handle(now.as_nanos(), event)?;
            if passing {
                self.pass_captures()?;
            }
        }
        let capture = self.capture.take();
        let mut results = self.results();
        if let Some(c) = capture {
            c.finish(&mut results).map_err(RunError::Capture)?;
        }
        Ok(results)
    }

    fn handle(&mut self, now: u64, event: Event) -> Result<(), RunError> {
        match event {
            Event::EthTxDone { link, from } => {
                let l = &mut self.links[link as usize];
                l.finish(from as usize);
                let node = l.ends()[from as usize].0;
                // A direction whose EthTxDone may be left out has no saturating source
                // at its sender (see `Line::lazy_tx_done`): nothing to refill.
                let refill = !l.lazy_tx_done[from as usize];
                self.start_tx(now, link, from)?;
                if refill {
                    self.refill_saturating(now, node)?;
                }
            }
            Event::EthArrive { link, from } => {
                let l = &mut self.links[link as usize];
                let in_flight = &mut l.in_flight[from as usize];
                let (_, frame) = in_flight.pop_front().expect("a frame in flight");
                if let Some(&(next, _)) = in_flight.front() {
                    self.engine.schedule_reserved(next, Event::EthArrive { link, from });
                }
                let (node, port) = l.ends()[1 - from as usize];
                let impair = &mut l.impair[from as usize];
                let lost = impair.loss.drop(&mut impair.rng);
                if let Some(u) = self.upstreams.iter_mut().find(|u| u.modem_link == link && u.modem_end == from) {
                    u.modem_outcome(now, !lost);
                }
                let l = &mut self.links[link as usize];
                let impair = &mut l.impair[from as usize];
                if lost {
                    impair.lost += 1;
                    l.tally[from as usize].dropped += 1;
                    let reason = format!("lost on link {} ({})", l.name(), l.impair[from as usize].loss_text);
                    let summary = if matches!(l.kind, LineKind::Serial { .. }) {
                        Some(frame)
                    } else {
                        frame.get(ethernet::HEADER_LEN..).map(<[u8]>::to_vec)
                    };
                    l.lost(from as usize);
                    self.record_drop(now, node, Some(port), reason, summary.as_deref());
                    return Ok(());
                }
                match l.delivered(from as usize, frame) {
                    Ok(frame) => {
                        l.tally[from as usize].delivered += 1;
                        self.receive(now, node, port, frame)?
                    }
                    Err(reason) => {
                        l.tally[from as usize].dropped += 1;
                        self.record_drop(now, node, Some(port), reason.to_string(), None)
                    }
                }
            }
            Event::CpuDone { node } => {
                let n = &mut self.nodes[node as usize];
                n.cpu.finish();
                if let Some(fx) = n.in_service.take() {
                    // Out of line: the run loop stays small (a clocked CPU's job).
                    self.release_all(now, node, fx)?;
                }
                self.serve(now, node)?;
            }
            Event::RxReady { node } => {
                let n = &mut self.nodes[node as usize];
                if let Some(job) = n.cpu.take_delayed(now) {
                    self.offer_received(now, node, job)?;
                }
            }
            Event::IpTimer { node } => {
                let due = self.ip_timers[node as usize].take();
                if due.is_some_and(|(at, _)| at == now) {
                    let fx = self.nodes[node as usize].on_timer(now);
                    self.release_all(now, node, fx)?;
                }
                self.arm_ip_timer(node)?;
            }
            Event::Send { source } => self.send_from(now, source as usize)?,
            Event::TcpTimer { flow, side: 2 } => {
                // The test's stop: its measurement window ends (what arrives later is
                // the drain), and the sender of a timed test closes after what it sent;
                // a sized transfer still running goes on.
                let f = &mut self.tcp[flow as usize];
                f.tick(now);
                f.close_window(now);
                if f.bytes.is_none() {
                    f.sockets[0].close();
                    self.tcp_dispatch(now, flow as usize, 0)?;
                }
            }
            Event::TcpTimer { flow, side } => {
                let f = &mut self.tcp[flow as usize];
                if f.timers[side as usize].is_some_and(|(at, _)| at == now) {
                    f.tick(now);
                    f.timers[side as usize] = None;
                    self.tcp_dispatch(now, flow as usize, side as usize)?;
                }
            }
            Event::Upstream { index } => {
                let u = &mut self.upstreams[index as usize];
                if u.timer.is_some_and(|(at, _)| at == now) {
                    u.timer = None;
                }
                let txs = u.on_timer(now);
                self.upstream_send(now, index, txs)?;
            }
            Event::BssTimer { bss } => {
                let state = &mut self.bsses[bss as usize];
                if state.timer.is_some_and(|(at, _)| at == now) {
                    state.timer = None;
                }
                let mut events = Vec::new();
                state.bss.poll(now, &mut events);
                for event in events {
                    self.bss_event(now, bss, event)?;
                }
                self.arm_bss_timer(bss)?;
            }
            Event::Atm(e) => self.atm_event(now, e)?,
            Event::WifiArrive { bss } => {
                let (_, to, from, mpdu) =
                    self.bsses[bss as usize].in_flight.pop_front().expect("a frame in flight on the air");
                self.wifi_arrive(now, bss, to, from, mpdu)?;
            }
        }
        Ok(())
    }

    fn bss_event(&mut self, now: u64, bss: u32, event: BssEvent) -> Result<(), RunError> {
        match event {
            BssEvent::Delivered { to, from, mpdu, at } => {
                let state = &mut self.bsses[bss as usize];
                if state.delay_ns > 0 {
                    // The air's propagation delay: the frame reaches the receiving node later;
                    // arrivals keep their order (one delay per BSS).
                    let due = at + state.delay_ns;
                    state.in_flight.push_back((due, to, from, mpdu));
                    self.engine.schedule_at(SimTime::from_nanos(due), Event::WifiArrive { bss }).map_err(budget)?;
                    return Ok(());
                }
                self.wifi_arrive(now, bss, to, from, mpdu)?;
            }
            BssEvent::Dropped { member, reason, mpdu, delivered } => {
                let state = &self.bsses[bss as usize];
                let (node, port) = state.members[member];
                // Logged as before; the flows are charged what the MPDU carried, unless
                // the receiver had it (only its acknowledgements were lost).
                let open = state.adapters[member].cipher.unprotect(&mpdu).map(|(open, _)| open).ok();
                let carried = (!delivered)
                    .then(|| open.as_deref().unwrap_or(&mpdu))
                    .filter(|m| !crate::conservation::is_link_arq(m));
                self.record_drop_of(now, node, Some(port), reason.to_string(), None, carried);
            }
            BssEvent::TxDone { member, .. } => {
                let (node, _) = self.bsses[bss as usize].members[member];
                self.refill_saturating(now, node)?;
            }
        }
        Ok(())
    }

    /// An MPDU from member `from` reaches member `to`'s adapter: its address filter and
    /// cipher, the AP's relay within the BSS, then the node.
    fn wifi_arrive(&mut self, now: u64, bss: u32, to: usize, from: usize, mpdu: Vec<u8>) -> Result<(), RunError> {
        {
            {
                let state = &mut self.bsses[bss as usize];
                let (node, port) = state.members[to];
                match state.adapters[to].receive(&mpdu) {
                    Ok(converted) if state.echoes_behind(to, &converted.frame) => {
                        // A WDS station's own group frame (from a host behind it) relayed back by
                        // the AP: like its own MAC's echo, discarded (a 4-address station takes no
                        // 3-address copy back, as Linux mac80211's 4addr mode).
                    }
                    Ok(converted) => {
                        if state.wds && state.has_ap && to == 0 {
                            if let Ok(frame) = ethernet::Frame::new_checked(&converted.frame[..]) {
                                let src = frame.src_addr();
                                if src != state.macs[from] {
                                    state.behind.insert(src, from);
                                }
                            }
                        }
                        let (relay, up) = if state.has_ap && to == 0 {
                            state.relay_within_bss(from, &converted.frame)
                        } else {
                            (false, true)
                        };
                        if relay {
                            // The AP's distribution function: a frame from one of its stations for
                            // another (or for all) goes back out into the BSS, From DS (IEEE
                            // 802.11-2020 §4.5.4.2, §11.3; Linux mac80211 relays in
                            // ieee80211_deliver_skb before the bridge sees the frame). The AP's MAC
                            // does it: no bridge lookup, no CPU work of the node.
                            let copy = if up { converted.frame.clone() } else { converted.frame };
                            self.transmit_wifi(now, node, port, (bss, 0), copy.clone(), false)?;
                            if up {
                                self.receive(now, node, port, copy)?;
                            }
                        } else {
                            self.receive(now, node, port, converted.frame)?;
                        }
                    }
                    // A station discards its own group frame relayed back by the AP (§11.3 relay
                    // reaches every station, the sender too): the original was delivered, so this
                    // copy is no loss and is not recorded as a drop.
                    Err(DropReason::OwnGroupEcho { .. }) => {}
                    Err(reason) => self.record_drop(now, node, Some(port), reason.to_string(), None),
                }
            }
        }
        Ok(())
    }

    fn arm_bss_timer(&mut self, bss: u32) -> Result<(), RunError> {
        let now = self.engine.now().as_nanos();
        let state = &mut self.bsses[bss as usize];
        let Some(at) = state.bss.poll_at() else { return Ok(()) };
        let at = at.max(now);
        match state.timer {
            Some((t, _)) if t <= at => return Ok(()),
            Some((_, id)) => {
                self.engine.cancel(id);
            }
            None => {}
        }
        let id = self.engine.schedule_at(SimTime::from_nanos(at), Event::BssTimer { bss }).map_err(budget)?;
        self.bsses[bss as usize].timer = Some((at, id));
        Ok(())
    }

    /// An Ethernet frame leaves a node through its 802.11 port.
    /// `at` is the port's (BSS, member); `priority` puts the frame ahead of the waiting ones.
    fn transmit_wifi(
        &mut self,
        now: u64,
        node: u32,
        port: u16,
        at: (u32, u16),
        frame: Vec<u8>,
        priority: bool,
    ) -> Result<(), RunError> {
        let (bss, member) = (at.0, at.1 as usize);
        let state = &mut self.bsses[bss as usize];
        let Ok(eth) = ethernet::Frame::new_checked(&frame[..]) else { return Ok(()) };
        let dst = eth.dst_addr();
        let is_ap = state.has_ap && member == 0;
        let (dest, wds_receiver) = if state.has_ap && !is_ap {
            // A station of a BSS sends every frame to its AP (To DS, Address 1 = the BSSID;
            // IEEE 802.11-2020 §9.3.2.1, Table 9-26), a group-addressed MSDU too, as an
            // individually addressed, acknowledged frame; the AP's distribution function
            // relays it (`BssState::relay_within_bss`).
            (Some(0), None)
        } else if dst.is_multicast() {
            (None, None)
        } else if let Some(i) = state.macs.iter().position(|m| *m == dst).filter(|&i| i != member) {
            (Some(i), None)
        } else if is_ap && state.wds && state.behind.contains_key(&dst) {
            let i = state.behind[&dst];
            (Some(i), Some(state.macs[i]))
        } else if is_ap {
            let reason = format!(
                "AP has no associated station {dst}: reaching a host behind a station needs 4-address (WDS) frames \
                 (802.11 Table 9-26 case 11), which station adapters do not send"
            );
            let packet = frame.get(14..).map(|p| p.to_vec());
            self.record_drop(now, node, Some(port), reason, packet.as_deref());
            return Ok(());
        } else {
            let packet = frame.get(14..).map(|p| p.to_vec());
            self.record_drop(now, node, Some(port), format!("no station {dst} in the ad hoc cell"), packet.as_deref());
            return Ok(());
        };
        let converted = match state.adapters[member].transmit(&frame, wds_receiver) {
            Ok(c) => c,
            Err(reason) => {
                let packet = frame.get(14..).map(|p| p.to_vec());
                self.record_drop(now, node, Some(port), reason.to_string(), packet.as_deref());
                return Ok(());
            }
        };
        let queued = if priority {
            state.bss.enqueue_priority(now, member, converted.frame, dest)
        } else {
            state.bss.enqueue(now, member, converted.frame, dest)
        };
        if let Err(reason) = queued {
            let packet = frame.get(14..).map(|p| p.to_vec());
            self.record_drop(now, node, Some(port), reason.to_string(), packet.as_deref());
            return Ok(());
        }
        self.arm_bss_timer(bss)
    }

    /// A frame arrives at a node's port: to the CPU (or straight through in hardware).
    #[inline(always)]
    fn receive(&mut self, now: u64, node: u32, port: u16, frame: Vec<u8>) -> Result<(), RunError> {
        if let Some(c) = self.capture.as_mut() {
            c.port(node, port, now, &frame).map_err(RunError::Capture)?;
        }
        if let Some(index) = self.upstreams.iter().position(|u| u.owns_arrival(node, &frame)) {
            let got = self.upstreams[index].receive(now, node, &frame);
            self.upstream_send(now, index as u32, got.tx)?;
            return match got.deliver {
                Some(inner) => self.receive_stack(now, node, port, inner),
                None => Ok(()),
            };
        }
        self.receive_stack(now, node, port, frame)
    }

    /// A frame goes to the node's CPU and stack.
    fn receive_stack(&mut self, now: u64, node: u32, port: u16, frame: Vec<u8>) -> Result<(), RunError> {
        let n = &mut self.nodes[node as usize];
        if n.cpu.is_free() {
            let mut fx = self.spare_fx.pop().unwrap_or_default();
            // A free CPU bills nothing (`process_into` skips the sum): straight to the port.
            n.port_input(now, port, frame, &mut fx);
            return self.release(now, node, fx);
        }
        if n.cpu.has_rx_latency() {
            let due = n.cpu.delay(now, frame.len(), Job::Receive { port, frame });
            self.engine.schedule_at(SimTime::from_nanos(due), Event::RxReady { node }).map_err(budget)?;
            return Ok(());
        }
        self.offer_received(now, node, Job::Receive { port, frame })
    }

    /// A received frame reaches the node's CPU queue (dropped when it is full).
    fn offer_received(&mut self, now: u64, node: u32, job: Job) -> Result<(), RunError> {
        let n = &mut self.nodes[node as usize];
        let port = match &job {
            Job::Receive { port, .. } => Some(*port),
            Job::Send(_) => None,
        };
        if !n.cpu.offer(job) {
            self.record_drop(now, node, port, "CPU input queue full".into(), None);
            return Ok(());
        }
        self.serve(now, node)
    }

    /// Starts the next CPU job of `node` if it is idle.
    fn serve(&mut self, now: u64, node: u32) -> Result<(), RunError> {
        let n = &mut self.nodes[node as usize];
        let Some(job) = n.cpu.next_job() else { return Ok(()) };
        let fx = match job {
            Job::Receive { port, frame } => {
                let mut fx = self.spare_fx.pop().unwrap_or_default();
                n.process_into(now, port, frame, &mut fx);
                fx
            }
            Job::Send(fx) => fx,
        };
        let service = n.cpu.service_ns(fx.cycles);
        let end = n.cpu.start(now, service);
        n.in_service = Some(fx);
        self.engine.schedule_at(SimTime::from_nanos(end), Event::CpuDone { node }).map_err(budget)?;
        Ok(())
    }

    /// What the node's own applications send: through the CPU (its per-packet and
    /// per-byte sending cost, and its queue) before the frames leave.
    #[inline(always)]
    fn release_sent(&mut self, now: u64, node: u32, mut fx: Effects) -> Result<(), RunError> {
        let n = &mut self.nodes[node as usize];
        if n.cpu.is_free() || fx.send.is_empty() {
            return self.release(now, node, fx);
        }
        n.charge_send(&mut fx);
        if let Err(job) = n.cpu.offer_or_return(Job::Send(fx)) {
            let Job::Send(fx) = job else { unreachable!("offered a send job") };
            for (port, frame) in fx.send {
                self.record_drop(
                    now,
                    node,
                    Some(port),
                    "CPU queue full (sending)".into(),
                    frame.get(ethernet::HEADER_LEN..),
                );
            }
            return Ok(());
        }
        self.serve(now, node)
    }

    /// Carries out the effects of processing: local deliveries, then frames out, then
    /// the IP timer (drops first). Nearly always there is a single delivery (a frame
    /// received) or a single frame out (a segment sent) and nothing else: that is done
    /// here, the emptied `Effects` going back to the spare list first, without moving
    /// them on by value into the general [`release_all`](Self::release_all).
    #[inline(always)]
    fn release(&mut self, now: u64, node: u32, mut fx: Effects) -> Result<(), RunError> {
        if fx.drops.is_empty() {
            if fx.local.len() == 1 && fx.send.is_empty() {
                let (packet, at) = fx.local.pop().expect("one packet");
                self.recycle_fx(fx);
                self.deliver_local(now, node, &packet[at..])?;
                recycle(&mut self.spare_frames, packet);
                return self.arm_ip_timer(node);
            }
            if fx.send.len() == 1 && fx.local.is_empty() {
                let (port, frame) = fx.send.pop().expect("one frame");
                self.recycle_fx(fx);
                self.transmit(now, node, port, frame)?;
                return self.arm_ip_timer(node);
            }
        }
        self.release_all(now, node, fx)
    }

    /// [`release`](Self::release) of any effects: drops, every delivery, every frame out.
    #[inline(never)]
    fn release_all(&mut self, now: u64, node: u32, mut fx: Effects) -> Result<(), RunError> {
        for (port, reason, packet) in fx.drops.drain(..) {
            self.record_drop(now, node, port, reason, packet.as_deref());
        }
        for (packet, at) in fx.local.drain(..) {
            self.deliver_local(now, node, &packet[at..])?;
            recycle(&mut self.spare_frames, packet);
        }
        for (port, frame) in fx.send.drain(..) {
            self.transmit(now, node, port, frame)?;
        }
        self.recycle_fx(fx);
        self.arm_ip_timer(node)
    }

    /// An [`Effects`] for the per-packet path: a spare one (its vectors' capacity kept)
    /// when there is one.
    fn take_fx(&mut self) -> Effects {
        self.spare_fx.pop().unwrap_or_default()
    }

    /// Keeps an [`Effects`] carried out (emptied) for [`take_fx`](Self::take_fx).
    fn recycle_fx(&mut self, mut fx: Effects) {
        if self.spare_fx.len() < SPARE_EFFECTS && fx.is_clear() {
            fx.cycles = 0.0;
            self.spare_fx.push(fx);
        }
    }

    #[inline]
    fn transmit(&mut self, now: u64, node: u32, port: u16, frame: Vec<u8>) -> Result<(), RunError> {
        if let Some(index) = self.upstreams.iter().position(|u| u.claims(node, port, &frame)) {
            let txs = self.upstreams[index].send(now, frame);
            return self.upstream_send(now, index as u32, txs);
        }
        self.transmit_port(now, node, port, frame, false)
    }

    /// Sends what an adaptive upstream asked for, and re-arms its timer.
    fn upstream_send(&mut self, now: u64, index: u32, txs: Vec<Tx>) -> Result<(), RunError> {
        for tx in txs {
            self.transmit_port(now, tx.node, tx.port, tx.frame, tx.priority)?;
        }
        let u = &mut self.upstreams[index as usize];
        let Some(at) = u.poll_at() else { return Ok(()) };
        let at = at.max(now);
        match u.timer {
            Some((t, _)) if t == at => return Ok(()),
            Some((_, id)) => {
                self.engine.cancel(id);
            }
            None => {}
        }
        let id = self.engine.schedule_at(SimTime::from_nanos(at), Event::Upstream { index }).map_err(budget)?;
        self.upstreams[index as usize].timer = Some((at, id));
        Ok(())
    }

    /// A frame leaves a node's port onto its link.
    fn transmit_port(
        &mut self,
        now: u64,
        node: u32,
        port: u16,
        frame: Vec<u8>,
        priority: bool,
    ) -> Result<(), RunError> {
        if let Some(c) = self.capture.as_mut() {
            c.port(node, port, now, &frame).map_err(RunError::Capture)?;
        }
        match self.attachments[node as usize][port as usize] {
            Attachment::Ethernet { link, end } => {
                let tally = &mut self.links[link as usize].tally[end as usize];
                tally.offered += 1;
                if let Some(reason) = self.links[link as usize].meter(now, end as usize, &frame) {
                    self.links[link as usize].tally[end as usize].dropped += 1;
                    self.record_drop(now, node, Some(port), reason, frame.get(14..));
                    return Ok(());
                }
                if let Err(frame) = self.links[link as usize].enqueue(end as usize, frame) {
                    self.links[link as usize].tally[end as usize].dropped += 1;
                    self.record_drop(now, node, Some(port), "output queue full (drop-tail)".into(), frame.get(14..));
                    return Ok(());
                }
                self.queued_frames += 1;
                self.settle_tx_done(link, end);
                if self.queued_frames > self.config.budget.max_queued_frames {
                    return Err(RunError::Budget(format!(
                        "frames queued in the network exceeded {} (the output queue of {} port {} grew without bound)",
                        self.config.budget.max_queued_frames,
                        self.nodes[node as usize].name,
                        self.nodes[node as usize].port_name(port)
                    )));
                }
                self.start_tx(now, link, end)
            }
            Attachment::Wifi { bss, member } => self.transmit_wifi(now, node, port, (bss, member), frame, priority),
            Attachment::Atm { ep } => self.atm_transmit(now, node, ep, frame),
            Attachment::Unattached | Attachment::AtmSwitch => {
                self.record_drop(now, node, Some(port), "port is not attached to any link".into(), None);
                Ok(())
            }
        }
    }

    /// Starts sending the next frame waiting at end `from` of `link`, if the serializer
    /// is free. Many calls find it busy or nothing waiting: that is answered inline.
    #[inline(always)]
    fn start_tx(&mut self, now: u64, link: u32, from: u8) -> Result<(), RunError> {
        let l = &self.links[link as usize];
        // Nothing to start while a frame is being sent or when none waits.
        if is_busy(l, from as usize) {
            return Ok(());
        }
        match l.peek_len(from as usize) {
            None => Ok(()),
            Some(len) => self.start_tx_len(now, link, from, len),
        }
    }

    /// [`start_tx`](Self::start_tx) once a frame of `len` octets waits at a free end.
    #[inline(never)]
    fn start_tx_len(&mut self, now: u64, link: u32, from: u8, len: usize) -> Result<(), RunError> {
        let l = &mut self.links[link as usize];
        // A shaper holds the next frame until its tokens are there (RFC 2697 bucket).
        {
            let impair = &mut l.impair[from as usize];
            if let Some(shaper) = impair.shaper.as_mut() {
                match impair.shaped_until {
                    Some(t) if t > now => return Ok(()),
                    Some(_) => impair.shaped_until = None,
                    None => match shaper.departure(SimTime::from_nanos(now), len) {
                        Some(t) if t.as_nanos() > now => {
                            impair.shaped_until = Some(t.as_nanos());
                            self.engine.schedule_at(t, Event::EthTxDone { link, from }).map_err(budget)?;
                            return Ok(());
                        }
                        Some(_) => {}
                        None => {
                            let name = l.name().to_string();
                            let (node, port) = l.ends()[from as usize];
                            if let Some((frame, _, _)) = l.start_next(from as usize) {
                                l.finish(from as usize);
                                l.tally[from as usize].dropped += 1;
                                self.queued_frames -= 1;
                                self.record_drop(
                                    now,
                                    node,
                                    Some(port),
                                    format!("frame longer than the shaper's bucket on link {name}"),
                                    frame.get(ethernet::HEADER_LEN..),
                                );
                            }
                            return Ok(());
                        }
                    },
                }
            }
        }
        let l = &mut self.links[link as usize];
        let Some((frame, wire_ns, last_bit_ns)) = l.start_next(from as usize) else { return Ok(()) };
        self.queued_frames -= 1;
        let delay = l.delay_ns();
        let done = SimTime::from_nanos(now + wire_ns);
        if l.lazy_tx_done[from as usize] && l.peek_len(from as usize).is_none() {
            // Nothing waits behind this frame: its EthTxDone keeps its place in the
            // order but enters the engine only if a frame is queued before then.
            l.tx_done[from as usize] = Some(self.engine.reserve_at(done).map_err(budget)?);
        } else {
            self.engine.schedule_at(done, Event::EthTxDone { link, from }).map_err(budget)?;
        }
        let arrival = self.engine.reserve_at(SimTime::from_nanos(now + last_bit_ns + delay)).map_err(budget)?;
        let in_flight = &mut self.links[link as usize].in_flight[from as usize];
        // The delay is the line's own and constant, and this frame started after the
        // last one ended: it arrives after every frame in flight (the FIFO is sound).
        assert!(in_flight.back().is_none_or(|&(last, _)| last < arrival), "frames in flight arrive in order");
        let first = in_flight.is_empty();
        in_flight.push_back((arrival, frame));
        if first {
            self.engine.schedule_reserved(arrival, Event::EthArrive { link, from });
        }
        Ok(())
    }

    /// A frame was queued at end `from` of `link`: the `EthTxDone` left out of the
    /// engine for the frame being sent (see `start_tx`) has either passed — it would have
    /// found the queue empty and only freed the serializer, which is done now — or is
    /// still to come, and is scheduled in its place to start the queued frame. Either
    /// way the run is the same as if it had been scheduled when the frame started; only
    /// the events counter no longer counts the ones that were never needed.
    fn settle_tx_done(&mut self, link: u32, from: u8) {
        let l = &mut self.links[link as usize];
        if let Some(done) = l.tx_done[from as usize].take() {
            if self.engine.has_passed(done) {
                self.engine.forget(done);
                l.finish(from as usize);
            } else {
                self.engine.schedule_reserved(done, Event::EthTxDone { link, from });
            }
        }
    }

    /// Arms the node's IP timer for its stack's next deadline. Asked after every packet
    /// the node handles, and the node usually wants no timer: that answer is taken
    /// inline, the rest out of line.
    #[inline(always)]
    fn arm_ip_timer(&mut self, node: u32) -> Result<(), RunError> {
        match self.nodes[node as usize].poll_at() {
            None => Ok(()),
            Some(at) => self.arm_ip_timer_at(node, at),
        }
    }

    #[inline(never)]
    fn arm_ip_timer_at(&mut self, node: u32, at: u64) -> Result<(), RunError> {
        match self.ip_timers[node as usize] {
            Some((t, _)) if t <= at => Ok(()),
            current => {
                if let Some((_, id)) = current {
                    self.engine.cancel(id);
                }
                let at = at.max(self.engine.now().as_nanos());
                let id = self.engine.schedule_at(SimTime::from_nanos(at), Event::IpTimer { node }).map_err(budget)?;
                self.ip_timers[node as usize] = Some((at, id));
                Ok(())
            }
        }
    }

    /// The node's frames waiting to leave (CPU queue and its output queues).
    fn backlog(&mut self, node: u32) -> usize {
        let mut backlog = self.nodes[node as usize].cpu.queue_len();
        for p in 0..self.attachments[node as usize].len() {
            match self.attachments[node as usize][p] {
                Attachment::Ethernet { link, end } => backlog += self.links[link as usize].backlog(end as usize),
                Attachment::Wifi { bss, member } => backlog += self.bsses[bss as usize].bss.queue_len(member as usize),
                Attachment::Atm { ep } => backlog += self.atm_backlog(ep),
                Attachment::Unattached | Attachment::AtmSwitch => {}
            }
        }
        backlog
    }

    fn refill_saturating(&mut self, now: u64, node: u32) -> Result<(), RunError> {
        for i in 0..self.sources.len() {
            let s = &self.sources[i];
            if s.is_saturating() && source_node(&s.config) == node && s.active(now) && s.seq > 0 {
                while self.backlog(node) < SATURATION_BACKLOG && self.sources[i].active(now) {
                    if !self.emit(now, i)? {
                        break;
                    }
                }
            }
        }
        Ok(())
    }

    /// A source waits `LINK_UP_POLL_NS` more for its link: the run's end moves with it.
    /// Only while the configured duration lasts, so a link that never comes up cannot
    /// stretch the run without end (the run then ends at most twice as late).
    fn defer_end(&mut self, now: u64, source: usize) {
        self.deferred_ns[source] += LINK_UP_POLL_NS;
        if now < self.config.duration_ns {
            self.end_ns = self.end_ns.max(self.config.duration_ns + self.deferred_ns[source]);
        }
    }

    fn send_from(&mut self, now: u64, source: usize) -> Result<(), RunError> {
        if !self.sources[source].active(now) {
            return Ok(());
        }
        if self.sources[source].seq == 0 && !self.tcp_of_source.contains_key(&source) {
            let (from, to) = match &self.sources[source].config {
                FlowConfig::Udp { from, to, .. }
                | FlowConfig::Ping { from, to, .. }
                | FlowConfig::UdpEcho { from, to, .. }
                | FlowConfig::Tcp { from, to, .. } => (*from, *to),
            };
            if !self.nodes[from as usize].route_up(to) {
                // As for TCP below: the application starts once its PPP link is up.
                match &mut self.sources[source].config {
                    FlowConfig::Udp { start_ns, stop_ns, .. } => {
                        *start_ns += LINK_UP_POLL_NS;
                        *stop_ns += LINK_UP_POLL_NS;
                    }
                    FlowConfig::Ping { start_ns, .. }
                    | FlowConfig::UdpEcho { start_ns, .. }
                    | FlowConfig::Tcp { start_ns, .. } => *start_ns += LINK_UP_POLL_NS,
                }
                // The measurement window moves with the application's start.
                let id = self.sources[source].config.id();
                if let Some(stats) = self.stats.get_mut(&id) {
                    stats.delay_window(LINK_UP_POLL_NS);
                }
                if let Some(echo) = self.echo.get_mut(&id) {
                    echo.forward.delay_window(LINK_UP_POLL_NS);
                }
                self.defer_end(now, source);
                let at = SimTime::from_nanos(now + LINK_UP_POLL_NS);
                self.engine.schedule_at(at, Event::Send { source: source as u32 }).map_err(budget)?;
                return Ok(());
            }
        }
        if let Some(&flow) = self.tcp_of_source.get(&source) {
            let f = &self.tcp[flow];
            let (a, b) = (f.nodes, f.addrs);
            if !self.nodes[a[0] as usize].route_up(b[1]) || !self.nodes[a[1] as usize].route_up(b[0]) {
                // A route through a PPP link that is not up yet (discovery, LCP,
                // authentication, IPCP): the application starts once it is, as one
                // runs iperf after pppd says the link is up. The transfer keeps its
                // length: start and stop move together.
                let f = &mut self.tcp[flow];
                f.start_ns += LINK_UP_POLL_NS;
                f.stop_ns += LINK_UP_POLL_NS;
                // Waiting for the link is not a stall of the transfer.
                f.last_progress_ns += LINK_UP_POLL_NS;
                if let Some(r) = f.intervals.as_mut() {
                    r.delay(LINK_UP_POLL_NS);
                }
                if let FlowConfig::Tcp { start_ns, stop_ns, .. } = &mut self.sources[source].config {
                    *start_ns += LINK_UP_POLL_NS;
                    *stop_ns += LINK_UP_POLL_NS;
                }
                self.defer_end(now, source);
                let at = SimTime::from_nanos(now + LINK_UP_POLL_NS);
                self.engine.schedule_at(at, Event::Send { source: source as u32 }).map_err(budget)?;
                return Ok(());
            }
            let f = &mut self.tcp[flow];
            let [local, remote] = f.ports;
            // The sender's initial sequence number, reproducible (see the receiver's).
            f.sockets[0].connect(now, local, remote, wire::tcp::SeqNumber(0x1000_0000));
            f.sockets[0].send_bulk(f.bytes);
            let stop = f.stop_ns;
            if stop > now {
                self.engine
                    .schedule_at(SimTime::from_nanos(stop), Event::TcpTimer { flow: flow as u32, side: 2 })
                    .map_err(budget)?;
            }
            return self.tcp_dispatch(now, flow, 0);
        }
        if self.sources[source].is_saturating() {
            let node = source_node(&self.sources[source].config);
            while self.backlog(node) < SATURATION_BACKLOG && self.sources[source].active(now) {
                if !self.emit(now, source)? {
                    break;
                }
            }
            return Ok(());
        }
        self.emit(now, source)?;
        if let Some(interval) = self.sources[source].interval_ns {
            if self.sources[source].active(now + interval) {
                self.engine
                    .schedule_at(SimTime::from_nanos(now + interval), Event::Send { source: source as u32 })
                    .map_err(budget)?;
            }
        }
        Ok(())
    }

    /// Sends one datagram of a source; `false` when nothing could be sent.
    fn emit(&mut self, now: u64, source: usize) -> Result<bool, RunError> {
        let s = &mut self.sources[source];
        let seq = s.seq;
        s.seq += 1;
        let config = s.config.clone();
        let mut outs = Vec::new();
        let node = source_node(&config);
        match config {
            FlowConfig::Tcp { .. } => return Ok(false),
            FlowConfig::Udp { id, to, dst_port, payload, dont_fragment, .. } => {
                let probe = Probe { flow: id, seq, sent_ns: now };
                let len = (payload as usize).max(crate::app::PROBE_HEADER_LEN);
                let to = std::net::SocketAddrV4::new(to, dst_port);
                self.nodes[node as usize].ip.send_udp_df(
                    now,
                    49152,
                    to,
                    len,
                    dont_fragment,
                    |data| probe.emit(data),
                    &mut outs,
                );
                self.stats.get_mut(&id).expect("flow").sent += 1;
            }
            FlowConfig::UdpEcho { id, to, dst_port, payload, .. } => {
                let probe = Probe { flow: id, seq, sent_ns: now };
                let data = probe.payload(payload as usize);
                let src_port = self.echo[&id].src_port;
                self.nodes[node as usize].ip.send_udp(now, src_port, to, dst_port, &data, &mut outs);
                self.stats.get_mut(&id).expect("flow").sent += 1;
            }
            FlowConfig::Ping { id, to, payload, .. } => {
                let probe = Probe { flow: id, seq, sent_ns: now };
                let data = probe.payload(payload as usize);
                self.nodes[node as usize].ip.send_ping(now, to, id as u16, seq as u16, &data, &mut outs);
                self.stats.get_mut(&id).expect("flow").sent += 1;
            }
        }
        let mut fx = self.take_fx();
        self.nodes[node as usize].apply(now, outs, &mut fx);
        // Only a frame handed to a port counts: a datagram waiting for ARP or dropped
        // must not let a saturating source spin at one instant.
        let sent = !fx.send.is_empty();
        self.release_sent(now, node, fx)?;
        Ok(sent)
    }

    /// An ICMP "fragmentation needed" reached `node` quoting `quoted` (an IPv4 header
    /// and the first 8 octets after it): the TCP socket that sent the segment learns the
    /// path MTU its stack now knows (Linux `tcp_v4_err`).
    fn tcp_frag_needed(&mut self, now: u64, node: u32, quoted: &[u8]) -> Result<(), RunError> {
        let ip = ipv4::Packet::new_unchecked(quoted);
        if ip.check_header_len().is_err() || ip.next_header() != IpProtocol::Tcp {
            return Ok(());
        }
        let (src, dst) = (ip.src_addr(), ip.dst_addr());
        let Some(head) = quoted.get(ip.header_len()..ip.header_len() + 8) else { return Ok(()) };
        let (src_port, dst_port) = (u16::from_be_bytes([head[0], head[1]]), u16::from_be_bytes([head[2], head[3]]));
        let seq = tcp::SeqNumber::from_u32(u32::from_be_bytes([head[4], head[5], head[6], head[7]]));
        let found = self.tcp.iter().enumerate().find_map(|(i, f)| {
            (0..2)
                .find(|&side| {
                    f.nodes[side] == node
                        && f.addrs[side] == src
                        && f.ports[side] == src_port
                        && f.peers[side] == (dst, dst_port)
                })
                .map(|side| (i, side))
        });
        let Some((flow, side)) = found else { return Ok(()) };
        let Some(mtu) = self.nodes[node as usize].ip.path_mtu(now, dst) else { return Ok(()) };
        if self.tcp[flow].sockets[side].on_frag_needed(now, seq, mtu as u32) {
            self.tcp_dispatch(now, flow, side)?;
        }
        Ok(())
    }

    /// Emits what socket `side` of TCP flow `flow` may send now, and arms its timer.
    fn tcp_dispatch(&mut self, now: u64, flow: usize, side: usize) -> Result<(), RunError> {
        // The flow is looked up once here and once after sending (the fields of `self`
        // it touches in between are disjoint from `self.tcp`).
        let f = &mut self.tcp[flow];
        let (node, src, dst) = (f.nodes[side], f.addrs[side], f.peers[side].0);
        let socket = &mut f.sockets[side];
        // The MSS follows the path MTU the stack knows now (lowered by ICMP, back up
        // when that aged out, RFC 1191 §6.3). The stack's last answer for this side is
        // kept while the stack says it holds (no route, interface or PMTU change, not
        // past the learned estimate's expiry): the route lookup is not redone per send.
        let ip = &self.nodes[node as usize].ip;
        let memo = &mut f.path_mtu[side];
        let mtu = if ip.path_mtu_holds(memo, now) {
            Some(memo.mtu)
        } else {
            let answer = ip.path_mtu_memo(now, dst);
            *memo = answer.unwrap_or_default();
            answer.map(|m| m.mtu)
        };
        if let Some(mtu) = mtu {
            socket.set_path_mtu(mtu as u32);
        }
        // Each segment is encoded as the socket hands it out, straight into the buffer
        // of its frame: its payload is copied once.
        let mut segments = std::mem::take(&mut self.scratch_segments);
        let spare = &mut self.spare_frames;
        socket.dispatch_payloads(now, |repr, payload| {
            segments.push((payload.len(), tcp_frame(spare, repr, &src, &dst, payload)));
        });
        // What every segment of this dispatch shares is read once.
        if side == 0 && segments.iter().any(|&(len, _)| len > 0) {
            f.first_tx_ns.get_or_insert(now);
        }
        // RFC 1191 §3: a TCP doing path MTU discovery sets DF on its segments.
        let dont_frag = f.sockets[side].config().pmtu_discovery;
        f.segments_sent += segments.len() as u64;
        for (_, frame) in segments.drain(..) {
            self.tcp_send_frame(now, node, src, dst, dont_frag, frame)?;
        }
        self.scratch_segments = segments;
        let f = &mut self.tcp[flow];
        match (f.sockets[side].poll_at(), f.timers[side]) {
            // A timer already set no later than needed stays: it wakes the socket, which
            // re-arms for the rest (an RTO pushed back by every ACK costs no heap work).
            (Some(at), Some((t, _))) if t <= at.max(now) && t >= now => Ok(()),
            (at, current) => {
                if let Some((_, id)) = current {
                    self.engine.cancel(id);
                    f.timers[side] = None;
                }
                if let Some(at) = at {
                    let at = at.max(now);
                    let id = self
                        .engine
                        .schedule_at(SimTime::from_nanos(at), Event::TcpTimer { flow: flow as u32, side: side as u8 })
                        .map_err(budget)?;
                    f.timers[side] = Some((at, id));
                }
                Ok(())
            }
        }
    }

    /// Sends one TCP segment from socket `side` of flow `flow` through its node's stack.
    fn tcp_send(
        &mut self,
        now: u64,
        flow: usize,
        side: usize,
        repr: tcp::Repr,
        payload: &[u8],
    ) -> Result<(), RunError> {
        let f = &self.tcp[flow];
        let frame =
            tcp_frame(&mut self.spare_frames, &repr, &f.addrs[side], &f.peers[side].0, tcp::Payload::Bytes(payload));
        self.tcp_send_segment(now, flow, side, payload.len(), frame)
    }

    /// Sends one encoded TCP segment (carrying `payload_len` data octets, in `frame`
    /// after [`crate::ip::TRANSPORT_OFFSET`]) from socket `side` of flow `flow` through
    /// its node's stack.
    fn tcp_send_segment(
        &mut self,
        now: u64,
        flow: usize,
        side: usize,
        payload_len: usize,
        frame: Vec<u8>,
    ) -> Result<(), RunError> {
        let f = &mut self.tcp[flow];
        f.segments_sent += 1;
        if side == 0 && payload_len > 0 {
            f.first_tx_ns.get_or_insert(now);
        }
        let (node, src, dst) = (f.nodes[side], f.addrs[side], f.peers[side].0);
        // RFC 1191 §3: a TCP doing path MTU discovery sets DF on its segments.
        let dont_frag = f.sockets[side].config().pmtu_discovery;
        self.tcp_send_frame(now, node, src, dst, dont_frag, frame)
    }

    /// Sends one encoded TCP segment (in `frame` after [`crate::ip::TRANSPORT_OFFSET`])
    /// from `src` on `node` to `dst` through the node's stack.
    #[inline(always)]
    fn tcp_send_frame(
        &mut self,
        now: u64,
        node: u32,
        src: Ipv4Addr,
        dst: Ipv4Addr,
        dont_frag: bool,
        frame: Vec<u8>,
    ) -> Result<(), RunError> {
        let mut outs = std::mem::take(&mut self.scratch_outs);
        let mut fx = self.take_fx();
        let n = &mut self.nodes[node as usize];
        n.ip.send_datagram_in(now, src, dst, IpProtocol::Tcp, frame, dont_frag, &mut outs);
        n.apply_drain(now, &mut outs, &mut fx);
        self.scratch_outs = outs;
        self.release_sent(now, node, fx)
    }

    /// Sends a datagram the node itself makes (an echo server's reply) through its stack.
    fn send_local(
        &mut self,
        now: u64,
        node: u32,
        src: Ipv4Addr,
        dst: Ipv4Addr,
        protocol: IpProtocol,
        payload: &[u8],
    ) -> Result<(), RunError> {
        let mut outs = Vec::new();
        let n = &mut self.nodes[node as usize];
        n.ip.send_datagram(now, src, dst, protocol, payload, &mut outs);
        let mut fx = Effects::default();
        n.apply(now, outs, &mut fx);
        self.release_sent(now, node, fx)
    }

    /// A datagram reached a node's own stack: count it for its flow.
    fn deliver_local(&mut self, now: u64, node: u32, packet: &[u8]) -> Result<(), RunError> {
        let Ok(ip) = ipv4::Packet::new_checked(packet) else { return Ok(()) };
        match ip.next_header() {
            IpProtocol::Udp => {
                if let Ok(datagram) = udp::Packet::new_checked(ip.payload()) {
                    if let Some(probe) = Probe::parse(datagram.payload()) {
                        if let Some(echo) = self.echo.get_mut(&probe.flow) {
                            let bytes = datagram.payload().len() as u64;
                            if node == echo.from && datagram.dst_port() == echo.src_port {
                                // The echo is back at its client: a round trip.
                                let stats = self.stats.get_mut(&probe.flow).expect("flow");
                                if stats.record_arrival(probe.seq, probe.sent_ns, now, bytes) == Arrival::Received {
                                    echo.rtt.record(now.saturating_sub(probe.sent_ns));
                                }
                            } else if datagram.dst_port() == echo.dst_port {
                                echo.forward.record_arrival(probe.seq, probe.sent_ns, now, bytes);
                                let (src, dst) = (ip.dst_addr(), ip.src_addr());
                                let reply = udp::Repr { src_port: datagram.dst_port(), dst_port: datagram.src_port() };
                                let mut segment = Vec::with_capacity(datagram.payload().len() + udp::HEADER_LEN);
                                reply.encapsulate(&src, &dst, datagram.payload(), &mut segment);
                                return self.send_local(now, node, src, dst, IpProtocol::Udp, &segment);
                            }
                            return Ok(());
                        }
                        if let Some(stats) = self.stats.get_mut(&probe.flow) {
                            stats.record_arrival(probe.seq, probe.sent_ns, now, datagram.payload().len() as u64);
                        }
                    }
                }
            }
            IpProtocol::Tcp => {
                let (src, dst) = (ip.src_addr(), ip.dst_addr());
                let Ok(segment) = tcp::Packet::new_checked(ip.payload()) else { return Ok(()) };
                let Ok(repr) = tcp::Repr::parse(&segment, &src, &dst) else {
                    self.record_drop(now, node, None, "TCP checksum error".into(), Some(packet));
                    return Ok(());
                };
                let from = (src, repr.src_port);
                let found = self.tcp.iter().enumerate().find_map(|(i, f)| {
                    (0..2)
                        .find(|&side| f.nodes[side] == node && f.ports[side] == repr.dst_port && f.peers[side] == from)
                        .map(|side| (i, side))
                });
                // A SYN from an endpoint no socket knows: a NAT translated its sender. The
                // listening receiver takes it (RFC 9293 §3.10.7.2), the flow whose sender
                // has the SYN's port first (a NAT keeps the port when it is free, RFC 4787
                // REQ-3, RFC 5382 REQ-1), and answers that endpoint from then on.
                let found = found.or_else(|| {
                    let syn = repr.control == tcp::Control::Syn && repr.ack_number.is_none();
                    let listening = |f: &TcpFlow| {
                        f.nodes[1] == node
                            && f.ports[1] == repr.dst_port
                            && f.sockets[1].state() == crate::tcp::State::Listen
                    };
                    let by_port = self.tcp.iter().position(|f| listening(f) && f.ports[0] == repr.src_port);
                    let flow = by_port.or_else(|| self.tcp.iter().position(listening)).filter(|_| syn)?;
                    self.tcp[flow].peers[1] = from;
                    Some((flow, 1))
                });
                let Some((flow, side)) = found else {
                    self.record_drop(
                        now,
                        node,
                        None,
                        format!("no TCP socket for port {} (a RST would answer)", repr.dst_port),
                        Some(packet),
                    );
                    return Ok(());
                };
                let f = &mut self.tcp[flow];
                f.segments_arrived += 1;
                f.tick(now);
                let before = f.sockets[1].stats().bytes_received;
                let reply = f.sockets[side].process(now, &repr, segment.payload());
                let after = f.sockets[1].stats().bytes_received;
                if f.bytes.is_some_and(|b| f.sockets[0].stats().bytes_acked >= b) && f.acked_ns.is_none() {
                    f.acked_ns = Some(now);
                }
                if after > before {
                    if f.first_rx_ns.is_none() {
                        f.first_rx_ns = Some(now);
                        f.first_rx_bytes = after;
                    }
                    f.last_rx_ns = Some(now);
                    if f.window.is_none() {
                        f.longest_stall_ns = f.longest_stall_ns.max(now - f.last_progress_ns);
                    }
                    f.last_progress_ns = now;
                    if f.bytes.is_some_and(|b| after >= b) && f.completed_ns.is_none() {
                        // A sized transfer's window ends at its last byte (iperf3 -n),
                        // unless its time limit ended it before.
                        f.completed_ns = Some(now);
                        f.close_window(now);
                    }
                }
                if let Some(rst) = reply {
                    self.tcp_send(now, flow, side, rst, &[])?;
                }
                self.tcp_dispatch(now, flow, side)?;
            }
            IpProtocol::Icmp => {
                if let Ok(icmp) = icmpv4::Packet::new_checked(ip.payload()) {
                    if let Ok(icmpv4::Repr::DstUnreachable {
                        reason: icmpv4::DstUnreachable::FragRequired,
                        header,
                        ..
                    }) = icmpv4::Repr::parse(&icmp)
                    {
                        return self.tcp_frag_needed(now, node, header);
                    }
                    if let Ok(icmpv4::Repr::EchoReply { data, .. }) = icmpv4::Repr::parse(&icmp) {
                        if let Some(probe) = Probe::parse(data) {
                            if let Some(stats) = self.stats.get_mut(&probe.flow) {
                                // Duplicates' round trips count, as ping's statistics take them.
                                if stats.record_arrival(probe.seq, probe.sent_ns, now, data.len() as u64)
                                    != Arrival::Late
                                {
                                    stats.rtt_ns.push(now - probe.sent_ns);
                                }
                            }
                        }
                    }
                }
            }
            _ => {}
        }
        Ok(())
    }

    fn record_drop(&mut self, now: u64, node: u32, port: Option<u16>, reason: String, packet: Option<&[u8]>) {
        self.record_drop_of(now, node, port, reason, packet, packet);
    }

    /// [`record_drop`](Self::record_drop) of `carried` (what was dropped, for the flows'
    /// conservation), logged with `packet` (what the log has always described).
    fn record_drop_of(
        &mut self,
        now: u64,
        node: u32,
        port: Option<u16>,
        reason: String,
        packet: Option<&[u8]>,
        carried: Option<&[u8]>,
    ) {
        if let Some(carried) = carried {
            self.ledger_drop(&reason, carried);
        }
        let (flow, summary) = packet.map(describe).unwrap_or((None, String::new()));
        // A tunnel's datagram may look like a probe by chance: only a known flow counts.
        let flow = flow.filter(|f| self.stats.contains_key(f));
        *self.drop_counts[node as usize].entry(reason.clone()).or_insert(0) += 1;
        if self.drop_log.len() < DROP_LOG_LIMIT {
            self.drop_log.push(DropRecord { time_ns: now, node, port, reason, flow, summary });
        }
    }

    fn results(mut self) -> Results {
        let now = self.end_ns;
        self.ledger_silent_drops();
        let census = self.census();
        let flow_conservation = self.flow_conservation(&census);
        let line_conservation = self.line_conservation();
        let wifi_conservation = self.wifi_conservation();
        let (atm_links, atm_stats) = self.atm_results();
        let wifi = self
            .bsses
            .iter_mut()
            .map(|b| results::WifiLinkInputs {
                name: b.name.clone(),
                airtime_busy_ns: b.bss.airtime_busy_ns(),
                members: (0..b.members.len()).map(|m| b.bss.member_stats(m)).collect(),
            })
            .collect();
        let tcp = self
            .tcp
            .iter_mut()
            .map(|f| {
                // A window the run ended inside (its stop or last byte not reached)
                // ends with the run.
                f.close_window(f.stop_ns.min(now));
                let window = f.window.expect("the window was just closed");
                let intervals = f.intervals.take();
                let trace = f.sockets[0].is_tracing().then(|| TraceColumns::from_records(&f.sockets[0].take_trace()));
                let (client, server) = (f.sockets[0].stats(), f.sockets[1].stats());
                results::TcpFlowInputs {
                    window,
                    intervals: intervals.map(|r| r.records).unwrap_or_default(),
                    trace,
                    client: client.clone(),
                    acked_ns: f.acked_ns,
                    first_tx_ns: f.first_tx_ns,
                    hystart_exit: f.sockets[0].hystart().exit(),
                    id: f.id,
                    bytes_sent: client.bytes_sent,
                    bytes_received: server.bytes_received,
                    retransmits: client.retransmits,
                    fast_retransmits: client.fast_retransmits,
                    timeouts: client.timeouts,
                    srtt_ns: f.sockets[0].srtt(),
                    cwnd_bytes: f.sockets[0].cwnd(),
                    start_ns: f.start_ns,
                    stop_ns: f.stop_ns,
                    first_rx_ns: f.first_rx_ns,
                    first_rx_bytes: f.first_rx_bytes,
                    last_rx_ns: f.last_rx_ns,
                    completed_ns: f.completed_ns,
                    path: results::TcpPathResult {
                        mss_bytes: f.sockets[0].smss(),
                        path_mtu_bytes: f.sockets[0].effective_mtu(),
                        frag_needed_received: client.frag_needed,
                        mss_reductions: client.mss_reductions,
                        black_holes_detected: client.black_holes,
                        mtu_probes: client.mtu_probes,
                        mtu_probes_failed: client.mtu_probes_failed,
                        longest_stall_ns: f.longest_stall_ns,
                        stall_at_end_ns: f.stall_at_end_ns,
                    },
                }
            })
            .collect();
        let adaptive = self
            .upstreams
            .iter()
            .map(|u| {
                u.result(
                    self.nodes[u.config.node as usize].name.clone(),
                    self.nodes[u.config.peer as usize].name.clone(),
                )
            })
            .collect();
        let mut results = results::collect(results::Inputs {
            tcp,
            config: &self.config,
            nodes: &self.nodes,
            links: self.links.iter().map(line_result).chain(atm_links).collect(),
            wifi,
            stats: &self.stats,
            echo: self.echo.iter().map(|(&id, e)| (id, (&e.forward, &e.rtt))).collect(),
            drop_counts: &self.drop_counts,
            drop_log: &self.drop_log,
            events: self.engine.events_processed(),
            now,
        });
        results.atm = atm_stats;
        for (flow, c) in results.flows.iter_mut().zip(flow_conservation) {
            flow.conservation = Some(c);
        }
        // Links come as lines, then ATM links, then 802.11 cells (see `collect`).
        let (lines, wifi) = (line_conservation.len(), wifi_conservation.len());
        let atm = results.links.len() - lines - wifi;
        for (link, c) in results.links.iter_mut().take(lines).zip(line_conservation) {
            link.conservation = c;
        }
        for (link, c) in results.links.iter_mut().skip(lines + atm).zip(wifi_conservation) {
            link.conservation = c;
        }
        census::check(&results);
        results.adaptive = adaptive;
        results
    }
}

/// Builds a BSS from its configuration, and tells each member node the cipher cost of
/// its 802.11 port.
fn bss_state(
    config: &SimConfig,
    w: &crate::config::WifiConfig,
    id: u32,
    index: usize,
    nodes: &mut [Node],
) -> Result<BssState, RunError> {
    let field = |f: &str| format!("links[{index}].{f}");
    let members: Vec<(u32, u16)> = w.ap.iter().chain(w.stations.iter()).map(|r| (r.node, r.port)).collect();
    let mut params = BssParams::from_names(&w.standard, &w.preamble, w.rate_bps, members.len(), w.queue_frames)
        .map_err(|message| RunError::Config(ConfigError { field: field("standard"), message }))?;
    params.member_queue_frames = w.member_queue_frames.clone();
    params.phy.control_preamble = match w.control_preamble.as_str() {
        "bss" => params.phy.preamble,
        "long" => crate::wifi::Preamble::Long,
        other => {
            return Err(RunError::Config(ConfigError {
                field: field("control_preamble"),
                message: format!("control_preamble must be \"bss\" or \"long\", not {other:?}"),
            }))
        }
    };
    params.control_preamble_long = w.control_preamble == "long";
    if !w.member_preamble.is_empty() && w.member_preamble.len() != members.len() {
        return Err(RunError::Config(ConfigError {
            field: field("member_preamble"),
            message: format!("{} preambles for {} members", w.member_preamble.len(), members.len()),
        }));
    }
    params.member_preamble = w
        .member_preamble
        .iter()
        .map(|p| match p.as_str() {
            "long" => Ok(crate::wifi::Preamble::Long),
            "short" if w.standard != "802.11" => Ok(crate::wifi::Preamble::Short),
            other => Err(RunError::Config(ConfigError {
                field: field("member_preamble"),
                message: format!("a member's preamble must be \"long\" or \"short\" (802.11b/g), not {other:?}"),
            })),
        })
        .collect::<Result<_, _>>()?;
    params.access =
        w.access.parse().map_err(|message| RunError::Config(ConfigError { field: field("access"), message }))?;
    params.rts_threshold = w.rts_threshold as usize;
    params.short_retry_limit = w.retry_limit;
    params.link_acks = w.link_acks;
    params.hears = w.hears.clone();
    params.frame_error_rate = w.frame_error_rate.clone();
    params.check().map_err(|message| {
        let key = message.split(':').next().filter(|k| !k.contains(' ')).unwrap_or("hears").to_string();
        RunError::Config(ConfigError { field: field(&key), message })
    })?;
    let foreign: ForeignSource = w
        .foreign_source
        .parse()
        .map_err(|message| RunError::Config(ConfigError { field: field("foreign_source"), message }))?;
    let cipher = LinkCipher::from_name(&w.security)
        .map_err(|message| RunError::Config(ConfigError { field: field("security"), message }))?;
    let macs: Vec<Mac> = members.iter().map(|&(n, p)| Mac(config.nodes[n as usize].ports[p as usize].mac)).collect();
    let has_ap = w.ap.is_some();
    if let Some(channel) = w.channel.filter(|c| !(1..=14).contains(c)) {
        return Err(RunError::Config(ConfigError {
            field: field("channel"),
            message: format!("a 2.4 GHz channel is 1 to 14, not {channel}"),
        }));
    }
    if let Some(b) = &w.beacon {
        if !has_ap {
            return Err(RunError::Config(ConfigError {
                field: field("beacon"),
                message: "beacons need an access point".into(),
            }));
        }
        let rate = b
            .rate_bps
            .is_multiple_of(1000)
            .then(|| crate::wifi::Rate::from_kbps(b.rate_bps / 1000))
            .flatten()
            .filter(|r| params.phy.supports(*r))
            .ok_or_else(|| {
                RunError::Config(ConfigError {
                    field: field("beacon.rate_bps"),
                    message: format!("{} bit/s is not a rate of {}", b.rate_bps, w.standard),
                })
            })?;
        if b.interval_ns == 0 || !b.interval_ns.is_multiple_of(TU_NS) || b.interval_ns / TU_NS > u64::from(u16::MAX) {
            return Err(RunError::Config(ConfigError {
                field: field("beacon.interval_ns"),
                message: format!(
                    "the beacon interval is a whole number of TU (1024 us) from 1 to 65535, not {} ns",
                    b.interval_ns
                ),
            }));
        }
        if b.ssid.len() > 32 {
            return Err(RunError::Config(ConfigError {
                field: field("beacon.ssid"),
                message: "an SSID has at most 32 bytes (IEEE 802.11-2020 §9.4.2.2)".into(),
            }));
        }
        let ap_mac =
            Mac(config.nodes[w.ap.expect("has an AP").node as usize].ports[w.ap.expect("has an AP").port as usize].mac);
        let mpdu = beacon_mpdu(w, b, ap_mac, &params.phy);
        params.beacon = Some(BeaconParams { interval: b.interval_ns, rate, mpdu });
    }
    // An IBSS's BSSID is locally administered and random in the standard (§11.1.4);
    // the first station's MAC with the U/L bit set stands in, deterministically.
    let bssid = if has_ap {
        macs[0]
    } else {
        Mac([0x02, macs[0].0[1], macs[0].0[2], macs[0].0[3], macs[0].0[4], macs[0].0[5]])
    };
    let adapters = members
        .iter()
        .enumerate()
        .map(|(i, _)| {
            let role = if has_ap && i == 0 {
                WifiRole::AccessPoint { bssid }
            } else if has_ap {
                WifiRole::Station { mac: macs[i], bssid }
            } else {
                WifiRole::AdHoc { mac: macs[i], bssid }
            };
            Adapter::new(role, foreign, w.wds_members.get(i).copied().unwrap_or(w.wds), cipher.clone())
        })
        .collect::<Vec<_>>();
    for (i, &(node, port)) in members.iter().enumerate() {
        let cost = adapters[i].cipher.cost();
        let cycles = &config.nodes[node as usize].cpu.cycles;
        let per_byte = match cost {
            CipherCost::None => 0.0,
            CipherCost::Rc4 => cycles.per_byte_rc4,
            CipherCost::Aes => cycles.per_byte_aes,
        };
        nodes[node as usize].set_port_cipher_cost(port, per_byte);
    }
    let mut bss = Bss::new(params, RunSeed(config.seed), u64::from(id));
    if config.capture {
        bss.capture_air();
    }
    Ok(BssState {
        name: w.name.clone(),
        channel: w.channel,
        bss,
        members,
        adapters,
        macs,
        has_ap,
        wds: w.wds,
        behind: BTreeMap::new(),
        timer: None,
        relay: w.relay,
        delay_ns: w.delay_ns,
        in_flight: VecDeque::new(),
    })
}

/// 1 TU = 1024 µs (IEEE 802.11-2020 §3.1), in ns.
const TU_NS: u64 = 1_024_000;

/// The AP's Beacon frame (IEEE 802.11-2020 §9.3.3.2, Table 9-27), no FCS: the header to
/// the broadcast address from the BSSID, Timestamp (written at transmission), Beacon
/// Interval (TU), Capability (ESS; Privacy with a cipher; Short Preamble; Short Slot
/// Time in an ERP-only cell), SSID, Supported Rates (basic ones flagged, §9.4.2.3), the
/// DS Parameter Set when the channel is known, a TIM with DTIM period 1 and no buffered
/// frames, and for 802.11g the ERP element and Extended Supported Rates.
fn beacon_mpdu(
    w: &crate::config::WifiConfig,
    b: &crate::config::BeaconConfig,
    bssid: Mac,
    phy: &crate::wifi::PhyParams,
) -> Vec<u8> {
    use crate::wifi::{Preamble, Rate, Standard};
    let mut f = vec![0x80, 0x00, 0, 0];
    f.extend_from_slice(&[0xff; 6]);
    f.extend_from_slice(&bssid.0);
    f.extend_from_slice(&bssid.0);
    f.extend_from_slice(&[0, 0]); // Sequence Control, written at the TBTT
    f.extend_from_slice(&[0; 8]); // Timestamp, written at transmission
    f.extend_from_slice(&((b.interval_ns / TU_NS) as u16).to_le_bytes());
    let mut capability: u16 = 0x0001; // ESS (§9.4.1.4)
    if w.security != "open" {
        capability |= 0x0010; // Privacy
    }
    if phy.preamble == Preamble::Short {
        capability |= 0x0020; // Short Preamble
    }
    if phy.standard == Standard::Dot11g && phy.slot == crate::wifi::phy::SHORT_SLOT {
        capability |= 0x0400; // Short Slot Time
    }
    f.extend_from_slice(&capability.to_le_bytes());
    f.push(0); // SSID
    f.push(b.ssid.len() as u8);
    f.extend_from_slice(b.ssid.as_bytes());
    let mut rates: Vec<Rate> = match (phy.standard, w.standard.as_str()) {
        (Standard::Dot11g, _) => Rate::DSSS_CCK.into_iter().chain(Rate::ERP_OFDM).collect(),
        (_, "802.11") => vec![Rate::Dsss1, Rate::Dsss2],
        _ => Rate::DSSS_CCK.to_vec(),
    };
    rates.sort_by_key(|r| r.kbps());
    let octets: Vec<u8> =
        rates.iter().map(|r| (r.kbps() / 500) as u8 | if phy.basic_rates.contains(r) { 0x80 } else { 0 }).collect();
    let (supported, extended) = octets.split_at(octets.len().min(8));
    f.push(1); // Supported Rates
    f.push(supported.len() as u8);
    f.extend_from_slice(supported);
    if let Some(channel) = w.channel {
        f.extend_from_slice(&[3, 1, channel]); // DS Parameter Set
    }
    f.extend_from_slice(&[5, 4, 0, 1, 0, 0]); // TIM: DTIM count 0, period 1, no traffic buffered
    if phy.standard == Standard::Dot11g {
        let non_erp = phy.protection != crate::wifi::Protection::None;
        f.extend_from_slice(&[42, 1, if non_erp { 0x03 } else { 0x00 }]); // ERP: NonERP_Present, Use_Protection
        if !extended.is_empty() {
            f.push(50); // Extended Supported Rates
            f.push(extended.len() as u8);
            f.extend_from_slice(extended);
        }
    }
    f
}

/// A PPDU on the air as a LINKTYPE_IEEE802_11_RADIOTAP record: a radiotap header
/// (radiotap.org: version 0; Flags with short preamble, Rate in 500 kb/s, and Channel
/// when known) and the MPDU without FCS; control frames are built from their fields
/// (IEEE 802.11-2020 §9.3.1: RTS FC+Duration+RA+TA, CTS and Ack FC+Duration+RA).
fn air_record(frame: &AirFrame, macs: &[Mac], channel: Option<u8>) -> Vec<u8> {
    use crate::wifi::phy::ModulationClass;
    let mut present: u32 = (1 << 1) | (1 << 2); // Flags, Rate
    if channel.is_some() {
        present |= 1 << 3;
    }
    let mut out = vec![0u8, 0, 0, 0];
    out.extend_from_slice(&present.to_le_bytes());
    out.push(if frame.short_preamble { 0x02 } else { 0x00 }); // Flags
    out.push((frame.rate.kbps() / 500) as u8); // Rate
    if let Some(ch) = channel {
        // Offset 10 is 2-aligned, as the Channel field needs.
        let mhz: u16 = if ch == 14 { 2484 } else { 2407 + 5 * u16::from(ch) };
        let modulation: u16 = match frame.rate.class() {
            ModulationClass::DsssCck => 0x0020, // CCK
            ModulationClass::ErpOfdm => 0x0040, // OFDM
        };
        out.extend_from_slice(&mhz.to_le_bytes());
        out.extend_from_slice(&(0x0080 | modulation).to_le_bytes()); // 2 GHz spectrum
    }
    let len = out.len() as u16;
    out[2..4].copy_from_slice(&len.to_le_bytes());
    let duration = frame.duration_us.to_le_bytes();
    let ra = |m: Option<usize>| macs[m.unwrap_or(frame.sender)].0;
    match frame.kind {
        FrameKind::Data => out.extend_from_slice(frame.mpdu.as_deref().unwrap_or_default()),
        FrameKind::Rts => {
            out.extend_from_slice(&[0xb4, 0x00, duration[0], duration[1]]);
            out.extend_from_slice(&ra(frame.receiver));
            out.extend_from_slice(&macs[frame.sender].0);
        }
        FrameKind::Cts | FrameKind::CtsToSelf => {
            out.extend_from_slice(&[0xc4, 0x00, duration[0], duration[1]]);
            out.extend_from_slice(&ra(frame.receiver));
        }
        FrameKind::Ack => {
            out.extend_from_slice(&[0xd4, 0x00, duration[0], duration[1]]);
            out.extend_from_slice(&ra(frame.receiver));
        }
    }
    out
}

/// The report of a point-to-point line.
fn line_result(line: &Line) -> results::LinkResult {
    let lost: u64 = line.impair.iter().map(|d| d.lost).sum();
    match &line.kind {
        LineKind::Ethernet(l) => results::LinkResult {
            name: l.name.clone(),
            kind: "ethernet",
            utilization: l.dirs.iter().map(|d| d.busy_ns as f64).collect(),
            frames: l.dirs.iter().map(|d| d.frames_sent).collect(),
            drops: l.dirs.iter().map(|d| d.drops).sum::<u64>() + lost,
            members: Vec::new(),
            conservation: Vec::new(),
        },
        LineKind::Serial { name, line, .. } => results::LinkResult {
            name: name.clone(),
            kind: "serial",
            utilization: line.dirs.iter().map(|d| d.busy_ns as f64).collect(),
            frames: line.dirs.iter().map(|d| d.frames_sent).collect(),
            drops: line.dirs.iter().map(|d| d.drops).sum::<u64>() + lost,
            members: Vec::new(),
            conservation: Vec::new(),
        },
    }
}

/// Whether the serializer of `from` is sending a frame.
fn is_busy(line: &Line, from: usize) -> bool {
    match &line.kind {
        LineKind::Ethernet(l) => l.dirs[from].busy,
        LineKind::Serial { line, .. } => line.dirs[from].busy,
    }
}

/// The adaptive upstreams of the configuration, each checked against the links: its
/// radio ports in one 802.11 cell, its modem port on a serial line whose other end is
/// the peer.
fn upstreams(
    config: &SimConfig,
    attachments: &[Vec<Attachment>],
    bsses: &[BssState],
) -> Result<Vec<Upstream>, RunError> {
    let mut out = Vec::new();
    for (i, a) in config.adaptive.iter().enumerate() {
        let fail = |field: &str, message: String| {
            RunError::Config(ConfigError { field: format!("adaptive[{i}].{field}"), message })
        };
        a.check().map_err(|(field, message)| fail(field, message))?;
        let port = |node: u32, port: u16| attachments.get(node as usize).and_then(|p| p.get(port as usize)).copied();
        let (Some(Attachment::Wifi { bss, .. }), Some(Attachment::Wifi { bss: peer_bss, .. })) =
            (port(a.node, a.radio_port), port(a.peer, a.peer_radio_port))
        else {
            return Err(fail("radio_port", "the radio ports of both routers must be on an 802.11 link".into()));
        };
        if bss != peer_bss {
            return Err(fail(
                "peer_radio_port",
                format!(
                    "the two routers' radio ports are on different cells ({} and {})",
                    bsses[bss as usize].name, bsses[peer_bss as usize].name
                ),
            ));
        }
        let Some(Attachment::Ethernet { link, end }) = port(a.node, a.modem_port) else {
            return Err(fail("modem_port", "the modem port must be on a serial line".into()));
        };
        let modem = config.links.iter().filter(|l| !matches!(l, LinkConfig::Wifi(_))).nth(link as usize);
        let far = match modem {
            Some(LinkConfig::Serial { a: x, b: y, .. }) => {
                if end == 0 {
                    y
                } else {
                    x
                }
            }
            _ => return Err(fail("modem_port", "the modem port must be on a serial line".into())),
        };
        if far.node != a.peer {
            return Err(fail(
                "modem_port",
                format!("the modem line's other end is node {}, not the peer {}", far.node, a.peer),
            ));
        }
        let mac = |node: u32, port: u16| Mac(config.nodes[node as usize].ports[port as usize].mac);
        out.push(Upstream::new(a.clone(), mac(a.node, a.radio_port), mac(a.peer, a.peer_radio_port), link, end));
    }
    Ok(out)
}

/// A serial line's clocking and PPP options, as the configuration gives them.
struct SerialPpp<'a> {
    clocking: &'a str,
    acfc: bool,
    pfc: bool,
    fcs_bits: u32,
}

/// A serial line from its configuration, refusing what it cannot be with the field named.
#[allow(clippy::too_many_arguments)]
fn serial_line(
    index: usize,
    rate_bps: u64,
    format: &str,
    framing: &str,
    ppp: SerialPpp<'_>,
    compression: f64,
    delay_ns: u64,
    queue_frames: usize,
) -> Result<SerialLine, RunError> {
    let fail = |field: &str, message: String| {
        RunError::Config(ConfigError { field: format!("links[{index}].{field}"), message })
    };
    let mut config = SerialConfig::new(rate_bps);
    config.format = format.parse().map_err(|_| fail("format", format!("not a character format: {format:?}")))?;
    config.framing = match framing {
        "slip" => Framing::Slip(wire::slip::Framing { leading_end: true }),
        "cslip" => Framing::cslip_default(),
        "ppp" => Framing::ppp_default(),
        other => return Err(fail("framing", format!("expected slip, cslip or ppp, found {other:?}"))),
    };
    let fcs = match ppp.fcs_bits {
        16 => wire::hdlc::Fcs::Fcs16,
        32 => wire::hdlc::Fcs::Fcs32,
        other => return Err(fail("fcs_bits", format!("expected 16 or 32 (RFC 1662 Appendix C), found {other}"))),
    };
    if framing != "ppp" && (ppp.acfc || ppp.pfc || ppp.fcs_bits != 16) {
        return Err(fail(
            "framing",
            format!("ACFC, PFC and the FCS length are PPP options, but the framing is {framing:?}"),
        ));
    }
    if let Framing::Ppp { hdlc, pfc } = &mut config.framing {
        hdlc.acfc = ppp.acfc;
        hdlc.fcs = fcs;
        *pfc = ppp.pfc;
    }
    match ppp.clocking {
        "async" => {}
        "sync" => match config.framing {
            Framing::Ppp { hdlc, pfc } => config.framing = Framing::PppSync { hdlc, pfc },
            _ => {
                return Err(fail(
                    "clocking",
                    format!(
                        "a synchronous line carries PPP in bit-synchronous HDLC framing (RFC 1662 §5), not {framing:?}"
                    ),
                ))
            }
        },
        other => return Err(fail("clocking", format!("expected async or sync, found {other:?}"))),
    }
    // The ratio as a fraction over 1000 (2.0 → 2000/1000).
    let num = (compression * 1000.0).round() as u32;
    config.compression = CompressionRatio::new(num, 1000).map_err(|e| fail("compression", e.to_string()))?;
    config.delay_ns = delay_ns;
    config.queue_frames = queue_frames;
    SerialLine::new(config).map_err(|e| {
        let field = if matches!(e, SerialError::SyncCompression) { "compression" } else { "rate_bps" };
        fail(field, e.to_string())
    })
}

fn source_node(config: &FlowConfig) -> u32 {
    match config {
        FlowConfig::Udp { from, .. }
        | FlowConfig::Ping { from, .. }
        | FlowConfig::Tcp { from, .. }
        | FlowConfig::UdpEcho { from, .. } => *from,
    }
}

/// The client side of every built flow: the start of the IANA dynamic range.
const EPHEMERAL_PORT: u16 = 49152;
/// UDP echo clients' ports: flow `i` uses this plus `i`, away from the other flows'.
const ECHO_CLIENT_PORT: u16 = 50000;

/// Linux's TCP with the flow's options.
/// Spare buffers kept for reuse: enough for a window of segments in flight.
const SPARE_FRAMES: usize = 64;
/// Spare [`Effects`] kept (see `World::spare_fx`): more than the deepest nesting of a
/// packet's handling needs.
const SPARE_EFFECTS: usize = 16;

/// A frame buffer holding the TCP segment `repr` with `payload` after
/// [`crate::ip::TRANSPORT_OFFSET`] octets, checksummed for `src` → `dst`; a spare buffer
/// when there is one, so a bulk transfer allocates no frame per segment.
fn tcp_frame(
    spare: &mut Vec<Vec<u8>>,
    repr: &tcp::Repr,
    src: &Ipv4Addr,
    dst: &Ipv4Addr,
    payload: tcp::Payload<'_>,
) -> Vec<u8> {
    let mut frame = spare.pop().unwrap_or_default();
    frame.clear();
    repr.emit_at(&mut frame, crate::ip::TRANSPORT_OFFSET, src, dst, payload);
    frame
}

/// Keeps a delivered packet's buffer for [`tcp_frame`].
fn recycle(spare: &mut Vec<Vec<u8>>, buffer: Vec<u8>) {
    if spare.len() < SPARE_FRAMES {
        spare.push(buffer);
    }
}

fn tcp_config(options: &crate::config::TcpOptions, mtu: u32) -> Result<TcpConfig, String> {
    let mut config = TcpConfig::for_mtu(mtu);
    if let Some(cc) = options.congestion {
        config.congestion_control = cc;
    }
    if let Some(mss) = options.mss {
        config.mss = mss;
    }
    if let Some(b) = options.send_buffer {
        config.send_buffer = b;
    }
    if let Some(b) = options.recv_buffer {
        config.recv_buffer = b;
    }
    config.max_window = options.max_window.or(config.max_window);
    config.sack = options.sack.unwrap_or(config.sack);
    config.timestamps = options.timestamps.unwrap_or(config.timestamps);
    config.window_scaling = options.window_scaling.unwrap_or(config.window_scaling);
    if let Some(d) = options.delayed_ack_ns {
        config.delayed_ack = (d > 0).then_some(Duration::from_nanos(d));
    }
    if let Some(d) = options.min_rto_ns {
        config.min_rto = Duration::from_nanos(d);
    }
    if let Some(d) = options.rto_backoff_cap_ns {
        config.rto_backoff_cap = Some(Duration::from_nanos(d));
    }
    config.hystart = options.hystart.unwrap_or(config.hystart);
    config.cwnd_growth = options.cwnd_growth.unwrap_or(config.cwnd_growth);
    config.cubic_alpha = options.cubic_alpha.unwrap_or(config.cubic_alpha);
    if let Some(l) = options.slow_start_limit {
        config.slow_start_limit = (l > 0).then_some(l);
    }
    if let Some(d) = options.initial_rto_ns {
        if d == 0 {
            return Err("an initial RTO of 0 would retransmit the SYN at once".into());
        }
        config.initial_rto = Duration::from_nanos(d);
    }
    config.nagle = options.nagle.unwrap_or(config.nagle);
    config.ack_on_push = options.ack_on_push.unwrap_or(config.ack_on_push);
    config.delayed_ack_clock = options.delayed_ack_clock.unwrap_or(config.delayed_ack_clock);
    if let Some(w) = options.send_low_water {
        config.send_low_water = (w > 0).then_some(w);
    }
    config.write_size = options.write_size.unwrap_or(config.write_size);
    config.rack = options.rack.unwrap_or(config.rack);
    config.tlp = options.tlp.unwrap_or(config.tlp);
    config.prr = options.prr.unwrap_or(config.prr);
    config.delayed_ack_segments = options.delayed_ack_segments.unwrap_or(config.delayed_ack_segments).max(1);
    config.delayed_ack_any_segment = options.delayed_ack_any_segment.unwrap_or(config.delayed_ack_any_segment);
    config.window_update_on_read = options.window_update_on_read.unwrap_or(config.window_update_on_read);
    if let Some(n) = options.dup_ack_threshold {
        if n == 0 {
            return Err("a duplicate-ACK threshold of 0 would retransmit on every ACK".into());
        }
        config.dup_ack_threshold = n;
    }
    if let Some(w) = options.initial_window {
        if w == 0 {
            return Err("an initial window of 0 segments never sends".into());
        }
        config.initial_window = w;
    }
    config.pmtu_discovery = options.pmtu_discovery.unwrap_or(config.pmtu_discovery);
    if let Some(p) = options.mtu_probing {
        if p > 2 {
            return Err(format!(
                "mtu_probing {p}: 0 (off), 1 (after a black hole) or 2 (always), as Linux's tcp_mtu_probing"
            ));
        }
        config.mtu_probing = p;
    }
    if let Some(b) = options.base_mss {
        if b < 48 {
            return Err(format!("base_mss {b}: at least Linux's tcp_min_snd_mss 48"));
        }
        // Linux's tcp_mtu_probing takes min(tcp_base_mss, …) and the search never goes
        // above the MSS: on a path whose MSS is below 1024 (576-byte MTUs) the search
        // starts where the connection already is.
        config.base_mss = b.min(config.mss);
    }
    // A window smaller than one segment could never carry a full segment: SWS
    // avoidance (RFC 9293 §3.8.6.2) would hold all data but the override trickle.
    for (name, size) in [
        ("send_buffer", Some(config.send_buffer)),
        ("recv_buffer", Some(config.recv_buffer)),
        ("max_window", config.max_window),
    ] {
        if let Some(size) = size.filter(|&b| b < u32::from(config.mss)) {
            return Err(format!("{name} of {size} bytes is smaller than one {}-byte segment (the MSS)", config.mss));
        }
    }
    Ok(config)
}

fn budget(e: EngineError) -> RunError {
    RunError::Budget(e.to_string())
}

/// A one-line description of a dropped IPv4 or ARP packet, and its flow if it carries a
/// probe.
fn describe(packet: &[u8]) -> (Option<u32>, String) {
    if let Ok(arp::Repr::EthernetIpv4 {
        operation,
        source_hardware_addr,
        source_protocol_addr,
        target_protocol_addr,
        ..
    }) = arp::Packet::new_checked(packet).and_then(|p| arp::Repr::parse(&p))
    {
        let text = match operation {
            arp::Operation::Request => format!(
                "ARP request who-has {target_protocol_addr} tell {source_protocol_addr} ({source_hardware_addr})"
            ),
            arp::Operation::Reply => {
                format!("ARP reply {source_protocol_addr} is-at {source_hardware_addr}, to {target_protocol_addr}")
            }
            _ => "ARP".to_string(),
        };
        return (None, text);
    }
    let Ok(ip) = ipv4::Packet::new_checked(packet) else { return (None, format!("{} bytes", packet.len())) };
    let (src, dst): (Ipv4Addr, Ipv4Addr) = (ip.src_addr(), ip.dst_addr());
    match ip.next_header() {
        IpProtocol::Udp => {
            let flow =
                udp::Packet::new_checked(ip.payload()).ok().and_then(|d| Probe::parse(d.payload())).map(|p| p.flow);
            (flow, format!("UDP {src} -> {dst}, {} bytes", packet.len()))
        }
        IpProtocol::Icmp => {
            let flow = icmpv4::Packet::new_checked(ip.payload()).ok().and_then(|p| match icmpv4::Repr::parse(&p) {
                Ok(icmpv4::Repr::EchoRequest { data, .. } | icmpv4::Repr::EchoReply { data, .. }) => {
                    Probe::parse(data).map(|p| p.flow)
                }
                _ => None,
            });
            (flow, format!("ICMP {src} -> {dst}, {} bytes", packet.len()))
        }
        IpProtocol::Tcp => {
            (None, format!("TCP {src} -> {dst}, {} bytes{}", packet.len(), if ip.dont_frag() { ", DF" } else { "" }))
        }
        other => (None, format!("IPv4 protocol {} {src} -> {dst}", u8::from(other))),
    }
}
