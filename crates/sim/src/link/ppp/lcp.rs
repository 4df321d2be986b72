//! LCP's configuration options (RFC 1661 §6) for a PPP link over PPPoE.
//!
//! Standards: RFC 1661 §6.1 (Maximum-Receive-Unit, default 1500), §6.2
//! (Authentication-Protocol), §6.4 (Magic-Number and loop detection), §5.3-§5.4 (Nak
//! with the value wanted, Reject of what is not understood, Reject before Nak);
//! RFC 1994 §3 (CHAP's option: protocol c223, algorithm 5 = MD5); RFC 1334 §3 (PAP:
//! c023); RFC 2759 §2 (MS-CHAPv2: CHAP with algorithm 0x81); RFC 2516 §7 (over PPPoE:
//! MRU at most 1492; ACCM, PFC and ACFC not used, so they are rejected there); RFC 1661
//! §6.5-§6.6 (Protocol-Field- and Address-and-Control-Field-Compression), asked for and
//! accepted on links that set `compress` (PPTP's, whose PPP header is then the one
//! octet seed 002 §3.4 counts).

use wire::ppp::{Code, LcpOption, Protocol};

use super::fsm::Options;

/// RFC 1661 §6.1: the MRU both ends assume until one is negotiated.
pub const DEFAULT_MRU: u16 = 1500;
/// RFC 1994 §3: the Algorithm octet of CHAP with MD5.
pub const CHAP_MD5: u8 = 5;

/// How a peer authenticates (RFC 1661 §6.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Auth {
    /// RFC 1994 with MD5.
    Chap,
    /// RFC 1334 §2.
    Pap,
    /// RFC 2759: MS-CHAPv2.
    MsChapV2,
}

impl Auth {
    fn option(self) -> LcpOption<'static> {
        match self {
            Auth::Chap => LcpOption::AuthProtocol { protocol: Protocol::Chap, data: &[CHAP_MD5] },
            Auth::Pap => LcpOption::AuthProtocol { protocol: Protocol::Pap, data: &[] },
            Auth::MsChapV2 => LcpOption::AuthProtocol { protocol: Protocol::Chap, data: &[wire::mschapv2::ALGORITHM] },
        }
    }

    fn from_option(protocol: Protocol, data: &[u8]) -> Option<Auth> {
        match (protocol, data) {
            (Protocol::Chap, [CHAP_MD5]) => Some(Auth::Chap),
            (Protocol::Pap, []) => Some(Auth::Pap),
            (Protocol::Chap, [wire::mschapv2::ALGORITHM]) => Some(Auth::MsChapV2),
            _ => None,
        }
    }
}

/// One end's LCP options: what it asks for and what it agreed to.
#[derive(Debug, Clone)]
pub struct LcpOptions {
    /// Our MRU, requested when it differs from 1500 (RFC 1661 §6.1).
    pub mru: u16,
    pub magic: u32,
    /// The authentication we demand of the peer (the authenticator's side).
    pub require: Option<Auth>,
    /// The authentication we are willing to do for the peer.
    pub willing: Option<Auth>,
    /// The peer's MRU: the largest PPP information field we may send it.
    pub peer_mru: u16,
    /// The authentication the peer demanded of us, once acknowledged.
    pub peer_requires: Option<Auth>,
    /// Ask for PFC and ACFC and accept them (RFC 1661 §6.5, §6.6); off over PPPoE
    /// (RFC 2516 §7), on over PPTP.
    pub compress: bool,
    /// The peer asked for PFC / ACFC and we acknowledged: frames to it may carry a
    /// one-octet protocol field / no address and control field.
    pub peer_pfc: bool,
    pub peer_acfc: bool,
    send_compress: bool,
    send_mru: bool,
    send_magic: bool,
    /// Values for the magic number to take after a loop-back Nak (RFC 1661 §6.4).
    reseed: u32,
}

impl LcpOptions {
    pub fn new(mru: u16, magic: u32, require: Option<Auth>, willing: Option<Auth>) -> LcpOptions {
        LcpOptions {
            mru,
            magic,
            require,
            willing,
            peer_mru: DEFAULT_MRU,
            peer_requires: None,
            compress: false,
            peer_pfc: false,
            peer_acfc: false,
            send_compress: true,
            send_mru: mru != DEFAULT_MRU,
            send_magic: true,
            reseed: magic.rotate_left(13) ^ 0x9e37_79b9,
        }
    }
}

fn push(option: LcpOption<'_>, out: &mut Vec<u8>) {
    wire::ppp::emit_lcp_options(&[option], out);
}

impl Options for LcpOptions {
    fn request(&self) -> Vec<u8> {
        let mut data = Vec::new();
        if self.send_mru {
            push(LcpOption::Mru(self.mru), &mut data);
        }
        if let Some(auth) = self.require {
            push(auth.option(), &mut data);
        }
        if self.send_magic {
            push(LcpOption::MagicNumber(self.magic), &mut data);
        }
        if self.compress && self.send_compress {
            push(LcpOption::Pfc, &mut data);
            push(LcpOption::Acfc, &mut data);
        }
        data
    }

    fn check(&mut self, data: &[u8], reject_naks: bool) -> Result<(), (Code, Vec<u8>)> {
        let (mut nak, mut reject) = (Vec::new(), Vec::new());
        let (mut mru, mut auth) = (DEFAULT_MRU, None);
        let (mut pfc, mut acfc) = (false, false);
        let mut rest = data;
        while !rest.is_empty() {
            let Ok((option, len)) = LcpOption::parse(rest) else {
                // A malformed option: reject the remainder as it stands.
                reject.extend_from_slice(rest);
                break;
            };
            let raw = &rest[..len];
            rest = &rest[len..];
            match option {
                // RFC 1661 §6.1 allows any MRU; 68 is IPv4's least MTU (RFC 791).
                LcpOption::Mru(v) if v >= 68 => mru = v,
                LcpOption::Mru(_) => push(LcpOption::Mru(68), &mut nak),
                LcpOption::MagicNumber(m) if m != self.magic && m != 0 => {}
                LcpOption::MagicNumber(_) => {
                    // RFC 1661 §6.4: equal magic numbers suggest a looped-back link; Nak
                    // with another value (and choose a new one ourselves).
                    self.magic = self.reseed;
                    self.reseed = self.reseed.rotate_left(7).wrapping_mul(0x2545_f491);
                    push(LcpOption::MagicNumber(self.magic ^ 0x5555_5555), &mut nak);
                }
                LcpOption::AuthProtocol { protocol, data } => match (Auth::from_option(protocol, data), self.willing) {
                    (Some(a), Some(w)) if a == w => auth = Some(a),
                    // RFC 1661 §6.2: Nak with the protocol we would rather use.
                    (_, Some(w)) => push(w.option(), &mut nak),
                    (_, None) => reject.extend_from_slice(raw),
                },
                LcpOption::Pfc if self.compress => pfc = true,
                LcpOption::Acfc if self.compress => acfc = true,
                _ => reject.extend_from_slice(raw),
            }
        }
        if !reject.is_empty() {
            return Err((Code::ConfigureReject, reject));
        }
        if !nak.is_empty() {
            return Err(if reject_naks { (Code::ConfigureReject, data.to_vec()) } else { (Code::ConfigureNak, nak) });
        }
        self.peer_mru = mru;
        self.peer_requires = auth;
        self.peer_pfc = pfc;
        self.peer_acfc = acfc;
        Ok(())
    }

    fn acked(&mut self, _data: &[u8]) {}

    fn refused(&mut self, nak: bool, data: &[u8]) {
        for option in wire::ppp::LcpOptionIter::new(data).flatten() {
            match (nak, option) {
                (true, LcpOption::Mru(v)) => self.mru = v.min(self.mru),
                (false, LcpOption::Mru(_)) => self.send_mru = false,
                (true, LcpOption::MagicNumber(m)) => self.magic = m ^ self.reseed,
                (false, LcpOption::MagicNumber(_)) => self.send_magic = false,
                (false, LcpOption::Pfc | LcpOption::Acfc) => self.send_compress = false,
                // The peer will not do the authentication we demand: keep demanding it;
                // the link fails after Max-Configure (RFC 1661 §6.2, "the
                // implementation... MUST NOT" open without it).
                _ => {}
            }
        }
    }
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn request_bytes_follow_rfc1661_section6() {
        let server = LcpOptions::new(1492, 0x1234_5678, Some(Auth::Chap), None);
        // MRU 1492 (01 04 05d4), Auth-Protocol CHAP MD5 (03 05 c223 05), Magic (05 06 ...).
        assert_eq!(
            server.request(),
            [0x01, 0x04, 0x05, 0xd4, 0x03, 0x05, 0xc2, 0x23, 0x05, 0x05, 0x06, 0x12, 0x34, 0x56, 0x78]
        );
        let plain = LcpOptions::new(1500, 1, None, None);
        assert_eq!(plain.request(), [0x05, 0x06, 0, 0, 0, 1], "MRU 1500 is the default: not requested");
    }

    #[test]
    fn client_accepts_chap_naks_pap_and_rejects_acfc() {
        let mut client = LcpOptions::new(1492, 7, None, Some(Auth::Chap));
        let chap = [0x01, 0x04, 0x05, 0xd4, 0x03, 0x05, 0xc2, 0x23, 0x05, 0x05, 0x06, 0, 0, 0, 9];
        assert_eq!(client.check(&chap, false), Ok(()));
        assert_eq!((client.peer_mru, client.peer_requires), (1492, Some(Auth::Chap)));
        let pap = [0x03, 0x04, 0xc0, 0x23];
        assert_eq!(client.check(&pap, false), Err((Code::ConfigureNak, vec![0x03, 0x05, 0xc2, 0x23, 0x05])));
        // ACFC (08 02) is rejected even beside an option that would be Nak'd (§5.4).
        let mixed = [0x03, 0x04, 0xc0, 0x23, 0x08, 0x02];
        assert_eq!(client.check(&mixed, false), Err((Code::ConfigureReject, vec![0x08, 0x02])));
    }

    #[test]
    fn compressing_link_asks_for_and_takes_pfc_acfc_and_mschapv2() {
        // RFC 1661 §6.5 (07 02), §6.6 (08 02); RFC 2759 §2: CHAP algorithm 0x81.
        let mut server = LcpOptions::new(1500, 0x0102_0304, Some(Auth::MsChapV2), None);
        server.compress = true;
        assert_eq!(server.request(), [0x03, 0x05, 0xc2, 0x23, 0x81, 0x05, 0x06, 1, 2, 3, 4, 0x07, 0x02, 0x08, 0x02]);
        let mut client = LcpOptions::new(1500, 9, None, Some(Auth::MsChapV2));
        client.compress = true;
        assert_eq!(client.check(&server.request(), false), Ok(()));
        assert_eq!((client.peer_requires, client.peer_pfc, client.peer_acfc), (Some(Auth::MsChapV2), true, true));
        // A peer that rejects them is not asked again.
        server.refused(false, &[0x07, 0x02, 0x08, 0x02]);
        assert_eq!(server.request(), [0x03, 0x05, 0xc2, 0x23, 0x81, 0x05, 0x06, 1, 2, 3, 4]);
    }

    #[test]
    fn equal_magic_numbers_are_naked() {
        let mut a = LcpOptions::new(1500, 42, None, None);
        let looped = [0x05, 0x06, 0, 0, 0, 42];
        let Err((code, data)) = a.check(&looped, false) else { panic!("a loop must be refused") };
        assert_eq!(code, Code::ConfigureNak);
        assert_eq!(&data[..2], &[0x05, 0x06]);
        assert_ne!(a.magic, 42, "RFC 1661 §6.4: choose a new magic number");
    }
}
