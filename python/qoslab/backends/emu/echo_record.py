"""A ``udp.echo`` test on the emulation backend: qoslab's own echo server in the ``to``
node's namespace and its client in the ``from`` node's (:mod:`.echo_tool`, timed with
kernel software timestamps), read into the simulator's record (python/qoslab/methods/
echo.py: the same keys, metrics computed by the same functions).

docs/metrics.md, "The emulation backend", says what each metric is here.
"""

from __future__ import annotations

import json
import select
import subprocess
import sys
from typing import TYPE_CHECKING, Any, NamedTuple

from qoslab.backends.emu.topology import EmulationError, in_namespace
from qoslab.plan.models import UdpEchoFlow

if TYPE_CHECKING:
    from qoslab.backends.emu.topology import Topology
    from qoslab.lower.lowered import Network
    from qoslab.methods import Plan
    from qoslab.scenario.test_tables import UdpEcho

TOOL = [sys.executable, "-m", "qoslab.backends.emu.echo_tool"]
SERVER_READY_S = 10.0
"""Longest wait for the echo server to bind (a Python start-up on a loaded machine)."""
SLACK_S = 15.0
"""The client's deadline beyond the window: its start-up and the learning ping."""


class RttNs(NamedTuple):
    """The echo client's round trips of one stream, ns (nearest-rank percentiles)."""

    min: float
    mean: float
    p50: float
    p90: float
    p99: float
    max: float


def _start_server(topo: Topology, node: str, ports: list[int]) -> subprocess.Popen[str]:
    """The echo server in ``node``'s namespace, registered, once it has bound its ports."""
    server = subprocess.Popen(
        in_namespace(topo.namespace(node), [*TOOL, "server", "0.0.0.0", "--ports", *map(str, ports)]),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    topo.registry.add_pid(server.pid)
    assert server.stdout is not None
    ready, _, _ = select.select([server.stdout], [], [], SERVER_READY_S)
    line = server.stdout.readline().strip() if ready else ""
    if line != "ready":
        server.kill()
        _, err = server.communicate()
        raise EmulationError(f"the echo server in {node} did not start: {err.strip() or 'no ready line'}")
    return server


def _stop_server(server: subprocess.Popen[str], node: str) -> dict[str, Any]:
    """Close the server's standard input and read its counts."""
    try:
        out, err = server.communicate(input="", timeout=SLACK_S)
    except subprocess.TimeoutExpired:
        server.kill()
        server.communicate()
        raise EmulationError(f"the echo server in {node} did not stop within {SLACK_S:.0f} s") from None
    try:
        counts: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    except (ValueError, IndexError):
        raise EmulationError(f"the echo server in {node} printed no counts: {err.strip()}") from None
    return counts


def _client(topo: Topology, node: str, dst: str, ports: list[int], t: UdpEcho, wait_ns: int) -> dict[str, Any]:
    from qoslab.backends.emu.measure import _run

    argv = [*TOOL, "client", dst, "--ports", *map(str, ports)]
    argv += ["--payload", str(t.payload), "--count", str(t.count), "--gap-ns", str(t.gap), "--wait-ns", str(wait_ns)]
    done = _run(topo, node, argv, (t.count * t.gap + wait_ns) / 1e9 + SLACK_S)
    try:
        result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        raise EmulationError(f"the echo client in {node} printed no result: {done.stderr.strip()}") from None
    return result


def echo_record(topo: Topology, net: Network, index: int, plan: Plan) -> dict[str, Any]:
    """A ``udp.echo`` test's record: every stream sent and timed, counted at both ends."""
    from qoslab.backends.emu.echo_tool import summary_ns
    from qoslab.backends.emu.measure import ping
    from qoslab.methods import DRAIN_NS
    from qoslab.methods.common import ms, receive_interval_ns, test_of
    from qoslab.methods.echo import stream_entry, total_metrics
    from qoslab.scenario.test_tables import UdpEcho

    t = test_of(net, index, UdpEcho)
    streams = [f for f in plan.flows if isinstance(f, UdpEchoFlow)]
    dst, ports = str(streams[0].to), [f.dst_port for f in streams]
    server = _start_server(topo, t.to, ports)
    try:
        ping(topo, t.from_, dst, count=1, interval_s=1.0, payload=56, wait_s=2.0)  # learning (ARP, bridges)
        client = _client(topo, t.from_, dst, ports, t, DRAIN_NS)
    finally:
        counts = _stop_server(server, t.to)
    sending_ns = t.count * t.gap
    entries, spans = [], []
    for f, s, c in zip(streams, client["streams"], counts["ports"]):
        spans.append(receive_interval_ns(int(s["received"]), s["first_rx_ns"], s["last_rx_ns"], sending_ns))
        rtt = summary_ns(s["rtt_ns"])
        timed = RttNs(rtt["min"], rtt["mean"], rtt["p50"], rtt["p90"], rtt["p99"], rtt["max"]) if rtt["count"] else None
        counts_each_way = (int(s["sent"]), int(c["received"]), int(s["received"]))
        entries.append(stream_entry(f.id, int(s["port"]), counts_each_way, timed, t.payload, spans[-1]))
    metrics = total_metrics(entries, t.payload, max(spans))
    metrics["cpu_util_pct"] = {}
    turnaround = counts["turnaround_ns"]
    return {
        "test": t.method,
        "name": t.name,
        "from": t.from_,
        "to": t.to,
        "parameters": dict(plan.parameters),
        "metrics": metrics,
        "streams": entries,
        "ipsec": [],
        "timestamps": {
            "kind": "SO_TIMESTAMPING software (kernel), CLOCK_REALTIME",
            "rtt_timed": sum(len(s["rtt_ns"]) for s in client["streams"]),
            "tx_timestamps": sum(int(s["tx_timestamps"]) for s in client["streams"]),
            "server_turnaround_p50_ms": ms(turnaround["p50"]),
            "server_turnaround_p99_ms": ms(turnaround["p99"]),
            "server_turnaround_max_ms": ms(turnaround["max"]),
        },
    }
