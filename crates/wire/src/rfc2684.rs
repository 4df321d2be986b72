//! Multiprotocol encapsulation over AAL5 (RFC 2684, which obsoletes RFC 1483), and the
//! Classical IP over ATM MTU.
//!
//! Standards a reader needs:
//! * RFC 2684 §5 "LLC Encapsulation": the AAL5 SDU starts with an IEEE 802.2 LLC
//!   header. §5.1 routed PDUs: LLC AA-AA-03 and a SNAP header of OUI 00-00-00 and the
//!   EtherType as PID (8 octets in all; the NLPID form FE-FE-03 of §5.1 is for ISO
//!   protocols and not modelled). §5.2 bridged PDUs: LLC AA-AA-03, OUI 00-80-C2 (IEEE
//!   802.1), PID 00-07 (Ethernet/802.3, LAN FCS not preserved) or 00-01 (preserved),
//!   then 2 octets of PAD 0x0000, then the MAC frame from the destination address on.
//! * RFC 2684 §6 "VC Based Multiplexing": the VC itself says what it carries. §6.1
//!   routed: the SDU is the bare packet. §6.2 bridged Ethernet/802.3: 2 octets of PAD
//!   0x0000 then the MAC frame (with or without its FCS, as agreed for the VC).
//! * RFC 2225 §5 (Classical IP and ARP over ATM, obsoletes RFC 1577) and RFC 1626: the
//!   default IP MTU over ATM AAL5 is 9180 octets.
//! * IEEE 802.3 §3.2.9 for the preserved LAN FCS ([`crate::crc::ETHERNET_FCS`], sent
//!   least significant octet first).

use core::fmt;
use core::str::FromStr;

use crate::crc;
use crate::ethernet::EtherType;
use crate::{Error, Result};

/// RFC 2225 §5 (and RFC 1626): the default MTU of IP members of a LIS over AAL5.
pub const CLIP_DEFAULT_MTU: usize = 9180;
/// RFC 2684 §5.1 / RFC 2225 §5: the AAL5 SDU for a 9180-octet IP packet with its
/// 8-octet LLC/SNAP header.
pub const CLIP_DEFAULT_SDU: usize = CLIP_DEFAULT_MTU + ROUTED_HEADER_LEN;

/// RFC 2684 §5: LLC header AA-AA-03 (DSAP SNAP, SSAP SNAP, UI).
pub const LLC_SNAP: [u8; 3] = [0xaa, 0xaa, 0x03];
/// RFC 2684 §5.1: the LLC of an NLPID-formatted routed PDU (not modelled).
pub const LLC_NLPID: [u8; 3] = [0xfe, 0xfe, 0x03];
/// RFC 2684 §5.1: OUI 00-00-00, the PID is an EtherType.
pub const OUI_ETHERTYPE: [u8; 3] = [0x00, 0x00, 0x00];
/// RFC 2684 §5.2: OUI 00-80-C2 (IEEE 802.1 organization code) for bridged PDUs.
pub const OUI_IEEE_8021: [u8; 3] = [0x00, 0x80, 0xc2];
/// RFC 2684 §5.1: LLC (3) + OUI (3) + PID (2).
pub const ROUTED_HEADER_LEN: usize = 8;
/// RFC 2684 §5.2: LLC (3) + OUI (3) + PID (2) + PAD (2).
pub const BRIDGED_HEADER_LEN: usize = 10;
/// RFC 2684 §5.2 / §6.2: the PAD before an Ethernet/802.3 MAC frame.
pub const BRIDGED_PAD_LEN: usize = 2;
/// IEEE 802.3 §3.2.9: the LAN FCS carried when preserved.
pub const FCS_LEN: usize = 4;

crate::enum_with_unknown! {
    /// RFC 2684 §5.2: PIDs under OUI 00-80-C2.
    pub enum BridgedPid(u16) {
        /// 802.3/Ethernet with preserved LAN FCS.
        EthernetFcs = 0x0001,
        /// 802.4 with preserved FCS.
        Ieee8024Fcs = 0x0002,
        /// 802.5 with preserved FCS.
        Ieee8025Fcs = 0x0003,
        /// FDDI with preserved FCS.
        FddiFcs = 0x0004,
        /// 802.6 with preserved FCS.
        Ieee8026Fcs = 0x0005,
        /// 802.3/Ethernet without LAN FCS.
        Ethernet = 0x0007,
        /// 802.4 without FCS.
        Ieee8024 = 0x0008,
        /// 802.5 without FCS.
        Ieee8025 = 0x0009,
        /// FDDI without FCS.
        Fddi = 0x000a,
        /// 802.6 without FCS.
        Ieee8026 = 0x000b,
        /// Fragments.
        Fragments = 0x000d,
        /// 802.1(d) / 802.1(g) BPDUs.
        Bpdu = 0x000e,
    }
}

pub mod field {
    use crate::Field;
    /// IEEE 802.2: DSAP, SSAP, control.
    pub const DSAP: usize = 0;
    pub const SSAP: usize = 1;
    pub const CONTROL: usize = 2;
    /// RFC 2684 §5: SNAP organization code.
    pub const OUI: Field = 3..6;
    /// RFC 2684 §5: SNAP protocol identifier.
    pub const PID: Field = 6..8;
    /// RFC 2684 §5.2: PAD of a bridged PDU.
    pub const BRIDGED_PAD: Field = 8..10;
}

/// How a VC carries packets: chosen when the VC is set up (RFC 2684 §4), so a receiver
/// must be told, it cannot guess from the octets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Encapsulation {
    /// RFC 2684 §5.1: LLC/SNAP, routed ("llc-snap"). An LLC VC may also carry bridged
    /// PDUs; decapsulation reads the header.
    LlcSnapRouted,
    /// RFC 2684 §5.2: LLC/SNAP, bridged Ethernet without LAN FCS ("llc-snap-bridged").
    LlcSnapBridged,
    /// RFC 2684 §5.2: LLC/SNAP, bridged Ethernet with LAN FCS ("llc-snap-bridged-fcs").
    LlcSnapBridgedFcs,
    /// RFC 2684 §6.1: VC-multiplexed routed, no header ("vc-mux").
    VcMuxRouted,
    /// RFC 2684 §6.2: VC-multiplexed bridged Ethernet, no FCS ("vc-mux-bridged").
    VcMuxBridged,
    /// RFC 2684 §6.2: VC-multiplexed bridged Ethernet with FCS ("vc-mux-bridged-fcs").
    VcMuxBridgedFcs,
}

impl Encapsulation {
    pub const ALL: [Encapsulation; 6] = [
        Encapsulation::LlcSnapRouted,
        Encapsulation::LlcSnapBridged,
        Encapsulation::LlcSnapBridgedFcs,
        Encapsulation::VcMuxRouted,
        Encapsulation::VcMuxBridged,
        Encapsulation::VcMuxBridgedFcs,
    ];

    /// The octets in front of the packet or MAC frame.
    pub const fn header_len(self) -> usize {
        match self {
            Encapsulation::LlcSnapRouted => ROUTED_HEADER_LEN,
            Encapsulation::LlcSnapBridged | Encapsulation::LlcSnapBridgedFcs => BRIDGED_HEADER_LEN,
            Encapsulation::VcMuxRouted => 0,
            Encapsulation::VcMuxBridged | Encapsulation::VcMuxBridgedFcs => BRIDGED_PAD_LEN,
        }
    }

    /// The octets after the MAC frame: the preserved LAN FCS.
    pub const fn trailer_len(self) -> usize {
        if self.preserves_fcs() {
            FCS_LEN
        } else {
            0
        }
    }

    pub const fn is_llc(self) -> bool {
        matches!(self, Encapsulation::LlcSnapRouted | Encapsulation::LlcSnapBridged | Encapsulation::LlcSnapBridgedFcs)
    }

    pub const fn is_bridged(self) -> bool {
        !matches!(self, Encapsulation::LlcSnapRouted | Encapsulation::VcMuxRouted)
    }

    pub const fn preserves_fcs(self) -> bool {
        matches!(self, Encapsulation::LlcSnapBridgedFcs | Encapsulation::VcMuxBridgedFcs)
    }

    /// The on-the-wire form of this encapsulation for a routed packet of `ethertype`
    /// (used only by [`Encapsulation::LlcSnapRouted`]).
    pub const fn repr(self, ethertype: EtherType) -> Repr {
        match self {
            Encapsulation::LlcSnapRouted => Repr::LlcSnapRouted { ethertype },
            Encapsulation::LlcSnapBridged => Repr::LlcSnapBridged { fcs_preserved: false },
            Encapsulation::LlcSnapBridgedFcs => Repr::LlcSnapBridged { fcs_preserved: true },
            Encapsulation::VcMuxRouted => Repr::VcMuxRouted,
            Encapsulation::VcMuxBridged => Repr::VcMuxBridged { fcs_preserved: false },
            Encapsulation::VcMuxBridgedFcs => Repr::VcMuxBridged { fcs_preserved: true },
        }
    }

    /// The named overheads this encapsulation adds to a payload.
    pub fn overhead_fields(self, payload_len: usize) -> Vec<(&'static str, usize)> {
        self.repr(EtherType::Ipv4).overhead_fields(payload_len)
    }

    pub const fn name(self) -> &'static str {
        match self {
            Encapsulation::LlcSnapRouted => "llc-snap",
            Encapsulation::LlcSnapBridged => "llc-snap-bridged",
            Encapsulation::LlcSnapBridgedFcs => "llc-snap-bridged-fcs",
            Encapsulation::VcMuxRouted => "vc-mux",
            Encapsulation::VcMuxBridged => "vc-mux-bridged",
            Encapsulation::VcMuxBridgedFcs => "vc-mux-bridged-fcs",
        }
    }
}

impl fmt::Display for Encapsulation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Encapsulation {
    type Err = Error;

    /// Accepts the names of [`Encapsulation::name`], plus "llc", "llc-snap-routed",
    /// "vc-mux-routed" and "null" (the Cisco name for VC-mux routed), any case.
    fn from_str(s: &str) -> Result<Encapsulation> {
        let lower = s.trim().to_ascii_lowercase();
        match lower.as_str() {
            "llc-snap" | "llc" | "llc-snap-routed" | "aal5snap" => Ok(Encapsulation::LlcSnapRouted),
            "vc-mux" | "vc-mux-routed" | "null" | "aal5mux" => Ok(Encapsulation::VcMuxRouted),
            other => Encapsulation::ALL.into_iter().find(|e| e.name() == other).ok_or(Error::Unsupported),
        }
    }
}

/// A read/write view of an LLC-encapsulated AAL5 SDU (RFC 2684 §5).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Packet<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Packet<T> {
    pub const fn new_unchecked(buffer: T) -> Packet<T> {
        Packet { buffer }
    }

    pub fn new_checked(buffer: T) -> Result<Packet<T>> {
        let p = Packet::new_unchecked(buffer);
        p.check_len()?;
        Ok(p)
    }

    /// `Err(Truncated)` when shorter than the 8-octet LLC/SNAP header, or than the 10
    /// octets of a bridged header when the OUI is 00-80-C2.
    pub fn check_len(&self) -> Result<()> {
        let d = self.buffer.as_ref();
        if d.len() < ROUTED_HEADER_LEN {
            return Err(Error::Truncated);
        }
        if d[field::OUI] == OUI_IEEE_8021 && d.len() < BRIDGED_HEADER_LEN {
            return Err(Error::Truncated);
        }
        Ok(())
    }

    pub fn into_inner(self) -> T {
        self.buffer
    }

    pub fn dsap(&self) -> u8 {
        self.buffer.as_ref()[field::DSAP]
    }

    pub fn ssap(&self) -> u8 {
        self.buffer.as_ref()[field::SSAP]
    }

    pub fn control(&self) -> u8 {
        self.buffer.as_ref()[field::CONTROL]
    }

    /// The LLC header, normally AA-AA-03.
    pub fn llc(&self) -> [u8; 3] {
        [self.dsap(), self.ssap(), self.control()]
    }

    pub fn oui(&self) -> [u8; 3] {
        let d = &self.buffer.as_ref()[field::OUI];
        [d[0], d[1], d[2]]
    }

    pub fn pid(&self) -> u16 {
        let d = &self.buffer.as_ref()[field::PID];
        u16::from_be_bytes([d[0], d[1]])
    }

    /// Whether the OUI is 00-80-C2 (a bridged PDU).
    pub fn is_bridged(&self) -> bool {
        self.oui() == OUI_IEEE_8021
    }

    /// The PAD of a bridged PDU (0 for a routed one, which has none).
    pub fn bridged_pad(&self) -> u16 {
        if self.is_bridged() {
            let d = &self.buffer.as_ref()[field::BRIDGED_PAD];
            u16::from_be_bytes([d[0], d[1]])
        } else {
            0
        }
    }

    /// The routed packet, or the bridged MAC frame (with its FCS if preserved).
    pub fn payload(&self) -> &[u8] {
        let start = if self.is_bridged() { BRIDGED_HEADER_LEN } else { ROUTED_HEADER_LEN };
        &self.buffer.as_ref()[start..]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    pub fn set_llc(&mut self, llc: [u8; 3]) {
        self.buffer.as_mut()[..3].copy_from_slice(&llc);
    }

    pub fn set_oui(&mut self, oui: [u8; 3]) {
        self.buffer.as_mut()[field::OUI].copy_from_slice(&oui);
    }

    pub fn set_pid(&mut self, pid: u16) {
        self.buffer.as_mut()[field::PID].copy_from_slice(&pid.to_be_bytes());
    }

    pub fn set_bridged_pad(&mut self, pad: u16) {
        self.buffer.as_mut()[field::BRIDGED_PAD].copy_from_slice(&pad.to_be_bytes());
    }
}

/// What precedes (and, for a preserved FCS, follows) a packet in the AAL5 SDU.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Repr {
    /// RFC 2684 §5.1: AA-AA-03 00-00-00 and the EtherType.
    LlcSnapRouted { ethertype: EtherType },
    /// RFC 2684 §5.2: AA-AA-03 00-80-C2, PID 00-01 (FCS preserved) or 00-07, PAD 0x0000.
    LlcSnapBridged { fcs_preserved: bool },
    /// RFC 2684 §6.1: nothing.
    VcMuxRouted,
    /// RFC 2684 §6.2: PAD 0x0000; the FCS follows the frame if preserved.
    VcMuxBridged { fcs_preserved: bool },
}

impl Repr {
    /// Parses the header of an LLC-encapsulated SDU. Bridged media other than
    /// Ethernet/802.3 and NLPID-formatted PDUs are `Err(Unsupported)`; another LLC
    /// header or a non-zero bridged PAD is `Err(Malformed)`.
    pub fn parse<T: AsRef<[u8]> + ?Sized>(packet: &Packet<&T>) -> Result<Repr> {
        packet.check_len()?;
        match packet.llc() {
            LLC_SNAP => {}
            LLC_NLPID => return Err(Error::Unsupported),
            _ => return Err(Error::Malformed),
        }
        match packet.oui() {
            OUI_ETHERTYPE => Ok(Repr::LlcSnapRouted { ethertype: EtherType::from(packet.pid()) }),
            OUI_IEEE_8021 => {
                let fcs_preserved = match BridgedPid::from(packet.pid()) {
                    BridgedPid::Ethernet => false,
                    BridgedPid::EthernetFcs => true,
                    _ => return Err(Error::Unsupported),
                };
                if packet.bridged_pad() != 0 {
                    return Err(Error::Malformed);
                }
                Ok(Repr::LlcSnapBridged { fcs_preserved })
            }
            _ => Err(Error::Unsupported),
        }
    }

    /// Parses the start of an AAL5 SDU received on a VC set up with `encapsulation`.
    pub fn parse_sdu(encapsulation: Encapsulation, sdu: &[u8]) -> Result<Repr> {
        if encapsulation.is_llc() {
            return Repr::parse(&Packet::new_checked(sdu)?);
        }
        let repr = encapsulation.repr(EtherType::Ipv4);
        if encapsulation.is_bridged() {
            if sdu.len() < BRIDGED_PAD_LEN {
                return Err(Error::Truncated);
            }
            if sdu[..BRIDGED_PAD_LEN] != [0, 0] {
                return Err(Error::Malformed);
            }
        }
        Ok(repr)
    }

    /// The encapsulation this header belongs to.
    pub const fn encapsulation(&self) -> Encapsulation {
        match *self {
            Repr::LlcSnapRouted { .. } => Encapsulation::LlcSnapRouted,
            Repr::LlcSnapBridged { fcs_preserved: false } => Encapsulation::LlcSnapBridged,
            Repr::LlcSnapBridged { fcs_preserved: true } => Encapsulation::LlcSnapBridgedFcs,
            Repr::VcMuxRouted => Encapsulation::VcMuxRouted,
            Repr::VcMuxBridged { fcs_preserved: false } => Encapsulation::VcMuxBridged,
            Repr::VcMuxBridged { fcs_preserved: true } => Encapsulation::VcMuxBridgedFcs,
        }
    }

    pub const fn header_len(&self) -> usize {
        self.encapsulation().header_len()
    }

    pub const fn trailer_len(&self) -> usize {
        self.encapsulation().trailer_len()
    }

    /// The header length (the payload is not counted).
    pub const fn buffer_len(&self) -> usize {
        self.header_len()
    }

    /// Writes the header into the first `header_len()` octets (nothing for VC-mux
    /// routed). Panics if the buffer is shorter.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]> + ?Sized>(&self, packet: &mut Packet<&mut T>) {
        match *self {
            Repr::LlcSnapRouted { ethertype } => {
                packet.set_llc(LLC_SNAP);
                packet.set_oui(OUI_ETHERTYPE);
                packet.set_pid(u16::from(ethertype));
            }
            Repr::LlcSnapBridged { fcs_preserved } => {
                packet.set_llc(LLC_SNAP);
                packet.set_oui(OUI_IEEE_8021);
                let pid = if fcs_preserved { BridgedPid::EthernetFcs } else { BridgedPid::Ethernet };
                packet.set_pid(u16::from(pid));
                packet.set_bridged_pad(0);
            }
            Repr::VcMuxRouted => {}
            Repr::VcMuxBridged { .. } => packet.buffer.as_mut()[..BRIDGED_PAD_LEN].fill(0),
        }
    }

    /// Appends the AAL5 SDU for `payload` to `out`: the header, the payload (an IP
    /// packet, or an Ethernet frame without FCS for the bridged forms), and for a
    /// preserved FCS the IEEE 802.3 FCS of the frame. The MAC frame is carried as
    /// given: padding it to the 802.3 minimum is the caller's business.
    pub fn encapsulate(&self, payload: &[u8], out: &mut Vec<u8>) {
        let start = out.len();
        out.resize(start + self.header_len(), 0);
        self.emit(&mut Packet::new_unchecked(&mut out[start..]));
        out.extend_from_slice(payload);
        if self.trailer_len() != 0 {
            out.extend_from_slice(&crc::ETHERNET_FCS.checksum(payload).to_le_bytes());
        }
    }

    /// Named overheads: the header fields, then the FCS if preserved.
    pub fn overhead_fields(&self, _payload_len: usize) -> Vec<(&'static str, usize)> {
        let mut f = Vec::new();
        if matches!(self, Repr::LlcSnapRouted { .. } | Repr::LlcSnapBridged { .. }) {
            f.extend([("llc", 3), ("snap oui", 3), ("snap pid", 2)]);
        }
        if self.encapsulation().is_bridged() {
            f.push(("bridged pad", BRIDGED_PAD_LEN));
        }
        if self.trailer_len() != 0 {
            f.push(("lan fcs", FCS_LEN));
        }
        f
    }
}

impl fmt::Display for Repr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Repr::LlcSnapRouted { ethertype } => write!(f, "RFC 2684 llc-snap routed {:#06x}", u16::from(*ethertype)),
            other => write!(f, "RFC 2684 {}", other.encapsulation()),
        }
    }
}

/// Parses an AAL5 SDU from a VC set up with `encapsulation` and returns its header and
/// payload (the IP packet, or the MAC frame without FCS). A preserved FCS that does not
/// verify is `Err(Checksum)`.
pub fn decapsulate(encapsulation: Encapsulation, sdu: &[u8]) -> Result<(Repr, &[u8])> {
    let repr = Repr::parse_sdu(encapsulation, sdu)?;
    let body = &sdu[repr.header_len()..];
    if repr.trailer_len() == 0 {
        return Ok((repr, body));
    }
    if body.len() < FCS_LEN {
        return Err(Error::Truncated);
    }
    let (frame, fcs) = body.split_at(body.len() - FCS_LEN);
    if crc::ETHERNET_FCS.checksum(frame).to_le_bytes() != fcs {
        return Err(Error::Checksum);
    }
    Ok((repr, frame))
}

#[cfg(test)]
mod test {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn llc_vc_takes_whatever_its_header_says() {
        // Found by crates/wire/fuzz (rfc2684): AA-AA-03 00-00-00 08-00 on a VC set up
        // LLC-encapsulated for bridged Ethernet. RFC 2684 §5: LLC encapsulation lets
        // one VC carry many protocols, routed and bridged, the header naming each; a
        // VC-multiplexed VC carries only its own (§6), so the same octets there are data.
        let routed = [0xaa, 0xaa, 0x03, 0x00, 0x00, 0x00, 0x08, 0x00];
        let ipv4 = Repr::LlcSnapRouted { ethertype: EtherType::Ipv4 };
        assert_eq!(Repr::parse_sdu(Encapsulation::LlcSnapBridged, &routed), Ok(ipv4));
        assert_eq!(Repr::parse_sdu(Encapsulation::VcMuxRouted, &routed), Ok(Repr::VcMuxRouted));
    }

    // RFC 2684 §5.1: LLC/SNAP routed IPv4 header.
    static ROUTED_HEADER: [u8; 8] = [0xaa, 0xaa, 0x03, 0x00, 0x00, 0x00, 0x08, 0x00];
    // RFC 2684 §5.2: LLC/SNAP bridged Ethernet, no FCS, PAD.
    static BRIDGED_HEADER: [u8; 10] = [0xaa, 0xaa, 0x03, 0x00, 0x80, 0xc2, 0x00, 0x07, 0x00, 0x00];
    // A 14-octet Ethernet header (broadcast ARP) standing in for a MAC frame; its FCS
    // is checked against a bitwise CRC in test_fcs_preserved.
    static MAC_FRAME: [u8; 14] = [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02, 0, 0, 0, 0, 1, 0x08, 0x06];

    #[test]
    fn test_parse() {
        let mut sdu = ROUTED_HEADER.to_vec();
        sdu.extend_from_slice(&[0x45; 20]);
        let p = Packet::new_checked(&sdu[..]).unwrap();
        assert_eq!(Repr::parse(&p).unwrap(), Repr::LlcSnapRouted { ethertype: EtherType::Ipv4 });
        assert_eq!(p.payload(), &[0x45; 20]);

        let mut sdu = BRIDGED_HEADER.to_vec();
        sdu.extend_from_slice(&MAC_FRAME);
        let p = Packet::new_checked(&sdu[..]).unwrap();
        assert_eq!(Repr::parse(&p).unwrap(), Repr::LlcSnapBridged { fcs_preserved: false });
        assert_eq!(p.payload(), &MAC_FRAME);
        assert_eq!(decapsulate(Encapsulation::LlcSnapRouted, &sdu).unwrap().1, &MAC_FRAME);
    }

    #[test]
    fn test_emit() {
        let mut out = Vec::new();
        Repr::LlcSnapRouted { ethertype: EtherType::Ipv4 }.encapsulate(&[1, 2, 3], &mut out);
        assert_eq!(&out[..8], &ROUTED_HEADER);
        assert_eq!(&out[8..], &[1, 2, 3]);
        out.clear();
        Repr::LlcSnapBridged { fcs_preserved: false }.encapsulate(&MAC_FRAME, &mut out);
        assert_eq!(&out[..10], &BRIDGED_HEADER);
        out.clear();
        Repr::VcMuxRouted.encapsulate(&[9; 5], &mut out);
        assert_eq!(out, vec![9; 5]);
        out.clear();
        Repr::VcMuxBridged { fcs_preserved: false }.encapsulate(&MAC_FRAME, &mut out);
        assert_eq!(&out[..2], &[0, 0]);
        assert_eq!(&out[2..], &MAC_FRAME);
    }

    /// Bitwise reflected CRC-32 (IEEE 802.3), independent of the crc crate.
    fn fcs_by_hand(data: &[u8]) -> u32 {
        let mut reg = 0xffff_ffffu32;
        for &b in data {
            reg ^= u32::from(b);
            for _ in 0..8 {
                reg = if reg & 1 != 0 { (reg >> 1) ^ 0xedb8_8320 } else { reg >> 1 };
            }
        }
        !reg
    }

    #[test]
    fn test_fcs_preserved() {
        for repr in [Repr::LlcSnapBridged { fcs_preserved: true }, Repr::VcMuxBridged { fcs_preserved: true }] {
            let mut out = Vec::new();
            repr.encapsulate(&MAC_FRAME, &mut out);
            assert_eq!(out.len(), repr.header_len() + 14 + 4);
            assert_eq!(&out[out.len() - 4..], &fcs_by_hand(&MAC_FRAME).to_le_bytes());
            let (r, frame) = decapsulate(repr.encapsulation(), &out).unwrap();
            assert_eq!((r, frame), (repr, &MAC_FRAME[..]));
            let n = out.len();
            out[n - 1] ^= 1;
            assert_eq!(decapsulate(repr.encapsulation(), &out), Err(Error::Checksum));
        }
        assert_eq!(&BRIDGED_HEADER[6..8], &[0x00, 0x07]);
    }

    #[test]
    fn test_errors() {
        assert_eq!(Packet::new_checked(&ROUTED_HEADER[..7]).unwrap_err(), Error::Truncated);
        assert_eq!(Packet::new_checked(&BRIDGED_HEADER[..9]).unwrap_err(), Error::Truncated);
        let mut nlpid = ROUTED_HEADER;
        nlpid[..3].copy_from_slice(&LLC_NLPID);
        assert_eq!(Repr::parse(&Packet::new_unchecked(&nlpid[..])), Err(Error::Unsupported));
        let mut junk = ROUTED_HEADER;
        junk[0] = 0x42;
        assert_eq!(Repr::parse(&Packet::new_unchecked(&junk[..])), Err(Error::Malformed));
        let mut token_ring = BRIDGED_HEADER;
        token_ring[7] = 0x09;
        assert_eq!(Repr::parse(&Packet::new_unchecked(&token_ring[..])), Err(Error::Unsupported));
        let mut pad = BRIDGED_HEADER;
        pad[9] = 1;
        assert_eq!(Repr::parse(&Packet::new_unchecked(&pad[..])), Err(Error::Malformed));
        assert_eq!(decapsulate(Encapsulation::VcMuxBridged, &[0]), Err(Error::Truncated));
        assert_eq!(decapsulate(Encapsulation::VcMuxBridged, &[0, 1, 2]), Err(Error::Malformed));
        assert_eq!(decapsulate(Encapsulation::VcMuxBridgedFcs, &[0, 0, 2]), Err(Error::Truncated));
    }

    #[test]
    fn test_encapsulation_names() {
        for e in Encapsulation::ALL {
            assert_eq!(e.name().parse::<Encapsulation>(), Ok(e));
            assert_eq!(e.to_string(), e.name());
            assert_eq!(e.repr(EtherType::Ipv4).encapsulation(), e);
        }
        assert_eq!("LLC-SNAP".parse::<Encapsulation>(), Ok(Encapsulation::LlcSnapRouted));
        assert_eq!("null".parse::<Encapsulation>(), Ok(Encapsulation::VcMuxRouted));
        assert_eq!("ppp".parse::<Encapsulation>(), Err(Error::Unsupported));
        let lens: Vec<usize> = Encapsulation::ALL.iter().map(|e| e.header_len()).collect();
        assert_eq!(lens, vec![8, 10, 10, 0, 2, 2]);
        assert_eq!(CLIP_DEFAULT_SDU, 9188);
    }

    #[test]
    fn test_overhead_fields() {
        assert_eq!(
            Encapsulation::LlcSnapRouted.overhead_fields(1500),
            vec![("llc", 3), ("snap oui", 3), ("snap pid", 2)]
        );
        assert_eq!(
            Encapsulation::LlcSnapBridgedFcs.overhead_fields(1514),
            vec![("llc", 3), ("snap oui", 3), ("snap pid", 2), ("bridged pad", 2), ("lan fcs", 4)]
        );
        assert_eq!(Encapsulation::VcMuxRouted.overhead_fields(1500), vec![]);
        for e in Encapsulation::ALL {
            let total: usize = e.overhead_fields(100).iter().map(|f| f.1).sum();
            assert_eq!(total, e.header_len() + e.trailer_len());
        }
    }

    fn arb_repr() -> impl Strategy<Value = Repr> {
        prop_oneof![
            any::<u16>().prop_map(|t| Repr::LlcSnapRouted { ethertype: EtherType::from(t) }),
            any::<bool>().prop_map(|f| Repr::LlcSnapBridged { fcs_preserved: f }),
            Just(Repr::VcMuxRouted),
            any::<bool>().prop_map(|f| Repr::VcMuxBridged { fcs_preserved: f }),
        ]
    }

    proptest! {
        #[test]
        fn prop_emit_parse_emit(repr in arb_repr(), payload in proptest::collection::vec(any::<u8>(), 0..64)) {
            let mut a = Vec::new();
            repr.encapsulate(&payload, &mut a);
            let (parsed, body) = decapsulate(repr.encapsulation(), &a).unwrap();
            prop_assert_eq!(parsed, repr);
            prop_assert_eq!(body, &payload[..]);
            let mut b = Vec::new();
            parsed.encapsulate(body, &mut b);
            prop_assert_eq!(a, b);
        }

        #[test]
        fn prop_parse_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..40)) {
            for e in Encapsulation::ALL {
                let _ = decapsulate(e, &bytes);
            }
            let _ = Packet::new_checked(&bytes[..]).and_then(|p| Repr::parse(&p));
        }
    }
}
