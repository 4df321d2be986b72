//! OpenVPN's stream transport (`proto tcp`): the data-channel packets of an end carried
//! on one TCP connection, each preceded by its 16-bit length.
//!
//! Sources (OpenVPN has no RFC): OpenVPN 2.4 manual, `--proto tcp-server|tcp-client`;
//! `proto.h`/`socket.c` (`stream_buf`): over TCP every packet is written as a 2-octet
//! big-endian length then the packet (`wire::openvpn::encapsulate_tcp`), and the reader
//! cuts packets back out of the byte stream (a packet may span segments, one segment may
//! hold several). The server listens on its port (1194); the client connects to it from
//! an ephemeral port: `options.c` turns `bind` off for a TCP client without `--lport` or
//! `--local` (Linux's ephemeral range 32768-60999 then picks the port).
//!
//! The connection is the simulator's `TcpSocket` set to what Linux's TCP runs
//! ([`linux_tcp`]: openvpn sets no congestion control or buffer of its own, so the
//! kernel's defaults carry it), so loss below the tunnel is repaired by the outer TCP:
//! packets are delayed, never lost, and an inner TCP flow runs over a second congestion
//! controller ("TCP over TCP").
//!
//! Queue: `--tcp-queue-limit n` (OpenVPN 2.4 manual, default 64): "when the number of
//! output packets queued before sending to the TCP socket reaches this limit ... OpenVPN
//! will start to drop outgoing packets". A packet is handed to the socket only whole
//! (so the stream never holds half a packet); while the socket's send buffer has no
//! room, or before the connection is established, packets wait here, and one arriving
//! to 64 waiting is dropped.
//!
//! Not modelled: `--mssfix` (OpenVPN clamps the MSS of inner TCP SYNs; this model does
//! not rewrite inner packets, with UDP or TCP), `--fragment` (OpenVPN refuses it with
//! TCP), reconnection after the connection fails, the TLS control channel.

use std::collections::VecDeque;
use std::net::Ipv4Addr;

use wire::openvpn::{encapsulate_tcp, parse_tcp};
use wire::tcp::{self, SeqNumber};

use crate::tcp::{CubicAlpha, HyStartMode, State as TcpState, TcpConfig, TcpSocket};

/// `--tcp-queue-limit` default (OpenVPN 2.4 manual): packets waiting for the socket.
pub const TCP_QUEUE_LIMIT: usize = 64;

/// The TCP of the connection: Linux's as it runs, since openvpn (2.6, `socket.c`) sets
/// no congestion control on its socket and no `--sndbuf`/`--rcvbuf` unless told, and
/// `TCP_NODELAY` only with `--tcp-nodelay` (Nagle stays on). `TcpConfig::default()`
/// keeps the ns-3-matched choices of the comparisons; Linux differs in three that a
/// lossy path shows (benchmarks/README.md, "TCP CUBIC, simulator against Linux": with
/// them the simulator came from 20 % above Linux to 0.4 %), and in slow start's bound:
/// - CUBIC as `tcp_cubic.c` computes it ([`CubicAlpha::Linux`]);
/// - Proportional Rate Reduction in recovery (`tcp_cwnd_reduction`, Linux ≥ 3.2);
/// - HyStart (`tcp_cubic` `hystart=1`, `hystart_detect=3`);
/// - no per-ACK bound in slow start (Linux ≥ 3.9 removed ABC's L).
///
/// Before this the connection ran `TcpConfig::default()` and carried 15.7 Mb/s through
/// examples/openvpn_tcp.toml's 1 % loss where Linux's carried 10.
pub fn linux_tcp() -> TcpConfig {
    TcpConfig {
        cubic_alpha: CubicAlpha::Linux,
        prr: true,
        hystart: HyStartMode::Classic,
        slow_start_limit: None,
        ..TcpConfig::default()
    }
}

/// One end's TCP connection and stream buffers.
#[derive(Debug)]
pub struct StreamTransport {
    pub tcp: TcpSocket,
    pub server: bool,
    pub local: Ipv4Addr,
    pub remote: Ipv4Addr,
    pub local_port: u16,
    /// The peer's port: the server learns it from the client's SYN (0 until then).
    pub remote_port: u16,
    iss: u32,
    started: bool,
    /// Length-prefixed packets waiting for room in the socket's send buffer.
    queue: VecDeque<Vec<u8>>,
    /// Received stream octets not yet forming a whole packet.
    rx: Vec<u8>,
    /// Packets dropped because `TCP_QUEUE_LIMIT` were already waiting.
    pub queue_drops: u64,
}

impl StreamTransport {
    /// The server listens on `port`; the client connects to the server's `port` from
    /// `ephemeral`. `iss`: the TCP initial sequence number (seeded by the caller).
    pub fn new(
        server: bool,
        local: Ipv4Addr,
        remote: Ipv4Addr,
        port: u16,
        ephemeral: u16,
        iss: u32,
    ) -> StreamTransport {
        StreamTransport {
            tcp: TcpSocket::new(linux_tcp()),
            server,
            local,
            remote,
            local_port: if server { port } else { ephemeral },
            remote_port: if server { 0 } else { port },
            iss,
            started: false,
            queue: VecDeque::new(),
            rx: Vec::new(),
            queue_drops: 0,
        }
    }

    /// Every OpenVPN packet this end holds or has sent toward `peer` (this end's
    /// connection's other end, if it has one) that `peer` has not yet cut out of the
    /// stream, for conservation's census: the packets waiting for the socket, and the
    /// stream itself from the first octet `peer` has not made a packet of. Those octets
    /// are `peer`'s partial packet and unread octets (up to its RCV.NXT) followed by what
    /// this end still holds past that point (unacknowledged or unsent), so a packet cut
    /// across segments is seen whole.
    pub fn held_toward(&self, peer: Option<&StreamTransport>, mut each: impl FnMut(&[u8])) {
        for packet in &self.queue {
            each(packet);
        }
        let ((base, tx), _) = self.tcp.stream_buffers();
        let mut stream = Vec::new();
        let mut skip = 0;
        if let Some(peer) = peer {
            let (_, (rcv_nxt, unread)) = peer.tcp.stream_buffers();
            stream.extend_from_slice(&peer.rx);
            stream.extend(unread.iter());
            skip = (rcv_nxt.0.wrapping_sub(base.0) as u32 as usize).min(tx.len());
        }
        stream.extend(tx.iter().skip(skip));
        each(&stream);
    }

    /// Whether `peer` is the other end of this end's connection.
    pub fn is_peer(&self, peer: &StreamTransport) -> bool {
        peer.local == self.remote
            && peer.remote == self.local
            && peer.local_port == self.remote_port
            && peer.remote_port == self.local_port
    }

    /// Whether the connection is established (packets flow).
    pub fn is_up(&self) -> bool {
        self.tcp.state() == TcpState::Established
    }

    /// Whether a TCP segment from `src:sport` to `dst:dport` is this end's.
    pub fn claims(&self, src: Ipv4Addr, sport: u16, dst: Ipv4Addr, dport: u16) -> bool {
        src == self.remote
            && dst == self.local
            && dport == self.local_port
            && (self.remote_port == 0 || sport == self.remote_port)
    }

    pub fn poll_at(&self) -> Option<u64> {
        if !self.started {
            return Some(0);
        }
        self.tcp.poll_at()
    }

    /// Starts (client: connect; server: listen) if not yet, runs the socket's timers,
    /// and emits what it may send: TCP segments (header and payload, encoded).
    pub fn on_timer(&mut self, now: u64, out: &mut Vec<Vec<u8>>) {
        if !self.started {
            self.started = true;
            if self.server {
                self.tcp.listen(self.local_port, SeqNumber(self.iss as i32));
            } else {
                self.tcp.connect(now, self.local_port, self.remote_port, SeqNumber(self.iss as i32));
            }
        }
        self.flush(now, out);
    }

    /// Queues one OpenVPN packet (length-prefixed) and sends what the socket allows.
    pub fn send(&mut self, now: u64, packet: &[u8], out: &mut Vec<Vec<u8>>) -> Result<(), String> {
        let result = if self.queue.len() >= TCP_QUEUE_LIMIT {
            self.queue_drops += 1;
            Err(format!("OpenVPN TCP queue full ({TCP_QUEUE_LIMIT} packets, --tcp-queue-limit)"))
        } else {
            let mut framed = Vec::with_capacity(packet.len() + 2);
            encapsulate_tcp(packet, &mut framed);
            self.queue.push_back(framed);
            Ok(())
        };
        self.flush(now, out);
        result
    }

    /// A TCP segment of the connection: the whole OpenVPN packets it completes (in
    /// stream order), or an error when the stream is out of step (then reset).
    pub fn input(
        &mut self,
        now: u64,
        repr: &tcp::Repr,
        payload: &[u8],
        out: &mut Vec<Vec<u8>>,
    ) -> Result<Vec<Vec<u8>>, String> {
        if self.remote_port == 0 && repr.control == tcp::Control::Syn {
            self.remote_port = repr.src_port;
        }
        if let Some(rst) = self.tcp.process(now, repr, payload) {
            self.push_segment(rst, &[], out);
        }
        let mut buf = vec![0u8; self.tcp.recv_queue()];
        let n = self.tcp.recv_slice(&mut buf);
        self.rx.extend_from_slice(&buf[..n]);
        let mut packets = Vec::new();
        let mut used = 0;
        let mut result = Ok(());
        while let Ok((packet, len)) = parse_tcp(&self.rx[used..]) {
            if packet.is_empty() {
                // socket.c: a zero length is an error of the stream ("packet length ...
                // out of range"), and OpenVPN restarts the connection.
                result = Err("OpenVPN TCP stream out of step: a packet of length 0".to_string());
                self.tcp.abort();
                break;
            }
            packets.push(packet.to_vec());
            used += len;
        }
        self.rx.drain(..used);
        self.flush(now, out);
        result.map(|()| packets)
    }

    /// Moves whole queued packets into the socket while they fit, then emits segments.
    fn flush(&mut self, now: u64, out: &mut Vec<Vec<u8>>) {
        if self.is_up() {
            while let Some(framed) = self.queue.front() {
                if self.tcp.send_capacity() < framed.len() {
                    break;
                }
                let n = self.tcp.send_slice(framed);
                debug_assert_eq!(n, framed.len());
                self.queue.pop_front();
            }
        }
        let mut segments = Vec::new();
        self.tcp.dispatch(now, |repr, payload| segments.push((repr, payload.to_vec())));
        for (repr, payload) in segments {
            self.push_segment(repr, &payload, out);
        }
    }

    fn push_segment(&self, repr: tcp::Repr, payload: &[u8], out: &mut Vec<Vec<u8>>) {
        let mut segment = Vec::with_capacity(repr.buffer_len());
        repr.encapsulate(&self.local, &self.remote, payload, &mut segment);
        out.push(segment);
    }
}

#[cfg(test)]
mod test {
    use super::*;

    /// Carries segments between two ends (no loss) until neither has anything to send.
    fn exchange(
        now: u64,
        a: &mut StreamTransport,
        b: &mut StreamTransport,
        mut from_a: Vec<Vec<u8>>,
        got_b: &mut Vec<Vec<u8>>,
    ) {
        let mut from_b = Vec::new();
        while !from_a.is_empty() || !from_b.is_empty() {
            for seg in std::mem::take(&mut from_a) {
                let p = tcp::Packet::new_checked(&seg[..]).unwrap();
                let repr = tcp::Repr::parse(&p, &a.local, &a.remote).unwrap();
                got_b.extend(b.input(now, &repr, p.payload(), &mut from_b).unwrap());
            }
            for seg in std::mem::take(&mut from_b) {
                let p = tcp::Packet::new_checked(&seg[..]).unwrap();
                let repr = tcp::Repr::parse(&p, &b.local, &b.remote).unwrap();
                a.input(now, &repr, p.payload(), &mut from_a).unwrap();
            }
        }
    }

    #[test]
    fn packets_cross_whole_and_in_order_after_the_handshake() {
        let (c, s) = (Ipv4Addr::new(10, 0, 0, 1), Ipv4Addr::new(10, 0, 0, 2));
        let mut client = StreamTransport::new(false, c, s, 1194, 40_000, 7);
        let mut server = StreamTransport::new(true, s, c, 1194, 0, 9);
        let mut out = Vec::new();
        server.on_timer(0, &mut out);
        assert!(out.is_empty(), "a listener sends nothing");
        // Before the connection is up a packet waits in the queue.
        client.on_timer(0, &mut out);
        client.send(0, &[1; 10], &mut out).unwrap();
        assert_eq!(out.len(), 1, "only the SYN");
        let mut got = Vec::new();
        exchange(0, &mut client, &mut server, out, &mut got);
        assert!(client.is_up() && server.is_up());
        assert_eq!(server.remote_port, 40_000);
        // Three packets larger together than an MSS: several per segment, one spanning two.
        let mut out = Vec::new();
        for (i, len) in [700usize, 900, 1200].into_iter().enumerate() {
            client.send(1, &vec![i as u8 + 2; len], &mut out).unwrap();
        }
        exchange(1, &mut client, &mut server, out, &mut got);
        let lens: Vec<usize> = got.iter().map(Vec::len).collect();
        assert_eq!(lens, [10, 700, 900, 1200]);
        assert!(got[3].iter().all(|&b| b == 4));
    }

    #[test]
    fn a_queue_of_64_waiting_packets_drops_the_next() {
        let (c, s) = (Ipv4Addr::new(10, 0, 0, 1), Ipv4Addr::new(10, 0, 0, 2));
        let mut client = StreamTransport::new(false, c, s, 1194, 40_000, 7);
        let mut out = Vec::new();
        client.on_timer(0, &mut out);
        for _ in 0..TCP_QUEUE_LIMIT {
            client.send(0, &[0; 100], &mut out).unwrap();
        }
        assert!(client.send(0, &[0; 100], &mut out).unwrap_err().contains("queue full"));
        assert_eq!(client.queue_drops, 1);
    }
}
