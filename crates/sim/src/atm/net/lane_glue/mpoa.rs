//! MPOA (af-mpoa-0087.000): shortcut SVCs by NHRP resolution between MPC and MPS.

use super::*;

impl AtmNet {
    /// An IP packet on an MPOA shortcut (egress MPC): the DLL header the router used.
    pub(in crate::atm::net) fn shortcut_in(
        &mut self,
        _now: u64,
        ep: u32,
        mut bytes: Vec<u8>,
        start: usize,
        out: &mut AtmOut,
    ) {
        let e = &mut self.endpoints[ep as usize];
        let (node, port, mac) = (e.node, e.port, e.mac);
        let dst_ip = {
            let d = &bytes[start + 8 + 16..start + 8 + 20];
            Ipv4Addr::new(d[0], d[1], d[2], d[3])
        };
        let header = e
            .lane
            .as_ref()
            .and_then(|l| l.mpc.as_ref())
            .and_then(|m| m.dll.get(&dst_ip).copied())
            .unwrap_or((mac, Mac([0; 6])));
        // The 8-octet LLC/SNAP header becomes the last 8 of a 14-octet Ethernet header.
        let ip_at = start + 8;
        let mut frame = if ip_at >= ethernet::HEADER_LEN {
            bytes.drain(..ip_at - ethernet::HEADER_LEN);
            bytes
        } else {
            let mut f = vec![0u8; ethernet::HEADER_LEN];
            f.extend_from_slice(&bytes[ip_at..]);
            f
        };
        frame[0..6].copy_from_slice(&header.0 .0);
        frame[6..12].copy_from_slice(&header.1 .0);
        frame[12..14].copy_from_slice(&u16::from(EtherType::Ipv4).to_be_bytes());
        out.deliver.push((node, port, frame));
    }

    /// The ingress MPC asks its MPS for `dst` (MPOA Resolution Request).
    pub(in crate::atm::net) fn mpoa_request(&mut self, now: u64, ep: u32, dst: Ipv4Addr, out: &mut AtmOut) {
        let e = &mut self.endpoints[ep as usize];
        let (atm, ip) = (e.atm, e.ip.map_or(Ipv4Addr::UNSPECIFIED, |a| a.0));
        let Some(m) = e.lane.as_mut().and_then(|l| l.mpc.as_mut()) else { return };
        let Some(mps) = m.mps_atm else { return };
        match m.control_vc.filter(|&v| e.vcs[v].state == VcState::Active) {
            Some(v) => {
                let id = m.next_request;
                m.next_request += 1;
                let r = nhrp::Repr {
                    operation: nhrp::Operation::MpoaResolutionRequest,
                    hop_count: 1,
                    flags: 0,
                    request_id: id,
                    source_nbma: lane::with_selector(atm, sel::MPC),
                    source_ip: ip,
                    destination_ip: dst,
                    cie: None,
                };
                self.stats.lane.mpoa_resolution_requests += 1;
                let node = self.endpoints[ep as usize].node;
                self.stats.lane.note(now, node, format!("sends MPOA Resolution Request for {dst}"));
                let mut b = nhrp::LLC_SNAP.to_vec();
                b.extend_from_slice(&r.to_bytes());
                self.nic_send(now, ep, v, b, 0, out);
            }
            None => {
                m.queued.push(dst);
                if m.control_vc.is_none() {
                    let v = self.lane_call(now, ep, mps, sel::MPC, VcRole::MpoaControl, out);
                    self.endpoints[ep as usize].lane.as_mut().unwrap().mpc.as_mut().unwrap().control_vc = Some(v);
                }
            }
        }
    }

    pub(in crate::atm::net) fn send_nhrp(&mut self, now: u64, ep: u32, v: usize, p: &nhrp::Repr, out: &mut AtmOut) {
        let node = self.endpoints[ep as usize].node;
        let name = match p.operation {
            nhrp::Operation::MpoaResolutionRequest => "MPOA Resolution Request",
            nhrp::Operation::MpoaResolutionReply => "MPOA Resolution Reply",
            nhrp::Operation::ResolutionRequest => "NHRP Resolution Request",
            nhrp::Operation::ResolutionReply => "NHRP Resolution Reply",
            _ => "NHRP",
        };
        self.stats.lane.note(now, node, format!("sends {name} for {}", p.destination_ip));
        let mut b = nhrp::LLC_SNAP.to_vec();
        b.extend_from_slice(&p.to_bytes());
        self.nic_send(now, ep, v, b, 0, out);
    }

    /// An MPS (its router's) answer for `dst`: looked up on all the router's LANE ports,
    /// IP → MAC from the router's frames, MAC → ATM from that port's LE_ARP cache. The
    /// port found and the ATM address of the client the router sends `dst`'s packets to.
    pub(in crate::atm::net) fn mps_lookup(&self, node: u32, dst: Ipv4Addr) -> Option<(u32, AtmAddress)> {
        (0..self.endpoints.len() as u32).filter(|&x| self.endpoints[x as usize].node == node).find_map(|x| {
            let e = &self.endpoints[x as usize];
            let mac = e.servers.as_ref()?.mps.as_ref()?.get(&dst)?;
            Some((x, *e.lane.as_ref()?.le_arp.get(mac)?))
        })
    }

    /// An (MPOA) Resolution Request at an MPS acting as NHS: answered when it serves the
    /// destination, else forwarded to the next NHS on the routed path (RFC 2332 §5.2.1).
    fn nhs_resolution_request(&mut self, now: u64, ep: u32, v: usize, p: nhrp::Repr, out: &mut AtmOut) {
        let node = self.endpoints[ep as usize].node;
        let found = self.mps_lookup(node, p.destination_ip);
        let is_mpoa = p.operation == nhrp::Operation::MpoaResolutionRequest;
        let reply_op = if is_mpoa { nhrp::Operation::MpoaResolutionReply } else { nhrp::Operation::ResolutionReply };
        // RFC 2332 §5.2.1: an NHS that does not serve the destination forwards
        // the request to the next NHS on the routed path, which here is the MPS
        // of the router the packets go to next (af-mpoa-0087.000: the ingress
        // MPS makes an NHRP Resolution Request of the MPOA one). Hop count
        // bounds the path.
        let next_nhs =
            found.filter(|(x, a)| self.endpoints[*x as usize].servers.as_ref().is_some_and(|s| s.nhs_lecs.contains(a)));
        let hops = if is_mpoa { lane::NHRP_HOP_COUNT } else { p.hop_count };
        if let (Some((x, lec)), true) = (next_nhs, hops > 1) {
            let peer = lane::with_selector(lec, sel::MPS);
            let fwd = nhrp::Repr { operation: nhrp::Operation::ResolutionRequest, hop_count: hops - 1, ..p };
            self.stats.lane.nhrp_forwarded += 1;
            let e = &mut self.endpoints[x as usize];
            let s = e.servers.as_mut().expect("an MPS port");
            s.nhs_forwarded.insert((p.source_nbma, p.request_id), (ep, v, reply_op));
            match s.nhs_vcs.get(&peer).copied() {
                Some(pv) if e.vcs[pv].state == VcState::Active => self.send_nhrp(now, x, pv, &fwd, out),
                Some(_) => s.nhs_queued.entry(peer).or_default().push(fwd),
                None => {
                    s.nhs_queued.entry(peer).or_default().push(fwd);
                    let pv = self.lane_call(now, x, peer, sel::MPS, VcRole::NhsPeer, out);
                    self.endpoints[x as usize].servers.as_mut().unwrap().nhs_vcs.insert(peer, pv);
                }
            }
            return;
        }
        let cie = match found.filter(|_| next_nhs.is_none()) {
            Some((_, a)) => nhrp::Cie {
                code: nhrp::CODE_SUCCESS,
                prefix_len: 32,
                mtu: 1500,
                holding_time: 1200,
                client_nbma: Some(lane::with_selector(a, sel::MPC)),
                client_ip: Some(p.destination_ip),
            },
            None => nhrp::Cie {
                code: nhrp::CODE_NO_BINDING,
                prefix_len: 32,
                mtu: 0,
                holding_time: 0,
                client_nbma: None,
                client_ip: Some(p.destination_ip),
            },
        };
        let reply = nhrp::Repr { operation: reply_op, cie: Some(cie), ..p };
        if is_mpoa {
            self.stats.lane.mpoa_resolution_replies += 1;
        }
        self.send_nhrp(now, ep, v, &reply, out);
    }

    pub(in crate::atm::net) fn mpoa_packet(&mut self, now: u64, ep: u32, v: usize, p: nhrp::Repr, out: &mut AtmOut) {
        match p.operation {
            nhrp::Operation::MpoaResolutionRequest | nhrp::Operation::ResolutionRequest => {
                self.nhs_resolution_request(now, ep, v, p, out)
            }
            nhrp::Operation::ResolutionReply => {
                // Back from the next NHS: relayed toward whoever asked us (RFC 2332
                // §5.2.2), as an MPOA reply to an MPC.
                let Some((back_ep, back_v, op)) = self.endpoints[ep as usize]
                    .servers
                    .as_mut()
                    .and_then(|s| s.nhs_forwarded.remove(&(p.source_nbma, p.request_id)))
                else {
                    return;
                };
                let reply = nhrp::Repr { operation: op, ..p };
                self.stats.lane.nhrp_relayed += 1;
                if op == nhrp::Operation::MpoaResolutionReply {
                    self.stats.lane.mpoa_resolution_replies += 1;
                }
                self.send_nhrp(now, back_ep, back_v, &reply, out);
            }
            nhrp::Operation::MpoaResolutionReply => {
                let e = &mut self.endpoints[ep as usize];
                let Some(m) = e.lane.as_mut().and_then(|l| l.mpc.as_mut()) else { return };
                m.resolving.remove(&p.destination_ip);
                let Some(c) = p.cie.filter(|c| c.code == nhrp::CODE_SUCCESS) else {
                    m.retry_at.insert(p.destination_ip, now + lane::INITIAL_RETRY_TIME_NS);
                    return;
                };
                let Some(a) = c.client_nbma else { return };
                m.egress.insert(p.destination_ip, a);
                let exists = m.shortcuts.contains_key(&a)
                    || e.vcs.iter().any(|vc| vc.role == Some(VcRole::Shortcut) && vc.peer_atm == Some(a));
                if !exists {
                    self.lane_call(now, ep, a, sel::MPC, VcRole::Shortcut, out);
                }
            }
            _ => {}
        }
    }
}
