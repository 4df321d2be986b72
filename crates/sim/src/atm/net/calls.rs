//! UNI signalling (Q.2931 over SAAL): calls placed and answered by hosts, and routed
//! and connected by switches; frames on VCs that end at a switch.

use super::*;

impl AtmNet {
    // ------------------------------------------------------------------ signalling

    pub(super) fn queue_signal(&mut self, at: u64, target: SigAt, msg: Message, out: &mut AtmOut) {
        let id = match self.free_signals.pop() {
            Some(i) => {
                self.signals[i as usize] = Some((target, msg));
                i
            }
            None => {
                self.signals.push(Some((target, msg)));
                (self.signals.len() - 1) as u32
            }
        };
        out.schedule.push((at, AtmEvent::Signal(id)));
    }

    pub(super) fn signalling_frame(msg: &Message, seq: u32) -> Vec<u8> {
        let mut pdu = Vec::new();
        signalling::sscop_sd(&msg.encode(), seq, &mut pdu);
        pdu
    }

    pub(super) fn host_send_signal(&mut self, now: u64, ep: u32, msg: &Message, out: &mut AtmOut) {
        let e = &mut self.endpoints[ep as usize];
        e.sscop_seq += 1;
        let bytes = Self::signalling_frame(msg, e.sscop_seq);
        self.nic_send(now, ep, 0, bytes, 0, out);
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn switch_send(
        &mut self,
        now: u64,
        sw: u32,
        port: u16,
        vpi: u16,
        vci: u16,
        bytes: Vec<u8>,
        out: &mut AtmOut,
    ) {
        let (link, dir) = self.switches[sw as usize].ports[port as usize];
        if self.capture {
            let node = self.switches[sw as usize].node;
            out.captured.push((node, port, now, erf_aal5(vpi, vci, &bytes)));
        }
        let frame = self.new_frame(bytes, 0);
        self.stats.frames_sent += 1;
        self.send_cells(now, frame, link, dir, vpi, vci, None, out);
    }

    pub(super) fn switch_send_signal(&mut self, now: u64, sw: u32, port: u16, msg: &Message, out: &mut AtmOut) {
        let s = &mut self.switches[sw as usize];
        s.sscop_seq += 1;
        let bytes = Self::signalling_frame(msg, s.sscop_seq);
        self.switch_send(now, sw, port, 0, 5, bytes, out);
    }

    /// Calls `called` from `ep` (UBR); returns the new VC's index.
    pub(super) fn place_call(&mut self, now: u64, ep: u32, called: AtmAddress, out: &mut AtmOut) -> usize {
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
            role: None,
            sel: 0,
        });
        e.calls.insert(call_ref, v);
        let msg = Message {
            kind: MessageType::Setup,
            call_ref,
            from_destination: false,
            called: Some(called),
            calling: Some(e.atm),
            connection: None,
            pcr_cells: None,
        };
        self.host_send_signal(now, ep, &msg, out);
        v
    }

    pub(super) fn host_signal(&mut self, now: u64, ep: u32, msg: Message, out: &mut AtmOut) {
        match msg.kind {
            MessageType::Setup => self.host_setup(now, ep, msg, out),
            MessageType::ConnectAck => self.host_connect_ack(now, ep, msg, out),
            MessageType::Connect => self.host_connect(now, ep, msg, out),
            MessageType::Release => self.host_release(now, ep, msg, out),
            MessageType::CallProceeding => {}
        }
    }

    /// SETUP at a host (Q.2931 §5.2.5): the call is accepted at once with CONNECT.
    fn host_setup(&mut self, now: u64, ep: u32, msg: Message, out: &mut AtmOut) {
        let Some((vpi, vci)) = msg.connection else { return };
        let e = &mut self.endpoints[ep as usize];
        let v = e.vcs.len();
        e.vcs.push(Vc {
            vpi,
            vci,
            state: VcState::Called,
            peer_atm: msg.calling,
            pcr_bps: None,
            tat: 0,
            reasm: Reasm::default(),
            role: None,
            sel: 0,
        });
        e.by_num.insert((vpi, vci), v);
        e.calls.insert(msg.call_ref | 0x80_0000, v);
        if e.lane.is_some() || e.servers.is_some() {
            let local = msg.called.map_or(0, |a| a.0[19]);
            let peer = msg.calling.map_or(0, |a| a.0[19]);
            e.vcs[v].role = crate::atm::lane::callee_role(local, peer);
            e.vcs[v].sel = local;
        }
        let reply = Message {
            kind: MessageType::Connect,
            from_destination: true,
            connection: Some((vpi, vci)),
            called: None,
            calling: None,
            pcr_cells: None,
            ..msg
        };
        self.host_send_signal(now, ep, &reply, out);
    }

    /// CONNECT ACKNOWLEDGE at the called host: the VC is up; a CLIP VC learns its far end by InATMARP (RFC 2225 §8.3/§8.4).
    fn host_connect_ack(&mut self, now: u64, ep: u32, msg: Message, out: &mut AtmOut) {
        let e = &mut self.endpoints[ep as usize];
        let Some(&v) = e.calls.get(&(msg.call_ref | 0x80_0000)) else { return };
        e.vcs[v].state = VcState::Active;
        if e.vcs[v].role.is_some() {
            self.lane_vc_up(now, ep, v, false, out);
            return;
        }
        // RFC 2225 §8.3/§8.4: learn the caller's IP address with InATMARP.
        let repr = atmarp::Repr {
            operation: Operation::InRequest,
            source_atm: Some(e.atm),
            source_ip: e.ip.map(|a| a.0),
            target_atm: e.vcs[v].peer_atm,
            target_ip: None,
        };
        self.stats.inatmarp_requests += 1;
        self.send_atmarp(now, ep, v, &repr, out);
    }

    /// CONNECT at the calling host: the VC is up, acknowledged, and what waited for it is sent.
    fn host_connect(&mut self, now: u64, ep: u32, msg: Message, out: &mut AtmOut) {
        let e = &mut self.endpoints[ep as usize];
        let Some(&v) = e.calls.get(&msg.call_ref) else { return };
        let Some((vpi, vci)) = msg.connection else { return };
        if let VcState::Calling(since) = e.vcs[v].state {
            self.stats.svc_setups += 1;
            self.stats.svc_setup_ns.push(now - since);
        }
        let vc = &mut e.vcs[v];
        (vc.vpi, vc.vci, vc.state) = (vpi, vci, VcState::Active);
        e.by_num.insert((vpi, vci), v);
        let peer = vc.peer_atm;
        let ack = Message { kind: MessageType::ConnectAck, from_destination: false, connection: None, ..msg };
        self.host_send_signal(now, ep, &ack, out);
        let e = &mut self.endpoints[ep as usize];
        if e.vcs[v].role.is_some() {
            self.lane_vc_up(now, ep, v, true, out);
            return;
        }
        if e.clip.server_vc == Some(v) {
            for target in std::mem::take(&mut e.clip.queued_requests) {
                self.atmarp_request(now, ep, target, out);
            }
        } else {
            let ips: Vec<Ipv4Addr> =
                e.clip.atm_of.iter().filter(|(_, a)| Some(**a) == peer).map(|(ip, _)| *ip).collect();
            for ip in ips {
                self.endpoints[ep as usize].clip.vc_of.insert(ip, v);
                self.flush(now, ep, ip, out);
            }
        }
    }

    /// RELEASE at a host: the call was refused; the packets waiting for it are dropped.
    fn host_release(&mut self, now: u64, ep: u32, msg: Message, out: &mut AtmOut) {
        let e = &mut self.endpoints[ep as usize];
        if let Some(v) = e.calls.remove(&msg.call_ref) {
            if e.vcs[v].role.is_some() {
                self.lane_vc_refused(now, ep, v, out);
                return;
            }
            let peer = e.vcs[v].peer_atm;
            let ips: Vec<Ipv4Addr> =
                e.clip.atm_of.iter().filter(|(_, a)| Some(**a) == peer).map(|(ip, _)| *ip).collect();
            for ip in ips {
                for frame in e.clip.pending.remove(&ip).unwrap_or_default() {
                    out.drops.push((
                        e.node,
                        Some(e.port),
                        format!("SVC to {ip} refused: no route to its ATM address"),
                        frame.get(14..).map(<[u8]>::to_vec),
                    ));
                }
            }
        }
    }

    pub(super) fn allocate_vci(&self, sw: u32, port: u16) -> u16 {
        let table = &self.switches[sw as usize].table[port as usize];
        // On a link between two switches both allocate VCIs for the calls they forward:
        // the lower-numbered switch takes even VCIs, the other odd ones, so two calls
        // crossing in opposite directions never get the same VCI.
        let (link, end) = self.switches[sw as usize].ports[port as usize];
        let parity = match self.links[link as usize].ends[1 - end as usize] {
            Attach::Switch(other, _) => Some(u16::from(sw > other)),
            Attach::Host(_) => None,
        };
        (wire::atm::vci::FIRST_USER..=u16::MAX)
            .find(|&v| !table.contains_key(&(0, v)) && parity.is_none_or(|p| v % 2 == p))
            .expect("a free VCI")
    }

    /// The port of switch `sw` that leads to `called`.
    pub(super) fn route_to(&self, sw: u32, called: &AtmAddress) -> Option<u16> {
        let s = &self.switches[sw as usize];
        if prefix(called) == prefix(&s.atm) {
            return s.ports.iter().position(|&(link, end)| {
                link != u32::MAX && matches!(self.links[link as usize].ends[1 - end as usize], Attach::Host(ep) if self.endpoints[ep as usize].atm.0[..19] == called.0[..19])
            }).map(|p| p as u16);
        }
        let target = u32::from_be_bytes([called.0[9], called.0[10], called.0[11], called.0[12]]).checked_sub(1)?;
        s.toward.get(&target).copied()
    }

    pub(super) fn switch_signal(&mut self, now: u64, sw: u32, port: u16, msg: Message, out: &mut AtmOut) {
        match msg.kind {
            MessageType::Setup => self.switch_setup(now, sw, port, msg, out),
            MessageType::Connect => self.switch_connect(now, sw, port, msg, out),
            MessageType::Release => self.switch_release(now, sw, port, msg, out),
            MessageType::ConnectAck | MessageType::CallProceeding => {}
        }
    }

    /// SETUP at a switch: answered when it calls the switch itself, else routed on, with the incoming and outgoing VCIs reserved.
    fn switch_setup(&mut self, now: u64, sw: u32, port: u16, msg: Message, out: &mut AtmOut) {
        let Some(called) = msg.called else { return };
        let in_vci = match msg.connection {
            Some((_, vci)) => vci,
            None => self.allocate_vci(sw, port),
        };
        if called == self.switches[sw as usize].atm {
            self.switches[sw as usize].table[port as usize].insert(
                (0, in_vci),
                Route {
                    out_port: port,
                    vpi: 0,
                    vci: in_vci,
                    local: true,
                    discard: 0,
                    reasm: Reasm::default(),
                    class: UBR_QUEUE,
                },
            );
            let reply = Message {
                kind: MessageType::Connect,
                from_destination: true,
                connection: Some((0, in_vci)),
                called: None,
                calling: None,
                ..msg
            };
            self.switch_send_signal(now, sw, port, &reply, out);
            return;
        }
        let Some(out_port) = self.route_to(sw, &called) else {
            let node = self.switches[sw as usize].node;
            out.drops.push((node, Some(port), format!("SETUP for ATM address {called}: no route"), None));
            let release = Message {
                kind: MessageType::Release,
                from_destination: true,
                connection: None,
                called: None,
                calling: None,
                ..msg
            };
            self.switch_send_signal(now, sw, port, &release, out);
            return;
        };
        // Reserve the incoming VCI now (as a dead entry) so two calls never share it.
        self.switches[sw as usize].table[port as usize].insert(
            (0, in_vci),
            Route {
                out_port: port,
                vpi: 0,
                vci: in_vci,
                local: true,
                discard: 0,
                reasm: Reasm::default(),
                class: UBR_QUEUE,
            },
        );
        let out_vci = self.allocate_vci(sw, out_port);
        self.switches[sw as usize].table[out_port as usize].insert(
            (0, out_vci),
            Route {
                out_port,
                vpi: 0,
                vci: out_vci,
                local: true,
                discard: 0,
                reasm: Reasm::default(),
                class: UBR_QUEUE,
            },
        );
        let s = &mut self.switches[sw as usize];
        let out_ref = s.next_ref;
        s.next_ref += 1;
        s.calls.insert((out_port, out_ref), Call { in_port: port, in_ref: msg.call_ref, in_vci, out_vci });
        let forward = Message { call_ref: out_ref, from_destination: false, connection: Some((0, out_vci)), ..msg };
        self.switch_send_signal(now, sw, out_port, &forward, out);
    }

    /// CONNECT at a switch: the two legs are cross-connected, the callee acknowledged and the caller told.
    fn switch_connect(&mut self, now: u64, sw: u32, port: u16, msg: Message, out: &mut AtmOut) {
        let Some(call) = self.switches[sw as usize].calls.remove(&(port, msg.call_ref)) else { return };
        let s = &mut self.switches[sw as usize];
        s.table[call.in_port as usize].insert(
            (0, call.in_vci),
            Route {
                out_port: port,
                vpi: 0,
                vci: call.out_vci,
                local: false,
                discard: 0,
                reasm: Reasm::default(),
                class: UBR_QUEUE,
            },
        );
        s.table[port as usize].insert(
            (0, call.out_vci),
            Route {
                out_port: call.in_port,
                vpi: 0,
                vci: call.in_vci,
                local: false,
                discard: 0,
                reasm: Reasm::default(),
                class: UBR_QUEUE,
            },
        );
        // SVCs are UBR (place_call signals no traffic descriptor).
        s.portq[port as usize].classes |= 1 << UBR_QUEUE;
        s.portq[call.in_port as usize].classes |= 1 << UBR_QUEUE;
        let ack = Message {
            kind: MessageType::ConnectAck,
            from_destination: false,
            connection: None,
            called: None,
            calling: None,
            ..msg
        };
        self.switch_send_signal(now, sw, port, &ack, out);
        let connect =
            Message { call_ref: call.in_ref, from_destination: true, connection: Some((0, call.in_vci)), ..msg };
        self.switch_send_signal(now, sw, call.in_port, &connect, out);
    }

    /// RELEASE at a switch: the call is torn down and the release passed back to the caller.
    fn switch_release(&mut self, now: u64, sw: u32, port: u16, msg: Message, out: &mut AtmOut) {
        if let Some(call) = self.switches[sw as usize].calls.remove(&(port, msg.call_ref)) {
            let s = &mut self.switches[sw as usize];
            s.table[call.in_port as usize].remove(&(0, call.in_vci));
            s.table[port as usize].remove(&(0, call.out_vci));
            let release = Message { call_ref: call.in_ref, from_destination: true, ..msg };
            self.switch_send_signal(now, sw, call.in_port, &release, out);
        }
    }

    /// A whole frame on a VC that ends at switch `sw` (signalling, the ATMARP server).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn switch_local_frame(
        &mut self,
        now: u64,
        sw: u32,
        port: u16,
        vpi: u16,
        vci: u16,
        sdu: Vec<u8>,
        out: &mut AtmOut,
    ) {
        if (vpi, vci) == SIGNALLING_VC {
            if let Ok(msg) = signalling::sscop_payload(&sdu).and_then(Message::decode) {
                let delay = self.switches[sw as usize].signalling_ns;
                self.queue_signal(now + delay, SigAt::Switch(sw, port), msg, out);
            }
            return;
        }
        let Ok((rfc2684::Repr::LlcSnapRouted { ethertype: EtherType::Arp }, payload)) =
            rfc2684::decapsulate(Encapsulation::LlcSnapRouted, &sdu)
        else {
            return;
        };
        let Ok(arp) = atmarp::Packet::new_checked(payload).and_then(|p| atmarp::Repr::parse(&p)) else { return };
        let Some(table) = self.switches[sw as usize].server.as_mut() else { return };
        if let Some(answer) = clip::server_answer(table, &arp) {
            let mut bytes = Vec::new();
            rfc2684::Repr::LlcSnapRouted { ethertype: EtherType::Arp }.encapsulate(&answer.to_bytes(), &mut bytes);
            self.switch_send(now, sw, port, vpi, vci, bytes, out);
        }
    }
}
