"""Studies: each seed's experiment re-run from its ``examples/`` scenarios and set beside
the numbers the seed published.

A :class:`Study` (one module per seed, registered in :data:`REGISTRY`) gives

- ``published``: every number the seed states in its text or tables, as
  :class:`Published` rows, each with its tolerance and the reason for it, and marked
  ``calibrated`` where a model parameter was set from it (such rows never count as
  agreement);
- ``points()``: the experiment design as named :class:`Point` s, each a function that
  runs simulations and returns records (one per measured point);
- ``ours(data)``: our value of each published item from the records, with a note;
- ``figures(data)``: matplotlib figures, one per question, the published points overlaid;
- ``tables``: the seed's tables with a column of ours beside each published column.

:func:`qoslab.studies.runner.reproduce` runs the points with a progress bar, keeps every
finished point on disk (so an interrupted run resumes where it stopped), and writes the
report, figures, data and ``summary.json``.

Seeds whose models are not there yet still register their published numbers, each with
the reason it is not reproduced (``ours`` = None), so summary.json holds every number.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
"""The scenario files of the seeds' experiments (a source checkout's examples/)."""


@dataclass
class Tolerance:
    """How close ours must be: ``rel`` (a fraction of the paper's value), ``abs`` (in the
    row's unit), or ``exact``; ``reason`` says why this much."""

    reason: str
    rel: float | None = None
    abs: float | None = None

    def text(self) -> str:
        if self.rel is not None:
            return f"±{self.rel * 100:g} %"
        if self.abs is not None:
            return f"±{self.abs:g}"
        return "exact"

    def accepts(self, paper: Any, ours: Any) -> bool:
        if isinstance(paper, (int, float)) and isinstance(ours, (int, float)) and not isinstance(paper, bool):
            if self.rel is not None:
                return abs(ours - paper) <= self.rel * abs(paper) + 1e-12
            if self.abs is not None:
                return abs(ours - paper) <= self.abs + 1e-12
            return ours == paper
        return ours == paper


EXACT = Tolerance("a count or an exact computation: no measurement noise")


@dataclass
class Published:
    """One number (or stated fact) the seed publishes.

    ``key`` names it for ``ours``; ``item`` says what it is in words with its place in the
    paper; ``not_reproduced`` (a reason) marks a row no model of ours computes yet.
    """

    key: str
    item: str
    paper: Any
    unit: str
    tolerance: Tolerance
    calibrated: bool = False
    not_reproduced: str | None = None
    source: str = ""


@dataclass
class Point:
    """One unit of the experiment design: ``run(progress)`` runs its simulations and returns
    records; ``spec`` (JSON-able) identifies it, so a finished point is reused only while
    its spec is unchanged."""

    key: str
    words: str
    run: Callable[[Callable[[str], None]], list[dict[str, Any]]]
    spec: dict[str, Any] = field(default_factory=dict)
    weight: float = 1.0
    """Relative cost, for the progress bar's ETA."""

    def digest(self) -> str:
        return hashlib.sha256(json.dumps(self.spec, sort_keys=True, default=str).encode()).hexdigest()[:16]


@dataclass
class Ours:
    """Our value of a published item and a note on it (how it was obtained, why it differs)."""

    value: Any
    note: str = ""


@dataclass
class Figure:
    name: str
    title: str
    caption: str
    figure: Any  # matplotlib.figure.Figure


@dataclass
class PaperTable:
    """A table of the seed, with ours beside each published column: ``columns`` are
    (header, published key or None); ``rows`` are (label, [keys per column])."""

    name: str
    title: str
    columns: list[str]
    rows: list[tuple[str, list[str | None]]]


class Study:
    """Base of a seed's study; subclasses fill in the attributes and methods."""

    seed: str = ""
    title: str = ""
    paper: str = ""
    question: str = ""
    scenarios: list[str] = []
    """examples/ files the design runs (drawn as the set-up)."""
    findings: list[str] = []
    """What agrees and what does not, and why: written from the data at report time by ``discussion``."""

    def published(self) -> list[Published]:
        raise NotImplementedError

    def points(self) -> list[Point]:
        return []

    def ours(self, data: dict[str, list[dict[str, Any]]]) -> dict[str, Ours]:
        return {}

    def figures(self, data: dict[str, list[dict[str, Any]]]) -> list[Figure]:
        return []

    def tables(self) -> list[PaperTable]:
        return []

    def discussion(self, rows: list[dict[str, Any]], data: dict[str, list[dict[str, Any]]]) -> list[str]:
        """Paragraphs on what agrees and what does not, and why."""
        return []

    # ------------------------------------------------------------------ summary rows

    def summary(self, data: dict[str, list[dict[str, Any]]]) -> list[dict[str, Any]]:
        """summary.json's rows (../shared/DESIGN.md): one per published item."""
        ours = self.ours(data) if data is not None else {}
        rows = []
        for p in self.published():
            mine = None if p.not_reproduced else ours.get(p.key)
            value = None if mine is None else mine.value
            if p.not_reproduced:
                status, ok = "not reproduced", None
            elif value is None:
                status, ok = "no value", None
            else:
                ok = p.tolerance.accepts(p.paper, value)
                status = "calibration" if p.calibrated else ("agrees" if ok else "differs")
            rows.append(
                {
                    "seed": self.seed,
                    "item": p.item,
                    "paper": p.paper,
                    "ours": _round(value),
                    "unit": p.unit,
                    "tolerance": p.tolerance.text(),
                    "tolerance_reason": p.tolerance.reason,
                    "calibrated": p.calibrated,
                    "ok": ok,
                    "status": status,
                    "note": p.not_reproduced or (mine.note if mine else ""),
                    "source": p.source,
                    "key": p.key,
                }
            )
        return rows


def finish_axes(ax: Any, *, xlabel: str | None = None, ylabel: str | None = None, title: str | None = None, title_size: float | None = None, legend_loc: str = "best") -> None:
    """The studies' figures end alike: axis labels, a light grid, a small legend (after
    every labelled line is drawn), the title."""
    if xlabel is not None:
        ax.set_xlabel(xlabel)
    if ylabel is not None:
        ax.set_ylabel(ylabel)
    ax.grid(True, color="0.9")
    ax.legend(fontsize=7, loc=legend_loc)
    if title is not None:
        ax.set_title(title, **({"fontsize": title_size} if title_size is not None else {}))


def _round(value: Any) -> Any:
    if isinstance(value, float):
        return float(f"{value:.6g}")
    return value


def registry() -> dict[str, Study]:
    """Every seed's study, by seed number."""
    from qoslab.studies import seed000, seed001, seed002, seed003, seed004

    studies = [seed000.Seed000(), seed001.Seed001(), seed002.Seed002(), seed003.Seed003(), seed004.Seed004()]
    return {s.seed: s for s in studies}


__all__ = ["Study", "Published", "Point", "Ours", "Figure", "PaperTable", "Tolerance", "EXACT", "registry", "EXAMPLES", "finish_axes"]
