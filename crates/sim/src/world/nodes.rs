//! Nodes in the world: frames received become CPU jobs, the jobs' effects are released when the
//! CPU is done, and a node's frames go out of its ports.

use super::*;

impl World {
    /// A frame arrives at a node's port: to the CPU (or straight through in hardware).
    #[inline(always)]
    pub(super) fn receive(&mut self, now: u64, node: u32, port: u16, frame: Vec<u8>) -> Result<(), RunError> {
        if let Some(c) = self.capture.as_mut() {
            c.port(node, port, now, &frame).map_err(RunError::Capture)?;
        }
        if let Some(index) = self.adaptive_routers.iter().position(|u| u.owns_arrival(node, &frame)) {
            let got = self.adaptive_routers[index].receive(now, node, &frame);
            self.adaptive_router_send(now, index as u32, got.tx)?;
            return match got.deliver {
                Some(inner) => self.receive_stack(now, node, port, inner),
                None => Ok(()),
            };
        }
        self.receive_stack(now, node, port, frame)
    }

    /// A frame goes to the node's CPU and stack.
    pub(super) fn receive_stack(&mut self, now: u64, node: u32, port: u16, frame: Vec<u8>) -> Result<(), RunError> {
        let n = &mut self.nodes[node as usize];
        if n.cpu.is_free() {
            let mut fx = self.spare_fx.pop().unwrap_or_default();
            // A free CPU bills nothing (`process_into` skips the sum): straight to the port.
            n.port_input(now, port, frame, &mut fx);
            return self.release(now, node, fx);
        }
        if n.cpu.has_rx_latency() {
            let due = n.cpu.delay(now, frame.len(), Job::Receive { port, frame });
            self.engine.schedule_at(SimTime::from_nanos(due), Event::RxReady { node }).map_err(budget)?;
            return Ok(());
        }
        self.offer_received(now, node, Job::Receive { port, frame })
    }

    /// A received frame reaches the node's CPU queue (dropped when it is full).
    pub(super) fn offer_received(&mut self, now: u64, node: u32, job: Job) -> Result<(), RunError> {
        let n = &mut self.nodes[node as usize];
        let port = match &job {
            Job::Receive { port, .. } => Some(*port),
            Job::Send(_) => None,
        };
        if !n.cpu.offer(job) {
            self.record_drop(now, node, port, "CPU input queue full".into(), None);
            return Ok(());
        }
        self.serve(now, node)
    }

    /// Starts the next CPU job of `node` if it is idle.
    pub(super) fn serve(&mut self, now: u64, node: u32) -> Result<(), RunError> {
        let n = &mut self.nodes[node as usize];
        let Some(job) = n.cpu.next_job() else { return Ok(()) };
        let fx = match job {
            Job::Receive { port, frame } => {
                let mut fx = self.spare_fx.pop().unwrap_or_default();
                n.process_into(now, port, frame, &mut fx);
                fx
            }
            Job::Send(fx) => fx,
        };
        let service = n.cpu.service_ns(fx.cycles);
        let end = n.cpu.start(now, service);
        n.in_service = Some(fx);
        self.engine.schedule_at(SimTime::from_nanos(end), Event::CpuDone { node }).map_err(budget)?;
        Ok(())
    }

    /// What the node's own applications send: through the CPU (its per-packet and
    /// per-byte sending cost, and its queue) before the frames leave.
    #[inline(always)]
    pub(super) fn release_sent(&mut self, now: u64, node: u32, mut fx: Effects) -> Result<(), RunError> {
        let n = &mut self.nodes[node as usize];
        if n.cpu.is_free() || fx.send.is_empty() {
            return self.release(now, node, fx);
        }
        n.charge_send(&mut fx);
        if let Err(job) = n.cpu.offer_or_return(Job::Send(fx)) {
            let Job::Send(fx) = job else { unreachable!("offered a send job") };
            for (port, frame) in fx.send {
                self.record_drop(
                    now,
                    node,
                    Some(port),
                    "CPU queue full (sending)".into(),
                    frame.get(ethernet::HEADER_LEN..),
                );
            }
            return Ok(());
        }
        self.serve(now, node)
    }

    /// Carries out the effects of processing: local deliveries, then frames out, then
    /// the IP timer (drops first). Nearly always there is a single delivery (a frame
    /// received) or a single frame out (a segment sent) and nothing else: that is done
    /// here, the emptied `Effects` going back to the spare list first, without moving
    /// them on by value into the general [`release_all`](Self::release_all).
    #[inline(always)]
    pub(super) fn release(&mut self, now: u64, node: u32, mut fx: Effects) -> Result<(), RunError> {
        if fx.drops.is_empty() {
            if fx.local.len() == 1 && fx.send.is_empty() {
                let (packet, at) = fx.local.pop().expect("one packet");
                self.recycle_fx(fx);
                self.deliver_local(now, node, &packet[at..])?;
                recycle(&mut self.spare_frames, packet);
                return self.arm_ip_timer(node);
            }
            if fx.send.len() == 1 && fx.local.is_empty() {
                let (port, frame) = fx.send.pop().expect("one frame");
                self.recycle_fx(fx);
                self.transmit(now, node, port, frame)?;
                return self.arm_ip_timer(node);
            }
        }
        self.release_all(now, node, fx)
    }

    /// [`release`](Self::release) of any effects: drops, every delivery, every frame out.
    #[inline(never)]
    pub(super) fn release_all(&mut self, now: u64, node: u32, mut fx: Effects) -> Result<(), RunError> {
        for (port, reason, packet) in fx.drops.drain(..) {
            self.record_drop(now, node, port, reason, packet.as_deref());
        }
        for (packet, at) in fx.local.drain(..) {
            self.deliver_local(now, node, &packet[at..])?;
            recycle(&mut self.spare_frames, packet);
        }
        for (port, frame) in fx.send.drain(..) {
            self.transmit(now, node, port, frame)?;
        }
        self.recycle_fx(fx);
        self.arm_ip_timer(node)
    }

    /// An [`Effects`] for the per-packet path: a spare one (its vectors' capacity kept)
    /// when there is one.
    pub(super) fn take_fx(&mut self) -> Effects {
        self.spare_fx.pop().unwrap_or_default()
    }

    /// Keeps an [`Effects`] carried out (emptied) for [`take_fx`](Self::take_fx).
    pub(super) fn recycle_fx(&mut self, mut fx: Effects) {
        if self.spare_fx.len() < SPARE_EFFECTS && fx.is_clear() {
            fx.cycles = 0.0;
            self.spare_fx.push(fx);
        }
    }

    #[inline]
    pub(super) fn transmit(&mut self, now: u64, node: u32, port: u16, frame: Vec<u8>) -> Result<(), RunError> {
        if let Some(index) = self.adaptive_routers.iter().position(|u| u.claims(node, port, &frame)) {
            let txs = self.adaptive_routers[index].send(now, frame);
            return self.adaptive_router_send(now, index as u32, txs);
        }
        self.transmit_port(now, node, port, frame, false)
    }
}

/// Spare [`Effects`] kept (see `World::spare_fx`): more than the deepest nesting of a
/// packet's handling needs.
pub(super) const SPARE_EFFECTS: usize = 16;
