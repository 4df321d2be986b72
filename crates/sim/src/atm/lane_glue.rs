//! LANE and MPOA on the VCs of [`AtmNet`]: the client's join, LE_ARP, the BUS, data
//! direct VCCs, MPOA shortcuts. The protocol state and decisions are in
//! [`crate::atm::lane`]; this child of `net` calls, sends and receives.

use std::collections::BTreeMap;
use std::net::Ipv4Addr;

use wire::ethernet::{self, Address as Mac, EtherType};
use wire::lane::{flags, AtmAddress, ControlFrame, ControlRepr, LanDestination, LanType, MaxFrameSize, Opcode, Status};
use wire::nhrp;

use super::{AtmEvent, AtmNet, AtmOut, Reasm, Vc, VcState};
use crate::atm::lane::{self, sel, Bus, Lec, LecPhase, LesArp, Mpc, VcRole};
use crate::config::{ConfigError, NodeConfig};

/// The RFC 2684 §5.1 LLC/SNAP header of a routed IPv4 PDU (on MPOA shortcuts).
const LLC_IPV4: [u8; 8] = [0xaa, 0xaa, 0x03, 0, 0, 0, 0x08, 0x00];

fn mac_of(d: LanDestination) -> Option<Mac> {
    match d {
        LanDestination::Mac(m) => Some(m),
        _ => None,
    }
}

fn lan_mac(m: Mac) -> LanDestination {
    LanDestination::Mac(m)
}

fn opcode_name(op: Opcode) -> &'static str {
    match op {
        Opcode::ConfigureRequest => "LE_CONFIGURE_REQUEST",
        Opcode::ConfigureResponse => "LE_CONFIGURE_RESPONSE",
        Opcode::JoinRequest => "LE_JOIN_REQUEST",
        Opcode::JoinResponse => "LE_JOIN_RESPONSE",
        Opcode::ArpRequest => "LE_ARP_REQUEST",
        Opcode::ArpResponse => "LE_ARP_RESPONSE",
        Opcode::FlushRequest => "LE_FLUSH_REQUEST",
        Opcode::FlushResponse => "LE_FLUSH_RESPONSE",
        _ => "LE control",
    }
}

fn ipv4_dst(frame: &[u8]) -> Option<Ipv4Addr> {
    if frame.len() < ethernet::HEADER_LEN + 20
        || u16::from_be_bytes([frame[12], frame[13]]) != u16::from(EtherType::Ipv4)
    {
        return None;
    }
    let d = &frame[ethernet::HEADER_LEN + 16..ethernet::HEADER_LEN + 20];
    Some(Ipv4Addr::new(d[0], d[1], d[2], d[3]))
}

/// Holds `frame` for `dst` until its data-direct VCC (or flush) is ready; counts it in
/// `counter`, or drops it when the queue is full.
fn hold(l: &mut Lec, dst: Mac, frame: Vec<u8>, counter: &mut u64, node: u32, port: u16, out: &mut AtmOut) {
    let q = l.pending.entry(dst).or_default();
    if q.len() >= lane::PENDING_LIMIT {
        out.drops.push((
            node,
            Some(port),
            format!("LE client's queue for {dst} full while its data-direct VCC is set up"),
            frame.get(14..).map(<[u8]>::to_vec),
        ));
        return;
    }
    q.push_back(frame);
    *counter += 1;
}

impl AtmNet {
    /// Servers and clients from the configuration.
    pub(super) fn lane_init(&mut self, config: &lane::LaneConfig, nodes: &[NodeConfig]) -> Result<(), ConfigError> {
        let ep_at = |net: &AtmNet, r: crate::config::PortRef, field: String| -> Result<u32, ConfigError> {
            net.endpoint_of.get(&(r.node, r.port)).copied().ok_or_else(|| ConfigError {
                field,
                message: format!(
                    "port {} of node {} is not an ATM port of an end system",
                    r.port,
                    nodes.get(r.node as usize).map_or("?", |n| n.name.as_str())
                ),
            })
        };
        let mut les_atm = Vec::new();
        for (i, e) in config.elans.iter().enumerate() {
            let les = ep_at(self, e.les, format!("atm.lane.elans[{i}].les"))?;
            let bus = ep_at(self, e.bus, format!("atm.lane.elans[{i}].bus"))?;
            let bus_atm = lane::with_selector(self.endpoints[bus as usize].atm, sel::bus(i));
            let s = self.endpoints[les as usize].servers.get_or_insert_with(Box::default);
            s.les.insert(sel::les(i), lane::Les::new(e.name.clone(), bus_atm));
            let s = self.endpoints[bus as usize].servers.get_or_insert_with(Box::default);
            s.bus.insert(
                sel::bus(i),
                Bus {
                    elan: e.name.clone(),
                    leaves: BTreeMap::new(),
                    cells_per_second: e.bus_cells_per_second,
                    frames_per_second: e.bus_frames_per_second,
                    queue_frames: e.bus_queue_frames,
                    departures: Default::default(),
                },
            );
            les_atm.push(lane::with_selector(self.endpoints[les as usize].atm, sel::les(i)));
        }
        let lecs_atm = match config.lecs {
            Some(r) => {
                let ep = ep_at(self, r, "atm.lane.lecs".into())?;
                let s = self.endpoints[ep as usize].servers.get_or_insert_with(Box::default);
                s.lecs = Some(config.elans.iter().zip(&les_atm).map(|(e, a)| (e.name.clone(), *a)).collect());
                Some(lane::with_selector(self.endpoints[ep as usize].atm, sel::LECS))
            }
            None => None,
        };
        let mut mps_of_elan: BTreeMap<usize, (Mac, AtmAddress)> = BTreeMap::new();
        if let Some(m) = &config.mpoa {
            for (k, r) in m.servers.iter().enumerate() {
                let ep = ep_at(self, *r, format!("atm.lane.mpoa.servers[{k}]"))?;
                let elan = config.clients.iter().find(|c| c.port == *r).map(|c| c.elan).ok_or_else(|| ConfigError {
                    field: format!("atm.lane.mpoa.servers[{k}]"),
                    message: "an MPS runs on a router's LANE port: this port joins no ELAN".into(),
                })?;
                let e = &mut self.endpoints[ep as usize];
                e.servers.get_or_insert_with(Box::default).mps = Some(BTreeMap::new());
                mps_of_elan.insert(elan, (e.mac, lane::with_selector(e.atm, sel::MPS)));
            }
            // Every MPS knows which LE clients belong to MPSs (its NHS peers).
            let lecs: std::collections::BTreeSet<AtmAddress> = m
                .servers
                .iter()
                .filter_map(|r| self.endpoint_of.get(&(r.node, r.port)))
                .map(|&ep| self.endpoints[ep as usize].atm)
                .collect();
            for r in &m.servers {
                let ep = self.endpoint_of[&(r.node, r.port)];
                if let Some(s) = self.endpoints[ep as usize].servers.as_mut() {
                    s.nhs_lecs = lecs.clone();
                }
            }
        }
        for (k, c) in config.clients.iter().enumerate() {
            let ep = ep_at(self, c.port, format!("atm.lane.clients[{k}].port"))?;
            let elan = config.elans.get(c.elan).ok_or_else(|| ConfigError {
                field: format!("atm.lane.clients[{k}].elan"),
                message: format!("no ELAN {}", c.elan),
            })?;
            let e = &mut self.endpoints[ep as usize];
            let mut l = Lec::new(elan.name.clone(), c.proxy, e.mac);
            l.lecs = lecs_atm;
            l.flush = config.flush;
            l.aging_ns = config.aging_time_ns;
            if lecs_atm.is_none() {
                l.les = Some(les_atm[c.elan]);
            }
            let is_mps = e.servers.as_ref().is_some_and(|s| s.mps.is_some());
            if let (Some(m), Some(&(mac, atm)), false) = (&config.mpoa, mps_of_elan.get(&c.elan), is_mps) {
                let mut mpc = Mpc::new(m.shortcut_frames, m.shortcut_time_ns);
                // MPS discovery (af-mpoa-0087.000 §4.1, device-type TLVs in LE_ARP
                // responses) is replaced by configuration.
                mpc.mps_mac = Some(mac);
                mpc.mps_atm = Some(atm);
                l.mpc = Some(mpc);
            }
            e.lane = Some(Box::new(l));
        }
        Ok(())
    }

    /// Whether endpoint `ep` is an LE client (its node sends Ethernet frames to it).
    pub fn is_lec(&self, ep: u32) -> bool {
        self.endpoints[ep as usize].lane.is_some()
    }

    /// Calls `called` from `ep` for a LANE/MPOA VC of `role`; the calling address
    /// carries selector `local`.
    fn lane_call(&mut self, now: u64, ep: u32, called: AtmAddress, local: u8, role: VcRole, out: &mut AtmOut) -> usize {
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
        let msg = super::Message {
            kind: super::MessageType::Setup,
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

    pub(super) fn lane_start(&mut self, now: u64, out: &mut AtmOut) {
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

    fn send_control(&mut self, now: u64, ep: u32, v: usize, repr: &ControlRepr<'_>, out: &mut AtmOut) {
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

    fn elan_repr(op: Opcode, lec: &Lec, atm: AtmAddress) -> ControlRepr<'static> {
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
    pub(super) fn lane_vc_up(&mut self, now: u64, ep: u32, v: usize, caller: bool, out: &mut AtmOut) {
        let e = &mut self.endpoints[ep as usize];
        let (role, peer, atm, node, local) = (e.vcs[v].role, e.vcs[v].peer_atm, e.atm, e.node, e.vcs[v].sel);
        let Some(role) = role else { return };
        match (role, caller) {
            (VcRole::ConfigureDirect, true) => {
                let Some(l) = e.lane.as_mut() else { return };
                l.phase = LecPhase::Configuration;
                let mut r = Self::elan_repr(Opcode::ConfigureRequest, l, atm);
                r.transaction_id = l.transaction();
                r.source = lan_mac(l.mac);
                self.send_control(now, ep, v, &r, out);
            }
            (VcRole::ControlDirect, true) => {
                let Some(l) = e.lane.as_mut() else { return };
                l.phase = LecPhase::Join;
                let mut r = Self::elan_repr(Opcode::JoinRequest, l, atm);
                r.transaction_id = l.transaction();
                if l.proxy {
                    r.flags = flags::PROXY;
                } else {
                    r.source = lan_mac(l.mac);
                }
                self.send_control(now, ep, v, &r, out);
            }
            (VcRole::MulticastSend, true) | (VcRole::MulticastForward, false) => {
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

    /// A LANE call was released (refused) before it connected.
    pub(super) fn lane_vc_refused(&mut self, _now: u64, ep: u32, v: usize, out: &mut AtmOut) {
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
    fn send_data(&mut self, now: u64, ep: u32, v: usize, frame: Vec<u8>, out: &mut AtmOut) {
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
        let (node, port, atm) = (e.node, e.port, e.atm);
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
    fn switch_to_direct(&mut self, now: u64, ep: u32, mac: Mac, v: usize, peer: AtmAddress, out: &mut AtmOut) {
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
    fn release_pending(&mut self, now: u64, ep: u32, mac: Mac, v: usize, out: &mut AtmOut) {
        let frames: Vec<Vec<u8>> =
            self.endpoints[ep as usize].lane.as_mut().unwrap().pending.remove(&mac).unwrap_or_default().into();
        for f in frames {
            self.stats.lane.direct_frames += 1;
            self.send_data(now, ep, v, f, out);
        }
    }

    /// A whole SDU on a LANE/MPOA VC `v` of `ep`.
    pub(super) fn lane_frame(&mut self, now: u64, ep: u32, v: usize, bytes: Vec<u8>, start: usize, out: &mut AtmOut) {
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

    fn lec_control(&mut self, now: u64, ep: u32, v: usize, r: ControlRepr<'static>, out: &mut AtmOut) {
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
            Opcode::ArpResponse => {
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
                let calling =
                    e.vcs.iter().any(|vc| vc.role == Some(VcRole::DataDirect) && vc.peer_atm == Some(r.target_atm));
                if !calling {
                    self.lane_call(now, ep, r.target_atm, sel::LEC, VcRole::DataDirect, out);
                }
            }
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

    fn server_control(&mut self, now: u64, ep: u32, v: usize, r: ControlRepr<'static>, out: &mut AtmOut) {
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
            Opcode::ArpRequest => {
                let Some(les) = s.les.get_mut(&local) else { return };
                let Some(target) = mac_of(r.target) else { return };
                match les.arp(target, r.requester_lecid) {
                    LesArp::Answer(a) => {
                        let reply =
                            ControlRepr { opcode: Opcode::ArpResponse, status: Status::Success, target_atm: a, ..r };
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

    /// A data frame reaches the BUS: admitted within its capacity, forwarded later.
    fn bus_in(&mut self, now: u64, ep: u32, v: usize, bytes: Vec<u8>, start: usize, out: &mut AtmOut) {
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
    pub(super) fn bus_depart(&mut self, now: u64, id: u32, out: &mut AtmOut) {
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

    /// A data frame on a client's multicast-forward or data-direct VCC.
    fn lec_data(&mut self, _now: u64, ep: u32, role: VcRole, bytes: Vec<u8>, start: usize, out: &mut AtmOut) {
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

    /// An IP packet on an MPOA shortcut (egress MPC): the DLL header the router used.
    fn shortcut_in(&mut self, _now: u64, ep: u32, mut bytes: Vec<u8>, start: usize, out: &mut AtmOut) {
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
    fn mpoa_request(&mut self, now: u64, ep: u32, dst: Ipv4Addr, out: &mut AtmOut) {
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

    fn send_nhrp(&mut self, now: u64, ep: u32, v: usize, p: &nhrp::Repr, out: &mut AtmOut) {
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
    fn mps_lookup(&self, node: u32, dst: Ipv4Addr) -> Option<(u32, AtmAddress)> {
        (0..self.endpoints.len() as u32).filter(|&x| self.endpoints[x as usize].node == node).find_map(|x| {
            let e = &self.endpoints[x as usize];
            let mac = e.servers.as_ref()?.mps.as_ref()?.get(&dst)?;
            Some((x, *e.lane.as_ref()?.le_arp.get(mac)?))
        })
    }

    fn mpoa_packet(&mut self, now: u64, ep: u32, v: usize, p: nhrp::Repr, out: &mut AtmOut) {
        match p.operation {
            nhrp::Operation::MpoaResolutionRequest | nhrp::Operation::ResolutionRequest => {
                let node = self.endpoints[ep as usize].node;
                let found = self.mps_lookup(node, p.destination_ip);
                let is_mpoa = p.operation == nhrp::Operation::MpoaResolutionRequest;
                let reply_op =
                    if is_mpoa { nhrp::Operation::MpoaResolutionReply } else { nhrp::Operation::ResolutionReply };
                // RFC 2332 §5.2.1: an NHS that does not serve the destination forwards
                // the request to the next NHS on the routed path, which here is the MPS
                // of the router the packets go to next (af-mpoa-0087.000: the ingress
                // MPS makes an NHRP Resolution Request of the MPOA one). Hop count
                // bounds the path.
                let next_nhs = found.filter(|(x, a)| {
                    self.endpoints[*x as usize].servers.as_ref().is_some_and(|s| s.nhs_lecs.contains(a))
                });
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
