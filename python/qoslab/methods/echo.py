"""``udp.echo``: UDP datagrams sent to an echo server and returned (RFC 862), seed 003's
traffic.

The source sends ``count`` datagrams of ``payload`` bytes, ``gap`` apart, to the
destination's echo port (7 unless ``port`` says otherwise); the destination returns each
one unchanged, ports swapped. With ``streams = k`` it sends k such streams at once, to
ports ``port`` … ``port + k - 1`` (seed 003: one LanTraffic stream per VPN, each VPN's
IPsec policy selecting its port). The echo server counts what reaches it, so loss is
told apart by direction:

- ``loss_forward_pct``: datagrams that never reached the server, of those sent;
- ``loss_reverse_pct``: echoes that never came back, of those the server returned;
- ``loss_pct``: round trips that failed, of those sent (what a tester that sees only its
  own port reports).

The measurement window (docs/metrics.md#window) opens at the first send and closes 2 s
(RFC 2544 §23's wait) after the sending interval (``count`` × ``gap``); the run ends
there, and an echo still on the way is lost. Throughput is over the receiving interval
(docs/metrics.md#goodput): the time the echoes took to come back, from the first to the
last stretched by one mean gap between them (``count`` × ``gap`` for a steady flow), and
never less than the sending interval; echoes that queued behind a saturated link or CPU
stretch it, so a queue drained after the sending stopped does not count as capacity:

- ``throughput_mbps``: the UDP payload bits echoed back (the round trips completed);
- ``throughput_two_way_mbps``: the UDP payload bits that crossed the path either way
  (reaching the server, and back) - the application data the 802.11 cell carried.

Round-trip times come from the send time each datagram carries. ``cpu_util_pct`` is each
modelled CPU's busy share over the sending interval (a performance monitor's average
over the test, seed 003 §3), not over the learning ping and the drain around it.

The record has the totals over all streams in ``metrics`` (RTT: the mean weighted by
round trips, the minimum and maximum; the percentiles only with one stream, else per
stream), one entry per
stream in ``streams`` (every metric of that stream, with its ``port`` and ``flow``), and
what each IPsec tunnel end sealed and opened in ``ipsec`` (per tunnel packet and byte
counts).
"""

from __future__ import annotations

from ipaddress import IPv4Address
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from qoslab.methods import DRAIN_NS, LEARNING_NS, Plan, cpu_metrics, ipsec_metrics, learning_ping, window
from qoslab.methods.common import endpoints, flow_result, ms, test_of
from qoslab.methods.udp import PROBE_HEADER, wire_bytes
from qoslab.plan import Flow
from qoslab.plan import models as plan_models
from qoslab.scenario.test_tables import UdpEcho

if TYPE_CHECKING:
    from qoslab.backends.sim import Network
    from qoslab.plan.results_models import FlowResult, Results

LEARNING = 0
"""Flow id of the learning ping; the streams are 1 … streams."""


def _pct(part: int, whole: int) -> float | None:
    return round(100.0 * part / whole, 6) if whole else None


def _mbps(nbytes: int, interval_ns: int) -> float:
    return round(nbytes * 8 / (interval_ns / 1e9) / 1e6, 6)


def _counts(sent: int, forward: int, received: int, payload: int, interval_ns: int) -> dict[str, Any]:
    """Counts, loss each way and throughput of ``sent`` datagrams of ``payload`` bytes."""
    return {
        "sent": sent,
        "forward_received": forward,
        "received": received,
        "lost_forward": sent - forward,
        "lost_reverse": forward - received,
        "loss_forward_pct": _pct(sent - forward, sent),
        "loss_reverse_pct": _pct(forward - received, forward),
        "loss_pct": _pct(sent - received, sent),
        "throughput_mbps": _mbps(received * payload, interval_ns),
        "throughput_two_way_mbps": _mbps((forward + received) * payload, interval_ns),
    }


class RttSummary(Protocol):
    """Round-trip times in ns, as the simulator's ``LatencySummary`` has them (and the
    emulation backend's echo client, ``backends/emu/echo_record.py``)."""

    @property
    def min(self) -> float: ...
    @property
    def mean(self) -> float: ...
    @property
    def p50(self) -> float: ...
    @property
    def p90(self) -> float: ...
    @property
    def p99(self) -> float: ...
    @property
    def max(self) -> float: ...


def _stream_metrics(f: FlowResult, fid: int, port: int, payload: int, span_ns: int) -> dict[str, Any]:
    """One echoed stream's entry in ``streams``, from the simulator's flow result."""
    echo = f.echo
    rtt = echo.rtt_ns if echo else None
    forward = echo.forward_received if echo else 0
    return stream_entry(fid, port, (f.sent, forward, f.received), rtt, payload, span_ns)


def stream_entry(
    fid: int, port: int, counts: tuple[int, int, int], rtt: RttSummary | None, payload: int, span_ns: int
) -> dict[str, Any]:
    """One echoed stream's entry in ``streams``: its counts (sent, received by the
    server, echoes back), loss each way, throughput over ``span_ns`` and round-trip
    times (ns, None when no echo was timed)."""
    entry: dict[str, Any] = {"flow": fid, "port": port}
    entry |= _counts(*counts, payload, span_ns)
    entry |= {
        "rtt_min_ms": ms(rtt.min if rtt else None),
        "rtt_mean_ms": ms(rtt.mean if rtt else None),
        "rtt_p50_ms": ms(rtt.p50 if rtt else None),
        "rtt_p90_ms": ms(rtt.p90 if rtt else None),
        "rtt_p99_ms": ms(rtt.p99 if rtt else None),
        "rtt_max_ms": ms(rtt.max if rtt else None),
    }
    return entry


def total_metrics(streams: list[dict[str, Any]], payload: int, span_ns: int) -> dict[str, Any]:
    """The record's metrics over every stream: counts summed, the RTT mean weighted by
    round trips, its minimum and maximum; the percentiles only with one stream."""

    def total(key: str) -> int:
        return sum(int(s[key]) for s in streams)

    metrics = _counts(total("sent"), total("forward_received"), total("received"), payload, span_ns)
    timed = [s for s in streams if s["rtt_mean_ms"] is not None and s["received"]]
    one = len(streams) == 1
    metrics |= {
        "rtt_min_ms": min((s["rtt_min_ms"] for s in timed), default=None),
        "rtt_mean_ms": round(
            sum(s["rtt_mean_ms"] * s["received"] for s in timed) / sum(s["received"] for s in timed), 6
        )
        if timed
        else None,
        # Percentiles do not combine across streams: per stream only.
        "rtt_p50_ms": streams[0]["rtt_p50_ms"] if one else None,
        "rtt_p90_ms": streams[0]["rtt_p90_ms"] if one else None,
        "rtt_p99_ms": streams[0]["rtt_p99_ms"] if one else None,
        "rtt_max_ms": max((s["rtt_max_ms"] for s in timed), default=None),
    }
    return metrics


def _refuse_unsendable(t: UdpEcho, index: int, source: str | Path | None) -> None:
    """InputError for a payload too small for the probe header, or no gap between datagrams."""
    from qoslab.backends.sim import LocatedProblems

    out = LocatedProblems(source)
    if t.payload < PROBE_HEADER:
        out.add(
            ("test", index, "payload"),
            "too small for the test datagram's sequence number and timestamp",
            expected=f"at least {PROBE_HEADER} bytes",
            found=f"{t.payload} bytes",
        )
    if t.gap <= 0:
        out.add(
            ("test", index, "gap"),
            "an echo test paces its datagrams",
            expected="a time above 0, e.g. '1 ms'",
            found=f"{t.gap} ns",
        )
    out.raise_if_any()


def plan(net: Network, index: int, *, source: str | Path | None = None) -> Plan:
    """The flows of a ``udp.echo`` test: a learning ping, then the echoed streams."""
    t = test_of(net, index, UdpEcho)
    _refuse_unsendable(t, index, source)
    src, dst = endpoints(net, index, source=source)
    mtu = next((p.mtu for p in net.ports[src] if p.address is not None), 1500)
    frame = wire_bytes(t.payload, mtu)
    start = LEARNING_NS
    interval_ns = t.count * t.gap
    ports = [t.port + k for k in range(t.streams)]
    measured = [1 + k for k in range(t.streams)]
    flows: list[Flow] = [
        learning_ping(LEARNING, src, dst),
    ]
    flows += [
        plan_models.UdpEchoFlow(
            kind="udp-echo",
            id=fid,
            from_=src,
            to=IPv4Address(dst),
            dst_port=port,
            payload=t.payload,
            count=t.count,
            interval_ns=t.gap,
            start_ns=start,
        )
        for fid, port in zip(measured, ports)
    ]
    parameters = {
        "payload_bytes": t.payload,
        "frame_bytes": frame,
        "count": t.count,
        "gap_ms": ms(t.gap),
        "streams": t.streams,
        "offered_fps": round(t.streams * 1e9 / t.gap, 6),
        "offered_mbps": round(t.streams * frame * 8 * 1e3 / t.gap, 6),
        "port": t.port,
        "duration_s": interval_ns / 1e9,
        "destination": dst,
    }

    def _span(f: FlowResult) -> int:
        # The echoes' receiving interval as the simulator measured it (docs/metrics.md#goodput).
        return max(interval_ns, f.receive_interval_ns)

    def records(results: Results) -> list[dict[str, Any]]:
        streams: list[dict[str, Any]] = []
        spans: list[int] = []
        for fid, port in zip(measured, ports):
            f = flow_result(results, fid)
            spans.append(_span(f))
            streams.append(_stream_metrics(f, fid, port, t.payload, spans[-1]))
        metrics = total_metrics(streams, t.payload, max(spans))
        metrics["cpu_util_pct"] = cpu_metrics(net, results)
        record = {
            "test": t.method,
            "name": t.name,
            "from": t.from_,
            "to": t.to,
            "parameters": dict(parameters),
            "metrics": metrics,
            "streams": streams,
        }
        record["ipsec"] = ipsec_metrics(results)
        return [record]

    stop = start + interval_ns
    windows = [window(fid, stop, stop + DRAIN_NS) for fid in measured]
    return Plan(
        flows,
        stop + DRAIN_NS,
        records,
        measured,
        cpu_window_ns=(start, stop),
        windows=windows,
        parameters=parameters,  # the emulation backend's record prints them too
    )
