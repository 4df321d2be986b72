//! The OpenVPN data channel, over UDP (and with the 2-octet length prefix of TCP).
//!
//! OpenVPN has no RFC; the reference is the implementation and its documentation.
//! Standards (sources) a reader must know:
//!
//! * OpenVPN 2.x `ssl_pkt.h` / `ssl.h`: the first octet of every packet holds the opcode
//!   in its top 5 bits and the key id in its low 3 bits; `P_DATA_V2` adds a 3-octet peer
//!   id (2.3.10+), with 0xffffff meaning "undefined".
//! * OpenVPN 2.4+ `crypto.c` (`openvpn_encrypt_v1`, `openvpn_encrypt_aead`) and
//!   `forward.c` (`encrypt_sign`), the data-channel layouts modelled here:
//!   - `cipher none`: `[op][HMAC][packet id][payload]`, the HMAC over packet id and payload;
//!   - CBC: `[op][HMAC][IV][E(packet id | payload | PKCS#7 padding)]`, the HMAC over IV and
//!     ciphertext ("encrypt then MAC"); the IV is random per packet;
//!   - AEAD (GCM): `[op][packet id][tag 16][E(payload)]`, the nonce being packet id (4) and
//!     the 8-octet implicit IV from the key material; the associated data is the packet
//!     id, preceded by the opcode and peer id for `P_DATA_V2` (which is prepended before
//!     encryption "so we can authenticate the opcode too"); `P_DATA_V1`'s opcode is
//!     prepended after encryption and is not authenticated in any mode.
//! * `packet_id.h`: the 4-octet short-form packet id used in TLS mode, starting at 1.
//!   Replay protection (`--replay`) has been on by default since OpenVPN 1.1.0;
//!   `--no-replay` was the only way off and is removed in 2.7. AEAD needs the packet id
//!   (it is the nonce), so with GCM it is always sent. A pre-shared static key
//!   (`--secret`, `DataOpcode::StaticKey`) sends no opcode and the 8-octet long form
//!   (id, then the time its sequence began; `init_crypto_static`); its `cipher none`
//!   layout is `[HMAC][packet id 4][time 4][payload]`.
//! * `comp.h`: the compression framing octet, sent even when nothing is compressed:
//!   `comp-lzo no` prefixes 0xfa; `compress` / `compress stub` (v1) puts 0xfb first and
//!   moves the payload's first octet to the end (`COMP_F_SWAP`); `compress stub-v2` adds
//!   nothing unless the payload starts with 0x50, which is escaped as 0x50 0x00.
//! * `fragment.h` / `fragment.c`: the `--fragment` header, 32 bits in network order inside
//!   the encryption: type (bits 0–1: whole, not last, last, test), sequence id (bits 2–9),
//!   fragment id (bits 10–14), and for the last fragment the maximum fragment size / 4
//!   (bits 15–28). Order of processing on send: compress, fragment, encrypt.
//!
//! Seed 002 §3.2 counts 24 octets for `cipher none` with `auth SHA1`: opcode 1, peer id 3,
//! HMAC 20, i.e. no packet id. OpenVPN by default also sends the 4-octet packet id (28
//! octets, `replay: true` here); set `replay: false` to reproduce the paper's count. The
//! paper gives no reason; the likely one is that with no cipher there is no IV and the
//! authors counted only the fields a cipher-less layout obviously needs (the packet id
//! sits after the HMAC in the clear, where it is easy to mistake for payload). The
//! paper then takes the TAP frame as 1448 and subtracts 18 for Ethernet header *and* FCS,
//! but a TAP frame carries no FCS: with the packet id the TAP frame is 1500 - 20 - 8 - 28
//! = 1444 = 14 + 1430, so the paper's MTU of 1430 is right for two wrong reasons that
//! cancel.
//!
//! Not modelled: the control channel's body (session id, tls-auth HMAC, acks, message
//! packet id), `tls-crypt`, the 2.6+ epoch data keys, CFB/OFB modes, real compression.

use crate::{Error, Field, Result};

use aes_gcm::aead::{AeadCore, AeadInOut};
use cbc::cipher::block_padding::Pkcs7;
use cbc::cipher::{BlockModeDecrypt, BlockModeEncrypt, KeyIvInit};
use hmac::{Hmac, KeyInit, Mac};

crate::enum_with_unknown! {
    /// `ssl_pkt.h` opcodes (the top 5 bits of the first octet).
    pub enum Opcode(u8) {
        /// Initial key from client, forget previous state (key method 1, obsolete).
        ControlHardResetClientV1 = 1,
        /// Initial key from server, forget previous state (key method 1, obsolete).
        ControlHardResetServerV1 = 2,
        /// New key, graceful transition from old to new key.
        ControlSoftResetV1 = 3,
        /// Control channel packet (usually TLS ciphertext).
        ControlV1 = 4,
        /// Acknowledgement for control packets received.
        AckV1 = 5,
        /// Data channel packet.
        DataV1 = 6,
        /// Initial key from client, forget previous state (key method 2).
        ControlHardResetClientV2 = 7,
        /// Initial key from server, forget previous state (key method 2).
        ControlHardResetServerV2 = 8,
        /// Data channel packet with a 3-octet peer id (OpenVPN 2.3.10+).
        DataV2 = 9,
        /// Initial key from client with tls-crypt-v2 wrapped key (2.5+).
        ControlHardResetClientV3 = 10,
        /// Control packet carrying the wrapped client key (2.6+).
        ControlWkcV1 = 11,
    }
}

/// Opcode shift in the first octet (`ssl_pkt.h` P_OPCODE_SHIFT).
pub const OPCODE_SHIFT: u8 = 3;
/// Key id mask in the first octet (`ssl_pkt.h` P_KEY_ID_MASK).
pub const KEY_ID_MASK: u8 = 0x07;
/// Length of the peer id of `P_DATA_V2`.
pub const PEER_ID_LEN: usize = 3;
/// `ssl.h`: the peer id meaning "not assigned".
pub const PEER_ID_UNDEF: u32 = 0x00ff_ffff;
/// `packet_id.h`: the short-form packet id.
pub const PACKET_ID_LEN: usize = 4;
/// `packet_id.h`: the long-form packet id of static-key mode, id and `net_time_t` time.
pub const PACKET_ID_LONG_LEN: usize = 8;
/// `crypto.h` OPENVPN_AEAD_TAG_LENGTH.
pub const AEAD_TAG_LEN: usize = 16;
/// The part of the 12-octet AEAD nonce taken from the key material (`crypto.c`).
pub const AEAD_IMPLICIT_IV_LEN: usize = 8;
/// `fragment.h`: fragment_header_type is 32 bits.
pub const FRAGMENT_HEADER_LEN: usize = 4;
/// `comp.h` COMP_PREFIX_LEN.
pub const COMPRESS_LEN: usize = 1;
/// The 16-bit packet length that precedes every packet over TCP (`proto.h`).
pub const TCP_LENGTH_LEN: usize = 2;
/// The IANA port for OpenVPN, UDP and TCP.
pub const PORT: u16 = 1194;

/// `comp.h`: NO_COMPRESS_BYTE, the `comp-lzo` framing octet of an uncompressed packet.
pub const NO_COMPRESS_BYTE: u8 = 0xfa;
/// `comp.h`: NO_COMPRESS_BYTE_SWAP, the `compress` (v1) framing octet.
pub const NO_COMPRESS_BYTE_SWAP: u8 = 0xfb;
/// `comp.h`: LZO_COMPRESS_BYTE.
pub const LZO_COMPRESS_BYTE: u8 = 0x66;
/// `comp.h`: LZ4_COMPRESS_BYTE.
pub const LZ4_COMPRESS_BYTE: u8 = 0x69;
/// `comp.h`: COMP_ALGV2_INDICATOR_BYTE.
pub const COMP_V2_INDICATOR: u8 = 0x50;
/// `comp.h`: COMP_ALGV2_UNCOMPRESSED_BYTE.
pub const COMP_V2_UNCOMPRESSED: u8 = 0x00;

/// Byte ranges of the packet header.
pub mod field {
    use crate::Field;
    /// Opcode (high 5 bits) and key id (low 3 bits).
    pub const OPCODE_KEY_ID: usize = 0;
    /// `P_DATA_V2` only: the peer id, 24 bits.
    pub const PEER_ID: Field = 1..4;
}
mod channel;
mod fragment;
mod options;
mod packet;

pub use channel::*;
pub use fragment::*;
pub use options::*;
pub use packet::*;

#[cfg(test)]
mod test {
    use super::*;
    use proptest::prelude::*;

    // Seed 002's configuration: P_DATA_V2, key id 0, peer id 1, cipher none, auth SHA1,
    // no packet id. Payload and key are RFC 2202 §3 test case 1 (key 0x0b × 20,
    // "Hi There"), so the HMAC is that RFC's published b617...be00.
    static SEED002_BYTES: [u8; 32] = [
        0x48, 0x00, 0x00, 0x01, 0xb6, 0x17, 0x31, 0x86, 0x55, 0x05, 0x72, 0x64, 0xe2, 0x8b, 0xc0, 0xb6, 0xfb, 0x37,
        0x8c, 0x8e, 0xf1, 0x46, 0xbe, 0x00, b'H', b'i', b' ', b'T', b'h', b'e', b'r', b'e',
    ];

    fn seed002() -> DataChannel {
        DataChannel {
            opcode: DataOpcode::V2 { peer_id: 1 },
            replay: false,
            hmac_key: vec![0x0b; 20],
            ..DataChannel::new(Cipher::None, Auth::Sha1)
        }
    }

    #[test]
    fn test_parse_header() {
        let packet = Packet::new_checked(&SEED002_BYTES[..]).unwrap();
        assert_eq!(packet.opcode(), Opcode::DataV2);
        assert_eq!(packet.key_id(), 0);
        assert_eq!(packet.peer_id(), Some(1));
        assert_eq!(Repr::parse(&packet).unwrap(), Repr { opcode: Opcode::DataV2, key_id: 0, peer_id: Some(1) });
        // P_CONTROL_HARD_RESET_CLIENT_V2 with key id 0 is 0x38; P_ACK_V1 key id 2 is 0x2a.
        let reset = Packet::new_checked(&[0x38u8, 0, 0][..]).unwrap();
        assert_eq!(reset.opcode(), Opcode::ControlHardResetClientV2);
        assert_eq!(reset.peer_id(), None);
        assert_eq!(reset.header_len(), 1);
        let mut out = [0u8; 1];
        Repr { opcode: Opcode::AckV1, key_id: 2, peer_id: None }.emit(&mut Packet::new_unchecked(&mut out[..]));
        assert_eq!(out, [0x2a]);
    }

    #[test]
    fn test_emit_seed002() {
        let channel = seed002();
        let mut out = Vec::new();
        channel.encapsulate(1, &[], b"Hi There", &mut out);
        assert_eq!(out, SEED002_BYTES);
        assert_eq!(channel.overhead_fields(1448), vec![("opcode/key id", 1), ("peer id", 3), ("hmac", 20)]);
        // Seed 002 §3.2: 1500 - 20 (IPv4) - 8 (UDP) - 24 = 1448.
        assert_eq!(1500 - 20 - 8 - channel.overhead(1448), 1448);
        let opened = channel.decapsulate(&out).unwrap();
        assert_eq!(opened.payload, b"Hi There");
        assert_eq!(opened.packet_id, None);
    }

    #[test]
    fn default_replay_adds_packet_id() {
        // OpenVPN's default: the packet id follows the HMAC in the clear, and is covered.
        let channel = DataChannel { replay: true, ..seed002() };
        let mut out = Vec::new();
        channel.encapsulate(7, &[], b"Hi There", &mut out);
        assert_eq!(out.len(), 8 + 28);
        assert_eq!(&out[24..28], &[0, 0, 0, 7]);
        assert_eq!(channel.overhead(1444), 28);
        // 1500 - 20 - 8 - 28 = 1444 = a 14-octet Ethernet header + 1430.
        assert_eq!(1500 - 20 - 8 - channel.overhead(1444) - 14, 1430);
        assert_eq!(channel.decapsulate(&out).unwrap().packet_id, Some(7));
        let mut bad = out.clone();
        bad[27] ^= 1;
        assert_eq!(channel.decapsulate(&bad), Err(Error::Checksum));
    }

    #[test]
    fn static_key_has_no_opcode_and_a_long_packet_id() {
        // `--secret` with `cipher none`, `auth SHA1`: [HMAC 20][packet id 4][time 4][payload].
        // The HMAC was computed with Python's hmac module (an independent implementation):
        // HMAC-SHA1(0x0b × 20, 00000007 12345678 "Hi There").
        let channel = DataChannel {
            opcode: DataOpcode::StaticKey,
            replay: true,
            hmac_key: vec![0x0b; 20],
            packet_id_time: 0x1234_5678,
            ..DataChannel::new(Cipher::None, Auth::Sha1)
        };
        let mut out = Vec::new();
        channel.encapsulate(7, &[], b"Hi There", &mut out);
        let hmac = [
            0x4e, 0xe2, 0xed, 0x79, 0x34, 0x2d, 0x29, 0x86, 0x41, 0x0d, 0x7f, 0x53, 0xed, 0xff, 0x2d, 0xd4, 0x86, 0x5c,
            0x0a, 0xdd,
        ];
        assert_eq!(&out[..20], &hmac);
        assert_eq!(&out[20..28], &[0, 0, 0, 7, 0x12, 0x34, 0x56, 0x78]);
        assert_eq!(&out[28..], b"Hi There");
        assert_eq!(channel.overhead_fields(8), vec![("hmac", 20), ("packet id", 4), ("packet id time", 4)]);
        assert_eq!(channel.header(), None);
        let opened = channel.decapsulate(&out).unwrap();
        assert_eq!((opened.header, opened.packet_id, opened.payload), (None, Some(7), b"Hi There".to_vec()));
        // OpenVPN 2.6 measured between two namespaces (issue 17): a TAP tunnel over UDP
        // carries inner IPv4 packets of at most 1430 octets unfragmented:
        // 1500 - 20 (IPv4) - 8 (UDP) - 28 - 14 (Ethernet header) = 1430.
        assert_eq!(1500 - 20 - 8 - channel.overhead(1444) - 14, 1430);
        // `--no-replay`: the HMAC alone.
        let bare = DataChannel { replay: false, ..channel.clone() };
        assert_eq!(bare.overhead_fields(8), vec![("hmac", 20)]);
        // CBC: the long packet id is encrypted with the payload and counts in the padding.
        let cbc = DataChannel { cipher_key: vec![1; 16], ..DataChannel { cipher: Cipher::Aes128Cbc, ..channel } };
        let mut out = Vec::new();
        cbc.encapsulate(1, &[2; 16], &[0; 7], &mut out);
        // [HMAC 20][IV 16][E(8 + 7 + padding 1)] = 52.
        assert_eq!(out.len(), 20 + 16 + 16);
        assert_eq!(cbc.overhead(7), out.len() - 7);
        assert_eq!(cbc.decapsulate(&out).unwrap().payload, [0; 7]);
    }

    #[test]
    fn aes_cbc_matches_nist() {
        // NIST SP 800-38A F.2.1 CBC-AES128: key 2b7e...4f3c, IV 0001...0e0f, first block.
        let channel = DataChannel {
            cipher_key: vec![
                0x2b, 0x7e, 0x15, 0x16, 0x28, 0xae, 0xd2, 0xa6, 0xab, 0xf7, 0x15, 0x88, 0x09, 0xcf, 0x4f, 0x3c,
            ],
            replay: false,
            ..DataChannel::new(Cipher::Aes128Cbc, Auth::Sha1)
        };
        let iv: Vec<u8> = (0u8..16).collect();
        let plain = [0x6b, 0xc1, 0xbe, 0xe2, 0x2e, 0x40, 0x9f, 0x96, 0xe9, 0x3d, 0x7e, 0x11, 0x73, 0x93, 0x17, 0x2a];
        let mut out = Vec::new();
        channel.encapsulate(1, &iv, &plain, &mut out);
        // [op+peer 4][hmac 20][iv 16][ct 32: the block and a full PKCS#7 padding block]
        assert_eq!(out.len(), 4 + 20 + 16 + 32);
        assert_eq!(&out[24..40], &iv[..]);
        assert_eq!(
            &out[40..56],
            &[0x76, 0x49, 0xab, 0xac, 0x81, 0x19, 0xb2, 0x46, 0xce, 0xe9, 0x8e, 0x9b, 0x12, 0xe9, 0x19, 0x7d]
        );
        assert_eq!(channel.overhead(16), out.len() - 16);
        assert_eq!(channel.overhead_fields(16).last(), Some(&("padding", 16)));
        assert_eq!(channel.decapsulate(&out).unwrap().payload, plain);
        let mut bad = out.clone();
        bad[50] ^= 0x80;
        assert_eq!(channel.decapsulate(&bad), Err(Error::Checksum));
    }

    #[test]
    fn blowfish_cbc_matches_reference() {
        // Eric Young's Blowfish CBC vector: key 0123456789abcdeff0e1d2c3b4a59687,
        // IV fedcba9876543210, "7654321 Now is the time " -> 6b77b4d6...4616d9.
        let channel = DataChannel {
            cipher_key: vec![
                0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef, 0xf0, 0xe1, 0xd2, 0xc3, 0xb4, 0xa5, 0x96, 0x87,
            ],
            replay: false,
            opcode: DataOpcode::V1,
            ..DataChannel::new(Cipher::BfCbc, Auth::None)
        };
        let iv = [0xfe, 0xdc, 0xba, 0x98, 0x76, 0x54, 0x32, 0x10];
        let mut out = Vec::new();
        channel.encapsulate(1, &iv, b"7654321 Now is the time ", &mut out);
        assert_eq!(out[0], 0x30);
        assert_eq!(
            &out[9..33],
            &[
                0x6b, 0x77, 0xb4, 0xd6, 0x30, 0x06, 0xde, 0xe6, 0x05, 0xb1, 0x56, 0xe2, 0x74, 0x03, 0x97, 0x93, 0x58,
                0xde, 0xb9, 0xe7, 0x15, 0x46, 0x16, 0xd9
            ]
        );
        assert_eq!(out.len(), 1 + 8 + 32);
    }

    #[test]
    fn gcm_matches_mcgrew_viega() {
        // GCM spec test case 2: key 0, nonce 0, plaintext 0^128 -> 0388dace...fe78.
        // OpenVPN's nonce is packet id | implicit IV, both zero here.
        let channel = DataChannel { opcode: DataOpcode::V1, ..DataChannel::new(Cipher::Aes128Gcm, Auth::Sha1) };
        let mut out = Vec::new();
        channel.encapsulate(0, &[], &[0u8; 16], &mut out);
        assert_eq!(out.len(), 1 + 4 + 16 + 16);
        assert_eq!(&out[1..5], &[0, 0, 0, 0]);
        assert_eq!(
            &out[21..37],
            &[0x03, 0x88, 0xda, 0xce, 0x60, 0xb6, 0xa3, 0x92, 0xf3, 0x28, 0xc2, 0xb9, 0x71, 0xb2, 0xfe, 0x78]
        );
        assert_eq!(channel.overhead_fields(16), vec![("opcode/key id", 1), ("packet id", 4), ("tag", 16)]);
        assert_eq!(channel.decapsulate(&out).unwrap().payload, [0u8; 16]);
        // P_DATA_V1's opcode octet is not authenticated: a changed key id still opens.
        let mut relabelled = out.clone();
        relabelled[0] |= 1;
        assert!(channel.decapsulate(&relabelled).is_ok());
        // P_DATA_V2's header is associated data: a changed peer id does not.
        let v2 = DataChannel::new(Cipher::Aes256Gcm, Auth::None);
        let mut out = Vec::new();
        v2.encapsulate(1, &[], b"payload", &mut out);
        assert_eq!(v2.decapsulate(&out).unwrap().payload, b"payload");
        out[3] ^= 1;
        assert_eq!(v2.decapsulate(&out), Err(Error::Checksum));
    }

    #[test]
    fn compression_framing() {
        let mut out = Vec::new();
        Compress::LzoNo.frame(&[1, 2, 3], &mut out);
        assert_eq!(out, [0xfa, 1, 2, 3]);
        out.clear();
        Compress::Stub.frame(&[1, 2, 3], &mut out);
        assert_eq!(out, [0xfb, 2, 3, 1]);
        assert_eq!(Compress::Stub.unframe(&out).unwrap(), [1, 2, 3]);
        out.clear();
        Compress::StubV2.frame(&[0x50, 9], &mut out);
        assert_eq!(out, [0x50, 0x00, 0x50, 9]);
        assert_eq!(Compress::StubV2.unframe(&out).unwrap(), [0x50, 9]);
        assert_eq!(Compress::StubV2.overhead(&[0x45]), 0);
        assert_eq!(Compress::LzoNo.unframe(&[0x66, 1]), Err(Error::Unsupported));
        assert_eq!(Compress::LzoNo.unframe(&[0x00, 1]), Err(Error::Malformed));
        assert_eq!(Compress::Stub.unframe(&[]), Err(Error::Truncated));
        // Found by proptest: the escape is plaintext, so CBC padding shrinks around it.
        let channel =
            DataChannel { compress: Compress::StubV2, replay: false, ..DataChannel::new(Cipher::BfCbc, Auth::None) };
        let mut out = Vec::new();
        channel.encapsulate(0, &[0; 8], &[0x50], &mut out);
        assert_eq!(out.len(), 3 + channel.overhead(3)); // 50 00 50 is the plaintext
        assert_eq!(channel.decapsulate(&out).unwrap().payload, [0x50]);
    }

    #[test]
    fn fragment_header() {
        // Last fragment, seq 5, fragment 2, size 1400: 2 | 5<<2 | 2<<10 | 350<<15.
        let header = FragmentHeader { kind: FragmentType::Last, seq_id: 5, frag_id: 2, max_frag_size: 1400 };
        assert_eq!(header.to_u32(), 0x00af_0816);
        assert_eq!(FragmentHeader::from_u32(0x00af_0816).unwrap(), header);
        assert_eq!(FragmentHeader::from_u32(0).unwrap(), FragmentHeader::WHOLE);
        assert_eq!(FragmentHeader::from_u32(0x4), Err(Error::Malformed));
        assert_eq!(FragmentHeader::from_u32(3), Err(Error::Unsupported));
        assert_eq!(FragmentHeader::parse(&[0, 0]), Err(Error::Truncated));
        // fragment.c optimal_fragment_size: 3000 octets at most 1300 go as 3 × 1000.
        let pieces = split_fragments(9, 1300, 3000).unwrap();
        assert_eq!(pieces.len(), 3);
        assert_eq!(
            pieces[0],
            (FragmentHeader { kind: FragmentType::NotLast, seq_id: 9, frag_id: 0, max_frag_size: 0 }, 0..1000)
        );
        assert_eq!(
            pieces[2],
            (FragmentHeader { kind: FragmentType::Last, seq_id: 9, frag_id: 2, max_frag_size: 1000 }, 2000..3000)
        );
        assert_eq!(split_fragments(0, 1300, 1300).unwrap(), vec![(FragmentHeader::WHOLE, 0..1300)]);
        assert_eq!(split_fragments(0, 100, 100 * 33), Err(Error::Malformed));
        // Whole packets carry the header inside the encryption.
        let channel = DataChannel { fragment: true, compress: Compress::LzoNo, ..seed002() };
        let mut out = Vec::new();
        channel.encapsulate(1, &[], b"ping", &mut out);
        assert_eq!(&out[24..], &[0, 0, 0, 0, 0xfa, b'p', b'i', b'n', b'g']);
        let opened = channel.decapsulate(&out).unwrap();
        assert_eq!((opened.fragment, opened.payload), (Some(FragmentHeader::WHOLE), b"ping".to_vec()));
        assert_eq!(channel.overhead(4), 24 + 4 + 1);
        // A fragment piece comes back still framed.
        let mut out = Vec::new();
        channel.encapsulate_fragment(2, &[], pieces[2].0, &[0xfa, 1, 2], &mut out);
        let opened = channel.decapsulate(&out).unwrap();
        assert_eq!((opened.fragment, opened.payload), (Some(pieces[2].0), vec![0xfa, 1, 2]));
    }

    #[test]
    fn tcp_framing() {
        let mut out = Vec::new();
        encapsulate_tcp(&SEED002_BYTES, &mut out);
        assert_eq!(&out[..2], &[0x00, 0x20]);
        assert_eq!(parse_tcp(&out).unwrap(), (&SEED002_BYTES[..], 34));
        assert_eq!(parse_tcp(&out[..20]), Err(Error::Truncated));
        assert_eq!(parse_tcp(&out[..1]), Err(Error::Truncated));
    }

    #[test]
    fn errors() {
        assert_eq!(Packet::new_checked(&[][..]).unwrap_err(), Error::Truncated);
        assert_eq!(Packet::new_checked(&[0x48, 0, 0][..]).unwrap_err(), Error::Truncated);
        assert_eq!(Repr::parse(&Packet::new_unchecked(&[0x00][..])), Err(Error::Unsupported));
        let channel = seed002();
        assert_eq!(channel.decapsulate(&SEED002_BYTES[..10]), Err(Error::Truncated));
        assert_eq!(channel.decapsulate(&[0x20, 0]), Err(Error::Unsupported));
        let mut bad = SEED002_BYTES;
        bad[31] ^= 1;
        assert_eq!(channel.decapsulate(&bad), Err(Error::Checksum));
        let cbc = DataChannel::new(Cipher::Aes256Cbc, Auth::Sha256);
        let mut out = Vec::new();
        cbc.encapsulate(1, &[7; 16], b"x", &mut out);
        assert_eq!(cbc.decapsulate(&out[..out.len() - 16]), Err(Error::Checksum));
        let gcm = DataChannel::new(Cipher::Aes128Gcm, Auth::None);
        assert_eq!(gcm.decapsulate(&[0x48, 0, 0, 0, 1, 2, 3]), Err(Error::Truncated));
    }

    fn channel_strategy() -> impl Strategy<Value = DataChannel> {
        let cipher = prop_oneof![
            Just(Cipher::None),
            Just(Cipher::BfCbc),
            Just(Cipher::Aes128Cbc),
            Just(Cipher::Aes256Cbc),
            Just(Cipher::Aes128Gcm),
            Just(Cipher::Aes256Gcm)
        ];
        let auth = prop_oneof![Just(Auth::None), Just(Auth::Sha1), Just(Auth::Sha256), Just(Auth::Sha512)];
        let compress =
            prop_oneof![Just(Compress::Off), Just(Compress::LzoNo), Just(Compress::Stub), Just(Compress::StubV2)];
        (
            cipher,
            auth,
            compress,
            any::<bool>(),
            any::<bool>(),
            proptest::option::of(0u32..0x0100_0000),
            0u8..8,
            any::<u8>(),
            any::<bool>(),
        )
            .prop_map(|(cipher, auth, compress, replay, fragment, peer, key_id, seed, static_key)| {
                DataChannel {
                    // A static key's AEAD layout is not modelled.
                    opcode: if static_key && !cipher.is_aead() {
                        DataOpcode::StaticKey
                    } else {
                        peer.map_or(DataOpcode::V1, |peer_id| DataOpcode::V2 { peer_id })
                    },
                    packet_id_time: u32::from(seed) << 8,
                    key_id,
                    replay,
                    compress,
                    fragment,
                    cipher_key: (0..cipher.key_len() as u8).map(|i| i ^ seed).collect(),
                    hmac_key: vec![seed; 20],
                    implicit_iv: [seed; 8],
                    ..DataChannel::new(cipher, auth)
                }
            })
    }

    proptest! {
        #[test]
        fn data_roundtrip(channel in channel_strategy(), packet_id in any::<u32>(), iv in any::<[u8; 16]>(), payload in proptest::collection::vec(any::<u8>(), 1..80)) {
            let mut out = Vec::new();
            channel.encapsulate(packet_id, &iv, &payload, &mut out);
            let escape = if channel.compress == Compress::StubV2 { channel.compress.overhead(&payload) } else { 0 };
            // The stub-v2 escape is in-band: it counts as payload, padding included.
            prop_assert_eq!(out.len(), payload.len() + escape + channel.overhead(payload.len() + escape));
            let opened = channel.decapsulate(&out).unwrap();
            prop_assert_eq!(&opened.payload, &payload);
            prop_assert_eq!(opened.header, channel.header());
            if channel.replay || channel.cipher.is_aead() {
                prop_assert_eq!(opened.packet_id, Some(packet_id));
            }
            // Any single flipped bit after the header is caught when something authenticates.
            if channel.cipher.is_aead() || channel.auth != Auth::None {
                let mut bad = out.clone();
                let at = out.len() - 1;
                bad[at] ^= 1;
                prop_assert_eq!(channel.decapsulate(&bad), Err(Error::Checksum));
            }
        }

        #[test]
        fn header_roundtrip(opcode in 1u8..12, key_id in 0u8..8, peer in 0u32..0x0100_0000) {
            let opcode = Opcode::from(opcode);
            let repr = Repr { opcode, key_id, peer_id: (opcode == Opcode::DataV2).then_some(peer) };
            let mut out = vec![0u8; repr.buffer_len(0)];
            repr.emit(&mut Packet::new_unchecked(&mut out[..]));
            let parsed = Repr::parse(&Packet::new_checked(&out[..]).unwrap()).unwrap();
            prop_assert_eq!(parsed, repr);
            let mut again = vec![0u8; parsed.buffer_len(0)];
            parsed.emit(&mut Packet::new_unchecked(&mut again[..]));
            prop_assert_eq!(again, out);
        }

        #[test]
        fn decapsulate_never_panics(channel in channel_strategy(), data in proptest::collection::vec(any::<u8>(), 0..96)) {
            let _ = channel.decapsulate(&data);
            let _ = FragmentHeader::parse(&data);
            let _ = parse_tcp(&data);
        }
    }
}
