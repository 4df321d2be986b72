"""TCP methods: ``tcp.bulk`` (iperf3-like: send for a time, report goodput) and
``tcp.transfer`` (ttcp-like: send N bytes, report the time and rate).

The simulator runs the sans-IO TCP of ``crates/sim/src/tcp`` (RFC 9293, NewReno per
RFC 6582, CUBIC per RFC 9438, SACK per RFC 2018/6675, RTO per RFC 6298) with Linux's
defaults unless the test says otherwise. Goodput is the bytes delivered in order to the
receiver over the time from the connection's start to the last byte delivered.

Path MTU: each record says where the sender's path MTU ended (``path_mtu_bytes``, the IP
size of its full segments), the ICMP "fragmentation needed" it accepted and the routers
sent (RFC 1191), the black holes its MTU probing detected (RFC 4821, Linux
``tcp_mtu_probing``) and the longest time the receiver got nothing new
(``longest_stall_s``): a PMTU black hole shows as a stall to the end (``stalled``).
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


MS = 1_000_000

STACKS: dict[str, dict[str, Any]] = {
    "linux": {},
    # NetBSD 1.1 (1995), seed 004's laptops: the 4.4BSD-Lite TCP.
    "netbsd-1.1": {
        # 4.4BSD tcp_fasttimo runs every 200 ms (PR_FASTHZ = 5) and sends the delayed
        # ACKs; a second full segment is acknowledged at once (tcp_output's window rule).
        "delayed_ack_ns": 200 * MS,
        # TCPTV_MIN: 2 slow-timer ticks of 500 ms (PR_SLOWHZ = 2), so the RTO is >= 1 s.
        "min_rto_ns": 1000 * MS,
        # SACK (RFC 2018, 1996) came to NetBSD years later.
        "sack": False,
        # 4.4BSD-Lite implements RFC 1323, but seed 004 says the ACKs are "40-byte
        # datagrams comprised of a 20-byte IP header and a 20-byte TCP header, and no
        # data": no timestamp option on the wire, so none here.
        "timestamps": False,
        # 4.4BSD tcp_mss(): snd_cwnd starts at one segment (slow start from 1 MSS).
        "initial_window": 1,
    },
}
"""TCP settings of each ``stack`` of a test, on top of the simulator's Linux defaults
(crates/sim/src/tcp/config.rs)."""


def _options(t: Any) -> dict[str, Any]:
    options: dict[str, Any] = {"congestion": "newreno" if t.congestion in ("reno", "newreno") else "cubic"}
    options.update(STACKS[getattr(t, "stack", "linux")])
    if getattr(t, "mss", None):
        options["mss"] = int(t.mss)
    options.update(pmtu_discovery=t.pmtu_discovery, mtu_probing=t.mtu_probing, base_mss=int(t.base_mss))
    if t.window:
        # iperf -w sets both socket buffers; a fixed window (seed 004's NetBSD) caps it.
        options.update(send_buffer=int(t.window), recv_buffer=int(t.window), max_window=int(t.window), window_scaling=int(t.window) > 65535)
    return options


def plan(net: "Network", index: int, *, source: str | Path | None = None) -> Plan:
    """The flow of a ``tcp.bulk`` or ``tcp.transfer`` test."""
    t = net.scenario.test[index]
    src, dst = endpoints(net, index, source=source)
    options = _options(t)
    streams = getattr(t, "streams", 1)
    if t.method == "tcp.bulk":
        stop = START_NS + int(t.duration)
        # iperf3 -P: parallel connections to consecutive ports.
        flows = [
            {"kind": "tcp", "id": FLOW + i, "from": src, "to": dst, "dst_port": PORT + i, "start_ns": START_NS, "stop_ns": stop, "tcp": options}
            for i in range(streams)
        ]
        duration = stop + DRAIN_NS
        parameters = {"duration_s": int(t.duration) / 1e9, "window_bytes": t.window, "streams": streams, "congestion": options["congestion"], "stack": t.stack, "destination": dst}
    else:
        # A sized transfer has as long as it needs; the run stops an hour in at most.
        stop = START_NS + 3600 * 1_000_000_000
        flows = [{"kind": "tcp", "id": FLOW, "from": src, "to": dst, "dst_port": PORT, "bytes": int(t.bytes), "start_ns": START_NS, "stop_ns": stop, "tcp": options}]
        duration = stop
        parameters = {"bytes": int(t.bytes), "window_bytes": t.window, "congestion": options["congestion"], "stack": t.stack, "destination": dst}

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
        metrics.update(path_metrics(results, each))
        if t.method == "tcp.transfer":
            done = tcp.get("completed_ns")
            metrics["transfer_time_s"] = None if done is None else round((done - START_NS) / 1e9, 9)
            metrics["completed"] = done is not None
        metrics["cpu_util_pct"] = cpu_metrics(net, results)
        return [{"test": t.method, "name": t.name, "from": t.from_, "to": t.to, "parameters": dict(parameters), "metrics": metrics}]

    return Plan(flows, duration, records, [f["id"] for f in flows])


STALL_NS = 1_000_000_000
"""A transfer whose receiver got nothing new for this long at its end counts as stalled."""


def path_metrics(results: dict[str, Any], flows: list[dict[str, Any]]) -> dict[str, Any]:
    """What the senders of ``flows`` (result entries) learned of the path MTU.

    >>> r = {"nodes": [{"frag_needed_sent": 2, "frag_needed_silent": 0}]}
    >>> f = {"tcp": {"path_mtu_bytes": 1400, "mss_bytes": 1348, "frag_needed_received": 1, "black_holes_detected": 0,
    ...      "mtu_probes": 0, "mtu_probes_failed": 0, "longest_stall_ns": 2_000_000, "completed_ns": 5}}
    >>> m = path_metrics(r, [f])
    >>> m["path_mtu_bytes"], m["frag_needed_sent"], m["stalled"]
    (1400, 2, False)
    """
    paths = [x.get("tcp") or {} for x in flows]
    nodes = results.get("nodes", [])
    stall = max((p.get("longest_stall_ns") or 0 for p in paths), default=0)
    # Stalled: a sized transfer that never finished, or an unsized one whose receiver got
    # nothing for a second or more at the end.
    stalled = any(p.get("completed_ns") is None and (p.get("longest_stall_ns") or 0) >= STALL_NS for p in paths)
    return {
        "path_mtu_bytes": min((p.get("path_mtu_bytes") for p in paths if p.get("path_mtu_bytes")), default=None),
        "mss_bytes": min((p.get("mss_bytes") for p in paths if p.get("mss_bytes")), default=None),
        "frag_needed_received": sum(p.get("frag_needed_received") or 0 for p in paths),
        "frag_needed_sent": sum(n.get("frag_needed_sent") or 0 for n in nodes),
        "too_big_dropped_silently": sum(n.get("frag_needed_silent") or 0 for n in nodes),
        "black_holes_detected": sum(p.get("black_holes_detected") or 0 for p in paths),
        "mtu_probes": sum(p.get("mtu_probes") or 0 for p in paths),
        "mtu_probes_failed": sum(p.get("mtu_probes_failed") or 0 for p in paths),
        "longest_stall_s": round(stall / 1e9, 9),
        "stalled": stalled,
    }
