//! How the world drives the ATM network: building it, its events, IP packets into and
//! out of its host ports, and what it reports. A child module of `world`, so that the
//! shared file only dispatches here.

use std::net::Ipv4Addr;

use wire::ethernet;

use super::{Attachment, Event, RunError, World};
use crate::atm::{AtmEvent, AtmNet};
use crate::config::{ConfigError, LinkConfig, SimConfig};
use crate::link::{Link, LinkEvent};
use crate::node::{Node, PortUse};
use crate::time::SimTime;
use qoslab_plan::AtmEncapsulation;

impl World {
    /// The ATM network of `config`, if it has ATM links; attaches their ports.
    pub(super) fn build_atm(
        config: &SimConfig,
        nodes: &mut [Node],
        attachments: &mut [Vec<Attachment>],
    ) -> Result<Option<AtmNet>, RunError> {
        let Some(net) = atm_net_of_plan(config)? else { return Ok(None) };
        for (&(node, port), &ep) in &net.endpoint_of {
            attachments[node as usize][port as usize] = Attachment::Atm { ep };
            let n = &mut nodes[node as usize];
            // CLIP resolves next hops itself (ATMARP): the stack hands it IP packets.
            // An LE client is an Ethernet port to its node: ARP runs over the ELAN.
            let lec = net.is_lec(ep);
            if let (PortUse::Routed { iface }, false) = (n.port_use[port as usize], lec) {
                n.ip.ifaces[iface].resolve = false;
            }
            let header = atm_links(config)
                .iter()
                .find(|(_, l)| (l.a.node, l.a.port) == (node, port) || (l.b.node, l.b.port) == (node, port))
                .map_or(8, |(_, l)| if l.encapsulation == AtmEncapsulation::VcMux { 0 } else { 8 });
            // A LANE data frame is the whole 802.3 frame behind a 2-octet LE header.
            let header = if lec { ethernet::HEADER_LEN + wire::lane::LE_HEADER_LEN } else { header };
            n.set_port_atm(port, header);
        }
        for &sw in &net.switch_nodes {
            for a in attachments[sw as usize].iter_mut() {
                *a = Attachment::AtmSwitch;
            }
        }
        Ok(Some(net))
    }

    pub(super) fn atm_start(&mut self) -> Result<(), RunError> {
        if self.atm.is_some() {
            self.engine.schedule_at(SimTime::ZERO, Event::Atm(AtmEvent::Start)).map_err(super::budget)?;
        }
        Ok(())
    }

    pub(super) fn atm_event(&mut self, now: u64, event: AtmEvent) -> Result<(), RunError> {
        let Some(atm) = self.atm.as_mut() else { return Ok(()) };
        atm.handle(now, event, &mut self.atm_out);
        self.atm_apply(now)
    }

    /// An Ethernet-headed IP packet leaves `node` through its ATM port (endpoint `ep`).
    pub(super) fn atm_transmit(&mut self, now: u64, node: u32, ep: u32, frame: Vec<u8>) -> Result<(), RunError> {
        if let Some(atm) = self.atm.as_mut().filter(|a| a.is_lec(ep)) {
            atm.lane_send(now, ep, frame, &mut self.atm_out);
            return self.atm_apply(now);
        }
        let Some(dst) = frame
            .get(ethernet::HEADER_LEN + 16..ethernet::HEADER_LEN + 20)
            .map(|b| Ipv4Addr::new(b[0], b[1], b[2], b[3]))
        else {
            return Ok(());
        };
        // The stack routed the packet here; CLIP needs its next hop again (RFC 2225 §8:
        // resolution is per next hop in the LIS).
        let next_hop = self.nodes[node as usize].ip.route(dst).map_or(dst, |(_, hop)| hop);
        let Some(atm) = self.atm.as_mut() else { return Ok(()) };
        atm.send_ip(now, ep, next_hop, frame, &mut self.atm_out);
        self.atm_apply(now)
    }

    pub(super) fn atm_backlog(&mut self, now: u64, ep: u32) -> usize {
        self.atm.as_mut().map_or(0, |a| Link::backlog(a, now, ep as usize))
    }

    /// Carries out what the ATM network produced.
    fn atm_apply(&mut self, now: u64) -> Result<(), RunError> {
        let mut out = std::mem::take(&mut self.atm_out);
        for (at, e) in out.schedule.drain(..) {
            self.engine.schedule_at(SimTime::from_nanos(at.max(now)), Event::Atm(e)).map_err(super::budget)?;
        }
        for (node, port, reason, packet) in out.drops.drain(..) {
            self.record_drop(now, node, port, reason, packet.as_deref());
        }
        if let Some(lost) = self.atm.as_mut().map(|a| std::mem::take(&mut a.lost)).filter(|l| !l.is_empty()) {
            for (reason, bytes) in &lost {
                self.ledger_drop(reason, bytes);
            }
        }
        for (node, port, at, mut record) in out.captured.drain(..) {
            crate::atm::net::set_erf_time(&mut record, at);
            if let Some(c) = self.capture.as_mut() {
                let n = &self.nodes[node as usize];
                c.atm(node, port, || format!("{}-{}-aal5", n.name, n.port_name(port)), at, &record)
                    .map_err(RunError::Capture)?;
            }
        }
        // Most of the network's events move cells and deliver nothing: they are done here,
        // with no vector of link events made.
        if out.deliver.is_empty() && out.tx_done.is_empty() {
            if self.atm_out.is_empty() {
                self.atm_out = out;
            }
            return Ok(());
        }
        let deliver = out.deliver.drain(..).map(|(node, port, frame)| LinkEvent::Delivered { to: (node, port), frame });
        let mut events: Vec<LinkEvent> =
            deliver.chain(out.tx_done.drain(..).map(|node| LinkEvent::Sent { node })).collect();
        if self.atm_out.is_empty() {
            self.atm_out = out;
        }
        self.link_events(now, &mut events)
    }

    /// Per-link results and the ATM counters; switch losses into the drop counts.
    pub(super) fn atm_results(&mut self) -> (Vec<crate::results::LinkResult>, Option<crate::atm::AtmStats>) {
        let Some(atm) = self.atm.as_ref() else { return (Vec::new(), None) };
        // The network's conservation comes per ATM link and direction, in link order.
        let conservation = atm.conservation();
        let links = atm
            .link_report()
            .into_iter()
            .zip(conservation.chunks(2))
            .map(|((name, cells, busy), kept)| crate::results::LinkResult {
                name,
                kind: atm.kind(),
                utilization: busy.to_vec(),
                frames: cells.to_vec(),
                // Cells: a link loses none (switches' queues do, before it).
                drops: 0,
                members: Vec::new(),
                conservation: kept.to_vec(),
            })
            .collect();
        let stats = atm.stats.clone();
        for (i, &node) in atm.switch_nodes.iter().enumerate() {
            for (reason, n) in [
                ("cells lost: output queue full", stats.cells_lost[i]),
                ("cells discarded by EPD (whole frames)", stats.epd_cells[i]),
                ("cells discarded by PPD (rest of a frame)", stats.ppd_cells[i]),
                ("cells on a VC with no table entry", stats.unknown_vc_cells[i]),
            ] {
                if n > 0 {
                    *self.drop_counts[node as usize].entry(reason.to_string()).or_insert(0) += n;
                }
            }
        }
        (links, Some(stats))
    }
}

/// The ATM links of the plan, with their indices.
fn atm_links(config: &SimConfig) -> Vec<(usize, &crate::atm::AtmLinkConfig)> {
    config
        .links
        .iter()
        .enumerate()
        .filter_map(|(i, l)| match l {
            LinkConfig::Atm(a) => Some((i, a.as_ref())),
            _ => None,
        })
        .collect()
}

/// The ATM network of the plan (its switches, every ATM link, the hosts' endpoints with
/// CLIP or LANE, VC-multiplexed PVCs' configured far ends), or `None` if it has no ATM
/// link or switch. The one constructor of the ATM network from the plan: the world
/// builds its network with it (`build_atm`), and the real-time emulator (crates/emu)
/// the network it drives through the `Link` trait.
pub fn atm_net_of_plan(config: &SimConfig) -> Result<Option<AtmNet>, RunError> {
    let links = atm_links(config);
    if links.is_empty() && config.atm.switches.is_empty() {
        return Ok(None);
    }
    let mut net = AtmNet::new(&config.nodes, &links, &config.atm, config.capture).map_err(RunError::Config)?;
    for &sw in &net.switch_nodes {
        if config.nodes.get(sw as usize).is_none() {
            return Err(RunError::Config(ConfigError {
                field: "atm.switches".into(),
                message: format!("no node {sw}"),
            }));
        }
    }
    // VC-multiplexed PVCs carry no InATMARP: their far ends are configured.
    for (ep, vpi, vci, far) in net.pvc_far_ends() {
        let llc = links.iter().any(|(_, l)| {
            l.encapsulation == AtmEncapsulation::LlcSnap && l.pvcs.iter().any(|p| (p.vpi, p.vci) == (vpi, vci))
        });
        if !llc {
            if let Some(ip) = net.endpoint_ip(far) {
                net.set_pvc_peer(ep, vpi, vci, ip);
            }
        }
    }
    Ok(Some(net))
}
