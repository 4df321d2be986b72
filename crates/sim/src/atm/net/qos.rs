//! Service categories at the cell level: ATM Forum Traffic Management 4.0
//! (af-tm-0056.000, 1996) and its ITU-T counterpart I.371.
//!
//! * **Switch output ports** keep one queue per category, served by strict priority
//!   (the order and why: [`ServiceCategory::queue`]), each with its own cell limit
//!   ([`crate::atm::config::CategoryQueues`]); EPD, PPD and overflow act per queue. A
//!   port on whose routes only one category travels stays the single FIFO of [`super`]
//!   (cells get their slots on arrival, one event each); a port with several picks its
//!   next cell slot by slot ([`AtmEvent::Serve`], one more event per cell), because a
//!   higher-priority cell arriving later must overtake the lower ones still waiting.
//!   Cells wait as plain values in a `VecDeque` per queue: no allocation per cell once
//!   the deque has grown.
//! * **VBR** (nrt and rt): the NIC shapes to the dual GCRA of TM 4.0 §4.5.2,
//!   GCRA(1/PCR, 0) and GCRA(1/SCR, BT) with BT = (MBS − 1)(1/SCR − 1/PCR): a frame's
//!   cells leave at the PCR while the SCR bucket allows, then at the SCR.
//! * **ABR** (TM 4.0 §5.10): the source's ACR starts at ICR; a forward RM cell goes out
//!   first and then every Nrm − 1 in-rate cells (or after Mrm cells and Trm, §5.10.4
//!   rule 3); the destination turns RM cells around (§5.10.5); a switch whose ABR queue
//!   holds at least a threshold of cells sets CI in the RM cells of the VCs using it
//!   (relative-rate marking, one of the switch behaviours of §5.10.6); the source raises
//!   ACR by RIF × PCR on a backward RM cell with CI = NI = 0 and lowers it by RDF × ACR
//!   on one with CI = 1, within [MCR, PCR] (§5.10.4 rules 8–9).
//!
//! Shaping times are kept in fixed point, 1/65,536 of a link's cell slot ([`FP`]): an
//! interval is rounded up, so a shaped rate is never above its contract and at most
//! 1/65,536 slot per cell below it.
//!
//! Not modelled: policing (UPC) at the switch, CDVT; the ABR source's ADTF and CRM
//! rules are applied (rules 5 and 6), but not the use-it-or-lose-it refinements of
//! TM 4.1; RM cells carry CI, NI and ER, but no switch writes ER (no explicit-rate
//! marking) and no EFCI marking of data cells; the destination sends backward RM cells
//! out of rate at once; an ABR source commits its cells a chunk at a time (to the next
//! RM cell or the end of the frame), so a new ACR applies from the next chunk.

use std::collections::VecDeque;

use super::{AtmEvent, AtmNet, AtmOut};
use crate::atm::config::{PvcConfig, ServiceCategory, SwitchConfig};

/// Category queues of a switch output port.
pub const QUEUES: usize = 4;
/// Queue of ABR cells ([`ServiceCategory::queue`]).
pub const ABR_QUEUE: u8 = 2;
/// Queue of UBR cells, the default of a VC with no contract (SVCs, signalling).
pub const UBR_QUEUE: u8 = 3;
/// Fixed point of shaping times: 1/65,536 cell slot.
pub const FP: u64 = 1 << 16;

/// TM 4.0 §5.10.2 (ABR parameters, their defaults): a forward RM cell every Nrm cells.
pub const NRM: u32 = 32;
/// TM 4.0 §5.10.2: at least Mrm in-rate cells between forward RM cells when Trm rules.
pub const MRM: u32 = 2;
/// TM 4.0 §5.10.2: Trm, the longest time between forward RM cells, 100 ms.
pub const TRM_NS: u64 = 100_000_000;
/// TM 4.0 §5.10.2: ADTF, 0.5 s without a forward RM cell sends ACR back to ICR.
pub const ADTF_NS: u64 = 500_000_000;
/// TM 4.0 §5.10.2: CDF, 1/16, ACR's cut on too many unanswered RM cells (rule 6).
pub const CDF: f64 = 1.0 / 16.0;
/// TM 4.0 §5.10.2: TBE default 16,777,215 cells; CRM = ⌈TBE / Nrm⌉ forward RM cells.
pub const CRM: u32 = 16_777_215u32.div_ceil(NRM);
/// TM 4.0 §5.10.2: TCR, the tagged cell rate, 10 cells/s: the slowest an ABR source
/// sends (its out-of-rate RM cells); ACR below it is scheduled at it.
pub const TCR_CELLS_PER_S: f64 = 10.0;

/// The fields of an RM cell that the model uses (TM 4.0 §5.10.3.1, Table 5-4): DIR
/// (backward), CI, NI, ER (cells/s; the cell carries it as a 16-bit float, so an f32
/// is more than its precision).
#[derive(Debug, Clone, Copy)]
pub struct Rm {
    pub backward: bool,
    pub ci: bool,
    pub ni: bool,
    pub er_cells_per_s: f32,
}

/// A cell waiting in a category queue.
#[derive(Debug, Clone, Copy)]
struct QCell {
    frame: u32,
    idx: u32,
    vpi: u16,
    vci: u16,
}

/// The category queues of one switch output port (16 octets until a cell waits: the
/// FIFO path reads only `classes`).
#[derive(Debug, Default)]
pub struct PortQueues {
    /// Bit `q` set: a route sends cells of queue `q` out of this port.
    pub classes: u8,
    /// A [`AtmEvent::Serve`] is scheduled.
    serving: bool,
    q: Option<Box<[VecDeque<QCell>; QUEUES]>>,
}

impl PortQueues {
    /// More than one category leaves by this port: served slot by slot.
    #[inline]
    pub fn is_shared(&self) -> bool {
        self.classes.count_ones() > 1
    }

    pub fn len(&self, class: u8) -> u64 {
        self.q.as_ref().map_or(0, |q| q[class as usize].len() as u64)
    }

    fn push(&mut self, class: u8, c: QCell) {
        self.q.get_or_insert_with(Default::default)[class as usize].push_back(c);
    }

    fn pop(&mut self) -> Option<QCell> {
        self.q.as_mut()?.iter_mut().find_map(VecDeque::pop_front)
    }

    fn is_empty(&self) -> bool {
        self.q.as_ref().is_none_or(|q| q.iter().all(VecDeque::is_empty))
    }
}

/// Each category queue's limit, cells: the configured one or the switch's `queue_cells`.
pub fn limits(s: &SwitchConfig) -> [u64; QUEUES] {
    let c = &s.category_queue_cells;
    [c.cbr, c.vbr, c.abr, c.ubr].map(|l| l.unwrap_or(s.queue_cells) as u64)
}

/// A VC's contract at its NIC beyond the PCR alone.
#[derive(Debug, Default)]
pub struct Contract {
    /// The switch queue of the VC's cells.
    pub class: u8,
    kind: Kind,
}

#[derive(Debug, Default)]
enum Kind {
    /// UBR or CBR: the PCR (if any) is applied by the NIC's GCRA(1/PCR, 0).
    #[default]
    Pcr,
    /// Dual GCRA (TM 4.0 §4.5.2), times in slots × [`FP`].
    Vbr {
        tp: u64,
        ts: u64,
        bt: u128,
        tat_p: u128,
        tat_s: u128,
    },
    Abr(Box<AbrSource>),
}

/// An ABR source (TM 4.0 §5.10.4), rates in cells per second.
#[derive(Debug)]
struct AbrSource {
    pcr: f64,
    mcr: f64,
    icr: f64,
    acr: f64,
    rif: f64,
    rdf: f64,
    /// Cells per second of the NIC's link.
    line: f64,
    /// Frames waiting (each holds a reference), and the next cell of the first.
    queue: VecDeque<u32>,
    next_cell: u32,
    /// Theoretical time of the next in-rate cell, slots × [`FP`].
    next_fp: u128,
    /// In-rate cells since the last forward RM cell.
    since_rm: u32,
    last_rm_ns: Option<u64>,
    /// Forward RM cells since the last backward one (rule 6).
    unanswered: u32,
    /// An [`AtmEvent::AbrTx`] is scheduled.
    pending: bool,
    /// Index in [`QosStats::abr`].
    stat: usize,
}

impl AbrSource {
    /// Slots × [`FP`] between in-rate cells at the ACR (at least one slot; TCR at least).
    fn interval(&self) -> u64 {
        let rate = self.acr.max(TCR_CELLS_PER_S);
        ((FP as f64 * self.line / rate).ceil() as u64).max(FP)
    }
}

/// What an ABR VC did over the run.
#[derive(Debug, Default, Clone, serde::Serialize, schemars::JsonSchema)]
pub struct AbrVcStats {
    pub node: u32,
    pub port: u16,
    pub vpi: u16,
    pub vci: u16,
    /// ACR at the end of the run and its extremes, b/s of cells.
    pub acr_bps: f64,
    pub min_acr_bps: f64,
    pub max_acr_bps: f64,
    pub forward_rm: u64,
    pub backward_rm: u64,
    /// Backward RM cells that came back with CI = 1.
    pub backward_rm_ci: u64,
}

/// Counters of the service-category machinery.
#[derive(Debug, Default, Clone, serde::Serialize, schemars::JsonSchema)]
pub struct QosStats {
    /// RM cells turned around by destinations.
    pub rm_turned: u64,
    /// RM cells a switch set CI in.
    pub rm_ci_marked: u64,
    /// Cells that waited in a shared port's category queues, per queue (CBR/rt-VBR,
    /// nrt-VBR, ABR, UBR).
    pub queued_cells: [u64; QUEUES],
    pub abr: Vec<AbrVcStats>,
}

/// A VBR VC's two GCRAs (TM 4.0 §4.5.2) from its PCR, SCR and MBS.
fn vbr_kind(p: &PvcConfig, pcr: u64, line_bps: u64) -> Result<Kind, (String, String)> {
    let scr = p
        .scr_bps
        .ok_or(("scr_bps".to_string(), "a VBR VC needs a sustainable cell rate (TM 4.0 §3.6.1.2)".to_string()))?;
    let mbs = p
        .mbs_cells
        .ok_or(("mbs_cells".to_string(), "a VBR VC needs a maximum burst size (TM 4.0 §3.6.1.3)".to_string()))?;
    if scr == 0 || scr > pcr {
        return Err((
            "scr_bps".into(),
            format!("expected 0 < SCR ≤ PCR ({pcr} b/s), found {scr} b/s (TM 4.0 §3.6.1.2)"),
        ));
    }
    if mbs == 0 {
        return Err(("mbs_cells".into(), "expected an MBS of at least 1 cell, found 0 (TM 4.0 §3.6.1.3)".into()));
    }
    let (tp, ts) = (ceil_fp(pcr, line_bps), ceil_fp(scr.min(line_bps), line_bps));
    // TM 4.0 §4.5.2: BT = (MBS − 1)(1/SCR − 1/PCR).
    let bt = u128::from(mbs - 1) * u128::from(ts - tp);
    Ok(Kind::Vbr { tp, ts, bt, tat_p: 0, tat_s: 0 })
}

/// An ABR source (TM 4.0 §5.10) from its PCR, MCR, ICR, RIF and RDF, with its row of
/// statistics.
fn abr_kind(
    p: &PvcConfig,
    pcr_bps: u64,
    line_bps: u64,
    stats: &mut QosStats,
    at: (u32, u16),
) -> Result<Kind, (String, String)> {
    let icr = p.icr_bps.unwrap_or(pcr_bps);
    if p.mcr_bps > icr || icr > pcr_bps {
        return Err((
            "icr_bps".into(),
            format!(
                "expected MCR ≤ ICR ≤ PCR, found MCR {} b/s, ICR {icr} b/s, PCR {pcr_bps} b/s (TM 4.0 §5.10.2)",
                p.mcr_bps
            ),
        ));
    }
    for (name, f) in [("rif", p.rif), ("rdf", p.rdf)] {
        if !(f > 0.0 && f <= 1.0) {
            return Err((
                name.into(),
                format!("expected a factor in (0, 1] (TM 4.0 §5.10.2: 1/32768 to 1), found {f}"),
            ));
        }
    }
    let cells = |bps: u64| bps as f64 / crate::atm::CELL_BITS as f64;
    let stat = stats.abr.len();
    stats.abr.push(AbrVcStats {
        node: at.0,
        port: at.1,
        vpi: p.vpi,
        vci: p.vci,
        acr_bps: icr as f64,
        min_acr_bps: icr as f64,
        max_acr_bps: icr as f64,
        ..Default::default()
    });
    Ok(Kind::Abr(Box::new(AbrSource {
        pcr: cells(pcr_bps),
        mcr: cells(p.mcr_bps),
        icr: cells(icr),
        acr: cells(icr),
        rif: p.rif,
        rdf: p.rdf,
        line: cells(line_bps),
        queue: VecDeque::new(),
        next_cell: 0,
        next_fp: 0,
        since_rm: 0,
        last_rm_ns: None,
        unanswered: 0,
        pending: false,
        stat,
    })))
}

fn ceil_fp(rate_bps: u64, line_bps: u64) -> u64 {
    (u128::from(FP) * u128::from(line_bps)).div_ceil(u128::from(rate_bps)) as u64
}

impl Contract {
    /// The contract of PVC `p` sent on a link of `line_bps` (`pcr` already checked and
    /// capped at the line rate); `Err((field, message))` for a bad traffic descriptor.
    pub fn new(
        p: &PvcConfig,
        pcr: Option<u64>,
        line_bps: u64,
        stats: &mut QosStats,
        at: (u32, u16),
    ) -> Result<Contract, (String, String)> {
        let class = p.service.queue();
        let vbr = matches!(p.service, ServiceCategory::Vbr | ServiceCategory::RtVbr);
        let abr = p.service == ServiceCategory::Abr;
        if !vbr && (p.scr_bps.is_some() || p.mbs_cells.is_some()) {
            return Err(("scr_bps".into(), "only a VBR VC has an SCR and MBS (TM 4.0 §3.6.1)".into()));
        }
        if !abr && (p.mcr_bps != 0 || p.icr_bps.is_some()) {
            return Err(("mcr_bps".into(), "only an ABR VC has an MCR and ICR (TM 4.0 §5.10.2)".into()));
        }
        let kind = if vbr {
            vbr_kind(p, pcr.unwrap_or(line_bps), line_bps)?
        } else if abr {
            abr_kind(p, pcr.unwrap_or(line_bps), line_bps, stats, at)?
        } else {
            Kind::Pcr
        };
        Ok(Contract { class, kind })
    }

    /// The NIC schedules this VC's cells here (VBR, ABR), not by the PCR alone.
    pub fn shapes(&self) -> bool {
        !matches!(self.kind, Kind::Pcr)
    }
}

impl AtmNet {
    /// Gives every switch route of a host's PVC the queue of the PVC's category (in the
    /// direction of the host's cells), then marks which queues leave by each port.
    pub(super) fn classify_pvcs(&mut self) {
        for ep in 0..self.endpoints.len() {
            for v in 1..self.endpoints[ep].vcs.len() {
                let e = &self.endpoints[ep];
                let class = e.contracts.get(v).map_or(UBR_QUEUE, |c| c.class);
                let (mut link, mut end, mut vpi, mut vci) = (e.link, e.end, e.vcs[v].vpi, e.vcs[v].vci);
                for _ in 0..64 {
                    let super::Attach::Switch(sw, port) = self.links[link as usize].ends[1 - end as usize] else {
                        break;
                    };
                    let s = &mut self.switches[sw as usize];
                    let Some(r) = s.table[port as usize].get_mut(&(vpi, vci)).filter(|r| !r.local) else { break };
                    r.class = class;
                    (link, end) = s.ports[r.out_port as usize];
                    (vpi, vci) = (r.vpi, r.vci);
                }
            }
        }
        for s in &mut self.switches {
            for p in 0..s.table.len() {
                for r in s.table[p].values().filter(|r| !r.local) {
                    s.portq[r.out_port as usize].classes |= 1 << r.class;
                }
            }
        }
    }

    /// A cell joins queue `class` of a shared port; false if that queue is full.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn qos_enqueue(
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
        let s = &mut self.switches[sw as usize];
        let (link, dir) = s.ports[port as usize];
        let limit = s.limits[class as usize];
        let pq = &mut s.portq[port as usize];
        if pq.len(class) >= limit {
            return false;
        }
        let l = &self.links[link as usize];
        let now_slot = l.slots.ceil(now);
        let next_free = l.tx[dir as usize].next_free;
        if !pq.serving && next_free <= now_slot {
            // Nothing waits and the line is free from the next slot: the cell takes it.
            self.commit_cell(link, dir, now_slot, frame, idx, vpi, vci, out);
            return true;
        }
        pq.push(class, QCell { frame, idx, vpi, vci });
        self.stats.qos.queued_cells[class as usize] += 1;
        if !pq.serving {
            pq.serving = true;
            out.schedule.push((l.slots.start(next_free.max(now_slot)), AtmEvent::Serve(sw, port)));
        }
        self.frames[frame as usize].refs += 1;
        true
    }

    /// The start of a cell slot of a shared port: the first cell of the highest
    /// non-empty queue takes it (strict priority, TM 4.0 leaves the discipline to the
    /// switch; this one keeps CBR's delay bound).
    pub(super) fn qos_serve(&mut self, now: u64, sw: u32, port: u16, out: &mut AtmOut) {
        let s = &mut self.switches[sw as usize];
        let (link, dir) = s.ports[port as usize];
        let pq = &mut s.portq[port as usize];
        pq.serving = false;
        let l = &self.links[link as usize];
        let now_slot = l.slots.ceil(now);
        let slot = l.tx[dir as usize].next_free.max(now_slot);
        if slot > now_slot {
            // The line was taken ahead (a frame the switch itself sent): wait for it.
            pq.serving = true;
            out.schedule.push((l.slots.start(slot), AtmEvent::Serve(sw, port)));
            return;
        }
        let Some(c) = pq.pop() else { return };
        if !pq.is_empty() {
            pq.serving = true;
            out.schedule.push((l.slots.start(slot + 1), AtmEvent::Serve(sw, port)));
        }
        self.commit_cell(link, dir, slot, c.frame, c.idx, c.vpi, c.vci, out);
        self.release_frame(c.frame);
    }

    /// An RM cell at a switch: CI marking (TM 4.0 §5.10.6 relative-rate marking), then
    /// the VC's queue like any cell.
    pub(super) fn switch_rm_cell(
        &mut self,
        now: u64,
        sw: u32,
        port: u16,
        frame: u32,
        route: &super::Route,
        out: &mut AtmOut,
    ) {
        if route.class == ABR_QUEUE {
            let th = self.switches[sw as usize].abr_ci;
            let rm = self.frames[frame as usize].rm.expect("an RM cell");
            // The VC's forward cells leave by `route.out_port` (a forward RM cell) or by
            // the port a backward RM cell came in on.
            let forward_port = if rm.backward { port } else { route.out_port };
            if !rm.ci && self.waiting_cells(now, sw, forward_port, ABR_QUEUE) >= th {
                if let Some(r) = self.frames[frame as usize].rm.as_mut() {
                    r.ci = true;
                }
                self.stats.qos.rm_ci_marked += 1;
            }
        }
        if !self.switch_enqueue(now, sw, route.out_port, route.class, frame, 0, route.vpi, route.vci, out) {
            self.stats.cells_lost[sw as usize] += 1;
        }
    }

    /// An RM cell reaches a host: a destination turns a forward one around (TM 4.0
    /// §5.10.5 rule 1: DIR = backward, the rest unchanged); a source adjusts its ACR by
    /// a backward one (§5.10.4 rules 8 and 9).
    pub(super) fn host_rm_cell(&mut self, now: u64, ep: u32, vpi: u16, vci: u16, rm: Rm, out: &mut AtmOut) {
        let e = &mut self.endpoints[ep as usize];
        let Some(&v) = e.by_num.get(&(vpi, vci)) else { return };
        if !rm.backward {
            let (link, dir) = (e.link, e.end);
            let f = self.new_frame(Vec::new(), 0);
            self.frames[f as usize].rm = Some(Rm { backward: true, ..rm });
            self.stats.qos.rm_turned += 1;
            self.send_cells(now, f, link, dir, vpi, vci, None, out);
            return;
        }
        let Some(Kind::Abr(a)) = e.contracts.get_mut(v).map(|c| &mut c.kind) else { return };
        a.unanswered = 0;
        if rm.ci {
            a.acr -= a.acr * a.rdf;
        } else if !rm.ni {
            a.acr = (a.acr + a.rif * a.pcr).min(a.pcr);
        }
        a.acr = a.acr.min(f64::from(rm.er_cells_per_s)).max(a.mcr);
        let st = &mut self.stats.qos.abr[a.stat];
        let bps = a.acr * crate::atm::CELL_BITS as f64;
        st.acr_bps = bps;
        st.min_acr_bps = st.min_acr_bps.min(bps);
        st.max_acr_bps = st.max_acr_bps.max(bps);
        st.backward_rm += 1;
        st.backward_rm_ci += u64::from(rm.ci);
    }

    /// Frame `frame` (no cells sent yet) on a VBR or ABR VC `v` of `ep`.
    pub(super) fn contract_send(&mut self, now: u64, ep: u32, v: usize, frame: u32, out: &mut AtmOut) {
        let e = &mut self.endpoints[ep as usize];
        let (link, dir, vpi, vci) = (e.link, e.end, e.vcs[v].vpi, e.vcs[v].vci);
        let cells = self.frames[frame as usize].cells;
        match &mut e.contracts[v].kind {
            Kind::Vbr { tp, ts, bt, tat_p, tat_s } => {
                let (tp, ts, bt) = (u128::from(*tp), u128::from(*ts), *bt);
                let l = &self.links[link as usize];
                let earliest = u128::from(l.tx[dir as usize].next_free.max(l.slots.ceil(now))) * u128::from(FP);
                // TM 4.0 §4.5.2 (virtual scheduling of both GCRAs): a cell conforms
                // from max(TATp, TATs − BT).
                let t0 = earliest.max(*tat_p).max(tat_s.saturating_sub(bt));
                let s = (*tat_s).max(t0);
                // Cell k at t0 + k·Tp conforms to GCRA(Ts, BT) while
                // t0 + k·Tp ≥ s + k·Ts − BT, i.e. k ≤ (t0 + BT − s) / (Ts − Tp).
                let burst = if ts > tp { (t0 + bt - s) / (ts - tp) + 1 } else { u128::from(cells) };
                let n1 = burst.min(u128::from(cells)) as u32;
                let mut end = self.send_spaced(frame, link, dir, vpi, vci, 0, n1, t0, tp as u64, out);
                let mut last = t0 + u128::from(n1 - 1) * tp;
                if n1 < cells {
                    // The rest at the SCR: cell k at s + k·Ts − BT.
                    let start = s + u128::from(n1) * ts - bt;
                    end = self.send_spaced(frame, link, dir, vpi, vci, n1, cells - n1, start, ts as u64, out);
                    last = start + u128::from(cells - n1 - 1) * ts;
                }
                let Kind::Vbr { tat_p, tat_s, .. } = &mut self.endpoints[ep as usize].contracts[v].kind else {
                    unreachable!()
                };
                *tat_p = last + tp;
                *tat_s = s + u128::from(cells) * ts;
                self.endpoints[ep as usize].nic_frames.push_back(end);
                let done = self.links[link as usize].slots.start(end);
                out.schedule.push((done, AtmEvent::TxDone(ep)));
            }
            Kind::Abr(a) => {
                a.queue.push_back(frame);
                let idle = !a.pending;
                e.abr_queued += 1;
                self.frames[frame as usize].refs += 1;
                if idle {
                    self.abr_pump(now, ep, v, out);
                }
            }
            Kind::Pcr => unreachable!("a PCR-only VC is sent by nic_send"),
        }
    }

    pub(super) fn abr_event(&mut self, now: u64, ep: u32, v: usize, out: &mut AtmOut) {
        if let Some(Kind::Abr(a)) = self.endpoints[ep as usize].contracts.get_mut(v).map(|c| &mut c.kind) {
            a.pending = false;
        }
        self.abr_pump(now, ep, v, out);
    }

    /// Sends what is due of ABR VC `v`'s cells: a forward RM cell or a chunk of a
    /// frame's cells at the ACR, then waits (an [`AtmEvent::AbrTx`]) for the next.
    fn abr_pump(&mut self, now: u64, ep: u32, v: usize, out: &mut AtmOut) {
        loop {
            let e = &mut self.endpoints[ep as usize];
            let (link, dir, vpi, vci) = (e.link, e.end, e.vcs[v].vpi, e.vcs[v].vci);
            let Some(Kind::Abr(a)) = e.contracts.get_mut(v).map(|c| &mut c.kind) else { return };
            if a.pending {
                return;
            }
            let Some(&frame) = a.queue.front() else { return };
            let l = &self.links[link as usize];
            let now_slot = l.slots.ceil(now);
            let start = a.next_fp.max(u128::from(l.tx[dir as usize].next_free.max(now_slot)) * u128::from(FP));
            let slot = start.div_ceil(u128::from(FP)) as u64;
            if slot > now_slot {
                a.pending = true;
                out.schedule.push((l.slots.start(slot), AtmEvent::AbrTx(ep, v as u16)));
                return;
            }
            // §5.10.4 rule 3: the first in-rate cell is a forward RM cell; then one
            // after Nrm − 1 in-rate cells, or after Mrm cells once Trm has passed.
            let due = match a.last_rm_ns {
                None => true,
                Some(t) => a.since_rm >= NRM - 1 || (a.since_rm >= MRM && now.saturating_sub(t) >= TRM_NS),
            };
            if due {
                if let Some(t) = a.last_rm_ns {
                    // Rule 5: idle longer than ADTF: back to ICR.
                    if a.acr > a.icr && now - t > ADTF_NS {
                        a.acr = a.icr;
                    }
                }
                // Rule 6: CRM forward RM cells without an answer: cut by CDF.
                if a.unanswered >= CRM {
                    a.acr = (a.acr - a.acr * CDF).max(a.mcr);
                }
                a.since_rm = 0;
                a.last_rm_ns = Some(now);
                a.unanswered += 1;
                a.next_fp = start + u128::from(a.interval());
                let (er, stat) = (a.pcr as f32, a.stat);
                self.stats.qos.abr[stat].forward_rm += 1;
                let f = self.new_frame(Vec::new(), 0);
                self.frames[f as usize].rm = Some(Rm { backward: false, ci: false, ni: false, er_cells_per_s: er });
                self.send_spaced(f, link, dir, vpi, vci, 0, 1, start, FP, out);
                continue;
            }
            let total = self.frames[frame as usize].cells;
            let first = a.next_cell;
            let t = a.interval();
            let mut n = (total - first).min(NRM - 1 - a.since_rm);
            if let Some(last) = a.last_rm_ns {
                // Stop where Trm will make a forward RM cell due (rule 3).
                let left_ns = (last + TRM_NS).saturating_sub(now) as f64;
                let by_trm = (left_ns * a.acr.max(TCR_CELLS_PER_S) / 1e9).ceil() as u32;
                n = n.min(by_trm.max(MRM.saturating_sub(a.since_rm)).max(1));
            }
            a.since_rm += n;
            a.next_cell += n;
            a.next_fp = start + u128::from(n) * u128::from(t);
            let done = a.next_cell == total;
            if done {
                a.queue.pop_front();
                a.next_cell = 0;
                e.abr_queued -= 1;
            }
            let end = self.send_spaced(frame, link, dir, vpi, vci, first, n, start, t, out);
            if done {
                self.release_frame(frame);
                let at = self.links[link as usize].slots.start(end);
                out.schedule.push((at, AtmEvent::TxDone(ep)));
            }
        }
    }

    /// Cells `first .. first + count` of `frame` on `link` from end `dir`, cell `j` in
    /// the first slot at or after `start + j × num` (slots × [`FP`]; `start` at or after
    /// the link's first free slot, `num` at least one slot). Returns the slot after the
    /// last.
    #[allow(clippy::too_many_arguments)]
    fn send_spaced(
        &mut self,
        frame: u32,
        link: u32,
        dir: u8,
        vpi: u16,
        vci: u16,
        first: u32,
        count: u32,
        start: u128,
        num: u64,
        out: &mut AtmOut,
    ) -> u64 {
        let (slot0, phase) = ((start / u128::from(FP)) as u64, (start % u128::from(FP)) as u64);
        let t = self.new_train(frame, link, dir, vpi, vci, first, count, slot0, num, FP, true);
        self.trains[t as usize].phase = phase;
        let end = self.trains[t as usize].slot(count - 1) + 1;
        let tx = &mut self.links[link as usize].tx[dir as usize];
        tx.next_free = end;
        tx.cells += u64::from(count);
        tx.open_train = None;
        self.stats.cells[link as usize][dir as usize] += u64::from(count);
        let at = self.first_event_time(t);
        out.schedule.push((at, AtmEvent::Train(t)));
        end
    }
}
