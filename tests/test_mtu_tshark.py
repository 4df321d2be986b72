"""Whole stacks as `qoslab mtu --pcap` writes them, dissected by tshark: every layer is
where the stack says, with the lengths and checksums tshark computes itself."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest
from qoslab.analysis.mtu import analyse

TSHARK = shutil.which("tshark")
pytestmark = pytest.mark.skipif(
    TSHARK is None and not os.environ.get("QOSLAB_REQUIRE_TSHARK"), reason="tshark not installed"
)


def dissect(pcap, fields, *options):
    args = [
        TSHARK or "tshark",
        "-n",
        "-r",
        str(pcap),
        *options,
        "-T",
        "fields",
        "-E",
        "separator=|",
        "-E",
        "occurrence=a",
        "-E",
        "aggregator=,",
    ]
    for f in fields:
        args += ["-e", f]
    out = subprocess.run(args, capture_output=True, text=True, check=True).stdout
    return [line.split("|") for line in out.splitlines()]


def verbose(pcap, *options):
    out = subprocess.run(
        [TSHARK or "tshark", "-n", "-r", str(pcap), *options, "-V"], capture_output=True, text=True, check=True
    )
    for bad in ("Malformed Packet", "[Checksum: Bad]", "Exception occurred", "[Expert Info (Error"):
        assert bad not in out.stdout, out.stdout
    return out.stdout


def test_pppoe_stack_fragmented(tmp_path):
    pcap = tmp_path / "pppoe.pcap"
    report = analyse("ethernet/pppoe/ipv4/udp", size=3000, pcap=pcap)
    rows = dissect(
        pcap,
        ["eth.type", "pppoe.session_id", "ppp.protocol", "ip.len", "ip.flags.mf", "ip.frag_offset"],
        "-o",
        "ip.defragment:FALSE",
    )
    assert len(rows) == report.datagram.fragments == 3
    for eth_type, session, protocol, ip_len, _mf, _offset in rows:
        assert eth_type == "0x8864" and session == "0x0001" and protocol == "0x0021"
        assert int(ip_len) <= 1492  # RFC 2516 §7: PPPoE MTU
    assert [r[4] for r in rows] == ["1", "1", "0"]
    # tshark reassembles the fragments to the original datagram's 2980-byte payload:
    # one UDP datagram as long as it.
    reassembled = dissect(pcap, ["ip.reassembled.length", "udp.length"])
    assert [str(3000 - 20), str(3000 - 20)] in reassembled
    verbose(pcap)


def test_pptp_over_openvpn_outer_layers(tmp_path):
    pcap = tmp_path / "seed002.pcap"
    stack = "ethernet/ipv4/udp/openvpn(cipher=none,auth=sha1)/ethernet/ipv4/gre(pptp)/ppp/ipv4/tcp"
    report = analyse(stack, pcap=pcap)
    rows = dissect(
        pcap,
        ["ip.len", "udp.dstport", "openvpn.opcode", "openvpn.peerid", "frame.len"],
        "-d",
        "udp.port==1194,openvpn",
        "-o",
        "udp.check_checksum:TRUE",
    )
    assert len(rows) == 1
    ip_len, port, opcode, peer_id, frame_len = rows[0]
    assert ip_len == "1500"  # a full-size inner datagram fills the outer MTU exactly
    assert port == "1194" and opcode == "0x09" and peer_id
    assert int(frame_len) == 1514
    assert report.mtu == 1401
    verbose(pcap, "-d", "udp.port==1194,openvpn")


def test_gre_pptp_stack_dissects_to_tcp(tmp_path):
    pcap = tmp_path / "pptp.pcap"
    analyse("ethernet/ipv4/gre(pptp)/ppp/ipv4/tcp", pcap=pcap)
    rows = dissect(
        pcap,
        ["gre.proto", "gre.key.payload_length", "ppp.protocol", "ip.proto", "tcp.len"],
        "-o",
        "tcp.check_checksum:TRUE",
    )
    gre_proto, payload_length, ppp_protocol, ip_protos, tcp_len = rows[0]
    assert gre_proto == "0x880b" and ppp_protocol == "0x0021"
    # GRE 12 + PPP 1 (PFC, ACFC) inside a 1500-byte outer datagram: the inner datagram
    # is 1500 - 20 - 12 - 1 = 1467 bytes, whose TCP carries 1427.
    assert int(payload_length) == 1 + 1467
    assert ip_protos == "47,6"
    assert tcp_len == "1427"
    verbose(pcap, "-o", "tcp.check_checksum:TRUE")


def test_esp_null_transport_dissects_to_udp(tmp_path):
    pcap = tmp_path / "esp.pcap"
    report = analyse("ethernet/ipv4/esp(mode=transport,cipher=null,auth=hmac-sha1-96)/udp", pcap=pcap)
    rows = dissect(
        pcap,
        ["esp.spi", "esp.pad_len", "esp.protocol", "udp.length", "ip.len"],
        "-o",
        "esp.enable_null_encryption_decode_heuristic:TRUE",
    )
    spi, pad_len, protocol, udp_length, ip_len = rows[0]
    assert len(rows) == 1  # not fragmented
    assert protocol == "0x11" and int(ip_len) == 1500
    # RFC 4303 §2.4 with NULL: payload + pad + 2 aligned to 4 bytes.
    assert (int(udp_length) + int(pad_len) + 2) % 4 == 0
    assert int(udp_length) - 8 == report.udp_max_payload or report.mtu == 1500


def test_wifi_wep_frame_decrypts(tmp_path):
    pcap = tmp_path / "wep.pcap"
    analyse("wifi(security=wep-40)/ipv4/udp", size=100, pcap=pcap)
    key = "0101010101"  # the fixed WEP-40 key of wire::encap
    rows = dissect(
        pcap,
        ["wlan.fc.protected", "wlan.wep.iv", "ip.len", "udp.length"],
        "-o",
        "wlan.enable_decryption:TRUE",
        "-o",
        f'uat:80211_keys:"wep","{key}"',
    )
    protected, iv, ip_len, udp_length = rows[0]
    assert protected in ("1", "True") and ip_len == "100" and udp_length == "80"
