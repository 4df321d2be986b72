"""Scenario variants for studies: an ``examples/`` file with some keys changed and its
tests replaced, written out as TOML (so a reader can run it with ``qoslab run``) and
loaded through the ordinary loader (so it is validated like any file)."""

from __future__ import annotations

import copy
import tomllib
from pathlib import Path
from typing import Any

import tomli_w

from qoslab.scenario import Scenario
from qoslab.scenario.load import loads_scenario


def example_data(path: Path) -> dict[str, Any]:
    return tomllib.loads(path.read_text(encoding="utf-8"))


def variant(
    base: dict[str, Any],
    *,
    name: str,
    set_: dict[str, Any] | None = None,
    tests: list[dict[str, Any]] | None = None,
    drop: tuple[str, ...] = ("sweep",),
) -> dict[str, Any]:
    """``base`` with dotted keys set (``"node.a.forwarding"``, ``"link[2].security"``),
    its tests replaced by ``tests`` and the tables in ``drop`` removed."""
    data = copy.deepcopy(base)
    for key in drop:
        data.pop(key, None)
    data["scenario"]["name"] = name
    for path, value in (set_ or {}).items():
        target: Any = data
        parts = _split(path)
        for part in parts[:-1]:
            target = target[part] if not isinstance(part, str) or part in target else target.setdefault(part, {})
        if value is None:
            target.pop(parts[-1], None)
        else:
            target[parts[-1]] = value
    if tests is not None:
        data["test"] = tests
    return data


def _split(path: str) -> list[Any]:
    parts: list[Any] = []
    for piece in path.split("."):
        if "[" in piece:
            head, rest = piece.split("[", 1)
            parts.append(head)
            parts.append(int(rest.rstrip("]")))
        else:
            parts.append(piece)
    return parts


def materialise(data: dict[str, Any], path: Path, header: str = "") -> Scenario:
    """Write ``data`` to ``path`` as TOML and load it back through the scenario loader."""
    path.parent.mkdir(parents=True, exist_ok=True)
    text = header + tomli_w.dumps(data)
    path.write_text(text, encoding="utf-8")
    return loads_scenario(text, str(path))


__all__ = ["example_data", "variant", "materialise"]
