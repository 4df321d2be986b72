//! A host's ATM port: IP packets to VCs (RFC 2684, CLIP), the NIC's queue and
//! segmentation, frames received, and ATMARP (RFC 2225).

use super::*;

impl AtmNet {
    /// An IP packet (Ethernet-headed, from the stack) leaves node port `ep` for `next_hop`.
    pub fn send_ip(&mut self, now: u64, ep: u32, next_hop: Ipv4Addr, frame: Vec<u8>, out: &mut AtmOut) {
        let e = &mut self.endpoints[ep as usize];
        let broadcast = next_hop.is_broadcast()
            || e.ip.is_some_and(|(a, l)| l < 31 && next_hop == crate::node::ip::subnet_broadcast(a, l));
        if broadcast || next_hop.is_multicast() {
            out.drops.push((
                e.node,
                Some(e.port),
                format!("CLIP has no broadcast or multicast: {next_hop} (RFC 2225 §4; MARS not modelled)"),
                frame.get(14..).map(<[u8]>::to_vec),
            ));
            return;
        }
        if let Some(&v) = e.clip.vc_of.get(&next_hop) {
            if e.vcs[v].state == VcState::Active {
                self.send_ip_on(now, ep, v, frame, out);
                return;
            }
        }
        let q = e.clip.pending.entry(next_hop).or_default();
        if q.len() >= crate::node::ip::ARP_PENDING_LIMIT {
            out.drops.push((
                e.node,
                Some(e.port),
                format!("ATMARP queue for {next_hop} full"),
                frame.get(14..).map(<[u8]>::to_vec),
            ));
            return;
        }
        q.push_back(frame);
        if e.clip.server.is_some() && !e.clip.resolving.contains(&next_hop) && !e.clip.atm_of.contains_key(&next_hop) {
            e.clip.resolving.insert(next_hop);
            self.atmarp_request(now, ep, next_hop, out);
        }
    }

    pub(super) fn send_ip_on(&mut self, now: u64, ep: u32, v: usize, mut frame: Vec<u8>, out: &mut AtmOut) {
        let e = &self.endpoints[ep as usize];
        let start = if e.encap.is_llc() {
            frame[6..14].copy_from_slice(&[0xaa, 0xaa, 0x03, 0, 0, 0, 0x08, 0x00]);
            6
        } else {
            14
        };
        self.nic_send(now, ep, v, frame, start, out);
    }

    /// Segments a frame onto VC `v` of `ep` through its NIC queue.
    pub(super) fn nic_send(&mut self, now: u64, ep: u32, v: usize, bytes: Vec<u8>, start: usize, out: &mut AtmOut) {
        let limit = self.endpoints[ep as usize].nic_limit;
        if self.backlog(now, ep) >= limit {
            let e = &self.endpoints[ep as usize];
            out.drops.push((
                e.node,
                Some(e.port),
                "ATM NIC transmit queue full".into(),
                bytes.get(14..).map(<[u8]>::to_vec),
            ));
            return;
        }
        let e = &self.endpoints[ep as usize];
        let (link, dir, vpi, vci, pcr, mut tat, node, port) =
            (e.link, e.end, e.vcs[v].vpi, e.vcs[v].vci, e.vcs[v].pcr_bps, e.vcs[v].tat, e.node, e.port);
        if self.capture {
            out.captured.push((node, port, now, erf_aal5(vpi, vci, &bytes[start..])));
        }
        let shaped = e.contracts.get(v).is_some_and(qos::Contract::shapes);
        let frame = self.new_frame(bytes, start);
        self.stats.frames_sent += 1;
        if shaped {
            self.contract_send(now, ep, v, frame, out);
            return;
        }
        let end = match self.endpoints[ep as usize].sar {
            None => self.send_cells(now, frame, link, dir, vpi, vci, pcr.map(|p| (p, &mut tat)), out),
            Some(sar) => {
                // The engine takes this PDU when done with the one before, spends its
                // set-up, then paces the cells at its own rate or the VC's PCR, the slower.
                let ready = now.max(sar.free_ns) + sar.pdu_ns;
                let end = match pcr {
                    Some(p) if p < sar.cell_bps => {
                        self.send_cells_from(now, ready, frame, link, dir, vpi, vci, Some((p, &mut tat)), out)
                    }
                    // The engine binds; its spacing restarts with each PDU, which its
                    // set-up and `free_ns` already hold back, so no state carries over.
                    _ => {
                        self.send_cells_from(now, ready, frame, link, dir, vpi, vci, Some((sar.cell_bps, &mut 0)), out)
                    }
                };
                // Busy for its set-up and one cell time of its own per cell, or until
                // the last cell is on the line if the line or the VC is slower.
                let cells = u128::from(self.frames[frame as usize].cells);
                let own = (cells * crate::atm::CELL_BITS * 1_000_000_000).div_ceil(u128::from(sar.cell_bps)) as u64;
                let on_line = self.links[link as usize].slots.start(end);
                if let Some(s) = self.endpoints[ep as usize].sar.as_mut() {
                    s.free_ns = on_line.max(ready + own);
                }
                end
            }
        };
        self.endpoints[ep as usize].vcs[v].tat = tat;
        self.endpoints[ep as usize].nic_frames.push_back(end);
        let done = self.links[link as usize].slots.start(end);
        out.schedule.push((done, AtmEvent::TxDone(ep)));
    }

    /// A whole AAL5 SDU (in `bytes[start..]`) arrived on VC `v` of `ep`.
    pub(super) fn host_frame(
        &mut self,
        now: u64,
        ep: u32,
        v: usize,
        mut bytes: Vec<u8>,
        start: usize,
        out: &mut AtmOut,
    ) {
        let e = &self.endpoints[ep as usize];
        if (e.vcs[v].vpi, e.vcs[v].vci) == SIGNALLING_VC {
            if let Ok(msg) = signalling::sscop_payload(&bytes[start..]).and_then(Message::decode) {
                let delay = self.host_signalling_ns;
                self.queue_signal(now + delay, SigAt::Host(ep), msg, out);
            }
            return;
        }
        if e.vcs[v].role.is_some() {
            self.lane_frame(now, ep, v, bytes, start, out);
            return;
        }
        let (node, port, encap, mac) = (e.node, e.port, e.encap, e.mac);
        let Ok((repr, _)) = rfc2684::decapsulate(encap, &bytes[start..]) else {
            out.drops.push((node, Some(port), "malformed RFC 2684 encapsulation".into(), None));
            return;
        };
        let ethertype = match repr {
            rfc2684::Repr::LlcSnapRouted { ethertype } => ethertype,
            _ => EtherType::Ipv4,
        };
        let header = start + encap.header_len();
        match ethertype {
            EtherType::Ipv4 if header >= ethernet::HEADER_LEN => {
                // The IP packet is at `header`; the Ethernet header the stack expects goes
                // in front of it, in the same buffer when there is room.
                let mut frame = if header == ethernet::HEADER_LEN {
                    bytes
                } else {
                    let mut f = vec![0u8; ethernet::HEADER_LEN];
                    f.extend_from_slice(&bytes[header..]);
                    f
                };
                frame[0..6].copy_from_slice(&mac.0);
                frame[6..12].fill(0);
                frame[12..14].copy_from_slice(&u16::from(EtherType::Ipv4).to_be_bytes());
                out.deliver.push((node, port, frame));
            }
            EtherType::Ipv4 => {
                let mut frame = vec![0u8; ethernet::HEADER_LEN];
                frame[0..6].copy_from_slice(&mac.0);
                frame[12..14].copy_from_slice(&u16::from(EtherType::Ipv4).to_be_bytes());
                frame.extend_from_slice(&bytes[header..]);
                out.deliver.push((node, port, frame));
            }
            EtherType::Arp => {
                bytes.drain(..header);
                if let Ok(arp) = atmarp::Packet::new_checked(&bytes[..]).and_then(|p| atmarp::Repr::parse(&p)) {
                    self.host_atmarp(now, ep, v, arp, out);
                }
            }
            other => {
                out.drops.push((node, Some(port), format!("EtherType {:#06x} on a CLIP VC", u16::from(other)), None))
            }
        }
    }

    pub(super) fn send_atmarp(&mut self, now: u64, ep: u32, v: usize, repr: &atmarp::Repr, out: &mut AtmOut) {
        let mut bytes = vec![0u8; 6];
        rfc2684::Repr::LlcSnapRouted { ethertype: EtherType::Arp }.encapsulate(&repr.to_bytes(), &mut bytes);
        self.nic_send(now, ep, v, bytes, 6, out);
    }

    pub(super) fn atmarp_request(&mut self, now: u64, ep: u32, target: Ipv4Addr, out: &mut AtmOut) {
        let e = &mut self.endpoints[ep as usize];
        match e.clip.server_vc.filter(|&v| e.vcs[v].state == VcState::Active) {
            Some(v) => {
                let repr = atmarp::Repr {
                    operation: Operation::Request,
                    source_atm: Some(e.atm),
                    source_ip: e.ip.map(|a| a.0),
                    target_atm: None,
                    target_ip: Some(target),
                };
                self.stats.atmarp_requests += 1;
                self.send_atmarp(now, ep, v, &repr, out);
            }
            None => e.clip.queued_requests.push(target),
        }
    }

    pub(super) fn host_atmarp(&mut self, now: u64, ep: u32, v: usize, arp: atmarp::Repr, out: &mut AtmOut) {
        let e = &mut self.endpoints[ep as usize];
        let own_ip = e.ip.map(|a| a.0);
        match arp.operation {
            Operation::InRequest => {
                let reply = atmarp::Repr {
                    operation: Operation::InReply,
                    source_atm: Some(e.atm),
                    source_ip: own_ip,
                    target_atm: arp.source_atm,
                    target_ip: arp.source_ip,
                };
                if let Some(ip) = arp.source_ip {
                    e.clip.vc_of.insert(ip, v);
                }
                self.send_atmarp(now, ep, v, &reply, out);
                if let Some(ip) = arp.source_ip {
                    self.flush(now, ep, ip, out);
                }
            }
            Operation::InReply => {
                if let Some(ip) = arp.source_ip {
                    e.clip.vc_of.insert(ip, v);
                    self.flush(now, ep, ip, out);
                }
            }
            Operation::Request if e.clip.is_server => {
                if let Some(answer) = clip::server_answer(&mut e.clip.table, &arp) {
                    self.send_atmarp(now, ep, v, &answer, out);
                }
            }
            Operation::Reply => {
                let (Some(ip), Some(atm)) = (arp.source_ip, arp.source_atm) else { return };
                if Some(ip) == own_ip {
                    return; // our registration acknowledged
                }
                e.clip.resolving.remove(&ip);
                e.clip.atm_of.insert(ip, atm);
                if let Some(v) = e.vcs.iter().position(|vc| vc.peer_atm == Some(atm) && vc.state == VcState::Active) {
                    e.clip.vc_of.insert(ip, v);
                    self.flush(now, ep, ip, out);
                } else if !e.vcs.iter().any(|vc| vc.peer_atm == Some(atm)) {
                    self.place_call(now, ep, atm, out);
                }
            }
            Operation::Nak => {
                let Some(ip) = arp.target_ip else { return };
                e.clip.resolving.remove(&ip);
                for frame in e.clip.pending.remove(&ip).unwrap_or_default() {
                    out.drops.push((
                        e.node,
                        Some(e.port),
                        format!("ATMARP_NAK: the LIS's ATMARP server has no entry for {ip}"),
                        frame.get(14..).map(<[u8]>::to_vec),
                    ));
                }
            }
            _ => {}
        }
    }

    pub(super) fn flush(&mut self, now: u64, ep: u32, ip: Ipv4Addr, out: &mut AtmOut) {
        let e = &mut self.endpoints[ep as usize];
        let Some(&v) = e.clip.vc_of.get(&ip) else { return };
        for frame in e.clip.pending.remove(&ip).unwrap_or_default() {
            self.send_ip_on(now, ep, v, frame, out);
        }
    }

    pub(super) fn start(&mut self, now: u64, out: &mut AtmOut) {
        for ep in 0..self.endpoints.len() as u32 {
            let e = &self.endpoints[ep as usize];
            // RFC 2225 §8.2: InATMARP on every LLC/SNAP PVC to learn its far end (not
            // on LANE ports: their VCs are LANE's).
            if e.encap.is_llc() && e.lane.is_none() && e.servers.is_none() {
                for v in 1..e.vcs.len() {
                    let e = &self.endpoints[ep as usize];
                    let repr = atmarp::Repr {
                        operation: Operation::InRequest,
                        source_atm: Some(e.atm),
                        source_ip: e.ip.map(|a| a.0),
                        target_atm: None,
                        target_ip: None,
                    };
                    self.stats.inatmarp_requests += 1;
                    self.send_atmarp(now, ep, v, &repr, out);
                }
            }
            if let Some(server) = self.endpoints[ep as usize].clip.server {
                let v = self.place_call(now, ep, server, out);
                let e = &mut self.endpoints[ep as usize];
                e.clip.server_vc = Some(v);
                // RFC 2225 §8.5: register with a request for our own address.
                if let Some((ip, _)) = e.ip {
                    e.clip.queued_requests.insert(0, ip);
                }
            }
        }
        self.lane_start(now, out);
    }
}
