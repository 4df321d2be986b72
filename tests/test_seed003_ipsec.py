"""Seed 003 (1-3 simultaneous IPsec VPNs from a slow 802.11b client, UDP echo) through
``examples/seed003_ipsec.toml``: it runs under ``qoslab run``; the fragmentation knee is
1472 bytes of UDP payload in clear and 1438 with transport-mode ESP (3DES-CBC +
HMAC-SHA1-96, seed 003 §4.1); the client's CPU busy time grows with the VPNs carrying
traffic by what the profile's per_esp_packet / per_byte_esp say.
"""

from __future__ import annotations

import re
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from qoslab.backends.sim import lower_network, run_tests, simulate
from qoslab.scenario import load_scenario

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "seed003_ipsec.toml"
CLIENT = bytes([192, 0, 2, 10])


def without_tunnels(text: str) -> str:
    return re.sub(r"\[\[tunnel\]\]\n(?:[^\[\n][^\n]*\n)*\n?", "", text)


def write(tmp_path: Path, text: str, name: str = "seed003.toml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def pcap_packets(path: Path) -> list[bytes]:
    """The frames of a classic pcap file (24-byte header, 16-byte record headers)."""
    data = path.read_bytes()
    order = "<" if struct.unpack("<I", data[:4])[0] in (0xA1B2C3D4, 0xA1B23C4D) else ">"
    frames, at = [], 24
    while at < len(data):
        _, _, length, _ = struct.unpack(order + "IIII", data[at : at + 16])
        frames.append(data[at + 16 : at + 16 + length])
        at += 16 + length
    return frames


def client_packets(pcap: Path) -> list[bytes]:
    """IPv4 packets from the wireless client on the wired client's Ethernet port."""
    ipv4 = [f[14:] for f in pcap_packets(pcap) if f[12:14] == b"\x08\x00"]
    return [p for p in ipv4 if p[12:16] == CLIENT]


def test_the_example_runs_under_qoslab_run():
    proc = subprocess.run([sys.executable, "-m", "qoslab", "run", str(EXAMPLE)], capture_output=True, text=True, check=False, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr
    for name in ("vpn1", "vpn2", "vpn3"):
        assert name in proc.stdout + proc.stderr


def test_the_example_keeps_its_seed_comment():
    assert EXAMPLE.read_text().startswith("# Seed 003 (003_17c68763cd72f496.txt)")


@pytest.mark.parametrize(("tunnels", "payload", "pieces"), [(False, 1472, 1), (False, 1473, 2), (True, 1438, 1), (True, 1439, 2)])
def test_the_fragmentation_knee_is_1472_clear_and_1438_with_esp(tmp_path, tunnels, payload, pieces):
    text = EXAMPLE.read_text()
    if not tunnels:
        text = without_tunnels(text)
    text = text.replace("payload = 25", f"payload = {payload}").replace("count = 10000", "count = 20").replace('gap = "1 ms"', 'gap = "20 ms"')
    path = write(tmp_path, text)
    _, runs = run_tests(load_scenario(path), source=path, pcap_dir=tmp_path / "pcap")
    for i, run in enumerate(runs):
        metrics = run.records[0]["metrics"]
        assert metrics["loss_pct"] == 0.0, metrics
        # The echo datagrams (and their fragments); not the short learning ping.
        packets = [p for p in client_packets(next((tmp_path / "pcap" / f"test{i}").glob("wired-eth0*.pcap"))) if p[9] in (17, 50) and (len(p) > 200 or struct.unpack(">H", p[6:8])[0] & 0x3FFF)]
        assert len(packets) == 20 * pieces, f"test{i}: {len(packets)} packets"
        fragments = [p for p in packets if struct.unpack(">H", p[6:8])[0] & 0x3FFF]
        assert len(fragments) == (0 if pieces == 1 else len(packets))
        if tunnels:
            # Fragmentation after ESP: every piece is of the ESP datagram.
            assert {p[9] for p in packets} == {50}
            if pieces == 1:
                assert {len(p) for p in packets} == {20 + 8 + 8 + (8 + payload + 2 + 7) // 8 * 8 + 12} == {1496}
                # test[i] talks to port 7 + i and goes by vpn(i+1): SPI 0x1000 + 2i.
                assert {struct.unpack(">I", p[20:24])[0] for p in packets} == {0x1000 + 2 * i}
        else:
            assert {p[9] for p in packets} == {17}


def esp_len(ip_payload: int) -> int:
    """Transport-mode ESP with 3DES-CBC + HMAC-SHA1-96: header 8, IV 8, pad8(+2), ICV 12."""
    return 8 + 8 + -(-(ip_payload + 2) // 8) * 8 + 12


def test_cpu_busy_time_grows_with_the_vpns_carrying_traffic(tmp_path):
    payload, count, gap = 1000, 50, 20_000_000
    busy: dict[tuple[bool, int], float] = {}
    for tunnels in (False, True):
        text = EXAMPLE.read_text()
        if not tunnels:
            text = without_tunnels(text)
        net = lower_network(load_scenario(write(tmp_path, text)))
        w = net.node_index("wireless")
        dst = str(net.destination("wireless", "wired"))
        for k in (1, 2, 3):
            # One learning ping, then k echo flows at once, on ports 7, 8, 9: VPN 1..k.
            flows = [{"kind": "ping", "id": 0, "from": w, "to": dst, "count": 1, "interval_ns": 1_000_000_000, "payload": 56, "start_ns": 0}]
            flows += [
                {"kind": "udp-echo", "id": 1 + j, "from": w, "to": dst, "dst_port": 7 + j, "payload": payload, "count": count, "interval_ns": gap, "start_ns": 1_000_000_000}
                for j in range(k)
            ]
            results = simulate(net.with_flows(flows, 3_000_000_000))
            assert all(f["sent"] == f["received"] for f in results["flows"]), results["flows"]
            node = next(n for n in results["nodes"] if n["name"] == "wireless")
            busy[(tunnels, k)] = node["cpu_utilization"] * results["sim_time_ns"] / 1e9
    cpu = net.config["nodes"][w]["cpu"]
    hz, cycles = cpu["hz"], cpu["cycles"]
    assert (cpu["profile"], cycles["per_byte_esp"], cycles["per_esp_packet"]) == ("soho-router", 200.0, 4000)

    def cost(ip_payload: int) -> float:
        # One seal or open: the ESP work, and the extra bytes ESP adds copied to or from the NIC.
        return cycles["per_esp_packet"] + cycles["per_byte_esp"] * esp_len(ip_payload) + cycles["per_byte_copied"] * (esp_len(ip_payload) - ip_payload)

    ping = 2 * cost(8 + 56)  # the learning echo request sealed, its reply opened (vpn1)
    extra = {k: busy[(True, k)] - busy[(False, k)] for k in (1, 2, 3)}
    for k in (1, 2, 3):
        # Each datagram is sealed on the way out and its echo opened on the way back.
        expected = (k * count * 2 * cost(8 + payload) + ping) / hz
        assert extra[k] == pytest.approx(expected, rel=0.02), (k, extra, expected)
    assert extra[1] < extra[2] < extra[3]
    assert busy[(True, 1)] < busy[(True, 2)] < busy[(True, 3)]
