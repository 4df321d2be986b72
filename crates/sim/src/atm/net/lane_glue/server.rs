//! The LANE servers on a port: LECS and LES control frames, and the BUS's service.

use super::*;

impl AtmNet {
    pub(in crate::atm::net) fn server_control(
        &mut self,
        now: u64,
        ep: u32,
        v: usize,
        r: ControlRepr<'static>,
        out: &mut AtmOut,
    ) {
        let e = &mut self.endpoints[ep as usize];
        let local = e.vcs[v].sel;
        let Some(s) = e.servers.as_mut() else { return };
        match r.opcode {
            Opcode::ConfigureRequest => {
                let Some(lecs) = s.lecs.as_ref() else { return };
                let name = String::from_utf8_lossy(r.elan_name()).into_owned();
                let a = match lecs.get(&name) {
                    Some(&les) => {
                        ControlRepr { opcode: Opcode::ConfigureResponse, status: Status::Success, target_atm: les, ..r }
                    }
                    None => ControlRepr { opcode: Opcode::ConfigureResponse, status: Status::NoConfiguration, ..r },
                };
                self.send_control(now, ep, v, &a, out);
            }
            Opcode::JoinRequest => {
                let Some(les) = s.les.get_mut(&local) else { return };
                let proxy = r.flags & flags::PROXY != 0;
                let lecid = les.join(r.source_atm, v, proxy, mac_of(r.source));
                let a =
                    ControlRepr { opcode: Opcode::JoinResponse, status: Status::Success, requester_lecid: lecid, ..r };
                self.send_control(now, ep, v, &a, out);
                // §5.1.4: the LES adds the client to its control-distribute VCC.
                self.lane_call(
                    now,
                    ep,
                    lane::with_selector(r.source_atm, sel::LEC),
                    local,
                    VcRole::ControlDistribute,
                    out,
                );
            }
            Opcode::ArpRequest => self.les_arp_request(now, ep, v, r, out),
            Opcode::FlushResponse => {
                // Relayed to the client that asked (its LECID is in the response).
                let Some(les) = s.les.get(&local) else { return };
                let Some(m) = les.members.get(&r.requester_lecid) else { return };
                let cv = m.control_vc;
                self.send_control(now, ep, cv, &r, out);
            }
            Opcode::ArpResponse => {
                let Some(les) = s.les.get_mut(&local) else { return };
                let Some(asker) = les.forwarded.remove(&r.transaction_id) else { return };
                let Some(m) = les.members.get(&asker) else { return };
                let cv = m.control_vc;
                self.send_control(now, ep, cv, &r, out);
            }
            _ => {}
        }
    }

    /// LE_ARP_REQUEST at the LES (§7.1.5): answered from its table, or forwarded to the
    /// proxies, which answer for MACs behind them.
    fn les_arp_request(&mut self, now: u64, ep: u32, v: usize, r: ControlRepr<'static>, out: &mut AtmOut) {
        let e = &mut self.endpoints[ep as usize];
        let local = e.vcs[v].sel;
        let Some(s) = e.servers.as_mut() else { return };
        let Some(les) = s.les.get_mut(&local) else { return };
        let Some(target) = mac_of(r.target) else { return };
        match les.arp(target, r.requester_lecid) {
            LesArp::Answer(a) => {
                let reply = ControlRepr { opcode: Opcode::ArpResponse, status: Status::Success, target_atm: a, ..r };
                self.send_control(now, ep, v, &reply, out);
            }
            LesArp::Forward(vcs) => {
                les.forwarded.insert(r.transaction_id, r.requester_lecid);
                // To each proxy on its control-distribute VCC when up, else on
                // its control-direct VCC.
                let dist: Vec<usize> = vcs
                    .into_iter()
                    .map(|cv| {
                        let peer = e.vcs[cv].peer_atm;
                        e.vcs
                            .iter()
                            .position(|vc| {
                                vc.role == Some(VcRole::ControlDistribute)
                                    && vc.state == VcState::Active
                                    && vc.peer_atm.map(|p| p.0[..19] == peer.map_or([0; 20], |q| q.0)[..19])
                                        == Some(true)
                            })
                            .unwrap_or(cv)
                    })
                    .collect();
                for d in dist {
                    self.send_control(now, ep, d, &r, out);
                }
            }
        }
    }

    /// A data frame reaches the BUS: admitted within its capacity, forwarded later.
    pub(in crate::atm::net) fn bus_in(
        &mut self,
        now: u64,
        ep: u32,
        v: usize,
        bytes: Vec<u8>,
        start: usize,
        out: &mut AtmOut,
    ) {
        let e = &mut self.endpoints[ep as usize];
        let (node, port, local) = (e.node, e.port, e.vcs[v].sel);
        let Some(bus) = e.servers.as_mut().and_then(|s| s.bus.get_mut(&local)) else { return };
        let cells = wire::aal5::cell_count(bytes.len() - start) as u32;
        self.stats.lane.bus_frames_in += 1;
        self.stats.lane.bus_cells_in += u64::from(cells);
        match bus.admit(now, cells) {
            None => {
                self.stats.lane.bus_frames_dropped += 1;
                self.lost.push(("BUS over its capacity: frame dropped", bytes[start..].to_vec()));
                out.drops.push((node, Some(port), "BUS over its capacity: frame dropped".into(), None));
            }
            Some(at) => {
                let sdu = bytes[start..].to_vec();
                let id = match self.lane_free.pop() {
                    Some(i) => {
                        self.lane_deferred[i as usize] = Some((ep, local, sdu));
                        i
                    }
                    None => {
                        self.lane_deferred.push(Some((ep, local, sdu)));
                        (self.lane_deferred.len() - 1) as u32
                    }
                };
                out.schedule.push((at, AtmEvent::Lane(id)));
            }
        }
    }

    /// The BUS forwards a served frame on every multicast-forward VCC.
    pub(in crate::atm::net) fn bus_depart(&mut self, now: u64, id: u32, out: &mut AtmOut) {
        let Some((ep, local, sdu)) = self.lane_deferred[id as usize].take() else { return };
        self.lane_free.push(id);
        let e = &self.endpoints[ep as usize];
        let Some(bus) = e.servers.as_ref().and_then(|s| s.bus.get(&local)) else { return };
        let leaves: Vec<usize> = bus.leaves.values().copied().filter(|&v| e.vcs[v].state == VcState::Active).collect();
        self.stats.lane.bus_frames_out += 1;
        for v in leaves {
            self.nic_send(now, ep, v, sdu.clone(), 0, out);
        }
    }
}
