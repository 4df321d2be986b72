"""`qoslab mtu`: the numbers the issue and the seeds require, each computed here from
the standards' header sizes, independently of the code under test."""

from __future__ import annotations

import json
import math
import struct
import subprocess
import sys

import pytest
from qoslab.analysis.mtu import analyse

SEED002_OVPN = "ethernet/ipv4/udp/openvpn(cipher=none,auth=sha1)"


def test_ethernet_ipv4_mtu_is_1500():
    # IEEE 802.3 §3.2.7: 1500 bytes of MAC client data.
    report = analyse("ethernet/ipv4")
    assert report.mtu == 1500
    # RFC 9293 §3.7.1 / RFC 879: MSS = MTU - 20 (IPv4) - 20 (TCP).
    assert report.tcp_mss == 1500 - 20 - 20
    assert report.udp_max_payload == 1500 - 20 - 8


@pytest.mark.parametrize(
    ("inner", "with_fcs", "without_fcs"),
    [
        ("/ethernet", 1430, 1434),  # seed 002 §3.2: the L2-VPN (TAP) interface
        ("/ethernet/pppoe/ipv4", 1422, 1426),  # §3.3: PPPoE interface
        ("/ethernet/ipv4/gre(pptp)/ppp/ipv4", 1397, 1401),  # §3.4: PPTP interface
    ],
)
def test_seed002_interface_mtus(inner, with_fcs, without_fcs):
    assert analyse(SEED002_OVPN + inner, count_fcs=True).mtu == with_fcs
    assert analyse(SEED002_OVPN + inner).mtu == without_fcs


def test_seed002_arithmetic_from_header_sizes():
    # The same numbers from the seed's own arithmetic: 1500 - IPv4 20 - UDP 8 - OpenVPN 24
    # (opcode 1, peer id 3, HMAC-SHA1 20) = 1448 for the tunnelled frame; less Ethernet
    # 14 and (seed's accounting) FCS 4; then PPPoE 6 + PPP 2; or IPv4 20 + GRE 12 + PPP 1.
    frame = 1500 - 20 - 8 - (1 + 3 + 20)
    tap = frame - 14
    report = analyse(SEED002_OVPN + "/ethernet/pppoe/ipv4")
    assert [i.mtu for i in report.interfaces] == [1500, tap, tap - 8]
    openvpn = next(layer for layer in report.layers if layer.name == "openvpn")
    assert openvpn.overhead_bytes == 24
    assert dict(openvpn.fields) == {"opcode/key id": 1, "peer id": 3, "hmac": 20}


def test_seed002_tcp_payload():
    # Seed 002 §4: "the maximum TCP payload is 1382 bytes" on the PPPoE interface of MTU
    # 1422 (its accounting): 1422 - IPv4 20 - TCP 20.
    report = analyse(SEED002_OVPN + "/ethernet/pppoe/ipv4/tcp", count_fcs=True)
    assert report.tcp_mss == 1422 - 20 - 20 == 1382


def test_openvpn_replay_protection_costs_four_bytes():
    # OpenVPN's default replay protection sends a 4-byte packet ID (packet_id.h) that
    # seed 002 does not count; the analysis says so and counts it when asked.
    seed = analyse(SEED002_OVPN + "/ethernet")
    real = analyse("ethernet/ipv4/udp/openvpn(cipher=none,auth=sha1,replay=yes)/ethernet")
    assert real.mtu == seed.mtu - 4
    assert any("packet ID" in n for n in seed.notes)


def test_count_fcs_explains_itself():
    precise = analyse(SEED002_OVPN + "/ethernet")
    seed = analyse(SEED002_OVPN + "/ethernet", count_fcs=True)
    assert any("--count-fcs" in n for n in precise.notes)
    assert any("seed 002" in n for n in seed.notes)


def test_udp_max_payload_plain_and_esp():
    # Seed 003 §4.1: the fragmentation knee at 1472 bytes of UDP payload without IPsec...
    assert analyse("ethernet/ipv4/udp").udp_max_payload == 1472

    # ...and 1438 with ESP transport, 3DES-CBC and HMAC-SHA1-96. Independently (RFC 4303
    # §2.4, RFC 2451, RFC 2404): IPv4 20 + SPI 4 + sequence 4 + IV 8 + ICV 12, and the
    # UDP datagram + pad length + next header padded to the 8-byte 3DES block.
    def esp_ip_len(udp_payload: int) -> int:
        return 20 + 4 + 4 + 8 + math.ceil((udp_payload + 8 + 2) / 8) * 8 + 12

    expected = max(p for p in range(1500) if esp_ip_len(p) <= 1500)
    assert expected == 1438
    stack = "ethernet/ipv4/esp(mode=transport,cipher=3des-cbc,auth=hmac-sha1-96)/udp"
    assert analyse(stack).udp_max_payload == expected


def test_clip_mtu_and_cells():
    # RFC 2225 §5: CLIP MTU 9180. ITU-T I.363.5: AAL5 adds an 8-byte trailer and pads to
    # whole 48-byte cell payloads; RFC 2684 §5.1 LLC/SNAP adds 8 bytes.
    assert analyse("atm/aal5/llc-snap/ipv4").mtu == 9180
    for size in (576, 1500, 9180):
        report = analyse("atm/aal5/llc-snap/ipv4", size=size)
        cells = math.ceil((size + 8 + 8) / 48)
        assert report.datagram.cells == cells
        assert report.datagram.wire_bytes == cells * 53
        assert report.datagram.fragments == 1


def test_vc_mux_at_the_aal5_limit():
    # RFC 2684 §6.1 VC multiplexing adds no header, so IPv4 (RFC 791: at most 65,535
    # octets) fills the whole AAL5 SDU of ITU-T I.363.5 (at most 65,535 octets). The
    # searches for the MSS and the UDP payload probe sizes above that limit, which AAL5
    # refuses to encode: the analysis must treat them as not fitting (it used to raise).
    stack = "atm/aal5/vc-mux(mtu=65535)/ipv4/tcp"
    report = analyse(stack, size=65535)
    assert report.mtu == 65535
    assert report.tcp_mss == 65535 - 20 - 20
    assert report.udp_max_payload == 65535 - 20 - 8
    cells = math.ceil((65535 + 8) / 48)
    assert cells == 1366
    assert report.datagram.cells == cells
    assert report.datagram.wire_bytes == cells * 53
    done = subprocess.run([sys.executable, "-m", "qoslab", "mtu", stack], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr


def test_slip_bare_ack_on_the_line():
    # Seed 004: a 40-byte TCP acknowledgement over SLIP on an 8N1 line. RFC 1055: an END
    # before and after the packet, each END or ESC inside escaped into two bytes;
    # 8N1 sends 10 bits per byte (start, 8 data, stop).
    report = analyse("serial(8n1)/slip/ipv4/tcp", size=40)
    datagram = report.datagram_bytes
    assert len(datagram) == 40
    version_ihl, _, total_length = struct.unpack("!BBH", datagram[:4])
    assert version_ihl == 0x45 and total_length == 40 and datagram[9] == 6
    flags = datagram[20 + 13]
    assert flags & 0x10 and not flags & 0x07  # ACK, no SYN/FIN/RST
    escapes = sum(1 for b in datagram if b in (0xC0, 0xDB))
    line_bytes = 1 + 40 + escapes + 1
    assert report.datagram.wire_bytes == line_bytes
    assert report.datagram.wire_bits == line_bytes * 10


def test_serial_format_changes_line_bits():
    # 7E1 is also 10 bits a character; 8N2 is 11.
    eight_n_two = analyse("serial(8n2)/slip/ipv4/tcp", size=40).datagram
    eight_n_one = analyse("serial(8n1)/slip/ipv4/tcp", size=40).datagram
    assert eight_n_two.wire_bytes == eight_n_one.wire_bytes
    assert eight_n_two.wire_bits == eight_n_one.wire_bytes * 11


def test_ethernet_efficiency_full_size_and_minimum_frame():
    report = analyse("ethernet/ipv4/tcp")
    rows = {row["payload_bytes"]: row for row in report.efficiency}
    # 1460 bytes of TCP data: + TCP 20 + IPv4 20 + Ethernet 14 + FCS 4 + preamble/SFD 8 + IFG 12.
    assert rows[1460]["wire_bytes"] == 1460 + 40 + 18 + 20
    assert rows[1460]["efficiency_pct"] == pytest.approx(100 * 1460 / 1538, abs=0.01)
    # A 64-byte payload: 64 + 40 + 14 = 118 bytes, above the 60-byte minimum before FCS.
    assert rows[64]["wire_bytes"] == 64 + 40 + 18 + 20
    tiny = analyse("ethernet/ipv4/udp", size=29).datagram  # 1 byte of UDP data
    # IEEE 802.3 §3.2.8: padded to a 64-byte frame; + preamble/SFD 8 + IFG 12.
    assert tiny.wire_bytes == 64 + 20


def test_fragmentation_of_a_large_datagram():
    # RFC 791 §3.2: fragments carry multiples of 8 data bytes; 4000 bytes at MTU 1500 give
    # 1480 + 1480 + 1020 bytes of data, each with its own 20-byte header.
    d = analyse("ethernet/ipv4/udp", size=4000).datagram
    assert d.fragments == 3
    assert [len(f) for f in d.frames] == [1500 + 18, 1500 + 18, 1040 + 18]
    assert d.wire_bytes == sum(len(f) + 20 for f in d.frames)


def test_oversized_interface_in_a_tunnel_is_dropped_without_fragmentation():
    # Seed 002 §4: with the PPPoE MTU above what the VPN carries and OpenVPN's fragment
    # option off, full-size packets cannot be sent: Ethernet frames cannot be fragmented.
    report = analyse(SEED002_OVPN + "/ethernet/pppoe(mtu=1492)/ipv4/tcp", size=1492)
    assert report.datagram.dropped
    assert report.datagram.fragments == 0
    assert any("exceeds" in n for n in report.notes)


def test_openvpn_fragment_option_splits_instead():
    report = analyse(
        "ethernet/ipv4/udp/openvpn(cipher=none,auth=sha1,fragment=1400)/ethernet(mtu=1500)/pppoe(mtu=1492)/ipv4/tcp",
        size=1492,
    )
    d = report.datagram
    assert not d.dropped
    assert d.fragments == 2
    # Each UDP payload (the OpenVPN packet) is no larger than the fragment option.
    for frame in d.frames:
        udp_len = struct.unpack("!H", frame[14 + 20 + 4 : 14 + 20 + 6])[0]
        assert udp_len - 8 <= 1400


def test_json_contract(capsys):
    from qoslab.cli import app
    from typer.testing import CliRunner

    result = CliRunner().invoke(app, ["mtu", SEED002_OVPN + "/ethernet/pppoe/ipv4/tcp", "--json", "--size", "1000"])
    assert result.exit_code == 0, result.output
    record = json.loads(result.stdout)
    for key in ("stack", "layers", "interfaces", "mtu", "tcp_mss", "udp_max_payload", "datagram"):
        assert key in record
    assert {"name", "overhead_bytes", "fields"} <= set(record["layers"][0])
    assert {"name", "mtu"} <= set(record["interfaces"][0])
    assert {"bytes", "wire_bytes", "wire_bits", "fragments", "cells"} <= set(record["datagram"])
    assert record["mtu"] == 1426
