"""``udp.echo`` through the simulator (seed 003's traffic): every datagram comes back on a
clean line after two serializations and two propagation delays computed here from IEEE
802.3, and a loss on one direction of the link shows in that direction's count only,
within binomial bounds computed here."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import pytest
from qoslab.backends.sim import run_tests
from qoslab.plan.results_models import Results
from qoslab.scenario import loads_scenario

ECHO = """
[scenario]
name = "UDP echo between two hosts"
seed = 3

[node.a]
role = "host"
address = "10.0.0.1/24"

[node.b]
role = "host"
address = "10.0.0.2/24"

[[link]]
name = "a-b"
type = "ethernet"
rate = "100 Mbps"
delay = "1 ms"
ends = ["a", "b"]
{loss}

[[test]]
method = "udp.echo"
from = "a"
to = "b"
payload = {payload}
gap = "1 ms"
count = {count}
"""

PAYLOAD, COUNT, GAP_S = 1000, 2000, 1e-3
SD = 5.0
"""Standard deviations a seeded loss count may stray (as in the Rust tests)."""

METRICS = {
    "sent",
    "forward_received",
    "received",
    "lost_forward",
    "lost_reverse",
    "loss_forward_pct",
    "loss_reverse_pct",
    "loss_pct",
    "rtt_min_ms",
    "rtt_mean_ms",
    "rtt_p50_ms",
    "rtt_p90_ms",
    "rtt_p99_ms",
    "rtt_max_ms",
    "throughput_mbps",
    "throughput_two_way_mbps",
    "cpu_util_pct",
}


def one_way_ms(payload: int = PAYLOAD, rate_bps: float = 100e6, delay_ms: float = 1.0) -> float:
    """IEEE 802.3 time from the first preamble bit to the last FCS bit of one echo
    datagram, plus the propagation delay: preamble and SFD 8, header 14, IPv4 20, UDP 8,
    payload, FCS 4 bytes. (The 12-byte inter-frame gap follows the frame: it holds the
    sender, not the receiver.)"""
    return (8 + 14 + 20 + 8 + payload + 4) * 8 / rate_bps * 1e3 + delay_ms


def run(loss: str = "", payload: int = PAYLOAD, count: int = COUNT) -> tuple[dict, dict]:
    scenario = loads_scenario(ECHO.format(loss=loss, payload=payload, count=count))
    _, (run_,) = run_tests(scenario)
    (record,) = run_.records
    return record, run_.results


def lost_on_link_at(results: Results, node: str) -> int:
    """Echo datagrams the link lost on their way into ``node`` (the drop log names the flow)."""
    return sum(
        1 for d in results.drop_log if d.flow == 1 and d.node == node and d.reason.startswith("lost on link a-b")
    )


def within_binomial(lost: int, n: int, p: float) -> bool:
    return abs(lost - n * p) <= SD * math.sqrt(n * p * (1 - p))


def test_every_datagram_comes_back_after_two_line_times():
    record, _ = run()
    assert (record["test"], record["from"], record["to"]) == ("udp.echo", "a", "b")
    assert record["parameters"]["port"] == 7  # RFC 862
    assert record["parameters"]["frame_bytes"] == PAYLOAD + 8 + 20 + 18
    m = record["metrics"]
    assert set(m) == METRICS
    assert (m["sent"], m["forward_received"], m["received"]) == (COUNT, COUNT, COUNT)
    assert (m["loss_forward_pct"], m["loss_reverse_pct"], m["loss_pct"]) == (0.0, 0.0, 0.0)
    rtt = 2 * one_way_ms()
    assert rtt == pytest.approx(2.16864)
    # Nothing queues (85 µs of line time in each 1 ms gap) and a learning ping filled the
    # ARP caches first: every round trip is the same.
    assert m["rtt_min_ms"] == pytest.approx(rtt, abs=1e-6)
    assert m["rtt_mean_ms"] == pytest.approx(rtt, abs=1e-6)
    assert m["rtt_max_ms"] == pytest.approx(rtt, abs=1e-6)
    # Payload bits echoed back over the sending interval (count × gap).
    assert m["throughput_mbps"] == pytest.approx(COUNT * PAYLOAD * 8 / (COUNT * GAP_S) / 1e6)
    # Both ways: the same payload reached the server and came back.
    assert m["throughput_two_way_mbps"] == pytest.approx(2 * m["throughput_mbps"])
    assert record["streams"][0]["port"] == 7 and record["streams"][0]["received"] == COUNT
    assert m["cpu_util_pct"] == {}  # hosts without a CPU profile are not modelled


def test_loss_on_the_way_back_counts_as_reverse_loss():
    p = 0.02
    record, results = run('loss = {model = "bernoulli", rate = "2 %", direction = "reverse"}')
    m = record["metrics"]
    assert m["forward_received"] == m["sent"] == COUNT
    lost = m["forward_received"] - m["received"]
    assert lost == m["lost_reverse"] == lost_on_link_at(results, "a")
    assert within_binomial(lost, COUNT, p), lost
    assert m["loss_forward_pct"] == 0.0
    assert m["loss_reverse_pct"] == pytest.approx(100 * lost / COUNT)
    assert m["loss_pct"] == pytest.approx(100 * lost / COUNT)
    # Over the receiving interval (docs/metrics.md#goodput): the echoes' span stretched by
    # one mean gap between them, never shorter than the sending interval. With random
    # losses the mean gap is a little above GAP_S.
    (flow,) = [f for f in results.flows if f.kind == "udp-echo"]
    n, span_s = m["received"], (flow.last_rx_ns - flow.first_rx_ns) / 1e9
    assert m["throughput_mbps"] == pytest.approx(
        n * PAYLOAD * 8 / max(COUNT * GAP_S, span_s * n / (n - 1)) / 1e6, rel=1e-6
    )
    assert m["throughput_mbps"] == pytest.approx(m["received"] * PAYLOAD * 8 / (COUNT * GAP_S) / 1e6, rel=1e-4)


def test_loss_on_the_way_out_counts_as_forward_loss():
    p = 0.02
    record, results = run('loss = {model = "bernoulli", rate = "2 %", direction = "forward"}')
    m = record["metrics"]
    lost = m["sent"] - m["forward_received"]
    assert lost == m["lost_forward"] == lost_on_link_at(results, "b")
    assert within_binomial(lost, COUNT, p), lost
    assert m["received"] == m["forward_received"], "nothing lost on the way back"
    assert m["loss_reverse_pct"] == 0.0
    assert m["loss_forward_pct"] == pytest.approx(100 * lost / COUNT)
    assert m["loss_pct"] == pytest.approx(100 * (COUNT - m["received"]) / COUNT)


def test_cli_runs_the_echo_and_prints_the_same_records(tmp_path):
    path = tmp_path / "echo.toml"
    text = ECHO.format(
        loss='loss = {model = "bernoulli", rate = "2 %", direction = "reverse"}', payload=PAYLOAD, count=COUNT
    )
    path.write_text(text)
    proc = subprocess.run(
        [sys.executable, "-m", "qoslab", "run", str(path), "--json"], capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert (out["backend"], out["seed"]) == ("sim", 3)
    (record,) = out["results"]
    expected, _ = run('loss = {model = "bernoulli", rate = "2 %", direction = "reverse"}')
    assert record == expected
    assert "rtt" in proc.stderr  # the human table says the echo's times are round trips


def test_cli_refuses_an_unpaced_echo(tmp_path):
    path = tmp_path / "echo.toml"
    path.write_text(ECHO.format(loss="", payload=PAYLOAD, count=COUNT).replace('gap = "1 ms"', 'gap = "0 s"'))
    proc = subprocess.run(
        [sys.executable, "-m", "qoslab", "run", str(path), "--json"], capture_output=True, text=True, check=False
    )
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "gap" in proc.stderr


def test_a_payload_without_room_for_the_probe_is_refused(tmp_path):
    path = tmp_path / "echo.toml"
    path.write_text(ECHO.format(loss="", payload=8, count=10))
    proc = subprocess.run(
        [sys.executable, "-m", "qoslab", "run", str(path), "--json"], capture_output=True, text=True, check=False
    )
    assert proc.returncode == 2 and "payload" in proc.stderr
