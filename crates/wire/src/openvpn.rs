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
//!   (it is the nonce), so with GCM it is always sent. The 8-octet long form (id + time)
//!   of static-key mode is not modelled.
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

/// An OpenVPN packet as carried in a UDP datagram (or after the TCP length prefix).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Packet<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Packet<T> {
    pub const fn new_unchecked(buffer: T) -> Packet<T> {
        Packet { buffer }
    }

    pub fn new_checked(buffer: T) -> Result<Packet<T>> {
        let packet = Packet::new_unchecked(buffer);
        packet.check_len()?;
        Ok(packet)
    }

    /// The opcode octet, and the peer id for `P_DATA_V2`, must be present.
    pub fn check_len(&self) -> Result<()> {
        if self.buffer.as_ref().len() < self.header_len() {
            Err(Error::Truncated)
        } else {
            Ok(())
        }
    }

    pub fn into_inner(self) -> T {
        self.buffer
    }

    /// The opcode (top 5 bits of the first octet).
    pub fn opcode(&self) -> Opcode {
        Opcode::from(self.buffer.as_ref()[field::OPCODE_KEY_ID] >> OPCODE_SHIFT)
    }

    /// The key id (low 3 bits of the first octet).
    pub fn key_id(&self) -> u8 {
        self.buffer.as_ref()[field::OPCODE_KEY_ID] & KEY_ID_MASK
    }

    /// 4 for `P_DATA_V2` (opcode and peer id), else 1.
    pub fn header_len(&self) -> usize {
        match self.buffer.as_ref().first() {
            Some(b) if b >> OPCODE_SHIFT == u8::from(Opcode::DataV2) => 1 + PEER_ID_LEN,
            _ => 1,
        }
    }

    /// The peer id of a `P_DATA_V2` packet.
    pub fn peer_id(&self) -> Option<u32> {
        (self.opcode() == Opcode::DataV2).then(|| {
            let d = &self.buffer.as_ref()[field::PEER_ID];
            u32::from_be_bytes([0, d[0], d[1], d[2]])
        })
    }

    /// Everything after the header.
    pub fn payload(&self) -> &[u8] {
        &self.buffer.as_ref()[self.header_len()..]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    pub fn set_opcode(&mut self, value: Opcode) {
        let b = &mut self.buffer.as_mut()[field::OPCODE_KEY_ID];
        *b = (u8::from(value) << OPCODE_SHIFT) | (*b & KEY_ID_MASK);
    }

    pub fn set_key_id(&mut self, value: u8) {
        let b = &mut self.buffer.as_mut()[field::OPCODE_KEY_ID];
        *b = (*b & !KEY_ID_MASK) | (value & KEY_ID_MASK);
    }

    /// Writes the 24-bit peer id (the opcode must be `P_DATA_V2`).
    pub fn set_peer_id(&mut self, value: u32) {
        let bytes = value.to_be_bytes();
        self.buffer.as_mut()[field::PEER_ID].copy_from_slice(&bytes[1..4]);
    }

    pub fn payload_mut(&mut self) -> &mut [u8] {
        let at = self.header_len();
        &mut self.buffer.as_mut()[at..]
    }
}

/// The packet header: opcode, key id and, for `P_DATA_V2`, the peer id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Repr {
    pub opcode: Opcode,
    /// 0–7.
    pub key_id: u8,
    /// `Some` exactly for `P_DATA_V2`; 24 bits.
    pub peer_id: Option<u32>,
}

impl Repr {
    /// Opcode values beyond the table (0, 12–31) are `Unsupported`.
    pub fn parse<T: AsRef<[u8]> + ?Sized>(packet: &Packet<&T>) -> Result<Repr> {
        packet.check_len()?;
        if let Opcode::Unknown(_) = packet.opcode() {
            return Err(Error::Unsupported);
        }
        Ok(Repr { opcode: packet.opcode(), key_id: packet.key_id(), peer_id: packet.peer_id() })
    }

    pub fn header_len(&self) -> usize {
        if self.opcode == Opcode::DataV2 {
            1 + PEER_ID_LEN
        } else {
            1
        }
    }

    pub fn buffer_len(&self, payload_len: usize) -> usize {
        self.header_len() + payload_len
    }

    /// Writes the header; a `P_DATA_V2` without a peer id gets [`PEER_ID_UNDEF`].
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]> + ?Sized>(&self, packet: &mut Packet<&mut T>) {
        packet.buffer.as_mut()[field::OPCODE_KEY_ID] =
            (u8::from(self.opcode) << OPCODE_SHIFT) | (self.key_id & KEY_ID_MASK);
        if self.opcode == Opcode::DataV2 {
            packet.set_peer_id(self.peer_id.unwrap_or(PEER_ID_UNDEF));
        }
    }

    fn header_bytes(&self) -> Vec<u8> {
        let mut out = vec![0u8; self.header_len()];
        self.emit(&mut Packet::new_unchecked(&mut out[..]));
        out
    }
}

/// Appends `packet` to a TCP stream with its 16-bit length prefix (`proto.h`,
/// "packet length" of stream transports). Panics over 65,535 octets.
pub fn encapsulate_tcp(packet: &[u8], out: &mut Vec<u8>) {
    let len = u16::try_from(packet.len()).expect("OpenVPN packet over 65535 octets");
    out.extend_from_slice(&len.to_be_bytes());
    out.extend_from_slice(packet);
}

/// Reads one length-prefixed packet from the start of a TCP stream; returns the packet
/// and the octets consumed.
pub fn parse_tcp(stream: &[u8]) -> Result<(&[u8], usize)> {
    let len = match stream {
        [hi, lo, ..] => usize::from(u16::from_be_bytes([*hi, *lo])),
        _ => return Err(Error::Truncated),
    };
    let packet = stream.get(TCP_LENGTH_LEN..TCP_LENGTH_LEN + len).ok_or(Error::Truncated)?;
    Ok((packet, TCP_LENGTH_LEN + len))
}

/// The data-channel cipher (`--cipher`, or the one negotiated by NCP in 2.4+).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Cipher {
    /// `cipher none`: no encryption, no IV.
    None,
    /// `BF-CBC`, 128-bit key: OpenVPN's default before 2.5.
    BfCbc,
    Aes128Cbc,
    Aes256Cbc,
    Aes128Gcm,
    Aes256Gcm,
}

impl Cipher {
    pub fn key_len(self) -> usize {
        match self {
            Cipher::None => 0,
            Cipher::BfCbc | Cipher::Aes128Cbc | Cipher::Aes128Gcm => 16,
            Cipher::Aes256Cbc | Cipher::Aes256Gcm => 32,
        }
    }

    /// The block size, which is also the IV length, of the CBC ciphers; 0 otherwise.
    pub fn cbc_block_len(self) -> usize {
        match self {
            Cipher::BfCbc => 8,
            Cipher::Aes128Cbc | Cipher::Aes256Cbc => 16,
            _ => 0,
        }
    }

    pub fn is_cbc(self) -> bool {
        self.cbc_block_len() != 0
    }

    pub fn is_aead(self) -> bool {
        matches!(self, Cipher::Aes128Gcm | Cipher::Aes256Gcm)
    }
}

/// The data-channel HMAC digest (`--auth`); ignored with an AEAD cipher.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Auth {
    None,
    /// SHA1: OpenVPN's default `--auth`.
    Sha1,
    Sha256,
    Sha512,
}

impl Auth {
    /// The HMAC length on the wire.
    pub fn len(self) -> usize {
        match self {
            Auth::None => 0,
            Auth::Sha1 => 20,
            Auth::Sha256 => 32,
            Auth::Sha512 => 64,
        }
    }

    pub fn is_empty(self) -> bool {
        self == Auth::None
    }

    fn mac(self, key: &[u8], data: &[u8]) -> Vec<u8> {
        fn run<M: Mac + KeyInit>(key: &[u8], data: &[u8]) -> Vec<u8> {
            let mut mac = <M as KeyInit>::new_from_slice(key).expect("HMAC accepts keys of any length");
            mac.update(data);
            mac.finalize().into_bytes().to_vec()
        }
        match self {
            Auth::None => Vec::new(),
            Auth::Sha1 => run::<Hmac<sha1::Sha1>>(key, data),
            Auth::Sha256 => run::<Hmac<sha2::Sha256>>(key, data),
            Auth::Sha512 => run::<Hmac<sha2::Sha512>>(key, data),
        }
    }

    fn verify(self, key: &[u8], data: &[u8], tag: &[u8]) -> bool {
        fn run<M: Mac + KeyInit>(key: &[u8], data: &[u8], tag: &[u8]) -> bool {
            let mut mac = <M as KeyInit>::new_from_slice(key).expect("HMAC accepts keys of any length");
            mac.update(data);
            mac.verify_slice(tag).is_ok()
        }
        match self {
            Auth::None => true,
            Auth::Sha1 => run::<Hmac<sha1::Sha1>>(key, data, tag),
            Auth::Sha256 => run::<Hmac<sha2::Sha256>>(key, data, tag),
            Auth::Sha512 => run::<Hmac<sha2::Sha512>>(key, data, tag),
        }
    }
}

/// The compression framing (`comp.h`); no compression is performed, as OpenVPN 2.6
/// itself advises (`--allow-compression no`), but the framing octets are real.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Compress {
    /// No compression option: no framing.
    #[default]
    Off,
    /// `comp-lzo no`: prefix [`NO_COMPRESS_BYTE`].
    LzoNo,
    /// `compress` / `compress stub`: [`NO_COMPRESS_BYTE_SWAP`] replaces the first payload
    /// octet, which moves to the end.
    Stub,
    /// `compress stub-v2`: nothing, unless the payload starts with 0x50 (escaped 50 00).
    StubV2,
}

impl Compress {
    /// The framing octets added to `payload`.
    pub fn overhead(self, payload: &[u8]) -> usize {
        match self {
            Compress::Off => 0,
            Compress::LzoNo | Compress::Stub => COMPRESS_LEN,
            Compress::StubV2 => {
                if payload.first() == Some(&COMP_V2_INDICATOR) {
                    2
                } else {
                    0
                }
            }
        }
    }

    /// Appends `payload` framed.
    pub fn frame(self, payload: &[u8], out: &mut Vec<u8>) {
        match self {
            Compress::Off => out.extend_from_slice(payload),
            Compress::LzoNo => {
                out.push(NO_COMPRESS_BYTE);
                out.extend_from_slice(payload);
            }
            Compress::Stub => {
                out.push(NO_COMPRESS_BYTE_SWAP);
                if let Some((first, rest)) = payload.split_first() {
                    out.extend_from_slice(rest);
                    out.push(*first);
                }
            }
            Compress::StubV2 => {
                if payload.first() == Some(&COMP_V2_INDICATOR) {
                    out.extend_from_slice(&[COMP_V2_INDICATOR, COMP_V2_UNCOMPRESSED]);
                }
                out.extend_from_slice(payload);
            }
        }
    }

    /// Removes the framing; a packet actually compressed (LZO, LZ4) is `Unsupported`.
    pub fn unframe(self, data: &[u8]) -> Result<Vec<u8>> {
        match self {
            Compress::Off => Ok(data.to_vec()),
            Compress::LzoNo | Compress::Stub => {
                let (&marker, rest) = data.split_first().ok_or(Error::Truncated)?;
                match marker {
                    NO_COMPRESS_BYTE if self == Compress::LzoNo => Ok(rest.to_vec()),
                    NO_COMPRESS_BYTE_SWAP if self == Compress::Stub => {
                        let mut out = Vec::with_capacity(rest.len());
                        if let Some((last, init)) = rest.split_last() {
                            out.push(*last);
                            out.extend_from_slice(init);
                        }
                        Ok(out)
                    }
                    LZO_COMPRESS_BYTE | LZ4_COMPRESS_BYTE => Err(Error::Unsupported),
                    _ => Err(Error::Malformed),
                }
            }
            Compress::StubV2 => match data {
                [COMP_V2_INDICATOR, COMP_V2_UNCOMPRESSED, rest @ ..] => Ok(rest.to_vec()),
                [COMP_V2_INDICATOR, ..] => Err(Error::Unsupported),
                _ => Ok(data.to_vec()),
            },
        }
    }
}

crate::enum_with_unknown! {
    /// `fragment.h`: the fragment type, bits 0–1 of the fragment header.
    pub enum FragmentType(u8) {
        /// FRAG_WHOLE: not fragmented.
        Whole = 0,
        /// FRAG_YES_NOTLAST: a fragment, not the last.
        NotLast = 1,
        /// FRAG_YES_LAST: the last fragment; carries the maximum fragment size.
        Last = 2,
        /// FRAG_TEST: reserved for MTU tests, not implemented by OpenVPN.
        Test = 3,
    }
}

/// `fragment.h`: the 32-bit `--fragment` header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FragmentHeader {
    pub kind: FragmentType,
    /// FRAG_SEQ_ID: the datagram's sequence id, shared by its fragments (8 bits).
    pub seq_id: u8,
    /// FRAG_ID: this fragment's index, 0–31 (5 bits; MAX_FRAGS is 32).
    pub frag_id: u8,
    /// FRAG_SIZE: for `Last`, the maximum fragment size, a multiple of 4 below 65,536
    /// (sent divided by 4 in 14 bits); 0 otherwise.
    pub max_frag_size: u16,
}

/// `fragment.h` FRAG_* masks and shifts.
mod frag {
    pub const TYPE_MASK: u32 = 0x3;
    pub const SEQ_ID_MASK: u32 = 0xff;
    pub const SEQ_ID_SHIFT: u32 = 2;
    pub const ID_MASK: u32 = 0x1f;
    pub const ID_SHIFT: u32 = 10;
    pub const SIZE_MASK: u32 = 0x3fff;
    pub const SIZE_SHIFT: u32 = 15;
    pub const SIZE_ROUND_SHIFT: u32 = 2;
    /// MAX_FRAGS.
    pub const MAX_FRAGS: usize = 32;
}

impl FragmentHeader {
    /// FRAG_WHOLE with every other bit zero, as `fragment_outgoing` sends it.
    pub const WHOLE: FragmentHeader =
        FragmentHeader { kind: FragmentType::Whole, seq_id: 0, frag_id: 0, max_frag_size: 0 };

    /// Decodes the header from its 32-bit value; `fragment_incoming` rejects a whole
    /// packet with sequence or fragment bits ("spurious FRAG_WHOLE flags"), a size not a
    /// multiple of 4 cannot be sent, and FRAG_TEST is not implemented (`Unsupported`).
    pub fn from_u32(value: u32) -> Result<FragmentHeader> {
        let kind = FragmentType::from((value & frag::TYPE_MASK) as u8);
        let seq_id = ((value >> frag::SEQ_ID_SHIFT) & frag::SEQ_ID_MASK) as u8;
        let frag_id = ((value >> frag::ID_SHIFT) & frag::ID_MASK) as u8;
        let max_frag_size = match kind {
            FragmentType::Last => (((value >> frag::SIZE_SHIFT) & frag::SIZE_MASK) << frag::SIZE_ROUND_SHIFT) as u16,
            _ => 0,
        };
        match kind {
            FragmentType::Whole if seq_id != 0 || frag_id != 0 => Err(Error::Malformed),
            FragmentType::Test | FragmentType::Unknown(_) => Err(Error::Unsupported),
            _ => Ok(FragmentHeader { kind, seq_id, frag_id, max_frag_size }),
        }
    }

    /// Encodes the header as `fragment_prepend_flags` does.
    pub fn to_u32(self) -> u32 {
        let mut value = (u32::from(u8::from(self.kind)) & frag::TYPE_MASK)
            | ((u32::from(self.seq_id) & frag::SEQ_ID_MASK) << frag::SEQ_ID_SHIFT)
            | ((u32::from(self.frag_id) & frag::ID_MASK) << frag::ID_SHIFT);
        if self.kind == FragmentType::Last {
            value |= ((u32::from(self.max_frag_size) >> frag::SIZE_ROUND_SHIFT) & frag::SIZE_MASK) << frag::SIZE_SHIFT;
        }
        value
    }

    pub fn parse(data: &[u8]) -> Result<FragmentHeader> {
        match data {
            [a, b, c, d, ..] => FragmentHeader::from_u32(u32::from_be_bytes([*a, *b, *c, *d])),
            _ => Err(Error::Truncated),
        }
    }

    pub fn emit(&self, buf: &mut [u8]) {
        buf[..FRAGMENT_HEADER_LEN].copy_from_slice(&self.to_u32().to_be_bytes());
    }
}

/// Splits a datagram of `len` octets (already compression-framed) into `--fragment`
/// pieces no longer than `max_frag_size`, as `fragment_outgoing` does: one `Whole` piece
/// when it fits, else pieces of `optimal_fragment_size` (a multiple of 4 that evens out
/// the last piece), numbered from 0, the last carrying that size. Returns each piece's
/// header and byte range; `Malformed` when more than 32 pieces would be needed or
/// `max_frag_size` is below 4.
pub fn split_fragments(seq_id: u8, max_frag_size: usize, len: usize) -> Result<Vec<(FragmentHeader, Field)>> {
    if len <= max_frag_size {
        return Ok(vec![(FragmentHeader::WHOLE, 0..len)]);
    }
    let aligned = max_frag_size & !3;
    if aligned == 0 || aligned > usize::from(u16::MAX) {
        return Err(Error::Malformed);
    }
    // fragment.c optimal_fragment_size.
    let (div, rem) = (len / aligned, len % aligned);
    let size = if div > 0 && rem > 0 && rem < aligned * 3 / 4 {
        aligned.min((max_frag_size - (max_frag_size - rem) / (div + 1) + 3) & !3)
    } else {
        aligned
    };
    if len > size * frag::MAX_FRAGS {
        return Err(Error::Malformed);
    }
    let mut pieces = Vec::new();
    let mut at = 0;
    let mut frag_id = 0u8;
    while at < len {
        let end = (at + size).min(len);
        let last = end == len;
        let header = FragmentHeader {
            kind: if last { FragmentType::Last } else { FragmentType::NotLast },
            seq_id,
            frag_id,
            max_frag_size: if last { size as u16 } else { 0 },
        };
        pieces.push((header, at..end));
        at = end;
        frag_id += 1;
    }
    Ok(pieces)
}

/// Which data opcode a data channel sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DataOpcode {
    /// `P_DATA_V1`: one octet.
    V1,
    /// `P_DATA_V2` with the peer id the server assigned (24 bits).
    V2 { peer_id: u32 },
}

/// One direction of a data channel: its negotiated options and keys.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DataChannel {
    pub opcode: DataOpcode,
    /// The key id of the TLS session the keys came from (0–7).
    pub key_id: u8,
    pub cipher: Cipher,
    /// Ignored with GCM, which authenticates by itself.
    pub auth: Auth,
    /// Send the 4-octet packet id (`--replay`, OpenVPN's default). Always sent with GCM.
    pub replay: bool,
    pub compress: Compress,
    /// `--fragment`: each packet carries a 4-octet fragment header inside the encryption.
    pub fragment: bool,
    /// `cipher.key_len()` octets.
    pub cipher_key: Vec<u8>,
    /// Any length; OpenVPN uses the digest's length.
    pub hmac_key: Vec<u8>,
    /// GCM only: the implicit part of the nonce.
    pub implicit_iv: [u8; AEAD_IMPLICIT_IV_LEN],
}

/// A data packet opened by [`DataChannel::decapsulate`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Opened {
    pub header: Repr,
    /// Present with replay protection or GCM.
    pub packet_id: Option<u32>,
    /// Present with `--fragment`.
    pub fragment: Option<FragmentHeader>,
    /// The payload with compression framing removed (for a fragment: the piece, still
    /// framed, since the framing spans the whole datagram).
    pub payload: Vec<u8>,
}

impl DataChannel {
    /// A channel with OpenVPN's defaults around `cipher` and `auth`: `P_DATA_V2` with
    /// peer id 0, key id 0, replay protection on, no compression, no fragmentation, and
    /// zero keys of the right length (set real ones for real traffic).
    pub fn new(cipher: Cipher, auth: Auth) -> DataChannel {
        DataChannel {
            opcode: DataOpcode::V2 { peer_id: 0 },
            key_id: 0,
            cipher,
            auth,
            replay: true,
            compress: Compress::Off,
            fragment: false,
            cipher_key: vec![0; cipher.key_len()],
            hmac_key: vec![0; auth.len()],
            implicit_iv: [0; AEAD_IMPLICIT_IV_LEN],
        }
    }

    /// The packet header this channel sends.
    pub fn header(&self) -> Repr {
        match self.opcode {
            DataOpcode::V1 => Repr { opcode: Opcode::DataV1, key_id: self.key_id, peer_id: None },
            DataOpcode::V2 { peer_id } => {
                Repr { opcode: Opcode::DataV2, key_id: self.key_id, peer_id: Some(peer_id & PEER_ID_UNDEF) }
            }
        }
    }

    fn hmac_len(&self) -> usize {
        if self.cipher.is_aead() {
            0
        } else {
            self.auth.len()
        }
    }

    /// The IV length carried on the wire (CBC only).
    pub fn iv_len(&self) -> usize {
        self.cipher.cbc_block_len()
    }

    /// The named octets the data channel adds to a payload of `payload_len` octets,
    /// in wire order. The `compress stub-v2` escape (2 octets when the payload starts
    /// with 0x50) depends on the bytes and is not listed: count it as payload (CBC padding
    /// then covers it too), i.e. `overhead(len + Compress::StubV2.overhead(payload))`.
    pub fn overhead_fields(&self, payload_len: usize) -> Vec<(&'static str, usize)> {
        let mut fields = vec![("opcode/key id", 1)];
        if let DataOpcode::V2 { .. } = self.opcode {
            fields.push(("peer id", PEER_ID_LEN));
        }
        let compress = match self.compress {
            Compress::LzoNo | Compress::Stub => COMPRESS_LEN,
            Compress::Off | Compress::StubV2 => 0,
        };
        let fragment = if self.fragment { FRAGMENT_HEADER_LEN } else { 0 };
        if self.cipher.is_aead() {
            fields.push(("packet id", PACKET_ID_LEN));
            fields.push(("tag", AEAD_TAG_LEN));
        } else {
            if self.hmac_len() > 0 {
                fields.push(("hmac", self.hmac_len()));
            }
            if self.cipher.is_cbc() {
                fields.push(("iv", self.iv_len()));
            }
            if self.replay {
                fields.push(("packet id", PACKET_ID_LEN));
            }
        }
        if fragment > 0 {
            fields.push(("fragment header", fragment));
        }
        if compress > 0 {
            fields.push(("compress", compress));
        }
        if self.cipher.is_cbc() {
            let block = self.cipher.cbc_block_len();
            let plain = if self.replay { PACKET_ID_LEN } else { 0 } + fragment + compress + payload_len;
            fields.push(("padding", block - plain % block));
        }
        fields
    }

    /// The total octets added to a payload of `payload_len` octets.
    pub fn overhead(&self, payload_len: usize) -> usize {
        self.overhead_fields(payload_len).iter().map(|f| f.1).sum()
    }

    /// Frames `payload` (compression framing, then a whole-packet fragment header with
    /// `--fragment`) and seals it with [`DataChannel::seal`].
    pub fn encapsulate(&self, packet_id: u32, iv: &[u8], payload: &[u8], out: &mut Vec<u8>) {
        let mut plain = Vec::with_capacity(payload.len() + 8);
        if self.fragment {
            plain.extend_from_slice(&FragmentHeader::WHOLE.to_u32().to_be_bytes());
        }
        self.compress.frame(payload, &mut plain);
        self.seal(packet_id, iv, &plain, out);
    }

    /// Sends one `--fragment` piece: `piece` is a range of the compression-framed
    /// datagram as [`split_fragments`] gives it.
    pub fn encapsulate_fragment(
        &self,
        packet_id: u32,
        iv: &[u8],
        header: FragmentHeader,
        piece: &[u8],
        out: &mut Vec<u8>,
    ) {
        let mut plain = Vec::with_capacity(piece.len() + FRAGMENT_HEADER_LEN);
        plain.extend_from_slice(&header.to_u32().to_be_bytes());
        plain.extend_from_slice(piece);
        self.seal(packet_id, iv, &plain, out);
    }

    /// Appends the data packet for `plain` (already framed): header, then the layout of
    /// the cipher (see the module doc), with a real HMAC and real encryption.
    /// `packet_id` is used when sent; `iv` is the random CBC IV (its first `iv_len()`
    /// octets; ignored otherwise), which the caller draws since this crate has no RNG.
    ///
    /// Panics if `cipher_key` or `iv` have the wrong length: a configuration bug.
    pub fn seal(&self, packet_id: u32, iv: &[u8], plain: &[u8], out: &mut Vec<u8>) {
        let header = self.header().header_bytes();
        let pid = packet_id.to_be_bytes();
        let start = out.len();
        out.extend_from_slice(&header);
        if self.cipher.is_aead() {
            // [op][pid][tag][ciphertext]; AD = (V2 header) + pid.
            let mut ad = Vec::with_capacity(8);
            if let DataOpcode::V2 { .. } = self.opcode {
                ad.extend_from_slice(&header);
            }
            ad.extend_from_slice(&pid);
            let mut nonce = [0u8; 12];
            nonce[..4].copy_from_slice(&pid);
            nonce[4..].copy_from_slice(&self.implicit_iv);
            let mut buf = plain.to_vec();
            let tag = match self.cipher {
                Cipher::Aes128Gcm => gcm_seal::<aes_gcm::Aes128Gcm>(&self.cipher_key, &nonce, &ad, &mut buf),
                _ => gcm_seal::<aes_gcm::Aes256Gcm>(&self.cipher_key, &nonce, &ad, &mut buf),
            };
            out.extend_from_slice(&pid);
            out.extend_from_slice(&tag);
            out.extend_from_slice(&buf);
            return;
        }
        // Reserve the HMAC, then what it covers.
        let mac_at = out.len();
        out.resize(mac_at + self.hmac_len(), 0);
        let covered_at = out.len();
        let mut inner = Vec::with_capacity(plain.len() + PACKET_ID_LEN);
        if self.replay {
            inner.extend_from_slice(&pid);
        }
        inner.extend_from_slice(plain);
        if self.cipher.is_cbc() {
            let iv = &iv[..self.iv_len()];
            out.extend_from_slice(iv);
            let ct = cbc_encrypt(self.cipher, &self.cipher_key, iv, &inner);
            out.extend_from_slice(&ct);
        } else {
            out.extend_from_slice(&inner);
        }
        if self.hmac_len() > 0 {
            let mac = self.auth.mac(&self.hmac_key, &out[covered_at..]);
            out[mac_at..covered_at].copy_from_slice(&mac);
        }
        debug_assert!(out.len() > start);
    }

    /// Opens a data packet: checks the opcode matches the channel, verifies the HMAC or
    /// GCM tag (`Checksum`), decrypts, and removes packet id, fragment header and
    /// compression framing. A short packet is `Truncated`, bad CBC padding `Checksum`.
    pub fn decapsulate(&self, packet: &[u8]) -> Result<Opened> {
        let view = Packet::new_checked(packet)?;
        let header = Repr::parse(&view)?;
        let expected = self.header();
        if header.opcode != expected.opcode {
            return Err(Error::Unsupported);
        }
        let header_len = header.header_len();
        let body = &packet[header_len..];
        let (packet_id, plain) = if self.cipher.is_aead() {
            if body.len() < PACKET_ID_LEN + AEAD_TAG_LEN {
                return Err(Error::Truncated);
            }
            let pid = &body[..PACKET_ID_LEN];
            let tag = &body[PACKET_ID_LEN..PACKET_ID_LEN + AEAD_TAG_LEN];
            let mut buf = body[PACKET_ID_LEN + AEAD_TAG_LEN..].to_vec();
            let mut ad = Vec::with_capacity(8);
            if header.opcode == Opcode::DataV2 {
                ad.extend_from_slice(&packet[..header_len]);
            }
            ad.extend_from_slice(pid);
            let mut nonce = [0u8; 12];
            nonce[..4].copy_from_slice(pid);
            nonce[4..].copy_from_slice(&self.implicit_iv);
            let ok = match self.cipher {
                Cipher::Aes128Gcm => gcm_open::<aes_gcm::Aes128Gcm>(&self.cipher_key, &nonce, &ad, &mut buf, tag),
                _ => gcm_open::<aes_gcm::Aes256Gcm>(&self.cipher_key, &nonce, &ad, &mut buf, tag),
            };
            if !ok {
                return Err(Error::Checksum);
            }
            (Some(u32::from_be_bytes([pid[0], pid[1], pid[2], pid[3]])), buf)
        } else {
            let mac_len = self.hmac_len();
            if body.len() < mac_len {
                return Err(Error::Truncated);
            }
            let (mac, covered) = body.split_at(mac_len);
            if !self.auth.verify(&self.hmac_key, covered, mac) {
                return Err(Error::Checksum);
            }
            let inner = if self.cipher.is_cbc() {
                let iv_len = self.iv_len();
                if covered.len() < iv_len + self.cipher.cbc_block_len() {
                    return Err(Error::Truncated);
                }
                let (iv, ct) = covered.split_at(iv_len);
                if ct.len() % self.cipher.cbc_block_len() != 0 {
                    return Err(Error::Malformed);
                }
                cbc_decrypt(self.cipher, &self.cipher_key, iv, ct).ok_or(Error::Checksum)?
            } else {
                covered.to_vec()
            };
            if self.replay {
                if inner.len() < PACKET_ID_LEN {
                    return Err(Error::Truncated);
                }
                let pid = u32::from_be_bytes([inner[0], inner[1], inner[2], inner[3]]);
                (Some(pid), inner[PACKET_ID_LEN..].to_vec())
            } else {
                (None, inner)
            }
        };
        let (fragment, framed) = if self.fragment {
            let header = FragmentHeader::parse(&plain)?;
            (Some(header), &plain[FRAGMENT_HEADER_LEN..])
        } else {
            (None, &plain[..])
        };
        let payload = match fragment {
            Some(FragmentHeader { kind: FragmentType::NotLast | FragmentType::Last, .. }) => framed.to_vec(),
            _ => self.compress.unframe(framed)?,
        };
        Ok(Opened { header, packet_id, fragment, payload })
    }
}

fn gcm_seal<C: AeadInOut + KeyInit>(key: &[u8], nonce: &[u8; 12], ad: &[u8], buf: &mut [u8]) -> Vec<u8> {
    let cipher = <C as KeyInit>::new_from_slice(key).expect("GCM key of the cipher's length");
    let nonce = aes_gcm::aead::Nonce::<C>::try_from(&nonce[..]).expect("12-octet GCM nonce");
    let tag = cipher.encrypt_inout_detached(&nonce, ad, buf.into()).expect("GCM plaintext within limits");
    tag.to_vec()
}

fn gcm_open<C: AeadInOut + KeyInit + AeadCore>(
    key: &[u8],
    nonce: &[u8; 12],
    ad: &[u8],
    buf: &mut [u8],
    tag: &[u8],
) -> bool {
    let cipher = <C as KeyInit>::new_from_slice(key).expect("GCM key of the cipher's length");
    let nonce = aes_gcm::aead::Nonce::<C>::try_from(&nonce[..]).expect("12-octet GCM nonce");
    let Ok(tag) = aes_gcm::aead::Tag::<C>::try_from(tag) else {
        return false;
    };
    cipher.decrypt_inout_detached(&nonce, ad, buf.into(), &tag).is_ok()
}

fn cbc_encrypt(cipher: Cipher, key: &[u8], iv: &[u8], plain: &[u8]) -> Vec<u8> {
    const KEY: &str = "CBC key and IV of the cipher's lengths";
    match cipher {
        Cipher::BfCbc => cbc::Encryptor::<blowfish::Blowfish>::new_from_slices(key, iv)
            .expect(KEY)
            .encrypt_padded_vec::<Pkcs7>(plain),
        Cipher::Aes128Cbc => {
            cbc::Encryptor::<aes::Aes128>::new_from_slices(key, iv).expect(KEY).encrypt_padded_vec::<Pkcs7>(plain)
        }
        Cipher::Aes256Cbc => {
            cbc::Encryptor::<aes::Aes256>::new_from_slices(key, iv).expect(KEY).encrypt_padded_vec::<Pkcs7>(plain)
        }
        _ => unreachable!("cbc_encrypt with a non-CBC cipher"),
    }
}

fn cbc_decrypt(cipher: Cipher, key: &[u8], iv: &[u8], ct: &[u8]) -> Option<Vec<u8>> {
    const KEY: &str = "CBC key and IV of the cipher's lengths";
    match cipher {
        Cipher::BfCbc => cbc::Decryptor::<blowfish::Blowfish>::new_from_slices(key, iv)
            .expect(KEY)
            .decrypt_padded_vec::<Pkcs7>(ct)
            .ok(),
        Cipher::Aes128Cbc => {
            cbc::Decryptor::<aes::Aes128>::new_from_slices(key, iv).expect(KEY).decrypt_padded_vec::<Pkcs7>(ct).ok()
        }
        Cipher::Aes256Cbc => {
            cbc::Decryptor::<aes::Aes256>::new_from_slices(key, iv).expect(KEY).decrypt_padded_vec::<Pkcs7>(ct).ok()
        }
        _ => None,
    }
}

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
        )
            .prop_map(|(cipher, auth, compress, replay, fragment, peer, key_id, seed)| DataChannel {
                opcode: peer.map_or(DataOpcode::V1, |peer_id| DataOpcode::V2 { peer_id }),
                key_id,
                replay,
                compress,
                fragment,
                cipher_key: (0..cipher.key_len() as u8).map(|i| i ^ seed).collect(),
                hmac_key: vec![seed; 20],
                implicit_iv: [seed; 8],
                ..DataChannel::new(cipher, auth)
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
