"""What the methods share: endpoints of a test, latency statistics in milliseconds."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

from qoslab.scenario.test_tables import TestBase

if TYPE_CHECKING:
    from qoslab.backends.sim import Network
    from qoslab.plan import models as plan_models
    from qoslab.plan.results_models import (
        AdaptiveRouterCounters,
        ArqCountersResult,
        BridgeEntry,
        FlowResult,
        Results,
        SaReport,
        TableEntry,
    )

NS_PER_MS = 1_000_000

TestT = TypeVar("TestT", bound=TestBase)


def test_of(net: Network, index: int, kind: type[TestT]) -> TestT:
    """Test ``index`` of the network's scenario as the method planning it reads it.

    :func:`qoslab.methods.plan_test` picks the method by the test's ``method``, so a
    test of another kind here is a bug in that dispatch, not bad input: TypeError."""
    t = net.scenario.test[index]
    if not isinstance(t, kind):
        raise TypeError(f"test[{index}] is a {t.method!r} test, which this method does not plan")
    return t


def endpoints(net: Network, index: int, *, source: str | Path | None = None) -> tuple[int, str]:
    """(sender's node index, receiver's address) of test ``index``; InputError if either has no address."""
    from qoslab.backends.sim import LocatedProblems

    t = net.scenario.test[index]
    out = LocatedProblems(source)
    if not net.addresses.get(t.from_):
        out.add(
            ("test", index, "from"),
            "the sender has no IP address to send from",
            expected="a node with an address",
            found=repr(t.from_),
        )
    dst = net.destination(t.from_, t.to)
    if dst is None:
        out.add(
            ("test", index, "to"),
            "the receiver has no IP address to send to",
            expected="a node with an address",
            found=repr(t.to),
        )
    out.raise_if_any()
    return net.node_index(t.from_), str(dst)


class RawMacs(NamedTuple):
    """A tester's raw stream's MACs, as the plan's ``FlowConfig::Udp`` takes them (six
    octets each); both None for a stream resolved by ARP."""

    dst_mac: list[int] | None = None
    src_mac: list[int] | None = None

    def apply(self, flow: plan_models.UdpFlow) -> plan_models.UdpFlow:
        """``flow`` with the MACs given set (only those: an ARP-resolved stream's plan has
        neither key, and the core takes its default)."""
        from qoslab.plan import models as plan_models

        if self.dst_mac is not None:
            flow.dst_mac = [plan_models.DstMacItem(o) for o in self.dst_mac]
        if self.src_mac is not None:
            flow.src_mac = [plan_models.SrcMacItem(o) for o in self.src_mac]
        return flow


def raw_stream_macs(net: Network, index: int, *, source: str | Path | None = None) -> RawMacs:
    """The ``dst_mac`` and ``src_mac`` of test ``index``'s frames (:class:`RawMacs`).
    A MAC is written as given; 'node/port' is that port's MAC. InputError (at the key)
    for a node or port that does not exist."""
    from qoslab.backends.sim import LocatedProblems

    t = net.scenario.test[index]
    out = LocatedProblems(source)
    macs: dict[str, list[int]] = {}
    for key in ("dst_mac", "src_mac"):
        text = getattr(t, key, None)
        if text is None:
            continue
        if "/" not in text:
            macs[key] = [int(octet, 16) for octet in text.replace("-", ":").split(":")]
            continue
        node, port = text.split("/", 1)
        if node not in net.scenario.node:
            out.add(
                ("test", index, key),
                "unknown node in a port reference",
                expected="'node/port' with a node of [node.*]",
                found=repr(text),
            )
            continue
        ports = net.ports[net.node_index(node)]
        hit = next((p for p in ports if p.name == port), None)
        if hit is None:
            out.add(
                ("test", index, key),
                f"node {node!r} has no port {port!r}",
                expected="one of " + ", ".join(f"'{node}/{p.name}'" for p in ports) if ports else "a node with a port",
                found=repr(text),
            )
            continue
        macs[key] = list(hit.mac)
    out.raise_if_any()
    return RawMacs(**macs)


def ms(ns: float | int | None) -> float | None:
    """Nanoseconds as milliseconds, rounded to the nanosecond; None stays None."""
    return None if ns is None else round(float(ns) / NS_PER_MS, 6)


def receive_interval_ns(n: int, first_ns: int | None, last_ns: int | None, sending_ns: int) -> int:
    """The receiving interval of ``n`` arrivals from ``first_ns`` to ``last_ns``
    (docs/metrics.md#goodput; the simulator's ``FlowStats::receive_interval_ns``, for
    arrivals spread over several flows): the span stretched by one mean inter-arrival
    time, ``(last - first) · n / (n - 1)`` rounded up, and never shorter than the sending
    interval ``sending_ns``.

    >>> receive_interval_ns(10, 300, 9300, 10_000)  # a steady flow: its sending interval
    10000
    >>> receive_interval_ns(100, 50, 5000, 1000)  # a drained queue: the time it took
    5000
    """
    if n > 1 and first_ns is not None and last_ns is not None:
        span = max(0, int(last_ns) - int(first_ns))
        return max(int(sending_ns), -(-span * n // (n - 1)))
    return int(sending_ns)


def count_metrics(f: FlowResult) -> dict[str, Any]:
    """The count block of a flow's record, in the records' key order
    (docs/metrics.md#udp-flow): datagrams sent, received, lost, the loss in percent of
    those sent (None when none were), drained and late, and the receiving interval in
    seconds (docs/metrics.md#goodput)."""
    return {
        "sent": f.sent,
        "received": f.received,
        "lost": f.lost,
        "loss_pct": round(100.0 * f.lost / f.sent, 6) if f.sent else None,
        "drained": f.drained,
        "late": f.late,
        "receive_interval_s": f.receive_interval_ns / 1e9,
    }


def flow_result(results: Results, flow_id: int) -> FlowResult:
    """The results entry of flow ``flow_id``."""
    for f in results.flows:
        if f.id == flow_id:
            return f
    raise KeyError(f"the simulator returned no result for flow {flow_id}")


def adaptive_records(results: Results) -> list[dict[str, Any]]:
    """Seed 004's adaptive upstreams of a run (crates/sim/src/node/adaptive_router/mod.rs), times in seconds:
    the channel switches (time, from, to, both ratios), the delivery ratio of each channel
    over time, and the counters."""
    out = []
    for a in results.adaptive or []:
        out.append(
            {
                "node": a.node,
                "peer": a.peer,
                "channel": a.channel,
                "switches": [
                    {
                        "time_s": s.time_ns / 1e9,
                        "from": s.from_,
                        "to": s.to,
                        "radio_ratio": s.radio_ratio,
                        "modem_ratio": s.modem_ratio,
                    }
                    for s in a.switches
                ],
                "ratio_over_time": [
                    {"time_s": s.time_ns / 1e9, "radio": s.radio_ratio, "modem": s.modem_ratio, "channel": s.channel}
                    for s in a.samples
                ],
                "counters": _counters(a.counters),
                "arq": _arq(a.arq_sender),
                "radio_delivered_attempts": list(a.radio_lifetime),
                "modem_delivered_frames": list(a.modem_lifetime),
            }
        )
    return out


ADAPTIVE_COUNTERS = (
    "datagrams",
    "radio_datagrams",
    "modem_datagrams",
    "probes",
    "radio_given_up",
    "modem_delivered",
    "modem_lost",
)
"""An adaptive upstream's counters (crates/sim/src/node/adaptive_router/mod.rs
`AdaptiveRouterCounters`), in the order the core writes them."""

ARQ_COUNTERS = (
    "frames",
    "transmissions",
    "retransmissions",
    "acked",
    "acked_first_try",
    "dropped",
    "stale_acks",
    "delivered",
    "duplicates",
    "too_old",
    "acks_sent",
)
"""The radio ARQ sender's counters (crates/sim/src/node/adaptive_router/mod.rs
`ArqCountersResult`), in the order the core writes them."""

SA_FIELDS = (
    "name",
    "mode",
    "protocol",
    "spi_out",
    "spi_in",
    "sealed_packets",
    "sealed_bytes",
    "opened_packets",
    "opened_bytes",
    "failed",
)
"""One IPsec SA pair's report (crates/sim/src/tunnel/mod.rs `SaReport`), in the order the
core writes it."""


def in_core_order(result: Any, fields: tuple[str, ...]) -> dict[str, Any]:
    """A typed result's ``fields`` as a record prints them, in the order given: the
    core's (its Rust struct's), which the typed models do not keep (they are generated
    from the JSON Schema, whose properties are sorted by name)."""
    return {name: getattr(result, name) for name in fields}


def _counters(c: AdaptiveRouterCounters) -> dict[str, int]:
    """An adaptive upstream's counters, in the order the core writes them."""
    return in_core_order(c, ADAPTIVE_COUNTERS)


def _arq(c: ArqCountersResult) -> dict[str, int]:
    """The radio ARQ sender's counters, in the order the core writes them."""
    return in_core_order(c, ARQ_COUNTERS)


def sa_row(sa: SaReport) -> dict[str, Any]:
    """One IPsec SA pair's report as the records print it, in the order the core writes it."""
    return in_core_order(sa, SA_FIELDS)


def table_rows(table: list[TableEntry]) -> list[dict[str, str]]:
    """An ARP or L3F table as the records print it: ip, mac, port, in the core's order."""
    return [{"ip": e.ip, "mac": e.mac, "port": e.port} for e in table]


def bridge_rows(table: list[BridgeEntry]) -> list[dict[str, str]]:
    """A bridge table as the records print it: mac, port."""
    return [{"mac": e.mac, "port": e.port} for e in table]
