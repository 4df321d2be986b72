//! LAN Emulation v1 (ATM Forum af-lane-0021.000, "LAN Emulation over ATM Version 1.0",
//! LUNI) and the MPOA client's flow detection (af-mpoa-0087.000, "Multi-Protocol Over
//! ATM Version 1.0"): the state of LE clients and of the LECS, LES and BUS, and the
//! decisions they take, without I/O. [`super::net`] (its `lane_glue` child) moves the
//! frames on VCs.
//!
//! What is modelled (af-lane-0021.000 section numbers):
//!
//! * §5.1 initialisation of an LE client: LECS connect (configuration-direct VCC),
//!   configuration (LE_CONFIGURE_REQUEST/RESPONSE naming the LES of the ELAN), join
//!   (control-direct VCC to the LES, LE_JOIN_REQUEST/RESPONSE assigning the LECID; the
//!   LES calls the client back on a control-distribute VCC), initial registration (the
//!   join registers the client's MAC; a proxy registers none, §5.1.1), BUS connect (an
//!   LE_ARP for the all-ones MAC, §5.1.6, which the LES answers with the BUS's ATM
//!   address; multicast-send VCC to the BUS, which calls the client back on a
//!   multicast-forward VCC), then operational — here once both BUS VCCs are up, so that
//!   no frame the BUS floods misses a client that just joined. The LECS address is known as ILMI would
//!   give it (§5.3.2, first of the three ways), not through the well-known address.
//! * §6.1 / §7.1.5 address resolution: a frame to an unknown unicast MAC makes the
//!   client send an LE_ARP_REQUEST to the LES and, while it waits, send the frame to the
//!   BUS, at most C10 Maximum Unknown Frame Count (1) frames per C11 Maximum Unknown
//!   Frame Time (1 s) per destination (§5.2 Table of parameters); further frames wait
//!   for the data-direct VCC. The LES answers from its registrations; for a MAC no one
//!   registered it forwards the request to the proxy clients (§7.1.5.1), and a proxy
//!   that has the MAC behind it (seen as the source of a frame it sent into the ELAN)
//!   answers with the REMOTE-ADDRESS flag; the LES relays the answer.
//! * The flush protocol (LE_FLUSH_REQUEST/RESPONSE, op-codes 0x0007/0x0107): before a
//!   client moves a destination's frames from the BUS to a new data-direct VCC it sends
//!   an LE_FLUSH_REQUEST (target ATM address = the destination client) down the BUS
//!   path, behind the frames it flooded there, and holds the destination's frames until
//!   the LE_FLUSH_RESPONSE comes back (the target answers on its control-direct VCC,
//!   the LES relays it to the requester's LECID), so no frame is reordered. If no
//!   response arrives within C22 Path Switching Delay (6 s) the client switches anyway
//!   (checked when the next frame for that destination is sent). A destination none of
//!   whose frames went through the BUS switches at once. `LaneConfig::flush = false`
//!   turns the protocol off (it is optional in LANE v1).
//! * LE_ARP cache aging: an entry not verified by an LE_ARP response for C17 Aging Time
//!   (300 s) expires; the next frame for that MAC is treated as unknown (resolved
//!   again, one frame through the BUS within C10/C11, the rest held), and when the
//!   answer names the ATM address whose data-direct VCC is still up the client flushes
//!   and uses it again. Expiry is checked when a frame is sent, which is when it
//!   matters. C12 VCC Timeout Period (20 min: release of an idle data-direct VCC) is not
//!   modelled: hosts do not release calls here (UNI RELEASE from an end system is not
//!   in `net`).
//! * The BUS (§7.2) forwards every frame it receives on a multicast-send VCC to every
//!   client's multicast-forward VCC, the sender's included (a client drops frames with
//!   its own LECID, §7.1.14). Point-to-multipoint VCCs are replaced by one
//!   point-to-point VCC per leaf, replicated at the BUS.
//! * BUS capacity: a frame server of `frames_per_second` and `cells_per_second`; a frame
//!   takes max(1 / frames, cells / cells-per-second) of it, `queue_frames` wait, the
//!   rest are dropped. No standard gives a BUS's speed: `cells_per_second` defaults to
//!   53,000, calibrated on seed 001 Fig. 4 ("the maximum BUS throughput is approx.
//!   53.000 cells per second", the Centillion 100's BUS); frames per second are
//!   unlimited by default.
//! * MPOA (af-mpoa-0087.000 §4.7): the ingress MPC counts the packets to each IP
//!   destination it sends to an MPS's MAC; MPC-p1 Shortcut-Setup Frame Count (10) in
//!   MPC-p2 Shortcut-Setup Frame Time (1 s) (§5.2.1 Table "MPC configuration
//!   parameters") trigger an MPOA Resolution Request (NHRP, RFC 2332 §5.2.1, with the
//!   MPOA op-code 134). The MPS answers (op-code 135) with the ATM address of the egress
//!   MPC, the client calls it (a shortcut VCC, LLC/SNAP routed PDUs, RFC 2684 §5.1) and
//!   sends the flow on it. An MPS whose router sends the destination's packets on to
//!   another router running an MPS is not the destination's serving NHS: it makes an
//!   NHRP Resolution Request (RFC 2332 §5.2.1, op-code 1, hop count
//!   [`NHRP_HOP_COUNT`] decremented at each NHS) and sends it to that MPS on an MPS-MPS
//!   VCC; the MPS that serves the destination answers (op-code 2) and each NHS relays
//!   the reply back the way the request came (§5.2.2), the first as an MPOA Resolution
//!   Reply to its MPC: resolution across any number of LISs. Simplifications: the
//!   egress MPC's DLL header for the destination is learnt from the router's frames
//!   instead of MPOA cache imposition (§4.7.2.2); the MPS learns IP → MAC (and so the
//!   next hop) from the frames its router sends, not from its routing table; which LE
//!   clients belong to an MPS is configured, in place of the device-type TLVs of §4.1.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::net::Ipv4Addr;

use serde::Serialize;
use wire::ethernet::Address as Mac;
use wire::lane::{AtmAddress, ControlFrame, ControlRepr};

/// Selectors (last octet of an NSAP address, UNI 3.1 §5.1.3.1: not used for routing,
/// free for the end system) that tell a node's LANE/MPOA entities apart.
pub mod sel {
    pub const LEC: u8 = 0;
    pub const LECS: u8 = 1;
    /// The kind of any LES selector (see [`les`]).
    pub const LES: u8 = 2;
    /// The kind of any BUS selector (see [`bus`]).
    pub const BUS: u8 = 3;
    pub const MPS: u8 = 4;
    pub const MPC: u8 = 5;

    /// The LES of the `k`-th ELAN a port serves (several ELANs can share a server).
    pub const fn les(k: usize) -> u8 {
        0x10 + k as u8
    }

    /// The BUS of the `k`-th ELAN a port serves.
    pub const fn bus(k: usize) -> u8 {
        0x80 + k as u8
    }

    /// LEC, LECS, LES, BUS, MPS or MPC.
    pub const fn kind(s: u8) -> u8 {
        match s {
            0x10..=0x7f => LES,
            0x80.. => BUS,
            _ => s,
        }
    }
}

/// af-lane-0021.000 §5.2: C10 Maximum Unknown Frame Count, default 1.
pub const MAX_UNKNOWN_FRAME_COUNT: u32 = 1;
/// af-lane-0021.000 §5.2: C11 Maximum Unknown Frame Time, default 1 s.
pub const MAX_UNKNOWN_FRAME_TIME_NS: u64 = 1_000_000_000;
/// Frames a client holds per destination waiting for its data-direct VCC (as ARP's
/// queue, RFC 1122 §2.3.2.2, allows at least one; 64 here so a burst survives the
/// 2-3 ms of LE_ARP and SVC set-up; uncalibrated).
pub const PENDING_LIMIT: usize = 64;
/// af-lane-0021.000 §5.2: C22 Path Switching Delay, default 6 s: the longest a client
/// holds a destination's frames waiting for its LE_FLUSH_RESPONSE.
pub const PATH_SWITCHING_DELAY_NS: u64 = 6_000_000_000;
/// af-mpoa-0087.000 §5.2.1 MPC-p4 Initial Retry Time, default 5 s: after a failed
/// resolution the MPC waits this long before asking again (the doubling up to MPC-p5,
/// 40 s, is not modelled).
pub const INITIAL_RETRY_TIME_NS: u64 = 5_000_000_000;
pub use qoslab_plan::atm::{
    ElanConfig, LaneConfig, LecConfig, MpoaConfig, AGING_TIME_NS, BUS_CELLS_PER_SECOND, SHORTCUT_FRAME_COUNT,
    SHORTCUT_FRAME_TIME_NS,
};

/// af-lane-0021.000 §5.1: the initialisation phases of a client.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum LecPhase {
    Initial,
    LecsConnect,
    Configuration,
    Join,
    BusConnect,
    Operational,
}

/// What a VC of a LANE endpoint carries (by the selectors of its two ends).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VcRole {
    ConfigureDirect,
    ControlDirect,
    ControlDistribute,
    MulticastSend,
    MulticastForward,
    DataDirect,
    /// MPC → MPS control (LLC/SNAP NHRP).
    MpoaControl,
    /// MPOA shortcut (LLC/SNAP routed IP).
    Shortcut,
    /// MPS → MPS: NHRP between next-hop servers (RFC 2332), LLC/SNAP NHRP.
    NhsPeer,
}

/// The role of a VC from one end: `local` is the selector of this end's address,
/// `peer` of the far end's.
pub fn vc_role(local: u8, peer: u8) -> Option<VcRole> {
    Some(match (sel::kind(local), sel::kind(peer)) {
        (sel::LEC, sel::LECS) | (sel::LECS, sel::LEC) => VcRole::ConfigureDirect,
        (sel::LEC, sel::LES) | (sel::LES, sel::LEC) => VcRole::ControlDirect,
        (sel::LEC, sel::BUS) | (sel::BUS, sel::LEC) => VcRole::MulticastSend,
        (sel::LEC, sel::LEC) => VcRole::DataDirect,
        (sel::MPC, sel::MPS) | (sel::MPS, sel::MPC) => VcRole::MpoaControl,
        (sel::MPC, sel::MPC) => VcRole::Shortcut,
        (sel::MPS, sel::MPS) => VcRole::NhsPeer,
        _ => return None,
    })
}

/// The role of a VC at its called end (`local` and `peer` selectors): a client called by
/// the LES gets its control-distribute VCC, by the BUS its multicast-forward VCC.
pub fn callee_role(local: u8, peer: u8) -> Option<VcRole> {
    match (sel::kind(local), sel::kind(peer)) {
        (sel::LEC, sel::LES) => Some(VcRole::ControlDistribute),
        (sel::LEC, sel::BUS) => Some(VcRole::MulticastForward),
        _ => vc_role(local, peer),
    }
}

/// The state of one LE client (and its MPC, if any).
#[derive(Debug)]
pub struct Lec {
    pub elan: String,
    pub proxy: bool,
    pub phase: LecPhase,
    pub lecs: Option<AtmAddress>,
    pub les: Option<AtmAddress>,
    pub bus: Option<AtmAddress>,
    pub lecid: u16,
    pub mac: Mac,
    pub next_transaction: u32,
    /// Control and multicast VCs by role (index into the endpoint's VCs).
    pub configure_vc: Option<usize>,
    pub control_vc: Option<usize>,
    pub bus_vc: Option<usize>,
    /// The BUS's multicast-forward VCC to us is up.
    pub forward_up: bool,
    /// LE_ARP cache (§7.1.5): MAC → ATM address of the client that has it.
    pub le_arp: BTreeMap<Mac, AtmAddress>,
    /// When each LE_ARP entry was last verified (an LE_ARP response), for C17.
    pub verified: BTreeMap<Mac, u64>,
    /// Destinations with unicast frames sent through the BUS since their last flush.
    pub flooded: BTreeSet<Mac>,
    /// Flushes outstanding: destination → (transaction id, when the request left).
    pub flushing: BTreeMap<Mac, (u32, u64)>,
    /// Whether this client runs the flush protocol, and its C17 (ns).
    pub flush: bool,
    pub aging_ns: u64,
    /// Data-direct VCs by far ATM address.
    pub direct: BTreeMap<AtmAddress, usize>,
    /// LE_ARP requests outstanding.
    pub resolving: BTreeSet<Mac>,
    /// Frames waiting for the data-direct VCC of their destination.
    pub pending: BTreeMap<Mac, VecDeque<Vec<u8>>>,
    /// Frames waiting for the client to become operational.
    pub held: VecDeque<Vec<u8>>,
    /// C10/C11: (window start, frames sent to the BUS) per unknown destination.
    pub unknown: BTreeMap<Mac, (u64, u32)>,
    /// A proxy's MACs: sources of frames it sent into the ELAN (its bridge's side).
    pub local_macs: BTreeSet<Mac>,
    pub mpc: Option<Mpc>,
}

impl Lec {
    pub fn new(elan: String, proxy: bool, mac: Mac) -> Lec {
        Lec {
            elan,
            proxy,
            phase: LecPhase::Initial,
            lecs: None,
            les: None,
            bus: None,
            lecid: 0,
            mac,
            next_transaction: 1,
            configure_vc: None,
            control_vc: None,
            bus_vc: None,
            forward_up: false,
            le_arp: BTreeMap::new(),
            verified: BTreeMap::new(),
            flooded: BTreeSet::new(),
            flushing: BTreeMap::new(),
            flush: true,
            aging_ns: AGING_TIME_NS,
            direct: BTreeMap::new(),
            resolving: BTreeSet::new(),
            pending: BTreeMap::new(),
            held: VecDeque::new(),
            unknown: BTreeMap::new(),
            local_macs: BTreeSet::new(),
            mpc: None,
        }
    }

    pub fn transaction(&mut self) -> u32 {
        self.next_transaction += 1;
        self.next_transaction
    }

    /// C17: forgets the LE_ARP entry of `dst` if it was last verified `aging_ns` or
    /// more before `now`; true if it expired.
    pub fn age(&mut self, now: u64, dst: Mac) -> bool {
        match self.verified.get(&dst) {
            Some(&t) if now.saturating_sub(t) >= self.aging_ns && self.le_arp.contains_key(&dst) => {
                self.le_arp.remove(&dst);
                self.verified.remove(&dst);
                true
            }
            _ => false,
        }
    }

    /// Whether `dst`'s frames must wait for a flush at `now`: a flush is outstanding and
    /// C22 has not run out (if it has, the client gives up waiting).
    pub fn flush_pending(&mut self, now: u64, dst: Mac) -> bool {
        match self.flushing.get(&dst) {
            Some(&(_, since)) if now.saturating_sub(since) < PATH_SWITCHING_DELAY_NS => true,
            Some(_) => {
                self.flushing.remove(&dst);
                self.flooded.remove(&dst);
                false
            }
            None => false,
        }
    }

    /// §5.2 C10/C11: may another frame to unknown `dst` go to the BUS at `now`?
    pub fn may_flood_unknown(&mut self, now: u64, dst: Mac) -> bool {
        let e = self.unknown.entry(dst).or_insert((now, 0));
        if now.saturating_sub(e.0) >= MAX_UNKNOWN_FRAME_TIME_NS {
            *e = (now, 0);
        }
        if e.1 < MAX_UNKNOWN_FRAME_COUNT {
            e.1 += 1;
            true
        } else {
            false
        }
    }
}

/// An MPOA client (af-mpoa-0087.000 §4.7) beside an LE client.
#[derive(Debug, Default)]
pub struct Mpc {
    /// The MPS's MAC on this ELAN (its router's LEC) and its control ATM address.
    pub mps_mac: Option<Mac>,
    pub mps_atm: Option<AtmAddress>,
    pub threshold: u32,
    pub window_ns: u64,
    /// Flow detection: destination IP → times of the packets in the current window.
    pub flows: BTreeMap<Ipv4Addr, VecDeque<u64>>,
    /// Resolution requests outstanding, by destination.
    pub resolving: BTreeSet<Ipv4Addr>,
    /// Ingress cache: destination → egress MPC ATM address.
    pub egress: BTreeMap<Ipv4Addr, AtmAddress>,
    /// Shortcut VCs by egress ATM address.
    pub shortcuts: BTreeMap<AtmAddress, usize>,
    /// MPC → MPS control VC.
    pub control_vc: Option<usize>,
    /// Requests waiting for the control VC.
    pub queued: Vec<Ipv4Addr>,
    /// Egress cache: destination IP → the Ethernet header (dst, src) the router used.
    pub dll: BTreeMap<Ipv4Addr, (Mac, Mac)>,
    pub next_request: u32,
    /// Destinations whose resolution failed: not asked again before this time.
    pub retry_at: BTreeMap<Ipv4Addr, u64>,
}

impl Mpc {
    pub fn new(threshold: u32, window_ns: u64) -> Mpc {
        Mpc { threshold, window_ns, next_request: 1, ..Mpc::default() }
    }

    /// §4.7.1: counts a packet to `dst`; true when the flow has just crossed MPC-p1
    /// packets within MPC-p2.
    pub fn count(&mut self, now: u64, dst: Ipv4Addr) -> bool {
        if self.egress.contains_key(&dst)
            || self.resolving.contains(&dst)
            || self.retry_at.get(&dst).is_some_and(|&t| now < t)
        {
            return false;
        }
        let times = self.flows.entry(dst).or_default();
        times.push_back(now);
        while times.front().is_some_and(|&t| now.saturating_sub(t) >= self.window_ns) {
            times.pop_front();
        }
        if times.len() as u32 >= self.threshold {
            times.clear();
            return true;
        }
        false
    }
}

/// An LE server's registration of one client.
#[derive(Debug, Clone, Copy)]
pub struct Member {
    pub atm: AtmAddress,
    pub control_vc: usize,
    pub proxy: bool,
}

/// The LES of one ELAN (§7.1 of the server side, §5.1.4 join).
#[derive(Debug)]
pub struct Les {
    pub elan: String,
    pub bus: AtmAddress,
    pub next_lecid: u16,
    pub members: BTreeMap<u16, Member>,
    /// Registered MACs → (ATM address, LECID).
    pub registered: BTreeMap<Mac, (AtmAddress, u16)>,
    /// Forwarded LE_ARP requests: transaction → requester's LECID.
    pub forwarded: BTreeMap<u32, u16>,
}

/// What the LES does with an LE_ARP_REQUEST.
#[derive(Debug, PartialEq, Eq)]
pub enum LesArp {
    /// Answer the requester with this ATM address.
    Answer(AtmAddress),
    /// Forward to these proxies' control VCs (§7.1.5.1).
    Forward(Vec<usize>),
}

impl Les {
    pub fn new(elan: String, bus: AtmAddress) -> Les {
        Les {
            elan,
            bus,
            next_lecid: 1,
            members: BTreeMap::new(),
            registered: BTreeMap::new(),
            forwarded: BTreeMap::new(),
        }
    }

    /// §5.1.4: admits a client; returns its LECID.
    pub fn join(&mut self, atm: AtmAddress, control_vc: usize, proxy: bool, mac: Option<Mac>) -> u16 {
        let lecid = self.next_lecid;
        self.next_lecid += 1;
        self.members.insert(lecid, Member { atm, control_vc, proxy });
        if let Some(m) = mac {
            self.registered.insert(m, (atm, lecid));
        }
        lecid
    }

    /// §5.1.6 / §7.1.5: the broadcast MAC resolves to the BUS; a registered MAC to its
    /// client; anything else goes to the proxies (but not back to the asker).
    pub fn arp(&self, target: Mac, requester: u16) -> LesArp {
        if target.is_broadcast() {
            return LesArp::Answer(self.bus);
        }
        if let Some(&(atm, _)) = self.registered.get(&target) {
            return LesArp::Answer(atm);
        }
        LesArp::Forward(
            self.members.iter().filter(|(id, m)| m.proxy && **id != requester).map(|(_, m)| m.control_vc).collect(),
        )
    }
}

/// The BUS of one ELAN: its leaves and its capacity.
#[derive(Debug)]
pub struct Bus {
    pub elan: String,
    /// Multicast-forward VCs (index into the endpoint's VCs), by client ATM address.
    pub leaves: BTreeMap<AtmAddress, usize>,
    pub cells_per_second: u64,
    pub frames_per_second: Option<u64>,
    pub queue_frames: usize,
    /// Departure times of the frames in service or waiting.
    pub departures: VecDeque<u64>,
}

impl Bus {
    /// The time a frame of `cells` cells arriving at `now` leaves the BUS, or `None` if
    /// the BUS's queue is full (the frame is dropped).
    pub fn admit(&mut self, now: u64, cells: u32) -> Option<u64> {
        while self.departures.front().is_some_and(|&t| t <= now) {
            self.departures.pop_front();
        }
        if self.departures.len() > self.queue_frames {
            return None;
        }
        let by_cells = (u128::from(cells) * 1_000_000_000).div_ceil(u128::from(self.cells_per_second.max(1))) as u64;
        let by_frames = self.frames_per_second.map_or(0, |f| 1_000_000_000u64.div_ceil(f.max(1)));
        let start = self.departures.back().map_or(now, |&t| t.max(now));
        let depart = start + by_cells.max(by_frames);
        self.departures.push_back(depart);
        Some(depart)
    }
}

/// The LANE servers and MPS on one ATM port.
#[derive(Debug, Default)]
pub struct Servers {
    /// LECS: ELAN name → LES address.
    pub lecs: Option<BTreeMap<String, AtmAddress>>,
    /// LESs and BUSs by their selector.
    pub les: BTreeMap<u8, Les>,
    pub bus: BTreeMap<u8, Bus>,
    /// MPS: IP → MAC learnt from the frames the router sent into this ELAN.
    pub mps: Option<BTreeMap<Ipv4Addr, Mac>>,
    /// MPS: the LE clients of every MPS (their ATM addresses), as MPOA's device-type
    /// TLVs in LE_ARP responses would tell (af-mpoa-0087.000 §4.1; configured here). A
    /// next hop among them is a router whose MPS is the next NHS toward a destination.
    pub nhs_lecs: BTreeSet<AtmAddress>,
    /// MPS: VCs to other MPSs (NHS peers) by their MPS address, and the requests
    /// waiting for a VC to come up.
    pub nhs_vcs: BTreeMap<AtmAddress, usize>,
    pub nhs_queued: BTreeMap<AtmAddress, Vec<wire::nhrp::Repr>>,
    /// MPS: requests forwarded to the next NHS, by (source NBMA address, request ID):
    /// where the reply goes back (endpoint, VC) and the operation that asked.
    pub nhs_forwarded: BTreeMap<(AtmAddress, u32), (u32, usize, wire::nhrp::Operation)>,
}

/// RFC 2332 §5.2.0.1 Hop Count an MPS puts on the NHRP Resolution Request it makes of
/// an MPOA one (the RFC sets no default; 16, uncalibrated, more than any test's path).
pub const NHRP_HOP_COUNT: u8 = 16;

/// The octets of a control frame.
pub fn control_bytes(repr: &ControlRepr<'_>) -> Vec<u8> {
    let mut v = vec![0u8; repr.buffer_len()];
    repr.emit(&mut ControlFrame::new_unchecked(&mut v[..]));
    v
}

/// An ATM address with another selector.
pub fn with_selector(a: AtmAddress, s: u8) -> AtmAddress {
    let mut b = a;
    b.0[19] = s;
    b
}

/// Counters of LANE and MPOA, reported with the run.
#[derive(Debug, Default, Clone, Serialize, schemars::JsonSchema)]
pub struct LaneStats {
    /// Clients that reached the operational phase, and when (ns).
    pub joined: Vec<(String, u64)>,
    pub le_arp_requests: u64,
    pub le_arp_responses: u64,
    /// Unicast frames a client sent to the BUS while resolving (§7.1.5).
    pub unknown_frames: u64,
    /// Broadcast/multicast frames clients sent to the BUS.
    pub broadcast_frames: u64,
    /// Unicast frames held back by C10/C11 until the data-direct VCC.
    pub held_by_c10: u64,
    pub bus_frames_in: u64,
    pub bus_cells_in: u64,
    pub bus_frames_dropped: u64,
    pub bus_frames_out: u64,
    pub data_direct_vccs: u64,
    /// Frames the clients sent on data-direct VCCs.
    pub direct_frames: u64,
    /// The control frames seen, in order: (time ns, node, "LE_JOIN_REQUEST" ...), for
    /// the first 4,096.
    pub log: Vec<(u64, u32, String)>,
    pub mpoa_resolution_requests: u64,
    pub mpoa_resolution_replies: u64,
    pub shortcuts: u64,
    /// Packets sent on shortcuts.
    pub shortcut_packets: u64,
    /// LE_FLUSH_REQUESTs sent (through the BUS) and LE_FLUSH_RESPONSEs received.
    pub flush_requests: u64,
    pub flush_responses: u64,
    /// Frames held while their destination's flush was outstanding.
    pub held_by_flush: u64,
    /// LE_ARP entries that expired after C17 and were resolved again.
    pub le_arp_aged: u64,
    /// NHRP Resolution Requests an MPS forwarded to the next NHS (RFC 2332 §5.2.1),
    /// and the replies it relayed back.
    pub nhrp_forwarded: u64,
    pub nhrp_relayed: u64,
}

impl LaneStats {
    pub fn note(&mut self, now: u64, node: u32, what: impl Into<String>) {
        if self.log.len() < 4096 {
            self.log.push((now, node, what.into()));
        }
    }
}

#[cfg(test)]
mod test {
    use super::*;

    fn a(n: u8) -> AtmAddress {
        AtmAddress([n; 20])
    }

    #[test]
    fn c10_c11_allow_one_unknown_frame_per_second() {
        let mut l = Lec::new("e".into(), false, Mac([2, 0, 0, 0, 0, 1]));
        let d = Mac([2, 0, 0, 0, 0, 2]);
        assert!(l.may_flood_unknown(0, d));
        assert!(!l.may_flood_unknown(1, d));
        assert!(!l.may_flood_unknown(999_999_999, d));
        assert!(l.may_flood_unknown(1_000_000_000, d));
        assert!(l.may_flood_unknown(5, Mac([2, 0, 0, 0, 0, 3])), "per destination");
    }

    #[test]
    fn les_answers_broadcast_with_the_bus_and_forwards_unknowns_to_proxies() {
        let mut les = Les::new("e".into(), a(3));
        let m1 = Mac([2, 0, 0, 0, 0, 1]);
        let id1 = les.join(a(1), 10, false, Some(m1));
        let idp = les.join(a(2), 11, true, None);
        assert_eq!((id1, idp), (1, 2));
        assert_eq!(les.arp(Mac::BROADCAST, id1), LesArp::Answer(a(3)));
        assert_eq!(les.arp(m1, idp), LesArp::Answer(a(1)));
        assert_eq!(les.arp(Mac([2, 0, 0, 0, 0, 9]), id1), LesArp::Forward(vec![11]));
        assert_eq!(les.arp(Mac([2, 0, 0, 0, 0, 9]), idp), LesArp::Forward(vec![]), "not back to the asking proxy");
    }

    #[test]
    fn bus_serves_cells_at_its_rate_and_drops_over_its_queue() {
        let mut bus = Bus {
            elan: "e".into(),
            leaves: BTreeMap::new(),
            cells_per_second: 53_000,
            frames_per_second: None,
            queue_frames: 2,
            departures: VecDeque::new(),
        };
        // 32 cells at 53,000 cells/s: 603,774 ns each (rounded up).
        let t1 = bus.admit(0, 32).unwrap();
        assert_eq!(t1, (32u64 * 1_000_000_000).div_ceil(53_000));
        assert_eq!(bus.admit(0, 32).unwrap(), 2 * t1);
        assert_eq!(bus.admit(0, 32).unwrap(), 3 * t1);
        assert_eq!(bus.admit(0, 32), None, "one in service and two waiting: full");
        assert_eq!(bus.admit(t1, 32).unwrap(), 4 * t1, "room again after a departure");
        let mut fb = Bus { frames_per_second: Some(1000), cells_per_second: 1_000_000_000, queue_frames: 9, ..bus };
        fb.departures.clear();
        assert_eq!(fb.admit(0, 1).unwrap(), 1_000_000, "the frame limit dominates");
    }

    #[test]
    fn mpc_detects_ten_packets_in_one_second() {
        let mut m = Mpc::new(SHORTCUT_FRAME_COUNT, SHORTCUT_FRAME_TIME_NS);
        let d = Ipv4Addr::new(10, 0, 2, 1);
        // Nine packets 200 ms apart: never ten within one second.
        for k in 0..20u64 {
            assert!(!m.count(k * 200_000_000, d));
        }
        let mut m = Mpc::new(SHORTCUT_FRAME_COUNT, SHORTCUT_FRAME_TIME_NS);
        let hits: Vec<bool> = (0..10u64).map(|k| m.count(k * 1_000_000, d)).collect();
        assert_eq!(hits.iter().filter(|&&h| h).count(), 1);
        assert!(hits[9], "the tenth packet within 1 s triggers");
    }

    #[test]
    fn vc_roles_follow_the_selectors() {
        assert_eq!(vc_role(sel::LEC, sel::BUS), Some(VcRole::MulticastSend));
        assert_eq!(vc_role(sel::LEC, sel::LEC), Some(VcRole::DataDirect));
        assert_eq!(vc_role(sel::MPC, sel::MPC), Some(VcRole::Shortcut));
        assert_eq!(vc_role(sel::BUS, sel::LES), None);
        assert_eq!(vc_role(sel::LEC, sel::bus(3)), Some(VcRole::MulticastSend));
        assert_eq!(callee_role(sel::LEC, sel::les(1)), Some(VcRole::ControlDistribute));
        assert_eq!(callee_role(sel::bus(0), sel::LEC), Some(VcRole::MulticastSend));
    }
}
