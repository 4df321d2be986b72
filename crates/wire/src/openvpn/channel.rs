//! One direction of a data channel: seal and open (`crypto.c`), with its ciphers.

use super::*;

/// Which data opcode a data channel sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DataOpcode {
    /// `P_DATA_V1`: one octet.
    V1,
    /// `P_DATA_V2` with the peer id the server assigned (24 bits).
    V2 { peer_id: u32 },
    /// No opcode: a pre-shared static key (`--secret`). With no TLS session there is no
    /// key id or peer id, and `forward.c` prepends an opcode only in `tls_post_encrypt`:
    /// the packet begins with the HMAC. Its packet id is the long form
    /// (`init_crypto_static` sets `CO_PACKET_ID_LONG_FORM`; `packet_id.h`: the 4-octet id
    /// then the 4-octet time). Its AEAD layout is not modelled: use it with CBC or no cipher.
    StaticKey,
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
    /// Static key only: the time of the long-form packet id (`packet_id.h` `net_time_t`:
    /// seconds since the Unix epoch at which the sender's packet-id sequence began). This
    /// crate has no clock: the caller sets it.
    pub packet_id_time: u32,
}

/// A data packet opened by [`DataChannel::decapsulate`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Opened {
    /// None for a static-key channel, whose packets carry no opcode.
    pub header: Option<Repr>,
    /// Present with replay protection or GCM (in static-key mode, the long form's id).
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
            packet_id_time: 0,
        }
    }

    /// The packet header this channel sends (none with a static key).
    pub fn header(&self) -> Option<Repr> {
        match self.opcode {
            DataOpcode::V1 => Some(Repr { opcode: Opcode::DataV1, key_id: self.key_id, peer_id: None }),
            DataOpcode::V2 { peer_id } => {
                Some(Repr { opcode: Opcode::DataV2, key_id: self.key_id, peer_id: Some(peer_id & PEER_ID_UNDEF) })
            }
            DataOpcode::StaticKey => None,
        }
    }

    /// The octets of the packet id this channel sends: none without replay protection
    /// (GCM always sends it), the long form with a static key.
    fn packet_id_len(&self) -> usize {
        match (self.replay || self.cipher.is_aead(), self.opcode) {
            (false, _) => 0,
            (true, DataOpcode::StaticKey) => PACKET_ID_LONG_LEN,
            (true, _) => PACKET_ID_LEN,
        }
    }

    /// The packet id as sent: the id, and with a static key the time after it.
    fn packet_id_bytes(&self, packet_id: u32) -> Vec<u8> {
        let mut pid = packet_id.to_be_bytes().to_vec();
        if self.opcode == DataOpcode::StaticKey {
            pid.extend_from_slice(&self.packet_id_time.to_be_bytes());
        }
        pid
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
        let mut fields = match self.opcode {
            DataOpcode::V1 => vec![("opcode/key id", 1)],
            DataOpcode::V2 { .. } => vec![("opcode/key id", 1), ("peer id", PEER_ID_LEN)],
            DataOpcode::StaticKey => vec![],
        };
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
                if self.opcode == DataOpcode::StaticKey {
                    fields.push(("packet id time", PACKET_ID_LONG_LEN - PACKET_ID_LEN));
                }
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
            let plain = self.packet_id_len() + fragment + compress + payload_len;
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
        let header = self.header().map(|h| h.header_bytes()).unwrap_or_default();
        let pid = self.packet_id_bytes(packet_id);
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
            nonce[..4].copy_from_slice(&pid[..PACKET_ID_LEN]);
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
        let mut inner = Vec::with_capacity(plain.len() + PACKET_ID_LONG_LEN);
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
        let header = self.parse_header(packet)?;
        let header_len = header.map_or(0, |h| h.header_len());
        let body = &packet[header_len..];
        let (packet_id, plain) = if self.cipher.is_aead() {
            if body.len() < PACKET_ID_LEN + AEAD_TAG_LEN {
                return Err(Error::Truncated);
            }
            let pid = &body[..PACKET_ID_LEN];
            let tag = &body[PACKET_ID_LEN..PACKET_ID_LEN + AEAD_TAG_LEN];
            let mut buf = body[PACKET_ID_LEN + AEAD_TAG_LEN..].to_vec();
            let mut ad = Vec::with_capacity(8);
            if header.is_some_and(|h| h.opcode == Opcode::DataV2) {
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
                let pid_len = self.packet_id_len();
                if inner.len() < pid_len {
                    return Err(Error::Truncated);
                }
                let pid = u32::from_be_bytes([inner[0], inner[1], inner[2], inner[3]]);
                (Some(pid), inner[pid_len..].to_vec())
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

    /// The packet's header, checked against the channel's opcode (none with a static key).
    fn parse_header(&self, packet: &[u8]) -> Result<Option<Repr>> {
        let Some(expected) = self.header() else {
            return Ok(None);
        };
        let header = Repr::parse(&Packet::new_checked(packet)?)?;
        if header.opcode != expected.opcode {
            return Err(Error::Unsupported);
        }
        Ok(Some(header))
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
