//! The cell layer: frames and their trains of cells on links, switch output queues,
//! and cells arriving at switches and hosts (see the module doc of [`crate::atm`]).

use super::*;

impl AtmNet {
    // ------------------------------------------------------------------ frames, trains

    pub(super) fn new_frame(&mut self, bytes: Vec<u8>, start: usize) -> u32 {
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

    pub(super) fn release_frame(&mut self, frame: u32) {
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
    pub(super) fn new_train(
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

    pub(super) fn arrival(&self, t: &Train, j: u32) -> u64 {
        let l = &self.links[t.link as usize];
        l.slots.start(t.slot(j) + 1) + l.delay_ns
    }

    #[allow(clippy::too_many_arguments)]
    /// Sends frame `frame` whole on `link` from end `dir` on VC vpi/vci, its cells in
    /// the first free slots, spaced to `pcr_bps` if given. Returns the slot after its
    /// last cell.
    pub(super) fn send_cells(
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
    pub(super) fn send_cells_from(
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
    pub(super) fn first_event_time(&self, t: u32) -> u64 {
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
    pub(super) fn switch_enqueue(
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
    pub(super) fn commit_cell(
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
    pub(super) fn waiting_cells(&self, now: u64, sw: u32, port: u16, class: u8) -> u64 {
        let s = &self.switches[sw as usize];
        let q = &s.portq[port as usize];
        if q.is_shared() {
            return q.len(class);
        }
        let (link, dir) = s.ports[port as usize];
        let l = &self.links[link as usize];
        l.tx[dir as usize].next_free.saturating_sub(l.slots.ceil(now))
    }

    pub(super) fn train_event(&mut self, now: u64, t: u32, out: &mut AtmOut) {
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

    pub(super) fn count_arrived(&mut self, link: u32, dir: u8, n: u32) {
        let link = link as usize;
        if link >= self.cells_arrived.len() {
            self.cells_arrived.resize(link + 1, [0; 2]);
        }
        self.cells_arrived[link][dir as usize] += u64::from(n);
    }

    pub(super) fn close_train(&mut self, t: u32) {
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
    pub(super) fn switch_cell(
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
            self.unknown_vc_cell(sw, port, frame, idx, (vpi, vci), out);
            return;
        };
        if route.local {
            self.switch_local_cell(now, sw, port, frame, idx, (vpi, vci), out);
            return;
        }
        if self.frames[frame as usize].rm.is_some() {
            // An RM cell belongs to no AAL5 frame: no EPD/PPD state (TM 4.0 §5.10.6).
            self.switch_rm_cell(now, sw, port, frame, &route, out);
            return;
        }
        let mut discard = self.discard_or_queue(now, sw, frame, idx, &route, out);
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

    /// A cell on a VC the switch has no table entry for: lost (counted once per frame).
    fn unknown_vc_cell(&mut self, sw: u32, port: u16, frame: u32, idx: u32, (vpi, vci): (u16, u16), out: &mut AtmOut) {
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
    }

    /// A cell on a VC that ends at the switch: reassembled, and a whole frame handed to
    /// [`switch_local_frame`](Self::switch_local_frame).
    #[allow(clippy::too_many_arguments)]
    fn switch_local_cell(
        &mut self,
        now: u64,
        sw: u32,
        port: u16,
        frame: u32,
        idx: u32,
        (vpi, vci): (u16, u16),
        out: &mut AtmOut,
    ) {
        let total = self.frames[frame as usize].cells;
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
    }

    /// A cell to forward on `route`: dropped by EPD or PPD, or queued at the output port
    /// (and lost if that queue is full). Returns the VC's discard state after the cell
    /// (0 none, 1 PPD, 2 EPD), before the end-of-frame reset.
    fn discard_or_queue(&mut self, now: u64, sw: u32, frame: u32, idx: u32, route: &Route, out: &mut AtmOut) -> u8 {
        let last = idx + 1 == self.frames[frame as usize].cells;
        let s = &self.switches[sw as usize];
        let (epd, ppd) = (s.epd, s.ppd);
        let mut discard = route.discard;
        if idx == 0 && discard == 2 {
            discard = 0;
        }
        match discard {
            2 => {
                self.stats.epd_cells[sw as usize] += 1;
                self.frames[frame as usize].fate.get_or_insert("cells discarded by EPD (whole frames)");
            }
            1 if !last => {
                self.stats.ppd_cells[sw as usize] += 1;
                self.frames[frame as usize].fate.get_or_insert("cells discarded by PPD (rest of a frame)");
            }
            _ => {
                if idx == 0 && epd.is_some_and(|th| self.waiting_cells(now, sw, port_out(route), route.class) >= th) {
                    discard = 2;
                    self.stats.epd_cells[sw as usize] += 1;
                    self.frames[frame as usize].fate.get_or_insert("cells discarded by EPD (whole frames)");
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
                } else {
                    self.stats.cells_lost[sw as usize] += 1;
                    self.frames[frame as usize].fate.get_or_insert("cells lost: output queue full");
                    if ppd && !last {
                        discard = 1;
                    }
                }
            }
        }
        discard
    }

    /// Cells `first .. first + n` of `frame` reach host endpoint `ep`.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn host_cells(
        &mut self,
        now: u64,
        ep: u32,
        frame: u32,
        first: u32,
        n: u32,
        vpi: u16,
        vci: u16,
        out: &mut AtmOut,
    ) {
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
}
