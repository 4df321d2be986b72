"""``qoslab sweep``: every point of a sweep (× its replications) on every local core or on
a Dask cluster, each finished point written at once to the results store (qoslab.store).

The work is cut into :class:`PointTask` s, one per point and replication, each
self-contained (the point's scenario data, its seed, its coordinates) so that it runs
the same on a thread here or on a Dask worker elsewhere: :func:`run_point` is the only
function a worker calls. Results come back to this process, which alone writes the
store, so workers need no shared disk and a lost worker loses only the points it had
not returned (Dask runs them again on another worker).

Local points run in worker processes (:func:`_run_local`). Before anything runs, :func:`plan` validates every point as ``qoslab check`` does
(qoslab.sweep.prepare) and the scheduler is reached (:func:`connect_cluster`): bad
input or an unreachable scheduler stops with a message and exit code 2.
"""

from __future__ import annotations

import os
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from qoslab.errors import InputError, Problem
from qoslab.scenario.model import Scenario

SCHEDULER_ENV = "QOSLAB_DASK_SCHEDULER"
"""The environment variable naming a Dask scheduler when ``--cluster`` is not given."""

POINT_LOG_ENV = "QOSLAB_POINT_LOG"
"""When set, the path of a file :func:`run_point` appends one line to (the point's id and
the worker, host:pid/thread) each time it starts computing a point: a count of the simulations a sweep really ran,
whichever machine ran them (the tests use it to show that a resumed sweep computes
no point twice)."""


@dataclass(frozen=True)
class PointTask:
    """One point of a sweep at one replication: all a worker needs to compute it."""

    point_id: str
    sweep_id: str
    index: int
    replication: int
    seed: int
    written: dict[str, Any]
    """Parameter path -> the value as the sweep wrote it."""
    swept: dict[str, Any]
    """Parameter path -> the value the scenario has there (SI units: bit/s, ns, B)."""
    raw: dict[str, Any]
    """The point's scenario data (without [sweep]), as a file with these values would hold."""
    source: str | None = None
    max_events: int | None = None
    network: str = ""
    """SHA-256 of the point's scenario without its tests: points that share it share
    one validated and lowered network in each worker process."""

    def coords(self) -> dict[str, Any]:
        return {
            "sweep_id": self.sweep_id,
            "point_id": self.point_id,
            "point": self.index,
            "replication": self.replication,
            "seed": self.seed,
            "swept": self.swept,
            "written": self.written,
        }

    def label(self) -> str:
        words = ", ".join(f"{k} = {v}" for k, v in self.written.items()) or "as written"
        return words + (f" (replication {self.replication})" if self.replication else "")


@dataclass
class Plan:
    """The tasks of a sweep, in sweep order, and what the store needs to label them."""

    sweep_id: str
    tasks: list[PointTask]
    swept_units: dict[str, str] = field(default_factory=dict)
    points: int = 0
    replications: int = 1


# --------------------------------------------------------------------------- planning


def _unit_of_field(info: Any) -> str:
    """The SI unit a field stores its value in (qoslab.units: Rate in bit/s, Time in ns,
    Size in B, Ratio as a fraction), read from its validators; "" if it has none."""
    from qoslab import units

    known = {units.parse_rate: "bit/s", units.parse_time: "ns", units.parse_size: "B", units.parse_ratio: "1"}
    for m in info.metadata:
        if getattr(m, "func", None) in known:
            return known[m.func]
    todo, seen = [info.annotation], set()
    while todo:  # an optional quantity: Annotated[int, parse_rate] | None
        tp = todo.pop()
        if id(tp) in seen:
            continue
        seen.add(id(tp))
        for m in getattr(tp, "__metadata__", ()) or ():
            if getattr(m, "func", None) in known:
                return known[m.func]
        todo.extend(getattr(tp, "__args__", ()) or ())
    return ""


def _resolved(scenario: Scenario, steps: list[str | int]) -> tuple[Any, str]:
    """The value at a parameter path of a validated scenario, JSON-ready, and its unit."""
    from pydantic import BaseModel

    cur: Any = scenario
    unit: str | None = None
    for step in steps:
        if isinstance(cur, BaseModel):
            fields = {f.alias or n: (n, f) for n, f in type(cur).model_fields.items()}
            name, info = fields[str(step)]
            unit = _unit_of_field(info)
            cur = getattr(cur, name)
        elif isinstance(cur, dict):
            cur = cur[step]
        elif isinstance(cur, list):
            cur = cur[int(step)]
    if isinstance(cur, BaseModel):
        cur = cur.model_dump(mode="json", by_alias=True)
    elif not isinstance(cur, (int, float, str, bool, type(None), list, dict)):
        cur = str(cur)
    return cur, unit or ""


def plan(
    scenario: Scenario, *, source: str | Path | None = None, seed: int | None = None, max_events: int | None = None
) -> Plan:
    """Every task of the scenario's sweep (points × replications), after checking every
    point as ``qoslab check`` does.

    Replication 0 of a point runs with the base seed (``--seed``, else the scenario's);
    replication k > 0 with :func:`qoslab.backends.sim.replica_seed` (base, k): the first 8
    octets of SHA-256 of ``"BASE/k"``, shifted right by one bit.

    Raises
    ------
    InputError
        For bad input at any point (nothing has run).
    """
    from qoslab.backends.sim import replica_seed
    from qoslab.scenario.checks import parse_param_path
    from qoslab.store import network_digest, point_id, sweep_id
    from qoslab.sweep import _raw, prepare

    points = prepare(scenario, source=source, max_events=max_events)
    base = scenario.scenario.seed if seed is None else seed
    reps = scenario.sweep.replications if scenario.sweep is not None else 1
    sid = sweep_id(_raw(scenario), base)
    tasks: list[PointTask] = []
    units: dict[str, str] = {}
    seen: set[str] = set()
    tests_only = all(k.startswith("test[") for k in (scenario.sweep.values if scenario.sweep is not None else {}))
    network = None
    for p in points:
        raw = {k: v for k, v in _raw(p.scenario).items() if k != "sweep"}
        if network is None or not tests_only:  # the network is the same at every point when only tests are swept
            network = network_digest(p.scenario.model_dump(mode="json", by_alias=True, exclude={"sweep", "test"}))
        tests = p.scenario.model_dump(mode="json", by_alias=True, include={"test"}).get("test", [])
        swept: dict[str, Any] = {}
        for key in p.values:
            value, unit = _resolved(p.scenario, parse_param_path(key) or [])
            swept[key] = value
            units.setdefault(key, unit)
        for k in range(reps):
            s = base if k == 0 else replica_seed(base, k)
            pid = point_id(network, tests, s)
            if pid in seen:  # two points that resolve to one scenario: computed once
                continue
            seen.add(pid)
            tasks.append(
                PointTask(
                    pid,
                    sid,
                    p.index,
                    k,
                    s,
                    dict(p.values),
                    swept,
                    raw,
                    None if source is None else str(source),
                    max_events,
                    network,
                )
            )
    return Plan(sid, tasks, units, points=len(points), replications=reps)


# --------------------------------------------------------------------------- one point

_NETWORKS: dict[str, Any] = {}
_NETWORKS_LOCK = threading.Lock()
_NETWORKS_MAX = 8
"""Lowered networks kept per process: points that differ only in their tests (a sweep
over a ping's size, over 1,000 pairs of one network) lower the network once per worker."""


def _network_key(raw: dict[str, Any]) -> str:
    from qoslab.store import canonical

    return canonical({k: v for k, v in raw.items() if k != "test"})


_SCENARIOS: dict[str, Scenario] = {}


def scenario_for(task: PointTask) -> Scenario:
    """The point's scenario, validated. A point whose network (everything but its tests)
    this process validated before gets that network with its own tests validated
    (qoslab.scenario.checks.with_tests_of), not the whole scenario again."""
    from qoslab.scenario.checks import with_tests_of

    key = task.network or _network_key(task.raw)
    with _NETWORKS_LOCK:
        base = _SCENARIOS.get(key)
    sc = with_tests_of(base, task.raw, ["test[]"]) if base is not None else None
    if sc is None:
        sc = Scenario.model_validate(task.raw)
        with _NETWORKS_LOCK:
            if len(_SCENARIOS) >= _NETWORKS_MAX:
                _SCENARIOS.pop(next(iter(_SCENARIOS)))
            _SCENARIOS[key] = sc
    sc._raw = task.raw
    return sc


def network_for(scenario: Scenario, key: str, source: str | None) -> Any:
    """The lowered network of ``scenario``, from this process's cache when a point with
    the same everything-but-tests (``key``) was lowered before (the lowering reads no test)."""
    import dataclasses

    from qoslab.backends.sim import lower_network

    with _NETWORKS_LOCK:
        net = _NETWORKS.get(key)
    if net is None:
        net = lower_network(scenario, source=source)
        with _NETWORKS_LOCK:
            if len(_NETWORKS) >= _NETWORKS_MAX:
                _NETWORKS.pop(next(iter(_NETWORKS)))
            _NETWORKS[key] = net
    # The same network, read by this point's scenario (its tests).
    return dataclasses.replace(net, scenario=scenario)


def run_point(task: PointTask) -> dict[str, Any]:
    """Compute one point: every test of its scenario with its seed. Never raises: a
    failure comes back as ``{"error": text}`` so that the sweep goes on. Runs on a
    local thread or on a Dask worker."""
    start = time.perf_counter()
    log = os.environ.get(POINT_LOG_ENV)
    if log:
        with open(log, "a", encoding="utf-8") as fh:
            fh.write(f"{task.point_id} {_worker_name()}\n")
    try:
        from qoslab.backends.sim import run_tests

        sc = scenario_for(task)
        net = network_for(sc, task.network or _network_key(task.raw), task.source)
        _, runs = run_tests(sc, source=task.source, seed=task.seed, max_events=task.max_events, network=net)
        records = [rec for run in runs for rec in run.records]
        return {"records": records, "wall_s": time.perf_counter() - start, "worker": _worker_name()}
    except BaseException as err:  # noqa: BLE001 - a point's failure is data, the sweep goes on
        if isinstance(err, KeyboardInterrupt):
            raise
        return {
            "error": f"{type(err).__name__}: {err}",
            "wall_s": time.perf_counter() - start,
            "worker": _worker_name(),
        }


def _worker_name() -> str:
    """host:pid/thread of whoever computed a point (the progress's per-worker lines)."""
    import socket

    return f"{socket.gethostname()}:{os.getpid()}/{threading.current_thread().name}"


# --------------------------------------------------------------------------- running


@dataclass
class Outcome:
    """What a sweep did: points in all, kept from before, run now, failed now."""

    total: int
    kept: int
    ran: int = 0
    failed: list[tuple[PointTask, str]] = field(default_factory=list)


def _cluster_problem(address: str, where: str, message: str, found: str) -> InputError:
    return InputError(
        where,
        [
            Problem(
                message,
                key=where,
                expected="a running Dask scheduler's address, tcp://HOST:PORT (start one with `dask scheduler`)",
                found=found,
                hint="or leave out --cluster (and QOSLAB_DASK_SCHEDULER) to run on this machine's cores",
            )
        ],
    )


def connect_cluster(address: str, *, where: str = "--cluster", timeout_s: float = 10.0) -> Any:
    """A ``distributed.Client`` of the scheduler at ``address``.

    Raises
    ------
    InputError
        If the address is malformed or no scheduler answers there within ``timeout_s``.
    """
    if not re.fullmatch(r"(tcp|tls)://[^\s/:]+(:\d{1,5})?/?", address):
        raise _cluster_problem(address, where, "not a Dask scheduler address", repr(address))
    try:
        from distributed import Client
    except ImportError as err:  # pragma: no cover - distributed is a dependency
        raise InputError(
            where,
            [
                Problem(
                    "Dask distributed is not installed",
                    key=where,
                    expected="pip install 'dask[distributed]'",
                    found=str(err),
                )
            ],
        ) from err
    try:
        return Client(address, timeout=f"{timeout_s}s", set_as_default=False)
    except (OSError, TimeoutError) as err:
        raise _cluster_problem(
            address, where, "no Dask scheduler answers at this address", f"{address!r}: {err}"
        ) from err


def run(
    plan_: Plan,
    store: Any,
    *,
    jobs: int | None = None,
    client: Any = None,
    on_done: Callable[[PointTask, dict[str, Any]], None] | None = None,
) -> Outcome:
    """Compute every task of ``plan_`` not already in ``store``, writing each the moment
    it finishes. Locally on ``jobs`` threads (default: every core), or on the Dask
    cluster of ``client``. ``on_done(task, result)`` is called after each is written.

    One writer thread writes the points in the order they finish, while the next
    points compute (writing a Parquet file takes a few milliseconds: as long as a short
    simulation). On any exit, Ctrl-C included, every point that finished is written
    before this returns or raises."""
    import queue

    done = store.done()
    todo = [t for t in plan_.tasks if t.point_id not in done]
    out = Outcome(total=len(plan_.tasks), kept=len(plan_.tasks) - len(todo))
    store.create()
    if not todo:
        return out
    pending: queue.SimpleQueue[tuple[PointTask, dict[str, Any]] | None] = queue.SimpleQueue()
    problems: list[BaseException] = []

    def writer() -> None:
        while (item := pending.get()) is not None:
            if problems:
                continue  # the disk refused one: the others would fail alike
            task, result = item
            try:
                store.write(
                    dict(task.coords(), wall_s=result.get("wall_s")),
                    result.get("records"),
                    result.get("error"),
                    plan_.swept_units,
                )
            except BaseException as err:  # noqa: BLE001 - raised again in the caller's thread
                problems.append(err)
                continue
            out.ran += 1
            if "error" in result:
                out.failed.append((task, result["error"]))
            if on_done is not None:
                on_done(task, result)

    thread = threading.Thread(target=writer, name="qoslab-store-writer", daemon=True)
    thread.start()

    def finished(task: PointTask, result: dict[str, Any]) -> None:
        if problems:
            raise problems[0]
        pending.put((task, result))

    try:
        if client is None:
            _run_local(todo, jobs, finished)
        else:
            _run_dask(client, todo, finished)
    finally:
        pending.put(None)
        thread.join()
    if problems:
        raise problems[0]
    return out


def _ignore_sigint() -> None:
    """A worker process leaves Ctrl-C to the sweep, which stops it once every finished
    point is written."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _run_local(todo: list[PointTask], jobs: int | None, finished: Callable[[PointTask, dict[str, Any]], None]) -> None:
    """``jobs`` (default: every core) worker processes, or this thread for one job.

    Processes, not threads: a short point spends most of its time in Python (validating
    its scenario, planning, reading records), which threads would run one at a time
    under the GIL. Each process lowers a network once for all the points that share it.
    A worker process that dies fails the points it had (recorded as failed; run again
    next time)."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor, as_completed

    n = max(1, min(jobs or os.cpu_count() or 1, len(todo)))
    if n == 1:
        for task in todo:
            finished(task, run_point(task))
        return
    # spawn: a fresh interpreter per worker (fork would copy the writer thread's locks).
    pool = ProcessPoolExecutor(
        max_workers=n, mp_context=multiprocessing.get_context("spawn"), initializer=_ignore_sigint
    )
    futures = {pool.submit(run_point, t): t for t in todo}
    try:
        for fut in as_completed(futures):
            try:
                result = fut.result()
            except Exception as err:  # noqa: BLE001 - a worker process died (killed, out of memory)
                result = {"error": f"{type(err).__name__}: {err}"}
            finished(futures[fut], result)
    except BaseException:
        # Ctrl-C: stop the workers now (they ignore SIGINT), what finished is written.
        for proc in list(getattr(pool, "_processes", {}).values()):
            proc.terminate()
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown()


def _run_dask(client: Any, todo: list[PointTask], finished: Callable[[PointTask, dict[str, Any]], None]) -> None:
    """Submit every task to the cluster and hand each result on as it comes back. A
    task whose worker dies is run again on another by the scheduler; one that keeps
    killing workers (distributed's ``allowed-failures``) comes back as a failed point."""
    from distributed import as_completed

    futures = client.map(run_point, todo, key=[f"qoslab-point-{t.point_id}" for t in todo], pure=False)
    by_future = {f.key: t for f, t in zip(futures, todo)}
    try:
        for fut in as_completed(futures, loop=client.loop):
            task = by_future[fut.key]
            try:
                result = fut.result()
            except Exception as err:  # noqa: BLE001 - e.g. KilledWorker: the task's workers kept dying
                result = {"error": f"{type(err).__name__}: {err}"}
            finished(task, result)
    except BaseException:
        client.cancel(futures)
        raise


__all__ = [
    "PointTask",
    "Plan",
    "Outcome",
    "plan",
    "run",
    "run_point",
    "connect_cluster",
    "SCHEDULER_ENV",
    "POINT_LOG_ENV",
]


# --------------------------------------------------------------------------- progress


class SweepProgress:
    """One rich progress bar on stderr: points done of all, failed, rate (points/s over
    this run) and the time left at that rate. ``workers`` adds a line per worker with
    the point it runs (``--workers``)."""

    def __init__(self, console: Any, total: int, kept: int, *, enabled: bool, workers: bool = False) -> None:
        self.enabled = enabled
        self.failed = 0
        self._lock = threading.Lock()
        if not enabled:
            return
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        self.progress = Progress(
            TextColumn("[bold]sweep"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[failed]} failed"),
            TextColumn("{task.fields[rate]}"),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=console,
            transient=False,
        )
        self.task = self.progress.add_task("sweep", total=total, completed=kept, failed=0, rate="")
        self.start = time.monotonic()
        self.ran = 0
        self.workers = workers

    def __enter__(self) -> SweepProgress:
        if self.enabled:
            self.progress.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self.enabled:
            self.progress.__exit__(*exc)

    def done(self, task: PointTask, result: dict[str, Any]) -> None:
        with self._lock:
            if "error" in result:
                self.failed += 1
            if not self.enabled:
                return
            self.ran += 1
            rate = self.ran / max(time.monotonic() - self.start, 1e-9)
            self.progress.update(self.task, advance=1, failed=self.failed, rate=f"{rate:.3g} points/s")
            if self.workers and result.get("worker"):
                self.progress.console.print(
                    f"  {result['worker']}: {task.label()} ({result.get('wall_s', 0):.2f} s)", highlight=False
                )
