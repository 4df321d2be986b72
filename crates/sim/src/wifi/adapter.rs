//! What an 802.11 port does to frames between a node's Ethernet side and the air:
//! the address rules of IEEE 802.11-2020 Table 9-26 (seed 000's Table 1) for station
//! adapters, access points and ad hoc cells, and the link ciphers of clause 12.
//!
//! Standards a reader must know (IEEE Std 802.11-2020):
//!
//! * §9.3.2.1, Table 9-26 — the four To DS/From DS cases of a data frame:
//!
//!   | case (From DS, To DS) | who sends           | Address 1  | Address 2  | Address 3 | Address 4 |
//!   |-----------------------|---------------------|------------|------------|-----------|-----------|
//!   | 00                    | station, IBSS       | DA         | SA         | BSSID     | –         |
//!   | 10                    | AP to station       | DA         | BSSID      | SA        | –         |
//!   | 01                    | station to AP       | BSSID      | SA         | DA        | –         |
//!   | 11                    | WDS (repeater)      | RA         | TA         | DA        | SA        |
//!
//!   The labels are seed 000's (From DS then To DS), which `wire::dot11` explains.
//! * §5.1.5 and §11.3: a non-AP station sends data only to its AP (case 01) or, in an
//!   IBSS, directly (case 00); in both cases Address 2 — the transmitter — is also the
//!   source address, so a station's frames can only carry *its own* MAC as source.
//!   Seed 000 §2.1: this is why a Windows XP layer-2 bridge cannot forward a wired
//!   host's frames through its single wireless adapter — the wired host's MAC (the SA)
//!   has no field to travel in unless both ends speak case 11, which station adapters
//!   do not. Drivers either refuse such a frame or overwrite its source address.
//! * §10.3.6 / §9.2.4.3.3 (address filtering): a station's MAC passes up only frames
//!   whose Address 1 is its own individual address or a group address it listens to.
//!   A frame the AP sends to another station is not delivered, which breaks the
//!   reverse direction of seed 000's L2 bridge (Fig. 5-D).
//! * §12.3.2 WEP, §12.5.2 TKIP, §12.5.3 CCMP: the frame body is replaced by the
//!   cipher's header, the encrypted body and its trailer, and the Protected Frame bit
//!   is set (§9.2.4.1.9). The MAC header stays in clear.
//! * RFC 1042 / IEEE 802.1H: an Ethernet II frame's EtherType and payload travel as an
//!   LLC/SNAP MSDU; the Ethernet addresses travel in the 802.11 address fields.
//!
//! Ethernet frames here are Ethernet II frames without FCS (what a node's IP stack or
//! bridge hands to a port); MPDUs are 802.11 frames without FCS (the medium adds the
//! 4-byte FCS to the air time; see [`super::bss`]).
//!
//! The plain functions ([`station_uplink`], [`ap_downlink`], [`ibss_send`],
//! [`station_accepts`], [`ap_accepts`]) apply the address rules to open frames.
//! [`Adapter`] is one port: its role, its address policy and its cipher with its
//! per-sender counters; each conversion also returns how many bytes went through
//! the cipher and which one, so the world can charge the node's CPU
//! (`CpuCycles::per_byte_rc4` or `per_byte_aes`).

use std::fmt;
use wire::dot11::{DataRepr, Frame, FrameType};
use wire::dot11_crypto::{self, Security as Cipher, TkipHeader, TkipRepr};
use wire::ethernet::{self, Address, EtherType};
use wire::llc;

use qoslab_plan::WifiSecurity;

/// What a station does with an Ethernet frame whose source is not its own MAC: the
/// plan's type.
pub use qoslab_plan::ForeignSource;

/// Why a frame went no further. `Display` gives a sentence `qoslab reach` can print.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DropReason {
    /// A station was handed a frame whose Ethernet source is another node's MAC,
    /// and its policy is [`ForeignSource::Drop`] (seed 000 §2.1).
    ForeignSourceAddress {
        /// The frame's source MAC.
        source: Address,
        /// The station's own MAC.
        station: Address,
    },
    /// A station adapter received a frame whose Address 1 is neither its MAC nor a
    /// group address (§10.3.6 address filtering).
    NotForThisAdapter {
        /// Address 1 of the frame.
        receiver: Address,
        /// The adapter's MAC.
        adapter: Address,
    },
    /// A station received, relayed by its AP, a group-addressed frame it sent
    /// itself (source address = its own MAC); stations discard these.
    OwnGroupEcho {
        /// The adapter's MAC.
        adapter: Address,
    },
    /// The frame's To DS/From DS case is not one this end accepts.
    WrongDirection {
        /// From DS × 2 + To DS, as in seed 000's Table 1 labels read in binary.
        ds: u8,
        /// Who refused it and why.
        why: &'static str,
    },
    /// A frame for another BSS (BSSID mismatch).
    OtherBss {
        /// The BSSID the frame carries.
        bssid: Address,
        /// Ours.
        ours: Address,
    },
    /// Not a well-formed frame of the kind expected.
    Malformed {
        /// What was being parsed.
        what: &'static str,
        /// The wire crate's error.
        error: wire::Error,
    },
    /// The cipher refused the frame: ICV or MIC does not verify, or it arrived
    /// with the wrong protection.
    Undecryptable {
        /// The link's cipher.
        cipher: Cipher,
        /// What went wrong.
        why: &'static str,
    },
    /// The member's transmit queue was full (drop-tail).
    QueueFull {
        /// The queue's capacity in frames.
        capacity: usize,
    },
    /// No Ack (or CTS) after the retry limit (§10.3.4.4).
    RetryLimit {
        /// Exchanges attempted for the frame.
        attempts: u32,
    },
    /// Sent once on a link without link acknowledgements (seed 004's WaveLAN) and not
    /// received by its addressee: a collision, a frame error, or out of its range.
    NotReceived,
}

impl fmt::Display for DropReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DropReason::ForeignSourceAddress { source, station } => write!(
                f,
                "station adapter sends only 3-address frames from its own MAC \
                 (802.11 Table 9-26 case 01): frame from {source} through {station} dropped"
            ),
            DropReason::NotForThisAdapter { receiver, adapter } => write!(
                f,
                "station adapter accepts only frames addressed to its own MAC: \
                 frame for {receiver} dropped (adapter {adapter})"
            ),
            DropReason::OwnGroupEcho { adapter } => {
                write!(f, "group-addressed frame from {adapter} relayed back to it by the AP: discarded")
            }
            DropReason::WrongDirection { ds, why } => {
                write!(f, "802.11 frame with DS bits {ds:02b} dropped: {why}")
            }
            DropReason::OtherBss { bssid, ours } => {
                write!(f, "802.11 frame for BSS {bssid} dropped by BSS {ours}")
            }
            DropReason::Malformed { what, error } => write!(f, "malformed {what}: {error}"),
            DropReason::Undecryptable { cipher, why } => {
                write!(f, "802.11 frame dropped by {cipher}: {why}")
            }
            DropReason::NotReceived => {
                write!(f, "802.11 frame sent once without link acknowledgements, not received by its addressee")
            }
            DropReason::QueueFull { capacity } => {
                write!(f, "802.11 transmit queue full ({capacity} frames): frame dropped")
            }
            DropReason::RetryLimit { attempts } => {
                write!(f, "802.11 frame dropped after {attempts} unacknowledged attempts (retry limit)")
            }
        }
    }
}

impl std::error::Error for DropReason {}

// ---------------------------------------------------------------------------
// Ethernet ⇄ MPDU
// ---------------------------------------------------------------------------

/// Frame Control octet 1, Protected Frame bit (§9.2.4.1.9).
const PROTECTED_BIT: u8 = 0x40;

fn malformed(what: &'static str) -> impl Fn(wire::Error) -> DropReason {
    move |error| DropReason::Malformed { what, error }
}

/// The header of an Ethernet II frame and its payload.
fn parse_ethernet(eth: &[u8]) -> Result<(ethernet::Repr, &[u8]), DropReason> {
    ethernet::decapsulate(eth, false).map_err(malformed("Ethernet II frame"))
}

/// An MPDU without FCS: `repr`'s MAC header, then LLC/SNAP and the payload.
fn build_mpdu(repr: &DataRepr, ethertype: EtherType, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(repr.header_len() + llc::LLC_SNAP_LEN + payload.len());
    out.resize(repr.header_len(), 0);
    repr.emit(&mut Frame::new_unchecked(&mut out[..]));
    llc::Repr::ethertype(ethertype).encapsulate(payload, &mut out);
    out
}

/// An Ethernet II frame without FCS.
fn build_ethernet(dst: Address, src: Address, ethertype: EtherType, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(ethernet::HEADER_LEN + payload.len());
    ethernet::Repr { src_addr: src, dst_addr: dst, ethertype }.encapsulate(payload, false, &mut out);
    out
}

/// The data frame header of an MPDU without FCS.
fn parse_data_header(mpdu: &[u8]) -> Result<DataRepr, DropReason> {
    let frame = Frame::new_checked(mpdu).map_err(malformed("802.11 frame"))?;
    if frame.frame_control().frame_type != FrameType::Data {
        return Err(DropReason::Malformed { what: "802.11 data frame", error: wire::Error::Unsupported });
    }
    DataRepr::parse(&frame).map_err(malformed("802.11 data frame"))
}

/// The Ethernet frame an open MSDU body (LLC/SNAP + payload) stands for.
fn body_to_ethernet(da: Address, sa: Address, body: &[u8]) -> Result<Vec<u8>, DropReason> {
    let (llc, payload) = llc::Repr::decapsulate(body).map_err(malformed("LLC/SNAP header"))?;
    let ethertype = llc
        .as_ethertype()
        .ok_or(DropReason::Malformed { what: "LLC/SNAP header (no EtherType)", error: wire::Error::Unsupported })?;
    Ok(build_ethernet(da, sa, ethertype, payload))
}

/// The source a station may put on the air for `eth_source`, by `policy`.
fn station_source(eth_source: Address, station_mac: Address, policy: ForeignSource) -> Result<Address, DropReason> {
    if eth_source == station_mac || policy == ForeignSource::Rewrite {
        Ok(station_mac)
    } else {
        Err(DropReason::ForeignSourceAddress { source: eth_source, station: station_mac })
    }
}

/// Station → AP. Without `wds`, case 01 (To DS): A1 = BSSID, A2 = SA, A3 = DA; a frame
/// whose source is not `station_mac` is dropped or rewritten by `policy`. With `wds`
/// (both ends repeaters), case 11: A1 = RA = BSSID, A2 = TA = `station_mac`, A3 = DA,
/// A4 = SA, the source kept whatever it is. Returns the MPDU without FCS.
pub fn station_uplink(
    eth: &[u8],
    station_mac: Address,
    bssid: Address,
    policy: ForeignSource,
    wds: bool,
) -> Result<Vec<u8>, DropReason> {
    let (eth_repr, payload) = parse_ethernet(eth)?;
    let repr = if wds {
        DataRepr::wds(bssid, station_mac, eth_repr.dst_addr, eth_repr.src_addr)
    } else {
        let sa = station_source(eth_repr.src_addr, station_mac, policy)?;
        DataRepr::to_ap(bssid, sa, eth_repr.dst_addr)
    };
    Ok(build_mpdu(&repr, eth_repr.ethertype, payload))
}

/// AP → station. With `wds_receiver` `None`, case 10 (From DS): A1 = DA, A2 = BSSID,
/// A3 = SA. With `Some(ra)`, case 11 to the repeater `ra`: A1 = RA, A2 = TA = BSSID,
/// A3 = DA, A4 = SA. Returns the MPDU without FCS.
///
/// (The brief's `wds: bool` becomes the repeater's address: a 4-address frame's
/// receiver is not its destination, so the AP must say which station relays it.)
pub fn ap_downlink(eth: &[u8], bssid: Address, wds_receiver: Option<Address>) -> Result<Vec<u8>, DropReason> {
    let (eth_repr, payload) = parse_ethernet(eth)?;
    let repr = match wds_receiver {
        Some(ra) => DataRepr::wds(ra, bssid, eth_repr.dst_addr, eth_repr.src_addr),
        None => DataRepr::from_ap(eth_repr.dst_addr, bssid, eth_repr.src_addr),
    };
    Ok(build_mpdu(&repr, eth_repr.ethertype, payload))
}

/// Station → station in an IBSS (ad hoc cell, no AP), case 00: A1 = DA, A2 = SA,
/// A3 = BSSID; the source rule is the same as [`station_uplink`]'s.
pub fn ibss_send(
    eth: &[u8],
    station_mac: Address,
    bssid: Address,
    policy: ForeignSource,
) -> Result<Vec<u8>, DropReason> {
    let (eth_repr, payload) = parse_ethernet(eth)?;
    let sa = station_source(eth_repr.src_addr, station_mac, policy)?;
    let repr = DataRepr::ibss(eth_repr.dst_addr, sa, bssid);
    Ok(build_mpdu(&repr, eth_repr.ethertype, payload))
}

/// The (DA, SA) a station adapter passes up for `repr`, or why it does not.
fn station_rx_addresses(repr: &DataRepr, station_mac: Address, wds: bool) -> Result<(Address, Address), DropReason> {
    let receiver = repr.receiver();
    if receiver != station_mac && !receiver.is_multicast() {
        return Err(DropReason::NotForThisAdapter { receiver, adapter: station_mac });
    }
    let ds = repr.addresses.ds_field();
    match repr.addresses.ds_bits() {
        (true, false) => {
            return Err(DropReason::WrongDirection {
                ds,
                why: "a station does not accept frames sent to the distribution system",
            })
        }
        (true, true) if !wds => {
            return Err(DropReason::WrongDirection {
                ds,
                why: "4-address (WDS) frame; station adapters support only 3-address frames",
            })
        }
        _ => {}
    }
    let (da, sa) = (repr.destination(), repr.source());
    if receiver.is_multicast() && sa == station_mac {
        return Err(DropReason::OwnGroupEcho { adapter: station_mac });
    }
    Ok((da, sa))
}

/// The (DA, SA) an AP passes to its distribution system for `repr`, or why not.
fn ap_rx_addresses(repr: &DataRepr, bssid: Address, wds: bool) -> Result<(Address, Address), DropReason> {
    let ds = repr.addresses.ds_field();
    match repr.addresses.ds_bits() {
        (true, false) => {}
        (true, true) if wds => {}
        (true, true) => {
            return Err(DropReason::WrongDirection { ds, why: "4-address (WDS) frame and this AP has no WDS link" })
        }
        _ => {
            return Err(DropReason::WrongDirection {
                ds,
                why: "an AP accepts only frames sent to the distribution system (To DS)",
            })
        }
    }
    if repr.receiver() != bssid {
        return Err(DropReason::OtherBss { bssid: repr.receiver(), ours: bssid });
    }
    Ok((repr.destination(), repr.source()))
}

/// A station adapter receives an open MPDU (no FCS): it accepts case 10 and case 00
/// frames whose Address 1 is `station_mac` or a group address (and case 11 with
/// `wds`), and returns the Ethernet frame (DA, SA from Table 9-26). Anything
/// addressed elsewhere is [`DropReason::NotForThisAdapter`]; a group frame the station
/// itself sent, relayed back by the AP, is [`DropReason::OwnGroupEcho`].
pub fn station_accepts(mpdu: &[u8], station_mac: Address, wds: bool) -> Result<Vec<u8>, DropReason> {
    let repr = parse_data_header(mpdu)?;
    let (da, sa) = station_rx_addresses(&repr, station_mac, wds)?;
    if repr.protected {
        return Err(DropReason::Undecryptable {
            cipher: Cipher::Open,
            why: "protected frame received by an open adapter",
        });
    }
    body_to_ethernet(da, sa, &mpdu[repr.header_len()..])
}

/// An AP receives an open MPDU (no FCS): case 01 frames whose Address 1 is `bssid`
/// (and case 11 with `wds`), returned as the Ethernet frame its bridge forwards
/// (DA = A3, SA = A2, or A4 in case 11).
pub fn ap_accepts(mpdu: &[u8], bssid: Address, wds: bool) -> Result<Vec<u8>, DropReason> {
    let repr = parse_data_header(mpdu)?;
    let (da, sa) = ap_rx_addresses(&repr, bssid, wds)?;
    if repr.protected {
        return Err(DropReason::Undecryptable { cipher: Cipher::Open, why: "protected frame received by an open AP" });
    }
    body_to_ethernet(da, sa, &mpdu[repr.header_len()..])
}

// ---------------------------------------------------------------------------
// Ciphers
// ---------------------------------------------------------------------------

/// The default WEP-40 key when the configuration gives none: 01 02 03 04 05. Any key
/// gives the same lengths and timing; this one is only for the bytes to be real.
pub const DEFAULT_WEP40_KEY: [u8; dot11_crypto::WEP40_KEY_LEN] = [1, 2, 3, 4, 5];
/// The default WEP-104 key: 01 02 … 0d.
pub const DEFAULT_WEP104_KEY: [u8; dot11_crypto::WEP104_KEY_LEN] = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13];
/// The default CCMP-128 temporal key: 00 01 … 0f.
pub const DEFAULT_CCMP_TK: [u8; dot11_crypto::CCMP_TK_LEN] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15];

/// Which per-byte CPU cost a cipher's bytes incur.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CipherCost {
    /// No cipher.
    None,
    /// RC4 (WEP, TKIP): `CpuCycles::per_byte_rc4`.
    Rc4,
    /// AES (CCMP): `CpuCycles::per_byte_aes`.
    Aes,
}

/// One link's cipher, its key and this end's counter (WEP IV, TKIP TSC or CCMP PN).
///
/// * WEP-40/104: real RC4 and CRC-32 ICV (wire's [`dot11_crypto::wep_encapsulate`]),
///   key ID 0, IV = a 24-bit counter from 0 (what many cards did).
/// * CCMP-128: real AES-CCM (wire's [`dot11_crypto::ccmp_encapsulate`]), PN from 1.
/// * TKIP: the bytes and lengths of §12.5.2.2 (header with ExtIV and TSC, data, 8-byte
///   MIC, 4-byte ICV), but the data is **not** encrypted and the MIC and ICV are zeros:
///   wire models TKIP as framing only (no per-packet key mixing or Michael). The byte
///   count returned is still what RC4 would process, so CPU costs are right.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LinkCipher {
    cipher: Cipher,
    key: Vec<u8>,
    next_counter: u64,
}

impl LinkCipher {
    /// No encryption.
    pub fn open() -> Self {
        LinkCipher { cipher: Cipher::Open, key: Vec::new(), next_counter: 0 }
    }

    /// WEP with a 5-byte (WEP-40) or 13-byte (WEP-104) key.
    pub fn wep(key: &[u8]) -> Result<Self, String> {
        let cipher = match key.len() {
            dot11_crypto::WEP40_KEY_LEN => Cipher::Wep40,
            dot11_crypto::WEP104_KEY_LEN => Cipher::Wep104,
            n => return Err(format!("a WEP key has 5 or 13 bytes, not {n}")),
        };
        Ok(LinkCipher { cipher, key: key.to_vec(), next_counter: 0 })
    }

    /// TKIP framing (see the type's doc).
    pub fn tkip() -> Self {
        LinkCipher { cipher: Cipher::Tkip, key: Vec::new(), next_counter: 1 }
    }

    /// CCMP-128 with temporal key `tk`.
    pub fn ccmp(tk: [u8; dot11_crypto::CCMP_TK_LEN]) -> Self {
        LinkCipher { cipher: Cipher::Ccmp, key: tk.to_vec(), next_counter: 1 }
    }

    /// The cipher `WifiConfig::security` names, with the default keys above.
    pub fn from_security(security: WifiSecurity) -> Self {
        match security {
            WifiSecurity::Open => LinkCipher::open(),
            WifiSecurity::Wep40 => LinkCipher::wep(&DEFAULT_WEP40_KEY).expect("the default WEP-40 key has 5 bytes"),
            WifiSecurity::Wep104 => LinkCipher::wep(&DEFAULT_WEP104_KEY).expect("the default WEP-104 key has 13 bytes"),
            WifiSecurity::Tkip => LinkCipher::tkip(),
            WifiSecurity::Ccmp => LinkCipher::ccmp(DEFAULT_CCMP_TK),
        }
    }

    /// The cipher.
    pub fn cipher(&self) -> Cipher {
        self.cipher
    }

    /// The key (empty for open and TKIP).
    pub fn key(&self) -> &[u8] {
        &self.key
    }

    /// Which CPU cost its bytes incur.
    pub fn cost(&self) -> CipherCost {
        match self.cipher {
            Cipher::Open => CipherCost::None,
            Cipher::Wep40 | Cipher::Wep104 | Cipher::Tkip => CipherCost::Rc4,
            Cipher::Ccmp => CipherCost::Aes,
        }
    }

    fn undecryptable(&self, why: &'static str) -> DropReason {
        DropReason::Undecryptable { cipher: self.cipher, why }
    }

    /// Encrypts the body of an open MPDU (no FCS) in place of it and sets the
    /// Protected bit; returns the bytes the cipher processed (0 when open).
    pub fn protect(&mut self, mpdu: &mut Vec<u8>) -> Result<usize, DropReason> {
        if self.cipher == Cipher::Open {
            return Ok(0);
        }
        let header_len = parse_data_header(mpdu)?.header_len();
        mpdu[1] |= PROTECTED_BIT;
        let plaintext = mpdu.split_off(header_len);
        let counter = self.next_counter;
        self.next_counter += 1;
        let processed = match self.cipher {
            Cipher::Open => unreachable!("handled above"),
            Cipher::Wep40 | Cipher::Wep104 => {
                let iv = (counter as u32 & 0x00ff_ffff).to_be_bytes();
                dot11_crypto::wep_encapsulate(&self.key, [iv[1], iv[2], iv[3]], 0, &plaintext, mpdu)
                    .map_err(|_| self.undecryptable("bad WEP key"))?;
                plaintext.len() + dot11_crypto::WEP_ICV_LEN
            }
            Cipher::Tkip => {
                let start = mpdu.len();
                mpdu.resize(start + dot11_crypto::TKIP_HEADER_LEN, 0);
                TkipRepr { tsc: counter & dot11_crypto::PN_MAX, key_id: 0 }
                    .emit(&mut TkipHeader::new_unchecked(&mut mpdu[start..]));
                mpdu.extend_from_slice(&plaintext);
                let trailer = dot11_crypto::TKIP_MIC_LEN + dot11_crypto::TKIP_ICV_LEN;
                mpdu.resize(mpdu.len() + trailer, 0);
                plaintext.len() + trailer
            }
            Cipher::Ccmp => {
                let tk: [u8; dot11_crypto::CCMP_TK_LEN] = self.key[..].try_into().expect("CCMP keys have 16 bytes");
                let header = mpdu.clone();
                dot11_crypto::ccmp_encapsulate(&tk, &header, counter & dot11_crypto::PN_MAX, 0, &plaintext, mpdu)
                    .map_err(|_| self.undecryptable("cannot build the CCMP AAD"))?;
                plaintext.len() + dot11_crypto::CCMP_MIC_LEN
            }
        };
        Ok(processed)
    }

    /// The open MPDU (no FCS) of a received one: the body decrypted and the Protected
    /// bit cleared; returns it with the bytes the cipher processed.
    pub fn unprotect(&self, mpdu: &[u8]) -> Result<(Vec<u8>, usize), DropReason> {
        let repr = parse_data_header(mpdu)?;
        match (self.cipher, repr.protected) {
            (Cipher::Open, false) => return Ok((mpdu.to_vec(), 0)),
            (Cipher::Open, true) => return Err(self.undecryptable("protected frame, no key")),
            (_, false) => return Err(self.undecryptable("unprotected frame on a protected link")),
            _ => {}
        }
        let header_len = repr.header_len();
        let (header, body) = mpdu.split_at(header_len);
        let mut out = header.to_vec();
        out[1] &= !PROTECTED_BIT;
        let processed = match self.cipher {
            Cipher::Open => unreachable!("handled above"),
            Cipher::Wep40 | Cipher::Wep104 => {
                dot11_crypto::wep_decapsulate(&self.key, body, &mut out)
                    .map_err(|_| self.undecryptable("WEP ICV does not verify (wrong key?)"))?;
                body.len() - dot11_crypto::WEP_IV_LEN
            }
            Cipher::Tkip => {
                let tkip = TkipHeader::new_checked(body).map_err(|_| self.undecryptable("truncated TKIP header"))?;
                TkipRepr::parse(&tkip).map_err(|_| self.undecryptable("TKIP header without ExtIV"))?;
                let trailer = dot11_crypto::TKIP_MIC_LEN + dot11_crypto::TKIP_ICV_LEN;
                let data = &body[dot11_crypto::TKIP_HEADER_LEN..];
                if data.len() < trailer {
                    return Err(self.undecryptable("TKIP body shorter than MIC and ICV"));
                }
                out.extend_from_slice(&data[..data.len() - trailer]);
                data.len()
            }
            Cipher::Ccmp => {
                let tk: [u8; dot11_crypto::CCMP_TK_LEN] = self.key[..].try_into().expect("CCMP keys have 16 bytes");
                dot11_crypto::ccmp_decapsulate(&tk, header, body, &mut out)
                    .map_err(|_| self.undecryptable("CCMP MIC does not verify (wrong key?)"))?;
                body.len() - dot11_crypto::CCMP_HEADER_LEN
            }
        };
        Ok((out, processed))
    }
}

// ---------------------------------------------------------------------------
// One port
// ---------------------------------------------------------------------------

/// What kind of 802.11 port.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Role {
    /// A non-AP station associated with the AP whose BSSID is `bssid`.
    Station {
        /// The adapter's MAC.
        mac: Address,
        /// The AP's BSSID (its MAC).
        bssid: Address,
    },
    /// The access point; its MAC is the BSSID.
    AccessPoint {
        /// The BSSID.
        bssid: Address,
    },
    /// A station of an IBSS (ad hoc cell).
    AdHoc {
        /// The adapter's MAC.
        mac: Address,
        /// The IBSS's BSSID.
        bssid: Address,
    },
}

/// A frame converted by an [`Adapter`], with the cipher work it cost.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Converted {
    /// The MPDU (no FCS) when sending, the Ethernet II frame (no FCS) when receiving.
    pub frame: Vec<u8>,
    /// Bytes encrypted or decrypted (cipher data plus ICV/MIC), 0 when open.
    pub cipher_bytes: usize,
    /// Which per-byte CPU cost those bytes incur.
    pub cost: CipherCost,
}

/// One 802.11 port: its role, its address policy and its cipher.
#[derive(Clone, Debug)]
pub struct Adapter {
    /// Station, AP or ad hoc station, with its addresses.
    pub role: Role,
    /// What a station does with frames from other sources.
    pub foreign_source: ForeignSource,
    /// Four-address frames between the AP and the stations (both repeaters).
    pub wds: bool,
    /// The link's cipher and this end's counter.
    pub cipher: LinkCipher,
}

impl Adapter {
    /// An adapter with the given role, policy, WDS flag and cipher.
    pub fn new(role: Role, foreign_source: ForeignSource, wds: bool, cipher: LinkCipher) -> Self {
        Adapter { role, foreign_source, wds, cipher }
    }

    /// The port's own MAC (the BSSID for an AP).
    pub fn mac(&self) -> Address {
        match self.role {
            Role::Station { mac, .. } | Role::AdHoc { mac, .. } => mac,
            Role::AccessPoint { bssid } => bssid,
        }
    }

    /// An Ethernet frame (no FCS) to send: the protected MPDU (no FCS). An AP with
    /// `wds` sends 4-address frames to `wds_receiver` (the station's MAC); other
    /// roles ignore it.
    pub fn transmit(&mut self, eth: &[u8], wds_receiver: Option<Address>) -> Result<Converted, DropReason> {
        let mut mpdu = match self.role {
            Role::Station { mac, bssid } => station_uplink(eth, mac, bssid, self.foreign_source, self.wds)?,
            Role::AccessPoint { bssid } => ap_downlink(eth, bssid, wds_receiver.filter(|_| self.wds))?,
            Role::AdHoc { mac, bssid } => ibss_send(eth, mac, bssid, self.foreign_source)?,
        };
        let cipher_bytes = self.cipher.protect(&mut mpdu)?;
        Ok(Converted { frame: mpdu, cipher_bytes, cost: self.cipher.cost() })
    }

    /// A received MPDU (no FCS): the Ethernet frame (no FCS) to hand up. The address
    /// filter runs first, on the clear MAC header, as in hardware; then the cipher.
    pub fn receive(&self, mpdu: &[u8]) -> Result<Converted, DropReason> {
        let repr = parse_data_header(mpdu)?;
        let (da, sa) = match self.role {
            Role::Station { mac, .. } | Role::AdHoc { mac, .. } => station_rx_addresses(&repr, mac, self.wds)?,
            Role::AccessPoint { bssid } => ap_rx_addresses(&repr, bssid, self.wds)?,
        };
        if let Role::AdHoc { bssid, .. } | Role::Station { bssid, .. } = self.role {
            if let Some(frame_bssid) = repr.bssid() {
                if frame_bssid != bssid {
                    return Err(DropReason::OtherBss { bssid: frame_bssid, ours: bssid });
                }
            }
        }
        let (open, cipher_bytes) = self.cipher.unprotect(mpdu)?;
        let frame = body_to_ethernet(da, sa, &open[repr.header_len()..])?;
        Ok(Converted { frame, cipher_bytes, cost: self.cipher.cost() })
    }
}

#[cfg(test)]
mod test {
    use super::*;

    const STA: Address = Address([0x02, 0, 0, 0, 0, 0x01]);
    const AP: Address = Address([0x02, 0, 0, 0, 0, 0xaa]);
    const WIRED: Address = Address([0x02, 0, 0, 0, 0, 0x02]);

    fn eth(dst: Address, src: Address) -> Vec<u8> {
        // 100 bytes: above Ethernet's 46-byte minimum, so no padding is added.
        build_ethernet(dst, src, EtherType::Ipv4, &[0x45; 100])
    }

    #[test]
    fn uplink_then_ap_accepts_round_trips() {
        let frame = eth(WIRED, STA);
        let mpdu = station_uplink(&frame, STA, AP, ForeignSource::Drop, false).unwrap();
        assert_eq!(mpdu.len(), 24 + 8 + 100);
        assert_eq!(ap_accepts(&mpdu, AP, false).unwrap(), frame);
    }

    #[test]
    fn a_station_does_not_accept_frames_to_the_ds() {
        let mpdu = station_uplink(&eth(WIRED, STA), STA, AP, ForeignSource::Drop, false).unwrap();
        // Address 1 is the BSSID: not for another station's adapter.
        assert!(matches!(station_accepts(&mpdu, WIRED, false), Err(DropReason::NotForThisAdapter { .. })));
    }

    #[test]
    fn own_broadcast_relayed_by_the_ap_is_discarded() {
        let mpdu = ap_downlink(&eth(Address::BROADCAST, STA), AP, None).unwrap();
        assert_eq!(station_accepts(&mpdu, STA, false), Err(DropReason::OwnGroupEcho { adapter: STA }));
        assert!(station_accepts(&mpdu, WIRED, false).is_ok());
    }

    #[test]
    fn ciphers_round_trip_and_count_bytes() {
        for name in ["open", "wep-40", "wep-104", "tkip", "ccmp"] {
            let security: WifiSecurity = serde_json::from_value(serde_json::Value::from(name)).unwrap();
            let cipher = LinkCipher::from_security(security);
            let mut sta =
                Adapter::new(Role::Station { mac: STA, bssid: AP }, ForeignSource::Drop, false, cipher.clone());
            let ap = Adapter::new(Role::AccessPoint { bssid: AP }, ForeignSource::Drop, false, cipher);
            let frame = eth(WIRED, STA);
            let sent = sta.transmit(&frame, None).unwrap();
            let overhead = name.parse::<Cipher>().unwrap().overhead();
            assert_eq!(sent.frame.len(), 24 + 8 + 100 + overhead, "{name}");
            let got = ap.receive(&sent.frame).unwrap();
            assert_eq!(got.frame, frame, "{name}");
            assert_eq!(sent.cipher_bytes, got.cipher_bytes, "{name}");
            let expected = match name {
                "open" => 0,
                // LLC/SNAP + payload, and the encrypted trailer.
                "ccmp" => 108 + 8,
                "tkip" => 108 + 8 + 4,
                _ => 108 + 4,
            };
            assert_eq!(sent.cipher_bytes, expected, "{name}");
        }
    }

    #[test]
    fn a_wrong_wep_key_is_refused() {
        let mut sta = Adapter::new(
            Role::Station { mac: STA, bssid: AP },
            ForeignSource::Drop,
            false,
            LinkCipher::wep(&DEFAULT_WEP40_KEY).unwrap(),
        );
        let ap = Adapter::new(
            Role::AccessPoint { bssid: AP },
            ForeignSource::Drop,
            false,
            LinkCipher::wep(&[9, 9, 9, 9, 9]).unwrap(),
        );
        let sent = sta.transmit(&eth(WIRED, STA), None).unwrap();
        assert!(matches!(ap.receive(&sent.frame), Err(DropReason::Undecryptable { .. })));
    }
}
