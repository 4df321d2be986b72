//! A model's timer slot: the one rule by which a sans-IO model's "wake me at" becomes an
//! engine event.
//!
//! Every model (an IP stack, an 802.11 medium, a TCP socket, seed 004's adaptive
//! router) answers `poll_at() -> Option<u64>`: the earliest time it needs waking, or
//! none. After each thing the world does to a model it asks again and hands the answer
//! to the model's [`WakeTimer`], which keeps at most one event of the model's kind in
//! the engine. [`WakeTimer::arm`] applies the rule:
//!
//! 1. **No wanted time**: a timer still armed is cancelled (one compare and one store,
//!    [`Engine::cancel`]); the model is not woken for nothing.
//! 2. **A wanted time in the past** is now: the model is woken after the events already
//!    due now.
//! 3. **A wanted time earlier than the armed one**, or none armed: the armed timer is
//!    cancelled and one is scheduled at the wanted time.
//! 4. **A wanted time equal to or later than the armed one**: the armed timer stays. It
//!    fires early; the model, woken, does what is due (nothing, if nothing is) and is
//!    asked again. A deadline pushed back on every packet (TCP's retransmission timer
//!    restarted by each ACK, RFC 6298 §5.3) thus costs no queue work per packet: one
//!    early wake per armed period instead of a cancel and a schedule per ACK.
//!
//! So the armed time is never later than the model's wanted time, and a model is woken
//! no later than it asked. When the slot's event comes, the handler calls
//! [`WakeTimer::fired`], which empties the slot, then wakes the model and re-arms by the
//! same rule. Every model must tolerate an early wake (rule 4): each acts only on the
//! deadlines that are due at `now`.
//!
//! Cheapness: rules 1 to 4 never schedule when a timer already armed will do; the
//! common cases (nothing wanted, nothing armed; an armed timer earlier than a deadline
//! moved back) are a load and a compare. Events that carry what to do (a frame's
//! arrival, an ATM cell train, a source's next datagram) are not wake-ups and are
//! scheduled as they are.

use crate::engine::{Engine, EngineError, EventId};
use crate::time::SimTime;

/// A model's timer slot: the time and id of its one armed engine event, if any.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WakeTimer {
    armed: Option<(u64, EventId)>,
}

impl WakeTimer {
    /// A slot with no timer armed.
    pub const IDLE: WakeTimer = WakeTimer { armed: None };

    /// When the armed timer fires, ns; `None` when no timer is armed.
    #[inline]
    pub fn at(&self) -> Option<u64> {
        self.armed.map(|(at, _)| at)
    }

    /// Whether a timer is armed.
    #[inline]
    pub fn is_armed(&self) -> bool {
        self.armed.is_some()
    }

    /// Applies the rule (module doc) to the model's wanted time `wanted` (ns, `None`: no
    /// wake wanted), scheduling `event` when a timer must be (re)armed.
    #[inline]
    pub fn arm<E>(&mut self, engine: &mut Engine<E>, wanted: Option<u64>, event: E) -> Result<(), EngineError> {
        match (wanted, self.armed) {
            (None, None) => Ok(()),
            // Rule 1.
            (None, Some((_, id))) => {
                engine.cancel(id);
                self.armed = None;
                Ok(())
            }
            (Some(wanted), armed) => self.arm_at(engine, wanted, armed, event),
        }
    }

    fn arm_at<E>(
        &mut self,
        engine: &mut Engine<E>,
        wanted: u64,
        armed: Option<(u64, EventId)>,
        event: E,
    ) -> Result<(), EngineError> {
        // Rule 2.
        let at = wanted.max(engine.now().as_nanos());
        if let Some((t, id)) = armed {
            // Rule 4.
            if t <= at {
                return Ok(());
            }
            // Rule 3.
            engine.cancel(id);
            self.armed = None;
        }
        let id = engine.schedule_at(SimTime::from_nanos(at), event)?;
        self.armed = Some((at, id));
        Ok(())
    }

    /// The slot's event came at `now`: whether it is the armed timer, which the slot
    /// then forgets (the handler wakes the model and re-arms). A slot keeps one event in
    /// the engine and cancels it before arming another, so the event that comes is
    /// always the armed one; `false` (ignore the event) would mean it was not.
    #[inline]
    pub fn fired(&mut self, now: u64) -> bool {
        match self.armed {
            Some((at, _)) if at == now => {
                self.armed = None;
                true
            }
            _ => false,
        }
    }
}

#[cfg(test)]
mod test {
    //! The rule's four cases and the early wake, each against a real engine: what is
    //! pending in it and when the slot's event comes, from the rule's text.
    use super::*;

    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    enum Ev {
        Wake,
        Other,
    }

    fn pending(engine: &Engine<Ev>) -> Vec<(u64, Ev)> {
        let mut v: Vec<_> = engine.pending_events().map(|(t, e)| (t.as_nanos(), *e)).collect();
        v.sort_by_key(|&(t, _)| t);
        v
    }

    /// Runs the engine to its next event, returning (time, event).
    fn next(engine: &mut Engine<Ev>) -> (u64, Ev) {
        let (t, e) = engine.step().unwrap().expect("an event");
        (t.as_nanos(), e)
    }

    #[test]
    fn first_wish_schedules_at_it() {
        let mut engine = Engine::new();
        let mut slot = WakeTimer::IDLE;
        slot.arm(&mut engine, Some(100), Ev::Wake).unwrap();
        assert_eq!(slot.at(), Some(100));
        assert_eq!(pending(&engine), vec![(100, Ev::Wake)]);
    }

    #[test]
    fn an_earlier_wish_replaces_the_armed_timer() {
        let mut engine = Engine::new();
        let mut slot = WakeTimer::IDLE;
        slot.arm(&mut engine, Some(100), Ev::Wake).unwrap();
        slot.arm(&mut engine, Some(40), Ev::Wake).unwrap();
        // Rule 3: one event, at the earlier time; the later one is gone.
        assert_eq!(slot.at(), Some(40));
        assert_eq!(pending(&engine), vec![(40, Ev::Wake)]);
        assert_eq!(next(&mut engine), (40, Ev::Wake));
        assert!(engine.step().unwrap().is_none());
    }

    #[test]
    fn a_later_or_equal_wish_keeps_the_armed_timer() {
        let mut engine = Engine::new();
        let mut slot = WakeTimer::IDLE;
        slot.arm(&mut engine, Some(100), Ev::Wake).unwrap();
        let armed = slot;
        slot.arm(&mut engine, Some(250), Ev::Wake).unwrap();
        slot.arm(&mut engine, Some(100), Ev::Wake).unwrap();
        // Rule 4: the slot and the engine are as they were (no new event, same id).
        assert_eq!(slot, armed);
        assert_eq!(pending(&engine), vec![(100, Ev::Wake)]);
    }

    #[test]
    fn an_equal_wish_keeps_its_place_among_events_at_that_time() {
        // Re-arming at the same time would put the wake behind events scheduled since;
        // rule 4 keeps its place in the order of events at equal times.
        let mut engine = Engine::new();
        let mut slot = WakeTimer::IDLE;
        slot.arm(&mut engine, Some(100), Ev::Wake).unwrap();
        engine.schedule_at(SimTime::from_nanos(100), Ev::Other).unwrap();
        slot.arm(&mut engine, Some(100), Ev::Wake).unwrap();
        assert_eq!(next(&mut engine), (100, Ev::Wake));
        assert_eq!(next(&mut engine), (100, Ev::Other));
    }

    #[test]
    fn no_wish_cancels_the_armed_timer() {
        let mut engine = Engine::new();
        let mut slot = WakeTimer::IDLE;
        slot.arm(&mut engine, Some(100), Ev::Wake).unwrap();
        slot.arm(&mut engine, None, Ev::Wake).unwrap();
        // Rule 1: nothing armed, nothing pending, nothing comes.
        assert!(!slot.is_armed());
        assert!(engine.is_empty());
        assert!(engine.step().unwrap().is_none());
        // No wish and nothing armed: nothing to do.
        slot.arm(&mut engine, None, Ev::Wake).unwrap();
        assert!(engine.is_empty());
    }

    #[test]
    fn a_wish_in_the_past_is_now_after_what_is_due_now() {
        let mut engine = Engine::new();
        let mut slot = WakeTimer::IDLE;
        engine.schedule_at(SimTime::from_nanos(500), Ev::Other).unwrap();
        engine.schedule_at(SimTime::from_nanos(500), Ev::Other).unwrap();
        assert_eq!(next(&mut engine), (500, Ev::Other));
        // Rule 2: at 500, a wish for 200 is a wake at 500, after the event already due.
        slot.arm(&mut engine, Some(200), Ev::Wake).unwrap();
        assert_eq!(slot.at(), Some(500));
        assert_eq!(next(&mut engine), (500, Ev::Other));
        assert_eq!(next(&mut engine), (500, Ev::Wake));
        assert!(slot.fired(500));
    }

    #[test]
    fn a_timer_that_fired_early_is_re_armed_for_the_rest() {
        // The model wants 100, then (a deadline moved back) 300: the timer fires at 100,
        // the slot empties, the model says 300 again and is armed at 300, where it fires.
        let mut engine = Engine::new();
        let mut slot = WakeTimer::IDLE;
        slot.arm(&mut engine, Some(100), Ev::Wake).unwrap();
        slot.arm(&mut engine, Some(300), Ev::Wake).unwrap();
        let (t, e) = next(&mut engine);
        assert_eq!((t, e), (100, Ev::Wake));
        assert!(slot.fired(t));
        assert!(!slot.is_armed());
        slot.arm(&mut engine, Some(300), Ev::Wake).unwrap();
        assert_eq!(pending(&engine), vec![(300, Ev::Wake)]);
        let (t, _) = next(&mut engine);
        assert_eq!(t, 300);
        assert!(slot.fired(t));
        // Woken at its time with nothing more wanted: the slot stays empty.
        slot.arm(&mut engine, None, Ev::Wake).unwrap();
        assert!(engine.is_empty());
    }

    #[test]
    fn fired_is_false_for_an_event_the_slot_did_not_arm() {
        let mut slot = WakeTimer::IDLE;
        assert!(!slot.fired(0));
        let mut engine = Engine::new();
        slot.arm(&mut engine, Some(100), Ev::Wake).unwrap();
        assert!(!slot.fired(99));
        assert_eq!(slot.at(), Some(100));
    }

    #[test]
    fn the_armed_time_is_never_later_than_the_wanted_one() {
        // Any sequence of wishes at any clock: after each, the armed time is the
        // wanted time (clamped to now) or earlier, and exactly one event is pending
        // when a time is wanted, none when not.
        let wishes = [Some(50), Some(20), Some(80), None, Some(10), Some(10), Some(5), None, None, Some(90)];
        let mut engine = Engine::new();
        let mut slot = WakeTimer::IDLE;
        engine.schedule_at(SimTime::from_nanos(7), Ev::Other).unwrap();
        for (i, wish) in wishes.into_iter().enumerate() {
            if i == 6 {
                assert_eq!(next(&mut engine), (7, Ev::Other));
            }
            slot.arm(&mut engine, wish, Ev::Wake).unwrap();
            let wakes: Vec<_> = pending(&engine).into_iter().filter(|&(_, e)| e == Ev::Wake).collect();
            match wish {
                None => assert!(wakes.is_empty() && !slot.is_armed()),
                Some(w) => {
                    let now = engine.now().as_nanos();
                    assert_eq!(wakes.len(), 1);
                    assert_eq!(Some(wakes[0].0), slot.at());
                    assert!(wakes[0].0 <= w.max(now) && wakes[0].0 >= now);
                }
            }
        }
    }
}
