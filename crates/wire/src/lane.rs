//! LAN Emulation over ATM: the LE header of data frames and the LE control frame.
//!
//! Standards a reader needs:
//! * ATM Forum af-lane-0021.000 "LAN Emulation over ATM Version 1.0" (LUNI v1):
//!   the data frame format (a 2-octet LE header, the LECID of the sender, then the
//!   IEEE 802.3 frame without FCS: §4.3 / §5.2 in the 802.3 data frame figure), the
//!   LE control frame (§4.2: MARKER 0xFF00, PROTOCOL 0x01, VERSION 0x01, OP-CODE,
//!   STATUS, TRANSACTION-ID, REQUESTER-LECID, FLAGS, two LAN destinations, two ATM
//!   addresses, LAN-TYPE, MAXIMUM-FRAME-SIZE, NUMBER-TLVS, ELAN-NAME-SIZE and a
//!   32-octet ELAN-NAME: 108 octets, then TLVs), and the table of maximum data frame
//!   sizes (AAL5 SDU, LE header included): 1516, 4544, 9234, 18190 octets.
//! * ATM Forum af-lane-0084.000 "LANE v2.0 LUNI": the TLVs, LE_VERIFY, the V2 flags.
//! * RFC 2684 / [`crate::aal5`] carry the frames; LANE data VCs use VC multiplexing
//!   with this 2-octet header in place of RFC 2684's PAD.
//!
//! Section numbers above come from the structure of the LUNI documents as quoted by
//! implementations (Wireshark's packet-atm.c, Linux net/atm/lec.h); the octet layout
//! was cross-checked against Wireshark's LANE dissector (tests/tshark_atm.rs).

use core::fmt;

use crate::ethernet::Address as MacAddress;
use crate::{Error, Result};

/// af-lane-0021.000: the LE header (LECID) in front of every data frame.
pub const LE_HEADER_LEN: usize = 2;
/// af-lane-0021.000 §4.2: the fixed part of an LE control frame.
pub const CONTROL_LEN: usize = 108;
/// af-lane-0021.000 §4.2: the MARKER that starts every control frame. No LECID takes
/// this value, so it tells control frames from data frames.
pub const MARKER: u16 = 0xff00;
/// af-lane-0021.000 §4.2: PROTOCOL, the ATM LAN Emulation protocol.
pub const PROTOCOL: u8 = 0x01;
/// af-lane-0021.000 §4.2: VERSION 1 (LANE v2 keeps 0x01 and signals itself in FLAGS).
pub const VERSION: u8 = 0x01;
/// af-lane-0021.000 §4.2: ELAN-NAME is 32 octets.
pub const ELAN_NAME_LEN: usize = 32;
/// ATM Forum UNI 3.1 §5.1.3.1: an ATM (NSAP-format) address is 20 octets.
pub const ATM_ADDRESS_LEN: usize = 20;
/// af-lane-0021.000: LECIDs 0x0001..=0xFEFF are assigned by the LES.
pub const MAX_LECID: u16 = 0xfeff;

/// Byte ranges of the data frame and of the control frame.
pub mod field {
    use crate::Field;
    /// Data frame: the LE header.
    pub const LECID: Field = 0..2;
    /// Data frame: the IEEE 802.3 frame without FCS.
    pub const DATA_PAYLOAD: crate::Rest = 2..;

    // Control frame, af-lane-0021.000 §4.2.
    pub const MARKER: Field = 0..2;
    pub const PROTOCOL: usize = 2;
    pub const VERSION: usize = 3;
    pub const OPCODE: Field = 4..6;
    pub const STATUS: Field = 6..8;
    pub const TRANSACTION_ID: Field = 8..12;
    pub const REQUESTER_LECID: Field = 12..14;
    pub const FLAGS: Field = 14..16;
    pub const SOURCE_LAN_DESTINATION: Field = 16..24;
    pub const TARGET_LAN_DESTINATION: Field = 24..32;
    pub const SOURCE_ATM_ADDRESS: Field = 32..52;
    pub const LAN_TYPE: usize = 52;
    pub const MAX_FRAME_SIZE: usize = 53;
    pub const NUMBER_TLVS: usize = 54;
    pub const ELAN_NAME_SIZE: usize = 55;
    pub const TARGET_ATM_ADDRESS: Field = 56..76;
    pub const ELAN_NAME: Field = 76..108;
    pub const TLVS: crate::Rest = 108..;
}

crate::enum_with_unknown! {
    /// af-lane-0021.000 §4.2 (and af-lane-0084.000 for LE_VERIFY): OP-CODE. A
    /// response is its request with 0x0100 set.
    pub enum Opcode(u16) {
        ConfigureRequest = 0x0001,
        ConfigureResponse = 0x0101,
        JoinRequest = 0x0002,
        JoinResponse = 0x0102,
        ReadyQuery = 0x0003,
        ReadyIndication = 0x0103,
        RegisterRequest = 0x0004,
        RegisterResponse = 0x0104,
        UnregisterRequest = 0x0005,
        UnregisterResponse = 0x0105,
        ArpRequest = 0x0006,
        ArpResponse = 0x0106,
        FlushRequest = 0x0007,
        FlushResponse = 0x0107,
        NarpRequest = 0x0008,
        TopologyRequest = 0x0009,
        VerifyRequest = 0x000a,
        VerifyResponse = 0x010a,
    }
}

impl Opcode {
    /// Responses have bit 0x0100 set; only they carry a meaningful STATUS.
    pub fn is_response(self) -> bool {
        u16::from(self) & 0x0100 != 0
    }
}

crate::enum_with_unknown! {
    /// af-lane-0021.000 §4.2: STATUS codes of responses.
    pub enum Status(u16) {
        Success = 0,
        VersionNotSupported = 1,
        InvalidRequestParameters = 2,
        DuplicateLanDestination = 4,
        DuplicateAtmAddress = 5,
        InsufficientResources = 6,
        AccessDenied = 7,
        InvalidRequesterId = 8,
        InvalidLanDestination = 9,
        InvalidAtmAddress = 10,
        NoConfiguration = 20,
        ConfigureError = 21,
        InsufficientInformation = 22,
    }
}

crate::enum_with_unknown! {
    /// af-lane-0021.000 §4.2: LAN-TYPE.
    pub enum LanType(u8) {
        Unspecified = 0x00,
        Ethernet = 0x01,
        TokenRing = 0x02,
    }
}

crate::enum_with_unknown! {
    /// af-lane-0021.000 §4.2 MAXIMUM-FRAME-SIZE codes, and the AAL5 SDU sizes the LUNI
    /// v1 table gives for them (LE header included). Wireshark lists the same codes
    /// with the larger sizes LANE v2 also allows under them (1528/1580/1592, ...).
    pub enum MaxFrameSize(u8) {
        Unspecified = 0,
        /// 1516: a 1514-octet 802.3 frame without FCS plus the 2-octet LE header.
        Size1516 = 1,
        /// 4544 (802.5 at 4 Mb/s).
        Size4544 = 2,
        /// 9234 (RFC 1626's 9180 plus LAN headers).
        Size9234 = 3,
        /// 18190 (802.5 at 16 Mb/s).
        Size18190 = 4,
    }
}

impl MaxFrameSize {
    /// The AAL5 SDU size in octets, when the code names one.
    pub fn sdu_len(self) -> Option<usize> {
        match self {
            MaxFrameSize::Size1516 => Some(1516),
            MaxFrameSize::Size4544 => Some(4544),
            MaxFrameSize::Size9234 => Some(9234),
            MaxFrameSize::Size18190 => Some(18190),
            _ => None,
        }
    }

    /// The largest 802.3 frame (without FCS) an emulated LAN of this size carries.
    pub fn max_ethernet_frame(self) -> Option<usize> {
        self.sdu_len().map(|n| n - LE_HEADER_LEN)
    }
}

/// af-lane-0021.000 §4.2 and af-lane-0084.000: FLAGS bits.
pub mod flags {
    /// LE_ARP response: the target is a remote (non-registered) address.
    pub const REMOTE_ADDRESS: u16 = 0x0001;
    /// LANE v2: the sender is V2 capable (LE_CONFIGURE, LE_JOIN).
    pub const V2_CAPABLE: u16 = 0x0002;
    /// LANE v2: selective multicast (LE_JOIN request).
    pub const SELECTIVE_MULTICAST: u16 = 0x0004;
    /// LANE v2: V2 required (LE_JOIN response).
    pub const V2_REQUIRED: u16 = 0x0008;
    /// The LEC is a proxy (a bridge) (LE_JOIN).
    pub const PROXY: u16 = 0x0080;
    /// LE_TOPOLOGY_REQUEST: a topology change is under way.
    pub const TOPOLOGY_CHANGE: u16 = 0x0100;
    /// LANE v2: exclude explorer frames (LE_JOIN).
    pub const EXCLUDE_EXPLORER_FRAMES: u16 = 0x0200;
}

/// A 20-octet ATM end system address (NSAP format, ATM Forum UNI 3.1 §5.1.3.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct AtmAddress(pub [u8; ATM_ADDRESS_LEN]);

impl AtmAddress {
    /// Reads an address from the first 20 octets of `data`; panics if shorter.
    pub fn from_bytes(data: &[u8]) -> AtmAddress {
        let mut a = [0u8; ATM_ADDRESS_LEN];
        a.copy_from_slice(&data[..ATM_ADDRESS_LEN]);
        AtmAddress(a)
    }
}

impl fmt::Display for AtmAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for b in self.0 {
            write!(f, "{b:02x}")?;
        }
        Ok(())
    }
}

/// af-lane-0021.000 §4.2: an 8-octet LAN destination: a 2-octet tag and 6 octets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LanDestination {
    /// Tag 0x0000, six zero octets.
    NotPresent,
    /// Tag 0x0001: a MAC address.
    Mac(MacAddress),
    /// Tag 0x0002: 4 reserved zero octets, then a 802.5 route descriptor.
    RouteDescriptor(u16),
    /// Any other tag, or a known tag with non-zero reserved octets, kept as is.
    Other { tag: u16, value: [u8; 6] },
}

impl LanDestination {
    pub const TAG_NOT_PRESENT: u16 = 0x0000;
    pub const TAG_MAC: u16 = 0x0001;
    pub const TAG_ROUTE_DESCRIPTOR: u16 = 0x0002;

    pub fn parse(bytes: &[u8; 8]) -> LanDestination {
        let tag = u16::from_be_bytes([bytes[0], bytes[1]]);
        let mut value = [0u8; 6];
        value.copy_from_slice(&bytes[2..]);
        match tag {
            Self::TAG_NOT_PRESENT if value == [0; 6] => LanDestination::NotPresent,
            Self::TAG_MAC => LanDestination::Mac(MacAddress(value)),
            Self::TAG_ROUTE_DESCRIPTOR if value[..4] == [0; 4] => {
                LanDestination::RouteDescriptor(u16::from_be_bytes([value[4], value[5]]))
            }
            _ => LanDestination::Other { tag, value },
        }
    }

    pub fn to_bytes(&self) -> [u8; 8] {
        let (tag, value) = match *self {
            LanDestination::NotPresent => (Self::TAG_NOT_PRESENT, [0; 6]),
            LanDestination::Mac(a) => (Self::TAG_MAC, a.0),
            LanDestination::RouteDescriptor(rd) => {
                let r = rd.to_be_bytes();
                (Self::TAG_ROUTE_DESCRIPTOR, [0, 0, 0, 0, r[0], r[1]])
            }
            LanDestination::Other { tag, value } => (tag, value),
        };
        let mut out = [0u8; 8];
        out[..2].copy_from_slice(&tag.to_be_bytes());
        out[2..].copy_from_slice(&value);
        out
    }
}

/// Whether an AAL5 SDU on a LANE VC is a control frame (starts with the MARKER).
pub fn is_control(sdu: &[u8]) -> bool {
    sdu.len() >= 2 && u16::from_be_bytes([sdu[0], sdu[1]]) == MARKER
}

/// A read/write view of a LANE data frame: LE header, then the 802.3 frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DataFrame<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> DataFrame<T> {
    pub const fn new_unchecked(buffer: T) -> DataFrame<T> {
        DataFrame { buffer }
    }

    pub fn new_checked(buffer: T) -> Result<DataFrame<T>> {
        let f = DataFrame::new_unchecked(buffer);
        f.check_len()?;
        Ok(f)
    }

    /// `Err(Truncated)` when shorter than the LE header.
    pub fn check_len(&self) -> Result<()> {
        if self.buffer.as_ref().len() < LE_HEADER_LEN {
            Err(Error::Truncated)
        } else {
            Ok(())
        }
    }

    pub fn into_inner(self) -> T {
        self.buffer
    }

    /// The sender's LE client identifier (0 in frames the BUS forwards unchanged is
    /// not special; 0xFF00 would be a control frame).
    pub fn lecid(&self) -> u16 {
        let d = &self.buffer.as_ref()[field::LECID];
        u16::from_be_bytes([d[0], d[1]])
    }

    /// The IEEE 802.3 frame, without FCS.
    pub fn payload(&self) -> &[u8] {
        &self.buffer.as_ref()[field::DATA_PAYLOAD]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> DataFrame<T> {
    pub fn set_lecid(&mut self, value: u16) {
        self.buffer.as_mut()[field::LECID].copy_from_slice(&value.to_be_bytes());
    }

    pub fn payload_mut(&mut self) -> &mut [u8] {
        &mut self.buffer.as_mut()[field::DATA_PAYLOAD]
    }
}

/// The LE header of a data frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct DataRepr {
    /// The sending LEC's identifier, never 0xFF00.
    pub lecid: u16,
}

impl DataRepr {
    /// `Err(Malformed)` when the frame starts with the control MARKER.
    pub fn parse<T: AsRef<[u8]> + ?Sized>(frame: &DataFrame<&T>) -> Result<DataRepr> {
        frame.check_len()?;
        if frame.lecid() == MARKER {
            return Err(Error::Malformed);
        }
        Ok(DataRepr { lecid: frame.lecid() })
    }

    pub const fn header_len(&self) -> usize {
        LE_HEADER_LEN
    }

    pub const fn buffer_len(&self) -> usize {
        LE_HEADER_LEN
    }

    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]> + ?Sized>(&self, frame: &mut DataFrame<&mut T>) {
        frame.set_lecid(self.lecid);
    }

    /// Appends the LE header and `ethernet_frame` (without FCS) to `out`.
    pub fn encapsulate(&self, ethernet_frame: &[u8], out: &mut Vec<u8>) {
        out.extend_from_slice(&self.lecid.to_be_bytes());
        out.extend_from_slice(ethernet_frame);
    }

    /// The overhead LANE adds to an 802.3 frame: the LE header (the frame travels
    /// without its 4-octet FCS, which the caller may count as a saving).
    pub fn overhead_fields(&self, _payload_len: usize) -> Vec<(&'static str, usize)> {
        vec![("le header", LE_HEADER_LEN)]
    }
}

/// Splits a data frame into its LE header and 802.3 frame.
pub fn decapsulate(sdu: &[u8]) -> Result<(DataRepr, &[u8])> {
    let frame = DataFrame::new_checked(sdu)?;
    let repr = DataRepr::parse(&frame)?;
    Ok((repr, &sdu[LE_HEADER_LEN..]))
}

/// A read/write view of an LE control frame (af-lane-0021.000 §4.2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ControlFrame<T: AsRef<[u8]>> {
    buffer: T,
}

macro_rules! be_getter {
    ($get:ident, $field:expr) => {
        pub fn $get(&self) -> u16 {
            let d = &self.buffer.as_ref()[$field];
            u16::from_be_bytes([d[0], d[1]])
        }
    };
}

impl<T: AsRef<[u8]>> ControlFrame<T> {
    pub const fn new_unchecked(buffer: T) -> ControlFrame<T> {
        ControlFrame { buffer }
    }

    pub fn new_checked(buffer: T) -> Result<ControlFrame<T>> {
        let f = ControlFrame::new_unchecked(buffer);
        f.check_len()?;
        Ok(f)
    }

    /// `Err(Truncated)` when shorter than the 108-octet fixed part.
    pub fn check_len(&self) -> Result<()> {
        if self.buffer.as_ref().len() < CONTROL_LEN {
            Err(Error::Truncated)
        } else {
            Ok(())
        }
    }

    pub fn into_inner(self) -> T {
        self.buffer
    }

    be_getter!(marker, field::MARKER);
    be_getter!(opcode_raw, field::OPCODE);
    be_getter!(status_raw, field::STATUS);
    be_getter!(requester_lecid, field::REQUESTER_LECID);
    be_getter!(flags, field::FLAGS);

    pub fn protocol(&self) -> u8 {
        self.buffer.as_ref()[field::PROTOCOL]
    }

    pub fn version(&self) -> u8 {
        self.buffer.as_ref()[field::VERSION]
    }

    pub fn opcode(&self) -> Opcode {
        Opcode::from(self.opcode_raw())
    }

    pub fn status(&self) -> Status {
        Status::from(self.status_raw())
    }

    pub fn transaction_id(&self) -> u32 {
        let d = &self.buffer.as_ref()[field::TRANSACTION_ID];
        u32::from_be_bytes([d[0], d[1], d[2], d[3]])
    }

    fn lan_destination(&self, range: crate::Field) -> LanDestination {
        let mut b = [0u8; 8];
        b.copy_from_slice(&self.buffer.as_ref()[range]);
        LanDestination::parse(&b)
    }

    pub fn source_lan_destination(&self) -> LanDestination {
        self.lan_destination(field::SOURCE_LAN_DESTINATION)
    }

    pub fn target_lan_destination(&self) -> LanDestination {
        self.lan_destination(field::TARGET_LAN_DESTINATION)
    }

    pub fn source_atm_address(&self) -> AtmAddress {
        AtmAddress::from_bytes(&self.buffer.as_ref()[field::SOURCE_ATM_ADDRESS])
    }

    pub fn target_atm_address(&self) -> AtmAddress {
        AtmAddress::from_bytes(&self.buffer.as_ref()[field::TARGET_ATM_ADDRESS])
    }

    pub fn lan_type(&self) -> LanType {
        LanType::from(self.buffer.as_ref()[field::LAN_TYPE])
    }

    pub fn max_frame_size(&self) -> MaxFrameSize {
        MaxFrameSize::from(self.buffer.as_ref()[field::MAX_FRAME_SIZE])
    }

    pub fn number_tlvs(&self) -> u8 {
        self.buffer.as_ref()[field::NUMBER_TLVS]
    }

    pub fn elan_name_size(&self) -> u8 {
        self.buffer.as_ref()[field::ELAN_NAME_SIZE]
    }

    /// The whole 32-octet ELAN-NAME field.
    pub fn elan_name_field(&self) -> &[u8] {
        &self.buffer.as_ref()[field::ELAN_NAME]
    }

    /// The ELAN name: the first ELAN-NAME-SIZE octets (at most 32).
    pub fn elan_name(&self) -> &[u8] {
        let n = usize::from(self.elan_name_size()).min(ELAN_NAME_LEN);
        &self.elan_name_field()[..n]
    }

    /// Everything after the fixed part: the TLVs (and any trailing octets).
    pub fn tlv_bytes(&self) -> &[u8] {
        &self.buffer.as_ref()[field::TLVS]
    }

    /// The TLVs after the fixed part, in order, stopping at the first that does not
    /// fit. Each is TYPE (4 octets: OUI and type), LENGTH (1), VALUE.
    pub fn tlvs(&self) -> TlvIter<'_> {
        TlvIter { rest: self.tlv_bytes(), remaining: usize::from(self.number_tlvs()) }
    }
}

macro_rules! be_setter {
    ($set:ident, $field:expr, u16) => {
        pub fn $set(&mut self, value: u16) {
            self.buffer.as_mut()[$field].copy_from_slice(&value.to_be_bytes());
        }
    };
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> ControlFrame<T> {
    be_setter!(set_marker, field::MARKER, u16);
    be_setter!(set_requester_lecid, field::REQUESTER_LECID, u16);
    be_setter!(set_flags, field::FLAGS, u16);

    pub fn set_protocol(&mut self, value: u8) {
        self.buffer.as_mut()[field::PROTOCOL] = value;
    }

    pub fn set_version(&mut self, value: u8) {
        self.buffer.as_mut()[field::VERSION] = value;
    }

    pub fn set_opcode(&mut self, value: Opcode) {
        self.buffer.as_mut()[field::OPCODE].copy_from_slice(&u16::from(value).to_be_bytes());
    }

    pub fn set_status(&mut self, value: Status) {
        self.buffer.as_mut()[field::STATUS].copy_from_slice(&u16::from(value).to_be_bytes());
    }

    pub fn set_transaction_id(&mut self, value: u32) {
        self.buffer.as_mut()[field::TRANSACTION_ID].copy_from_slice(&value.to_be_bytes());
    }

    pub fn set_source_lan_destination(&mut self, value: LanDestination) {
        self.buffer.as_mut()[field::SOURCE_LAN_DESTINATION].copy_from_slice(&value.to_bytes());
    }

    pub fn set_target_lan_destination(&mut self, value: LanDestination) {
        self.buffer.as_mut()[field::TARGET_LAN_DESTINATION].copy_from_slice(&value.to_bytes());
    }

    pub fn set_source_atm_address(&mut self, value: &AtmAddress) {
        self.buffer.as_mut()[field::SOURCE_ATM_ADDRESS].copy_from_slice(&value.0);
    }

    pub fn set_target_atm_address(&mut self, value: &AtmAddress) {
        self.buffer.as_mut()[field::TARGET_ATM_ADDRESS].copy_from_slice(&value.0);
    }

    pub fn set_lan_type(&mut self, value: LanType) {
        self.buffer.as_mut()[field::LAN_TYPE] = value.into();
    }

    pub fn set_max_frame_size(&mut self, value: MaxFrameSize) {
        self.buffer.as_mut()[field::MAX_FRAME_SIZE] = value.into();
    }

    pub fn set_number_tlvs(&mut self, value: u8) {
        self.buffer.as_mut()[field::NUMBER_TLVS] = value;
    }

    pub fn set_elan_name_size(&mut self, value: u8) {
        self.buffer.as_mut()[field::ELAN_NAME_SIZE] = value;
    }

    pub fn elan_name_field_mut(&mut self) -> &mut [u8] {
        &mut self.buffer.as_mut()[field::ELAN_NAME]
    }

    pub fn tlv_bytes_mut(&mut self) -> &mut [u8] {
        &mut self.buffer.as_mut()[field::TLVS]
    }
}

/// One TLV of a LANE control frame (af-lane-0021.000 §5.1.x configuration TLVs;
/// af-lane-0084.000 §5.2). The 4-octet type is an OUI (3) and a type (1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Tlv<'a> {
    pub kind: u32,
    pub value: &'a [u8],
}

/// Iterator over the TLVs of a control frame.
#[derive(Debug, Clone)]
pub struct TlvIter<'a> {
    rest: &'a [u8],
    remaining: usize,
}

impl<'a> Iterator for TlvIter<'a> {
    type Item = Tlv<'a>;

    fn next(&mut self) -> Option<Tlv<'a>> {
        if self.remaining == 0 || self.rest.len() < 5 {
            return None;
        }
        let kind = u32::from_be_bytes([self.rest[0], self.rest[1], self.rest[2], self.rest[3]]);
        let len = usize::from(self.rest[4]);
        let value = self.rest.get(5..5 + len)?;
        self.rest = &self.rest[5 + len..];
        self.remaining -= 1;
        Some(Tlv { kind, value })
    }
}

/// Length of `count` TLVs at the start of `bytes`, or `Err(Truncated)`.
fn tlvs_len(bytes: &[u8], count: u8) -> Result<usize> {
    let mut off = 0;
    for _ in 0..count {
        let len = bytes.get(off + 4).ok_or(Error::Truncated)?;
        off += 5 + usize::from(*len);
        if off > bytes.len() {
            return Err(Error::Truncated);
        }
    }
    Ok(off)
}

/// A parsed LE control frame. The layout is the same for every op-code; fields an
/// op-code does not use are zero (the standard calls them reserved) but are kept so
/// that parse/emit is lossless.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ControlRepr<'a> {
    pub opcode: Opcode,
    /// Meaningful in responses.
    pub status: Status,
    pub transaction_id: u32,
    pub requester_lecid: u16,
    /// See [`flags`].
    pub flags: u16,
    pub source: LanDestination,
    pub target: LanDestination,
    pub source_atm: AtmAddress,
    /// LE_CONFIGURE / LE_JOIN.
    pub lan_type: LanType,
    /// LE_CONFIGURE / LE_JOIN.
    pub max_frame_size: MaxFrameSize,
    pub target_atm: AtmAddress,
    /// LE_CONFIGURE / LE_JOIN: ELAN-NAME-SIZE, at most 32.
    pub elan_name_size: u8,
    /// LE_CONFIGURE / LE_JOIN: the whole ELAN-NAME field.
    pub elan_name: [u8; ELAN_NAME_LEN],
    /// NUMBER-TLVS TLVs, as they are on the wire.
    pub tlvs: &'a [u8],
    /// How many TLVs `tlvs` holds (NUMBER-TLVS).
    pub tlv_count: u8,
}

impl<'a> ControlRepr<'a> {
    /// A frame of `opcode` with every other field zero / not present.
    pub const fn new(opcode: Opcode) -> ControlRepr<'static> {
        ControlRepr {
            opcode,
            status: Status::Success,
            transaction_id: 0,
            requester_lecid: 0,
            flags: 0,
            source: LanDestination::NotPresent,
            target: LanDestination::NotPresent,
            source_atm: AtmAddress([0; ATM_ADDRESS_LEN]),
            lan_type: LanType::Unspecified,
            max_frame_size: MaxFrameSize::Unspecified,
            target_atm: AtmAddress([0; ATM_ADDRESS_LEN]),
            elan_name_size: 0,
            elan_name: [0; ELAN_NAME_LEN],
            tlvs: &[],
            tlv_count: 0,
        }
    }

    /// An LE_ARP_REQUEST (af-lane-0021.000 §6.1.x): who has `target_mac`?
    pub fn arp_request(
        transaction_id: u32,
        requester_lecid: u16,
        source_mac: MacAddress,
        source_atm: AtmAddress,
        target_mac: MacAddress,
    ) -> ControlRepr<'static> {
        ControlRepr {
            transaction_id,
            requester_lecid,
            source: LanDestination::Mac(source_mac),
            target: LanDestination::Mac(target_mac),
            source_atm,
            ..ControlRepr::new(Opcode::ArpRequest)
        }
    }

    /// Sets the ELAN name; `Err(Malformed)` if longer than 32 octets.
    pub fn set_elan_name(&mut self, name: &[u8]) -> Result<()> {
        if name.len() > ELAN_NAME_LEN {
            return Err(Error::Malformed);
        }
        self.elan_name = [0; ELAN_NAME_LEN];
        self.elan_name[..name.len()].copy_from_slice(name);
        self.elan_name_size = name.len() as u8;
        Ok(())
    }

    /// The ELAN name (its first ELAN-NAME-SIZE octets).
    pub fn elan_name(&self) -> &[u8] {
        &self.elan_name[..usize::from(self.elan_name_size).min(ELAN_NAME_LEN)]
    }

    /// Parses a control frame. A bad MARKER, PROTOCOL or VERSION, or an ELAN-NAME-SIZE
    /// over 32, is `Err(Malformed)`; TLVs that NUMBER-TLVS announces but that do not
    /// fit are `Err(Truncated)`.
    pub fn parse<T: AsRef<[u8]> + ?Sized>(frame: &ControlFrame<&'a T>) -> Result<ControlRepr<'a>> {
        frame.check_len()?;
        if frame.marker() != MARKER || frame.protocol() != PROTOCOL || frame.version() != VERSION {
            return Err(Error::Malformed);
        }
        if usize::from(frame.elan_name_size()) > ELAN_NAME_LEN {
            return Err(Error::Malformed);
        }
        let buffer: &'a T = frame.buffer;
        let all: &'a [u8] = buffer.as_ref();
        let tlv_area = &all[CONTROL_LEN..];
        let tlv_len = tlvs_len(tlv_area, frame.number_tlvs())?;
        let mut elan_name = [0u8; ELAN_NAME_LEN];
        elan_name.copy_from_slice(frame.elan_name_field());
        Ok(ControlRepr {
            opcode: frame.opcode(),
            status: frame.status(),
            transaction_id: frame.transaction_id(),
            requester_lecid: frame.requester_lecid(),
            flags: frame.flags(),
            source: frame.source_lan_destination(),
            target: frame.target_lan_destination(),
            source_atm: frame.source_atm_address(),
            lan_type: frame.lan_type(),
            max_frame_size: frame.max_frame_size(),
            target_atm: frame.target_atm_address(),
            elan_name_size: frame.elan_name_size(),
            elan_name,
            tlvs: &tlv_area[..tlv_len],
            tlv_count: frame.number_tlvs(),
        })
    }

    pub const fn header_len(&self) -> usize {
        CONTROL_LEN
    }

    /// 108 octets plus the TLVs.
    pub const fn buffer_len(&self) -> usize {
        CONTROL_LEN + self.tlvs.len()
    }

    /// Writes the frame into the first `buffer_len()` octets; panics if shorter.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]> + ?Sized>(&self, frame: &mut ControlFrame<&mut T>) {
        frame.set_marker(MARKER);
        frame.set_protocol(PROTOCOL);
        frame.set_version(VERSION);
        frame.set_opcode(self.opcode);
        frame.set_status(self.status);
        frame.set_transaction_id(self.transaction_id);
        frame.set_requester_lecid(self.requester_lecid);
        frame.set_flags(self.flags);
        frame.set_source_lan_destination(self.source);
        frame.set_target_lan_destination(self.target);
        frame.set_source_atm_address(&self.source_atm);
        frame.set_lan_type(self.lan_type);
        frame.set_max_frame_size(self.max_frame_size);
        frame.set_number_tlvs(self.tlv_count);
        frame.set_elan_name_size(self.elan_name_size);
        frame.set_target_atm_address(&self.target_atm);
        frame.elan_name_field_mut().copy_from_slice(&self.elan_name);
        frame.tlv_bytes_mut()[..self.tlvs.len()].copy_from_slice(self.tlvs);
    }

    /// Appends the whole control frame to `out`.
    pub fn encapsulate(&self, out: &mut Vec<u8>) {
        let start = out.len();
        out.resize(start + self.buffer_len(), 0);
        self.emit(&mut ControlFrame::new_unchecked(&mut out[start..]));
    }
}

#[cfg(test)]
mod test {
    use super::*;
    use proptest::prelude::*;

    const SRC_MAC: MacAddress = MacAddress([0x02, 0, 0, 0, 0, 0x01]);
    const DST_MAC: MacAddress = MacAddress([0x02, 0, 0, 0, 0, 0x02]);
    fn src_atm() -> AtmAddress {
        // A private ATM address: AFI 0x47 (ICD), then 19 octets.
        let mut a = [0u8; 20];
        a[0] = 0x47;
        for (i, b) in a[1..].iter_mut().enumerate() {
            *b = i as u8 + 1;
        }
        AtmAddress(a)
    }

    // An LE_ARP_REQUEST laid out by hand from the af-lane-0021.000 §4.2 table:
    // marker ff00, protocol 01, version 01, opcode 0006, status 0000,
    // transaction 00000042, requester LECID 0005, flags 0000,
    // source LAN dest 0001 + 02:00:00:00:00:01, target LAN dest 0001 + ...:02,
    // source ATM 47 01 02 .. 13, then 56 zero octets (lan type .. elan name; the
    // target ATM address is what the request asks for).
    fn arp_request_bytes() -> [u8; 108] {
        let mut b = [0u8; 108];
        b[..16].copy_from_slice(&[0xff, 0x00, 0x01, 0x01, 0x00, 0x06, 0x00, 0x00, 0, 0, 0, 0x42, 0x00, 0x05, 0, 0]);
        b[16..24].copy_from_slice(&[0x00, 0x01, 0x02, 0, 0, 0, 0, 0x01]);
        b[24..32].copy_from_slice(&[0x00, 0x01, 0x02, 0, 0, 0, 0, 0x02]);
        b[32..52].copy_from_slice(&src_atm().0);
        b
    }

    #[test]
    fn test_parse_control() {
        let bytes = arp_request_bytes();
        let frame = ControlFrame::new_checked(&bytes[..]).unwrap();
        let repr = ControlRepr::parse(&frame).unwrap();
        assert_eq!(repr, ControlRepr::arp_request(0x42, 5, SRC_MAC, src_atm(), DST_MAC));
        assert!(is_control(&bytes));
    }

    #[test]
    fn test_emit_control() {
        let mut out = Vec::new();
        ControlRepr::arp_request(0x42, 5, SRC_MAC, src_atm(), DST_MAC).encapsulate(&mut out);
        assert_eq!(&out[..], &arp_request_bytes()[..]);
    }

    #[test]
    fn test_join_with_name_and_tlvs() {
        // One TLV: ATM Forum OUI 00-A0-3E type 0x01 (Control-Timeout), length 2, 120 s.
        let tlvs = [0x00, 0xa0, 0x3e, 0x01, 0x02, 0x00, 0x78];
        let mut repr = ControlRepr {
            lan_type: LanType::Ethernet,
            max_frame_size: MaxFrameSize::Size1516,
            flags: flags::V2_CAPABLE,
            tlvs: &tlvs,
            tlv_count: 1,
            ..ControlRepr::new(Opcode::JoinRequest)
        };
        repr.set_elan_name(b"qoslab").unwrap();
        let mut out = Vec::new();
        repr.encapsulate(&mut out);
        assert_eq!(out.len(), 115);
        assert_eq!((out[52], out[53], out[54], out[55]), (0x01, 0x01, 0x01, 6));
        assert_eq!(&out[76..82], b"qoslab");
        let frame = ControlFrame::new_checked(&out[..]).unwrap();
        let tlv: Vec<_> = frame.tlvs().collect();
        assert_eq!(tlv, vec![Tlv { kind: 0x00a0_3e01, value: &[0x00, 0x78] }]);
        let parsed = ControlRepr::parse(&frame).unwrap();
        assert_eq!(parsed, repr);
        assert_eq!(parsed.elan_name(), b"qoslab");
        assert!(repr.set_elan_name(&[b'x'; 33]).is_err());
    }

    #[test]
    fn test_control_errors() {
        let bytes = arp_request_bytes();
        assert_eq!(ControlFrame::new_checked(&bytes[..107]).unwrap_err(), Error::Truncated);
        for (i, v) in [(0, 0xfe), (2, 0x02), (3, 0x02), (55, 33)] {
            let mut b = bytes;
            b[i] = v;
            assert_eq!(ControlRepr::parse(&ControlFrame::new_unchecked(&b[..])), Err(Error::Malformed), "octet {i}");
        }
        let mut b = bytes.to_vec();
        b[54] = 1; // one TLV announced, none present
        assert_eq!(ControlRepr::parse(&ControlFrame::new_unchecked(&b[..])), Err(Error::Truncated));
        b.extend_from_slice(&[0, 0xa0, 0x3e, 1, 4, 0]); // TLV claims 4 octets, has 1
        assert_eq!(ControlRepr::parse(&ControlFrame::new_unchecked(&b[..])), Err(Error::Truncated));
    }

    #[test]
    fn test_data_frame() {
        // LECID 5, then an Ethernet header 02:..:02 <- 02:..:01 type 0800 and a byte.
        static DATA: [u8; 17] = [0x00, 0x05, 2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x08, 0x00, 0x45];
        let (repr, eth) = decapsulate(&DATA).unwrap();
        assert_eq!(repr, DataRepr { lecid: 5 });
        assert_eq!(eth, &DATA[2..]);
        let mut out = Vec::new();
        repr.encapsulate(&DATA[2..], &mut out);
        assert_eq!(&out[..], &DATA[..]);
        assert!(!is_control(&DATA));
        assert_eq!(decapsulate(&[0x00]), Err(Error::Truncated));
        assert_eq!(decapsulate(&[0xff, 0x00, 1]), Err(Error::Malformed));
        assert_eq!(repr.overhead_fields(1514), vec![("le header", 2)]);
    }

    #[test]
    fn test_max_frame_sizes() {
        let sizes: Vec<_> = (1..=4).map(|c| MaxFrameSize::from(c).sdu_len().unwrap()).collect();
        assert_eq!(sizes, vec![1516, 4544, 9234, 18190]);
        assert_eq!(MaxFrameSize::Size1516.max_ethernet_frame(), Some(1514));
        assert_eq!(MaxFrameSize::Unspecified.sdu_len(), None);
        assert!(Opcode::ArpResponse.is_response() && !Opcode::ArpRequest.is_response());
    }

    #[test]
    fn test_lan_destination() {
        for d in [
            LanDestination::NotPresent,
            LanDestination::Mac(SRC_MAC),
            LanDestination::RouteDescriptor(0x0123),
            LanDestination::Other { tag: 7, value: [1, 2, 3, 4, 5, 6] },
            LanDestination::Other { tag: 0, value: [0, 0, 0, 0, 0, 1] },
        ] {
            assert_eq!(LanDestination::parse(&d.to_bytes()), d);
        }
    }

    fn arb_lan_destination() -> impl Strategy<Value = LanDestination> {
        prop_oneof![
            Just(LanDestination::NotPresent),
            any::<[u8; 6]>().prop_map(|m| LanDestination::Mac(MacAddress(m))),
            any::<u16>().prop_map(LanDestination::RouteDescriptor),
            any::<[u8; 8]>().prop_map(|b| LanDestination::parse(&b)),
        ]
    }

    proptest! {
        #[test]
        fn prop_control_emit_parse_emit(
            opcode in any::<u16>(), status in any::<u16>(), tid in any::<u32>(), lecid in any::<u16>(),
            fl in any::<u16>(), source in arb_lan_destination(), target in arb_lan_destination(),
            satm in any::<[u8; 20]>(), tatm in any::<[u8; 20]>(), lan_type in any::<u8>(), mfs in any::<u8>(),
            name in proptest::collection::vec(any::<u8>(), 0..=32),
            tlv_values in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..8), 0..3),
        ) {
            let mut tlvs = Vec::new();
            for (i, v) in tlv_values.iter().enumerate() {
                tlvs.extend_from_slice(&[0x00, 0xa0, 0x3e, i as u8, v.len() as u8]);
                tlvs.extend_from_slice(v);
            }
            let mut repr = ControlRepr {
                opcode: Opcode::from(opcode), status: Status::from(status), transaction_id: tid,
                requester_lecid: lecid, flags: fl, source, target, source_atm: AtmAddress(satm),
                lan_type: LanType::from(lan_type), max_frame_size: MaxFrameSize::from(mfs),
                target_atm: AtmAddress(tatm), tlvs: &tlvs, tlv_count: tlv_values.len() as u8,
                ..ControlRepr::new(Opcode::ArpRequest)
            };
            repr.set_elan_name(&name).unwrap();
            let mut a = Vec::new();
            repr.encapsulate(&mut a);
            let parsed = ControlRepr::parse(&ControlFrame::new_checked(&a[..]).unwrap()).unwrap();
            prop_assert_eq!(parsed, repr);
            let mut b = Vec::new();
            parsed.encapsulate(&mut b);
            prop_assert_eq!(a, b);
        }

        #[test]
        fn prop_data_emit_parse_emit(lecid in 0u16..=MAX_LECID, frame in proptest::collection::vec(any::<u8>(), 0..64)) {
            let mut a = Vec::new();
            DataRepr { lecid }.encapsulate(&frame, &mut a);
            let (parsed, body) = decapsulate(&a).unwrap();
            prop_assert_eq!(parsed, DataRepr { lecid });
            let mut b = Vec::new();
            parsed.encapsulate(body, &mut b);
            prop_assert_eq!(a, b);
        }

        #[test]
        fn prop_parse_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..140)) {
            let _ = ControlFrame::new_checked(&bytes[..]).and_then(|f| ControlRepr::parse(&f));
            if let Ok(f) = ControlFrame::new_checked(&bytes[..]) {
                let _ = f.tlvs().count();
            }
            let _ = decapsulate(&bytes);
        }
    }
}
