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
    pub(super) timers: [Option<(u64, EventId)>; 2],
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
        let f = &mut self.tcp[flow];
        match (f.sockets[side].poll_at(), f.timers[side]) {
            // A timer already set no later than needed stays: it wakes the socket, which
            // re-arms for the rest (an RTO pushed back by every ACK costs no heap work).
            (Some(at), Some((t, _))) if t <= at.max(now) && t >= now => Ok(()),
            (at, current) => {
                if let Some((_, id)) = current {
                    self.engine.cancel(id);
                    f.timers[side] = None;
                }
                if let Some(at) = at {
                    let at = at.max(now);
                    let id = self
                        .engine
                        .schedule_at(SimTime::from_nanos(at), Event::TcpTimer { flow: flow as u32, side: side as u8 })
                        .map_err(budget)?;
                    f.timers[side] = Some((at, id));
                }
                Ok(())
            }
        }
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

/// Linux's TCP with the flow's options.
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

pub(super) fn tcp_config(options: &crate::config::TcpOptions, mtu: u32) -> Result<TcpConfig, String> {
    let mut config = TcpConfig::for_mtu(mtu);
    if let Some(cc) = &options.congestion {
        config.congestion_control = match cc.as_str() {
            "cubic" => CongestionControl::Cubic,
            "newreno" => CongestionControl::NewReno,
            other => return Err(format!("congestion control {other:?}: expected \"cubic\" or \"newreno\"")),
        };
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
    if let Some(d) = options.rto_cap_ns {
        config.rto_backoff_cap = Some(Duration::from_nanos(d));
    }
    if let Some(h) = &options.hystart {
        config.hystart = match h.as_str() {
            "off" => HyStartMode::Off,
            "classic" => HyStartMode::Classic,
            "hystart++" => HyStartMode::PlusPlus,
            other => return Err(format!("hystart {other:?}: expected \"off\", \"classic\" or \"hystart++\"")),
        };
    }
    if let Some(g) = &options.cwnd_growth {
        config.cwnd_growth = match g.as_str() {
            "bytes" => CwndGrowth::Bytes,
            "acks" => CwndGrowth::Acks,
            "4.4bsd" => CwndGrowth::Bsd44,
            other => return Err(format!("cwnd_growth {other:?}: expected \"bytes\", \"acks\" or \"4.4bsd\"")),
        };
    }
    if let Some(a) = &options.cubic_alpha {
        config.cubic_alpha = match a.as_str() {
            "rfc9438" => CubicAlpha::Rfc9438,
            "constant" => CubicAlpha::Constant,
            other => return Err(format!("cubic_alpha {other:?}: expected \"rfc9438\" or \"constant\"")),
        };
    }
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
    Ok(config)
}
