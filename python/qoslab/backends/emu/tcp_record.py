"""A ``tcp.bulk`` record read from iperf3's JSON (3.12, Linux), with the simulator's
keys (:mod:`qoslab.methods.tcp`).

Which iperf3 field each metric is (docs/metrics.md "The emulation backend"):

- goodput (``throughput_mbps``, receiver ``bytes``/``bits_per_second``, ``window_s``):
  the receiver's ``end.sum_received`` and ``end.streams[].receiver`` (data octets the
  server read, over the server's test time);
- ``retransmits``: the sender's ``tcpi_total_retrans`` (``sum_sent.retransmits``);
- ``max_cwnd_bytes``, ``min/mean/max_rtt_ms``: the sender's ``max_snd_cwnd``,
  ``min_rtt``, ``mean_rtt``, ``max_rtt`` (µs); ``srtt_ms`` the last interval's ``rtt``;
- ``mss_bytes``: ``start.tcp_mss_default``; ``path_mtu_bytes``: the last interval's
  ``pmtu`` (``tcpi_pmtu``);
- intervals: ``bytes`` and ``bits_per_second`` from the server's intervals (what the
  receiver read in each), ``sent_bytes``, ``retransmits``, ``snd_cwnd_bytes`` and
  ``rtt_ms`` from the client's.

What iperf3 does not report is None: bytes acknowledged, bytes handed to IP with
retransmissions, bytes after the stop, the kinds of retransmission, stalls and ICMP
counts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from qoslab.methods import Plan

US_PER_MS = 1000.0


def _ms(us: Any) -> float | None:
    return None if us is None else round(float(us) / US_PER_MS, 6)


def _stream(i: int, client: dict[str, Any]) -> dict[str, Any]:
    """One connection's ``streams[]`` entry (the simulator's ``_stream_summary`` keys)."""
    sender, receiver = client.get("sender") or {}, client.get("receiver") or {}
    return {
        "id": i,
        "start_s": 0.0,
        "end_s": round(float(receiver.get("seconds", 0.0)), 9),
        "sender": {
            "bytes": None,
            "bits_per_second": None,
            "bytes_sent": None,
            "retransmits": sender.get("retransmits"),
            "fast_retransmits": None,
            "timeouts": None,
            "tlp_probes": None,
            "rack_lost": None,
            "max_snd_cwnd_bytes": sender.get("max_snd_cwnd"),
            "min_rtt_ms": _ms(sender.get("min_rtt")),
            "mean_rtt_ms": _ms(sender.get("mean_rtt")),
            "max_rtt_ms": _ms(sender.get("max_rtt")),
            "hystart_exit": None,
        },
        "receiver": {
            "bytes": receiver.get("bytes"),
            "bits_per_second": receiver.get("bits_per_second"),
            "bytes_after_stop": None,
        },
    }


def _intervals(client: list[dict[str, Any]], server: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """iperf3's intervals in the simulator's shape: the receiver's bytes, the sender's state."""
    out = []
    for k, sent in enumerate(client):
        got = server[k] if k < len(server) else {"streams": []}
        streams = []
        for j, s in enumerate(sent.get("streams") or []):
            r = (got.get("streams") or [])[j] if j < len(got.get("streams") or []) else {}
            streams.append(
                {
                    "id": j,
                    "start_s": round(float(s["start"]), 9),
                    "end_s": round(float(s["end"]), 9),
                    "bytes": r.get("bytes"),
                    "bits_per_second": r.get("bits_per_second"),
                    "sent_bytes": s.get("bytes"),
                    "retransmits": s.get("retransmits"),
                    "snd_cwnd_bytes": s.get("snd_cwnd"),
                    "rtt_ms": _ms(s.get("rtt")),
                }
            )
        total = got.get("sum") or {}
        out.append(
            {
                "streams": streams,
                "sum": {
                    "start_s": round(float((sent.get("sum") or {}).get("start", 0.0)), 9),
                    "end_s": round(float((sent.get("sum") or {}).get("end", 0.0)), 9),
                    "bytes": total.get("bytes"),
                    "bits_per_second": total.get("bits_per_second"),
                    "retransmits": (sent.get("sum") or {}).get("retransmits"),
                },
            }
        )
    return out


def tcp_bulk_record(t: Any, plan: Plan, out: dict[str, Any]) -> dict[str, Any]:
    """The record of ``tcp.bulk`` test ``t`` (its simulator ``plan``) from iperf3's
    client JSON ``out`` (with ``--get-server-output``)."""
    end = out.get("end") or {}
    received, sent = end.get("sum_received") or {}, end.get("sum_sent") or {}
    streams = end.get("streams") or []
    client_intervals = out.get("intervals") or []
    last = (client_intervals[-1].get("streams") or [{}]) if client_intervals else [{}]
    senders = [s.get("sender") or {} for s in streams]
    metrics: dict[str, Any] = {
        "throughput_mbps": round(float(received.get("bits_per_second", 0.0)) / 1e6, 6),
        "window_s": round(float(received.get("seconds", 0.0)), 9),
        "bytes_received": received.get("bytes"),
        "bytes_after_stop": None,
        "bytes_acked": None,
        "bytes_sent": None,
        "retransmits": sent.get("retransmits"),
        "fast_retransmits": None,
        "timeouts": None,
        "tlp_probes": None,
        "rack_lost": None,
        "srtt_ms": _ms(last[0].get("rtt")),
        "max_cwnd_bytes": max((int(s.get("max_snd_cwnd") or 0) for s in senders), default=0),
        # No PPP link to wait for: the client starts as soon as the server listens.
        "link_wait_s": 0.0,
        "path_mtu_bytes": min((int(s["pmtu"]) for s in last if s.get("pmtu")), default=None),
        "mss_bytes": (out.get("start") or {}).get("tcp_mss_default"),
        "frag_needed_received": None,
        "frag_needed_sent": None,
        "too_big_dropped_silently": None,
        "black_holes_detected": None,
        "mtu_probes": None,
        "mtu_probes_failed": None,
        "longest_stall_s": None,
        "stalled": None,
        "cpu_util_pct": {},
    }
    record: dict[str, Any] = {
        "test": t.method,
        "name": t.name,
        "from": t.from_,
        "to": t.to,
        "parameters": dict(plan.parameters),
        "metrics": metrics,
        "streams": [_stream(i, s) for i, s in enumerate(streams)],
    }
    if plan.parameters.get("interval_s"):
        server_intervals = ((out.get("server_output_json") or {}).get("intervals")) or []
        record["intervals"] = _intervals(client_intervals, server_intervals)
    if getattr(t, "trace", False):
        for stream in record["streams"]:
            stream["trace"] = None  # the sender's per-ACK trace is the simulator's; iperf3 has none
    return record
