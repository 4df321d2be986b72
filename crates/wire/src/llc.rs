//! IEEE 802.2 Logical Link Control header and the SNAP extension.
//!
//! Standards a reader must know:
//!
//! * IEEE Std 802.2-1998 (ISO/IEC 8802-2): clause 3, the LLC PDU (DSAP address,
//!   SSAP address, control, information; the DSAP's low bit is I/G, the SSAP's low bit
//!   is C/R), and §5.2, the control field formats: I-format and S-format are two
//!   octets, U-format one octet, told apart by the low bits of the first octet.
//! * IEEE Std 802-2014 clause 10 (protocol identification): the Subnetwork Access
//!   Protocol, DSAP = SSAP = 0xAA with a UI control (0x03), then a 3-octet OUI and a
//!   2-octet protocol identifier.
//! * RFC 1042 (IP over IEEE 802 networks): OUI 00-00-00 means the protocol identifier
//!   is an EtherType; IEEE 802.1H: OUI 00-00-F8 (bridge tunnel) likewise, used for
//!   EtherTypes that must survive translation back to Ethernet II (AppleTalk ARP, IPX).
//!
//! Users: IEEE 802.3 length frames ([`crate::ethernet::Ieee8023Repr`]), IEEE 802.11 data
//! frames ([`crate::dot11`]) and RFC 2684 LLC encapsulation over ATM.

use crate::ethernet::EtherType;
use crate::{Error, Result};

/// DSAP + SSAP + one-octet U-format control (IEEE 802.2 clause 3, §5.2).
pub const U_HEADER_LEN: usize = 3;
/// DSAP + SSAP + two-octet I- or S-format control (IEEE 802.2 clause 3, §5.2).
pub const IS_HEADER_LEN: usize = 4;
/// The SNAP header: OUI (3) + protocol identifier (2) (IEEE 802 clause 10).
pub const SNAP_LEN: usize = 5;
/// LLC (AA-AA-03) + SNAP: the 8 octets before an EtherType-identified payload (RFC 1042).
pub const LLC_SNAP_LEN: usize = U_HEADER_LEN + SNAP_LEN;
/// The SNAP SAP, used as both DSAP and SSAP (IEEE 802 clause 10).
pub const SNAP_SAP: u8 = 0xaa;
/// The LLC header announcing SNAP: DSAP AA, SSAP AA, control UI (RFC 1042).
pub const SNAP_LLC_HEADER: [u8; 3] = [SNAP_SAP, SNAP_SAP, control::UI];
/// RFC 1042 OUI: the protocol identifier is an EtherType.
pub const OUI_RFC1042: [u8; 3] = [0x00, 0x00, 0x00];
/// IEEE 802.1H bridge-tunnel OUI: the protocol identifier is an EtherType.
pub const OUI_BRIDGE_TUNNEL: [u8; 3] = [0x00, 0x00, 0xf8];
/// The 8-octet LLC/SNAP header that precedes an IPv4 packet (RFC 1042).
pub const LLC_SNAP_IPV4: [u8; 8] = [0xaa, 0xaa, 0x03, 0x00, 0x00, 0x00, 0x08, 0x00];

/// U-format control octets with the P/F bit (0x10) clear (IEEE 802.2 §5.3, §5.4).
pub mod control {
    /// Unnumbered information (the connectionless, type 1, data PDU).
    pub const UI: u8 = 0x03;
    /// Exchange identification.
    pub const XID: u8 = 0xaf;
    /// Test.
    pub const TEST: u8 = 0xe3;
    /// Set asynchronous balanced mode extended (type 2 connect).
    pub const SABME: u8 = 0x6f;
    /// Unnumbered acknowledgment.
    pub const UA: u8 = 0x63;
    /// Disconnect.
    pub const DISC: u8 = 0x43;
    /// Disconnected mode.
    pub const DM: u8 = 0x0f;
    /// Frame reject.
    pub const FRMR: u8 = 0x87;
    /// The poll/final bit of a U-format control octet.
    pub const U_POLL_FINAL: u8 = 0x10;
}

crate::enum_with_unknown! {
    /// Well-known LSAP values (IEEE 802.2 clause 3; IEEE SAP registry), I/G and C/R bit
    /// clear.
    pub enum Sap(u8) {
        /// The null SAP.
        Null = 0x00,
        /// DoD Internet Protocol.
        Ip = 0x06,
        /// IEEE 802.1 bridge spanning tree protocol.
        Stp = 0x42,
        /// Subnetwork Access Protocol (IEEE 802 clause 10).
        Snap = 0xaa,
        /// Novell IPX.
        Ipx = 0xe0,
        /// NetBIOS.
        NetBios = 0xf0,
        /// ISO network layer (CLNP, IS-IS).
        IsoNetwork = 0xfe,
        /// The global DSAP.
        Global = 0xff,
    }
}

crate::enum_with_unknown! {
    /// The supervisory function bits of an S-format PDU (IEEE 802.2 §5.2, §5.4).
    pub enum SupervisoryFunction(u8) {
        ReceiveReady = 0,
        ReceiveNotReady = 1,
        Reject = 2,
    }
}

/// The control field (IEEE 802.2 §5.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Control {
    /// I-format (first octet bit 0 = 0): N(S) in bits 7..1 of octet 1, N(R) in bits
    /// 7..1 of octet 2, P/F in bit 0 of octet 2. Sequence numbers are modulo 128.
    Information { send_seq: u8, recv_seq: u8, poll_final: bool },
    /// S-format (first octet bits 1..0 = 01): function in bits 3..2 of octet 1 (bits
    /// 7..4 reserved, zero), N(R) and P/F in octet 2.
    Supervisory { function: SupervisoryFunction, recv_seq: u8, poll_final: bool },
    /// U-format (bits 1..0 = 11): `modifier` is the octet with the P/F bit (0x10)
    /// cleared, e.g. [`control::UI`].
    Unnumbered { modifier: u8, poll_final: bool },
}

impl Control {
    /// The unnumbered-information command with P/F clear: what IP and SNAP use.
    pub const UI: Control = Control::Unnumbered { modifier: control::UI, poll_final: false };

    /// 1 for U-format, 2 for I- and S-format.
    pub const fn len(&self) -> usize {
        match self {
            Control::Unnumbered { .. } => 1,
            _ => 2,
        }
    }

    /// Never empty; present for clippy's `len_without_is_empty`.
    pub const fn is_empty(&self) -> bool {
        false
    }

    /// The length the first control octet announces.
    pub const fn len_from_first_octet(octet: u8) -> usize {
        if octet & 0x03 == 0x03 {
            1
        } else {
            2
        }
    }

    /// Decodes a control field from its octets (one or two as the first says).
    pub fn parse(data: &[u8]) -> Result<Control> {
        let first = *data.first().ok_or(Error::Truncated)?;
        if first & 0x03 == 0x03 {
            return Ok(Control::Unnumbered {
                modifier: first & !control::U_POLL_FINAL,
                poll_final: first & control::U_POLL_FINAL != 0,
            });
        }
        let second = *data.get(1).ok_or(Error::Truncated)?;
        let recv_seq = second >> 1;
        let poll_final = second & 1 != 0;
        if first & 0x01 == 0 {
            Ok(Control::Information { send_seq: first >> 1, recv_seq, poll_final })
        } else {
            if first & 0xf0 != 0 {
                // Reserved bits of an S-format control must be zero (IEEE 802.2 §5.2).
                return Err(Error::Malformed);
            }
            Ok(Control::Supervisory { function: SupervisoryFunction::from((first >> 2) & 0x03), recv_seq, poll_final })
        }
    }

    /// Writes the field; panics if `out` is shorter than [`Self::len`]. Sequence
    /// numbers are taken modulo 128, the function modulo 4.
    pub fn emit(&self, out: &mut [u8]) {
        match *self {
            Control::Unnumbered { modifier, poll_final } => {
                out[0] =
                    (modifier & !control::U_POLL_FINAL) | 0x03 | if poll_final { control::U_POLL_FINAL } else { 0 };
            }
            Control::Information { send_seq, recv_seq, poll_final } => {
                out[0] = send_seq << 1;
                out[1] = (recv_seq << 1) | poll_final as u8;
            }
            Control::Supervisory { function, recv_seq, poll_final } => {
                out[0] = ((u8::from(function) & 0x03) << 2) | 0x01;
                out[1] = (recv_seq << 1) | poll_final as u8;
            }
        }
    }
}

/// Byte ranges of the LLC and SNAP headers.
pub mod field {
    use crate::Field;
    /// Destination SAP, low bit I/G (IEEE 802.2 clause 3).
    pub const DSAP: usize = 0;
    /// Source SAP, low bit C/R (IEEE 802.2 clause 3).
    pub const SSAP: usize = 1;
    /// First control octet (IEEE 802.2 §5.2).
    pub const CONTROL: usize = 2;
    /// The two-octet control of I- and S-format PDUs.
    pub const CONTROL_IS: Field = 2..4;
    /// SNAP OUI (IEEE 802 clause 10).
    pub const SNAP_OUI: Field = 3..6;
    /// SNAP protocol identifier, big endian (IEEE 802 clause 10).
    pub const SNAP_PID: Field = 6..8;
}

/// A checked view over an LLC PDU (and its SNAP header when present).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Packet<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Packet<T> {
    pub const fn new_unchecked(buffer: T) -> Packet<T> {
        Packet { buffer }
    }

    pub fn new_checked(buffer: T) -> Result<Packet<T>> {
        let packet = Self::new_unchecked(buffer);
        packet.check_len()?;
        Ok(packet)
    }

    /// `Err(Truncated)` unless the buffer holds the whole header the first control
    /// octet announces, and the SNAP header when the LLC header is AA-AA-03.
    pub fn check_len(&self) -> Result<()> {
        let data = self.buffer.as_ref();
        if data.len() < U_HEADER_LEN || data.len() < self.header_len() {
            return Err(Error::Truncated);
        }
        Ok(())
    }

    pub fn into_inner(self) -> T {
        self.buffer
    }

    /// The DSAP octet, I/G bit included.
    pub fn dsap(&self) -> u8 {
        self.buffer.as_ref()[field::DSAP]
    }

    /// The SSAP octet, C/R bit included.
    pub fn ssap(&self) -> u8 {
        self.buffer.as_ref()[field::SSAP]
    }

    /// The first control octet.
    pub fn control_octet(&self) -> u8 {
        self.buffer.as_ref()[field::CONTROL]
    }

    /// The decoded control field.
    pub fn control(&self) -> Result<Control> {
        Control::parse(&self.buffer.as_ref()[field::CONTROL..])
    }

    /// True for the AA-AA-03 header that announces SNAP (IEEE 802 clause 10).
    pub fn is_snap(&self) -> bool {
        let d = self.buffer.as_ref();
        d.len() >= U_HEADER_LEN && d[..3] == SNAP_LLC_HEADER
    }

    /// LLC header length, plus the SNAP header when [`Self::is_snap`]; 3 when the
    /// buffer is too short to tell.
    pub fn header_len(&self) -> usize {
        let d = self.buffer.as_ref();
        match d.get(field::CONTROL) {
            None => U_HEADER_LEN,
            Some(_) if self.is_snap() => LLC_SNAP_LEN,
            Some(&c) => 2 + Control::len_from_first_octet(c),
        }
    }

    /// The SNAP OUI; only meaningful when [`Self::is_snap`].
    pub fn oui(&self) -> [u8; 3] {
        let d = &self.buffer.as_ref()[field::SNAP_OUI];
        [d[0], d[1], d[2]]
    }

    /// The SNAP protocol identifier; only meaningful when [`Self::is_snap`].
    pub fn protocol_id(&self) -> u16 {
        let d = &self.buffer.as_ref()[field::SNAP_PID];
        u16::from_be_bytes([d[0], d[1]])
    }

    /// The information field after the LLC (and SNAP) header.
    pub fn payload(&self) -> &[u8] {
        &self.buffer.as_ref()[self.header_len()..]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    pub fn set_dsap(&mut self, value: u8) {
        self.buffer.as_mut()[field::DSAP] = value;
    }

    pub fn set_ssap(&mut self, value: u8) {
        self.buffer.as_mut()[field::SSAP] = value;
    }

    /// Writes the control field (one or two octets).
    pub fn set_control(&mut self, value: Control) {
        value.emit(&mut self.buffer.as_mut()[field::CONTROL..]);
    }

    pub fn set_oui(&mut self, value: [u8; 3]) {
        self.buffer.as_mut()[field::SNAP_OUI].copy_from_slice(&value);
    }

    pub fn set_protocol_id(&mut self, value: u16) {
        self.buffer.as_mut()[field::SNAP_PID].copy_from_slice(&value.to_be_bytes());
    }

    pub fn payload_mut(&mut self) -> &mut [u8] {
        let start = self.header_len();
        &mut self.buffer.as_mut()[start..]
    }
}

/// An LLC header, or the LLC AA-AA-03 header with its SNAP extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Repr {
    /// A plain IEEE 802.2 header. `dsap` and `ssap` are whole octets (I/G and C/R
    /// bits included). Never AA-AA-03: that header always parses as `Snap`.
    Llc { dsap: u8, ssap: u8, control: Control },
    /// AA-AA-03 followed by SNAP (IEEE 802 clause 10, RFC 1042).
    Snap { oui: [u8; 3], protocol_id: u16 },
}

impl Repr {
    /// The RFC 1042 header for an EtherType payload: AA-AA-03-00-00-00-type.
    pub fn ethertype(ethertype: EtherType) -> Repr {
        Repr::Snap { oui: OUI_RFC1042, protocol_id: u16::from(ethertype) }
    }

    /// The EtherType carried, when this is SNAP with OUI 00-00-00 (RFC 1042) or
    /// 00-00-F8 (IEEE 802.1H).
    pub fn as_ethertype(&self) -> Option<EtherType> {
        match *self {
            Repr::Snap { oui, protocol_id } if oui == OUI_RFC1042 || oui == OUI_BRIDGE_TUNNEL => {
                Some(EtherType::from(protocol_id))
            }
            _ => None,
        }
    }

    pub fn parse<T: AsRef<[u8]> + ?Sized>(packet: &Packet<&T>) -> Result<Repr> {
        packet.check_len()?;
        if packet.is_snap() {
            return Ok(Repr::Snap { oui: packet.oui(), protocol_id: packet.protocol_id() });
        }
        Ok(Repr::Llc { dsap: packet.dsap(), ssap: packet.ssap(), control: packet.control()? })
    }

    /// 3 (U-format), 4 (I/S-format) or 8 (LLC + SNAP).
    pub const fn header_len(&self) -> usize {
        match self {
            Repr::Llc { control, .. } => 2 + control.len(),
            Repr::Snap { .. } => LLC_SNAP_LEN,
        }
    }

    pub const fn buffer_len(&self) -> usize {
        self.header_len()
    }

    /// Writes the header; panics if the buffer is shorter than [`Self::header_len`].
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]> + ?Sized>(&self, packet: &mut Packet<&mut T>) {
        match *self {
            Repr::Llc { dsap, ssap, control } => {
                packet.set_dsap(dsap);
                packet.set_ssap(ssap);
                packet.set_control(control);
            }
            Repr::Snap { oui, protocol_id } => {
                packet.set_dsap(SNAP_SAP);
                packet.set_ssap(SNAP_SAP);
                packet.set_control(Control::UI);
                packet.set_oui(oui);
                packet.set_protocol_id(protocol_id);
            }
        }
    }

    /// Appends header + `payload` to `out`.
    pub fn encapsulate(&self, payload: &[u8], out: &mut Vec<u8>) {
        let start = out.len();
        out.resize(start + self.header_len(), 0);
        self.emit(&mut Packet::new_unchecked(&mut out[start..]));
        out.extend_from_slice(payload);
    }

    /// Parses the header at the start of `pdu` and returns it with the information field.
    pub fn decapsulate(pdu: &[u8]) -> Result<(Repr, &[u8])> {
        let packet = Packet::new_checked(pdu)?;
        let repr = Repr::parse(&packet)?;
        Ok((repr, &pdu[repr.header_len()..]))
    }

    /// Named byte counts of the header (the payload length does not change them).
    pub fn overhead_fields(&self, _payload_len: usize) -> Vec<(&'static str, usize)> {
        match self {
            Repr::Llc { control, .. } => vec![("dsap", 1), ("ssap", 1), ("control", control.len())],
            Repr::Snap { .. } => vec![("dsap", 1), ("ssap", 1), ("control", 1), ("oui", 3), ("protocol id", 2)],
        }
    }
}

#[cfg(test)]
mod test {
    use super::*;
    use proptest::prelude::*;

    // RFC 1042 header in front of an IPv4 packet's first octets (45 00).
    static SNAP_BYTES: [u8; 10] = [0xaa, 0xaa, 0x03, 0x00, 0x00, 0x00, 0x08, 0x00, 0x45, 0x00];
    // A spanning-tree BPDU's LLC header (IEEE 802.1D): DSAP 42, SSAP 42, UI,
    // then the BPDU's protocol identifier 00 00.
    static STP_BYTES: [u8; 5] = [0x42, 0x42, 0x03, 0x00, 0x00];
    // Type 2 I-format: N(S)=5, N(R)=9, P=1 → 0x0a, 0x13, on SAP F0 (NetBIOS).
    static I_BYTES: [u8; 4] = [0xf0, 0xf0, 0x0a, 0x13];
    // S-format RNR, N(R)=3, F=0 → 0x05, 0x06, response (SSAP C/R = 1).
    static S_BYTES: [u8; 4] = [0xf0, 0xf1, 0x05, 0x06];

    #[test]
    fn test_parse_snap() {
        let p = Packet::new_checked(&SNAP_BYTES[..]).unwrap();
        assert!(p.is_snap());
        assert_eq!(p.header_len(), 8);
        assert_eq!(p.payload(), &[0x45, 0x00]);
        let r = Repr::parse(&p).unwrap();
        assert_eq!(r, Repr::ethertype(EtherType::Ipv4));
        assert_eq!(r.as_ethertype(), Some(EtherType::Ipv4));
    }

    #[test]
    fn test_emit_snap() {
        let mut out = Vec::new();
        Repr::ethertype(EtherType::Ipv4).encapsulate(&[0x45, 0x00], &mut out);
        assert_eq!(&out[..], &SNAP_BYTES[..]);
        assert_eq!(&out[..8], &LLC_SNAP_IPV4);
    }

    #[test]
    fn test_parse_llc() {
        let (r, rest) = Repr::decapsulate(&STP_BYTES).unwrap();
        assert_eq!(r, Repr::Llc { dsap: 0x42, ssap: 0x42, control: Control::UI });
        assert_eq!(rest, &[0, 0]);
        assert_eq!(r.as_ethertype(), None);
        let (r, rest) = Repr::decapsulate(&I_BYTES).unwrap();
        assert_eq!(
            r,
            Repr::Llc {
                dsap: 0xf0,
                ssap: 0xf0,
                control: Control::Information { send_seq: 5, recv_seq: 9, poll_final: true }
            }
        );
        assert!(rest.is_empty());
        let (r, _) = Repr::decapsulate(&S_BYTES).unwrap();
        assert_eq!(
            r,
            Repr::Llc {
                dsap: 0xf0,
                ssap: 0xf1,
                control: Control::Supervisory {
                    function: SupervisoryFunction::ReceiveNotReady,
                    recv_seq: 3,
                    poll_final: false
                }
            }
        );
    }

    #[test]
    fn test_emit_llc() {
        for bytes in [&STP_BYTES[..3], &I_BYTES[..], &S_BYTES[..]] {
            let (r, _) = Repr::decapsulate(bytes).unwrap();
            let mut out = Vec::new();
            r.encapsulate(&[], &mut out);
            assert_eq!(&out[..], bytes);
        }
        // XID with P set: 0xaf | 0x10 = 0xbf.
        let mut out = [0u8; 3];
        Repr::Llc { dsap: 0, ssap: 0, control: Control::Unnumbered { modifier: control::XID, poll_final: true } }
            .emit(&mut Packet::new_unchecked(&mut out[..]));
        assert_eq!(out, [0, 0, 0xbf]);
    }

    #[test]
    fn test_truncated() {
        assert_eq!(Packet::new_checked(&SNAP_BYTES[..7]), Err(Error::Truncated));
        assert_eq!(Packet::new_checked(&I_BYTES[..3]), Err(Error::Truncated));
        assert_eq!(Packet::new_checked(&STP_BYTES[..2]), Err(Error::Truncated));
        assert!(Packet::new_checked(&STP_BYTES[..3]).is_ok());
        // S-format with reserved bits set.
        assert_eq!(Repr::decapsulate(&[0xf0, 0xf0, 0x15, 0x00]), Err(Error::Malformed));
    }

    #[test]
    fn test_overhead() {
        let f = Repr::ethertype(EtherType::Arp).overhead_fields(28);
        assert_eq!(f.iter().map(|x| x.1).sum::<usize>(), 8);
        assert_eq!(Repr::Llc { dsap: 0x42, ssap: 0x42, control: Control::UI }.overhead_fields(0).len(), 3);
    }

    fn arb_control() -> impl Strategy<Value = Control> {
        prop_oneof![
            (0u8..128, 0u8..128, any::<bool>()).prop_map(|(s, r, p)| Control::Information {
                send_seq: s,
                recv_seq: r,
                poll_final: p
            }),
            (0u8..4, 0u8..128, any::<bool>()).prop_map(|(f, r, p)| Control::Supervisory {
                function: SupervisoryFunction::from(f),
                recv_seq: r,
                poll_final: p
            }),
            (any::<u8>(), any::<bool>())
                .prop_map(|(m, p)| Control::Unnumbered { modifier: (m | 0x03) & !0x10, poll_final: p }),
        ]
    }

    fn arb_repr() -> impl Strategy<Value = Repr> {
        prop_oneof![
            (any::<u8>(), any::<u8>(), arb_control())
                .prop_filter("AA-AA-03 is SNAP", |(d, s, c)| !(*d == 0xaa && *s == 0xaa && *c == Control::UI))
                .prop_map(|(dsap, ssap, control)| Repr::Llc { dsap, ssap, control }),
            (any::<[u8; 3]>(), any::<u16>()).prop_map(|(oui, protocol_id)| Repr::Snap { oui, protocol_id }),
        ]
    }

    proptest! {
        #[test]
        fn roundtrip(repr in arb_repr(), payload in proptest::collection::vec(any::<u8>(), 0..20)) {
            let mut a = Vec::new();
            repr.encapsulate(&payload, &mut a);
            let (parsed, rest) = Repr::decapsulate(&a).unwrap();
            prop_assert_eq!(parsed, repr);
            prop_assert_eq!(rest, &payload[..]);
            let mut b = Vec::new();
            parsed.encapsulate(&payload, &mut b);
            prop_assert_eq!(a, b);
        }

        #[test]
        fn parse_never_panics(data in proptest::collection::vec(any::<u8>(), 0..12)) {
            let _ = Repr::decapsulate(&data);
            if let Ok(p) = Packet::new_checked(&data[..]) {
                let _ = p.payload();
                let _ = p.control();
            }
        }
    }
}
