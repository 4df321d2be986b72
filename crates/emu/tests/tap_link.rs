//! The emulator between two TAP devices in two namespaces the test makes, with real
//! kernels on both sides: rate, delay, loss and serial timing checked against IEEE 802.3,
//! RFC 1055 and binomial arithmetic written here, measured with kernel timestamps
//! (SO_TIMESTAMPNS on packet sockets) and the kernels' own tools (ping).

mod common;

use std::time::{Duration, Instant};

use common::{quantile, udp, udp_payload, Capture, Lab, DEV_A, DEV_B};
use emu::line::EndKind;
use sim::config::LinkConfig;

fn ethernet(rate_bps: u64, delay_ns: u64, queue_frames: usize, impair_ab: &str) -> LinkConfig {
    serde_json::from_str(&format!(
        r#"{{"type": "ethernet", "name": "lab", "a": {{"node": 0, "port": 0}}, "b": {{"node": 1, "port": 0}},
            "rate_bps": {rate_bps}, "delay_ns": {delay_ns}, "queue_frames": {queue_frames},
            "queue_bytes": 10000000, "impair": [{impair_ab}, {{}}]}}"#
    ))
    .expect("a plan link")
}

/// IEEE 802.3 bytes on the wire besides the frame without FCS: preamble + SFD 8 (§3.1.1),
/// FCS 4 (§3.2.9), inter-frame gap 12 (96 bit times, §4.4.2).
const PREAMBLE_SFD: u64 = 8;
const FCS: u64 = 4;
const IFG: u64 = 12;

/// Sends `count` UDP datagrams of `payload` bytes (a sequence number first) from `lab.a` to
/// `lab.b`:`port`, one every `gap`, catching up after a late wake-up.
fn send_paced(lab: &Lab, port: u16, payload: usize, count: u32, gap: Duration, fill: &[u8]) {
    let socket = udp(&lab.a, &lab.addr_a, 0);
    socket.connect((lab.addr_b.as_str(), port)).unwrap();
    let mut datagram: Vec<u8> = fill.iter().copied().cycle().take(payload).collect();
    let start = Instant::now();
    for seq in 0..count {
        let due = gap * seq;
        if let Some(wait) = due.checked_sub(start.elapsed()) {
            std::thread::sleep(wait);
        }
        datagram[..4].copy_from_slice(&seq.to_be_bytes());
        socket.send(&datagram).expect("send");
    }
}

#[test]
fn a_10_mbps_link_carries_10_mbps_of_frames_on_the_wire() {
    let Some(mut lab) = Lab::new(EndKind::Tap, true) else { return };
    let rate = 10_000_000;
    let running = lab.emulate(ethernet(rate, 1_000_000, 200, "{}"), 1);
    let _sink = udp(&lab.b, &lab.addr_b, 5001);
    let out_a = Capture::open(&lab.a, DEV_A);
    let in_b = Capture::open(&lab.b, DEV_B);
    // 1000-byte payloads every 400 µs: 20 Mb/s offered, twice the line's rate.
    let payload = 1000;
    send_paced(&lab, 5001, payload, 6000, Duration::from_micros(400), &[0x55]);
    // Let the queue (200 frames, 0.17 s at 10 Mb/s) drain before stopping.
    std::thread::sleep(Duration::from_millis(600));
    let report = running.stop();
    let seen_a: Vec<_> = out_a.drain().into_iter().filter(|s| s.outgoing).collect();
    let seen_b: Vec<_> = in_b.drain().into_iter().filter(|s| !s.outgoing).collect();
    let arrivals: Vec<i128> = seen_b.iter().filter(|s| udp_payload(&s.bytes, 5001).is_some()).map(|s| s.t_ns).collect();
    // Throughput once the queue has filled (after 0.5 s) to the last arrival.
    let first = arrivals[0] + 500_000_000;
    let k = arrivals.iter().position(|&t| t >= first).expect("arrivals after 0.5 s");
    let span_ns = (arrivals[arrivals.len() - 1] - arrivals[k]) as f64;
    let measured = (arrivals.len() - 1 - k) as f64 * payload as f64 * 8.0 / span_ns * 1e9;
    // Each 1000-byte payload is a 1042-byte frame (UDP 8, IPv4 20, Ethernet header 14)
    // and 1066 bytes on the wire.
    let frame = payload as u64 + 8 + 20 + 14;
    let wire = frame + PREAMBLE_SFD + FCS + IFG;
    let expected = rate as f64 * payload as f64 / wire as f64;
    eprintln!("10 Mb/s link: {:.4} Mb/s of UDP payload, expected {:.4}", measured / 1e6, expected / 1e6);
    assert!((measured / expected - 1.0).abs() < 0.01, "{measured} b/s, expected {expected}");
    // The emulator's counters against what the kernels' packet sockets saw.
    let ab = &report.directions[0];
    assert!(ab.balances(), "{ab:?}");
    assert_eq!(ab.counters.offered.frames, seen_a.len() as u64, "frames the kernel sent out of a");
    assert_eq!(ab.counters.delivered.frames, seen_b.len() as u64, "frames the kernel got on b");
    assert!(ab.counters.dropped.queue_full.frames > 1000, "twice the rate offered: about half dropped");
    assert_eq!(ab.counters.dropped.total().frames, ab.counters.dropped.queue_full.frames);
    assert_eq!((ab.queued_at_stop.frames, ab.in_flight_at_stop.frames), (0, 0));
    assert!(report.directions[1].balances());
}

#[test]
fn a_20_ms_link_gives_pings_a_40_ms_round_trip() {
    let Some(mut lab) = Lab::new(EndKind::Tap, true) else { return };
    let rate = 100_000_000;
    let delay = 20_000_000;
    let running = lab.emulate(ethernet(rate, delay, 100, "{}"), 1);
    let cap = Capture::open(&lab.a, DEV_A);
    let out = lab.a.exec(&["ping", "-n", "-c", "11", "-i", "0.1", "-W", "2", &lab.addr_b]);
    let report = running.stop();
    // ping's own round-trip times, the first (which waited for ARP) left out.
    let times: Vec<f64> = out
        .lines()
        .filter_map(|l| l.split("time=").nth(1))
        .map(|t| t.trim_end_matches(" ms").parse().expect("a time"))
        .collect();
    assert_eq!(times.len(), 11, "{out}");
    // Kernel timestamps on a: each echo request out, its reply in. ICMP echo: 56 bytes of
    // data, 8 of ICMP, 20 of IPv4, 14 of Ethernet: 98-byte frames.
    let seen = cap.drain();
    let icmp = |s: &common::Seen, kind: u8| s.bytes.len() == 98 && s.bytes[12..14] == [8, 0] && s.bytes[34] == kind;
    let requests: Vec<_> = seen.iter().filter(|s| s.outgoing && icmp(s, 8)).collect();
    let replies: Vec<_> = seen.iter().filter(|s| !s.outgoing && icmp(s, 0)).collect();
    assert_eq!((requests.len(), replies.len()), (11, 11));
    // Each way: the delay, and the frame to its last bit (98 + 8 + 4 bytes at 100 Mb/s).
    let last_bit = (98 + PREAMBLE_SFD + FCS) * 8 * 1_000_000_000 / rate;
    let floor = 2 * (delay + last_bit);
    let rtts: Vec<i64> = requests.iter().zip(&replies).skip(1).map(|(q, r)| (r.t_ns - q.t_ns) as i64).collect();
    eprintln!("round trips (kernel timestamps), ns: {rtts:?}; ping: {times:?}");
    assert!(rtts.iter().all(|&r| r >= floor as i64 - 20_000), "none faster than the line: {rtts:?} < {floor}");
    assert!(quantile(&rtts, 0.5) < floor as i64 + 3_000_000, "{rtts:?}");
    assert!(times[1..].iter().all(|&t| t >= 40.0), "{times:?}");
    assert!(report.directions.iter().all(|d| d.balances()));
}

#[test]
fn bernoulli_loss_of_10_percent_loses_a_binomial_count() {
    let Some(mut lab) = Lab::new(EndKind::Tap, true) else { return };
    lab.static_neighbours();
    let p = 0.1;
    let running =
        lab.emulate(ethernet(100_000_000, 0, 100, &format!(r#"{{"loss": {{"model": "bernoulli", "p": {p}}}}}"#)), 42);
    let _sink = udp(&lab.b, &lab.addr_b, 5002);
    let out_a = Capture::open(&lab.a, DEV_A);
    let in_b = Capture::open(&lab.b, DEV_B);
    let n = 3000u32;
    send_paced(&lab, 5002, 200, n, Duration::from_micros(200), &[0]);
    std::thread::sleep(Duration::from_millis(300));
    let report = running.stop();
    let sent = out_a.drain().into_iter().filter(|s| s.outgoing && udp_payload(&s.bytes, 5002).is_some()).count();
    let got = in_b.drain().into_iter().filter(|s| !s.outgoing && udp_payload(&s.bytes, 5002).is_some()).count();
    assert_eq!(sent, n as usize);
    let lost = (sent - got) as f64;
    // Binomial(n, p): mean np, standard deviation sqrt(np(1 - p)); 4.5 of them either way
    // leave out less than 1e-5 of the distribution.
    let (mean, sd) = (n as f64 * p, (n as f64 * p * (1.0 - p)).sqrt());
    eprintln!("lost {lost} of {n}: binomial mean {mean}, sd {sd:.1}");
    assert!((lost - mean).abs() <= 4.5 * sd, "lost {lost}, expected {mean} ± {:.0}", 4.5 * sd);
    let ab = &report.directions[0];
    assert_eq!(ab.counters.offered.frames, n as u64, "static neighbours, no IPv6: only the datagrams crossed");
    assert_eq!(ab.counters.dropped.lost.frames, lost as u64, "the emulator lost what b did not get");
    assert_eq!(ab.counters.delivered.frames, got as u64);
    assert!(ab.balances());
}

/// RFC 1055: END before (recommended) and after the datagram; END (0xC0) and ESC (0xDB)
/// in it are sent as two octets each.
fn slip_octets(datagram: &[u8]) -> u64 {
    2 + datagram.iter().map(|&b| if b == 0xC0 || b == 0xDB { 2 } else { 1 }).sum::<u64>()
}

#[test]
fn a_slip_line_at_115200_takes_ten_bits_a_character() {
    let Some(mut lab) = Lab::new(EndKind::Tap, false) else { return };
    let rate = 115_200;
    let link: LinkConfig = serde_json::from_str(&format!(
        r#"{{"type": "serial", "name": "modem", "a": {{"node": 0, "port": 0}}, "b": {{"node": 1, "port": 0}},
            "rate_bps": {rate}, "format": "8n1", "framing": "slip", "compression": 1.0,
            "delay_ns": 0, "queue_frames": 10}}"#
    ))
    .unwrap();
    let running = lab.emulate(link, 1);
    let _sink = udp(&lab.b, &lab.addr_b, 5003);
    let out_a = Capture::open(&lab.a, DEV_A);
    let in_b = Capture::open(&lab.b, DEV_B);
    // 100-byte payloads full of END and ESC: 40 of them, one each 30 ms (each takes
    // about 17 ms on the line, so none waits behind another).
    let count = 40;
    send_paced(&lab, 5003, 100, count, Duration::from_millis(30), &[0xC0, 0x01, 0xDB, 0x02, 0x03]);
    std::thread::sleep(Duration::from_millis(100));
    let report = running.stop();
    let sent: Vec<_> =
        out_a.drain().into_iter().filter(|s| s.outgoing && udp_payload(&s.bytes, 5003).is_some()).collect();
    let got: Vec<_> =
        in_b.drain().into_iter().filter(|s| !s.outgoing && udp_payload(&s.bytes, 5003).is_some()).collect();
    assert_eq!((sent.len(), got.len()), (count as usize, count as usize));
    let mut errors = Vec::new();
    for (s, g) in sent.iter().zip(&got) {
        // The datagram crosses unchanged; the far end gets it with an Ethernet header again.
        assert_eq!(s.bytes[14..], g.bytes[14..]);
        let expected = (slip_octets(&s.bytes[14..]) * 10 * 1_000_000_000).div_ceil(rate);
        errors.push((g.t_ns - s.t_ns) as i64 - expected as i64);
    }
    let (p50, p99) = (quantile(&errors, 0.5), quantile(&errors, 0.99));
    eprintln!("SLIP 115200: arrival − (send + octets × 10 / rate), ns: p50 {p50}, p99 {p99}, all {errors:?}");
    // Never early (kernel clocks agree to well within 20 µs); late by little.
    assert!(errors.iter().all(|&e| e > -20_000), "{errors:?}");
    assert!(p50 < 1_000_000, "{errors:?}");
    let ab = &report.directions[0];
    assert!(ab.balances(), "{ab:?}");
    assert_eq!(ab.counters.delivered.frames, count as u64);
    assert_eq!(ab.counters.dropped.total().frames, 0, "{ab:?}");
}

#[test]
fn a_frame_is_timed_from_its_kernel_timestamp_not_from_its_read() {
    use emu::stamps::{Arrivals, Clock};
    let Some(mut lab) = Lab::new(EndKind::Tap, true) else { return };
    lab.static_neighbours();
    let [dev_a, _dev_b] = lab.take_devices();
    let clock = Clock::start();
    let mut arrivals = Arrivals::open(&dev_a);
    assert_eq!(arrivals.report().clock, "kernel", "{:?}", arrivals.report().why);
    // An independent view of the same frames: a capture socket of the test's own.
    let out_a = Capture::open(&lab.a, DEV_A);
    let socket = udp(&lab.a, &lab.addr_a, 0);
    socket.connect((lab.addr_b.as_str(), 5003)).unwrap();
    let mut stamped = Vec::new();
    for seq in 0u32..5 {
        socket.send(&[&seq.to_be_bytes()[..], &[0x33; 96]].concat()).expect("send");
        // The frame waits in the TAP 20 ms before it is read: a late wake-up.
        std::thread::sleep(Duration::from_millis(20));
        let mut buf = vec![0u8; 2048];
        let n = dev_a.read(&mut buf).expect("the frame is in the TAP");
        let read_at = clock.now();
        stamped.push((buf[..n].to_vec(), arrivals.arrival(&buf[..n], read_at, &clock), read_at));
    }
    let seen: Vec<_> = out_a.drain().into_iter().filter(|s| s.outgoing).collect();
    assert_eq!(seen.len(), 5);
    for ((frame, at, read_at), s) in stamped.iter().zip(&seen) {
        assert_eq!(frame, &s.bytes, "the frames in the order sent");
        let kernel = clock.from_realtime(s.t_ns);
        // The kernel's timestamp of the frame going into the TAP, not the read 20 ms later
        // (the two clocks' offset is read some ns apart: 5 µs of slack).
        assert!(at.abs_diff(kernel) < 5_000, "offered at {at}, the kernel stamped it at {kernel}");
        assert!(read_at - at >= 20_000_000, "read {} ns after it came", read_at - at);
    }
    let report = arrivals.report();
    assert_eq!((report.stamped, report.unstamped), (5, 0));
    assert!(report.read_wait_ns.p50 >= 20_000_000);
}
