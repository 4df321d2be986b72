//! The 802.11 port and medium as the world uses them: the address rules of IEEE
//! 802.11-2020 Table 9-26 (seed 000 Table 1) checked field by field with wire's
//! parser, and the BSS medium driven by a tiny loop (enqueue while the queue has
//! room, poll at `poll_at`).
//!
//! Reference figures are computed here from the standard's numbers, not taken from
//! the code under test: one station's per-frame time DIFS + CWmin/2 slots + PLCP +
//! MPDU + SIFS + Ack (clauses 10.3 and 16), and Bianchi's model for two stations.

use sim::rng::RunSeed;
use sim::wifi::adapter::{
    ap_accepts, ap_downlink, ibss_send, station_accepts, station_uplink, Adapter, CipherCost, DropReason,
    ForeignSource, LinkCipher, Role, DEFAULT_CCMP_TK, DEFAULT_WEP104_KEY,
};
use sim::wifi::bianchi::BianchiInputs;
use sim::wifi::bss::{Bss, BssEvent, BssParams};
use sim::wifi::phy::{PhyParams, Preamble, Rate};
use sim::wifi::Nanos;
use wire::dot11::{DataRepr, Frame};
use wire::dot11_crypto;
use wire::ethernet::{self, Address, EtherType};
use wire::llc;

const STA: Address = Address([0x02, 0, 0, 0, 0, 0xa1]); // station A's adapter (MAC-A1)
const AP: Address = Address([0x02, 0, 0, 0, 0, 0xaa]); // the AP, = BSSID
const WS1: Address = Address([0x02, 0, 0, 0, 0, 0x01]); // wired host behind the AP
const WS2: Address = Address([0x02, 0, 0, 0, 0, 0x02]); // wired host behind station A
const STA_B: Address = Address([0x02, 0, 0, 0, 0, 0xb1]);
const IBSS: Address = Address([0x06, 0, 0, 0, 0, 0x99]);

fn payload() -> Vec<u8> {
    (0..100u8).collect()
}

fn eth(dst: Address, src: Address) -> Vec<u8> {
    let mut out = Vec::new();
    ethernet::Repr { src_addr: src, dst_addr: dst, ethertype: EtherType::Ipv4 }.encapsulate(
        &payload(),
        false,
        &mut out,
    );
    out
}

/// (To DS, From DS, A1, A2, A3, A4 if present) as wire's view reads them, and the
/// EtherType and payload after LLC/SNAP as wire's decapsulation (with an FCS added)
/// reads them.
fn fields(mpdu: &[u8]) -> (bool, bool, Address, Address, Address, Option<Address>) {
    let frame = Frame::new_checked(mpdu).unwrap();
    let fc = frame.frame_control();
    let a4 = (fc.to_ds && fc.from_ds).then(|| frame.addr4());
    let mut with_fcs = mpdu.to_vec();
    wire::dot11::append_fcs(&mut with_fcs);
    let (_, ethertype, body) = DataRepr::decapsulate_ethertype(&with_fcs).unwrap();
    assert_eq!(ethertype, EtherType::Ipv4);
    assert_eq!(body, payload());
    (fc.to_ds, fc.from_ds, frame.addr1(), frame.addr2(), frame.addr3(), a4)
}

// ---------------------------------------------------------------------------
// Table 9-26
// ---------------------------------------------------------------------------

#[test]
fn case_01_station_to_ap() {
    let mpdu = station_uplink(&eth(WS1, STA), STA, AP, ForeignSource::Drop, false).unwrap();
    let (to_ds, from_ds, a1, a2, a3, a4) = fields(&mpdu);
    assert!(to_ds && !from_ds);
    assert_eq!((a1, a2, a3, a4), (AP, STA, WS1, None)); // BSSID, SA, DA
    assert_eq!(ap_accepts(&mpdu, AP, false).unwrap(), eth(WS1, STA));
}

#[test]
fn case_10_ap_to_station() {
    let mpdu = ap_downlink(&eth(STA, WS1), AP, None).unwrap();
    let (to_ds, from_ds, a1, a2, a3, a4) = fields(&mpdu);
    assert!(!to_ds && from_ds);
    assert_eq!((a1, a2, a3, a4), (STA, AP, WS1, None)); // DA, BSSID, SA
    assert_eq!(station_accepts(&mpdu, STA, false).unwrap(), eth(STA, WS1));
    // Broadcast from the AP reaches every station.
    let mpdu = ap_downlink(&eth(Address::BROADCAST, WS1), AP, None).unwrap();
    assert_eq!(station_accepts(&mpdu, STA_B, false).unwrap(), eth(Address::BROADCAST, WS1));
}

#[test]
fn case_00_ad_hoc() {
    let mpdu = ibss_send(&eth(STA_B, STA), STA, IBSS, ForeignSource::Drop).unwrap();
    let (to_ds, from_ds, a1, a2, a3, a4) = fields(&mpdu);
    assert!(!to_ds && !from_ds);
    assert_eq!((a1, a2, a3, a4), (STA_B, STA, IBSS, None)); // DA, SA, BSSID
    assert_eq!(station_accepts(&mpdu, STA_B, false).unwrap(), eth(STA_B, STA));
    assert!(matches!(station_accepts(&mpdu, STA, false), Err(DropReason::NotForThisAdapter { .. })));
}

#[test]
fn case_11_wds_keeps_the_wired_source() {
    // Seed 000 Fig. 5-A: WS2's frame through station A to WS1 needs four addresses.
    let mpdu = station_uplink(&eth(WS1, WS2), STA, AP, ForeignSource::Drop, true).unwrap();
    let (to_ds, from_ds, a1, a2, a3, a4) = fields(&mpdu);
    assert!(to_ds && from_ds);
    assert_eq!((a1, a2, a3, a4), (AP, STA, WS1, Some(WS2))); // RA, TA, DA, SA
    assert_eq!(ap_accepts(&mpdu, AP, true).unwrap(), eth(WS1, WS2));
    // An AP without WDS refuses it.
    assert!(matches!(ap_accepts(&mpdu, AP, false), Err(DropReason::WrongDirection { ds: 0b11, .. })));
    // Fig. 5-C: WS1 → WS2 from the AP to repeater A.
    let mpdu = ap_downlink(&eth(WS2, WS1), AP, Some(STA)).unwrap();
    let (to_ds, from_ds, a1, a2, a3, a4) = fields(&mpdu);
    assert!(to_ds && from_ds);
    assert_eq!((a1, a2, a3, a4), (STA, AP, WS2, Some(WS1)));
    assert_eq!(station_accepts(&mpdu, STA, true).unwrap(), eth(WS2, WS1));
    assert!(matches!(station_accepts(&mpdu, STA, false), Err(DropReason::WrongDirection { ds: 0b11, .. })));
}

#[test]
fn a_station_drops_or_rewrites_a_foreign_source() {
    // Seed 000 §2.1, Fig. 5-B: WS2's frame bridged by station A.
    let err = station_uplink(&eth(WS1, WS2), STA, AP, ForeignSource::Drop, false).unwrap_err();
    assert_eq!(err, DropReason::ForeignSourceAddress { source: WS2, station: STA });
    assert_eq!(
        err.to_string(),
        "station adapter sends only 3-address frames from its own MAC (802.11 Table 9-26 \
         case 01): frame from 02:00:00:00:00:02 through 02:00:00:00:00:a1 dropped"
    );
    let mpdu = station_uplink(&eth(WS1, WS2), STA, AP, ForeignSource::Rewrite, false).unwrap();
    let (_, _, a1, a2, a3, _) = fields(&mpdu);
    assert_eq!((a1, a2, a3), (AP, STA, WS1)); // WS2's address is lost
    assert_eq!(ap_accepts(&mpdu, AP, false).unwrap(), eth(WS1, STA));
    // Ad hoc: the same rule.
    assert!(matches!(
        ibss_send(&eth(STA_B, WS2), STA, IBSS, ForeignSource::Drop),
        Err(DropReason::ForeignSourceAddress { .. })
    ));
}

#[test]
fn a_station_adapter_drops_frames_for_other_macs() {
    // Seed 000 Fig. 5-D: the AP's frame for WS2 goes to DA = WS2, which no adapter is.
    let mpdu = ap_downlink(&eth(WS2, WS1), AP, None).unwrap();
    let err = station_accepts(&mpdu, STA, false).unwrap_err();
    assert_eq!(err, DropReason::NotForThisAdapter { receiver: WS2, adapter: STA });
    assert!(err.to_string().starts_with(
        "station adapter accepts only frames addressed to its own MAC: frame for 02:00:00:00:00:02 dropped"
    ));
}

#[test]
fn wep_frames_decrypt_with_wire() {
    let mut sta = Adapter::new(
        Role::Station { mac: STA, bssid: AP },
        ForeignSource::Drop,
        false,
        LinkCipher::from_security(qoslab_plan::WifiSecurity::Wep104),
    );
    let sent = sta.transmit(&eth(WS1, STA), None).unwrap();
    assert_eq!(sent.cost, CipherCost::Rc4);
    // RC4 ran over LLC/SNAP + payload + ICV.
    assert_eq!(sent.cipher_bytes, 8 + 100 + 4);
    let frame = Frame::new_checked(&sent.frame[..]).unwrap();
    assert!(frame.frame_control().protected);
    assert_eq!((frame.addr1(), frame.addr2(), frame.addr3()), (AP, STA, WS1));
    let mut clear = Vec::new();
    let wep = dot11_crypto::wep_decapsulate(&DEFAULT_WEP104_KEY, frame.payload(), &mut clear).unwrap();
    assert_eq!(wep.key_id, 0);
    let (llc, body) = llc::Repr::decapsulate(&clear).unwrap();
    assert_eq!(llc.as_ethertype(), Some(EtherType::Ipv4));
    assert_eq!(body, payload());
    // The next frame uses the next IV.
    let second = sta.transmit(&eth(WS1, STA), None).unwrap();
    assert_ne!(second.frame[24..27], sent.frame[24..27]);
    // And the AP's adapter turns it back into the Ethernet frame.
    let ap = Adapter::new(
        Role::AccessPoint { bssid: AP },
        ForeignSource::Drop,
        false,
        LinkCipher::wep(&DEFAULT_WEP104_KEY).unwrap(),
    );
    assert_eq!(ap.receive(&sent.frame).unwrap().frame, eth(WS1, STA));
}

#[test]
fn ccmp_frames_decrypt_with_wire() {
    let mut ap =
        Adapter::new(Role::AccessPoint { bssid: AP }, ForeignSource::Drop, false, LinkCipher::ccmp(DEFAULT_CCMP_TK));
    let sent = ap.transmit(&eth(STA, WS1), None).unwrap();
    assert_eq!((sent.cost, sent.cipher_bytes), (CipherCost::Aes, 108 + 8));
    let (header, body) = sent.frame.split_at(24);
    let mut clear = Vec::new();
    dot11_crypto::ccmp_decapsulate(&DEFAULT_CCMP_TK, header, body, &mut clear).unwrap();
    assert_eq!(&clear[8..], &payload()[..]);
}

// ---------------------------------------------------------------------------
// The medium
// ---------------------------------------------------------------------------

const MSDU_LEN: usize = 1500;

/// A 1500-byte MSDU from station `sa` to the AP: 24 + 8 + 1500 bytes, 1536 with FCS.
fn uplink_mpdu() -> Vec<u8> {
    let mut frame = Vec::new();
    ethernet::Repr { src_addr: STA, dst_addr: WS1, ethertype: EtherType::Ipv4 }.encapsulate(
        &[0u8; MSDU_LEN],
        false,
        &mut frame,
    );
    station_uplink(&frame, STA, AP, ForeignSource::Drop, false).unwrap()
}

struct Run {
    events: Vec<BssEvent>,
    delivered: u64,
    last_delivery: Nanos,
}

impl Run {
    fn throughput_mbps(&self) -> f64 {
        (self.delivered * MSDU_LEN as u64 * 8) as f64 / self.last_delivery as f64 * 1e3
    }
}

/// The world's loop: `senders` keep their queues full of frames for the AP (member
/// 0) until `target` frames are delivered.
fn saturate(bss: &mut Bss, senders: &[usize], target: u64) -> Run {
    let mpdu = uplink_mpdu();
    let mut run = Run { events: Vec::new(), delivered: 0, last_delivery: 0 };
    let mut now = 0;
    while run.delivered < target {
        for &s in senders {
            while bss.has_room(s) {
                bss.enqueue(now, s, mpdu.clone(), Some(0)).unwrap();
            }
        }
        now = bss.poll_at().expect("saturated senders keep the medium busy");
        let mut out = Vec::new();
        bss.poll(now, &mut out);
        for e in &out {
            if let BssEvent::Delivered { at, .. } = e {
                run.delivered += 1;
                run.last_delivery = *at;
            }
        }
        run.events.extend(out);
    }
    run
}

fn params(preamble: Preamble, members: usize) -> BssParams {
    BssParams::new(PhyParams::dot11b(preamble), Rate::Cck11, members, 20)
}

#[test]
fn one_saturated_station_matches_the_per_frame_formula() {
    for (preamble, plcp_us) in [(Preamble::Long, 192.0), (Preamble::Short, 96.0)] {
        let mut bss = Bss::new(params(preamble, 2), RunSeed(5), 1);
        let run = saturate(&mut bss, &[1], 5_000);
        // DIFS 50 + CWmin/2 = 15.5 slots of 20 µs + PLCP + 1536 bytes at 11 Mb/s
        // (rounded up to whole µs) + SIFS 10 + Ack (PLCP + 14 bytes at 2 Mb/s).
        let mpdu_us = (1536.0 * 8.0 / 11.0_f64).ceil();
        let ack_us = plcp_us + 14.0 * 8.0 / 2.0;
        let frame_us = 50.0 + 15.5 * 20.0 + plcp_us + mpdu_us + 10.0 + ack_us;
        let analytical = MSDU_LEN as f64 * 8.0 / frame_us;
        let measured = run.throughput_mbps();
        eprintln!("one station, {preamble:?}: {measured:.4} Mb/s vs {analytical:.4} Mb/s");
        assert!((measured - analytical).abs() / analytical < 0.02, "{preamble:?}: {measured} vs {analytical}");
        let s = bss.member_stats(1);
        assert_eq!(s.retries, 0);
        assert_eq!(bss.member_stats(0).rx_collisions, 0);
    }
}

#[test]
fn two_saturated_stations_collide_and_follow_bianchi() {
    let phy = PhyParams::dot11b(Preamble::Long);
    let mut bss = Bss::new(params(Preamble::Long, 3), RunSeed(7), 2);
    let run = saturate(&mut bss, &[1, 2], 20_000);
    let ap = bss.member_stats(0);
    let (s1, s2) = (bss.member_stats(1), bss.member_stats(2));
    assert!(ap.rx_collisions > 0, "collisions happen");
    assert!(s1.retries > 0 && s2.retries > 0);
    let mut inputs = BianchiInputs::basic_access(&phy, 2, MSDU_LEN, 1536, Rate::Cck11);
    // Both stations of a collision are its senders: each waits its ACKTimeout
    // (SIFS + slot + 192 µs) then DIFS, not EIFS.
    inputs.collision_time = phy.ppdu_time(1536, Rate::Cck11) + (10 + 20 + 192 + 50) * 1_000;
    let model = inputs.solve();
    let measured = run.throughput_mbps();
    let predicted = model.throughput_bps / 1e6;
    let attempts = s1.attempts + s2.attempts;
    let collided = (s1.retries + s2.retries) as f64 / attempts as f64;
    eprintln!(
        "two stations: {measured:.4} Mb/s vs Bianchi {predicted:.4} Mb/s; \
         collided share {collided:.4} vs p {:.4}; {} collisions at the AP",
        model.collision_probability, ap.rx_collisions
    );
    assert!((measured - predicted).abs() / predicted < 0.03);
    assert!((collided - model.collision_probability).abs() < 0.01);
}

struct HiddenFigures {
    throughput_mbps: f64,
    /// Data frames lost to collisions at the AP, per frame delivered.
    data_collisions_per_frame: f64,
    /// Retransmissions per exchange started.
    retry_share: f64,
    dropped: u64,
}

fn two_stations(hidden: bool, rts_threshold: usize, seed: u64) -> HiddenFigures {
    let mut p = params(Preamble::Long, 3);
    p.rts_threshold = rts_threshold;
    if hidden {
        // The AP hears both; the stations hear the AP but not each other.
        p.hears = Some(vec![vec![true, true, true], vec![true, true, false], vec![true, false, true]]);
    }
    let mut bss = Bss::new(p, RunSeed(seed), 3);
    let run = saturate(&mut bss, &[1, 2], 5_000);
    let (s1, s2) = (bss.member_stats(1), bss.member_stats(2));
    HiddenFigures {
        throughput_mbps: run.throughput_mbps(),
        data_collisions_per_frame: bss.member_stats(0).rx_collisions as f64 / run.delivered as f64,
        retry_share: (s1.retries + s2.retries) as f64 / (s1.attempts + s2.attempts) as f64,
        dropped: s1.dropped + s2.dropped,
    }
}

#[test]
fn hidden_terminals_collide_at_the_ap_and_rts_cts_helps() {
    let visible = two_stations(false, 2347, 11);
    let hidden = two_stations(true, 2347, 11);
    let hidden_rts = two_stations(true, 0, 11);
    for (name, f) in [("visible", &visible), ("hidden", &hidden), ("hidden + RTS/CTS", &hidden_rts)] {
        eprintln!(
            "{name}: {:.3} Mb/s, {:.4} data collisions per frame, retry share {:.4}, {} dropped",
            f.throughput_mbps, f.data_collisions_per_frame, f.retry_share, f.dropped
        );
    }
    assert!(hidden.data_collisions_per_frame > 10.0 * visible.data_collisions_per_frame);
    assert!(hidden.throughput_mbps < 0.8 * visible.throughput_mbps);
    assert!(hidden_rts.data_collisions_per_frame < 0.2 * hidden.data_collisions_per_frame);
    assert!(hidden_rts.throughput_mbps > hidden.throughput_mbps);
}

#[test]
fn a_frame_error_rate_of_a_tenth_retries_a_tenth_of_attempts() {
    let mut p = params(Preamble::Long, 2);
    p.frame_error_rate = vec![0.1, 0.0];
    let mut bss = Bss::new(p, RunSeed(13), 4);
    saturate(&mut bss, &[1], 10_000);
    let s = bss.member_stats(1);
    let share = s.retries as f64 / s.attempts as f64;
    eprintln!("FER 0.1: {} retries of {} attempts = {share:.4}", s.retries, s.attempts);
    assert!((share - 0.1).abs() < 0.01, "{share}");
    assert_eq!(bss.member_stats(0).rx_errors, s.retries + s.dropped);
}

fn delivered_sequence(seed: u64) -> Vec<(usize, usize, Vec<u8>, Nanos)> {
    let mut bss = Bss::new(params(Preamble::Long, 3), RunSeed(seed), 9);
    saturate(&mut bss, &[1, 2], 2_000)
        .events
        .into_iter()
        .filter_map(|e| match e {
            BssEvent::Delivered { to, from, mpdu, at } => Some((to, from, mpdu, at)),
            _ => None,
        })
        .collect()
}

#[test]
fn the_same_seed_gives_the_same_run() {
    let a = delivered_sequence(21);
    assert_eq!(a, delivered_sequence(21));
    assert_ne!(a, delivered_sequence(22));
}

#[test]
fn without_link_acks_each_frame_goes_once_and_nothing_follows_it() {
    // Seed 004's WaveLAN: "the wireless protocol does not provide any acknowledgements
    // mechanism". Per frame: DIFS 50 + CWmin/2 = 15.5 slots of 20 µs + PLCP + the MPDU,
    // and no SIFS + Ack after it; a lost frame is lost, never retried.
    let mut p = params(Preamble::Long, 2);
    p.link_acks = false;
    p.frame_error_rate = vec![0.1, 0.0];
    let mut bss = Bss::new(p, RunSeed(5), 1);
    let run = saturate(&mut bss, &[1], 5_000);
    let mpdu_us = (1536.0 * 8.0 / 11.0_f64).ceil();
    let frame_us = 50.0 + 15.5 * 20.0 + 192.0 + mpdu_us;
    // What is delivered: the nine frames in ten that the errors spare.
    let analytical = 0.9 * MSDU_LEN as f64 * 8.0 / frame_us;
    let measured = run.throughput_mbps();
    eprintln!("no link acks, FER 0.1: {measured:.4} Mb/s vs {analytical:.4} Mb/s");
    assert!((measured - analytical).abs() / analytical < 0.03, "{measured} vs {analytical}");
    let s = bss.member_stats(1);
    assert_eq!((s.retries, s.dropped), (0, 0));
    assert_eq!(bss.member_stats(0).rx_errors + run.delivered, s.attempts);
    // Each frame lost is reported lost (so what it carried is not counted as in flight).
    let lost = run
        .events
        .iter()
        .filter(|e| matches!(e, BssEvent::Dropped { reason: DropReason::NotReceived, delivered: false, .. }))
        .count() as u64;
    assert_eq!(lost, bss.member_stats(0).rx_errors);
    // The Duration field reserves nothing (no Ack to protect).
    let duration = run.events.iter().find_map(|e| match e {
        BssEvent::Delivered { mpdu, .. } => Some(u16::from_le_bytes([mpdu[2], mpdu[3]])),
        _ => None,
    });
    assert_eq!(duration, Some(0));
}
