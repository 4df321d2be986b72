//! An OpenVPN end in the simulator: the data channel over UDP with real bytes, its
//! `--fragment` option, TAP (Ethernet frames) or TUN (IPv4 packets).
//!
//! Sources (OpenVPN has no RFC; see `wire::openvpn` for the layouts): the data-channel
//! packet is `[opcode|key id][peer id][HMAC][packet id][fragment header][payload]` for
//! `cipher none` (CBC adds an IV and encrypts, GCM replaces the HMAC by a tag), built
//! and checked by `wire::openvpn::DataChannel` with a real HMAC and cipher. `--fragment
//! max` (OpenVPN 2.4 manual: "no UDP datagrams are sent which are larger than max
//! bytes", the UDP payload) splits a datagram as `fragment.c` does
//! (`wire::openvpn::split_fragments`); the receiver reassembles by sequence id and keeps
//! incomplete datagrams `FRAG_TTL_SEC` (10 s, `fragment.h`).
//!
//! The packet id (`--replay`) is not sent by default: seed 002 §3.2 counts 24 bytes of
//! overhead (opcode 1, peer id 3, SHA1 20), as the wire crate's analysis does (see the
//! note in `wire::openvpn`). When sent, it is not checked against a replay window.
//!
//! Keys: no TLS control channel is modelled. Both ends derive each direction's HMAC and
//! cipher keys from the tunnel's `key` number and the direction (client to server or
//! back), as IPsec's ends derive theirs from the SPI; CBC IVs come from a seeded stream.
//!
//! `proto tcp`: the same packets (never `--fragment`ed: OpenVPN refuses `--fragment`
//! with TCP) go length-prefixed on a TCP connection, see `openvpn_tcp`.
//!
//! Not modelled: the control channel (TLS handshake, key renegotiation), compression,
//! `--mssfix`.

use std::collections::BTreeMap;
use std::net::Ipv4Addr;

use wire::openvpn::{split_fragments, Auth, Cipher, DataChannel, FragmentHeader, FragmentType};

use crate::config::OpenVpnConfig;
use crate::rng::{stream_key, RandomStream};
use crate::tunnel::openvpn_tcp::StreamTransport;
use qoslab_plan::{OpenVpnAuth, OpenVpnCipher, OpenVpnProto};

/// `fragment.h` FRAG_TTL_SEC: an incomplete datagram is dropped after 10 s.
pub const FRAG_TTL_NS: u64 = 10_000_000_000;
/// `fragment.h` N_FRAG_BUF: the receiver reassembles in a sliding window of this many
/// sequence ids (`fragment.c` `fragment_list_get_buf`); an incomplete datagram whose id
/// falls out of the window is dropped.
pub const N_FRAG_BUF: i16 = 25;

/// The data channel cipher the plan names.
pub fn cipher(cipher: OpenVpnCipher) -> Cipher {
    match cipher {
        OpenVpnCipher::None => Cipher::None,
        OpenVpnCipher::BfCbc => Cipher::BfCbc,
        OpenVpnCipher::Aes128Cbc => Cipher::Aes128Cbc,
        OpenVpnCipher::Aes256Cbc => Cipher::Aes256Cbc,
        OpenVpnCipher::Aes128Gcm => Cipher::Aes128Gcm,
        OpenVpnCipher::Aes256Gcm => Cipher::Aes256Gcm,
    }
}

/// The HMAC the plan names.
pub fn auth(auth: OpenVpnAuth) -> Auth {
    match auth {
        OpenVpnAuth::None => Auth::None,
        OpenVpnAuth::Sha1 => Auth::Sha1,
        OpenVpnAuth::Sha256 => Auth::Sha256,
        OpenVpnAuth::Sha512 => Auth::Sha512,
    }
}

/// The data channel one direction uses: keys from the tunnel's key number and direction.
pub fn channel(config: &OpenVpnConfig, to_server: bool) -> Result<DataChannel, String> {
    let mut channel = DataChannel::new(cipher(config.cipher), auth(config.auth));
    channel.replay = config.replay;
    channel.fragment = config.fragment.is_some();
    let direction = u64::from(config.key) * 2 + u64::from(to_server);
    let key = |purpose: &str, len: usize| {
        let mut stream = RandomStream::from_key(stream_key(0, direction, purpose));
        let mut bytes = Vec::with_capacity(len + 8);
        while bytes.len() < len {
            bytes.extend_from_slice(&stream.next_u64().to_le_bytes());
        }
        bytes.truncate(len);
        bytes
    };
    channel.cipher_key = key("openvpn-cipher-key", channel.cipher.key_len());
    channel.hmac_key = key("openvpn-hmac-key", channel.auth.len().max(20));
    channel.implicit_iv.copy_from_slice(&key("openvpn-implicit-iv", 8));
    Ok(channel)
}

/// A datagram being reassembled from `--fragment` pieces.
/// Why conservation counts the packet of an incomplete fragmented packet discarded
/// after FRAG_TTL_SEC or out of the N_FRAG_BUF window as dropped (OpenVPN 2.4
/// `fragment.c` drops it silently).
pub const FRAGMENT_EXPIRED: &str =
    "OpenVPN incomplete fragmented packet discarded (FRAG_TTL_SEC, or out of the 25-id window)";

#[derive(Debug)]
struct Partial {
    pieces: BTreeMap<u8, Vec<u8>>,
    last: Option<u8>,
    expires: u64,
}

/// Counters for the CPU model and reports.
#[derive(Debug, Clone, Copy, Default)]
pub struct Counters {
    /// Data packets built and opened (tried).
    pub sealed: u64,
    pub opened: u64,
    /// Octets of those packets (what the HMAC and cipher went over).
    pub bytes: u64,
    /// Datagrams split by `--fragment`, and pieces sent.
    pub fragmented: u64,
    pub fragments: u64,
}

/// One end of an OpenVPN tunnel.
#[derive(Debug)]
pub struct OpenVpnEnd {
    pub config: OpenVpnConfig,
    tx: DataChannel,
    rx: DataChannel,
    next_packet_id: u32,
    ivs: RandomStream,
    frag_seq: u8,
    partial: BTreeMap<u8, Partial>,
    pub counters: Counters,
    /// Incomplete fragmented packets discarded (after FRAG_TTL_SEC, or out of the
    /// window), their pieces in order, for conservation (the world charges and empties
    /// it at the end).
    pub abandoned: Vec<Vec<u8>>,
    /// The newest sequence id of the reassembly window (`fragment_list.seq_id`, 0 at
    /// first as `fragment_init` clears it).
    window_top: u8,
    /// `proto tcp`: the connection the packets ride on (`None` over UDP).
    pub stream: Option<StreamTransport>,
}

impl OpenVpnEnd {
    /// The end of `config`; an unknown cipher, auth or proto, `fragment` with TCP, or a
    /// `fragment` that leaves no room for data is an error naming it.
    pub fn new(config: &OpenVpnConfig) -> Result<OpenVpnEnd, String> {
        let stream = match config.proto {
            OpenVpnProto::Udp => None,
            OpenVpnProto::Tcp if config.fragment.is_some() => {
                return Err("fragment: OpenVPN refuses --fragment with --proto tcp".into())
            }
            OpenVpnProto::Tcp => {
                // The client's ephemeral port (Linux's range 32768-60999) and each end's ISS.
                let mut s = RandomStream::from_key(stream_key(
                    0,
                    u64::from(config.key) * 2 + u64::from(!config.server),
                    "openvpn-tcp",
                ));
                let ephemeral = 32_768 + s.uniform_inclusive(60_999 - 32_768) as u16;
                let port = if config.server { config.local_port } else { config.remote_port };
                Some(StreamTransport::new(
                    config.server,
                    config.local,
                    config.remote,
                    port,
                    ephemeral,
                    s.next_u64() as u32,
                ))
            }
        };
        let tx = channel(config, !config.server)?;
        let rx = channel(config, config.server)?;
        if let Some(limit) = config.fragment {
            let limit = usize::from(limit);
            let overhead = tx.overhead(limit);
            if limit < overhead + 4 {
                return Err(format!(
                    "fragment {limit}: leaves no room after {overhead} octets of data-channel overhead"
                ));
            }
        }
        Ok(OpenVpnEnd {
            config: config.clone(),
            tx,
            rx,
            next_packet_id: 1,
            ivs: RandomStream::from_key(stream_key(
                0,
                u64::from(config.key) * 2 + u64::from(!config.server),
                "openvpn-iv",
            )),
            frag_seq: 0,
            partial: BTreeMap::new(),
            abandoned: Vec::new(),
            window_top: 0,
            counters: Counters::default(),
            stream,
        })
    }

    /// Octets the data channel adds to a payload of `len` octets (no fragmentation).
    pub fn overhead(&self, len: usize) -> usize {
        self.tx.overhead(len)
    }

    fn iv(&mut self) -> Vec<u8> {
        let len = self.tx.iv_len();
        let mut iv = Vec::with_capacity(len + 8);
        while iv.len() < len {
            iv.extend_from_slice(&self.ivs.next_u64().to_le_bytes());
        }
        iv.truncate(len);
        iv
    }

    fn packet_id(&mut self) -> u32 {
        let id = self.next_packet_id;
        self.next_packet_id = self.next_packet_id.wrapping_add(1).max(1);
        id
    }

    /// Seals `payload` (an Ethernet frame for TAP, an IPv4 packet for TUN) into one UDP
    /// payload, or several with `--fragment` when it does not fit.
    pub fn seal(&mut self, payload: &[u8], out: &mut Vec<Vec<u8>>) -> Result<(), String> {
        let Some(limit) = self.config.fragment.map(usize::from) else {
            let (id, iv) = (self.packet_id(), self.iv());
            let mut packet = Vec::with_capacity(payload.len() + 64);
            self.tx.encapsulate(id, &iv, payload, &mut packet);
            self.count_sealed(&packet);
            out.push(packet);
            return Ok(());
        };
        // The room for data in a piece: the limit less what the channel adds to it.
        let room = limit - self.tx.overhead(limit);
        let seq = self.frag_seq;
        let pieces = split_fragments(seq, room, payload.len()).map_err(|_| {
            format!("{}: a {}-octet datagram needs more than 32 fragments of {room}", self.config.name, payload.len())
        })?;
        if pieces.len() > 1 {
            self.frag_seq = self.frag_seq.wrapping_add(1);
            self.counters.fragmented += 1;
            self.counters.fragments += pieces.len() as u64;
        }
        for (header, range) in pieces {
            let (id, iv) = (self.packet_id(), self.iv());
            let mut packet = Vec::with_capacity(limit);
            if header == FragmentHeader::WHOLE {
                self.tx.encapsulate(id, &iv, payload, &mut packet);
            } else {
                self.tx.encapsulate_fragment(id, &iv, header, &payload[range], &mut packet);
            }
            self.count_sealed(&packet);
            out.push(packet);
        }
        Ok(())
    }

    fn count_sealed(&mut self, packet: &[u8]) {
        self.counters.sealed += 1;
        self.counters.bytes += packet.len() as u64;
    }

    /// Opens a received UDP payload: the whole datagram it completes, `None` while
    /// fragments are missing, or why it was dropped.
    pub fn open(&mut self, now: u64, packet: &[u8]) -> Result<Option<Vec<u8>>, String> {
        self.counters.opened += 1;
        self.counters.bytes += packet.len() as u64;
        let opened = self.rx.decapsulate(packet).map_err(|e| {
            let why = match e {
                wire::Error::Checksum => "the HMAC (or GCM tag) does not verify".to_string(),
                wire::Error::Unsupported => "not a data packet of this channel".to_string(),
                e => format!("{e:?}"),
            };
            format!("OpenVPN packet on {} dropped: {why}", self.config.name)
        })?;
        // Incomplete datagrams older than FRAG_TTL_SEC are dropped (checked as packets
        // arrive, as fragment.c's wakeup does periodically).
        let abandoned = &mut self.abandoned;
        self.partial.retain(|_, p| {
            if p.expires <= now {
                abandoned.push(p.pieces.values().flatten().copied().collect());
            }
            p.expires > now
        });
        let Some(header) = opened.fragment.filter(|h| h.kind != FragmentType::Whole) else {
            return Ok(Some(opened.payload));
        };
        // fragment.c fragment_list_get_buf: a sequence id N_FRAG_BUF or more from the
        // window's top resets the window to it; a newer one slides the window up, and
        // the buffers it leaves behind are reused: either way an incomplete datagram out
        // of the window is gone (before this, one kept its id for FRAG_TTL_SEC and the
        // id's next user, 256 datagrams later, was mixed into it).
        let behind = |top: u8, id: u8| i16::from(top.wrapping_sub(id) as i8);
        let ahead = -behind(self.window_top, header.seq_id);
        if ahead.abs() >= N_FRAG_BUF || ahead > 0 {
            self.window_top = header.seq_id;
        }
        let (top, abandoned) = (self.window_top, &mut self.abandoned);
        self.partial.retain(|&id, p| {
            let keep = (0..N_FRAG_BUF).contains(&behind(top, id));
            if !keep {
                abandoned.push(p.pieces.values().flatten().copied().collect());
            }
            keep
        });
        let entry = self.partial.entry(header.seq_id).or_insert_with(|| Partial {
            pieces: BTreeMap::new(),
            last: None,
            expires: now + FRAG_TTL_NS,
        });
        entry.pieces.insert(header.frag_id, opened.payload);
        if header.kind == FragmentType::Last {
            entry.last = Some(header.frag_id);
        }
        let complete = entry.last.is_some_and(|last| (0..=last).all(|i| entry.pieces.contains_key(&i)));
        if !complete {
            return Ok(None);
        }
        let whole = self.partial.remove(&header.seq_id).expect("present");
        Ok(Some(whole.pieces.into_values().flatten().collect()))
    }

    /// The incomplete fragmented packets held, each as its pieces so far in order
    /// (conservation's census).
    pub fn held_fragments(&self, mut each: impl FnMut(&[u8])) {
        for p in self.partial.values() {
            let joined: Vec<u8> = p.pieces.values().flatten().copied().collect();
            each(&joined);
        }
    }

    /// Whether a UDP datagram from `src`:`sport` to `dst`:`dport` is this tunnel's.
    pub fn claims(&self, src: Ipv4Addr, sport: u16, dst: Ipv4Addr, dport: u16) -> bool {
        dst == self.config.local
            && dport == self.config.local_port
            && src == self.config.remote
            && sport == self.config.remote_port
    }
}

#[cfg(test)]
mod test {
    use super::*;
    use qoslab_plan::OpenVpnDev;

    fn config(server: bool, fragment: Option<u16>) -> OpenVpnConfig {
        let (a, b) = (Ipv4Addr::new(198, 51, 100, 2), Ipv4Addr::new(198, 51, 100, 1));
        OpenVpnConfig {
            name: "ovpn".into(),
            dev: OpenVpnDev::Tap,
            server,
            port: Some(1),
            local: if server { b } else { a },
            remote: if server { a } else { b },
            local_port: if server { 1194 } else { 49200 },
            remote_port: if server { 49200 } else { 1194 },
            proto: OpenVpnProto::Udp,
            cipher: OpenVpnCipher::None,
            auth: OpenVpnAuth::Sha1,
            replay: false,
            fragment,
            mtu: 1500,
            protects: vec![],
            key: 0,
        }
    }

    #[test]
    fn seed002_overhead_is_24_octets_and_the_hmac_verifies() {
        let mut client = OpenVpnEnd::new(&config(false, None)).unwrap();
        let mut server = OpenVpnEnd::new(&config(true, None)).unwrap();
        let frame = vec![0x5a; 1448];
        let mut out = Vec::new();
        client.seal(&frame, &mut out).unwrap();
        // Seed 002 §3.2: 1 (opcode) + 3 (peer id) + 20 (SHA1) = 24; P_DATA_V2 is opcode 9.
        assert_eq!(out[0].len(), 1448 + 24);
        assert_eq!(out[0][0] >> 3, 9);
        assert_eq!(server.open(0, &out[0]).unwrap().unwrap(), frame);
        // A flipped payload bit fails the HMAC.
        let mut bad = out[0].clone();
        bad[100] ^= 1;
        assert!(server.open(0, &bad).unwrap_err().contains("HMAC"));
        // The reverse direction has its own key: a client packet does not open as the
        // server's own.
        let mut back = OpenVpnEnd::new(&config(false, None)).unwrap();
        assert!(back.open(0, &out[0]).is_err());
    }

    #[test]
    fn fragment_keeps_every_udp_payload_within_the_limit_and_reassembles() {
        let mut client = OpenVpnEnd::new(&config(false, Some(1472))).unwrap();
        let mut server = OpenVpnEnd::new(&config(true, Some(1472))).unwrap();
        // A PPPoE frame for MTU 1492 over TAP: 14 + 8 + 1492 = 1514 octets.
        let frame: Vec<u8> = (0..1514u32).map(|i| i as u8).collect();
        let mut out = Vec::new();
        client.seal(&frame, &mut out).unwrap();
        assert_eq!(out.len(), 2);
        assert!(out.iter().all(|p| p.len() <= 1472));
        // Each piece: 24 octets of channel overhead and the 4-octet fragment header.
        assert_eq!(out.iter().map(|p| p.len() - 28).sum::<usize>(), 1514);
        assert_eq!(server.open(0, &out[1]).unwrap(), None, "out of order: wait for the rest");
        assert_eq!(server.open(1, &out[0]).unwrap().unwrap(), frame);
        // A small datagram goes whole, still with the 4-octet header (FRAG_WHOLE).
        out.clear();
        client.seal(&[1, 2, 3], &mut out).unwrap();
        assert_eq!(out[0].len(), 3 + 24 + 4);
        assert_eq!(server.open(2, &out[0]).unwrap().unwrap(), [1, 2, 3]);
    }

    #[test]
    fn an_incomplete_datagram_leaves_the_window_of_25_sequence_ids() {
        // fragment.h N_FRAG_BUF 25: once the 25th datagram after an incomplete one is
        // being reassembled, the incomplete one's buffer is reused.
        let mut client = OpenVpnEnd::new(&config(false, Some(600))).unwrap();
        let mut server = OpenVpnEnd::new(&config(true, Some(600))).unwrap();
        let mut out = Vec::new();
        client.seal(&[7u8; 1400], &mut out).unwrap();
        server.open(0, &out[0]).unwrap();
        for k in 1..=25 {
            out.clear();
            client.seal(&[k as u8; 1400], &mut out).unwrap();
            assert_eq!(server.open(0, &out[1]).unwrap(), None);
            assert_eq!(server.partial.len(), (k + 1).min(25), "after {k} more");
        }
        assert_eq!(server.abandoned.len(), 1);
        // What it held: the first piece of the first datagram.
        assert!(!server.abandoned[0].is_empty() && server.abandoned[0].iter().all(|&b| b == 7));
    }

    #[test]
    fn a_lost_fragment_expires() {
        let mut client = OpenVpnEnd::new(&config(false, Some(600))).unwrap();
        let mut server = OpenVpnEnd::new(&config(true, Some(600))).unwrap();
        let mut out = Vec::new();
        client.seal(&[7u8; 1400], &mut out).unwrap();
        assert_eq!(out.len(), 3);
        assert_eq!(server.open(0, &out[0]).unwrap(), None);
        assert_eq!(server.open(0, &out[2]).unwrap(), None);
        assert_eq!(server.partial.len(), 1);
        out.clear();
        client.seal(&[1u8; 10], &mut out).unwrap();
        server.open(FRAG_TTL_NS + 1, &out[0]).unwrap();
        assert!(server.partial.is_empty(), "FRAG_TTL_SEC: the incomplete datagram is gone");
    }
}
