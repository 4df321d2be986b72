"""TCP figures count the measurement window, iperf3's way (docs/metrics.md, "TCP").

Each test runs the scenario that showed a defect and checks the figures against what is
computed here from the line: on Ethernet a 1500-byte IP packet takes 1538 bytes of the
wire (preamble and SFD 8, MAC header 14, FCS 4, inter-frame gap 12: IEEE 802.3 §3.1.1,
§4.4.2) and carries 1448 data octets (1500 − 20 IPv4 − 20 TCP − 12 timestamp option,
RFC 791, RFC 9293, RFC 7323 §3 padded to 4 bytes), so no TCP goodput through a link of
rate R can pass R × 1448 / 1538.

- A 0.2-s ``tcp.bulk`` on 100 Mb/s reported 188.7 Mb/s (the sender's buffer flushed
  after the stop, divided by the test's 0.2 s).
- TCP through a router onto 10 Mb/s reported 18.79 Mb/s per stream and a total twice
  its intervals' (the router's deep queue draining after the stop).
- ``stalled`` was true after any 1-s gap in the middle of a timed test.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from qoslab.backends.sim import run_tests
from qoslab.scenario import loads_scenario

EXAMPLES = Path(__file__).parent.parent / "examples"

ETHERNET_WIRE_OVERHEAD = 8 + 14 + 4 + 12
"""Preamble + SFD, MAC header, FCS, inter-frame gap (IEEE 802.3)."""
DATA_PER_SEGMENT = 1500 - 20 - 20 - 12
"""Data octets in a 1500-byte IPv4 packet with TCP timestamps."""


def capacity_bps(rate_bps: float) -> float:
    """The most data bits per second a full-sized segment stream can carry over an
    Ethernet link of ``rate_bps``."""
    return rate_bps * DATA_PER_SEGMENT / (1500 + ETHERNET_WIRE_OVERHEAD)


TWO_HOSTS = """
[scenario]
name = "two hosts"
seed = 1
[node.a]
role = "host"
address = "10.0.0.1/24"
[node.b]
role = "host"
address = "10.0.0.2/24"
[[link]]
type = "ethernet"
rate = "100 Mbps"
ends = ["a", "b"]
"""

THROUGH_A_ROUTER = """
[scenario]
name = "through a router onto 10 Mb/s"
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
"""


def run_one(text: str) -> tuple[dict, dict]:
    """The record of the scenario's only test and the simulator's results."""
    _, (r,) = run_tests(loads_scenario(text))
    (record,) = r.records
    return record, r.results


def rates(record: dict) -> list[float]:
    """Every rate the record prints, bit/s."""
    out = [record["metrics"]["throughput_mbps"] * 1e6]
    for s in record["streams"]:
        out += [s["sender"]["bits_per_second"], s["receiver"]["bits_per_second"]]
    return out


def test_a_short_bulk_test_is_not_above_the_line():
    record, results = run_one(TWO_HOSTS + '[[test]]\nmethod = "tcp.bulk"\nfrom = "a"\nto = "b"\nduration = "0.2 s"\n')
    line = capacity_bps(100e6)
    assert all(0 < r <= line for r in rates(record)), (rates(record), line)
    (stream,) = record["streams"]
    # What arrived after the stop (the sender's buffer, flushed as it closes) is there,
    # apart: window + after = everything the receiver got.
    (flow,) = results.flows
    assert stream["receiver"]["bytes"] + stream["receiver"]["bytes_after_stop"] == flow.bytes_received
    assert record["metrics"]["bytes_after_stop"] == stream["receiver"]["bytes_after_stop"] > 0
    # The goodput is the window's bytes over the 0.2 s.
    assert record["metrics"]["throughput_mbps"] == pytest.approx(stream["receiver"]["bytes"] * 8 / 0.2 / 1e6, abs=1e-6)


def test_through_a_router_the_drain_after_the_stop_is_apart():
    test = '[[test]]\nmethod = "tcp.bulk"\nfrom = "a"\nto = "b"\nduration = "2 s"\ninterval = "0.5 s"\n'
    record, results = run_one(THROUGH_A_ROUTER + test)
    line = capacity_bps(10e6)
    assert all(0 < r <= line for r in rates(record)), (rates(record), line)
    (stream,) = record["streams"]
    (flow,) = results.flows
    # The router's queue (1000 frames) drains after the stop: reported apart.
    assert stream["receiver"]["bytes_after_stop"] > 0
    assert stream["receiver"]["bytes"] + stream["receiver"]["bytes_after_stop"] == flow.bytes_received
    # The intervals end at the stop and add up to the totals exactly.
    intervals = record["intervals"]
    assert [iv["sum"]["end_s"] for iv in intervals] == [0.5, 1.0, 1.5, 2.0]
    assert (
        sum(iv["sum"]["bytes"] for iv in intervals)
        == stream["receiver"]["bytes"]
        == record["metrics"]["bytes_received"]
    )
    assert (
        sum(iv["sum"]["retransmits"] for iv in intervals)
        == stream["sender"]["retransmits"]
        == record["metrics"]["retransmits"]
    )
    # The sender counts what was acknowledged by the stop: no more than arrived, and
    # short of it by at most what the window in flight holds (the ACKs' way back).
    assert 0 < stream["sender"]["bytes"] <= stream["receiver"]["bytes"]
    # The 2 s are filled once slow start is done: most of the line's capacity.
    assert record["metrics"]["throughput_mbps"] * 1e6 > 0.8 * line


def test_a_sized_transfer_ends_its_window_at_its_last_byte():
    record, results = run_one(
        THROUGH_A_ROUTER + '[[test]]\nmethod = "tcp.bulk"\nfrom = "a"\nto = "b"\nbytes = "1 MB"\ninterval = "0.25 s"\n'
    )
    (stream,) = record["streams"]
    (flow,) = results.flows
    tcp = flow.tcp
    assert stream["receiver"]["bytes"] == 1_000_000 and stream["receiver"]["bytes_after_stop"] == 0
    assert tcp.window.end_ns == tcp.completed_ns
    assert stream["end_s"] == pytest.approx((tcp.completed_ns - tcp.start_ns) / 1e9)
    assert sum(iv["sum"]["bytes"] for iv in record["intervals"]) == 1_000_000
    assert all(0 < r <= capacity_bps(10e6) for r in rates(record))


BLACK_HOLE = (EXAMPLES / "pmtu_blackhole.toml").read_text(encoding="utf-8")


@pytest.mark.parametrize(
    "probing,stalled",
    [
        # tcp_mtu_probing = 1: ~3 s of timeouts, then the transfer recovers and runs
        # to the stop: a stall in the middle, not at the end.
        ("tcp = { mtu_probing = 1 }", False),
        # Linux's defaults: no data byte ever passes r1, to the end.
        ("", True),
    ],
)
def test_stalled_means_a_stall_at_the_end(probing, stalled):
    text = (
        BLACK_HOLE[: BLACK_HOLE.index("[[test]]")]
        + f'[[test]]\nmethod = "tcp.bulk"\nfrom = "a"\nto = "b"\nduration = "10 s"\n{probing}\n'
    )
    record, results = run_one(text)
    m = record["metrics"]
    assert m["stalled"] is stalled
    # Either way the receiver went a second or more without a new byte.
    assert m["longest_stall_s"] >= 1.0
    tcp = results.flows[0].tcp
    if stalled:
        assert m["bytes_received"] == 0
        # From the start to the stop, nothing: the stall is the whole window.
        assert tcp.stall_at_end_ns == tcp.window.end_ns - tcp.start_ns == 10_000_000_000
    else:
        # Linux's black hole detection: (2^(tcp_retries1 + 1) − 1) × TCP_RTO_MIN = 3 s.
        assert 3.0 <= m["longest_stall_s"] < 5.0
        assert tcp.stall_at_end_ns < 1_000_000_000
        assert m["bytes_received"] > 0


@pytest.mark.parametrize("segments", [2, 3, 40])
def test_ttcp_rates_of_a_few_segments_are_not_above_the_line(segments):
    # 2 full segments reach the receiver one segment time apart: ttcp's receiver clock
    # starts with the first, so "2 segments over 1 segment time" would be twice the line.
    test = f'[[test]]\nmethod = "tcp.transfer"\nfrom = "a"\nto = "b"\nbytes = {segments * DATA_PER_SEGMENT}\n'
    record, _ = run_one(TWO_HOSTS.replace("100 Mbps", "10 Mbps") + test)
    m = record["metrics"]
    line = capacity_bps(10e6)
    assert m["completed"]
    for key in ("throughput_mbps", "sender_rate_mbps", "receiver_rate_mbps"):
        assert 0 < m[key] * 1e6 <= line, (key, m[key], line)
    # The receiver's clock covers the segments after the first, back to back at the line.
    assert m["receiver_bytes_timed"] == (segments - 1) * DATA_PER_SEGMENT
    assert m["receiver_rate_mbps"] * 1e6 == pytest.approx(line, rel=0.01)


def test_the_tcp_table_prints_decimal_megabytes_and_says_so():
    # 1 MB transferred: 1.000 MB (10^6 bytes), not iperf3's 0.95 MBytes (2^20 bytes).
    from qoslab.report.terminal import tcp_report
    from rich.console import Console

    record, _ = run_one(TWO_HOSTS + '[[test]]\nmethod = "tcp.bulk"\nfrom = "a"\nto = "b"\nbytes = 1000000\n')
    console = Console(record=True, width=200)
    tcp_report(console, record)
    text = console.export_text()
    assert "MB (10^6 B)" in text and "MBytes" not in text
    (receiver,) = [line.split() for line in text.splitlines() if " receiver " in line]
    assert receiver[2] == "1.000"
