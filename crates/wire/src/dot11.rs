//! IEEE 802.11 MAC frames: data frames in all four DS cases, and the RTS, CTS and Ack
//! control frames.
//!
//! Standards a reader must know (IEEE Std 802.11-2020):
//!
//! * §9.2.3 (general MAC frame format) and §9.2.4 (its fields): Frame Control §9.2.4.1
//!   (protocol version §9.2.4.1.2, type and subtype §9.2.4.1.3 with Table 9-1, To DS and
//!   From DS §9.2.4.1.4, More Fragments, Retry, Power Management, More Data, Protected
//!   Frame, +HTC/Order §9.2.4.1.5–§9.2.4.1.10), Duration/ID §9.2.4.2, Address fields
//!   §9.2.4.3, Sequence Control §9.2.4.4, QoS Control §9.2.4.5, HT Control §9.2.4.6,
//!   Frame Body §9.2.4.7, FCS §9.2.4.8 (the IEEE 802.3 CRC-32).
//! * §9.3.1 control frames: RTS §9.3.1.2, CTS §9.3.1.3, Ack §9.3.1.4.
//! * §9.3.2.1 data frame format and Table 9-26, the meaning of Address 1–4 for each
//!   To DS/From DS combination (non-A-MSDU case):
//!
//! | To DS | From DS | case            | Address 1 | Address 2 | Address 3 | Address 4 |
//! |-------|---------|-----------------|-----------|-----------|-----------|-----------|
//! | 0     | 0       | IBSS / direct   | RA = DA   | TA = SA   | BSSID     | –         |
//! | 0     | 1       | from the AP     | RA = DA   | TA = BSSID| SA        | –         |
//! | 1     | 0       | to the AP       | RA = BSSID| TA = SA   | DA        | –         |
//! | 1     | 1       | WDS / mesh      | RA        | TA        | DA        | SA        |
//!
//!   The same table appears as Table 1 of seed 000 ("802.11 Address scheme"), whose case
//!   labels "(00) (10) (01) (11)" are the two-bit value From DS:To DS, i.e. bit 9 then
//!   bit 8 of Frame Control — the value tshark shows as `wlan.fc.ds` and
//!   [`Addresses::ds_field`] returns: "WAP=>WS (10)" is From DS = 1, To DS = 0.
//! * RFC 1042 / IEEE 802.1H: an MSDU carrying an EtherType-identified payload starts
//!   with the 8-octet LLC/SNAP header ([`crate::llc`]).
//!
//! Layout choices: the [`Frame`] view covers the MAC header and frame body **without**
//! the FCS; whole-MPDU functions ([`DataRepr::encapsulate`], [`Repr::encapsulate`],
//! [`decapsulate`], [`append_fcs`], [`check_fcs`]) add and check it. The `*_LEN`
//! constants of control frames count the FCS, as the standard's figures do.
//!
//! Not modelled by [`Repr`] (the view still reads them): management and extension
//! frames, control frames other than RTS/CTS/Ack, the +HTC HT Control field, the
//! deprecated CF-Poll/CF-Ack data subtypes, A-MSDU bodies, protocol version 1.

use crate::crc::ETHERNET_FCS;
use crate::ethernet::{Address, EtherType};
use crate::llc;
use crate::{Error, Result};

/// Frame Control (§9.2.4.1).
pub const FRAME_CONTROL_LEN: usize = 2;
/// Duration/ID (§9.2.4.2).
pub const DURATION_LEN: usize = 2;
/// One address field (§9.2.4.3).
pub const ADDR_LEN: usize = 6;
/// Sequence Control (§9.2.4.4).
pub const SEQUENCE_CONTROL_LEN: usize = 2;
/// QoS Control (§9.2.4.5).
pub const QOS_CONTROL_LEN: usize = 2;
/// HT Control (§9.2.4.6).
pub const HT_CONTROL_LEN: usize = 4;
/// FCS, a CRC-32 (§9.2.4.8).
pub const FCS_LEN: usize = 4;
/// MAC header of a 3-address data frame: FC, Duration, A1, A2, A3, Sequence Control
/// (§9.3.2.1).
pub const DATA_HEADER_LEN: usize = 24;
/// MAC header of a 4-address (To DS = From DS = 1) data frame (§9.3.2.1).
pub const DATA_HEADER_LEN_4ADDR: usize = 30;
/// MAC header of a 3-address QoS data frame (§9.3.2.1).
pub const QOS_DATA_HEADER_LEN: usize = DATA_HEADER_LEN + QOS_CONTROL_LEN;
/// MAC header of a 4-address QoS data frame (§9.3.2.1).
pub const QOS_DATA_HEADER_LEN_4ADDR: usize = DATA_HEADER_LEN_4ADDR + QOS_CONTROL_LEN;
/// Ack frame: FC, Duration, RA, FCS (§9.3.1.4).
pub const ACK_LEN: usize = 14;
/// CTS frame: FC, Duration, RA, FCS (§9.3.1.3).
pub const CTS_LEN: usize = 14;
/// RTS frame: FC, Duration, RA, TA, FCS (§9.3.1.2).
pub const RTS_LEN: usize = 20;
/// Largest MSDU (§9.2.4.7 and the maximum-data-unit-size table it refers to).
pub const MAX_MSDU_LEN: usize = 2304;
/// Largest A-MSDU an HT STA must accept unless it advertises more (HT Capabilities,
/// Maximum A-MSDU Length = 0).
pub const MAX_AMSDU_LEN_HT: usize = 3839;
/// Largest A-MSDU with HT Capabilities Maximum A-MSDU Length = 1.
pub const MAX_AMSDU_LEN_HT_LONG: usize = 7935;
/// The three VHT maximum MPDU lengths (VHT Capabilities, Maximum MPDU Length 0, 1, 2).
pub const MAX_MPDU_LEN_VHT: [usize; 3] = [3895, 7991, 11454];
/// Largest non-HT MPDU with an unencrypted 2304-octet MSDU: 4-address header (30) +
/// MSDU + FCS (4). Security adds its header and MIC/ICV on top (8 for WEP, 16 for CCMP).
pub const MAX_MPDU_LEN_NON_HT_PLAIN: usize = DATA_HEADER_LEN_4ADDR + MAX_MSDU_LEN + FCS_LEN;
/// The OFDM PHY's aPSDUMaxLength (IEEE 802.11-2020 §17.4.4, OFDM PHY characteristics), 4095 octets.
pub const MAX_PSDU_LEN_OFDM: usize = 4095;
/// The largest Duration value in microseconds (§9.2.4.2: bit 15 clear, 0..=32767).
pub const MAX_DURATION: u16 = 32767;

/// Byte ranges of the MAC header (§9.2.3). QoS Control and HT Control move with
/// Address 4; see [`Frame::qos_control_offset`].
pub mod field {
    use crate::Field;
    /// Frame Control, little endian (§9.2.4.1).
    pub const FRAME_CONTROL: Field = 0..2;
    /// Duration/ID, little endian (§9.2.4.2).
    pub const DURATION_ID: Field = 2..4;
    /// Address 1, the receiver address (§9.2.4.3).
    pub const ADDR1: Field = 4..10;
    /// Address 2, the transmitter address in data frames and RTS (§9.2.4.3).
    pub const ADDR2: Field = 10..16;
    /// Address 3 (§9.2.4.3).
    pub const ADDR3: Field = 16..22;
    /// Sequence Control, little endian: fragment number bits 0–3, sequence number bits
    /// 4–15 (§9.2.4.4).
    pub const SEQUENCE_CONTROL: Field = 22..24;
    /// Address 4, present when To DS = From DS = 1 (§9.2.4.3).
    pub const ADDR4: Field = 24..30;
}

crate::enum_with_unknown! {
    /// The Type subfield, bits 2–3 of Frame Control (§9.2.4.1.3, Table 9-1).
    pub enum FrameType(u8) {
        Management = 0,
        Control = 1,
        Data = 2,
        Extension = 3,
    }
}

/// Subtype values (§9.2.4.1.3, Table 9-1).
pub mod subtype {
    /// Data frame subtypes. Bit 3 (0x8) marks QoS (a QoS Control field follows the
    /// addresses), bit 2 (0x4) marks "no data".
    pub mod data {
        pub const DATA: u8 = 0;
        pub const NULL: u8 = 4;
        pub const QOS_DATA: u8 = 8;
        pub const QOS_NULL: u8 = 12;
        /// The QoS bit of a data subtype.
        pub const QOS_BIT: u8 = 0x8;
        /// The "no data" bit of a data subtype.
        pub const NULL_BIT: u8 = 0x4;
    }
    /// Control frame subtypes.
    pub mod control {
        pub const TRIGGER: u8 = 2;
        pub const BEAMFORMING_REPORT_POLL: u8 = 4;
        pub const VHT_NDP_ANNOUNCEMENT: u8 = 5;
        pub const CONTROL_FRAME_EXTENSION: u8 = 6;
        pub const CONTROL_WRAPPER: u8 = 7;
        pub const BLOCK_ACK_REQ: u8 = 8;
        pub const BLOCK_ACK: u8 = 9;
        pub const PS_POLL: u8 = 10;
        pub const RTS: u8 = 11;
        pub const CTS: u8 = 12;
        pub const ACK: u8 = 13;
        pub const CF_END: u8 = 14;
        pub const CF_END_CF_ACK: u8 = 15;
    }
    /// Management frame subtypes.
    pub mod management {
        pub const ASSOCIATION_REQUEST: u8 = 0;
        pub const ASSOCIATION_RESPONSE: u8 = 1;
        pub const PROBE_REQUEST: u8 = 4;
        pub const PROBE_RESPONSE: u8 = 5;
        pub const BEACON: u8 = 8;
        pub const DISASSOCIATION: u8 = 10;
        pub const AUTHENTICATION: u8 = 11;
        pub const DEAUTHENTICATION: u8 = 12;
        pub const ACTION: u8 = 13;
    }
}

/// The Frame Control field decoded (§9.2.4.1, Figure 9-3). Octet 0 holds protocol
/// version (b0–b1), type (b2–b3) and subtype (b4–b7); octet 1 the flags b8–b15.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FrameControl {
    /// 0 for every frame this crate builds (§9.2.4.1.2); 1 is the S1G PV1 format.
    pub protocol_version: u8,
    pub frame_type: FrameType,
    /// 4 bits (§9.2.4.1.3).
    pub subtype: u8,
    /// b8 (§9.2.4.1.4).
    pub to_ds: bool,
    /// b9 (§9.2.4.1.4).
    pub from_ds: bool,
    /// b10 (§9.2.4.1.5).
    pub more_fragments: bool,
    /// b11 (§9.2.4.1.6).
    pub retry: bool,
    /// b12 (§9.2.4.1.7).
    pub power_management: bool,
    /// b13 (§9.2.4.1.8).
    pub more_data: bool,
    /// b14 (§9.2.4.1.9): the body is encrypted.
    pub protected: bool,
    /// b15 (§9.2.4.1.10): +HTC in QoS data and management frames, else Order.
    pub order: bool,
}

impl FrameControl {
    /// Decodes the field as read little endian from octets 0–1.
    pub fn from_raw(raw: u16) -> FrameControl {
        let bit = |n: u16| raw & (1 << n) != 0;
        FrameControl {
            protocol_version: (raw & 0x3) as u8,
            frame_type: FrameType::from(((raw >> 2) & 0x3) as u8),
            subtype: ((raw >> 4) & 0xf) as u8,
            to_ds: bit(8),
            from_ds: bit(9),
            more_fragments: bit(10),
            retry: bit(11),
            power_management: bit(12),
            more_data: bit(13),
            protected: bit(14),
            order: bit(15),
        }
    }

    /// Encodes the field; version, type and subtype are masked to their widths.
    pub fn raw(&self) -> u16 {
        let flag = |b: bool, n: u16| (b as u16) << n;
        (self.protocol_version as u16 & 0x3)
            | ((u8::from(self.frame_type) as u16 & 0x3) << 2)
            | ((self.subtype as u16 & 0xf) << 4)
            | flag(self.to_ds, 8)
            | flag(self.from_ds, 9)
            | flag(self.more_fragments, 10)
            | flag(self.retry, 11)
            | flag(self.power_management, 12)
            | flag(self.more_data, 13)
            | flag(self.protected, 14)
            | flag(self.order, 15)
    }

    /// A frame control with version 0 and every flag clear.
    pub fn new(frame_type: FrameType, subtype: u8) -> FrameControl {
        FrameControl::from_raw(((u8::from(frame_type) as u16 & 0x3) << 2) | ((subtype as u16 & 0xf) << 4))
    }

    /// `type << 4 | subtype`, the value tshark shows as `wlan.fc.type_subtype`.
    pub fn type_subtype(&self) -> u16 {
        ((u8::from(self.frame_type) as u16) << 4) | self.subtype as u16
    }

    fn is_qos_data(&self) -> bool {
        self.frame_type == FrameType::Data && self.subtype & subtype::data::QOS_BIT != 0
    }

    /// MAC header length this frame control announces (§9.2.3, §9.3).
    pub fn header_len(&self) -> usize {
        match self.frame_type {
            FrameType::Data => {
                let mut len = if self.to_ds && self.from_ds { DATA_HEADER_LEN_4ADDR } else { DATA_HEADER_LEN };
                if self.is_qos_data() {
                    len += QOS_CONTROL_LEN;
                    if self.order {
                        len += HT_CONTROL_LEN;
                    }
                }
                len
            }
            FrameType::Management => DATA_HEADER_LEN + if self.order { HT_CONTROL_LEN } else { 0 },
            FrameType::Control => match self.subtype {
                subtype::control::CTS | subtype::control::ACK => 10,
                subtype::control::CONTROL_WRAPPER => 16,
                subtype::control::TRIGGER
                | subtype::control::BEAMFORMING_REPORT_POLL
                | subtype::control::VHT_NDP_ANNOUNCEMENT
                | subtype::control::BLOCK_ACK_REQ
                | subtype::control::BLOCK_ACK
                | subtype::control::PS_POLL
                | subtype::control::RTS
                | subtype::control::CF_END
                | subtype::control::CF_END_CF_ACK => 16,
                _ => 10,
            },
            // Extension frames (DMG beacons, S1G) are not modelled; FC + Duration +
            // one address is the least any of them holds.
            _ => 10,
        }
    }
}

crate::enum_with_unknown! {
    /// Ack Policy subfield, bits 5–6 of QoS Control (§9.2.4.5.4, Table 9-11).
    pub enum AckPolicy(u8) {
        /// Normal Ack or implicit block ack request.
        Normal = 0,
        NoAck = 1,
        /// No explicit acknowledgment or PSMP Ack.
        NoExplicitAck = 2,
        BlockAck = 3,
    }
}

/// The QoS Control field (§9.2.4.5, Table 9-10).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct QosControl {
    /// Traffic identifier, bits 0–3 (§9.2.4.5.2); 0–7 are the user priorities.
    pub tid: u8,
    /// End of service period, bit 4 (§9.2.4.5.3).
    pub eosp: bool,
    /// Ack Policy, bits 5–6 (§9.2.4.5.4), as the raw 2-bit value.
    pub ack_policy: u8,
    /// A-MSDU Present, bit 7 (§9.2.4.5.9): the body is an A-MSDU.
    pub amsdu_present: bool,
    /// Bits 8–15: TXOP limit, TXOP duration requested, queue size or mesh/AP PS
    /// subfields, depending on sender and subtype (§9.2.4.5.5–§9.2.4.5.8).
    pub upper: u8,
}

impl QosControl {
    /// A QoS Control for `tid` with normal ack policy and nothing else set.
    pub const fn with_tid(tid: u8) -> QosControl {
        QosControl { tid, eosp: false, ack_policy: 0, amsdu_present: false, upper: 0 }
    }

    pub const fn from_raw(raw: u16) -> QosControl {
        QosControl {
            tid: (raw & 0xf) as u8,
            eosp: raw & 0x10 != 0,
            ack_policy: ((raw >> 5) & 0x3) as u8,
            amsdu_present: raw & 0x80 != 0,
            upper: (raw >> 8) as u8,
        }
    }

    pub const fn raw(&self) -> u16 {
        (self.tid as u16 & 0xf)
            | ((self.eosp as u16) << 4)
            | ((self.ack_policy as u16 & 0x3) << 5)
            | ((self.amsdu_present as u16) << 7)
            | ((self.upper as u16) << 8)
    }

    pub fn ack_policy(&self) -> AckPolicy {
        AckPolicy::from(self.ack_policy)
    }
}

/// A checked view over an IEEE 802.11 MAC frame from Frame Control to the end of the
/// frame body, without FCS.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Frame<T> {
    pub const fn new_unchecked(buffer: T) -> Frame<T> {
        Frame { buffer }
    }

    pub fn new_checked(buffer: T) -> Result<Frame<T>> {
        let frame = Self::new_unchecked(buffer);
        frame.check_len()?;
        Ok(frame)
    }

    /// `Err(Truncated)` unless the buffer holds the whole MAC header that Frame Control
    /// announces.
    pub fn check_len(&self) -> Result<()> {
        let len = self.buffer.as_ref().len();
        if len < FRAME_CONTROL_LEN || len < self.header_len() {
            Err(Error::Truncated)
        } else {
            Ok(())
        }
    }

    pub fn into_inner(self) -> T {
        self.buffer
    }

    fn u16_le(&self, f: crate::Field) -> u16 {
        let d = &self.buffer.as_ref()[f];
        u16::from_le_bytes([d[0], d[1]])
    }

    /// The raw Frame Control (§9.2.4.1).
    pub fn frame_control_raw(&self) -> u16 {
        self.u16_le(field::FRAME_CONTROL)
    }

    pub fn frame_control(&self) -> FrameControl {
        FrameControl::from_raw(self.frame_control_raw())
    }

    /// MAC header length from Frame Control (§9.2.3).
    pub fn header_len(&self) -> usize {
        self.frame_control().header_len()
    }

    /// Duration/ID (§9.2.4.2): a duration in µs when bit 15 is clear.
    pub fn duration_id(&self) -> u16 {
        self.u16_le(field::DURATION_ID)
    }

    /// Address 1, always the receiver address (§9.2.4.3.4).
    pub fn addr1(&self) -> Address {
        Address::from_bytes(&self.buffer.as_ref()[field::ADDR1])
    }

    /// Address 2; present in data, management, RTS and other 16-octet control headers.
    pub fn addr2(&self) -> Address {
        Address::from_bytes(&self.buffer.as_ref()[field::ADDR2])
    }

    /// Address 3; data and management frames only.
    pub fn addr3(&self) -> Address {
        Address::from_bytes(&self.buffer.as_ref()[field::ADDR3])
    }

    /// Sequence Control raw (§9.2.4.4); data and management frames only.
    pub fn sequence_control(&self) -> u16 {
        self.u16_le(field::SEQUENCE_CONTROL)
    }

    /// Sequence number, 12 bits (§9.2.4.4.2).
    pub fn sequence_number(&self) -> u16 {
        self.sequence_control() >> 4
    }

    /// Fragment number, 4 bits (§9.2.4.4.3).
    pub fn fragment_number(&self) -> u8 {
        (self.sequence_control() & 0xf) as u8
    }

    /// Address 4; data frames with To DS = From DS = 1 only.
    pub fn addr4(&self) -> Address {
        Address::from_bytes(&self.buffer.as_ref()[field::ADDR4])
    }

    /// Where QoS Control starts: after Address 4 when present (§9.3.2.1).
    pub fn qos_control_offset(&self) -> usize {
        let fc = self.frame_control();
        if fc.to_ds && fc.from_ds {
            DATA_HEADER_LEN_4ADDR
        } else {
            DATA_HEADER_LEN
        }
    }

    /// QoS Control raw (§9.2.4.5); QoS data subtypes only.
    pub fn qos_control(&self) -> u16 {
        let at = self.qos_control_offset();
        self.u16_le(at..at + QOS_CONTROL_LEN)
    }

    /// The frame body after the MAC header (§9.2.4.7).
    pub fn payload(&self) -> &[u8] {
        &self.buffer.as_ref()[self.header_len()..]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Frame<T> {
    fn set_u16_le(&mut self, f: crate::Field, value: u16) {
        self.buffer.as_mut()[f].copy_from_slice(&value.to_le_bytes());
    }

    pub fn set_frame_control(&mut self, value: FrameControl) {
        self.set_u16_le(field::FRAME_CONTROL, value.raw());
    }

    pub fn set_duration_id(&mut self, value: u16) {
        self.set_u16_le(field::DURATION_ID, value);
    }

    pub fn set_addr1(&mut self, value: Address) {
        self.buffer.as_mut()[field::ADDR1].copy_from_slice(&value.0);
    }

    pub fn set_addr2(&mut self, value: Address) {
        self.buffer.as_mut()[field::ADDR2].copy_from_slice(&value.0);
    }

    pub fn set_addr3(&mut self, value: Address) {
        self.buffer.as_mut()[field::ADDR3].copy_from_slice(&value.0);
    }

    pub fn set_sequence_control(&mut self, value: u16) {
        self.set_u16_le(field::SEQUENCE_CONTROL, value);
    }

    /// Sets sequence (12 bits) and fragment (4 bits) numbers; wider values are masked.
    pub fn set_sequence(&mut self, sequence_number: u16, fragment_number: u8) {
        self.set_sequence_control((sequence_number << 4) | (fragment_number as u16 & 0xf));
    }

    pub fn set_addr4(&mut self, value: Address) {
        self.buffer.as_mut()[field::ADDR4].copy_from_slice(&value.0);
    }

    /// Set Frame Control first: the offset depends on Address 4's presence.
    pub fn set_qos_control(&mut self, value: u16) {
        let at = self.qos_control_offset();
        self.set_u16_le(at..at + QOS_CONTROL_LEN, value);
    }

    pub fn payload_mut(&mut self) -> &mut [u8] {
        let at = self.header_len();
        &mut self.buffer.as_mut()[at..]
    }
}

impl<T: AsRef<[u8]>> AsRef<[u8]> for Frame<T> {
    fn as_ref(&self) -> &[u8] {
        self.buffer.as_ref()
    }
}

/// The address fields of a data frame, one variant per To DS/From DS case of
/// IEEE 802.11-2020 Table 9-26 (seed 000 Table 1). Each variant holds exactly the
/// addresses its frame carries, named by role and listed in field order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Addresses {
    /// To DS 0, From DS 0: station to station in an IBSS (or a direct link).
    /// A1 = DA (= RA), A2 = SA (= TA), A3 = BSSID.
    Ibss { da: Address, sa: Address, bssid: Address },
    /// To DS 0, From DS 1: the AP to a station. A1 = DA (= RA), A2 = BSSID (= TA),
    /// A3 = SA.
    FromAp { da: Address, bssid: Address, sa: Address },
    /// To DS 1, From DS 0: a station to its AP. A1 = BSSID (= RA), A2 = SA (= TA),
    /// A3 = DA.
    ToAp { bssid: Address, sa: Address, da: Address },
    /// To DS 1, From DS 1: wireless distribution system / mesh. A1 = RA, A2 = TA,
    /// A3 = DA, A4 = SA; no BSSID.
    Wds { ra: Address, ta: Address, da: Address, sa: Address },
}

impl Addresses {
    /// (To DS, From DS).
    pub const fn ds_bits(&self) -> (bool, bool) {
        match self {
            Addresses::Ibss { .. } => (false, false),
            Addresses::FromAp { .. } => (false, true),
            Addresses::ToAp { .. } => (true, false),
            Addresses::Wds { .. } => (true, true),
        }
    }

    /// From DS × 2 + To DS: bits 9..8 of Frame Control as one number, tshark's
    /// `wlan.fc.ds` and the labels of seed 000's Table 1 read in binary.
    pub const fn ds_field(&self) -> u8 {
        let (to, from) = self.ds_bits();
        ((from as u8) << 1) | to as u8
    }

    /// Address 1 .. Address 3 in field order, and Address 4 when present.
    pub const fn fields(&self) -> ([Address; 3], Option<Address>) {
        match *self {
            Addresses::Ibss { da, sa, bssid } => ([da, sa, bssid], None),
            Addresses::FromAp { da, bssid, sa } => ([da, bssid, sa], None),
            Addresses::ToAp { bssid, sa, da } => ([bssid, sa, da], None),
            Addresses::Wds { ra, ta, da, sa } => ([ra, ta, da], Some(sa)),
        }
    }

    /// Builds the case from the DS bits and the address fields (Table 9-26).
    pub const fn from_fields(to_ds: bool, from_ds: bool, a: [Address; 3], a4: Address) -> Addresses {
        match (to_ds, from_ds) {
            (false, false) => Addresses::Ibss { da: a[0], sa: a[1], bssid: a[2] },
            (false, true) => Addresses::FromAp { da: a[0], bssid: a[1], sa: a[2] },
            (true, false) => Addresses::ToAp { bssid: a[0], sa: a[1], da: a[2] },
            (true, true) => Addresses::Wds { ra: a[0], ta: a[1], da: a[2], sa: a4 },
        }
    }

    /// The immediate receiver: always Address 1.
    pub const fn receiver(&self) -> Address {
        self.fields().0[0]
    }

    /// The immediate transmitter: always Address 2.
    pub const fn transmitter(&self) -> Address {
        self.fields().0[1]
    }

    /// The final destination of the MSDU.
    pub const fn destination(&self) -> Address {
        match *self {
            Addresses::Ibss { da, .. }
            | Addresses::FromAp { da, .. }
            | Addresses::ToAp { da, .. }
            | Addresses::Wds { da, .. } => da,
        }
    }

    /// The original source of the MSDU.
    pub const fn source(&self) -> Address {
        match *self {
            Addresses::Ibss { sa, .. }
            | Addresses::FromAp { sa, .. }
            | Addresses::ToAp { sa, .. }
            | Addresses::Wds { sa, .. } => sa,
        }
    }

    /// The BSSID; `None` in the WDS case, whose frame carries none.
    pub const fn bssid(&self) -> Option<Address> {
        match *self {
            Addresses::Ibss { bssid, .. } | Addresses::FromAp { bssid, .. } | Addresses::ToAp { bssid, .. } => {
                Some(bssid)
            }
            Addresses::Wds { .. } => None,
        }
    }
}

/// A data frame header (§9.3.2.1): Data, Null, QoS Data or QoS Null.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct DataRepr {
    /// The four address cases; sets To DS and From DS.
    pub addresses: Addresses,
    /// Duration in µs, 0..=32767 (§9.2.4.2).
    pub duration: u16,
    /// 0..=4095 (§9.2.4.4.2).
    pub sequence_number: u16,
    /// 0..=15 (§9.2.4.4.3).
    pub fragment_number: u8,
    pub more_fragments: bool,
    pub retry: bool,
    pub power_management: bool,
    pub more_data: bool,
    /// The body is encrypted ([`crate::dot11_crypto`] handles it).
    pub protected: bool,
    /// A Null or QoS Null frame: no frame body (subtype bit 2).
    pub null: bool,
    /// QoS Control when this is a QoS subtype (subtype bit 3).
    pub qos: Option<QosControl>,
}

impl DataRepr {
    fn with_addresses(addresses: Addresses) -> DataRepr {
        DataRepr {
            addresses,
            duration: 0,
            sequence_number: 0,
            fragment_number: 0,
            more_fragments: false,
            retry: false,
            power_management: false,
            more_data: false,
            protected: false,
            null: false,
            qos: None,
        }
    }

    /// To DS 0, From DS 0; arguments in field order: A1 = DA, A2 = SA, A3 = BSSID.
    pub fn ibss(da: Address, sa: Address, bssid: Address) -> DataRepr {
        Self::with_addresses(Addresses::Ibss { da, sa, bssid })
    }

    /// To DS 0, From DS 1; arguments in field order: A1 = DA, A2 = BSSID, A3 = SA.
    pub fn from_ap(da: Address, bssid: Address, sa: Address) -> DataRepr {
        Self::with_addresses(Addresses::FromAp { da, bssid, sa })
    }

    /// To DS 1, From DS 0; arguments in field order: A1 = BSSID, A2 = SA, A3 = DA.
    pub fn to_ap(bssid: Address, sa: Address, da: Address) -> DataRepr {
        Self::with_addresses(Addresses::ToAp { bssid, sa, da })
    }

    /// To DS 1, From DS 1; arguments in field order: A1 = RA, A2 = TA, A3 = DA, A4 = SA.
    pub fn wds(ra: Address, ta: Address, da: Address, sa: Address) -> DataRepr {
        Self::with_addresses(Addresses::Wds { ra, ta, da, sa })
    }

    /// Makes this a QoS data frame for `tid` (normal ack policy).
    pub fn with_qos(mut self, tid: u8) -> DataRepr {
        self.qos = Some(QosControl::with_tid(tid));
        self
    }

    pub fn with_sequence(mut self, sequence_number: u16, fragment_number: u8) -> DataRepr {
        self.sequence_number = sequence_number;
        self.fragment_number = fragment_number;
        self
    }

    pub fn with_duration(mut self, duration: u16) -> DataRepr {
        self.duration = duration;
        self
    }

    pub const fn receiver(&self) -> Address {
        self.addresses.receiver()
    }

    pub const fn transmitter(&self) -> Address {
        self.addresses.transmitter()
    }

    pub const fn destination(&self) -> Address {
        self.addresses.destination()
    }

    pub const fn source(&self) -> Address {
        self.addresses.source()
    }

    pub const fn bssid(&self) -> Option<Address> {
        self.addresses.bssid()
    }

    /// The data subtype (Table 9-1): 0, 4, 8 or 12.
    pub fn subtype(&self) -> u8 {
        let mut s = subtype::data::DATA;
        if self.null {
            s |= subtype::data::NULL_BIT;
        }
        if self.qos.is_some() {
            s |= subtype::data::QOS_BIT;
        }
        s
    }

    pub fn frame_control(&self) -> FrameControl {
        let (to_ds, from_ds) = self.addresses.ds_bits();
        FrameControl {
            protocol_version: 0,
            frame_type: FrameType::Data,
            subtype: self.subtype(),
            to_ds,
            from_ds,
            more_fragments: self.more_fragments,
            retry: self.retry,
            power_management: self.power_management,
            more_data: self.more_data,
            protected: self.protected,
            order: false,
        }
    }

    /// 24, 26, 30 or 32.
    pub fn header_len(&self) -> usize {
        self.frame_control().header_len()
    }

    pub fn buffer_len(&self) -> usize {
        self.header_len()
    }

    /// Parses a data frame header. `Err(Unsupported)` for another type, protocol
    /// version ≠ 0, a CF-Poll/CF-Ack subtype, or +HTC/Order set.
    pub fn parse<T: AsRef<[u8]> + ?Sized>(frame: &Frame<&T>) -> Result<DataRepr> {
        frame.check_len()?;
        let fc = frame.frame_control();
        if fc.protocol_version != 0 || fc.frame_type != FrameType::Data || fc.order {
            return Err(Error::Unsupported);
        }
        let qos_bit = fc.subtype & subtype::data::QOS_BIT != 0;
        let null = fc.subtype & subtype::data::NULL_BIT != 0;
        if fc.subtype & 0x3 != 0 {
            return Err(Error::Unsupported);
        }
        let addr4 = if fc.to_ds && fc.from_ds { frame.addr4() } else { Address::default() };
        Ok(DataRepr {
            addresses: Addresses::from_fields(
                fc.to_ds,
                fc.from_ds,
                [frame.addr1(), frame.addr2(), frame.addr3()],
                addr4,
            ),
            duration: frame.duration_id(),
            sequence_number: frame.sequence_number(),
            fragment_number: frame.fragment_number(),
            more_fragments: fc.more_fragments,
            retry: fc.retry,
            power_management: fc.power_management,
            more_data: fc.more_data,
            protected: fc.protected,
            null,
            qos: if qos_bit { Some(QosControl::from_raw(frame.qos_control())) } else { None },
        })
    }

    /// Writes the MAC header; panics if the buffer is shorter than [`Self::header_len`].
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]> + ?Sized>(&self, frame: &mut Frame<&mut T>) {
        frame.set_frame_control(self.frame_control());
        frame.set_duration_id(self.duration);
        let (a, a4) = self.addresses.fields();
        frame.set_addr1(a[0]);
        frame.set_addr2(a[1]);
        frame.set_addr3(a[2]);
        frame.set_sequence(self.sequence_number, self.fragment_number);
        if let Some(a4) = a4 {
            frame.set_addr4(a4);
        }
        if let Some(qos) = self.qos {
            frame.set_qos_control(qos.raw());
        }
    }

    /// Appends a whole MPDU: MAC header, `body` (the frame body as is) and FCS.
    pub fn encapsulate(&self, body: &[u8], out: &mut Vec<u8>) {
        let start = out.len();
        out.resize(start + self.header_len(), 0);
        self.emit(&mut Frame::new_unchecked(&mut out[start..]));
        out.extend_from_slice(body);
        let fcs = ETHERNET_FCS.checksum(&out[start..]);
        out.extend_from_slice(&fcs.to_le_bytes());
    }

    /// Appends a whole MPDU whose MSDU is an EtherType-identified `payload` (an IP
    /// packet, ARP...): MAC header, LLC/SNAP per RFC 1042, payload, FCS. What an AP or
    /// station does to an Ethernet frame's payload when it bridges it onto the air.
    pub fn encapsulate_ethertype(&self, ethertype: EtherType, payload: &[u8], out: &mut Vec<u8>) {
        let mut body = Vec::with_capacity(llc::LLC_SNAP_LEN + payload.len());
        llc::Repr::ethertype(ethertype).encapsulate(payload, &mut body);
        self.encapsulate(&body, out);
    }

    /// Inverse of [`Self::encapsulate_ethertype`]: checks the FCS, parses the header and
    /// the LLC/SNAP header and returns the EtherType and payload. `Err(Unsupported)`
    /// for a protected frame, an A-MSDU, a Null frame or a body that is not LLC/SNAP
    /// with OUI 00-00-00 or 00-00-F8.
    pub fn decapsulate_ethertype(mpdu: &[u8]) -> Result<(DataRepr, EtherType, &[u8])> {
        let body = check_fcs(mpdu)?;
        let frame = Frame::new_checked(body)?;
        let repr = DataRepr::parse(&frame)?;
        if repr.protected || repr.null || repr.qos.is_some_and(|q| q.amsdu_present) {
            return Err(Error::Unsupported);
        }
        let (llc, payload) = llc::Repr::decapsulate(&body[repr.header_len()..])?;
        let ethertype = llc.as_ethertype().ok_or(Error::Unsupported)?;
        Ok((repr, ethertype, payload))
    }

    /// Named byte counts the MAC adds to a `payload_len`-octet EtherType payload
    /// carried with LLC/SNAP (for `qoslab mtu`), header fields in order, then FCS.
    /// A Null frame has no body, so no LLC/SNAP.
    pub fn overhead_fields(&self, _payload_len: usize) -> Vec<(&'static str, usize)> {
        let mut v = vec![
            ("frame control", FRAME_CONTROL_LEN),
            ("duration", DURATION_LEN),
            ("address 1", ADDR_LEN),
            ("address 2", ADDR_LEN),
            ("address 3", ADDR_LEN),
            ("sequence control", SEQUENCE_CONTROL_LEN),
        ];
        if let Addresses::Wds { .. } = self.addresses {
            v.push(("address 4", ADDR_LEN));
        }
        if self.qos.is_some() {
            v.push(("qos control", QOS_CONTROL_LEN));
        }
        if !self.null {
            v.push(("llc/snap", llc::LLC_SNAP_LEN));
        }
        v.push(("fcs", FCS_LEN));
        v
    }
}

/// A frame this crate models.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Repr {
    Data(DataRepr),
    /// Request to send (§9.3.1.2): RA, TA.
    Rts {
        duration: u16,
        receiver: Address,
        transmitter: Address,
    },
    /// Clear to send (§9.3.1.3): RA.
    Cts {
        duration: u16,
        receiver: Address,
    },
    /// Acknowledgment (§9.3.1.4): RA.
    Ack {
        duration: u16,
        receiver: Address,
    },
}

impl Repr {
    /// Parses a data, RTS, CTS or Ack frame. Control frames must have To DS, From DS,
    /// More Fragments, Retry and Protected clear (`Err(Malformed)` otherwise; §9.3.1);
    /// their Power Management and More Data bits are ignored. Other frames give
    /// `Err(Unsupported)`.
    pub fn parse<T: AsRef<[u8]> + ?Sized>(frame: &Frame<&T>) -> Result<Repr> {
        frame.check_len()?;
        let fc = frame.frame_control();
        if fc.protocol_version != 0 {
            return Err(Error::Unsupported);
        }
        match fc.frame_type {
            FrameType::Data => Ok(Repr::Data(DataRepr::parse(frame)?)),
            FrameType::Control => {
                if fc.to_ds || fc.from_ds || fc.more_fragments || fc.retry || fc.protected {
                    return Err(Error::Malformed);
                }
                let duration = frame.duration_id();
                let receiver = frame.addr1();
                match fc.subtype {
                    subtype::control::RTS => Ok(Repr::Rts { duration, receiver, transmitter: frame.addr2() }),
                    subtype::control::CTS => Ok(Repr::Cts { duration, receiver }),
                    subtype::control::ACK => Ok(Repr::Ack { duration, receiver }),
                    _ => Err(Error::Unsupported),
                }
            }
            _ => Err(Error::Unsupported),
        }
    }

    pub fn frame_control(&self) -> FrameControl {
        match self {
            Repr::Data(d) => d.frame_control(),
            Repr::Rts { .. } => FrameControl::new(FrameType::Control, subtype::control::RTS),
            Repr::Cts { .. } => FrameControl::new(FrameType::Control, subtype::control::CTS),
            Repr::Ack { .. } => FrameControl::new(FrameType::Control, subtype::control::ACK),
        }
    }

    /// MAC header length (the whole frame, FCS excluded, for control frames).
    pub fn header_len(&self) -> usize {
        self.frame_control().header_len()
    }

    pub fn buffer_len(&self) -> usize {
        self.header_len()
    }

    /// Writes the header; panics if the buffer is shorter than [`Self::header_len`].
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]> + ?Sized>(&self, frame: &mut Frame<&mut T>) {
        match *self {
            Repr::Data(ref d) => d.emit(frame),
            Repr::Rts { duration, receiver, transmitter } => {
                frame.set_frame_control(self.frame_control());
                frame.set_duration_id(duration);
                frame.set_addr1(receiver);
                frame.set_addr2(transmitter);
            }
            Repr::Cts { duration, receiver } | Repr::Ack { duration, receiver } => {
                frame.set_frame_control(self.frame_control());
                frame.set_duration_id(duration);
                frame.set_addr1(receiver);
            }
        }
    }

    /// Address 1, the receiver, for every frame.
    pub fn receiver(&self) -> Address {
        match *self {
            Repr::Data(ref d) => d.receiver(),
            Repr::Rts { receiver, .. } | Repr::Cts { receiver, .. } | Repr::Ack { receiver, .. } => receiver,
        }
    }

    /// Address 2, the transmitter; CTS and Ack carry none.
    pub fn transmitter(&self) -> Option<Address> {
        match *self {
            Repr::Data(ref d) => Some(d.transmitter()),
            Repr::Rts { transmitter, .. } => Some(transmitter),
            Repr::Cts { .. } | Repr::Ack { .. } => None,
        }
    }

    pub fn duration(&self) -> u16 {
        match *self {
            Repr::Data(ref d) => d.duration,
            Repr::Rts { duration, .. } | Repr::Cts { duration, .. } | Repr::Ack { duration, .. } => duration,
        }
    }

    /// Appends a whole MPDU: header, `body` (empty for control frames) and FCS.
    pub fn encapsulate(&self, body: &[u8], out: &mut Vec<u8>) {
        let start = out.len();
        out.resize(start + self.header_len(), 0);
        self.emit(&mut Frame::new_unchecked(&mut out[start..]));
        out.extend_from_slice(body);
        let fcs = ETHERNET_FCS.checksum(&out[start..]);
        out.extend_from_slice(&fcs.to_le_bytes());
    }

    /// Named byte counts of the frame: for data frames as
    /// [`DataRepr::overhead_fields`], for control frames their fields.
    pub fn overhead_fields(&self, payload_len: usize) -> Vec<(&'static str, usize)> {
        let head = [("frame control", FRAME_CONTROL_LEN), ("duration", DURATION_LEN), ("receiver address", ADDR_LEN)];
        match self {
            Repr::Data(d) => d.overhead_fields(payload_len),
            Repr::Rts { .. } => {
                let mut v = head.to_vec();
                v.extend([("transmitter address", ADDR_LEN), ("fcs", FCS_LEN)]);
                v
            }
            Repr::Cts { .. } | Repr::Ack { .. } => {
                let mut v = head.to_vec();
                v.push(("fcs", FCS_LEN));
                v
            }
        }
    }
}

/// Appends the FCS of everything in `frame` (§9.2.4.8: the IEEE 802.3 CRC-32, low
/// byte first).
pub fn append_fcs(frame: &mut Vec<u8>) {
    let fcs = ETHERNET_FCS.checksum(frame);
    frame.extend_from_slice(&fcs.to_le_bytes());
}

/// Checks the trailing FCS of an MPDU and returns the frame without it.
/// `Err(Truncated)` when shorter than FC + Duration + RA + FCS, `Err(Checksum)` on a
/// mismatch.
pub fn check_fcs(mpdu: &[u8]) -> Result<&[u8]> {
    if mpdu.len() < ACK_LEN {
        return Err(Error::Truncated);
    }
    let (body, tail) = mpdu.split_at(mpdu.len() - FCS_LEN);
    if u32::from_le_bytes([tail[0], tail[1], tail[2], tail[3]]) != ETHERNET_FCS.checksum(body) {
        return Err(Error::Checksum);
    }
    Ok(body)
}

/// Inverse of [`Repr::encapsulate`]: checks the FCS, parses the frame and returns its
/// body.
pub fn decapsulate(mpdu: &[u8]) -> Result<(Repr, &[u8])> {
    let body = check_fcs(mpdu)?;
    let frame = Frame::new_checked(body)?;
    let repr = Repr::parse(&frame)?;
    Ok((repr, &body[repr.header_len()..]))
}

#[cfg(test)]
mod test {
    use super::*;
    use proptest::prelude::*;

    const STA: Address = Address([0x02, 0x00, 0x00, 0x00, 0x00, 0x01]);
    const AP: Address = Address([0x02, 0x00, 0x00, 0x00, 0x00, 0xaa]);
    const HOST: Address = Address([0x02, 0x00, 0x00, 0x00, 0x00, 0x02]);

    // A station sending to a wired host through its AP (To DS 1, From DS 0), laid out
    // by hand from §9.3.2.1: FC 08 01 (type 2 subtype 0 → octet 0 = 0b0000_1000; To DS
    // → octet 1 = 0x01), duration 0x002c = 44 µs (2c 00), A1 = BSSID, A2 = SA, A3 = DA,
    // sequence 100 fragment 0 → 100 << 4 = 0x0640 (40 06), then LLC/SNAP for IPv4 and
    // two body octets. FCS from python3 zlib.crc32 over the 34 octets.
    static TO_AP_BYTES: [u8; 38] = [
        0x08, 0x01, 0x2c, 0x00, // FC, duration
        0x02, 0x00, 0x00, 0x00, 0x00, 0xaa, // A1 BSSID
        0x02, 0x00, 0x00, 0x00, 0x00, 0x01, // A2 SA
        0x02, 0x00, 0x00, 0x00, 0x00, 0x02, // A3 DA
        0x40, 0x06, // sequence control
        0xaa, 0xaa, 0x03, 0x00, 0x00, 0x00, 0x08, 0x00, // LLC/SNAP IPv4
        0x45, 0x00, // payload
        0x1b, 0x65, 0x26, 0x43, // FCS
    ];

    // An Ack to STA with duration 0: d4 00 00 00 + RA, FCS from zlib.crc32.
    static ACK_BYTES: [u8; 14] = [0xd4, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x01, 0xd8, 0xd6, 0xbf, 0x8f];

    fn to_ap() -> DataRepr {
        DataRepr::to_ap(AP, STA, HOST).with_duration(44).with_sequence(100, 0)
    }

    #[test]
    fn test_parse_data() {
        let body = check_fcs(&TO_AP_BYTES).unwrap();
        let frame = Frame::new_checked(body).unwrap();
        let fc = frame.frame_control();
        assert_eq!((fc.frame_type, fc.subtype, fc.to_ds, fc.from_ds), (FrameType::Data, 0, true, false));
        assert_eq!(frame.header_len(), 24);
        assert_eq!(frame.sequence_number(), 100);
        let repr = DataRepr::parse(&frame).unwrap();
        assert_eq!(repr, to_ap());
        assert_eq!((repr.receiver(), repr.transmitter(), repr.bssid()), (AP, STA, Some(AP)));
        assert_eq!((repr.source(), repr.destination()), (STA, HOST));
        let (r, et, payload) = DataRepr::decapsulate_ethertype(&TO_AP_BYTES).unwrap();
        assert_eq!((r, et, payload), (to_ap(), EtherType::Ipv4, &[0x45, 0x00][..]));
    }

    #[test]
    fn test_emit_data() {
        let mut out = Vec::new();
        to_ap().encapsulate_ethertype(EtherType::Ipv4, &[0x45, 0x00], &mut out);
        assert_eq!(&out[..], &TO_AP_BYTES[..]);
    }

    #[test]
    fn test_ack() {
        let ack = Repr::Ack { duration: 0, receiver: STA };
        let mut out = Vec::new();
        ack.encapsulate(&[], &mut out);
        assert_eq!(out.len(), ACK_LEN);
        assert_eq!(&out[..10], &ACK_BYTES[..10]);
        assert_eq!(&out[..], &ACK_BYTES[..]);
        assert_eq!(decapsulate(&out).unwrap(), (ack, &[][..]));
        let cts = Repr::Cts { duration: 300, receiver: STA };
        let rts = Repr::Rts { duration: 500, receiver: AP, transmitter: STA };
        for (r, len) in [(cts, CTS_LEN), (rts, RTS_LEN)] {
            let mut out = Vec::new();
            r.encapsulate(&[], &mut out);
            assert_eq!(out.len(), len);
            assert_eq!(decapsulate(&out).unwrap().0, r);
            assert_eq!(r.overhead_fields(0).iter().map(|x| x.1).sum::<usize>(), len);
        }
    }

    #[test]
    fn test_four_cases() {
        // Table 9-26 / seed 000 Table 1, with distinct addresses per role.
        let (da, sa, bssid, ra, ta) = (HOST, STA, AP, Address([2, 0, 0, 0, 0, 0x11]), Address([2, 0, 0, 0, 0, 0x22]));
        let cases = [
            (DataRepr::ibss(da, sa, bssid), 0u8, [da, sa, bssid], None, Some(bssid)),
            (DataRepr::from_ap(da, bssid, sa), 2, [da, bssid, sa], None, Some(bssid)),
            (DataRepr::to_ap(bssid, sa, da), 1, [bssid, sa, da], None, Some(bssid)),
            (DataRepr::wds(ra, ta, da, sa), 3, [ra, ta, da], Some(sa), None),
        ];
        for (repr, ds, a, a4, b) in cases {
            assert_eq!(repr.addresses.ds_field(), ds);
            let mut out = Vec::new();
            repr.encapsulate(&[], &mut out);
            let frame = Frame::new_checked(&out[..out.len() - 4]).unwrap();
            assert_eq!(frame.frame_control_raw() >> 8 & 0x3, ds as u16);
            assert_eq!([frame.addr1(), frame.addr2(), frame.addr3()], a);
            assert_eq!(frame.header_len(), if a4.is_some() { 30 } else { 24 });
            if let Some(a4) = a4 {
                assert_eq!(frame.addr4(), a4);
            }
            assert_eq!((repr.destination(), repr.source(), repr.bssid()), (da, sa, b));
            assert_eq!((repr.receiver(), repr.transmitter()), (a[0], a[1]));
            assert_eq!(DataRepr::parse(&frame).unwrap(), repr);
        }
    }

    #[test]
    fn test_qos() {
        let repr = DataRepr::wds(AP, STA, HOST, STA).with_qos(6);
        assert_eq!(repr.header_len(), QOS_DATA_HEADER_LEN_4ADDR);
        let mut out = Vec::new();
        repr.encapsulate_ethertype(EtherType::Arp, &[1, 2, 3], &mut out);
        // FC octet 0: subtype 8, type 2 → 0x88; octet 1: To DS | From DS → 0x03.
        assert_eq!(&out[..2], &[0x88, 0x03]);
        assert_eq!(&out[30..32], &[0x06, 0x00]);
        let (r, et, p) = DataRepr::decapsulate_ethertype(&out).unwrap();
        assert_eq!((r, et, p), (repr, EtherType::Arp, &[1, 2, 3][..]));
        assert_eq!(
            QosControl::from_raw(0xab75),
            QosControl { tid: 5, eosp: true, ack_policy: 3, amsdu_present: false, upper: 0xab }
        );
        assert_eq!(QosControl::from_raw(0xab75).raw(), 0xab75);
        let f: usize = repr.overhead_fields(100).iter().map(|x| x.1).sum();
        assert_eq!(f, 32 + 8 + 4);
        assert_eq!(to_ap().overhead_fields(1500).iter().map(|x| x.1).sum::<usize>(), 24 + 8 + 4);
    }

    #[test]
    fn test_errors() {
        assert_eq!(check_fcs(&TO_AP_BYTES[..13]), Err(Error::Truncated));
        let mut bad = TO_AP_BYTES;
        bad[33] ^= 0x80;
        assert_eq!(DataRepr::decapsulate_ethertype(&bad), Err(Error::Checksum));
        assert_eq!(Frame::new_checked(&TO_AP_BYTES[..23]), Err(Error::Truncated));
        assert_eq!(Frame::new_checked(&TO_AP_BYTES[..1]), Err(Error::Truncated));
        // Four-address header needs 30 octets.
        let mut four = TO_AP_BYTES;
        four[1] = 0x03;
        assert_eq!(Frame::new_checked(&four[..29]), Err(Error::Truncated));
        // A beacon is not modelled.
        let mut beacon = [0u8; 24];
        beacon[0] = 0x80;
        assert_eq!(Repr::parse(&Frame::new_checked(&beacon[..]).unwrap()), Err(Error::Unsupported));
        // An Ack with To DS set.
        let mut ack = ACK_BYTES;
        ack[1] = 0x01;
        assert_eq!(Repr::parse(&Frame::new_checked(&ack[..10]).unwrap()), Err(Error::Malformed));
        // Protocol version 1.
        let mut v1 = ACK_BYTES;
        v1[0] |= 1;
        assert_eq!(Repr::parse(&Frame::new_checked(&v1[..10]).unwrap()), Err(Error::Unsupported));
    }

    #[test]
    fn test_frame_control() {
        // RTS: type 1 subtype 11 → octet 0 = 0xb4.
        let fc = FrameControl::new(FrameType::Control, subtype::control::RTS);
        assert_eq!(fc.raw(), 0x00b4);
        assert_eq!(fc.type_subtype(), 0x1b);
        for raw in [0u16, 0xffff, 0x4208, 0x8188] {
            assert_eq!(FrameControl::from_raw(raw).raw(), raw);
        }
        assert_eq!(MAX_MPDU_LEN_NON_HT_PLAIN, 2338);
    }

    fn arb_addr() -> impl Strategy<Value = Address> {
        any::<[u8; 6]>().prop_map(Address)
    }

    fn arb_addresses() -> impl Strategy<Value = Addresses> {
        (0u8..4, arb_addr(), arb_addr(), arb_addr(), arb_addr())
            .prop_map(|(ds, a, b, c, d)| Addresses::from_fields(ds & 1 != 0, ds & 2 != 0, [a, b, c], d))
    }

    prop_compose! {
        fn arb_data()(addresses in arb_addresses(), duration in 0u16..=MAX_DURATION, seq in 0u16..4096, frag in 0u8..16,
                      flags in any::<[bool; 6]>(), qos in proptest::option::of(any::<u16>())) -> DataRepr {
            DataRepr {
                addresses, duration, sequence_number: seq, fragment_number: frag,
                more_fragments: flags[0], retry: flags[1], power_management: flags[2], more_data: flags[3],
                protected: flags[4], null: flags[5], qos: qos.map(QosControl::from_raw),
            }
        }
    }

    fn arb_repr() -> impl Strategy<Value = Repr> {
        prop_oneof![
            arb_data().prop_map(Repr::Data),
            (any::<u16>(), arb_addr(), arb_addr()).prop_map(|(d, r, t)| Repr::Rts {
                duration: d,
                receiver: r,
                transmitter: t
            }),
            (any::<u16>(), arb_addr()).prop_map(|(d, r)| Repr::Cts { duration: d, receiver: r }),
            (any::<u16>(), arb_addr()).prop_map(|(d, r)| Repr::Ack { duration: d, receiver: r }),
        ]
    }

    proptest! {
        #[test]
        fn roundtrip(repr in arb_repr(), body in proptest::collection::vec(any::<u8>(), 0..40)) {
            let body = if matches!(repr, Repr::Data(_)) { body } else { Vec::new() };
            let mut a = Vec::new();
            repr.encapsulate(&body, &mut a);
            let (parsed, got) = decapsulate(&a).unwrap();
            prop_assert_eq!(parsed, repr);
            prop_assert_eq!(got, &body[..]);
            let mut b = Vec::new();
            parsed.encapsulate(&body, &mut b);
            prop_assert_eq!(a, b);
        }

        #[test]
        fn parse_never_panics(data in proptest::collection::vec(any::<u8>(), 0..48)) {
            let _ = decapsulate(&data);
            let _ = DataRepr::decapsulate_ethertype(&data);
            if let Ok(f) = Frame::new_checked(&data[..]) {
                let _ = Repr::parse(&f);
                let _ = f.payload();
            }
        }
    }
}
