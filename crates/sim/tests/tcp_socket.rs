//! The socket driven by scripted segments, smoltcp style: set-up functions reach each
//! state of RFC 9293 §3.3.2's diagram, `send!` hands the socket a segment from the
//! peer, `recv!` collects what it sends.

use sim::tcp::{CongestionControl, State, TcpConfig, TcpSocket};
use wire::tcp::{Control, Repr, SeqNumber};

const LOCAL_PORT: u16 = 80;
const REMOTE_PORT: u16 = 49500;
const LOCAL_ISS: u32 = 10_000;
/// Near the top of the sequence space so every test also crosses the wrap.
const REMOTE_ISS: u32 = 0xffff_ff00;
const MS: u64 = 1_000_000;
const MSS: usize = 1000;

fn seq(n: u32) -> SeqNumber {
    SeqNumber::from_u32(n)
}
fn local(off: usize) -> SeqNumber {
    seq(LOCAL_ISS) + off
}
fn remote(off: usize) -> SeqNumber {
    seq(REMOTE_ISS) + off
}

/// A segment from the peer.
fn peer(control: Control, seq: SeqNumber, ack: Option<SeqNumber>) -> Repr {
    let mut r = Repr::new(REMOTE_PORT, LOCAL_PORT, control, seq, 64_000);
    r.ack_number = ack;
    r
}

/// The plain configuration scripted tests use: no options, every segment ACKed at
/// once, Nagle off, NewReno, MSS 1000.
fn plain() -> TcpConfig {
    TcpConfig {
        mss: MSS as u16,
        window_scaling: false,
        sack: false,
        timestamps: false,
        delayed_ack: None,
        nagle: false,
        congestion_control: CongestionControl::NewReno,
        recv_buffer: 64_000,
        ..TcpConfig::default()
    }
}

macro_rules! send {
    ($s:expr, $t:expr, $repr:expr) => {
        send!($s, $t, $repr, &[])
    };
    ($s:expr, $t:expr, $repr:expr, $payload:expr) => {{
        let mut r: Repr = $repr;
        let payload: &[u8] = $payload;
        r.payload_len = payload.len();
        assert!($s.accepts(&r) || $s.state() == State::Closed, "segment not for this socket");
        $s.process($t, &r, payload)
    }};
}

macro_rules! recv {
    ($s:expr, $t:expr) => {{
        let mut out: Vec<(Repr, Vec<u8>)> = Vec::new();
        $s.dispatch($t, |r, p| out.push((r, p.to_vec())));
        out
    }};
}

fn socket_listen_with(cfg: TcpConfig) -> TcpSocket {
    let mut s = TcpSocket::new(cfg);
    s.listen(LOCAL_PORT, seq(LOCAL_ISS));
    s
}

fn socket_syn_received_with(cfg: TcpConfig) -> TcpSocket {
    let mut s = socket_listen_with(cfg);
    let mut syn = peer(Control::Syn, remote(0), None);
    syn.max_seg_size = Some(MSS as u16);
    assert_eq!(send!(s, 0, syn), None);
    assert_eq!(s.state(), State::SynReceived);
    let out = recv!(s, 0);
    assert_eq!(out.len(), 1);
    s
}

fn socket_established_with(cfg: TcpConfig) -> TcpSocket {
    let mut s = socket_syn_received_with(cfg);
    send!(s, 10 * MS, peer(Control::None, remote(1), Some(local(1))));
    assert_eq!(s.state(), State::Established);
    assert!(recv!(s, 10 * MS).is_empty());
    s
}

fn socket_established() -> TcpSocket {
    socket_established_with(plain())
}

fn socket_syn_sent() -> TcpSocket {
    let mut s = TcpSocket::new(plain());
    s.connect(0, LOCAL_PORT, REMOTE_PORT, seq(LOCAL_ISS));
    let out = recv!(s, 0);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].0.control, Control::Syn);
    s
}

fn socket_fin_wait_1() -> TcpSocket {
    let mut s = socket_established();
    s.close();
    assert_eq!(s.state(), State::FinWait1);
    let out = recv!(s, 20 * MS);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].0.control, Control::Fin);
    assert_eq!(out[0].0.seq_number, local(1));
    s
}

fn socket_fin_wait_2() -> TcpSocket {
    let mut s = socket_fin_wait_1();
    send!(s, 30 * MS, peer(Control::None, remote(1), Some(local(2))));
    assert_eq!(s.state(), State::FinWait2);
    s
}

fn socket_close_wait() -> TcpSocket {
    let mut s = socket_established();
    send!(s, 20 * MS, peer(Control::Fin, remote(1), Some(local(1))));
    assert_eq!(s.state(), State::CloseWait);
    let out = recv!(s, 20 * MS);
    assert_eq!(out[0].0.ack_number, Some(remote(2)));
    s
}

/// One data segment the socket sent: (seq, len).
fn data_segs(out: &[(Repr, Vec<u8>)]) -> Vec<(SeqNumber, usize)> {
    out.iter().filter(|(r, _)| r.payload_len > 0).map(|(r, _)| (r.seq_number, r.payload_len)).collect()
}

// ----- RFC 9293 §3.3.2 transitions ----------------------------------------------------

#[test]
fn closed_answers_with_rst() {
    let mut s = TcpSocket::new(plain());
    let reply = s.process(0, &peer(Control::None, remote(1), Some(local(5))), &[]).unwrap();
    assert_eq!((reply.control, reply.seq_number, reply.ack_number), (Control::Rst, local(5), None));
    let reply = s.process(0, &peer(Control::Syn, remote(0), None), &[]).unwrap();
    assert_eq!((reply.control, reply.ack_number), (Control::Rst, Some(remote(1))));
    assert_eq!(s.process(0, &peer(Control::Rst, remote(0), None), &[]), None);
}

#[test]
fn listen_syn_to_syn_received_sends_syn_ack() {
    let mut s = socket_listen_with(plain());
    let mut syn = peer(Control::Syn, remote(0), None);
    syn.max_seg_size = Some(1200);
    send!(s, 0, syn);
    assert_eq!(s.state(), State::SynReceived);
    let out = recv!(s, 0);
    let (r, p) = &out[0];
    assert_eq!((r.control, r.seq_number, r.ack_number), (Control::Syn, local(0), Some(remote(1))));
    assert_eq!(r.max_seg_size, Some(MSS as u16));
    assert!(p.is_empty());
    assert_eq!(s.smss(), MSS as u32);
}

#[test]
fn listen_ignores_rst_and_resets_ack() {
    let mut s = socket_listen_with(plain());
    assert_eq!(send!(s, 0, peer(Control::Rst, remote(0), None)), None);
    let rst = send!(s, 0, peer(Control::None, remote(0), Some(local(77)))).unwrap();
    assert_eq!((rst.control, rst.seq_number), (Control::Rst, local(77)));
    assert_eq!(s.state(), State::Listen);
}

#[test]
fn listen_close_to_closed() {
    let mut s = socket_listen_with(plain());
    s.close();
    assert_eq!(s.state(), State::Closed);
}

#[test]
fn syn_received_ack_to_established() {
    let s = socket_established();
    assert_eq!(s.state(), State::Established);
    // The handshake gave the first RTT sample, 10 ms.
    assert_eq!(s.srtt(), Some(10 * MS));
}

#[test]
fn syn_received_rst_returns_to_listen() {
    let mut s = socket_syn_received_with(plain());
    send!(s, MS, peer(Control::Rst, remote(1), None));
    assert_eq!(s.state(), State::Listen);
}

#[test]
fn syn_received_duplicate_syn_resends_syn_ack() {
    let mut s = socket_syn_received_with(plain());
    send!(s, MS, peer(Control::Syn, remote(0), None));
    let out = recv!(s, MS);
    assert_eq!((out[0].0.control, out[0].0.ack_number), (Control::Syn, Some(remote(1))));
}

#[test]
fn syn_received_bad_ack_is_reset() {
    let mut s = socket_syn_received_with(plain());
    let rst = send!(s, MS, peer(Control::None, remote(1), Some(local(9)))).unwrap();
    assert_eq!((rst.control, rst.seq_number), (Control::Rst, local(9)));
}

#[test]
fn syn_received_close_sends_fin_once_established() {
    let mut s = socket_syn_received_with(plain());
    s.close();
    send!(s, MS, peer(Control::None, remote(1), Some(local(1))));
    assert_eq!(s.state(), State::FinWait1);
    let out = recv!(s, MS);
    assert_eq!((out[0].0.control, out[0].0.seq_number), (Control::Fin, local(1)));
}

#[test]
fn syn_sent_syn_ack_to_established() {
    let mut s = socket_syn_sent();
    let mut syn_ack = peer(Control::Syn, remote(0), Some(local(1)));
    syn_ack.max_seg_size = Some(1400);
    send!(s, 5 * MS, syn_ack);
    assert_eq!(s.state(), State::Established);
    let out = recv!(s, 5 * MS);
    assert_eq!(out.len(), 1);
    assert_eq!((out[0].0.control, out[0].0.seq_number, out[0].0.ack_number), (Control::None, local(1), Some(remote(1))));
    assert_eq!(s.smss(), MSS as u32);
}

#[test]
fn syn_sent_simultaneous_open() {
    let mut s = socket_syn_sent();
    send!(s, MS, peer(Control::Syn, remote(0), None));
    assert_eq!(s.state(), State::SynReceived);
    let out = recv!(s, MS);
    assert_eq!((out[0].0.control, out[0].0.seq_number, out[0].0.ack_number), (Control::Syn, local(0), Some(remote(1))));
    send!(s, 2 * MS, peer(Control::None, remote(1), Some(local(1))));
    assert_eq!(s.state(), State::Established);
}

#[test]
fn syn_sent_rst() {
    let mut s = socket_syn_sent();
    // A RST whose ACK does not acknowledge our SYN is ignored; a bad ACK is reset.
    send!(s, MS, peer(Control::Rst, remote(0), Some(local(5))));
    assert_eq!(s.state(), State::SynSent);
    let rst = send!(s, MS, peer(Control::None, remote(0), Some(local(5)))).unwrap();
    assert_eq!((rst.control, rst.seq_number), (Control::Rst, local(5)));
    send!(s, MS, peer(Control::Rst, remote(0), Some(local(1))));
    assert_eq!(s.state(), State::Closed);
}

#[test]
fn syn_sent_close_to_closed() {
    let mut s = socket_syn_sent();
    s.close();
    assert_eq!(s.state(), State::Closed);
}

#[test]
fn syn_retransmitted_with_doubling_timeout() {
    let mut s = socket_syn_sent();
    // RFC 6298 §2.1: 1 s before any sample, doubled at each expiry (§5.5).
    assert_eq!(s.poll_at(), Some(1000 * MS));
    assert!(recv!(s, 999 * MS).is_empty());
    let out = recv!(s, 1000 * MS);
    assert_eq!(out[0].0.control, Control::Syn);
    assert_eq!(s.poll_at(), Some(3000 * MS));
    assert_eq!(recv!(s, 3000 * MS)[0].0.control, Control::Syn);
    assert_eq!(s.poll_at(), Some(7000 * MS));
}

#[test]
fn established_close_fin_wait_1_2_time_wait_closed() {
    let mut s = socket_fin_wait_2();
    send!(s, 40 * MS, peer(Control::Fin, remote(1), Some(local(2))));
    assert_eq!(s.state(), State::TimeWait);
    let out = recv!(s, 40 * MS);
    assert_eq!(out[0].0.ack_number, Some(remote(2)));
    // 2·MSL, MSL = 30 s by default.
    assert_eq!(s.poll_at(), Some(40 * MS + 60_000 * MS));
    recv!(s, 40 * MS + 60_000 * MS);
    assert_eq!(s.state(), State::Closed);
}

#[test]
fn time_wait_acks_a_retransmitted_fin_and_restarts() {
    let mut s = socket_fin_wait_2();
    send!(s, 40 * MS, peer(Control::Fin, remote(1), Some(local(2))));
    recv!(s, 40 * MS);
    send!(s, 500 * MS, peer(Control::Fin, remote(1), Some(local(2))));
    assert_eq!(s.state(), State::TimeWait);
    let out = recv!(s, 500 * MS);
    assert_eq!(out[0].0.ack_number, Some(remote(2)));
    assert_eq!(s.poll_at(), Some(500 * MS + 60_000 * MS));
}

#[test]
fn fin_wait_1_fin_to_closing_to_time_wait() {
    let mut s = socket_fin_wait_1();
    send!(s, 30 * MS, peer(Control::Fin, remote(1), Some(local(1))));
    assert_eq!(s.state(), State::Closing);
    assert_eq!(recv!(s, 30 * MS)[0].0.ack_number, Some(remote(2)));
    send!(s, 40 * MS, peer(Control::None, remote(2), Some(local(2))));
    assert_eq!(s.state(), State::TimeWait);
}

#[test]
fn fin_wait_1_fin_ack_to_time_wait() {
    let mut s = socket_fin_wait_1();
    send!(s, 30 * MS, peer(Control::Fin, remote(1), Some(local(2))));
    assert_eq!(s.state(), State::TimeWait);
}

#[test]
fn close_wait_close_last_ack_closed() {
    let mut s = socket_close_wait();
    s.close();
    assert_eq!(s.state(), State::LastAck);
    let out = recv!(s, 30 * MS);
    assert_eq!((out[0].0.control, out[0].0.seq_number), (Control::Fin, local(1)));
    send!(s, 40 * MS, peer(Control::None, remote(2), Some(local(2))));
    assert_eq!(s.state(), State::Closed);
}

#[test]
fn fin_is_retransmitted_on_timeout() {
    let mut s = socket_fin_wait_1();
    let at = s.poll_at().unwrap();
    let out = recv!(s, at);
    assert_eq!((out[0].0.control, out[0].0.seq_number), (Control::Fin, local(1)));
}

#[test]
fn established_rst_exact_closes_inexact_challenges() {
    let mut s = socket_established();
    send!(s, 20 * MS, peer(Control::Rst, remote(100), None));
    assert_eq!(s.state(), State::Established);
    assert_eq!(recv!(s, 20 * MS)[0].0.ack_number, Some(remote(1)));
    send!(s, 20 * MS, peer(Control::Rst, remote(1), None));
    assert_eq!(s.state(), State::Closed);
}

#[test]
fn established_syn_gets_challenge_ack() {
    let mut s = socket_established();
    send!(s, 20 * MS, peer(Control::Syn, remote(1), None));
    assert_eq!(s.state(), State::Established);
    let out = recv!(s, 20 * MS);
    assert_eq!((out[0].0.control, out[0].0.ack_number), (Control::None, Some(remote(1))));
}

#[test]
fn abort_sends_rst() {
    let mut s = socket_established();
    s.abort();
    assert_eq!(s.state(), State::Closed);
    let out = recv!(s, 20 * MS);
    assert_eq!((out[0].0.control, out[0].0.seq_number), (Control::Rst, local(1)));
}

// ----- data ------------------------------------------------------------------------------

#[test]
fn in_order_and_out_of_order_delivery() {
    let mut s = socket_established();
    send!(s, 20 * MS, peer(Control::Psh, remote(1), Some(local(1))), b"abc");
    assert_eq!(recv!(s, 20 * MS)[0].0.ack_number, Some(remote(4)));
    // A gap: "ghi" at 7 is queued and answered by a duplicate ACK.
    send!(s, 21 * MS, peer(Control::Psh, remote(7), Some(local(1))), b"ghi");
    assert_eq!(recv!(s, 21 * MS)[0].0.ack_number, Some(remote(4)));
    assert_eq!(s.recv_queue(), 3);
    send!(s, 22 * MS, peer(Control::Psh, remote(4), Some(local(1))), b"def");
    assert_eq!(recv!(s, 22 * MS)[0].0.ack_number, Some(remote(10)));
    let mut buf = [0u8; 16];
    let n = s.recv_slice(&mut buf);
    assert_eq!(&buf[..n], b"abcdefghi");
    // A duplicate is ACKed and not delivered again.
    send!(s, 23 * MS, peer(Control::Psh, remote(1), Some(local(1))), b"abc");
    assert_eq!(recv!(s, 23 * MS)[0].0.ack_number, Some(remote(10)));
    assert_eq!(s.recv_queue(), 0);
}

#[test]
fn sends_and_segments_data() {
    let mut s = socket_established();
    let data: Vec<u8> = (0..2500u32).map(|i| i as u8).collect();
    assert_eq!(s.send_slice(&data), 2500);
    let out = recv!(s, 20 * MS);
    assert_eq!(data_segs(&out), vec![(local(1), 1000), (local(1001), 1000), (local(2001), 500)]);
    assert_eq!(out[2].0.control, Control::Psh);
    let joined: Vec<u8> = out.iter().flat_map(|(_, p)| p.clone()).collect();
    assert_eq!(joined, data);
}

// ----- option negotiation --------------------------------------------------------------------

#[test]
fn options_negotiated_when_both_offer() {
    let cfg = TcpConfig { mss: 1460, recv_buffer: 1 << 20, ..TcpConfig::default() };
    let mut s = TcpSocket::new(cfg);
    s.connect(0, LOCAL_PORT, REMOTE_PORT, seq(LOCAL_ISS));
    let syn = recv!(s, 0).remove(0).0;
    // 1 MiB needs a shift of 5 to fit 16 bits (RFC 7323 §2.3).
    assert_eq!((syn.max_seg_size, syn.window_scale, syn.sack_permitted), (Some(1460), Some(5), true));
    assert!(syn.timestamp.is_some());
    let mut syn_ack = peer(Control::Syn, remote(0), Some(local(1)));
    syn_ack.max_seg_size = Some(1460);
    syn_ack.window_scale = Some(7);
    syn_ack.sack_permitted = true;
    syn_ack.timestamp = Some((555, syn.timestamp.unwrap().0));
    syn_ack.window_len = 1000;
    send!(s, 3 * MS, syn_ack);
    assert!(s.sack_enabled() && s.timestamps_enabled());
    assert_eq!(s.window_shifts(), (5, 7));
    // The SYN-ACK's window is not scaled (RFC 7323 §2.2); the next one is.
    assert_eq!(s.snd_wnd(), 1000);
    // Data per segment shrinks by the 12 octets of timestamps.
    assert_eq!(s.smss(), 1448);
    let ack = recv!(s, 3 * MS).remove(0).0;
    assert_eq!(ack.timestamp.map(|t| t.1), Some(555));
    assert_eq!(ack.window_len, ((1u32 << 20) >> 5) as u16);
    let mut upd = peer(Control::None, remote(1), Some(local(1)));
    upd.window_len = 1000;
    send!(s, 4 * MS, upd);
    assert_eq!(s.snd_wnd(), 1000 << 7);
}

#[test]
fn options_off_when_peer_offers_none() {
    let mut s = socket_listen_with(TcpConfig::default());
    send!(s, 0, peer(Control::Syn, remote(0), None));
    let syn_ack = recv!(s, 0).remove(0).0;
    // Only what the peer offered comes back; MSS is always sent.
    assert_eq!(syn_ack.max_seg_size, Some(1460));
    assert_eq!((syn_ack.window_scale, syn_ack.sack_permitted, syn_ack.timestamp), (None, false, None));
    assert!(!s.sack_enabled() && !s.timestamps_enabled());
    assert_eq!(s.window_shifts(), (0, 0));
    // No MSS option: RFC 9293 §3.7.1's 536.
    assert_eq!(s.smss(), 536);
    // 6 MiB of buffer without scaling still advertises at most 65535.
    assert_eq!(syn_ack.window_len, 65535);
}

// ----- delayed ACK, Nagle --------------------------------------------------------------------

#[test]
fn delayed_ack_timer_and_every_second_segment() {
    let cfg = TcpConfig { delayed_ack: Some(sim::time::Duration::from_millis(40)), ..plain() };
    let mut s = socket_established_with(cfg);
    let full = [7u8; MSS];
    send!(s, 100 * MS, peer(Control::None, remote(1), Some(local(1))), &full);
    assert!(recv!(s, 100 * MS).is_empty());
    assert_eq!(s.poll_at(), Some(140 * MS));
    assert!(recv!(s, 139 * MS).is_empty());
    assert_eq!(recv!(s, 140 * MS)[0].0.ack_number, Some(remote(1 + MSS)));
    // Two full-sized segments: ACK at once (RFC 5681 §4.2).
    send!(s, 200 * MS, peer(Control::None, remote(1 + MSS), Some(local(1))), &full);
    assert!(recv!(s, 200 * MS).is_empty());
    send!(s, 201 * MS, peer(Control::None, remote(1 + 2 * MSS), Some(local(1))), &full);
    assert_eq!(recv!(s, 201 * MS)[0].0.ack_number, Some(remote(1 + 3 * MSS)));
    assert_eq!(s.poll_at(), None);
}

#[test]
fn bsd_delayed_ack_is_200ms() {
    let cfg = TcpConfig { delayed_ack: Some(sim::time::Duration::from_millis(200)), ..plain() };
    let mut s = socket_established_with(cfg);
    send!(s, 100 * MS, peer(Control::None, remote(1), Some(local(1))), &[1u8; 10]);
    assert_eq!(s.poll_at(), Some(300 * MS));
}

#[test]
fn nagle_holds_a_short_segment_until_the_ack() {
    let mut s = socket_established_with(TcpConfig { nagle: true, ..plain() });
    s.send_slice(b"0123456789");
    assert_eq!(data_segs(&recv!(s, 20 * MS)), vec![(local(1), 10)]);
    s.send_slice(b"abcdefghij");
    assert!(recv!(s, 21 * MS).is_empty());
    send!(s, 30 * MS, peer(Control::None, remote(1), Some(local(11))));
    assert_eq!(data_segs(&recv!(s, 30 * MS)), vec![(local(11), 10)]);
}

#[test]
fn nagle_off_sends_at_once() {
    let mut s = socket_established();
    s.send_slice(b"0123456789");
    recv!(s, 20 * MS);
    s.send_slice(b"abcdefghij");
    assert_eq!(data_segs(&recv!(s, 21 * MS)), vec![(local(11), 10)]);
}

// ----- timers and loss recovery ------------------------------------------------------------------

#[test]
fn rto_doubles_and_the_cap_holds_it() {
    for cap in [None, Some(300)] {
        let cfg = TcpConfig { rto_backoff_cap: cap.map(sim::time::Duration::from_millis), ..plain() };
        let mut s = socket_established_with(cfg);
        s.send_slice(&[1u8; 100]);
        recv!(s, 20 * MS);
        // First sample R = 10 ms: RTO = max(200 ms, R + max(G, 4·R/2)) = 200 ms.
        let mut at = 20 * MS;
        let mut rto = 200 * MS;
        for _ in 0..5 {
            assert_eq!(s.poll_at(), Some(at + rto));
            at += rto;
            let out = recv!(s, at);
            assert_eq!(data_segs(&out), vec![(local(1), 100)]);
            rto = match cap {
                None => 2 * rto,
                Some(c) => (2 * rto).min(c * MS),
            };
        }
        assert_eq!(s.stats().timeouts, 5);
        assert_eq!(s.cwnd(), MSS as u64);
    }
}

/// Sends `n` full segments from an established socket and returns it.
fn flight_of(cfg: TcpConfig, n: usize) -> TcpSocket {
    let mut s = socket_established_with(cfg);
    assert_eq!(s.send_slice(&vec![0u8; n * MSS]), n * MSS);
    assert_eq!(data_segs(&recv!(s, 20 * MS)).len(), n);
    s
}

fn ack(s: &mut TcpSocket, t: u64, upto: usize) {
    send!(s, t, peer(Control::None, remote(1), Some(local(1 + upto))));
}

#[test]
fn fast_retransmit_after_three_dup_acks() {
    let mut s = flight_of(plain(), 10);
    assert_eq!(s.cwnd(), 10 * MSS as u64);
    ack(&mut s, 30 * MS, MSS); // segment 0 acked, 1 lost
    assert_eq!(s.cwnd(), 11 * MSS as u64);
    // Slow start would send two more; the 10 queued segments are all out.
    assert!(recv!(s, 30 * MS).is_empty());
    for k in 0..2 {
        ack(&mut s, 31 * MS + k, MSS);
        assert!(data_segs(&recv!(s, 31 * MS + k)).is_empty());
    }
    ack(&mut s, 32 * MS, MSS);
    let out = recv!(s, 32 * MS);
    assert_eq!(data_segs(&out)[0], (local(1 + MSS), MSS));
    // RFC 5681 Eq. 4 and RFC 6582: ssthresh = FlightSize/2, cwnd = ssthresh + 3·SMSS.
    let flight = 9 * MSS as u64;
    assert_eq!(s.ssthresh(), flight / 2);
    assert_eq!(s.cwnd(), flight / 2 + 3 * MSS as u64);
    assert_eq!(s.stats().fast_retransmits, 1);
    assert!(s.in_recovery());
}

#[test]
fn newreno_partial_ack_retransmits_the_next_hole() {
    // Segments 1 and 4 of 0..9 lost.
    let mut s = flight_of(plain(), 10);
    ack(&mut s, 30 * MS, MSS);
    recv!(s, 30 * MS);
    for k in 0..3 {
        ack(&mut s, 31 * MS + k, MSS);
    }
    assert_eq!(data_segs(&recv!(s, 31 * MS))[0], (local(1 + MSS), MSS));
    let cwnd_before = s.cwnd();
    // The retransmission fills the first hole: a partial ACK up to segment 4.
    ack(&mut s, 40 * MS, 4 * MSS);
    let out = recv!(s, 40 * MS);
    assert_eq!(data_segs(&out)[0], (local(1 + 4 * MSS), MSS), "partial ACK retransmits at once");
    // RFC 6582 §3.2 step 4: deflate by the 3·SMSS acked, add back one SMSS.
    assert_eq!(s.cwnd(), cwnd_before - 3 * MSS as u64 + MSS as u64);
    assert!(s.in_recovery());
    // A full ACK (everything sent so far) ends recovery with cwnd ≤ ssthresh.
    let high = (s.bytes_in_flight() as usize) + 4 * MSS;
    ack(&mut s, 50 * MS, high);
    assert!(!s.in_recovery());
    assert!(s.cwnd() <= s.ssthresh());
    assert_eq!(s.stats().retransmits, 2);
}

#[test]
fn sack_recovery_retransmits_only_the_holes() {
    let cfg = TcpConfig { sack: true, ..plain() };
    let mut s = TcpSocket::new(cfg);
    s.listen(LOCAL_PORT, seq(LOCAL_ISS));
    let mut syn = peer(Control::Syn, remote(0), None);
    syn.max_seg_size = Some(MSS as u16);
    syn.sack_permitted = true;
    send!(s, 0, syn);
    recv!(s, 0);
    send!(s, 10 * MS, peer(Control::None, remote(1), Some(local(1))));
    assert!(s.sack_enabled());
    s.send_slice(&vec![0u8; 10 * MSS]);
    recv!(s, 20 * MS);
    // Segments 2 and 5 lost; each later arrival brings a dup ACK with SACK blocks.
    let seg = |i: usize| local(1 + i * MSS);
    let mut blocks: Vec<(SeqNumber, SeqNumber)> = Vec::new();
    let mut retransmitted = Vec::new();
    ack(&mut s, 30 * MS, 2 * MSS);
    retransmitted.extend(data_segs(&recv!(s, 30 * MS)).into_iter().filter(|&(q, _)| q < seg(10)));
    for (k, i) in [3usize, 4, 6, 7, 8, 9].into_iter().enumerate() {
        match blocks.iter_mut().find(|b| b.1 == seg(i)) {
            Some(b) => b.1 = seg(i + 1),
            None => blocks.push((seg(i), seg(i + 1))),
        }
        let mut dup = peer(Control::None, remote(1), Some(seg(2)));
        for (slot, b) in dup.sack_ranges.iter_mut().zip(blocks.iter().rev()) {
            *slot = Some((b.0.as_u32(), b.1.as_u32()));
        }
        let t = 31 * MS + k as u64;
        send!(s, t, dup);
        retransmitted.extend(data_segs(&recv!(s, t)).into_iter().filter(|&(q, _)| q < seg(12)));
    }
    let resent: Vec<SeqNumber> = retransmitted.iter().map(|&(q, _)| q).filter(|&q| q < seg(10)).collect();
    assert_eq!(resent, vec![seg(2), seg(5)], "only the holes are retransmitted");
    assert_eq!(s.stats().retransmits, 2);
    assert_eq!(s.stats().fast_retransmits, 1);
    // RFC 6675: no inflation, cwnd = ssthresh = FlightSize/2 for NewReno.
    assert_eq!(s.cwnd(), s.ssthresh());
}
