"""Running studies: points with a progress bar, kept on disk as they finish, so that
Ctrl-C keeps every finished point and a later run with the same output directory skips
them; then figures (PNG and SVG), tidy data, summary.json and report.html.

Layout of ``DIR``::

    report.html        one self-contained page (figures inline)
    summary.json       every published number beside ours (../shared/DESIGN.md)
    figures/NAME.png, figures/NAME.svg
    data/seedNNN/records.{json,csv,parquet}   one row per measured point
    data/seedNNN/points/KEY.json              finished points (the resume cache)
    scenarios/*.toml   the scenario variants the studies ran
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from qoslab.studies import Point, Study


def _point_file(out: Path, study: Study, point: Point) -> Path:
    return out / "data" / f"seed{study.seed}" / "points" / (point.key.replace("/", "__") + ".json")


def load_finished(out: Path, study: Study, point: Point) -> list[dict[str, Any]] | None:
    """The records of ``point`` if a previous run finished it with the same spec.

    Anything else in the point's place (text that is not UTF-8 or not JSON, JSON of
    another shape, a key missing, a directory) means "not finished": the point is run
    again and its file rewritten (see :func:`save_point`), never a crash.
    """
    path = _point_file(out, study, point)
    if not path.is_file():
        return None
    try:
        saved = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):  # ValueError: UnicodeDecodeError and JSONDecodeError
        return None
    if not isinstance(saved, dict) or saved.get("digest") != point.digest():
        return None
    records = saved.get("records")
    if not isinstance(records, list) or not all(isinstance(r, dict) for r in records):
        return None
    return records


def save_point(out: Path, study: Study, point: Point, records: list[dict[str, Any]]) -> None:
    """Write atomically (a temporary file renamed), so an interrupt never leaves half a point.

    Something that is not a file in the point's place (a directory) is moved aside to
    ``NAME.damaged`` first, not deleted: it was not written by qoslab as a point.
    """
    path = _point_file(out, study, point)
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists() and not path.is_file():
        os.replace(path, path.with_name(path.name + ".damaged"))
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps({"key": point.key, "digest": point.digest(), "records": records}), encoding="utf-8")
    os.replace(tmp, path)


def _points(study: Study, out: Path) -> list[Point]:
    return study.points(out) if _takes_workdir(study) else study.points()


def run_study_points(study: Study, out: Path, *, progress: Any = None, task: Any = None, jobs: int = 1) -> tuple[dict[str, list[dict[str, Any]]], int]:
    """Run (or reuse) every point of ``study``. Returns (records by point key, points run now).

    ``progress``/``task``: a rich Progress and its task, advanced by each point's weight.
    The points run ``jobs`` at once on :func:`qoslab.sweep.run_pool` (the pool ``qoslab
    run`` runs sweeps on); each point is saved by the thread that ran it as soon as it
    finishes, so an interrupt keeps it.
    """
    from qoslab.sweep import run_pool

    points = _points(study, out)
    data: dict[str, list[dict[str, Any]]] = {}
    todo: list[Point] = []
    for point in points:
        done = load_finished(out, study, point)
        if done is None:
            todo.append(point)
            continue
        data[point.key] = done
        if progress is not None:
            progress.update(task, advance=point.weight, description=f"[dim]{point.words}: kept from before")

    def job(point: Point) -> list[dict[str, Any]]:
        def words(text: str) -> None:
            if progress is not None:
                progress.update(task, description=f"{point.words} — {text}")

        if progress is not None:
            progress.update(task, description=point.words)
        records = point.run(words)
        save_point(out, study, point, records)
        return records

    def finished(i: int, records: list[dict[str, Any]]) -> None:
        data[todo[i].key] = records
        if progress is not None:
            progress.update(task, advance=todo[i].weight, description=f"{todo[i].words}: done")

    run_pool([lambda p=p: job(p) for p in todo], jobs=jobs, on_done=finished, ordered=False)
    return {p.key: data[p.key] for p in points}, len(todo)


def _takes_workdir(study: Study) -> bool:
    import inspect

    return "workdir" in inspect.signature(study.points).parameters


def total_weight(studies: list[Study], out: Path) -> tuple[float, float]:
    """(weight of all points, weight already finished)."""
    total = done = 0.0
    for s in studies:
        for p in s.points(out) if _takes_workdir(s) else s.points():
            total += p.weight
            if load_finished(out, s, p) is not None:
                done += p.weight
    return total, done


def reproduce(studies: list[Study], out: Path, *, console: Any = None, show_progress: bool = True, jobs: int = 1) -> dict[str, Any]:
    """Run ``studies`` into ``out`` and write the report. KeyboardInterrupt propagates after
    the finished points are on disk."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

    from qoslab.report.html import write_report
    from qoslab.report.tables import tidy, write_tables

    out.mkdir(parents=True, exist_ok=True)
    total, done = total_weight(studies, out)
    results: dict[str, dict[str, list[dict[str, Any]]]] = {}
    ran = 0
    columns = (TextColumn("{task.description}"), BarColumn(), TextColumn("{task.percentage:>3.0f} %"), TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn())
    with Progress(*columns, console=console, disable=not show_progress, transient=False) as progress:
        task = progress.add_task("starting", total=total, completed=done)
        for study in studies:
            data, n = run_study_points(study, out, progress=progress, task=task, jobs=jobs)
            results[study.seed] = data
            ran += n
        progress.update(task, description="writing the report")
    summary: list[dict[str, Any]] = []
    for study in studies:
        data = results[study.seed]
        rows = []
        for key, records in data.items():
            rows += tidy(records, seed=study.seed, point=key)
        if rows:
            write_tables(rows, out / "data" / f"seed{study.seed}")
        summary += study.summary(data)
    (out / "summary.json").write_text(json.dumps(summary, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    write_report(studies, results, summary, out)
    return {"summary": summary, "points_run": ran, "points": sum(len(d) for d in results.values())}


__all__ = ["reproduce", "run_study_points", "load_finished", "save_point"]
