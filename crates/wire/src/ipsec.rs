//! IPsec algorithms and security associations, shared by [`crate::esp`] and [`crate::ah`].
//!
//! Standards a reader must know:
//!
//! * RFC 4301, Security Architecture for IP: the security association (§4.1), transport
//!   and tunnel modes (§4.1), the outer header of tunnel mode (§5.1.2.1).
//! * RFC 4303, ESP §2.4 (padding and alignment) and §3.3.3 (sequence numbers);
//!   RFC 4302, AH §2.6 and §3.3.3 (ICV).
//! * Encryption: RFC 2410 (NULL), RFC 2451 (3DES-CBC: 8-byte block and IV, 24-byte key),
//!   RFC 3602 (AES-CBC: 16-byte block and IV, 16/24/32-byte key), RFC 4106 (AES-GCM:
//!   8-byte explicit IV, 16-byte ICV, key material = AES key then a 4-byte salt).
//! * Integrity: RFC 2403 (HMAC-MD5-96), RFC 2404 (HMAC-SHA1-96), RFC 4868
//!   (HMAC-SHA-256-128), all HMAC (RFC 2104) truncated to the leftmost bits.
//!
//! Every cipher and hash is a RustCrypto crate; nothing cryptographic is written here.
//! Extended (64-bit) sequence numbers (RFC 4303 §2.2.1) are not modelled: the SA keeps
//! the 32-bit sequence number only.

use core::fmt;
use core::str::FromStr;

use aes_gcm::aead::{AeadInOut, KeyInit as AeadKeyInit};
use cbc::cipher::array::Array;
use cbc::cipher::{BlockCipherDecrypt, BlockCipherEncrypt, BlockModeDecrypt, BlockModeEncrypt, KeyInit, KeyIvInit};
use hmac::{Hmac, Mac};

use crate::{Error, Result};

/// Length of the AES key size choices, in bits (FIPS 197 §5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum AesKeySize {
    Aes128,
    Aes192,
    Aes256,
}

impl AesKeySize {
    /// The AES key length in bytes.
    pub const fn key_len(self) -> usize {
        match self {
            AesKeySize::Aes128 => 16,
            AesKeySize::Aes192 => 24,
            AesKeySize::Aes256 => 32,
        }
    }

    /// The AES key length in bits.
    pub const fn bits(self) -> usize {
        self.key_len() * 8
    }
}

/// An ESP encryption algorithm (the IKEv2 "ENCR" transforms ESP uses).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Cipher {
    /// RFC 2410: no confidentiality; block size 1, no IV.
    Null,
    /// RFC 2451: triple DES (EDE, three keys) in CBC mode; 8-byte block and IV, 24-byte key.
    TripleDesCbc,
    /// RFC 3602: AES in CBC mode; 16-byte block and IV.
    AesCbc(AesKeySize),
    /// RFC 4106: AES-GCM with an 8-byte explicit IV and a 16-byte ICV; the key material
    /// is the AES key followed by a 4-byte salt (§8.1).
    AesGcm(AesKeySize),
}

/// RFC 4106 §8.1: the salt that follows the AES key in the GCM key material.
pub const GCM_SALT_LEN: usize = 4;
/// RFC 4106 §3.1: the explicit IV carried in each ESP packet.
pub const GCM_IV_LEN: usize = 8;
/// RFC 4106 §6: the ICV length this crate uses (the 16-byte variant, a MUST).
pub const GCM_ICV_LEN: usize = 16;

impl Cipher {
    /// Every cipher the CLI can name, in the order it lists them.
    pub const ALL: [Cipher; 7] = [
        Cipher::Null,
        Cipher::TripleDesCbc,
        Cipher::AesCbc(AesKeySize::Aes128),
        Cipher::AesCbc(AesKeySize::Aes192),
        Cipher::AesCbc(AesKeySize::Aes256),
        Cipher::AesGcm(AesKeySize::Aes128),
        Cipher::AesGcm(AesKeySize::Aes256),
    ];

    /// The block size the plaintext is padded to: RFC 2410 §2 (1 for NULL), RFC 2451 §2.3
    /// (8), RFC 3602 §2.4 (16), RFC 4106 §3.2 (1: GCM is a counter mode, only the 4-byte
    /// alignment of RFC 4303 §2.4 applies).
    pub const fn block_size(self) -> usize {
        match self {
            Cipher::Null | Cipher::AesGcm(_) => 1,
            Cipher::TripleDesCbc => 8,
            Cipher::AesCbc(_) => 16,
        }
    }

    /// The IV carried in each packet: RFC 2410 §2 (none), RFC 2451 §3 (8), RFC 3602 §3
    /// (16), RFC 4106 §3.1 (8).
    pub const fn iv_len(self) -> usize {
        match self {
            Cipher::Null => 0,
            Cipher::TripleDesCbc => 8,
            Cipher::AesCbc(_) => 16,
            Cipher::AesGcm(_) => GCM_IV_LEN,
        }
    }

    /// The key material length: RFC 2451 §2.3 (24), RFC 3602 §2.1 (16/24/32), RFC 4106
    /// §8.1 (AES key + 4 bytes of salt).
    pub const fn key_len(self) -> usize {
        match self {
            Cipher::Null => 0,
            Cipher::TripleDesCbc => 24,
            Cipher::AesCbc(size) => size.key_len(),
            Cipher::AesGcm(size) => size.key_len() + GCM_SALT_LEN,
        }
    }

    /// The ICV a combined-mode cipher appends itself (RFC 4106 §6: 16); 0 otherwise.
    pub const fn icv_len(self) -> usize {
        match self {
            Cipher::AesGcm(_) => GCM_ICV_LEN,
            _ => 0,
        }
    }

    /// Whether the cipher provides integrity itself (RFC 4303 §3.2.3, combined mode).
    pub const fn is_aead(self) -> bool {
        matches!(self, Cipher::AesGcm(_))
    }

    /// The name used by the CLI and by [`FromStr`].
    pub const fn name(self) -> &'static str {
        match self {
            Cipher::Null => "null",
            Cipher::TripleDesCbc => "3des-cbc",
            Cipher::AesCbc(AesKeySize::Aes128) => "aes-128-cbc",
            Cipher::AesCbc(AesKeySize::Aes192) => "aes-192-cbc",
            Cipher::AesCbc(AesKeySize::Aes256) => "aes-256-cbc",
            Cipher::AesGcm(AesKeySize::Aes128) => "aes-128-gcm",
            Cipher::AesGcm(AesKeySize::Aes192) => "aes-192-gcm",
            Cipher::AesGcm(AesKeySize::Aes256) => "aes-256-gcm",
        }
    }

    /// Encrypts `buf` in place. For CBC `buf` must be a whole number of blocks (the ESP
    /// padding sees to it); for GCM the 16-byte tag is written to `tag` and `aad` is
    /// authenticated (RFC 4106 §5: SPI and sequence number). `tag` is ignored otherwise.
    ///
    /// Errors: `Malformed` on a key or IV of the wrong length, or a partial CBC block.
    pub fn encrypt(self, key: &[u8], iv: &[u8], aad: &[u8], buf: &mut [u8], tag: &mut [u8]) -> Result<()> {
        if key.len() != self.key_len() || iv.len() != self.iv_len() {
            return Err(Error::Malformed);
        }
        match self {
            Cipher::Null => Ok(()),
            Cipher::TripleDesCbc => cbc_encrypt::<des::TdesEde3>(key, iv, buf),
            Cipher::AesCbc(AesKeySize::Aes128) => cbc_encrypt::<aes::Aes128>(key, iv, buf),
            Cipher::AesCbc(AesKeySize::Aes192) => cbc_encrypt::<aes::Aes192>(key, iv, buf),
            Cipher::AesCbc(AesKeySize::Aes256) => cbc_encrypt::<aes::Aes256>(key, iv, buf),
            Cipher::AesGcm(size) => {
                if tag.len() != GCM_ICV_LEN {
                    return Err(Error::Malformed);
                }
                let (aes_key, salt) = key.split_at(size.key_len());
                let nonce = gcm_nonce(salt, iv);
                let out = match size {
                    AesKeySize::Aes128 => gcm_seal::<aes_gcm::Aes128Gcm>(aes_key, &nonce, aad, buf)?,
                    AesKeySize::Aes192 => {
                        gcm_seal::<aes_gcm::AesGcm<aes::Aes192, aes_gcm::aead::consts::U12>>(aes_key, &nonce, aad, buf)?
                    }
                    AesKeySize::Aes256 => gcm_seal::<aes_gcm::Aes256Gcm>(aes_key, &nonce, aad, buf)?,
                };
                tag.copy_from_slice(&out);
                Ok(())
            }
        }
    }

    /// Decrypts `buf` in place, the inverse of [`Cipher::encrypt`].
    ///
    /// Errors: `Malformed` on a wrong key or IV length or a partial CBC block;
    /// `Checksum` when a GCM tag does not verify (then `buf` is left encrypted).
    pub fn decrypt(self, key: &[u8], iv: &[u8], aad: &[u8], buf: &mut [u8], tag: &[u8]) -> Result<()> {
        if key.len() != self.key_len() || iv.len() != self.iv_len() {
            return Err(Error::Malformed);
        }
        match self {
            Cipher::Null => Ok(()),
            Cipher::TripleDesCbc => cbc_decrypt::<des::TdesEde3>(key, iv, buf),
            Cipher::AesCbc(AesKeySize::Aes128) => cbc_decrypt::<aes::Aes128>(key, iv, buf),
            Cipher::AesCbc(AesKeySize::Aes192) => cbc_decrypt::<aes::Aes192>(key, iv, buf),
            Cipher::AesCbc(AesKeySize::Aes256) => cbc_decrypt::<aes::Aes256>(key, iv, buf),
            Cipher::AesGcm(size) => {
                let (aes_key, salt) = key.split_at(size.key_len());
                let nonce = gcm_nonce(salt, iv);
                match size {
                    AesKeySize::Aes128 => gcm_open::<aes_gcm::Aes128Gcm>(aes_key, &nonce, aad, buf, tag),
                    AesKeySize::Aes192 => gcm_open::<aes_gcm::AesGcm<aes::Aes192, aes_gcm::aead::consts::U12>>(
                        aes_key, &nonce, aad, buf, tag,
                    ),
                    AesKeySize::Aes256 => gcm_open::<aes_gcm::Aes256Gcm>(aes_key, &nonce, aad, buf, tag),
                }
            }
        }
    }
}

/// RFC 4106 §4: the 12-byte GCM nonce is the 4-byte salt then the 8-byte explicit IV.
fn gcm_nonce(salt: &[u8], iv: &[u8]) -> [u8; 12] {
    let mut nonce = [0u8; 12];
    nonce[..GCM_SALT_LEN].copy_from_slice(salt);
    nonce[GCM_SALT_LEN..].copy_from_slice(iv);
    nonce
}

fn cbc_encrypt<C: BlockCipherEncrypt + KeyInit>(key: &[u8], iv: &[u8], buf: &mut [u8]) -> Result<()> {
    let mut enc = cbc::Encryptor::<C>::new_from_slices(key, iv).map_err(|_| Error::Malformed)?;
    let (blocks, rest) = Array::slice_as_chunks_mut(buf);
    if !rest.is_empty() {
        return Err(Error::Malformed);
    }
    enc.encrypt_blocks(blocks);
    Ok(())
}

fn cbc_decrypt<C: BlockCipherDecrypt + KeyInit>(key: &[u8], iv: &[u8], buf: &mut [u8]) -> Result<()> {
    let mut dec = cbc::Decryptor::<C>::new_from_slices(key, iv).map_err(|_| Error::Malformed)?;
    let (blocks, rest) = Array::slice_as_chunks_mut(buf);
    if !rest.is_empty() {
        return Err(Error::Malformed);
    }
    dec.decrypt_blocks(blocks);
    Ok(())
}

fn gcm_seal<A: AeadInOut + AeadKeyInit>(key: &[u8], nonce: &[u8; 12], aad: &[u8], buf: &mut [u8]) -> Result<Vec<u8>> {
    let aead = A::new_from_slice(key).map_err(|_| Error::Malformed)?;
    let nonce = aes_gcm::aead::Nonce::<A>::try_from(&nonce[..]).map_err(|_| Error::Malformed)?;
    let tag = aead.encrypt_inout_detached(&nonce, aad, buf.into()).map_err(|_| Error::Malformed)?;
    Ok(tag.to_vec())
}

fn gcm_open<A: AeadInOut + AeadKeyInit>(
    key: &[u8],
    nonce: &[u8; 12],
    aad: &[u8],
    buf: &mut [u8],
    tag: &[u8],
) -> Result<()> {
    let aead = A::new_from_slice(key).map_err(|_| Error::Malformed)?;
    let nonce = aes_gcm::aead::Nonce::<A>::try_from(&nonce[..]).map_err(|_| Error::Malformed)?;
    let tag = aes_gcm::aead::Tag::<A>::try_from(tag).map_err(|_| Error::Malformed)?;
    aead.decrypt_inout_detached(&nonce, aad, buf.into(), &tag).map_err(|_| Error::Checksum)
}

/// An integrity algorithm for ESP (RFC 4303 §3.2) and AH (RFC 4302 §3.3.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Auth {
    /// No separate integrity: ESP with a combined-mode cipher, or confidentiality only
    /// (RFC 4303 §3.2; AH must not use it).
    None,
    /// RFC 2403: HMAC-MD5 truncated to 96 bits; 16-byte key.
    HmacMd5_96,
    /// RFC 2404: HMAC-SHA-1 truncated to 96 bits; 20-byte key.
    HmacSha1_96,
    /// RFC 4868 §2.1: HMAC-SHA-256 truncated to 128 bits; 32-byte key.
    HmacSha256_128,
}

impl Auth {
    /// Every integrity algorithm the CLI can name.
    pub const ALL: [Auth; 4] = [Auth::None, Auth::HmacMd5_96, Auth::HmacSha1_96, Auth::HmacSha256_128];

    /// The key length: RFC 2403 §3 (16), RFC 2404 §3 (20), RFC 4868 §2.1.1 (32).
    pub const fn key_len(self) -> usize {
        match self {
            Auth::None => 0,
            Auth::HmacMd5_96 => 16,
            Auth::HmacSha1_96 => 20,
            Auth::HmacSha256_128 => 32,
        }
    }

    /// The truncated ICV length: RFC 2403 §3 and RFC 2404 §3 (12), RFC 4868 §2.1.2 (16).
    pub const fn icv_len(self) -> usize {
        match self {
            Auth::None => 0,
            Auth::HmacMd5_96 | Auth::HmacSha1_96 => 12,
            Auth::HmacSha256_128 => 16,
        }
    }

    /// The name used by the CLI and by [`FromStr`].
    pub const fn name(self) -> &'static str {
        match self {
            Auth::None => "none",
            Auth::HmacMd5_96 => "hmac-md5-96",
            Auth::HmacSha1_96 => "hmac-sha1-96",
            Auth::HmacSha256_128 => "hmac-sha256-128",
        }
    }

    /// Computes the ICV over the concatenation of `parts` with `key` and writes it to
    /// `icv`, which must be `icv_len()` bytes long (a caller bug otherwise: panics).
    /// HMAC accepts any key length (RFC 2104 §3), so this never fails.
    pub fn compute(self, key: &[u8], parts: &[&[u8]], icv: &mut [u8]) {
        assert_eq!(icv.len(), self.icv_len(), "ICV buffer of the wrong length");
        match self {
            Auth::None => {}
            Auth::HmacMd5_96 => icv.copy_from_slice(&hmac_full::<Hmac<md5::Md5>>(key, parts)[..12]),
            Auth::HmacSha1_96 => icv.copy_from_slice(&hmac_full::<Hmac<sha1::Sha1>>(key, parts)[..12]),
            Auth::HmacSha256_128 => icv.copy_from_slice(&hmac_full::<Hmac<sha2::Sha256>>(key, parts)[..16]),
        }
    }

    /// Checks `icv` against the ICV of `parts`, in constant time (RFC 4303 §3.4.4.1).
    ///
    /// Errors: `Checksum` on a mismatch or an ICV of the wrong length.
    pub fn verify(self, key: &[u8], parts: &[&[u8]], icv: &[u8]) -> Result<()> {
        if icv.len() != self.icv_len() {
            return Err(Error::Checksum);
        }
        let ok = match self {
            Auth::None => true,
            Auth::HmacMd5_96 => hmac_verify::<Hmac<md5::Md5>>(key, parts, icv),
            Auth::HmacSha1_96 => hmac_verify::<Hmac<sha1::Sha1>>(key, parts, icv),
            Auth::HmacSha256_128 => hmac_verify::<Hmac<sha2::Sha256>>(key, parts, icv),
        };
        if ok {
            Ok(())
        } else {
            Err(Error::Checksum)
        }
    }
}

fn hmac_keyed<M: Mac + KeyInit>(key: &[u8], parts: &[&[u8]]) -> M {
    // HMAC takes keys of any length (RFC 2104 §3): new_from_slice cannot fail for it.
    let mut mac = <M as KeyInit>::new_from_slice(key).expect("HMAC accepts any key length");
    for part in parts {
        mac.update(part);
    }
    mac
}

fn hmac_full<M: Mac + KeyInit>(key: &[u8], parts: &[&[u8]]) -> Vec<u8> {
    hmac_keyed::<M>(key, parts).finalize().into_bytes().to_vec()
}

fn hmac_verify<M: Mac + KeyInit>(key: &[u8], parts: &[&[u8]], icv: &[u8]) -> bool {
    hmac_keyed::<M>(key, parts).verify_truncated_left(icv).is_ok()
}

/// The error of parsing an algorithm or mode name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseNameError {
    /// What was being parsed: "cipher", "auth" or "mode".
    pub what: &'static str,
    /// The name that was not recognised.
    pub name: String,
    /// The names that would have been accepted.
    pub expected: Vec<&'static str>,
}

impl fmt::Display for ParseNameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unknown {} {:?}; expected one of: {}", self.what, self.name, self.expected.join(", "))
    }
}

impl std::error::Error for ParseNameError {}

impl fmt::Display for Cipher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Cipher {
    type Err = ParseNameError;

    fn from_str(s: &str) -> core::result::Result<Self, Self::Err> {
        let all = [
            Cipher::Null,
            Cipher::TripleDesCbc,
            Cipher::AesCbc(AesKeySize::Aes128),
            Cipher::AesCbc(AesKeySize::Aes192),
            Cipher::AesCbc(AesKeySize::Aes256),
            Cipher::AesGcm(AesKeySize::Aes128),
            Cipher::AesGcm(AesKeySize::Aes192),
            Cipher::AesGcm(AesKeySize::Aes256),
        ];
        let lower = s.trim().to_ascii_lowercase();
        all.into_iter().find(|c| c.name() == lower).ok_or_else(|| ParseNameError {
            what: "cipher",
            name: s.to_owned(),
            expected: Cipher::ALL.iter().map(|c| c.name()).collect(),
        })
    }
}

impl fmt::Display for Auth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Auth {
    type Err = ParseNameError;

    fn from_str(s: &str) -> core::result::Result<Self, Self::Err> {
        let lower = s.trim().to_ascii_lowercase();
        Auth::ALL.into_iter().find(|a| a.name() == lower).ok_or_else(|| ParseNameError {
            what: "auth",
            name: s.to_owned(),
            expected: Auth::ALL.iter().map(|a| a.name()).collect(),
        })
    }
}

/// RFC 4301 §4.1: how the protected packet is carried.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Mode {
    /// The IPsec header follows the original IP header; protects the upper-layer payload.
    #[default]
    Transport,
    /// The whole original IP packet is protected and a new outer IP header is added.
    Tunnel,
}

impl Mode {
    pub const fn name(self) -> &'static str {
        match self {
            Mode::Transport => "transport",
            Mode::Tunnel => "tunnel",
        }
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Mode {
    type Err = ParseNameError;

    fn from_str(s: &str) -> core::result::Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "transport" => Ok(Mode::Transport),
            "tunnel" => Ok(Mode::Tunnel),
            _ => Err(ParseNameError { what: "mode", name: s.to_owned(), expected: vec!["transport", "tunnel"] }),
        }
    }
}

/// One direction of an IPsec security association (RFC 4301 §4.1, §4.4.2.1): what the
/// sender and the receiver must agree on to build and check a packet.
///
/// Invariants checked by [`SecurityAssociation::new`] (and again, as errors, by every
/// function that uses the keys): `enc_key.len() == cipher.key_len()`,
/// `auth_key.len() == auth.key_len()`, and no HMAC together with a combined-mode cipher.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SecurityAssociation {
    /// RFC 4303 §2.1: Security Parameters Index; 1..=255 are reserved by IANA, 0 is local.
    pub spi: u32,
    pub cipher: Cipher,
    pub auth: Auth,
    /// Encryption key material (for GCM: the AES key then the 4-byte salt).
    pub enc_key: Vec<u8>,
    pub auth_key: Vec<u8>,
    pub mode: Mode,
    /// RFC 4303 §3.3.3: the sequence number put in the next packet sealed. The first
    /// packet of an SA carries 1; [`SecurityAssociation::next_seq`] advances it.
    pub seq: u32,
}

impl SecurityAssociation {
    /// Builds an SA whose next packet carries sequence number 1, checking key lengths.
    ///
    /// Errors: `Malformed` on a key of the wrong length; `Unsupported` for HMAC with GCM
    /// (RFC 4106 §3 provides integrity itself).
    pub fn new(spi: u32, cipher: Cipher, auth: Auth, enc_key: &[u8], auth_key: &[u8], mode: Mode) -> Result<Self> {
        let sa = SecurityAssociation {
            spi,
            cipher,
            auth,
            enc_key: enc_key.to_vec(),
            auth_key: auth_key.to_vec(),
            mode,
            seq: 1,
        };
        sa.check()?;
        Ok(sa)
    }

    /// Checks the invariants (see the type's doc).
    pub fn check(&self) -> Result<()> {
        if self.enc_key.len() != self.cipher.key_len() || self.auth_key.len() != self.auth.key_len() {
            return Err(Error::Malformed);
        }
        if self.cipher.is_aead() && self.auth != Auth::None {
            return Err(Error::Unsupported);
        }
        Ok(())
    }

    /// Returns the sequence number to put in the packet being built and advances the
    /// counter. `None` once the 32-bit space is used up: RFC 4303 §3.3.3 forbids cycling,
    /// the SA must be replaced.
    pub fn next_seq(&mut self) -> Option<u32> {
        let seq = self.seq;
        if seq == 0 {
            // Wrapped past 2^32 - 1 (or set to 0 by hand: 0 is never sent).
            return None;
        }
        self.seq = seq.wrapping_add(1);
        Some(seq)
    }

    /// The cipher block size the ESP plaintext is padded to.
    pub fn block_size(&self) -> usize {
        self.cipher.block_size()
    }

    /// Bytes of IV in each ESP packet.
    pub fn iv_len(&self) -> usize {
        self.cipher.iv_len()
    }

    /// Bytes of ICV at the end of each ESP packet (the AEAD tag or the truncated HMAC).
    pub fn icv_len(&self) -> usize {
        self.cipher.icv_len() + self.auth.icv_len()
    }

    /// RFC 4303 §2.4: the ESP plaintext (payload, padding, pad length, next header) is a
    /// multiple of this: the block size, and at least 4 so the ICV is 4-byte aligned.
    pub fn alignment(&self) -> usize {
        lcm(self.block_size(), 4)
    }
}

fn lcm(a: usize, b: usize) -> usize {
    fn gcd(a: usize, b: usize) -> usize {
        if b == 0 {
            a
        } else {
            gcd(b, a % b)
        }
    }
    a / gcd(a, b) * b
}

/// RFC 4301 §5.1.2.1: what the tunnel-mode outer IPv4 header takes from configuration.
/// The rest is built per the RFC: TOS (DSCP and ECN, RFC 6040 normal mode) and DF are
/// copied from the inner header, protocol is ESP or AH, no options.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct OuterHeader {
    /// The tunnel's local end.
    pub src: crate::ipv4::Address,
    /// The tunnel's remote end.
    pub dst: crate::ipv4::Address,
    /// RFC 4301 §5.1.2.1: TTL is the encapsulator's default, not copied.
    pub ttl: u8,
    /// RFC 791 §3.1 Identification of the outer datagram.
    pub ident: u16,
}

pub(crate) mod ip {
    //! The few IPv4 header operations ESP and AH need, on top of [`crate::ipv4`].

    use crate::ipv4::{self, Packet};
    use crate::{Error, IpProtocol, Result};

    pub use crate::ipv4::field::{CHECKSUM, FLG_OFF, PROTOCOL, TOS, TTL};
    pub use crate::ipv4::HEADER_LEN;

    /// Checks the header of `packet` and returns (header length, total length).
    /// Errors: `Truncated` when shorter than the header or the total length;
    /// `Malformed` on a version other than 4 or an IHL below 5 or past the total length.
    pub fn lengths(packet: &[u8]) -> Result<(usize, usize)> {
        let view = Packet::new_checked(packet)?;
        if view.version() != 4 {
            return Err(Error::Malformed);
        }
        Ok((view.header_len(), usize::from(view.total_len())))
    }

    /// Whether the datagram is a fragment (RFC 791 §3.2: MF set or a non-zero offset).
    pub fn is_fragment(header: &[u8]) -> bool {
        Packet::new_unchecked(header).is_fragment()
    }

    pub fn set_total_len(header: &mut [u8], len: usize) -> Result<()> {
        let len = u16::try_from(len).map_err(|_| Error::Unsupported)?;
        Packet::new_unchecked(header).set_total_len(len);
        Ok(())
    }

    /// Recomputes the header checksum (RFC 791 §3.1) over `header`.
    pub fn fill_checksum(header: &mut [u8]) {
        Packet::new_unchecked(header).fill_checksum();
    }

    /// Appends a 20-byte outer header (RFC 4301 §5.1.2.1) for `payload_len` bytes of
    /// `protocol`, copying TOS and DF from `inner` (an IPv4 header).
    pub fn emit_outer(
        outer: &super::OuterHeader,
        inner: &[u8],
        protocol: u8,
        payload_len: usize,
        out: &mut Vec<u8>,
    ) -> Result<()> {
        if HEADER_LEN + payload_len > usize::from(u16::MAX) {
            return Err(Error::Unsupported);
        }
        let inner = Packet::new_unchecked(inner);
        let mut repr = ipv4::Repr::new(outer.src, outer.dst, IpProtocol::from(protocol), payload_len, outer.ttl);
        repr.tos = inner.tos();
        repr.ident = outer.ident;
        repr.dont_frag = inner.dont_frag();
        let start = out.len();
        out.resize(start + HEADER_LEN, 0);
        repr.emit(&mut Packet::new_unchecked(&mut out[start..]));
        Ok(())
    }
}

#[cfg(test)]
mod test {
    use super::*;

    fn hex(s: &str) -> Vec<u8> {
        let s: String = s.chars().filter(|c| !c.is_whitespace()).collect();
        (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
    }

    fn mac(auth: Auth, key: &[u8], data: &[u8]) -> Vec<u8> {
        let mut icv = vec![0; auth.icv_len()];
        auth.compute(key, &[data], &mut icv);
        icv
    }

    // RFC 2202 §2 test cases 1, 2 and 6 for HMAC-MD5, truncated to 96 bits (RFC 2403 §3).
    #[test]
    fn rfc2202_hmac_md5_96() {
        let cases: [(Vec<u8>, &[u8], &str); 3] = [
            (vec![0x0b; 16], b"Hi There", "9294727a3638bb1c13f48ef8158bfc9d"),
            (b"Jefe".to_vec(), b"what do ya want for nothing?", "750c783e6ab0b503eaa86e310a5db738"),
            (
                vec![0xaa; 80],
                b"Test Using Larger Than Block-Size Key - Hash Key First",
                "6b1ab7fe4bd7bf8f0b62e6ce61b9d0cd",
            ),
        ];
        for (key, data, full) in cases {
            assert_eq!(mac(Auth::HmacMd5_96, &key, data), hex(full)[..12]);
            assert!(Auth::HmacMd5_96.verify(&key, &[data], &hex(full)[..12]).is_ok());
        }
        // RFC 2202 test case 5 states the truncated value itself: 56461ef2342edc00f9bab995.
        assert_eq!(mac(Auth::HmacMd5_96, &[0x0c; 16], b"Test With Truncation"), hex("56461ef2342edc00f9bab995"));
    }

    // RFC 2202 §3 test cases 1, 2 and 5 for HMAC-SHA-1 (RFC 2404 §3 keeps 96 bits).
    #[test]
    fn rfc2202_hmac_sha1_96() {
        let cases: [(Vec<u8>, &[u8], &str); 3] = [
            (vec![0x0b; 20], b"Hi There", "b617318655057264e28bc0b6fb378c8ef146be00"),
            (b"Jefe".to_vec(), b"what do ya want for nothing?", "effcdf6ae5eb2fa2d27416d5f184df9c259a7c79"),
            (vec![0x0c; 20], b"Test With Truncation", "4c1a03424b55e07fe7f27be1d58bb9324a9a5a04"),
        ];
        for (key, data, full) in cases {
            assert_eq!(mac(Auth::HmacSha1_96, &key, data), hex(full)[..12]);
        }
        // Test case 5 also states the 96-bit truncation.
        assert_eq!(mac(Auth::HmacSha1_96, &[0x0c; 20], b"Test With Truncation"), hex("4c1a03424b55e07fe7f27be1"));
    }

    // RFC 4231 §4.2, §4.3 (test cases 1 and 2), truncated to 128 bits (RFC 4868 §2.1.2);
    // §4.6 (test case 5) is itself the 128-bit truncation.
    #[test]
    fn rfc4231_hmac_sha256_128() {
        let full1 = hex("b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
        assert_eq!(mac(Auth::HmacSha256_128, &[0x0b; 20], b"Hi There"), full1[..16]);
        let full2 = hex("5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
        assert_eq!(mac(Auth::HmacSha256_128, b"Jefe", b"what do ya want for nothing?"), full2[..16]);
        assert_eq!(
            mac(Auth::HmacSha256_128, &[0x0c; 20], b"Test With Truncation"),
            hex("a3b6167473100ee06e0c796c2955552b")
        );
    }

    #[test]
    fn verify_rejects_a_changed_icv() {
        let mut icv = mac(Auth::HmacSha1_96, &[0x0b; 20], b"Hi There");
        icv[11] ^= 1;
        assert_eq!(Auth::HmacSha1_96.verify(&[0x0b; 20], &[b"Hi There"], &icv), Err(Error::Checksum));
        assert_eq!(Auth::HmacSha1_96.verify(&[0x0b; 20], &[b"Hi There"], &icv[..11]), Err(Error::Checksum));
    }

    #[test]
    fn parts_are_concatenated() {
        let whole = mac(Auth::HmacSha256_128, b"k", b"abcdef");
        let mut split = vec![0; 16];
        Auth::HmacSha256_128.compute(b"k", &[b"ab", b"", b"cdef"], &mut split);
        assert_eq!(whole, split);
    }

    // RFC 3602 §4, cases 1 to 4: AES-128-CBC.
    #[test]
    fn rfc3602_aes_cbc() {
        let cases = [
            (
                "06a9214036b8a15b512e03d534120006",
                "3dafba429d9eb430b422da802c9fac41",
                "53696e676c6520626c6f636b206d7367",
                "e353779c1079aeb82708942dbe77181a",
            ),
            (
                "c286696d887c9aa0611bbb3e2025a45a",
                "562e17996d093d28ddb3ba695a2e6f58",
                "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f",
                "d296cd94c2cccf8a3a863028b5e1dc0a7586602d253cfff91b8266bea6d61ab1",
            ),
            (
                "6c3ea0477630ce21a2ce334aa746c2cd",
                "c782dc4c098c66cbd9cd27d825682c81",
                "5468697320697320612034382d62797465206d657373616765202865786163746c7920332041455320626c6f636b7329",
                "d0a02b3836451753d493665d33f0e8862dea54cdb293abc7506939276772f8d5021c19216bad525c8579695d83ba2684",
            ),
            (
                "56e47a38c5598974bc46903dba290349",
                "8ce82eefbea0da3c44699ed7db51b7d9",
                "a0a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3b4b5b6b7b8b9babbbcbdbebfc0c1c2c3c4c5c6c7c8c9cacbcccdcecfd0d1d2d3d4d5d6d7d8d9dadbdcdddedf",
                "c30e32ffedc0774e6aff6af0869f71aa0f3af07a9a31a9c684db207eb0ef8e4e35907aa632c3ffdf868bb7b29d3d46ad83ce9f9a102ee99d49a53e87f4c3da55",
            ),
        ];
        // Case 1 plaintext is the ASCII "Single block msg".
        assert_eq!(hex(cases[0].2), b"Single block msg");
        for (key, iv, plain, cipher) in cases {
            let c = Cipher::AesCbc(AesKeySize::Aes128);
            let mut buf = hex(plain);
            c.encrypt(&hex(key), &hex(iv), &[], &mut buf, &mut []).unwrap();
            assert_eq!(buf, hex(cipher));
            c.decrypt(&hex(key), &hex(iv), &[], &mut buf, &[]).unwrap();
            assert_eq!(buf, hex(plain));
        }
    }

    // NIST SP 800-38A F.2.5 (CBC-AES256.Encrypt), first two blocks.
    #[test]
    fn sp800_38a_aes256_cbc() {
        let key = hex("603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4");
        let iv = hex("000102030405060708090a0b0c0d0e0f");
        let mut buf = hex("6bc1bee22e409f96e93d7e117393172aae2d8a571e03ac9c9eb76fac45af8e51");
        Cipher::AesCbc(AesKeySize::Aes256).encrypt(&key, &iv, &[], &mut buf, &mut []).unwrap();
        assert_eq!(buf, hex("f58c4c04d6e5f1ba779eabfb5f7bfbd69cfc4e967edb808d679f777bc6702c7d"));
    }

    // NIST SP 800-67 Appendix B.1 example: TDEA with three distinct keys K1 K2 K3 over
    // "The qufck brown fox jump". With a zero IV the first CBC block equals the ECB one.
    #[test]
    fn tdes_cbc_known_answer() {
        let key = hex("0123456789ABCDEF23456789ABCDEF01456789ABCDEF0123");
        let iv = [0u8; 8];
        let mut buf = b"The qufck brown fox jump".to_vec();
        Cipher::TripleDesCbc.encrypt(&key, &iv, &[], &mut buf, &mut []).unwrap();
        // ECB ciphertext of SP 800-67 B.1 is A826FD8CE53B855F CCE21C8112256FE6 68D5C05DD9B6B900;
        // in CBC the first block (zero IV) equals it.
        assert_eq!(buf[..8], hex("A826FD8CE53B855F")[..]);
        Cipher::TripleDesCbc.decrypt(&key, &iv, &[], &mut buf, &[]).unwrap();
        assert_eq!(buf, b"The qufck brown fox jump");
    }

    // The GCM specification (McGrew and Viega), test case 4 (AES-128, 60-byte plaintext,
    // 20 bytes of AAD, 96-bit IV cafebabefacedbaddecaf888); split as RFC 4106 does:
    // salt = cafebabe, explicit IV = facedbaddecaf888.
    #[test]
    fn gcm_spec_test_case_4() {
        let mut key = hex("feffe9928665731c6d6a8f9467308308");
        key.extend(hex("cafebabe"));
        let iv = hex("facedbaddecaf888");
        let aad = hex("feedfacedeadbeeffeedfacedeadbeefabaddad2");
        let plain = hex(
            "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a721c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b39",
        );
        let mut buf = plain.clone();
        let mut tag = [0u8; 16];
        let c = Cipher::AesGcm(AesKeySize::Aes128);
        c.encrypt(&key, &iv, &aad, &mut buf, &mut tag).unwrap();
        assert_eq!(
            buf,
            hex("42831ec2217774244b7221b784d0d49ce3aa212f2c02a4e035c17e2329aca12e21d514b25466931c7d8f6a5aac84aa051ba30b396a0aac973d58e091")
        );
        assert_eq!(tag[..], hex("5bc94fbc3221a5db94fae95ae7121a47")[..]);
        c.decrypt(&key, &iv, &aad, &mut buf, &tag).unwrap();
        assert_eq!(buf, plain);
        // A changed tag is an integrity failure.
        let mut bad = tag;
        bad[0] ^= 0x80;
        let mut buf2 = buf.clone();
        c.encrypt(&key, &iv, &aad, &mut buf2, &mut tag).unwrap();
        assert_eq!(c.decrypt(&key, &iv, &aad, &mut buf2, &bad), Err(Error::Checksum));
    }

    // GCM spec test case 16 (AES-256, same plaintext and AAD as case 4).
    #[test]
    fn gcm_spec_test_case_16() {
        let mut key = hex("feffe9928665731c6d6a8f9467308308feffe9928665731c6d6a8f9467308308");
        key.extend(hex("cafebabe"));
        let mut buf = hex(
            "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a721c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b39",
        );
        let mut tag = [0u8; 16];
        Cipher::AesGcm(AesKeySize::Aes256)
            .encrypt(
                &key,
                &hex("facedbaddecaf888"),
                &hex("feedfacedeadbeeffeedfacedeadbeefabaddad2"),
                &mut buf,
                &mut tag,
            )
            .unwrap();
        assert_eq!(
            buf,
            hex("522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f662")
        );
        assert_eq!(tag[..], hex("76fc6ece0f4e1768cddf8853bb2d551b")[..]);
    }

    #[test]
    fn wrong_lengths_are_errors() {
        let c = Cipher::TripleDesCbc;
        assert_eq!(c.encrypt(&[0; 23], &[0; 8], &[], &mut [0; 8], &mut []), Err(Error::Malformed));
        assert_eq!(c.encrypt(&[0; 24], &[0; 16], &[], &mut [0; 8], &mut []), Err(Error::Malformed));
        assert_eq!(c.encrypt(&[1; 24], &[0; 8], &[], &mut [0; 7], &mut []), Err(Error::Malformed));
        assert_eq!(c.decrypt(&[1; 24], &[0; 8], &[], &mut [0; 9], &[]), Err(Error::Malformed));
    }

    #[test]
    fn derived_lengths() {
        let sa = SecurityAssociation::new(
            0x1000,
            Cipher::TripleDesCbc,
            Auth::HmacSha1_96,
            &[1; 24],
            &[2; 20],
            Mode::Transport,
        )
        .unwrap();
        assert_eq!((sa.block_size(), sa.iv_len(), sa.icv_len(), sa.alignment()), (8, 8, 12, 8));
        let gcm =
            SecurityAssociation::new(1, Cipher::AesGcm(AesKeySize::Aes256), Auth::None, &[0; 36], &[], Mode::Tunnel)
                .unwrap();
        assert_eq!((gcm.block_size(), gcm.iv_len(), gcm.icv_len(), gcm.alignment()), (1, 8, 16, 4));
        let null =
            SecurityAssociation::new(1, Cipher::Null, Auth::HmacSha256_128, &[], &[0; 32], Mode::Transport).unwrap();
        assert_eq!((null.block_size(), null.iv_len(), null.icv_len(), null.alignment()), (1, 0, 16, 4));
        let aes = SecurityAssociation::new(
            1,
            Cipher::AesCbc(AesKeySize::Aes128),
            Auth::HmacMd5_96,
            &[0; 16],
            &[0; 16],
            Mode::Transport,
        )
        .unwrap();
        assert_eq!((aes.block_size(), aes.iv_len(), aes.icv_len(), aes.alignment()), (16, 16, 12, 16));
    }

    #[test]
    fn sa_checks_keys() {
        assert_eq!(
            SecurityAssociation::new(1, Cipher::TripleDesCbc, Auth::None, &[0; 16], &[], Mode::Transport),
            Err(Error::Malformed)
        );
        assert_eq!(
            SecurityAssociation::new(1, Cipher::Null, Auth::HmacSha1_96, &[], &[0; 16], Mode::Transport),
            Err(Error::Malformed)
        );
        assert_eq!(
            SecurityAssociation::new(
                1,
                Cipher::AesGcm(AesKeySize::Aes128),
                Auth::HmacSha1_96,
                &[0; 20],
                &[0; 20],
                Mode::Transport
            ),
            Err(Error::Unsupported)
        );
    }

    #[test]
    fn sequence_numbers_start_at_one_and_do_not_cycle() {
        let mut sa =
            SecurityAssociation::new(1, Cipher::Null, Auth::HmacSha1_96, &[], &[0; 20], Mode::Transport).unwrap();
        assert_eq!(sa.next_seq(), Some(1));
        assert_eq!(sa.next_seq(), Some(2));
        sa.seq = u32::MAX;
        assert_eq!(sa.next_seq(), Some(u32::MAX));
        assert_eq!(sa.next_seq(), None);
    }

    #[test]
    fn names_round_trip() {
        for name in ["null", "3des-cbc", "aes-128-cbc", "aes-256-cbc", "aes-128-gcm", "aes-256-gcm", "aes-192-cbc"] {
            let c: Cipher = name.parse().unwrap();
            assert_eq!(c.to_string(), name);
        }
        for name in ["none", "hmac-md5-96", "hmac-sha1-96", "hmac-sha256-128"] {
            let a: Auth = name.parse().unwrap();
            assert_eq!(a.to_string(), name);
        }
        assert_eq!("AES-128-CBC".parse::<Cipher>(), Ok(Cipher::AesCbc(AesKeySize::Aes128)));
        assert_eq!("tunnel".parse::<Mode>(), Ok(Mode::Tunnel));
        let err = "rot13".parse::<Cipher>().unwrap_err();
        assert!(err.to_string().contains("3des-cbc"), "{err}");
        assert!("sha1".parse::<Auth>().is_err());
    }
}
