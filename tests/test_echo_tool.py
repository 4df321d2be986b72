"""The emulation backend's UDP echo tool (python/qoslab/backends/emu/echo_tool.py) on this
machine's loopback (127.0.0.1 only; no root needed): every datagram is counted at both
ends and timed by its kernel timestamps, and the timestamps obey the order the packets
take: per datagram the client's round trip (its transmit to its echo's receive) holds
the server's turnaround (its receive to its echo's transmit), all four on one clock, so
the round trips' minimum, mean and maximum are at least the turnarounds'.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys

from qoslab.backends.emu.echo_tool import summary_ns

TOOL = [sys.executable, "-m", "qoslab.backends.emu.echo_tool"]
COUNT, PAYLOAD = 100, 200


def _free_ports(n: int) -> list[int]:
    """``n`` free UDP ports on 127.0.0.1 (bound, then released for the server)."""
    socks = []
    for _ in range(n):
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.bind(("127.0.0.1", 0))
        socks.append(s)
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


def test_nearest_rank_percentiles() -> None:
    # Nearest rank: the smallest value with at least q of the values at or below it.
    s = summary_ns(list(range(10, 0, -1)))
    assert (s["min"], s["p50"], s["p90"], s["p99"], s["max"]) == (1, 5, 9, 10, 10)
    assert s["mean"] == 5.5 and s["count"] == 10
    assert summary_ns([])["p50"] is None


def test_two_streams_on_loopback_are_counted_and_timed_in_order() -> None:
    ports = _free_ports(2)
    server = subprocess.Popen(
        [*TOOL, "server", "127.0.0.1", "--ports", *map(str, ports)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        assert server.stdout.readline().strip() == "ready"
        done = subprocess.run(
            [*TOOL, "client", "127.0.0.1", "--ports", *map(str, ports), "--payload", str(PAYLOAD)]
            + ["--count", str(COUNT), "--gap-ns", "1000000", "--wait-ns", "2000000000"],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        out, _ = server.communicate(input="", timeout=30)
    finally:
        if server.poll() is None:
            server.kill()
    client = json.loads(done.stdout)
    counts = json.loads(out.strip().splitlines()[-1])
    assert [p["received"] for p in counts["ports"]] == [COUNT, COUNT]
    for stream, port in zip(client["streams"], ports):
        assert stream["port"] == port
        assert (stream["sent"], stream["received"], stream["tx_timestamps"]) == (COUNT, COUNT, COUNT)
        assert len(stream["rtt_ns"]) == COUNT  # every echo matched to its transmit timestamp
    rtt = summary_ns([r for s in client["streams"] for r in s["rtt_ns"]])
    turnaround = counts["turnaround_ns"]
    assert turnaround["count"] == 2 * COUNT
    assert rtt["min"] >= turnaround["min"] > 0
    assert rtt["mean"] >= turnaround["mean"]
    assert rtt["max"] >= turnaround["max"]
