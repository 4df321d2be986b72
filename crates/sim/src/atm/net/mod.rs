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
    /// Its own timers when driven through the `Link` trait ([`door`]); the world keeps
    /// the network's events in its engine instead.
    own: door::OwnTimers,
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

    // ------------------------------------------------------------------ hosts

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
mod build;
mod calls;
mod cells;
mod door;
mod host;

mod lane_glue;

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
