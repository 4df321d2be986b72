"""A flow's measurement window and receiving interval (docs/metrics.md#window, #goodput),
through `qoslab run`'s methods: udp.flow, udp.echo and ping on a path whose numbers are
computed here from IEEE 802.3 framing (a frame of S bytes takes (S + 20) × 8 bits on the
wire: preamble, SFD and the inter-frame gap).

Issue 14: a 20 Mb/s UDP flow into a 10 Mb/s link reported 15.9 Mb/s, the datagrams the
router's queue delivered after the test divided by the test's duration.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest
from qoslab.backends.sim import run_tests
from qoslab.scenario import load_scenario

HEADERS = 8 + 20 + 18  # UDP, IPv4, Ethernet header + FCS
ON_WIRE = 20  # preamble, SFD, inter-frame gap


def network(tmp_path: Path, test: str, *, queue: int | None = None) -> Path:
    limit = f"queue = {{ frames = {queue} }}\n" if queue else ""
    text = f"""
[scenario]
name = "udp overload"
seed = 1
[node.a]
role = "host"
address = "10.0.0.1/24"
gateway = "10.0.0.2"
[node.r]
role = "router"
address = ["10.0.0.2/24", "10.0.1.1/24"]
[node.b]
role = "host"
address = "10.0.1.2/24"
gateway = "10.0.1.1"
[[link]]
name = "l1"
type = "ethernet"
rate = "100 Mbps"
ends = ["a", "r"]
[[link]]
name = "l2"
type = "ethernet"
rate = "10 Mbps"
ends = ["r", "b"]
{limit}
{test}
"""
    path = tmp_path / "udp_over.toml"
    path.write_text(text, encoding="utf-8")
    return path


def run(path: Path) -> tuple[dict, dict]:
    _, runs = run_tests(load_scenario(path), source=path)
    (r,) = runs
    (rec,) = r.records
    return rec, r.results


def payload_capacity_mbps(payload: int, bps: float = 10e6) -> float:
    """UDP payload bits per second a link of ``bps`` carries in full frames."""
    return bps * payload / (payload + HEADERS + ON_WIRE) / 1e6


def test_an_overloaded_udp_flow_reports_the_bottleneck_not_the_drained_queue(tmp_path):
    # The scenario: 20 Mb/s of 1472-byte payloads for 2 s into 10 Mb/s; the
    # router's 1000-frame queue drains for 1.2 s after the sending stops.
    rec, _ = run(
        network(
            tmp_path,
            '[[test]]\nmethod = "udp.flow"\nfrom = "a"\nto = "b"\nrate = "20 Mbps"\npayload = 1472\nduration = "2 s"\n',
        )
    )
    m, p = rec["metrics"], rec["parameters"]
    cap = payload_capacity_mbps(1472)  # 9.5709 Mb/s
    assert m["goodput_mbps"] <= cap
    assert m["goodput_mbps"] == pytest.approx(cap, rel=1e-3)
    assert m["throughput_mbps"] <= 10e6 * 1518 / 1538 / 1e6 + 1e-6  # records round to 1 bit/s
    # The queue's 1000 frames arrived after the stop, inside the 2 s wait: drained, not late.
    assert m["drained"] == pytest.approx(1000, abs=2)
    assert m["late"] == 0
    assert m["received"] + m["lost"] == m["sent"]
    # They took their time: the receiving interval is the sending one plus the drain.
    assert m["receive_interval_s"] == pytest.approx(2 + 1000 * 1538 * 8 / 10e6, rel=2e-3)
    assert (p["duration_s"], p["wait_s"]) == (2, 2)


def test_a_udp_flow_below_the_bottleneck_reports_what_it_offered(tmp_path):
    # 5 Mb/s of 1518-byte frames: nothing queues. The sender sends every 2.4288 ms while
    # inside its 2 s, 824 datagrams; their arrivals, one gap apart, span 823 gaps, and the
    # receiving interval is 824 gaps: the rate is exactly the offered one.
    rec, _ = run(
        network(
            tmp_path,
            '[[test]]\nmethod = "udp.flow"\nfrom = "a"\nto = "b"\nrate = "5 Mbps"\npayload = 1472\nduration = "2 s"\n',
        )
    )
    m = rec["metrics"]
    gap = 1518 * 8 / 5e6
    n = math.ceil(2 / gap)
    assert (m["sent"], m["received"], m["lost"], m["late"], m["drained"]) == (
        n,
        n,
        0,
        0,
        1,
    )  # the last one lands after the stop
    assert m["receive_interval_s"] == pytest.approx(n * gap, abs=1e-8)
    assert m["goodput_mbps"] == pytest.approx(1472 * 8 / gap / 1e6, abs=1e-6)
    assert m["throughput_mbps"] == pytest.approx(5.0, abs=1e-6)


def test_a_datagram_after_the_wait_is_lost(tmp_path):
    # A 0.3 s wait after 2 s at twice the link's rate: of the 1000 frames queued at the
    # stop, the link delivers 0.3 s / 1.2304 ms = 243 in the wait; the rest are lost.
    rec, _ = run(
        network(
            tmp_path,
            '[[test]]\nmethod = "udp.flow"\nfrom = "a"\nto = "b"\nrate = "20 Mbps"\npayload = 1472\nduration = "2 s"\nwait = "0.3 s"\n',
        )
    )
    m = rec["metrics"]
    frame_s = 1538 * 8 / 10e6
    assert m["drained"] == pytest.approx(0.3 / frame_s, abs=2)
    assert m["goodput_mbps"] <= payload_capacity_mbps(1472)
    assert m["lost"] == m["sent"] - m["received"]
    # What the 10 Mb/s link delivered from the first arrival to the window's end.
    assert m["received"] == pytest.approx((2.3 - 1538 * 8 / 100e6) / frame_s, abs=3)


def test_udp_echo_follows_the_same_window(tmp_path):
    # 1472-byte echoes every 0.5 ms (24.3 Mb/s of frames) into the 10 Mb/s link: the echoes
    # come back at that link's rate, and the throughput over the receiving interval is
    # not above it.
    rec, results = run(
        network(
            tmp_path,
            '[[test]]\nmethod = "udp.echo"\nfrom = "a"\nto = "b"\npayload = 1472\ngap = "0.5 ms"\ncount = 2000\n',
        )
    )
    m = rec["metrics"]
    assert m["throughput_mbps"] <= payload_capacity_mbps(1472)
    assert m["throughput_mbps"] == pytest.approx(payload_capacity_mbps(1472), rel=5e-3)
    (flow,) = [f for f in results.flows if f.kind == "udp-echo"]
    assert flow.drained > 0 and flow.late == 0
    assert flow.receive_interval_ns > 2000 * 500_000


def test_ping_replies_are_counted_inside_the_window(tmp_path):
    rec, results = run(
        network(tmp_path, '[[test]]\nmethod = "ping"\nfrom = "a"\nto = "b"\ncount = 3\ninterval = "0.2 s"\n')
    )
    (flow,) = results.flows
    assert rec["metrics"]["received"] == 3 and flow.late == 0 and len(rec["metrics"]["rtt_ms"]) == 3


def test_run_help_points_to_the_definitions():
    proc = subprocess.run(
        [sys.executable, "-m", "qoslab", "run", "--help"],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
        env={"COLUMNS": "200", **__import__("os").environ},
    )
    assert "docs/metrics.md" in proc.stdout


@pytest.mark.parametrize(
    "test",
    [
        'method = "udp.flow"\nrate = "5 Mbps"\nduration = "1 s"',
        'method = "udp.echo"\ncount = 100',
        'method = "ping"\ncount = 2\ninterval = "0.1 s"',
        'method = "rfc2544.overload"\nframe_sizes = [512]\nframe_rates = [3000]\nduration = "1 s"',
        'method = "rfc2544.throughput"\nframe_sizes = [1518]\nduration = "1 s"',
        'method = "rfc2544.frame_loss"\nframe_sizes = [1518]\nduration = "1 s"\nstep = 0.5',
    ],
)
def test_metrics_doc_defines_every_metric_these_methods_print(tmp_path, test):
    # Every metric and parameter name udp.flow, udp.echo, ping and the RFC 2544 methods
    # print has an entry in docs/metrics.md (as `name`).
    doc = (Path(__file__).parent.parent / "docs" / "metrics.md").read_text(encoding="utf-8")
    _, runs = run_tests(load_scenario(network(tmp_path, f'[[test]]\nfrom = "a"\nto = "b"\n{test}\n')))
    names = {
        n
        for r in runs
        for rec in r.records
        for n in (*rec["metrics"], *rec["parameters"], *(k for s in rec.get("streams", []) for k in s))
    }
    missing = sorted(n for n in names if f"`{n}`" not in doc)
    assert not missing, missing


def test_json_records_carry_drained_and_late(tmp_path):
    path = network(
        tmp_path, '[[test]]\nmethod = "udp.flow"\nfrom = "a"\nto = "b"\nrate = "20 Mbps"\nduration = "1 s"\n'
    )
    proc = subprocess.run(
        [sys.executable, "-m", "qoslab", "run", str(path), "--json"],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    (rec,) = json.loads(proc.stdout)["results"]
    assert rec["metrics"]["drained"] > 0 and rec["metrics"]["goodput_mbps"] <= payload_capacity_mbps(1472)
