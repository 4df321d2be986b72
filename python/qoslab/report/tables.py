"""Tidy tables: one row per measured point, one column per parameter or metric.

Records (``{"test", "name", "from", "to", "parameters": {…}, "metrics": {…}}``, the
``qoslab run --json`` shape) become flat rows: the test's fields, then every parameter
and metric under its own name (the names carry their units, ``throughput_mbps``). A
metric that is a mapping per node (``cpu_util_pct``) becomes one column per node,
``cpu_util_pct.NODE``; a list becomes its JSON text. Extra fields a caller gives (a
study's ``point``, ``config``) come first.

:func:`write_tables` writes the rows as JSON, CSV and Parquet side by side, so they
open in a spreadsheet, pandas, R or DuckDB (``SELECT * FROM 'records.parquet'``).
"""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Iterable
from pathlib import Path
from typing import Any

FIXED = ("test", "name", "from", "to")


def tidy(records: Iterable[dict[str, Any]], **extra: Any) -> list[dict[str, Any]]:
    """Flat rows of ``records``.

    >>> tidy([{"test": "udp.flow", "name": None, "from": "a", "to": "b",
    ...        "parameters": {"frame_bytes": 64}, "metrics": {"loss_pct": 0.0, "cpu_util_pct": {"a": 1.5}}}])
    [{'test': 'udp.flow', 'name': None, 'from': 'a', 'to': 'b', 'frame_bytes': 64, 'loss_pct': 0.0, 'cpu_util_pct.a': 1.5}]
    """
    rows = []
    for rec in records:
        row: dict[str, Any] = dict(extra)
        # A sweep's point, replication and swept values (qoslab run on a [sweep]): rows
        # of different points are told apart by them.
        # What the caller gives (a study's own point key) comes first and stays.
        for key in ("point", "replication"):
            if key in rec and key not in row:
                row[key] = rec[key]
        for key, value in (rec.get("sweep") or {}).items():
            if key not in row:
                row[key] = value if isinstance(value, (int, float, str, bool)) or value is None else json.dumps(value)
        for key in FIXED:
            row[key] = rec.get(key)
        for part in ("parameters", "metrics"):
            for key, value in (rec.get(part) or {}).items():
                if isinstance(value, dict):
                    for sub, v in value.items():
                        row[f"{key}.{sub}"] = v
                elif isinstance(value, (list, tuple)):
                    row[key] = json.dumps(value)
                else:
                    row[key] = value
        rows.append(row)
    return rows


def columns(rows: list[dict[str, Any]]) -> list[str]:
    """Every column in first-seen order."""
    seen: dict[str, None] = {}
    for row in rows:
        for key in row:
            seen.setdefault(key, None)
    return list(seen)


def _column_values(rows: list[dict[str, Any]], name: str) -> list[Any]:
    values = [row.get(name) for row in rows]
    kinds = {type(v) for v in values if v is not None}
    if kinds <= {int, float, bool} and not (bool in kinds and kinds - {bool}):
        if float in kinds:
            return [None if v is None or (isinstance(v, float) and math.isnan(v)) else float(v) for v in values]
        return values
    if len(kinds) > 1 or not kinds <= {int, float, bool, str}:
        return [None if v is None else (v if isinstance(v, str) else json.dumps(v)) for v in values]
    return values


def write_tables(rows: list[dict[str, Any]], directory: str | Path, stem: str = "records") -> dict[str, Path]:
    """Write ``rows`` as ``stem.json``, ``stem.csv`` and ``stem.parquet`` in ``directory``."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    names = columns(rows)
    paths = {kind: directory / f"{stem}.{kind}" for kind in ("json", "csv", "parquet")}
    paths["json"].write_text(json.dumps(rows, indent=1) + "\n", encoding="utf-8")
    with paths["csv"].open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=names, extrasaction="ignore")
        writer.writeheader()
        for row in rows:
            writer.writerow({k: ("" if row.get(k) is None else row.get(k)) for k in names})
    table = pa.table({name: pa.array(_column_values(rows, name)) for name in names}) if names else pa.table({})
    pq.write_table(table, paths["parquet"])
    return paths


__all__ = ["tidy", "columns", "write_tables"]
