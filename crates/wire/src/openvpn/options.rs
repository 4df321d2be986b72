//! The data channel's options: cipher, HMAC digest, compression framing (`comp.h`).

use super::*;

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

    pub(super) fn mac(self, key: &[u8], data: &[u8]) -> Vec<u8> {
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

    pub(super) fn verify(self, key: &[u8], data: &[u8], tag: &[u8]) -> bool {
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
