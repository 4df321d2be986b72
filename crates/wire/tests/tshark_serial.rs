//! Cross-checks of slip.rs, cslip.rs and dot11_crypto.rs against tshark.
//!
//! * VJ compression: tshark 4.0 has no dissector for LINKTYPE_SLIP (it shows the records
//!   as plain data), so the VJ bytes are checked over PPP instead: LINKTYPE_PPP_WITH_DIR
//!   (204) with protocols 0x002f / 0x002d, which tshark's `vjc` dissector decompresses when
//!   it knows the direction. tshark's rebuilt IP and TCP headers must equal the originals,
//!   with good IP and TCP checksums.
//! * The SLIP receive path (SLIP decoder, RFC 1144 type bits, decompressor) is checked by
//!   handing its output to tshark as raw IPv4; the LINKTYPE_SLIP records themselves are only
//!   checked to be read as SLIP with the right length.
//! * WEP: an 802.11 data frame (hand-written 24-byte header, Protected bit set) that tshark
//!   decrypts with the key and dissects down to LLC/SNAP, IPv4 and ICMP, ICV correct.
//! * CCMP: a frame encrypted here is decrypted by tshark given the temporal key ("tk"
//!   record), with the PN, key id and the inner IPv4/ICMP checked.

mod common;

use wire::checksum;
use wire::cslip::{self, Compressor, Decompressor, PacketType, Received};
use wire::dot11_crypto::{ccmp_encapsulate, wep_encapsulate};
use wire::pcap::LinkType;
use wire::slip::{self, Decoder, Framing};

/// LINKTYPE_PPP_WITH_DIR: one direction byte (0 received, else sent), then PPP in
/// HDLC-like framing without flags and FCS.
const LINKTYPE_PPP_WITH_DIR: u32 = 204;

#[derive(Clone)]
struct Seg {
    id: u16,
    seq: u32,
    ack: u32,
    flags: u8,
    window: u16,
    sport: u16,
    data: Vec<u8>,
}

const ACK: u8 = 0x10;
const PSH: u8 = 0x08;

/// A TCP/IPv4 datagram 10.1.0.1 -> 10.1.0.2 with right checksums.
fn datagram(s: &Seg) -> Vec<u8> {
    let total = 40 + s.data.len();
    let mut p = vec![0u8; total];
    p[0] = 0x45;
    p[2..4].copy_from_slice(&(total as u16).to_be_bytes());
    p[4..6].copy_from_slice(&s.id.to_be_bytes());
    p[6] = 0x40; // DF
    p[8] = 64;
    p[9] = 6;
    p[12..16].copy_from_slice(&[10, 1, 0, 1]);
    p[16..20].copy_from_slice(&[10, 1, 0, 2]);
    let c = checksum::checksum(&p[..20]);
    p[10..12].copy_from_slice(&c.to_be_bytes());
    p[20..22].copy_from_slice(&s.sport.to_be_bytes());
    p[22..24].copy_from_slice(&23u16.to_be_bytes());
    p[24..28].copy_from_slice(&s.seq.to_be_bytes());
    p[28..32].copy_from_slice(&s.ack.to_be_bytes());
    p[32] = 0x50;
    p[33] = s.flags;
    p[34..36].copy_from_slice(&s.window.to_be_bytes());
    p[40..].copy_from_slice(&s.data);
    let acc = checksum::pseudo_header([10, 1, 0, 1], [10, 1, 0, 2], 6, (total - 20) as u16);
    let c = !checksum::fold(checksum::accumulate(acc, &p[20..]));
    p[36..38].copy_from_slice(&c.to_be_bytes());
    p
}

/// A telnet-like conversation: bare ACKs, bulk data (S*), echoed keystrokes (SA*), a
/// window change, an IP ID jump and a second connection.
fn conversation() -> Vec<Vec<u8>> {
    let mut s =
        Seg { id: 1000, seq: 0x1000_0000, ack: 0x2000_0000, flags: ACK, window: 4096, sport: 1025, data: vec![] };
    let mut out = vec![datagram(&s)];
    let step = |s: &mut Seg, f: &dyn Fn(&mut Seg)| {
        s.id = s.id.wrapping_add(1);
        f(s);
        datagram(s)
    };
    // Bare ACKs.
    out.push(step(&mut s, &|s| s.ack += 100));
    out.push(step(&mut s, &|s| s.ack += 512));
    // Bulk data of 200 bytes: first explicit S (after a bare ACK: nothing changed + data),
    // then S* as seq advances by the previous length.
    out.push(step(&mut s, &|s| s.data = vec![b'd'; 200]));
    out.push(step(&mut s, &|s| s.seq += 200));
    out.push(step(&mut s, &|s| s.seq += 200));
    // Echoed keystrokes: one byte, seq and ack both +1 (SA*), with PSH.
    out.push(step(&mut s, &|s| {
        s.seq += 200;
        s.ack += 1;
        s.data = vec![b'a'];
        s.flags = ACK | PSH;
    }));
    out.push(step(&mut s, &|s| {
        s.seq += 1;
        s.ack += 1;
        s.data = vec![b'b'];
    }));
    out.push(step(&mut s, &|s| {
        s.seq += 1;
        s.ack += 1;
        s.data = vec![b'c'];
    }));
    // Window shrinks, IP ID jumps.
    out.push(step(&mut s, &|s| {
        s.seq += 1;
        s.window = 2048;
        s.id += 40;
        s.data.clear();
        s.flags = ACK;
    }));
    // Another connection, then the first again (connection number needed).
    let mut t = Seg { sport: 1026, ..s.clone() };
    out.push(datagram(&t));
    out.push(step(&mut t, &|t| t.ack += 10));
    out.push(step(&mut s, &|s| s.ack += 10));
    out
}

#[test]
fn vj_over_ppp_decompressed_by_tshark() {
    let originals = conversation();
    let mut c = Compressor::default();
    let mut frames = Vec::new();
    let mut kinds = Vec::new();
    for p in &originals {
        let mut wire = Vec::new();
        let kind = c.compress(p, &mut wire);
        let mut frame = vec![1, 0xff, 0x03];
        frame.extend_from_slice(&kind.ppp_protocol().to_be_bytes());
        frame.extend_from_slice(&wire);
        frames.push(frame);
        kinds.push((kind, wire));
    }
    // The sequence exercises every form.
    let masks: Vec<u8> = kinds.iter().filter(|(k, _)| *k == PacketType::CompressedTcp).map(|(_, w)| w[0]).collect();
    assert!(masks.iter().any(|m| m & cslip::change::SPECIALS_MASK == cslip::change::SPECIAL_D));
    assert!(masks.iter().any(|m| m & cslip::change::SPECIALS_MASK == cslip::change::SPECIAL_I));
    assert!(masks.iter().any(|m| m & cslip::change::C != 0));
    assert!(masks.iter().any(|m| m & cslip::change::C == 0));
    assert_eq!(kinds[1].1.len(), 4, "a bare ACK compresses to 4 bytes");

    let opts =
        ["-o", "ip.check_checksum:TRUE", "-o", "tcp.check_checksum:TRUE", "-o", "tcp.analyze_sequence_numbers:FALSE"];
    let link = LinkType::from(LINKTYPE_PPP_WITH_DIR);
    let names = [
        "ppp.protocol",
        "vjc.change_mask",
        "vjc.connection_number",
        "vjc.checksum",
        "ip.id",
        "ip.len",
        "ip.checksum.status",
        "tcp.srcport",
        "tcp.seq_raw",
        "tcp.ack_raw",
        "tcp.window_size_value",
        "tcp.flags",
        "tcp.checksum.status",
        "tcp.len",
    ];
    let Some(rows) = common::fields(link, &frames, &names, &opts) else {
        return;
    };
    assert_eq!(rows.len(), originals.len());
    for (i, ((row, p), (kind, wire))) in rows.iter().zip(&originals).zip(&kinds).enumerate() {
        let be16 = |at: usize| u16::from_be_bytes([p[at], p[at + 1]]);
        let be32 = |at: usize| u32::from_be_bytes([p[at], p[at + 1], p[at + 2], p[at + 3]]);
        assert_eq!(row[0], format!("0x{:04x}", kind.ppp_protocol()), "frame {i}");
        if *kind == PacketType::CompressedTcp {
            assert_eq!(row[1], format!("0x{:02x}", wire[0]), "frame {i} mask");
            if wire[0] & cslip::change::C != 0 {
                assert_eq!(row[2], wire[1].to_string(), "frame {i}");
            }
            assert_eq!(row[3], format!("0x{:04x}", be16(36)), "frame {i} carried checksum");
        }
        assert_eq!(row[4], format!("0x{:04x}", be16(4)), "frame {i} ip.id");
        assert_eq!(row[5], p.len().to_string(), "frame {i} ip.len");
        assert_eq!(row[6], "1", "frame {i}: IP checksum good");
        assert_eq!(row[7], be16(20).to_string());
        assert_eq!(row[8], be32(24).to_string(), "frame {i} seq");
        assert_eq!(row[9], be32(28).to_string(), "frame {i} ack");
        assert_eq!(row[10], be16(34).to_string(), "frame {i} window");
        assert_eq!(row[11], format!("0x{:04x}", p[33]), "frame {i} flags");
        assert_eq!(row[12], "1", "frame {i}: TCP checksum good");
        assert_eq!(row[13], (p.len() - 40).to_string(), "frame {i} data length");
    }
    if let Some(text) = common::verbose(link, &frames, &opts) {
        common::assert_clean(&text);
        assert!(!text.contains("cannot decompress"), "{text}");
    }
}

#[test]
fn slip_receive_path_yields_datagrams_tshark_accepts() {
    // Sender: compress, mark the type, SLIP-frame onto one byte stream.
    let originals = conversation();
    let mut c = Compressor::default();
    let framing = Framing::default();
    let mut line = Vec::new();
    let mut link_packets = Vec::new();
    for p in &originals {
        let mut wire = Vec::new();
        let kind = c.compress(p, &mut wire);
        cslip::slip_mark(kind, &mut wire);
        framing.encapsulate(&wire, &mut line);
        link_packets.push(wire);
    }
    // The line carries the framed packets, far fewer bytes than the datagrams: 13 headers
    // of 40 bytes, 9 of them compressed to 3-5 bytes.
    let raw: usize = originals.iter().map(Vec::len).sum();
    let framed: usize = link_packets.iter().map(|w| framing.encoded_len(w)).sum();
    assert_eq!(line.len(), framed);
    assert!(raw - line.len() > 9 * 30, "{} vs {}", line.len(), raw);

    // Receiver: SLIP decoder, type bits, decompressor.
    let mut decoder = Decoder::default();
    let mut d = Decompressor::default();
    let mut datagrams = Vec::new();
    let mut slip_records = Vec::new();
    for (i, frame) in decoder.decode(&line).into_iter().enumerate() {
        let mut packet = frame.expect("clean line");
        assert_eq!(packet, link_packets[i]);
        let pseudo = slip::pcap_pseudo_header(false, &packet);
        let kind = cslip::slip_unmark(&mut packet).unwrap();
        let mut out = Vec::new();
        assert_eq!(d.decompress(kind, &packet, &mut out), Ok(Received::Delivered));
        assert_eq!(out, originals[i]);
        let mut record = pseudo.to_vec();
        record.extend_from_slice(&out);
        slip_records.push(record);
        datagrams.push(out);
    }
    assert_eq!(datagrams.len(), originals.len());

    let opts = ["-o", "ip.check_checksum:TRUE", "-o", "tcp.check_checksum:TRUE"];
    let Some(rows) =
        common::fields(LinkType::Raw, &datagrams, &["ip.checksum.status", "tcp.checksum.status", "tcp.seq_raw"], &opts)
    else {
        return;
    };
    for (row, p) in rows.iter().zip(&originals) {
        assert_eq!(row[..2], ["1", "1"]);
        assert_eq!(row[2], u32::from_be_bytes([p[24], p[25], p[26], p[27]]).to_string());
    }
    if let Some(text) = common::verbose(LinkType::Raw, &datagrams, &opts) {
        common::assert_clean(&text);
    }
    // LINKTYPE_SLIP: tshark 4.0 reads the records as SLIP but has no dissector for them.
    if let Some(rows) = common::fields(LinkType::Slip, &slip_records, &["frame.encap_type", "frame.len"], &[]) {
        for (row, r) in rows.iter().zip(&slip_records) {
            assert_eq!(row, &["3".to_string(), r.len().to_string()]);
        }
    }
}

/// A 24-byte 802.11 data frame header, ToDS, Protected: A1 BSSID, A2 SA, A3 DA.
fn dot11_header(protected: bool) -> Vec<u8> {
    let mut h = vec![0x08, 0x01 | if protected { 0x40 } else { 0 }, 0x2c, 0x00];
    h.extend_from_slice(&[0x00, 0x11, 0x22, 0x33, 0x44, 0x55]); // BSSID
    h.extend_from_slice(&[0x02, 0x00, 0x00, 0x00, 0x00, 0x01]); // SA
    h.extend_from_slice(&[0x02, 0x00, 0x00, 0x00, 0x00, 0x02]); // DA
    h.extend_from_slice(&[0x10, 0x00]); // sequence 1, fragment 0
    h
}

/// LLC/SNAP + IPv4 + ICMP echo request with right checksums.
fn llc_ip_icmp() -> Vec<u8> {
    let mut icmp = vec![8, 0, 0, 0, 0x12, 0x34, 0, 1, b'q', b'o', b's', b'l', b'a', b'b'];
    let c = checksum::checksum(&icmp);
    icmp[2..4].copy_from_slice(&c.to_be_bytes());
    let total = 20 + icmp.len();
    let mut ip = vec![0x45, 0, 0, 0, 0, 7, 0, 0, 64, 1, 0, 0, 10, 2, 0, 1, 10, 2, 0, 2];
    ip[2..4].copy_from_slice(&(total as u16).to_be_bytes());
    let c = checksum::checksum(&ip);
    ip[10..12].copy_from_slice(&c.to_be_bytes());
    [&[0xaa, 0xaa, 0x03, 0, 0, 0, 0x08, 0x00][..], &ip, &icmp].concat()
}

#[test]
fn wep_decrypted_by_tshark() {
    let plain = llc_ip_icmp();
    let mut frames = Vec::new();
    let keys: [(&[u8], &str, [u8; 3], u8); 2] = [
        (&[0x01, 0x02, 0x03, 0x04, 0x05], "0102030405", [0x00, 0x00, 0x2a], 0),
        (b"qoslab-wep104", "716f736c61622d776570313034", [0xab, 0xcd, 0xef], 0),
    ];
    for (key, _, iv, key_id) in keys {
        let mut frame = dot11_header(true);
        wep_encapsulate(key, iv, key_id, &plain, &mut frame).unwrap();
        frames.push(frame);
    }
    // One uat record per -o; tshark adds each to its key table.
    let opts = [
        "-o",
        "wlan.enable_decryption:TRUE",
        "-o",
        &format!("uat:80211_keys:\"wep\",\"{}\"", keys[0].1),
        "-o",
        &format!("uat:80211_keys:\"wep\",\"{}\"", keys[1].1),
        "-o",
        "ip.check_checksum:TRUE",
    ];
    let names = [
        "wlan.fc.protected",
        "wlan.wep.iv",
        "wlan.wep.key",
        "wlan.wep.icv",
        "llc.type",
        "ip.src",
        "ip.dst",
        "icmp.ident",
        "icmp.checksum.status",
        "ip.checksum.status",
    ];
    let Some(rows) = common::fields(LinkType::Ieee80211, &frames, &names, &opts) else {
        return;
    };
    for ((row, (_, _, iv, key_id)), frame) in rows.iter().zip(keys).zip(&frames) {
        assert_eq!(row[0], "1");
        assert_eq!(row[1], format!("0x{:02x}{:02x}{:02x}", iv[0], iv[1], iv[2]));
        assert_eq!(row[2], key_id.to_string());
        // tshark shows the (encrypted) ICV as sent, read big-endian.
        let icv = &frame[frame.len() - 4..];
        assert_eq!(row[3], format!("0x{:08x}", u32::from_be_bytes([icv[0], icv[1], icv[2], icv[3]])));
        assert_eq!(row[4], "0x0800", "decrypted LLC/SNAP: {row:?}");
        assert_eq!(row[5..8], ["10.2.0.1", "10.2.0.2", "4660"]);
        assert_eq!(row[8..10], ["1", "1"]);
    }
    let text = common::verbose(LinkType::Ieee80211, &frames, &opts).unwrap();
    common::assert_clean(&text);
    assert_eq!(text.matches("WEP ICV: 0x").count(), 2, "{text}");
    let icv_lines: Vec<&str> = text.lines().filter(|l| l.contains("WEP ICV:")).collect();
    assert!(icv_lines.iter().all(|l| l.trim_end().ends_with("(correct)")), "{icv_lines:?}");
    assert!(!text.contains("(incorrect") && !text.contains("[Expert Info (Warning"), "{text}");
}

#[test]
fn ccmp_decrypted_by_tshark() {
    let mut frame = dot11_header(true);
    let header = frame.clone();
    let pn = 0x0000_0102_0304;
    ccmp_encapsulate(&[0x42; 16], &header, pn, 1, &llc_ip_icmp(), &mut frame).unwrap();
    // Wireshark takes a CCMP temporal key directly as a "tk" record.
    let tk = format!("uat:80211_keys:\"tk\",\"{}\"", "42".repeat(16));
    let opts = ["-o", "wlan.enable_decryption:TRUE", "-o", &tk, "-o", "ip.check_checksum:TRUE"];
    let names = ["wlan.ccmp.extiv", "wlan.wep.key", "llc.type", "ip.dst", "icmp.checksum.status"];
    let Some(rows) = common::fields(LinkType::Ieee80211, &[frame.clone()], &names, &opts) else {
        return;
    };
    assert_eq!(rows[0], ["0x000001020304", "1", "0x0800", "10.2.0.2", "1"]);
    let text = common::verbose(LinkType::Ieee80211, &[frame], &opts).unwrap();
    common::assert_clean(&text);
}
