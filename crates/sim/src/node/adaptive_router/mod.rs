//! Seed 004's adaptive router: the sans-IO models of [`link_arq`], [`delivery_ratio`] and
//! [`chooser`] bound to two routers, a radio and a modem.
//!
//! Seed 004 (Maggs, "Asymmetric Wireless Networking"): "I modified the router so that it
//! understood that two IP nodes could be connected by two separate, opposite, and
//! asymmetric communication channels. Building on top of the router's acknowledgements
//! mechanism, the router now has the capacity to adaptively decide whether to send
//! packets from home to school using the radio transmitter or the modem, based on the
//! percentage of packets sent using the transmitter that are successfully received at
//! the campus end."
//!
//! # What is wired where
//!
//! * **The sender** (`node`, the home router) owns the choice. Every IPv4 datagram its
//!   stack sends towards the peer — out of its modem port, or out of its radio port to
//!   the peer's radio MAC — is taken here instead of being queued by the port. On the
//!   radio it goes inside a [`wire::linkarq`] data frame (EtherType 0x88B5) under the
//!   [`LinkArq`] sender: a timer per frame, retransmission with the backoff doubling
//!   up to the seed's 100 ms cap, given up after the last attempt. On the modem it goes
//!   as the plain datagram (SLIP, CSLIP or PPP as the line says), without link acks:
//!   the seed built its ARQ for the radio, and keeping the modem's frames unchanged
//!   keeps the line's byte count the seed's (a 40-byte ACK in 42 SLIP octets).
//! * **The peer** (the campus router) answers every ARQ data frame with a link ack on
//!   its radio, ahead of the data it forwards downstream (`Bss::enqueue_priority`; the
//!   seed's "packets transmitted from campus to home are only very rarely lost", so
//!   acks ride the reliable direction), hands new datagrams to its own IP stack as if
//!   received on the radio port, and suppresses duplicates.
//! * **The ratios.** The radio's [`DeliveryRatio`] counts one success per link ack and
//!   one failure per ARQ timeout (per attempt, see its doc). The modem's counts each
//!   frame the line delivered as a success and each frame its loss model destroyed as a
//!   failure; a frame refused by the modem's full queue is congestion, not a channel
//!   fault, and is not counted.
//! * **The chooser** ([`ChannelChooser`]) is re-evaluated after each outcome. While the
//!   modem carries the traffic, a probe (an ARQ frame without a datagram) goes over the
//!   radio every `probe_interval_ns`, so the radio's ratio can rise again.
//!
//! Results: every switch (time, from, to, both ratios) and the ratios sampled at most
//! once per `sample_interval_ns` of simulated time (at the first outcome after each
//! interval, so a quiet channel gives no samples), with the ARQ counters.
//!
//! # The models
//!
//! Link-layer acknowledgements between the two routers ([`link_arq`]), a per-channel
//! delivery-ratio estimate ([`delivery_ratio`]), and a chooser ([`chooser`]) that returns
//! TCP acknowledgements over the radio or over the modem, with hysteresis.
//!
//! Seed 004 (Maggs, "Asymmetric Wireless Networking") describes the mechanism:
//!
//! * "I decided that I would implement my own acknowledgements mechanism by adding a
//!   networking layer between TCP and IP" — [`LinkArq`];
//! * "it moderated the maximum backoff time so that it never exceed a tenth of a
//!   second" — [`link_arq::ArqConfig::max_timeout_ns`] defaults to 100 ms;
//! * "Building on top of the router's acknowledgements mechanism, the router now has
//!   the capacity to adaptively decide whether to send packets from home to school
//!   using the radio transmitter or the modem, based on the percentage of packets sent
//!   using the transmitter that are successfully received at the campus end" —
//!   [`DeliveryRatio`] and [`ChannelChooser`];
//! * hidden terminals (Wireless Andrew's omni transceivers cannot hear the faint
//!   home-to-campus signal) make the radio **upstream** lossy, while "packets transmitted
//!   from campus to home are only very rarely lost": so link acks (downstream) are
//!   taken as reliable, and a missing ack is charged to the upstream frame.
//!
//! Where the seed is silent (initial timeout, retry limit, estimator, thresholds, probing)
//! each default says what was chosen and why.
//!
//! Standards a reader should know: IEEE 802.11-2020 §10.3.2.x (ack after each unicast
//! frame, retry limits `dot11ShortRetryLimit` = 7), RFC 4303 §3.4.3 (the anti-replay
//! sliding window the receiver's duplicate check follows), RFC 1982 (serial-number
//! comparison of wrapping sequence numbers).
//!
//! The three models are sans-IO (STYLE.md): they take `now` (`u64` ns of simulated time,
//! as [`crate::tcp`] and [`crate::wifi`] do) and inputs, return what to send, and say
//! when they next need waking with `poll_at()`. They draw no random numbers: the
//! backoff has no jitter (one sender per point-to-point ARQ, so there is no contention
//! among ARQ senders to break up), so the same inputs always give the same outputs.

pub mod chooser;
pub mod config;
pub mod delivery_ratio;
pub mod link_arq;

use std::collections::BTreeMap;

use serde::Serialize;
use wire::ethernet::{self, Address as Mac, EtherType};
use wire::linkarq;

use crate::node::ip::ethernet_frame;
use chooser::{Channel, ChannelChooser, ChooserConfig};
use config::{arq_config, AdaptiveConfig};
use delivery_ratio::{DeliveryRatio, RatioConfig};
use link_arq::{Action, ArqCounters, LinkArq, RxVerdict};

/// A frame for the world to send out of `node`'s `port`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tx {
    pub node: u32,
    pub port: u16,
    /// An Ethernet frame (over a serial line the header is the placeholder the world
    /// strips).
    pub frame: Vec<u8>,
    /// Ahead of the waiting data (a link ack).
    pub priority: bool,
}

/// What the peer does with a received ARQ frame, besides the frames to send.
#[derive(Debug, Default)]
pub struct Received {
    pub tx: Vec<Tx>,
    /// An Ethernet frame (IPv4) to hand to the receiving node's stack on its radio port.
    pub deliver: Option<Vec<u8>>,
}

/// A change of channel, for the results.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct SwitchRecord {
    pub time_ns: u64,
    pub from: &'static str,
    pub to: &'static str,
    pub radio_ratio: Option<f64>,
    pub modem_ratio: Option<f64>,
}

/// The ratios at one instant.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct RatioSample {
    pub time_ns: u64,
    pub radio_ratio: Option<f64>,
    pub modem_ratio: Option<f64>,
    /// The channel in use after this instant's decision.
    pub channel: &'static str,
}

/// Counters of one adaptive upstream.
#[derive(Debug, Clone, Copy, Default, Serialize, schemars::JsonSchema)]
pub struct AdaptiveRouterCounters {
    /// Datagrams the sender's stack sent towards the peer.
    pub datagrams: u64,
    /// Of those, sent under ARQ on the radio.
    pub radio_datagrams: u64,
    /// Of those, sent on the modem.
    pub modem_datagrams: u64,
    /// Probe frames sent over the radio while on the modem.
    pub probes: u64,
    /// Datagrams (not probes) the ARQ gave up on after its last attempt.
    pub radio_given_up: u64,
    /// Modem frames the far end received / lost to the line's loss model.
    pub modem_delivered: u64,
    pub modem_lost: u64,
}

/// The results of one adaptive upstream.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct AdaptiveRouterResult {
    pub node: String,
    pub peer: String,
    /// The channel at the end of the run.
    pub channel: &'static str,
    pub switches: Vec<SwitchRecord>,
    pub samples: Vec<RatioSample>,
    pub counters: AdaptiveRouterCounters,
    pub arq_sender: ArqCountersResult,
    pub arq_receiver: ArqCountersResult,
    /// (successes, attempts) of the radio and the modem since the start.
    pub radio_lifetime: (u64, u64),
    pub modem_lifetime: (u64, u64),
}

/// [`ArqCounters`] as serialised.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct ArqCountersResult {
    pub frames: u64,
    pub transmissions: u64,
    pub retransmissions: u64,
    pub acked: u64,
    pub acked_first_try: u64,
    pub dropped: u64,
    pub stale_acks: u64,
    pub delivered: u64,
    pub duplicates: u64,
    pub too_old: u64,
    pub acks_sent: u64,
}

impl From<&ArqCounters> for ArqCountersResult {
    fn from(c: &ArqCounters) -> Self {
        ArqCountersResult {
            frames: c.frames,
            transmissions: c.transmissions,
            retransmissions: c.retransmissions,
            acked: c.acked,
            acked_first_try: c.acked_first_try,
            dropped: c.dropped,
            stale_acks: c.stale_acks,
            delivered: c.delivered,
            duplicates: c.duplicates,
            too_old: c.too_old,
            acks_sent: c.acks_sent,
        }
    }
}

fn channel_name(c: Channel) -> &'static str {
    match c {
        Channel::Radio => "radio",
        Channel::Modem => "modem",
    }
}

/// One adaptive upstream at run time.
#[derive(Debug)]
pub struct AdaptiveRouter {
    pub config: AdaptiveConfig,
    node_mac: Mac,
    peer_mac: Mac,
    /// The modem line (an index into the world's point-to-point links) and the
    /// sender's end of it.
    pub modem_link: u32,
    pub modem_end: u8,
    sender: LinkArq,
    receiver: LinkArq,
    radio: DeliveryRatio,
    modem: DeliveryRatio,
    chooser: ChannelChooser,
    /// Frames under ARQ by frame id: the datagram, empty for a probe, and its ARQ
    /// sequence number once sent.
    in_flight: BTreeMap<u64, (Vec<u8>, Option<link_arq::Seq>)>,
    /// Datagrams the ARQ gave up on that the peer never had, for conservation (the
    /// world charges and empties it at the end).
    pub abandoned: Vec<Vec<u8>>,
    next_frame_id: u64,
    switches: Vec<SwitchRecord>,
    samples: Vec<RatioSample>,
    next_sample_ns: u64,
    counters: AdaptiveRouterCounters,
}

impl AdaptiveRouter {
    /// `node_mac` and `peer_mac` are the two routers' radio MACs.
    pub fn new(config: AdaptiveConfig, node_mac: Mac, peer_mac: Mac, modem_link: u32, modem_end: u8) -> AdaptiveRouter {
        let ratio = RatioConfig { window: config.ratio_window, min_samples: config.ratio_min_samples };
        let chooser = ChooserConfig {
            low: config.low,
            high: config.high,
            probe_interval_ns: config.probe_interval_ns,
            initial: Channel::Radio,
        };
        AdaptiveRouter {
            sender: LinkArq::new(arq_config(&config)),
            receiver: LinkArq::new(arq_config(&config)),
            radio: DeliveryRatio::new(ratio),
            modem: DeliveryRatio::new(ratio),
            chooser: ChannelChooser::new(chooser),
            config,
            node_mac,
            peer_mac,
            modem_link,
            modem_end,
            in_flight: BTreeMap::new(),
            abandoned: Vec::new(),
            next_frame_id: 0,
            switches: Vec::new(),
            samples: Vec::new(),
            next_sample_ns: 0,
            counters: AdaptiveRouterCounters::default(),
        }
    }

    /// Whether a frame `node`'s stack sends out of `port` is an upstream datagram this
    /// router takes over: anything out of the modem port, or an IPv4 frame out of the
    /// radio port to the peer's MAC (ARP and other traffic pass untouched).
    pub fn claims(&self, node: u32, port: u16, frame: &[u8]) -> bool {
        if node != self.config.node {
            return false;
        }
        if port == self.config.modem_port {
            return true;
        }
        port == self.config.radio_port
            && ethernet::Frame::new_checked(frame)
                .is_ok_and(|f| f.dst_addr() == self.peer_mac && f.ethertype() == EtherType::Ipv4)
    }

    /// Whether `frame` arriving at `node` is one of this upstream's ARQ frames.
    pub fn owns_arrival(&self, node: u32, frame: &[u8]) -> bool {
        (node == self.config.node || node == self.config.peer)
            && ethernet::Frame::new_checked(frame).is_ok_and(|f| f.ethertype() == EtherType::LocalExperimental1)
    }

    /// The channel upstream datagrams take now.
    pub fn channel(&self) -> Channel {
        self.chooser.channel()
    }

    /// When the next ARQ timeout or probe is due.
    pub fn poll_at(&self) -> Option<u64> {
        match (self.sender.poll_at(), self.chooser.poll_at()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    fn radio_frame(&self, kind: linkarq::Kind, seq: u32, payload: &[u8], from_peer: bool) -> Vec<u8> {
        let mut body = Vec::with_capacity(linkarq::HEADER_LEN + payload.len());
        linkarq::Repr { kind, sequence: seq }.encapsulate(payload, &mut body);
        let (src, dst) = if from_peer { (self.peer_mac, self.node_mac) } else { (self.node_mac, self.peer_mac) };
        ethernet_frame(src, dst, EtherType::LocalExperimental1, &body)
    }

    fn radio_tx(&self, kind: linkarq::Kind, seq: u32, payload: &[u8]) -> Tx {
        Tx {
            node: self.config.node,
            port: self.config.radio_port,
            frame: self.radio_frame(kind, seq, payload, false),
            priority: false,
        }
    }

    /// The sender's stack sent `frame` (claimed by [`Self::claims`]): where it goes now.
    pub fn send(&mut self, now: u64, frame: Vec<u8>) -> Vec<Tx> {
        let datagram = frame.get(ethernet::HEADER_LEN..).unwrap_or_default().to_vec();
        self.counters.datagrams += 1;
        match self.chooser.channel() {
            Channel::Modem => {
                self.counters.modem_datagrams += 1;
                let frame = ethernet_frame(self.node_mac, self.peer_mac, EtherType::Ipv4, &datagram);
                vec![Tx { node: self.config.node, port: self.config.modem_port, frame, priority: false }]
            }
            Channel::Radio => {
                self.counters.radio_datagrams += 1;
                self.arq_send(now, datagram)
            }
        }
    }

    fn arq_send(&mut self, now: u64, datagram: Vec<u8>) -> Vec<Tx> {
        let id = self.next_frame_id;
        self.next_frame_id += 1;
        let actions = self.sender.send(now, id, datagram.len() as u32);
        self.in_flight.insert(id, (datagram, None));
        self.transmissions(&actions)
    }

    fn transmissions(&mut self, actions: &[Action]) -> Vec<Tx> {
        let mut out = Vec::new();
        for action in actions {
            match *action {
                Action::Transmit { seq, frame_id, .. } => {
                    let entry = self.in_flight.get_mut(&frame_id).expect("a frame under ARQ");
                    entry.1 = Some(seq);
                    let datagram = &self.in_flight[&frame_id].0;
                    let kind = if datagram.is_empty() { linkarq::Kind::Probe } else { linkarq::Kind::Data };
                    out.push(self.radio_tx(kind, seq, datagram));
                }
                Action::GiveUp { frame_id, .. } => {
                    if let Some((datagram, seq)) = self.in_flight.remove(&frame_id).filter(|(d, _)| !d.is_empty()) {
                        self.counters.radio_given_up += 1;
                        // Lost unless the peer had it and only its acks were lost.
                        if !seq.is_some_and(|s| self.receiver.has_delivered(s)) {
                            self.abandoned.push(datagram);
                        }
                    }
                }
            }
        }
        out
    }

    /// The datagrams under ARQ that the peer does not have yet (conservation's census).
    pub fn held_packets(&self, mut each: impl FnMut(&[u8])) {
        for (datagram, seq) in self.in_flight.values() {
            if !datagram.is_empty() && !seq.is_some_and(|s| self.receiver.has_delivered(s)) {
                each(datagram);
            }
        }
    }

    /// Timers due at `now`: retransmissions, give-ups, a probe.
    pub fn on_timer(&mut self, now: u64) -> Vec<Tx> {
        let actions = self.sender.on_timer(now);
        for _ in actions.iter().filter(|a| a.is_timeout()) {
            self.radio.record(false);
            self.update(now);
        }
        let mut out = self.transmissions(&actions);
        if self.chooser.channel() == Channel::Modem && self.chooser.on_timer(now) {
            self.counters.probes += 1;
            out.extend(self.arq_send(now, Vec::new()));
        }
        out
    }

    /// An ARQ frame reached `node` (the peer: data or probe; the sender: an ack).
    pub fn receive(&mut self, now: u64, node: u32, frame: &[u8]) -> Received {
        let mut result = Received::default();
        let Some(packet) = frame.get(ethernet::HEADER_LEN..).and_then(|b| linkarq::Packet::new_checked(b).ok()) else {
            return result;
        };
        let Ok(repr) = linkarq::Repr::parse(&packet) else { return result };
        match repr.kind {
            linkarq::Kind::Data | linkarq::Kind::Probe if node == self.config.peer => {
                let verdict = self.receiver.on_frame(now, repr.sequence);
                if let Some(ack) = verdict.ack() {
                    let frame = self.radio_frame(linkarq::Kind::Ack, ack.seq, &[], true);
                    result.tx.push(Tx {
                        node: self.config.peer,
                        port: self.config.peer_radio_port,
                        frame,
                        priority: true,
                    });
                }
                if matches!(verdict, RxVerdict::Deliver(_)) && repr.kind == linkarq::Kind::Data {
                    result.deliver =
                        Some(ethernet_frame(self.node_mac, self.peer_mac, EtherType::Ipv4, packet.payload()));
                }
            }
            linkarq::Kind::Ack if node == self.config.node => {
                if let Some(acked) = self.sender.on_ack(now, repr.sequence) {
                    self.in_flight.remove(&acked.frame_id);
                    self.radio.record(true);
                    self.update(now);
                }
            }
            _ => {}
        }
        result
    }

    /// A frame on the modem's upstream direction reached the peer (`delivered`) or was
    /// destroyed by the line's loss model.
    pub fn modem_outcome(&mut self, now: u64, delivered: bool) {
        if delivered {
            self.counters.modem_delivered += 1;
        } else {
            self.counters.modem_lost += 1;
        }
        self.modem.record(delivered);
        self.update(now);
    }

    fn update(&mut self, now: u64) {
        let (radio, modem) = (self.radio.ratio(), self.modem.ratio());
        let switched = self.chooser.update(now, radio, modem);
        if let Some(s) = switched {
            self.switches.push(SwitchRecord {
                time_ns: now,
                from: channel_name(s.from),
                to: channel_name(s.to),
                radio_ratio: s.radio_ratio,
                modem_ratio: s.modem_ratio,
            });
        }
        if switched.is_some() || now >= self.next_sample_ns {
            self.samples.push(RatioSample {
                time_ns: now,
                radio_ratio: radio,
                modem_ratio: modem,
                channel: channel_name(self.chooser.channel()),
            });
            self.next_sample_ns = now.saturating_add(self.config.sample_interval_ns);
        }
    }

    /// The results, with the routers' names.
    pub fn result(&self, node: String, peer: String) -> AdaptiveRouterResult {
        AdaptiveRouterResult {
            node,
            peer,
            channel: channel_name(self.chooser.channel()),
            switches: self.switches.clone(),
            samples: self.samples.clone(),
            counters: self.counters,
            arq_sender: self.sender.counters().into(),
            arq_receiver: self.receiver.counters().into(),
            radio_lifetime: self.radio.lifetime_counts(),
            modem_lifetime: self.modem.lifetime_counts(),
        }
    }
}

#[cfg(test)]
mod test {
    use super::*;

    const MS: u64 = 1_000_000;

    fn config() -> AdaptiveConfig {
        AdaptiveConfig {
            node: 1,
            radio_port: 0,
            modem_port: 1,
            peer: 0,
            peer_radio_port: 0,
            initial_timeout_ns: 20 * MS,
            max_timeout_ns: 100 * MS,
            max_attempts: 7,
            ratio_window: 10,
            ratio_min_samples: 5,
            low: 0.9,
            high: 0.97,
            probe_interval_ns: 50 * MS,
            sample_interval_ns: 100 * MS,
        }
    }

    fn router() -> AdaptiveRouter {
        AdaptiveRouter::new(config(), Mac([2, 0, 0, 1, 0, 1]), Mac([2, 0, 0, 0, 0, 1]), 3, 0)
    }

    fn datagram(tag: u8) -> Vec<u8> {
        let mut d = vec![0x45, 0, 0, 20];
        d.resize(20, tag);
        ethernet_frame(Mac::default(), Mac([2, 0, 0, 0, 0, 1]), EtherType::Ipv4, &d)
    }

    #[test]
    fn claims_ipv4_to_peer_and_everything_on_the_modem() {
        let u = router();
        assert!(u.claims(1, 0, &datagram(0)));
        assert!(u.claims(1, 1, &ethernet_frame(Mac::default(), Mac::BROADCAST, EtherType::Ipv4, &[0x45])));
        let arp = ethernet_frame(Mac::default(), Mac([2, 0, 0, 0, 0, 1]), EtherType::Arp, &[0; 28]);
        assert!(!u.claims(1, 0, &arp));
        assert!(!u.claims(0, 0, &datagram(0)), "the peer's own frames are its own");
    }

    #[test]
    fn peer_delivers_once_and_acks_every_copy() {
        let mut u = router();
        let tx = u.send(0, datagram(7));
        assert_eq!(tx.len(), 1);
        let got = u.receive(MS, 0, &tx[0].frame);
        assert_eq!(got.tx.len(), 1);
        assert!(got.tx[0].priority && got.tx[0].node == 0);
        let delivered = got.deliver.expect("a new datagram goes up");
        assert_eq!(&delivered[ethernet::HEADER_LEN..], &datagram(7)[ethernet::HEADER_LEN..]);
        // The same frame again (its ack lost): acked, not delivered.
        let again = u.receive(2 * MS, 0, &tx[0].frame);
        assert!(again.deliver.is_none() && again.tx.len() == 1);
        // The ack stops the sender's timer and counts a success.
        u.receive(3 * MS, 1, &got.tx[0].frame);
        assert_eq!(u.poll_at(), None);
        assert_eq!(u.radio.lifetime_counts(), (1, 1));
    }

    #[test]
    fn lost_frames_switch_to_the_modem_then_probes_bring_it_back() {
        let mut u = router();
        // Five datagrams whose every attempt is lost: the ratio falls to 0 over ≥ 5
        // outcomes, below `low`, with the modem unknown.
        for i in 0..5 {
            u.send(i, datagram(i as u8));
        }
        let mut now = 0;
        while u.channel() == Channel::Radio {
            now = u.poll_at().unwrap();
            u.on_timer(now);
        }
        let s = &u.switches[0];
        assert_eq!((s.from, s.to), ("radio", "modem"));
        assert!(s.radio_ratio.unwrap() < 0.9);
        // On the modem, datagrams go to the modem port.
        let tx = u.send(now, datagram(9));
        assert_eq!((tx[0].port, tx[0].priority), (1, false));
        // Probes go over the radio; acked, they lift the ratio above `high`.
        let mut probes = 0;
        while u.channel() == Channel::Modem && probes < 100 {
            now = u.poll_at().unwrap();
            for t in u.on_timer(now) {
                let kind = linkarq::Packet::new_checked(&t.frame[ethernet::HEADER_LEN..]).unwrap().kind();
                if kind == linkarq::Kind::Probe {
                    probes += 1;
                    let r = u.receive(now, 0, &t.frame);
                    assert!(r.deliver.is_none(), "a probe carries no datagram");
                    for ack in r.tx {
                        u.receive(now, 1, &ack.frame);
                    }
                }
            }
        }
        assert_eq!(u.channel(), Channel::Radio);
        assert_eq!(u.switches.len(), 2);
        assert!(u.switches[1].radio_ratio.unwrap() > 0.97);
    }
}
