"""TCP methods: ``tcp.bulk`` (iperf3-like: send for a time, report goodput) and
``tcp.transfer`` (ttcp-like: send N bytes, report the time and rate).

The simulator runs the sans-IO TCP of ``crates/sim/src/tcp`` (RFC 9293, NewReno per
RFC 6582, CUBIC per RFC 9438, SACK per RFC 2018/6675, RTO per RFC 6298) with Linux's
defaults unless the test says otherwise. Goodput is the bytes delivered in order to the
receiver over the time from the connection's start to the last byte delivered.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from qoslab.methods import DRAIN_NS, Plan, cpu_metrics
from qoslab.methods.common import endpoints, flow_result, ms

if TYPE_CHECKING:
    from qoslab.backends.sim import Network

FLOW = 0
PORT = 5201  # iperf3's default port
START_NS = 100_000_000
"""The connection opens 100 ms into the run, after nothing: ARP is part of the transfer, as in a real run."""


def _options(t: Any, scenario: Any = None) -> dict[str, Any]:
    options: dict[str, Any] = {"congestion": "newreno" if t.congestion in ("reno", "newreno") else "cubic"}
    if getattr(t, "mss", None):
        options["mss"] = int(t.mss)
    if t.window:
        # iperf -w sets both socket buffers; a fixed window (seed 004's NetBSD) caps it.
        options.update(send_buffer=int(t.window), recv_buffer=int(t.window), max_window=int(t.window), window_scaling=int(t.window) > 65535)
    elif scenario is not None:
        # The hosts' socket buffers (seed 001: SO_SNDBUF at the sender, SO_RCVBUF at the
        # receiver, the window the receiver offers at most).
        send = getattr(scenario.node.get(t.from_), "socket_buffer", None)
        recv = getattr(scenario.node.get(t.to), "socket_buffer", None)
        if send:
            options["send_buffer"] = int(send)
        if recv:
            options.update(recv_buffer=int(recv), max_window=int(recv), window_scaling=int(recv) > 65535)
    return options


def _fit_segments_to_buffers(net: "Network", src: int, options: dict[str, Any]) -> None:
    """A buffer smaller than one full segment (seed 001: 16 KiB buffers with a 64 K MTU)
    makes every segment as large as the buffer: a sender never sends more than the window
    the receiver offers, and RFC 1122 §4.2.3.4's sender SWS avoidance sends a segment as
    soon as it fills the largest window seen."""
    if options.get("mss"):
        return
    mtus = [p.mtu for p in net.ports[src] if p.address is not None]
    buffers = [options[k] for k in ("send_buffer", "recv_buffer") if options.get(k)]
    if mtus and buffers and min(buffers) < min(mtus) - 40:
        options["mss"] = min(buffers)


def plan(net: "Network", index: int, *, source: str | Path | None = None) -> Plan:
    """The flow of a ``tcp.bulk`` or ``tcp.transfer`` test."""
    t = net.scenario.test[index]
    src, dst = endpoints(net, index, source=source)
    options = _options(t, net.scenario)
    _fit_segments_to_buffers(net, src, options)
    streams = getattr(t, "streams", 1)
    if t.method == "tcp.bulk":
        stop = START_NS + int(t.duration)
        # iperf3 -P: parallel connections to consecutive ports.
        flows = [
            {"kind": "tcp", "id": FLOW + i, "from": src, "to": dst, "dst_port": PORT + i, "start_ns": START_NS, "stop_ns": stop, "tcp": options}
            for i in range(streams)
        ]
        duration = stop + DRAIN_NS
        parameters = {"duration_s": int(t.duration) / 1e9, "window_bytes": t.window, "streams": streams, "congestion": options["congestion"], "destination": dst}
    else:
        # A sized transfer has as long as it needs; the run stops an hour in at most.
        stop = START_NS + 3600 * 1_000_000_000
        flows = [{"kind": "tcp", "id": FLOW, "from": src, "to": dst, "dst_port": PORT, "bytes": int(t.bytes), "start_ns": START_NS, "stop_ns": stop, "tcp": options}]
        duration = stop
        parameters = {"bytes": int(t.bytes), "window_bytes": t.window, "congestion": options["congestion"], "destination": dst}

    def records(results: dict[str, Any]) -> list[dict[str, Any]]:
        each = [flow_result(results, f["id"]) for f in flows]
        f = each[0]
        tcp = f.get("tcp") or {}
        metrics: dict[str, Any] = {
            "throughput_mbps": round(sum(float(x["throughput_bps"]) for x in each) / 1e6, 6),
            "bytes_received": sum(x["bytes_received"] for x in each),
            "retransmits": sum((x.get("tcp") or {}).get("retransmits") or 0 for x in each),
            "timeouts": sum((x.get("tcp") or {}).get("timeouts") or 0 for x in each),
            "srtt_ms": ms(tcp.get("srtt_ns")),
        }
        if t.method == "tcp.transfer":
            done = tcp.get("completed_ns")
            metrics["transfer_time_s"] = None if done is None else round((done - START_NS) / 1e9, 9)
            metrics["completed"] = done is not None
        metrics["cpu_util_pct"] = cpu_metrics(net, results)
        return [{"test": t.method, "name": t.name, "from": t.from_, "to": t.to, "parameters": dict(parameters), "metrics": metrics}]

    return Plan(flows, duration, records, [f["id"] for f in flows])
