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

/// Simultaneous close: our FIN and the peer's cross (RFC 9293 Figure 13).
fn socket_closing() -> TcpSocket {
    let mut s = socket_fin_wait_1();
    send!(s, 30 * MS, peer(Control::Fin, remote(1), Some(local(1))));
    assert_eq!(s.state(), State::Closing);
    assert_eq!(recv!(s, 30 * MS)[0].0.ack_number, Some(remote(2)));
    s
}

fn socket_last_ack() -> TcpSocket {
    let mut s = socket_close_wait();
    s.close();
    assert_eq!(s.state(), State::LastAck);
    let out = recv!(s, 30 * MS);
    assert_eq!((out[0].0.control, out[0].0.seq_number), (Control::Fin, local(1)));
    s
}

/// TIME-WAIT entered at 40 ms.
fn socket_time_wait() -> TcpSocket {
    let mut s = socket_fin_wait_2();
    send!(s, 40 * MS, peer(Control::Fin, remote(1), Some(local(2))));
    assert_eq!(s.state(), State::TimeWait);
    assert_eq!(recv!(s, 40 * MS)[0].0.ack_number, Some(remote(2)));
    s
}

/// SYN-RECEIVED reached by a simultaneous open (from SYN-SENT, not LISTEN).
fn socket_syn_received_active() -> TcpSocket {
    let mut s = socket_syn_sent();
    send!(s, MS, peer(Control::Syn, remote(0), None));
    assert_eq!(s.state(), State::SynReceived);
    recv!(s, MS);
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
    assert_eq!(
        (out[0].0.control, out[0].0.seq_number, out[0].0.ack_number),
        (Control::None, local(1), Some(remote(1)))
    );
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

#[test]
fn data_segments_with_sack_blocks_still_fit_the_mtu() {
    // RFC 9293 §3.7.1, RFC 6691 §2: the MSS counts data only; options beyond those it
    // was computed with (here the SACK blocks of a receiver holding data out of
    // order) shorten the segment, as Linux's tcp_current_mss does.
    let cfg = TcpConfig { mss: 1460, recv_buffer: 1 << 20, ..TcpConfig::default() };
    let mtu = 1460 + 20 + 20; // the MTU an MSS of 1460 stands for (IPv4 and TCP headers)
    let mut s = TcpSocket::new(cfg);
    s.connect(0, LOCAL_PORT, REMOTE_PORT, seq(LOCAL_ISS));
    let syn = recv!(s, 0).remove(0).0;
    let mut syn_ack = peer(Control::Syn, remote(0), Some(local(1)));
    syn_ack.max_seg_size = Some(1460);
    syn_ack.window_scale = Some(7);
    syn_ack.sack_permitted = true;
    syn_ack.timestamp = Some((555, syn.timestamp.unwrap().0));
    send!(s, 3 * MS, syn_ack);
    assert!(s.sack_enabled() && s.timestamps_enabled());
    recv!(s, 3 * MS);
    // Two pieces of the peer's data beyond a gap: two SACK blocks to report.
    for (t, off) in [(4, 1001), (5, 3001)] {
        let mut data = peer(Control::None, remote(off), Some(local(1)));
        data.timestamp = Some((556, 0));
        send!(s, t * MS, data, &[7u8; 500]);
    }
    assert!(s.send_slice(&[1u8; 6000]) > 0);
    let out = recv!(s, 6 * MS);
    let data: Vec<&(Repr, Vec<u8>)> = out.iter().filter(|(_, p)| !p.is_empty()).collect();
    assert!(data.len() >= 2, "the initial window sends several segments");
    for (repr, payload) in &data {
        let blocks = repr.sack_ranges.iter().flatten().count();
        assert_eq!(blocks, 2, "each data segment carries the two SACK blocks");
        // Header: 20 fixed + timestamps 12 (2 NOPs, kind, length, 8) + SACK 2 NOPs,
        // kind, length and 8 per block.
        let header = 20 + 12 + 4 + 8 * blocks;
        assert_eq!(repr.header_len(), header);
        assert!(payload.len() <= mtu - 20 - header, "{} data octets exceed the MTU", payload.len());
    }
    // Full-sized: exactly what fits.
    assert_eq!(data[0].1.len(), mtu - 20 - (20 + 12 + 4 + 16));
    // Once the gap is filled the blocks go, and segments are full-sized again.
    let mut fill = peer(Control::None, remote(1), Some(local(1)));
    fill.timestamp = Some((557, 0));
    send!(s, 7 * MS, fill, &[7u8; 1000]);
    let mut fill = peer(Control::None, remote(1501), Some(local(1)));
    fill.timestamp = Some((557, 0));
    send!(s, 7 * MS, fill, &[7u8; 1500]);
    let acked = local(1) + data.iter().map(|(_, p)| p.len()).sum::<usize>();
    let mut ack = peer(Control::None, remote(3501), Some(acked));
    ack.timestamp = Some((558, 0));
    send!(s, 30 * MS, ack);
    assert!(s.send_slice(&[2u8; 3000]) > 0);
    let out = recv!(s, 30 * MS);
    let (repr, payload) = out.iter().find(|(_, p)| !p.is_empty()).expect("more data");
    assert_eq!(repr.sack_ranges, [None; 3]);
    assert_eq!(payload.len(), mtu - 20 - (20 + 12));
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

// ----- RACK-TLP (RFC 8985) ------------------------------------------------------------

/// SACK on (RACK and TLP as `cfg` says), established at 10 ms: the SYN-ACK sent at 0
/// and ACKed at 10 ms gives the first RTT sample, so SRTT = 10 ms, RTTVAR = 5 ms
/// (RFC 6298 §2.2) and min_RTT = 10 ms.
fn sack_established_with(cfg: TcpConfig) -> TcpSocket {
    let mut s = socket_listen_with(TcpConfig { sack: true, ..cfg });
    let mut syn = peer(Control::Syn, remote(0), None);
    syn.max_seg_size = Some(MSS as u16);
    syn.sack_permitted = true;
    send!(s, 0, syn);
    recv!(s, 0);
    send!(s, 10 * MS, peer(Control::None, remote(1), Some(local(1))));
    assert!(s.sack_enabled());
    assert_eq!(s.srtt(), Some(10 * MS));
    s
}

/// A duplicate ACK at `snd_una` (offset) SACKing the segment ranges `blocks` (offsets).
fn sack_ack(s: &mut TcpSocket, t: u64, una: usize, blocks: &[(usize, usize)]) {
    let mut dup = peer(Control::None, remote(1), Some(local(1 + una)));
    for (slot, &(a, b)) in dup.sack_ranges.iter_mut().zip(blocks.iter().rev()) {
        *slot = Some((local(1 + a).as_u32(), local(1 + b).as_u32()));
    }
    send!(s, t, dup);
}

/// Segment `i`'s offset.
fn at(i: usize) -> usize {
    i * MSS
}

/// A SACK connection (plain options) that has sent its first ten full segments at 20 ms:
/// the start of the RACK-TLP scripts.
fn ten_segments_sent_at_20ms() -> TcpSocket {
    let mut s = sack_established_with(plain());
    s.send_slice(&vec![0u8; 10 * MSS]);
    assert_eq!(data_segs(&recv!(s, 20 * MS)).len(), 10);
    s
}

#[test]
fn tlp_probe_recovers_a_tail_loss_before_the_rto() {
    let mut s = ten_segments_sent_at_20ms();
    // Segments 0–7 arrive, 8 and 9 (the tail) are lost: one cumulative ACK at 30 ms.
    // Its RTT sample is 10 ms again: SRTT = 10 ms, RTTVAR = 3/4·5 = 3.75 ms,
    // RTO = max(200 ms, 10 + 4·3.75 ms) = 200 ms, restarted: it would fire at 230 ms.
    ack(&mut s, 30 * MS, at(8));
    assert_eq!(s.rto(), 200 * MS);
    let rto_expiry = 30 * MS + 200 * MS;
    // RFC 8985 §7.2: PTO = 2·SRTT = 20 ms (two segments in flight, so no ack delay
    // added) from the ACK: 50 ms, before the RTO.
    let pto = 30 * MS + 2 * 10 * MS;
    assert_eq!(s.poll_at(), Some(pto));
    assert!(recv!(s, pto - 1).is_empty());
    // §7.3: nothing new to send, so the probe is the last segment again.
    let out = recv!(s, pto);
    assert_eq!(data_segs(&out), vec![(local(1 + at(9)), MSS)]);
    assert!(pto < rto_expiry);
    assert_eq!(s.stats().tlp_probes, 1);
    // The probe arrives above the hole: its SACK makes RACK.xmit_ts the probe's (50
    // ms), RACK.rtt = 60 − 50 = 10 ms; segment 8, sent at 20 ms, is lost since
    // 20 + 10 + min_RTT/4 (2.5 ms; one SACKed segment, no recovery) = 32.5 ms ≤ 60 ms.
    sack_ack(&mut s, 60 * MS, at(8), &[(at(9), at(10))]);
    let out = recv!(s, 60 * MS);
    assert_eq!(data_segs(&out), vec![(local(1 + at(8)), MSS)], "segment 8 is retransmitted at once");
    assert!(s.in_recovery());
    assert_eq!((s.stats().timeouts, s.stats().fast_retransmits), (0, 1));
    ack(&mut s, 70 * MS, at(10));
    assert!(!s.in_recovery());
    assert_eq!(s.stats().timeouts, 0);
}

#[test]
fn without_tlp_a_tail_loss_waits_for_the_rto() {
    let mut s = sack_established_with(TcpConfig { tlp: false, ..plain() });
    s.send_slice(&vec![0u8; 10 * MSS]);
    recv!(s, 20 * MS);
    ack(&mut s, 30 * MS, at(8));
    // No probe timer: the next wake-up is the RTO, 200 ms after the ACK.
    assert_eq!(s.poll_at(), Some(230 * MS));
    let out = recv!(s, 230 * MS);
    assert_eq!(data_segs(&out)[0], (local(1 + at(8)), MSS));
    assert_eq!((s.stats().timeouts, s.stats().tlp_probes), (1, 0));
}

/// Ten segments at 20 ms, segment 1 lost; the peer ACKs segment 0 at 30 ms (two new
/// segments go: slow start), SACKs 2, 3 and 4 at 31, 32 and 33 ms: fast retransmit of
/// segment 1 at 33 ms, and that retransmission is lost too. Then SACKs for 5..=11, one a
/// millisecond from 34 ms, each letting the pipe send new data. Returns the socket and
/// when segment 12 was first sent.
fn lost_retransmission(cfg: TcpConfig) -> (TcpSocket, u64) {
    let mut s = sack_established_with(cfg);
    s.send_slice(&vec![0u8; 40 * MSS]);
    assert_eq!(data_segs(&recv!(s, 20 * MS)).len(), 10);
    ack(&mut s, 30 * MS, at(1));
    assert_eq!(data_segs(&recv!(s, 30 * MS)).len(), 2);
    // First transmission time of each segment, by offset.
    let mut sent_at = std::collections::BTreeMap::new();
    let mut blocks = vec![(at(2), at(3))];
    for (k, i) in (2..=11).enumerate() {
        blocks[0].1 = at(i + 1);
        let t = 31 * MS + k as u64 * MS;
        sack_ack(&mut s, t, at(1), &blocks);
        for (q, _) in data_segs(&recv!(s, t)) {
            sent_at.entry(q - local(1)).or_insert(t);
        }
    }
    assert_eq!(sent_at.get(&at(1)), Some(&(33 * MS)), "fast retransmit at the third duplicate ACK");
    assert_eq!(s.stats().fast_retransmits, 1);
    let t12 = *sent_at.get(&at(12)).expect("segment 12 sent in recovery");
    assert!(t12 > 33 * MS);
    (s, t12)
}

#[test]
fn rack_detects_a_lost_retransmission_without_the_rto() {
    let (mut s, t12) = lost_retransmission(plain());
    // Segment 12 (sent at t12, after the retransmission) is SACKed 10 ms later: RACK.rtt
    // = 10 ms, RACK.xmit_ts = t12 > 33 ms, and in recovery with no reordering seen
    // reo_wnd = 0 (RFC 8985 §6.2 step 4): segment 1's retransmission is lost once
    // 33 + 10 + 0 = 43 ms ≤ now.
    let t = t12 + 10 * MS;
    assert!(33 * MS + 10 * MS <= t);
    let flight = s.bytes_in_flight();
    sack_ack(&mut s, t, at(1), &[(at(2), at(12)), (at(12), at(13))]);
    // RFC 5681 §4.3: the loss of a retransmission lowers ssthresh a second time, here
    // NewReno's FlightSize/2 (RFC 5681 Eq. 4) of what was in flight.
    assert_eq!(s.ssthresh(), (flight / 2).max(2 * MSS as u64));
    let out = recv!(s, t);
    assert_eq!(data_segs(&out)[0], (local(1 + at(1)), MSS), "segment 1 goes a third time");
    // The RTO, last restarted by the ACK at 30 ms, would only fire at 230 ms.
    assert!(t < 30 * MS + 200 * MS);
    assert_eq!(s.stats().timeouts, 0);
    assert!(s.stats().rack_lost >= 1);
    // Its delivery ends recovery (everything up to the recovery point SACKed).
    let high = s.bytes_in_flight() as usize + at(1);
    ack(&mut s, t + 10 * MS, high);
    assert!(!s.in_recovery());
    assert_eq!(s.stats().timeouts, 0);
}

#[test]
fn with_rack_off_a_lost_retransmission_waits_for_the_rto() {
    // The RFC 6675 recovery alone, as before RACK: the same script never sends segment
    // 1 a third time until the RTO (restarted by the ACK at 30 ms) fires at 230 ms.
    let (mut s, t12) = lost_retransmission(TcpConfig { rack: false, tlp: false, ..plain() });
    let t = t12 + 10 * MS;
    sack_ack(&mut s, t, at(1), &[(at(2), at(12)), (at(12), at(13))]);
    let again = |out: &[(Repr, Vec<u8>)]| data_segs(out).iter().any(|&(q, _)| q == local(1 + at(1)));
    assert!(!again(&recv!(s, t)));
    assert_eq!(s.stats().rack_lost, 0);
    assert_eq!(s.poll_at(), Some(230 * MS));
    let out = recv!(s, 230 * MS);
    assert!(again(&out));
    assert_eq!(s.stats().timeouts, 1);
}

#[test]
fn reordering_within_the_window_is_not_a_loss() {
    let mut s = ten_segments_sent_at_20ms();
    // Segment 1 arrives before segment 0: SACK at 30 ms. RACK.rtt = 10 ms, reo_wnd =
    // min_RTT/4 = 2.5 ms (RFC 8985 §6.2 step 4: one SACKed segment, not in recovery),
    // so segment 0 (sent at 20 ms) would be lost only at 20 + 10 + 2.5 = 32.5 ms: the
    // reordering timer is armed for then.
    sack_ack(&mut s, 30 * MS, 0, &[(at(1), at(2))]);
    assert!(data_segs(&recv!(s, 30 * MS)).is_empty());
    assert_eq!(s.poll_at(), Some(32_500_000));
    // Segment 0 arrives 1 ms later, within the window: nothing is retransmitted.
    ack(&mut s, 31 * MS, at(2));
    assert!(data_segs(&recv!(s, 31 * MS)).is_empty());
    assert!(data_segs(&recv!(s, 33 * MS)).is_empty());
    assert_eq!((s.stats().retransmits, s.stats().rack_lost, s.stats().fast_retransmits), (0, 0, 0));
    assert!(!s.in_recovery());
}

#[test]
fn reordering_beyond_the_window_is_a_loss_before_three_dup_acks() {
    let mut s = ten_segments_sent_at_20ms();
    sack_ack(&mut s, 30 * MS, 0, &[(at(1), at(2))]);
    recv!(s, 30 * MS);
    // No segment 0 by 32.5 ms: the timer marks it lost with a single duplicate ACK.
    let out = recv!(s, 32_500_000);
    assert_eq!(data_segs(&out), vec![(local(1), MSS)]);
    assert_eq!((s.stats().rack_lost, s.stats().fast_retransmits, s.stats().dup_acks), (1, 1, 1));
}

/// What the scripted peer saw of a second loss after a first recovery.
struct SecondLoss {
    socket: TcpSocket,
    /// RFC 6675 HighData / RFC 6582 "highest sequence number transmitted" when the
    /// first recovery began, as an offset from the first data octet: RecoveryPoint,
    /// and the value both RFCs put in `recover`.
    recovery_point: usize,
    /// The cumulative ACK (offset) the duplicate ACKs for the second loss carry.
    ack_number: usize,
    /// For each duplicate ACK of the second loss, in order: was the lost segment
    /// retransmitted in answer to it?
    retransmitted: Vec<bool>,
}

/// A 40-segment transfer (the socket's first ten segments at 20 ms): segment 1 is lost,
/// segment 0's ACK at 30 ms lets slow start send 10 and 11, then segments 2..=11 each
/// bring a duplicate ACK (with SACK blocks when SACK is on), one a millisecond from 31
/// ms: fast retransmit at the third. The retransmission arrives and the cumulative ACK
/// jumps to segment 12 at 40 ms. Of what the socket sent from segment 12 on, segment
/// `lost` is lost and the others arrive in order at 50 ms, 51 ms, …, each answered at
/// once, until three duplicate ACKs for `lost` have come.
fn second_loss_after_recovery(cfg: TcpConfig, lost: usize) -> SecondLoss {
    let mut s = if cfg.sack { sack_established_with(cfg) } else { socket_established_with(cfg) };
    let sack = s.sack_enabled();
    s.send_slice(&vec![0u8; 40 * MSS]);
    // Highest end (offset) of anything sent so far.
    let mut high_end = 0usize;
    let note = |out: &[(Repr, Vec<u8>)], high: &mut usize| -> Vec<usize> {
        let segs: Vec<usize> = data_segs(out).into_iter().map(|(q, _)| q - local(1)).collect();
        for (q, n) in data_segs(out) {
            *high = (*high).max(q - local(1) + n);
        }
        segs
    };
    assert_eq!(note(&recv!(s, 20 * MS), &mut high_end).len(), 10);
    ack(&mut s, 30 * MS, at(1));
    note(&recv!(s, 30 * MS), &mut high_end);
    assert_eq!(high_end, at(12));
    let mut recovery_point = None;
    for (k, i) in (2..=11).enumerate() {
        let t = 31 * MS + k as u64 * MS;
        if sack {
            sack_ack(&mut s, t, at(1), &[(at(2), at(i + 1))]);
        } else {
            ack(&mut s, t, at(1));
        }
        let before = high_end;
        let segs = note(&recv!(s, t), &mut high_end);
        if k == 2 {
            // RFC 5681 §3.2: the third duplicate ACK starts the first recovery, which
            // records the highest octet sent by then.
            assert_eq!(segs.first(), Some(&at(1)), "fast retransmit of segment 1 at the third duplicate ACK");
            recovery_point = Some(before - 1);
        } else {
            assert!(!segs.contains(&at(1)));
        }
    }
    let recovery_point = recovery_point.expect("first recovery");
    assert_eq!(s.stats().fast_retransmits, 1);
    ack(&mut s, 40 * MS, at(12));
    note(&recv!(s, 40 * MS), &mut high_end);
    assert!(!s.in_recovery(), "the ACK of everything up to the recovery point ends recovery");
    // The peer: in-order delivery from segment 12, `lost` missing.
    let mut next = 12usize;
    let mut retransmitted = Vec::new();
    let mut t = 50 * MS;
    while retransmitted.len() < 3 {
        assert!(at(next + 1) <= high_end, "the socket sent segment {next}");
        if next < lost {
            ack(&mut s, t, at(next + 1));
            note(&recv!(s, t), &mut high_end);
        } else if next > lost {
            if sack {
                sack_ack(&mut s, t, at(lost), &[(at(lost + 1), at(next + 1))]);
            } else {
                ack(&mut s, t, at(lost));
            }
            retransmitted.push(note(&recv!(s, t), &mut high_end).contains(&at(lost)));
        }
        next += 1;
        t += MS;
    }
    SecondLoss { socket: s, recovery_point, ack_number: at(lost), retransmitted }
}

/// What the RFCs allow for the three duplicate ACKs: a fast retransmit at the third
/// (DupThresh) if `allowed`, else none.
fn expected(allowed: bool) -> Vec<bool> {
    vec![false, false, allowed]
}

#[test]
fn sack_recovery_starts_again_once_high_ack_reaches_the_recovery_point() {
    // RFC 6675 §5: a new loss recovery may start when the previous one has ended, i.e.
    // once the cumulative ACK covers RecoveryPoint (§5.1: "HighACK is greater than or
    // equal to" it), HighACK being the highest octet cumulatively ACKed, ack − 1. The
    // first segment sent above the recovery point (segment 12) is the boundary case:
    // its duplicate ACKs carry ack − 1 = RecoveryPoint exactly. With RACK off (the RFC
    // 6675 recovery alone) and on, the fast retransmit comes at the third of them.
    for (rack, tlp) in [(false, false), (true, true)] {
        let cfg = TcpConfig { sack: true, rack, tlp, ..plain() };
        let r = second_loss_after_recovery(cfg.clone(), 12);
        let high_ack = r.ack_number - 1;
        assert_eq!(high_ack, r.recovery_point, "the boundary case: HighACK = RecoveryPoint");
        assert_eq!(r.retransmitted, expected(high_ack >= r.recovery_point), "rack {rack}");
        assert_eq!((r.socket.stats().fast_retransmits, r.socket.stats().timeouts), (2, 0));
        // A loss further up (HighACK above RecoveryPoint): the same.
        let r = second_loss_after_recovery(cfg, 13);
        assert!(r.ack_number - 1 > r.recovery_point);
        assert_eq!(r.retransmitted, expected(true), "rack {rack}");
    }
}

#[test]
fn newreno_fast_retransmit_only_when_the_ack_covers_more_than_recover() {
    // RFC 6582 §3.2 step 2: at the third duplicate ACK, fast retransmit only if the
    // cumulative ACK "covers more than recover", ack_number − 1 > recover, recover
    // being the highest sequence number sent when the last recovery began. The
    // duplicate ACKs for segment 12 carry ack_number − 1 = recover: no fast retransmit
    // (the RTO repairs it). For segment 13 they cover segment 12 too: fast retransmit.
    let r = second_loss_after_recovery(plain(), 12);
    assert_eq!(r.ack_number - 1, r.recovery_point);
    assert_eq!(r.retransmitted, expected(r.ack_number - 1 > r.recovery_point));
    assert_eq!(r.socket.stats().fast_retransmits, 1);
    let r = second_loss_after_recovery(plain(), 13);
    assert_eq!(r.retransmitted, expected(r.ack_number - 1 > r.recovery_point));
    assert_eq!(r.socket.stats().fast_retransmits, 2);
}

#[test]
fn prr_sends_in_proportion_to_what_each_ack_delivered() {
    // RFC 6937 §3.1 (PRR-SSRB) for one loss in a window of 20: segment 0 is lost and
    // segments 1..=19 are SACKed one an ACK. NewReno: ssthresh = FlightSize/2 = 10
    // segments, RecoverFS = 20. The test keeps the RFC's variables in segments: from
    // the third duplicate ACK (recovery) each ACK delivers one segment; pipe (RFC 6675)
    // is the unSACKed originals above the SACKed ones, plus what was sent in recovery;
    // sndcnt = ⌈prr_delivered·ssthresh/RecoverFS⌉ − prr_out while pipe > ssthresh,
    // else min(ssthresh − pipe, max(prr_delivered − prr_out, DeliveredData) + 1).
    let cfg = TcpConfig { initial_window: 20, prr: true, rack: false, tlp: false, ..plain() };
    let mut s = sack_established_with(cfg);
    s.send_slice(&vec![0u8; 60 * MSS]);
    assert_eq!(data_segs(&recv!(s, 20 * MS)).len(), 20);
    let (ssthresh, recover_fs) = (10i64, 20i64);
    let (mut delivered, mut out) = (0i64, 0i64);
    for k in 1..=19usize {
        let t = 30 * MS + k as u64 * MS;
        sack_ack(&mut s, t, 0, &[(at(1), at(k + 1))]);
        let sent = data_segs(&recv!(s, t)).len() as i64;
        if k < 3 {
            assert_eq!(sent, 0, "no limited transmit before recovery");
            continue;
        }
        delivered += 1;
        let pipe = (19 - k as i64) + out;
        let sndcnt = if pipe > ssthresh {
            (delivered * ssthresh + recover_fs - 1) / recover_fs - out
        } else {
            (ssthresh - pipe).min((delivered - out).max(1) + 1)
        }
        .max(0);
        assert_eq!(sent, sndcnt, "ACK {k}: pipe {pipe}, prr_delivered {delivered}, prr_out {out}");
        out += sent;
    }
    // Over the reduction, about ssthresh/RecoverFS of what was delivered went out.
    assert!((8..=11).contains(&out), "sent {out} in recovery");
    // The retransmission's ACK ends recovery: cwnd = ssthresh (RFC 6937 §3.1).
    let high = s.bytes_in_flight() as usize;
    ack(&mut s, 60 * MS, high);
    assert!(!s.in_recovery());
    assert_eq!(s.cwnd(), s.ssthresh());
    assert_eq!(s.ssthresh(), 10 * MSS as u64);
}

#[test]
fn without_prr_recovery_refills_the_pipe_to_ssthresh_at_once() {
    // RFC 6675 alone: cwnd = ssthresh at once, so nothing goes until pipe falls below
    // it, then one segment per segment delivered.
    let cfg = TcpConfig { initial_window: 20, rack: false, tlp: false, ..plain() };
    let mut s = sack_established_with(cfg);
    s.send_slice(&vec![0u8; 60 * MSS]);
    recv!(s, 20 * MS);
    let mut out = 0i64;
    for k in 1..=19usize {
        let t = 30 * MS + k as u64 * MS;
        sack_ack(&mut s, t, 0, &[(at(1), at(k + 1))]);
        let sent = data_segs(&recv!(s, t)).len() as i64;
        if k < 3 {
            continue;
        }
        // The fast retransmit goes regardless of cwnd; then while cwnd − pipe ≥ SMSS.
        let pipe = (19 - k as i64) + out;
        let expected = if k == 3 { 1 } else { (10 - pipe).max(0) };
        assert_eq!(sent, expected, "ACK {k}");
        out += sent;
    }
}

#[test]
fn syn_retry_timer_follows_the_initial_rto() {
    // RFC 6298 §2.1: the RTO before any RTT sample (1 s; RFC 1122's 3 s; 4.4BSD's 6 s),
    // doubled at each expiry (§5.5).
    for initial in [1000u64, 3000, 6000] {
        let cfg = TcpConfig { initial_rto: sim::time::Duration::from_millis(initial), ..plain() };
        let mut s = TcpSocket::new(cfg);
        s.connect(0, LOCAL_PORT, REMOTE_PORT, seq(LOCAL_ISS));
        assert_eq!(recv!(s, 0)[0].0.control, Control::Syn);
        assert_eq!(s.poll_at(), Some(initial * MS));
        assert!(recv!(s, initial * MS - 1).is_empty());
        assert_eq!(recv!(s, initial * MS)[0].0.control, Control::Syn);
        assert_eq!(s.poll_at(), Some(3 * initial * MS));
    }
}

// ----- every state: RST (RFC 9293 §3.10.7.4 second check, RFC 5961 §3.2) -------------

/// A state's name, its set-up function and the peer's next sequence number (RCV.NXT).
type StateSetup = (&'static str, fn() -> TcpSocket, SeqNumber);

/// The synchronized states.
fn synchronized_states() -> Vec<StateSetup> {
    vec![
        ("ESTABLISHED", socket_established as fn() -> TcpSocket, remote(1)),
        ("FIN-WAIT-1", socket_fin_wait_1, remote(1)),
        ("FIN-WAIT-2", socket_fin_wait_2, remote(1)),
        ("CLOSE-WAIT", socket_close_wait, remote(2)),
        ("CLOSING", socket_closing, remote(2)),
        ("LAST-ACK", socket_last_ack, remote(2)),
        ("TIME-WAIT", socket_time_wait, remote(2)),
    ]
}

#[test]
fn rst_in_every_synchronized_state() {
    for (name, setup, rcv_nxt) in synchronized_states() {
        // RFC 5961 §3.2: a RST exactly at RCV.NXT resets (→ CLOSED, RFC 9293 in each
        // of these states; TIME-WAIT too, RFC 1337's alternative not taken, as Linux's
        // default tcp_rfc1337=0).
        let mut s = setup();
        send!(s, 50 * MS, peer(Control::Rst, rcv_nxt, None));
        assert_eq!(s.state(), State::Closed, "{name}: exact RST");
        assert!(recv!(s, 50 * MS).is_empty(), "{name}: nothing answers a RST");

        // In the window but not exact: a challenge ACK, state unchanged.
        let mut s = setup();
        let before = s.state();
        send!(s, 50 * MS, peer(Control::Rst, rcv_nxt + 100, None));
        assert_eq!(s.state(), before, "{name}: in-window RST");
        let out = recv!(s, 50 * MS);
        assert_eq!(out.len(), 1, "{name}: one challenge ACK");
        assert_eq!((out[0].0.control, out[0].0.ack_number), (Control::None, Some(rcv_nxt)), "{name}");

        // Outside the window: dropped silently (RFC 5961 §3.2 first bullet).
        let mut s = setup();
        send!(s, 50 * MS, peer(Control::Rst, rcv_nxt + 1_000_000, None));
        assert_eq!(s.state(), before, "{name}: out-of-window RST");
        assert!(recv!(s, 50 * MS).is_empty(), "{name}: out-of-window RST is not answered");
    }
}

#[test]
fn syn_in_every_synchronized_state_gets_a_challenge_ack() {
    // RFC 5961 §4.2: a SYN in a synchronized state, whatever its sequence number, is
    // answered by an ACK of RCV.NXT and changes nothing.
    for (name, setup, rcv_nxt) in synchronized_states() {
        if name == "TIME-WAIT" {
            continue; // a new SYN in TIME-WAIT may reopen (RFC 9293 §3.10.7.4 note); not modelled
        }
        let mut s = setup();
        let before = s.state();
        send!(s, 50 * MS, peer(Control::Syn, rcv_nxt + 7, None));
        assert_eq!(s.state(), before, "{name}");
        let out = recv!(s, 50 * MS);
        assert_eq!((out[0].0.control, out[0].0.ack_number), (Control::None, Some(rcv_nxt)), "{name}");
    }
}

#[test]
fn syn_received_from_simultaneous_open_rst_closes() {
    // RFC 9293 §3.10.7.4: in SYN-RECEIVED, a RST returns a passive open to LISTEN
    // and closes an active one ("connection refused").
    let mut s = socket_syn_received_active();
    send!(s, 2 * MS, peer(Control::Rst, remote(1), None));
    assert_eq!(s.state(), State::Closed);
}

#[test]
fn unacceptable_segment_is_answered_by_an_ack() {
    // RFC 9293 §3.10.7.4: a segment outside the window (an old duplicate here) gets
    // <SEQ=SND.NXT><ACK=RCV.NXT><CTL=ACK> and is dropped.
    let mut s = socket_established();
    send!(s, 20 * MS, peer(Control::Psh, remote(1) - 500, Some(local(1))), &[9u8; 100]);
    let out = recv!(s, 20 * MS);
    assert_eq!((out[0].0.seq_number, out[0].0.ack_number), (local(1), Some(remote(1))));
    assert_eq!(s.stats().bytes_received, 0);
}

// ----- closing states ----------------------------------------------------------------------

#[test]
fn time_wait_lasts_two_msl() {
    // RFC 9293 §3.10.7.4 (TIME-WAIT) and §3.4.2: 2·MSL after entering, then CLOSED.
    let mut cfg = plain();
    cfg.msl = sim::time::Duration::from_millis(1500);
    let mut s = socket_established_with(cfg);
    s.close();
    recv!(s, 20 * MS);
    send!(s, 30 * MS, peer(Control::Fin, remote(1), Some(local(2))));
    assert_eq!(s.state(), State::TimeWait);
    recv!(s, 30 * MS);
    let expiry = 30 * MS + 2 * 1500 * MS;
    assert_eq!(s.poll_at(), Some(expiry));
    recv!(s, expiry - 1);
    assert_eq!(s.state(), State::TimeWait);
    recv!(s, expiry);
    assert_eq!(s.state(), State::Closed);
    assert_eq!(s.poll_at(), None);
}

#[test]
fn closing_ack_of_fin_to_time_wait() {
    let mut s = socket_closing();
    send!(s, 40 * MS, peer(Control::None, remote(2), Some(local(2))));
    assert_eq!(s.state(), State::TimeWait);
    assert_eq!(s.poll_at(), Some(40 * MS + 60_000 * MS));
}

#[test]
fn closing_retransmits_its_fin() {
    let mut s = socket_closing();
    let at = s.poll_at().unwrap();
    let out = recv!(s, at);
    assert_eq!((out[0].0.control, out[0].0.seq_number, out[0].0.ack_number), (Control::Fin, local(1), Some(remote(2))));
}

#[test]
fn last_ack_retransmits_fin_then_closes_on_its_ack() {
    let mut s = socket_last_ack();
    let at = s.poll_at().unwrap();
    // RFC 6298 §5.1: the FIN, sent at 30 ms, is timed by RTO = 200 ms (min RTO).
    assert_eq!(at, 230 * MS);
    let out = recv!(s, at);
    assert_eq!((out[0].0.control, out[0].0.seq_number), (Control::Fin, local(1)));
    // A retransmitted FIN from the peer is acknowledged again.
    send!(s, at + MS, peer(Control::Fin, remote(1), Some(local(1))));
    assert_eq!(recv!(s, at + MS)[0].0.ack_number, Some(remote(2)));
    assert_eq!(s.state(), State::LastAck);
    send!(s, at + 2 * MS, peer(Control::None, remote(2), Some(local(2))));
    assert_eq!(s.state(), State::Closed);
}

#[test]
fn close_wait_still_sends_data_half_close() {
    let mut s = socket_close_wait();
    assert_eq!(s.send_slice(b"reply"), 5);
    let out = recv!(s, 30 * MS);
    assert_eq!(data_segs(&out), vec![(local(1), 5)]);
    s.close();
    let out = recv!(s, 31 * MS);
    assert_eq!((out[0].0.control, out[0].0.seq_number), (Control::Fin, local(6)));
    assert_eq!(s.state(), State::LastAck);
}

#[test]
fn fin_wait_2_receives_data_then_fin() {
    let mut s = socket_fin_wait_2();
    send!(s, 40 * MS, peer(Control::Psh, remote(1), Some(local(2))), b"late data");
    assert_eq!(recv!(s, 40 * MS)[0].0.ack_number, Some(remote(10)));
    send!(s, 41 * MS, peer(Control::Fin, remote(10), Some(local(2))));
    assert_eq!(s.state(), State::TimeWait);
    assert_eq!(recv!(s, 41 * MS)[0].0.ack_number, Some(remote(11)));
    let mut buf = [0u8; 32];
    let n = s.recv_slice(&mut buf);
    assert_eq!(&buf[..n], b"late data");
}

#[test]
fn fin_out_of_order_waits_for_the_gap() {
    // RFC 9293 §3.10.7.4 eighth: the FIN is processed only once RCV.NXT reaches it.
    let mut s = socket_established();
    send!(s, 20 * MS, peer(Control::Fin, remote(6), Some(local(1))), b"world");
    assert_eq!(s.state(), State::Established);
    assert_eq!(recv!(s, 20 * MS)[0].0.ack_number, Some(remote(1)));
    send!(s, 21 * MS, peer(Control::Psh, remote(1), Some(local(1))), b"hello");
    assert_eq!(s.state(), State::CloseWait);
    assert_eq!(recv!(s, 21 * MS)[0].0.ack_number, Some(remote(12)));
}

// ----- persist timer, silly window avoidance ---------------------------------------------

/// The peer ACKs everything up to `upto` octets of our data with window `win`.
fn ack_win(s: &mut TcpSocket, t: u64, upto: usize, win: u16) {
    let mut r = peer(Control::None, remote(1), Some(local(1 + upto)));
    r.window_len = win;
    send!(s, t, r);
}

#[test]
fn zero_window_probe_with_backoff() {
    let mut s = socket_established();
    s.send_slice(&[1u8; 3 * MSS]);
    assert_eq!(data_segs(&recv!(s, 20 * MS)).len(), 3);
    // The receiver takes all three and closes its window.
    ack_win(&mut s, 30 * MS, 3 * MSS, 0);
    assert_eq!(s.snd_wnd(), 0);
    s.send_slice(&[2u8; 500]);
    assert!(recv!(s, 30 * MS).is_empty(), "nothing goes into a closed window");
    // RTT samples 10 ms (handshake) and 10 ms (the first data segment): SRTT = 10,
    // RTTVAR = 3.75 ms, RTO = max(200 ms, 10 + 15) = 200 ms (RFC 6298 §2.3, §2.4).
    let rto = 200 * MS;
    assert_eq!(s.poll_at(), Some(30 * MS + rto));
    let mut at = 30 * MS + rto;
    for k in 0..3 {
        // RFC 9293 §3.8.6.1: a probe of one octet; the interval doubles (RFC 6298 §5.5).
        let out = recv!(s, at);
        assert_eq!(data_segs(&out), vec![(local(1 + 3 * MSS), 1)], "probe {k}");
        // The receiver still has no room: it ACKs without taking the octet.
        ack_win(&mut s, at + MS, 3 * MSS, 0);
        assert!(recv!(s, at + MS).is_empty());
        assert_eq!(s.poll_at(), Some(at + (rto << (k + 1))));
        at += rto << (k + 1);
    }
    // The probes neither look like losses nor cut the window.
    assert_eq!((s.stats().timeouts, s.stats().fast_retransmits, s.stats().dup_acks), (0, 0, 0));
    // Slow start on the one ACK of three segments: + min(3, L = 2) SMSS (RFC 3465 §2.2).
    assert_eq!(s.cwnd(), 10 * MSS as u64 + 2 * MSS as u64);
    // The window opens and the last probe's octet is taken: the other 499 go at once.
    ack_win(&mut s, at - MS, 3 * MSS + 1, 64_000);
    assert_eq!(data_segs(&recv!(s, at - MS)), vec![(local(2 + 3 * MSS), 499)]);
}

#[test]
fn sender_sws_avoidance_and_override_timer() {
    // RFC 9293 §3.8.6.2.1: with D octets queued and a usable window U, send when
    // (1) min(D, U) ≥ MSS, (2) all of D fits (pushed), (3) min(D, U) ≥ Fs·max(SND.WND)
    // with Fs = 1/2, or (4) the override timer expires.
    let mut s = socket_established(); // the peer offered 64 000: max(SND.WND) = 64 000
    ack_win(&mut s, 20 * MS, 0, 1500);
    s.send_slice(&[3u8; 2 * MSS]);
    // (1): one full segment fits in 1500; the next 500 is neither (1), (2) nor
    // (3) (500 < 32 000): it waits.
    assert_eq!(data_segs(&recv!(s, 20 * MS)), vec![(local(1), MSS)]);
    // The ACK leaves 500 usable with nothing in flight: still no (1)–(3).
    ack_win(&mut s, 30 * MS, MSS, 500);
    assert!(recv!(s, 30 * MS).is_empty());
    // (4): the override timer (here the persist timer, one RTO) sends what fits.
    let at = s.poll_at().unwrap();
    assert!(at > 30 * MS);
    assert_eq!(data_segs(&recv!(s, at)), vec![(local(1 + MSS), 500)]);
    // The window opens: the last 500 octets are all that is queued, so (2) sends them.
    ack_win(&mut s, at + MS, MSS + 500, 64_000);
    assert_eq!(data_segs(&recv!(s, at + MS)), vec![(local(1 + MSS + 500), 500)]);
}

#[test]
fn sender_sws_sends_half_the_largest_window() {
    // (3) with a small receiver: the peer never offered more than 1600, so 800 octets
    // (= Fs·max(SND.WND)) may go even with data in flight.
    let mut s2 = socket_listen_with(plain());
    let mut syn = peer(Control::Syn, remote(0), None);
    syn.max_seg_size = Some(MSS as u16);
    syn.window_len = 1600;
    send!(s2, 0, syn);
    recv!(s2, 0);
    ack_win(&mut s2, 10 * MS, 0, 1600);
    s2.send_slice(&[4u8; 2000]);
    // U = 1600: one MSS (1), then 600 < 800: wait.
    assert_eq!(data_segs(&recv!(s2, 20 * MS)), vec![(local(1), MSS)]);
    // 200 acked, window 1600 again: U = 1600 − 800 = 800 ≥ 800, sent with data in flight.
    ack_win(&mut s2, 25 * MS, 200, 1600);
    assert_eq!(data_segs(&recv!(s2, 25 * MS)), vec![(local(1 + MSS), 800)]);
}

#[test]
fn receiver_sws_avoidance() {
    // RFC 9293 §3.8.6.2.2: the right edge moves only when it can move by at least
    // min(Fr·RCV.BUFF, MSS), Fr = 1/2; here min(2000, 1000) = 1000.
    let cfg = TcpConfig { recv_buffer: 4000, ..plain() };
    let mut s = socket_established_with(cfg);
    for i in 0..3 {
        send!(s, 20 * MS, peer(Control::None, remote(1 + i * MSS), Some(local(1))), &[5u8; MSS]);
    }
    // Nothing read: the window shrinks, the right edge stays at 1 + 4000.
    assert_eq!(recv!(s, 20 * MS).last().unwrap().0.window_len, 1000);
    send!(s, 21 * MS, peer(Control::None, remote(1 + 3 * MSS), Some(local(1))), &[5u8; MSS]);
    assert_eq!(recv!(s, 21 * MS)[0].0.window_len, 0);
    // The reader takes 600: the edge could move 600 < 1000, so no update is sent, and
    // a zero-window probe from the peer is answered with the window still closed.
    let mut buf = vec![0u8; 600];
    assert_eq!(s.recv_slice(&mut buf), 600);
    assert!(recv!(s, 22 * MS).is_empty());
    send!(s, 23 * MS, peer(Control::None, remote(1 + 4 * MSS), Some(local(1))), &[6u8; 1]);
    let out = recv!(s, 23 * MS);
    assert_eq!((out[0].0.ack_number, out[0].0.window_len), (Some(remote(1 + 4 * MSS)), 0));
    // 600 more read: 1200 ≥ 1000, a window update opens 1200 at once (RFC 1122
    // §4.2.3.3's window update).
    assert_eq!(s.recv_slice(&mut buf), 600);
    let out = recv!(s, 24 * MS);
    assert_eq!((out[0].0.ack_number, out[0].0.window_len), (Some(remote(1 + 4 * MSS)), 1200));
}

// ----- Nagle, delayed ACK ------------------------------------------------------------------

#[test]
fn nagle_sends_full_segments_and_a_short_fin() {
    // RFC 896: full segments go whatever is in flight; the short tail waits, unless the
    // application closed (the FIN rides with it).
    let mut s = socket_established_with(TcpConfig { nagle: true, ..plain() });
    s.send_slice(&[1u8; 10]);
    recv!(s, 20 * MS);
    s.send_slice(&[2u8; 2 * MSS + 300]);
    assert_eq!(data_segs(&recv!(s, 21 * MS)), vec![(local(11), MSS), (local(11 + MSS), MSS)]);
    s.close();
    let out = recv!(s, 22 * MS);
    assert_eq!(data_segs(&out), vec![(local(11 + 2 * MSS), 300)]);
    assert_eq!(out[0].0.control, Control::Fin);
}

#[test]
fn delayed_ack_counts_full_segments_only() {
    // RFC 5681 §4.2: ACK at least every second *full-sized* segment; two small ones
    // wait for the timer.
    let cfg = TcpConfig { delayed_ack: Some(sim::time::Duration::from_millis(40)), ..plain() };
    let mut s = socket_established_with(cfg);
    send!(s, 100 * MS, peer(Control::Psh, remote(1), Some(local(1))), &[1u8; 100]);
    send!(s, 101 * MS, peer(Control::Psh, remote(101), Some(local(1))), &[1u8; 100]);
    assert!(recv!(s, 101 * MS).is_empty());
    assert_eq!(s.poll_at(), Some(140 * MS), "the timer runs from the first unacknowledged segment");
    assert_eq!(recv!(s, 140 * MS)[0].0.ack_number, Some(remote(201)));
}

#[test]
fn delayed_ack_every_third_when_configured() {
    let cfg = TcpConfig { delayed_ack: Some(sim::time::Duration::from_millis(40)), delayed_ack_segments: 3, ..plain() };
    let mut s = socket_established_with(cfg);
    for i in 0..2 {
        send!(s, 100 * MS, peer(Control::None, remote(1 + i * MSS), Some(local(1))), &[1u8; MSS]);
        assert!(recv!(s, 100 * MS).is_empty());
    }
    send!(s, 100 * MS, peer(Control::None, remote(1 + 2 * MSS), Some(local(1))), &[1u8; MSS]);
    assert_eq!(recv!(s, 100 * MS)[0].0.ack_number, Some(remote(1 + 3 * MSS)));
}

#[test]
fn delayed_ack_any_segment_acks_the_second_small_segment_at_once() {
    // Microsoft's rule (Windows NT "TCP/IP Implementation Details", Delayed
    // Acknowledgments): an ACK when "no ACK was sent for the previous segment received",
    // whatever the segments' sizes. The same two 100-octet segments that wait for the
    // timer under RFC 5681's full-sized count (the test above) draw an ACK at once.
    let cfg = TcpConfig {
        delayed_ack: Some(sim::time::Duration::from_millis(200)),
        delayed_ack_any_segment: true,
        ..plain()
    };
    let mut s = socket_established_with(cfg);
    send!(s, 100 * MS, peer(Control::Psh, remote(1), Some(local(1))), &[1u8; 100]);
    assert!(recv!(s, 100 * MS).is_empty(), "the first segment waits");
    assert_eq!(s.poll_at(), Some(300 * MS), "for 200 ms from its arrival");
    send!(s, 101 * MS, peer(Control::Psh, remote(101), Some(local(1))), &[1u8; 100]);
    assert_eq!(recv!(s, 101 * MS)[0].0.ack_number, Some(remote(201)), "the second is acknowledged at once");
    // The count starts again after the ACK: a third segment alone waits the full 200 ms.
    send!(s, 150 * MS, peer(Control::Psh, remote(201), Some(local(1))), &[1u8; 100]);
    assert!(recv!(s, 150 * MS).is_empty());
    assert_eq!(s.poll_at(), Some(350 * MS));
}

/// A receiver in sink mode (the application reads every octet at once) whose buffer is
/// one segment of 1000 octets: after that segment the peer has no window left.
fn one_segment_sink(window_update_on_read: bool) -> TcpSocket {
    let cfg = TcpConfig {
        delayed_ack: Some(sim::time::Duration::from_millis(200)),
        delayed_ack_any_segment: true,
        window_update_on_read,
        recv_buffer: MSS as u32,
        ..plain()
    };
    let mut s = socket_established_with(cfg);
    s.set_sink(true);
    send!(s, 100 * MS, peer(Control::None, remote(1), Some(local(1))), &[1u8; MSS]);
    s
}

#[test]
fn window_update_on_read_opens_a_full_window_at_once() {
    // 4.4BSD tcp_output: the read moved the right edge by the whole buffer (at least
    // half of it), so an update goes out at once though the delayed-ACK rule would wait.
    let mut s = one_segment_sink(true);
    let out = recv!(s, 100 * MS);
    assert_eq!(out.len(), 1);
    assert_eq!((out[0].0.ack_number, out[0].0.window_len), (Some(remote(1 + MSS)), MSS as u16));
}

#[test]
fn without_window_update_on_read_a_lone_segment_waits_for_the_timer() {
    // Windows NT 4.0 as Microsoft describes its receiver: no update on the read, so the
    // window the sender needs comes with the delayed ACK, 200 ms later (the stall of a
    // window that holds one segment).
    let mut s = one_segment_sink(false);
    assert!(recv!(s, 100 * MS).is_empty());
    assert_eq!(s.poll_at(), Some(300 * MS));
    let out = recv!(s, 300 * MS);
    assert_eq!((out[0].0.ack_number, out[0].0.window_len), (Some(remote(1 + MSS)), MSS as u16));
}

// ----- options --------------------------------------------------------------------------------

#[test]
fn window_scaling_off_here_ignores_the_peers_offer() {
    let cfg = TcpConfig { window_scaling: false, recv_buffer: 1 << 20, ..plain() };
    let mut s = socket_listen_with(cfg);
    let mut syn = peer(Control::Syn, remote(0), None);
    syn.window_scale = Some(7);
    send!(s, 0, syn);
    let syn_ack = recv!(s, 0).remove(0).0;
    // RFC 7323 §2.2: no Window Scale on our SYN-ACK, so neither side scales.
    assert_eq!(syn_ack.window_scale, None);
    assert_eq!(s.window_shifts(), (0, 0));
    send!(s, 10 * MS, peer(Control::None, remote(1), Some(local(1))));
    assert_eq!(s.snd_wnd(), 64_000, "the peer's window taken as is");
    send!(s, 11 * MS, peer(Control::Psh, remote(1), Some(local(1))), b"x");
    assert_eq!(recv!(s, 11 * MS)[0].0.window_len, 65535, "1 MiB of buffer, at most 65 535 unscaled");
}

#[test]
fn window_scaling_on_only_when_both_offer() {
    // We offer (shift 4 for 1 MiB? no: 1 MiB >> 4 = 65 536 > 65 535, so 5), the peer does not.
    let cfg = TcpConfig { window_scaling: true, recv_buffer: 1 << 20, ..plain() };
    let mut s = TcpSocket::new(cfg);
    s.connect(0, LOCAL_PORT, REMOTE_PORT, seq(LOCAL_ISS));
    let syn = recv!(s, 0).remove(0).0;
    let mut shift = 0;
    while (1u32 << 20) >> shift > 65535 {
        shift += 1;
    }
    assert_eq!(syn.window_scale, Some(shift));
    assert_eq!(syn.window_len, 65535, "a SYN's window is never scaled (RFC 7323 §2.2)");
    send!(s, MS, peer(Control::Syn, remote(0), Some(local(1))));
    assert_eq!(s.window_shifts(), (0, 0));
    assert_eq!(recv!(s, MS)[0].0.window_len, 65535);
}

#[test]
fn timestamps_give_an_rtt_sample_per_ack() {
    // RFC 7323 §4.1: RTT = now − TSecr on every ACK of new data; our clock ticks in µs.
    let cfg = TcpConfig { timestamps: true, ..plain() };
    let mut s = TcpSocket::new(cfg);
    s.connect(0, LOCAL_PORT, REMOTE_PORT, seq(LOCAL_ISS));
    let syn = recv!(s, 0).remove(0).0;
    let (tsval, tsecr) = syn.timestamp.unwrap();
    assert_eq!(tsecr, 0);
    let mut syn_ack = peer(Control::Syn, remote(0), Some(local(1)));
    syn_ack.max_seg_size = Some(MSS as u16);
    syn_ack.timestamp = Some((70_000, tsval));
    send!(s, 3 * MS, syn_ack);
    assert!(s.timestamps_enabled());
    assert_eq!(s.srtt(), Some(3 * MS));
    // Our ACK echoes the peer's TSval (RFC 7323 §3.2).
    assert_eq!(recv!(s, 3 * MS)[0].0.timestamp.unwrap().1, 70_000);
    s.send_slice(&[0u8; 2 * MSS]);
    let out = recv!(s, 10 * MS);
    assert_eq!(s.smss(), (MSS - 12) as u32, "12 option octets come out of each segment");
    let sent_ts = out[0].0.timestamp.unwrap().0;
    // The ACK 7 ms later echoes the first segment's TSval: R = 7 ms. RFC 6298 §2.3:
    // RTTVAR = 3/4·1.5 + 1/4·|3 − 7| = 2.125 ms, SRTT = 7/8·3 + 1/8·7 = 3.5 ms.
    let mut a = peer(Control::None, remote(1), Some(local(1 + 2 * (MSS - 12))));
    a.timestamp = Some((70_007, sent_ts));
    send!(s, 17 * MS, a);
    assert_eq!(s.srtt(), Some(3_500_000));
    assert_eq!(s.rto(), 200 * MS);
}

#[test]
fn timestamps_off_sends_none() {
    let mut s = socket_listen_with(TcpConfig { timestamps: false, ..plain() });
    let mut syn = peer(Control::Syn, remote(0), None);
    syn.timestamp = Some((5, 0));
    send!(s, 0, syn);
    let syn_ack = recv!(s, 0).remove(0).0;
    assert_eq!(syn_ack.timestamp, None);
    assert!(!s.timestamps_enabled());
    assert_eq!(s.smss(), 536, "no MSS option from the peer: 536, and no 12 octets of options");
}

// ----- SACK blocks (RFC 2018 §4) -----------------------------------------------------------

fn socket_established_sack() -> TcpSocket {
    let mut s = socket_listen_with(TcpConfig { sack: true, ..plain() });
    let mut syn = peer(Control::Syn, remote(0), None);
    syn.max_seg_size = Some(MSS as u16);
    syn.sack_permitted = true;
    send!(s, 0, syn);
    assert!(recv!(s, 0)[0].0.sack_permitted);
    send!(s, 10 * MS, peer(Control::None, remote(1), Some(local(1))));
    assert!(s.sack_enabled());
    s
}

#[test]
fn sack_blocks_newest_first_at_most_three() {
    sack_blocks_newest_first(false);
}

/// The same out-of-order arrivals to a sink (data counted and dropped): the blocks
/// merge and report the same without data kept.
#[test]
fn sack_blocks_of_a_sink_newest_first_at_most_three() {
    sack_blocks_newest_first(true);
}

fn sack_blocks_newest_first(sink: bool) {
    let mut s = socket_established_sack();
    s.set_sink(sink);
    let r = |k: usize| remote(1 + k * MSS).as_u32();
    let arrive = |s: &mut TcpSocket, k: usize, t: u64| -> Repr {
        send!(s, t, peer(Control::None, remote(1 + k * MSS), Some(local(1))), &[k as u8; MSS]);
        let mut out = recv!(s, t);
        assert_eq!(out.len(), 1, "an out-of-order segment is ACKed at once");
        out.remove(0).0
    };
    let blocks = |a: &Repr| a.sack_ranges.iter().flatten().copied().collect::<Vec<_>>();
    // Segment 0 is missing throughout. Arrivals: 1, 3, 2, 5, 7, 9.
    let a = arrive(&mut s, 1, 20 * MS);
    assert_eq!(a.ack_number, Some(remote(1)));
    assert_eq!(blocks(&a), vec![(r(1), r(2))]);
    let a = arrive(&mut s, 3, 21 * MS);
    // "The first SACK block MUST specify the contiguous block of data containing the
    // segment which triggered this ACK"; the others repeat the most recent ones.
    assert_eq!(blocks(&a), vec![(r(3), r(4)), (r(1), r(2))]);
    let a = arrive(&mut s, 2, 22 * MS);
    assert_eq!(blocks(&a), vec![(r(1), r(4))]);
    let a = arrive(&mut s, 5, 23 * MS);
    assert_eq!(blocks(&a), vec![(r(5), r(6)), (r(1), r(4))]);
    let a = arrive(&mut s, 7, 24 * MS);
    assert_eq!(blocks(&a), vec![(r(7), r(8)), (r(5), r(6)), (r(1), r(4))]);
    let a = arrive(&mut s, 9, 25 * MS);
    // Four blocks held, room for three (with or without timestamps here: the wire
    // Repr holds three, RFC 2018 §3's limit with the Timestamps option).
    assert_eq!(blocks(&a), vec![(r(9), r(10)), (r(7), r(8)), (r(5), r(6))]);
    // Segment 0 fills the hole: the ACK moves to 4 and only the blocks above remain.
    let a = arrive(&mut s, 0, 26 * MS);
    assert_eq!(a.ack_number, Some(remote(1 + 4 * MSS)));
    assert_eq!(blocks(&a), vec![(r(9), r(10)), (r(7), r(8)), (r(5), r(6))]);
    // Segment 4 joins 5 (and the ACK moves past both); a reader gets segments 0-5 in
    // order, a sink nothing.
    let a = arrive(&mut s, 4, 27 * MS);
    assert_eq!(a.ack_number, Some(remote(1 + 6 * MSS)));
    // The blocks left, most recently received first (RFC 2018 §4).
    assert_eq!(blocks(&a), vec![(r(9), r(10)), (r(7), r(8))]);
    let mut buf = vec![0u8; 10 * MSS];
    let n = s.recv_slice(&mut buf);
    if sink {
        assert_eq!(n, 0);
    } else {
        let want: Vec<u8> = (0..6u8).flat_map(|k| [k; MSS]).collect();
        assert_eq!(&buf[..n], &want[..]);
    }
}

#[test]
fn sack_recovery_sends_new_data_when_pipe_allows() {
    // RFC 6675 §5: after the fast retransmit, each ACK lowers pipe; while
    // cwnd − pipe ≥ SMSS, NextSeg() sends holes first, then new data (rule 2).
    let mut s = socket_established_sack();
    s.send_slice(&vec![0u8; 30 * MSS]);
    assert_eq!(data_segs(&recv!(s, 20 * MS)).len(), 10);
    let seg = |i: usize| local(1 + i * MSS);
    // Segment 0 is lost; 1..=9 arrive and are SACKed.
    let mut sent = Vec::new();
    for i in 1..=9usize {
        let mut dup = peer(Control::None, remote(1), Some(seg(0)));
        dup.sack_ranges[0] = Some((seg(1).as_u32(), seg(i + 1).as_u32()));
        send!(s, 30 * MS + i as u64, dup);
        sent.extend(data_segs(&recv!(s, 30 * MS + i as u64)));
    }
    // Recovery began at the 3rd duplicate ACK: ssthresh = cwnd = FlightSize/2 = 5 SMSS
    // (RFC 5681 Eq. 4; NewReno here). From then on pipe = 10 − SACKed − lost + rexmit.
    assert_eq!(s.ssthresh(), 5 * MSS as u64);
    assert_eq!(sent[0], (seg(0), MSS), "the hole first");
    // After the 9th dup ACK: SACKed 9, segment 0 lost and retransmitted: pipe =
    // (10 − 9 − 1) + 1 + new segments sent; new data fills cwnd: 5 − 1 = 4 new segments.
    let new: Vec<_> = sent[1..].to_vec();
    assert_eq!(new, (10..14).map(|i| (seg(i), MSS)).collect::<Vec<_>>());
    assert_eq!(s.stats().retransmits, 1);
}

// ----- RTO --------------------------------------------------------------------------------

#[test]
fn min_rto_floor_rfc_and_linux() {
    // One RTT sample of 10 ms gives SRTT + 4·RTTVAR = 10 + 20 = 30 ms, floored by
    // min_rto: 1 s (RFC 6298 §2.4) or 200 ms (Linux TCP_RTO_MIN).
    for (min_rto, expected) in [(1000, 1000 * MS), (200, 200 * MS), (5, 30 * MS)] {
        let cfg = TcpConfig { min_rto: sim::time::Duration::from_millis(min_rto), ..plain() };
        let mut s = socket_established_with(cfg);
        assert_eq!(s.rto(), expected, "min_rto {min_rto} ms");
        s.send_slice(&[1u8; 10]);
        recv!(s, 20 * MS);
        assert_eq!(s.poll_at(), Some(20 * MS + expected));
    }
}

#[test]
fn rto_collapses_cwnd_and_goes_back_n() {
    // RFC 5681 §3.1: after a timeout ssthresh = max(FlightSize/2, 2·SMSS), cwnd = 1
    // SMSS; RFC 6298 §5.4: retransmit the earliest unacknowledged segment.
    let mut s = flight_of(plain(), 6);
    let at = s.poll_at().unwrap();
    let out = recv!(s, at);
    assert_eq!(data_segs(&out), vec![(local(1), MSS)]);
    assert_eq!(s.ssthresh(), 3 * MSS as u64);
    assert_eq!(s.cwnd(), MSS as u64);
    // Its ACK: slow start from one segment resends the next two (go-back-N).
    ack(&mut s, at + 10 * MS, MSS);
    assert_eq!(data_segs(&recv!(s, at + 10 * MS)), vec![(local(1 + MSS), MSS), (local(1 + 2 * MSS), MSS)]);
}

/// `poll_at` right after `dispatch` knows without asking again that nothing can be
/// sent; each way the application or the peer can make sending possible again must
/// make it answer "now" (RFC 9293 §3.8.6: data waits only for the windows).
#[test]
fn poll_at_after_dispatch_sees_every_change_that_allows_sending() {
    let mut s = socket_established();
    // Nothing queued: no immediate wake-up.
    assert_ne!(s.poll_at(), Some(10 * MS));
    // The application queues 20 segments: send now.
    assert_eq!(s.send_slice(&[7u8; 20 * MSS]), 20 * MSS);
    assert_eq!(s.poll_at(), Some(10 * MS));
    // The initial window (10 segments, RFC 6928) goes; the rest waits for ACKs, so
    // the wake-up is the retransmission timer (RFC 6298 §5.1), not now.
    let out = recv!(s, 10 * MS);
    assert_eq!(data_segs(&out).len(), 10);
    assert_eq!(s.poll_at(), Some(10 * MS + s.rto()));
    // An ACK for the first segment opens the window: send now.
    send!(s, 40 * MS, peer(Control::None, remote(1), Some(local(1 + MSS))));
    assert_eq!(s.poll_at(), Some(40 * MS));
    let out = recv!(s, 40 * MS);
    assert!(!data_segs(&out).is_empty());
    assert_ne!(s.poll_at(), Some(40 * MS));
    // Closing queues a FIN behind the data: still waits for the window.
    s.close();
    assert_ne!(s.poll_at(), Some(40 * MS));
    // Every octet acknowledged: the rest of the data and the FIN go now.
    send!(s, 70 * MS, peer(Control::None, remote(1), Some(s_snd_max(&out))));
    assert_eq!(s.poll_at(), Some(70 * MS));
}

/// The sequence number after the last segment in `out`.
fn s_snd_max(out: &[(Repr, Vec<u8>)]) -> SeqNumber {
    out.iter().map(|(r, _)| r.seq_number + r.segment_len()).max_by(|a, b| a.partial_cmp(b).unwrap()).unwrap()
}
