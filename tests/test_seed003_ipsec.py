"""Seed 003 (0-3 simultaneous IPsec VPNs from a slow 802.11b client, UDP echo) through
its example family ``examples/seed003_ipsec*.toml``: the files describe the seed's
setups; ``qoslab run`` executes their sweep, one record per point; the fragmentation
knee is 1472 bytes of UDP payload in clear and 1438 with transport-mode ESP (3DES-CBC +
HMAC-SHA1-96, seed 003 §4.1), both computed here from the RFCs; every tunnel carries its
own stream at once and reports it; the client's one CPU pays for all of them.

The seed's claims about throughput, CPU and loss are in test_seed003_study.py.
"""

from __future__ import annotations

import json
import re
import struct
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import pcap_packets
from qoslab.backends.sim import run_tests
from qoslab.data import cpu_profiles
from qoslab.scenario import load_scenario, loads_scenario
from qoslab.sweep import scenario_at, sweep_points

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
FAMILY = {
    0: EXAMPLES / "seed003_ipsec_0vpn.toml",
    1: EXAMPLES / "seed003_ipsec_1vpn.toml",
    2: EXAMPLES / "seed003_ipsec_2vpn.toml",
    3: EXAMPLES / "seed003_ipsec.toml",
}
CLIENT = bytes([192, 0, 2, 10])

# The RFCs' numbers, independently of the code.
MTU = 1500  # RFC 894 / RFC 1042: IPv4 over Ethernet and 802.11 (LLC/SNAP)
IPV4_HEADER = 20  # RFC 791 §3.1, no options
UDP_HEADER = 8  # RFC 768
ESP_HEADER = 8  # RFC 4303 §2: SPI and sequence number
DES_BLOCK = IV = 8  # RFC 2451 §2.3/§3: 3DES-CBC, 64-bit blocks, an explicit 8-byte IV
ICV = 12  # RFC 2404 §3: HMAC-SHA-1-96
TRAILER = 2  # RFC 4303 §2.4: Pad Length and Next Header


def esp_transport_len(udp_payload: int) -> int:
    """The IPv4 datagram of a UDP payload in transport-mode ESP: RFC 4303 §2.4 pads the
    UDP datagram plus the 2-byte trailer to a multiple of the cipher's block."""
    plaintext = UDP_HEADER + udp_payload + TRAILER
    padded = -(-plaintext // DES_BLOCK) * DES_BLOCK
    return IPV4_HEADER + ESP_HEADER + IV + padded + ICV


def knee(tunnels: int) -> int:
    """The largest UDP payload sent in one unfragmented datagram (RFC 791 §2.3)."""
    if tunnels == 0:
        return MTU - IPV4_HEADER - UDP_HEADER
    return max(p for p in range(MTU) if esp_transport_len(p) <= MTU)


def at(tunnels: int, **values):
    """Example ``tunnels`` at a point: test[0] fields by keyword."""
    return scenario_at(
        load_scenario(FAMILY[tunnels]), {f"test[0].{k}": v for k, v in values.items()}, source=FAMILY[tunnels]
    )


def test_the_knees_follow_from_the_rfcs():
    assert knee(0) == 1472 and knee(1) == 1438  # seed 003 §4.1's two numbers
    assert esp_transport_len(1438) == 1496 and esp_transport_len(1439) == 1504


@pytest.mark.parametrize("tunnels", [0, 1, 2, 3])
def test_each_file_of_the_family_describes_its_setup(tunnels):
    path = FAMILY[tunnels]
    assert path.read_text().startswith("# Seed 003 (003_17c68763cd72f496.txt)")
    sc = load_scenario(path)
    assert [t.name for t in sc.tunnel] == [f"vpn{k + 1}" for k in range(tunnels)]
    (test,) = sc.test
    # One echo stream per VPN (one in clear for the baseline), each selected by its port.
    assert (test.method, test.streams, test.count) == ("udp.echo", max(1, tunnels), 10_000)
    assert [t.selector.port for t in sc.tunnel] == [test.port + k for k in range(tunnels)]
    assert {(t.mode, t.protocol, t.cipher, t.auth) for t in sc.tunnel} <= {
        ("transport", "esp", "3des-cbc", "hmac-sha1-96")
    }
    assert sc.node["wireless"].cpu == "pentium-ii-300mhz" and cpu_profiles()["pentium-ii-300mhz"].hz == 300_000_000
    # The seed's design: 25 ... 1600 bytes (with both knees and the bytes after them), 1 and 5 ms.
    swept = [p.values for p in sweep_points(sc)]
    values = {p["test[0].payload"] for p in swept}
    assert min(values) == 25 and max(values) == 1600 and {1438, 1439, 1472, 1473} <= values
    assert {p["test[0].gap"] for p in swept} == {"1 ms", "5 ms"}
    assert len(swept) == 2 * len(values)


@pytest.mark.parametrize(("tunnels", "above"), [(0, 0), (0, 1), (1, 0), (1, 1), (3, 0), (3, 1)])
def test_the_fragmentation_knee(tmp_path, tunnels, above):
    payload = knee(tunnels) + above
    count = 20
    _, runs = run_tests(at(tunnels, payload=payload, count=count, gap="20 ms"), pcap_dir=tmp_path)
    (record,) = runs[0].records
    assert record["metrics"]["loss_pct"] == 0.0, record["metrics"]
    frames = pcap_packets(next(tmp_path.glob("test0/wired-eth0*.pcap")))
    # The client's echo datagrams (and their fragments), not the short learning ping.
    packets = [f[14:] for f in frames if f[12:14] == b"\x08\x00" and f[26:30] == CLIENT and f[14 + 9] in (17, 50)]
    streams = max(1, tunnels)
    assert len(packets) == streams * count * (1 + above)
    fragmented = [p for p in packets if struct.unpack(">H", p[6:8])[0] & 0x3FFF]
    assert len(fragmented) == above * len(packets)
    if tunnels:
        # Fragmentation after ESP (RFC 4303 §3.1.1): every piece is of the ESP datagram.
        assert {p[9] for p in packets} == {50}
        if not above:
            assert {len(p) for p in packets} == {esp_transport_len(payload)}
            # Stream k goes to port 7 + k, which vpn(k+1)'s selector takes: SPI 0x1000 + 2k.
            spis = sorted({struct.unpack(">I", p[20:24])[0] for p in packets})
            assert spis == [0x1000 + 2 * k for k in range(tunnels)]
    else:
        assert {p[9] for p in packets} == {17}


def test_every_tunnel_carries_its_stream_at_once_and_reports_it():
    count, payload = 100, 1000
    _, runs = run_tests(at(3, payload=payload, count=count, gap="20 ms"))
    (record,) = runs[0].records
    assert [s["port"] for s in record["streams"]] == [7, 8, 9]
    assert all((s["sent"], s["forward_received"], s["received"]) == (count, count, count) for s in record["streams"])
    assert (record["metrics"]["sent"], record["metrics"]["received"]) == (3 * count, 3 * count)
    esp_bytes = esp_transport_len(payload) - IPV4_HEADER  # what the SA counts: after the IPv4 header
    rows = {(r["node"], r["name"]): r for r in record["ipsec"]}
    for k in range(3):
        client, server = rows[("wireless", f"vpn{k + 1}")], rows[("wired", f"vpn{k + 1}")]
        # The learning ping is ICMP: no UDP selector takes it, so each SA carries its stream only.
        assert (client["sealed_packets"], client["sealed_bytes"]) == (count, count * esp_bytes)
        assert (client["opened_packets"], client["opened_bytes"], client["failed"]) == (count, count * esp_bytes, 0)
        assert (server["opened_packets"], server["sealed_packets"]) == (count, count)
        assert (client["spi_out"], server["spi_in"]) == (0x1000 + 2 * k, 0x1000 + 2 * k)
    # The streams send at the same instants: their datagrams queue for the one CPU, so
    # the second and third wait for the seals before them.
    fastest = [s["rtt_min_ms"] for s in record["streams"]]
    assert fastest[0] < fastest[1] < fastest[2], fastest


def test_the_three_tunnels_are_charged_to_the_one_cpu_over_the_test():
    """Busy time over the test's traffic (the CPU window), with and without ESP: the
    difference is each stream's datagrams sealed and their echoes opened, at the
    profile's per_esp_packet + per_byte_esp (and the bytes ESP adds copied), by k."""
    count, payload, gap_ms = 50, 1000, 20
    profile = cpu_profiles()["pentium-ii-300mhz"]
    c = profile.cycles
    esp = esp_transport_len(payload) - IPV4_HEADER
    added = esp_transport_len(payload) - (IPV4_HEADER + UDP_HEADER + payload)
    cost = c.per_esp_packet + c.per_byte_esp * esp + c.per_byte_copied * added
    busy = {}
    for tunnels in (1, 2, 3):
        for with_esp in (False, True):
            text = FAMILY[tunnels].read_text()
            if not with_esp:
                text = re.sub(r"\[\[tunnel\]\]\n(?:[^\[\n][^\n]*\n)*\n?", "", text)
            sc = scenario_at(
                loads_scenario(text),
                {"test[0].payload": payload, "test[0].count": count, "test[0].gap": f"{gap_ms} ms"},
            )
            _, runs = run_tests(sc)
            (record,) = runs[0].records
            assert record["metrics"]["loss_pct"] == 0.0
            node = next(n for n in runs[0].results.nodes if n.name == "wireless")
            busy[(tunnels, with_esp)] = node.cpu_utilization_window * count * gap_ms / 1e3
            assert record["metrics"]["cpu_util_pct"]["wireless"] == pytest.approx(
                100 * node.cpu_utilization_window, abs=1e-3
            )
            assert node.cpu_utilization_window > node.cpu_utilization  # the idle learning and drain are left out
    for k in (1, 2, 3):
        assert busy[(k, True)] - busy[(k, False)] == pytest.approx(k * count * 2 * cost / profile.hz, rel=0.01), k


def reduced(tmp_path: Path, tunnels: int) -> Path:
    """The example with a short sweep: 2 gaps x 2 payloads, 40 datagrams per stream."""
    text = FAMILY[tunnels].read_text().replace("count = 10000", "count = 40")
    text = re.sub(r'"test\[0\].payload" = \[[^\]]*\]', '"test[0].payload" = [100, 1438]', text)
    text = text.replace('"test[0].gap" = ["1 ms", "5 ms"]', '"test[0].gap" = ["5 ms", "20 ms"]')
    path = tmp_path / f"seed003_{tunnels}.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_qoslab_run_executes_the_sweep_one_record_per_point_in_a_fixed_order(tmp_path):
    path = reduced(tmp_path, 3)
    outs = []
    for _ in range(2):
        proc = subprocess.run(
            [sys.executable, "-m", "qoslab", "run", str(path), "--json"],
            capture_output=True,
            text=True,
            check=False,
            timeout=600,
        )
        assert proc.returncode == 0, proc.stderr[-2000:]
        assert "Traceback" not in proc.stderr
        outs.append(proc.stdout)
    assert outs[0] == outs[1], "same scenario and seed: the same bytes"
    out = json.loads(outs[0])
    # Grid order: the parameters as written, the last one fastest.
    order = [(r["sweep"]["test[0].gap"], r["sweep"]["test[0].payload"]) for r in out["results"]]
    assert order == [("5 ms", 100), ("5 ms", 1438), ("20 ms", 100), ("20 ms", 1438)]
    assert [r["point"] for r in out["results"]] == [0, 1, 2, 3]
    for r in out["results"]:
        assert r["parameters"]["payload_bytes"] == r["sweep"]["test[0].payload"]
        assert r["parameters"]["gap_ms"] == float(r["sweep"]["test[0].gap"].split()[0])
        m = r["metrics"]
        assert m["sent"] == 3 * 40 and set(m["cpu_util_pct"]) == {"wireless", "wired"}
        assert {
            "loss_forward_pct",
            "loss_reverse_pct",
            "rtt_mean_ms",
            "throughput_mbps",
            "throughput_two_way_mbps",
        } <= set(m)
        assert sorted((t["node"], t["name"]) for t in r["ipsec"]) == sorted(
            (n, f"vpn{k}") for n in ("wireless", "wired") for k in (1, 2, 3)
        )
    assert {n["point"] for n in out["nodes"]} == {0, 1, 2, 3}
    wireless = [n for n in out["nodes"] if n["name"] == "wireless"]
    assert all(n["cpu_util_test_pct"] > n["cpu_util_pct"] and len(n["ipsec"]) == 3 for n in wireless)
    # The human summary names every point.
    assert all(f"point {i}/4" in proc.stderr for i in range(1, 5))


def test_qoslab_run_without_a_sweep_shows_the_tunnels_and_the_cpu_over_the_test(tmp_path):
    text = FAMILY[2].read_text().replace("count = 10000", "count = 30")
    text = text[: text.index("[sweep]")]
    path = tmp_path / "two.toml"
    path.write_text(text, encoding="utf-8")
    proc = subprocess.run(
        [sys.executable, "-m", "qoslab", "run", str(path), "--json"],
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "IPsec tunnels" in proc.stderr and "cpu (test)" in proc.stderr
    out = json.loads(proc.stdout)
    (record,) = out["results"]
    assert [s["port"] for s in record["streams"]] == [7, 8]
    wireless = next(n for n in out["nodes"] if n["name"] == "wireless")
    assert [t["name"] for t in wireless["ipsec"]] == ["vpn1", "vpn2"] and wireless["cpu_util_test_pct"] is not None
