//! Hold-model benchmark of the bare scheduler (Vaucher & Duval's classic test of
//! event-set implementations): keep N events pending; each pop schedules one new event
//! at `now + U[0, 2·mean]`, so the queue length stays N while time advances.
//!
//! A second workload, `engine_hold_cancel`, models retransmission timers: each pop
//! also arms a timer (at 3 × the mean delay) and cancels the one it armed last time,
//! so the queue holds the N events, N live timers and about 2–3 N tombstones waiting
//! to be discarded; its stderr line gives the queue's length at the end.
//!
//! `std_binaryheap_hold` is the floor to compare with: the same hold model on a bare
//! `std::collections::BinaryHeap<Reverse<(u64, u64)>>`, with no payload and no
//! cancellation.
//!
//! Plain `std::time::Instant`, no harness: `cargo bench -p qoslab-sim --bench engine`.
//! Each line of JSON is one measurement; human text goes to stderr.

use std::hint::black_box;
use std::time::Instant;

use sim::engine::{Engine, EventId};
use sim::rng::RunSeed;
use sim::time::{Duration, SimTime};

/// The shape the simulator will use: which component, what happened, a token.
#[derive(Clone, Copy, Debug)]
#[allow(dead_code)] // Fields are carried, not read: the benchmark measures the queue.
struct Event {
    target: u32,
    kind: u16,
    token: u32,
}

const MEAN_DELAY_NS: u64 = 1_000;
/// The timer each event re-arms in `engine_hold_cancel`: a few mean delays, like an RTO of
/// a few RTTs, so each component has about three tombstones queued besides its event.
const TIMER_NS: u64 = 3 * MEAN_DELAY_NS;

fn hold(pending: usize, events: u64) -> f64 {
    let mut rng = RunSeed(1).stream(pending as u64, "bench-hold");
    let mut engine: Engine<Event> = Engine::new();
    engine.reserve(pending);
    for i in 0..pending as u32 {
        let at = SimTime(rng.uniform_inclusive(2 * MEAN_DELAY_NS));
        engine.schedule_at(at, Event { target: i, kind: 0, token: i }).unwrap();
    }
    let mut run = |engine: &mut Engine<Event>, count: u64| {
        let mut checksum = 0u64;
        for _ in 0..count {
            let (at, event) = engine.step().unwrap().expect("the hold model never empties");
            checksum = checksum.wrapping_add(at.0 ^ u64::from(event.token));
            let delay = Duration(rng.uniform_inclusive(2 * MEAN_DELAY_NS));
            engine.schedule_in(delay, Event { token: event.token.wrapping_add(1), ..event });
        }
        checksum
    };
    // Warm up: let the queue reach its steady-state shape before timing.
    black_box(run(&mut engine, pending as u64 * 2));
    let start = Instant::now();
    black_box(run(&mut engine, events));
    start.elapsed().as_secs_f64()
}

fn hold_with_cancel(pending: usize, events: u64) -> f64 {
    let mut rng = RunSeed(1).stream(pending as u64, "bench-hold-cancel");
    let mut engine: Engine<Event> = Engine::new();
    engine.reserve(pending * 2);
    let mut timers: Vec<Option<EventId>> = vec![None; pending];
    for i in 0..pending as u32 {
        let at = SimTime(rng.uniform_inclusive(2 * MEAN_DELAY_NS));
        engine.schedule_at(at, Event { target: i, kind: 0, token: i }).unwrap();
    }
    let mut run = |engine: &mut Engine<Event>, count: u64| {
        let mut checksum = 0u64;
        let mut done = 0;
        while done < count {
            let (at, event) = engine.step().unwrap().expect("the hold model never empties");
            checksum = checksum.wrapping_add(at.0 ^ u64::from(event.token));
            done += 1;
            if event.kind == 1 {
                continue; // A timer that fired: rare, since each is cancelled first.
            }
            let delay = Duration(rng.uniform_inclusive(2 * MEAN_DELAY_NS));
            engine.schedule_in(delay, Event { token: event.token.wrapping_add(1), ..event });
            let slot = &mut timers[event.target as usize];
            if let Some(old) = slot.take() {
                engine.cancel(old);
            }
            *slot = Some(engine.schedule_in(Duration(TIMER_NS), Event { kind: 1, ..event }));
        }
        checksum
    };
    black_box(run(&mut engine, pending as u64 * 2));
    let start = Instant::now();
    black_box(run(&mut engine, events));
    let wall_s = start.elapsed().as_secs_f64();
    eprintln!("  (queue at the end: {} entries, {} pending)", engine.queue_len(), engine.pending());
    wall_s
}

fn report(bench: &str, pending: usize, events: u64, wall_s: f64) {
    let rate = events as f64 / wall_s;
    eprintln!("{bench:<20} pending {pending:>7}: {events} events in {wall_s:.3} s = {:.1} M events/s", rate / 1e6);
    println!(
        "{{\"bench\": \"{bench}\", \"pending\": {pending}, \"events\": {events}, \"wall_s\": {wall_s:.6}, \"events_per_s\": {rate:.0}}}"
    );
}

fn main() {
    // `cargo bench` passes `--bench`; an optional number scales the event count.
    let events: u64 = std::env::args().skip(1).find_map(|a| a.parse().ok()).unwrap_or(10_000_000);
    for pending in [1_000, 100_000] {
        report("engine_hold", pending, events, hold(pending, events));
    }
    for pending in [1_000, 100_000] {
        report("engine_hold_cancel", pending, events, hold_with_cancel(pending, events));
    }
    for pending in [1_000, 100_000] {
        report("std_binaryheap_hold", pending, events, std_binaryheap_hold(pending, events));
    }
}

/// The same hold model on a bare standard-library heap of `(time, seq)` keys.
fn std_binaryheap_hold(pending: usize, events: u64) -> f64 {
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;
    let mut rng = RunSeed(1).stream(pending as u64, "bench-hold");
    let mut heap = BinaryHeap::new();
    for i in 0..pending as u64 {
        heap.push(Reverse((rng.uniform_inclusive(2 * MEAN_DELAY_NS), i)));
    }
    let mut seq = pending as u64;
    let start = Instant::now();
    let mut c = 0u64;
    for _ in 0..events {
        let Reverse((at, s)) = heap.pop().unwrap();
        c = c.wrapping_add(at ^ s);
        seq += 1;
        heap.push(Reverse((at + rng.uniform_inclusive(2 * MEAN_DELAY_NS), seq)));
    }
    black_box(c);
    start.elapsed().as_secs_f64()
}
