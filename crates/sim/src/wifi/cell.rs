//! An 802.11 cell as a link: the shared medium of one BSS or IBSS ([`Bss`]), each
//! member's port and adapter (address rules of IEEE 802.11-2020 Table 9-26, the link
//! cipher), the AP's relay within the BSS and WDS learning, and the air's propagation
//! delay. Sans-IO: it implements [`Link`]; the simulator's world drives it by its steps
//! ([`WifiCell::medium_events`], [`WifiCell::handle`], [`WifiCell::take_arrival`],
//! [`WifiCell::arrive`]) so that each frame's arrival is an engine event of its own.
//!
//! What is the cell's own, beyond the trait: which member a frame goes to (the AP for a
//! station, the addressed member in an IBSS, a WDS station for a host behind it) and
//! what an AP relays back into the BSS (§4.5.4.2, §11.3).

use std::collections::{BTreeMap, VecDeque};

use wire::ethernet::{self, Address as Mac};

use super::adapter::{Adapter, DropReason};
use super::bss::{Bss, BssEvent};
use crate::link::{Link, LinkConservation, LinkEvent, Offer, PortRef};

/// An 802.11 cell: the medium, and each member's port and adapter.
pub struct WifiCell {
    pub name: String,
    /// The 2.4 GHz channel, if the configuration gives it (radiotap Channel).
    pub channel: Option<u8>,
    pub bss: Bss,
    /// Each member's port, the AP (when there is one) first.
    pub members: Vec<PortRef>,
    pub adapters: Vec<Adapter>,
    pub macs: Vec<Mac>,
    pub has_ap: bool,
    pub wds: bool,
    /// MACs behind WDS stations, learned from 4-address uplink frames (their SA).
    pub behind: BTreeMap<Mac, usize>,
    /// The AP relays frames between its stations (`WifiConfig::relay`).
    pub relay: bool,
    /// Propagation delay of the air, ns.
    pub delay_ns: u64,
    /// The frames on their way: (due, to, from, MPDU), in the order they arrive (one
    /// delay per cell).
    in_flight: VecDeque<(u64, usize, usize, Vec<u8>)>,
}

/// What [`WifiCell::handle`] asks of its driver besides the events it appended.
#[derive(Debug, PartialEq, Eq)]
pub enum Handled {
    /// Nothing more.
    Done,
    /// This node's port finished sending a frame: the [`LinkEvent::Sent`] of the event,
    /// handed back here rather than appended (the driver's most frequent event, with no
    /// vector in between).
    Sent(u32),
    /// The AP queued a frame to relay: the medium's timer may be due earlier (the
    /// driver re-arms it before it hands on the events).
    Relayed,
    /// A frame is on the air until this time: the driver takes it with
    /// [`WifiCell::take_arrival`] then.
    InFlight(u64),
}

impl WifiCell {
    /// A cell with nothing on the air.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        name: String,
        channel: Option<u8>,
        bss: Bss,
        members: Vec<PortRef>,
        adapters: Vec<Adapter>,
        macs: Vec<Mac>,
        has_ap: bool,
        wds: bool,
        relay: bool,
        delay_ns: u64,
    ) -> WifiCell {
        WifiCell {
            name,
            channel,
            bss,
            members,
            adapters,
            macs,
            has_ap,
            wds,
            behind: BTreeMap::new(),
            relay,
            delay_ns,
            in_flight: VecDeque::new(),
        }
    }

    /// Whether `frame`, received by station `to`, is a group frame a host behind that WDS
    /// station sent, relayed back by the AP.
    fn echoes_behind(&self, to: usize, frame: &[u8]) -> bool {
        if !(self.wds && self.has_ap && to != 0) {
            return false;
        }
        let Ok(eth) = ethernet::Frame::new_checked(frame) else { return false };
        eth.dst_addr().is_multicast() && self.behind.get(&eth.src_addr()) == Some(&to)
    }

    /// Whether the AP relays `frame` (an Ethernet frame it received from station `from`)
    /// back into the BSS, and whether it also goes up to the AP's own node: a group frame
    /// does both, a frame for another member of the BSS (or for a host behind a WDS
    /// station) is only relayed, anything else only goes up.
    fn relay_within_bss(&self, from: usize, frame: &[u8]) -> (bool, bool) {
        if !self.relay {
            return (false, true);
        }
        let Ok(eth) = ethernet::Frame::new_checked(frame) else { return (false, true) };
        let dst = eth.dst_addr();
        if dst.is_multicast() {
            return (true, true);
        }
        let member =
            self.macs.iter().position(|m| *m == dst).or_else(|| self.behind.get(&dst).copied().filter(|_| self.wds));
        match member {
            Some(i) if i != 0 && i != from => (true, false),
            _ => (false, true),
        }
    }

    /// An Ethernet frame offered at `member`'s port: addressed (Table 9-26), converted
    /// by the adapter, and queued at the member's DCF (`priority`: ahead of the waiting
    /// frames).
    fn offer_at(&mut self, now: u64, member: usize, frame: Vec<u8>, priority: bool) -> Offer {
        let Ok(eth) = ethernet::Frame::new_checked(&frame[..]) else {
            return Offer::Dropped { reason: "not an Ethernet frame".into(), frame };
        };
        let dst = eth.dst_addr();
        let is_ap = self.has_ap && member == 0;
        let (dest, wds_receiver) = if self.has_ap && !is_ap {
            // A station of a BSS sends every frame to its AP (To DS, Address 1 = the BSSID;
            // IEEE 802.11-2020 §9.3.2.1, Table 9-26), a group-addressed MSDU too, as an
            // individually addressed, acknowledged frame; the AP's distribution function
            // relays it (`relay_within_bss`).
            (Some(0), None)
        } else if dst.is_multicast() {
            (None, None)
        } else if let Some(i) = self.macs.iter().position(|m| *m == dst).filter(|&i| i != member) {
            (Some(i), None)
        } else if is_ap && self.wds && self.behind.contains_key(&dst) {
            let i = self.behind[&dst];
            (Some(i), Some(self.macs[i]))
        } else if is_ap {
            let reason = format!(
                "AP has no associated station {dst}: reaching a host behind a station needs 4-address (WDS) frames \
                 (802.11 Table 9-26 case 11), which station adapters do not send"
            );
            return Offer::Dropped { reason, frame };
        } else {
            return Offer::Dropped { reason: format!("no station {dst} in the ad hoc cell"), frame };
        };
        let converted = match self.adapters[member].transmit(&frame, wds_receiver) {
            Ok(c) => c,
            Err(reason) => return Offer::Dropped { reason: reason.to_string(), frame },
        };
        let queued = if priority {
            self.bss.enqueue_priority(now, member, converted.frame, dest)
        } else {
            self.bss.enqueue(now, member, converted.frame, dest)
        };
        match queued {
            Ok(()) => Offer::Accepted,
            Err(reason) => Offer::Dropped { reason: reason.to_string(), frame },
        }
    }

    /// The medium's events due at `now` (its one timer, [`Bss::poll_at`]).
    #[inline]
    pub fn medium_events(&mut self, now: u64, events: &mut Vec<BssEvent>) {
        self.bss.poll(now, events);
    }

    /// One event of the medium: a frame on the air (delivered now, or on its way), a
    /// frame dropped, a transmitter done; what it hands back appended to `out`, but a
    /// transmitter done is returned ([`Handled::Sent`]).
    #[inline]
    pub fn handle(&mut self, now: u64, event: BssEvent, out: &mut Vec<LinkEvent>) -> Handled {
        match event {
            BssEvent::Delivered { to, from, mpdu, at } => {
                if self.delay_ns > 0 {
                    // The air's propagation delay: the frame reaches the receiving node later;
                    // arrivals keep their order (one delay per BSS).
                    let due = at + self.delay_ns;
                    self.in_flight.push_back((due, to, from, mpdu));
                    return Handled::InFlight(due);
                }
                if self.arrive(now, to, from, mpdu, out) {
                    return Handled::Relayed;
                }
            }
            BssEvent::Dropped { member, reason, mpdu, delivered } => {
                let (node, port) = self.members[member];
                // Logged as before; the flows are charged what the MPDU carried, unless
                // the receiver had it (only its acknowledgements were lost).
                let open = self.adapters[member].cipher.unprotect(&mpdu).map(|(open, _)| open).ok();
                let carried =
                    (!delivered).then(|| open.unwrap_or(mpdu)).filter(|m| !crate::conservation::is_link_arq(m));
                out.push(LinkEvent::dropped((node, Some(port)), reason.to_string(), None, carried));
            }
            BssEvent::TxDone { member, .. } => return Handled::Sent(self.members[member].0),
        }
        Handled::Done
    }

    /// The first frame on its way through the air: (to, from, MPDU).
    #[inline]
    pub fn take_arrival(&mut self) -> (usize, usize, Vec<u8>) {
        let (_, to, from, mpdu) = self.in_flight.pop_front().expect("a frame in flight on the air");
        (to, from, mpdu)
    }

    /// An MPDU from member `from` reaches member `to`'s adapter: its address filter and
    /// cipher, the AP's relay within the BSS, then the node (appended to `out`). Whether
    /// the AP queued a frame to relay.
    pub fn arrive(&mut self, now: u64, to: usize, from: usize, mpdu: Vec<u8>, out: &mut Vec<LinkEvent>) -> bool {
        let (node, port) = self.members[to];
        match self.adapters[to].receive(&mpdu) {
            Ok(converted) if self.echoes_behind(to, &converted.frame) => {
                // A WDS station's own group frame (from a host behind it) relayed back by
                // the AP: like its own MAC's echo, discarded (a 4-address station takes no
                // 3-address copy back, as Linux mac80211's 4addr mode).
                false
            }
            Ok(converted) => {
                if self.wds && self.has_ap && to == 0 {
                    if let Ok(frame) = ethernet::Frame::new_checked(&converted.frame[..]) {
                        let src = frame.src_addr();
                        if src != self.macs[from] {
                            self.behind.insert(src, from);
                        }
                    }
                }
                let (relay, up) =
                    if self.has_ap && to == 0 { self.relay_within_bss(from, &converted.frame) } else { (false, true) };
                if !relay {
                    out.push(LinkEvent::Delivered { to: (node, port), frame: converted.frame });
                    return false;
                }
                // The AP's distribution function: a frame from one of its stations for
                // another (or for all) goes back out into the BSS, From DS (IEEE
                // 802.11-2020 §4.5.4.2, §11.3; Linux mac80211 relays in
                // ieee80211_deliver_skb before the bridge sees the frame). The AP's MAC
                // does it: no bridge lookup, no CPU work of the node.
                // One copy when the frame also goes up to the AP's own node, none otherwise.
                let (relay_frame, up_frame) =
                    if up { (converted.frame.clone(), Some(converted.frame)) } else { (converted.frame, None) };
                let relayed = match self.offer_at(now, 0, relay_frame, false) {
                    Offer::Accepted => true,
                    Offer::Dropped { reason, frame } => {
                        let packet = frame.get(ethernet::HEADER_LEN..).map(<[u8]>::to_vec);
                        out.push(LinkEvent::dropped((node, Some(port)), reason, packet.clone(), packet));
                        false
                    }
                };
                if let Some(frame) = up_frame {
                    out.push(LinkEvent::Delivered { to: (node, port), frame });
                }
                relayed
            }
            // A station discards its own group frame relayed back by the AP (§11.3 relay
            // reaches every station, the sender too): the original was delivered, so this
            // copy is no loss and is not recorded as a drop.
            Err(DropReason::OwnGroupEcho { .. }) => false,
            Err(reason) => {
                out.push(LinkEvent::dropped((node, Some(port)), reason.to_string(), None, None));
                false
            }
        }
    }
}

impl Link for WifiCell {
    fn name(&self) -> &str {
        &self.name
    }

    fn kind(&self) -> &'static str {
        "wifi"
    }

    fn offer(&mut self, now: u64, from: usize, frame: Vec<u8>) -> Offer {
        self.offer_at(now, from, frame, false)
    }

    fn offer_priority(&mut self, now: u64, from: usize, frame: Vec<u8>) -> Offer {
        self.offer_at(now, from, frame, true)
    }

    fn backlog(&mut self, _now: u64, from: usize) -> usize {
        self.bss.queue_len(from)
    }

    fn held(&self, each: &mut dyn FnMut(&[u8])) {
        for member in 0..self.members.len() {
            // A protected MPDU is read as its receiver would (WEP, TKIP, CCMP).
            let cipher = &self.adapters[member].cipher;
            for mpdu in self.bss.queued(member) {
                let open = cipher.unprotect(mpdu).map(|(open, _)| open);
                let open = open.as_deref().unwrap_or(mpdu);
                // A link ARQ frame's datagram is counted at its sender (seed 004's
                // adaptive router holds it).
                if !crate::conservation::is_link_arq(open) {
                    each(open);
                }
            }
        }
    }

    fn drops(&self) -> u64 {
        (0..self.members.len())
            .map(|m| {
                let s = self.bss.member_stats(m);
                s.dropped + s.queue_drops
            })
            .sum()
    }

    fn conservation(&self) -> Vec<LinkConservation> {
        (0..self.members.len())
            .map(|m| {
                let s = self.bss.member_stats(m);
                LinkConservation {
                    frames_in: s.enqueued + s.queue_drops,
                    frames_out: s.frames_sent,
                    dropped: s.dropped + s.queue_drops,
                    queued: self.bss.queued_handed_in(m) as u64,
                }
            })
            .collect()
    }

    fn poll_at(&self) -> Option<u64> {
        let air = self.in_flight.front().map(|&(due, ..)| due);
        self.bss.poll_at().into_iter().chain(air).min()
    }

    fn poll(&mut self, now: u64, out: &mut Vec<LinkEvent>) {
        let mut events = Vec::new();
        self.medium_events(now, &mut events);
        for event in events {
            if let Handled::Sent(node) = self.handle(now, event, out) {
                out.push(LinkEvent::Sent { node });
            }
        }
        while self.in_flight.front().is_some_and(|&(due, ..)| due <= now) {
            let (to, from, mpdu) = self.take_arrival();
            self.arrive(now, to, from, mpdu, out);
        }
    }
}
