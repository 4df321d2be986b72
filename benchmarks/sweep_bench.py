"""Sweep throughput: the local pool's overhead per point, the speed-up from 1 to 2 local
cores, Dask's overhead per point on this machine (issue 18, "Speed"), and a sweep of many
tests on one large network.

    .venv/bin/python benchmarks/sweep_bench.py [--points 200] [--count 200] [--repeat 3] [--no-dask] [--json]
    .venv/bin/python benchmarks/sweep_bench.py --many-tests 1000 1000

Every point is the same short simulation (two hosts on a 100 Mb/s link, one UDP flow of
N datagrams; the swept payload changes the bytes, not the work), so the figures measure
the sweep machinery, not the simulator. All figures of one run come from the same points:

- **simulation**: the time spent inside ``qoslab.backends.sim.simulate`` (the core's run,
  its JSON in and out) and inside the core's ``simulate`` alone, added up in this process
  while the sweep runs on 1 process;
- **overhead per point (local)**: (wall time of the sweep on 1 process − simulation) /
  points, and the same beyond the core alone: validating the point's scenario, planning,
  reading records, appending the points to the store (a part file per 0.1 s of points);
- **speed-up 1 → 2 cores**: wall time on 1 process / wall time on 2 worker processes,
  the workers' start (fork) included; ``--repeat`` alternated runs of each, the median.
  Beside it the CPU time per point (this process and its workers, from getrusage) and
  the load average before and after: on a shared machine the speed-up is bounded by the
  cores the others leave;
- **Dask overhead per point**: (wall time through a scheduler and one worker of one
  thread, started here on 127.0.0.1 − wall time on 1 local process) / points.

The machine may be shared: run it on an idle machine, or read the figures as noisy.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SCENARIO = """
[scenario]
name = "sweep benchmark"
seed = 1
[node.a]
role = "host"
address = "10.0.0.1/24"
[node.b]
role = "host"
address = "10.0.0.2/24"
[[link]]
type = "ethernet"
rate = "100 Mbps"
ends = ["a", "b"]
[[test]]
method = "udp.flow"
from = "a"
to = "b"
payload = 100
rate = "1 Mbps"
count = {count}
[sweep]
"test[0].payload" = {{start = 100, stop = {stop}, step = 1}}
"""


def _plan(points: int, count: int):
    from qoslab import sweep_run
    from qoslab.scenario.load import loads_scenario

    sc = loads_scenario(SCENARIO.format(count=count, stop=100 + points - 1))
    return sweep_run.plan(sc)


def _timed_sim() -> dict[str, float]:
    """Wrap simulate() and the core's simulate to add up the time spent in each (all
    threads of this process)."""
    import threading

    from qoslab import _core
    from qoslab.backends import sim

    total = {"simulate": 0.0, "core": 0.0}
    lock = threading.Lock()

    def timing(real, name):
        def timed(*a, **k):
            t = time.perf_counter()
            try:
                return real(*a, **k)
            finally:
                with lock:
                    total[name] += time.perf_counter() - t

        return timed

    sim.simulate = timing(sim.simulate, "simulate")
    _core.simulate = timing(_core.simulate, "core")
    # A test on a network reaches the core through its session (python/qoslab/core_session.py).
    from qoslab import core_session

    class Timed:
        def __init__(self, session):
            self.session = session
            self.simulate = timing(session.simulate, "core")
            self.validate = session.validate

    real_session_for = core_session.session_for
    core_session.session_for = lambda base: Timed(real_session_for(base))
    return total


def _cpu() -> float:
    """CPU seconds of this process and of its children that have ended (the worker
    processes of a sweep end with it)."""
    import resource

    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def _run(plan, jobs: int | None = None, client=None) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of the sweep of ``plan`` into a fresh store, the
    worker processes' start included."""
    from qoslab import sweep_run
    from qoslab.store import ResultsStore

    out = Path(tempfile.mkdtemp(prefix="qoslab-sweep-bench-"))
    try:
        cpu, t = _cpu(), time.perf_counter()
        outcome = sweep_run.run(plan, ResultsStore(out), jobs=jobs, client=client)
        wall = time.perf_counter() - t
        assert outcome.ran == len(plan.tasks) and not outcome.failed, outcome.failed[:1]
        return wall, _cpu() - cpu
    finally:
        shutil.rmtree(out, ignore_errors=True)


def _many_tests(hosts: int, tests: int, jobs: int = 1, sessions: bool = True) -> dict:
    """A network of ``hosts`` hosts on one switch and a sweep of ``tests`` points over one
    ping's destination (``qoslab sweep``): the time to load the file, to check every point
    (``plan``: what ``qoslab check`` does) and to run them on ``jobs`` processes, and how many
    times the core decoded the network. ``sessions=False`` sends every test's whole
    configuration to the core instead (as before python/qoslab/core_session.py)."""
    from qoslab import _core, core_session, sweep_run
    from qoslab.scenario.load import loads_scenario
    from qoslab.store import ResultsStore

    head = ["[scenario]", 'name = "many tests"', "seed = 1", "[node.sw]", 'role = "switch"']
    for i in range(hosts):
        head += [f"[node.h{i}]", 'role = "host"', f'address = "10.0.{i // 250}.{i % 250 + 1}/16"']
    for i in range(hosts):
        head += ["[[link]]", 'type = "ethernet"', 'rate = "100 Mbps"', f'ends = ["h{i}", "sw"]']
    ping = ["[[test]]", 'method = "ping"', "count = 2", 'interval = "0.1 s"']
    swept = (
        "\n".join(
            head
            + ping
            + [
                'from = "h0"',
                'to = "h1"',
                "[sweep]",
                '"test[0].to" = [' + ", ".join(f'"h{i % (hosts - 1) + 1}"' for i in range(tests)) + "]",
            ]
        )
        + "\n"
    )
    made = [0]
    real_session, real_split = getattr(_core, "Session", None), core_session.split

    def counting(text: str):
        made[0] += 1
        return real_session(text)

    _core.Session = counting
    if not sessions:
        core_session.split = lambda config: None
    sweep_run._NETWORKS.clear()
    sweep_run._SCENARIOS.clear()
    core_session._SESSIONS.clear()
    out = Path(tempfile.mkdtemp(prefix="qoslab-many-"))
    try:
        t = time.perf_counter()
        sc = loads_scenario(swept)
        loaded = time.perf_counter() - t
        t = time.perf_counter()
        plan = sweep_run.plan(sc)
        checked = time.perf_counter() - t
        t = time.perf_counter()
        outcome = sweep_run.run(plan, ResultsStore(out), jobs=jobs)
        ran = time.perf_counter() - t
        assert not outcome.failed, outcome.failed[:1]
    finally:
        _core.Session = real_session
        core_session.split = real_split
        shutil.rmtree(out, ignore_errors=True)
    return {
        "hosts": hosts,
        "points": len(plan.tasks),
        "jobs": jobs,
        "sessions": sessions,
        "load_avg_1min": round(os.getloadavg()[0], 2),
        "load_s": round(loaded, 2),
        "check_s": round(checked, 2),
        "run_s": round(ran, 2),
        "check_per_point_ms": round(checked / len(plan.tasks) * 1e3, 1),
        "run_per_point_ms": round(ran / len(plan.tasks) * 1e3, 1),
        "total_s": round(loaded + checked + ran, 2),
        "network_decoded_by_the_core": made[0] if sessions else "once per test (no session)",
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--points", type=int, default=200)
    ap.add_argument("--count", type=int, default=200, help="datagrams per point's flow")
    ap.add_argument("--repeat", type=int, default=3, help="times each of --jobs 1 and --jobs 2 runs (median)")
    ap.add_argument("--no-dask", action="store_true")
    ap.add_argument("--json", action="store_true")
    ap.add_argument(
        "--many-tests",
        type=int,
        nargs=2,
        metavar=("HOSTS", "TESTS"),
        help="instead: a sweep of TESTS pings on a network of HOSTS hosts: check and run time, per point",
    )
    ap.add_argument("--jobs", type=int, default=1, help="with --many-tests: local processes")
    ap.add_argument(
        "--no-sessions", action="store_true", help="with --many-tests: every test's whole configuration to the core"
    )
    args = ap.parse_args()
    if args.many_tests:
        report = _many_tests(*args.many_tests, jobs=args.jobs, sessions=not args.no_sessions)
        print(json.dumps(report, indent=1) if args.json else report)
        return

    plan = _plan(args.points, args.count)
    sim_time = _timed_sim()
    _run(_plan(10, args.count), jobs=1)  # warm up (imports, first Parquet write)
    n = len(plan.tasks)
    load_before = os.getloadavg()[0]
    ones, twos, sims, cores, cpu1, cpu2 = [], [], [], [], [], []
    for _ in range(args.repeat):  # alternated, so that a change of the machine's load hits both
        sim_time.update(simulate=0.0, core=0.0)
        wall, cpu = _run(plan, jobs=1)  # in this process
        ones.append(wall)
        cpu1.append(cpu)
        sims.append(sim_time["simulate"])
        cores.append(sim_time["core"])
        wall, cpu = _run(plan, jobs=2)  # 2 worker processes, their start included
        twos.append(wall)
        cpu2.append(cpu)
    load_after = os.getloadavg()[0]
    one, two = statistics.median(ones), statistics.median(twos)
    i = ones.index(one)
    report = {
        "points": n,
        "datagrams_per_point": args.count,
        "repeats": args.repeat,
        "cpus": os.cpu_count(),
        "load_avg_1min_before_after": [round(load_before, 2), round(load_after, 2)],
        "wall_1_process_s": round(one, 3),
        "simulate_1_process_s": round(sims[i], 3),
        "core_1_process_s": round(cores[i], 3),
        "wall_per_point_1_process_ms": round(one / n * 1e3, 3),
        "overhead_per_point_ms": round((one - sims[i]) / n * 1e3, 3),
        "overhead_beyond_core_per_point_ms": round((one - cores[i]) / n * 1e3, 3),
        "cpu_per_point_1_process_ms": round(statistics.median(cpu1) / n * 1e3, 3),
        "wall_2_processes_s": round(two, 3),
        "cpu_per_point_2_processes_ms": round(statistics.median(cpu2) / n * 1e3, 3),
        "speedup_1_to_2": round(one / two, 3),
        # What two idle cores would give if the work divided evenly: a bound, not a measurement.
        "speedup_bound_from_cpu": round(2 * statistics.median(cpu1) / statistics.median(cpu2), 3),
        "speedups_each_repeat": [round(a / b, 3) for a, b in zip(ones, twos)],
    }
    if not args.no_dask:
        report.update(_dask(plan, one))
    if args.json:
        print(json.dumps(report, indent=1))
    for k, v in report.items():
        print(f"{k:>28}: {v}", file=sys.stderr)


def _dask(plan, local_one: float) -> dict:
    from distributed import Client

    bindir = Path(sys.executable).parent
    dask = str(bindir / "dask") if (bindir / "dask").exists() else "dask"
    tmp = Path(tempfile.mkdtemp(prefix="qoslab-dask-bench-"))
    procs = []
    try:
        procs.append(
            subprocess.Popen(
                [
                    dask,
                    "scheduler",
                    "--host",
                    "127.0.0.1",
                    "--port",
                    "0",
                    "--no-dashboard",
                    "--scheduler-file",
                    str(tmp / "s.json"),
                ],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                cwd=tmp,
            )
        )
        end = time.monotonic() + 120
        address = None
        while address is None and time.monotonic() < end:  # the file may exist before its text
            try:
                address = json.loads((tmp / "s.json").read_text())["address"]
            except (OSError, ValueError, KeyError):
                time.sleep(0.05)
        procs.append(
            subprocess.Popen(
                [dask, "worker", address, "--nthreads", "1", "--no-nanny", "--no-dashboard", "--host", "127.0.0.1"],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                cwd=tmp,
            )
        )
        client = Client(address, timeout="30s")
        client.wait_for_workers(1, timeout=120)
        _run(_plan(10, 200), client=client)  # the worker imports qoslab once
        wall, _ = _run(plan, client=client)
        client.close()
        return {
            "wall_dask_1_worker_s": round(wall, 3),
            "dask_overhead_per_point_ms": round((wall - local_one) / len(plan.tasks) * 1e3, 3),
        }
    finally:
        for p in reversed(procs):
            p.send_signal(signal.SIGTERM)
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
