"""``ping``: ICMP echo requests (RFC 792) at an interval; round-trip times and loss."""

from __future__ import annotations

import math
from ipaddress import IPv4Address
from pathlib import Path
from typing import TYPE_CHECKING, Any

from qoslab.methods import Plan, cpu_metrics, window
from qoslab.methods.common import endpoints, flow_result, ms, test_of
from qoslab.plan import Flow
from qoslab.plan import models as plan_models
from qoslab.scenario.test_tables import Ping

if TYPE_CHECKING:
    from qoslab.backends.sim import Network
    from qoslab.plan.results_models import FlowResult, Results

REPLY_WAIT_NS = 4_000_000_000
"""How long the last request waits for its reply: Windows ping's default timeout (-w 4000 ms)."""

FLOW = 0


def ping_flow(
    src: int, dst: str, *, count: int, interval_ns: int, payload: int, flow_id: int = FLOW, start_ns: int = 0
) -> plan_models.PingFlow:
    """A ``FlowConfig::Ping``."""
    return plan_models.PingFlow(
        kind="ping",
        id=flow_id,
        from_=src,
        to=IPv4Address(dst),
        count=count,
        interval_ns=interval_ns,
        payload=payload,
        start_ns=start_ns,
    )


def run_length(count: int, interval_ns: int, start_ns: int = 0) -> int:
    """Simulated time for ``count`` requests and the wait for the last reply."""
    return start_ns + (count - 1) * interval_ns + REPLY_WAIT_NS


def rtt_metrics(f: FlowResult) -> dict[str, Any]:
    """sent, received, loss and RTT statistics as ping prints them (mdev as Linux ping's)."""
    return rtt_metrics_of(f.sent, f.received, f.rtt_ns)


def rtt_metrics_of(sent: int, received: int, rtts: list[int]) -> dict[str, Any]:
    """:func:`rtt_metrics` of ``sent`` requests, ``received`` replies and their round
    trips ``rtts`` (ns)."""
    m: dict[str, Any] = {
        "sent": sent,
        "received": received,
        "loss_pct": round(100.0 * (sent - received) / sent, 6) if sent else None,
    }
    if rtts:
        mean = sum(rtts) / len(rtts)
        mdev = math.sqrt(max(0.0, sum(r * r for r in rtts) / len(rtts) - mean * mean))
        m.update(rtt_min_ms=ms(min(rtts)), rtt_mean_ms=ms(mean), rtt_max_ms=ms(max(rtts)), rtt_mdev_ms=ms(mdev))
    else:
        m.update(rtt_min_ms=None, rtt_mean_ms=None, rtt_max_ms=None, rtt_mdev_ms=None)
    m["rtt_ms"] = [ms(r) for r in rtts]
    return m


def plan(net: Network, index: int, *, source: str | Path | None = None) -> Plan:
    """The flow of a ``ping`` test."""
    t = test_of(net, index, Ping)
    src, dst = endpoints(net, index, source=source)
    flows: list[Flow] = [ping_flow(src, dst, count=t.count, interval_ns=t.interval, payload=t.payload)]
    parameters = {"count": t.count, "interval_ms": ms(t.interval), "payload_bytes": t.payload, "destination": dst}

    def records(results: Results) -> list[dict[str, Any]]:
        metrics = rtt_metrics(flow_result(results, FLOW))
        metrics["cpu_util_pct"] = cpu_metrics(net, results)
        return [
            {
                "test": t.method,
                "name": t.name,
                "from": t.from_,
                "to": t.to,
                "parameters": dict(parameters),
                "metrics": metrics,
            }
        ]

    # The window (docs/metrics.md#window) closes REPLY_WAIT_NS after the last request,
    # when the run ends: a reply later than that is lost, its round trip not counted.
    last_request = (t.count - 1) * t.interval
    return Plan(
        flows,
        run_length(t.count, t.interval),
        records,
        [FLOW],
        windows=[window(FLOW, last_request, last_request + REPLY_WAIT_NS)],
        parameters=parameters,
    )
