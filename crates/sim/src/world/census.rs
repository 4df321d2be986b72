//! Conservation in the world (see `crate::conservation`): the flows' drops as they
//! happen, and at the end of a run the census of what is still in the network, the
//! identities of every flow and link, and (debug builds) their check.

use super::*;
use crate::conservation::{self, FlowConservation, Found, LinkConservation, SeqSet};

/// What the end-of-run census found in the network.
#[derive(Default)]
pub(super) struct Census {
    /// UDP-family flows by id: the datagrams found.
    pub probes: BTreeMap<u32, SeqSet>,
    /// TCP flows by index in `World::tcp`: the segments found.
    pub segments: Vec<u64>,
}

/// The TCP flow (index in `tcp`) a segment `src:src_port → dst:dst_port` belongs to,
/// either way.
fn tcp_flow_of(tcp: &[TcpFlow], found: Found) -> Option<usize> {
    let Found::Tcp { src, src_port, dst, dst_port } = found else { return None };
    tcp.iter().position(|f| {
        (0..2).any(|side| {
            f.addrs[side] == src
                && f.ports[side] == src_port
                && f.addrs[1 - side] == dst
                && f.ports[1 - side] == dst_port
        })
    })
}

/// An ESP packet as what it carries (asked of the stacks whose SAs seal); any other
/// packet as itself.
fn resolve(nodes: &[Node], found: Found) -> Option<Found> {
    match found {
        Found::Esp { spi, seq } => nodes.iter().find_map(|n| n.ip.sealed_packet(spi, seq)),
        other => Some(other),
    }
}

impl World {
    /// `carried` was dropped for `reason`: charge every flow packet in it.
    pub(super) fn ledger_drop(&mut self, reason: &str, carried: &[u8]) {
        let (stats, tcp, ledger, nodes) = (&self.stats, &self.tcp, &mut self.ledger, &self.nodes);
        conservation::scan(carried, |found| match resolve(nodes, found) {
            None => false,
            Some(found @ Found::Esp { .. }) => unreachable!("resolved {found:?}"),
            Some(Found::Probe { flow, seq }) => {
                let ours = stats.get(&flow).is_some_and(|s| u64::from(seq) < s.sent);
                if ours {
                    ledger.entry(flow).or_default().drop_datagram(seq, reason);
                }
                ours
            }
            Some(found @ Found::Tcp { .. }) => {
                let flow = tcp_flow_of(tcp, found);
                if let Some(i) = flow {
                    ledger.entry(tcp[i].id).or_default().drop_segment(reason);
                }
                flow.is_some()
            }
        });
    }

    /// Charges the flows what was dropped without a record: OpenVPN's incomplete
    /// fragmented packets discarded after FRAG_TTL_SEC.
    pub(super) fn ledger_silent_drops(&mut self) {
        let mut abandoned = Vec::new();
        for n in &mut self.nodes {
            for end in n.tunnels.ends_mut() {
                abandoned.append(&mut end.take_abandoned());
            }
        }
        for (reason, packet) in abandoned {
            self.ledger_drop(reason, &packet);
        }
        let given_up: Vec<Vec<u8>> =
            self.adaptive_routers.iter_mut().flat_map(|u| std::mem::take(&mut u.abandoned)).collect();
        for packet in given_up {
            self.ledger_drop("link ARQ gave up after its last attempt", &packet);
        }
    }

    /// Every frame, datagram and job still held anywhere at the end of the run, scanned
    /// for the flows' packets.
    pub(super) fn census(&self) -> Census {
        let mut census = Census { probes: BTreeMap::new(), segments: vec![0; self.tcp.len()] };
        let (stats, tcp, nodes) = (&self.stats, &self.tcp, &self.nodes);
        let mut note = |bytes: &[u8]| {
            conservation::scan(bytes, |found| match resolve(nodes, found) {
                None => false,
                Some(found @ Found::Esp { .. }) => unreachable!("resolved {found:?}"),
                Some(Found::Probe { flow, seq }) => {
                    let ours = stats.get(&flow).is_some_and(|s| u64::from(seq) < s.sent);
                    if ours {
                        census.probes.entry(flow).or_default().insert(seq);
                    }
                    ours
                }
                Some(found @ Found::Tcp { .. }) => {
                    let flow = tcp_flow_of(tcp, found);
                    if let Some(i) = flow {
                        census.segments[i] += 1;
                    }
                    flow.is_some()
                }
            })
        };
        self.held_on_links(&mut note);
        self.held_in_nodes(&mut note);
        census
    }

    /// What every link holds (lines: queued and in flight; 802.11 media: queued, read
    /// as their receivers would), each handed to `note`.
    fn held_on_links(&self, note: &mut dyn FnMut(&[u8])) {
        self.links.iter().for_each(|l| l.line.held(&mut *note));
        self.bsses.iter().for_each(|b| b.cell.held(&mut *note));
    }

    /// The packets held in the nodes (tunnels' fragments, adaptive routers, CPU jobs, IP
    /// stacks, L3F bridges, the ATM network, tunnels' TCP streams), each handed to `note`.
    fn held_in_nodes(&self, note: &mut dyn FnMut(&[u8])) {
        for n in &self.nodes {
            for end in n.tunnels.ends() {
                end.held_packets(&mut *note);
            }
        }
        for u in &self.adaptive_routers {
            u.held_packets(&mut *note);
        }
        let effects = |fx: &Effects, note: &mut dyn FnMut(&[u8])| {
            fx.send.iter().for_each(|(_, frame)| note(frame));
            fx.local.iter().for_each(|(packet, at)| note(&packet[*at..]));
            fx.drops.iter().filter_map(|(_, _, packet)| packet.as_deref()).for_each(&mut *note);
        };
        for n in &self.nodes {
            for job in n.cpu.queued() {
                match job {
                    Job::Receive { frame, .. } => note(frame),
                    Job::Send(fx) => effects(fx, &mut *note),
                }
            }
            if let Some(fx) = &n.in_service {
                effects(fx, &mut *note);
            }
            n.ip.held_packets(&mut *note);
            n.l3f_held_packets(&mut *note);
        }
        if let Some(atm) = &self.atm {
            atm.held(&mut *note);
        }
        let streams: Vec<&crate::tunnel::openvpn_tcp::StreamTransport> =
            self.nodes.iter().flat_map(|n| n.tunnels.ends().filter_map(|e| e.stream())).collect();
        for s in &streams {
            let peer = streams.iter().find(|p| s.is_peer(p)).copied();
            s.held_toward(peer, &mut *note);
        }
    }

    /// The conservation identity of every flow, in the order of `config.flows`.
    pub(super) fn flow_conservation(&self, census: &Census) -> Vec<FlowConservation> {
        let none = conservation::FlowLedger::default();
        self.config
            .flows
            .iter()
            .map(|flow| {
                let id = flow.id();
                let ledger = self.ledger.get(&id).unwrap_or(&none);
                if let Some(i) = self.tcp.iter().position(|f| f.id == id) {
                    let f = &self.tcp[i];
                    return FlowConservation {
                        unit: "segments",
                        sent: f.segments_sent,
                        received: f.segments_arrived,
                        dropped: ledger.segment_drops.values().sum(),
                        in_network: census.segments[i],
                        drops: ledger.segment_drops.clone(),
                    };
                }
                let stats = &self.stats[&id];
                let found = census.probes.get(&id);
                let mut c = FlowConservation {
                    unit: "datagrams",
                    sent: stats.sent,
                    received: 0,
                    dropped: 0,
                    in_network: 0,
                    drops: BTreeMap::new(),
                };
                let mut by_reason = vec![0u64; ledger.reasons().len()];
                for seq in 0..stats.sent.min(u64::from(u32::MAX)) as u32 {
                    if stats.has_received(seq) {
                        c.received += 1;
                    } else if let Some(reason) = ledger.drop_of(seq) {
                        c.dropped += 1;
                        by_reason[reason] += 1;
                    } else if found.is_some_and(|s| s.contains(seq)) {
                        c.in_network += 1;
                    }
                }
                for (reason, n) in ledger.reasons().iter().zip(by_reason) {
                    if n > 0 {
                        *c.drops.entry(reason.clone()).or_insert(0) += n;
                    }
                }
                c
            })
            .collect()
    }

    /// The conservation identity of each point-to-point line, per direction.
    pub(super) fn line_conservation(&self) -> Vec<Vec<LinkConservation>> {
        self.links.iter().map(|l| l.line.conservation()).collect()
    }

    /// The conservation identity of each 802.11 BSS, per member's transmitter (AP first).
    pub(super) fn wifi_conservation(&self) -> Vec<Vec<LinkConservation>> {
        self.bsses.iter().map(|b| b.cell.conservation()).collect()
    }
}

/// Debug builds: every identity must hold at the end of every run; a failure names the
/// flow or link and its four numbers.
pub(super) fn check(results: &Results) {
    if !cfg!(debug_assertions) {
        return;
    }
    for f in &results.flows {
        if let Some(c) = &f.conservation {
            assert!(
                c.holds(),
                "conservation of flow {} ({}): sent {} != received {} + dropped {} + in network {} ({})",
                f.id,
                c.unit,
                c.sent,
                c.received,
                c.dropped,
                c.in_network,
                c.sent as i128 - (c.received + c.dropped + c.in_network) as i128,
            );
        }
    }
    for l in &results.links {
        for (i, c) in l.conservation.iter().enumerate() {
            assert!(
                c.holds(),
                "conservation of link {} ({} #{i}): frames in {} != out {} + dropped {} + queued {}",
                l.name,
                l.kind,
                c.frames_in,
                c.frames_out,
                c.dropped,
                c.queued,
            );
        }
    }
}
