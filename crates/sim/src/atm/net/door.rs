//! The ATM network through the one door of links ([`crate::link::Link`]): IP packets
//! (or, at a LAN emulation client, whole Ethernet frames) offered at a host's endpoint,
//! what the network holds, its cells' conservation, and, for a driver with no engine,
//! its own timers in one ordered map behind [`Link::poll_at`].
//!
//! What is the network's own, beyond the trait: its kinds of events ([`AtmEvent`]:
//! cell trains, UNI signalling, LANE's BUS, service categories), which the simulator's
//! world keeps in its engine, and CLIP's next hop (RFC 2225 §8: ATMARP resolves the
//! next hop the stack routed to, which an Ethernet frame does not carry):
//! [`AtmNet::send_ip`]. Through the trait, a CLIP packet goes to its destination on the
//! logical IP subnet.

use std::net::Ipv4Addr;

use wire::ethernet;

use super::{AtmEvent, AtmNet, AtmOut};
use crate::link::{Link, LinkConservation, LinkEvent, Offer};

/// The network's own timers and outputs when it is driven through the trait.
#[derive(Debug, Default)]
pub struct OwnTimers {
    /// Events due, in the order they fall due (time, then the order they were asked).
    timers: std::collections::BTreeMap<(u64, u64), AtmEvent>,
    next: u64,
    /// The start (InATMARP, calls to the ATMARP servers) has been scheduled.
    started: bool,
    /// The latest instant handled, and what offers produced since the last poll.
    now: u64,
    out: AtmOut,
}

impl AtmNet {
    /// Files what an offer or an event produced: its events among the timers, the rest
    /// for the next poll (captures are the world's; a driver through the trait has none).
    fn absorb(&mut self, mut out: AtmOut) {
        let own = &mut self.own;
        for (at, e) in out.schedule.drain(..) {
            own.timers.insert((at.max(own.now), own.next), e);
            own.next += 1;
        }
        out.captured.clear();
        own.out.drops.append(&mut out.drops);
        own.out.deliver.append(&mut out.deliver);
        own.out.tx_done.append(&mut out.tx_done);
    }

    /// As [`Link::offer`] at a CLIP endpoint `ep`, with the next hop the sender's stack
    /// routed the packet to (RFC 2225 §8: ATMARP resolves the next hop in the LIS, which
    /// the Ethernet-headed packet does not carry): a driver that knows it (the real-time
    /// emulator learns it from the kernel's own ARP) says so; the trait's `offer` takes
    /// the destination, which is the next hop within one LIS.
    pub fn offer_to(&mut self, now: u64, ep: u32, next_hop: Ipv4Addr, frame: Vec<u8>) -> Offer {
        self.own.now = self.own.now.max(now);
        let mut out = AtmOut::default();
        self.send_ip(now, ep, next_hop, frame, &mut out);
        self.absorb(out);
        Offer::Accepted
    }

    /// Hands on what was filed, in the order the world handles it: drops, deliveries,
    /// senders done.
    fn hand_on(&mut self, events: &mut Vec<LinkEvent>) {
        let out = &mut self.own.out;
        for (node, port, reason, packet) in out.drops.drain(..) {
            events.push(LinkEvent::dropped((node, port), reason, packet.clone(), packet));
        }
        for (node, port, frame) in out.deliver.drain(..) {
            events.push(LinkEvent::Delivered { to: (node, port), frame });
        }
        for node in out.tx_done.drain(..) {
            events.push(LinkEvent::Sent { node });
        }
    }
}

impl Link for AtmNet {
    fn name(&self) -> &str {
        "ATM network"
    }

    fn kind(&self) -> &'static str {
        "atm"
    }

    /// `from` is a host's endpoint. The network decides a frame's fate as its NIC (or
    /// its LE client) takes it, and tells it at the next poll: the offer is accepted.
    fn offer(&mut self, now: u64, from: usize, frame: Vec<u8>) -> Offer {
        self.own.now = self.own.now.max(now);
        let mut out = AtmOut::default();
        let ep = from as u32;
        if self.is_lec(ep) {
            self.lane_send(now, ep, frame, &mut out);
        } else if let Some(dst) = frame
            .get(ethernet::HEADER_LEN + 16..ethernet::HEADER_LEN + 20)
            .map(|b| Ipv4Addr::new(b[0], b[1], b[2], b[3]))
        {
            return self.offer_to(now, ep, dst, frame);
        } else {
            return Offer::Dropped { reason: "not an IPv4 packet: CLIP carries IP (RFC 2225)".into(), frame };
        }
        self.absorb(out);
        Offer::Accepted
    }

    fn backlog(&mut self, now: u64, from: usize) -> usize {
        AtmNet::backlog(self, now, from as u32)
    }

    fn held(&self, each: &mut dyn FnMut(&[u8])) {
        self.held_packets(each);
    }

    /// Cells the switches dropped (a full queue, EPD, PPD, no table entry): the ATM
    /// network's unit, as its conservation counts cells.
    fn drops(&self) -> u64 {
        let s = &self.stats;
        [&s.cells_lost, &s.epd_cells, &s.ppd_cells, &s.unknown_vc_cells].iter().flat_map(|v| v.iter()).sum()
    }

    /// Per ATM link, in order, each direction: cells put on the link, cells that
    /// reached its far end, and cells still on it (a link loses none; switches' queues
    /// do, before it).
    fn conservation(&self) -> Vec<LinkConservation> {
        self.cell_conservation()
            .iter()
            .flatten()
            .map(|&(sent, arrived, on_wire)| LinkConservation {
                frames_in: sent,
                frames_out: arrived,
                dropped: 0,
                queued: on_wire,
            })
            .collect()
    }

    fn poll_at(&self) -> Option<u64> {
        let own = &self.own;
        if !own.started {
            return Some(0);
        }
        if !own.out.is_empty() {
            return Some(own.now);
        }
        own.timers.keys().next().map(|&(at, _)| at)
    }

    fn poll(&mut self, now: u64, events: &mut Vec<LinkEvent>) {
        if !self.own.started {
            self.own.started = true;
            self.own.timers.insert((0, self.own.next), AtmEvent::Start);
            self.own.next += 1;
        }
        self.hand_on(events);
        while let Some(entry) = self.own.timers.first_entry().filter(|e| e.key().0 <= now) {
            let ((at, _), event) = entry.remove_entry();
            self.own.now = at;
            let mut out = AtmOut::default();
            self.handle(at, event, &mut out);
            self.absorb(out);
            self.hand_on(events);
        }
        self.own.now = self.own.now.max(now);
    }
}
