"""The results store of a sweep: one Parquet file per finished point, queried with DuckDB.

``qoslab sweep FILE --out DIR`` writes ``DIR/points/<point_id>.parquet`` the moment a
point finishes (``<point_id>.failed.parquet`` for a point that failed, with its error).
Each file is written under a temporary name in the same directory and renamed into
place (``os.replace``, atomic on POSIX), so a crash of the process, Ctrl-C or a lost
worker leaves either the whole file or none: a finished point is never lost and never
half-written.
Running the same command again reads the names in ``DIR/points`` and computes only the
points missing there (failed points are run again).

A point's id is the SHA-256 of its resolved scenario (every value after the sweep's
values are put in place and the file is validated, as canonical JSON) and its seed: the
same point in another sweep, or in the same sweep with its values written in another
order, has the same id, and a point whose scenario changed gets a new one. The sweep's
id is the SHA-256 of the scenario as written (with its ``[sweep]``) and the base seed.

Columns (docs/results-store.md has the full list with units):
``sweep_id``, ``point_id``, ``point`` (index in sweep order), ``replication``, ``seed``,
``status`` ("ok" or "failed"), ``error``, one column per swept key named by its path
(``link[0].rate``) holding the value the scenario has there (SI units: bit/s, s, B …),
``written`` (a struct: each swept value as the file wrote it), the record's ``test``,
``name``, ``from``, ``to``, then every parameter and metric of the record under its own
name. A metric given per node is a ``map<string, double>``; a list stays an Arrow list.
Units are in each field's Arrow metadata (``unit``), and where a column is defined.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import uuid
from collections.abc import Iterable
from pathlib import Path
from typing import Any

STORE_FORMAT = "qoslab-results/1"
"""Written in every file's schema metadata, so a reader knows the layout."""

_SUFFIX_UNITS = [
    ("_mbps", "Mb/s"),
    ("_kbps", "kb/s"),
    ("_bps", "bit/s"),
    ("_pct", "%"),
    ("_ms", "ms"),
    ("_us", "µs"),
    ("_ns", "ns"),
    ("_s", "s"),
    ("_bytes", "B"),
    ("_fps", "frame/s"),
    ("_pps", "packet/s"),
    ("_frames", "frame"),
    ("_packets", "packet"),
    ("_datagrams", "datagram"),
    ("_segments", "segment"),
    ("_bits", "bit"),
    ("_hz", "Hz"),
]
"""A record's metric names carry their unit in their suffix (docs/metrics.md, "Units and
prefixes"); this reads it back for the Arrow field metadata."""

_FIXED = {
    "sweep_id": ("", "SHA-256 (hex) of the scenario as written, with its [sweep], and the base seed"),
    "point_id": ("", "SHA-256 (hex) of the point's resolved scenario and its seed"),
    "point": ("", "index of the point in the sweep's order (grid: last key fastest; zip: n-th values)"),
    "replication": ("", "replication index: 0 runs with the base seed, k > 0 with replica_seed(seed, k)"),
    "seed": ("", "the seed this point's simulations ran with"),
    "status": ("", "'ok' or 'failed'"),
    "error": ("", "why the point failed (null when it did not)"),
    "wall_s": ("s", "wall-clock seconds the point took on its worker (not a result: varies from run to run)"),
}


def unit_of(name: str) -> str:
    """The unit a metric's name says (``throughput_mbps`` -> ``Mb/s``), or ``""``.

    >>> unit_of("latency_avg_ms"), unit_of("loss_pct"), unit_of("frame_bytes"), unit_of("test")
    ('ms', '%', 'B', '')
    """
    for suffix, unit in _SUFFIX_UNITS:
        if name.endswith(suffix):
            return unit
    return ""


def canonical(obj: Any) -> str:
    """JSON with sorted keys and no spaces: one text per value, for hashing."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), default=str)


def network_digest(resolved: dict[str, Any]) -> str:
    """SHA-256 (hex) of a resolved scenario without its tests (canonical JSON)."""
    return hashlib.sha256(canonical({k: v for k, v in resolved.items() if k != "test"}).encode()).hexdigest()


def point_id(network: str, tests: list[Any], seed: int) -> str:
    """The id of a point: SHA-256 of ``network=`` its :func:`network_digest`, ``tests=``
    its resolved tests (canonical JSON) and ``seed=`` its seed, one per line. Split so
    that points differing only in their tests digest their network once.

    >>> a = point_id(network_digest({"node": {}}), [{"method": "ping"}], 7)
    >>> a == point_id(network_digest({"node": {}}), [{"method": "ping"}], 7) != point_id(network_digest({"node": {}}), [{"method": "ping"}], 8)
    True
    """
    return hashlib.sha256(f"network={network}\ntests={canonical(tests)}\nseed={seed}".encode()).hexdigest()


def sweep_id(raw: dict[str, Any], seed: int) -> str:
    """The id of a sweep: SHA-256 of the scenario as written (with its [sweep]) and the base seed."""
    return hashlib.sha256(f"{canonical(raw)}\nseed={seed}".encode()).hexdigest()


def _whole(path: Path) -> bool:
    """False for an empty file: what an operating-system crash can leave of a file
    renamed before the kernel wrote its data. It counts as missing and is run again."""
    try:
        return path.stat().st_size > 0
    except OSError:
        return False


class ResultsStore:
    """``DIR/points/*.parquet``: one file per finished point (see the module's doc)."""

    def __init__(self, directory: str | Path) -> None:
        self.directory = Path(directory)
        self.points = self.directory / "points"

    def create(self) -> None:
        self.points.mkdir(parents=True, exist_ok=True)

    def done(self) -> set[str]:
        """Ids of the points finished without error."""
        if not self.points.is_dir():
            return set()
        return {
            p.name[: -len(".parquet")]
            for p in self.points.glob("*.parquet")
            if not p.name.endswith(".failed.parquet") and _whole(p)
        }

    def failed(self) -> set[str]:
        """Ids of the points whose last run failed."""
        if not self.points.is_dir():
            return set()
        return {p.name[: -len(".failed.parquet")] for p in self.points.glob("*.failed.parquet")}

    def write(
        self,
        coords: dict[str, Any],
        records: list[dict[str, Any]] | None,
        error: str | None = None,
        swept_units: dict[str, str] | None = None,
    ) -> Path:
        """Write one point at once: its records (or its error), each row carrying ``coords``
        (sweep_id, point_id, point, replication, seed, swept values, written). Atomic:
        written under a temporary name and renamed into place."""
        import pyarrow.parquet as pq

        table = point_table(coords, records, error, swept_units or {})
        name = coords["point_id"] + (".failed.parquet" if error is not None else ".parquet")
        final = self.points / name
        tmp = self.points / f".{name}.{uuid.uuid4().hex}.tmp"
        try:
            # No fsync: the file is whole in the kernel once written, which is what a
            # crash of this process, Ctrl-C or a lost worker need; an fsync per point
            # would cost more than a short simulation (docs/results-store.md says what an
            # operating-system crash may lose).
            pq.write_table(table, tmp)
            os.replace(tmp, final)
        finally:
            if tmp.exists():
                tmp.unlink()
        if error is None:
            stale = self.points / (coords["point_id"] + ".failed.parquet")
            if stale.exists():
                stale.unlink()
        return final

    def glob(self) -> str:
        return str(self.points / "*.parquet")


# --------------------------------------------------------------------------- Arrow


def _flatten(record: dict[str, Any]) -> dict[str, Any]:
    """A record's columns: test, name, from, to, then its parameters and metrics flat."""
    row: dict[str, Any] = {k: record.get(k) for k in ("test", "name", "from", "to")}
    for part in ("parameters", "metrics"):
        for key, value in (record.get(part) or {}).items():
            if key in row or key in _FIXED:
                key = f"{part}.{key}"
            row[key] = value
    return row


def _arrow_value(value: Any) -> tuple[Any, Any]:
    """(Arrow type, value) for one cell: scalars as themselves, a mapping of numbers per
    name as map<string, double>, other mappings as structs, lists as lists."""
    import pyarrow as pa

    if value is None:
        return pa.null(), None
    if isinstance(value, bool):
        return pa.bool_(), value
    if isinstance(value, int):
        return (pa.int64(), value) if -(2**63) <= value < 2**63 else (pa.float64(), float(value))
    if isinstance(value, float):
        return pa.float64(), value
    if isinstance(value, str):
        return pa.string(), value
    if isinstance(value, dict):
        if value and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value.values()):
            return pa.map_(pa.string(), pa.float64()), [(str(k), float(v)) for k, v in value.items()]
        if not value:
            return pa.map_(pa.string(), pa.float64()), []
        fields, cells = [], {}
        for k, v in value.items():
            t, cv = _arrow_value(v)
            fields.append(pa.field(str(k), t))
            cells[str(k)] = cv
        return pa.struct(fields), cells
    if isinstance(value, (list, tuple)):
        items = [_arrow_value(v) for v in value]
        types = {t for t, _ in items if t != pa.null()}
        if not items or not types:
            return pa.list_(pa.null()), [None] * len(items)
        if len(types) == 1:
            return pa.list_(types.pop()), [v for _, v in items]
        # Mixed lists (rare) keep their items' text: a list of one type is what Arrow holds.
        return pa.list_(pa.string()), [
            None if v is None else (v if isinstance(v, str) else canonical(v)) for v in value
        ]
    return pa.string(), str(value)


def _column(name: str, cells: list[tuple[Any, Any]]) -> tuple[Any, Any]:
    """One column from typed cells: their common type (int with float is float; other
    mixes become text, each cell's JSON)."""
    import pyarrow as pa

    types = [t for t, _ in cells if t != pa.null()]
    values = [v for _, v in cells]
    if not types:
        return pa.null(), values
    kinds = set(types)
    if kinds <= {pa.int64(), pa.float64()} and len(kinds) == 2:
        return pa.float64(), [None if v is None else float(v) for v in values]
    if len(kinds) == 1:
        return types[0], values
    # One column, cells of different shapes (a struct in one record, a number in another).
    return pa.string(), [None if v is None else (v if isinstance(v, str) else canonical(v)) for v in values]


def point_table(
    coords: dict[str, Any], records: list[dict[str, Any]] | None, error: str | None, swept_units: dict[str, str]
) -> Any:
    """The Arrow table of one point (one row per record; one row with the error when it failed)."""
    import pyarrow as pa

    base = {k: coords.get(k) for k in ("sweep_id", "point_id", "point", "replication", "seed")}
    base["status"] = "ok" if error is None else "failed"
    base["error"] = error
    base["wall_s"] = coords.get("wall_s")
    swept: dict[str, Any] = coords.get("swept", {})
    written: dict[str, Any] = coords.get("written", {})
    rows: list[dict[str, Any]] = []
    metric_names: list[str] = []
    for rec in records or []:
        for key in rec.get("metrics") or {}:
            name = f"metrics.{key}" if key in ("test", "name", "from", "to") or key in _FIXED else key
            if name not in metric_names:
                metric_names.append(name)
    for rec in (records or [{}]) if error is None else [{}]:
        row = dict(base)
        row.update(swept)
        row["written"] = {k: (v if isinstance(v, str) else canonical(v)) for k, v in written.items()} or None
        row.update({k: v for k, v in _flatten(rec).items() if k not in row} if rec else {})
        rows.append(row)
    names: list[str] = []
    for row in rows:
        for k in row:
            if k not in names:
                names.append(k)
    fields, arrays = [], []
    for name in names:
        if name == "seed":
            typ, values = pa.uint64(), [row.get(name) for row in rows]
        elif name in ("point", "replication"):
            typ, values = pa.int64(), [row.get(name) for row in rows]
        elif name == "written":
            keys = list(written)
            typ = pa.struct([pa.field(k, pa.string()) for k in keys]) if keys else pa.null()
            values = [row.get(name) for row in rows] if keys else [None] * len(rows)
        else:
            typ, values = _column(name, [_arrow_value(row.get(name)) for row in rows])
        unit, doc = _FIXED.get(name, (None, None))
        if unit is None:
            unit = swept_units.get(name, unit_of(name))
            doc = "swept: the value the scenario has at this key, in SI units" if name in swept else "docs/metrics.md"
        meta = {b"unit": unit.encode(), b"doc": doc.encode()}
        fields.append(pa.field(name, typ, metadata=meta))
        arrays.append(pa.array(values, type=typ))
    schema = pa.schema(
        fields,
        metadata={
            b"format": STORE_FORMAT.encode(),
            b"swept": canonical(list(swept)).encode(),
            b"metrics": canonical(metric_names).encode(),
        },
    )
    return pa.Table.from_arrays(arrays, schema=schema)


# --------------------------------------------------------------------------- queries


def connect(directory: str | Path) -> Any:
    """A DuckDB connection with the view ``results`` over every point file of ``directory``
    (``union_by_name``: points whose records have other columns still line up)."""
    import duckdb

    ResultsStore(directory)
    con = duckdb.connect()
    files = [f for f in iter_point_files(directory) if _whole(f)]
    if files:
        listing = "[" + ", ".join("'" + str(f).replace("'", "''") + "'" for f in files) + "]"
        con.execute(f"CREATE VIEW results AS SELECT * FROM read_parquet({listing}, union_by_name = true)")
    return con


def query(directory: str | Path, sql: str) -> tuple[list[str], list[tuple[Any, ...]]]:
    """Run ``sql`` (which reads the view ``results``) on the store; (column names, rows)."""
    con = connect(directory)
    cur = con.execute(sql)
    names = [d[0] for d in cur.description] if cur.description else []
    return names, cur.fetchall()


def swept_keys(directory: str | Path) -> list[str]:
    """The swept keys, in the sweep's order, as the files' schema metadata lists them."""
    import pyarrow.parquet as pq

    store = ResultsStore(directory)
    for f in sorted(store.points.glob("*.parquet")) if store.points.is_dir() else []:
        meta = pq.read_schema(f).metadata or {}
        if b"swept" in meta:
            return list(json.loads(meta[b"swept"]))
    return []


def metric_columns(directory: str | Path) -> list[str]:
    """The columns that are metrics (a record's ``metrics``, not its ``parameters``), in
    first-seen order over every point file's schema metadata."""
    import pyarrow.parquet as pq

    seen: dict[str, None] = {}
    for f in iter_point_files(directory):
        meta = pq.read_schema(f).metadata or {}
        for name in json.loads(meta.get(b"metrics", b"[]")):
            seen.setdefault(name, None)
    return list(seen)


# --------------------------------------------------------------------------- aggregation


def t_quantile_975(df: int) -> float:
    """The 0.975 quantile of Student's t with ``df`` degrees of freedom: the factor of a
    two-sided 95 % confidence interval of a mean of ``df + 1`` samples. The t
    distribution's CDF for integer ``df`` is a finite sum (Abramowitz & Stegun 26.7.3
    and 26.7.4, the series in theta = atan(t / sqrt(df))); the quantile is found by bisection.

    >>> round(t_quantile_975(1), 3), round(t_quantile_975(4), 3), round(t_quantile_975(29), 3)
    (12.706, 2.776, 2.045)
    """
    import math

    if df < 1:
        raise ValueError("Student's t needs at least one degree of freedom")

    def cdf(t: float) -> float:
        th = math.atan(t / math.sqrt(df))
        s, c = math.sin(th), math.cos(th)
        if df % 2 == 1:
            # A(t|v) = 2/pi * (theta + sin(theta) * (cos + 2/3 cos^3 + ... + (2·4…(v-3))/(1·3…(v-2)) cos^(v-2)))
            total, term = 0.0, c
            if df > 1:
                total = term
                for k in range(3, df - 1, 2):
                    term *= c * c * (k - 1) / k
                    total += term
            a = 2.0 / math.pi * (th + s * total)
        else:
            # A(t|v) = sin(theta) * (1 + 1/2 cos^2 + 1·3/(2·4) cos^4 + ... + (1·3…(v-3))/(2·4…(v-2)) cos^(v-2))
            total, term = 1.0, 1.0
            for k in range(2, df - 1, 2):
                term *= c * c * (k - 1) / k
                total += term
            a = s * total
        return 0.5 + 0.5 * a  # A(t|v) = P(|T| < t)

    lo, hi = 0.0, 1.0
    while cdf(hi) < 0.975:
        hi *= 2
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if cdf(mid) < 0.975:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


def aggregate(directory: str | Path) -> tuple[list[str], list[dict[str, Any]]]:
    """Over replications: for every (swept values, test, name, from, to) and every
    numeric metric (a record's ``metrics``; its ``parameters`` are what was asked), its mean, sample standard deviation (n - 1), the 95 % confidence
    interval's half-width (Student t: t(0.975, n - 1) · sd / sqrt(n); null for n = 1) and n.
    Failed points are left out. Returns (swept keys, rows)."""
    import math

    keys = swept_keys(directory)
    con = connect(directory)
    try:
        schema = con.execute("DESCRIBE results").fetchall()
    except Exception:
        return keys, []
    numeric = (
        "TINYINT",
        "SMALLINT",
        "INTEGER",
        "BIGINT",
        "HUGEINT",
        "UTINYINT",
        "USMALLINT",
        "UINTEGER",
        "UBIGINT",
        "FLOAT",
        "DOUBLE",
    )
    skip = set(_FIXED) | set(keys)
    wanted = set(metric_columns(directory))
    metrics = [name for name, typ, *_ in schema if typ in numeric and name not in skip and name in wanted]
    group = [k for k in keys] + ["test", "name", "from", "to"]
    group = [g for g in group if g in {name for name, *_ in schema}]
    q = lambda n: '"' + n.replace('"', '""') + '"'  # noqa: E731
    select = ", ".join(q(g) for g in group)
    parts = [
        f"avg({q(m)}) AS {q(m + ':mean')}, stddev_samp({q(m)}) AS {q(m + ':sd')}, count({q(m)}) AS {q(m + ':n')}"
        for m in metrics
    ]
    sql = f"SELECT {select}{', ' if parts and select else ''}{', '.join(parts)} FROM results WHERE status = 'ok'"
    if select:
        sql += f" GROUP BY {select} ORDER BY {select}"
    cur = con.execute(sql)
    names = [d[0] for d in cur.description]
    rows = []
    for values in cur.fetchall():
        row = dict(zip(names, values))
        out = {g: row[g] for g in group}
        for m in metrics:
            n = row[m + ":n"]
            if not n:
                continue
            sd = row[m + ":sd"]
            ci = t_quantile_975(n - 1) * sd / math.sqrt(n) if n > 1 and sd is not None else None
            out[m] = {"mean": row[m + ":mean"], "sd": sd, "ci95": ci, "n": n}
        rows.append(out)
    return keys, rows


def long_summary(directory: str | Path) -> list[dict[str, Any]]:
    """:func:`aggregate` with one row per group and metric: the swept values, test, name,
    from, to, then ``metric``, ``unit``, ``mean``, ``sd``, ``ci95``, ``n``."""
    _, rows = aggregate(directory)
    out = []
    for row in rows:
        head = {k: v for k, v in row.items() if not isinstance(v, dict)}
        for k, v in row.items():
            if isinstance(v, dict):
                out.append(dict(head, metric=k, unit=unit_of(k), **v))
    return out


_SAFE = re.compile(r"[^A-Za-z0-9._-]+")


def write_figures(directory: str | Path, out: str | Path) -> list[Path]:
    """One figure per swept key and metric: the metric's mean against the key, a line
    per (other swept values, test, flow), error bars of the 95 % confidence interval.
    PNG files in ``out``; returns their paths."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    keys, rows = aggregate(directory)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    metrics: list[str] = []
    for row in rows:
        for k, v in row.items():
            if isinstance(v, dict) and k not in metrics:
                metrics.append(k)
    written: list[Path] = []
    for key in keys:
        xs = [r.get(key) for r in rows]
        if not any(isinstance(x, (int, float)) and not isinstance(x, bool) for x in xs):
            numeric_x = False
        else:
            numeric_x = all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in xs if x is not None)
        for metric in metrics:
            lines: dict[str, list[tuple[Any, float, float]]] = {}
            for r in rows:
                cell = r.get(metric)
                if not isinstance(cell, dict) or cell["mean"] is None:
                    continue
                label = ", ".join(
                    [f"{k} = {r.get(k)}" for k in keys if k != key]
                    + [str(r.get("name") or r.get("test") or "")]
                    + ([f"{r.get('from')}→{r.get('to')}"] if r.get("from") else [])
                )
                lines.setdefault(label, []).append((r.get(key), cell["mean"], cell["ci95"] or 0.0))
            if not lines:
                continue
            fig, ax = plt.subplots(figsize=(6.4, 4.0))
            for label, pts in list(lines.items())[:12]:
                pts.sort(key=lambda p: (p[0] is None, p[0] if numeric_x else str(p[0])))
                x = [p[0] if numeric_x else str(p[0]) for p in pts]
                ax.errorbar(x, [p[1] for p in pts], yerr=[p[2] for p in pts], marker="o", capsize=3, label=label)
            unit = unit_of(metric)
            ax.set_xlabel(key)
            ax.set_ylabel(f"{metric}" + (f" ({unit})" if unit else ""))
            ax.set_title(f"{metric} against {key} (mean, 95 % CI)", fontsize=9)
            if len(lines) > 1:
                ax.legend(fontsize=6)
            fig.tight_layout()
            path = out / f"{_SAFE.sub('_', key)}__{_SAFE.sub('_', metric)}.png"
            fig.savefig(path, dpi=100)
            plt.close(fig)
            written.append(path)
    return written


def iter_point_files(directory: str | Path) -> Iterable[Path]:
    store = ResultsStore(directory)
    return sorted(store.points.glob("*.parquet")) if store.points.is_dir() else []


__all__ = [
    "ResultsStore",
    "point_id",
    "network_digest",
    "sweep_id",
    "unit_of",
    "query",
    "aggregate",
    "long_summary",
    "metric_columns",
    "write_figures",
    "t_quantile_975",
    "connect",
    "swept_keys",
]
