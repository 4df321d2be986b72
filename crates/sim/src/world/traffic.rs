//! Test traffic: the sources (UDP probes, saturating sources, deferred starts), the UDP echo
//! flows, and the delivery of datagrams to a node's own applications.

use super::*;

/// A UDP echo flow (RFC 862): what the echo server counted and the round trips.
pub(super) struct EchoFlow {
    /// The sending node and its (client) port.
    pub(super) from: u32,
    pub(super) src_port: u16,
    /// The echo server's port.
    pub(super) dst_port: u16,
    /// Datagrams that reached the echo server, counted there.
    pub(super) forward: FlowStats,
    pub(super) rtt: Histogram,
}

impl World {
    /// The node's frames waiting to leave (CPU queue and its output queues).
    pub(super) fn backlog(&mut self, node: u32) -> usize {
        let now = self.engine.now().as_nanos();
        let mut backlog = self.nodes[node as usize].cpu.queue_len();
        for p in 0..self.attachments[node as usize].len() {
            match self.attachments[node as usize][p] {
                Attachment::Ethernet { link, end } => {
                    backlog += self.links[link as usize].line.backlog(now, end as usize)
                }
                Attachment::Wifi { bss, member } => {
                    backlog += self.bsses[bss as usize].cell.backlog(now, member as usize)
                }
                Attachment::Atm { ep } => backlog += self.atm_backlog(now, ep),
                Attachment::Unattached | Attachment::AtmSwitch => {}
            }
        }
        backlog
    }

    pub(super) fn refill_saturating(&mut self, now: u64, node: u32) -> Result<(), RunError> {
        for i in 0..self.sources.len() {
            let s = &self.sources[i];
            if s.is_saturating() && source_node(&s.config) == node && s.active(now) && s.seq > 0 {
                while self.backlog(node) < SATURATION_BACKLOG && self.sources[i].active(now) {
                    if !self.emit(now, i)? {
                        break;
                    }
                }
            }
        }
        Ok(())
    }

    /// A source waits `LINK_UP_POLL_NS` more for its link: the run's end moves with it.
    /// Only while the configured duration lasts, so a link that never comes up cannot
    /// stretch the run without end (the run then ends at most twice as late).
    pub(super) fn defer_end(&mut self, now: u64, source: usize) {
        self.deferred_ns[source] += LINK_UP_POLL_NS;
        if now < self.config.duration_ns {
            self.end_ns = self.end_ns.max(self.config.duration_ns + self.deferred_ns[source]);
        }
    }

    /// A UDP-family application's first datagram, while the route to its destination
    /// goes through a PPP link that is not up yet: its start (and its measurement window)
    /// moves on by [`LINK_UP_POLL_NS`] and it looks again then. Whether it waits.
    fn wait_for_link(&mut self, now: u64, source: usize) -> Result<bool, RunError> {
        let (from, to) = match &self.sources[source].config {
            FlowConfig::Udp { from, to, .. }
            | FlowConfig::Ping { from, to, .. }
            | FlowConfig::UdpEcho { from, to, .. }
            | FlowConfig::Tcp { from, to, .. }
            | FlowConfig::UdpReplay { from, to, .. } => (*from, *to),
        };
        if !self.nodes[from as usize].route_up(to) {
            // As for TCP (`start_tcp`): the application starts once its PPP link is up.
            match &mut self.sources[source].config {
                FlowConfig::Udp { start_ns, stop_ns, .. } | FlowConfig::UdpReplay { start_ns, stop_ns, .. } => {
                    *start_ns += LINK_UP_POLL_NS;
                    *stop_ns += LINK_UP_POLL_NS;
                }
                FlowConfig::Ping { start_ns, .. }
                | FlowConfig::UdpEcho { start_ns, .. }
                | FlowConfig::Tcp { start_ns, .. } => *start_ns += LINK_UP_POLL_NS,
            }
            // The measurement window moves with the application's start.
            let id = self.sources[source].config.id();
            if let Some(stats) = self.stats.get_mut(&id) {
                stats.delay_window(LINK_UP_POLL_NS);
            }
            if let Some(echo) = self.echo.get_mut(&id) {
                echo.forward.delay_window(LINK_UP_POLL_NS);
            }
            self.defer_end(now, source);
            let at = SimTime::from_nanos(now + LINK_UP_POLL_NS);
            self.engine.schedule_at(at, Event::Send { source: source as u32 }).map_err(budget)?;
            return Ok(true);
        }
        Ok(false)
    }

    pub(super) fn send_from(&mut self, now: u64, source: usize) -> Result<(), RunError> {
        if !self.sources[source].active(now) {
            return Ok(());
        }
        if self.sources[source].seq == 0
            && !self.tcp_of_source.contains_key(&source)
            && self.wait_for_link(now, source)?
        {
            return Ok(());
        }
        if let Some(&flow) = self.tcp_of_source.get(&source) {
            return self.start_tcp(now, source, flow);
        }
        if matches!(self.sources[source].config, FlowConfig::UdpReplay { .. }) {
            return self.send_replay(now, source);
        }
        if self.sources[source].is_saturating() {
            let node = source_node(&self.sources[source].config);
            while self.backlog(node) < SATURATION_BACKLOG && self.sources[source].active(now) {
                if !self.emit(now, source)? {
                    break;
                }
            }
            return Ok(());
        }
        self.emit(now, source)?;
        if let Some(interval) = self.sources[source].interval_ns {
            if self.sources[source].active(now + interval) {
                self.engine
                    .schedule_at(SimTime::from_nanos(now + interval), Event::Send { source: source as u32 })
                    .map_err(budget)?;
            }
        }
        Ok(())
    }

    /// A replay's datagrams due at `now` (its schedule may put several at one instant),
    /// then a wake-up at the next one's send time.
    fn send_replay(&mut self, now: u64, source: usize) -> Result<(), RunError> {
        while let Some((at, _)) = self.sources[source].next_replay() {
            if at > now {
                let at = SimTime::from_nanos(at);
                self.engine.schedule_at(at, Event::Send { source: source as u32 }).map_err(budget)?;
                break;
            }
            self.emit(now, source)?;
        }
        Ok(())
    }

    /// Sends one datagram of a source; `false` when nothing could be sent.
    pub(super) fn emit(&mut self, now: u64, source: usize) -> Result<bool, RunError> {
        let s = &mut self.sources[source];
        let seq = s.seq;
        s.seq += 1;
        let node = source_node(&s.config);
        // The stack's outputs go into the world's scratch vector, kept for its capacity
        // (a nested use finds it taken and starts a new one): no allocation per datagram.
        let mut outs = std::mem::take(&mut self.scratch_outs);
        if let FlowConfig::UdpReplay { id, to, dst_port, payloads, dont_fragment, .. } = &self.sources[source].config {
            // Read from the schedule rather than cloned with it: a capture's is long.
            let (id, to, df) = (*id, std::net::SocketAddrV4::new(*to, *dst_port), *dont_fragment);
            let payload = payloads[seq as usize % payloads.len()];
            self.send_probe_udp(now, node, (id, seq), to, payload, df, &mut outs);
            return self.release_emitted(now, node, outs);
        }
        // The flow's fields are copied out of its configuration, not the configuration
        // cloned: one datagram per call.
        match self.sources[source].config {
            FlowConfig::Tcp { .. } | FlowConfig::UdpReplay { .. } => {
                self.scratch_outs = outs;
                return Ok(false);
            }
            FlowConfig::Udp { id, to, dst_port, payload, dst_mac: Some(dst_mac), src_mac, .. } => {
                // A raw tester stream: the frame's MACs as configured, no ARP.
                let to = std::net::SocketAddrV4::new(to, dst_port);
                let probe = Probe { flow: id, seq, sent_ns: now };
                let len = (payload as usize).max(crate::app::probe::PROBE_HEADER_LEN);
                let macs = (wire::ethernet::Address(dst_mac), src_mac.map(wire::ethernet::Address));
                let ip = &mut self.nodes[node as usize].ip;
                ip.send_udp_raw(EPHEMERAL_PORT, to, len, macs, |data| probe.emit(data), &mut outs);
                self.stats.get_mut(&id).expect("flow").sent += 1;
            }
            FlowConfig::Udp { id, to, dst_port, payload, dont_fragment, .. } => {
                let to = std::net::SocketAddrV4::new(to, dst_port);
                self.send_probe_udp(now, node, (id, seq), to, payload, dont_fragment, &mut outs);
            }
            FlowConfig::UdpEcho { id, to, dst_port, payload, .. } => {
                let probe = Probe { flow: id, seq, sent_ns: now };
                let data = probe.payload(payload as usize);
                let src_port = self.echo[&id].src_port;
                self.nodes[node as usize].ip.send_udp(now, src_port, to, dst_port, &data, &mut outs);
                self.stats.get_mut(&id).expect("flow").sent += 1;
            }
            FlowConfig::Ping { id, to, payload, .. } => {
                let probe = Probe { flow: id, seq, sent_ns: now };
                let data = probe.payload(payload as usize);
                self.nodes[node as usize].ip.send_ping(now, to, id as u16, seq as u16, &data, &mut outs);
                self.stats.get_mut(&id).expect("flow").sent += 1;
            }
        }
        self.release_emitted(now, node, outs)
    }

    /// One UDP test datagram of flow `id` (`flow.0`), sequence number `flow.1`, with
    /// `payload` octets (at least the probe's), handed to the node's stack.
    #[allow(clippy::too_many_arguments)] // why: a datagram's own fields, each once
    #[inline(always)]
    fn send_probe_udp(
        &mut self,
        now: u64,
        node: u32,
        flow: (u32, u32),
        to: std::net::SocketAddrV4,
        payload: u32,
        dont_fragment: bool,
        outs: &mut Vec<crate::node::ip::Out>,
    ) {
        let (id, seq) = flow;
        let probe = Probe { flow: id, seq, sent_ns: now };
        let len = (payload as usize).max(crate::app::probe::PROBE_HEADER_LEN);
        self.nodes[node as usize].ip.send_udp_df(
            now,
            EPHEMERAL_PORT,
            to,
            len,
            dont_fragment,
            |data| probe.emit(data),
            outs,
        );
        self.stats.get_mut(&id).expect("flow").sent += 1;
    }

    /// What a source's datagram made of the node's stack leaves through its ports;
    /// whether a frame was handed to a port.
    /// `outs` goes back to the world's scratch vector, emptied.
    #[inline(always)]
    fn release_emitted(&mut self, now: u64, node: u32, mut outs: Vec<crate::node::ip::Out>) -> Result<bool, RunError> {
        let mut fx = self.take_fx();
        self.nodes[node as usize].apply_drain(now, &mut outs, &mut fx);
        self.scratch_outs = outs;
        // Only a frame handed to a port counts: a datagram waiting for ARP or dropped
        // must not let a saturating source spin at one instant.
        let sent = !fx.send.is_empty();
        self.release_sent(now, node, fx)?;
        Ok(sent)
    }

    /// Sends a datagram the node itself makes (an echo server's reply) through its stack.
    pub(super) fn send_local(
        &mut self,
        now: u64,
        node: u32,
        src: Ipv4Addr,
        dst: Ipv4Addr,
        protocol: IpProtocol,
        payload: &[u8],
    ) -> Result<(), RunError> {
        let mut outs = Vec::new();
        let n = &mut self.nodes[node as usize];
        n.ip.send_datagram(now, src, dst, protocol, payload, &mut outs);
        let mut fx = Effects::default();
        n.apply(now, outs, &mut fx);
        self.release_sent(now, node, fx)
    }

    /// A datagram reached a node's own stack: count it for its flow.
    pub(super) fn deliver_local(&mut self, now: u64, node: u32, packet: &[u8]) -> Result<(), RunError> {
        let Ok(ip) = ipv4::Packet::new_checked(packet) else { return Ok(()) };
        match ip.next_header() {
            IpProtocol::Udp => self.deliver_udp(now, node, &ip)?,
            IpProtocol::Tcp => self.deliver_tcp(now, node, &ip, packet)?,
            IpProtocol::Icmp => self.deliver_icmp(now, node, &ip)?,
            _ => {}
        }
        Ok(())
    }

    /// A UDP datagram for the node: a probe counted for its flow, or an echo flow's
    /// request (answered, RFC 862) or reply (a round trip).
    fn deliver_udp(&mut self, now: u64, node: u32, ip: &ipv4::Packet<&[u8]>) -> Result<(), RunError> {
        if let Ok(datagram) = udp::Packet::new_checked(ip.payload()) {
            if let Some(probe) = Probe::parse(datagram.payload()) {
                if let Some(echo) = self.echo.get_mut(&probe.flow) {
                    let bytes = datagram.payload().len() as u64;
                    if node == echo.from && datagram.dst_port() == echo.src_port {
                        // The echo is back at its client: a round trip.
                        let stats = self.stats.get_mut(&probe.flow).expect("flow");
                        if stats.record_arrival(probe.seq, probe.sent_ns, now, bytes) == Arrival::Received {
                            echo.rtt.record(now.saturating_sub(probe.sent_ns));
                        }
                    } else if datagram.dst_port() == echo.dst_port {
                        echo.forward.record_arrival(probe.seq, probe.sent_ns, now, bytes);
                        let (src, dst) = (ip.dst_addr(), ip.src_addr());
                        let reply = udp::Repr { src_port: datagram.dst_port(), dst_port: datagram.src_port() };
                        let mut segment = Vec::with_capacity(datagram.payload().len() + udp::HEADER_LEN);
                        reply.encapsulate(&src, &dst, datagram.payload(), &mut segment);
                        return self.send_local(now, node, src, dst, IpProtocol::Udp, &segment);
                    }
                    return Ok(());
                }
                if let Some(stats) = self.stats.get_mut(&probe.flow) {
                    stats.record_arrival(probe.seq, probe.sent_ns, now, datagram.payload().len() as u64);
                }
            }
        }
        Ok(())
    }

    /// An ICMP message for the node: Fragmentation Needed for a TCP flow's path MTU, or a
    /// ping's Echo Reply.
    fn deliver_icmp(&mut self, now: u64, node: u32, ip: &ipv4::Packet<&[u8]>) -> Result<(), RunError> {
        if let Ok(icmp) = icmpv4::Packet::new_checked(ip.payload()) {
            if let Ok(icmpv4::Repr::DstUnreachable { reason: icmpv4::DstUnreachable::FragRequired, header, .. }) =
                icmpv4::Repr::parse(&icmp)
            {
                return self.tcp_frag_needed(now, node, header);
            }
            if let Ok(icmpv4::Repr::EchoReply { data, .. }) = icmpv4::Repr::parse(&icmp) {
                if let Some(probe) = Probe::parse(data) {
                    if let Some(stats) = self.stats.get_mut(&probe.flow) {
                        // Duplicates' round trips count, as ping's statistics take them.
                        if stats.record_arrival(probe.seq, probe.sent_ns, now, data.len() as u64) != Arrival::Late {
                            stats.rtt_ns.push(now - probe.sent_ns);
                        }
                    }
                }
            }
        }
        Ok(())
    }
}

/// How often a TCP application waiting for its PPP link to come up looks again.
pub(super) const LINK_UP_POLL_NS: u64 = 10_000_000;

/// A saturating source keeps this many frames waiting at its node.
pub(super) const SATURATION_BACKLOG: usize = 2;

pub(super) fn source_node(config: &FlowConfig) -> u32 {
    match config {
        FlowConfig::Udp { from, .. }
        | FlowConfig::Ping { from, .. }
        | FlowConfig::Tcp { from, .. }
        | FlowConfig::UdpEcho { from, .. }
        | FlowConfig::UdpReplay { from, .. } => *from,
    }
}

/// The client side of every built flow: the start of the IANA dynamic range.
pub(super) const EPHEMERAL_PORT: u16 = 49152;

/// UDP echo clients' ports: flow `i` uses this plus `i`, away from the other flows'.
pub(super) const ECHO_CLIENT_PORT: u16 = 50000;
