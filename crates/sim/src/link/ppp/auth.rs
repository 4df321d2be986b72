//! PPP authentication: CHAP with MD5 (RFC 1994), MS-CHAPv2 (RFC 2759) and PAP
//! (RFC 1334), each side sans-IO.
//!
//! MS-CHAPv2 (RFC 2759 §3-§6): the same Challenge/Response/Success/Failure packets; the
//! Response Value is 49 octets (Peer-Challenge, NT-Response), the authenticator checks the
//! NT-Response against the secret and the user name the Response carries, and its
//! Success carries "S=<authenticator response>", which the peer MUST check (§5) before
//! it takes the link as authenticated. The computations are `wire::mschapv2`.
//!
//! Standards: RFC 1994 §4.1 (Challenge and Response: Value-Size, Value, Name; the MD5
//! response is MD5(Identifier ‖ secret ‖ Challenge-Value)), §4.2 (Success, Failure),
//! §2.1 and §4.1 (the authenticator retransmits the Challenge until a valid Response;
//! the peer answers every Challenge). RFC 1334 §2.2 (PAP: the peer sends
//! Authenticate-Request with Peer-ID and Password until it gets Authenticate-Ack or
//! -Nak). Retransmission: the Restart timer of RFC 1661 §4.6 (3 s) and Max-Configure
//! (10) tries, as pppd's chap-restart / chap-max-challenge and pap-restart /
//! pap-max-authreq defaults are.

use md5::{Digest, Md5};
use wire::mschapv2::{self, ResponseRepr};
use wire::ppp::{ChapBody, ChapRepr, ControlPacket, ControlRepr};

use super::fsm::{MAX_CONFIGURE, RESTART_NS};

/// RFC 1994 §4.1: MD5's Value-Size is 16; the challenge here is 16 octets too.
pub const CHAP_VALUE_LEN: usize = 16;

/// RFC 1334 §2.2 codes.
pub const PAP_REQUEST: u8 = 1;
pub const PAP_ACK: u8 = 2;
pub const PAP_NAK: u8 = 3;

/// The MD5 CHAP response (RFC 1994 §4.1, "the Response Value is the one-way hash
/// calculated over a stream of octets consisting of the Identifier, followed by
/// (concatenated with) the 'secret', followed by the Challenge Value").
pub fn chap_md5(identifier: u8, secret: &[u8], challenge: &[u8]) -> [u8; 16] {
    let mut hash = Md5::new();
    hash.update([identifier]);
    hash.update(secret);
    hash.update(challenge);
    hash.finalize().into()
}

fn chap(repr: &ChapRepr<'_>) -> Vec<u8> {
    let mut bytes = vec![0u8; repr.buffer_len()];
    repr.emit(&mut ControlPacket::new_unchecked(&mut bytes[..]));
    bytes
}

/// The outcome of authentication as one side sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Success,
    Failure,
}

/// Which protocol and which side.
#[derive(Debug)]
pub enum Authenticator {
    /// `ms`: MS-CHAPv2 (RFC 2759) rather than MD5.
    Chap {
        name: Vec<u8>,
        secret: Vec<u8>,
        challenge: [u8; CHAP_VALUE_LEN],
        id: u8,
        tries: u32,
        timer: Option<u64>,
        done: bool,
        ms: bool,
    },
    Pap {
        user: Vec<u8>,
        secret: Vec<u8>,
        done: bool,
    },
}

impl Authenticator {
    /// CHAP: `challenge` is the value to send (drawn from the node's seeded stream).
    pub fn chap(name: &[u8], secret: &[u8], challenge: [u8; CHAP_VALUE_LEN], id: u8) -> Authenticator {
        Authenticator::Chap {
            name: name.to_vec(),
            secret: secret.to_vec(),
            challenge,
            id,
            tries: 0,
            timer: None,
            done: false,
            ms: false,
        }
    }

    /// MS-CHAPv2 (RFC 2759 §3): the 16-octet Authenticator Challenge.
    pub fn mschapv2(name: &[u8], secret: &[u8], challenge: [u8; CHAP_VALUE_LEN], id: u8) -> Authenticator {
        Authenticator::Chap {
            name: name.to_vec(),
            secret: secret.to_vec(),
            challenge,
            id,
            tries: 0,
            timer: None,
            done: false,
            ms: true,
        }
    }

    pub fn pap(user: &[u8], secret: &[u8]) -> Authenticator {
        Authenticator::Pap { user: user.to_vec(), secret: secret.to_vec(), done: false }
    }

    /// The authentication phase begins (RFC 1661 §3.5): CHAP sends its Challenge; PAP
    /// waits for the peer.
    pub fn start(&mut self, now: u64, out: &mut Vec<Vec<u8>>) {
        if let Authenticator::Chap { name, challenge, id, tries, timer, .. } = self {
            out.push(chap(&ChapRepr { identifier: *id, body: ChapBody::Challenge { value: challenge, name } }));
            *tries = 1;
            *timer = Some(now + RESTART_NS);
        }
    }

    pub fn poll_at(&self) -> Option<u64> {
        match self {
            Authenticator::Chap { timer, .. } => *timer,
            Authenticator::Pap { .. } => None,
        }
    }

    /// Retransmits the Challenge; `Failure` after Max-Configure tries.
    pub fn on_timer(&mut self, now: u64, out: &mut Vec<Vec<u8>>) -> Option<Outcome> {
        let Authenticator::Chap { name, challenge, id, tries, timer, done, .. } = self else { return None };
        if timer.is_none_or(|t| t > now) || *done {
            return None;
        }
        if *tries >= MAX_CONFIGURE {
            *timer = None;
            *done = true;
            return Some(Outcome::Failure);
        }
        out.push(chap(&ChapRepr { identifier: *id, body: ChapBody::Challenge { value: challenge, name } }));
        *tries += 1;
        *timer = Some(now + RESTART_NS);
        None
    }

    /// A CHAP Response or PAP Authenticate-Request from the peer.
    pub fn input(&mut self, packet: &[u8], out: &mut Vec<Vec<u8>>) -> Option<Outcome> {
        match self {
            Authenticator::Chap { secret, challenge, id, timer, done, ms, .. } => {
                let view = ControlPacket::new_checked(packet).ok()?;
                let repr = ChapRepr::parse(&view).ok()?;
                let ChapBody::Response { value, name } = repr.body else { return None };
                // RFC 1994 §4.1: a Response whose Identifier does not match is discarded.
                if repr.identifier != *id {
                    return None;
                }
                let (good, message) = if *ms {
                    mschapv2_verdict(secret, challenge, value, name)
                } else {
                    let good = value == chap_md5(*id, secret, challenge);
                    (good, if good { b"Access granted".to_vec() } else { b"Access denied".to_vec() })
                };
                let body = if good {
                    ChapBody::Success { message: &message }
                } else {
                    ChapBody::Failure { message: &message }
                };
                out.push(chap(&ChapRepr { identifier: *id, body }));
                *timer = None;
                let first = !*done;
                *done = true;
                // A repeated Response (our Success was lost) is answered again, once decided.
                first.then_some(if good { Outcome::Success } else { Outcome::Failure })
            }
            Authenticator::Pap { user, secret, done } => {
                let view = ControlPacket::new_checked(packet).ok()?;
                let repr = ControlRepr::parse(&view).ok()?;
                if repr.code != PAP_REQUEST {
                    return None;
                }
                let (peer_id, password) = pap_fields(repr.data)?;
                let good = peer_id == &user[..] && password == &secret[..];
                let (code, message): (u8, &[u8]) =
                    if good { (PAP_ACK, b"Login ok") } else { (PAP_NAK, b"Login incorrect") };
                let mut data = vec![message.len() as u8];
                data.extend_from_slice(message);
                let reply = ControlRepr { code, identifier: repr.identifier, data: &data };
                let mut bytes = vec![0u8; reply.buffer_len()];
                reply.emit(&mut ControlPacket::new_unchecked(&mut bytes[..]));
                out.push(bytes);
                let first = !*done;
                *done = true;
                first.then_some(if good { Outcome::Success } else { Outcome::Failure })
            }
        }
    }
}

/// RFC 2759 §4-§6: checks an MS-CHAPv2 Response Value against the secret; the
/// Success message carries the authenticator response, the Failure error 691.
fn mschapv2_verdict(secret: &[u8], challenge: &[u8; CHAP_VALUE_LEN], value: &[u8], user: &[u8]) -> (bool, Vec<u8>) {
    let password = String::from_utf8_lossy(secret);
    let good = ResponseRepr::parse(value)
        .ok()
        .filter(|r| r.nt_response == mschapv2::generate_nt_response(challenge, &r.peer_challenge, user, &password));
    match good {
        Some(r) => {
            let auth = mschapv2::generate_authenticator_response(
                &password,
                &r.nt_response,
                &r.peer_challenge,
                challenge,
                user,
            );
            (true, mschapv2::success_message(&auth, "Access granted"))
        }
        None => (false, mschapv2::failure_message(mschapv2::ERROR_AUTHENTICATION_FAILURE, challenge, "Access denied")),
    }
}

/// RFC 1334 §2.2.1: Peer-ID Length, Peer-ID, Passwd-Length, Password.
fn pap_fields(data: &[u8]) -> Option<(&[u8], &[u8])> {
    let n = usize::from(*data.first()?);
    let peer_id = data.get(1..1 + n)?;
    let m = usize::from(*data.get(1 + n)?);
    let password = data.get(2 + n..2 + n + m)?;
    Some((peer_id, password))
}

/// The side that proves who it is.
#[derive(Debug)]
pub enum Peer {
    Chap {
        name: Vec<u8>,
        secret: Vec<u8>,
    },
    Pap {
        user: Vec<u8>,
        secret: Vec<u8>,
        id: u8,
        tries: u32,
        timer: Option<u64>,
        done: bool,
    },
    /// RFC 2759: `expected` is the authenticator response the Success must carry.
    MsChapV2 {
        name: Vec<u8>,
        secret: Vec<u8>,
        peer_challenge: [u8; 16],
        expected: Option<String>,
    },
}

impl Peer {
    pub fn chap(name: &[u8], secret: &[u8]) -> Peer {
        Peer::Chap { name: name.to_vec(), secret: secret.to_vec() }
    }

    /// MS-CHAPv2 with the 16 random octets of its Peer-Challenge (RFC 2759 §4).
    pub fn mschapv2(name: &[u8], secret: &[u8], peer_challenge: [u8; 16]) -> Peer {
        Peer::MsChapV2 { name: name.to_vec(), secret: secret.to_vec(), peer_challenge, expected: None }
    }

    pub fn pap(user: &[u8], secret: &[u8]) -> Peer {
        Peer::Pap { user: user.to_vec(), secret: secret.to_vec(), id: 1, tries: 0, timer: None, done: false }
    }

    fn pap_request(user: &[u8], secret: &[u8], id: u8) -> Vec<u8> {
        let mut data = vec![user.len() as u8];
        data.extend_from_slice(user);
        data.push(secret.len() as u8);
        data.extend_from_slice(secret);
        let repr = ControlRepr { code: PAP_REQUEST, identifier: id, data: &data };
        let mut bytes = vec![0u8; repr.buffer_len()];
        repr.emit(&mut ControlPacket::new_unchecked(&mut bytes[..]));
        bytes
    }

    /// The authentication phase begins: PAP sends its request; CHAP waits.
    pub fn start(&mut self, now: u64, out: &mut Vec<Vec<u8>>) {
        if let Peer::Pap { user, secret, id, tries, timer, .. } = self {
            out.push(Peer::pap_request(user, secret, *id));
            *tries = 1;
            *timer = Some(now + RESTART_NS);
        }
    }

    pub fn poll_at(&self) -> Option<u64> {
        match self {
            Peer::Pap { timer, .. } => *timer,
            Peer::Chap { .. } | Peer::MsChapV2 { .. } => None,
        }
    }

    pub fn on_timer(&mut self, now: u64, out: &mut Vec<Vec<u8>>) -> Option<Outcome> {
        let Peer::Pap { user, secret, id, tries, timer, done } = self else { return None };
        if timer.is_none_or(|t| t > now) || *done {
            return None;
        }
        if *tries >= MAX_CONFIGURE {
            *timer = None;
            *done = true;
            return Some(Outcome::Failure);
        }
        *id = id.wrapping_add(1);
        out.push(Peer::pap_request(user, secret, *id));
        *tries += 1;
        *timer = Some(now + RESTART_NS);
        None
    }

    /// A CHAP Challenge/Success/Failure or PAP Ack/Nak from the authenticator.
    pub fn input(&mut self, packet: &[u8], out: &mut Vec<Vec<u8>>) -> Option<Outcome> {
        let view = ControlPacket::new_checked(packet).ok()?;
        match self {
            Peer::Chap { name, secret } => {
                let repr = ChapRepr::parse(&view).ok()?;
                match repr.body {
                    ChapBody::Challenge { value, .. } => {
                        let response = chap_md5(repr.identifier, secret, value);
                        out.push(chap(&ChapRepr {
                            identifier: repr.identifier,
                            body: ChapBody::Response { value: &response, name },
                        }));
                        None
                    }
                    ChapBody::Success { .. } => Some(Outcome::Success),
                    ChapBody::Failure { .. } => Some(Outcome::Failure),
                    ChapBody::Response { .. } => None,
                }
            }
            Peer::MsChapV2 { name, secret, peer_challenge, expected } => {
                let repr = ChapRepr::parse(&view).ok()?;
                match repr.body {
                    ChapBody::Challenge { value, .. } => {
                        let challenge: [u8; CHAP_VALUE_LEN] = value.try_into().ok()?;
                        let password = String::from_utf8_lossy(secret);
                        let response = ResponseRepr::new(&challenge, *peer_challenge, name, &password);
                        *expected = Some(mschapv2::generate_authenticator_response(
                            &password,
                            &response.nt_response,
                            peer_challenge,
                            &challenge,
                            name,
                        ));
                        let value = response.emit();
                        out.push(chap(&ChapRepr {
                            identifier: repr.identifier,
                            body: ChapBody::Response { value: &value, name },
                        }));
                        None
                    }
                    // RFC 2759 §5: the peer checks the authenticator response; a wrong
                    // one ends the link as a failure would.
                    ChapBody::Success { message } => {
                        let genuine =
                            expected.is_some() && mschapv2::success_auth_string(message) == expected.as_deref();
                        Some(if genuine { Outcome::Success } else { Outcome::Failure })
                    }
                    ChapBody::Failure { .. } => Some(Outcome::Failure),
                    ChapBody::Response { .. } => None,
                }
            }
            Peer::Pap { id, timer, done, .. } => {
                let repr = ControlRepr::parse(&view).ok()?;
                if repr.identifier != *id || *done {
                    return None;
                }
                let outcome = match repr.code {
                    PAP_ACK => Outcome::Success,
                    PAP_NAK => Outcome::Failure,
                    _ => return None,
                };
                *timer = None;
                *done = true;
                Some(outcome)
            }
        }
    }
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn md5_response_is_rfc1994_hash() {
        // MD5 of the stream id ‖ secret ‖ challenge, computed independently (RFC 1321's
        // test vector: MD5("abc") = 900150983cd24fb0d6963f7d28e17f72): id 'a', secret
        // "b", challenge "c" make the stream "abc".
        let hash = chap_md5(b'a', b"b", b"c");
        assert_eq!(
            hash,
            [0x90, 0x01, 0x50, 0x98, 0x3c, 0xd2, 0x4f, 0xb0, 0xd6, 0x96, 0x3f, 0x7d, 0x28, 0xe1, 0x7f, 0x72]
        );
    }

    #[test]
    fn chap_exchange_succeeds_with_the_secret_and_fails_without() {
        for (secret, expected) in [(&b"s3cret"[..], Outcome::Success), (&b"wrong"[..], Outcome::Failure)] {
            let mut server = Authenticator::chap(b"pppoe-srv", b"s3cret", [7; 16], 1);
            let mut client = Peer::chap(b"client", secret);
            let mut out = Vec::new();
            server.start(0, &mut out);
            // Challenge: code 1, id 1, length 4 + 1 + 16 + 9, value size 16.
            assert_eq!(&out[0][..5], &[1, 1, 0, 30, 16]);
            let challenge = out.pop().unwrap();
            client.input(&challenge, &mut out);
            let response = out.pop().unwrap();
            assert_eq!(&response[..5], &[2, 1, 0, 4 + 1 + 16 + 6, 16]);
            assert_eq!(&response[5..21], &chap_md5(1, secret, &[7; 16]));
            assert_eq!(server.input(&response, &mut out), Some(expected));
            let verdict = out.pop().unwrap();
            assert_eq!(verdict[0], if expected == Outcome::Success { 3 } else { 4 });
            assert_eq!(client.input(&verdict, &mut out), Some(expected));
        }
    }

    #[test]
    fn mschapv2_exchange_checks_both_ways() {
        // RFC 2759 §9.2's user, password and challenges: the Response must carry its
        // NT-Response and the Success its authenticator response.
        let auth_challenge =
            [0x5B, 0x5D, 0x7C, 0x7D, 0x7B, 0x3F, 0x2F, 0x3E, 0x3C, 0x2C, 0x60, 0x21, 0x32, 0x26, 0x26, 0x28];
        let peer_challenge =
            [0x21, 0x40, 0x23, 0x24, 0x25, 0x5E, 0x26, 0x2A, 0x28, 0x29, 0x5F, 0x2B, 0x3A, 0x33, 0x7C, 0x7E];
        let nt_response = [
            0x82, 0x30, 0x9E, 0xCD, 0x8D, 0x70, 0x8B, 0x5E, 0xA0, 0x8F, 0xAA, 0x39, 0x81, 0xCD, 0x83, 0x54, 0x42, 0x33,
            0x11, 0x4A, 0x3D, 0x85, 0xD6, 0xDF,
        ];
        for (secret, expected) in [(&b"clientPass"[..], Outcome::Success), (&b"wrong"[..], Outcome::Failure)] {
            let mut server = Authenticator::mschapv2(b"pptpd", b"clientPass", auth_challenge, 9);
            let mut client = Peer::mschapv2(b"User", secret, peer_challenge);
            let mut out = Vec::new();
            server.start(0, &mut out);
            let challenge = out.pop().unwrap();
            assert_eq!(&challenge[..5], &[1, 9, 0, 4 + 1 + 16 + 5, 16]);
            client.input(&challenge, &mut out);
            let response = out.pop().unwrap();
            // Code 2, Value-Size 49 (RFC 2759 §4), the name after the value.
            assert_eq!(&response[..5], &[2, 9, 0, 4 + 1 + 49 + 4, 49]);
            assert_eq!(&response[54..], b"User");
            if expected == Outcome::Success {
                assert_eq!(&response[5 + 24..5 + 48], &nt_response);
            }
            assert_eq!(server.input(&response, &mut out), Some(expected));
            let verdict = out.pop().unwrap();
            if expected == Outcome::Success {
                assert_eq!(&verdict[4..46], b"S=407A5589115FD0D6209F510FE9C04566932CDA56");
            } else {
                assert_eq!(&verdict[4..10], b"E=691 ");
            }
            assert_eq!(client.input(&verdict, &mut out), Some(expected));
        }
        // A Success with a forged authenticator response fails at the peer (RFC 2759 §5).
        let mut client = Peer::mschapv2(b"User", b"clientPass", peer_challenge);
        let mut out = Vec::new();
        let mut server = Authenticator::mschapv2(b"pptpd", b"clientPass", auth_challenge, 1);
        server.start(0, &mut out);
        let challenge = out.pop().unwrap();
        client.input(&challenge, &mut out);
        let forged = chap(&ChapRepr {
            identifier: 1,
            body: ChapBody::Success { message: b"S=0000000000000000000000000000000000000000 M=hi" },
        });
        assert_eq!(client.input(&forged, &mut out), Some(Outcome::Failure));
    }

    #[test]
    fn pap_request_bytes_and_ack() {
        let mut client = Peer::pap(b"joe", b"pw");
        let mut server = Authenticator::pap(b"joe", b"pw");
        let mut out = Vec::new();
        client.start(0, &mut out);
        // RFC 1334 §2.2.1: code 1, id 1, length 4+1+3+1+2 = 11, "joe", "pw".
        assert_eq!(out[0], [1, 1, 0, 11, 3, b'j', b'o', b'e', 2, b'p', b'w']);
        let request = out.pop().unwrap();
        assert_eq!(server.input(&request, &mut out), Some(Outcome::Success));
        assert_eq!(out[0][0], PAP_ACK);
        let ack = out.pop().unwrap();
        assert_eq!(client.input(&ack, &mut out), Some(Outcome::Success));
        assert_eq!(client.poll_at(), None);
    }
}
