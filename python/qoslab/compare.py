"""``qoslab compare``: one scenario on both backends, several runs each, and every metric
of every test side by side (docs/compare.md defines the statistics, the spread rule and
the reasons).

The simulator runs with seeds ``seed``, ``seed + 1``, … (the scenario's seed first), the
emulation backend as many times with the same seeds for its link emulator's loss
streams. A run's records are matched across backends by their place: the test, its
name, its ends and the record's order among that test's records.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from qoslab.scenario.model import Scenario

SIM_RUNS = 5
"""Seeds the simulator runs by default (it is fast; its spread comes from loss and
contention draws only)."""
EMU_RUNS = 3
"""Runs on the emulation backend by default (each runs in real time)."""

TIMING_ERROR_MS = 0.2
"""The link emulator's timing error per crossing of an emulated link, ms: the largest
99th percentile benchmarks/README.md measured (182 µs, "The link emulator", SCHED_FIFO
with the default spin, at load 12-17 on the shared 2-core machine), rounded up. A
round trip over one link crosses it twice."""
SPREAD_SE = 2.0
"""Standard errors of the difference that count as "within the spread" (about 95 % for
normal run-to-run variation)."""

TCP_TESTS = ("tcp.bulk", "tcp.transfer")
LOSS_WORDS = ("lost", "loss", "retransmit", "received", "throughput", "goodput")


@dataclass
class Runs:
    """Every finished run's records per backend (a run: one seed, every test)."""

    sim: list[dict[str, Any]] = field(default_factory=list)
    """``{"seed", "records"}`` per finished simulator run."""
    emu: list[dict[str, Any]] = field(default_factory=list)
    kernel: str | None = None
    link_implementation: str | None = None


def seeds(scenario: Scenario, n: int) -> list[int]:
    return [scenario.scenario.seed + k for k in range(n)]


def run_sim(scenario: Scenario, source: Path, seed: int) -> list[dict[str, Any]]:
    """One simulator run: every test's records with this seed."""
    from qoslab.backends.sim import run_tests

    _net, runs = run_tests(scenario, source=source, seed=seed)
    return [rec for r in runs for rec in r.records]


def run_emu(scenario: Scenario, source: Path, seed: int, into: Runs) -> list[dict[str, Any]]:
    """One emulation run (the link emulator seeded with ``seed``)."""
    from qoslab.backends.emu import run_tests
    from qoslab.backends.emu.measure import kernel

    _net, runs, link = run_tests(scenario, source=source, seed=seed)
    into.kernel, into.link_implementation = kernel(), link
    return [rec for r in runs for rec in r.records]


def run_both(
    scenario: Scenario,
    source: Path,
    *,
    sim_runs: int,
    emu_runs: int,
    into: Runs,
    on_run: Callable[[str, int, Runs], None] | None = None,
) -> Runs:
    """Every simulator seed, then every emulation run, each appended to ``into`` as it
    finishes (so an interrupted compare keeps what finished); ``on_run(backend, seed,
    runs)`` after each."""
    for backend, n in (("sim", sim_runs), ("emu", emu_runs)):
        for seed in seeds(scenario, n):
            records = run_sim(scenario, source, seed) if backend == "sim" else run_emu(scenario, source, seed, into)
            getattr(into, backend).append({"seed": seed, "records": records})
            if on_run is not None:
                on_run(backend, seed, into)
    return into


def _key(rec: dict[str, Any], order: int) -> tuple[Any, ...]:
    return (rec.get("test"), rec.get("name"), rec.get("from"), rec.get("to"), order)


def _keyed(records: list[dict[str, Any]]) -> dict[tuple[Any, ...], dict[str, Any]]:
    """A run's records by their place (a test's k-th record)."""
    out: dict[tuple[Any, ...], dict[str, Any]] = {}
    seen: dict[tuple[Any, ...], int] = {}
    for rec in records:
        base = _key(rec, 0)[:-1]
        order = seen.get(base, 0)
        seen[base] = order + 1
        out[_key(rec, order)] = rec
    return out


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


def side(values: list[float | None]) -> dict[str, Any]:
    """One backend's values of a metric over its runs: n (non-null), mean, sample sd."""
    got = [v for v in values if v is not None]
    return {
        "values": values,
        "n": len(got),
        "mean": statistics.fmean(got) if got else None,
        "sd": statistics.stdev(got) if len(got) > 1 else (0.0 if got else None),
    }


def is_time(metric: str) -> bool:
    return metric.endswith("_ms") or metric.endswith("_s")


def timing_floor(metric: str, crossings: int) -> float:
    """The emulator's timing error in a time metric's unit: ``crossings`` emulated link
    crossings of :data:`TIMING_ERROR_MS` each; 0 for any other metric."""
    if not is_time(metric):
        return 0.0
    floor_ms = crossings * TIMING_ERROR_MS
    return floor_ms if metric.endswith("_ms") else floor_ms / 1e3


def crossings(emu_records: list[dict[str, Any]]) -> int:
    """Link directions that carried frames in the emulated run (a round trip over a path
    crosses each of its links twice): the largest count over the runs' records."""
    most = 0
    for rec in emu_records:
        n = sum(
            1
            for link in rec.get("emulated_links") or []
            for d in link.get("directions") or []
            if int(d["delivered"]["frames"]) > 0
        )
        most = max(most, n)
    return most


def reasons(test: str, metric: str, sim: dict[str, Any], emu: dict[str, Any], floor: float) -> list[str]:
    """The likely reasons, from docs/compare.md's list, that a metric differs beyond the
    spread (or cannot be compared)."""
    if not emu["values"] or not sim["values"]:
        return [name for name, s in (("sim_not_run", sim), ("emu_not_run", emu)) if not s["values"]]
    if emu["n"] == 0 and sim["n"] == 0:
        return ["both_null"]
    if emu["n"] == 0:
        return ["emu_null"]
    if sim["n"] == 0:
        return ["sim_null"]
    out = []
    if test in TCP_TESTS:
        out.append("tcp_stack")
    diff = emu["mean"] - sim["mean"]
    if is_time(metric):
        if floor and abs(sim["mean"]) <= 10 * floor:
            out.append("timing_error")
        if diff > 0:
            out.append("host_time")
    if any(word in metric for word in LOSS_WORDS) and (sim["sd"] or emu["sd"]):
        out.append("loss_draws")
    if sim["n"] < 2 and emu["n"] < 2:
        out.append("no_spread")
    return out or ["unexplained"]


def compare_metric(
    test: str, metric: str, sim_v: list[float | None], emu_v: list[float | None], floor: float
) -> dict[str, Any]:
    """One metric of one record: each side's statistics, the difference and the verdict."""
    sim, emu = side(sim_v), side(emu_v)
    entry: dict[str, Any] = {"metric": metric, "sim": sim, "emu": emu}
    if sim["n"] and emu["n"]:
        diff = emu["mean"] - sim["mean"]
        spread = SPREAD_SE * math.sqrt(sim["sd"] ** 2 / sim["n"] + emu["sd"] ** 2 / emu["n"])
        within = abs(diff) <= spread + floor
        entry |= {
            "diff": diff,
            "diff_pct": 100.0 * diff / abs(sim["mean"]) if sim["mean"] else None,
            "spread": spread,
            "floor": floor,
            "within": within,
            "reasons": [] if within else reasons(test, metric, sim, emu, floor),
        }
    else:
        entry |= {"diff": None, "diff_pct": None, "spread": None, "floor": floor, "within": None}
        entry["reasons"] = reasons(test, metric, sim, emu, floor)
    return entry


def compare(runs: Runs) -> list[dict[str, Any]]:
    """Per record place (test), every scalar metric compared (docs/compare.md)."""
    sim_runs = [_keyed(r["records"]) for r in runs.sim]
    emu_runs = [_keyed(r["records"]) for r in runs.emu]
    places = list(dict.fromkeys(k for run in (*sim_runs, *emu_runs) for k in run))
    out = []
    for place in places:
        sims = [run.get(place) for run in sim_runs]
        emus = [run.get(place) for run in emu_runs]
        names: list[str] = []
        for rec in (*sims, *emus):
            for name, value in (rec or {}).get("metrics", {}).items():
                if (value is None or _number(value) is not None) and name not in names:
                    names.append(name)
        n_cross = crossings([r for r in emus if r is not None])
        test = str(place[0])
        metrics = [
            compare_metric(
                test,
                name,
                [_number((r or {}).get("metrics", {}).get(name)) for r in sims if r is not None],
                [_number((r or {}).get("metrics", {}).get(name)) for r in emus if r is not None],
                timing_floor(name, n_cross),
            )
            for name in names
        ]
        out.append(
            {
                "test": place[0],
                "name": place[1],
                "from": place[2],
                "to": place[3],
                "record": place[4],
                "crossings": n_cross,
                "metrics": metrics,
            }
        )
    return out


def report(scenario: Scenario, file: Path, runs: Runs, *, complete: bool) -> dict[str, Any]:
    """``compare.json``: the runs' seeds, the rule, and every test's metrics compared."""
    from qoslab.output_schema import stamp

    return stamp(
        "compare",
        {
            "scenario": scenario.scenario.name,
            "file": str(file),
            "complete": complete,
            "sim_seeds": [r["seed"] for r in runs.sim],
            "emu_seeds": [r["seed"] for r in runs.emu],
            "kernel": runs.kernel,
            "link_implementation": runs.link_implementation,
            "rule": {
                "within": "|emu mean - sim mean| <= spread + floor",
                "spread": f"{SPREAD_SE} * sqrt(sd_sim^2 / n_sim + sd_emu^2 / n_emu)",
                "floor": f"time metrics: crossings * {TIMING_ERROR_MS} ms (the emulator's timing error); else 0",
            },
            "tests": compare(runs),
        },
    )
