//! PPP in bit-synchronous HDLC framing (RFC 1662 §5), as a synchronous serial line
//! carries it, checked against tshark's dissection. A capture of such a line holds the
//! octets between the flags with neither octet nor bit stuffing (tcpdump.org
//! LINKTYPE_PPP_HDLC, 50): address and control (unless ACFC), the PPP protocol field
//! (one octet with PFC), the datagram, and the FCS (Wireshark's `ppp.fcs_type`
//! preference says which). tshark must see the protocol, the whole IPv4 datagram and a
//! good FCS, and the frame length it reports is the octet count the line's time is
//! computed from (8 bits each, plus flags and inserted zero bits).

mod common;

use std::net::Ipv4Addr;

use wire::hdlc::{self, Config, Fcs};
use wire::pcap::LinkType;
use wire::{ipv4, udp, IpProtocol};

fn datagram(payload: &[u8]) -> Vec<u8> {
    let (src, dst) = (Ipv4Addr::new(198, 51, 100, 1), Ipv4Addr::new(198, 51, 100, 2));
    let mut segment = Vec::new();
    udp::Repr { src_port: 49152, dst_port: 9 }.encapsulate(&src, &dst, payload, &mut segment);
    let mut packet = Vec::new();
    ipv4::Repr::new(src, dst, IpProtocol::Udp, segment.len(), 64).encapsulate(&segment, &mut packet);
    packet
}

#[test]
fn sync_ppp_frames_dissected_by_tshark() {
    // Payloads with long runs of ones (0xff, 0x7e: zero bits inserted) and none.
    let payloads: [&[u8]; 3] = [&[0xff; 40], &[0x7e, 0x7d, 0x7e, 0x7d], &[0x00; 20]];
    for (fcs, pref) in [(Fcs::Fcs16, "ppp.fcs_type:16-Bit"), (Fcs::Fcs32, "ppp.fcs_type:32-Bit")] {
        for acfc in [false, true] {
            for pfc in [false, true] {
                let config = Config { accm: 0, acfc, fcs };
                let mut frames = Vec::new();
                let mut packets = Vec::new();
                for payload in payloads {
                    let packet = datagram(payload);
                    // RFC 1661 §6.5: 0x0021 in one octet under PFC.
                    let mut ppp_frame = if pfc { vec![0x21] } else { vec![0x00, 0x21] };
                    ppp_frame.extend_from_slice(&packet);
                    let frame = config.frame(&ppp_frame);
                    // Header 2 (none with ACFC) + protocol 2 (1 with PFC) + FCS 2 or 4.
                    let overhead = 2 * usize::from(!acfc) + 2 - usize::from(pfc) + fcs.len();
                    assert_eq!(frame.len(), packet.len() + overhead);
                    assert_eq!(
                        config.sync_line_bits(&ppp_frame),
                        8 * (frame.len() as u64 + 2) + hdlc::zero_bits_inserted(&frame)
                    );
                    frames.push(frame);
                    packets.push(packet);
                }
                // Wireshark's PPP-in-HDLC dissector needs the 0xff 0x03 to tell PPP from
                // Cisco HDLC (LINKTYPE_PPP_HDLC: "the first byte will be 0xFF"); frames
                // without them are checked for their lengths only.
                if acfc {
                    continue;
                }
                let names =
                    ["frame.len", "ppp.protocol", "ip.len", "ip.checksum.status", "udp.length", "ppp.fcs.status"];
                let opts = ["-o", pref, "-o", "ip.check_checksum:TRUE"];
                let Some(rows) = common::fields(LinkType::PppHdlc, &frames, &names, &opts) else { return };
                assert_eq!(rows.len(), frames.len());
                for ((row, frame), packet) in rows.iter().zip(&frames).zip(&packets) {
                    assert_eq!(row[0], frame.len().to_string(), "{fcs:?} pfc {pfc}");
                    assert_eq!(row[1], "0x0021", "{fcs:?} pfc {pfc}");
                    assert_eq!(row[2], packet.len().to_string());
                    assert_eq!(row[3], "1", "IPv4 checksum good");
                    assert_eq!(row[4], (packet.len() - 20).to_string());
                    assert_eq!(row[5], "1", "{fcs:?} pfc {pfc}: FCS good");
                }
                if let Some(text) = common::verbose(LinkType::PppHdlc, &frames, &opts) {
                    common::assert_clean(&text);
                }
            }
        }
    }
}
