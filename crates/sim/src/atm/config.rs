//! The ATM part of a simulation's configuration, as the Python lowering writes it.
//!
//! Every field is filled by the lowering (`qoslab.backends.sim`), which owns the
//! scenario language's defaults; the defaults written here are the same ones, for the
//! Rust tests and for configurations written by hand.

use std::net::Ipv4Addr;

use serde::{Deserialize, Serialize};

use crate::config::PortRef;

/// One ATM link between two ports (host NIC to switch, switch to switch).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AtmLinkConfig {
    pub name: String,
    pub a: PortRef,
    pub b: PortRef,
    /// "oc3" (149.76 Mb/s of cells, G.707 §10.1.1), "oc12" or "25m" (af-phy-0040).
    #[serde(default = "default_phy")]
    pub phy: String,
    /// Overrides the PHY's cell rate, b/s of 53-octet cells.
    #[serde(default)]
    pub cell_rate_bps: Option<u64>,
    /// One-way propagation delay, ns (about 5 µs per km of fibre).
    #[serde(default)]
    pub delay_ns: u64,
    /// RFC 2684 encapsulation on the link's data VCs: "llc-snap" (RFC 2225 §6's
    /// default for CLIP) or "vc-mux" (RFC 2684 §6.1, null encapsulation).
    #[serde(default = "default_encapsulation")]
    pub encapsulation: String,
    /// Permanent virtual channels on this link.
    #[serde(default)]
    pub pvcs: Vec<PvcConfig>,
    /// A host NIC's transmit queue, in AAL5 frames (the ForeRunner driver's ring; an
    /// uncalibrated 64, of the order of NDIS transmit rings).
    #[serde(default = "default_nic_queue")]
    pub nic_queue_frames: usize,
}

fn default_phy() -> String {
    "oc3".into()
}
fn default_encapsulation() -> String {
    "llc-snap".into()
}
fn default_nic_queue() -> usize {
    64
}

/// A PVC as seen on one link: its numbers and traffic contract.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PvcConfig {
    pub vpi: u16,
    pub vci: u16,
    #[serde(default)]
    pub service: ServiceCategory,
    /// Peak cell rate as bits per second of cells (53 octets each); `None` = line rate.
    /// The sending NIC spaces the VC's cells at most at this rate (TM 4.0 §4.5.1 GCRA
    /// with τ = 0; shaping, not policing).
    #[serde(default)]
    pub pcr_bps: Option<u64>,
}

/// ATM Forum TM 4.0 §2 service categories.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ServiceCategory {
    /// Unspecified bit rate: best effort, no guarantee.
    #[default]
    Ubr,
    /// Constant bit rate: cells at the PCR, no more.
    Cbr,
    /// Variable bit rate (non-real-time): shaped to the PCR here (SCR/MBS not modelled).
    Vbr,
    /// Available bit rate: shaped to the PCR here (no RM-cell feedback loop).
    Abr,
}

/// The ATM network besides its links.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AtmConfig {
    #[serde(default)]
    pub switches: Vec<SwitchConfig>,
    /// LAN emulation (ELANs, their servers and clients) and MPOA.
    #[serde(default)]
    pub lane: super::lane::LaneConfig,
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
#[derive(Debug, Clone, Serialize, Deserialize)]
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
}

fn default_queue_cells() -> usize {
    1024
}
fn default_signalling_ns() -> u64 {
    1_000_000
}

/// One end of a cross-connect: a port of the switch and the VC's numbers there.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VcEnd {
    pub port: u16,
    pub vpi: u16,
    pub vci: u16,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CrossConnect {
    pub a: VcEnd,
    pub b: VcEnd,
}

/// A logical IP subnet and where its ATMARP server runs: on a host's ATM port, or on
/// an ATM switch (as the ForeThought and Centillion switches offered).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LisConfig {
    pub network: Ipv4Addr,
    pub prefix_len: u8,
    /// The node serving ATMARP: a switch, or a host (its port on this subnet).
    pub server: u32,
}
