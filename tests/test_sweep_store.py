"""`qoslab sweep --out DIR`: ranges and replications in [sweep], the Parquet results store
(one file per finished point, nothing lost, nothing computed twice), `qoslab results`,
aggregation over replications, and bad input refused before anything runs.

Independent checks: one-way latency from IEEE 802.3 arithmetic (a UDP datagram of P
payload bytes is P + 8 + 20 + 14 + 4 frame bytes plus 8 of preamble and SFD, clause
3.1.1), replica seeds from SHA-256 computed here, Student t quantiles from published
tables, means and standard deviations from Python's statistics module, line numbers
counted in the test's own text.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import os
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from conftest import TWO_HOSTS
from qoslab.scenario.load import loads_scenario

QOSLAB = [sys.executable, "-m", "qoslab"]

BASE = (
    TWO_HOSTS.format(name="one link, swept", seed=3)
    + """[[link]]
type = "ethernet"
rate = "10 Mbps"
ends = ["a", "b"]
[[test]]
method = "udp.flow"
from = "a"
to = "b"
payload = 100
rate = "100 kbps"
duration = "1 s"
"""
)


def _latency_ms(payload: int, rate_bps: float) -> float:
    frame = payload + 8 + 20 + 14 + 4  # UDP, IPv4, Ethernet II header, FCS
    return (frame + 8) * 8 / rate_bps * 1e3  # + preamble and SFD


def _sweep(args: list[str], **kw) -> subprocess.CompletedProcess:
    return subprocess.run(QOSLAB + ["sweep", *args], capture_output=True, text=True, timeout=600, **kw)


def _results(out: Path, sql: str) -> list[dict]:
    proc = subprocess.run(QOSLAB + ["results", str(out), sql, "--json"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


# --------------------------------------------------------------------------- the language


def test_a_range_gives_start_step_by_step_up_to_stop():
    sc = loads_scenario(
        BASE
        + '[sweep]\n"test[0].payload" = {start = 100, stop = 400, step = 100}\n"link[0].rate" = {start = "10 Mbps", stop = "20 Mbps", step = "5 Mbps"}\n'
    )
    assert sc.sweep.values["test[0].payload"] == [100, 200, 300, 400]
    assert sc.sweep.values["link[0].rate"] == ["10 Mbps", "15 Mbps", "20 Mbps"]
    # Decimal steps land on stop (0.1 is not exact in binary).
    from qoslab.scenario.model import sweep_range

    assert sweep_range("k", {"start": 0.0, "stop": 0.3, "step": 0.1}) == [0.0, 0.1, 0.2, 0.3]


@pytest.mark.parametrize(
    "rng, words",
    [
        ("{start = 500, stop = 100, step = 100}", "start is above stop"),
        ("{start = 100, stop = 500, step = 0}", "step must be above 0"),
        ('{start = "1 Mbps", stop = "10 kbps", step = "1 Mbps"}', "one and the same unit"),
        ("{start = 1, stop = 5}", "exactly the keys start, stop and step"),
    ],
)
def test_a_bad_range_is_refused_at_its_line_before_anything_runs(tmp_path, rng, words):
    text = BASE + f'[sweep]\n"test[0].payload" = {rng}\n'
    line = text.splitlines().index(f'"test[0].payload" = {rng}') + 1
    path = tmp_path / "bad.toml"
    path.write_text(text)
    proc = _sweep([str(path), "--out", str(tmp_path / "out")])
    assert proc.returncode == 2, proc.stderr
    assert f"{path}:{line}:" in proc.stderr and 'sweep."test[0].payload"' in proc.stderr and words in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not list((tmp_path / "out").glob("points/*.parquet"))


def test_a_sweep_path_naming_no_key_is_refused_with_its_line(tmp_path):
    text = BASE + '[sweep]\n"link[0].rat" = ["1 Mbps", "2 Mbps"]\n'
    line = text.splitlines().index('"link[0].rat" = ["1 Mbps", "2 Mbps"]') + 1
    path = tmp_path / "bad.toml"
    path.write_text(text)
    proc = _sweep([str(path), "--out", str(tmp_path / "out")])
    assert proc.returncode == 2
    assert (
        f"{path}:{line}:" in proc.stderr
        and "names no parameter" in proc.stderr
        and "did you mean 'rate'?" in proc.stderr
    )


def test_an_unreachable_scheduler_is_refused_before_anything_runs(tmp_path):
    import socket

    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    path = tmp_path / "s.toml"
    path.write_text(BASE + '[sweep]\n"test[0].payload" = [100, 200]\n')
    log = tmp_path / "points.log"
    for args, env in (
        (["--cluster", f"tcp://127.0.0.1:{port}"], {}),
        ([], {"QOSLAB_DASK_SCHEDULER": f"tcp://127.0.0.1:{port}"}),
    ):
        proc = _sweep(
            [str(path), "--out", str(tmp_path / "out"), *args], env=dict(os.environ, QOSLAB_POINT_LOG=str(log), **env)
        )
        assert proc.returncode == 2, proc.stderr
        assert "no Dask scheduler answers" in proc.stderr and f"tcp://127.0.0.1:{port}" in proc.stderr
        assert ("--cluster" if args else "QOSLAB_DASK_SCHEDULER") in proc.stderr
    proc = _sweep([str(path), "--out", str(tmp_path / "out"), "--cluster", "http://x"])
    assert proc.returncode == 2 and "not a Dask scheduler address" in proc.stderr
    assert not log.exists() and not list((tmp_path / "out").glob("points/*.parquet"))


# --------------------------------------------------------------------------- the store


def test_the_store_keeps_each_point_with_its_coordinates_units_and_nested_values(tmp_path):
    path = tmp_path / "s.toml"
    path.write_text(
        BASE
        + '[sweep]\n"link[0].rate" = ["10 Mbps", "100 Mbps"]\n"test[0].payload" = {start = 100, stop = 1000, step = 900}\n'
    )
    out = tmp_path / "out"
    proc = _sweep([str(path), "--out", str(out), "--jobs", "2", "--json"])
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    assert (summary["points"], summary["run"], summary["kept"], summary["failed"]) == (4, 4, 0, [])
    rows = _results(
        out,
        'SELECT point, replication, seed, status, "link[0].rate", "test[0].payload", written, latency_ms, lost, sweep_id, point_id FROM results ORDER BY point',
    )
    assert [r["point"] for r in rows] == [0, 1, 2, 3]
    assert {r["sweep_id"] for r in rows} == {summary["sweep_id"]} and len({r["point_id"] for r in rows}) == 4
    for r, (rate, payload) in zip(rows, [(10e6, 100), (10e6, 1000), (100e6, 100), (100e6, 1000)]):
        # The swept columns hold the value the scenario has there, in SI units (bit/s).
        assert (r["link[0].rate"], r["test[0].payload"]) == (rate, payload)
        assert r["written"]["link[0].rate"] == f"{rate / 1e6:g} Mbps"
        assert (r["status"], r["replication"], r["seed"], r["lost"]) == ("ok", 0, 3, 0)
        assert r["latency_ms"] == pytest.approx(_latency_ms(payload, rate), rel=1e-6)
    # The points are appended in parts (the points finished within 0.1 s share one);
    # together the parts hold each point once, and no temporary file is left.
    files = sorted((out / "points").glob("part-*.parquet"))
    assert 1 <= len(files) <= 4 and not list((out / "points").glob(".*tmp"))
    ids = [pid for f in files for pid in pq.read_table(f, columns=["point_id"]).column(0).to_pylist()]
    assert sorted(ids) == sorted(r["point_id"] for r in rows)
    schema = pq.read_schema(files[0])
    assert schema.field("link[0].rate").metadata[b"unit"] == b"bit/s"
    assert schema.field("latency_ms").metadata[b"unit"] == b"ms"
    assert schema.field("seed").type == pa.uint64()
    # Values given per node are a map, not JSON text.
    per_node = [f for f in schema if pa.types.is_map(f.type)]
    assert per_node and not any(f.type == pa.string() and f.name.startswith("cpu_util") for f in schema)
    # The same command again computes nothing.
    again = _sweep([str(path), "--out", str(out), "--json"])
    assert again.returncode == 0 and json.loads(again.stdout)["run"] == 0 and json.loads(again.stdout)["kept"] == 4


def test_a_failing_point_is_recorded_with_its_error_and_the_sweep_goes_on(tmp_path):
    from qoslab import sweep_run
    from qoslab.store import ResultsStore, query

    sc = loads_scenario(BASE + '[sweep]\n"test[0].payload" = [100, 200, 300]\n')
    plan = sweep_run.plan(sc)
    # A point whose test names a node the network lacks: it fails when it runs.
    broken = json.loads(json.dumps(plan.tasks[1].raw))
    broken["test"][0]["to"] = "nowhere"
    plan.tasks[1] = dataclasses.replace(plan.tasks[1], raw=broken)
    store = ResultsStore(tmp_path)
    outcome = sweep_run.run(plan, store, jobs=2)
    assert outcome.ran == 3 and [t.index for t, _ in outcome.failed] == [1]
    names, rows = query(tmp_path, "SELECT point, status, error FROM results ORDER BY point")
    assert [(r[0], r[1]) for r in rows] == [(0, "ok"), (1, "failed"), (2, "ok")]
    assert rows[1][2] and "nowhere" in rows[1][2]
    assert store.failed() == {plan.tasks[1].point_id}


def test_replications_run_with_derived_seeds_and_aggregate_with_student_t(tmp_path):
    from qoslab.store import aggregate, t_quantile_975

    # Published two-sided 95 % t values (any statistics table): df 1, 2, 4, 9, 30.
    for df, t in ((1, 12.706), (2, 4.303), (4, 2.776), (9, 2.262), (30, 2.042)):
        assert t_quantile_975(df) == pytest.approx(t, abs=5e-4)
    path = tmp_path / "s.toml"
    lossy = BASE.replace('ends = ["a", "b"]', 'ends = ["a", "b"]\nloss = "20 %"').replace(
        "payload = 100", "payload = 100\ncount = 200"
    )
    lossy = lossy.replace('duration = "1 s"\n', "")
    path.write_text(lossy + '[sweep]\nreplications = 3\n"test[0].payload" = [100, 200]\n')
    out = tmp_path / "out"
    proc = _sweep([str(path), "--out", str(out), "--report"])
    assert proc.returncode == 0, proc.stderr
    rows = _results(
        out,
        'SELECT point, replication, seed, "test[0].payload" AS payload, received FROM results ORDER BY point, replication',
    )
    assert len(rows) == 6
    want = [3] + [int.from_bytes(hashlib.sha256(f"3/{k}".encode()).digest()[:8], "big") >> 1 for k in (1, 2)]
    assert [r["seed"] for r in rows] == want * 2
    keys, agg = aggregate(out)
    assert keys == ["test[0].payload"] and [a["test[0].payload"] for a in agg] == [100, 200]
    for a in agg:
        got = [r["received"] for r in rows if r["payload"] == a["test[0].payload"]]
        assert len(set(got)) > 1, "20 % loss should differ between seeds"
        cell = a["received"]
        assert cell["n"] == 3 and cell["mean"] == pytest.approx(statistics.mean(got))
        assert cell["sd"] == pytest.approx(statistics.stdev(got))
        assert cell["ci95"] == pytest.approx(4.303 * statistics.stdev(got) / math.sqrt(3), rel=1e-3)
    figures = {p.name for p in (out / "figures").glob("*.png")}
    assert "test_0_.payload__received.png" in figures and "test_0_.payload__loss_pct.png" in figures
    summary = json.loads((out / "summary.json").read_text())
    assert summary["swept"] == ["test[0].payload"]


def test_points_that_differ_only_in_tests_lower_the_network_once(monkeypatch):
    from qoslab import sweep_run
    from qoslab.backends import sim

    calls = []
    real = sim.lower_network
    monkeypatch.setattr(sim, "lower_network", lambda *a, **k: calls.append(1) or real(*a, **k))
    sweep_run._NETWORKS.clear()
    sweep_run._SCENARIOS.clear()
    sc = loads_scenario(
        BASE.replace("one link, swept", "lowered once") + '[sweep]\n"test[0].payload" = [100, 200, 300, 400]\n'
    )
    plan = sweep_run.plan(sc)
    results = [sweep_run.run_point(t) for t in plan.tasks]
    assert all("records" in r for r in results)
    # Once in all: checking the points (plan) lowers it, running them finds it lowered.
    assert len(calls) == 1
    for r, t in zip(results, plan.tasks):
        assert r["records"][0]["metrics"]["latency_ms"] == pytest.approx(
            _latency_ms(t.swept["test[0].payload"], 10e6), rel=1e-6
        )


# --------------------------------------------------------------------------- nothing lost

HEAVY = (
    TWO_HOSTS.format(name="heavier points", seed=5)
    + """[[link]]
type = "ethernet"
rate = "100 Mbps"
ends = ["a", "b"]
[[test]]
method = "udp.flow"
from = "a"
to = "b"
payload = 1000
rate = "20 Mbps"
duration = "40 s"
[sweep]
"test[0].payload" = {start = 1000, stop = 1039, step = 1}
"""
)
"""40 points, each some 10^5 datagrams: long enough to stop a sweep in its middle even on
an idle machine with the profile-guided core (with 10^4 a point, all 40 could finish within
the test's 20-ms poll and one 0.1-s store batch)."""


def _wait_for(pred, timeout: float, what: str) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():
            return
        time.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")


def _address(scheduler_file: Path) -> str | None:
    """The address in a Dask scheduler file, once the scheduler has written it whole."""
    try:
        return json.loads(scheduler_file.read_text())["address"]
    except (OSError, ValueError, KeyError):
        return None


def _done(out: Path) -> int:
    """The points the store holds finished (its parts are read as they appear)."""
    from qoslab.store import ResultsStore

    return len(ResultsStore(out).done())


@pytest.mark.slow
def test_ctrl_c_loses_no_point_and_the_rerun_computes_none_twice(tmp_path):
    path = tmp_path / "heavy.toml"
    path.write_text(HEAVY)
    out, log = tmp_path / "out", tmp_path / "computed.log"
    env = dict(os.environ, QOSLAB_POINT_LOG=str(log))
    proc = subprocess.Popen(
        QOSLAB + ["sweep", str(path), "--out", str(out), "--jobs", "1"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        _wait_for(lambda: _done(out) >= 3, 300, "three points")
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 130, err
    from qoslab.store import ResultsStore

    kept = ResultsStore(out).done()
    assert 3 <= len(kept) < 40, "the sweep should have been stopped in its middle"
    rerun = _sweep([str(path), "--out", str(out), "--json"], env=env)
    assert rerun.returncode == 0, rerun.stderr
    assert json.loads(rerun.stdout)["kept"] == len(kept)
    computed = [line.split()[0] for line in log.read_text().splitlines()]
    # Points finished before Ctrl-C were computed once; only the one in flight (if any) twice.
    assert all(computed.count(pid) == 1 for pid in kept)
    assert len(computed) - len(set(computed)) <= 1 and len(set(computed)) == 40
    rows = _results(
        out, "SELECT point, count(*) AS n, count(DISTINCT point_id) AS ids FROM results GROUP BY point ORDER BY point"
    )
    assert [(r["point"], r["n"], r["ids"]) for r in rows] == [(i, 1, 1) for i in range(40)]


@pytest.mark.slow
def test_a_dask_cluster_with_a_worker_killed_midway_loses_no_point(tmp_path):
    pytest.importorskip("distributed")
    bindir = Path(sys.executable).parent
    dask = str(bindir / "dask") if (bindir / "dask").exists() else "dask"
    path = tmp_path / "heavy.toml"
    path.write_text(HEAVY)
    out, log, sched_file = tmp_path / "out", tmp_path / "computed.log", tmp_path / "scheduler.json"
    env = dict(os.environ, QOSLAB_POINT_LOG=str(log), PYTHONUNBUFFERED="1")
    procs: list[subprocess.Popen] = []
    logs = []

    def start(args: list[str]) -> subprocess.Popen:
        logs.append(open(tmp_path / f"{len(procs)}.log", "w"))
        p = subprocess.Popen([dask, *args], env=env, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=logs[-1])
        procs.append(p)
        return p

    try:
        start(
            ["scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard", "--scheduler-file", str(sched_file)]
        )
        _wait_for(lambda: _address(sched_file) is not None, 120, "the scheduler")  # the file may exist before its text
        address = _address(sched_file)
        assert address.startswith("tcp://127.0.0.1:")
        # --no-nanny: the worker is one process, so SIGKILL really ends it (a nanny would restart it).
        workers = [
            start(
                [
                    "worker",
                    address,
                    "--nthreads",
                    "1",
                    "--no-nanny",
                    "--no-dashboard",
                    "--host",
                    "127.0.0.1",
                    "--name",
                    f"w{i}",
                ]
            )
            for i in range(2)
        ]
        # Both workers registered with the scheduler (its log says so) before the sweep starts.
        _wait_for(lambda: (tmp_path / "0.log").read_text().count("Register worker") >= 2, 120, "two workers")
        # The sweep's output goes to files: a pipe nobody reads could fill and stop it.
        logs += [open(tmp_path / "sweep.out", "w"), open(tmp_path / "sweep.err", "w")]
        sweep = subprocess.Popen(
            QOSLAB + ["sweep", str(path), "--out", str(out), "--cluster", address, "--json"],
            env=env,
            stdout=logs[-2],
            stderr=logs[-1],
        )
        procs.append(sweep)
        _wait_for(lambda: _done(out) >= 6, 300, "six points")
        workers[0].send_signal(signal.SIGKILL)
        at_kill = _done(out)
        workers[0].wait(timeout=30)
        sweep.wait(timeout=600)
        assert sweep.returncode == 0, (tmp_path / "sweep.err").read_text()
        summary = json.loads((tmp_path / "sweep.out").read_text())
        assert summary["points"] == 40 and summary["failed"] == []
        assert at_kill < 40, "the worker should have been killed in the sweep's middle"
        rows = _results(
            out,
            "SELECT point, count(*) AS n, count(DISTINCT point_id) AS ids, min(status) AS status FROM results GROUP BY point ORDER BY point",
        )
        assert [(r["point"], r["n"], r["ids"], r["status"]) for r in rows] == [(i, 1, 1, "ok") for i in range(40)]
        # Both workers computed points (each line: point id, worker host:pid/thread).
        lines = [line.split() for line in log.read_text().splitlines()]
        assert len({pid for pid, _ in lines}) == 40
        by_worker = {w.split("/")[0].split(":")[1] for _, w in lines}
        assert str(workers[0].pid) in by_worker and str(workers[1].pid) in by_worker
    finally:
        for p in reversed(procs):
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in procs:
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        for fh in logs:
            fh.close()


def test_run_on_a_sweep_with_replications_tags_rows_and_replication_0_is_the_run_as_written():
    from qoslab.report.tables import tidy
    from qoslab.sweep import run_sweep

    lossy = BASE.replace('ends = ["a", "b"]', 'ends = ["a", "b"]\nloss = "20 %"')
    plain = [
        r
        for p in run_sweep(loads_scenario(lossy + '[sweep]\n"test[0].payload" = [100, 200]\n'), jobs=1)
        for r in p.records()
    ]
    reps = [
        r
        for p in run_sweep(
            loads_scenario(lossy + '[sweep]\nreplications = 2\n"test[0].payload" = [100, 200]\n'), jobs=2
        )
        for r in p.records()
    ]
    assert [(r["point"], r["replication"]) for r in reps] == [(0, 0), (0, 1), (1, 0), (1, 1)]
    # Replication 0 runs with the scenario's own seed: the same records as without replications.
    first = [{k: v for k, v in r.items() if k != "replication"} for r in reps if r["replication"] == 0]
    assert json.dumps(first, sort_keys=True) == json.dumps(plain, sort_keys=True)
    assert reps[0]["metrics"]["received"] != reps[1]["metrics"]["received"]  # another seed, other losses
    # The tidy rows `run --report` writes tell the points apart.
    rows = tidy(reps)
    assert [(row["point"], row["replication"], row["test[0].payload"]) for row in rows] == [
        (0, 0, 100),
        (0, 1, 100),
        (1, 0, 200),
        (1, 1, 200),
    ]


@pytest.mark.parametrize(
    "example", ["seed003_ipsec_2vpn.toml", "seed001_lane.toml", "seed000_l3f.toml", "seed002_pptp_over_openvpn.toml"]
)
def test_the_core_gets_the_same_bytes_when_tests_share_the_network_encoding(example):
    """Many tests on one network reuse the JSON text of its tables (backends/sim._encode):
    what the core reads must be the configuration's JSON encoded afresh, byte for byte,
    for every test, however many ran before on the same network."""
    from qoslab.backends.sim import _encode, lower_network
    from qoslab.lower import lowered
    from qoslab.methods import Search, plan_test
    from qoslab.scenario import load_scenario

    root = Path(__file__).resolve().parents[1]
    sc = load_scenario(root / "examples" / example)
    net = lower_network(sc)
    for _ in range(2):
        for i in range(len(sc.test)):
            plan = plan_test(net, i, seed=7)
            if isinstance(plan, Search):
                flows, duration, windows = plan.trials.first_flows()
                config = net.with_flows(flows, duration, seed=7, windows=windows)
            else:
                config = net.with_flows(plan.flows, plan.duration_ns, seed=7, windows=plan.windows)
            cached = _encode(config)
            lowered._ENCODED.clear()
            assert cached == _encode(config)


@pytest.mark.parametrize(
    "sweep",
    ['"test[0].payload" = {start = 500, stop = 100, step = 100}', '"link[0].rat" = ["1 Mbps", "2 Mbps"]'],
)
def test_check_refuses_a_bad_sweep_first_with_the_message_sweep_gives(tmp_path, sweep):
    path = tmp_path / "bad.toml"
    path.write_text(BASE + f"[sweep]\n{sweep}\n")
    swept = _sweep([str(path), "--out", str(tmp_path / "out")])
    check = subprocess.run(QOSLAB + ["check", str(path)], capture_output=True, text=True, timeout=120)
    assert swept.returncode == check.returncode == 2
    # The first line names the file, line and key; both commands print it the same.
    first = swept.stderr.strip().splitlines()[0]
    assert first.startswith(f"error: {path}:") and first in check.stderr
    assert not (tmp_path / "out" / "points").exists() or not list((tmp_path / "out" / "points").iterdir())
