"""How long `qoslab run` takes on a small scenario, phase by phase (issue 19: a sweep driven
from a shell loop must not be dominated by start-up; the target is under 0.5 s end to end).

Phases, each the median of ``--repeat`` runs:

- ``import``: a fresh interpreter importing ``qoslab.cli`` (what every command pays first);
- ``validate``: ``load_scenario`` (TOML, the typed models, the cross-references);
- ``prepare``: ``qoslab.sweep.prepare`` (lowering, planning, the core's own refusals by
  ``_core.validate``, the event estimate), which ``run`` and ``check`` share;
- ``simulate``: ``run_tests`` (lowers again, simulates, reads the records);
- ``output``: the terminal tables rendered to a throw-away console;
- ``end_to_end``: ``qoslab run FILE`` in a subprocess, interpreter start to exit.

Usage: ``python benchmarks/startup.py [--repeat N] [--json]``. The machine is usually
shared: read the figures as orders of magnitude, and compare phases of one run.
"""

from __future__ import annotations

import argparse
import io
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SMALL = """
[scenario]
name = "two hosts, one switch, a ping"
[node.a]
role = "host"
address = "10.0.0.1/24"
[node.sw]
role = "switch"
[node.b]
role = "host"
address = "10.0.0.2/24"
[[link]]
type = "ethernet"
rate = "100 Mbps"
ends = ["a", "sw"]
[[link]]
type = "ethernet"
rate = "100 Mbps"
ends = ["sw", "b"]
[[test]]
method = "ping"
from = "a"
to = "b"
count = 3
"""


def _median_s(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def measure(repeat: int) -> dict[str, float]:
    from qoslab.backends.sim import run_tests
    from qoslab.report.terminal import render_run
    from qoslab.scenario import load_scenario
    from qoslab.sweep import prepare
    from rich.console import Console

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "small.toml"
        path.write_text(SMALL, encoding="utf-8")
        out: dict[str, float] = {}
        out["import"] = _median_s(
            lambda: subprocess.run([sys.executable, "-c", "import qoslab.cli"], check=True), repeat
        )
        out["validate"] = _median_s(lambda: load_scenario(path), repeat)
        scenario = load_scenario(path)
        out["prepare"] = _median_s(lambda: prepare(scenario, source=path), repeat)
        runs: list = []
        out["simulate"] = _median_s(lambda: runs.append(run_tests(scenario, source=path)), repeat)
        net, tests = runs[-1]

        def render() -> None:
            console = Console(file=io.StringIO(), width=160)
            for run in tests:
                render_run(console, run.label, run.results, {}, {}, {}, records=run.records)

        out["output"] = _median_s(render, repeat)
        out["end_to_end"] = _median_s(
            lambda: subprocess.run([sys.executable, "-m", "qoslab", "run", str(path)], check=True, capture_output=True),
            repeat,
        )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7, help="runs per phase; the median is reported")
    parser.add_argument("--json", action="store_true", help="print the record as JSON on stdout")
    args = parser.parse_args()
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    phases = measure(args.repeat)
    if args.json:
        print(json.dumps({"repeat": args.repeat, "seconds": phases}))
        return
    for name, seconds in phases.items():
        print(f"{name:>11}  {1000 * seconds:8.1f} ms")


if __name__ == "__main__":
    main()
