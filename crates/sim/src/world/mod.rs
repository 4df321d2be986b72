//! The simulated network: nodes, links and traffic, driven by the engine.
//!
//! Events are small plain values; frames in flight live in a slab and events carry their
//! slot. Every model is sans-IO (the IP stack, bridges, the 802.11 medium, the CPU): the
//! world is the only place that turns their "wake me at" into engine timers, each model's
//! through its [`WakeTimer`] slot and its one re-arm rule (`crate::wake`).
//!
//! The chapters, as smoltcp's `iface/interface/` has them: [`build`] makes a world from its
//! configuration, [`events`] runs it (one handler per kind of event), [`nodes`] passes frames
//! through the nodes' CPUs, [`lines`] and [`wifi`] carry them (point-to-point lines, 802.11
//! cells; `atm` the ATM network), [`traffic`] and [`tcp_flows`] are the test applications,
//! [`adaptive_router`] is seed 004's router, [`capture`] hands frames to a capture, and
//! [`results`] and `census` say what the run did and where every datagram went.

use crate::app::probe::Probe;
use crate::app::source::Source;
use crate::app::stats::{Arrival, FlowStats, Histogram};
use crate::atm::{AtmEvent, AtmNet, AtmOut};
use crate::capture::{CaptureSink, Capturing};
use crate::config::{ConfigError, FlowConfig, LinkConfig, SimConfig};
use crate::config::{Impairment, LossConfig};
use crate::conservation::FlowLedger;
use crate::engine::{Engine, EngineError, Reservation};
use crate::link::ethernet::EthernetLink;
use crate::link::impair::{Bernoulli, GilbertElliott, LossModel, Policer, Shaper};
use crate::link::line::{Arrival as LineArrival, DirectionImpairment, Gate, Line, LineKind};
use crate::link::serial::{CompressionRatio, Framing, SerialConfig, SerialError, SerialLine};
use crate::link::{Link, LinkEvent, Offer};
use crate::node::adaptive_router::{AdaptiveRouter, Tx};
use crate::node::{Effects, Job, Node};
use crate::results::{DropRecord, Results};
use crate::rng::RunSeed;
use crate::tcp::report::{IntervalRecorder, TraceColumns};
use crate::tcp::{TcpConfig, TcpSocket};
use crate::time::Duration;
use crate::time::SimTime;
use crate::wake::WakeTimer;
use crate::wifi::adapter::{Adapter, CipherCost, ForeignSource, LinkCipher, Role as WifiRole};
use crate::wifi::bss::{AirFrame, BeaconParams, Bss, BssParams, FrameKind};
use crate::wifi::cell::{Handled, WifiCell};
use std::collections::BTreeMap;
use std::net::Ipv4Addr;
use wire::ethernet::{self, Address as Mac};
use wire::{arp, icmpv4, ipv4, tcp, udp, IpProtocol};

mod adaptive_router;
mod atm;
mod build;
mod capture;
mod census;
mod events;
mod lines;
mod nodes;
mod results;
mod tcp_flows;
mod traffic;
mod wifi;

use adaptive_router::*;
use lines::*;
// A line built from the plan as the world builds it, for crates/emu.
pub use atm::atm_net_of_plan;
pub use lines::line_of_plan;
use tcp_flows::*;
use traffic::*;
pub use wifi::cell_of_plan;
use wifi::*;

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
    AdaptiveRouter { index: u32 },
    /// The first frame in flight on the air of `bss` (its propagation delay) reached its receiver.
    WifiArrive { bss: u32 },
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
    links: Vec<LineSlot>,
    bsses: Vec<CellSlot>,
    attachments: Vec<Vec<Attachment>>,
    /// Buffers of delivered packets, reused for the TCP segments sent (see `tcp_frame`).
    spare_frames: Vec<Vec<u8>>,
    /// Emptied [`Effects`] whose vectors keep their capacity, and scratch vectors of the
    /// per-packet path: taken and given back around each use (a nested use finds them
    /// taken and starts a new one), so a steady flow allocates nothing per packet.
    spare_fx: Vec<Effects>,
    scratch_outs: Vec<crate::node::ip::Out>,
    scratch_segments: Vec<(usize, Vec<u8>)>,
    ip_timers: Vec<WakeTimer>,
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
    /// Seed 004's adaptive routers (see `crate::node::adaptive_router`).
    adaptive_routers: Vec<AdaptiveRouter>,
    /// Each adaptive router's timer (`crate::wake`), by index.
    adaptive_timers: Vec<WakeTimer>,
    /// How long each source's start has waited for its PPP link (see `send_from`).
    deferred_ns: Vec<u64>,
    /// When the run stops: the configured duration, moved later by the longest wait of
    /// a source for its link, so that a test whose PPPoE session came up late still
    /// gets its whole duration and drain (as one runs iperf -t 10 once pppd is up).
    end_ns: u64,
}

fn budget(e: EngineError) -> RunError {
    RunError::Budget(e.to_string())
}
