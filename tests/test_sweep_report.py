"""`qoslab sweep --report` writes DIR/report.html (figures of each swept key against each
metric, the aggregated table, the failed points with their errors), and `--workers`
keeps a live table of the workers.

Independent checks: means and sample standard deviations from Python's statistics
module over the store's rows, the 95 % interval from the published t value for 2
degrees of freedom (4.303), the failed point's error from the point the test broke
itself, the page's figures counted against the PNG files written beside it, the
workers' process ids against this process's own.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import statistics
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest
from conftest import TWO_HOSTS
from qoslab.scenario.load import loads_scenario

QOSLAB = [sys.executable, "-m", "qoslab"]

LOSSY = (
    TWO_HOSTS.format(name="lossy, swept", seed=3)
    + """[[link]]
type = "ethernet"
rate = "10 Mbps"
ends = ["a", "b"]
loss = "20 %"
[[test]]
method = "udp.flow"
from = "a"
to = "b"
payload = 100
rate = "100 kbps"
count = 200
"""
)


class _Page(HTMLParser):
    """The page's images, and the text of each cell of the tables by table id."""

    def __init__(self) -> None:
        super().__init__()
        self.images: list[str] = []
        self.tables: dict[str, list[list[str]]] = {}
        self._table: str | None = None
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "img":
            self.images.append(a.get("src") or "")
        elif tag == "table":
            self._table = a.get("id") or ""
            self.tables[self._table] = []
        elif tag == "tr" and self._table is not None:
            self.tables[self._table].append([])
        elif tag in ("td", "th") and self._table is not None:
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._table is not None and self._cell is not None:
            self.tables[self._table][-1].append("".join(self._cell).strip())
            self._cell = None
        elif tag == "table":
            self._table = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def _page(path: Path) -> _Page:
    page = _Page()
    page.feed(path.read_text(encoding="utf-8"))
    return page


def test_sweep_report_has_the_figures_the_aggregate_and_the_failed_points(tmp_path):
    from qoslab import sweep_run
    from qoslab.report.sweep_report import write_sweep_report
    from qoslab.store import ResultsStore, query

    sc = loads_scenario(LOSSY + '[sweep]\nreplications = 3\n"test[0].payload" = [100, 200, 300]\n')
    plan = sweep_run.plan(sc)
    # Replication 1 of the last point names a node the network lacks: it fails when it runs.
    bad = next(i for i, t in enumerate(plan.tasks) if t.index == 2 and t.replication == 1)
    broken = json.loads(json.dumps(plan.tasks[bad].raw))
    broken["test"][0]["to"] = "nowhere"
    plan.tasks[bad] = dataclasses.replace(plan.tasks[bad], raw=broken)
    outcome = sweep_run.run(plan, ResultsStore(tmp_path), jobs=2)
    assert outcome.ran == 9 and len(outcome.failed) == 1
    page_path, figures = write_sweep_report(
        sc, Path("lossy.toml"), tmp_path, points=plan.points, replications=plan.replications, sweep_id=plan.sweep_id
    )
    page = _page(page_path)
    # One inline figure per PNG written beside the page, a figure per metric against the one key.
    pngs = sorted((tmp_path / "figures").glob("*.png"))
    assert figures == len(pngs) == len(page.images) and figures >= 5
    assert all(src.startswith("data:image/png;base64,") for src in page.images)
    assert (tmp_path / "figures" / "test_0_.payload__received.png").exists()
    # The aggregated table: mean ± 95 % CI (n) of `received` over the replications that ran.
    _, rows = query(
        tmp_path, "SELECT \"test[0].payload\", received FROM results WHERE status = 'ok' ORDER BY point, replication"
    )
    table = page.tables["aggregate"]
    head = table[0]
    col = next(i for i, h in enumerate(head) if h.startswith("received"))
    for line, payload in zip(table[1:], (100, 200, 300)):
        got = [r[1] for r in rows if r[0] == payload]
        n = 2 if payload == 300 else 3
        assert len(got) == n and line[0] == str(payload)
        mean, _, rest = line[col].partition(" ± ")
        ci, _, count = rest.partition(" (")
        assert float(mean) == pytest.approx(statistics.mean(got), rel=1e-3)
        t = 4.303 if n == 3 else 12.706
        assert float(ci) == pytest.approx(t * statistics.stdev(got) / math.sqrt(n), rel=1e-3)
        assert count == f"{n})"
    # The failed point, its values as written and its error.
    failed = page.tables["failed"]
    assert len(failed) == 2
    point, replication, _, values, error = failed[1]
    assert (point, replication, values) == ("2", "1", "test[0].payload = 300")
    assert "nowhere" in error


def test_the_cli_writes_the_report_page(tmp_path):
    path = tmp_path / "s.toml"
    path.write_text(LOSSY + '[sweep]\nreplications = 2\n"test[0].payload" = [100, 200]\n')
    out = tmp_path / "out"
    proc = subprocess.run(
        QOSLAB + ["sweep", str(path), "--out", str(out), "--report"], capture_output=True, text=True, timeout=600
    )
    assert proc.returncode == 0, proc.stderr
    page = _page(out / "report.html")
    assert len(page.images) == len(list((out / "figures").glob("*.png"))) > 0
    assert [line[0] for line in page.tables["aggregate"][1:]] == ["100", "200"]
    assert "report.html" in proc.stderr


def test_the_workers_table_follows_each_point_from_start_to_finish(tmp_path):
    from qoslab import sweep_run
    from qoslab.store import ResultsStore

    events: list[tuple[str, str, str]] = []

    class Watched(sweep_run.WorkerStatus):
        def started(self, worker: str, task: sweep_run.PointTask | None) -> None:
            if task is not None:
                events.append(("start", worker, task.point_id))
            super().started(worker, task)

        def finished(self, task: sweep_run.PointTask, result: dict) -> None:
            events.append(("done", str(result.get("worker")), task.point_id))
            super().finished(task, result)

    sc = loads_scenario(LOSSY + '[sweep]\n"test[0].payload" = {start = 100, stop = 111, step = 1}\n')
    plan = sweep_run.plan(sc)
    status = Watched()
    sweep_run.run(plan, ResultsStore(tmp_path), jobs=2, status=status)
    ids = {t.point_id for t in plan.tasks}
    starts = [(w, p) for kind, w, p in events if kind == "start"]
    dones = [(w, p) for kind, w, p in events if kind == "done"]
    # Every point was seen starting once and finishing once, on the same worker process,
    # and those are two processes other than this one.
    assert sorted(p for _, p in starts) == sorted(ids) == sorted(p for _, p in dones)
    assert dict((p, w) for w, p in starts) == dict((p, w) for w, p in dones)
    pids = {int(w.split(":")[1].split("/")[0]) for w, _ in starts}
    assert 1 <= len(pids) <= 2 and os.getpid() not in pids
    # The table: a row per worker, idle at the end, its points done adding up to all.
    rows = status.rows()
    assert len(rows) == len(pids) and sum(done for *_, done in rows) == len(ids)
    assert all(point == "" and seconds is None for _, point, seconds, _ in rows)


def test_the_cli_shows_the_workers_table(tmp_path):
    path = tmp_path / "s.toml"
    path.write_text(LOSSY + '[sweep]\n"test[0].payload" = [100, 200, 300, 400]\n')
    proc = subprocess.run(
        QOSLAB + ["sweep", str(path), "--out", str(tmp_path / "out"), "--jobs", "2", "--workers", "--progress"],
        capture_output=True,
        text=True,
        timeout=600,
        env=dict(os.environ, COLUMNS="160"),
    )
    assert proc.returncode == 0, proc.stderr
    # The live display's last frame: the bar, then the table's header and one row per worker.
    assert "4/4" in proc.stderr
    lines = proc.stderr.splitlines()
    header = next(i for i, line in enumerate(lines) if line.split()[:2] == ["worker", "point"])
    rows = []
    for line in lines[header + 1 :]:
        if not line.split() or not line.split()[-1].isdigit():
            break
        rows.append(line.split())
    # One row per worker process that ran points (a fast worker may have run them all).
    assert 1 <= len(rows) <= 2 and all(r[1] == "idle" for r in rows)
    assert sum(int(r[-1]) for r in rows) == 4


def test_a_local_worker_killed_fails_its_points_and_the_sweep_ends(tmp_path):
    """A local worker process that dies (kill -9, out of memory) fails the points it had
    and those not yet sent; the sweep records them as failed and returns, and a rerun
    computes exactly those."""
    import signal

    from qoslab import sweep_run
    from qoslab.store import ResultsStore

    sc = loads_scenario(LOSSY + '[sweep]\n"test[0].payload" = {start = 100, stop = 129, step = 1}\n')
    plan = sweep_run.plan(sc)
    store = ResultsStore(tmp_path)
    killed: list[int] = []

    class Killing(sweep_run.WorkerStatus):
        def finished(self, task: sweep_run.PointTask, result: dict) -> None:
            if not killed and "worker" in result:
                pid = int(str(result["worker"]).split(":")[1].split("/")[0])
                killed.append(pid)
                os.kill(pid, signal.SIGKILL)
            super().finished(task, result)

    outcome = sweep_run.run(plan, store, jobs=2, status=Killing())
    assert killed and outcome.ran == 30
    failed = {t.point_id for t, _ in outcome.failed}
    assert failed and all("BrokenProcessPool" in e or "terminated" in e for _, e in outcome.failed)
    assert store.done() | failed == {t.point_id for t in plan.tasks} and not store.done() & failed
    again = sweep_run.run(plan, store, jobs=2)
    assert again.kept == 30 - len(failed) and again.ran == len(failed) and not again.failed
