"""``qoslab bench``: the simulator's speed, and its speed-up over ns-3 on the same scenarios."""

from __future__ import annotations

import sys
from typing import Annotated

import typer
from rich.text import Text

from qoslab.bench import ALL_BENCHMARKS, DEFAULT_REPEAT
from qoslab.commands.common import emit_json, stderr
from qoslab.errors import InputError
from qoslab.output_schema import stamp

ONLY_HELP = (
    "Run only this benchmark (repeat, or separate with commas): "
    + ", ".join(ALL_BENCHMARKS)
    + "; and, only when named here, emu_link (the link emulator beside a direct veth: needs root)."
)


def bench(
    json_out: Annotated[bool, typer.Option("--json", help="Print the record as JSON on stdout.")] = False,
    sim_seconds: Annotated[
        float | None,
        typer.Option(
            "--sim-seconds",
            help="Simulated seconds of traffic in each scenario (default 60; 1 with --quick).",
            show_default=False,
        ),
    ] = None,
    quick: Annotated[
        bool,
        typer.Option(
            "--quick",
            help="A short run to see that everything works: every simulator benchmark but the 10,000-host one, "
            "1 simulated second each, one timed run (unless --only, --sim-seconds or --repeat say otherwise).",
        ),
    ] = False,
    with_ns3: Annotated[
        bool,
        typer.Option(
            "--with-ns3",
            help="Run the same scenarios in ns-3 (the .venv-bench venv or $QOSLAB_NS3_PYTHON) and give the speed-ups.",
        ),
    ] = False,
    only: Annotated[
        list[str] | None,
        typer.Option(
            "--only",
            help=ONLY_HELP,
        ),
    ] = None,
    repeat: Annotated[
        int | None,
        typer.Option(
            "--repeat",
            min=1,
            help=f"Timed runs of each tool per benchmark (default {DEFAULT_REPEAT}; 1 with --quick); "
            "the median is reported (qoslab's simulate call, ns-3's Simulator.Run()).",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Speed benchmarks of the simulator, and the speed-up over ns-3 on the same scenarios.

    Times only the simulation itself: qoslab's simulate call, ns-3's Simulator.Run(),
    each --repeat times (the median is reported). The machine may be shared: read the speed-up (a ratio measured in the same run),
    not the seconds. Exit code 1 if a benchmark failed or none could run.

    Examples:

    `qoslab bench --json`

    `qoslab bench --quick`

    `qoslab bench --with-ns3 --only wifi_80211b_saturation --sim-seconds 10`

    `sudo qoslab bench --only emu_link` (the link emulator; 1 s per run with --quick)
    """
    from qoslab import bench as benchmarks

    if sim_seconds is None:
        sim_seconds = 1.0 if quick else 60.0
    if repeat is None:
        repeat = 1 if quick else DEFAULT_REPEAT
    _check_sim_seconds(sim_seconds)
    names = benchmarks.select(only) if only or not quick else list(benchmarks.QUICK_BENCHMARKS)
    report = benchmarks.run(
        names,
        sim_seconds=sim_seconds,
        with_ns3=with_ns3,
        repeat=repeat,
        log=lambda msg: stderr.print(Text(msg, style="dim")),
        emu_seconds=1.0 if quick else benchmarks.DEFAULT_EMU_SECONDS,
    )
    benchmarks.render(report, stderr)
    if json_out:
        emit_json(stamp("bench", report.to_json()))
    if report.failed or not (report.scenarios or report.ns3 or report.emulator):
        sys.exit(1)


def _check_sim_seconds(sim_seconds: float) -> None:
    import math

    from qoslab.errors import Problem

    if not (math.isfinite(sim_seconds) and sim_seconds > 0):
        raise InputError(
            "qoslab bench",
            [
                Problem(
                    "simulated seconds must be a finite time above 0",
                    key="--sim-seconds",
                    expected="a number of seconds, e.g. 60",
                    found=str(sim_seconds),
                )
            ],
        )
