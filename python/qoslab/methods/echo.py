"""``udp.echo``: UDP datagrams sent to an echo server and returned (RFC 862), seed 003's
traffic.

The source sends ``count`` datagrams of ``payload`` bytes, ``gap`` apart, to the
destination's echo port (7 unless ``port`` says otherwise); the destination returns each
one unchanged, ports swapped. The echo server counts what reaches it, so loss is told
apart by direction:

- ``loss_forward_pct``: datagrams that never reached the server, of those sent;
- ``loss_reverse_pct``: echoes that never came back, of those the server returned;
- ``loss_pct``: round trips that failed, of those sent (what a tester that sees only its
  own port reports).

``throughput_mbps`` is the UDP payload bits echoed back over the sending interval
(``count`` × ``gap``), as seed 003 reports application throughput. Round-trip times
come from the send time each datagram carries.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from qoslab.methods import DRAIN_NS, LEARNING_NS, Plan, cpu_metrics
from qoslab.methods.common import endpoints, flow_result, ms
from qoslab.methods.udp import PROBE_HEADER, wire_bytes

if TYPE_CHECKING:
    from qoslab.backends.sim import Network

MEASURED, LEARNING = 1, 0


def _pct(part: int, whole: int) -> float | None:
    return round(100.0 * part / whole, 6) if whole else None


def plan(net: "Network", index: int, *, source: str | Path | None = None) -> Plan:
    """The flows of a ``udp.echo`` test: a learning ping, then the echoed datagrams."""
    from qoslab.backends.sim import LocatedProblems

    t = net.scenario.test[index]
    out = LocatedProblems(source)
    if t.payload < PROBE_HEADER:
        out.add(("test", index, "payload"), "too small for the test datagram's sequence number and timestamp", expected=f"at least {PROBE_HEADER} bytes", found=f"{t.payload} bytes")
    if t.gap <= 0:
        out.add(("test", index, "gap"), "an echo test paces its datagrams", expected="a time above 0, e.g. '1 ms'", found=f"{t.gap} ns")
    out.raise_if_any()
    src, dst = endpoints(net, index, source=source)
    mtu = next((p.mtu for p in net.ports[src] if p.address is not None), 1500)
    frame = wire_bytes(t.payload, mtu)
    start = LEARNING_NS
    interval_ns = t.count * t.gap
    flows = [
        {"kind": "ping", "id": LEARNING, "from": src, "to": dst, "count": 1, "interval_ns": 1_000_000_000, "payload": 56, "start_ns": 0},
        {
            "kind": "udp-echo",
            "id": MEASURED,
            "from": src,
            "to": dst,
            "dst_port": t.port,
            "payload": t.payload,
            "count": t.count,
            "interval_ns": t.gap,
            "start_ns": start,
        },
    ]
    parameters = {
        "payload_bytes": t.payload,
        "frame_bytes": frame,
        "count": t.count,
        "gap_ms": ms(t.gap),
        "offered_fps": round(1e9 / t.gap, 6),
        "offered_mbps": round(frame * 8 * 1e3 / t.gap, 6),
        "port": t.port,
        "duration_s": interval_ns / 1e9,
        "destination": dst,
    }

    def records(results: dict[str, Any]) -> list[dict[str, Any]]:
        f = flow_result(results, MEASURED)
        echo = f.get("echo") or {}
        rtt = echo.get("rtt_ns") or {}
        sent, received = int(f["sent"]), int(f["received"])
        forward = int(echo.get("forward_received", 0))
        metrics = {
            "sent": sent,
            "forward_received": forward,
            "received": received,
            "lost_forward": sent - forward,
            "lost_reverse": forward - received,
            "loss_forward_pct": _pct(sent - forward, sent),
            "loss_reverse_pct": _pct(forward - received, forward),
            "loss_pct": _pct(sent - received, sent),
            "rtt_min_ms": ms(rtt.get("min")),
            "rtt_mean_ms": ms(rtt.get("mean")),
            "rtt_p50_ms": ms(rtt.get("p50")),
            "rtt_p90_ms": ms(rtt.get("p90")),
            "rtt_p99_ms": ms(rtt.get("p99")),
            "rtt_max_ms": ms(rtt.get("max")),
            "throughput_mbps": round(int(f["bytes_received"]) * 8 / (interval_ns / 1e9) / 1e6, 6),
            "cpu_util_pct": cpu_metrics(net, results),
        }
        return [{"test": t.method, "name": t.name, "from": t.from_, "to": t.to, "parameters": dict(parameters), "metrics": metrics}]

    return Plan(flows, start + interval_ns + DRAIN_NS, records, [MEASURED])
