//! The discrete-event scheduler: a time-ordered queue of plain events and a clock.
//!
//! As small as SimPy's `core.py` (`Environment.schedule`, `peek`, `step`, `run`): the
//! engine only orders events and advances `now`; what an event means is the caller's.
//! Models stay sans-IO (STYLE.md): they return the next time they need waking and the
//! simulator turns it into one [`Engine::schedule_at`].
//!
//! # Ordering
//!
//! A priority queue keyed `(at, seq)`, where `seq` counts every scheduled event, so events at
//! equal times run in the order they were scheduled, as nexosim's `priority_queue.rs`
//! keys its heap by `(key, insertion id)`. That order and integer time make a run a
//! pure function of its inputs: no hash order, no wall clock, no float decides anything.
//!
//! The queue holds only 16-byte keys — `at` and a tag packing `seq` (high 40 bits) with
//! the index of the slot holding the event (low 24 bits); since `seq` is unique, ordering
//! by the tag is ordering by `seq`. A short queue (the usual one: a few links and
//! timers) is a sorted vector; a long one is a 4-ary heap, so a node's children share
//! one or two cache lines and the tree is half as deep as a binary one. Compared with
//! `std::collections::BinaryHeap` of whole events, this kept a 100 000-event queue
//! within L2 and ran the hold benchmark several times faster (benches/engine.rs).
//! The packing caps one engine at 2⁴⁰ ≈ 1.1 × 10¹² scheduled events over its life and
//! 2²⁴ ≈ 16.7 M queued at once; passing either panics with that message (a
//! [`Budget`] stops a runaway run long before).
//!
//! # Cancellation
//!
//! As ns-3's schedulers do, [`Engine::cancel`] leaves the key in the heap as a tombstone
//! that is discarded when it reaches the top; removing from the middle of a heap would
//! cost O(log n) and a position index per entry. Each queued event lives in a *slot*
//! that records its `seq`; an [`EventId`] is `(seq, slot)`. Cancelling is one compare
//! and one store, O(1); a stale id (already run, already cancelled, or its slot reused)
//! no longer matches its slot's `seq` and is refused. Slots are recycled through a free
//! list, so nothing is allocated per event once the heap and the slot table have
//! reached their working size. A small queue (at most `EAGER_CANCEL_MAX` keys, as a
//! simulation of a few links and timers keeps) is the exception: there a scan finds the
//! key and it is removed at once, which costs less than popping its tombstone later.
//! Which events run, and in what order, is the same either way.
//!
//! # Reservations
//!
//! [`Engine::reserve_at`] takes an event's place in the order — its `(at, seq)` — now,
//! and [`Engine::schedule_reserved`] gives it the event later: it then runs exactly
//! where an event scheduled at the reservation would have. A FIFO of events that
//! become due in the order they were reserved (frames in flight on a link with a
//! constant delay) thus keeps only its head in the heap, reserving each entry when it
//! joins and scheduling it when it becomes the head. The caller must schedule a
//! reservation before the engine runs past it; [`Engine::schedule_reserved`] panics
//! if it is already behind the last event returned. Reservations not yet scheduled
//! count as pending, for the budget too, until scheduled or given up
//! ([`Engine::forget`]). A reservation may also stand for an event that is only needed
//! if something happens before its time: [`Engine::has_passed`] tells whether its
//! place is behind, i.e. whether the event would have run already.
//!
//! # Budgets
//!
//! A [`Budget`] bounds the events processed and the queue's length (tombstones
//! included: it is a memory bound). [`Engine::step`] checks both before it pops and
//! returns an [`EngineError`] naming the budget; the engine's state is left as it was,
//! so the caller can report it, e.g. with counts from [`Engine::pending_events`].

use std::fmt;

use crate::time::{Duration, SimTime};

/// Names one scheduled event, for [`Engine::cancel`]. Only meaningful to the engine
/// that issued it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct EventId {
    /// Insertion number of the event; unique over the engine's life.
    seq: u64,
    /// Index into the engine's slot table while the event is queued.
    slot: u32,
}

impl EventId {
    /// The event's insertion number: events at equal times run in increasing `seq`.
    pub fn seq(self) -> u64 {
        self.seq
    }
}

/// A place in the event order, `(at, seq)`, taken by [`Engine::reserve_at`] for an
/// event given later by [`Engine::schedule_reserved`].
/// The default is time 0's first place: a tag to overwrite, never reserved.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct Reservation {
    at: SimTime,
    seq: u64,
}

impl Reservation {
    /// When the reserved event is due.
    pub fn at(self) -> SimTime {
        self.at
    }
}

/// Limits that stop a run which has gone wrong instead of letting it exhaust memory
/// or time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Budget {
    /// Events [`Engine::step`] may return over the engine's life.
    pub max_events: u64,
    /// Entries the event queue may hold, cancelled ones not yet discarded included.
    pub max_pending: usize,
}

impl Budget {
    /// No limit on either (beyond the engine's hard caps, see the module doc).
    pub const UNLIMITED: Budget = Budget { max_events: u64::MAX, max_pending: usize::MAX };
}

impl Default for Budget {
    fn default() -> Budget {
        Budget::UNLIMITED
    }
}

/// Why the engine refused to schedule or to go on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EngineError {
    /// `at` (an event's time, or a `run_until` stop time) is earlier than `now`.
    ScheduleInPast { at: SimTime, now: SimTime },
    /// [`Budget::max_events`] events have been processed and another is due.
    EventBudgetExceeded { limit: u64, now: SimTime },
    /// The event queue holds more than [`Budget::max_pending`] entries.
    PendingBudgetExceeded { pending: usize, limit: usize, now: SimTime },
}

impl fmt::Display for EngineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EngineError::ScheduleInPast { at, now } => {
                write!(f, "cannot schedule at {at}: the simulation is already at {now}")
            }
            EngineError::EventBudgetExceeded { limit, now } => {
                write!(f, "event budget exceeded: {limit} events processed by {now} and more are due")
            }
            EngineError::PendingBudgetExceeded { pending, limit, now } => write!(
                f,
                "pending-event budget exceeded: the engine's event queue grew to {pending} \
                 entries (limit {limit}) at {now}"
            ),
        }
    }
}

impl std::error::Error for EngineError {}

const SLOT_BITS: u32 = 24;
const SLOT_MASK: u64 = (1 << SLOT_BITS) - 1;
/// Slots available: 2²⁴.
const MAX_SLOTS: usize = 1 << SLOT_BITS;
/// `seq` values available: 2⁴⁰.
const MAX_SEQ: u64 = 1 << (64 - SLOT_BITS);

/// A heap key: `at` in the high 64 bits, the tag `seq << SLOT_BITS | slot` in the low
/// 64, so one `u128` comparison orders by `(at, seq)` (and compiles without branches,
/// which matters when picking the least of four children).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Key(u128);

impl Key {
    #[inline]
    fn new(at: SimTime, seq: u64, slot: u32) -> Key {
        Key(u128::from(at.0) << 64 | u128::from(seq << SLOT_BITS | u64::from(slot)))
    }
    #[inline]
    fn at(self) -> SimTime {
        SimTime((self.0 >> 64) as u64)
    }
    #[inline]
    fn seq(self) -> u64 {
        (self.0 as u64) >> SLOT_BITS
    }
    #[inline]
    fn slot(self) -> usize {
        (self.0 as u64 & SLOT_MASK) as usize
    }
}

/// The queued keys, least first out. A simulation of a few links and timers keeps a
/// handful queued (4 to 7 in the CUBIC benchmark), where a vector sorted in descending
/// order is cheapest: the least key is popped off its end and a new key is moved in
/// past the few greater ones. Past [`SORTED_MAX`] keys the vector is reversed, which
/// makes it a valid 4-ary min-heap (Johnson 1975; d = 4 is the usual sweet spot for
/// cache lines, e.g. LaMarca & Ladner 1996; children of `i` are `4i + 1 ..= 4i + 4`),
/// and it stays one until it shrinks to [`SORTED_MIN`] keys, when it is sorted again.
/// The gap between the two sizes keeps a queue near one size from switching at every
/// event. Either way the keys come out in the same order: it depends on the keys alone.
#[derive(Debug, Default)]
struct KeyHeap {
    keys: Vec<Key>,
    /// Whether `keys` is a heap (else sorted in descending order).
    heap: bool,
}

/// A sorted queue longer than this becomes a heap.
const SORTED_MAX: usize = 24;
/// A heap this short becomes a sorted queue again.
const SORTED_MIN: usize = 8;

impl KeyHeap {
    const ARITY: usize = 4;

    #[inline]
    fn len(&self) -> usize {
        self.keys.len()
    }

    #[inline]
    fn peek(&self) -> Option<Key> {
        if self.heap {
            self.keys.first().copied()
        } else {
            self.keys.last().copied()
        }
    }

    #[inline]
    fn push(&mut self, key: Key) {
        if !self.heap {
            if self.keys.len() < SORTED_MAX {
                // Insertion into the descending order: move the greater keys' hole down.
                let mut hole = self.keys.len();
                self.keys.push(key);
                while hole > 0 && self.keys[hole - 1] < key {
                    self.keys[hole] = self.keys[hole - 1];
                    hole -= 1;
                }
                self.keys[hole] = key;
                return;
            }
            // Ascending order is heap order.
            self.keys.reverse();
            self.heap = true;
        }
        // Move the hole up from the new leaf instead of swapping at every level.
        let leaf = self.keys.len();
        self.keys.push(key);
        let hole = Self::sift_up(&mut self.keys, leaf, key);
        self.keys[hole] = key;
    }

    /// Moves the hole at `hole` up past every parent greater than `key`, shifting
    /// each such parent down into it, and returns where `key` belongs (not written).
    #[inline(always)]
    fn sift_up(keys: &mut [Key], mut hole: usize, key: Key) -> usize {
        while hole > 0 {
            let parent = (hole - 1) / Self::ARITY;
            if keys[parent] <= key {
                break;
            }
            keys[hole] = keys[parent];
            hole = parent;
        }
        hole
    }

    #[inline]
    fn pop(&mut self) -> Option<Key> {
        if !self.heap {
            return self.keys.pop();
        }
        let top = self.heap_pop();
        if self.keys.len() <= SORTED_MIN {
            self.keys.sort_unstable_by(|a, b| b.cmp(a));
            self.heap = false;
        }
        top
    }

    /// Floyd's bottom-up deletion: move the hole from the root down to a leaf along
    /// the least children, then sift the last key up from there. The last key is a
    /// leaf's, so it usually belongs near the bottom, and the descent skips one
    /// unpredictable comparison per level.
    fn heap_pop(&mut self) -> Option<Key> {
        let last = self.keys.pop()?;
        let Some(&top) = self.keys.first() else { return Some(last) };
        let keys = &mut self.keys[..];
        let len = keys.len();
        let mut hole = 0;
        loop {
            let first_child = hole * Self::ARITY + 1;
            let least = if first_child + Self::ARITY <= len {
                // All four children exist: a branch-free tournament.
                let c = &keys[first_child..first_child + Self::ARITY];
                let left = if c[1] < c[0] { 1 } else { 0 };
                let right = if c[3] < c[2] { 3 } else { 2 };
                first_child + if c[right] < c[left] { right } else { left }
            } else if first_child < len {
                (first_child + 1..len).fold(
                    first_child,
                    |least, child| {
                        if keys[child] < keys[least] {
                            child
                        } else {
                            least
                        }
                    },
                )
            } else {
                break;
            };
            keys[hole] = keys[least];
            hole = least;
        }
        let hole = Self::sift_up(keys, hole, last);
        keys[hole] = last;
        Some(top)
    }

    /// Removes the key at `index` (below `len`) of `keys`.
    fn remove_at(&mut self, index: usize) {
        if !self.heap {
            self.keys.remove(index);
            return;
        }
        // The last key fills the hole and moves up or down to its place.
        let last = self.keys.pop().expect("a key to remove");
        let len = self.keys.len();
        if index == len {
            return;
        }
        let keys = &mut self.keys[..];
        // Up, if the last key is less than the hole's parent (it came from another
        // subtree)...
        let mut hole = Self::sift_up(keys, index, last);
        // ...else down, while a child is less.
        if hole == index {
            loop {
                let first_child = hole * Self::ARITY + 1;
                let Some(least) = (first_child..len.min(first_child + Self::ARITY)).min_by_key(|&c| keys[c]) else {
                    break;
                };
                if keys[least] >= last {
                    break;
                }
                keys[hole] = keys[least];
                hole = least;
            }
        }
        keys[hole] = last;
    }
}

/// Where a queued event waits. `seq` is the live event's, or a `SLOT_*` marker.
#[derive(Debug)]
struct Slot<E> {
    seq: u64,
    event: Option<E>,
}

/// A slot's `seq` when no event holds it.
const SLOT_VACANT: u64 = u64::MAX;
/// A slot's `seq` when its event was cancelled and its key is a tombstone in the heap.
const SLOT_CANCELLED: u64 = u64::MAX - 1;
/// A cancel in a queue of at most this many keys removes the event's key at once: a
/// scan of so few keys costs less than popping the tombstone later, and the queue does
/// not carry it meanwhile.
const EAGER_CANCEL_MAX: usize = 32;

/// The scheduler, generic over a plain event type `E` (the simulator uses a small
/// `Copy` struct). No boxing, no per-event allocation in steady state.
#[derive(Debug)]
pub struct Engine<E> {
    now: SimTime,
    next_seq: u64,
    heap: KeyHeap,
    slots: Vec<Slot<E>>,
    free_slots: Vec<u32>,
    /// Tombstones still in `heap`.
    cancelled_in_queue: usize,
    /// Reservations not yet scheduled.
    reserved: usize,
    /// The key of the event last returned by `step`: a reservation scheduled behind it
    /// would run out of order.
    last_key: Key,
    events_processed: u64,
    budget: Budget,
}

impl<E> Default for Engine<E> {
    fn default() -> Self {
        Engine::new()
    }
}

impl<E> Engine<E> {
    /// An engine at time zero with no budget.
    pub fn new() -> Engine<E> {
        Engine {
            now: SimTime::ZERO,
            next_seq: 0,
            heap: KeyHeap::default(),
            slots: Vec::new(),
            free_slots: Vec::new(),
            cancelled_in_queue: 0,
            reserved: 0,
            last_key: Key(0),
            events_processed: 0,
            budget: Budget::UNLIMITED,
        }
    }

    /// An engine that stops with an error after `max_events` events, or when its queue
    /// holds more than `max_pending` entries.
    pub fn with_budget(max_events: u64, max_pending: usize) -> Engine<E> {
        Engine { budget: Budget { max_events, max_pending }, ..Engine::new() }
    }

    /// Reserves room for `additional` more queued events, so a run of known size
    /// allocates once.
    pub fn reserve(&mut self, additional: usize) {
        self.heap.keys.reserve(additional);
        self.slots.reserve(additional);
        self.free_slots.reserve(additional);
    }

    pub fn budget(&self) -> Budget {
        self.budget
    }

    /// The current simulated time: that of the event last returned by `step`, or the
    /// stop time of the last `run_until`.
    #[inline]
    pub fn now(&self) -> SimTime {
        self.now
    }

    /// Events returned by `step` so far (cancelled events do not count).
    #[inline]
    pub fn events_processed(&self) -> u64 {
        self.events_processed
    }

    /// Events scheduled (or reserved) and neither run nor cancelled.
    #[inline]
    pub fn pending(&self) -> usize {
        self.heap.len() - self.cancelled_in_queue + self.reserved
    }

    /// Entries in the event queue: pending events (reservations included) plus
    /// cancelled ones not yet discarded. This is what [`Budget::max_pending`] bounds.
    #[inline]
    pub fn queue_len(&self) -> usize {
        self.heap.len() + self.reserved
    }

    /// Whether no event is pending.
    pub fn is_empty(&self) -> bool {
        self.pending() == 0
    }

    /// Schedules `event` at `at`. Events at equal times run in the order scheduled.
    /// `at == now` is allowed and runs after the events already due now.
    pub fn schedule_at(&mut self, at: SimTime, event: E) -> Result<EventId, EngineError> {
        if at < self.now {
            return Err(EngineError::ScheduleInPast { at, now: self.now });
        }
        Ok(self.push(at, event))
    }

    /// Schedules `event` at `now + delay`. Panics if that passes [`SimTime::MAX`]
    /// (584 years: a model bug, not a run to recover).
    #[inline]
    pub fn schedule_in(&mut self, delay: Duration, event: E) -> EventId {
        let at = self.now.checked_add(delay).expect("schedule_in: simulated time overflows u64 ns");
        self.push(at, event)
    }

    /// Takes the place in the event order of an event at `at` scheduled now, for an
    /// event given later by [`schedule_reserved`](Self::schedule_reserved) (see the
    /// module doc). It counts as pending until then.
    #[inline]
    pub fn reserve_at(&mut self, at: SimTime) -> Result<Reservation, EngineError> {
        if at < self.now {
            return Err(EngineError::ScheduleInPast { at, now: self.now });
        }
        let seq = self.take_seq();
        self.reserved += 1;
        Ok(Reservation { at, seq })
    }

    /// Schedules `event` in the place `reservation` took: it runs where an event
    /// scheduled by [`reserve_at`](Self::reserve_at) would have. Panics if the engine
    /// has already returned an event ordered after that place (the reservation was
    /// scheduled too late), or if it was scheduled already.
    #[inline(always)]
    pub fn schedule_reserved(&mut self, reservation: Reservation, event: E) -> EventId {
        let Reservation { at, seq } = reservation;
        assert!(
            at >= self.now && Key::new(at, seq, 0) > self.last_key,
            "a reservation for {at} was scheduled after the engine ran past it (now {})",
            self.now
        );
        assert!(self.reserved > 0, "schedule_reserved without a reservation outstanding");
        self.reserved -= 1;
        self.push_seq(at, seq, event)
    }

    /// Whether the engine has run past `reservation`: the event being handled (the last
    /// one `step` returned) comes after its place, or the clock is past its time (a
    /// `run_until` stop), so an event scheduled there would already have run.
    #[inline]
    pub fn has_passed(&self, reservation: Reservation) -> bool {
        reservation.at < self.now || Key::new(reservation.at, reservation.seq, 0) < self.last_key
    }

    /// Gives up a reservation that will never be scheduled (it stops counting as
    /// pending).
    #[inline]
    pub fn forget(&mut self, reservation: Reservation) {
        let _ = reservation;
        assert!(self.reserved > 0, "forget without a reservation outstanding");
        self.reserved -= 1;
    }

    #[inline]
    fn take_seq(&mut self) -> u64 {
        let seq = self.next_seq;
        assert!(seq < MAX_SEQ, "the engine has scheduled 2^40 events, its lifetime cap");
        self.next_seq += 1;
        seq
    }

    #[inline]
    fn push(&mut self, at: SimTime, event: E) -> EventId {
        let seq = self.take_seq();
        self.push_seq(at, seq, event)
    }

    #[inline]
    fn push_seq(&mut self, at: SimTime, seq: u64, event: E) -> EventId {
        let slot = match self.free_slots.pop() {
            Some(slot) => {
                self.slots[slot as usize] = Slot { seq, event: Some(event) };
                slot
            }
            None => {
                assert!(self.slots.len() < MAX_SLOTS, "more than 2^24 events queued at once");
                self.slots.push(Slot { seq, event: Some(event) });
                (self.slots.len() - 1) as u32
            }
        };
        self.heap.push(Key::new(at, seq, slot));
        EventId { seq, slot }
    }

    /// Cancels a pending event: it will never be returned, and it is dropped now.
    /// Returns `false`, and does nothing, if the event already ran or was already
    /// cancelled. O(1) in a large queue (a tombstone stays, see the module doc); in a
    /// queue of at most [`EAGER_CANCEL_MAX`] keys the key is removed at once.
    pub fn cancel(&mut self, id: EventId) -> bool {
        match self.slots.get_mut(id.slot as usize) {
            Some(slot) if slot.seq == id.seq => {
                slot.event = None;
                if self.heap.len() <= EAGER_CANCEL_MAX {
                    let tag = id.seq << SLOT_BITS | u64::from(id.slot);
                    let index = self
                        .heap
                        .keys
                        .iter()
                        .position(|k| k.0 as u64 == tag)
                        .expect("a pending event's key is in the heap");
                    self.heap.remove_at(index);
                    self.release(id.slot as usize);
                } else {
                    slot.seq = SLOT_CANCELLED;
                    self.cancelled_in_queue += 1;
                }
                true
            }
            _ => false,
        }
    }

    /// Whether the event is still to run (scheduled, not run, not cancelled).
    pub fn is_pending(&self, id: EventId) -> bool {
        self.slots.get(id.slot as usize).is_some_and(|slot| slot.seq == id.seq)
    }

    /// Pops tombstones off the top of the heap until a live event (or nothing) is there.
    #[inline]
    fn discard_cancelled_head(&mut self) {
        while self.cancelled_in_queue > 0 {
            let Some(top) = self.heap.peek() else { break };
            if self.slots[top.slot()].seq != SLOT_CANCELLED {
                break;
            }
            self.heap.pop();
            self.release(top.slot());
            self.cancelled_in_queue -= 1;
        }
    }

    /// Frees a slot for reuse, returning the event it held.
    #[inline]
    fn release(&mut self, slot: usize) -> Option<E> {
        let held = &mut self.slots[slot];
        held.seq = SLOT_VACANT;
        self.free_slots.push(slot as u32);
        held.event.take()
    }

    /// The next event to run and its time, without running it. Takes `&mut self`
    /// because it discards cancelled events found on top of the queue.
    pub fn peek(&mut self) -> Option<(SimTime, &E)> {
        self.discard_cancelled_head();
        let top = self.heap.peek()?;
        let event = self.slots[top.slot()].event.as_ref().expect("a live slot holds its event");
        Some((top.at(), event))
    }

    /// The time of the next event to run.
    pub fn peek_time(&mut self) -> Option<SimTime> {
        self.peek().map(|(at, _)| at)
    }

    /// Every pending event and its time, in no particular order (for diagnostics, e.g.
    /// counting which component filled the queue when a budget stopped the run).
    pub fn pending_events(&self) -> impl Iterator<Item = (SimTime, &E)> + '_ {
        self.heap.keys.iter().filter_map(|key| {
            let slot = &self.slots[key.slot()];
            match &slot.event {
                Some(event) if slot.seq == key.seq() => Some((key.at(), event)),
                _ => None,
            }
        })
    }

    /// Runs the clock to the next event and returns it, or `Ok(None)` if no event is
    /// pending. Fails, changing nothing, if a budget is exceeded.
    #[inline]
    pub fn step(&mut self) -> Result<Option<(SimTime, E)>, EngineError> {
        self.step_before(None)
    }

    /// The next event if it is due strictly before `until`, else `None` (it stays
    /// queued): `peek_time` and `step` in one look at the queue's head.
    #[inline]
    pub fn step_if_before(&mut self, until: SimTime) -> Result<Option<(SimTime, E)>, EngineError> {
        self.discard_cancelled_head();
        match self.heap.peek() {
            Some(top) if top.at() < until => {
                self.check_pending()?;
                self.pop_top(top).map(Some)
            }
            _ => Ok(None),
        }
    }

    /// `step`, but only for an event strictly before `until` (when given).
    #[inline]
    fn step_before(&mut self, until: Option<SimTime>) -> Result<Option<(SimTime, E)>, EngineError> {
        self.check_pending()?;
        self.discard_cancelled_head();
        let Some(top) = self.heap.peek() else { return Ok(None) };
        if until.is_some_and(|until| top.at() >= until) {
            return Ok(None);
        }
        self.pop_top(top).map(Some)
    }

    /// The [`Budget::max_pending`] check made before each event.
    #[inline]
    fn check_pending(&self) -> Result<(), EngineError> {
        let queued = self.queue_len();
        if queued > self.budget.max_pending {
            return Err(EngineError::PendingBudgetExceeded {
                pending: queued,
                limit: self.budget.max_pending,
                now: self.now,
            });
        }
        Ok(())
    }

    /// Pops `top`, the live key on top of the heap, if the event budget allows.
    #[inline]
    fn pop_top(&mut self, top: Key) -> Result<(SimTime, E), EngineError> {
        if self.events_processed >= self.budget.max_events {
            return Err(EngineError::EventBudgetExceeded { limit: self.budget.max_events, now: self.now });
        }
        self.heap.pop();
        let event = self.release(top.slot()).expect("a live slot holds its event");
        self.now = top.at();
        self.last_key = top;
        self.events_processed += 1;
        Ok((top.at(), event))
    }

    /// Runs every event due strictly before `until`, handing each to `handler`
    /// (which may schedule and cancel), then sets `now = until`. Events at `until` or
    /// later stay queued, as in SimPy's `run(until=…)`, so consecutive calls cover
    /// `[0, t1)`, `[t1, t2)`, … without overlap. Returns the number of events run.
    pub fn run_until<F>(&mut self, until: SimTime, mut handler: F) -> Result<u64, EngineError>
    where
        F: FnMut(&mut Engine<E>, SimTime, E),
    {
        if until < self.now {
            return Err(EngineError::ScheduleInPast { at: until, now: self.now });
        }
        let start = self.events_processed;
        while let Some((at, event)) = self.step_before(Some(until))? {
            handler(self, at, event);
        }
        self.now = until;
        Ok(self.events_processed - start)
    }

    /// Runs until no event is pending; `now` is left at the last event's time.
    /// Returns the number of events run.
    pub fn run<F>(&mut self, mut handler: F) -> Result<u64, EngineError>
    where
        F: FnMut(&mut Engine<E>, SimTime, E),
    {
        let start = self.events_processed;
        while let Some((at, event)) = self.step()? {
            handler(self, at, event);
        }
        Ok(self.events_processed - start)
    }
}

#[cfg(test)]
mod test {
    use super::*;
    use crate::rng::RunSeed;
    use proptest::prelude::*;

    fn t(ns: u64) -> SimTime {
        SimTime(ns)
    }

    /// Drains the engine, returning (time, event) pairs.
    fn drain<E>(engine: &mut Engine<E>) -> Vec<(u64, E)> {
        let mut out = Vec::new();
        while let Some((at, e)) = engine.step().unwrap() {
            out.push((at.0, e));
        }
        out
    }

    #[test]
    fn pops_in_time_order() {
        let mut engine = Engine::new();
        for (at, name) in [(30, 'c'), (10, 'a'), (20, 'b')] {
            engine.schedule_at(t(at), name).unwrap();
        }
        assert_eq!(drain(&mut engine), vec![(10, 'a'), (20, 'b'), (30, 'c')]);
        assert_eq!(engine.now(), t(30));
        assert_eq!(engine.events_processed(), 3);
    }

    #[test]
    fn equal_times_run_in_insertion_order() {
        let mut engine = Engine::new();
        for i in 0..100u32 {
            engine.schedule_at(t(5), i).unwrap();
        }
        engine.schedule_at(t(1), 1000).unwrap();
        let order: Vec<u32> = drain(&mut engine).into_iter().map(|(_, e)| e).collect();
        let mut expected = vec![1000];
        expected.extend(0..100);
        assert_eq!(order, expected);
    }

    #[test]
    fn event_scheduled_now_runs_after_those_already_due_now() {
        let mut engine = Engine::new();
        engine.schedule_at(t(10), "first").unwrap();
        engine.schedule_at(t(10), "second").unwrap();
        let mut seen = Vec::new();
        engine
            .run(|engine, at, e| {
                seen.push(e);
                if e == "first" {
                    engine.schedule_at(at, "scheduled-by-first").unwrap();
                }
            })
            .unwrap();
        assert_eq!(seen, ["first", "second", "scheduled-by-first"]);
    }

    #[test]
    fn cancel_skips_the_event() {
        let mut engine = Engine::new();
        let a = engine.schedule_at(t(1), 'a').unwrap();
        let b = engine.schedule_at(t(2), 'b').unwrap();
        let c = engine.schedule_at(t(3), 'c').unwrap();
        assert!(engine.cancel(b));
        assert!(!engine.cancel(b), "second cancel is refused");
        assert!(!engine.is_pending(b));
        assert_eq!(engine.pending(), 2);
        assert!(engine.cancel(a));
        assert_eq!(engine.peek(), Some((t(3), &'c')));
        assert_eq!(drain(&mut engine), vec![(3, 'c')]);
        assert!(!engine.cancel(c), "an event that ran cannot be cancelled");
        assert_eq!(engine.events_processed(), 1);
        assert!(engine.is_empty());
    }

    #[test]
    fn stale_id_does_not_cancel_the_event_reusing_its_slot() {
        let mut engine = Engine::new();
        let old = engine.schedule_at(t(1), 'x').unwrap();
        assert_eq!(engine.step().unwrap(), Some((t(1), 'x')));
        let new = engine.schedule_at(t(2), 'y').unwrap();
        assert_eq!(old.slot, new.slot, "the slot is recycled");
        assert!(!engine.cancel(old));
        assert_eq!(drain(&mut engine), vec![(2, 'y')]);
    }

    /// A reserved event runs where one scheduled at the reservation would have, even
    /// when scheduled after later events, and counts as pending meanwhile.
    #[test]
    fn reservation_keeps_its_place_in_the_order() {
        let mut engine = Engine::new();
        let first = engine.reserve_at(t(10)).unwrap();
        let second = engine.reserve_at(t(20)).unwrap();
        engine.schedule_at(t(10), 'b').unwrap();
        engine.schedule_at(t(20), 'd').unwrap();
        engine.schedule_at(t(5), 'a').unwrap();
        assert_eq!(engine.pending(), 5);
        assert_eq!(engine.queue_len(), 5);
        engine.schedule_reserved(first, 'A');
        assert_eq!(engine.step().unwrap(), Some((t(5), 'a')));
        assert_eq!(engine.step().unwrap(), Some((t(10), 'A')), "reserved before 'b' at the same time");
        // Scheduled when the event before it has run: still ahead of 'd'.
        engine.schedule_reserved(second, 'C');
        assert_eq!(drain(&mut engine), vec![(10, 'b'), (20, 'C'), (20, 'd')]);
        assert!(engine.is_empty());
        assert_eq!(engine.reserve_at(t(19)), Err(EngineError::ScheduleInPast { at: t(19), now: t(20) }));
    }

    #[test]
    fn has_passed_compares_with_the_event_being_handled() {
        let mut engine = Engine::new();
        engine.schedule_at(t(10), 'a').unwrap();
        let same_time_before = engine.reserve_at(t(10)).unwrap();
        engine.schedule_at(t(10), 'b').unwrap();
        let same_time_after = engine.reserve_at(t(10)).unwrap();
        let later = engine.reserve_at(t(11)).unwrap();
        assert!(!engine.has_passed(same_time_before), "nothing has run");
        assert_eq!(engine.step().unwrap(), Some((t(10), 'a')));
        assert!(!engine.has_passed(same_time_before));
        assert_eq!(engine.step().unwrap(), Some((t(10), 'b')));
        assert!(engine.has_passed(same_time_before), "'b' was scheduled after it");
        assert!(!engine.has_passed(same_time_after) && !engine.has_passed(later));
        engine.run_until(t(20), |_, _, _| {}).unwrap();
        assert!(engine.has_passed(later), "the clock is past it");
        for r in [same_time_before, same_time_after, later] {
            engine.forget(r);
        }
        assert!(engine.is_empty());
    }

    #[test]
    #[should_panic(expected = "after the engine ran past it")]
    fn reservation_scheduled_too_late_panics() {
        let mut engine = Engine::new();
        let late = engine.reserve_at(t(10)).unwrap();
        engine.schedule_at(t(10), 'x').unwrap();
        engine.step().unwrap();
        engine.schedule_reserved(late, 'y');
    }

    #[test]
    fn reservations_count_toward_the_pending_budget() {
        let mut engine = Engine::with_budget(u64::MAX, 1);
        engine.schedule_at(t(1), ()).unwrap();
        let r = engine.reserve_at(t(2)).unwrap();
        assert!(matches!(engine.step(), Err(EngineError::PendingBudgetExceeded { pending: 2, limit: 1, .. })));
        engine.schedule_reserved(r, ());
        assert_eq!(engine.queue_len(), 2, "scheduling a reservation adds no entry");
    }

    #[test]
    fn schedule_in_the_past_is_an_error() {
        let mut engine = Engine::new();
        engine.schedule_at(t(100), ()).unwrap();
        engine.step().unwrap();
        assert_eq!(engine.schedule_at(t(99), ()), Err(EngineError::ScheduleInPast { at: t(99), now: t(100) }));
        assert!(engine.schedule_at(t(100), ()).is_ok());
        let id = engine.schedule_in(Duration(5), ());
        assert!(engine.is_pending(id));
        assert_eq!(engine.run_until(t(50), |_, _, _| {}), Err(EngineError::ScheduleInPast { at: t(50), now: t(100) }));
        let message = EngineError::ScheduleInPast { at: t(99), now: t(100) }.to_string();
        assert_eq!(message, "cannot schedule at 99 ns: the simulation is already at 100 ns");
    }

    #[test]
    fn run_until_stops_before_until_and_leaves_later_events() {
        let mut engine = Engine::new();
        for at in [10, 20, 30, 40] {
            engine.schedule_at(t(at), at).unwrap();
        }
        let mut seen = Vec::new();
        let ran = engine.run_until(t(30), |_, at, e| seen.push((at.0, e))).unwrap();
        assert_eq!(ran, 2);
        assert_eq!(seen, vec![(10, 10), (20, 20)]);
        assert_eq!(engine.now(), t(30), "the clock advances to the stop time");
        assert_eq!(engine.pending(), 2);
        // An event can still be scheduled at the stop time, and runs after the one queued there.
        engine.schedule_at(t(30), 31).unwrap();
        let ran = engine.run_until(t(35), |_, at, e| seen.push((at.0, e))).unwrap();
        assert_eq!(ran, 2);
        assert_eq!(seen[2..], [(30, 30), (30, 31)]);
        // With nothing due, the clock still moves to the stop time.
        engine.run_until(t(39), |_, _, _| unreachable!()).unwrap();
        assert_eq!(engine.now(), t(39));
        assert_eq!(engine.peek_time(), Some(t(40)));
    }

    #[test]
    fn handler_can_schedule_and_cancel() {
        // A retransmission timer armed by each send and cancelled by each ack.
        #[derive(Clone, Copy, Debug, PartialEq)]
        enum Ev {
            Send(u32),
            Ack(u32),
            Timeout(u32),
        }
        let mut engine = Engine::new();
        engine.schedule_at(t(0), Ev::Send(0)).unwrap();
        let mut timers = std::collections::BTreeMap::new();
        let mut log = Vec::new();
        engine
            .run(|engine, _, ev| {
                log.push(ev);
                match ev {
                    Ev::Send(n) => {
                        timers.insert(n, engine.schedule_in(Duration(100), Ev::Timeout(n)));
                        // Every third segment's ack is lost.
                        if n % 3 != 2 {
                            engine.schedule_in(Duration(10), Ev::Ack(n));
                        }
                    }
                    Ev::Ack(n) => {
                        assert!(engine.cancel(timers[&n]));
                        if n < 4 {
                            engine.schedule_in(Duration(1), Ev::Send(n + 1));
                        }
                    }
                    Ev::Timeout(_) => {}
                }
            })
            .unwrap();
        let timeouts: Vec<_> = log.iter().filter(|e| matches!(e, Ev::Timeout(_))).collect();
        assert_eq!(timeouts, [&Ev::Timeout(2)]);
        assert_eq!(engine.now(), t(122), "send 2 at 22, its timer fires at 122");
    }

    #[test]
    fn event_budget_stops_with_its_error() {
        let mut engine = Engine::with_budget(3, usize::MAX);
        engine.schedule_at(t(1), ()).unwrap();
        let err = engine.run(|engine, _, ()| {
            engine.schedule_in(Duration(1), ());
        });
        assert_eq!(err, Err(EngineError::EventBudgetExceeded { limit: 3, now: t(3) }));
        assert_eq!(engine.events_processed(), 3);
        assert_eq!(engine.pending(), 1, "the run stopped without popping");
        assert!(err.unwrap_err().to_string().starts_with("event budget exceeded: 3 events"));
        // A budget is not exceeded by an empty queue.
        let mut quiet: Engine<()> = Engine::with_budget(0, 0);
        assert_eq!(quiet.step(), Ok(None));
    }

    #[test]
    fn pending_budget_names_the_event_queue() {
        let mut engine = Engine::with_budget(u64::MAX, 10);
        engine.schedule_at(t(1), 0u32).unwrap();
        // Each event schedules two more: the queue doubles until the budget stops it.
        let err = engine
            .run(|engine, _, n| {
                engine.schedule_in(Duration(1), n + 1);
                engine.schedule_in(Duration(1), n + 1);
            })
            .unwrap_err();
        match err {
            EngineError::PendingBudgetExceeded { pending, limit: 10, .. } => assert_eq!(pending, 11),
            other => panic!("wrong error {other:?}"),
        }
        assert!(err.to_string().contains("event queue grew to 11 entries (limit 10)"));
        assert_eq!(engine.step(), Err(err), "the engine stays stopped");
        assert_eq!(engine.pending_events().count(), 11);
    }

    #[test]
    fn tombstones_count_toward_the_pending_budget_until_discarded() {
        // A queue larger than EAGER_CANCEL_MAX keeps tombstones.
        let n = EAGER_CANCEL_MAX as u64 + 2;
        let mut engine = Engine::with_budget(u64::MAX, n as usize - 1);
        let ids: Vec<_> = (0..n).map(|i| engine.schedule_at(t(10 + i), i).unwrap()).collect();
        engine.cancel(ids[0]);
        assert_eq!(engine.pending(), n as usize - 1);
        assert_eq!(engine.queue_len(), n as usize);
        assert!(
            matches!(engine.step(), Err(EngineError::PendingBudgetExceeded { pending, .. }) if pending == n as usize)
        );
        // peek discards the tombstone on top, which brings the queue back within budget.
        assert_eq!(engine.peek_time(), Some(t(11)));
        assert_eq!(engine.pending_events().count(), n as usize - 1);
        assert_eq!(engine.step(), Ok(Some((t(11), 1))));
    }

    #[test]
    fn cancel_in_a_small_queue_removes_the_key_at_once() {
        let mut engine = Engine::with_budget(u64::MAX, 2);
        let ids: Vec<_> = (0..3).map(|i| engine.schedule_at(t(10 + i), i).unwrap()).collect();
        // From the middle, then the top: each leaves no tombstone behind.
        assert!(engine.cancel(ids[1]));
        assert_eq!(engine.queue_len(), 2);
        assert!(!engine.cancel(ids[1]), "second cancel is refused");
        assert!(engine.cancel(ids[0]));
        assert_eq!((engine.pending(), engine.queue_len()), (1, 1));
        // The freed slots are reused, and a stale id still cancels nothing.
        let later = engine.schedule_at(t(5), 9).unwrap();
        assert!(!engine.cancel(ids[0]));
        assert_eq!(drain(&mut engine), vec![(5, 9), (12, 2)]);
        assert!(!engine.cancel(later));
    }

    /// A random workload drawn from a seeded stream: schedules, cancels and runs.
    fn random_trace(seed: u64) -> Vec<(u64, u32)> {
        let mut rng = RunSeed(seed).stream(0, "engine-test");
        let mut engine = Engine::new();
        let mut ids = Vec::new();
        for token in 0..50 {
            ids.push(engine.schedule_at(SimTime(rng.uniform_inclusive(100)), token).unwrap());
        }
        let mut trace = Vec::new();
        let mut next_token = 50;
        engine
            .run_until(SimTime(5_000), |engine, at, token| {
                trace.push((at.0, token));
                for _ in 0..rng.uniform_inclusive(2) {
                    // Small delays, many ties.
                    ids.push(engine.schedule_in(Duration(rng.uniform_inclusive(20)), next_token));
                    next_token += 1;
                }
                if rng.bernoulli(0.3) {
                    let victim = ids[rng.uniform_inclusive(ids.len() as u64 - 1) as usize];
                    engine.cancel(victim);
                }
            })
            .unwrap();
        trace
    }

    #[test]
    fn same_seed_same_trace_other_seed_differs() {
        let a = random_trace(11);
        assert!(a.len() > 100, "the workload is not trivial ({} events)", a.len());
        assert_eq!(a, random_trace(11));
        assert_ne!(a, random_trace(12));
    }

    #[test]
    fn storage_is_reused_in_steady_state() {
        let mut engine = Engine::new();
        for i in 0..64u64 {
            engine.schedule_at(t(i), i).unwrap();
        }
        let run = |engine: &mut Engine<u64>| {
            engine
                .run_until(engine.now() + Duration(10_000), |engine, _, e| {
                    let id = engine.schedule_in(Duration(1 + e % 7), e);
                    if e % 5 == 0 {
                        engine.cancel(id);
                        engine.schedule_in(Duration(3), e + 1);
                    }
                })
                .unwrap();
        };
        run(&mut engine);
        let (heap_cap, slots_len) = (engine.heap.keys.capacity(), engine.slots.len());
        run(&mut engine);
        assert_eq!(engine.heap.keys.capacity(), heap_cap);
        assert_eq!(engine.slots.len(), slots_len);
        assert!(slots_len <= 2 * 64, "slot table tracks the queue, not the event count");
    }

    /// The key queue alone against a sort, sorted and as a heap at sizes where every
    /// level is full and where the last group of children is partial, with interleaved
    /// pushes and pops.
    /// Every key left in `heap`, in the order it pops them.
    fn pop_all(heap: &mut KeyHeap) -> Vec<Key> {
        std::iter::from_fn(|| heap.pop()).collect()
    }

    #[test]
    fn key_heap_pops_in_sorted_order() {
        let mut rng = RunSeed(9).stream(0, "heap-test");
        for size in [1usize, 2, 4, 5, 6, 21, 22, 1000, 10_007] {
            let mut heap = KeyHeap::default();
            let mut reference = Vec::new();
            let mut popped = Vec::new();
            let mut expected = Vec::new();
            for seq in 0..size as u64 {
                let key = Key::new(SimTime(rng.uniform_inclusive(50)), seq, (seq % 7) as u32);
                heap.push(key);
                reference.push(key);
                if rng.bernoulli(0.3) {
                    reference.sort_unstable_by(|a, b| b.cmp(a));
                    expected.push(reference.pop().unwrap());
                    popped.push(heap.pop().unwrap());
                }
            }
            reference.sort_unstable_by(|a, b| b.cmp(a));
            expected.extend(reference.into_iter().rev());
            popped.extend(pop_all(&mut heap));
            assert_eq!(popped, expected, "size {size}");
        }
    }

    /// `remove_at` from anywhere in sorted queues and heaps of several shapes leaves a
    /// queue that pops the remaining keys in order.
    #[test]
    fn key_heap_remove_keeps_the_order() {
        let mut rng = RunSeed(10).stream(0, "heap-remove-test");
        for size in [1usize, 2, 5, 6, 21, 22, 100, 1000] {
            let mut heap = KeyHeap::default();
            let mut reference = Vec::new();
            for seq in 0..size as u64 {
                let key = Key::new(SimTime(rng.uniform_inclusive(30)), seq, 0);
                heap.push(key);
                reference.push(key);
            }
            for _ in 0..size / 2 + 1 {
                if heap.len() == 0 {
                    break;
                }
                let index = rng.uniform_inclusive(heap.len() as u64 - 1) as usize;
                let key = heap.keys[index];
                heap.remove_at(index);
                reference.retain(|&k| k != key);
            }
            reference.sort_unstable();
            assert_eq!(pop_all(&mut heap), reference, "size {size}");
        }
    }

    /// A queue that grows past `SORTED_MAX` and shrinks below `SORTED_MIN` again and
    /// again (switching between its two forms each time, and near the limits) pops
    /// every key in order.
    #[test]
    fn key_queue_switching_forms_keeps_the_order() {
        let mut rng = RunSeed(11).stream(0, "heap-switch-test");
        let mut heap = KeyHeap::default();
        let mut reference: Vec<Key> = Vec::new();
        let mut seq = 0;
        let (mut switches, mut was_heap) = (0, false);
        for round in 0..40 {
            // Alternate between long swings and ones that stay near a limit.
            let (high, low) = if round % 2 == 0 { (SORTED_MAX + 10, 2) } else { (SORTED_MAX + 1, SORTED_MIN) };
            let base = rng.uniform_inclusive(1000);
            while heap.len() < high {
                let key = Key::new(SimTime(base + rng.uniform_inclusive(40)), seq, 0);
                seq += 1;
                heap.push(key);
                reference.push(key);
            }
            while heap.len() > low {
                reference.sort_unstable_by(|a, b| b.cmp(a));
                assert_eq!(heap.pop(), reference.pop());
                if heap.heap != was_heap {
                    switches += 1;
                    was_heap = heap.heap;
                }
            }
            if heap.heap != was_heap {
                switches += 1;
                was_heap = heap.heap;
            }
        }
        assert!(switches >= 40, "the queue switched forms {switches} times");
        reference.sort_unstable();
        assert_eq!(pop_all(&mut heap), reference);
    }

    /// One operation of the property test.
    #[derive(Clone, Debug)]
    enum Op {
        /// Schedule at now + delay (small delays force ties).
        Schedule(u64),
        /// Cancel the k-th id handed out so far (modulo their count).
        Cancel(usize),
        Step,
        /// run_until(now + d), collecting what it runs.
        RunFor(u64),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            4 => (0u64..4).prop_map(Op::Schedule),
            1 => any::<usize>().prop_map(Op::Cancel),
            3 => Just(Op::Step),
            1 => (0u64..5).prop_map(Op::RunFor),
        ]
    }

    /// The reference: a plain list, the next event found by sorting on (time, seq).
    #[derive(Default)]
    struct Reference {
        now: u64,
        /// (at, seq, cancelled, ran)
        events: Vec<(u64, u64, bool, bool)>,
    }

    impl Reference {
        fn next_due(&self, before: Option<u64>) -> Option<usize> {
            let mut live: Vec<usize> = (0..self.events.len())
                .filter(|&i| !self.events[i].2 && !self.events[i].3)
                .filter(|&i| before.is_none_or(|b| self.events[i].0 < b))
                .collect();
            live.sort_by_key(|&i| (self.events[i].0, self.events[i].1));
            live.first().copied()
        }
        fn pop(&mut self, before: Option<u64>) -> Option<(u64, u64)> {
            let i = self.next_due(before)?;
            self.events[i].3 = true;
            self.now = self.events[i].0;
            Some((self.events[i].0, self.events[i].1))
        }
    }

    proptest! {
        #[test]
        fn matches_sorted_reference(ops in prop::collection::vec(op(), 0..200)) {
            let mut engine: Engine<u64> = Engine::new();
            let mut reference = Reference::default();
            let mut ids = Vec::new();
            let mut popped: Vec<(u64, u64)> = Vec::new();
            for op in ops {
                match op {
                    Op::Schedule(delay) => {
                        let at = reference.now + delay;
                        let seq = reference.events.len() as u64;
                        reference.events.push((at, seq, false, false));
                        let id = engine.schedule_in(Duration(delay), seq);
                        prop_assert_eq!(id.seq(), seq);
                        ids.push(id);
                    }
                    Op::Cancel(k) if !ids.is_empty() => {
                        let k = k % ids.len();
                        let event = &mut reference.events[k];
                        let expected = !event.2 && !event.3;
                        event.2 = true;
                        prop_assert_eq!(engine.cancel(ids[k]), expected);
                    }
                    Op::Cancel(_) => {}
                    Op::Step => {
                        let got = engine.step().unwrap().map(|(at, e)| (at.0, e));
                        let expected = reference.pop(None);
                        prop_assert_eq!(got, expected);
                        popped.extend(got);
                    }
                    Op::RunFor(d) => {
                        let until = reference.now + d;
                        let mut got = Vec::new();
                        engine.run_until(SimTime(until), |_, at, e| got.push((at.0, e))).unwrap();
                        let mut expected = Vec::new();
                        while let Some(p) = reference.pop(Some(until)) {
                            expected.push(p);
                        }
                        reference.now = until;
                        prop_assert_eq!(&got, &expected);
                        popped.extend(got);
                    }
                }
                prop_assert_eq!(engine.now().0, reference.now);
                prop_assert_eq!(engine.pending(), reference.next_due(None).map_or(0, |_| {
                    reference.events.iter().filter(|e| !e.2 && !e.3).count()
                }));
            }
            // Non-decreasing time, FIFO (increasing seq) among equal times.
            for pair in popped.windows(2) {
                prop_assert!(pair[0] < pair[1], "{:?} then {:?}", pair[0], pair[1]);
            }
        }
    }
}
