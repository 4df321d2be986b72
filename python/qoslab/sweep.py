"""Sweeps: a scenario's ``[sweep]`` table run point by point.

A point gives each swept parameter one of its values: ``mode = "grid"`` runs every
combination, in the order the parameters are written, the last one varying fastest
(as nested loops would); ``mode = "zip"`` runs the n-th value of every list together.
At each point the values are put in place in the scenario as written (units as the
file writes them) and the scenario validated again; then every test runs as
``qoslab run`` runs it (:func:`qoslab.backends.sim.run_tests`). Each record gets the
point's ``sweep`` values and ``point`` index, so the records form one tidy table, one
row per point and test. The order is deterministic; each point's runs use the
scenario's seed (or ``--seed``), so a point gives the same numbers alone or in a sweep.

Points run one after another in this process. (DESIGN.md asks for sweeps on local cores
and Dask later; the points are independent, so that is a change of this loop only.)
"""

from __future__ import annotations

import copy
import itertools
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from pydantic import ValidationError

from qoslab.errors import InputError
from qoslab.scenario.model import Scenario


@dataclass
class SweepPoint:
    """One point of a sweep: its index, the values it sets, and what ran there."""

    index: int
    values: dict[str, Any]
    network: Any
    runs: list[Any]

    @property
    def records(self) -> list[dict[str, Any]]:
        return [rec for run in self.runs for rec in run.records]


def points(scenario: Scenario) -> list[dict[str, Any]]:
    """The sweep's points in run order: ``{parameter path: value}`` each.

    >>> from qoslab.scenario.model import Sweep
    >>> sc = Scenario.model_construct(sweep=Sweep(values={"a": [1, 2], "b": ["x", "y"]}))
    >>> points(sc)
    [{'a': 1, 'b': 'x'}, {'a': 1, 'b': 'y'}, {'a': 2, 'b': 'x'}, {'a': 2, 'b': 'y'}]
    >>> sc = Scenario.model_construct(sweep=Sweep(mode="zip", values={"a": [1, 2], "b": ["x", "y"]}))
    >>> points(sc)
    [{'a': 1, 'b': 'x'}, {'a': 2, 'b': 'y'}]
    """
    sweep = scenario.sweep
    if sweep is None or not sweep.values:
        return []
    keys = list(sweep.values)
    lists = [sweep.values[k] for k in keys]
    combos = zip(*lists) if sweep.mode == "zip" else itertools.product(*lists)
    return [dict(zip(keys, combo)) for combo in combos]


def _set(data: dict[str, Any], key: str, value: Any) -> None:
    from qoslab.scenario.checks import parse_param_path

    steps = parse_param_path(key)
    if steps is None:  # the loader's checks refuse such keys before a sweep runs
        raise ValueError(f"not a parameter path: {key!r}")
    cur: Any = data
    for step in steps[:-1]:
        if isinstance(cur, dict) and step not in cur:
            cur[step] = {}
        cur = cur[step]
    cur[steps[-1]] = copy.deepcopy(value)


def scenario_at(data: dict[str, Any], values: dict[str, Any], source: str) -> Scenario:
    """The scenario ``data`` (the file's TOML, parsed) with ``values`` in place."""
    from qoslab.scenario.load import Spans, pydantic_problems

    point = copy.deepcopy(data)
    point.pop("sweep", None)
    for key, value in values.items():
        _set(point, key, value)
    try:
        return Scenario.model_validate(point)
    except ValidationError as err:  # the loader checks each point first; kept for callers that did not load
        raise InputError(source, pydantic_problems(err, point, Spans(""))) from None


def run_sweep(
    file: str | Path,
    *,
    seed: int | None = None,
    pcap_dir: str | Path | None = None,
    on_point: Callable[[SweepPoint], None] | None = None,
) -> list[SweepPoint]:
    """Run every point of the sweep of scenario ``file`` (loaded and checked first).

    With ``pcap_dir``, point N captures into ``pcap_dir/pointN/testM``. ``on_point`` is
    called after each point (the CLI prints it).

    Raises
    ------
    InputError
        For a bad scenario or sweep (exit 2 in the CLI).
    SimulationError
        If a run fails.
    """
    from qoslab.backends.sim import run_tests
    from qoslab.scenario import load_scenario

    scenario = load_scenario(file)
    data = tomllib.loads(Path(file).read_text(encoding="utf-8"))
    done: list[SweepPoint] = []
    for index, values in enumerate(points(scenario)):
        at = scenario_at(data, values, str(file))
        pcap = Path(pcap_dir) / f"point{index}" if pcap_dir is not None else None
        net, runs = run_tests(at, source=file, seed=seed, pcap_dir=pcap)
        for run in runs:
            for rec in run.records:
                rec["point"] = index
                rec["sweep"] = dict(values)
        point = SweepPoint(index, dict(values), net, runs)
        done.append(point)
        if on_point is not None:
            on_point(point)
    return done


__all__ = ["SweepPoint", "points", "scenario_at", "run_sweep"]
