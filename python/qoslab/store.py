"""The results store of a sweep: Parquet part files of finished points, queried with DuckDB.

``qoslab sweep FILE --out DIR`` hands every finished point to one writer, which appends
the points that finished within :data:`BATCH_S` (or :data:`BATCH_POINTS` of them, or
all that are left when the sweep ends or is stopped) to a new part file
``DIR/points/part-<time>-<pid>-<random>.parquet``: one row per record, each row carrying
its point's coordinates, a failed point one row with its error. Each part is written
under a temporary name in the same directory and renamed into place (``os.replace``,
atomic on POSIX), so a crash of the process, Ctrl-C or a lost worker leaves either the
whole part or none: a point is acknowledged (counted done, shown in the progress) only
once its part is renamed, and an acknowledged point is never lost nor half-written. A
crash loses at most the points finished in the last :data:`BATCH_S`, which were not
acknowledged; running the same command again reads the point ids of every part and
computes only the points missing there (failed points are run again).

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
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

STORE_FORMAT = "qoslab-results/2"
"""Written in every file's schema metadata, so a reader knows the layout: /2 is a part
file of many points; /1 (one file per point, ``<point_id>.parquet``) is read alike."""

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


BATCH_S = 0.1
"""A part file holds the points that finished within this many seconds of the first of
them: what a crash of the sweep's own process may lose (those points were not yet
acknowledged, and are computed again by the next run). 0.1 s keeps that loss small and
makes a part of a few to a few hundred short points, so the Parquet write (some 4 ms,
whatever its number of rows) is shared by them."""

BATCH_POINTS = 256
"""A part file holds at most this many points: a part of very short points is written
before :data:`BATCH_S` is up, so that one file's rows stay few enough to build at once."""

PointRow = tuple[dict[str, Any], list[dict[str, Any]] | None, str | None]
"""One finished point as the store takes it: its coordinates (sweep_id, point_id, point,
replication, seed, swept, written, wall_s), its records, and its error (None if it ran)."""


class ResultsStore:
    """``DIR/points/*.parquet``: part files of finished points (see the module's doc).

    Part files are never changed once renamed into place, so the ids each holds are
    read once per store object (:meth:`index`)."""

    def __init__(self, directory: str | Path) -> None:
        self.directory = Path(directory)
        self.points = self.directory / "points"
        self._seen: dict[str, list[tuple[str, str]]] = {}

    def create(self) -> None:
        self.points.mkdir(parents=True, exist_ok=True)

    def index(self) -> dict[str, str]:
        """Point id -> its status in the store: "ok" if any part holds it finished
        without error, else "failed" (its last run failed)."""
        import pyarrow.parquet as pq

        out: dict[str, str] = {}
        for path in iter_point_files(self.directory):
            ids = self._seen.get(path.name)
            if ids is None:
                if not _whole(path):
                    continue
                cols = pq.read_table(path, columns=["point_id", "status"])
                ids = list(dict.fromkeys(zip(cols.column(0).to_pylist(), cols.column(1).to_pylist())))
                self._seen[path.name] = ids
            for pid, status in ids:
                if out.get(pid) != "ok":
                    out[pid] = status
        return out

    def done(self) -> set[str]:
        """Ids of the points finished without error."""
        return {pid for pid, status in self.index().items() if status == "ok"}

    def failed(self) -> set[str]:
        """Ids of the points whose last run failed (and that no part holds finished)."""
        return {pid for pid, status in self.index().items() if status != "ok"}

    def write(
        self,
        coords: dict[str, Any],
        records: list[dict[str, Any]] | None,
        error: str | None = None,
        swept_units: dict[str, str] | None = None,
    ) -> list[Path]:
        """Write one point at once as a part of its own (:meth:`write_points`)."""
        return self.write_points([(coords, records, error)], swept_units)

    def write_points(self, points: list[PointRow], swept_units: dict[str, str] | None = None) -> list[Path]:
        """Append finished points to the store: their records (or their errors), each row
        carrying its point's coordinates, in one new part file (one per shape of rows,
        when points' records have columns of different types). Atomic: each part is
        written under a temporary name and renamed into place; when this returns, every
        point given is in the store."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        if not points:
            return []
        whole = points_table(points, swept_units or {})
        if whole is not None:
            tables = [whole]
        else:
            # A column typed differently by two points (a struct in one, text in the other):
            # a part per schema, which DuckDB's union_by_name reads together.
            by_schema: dict[Any, list[Any]] = {}
            for coords, records, error in points:
                t = point_table(coords, records, error, swept_units or {})
                by_schema.setdefault(tuple((f.name, str(f.type)) for f in t.schema), []).append(t)
            tables = [pa.concat_tables(ts) for ts in by_schema.values()]
        written: list[Path] = []
        for table in tables:
            name = f"part-{time.time_ns():020d}-{os.getpid()}-{uuid.uuid4().hex[:12]}.parquet"
            final = self.points / name
            tmp = self.points / f".{name}.tmp"
            try:
                # No fsync: the file is whole in the kernel once written, which is what a
                # crash of this process, Ctrl-C or a lost worker need; an fsync per part
                # would cost more than a short simulation (docs/results-store.md says
                # what an operating-system crash may lose).
                pq.write_table(table, tmp)
                os.replace(tmp, final)
            finally:
                if tmp.exists():
                    tmp.unlink()
            written.append(final)
        return written

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
    table = points_table([(coords, records, error)], swept_units)
    assert table is not None  # one point's cells always make a table
    return table


def points_table(points: list[PointRow], swept_units: dict[str, str]) -> Any:
    """The Arrow table of several points: one row per record of each (one row with the
    error for a point that failed), the columns the union of theirs (null where a point
    has none). None when two points give one column cells of different types (a struct
    in one, a number in another; int with float is float): each is then a table of its
    own (:func:`point_table`), whose mixed cells become text as they would alone."""
    import pyarrow as pa

    rows: list[dict[str, Any]] = []
    owner: list[int] = []
    metric_names: dict[str, None] = {}
    swept_names: dict[str, None] = {}
    written_keys: dict[str, None] = {}
    for n, (coords, records, error) in enumerate(points):
        base = {k: coords.get(k) for k in ("sweep_id", "point_id", "point", "replication", "seed")}
        base["status"] = "ok" if error is None else "failed"
        base["error"] = error
        base["wall_s"] = coords.get("wall_s")
        swept: dict[str, Any] = coords.get("swept", {})
        written: dict[str, Any] = coords.get("written", {})
        swept_names.update(dict.fromkeys(swept))
        written_keys.update(dict.fromkeys(written))
        for rec in records or []:
            for key in rec.get("metrics") or {}:
                metric_names.setdefault(
                    f"metrics.{key}" if key in ("test", "name", "from", "to") or key in _FIXED else key, None
                )
        written_cells = {k: (v if isinstance(v, str) else canonical(v)) for k, v in written.items()} or None
        for rec in (records or [{}]) if error is None else [{}]:
            row = dict(base)
            row.update(swept)
            row["written"] = written_cells
            row.update({k: v for k, v in _flatten(rec).items() if k not in row} if rec else {})
            rows.append(row)
            owner.append(n)
    names: dict[str, None] = {}
    for row in rows:
        names.update(dict.fromkeys(row))
    fields, arrays = [], []
    for name in names:
        if name == "seed":
            typ, values = pa.uint64(), [row.get(name) for row in rows]
        elif name in ("point", "replication"):
            typ, values = pa.int64(), [row.get(name) for row in rows]
        elif name == "written":
            keys = list(written_keys)
            typ = pa.struct([pa.field(k, pa.string()) for k in keys]) if keys else pa.null()
            values = [row.get(name) for row in rows] if keys else [None] * len(rows)
        else:
            cells = [_arrow_value(row.get(name)) for row in rows]
            if len(points) > 1:
                kinds: dict[Any, set[int]] = {}
                for (t, _), n in zip(cells, owner):
                    if t != pa.null():
                        kinds.setdefault(t, set()).add(n)
                if len(kinds) > 1 and not set(kinds) <= {pa.int64(), pa.float64()}:
                    return None
            typ, values = _column(name, cells)
        if name in _FIXED:
            unit, doc = _FIXED[name]
        else:
            unit = swept_units.get(name, unit_of(name))
            doc = (
                "swept: the value the scenario has at this key, in SI units"
                if name in swept_names
                else "docs/metrics.md"
            )
        meta = {b"unit": unit.encode(), b"doc": doc.encode()}
        fields.append(pa.field(name, typ, metadata=meta))
        arrays.append(pa.array(values, type=typ))
    schema = pa.schema(
        fields,
        metadata={
            b"format": STORE_FORMAT.encode(),
            b"swept": canonical(list(swept_names)).encode(),
            b"metrics": canonical(list(metric_names)).encode(),
        },
    )
    return pa.Table.from_arrays(arrays, schema=schema)


# --------------------------------------------------------------------------- queries


def connect(directory: str | Path) -> Any:
    """A DuckDB connection with the view ``results`` over every part file of ``directory``
    (``union_by_name``: points whose records have other columns still line up; a column
    a point lacks is null). Each point's rows come from one part: the first holding it
    finished, else (it failed every time) the last holding its failure."""
    import duckdb

    con = duckdb.connect()
    files = [f for f in iter_point_files(directory) if _whole(f)]
    if files:
        listing = "[" + ", ".join("'" + str(f).replace("'", "''") + "'" for f in files) + "]"
        # Part names sort in the order they were written (part-<time_ns>-...).
        con.execute(
            f"CREATE VIEW qoslab_rows AS SELECT * FROM read_parquet({listing}, union_by_name = true, filename = 'qoslab_part')"
        )
        con.execute(
            "CREATE VIEW qoslab_chosen AS SELECT point_id AS qoslab_point, coalesce(min(qoslab_part) FILTER (WHERE status = 'ok'), max(qoslab_part)) AS qoslab_from FROM qoslab_rows GROUP BY point_id"
        )
        con.execute(
            "CREATE VIEW results AS SELECT r.* EXCLUDE (qoslab_part) FROM qoslab_rows AS r JOIN qoslab_chosen AS c ON r.point_id = c.qoslab_point AND r.qoslab_part = c.qoslab_from"
        )
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

    def q(n: str) -> str:
        return '"' + n.replace('"', '""') + '"'

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


def failed_points(directory: str | Path) -> list[dict[str, Any]]:
    """The points whose last run failed (none holds them finished): point, replication,
    seed, point_id, written (each swept value as written) and error, in sweep order."""
    con = connect(directory)
    try:
        cur = con.execute(
            "SELECT point, replication, seed, point_id, written, error FROM results WHERE status = 'failed' ORDER BY point, replication"
        )
    except Exception:  # noqa: BLE001 - no part yet, or no `written` column (a sweep of no key)
        try:
            cur = con.execute(
                "SELECT point, replication, seed, point_id, NULL AS written, error FROM results WHERE status = 'failed' ORDER BY point, replication"
            )
        except Exception:  # noqa: BLE001 - no part at all
            return []
    names = [d[0] for d in cur.description]
    return [dict(zip(names, row)) for row in cur.fetchall()]


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


def sweep_figures(directory: str | Path) -> Iterator[tuple[str, str, Any]]:
    """One matplotlib figure per swept key and metric: the metric's mean against the
    key, a line per (other swept values, test, flow), error bars of the 95 % confidence
    interval over replications. Yields (key, metric, figure); the caller saves and
    closes each."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    keys, rows = aggregate(directory)
    metrics: list[str] = []
    for row in rows:
        for k, v in row.items():
            if isinstance(v, dict) and k not in metrics:
                metrics.append(k)
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
            yield key, metric, fig


def figure_name(key: str, metric: str) -> str:
    """The file name (without suffix) of the figure of ``metric`` against ``key``.

    >>> figure_name("test[0].payload", "loss_pct")
    'test_0_.payload__loss_pct'
    """
    return f"{_SAFE.sub('_', key)}__{_SAFE.sub('_', metric)}"


def write_figures(directory: str | Path, out: str | Path) -> list[Path]:
    """:func:`sweep_figures` as PNG files in ``out``; returns their paths."""
    import matplotlib.pyplot as plt

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    for key, metric, fig in sweep_figures(directory):
        path = out / f"{figure_name(key, metric)}.png"
        fig.savefig(path, dpi=100)
        plt.close(fig)
        written.append(path)
    return written


def iter_point_files(directory: str | Path) -> list[Path]:
    """Every Parquet file of the store, in name order (parts in the order written)."""
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
    "sweep_figures",
    "figure_name",
    "failed_points",
    "t_quantile_975",
    "connect",
    "swept_keys",
]
