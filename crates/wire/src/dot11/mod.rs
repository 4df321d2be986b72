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
mod data;
mod frame;
mod header;
mod repr;

pub use data::*;
pub use frame::*;
pub use header::*;
pub use repr::*;

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
