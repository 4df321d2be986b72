"""``qoslab compare FILE``: the scenario on the simulator and on the emulation backend,
several runs each, and one report of every metric side by side (docs/compare.md)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.text import Text

from qoslab.commands.common import ScenarioFile, emit_json, interrupted, sim_failed, stderr

if TYPE_CHECKING:
    from qoslab.compare import Runs
    from qoslab.scenario.model import Scenario

_RunsOption = Annotated[
    int | None,
    typer.Option("--runs", min=1, help="Runs on each backend (default: 5 simulator seeds and 3 emulation runs)."),
]
_OutOption = Annotated[
    Path | None,
    typer.Option(
        "--out",
        help="Write DIR/compare.json (the comparison), DIR/runs.json (every run's records, written as each "
        "finishes) and DIR/compare.html.",
    ),
]
_JsonOption = Annotated[bool, typer.Option("--json", help="Print the comparison as JSON on stdout.")]


def compare(
    file: ScenarioFile, runs: _RunsOption = None, out: _OutOption = None, json_out: _JsonOption = False
) -> None:
    """Run the scenario on both backends and compare every metric of every test.

    The simulator runs with seeds S, S+1, ... (S: the scenario's seed), the emulation
    backend (network namespaces, real kernels and tools, the link emulator seeded with
    the same seeds) as many times. Per test and metric it prints each side's mean and
    standard deviation over its runs, the difference (emu − sim, and in % of sim), and
    whether that is within the spread: |diff| ≤ 2·sqrt(sd_sim²/n_sim + sd_emu²/n_emu)
    plus, for a time, the emulator's timing error (docs/compare.md). Where it is not, the
    likely reasons from docs/compare.md's list.

    Needs root and network namespaces, as `run --backend emu` does (exit 2 without).
    Ctrl-C keeps the runs that finished: the report is written over them.

    Example: `sudo qoslab compare my-lab.toml --out cmp/`

    Example: `sudo qoslab compare examples/cubic_30mbps_loss.toml --runs 5 --json`
    """
    from qoslab.backends.emu import EmulationError, check_host, prepare
    from qoslab.backends.sim import SimulationError
    from qoslab.compare import EMU_RUNS, SIM_RUNS, Runs, run_both
    from qoslab.places import output_dir
    from qoslab.scenario import load_scenario

    scenario = load_scenario(file)
    check_host()
    prepare(scenario, source=file)  # what the emulation backend refuses, before any run
    if out is not None:
        output_dir(out, "--out")
    done = Runs()
    try:
        run_both(
            scenario,
            file,
            sim_runs=runs or SIM_RUNS,
            emu_runs=runs or EMU_RUNS,
            into=done,
            on_run=lambda backend, seed, r: _finished(backend, seed, r, out),
        )
    except SimulationError as err:
        sim_failed(err)
    except EmulationError as err:
        _finish(scenario, file, done, out, json_out, complete=False)
        stderr.print(Text("error: ", style="bold red") + Text(str(err)), soft_wrap=True)
        raise typer.Exit(1) from None
    except KeyboardInterrupt:
        _finish(scenario, file, done, out, json_out, complete=False)
        interrupted(
            f"stopped (Ctrl-C); compared the {len(done.sim)} simulator and {len(done.emu)} emulation runs done."
        )
    _finish(scenario, file, done, out, json_out, complete=True)


def _finished(backend: str, seed: int, runs: Runs, out: Path | None) -> None:
    """Say a run finished, and keep every finished run in DIR/runs.json."""
    stderr.print(Text(f"{backend}: ", style="bold") + Text(f"seed {seed} done"))
    if out is not None:
        (out / "runs.json").write_text(json.dumps(_runs_json(runs), indent=1) + "\n")


def _runs_json(runs: Runs) -> dict[str, Any]:
    return {
        "sim": runs.sim,
        "emu": runs.emu,
        "kernel": runs.kernel,
        "link_implementation": runs.link_implementation,
    }


def _finish(scenario: Scenario, file: Path, runs: Runs, out: Path | None, json_out: bool, *, complete: bool) -> None:
    """The comparison over the finished runs: the tables, and the files and JSON asked for."""
    from qoslab.compare import report
    from qoslab.report.compare_report import compare_table, write_html

    if not runs.sim and not runs.emu:
        return
    rep = report(scenario, file, runs, complete=complete)
    for test in rep["tests"]:
        stderr.print(compare_table(test))
    if out is not None:
        (out / "compare.json").write_text(json.dumps(rep, indent=1) + "\n")
        page = write_html(rep, out / "compare.html")
        stderr.print(f"report: {page}")
    if json_out:
        emit_json(rep)
