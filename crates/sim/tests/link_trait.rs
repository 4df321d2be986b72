//! Each kind of link through the one door, `sim::link::Link`, as a driver with no engine
//! uses it: frames offered at an end, one timer (`poll_at`), what `poll` hands back.
//! The expected instants are computed here from the standards' arithmetic, not read
//! from the models.

mod common;

use std::net::Ipv4Addr;

use sim::link::ethernet::EthernetLink;
use sim::link::impair::LossModel;
use sim::link::line::{DirectionImpairment, Line, LineKind};
use sim::link::serial::{SerialConfig, SerialLine};
use sim::link::{Link, LinkEvent, Offer};
use sim::rng::RunSeed;
use sim::wifi::adapter::{Adapter, ForeignSource, LinkCipher, Role};
use sim::wifi::bss::{Bss, BssParams};
use sim::wifi::cell::WifiCell;
use sim::wifi::{PhyParams, Preamble, Rate};
use wire::ethernet::Address as Mac;

const US: u64 = 1_000;

/// Runs `link`'s one timer until it has nothing under way: every event with the
/// instant `poll` handed it back.
fn drive(link: &mut impl Link, until: u64) -> Vec<(u64, LinkEvent)> {
    let mut all = Vec::new();
    while let Some(t) = link.poll_at().filter(|&t| t <= until) {
        let mut out = Vec::new();
        link.poll(t, &mut out);
        all.extend(out.into_iter().map(|e| (t, e)));
    }
    all
}

fn no_impairment(direction: u64) -> DirectionImpairment {
    DirectionImpairment {
        loss: LossModel::None,
        loss_text: String::new(),
        rng: RunSeed(1).stream(direction, "loss"),
        shaper: None,
        shaper_queue_bytes: None,
        shaped_until: None,
        policer: None,
        lost: 0,
        jitter_ns: 0,
        jitter_rng: RunSeed(1).stream(direction, "jitter"),
    }
}

/// An Ethernet II frame: broadcast destination, source 02:..:01, IPv4, `payload` octets.
fn ethernet_frame(payload: &[u8]) -> Vec<u8> {
    let mut f = vec![0xff; 6];
    f.extend_from_slice(&[2, 0, 0, 0, 0, 1]);
    f.extend_from_slice(&[0x08, 0x00]);
    f.extend_from_slice(payload);
    f
}

#[test]
fn ethernet_line_times_frames_by_ieee_802_3() {
    let (rate, delay) = (100_000_000u64, 5 * US);
    let ethernet = EthernetLink {
        name: "lan".into(),
        ends: [(0, 0), (1, 0)],
        rate_bps: rate,
        delay_ns: delay,
        queue_frames: 2,
        queue_bytes: 1_000_000,
        dirs: Default::default(),
    };
    let mut line: Line<()> = Line::new(LineKind::Ethernet(ethernet), [no_impairment(0), no_impairment(1)]);
    assert_eq!((line.name(), line.kind()), ("lan", "ethernet"));
    let frame = ethernet_frame(&[0x45; 986]); // 1000 octets without FCS
    for _ in 0..2 {
        assert_eq!(line.offer(0, 0, frame.clone()), Offer::Accepted);
    }
    // Drop-tail at two frames waiting.
    assert!(matches!(line.offer(0, 0, frame.clone()), Offer::Dropped { reason, .. } if reason.contains("drop-tail")));
    let mut held = 0;
    line.held(&mut |_| held += 1);
    assert_eq!((held, line.backlog(0, 0), line.drops()), (2, 2, 1));

    // IEEE 802.3 §3.1.1, §3.2.9, §4.4.2: preamble 7 + SFD 1 + frame + FCS 4 octets on
    // the wire, then 12 octets (96 bit times) of inter-frame gap before the next.
    let bit_ns = |octets: u64| octets * 8 * 1_000_000_000 / rate;
    let last_bit = bit_ns(7 + 1 + 1000 + 4); // 80.96 µs
    let busy = bit_ns(7 + 1 + 1000 + 4 + 12); // 81.92 µs
    let events = drive(&mut line, u64::MAX);
    let delivered: Vec<u64> =
        events.iter().filter(|(_, e)| matches!(e, LinkEvent::Delivered { to: (1, 0), .. })).map(|&(t, _)| t).collect();
    assert_eq!(delivered, [last_bit + delay, busy + last_bit + delay]);
    let sent: Vec<u64> = events.iter().filter(|(_, e)| *e == LinkEvent::Sent { node: 0 }).map(|&(t, _)| t).collect();
    assert_eq!(sent, [busy, 2 * busy]);
    assert!(events.iter().all(|(_, e)| match e {
        LinkEvent::Delivered { frame: f, .. } => *f == frame,
        _ => true,
    }));
    let c = line.conservation();
    assert_eq!((c[0].frames_in, c[0].frames_out, c[0].dropped, c[0].queued), (3, 2, 1, 0));
}

#[test]
fn serial_line_sends_ten_bits_per_octet_async() {
    // RFC 1055 SLIP with the leading END: END + datagram + END; 8N1 sends each octet as
    // a start bit, 8 data bits and a stop bit (10 bits), at 9600 bit/s.
    let (rate, delay) = (9_600u64, 2 * US);
    let mut config = SerialConfig::new(rate);
    config.delay_ns = delay;
    let serial = SerialLine::new(config).unwrap();
    let kind = LineKind::Serial { name: "modem".into(), ends: [(0, 1), (1, 1)], line: serial };
    let mut line: Line<()> = Line::new(kind, [no_impairment(0), no_impairment(1)]);
    assert_eq!(line.kind(), "serial");
    // 100 octets of datagram, none of them END (0xc0) or ESC (0xdb).
    let datagram: Vec<u8> = (0..100u8).collect();
    assert_eq!(line.offer(0, 1, ethernet_frame(&datagram)), Offer::Accepted);
    let events = drive(&mut line, u64::MAX);
    let line_ns = (1 + 100 + 1) * 10 * 1_000_000_000 / rate; // 106.25 ms
    let (t, delivered) = events.iter().find(|(_, e)| matches!(e, LinkEvent::Delivered { .. })).unwrap();
    assert_eq!(*t, line_ns + delay);
    // The far end's stack gets the datagram behind an Ethernet header the line writes
    // (it carried none): broadcast, from 00:..:00, IPv4.
    let mut expected = vec![0xff; 6];
    expected.extend_from_slice(&[0; 6]);
    expected.extend_from_slice(&[0x08, 0x00]);
    expected.extend_from_slice(&datagram);
    assert_eq!(*delivered, LinkEvent::Delivered { to: (0, 1), frame: expected });
    assert!(events.contains(&(line_ns, LinkEvent::Sent { node: 1 })));
}

#[test]
fn wifi_cell_times_a_data_frame_and_its_ack_by_ieee_802_11() {
    // An IBSS of two 802.11b members at 11 Mb/s, long preamble.
    let macs = [Mac([2, 0, 0, 0, 0, 1]), Mac([2, 0, 0, 0, 0, 2])];
    let bssid = Mac([2, 0, 0, 0, 0, 1]);
    let adapters = macs
        .iter()
        .map(|&mac| Adapter::new(Role::AdHoc { mac, bssid }, ForeignSource::Drop, false, LinkCipher::open()))
        .collect();
    let params = BssParams::new(PhyParams::dot11b(Preamble::Long), Rate::Cck11, 2, 10);
    let bss = Bss::new(params, RunSeed(1), 0);
    let members = vec![(0, 0), (1, 0)];
    let mut cell = WifiCell::new("air".into(), None, bss, members, adapters, macs.to_vec(), false, false, false, 0);
    assert_eq!((cell.name(), cell.kind()), ("air", "wifi"));
    // 1500 octets of payload to member 1.
    let mut frame = macs[1].0.to_vec();
    frame.extend_from_slice(&macs[0].0);
    frame.extend_from_slice(&[0x08, 0x00]);
    frame.extend_from_slice(&[0x45; 1500]);
    // The medium has been idle for longer than DIFS: the frame goes at once (§10.3.4.2).
    let t0 = 1_000 * US;
    assert_eq!(cell.offer(t0, 0, frame.clone()), Offer::Accepted);
    let events = drive(&mut cell, u64::MAX);
    // MPDU: 24-octet header (§9.3.2.1) + LLC/SNAP 8 (IEEE 802.2, RFC 1042) + 1500, and
    // FCS 4: 1536 octets at 11 Mb/s, rounded up to whole µs (§16.3.4: LENGTH in µs),
    // behind the long PLCP preamble and header, 192 µs (§16.2.2.2).
    let data_us = 192 + (1536u64 * 8).div_ceil(11);
    let delivered_at = t0 + data_us * US;
    // The Ack, SIFS (10 µs) later: 14 octets at 2 Mb/s (the control response rate,
    // §10.6.6.5) behind the long preamble: 192 + 56 µs.
    let ack_end = delivered_at + (10 + 192 + 14 * 8 / 2) * US;
    assert_eq!(
        events,
        [(delivered_at, LinkEvent::Delivered { to: (1, 0), frame }), (ack_end, LinkEvent::Sent { node: 0 })]
    );
    let c = cell.conservation();
    assert_eq!((c[0].frames_in, c[0].frames_out, c[0].dropped, c[0].queued), (1, 1, 0, 0));
}

#[test]
fn atm_network_carries_clip_in_aal5_cells() {
    use common::{atm_link, atm_port, node};
    use sim::atm::config::{AtmConfig, AtmLinkConfig};
    use sim::atm::AtmNet;
    use sim::config::LinkConfig;

    let ip = |last: u8| Ipv4Addr::new(192, 0, 2, last);
    let nodes = [
        node("ws1", vec![atm_port("atm0", 1, Some((ip(1), 24)), 9180)], vec![], false),
        node("ws2", vec![atm_port("atm0", 2, Some((ip(2), 24)), 9180)], vec![], false),
    ];
    // A cell rate whose cell time is a whole number of ns: 424 bits at 42.4 Mb/s = 10 µs.
    let cell_ns = 10 * US;
    let LinkConfig::Atm(mut link) = atm_link("l1", (0, 0), (1, 0), &[(0, 100)]) else { unreachable!() };
    link.cell_rate_bps = Some(42_400_000);
    let links: Vec<(usize, &AtmLinkConfig)> = vec![(0, &link)];
    let config = AtmConfig { host_signalling_ns: 0, ..Default::default() };
    let mut net = AtmNet::new(&nodes, &links, &config, false).unwrap();
    assert_eq!(net.kind(), "atm");
    // InATMARP on the PVC (RFC 2225 §8.2) before any data.
    let start = drive(&mut net, 500 * US);
    assert!(start.iter().all(|(_, e)| !matches!(e, LinkEvent::Dropped(_))), "{start:?}");
    // A 100-octet IP packet from ws1 to ws2 at 1 ms (on the cell grid).
    let mut packet = vec![0x45, 0, 0, 100, 0, 0, 0x40, 0, 64, 17, 0, 0];
    packet.extend_from_slice(&ip(1).octets());
    packet.extend_from_slice(&ip(2).octets());
    packet.resize(100, 0);
    let t0 = 1_000 * US;
    assert_eq!(net.offer(t0, 0, ethernet_frame(&packet)), Offer::Accepted);
    let events = drive(&mut net, u64::MAX);
    // LLC/SNAP 8 (RFC 2684 §5.1) + 100 + AAL5 trailer 8 (I.363.5 §10.1) = 116 octets:
    // three 48-octet cell payloads, sent back to back.
    let cells = (8u64 + 100 + 8).div_ceil(48);
    let (t, delivered) = events.iter().find(|(_, e)| matches!(e, LinkEvent::Delivered { .. })).unwrap();
    assert_eq!(*t, t0 + cells * cell_ns);
    let LinkEvent::Delivered { to, frame } = delivered else { unreachable!() };
    assert_eq!((*to, &frame[14..]), ((1, 0), &packet[..]));
    let c = net.conservation();
    assert_eq!(c.len(), 2, "one link, two directions");
    assert!(c.iter().all(|c| c.frames_in == c.frames_out + c.dropped + c.queued));
}

#[test]
fn a_shaped_line_holds_a_frame_until_its_bucket_refills() {
    use sim::link::impair::Shaper;
    // RFC 2697's bucket (Linux tbf): 8 Mb/s fills it at one octet per µs, 1000 octets
    // deep and full at time 0. Two 1000-octet frames: the first takes the bucket; the
    // second may leave when 1000 octets have come back, 1000 µs after the first left.
    let rate = 100_000_000u64;
    let ethernet = EthernetLink {
        name: "shaped".into(),
        ends: [(0, 0), (1, 0)],
        rate_bps: rate,
        delay_ns: 0,
        queue_frames: 10,
        queue_bytes: 1_000_000,
        dirs: Default::default(),
    };
    let mut shaped = no_impairment(0);
    shaped.shaper = Some(Shaper::new(8_000_000, 1000).unwrap());
    let mut line: Line<()> = Line::new(LineKind::Ethernet(ethernet), [shaped, no_impairment(1)]);
    let frame = ethernet_frame(&[0x45; 986]);
    for _ in 0..2 {
        assert_eq!(line.offer(0, 0, frame.clone()), Offer::Accepted);
    }
    let events = drive(&mut line, u64::MAX);
    let last_bit = (7 + 1 + 1000 + 4) * 8 * 1_000_000_000 / rate; // IEEE 802.3, as above
    let delivered: Vec<u64> =
        events.iter().filter(|(_, e)| matches!(e, LinkEvent::Delivered { .. })).map(|&(t, _)| t).collect();
    assert_eq!(delivered, [last_bit, 1_000 * US + last_bit]);
}

/// A 100 Mb/s Ethernet line with 5 µs of delay, `jitter_ns` of jitter and `loss` on the
/// a → b direction, its streams those of run seed `seed`.
fn jittered_line(jitter_ns: u64, loss: LossModel, seed: u64) -> Line<()> {
    let ethernet = EthernetLink {
        name: "jittery".into(),
        ends: [(0, 0), (1, 0)],
        rate_bps: 100_000_000,
        delay_ns: 5 * US,
        queue_frames: 1000,
        queue_bytes: 10_000_000,
        dirs: Default::default(),
    };
    let mut a_to_b = no_impairment(0);
    a_to_b.loss = loss;
    a_to_b.rng = RunSeed(seed).stream(0, "loss a->b");
    a_to_b.jitter_ns = jitter_ns;
    a_to_b.jitter_rng = RunSeed(seed).stream(0, "jitter a->b");
    Line::new(LineKind::Ethernet(ethernet), [a_to_b, no_impairment(1)])
}

/// Frames of 1000 octets (the i-th carries i in its first two payload octets), one every
/// `gap_ns` from 0, through `line`: per frame its index and its arrival instant, for
/// the ones delivered.
fn send_spaced(line: &mut Line<()>, frames: u16, gap_ns: u64) -> Vec<(u16, u64)> {
    let mut delivered = Vec::new();
    let mut collect = |events: Vec<(u64, LinkEvent)>| {
        for (t, e) in events {
            if let LinkEvent::Delivered { frame, .. } = e {
                delivered.push((u16::from_be_bytes([frame[14], frame[15]]), t));
            }
        }
    };
    for i in 0..frames {
        let now = u64::from(i) * gap_ns;
        let mut payload = vec![0x45; 986];
        payload[..2].copy_from_slice(&i.to_be_bytes());
        assert_eq!(line.offer(now, 0, ethernet_frame(&payload)), Offer::Accepted);
        let mut out = Vec::new();
        line.poll(now, &mut out);
        collect(out.into_iter().map(|e| (now, e)).collect());
        collect(drive(line, now + gap_ns - 1));
    }
    collect(drive(line, u64::MAX));
    delivered
}

#[test]
fn jitter_adds_a_uniform_delay_in_zero_to_jitter() {
    let jitter = 100 * US;
    // IEEE 802.3: preamble + SFD + 1000 octets + FCS at 100 Mb/s, then the 5 µs delay.
    let base = (7 + 1 + 1000 + 4) * 8 * 1_000_000_000 / 100_000_000 + 5 * US;
    // One frame a millisecond: each is on its way alone (1 ms > 81 µs + 5 µs + 100 µs),
    // so no frame is held back by the one before and each offset is U itself.
    let n = 4000u16;
    let arrivals = send_spaced(&mut jittered_line(jitter, LossModel::None, 7), n, 1_000 * US);
    assert_eq!(arrivals.len(), usize::from(n));
    let offsets: Vec<u64> = arrivals.iter().map(|&(i, t)| t - u64::from(i) * 1_000 * US - base).collect();
    assert!(offsets.iter().all(|&u| u <= jitter), "every offset in [0, J]");
    assert!(offsets.iter().any(|&u| u != offsets[0]), "the delays vary");
    // U uniform on the integers 0..=J: mean J/2, variance ((J+1)² − 1)/12; the mean of n
    // draws is within 5 standard deviations of J/2 (a chance of about 6·10⁻⁷ to fail).
    let mean = offsets.iter().sum::<u64>() as f64 / f64::from(n);
    let sd_of_mean = ((((jitter + 1) * (jitter + 1) - 1) as f64 / 12.0) / f64::from(n)).sqrt();
    assert!((mean - jitter as f64 / 2.0).abs() < 5.0 * sd_of_mean, "mean {mean} ns, J/2 = {} ns", jitter / 2);
    // Same seed, same instants; another seed, other instants.
    assert_eq!(send_spaced(&mut jittered_line(jitter, LossModel::None, 7), n, 1_000 * US), arrivals);
    assert_ne!(send_spaced(&mut jittered_line(jitter, LossModel::None, 8), n, 1_000 * US), arrivals);
}

#[test]
fn a_jittered_line_does_not_reorder() {
    // A burst of frames back to back (81.92 µs apart on the wire) with 1 ms of jitter:
    // a frame drawn late holds the ones behind it, as a cable does (no overtaking).
    let jitter = 1_000 * US;
    let arrivals = send_spaced(&mut jittered_line(jitter, LossModel::None, 3), 500, 1);
    let order: Vec<u16> = arrivals.iter().map(|&(i, _)| i).collect();
    assert_eq!(order, (0..500).collect::<Vec<u16>>(), "delivered in the order sent");
    assert!(arrivals.windows(2).all(|w| w[0].1 <= w[1].1), "arrival instants never go back");
    // The i-th frame's last bit is out at 81.92 µs · i + 80.96 µs: it arrives no earlier
    // than that plus the delay and no later than that plus delay + J, or the previous one.
    let busy = (7 + 1 + 1000 + 4 + 12) * 8 * 10;
    let last_bit = (7 + 1 + 1000 + 4) * 8 * 10;
    let mut previous = 0;
    for &(i, t) in &arrivals {
        let earliest = u64::from(i) * busy + last_bit + 5 * US;
        assert!(t >= earliest && t <= (earliest + jitter).max(previous), "frame {i} at {t} ns");
        previous = t;
    }
    // Some frame was held back: ties at the instant of a frame drawn late.
    assert!(arrivals.windows(2).any(|w| w[0].1 == w[1].1));
}

#[test]
fn jitter_does_not_change_which_frames_are_lost() {
    // The jitter's stream is its own: the same frames are lost with and without it.
    let lost = |jitter| {
        let loss = LossModel::Bernoulli(sim::link::impair::Bernoulli::new(0.3).unwrap());
        let got: Vec<u16> =
            send_spaced(&mut jittered_line(jitter, loss, 11), 300, 1_000 * US).into_iter().map(|(i, _)| i).collect();
        (0..300).filter(|i| !got.contains(i)).collect::<Vec<u16>>()
    };
    let without = lost(0);
    assert!(!without.is_empty());
    assert_eq!(lost(100 * US), without);
}
