//! The event loop: `run`, one handler per kind of event, and the IP stacks' timers.

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

    /// One event. Called from the run loop alone, and inlined there: the loop and the
    /// dispatch are one function, as they were before the loop's handlers moved to
    /// their chapters (`qoslab bench`, benchmarks/README.md).
    #[inline(always)]
    pub(super) fn handle(&mut self, now: u64, event: Event) -> Result<(), RunError> {
        match event {
            Event::EthTxDone { link, from } => self.line_tx_done(now, link, from)?,
            Event::EthArrive { link, from } => self.line_arrive(now, link, from)?,
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
                if self.ip_timers[node as usize].fired(now) {
                    let fx = self.nodes[node as usize].on_timer(now);
                    self.release_all(now, node, fx)?;
                    self.arm_ip_timer(node)?;
                }
            }
            Event::Send { source } => self.send_from(now, source as usize)?,
            Event::TcpTimer { flow, side: 2 } => self.tcp_stop(now, flow)?,
            Event::TcpTimer { flow, side } => self.tcp_timer(now, flow, side)?,
            Event::AdaptiveRouter { index } => self.adaptive_router_timer(now, index)?,
            Event::BssTimer { bss } => self.bss_timer(now, bss)?,
            Event::Atm(e) => self.atm_event(now, e)?,
            Event::WifiArrive { bss } => self.wifi_arrive(now, bss)?,
        }
        Ok(())
    }

    /// Arms the node's IP timer for its stack's next deadline, by the slot's rule
    /// (`crate::wake`). Asked after every packet the node handles, and the node usually
    /// wants no timer and has none armed: that answer is taken inline, the rest out of line.
    #[inline(always)]
    pub(super) fn arm_ip_timer(&mut self, node: u32) -> Result<(), RunError> {
        let wanted = self.nodes[node as usize].poll_at();
        if wanted.is_none() && !self.ip_timers[node as usize].is_armed() {
            return Ok(());
        }
        self.arm_ip_timer_to(node, wanted)
    }

    #[inline(never)]
    fn arm_ip_timer_to(&mut self, node: u32, wanted: Option<u64>) -> Result<(), RunError> {
        self.ip_timers[node as usize].arm(&mut self.engine, wanted, Event::IpTimer { node }).map_err(budget)
    }
}
