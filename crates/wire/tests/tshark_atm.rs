//! Cross-checks of the ATM files (atm, aal5, rfc2684, lane) against tshark's ATM, LLC,
//! LANE and Ethernet dissectors.
//!
//! Link types used:
//! * SunATM (LINKTYPE 123): a 4-octet pseudo-header (flags: low nibble the traffic type,
//!   1 = LANE, 2 = LLC; then VPI, then VCI big-endian; libpcap's sunatmpos.h), then
//!   the reassembled AAL5 SDU. Wireshark treats it as a truncated PDU (no trailer).
//! * RFC 1483 (LINKTYPE 100): an LLC-encapsulated SDU with no pseudo-header.
//! * ERF (LINKTYPE 197) records of type 4 (AAL5): a 4-octet cell header without HEC,
//!   then the whole CPCS-PDU with PAD and trailer. Wireshark parses the trailer and
//!   checks the CRC-32 itself ("AAL5 CRC: 0x... (correct)").
//! * USER0 (LINKTYPE 147) mapped to Wireshark's `atm_oam_cell` dissector: one raw
//!   53-octet cell, HEC included. Wireshark recomputes the HEC and names the bit of a
//!   single-bit error; it dissects the payload as OAM, which user cells are not, so
//!   only the header fields are compared.

mod common;

use wire::aal5;
use wire::atm::{self, Cell, Format, HecCheck, Pti};
use wire::ethernet::{Address as Mac, EtherType};
use wire::lane::{self, AtmAddress, ControlRepr, DataRepr, LanType, MaxFrameSize, Opcode};
use wire::pcap::LinkType;
use wire::rfc2684::{self, Encapsulation};

const SUNATM_LANE: u8 = 0x01;
const SUNATM_LLC: u8 = 0x02;
const LINKTYPE_ERF: u32 = 197;
const LINKTYPE_USER0: u32 = 147;
const USER0_AS_ATM_CELL: &str = r#"uat:user_dlts:"User 0 (DLT=147)","atm_oam_cell","0","","0","""#;

const SRC_MAC: Mac = Mac([0x02, 0x00, 0x00, 0x00, 0x00, 0x01]);
const DST_MAC: Mac = Mac([0x02, 0x00, 0x00, 0x00, 0x00, 0x02]);

/// RFC 1071 checksum, written here so the test needs no other file of the crate.
fn ones_complement(data: &[u8]) -> u16 {
    let mut sum = 0u32;
    for pair in data.chunks(2) {
        sum += u32::from(pair[0]) << 8 | u32::from(*pair.get(1).unwrap_or(&0));
    }
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// A 20-octet IPv4 header plus a UDP header (ports 50000 -> 50001, checksum 0, allowed
/// over IPv4) and `payload_len` octets of 0x5A.
fn ipv4_udp(src: [u8; 4], dst: [u8; 4], payload_len: usize) -> Vec<u8> {
    let total = 20 + 8 + payload_len;
    let mut p = vec![0x5au8; total];
    p[..28].fill(0);
    p[0] = 0x45;
    p[2..4].copy_from_slice(&(total as u16).to_be_bytes());
    p[4..6].copy_from_slice(&0x1234u16.to_be_bytes());
    p[8] = 64;
    p[9] = 17;
    p[12..16].copy_from_slice(&src);
    p[16..20].copy_from_slice(&dst);
    let c = ones_complement(&p[..20]);
    p[10..12].copy_from_slice(&c.to_be_bytes());
    p[20..22].copy_from_slice(&50000u16.to_be_bytes());
    p[22..24].copy_from_slice(&50001u16.to_be_bytes());
    p[24..26].copy_from_slice(&((8 + payload_len) as u16).to_be_bytes());
    p
}

fn ethernet_frame(ethertype: u16, payload: &[u8]) -> Vec<u8> {
    let mut f = Vec::new();
    f.extend_from_slice(&DST_MAC.0);
    f.extend_from_slice(&SRC_MAC.0);
    f.extend_from_slice(&ethertype.to_be_bytes());
    f.extend_from_slice(payload);
    f
}

fn sunatm(traffic: u8, vpi: u8, vci: u16, sdu: &[u8]) -> Vec<u8> {
    let mut f = vec![traffic, vpi];
    f.extend_from_slice(&vci.to_be_bytes());
    f.extend_from_slice(sdu);
    f
}

/// An ERF AAL5 record: 16-octet ERF header, the cell header without HEC, the PDU.
fn erf_aal5(vpi: u8, vci: u16, pdu: &[u8]) -> Vec<u8> {
    let mut rec = atm::Repr::user_data(vpi, vci, true).to_bytes()[..4].to_vec();
    rec.extend_from_slice(pdu);
    let mut f = vec![0u8; 8]; // timestamp
    f.push(4); // type 4: AAL5
    f.push(0x04); // flags: varying record length, interface 0
    f.extend_from_slice(&((16 + rec.len()) as u16).to_be_bytes()); // rlen
    f.extend_from_slice(&0u16.to_be_bytes()); // loss counter
    f.extend_from_slice(&(rec.len() as u16).to_be_bytes()); // wlen
    f.extend_from_slice(&rec);
    f
}

/// tshark prints FT_BYTES fields as bare hex.
fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn atm_address(seed: u8) -> AtmAddress {
    let mut a = [0u8; 20];
    a[0] = 0x47;
    for (i, b) in a[1..].iter_mut().enumerate() {
        *b = seed.wrapping_add(i as u8);
    }
    AtmAddress(a)
}

#[test]
fn sunatm_llc_snap_routed_ipv4() {
    let ip = ipv4_udp([192, 0, 2, 1], [192, 0, 2, 2], 12);
    let mut sdu = Vec::new();
    Encapsulation::LlcSnapRouted.repr(EtherType::Ipv4).encapsulate(&ip, &mut sdu);
    let frames = vec![sunatm(SUNATM_LLC, 0, 32, &sdu)];
    let Some(rows) = common::fields(
        LinkType::SunAtm,
        &frames,
        &[
            "atm.vpi",
            "atm.vci",
            "llc.dsap",
            "llc.ssap",
            "llc.control",
            "llc.oui",
            "llc.type",
            "ip.src",
            "ip.dst",
            "udp.length",
        ],
        &[],
    ) else {
        return;
    };
    // tshark prints llc.oui in decimal; under OUI 0 the PID is shown as llc.type.
    assert_eq!(rows[0], ["0", "32", "0xaa", "0xaa", "0x0003", "0", "0x0800", "192.0.2.1", "192.0.2.2", "20"]);
    common::assert_clean(&common::verbose(LinkType::SunAtm, &frames, &[]).unwrap());
}

#[test]
fn rfc1483_llc_snap_routed_and_bridged() {
    let ip = ipv4_udp([198, 51, 100, 7], [198, 51, 100, 8], 30);
    let eth = ethernet_frame(0x0800, &ip);
    let mut frames = Vec::new();
    for repr in [
        rfc2684::Repr::LlcSnapRouted { ethertype: EtherType::Ipv4 },
        rfc2684::Repr::LlcSnapBridged { fcs_preserved: false },
        rfc2684::Repr::LlcSnapBridged { fcs_preserved: true },
    ] {
        let payload = if repr.encapsulation().is_bridged() { &eth } else { &ip };
        let mut sdu = Vec::new();
        repr.encapsulate(payload, &mut sdu);
        frames.push(sdu);
    }
    let opts = ["-o", "eth.check_fcs:TRUE"];
    let Some(rows) = common::fields(
        LinkType::AtmRfc1483,
        &frames,
        &["llc.oui", "llc.type", "llc.pid", "eth.src", "eth.dst", "ip.src", "eth.fcs.status"],
        &opts,
    ) else {
        return;
    };
    // llc.oui in decimal: 0x0080C2 = 32962. eth.fcs.status 1 = good (the preserved FCS
    // is checked by tshark's Ethernet dissector with eth.check_fcs on).
    assert_eq!(rows[0], ["0", "0x0800", "", "", "", "198.51.100.7", ""]);
    assert_eq!(rows[1], ["32962", "", "0x0007", "02:00:00:00:00:01", "02:00:00:00:00:02", "198.51.100.7", ""]);
    assert_eq!(rows[2], ["32962", "", "0x0001", "02:00:00:00:00:01", "02:00:00:00:00:02", "198.51.100.7", "1"]);
    common::assert_clean(&common::verbose(LinkType::AtmRfc1483, &frames, &opts).unwrap());
}

#[test]
fn sunatm_lane_data_frame() {
    let ip = ipv4_udp([10, 0, 0, 1], [10, 0, 0, 2], 0);
    let eth = ethernet_frame(0x0800, &ip);
    let mut sdu = Vec::new();
    DataRepr { lecid: 0x0005 }.encapsulate(&eth, &mut sdu);
    let frames = vec![sunatm(SUNATM_LANE, 0, 33, &sdu)];
    let Some(rows) = common::fields(
        LinkType::SunAtm,
        &frames,
        &["atm.traffic.lane", "atm.le_client.client", "eth.src", "eth.dst", "eth.type", "ip.dst"],
        &[],
    ) else {
        return;
    };
    // LANE traffic type 2 = 802.3 data (Wireshark guesses it: no 0xFF00 marker).
    assert_eq!(rows[0], ["2", "0x0005", "02:00:00:00:00:01", "02:00:00:00:00:02", "0x0800", "10.0.0.2"]);
    common::assert_clean(&common::verbose(LinkType::SunAtm, &frames, &[]).unwrap());
}

#[test]
fn sunatm_lane_control_frames() {
    let arp = ControlRepr::arp_request(0x0102_0304, 0x0005, SRC_MAC, atm_address(1), DST_MAC);
    let mut join = ControlRepr {
        transaction_id: 7,
        lan_type: LanType::Ethernet,
        max_frame_size: MaxFrameSize::Size1516,
        source_atm: atm_address(1),
        target_atm: atm_address(0x40),
        flags: lane::flags::V2_CAPABLE,
        ..ControlRepr::new(Opcode::JoinRequest)
    };
    join.set_elan_name(b"qoslab-elan").unwrap();
    let frames: Vec<Vec<u8>> = [arp, join]
        .iter()
        .map(|r| {
            let mut sdu = Vec::new();
            r.encapsulate(&mut sdu);
            sunatm(SUNATM_LANE, 0, 34, &sdu)
        })
        .collect();
    let Some(rows) = common::fields(
        LinkType::SunAtm,
        &frames,
        &[
            "atm.traffic.lane",
            "atm.le_control.marker",
            "atm.le_control.protocol",
            "atm.le_control.version",
            "atm.le_control.opcode",
            "atm.le_control.transaction_id",
            "atm.le_control.requester_lecid",
            "atm.lan_destination.tag",
            "atm.lan_destination.mac",
            "atm.source_atm",
            "atm.le_configure_join_frame.lan_type",
            "atm.le_configure_join_frame.max_frame_size",
            "atm.le_configure_join_frame.elan_name_size",
            "atm.le_configure_join_frame.elan_name",
            "atm.target_atm",
            "atm.le_control.flag.v2_capable",
        ],
        &[],
    ) else {
        return;
    };
    let src_atm = hex(&atm_address(1).0);
    assert_eq!(
        rows[0],
        [
            "1", // LE control
            "0xff00",
            "0x01",
            "0x01",
            "0x0006",
            "0x01020304",
            "0x0005",
            "0x0001,0x0001",
            "02:00:00:00:00:01,02:00:00:00:00:02",
            src_atm.as_str(),
            "",
            "",
            "",
            "",
            &hex(&[0; 20]),
            "",
        ]
    );
    assert_eq!(
        rows[1],
        [
            "1",
            "0xff00",
            "0x01",
            "0x01",
            "0x0002",
            "0x00000007",
            "0x0000",
            "0x0000,0x0000",
            "",
            src_atm.as_str(),
            "0x01",
            "0x01",
            "11",
            &hex(b"qoslab-elan"),
            &hex(&atm_address(0x40).0),
            "1",
        ]
    );
    common::assert_clean(&common::verbose(LinkType::SunAtm, &frames, &[]).unwrap());
}

/// Whole CPCS-PDUs in ERF AAL5 records: tshark finds the trailer, reports our Length
/// and CRC-32 and says whether the CRC it computes agrees.
#[test]
fn erf_aal5_trailer_and_crc() {
    let mut frames = Vec::new();
    let mut expect = Vec::new();
    for payload_len in [0usize, 12, 1480] {
        let ip = ipv4_udp([192, 0, 2, 1], [192, 0, 2, 2], payload_len);
        let mut sdu = Vec::new();
        Encapsulation::LlcSnapRouted.repr(EtherType::Ipv4).encapsulate(&ip, &mut sdu);
        let mut pdu = Vec::new();
        aal5::encode(&sdu, 0, 0, &mut pdu).unwrap();
        let crc = u32::from_be_bytes(pdu[pdu.len() - 4..].try_into().unwrap());
        expect.push((sdu.len(), aal5::cell_count(sdu.len()), crc));
        frames.push(erf_aal5(0, 32, &pdu));
    }
    // The same 1-cell PDU with one payload bit flipped: tshark must call it incorrect.
    let mut bad = frames[0].clone();
    bad[16 + 4 + 10] ^= 0x01;
    frames.push(bad);
    let link = LinkType::Unknown(LINKTYPE_ERF);
    let Some(rows) =
        common::fields(link, &frames, &["atm.aal5t_len", "atm.cells", "atm.aal5t_crc", "llc.type", "ip.src"], &[])
    else {
        return;
    };
    for (row, (len, cells, crc)) in rows.iter().zip(&expect) {
        assert_eq!(row[0], len.to_string());
        assert_eq!(row[1], cells.to_string());
        assert_eq!(row[2], format!("0x{crc:08x}"));
        assert_eq!(row[3], "0x0800");
        assert_eq!(row[4], "192.0.2.1");
    }
    assert_eq!(expect[2].1, 32); // 1508-octet SDU: 32 cells
    let text = common::verbose(link, &frames, &[]).unwrap();
    let verdicts: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("AAL5 CRC:"))
        .map(|l| if l.ends_with("(correct)") { "correct" } else { "incorrect" })
        .collect();
    assert_eq!(verdicts, ["correct", "correct", "correct", "incorrect"]);
    common::assert_clean(&common::verbose(link, &frames[..3], &[]).unwrap());
}

/// Raw cells from `aal5::segment`: tshark decodes GFC/VPI/VCI/PTI/CLP and checks the
/// HEC. Then single-bit header errors: tshark's syndrome table and our `check_hec` must
/// name the same bit, and a double-bit error must be uncorrectable for both.
#[test]
fn raw_cells_header_and_hec() {
    let sdu: Vec<u8> = (0..100u8).collect();
    let mut cells: Vec<Vec<u8>> = Vec::new();
    let header = atm::Repr { format: Format::Uni, gfc: 0x3, vpi: 0xa5, vci: 0x1234, pti: Pti::UserData0, clp: true };
    aal5::segment_with(&header, 0, 0, &sdu, |c| cells.push(c.to_vec())).unwrap();
    assert_eq!(cells.len(), 3);
    let mut frames = cells.clone();
    frames.push(atm::Repr::IDLE.to_bytes().iter().copied().chain([0x6a; 48]).collect());

    let opts = ["-o", USER0_AS_ATM_CELL];
    let link = LinkType::Unknown(LINKTYPE_USER0);
    let Some(rows) = common::fields(
        link,
        &frames,
        &["atm.GFC", "atm.vpi", "atm.vci", "atm.payload_type", "atm.cell_loss_priority", "atm.header_error_check"],
        &opts,
    ) else {
        return;
    };
    for (i, row) in rows.iter().take(3).enumerate() {
        let pti = if i == 2 { "1" } else { "0" };
        let hec = Cell::new_unchecked(&cells[i][..]).hec();
        assert_eq!(row, &["3", "165", "4660", pti, "1", &format!("0x{hec:02x}")]);
    }
    assert_eq!(rows[3], ["0", "0", "0", "0", "1", "0x52"]);
    let text = common::verbose(link, &frames, &opts).unwrap();
    let hec_lines: Vec<&str> = text.lines().filter(|l| l.contains("Header Error Check:")).collect();
    assert_eq!(hec_lines.len(), 4);
    assert!(hec_lines.iter().all(|l| l.ends_with("(correct)")), "{hec_lines:?}");
    common::assert_clean(&text);

    // Errored headers.
    let good: [u8; 5] = cells[0][..5].try_into().unwrap();
    let bits = [0u8, 3, 4, 11, 12, 27, 28, 30, 31, 32, 39];
    let mut errored = Vec::new();
    let mut ours = Vec::new();
    for &bit in &bits {
        let mut h = good;
        h[usize::from(bit / 8)] ^= 0x80 >> (bit % 8);
        ours.push(atm::check_hec(&h));
        let mut c = cells[0].clone();
        c[..5].copy_from_slice(&h);
        errored.push(c);
    }
    let mut two = good;
    two[1] ^= 0x11;
    ours.push(atm::check_hec(&two));
    let mut c = cells[0].clone();
    c[..5].copy_from_slice(&two);
    errored.push(c);

    let text = common::verbose(link, &errored, &opts).unwrap();
    let theirs: Vec<String> = text
        .lines()
        .filter(|l| l.contains("Header Error Check:"))
        .map(|l| l[l.rfind('(').unwrap()..].to_string())
        .collect();
    let ours: Vec<String> = ours
        .iter()
        .map(|c| match c {
            HecCheck::Valid => "(correct)".to_string(),
            HecCheck::SingleBit { bit } => format!("(error in bit {bit})"),
            HecCheck::MultiBit => "(uncorrectable error)".to_string(),
        })
        .collect();
    assert_eq!(theirs, ours);
    assert_eq!(ours.last().unwrap(), "(uncorrectable error)");
}
