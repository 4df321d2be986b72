//! Window growth per octet (RFC 3465) or per ACK (RFC 5681 §3.1), each checked against
//! the RFC's own equations computed here, ACK by ACK.

use sim::tcp::congestion::Congestion;
use sim::tcp::{CongestionControl, CwndGrowth};

const SMSS: u32 = 1000;
const S: u64 = SMSS as u64;

fn newreno(growth: CwndGrowth, limit: Option<u32>) -> Congestion {
    let mut cc = Congestion::new(CongestionControl::NewReno, SMSS, 10);
    cc.set_growth(growth, limit);
    cc
}

#[test]
fn slow_start_per_ack_adds_at_most_one_smss() {
    // RFC 5681 §3.1 Eq. 2: cwnd += min(N, SMSS) for each ACK of N new octets.
    let mut cc = newreno(CwndGrowth::Acks, Some(2));
    for n in [500, 1000, 2000, 8000] {
        let before = cc.cwnd;
        cc.on_ack(0, n, SMSS, None);
        assert_eq!(cc.cwnd, before + n.min(S), "N = {n}");
    }
}

#[test]
fn slow_start_byte_counting_adds_up_to_l() {
    // RFC 3465 §2.2: cwnd += min(N, L·SMSS), L = 2 by default; none: all of N (Linux).
    for (limit, l) in [(Some(2), 2 * S), (Some(1), S), (Some(8), 8 * S), (None, u64::MAX)] {
        let mut cc = newreno(CwndGrowth::Bytes, limit);
        for n in [500, 1000, 2000, 5000, 12_000] {
            let before = cc.cwnd;
            cc.on_ack(0, n, SMSS, None);
            assert_eq!(cc.cwnd, before + n.min(l), "L {limit:?}, N = {n}");
        }
    }
}

/// Congestion avoidance from cwnd = ssthresh = 10 SMSS, with a delayed ACK for every
/// two full segments: the window after `acks` ACKs.
fn avoidance(growth: CwndGrowth, acks: usize) -> u64 {
    let mut cc = newreno(growth, Some(2));
    cc.cwnd = 20 * S;
    cc.on_congestion_event(20 * S, SMSS); // ssthresh = cwnd = 10 SMSS (RFC 5681 Eq. 4)
    assert_eq!((cc.cwnd, cc.ssthresh), (10 * S, 10 * S));
    for _ in 0..acks {
        cc.on_ack(0, 2 * S, SMSS, None);
    }
    cc.cwnd
}

#[test]
fn congestion_avoidance_per_ack_is_eq_3() {
    // RFC 5681 §3.1 Eq. 3 once per ACK, whatever it covers: cwnd += SMSS·SMSS/cwnd
    // (integer octets, at least 1).
    let mut w = 10 * S;
    for k in 1..=60 {
        w += (S * S / w).max(1);
        assert_eq!(avoidance(CwndGrowth::Acks, k), w, "after {k} ACKs");
    }
}

#[test]
fn congestion_avoidance_byte_counting_is_one_smss_per_window_acked() {
    // RFC 3465 §2.1: bytes_acked += N; when bytes_acked ≥ cwnd, bytes_acked −= cwnd and
    // cwnd += SMSS.
    let (mut w, mut acked) = (10 * S, 0);
    for k in 1..=60 {
        acked += 2 * S;
        if acked >= w {
            acked -= w;
            w += S;
        }
        assert_eq!(avoidance(CwndGrowth::Bytes, k), w, "after {k} ACKs");
    }
    // With an ACK every second segment, per-ACK growth is about half as fast.
    let (bytes, acks) = (avoidance(CwndGrowth::Bytes, 60) - 10 * S, avoidance(CwndGrowth::Acks, 60) - 10 * S);
    assert!(acks * 10 < bytes * 7 && acks * 10 > bytes * 4, "acks {acks}, bytes {bytes}");
}

#[test]
fn cubic_per_ack_counts_one_segment_an_ack() {
    // Per ACK, an ACK of two segments grows CUBIC as one of one segment.
    let grow = |growth: CwndGrowth, acked: u64| {
        let mut cc = Congestion::new(CongestionControl::Cubic, SMSS, 10);
        cc.set_growth(growth, Some(2));
        cc.cwnd = 100 * S;
        cc.on_congestion_event(100 * S, SMSS);
        let start = cc.cwnd;
        for i in 0..200u64 {
            cc.on_ack(i * 1_000_000, acked, SMSS, Some(20_000_000));
        }
        cc.cwnd - start
    };
    assert_eq!(grow(CwndGrowth::Acks, 2 * S), grow(CwndGrowth::Acks, S));
    assert_eq!(grow(CwndGrowth::Bytes, S), grow(CwndGrowth::Acks, S));
    assert!(grow(CwndGrowth::Bytes, 2 * S) > grow(CwndGrowth::Acks, 2 * S));
}
