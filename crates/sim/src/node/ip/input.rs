//! What the stack does with a received frame: ARP, IPv4 for the node itself (reassembly,
//! IPsec, delivery) or to forward.

use super::*;

impl IpStack {
    /// A frame arriving on interface `iface` addressed to it (or broadcast). The frame's
    /// buffer is reused for whatever the packet becomes (forwarded, answered).
    #[inline]
    pub fn input(&mut self, now: u64, iface: usize, frame: Vec<u8>, out: &mut Vec<Out>) {
        if let Some((packet, at)) = self.input_for_self(now, iface, frame, out) {
            out.push(Out::Local { iface, packet, at });
        }
    }

    /// As [`input`](Self::input), except that a datagram for the node itself received
    /// on `iface`, which `input` hands on as its last output (`Out::Local { iface, .. }`,
    /// nothing is pushed after it), is returned instead: (buffer, offset of the datagram
    /// in it). The node's per-packet path takes it without the round trip through `out`.
    #[inline]
    pub fn input_for_self(
        &mut self,
        now: u64,
        iface: usize,
        frame: Vec<u8>,
        out: &mut Vec<Out>,
    ) -> Option<(Vec<u8>, usize)> {
        let ethertype = match ethernet::Frame::new_checked(&frame[..]) {
            Ok(f) => f.ethertype(),
            Err(_) => {
                out.push(Out::Drop { reason: "malformed Ethernet frame".into(), packet: None });
                return None;
            }
        };
        match ethertype {
            EtherType::Arp => {
                self.input_arp(now, iface, &frame[HEADROOM..], out);
                None
            }
            EtherType::Ipv4 => self.input_ipv4(now, iface, frame, out),
            other => {
                out.push(Out::Drop {
                    reason: format!("no protocol for EtherType {:#06x}", u16::from(other)),
                    packet: None,
                });
                None
            }
        }
    }

    pub(super) fn input_arp(&mut self, now: u64, iface: usize, payload: &[u8], out: &mut Vec<Out>) {
        let Ok(packet) = arp::Packet::new_checked(payload) else { return };
        let Ok(repr) = arp::Repr::parse(&packet) else { return };
        let arp::Repr::EthernetIpv4 {
            operation, source_hardware_addr, source_protocol_addr, target_protocol_addr, ..
        } = repr;
        // RFC 826 "Packet Reception": update an existing entry; add one only when the
        // request is for us.
        let for_us = self.ifaces[iface].addr.is_some_and(|(a, _)| a == target_protocol_addr);
        if (self.arp.contains_key(&source_protocol_addr) || for_us) && !source_protocol_addr.is_unspecified() {
            self.arp.insert(
                source_protocol_addr,
                ArpEntry { mac: source_hardware_addr, iface, expires: now + self.arp_timeout },
            );
            self.flush_pending(source_protocol_addr, out);
        }
        if for_us && operation == arp::Operation::Request {
            let mac = self.ifaces[iface].mac;
            let reply = arp::Repr::reply_to(&repr, mac);
            out.push(Out::Frame {
                iface,
                frame: ethernet_frame(mac, source_hardware_addr, EtherType::Arp, &arp_bytes(&reply)),
            });
        }
    }

    pub(super) fn flush_pending(&mut self, ip: Ipv4Addr, out: &mut Vec<Out>) {
        let Some(pending) = self.pending.remove(&ip) else { return };
        let Some(entry) = self.arp.get(&ip).copied() else { return };
        let src_mac = self.ifaces[entry.iface].mac;
        for mut frame in pending.packets {
            write_ethernet_header(&mut frame, src_mac, entry.mac, EtherType::Ipv4);
            out.push(Out::Frame { iface: entry.iface, frame });
        }
    }

    /// The IPv4 datagram after the headroom of `frame`: what [`deliver_for_self`](Self::deliver_for_self)
    /// returns for the node itself, `None` when it was forwarded, dropped or consumed.
    pub(super) fn input_ipv4(
        &mut self,
        now: u64,
        iface: usize,
        mut frame: Vec<u8>,
        out: &mut Vec<Out>,
    ) -> Option<(Vec<u8>, usize)> {
        let Ok(view) = ipv4::Packet::new_checked(&frame[HEADROOM..]) else {
            out.push(Out::Drop { reason: "malformed IPv4 packet".into(), packet: None });
            return None;
        };
        if !view.verify_checksum() {
            out.push(Out::Drop {
                reason: "IPv4 header checksum error".into(),
                packet: Some(frame[HEADROOM..].to_vec()),
            });
            return None;
        }
        let total = usize::from(view.total_len());
        frame.truncate(HEADROOM + total); // Ethernet padding
        if self.pmtu_config.filter_icmp_unreachable && is_dst_unreachable(&frame[HEADROOM..]) {
            self.counters.icmp_filtered += 1;
            out.push(Out::Drop {
                reason: "ICMP Destination Unreachable filtered (firewall)".into(),
                packet: Some(frame[HEADROOM..].to_vec()),
            });
            return None;
        }
        let mut dst = ipv4::Packet::new_unchecked(&frame[HEADROOM..]).dst_addr();
        if let Some((outside, nat)) = self.nat.as_mut() {
            if *outside == iface && !self.ifaces[iface].is_broadcast_for(dst) {
                match nat.inbound(now, &mut frame[HEADROOM..]) {
                    Ok(()) => {
                        self.counters.translated += 1;
                        dst = ipv4::Packet::new_unchecked(&frame[HEADROOM..]).dst_addr();
                    }
                    Err(reason) => {
                        let own = self.ifaces.iter().any(|i| i.addr.is_some_and(|(a, _)| a == dst));
                        if !own {
                            out.push(Out::Drop { reason, packet: Some(frame[HEADROOM..].to_vec()) });
                            return None;
                        }
                    }
                }
            }
        }
        if self.is_own(dst) || self.ifaces[iface].is_broadcast_for(dst) {
            return self.deliver_for_self(now, iface, frame, HEADROOM, out);
        }
        if self.forward {
            self.forward_packet(now, iface, frame, out);
        } else {
            out.push(Out::Drop {
                reason: format!("{dst} is not an address of this host (IP forwarding off)"),
                packet: Some(frame[HEADROOM..].to_vec()),
            });
        }
        None
    }

    /// A datagram for this node, `packet[at..]` (`at` > 0 when it still follows its
    /// frame's Ethernet header).
    pub(super) fn deliver(&mut self, now: u64, iface: usize, packet: Vec<u8>, at: usize, out: &mut Vec<Out>) {
        if let Some((packet, at)) = self.deliver_for_self(now, iface, packet, at, out) {
            out.push(Out::Local { iface, packet, at });
        }
    }

    /// [`deliver`](Self::deliver), returning the datagram for the node's own sockets
    /// (buffer and offset) instead of pushing it as `Out::Local` (see
    /// [`input_for_self`](Self::input_for_self)); `None` when the stack consumed it.
    pub(super) fn deliver_for_self(
        &mut self,
        now: u64,
        iface: usize,
        packet: Vec<u8>,
        at: usize,
        out: &mut Vec<Out>,
    ) -> Option<(Vec<u8>, usize)> {
        let (mut packet, at) = if ipv4::Packet::new_unchecked(&packet[at..]).is_fragment() {
            match self.reassembler.process(now, &packet[at..]) {
                Ok(Some(whole)) => {
                    self.counters.reassembled += 1;
                    (whole, 0)
                }
                Ok(None) => return None,
                Err(e) => {
                    out.push(Out::Drop {
                        reason: format!("IPv4 reassembly: {e:?}"),
                        packet: Some(packet[at..].to_vec()),
                    });
                    return None;
                }
            }
        } else {
            (packet, at)
        };
        if matches!(ipv4::Packet::new_unchecked(&packet[at..]).next_header(), IpProtocol::Esp | IpProtocol::Ah) {
            packet.drain(..at);
            if let Some(t) = self.transports.iter().position(|t| t.claims(&packet)) {
                self.input_transport(now, iface, t, packet, out);
            } else {
                self.input_esp(now, packet, out);
            }
            return None;
        }
        let view = ipv4::Packet::new_unchecked(&packet[at..]);
        if view.next_header() == IpProtocol::Icmp {
            if let Ok(icmp) = icmpv4::Packet::new_checked(view.payload()) {
                if let Ok(icmpv4::Repr::DstUnreachable { reason: DstUnreachable::FragRequired, next_hop_mtu, header }) =
                    icmpv4::Repr::parse(&icmp)
                {
                    self.frag_needed_received(now, next_hop_mtu, header);
                }
                if let Ok(icmpv4::Repr::EchoRequest { ident, seq_no, data }) = icmpv4::Repr::parse(&icmp) {
                    let reply = icmpv4::Repr::EchoReply { ident, seq_no, data };
                    let mut body = Vec::with_capacity(reply.buffer_len());
                    reply.encapsulate(&mut body);
                    let (src, dst) = (view.dst_addr(), view.src_addr());
                    let src = if src.is_broadcast() { self.source_for(iface).unwrap_or(src) } else { src };
                    self.counters.delivered += 1;
                    self.send_datagram(now, src, dst, IpProtocol::Icmp, &body, out);
                    return None;
                }
            }
        }
        self.counters.delivered += 1;
        Some((packet, at))
    }

    /// A whole transport-mode ESP/AH datagram SA `t` claims: checked, restored and
    /// delivered as received on `iface`.
    pub(super) fn input_transport(&mut self, now: u64, iface: usize, t: usize, packet: Vec<u8>, out: &mut Vec<Out>) {
        let view = ipv4::Packet::new_unchecked(&packet[..]);
        self.counters.esp_opened += 1;
        self.counters.esp_bytes += (usize::from(view.total_len()) - view.header_len()) as u64;
        let mut restored = Vec::with_capacity(packet.len());
        match self.transports[t].unprotect(&packet, &mut restored) {
            Ok(()) => self.deliver(now, iface, restored, 0, out),
            Err(reason) => out.push(Out::Drop { reason, packet: Some(packet) }),
        }
    }

    /// A whole ESP or AH datagram for this node: the tunnel whose inbound SA it names
    /// opens it, and the inner packet is taken as received on the tunnel's interface.
    pub(super) fn input_esp(&mut self, now: u64, packet: Vec<u8>, out: &mut Vec<Out>) {
        let Some(t) = self.tunnels.iter().position(|t| t.hook.claims(&packet)) else {
            let view = ipv4::Packet::new_unchecked(&packet[..]);
            let (what, spi) = if view.next_header() == IpProtocol::Ah {
                ("AH", wire::ah::Packet::new_checked(view.payload()).map(|p| p.spi()).unwrap_or(0))
            } else {
                ("ESP", wire::esp::Packet::new_checked(view.payload()).map(|p| p.spi()).unwrap_or(0))
            };
            // RFC 4303 §3.4.2, RFC 4302 §3.4.2: no SA for the SPI (and addresses): discard.
            out.push(Out::Drop {
                reason: format!("{what} from {} with SPI {spi:#x}: no security association", view.src_addr()),
                packet: Some(packet),
            });
            return;
        };
        let view = ipv4::Packet::new_unchecked(&packet[..]);
        self.counters.esp_opened += 1;
        self.counters.esp_bytes += (usize::from(view.total_len()) - view.header_len()) as u64;
        let iface = self.tunnels[t].iface;
        let mut io = std::mem::take(&mut self.tunnel_io);
        match self.tunnels[t].hook.receive(now, &packet, &mut io) {
            Ok(()) => {
                for action in io.actions.drain(..) {
                    match action {
                        Action::Inner(inner) => {
                            if let Some((packet, at)) = self.input_ipv4(now, iface, inner, out) {
                                out.push(Out::Local { iface, packet, at });
                            }
                        }
                        Action::Drop { reason, packet, .. } => out.push(Out::Drop { reason, packet }),
                        other => out.push(Out::Drop {
                            reason: format!("tunnel {}: {other:?} is not for the stack", self.ifaces[iface].name),
                            packet: None,
                        }),
                    }
                }
            }
            Err(reason) => out.push(Out::Drop { reason, packet: Some(packet) }),
        }
        self.tunnel_io = io;
    }
}
