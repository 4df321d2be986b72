"""Sweeps: the ``[sweep]`` table run point by point.

A point gives each swept parameter one of its values: every combination in the order
the parameters are written, the last varying fastest (``mode = "grid"``), or the n-th
value of every list together (``mode = "zip"``). Each point is the scenario with its
values put in place, validated again, and run as ``qoslab run`` runs a scenario: every
test in a fresh simulation. Points run in order, one after another, so the records
come out in the same order every time.

>>> from qoslab.scenario.model import Sweep
>>> points(Sweep.model_validate({"a": [1, 2], "b": ["x", "y"]}))
[{'a': 1, 'b': 'x'}, {'a': 1, 'b': 'y'}, {'a': 2, 'b': 'x'}, {'a': 2, 'b': 'y'}]
>>> points(Sweep.model_validate({"mode": "zip", "a": [1, 2], "b": ["x", "y"]}))
[{'a': 1, 'b': 'x'}, {'a': 2, 'b': 'y'}]
"""

from __future__ import annotations

import copy
import itertools
import tomllib
from pathlib import Path
from typing import Any, Callable

from qoslab.scenario.checks import parse_param_path
from qoslab.scenario.model import Scenario, Sweep


def points(sweep: Sweep) -> list[dict[str, Any]]:
    """Every point of the sweep, in order."""
    keys = list(sweep.values)
    lists = [sweep.values[k] for k in keys]
    if sweep.mode == "zip":
        return [dict(zip(keys, values)) for values in zip(*lists)]
    return [dict(zip(keys, values)) for values in itertools.product(*lists)]


def at_point(data: dict[str, Any], point: dict[str, Any]) -> Scenario:
    """The scenario ``data`` (its TOML tables) with the point's values in place, without its sweep.

    The values were validated at every point when the scenario was loaded
    (:mod:`qoslab.scenario.checks`), so this does not fail on a loaded scenario.
    """
    data = copy.deepcopy(data)
    data.pop("sweep", None)
    for key, value in point.items():
        steps = parse_param_path(key)
        assert steps is not None, key
        cur: Any = data
        for step in steps[:-1]:
            if isinstance(cur, dict) and step not in cur:
                cur[step] = {}
            cur = cur[step]
        cur[steps[-1]] = value
    return Scenario.model_validate(data)


def run_sweep(
    data: dict[str, Any],
    sweep: Sweep,
    *,
    source: str | Path | None = None,
    seed: int | None = None,
    pcap_dir: str | Path | None = None,
    on_point: Callable[[dict[str, Any], Any, list[Any]], None] | None = None,
) -> list[tuple[dict[str, Any], list[Any]]]:
    """Runs every point of ``sweep`` over the scenario ``data``; returns (point, test runs)
    per point, each record tagged with ``"sweep": point``."""
    from qoslab.backends.sim import run_tests

    out = []
    for k, point in enumerate(points(sweep)):
        scenario = at_point(data, point)
        net, runs = run_tests(scenario, source=source, seed=seed, pcap_dir=Path(pcap_dir) / f"point{k}" if pcap_dir is not None else None)
        for run in runs:
            for record in run.records:
                record["sweep"] = dict(point)
        out.append((point, runs))
        if on_point is not None:
            on_point(point, net, runs)
    return out


def load_data(path: str | Path) -> dict[str, Any]:
    """The TOML tables of a scenario file (already validated by ``load_scenario``)."""
    return tomllib.loads(Path(path).read_text(encoding="utf-8"))


__all__ = ["points", "at_point", "run_sweep", "load_data"]
