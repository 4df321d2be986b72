//! The LE client (af-lane-0021 §2.3): joining, LE_ARP, calls for data-direct VCCs,
//! sending through the BUS or a data-direct VCC, flush, and control frames received.

use super::*;

impl AtmNet {
    /// Calls `called` from `ep` for a LANE/MPOA VC of `role`; the calling address
    /// carries selector `local`.
    pub(in crate::atm::net) fn lane_call(
        &mut self,
        now: u64,
        ep: u32,
        called: AtmAddress,
        local: u8,
        role: VcRole,
        out: &mut AtmOut,
    ) -> usize {
        let e = &mut self.endpoints[ep as usize];
        let call_ref = e.next_call;
        e.next_call += 1;
        let v = e.vcs.len();
        e.vcs.push(Vc {
            vpi: 0,
            vci: 0,
            state: VcState::Calling(now),
            peer_atm: Some(called),
            pcr_bps: None,
            tat: 0,
            reasm: Reasm::default(),
            role: Some(role),
            sel: local,
        });
        e.calls.insert(call_ref, v);
        let calling = lane::with_selector(e.atm, local);
        let msg = crate::atm::signalling::Message {
            kind: crate::atm::signalling::MessageType::Setup,
            call_ref,
            from_destination: false,
            called: Some(called),
            calling: Some(calling),
            connection: None,
            pcr_cells: None,
        };
        self.host_send_signal(now, ep, &msg, out);
        v
    }

    pub(in crate::atm::net) fn lane_start(&mut self, now: u64, out: &mut AtmOut) {
        for ep in 0..self.endpoints.len() as u32 {
            let Some(l) = self.endpoints[ep as usize].lane.as_mut() else { continue };
            // §5.1.2 LECS connect, or straight to §5.1.4 join with a configured LES.
            if let Some(lecs) = l.lecs {
                l.phase = LecPhase::LecsConnect;
                let v = self.lane_call(now, ep, lecs, sel::LEC, VcRole::ConfigureDirect, out);
                self.endpoints[ep as usize].lane.as_mut().unwrap().configure_vc = Some(v);
            } else if let Some(les) = l.les {
                l.phase = LecPhase::Join;
                let v = self.lane_call(now, ep, les, sel::LEC, VcRole::ControlDirect, out);
                self.endpoints[ep as usize].lane.as_mut().unwrap().control_vc = Some(v);
            }
        }
    }

    pub(in crate::atm::net) fn send_control(
        &mut self,
        now: u64,
        ep: u32,
        v: usize,
        repr: &ControlRepr<'_>,
        out: &mut AtmOut,
    ) {
        let node = self.endpoints[ep as usize].node;
        self.stats.lane.note(now, node, format!("sends {}", opcode_name(repr.opcode)));
        match repr.opcode {
            Opcode::ArpRequest => self.stats.lane.le_arp_requests += 1,
            Opcode::ArpResponse => self.stats.lane.le_arp_responses += 1,
            _ => {}
        }
        let bytes = lane::control_bytes(repr);
        self.nic_send(now, ep, v, bytes, 0, out);
    }

    pub(in crate::atm::net) fn elan_repr(op: Opcode, lec: &Lec, atm: AtmAddress) -> ControlRepr<'static> {
        let mut r = ControlRepr {
            source_atm: atm,
            lan_type: LanType::Ethernet,
            max_frame_size: MaxFrameSize::Size1516,
            ..ControlRepr::new(op)
        };
        let _ = r.set_elan_name(lec.elan.as_bytes());
        r
    }

    /// A LANE/MPOA VC of `ep` became active; `caller`: this end placed the call.
    pub(in crate::atm::net) fn lane_vc_up(&mut self, now: u64, ep: u32, v: usize, caller: bool, out: &mut AtmOut) {
        let e = &mut self.endpoints[ep as usize];
        let (role, peer, local) = (e.vcs[v].role, e.vcs[v].peer_atm, e.vcs[v].sel);
        let Some(role) = role else { return };
        match (role, caller) {
            (VcRole::ConfigureDirect, true) | (VcRole::ControlDirect, true) => {
                self.lec_request_on(now, ep, v, role == VcRole::ConfigureDirect, out)
            }
            (VcRole::MulticastSend, true) | (VcRole::MulticastForward, false) => {
                self.lec_bus_vc_up(now, ep, v, role, out)
            }
            (VcRole::MulticastForward, true) => {
                // At the BUS: a new leaf.
                if let (Some(s), Some(p)) = (e.servers.as_mut(), peer) {
                    if let Some(b) = s.bus.get_mut(&local) {
                        b.leaves.insert(p, v);
                    }
                }
            }
            (VcRole::MulticastSend, false) => {
                // At the BUS (§5.1.7): call the new sender back on its multicast-forward VCC.
                if let Some(p) = peer {
                    self.lane_call(now, ep, lane::with_selector(p, sel::LEC), local, VcRole::MulticastForward, out);
                }
            }
            (VcRole::DataDirect, _) => {
                let Some(l) = e.lane.as_mut() else { return };
                let Some(p) = peer else { return };
                l.direct.insert(p, v);
                if caller {
                    self.stats.lane.data_direct_vccs += 1;
                }
                let macs: Vec<Mac> = l.le_arp.iter().filter(|(_, a)| **a == p).map(|(m, _)| *m).collect();
                for m in macs {
                    self.switch_to_direct(now, ep, m, v, p, out);
                }
            }
            (VcRole::MpoaControl, true) => {
                let Some(m) = e.lane.as_mut().and_then(|l| l.mpc.as_mut()) else { return };
                m.control_vc = Some(v);
                for dst in std::mem::take(&mut m.queued) {
                    self.mpoa_request(now, ep, dst, out);
                }
            }
            (VcRole::NhsPeer, true) => {
                let Some(s) = e.servers.as_mut() else { return };
                let Some(p) = peer else { return };
                s.nhs_vcs.insert(p, v);
                for q in s.nhs_queued.remove(&p).unwrap_or_default() {
                    self.send_nhrp(now, ep, v, &q, out);
                }
            }
            (VcRole::Shortcut, true) => {
                let Some(m) = e.lane.as_mut().and_then(|l| l.mpc.as_mut()) else { return };
                if let Some(p) = peer {
                    m.shortcuts.insert(p, v);
                    self.stats.lane.shortcuts += 1;
                }
            }
            _ => {}
        }
    }

    /// The LE client's configure-direct (`configure`) or control-direct VCC is up: it
    /// sends LE_CONFIGURE_REQUEST to the LECS or LE_JOIN_REQUEST to the LES (§5.2, §5.3).
    fn lec_request_on(&mut self, now: u64, ep: u32, v: usize, configure: bool, out: &mut AtmOut) {
        let e = &mut self.endpoints[ep as usize];
        let atm = e.atm;
        let Some(l) = e.lane.as_mut() else { return };
        let r = if configure {
            l.phase = LecPhase::Configuration;
            let mut r = Self::elan_repr(Opcode::ConfigureRequest, l, atm);
            r.transaction_id = l.transaction();
            r.source = lan_mac(l.mac);
            r
        } else {
            l.phase = LecPhase::Join;
            let mut r = Self::elan_repr(Opcode::JoinRequest, l, atm);
            r.transaction_id = l.transaction();
            if l.proxy {
                r.flags = flags::PROXY;
            } else {
                r.source = lan_mac(l.mac);
            }
            r
        };
        self.send_control(now, ep, v, &r, out);
    }

    /// The LE client's multicast-send VCC (it called the BUS) or multicast-forward VCC
    /// (the BUS called it) is up; with both, the client is operational and sends what it
    /// held.
    fn lec_bus_vc_up(&mut self, now: u64, ep: u32, v: usize, role: VcRole, out: &mut AtmOut) {
        let e = &mut self.endpoints[ep as usize];
        let node = e.node;
        let Some(l) = e.lane.as_mut() else { return };
        if role == VcRole::MulticastSend {
            l.bus_vc = Some(v);
        } else {
            l.forward_up = true;
        }
        // Operational once both BUS VCCs are up, so no flooded frame is lost
        // to a client the BUS has not reached yet.
        if l.bus_vc.is_none() || !l.forward_up || l.phase == LecPhase::Operational {
            return;
        }
        l.phase = LecPhase::Operational;
        let held: Vec<Vec<u8>> = l.held.drain(..).collect();
        let name = format!("{}:{}", node, l.elan);
        self.stats.lane.joined.push((name, now));
        self.stats.lane.note(now, node, "operational");
        for f in held {
            self.lane_send(now, ep, f, out);
        }
    }

    /// A LANE call was released (refused) before it connected.
    pub(in crate::atm::net) fn lane_vc_refused(&mut self, _now: u64, ep: u32, v: usize, out: &mut AtmOut) {
        let e = &mut self.endpoints[ep as usize];
        let peer = e.vcs[v].peer_atm;
        let (node, port) = (e.node, e.port);
        if let Some(l) = e.lane.as_mut() {
            let macs: Vec<Mac> = l.le_arp.iter().filter(|(_, a)| Some(**a) == peer).map(|(m, _)| *m).collect();
            for m in macs {
                l.le_arp.remove(&m);
                for f in l.pending.remove(&m).unwrap_or_default() {
                    out.drops.push((
                        node,
                        Some(port),
                        format!("LANE data-direct call to {m} refused"),
                        f.get(14..).map(<[u8]>::to_vec),
                    ));
                }
            }
        }
    }

    /// The data frame (LE header with our LECID, then the 802.3 frame without FCS).
    pub(in crate::atm::net) fn send_data(&mut self, now: u64, ep: u32, v: usize, frame: Vec<u8>, out: &mut AtmOut) {
        let lecid = self.endpoints[ep as usize].lane.as_ref().map_or(0, |l| l.lecid);
        let mut b = Vec::with_capacity(frame.len() + 2);
        b.extend_from_slice(&lecid.to_be_bytes());
        b.extend_from_slice(&frame);
        self.nic_send(now, ep, v, b, 0, out);
    }

    /// An Ethernet frame (without FCS) from the node leaves through its LE client.
    pub fn lane_send(&mut self, now: u64, ep: u32, frame: Vec<u8>, out: &mut AtmOut) {
        if frame.len() < ethernet::HEADER_LEN {
            return;
        }
        let e = &mut self.endpoints[ep as usize];
        let (node, port) = (e.node, e.port);
        let dst = Mac::from_bytes(&frame[0..6]);
        let src = Mac::from_bytes(&frame[6..12]);
        // The MPS learns IP → MAC from its router's frames (in place of its ARP cache).
        if let (Some(s), Some(ip)) = (e.servers.as_mut(), ipv4_dst(&frame)) {
            if let Some(m) = s.mps.as_mut() {
                m.insert(ip, dst);
            }
        }
        let Some(l) = e.lane.as_mut() else { return };
        if l.phase != LecPhase::Operational {
            if l.held.len() < lane::PENDING_LIMIT {
                l.held.push_back(frame);
            } else {
                out.drops.push((
                    node,
                    Some(port),
                    "LE client not joined to its ELAN yet: queue full".into(),
                    frame.get(14..).map(<[u8]>::to_vec),
                ));
            }
            return;
        }
        if l.proxy && !src.is_multicast() {
            l.local_macs.insert(src);
        }
        // MPOA ingress (af-mpoa-0087.000 §4.7.1): packets to the MPS's MAC are counted
        // per destination; a resolved destination goes on its shortcut.
        if let (Some(m), Some(ip)) = (l.mpc.as_mut(), ipv4_dst(&frame)) {
            if m.mps_mac == Some(dst) {
                if let Some(&v) = m.egress.get(&ip).and_then(|a| m.shortcuts.get(a)) {
                    if e.vcs[v].state == VcState::Active {
                        let mut b = frame;
                        b[6..14].copy_from_slice(&LLC_IPV4);
                        self.stats.lane.shortcut_packets += 1;
                        self.nic_send(now, ep, v, b, 6, out);
                        return;
                    }
                } else if m.count(now, ip) {
                    m.resolving.insert(ip);
                    self.mpoa_request(now, ep, ip, out);
                }
            }
        }
        let e = &mut self.endpoints[ep as usize];
        let l = e.lane.as_mut().unwrap();
        if dst.is_multicast() {
            let v = l.bus_vc.expect("operational");
            self.stats.lane.broadcast_frames += 1;
            self.send_data(now, ep, v, frame, out);
            return;
        }
        self.lec_send_unicast(now, ep, dst, frame, out);
    }

    /// A unicast frame from an operational LE client to `dst`: on its data-direct VCC,
    /// held by a flush, or flooded through the BUS while LE_ARP resolves it (§7.1.5).
    fn lec_send_unicast(&mut self, now: u64, ep: u32, dst: Mac, frame: Vec<u8>, out: &mut AtmOut) {
        let e = &mut self.endpoints[ep as usize];
        let (node, port, atm) = (e.node, e.port, e.atm);
        let l = e.lane.as_mut().unwrap();
        if l.age(now, dst) {
            self.stats.lane.le_arp_aged += 1;
            self.stats.lane.note(now, node, format!("LE_ARP entry for {dst} aged out"));
        }
        let l = self.endpoints[ep as usize].lane.as_mut().unwrap();
        if l.flush_pending(now, dst) {
            hold(l, dst, frame, &mut self.stats.lane.held_by_flush, node, port, out);
            return;
        }
        let e = &mut self.endpoints[ep as usize];
        let l = e.lane.as_mut().unwrap();
        if let Some(&v) = l.le_arp.get(&dst).and_then(|a| l.direct.get(a)) {
            if e.vcs[v].state == VcState::Active {
                if !l.pending.get(&dst).is_none_or(|q| q.is_empty()) {
                    // Frames from before a flush that gave up (C22): they go first.
                    self.release_pending(now, ep, dst, v, out);
                }
                self.stats.lane.direct_frames += 1;
                self.send_data(now, ep, v, frame, out);
                return;
            }
        }
        // §7.1.5: resolve, and meanwhile flood through the BUS within C10/C11.
        if !l.le_arp.contains_key(&dst) && !l.resolving.contains(&dst) {
            l.resolving.insert(dst);
            let mut r = ControlRepr::arp_request(0, l.lecid, l.mac, atm, dst);
            r.transaction_id = l.transaction();
            let v = l.control_vc.expect("joined");
            self.send_control(now, ep, v, &r, out);
        }
        let l = self.endpoints[ep as usize].lane.as_mut().unwrap();
        if !l.le_arp.contains_key(&dst) && l.may_flood_unknown(now, dst) {
            let v = l.bus_vc.expect("operational");
            if l.flush {
                l.flooded.insert(dst);
            }
            self.stats.lane.unknown_frames += 1;
            self.send_data(now, ep, v, frame, out);
            return;
        }
        hold(l, dst, frame, &mut self.stats.lane.held_by_c10, node, port, out);
    }

    /// The data-direct VCC `v` to `peer` can carry `mac`'s frames: if some went through
    /// the BUS, flush that path first (LE_FLUSH_REQUEST on the multicast-send VCC,
    /// behind them) and keep holding; otherwise send the held frames now.
    pub(in crate::atm::net) fn switch_to_direct(
        &mut self,
        now: u64,
        ep: u32,
        mac: Mac,
        v: usize,
        peer: AtmAddress,
        out: &mut AtmOut,
    ) {
        let atm = self.endpoints[ep as usize].atm;
        let l = self.endpoints[ep as usize].lane.as_mut().unwrap();
        if l.flush && l.flooded.contains(&mac) {
            if l.flushing.contains_key(&mac) {
                return;
            }
            let Some(bus) = l.bus_vc else { return };
            let t = l.transaction();
            l.flushing.insert(mac, (t, now));
            let r = ControlRepr {
                transaction_id: t,
                requester_lecid: l.lecid,
                source_atm: atm,
                target_atm: peer,
                ..ControlRepr::new(Opcode::FlushRequest)
            };
            self.stats.lane.flush_requests += 1;
            self.send_control(now, ep, bus, &r, out);
            return;
        }
        self.release_pending(now, ep, mac, v, out);
    }

    /// Sends the frames held for `mac` on data-direct VCC `v`, in order.
    pub(in crate::atm::net) fn release_pending(&mut self, now: u64, ep: u32, mac: Mac, v: usize, out: &mut AtmOut) {
        let frames: Vec<Vec<u8>> =
            self.endpoints[ep as usize].lane.as_mut().unwrap().pending.remove(&mac).unwrap_or_default().into();
        for f in frames {
            self.stats.lane.direct_frames += 1;
            self.send_data(now, ep, v, f, out);
        }
    }

    /// A whole SDU on a LANE/MPOA VC `v` of `ep`.
    pub(in crate::atm::net) fn lane_frame(
        &mut self,
        now: u64,
        ep: u32,
        v: usize,
        bytes: Vec<u8>,
        start: usize,
        out: &mut AtmOut,
    ) {
        let role = self.endpoints[ep as usize].vcs[v].role.expect("a LANE VC");
        let sdu = &bytes[start..];
        match role {
            VcRole::MpoaControl | VcRole::NhsPeer => {
                let Some(p) = sdu.strip_prefix(&nhrp::LLC_SNAP[..]).and_then(|p| nhrp::Repr::parse(p).ok()) else {
                    return;
                };
                self.mpoa_packet(now, ep, v, p, out);
            }
            VcRole::Shortcut => {
                if sdu.len() < 8 + 20 || sdu[..8] != LLC_IPV4 {
                    return;
                }
                self.shortcut_in(now, ep, bytes, start, out);
            }
            // The BUS forwards whatever comes on a multicast-send VCC, control frames
            // (LE_FLUSH_REQUEST) included.
            VcRole::MulticastSend if self.endpoints[ep as usize].vcs[v].sel != sel::LEC => {
                self.bus_in(now, ep, v, bytes, start, out)
            }
            _ if wire::lane::is_control(sdu) => {
                let Ok(frame) = ControlFrame::new_checked(sdu) else { return };
                let Ok(repr) = ControlRepr::parse(&frame) else { return };
                let node = self.endpoints[ep as usize].node;
                self.stats.lane.note(now, node, format!("receives {}", opcode_name(repr.opcode)));
                let repr = ControlRepr { tlvs: &[], tlv_count: 0, ..repr };
                let repr: ControlRepr<'static> = repr;
                // The client's end of a control VC has the client's selector.
                if self.endpoints[ep as usize].vcs[v].sel == sel::LEC {
                    self.lec_control(now, ep, v, repr, out);
                } else {
                    self.server_control(now, ep, v, repr, out);
                }
            }
            VcRole::MulticastSend => self.bus_in(now, ep, v, bytes, start, out),
            VcRole::MulticastForward | VcRole::DataDirect => self.lec_data(now, ep, role, bytes, start, out),
            _ => {}
        }
    }

    pub(in crate::atm::net) fn lec_control(
        &mut self,
        now: u64,
        ep: u32,
        v: usize,
        r: ControlRepr<'static>,
        out: &mut AtmOut,
    ) {
        let e = &mut self.endpoints[ep as usize];
        let atm = e.atm;
        let Some(l) = e.lane.as_mut() else { return };
        match r.opcode {
            Opcode::ConfigureResponse if r.status == Status::Success => {
                l.les = Some(r.target_atm);
                l.phase = LecPhase::Join;
                let c = self.lane_call(now, ep, r.target_atm, sel::LEC, VcRole::ControlDirect, out);
                self.endpoints[ep as usize].lane.as_mut().unwrap().control_vc = Some(c);
            }
            Opcode::ConfigureResponse | Opcode::JoinResponse if r.status != Status::Success => {
                let (node, port) = (e.node, e.port);
                out.drops.push((
                    node,
                    Some(port),
                    format!("LANE {} refused: status {:?}", opcode_name(r.opcode), r.status),
                    None,
                ));
            }
            Opcode::JoinResponse => {
                l.lecid = r.requester_lecid;
                l.phase = LecPhase::BusConnect;
                // §5.1.6: LE_ARP for the all-ones broadcast MAC finds the BUS.
                let mut q = ControlRepr::arp_request(0, l.lecid, l.mac, atm, Mac::BROADCAST);
                q.transaction_id = l.transaction();
                let c = l.control_vc.unwrap_or(v);
                self.send_control(now, ep, c, &q, out);
            }
            Opcode::ArpResponse => self.lec_arp_response(now, ep, r, out),
            // Flooded by the BUS to every client: the target answers on its
            // control-direct VCC (the LES relays it to the requester).
            Opcode::FlushRequest if r.target_atm == atm => {
                let a = ControlRepr { opcode: Opcode::FlushResponse, status: Status::Success, ..r };
                let c = l.control_vc.unwrap_or(v);
                self.send_control(now, ep, c, &a, out);
            }
            Opcode::FlushResponse => {
                let Some((&m, _)) = l.flushing.iter().find(|(_, (t, _))| *t == r.transaction_id) else { return };
                l.flushing.remove(&m);
                l.flooded.remove(&m);
                self.stats.lane.flush_responses += 1;
                let dv = l.le_arp.get(&m).and_then(|a| l.direct.get(a)).copied();
                if let Some(dv) = dv.filter(|&dv| e.vcs[dv].state == VcState::Active) {
                    self.release_pending(now, ep, m, dv, out);
                }
            }
            Opcode::ArpRequest => {
                // Forwarded by the LES to a proxy (§7.1.5.1): answer for MACs behind us.
                let Some(target) = mac_of(r.target) else { return };
                if l.proxy && l.local_macs.contains(&target) {
                    let a = ControlRepr {
                        opcode: Opcode::ArpResponse,
                        status: Status::Success,
                        flags: flags::REMOTE_ADDRESS,
                        target_atm: atm,
                        ..r
                    };
                    self.send_control(now, ep, v, &a, out);
                }
            }
            _ => {}
        }
    }

    /// LE_ARP_RESPONSE at a client: the BUS's ATM address (§5.1.6), or a MAC's, which
    /// gets a data-direct VCC, called now unless one is up or being called (§7.1.5).
    fn lec_arp_response(&mut self, now: u64, ep: u32, r: ControlRepr<'static>, out: &mut AtmOut) {
        let e = &mut self.endpoints[ep as usize];
        let Some(l) = e.lane.as_mut() else { return };
        let Some(target) = mac_of(r.target) else { return };
        if target.is_broadcast() {
            if l.phase == LecPhase::BusConnect && l.bus.is_none() {
                l.bus = Some(r.target_atm);
                self.lane_call(now, ep, r.target_atm, sel::LEC, VcRole::MulticastSend, out);
            }
            return;
        }
        l.resolving.remove(&target);
        l.le_arp.insert(target, r.target_atm);
        l.verified.insert(target, now);
        if let Some(&dv) = l.direct.get(&r.target_atm) {
            if e.vcs[dv].state == VcState::Active {
                self.switch_to_direct(now, ep, target, dv, r.target_atm, out);
            }
            return;
        }
        let calling = e.vcs.iter().any(|vc| vc.role == Some(VcRole::DataDirect) && vc.peer_atm == Some(r.target_atm));
        if !calling {
            self.lane_call(now, ep, r.target_atm, sel::LEC, VcRole::DataDirect, out);
        }
    }

    /// A data frame on a client's multicast-forward or data-direct VCC.
    pub(in crate::atm::net) fn lec_data(
        &mut self,
        _now: u64,
        ep: u32,
        role: VcRole,
        bytes: Vec<u8>,
        start: usize,
        out: &mut AtmOut,
    ) {
        let e = &mut self.endpoints[ep as usize];
        let (node, port) = (e.node, e.port);
        let Some(l) = e.lane.as_mut() else { return };
        let Ok((repr, frame)) = wire::lane::decapsulate(&bytes[start..]) else { return };
        // §7.1.14: a client drops its own frames echoed by the BUS.
        if role == VcRole::MulticastForward && repr.lecid == l.lecid {
            return;
        }
        if frame.len() < ethernet::HEADER_LEN {
            return;
        }
        let dst = Mac::from_bytes(&frame[0..6]);
        // A non-proxy client takes only frames for its MAC or group addresses.
        if !l.proxy && dst != l.mac && !dst.is_multicast() {
            return;
        }
        if let (Some(m), Some(ip)) = (l.mpc.as_mut(), ipv4_dst(frame)) {
            let src = Mac::from_bytes(&frame[6..12]);
            if m.mps_mac == Some(src) {
                m.dll.insert(ip, (dst, src));
            }
        }
        let f = frame.to_vec();
        out.deliver.push((node, port, f));
    }
}
