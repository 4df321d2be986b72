"""``qoslab sweep``: every point of a sweep (× its replications) on every local core or on
a Dask cluster, the finished points appended as they finish to the results store
(qoslab.store: a part file per 0.1 s of points).

The work is cut into :class:`PointTask` s, one per point and replication, each
self-contained (the point's scenario data, its seed, its coordinates) so that it runs
the same in a worker process here or on a Dask worker elsewhere: :func:`run_point` is
the only function a worker calls. Results come back to this process, which alone writes
the store, so workers need no shared disk and a lost worker loses only the points it had
not returned (Dask runs them again on another worker).

Local points run in worker processes forked when the sweep starts (:class:`LocalPool`),
short points a chunk at a time (:func:`_run_local`). Before anything runs, :func:`plan`
validates every point as ``qoslab check`` does (qoslab.sweep.prepare) and the scheduler
is reached (:func:`connect_cluster`): bad input or an unreachable scheduler stops with a
message and exit code 2.
"""

from __future__ import annotations

import os
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

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
    key = None
    for p in points:
        raw = {k: v for k, v in _raw(p.scenario).items() if k != "sweep"}
        if network is None or not tests_only:  # the network is the same at every point when only tests are swept
            network = network_digest(p.scenario.model_dump(mode="json", by_alias=True, exclude={"sweep", "test"}))
        if key is None or not tests_only:
            key = _network_key(raw)
        with _NETWORKS_LOCK:
            # What prepare lowered and validated, under the key run_point looks for: the
            # sweep's own process (one job) and workers forked from it find it.
            lowered = _NETWORKS.get(key)
            if lowered is not None and network not in _NETWORKS and len(_NETWORKS) < 2 * _NETWORKS_MAX:
                _NETWORKS[network] = lowered
            if network not in _SCENARIOS and len(_SCENARIOS) < _NETWORKS_MAX:
                _SCENARIOS[network] = p.scenario
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
    if _STARTS is not None:
        _STARTS.put((_worker_name(), task.point_id))
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
        return {"records": records, "wall_s": time.perf_counter() - start, "worker": _status_name()}
    except BaseException as err:  # noqa: BLE001 - a point's failure is data, the sweep goes on
        if isinstance(err, KeyboardInterrupt):
            raise
        return {
            "error": f"{type(err).__name__}: {err}",
            "wall_s": time.perf_counter() - start,
            "worker": _status_name(),
        }


def _status_name() -> str:
    """The worker as the status table names it: a Dask worker's address (as the
    scheduler names it), else host:pid/thread."""
    import sys

    if "distributed" in sys.modules:
        from distributed import get_worker

        try:
            return str(get_worker().address)
        except ValueError:  # not in a Dask worker
            pass
    return _worker_name()


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
        return cast(Any, Client)(address, timeout=f"{timeout_s}s", set_as_default=False)
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
    status: WorkerStatus | None = None,
    pool: LocalPool | None = None,
) -> Outcome:
    """Compute every task of ``plan_`` not already in ``store``, writing them as they
    finish. Locally on ``jobs`` worker processes (default: every core), or on the Dask
    cluster of ``client``. ``on_done(task, result)`` is called once the point is in the
    store (acknowledged); ``status`` is told which worker runs which point. ``pool``: the
    local workers, made by the caller before it started any thread (:class:`LocalPool`);
    else they are made here, before this function's own threads.

    One writer thread appends the finished points to the store in batches (a part file
    of the points finished within qoslab.store.BATCH_S, at most BATCH_POINTS of them),
    while the next points compute: one Parquet write is shared by many short points. On
    any exit, Ctrl-C included, every point that finished is written before this returns
    or raises."""
    done = store.done()
    todo = [t for t in plan_.tasks if t.point_id not in done]
    out = Outcome(total=len(plan_.tasks), kept=len(plan_.tasks) - len(todo))
    store.create()
    if not todo:
        if pool is not None:
            pool.close()
        return out
    if client is None and pool is None:
        pool = LocalPool(todo, jobs, watch=status is not None)
    writer = _StoreWriter(store, plan_, out, on_done)

    def finished(task: PointTask, result: dict[str, Any]) -> None:
        writer.raise_problem()
        if status is not None:
            status.finished(task, result)
        writer.put(task, result)

    try:
        if client is None:
            assert pool is not None
            _run_local(todo, pool, finished, status)
        else:
            _run_dask(client, todo, finished, status)
    finally:
        writer.close()
    writer.raise_problem()
    return out


class _StoreWriter:
    """The thread that appends finished points to the store (:func:`run`): in batches, a
    part file of the points finished within qoslab.store.BATCH_S, at most BATCH_POINTS of
    them. A write the disk refuses is kept and raised again in the sweep's thread; the
    points after it are not written (they would fail alike)."""

    def __init__(
        self,
        store: Any,
        plan_: Plan,
        out: Outcome,
        on_done: Callable[[PointTask, dict[str, Any]], None] | None,
    ) -> None:
        import queue

        self.store, self.plan, self.out, self.on_done = store, plan_, out, on_done
        self.pending: queue.SimpleQueue[tuple[PointTask, dict[str, Any]] | None] = queue.SimpleQueue()
        self.problems: list[BaseException] = []
        self.thread = threading.Thread(target=self._loop, name="qoslab-store-writer", daemon=True)
        self.thread.start()

    def put(self, task: PointTask, result: dict[str, Any]) -> None:
        self.pending.put((task, result))

    def close(self) -> None:
        """Write what is left and stop the thread."""
        self.pending.put(None)
        self.thread.join()

    def raise_problem(self) -> None:
        if self.problems:
            raise self.problems[0]

    def _flush(self, batch: list[tuple[PointTask, dict[str, Any]]]) -> None:
        if self.problems or not batch:
            return  # the disk refused one: the others would fail alike
        try:
            self.store.write_points(
                [
                    (dict(task.coords(), wall_s=result.get("wall_s")), result.get("records"), result.get("error"))
                    for task, result in batch
                ],
                self.plan.swept_units,
            )
        except BaseException as err:  # noqa: BLE001 - raised again in the caller's thread
            self.problems.append(err)
            return
        for task, result in batch:
            self.out.ran += 1
            if "error" in result:
                self.out.failed.append((task, result["error"]))
            if self.on_done is not None:
                self.on_done(task, result)

    def _loop(self) -> None:
        import queue

        from qoslab.store import BATCH_POINTS, BATCH_S

        batch: list[tuple[PointTask, dict[str, Any]]] = []
        first = 0.0
        while True:
            try:
                wait = None if not batch else max(0.0, first + BATCH_S - time.monotonic())
                item = self.pending.get(timeout=wait)
            except queue.Empty:
                self._flush(batch)
                batch = []
                continue
            if item is None:
                self._flush(batch)
                return
            if not batch:
                first = time.monotonic()
            batch.append(item)
            if len(batch) >= BATCH_POINTS or time.monotonic() - first >= BATCH_S:
                self._flush(batch)
                batch = []


_STARTS: Any = None
"""In a local worker process asked for its status (``--workers``): the queue it tells the
sweep each point it starts on."""


def _worker_init(starts: Any) -> None:
    """A worker process leaves Ctrl-C to the sweep, which stops it once every finished
    point is written; with ``starts``, it tells the sweep each point it starts."""
    import signal

    global _STARTS
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _STARTS = starts


def _ready(_: int) -> int:
    return os.getpid()


def _run_chunk(chunk: list[Any]) -> list[dict[str, Any]]:
    """run_point on each point of a chunk, in a worker; a forked worker is sent point ids
    (the tasks are the ones it inherited), a spawned one whole tasks."""
    return [run_point(_FORKED[t] if isinstance(t, str) else t) for t in chunk]


CHUNK_S = 0.02
"""A local worker is sent as many points at once as it computes in about this long (at
least one, at most :data:`CHUNK_POINTS`), measured on the points finished so far: a
message to a worker process and its answer cost some 0.2-1 ms, as long as a short point,
so points far shorter than this go in chunks that share one; a longer point goes alone."""

CHUNK_POINTS = 64


_FORKED: dict[str, PointTask] = {}
"""The tasks of the local pool being started, by point id: forked workers inherit them,
so that a point is sent to a worker as its id, not as its whole scenario data."""


class LocalPool:
    """The local worker processes of a sweep (``jobs``, default: one per core; none for
    one job, which runs in this thread).

    On Linux the workers are forked from this process when the pool is made: each starts
    in milliseconds with what this process has already imported, validated and lowered
    (the points' networks), and is sent each point as its id; a spawned interpreter
    would take about a second to import qoslab again, longer than a whole sweep of
    200 short points, and each point's scenario data would be pickled to it. Forking
    is safe only while no other thread of this process runs (a lock another thread
    holds would stay held in the child): make the pool before the writer thread, the
    progress display and the status reader start, as :func:`run` and ``qoslab sweep``
    do. Elsewhere the workers are spawned and sent whole tasks."""

    def __init__(self, todo: list[PointTask], jobs: int | None, *, watch: bool = False) -> None:
        import multiprocessing
        import sys
        from concurrent.futures import ProcessPoolExecutor

        self.todo = todo
        self.n = max(1, min(jobs or os.cpu_count() or 1, len(todo)))
        self.executor: Any = None
        self.starts: Any = None
        self.forked = False
        if self.n == 1:
            return
        self.forked = sys.platform.startswith("linux")
        ctx = multiprocessing.get_context("fork" if self.forked else "spawn")
        self.starts = ctx.SimpleQueue() if watch else None
        if self.forked:
            _FORKED.clear()
            _FORKED.update((t.point_id, t) for t in todo)
        self.executor = ProcessPoolExecutor(
            max_workers=self.n, mp_context=ctx, initializer=_worker_init, initargs=(self.starts,)
        )
        # The first submit forks every worker (before the executor's own threads start).
        self.executor.submit(_ready, 0).result()
        if self.forked:
            _FORKED.clear()  # this process's copy is not needed; the workers have theirs

    def submit(self, chunk: list[PointTask]) -> Any:
        """Run ``chunk`` on a worker; the future's result is a list, one result a point."""
        assert self.executor is not None
        return self.executor.submit(_run_chunk, [t.point_id if self.forked else t for t in chunk])

    def kill(self) -> None:
        """Stop the workers now (they ignore SIGINT): Ctrl-C of the sweep."""
        if self.executor is None:
            return
        for proc in list(getattr(self.executor, "_processes", {}).values()):
            proc.terminate()
        self.executor.shutdown(wait=False, cancel_futures=True)

    def close(self) -> None:
        if self.executor is not None:
            self.executor.shutdown()


def _read_starts(
    starts: Any, status: WorkerStatus | None, by_id: dict[str, PointTask], reading: threading.Event
) -> threading.Thread | None:
    """A thread that tells ``status`` each point the local workers start (their messages
    on ``starts``), until ``reading`` is cleared; None when nobody asked (``--workers``).

    Stopped by the event, never by a message of the sweep's own: a worker killed while it
    writes a start (kill -9 inside SimpleQueue.put) dies holding the queue's write lock,
    and a put from the sweep would then wait for ever. Only this thread reads, so its
    polls and gets never wait for another reader."""
    if starts is None or status is None:
        return None
    watched = status
    reading.set()

    def read() -> None:
        while reading.is_set():
            if not starts._poll(0.1):
                continue
            try:
                worker, pid = starts.get()
            except Exception:  # a start cut short by its writer's death: EOF, a bad pickle
                return
            watched.started(worker, by_id.get(pid))

    reader = threading.Thread(target=read, name="qoslab-worker-status", daemon=True)
    reader.start()
    return reader


def _run_local(
    todo: list[PointTask],
    pool: LocalPool,
    finished: Callable[[PointTask, dict[str, Any]], None],
    status: WorkerStatus | None = None,
) -> None:
    """The points on ``pool``'s worker processes, or in this thread for one job.

    Processes, not threads: a short point spends most of its time in Python (validating
    its scenario, planning, reading records), which threads would run one at a time
    under the GIL. Each process lowers a network once for all the points that share it
    (a forked worker finds the networks this process lowered). A worker process that
    dies fails the points it had (recorded as failed; run again next time)."""
    import math
    from collections import deque
    from concurrent.futures import FIRST_COMPLETED, wait
    from concurrent.futures.process import BrokenProcessPool

    if pool.executor is None:
        for task in todo:
            if status is not None:
                status.started(_worker_name(), task)
            finished(task, run_point(task))
        return
    reading = threading.Event()
    reader = _read_starts(pool.starts, status, {t.point_id: t for t in todo}, reading)
    waiting = deque(todo)
    inflight: dict[Any, list[PointTask]] = {}
    spent, measured = 0.0, 0

    def next_chunk() -> list[PointTask]:
        size = 1
        if measured:
            per_point = max(spent / measured, 1e-6)
            # Enough points for CHUNK_S, but leave every worker some of the last ones.
            size = max(1, min(CHUNK_POINTS, int(CHUNK_S / per_point), math.ceil(len(waiting) / (2 * pool.n))))
        return [waiting.popleft() for _ in range(min(size, len(waiting)))]

    try:
        while waiting or inflight:
            # Two chunks a worker: the next is there as soon as one finishes.
            while waiting and len(inflight) < 2 * pool.n:
                chunk = next_chunk()
                try:
                    inflight[pool.submit(chunk)] = chunk
                except BrokenProcessPool as err:
                    # A worker process died (killed, out of memory): the pool takes no more
                    # points; the rest are recorded as failed, to run again next time.
                    for task in chunk + list(waiting):
                        finished(task, {"error": f"{type(err).__name__}: {err}"})
                    waiting.clear()
            if not inflight:
                break
            ready, _ = wait(list(inflight), return_when=FIRST_COMPLETED)
            for fut in ready:
                chunk = inflight.pop(fut)
                try:
                    results = fut.result()
                except Exception as err:  # noqa: BLE001 - a worker process died (killed, out of memory)
                    results = [{"error": f"{type(err).__name__}: {err}"}] * len(chunk)
                for task, result in zip(chunk, results):
                    if isinstance(result.get("wall_s"), float):
                        spent += result["wall_s"]
                        measured += 1
                    finished(task, result)
    except BaseException:
        pool.kill()
        raise
    finally:
        reading.clear()
        if reader is not None:
            reader.join(timeout=5)
    pool.close()


def _run_dask(
    client: Any,
    todo: list[PointTask],
    finished: Callable[[PointTask, dict[str, Any]], None],
    status: WorkerStatus | None = None,
) -> None:
    """Submit every task to the cluster and hand each result on as it comes back. A
    task whose worker dies is run again on another by the scheduler; one that keeps
    killing workers (distributed's ``allowed-failures``) comes back as a failed point.
    With ``status``, the scheduler is asked twice a second which points each worker is
    processing (the first of them is shown as its current point)."""
    from distributed import as_completed

    keys = [f"qoslab-point-{t.point_id}" for t in todo]
    futures = client.map(run_point, todo, key=keys, pure=False)
    by_key = dict(zip(keys, todo))
    by_future = {f.key: t for f, t in zip(futures, todo)}
    stop = threading.Event()
    poller = None
    if status is not None:
        watched = status

        def poll() -> None:
            while not stop.wait(0.5):
                try:
                    processing = client.processing()
                except Exception:  # noqa: BLE001 - the status is a view; the sweep goes on without it
                    continue
                for worker, running in processing.items():
                    first = next((by_key[k] for k in running if k in by_key), None)
                    watched.started(worker, first)

        poller = threading.Thread(target=poll, name="qoslab-worker-status", daemon=True)
        poller.start()
    try:
        for fut in cast(Any, as_completed)(futures, loop=client.loop):
            task = by_future[fut.key]
            try:
                result = fut.result()
            except Exception as err:  # noqa: BLE001 - e.g. KilledWorker: the task's workers kept dying
                result = {"error": f"{type(err).__name__}: {err}"}
            finished(task, result)
    except BaseException:
        client.cancel(futures)
        raise
    finally:
        stop.set()
        if poller is not None:
            poller.join(timeout=5)


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
    "WorkerStatus",
    "SweepProgress",
]


# The terminal's view of a sweep lives in qoslab.sweep_progress; its names stay importable here.
from qoslab.sweep_progress import SweepProgress, WorkerStatus  # noqa: E402
