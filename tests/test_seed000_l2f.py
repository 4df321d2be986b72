"""Seed 000 §3, Fig. 10: how the seed measured L2F over the wireless link, in the simulator
(examples/seed000_l2f_fig10.toml). IXIA port 1 sends raw frames to station A's wireless
adapter's own MAC from "any virtual MAC address"; station A's Windows XP bridge, its
adapters promiscuous, relays them to switch 2, which floods them to IXIA port 2, which
counts them by sniffing. The frames' bytes are checked against a frame built here from
the standards (Ethernet II, RFC 791, RFC 768, RFC 1071), the bridge's rule against IEEE
802.1D-2004 §7.5 (a frame for the bridge itself is not relayed), and the L2F light-load
latency against the receive-path parameters set on L3F rows."""

from __future__ import annotations

import struct
import tempfile
from pathlib import Path
from typing import Any

import pytest
from conftest import EXAMPLES
from qoslab.backends.sim import run_tests
from qoslab.plan.results_models import Results
from qoslab.scenario import loads_scenario
from test_seed000 import mbps

FIG10 = EXAMPLES / "seed000_l2f_fig10.toml"
VIRTUAL_MAC = bytes.fromhex("060000000001")
"""The stream's source address, as the example writes it."""
PAYLOAD = 1450 - 18 - 20 - 8
"""UDP payload of Table 4's 1450-byte frames (Ethernet header and FCS 18, IPv4 20, UDP 8)."""


def station_a_wlan_mac() -> bytes:
    """Station A's wireless adapter's MAC, from the lowering's documented rule
    (python/qoslab/lower/common.py ``mac_for``): 02, the node's index in three octets
    (a is the fourth node of the file: 3), the port's index plus one in two (wlan0 is
    its first port: its first link is the wlan)."""
    return bytes([0x02, 0, 0, 3, 0, 1])


def fig10(count: int = 5, *, a_promiscuous: bool = True, ixia2_promiscuous: bool = True) -> str:
    """Fig. 10's scenario with one udp.flow test: ``count`` 1450-byte frames, 10 per second."""
    text = FIG10.read_text()
    text = text[: text.index("[[test]]")]
    if not a_promiscuous:
        text = text.replace(
            "promiscuous = true                # Windows", "promiscuous = false               # Windows"
        )
    if not ixia2_promiscuous:
        text = text.replace(
            "promiscuous = true                # the IXIA", "promiscuous = false               # the IXIA"
        )
    return text + (
        "[[test]]\n"
        'method = "udp.flow"\nfrom = "ixia1"\nto = "ixia2"\n'
        'dst_mac = "a/wlan0"\nsrc_mac = "06:00:00:00:00:01"\n'
        f'payload = {PAYLOAD}\ngap = "100 ms"\ncount = {count}\n'
    )


def run(text: str, pcap: Path | None = None) -> tuple[dict[str, Any], Results]:
    path = Path(tempfile.mkdtemp()) / "fig10.toml"
    path.write_text(text)
    _, runs = run_tests(loads_scenario(text, str(path)), source=path, pcap_dir=pcap)
    return runs[0].records[0], runs[0].results


def pcap_frames(path: Path) -> list[bytes]:
    """The frames of a classic pcap file (the format's 24-byte header, then a 16-byte
    header before each record; microsecond or nanosecond magic, either byte order)."""
    data = path.read_bytes()
    magic = data[:4]
    order = "<" if magic in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1") else ">"
    frames, at = [], 24
    while at + 16 <= len(data):
        _, _, incl, _ = struct.unpack(order + "IIII", data[at : at + 16])
        frames.append(data[at + 16 : at + 16 + incl])
        at += 16 + incl
    return frames


def ones_complement_sum(header: bytes) -> int:
    """RFC 1071: the 16-bit one's complement sum of a header's words."""
    total = sum(struct.unpack(f"!{len(header) // 2}H", header))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return total


def test_a_frame_for_station_a_crosses_the_promiscuous_bridge_to_the_sniffing_port(tmp_path):
    record, _ = run(fig10(), tmp_path)
    assert (record["metrics"]["sent"], record["metrics"]["received"]) == (5, 5)
    udp = [f for f in pcap_frames(tmp_path / "test0" / "ixia2-eth0.pcap") if f[12:14] == b"\x08\x00" and f[23] == 17]
    assert len(udp) == 5
    for frame in udp:
        # Ethernet II as IXIA port 1 wrote it, unchanged by the AP (a 3-address From DS
        # frame keeps the source address), station A's bridge and the switches: to station
        # A's adapter, from the virtual MAC. 1450 bytes on the wire less the 4-byte FCS.
        assert frame[0:6] == station_a_wlan_mac() and frame[6:12] == VIRTUAL_MAC
        assert len(frame) == 1450 - 4
        ip = frame[14:34]
        # RFC 791: version 4, IHL 5, total length 20 + 8 + payload, protocol 17 (UDP),
        # from IXIA port 1's address to port 2's, a valid header checksum (RFC 1071).
        assert ip[0] == 0x45 and struct.unpack("!H", ip[2:4])[0] == 20 + 8 + PAYLOAD and ip[9] == 17
        assert ip[12:16] == bytes([192, 168, 1, 10]) and ip[16:20] == bytes([192, 168, 1, 20])
        assert ones_complement_sum(ip) == 0xFFFF
        # RFC 768: UDP length is its header and data.
        assert struct.unpack("!H", frame[38:40])[0] == 8 + PAYLOAD


def test_without_promiscuous_mode_the_frames_stop_where_the_standards_say():
    # IEEE 802.1D-2004 §7.5: a frame addressed to the bridge itself goes to the bridge's
    # own stack only; station A is no router, so its IP layer drops the datagram for
    # IXIA port 2's address.
    record, results = run(fig10(a_promiscuous=False))
    assert record["metrics"]["received"] == 0
    conservation = next(f for f in results.flows if f.id == 1).conservation
    assert conservation is not None
    drops = dict(conservation.drops)
    assert drops == {"192.168.1.20 is not an address of this host (IP forwarding off)": 5}
    # The bridge relays them, but a NIC not in promiscuous mode keeps only its own MAC's.
    record, results = run(fig10(ixia2_promiscuous=False))
    assert record["metrics"]["received"] == 0
    conservation = next(f for f in results.flows if f.id == 1).conservation
    assert conservation is not None
    drops = dict(conservation.drops)
    assert list(drops.values()) == [5]


def test_l2f_light_load_latency_comes_from_parameters_set_on_l3f_rows(monkeypatch):
    # Station A's receive path (adapter, interrupt, NDIS DPC) was calibrated on two L3F
    # points, never on an L2F one: the profile's note names them.
    from qoslab.data import cpu_profiles

    profiles = cpu_profiles()
    name = "pentium-m-1.6ghz"
    calibrated = profiles[name]
    notes = calibrated.calibration
    assert "L3F latency at 10 fps" in notes["rx_latency_ns_per_byte"] and "L2F" not in notes["rx_latency_ns_per_byte"]
    assert "L2F" not in notes["rx_latency_ns"]
    with_path = run(fig10(count=20))[0]["metrics"]["latency_ms"]
    monkeypatch.setitem(
        profiles, name, calibrated.model_copy(update={"rx_latency_ns": 0, "rx_latency_ns_per_byte": 0.0})
    )
    bare = run(fig10(count=20))[0]["metrics"]["latency_ms"]
    # Station A's receive path delays each frame once, by its per-frame part and its
    # per-byte part over the frame the port hands over (1450 bytes less the FCS).
    added_ms = (calibrated.rx_latency_ns + calibrated.rx_latency_ns_per_byte * (1450 - 4)) / 1e6
    assert with_path - bare == pytest.approx(added_ms, abs=1e-3)
    # The prediction, beside the seed's L2F row (Table 4, 10 fps: 3.30 ms, ±20 %).
    assert with_path == pytest.approx(3.30, rel=0.20)


def test_l2f_plateau_is_the_dcf_computation():
    # Above the knee L2F carries what the AP's DCF carries to station A: the computation
    # of tests/test_seed000.py from the standard's timing (short preamble, WEP), not a row.
    text = fig10()
    text = text[: text.index("[[test]]")] + (
        '[[test]]\nmethod = "rfc2544.overload"\nfrom = "ixia1"\nto = "ixia2"\n'
        'dst_mac = "a/wlan0"\nsrc_mac = "06:00:00:00:00:01"\n'
        'frame_sizes = [1450]\nframe_rates = [1000]\nduration = "3 s"\n'
    )
    record, _ = run(text)
    assert record["metrics"]["throughput_mbps"] == pytest.approx(mbps(1450, 96), rel=0.02)
