//! NetBSD 1.1's acknowledgement and push rules, each segment and ACK written here by
//! hand from the source's rules (not from the simulator's output):
//!
//! - receiver, NetBSD tcp_input (rev 1.10 of 1994, NetBSD 1.0, to rev 1.23.4.2, NetBSD
//!   1.2): an in-order segment with PSH sets TF_ACKNOW, one without sets TF_DELACK;
//! - receiver, 4.4BSD tcp_output's window update: send when the window the reader
//!   opened advances the right edge by two segments (`adv >= 2 * t_maxseg`);
//! - receiver, tcp_fasttimo: pending delayed ACKs go at the host's 200 ms ticks;
//! - sender, tcp_output: "If we're sending everything we've got, set PUSH";
//! - sender's writer, sosend: asleep on a full buffer until the space reaches
//!   so_snd.sb_lowat (MCLBYTES = 2048) or the rest of the write call (ttcp -l 8192);
//!   a short remainder is held (neither a full segment nor idle).

use sim::tcp::{CongestionControl, CwndGrowth, State, TcpConfig, TcpSocket};
use wire::tcp::{Control, Repr, SeqNumber};

const MS: u64 = 1_000_000;
const MSS: usize = 1460;
const LOCAL: u16 = 5001;
const REMOTE: u16 = 49_500;
const ISS: u32 = 1000;
const PEER_ISS: u32 = 5000;

/// NetBSD 1.1 as the stack preset sets it (methods/tcp.py STACKS["netbsd-1.1"]).
fn netbsd(buffer: u32) -> TcpConfig {
    TcpConfig {
        mss: MSS as u16,
        window_scaling: false,
        sack: false,
        timestamps: false,
        rack: false,
        tlp: false,
        delayed_ack: Some(sim::time::Duration::from_millis(200)),
        delayed_ack_clock: true,
        ack_on_push: true,
        send_low_water: Some(2048),
        write_size: 8192,
        congestion_control: CongestionControl::NewReno,
        cwnd_growth: CwndGrowth::Bsd44,
        send_buffer: buffer,
        recv_buffer: buffer,
        max_window: Some(buffer),
        initial_window: 12,
        ..TcpConfig::default()
    }
}

fn seq(n: u32) -> SeqNumber {
    SeqNumber::from_u32(n)
}

fn segment(control: Control, seq: SeqNumber, ack: SeqNumber, window: u16, len: usize) -> Repr {
    let mut r = Repr::new(REMOTE, LOCAL, control, seq, window);
    r.ack_number = Some(ack);
    r.payload_len = len;
    r
}

fn out(s: &mut TcpSocket, now: u64) -> Vec<Repr> {
    let mut v = Vec::new();
    s.dispatch(now, |r, _| v.push(r));
    v
}

/// A receiver (passive open) established with a peer whose data starts at PEER_ISS + 1.
fn receiver() -> TcpSocket {
    let mut s = TcpSocket::new(netbsd(17_520));
    s.listen(LOCAL, seq(ISS));
    s.set_sink(true);
    let mut syn = Repr::new(REMOTE, LOCAL, Control::Syn, seq(PEER_ISS), 17_520);
    syn.max_seg_size = Some(MSS as u16);
    s.process(0, &syn, &[]);
    assert_eq!(out(&mut s, 0).len(), 1, "SYN-ACK");
    s.process(MS, &segment(Control::None, seq(PEER_ISS + 1), seq(ISS + 1), 17_520, 0), &[]);
    assert_eq!(s.state(), State::Established);
    assert!(out(&mut s, MS).is_empty());
    s
}

/// The ACK numbers (octets of data acknowledged) among what the socket sent.
fn acked(v: &[Repr]) -> Vec<usize> {
    v.iter().filter_map(|r| r.ack_number).map(|a| a - seq(PEER_ISS + 1)).collect()
}

#[test]
fn receiver_acks_every_second_segment_a_push_at_once_and_the_rest_on_the_200_ms_clock() {
    let mut s = receiver();
    let data = [0u8; MSS];
    let d = |k: usize| seq(PEER_ISS + 1) + k * MSS;
    let ack = seq(ISS + 1);
    // 1st segment, no PSH: TF_DELACK, and the reader's read advances the window by one
    // segment only (adv = MSS < 2·MSS): nothing is sent.
    s.process(10 * MS, &segment(Control::None, d(0), ack, 17_520, MSS), &data);
    assert!(acked(&out(&mut s, 10 * MS)).is_empty());
    // 2nd, no PSH: the read opens the window by 2·MSS since the last ACK: an ACK of both.
    s.process(20 * MS, &segment(Control::None, d(1), ack, 17_520, MSS), &data);
    assert_eq!(acked(&out(&mut s, 20 * MS)), vec![2 * MSS]);
    // 3rd, with PSH: NetBSD acknowledges it at once, alone (4.4BSD-Lite would wait).
    s.process(30 * MS, &segment(Control::Psh, d(2), ack, 17_520, MSS), &data);
    assert_eq!(acked(&out(&mut s, 30 * MS)), vec![3 * MSS]);
    // 4th at 450 ms, no PSH, alone: the delayed ACK goes at tcp_fasttimo's next tick,
    // 600 ms (ticks every 200 ms from boot), not 450 + 200 = 650 ms.
    s.process(450 * MS, &segment(Control::None, d(3), ack, 17_520, MSS), &data);
    assert!(acked(&out(&mut s, 450 * MS)).is_empty());
    assert_eq!(s.poll_at(), Some(600 * MS));
    assert!(acked(&out(&mut s, 599 * MS)).is_empty());
    assert_eq!(acked(&out(&mut s, 600 * MS)), vec![4 * MSS]);
}

/// A bulk sender (active open) established; returns it and what it sent at once.
fn sender(buffer: u32) -> (TcpSocket, Vec<Repr>) {
    let mut s = TcpSocket::new(netbsd(buffer));
    s.connect(0, LOCAL, REMOTE, seq(ISS));
    s.send_bulk(None);
    let syn = out(&mut s, 0);
    assert!(syn.len() == 1 && syn[0].control == Control::Syn);
    let mut synack = Repr::new(REMOTE, LOCAL, Control::Syn, seq(PEER_ISS), buffer as u16);
    synack.ack_number = Some(seq(ISS + 1));
    synack.max_seg_size = Some(MSS as u16);
    s.process(5 * MS, &synack, &[]);
    assert_eq!(s.state(), State::Established);
    let first = out(&mut s, 5 * MS);
    (s, first)
}

/// (length, PSH) of each data segment sent.
fn data(v: &[Repr]) -> Vec<(usize, bool)> {
    v.iter().filter(|r| r.payload_len > 0).map(|r| (r.payload_len, r.control == Control::Psh)).collect()
}

#[test]
fn sender_pushes_the_last_octet_written_and_its_writer_waits_for_the_low_water_mark() {
    // A buffer of 4 segments (5840 octets) so the story stays short; the writer wrote
    // 5840 of its first 8192-octet call, so 2352 of that call are left.
    let (mut s, first) = sender(4 * MSS as u32);
    // Everything written goes (cwnd 12 segments, the peer's window 5840): 4 segments,
    // the 4th sends the last octet written: PSH.
    assert_eq!(data(&first), vec![(MSS, false), (MSS, false), (MSS, false), (MSS, true)]);
    let ack = |k: usize| segment(Control::None, seq(PEER_ISS + 1), seq(ISS + 1) + k * MSS, (4 * MSS) as u16, 0);
    // ACK of 1 segment: 1460 octets free, under both sb_lowat (2048) and the call's
    // rest (2352): the writer sleeps; nothing new to send.
    s.process(50 * MS, &ack(1), &[]);
    assert!(data(&out(&mut s, 50 * MS)).is_empty());
    // ACK of the 2nd: 2920 free ≥ 2048: the writer ends its call (2352 octets) and
    // starts a new one of 8192, but 568 free is under both marks: it sleeps again.
    // Unsent: 2352 = one full segment (sent, not the last octet written: no PSH) and
    // 892 held back (short, data in flight).
    s.process(60 * MS, &ack(2), &[]);
    assert_eq!(data(&out(&mut s, 60 * MS)), vec![(MSS, false)]);
    // ACK of the 3rd: 568 + 1460 = 2028 free, under 2048 and under 8192: still asleep.
    s.process(70 * MS, &ack(3), &[]);
    assert!(data(&out(&mut s, 70 * MS)).is_empty());
    // ACK of the 4th: 3488 free: written, the buffer full again. Unsent 892 + 3488 =
    // 4380 = 3 segments; the 3rd sends the last octet written: PSH.
    s.process(80 * MS, &ack(4), &[]);
    assert_eq!(data(&out(&mut s, 80 * MS)), vec![(MSS, false), (MSS, false), (MSS, true)]);
}

#[test]
fn bsd_avoidance_adds_an_eighth_of_a_segment_per_ack() {
    // Net/3 tcp_input: above ssthresh, incr = maxseg·maxseg/cwnd + maxseg/8 per ACK; at
    // or below it, maxseg.
    use sim::tcp::congestion::Congestion;
    let s = MSS as u64;
    let mut cc = Congestion::new(CongestionControl::NewReno, MSS as u32, 1);
    cc.set_growth(CwndGrowth::Bsd44, None);
    cc.cwnd = 20 * s;
    cc.on_congestion_event(20 * s, MSS as u32); // ssthresh = cwnd = 10 segments
    let mut w = 10 * s;
    // cwnd == ssthresh: still slow start in 4.4BSD (`cw > snd_ssthresh` for avoidance).
    cc.on_ack(0, 2 * s, MSS as u32, None);
    w += s;
    assert_eq!(cc.cwnd, w);
    for k in 1..=40 {
        cc.on_ack(0, 2 * s, MSS as u32, None);
        w += s * s / w + s / 8;
        assert_eq!(cc.cwnd, w, "after {k} ACKs in avoidance");
    }
    // `min(cw + incr, TCP_MAXWIN)`: never past 65 535 octets unscaled.
    cc.cwnd = 65_400; // + 1460²/65400 + 182 = 65 614 without the cap
    cc.on_ack(0, 2 * s, MSS as u32, None);
    assert_eq!(cc.cwnd, 65_535);
}
