//! The ATM part of the plan: links of cells, switches, PVC cross-connects, logical IP
//! subnets, LAN emulation and MPOA.
//!
//! Every field is filled by the lowering (`qoslab.lower`), which owns the scenario
//! language's defaults; the defaults written here are the same ones, for the Rust tests
//! and for plans written by hand.

use std::net::Ipv4Addr;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::link::PortRef;

/// One ATM link between two ports (host NIC to switch, switch to switch).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AtmLinkConfig {
    pub name: String,
    pub a: PortRef,
    pub b: PortRef,
    /// The physical layer, which sets the cell rate (default OC-3c).
    #[serde(default)]
    pub phy: AtmPhy,
    /// Overrides the PHY's cell rate, b/s of 53-octet cells.
    #[serde(default)]
    pub cell_rate_bps: Option<u64>,
    /// One-way propagation delay, ns (about 5 µs per km of fibre).
    #[serde(default)]
    pub delay_ns: u64,
    /// RFC 2684 encapsulation on the link's data VCs (default LLC/SNAP).
    #[serde(default)]
    pub encapsulation: AtmEncapsulation,
    /// Permanent virtual channels on this link.
    #[serde(default)]
    pub pvcs: Vec<PvcConfig>,
    /// A host NIC's transmit queue, in AAL5 frames (the ForeRunner driver's ring; an
    /// uncalibrated 64, of the order of NDIS transmit rings).
    #[serde(default = "default_nic_queue")]
    pub nic_queue_frames: usize,
}

/// The physical layer of an ATM link.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, JsonSchema)]
pub enum AtmPhy {
    /// SONET OC-3c / SDH STM-1: 149.76 Mb/s of cells (G.707 §10.1.1).
    #[default]
    #[serde(rename = "oc3")]
    Oc3,
    /// SONET OC-12c / SDH STM-4 (G.707 §10.1.2).
    #[serde(rename = "oc12")]
    Oc12,
    /// ATM Forum 25.6 Mb/s (af-phy-0040.000).
    #[serde(rename = "25m")]
    Atm25,
}

/// RFC 2684 encapsulation of routed and bridged PDUs on a VC.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum AtmEncapsulation {
    /// LLC/SNAP (RFC 2684 §5; RFC 2225 §6's default for CLIP): 8 octets per PDU.
    #[default]
    LlcSnap,
    /// VC multiplexing (RFC 2684 §6.1, null encapsulation): no header.
    VcMux,
}
fn default_nic_queue() -> usize {
    64
}

/// A PVC as seen on one link: its numbers and traffic contract (ATM Forum TM 4.0 §3).
///
/// The contract is the one of cells *sent* on this link by the host at this end: the
/// host's NIC shapes to it, and every switch on the PVC's path queues those cells in
/// the queue of its service category (declare the same category at both ends of a
/// connection; each end's cells take its own).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PvcConfig {
    pub vpi: u16,
    pub vci: u16,
    #[serde(default)]
    pub service: ServiceCategory,
    /// Peak cell rate as bits per second of cells (53 octets each); `None` = line rate.
    /// The sending NIC spaces the VC's cells at most at this rate (TM 4.0 §4.5.1 GCRA
    /// with τ = 0; shaping, not policing). Needed for CBR, VBR and ABR (§3.4).
    #[serde(default)]
    pub pcr_bps: Option<u64>,
    /// VBR: sustainable cell rate, b/s of cells (TM 4.0 §3.6.1.2). Required for VBR,
    /// at most the PCR.
    #[serde(default)]
    pub scr_bps: Option<u64>,
    /// VBR: maximum burst size, cells (TM 4.0 §3.6.1.3): burst tolerance
    /// BT = (MBS − 1)(1/SCR − 1/PCR) (§4.5.2). Required for VBR, at least 1.
    #[serde(default)]
    pub mbs_cells: Option<u32>,
    /// ABR: minimum cell rate, b/s of cells (TM 4.0 §5.10.2); ACR never falls below it.
    #[serde(default)]
    pub mcr_bps: u64,
    /// ABR: initial cell rate, b/s of cells (TM 4.0 §5.10.2, the rate before the first
    /// feedback); `None` = the PCR (TM 4.0's default ICR is the PCR).
    #[serde(default)]
    pub icr_bps: Option<u64>,
    /// ABR: rate increase factor (TM 4.0 §5.10.2; a power of two from 1/32768 to 1;
    /// default 1/16): ACR += RIF × PCR on a backward RM cell with CI = NI = 0 (§5.10.4
    /// rule 8).
    #[serde(default = "default_rif")]
    pub rif: f64,
    /// ABR: rate decrease factor (TM 4.0 §5.10.2; a power of two from 1/32768 to 1;
    /// default 1/16): ACR −= RDF × ACR on a backward RM cell with CI = 1 (§5.10.4 rule 8).
    #[serde(default = "default_rdf")]
    pub rdf: f64,
}

/// TM 4.0 §5.10.2 (Table of ABR parameters): RIF and RDF default to 1/16.
pub const DEFAULT_RIF: f64 = 1.0 / 16.0;
pub const DEFAULT_RDF: f64 = 1.0 / 16.0;

fn default_rif() -> f64 {
    DEFAULT_RIF
}
fn default_rdf() -> f64 {
    DEFAULT_RDF
}

impl Default for PvcConfig {
    fn default() -> PvcConfig {
        PvcConfig {
            vpi: 0,
            vci: 0,
            service: ServiceCategory::Ubr,
            pcr_bps: None,
            scr_bps: None,
            mbs_cells: None,
            mcr_bps: 0,
            icr_bps: None,
            rif: DEFAULT_RIF,
            rdf: DEFAULT_RDF,
        }
    }
}

/// ATM Forum TM 4.0 §2 service categories.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ServiceCategory {
    /// Unspecified bit rate (§2.5): best effort, no guarantee, lowest priority at a switch.
    #[default]
    Ubr,
    /// Constant bit rate (§2.1): cells at the PCR, no more.
    Cbr,
    /// Non-real-time variable bit rate (§2.4): dual GCRA on PCR and SCR/MBS (§4.5.2).
    Vbr,
    /// Real-time variable bit rate (§2.3): the same shaping, queued with CBR at a switch.
    RtVbr,
    /// Available bit rate (§2.6, §5.10): rate set by the RM-cell feedback loop.
    Abr,
}

impl ServiceCategory {
    /// The switch queue (strict priority, 0 first) of the category. CBR and rt-VBR
    /// share the first: their contracts bound delay and its variation (TM 4.0 §2.1,
    /// §2.3: maxCTD and peak-to-peak CDV are committed), which any waiting behind other
    /// traffic would break. nrt-VBR next: it commits a cell loss ratio and its
    /// sustainable rate (§2.4) but no delay. ABR next: it is promised only its MCR and a
    /// fair share of what is left (§2.6), which its feedback loop finds — it adapts to
    /// what the higher queues leave. UBR last: no commitment at all (§2.5).
    pub fn queue(self) -> u8 {
        match self {
            ServiceCategory::Cbr | ServiceCategory::RtVbr => 0,
            ServiceCategory::Vbr => 1,
            ServiceCategory::Abr => 2,
            ServiceCategory::Ubr => 3,
        }
    }
}

/// Per-category cell buffers of a switch output port, cells. `None` = the switch's
/// `queue_cells` (so a port carrying one category behaves as one FIFO of that size).
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CategoryQueues {
    /// CBR and rt-VBR (one queue, served first).
    #[serde(default)]
    pub cbr: Option<usize>,
    #[serde(default)]
    pub vbr: Option<usize>,
    #[serde(default)]
    pub abr: Option<usize>,
    #[serde(default)]
    pub ubr: Option<usize>,
}

/// The ATM network besides its links.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AtmConfig {
    #[serde(default)]
    pub switches: Vec<SwitchConfig>,
    /// LAN emulation (ELANs, their servers and clients) and MPOA.
    #[serde(default)]
    pub lane: LaneConfig,
    /// Logical IP subnets with an ATMARP server (RFC 2225 §8.4). A host on an ATM link
    /// whose subnet has none resolves its PVCs with InATMARP only (§8.2).
    #[serde(default)]
    pub lis: Vec<LisConfig>,
    /// Signalling processing time of an end system per message, ns (the host's UNI
    /// stack; uncalibrated, 0 by default).
    #[serde(default)]
    pub host_signalling_ns: u64,
}

/// An ATM switch: a node whose ports relay cells.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SwitchConfig {
    pub node: u32,
    /// Each output port's cell buffer, cells (drop-tail). Default 1024: of the order of
    /// the per-port buffers of 1998 workgroup switches (uncalibrated).
    #[serde(default = "default_queue_cells")]
    pub queue_cells: usize,
    /// Early packet discard: a frame whose first cell finds at least this many cells
    /// queued is dropped whole (Romanow & Floyd 1995 §4; TM 4.0 §5.10 "frame discard").
    #[serde(default)]
    pub epd_threshold_cells: Option<usize>,
    /// Partial packet discard: after a cell of a frame is lost, drop the rest of that
    /// frame except its last cell (Armitage & Adams 1993; Romanow & Floyd 1995 §3).
    #[serde(default)]
    pub ppd: bool,
    /// Time the switch's call control takes per signalling message, ns (Q.2931
    /// processing; the "setup delay" per hop). Default 1 ms (uncalibrated).
    #[serde(default = "default_signalling_ns")]
    pub signalling_ns: u64,
    /// PVC cross-connects: a cell on `a` leaves on `b` and the other way.
    #[serde(default)]
    pub cross_connects: Vec<CrossConnect>,
    /// Each output port's buffer per service-category queue (see [`CategoryQueues`]).
    #[serde(default)]
    pub category_queue_cells: CategoryQueues,
    /// ABR binary feedback (TM 4.0 §5.10.6, relative-rate marking): an RM cell of an
    /// ABR VC gets CI = 1 when the ABR queue of the port its VC leaves by holds at least
    /// this many cells. Default 256: a quarter of the default 1024-cell buffer
    /// (uncalibrated; TM 4.0 leaves the threshold to the switch).
    #[serde(default = "default_abr_ci")]
    pub abr_ci_threshold_cells: usize,
}

fn default_abr_ci() -> usize {
    256
}

impl Default for SwitchConfig {
    fn default() -> SwitchConfig {
        SwitchConfig {
            node: 0,
            queue_cells: default_queue_cells(),
            epd_threshold_cells: None,
            ppd: false,
            signalling_ns: default_signalling_ns(),
            cross_connects: Vec::new(),
            category_queue_cells: CategoryQueues::default(),
            abr_ci_threshold_cells: default_abr_ci(),
        }
    }
}

fn default_queue_cells() -> usize {
    1024
}
fn default_signalling_ns() -> u64 {
    1_000_000
}

/// One end of a cross-connect: a port of the switch and the VC's numbers there.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct VcEnd {
    pub port: u16,
    pub vpi: u16,
    pub vci: u16,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CrossConnect {
    pub a: VcEnd,
    pub b: VcEnd,
}

/// A logical IP subnet and where its ATMARP server runs: on a host's ATM port, or on
/// an ATM switch (as the ForeThought and Centillion switches offered).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LisConfig {
    pub network: Ipv4Addr,
    pub prefix_len: u8,
    /// The node serving ATMARP: a switch, or a host (its port on this subnet).
    pub server: u32,
}

/// af-lane-0021.000 §5.2: C17 Aging Time, default 300 s (range 10-300 s).
pub const AGING_TIME_NS: u64 = 300_000_000_000;
/// af-mpoa-0087.000 §5.2.1 MPC-p1 Shortcut-Setup Frame Count, default 10.
pub const SHORTCUT_FRAME_COUNT: u32 = 10;
/// af-mpoa-0087.000 §5.2.1 MPC-p2 Shortcut-Setup Frame Time, default 1 s.
pub const SHORTCUT_FRAME_TIME_NS: u64 = 1_000_000_000;
/// Seed 001 Fig. 4: the Centillion 100's BUS forwards at most about 53,000 cells/s.
pub const BUS_CELLS_PER_SECOND: u64 = 53_000;

/// The LANE and MPOA part of the ATM configuration.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LaneConfig {
    #[serde(default)]
    pub elans: Vec<ElanConfig>,
    /// The port that runs the LECS; `None`: clients know their LES (§5.3.2 allows a
    /// configured LES address).
    #[serde(default)]
    pub lecs: Option<PortRef>,
    /// LE clients: ATM ports of hosts, routers and Ethernet edge devices.
    #[serde(default)]
    pub clients: Vec<LecConfig>,
    /// MPOA servers (on routers' LANE ports) and the MPCs' thresholds.
    #[serde(default)]
    pub mpoa: Option<MpoaConfig>,
    /// Clients run the flush protocol before switching a destination from the BUS to
    /// its data-direct VCC (optional in LANE v1; default on).
    #[serde(default = "default_true")]
    pub flush: bool,
    /// C17 Aging Time, ns (default 300 s).
    #[serde(default = "default_aging")]
    pub aging_time_ns: u64,
}

impl Default for LaneConfig {
    fn default() -> LaneConfig {
        LaneConfig {
            elans: Vec::new(),
            lecs: None,
            clients: Vec::new(),
            mpoa: None,
            flush: true,
            aging_time_ns: AGING_TIME_NS,
        }
    }
}

fn default_true() -> bool {
    true
}
fn default_aging() -> u64 {
    AGING_TIME_NS
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ElanConfig {
    pub name: String,
    /// The ATM port that runs the LES.
    pub les: PortRef,
    /// The ATM port that runs the BUS.
    pub bus: PortRef,
    /// BUS capacity, cells per second (53,000: seed 001 Fig. 4).
    #[serde(default = "default_bus_cells")]
    pub bus_cells_per_second: u64,
    /// BUS capacity, frames per second; `None`: no frame limit.
    #[serde(default)]
    pub bus_frames_per_second: Option<u64>,
    /// Frames the BUS holds while busy; more are dropped (uncalibrated 64).
    #[serde(default = "default_bus_queue")]
    pub bus_queue_frames: usize,
}

fn default_bus_cells() -> u64 {
    BUS_CELLS_PER_SECOND
}
fn default_bus_queue() -> usize {
    64
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LecConfig {
    pub port: PortRef,
    /// Index into `elans`.
    pub elan: usize,
    /// A proxy client (a bridge: an Ethernet edge device), §5.1.1.
    #[serde(default)]
    pub proxy: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MpoaConfig {
    /// The LANE ports of routers that run an MPS.
    pub servers: Vec<PortRef>,
    /// MPC-p1 (af-mpoa-0087.000 §5.2.1), default 10.
    #[serde(default = "default_shortcut_count")]
    pub shortcut_frames: u32,
    /// MPC-p2, ns (default 1 s).
    #[serde(default = "default_shortcut_time")]
    pub shortcut_time_ns: u64,
}

fn default_shortcut_count() -> u32 {
    SHORTCUT_FRAME_COUNT
}
fn default_shortcut_time() -> u64 {
    SHORTCUT_FRAME_TIME_NS
}
