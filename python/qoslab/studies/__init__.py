"""Studies: each seed's experiment re-run from its ``examples/`` scenarios and set beside
the numbers the seed published.

A :class:`Study` (one module per seed, registered in :data:`REGISTRY`) gives

- ``published``: every number the seed states in its text or tables, as
  :class:`Published` rows, each with its tolerance and the reason for it (the rule:
  docs/agreement.md), and marked ``calibrated`` where a model parameter was set from it,
  ``setting`` where ours is an input the study chose, or ``derived_from`` another row
  where ours follows from it by arithmetic (none of the three counts as agreement);
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
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from qoslab.data.examples import folder as _examples_folder

EXAMPLES = _examples_folder()
"""The scenario files of the seeds' experiments (qoslab/examples in the package; the
checkout's examples/ links to it)."""


@dataclass
class Tolerance:
    """How close ours must be: ``rel`` (a fraction of the paper's value), ``abs`` (in the
    row's unit), or ``exact``; ``reason`` says why this much and names its basis (the
    paper's printed precision, its stated run-to-run variation, the measured seed spread,
    or a model input the paper does not give: docs/agreement.md). A paper value given as
    a range ``[low, high]`` is judged by the range (ours agrees inside it)."""

    reason: str
    rel: float | None = None
    abs: float | None = None

    def text(self, paper: Any = None) -> str:
        if _is_range(paper):
            return f"range {paper[0]:g}–{paper[1]:g}"
        if self.rel is not None:
            return f"±{self.rel * 100:g} %"
        if self.abs is not None:
            return f"±{self.abs:g}"
        return "exact"

    def accepts(self, paper: Any, ours: Any) -> bool:
        if _is_range(paper) and _is_number(ours):
            return bool(paper[0] - 1e-12 <= ours <= paper[1] + 1e-12)
        if isinstance(paper, (int, float)) and isinstance(ours, (int, float)) and not isinstance(paper, bool):
            if self.rel is not None:
                return abs(ours - paper) <= self.rel * abs(paper) + 1e-12
            if self.abs is not None:
                return abs(ours - paper) <= self.abs + 1e-12
            return bool(ours == paper)
        return bool(ours == paper)


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _is_range(paper: Any) -> bool:
    return isinstance(paper, list) and len(paper) == 2 and all(_is_number(v) for v in paper)


EXACT = Tolerance("a count or an exact computation: no measurement noise")


def printed(reason: str, step: float) -> Tolerance:
    """The paper's printed precision: half a unit of the last digit it prints (``step`` is
    that unit), so a value printed as 600 (to the hundred) stands for 550-650."""
    return Tolerance(
        f"printed precision: the paper gives the value to {step:g}, so ±{step / 2:g}; {reason}", abs=step / 2
    )


@dataclass
class Published:
    """One number (or stated fact) the seed publishes.

    ``key`` names it for ``ours``; ``item`` says what it is in words with its place in the
    paper; ``not_reproduced`` (a reason) marks a row no model of ours computes yet.
    ``setting``: ours is an input the study chose (the offered rate, a link's rate), so
    it echoes the paper by construction; ``derived_from``: the key of the row ours follows
    from by arithmetic (a calibrated row, a setting, or an outcome already counted), with
    ``derived_how`` saying the arithmetic. Neither counts as agreement.
    """

    key: str
    item: str
    paper: Any
    unit: str
    tolerance: Tolerance
    calibrated: bool = False
    not_reproduced: str | None = None
    source: str = ""
    setting: bool = False
    derived_from: str | None = None
    derived_how: str = ""


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
    seeded: bool = True
    """Whether the point's records depend on the random seed (it simulates). A point
    that only computes (encodings, arithmetic) is run once and shared by every seed of
    ``qoslab reproduce --seeds N``."""

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

    def points(self, workdir: Path | None = None) -> list[Point]:
        """The experiment design; a study that writes scenario variants writes them under ``workdir``."""
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
        """summary.json's rows (../shared/DESIGN.md): one per published item, from one
        seed's data (:func:`combine_seeds` puts several seeds' rows together)."""
        ours = self.ours(data) if data is not None else {}
        rows = []
        for p in self.published():
            mine = None if p.not_reproduced else ours.get(p.key)
            value = None if mine is None else mine.value
            ok = None if p.not_reproduced or value is None else p.tolerance.accepts(p.paper, value)
            rows.append(
                {
                    "seed": self.seed,
                    "item": p.item,
                    "paper": p.paper,
                    "ours": _round(value),
                    "unit": p.unit,
                    "tolerance": p.tolerance.text(p.paper),
                    "tolerance_reason": p.tolerance.reason,
                    "calibrated": p.calibrated,
                    "ok": ok,
                    "status": row_status(p, value, ok),
                    "derived_from": p.derived_from,
                    "note": p.not_reproduced
                    or (
                        (mine.note if mine else "")
                        + (
                            f"; derived from {p.derived_from}: {p.derived_how}"
                            if p.derived_from and value is not None
                            else ""
                        )
                    ).lstrip("; "),
                    "source": p.source,
                    "key": p.key,
                }
            )
        return rows


STATUSES = ("agrees", "differs", "setting", "derived", "calibration", "not reproduced", "no value")
"""Every status a summary row can have (docs/agreement.md); only ``agrees`` and
``differs`` are outcomes of a simulation compared with the paper."""


def row_status(p: Published, value: Any, ok: bool | None) -> str:
    """A row's status: not reproduced (no model), no value (the run gave none), setting
    (an input), derived (arithmetic on another row), calibration (a parameter was set
    from it), else agrees or differs by the tolerance."""
    if p.not_reproduced:
        return "not reproduced"
    if value is None:
        return "no value"
    if p.setting:
        return "setting"
    if p.derived_from:
        return "derived"
    if p.calibrated:
        return "calibration"
    return "agrees" if ok else "differs"


def calibration_error(row: dict[str, Any]) -> str | None:
    """How far a calibration row misses its own target, in words (None when it meets it
    or has no value): ours − paper in the row's unit and as a share of the paper's value."""
    if row["status"] != "calibration" or row["ok"] is not False:
        return None
    ours, paper = row["ours"], row["paper"]
    if _is_number(ours) and _is_number(paper):
        rel = f" ({100 * (ours - paper) / paper:+.0f} %)" if paper else ""
        return f"{ours:g} against {paper:g} {row['unit']}: {ours - paper:+.3g} {row['unit']}{rel}, outside {row['tolerance']}".replace(
            "  ", " "
        )
    return f"{ours} against {paper}"


def combine_seeds(per_seed: list[list[dict[str, Any]]], published: list[Published]) -> list[dict[str, Any]]:
    """One summary row per published item from the rows of N seeds (``per_seed[k]`` is
    seed k's :meth:`Study.summary`): ``ours`` is the mean over the seeds (a value that is
    not a number: the one most seeds give), ``ours_sd`` the sample standard deviation
    (n − 1; 0 for one seed), ``ours_per_seed`` every seed's value, ``seeds_agreeing``
    "k/N" (how many seeds' own values are within tolerance); the status is judged on the
    mean. A row that agrees with some seeds and not others says so in its note."""
    by_key = {p.key: p for p in published}
    out = []
    n = len(per_seed)
    for i, first in enumerate(per_seed[0]):
        rows = [rows_k[i] for rows_k in per_seed]
        p = by_key[first["key"]]
        values = [r["ours"] for r in rows]
        row = dict(first)
        if p.not_reproduced or any(v is None for v in values):
            have = [v for v in values if v is not None]
            if have and not p.not_reproduced:
                row["note"] = f"{first['note']}; only {len(have)} of {n} seeds gave a value".lstrip("; ")
            row |= {
                "ours": None if len(have) < n else row["ours"],
                "ours_sd": None,
                "ours_per_seed": values,
                "seeds_agreeing": None,
            }
            if len(have) < n and not p.not_reproduced:
                row |= {"ok": None, "status": "no value"}
            out.append(row)
            continue
        if all(_is_number(v) for v in values):
            mean = sum(values) / n
            sd = (sum((v - mean) ** 2 for v in values) / (n - 1)) ** 0.5 if n > 1 else 0.0
            value = _round(mean)
        else:
            counts_: dict[str, int] = {}
            for v in values:
                counts_[repr(v)] = counts_.get(repr(v), 0) + 1
            value = next(v for v in values if counts_[repr(v)] == max(counts_.values()))
            sd = None
        agreeing = sum(bool(p.tolerance.accepts(p.paper, v)) for v in values)
        ok = p.tolerance.accepts(p.paper, value)
        row |= {
            "ours": value,
            "ours_sd": None if sd is None else _round(sd),
            "ours_per_seed": values,
            "seeds_agreeing": f"{agreeing}/{n}",
            "ok": ok,
            "status": row_status(p, value, ok),
        }
        if 0 < agreeing < n:
            row["note"] = (
                f"{row['note']}; within tolerance for {agreeing} of {n} seeds only (per seed: {', '.join(_show(v) for v in values)})".lstrip(
                    "; "
                )
            )
        elif n > 1 and sd is None and len(set(map(repr, values))) > 1:
            row["note"] = f"{row['note']}; the seeds give {', '.join(_show(v) for v in values)}".lstrip("; ")
        out.append(row)
    return out


def _show(v: Any) -> str:
    return f"{v:.4g}" if isinstance(v, float) else str(v)


def finish_axes(
    ax: Any,
    *,
    xlabel: str | None = None,
    ylabel: str | None = None,
    title: str | None = None,
    title_size: float | None = None,
    legend_loc: str = "best",
) -> None:
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


__all__ = [
    "Study",
    "Published",
    "Point",
    "Ours",
    "Figure",
    "PaperTable",
    "Tolerance",
    "EXACT",
    "printed",
    "registry",
    "EXAMPLES",
    "finish_axes",
    "STATUSES",
    "row_status",
    "calibration_error",
    "combine_seeds",
]
