//! An emulated link with many ends, sans-IO: an 802.11 cell (one end per member, the AP
//! first) or the ATM network for Classical IP over ATM (one end per host endpoint),
//! driven through crates/sim's `Link` trait by a clock the caller reads.
//!
//! The cell is the simulator's own `sim::wifi::cell::WifiCell`, built by the constructor
//! the world builds its BSSs with ([`sim::world::cell_of_plan`]): the DCF medium with
//! its airtime, backoff and contention, the link cipher, and each member's adapter with
//! its address rules (IEEE 802.11-2020 Table 9-26: a station adapter sends 3-address
//! frames only, so a frame a bridge behind it relays from a foreign source is rewritten
//! or refused as the plan's `foreign_source` says). Its random streams are those of the
//! simulator's run of the same seed. As with a line ([`crate::line`]), a frame read from
//! a member's device is [`Link::offer`]ed at the instant it was read, and the cell is
//! [`Link::poll`]ed at each instant its [`Link::poll_at`] names, in turn; what it hands
//! to a member is written to that member's device.
//!
//! Every member's device is a TAP (the cell carries Ethernet frames as its members'
//! stacks write them; the adapters do the 802.11 conversion inside the model).
//!
//! The ATM network is the simulator's `AtmNet`, built by [`sim::world::atm_net_of_plan`]
//! (switches, every ATM link, the hosts' CLIP endpoints with ATMARP and UNI signalling,
//! AAL5 segmentation and each link's cell timing). A CLIP host has no MAC: its kernel's
//! TAP speaks Ethernet and ARP, so the emulator answers each ARP request on a host's
//! TAP at once, with a made-up, locally administered MAC that carries the asked
//! address ([`clip_mac`]: 02:a7 and the four octets of the IPv4 address). The kernel then
//! addresses each packet to its next hop's made-up MAC, from which the emulator takes
//! the next hop the kernel routed to and hands the packet to the host's ATM endpoint
//! for it ([`AtmNet::offer_to`]); resolving that next hop to an ATM address (ATMARP to
//! the server) and setting up its SVC take the model's time, as in the simulator.
//! Packets delivered to a host go to its TAP from its next hop's made-up MAC. LAN
//! emulation (LANE, MPOA) is not run (refused).

use std::collections::BTreeMap;

use serde::Serialize;
use std::net::Ipv4Addr;

use sim::atm::AtmNet;
use sim::config::{LinkConfig, SimConfig};
use sim::link::{Link, LinkDrop, LinkEvent, Offer, PortRef};
use sim::wifi::cell::WifiCell;
use sim::world::{atm_net_of_plan, cell_of_plan};
use wire::ethernet::HEADER_LEN;

use crate::line::{Count, EndKind, Sink};

/// One end's counters (a member of a cell). A cell is not a pipe: one frame offered can
/// reach several members (the AP relays a station's group frame to every other station
/// and hands it up to its own node), so offered and delivered do not balance per end;
/// the cell's own conservation (frames the medium took, sent, dropped, queued) is in
/// [`SharedReport::conservation`].
#[derive(Debug, Default, Clone, PartialEq, Eq, Serialize)]
pub struct EndCounters {
    /// Frames read from this end's device.
    pub offered: Count,
    /// Frames written to this end's device.
    pub delivered: Count,
    /// Frames the link refused when this end offered them, by the link's reason (the
    /// adapter's address rules, a full queue).
    pub refused: BTreeMap<String, Count>,
    /// Frames the link dropped at this end after taking them (retry limit reached, a
    /// receiver's address filter), by the link's reason; bytes as the link logs them.
    pub dropped: BTreeMap<String, Count>,
    /// Frames for this end whose write to its device failed.
    pub write_failed: Count,
    /// ATM: ARP requests of this end's kernel the emulator answered (see the module doc);
    /// they are in `offered`, and their replies in `delivered`.
    pub arp_answered: Count,
}

/// The model behind a shared link.
enum Model {
    Cell(Box<WifiCell>),
    Atm(Box<AtmNet>),
}

impl Model {
    fn link(&self) -> &dyn Link {
        match self {
            Model::Cell(c) => c.as_ref(),
            Model::Atm(a) => a.as_ref(),
        }
    }

    fn link_mut(&mut self) -> &mut dyn Link {
        match self {
            Model::Cell(c) => c.as_mut(),
            Model::Atm(a) => a.as_mut(),
        }
    }
}

/// The made-up MAC of a CLIP next hop `ip` on a host's TAP: locally administered
/// (IEEE 802-2014 §8.4: the U/L bit set), 02:a7, then the address's four octets.
pub fn clip_mac(ip: Ipv4Addr) -> [u8; 6] {
    let o = ip.octets();
    [0x02, 0xa7, o[0], o[1], o[2], o[3]]
}

/// The IPv4 address a [`clip_mac`] carries.
fn clip_ip(mac: &[u8]) -> Option<Ipv4Addr> {
    (mac.len() == 6 && mac[..2] == [0x02, 0xa7]).then(|| Ipv4Addr::new(mac[2], mac[3], mac[4], mac[5]))
}

/// RFC 826 for Ethernet and IPv4: the reply to `request` (a broadcast ARP request frame)
/// for its target, at the target's [`clip_mac`]; `None` for anything else, and for a
/// request for the sender's own address (a gratuitous ARP: nobody answers it).
fn clip_arp_reply(request: &[u8]) -> Option<Vec<u8>> {
    let arp = request.get(HEADER_LEN..HEADER_LEN + 28)?;
    // htype 1 (Ethernet), ptype 0x0800, hlen 6, plen 4, oper 1 (request).
    if arp[..8] != [0, 1, 8, 0, 6, 4, 0, 1] {
        return None;
    }
    let (sha, spa, tpa) = (&arp[8..14], &arp[14..18], &arp[24..28]);
    if spa == tpa {
        return None;
    }
    let target = clip_mac(Ipv4Addr::new(tpa[0], tpa[1], tpa[2], tpa[3]));
    let mut reply = Vec::with_capacity(HEADER_LEN + 28);
    reply.extend_from_slice(sha);
    reply.extend_from_slice(&target);
    reply.extend_from_slice(&0x0806u16.to_be_bytes());
    reply.extend_from_slice(&[0, 1, 8, 0, 6, 4, 0, 2]);
    reply.extend_from_slice(&target);
    reply.extend_from_slice(tpa);
    reply.extend_from_slice(sha);
    reply.extend_from_slice(spa);
    Some(reply)
}

/// A link with many ends: an 802.11 cell, or the ATM network.
pub struct Shared {
    link: Model,
    /// End `i`'s plan port (a cell's members, the AP first).
    ports: Vec<PortRef>,
    /// "node/port" of each end, for the report.
    names: Vec<String>,
    counters: Vec<EndCounters>,
    /// The link's time: the instant of its last poll, ns (it never goes back).
    now: u64,
    events: Vec<LinkEvent>,
}

impl Shared {
    /// The link number `index` of `config` if it has many ends (an 802.11 cell; an ATM
    /// link: the whole ATM network, whichever of its links `index` names), with the
    /// random streams of the simulator's run of `config.seed`; `Ok(None)` for a line.
    /// Every end must be a TAP.
    pub fn of_plan(config: &SimConfig, index: usize, ends: &[EndKind]) -> Result<Option<Shared>, String> {
        let i = index;
        let (link, ports) = match config.links.get(i) {
            Some(LinkConfig::Wifi(_)) => {
                let cell = cell_of_plan(config, i).map_err(|e| e.to_string())?.expect("a cell");
                let ports = cell.members.clone();
                (Model::Cell(Box::new(cell)), ports)
            }
            Some(LinkConfig::Atm(_)) => {
                let net = atm_net_of_plan(config).map_err(|e| e.to_string())?.expect("an ATM network");
                let ports = atm_ends(&net);
                if let Some(lec) = (0..ports.len()).find(|&ep| net.is_lec(ep as u32)) {
                    let (n, p) = ports[lec];
                    return Err(format!(
                        "links[{i}]: {} is a LAN emulation client: LANE and MPOA are not emulated, only \
                         Classical IP over ATM",
                        port_name(config, n, p)
                    ));
                }
                (Model::Atm(Box::new(net)), ports)
            }
            Some(_) => return Ok(None),
            None => return Err(format!("links[{i}]: the plan has {} links", config.links.len())),
        };
        let link_name = link.link().name().to_string();
        let link_kind = link.link().kind();
        if ends.len() != ports.len() {
            return Err(format!(
                "links[{i}] ({link_name}): {} ends (one device per member), {} devices given",
                ports.len(),
                ends.len()
            ));
        }
        if let Some(end) = ends.iter().position(|&e| e != EndKind::Tap) {
            return Err(format!(
                "links[{i}] ({link_name}): a {link_kind} link carries Ethernet frames: end {end} must be a TAP device \
                 (IFF_TAP), not TUN"
            ));
        }
        let names = ports.iter().map(|&(n, p)| port_name(config, n, p)).collect();
        Ok(Some(Shared {
            counters: vec![EndCounters::default(); ports.len()],
            link,
            ports,
            names,
            now: 0,
            events: Vec::new(),
        }))
    }

    pub fn name(&self) -> &str {
        self.link.link().name()
    }

    pub fn kind(&self) -> &'static str {
        self.link.link().kind()
    }

    /// "node/port" of each end, in the order of the devices.
    pub fn end_names(&self) -> &[String] {
        &self.names
    }

    pub fn counters(&self, end: usize) -> &EndCounters {
        &self.counters[end]
    }

    /// A frame read from end `from` at `now`; everything due by `now` happens first.
    pub fn offer(&mut self, now: u64, from: usize, frame: &[u8], sink: &mut Sink<'_>) {
        self.advance(now, sink);
        let now = now.max(self.now);
        self.counters[from].offered.add(frame.len());
        let offer = match &mut self.link {
            Model::Cell(cell) => cell.offer(now, from, frame.to_vec()),
            Model::Atm(net) => match frame.get(12..14) {
                Some([0x08, 0x06]) => {
                    let Some(reply) = clip_arp_reply(frame) else {
                        let reason = "an ARP packet that asks for no other address (a reply, a gratuitous ARP): \
                                      nobody answers it on CLIP (RFC 2225 has no ARP)";
                        self.counters[from].refused.entry(reason.into()).or_default().add(frame.len());
                        return;
                    };
                    self.counters[from].arp_answered.add(frame.len());
                    if sink(from, &reply, now) {
                        self.counters[from].delivered.add(reply.len());
                    } else {
                        self.counters[from].write_failed.add(reply.len());
                    }
                    return;
                }
                Some([0x08, 0x00]) => {
                    // The next hop the kernel routed to, by the made-up MAC it resolved.
                    let next_hop = clip_ip(&frame[..6]).or_else(|| {
                        frame.get(HEADER_LEN + 16..HEADER_LEN + 20).map(|b| Ipv4Addr::new(b[0], b[1], b[2], b[3]))
                    });
                    match next_hop {
                        Some(hop) => net.offer_to(now, from as u32, hop, frame.to_vec()),
                        None => Offer::Dropped { reason: "a truncated IPv4 packet".into(), frame: frame.to_vec() },
                    }
                }
                _ => Offer::Dropped {
                    reason: "not an IPv4 packet: CLIP carries IP (RFC 2225)".into(),
                    frame: frame.to_vec(),
                },
            },
        };
        if let Offer::Dropped { reason, frame } = offer {
            self.counters[from].refused.entry(reason).or_default().add(frame.len());
            return;
        }
        // An idle medium may start it now (DIFS from now is a later instant).
        if self.link.link().poll_at().is_some_and(|at| at <= now) {
            self.poll(now, sink);
        }
    }

    /// Handles everything due by `now`, each at its own time, earliest first.
    pub fn advance(&mut self, now: u64, sink: &mut Sink<'_>) {
        while let Some(at) = self.next_wake() {
            if at > now {
                return;
            }
            self.poll(at, sink);
        }
    }

    /// When the link next needs [`Self::advance`]: ns, or `None` while it is idle.
    pub fn next_wake(&self) -> Option<u64> {
        self.link.link().poll_at().map(|at| at.max(self.now))
    }

    fn poll(&mut self, at: u64, sink: &mut Sink<'_>) {
        self.now = at;
        let mut events = std::mem::take(&mut self.events);
        self.link.link_mut().poll(at, &mut events);
        let atm = matches!(self.link, Model::Atm(_));
        for event in events.drain(..) {
            match event {
                LinkEvent::Delivered { to, mut frame } => {
                    let Some(end) = self.end_of(to) else { continue };
                    if atm && frame.len() >= HEADER_LEN + 20 {
                        // From the made-up MAC of the packet's source (the header the
                        // network writes has none).
                        let src = &frame[HEADER_LEN + 12..HEADER_LEN + 16];
                        let mac = clip_mac(Ipv4Addr::new(src[0], src[1], src[2], src[3]));
                        frame[6..12].copy_from_slice(&mac);
                    }
                    if sink(end, &frame, at) {
                        self.counters[end].delivered.add(frame.len());
                    } else {
                        self.counters[end].write_failed.add(frame.len());
                    }
                }
                LinkEvent::Dropped(drop) => {
                    let LinkDrop { at: (node, port), reason, logged, carried } = *drop;
                    let end = port.and_then(|p| self.end_of((node, p))).unwrap_or(0);
                    let bytes = carried.or(logged).map_or(0, |p| p.len());
                    self.counters[end].dropped.entry(reason).or_default().add(bytes);
                }
                LinkEvent::Sent { .. } => {}
            }
        }
        self.events = events;
    }

    fn end_of(&self, port: PortRef) -> Option<usize> {
        self.ports.iter().position(|&p| p == port)
    }

    /// Frames the link holds (queued or on the air) at the moment.
    pub fn held(&self) -> Count {
        let mut held = Count::default();
        self.link.link().held(&mut |frame| held.add(frame.len()));
        held
    }

    /// The link's own conservation, per transmitter (docs/metrics.md#conservation).
    pub fn conservation(&self) -> Vec<sim::link::LinkConservation> {
        self.link.link().conservation()
    }
}

/// The ATM network's host endpoints' plan ports, by endpoint number.
fn atm_ends(net: &AtmNet) -> Vec<PortRef> {
    let mut ends: Vec<(u32, PortRef)> = net.endpoint_of.iter().map(|(&port, &ep)| (ep, port)).collect();
    ends.sort();
    debug_assert!(ends.iter().enumerate().all(|(i, &(ep, _))| ep as usize == i), "endpoints are numbered from 0");
    ends.into_iter().map(|(_, port)| port).collect()
}

/// The plan ports of the ends of link `index` of `config` if it has many (an 802.11
/// cell's members, the AP first; the ATM network's host endpoints), `None` for a line.
pub fn shared_ends(config: &SimConfig, index: usize) -> Result<Option<Vec<PortRef>>, String> {
    match config.links.get(index) {
        Some(LinkConfig::Wifi(w)) => Ok(Some(w.ap.iter().chain(w.stations.iter()).map(|r| (r.node, r.port)).collect())),
        Some(LinkConfig::Atm(_)) => {
            let net = atm_net_of_plan(config).map_err(|e| e.to_string())?.expect("an ATM network");
            Ok(Some(atm_ends(&net)))
        }
        _ => Ok(None),
    }
}

/// "node/port" of the plan's port.
fn port_name(config: &SimConfig, node: u32, port: u16) -> String {
    let n = &config.nodes[node as usize];
    format!("{}/{}", n.name, n.ports[port as usize].name)
}

/// One end's account when the emulator stopped.
#[derive(Debug, Clone, Serialize)]
pub struct EndReport {
    /// "node/port" of the plan.
    pub port: String,
    pub device: String,
    #[serde(flatten)]
    pub counters: EndCounters,
    /// How late the writes to this end's device were against the model's arrival times.
    pub lateness_ns: crate::lateness::LatenessReport,
}

/// A shared link's own account when the emulator stopped.
#[derive(Debug, Clone, Serialize)]
pub struct SharedReport {
    /// Frames the link held (queued, on the air) at the stop.
    pub held_at_stop: Count,
    /// Per transmitter (a cell's member): frames in, out, dropped, queued; in = out +
    /// dropped + queued (docs/metrics.md#conservation).
    pub conservation: Vec<Conservation>,
}

/// [`sim::link::LinkConservation`] as the report prints it.
#[derive(Debug, Clone, Serialize)]
pub struct Conservation {
    pub frames_in: u64,
    pub frames_out: u64,
    pub dropped: u64,
    pub queued: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_made_up_arp_reply_is_rfc_826s_for_the_asked_address() {
        let asker = [2, 0, 0, 0, 0, 1];
        let (spa, tpa) = ([192, 0, 2, 1], [192, 0, 2, 254]);
        let mut request = vec![0xff; 6];
        request.extend_from_slice(&asker);
        request.extend_from_slice(&[0x08, 0x06]);
        // RFC 826: ar$hrd 1, ar$pro 0x0800, ar$hln 6, ar$pln 4, ar$op 1 (request).
        request.extend_from_slice(&[0, 1, 8, 0, 6, 4, 0, 1]);
        request.extend_from_slice(&asker);
        request.extend_from_slice(&spa);
        request.extend_from_slice(&[0; 6]);
        request.extend_from_slice(&tpa);
        let reply = clip_arp_reply(&request).expect("a reply");
        let mac = [0x02, 0xa7, 192, 0, 2, 254];
        assert_eq!(&reply[0..6], &asker, "to the asker");
        assert_eq!(&reply[6..12], &mac, "from the target's made-up MAC");
        assert_eq!(&reply[12..14], &[0x08, 0x06]);
        assert_eq!(&reply[14..22], &[0, 1, 8, 0, 6, 4, 0, 2], "ar$op 2 (reply)");
        assert_eq!((&reply[22..28], &reply[28..32]), (&mac[..], &tpa[..]), "sender: the target");
        assert_eq!((&reply[32..38], &reply[38..42]), (&asker[..], &spa[..]), "target: the asker");
        assert_eq!(clip_ip(&mac), Some(Ipv4Addr::new(192, 0, 2, 254)));
        assert_eq!(clip_ip(&asker), None);
        // A gratuitous ARP (sender and target the same) and a reply get no answer.
        let mut gratuitous = request.clone();
        gratuitous[38..42].copy_from_slice(&spa);
        assert_eq!(clip_arp_reply(&gratuitous), None);
        assert_eq!(clip_arp_reply(&reply), None);
    }
}
