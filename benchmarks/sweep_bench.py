"""Sweep throughput: the local pool's overhead per point, the speed-up from 1 to 2 local
cores, and Dask's overhead per point on this machine (issue 18, "Speed").

    .venv/bin/python benchmarks/sweep_bench.py [--points 200] [--no-dask] [--json]

Every point is the same short simulation (two hosts on a 100 Mb/s link, one UDP flow of
N datagrams; the swept payload changes the bytes, not the work), so the figures measure
the sweep machinery, not the simulator:

- **simulation**: the sum of the time spent inside ``qoslab.backends.sim.simulate`` (the
  core's run, its JSON in and out), timed in this process;
- **overhead per point (local)**: (wall time of the sweep on 1 thread − simulation) / points:
  validating the point's scenario, planning, reading records, writing its Parquet file;
- **speed-up 1 → 2 cores**: wall time on 1 process / wall time on 2 worker processes (issue
  target ≥ 1.8), with and without the time to start the 2 processes (a fresh interpreter
  each, importing qoslab: paid once per sweep);
- **Dask overhead per point**: (wall time through a scheduler and one worker of one
  thread, started here on 127.0.0.1 − wall time on 1 local thread) / points.

The machine may be shared: run it on an idle machine, or read the figures as noisy.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
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


def _timed_sim():
    """Wrap simulate() to add up the time spent in it (all threads)."""
    import threading

    from qoslab.backends import sim

    total = [0.0]
    lock = threading.Lock()
    real = sim.simulate

    def timed(*a, **k):
        t = time.perf_counter()
        try:
            return real(*a, **k)
        finally:
            with lock:
                total[0] += time.perf_counter() - t

    sim.simulate = timed
    return total


def _run(plan, jobs: int | None = None, client=None) -> float:
    from qoslab import sweep_run
    from qoslab.store import ResultsStore

    out = Path(tempfile.mkdtemp(prefix="qoslab-sweep-bench-"))
    try:
        t = time.perf_counter()
        outcome = sweep_run.run(plan, ResultsStore(out), jobs=jobs, client=client)
        wall = time.perf_counter() - t
        assert outcome.ran == len(plan.tasks) and not outcome.failed, outcome.failed[:1]
        return wall
    finally:
        shutil.rmtree(out, ignore_errors=True)


def _many_tests(hosts: int, tests: int) -> dict:
    """A network of ``hosts`` hosts on one switch: ``tests`` ping tests in one scenario
    (``qoslab run``), and a sweep of ``tests`` points over one ping's destination
    (``qoslab sweep``), per test and per point."""
    from qoslab import sweep_run
    from qoslab.backends.sim import run_tests
    from qoslab.scenario.load import loads_scenario
    from qoslab.store import ResultsStore

    head = ["[scenario]", 'name = "many tests"', "seed = 1", "[node.sw]", 'role = "switch"']
    for i in range(hosts):
        head += [f"[node.h{i}]", 'role = "host"', f'address = "10.0.{i // 250}.{i % 250 + 1}/16"']
    for i in range(hosts):
        head += ["[[link]]", 'type = "ethernet"', 'rate = "100 Mbps"', f'ends = ["h{i}", "sw"]']
    ping = ["[[test]]", 'method = "ping"', "count = 2", 'interval = "0.1 s"']
    many = (
        "\n".join(
            head
            + [line for i in range(tests) for line in ping + [f'from = "h{i % hosts}"', f'to = "h{(i + 1) % hosts}"']]
        )
        + "\n"
    )
    t = time.perf_counter()
    run_tests(loads_scenario(many))
    per_test = (time.perf_counter() - t) / tests
    swept = (
        "\n".join(
            head
            + ping
            + [
                'from = "h0"',
                'to = "h1"',
                "[sweep]",
                '"test[0].to" = [' + ", ".join(f'"h{i}"' for i in range(1, tests + 1)) + "]",
            ]
        )
        + "\n"
    )
    out = Path(tempfile.mkdtemp(prefix="qoslab-many-"))
    try:
        t = time.perf_counter()
        sweep_run.run(sweep_run.plan(loads_scenario(swept)), ResultsStore(out), jobs=1)
        per_point = (time.perf_counter() - t) / tests
    finally:
        shutil.rmtree(out, ignore_errors=True)
    return {
        "hosts": hosts,
        "tests": tests,
        "run_per_test_s": round(per_test, 3),
        "sweep_per_point_s": round(per_point, 3),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--points", type=int, default=200)
    ap.add_argument("--count", type=int, default=200, help="datagrams per point's flow")
    ap.add_argument("--no-dask", action="store_true")
    ap.add_argument("--json", action="store_true")
    ap.add_argument(
        "--many-tests",
        type=int,
        nargs=2,
        metavar=("HOSTS", "TESTS"),
        help="instead: per-test and per-point time of TESTS pings on a network of HOSTS hosts",
    )
    args = ap.parse_args()
    if args.many_tests:
        report = _many_tests(*args.many_tests)
        print(json.dumps(report, indent=1) if args.json else report)
        return

    plan = _plan(args.points, args.count)
    sim_time = _timed_sim()
    _run(_plan(10, args.count), jobs=1)  # warm up (imports, first Parquet write)
    sim_time[0] = 0.0
    one = _run(plan, jobs=1)  # in this process
    sim_one = sim_time[0]
    two = _run(plan, jobs=2)
    # Starting 2 worker processes (spawn: a fresh interpreter importing qoslab), measured
    # as a sweep of 2 points on 2 processes less one point's time on 1.
    startup = _run(_plan(2, args.count), jobs=2) - one / len(plan.tasks)
    report = {
        "points": len(plan.tasks),
        "cpus": os.cpu_count(),
        "load_avg_1min": os.getloadavg()[0],
        "wall_1_thread_s": round(one, 3),
        "simulation_1_thread_s": round(sim_one, 3),
        "overhead_per_point_ms": round((one - sim_one) / len(plan.tasks) * 1e3, 3),
        "simulation_per_point_ms": round(sim_one / len(plan.tasks) * 1e3, 3),
        "wall_2_processes_s": round(two, 3),
        "speedup_1_to_2": round(one / two, 3),
        "start_2_processes_s": round(startup, 3),
        "speedup_1_to_2_without_start": round(one / max(two - startup, 1e-9), 3),
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
        wall = _run(plan, client=client)
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
