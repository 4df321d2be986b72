"""Sizes and values past what the formats and the core can hold (issue 20, first
"Found" bullet): they are refused with exit 2 and their place, never wrapped.

The limits come from the formats: an IPv4 datagram is at most 65,535 bytes (RFC 791
§3.1, a 16-bit Total Length), so after its 20-byte header and an 8-byte UDP (RFC 768)
or ICMP echo (RFC 792) header it carries at most 65,507 bytes; and from the core's
64-bit counters (rates in bit/s, seeds; times in ns, of which each value may use a
quarter so that a run's sums cannot overflow).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

SCENARIO = """[scenario]
name = "bounds"
seed = {seed}

[node.a]
role = "host"
address = "10.0.0.1/24"

[node.b]
role = "host"
address = "10.0.0.2/24"

[[link]]
type = "ethernet"
rate = "{rate}"
ends = ["a", "b"]

[[test]]
{test}
"""

PING = 'method = "ping"\nfrom = "a"\nto = "b"\ncount = 2\npayload = {payload}'
UDP = 'method = "udp.flow"\nfrom = "a"\nto = "b"\nrate = "1 Mbps"\nduration = "{duration}"\npayload = {payload}'
ECHO = 'method = "udp.echo"\nfrom = "a"\nto = "b"\ncount = 2\npayload = {payload}'


def qoslab(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "qoslab", *args], capture_output=True, text=True)


def write(tmp_path: Path, *, seed: str = "1", rate: str = "100 Mbps", test: str = PING.format(payload=56)) -> Path:
    path = tmp_path / "s.toml"
    path.write_text(SCENARIO.format(seed=seed, rate=rate, test=test))
    return path


def line_of(path: Path, needle: str) -> int:
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if needle in line)


def refused_at_check(path: Path, key: str, needle: str) -> str:
    """`check` and `run` both exit 2 with file:line of ``needle`` and ``key``."""
    for command in ("check", "run"):
        proc = qoslab(command, str(path))
        assert proc.returncode == 2, (command, proc.stdout, proc.stderr)
        assert "Traceback" not in proc.stderr and "panicked" not in proc.stderr
        assert f"{path}:{line_of(path, needle)}:" in proc.stderr, proc.stderr
        assert key in proc.stderr
    return proc.stderr


@pytest.mark.parametrize("payload", [65_508, 65_527, 70_000, 10**9])
@pytest.mark.parametrize("test", [PING, UDP, ECHO], ids=["ping", "udp.flow", "udp.echo"])
def test_payloads_past_one_ipv4_datagram_are_refused(tmp_path, test, payload):
    path = write(tmp_path, test=test.format(payload=payload, duration="1 s"))
    err = refused_at_check(path, "test[0].payload", "payload =")
    assert "at most 65,507 bytes" in err


def test_the_largest_ping_runs_and_comes_back_whole(tmp_path):
    # 65,507 data bytes: a 65,535-byte datagram, cut into 45 fragments of at most 1,480
    # data bytes (RFC 791 §3.2, offsets in 8-byte units) on the 1500-byte link and
    # reassembled at b, whose reply comes back the same way. Each fragment costs its
    # 20-byte header and 14 + 4 + 8 + 12 bytes of Ethernet on the wire (IEEE 802.3).
    path = write(tmp_path, test=PING.format(payload=65_507).replace("count = 2", "count = 3"))
    proc = qoslab("run", "--json", str(path))
    assert proc.returncode == 0, proc.stderr
    import json

    (record,) = json.loads(proc.stdout)["results"]
    m = record["metrics"]
    # The first request waits for ARP, whose queue (as Linux's) holds only a few of its
    # fragments: the later ones all come back.
    assert m["received"] >= m["sent"] - 1 >= 2
    data = 65_535 - 20
    frames = -(-data // 1480)
    wire_bytes = data + frames * (20 + 14 + 4 + 8 + 12)
    one_way_ms = wire_bytes * 8 / 100e6 * 1e3
    assert m["rtt_mean_ms"] == pytest.approx(2 * one_way_ms, rel=0.01)


@pytest.mark.parametrize(
    "where,value,key,needle",
    [
        ("rate", "1e30 bps", "link[0].rate", "rate ="),
        ("duration", "1e12 s", "test[0].duration", "duration ="),
        ("duration", "1e999999999 s", "test[0].duration", "duration ="),
        ("seed", "18446744073709551616", "scenario.seed", "seed ="),
    ],
)
def test_values_too_large_for_the_core_are_refused(tmp_path, where, value, key, needle):
    if where == "rate":
        path = write(tmp_path, rate=value)
    elif where == "duration":
        path = write(tmp_path, test=UDP.format(payload=1472, duration=value))
    else:
        path = write(tmp_path, seed=value)
    refused_at_check(path, key, needle)


def test_the_largest_seed_runs(tmp_path):
    path = write(tmp_path, seed=str(2**64 - 1))
    proc = qoslab("run", str(path))
    assert proc.returncode == 0, proc.stderr


@pytest.mark.parametrize("seed", [str(2**64), "-1"])
def test_seed_option_past_64_bits_is_a_usage_error(tmp_path, seed):
    proc = qoslab("run", str(write(tmp_path)), "--seed", seed)
    assert proc.returncode == 2
    assert "--seed" in proc.stderr and "Traceback" not in proc.stderr


def test_mtu_size_past_an_ipv4_datagram_is_refused():
    # It printed the cost of a 4,464-byte datagram (70,000 mod 65,536).
    proc = qoslab("mtu", "ethernet/ipv4/tcp", "--size", "70000")
    assert proc.returncode == 2
    assert "--size" in proc.stderr and "65535" in proc.stderr.replace(",", "")
    assert "Traceback" not in proc.stderr and "panicked" not in proc.stderr


def test_mtu_size_of_a_whole_ipv4_datagram_is_costed_whole():
    # 65,535 bytes over Ethernet: 45 fragments of at most 1,480 data bytes (RFC 791:
    # offsets in 8-byte units), each with its own 20-byte header; on the wire each
    # frame adds 14 + 4 (header, FCS) + 8 + 12 (preamble and SFD, gap).
    proc = qoslab("mtu", "ethernet/ipv4/tcp", "--size", "65535", "--json")
    assert proc.returncode == 0, proc.stderr
    import json

    cost = json.loads(proc.stdout)["datagram"]
    data = 65_535 - 20
    frames = -(-data // 1480)
    assert cost["fragments"] == frames and cost["bytes"] == 65_535
    ip_bytes = data + 20 * frames
    assert cost["wire_bytes"] == ip_bytes + frames * (14 + 4 + 8 + 12)
