"""The emulation backend's one-way UDP streams (python/qoslab/backends/emu/stream_tool.py)
on this machine's loopback (127.0.0.1 only; no root needed), and the counting of their
arrivals into the simulator's flow result (backends/emu/stream_record.py) by the
simulator's window rules (docs/metrics.md#window, crates/sim/src/app/stats.rs), checked
against values worked out here by hand.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from ipaddress import IPv4Address
from typing import Any

import pytest
from qoslab.plan import models as plan_models

TOOL = [sys.executable, "-m", "qoslab.backends.emu.stream_tool"]
COUNT, GAP_NS = 200, 1_000_000


def _free_port() -> int:
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("127.0.0.1", 0))
    port = int(s.getsockname()[1])
    s.close()
    return port


def test_every_datagram_is_sent_on_schedule_received_and_timed_at_both_ends() -> None:
    port = _free_port()
    receiver = subprocess.Popen(
        [*TOOL, "receive", "127.0.0.1", "--port", str(port)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert receiver.stdout is not None
        assert receiver.stdout.readline().strip() == "ready"
        # Two streams interleaved, 100 octets and 16 (the probe alone), 1 ms apart.
        schedule = [[k * GAP_NS, 1 + k % 2, k // 2, 100 if k % 2 == 0 else 16] for k in range(COUNT)]
        sender = subprocess.Popen(
            [*TOOL, "send", "127.0.0.1", "--port", str(port)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        out, _ = sender.communicate(json.dumps(schedule) + "\ngo\n", timeout=60)
        got, _ = receiver.communicate(input="", timeout=30)
    finally:
        for p in (receiver,):
            if p.poll() is None:
                p.kill()
    sent = json.loads(out.strip().splitlines()[-1])
    arrivals = json.loads(got.strip().splitlines()[-1])
    assert sent["sent"] == {"1": COUNT // 2, "2": COUNT // 2} and sent["errors"] == {}
    assert len(sent["tx"]) == COUNT  # a kernel transmit timestamp for each
    assert arrivals["untimed"] == 0 and len(arrivals["arrivals"]) == COUNT
    assert sorted((a[0], a[1], a[2]) for a in arrivals["arrivals"]) == sorted(
        (1 + k % 2, k // 2, 100 if k % 2 == 0 else 16) for k in range(COUNT)
    )
    tx = {(f, s): ts for f, s, ts in sent["tx"]}
    for flow, seq, _octets, rx in arrivals["arrivals"]:
        assert rx >= tx[(flow, seq)]  # received after it was sent, on one clock
        # Sent no earlier than its plan instant after the start (CLOCK_REALTIME).
        assert tx[(flow, seq)] >= sent["real0_ns"] + (2 * seq + flow - 1) * GAP_NS - 1_000_000


class _Topo:
    """What EmuStreams reads of a topology to count (nothing: no network is built)."""


def _counted(arrivals: list[list[int]], tx: list[list[int]], sent: int) -> Any:
    from qoslab.backends.emu.stream_record import EmuStreams

    class _Net:
        class config:  # noqa: N801 (the attribute the runner reads)
            nodes: list[Any] = []

        addresses: dict[str, Any] = {}

    runner = EmuStreams(_Topo(), _Net())  # type: ignore[arg-type]
    flow = plan_models.UdpFlow(
        kind="udp", id=1, from_=0, to=IPv4Address("10.0.0.2"), dst_port=5001, payload=100, rate_pps=1000.0,
        start_ns=1_000_000_000, stop_ns=1_010_000_000,
    )  # fmt: skip
    window = plan_models.WindowConfig(flow=1, stop_ns=1_010_000_000, end_ns=1_020_000_000)
    sender = {"real0_ns": 5_000_000_000, "sent": {"1": sent}, "tx": tx, "errors": {}, "late_ns": {"p99": 0, "max": 0}}
    return runner._count(flow, sender, arrivals, window, 1_000_000_000)


def test_arrivals_are_counted_by_the_simulators_window_rules() -> None:
    # The sender started at CLOCK_REALTIME 5 s, which is the plan's 1 s; the stream
    # stops at the plan's 1.010 s and its window ends at 1.020 s: on the real clock
    # the stop is 5.010 s and the end 5.020 s.
    real = 5_000_000_000
    tx = [[1, k, real + k * 1_000_000] for k in range(10)]
    arrivals = [
        [1, 0, 100, real + 2_000_000],  # 2 ms transit
        [1, 2, 100, real + 5_000_000],  # 3 ms: seq 1 overtaken
        [1, 1, 100, real + 5_500_000],  # 4.5 ms, after a higher one: reordered
        [1, 1, 100, real + 6_000_000],  # a copy: duplicate
        [1, 3, 100, real + 15_000_000],  # 12 ms, after the stop: drained
        [1, 4, 100, real + 25_000_000],  # after the window's end: late
        [2, 5, 100, real + 7_000_000],  # another flow's: not this one's
    ]
    f = _counted(arrivals, tx, 10)
    assert (f.sent, f.received, f.lost, f.duplicates, f.reordered, f.drained, f.late) == (10, 4, 6, 1, 1, 1, 1)
    assert f.bytes_received == 400
    assert (f.first_rx_ns, f.last_rx_ns) == (1_002_000_000, 1_015_000_000)  # on the plan's clock
    # Receiving interval: 13 ms over 4 arrivals stretched by n/(n-1) = 17.33 ms, rounded
    # up, longer than the 10 ms sending interval (docs/metrics.md#goodput).
    assert f.receive_interval_ns == 17_333_334
    transits = [2_000_000, 3_000_000, 4_500_000, 12_000_000]  # in arrival order
    assert f.latency_ns is not None
    assert (f.latency_ns.min, f.latency_ns.max, f.latency_ns.mean) == (2_000_000, 12_000_000, 5_375_000)
    # RFC 3550 §6.4.1: J += (|D| - J) / 16 over consecutive transits.
    j = 0.0
    for a, b in zip(transits, transits[1:]):
        j += (abs(b - a) - j) / 16
    assert f.jitter_ns == pytest.approx(j)
