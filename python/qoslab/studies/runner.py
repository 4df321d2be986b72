"""Running studies: points with a progress bar, kept on disk as they finish, so that
Ctrl-C keeps every finished point and a later run with the same output directory skips
them; then figures (PNG and SVG), tidy data, summary.json and report.html.

Layout of ``DIR``::

    report.html        one self-contained page (figures inline)
    summary.json       every published number beside ours (../shared/DESIGN.md)
    figures/NAME.png, figures/NAME.svg
    data/seedNNN/records.{json,csv,parquet}   one row per measured point
    data/seedNNN/points/KEY.json              finished points (the resume cache), seed 1
    data/seedNNN/points/KEY@sK.json           the same point with seed K + 1 (--seeds N)
    scenarios/*.toml   the scenario variants the studies ran
"""

from __future__ import annotations

import functools
import json
import os
import threading
from pathlib import Path
from typing import Any, TypedDict

from qoslab.studies import Point, Study


def _point_file(out: Path, study: Study, point: Point, replica: int = 0) -> Path:
    name = point.key.replace("/", "__") + (f"@s{replica}" if replica else "")
    return out / "data" / f"seed{study.seed}" / "points" / (name + ".json")


def _digest(point: Point, replica: int) -> str:
    """The cache key of one run of ``point``: its spec, and for replica k > 0 also k (the
    seed it runs with, :func:`qoslab.backends.sim.replica_seed`)."""
    if not replica:
        return point.digest()
    import hashlib

    return hashlib.sha256(
        json.dumps({"spec": point.spec, "replica": replica}, sort_keys=True, default=str).encode()
    ).hexdigest()[:16]


def load_finished(out: Path, study: Study, point: Point, replica: int = 0) -> list[dict[str, Any]] | None:
    """The records of ``point`` (its replica ``replica``) if a previous run finished it
    with the same spec and seed.

    Anything else in the point's place (text that is not UTF-8 or not JSON, JSON of
    another shape, a key missing, a directory) means "not finished": the point is run
    again and its file rewritten (see :func:`save_point`), never a crash.
    """
    path = _point_file(out, study, point, replica)
    if not path.is_file():
        return None
    try:
        saved = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):  # ValueError: UnicodeDecodeError and JSONDecodeError
        return None
    if not isinstance(saved, dict) or saved.get("digest") != _digest(point, replica):
        return None
    records = saved.get("records")
    if not isinstance(records, list) or not all(isinstance(r, dict) for r in records):
        return None
    return records


def save_point(out: Path, study: Study, point: Point, records: list[dict[str, Any]], replica: int = 0) -> None:
    """Write atomically (a temporary file renamed), so an interrupt never leaves half a point.

    Something that is not a file in the point's place (a directory) is moved aside to
    ``NAME.damaged`` first, not deleted: it was not written by qoslab as a point.
    """
    path = _point_file(out, study, point, replica)
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists() and not path.is_file():
        os.replace(path, path.with_name(path.name + ".damaged"))
    # A temporary name of this writer's own: two threads finishing the same point at once
    # (an interrupted run and its stragglers) must not rename each other's file away.
    tmp = path.with_suffix(f".{os.getpid()}.{threading.get_ident()}.tmp")
    tmp.write_text(
        json.dumps({"key": point.key, "replica": replica, "digest": _digest(point, replica), "records": records}),
        encoding="utf-8",
    )
    os.replace(tmp, path)


def _points(study: Study, out: Path) -> list[Point]:
    # A study written before `workdir` (tests' small studies, a user's own) takes none.
    return study.points(out) if _takes_workdir(study) else study.points()


def _takes_workdir(study: Study) -> bool:
    import inspect

    return "workdir" in inspect.signature(study.points).parameters


def _replicas(point: Point, seeds: int) -> range:
    return range(seeds if point.seeded else 1)


def run_study_points(
    study: Study, out: Path, *, progress: Any = None, task: Any = None, jobs: int = 1, seeds: int = 1
) -> tuple[list[dict[str, list[dict[str, Any]]]], int]:
    """Run (or reuse) every point of ``study``, each simulated point once per seed
    (replica 0 … ``seeds`` − 1, :data:`qoslab.backends.sim.REPLICA`). Returns (records by
    point key, one dict per seed; runs made now). A point that does not simulate
    (``seeded`` False) runs once and its records serve every seed.

    ``progress``/``task``: a rich Progress and its task, advanced by each run's weight.
    The runs go ``jobs`` at once on :func:`qoslab.sweep.run_pool` (the pool ``qoslab
    run`` runs sweeps on); each is saved by the thread that ran it as soon as it
    finishes, so an interrupt keeps it.
    """
    from qoslab.backends.sim import REPLICA
    from qoslab.sweep import run_pool

    points = _points(study, out)
    data: dict[tuple[str, int], list[dict[str, Any]]] = {}
    todo: list[tuple[Point, int]] = []
    for point in points:
        for k in _replicas(point, seeds):
            done = load_finished(out, study, point, k)
            if done is None:
                todo.append((point, k))
                continue
            data[(point.key, k)] = done
            if progress is not None:
                progress.update(task, advance=point.weight, description=f"[dim]{point.words}: kept from before")

    def job(point: Point, k: int) -> list[dict[str, Any]]:
        label = point.words + (f" (seed {k + 1} of {seeds})" if point.seeded and seeds > 1 else "")

        def words(text: str) -> None:
            if progress is not None:
                progress.update(task, description=f"{label} — {text}")

        if progress is not None:
            progress.update(task, description=label)
        token = REPLICA.set(k)
        try:
            records = point.run(words)
        finally:
            REPLICA.reset(token)
        save_point(out, study, point, records, k)
        return records

    def finished(i: int, records: list[dict[str, Any]]) -> None:
        point, k = todo[i]
        data[(point.key, k)] = records
        if progress is not None:
            progress.update(task, advance=point.weight, description=f"{point.words}: done")

    run_pool([functools.partial(job, p, k) for p, k in todo], jobs=jobs, on_done=finished, ordered=False)
    per_seed = [{p.key: data[(p.key, k if p.seeded else 0)] for p in points} for k in range(seeds)]
    return per_seed, len(todo)


def cached_data(study: Study, out: Path) -> dict[str, list[dict[str, Any]]] | None:
    """Seed 1's records of every point of ``study`` kept in ``out`` by an earlier run, or
    None when any is missing (for the report of a seed not run now)."""
    data = {}
    for point in _points(study, out):
        records = load_finished(out, study, point, 0)
        if records is None:
            return None
        data[point.key] = records
    return data


def total_weight(studies: list[Study], out: Path, seeds: int = 1) -> tuple[float, float]:
    """(weight of all runs, weight already finished)."""
    total = done = 0.0
    for s in studies:
        for p in _points(s, out):
            for k in _replicas(p, seeds):
                total += p.weight
                if load_finished(out, s, p, k) is not None:
                    done += p.weight
    return total, done


class Reproduced(TypedDict):
    """What :func:`reproduce` did: every row of summary.json, and the point runs."""

    summary: list[dict[str, Any]]
    """summary.json's rows (docs/agreement.md), this run's seeds' and those kept."""
    points_run: int
    """Point runs made now (a point × a seed)."""
    points: int
    """Point runs of the chosen studies in all, with those kept from before."""
    seeds: int
    kept_seeds: list[str]
    """Seeds whose rows were kept from an earlier run in the same directory."""


def reproduce(
    studies: list[Study], out: Path, *, console: Any = None, show_progress: bool = True, jobs: int = 1, seeds: int = 1
) -> Reproduced:
    """Run ``studies`` into ``out`` with ``seeds`` random seeds per simulated point and
    write the report. Rows of other seeds' studies already in ``out/summary.json`` are
    kept (the report shows them too, with their figures where their points are still
    in ``out/data``); this run's seeds' rows are added or replaced. KeyboardInterrupt
    propagates after the finished points are on disk."""
    from rich.progress import (
        BarColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    from qoslab.report.html import write_report
    from qoslab.report.tables import tidy, write_tables
    from qoslab.studies import combine_seeds, registry

    if seeds < 1:
        raise ValueError("seeds must be at least 1")
    out.mkdir(parents=True, exist_ok=True)
    total, done = total_weight(studies, out, seeds)
    results: dict[str, dict[str, list[dict[str, Any]]]] = {}
    ran = points = 0
    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        TextColumn("{task.percentage:>3.0f} %"),
        TimeElapsedColumn(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
    )
    summary: list[dict[str, Any]] = []
    per_study: dict[str, list[dict[str, list[dict[str, Any]]]]] = {}
    with Progress(*columns, console=console, disable=not show_progress, transient=False) as progress:
        task = progress.add_task("starting", total=total, completed=done)  # type: ignore[arg-type]  # rich keeps a float (Task.completed); its signature says int
        for study in studies:
            per_seed, n = run_study_points(study, out, progress=progress, task=task, jobs=jobs, seeds=seeds)
            per_study[study.seed] = per_seed
            results[study.seed] = per_seed[0]
            ran += n
            points += sum(len(_replicas(p, seeds)) for p in _points(study, out))
        progress.update(task, description="writing the report")
    for study in studies:
        per_seed = per_study[study.seed]
        rows = []
        for k, data in enumerate(per_seed):
            for key, records in data.items():
                rows += [dict(r, replica=k) for r in tidy(records, seed=study.seed, point=key)]
        if rows:
            write_tables(rows, out / "data" / f"seed{study.seed}")
        summary += combine_seeds([study.summary(data) for data in per_seed], study.published())
    # Keep the rows (and the report sections) of seeds run before into the same directory.
    mine = {s.seed for s in studies}
    kept = [r for r in _previous_summary(out) if r.get("seed") not in mine]
    shown = list(studies)
    if kept:
        known = registry()
        for seed in sorted({r["seed"] for r in kept}):
            if seed in known:
                shown.append(known[seed])
                results[seed] = cached_data(known[seed], out) or {}
        summary = sorted(kept + summary, key=lambda r: r["seed"])
        shown.sort(key=lambda s: s.seed)
    (out / "summary.json").write_text(json.dumps(summary, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    write_report(shown, results, summary, out)
    return {
        "summary": summary,
        "points_run": ran,
        "points": points,
        "seeds": seeds,
        "kept_seeds": sorted({r["seed"] for r in kept}),
    }


def _previous_summary(out: Path) -> list[dict[str, Any]]:
    path = out / "summary.json"
    if not path.exists():
        return []
    try:
        rows = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return []
    return rows if isinstance(rows, list) and all(isinstance(r, dict) for r in rows) else []


__all__ = ["reproduce", "run_study_points", "load_finished", "save_point", "cached_data"]
