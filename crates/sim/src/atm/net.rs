//! The ATM network of a run: links of cell slots, switches with per-output-port cell
//! queues and VPI/VCI translation, and the end systems' NICs (AAL5 segmentation and
//! reassembly, RFC 2684, CLIP, UNI signalling). Sans-IO: [`AtmNet::handle`] and
//! [`AtmNet::send_ip`] take `now` and fill an [`AtmOut`] with the events to schedule,
//! the IP packets delivered and the drops; the world does the rest.
//!
//! # Cells, trains and events (see the module doc of [`crate::atm`])
//!
//! A frame is segmented when the NIC takes it: its cells get slots at once, back to back
//! from the first free slot (or spaced at the VC's PCR). The NIC sends frames in FIFO
//! order; one VC's shaped frame holds the line's later frames (per-VC transmit queues
//! are not modelled; an ABR VC's frames wait in its own queue, see [`qos`]). A switch
//! output port by which one service category leaves is one FIFO of cells: a cell
//! arriving at time `t` leaves in slot `max(first free slot, first slot at or after t)`
//! (cut-through after the whole cell has arrived), unless the category's limit of cells
//! are waiting, in which case it is lost. Such a queue's length at time `t` is the
//! number of cells with a slot at or after `t`, which the first free slot gives:
//! nothing is stored per cell. A port shared by several categories keeps one queue per
//! category and serves them by strict priority ([`qos`]).
//!
//! # Losing cells loses frames
//!
//! AAL5 has no sequence numbers: the receiver appends cells until a cell with the
//! end-of-SDU bit, then checks length and CRC-32 (I.363.5 §10.2). A lost cell makes that
//! check fail, and a lost last cell merges the frame with the next one, so both are lost.
//! The receiver here tracks which frame and index each cell is, and discards exactly the
//! PDUs whose bytes would not be the frame that was sent (their CRC would fail, except
//! with probability 2⁻³²).
//!
//! # What LANE and MPOA will add (not built yet)
//!
//! The cell layer knows only VCs, frames and where a VC ends; what a frame means is
//! decided per VC in `host_frame` (signalling on 0/5, RFC 2684 elsewhere) and in
//! `switch_local_frame` (a VC ending at a switch). LANE (af-lane-0021) adds a LEC per
//! host port whose VCs carry LE headers (`wire::lane`): control-direct and
//! control-distribute VCCs to an LES, multicast-send/forward VCCs to a BUS, data-direct
//! VCCs by LE_ARP — servers that, like the ATMARP server here, run on a switch or on a
//! node's endpoint and are reached with `place_call`. MPOA's shortcut SVCs are further
//! calls placed by an MPC when a flow crosses the threshold, on the same signalling.

use std::collections::{BTreeMap, VecDeque};
use std::net::Ipv4Addr;

use wire::atmarp::{self, Operation};
use wire::ethernet::{self, Address as Mac, EtherType};
use wire::lane::AtmAddress;
use wire::rfc2684::{self, Encapsulation};

use super::clip::{self, ClipState};
use super::config::{AtmConfig, AtmLinkConfig, ServiceCategory};
use super::signalling::{self, Message, MessageType};
use super::Slots;
use crate::config::{ConfigError, NodeConfig};

/// The signalling VC of every UNI (I.361 Table 2, UNI 3.1 §5.2).
pub const SIGNALLING_VC: (u16, u16) = (0, wire::atm::vci::SIGNALLING);
/// I.363.5: the largest CPCS-SDU, octets.
pub const MAX_SDU: usize = wire::aal5::MAX_SDU_LEN;
/// Cells of the largest CPCS-PDU: a reassembly longer than this is discarded.
pub const MAX_PDU_CELLS: u32 = wire::aal5::cell_count(MAX_SDU) as u32;

/// The engine events of the ATM network.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AtmEvent {
    /// The next cell(s) of a train reach the far end of its link.
    Train(u32),
    /// A signalling message finished its processing at its node.
    Signal(u32),
    /// A host NIC finished sending a frame (its last cell left).
    TxDone(u32),
    /// t = 0: InATMARP on the PVCs, calls to the ATMARP servers.
    Start,
    /// A BUS finished serving a frame: it leaves on every multicast-forward VCC.
    Lane(u32),
    /// A switch output port with several service-category queues picks its next cell
    /// (switch, port): see [`qos`].
    Serve(u32, u16),
    /// An ABR source's next in-rate cell(s) are due (endpoint, VC index).
    AbrTx(u32, u16),
}

/// A drop: (node, port, reason, the IP packet if any).
pub type Drop = (u32, Option<u16>, String, Option<Vec<u8>>);

/// What handling an event or a packet produced.
#[derive(Debug, Default)]
pub struct AtmOut {
    pub schedule: Vec<(u64, AtmEvent)>,
    /// IP packets for a node's stack: (node, port, Ethernet-headed frame).
    pub deliver: Vec<(u32, u16, Vec<u8>)>,
    /// (node, port, reason, packet).
    pub drops: Vec<Drop>,
    /// Nodes whose NIC finished a frame (saturating sources refill).
    pub tx_done: Vec<u32>,
    /// Captured AAL5 PDUs when capturing: (node, port, time, ERF-style record).
    pub captured: Vec<(u32, u16, u64, Vec<u8>)>,
}

impl AtmOut {
    pub fn is_empty(&self) -> bool {
        self.schedule.is_empty()
            && self.deliver.is_empty()
            && self.drops.is_empty()
            && self.tx_done.is_empty()
            && self.captured.is_empty()
    }
}

/// Counters of the ATM network, reported with the run.
#[derive(Debug, Default, Clone, serde::Serialize, schemars::JsonSchema)]
pub struct AtmStats {
    /// Cells sent per link and direction.
    pub cells: Vec<[u64; 2]>,
    /// Cells lost at a full output queue, per switch.
    pub cells_lost: Vec<u64>,
    /// Cells discarded by EPD and by PPD, per switch.
    pub epd_cells: Vec<u64>,
    pub ppd_cells: Vec<u64>,
    /// Cells that arrived on a VC the switch has no entry for.
    pub unknown_vc_cells: Vec<u64>,
    /// AAL5 frames segmented (by NICs and by switches' signalling and ATMARP server),
    /// and reassembled whole (at hosts and at switches).
    pub frames_sent: u64,
    pub frames_received: u64,
    /// Reassembled PDUs discarded (CRC/length would fail: cells were lost).
    pub frames_corrupt: u64,
    /// SVCs set up, and the time from SETUP sent to CONNECT received, ns.
    pub svc_setups: u64,
    pub svc_setup_ns: Vec<u64>,
    pub atmarp_requests: u64,
    pub inatmarp_requests: u64,
    /// LAN emulation and MPOA.
    pub lane: super::lane::LaneStats,
    /// Service categories: ABR sources and RM cells (see [`qos`]).
    pub qos: qos::QosStats,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Attach {
    Host(u32),
    Switch(u32, u16),
}

#[derive(Debug, Default)]
struct Tx {
    next_free: u64,
    open_train: Option<u32>,
    cells: u64,
}

struct Link {
    name: String,
    ends: [Attach; 2],
    slots: Slots,
    delay_ns: u64,
    tx: [Tx; 2],
}

struct Frame {
    bytes: Vec<u8>,
    /// Where the AAL5 SDU starts in `bytes`.
    start: u32,
    cells: u32,
    refs: u32,
    seq: u64,
    /// A resource-management cell (TM 4.0 §5.10.3.1) instead of an AAL5 frame: one
    /// cell, no bytes.
    rm: Option<qos::Rm>,
    /// Reassembled whole somewhere (conservation: a frame released without is lost).
    delivered: bool,
    /// Why the frame will not be reassembled whole: its first cell loss.
    fate: Option<&'static str>,
}

impl Frame {
    fn sdu(&self) -> &[u8] {
        &self.bytes[self.start as usize..]
    }
}

struct Train {
    frame: u32,
    link: u32,
    dir: u8,
    vpi: u16,
    vci: u16,
    /// Index in the frame of the train's first cell.
    first: u32,
    count: u32,
    /// Cells of the train handled by the receiver so far.
    next: u32,
    slot0: u64,
    /// Cell `j` leaves in slot `slot0 + ceil((phase + j × num) / den)`: the theoretical
    /// times of TM 4.0's GCRA (virtual scheduling, §4.5.1) rounded up to slots.
    phase: u64,
    num: u64,
    den: u64,
    closed: bool,
}

impl Train {
    fn slot(&self, j: u32) -> u64 {
        self.slot0 + (self.phase + u64::from(j) * self.num).div_ceil(self.den)
    }
}

#[derive(Debug, Default, Clone, Copy)]
struct Reasm {
    active: bool,
    broken: bool,
    seq: u64,
    next: u32,
    cells: u32,
}

impl Reasm {
    /// Cells `first .. first + n` of frame `seq` (of `total` cells) arrived in order.
    /// On the end of the PDU: `Some(whole)`.
    fn push(&mut self, seq: u64, first: u32, n: u32, total: u32) -> Option<bool> {
        if !self.active {
            *self = Reasm { active: true, broken: first != 0, seq, next: first, cells: 0 };
        } else if self.seq != seq || self.next != first {
            self.broken = true;
            self.seq = seq;
        }
        self.cells += n;
        self.next = first + n;
        if self.cells > MAX_PDU_CELLS {
            // I.363.5 §10.2: longer than the largest CPCS-PDU: discarded at once.
            self.active = false;
            return Some(false);
        }
        if first + n == total {
            let whole = !self.broken && self.cells == total;
            self.active = false;
            return Some(whole);
        }
        None
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum VcState {
    Active,
    /// SETUP sent, waiting for CONNECT (sent at this time).
    Calling(u64),
    /// CONNECT sent, waiting for CONNECT ACKNOWLEDGE.
    Called,
}

struct Vc {
    vpi: u16,
    vci: u16,
    state: VcState,
    peer_atm: Option<AtmAddress>,
    pcr_bps: Option<u64>,
    /// Theoretical time of the VC's next cell (GCRA, TM 4.0 §4.5.1), in slots × the
    /// shaping ratio's denominator; only for a VC with a PCR.
    tat: u128,
    reasm: Reasm,
    /// What the VC carries on a LANE/MPOA endpoint.
    role: Option<super::lane::VcRole>,
    /// The selector of this end's ATM address (which LANE entity the VC belongs to).
    sel: u8,
}

/// A host's ATM port: NIC, VCs, signalling and CLIP.
struct Endpoint {
    node: u32,
    port: u16,
    link: u32,
    end: u8,
    mac: Mac,
    ip: Option<(Ipv4Addr, u8)>,
    atm: AtmAddress,
    encap: Encapsulation,
    vcs: Vec<Vc>,
    by_num: BTreeMap<(u16, u16), usize>,
    calls: BTreeMap<u32, usize>,
    next_call: u32,
    sscop_seq: u32,
    nic_frames: VecDeque<u64>,
    nic_limit: usize,
    clip: ClipState,
    /// The LE client (and MPC) on this port, if it joins an ELAN.
    lane: Option<Box<super::lane::Lec>>,
    /// LANE servers and the MPS on this port.
    servers: Option<Box<super::lane::Servers>>,
    /// Per VC (by index; missing = UBR/CBR with the PCR alone): the service-category
    /// queue its cells take at switches, and the VBR/ABR state of the NIC.
    contracts: Vec<qos::Contract>,
    /// Frames waiting in ABR sources' queues (part of the NIC's backlog).
    abr_queued: usize,
    /// The adapter's segmentation engine, if slower than the line.
    sar: Option<Sar>,
}

/// An adapter that segments slower than its line (`CpuConfig::atm_nic`): a server that
/// takes one PDU at a time, spends `pdu_ns` on it, then paces its cells.
#[derive(Debug, Clone, Copy)]
struct Sar {
    pdu_ns: u64,
    /// Its cell rate as bits per second of 53-octet cells (the unit of a PCR), or the
    /// line rate if it segments as fast as the line.
    cell_bps: u64,
    /// When the engine is done with the PDU before (ns).
    free_ns: u64,
}

#[derive(Debug, Clone, Copy)]
struct Route {
    out_port: u16,
    vpi: u16,
    vci: u16,
    /// The VC ends at the switch (signalling, the ATMARP server).
    local: bool,
    /// 0: none, 1: PPD dropping the rest of a frame, 2: EPD dropping a whole frame.
    discard: u8,
    reasm: Reasm,
    /// The output queue (service category, [`ServiceCategory::queue`]) of the VC's cells.
    class: u8,
}

struct Call {
    in_port: u16,
    in_ref: u32,
    in_vci: u16,
    out_vci: u16,
}

struct Switch {
    node: u32,
    ports: Vec<(u32, u8)>,
    table: Vec<BTreeMap<(u16, u16), Route>>,
    epd: Option<u64>,
    ppd: bool,
    signalling_ns: u64,
    atm: AtmAddress,
    calls: BTreeMap<(u16, u32), Call>,
    next_ref: u32,
    sscop_seq: u32,
    /// Next hop port towards each other switch (index), by BFS over the switch graph.
    toward: BTreeMap<u32, u16>,
    /// The ATMARP server of a LIS, when this switch runs one.
    server: Option<BTreeMap<Ipv4Addr, AtmAddress>>,
    /// Per output port: the service-category queues (see [`qos`]).
    portq: Vec<qos::PortQueues>,
    /// Cell limit of each category queue.
    limits: [u64; qos::QUEUES],
    /// ABR queue length from which RM cells get CI = 1.
    abr_ci: u64,
}

#[derive(Debug, Clone, Copy)]
enum SigAt {
    Host(u32),
    Switch(u32, u16),
}

/// The ATM network.
pub struct AtmNet {
    links: Vec<Link>,
    endpoints: Vec<Endpoint>,
    switches: Vec<Switch>,
    frames: Vec<Frame>,
    free_frames: Vec<u32>,
    frame_seq: u64,
    trains: Vec<Train>,
    free_trains: Vec<u32>,
    signals: Vec<Option<(SigAt, Message)>>,
    free_signals: Vec<u32>,
    host_signalling_ns: u64,
    capture: bool,
    /// Frames in a BUS's service: (endpoint, data frame).
    lane_deferred: Vec<Option<(u32, u8, Vec<u8>)>>,
    lane_free: Vec<u32>,
    pub stats: AtmStats,
    /// (node, port) → endpoint index, for the world.
    pub endpoint_of: BTreeMap<(u32, u16), u32>,
    /// Switch node indices.
    pub switch_nodes: Vec<u32>,
    /// AAL5 frames (and BUS frames) lost with what they carried, for the flows'
    /// conservation only (their drops are counted as before); the world takes them.
    pub lost: Vec<(&'static str, Vec<u8>)>,
    /// Cells that reached the far end of each link, per direction (conservation).
    cells_arrived: Vec<[u64; 2]>,
}

/// Why a frame released without being reassembled whole is lost, when no cell loss
/// was recorded for it (it followed a frame whose last cell was lost).
const FRAME_LOST: &str = "AAL5 PDU discarded: cells lost, its length and CRC-32 fail (I.363.5 §10.2)";

/// An NSAP-format ATM address (UNI 3.1 §5.1.3.1, ICD format AFI 0x47): a 13-octet
/// network prefix naming the switch (`switch` + 1; 0 when not behind a switch), the
/// ESI (the port's MAC, as ILMI address registration builds it), selector 0.
pub fn atm_address(switch: Option<u32>, esi: [u8; 6]) -> AtmAddress {
    let mut a = [0u8; 20];
    a[..6].copy_from_slice(&[0x47, 0x00, 0x05, 0x80, 0xff, 0xe1]);
    let s = switch.map_or(0, |s| s + 1);
    a[9..13].copy_from_slice(&s.to_be_bytes());
    a[13..19].copy_from_slice(&esi);
    AtmAddress(a)
}

fn prefix(a: &AtmAddress) -> [u8; 13] {
    let mut p = [0u8; 13];
    p.copy_from_slice(&a.0[..13]);
    p
}

fn fail(field: String, message: String) -> ConfigError {
    ConfigError { field, message }
}

impl AtmNet {
    /// Builds the network from the ATM links (with their index in `SimConfig::links`)
    /// and the ATM part of the configuration.
    pub fn new(
        nodes: &[NodeConfig],
        links: &[(usize, &AtmLinkConfig)],
        config: &AtmConfig,
        capture: bool,
    ) -> Result<AtmNet, ConfigError> {
        // Found by the config fuzz target: a switch on no node indexed past the nodes.
        if let Some((i, s)) = config.switches.iter().enumerate().find(|(_, s)| s.node as usize >= nodes.len()) {
            return Err(fail(
                format!("atm.switches[{i}].node"),
                format!("node {} does not exist ({} nodes)", s.node, nodes.len()),
            ));
        }
        let switch_of: BTreeMap<u32, u32> =
            config.switches.iter().enumerate().map(|(i, s)| (s.node, i as u32)).collect();
        let mut switches: Vec<Switch> = config
            .switches
            .iter()
            .enumerate()
            .map(|(i, s)| Switch {
                node: s.node,
                ports: vec![(u32::MAX, 0); nodes.get(s.node as usize).map_or(0, |n| n.ports.len())],
                table: vec![BTreeMap::new(); nodes.get(s.node as usize).map_or(0, |n| n.ports.len())],
                epd: s.epd_threshold_cells.map(|c| c as u64),
                ppd: s.ppd,
                signalling_ns: s.signalling_ns,
                atm: atm_address(Some(i as u32), [0; 6]),
                calls: BTreeMap::new(),
                next_ref: 1,
                sscop_seq: 0,
                toward: BTreeMap::new(),
                server: None,
                portq: (0..nodes.get(s.node as usize).map_or(0, |n| n.ports.len()))
                    .map(|_| qos::PortQueues::default())
                    .collect(),
                limits: qos::limits(s),
                abr_ci: s.abr_ci_threshold_cells as u64,
            })
            .collect();
        let mut net = AtmNet {
            links: Vec::new(),
            endpoints: Vec::new(),
            switches: Vec::new(),
            frames: Vec::new(),
            free_frames: Vec::new(),
            frame_seq: 0,
            trains: Vec::new(),
            free_trains: Vec::new(),
            signals: Vec::new(),
            free_signals: Vec::new(),
            host_signalling_ns: config.host_signalling_ns,
            capture,
            lane_deferred: Vec::new(),
            lane_free: Vec::new(),
            lost: Vec::new(),
            cells_arrived: Vec::new(),
            stats: AtmStats::default(),
            endpoint_of: BTreeMap::new(),
            switch_nodes: config.switches.iter().map(|s| s.node).collect(),
        };
        for &(index, l) in links {
            let field = |f: &str| format!("links[{index}].{f}");
            let rate = match l.cell_rate_bps {
                Some(r) if r > 0 => r,
                Some(_) => return Err(fail(field("cell_rate_bps"), "an ATM link's cell rate must be positive".into())),
                None => super::phy_cell_rate(&l.phy).ok_or_else(|| {
                    fail(field("phy"), format!("expected \"oc3\", \"oc12\" or \"25m\", found {:?}", l.phy))
                })?,
            };
            let encap: Encapsulation = match l.encapsulation.as_str() {
                "llc-snap" => Encapsulation::LlcSnapRouted,
                "vc-mux" => Encapsulation::VcMuxRouted,
                other => {
                    return Err(fail(
                        field("encapsulation"),
                        format!("expected \"llc-snap\" or \"vc-mux\", found {other:?}"),
                    ))
                }
            };
            let id = net.links.len() as u32;
            let mut ends = [Attach::Host(0); 2];
            for (e, r) in [l.a, l.b].into_iter().enumerate() {
                let node = nodes
                    .get(r.node as usize)
                    .ok_or_else(|| fail(field(if e == 0 { "a" } else { "b" }), format!("no node {}", r.node)))?;
                let port = node.ports.get(r.port as usize).ok_or_else(|| {
                    fail(field(if e == 0 { "a" } else { "b" }), format!("node {} has no port {}", node.name, r.port))
                })?;
                if let Some(&sw) = switch_of.get(&r.node) {
                    switches[sw as usize].ports[r.port as usize] = (id, e as u8);
                    ends[e] = Attach::Switch(sw, r.port);
                } else {
                    let sdu = usize::from(port.mtu) + encap.header_len();
                    if sdu > MAX_SDU {
                        return Err(fail(
                            format!("nodes[{}].ports[{}].mtu", r.node, r.port),
                            format!("MTU {} with {} ({} octets of header) makes an AAL5 SDU of {sdu} octets; AAL5 carries at most {MAX_SDU} (I.363.5)", port.mtu, l.encapsulation, encap.header_len()),
                        ));
                    }
                    let ep = net.endpoints.len() as u32;
                    net.endpoint_of.insert((r.node, r.port), ep);
                    ends[e] = Attach::Host(ep);
                    let mut vcs = vec![Vc {
                        vpi: 0,
                        vci: wire::atm::vci::SIGNALLING,
                        state: VcState::Active,
                        peer_atm: None,
                        pcr_bps: None,
                        tat: 0,
                        reasm: Reasm::default(),
                        role: None,
                        sel: 0,
                    }];
                    let mut by_num = BTreeMap::from([(SIGNALLING_VC, 0usize)]);
                    let mut contracts = Vec::new();
                    for (k, p) in l.pvcs.iter().enumerate() {
                        if p.vci < wire::atm::vci::FIRST_USER || by_num.contains_key(&(p.vpi, p.vci)) {
                            return Err(fail(
                                field(&format!("pvcs[{k}]")),
                                format!(
                                    "VC {}/{} is reserved or listed twice (I.361 Table 2: VCIs 0-31 are reserved)",
                                    p.vpi, p.vci
                                ),
                            ));
                        }
                        let pcr = match p.service {
                            ServiceCategory::Ubr => p.pcr_bps,
                            _ => Some(p.pcr_bps.ok_or_else(|| {
                                fail(
                                    field(&format!("pvcs[{k}].pcr_bps")),
                                    "a CBR, VBR or ABR VC needs a peak cell rate (TM 4.0 §3.4)".into(),
                                )
                            })?),
                        };
                        let contract =
                            qos::Contract::new(p, pcr.map(|r| r.min(rate)), rate, &mut net.stats.qos, (r.node, r.port))
                                .map_err(|(f, m)| fail(field(&format!("pvcs[{k}].{f}")), m))?;
                        contracts.resize_with(vcs.len() + 1, qos::Contract::default);
                        contracts[vcs.len()] = contract;
                        by_num.insert((p.vpi, p.vci), vcs.len());
                        vcs.push(Vc {
                            vpi: p.vpi,
                            vci: p.vci,
                            state: VcState::Active,
                            peer_atm: None,
                            pcr_bps: pcr.map(|r| r.min(rate)),
                            tat: 0,
                            reasm: Reasm::default(),
                            role: None,
                            sel: 0,
                        });
                    }
                    net.endpoints.push(Endpoint {
                        node: r.node,
                        port: r.port,
                        link: id,
                        end: e as u8,
                        mac: Mac(port.mac),
                        ip: port.address,
                        atm: AtmAddress([0; 20]),
                        encap,
                        vcs,
                        by_num,
                        calls: BTreeMap::new(),
                        next_call: 1,
                        sscop_seq: 0,
                        nic_frames: VecDeque::new(),
                        nic_limit: l.nic_queue_frames.max(1),
                        clip: ClipState::default(),
                        lane: None,
                        servers: None,
                        contracts,
                        abr_queued: 0,
                        sar: {
                            let nic = node.cpu.atm_nic;
                            let cell_bps = if nic.sar_cell_rate == 0 {
                                rate
                            } else {
                                nic.sar_cell_rate.saturating_mul(super::CELL_BITS as u64).min(rate)
                            };
                            (nic.sar_pdu_ns > 0 || cell_bps < rate).then_some(Sar {
                                pdu_ns: nic.sar_pdu_ns,
                                cell_bps,
                                free_ns: 0,
                            })
                        },
                    });
                }
            }
            net.links.push(Link {
                name: l.name.clone(),
                ends,
                slots: Slots::new(rate),
                delay_ns: l.delay_ns,
                tx: Default::default(),
            });
        }
        // Addresses: a host behind a switch takes that switch's prefix.
        for ep in &mut net.endpoints {
            let far = net.links[ep.link as usize].ends[1 - ep.end as usize];
            let sw = match far {
                Attach::Switch(s, _) => Some(s),
                Attach::Host(_) => None,
            };
            ep.atm = atm_address(sw, ep.mac.0);
        }
        // Next hops between switches (BFS from each switch over switch-switch links).
        let n = switches.len();
        for from in 0..n {
            let mut seen = vec![false; n];
            seen[from] = true;
            let mut todo = VecDeque::new();
            for (p, &(link, end)) in switches[from].ports.iter().enumerate() {
                if link == u32::MAX {
                    continue;
                }
                if let Attach::Switch(s, _) = net.links[link as usize].ends[1 - end as usize] {
                    if !seen[s as usize] {
                        seen[s as usize] = true;
                        todo.push_back((s, p as u16));
                    }
                }
            }
            while let Some((s, first)) = todo.pop_front() {
                switches[from].toward.insert(s, first);
                for &(link, end) in &switches[s as usize].ports {
                    if link == u32::MAX {
                        continue;
                    }
                    if let Attach::Switch(t, _) = net.links[link as usize].ends[1 - end as usize] {
                        if !seen[t as usize] {
                            seen[t as usize] = true;
                            todo.push_back((t, first));
                        }
                    }
                }
            }
        }
        // PVC cross-connects and the signalling VC on every switch port.
        for (i, s) in config.switches.iter().enumerate() {
            let sw = &mut switches[i];
            for (p, &(link, _)) in sw.ports.iter().enumerate() {
                if link != u32::MAX {
                    sw.table[p].insert(
                        SIGNALLING_VC,
                        Route {
                            out_port: p as u16,
                            vpi: 0,
                            vci: 5,
                            local: true,
                            discard: 0,
                            reasm: Reasm::default(),
                            class: UBR_QUEUE,
                        },
                    );
                }
            }
            for (k, c) in s.cross_connects.iter().enumerate() {
                let field = format!("atm.switches[{i}].cross_connects[{k}]");
                for end in [c.a, c.b] {
                    if sw.ports.get(end.port as usize).is_none_or(|&(l, _)| l == u32::MAX) {
                        let name = &nodes[s.node as usize].name;
                        return Err(fail(
                            field,
                            format!(
                                "switch {name} has no ATM port {} (it has {} ATM port(s))",
                                end.port,
                                sw.ports.iter().filter(|p| p.0 != u32::MAX).count()
                            ),
                        ));
                    }
                    if end.vci < wire::atm::vci::FIRST_USER
                        || sw.table[end.port as usize].contains_key(&(end.vpi, end.vci))
                    {
                        return Err(fail(
                            field,
                            format!(
                                "VC {}/{} on port {} is reserved or already cross-connected",
                                end.vpi, end.vci, end.port
                            ),
                        ));
                    }
                }
                for (x, y) in [(c.a, c.b), (c.b, c.a)] {
                    sw.table[x.port as usize].insert(
                        (x.vpi, x.vci),
                        Route {
                            out_port: y.port,
                            vpi: y.vpi,
                            vci: y.vci,
                            local: false,
                            discard: 0,
                            reasm: Reasm::default(),
                            class: UBR_QUEUE,
                        },
                    );
                }
            }
        }
        // LIS: who serves ATMARP.
        for (k, lis) in config.lis.iter().enumerate() {
            let field = format!("atm.lis[{k}].server");
            let in_lis = |ip: Option<(Ipv4Addr, u8)>| {
                ip.is_some_and(|(a, _)| crate::ip::same_subnet(a, lis.network, lis.prefix_len))
            };
            let server_atm = if let Some(&sw) = switch_of.get(&lis.server) {
                switches[sw as usize].server = Some(BTreeMap::new());
                switches[sw as usize].atm
            } else {
                let ep = net.endpoints.iter_mut().find(|e| e.node == lis.server && in_lis(e.ip)).ok_or_else(|| {
                    fail(
                        field.clone(),
                        format!(
                            "node {} has no ATM port in {}/{}",
                            nodes.get(lis.server as usize).map_or("?", |n| &n.name),
                            lis.network,
                            lis.prefix_len
                        ),
                    )
                })?;
                ep.clip.is_server = true;
                ep.atm
            };
            for ep in &mut net.endpoints {
                if in_lis(ep.ip) && !ep.clip.is_server {
                    ep.clip.server = Some(server_atm);
                }
            }
        }
        net.switches = switches;
        net.classify_pvcs();
        net.lane_init(&config.lane, nodes)?;
        let sw_count = net.switches.len();
        net.stats.cells = vec![[0; 2]; net.links.len()];
        net.stats.cells_lost = vec![0; sw_count];
        net.stats.epd_cells = vec![0; sw_count];
        net.stats.ppd_cells = vec![0; sw_count];
        net.stats.unknown_vc_cells = vec![0; sw_count];
        Ok(net)
    }

    /// Links: (name, cells sent per direction, busy ns per direction).
    pub fn link_report(&self) -> Vec<(String, [u64; 2], [f64; 2])> {
        self.links
            .iter()
            .map(|l| {
                let cells = [l.tx[0].cells, l.tx[1].cells];
                let busy = cells.map(|c| c as f64 * super::CELL_BITS as f64 * 1e9 / l.slots.rate_bps as f64);
                (l.name.clone(), cells, busy)
            })
            .collect()
    }

    /// Frames waiting in or being sent by the NIC of endpoint `ep`.
    pub fn backlog(&mut self, now: u64, ep: u32) -> usize {
        let e = &mut self.endpoints[ep as usize];
        let slots = self.links[e.link as usize].slots;
        let current = slots.ceil(now);
        while e.nic_frames.front().is_some_and(|&end| end <= current) {
            e.nic_frames.pop_front();
        }
        e.nic_frames.len() + e.abr_queued
    }

    // ------------------------------------------------------------------ frames, trains

    fn new_frame(&mut self, bytes: Vec<u8>, start: usize) -> u32 {
        let cells = wire::aal5::cell_count(bytes.len() - start) as u32;
        self.frame_seq += 1;
        let f = Frame {
            bytes,
            start: start as u32,
            cells,
            refs: 0,
            seq: self.frame_seq,
            rm: None,
            delivered: false,
            fate: None,
        };
        match self.free_frames.pop() {
            Some(i) => {
                self.frames[i as usize] = f;
                i
            }
            None => {
                self.frames.push(f);
                (self.frames.len() - 1) as u32
            }
        }
    }

    fn release_frame(&mut self, frame: u32) {
        let f = &mut self.frames[frame as usize];
        f.refs -= 1;
        if f.refs == 0 {
            if !f.delivered && f.rm.is_none() {
                // Its cells are gone and no end reassembled it: what it carried is lost.
                let reason = f.fate.unwrap_or(FRAME_LOST);
                self.lost.push((reason, std::mem::take(&mut f.bytes)));
            }
            f.bytes = Vec::new();
            self.free_frames.push(frame);
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn new_train(
        &mut self,
        frame: u32,
        link: u32,
        dir: u8,
        vpi: u16,
        vci: u16,
        first: u32,
        count: u32,
        slot0: u64,
        num: u64,
        den: u64,
        closed: bool,
    ) -> u32 {
        self.frames[frame as usize].refs += 1;
        let t = Train { frame, link, dir, vpi, vci, first, count, next: 0, slot0, phase: 0, num, den, closed };
        match self.free_trains.pop() {
            Some(i) => {
                self.trains[i as usize] = t;
                i
            }
            None => {
                self.trains.push(t);
                (self.trains.len() - 1) as u32
            }
        }
    }

    fn arrival(&self, t: &Train, j: u32) -> u64 {
        let l = &self.links[t.link as usize];
        l.slots.start(t.slot(j) + 1) + l.delay_ns
    }

    #[allow(clippy::too_many_arguments)]
    /// Sends frame `frame` whole on `link` from end `dir` on VC vpi/vci, its cells in
    /// the first free slots, spaced to `pcr_bps` if given. Returns the slot after its
    /// last cell.
    fn send_cells(
        &mut self,
        now: u64,
        frame: u32,
        link: u32,
        dir: u8,
        vpi: u16,
        vci: u16,
        shaping: Option<(u64, &mut u128)>,
        out: &mut AtmOut,
    ) -> u64 {
        self.send_cells_from(now, now, frame, link, dir, vpi, vci, shaping, out)
    }

    #[allow(clippy::too_many_arguments)]
    /// [`Self::send_cells`], the first cell no earlier than `ready` (≥ `now`).
    fn send_cells_from(
        &mut self,
        now: u64,
        ready: u64,
        frame: u32,
        link: u32,
        dir: u8,
        vpi: u16,
        vci: u16,
        shaping: Option<(u64, &mut u128)>,
        out: &mut AtmOut,
    ) -> u64 {
        let cells = self.frames[frame as usize].cells;
        let l = &mut self.links[link as usize];
        let rate = l.slots.rate_bps;
        let tx = &mut l.tx[dir as usize];
        let earliest = tx.next_free.max(l.slots.ceil(ready.max(now)));
        let (slot0, phase, num, den) = match shaping {
            Some((pcr, tat)) if pcr < rate => {
                // Cells T = rate / pcr slots apart in theory (GCRA virtual scheduling),
                // each in the first slot at or after its theoretical time.
                let g = gcd(rate, pcr);
                let (num, den) = (rate / g, pcr / g);
                let start = (*tat).max(u128::from(earliest) * u128::from(den));
                *tat = start + u128::from(cells) * u128::from(num);
                ((start / u128::from(den)) as u64, (start % u128::from(den)) as u64, num, den)
            }
            _ => (earliest, 0, 1, 1),
        };
        let end = slot0 + (phase + u64::from(cells - 1) * num).div_ceil(den) + 1;
        tx.next_free = end;
        tx.cells += u64::from(cells);
        tx.open_train = None;
        self.stats.cells[link as usize][dir as usize] += u64::from(cells);
        let t = self.new_train(frame, link, dir, vpi, vci, 0, cells, slot0, num, den, true);
        self.trains[t as usize].phase = phase;
        let at = self.first_event_time(t);
        out.schedule.push((at, AtmEvent::Train(t)));
        end
    }

    /// When the receiver of train `t` next needs waking: a switch cell by cell, a host
    /// at the last cell known so far.
    fn first_event_time(&self, t: u32) -> u64 {
        let train = &self.trains[t as usize];
        let to_host = matches!(self.links[train.link as usize].ends[1 - train.dir as usize], Attach::Host(_));
        let j = if to_host { train.count - 1 } else { train.next };
        self.arrival(train, j)
    }

    /// A cell of `frame` (index `idx`) joins the output queue `class` of `port` of
    /// switch `sw`; false if that queue is full. A port that carries one category is
    /// one FIFO whose cells get their slots at once; one with several is served by
    /// [`qos`] slot by slot.
    #[allow(clippy::too_many_arguments)]
    fn switch_enqueue(
        &mut self,
        now: u64,
        sw: u32,
        port: u16,
        class: u8,
        frame: u32,
        idx: u32,
        vpi: u16,
        vci: u16,
        out: &mut AtmOut,
    ) -> bool {
        let s = &self.switches[sw as usize];
        let (link, dir) = s.ports[port as usize];
        let limit = s.limits[class as usize];
        if s.portq[port as usize].is_shared() {
            return self.qos_enqueue(now, sw, port, class, frame, idx, vpi, vci, out);
        }
        let l = &self.links[link as usize];
        let tx = &l.tx[dir as usize];
        let first_slot = l.slots.ceil(now);
        let waiting = tx.next_free.saturating_sub(first_slot);
        if waiting >= limit {
            return false;
        }
        let slot = tx.next_free.max(first_slot);
        self.commit_cell(link, dir, slot, frame, idx, vpi, vci, out);
        true
    }

    /// Puts a cell of `frame` on `link` in direction `dir` in slot `slot` (at or after
    /// the link's first free slot), extending the open train when it continues it.
    #[allow(clippy::too_many_arguments)]
    #[inline]
    fn commit_cell(
        &mut self,
        link: u32,
        dir: u8,
        slot: u64,
        frame: u32,
        idx: u32,
        vpi: u16,
        vci: u16,
        out: &mut AtmOut,
    ) {
        let tx = &mut self.links[link as usize].tx[dir as usize];
        tx.next_free = slot + 1;
        tx.cells += 1;
        self.stats.cells[link as usize][dir as usize] += 1;
        if let Some(t) = tx.open_train {
            let train = &mut self.trains[t as usize];
            if !train.closed
                && train.frame == frame
                && train.first + train.count == idx
                && train.vpi == vpi
                && train.vci == vci
                && train.num == train.den
                && train.slot(train.count - 1) + 1 == slot
            {
                train.count += 1;
                return;
            }
        }
        let t = self.new_train(frame, link, dir, vpi, vci, idx, 1, slot, 1, 1, false);
        self.links[link as usize].tx[dir as usize].open_train = Some(t);
        let at = self.first_event_time(t);
        out.schedule.push((at, AtmEvent::Train(t)));
    }

    /// Cells waiting in queue `class` of output `port` of switch `sw`.
    fn waiting_cells(&self, now: u64, sw: u32, port: u16, class: u8) -> u64 {
        let s = &self.switches[sw as usize];
        let q = &s.portq[port as usize];
        if q.is_shared() {
            return q.len(class);
        }
        let (link, dir) = s.ports[port as usize];
        let l = &self.links[link as usize];
        l.tx[dir as usize].next_free.saturating_sub(l.slots.ceil(now))
    }

    // ------------------------------------------------------------------ events

    pub fn handle(&mut self, now: u64, event: AtmEvent, out: &mut AtmOut) {
        match event {
            AtmEvent::Train(t) => self.train_event(now, t, out),
            AtmEvent::Signal(s) => {
                if let Some((at, msg)) = self.signals[s as usize].take() {
                    self.free_signals.push(s);
                    match at {
                        SigAt::Host(ep) => self.host_signal(now, ep, msg, out),
                        SigAt::Switch(sw, port) => self.switch_signal(now, sw, port, msg, out),
                    }
                }
            }
            AtmEvent::TxDone(ep) => out.tx_done.push(self.endpoints[ep as usize].node),
            AtmEvent::Start => self.start(now, out),
            AtmEvent::Lane(id) => self.bus_depart(now, id, out),
            AtmEvent::Serve(sw, port) => self.qos_serve(now, sw, port, out),
            AtmEvent::AbrTx(ep, v) => self.abr_event(now, ep, usize::from(v), out),
        }
    }

    fn train_event(&mut self, now: u64, t: u32, out: &mut AtmOut) {
        let (link, dir) = (self.trains[t as usize].link, self.trains[t as usize].dir);
        match self.links[link as usize].ends[1 - dir as usize] {
            Attach::Switch(sw, port) => {
                let train = &mut self.trains[t as usize];
                let (frame, vpi, vci, idx) = (train.frame, train.vpi, train.vci, train.first + train.next);
                train.next += 1;
                self.count_arrived(link, dir, 1);
                self.switch_cell(now, sw, port, frame, idx, vpi, vci, out);
                let train = &self.trains[t as usize];
                if train.next < train.count {
                    let at = self.arrival(train, train.next);
                    out.schedule.push((at, AtmEvent::Train(t)));
                } else {
                    self.close_train(t);
                }
            }
            Attach::Host(ep) => {
                let train = &self.trains[t as usize];
                // Every cell up to the last one that has arrived by now.
                let mut upto = train.count;
                while upto > train.next && self.arrival(train, upto - 1) > now {
                    upto -= 1;
                }
                let (frame, vpi, vci, first, n) =
                    (train.frame, train.vpi, train.vci, train.first + train.next, upto - train.next);
                self.trains[t as usize].next = upto;
                self.count_arrived(link, dir, n);
                if n > 0 {
                    self.host_cells(now, ep, frame, first, n, vpi, vci, out);
                }
                let train = &self.trains[t as usize];
                if train.next < train.count {
                    let at = self.arrival(train, train.count - 1);
                    out.schedule.push((at, AtmEvent::Train(t)));
                } else {
                    self.close_train(t);
                }
            }
        }
    }

    fn count_arrived(&mut self, link: u32, dir: u8, n: u32) {
        let link = link as usize;
        if link >= self.cells_arrived.len() {
            self.cells_arrived.resize(link + 1, [0; 2]);
        }
        self.cells_arrived[link][dir as usize] += u64::from(n);
    }

    /// Per link and direction (as `link_report`): cells put on the link, cells that
    /// reached its far end, and cells still on it (in trains not yet arrived).
    pub fn cell_conservation(&self) -> Vec<[(u64, u64, u64); 2]> {
        let mut on_wire = vec![[0u64; 2]; self.links.len()];
        let free: std::collections::BTreeSet<u32> = self.free_trains.iter().copied().collect();
        for (i, t) in self.trains.iter().enumerate() {
            if !free.contains(&(i as u32)) {
                on_wire[t.link as usize][t.dir as usize] += u64::from(t.count - t.next);
            }
        }
        self.links
            .iter()
            .enumerate()
            .map(|(i, l)| {
                let arrived = self.cells_arrived.get(i).copied().unwrap_or([0; 2]);
                [0, 1].map(|d| (l.tx[d].cells, arrived[d], on_wire[i][d]))
            })
            .collect()
    }

    /// Every packet the ATM network holds at the end of a run (conservation's census):
    /// frames whose cells are on links or in queues and that no end has reassembled,
    /// packets waiting for an ATMARP answer or a LANE data-direct VCC, frames in a BUS.
    pub fn held_packets(&self, mut each: impl FnMut(&[u8])) {
        for f in &self.frames {
            if f.refs > 0 && !f.delivered && f.rm.is_none() {
                each(&f.bytes);
            }
        }
        for e in &self.endpoints {
            e.clip.pending.values().flatten().for_each(|p| each(p));
            if let Some(l) = &e.lane {
                l.pending.values().flatten().for_each(|p| each(p));
                l.held.iter().for_each(|p| each(p));
            }
        }
        for (_, _, sdu) in self.lane_deferred.iter().flatten() {
            each(sdu);
        }
    }

    fn close_train(&mut self, t: u32) {
        let train = &mut self.trains[t as usize];
        train.closed = true;
        let (frame, link, dir) = (train.frame, train.link, train.dir);
        if self.links[link as usize].tx[dir as usize].open_train == Some(t) {
            self.links[link as usize].tx[dir as usize].open_train = None;
        }
        self.free_trains.push(t);
        self.release_frame(frame);
    }

    /// One cell at a switch input: translate, discard (EPD/PPD/overflow) or queue.
    #[allow(clippy::too_many_arguments)]
    fn switch_cell(
        &mut self,
        now: u64,
        sw: u32,
        port: u16,
        frame: u32,
        idx: u32,
        vpi: u16,
        vci: u16,
        out: &mut AtmOut,
    ) {
        let total = self.frames[frame as usize].cells;
        let last = idx + 1 == total;
        let Some(route) = self.switches[sw as usize].table[port as usize].get(&(vpi, vci)).copied() else {
            self.stats.unknown_vc_cells[sw as usize] += 1;
            self.frames[frame as usize].fate.get_or_insert("cells on a VC with no table entry");
            if idx == 0 {
                let node = self.switches[sw as usize].node;
                out.drops.push((
                    node,
                    Some(port),
                    format!("cell on VC {vpi}/{vci}, which has no entry in the switch's table"),
                    None,
                ));
            }
            return;
        };
        if route.local {
            let seq = self.frames[frame as usize].seq;
            let r = self.switches[sw as usize].table[port as usize].get_mut(&(vpi, vci)).expect("route");
            if let Some(whole) = r.reasm.push(seq, idx, 1, total) {
                if whole {
                    self.stats.frames_received += 1;
                    self.frames[frame as usize].delivered = true;
                    let bytes = self.frames[frame as usize].sdu().to_vec();
                    self.switch_local_frame(now, sw, port, vpi, vci, bytes, out);
                } else {
                    self.stats.frames_corrupt += 1;
                }
            }
            return;
        }
        if self.frames[frame as usize].rm.is_some() {
            // An RM cell belongs to no AAL5 frame: no EPD/PPD state (TM 4.0 §5.10.6).
            self.switch_rm_cell(now, sw, port, frame, &route, out);
            return;
        }
        let s = &self.switches[sw as usize];
        let (epd, ppd) = (s.epd, s.ppd);
        let mut discard = route.discard;
        if idx == 0 && discard == 2 {
            discard = 0;
        }
        let keep = match discard {
            2 => {
                self.stats.epd_cells[sw as usize] += 1;
                self.frames[frame as usize].fate.get_or_insert("cells discarded by EPD (whole frames)");
                false
            }
            1 if !last => {
                self.stats.ppd_cells[sw as usize] += 1;
                self.frames[frame as usize].fate.get_or_insert("cells discarded by PPD (rest of a frame)");
                false
            }
            _ => {
                if idx == 0 && epd.is_some_and(|th| self.waiting_cells(now, sw, port_out(&route), route.class) >= th) {
                    discard = 2;
                    self.stats.epd_cells[sw as usize] += 1;
                    self.frames[frame as usize].fate.get_or_insert("cells discarded by EPD (whole frames)");
                    false
                } else if self.switch_enqueue(
                    now,
                    sw,
                    route.out_port,
                    route.class,
                    frame,
                    idx,
                    route.vpi,
                    route.vci,
                    out,
                ) {
                    if discard == 1 {
                        discard = 0;
                    }
                    true
                } else {
                    self.stats.cells_lost[sw as usize] += 1;
                    self.frames[frame as usize].fate.get_or_insert("cells lost: output queue full");
                    if ppd && !last {
                        discard = 1;
                    }
                    false
                }
            }
        };
        let _ = keep;
        // The next cell on this VC starts a new frame: no discard carries over.
        if last {
            discard = 0;
        }
        if discard != route.discard {
            if let Some(r) = self.switches[sw as usize].table[port as usize].get_mut(&(vpi, vci)) {
                r.discard = discard;
            }
        }
    }

    /// Cells `first .. first + n` of `frame` reach host endpoint `ep`.
    #[allow(clippy::too_many_arguments)]
    fn host_cells(&mut self, now: u64, ep: u32, frame: u32, first: u32, n: u32, vpi: u16, vci: u16, out: &mut AtmOut) {
        let (total, seq) = (self.frames[frame as usize].cells, self.frames[frame as usize].seq);
        if let Some(rm) = self.frames[frame as usize].rm {
            self.host_rm_cell(now, ep, vpi, vci, rm, out);
            return;
        }
        let e = &mut self.endpoints[ep as usize];
        let Some(&v) = e.by_num.get(&(vpi, vci)) else {
            if first == 0 {
                out.drops.push((
                    e.node,
                    Some(e.port),
                    format!("cells on VC {vpi}/{vci}, which the NIC has not opened"),
                    None,
                ));
            }
            return;
        };
        let Some(whole) = e.vcs[v].reasm.push(seq, first, n, total) else { return };
        if !whole {
            self.stats.frames_corrupt += 1;
            out.drops.push((
                e.node,
                Some(e.port),
                "AAL5 PDU discarded: cells lost, its length and CRC-32 fail (I.363.5 §10.2)".into(),
                None,
            ));
            return;
        }
        self.stats.frames_received += 1;
        let f = &mut self.frames[frame as usize];
        f.delivered = true;
        // The last reference takes the bytes; a copy otherwise (never in a run: the
        // receiving train holds the only reference left).
        let bytes = if f.refs == 1 { std::mem::take(&mut f.bytes) } else { f.bytes.clone() };
        let start = f.start as usize;
        if self.capture {
            let rec = erf_aal5(vpi, vci, &bytes[start..]);
            out.captured.push((e.node, e.port, now, rec));
        }
        self.host_frame(now, ep, v, bytes, start, out);
    }

    // ------------------------------------------------------------------ hosts

    /// An IP packet (Ethernet-headed, from the stack) leaves node port `ep` for `next_hop`.
    pub fn send_ip(&mut self, now: u64, ep: u32, next_hop: Ipv4Addr, frame: Vec<u8>, out: &mut AtmOut) {
        let e = &mut self.endpoints[ep as usize];
        let broadcast = next_hop.is_broadcast()
            || e.ip.is_some_and(|(a, l)| l < 31 && next_hop == crate::ip::subnet_broadcast(a, l));
        if broadcast || next_hop.is_multicast() {
            out.drops.push((
                e.node,
                Some(e.port),
                format!("CLIP has no broadcast or multicast: {next_hop} (RFC 2225 §4; MARS not modelled)"),
                frame.get(14..).map(<[u8]>::to_vec),
            ));
            return;
        }
        if let Some(&v) = e.clip.vc_of.get(&next_hop) {
            if e.vcs[v].state == VcState::Active {
                self.send_ip_on(now, ep, v, frame, out);
                return;
            }
        }
        let q = e.clip.pending.entry(next_hop).or_default();
        if q.len() >= crate::ip::ARP_PENDING_LIMIT {
            out.drops.push((
                e.node,
                Some(e.port),
                format!("ATMARP queue for {next_hop} full"),
                frame.get(14..).map(<[u8]>::to_vec),
            ));
            return;
        }
        q.push_back(frame);
        if e.clip.server.is_some() && !e.clip.resolving.contains(&next_hop) && !e.clip.atm_of.contains_key(&next_hop) {
            e.clip.resolving.insert(next_hop);
            self.atmarp_request(now, ep, next_hop, out);
        }
    }

    fn send_ip_on(&mut self, now: u64, ep: u32, v: usize, mut frame: Vec<u8>, out: &mut AtmOut) {
        let e = &self.endpoints[ep as usize];
        let start = if e.encap.is_llc() {
            frame[6..14].copy_from_slice(&[0xaa, 0xaa, 0x03, 0, 0, 0, 0x08, 0x00]);
            6
        } else {
            14
        };
        self.nic_send(now, ep, v, frame, start, out);
    }

    /// Segments a frame onto VC `v` of `ep` through its NIC queue.
    fn nic_send(&mut self, now: u64, ep: u32, v: usize, bytes: Vec<u8>, start: usize, out: &mut AtmOut) {
        let limit = self.endpoints[ep as usize].nic_limit;
        if self.backlog(now, ep) >= limit {
            let e = &self.endpoints[ep as usize];
            out.drops.push((
                e.node,
                Some(e.port),
                "ATM NIC transmit queue full".into(),
                bytes.get(14..).map(<[u8]>::to_vec),
            ));
            return;
        }
        let e = &self.endpoints[ep as usize];
        let (link, dir, vpi, vci, pcr, mut tat, node, port) =
            (e.link, e.end, e.vcs[v].vpi, e.vcs[v].vci, e.vcs[v].pcr_bps, e.vcs[v].tat, e.node, e.port);
        if self.capture {
            out.captured.push((node, port, now, erf_aal5(vpi, vci, &bytes[start..])));
        }
        let shaped = e.contracts.get(v).is_some_and(qos::Contract::shapes);
        let frame = self.new_frame(bytes, start);
        self.stats.frames_sent += 1;
        if shaped {
            self.contract_send(now, ep, v, frame, out);
            return;
        }
        let end = match self.endpoints[ep as usize].sar {
            None => self.send_cells(now, frame, link, dir, vpi, vci, pcr.map(|p| (p, &mut tat)), out),
            Some(sar) => {
                // The engine takes this PDU when done with the one before, spends its
                // set-up, then paces the cells at its own rate or the VC's PCR, the slower.
                let ready = now.max(sar.free_ns) + sar.pdu_ns;
                let end = match pcr {
                    Some(p) if p < sar.cell_bps => {
                        self.send_cells_from(now, ready, frame, link, dir, vpi, vci, Some((p, &mut tat)), out)
                    }
                    // The engine binds; its spacing restarts with each PDU, which its
                    // set-up and `free_ns` already hold back, so no state carries over.
                    _ => {
                        self.send_cells_from(now, ready, frame, link, dir, vpi, vci, Some((sar.cell_bps, &mut 0)), out)
                    }
                };
                // Busy for its set-up and one cell time of its own per cell, or until
                // the last cell is on the line if the line or the VC is slower.
                let cells = u128::from(self.frames[frame as usize].cells);
                let own = (cells * super::CELL_BITS * 1_000_000_000).div_ceil(u128::from(sar.cell_bps)) as u64;
                let on_line = self.links[link as usize].slots.start(end);
                if let Some(s) = self.endpoints[ep as usize].sar.as_mut() {
                    s.free_ns = on_line.max(ready + own);
                }
                end
            }
        };
        self.endpoints[ep as usize].vcs[v].tat = tat;
        self.endpoints[ep as usize].nic_frames.push_back(end);
        let done = self.links[link as usize].slots.start(end);
        out.schedule.push((done, AtmEvent::TxDone(ep)));
    }

    /// A whole AAL5 SDU (in `bytes[start..]`) arrived on VC `v` of `ep`.
    fn host_frame(&mut self, now: u64, ep: u32, v: usize, mut bytes: Vec<u8>, start: usize, out: &mut AtmOut) {
        let e = &self.endpoints[ep as usize];
        if (e.vcs[v].vpi, e.vcs[v].vci) == SIGNALLING_VC {
            if let Ok(msg) = signalling::sscop_payload(&bytes[start..]).and_then(Message::decode) {
                let delay = self.host_signalling_ns;
                self.queue_signal(now + delay, SigAt::Host(ep), msg, out);
            }
            return;
        }
        if e.vcs[v].role.is_some() {
            self.lane_frame(now, ep, v, bytes, start, out);
            return;
        }
        let (node, port, encap, mac) = (e.node, e.port, e.encap, e.mac);
        let Ok((repr, _)) = rfc2684::decapsulate(encap, &bytes[start..]) else {
            out.drops.push((node, Some(port), "malformed RFC 2684 encapsulation".into(), None));
            return;
        };
        let ethertype = match repr {
            rfc2684::Repr::LlcSnapRouted { ethertype } => ethertype,
            _ => EtherType::Ipv4,
        };
        let header = start + encap.header_len();
        match ethertype {
            EtherType::Ipv4 if header >= ethernet::HEADER_LEN => {
                // The IP packet is at `header`; the Ethernet header the stack expects goes
                // in front of it, in the same buffer when there is room.
                let mut frame = if header == ethernet::HEADER_LEN {
                    bytes
                } else {
                    let mut f = vec![0u8; ethernet::HEADER_LEN];
                    f.extend_from_slice(&bytes[header..]);
                    f
                };
                frame[0..6].copy_from_slice(&mac.0);
                frame[6..12].fill(0);
                frame[12..14].copy_from_slice(&u16::from(EtherType::Ipv4).to_be_bytes());
                out.deliver.push((node, port, frame));
            }
            EtherType::Ipv4 => {
                let mut frame = vec![0u8; ethernet::HEADER_LEN];
                frame[0..6].copy_from_slice(&mac.0);
                frame[12..14].copy_from_slice(&u16::from(EtherType::Ipv4).to_be_bytes());
                frame.extend_from_slice(&bytes[header..]);
                out.deliver.push((node, port, frame));
            }
            EtherType::Arp => {
                bytes.drain(..header);
                if let Ok(arp) = atmarp::Packet::new_checked(&bytes[..]).and_then(|p| atmarp::Repr::parse(&p)) {
                    self.host_atmarp(now, ep, v, arp, out);
                }
            }
            other => {
                out.drops.push((node, Some(port), format!("EtherType {:#06x} on a CLIP VC", u16::from(other)), None))
            }
        }
    }

    fn send_atmarp(&mut self, now: u64, ep: u32, v: usize, repr: &atmarp::Repr, out: &mut AtmOut) {
        let mut bytes = vec![0u8; 6];
        rfc2684::Repr::LlcSnapRouted { ethertype: EtherType::Arp }.encapsulate(&repr.to_bytes(), &mut bytes);
        self.nic_send(now, ep, v, bytes, 6, out);
    }

    fn atmarp_request(&mut self, now: u64, ep: u32, target: Ipv4Addr, out: &mut AtmOut) {
        let e = &mut self.endpoints[ep as usize];
        match e.clip.server_vc.filter(|&v| e.vcs[v].state == VcState::Active) {
            Some(v) => {
                let repr = atmarp::Repr {
                    operation: Operation::Request,
                    source_atm: Some(e.atm),
                    source_ip: e.ip.map(|a| a.0),
                    target_atm: None,
                    target_ip: Some(target),
                };
                self.stats.atmarp_requests += 1;
                self.send_atmarp(now, ep, v, &repr, out);
            }
            None => e.clip.queued_requests.push(target),
        }
    }

    fn host_atmarp(&mut self, now: u64, ep: u32, v: usize, arp: atmarp::Repr, out: &mut AtmOut) {
        let e = &mut self.endpoints[ep as usize];
        let own_ip = e.ip.map(|a| a.0);
        match arp.operation {
            Operation::InRequest => {
                let reply = atmarp::Repr {
                    operation: Operation::InReply,
                    source_atm: Some(e.atm),
                    source_ip: own_ip,
                    target_atm: arp.source_atm,
                    target_ip: arp.source_ip,
                };
                if let Some(ip) = arp.source_ip {
                    e.clip.vc_of.insert(ip, v);
                }
                self.send_atmarp(now, ep, v, &reply, out);
                if let Some(ip) = arp.source_ip {
                    self.flush(now, ep, ip, out);
                }
            }
            Operation::InReply => {
                if let Some(ip) = arp.source_ip {
                    e.clip.vc_of.insert(ip, v);
                    self.flush(now, ep, ip, out);
                }
            }
            Operation::Request if e.clip.is_server => {
                if let Some(answer) = clip::server_answer(&mut e.clip.table, &arp) {
                    self.send_atmarp(now, ep, v, &answer, out);
                }
            }
            Operation::Reply => {
                let (Some(ip), Some(atm)) = (arp.source_ip, arp.source_atm) else { return };
                if Some(ip) == own_ip {
                    return; // our registration acknowledged
                }
                e.clip.resolving.remove(&ip);
                e.clip.atm_of.insert(ip, atm);
                if let Some(v) = e.vcs.iter().position(|vc| vc.peer_atm == Some(atm) && vc.state == VcState::Active) {
                    e.clip.vc_of.insert(ip, v);
                    self.flush(now, ep, ip, out);
                } else if !e.vcs.iter().any(|vc| vc.peer_atm == Some(atm)) {
                    self.place_call(now, ep, atm, out);
                }
            }
            Operation::Nak => {
                let Some(ip) = arp.target_ip else { return };
                e.clip.resolving.remove(&ip);
                for frame in e.clip.pending.remove(&ip).unwrap_or_default() {
                    out.drops.push((
                        e.node,
                        Some(e.port),
                        format!("ATMARP_NAK: the LIS's ATMARP server has no entry for {ip}"),
                        frame.get(14..).map(<[u8]>::to_vec),
                    ));
                }
            }
            _ => {}
        }
    }

    fn flush(&mut self, now: u64, ep: u32, ip: Ipv4Addr, out: &mut AtmOut) {
        let e = &mut self.endpoints[ep as usize];
        let Some(&v) = e.clip.vc_of.get(&ip) else { return };
        for frame in e.clip.pending.remove(&ip).unwrap_or_default() {
            self.send_ip_on(now, ep, v, frame, out);
        }
    }

    fn start(&mut self, now: u64, out: &mut AtmOut) {
        for ep in 0..self.endpoints.len() as u32 {
            let e = &self.endpoints[ep as usize];
            // RFC 2225 §8.2: InATMARP on every LLC/SNAP PVC to learn its far end (not
            // on LANE ports: their VCs are LANE's).
            if e.encap.is_llc() && e.lane.is_none() && e.servers.is_none() {
                for v in 1..e.vcs.len() {
                    let e = &self.endpoints[ep as usize];
                    let repr = atmarp::Repr {
                        operation: Operation::InRequest,
                        source_atm: Some(e.atm),
                        source_ip: e.ip.map(|a| a.0),
                        target_atm: None,
                        target_ip: None,
                    };
                    self.stats.inatmarp_requests += 1;
                    self.send_atmarp(now, ep, v, &repr, out);
                }
            }
            if let Some(server) = self.endpoints[ep as usize].clip.server {
                let v = self.place_call(now, ep, server, out);
                let e = &mut self.endpoints[ep as usize];
                e.clip.server_vc = Some(v);
                // RFC 2225 §8.5: register with a request for our own address.
                if let Some((ip, _)) = e.ip {
                    e.clip.queued_requests.insert(0, ip);
                }
            }
        }
        self.lane_start(now, out);
    }

    /// Static far ends of VC-multiplexed PVCs, which cannot carry InATMARP (RFC 2225
    /// §8.2: "manually configured").
    pub fn set_pvc_peer(&mut self, ep: u32, vpi: u16, vci: u16, ip: Ipv4Addr) {
        let e = &mut self.endpoints[ep as usize];
        if let Some(&v) = e.by_num.get(&(vpi, vci)) {
            e.clip.vc_of.insert(ip, v);
        }
    }

    /// Traces every PVC from a host through the switches' cross-connects; returns
    /// (endpoint, vpi, vci, far endpoint) for those that end at another host.
    pub fn pvc_far_ends(&self) -> Vec<(u32, u16, u16, u32)> {
        let mut found = Vec::new();
        for (i, e) in self.endpoints.iter().enumerate() {
            for vc in e.vcs.iter().skip(1) {
                let (mut link, mut end, mut vpi, mut vci) = (e.link, e.end, vc.vpi, vc.vci);
                for _ in 0..64 {
                    match self.links[link as usize].ends[1 - end as usize] {
                        Attach::Host(far) => {
                            if self.endpoints[far as usize].by_num.contains_key(&(vpi, vci)) {
                                found.push((i as u32, vc.vpi, vc.vci, far));
                            }
                            break;
                        }
                        Attach::Switch(sw, port) => {
                            match self.switches[sw as usize].table[port as usize].get(&(vpi, vci)) {
                                Some(r) if !r.local => {
                                    (link, end) = self.switches[sw as usize].ports[r.out_port as usize];
                                    (vpi, vci) = (r.vpi, r.vci);
                                }
                                _ => break,
                            }
                        }
                    }
                }
            }
        }
        found
    }

    /// The IPv4 address of endpoint `ep`.
    pub fn endpoint_ip(&self, ep: u32) -> Option<Ipv4Addr> {
        self.endpoints[ep as usize].ip.map(|a| a.0)
    }

    // ------------------------------------------------------------------ signalling

    fn queue_signal(&mut self, at: u64, target: SigAt, msg: Message, out: &mut AtmOut) {
        let id = match self.free_signals.pop() {
            Some(i) => {
                self.signals[i as usize] = Some((target, msg));
                i
            }
            None => {
                self.signals.push(Some((target, msg)));
                (self.signals.len() - 1) as u32
            }
        };
        out.schedule.push((at, AtmEvent::Signal(id)));
    }

    fn signalling_frame(msg: &Message, seq: u32) -> Vec<u8> {
        let mut pdu = Vec::new();
        signalling::sscop_sd(&msg.encode(), seq, &mut pdu);
        pdu
    }

    fn host_send_signal(&mut self, now: u64, ep: u32, msg: &Message, out: &mut AtmOut) {
        let e = &mut self.endpoints[ep as usize];
        e.sscop_seq += 1;
        let bytes = Self::signalling_frame(msg, e.sscop_seq);
        self.nic_send(now, ep, 0, bytes, 0, out);
    }

    #[allow(clippy::too_many_arguments)]
    fn switch_send(&mut self, now: u64, sw: u32, port: u16, vpi: u16, vci: u16, bytes: Vec<u8>, out: &mut AtmOut) {
        let (link, dir) = self.switches[sw as usize].ports[port as usize];
        if self.capture {
            let node = self.switches[sw as usize].node;
            out.captured.push((node, port, now, erf_aal5(vpi, vci, &bytes)));
        }
        let frame = self.new_frame(bytes, 0);
        self.stats.frames_sent += 1;
        self.send_cells(now, frame, link, dir, vpi, vci, None, out);
    }

    fn switch_send_signal(&mut self, now: u64, sw: u32, port: u16, msg: &Message, out: &mut AtmOut) {
        let s = &mut self.switches[sw as usize];
        s.sscop_seq += 1;
        let bytes = Self::signalling_frame(msg, s.sscop_seq);
        self.switch_send(now, sw, port, 0, 5, bytes, out);
    }

    /// Calls `called` from `ep` (UBR); returns the new VC's index.
    fn place_call(&mut self, now: u64, ep: u32, called: AtmAddress, out: &mut AtmOut) -> usize {
        let e = &mut self.endpoints[ep as usize];
        let call_ref = e.next_call;
        e.next_call += 1;
        let v = e.vcs.len();
        e.vcs.push(Vc {
            vpi: 0,
            vci: 0,
            state: VcState::Calling(now),
            peer_atm: Some(called),
            pcr_bps: None,
            tat: 0,
            reasm: Reasm::default(),
            role: None,
            sel: 0,
        });
        e.calls.insert(call_ref, v);
        let msg = Message {
            kind: MessageType::Setup,
            call_ref,
            from_destination: false,
            called: Some(called),
            calling: Some(e.atm),
            connection: None,
            pcr_cells: None,
        };
        self.host_send_signal(now, ep, &msg, out);
        v
    }

    fn host_signal(&mut self, now: u64, ep: u32, msg: Message, out: &mut AtmOut) {
        match msg.kind {
            MessageType::Setup => {
                let Some((vpi, vci)) = msg.connection else { return };
                let e = &mut self.endpoints[ep as usize];
                let v = e.vcs.len();
                e.vcs.push(Vc {
                    vpi,
                    vci,
                    state: VcState::Called,
                    peer_atm: msg.calling,
                    pcr_bps: None,
                    tat: 0,
                    reasm: Reasm::default(),
                    role: None,
                    sel: 0,
                });
                e.by_num.insert((vpi, vci), v);
                e.calls.insert(msg.call_ref | 0x80_0000, v);
                if e.lane.is_some() || e.servers.is_some() {
                    let local = msg.called.map_or(0, |a| a.0[19]);
                    let peer = msg.calling.map_or(0, |a| a.0[19]);
                    e.vcs[v].role = super::lane::callee_role(local, peer);
                    e.vcs[v].sel = local;
                }
                let reply = Message {
                    kind: MessageType::Connect,
                    from_destination: true,
                    connection: Some((vpi, vci)),
                    called: None,
                    calling: None,
                    pcr_cells: None,
                    ..msg
                };
                self.host_send_signal(now, ep, &reply, out);
            }
            MessageType::ConnectAck => {
                let e = &mut self.endpoints[ep as usize];
                let Some(&v) = e.calls.get(&(msg.call_ref | 0x80_0000)) else { return };
                e.vcs[v].state = VcState::Active;
                if e.vcs[v].role.is_some() {
                    self.lane_vc_up(now, ep, v, false, out);
                    return;
                }
                // RFC 2225 §8.3/§8.4: learn the caller's IP address with InATMARP.
                let repr = atmarp::Repr {
                    operation: Operation::InRequest,
                    source_atm: Some(e.atm),
                    source_ip: e.ip.map(|a| a.0),
                    target_atm: e.vcs[v].peer_atm,
                    target_ip: None,
                };
                self.stats.inatmarp_requests += 1;
                self.send_atmarp(now, ep, v, &repr, out);
            }
            MessageType::Connect => {
                let e = &mut self.endpoints[ep as usize];
                let Some(&v) = e.calls.get(&msg.call_ref) else { return };
                let Some((vpi, vci)) = msg.connection else { return };
                if let VcState::Calling(since) = e.vcs[v].state {
                    self.stats.svc_setups += 1;
                    self.stats.svc_setup_ns.push(now - since);
                }
                let vc = &mut e.vcs[v];
                (vc.vpi, vc.vci, vc.state) = (vpi, vci, VcState::Active);
                e.by_num.insert((vpi, vci), v);
                let peer = vc.peer_atm;
                let ack = Message { kind: MessageType::ConnectAck, from_destination: false, connection: None, ..msg };
                self.host_send_signal(now, ep, &ack, out);
                let e = &mut self.endpoints[ep as usize];
                if e.vcs[v].role.is_some() {
                    self.lane_vc_up(now, ep, v, true, out);
                    return;
                }
                if e.clip.server_vc == Some(v) {
                    for target in std::mem::take(&mut e.clip.queued_requests) {
                        self.atmarp_request(now, ep, target, out);
                    }
                } else {
                    let ips: Vec<Ipv4Addr> =
                        e.clip.atm_of.iter().filter(|(_, a)| Some(**a) == peer).map(|(ip, _)| *ip).collect();
                    for ip in ips {
                        self.endpoints[ep as usize].clip.vc_of.insert(ip, v);
                        self.flush(now, ep, ip, out);
                    }
                }
            }
            MessageType::Release => {
                let e = &mut self.endpoints[ep as usize];
                if let Some(v) = e.calls.remove(&msg.call_ref) {
                    if e.vcs[v].role.is_some() {
                        self.lane_vc_refused(now, ep, v, out);
                        return;
                    }
                    let peer = e.vcs[v].peer_atm;
                    let ips: Vec<Ipv4Addr> =
                        e.clip.atm_of.iter().filter(|(_, a)| Some(**a) == peer).map(|(ip, _)| *ip).collect();
                    for ip in ips {
                        for frame in e.clip.pending.remove(&ip).unwrap_or_default() {
                            out.drops.push((
                                e.node,
                                Some(e.port),
                                format!("SVC to {ip} refused: no route to its ATM address"),
                                frame.get(14..).map(<[u8]>::to_vec),
                            ));
                        }
                    }
                }
            }
            MessageType::CallProceeding => {}
        }
    }

    fn allocate_vci(&self, sw: u32, port: u16) -> u16 {
        let table = &self.switches[sw as usize].table[port as usize];
        // On a link between two switches both allocate VCIs for the calls they forward:
        // the lower-numbered switch takes even VCIs, the other odd ones, so two calls
        // crossing in opposite directions never get the same VCI.
        let (link, end) = self.switches[sw as usize].ports[port as usize];
        let parity = match self.links[link as usize].ends[1 - end as usize] {
            Attach::Switch(other, _) => Some(u16::from(sw > other)),
            Attach::Host(_) => None,
        };
        (wire::atm::vci::FIRST_USER..=u16::MAX)
            .find(|&v| !table.contains_key(&(0, v)) && parity.is_none_or(|p| v % 2 == p))
            .expect("a free VCI")
    }

    /// The port of switch `sw` that leads to `called`.
    fn route_to(&self, sw: u32, called: &AtmAddress) -> Option<u16> {
        let s = &self.switches[sw as usize];
        if prefix(called) == prefix(&s.atm) {
            return s.ports.iter().position(|&(link, end)| {
                link != u32::MAX && matches!(self.links[link as usize].ends[1 - end as usize], Attach::Host(ep) if self.endpoints[ep as usize].atm.0[..19] == called.0[..19])
            }).map(|p| p as u16);
        }
        let target = u32::from_be_bytes([called.0[9], called.0[10], called.0[11], called.0[12]]).checked_sub(1)?;
        s.toward.get(&target).copied()
    }

    fn switch_signal(&mut self, now: u64, sw: u32, port: u16, msg: Message, out: &mut AtmOut) {
        match msg.kind {
            MessageType::Setup => {
                let Some(called) = msg.called else { return };
                let in_vci = match msg.connection {
                    Some((_, vci)) => vci,
                    None => self.allocate_vci(sw, port),
                };
                if called == self.switches[sw as usize].atm {
                    self.switches[sw as usize].table[port as usize].insert(
                        (0, in_vci),
                        Route {
                            out_port: port,
                            vpi: 0,
                            vci: in_vci,
                            local: true,
                            discard: 0,
                            reasm: Reasm::default(),
                            class: UBR_QUEUE,
                        },
                    );
                    let reply = Message {
                        kind: MessageType::Connect,
                        from_destination: true,
                        connection: Some((0, in_vci)),
                        called: None,
                        calling: None,
                        ..msg
                    };
                    self.switch_send_signal(now, sw, port, &reply, out);
                    return;
                }
                let Some(out_port) = self.route_to(sw, &called) else {
                    let node = self.switches[sw as usize].node;
                    out.drops.push((node, Some(port), format!("SETUP for ATM address {called}: no route"), None));
                    let release = Message {
                        kind: MessageType::Release,
                        from_destination: true,
                        connection: None,
                        called: None,
                        calling: None,
                        ..msg
                    };
                    self.switch_send_signal(now, sw, port, &release, out);
                    return;
                };
                // Reserve the incoming VCI now (as a dead entry) so two calls never share it.
                self.switches[sw as usize].table[port as usize].insert(
                    (0, in_vci),
                    Route {
                        out_port: port,
                        vpi: 0,
                        vci: in_vci,
                        local: true,
                        discard: 0,
                        reasm: Reasm::default(),
                        class: UBR_QUEUE,
                    },
                );
                let out_vci = self.allocate_vci(sw, out_port);
                self.switches[sw as usize].table[out_port as usize].insert(
                    (0, out_vci),
                    Route {
                        out_port,
                        vpi: 0,
                        vci: out_vci,
                        local: true,
                        discard: 0,
                        reasm: Reasm::default(),
                        class: UBR_QUEUE,
                    },
                );
                let s = &mut self.switches[sw as usize];
                let out_ref = s.next_ref;
                s.next_ref += 1;
                s.calls.insert((out_port, out_ref), Call { in_port: port, in_ref: msg.call_ref, in_vci, out_vci });
                let forward =
                    Message { call_ref: out_ref, from_destination: false, connection: Some((0, out_vci)), ..msg };
                self.switch_send_signal(now, sw, out_port, &forward, out);
            }
            MessageType::Connect => {
                let Some(call) = self.switches[sw as usize].calls.remove(&(port, msg.call_ref)) else { return };
                let s = &mut self.switches[sw as usize];
                s.table[call.in_port as usize].insert(
                    (0, call.in_vci),
                    Route {
                        out_port: port,
                        vpi: 0,
                        vci: call.out_vci,
                        local: false,
                        discard: 0,
                        reasm: Reasm::default(),
                        class: UBR_QUEUE,
                    },
                );
                s.table[port as usize].insert(
                    (0, call.out_vci),
                    Route {
                        out_port: call.in_port,
                        vpi: 0,
                        vci: call.in_vci,
                        local: false,
                        discard: 0,
                        reasm: Reasm::default(),
                        class: UBR_QUEUE,
                    },
                );
                // SVCs are UBR (place_call signals no traffic descriptor).
                s.portq[port as usize].classes |= 1 << UBR_QUEUE;
                s.portq[call.in_port as usize].classes |= 1 << UBR_QUEUE;
                let ack = Message {
                    kind: MessageType::ConnectAck,
                    from_destination: false,
                    connection: None,
                    called: None,
                    calling: None,
                    ..msg
                };
                self.switch_send_signal(now, sw, port, &ack, out);
                let connect = Message {
                    call_ref: call.in_ref,
                    from_destination: true,
                    connection: Some((0, call.in_vci)),
                    ..msg
                };
                self.switch_send_signal(now, sw, call.in_port, &connect, out);
            }
            MessageType::Release => {
                if let Some(call) = self.switches[sw as usize].calls.remove(&(port, msg.call_ref)) {
                    let s = &mut self.switches[sw as usize];
                    s.table[call.in_port as usize].remove(&(0, call.in_vci));
                    s.table[port as usize].remove(&(0, call.out_vci));
                    let release = Message { call_ref: call.in_ref, from_destination: true, ..msg };
                    self.switch_send_signal(now, sw, call.in_port, &release, out);
                }
            }
            MessageType::ConnectAck | MessageType::CallProceeding => {}
        }
    }

    /// A whole frame on a VC that ends at switch `sw` (signalling, the ATMARP server).
    #[allow(clippy::too_many_arguments)]
    fn switch_local_frame(&mut self, now: u64, sw: u32, port: u16, vpi: u16, vci: u16, sdu: Vec<u8>, out: &mut AtmOut) {
        if (vpi, vci) == SIGNALLING_VC {
            if let Ok(msg) = signalling::sscop_payload(&sdu).and_then(Message::decode) {
                let delay = self.switches[sw as usize].signalling_ns;
                self.queue_signal(now + delay, SigAt::Switch(sw, port), msg, out);
            }
            return;
        }
        let Ok((rfc2684::Repr::LlcSnapRouted { ethertype: EtherType::Arp }, payload)) =
            rfc2684::decapsulate(Encapsulation::LlcSnapRouted, &sdu)
        else {
            return;
        };
        let Ok(arp) = atmarp::Packet::new_checked(payload).and_then(|p| atmarp::Repr::parse(&p)) else { return };
        let Some(table) = self.switches[sw as usize].server.as_mut() else { return };
        if let Some(answer) = clip::server_answer(table, &arp) {
            let mut bytes = Vec::new();
            rfc2684::Repr::LlcSnapRouted { ethertype: EtherType::Arp }.encapsulate(&answer.to_bytes(), &mut bytes);
            self.switch_send(now, sw, port, vpi, vci, bytes, out);
        }
    }

    /// The 53 octets of cell `index` of an AAL5 SDU sent on `vpi`/`vci`: header with
    /// its HEC, payload, and in the last cell the trailer with the CRC-32.
    pub fn cell_bytes(vpi: u8, vci: u16, sdu: &[u8], index: usize) -> Option<[u8; wire::atm::CELL_LEN]> {
        let mut found = None;
        let mut i = 0;
        wire::aal5::segment(vpi, vci, sdu, |c| {
            if i == index {
                found = Some(*c);
            }
            i += 1;
        })
        .ok()?;
        found
    }
}

#[path = "lane_glue.rs"]
mod lane_glue;

#[path = "qos.rs"]
pub mod qos;
use qos::UBR_QUEUE;

const fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

fn port_out(r: &Route) -> u16 {
    r.out_port
}

/// Writes `time_ns` into an ERF record's timestamp: little-endian 64-bit fixed point,
/// seconds in the high 32 bits and the binary fraction of a second in the low 32.
pub fn set_erf_time(record: &mut [u8], time_ns: u64) {
    let secs = time_ns / 1_000_000_000;
    let frac = ((u128::from(time_ns % 1_000_000_000) << 32) / 1_000_000_000) as u64;
    record[..8].copy_from_slice(&((secs << 32) | frac).to_le_bytes());
}

/// An ERF record of type AAL5 (4): the 16-octet ERF header, a 4-octet cell header
/// without HEC, then the whole CPCS-PDU with pad and trailer (as Wireshark's ERF
/// dissector reads it and checks the CRC-32).
pub fn erf_aal5(vpi: u16, vci: u16, sdu: &[u8]) -> Vec<u8> {
    let mut pdu = Vec::with_capacity(sdu.len() + 48);
    if wire::aal5::encode(sdu, 0, 0, &mut pdu).is_err() {
        pdu.clear();
    }
    let rlen = 16 + 4 + pdu.len();
    let mut rec = Vec::with_capacity(rlen);
    rec.extend_from_slice(&[0; 8]); // timestamp: see set_erf_time
    rec.push(4); // ERF type AAL5
    rec.push(0x04); // flags: varying record length
    rec.extend_from_slice(&(rlen as u16).to_be_bytes());
    rec.extend_from_slice(&0u16.to_be_bytes()); // loss counter
    rec.extend_from_slice(&((4 + pdu.len()) as u16).to_be_bytes()); // wire length
    let header = wire::atm::Repr::user_data(vpi as u8, vci, true).to_bytes();
    rec.extend_from_slice(&header[..4]);
    rec.extend_from_slice(&pdu);
    rec
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn reassembly_detects_lost_and_merged_frames() {
        let mut r = Reasm::default();
        // A whole 3-cell frame in two chunks.
        assert_eq!(r.push(1, 0, 2, 3), None);
        assert_eq!(r.push(1, 2, 1, 3), Some(true));
        // Frame 2 loses its middle cell.
        assert_eq!(r.push(2, 0, 1, 3), None);
        assert_eq!(r.push(2, 2, 1, 3), Some(false));
        // Frame 3 loses its last cell: its first cells merge with frame 4, both lost.
        assert_eq!(r.push(3, 0, 2, 3), None);
        assert_eq!(r.push(4, 0, 3, 3), Some(false));
        // Frame 5 arrives whole again.
        assert_eq!(r.push(5, 0, 3, 3), Some(true));
    }

    #[test]
    fn cell_bytes_carry_a_valid_hec_and_aal5_crc() {
        let sdu: Vec<u8> = (0..100u8).collect();
        let last = AtmNet::cell_bytes(0, 100, &sdu, 2).unwrap();
        let cell = wire::atm::Cell::new_checked(&last[..]).unwrap();
        assert!(cell.verify_hec());
        assert!(cell.pti().is_end_of_sdu());
        assert_eq!(cell.vci(), 100);
        let mut pdu = Vec::new();
        for i in 0..3 {
            pdu.extend_from_slice(&AtmNet::cell_bytes(0, 100, &sdu, i).unwrap()[5..]);
        }
        assert_eq!(wire::aal5::decode(&pdu).unwrap(), &sdu[..]);
        assert!(AtmNet::cell_bytes(0, 100, &sdu, 3).is_none());
    }
}
