"""Test methods: what a ``[[test]]`` sends (flows for a backend) and what it measured
(records, one per measured point).

A method turns one test of a scenario into a :class:`Plan`: the flows one simulation
run carries, how long the run lasts, and how to read the run's results back into
records ``{"test", "name", "from", "to", "parameters": {…}, "metrics": {…}}`` with the
units in the metric names (``throughput_mbps``, ``latency_ms``, ``loss_pct``,
``jitter_ms``, ``cpu_util_pct``), as DESIGN.md's ``qoslab run --json`` contract asks.

Methods that run now: ``udp.flow`` (:mod:`qoslab.methods.udp`), ``udp.echo``
(:mod:`qoslab.methods.echo`), ``ping`` (:mod:`qoslab.methods.ping`), ``tcp.bulk`` and
``tcp.transfer`` (:mod:`qoslab.methods.tcp`). The RFC 2544 benchmarks
(:mod:`qoslab.methods.rfc2544`) need several simulations each: their plan is a
:class:`Search`, whose trials run one after another.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:
    from qoslab.backends.sim import Network

NOT_YET: dict[str, str] = {}
"""Methods ``qoslab run`` does not run yet, and what will add them."""

LEARNING_NS = 1_000_000_000
"""Time between the learning frames and a trial: RFC 2544 §23 sends learning frames
first so that ARP and bridge tables are filled before frames are counted."""

DRAIN_NS = 2_000_000_000
"""RFC 2544 §23: wait two seconds after a trial for residual frames."""


@dataclass
class Plan:
    """One test made runnable: its flows, the run's length, and how to read the results."""

    flows: list[dict[str, Any]]
    duration_ns: int
    records: Callable[[dict[str, Any]], list[dict[str, Any]]]
    measured: list[int] = field(default_factory=list)
    """Ids of the flows the records report (not the learning frames)."""


@dataclass
class Search:
    """A test made runnable that takes several simulations (RFC 2544's trials).

    ``trials`` (:class:`qoslab.methods.rfc2544.Trials`) runs them; ``flows`` are the
    last trial's flows, so a display of the last run can label them.
    """

    trials: Any
    measured: list[int] = field(default_factory=lambda: [1, 2, 11, 12, 21, 22])

    @property
    def flows(self) -> list[dict[str, Any]]:
        return self.trials.last_flows


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
            out.add(("test", i, "method"), _not_yet(t.method), expected="a method the simulator runs", found=repr(t.method))
    out.raise_if_any()


def plan_test(net: "Network", index: int, *, source: str | Path | None = None, seed: int | None = None) -> "Plan | Search":
    """The :class:`Plan` of ``net.scenario.test[index]``.

    Raises
    ------
    InputError
        If no method runs this test yet, or its parameters cannot be sent.
    """
    from qoslab.methods import echo, ping, tcp, udp

    t = net.scenario.test[index]
    if t.method in NOT_YET:
        from qoslab.backends.sim import LocatedProblems

        out = LocatedProblems(source)
        out.add(("test", index, "method"), _not_yet(t.method), expected="a method the simulator runs", found=repr(t.method))
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
    raise AssertionError(f"no plan for method {t.method!r}")  # every method is either planned or in NOT_YET


def cpu_metrics(net: "Network", results: dict[str, Any]) -> dict[str, float]:
    """``{node: cpu_util_pct}`` of the nodes whose CPU is modelled (hz > 0)."""
    modelled = {n["name"] for n in net.config["nodes"] if n["cpu"]["hz"] > 0}
    return {n["name"]: round(100.0 * float(n.get("cpu_utilization", 0.0)), 3) for n in results.get("nodes", []) if n["name"] in modelled}


__all__ = ["Plan", "Search", "plan_test", "check_runnable", "test_label", "cpu_metrics", "NOT_YET", "LEARNING_NS", "DRAIN_NS"]
