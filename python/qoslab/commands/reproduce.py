"""``qoslab reproduce``: each seed's study re-run and compared with its paper."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.text import Text

from qoslab.commands.common import emit_json, interrupted, stderr
from qoslab.errors import InputError
from qoslab.output_schema import stamp

if TYPE_CHECKING:
    from qoslab.studies import Study
    from qoslab.studies.runner import Reproduced


def reproduce(
    seed: Annotated[
        str | None, typer.Argument(help="Seed number (000 to 004); all seeds when left out.", show_default=False)
    ] = None,
    out: Annotated[
        Path, typer.Option("--out", help="Output directory: report.html, summary.json, figures/, data/.")
    ] = Path("results"),
    json_out: Annotated[bool, typer.Option("--json", help="Print summary.json's rows on stdout too.")] = False,
    jobs: Annotated[
        int,
        typer.Option(
            "--jobs",
            "-j",
            min=0,
            help="Points run at once (threads: the simulator releases the GIL); 0 (default): the machine's cores.",
        ),
    ] = 0,
    seeds: Annotated[
        int,
        typer.Option(
            "--seeds",
            min=1,
            help="Random seeds each simulated point runs with; each row is the mean over them, with its standard deviation and how many seeds agree.",
        ),
    ] = 5,
) -> None:
    """Re-run each seed's experiment from its examples/ scenarios and compare with the paper.

    Writes DIR/report.html (one self-contained page: the question, the set-up, figures
    with the published points overlaid, the paper's tables with ours beside them, what
    agrees and what does not and why), figures as PNG and SVG, the data as CSV, Parquet
    and JSON, and DIR/summary.json: every number the seed publishes beside ours, with a
    tolerance and its reason; calibration rows, settings and rows derived from another
    row are marked and never count as agreement (docs/agreement.md). Each simulated point
    runs with --seeds random seeds; a row's "ours" is the mean over them. Finished points
    are kept: Ctrl-C stops cleanly, and running again with the same --out skips them.
    One seed's study into a directory that holds others' results adds or replaces that
    seed's rows and keeps the rest. Exit 2 on an unknown seed. Every metric ("ours") is defined in
    docs/metrics.md, as `qoslab run` measures it.

    Examples:

    `qoslab reproduce --out results/`

    `qoslab reproduce 000 --out seed000/`
    """
    import os

    from qoslab.places import output_dir
    from qoslab.studies.runner import reproduce as run_reproduce

    chosen = _chosen_studies(seed)
    output_dir(out, "--out")
    try:
        result = run_reproduce(chosen, out, console=stderr, jobs=jobs or os.cpu_count() or 1, seeds=seeds)
    except KeyboardInterrupt:
        interrupted(
            f"stopped (Ctrl-C): every finished point is kept in {out}/data; run the same command again to resume."
        )
    _say_outcome(out, result, seeds)
    if json_out:
        emit_json(
            stamp(
                "reproduce",
                {
                    "rows": result["summary"],
                    "points_run": result["points_run"],
                    "points": result["points"],
                    "seeds": result["seeds"],
                },
            )
        )


def _chosen_studies(seed: str | None) -> list[Study]:
    """The study of ``seed`` ('0' or '000'), or every study when it is None."""
    from qoslab.errors import Problem
    from qoslab.studies import registry

    studies = registry()
    if seed is None:
        return list(studies.values())
    key = seed.zfill(3)
    if key not in studies:
        raise InputError(
            "qoslab reproduce",
            [Problem("no study for this seed", key="SEED", expected="one of " + ", ".join(studies), found=repr(seed))],
        )
    return [studies[key]]


def _say_outcome(out: Path, result: Reproduced, seeds: int) -> None:
    """Where the report went, how many rows agree, and the calibration rows that miss
    their own target."""
    from qoslab.report.html import agreement, calibration_misses, counts

    c = counts(result["summary"])
    kept = result["points"] - result["points_run"]
    stderr.print(
        f"{out}/report.html, {out}/summary.json: "
        + ", ".join(f"{v} {k}" for k, v in c.items())
        + f" ({result['points_run']} point runs, {seeds} seed{'s' if seeds > 1 else ''} each"
        + (f", {kept} kept from before" if kept else "")
        + ")"
        + (f"; rows of seed {', '.join(result['kept_seeds'])} kept from before" if result.get("kept_seeds") else "")
    )
    stderr.print(agreement(c))
    misses = calibration_misses(result["summary"])
    if misses:
        stderr.print(
            Text(
                f"{len(misses)} calibration row{'s' if len(misses) > 1 else ''} miss{'' if len(misses) > 1 else 'es'} {'their' if len(misses) > 1 else 'its'} own target:",
                style="yellow",
            )
        )
        for m in misses:
            stderr.print(Text("  " + m, style="yellow"))
