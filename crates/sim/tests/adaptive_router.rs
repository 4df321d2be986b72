//! Seed 004's adaptive upstream: the link ARQ's timing against times computed here, its
//! retry limit and duplicate suppression, the delivery ratio against binomial bounds,
//! and the radio/modem chooser on scripted and simulated hidden-terminal loss.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};

use sim::node::adaptive_router::chooser::{Channel, ChannelChooser, ChooserConfig, Switch};
use sim::node::adaptive_router::delivery_ratio::{DeliveryRatio, RatioConfig};
use sim::node::adaptive_router::link_arq::{Action, ArqConfig, LinkArq, RxVerdict};
use sim::rng::{RandomStream, RunSeed};

const MS: u64 = 1_000_000;
const S: u64 = 1_000 * MS;

/// Drives a sender whose frames are all lost: the time of every transmission after the
/// first, and the time of the give-up.
fn retransmit_times(arq: &mut LinkArq, t0: u64) -> (Vec<u64>, Option<u64>) {
    arq.send(t0, 42, 40);
    let mut times = Vec::new();
    let mut gave_up = None;
    while let Some(t) = arq.poll_at() {
        for a in arq.on_timer(t) {
            match a {
                Action::Transmit { attempt, frame_id, .. } => {
                    assert_eq!(frame_id, 42);
                    assert_eq!(attempt as usize, times.len() + 2);
                    times.push(t);
                }
                Action::GiveUp { .. } => gave_up = Some(t),
            }
        }
    }
    (times, gave_up)
}

#[test]
fn retransmissions_back_off_exponentially_to_the_100_ms_cap() {
    let mut arq = LinkArq::new(ArqConfig::default());
    let t0 = 5 * MS;
    let (times, gave_up) = retransmit_times(&mut arq, t0);
    // Independent: 10 ms doubling, capped at seed 004's "tenth of a second", 7 attempts.
    let mut expected = Vec::new();
    let mut t = t0;
    let mut timeout = 10 * MS;
    for _ in 0..6 {
        t += timeout;
        expected.push(t);
        timeout = (timeout * 2).min(100 * MS);
    }
    let gaps: Vec<u64> = std::iter::once(t0)
        .chain(times.iter().copied())
        .collect::<Vec<_>>()
        .windows(2)
        .map(|w| (w[1] - w[0]) / MS)
        .collect();
    assert_eq!(gaps, [10, 20, 40, 80, 100, 100]);
    assert_eq!(times, expected);
    assert_eq!(gave_up, Some(t + 100 * MS));
    let c = arq.counters();
    assert_eq!((c.frames, c.transmissions, c.retransmissions, c.dropped, c.acked), (1, 7, 6, 1, 0));
}

#[test]
fn other_cap_and_initial_timeout() {
    let cfg =
        ArqConfig { initial_timeout_ns: 3 * MS, max_timeout_ns: 20 * MS, max_attempts: 6, ..ArqConfig::default() };
    let (times, gave_up) = retransmit_times(&mut LinkArq::new(cfg), 0);
    // 3, 6, 12, capped 20, 20; then give up 20 later.
    assert_eq!(times, [3 * MS, 9 * MS, 21 * MS, 41 * MS, 61 * MS]);
    assert_eq!(gave_up, Some(81 * MS));
}

#[test]
fn retry_limit_drops_the_frame_and_late_ack_is_stale() {
    for max_attempts in [1u32, 2, 3, 7] {
        let mut arq = LinkArq::new(ArqConfig { max_attempts, ..ArqConfig::default() });
        let (times, gave_up) = retransmit_times(&mut arq, 0);
        assert_eq!(times.len() as u32, max_attempts - 1);
        assert!(gave_up.is_some());
        assert_eq!(arq.in_flight(), 0);
        assert_eq!(arq.poll_at(), None);
        assert_eq!(arq.on_ack(gave_up.unwrap() + 1, 0), None);
        assert_eq!(arq.counters().stale_acks, 1);
        assert_eq!(arq.counters().dropped, 1);
    }
}

#[test]
fn ack_after_retransmission_stops_the_timer() {
    let mut arq = LinkArq::new(ArqConfig::default());
    arq.send(0, 1, 40);
    arq.send(MS, 2, 40);
    assert_eq!(arq.poll_at(), Some(10 * MS));
    let a = arq.on_timer(10 * MS);
    assert_eq!(a, [Action::Transmit { seq: 0, frame_id: 1, len: 40, attempt: 2 }]);
    let acked = arq.on_ack(12 * MS, 0).unwrap();
    assert_eq!((acked.attempts, acked.delay_ns), (2, 12 * MS));
    assert_eq!(arq.poll_at(), Some(11 * MS)); // frame 2's first timeout remains
    assert!(arq.on_ack(12 * MS, 1).is_some());
    assert_eq!(arq.poll_at(), None);
    assert_eq!(arq.counters().acked_first_try, 1);
}

#[test]
fn duplicates_are_acked_again_but_delivered_once() {
    let mut home = LinkArq::new(ArqConfig::default());
    let mut campus = LinkArq::new(ArqConfig::default());
    let Action::Transmit { seq, .. } = home.send(0, 9, 40)[0] else { panic!() };
    // The frame arrives; its ack is lost on the way back.
    let v = campus.on_frame(MS, seq);
    assert!(v.deliver());
    // The retransmission arrives: not delivered again, but acked.
    let again = home.on_timer(10 * MS);
    assert_eq!(again.len(), 1);
    let v2 = campus.on_frame(11 * MS, seq);
    assert!(matches!(v2, RxVerdict::Duplicate(a) if a.seq == seq && a.len == 8));
    assert_eq!(home.on_ack(12 * MS, v2.ack().unwrap().seq).map(|a| a.frame_id), Some(9));
    let c = campus.counters();
    assert_eq!((c.delivered, c.duplicates, c.acks_sent), (1, 1, 2));
}

#[test]
fn delivery_ratio_converges_to_p_for_bernoulli_channels() {
    let n = 20_000usize;
    for (k, p) in [0.5, 0.8, 0.9, 0.99].into_iter().enumerate() {
        let mut rng = RunSeed(4).stream(k as u64, "adaptive-ratio-test");
        let mut r = DeliveryRatio::new(RatioConfig { window: n, min_samples: n });
        let mut successes = 0u64;
        for i in 0..n {
            assert_eq!(r.ratio().is_some(), i >= n);
            let ok = rng.bernoulli(p);
            successes += u64::from(ok);
            r.record(ok);
        }
        let est = r.ratio().unwrap();
        assert_eq!(est, successes as f64 / n as f64);
        // 5 standard deviations of a binomial proportion: fails with probability < 1e-6.
        let bound = 5.0 * (p * (1.0 - p) / n as f64).sqrt();
        assert!((est - p).abs() <= bound, "p = {p}: estimate {est}, bound {bound}");
    }
}

#[test]
fn default_window_tracks_recent_outcomes() {
    // After a regime change the estimate is that of the last 100 attempts only.
    let mut r = DeliveryRatio::new(RatioConfig::default());
    for _ in 0..500 {
        r.record(false);
    }
    for _ in 0..100 {
        r.record(true);
    }
    assert_eq!(r.ratio(), Some(1.0));
    assert_eq!(r.window_counts(), (100, 100));
    assert_eq!(r.lifetime_counts(), (100, 600));
}

/// The chooser fed one scripted radio outcome per millisecond. Returns its switches.
fn run_script(script: &[bool]) -> Vec<Switch> {
    let mut ratio = DeliveryRatio::new(RatioConfig::default());
    let mut chooser = ChannelChooser::new(ChooserConfig::default());
    for (i, &ok) in script.iter().enumerate() {
        ratio.record(ok);
        chooser.update(i as u64 * MS, ratio.ratio(), Some(1.0));
    }
    chooser.switches().to_vec()
}

/// First index at which the last-100 success count satisfies `pred` (window full),
/// computed directly from the script.
fn first_where(script: &[bool], from: usize, pred: impl Fn(usize) -> bool) -> Option<usize> {
    (from.max(99)..script.len()).find(|&i| pred(script[i - 99..=i].iter().filter(|&&b| b).count()))
}

#[test]
fn chooser_leaves_radio_on_hidden_terminal_bursts_and_returns_after_recovery() {
    let mut script = vec![true; 300]; // good
    for _ in 0..20 {
        // hidden-terminal bursts: 3 lost in every 12
        script.extend([true; 9]);
        script.extend([false; 3]);
    }
    let recovery_start = script.len();
    script.extend([true; 300]); // recovered
    let band_start = script.len();
    for _ in 0..50 {
        // in the band: 1 lost in 16, 93–94 % over any 100
        script.extend([true; 15]);
        script.push(false);
    }
    let switches = run_script(&script);

    // Independent: first time fewer than 90 of the last 100 succeeded, then more than 97.
    let down = first_where(&script, 0, |ok| ok < 90).unwrap();
    let up = first_where(&script, down, |ok| ok > 97).unwrap();
    assert!(down > 300 && down < recovery_start && up > recovery_start && up < band_start);
    assert_eq!(switches.len(), 2, "{switches:?}");
    assert_eq!(
        (switches[0].from, switches[0].to, switches[0].at_ns),
        (Channel::Radio, Channel::Modem, down as u64 * MS)
    );
    assert_eq!((switches[1].from, switches[1].to, switches[1].at_ns), (Channel::Modem, Channel::Radio, up as u64 * MS));
    assert!(switches[0].radio_ratio.unwrap() < 0.90 && switches[1].radio_ratio.unwrap() > 0.97);
}

#[test]
fn chooser_does_not_flap_inside_the_band() {
    // Go to the modem, then hover in the band: stays on the modem although the radio is
    // above `low`; then from the radio side the same band keeps it on the radio.
    let mut script = vec![false; 100];
    for _ in 0..100 {
        script.extend([true; 15]);
        script.push(false);
    }
    let switches = run_script(&script);
    assert_eq!(switches.len(), 1, "{switches:?}");
    assert_eq!(switches[0].to, Channel::Modem);

    let mut script = vec![true; 100];
    for _ in 0..100 {
        script.extend([true; 11]); // 1 lost in 12: 91–92 % over any 100
        script.push(false);
    }
    assert!(first_where(&script, 0, |ok| ok < 90).is_none() && first_where(&script, 200, |ok| ok > 97).is_none());
    assert!(run_script(&script).is_empty());
}

// ---------------------------------------------------------------------------------------
// Closed loop: the router's upstream over a radio with hidden-terminal bursts.
// ---------------------------------------------------------------------------------------

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Ev {
    NewTcpAck,
    FrameArrives(u32),
    LinkAckArrives(u32),
}

#[derive(Default)]
struct Queue {
    heap: BinaryHeap<Reverse<(u64, u64, Ev)>>,
    order: u64,
}

impl Queue {
    /// Equal times pop in insertion order, as the engine does.
    fn push(&mut self, at: u64, ev: Ev) {
        self.order += 1;
        self.heap.push(Reverse((at, self.order, ev)));
    }
}

/// Each radio transmission is received with probability `radio_p(now)`.
fn radio_out(q: &mut Queue, loss: &mut RandomStream, now: u64, actions: Vec<Action>) {
    for a in actions {
        if let Action::Transmit { seq, .. } = a {
            if loss.bernoulli(radio_p(now)) {
                q.push(now + MS, Ev::FrameArrives(seq));
            }
        }
    }
}

/// Radio delivery probability upstream: good, then 20 s of hidden-terminal bursts
/// (the first 80 ms of every 200 ms lose 90 %), then good again.
fn radio_p(now: u64) -> f64 {
    match now {
        t if t < 10 * S => 0.99,
        t if t < 30 * S && (t % (200 * MS)) < 80 * MS => 0.10,
        t if t < 30 * S => 0.98,
        _ => 0.995,
    }
}

#[derive(Debug, PartialEq)]
struct Outcome {
    switches: Vec<Switch>,
    radio_frames: u64,
    modem_frames: u64,
    probes: u64,
    delivered_twice: u64,
    home: sim::node::adaptive_router::link_arq::ArqCounters,
}

/// Home router: a TCP ACK every 10 ms goes up the chosen channel; on the radio through
/// the link ARQ (one-way delay 1 ms, link acks never lost: seed 004's downstream is
/// clean), while on the modem a probe goes over the radio every 50 ms.
fn closed_loop(seed: u64, end: u64) -> Outcome {
    let mut loss: RandomStream = RunSeed(seed).stream(1, "radio-upstream-loss");
    let mut home = LinkArq::new(ArqConfig::default());
    let mut campus = LinkArq::new(ArqConfig::default());
    let mut ratio = DeliveryRatio::new(RatioConfig::default());
    let mut chooser = ChannelChooser::new(ChooserConfig::default());
    let mut q = Queue::default();
    let mut delivered: BTreeMap<u32, u32> = BTreeMap::new();
    let (mut radio_frames, mut modem_frames, mut probes, mut next_id) = (0, 0, 0, 0u64);
    q.push(0, Ev::NewTcpAck);
    loop {
        let t_ev = q.heap.peek().map(|Reverse((t, _, _))| *t);
        let now = [t_ev, home.poll_at(), chooser.poll_at()].into_iter().flatten().min().unwrap();
        if now > end {
            break;
        }
        if home.poll_at() == Some(now) {
            let actions = home.on_timer(now);
            ratio.record_actions(&actions);
            radio_out(&mut q, &mut loss, now, actions);
        } else if chooser.poll_at() == Some(now) {
            if chooser.on_timer(now) {
                probes += 1;
                next_id += 1;
                let a = home.send(now, next_id, 40);
                radio_out(&mut q, &mut loss, now, a);
            }
        } else {
            let Reverse((_, _, ev)) = q.heap.pop().unwrap();
            match ev {
                Ev::NewTcpAck => {
                    next_id += 1;
                    match chooser.channel() {
                        Channel::Radio => {
                            radio_frames += 1;
                            let a = home.send(now, next_id, 40);
                            radio_out(&mut q, &mut loss, now, a);
                        }
                        Channel::Modem => modem_frames += 1,
                    }
                    q.push(now + 10 * MS, Ev::NewTcpAck);
                }
                Ev::FrameArrives(seq) => {
                    let v = campus.on_frame(now, seq);
                    if v.deliver() {
                        *delivered.entry(seq).or_default() += 1;
                    }
                    if let Some(ack) = v.ack() {
                        q.push(now + MS, Ev::LinkAckArrives(ack.seq));
                    }
                }
                Ev::LinkAckArrives(seq) => {
                    if home.on_ack(now, seq).is_some() {
                        ratio.record(true);
                    }
                }
            }
        }
        chooser.update(now, ratio.ratio(), Some(1.0));
    }
    Outcome {
        switches: chooser.switches().to_vec(),
        radio_frames,
        modem_frames,
        probes,
        delivered_twice: delivered.values().filter(|&&n| n > 1).count() as u64,
        home: *home.counters(),
    }
}

#[test]
fn closed_loop_switches_to_modem_in_bursts_and_back_after_recovery() {
    let o = closed_loop(2026, 60 * S);
    assert_eq!(o.switches.len(), 2, "{:?}", o.switches);
    let (down, up) = (o.switches[0], o.switches[1]);
    assert_eq!((down.to, up.to), (Channel::Modem, Channel::Radio));
    // Bursts start at 10 s; at 100 frames/s a window of 100 fills with failures within
    // a few 200 ms periods. Recovery at 30 s needs ≈ 100 probe outcomes at 20/s: ~5 s.
    assert!(down.at_ns > 10 * S && down.at_ns < 11 * S, "down at {}", down.at_ns);
    assert!(up.at_ns > 30 * S && up.at_ns < 40 * S, "up at {}", up.at_ns);
    assert_eq!(o.delivered_twice, 0);
    assert!(o.probes > 0 && o.modem_frames > 0);
    let c = o.home;
    assert_eq!(c.acked + c.dropped + home_in_flight_bound(&c), c.frames);
    assert_eq!(c.frames, o.radio_frames + o.probes);
}

/// Frames still in flight at the end: what the counters' invariant leaves over (at
/// most one send interval's worth of 450 ms, i.e. ≤ 45 + probes, so small).
fn home_in_flight_bound(c: &sim::node::adaptive_router::link_arq::ArqCounters) -> u64 {
    let left = c.frames - c.acked - c.dropped;
    assert!(left <= 60, "{left} frames in flight");
    left
}

#[test]
fn closed_loop_is_deterministic() {
    let a = closed_loop(7, 40 * S);
    let b = closed_loop(7, 40 * S);
    assert_eq!(a, b);
    let c = closed_loop(8, 40 * S);
    assert_ne!(a.home, c.home, "another seed should draw other losses");
}
