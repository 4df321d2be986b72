"""Test methods: what a ``[[test]]`` sends (flows for a backend) and what it measured
(records, one per measured point).

A method turns one test of a scenario into a :class:`Plan`: the flows one simulation
run carries, how long the run lasts, and how to read the run's results back into
records ``{"test", "name", "from", "to", "parameters": {…}, "metrics": {…}}`` with the
units in the metric names (``throughput_mbps``, ``latency_ms``, ``loss_pct``,
``jitter_ms``, ``cpu_util_pct``), as DESIGN.md's ``qoslab run --json`` contract asks.

Methods that run now: ``udp.flow`` (:mod:`qoslab.methods.udp`), ``udp.echo``
(:mod:`qoslab.methods.echo`), ``ping`` (:mod:`qoslab.methods.ping`), ``tcp.bulk`` and
``tcp.transfer`` (:mod:`qoslab.methods.tcp`), ``pcap.replay``
(:mod:`qoslab.methods.pcap_replay`). The RFC 2544 benchmarks
(:mod:`qoslab.methods.rfc2544`) need several simulations each: their plan is a
:class:`Search`, whose trials run one after another.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from ipaddress import IPv4Address
from pathlib import Path
from typing import TYPE_CHECKING, Any

from qoslab.plan import Flow
from qoslab.plan import models as plan_models

if TYPE_CHECKING:
    from qoslab.backends.sim import Network
    from qoslab.methods.rfc2544 import Trials
    from qoslab.plan.results_models import NodeResult, Results

NOT_YET: dict[str, str] = {}
"""Methods ``qoslab run`` does not run yet, and what will add them."""

LEARNING_NS = 1_000_000_000
"""Time between the learning frames and a trial: RFC 2544 §23 sends learning frames
first so that ARP and bridge tables are filled before frames are counted."""

DRAIN_NS = 2_000_000_000
"""RFC 2544 §23: wait two seconds after a trial for residual frames (the default ``wait``
of the UDP and RFC 2544 tests; docs/metrics.md#window)."""


def learning_ping(flow_id: int, src: int, dst: str) -> plan_models.PingFlow:
    """The flow of one 56-octet ping from node ``src`` to ``dst`` at time 0, a test's
    learning frame: RFC 2544 §23 sends learning frames before a trial so that ARP and
    the bridges' tables are filled before anything is counted (the measured traffic
    starts at :data:`LEARNING_NS`)."""
    return plan_models.PingFlow(
        kind="ping",
        id=flow_id,
        from_=src,
        to=IPv4Address(dst),
        count=1,
        interval_ns=1_000_000_000,
        payload=56,
        start_ns=0,
    )


def window(flow_id: int, stop_ns: int, end_ns: int) -> plan_models.WindowConfig:
    """A flow's measurement window (``SimConfig.windows``, docs/metrics.md#window): the
    sending stops at ``stop_ns``; arrivals after ``end_ns`` are late (lost)."""
    return plan_models.WindowConfig(flow=flow_id, stop_ns=int(stop_ns), end_ns=int(end_ns))


@dataclass
class Plan:
    """One test made runnable: its flows, the run's length, and how to read the results."""

    flows: list[Flow]
    duration_ns: int
    records: Callable[[Results], list[dict[str, Any]]]
    measured: list[int] = field(default_factory=list)
    """Ids of the flows the records report (not the learning frames)."""
    cpu_window_ns: tuple[int, int] | None = None
    """[from, until) of the test's traffic: CPU utilisation is reported over it (see
    :func:`cpu_metrics`); None = over the whole run."""
    windows: list[plan_models.WindowConfig] = field(default_factory=list)
    """The measured flows' measurement windows (:func:`window`)."""
    parameters: dict[str, Any] = field(default_factory=dict)
    """The test's parameters as its records print them (a backend that measures the
    test with other tools, qoslab.backends.emu, writes them into its records too)."""


@dataclass
class Search:
    """A test made runnable that takes several simulations (RFC 2544's trials).

    ``trials`` (:class:`qoslab.methods.rfc2544.Trials`) runs them; ``flows`` are the
    last trial's flows, so a display of the last run can label them.
    """

    trials: Trials
    measured: list[int] = field(default_factory=lambda: [1, 2, 11, 12, 21, 22])

    @property
    def flows(self) -> list[Flow]:
        return self.trials.last_flows


def records_by_flow(plan: Plan | Search, records: list[dict[str, Any]]) -> dict[int, dict[str, Any]]:
    """Each measured flow's record, for a display of the run: a record's ``streams`` (one
    entry per flow, with ``flow``: udp.echo's) when it has them, else the one record for
    every flow (a TCP test's parallel streams), else the records in the order of the
    plan's ``measured`` flows. A search's records (RFC 2544: one result per frame size,
    from many trials) belong to no single trial: its last trial's flows, shown in
    detail, get none, and show their own figures."""
    if isinstance(plan, Search):
        return {}
    by_flow = {s["flow"]: {"metrics": s} for r in records for s in r.get("streams", []) if "flow" in s}
    if by_flow:
        return by_flow
    if len(records) == 1:
        # One record for all of a test's flows (a TCP test's parallel streams).
        return {fid: records[0] for fid in plan.measured}
    return dict(zip(plan.measured, records))


def test_label(scenario: Any, index: int) -> str:
    """``test[0] ping ws2 → ws1`` or the test's name."""
    t = scenario.test[index]
    return t.name or f"test[{index}] {t.method} {t.from_} → {t.to}"


def _not_yet(method: str) -> str:
    return f"{method} is not run by the simulator yet: {NOT_YET[method]}"


def check_runnable(scenario: Any, *, source: str | Path | None = None) -> None:
    """Refuse, at once, every test no method runs yet (exit 2 in the CLI)."""
    from qoslab.backends.sim import LocatedProblems

    out = LocatedProblems(source)
    for i, t in enumerate(scenario.test):
        if t.method in NOT_YET:
            out.add(
                ("test", i, "method"), _not_yet(t.method), expected="a method the simulator runs", found=repr(t.method)
            )
    out.raise_if_any()


def plan_test(net: Network, index: int, *, source: str | Path | None = None, seed: int | None = None) -> Plan | Search:
    """The :class:`Plan` of ``net.scenario.test[index]``.

    Raises
    ------
    InputError
        If no method runs this test yet, or its parameters cannot be sent.
    """
    from qoslab.methods import echo, pcap_replay, ping, tcp, udp

    t = net.scenario.test[index]
    if t.method in NOT_YET:
        from qoslab.backends.sim import LocatedProblems

        out = LocatedProblems(source)
        out.add(
            ("test", index, "method"), _not_yet(t.method), expected="a method the simulator runs", found=repr(t.method)
        )
        out.raise_if_any()
    if t.method.startswith("rfc2544."):
        from qoslab.methods.rfc2544 import Trials

        return Search(Trials(net, index, seed=seed, source=source))
    if t.method == "udp.flow":
        return udp.plan(net, index, source=source)
    if t.method == "udp.echo":
        return echo.plan(net, index, source=source)
    if t.method == "ping":
        return ping.plan(net, index, source=source)
    if t.method in ("tcp.bulk", "tcp.transfer"):
        return tcp.plan(net, index, source=source)
    if t.method == "pcap.replay":
        return pcap_replay.plan(net, index, source=source)
    raise AssertionError(f"no plan for method {t.method!r}")  # every method is either planned or in NOT_YET


def cpu_metrics(net: Network, results: Results) -> dict[str, float]:
    """``{node: cpu_util_pct}`` of the nodes whose CPU is modelled (hz > 0): over the
    plan's CPU window (the test's traffic) when the run had one, else the whole run."""
    modelled = {n.name for n in net.config.nodes if n.cpu.hz > 0}

    def util(n: NodeResult) -> float:
        window = n.cpu_utilization_window
        return float(window if window is not None else n.cpu_utilization)

    return {n.name: round(100.0 * util(n), 3) for n in results.nodes if n.name in modelled}


def ipsec_metrics(results: Results) -> list[dict[str, Any]]:
    """Per IPsec tunnel end: ``node``, the tunnel's ``name``, mode, protocol, SPIs, and the
    packets and bytes its SAs sealed and opened (what each VPN carried)."""
    from qoslab.methods.common import sa_row

    return [{"node": n.name, **sa_row(sa)} for n in results.nodes for sa in n.ipsec]


__all__ = [
    "Plan",
    "Search",
    "window",
    "plan_test",
    "check_runnable",
    "test_label",
    "records_by_flow",
    "cpu_metrics",
    "ipsec_metrics",
    "NOT_YET",
    "LEARNING_NS",
    "DRAIN_NS",
]
