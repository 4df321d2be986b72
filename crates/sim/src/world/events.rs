//! The event loop: `run`, one handler per kind of event, and the re-arm of the IP stacks' timers.

use super::*;

impl World {
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

    pub(super) fn handle(&mut self, now: u64, event: Event) -> Result<(), RunError> {
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

    /// Arms the node's IP timer for its stack's next deadline. Asked after every packet
    /// the node handles, and the node usually wants no timer: that answer is taken
    /// inline, the rest out of line.
    #[inline(always)]
    pub(super) fn arm_ip_timer(&mut self, node: u32) -> Result<(), RunError> {
        match self.nodes[node as usize].poll_at() {
            None => Ok(()),
            Some(at) => self.arm_ip_timer_at(node, at),
        }
    }

    #[inline(never)]
    pub(super) fn arm_ip_timer_at(&mut self, node: u32, at: u64) -> Result<(), RunError> {
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
}
