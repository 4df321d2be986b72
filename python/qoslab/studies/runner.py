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
from typing import Any, Callable

from qoslab.studies import Point, Study


def _point_file(out: Path, study: Study, point: Point) -> Path:
    return out / "data" / f"seed{study.seed}" / "points" / (point.key.replace("/", "__") + ".json")


def load_finished(out: Path, study: Study, point: Point) -> list[dict[str, Any]] | None:
    """The records of ``point`` if a previous run finished it with the same spec."""
    path = _point_file(out, study, point)
    if not path.exists():
        return None
    try:
        saved = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return None
    return saved["records"] if saved.get("digest") == point.digest() else None


def save_point(out: Path, study: Study, point: Point, records: list[dict[str, Any]]) -> None:
    """Write atomically (a temporary file renamed), so an interrupt never leaves half a point."""
    path = _point_file(out, study, point)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps({"key": point.key, "digest": point.digest(), "records": records}), encoding="utf-8")
    os.replace(tmp, path)


def _points(study: Study, out: Path) -> list[Point]:
    return study.points(out) if _takes_workdir(study) else study.points()


def _run_in_child(study: Study, out: Path, index: int) -> list[dict[str, Any]]:
    return _points(study, out)[index].run(lambda words: None)


def run_study_points(study: Study, out: Path, *, progress: Any = None, task: Any = None, log: Callable[[str], None] | None = None, jobs: int = 1) -> tuple[dict[str, list[dict[str, Any]]], int]:
    """Run (or reuse) every point of ``study``. Returns (records by point key, points run now).

    ``progress``/``task``: a rich Progress and its task, advanced by each point's weight.
    With ``jobs`` > 1 the points run in that many processes (forked), each saved as it
    finishes.
    """
    points = _points(study, out)
    data: dict[str, list[dict[str, Any]]] = {}
    ran = 0
    todo = [i for i, p in enumerate(points) if load_finished(out, study, p) is None]
    if jobs > 1 and len(todo) > 1:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor, as_completed

        with ProcessPoolExecutor(min(jobs, len(todo)), mp_context=multiprocessing.get_context("fork")) as pool:
            futures = {pool.submit(_run_in_child, study, out, i): points[i] for i in todo}
            if progress is not None:
                progress.update(task, description=f"seed {study.seed}: {len(todo)} points on {min(jobs, len(todo))} processes")
            for future in as_completed(futures):
                point = futures[future]
                records = future.result()
                save_point(out, study, point, records)
                ran += 1
                if progress is not None:
                    progress.update(task, advance=point.weight, description=f"seed {study.seed}: {point.words} done")
    for point in points:
        done = load_finished(out, study, point)
        if done is not None:
            data[point.key] = done
            if point.key in {points[i].key for i in todo}:
                continue  # run just now, in a child
            if progress is not None:
                progress.update(task, advance=point.weight, description=f"[dim]{point.words}: kept from before")
            continue
        if progress is not None:
            progress.update(task, description=point.words)

        def words(text: str, point: Point = point) -> None:
            if progress is not None:
                progress.update(task, description=f"{point.words} — {text}")

        records = point.run(words)
        save_point(out, study, point, records)
        data[point.key] = records
        ran += 1
        if progress is not None:
            progress.update(task, advance=point.weight)
    return data, ran


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
    return {"summary": summary, "points_run": ran}


__all__ = ["reproduce", "run_study_points", "load_finished", "save_point"]
