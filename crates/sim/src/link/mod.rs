//! Links, and the one door every kind of link has: the [`Link`] trait.
//!
//! Point-to-point lines (full-duplex Ethernet, serial lines: [`line`], over the per-kind
//! serializers of [`ethernet`] and [`serial`], with the impairments of [`impair`]), the
//! 802.11 cell (`crate::wifi::cell`) and the ATM network (`crate::atm::net`) implement
//! it; PPP ([`ppp`]) is what serial lines, PPPoE and PPTP carry.
//!
//! The trait says what a driver asks of any link, with nothing of the simulator's engine
//! in it (times are `u64` nanoseconds, places are the plan's node and port indices): a
//! frame offered at an end, what the link holds, its name, drops and conservation, and,
//! sans-IO, when it wants waking and what it hands back then. The simulator's world
//! offers frames, asks backlogs and takes the census, conservation and reports through
//! the trait, but drives each kind's time by the finer steps its `poll` is made of, each
//! step one engine event in its place among the others (a line's reserved arrivals and
//! lazy end of sending, the 802.11 medium's timer and one event per frame on the air, the
//! ATM network's own events), so that the order of events at one instant is the
//! engine's and the hot path pays for no timer it does not need; a driver without an
//! engine (issue 17's real-time forwarder) arms one timer at [`Link::poll_at`] and calls
//! [`Link::poll`].

pub mod ethernet;
pub mod impair;
pub mod line;
pub mod ppp;
pub mod serial;

pub use crate::conservation::LinkConservation;

/// A port of the plan: (node index, port index in that node's `ports`).
pub type PortRef = (u32, u16);

/// What a link did with a frame offered to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Offer {
    /// Taken: queued at the end it was offered at (or handed on at once).
    Accepted,
    /// Refused (drop-tail, a policer, a shaper's queue limit, no receiver for it): the
    /// reason, as the drop log says it, and the frame as it was offered.
    Dropped { reason: String, frame: Vec<u8> },
}

/// What a link hands back when it is woken.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LinkEvent {
    /// `frame` reached port `to`, as the receiving node's stack takes it (an Ethernet
    /// frame: a serial line puts back the header it does not carry).
    Delivered { to: PortRef, frame: Vec<u8> },
    /// A frame was lost (see [`LinkDrop`]). Boxed: a drop is rare, and the common events
    /// stay 32 bytes where the drop's fields would make every event 80 (each is moved
    /// through the link's vector and the world's handler).
    Dropped(Box<LinkDrop>),
    /// The node's port finished sending a frame: a saturating source there may refill.
    Sent { node: u32 },
}

/// A frame a link lost, as [`LinkEvent::Dropped`] hands it back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkDrop {
    /// Where it was lost: a node, and its port if one.
    pub at: (u32, Option<u16>),
    /// The reason, as the drop log says it.
    pub reason: String,
    /// The packet the log describes.
    pub logged: Option<Vec<u8>>,
    /// What the flows are charged with (`None`: nothing of a flow's was lost, e.g. the
    /// receiver had it).
    pub carried: Option<Vec<u8>>,
}

impl LinkEvent {
    /// A [`LinkEvent::Dropped`] of these fields.
    pub fn dropped(at: (u32, Option<u16>), reason: String, logged: Option<Vec<u8>>, carried: Option<Vec<u8>>) -> Self {
        LinkEvent::Dropped(Box::new(LinkDrop { at, reason, logged, carried }))
    }
}

/// The one door of a link. See the module doc for how the simulator and a real-time
/// driver use it.
pub trait Link {
    /// The link's name, as the scenario gives it.
    fn name(&self) -> &str;

    /// The results' `kind` of the link: "ethernet", "serial", "wifi" or "atm".
    fn kind(&self) -> &'static str;

    /// Offers `frame`, an Ethernet frame as the node's stack wrote it, at end `from` (a
    /// line's end 0 or 1, a cell's member, the ATM network's endpoint) at `now`. An
    /// accepted frame waits for the link's next [`poll`](Self::poll).
    fn offer(&mut self, now: u64, from: usize, frame: Vec<u8>) -> Offer;

    /// As [`offer`](Self::offer), ahead of the frames waiting at `from` (a station's own
    /// short control traffic before the data it forwards). A link with one class of
    /// frames queues it as any other.
    fn offer_priority(&mut self, now: u64, from: usize, frame: Vec<u8>) -> Offer {
        self.offer(now, from, frame)
    }

    /// Frames waiting or being sent at end `from` at `now` (a saturating source keeps
    /// its node's backlog topped up by it).
    fn backlog(&mut self, now: u64, from: usize) -> usize;

    /// Every frame the link holds (queued, being sent, on its way), each handed to
    /// `each` as the link holds it (for the end-of-run census of `crate::conservation`).
    fn held(&self, each: &mut dyn FnMut(&[u8]));

    /// Frames the link dropped (refused at an end, or lost on the way), all ends.
    fn drops(&self) -> u64;

    /// The conservation identity of each of its transmitters (docs/metrics.md#conservation).
    fn conservation(&self) -> Vec<LinkConservation>;

    /// The next instant the link needs [`poll`](Self::poll)ing (one timer for the link),
    /// `None` when nothing is under way.
    fn poll_at(&self) -> Option<u64>;

    /// Does what is due at `now` and appends what it hands back, in time order.
    fn poll(&mut self, now: u64, out: &mut Vec<LinkEvent>);
}
