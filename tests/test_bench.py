"""`qoslab bench`: arguments, the JSON record's shape, the scenarios' configurations.

No timing is asserted here, ever (DESIGN.md: speed is measured in benchmarks/). The
simulator and ns-3 are replaced by stand-ins where the shape is what is tested; the one
test that runs ns-3 needs the bench venv and skips without it.
"""

from __future__ import annotations

import ipaddress
import json
import os
import subprocess
import sys

import pytest
from qoslab import bench
from qoslab.errors import InputError
from qoslab.plan.models import SimConfig

SCENARIO_KEYS = {"name", "events", "wall_s", "events_per_s", "sim_time_s"}
COMPARISON_KEYS = {
    "name",
    "qoslab_wall_s",
    "ns3_wall_s",
    "speedup",
    "qoslab_throughput_mbps",
    "ns3_throughput_mbps",
    "throughput_diff_pct",
}


def run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "qoslab", *args],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, **(env or {})},
    )


# --- arguments ----------------------------------------------------------------------


def test_help_has_examples():
    proc = run("bench", "--help")
    assert proc.returncode == 0, proc.stderr
    assert "qoslab bench" in proc.stdout
    for option in ("--json", "--sim-seconds", "--with-ns3", "--only", "--repeat"):
        assert option in proc.stdout


def test_unknown_benchmark_is_bad_input():
    proc = run("bench", "--only", "wifi_80211x")
    assert proc.returncode == 2
    assert "wifi_80211x" in proc.stderr and "wifi_80211b_saturation" in proc.stderr
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize("seconds", ["0", "-1"])
def test_non_positive_sim_seconds_is_bad_input(seconds):
    proc = run("bench", "--only", "wire", "--sim-seconds", seconds)
    assert proc.returncode == 2
    assert "--sim-seconds" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_select_keeps_the_usual_order_and_splits_commas():
    assert bench.select(None) == list(bench.ALL_BENCHMARKS)
    assert bench.select(["ethernet_chain_10,wifi_80211b_saturation"]) == ["wifi_80211b_saturation", "ethernet_chain_10"]
    assert bench.select(["wire", "wire"]) == ["wire"]
    with pytest.raises(InputError):
        bench.select(["nope"])


# --- the record -----------------------------------------------------------------------


def fake_simulate(config_json: str, _options: object) -> str:
    """Stands in for _core.simulate: every UDP flow delivers 5 Mb/s of payload."""
    config = json.loads(config_json)
    seconds = (config["duration_ns"] - bench._ns(bench.WARMUP_S)) / 1e9
    flows = [flow_result(f["id"], round(5e6 / 8 * seconds)) for f in config["flows"]]
    return results_text(1000, config["duration_ns"], flows)


def flow_result(flow_id: int, bytes_received: int) -> dict:
    """A UDP flow's entry in the core's results (schema/results.schema.json)."""
    counts = dict.fromkeys(("sent", "received", "lost", "duplicates", "drained", "late"), 0)
    return {
        "id": flow_id,
        "kind": "udp",
        **counts,
        "bytes_received": bytes_received,
        "throughput_bps": 0.0,
        "first_rx_ns": None,
        "last_rx_ns": None,
        "receive_interval_ns": 0,
        "latency_ns": None,
        "jitter_ns": None,
        "rtt_ns": [],
    }


def results_text(events: int, sim_time_ns: int, flows: list[dict]) -> str:
    """The core's results JSON with ``flows`` and nothing else."""
    from qoslab.plan import RESULTS_SCHEMA

    empty = {"links": [], "nodes": [], "drop_log": []}
    return json.dumps({"schema": RESULTS_SCHEMA, "events": events, "sim_time_ns": sim_time_ns, "flows": flows, **empty})


def fake_ns3(name: str, seconds: float) -> dict:
    return {"name": name, "tool": "ns3", "sim_time_s": seconds, "wall_s": 2.0, "throughput_mbps": 4.0, "events": 10}


def test_record_shape_with_ns3_comparisons():
    names = ["wifi_80211b_saturation", "ethernet_chain_10"]
    report = bench.run(names, sim_seconds=0.01, with_ns3=True, simulate=fake_simulate, ns3_runner=fake_ns3)
    record = json.loads(json.dumps(report.to_json()))
    assert [s["name"] for s in record["scenarios"]] == names
    for s in record["scenarios"]:
        assert SCENARIO_KEYS <= set(s)
        assert s["events"] == 1000
        assert s["sim_time_s"] == pytest.approx(bench.WARMUP_S + 0.01)
        assert s["events_per_s"] == pytest.approx(1000 / s["wall_s"])
        assert s["throughput_mbps"] == pytest.approx(5.0, rel=1e-3)
    assert [c["name"] for c in record["comparisons"]] == names
    for c in record["comparisons"]:
        assert COMPARISON_KEYS <= set(c)
        assert c["speedup"] == pytest.approx(2.0 / c["qoslab_wall_s"])
        assert c["throughput_diff_pct"] == pytest.approx(25.0, rel=1e-3)  # (5 - 4) / 4
    assert record["skipped"] == [] and record["failed"] == []


def test_each_tool_runs_repeat_times_and_the_median_is_reported():
    calls = []

    def counting_simulate(config_json: str, options: object) -> str:
        calls.append(config_json)
        return fake_simulate(config_json, options)

    ns3_walls = iter([3.0, 1.0, 2.0])

    def varying_ns3(name: str, seconds: float) -> dict:
        return dict(fake_ns3(name, seconds), wall_s=next(ns3_walls))

    report = bench.run(
        ["wifi_80211b_saturation"],
        sim_seconds=0.01,
        with_ns3=True,
        repeat=3,
        simulate=counting_simulate,
        ns3_runner=varying_ns3,
    )
    assert len(calls) == 3 and len(set(calls)) == 1  # the same configuration each time
    (ours,) = report.scenarios
    assert ours["repeat"] == 3 and len(ours["wall_runs_s"]) == 3
    assert ours["wall_s"] == sorted(ours["wall_runs_s"])[1]
    (theirs,) = report.ns3
    assert theirs["wall_runs_s"] == [3.0, 1.0, 2.0] and theirs["wall_s"] == 2.0
    assert theirs["runs_identical"] is True
    assert theirs["events_per_s"] == pytest.approx(10 / 2.0)
    (c,) = report.comparisons
    assert c["speedup"] == pytest.approx(2.0 / ours["wall_s"])
    assert len(ours["cpu_runs_s"]) == 3 and ours["cpu_s"] == sorted(ours["cpu_runs_s"])[1]
    assert c["cpu_speedup"] is None  # the stand-in ns-3 records no CPU time


def test_cpu_speedup_is_the_ratio_of_median_cpu_times():
    cpus = iter([0.9, 0.5, 0.7])

    def ns3_with_cpu(name: str, seconds: float) -> dict:
        return dict(fake_ns3(name, seconds), cpu_s=next(cpus))

    report = bench.run(
        ["wifi_80211b_saturation"],
        sim_seconds=0.01,
        with_ns3=True,
        repeat=3,
        simulate=fake_simulate,
        ns3_runner=ns3_with_cpu,
    )
    (theirs,) = report.ns3
    assert theirs["cpu_s"] == 0.7 and theirs["cpu_runs_s"] == [0.9, 0.5, 0.7]
    (ours,) = report.scenarios
    (c,) = report.comparisons
    if ours["cpu_s"] > 0:  # a stand-in simulate may take less than the clock's resolution
        assert c["cpu_speedup"] == pytest.approx(0.7 / ours["cpu_s"])


def test_runs_of_one_configuration_must_agree():
    outputs = iter([results_text(1, 0, []), results_text(2, 0, [])])
    report = bench.run(
        ["ethernet_chain_10"], sim_seconds=0.01, repeat=2, simulate=lambda _config, _options: next(outputs)
    )
    assert report.scenarios == []
    assert "different results" in report.failed[0]["reason"]


def test_repeat_below_one_is_bad_input():
    proc = run("bench", "--only", "wire", "--repeat", "0")
    assert proc.returncode == 2
    assert "--repeat" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_no_comparisons_key_without_ns3():
    report = bench.run(["ethernet_chain_10"], sim_seconds=0.01, simulate=fake_simulate)
    assert "comparisons" not in report.to_json()


def test_missing_ns3_says_how_to_install(monkeypatch, tmp_path):
    monkeypatch.setenv("QOSLAB_NS3_PYTHON", str(tmp_path / "no-such-python"))
    report = bench.run(["wifi_80211b_saturation"], sim_seconds=0.01, with_ns3=True, simulate=fake_simulate)
    assert len(report.scenarios) == 1 and report.comparisons == []
    (skip,) = report.skipped
    assert "ns-3" in skip["name"] and "pip install ns3" in skip["reason"]


def test_simulator_error_is_a_failure_not_a_crash():
    def broken(_config: str, _options: object) -> str:
        raise ValueError("links[0].rate_bps: a link's rate must be positive")

    report = bench.run(["ethernet_chain_10"], sim_seconds=0.01, simulate=broken)
    assert report.scenarios == []
    assert "rate_bps" in report.failed[0]["reason"]


def test_cli_json_record_from_this_build():
    """With the real core: scenarios when it simulates, a skip with the reason until then."""
    from qoslab import _core

    proc = run("bench", "--json", "--only", "ethernet_chain_10", "--sim-seconds", "0.001")
    record = json.loads(proc.stdout)
    if hasattr(_core, "simulate"):
        assert proc.returncode == 0, proc.stderr
        (s,) = record["scenarios"]
        assert SCENARIO_KEYS <= set(s) and s["name"] == "ethernet_chain_10"
    else:
        assert proc.returncode == 1
        assert record["scenarios"] == []
        assert "simulate" in record["skipped"][0]["reason"]


def test_throughput_from_results():
    from qoslab.backends.sim import read_results

    results = read_results(results_text(3, 0, [flow_result(2, 1), flow_result(1, 1_250_000)]))
    # 1.25 MB in 2 s: 10^7 bit over 2 s = 5 Mb/s.
    assert bench.flow_throughput_mbps(results, 1, 2.0) == pytest.approx(5.0)
    assert bench.flow_throughput_mbps(read_results(results_text(3, 0, [])), 1, 2.0) is None


# --- the configurations ---------------------------------------------------------------


def document(config: SimConfig) -> dict:
    """A bench plan as the core reads it: the JSON text ``qoslab bench`` sends to ``simulate``."""
    return json.loads(bench.config_json(config))


def test_wifi_config_matches_the_ns3_script():
    config = document(bench.wifi_saturation_config(60))
    (link,) = config["links"]
    assert (link["standard"], link["rate_bps"], link["preamble"]) == ("802.11b", 11_000_000, "long")
    assert link["rts_threshold"] == 2347 and link["security"] == "open"
    assert link["queue_frames"] == 100
    (flow,) = config["flows"]
    assert flow["payload"] == 1472 and flow["rate_pps"] == 0
    assert flow["to"] == config["nodes"][0]["ports"][0]["address"][0]  # the AP itself
    assert config["duration_ns"] == flow["stop_ns"] == round((bench.WARMUP_S + 60) * 1e9)


def walk(config: dict, src: int, dst: str) -> list[int]:
    """Follows the chain's routes hop by hop, independently of how they were built."""
    nodes, links = config["nodes"], config["links"]
    owner = {}
    for i, node in enumerate(nodes):
        for port in node["ports"]:
            owner[port["address"][0]] = i
    path, here, target = [src], src, ipaddress.ip_address(dst)
    while owner.get(dst) != here:
        node = nodes[here]
        nexthop = None
        for port in node["ports"]:
            if target in ipaddress.ip_network(f"{port['address'][0]}/{port['address'][1]}", strict=False):
                nexthop = dst
        for route in node["routes"]:
            if nexthop is None and target in ipaddress.ip_network(f"{route['destination']}/{route['prefix_len']}"):
                nexthop = route["via"]
        assert nexthop is not None, f"{node['name']} has no route to {dst}"
        here = owner[nexthop]
        path.append(here)
        assert len(path) <= len(nodes)
    assert len(links) == len(nodes) - 1
    return path


def test_chain_routes_reach_both_ends():
    config = document(bench.ethernet_chain_config(60))
    assert len(config["nodes"]) == 10
    assert walk(config, 0, "10.0.8.2") == list(range(10))
    assert walk(config, 9, "10.0.0.1") == list(range(9, -1, -1))
    for link in config["links"]:
        assert link["rate_bps"] == 100_000_000 and link["queue_frames"] == 100
    assert [n["ip_forward"] for n in config["nodes"]] == [False] + [True] * 8 + [False]


def test_tcp_config_matches_the_ns3_script():
    import ast

    config = document(bench.tcp_cubic_config(60))
    (link,) = config["links"]
    assert (link["rate_bps"], link["delay_ns"], link["queue_frames"]) == (30_000_000, 10_000_000, 100)
    assert link["impair"][0]["loss"] == {"model": "bernoulli", "p": 0.01} and link["impair"][1]["loss"] is None
    (flow,) = config["flows"]
    # The simulator's defaults (CUBIC, HyStart off) but RACK-TLP off: ns-3 3.44 has neither.
    assert flow["kind"] == "tcp" and flow["tcp"] == {"rack": False, "tlp": False}
    assert config["duration_ns"] == flow["stop_ns"] == round((bench.WARMUP_S + 60) * 1e9)
    # The ns-3 script's defaults are the same numbers (read from its argparse calls).
    script = (bench.source_root() / "benchmarks" / "ns3" / "tcp_cubic.py").read_text()
    defaults = {}
    for node in ast.walk(ast.parse(script)):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "add_argument":
            name = node.args[0].value.lstrip("-").replace("-", "_")
            defaults[name] = next(ast.literal_eval(k.value) for k in node.keywords if k.arg == "default")
    assert defaults["rate_mbps"] * 1e6 == link["rate_bps"]
    assert defaults["delay_ms"] * 1e6 == link["delay_ns"]
    assert defaults["loss"] == link["impair"][0]["loss"]["p"]
    assert defaults["warmup"] == bench.WARMUP_S
    assert 'HyStart", ns.BooleanValue(False)' in script and 'InitialCwnd", ns.UintegerValue(10)' in script


def test_tcp_benchmark_runs_in_the_simulator():
    from qoslab import _core

    if getattr(_core, "simulate", None) is None:
        pytest.skip("no simulator in this build")
    record = bench.run_sim("tcp_cubic_30mbps_1pct", 2.0)
    # At 1 % loss a 20-ms-RTT flow stays far below the 30 Mb/s line (Mathis: ~7 Mb/s).
    assert 1.0 < record["throughput_mbps"] < 30.0 and record["events"] > 1000
    # A speed figure says which build of the core made it (scripts/install.sh builds PGO).
    assert record["core_build"] == _core.core_build() and record["core_build"] in {"pgo", "release"}


def test_switch_config_has_one_bridge_port_per_host():
    config = document(bench.switch_config(1.0, hosts=20))
    switch = config["nodes"][0]
    assert switch["bridge"]["ports"] == list(range(20))
    assert len(config["links"]) == 20 and len(config["flows"]) == 20
    addresses = [n["ports"][0]["address"][0] for n in config["nodes"][1:]]
    assert len(set(addresses)) == 20


def test_macs_are_unique_unicast_and_local():
    config = document(bench.switch_config(1.0))
    macs = [tuple(p["mac"]) for n in config["nodes"] for p in n["ports"]] + [tuple(bench.BRIDGE_MAC)]
    assert len(set(macs)) == len(macs)
    assert all(m[0] & 0x01 == 0 and m[0] & 0x02 for m in macs)


# --- ns-3 (needs the bench venv) ------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(bench.NS3_SCRIPTS))
def test_ns3_script_prints_one_json_record(name):
    if bench.ns3_python() is None or not bench.ns3_python().exists():
        pytest.skip(f"ns-3 is not installed for the benchmarks: {bench.NS3_INSTALL_HINT}")
    record = bench.run_ns3(name, 0.5)
    assert record["name"] == name and record["tool"] == "ns3"
    if name == "seed004_download":  # a sized transfer: runs to its end
        assert record["completed"] and record["rx_payload_bytes"] == 10_000_000
        assert record["events"] > 0 and record["throughput_mbps"] > 0
        return
    assert record["traffic_s"] == 0.5
    assert record["sim_time_s"] == pytest.approx(bench.WARMUP_S + 0.5)
    assert record["events"] > 0 and record["wall_s"] > 0
    assert record["throughput_mbps"] > 0


def test_startup_benchmark_reports_every_phase():
    """benchmarks/startup.py runs and reports each phase of `qoslab run` (no time is
    asserted: only that every phase was measured and the end-to-end run worked)."""
    from pathlib import Path

    script = Path(__file__).resolve().parents[1] / "benchmarks" / "startup.py"
    proc = subprocess.run(
        [sys.executable, str(script), "--repeat", "1", "--json"],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    record = json.loads(proc.stdout)
    assert set(record["seconds"]) == {"import", "validate", "prepare", "simulate", "output", "end_to_end"}
    assert all(s > 0 for s in record["seconds"].values())


def test_quick_runs_every_simulator_benchmark_but_the_largest_once():
    proc = run("bench", "--quick", "--json")
    assert proc.returncode == 0, proc.stderr[-2000:]
    record = json.loads(proc.stdout)
    assert [s["name"] for s in record["scenarios"]] == list(bench.QUICK_BENCHMARKS)
    assert "switch_10000_hosts_scenario" not in bench.QUICK_BENCHMARKS and "wire" not in bench.QUICK_BENCHMARKS
    # (the switch benchmark is run once in a process of its own and reports no repeat)
    assert all(s.get("repeat", 1) == 1 for s in record["scenarios"]) and record["failed"] == []
