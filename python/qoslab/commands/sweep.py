"""``qoslab sweep``: every point of a sweep (x its replications) into a results store
that loses nothing, on the local cores or a Dask cluster."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.text import Text

from qoslab.commands.common import MaxEventsOption, SeedOption, emit_json, interrupted, stderr

if TYPE_CHECKING:
    from qoslab.scenario.model import Scenario
    from qoslab.sweep_run import Outcome as SweepOutcome
    from qoslab.sweep_run import Plan as SweepPlan

_SweepFile = Annotated[Path, typer.Argument(help="Scenario file (TOML) with a [sweep].", show_default=False)]
_OutOption = Annotated[
    Path,
    typer.Option(
        "--out",
        help="Results store: DIR/points/part-*.parquet, the finished points appended as they finish (docs/results-store.md).",
        show_default=False,
    ),
]
_JobsOption = Annotated[
    int | None,
    typer.Option(
        "--jobs",
        "-j",
        min=1,
        help="Points run at once on this machine, each in a worker process; default: one per local core.",
    ),
]
_ClusterOption = Annotated[
    str | None,
    typer.Option(
        "--cluster",
        help="Send the points to the Dask scheduler at tcp://HOST:PORT (default: $QOSLAB_DASK_SCHEDULER; none: this machine).",
    ),
]
_ReportOption = Annotated[
    bool,
    typer.Option(
        "--report",
        help="Also write DIR/report.html (each swept key against each metric, mean with its 95 % confidence interval; the aggregated table; the failed points and their errors), DIR/figures/ and DIR/summary.json.",
    ),
]
_ProgressOption = Annotated[
    bool | None,
    typer.Option("--progress/--no-progress", help="The progress bar on stderr; default: when stderr is a terminal."),
]
_WorkersOption = Annotated[
    bool,
    typer.Option(
        "--workers",
        help="Below the progress bar, a live table of the workers: each one's current point, the time on it, points done.",
    ),
]
_JsonOption = Annotated[
    bool, typer.Option("--json", help="Print what ran (points, kept, failed with their errors) as JSON on stdout.")
]


def sweep(
    file: _SweepFile,
    out: _OutOption,
    jobs: _JobsOption = None,
    cluster: _ClusterOption = None,
    seed: SeedOption = None,
    report: _ReportOption = False,
    progress: _ProgressOption = None,
    workers: _WorkersOption = False,
    json_out: _JsonOption = False,
    max_events: MaxEventsOption = None,
) -> None:
    """Run every point of a sweep (× its replications) into a results store that loses nothing.

    Finished points are appended to DIR/points/ as they finish (Parquet part files, each
    written atomically; a point counts as done once its part is on disk, so a crash or
    Ctrl-C loses no point counted done); running the same command again computes only the
    points missing there. A point that fails is recorded with its error and the sweep goes
    on. Points run on every local core (`--jobs`), or on an existing Dask cluster
    (`--cluster tcp://HOST:8786` or `QOSLAB_DASK_SCHEDULER`). Query the store with
    `qoslab results DIR "SELECT ..."`.

    Exit codes: 0 every point ran, 1 some failed (how many on stderr), 2 bad input (a
    sweep path naming no key, an empty range, an unreachable scheduler; nothing has
    run), 130 stopped by Ctrl-C (finished points kept).

    Example: `qoslab sweep examples/seed004_asymmetric.toml --out sweep004/`

    Example: `qoslab sweep big.toml --out big/ --cluster tcp://10.0.0.5:8786 --report`
    """
    from qoslab import sweep_run
    from qoslab.places import output_dir
    from qoslab.scenario import load_scenario
    from qoslab.store import ResultsStore

    scenario = load_scenario(file)
    output_dir(out, "--out")
    planned = sweep_run.plan(scenario, source=file, seed=seed, max_events=max_events)
    address, where = (
        (cluster, "--cluster")
        if cluster
        else (os.environ.get(sweep_run.SCHEDULER_ENV) or None, sweep_run.SCHEDULER_ENV)
    )
    client = sweep_run.connect_cluster(address, where=where) if address else None
    store = ResultsStore(out)
    todo = [t for t in planned.tasks if t.point_id not in store.done()]
    _announce(planned, len(planned.tasks) - len(todo), out, address if client else None, jobs)
    # The local workers are started (forked) before the progress display's thread.
    pool = sweep_run.LocalPool(todo, jobs, watch=workers) if client is None and todo else None
    show = sys.stderr.isatty() if progress is None else progress
    try:
        with sweep_run.SweepProgress(
            stderr, len(planned.tasks), len(planned.tasks) - len(todo), enabled=show, workers=workers
        ) as bar:
            outcome = sweep_run.run(
                planned, store, jobs=jobs, client=client, on_done=bar.done, status=bar.status, pool=pool
            )
    except KeyboardInterrupt:
        interrupted(
            f"stopped (Ctrl-C): every finished point is kept in {out}/points; run the same command again to compute only the others."
        )
    finally:
        if client is not None:
            client.close()
    _say_outcome(planned, outcome, out)
    if report:
        _write_report(scenario, file, out, planned)
    if json_out:
        emit_json(_outcome_json(file, out, planned, outcome))
    if outcome.failed:
        stderr.print(Text(f"{len(outcome.failed)} of {outcome.total} points failed", style="bold red"))
        raise typer.Exit(1)


def _announce(planned: SweepPlan, kept: int, out: Path, cluster: str | None, jobs: int | None) -> None:
    """The line that says what will run, and where."""
    workers_n = max(1, min(jobs or os.cpu_count() or 1, len(planned.tasks) - kept))
    stderr.print(
        Text(
            f"{len(planned.tasks)} points ({planned.points} × {planned.replications} replication{'s' if planned.replications > 1 else ''})"
            + (f", {kept} already in {out}" if kept else "")
            + (
                f", on the Dask cluster at {cluster}"
                if cluster
                else f", on {workers_n} local process{'es' if workers_n > 1 else ''}"
            ),
            style="dim",
        )
    )


def _say_outcome(planned: SweepPlan, outcome: SweepOutcome, out: Path) -> None:
    """Each failed point with its error, then the counts."""
    for task, error in outcome.failed:
        stderr.print(
            Text(
                f"point {task.index}"
                + (f" replication {task.replication}" if planned.replications > 1 else "")
                + f" ({task.label()}) failed: ",
                style="red",
            )
            + Text(error),
            soft_wrap=True,
        )
    stderr.print(
        f"{out}: {outcome.total} points, {outcome.ran} run now, {outcome.kept} kept from before, {len(outcome.failed)} failed"
    )


def _write_report(scenario: Scenario, file: Path, out: Path, planned: SweepPlan) -> None:
    """DIR/report.html with its figures, and DIR/summary.json."""
    from qoslab.report.sweep_report import write_sweep_report
    from qoslab.store import aggregate

    page, figures = write_sweep_report(
        scenario, file, out, points=planned.points, replications=planned.replications, sweep_id=planned.sweep_id
    )
    keys, rows = aggregate(out)
    (out / "summary.json").write_text(
        json.dumps({"swept": keys, "rows": rows}, indent=1, default=str) + "\n", encoding="utf-8"
    )
    stderr.print(f"report: {page} ({figures} figures, also in {out / 'figures'}), {out / 'summary.json'}")


def _outcome_json(file: Path, out: Path, planned: SweepPlan, outcome: SweepOutcome) -> dict[str, Any]:
    """What ran, as `--json` prints it."""
    return {
        "file": str(file),
        "out": str(out),
        "sweep_id": planned.sweep_id,
        "points": outcome.total,
        "run": outcome.ran,
        "kept": outcome.kept,
        "failed": [
            {"point": t.index, "replication": t.replication, "point_id": t.point_id, "values": t.written, "error": e}
            for t, e in outcome.failed
        ],
    }
