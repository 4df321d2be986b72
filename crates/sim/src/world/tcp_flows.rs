//! TCP flows: a sender's and a receiver's socket on their nodes, their timers, and segments
//! to and from the IP stacks.

use super::*;

/// A TCP flow: the sender's and the receiver's sockets and where they live.
pub(super) struct TcpFlow {
    pub(super) id: u32,
    pub(super) nodes: [u32; 2],
    /// Each side's own address and port.
    pub(super) addrs: [Ipv4Addr; 2],
    pub(super) ports: [u16; 2],
    /// The far end as each side sees it: the sender's is the receiver's address and
    /// port; the receiver's is the sender as its SYN arrived, which a NAT on the way has
    /// rewritten to its outside address and mapped port (RFC 3022 §2.2): the listening
    /// socket answers that endpoint, as a real server's accepted socket does.
    pub(super) peers: [(Ipv4Addr, u16); 2],
    pub(super) sockets: [TcpSocket; 2],
    /// Each socket's timer (`crate::wake`).
    pub(super) timers: [WakeTimer; 2],
    /// Each side's last path MTU answer from its node's stack (see `tcp_dispatch`).
    pub(super) path_mtu: [crate::node::ip::PathMtuMemo; 2],
    pub(super) bytes: Option<u64>,
    pub(super) start_ns: u64,
    pub(super) stop_ns: u64,
    pub(super) first_rx_ns: Option<u64>,
    /// Data octets the receiver's first in-order delivery handed over (at `first_rx_ns`).
    pub(super) first_rx_bytes: u64,
    pub(super) last_rx_ns: Option<u64>,
    /// When the receiver had every byte of a sized transfer.
    pub(super) completed_ns: Option<u64>,
    /// When the receiver last got new bytes (the start before any), and the longest
    /// time it went without inside the measurement window: a PMTU black hole shows as a
    /// stall.
    pub(super) last_progress_ns: u64,
    pub(super) longest_stall_ns: u64,
    /// How long the receiver had gone without a new byte when the window ended (zero
    /// for a sized transfer that finished): a stall at the end.
    pub(super) stall_at_end_ns: u64,
    /// The flow's counters at the end of its measurement window (iperf3's test
    /// interval): a timed test's stop, a sized transfer's last byte at the receiver (or
    /// its time limit). What arrives later is the drain, reported apart.
    pub(super) window: Option<crate::tcp::report::IntervalRecord>,
    /// When the sender had every byte of a sized transfer acknowledged.
    pub(super) acked_ns: Option<u64>,
    /// When the sender sent its first data octet.
    pub(super) first_tx_ns: Option<u64>,
    pub(super) intervals: Option<IntervalRecorder>,
    /// Segments either socket handed to its stack, and segments that reached the
    /// other socket (conservation, see `crate::conservation`).
    pub(super) segments_sent: u64,
    pub(super) segments_arrived: u64,
}

impl TcpFlow {
    /// What the results need of the flow at the end of the run (`now`).
    pub(super) fn result_inputs(&mut self, now: u64) -> crate::results::TcpFlowInputs {
        let f = self;
        // A window the run ended inside (its stop or last byte not reached)
        // ends with the run.
        f.close_window(f.stop_ns.min(now));
        let window = f.window.expect("the window was just closed");
        let intervals = f.intervals.take();
        let trace = f.sockets[0].is_tracing().then(|| TraceColumns::from_records(&f.sockets[0].take_trace()));
        let (client, server) = (f.sockets[0].stats(), f.sockets[1].stats());
        crate::results::TcpFlowInputs {
            window,
            intervals: intervals.map(|r| r.records).unwrap_or_default(),
            trace,
            client: client.clone(),
            acked_ns: f.acked_ns,
            first_tx_ns: f.first_tx_ns,
            hystart_exit: f.sockets[0].hystart().exit(),
            id: f.id,
            bytes_sent: client.bytes_sent,
            bytes_received: server.bytes_received,
            retransmits: client.retransmits,
            fast_retransmits: client.fast_retransmits,
            timeouts: client.timeouts,
            srtt_ns: f.sockets[0].srtt(),
            cwnd_bytes: f.sockets[0].cwnd(),
            start_ns: f.start_ns,
            stop_ns: f.stop_ns,
            first_rx_ns: f.first_rx_ns,
            first_rx_bytes: f.first_rx_bytes,
            last_rx_ns: f.last_rx_ns,
            completed_ns: f.completed_ns,
            path: crate::results::TcpPathResult {
                mss_bytes: f.sockets[0].smss(),
                path_mtu_bytes: f.sockets[0].effective_mtu(),
                frag_needed_received: client.frag_needed,
                mss_reductions: client.mss_reductions,
                black_holes_detected: client.black_holes,
                mtu_probes: client.mtu_probes,
                mtu_probes_failed: client.mtu_probes_failed,
                longest_stall_ns: f.longest_stall_ns,
                stall_at_end_ns: f.stall_at_end_ns,
            },
        }
    }

    /// Before an event of this flow at `now`: the interval boundaries it passed. A
    /// timed test's reports end at its stop (`finish` adds the last): the events of the
    /// drain after it (retransmissions, their ACKs) add no interval.
    pub(super) fn tick(&mut self, now: u64) {
        let now = if self.bytes.is_none() { now.min(self.stop_ns) } else { now };
        if let Some(r) = self.intervals.as_mut() {
            r.advance(now, &self.sockets[0], &self.sockets[1]);
        }
    }

    /// The measurement window ends at `end`, with the sockets as they are now: its
    /// totals, the last interval, and the stall at its end, once.
    pub(super) fn close_window(&mut self, end: u64) {
        if self.window.is_some() {
            return;
        }
        if let Some(r) = self.intervals.as_mut() {
            r.close(end, &self.sockets[0], &self.sockets[1]);
        }
        // A transfer that has not finished is stalled from its last new byte to the end.
        self.stall_at_end_ns = if self.completed_ns.is_some() { 0 } else { end.saturating_sub(self.last_progress_ns) };
        self.longest_stall_ns = self.longest_stall_ns.max(self.stall_at_end_ns);
        self.window = Some(crate::tcp::report::IntervalRecord::now(end, &self.sockets[0], &self.sockets[1]));
    }
}

impl World {
    /// A TCP segment for the node: to the socket it belongs to, or dropped where no socket
    /// takes it.
    pub(super) fn deliver_tcp(
        &mut self,
        now: u64,
        node: u32,
        ip: &ipv4::Packet<&[u8]>,
        packet: &[u8],
    ) -> Result<(), RunError> {
        let (src, dst) = (ip.src_addr(), ip.dst_addr());
        let Ok(segment) = tcp::Packet::new_checked(ip.payload()) else { return Ok(()) };
        let Ok(repr) = tcp::Repr::parse(&segment, &src, &dst) else {
            self.record_drop(now, node, None, "TCP checksum error".into(), Some(packet));
            return Ok(());
        };
        let from = (src, repr.src_port);
        let found = self.tcp_flow_of(node, from, &repr);
        let Some((flow, side)) = found else {
            self.record_drop(
                now,
                node,
                None,
                format!("no TCP socket for port {} (a RST would answer)", repr.dst_port),
                Some(packet),
            );
            return Ok(());
        };
        let f = &mut self.tcp[flow];
        f.segments_arrived += 1;
        f.tick(now);
        let before = f.sockets[1].stats().bytes_received;
        let reply = f.sockets[side].process(now, &repr, segment.payload());
        let after = f.sockets[1].stats().bytes_received;
        if f.bytes.is_some_and(|b| f.sockets[0].stats().bytes_acked >= b) && f.acked_ns.is_none() {
            f.acked_ns = Some(now);
        }
        if after > before {
            if f.first_rx_ns.is_none() {
                f.first_rx_ns = Some(now);
                f.first_rx_bytes = after;
            }
            f.last_rx_ns = Some(now);
            if f.window.is_none() {
                f.longest_stall_ns = f.longest_stall_ns.max(now - f.last_progress_ns);
            }
            f.last_progress_ns = now;
            if f.bytes.is_some_and(|b| after >= b) && f.completed_ns.is_none() {
                // A sized transfer's window ends at its last byte (iperf3 -n),
                // unless its time limit ended it before.
                f.completed_ns = Some(now);
                f.close_window(now);
            }
        }
        if let Some(rst) = reply {
            self.tcp_send(now, flow, side, rst, &[])?;
        }
        self.tcp_dispatch(now, flow, side)?;
        Ok(())
    }

    /// The flow and side whose socket takes a segment from `from` to the node's port.
    fn tcp_flow_of(&mut self, node: u32, from: (Ipv4Addr, u16), repr: &tcp::Repr) -> Option<(usize, usize)> {
        let found = self.tcp.iter().enumerate().find_map(|(i, f)| {
            (0..2)
                .find(|&side| f.nodes[side] == node && f.ports[side] == repr.dst_port && f.peers[side] == from)
                .map(|side| (i, side))
        });
        // A SYN from an endpoint no socket knows: a NAT translated its sender. The
        // listening receiver takes it (RFC 9293 §3.10.7.2), the flow whose sender
        // has the SYN's port first (a NAT keeps the port when it is free, RFC 4787
        // REQ-3, RFC 5382 REQ-1), and answers that endpoint from then on.
        found.or_else(|| {
            let syn = repr.control == tcp::Control::Syn && repr.ack_number.is_none();
            let listening = |f: &TcpFlow| {
                f.nodes[1] == node && f.ports[1] == repr.dst_port && f.sockets[1].state() == crate::tcp::State::Listen
            };
            let by_port = self.tcp.iter().position(|f| listening(f) && f.ports[0] == repr.src_port);
            let flow = by_port.or_else(|| self.tcp.iter().position(listening)).filter(|_| syn)?;
            self.tcp[flow].peers[1] = from;
            Some((flow, 1))
        })
    }

    /// A TCP flow's start: the sender connects and the test's stop is armed, unless a
    /// route of the flow goes through a PPP link that is not up yet.
    pub(super) fn start_tcp(&mut self, now: u64, source: usize, flow: usize) -> Result<(), RunError> {
        let f = &self.tcp[flow];
        let (a, b) = (f.nodes, f.addrs);
        if !self.nodes[a[0] as usize].route_up(b[1]) || !self.nodes[a[1] as usize].route_up(b[0]) {
            // A route through a PPP link that is not up yet (discovery, LCP,
            // authentication, IPCP): the application starts once it is, as one
            // runs iperf after pppd says the link is up. The transfer keeps its
            // length: start and stop move together.
            let f = &mut self.tcp[flow];
            f.start_ns += LINK_UP_POLL_NS;
            f.stop_ns += LINK_UP_POLL_NS;
            // Waiting for the link is not a stall of the transfer.
            f.last_progress_ns += LINK_UP_POLL_NS;
            if let Some(r) = f.intervals.as_mut() {
                r.delay(LINK_UP_POLL_NS);
            }
            if let FlowConfig::Tcp { start_ns, stop_ns, .. } = &mut self.sources[source].config {
                *start_ns += LINK_UP_POLL_NS;
                *stop_ns += LINK_UP_POLL_NS;
            }
            self.defer_end(now, source);
            let at = SimTime::from_nanos(now + LINK_UP_POLL_NS);
            self.engine.schedule_at(at, Event::Send { source: source as u32 }).map_err(budget)?;
            return Ok(());
        }
        let f = &mut self.tcp[flow];
        let [local, remote] = f.ports;
        // The sender's initial sequence number, reproducible (see the receiver's).
        f.sockets[0].connect(now, local, remote, wire::tcp::SeqNumber(0x1000_0000));
        f.sockets[0].send_bulk(f.bytes);
        let stop = f.stop_ns;
        if stop > now {
            self.engine
                .schedule_at(SimTime::from_nanos(stop), Event::TcpTimer { flow: flow as u32, side: 2 })
                .map_err(budget)?;
        }
        self.tcp_dispatch(now, flow, 0)
    }

    /// The test's stop (the flow's third timer): its measurement window ends (what arrives
    /// later is the drain), and the sender of a timed test closes after what it sent; a
    /// sized transfer still running goes on.
    pub(super) fn tcp_stop(&mut self, now: u64, flow: u32) -> Result<(), RunError> {
        let f = &mut self.tcp[flow as usize];
        f.tick(now);
        f.close_window(now);
        if f.bytes.is_none() {
            f.sockets[0].close();
            self.tcp_dispatch(now, flow as usize, 0)?;
        }
        Ok(())
    }

    /// A socket's timer (`side` 0: the sender, 1: the receiver), if it is still the one armed.
    pub(super) fn tcp_timer(&mut self, now: u64, flow: u32, side: u8) -> Result<(), RunError> {
        let f = &mut self.tcp[flow as usize];
        if f.timers[side as usize].fired(now) {
            f.tick(now);
            self.tcp_dispatch(now, flow as usize, side as usize)?;
        }
        Ok(())
    }

    /// An ICMP "fragmentation needed" reached `node` quoting `quoted` (an IPv4 header
    /// and the first 8 octets after it): the TCP socket that sent the segment learns the
    /// path MTU its stack now knows (Linux `tcp_v4_err`).
    pub(super) fn tcp_frag_needed(&mut self, now: u64, node: u32, quoted: &[u8]) -> Result<(), RunError> {
        let ip = ipv4::Packet::new_unchecked(quoted);
        if ip.check_header_len().is_err() || ip.next_header() != IpProtocol::Tcp {
            return Ok(());
        }
        let (src, dst) = (ip.src_addr(), ip.dst_addr());
        let Some(head) = quoted.get(ip.header_len()..ip.header_len() + 8) else { return Ok(()) };
        let (src_port, dst_port) = (u16::from_be_bytes([head[0], head[1]]), u16::from_be_bytes([head[2], head[3]]));
        let seq = tcp::SeqNumber::from_u32(u32::from_be_bytes([head[4], head[5], head[6], head[7]]));
        let found = self.tcp.iter().enumerate().find_map(|(i, f)| {
            (0..2)
                .find(|&side| {
                    f.nodes[side] == node
                        && f.addrs[side] == src
                        && f.ports[side] == src_port
                        && f.peers[side] == (dst, dst_port)
                })
                .map(|side| (i, side))
        });
        let Some((flow, side)) = found else { return Ok(()) };
        let Some(mtu) = self.nodes[node as usize].ip.path_mtu(now, dst) else { return Ok(()) };
        if self.tcp[flow].sockets[side].on_frag_needed(now, seq, mtu as u32) {
            self.tcp_dispatch(now, flow, side)?;
        }
        Ok(())
    }

    /// Emits what socket `side` of TCP flow `flow` may send now, and arms its timer.
    pub(super) fn tcp_dispatch(&mut self, now: u64, flow: usize, side: usize) -> Result<(), RunError> {
        // The flow is looked up once here and once after sending (the fields of `self`
        // it touches in between are disjoint from `self.tcp`).
        let f = &mut self.tcp[flow];
        let (node, src, dst) = (f.nodes[side], f.addrs[side], f.peers[side].0);
        let socket = &mut f.sockets[side];
        // The MSS follows the path MTU the stack knows now (lowered by ICMP, back up
        // when that aged out, RFC 1191 §6.3). The stack's last answer for this side is
        // kept while the stack says it holds (no route, interface or PMTU change, not
        // past the learned estimate's expiry): the route lookup is not redone per send.
        let ip = &self.nodes[node as usize].ip;
        let memo = &mut f.path_mtu[side];
        let mtu = if ip.path_mtu_holds(memo, now) {
            Some(memo.mtu)
        } else {
            let answer = ip.path_mtu_memo(now, dst);
            *memo = answer.unwrap_or_default();
            answer.map(|m| m.mtu)
        };
        if let Some(mtu) = mtu {
            socket.set_path_mtu(mtu as u32);
        }
        // Each segment is encoded as the socket hands it out, straight into the buffer
        // of its frame: its payload is copied once.
        let mut segments = std::mem::take(&mut self.scratch_segments);
        let spare = &mut self.spare_frames;
        socket.dispatch_payloads(now, |repr, payload| {
            segments.push((payload.len(), tcp_frame(spare, repr, &src, &dst, payload)));
        });
        // What every segment of this dispatch shares is read once.
        if side == 0 && segments.iter().any(|&(len, _)| len > 0) {
            f.first_tx_ns.get_or_insert(now);
        }
        // RFC 1191 §3: a TCP doing path MTU discovery sets DF on its segments.
        let dont_frag = f.sockets[side].config().pmtu_discovery;
        f.segments_sent += segments.len() as u64;
        for (_, frame) in segments.drain(..) {
            self.tcp_send_frame(now, node, src, dst, dont_frag, frame)?;
        }
        self.scratch_segments = segments;
        // The slot's rule (`crate::wake`): a timer already set no later than needed
        // stays and wakes the socket, which re-arms for the rest (an RTO pushed back by
        // every ACK costs no heap work).
        let f = &mut self.tcp[flow];
        let wake = Event::TcpTimer { flow: flow as u32, side: side as u8 };
        f.timers[side].arm(&mut self.engine, f.sockets[side].poll_at(), wake).map_err(budget)
    }

    /// Sends one TCP segment from socket `side` of flow `flow` through its node's stack.
    pub(super) fn tcp_send(
        &mut self,
        now: u64,
        flow: usize,
        side: usize,
        repr: tcp::Repr,
        payload: &[u8],
    ) -> Result<(), RunError> {
        let f = &self.tcp[flow];
        let frame =
            tcp_frame(&mut self.spare_frames, &repr, &f.addrs[side], &f.peers[side].0, tcp::Payload::Bytes(payload));
        self.tcp_send_segment(now, flow, side, payload.len(), frame)
    }

    /// Sends one encoded TCP segment (carrying `payload_len` data octets, in `frame`
    /// after [`crate::node::ip::TRANSPORT_OFFSET`]) from socket `side` of flow `flow` through
    /// its node's stack.
    pub(super) fn tcp_send_segment(
        &mut self,
        now: u64,
        flow: usize,
        side: usize,
        payload_len: usize,
        frame: Vec<u8>,
    ) -> Result<(), RunError> {
        let f = &mut self.tcp[flow];
        f.segments_sent += 1;
        if side == 0 && payload_len > 0 {
            f.first_tx_ns.get_or_insert(now);
        }
        let (node, src, dst) = (f.nodes[side], f.addrs[side], f.peers[side].0);
        // RFC 1191 §3: a TCP doing path MTU discovery sets DF on its segments.
        let dont_frag = f.sockets[side].config().pmtu_discovery;
        self.tcp_send_frame(now, node, src, dst, dont_frag, frame)
    }

    /// Sends one encoded TCP segment (in `frame` after [`crate::node::ip::TRANSPORT_OFFSET`])
    /// from `src` on `node` to `dst` through the node's stack.
    #[inline(always)]
    pub(super) fn tcp_send_frame(
        &mut self,
        now: u64,
        node: u32,
        src: Ipv4Addr,
        dst: Ipv4Addr,
        dont_frag: bool,
        frame: Vec<u8>,
    ) -> Result<(), RunError> {
        let mut outs = std::mem::take(&mut self.scratch_outs);
        let mut fx = self.take_fx();
        let n = &mut self.nodes[node as usize];
        n.ip.send_datagram_in(now, src, dst, IpProtocol::Tcp, frame, dont_frag, &mut outs);
        n.apply_drain(now, &mut outs, &mut fx);
        self.scratch_outs = outs;
        self.release_sent(now, node, fx)
    }
}

/// Spare buffers kept for reuse: enough for a window of segments in flight.
pub(super) const SPARE_FRAMES: usize = 64;

/// A frame buffer holding the TCP segment `repr` with `payload` after
/// [`crate::node::ip::TRANSPORT_OFFSET`] octets, checksummed for `src` → `dst`; a spare buffer
/// when there is one, so a bulk transfer allocates no frame per segment.
pub(super) fn tcp_frame(
    spare: &mut Vec<Vec<u8>>,
    repr: &tcp::Repr,
    src: &Ipv4Addr,
    dst: &Ipv4Addr,
    payload: tcp::Payload<'_>,
) -> Vec<u8> {
    let mut frame = spare.pop().unwrap_or_default();
    frame.clear();
    repr.emit_at(&mut frame, crate::node::ip::TRANSPORT_OFFSET, src, dst, payload);
    frame
}

/// Keeps a delivered packet's buffer for [`tcp_frame`].
pub(super) fn recycle(spare: &mut Vec<Vec<u8>>, buffer: Vec<u8>) {
    if spare.len() < SPARE_FRAMES {
        spare.push(buffer);
    }
}

/// Linux's TCP for a first hop of `mtu`, with the flow's options; an option out of its
/// range is refused with the reason.
pub(super) fn tcp_config(options: &crate::config::TcpOptions, mtu: u32) -> Result<TcpConfig, String> {
    let mut config = TcpConfig::for_mtu(mtu);
    tcp_algorithms_and_buffers(options, &mut config)?;
    tcp_timers_and_limits(options, &mut config)?;
    Ok(config)
}

/// The options up to the algorithms: congestion control, MSS, buffers, SACK, timestamps,
/// window scaling, delayed ACKs, RTO bounds, HyStart, cwnd growth, CUBIC's alpha.
fn tcp_algorithms_and_buffers(options: &crate::config::TcpOptions, config: &mut TcpConfig) -> Result<(), String> {
    if let Some(cc) = options.congestion {
        config.congestion_control = cc;
    }
    if let Some(mss) = options.mss {
        config.mss = mss;
    }
    if let Some(b) = options.send_buffer {
        config.send_buffer = b;
    }
    if let Some(b) = options.recv_buffer {
        config.recv_buffer = b;
    }
    config.max_window = options.max_window.or(config.max_window);
    config.sack = options.sack.unwrap_or(config.sack);
    config.timestamps = options.timestamps.unwrap_or(config.timestamps);
    config.window_scaling = options.window_scaling.unwrap_or(config.window_scaling);
    if let Some(d) = options.delayed_ack_ns {
        config.delayed_ack = (d > 0).then_some(Duration::from_nanos(d));
    }
    if let Some(d) = options.min_rto_ns {
        config.min_rto = Duration::from_nanos(d);
    }
    if let Some(d) = options.rto_backoff_cap_ns {
        config.rto_backoff_cap = Some(Duration::from_nanos(d));
    }
    config.hystart = options.hystart.unwrap_or(config.hystart);
    config.cwnd_growth = options.cwnd_growth.unwrap_or(config.cwnd_growth);
    config.cubic_alpha = options.cubic_alpha.unwrap_or(config.cubic_alpha);
    Ok(())
}

/// The rest of the options: slow start's limit, the initial RTO and window, Nagle, ACK
/// policy, RACK-TLP, PRR, duplicate-ACK threshold, path MTU discovery and probing, and
/// the check that every window holds a segment.
fn tcp_timers_and_limits(options: &crate::config::TcpOptions, config: &mut TcpConfig) -> Result<(), String> {
    if let Some(l) = options.slow_start_limit {
        config.slow_start_limit = (l > 0).then_some(l);
    }
    if let Some(d) = options.initial_rto_ns {
        if d == 0 {
            return Err("an initial RTO of 0 would retransmit the SYN at once".into());
        }
        config.initial_rto = Duration::from_nanos(d);
    }
    config.nagle = options.nagle.unwrap_or(config.nagle);
    config.ack_on_push = options.ack_on_push.unwrap_or(config.ack_on_push);
    config.delayed_ack_clock = options.delayed_ack_clock.unwrap_or(config.delayed_ack_clock);
    if let Some(w) = options.send_low_water {
        config.send_low_water = (w > 0).then_some(w);
    }
    config.write_size = options.write_size.unwrap_or(config.write_size);
    config.rack = options.rack.unwrap_or(config.rack);
    config.tlp = options.tlp.unwrap_or(config.tlp);
    config.prr = options.prr.unwrap_or(config.prr);
    config.delayed_ack_segments = options.delayed_ack_segments.unwrap_or(config.delayed_ack_segments).max(1);
    config.delayed_ack_any_segment = options.delayed_ack_any_segment.unwrap_or(config.delayed_ack_any_segment);
    config.window_update_on_read = options.window_update_on_read.unwrap_or(config.window_update_on_read);
    if let Some(n) = options.dup_ack_threshold {
        if n == 0 {
            return Err("a duplicate-ACK threshold of 0 would retransmit on every ACK".into());
        }
        config.dup_ack_threshold = n;
    }
    if let Some(w) = options.initial_window {
        if w == 0 {
            return Err("an initial window of 0 segments never sends".into());
        }
        config.initial_window = w;
    }
    config.pmtu_discovery = options.pmtu_discovery.unwrap_or(config.pmtu_discovery);
    if let Some(p) = options.mtu_probing {
        if p > 2 {
            return Err(format!(
                "mtu_probing {p}: 0 (off), 1 (after a black hole) or 2 (always), as Linux's tcp_mtu_probing"
            ));
        }
        config.mtu_probing = p;
    }
    if let Some(b) = options.base_mss {
        if b < 48 {
            return Err(format!("base_mss {b}: at least Linux's tcp_min_snd_mss 48"));
        }
        // Linux's tcp_mtu_probing takes min(tcp_base_mss, …) and the search never goes
        // above the MSS: on a path whose MSS is below 1024 (576-byte MTUs) the search
        // starts where the connection already is.
        config.base_mss = b.min(config.mss);
    }
    // A window smaller than one segment could never carry a full segment: SWS
    // avoidance (RFC 9293 §3.8.6.2) would hold all data but the override trickle.
    for (name, size) in [
        ("send_buffer", Some(config.send_buffer)),
        ("recv_buffer", Some(config.recv_buffer)),
        ("max_window", config.max_window),
    ] {
        if let Some(size) = size.filter(|&b| b < u32::from(config.mss)) {
            return Err(format!("{name} of {size} bytes is smaller than one {}-byte segment (the MSS)", config.mss));
        }
    }
    Ok(())
}

/// The TCP flows of the configuration, and which source each one is.
pub(super) fn tcp_flows(
    config: &SimConfig,
    nodes: &[Node],
) -> Result<(Vec<TcpFlow>, BTreeMap<usize, usize>), RunError> {
    let mut tcp = Vec::new();
    let mut tcp_of_source = BTreeMap::new();
    for (i, flow) in config.flows.iter().enumerate() {
        if let FlowConfig::Tcp { id, from, to, dst_port, bytes, start_ns, stop_ns, tcp: options, interval_ns, trace } =
            flow
        {
            let (server_node, src, mtu) = tcp_endpoints(i, *from, *to, nodes)?;
            let field = |f: &str| format!("flows[{i}].{f}");
            let tcp_config = tcp_config(options, mtu)
                .map_err(|message| RunError::Config(ConfigError { field: field("tcp"), message }))?;
            if *interval_ns == Some(0) {
                return Err(RunError::Config(ConfigError {
                    field: field("interval_ns"),
                    message: "an interval of zero".into(),
                }));
            }
            let mut client = TcpSocket::new(tcp_config.clone());
            if *trace {
                client.enable_trace();
            }
            let mut server = TcpSocket::new(tcp_config);
            // RFC 1191 §3: each end starts from the MTU of its first hop.
            client.set_path_mtu(mtu);
            if let Some(back) = nodes[server_node as usize].ip.path_mtu(0, src) {
                server.set_path_mtu(back as u32);
            }
            // The receiver's initial sequence number: any value works (RFC 9293 §3.4.1
            // wants it unpredictable; a simulation wants it reproducible).
            server.listen(*dst_port, wire::tcp::SeqNumber(0x4000_0000));
            server.set_sink(true);
            tcp_of_source.insert(i, tcp.len());
            tcp.push(TcpFlow {
                id: *id,
                nodes: [*from, server_node],
                addrs: [src, *to],
                ports: [EPHEMERAL_PORT + tcp.len() as u16, *dst_port],
                peers: [(*to, *dst_port), (src, EPHEMERAL_PORT + tcp.len() as u16)],
                sockets: [client, server],
                timers: [WakeTimer::IDLE; 2],
                path_mtu: Default::default(),
                bytes: *bytes,
                start_ns: *start_ns,
                stop_ns: *stop_ns,
                first_rx_ns: None,
                first_rx_bytes: 0,
                acked_ns: None,
                first_tx_ns: None,
                intervals: interval_ns.map(|p| IntervalRecorder::new(*start_ns, p)),
                last_rx_ns: None,
                completed_ns: None,
                last_progress_ns: *start_ns,
                longest_stall_ns: 0,
                segments_sent: 0,
                segments_arrived: 0,
                stall_at_end_ns: 0,
                window: None,
            });
        }
    }
    Ok((tcp, tcp_of_source))
}

/// A TCP flow's server node, the client's source address and the MTU of its first hop.
fn tcp_endpoints(i: usize, from: u32, to: Ipv4Addr, nodes: &[Node]) -> Result<(u32, Ipv4Addr, u32), RunError> {
    let field = |f: &str| format!("flows[{i}].{f}");
    let server_node =
        nodes.iter().position(|n| n.ip.ifaces.iter().any(|f| f.addr.is_some_and(|(a, _)| a == to))).ok_or_else(
            || RunError::Config(ConfigError { field: field("to"), message: format!("no node has the address {to}") }),
        )? as u32;
    let client_stack = &nodes[from as usize].ip;
    let (iface, _) = client_stack.route(to).ok_or_else(|| {
        RunError::Config(ConfigError {
            field: field("to"),
            message: format!("node {} has no route to {to}", nodes[from as usize].name),
        })
    })?;
    let src = client_stack.source_address(iface).ok_or_else(|| {
        RunError::Config(ConfigError { field: field("from"), message: "the sending node has no IPv4 address".into() })
    })?;
    let mtu = client_stack.ifaces[iface].mtu as u32;
    Ok((server_node, src, mtu))
}
