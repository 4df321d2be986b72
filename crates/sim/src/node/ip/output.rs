//! What the stack sends: its own datagrams and forwarded ones, into tunnels, fitted to the
//! egress MTU (fragmentation, DF and ICMP "fragmentation needed"), resolved with ARP, and
//! the ICMP errors it answers with.

use super::*;

impl IpStack {
    pub(super) fn arp_request(&mut self, iface: usize, target: Ipv4Addr, out: &mut Vec<Out>) {
        let Some(source) = self.source_for(iface) else { return };
        let mac = self.ifaces[iface].mac;
        let repr = arp::Repr::request(mac, source, target);
        self.counters.arp_requests += 1;
        out.push(Out::Frame { iface, frame: ethernet_frame(mac, Mac::BROADCAST, EtherType::Arp, &arp_bytes(&repr)) });
    }

    /// Seals the packet after the headroom of `frame` into tunnel `t` (fragmenting it
    /// before or after encapsulation, see [`fit_tunnel`](Self::fit_tunnel)) and routes
    /// the outer packets.
    pub(super) fn send_into_tunnel(
        &mut self,
        now: u64,
        t: usize,
        frame: Vec<u8>,
        arrived_on: Option<usize>,
        out: &mut Vec<Out>,
    ) {
        let mut pieces = Vec::new();
        if !self.fit_tunnel(now, t, frame, arrived_on, &mut pieces, out) {
            return;
        }
        let mut io = std::mem::take(&mut self.tunnel_io);
        for piece in pieces {
            io.ident = self.next_ident();
            self.tunnels[t].hook.send(now, &piece[HEADROOM..], &mut io);
            self.carry_out(now, &mut io, out);
        }
        self.tunnel_io = io;
    }

    /// Carries out what a tunnel end the stack drives asked for: its outer packets
    /// routed over real interfaces (counted as the ESP/AH packets they are), its inner
    /// packets taken as received on its interface, its drops.
    pub(super) fn carry_out(&mut self, now: u64, io: &mut TunnelIo, out: &mut Vec<Out>) {
        for action in io.actions.drain(..) {
            match action {
                Action::Routed(outer) => {
                    self.counters.esp_sealed += 1;
                    self.counters.esp_bytes += (outer.len() - HEADROOM - ipv4::HEADER_LEN) as u64;
                    self.send_routed(now, outer, None, true, out);
                }
                Action::Drop { reason, packet, .. } => out.push(Out::Drop { reason, packet }),
                other => out.push(Out::Drop {
                    reason: format!(
                        "a tunnel end the stack drives asked for {other:?}, which only the node carries out"
                    ),
                    packet: None,
                }),
            }
        }
    }

    /// The pieces of a packet for tunnel `t` (RFC 4459 §3), for every kind of tunnel:
    /// with DF set it must fit the tunnel's effective MTU whole (else "fragmentation
    /// needed" with that MTU goes back, RFC 4301 §8.2.1); with DF clear it is fragmented
    /// to the effective MTU before encapsulation ([`TunnelFragment::Before`], so no
    /// outer packet needs fragmenting) or only to the interface MTU, leaving the outer
    /// packet to be fragmented after encapsulation ([`TunnelFragment::After`]).
    pub fn fit_tunnel(
        &mut self,
        now: u64,
        t: usize,
        frame: Vec<u8>,
        arrived_on: Option<usize>,
        pieces: &mut Vec<Vec<u8>>,
        out: &mut Vec<Out>,
    ) -> bool {
        let iface = self.tunnels[t].iface;
        let effective = self.tunnel_mtu(now, t);
        let limit = match self.tunnels[t].hook.fragment() {
            TunnelFragment::Before => effective,
            TunnelFragment::After => self.ifaces[iface].mtu,
        };
        self.fit(now, iface, limit, effective, frame, arrived_on, pieces, out)
    }

    /// The MTU the packet after the headroom of `frame` meets leaving on `iface`: the
    /// interface's, or for the node's own packets the path MTU it knows to their
    /// destination (then [`fit`](Self::fit) cuts it into pieces that fit, RFC 791 §3.2,
    /// or refuses it).
    pub(super) fn egress_mtu(&mut self, now: u64, iface: usize, frame: &mut [u8], arrived_on: Option<usize>) -> usize {
        let mut mtu = self.ifaces[iface].mtu;
        if arrived_on.is_none() {
            let dst = ipv4::Packet::new_unchecked(&frame[HEADROOM..]).dst_addr();
            if let Some(learned) = self.pmtu.get(now, dst) {
                mtu = mtu.min(learned);
            }
            if self.pmtu.locked(now, dst) {
                // Linux: a path MTU below min_pmtu is locked and the node's packets
                // there go without DF (`ip_dont_fragment`), so routers fragment them.
                let mut view = ipv4::Packet::new_unchecked(&mut frame[HEADROOM..]);
                if view.dont_frag() {
                    view.set_dont_frag(false);
                    view.fill_checksum();
                }
            }
        }
        mtu
    }

    /// Cuts the packet after the headroom of `frame` to `mtu` (DF clear), or refuses it
    /// when it exceeds `df_mtu` with DF set: a forwarded packet's source gets an ICMP
    /// "fragmentation needed" with `df_mtu` (RFC 1191 §4, as the node's
    /// [`PmtuConfig::frag_needed`] says), the node's own packet is reported to its own
    /// stack and sockets the same way (Linux's `ip_fragment` sends itself the ICMP).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn fit(
        &mut self,
        now: u64,
        iface: usize,
        mtu: usize,
        df_mtu: usize,
        frame: Vec<u8>,
        arrived_on: Option<usize>,
        pieces: &mut Vec<Vec<u8>>,
        out: &mut Vec<Out>,
    ) -> bool {
        let len = frame.len() - HEADROOM;
        let dont_frag = ipv4::Packet::new_unchecked(&frame[HEADROOM..]).dont_frag();
        if len <= mtu && (!dont_frag || len <= df_mtu) {
            pieces.push(frame);
            return true;
        }
        if dont_frag {
            let reason =
                format!("{len}-byte packet with DF set exceeds the {df_mtu}-byte MTU of {}", self.ifaces[iface].name);
            match arrived_on {
                Some(arrived) => {
                    let reported = match self.pmtu_config.frag_needed {
                        FragNeeded::Mtu => Some(df_mtu as u16),
                        FragNeeded::ZeroMtu => Some(0),
                        FragNeeded::Silent => None,
                    };
                    let sent = reported.is_some_and(|m| {
                        self.icmp_error(now, arrived, &frame[HEADROOM..], ErrorKind::FragNeeded(m), out)
                    });
                    if sent {
                        self.counters.frag_needed_sent += 1;
                    } else {
                        self.counters.frag_needed_silent += 1;
                    }
                    let reason =
                        if reported.is_none() { format!("{reason}; no ICMP sent (PMTU black hole)") } else { reason };
                    out.push(Out::Drop { reason, packet: Some(frame[HEADROOM..].to_vec()) });
                }
                None => {
                    out.push(Out::Drop {
                        reason: format!("{reason} (EMSGSIZE at the sender)"),
                        packet: Some(frame[HEADROOM..].to_vec()),
                    });
                    self.notify_self(now, iface, &frame[HEADROOM..], df_mtu as u16, out);
                }
            }
            return false;
        }
        let before = pieces.len();
        if ipv4::fragment(&frame[HEADROOM..], mtu, |f| pieces.push(with_headroom(f))).is_err() {
            pieces.truncate(before);
            out.push(Out::Drop {
                reason: format!("cannot fragment to MTU {mtu}"),
                packet: Some(frame[HEADROOM..].to_vec()),
            });
            return false;
        }
        self.counters.fragments_sent += (pieces.len() - before) as u64;
        true
    }

    /// Forwards the IPv4 packet held after the headroom of `frame`, in place.
    pub(super) fn forward_packet(&mut self, now: u64, iface: usize, mut frame: Vec<u8>, out: &mut Vec<Out>) {
        let view = ipv4::Packet::new_unchecked(&frame[HEADROOM..]);
        let (src, dst, ttl) = (view.src_addr(), view.dst_addr(), view.ttl());
        if ttl <= 1 {
            // RFC 1812 §5.3.1: a packet whose TTL would reach zero is dropped with an
            // ICMP Time Exceeded back to its source.
            self.icmp_error(now, iface, &frame[HEADROOM..], ErrorKind::TimeExceeded, out);
            out.push(Out::Drop {
                reason: format!("TTL expired forwarding {src} -> {dst}"),
                packet: Some(frame[HEADROOM..].to_vec()),
            });
            return;
        }
        let mut view = ipv4::Packet::new_unchecked(&mut frame[HEADROOM..]);
        // input_ipv4 verified the header checksum (and NAT keeps it valid), so the
        // incremental update gives the same octets as a recompute.
        view.decrement_ttl();
        let Some((egress, _)) = self.route(dst) else {
            self.icmp_error(now, iface, &frame[HEADROOM..], ErrorKind::NetUnreachable, out);
            out.push(Out::Drop { reason: format!("no route to {dst}"), packet: Some(frame[HEADROOM..].to_vec()) });
            return;
        };
        if let Some((outside, nat)) = self.nat.as_mut() {
            if *outside == egress {
                if let Err(reason) = nat.outbound(now, &mut frame[HEADROOM..]) {
                    out.push(Out::Drop { reason, packet: Some(frame[HEADROOM..].to_vec()) });
                    return;
                }
                self.counters.translated += 1;
            }
        }
        self.counters.forwarded += 1;
        self.send_frame(now, frame, Some(iface), out);
    }

    /// Sends a transport payload from this node: builds the IPv4 header (DF clear).
    pub fn send_datagram(
        &mut self,
        now: u64,
        src: Ipv4Addr,
        dst: Ipv4Addr,
        protocol: IpProtocol,
        payload: &[u8],
        out: &mut Vec<Out>,
    ) {
        self.send_datagram_df(now, src, dst, protocol, payload, false, out);
    }

    /// As [`send_datagram`](Self::send_datagram), with DF as `dont_frag` says (a TCP
    /// doing path MTU discovery sets it, RFC 1191 §3).
    #[allow(clippy::too_many_arguments)]
    pub fn send_datagram_df(
        &mut self,
        now: u64,
        src: Ipv4Addr,
        dst: Ipv4Addr,
        protocol: IpProtocol,
        payload: &[u8],
        dont_frag: bool,
        out: &mut Vec<Out>,
    ) {
        let mut repr = ipv4::Repr::new(src, dst, protocol, payload.len(), DEFAULT_TTL);
        repr.ident = self.next_ident();
        repr.dont_frag = dont_frag;
        let mut frame = Vec::with_capacity(HEADROOM + repr.buffer_len());
        frame.resize(HEADROOM, 0);
        repr.encapsulate(payload, &mut frame);
        self.send_own(now, frame, repr.header_len(), out);
    }

    /// As [`send_datagram_df`](Self::send_datagram_df), for a payload already written
    /// in `frame` after [`TRANSPORT_OFFSET`] octets (TCP's hot path: one buffer for the
    /// whole frame, the payload never copied). The IPv4 header is written in place.
    #[allow(clippy::too_many_arguments)]
    pub fn send_datagram_in(
        &mut self,
        now: u64,
        src: Ipv4Addr,
        dst: Ipv4Addr,
        protocol: IpProtocol,
        mut frame: Vec<u8>,
        dont_frag: bool,
        out: &mut Vec<Out>,
    ) {
        let mut repr = ipv4::Repr::new(src, dst, protocol, frame.len() - TRANSPORT_OFFSET, DEFAULT_TTL);
        repr.ident = self.next_ident();
        repr.dont_frag = dont_frag;
        debug_assert_eq!(repr.header_len(), ipv4::HEADER_LEN);
        repr.emit(&mut ipv4::Packet::new_unchecked(&mut frame[HEADROOM..]));
        self.send_own(now, frame, ipv4::HEADER_LEN, out);
    }

    /// Sends a tunnel's outer datagram (PPTP's TCP and GRE): routed never into a tunnel
    /// interface the node carries itself, as [`send_udp_outer`](Self::send_udp_outer).
    pub fn send_datagram_outer(
        &mut self,
        now: u64,
        src: Ipv4Addr,
        dst: Ipv4Addr,
        protocol: IpProtocol,
        payload: &[u8],
        out: &mut Vec<Out>,
    ) {
        let mut repr = ipv4::Repr::new(src, dst, protocol, payload.len(), DEFAULT_TTL);
        repr.ident = self.next_ident();
        let mut frame = Vec::with_capacity(HEADROOM + repr.buffer_len());
        frame.resize(HEADROOM, 0);
        repr.encapsulate(payload, &mut frame);
        self.send_routed(now, frame, None, true, out);
    }

    /// Sends a datagram this node made (after [`HEADROOM`], with an IPv4 header of
    /// `header_len` bytes). RFC 4301 §5.1: the SPD decides before the datagram is routed;
    /// a transport-mode SA transforms the whole datagram, which is fragmented afterwards
    /// if it must be.
    #[inline(always)]
    pub(super) fn send_own(&mut self, now: u64, mut frame: Vec<u8>, header_len: usize, out: &mut Vec<Out>) {
        if let Some(t) = self.transports.iter().position(|t| t.selects(&frame[HEADROOM..])) {
            let mut protected = vec![0u8; HEADROOM];
            if let Err(reason) = self.transports[t].protect(&frame[HEADROOM..], &mut protected) {
                out.push(Out::Drop { reason, packet: Some(frame[HEADROOM..].to_vec()) });
                return;
            }
            self.counters.esp_sealed += 1;
            self.counters.esp_bytes += (protected.len() - HEADROOM - header_len) as u64;
            frame = protected;
            // The socket sized the datagram without the transform's overhead (Linux
            // counts it in the MSS; this model does not): a protected datagram that no
            // longer fits the path MTU is fragmented here (RFC 4303 §3.1.1: after the
            // transform), without DF, rather than refused with nothing to tell the socket.
            let dst = ipv4::Packet::new_unchecked(&frame[HEADROOM..]).dst_addr();
            if self.path_mtu(now, dst).is_some_and(|mtu| frame.len() - HEADROOM > mtu) {
                let mut view = ipv4::Packet::new_unchecked(&mut frame[HEADROOM..]);
                if view.dont_frag() {
                    view.set_dont_frag(false);
                    view.fill_checksum();
                }
            }
        }
        self.send_frame(now, frame, None, out);
    }

    /// Sends a UDP datagram of `payload_len` bytes that `fill` writes in place: one buffer
    /// for the whole frame, no copy (the traffic generators' hot path). DF clear.
    pub fn send_udp_with(
        &mut self,
        now: u64,
        src_port: u16,
        to: std::net::SocketAddrV4,
        payload_len: usize,
        fill: impl FnOnce(&mut [u8]),
        out: &mut Vec<Out>,
    ) {
        self.send_udp_df(now, src_port, to, payload_len, false, fill, out);
    }

    /// As [`send_udp_with`](Self::send_udp_with), with DF as `dont_frag` says
    /// (iperf3 `--dont-fragment`).
    #[allow(clippy::too_many_arguments)]
    pub fn send_udp_df(
        &mut self,
        now: u64,
        src_port: u16,
        to: std::net::SocketAddrV4,
        payload_len: usize,
        dont_frag: bool,
        fill: impl FnOnce(&mut [u8]),
        out: &mut Vec<Out>,
    ) {
        let Some(own) = self.own_udp(src_port, to, payload_len, dont_frag, fill, out) else { return };
        self.send_own(now, own.frame, own.ip_len, out);
    }

    /// The UDP datagram this node sends to `to`: routed, from the egress interface's
    /// address, built in one buffer after [`HEADROOM`] with its payload written in place
    /// by `fill`, DF as `dont_frag` says. `None`, with the drop in `out`, when no route
    /// leads to `to` or its interface has no address. What [`send_udp_df`] and
    /// [`send_udp_raw`] share.
    ///
    /// [`send_udp_df`]: Self::send_udp_df
    /// [`send_udp_raw`]: Self::send_udp_raw
    #[inline(always)]
    fn own_udp(
        &mut self,
        src_port: u16,
        to: std::net::SocketAddrV4,
        payload_len: usize,
        dont_frag: bool,
        fill: impl FnOnce(&mut [u8]),
        out: &mut Vec<Out>,
    ) -> Option<OwnUdp> {
        let (dst, dst_port) = (*to.ip(), to.port());
        let Some((iface, _)) = self.route(dst) else {
            out.push(Out::Drop { reason: format!("no route to {dst}"), packet: None });
            return None;
        };
        let Some(src) = self.source_for(iface) else {
            out.push(Out::Drop { reason: "no IPv4 address to send from".into(), packet: None });
            return None;
        };
        let udp_len = udp::HEADER_LEN + payload_len;
        let mut repr = ipv4::Repr::new(src, dst, IpProtocol::Udp, udp_len, DEFAULT_TTL);
        repr.ident = self.next_ident();
        repr.dont_frag = dont_frag;
        let ip_len = repr.header_len();
        let mut frame = vec![0u8; HEADROOM + ip_len + udp_len];
        udp::Repr { src_port, dst_port }.emit(
            &mut udp::Packet::new_unchecked(&mut frame[HEADROOM + ip_len..]),
            &src,
            &dst,
            payload_len,
            fill,
        );
        repr.emit(&mut ipv4::Packet::new_unchecked(&mut frame[HEADROOM..]));
        Some(OwnUdp { iface, ip_len, udp_len, frame })
    }

    /// A raw tester stream's UDP datagram (`FlowConfig::Udp`'s `dst_mac`): the frame
    /// carries `dst_mac` and `src_mac` (the interface's own when `None`) as written,
    /// with no ARP, as a hardware tester's stream does (seed 000 §3, Fig. 10: frames to
    /// station A's adapter, "any virtual MAC address" as source). The route still picks
    /// the interface and the source address. A tester sends the frame it was given: one
    /// longer than the interface's MTU, or on an interface with no Ethernet header (a
    /// tunnel, a point-to-point line), is dropped with the reason, never fragmented.
    #[allow(clippy::too_many_arguments)] // why: a datagram's own fields, each once
    pub fn send_udp_raw(
        &mut self,
        src_port: u16,
        to: std::net::SocketAddrV4,
        payload_len: usize,
        macs: (Mac, Option<Mac>),
        fill: impl FnOnce(&mut [u8]),
        out: &mut Vec<Out>,
    ) {
        let Some(OwnUdp { iface, ip_len, udp_len, mut frame }) =
            self.own_udp(src_port, to, payload_len, false, fill, out)
        else {
            return;
        };
        let reason = if self.tunnel_of(iface).is_some() || !self.ifaces[iface].resolve {
            Some(format!(
                "a raw stream needs an interface that sends its frames as given; {} is a tunnel, a point-to-point \
                 line or an L3F bridge, which write their own link header",
                self.ifaces[iface].name
            ))
        } else if ip_len + udp_len > self.ifaces[iface].mtu {
            Some(format!(
                "raw stream frame of {} bytes after its header exceeds {}'s MTU {} (a tester does not fragment)",
                ip_len + udp_len,
                self.ifaces[iface].name,
                self.ifaces[iface].mtu
            ))
        } else {
            None
        };
        if let Some(reason) = reason {
            out.push(Out::Drop { reason, packet: Some(frame[HEADROOM..].to_vec()) });
            return;
        }
        let (dst_mac, src_mac) = macs;
        write_ethernet_header(&mut frame, src_mac.unwrap_or(self.ifaces[iface].mac), dst_mac, EtherType::Ipv4);
        out.push(Out::Frame { iface, frame });
    }

    /// Sends a tunnel's outer UDP datagram (OpenVPN's): from `src`, routed over any
    /// interface but a tunnel's (RFC 4301 §5.1.2.1's rule for outer packets: the packet is
    /// already transformed), fragmented after encapsulation if it exceeds the egress MTU.
    pub fn send_udp_outer(
        &mut self,
        now: u64,
        src: Ipv4Addr,
        src_port: u16,
        to: std::net::SocketAddrV4,
        payload: &[u8],
        out: &mut Vec<Out>,
    ) {
        let (dst, dst_port) = (*to.ip(), to.port());
        let udp_len = udp::HEADER_LEN + payload.len();
        let mut repr = ipv4::Repr::new(src, dst, IpProtocol::Udp, udp_len, DEFAULT_TTL);
        repr.ident = self.next_ident();
        let ip_len = repr.header_len();
        let mut frame = vec![0u8; HEADROOM + ip_len + udp_len];
        udp::Repr { src_port, dst_port }.emit(
            &mut udp::Packet::new_unchecked(&mut frame[HEADROOM + ip_len..]),
            &src,
            &dst,
            payload.len(),
            |data| data.copy_from_slice(payload),
        );
        repr.emit(&mut ipv4::Packet::new_unchecked(&mut frame[HEADROOM..]));
        self.send_routed(now, frame, None, true, out);
    }

    /// Sends a UDP datagram from this node; the source address is the egress interface's.
    pub fn send_udp(
        &mut self,
        now: u64,
        src_port: u16,
        dst: Ipv4Addr,
        dst_port: u16,
        payload: &[u8],
        out: &mut Vec<Out>,
    ) {
        let to = std::net::SocketAddrV4::new(dst, dst_port);
        self.send_udp_with(now, src_port, to, payload.len(), |data| data.copy_from_slice(payload), out);
    }

    /// Sends an ICMP echo request from this node.
    pub fn send_ping(&mut self, now: u64, dst: Ipv4Addr, ident: u16, seq_no: u16, data: &[u8], out: &mut Vec<Out>) {
        let Some((iface, _)) = self.route(dst) else {
            out.push(Out::Drop { reason: format!("no route to {dst}"), packet: None });
            return;
        };
        let Some(src) = self.source_for(iface) else { return };
        let repr = icmpv4::Repr::EchoRequest { ident, seq_no, data };
        let mut body = Vec::with_capacity(repr.buffer_len());
        repr.encapsulate(&mut body);
        self.send_datagram(now, src, dst, IpProtocol::Icmp, &body, out);
    }

    /// Routes, fragments and resolves an IPv4 datagram (without link header).
    /// `arrived_on` is the interface a forwarded packet came in on (for ICMP errors),
    /// `None` for local traffic.
    pub fn send_ip(&mut self, now: u64, packet: Vec<u8>, arrived_on: Option<usize>, out: &mut Vec<Out>) {
        self.send_frame(now, with_headroom(&packet), arrived_on, out);
    }

    /// As [`send_ip`](Self::send_ip), for a packet already after [`HEADROOM`] bytes.
    pub(super) fn send_frame(&mut self, now: u64, frame: Vec<u8>, arrived_on: Option<usize>, out: &mut Vec<Out>) {
        self.send_routed(now, frame, arrived_on, false, out);
    }

    /// Routes (over real interfaces only when `bypass_tunnels`), fragments and resolves.
    pub(super) fn send_routed(
        &mut self,
        now: u64,
        frame: Vec<u8>,
        arrived_on: Option<usize>,
        bypass_tunnels: bool,
        out: &mut Vec<Out>,
    ) {
        let view = ipv4::Packet::new_unchecked(&frame[HEADROOM..]);
        let dst = view.dst_addr();
        let (iface, next_hop) = if dst.is_broadcast() {
            match self.ifaces.iter().position(|i| i.addr.is_some()) {
                Some(i) => (i, dst),
                None => return,
            }
        } else if let Some(route) = self.lookup(dst, bypass_tunnels) {
            route
        } else {
            out.push(Out::Drop { reason: format!("no route to {dst}"), packet: Some(frame[HEADROOM..].to_vec()) });
            return;
        };
        if let Some(t) = self.tunnel_of(iface) {
            self.send_into_tunnel(now, t, frame, arrived_on, out);
            return;
        }
        let mut frame = frame;
        let mtu = self.egress_mtu(now, iface, &mut frame, arrived_on);
        if frame.len() - HEADROOM <= mtu {
            // It fits whole, DF or not: what `fit` would hand on alone.
            self.resolve_and_send(now, iface, next_hop, frame, out);
            return;
        }
        // A scratch vector kept between packets (taken: a nested send starts a new one).
        let mut pieces = std::mem::take(&mut self.pieces_scratch);
        if self.fit(now, iface, mtu, mtu, frame, arrived_on, &mut pieces, out) {
            for piece in pieces.drain(..) {
                self.resolve_and_send(now, iface, next_hop, piece, out);
            }
        }
        pieces.clear();
        self.pieces_scratch = pieces;
    }

    #[inline(always)]
    pub(super) fn resolve_and_send(
        &mut self,
        now: u64,
        iface: usize,
        next_hop: Ipv4Addr,
        mut frame: Vec<u8>,
        out: &mut Vec<Out>,
    ) {
        let src_mac = self.ifaces[iface].mac;
        if self.ifaces[iface].is_broadcast_for(next_hop) || !self.ifaces[iface].resolve {
            write_ethernet_header(&mut frame, src_mac, Mac::BROADCAST, EtherType::Ipv4);
            out.push(Out::Frame { iface, frame });
            return;
        }
        if let Some(entry) = self.arp.get(&next_hop).filter(|e| e.expires > now) {
            write_ethernet_header(&mut frame, src_mac, entry.mac, EtherType::Ipv4);
            out.push(Out::Frame { iface: entry.iface, frame });
            return;
        }
        match self.pending.get_mut(&next_hop) {
            Some(pending) => {
                if pending.packets.len() >= ARP_PENDING_LIMIT {
                    out.push(Out::Drop {
                        reason: format!("ARP queue for {next_hop} full"),
                        packet: Some(frame[HEADROOM..].to_vec()),
                    });
                } else {
                    pending.packets.push_back(frame);
                }
            }
            None => {
                let mut packets = VecDeque::new();
                packets.push_back(frame);
                self.pending.insert(next_hop, Pending { iface, packets, tries: 1, next_try: now + ARP_RETRY_NS });
                self.arp_request(iface, next_hop, out);
            }
        }
    }

    /// Sends an ICMP error about `original` to its source; `false` when none was sent
    /// (RFC 1122 §3.2.2's exceptions, or the rate limit).
    pub(super) fn icmp_error(
        &mut self,
        now: u64,
        iface: usize,
        original: &[u8],
        kind: ErrorKind,
        out: &mut Vec<Out>,
    ) -> bool {
        let view = ipv4::Packet::new_unchecked(original);
        let src = view.src_addr();
        // RFC 1122 §3.2.2: never an ICMP error about an ICMP error, a fragment other than
        // the first, or a broadcast.
        if view.frag_offset() != 0 || src.is_broadcast() || src.is_unspecified() {
            return false;
        }
        if view.next_header() == IpProtocol::Icmp {
            let is_error = icmpv4::Packet::new_checked(view.payload())
                .ok()
                .and_then(|p| icmpv4::Repr::parse(&p).ok())
                .is_some_and(|r| !matches!(r, icmpv4::Repr::EchoRequest { .. } | icmpv4::Repr::EchoReply { .. }));
            if is_error {
                return false;
            }
        }
        // RFC 1812 §4.3.2.8: a router SHOULD limit its ICMP error rate. Linux limits the
        // types of `icmp_ratemask` (all three here) per destination, except
        // "fragmentation needed" (`icmpv4_mask_allow`), which PMTUD must not lose.
        let limited = !matches!(kind, ErrorKind::FragNeeded(_)) || self.pmtu_config.rate_limit_frag_needed;
        if limited && !self.icmp_limit.allow(now, src) {
            self.counters.icmp_rate_limited += 1;
            return false;
        }
        let Ok(quote) = icmpv4::quote(original) else { return false };
        let repr = match kind {
            ErrorKind::TimeExceeded => icmpv4::Repr::TimeExceeded { reason: TimeExceeded::TtlExpired, header: quote },
            ErrorKind::NetUnreachable => {
                icmpv4::Repr::DstUnreachable { reason: DstUnreachable::NetUnreachable, next_hop_mtu: 0, header: quote }
            }
            ErrorKind::FragNeeded(mtu) => {
                icmpv4::Repr::DstUnreachable { reason: DstUnreachable::FragRequired, next_hop_mtu: mtu, header: quote }
            }
        };
        let mut body = Vec::with_capacity(repr.buffer_len());
        repr.encapsulate(&mut body);
        // RFC 1812 §4.3.2.4: the source is the address of the interface the ICMP leaves by;
        // the interface the packet came in on is a fair stand-in on these paths.
        let Some(from) = self.source_for(iface) else { return false };
        self.send_datagram(now, from, src, IpProtocol::Icmp, &body, out);
        true
    }

    /// The node's own packet `original` could not leave by `iface` with DF set: its
    /// stack and sockets learn it as from an ICMP "fragmentation needed" with `mtu`
    /// (Linux's `ip_fragment` sends the ICMP to the local source).
    pub(super) fn notify_self(&mut self, now: u64, iface: usize, original: &[u8], mtu: u16, out: &mut Vec<Out>) {
        let Ok(repr) = icmpv4::Repr::frag_required(original, mtu) else { return };
        let mut body = Vec::with_capacity(repr.buffer_len());
        repr.encapsulate(&mut body);
        let own = ipv4::Packet::new_unchecked(original).src_addr();
        let ip = ipv4::Repr::new(own, own, IpProtocol::Icmp, body.len(), DEFAULT_TTL);
        let mut packet = Vec::with_capacity(ip.buffer_len());
        ip.encapsulate(&body, &mut packet);
        self.deliver(now, iface, packet, 0, out);
    }

    /// An ICMP "fragmentation needed" delivered to this node: the path MTU to the quoted
    /// destination goes down (RFC 1191 §3), to the plateau below the quoted length when
    /// the router said 0 (§5). Only for datagrams this node sent (RFC 5927 §4.1: the
    /// quoted source must be ours).
    pub(super) fn frag_needed_received(&mut self, now: u64, next_hop_mtu: u16, quoted: &[u8]) {
        let quoted = ipv4::Packet::new_unchecked(quoted);
        if quoted.check_header_len().is_err() || !self.is_own(quoted.src_addr()) {
            return;
        }
        self.counters.frag_needed_received += 1;
        let dst = quoted.dst_addr();
        let reported = if next_hop_mtu == 0 { pmtu::plateau_below(quoted.total_len()) } else { next_hop_mtu };
        let current = self.path_mtu(now, dst).unwrap_or(usize::from(reported));
        if self.pmtu.learn(now, dst, usize::from(reported).max(pmtu::MIN_IPV4_MTU), current).is_some() {
            self.path_epoch += 1;
        }
    }
}

/// A UDP datagram this node built ([`IpStack::own_udp`]): the frame (after
/// [`HEADROOM`]), its egress interface, and its IPv4 header and UDP lengths.
struct OwnUdp {
    iface: usize,
    ip_len: usize,
    udp_len: usize,
    frame: Vec<u8>,
}
