"""Path MTU through `qoslab run`: the black-hole example stalls with Linux's defaults and
completes with ``mtu_probing = 1``; a router that does its job sends ICMP
"fragmentation needed" that tshark dissects with the next-hop MTU; the new keys lower
as the simulator takes them and bad values are refused with exit code 2."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from qoslab.backends.sim import lower_network, run_tests
from qoslab.errors import InputError
from qoslab.lower.lowered import plan_json
from qoslab.methods import plan_test
from qoslab.scenario import loads_scenario

EXAMPLES = Path(__file__).parent.parent / "examples"
EXAMPLE = EXAMPLES / "pmtu_blackhole.toml"
TSHARK = shutil.which("tshark")
NARROW = 1400
"""The MTU of the example's middle link."""


def qoslab(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "qoslab", *args], capture_output=True, text=True, check=False, timeout=600
    )


def rfc4821_search(low: int, high: int, fits: int, threshold: int = 8) -> int:
    """Linux's probing search (RFC 4821 §7.2-7.6): probe the middle until the range is
    under ``threshold``; a probe passes when it is at most ``fits``."""
    while high - low >= threshold:
        probe = (low + high) // 2
        if probe <= fits:
            low = probe
        else:
            high = probe - 1
    return low


def test_the_black_hole_stalls_and_mtu_probing_completes():
    proc = qoslab("run", str(EXAMPLE), "--json")
    assert proc.returncode == 0, proc.stderr
    results = json.loads(proc.stdout)["results"]
    stuck, probing = (r["metrics"] for r in results)
    # Linux defaults: the handshake works (RTT measured), no data byte arrives.
    assert stuck["srtt_ms"] is not None
    assert stuck["bytes_received"] == 0 and not stuck["completed"] and stuck["stalled"]
    assert stuck["too_big_dropped_silently"] > 0 and stuck["frag_needed_sent"] == 0
    assert stuck["path_mtu_bytes"] == 1500, "nothing told the sender"
    # tcp_mtu_probing = 1: black hole detection, then the search from tcp_base_mss.
    assert probing["completed"] and probing["bytes_received"] == 4_000_000 and not probing["stalled"]
    assert probing["black_holes_detected"] >= 1
    # tcp_base_mss 1024 plus 20 (IPv4) + 20 (TCP) + 12 (timestamps) up to 1500.
    assert probing["path_mtu_bytes"] == rfc4821_search(1024 + 52, 1500, NARROW)
    # The stall lasts Linux's detection time: (2^(tcp_retries1 + 1) - 1) x TCP_RTO_MIN.
    assert 3.0 <= probing["longest_stall_s"] < 5.0
    # The human report says it too.
    human = qoslab("run", str(EXAMPLE)).stderr
    assert "stalled" in human and "PMTU black hole" in human


def _with_working_router(tmp_path: Path, extra_test: str) -> Path:
    text = EXAMPLE.read_text().replace('frag_needed = "silent"', 'frag_needed = "mtu"')
    text = text[: text.index("[[test]]")] + extra_test
    path = tmp_path / "pmtu.toml"
    path.write_text(text)
    return path


def test_rfc1191_learns_the_narrow_link_in_one_round_trip(tmp_path):
    path = _with_working_router(tmp_path, '[[test]]\nmethod = "tcp.transfer"\nfrom = "a"\nto = "b"\nbytes = "1 MB"\n')
    proc = qoslab("run", str(path), "--json")
    assert proc.returncode == 0, proc.stderr
    m = json.loads(proc.stdout)["results"][0]["metrics"]
    assert m["completed"] and m["path_mtu_bytes"] == NARROW
    assert m["frag_needed_received"] >= 1 and m["frag_needed_sent"] >= m["frag_needed_received"]
    assert m["mss_bytes"] == NARROW - 20 - 20 - 12
    assert m["timeouts"] == 0


@pytest.mark.skipif(TSHARK is None and not os.environ.get("QOSLAB_REQUIRE_TSHARK"), reason="tshark not installed")
def test_tshark_dissects_the_frag_needed_with_the_next_hop_mtu(tmp_path):
    test = '[[test]]\nmethod = "udp.flow"\nfrom = "a"\nto = "b"\npayload = 1472\ndont_fragment = true\ncount = 3\ngap = "10 ms"\n'
    path = _with_working_router(tmp_path, test)
    scenario = loads_scenario(path.read_text(), source=str(path))
    _, runs = run_tests(scenario, source=path, pcap_dir=tmp_path / "pcap")
    assert runs[0].records[0]["metrics"]["received"] == 0
    pcap = tmp_path / "pcap" / "test0" / "a-eth0.pcap"
    proc = subprocess.run(
        [
            TSHARK or "tshark",
            "-n",
            "-r",
            str(pcap),
            "-Y",
            "icmp.type == 3 && icmp.code == 4",
            "-T",
            "fields",
            "-e",
            "icmp.mtu",
            "-e",
            "icmp.checksum.status",
            "-e",
            "ip.dst",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    rows = [line.split("\t") for line in proc.stdout.splitlines() if line]
    assert rows, "no ICMP fragmentation needed in the capture"
    for mtu, checksum, dst in rows:
        assert int(mtu) == NARROW
        assert checksum == "1", "tshark verifies the ICMP checksum (1 = good)"
        # The ICMP goes to a; the header it quotes is a's datagram to b.
        assert dst.split(",") == ["10.0.1.1", "10.0.3.1"]


def test_the_new_keys_lower_to_the_simulator():
    text = EXAMPLE.read_text().replace(
        'frag_needed = "silent"', 'frag_needed = "zero-mtu"\nblock_icmp_unreachable = true'
    )
    text += '\n[[test]]\nmethod = "udp.flow"\nfrom = "a"\nto = "b"\nrate = "1 Mbps"\ndont_fragment = true\n'
    scenario = loads_scenario(text)
    net = lower_network(scenario)
    r1 = plan_json(net.config)["nodes"][net.node_index("r1")]
    assert (r1["pmtu"]["frag_needed"], r1["pmtu"]["filter_icmp_unreachable"]) == ("zero-mtu", True)
    # The rest of PmtuConfig is written out with the plan's defaults (Linux's values).
    rest = {k: v for k, v in r1["pmtu"].items() if k not in ("frag_needed", "filter_icmp_unreachable")}
    assert rest == {
        "icmp_ratelimit_ns": 1_000_000_000,
        "icmp_burst": 6,
        "rate_limit_frag_needed": False,
        "expires_ns": 600_000_000_000,
        "min_pmtu": 552,
    }
    assert plan_json(net.config)["nodes"][net.node_index("a")]["pmtu"]["frag_needed"] == "mtu"
    tcp = plan_test(net, 1).flows[0].tcp.model_dump(mode="json", exclude_unset=True)
    assert (tcp["pmtu_discovery"], tcp["mtu_probing"], tcp["base_mss"]) == (True, 1, 1024)
    udp = [f for f in plan_test(net, 2).flows if f.kind == "udp"][0]
    assert udp.dont_fragment is True


@pytest.mark.parametrize(("key", "value"), [("frag_needed", '"sometimes"'), ("mtu_probing", "3")])
def test_bad_values_are_refused(tmp_path, key, value):
    text = EXAMPLE.read_text()
    if key == "frag_needed":
        text = text.replace('frag_needed = "silent"', f"frag_needed = {value}")
    else:
        text = text.replace("mtu_probing = 1", f"mtu_probing = {value}")
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(InputError):
        loads_scenario(text, source=str(path))
    proc = qoslab("run", str(path))
    assert proc.returncode == 2
    assert key in proc.stderr and "Traceback" not in proc.stderr
