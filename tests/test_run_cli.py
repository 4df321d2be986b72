"""`qoslab run` and `qoslab reach`: arguments, bad input, the JSON contract, seed 000's answers.

The end-to-end tests run the real simulator (``qoslab._core.simulate``). The others
need no simulator: argument handling and bad input stop before a run, and the
results-to-records arithmetic is checked on a results document of the simulator's
documented shape with numbers computed here.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import BAD, EXAMPLES
from qoslab.backends.sim import lower_network
from qoslab.methods import plan_test
from qoslab.plan import RESULTS_SCHEMA
from qoslab.plan.results_models import Results
from qoslab.report.terminal import death_points, render_reach
from qoslab.scenario import load_scenario
from rich.console import Console

UNIT_SUFFIXES = ("_mbps", "_ms", "_pct", "_fps", "_bytes", "_s")
COUNTS = {"sent", "received", "lost", "count", "saturate", "destination"}


def qoslab(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "qoslab", *args], capture_output=True, text=True, check=False, timeout=600
    )


TWO_HOSTS = """
[scenario]
name = "two hosts through an L3F bridge"
seed = 7
[node.ws1]
role = "host"
address = "192.168.1.100/24"
[node.a]
role = "bridge"
forwarding = "l3f"
address = "192.168.1.101/24"
cpu = "pentium-m-1.6ghz"
[node.ws2]
role = "host"
address = "192.168.1.102/24"
[[link]]
type = "ethernet"
rate = "100 Mbps"
ends = ["ws1", "a"]
[[link]]
type = "ethernet"
rate = "100 Mbps"
ends = ["a", "ws2"]
"""

UDP_TEST = """
[[test]]
method = "udp.flow"
from = "ws1"
to = "ws2"
payload = 1472
rate = "12.144 Mbps"
duration = "1 s"
"""


def scenario_file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "scenario.toml"
    path.write_text(text)
    return path


# --------------------------------------------------------------------------- arguments


@pytest.mark.parametrize("command", ["run", "reach"])
def test_help_has_an_example(command):
    proc = qoslab(command, "--help")
    assert proc.returncode == 0
    assert "Example" in proc.stdout and f"qoslab {command}" in proc.stdout


@pytest.mark.parametrize("command", ["run", "reach"])
def test_missing_argument_is_a_usage_error(command):
    proc = qoslab(command)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr


def test_negative_seed_is_a_usage_error():
    proc = qoslab("run", str(EXAMPLES / "seed000_ics.toml"), "--seed", "-1")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr


@pytest.mark.parametrize("command", ["run", "reach"])
def test_missing_file_exits_2(command, tmp_path):
    proc = qoslab(command, str(tmp_path / "nope.toml"))
    assert proc.returncode == 2
    assert "no such file" in proc.stderr and "Traceback" not in proc.stderr


@pytest.mark.parametrize("command", ["run", "reach"])
@pytest.mark.parametrize("bad", ["unknown_node.toml", "syntax_error.toml", "bad_unit.toml"])
def test_bad_scenario_exits_2_without_traceback(command, bad):
    proc = qoslab(command, str(BAD / bad))
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert re.search(rf"{re.escape(bad)}:\d+(:\d+)?:", proc.stderr)
    assert proc.stdout == ""


def test_unknown_cpu_profile_exits_2_at_its_line(tmp_path):
    path = scenario_file(tmp_path, TWO_HOSTS.replace('"pentium-m-1.6ghz"', '"athlon"') + UDP_TEST)
    line = next(i for i, text in enumerate(path.read_text().splitlines(), 1) if "athlon" in text)
    proc = qoslab("run", str(path))
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert f"scenario.toml:{line}:" in proc.stderr and "node.a.cpu" in proc.stderr
    assert "pentium-m-1.6ghz" in proc.stderr  # the profiles are listed


def test_no_test_to_run_exits_2(tmp_path):
    proc = qoslab("run", str(scenario_file(tmp_path, TWO_HOSTS)))
    assert proc.returncode == 2 and "no [[test]]" in proc.stderr and "qoslab reach" in proc.stderr


def test_lane_client_without_les_exits_2(tmp_path):
    # LAN emulation runs; a client whose ELAN no lane-server serves is bad input.
    text = (
        TWO_HOSTS
        + '[node.les]\nrole = "lane-server"\nelans = ["a"]\n[[link]]\ntype = "atm"\nends = ["ws1", "les"]\nelan = "b"\n'
        + UDP_TEST
    )
    path = scenario_file(tmp_path, text)
    line = next(i for i, t in enumerate(path.read_text().splitlines(), 1) if t == 'elan = "b"')
    proc = qoslab("run", str(path))
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert f"scenario.toml:{line}:" in proc.stderr and ".elan" in proc.stderr and "no LES" in proc.stderr


# --------------------------------------------------------------------------- records, no simulator


def results_doc(flows: list[dict], nodes: list[str], drop_log: list[dict] | None = None) -> Results:
    """A results document of the shape qoslab._core.simulate returns (every field
    schema/results.schema.json requires; the flows' counters not given are 0), typed."""
    flow_defaults = {"duplicates": 0, "drained": 0, "late": 0, "rtt_ns": [], "receive_interval_ns": 1_000_000_000}
    node_counters = ("forwarded", "frag_needed_sent", "frag_needed_silent", "icmp_filtered", "icmp_rate_limited")
    doc = {
        "schema": RESULTS_SCHEMA,
        "sim_time_ns": 5_000_000_000,
        "events": 1,
        "flows": [{**flow_defaults, **f} for f in flows],
        "links": [],
        "nodes": [
            {
                "name": n,
                "role": "host",
                "cpu_profile": "none",
                "cpu_utilization": 0.25,
                "cpu_utilization_window": None,
                "cpu_drops": 0,
                "arp_table": [],
                "l3f_table": [],
                "bridge_table": [],
                "ipsec": [],
                "drops": {},
                **dict.fromkeys(node_counters, 0),
            }
            for n in nodes
        ],
        "drop_log": drop_log or [],
    }
    return Results.model_validate(doc)


def test_udp_records_count_frames_as_rfc2544(tmp_path):
    path = scenario_file(tmp_path, TWO_HOSTS + UDP_TEST)
    net = lower_network(load_scenario(path))
    plan = plan_test(net, 0)
    udp = next(f for f in plan.flows if f.kind == "udp")
    received = 990
    flows = [
        {
            "id": udp.id,
            "kind": "udp",
            "sent": 1000,
            "received": received,
            "lost": 10,
            "bytes_received": received * 1472,
            "first_rx_ns": 1,
            "last_rx_ns": 2,
            "throughput_bps": 0.0,
            "drained": 0,
            "late": 0,
            # The arrivals spanned less than the 1 s sending interval: the rates are over it.
            "receive_interval_ns": 1_000_000_000,
            "latency_ns": {
                "min": 1_000_000,
                "mean": 2_500_000,
                "p50": 2_000_000,
                "p90": 3_000_000,
                "p99": 4_000_000,
                "max": 5_000_000,
            },
            "jitter_ns": 250_000.0,
        },
    ]
    (record,) = plan.records(results_doc(flows, ["ws1", "a", "ws2"]))
    assert (record["test"], record["from"], record["to"]) == ("udp.flow", "ws1", "ws2")
    assert record["parameters"]["frame_bytes"] == 1518
    m = record["metrics"]
    # 990 frames of 1518 bytes in the 1-second trial
    assert m["throughput_mbps"] == pytest.approx(990 * 1518 * 8 / 1e6)
    assert m["goodput_mbps"] == pytest.approx(990 * 1472 * 8 / 1e6)
    assert m["loss_pct"] == pytest.approx(1.0)
    assert m["latency_ms"] == pytest.approx(2.5) and m["latency_p99_ms"] == pytest.approx(4.0)
    assert m["jitter_ms"] == pytest.approx(0.25)
    assert m["cpu_util_pct"] == {"a": pytest.approx(25.0)}  # only the node whose CPU is modelled


def test_ping_records_rtt_like_ping():
    path = EXAMPLES / "seed000_ics.toml"
    net = lower_network(load_scenario(path))
    plan = plan_test(net, 0)
    (flow,) = plan.flows
    rtts = [3_000_000, 4_000_000, 5_000_000]
    doc = results_doc(
        [
            {
                "id": flow.id,
                "kind": "ping",
                "sent": 10,
                "received": 3,
                "lost": 7,
                "bytes_received": 168,
                "first_rx_ns": 1,
                "last_rx_ns": 2,
                "throughput_bps": 0.0,
                "latency_ns": None,
                "jitter_ns": None,
                "rtt_ns": rtts,
            }
        ],
        ["ap", "ws1", "a", "ws2"],
    )
    (record,) = plan.records(doc)
    m = record["metrics"]
    assert m["loss_pct"] == pytest.approx(70.0)
    assert (m["rtt_min_ms"], m["rtt_mean_ms"], m["rtt_max_ms"]) == (3.0, 4.0, 5.0)
    assert m["rtt_mdev_ms"] == pytest.approx((2 / 3) ** 0.5)  # Linux ping's mdev: population deviation
    assert record["parameters"]["destination"] == "192.168.1.100"


def test_reach_report_names_where_packets_die():
    reason = "station adapter sends only 3-address frames from its own MAC (802.11 Table 9-26 case 01): frame from 02:00:00:03:00:01 dropped"
    log = [
        {"time_ns": 2_000_000, "node": "a", "port": "wlan0", "reason": reason, "flow": 0, "summary": "ARP reply"},
        {"time_ns": 3_000_000, "node": "a", "port": "wlan0", "reason": reason, "flow": 0, "summary": "ARP reply"},
        {"time_ns": 4_000_000, "node": "ap", "port": None, "reason": "other flow", "flow": 9, "summary": ""},
    ]
    points = death_points(results_doc([], ["a"], log), 0)
    assert points == [
        {"node": "a", "port": "wlan0", "reason": reason, "first_ms": 2.0, "summary": "ARP reply", "count": 2}
    ]
    console = Console(record=True, width=200)
    pairs = [
        {
            "from": "ws2",
            "to": "ws1",
            "to_address": "192.168.1.100",
            "sent": 3,
            "received": 0,
            "reachable": False,
            "rtt_ms": [],
            "drops": points,
        },
        {
            "from": "ws1",
            "to": "ws2",
            "to_address": "192.168.1.102",
            "sent": 3,
            "received": 3,
            "reachable": True,
            "rtt_ms": [1.0] * 3,
            "drops": [],
        },
    ]
    render_reach(console, ["ws1", "ws2"], pairs)
    text = console.export_text()
    assert "0/3" in text and "3/3" in text
    assert "dies at a/wlan0" in text and "Table 9-26 case 01" in text


# --------------------------------------------------------------------------- end to end (real simulator)


def records_have_units(records: list[dict]) -> None:
    for r in records:
        assert {"test", "from", "to", "parameters", "metrics"} <= set(r)
        for key, _value in r["metrics"].items():
            assert key in COUNTS or key.endswith(UNIT_SUFFIXES), key
            assert key == key.lower()


def test_run_json_contract_and_ics_directions():
    """Seed 000 §2.3: LAN2 reaches LAN1 through ICS; LAN1 cannot open a path into LAN2."""
    proc = qoslab("run", str(EXAMPLES / "seed000_ics.toml"), "--json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert {"scenario", "backend", "seed", "results"} <= set(doc)
    assert doc["backend"] == "sim" and doc["seed"] == 1
    records_have_units(doc["results"])
    out, back = doc["results"]
    assert (out["from"], out["to"], back["from"], back["to"]) == ("ws2", "ws1", "ws1", "ws2")
    assert out["metrics"]["received"] > 0
    assert back["metrics"]["received"] == 0
    assert any(n["arp_table"] for n in doc["nodes"])
    assert "ARP" in proc.stderr


def test_run_udp_below_capacity_loses_nothing(tmp_path):
    """1000 frames/s of 1518 bytes (12.144 Mb/s) over 100 Mb/s Ethernet: all arrive, at the offered rate."""
    proc = qoslab("run", str(scenario_file(tmp_path, TWO_HOSTS + UDP_TEST)), "--json")
    assert proc.returncode == 0, proc.stderr
    (record,) = json.loads(proc.stdout)["results"]
    m = record["metrics"]
    assert m["loss_pct"] == 0
    assert m["throughput_mbps"] == pytest.approx(12.144, rel=0.01)
    # two store-and-forward hops of a 1518-byte frame at 100 Mb/s: at least 2 × 121.44 us
    assert m["latency_min_ms"] >= 2 * 1518 * 8 / 100e6 * 1e3 - 1e-6


def test_run_is_deterministic_and_seed_changes_only_the_seed(tmp_path):
    path = str(scenario_file(tmp_path, TWO_HOSTS + UDP_TEST))
    first, second = qoslab("run", path, "--json"), qoslab("run", path, "--json")
    assert first.returncode == 0 and first.stdout == second.stdout
    other = qoslab("run", path, "--json", "--seed", "3")
    assert json.loads(other.stdout)["seed"] == 3


def test_run_writes_pcap(tmp_path):
    out = tmp_path / "pcap"
    proc = qoslab("run", str(scenario_file(tmp_path, TWO_HOSTS + UDP_TEST)), "--pcap", str(out))
    assert proc.returncode == 0, proc.stderr
    files = list(out.rglob("*.pcap*"))
    assert files and all(
        f.read_bytes()[:4] in (b"\xd4\xc3\xb2\xa1", b"\xa1\xb2\xc3\xd4", b"\x0a\x0d\x0d\x0a", b"\x4d\x3c\xb2\xa1")
        for f in files
    )


def test_reach_l3f_joins_both_segments():
    """Fig. 6: with L3F every node reaches every other."""
    proc = qoslab("reach", str(EXAMPLES / "seed000_l3f.toml"), "--json")
    assert proc.returncode == 0, proc.stderr
    pairs = json.loads(proc.stdout)["pairs"]
    assert len(pairs) == 4 * 3
    assert all(p["reachable"] for p in pairs), [p for p in pairs if not p["reachable"]]


def test_reach_l2f_station_fails_across_the_adapter_and_says_where():
    """Fig. 5: WS1 and WS2 cannot talk through an L2F bridge over a station adapter."""
    proc = qoslab("reach", str(EXAMPLES / "seed000_l2f_station.toml"), "--json")
    assert proc.returncode == 0, proc.stderr
    pairs = {(p["from"], p["to"]): p for p in json.loads(proc.stdout)["pairs"]}
    for pair in (("ws1", "ws2"), ("ws2", "ws1")):
        assert not pairs[pair]["reachable"]
        assert pairs[pair]["drops"], "the drop log says where the packets died"
    assert "dies at" in proc.stderr


def test_reach_l2f_wired_works():
    """§2.1: over two Ethernet adapters the L2F bridge works."""
    proc = qoslab("reach", str(EXAMPLES / "seed000_l2f_wired.toml"), "--json")
    assert proc.returncode == 0, proc.stderr
    assert all(p["reachable"] for p in json.loads(proc.stdout)["pairs"])
