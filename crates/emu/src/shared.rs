//! An emulated link with many ends, sans-IO: an 802.11 cell (one end per member, the AP
//! first) driven through crates/sim's `Link` trait by a clock the caller reads.
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

use std::collections::BTreeMap;

use serde::Serialize;
use sim::config::{LinkConfig, SimConfig};
use sim::link::{Link, LinkDrop, LinkEvent, Offer, PortRef};
use sim::world::cell_of_plan;

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
}

/// A link with many ends: an 802.11 cell.
pub struct Shared {
    link: Box<dyn Link>,
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
    /// The link number `index` of `config` if it has many ends (an 802.11 cell), with the
    /// random streams of the simulator's run of `config.seed`; `Ok(None)` for a line.
    /// Every end must be a TAP.
    pub fn of_plan(config: &SimConfig, index: usize, ends: &[EndKind]) -> Result<Option<Shared>, String> {
        let i = index;
        let (link, ports): (Box<dyn Link>, Vec<PortRef>) = match config.links.get(i) {
            Some(LinkConfig::Wifi(_)) => {
                let cell = cell_of_plan(config, i).map_err(|e| e.to_string())?.expect("a cell");
                let ports = cell.members.clone();
                (Box::new(cell), ports)
            }
            Some(_) => return Ok(None),
            None => return Err(format!("links[{i}]: the plan has {} links", config.links.len())),
        };
        if ends.len() != ports.len() {
            return Err(format!(
                "links[{i}] ({}): {} ends (one device per member), {} devices given",
                link.name(),
                ports.len(),
                ends.len()
            ));
        }
        if let Some(end) = ends.iter().position(|&e| e != EndKind::Tap) {
            return Err(format!(
                "links[{i}] ({}): a {} link carries Ethernet frames: end {end} must be a TAP device (IFF_TAP), not TUN",
                link.name(),
                link.kind()
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
        self.link.name()
    }

    pub fn kind(&self) -> &'static str {
        self.link.kind()
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
        if let Offer::Dropped { reason, frame } = self.link.offer(now, from, frame.to_vec()) {
            self.counters[from].refused.entry(reason).or_default().add(frame.len());
            return;
        }
        // An idle medium may start it now (DIFS from now is a later instant).
        if self.link.poll_at().is_some_and(|at| at <= now) {
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
        self.link.poll_at().map(|at| at.max(self.now))
    }

    fn poll(&mut self, at: u64, sink: &mut Sink<'_>) {
        self.now = at;
        let mut events = std::mem::take(&mut self.events);
        self.link.poll(at, &mut events);
        for event in events.drain(..) {
            match event {
                LinkEvent::Delivered { to, frame } => {
                    let Some(end) = self.end_of(to) else { continue };
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
        self.link.held(&mut |frame| held.add(frame.len()));
        held
    }

    /// The link's own conservation, per transmitter (docs/metrics.md#conservation).
    pub fn conservation(&self) -> Vec<sim::link::LinkConservation> {
        self.link.conservation()
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
