//! The emulated line without devices: times, drops and counters checked against IEEE 802.3
//! and RFC 1055 arithmetic written here, with a clock the test sets.

use emu::line::{EndKind, Line};
use sim::config::LinkConfig;

/// What the line delivered: (end, frame, scheduled arrival ns).
type Delivered = Vec<(usize, Vec<u8>, u64)>;

fn link(json: &str) -> LinkConfig {
    serde_json::from_str(json).expect("a plan link")
}

fn ethernet(rate_bps: u64, delay_ns: u64, queue_frames: usize, impair: &str) -> LinkConfig {
    link(&format!(
        r#"{{"type": "ethernet", "name": "l", "a": {{"node": 0, "port": 0}}, "b": {{"node": 1, "port": 0}},
            "rate_bps": {rate_bps}, "delay_ns": {delay_ns}, "queue_frames": {queue_frames},
            "queue_bytes": 1000000, "impair": [{impair}, {{}}]}}"#
    ))
}

fn slip(rate_bps: u64) -> LinkConfig {
    link(&format!(
        r#"{{"type": "serial", "name": "s", "a": {{"node": 0, "port": 0}}, "b": {{"node": 1, "port": 0}},
            "rate_bps": {rate_bps}, "format": "8n1", "framing": "slip", "compression": 1.0,
            "delay_ns": 0, "queue_frames": 10}}"#
    ))
}

/// Offers `frame` at `now` from `from`, collecting deliveries.
fn offer(line: &mut Line, now: u64, from: usize, frame: &[u8], out: &mut Delivered) {
    line.offer(now, from, frame, &mut |to, f, at| {
        out.push((to, f.to_vec(), at));
        true
    });
}

fn advance(line: &mut Line, now: u64, out: &mut Delivered) {
    line.advance(now, &mut |to, f, at| {
        out.push((to, f.to_vec(), at));
        true
    });
}

/// IEEE 802.3: preamble + SFD (8 bytes, §3.1.1), the frame padded to 60 bytes without FCS
/// (§3.2.8), FCS (4, §3.2.9); the inter-frame gap (12 bytes of idle, §4.4.2) follows.
fn last_bit_ns(frame_len: usize, rate_bps: u64) -> u64 {
    ((frame_len.max(60) + 8 + 4) as u64 * 8 * 1_000_000_000).div_ceil(rate_bps)
}
fn wire_ns(frame_len: usize, rate_bps: u64) -> u64 {
    ((frame_len.max(60) + 8 + 4 + 12) as u64 * 8 * 1_000_000_000).div_ceil(rate_bps)
}

#[test]
fn ethernet_frames_leave_back_to_back_and_the_queue_drops_the_tail() {
    let rate = 10_000_000;
    let delay = 1_000_000;
    let mut line = Line::new(&ethernet(rate, delay, 2, "{}"), 1, 0, [EndKind::Tap; 2]).unwrap();
    let mut out = Vec::new();
    // Four 1514-byte frames at once: one goes on the wire, two wait, the fourth is dropped.
    for i in 0..4u8 {
        offer(&mut line, 0, 0, &[i; 1514], &mut out);
    }
    let (queued, in_flight) = line.held(0);
    assert_eq!((queued.frames, in_flight.frames), (2, 1));
    assert_eq!(line.counters(0).dropped.queue_full.frames, 1);
    // The next wake-up is the first frame's end on the wire (1538 bytes at 10 Mb/s).
    assert_eq!(line.next_wake(), Some(wire_ns(1514, rate)));
    advance(&mut line, 10_000_000_000, &mut out);
    let times: Vec<u64> = out.iter().map(|d| d.2).collect();
    let w = wire_ns(1514, rate);
    let l = last_bit_ns(1514, rate);
    assert_eq!(times, vec![l + delay, w + l + delay, 2 * w + l + delay]);
    assert!(out.iter().all(|d| d.0 == 1 && d.1.len() == 1514));
    assert_eq!(out.iter().map(|d| d.1[0]).collect::<Vec<_>>(), vec![0, 1, 2]);
    let c = line.counters(0);
    assert_eq!((c.offered.frames, c.delivered.frames, c.dropped.total().frames), (4, 3, 1));
    assert_eq!((c.offered.bytes, c.delivered.bytes), (4 * 1514, 3 * 1514));
    assert_eq!(line.next_wake(), None);
}

#[test]
fn a_late_wake_up_does_not_slow_the_line() {
    // Three frames offered at 0; the caller comes back only after a second. Each is
    // still scheduled where the line's own timeline puts it, a wire time after the last.
    let rate = 100_000_000;
    let mut line = Line::new(&ethernet(rate, 0, 10, "{}"), 1, 0, [EndKind::Tap; 2]).unwrap();
    let mut out = Vec::new();
    for _ in 0..3 {
        offer(&mut line, 0, 1, &[0; 1000], &mut out);
    }
    advance(&mut line, 1_000_000_000, &mut out);
    let (w, l) = (wire_ns(1000, rate), last_bit_ns(1000, rate));
    assert_eq!(out.iter().map(|d| (d.0, d.2)).collect::<Vec<_>>(), vec![(0, l), (0, w + l), (0, 2 * w + l)]);
}

#[test]
fn a_frame_offered_after_a_due_end_starts_when_offered() {
    // The first frame ends on the wire at w; the caller offers the second at w + 5 µs
    // without advancing first: the line handles the end at w, then starts the new frame
    // at w + 5 µs, not earlier.
    let rate = 100_000_000;
    let mut line = Line::new(&ethernet(rate, 0, 10, "{}"), 1, 0, [EndKind::Tap; 2]).unwrap();
    let mut out = Vec::new();
    offer(&mut line, 0, 0, &[0; 100], &mut out);
    let w = wire_ns(100, rate);
    offer(&mut line, w + 5_000, 0, &[1; 100], &mut out);
    advance(&mut line, 1_000_000_000, &mut out);
    let l = last_bit_ns(100, rate);
    assert_eq!(out.iter().map(|d| d.2).collect::<Vec<_>>(), vec![l, w + 5_000 + l]);
}

#[test]
fn short_frames_are_timed_padded() {
    let rate = 100_000_000;
    let mut line = Line::new(&ethernet(rate, 0, 10, "{}"), 1, 0, [EndKind::Tap; 2]).unwrap();
    let mut out = Vec::new();
    offer(&mut line, 0, 0, &[0; 42], &mut out);
    advance(&mut line, u64::MAX, &mut out);
    // A 42-byte ARP frame occupies 60 + 12 bytes to its last bit: 576 bits, 5.76 µs.
    assert_eq!(out[0].2, 5_760);
    assert_eq!(out[0].1.len(), 42, "delivered as offered, unpadded");
}

#[test]
fn loss_of_one_loses_all_and_counts_them() {
    let mut line = Line::new(
        &ethernet(1_000_000_000, 0, 100, r#"{"loss": {"model": "bernoulli", "p": 1.0}}"#),
        7,
        0,
        [EndKind::Tap; 2],
    )
    .unwrap();
    let mut out = Vec::new();
    for t in 0..50u64 {
        offer(&mut line, t * 1_000_000, 0, &[0; 500], &mut out);
        offer(&mut line, t * 1_000_000, 1, &[0; 500], &mut out);
    }
    advance(&mut line, u64::MAX, &mut out);
    let (a, b) = (line.counters(0), line.counters(1));
    assert_eq!((a.dropped.lost.frames, a.dropped.lost.bytes, a.delivered.frames), (50, 25_000, 0));
    // Only a → b is impaired.
    assert_eq!((b.dropped.lost.frames, b.delivered.frames), (0, 50));
    assert!(out.iter().all(|d| d.0 == 0));
}

#[test]
fn the_policer_drops_what_exceeds_its_bucket() {
    // RFC 2697 bucket full at the start: 1500 bytes; 8000 bit/s refills 1 byte per ms.
    let impair = r#"{"shaper": {"rate_bps": 8000, "burst_bytes": 1500, "police": true}}"#;
    let mut line = Line::new(&ethernet(1_000_000_000, 0, 100, impair), 1, 0, [EndKind::Tap; 2]).unwrap();
    let mut out = Vec::new();
    offer(&mut line, 0, 0, &[0; 1000], &mut out); // 500 tokens left
    offer(&mut line, 1_000_000, 0, &[0; 1000], &mut out); // 501: red
    offer(&mut line, 500_000_000, 0, &[0; 1000], &mut out); // 1000 at 499 ms: green
    advance(&mut line, u64::MAX, &mut out);
    let c = line.counters(0);
    assert_eq!((c.delivered.frames, c.dropped.policed.frames, c.dropped.policed.bytes), (2, 1, 1000));
}

#[test]
fn the_shaper_holds_frames_until_their_tokens() {
    // 1 Mb/s, bucket 1000 bytes, full at 0: a 1000-byte frame leaves at once, the next
    // 1000 bytes need 8 ms of tokens (RFC 2697 §3, continuous fill).
    let impair = r#"{"shaper": {"rate_bps": 1000000, "burst_bytes": 1000}}"#;
    let rate = 1_000_000_000;
    let mut line = Line::new(&ethernet(rate, 0, 100, impair), 1, 0, [EndKind::Tap; 2]).unwrap();
    let mut out = Vec::new();
    offer(&mut line, 0, 0, &[0; 1000], &mut out);
    offer(&mut line, 0, 0, &[0; 1000], &mut out);
    // First the first frame's arrival (its last bit, before the gap ends its sending).
    let l = last_bit_ns(1000, rate);
    assert_eq!(line.next_wake(), Some(l));
    advance(&mut line, u64::MAX, &mut out);
    assert_eq!(out.iter().map(|d| d.2).collect::<Vec<_>>(), vec![l, 8_000_000 + l]);
}

/// RFC 1055: END before (the recommended flush) and after the datagram; END and ESC in
/// the datagram are sent as two octets each.
fn slip_octets(datagram: &[u8]) -> u64 {
    2 + datagram.iter().map(|&b| if b == 0xC0 || b == 0xDB { 2 } else { 1 }).sum::<u64>()
}

/// A minimal IPv4 datagram of `len` bytes (version nibble 4) with `fill` after the header.
fn datagram(len: usize, fill: &[u8]) -> Vec<u8> {
    let mut d = vec![0x45, 0, (len >> 8) as u8, len as u8, 0, 0, 0, 0, 64, 17, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2];
    d.extend(fill.iter().cycle().take(len - 20));
    d
}

#[test]
fn slip_time_counts_escapes_and_ten_bits_a_character() {
    let rate = 115_200;
    let mut line = Line::new(&slip(rate), 1, 0, [EndKind::Tun; 2]).unwrap();
    let d = datagram(100, &[0xC0, 0x11, 0xDB, 0x22]);
    let mut out = Vec::new();
    offer(&mut line, 0, 0, &d, &mut out);
    advance(&mut line, u64::MAX, &mut out);
    // 8N1: start + 8 data + stop = 10 bits a character.
    let expected = (slip_octets(&d) * 10 * 1_000_000_000).div_ceil(rate);
    assert_eq!(out, vec![(1, d.clone(), expected)]);
    assert_eq!(slip_octets(&d), 100 + 40 + 2);
}

#[test]
fn serial_on_taps_strips_and_restores_the_ethernet_header() {
    let mut line = Line::new(&slip(115_200), 1, 0, [EndKind::Tap; 2]).unwrap();
    let mac_a = [0x02, 0, 0, 0, 0, 0xaa];
    let mac_b = [0x02, 0, 0, 0, 0, 0xbb];
    let frame = |dst: [u8; 6], src: [u8; 6], ethertype: u16, payload: &[u8]| {
        [&dst[..], &src[..], &ethertype.to_be_bytes()[..], payload].concat()
    };
    let d = datagram(60, &[1]);
    let mut out = Vec::new();
    // An ARP frame: a serial line has no ARP.
    offer(&mut line, 0, 0, &frame([0xff; 6], mac_a, 0x0806, &[0; 28]), &mut out);
    assert_eq!(line.counters(0).dropped.not_ip.frames, 1);
    // Before b has sent anything, a's datagram reaches it broadcast, from a's MAC.
    offer(&mut line, 0, 0, &frame(mac_a, mac_a, 0x0800, &d), &mut out);
    advance(&mut line, u64::MAX, &mut out);
    assert_eq!(out.last().unwrap(), &(1, frame([0xff; 6], mac_a, 0x0800, &d), out.last().unwrap().2));
    // Once b has sent, it is addressed to b's MAC.
    offer(&mut line, 1_000_000_000, 1, &frame(mac_b, mac_b, 0x0800, &d), &mut out);
    offer(&mut line, 1_000_000_000, 0, &frame(mac_a, mac_a, 0x0800, &d), &mut out);
    advance(&mut line, u64::MAX, &mut out);
    let to_b: Vec<_> = out.iter().filter(|x| x.0 == 1).collect();
    assert_eq!(to_b.last().unwrap().1, frame(mac_b, mac_a, 0x0800, &d));
    let a = line.counters(0);
    assert_eq!((a.offered.frames, a.delivered.frames, a.dropped.total().frames), (3, 2, 1));
    assert_eq!(a.offered.bytes, a.delivered.bytes + a.dropped.total().bytes, "headers counted both ways");
}

#[test]
fn refusals_name_the_link() {
    let e = Line::new(&ethernet(1_000_000, 0, 10, "{}"), 1, 3, [EndKind::Tap, EndKind::Tun]).err().unwrap();
    assert!(e.contains("links[3]") && e.contains("TAP"), "{e}");
    let mut bad_format = slip(9600);
    if let LinkConfig::Serial { format, .. } = &mut bad_format {
        *format = "8x1".into();
    }
    let e = Line::new(&bad_format, 1, 2, [EndKind::Tun; 2]).err().unwrap();
    assert!(e.contains("links[2].format"), "{e}");
    let e = Line::new(
        &ethernet(1_000_000, 0, 10, r#"{"loss": {"model": "bernoulli", "p": 2.0}}"#),
        1,
        0,
        [EndKind::Tap; 2],
    )
    .err()
    .unwrap();
    assert!(e.contains("links[0].impair[0]"), "{e}");
}

#[test]
fn gilbert_elliott_loses_the_frames_the_simulators_link_would() {
    // The emulator's loss stream is the simulator's for the same link of the same run
    // (crates/sim/src/rng.rs: one stream per run seed, link and purpose), so frame by
    // frame the same ones are lost.
    use sim::link::impair::GilbertElliott;
    use sim::rng::RunSeed;
    let (seed, link_index) = (5, 2);
    let impair = r#"{"loss": {"model": "gilbert-elliott", "p": 0.3, "r": 0.4, "k": 0.9, "h": 0.2}}"#;
    let mut line = Line::new(&ethernet(1_000_000_000, 0, 10, impair), seed, link_index, [EndKind::Tap; 2]).unwrap();
    let mut out = Vec::new();
    for i in 0..400u32 {
        let mut frame = vec![0; 100];
        frame[..4].copy_from_slice(&i.to_be_bytes());
        offer(&mut line, u64::from(i) * 1_000_000, 0, &frame, &mut out);
    }
    advance(&mut line, u64::MAX, &mut out);
    let delivered: Vec<u32> = out.iter().map(|d| u32::from_be_bytes(d.1[..4].try_into().unwrap())).collect();
    let mut model = GilbertElliott::new(0.3, 0.4, 0.9, 0.2).unwrap();
    let mut stream = RunSeed(seed).stream(link_index as u64, "loss a->b");
    let expected: Vec<u32> = (0..400).filter(|_| !model.drop(&mut stream)).collect();
    assert_eq!(delivered, expected);
    // Long-run loss of this chain: π_B = p / (p + r) = 3/7; 1 − k = 0.1, 1 − h = 0.8.
    let lost = 400 - delivered.len();
    assert_eq!(line.counters(0).dropped.lost.frames, lost as u64);
    assert!((lost as f64 / 400.0 - (4.0 / 7.0 * 0.1 + 3.0 / 7.0 * 0.8)).abs() < 0.08, "{lost}");
}

#[test]
fn the_emulators_counters_are_the_simulators_lines_own() {
    // The emulator counts per reason what it offers and is handed back; the simulator's
    // line keeps its own tally (crates/sim/src/conservation.rs). Queue drops, losses and
    // frames held mid-run: the two accounts agree at every step.
    let impair = r#"{"loss": {"model": "bernoulli", "p": 0.5}}"#;
    let mut line = Line::new(&ethernet(10_000_000, 1_000_000, 3, impair), 9, 0, [EndKind::Tap; 2]).unwrap();
    let mut out = Vec::new();
    for burst in 0..20u64 {
        for _ in 0..6 {
            offer(&mut line, burst * 2_000_000, 0, &[0; 700], &mut out);
            offer(&mut line, burst * 2_000_000, 1, &[0; 300], &mut out);
        }
        assert!(line.agrees_with_line(0) && line.agrees_with_line(1), "after burst {burst}");
    }
    let (queued, in_flight) = line.held(0);
    assert!(queued.frames + in_flight.frames > 0, "frames held mid-run");
    advance(&mut line, u64::MAX, &mut out);
    assert!(line.agrees_with_line(0) && line.agrees_with_line(1));
    let a = line.counters(0);
    // Six offered per burst into one serializer and three places: some refused.
    assert!(a.dropped.queue_full.frames > 0 && a.dropped.lost.frames > 0, "{a:?}");
    assert_eq!(a.offered.frames, a.delivered.frames + a.dropped.total().frames);
}
