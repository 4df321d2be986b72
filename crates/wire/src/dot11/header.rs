//! The Frame Control (§9.2.4.1) and QoS Control (§9.2.4.5) fields decoded.

use super::*;

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
