"""``udp.flow``: a one-way stream of UDP test frames at a constant rate, or back to back.

Each datagram carries a sequence number and its send time, as an IXIA or iperf test
frame does, so the receiver counts losses and one-way latency.

Rates count Ethernet frames as RFC 2544 and testers count them: the frame from the
destination MAC through the FCS, without preamble and inter-frame gap. A UDP payload
of P bytes travels in a frame of P + 8 (UDP) + 20 (IPv4) + 18 (Ethernet header and
FCS) bytes, so RFC 2544's 1518-byte frame carries 1472 payload bytes (and its 64-byte
frame 18). A datagram larger than the sender's MTU is fragmented (RFC 791 §3.2): each
fragment is a frame of its own and counts its own headers.

``rate = "0 bps"`` or ``gap = "0 s"`` saturates: the sender keeps its interface queue
full for ``duration``.

The measurement window (docs/metrics.md#window) opens at the first send and closes
``wait`` (2 s, RFC 2544 §23's wait) after the sending stops; the run ends there. A
datagram still on the way then is lost. Rates are over the receiving interval
(docs/metrics.md#goodput): never shorter than the sending interval, and as long as the
arrivals took, so a queue that drains after the sending stopped is not counted as
capacity. ``drained`` counts the datagrams that arrived after the sending stopped.
"""

from __future__ import annotations

import math
from ipaddress import IPv4Address
from pathlib import Path
from typing import TYPE_CHECKING, Any

from qoslab.methods import LEARNING_NS, Plan, cpu_metrics, learning_ping, window
from qoslab.methods.common import RawMacs, count_metrics, endpoints, flow_result, ms, raw_stream_macs, test_of
from qoslab.plan import Flow
from qoslab.plan import models as plan_models
from qoslab.scenario.test_tables import UdpFlow

if TYPE_CHECKING:
    from qoslab.backends.sim import Network
    from qoslab.plan.results_models import FlowResult, Results

UDP_HEADER = 8  # RFC 768
IPV4_HEADER = 20  # RFC 791 §3.1, no options
ETHERNET_OVERHEAD = 18  # IEEE 802.3 §3.1.1: 14-byte header, 4-byte FCS
PROBE_HEADER = 16
"""Sequence number and send time at the start of every payload (crates/sim, ``FlowConfig::Udp``)."""
DST_PORT = 5001
"""iperf's default port; any port the receiver does not answer on would do."""
MEASURED, LEARNING = 1, 0


def wire_bytes(payload: int, mtu: int) -> int:
    """Ethernet frame bytes (header through FCS) one datagram of ``payload`` bytes takes.

    >>> wire_bytes(1472, 1500), wire_bytes(18, 1500)
    (1518, 64)
    >>> wire_bytes(1473, 1500)  # two fragments: 1480 + 1 bytes of the UDP datagram
    1557
    """
    datagram = payload + UDP_HEADER
    per_fragment = (mtu - IPV4_HEADER) // 8 * 8
    fragments = max(1, math.ceil(datagram / per_fragment))
    return datagram + fragments * (IPV4_HEADER + ETHERNET_OVERHEAD)


def _flows(src: int, dst: str, t: UdpFlow, pps: float, start: int, stop: int, macs: RawMacs) -> list[Flow]:
    """A learning ping, then the measured stream (with ``macs``, a tester's raw stream's
    ``dst_mac`` and ``src_mac``: :func:`~qoslab.methods.common.raw_stream_macs`)."""
    return [
        learning_ping(LEARNING, src, dst),
        macs.apply(
            plan_models.UdpFlow(
                kind="udp",
                id=MEASURED,
                from_=src,
                to=IPv4Address(dst),
                dst_port=DST_PORT,
                payload=t.payload,
                rate_pps=pps,
                start_ns=start,
                stop_ns=stop,
                dont_fragment=t.dont_fragment,
            )
        ),
    ]


def _flow_metrics(f: FlowResult, frame: int) -> dict[str, Any]:
    """The stream's counts, rates over its receiving interval, latency and jitter."""
    lat = f.latency_ns
    received = f.received
    # The receiving interval (docs/metrics.md#goodput): the sending interval, or the
    # time the arrivals took when a queue stretched them.
    receive_s = f.receive_interval_ns / 1e9
    metrics = {
        **count_metrics(f),
        "throughput_mbps": round(received * frame * 8 / receive_s / 1e6, 6),
        "throughput_fps": round(received / receive_s, 6),
        "goodput_mbps": round(f.bytes_received * 8 / receive_s / 1e6, 6),
        "latency_ms": ms(lat.mean if lat else None),
        "latency_min_ms": ms(lat.min if lat else None),
        "latency_p50_ms": ms(lat.p50 if lat else None),
        "latency_p90_ms": ms(lat.p90 if lat else None),
        "latency_p99_ms": ms(lat.p99 if lat else None),
        "latency_max_ms": ms(lat.max if lat else None),
        "jitter_ms": ms(f.jitter_ns),
    }
    return metrics


def plan(net: Network, index: int, *, source: str | Path | None = None) -> Plan:
    """The flows of a ``udp.flow`` test: learning frames, then the stream."""
    from qoslab.backends.sim import LocatedProblems

    t = test_of(net, index, UdpFlow)
    out = LocatedProblems(source)
    if t.payload < PROBE_HEADER:
        out.add(
            ("test", index, "payload"),
            "too small for the test frame's sequence number and timestamp",
            expected=f"at least {PROBE_HEADER} bytes",
            found=f"{t.payload} bytes",
        )
    src, dst = endpoints(net, index, source=source)
    mtu = next((p.mtu for p in net.ports[src] if p.address is not None), 1500)
    frame = wire_bytes(t.payload, mtu)
    if t.rate is not None:
        pps = t.rate / (8 * frame)
    else:
        pps = 0.0 if not t.gap else 1e9 / t.gap  # the table gives rate or gap (test_tables.UdpFlow)
    start = LEARNING_NS
    if t.count is not None:
        if pps == 0:
            out.add(
                ("test", index, "count"),
                "a saturating stream cannot be bounded by a count",
                expected="a rate or gap above 0 with count, or duration alone",
                found=f"count = {t.count}",
            )
            pps = 1.0
        stop = start + round((t.count - 0.5) * 1e9 / pps)
    else:
        stop = start + t.duration
    out.raise_if_any()
    flows = _flows(src, dst, t, pps, start, stop, raw_stream_macs(net, index, source=source))
    interval_s = (stop - start) / 1e9
    wait = int(t.wait)
    parameters = {
        "payload_bytes": t.payload,
        "frame_bytes": frame,
        "offered_mbps": round(pps * frame * 8 / 1e6, 6) if pps else None,
        "offered_fps": round(pps, 6) if pps else None,
        "saturate": pps == 0,
        "duration_s": interval_s,
        "wait_s": wait / 1e9,
        "destination": dst,
    }

    def records(results: Results) -> list[dict[str, Any]]:
        f = flow_result(results, MEASURED)
        sent = f.sent
        metrics = _flow_metrics(f, frame)
        metrics["cpu_util_pct"] = cpu_metrics(net, results)
        receive_s = metrics["receive_interval_s"]
        record = {
            "test": t.method,
            "name": t.name,
            "from": t.from_,
            "to": t.to,
            "parameters": dict(parameters),
            "metrics": metrics,
        }
        record["iperf3"] = iperf3_end(sent, t.payload, interval_s, f.bytes_received, receive_s, metrics)
        return [record]

    return Plan(
        flows, stop + wait, records, [MEASURED], windows=[window(MEASURED, stop, stop + wait)], parameters=parameters
    )


def iperf3_end(
    sent: int, payload: int, send_s: float, bytes_received: int, receive_s: float, metrics: dict[str, Any]
) -> dict[str, Any]:
    """The record's numbers in the shape and names of ``iperf3 -u --json``'s ``end``
    (iperf3 3.12): ``sum_sent`` (the sender: datagrams and payload bytes sent over the
    sending interval), ``sum_received`` (the receiver: payload bytes over the receiving
    interval, jitter, lost datagrams) and ``sum`` (what iperf3's client prints: the
    sender's bytes with the receiver's jitter and loss), so that a script or a ``jq``
    recipe written for iperf3 (``.end.sum_received.bits_per_second``) reads a qoslab
    record's ``iperf3`` the same way. Bytes are UDP payload, as iperf3 counts them;
    ``packets`` and ``lost_packets`` count datagrams. One source: the values are the
    metrics above, renamed (docs/metrics.md#goodput, #loss-each-way, #jitter)."""
    bytes_sent = sent * payload
    lost = metrics["lost"]
    loss_pct = metrics["loss_pct"] if metrics["loss_pct"] is not None else 0.0
    jitter = metrics["jitter_ms"] if metrics["jitter_ms"] is not None else 0.0

    def block(seconds: float, nbytes: int, sender: bool, with_loss: bool) -> dict[str, Any]:
        return {
            "start": 0,
            "end": seconds,
            "seconds": seconds,
            "bytes": nbytes,
            "bits_per_second": nbytes * 8 / seconds if seconds else 0.0,
            "jitter_ms": jitter if with_loss else 0,
            "lost_packets": lost if with_loss else 0,
            "packets": sent,
            "lost_percent": loss_pct if with_loss else 0,
            "sender": sender,
        }

    sum_sent = block(send_s, bytes_sent, True, False)
    sum_received = block(receive_s, bytes_received, False, True)
    return {
        "end": {
            "sum": {**sum_sent, "jitter_ms": jitter, "lost_packets": lost, "lost_percent": loss_pct},
            "sum_sent": sum_sent,
            "sum_received": sum_received,
        }
    }
