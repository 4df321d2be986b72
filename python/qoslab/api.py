"""qoslab's Python API: the same checks and numbers as the command line, for scripts and
notebooks.

- :func:`load` / :func:`loads`: a scenario from a file or a text, validated;
  :class:`~qoslab.scenario.Scenario` built in code is validated the same way.
- :func:`run`: every test of a scenario (every point of its ``[sweep]``) on a backend,
  returning :class:`Results`: the records (one per measured point, the numbers the
  terminal tables print), ``to_arrow()``, ``to_pandas()``, and the capture files.
- :func:`mtu`: the per-layer analysis of a stack, as ``qoslab mtu`` prints it.

Every metric is defined in docs/metrics.md. Bad input raises
:class:`~qoslab.errors.InputError` with the place, as the CLI prints it before exiting 2.

>>> import qoslab
>>> sc = qoslab.Scenario(
...     scenario={"name": "two hosts", "seed": 1},
...     node={"a": {"role": "host", "address": "10.0.0.1/24"}, "b": {"role": "host", "address": "10.0.0.2/24"}},
...     link=[{"type": "ethernet", "rate": "10 Mbps", "ends": ["a", "b"]}],
...     test=[{"method": "ping", "from": "a", "to": "b", "count": 3}],
... )
>>> results = qoslab.run(sc)
>>> [r["metrics"]["loss_pct"] for r in results.records]
[0.0]
>>> qoslab.mtu("ethernet/ipv4/tcp").tcp_mss
1460
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from qoslab.errors import InputError, Problem

if TYPE_CHECKING:
    import pyarrow

    from qoslab.analysis.mtu import MtuReport
    from qoslab.scenario import Scenario
    from qoslab.sweep import PointResult

BACKENDS = ("sim",)
"""The backends :func:`run` drives. The emulator on Linux network namespaces (issue 17)
will be ``"emu"``."""


def load(path: str | Path) -> Scenario:
    """A scenario file, read and validated.

    Raises :class:`~qoslab.errors.InputError` with every problem, each with file, line,
    column, key path, what was expected and what was found.

    >>> load("no/such.toml")
    Traceback (most recent call last):
    ...
    qoslab.errors.InputError: no/such.toml: cannot read the scenario: no such file
    """
    from qoslab.scenario import load_scenario

    return load_scenario(path)


def loads(text: str, source: str = "<string>") -> Scenario:
    """A scenario from TOML text, validated as a file is (``source`` names it in messages).

    >>> sc = loads('[scenario]\\nname = "x"\\n[node.a]\\nrole = "host"\\n')
    >>> list(sc.node)
    ['a']
    """
    from qoslab.scenario import loads_scenario

    return loads_scenario(text, source)


@dataclass
class Results:
    """What :func:`run` measured: one record per measured point, as ``qoslab run --json``
    prints them in ``results`` and the terminal tables show them.

    Each record is ``{"test", "name", "from", "to", "parameters": {…}, "metrics": {…}}``;
    metric names carry their units (``throughput_mbps``, ``latency_ms``, ``loss_pct``),
    each defined in docs/metrics.md. A sweep's records carry ``point`` and ``sweep``.
    """

    scenario: Scenario
    seed: int
    records: list[dict[str, Any]]
    points: list[PointResult] = field(repr=False)
    pcap_files: list[Path] = field(default_factory=list)
    """The capture files written (``run(..., pcap=DIR)``), in order."""

    def rows(self) -> list[dict[str, Any]]:
        """The records as flat rows: the test's fields, then every parameter and metric
        under its own name (the columns of ``--report``'s records.csv)."""
        from qoslab.report.tables import tidy

        return tidy(self.records)

    def to_arrow(self) -> pyarrow.Table:
        """The rows as an Arrow table (pyarrow, a dependency of qoslab)."""
        import pyarrow as pa

        return pa.Table.from_pylist(self.rows())

    def to_pandas(self) -> Any:
        """The rows as a pandas DataFrame. pandas is optional: ``pip install pandas``."""
        try:
            import pandas  # noqa: F401
        except ImportError:
            raise ImportError(
                "Results.to_pandas() needs pandas, which qoslab does not install: pip install pandas (or use to_arrow())"
            ) from None
        return self.to_arrow().to_pandas()

    def print(self, console: Any = None) -> None:
        """The terminal tables of ``qoslab run`` (to ``console``, a rich Console; stderr
        by default)."""
        from rich.console import Console

        from qoslab.report.terminal import render_test_run

        console = console or Console(stderr=True, highlight=False)
        for p in self.points:
            for r in p.runs:
                render_test_run(console, p.network, r)


def run(
    scenario: Scenario | str | Path,
    *,
    seed: int | None = None,
    backend: str = "sim",
    pcap: str | Path | None = None,
    jobs: int | None = None,
    max_events: int | None = None,
) -> Results:
    """Run every test of ``scenario`` (a :class:`~qoslab.scenario.Scenario`, or a path to
    a scenario file), at every point of its ``[sweep]``, and return the :class:`Results`.

    ``seed`` replaces the scenario's seed; ``pcap`` names a directory to write captures
    into (as ``--pcap``); ``jobs`` the sweep's points run at once (all cores by default);
    ``max_events`` the budget each simulation is checked against before it starts (as
    ``--max-events``). Refusals are those of ``qoslab check`` and ``qoslab run``.

    >>> run(loads('[scenario]\\nname = "x"\\n[node.a]\\nrole = "host"\\n'), backend="ns-3")
    Traceback (most recent call last):
    ...
    qoslab.errors.InputError: run(): backend: unknown backend
        expected: one of 'sim'
        found:    'ns-3'
    """
    from qoslab.places import output_dir
    from qoslab.sweep import run_sweep

    if backend not in BACKENDS:
        raise InputError(
            "run()",
            [
                Problem(
                    "unknown backend",
                    key="backend",
                    expected="one of " + ", ".join(repr(b) for b in BACKENDS),
                    found=repr(backend),
                )
            ],
        )
    source: str | Path | None = None
    if isinstance(scenario, (str, Path)):
        source = scenario
        scenario = load(scenario)
    if pcap is not None:
        output_dir(Path(pcap), "pcap")
    points = run_sweep(scenario, source=source, seed=seed, jobs=jobs, pcap_dir=pcap, max_events=max_events)
    records = [rec for p in points for rec in p.records()]
    files = sorted(Path(pcap).rglob("*.pcap")) if pcap is not None else []
    return Results(scenario, scenario.scenario.seed if seed is None else seed, records, points, files)


def mtu(stack: str, *, size: int | None = None, count_fcs: bool = False, pcap: str | Path | None = None) -> MtuReport:
    """The analysis ``qoslab mtu STACK`` prints: each layer's overhead, the MTU of every
    interface, the TCP MSS, the largest UDP payload, wire efficiency, and with ``size``
    the wire cost of one datagram of that many bytes at the innermost IP layer.

    >>> report = mtu("ethernet/ipv4/udp/openvpn(cipher=none,auth=sha1)/ethernet/pppoe/ipv4/tcp")
    >>> report.mtu, report.tcp_mss
    (1426, 1386)
    >>> [i.mtu for i in report.interfaces][-1] == report.mtu
    True
    """
    from qoslab.analysis.mtu import analyse

    return analyse(stack, count_fcs=count_fcs, size=size, pcap=pcap)


__all__ = ["load", "loads", "run", "mtu", "Results", "BACKENDS"]
