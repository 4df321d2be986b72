"""Studies, reproduce and reports: summary.json's contract, tidy records read back from
Parquet, Ctrl-C and resume, and report.html in a real headless Chromium."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from qoslab.studies import EXACT, Ours, Point, Published, Study, registry
from qoslab.studies.runner import reproduce

CHROMIUM = Path("/usr/bin/chromium")
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def test_every_seed_has_a_study_and_every_row_has_the_contracts_fields():
    studies = registry()
    assert sorted(studies) == ["000", "001", "002", "003", "004"]
    for s in studies.values():
        rows = s.summary({})
        assert rows, s.seed
        for r in rows:
            assert {"seed", "item", "paper", "ours", "unit", "tolerance", "calibrated", "ok"} <= set(r)
            assert r["tolerance_reason"], r
            # Without data nothing is claimed: no value, no agreement.
            assert r["ours"] is None and r["ok"] is None
        assert len({r["key"] for r in rows}) == len(rows)


def test_seed000_transcribes_table4_whole():
    rows = {r["key"]: r for r in registry()["000"].summary({})}
    # 10 loads × (XMIT + 3 configurations × latency and throughput)
    assert sum(k.startswith("t4.") for k in rows) == 70
    assert rows["t4.ics.1000.lat"]["paper"] == 9345 and rows["t4.l3f.620.tpt"]["paper"] == 7.14
    # Issue 15: ICS's throughputs are predictions now (station A's preamble was set on Fig. 12's
    # ICS row); two L3F latencies are the calibration points of the AP queue and A's receive path.
    assert rows["t4.ics.650.tpt"]["calibrated"] is False and rows["t4.l3f.650.tpt"]["calibrated"] is False
    assert {k for k, r in rows.items() if k.startswith("t4.") and r["calibrated"]} == {
        "t4.l3f.10.lat",
        "t4.l3f.1000.lat",
    }
    # Issue 15: the L2F column is run through Fig. 10's set-up (examples/seed000_l2f_fig10.toml):
    # without data its rows have no value, none is "not reproduced", none a calibration.
    assert all(r["status"] == "no value" for k, r in rows.items() if k.startswith("t4.l2f"))
    # §4's L2F maximum is the same air as L3F's calibration row (the AP's preamble was set there).
    assert rows["text.l2f.max"]["derived_from"] == "text.l3f.max"


class Counting(Study):
    """A study of simulated points that counts its runs and can be made to fail after k."""

    seed = "900"
    title = "test"
    question = "does resume work?"

    def __init__(self, fail_after: int | None = None) -> None:
        self.fail_after = fail_after
        self.runs: list[str] = []

    def published(self) -> list[Published]:
        return [Published("sum", "sum of the points' values", 45, "", EXACT)]

    def points(self) -> list[Point]:
        def make(i: int) -> Point:
            def run(progress: Any) -> list[dict[str, Any]]:
                if self.fail_after is not None and len(self.runs) >= self.fail_after:
                    raise KeyboardInterrupt
                self.runs.append(f"p{i}")
                progress(f"point {i}")
                return [
                    {"test": "t", "name": None, "from": "a", "to": "b", "parameters": {"i": i}, "metrics": {"value": i}}
                ]

            return Point(f"p{i}", f"point {i}", run, spec={"i": i})

        return [make(i) for i in range(10)]

    def ours(self, data):
        return {"sum": Ours(sum(r["metrics"]["value"] for recs in data.values() for r in recs))}


def test_interrupt_keeps_finished_points_and_a_rerun_skips_them(tmp_path):
    first = Counting(fail_after=4)
    with pytest.raises(KeyboardInterrupt):
        reproduce([first], tmp_path / "out", show_progress=False)
    assert first.runs == ["p0", "p1", "p2", "p3"]
    again = Counting()
    result = reproduce([again], tmp_path / "out", show_progress=False)
    assert again.runs == [f"p{i}" for i in range(4, 10)]  # the finished four are skipped
    assert result["points_run"] == 6
    fresh = reproduce([Counting()], tmp_path / "fresh", show_progress=False)
    assert result["summary"] == fresh["summary"]
    assert (tmp_path / "out" / "data" / "seed900" / "records.json").read_text() == (
        tmp_path / "fresh" / "data" / "seed900" / "records.json"
    ).read_text()
    (row,) = result["summary"]
    assert row["ours"] == 45 and row["ok"] is True


def test_interrupt_on_two_threads_keeps_every_saved_point_and_a_rerun_runs_only_the_rest(tmp_path):
    """The points run on sweep.run_pool's threads: a point that raises (as Ctrl-C would)
    stops the run; what finished is on disk, and a re-run runs exactly the others."""
    first = Counting(fail_after=4)
    with pytest.raises(KeyboardInterrupt):
        reproduce([first], tmp_path / "out", show_progress=False, jobs=2)
    saved = {p.stem for p in (tmp_path / "out" / "data" / "seed900" / "points").glob("*.json")}
    assert saved and saved <= set(first.runs)
    again = Counting()
    result = reproduce([again], tmp_path / "out", show_progress=False, jobs=2)
    # Nothing kept is run again, and everything that never ran is run now (a point that
    # was still running when the interrupt came may be kept or run again).
    assert set(again.runs).isdisjoint(saved)
    assert set(again.runs) >= {f"p{i}" for i in range(10)} - set(first.runs)
    fresh = reproduce([Counting()], tmp_path / "fresh", show_progress=False, jobs=2)
    assert result["summary"] == fresh["summary"] and result["summary"][0]["ours"] == 45
    # The records are written in point order whatever order the threads finished in.
    assert (tmp_path / "out" / "data" / "seed900" / "records.json").read_text() == (
        tmp_path / "fresh" / "data" / "seed900" / "records.json"
    ).read_text()


def test_run_pool_hands_results_back_in_task_order_or_as_they_finish():
    import threading

    from qoslab.sweep import run_pool

    fast_done, fast_reported = threading.Event(), threading.Event()
    seen: list[int] = []

    def report(i: int, _: str) -> None:
        seen.append(i)
        if i == 1:
            fast_reported.set()

    def slow_until_fast_is_reported() -> str:
        fast_reported.wait(5)
        return "slow"

    def fast() -> str:
        fast_done.set()
        return "fast"

    assert run_pool([slow_until_fast_is_reported, fast], jobs=2, on_done=report, ordered=False) == ["slow", "fast"]
    assert seen == [1, 0]  # the second task finished first and was reported first

    def slow_until_fast_is_done() -> str:
        fast_done.wait(5)
        return "slow"

    fast_done.clear()
    seen.clear()
    assert run_pool([slow_until_fast_is_done, fast], jobs=2, on_done=lambda i, _: seen.append(i), ordered=True) == [
        "slow",
        "fast",
    ]
    assert seen == [0, 1]  # in task order, although the second finished first


def test_records_read_back_from_parquet(tmp_path):
    pyarrow = pytest.importorskip("pyarrow.parquet")
    reproduce([registry()["002"]], tmp_path, show_progress=False)
    table = pyarrow.read_table(tmp_path / "data" / "seed002" / "records.parquet")
    assert {"seed", "point", "test", "name", "mtu", "tcp_mss", "interfaces.tap0"} <= set(table.column_names)
    rows = table.to_pylist()
    pppoe = next(r for r in rows if r["name"] == "pppoe")
    # Seed 002 §3: 1518 − 18 (Ethernet) − 20 − 8 − 24 (OpenVPN) = 1448 for the inner frame,
    # 1448 − 18 = 1430 TAP MTU, − 8 (PPPoE + PPP) = 1422.
    assert pppoe["interfaces.tap0"] == 1518 - 18 - 20 - 8 - 24 - 18
    assert pppoe["mtu"] == 1518 - 18 - 20 - 8 - 24 - 18 - 8
    csv_head = (tmp_path / "data" / "seed002" / "records.csv").read_text().splitlines()[0]
    assert "interfaces.tap0" in csv_head
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert next(r for r in summary if r["key"] == "mtu.pptp")["ours"] == 1397


def rfc2544_scenario(tmp_path: Path) -> Path:
    path = tmp_path / "s.toml"
    path.write_text(
        """
[scenario]
name = "two hosts and a switch"
[node.a]
role = "host"
address = "10.0.0.1/24"
cpu = "ideal"
[node.sw]
role = "switch"
[node.b]
role = "host"
address = "10.0.0.2/24"
cpu = "ideal"
[[link]]
type = "ethernet"
rate = "100 Mbps"
ends = ["a", "sw"]
[[link]]
type = "ethernet"
rate = "10 Mbps"
ends = ["sw", "b"]
queue = { frames = 10 }
[[test]]
method = "rfc2544.throughput"
from = "a"
to = "b"
frame_sizes = [64, 512, 1518]
duration = "1 s"
""",
        encoding="utf-8",
    )
    return path


def check_in_chromium(page_path: Path, figures: int, summary: list[dict[str, Any]] | None = None) -> None:
    """The page in a real headless Chromium: every figure decodes and shows, the set-up
    drawing shows and its labels do not overlap, every in-page link has its target, and
    (with ``summary``) the row table's filters and ``#rows?…`` links show exactly the rows
    summary.json has for that seed and status."""
    sync_api = pytest.importorskip("playwright.sync_api")
    if not CHROMIUM.exists():
        pytest.skip("Debian's chromium is not installed (scripts/install.sh installs it)")
    errors: list[str] = []
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        page = browser.new_page()
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.on("requestfailed", lambda r: errors.append(f"request failed: {r.url}"))
        page.goto(page_path.resolve().as_uri())
        page.wait_for_load_state("load")
        # Every figure is decoded and has a size: it shows.
        shown = page.evaluate(
            "() => Array.from(document.images).map(i => i.complete && i.naturalWidth > 0 && i.getBoundingClientRect().width > 0)"
        )
        svgs = page.evaluate(
            "() => Array.from(document.querySelectorAll('.setup svg')).map(s => s.getBoundingClientRect().width > 0)"
        )
        # No two labels of a set-up drawing overlap (their rendered boxes, by the browser).
        overlaps = page.evaluate(
            """() => { const out = [];
              for (const svg of document.querySelectorAll('.setup svg')) {
                // one box per label: the lines of a node's label (name, role) belong together
                const groups = new Map();
                for (const t of svg.querySelectorAll('text')) {
                  const g = t.closest('g') || svg, r = t.getBoundingClientRect(), b = groups.get(g);
                  groups.set(g, b ? [b[0] + ' ' + t.textContent, {left: Math.min(b[1].left, r.left), right: Math.max(b[1].right, r.right), top: Math.min(b[1].top, r.top), bottom: Math.max(b[1].bottom, r.bottom)}] : [t.textContent, r]);
                }
                const boxes = Array.from(groups.values());
                for (let i = 0; i < boxes.length; i++) for (let j = i + 1; j < boxes.length; j++) {
                  const [a, r] = boxes[i], [b, q] = boxes[j];
                  if (r.left < q.right - 0.5 && q.left < r.right - 0.5 && r.top < q.bottom - 0.5 && q.top < r.bottom - 0.5) out.push(a + ' / ' + b);
                } }
              return out; }"""
        )
        # Every in-page link names an element that exists ('#rows?seed=…' names #rows).
        missing = page.evaluate(
            "() => Array.from(document.querySelectorAll('a[href^=\"#\"]')).map(a => a.getAttribute('href').slice(1).split('?')[0]).filter(id => !document.getElementById(decodeURIComponent(id)))"
        )
        counted: list[tuple[str, str, int, int]] = []
        if summary is not None:
            for seed, status in sorted({(r["seed"], r["status"]) for r in summary}):
                want = sum(r["seed"] == seed and r["status"] == status for r in summary)
                # by the selects, as a reader filters
                page.select_option("#f-seed", seed)
                page.select_option("#f-status", status)
                by_select = page.evaluate(
                    "() => Array.from(document.querySelectorAll('#rowtable tbody tr')).filter(r => !r.hidden).length"
                )
                # by a link of the summary table
                page.evaluate(
                    "([s, st]) => { location.hash = '#rows?seed=' + s + '&status=' + encodeURIComponent(st); }",
                    [seed, status],
                )
                page.wait_for_function("() => document.getElementById('f-status').value !== ''")
                by_link = page.evaluate(
                    "() => Array.from(document.querySelectorAll('#rowtable tbody tr')).filter(r => !r.hidden).length"
                )
                counted.append((seed, status, want, by_select if by_select == by_link else -by_link))
                page.evaluate("() => { location.hash = ''; document.getElementById('f-status').value = ''; }")
            # Text filter: an item's words find its row.
            item = summary[0]["item"]
            page.select_option("#f-seed", "")
            page.select_option("#f-status", "")
            page.fill("#f-text", item)
            hits = page.evaluate(
                "() => Array.from(document.querySelectorAll('#rowtable tbody tr')).filter(r => !r.hidden).map(r => [r.cells[1].textContent, r.textContent])"
            )
            assert item in [h[0] for h in hits] and all(item.lower() in h[1].lower() for h in hits), hits
            # Sorting by "ours" puts the numbers in order.
            page.fill("#f-text", "")
            page.click("#rowtable thead th:nth-child(4)")
            values = page.evaluate(
                "() => Array.from(document.querySelectorAll('#rowtable tbody tr')).map(r => r.cells[3].dataset.v).filter(v => v !== '').map(Number)"
            )
            assert values == sorted(values)
        browser.close()
    assert len(shown) == figures and all(shown), shown
    assert svgs and all(svgs)
    assert overlaps == [], overlaps
    assert missing == [], missing
    assert all(want == got for _, _, want, got in counted), counted
    assert errors == []


def test_run_report_loads_in_chromium(tmp_path):
    path = rfc2544_scenario(tmp_path)
    proc = subprocess.run(
        [sys.executable, "-m", "qoslab", "run", str(path), "--report", str(tmp_path / "rep")],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    for kind in ("json", "csv", "parquet"):
        assert (tmp_path / "rep" / "data" / f"records.{kind}").exists()
    assert (tmp_path / "rep" / "figures" / "test0.png").exists() and (
        tmp_path / "rep" / "figures" / "test0.svg"
    ).exists()
    if shutil.which("dot"):  # the set-up is graphviz's drawing (its SVG has a class="graph" group)
        assert 'class="graph"' in (tmp_path / "rep" / "report.html").read_text()
    check_in_chromium(tmp_path / "rep" / "report.html", figures=1)


@pytest.fixture(scope="module")
def seed000_out(tmp_path_factory):
    """One `qoslab reproduce 000` for the tests of its report."""
    out = tmp_path_factory.mktemp("seed000")
    proc = subprocess.run(
        [sys.executable, "-m", "qoslab", "reproduce", "000", "--out", str(out), "--json"],
        capture_output=True,
        text=True,
        check=False,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    (out / "stdout.json").write_text(proc.stdout, encoding="utf-8")
    return out, proc.stderr


@pytest.mark.slow
def test_reproduce_seed000_report_in_chromium(seed000_out):
    out, stderr = seed000_out
    summary = json.loads((out / "summary.json").read_text())
    assert {r["seed"] for r in summary} == {"000"}
    # §2's reachability is reproduced exactly.
    assert all(r["ok"] for r in summary if r["key"].startswith("reach."))
    # The share of agreement is printed at the end (issue 6), counted here from the rows.
    agree = sum(r["status"] == "agrees" for r in summary)
    compared = agree + sum(r["status"] == "differs" for r in summary)
    assert f"{agree} of {compared} compared rows agree ({100 * agree / compared:.0f} %)" in stderr
    html = (out / "report.html").read_text()
    assert "Table 4" in html and "<svg" in html and "http" not in html.replace("http://www.w3.org/2000/svg", "")
    # A table of contents, and a section with a permalink per seed.
    assert '<nav id="contents">' in html and '<h2 id="seed000">' in html and 'href="#seed000"' in html
    check_in_chromium(out / "report.html", figures=2, summary=summary)
    # --json printed the same rows, in the versioned shape its schema describes.
    import jsonschema
    from qoslab.output_schema import schema

    printed = json.loads((out / "stdout.json").read_text())
    jsonschema.validate(printed, schema("reproduce"), cls=jsonschema.Draft202012Validator)
    assert printed["rows"] == summary


@pytest.mark.slow
def test_seed000_figures_legends_cover_no_point(seed000_out):
    """Every figure of the seed 000 report, drawn again from its data as the report draws
    it: no legend's box (matplotlib's own window extent) holds a plotted point."""
    import matplotlib

    matplotlib.use("Agg")
    from qoslab.report.html import legend_overlaps, legends_outside
    from qoslab.studies.runner import cached_data

    out, _ = seed000_out
    study = registry()["000"]
    figures = study.figures(cached_data(study, out))
    assert len(figures) == 2
    for fig in figures:
        legends_outside(fig.figure)
        assert legend_overlaps(fig.figure) == [], fig.name


def test_legend_overlap_is_found_and_moved_off_the_data():
    """The check can fail: a legend placed over the data is reported; moved outside the
    axes by the report, it covers nothing."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from qoslab.report.html import legend_overlaps, legends_outside

    fig, ax = plt.subplots(figsize=(4, 3))
    xs = [i / 10 for i in range(101)]
    for k in range(6):  # six dense lines fill the axes: no corner is free
        ax.plot(xs, [(x * (k + 1)) % 1 for x in xs], "o", markersize=2, label=f"line {k}")
    ax.legend(loc="center", fontsize=7)
    assert legend_overlaps(fig)
    legends_outside(fig)
    assert legend_overlaps(fig) == []
    plt.close(fig)


def test_figures_are_drawn_at_twice_the_shown_size(tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from qoslab.report.html import _img, figure_data, png_size

    fig, ax = plt.subplots(figsize=(4, 3))
    ax.plot([0, 1], [0, 1], label="x")
    ax.legend()
    uri = figure_data(fig, tmp_path, "f")
    width, height = png_size(uri)
    # PNG IHDR read independently of the report's helper: bytes 16-24 of the file.
    raw = (tmp_path / "figures" / "f.png").read_bytes()
    assert (int.from_bytes(raw[16:20], "big"), int.from_bytes(raw[20:24], "big")) == (width, height)
    assert f'width="{width // 2}" height="{height // 2}"' in _img(uri, "f")


def _positions(svg: str) -> dict[str, tuple[float, float]]:
    """Node centres of a graphviz SVG: each <g class="node"> has a <title> and an ellipse or
    polygon; the centre is the mean of its text's x and y."""
    import re

    out = {}
    for g in re.finditer(r'<g id="node\d+" class="node">\s*<title>(.*?)</title>(.*?)</g>', svg, flags=re.S):
        xs = [float(x) for x in re.findall(r'<text[^>]* x="([-\d.]+)"', g.group(2))]
        ys = [float(y) for y in re.findall(r'<text[^>]* y="([-\d.]+)"', g.group(2))]
        if xs:
            out[g.group(1)] = (sum(xs) / len(xs), sum(ys) / len(ys))
    return out


def _setup(text: str):
    from qoslab.scenario import loads_scenario

    return loads_scenario(text, source="t.toml")


def test_setup_of_a_switch_with_six_hosts_is_drawn_as_a_star():
    if shutil.which("dot") is None:
        pytest.skip("graphviz is not installed (scripts/install.sh installs it)")
    from qoslab.report.html import setup_svg

    hosts = "".join(f'[node.h{i}]\nrole = "host"\naddress = "10.0.0.{i + 1}/24"\n' for i in range(6))
    links = "".join(f'[[link]]\ntype = "ethernet"\nrate = "100 Mbps"\nends = ["sw", "h{i}"]\n' for i in range(6))
    svg = setup_svg(_setup(f'[scenario]\nname = "star"\n[node.sw]\nrole = "switch"\n{hosts}{links}'))
    pos = _positions(svg)
    assert set(pos) == {"sw"} | {f"h{i}" for i in range(6)}
    # A star: the hub lies inside the box of its leaves, leaves on more than one side of it
    # both ways (a row or a column would put it at one edge).
    leaves = [pos[f"h{i}"] for i in range(6)]
    hx, hy = pos["sw"]
    assert min(x for x, _ in leaves) < hx < max(x for x, _ in leaves)
    assert min(y for _, y in leaves) < hy < max(y for _, y in leaves)


def test_setup_of_a_path_is_drawn_as_a_row():
    if shutil.which("dot") is None:
        pytest.skip("graphviz is not installed (scripts/install.sh installs it)")
    from qoslab.report.html import setup_svg

    nodes = "".join(
        f'[node.n{i}]\nrole = "host"\naddress = "10.0.0.{i + 1}/24"\n'
        if i in (0, 3)
        else f'[node.n{i}]\nrole = "switch"\n'
        for i in range(4)
    )
    links = "".join(f'[[link]]\ntype = "ethernet"\nrate = "10 Mbps"\nends = ["n{i}", "n{i + 1}"]\n' for i in range(3))
    pos = _positions(setup_svg(_setup(f'[scenario]\nname = "path"\n{nodes}{links}')))
    ys = {round(y) for _, y in pos.values()}
    xs = [pos[f"n{i}"][0] for i in range(4)]
    assert len(ys) == 1 and xs == sorted(xs)


def test_unknown_seed_exits_2(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "qoslab", "reproduce", "007", "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert proc.returncode == 2 and "Traceback" not in proc.stderr and "000" in proc.stderr


def test_run_report_of_a_sweep_plots_against_the_swept_key(tmp_path):
    """`run --report` on a [sweep] draws each test against the key the sweep varies
    (issue 18: before, a sweep of a link's rate was drawn against the ping's constant
    payload). The ping's RTT on one 1 Mb/s hop is the serialisation of its two 98-byte
    frames plus 8+12 bytes of preamble and gap each (IEEE 802.3 §4.4.2): it must fall as
    the swept rate rises."""
    path = tmp_path / "s.toml"
    path.write_text(
        '[scenario]\nname = "sweep a rate"\n[node.a]\nrole = "host"\naddress = "10.0.0.1/24"\n[node.b]\nrole = "host"\naddress = "10.0.0.2/24"\n'
        '[[link]]\ntype = "ethernet"\nrate = "10 Mbps"\nends = ["a", "b"]\n[[test]]\nmethod = "ping"\nfrom = "a"\nto = "b"\ncount = 3\n'
        '[sweep]\n"link[0].rate" = ["1 Mbps", "10 Mbps", "100 Mbps"]\n',
        encoding="utf-8",
    )
    proc = subprocess.run(
        [sys.executable, "-m", "qoslab", "run", str(path), "--report", str(tmp_path / "rep")],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    page = (tmp_path / "rep" / "report.html").read_text()
    assert "against link[0].rate" in page and (tmp_path / "rep" / "figures" / "test0.png").exists()
    rows = json.loads((tmp_path / "rep" / "data" / "records.json").read_text())
    rtt = {r["link[0].rate"]: r["rtt_min_ms"] for r in rows}
    assert rtt["1 Mbps"] > rtt["10 Mbps"] > rtt["100 Mbps"]
    assert rtt["1 Mbps"] == pytest.approx(2 * (84 + 14 + 4 + 8) * 8 / 1e6 * 1e3, rel=1e-3)
