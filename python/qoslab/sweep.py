"""Sweeps: a scenario's ``[sweep]`` run point by point, on every local core.

A ``[sweep]`` names parameter paths and their values (``"link[2].rate" = ["1200 bps",
"9600 bps"]``). :func:`sweep_points` puts each point's values into the scenario as the
user wrote it and validates the result again, exactly as a file with those values
would be; :func:`run_sweep` runs every test of every point, each in a fresh
simulation, on a pool of threads (the simulator releases the GIL, so the points run
in parallel on all cores) and hands the points back **in point order**, whatever
order they finished in. Every point uses the same seed, so a point's result does not
depend on the others, on ``jobs`` or on the machine.

Records of swept points carry ``"point"`` (its index) and ``"sweep"`` (the values of
the point, keyed by parameter path), so one tidy table holds the whole sweep.
"""

from __future__ import annotations

import copy
import functools
import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

from pydantic import ValidationError

from qoslab.errors import InputError, Problem
from qoslab.scenario.checks import cross_check, parse_param_path, point_indices, put, with_tests_of
from qoslab.scenario.load import Spans, pydantic_problems
from qoslab.scenario.model import Scenario

if TYPE_CHECKING:
    from qoslab.backends.sim import Network, TestRun
    from qoslab.plan.models import SimConfig


@dataclass(frozen=True)
class SweepPoint:
    """One point of a sweep: its index in run order, its values and the scenario there."""

    index: int
    values: dict[str, Any]
    """Parameter path -> the value as written in ``[sweep]`` (empty without a sweep)."""
    scenario: Scenario

    def label(self) -> str:
        """``link[2].rate = 9600 bps, test[0].size = 64`` (or ``as written``)."""
        return ", ".join(f"{k} = {v}" for k, v in self.values.items()) or "as written"


@dataclass
class PointResult:
    """What one point measured: its network and one run per test."""

    point: SweepPoint
    network: Network
    runs: list[TestRun]
    replication: int | None = None
    """Which of the sweep's ``replications`` this is (None when it has only one)."""

    def records(self) -> list[dict[str, Any]]:
        """The point's records, each tagged with the point and its sweep values (and
        its replication when the sweep has several)."""
        out = []
        for run in self.runs:
            for rec in run.records:
                rec = dict(rec)
                if self.point.values or self.replication is not None:
                    rec["point"] = self.point.index
                    rec["sweep"] = dict(self.point.values)
                if self.replication is not None:
                    rec["replication"] = self.replication
                out.append(rec)
        return out


def _raw(scenario: Scenario) -> dict[str, Any]:
    if scenario._raw is not None:
        return scenario._raw
    # A scenario built in Python rather than loaded: what was written in it is valid
    # input again. Only what was written: a default dumped would count as written
    # (a test's `tcp` table would then hide its `stack` preset).
    return scenario.model_dump(mode="json", by_alias=True, exclude_unset=True)


def sweep_points(scenario: Scenario, *, source: str | Path | None = None) -> list[SweepPoint]:
    """Every point of ``scenario``'s sweep, in run order (one point if it has none).

    ``grid`` runs every combination with the last parameter varying fastest; ``zip``
    pairs the n-th values.

    Raises
    ------
    InputError
        If a point does not validate (possible only for grids of more than 256
        points, which the loader checks one parameter at a time).

    Examples
    --------
    >>> from qoslab.scenario.load import loads_scenario
    >>> sc = loads_scenario('''
    ... [scenario]
    ... name = "two hosts"
    ... [node.a]
    ... role = "host"
    ... [node.b]
    ... role = "host"
    ... [[link]]
    ... type = "ethernet"
    ... rate = "10 Mbps"
    ... ends = ["a", "b"]
    ... [sweep]
    ... "link[0].rate" = ["10 Mbps", "100 Mbps"]
    ... ''')
    >>> [(p.label(), p.scenario.link[0].rate) for p in sweep_points(sc)]
    [('link[0].rate = 10 Mbps', 10000000), ('link[0].rate = 100 Mbps', 100000000)]
    """
    sweep = scenario.sweep
    if sweep is None or not sweep.values:
        return [SweepPoint(0, {}, scenario)]
    keys = list(sweep.values)
    return [
        SweepPoint(n, values, scenario_at(scenario, values, source=source))
        for n, idx in enumerate(point_indices(sweep.mode, [len(sweep.values[k]) for k in keys]))
        for values in [{k: sweep.values[k][i] for k, i in zip(keys, idx)}]
    ]


def scenario_at(scenario: Scenario, values: dict[str, Any], *, source: str | Path | None = None) -> Scenario:
    """``scenario`` as written, without its sweep, with ``values`` (parameter path ->
    value as a file writes it) put in place and validated again: one point of a sweep,
    or any variation of a scenario (a study's shorter run, a calibration's point).

    Raises
    ------
    InputError
        If a path names no parameter or the result does not validate.

    Examples
    --------
    >>> from qoslab.scenario.load import loads_scenario
    >>> sc = loads_scenario('''
    ... [scenario]
    ... name = "two hosts"
    ... [node.a]
    ... role = "host"
    ... [node.b]
    ... role = "host"
    ... [[link]]
    ... type = "ethernet"
    ... rate = "10 Mbps"
    ... ends = ["a", "b"]
    ... ''')
    >>> scenario_at(sc, {"link[0].rate": "1 Mbps"}).link[0].rate
    1000000
    """
    raw = _raw(scenario)
    if values and all(k.startswith("test[") for k in values):
        # Only tests change: the network's tables are shared with the scenario as written.
        data = dict(raw, test=copy.deepcopy(raw.get("test", [])))
    else:
        data = copy.deepcopy(raw)
    data.pop("sweep", None)
    for key, value in values.items():
        steps = parse_param_path(key)
        if steps is None:
            raise InputError(
                str(source or "<scenario>"),
                [Problem("not a parameter path", key=key, expected="a path such as 'link[0].rate'", found=repr(key))],
            )
        put(data, steps, copy.deepcopy(value))
    fast = with_tests_of(scenario, data, list(values))
    if fast is not None:
        fast._raw, fast._source = data, scenario._source
        return fast
    try:
        sc = Scenario.model_validate(data)
        problems = cross_check(sc, data, Spans(""))
    except ValidationError as err:
        problems = pydantic_problems(err, data, Spans(""))
    if problems:
        where = ", ".join(f"{k} = {v!r}" for k, v in values.items())
        raise InputError(
            str(source or "<scenario>"),
            [
                Problem(
                    f"at the sweep point {where}: {p.message}",
                    key=p.key,
                    expected=p.expected,
                    found=p.found,
                    hint=p.hint,
                )
                for p in problems
            ],
        )
    sc._raw, sc._source = data, scenario._source
    return sc


def run_sweep(
    scenario: Scenario,
    *,
    source: str | Path | None = None,
    seed: int | None = None,
    jobs: int | None = None,
    pcap_dir: str | Path | None = None,
    on_point: Callable[[PointResult, int], None] | None = None,
    on_trial: Callable[[str], None] | None = None,
    max_events: int | None = None,
    max_memory: int | None = None,
    pcap_snaplen: int | None = None,
    pcap_max_size: int | None = None,
) -> list[PointResult]:
    """Run every test at every point of the scenario's sweep, ``jobs`` points at once.

    Every point is lowered and planned before the first runs, so bad input at any
    point fails fast (InputError) and nothing is half-run. ``on_point(result, total)``
    is called for each point in point order as soon as it and all before it are done.
    With ``pcap_dir``, point N of a sweep captures into ``pcap_dir/pointN/testM``.
    ``on_trial(words)`` is told each simulation as it starts (RFC 2544 tests run many).

    Raises
    ------
    InputError
        For anything the simulator cannot run, at any point.
    SimulationError
        If a run fails.
    """
    from qoslab.backends.sim import replica_seed, run_tests
    from qoslab.budget import SNAPLEN, PcapOptions
    from qoslab.sweep_run import _network_key, network_for

    snaplen = SNAPLEN if pcap_snaplen is None else pcap_snaplen
    pcap = PcapOptions(Path(pcap_dir), snaplen, pcap_max_size) if pcap_dir is not None else None
    points = prepare(scenario, source=source, max_events=max_events, max_memory=max_memory, pcap=pcap)

    # [sweep] replications = N: replication k > 0 of a point runs with replica_seed(base, k).
    reps = scenario.sweep.replications if scenario.sweep is not None else 1
    base = scenario.scenario.seed if seed is None else seed
    work = [(p, k) for p in points for k in range(reps)]

    # Points that differ only in their tests share one lowered network.
    tests_only = all(key.startswith("test[") for p in points for key in p.values)
    same = _network_key(_raw(points[0].scenario)) if tests_only else None

    def one(p: SweepPoint, k: int) -> PointResult:
        where = None
        if pcap_dir is not None:
            where = Path(pcap_dir) / f"point{p.index}" if p.values else Path(pcap_dir)
            where = where / f"replication{k}" if reps > 1 else where
        network = network_for(
            p.scenario, same or _network_key(_raw(p.scenario)), None if source is None else str(source)
        )
        net, runs = run_tests(
            p.scenario,
            source=source,
            seed=seed if k == 0 else replica_seed(base, k),
            pcap_dir=where,
            on_trial=on_trial,
            max_events=max_events,
            network=network,
            pcap_snaplen=pcap_snaplen,
            pcap_max_size=pcap_max_size,
        )
        return PointResult(p, net, runs, replication=k if reps > 1 else None)

    results: list[PointResult] = []

    def done(_: int, result: PointResult) -> None:
        results.append(result)
        if on_point is not None:
            on_point(result, len(points))

    run_pool([functools.partial(one, p, k) for p, k in work], jobs=jobs, on_done=done, ordered=True)
    return results


def prepare(
    scenario: Scenario,
    *,
    source: str | Path | None = None,
    max_events: int | None = None,
    max_memory: int | None = None,
    pcap: Any = None,
) -> list[SweepPoint]:
    """Everything ``run`` does before its first simulation, at every point of the sweep:
    lower the network, plan each test, and have the simulator build each test's network
    (``qoslab._core.validate``: it refuses what ``simulate`` would, and runs nothing),
    and estimate each simulation's events against ``max_events`` (default
    :data:`qoslab.budget.DEFAULT_MAX_EVENTS`) and its memory against ``max_memory``
    (default :func:`qoslab.budget.default_max_memory`); with ``pcap``
    (:class:`qoslab.budget.PcapOptions`), the captures of all the runs against the free
    space where they go. ``qoslab check`` calls this too, so that ``run`` refuses
    nothing ``check`` accepted.

    Raises
    ------
    InputError
        For the first point with problems, each located in the scenario file; a refusal
        by the simulator is located at the test whose network it refused.
    """
    from qoslab.backends.sim import LocatedProblems, planned_config
    from qoslab.budget import (
        DEFAULT_MAX_EVENTS,
        default_max_memory,
    )
    from qoslab.methods import check_runnable, plan_test
    from qoslab.sweep_run import _network_key, network_for

    points = sweep_points(scenario, source=source)
    memory_budget = default_max_memory() if max_memory is None else max_memory
    memory_words = "--max-memory raises it" + (
        "" if max_memory is not None else "; default: half of this machine's RAM"
    )
    capture_total = 0.0
    # Points that differ only in their tests share one lowering: the process's cache,
    # which run_sweep then finds filled (and one key: the network's JSON text, made once).
    same = _network_key(_raw(points[0].scenario)) if all(k.startswith("test[") for k in points[0].values) else None
    for p in points:
        net = network_for(p.scenario, same or _network_key(_raw(p.scenario)), None if source is None else str(source))
        check_runnable(p.scenario, source=source)
        out = LocatedProblems(source)
        configs: list[tuple[tuple[str | int, ...], SimConfig]] = []
        for i in range(len(p.scenario.test)):
            configs.append((("test", i), planned_config(net, plan_test(net, i, source=source))))
        if not configs:
            configs.append((("node",), net.config))
        budget = DEFAULT_MAX_EVENTS if max_events is None else max_events
        for where, config in configs:
            capture_total += _check_config(
                out, p, where, config, net, budget=budget, memory=(memory_budget, memory_words), pcap=pcap
            )
        out.raise_if_any()
    if pcap is not None:
        _check_capture_room(pcap, capture_total)
    return points


def _check_config(
    out: Any,
    p: SweepPoint,
    where: tuple[str | int, ...],
    config: SimConfig,
    net: Any,
    *,
    budget: float,
    memory: tuple[int | None, str],
    pcap: Any,
) -> float:
    """One simulation's checks at a point (``prepare``): its events against ``budget``,
    its memory against ``memory`` (the budget and how to raise it), and the simulator's
    own refusals; each problem is added to ``out`` at its place. Returns the capture
    bytes it would write (0 without ``pcap``, or when it is refused)."""
    from qoslab import _core
    from qoslab.backends.sim import _encode
    from qoslab.budget import (
        capture_files,
        describe,
        describe_bytes,
        estimate_capture,
        estimate_events,
        estimate_memory,
    )
    from qoslab.core_session import validate_test
    from qoslab.scenario.load import format_path

    memory_budget, memory_words = memory
    events = estimate_events(config, net)
    if events > budget:
        test = p.scenario.test[int(where[1])] if where[0] == "test" else None
        # The key that sets the test's length: a replay's is its capture's `loop`.
        length = (
            "count" if getattr(test, "count", None) is not None else "loop" if hasattr(test, "loop") else "duration"
        )
        at = where + (length,) if test is not None else where
        out.add(
            at,
            "this run would take too long to simulate",
            expected=f"at most {budget:.3g} events (--max-events raises the budget)",
            found=f"about {describe(events)}" + (f" ({_point_words(p)})" if p.values else ""),
        )
        return 0.0
    files = capture_files(config) if pcap is not None else 0
    needed = estimate_memory(config, net, capture_files=files)
    if memory_budget is not None and needed > memory_budget:
        test = p.scenario.test[int(where[1])] if where[0] == "test" else None
        at = where + ("duration",) if test is not None and getattr(test, "duration", None) is not None else where
        out.add(
            at,
            "this run would need too much memory",
            expected=f"at most {describe_bytes(memory_budget)} ({memory_words})",
            found=f"about {describe_bytes(needed)}" + (f" ({_point_words(p)})" if p.values else ""),
        )
        return 0.0
    capture = 0.0
    if pcap is not None:
        size = estimate_capture(config, net, snaplen=pcap.snaplen)
        capture = size if pcap.max_bytes is None else min(size, float(pcap.max_bytes))
    try:
        if not validate_test(config):  # a test on a network: through its core session
            cast(Any, _core).validate(_encode(config))  # _core.pyi does not list validate
    except ValueError as err:
        message = str(err).removeprefix("configuration: ")
        at = _scenario_place(message, config, p.scenario, where)
        if format_path(at) in p.values:  # a swept value: point at the sweep's list
            at = ("sweep", "values", format_path(at))
        out.add(at, f"the simulator refuses this: {message}" + (f" ({_point_words(p)})" if p.values else ""))
    return capture


def _check_capture_room(pcap: Any, size: float) -> None:
    """Refuse a capture estimated larger than the free space where it goes."""
    from qoslab.budget import describe_bytes, free_bytes

    free = free_bytes(Path(pcap.dir))
    if free is None or size <= free:
        return
    cut = (
        "" if pcap.max_bytes is None else f", each run's files cut at --pcap-max-size {describe_bytes(pcap.max_bytes)}"
    )
    raise InputError(
        "--pcap",
        [
            Problem(
                "the capture would not fit on the disk",
                expected=f"at most {describe_bytes(free)}, the free space under '{pcap.dir}' (--pcap-max-size SIZE keeps each run's first SIZE; --pcap-snaplen N keeps N bytes of each frame)",
                found=f"about {describe_bytes(size)} of pcap files{cut}",
            )
        ],
    )


_CORE_FIELDS = {
    "rate_bps": "rate",
    "delay_ns": "delay",
    "queue_frames": "queue",
    "queue_bytes": "queue",
    "mtu": "mtu",
    "impair": "loss",
}
"""The simulator's names of link fields (crates/sim/src/config.rs) and the scenario's."""


def _scenario_place(
    message: str, config: SimConfig, scenario: Scenario, where: tuple[str | int, ...]
) -> tuple[str | int, ...]:
    """Where in the scenario a refusal of the core belongs. The core names its own
    field (``links[0].rate_bps: ...``, ``nodes[2].cpu``, ``flows[1].to``): a link or a
    node is found again by its name, a flow's ends are the test's ``from`` and ``to``.
    Anything else stays at ``where`` (the test, or the network)."""
    import re

    m = re.match(r"(links|nodes|flows)\[(\d+)\]\.?([A-Za-z_]*)", message)
    if m is None:
        return where
    table, index, field = m[1], int(m[2]), m[3]
    if table == "flows":
        return where + (field,) if field in ("to", "from") and where[0] == "test" else where
    names = [n.name for n in config.nodes] if table == "nodes" else [link.root.name for link in config.links]
    if index >= len(names):
        return where
    name = names[index]
    if table == "nodes":
        return ("node", name) + ((field,) if field else ())
    links = [link.name for link in scenario.link]
    if name in links:
        return ("link", links.index(name)) + ((_CORE_FIELDS[field],) if field in _CORE_FIELDS else ())
    return where


def _point_words(p: SweepPoint) -> str:
    return "at sweep point " + ", ".join(f"{k} = {v!r}" for k, v in p.values.items())


T = TypeVar("T")


def run_pool(
    tasks: list[Callable[[], T]],
    *,
    jobs: int | None = None,
    on_done: Callable[[int, T], None] | None = None,
    ordered: bool = True,
) -> list[T]:
    """Run ``tasks`` on ``jobs`` threads (default: one per local core) and return their
    results in task order. The simulator releases the GIL, so simulations run in
    parallel on all cores; sweeps and studies (``qoslab run``, ``qoslab reproduce``)
    share this pool.

    ``on_done(index, result)`` is called in the calling thread: in task order as soon as
    a task and all before it are done (``ordered``), or as each finishes. With one job
    the tasks run one after another in the calling thread. If a task raises, or the
    caller is interrupted (Ctrl-C), the tasks not yet started are cancelled and the
    exception propagates; tasks already running finish (a study's point saves itself
    when it finishes, so it is kept).

    Examples
    --------
    >>> run_pool([lambda: 1, lambda: 2], jobs=2)
    [1, 2]
    """
    workers = max(1, min(jobs or os.cpu_count() or 1, len(tasks)))
    out: list[Any] = [None] * len(tasks)
    if workers == 1:
        for i, task in enumerate(tasks):
            out[i] = task()
            if on_done is not None:
                on_done(i, out[i])
        return out
    pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="qoslab-point")
    futures = {pool.submit(task): i for i, task in enumerate(tasks)}
    try:
        for fut in list(futures) if ordered else as_completed(futures):
            i = futures[fut]
            out[i] = fut.result()
            if on_done is not None:
                on_done(i, out[i])
    except BaseException:
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown()
    return out


__all__ = ["SweepPoint", "PointResult", "sweep_points", "scenario_at", "run_sweep", "run_pool"]
