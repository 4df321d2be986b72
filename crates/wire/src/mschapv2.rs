//! MS-CHAPv2, the PPP authentication PPTP clients use by default (RFC 2759).
//!
//! Standards a reader must know:
//!
//! * RFC 2759 §2: MS-CHAPv2 is CHAP (RFC 1994) with algorithm 0x81 in LCP's
//!   Authentication-Protocol option; §3 the Challenge's Value is a 16-octet
//!   Authenticator Challenge; §4 the Response's Value is 49 octets: Peer-Challenge (16),
//!   Reserved (8, zero), NT-Response (24), Flags (1, zero); §5 Success carries
//!   "S=<auth_string> M=<message>", the auth string 40 upper-case hex digits;
//!   §6 Failure carries "E=eeeeeeeeee R=r C=<32 hex> V=vvvvvvvvvv M=<msg>".
//! * RFC 2759 §8: the computations (GenerateNTResponse, ChallengeHash, NtPasswordHash,
//!   ChallengeResponse, DesEncrypt, GenerateAuthenticatorResponse); §9.2 the worked
//!   example the tests check.
//!
//! The password is taken as UTF-8 and turned into UTF-16LE ("Unicode", RFC 2759 §8.3)
//! before hashing, as pppd and Windows do.

use des::cipher::{array::Array, BlockCipherEncrypt, KeyInit};
use md4::{Digest, Md4};
use sha1::Sha1;

use crate::{Error, Result};

/// RFC 1994 §4.1 / RFC 2759 §2: the CHAP algorithm number of MS-CHAPv2.
pub const ALGORITHM: u8 = 0x81;
/// RFC 2759 §3: the Authenticator Challenge is 16 octets.
pub const CHALLENGE_LEN: usize = 16;
/// RFC 2759 §4: the Response Value is 49 octets.
pub const RESPONSE_LEN: usize = 49;
/// RFC 2759 §4: the NT-Response is 24 octets.
pub const NT_RESPONSE_LEN: usize = 24;
/// RFC 2759 §6: "691 ERROR_AUTHENTICATION_FAILURE".
pub const ERROR_AUTHENTICATION_FAILURE: u32 = 691;

/// RFC 2759 §8.7: Magic1, "Magic server to client signing constant".
const MAGIC1: &[u8; 39] = b"Magic server to client signing constant";
/// RFC 2759 §8.7: Magic2, "Pad to make it do more than one iteration".
const MAGIC2: &[u8; 41] = b"Pad to make it do more than one iteration";

/// Byte ranges of the Response Value (RFC 2759 §4).
pub mod field {
    use crate::Field;
    pub const PEER_CHALLENGE: Field = 0..16;
    pub const RESERVED: Field = 16..24;
    pub const NT_RESPONSE: Field = 24..48;
    pub const FLAGS: usize = 48;
}

/// RFC 2759 §8.3 NtPasswordHash: MD4 of the password in UTF-16LE.
pub fn nt_password_hash(password: &str) -> [u8; 16] {
    let mut md4 = Md4::new();
    for unit in password.encode_utf16() {
        md4.update(unit.to_le_bytes());
    }
    md4.finalize().into()
}

/// RFC 2759 §8.4 HashNtPasswordHash: MD4 of the hash.
pub fn hash_nt_password_hash(hash: &[u8; 16]) -> [u8; 16] {
    Md4::digest(hash).into()
}

/// RFC 2759 §8.2 ChallengeHash: the first 8 octets of SHA-1(PeerChallenge ‖
/// AuthenticatorChallenge ‖ UserName). "Only the user name (as presented by the peer
/// and excluding any prepended domain name) is used."
pub fn challenge_hash(peer_challenge: &[u8; 16], authenticator_challenge: &[u8; 16], user_name: &[u8]) -> [u8; 8] {
    let mut sha = Sha1::new();
    sha.update(peer_challenge);
    sha.update(authenticator_challenge);
    sha.update(user_name);
    let digest = sha.finalize();
    let mut out = [0u8; 8];
    out.copy_from_slice(&digest[..8]);
    out
}

/// RFC 2759 §8.6 DesEncrypt: DES-encrypts one block with a 7-octet key, spread over the
/// 8 octets of a DES key (seven bits each; the low parity bit is not used by DES).
fn des_encrypt(clear: &[u8; 8], key7: &[u8]) -> [u8; 8] {
    let k = |i: usize| u64::from(key7[i]);
    let bits = (0..7).fold(0u64, |acc, i| (acc << 8) | k(i));
    let mut key = [0u8; 8];
    for (i, byte) in key.iter_mut().enumerate() {
        *byte = (((bits >> (49 - 7 * i)) & 0x7f) as u8) << 1;
    }
    let cipher = des::Des::new_from_slice(&key).expect("DES takes an 8-octet key");
    let mut block = Array::from(*clear);
    cipher.encrypt_block(&mut block);
    block.into()
}

/// RFC 2759 §8.5 ChallengeResponse: the hash padded to 21 octets with zeros, three
/// DES encryptions of the challenge under its three 7-octet thirds.
pub fn challenge_response(challenge: &[u8; 8], password_hash: &[u8; 16]) -> [u8; NT_RESPONSE_LEN] {
    let mut z = [0u8; 21];
    z[..16].copy_from_slice(password_hash);
    let mut out = [0u8; NT_RESPONSE_LEN];
    for i in 0..3 {
        out[8 * i..8 * i + 8].copy_from_slice(&des_encrypt(challenge, &z[7 * i..7 * i + 7]));
    }
    out
}

/// RFC 2759 §8.1 GenerateNTResponse.
pub fn generate_nt_response(
    authenticator_challenge: &[u8; 16],
    peer_challenge: &[u8; 16],
    user_name: &[u8],
    password: &str,
) -> [u8; NT_RESPONSE_LEN] {
    let challenge = challenge_hash(peer_challenge, authenticator_challenge, user_name);
    challenge_response(&challenge, &nt_password_hash(password))
}

/// RFC 2759 §8.7 GenerateAuthenticatorResponse: "S=" and 40 upper-case hex digits.
pub fn generate_authenticator_response(
    password: &str,
    nt_response: &[u8; NT_RESPONSE_LEN],
    peer_challenge: &[u8; 16],
    authenticator_challenge: &[u8; 16],
    user_name: &[u8],
) -> String {
    let hash_hash = hash_nt_password_hash(&nt_password_hash(password));
    let mut sha = Sha1::new();
    sha.update(hash_hash);
    sha.update(nt_response);
    sha.update(MAGIC1);
    let digest = sha.finalize();
    let challenge = challenge_hash(peer_challenge, authenticator_challenge, user_name);
    let mut sha = Sha1::new();
    sha.update(digest);
    sha.update(challenge);
    sha.update(MAGIC2);
    let digest = sha.finalize();
    let mut s = String::from("S=");
    for b in digest.iter() {
        s.push_str(&format!("{b:02X}"));
    }
    s
}

/// The Value of an MS-CHAPv2 Response (RFC 2759 §4).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResponseRepr {
    pub peer_challenge: [u8; 16],
    pub nt_response: [u8; NT_RESPONSE_LEN],
    /// RFC 2759 §4: "reserved for future use and MUST be zero".
    pub flags: u8,
}

impl ResponseRepr {
    /// The peer's Response to `authenticator_challenge` (RFC 2759 §4, §8.1).
    pub fn new(
        authenticator_challenge: &[u8; 16],
        peer_challenge: [u8; 16],
        user_name: &[u8],
        password: &str,
    ) -> ResponseRepr {
        ResponseRepr {
            peer_challenge,
            nt_response: generate_nt_response(authenticator_challenge, &peer_challenge, user_name, password),
            flags: 0,
        }
    }

    /// Parses a Response Value: exactly 49 octets (a CHAP Value-Size of 49).
    pub fn parse(value: &[u8]) -> Result<ResponseRepr> {
        if value.len() != RESPONSE_LEN {
            return Err(if value.len() < RESPONSE_LEN { Error::Truncated } else { Error::Malformed });
        }
        let mut peer_challenge = [0u8; 16];
        peer_challenge.copy_from_slice(&value[field::PEER_CHALLENGE]);
        let mut nt_response = [0u8; NT_RESPONSE_LEN];
        nt_response.copy_from_slice(&value[field::NT_RESPONSE]);
        Ok(ResponseRepr { peer_challenge, nt_response, flags: value[field::FLAGS] })
    }

    pub fn emit(&self) -> [u8; RESPONSE_LEN] {
        let mut out = [0u8; RESPONSE_LEN];
        out[field::PEER_CHALLENGE].copy_from_slice(&self.peer_challenge);
        out[field::NT_RESPONSE].copy_from_slice(&self.nt_response);
        out[field::FLAGS] = self.flags;
        out
    }
}

/// RFC 2759 §5: the Success message, "S=<auth_string> M=<message>".
pub fn success_message(authenticator_response: &str, message: &str) -> Vec<u8> {
    format!("{authenticator_response} M={message}").into_bytes()
}

/// The auth string of a Success message (RFC 2759 §5), `None` if it has none.
pub fn success_auth_string(message: &[u8]) -> Option<&str> {
    let text = core::str::from_utf8(message).ok()?;
    let s = text.split(' ').next()?;
    (s.len() == 42 && s.starts_with("S=")).then_some(s)
}

/// RFC 2759 §6: a Failure message for `error` (691 for a bad password), no retry,
/// the authenticator challenge in hex, version 3.
pub fn failure_message(error: u32, authenticator_challenge: &[u8; 16], message: &str) -> Vec<u8> {
    let mut hex = String::new();
    for b in authenticator_challenge {
        hex.push_str(&format!("{b:02X}"));
    }
    format!("E={error} R=0 C={hex} V=3 M={message}").into_bytes()
}

#[cfg(test)]
mod test {
    use super::*;

    // RFC 2759 §9.2, "Hash Example".
    const USER: &[u8] = b"User";
    const PASSWORD: &str = "clientPass";
    const AUTH_CHALLENGE: [u8; 16] =
        [0x5B, 0x5D, 0x7C, 0x7D, 0x7B, 0x3F, 0x2F, 0x3E, 0x3C, 0x2C, 0x60, 0x21, 0x32, 0x26, 0x26, 0x28];
    const PEER_CHALLENGE: [u8; 16] =
        [0x21, 0x40, 0x23, 0x24, 0x25, 0x5E, 0x26, 0x2A, 0x28, 0x29, 0x5F, 0x2B, 0x3A, 0x33, 0x7C, 0x7E];
    const CHALLENGE: [u8; 8] = [0xD0, 0x2E, 0x43, 0x86, 0xBC, 0xE9, 0x12, 0x26];
    const NT_RESPONSE: [u8; 24] = [
        0x82, 0x30, 0x9E, 0xCD, 0x8D, 0x70, 0x8B, 0x5E, 0xA0, 0x8F, 0xAA, 0x39, 0x81, 0xCD, 0x83, 0x54, 0x42, 0x33,
        0x11, 0x4A, 0x3D, 0x85, 0xD6, 0xDF,
    ];
    const PASSWORD_HASH: [u8; 16] =
        [0x44, 0xEB, 0xBA, 0x8D, 0x53, 0x12, 0xB8, 0xD6, 0x11, 0x47, 0x44, 0x11, 0xF5, 0x69, 0x89, 0xAE];
    const PASSWORD_HASH_HASH: [u8; 16] =
        [0x41, 0xC0, 0x0C, 0x58, 0x4B, 0xD2, 0xD9, 0x1C, 0x40, 0x17, 0xA2, 0xA1, 0x2F, 0xA5, 0x9F, 0x3F];
    const AUTHENTICATOR_RESPONSE: &str = "S=407A5589115FD0D6209F510FE9C04566932CDA56";

    #[test]
    fn rfc2759_hash_example() {
        assert_eq!(nt_password_hash(PASSWORD), PASSWORD_HASH);
        assert_eq!(hash_nt_password_hash(&PASSWORD_HASH), PASSWORD_HASH_HASH);
        assert_eq!(challenge_hash(&PEER_CHALLENGE, &AUTH_CHALLENGE, USER), CHALLENGE);
        assert_eq!(challenge_response(&CHALLENGE, &PASSWORD_HASH), NT_RESPONSE);
        assert_eq!(generate_nt_response(&AUTH_CHALLENGE, &PEER_CHALLENGE, USER, PASSWORD), NT_RESPONSE);
        assert_eq!(
            generate_authenticator_response(PASSWORD, &NT_RESPONSE, &PEER_CHALLENGE, &AUTH_CHALLENGE, USER),
            AUTHENTICATOR_RESPONSE
        );
    }

    #[test]
    fn response_value_layout() {
        let repr = ResponseRepr::new(&AUTH_CHALLENGE, PEER_CHALLENGE, USER, PASSWORD);
        let value = repr.emit();
        assert_eq!(&value[..16], &PEER_CHALLENGE);
        assert_eq!(&value[16..24], &[0; 8]);
        assert_eq!(&value[24..48], &NT_RESPONSE);
        assert_eq!(value[48], 0);
        assert_eq!(ResponseRepr::parse(&value), Ok(repr));
        assert_eq!(ResponseRepr::parse(&value[..48]), Err(Error::Truncated));
        let mut long = value.to_vec();
        long.push(0);
        assert_eq!(ResponseRepr::parse(&long), Err(Error::Malformed));
    }

    #[test]
    fn success_and_failure_messages() {
        let s = success_message(AUTHENTICATOR_RESPONSE, "Access granted");
        assert_eq!(s, b"S=407A5589115FD0D6209F510FE9C04566932CDA56 M=Access granted");
        assert_eq!(success_auth_string(&s), Some(AUTHENTICATOR_RESPONSE));
        assert_eq!(success_auth_string(b"S=12 M=x"), None);
        let f = failure_message(ERROR_AUTHENTICATION_FAILURE, &AUTH_CHALLENGE, "bad");
        assert_eq!(f, b"E=691 R=0 C=5B5D7C7D7B3F2F3E3C2C602132262628 V=3 M=bad");
    }
}
