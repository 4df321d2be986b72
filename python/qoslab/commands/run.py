"""``qoslab run``: every test of a scenario (at every point of its sweep), the tables on
stderr, the records as JSON and an HTML report."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.text import Text

from qoslab.commands.common import (
    MaxEventsOption,
    MaxMemoryOption,
    PcapMaxSizeOption,
    PcapSnaplenOption,
    ScenarioFile,
    SeedOption,
    emit_json,
    interrupted,
    pcap_options_need_pcap,
    say_capture_cut,
    sim_failed,
    stderr,
)
from qoslab.commands.emu import Backend, BackendOption, EmuLinks, EmuLinksOption
from qoslab.output_schema import stamp

if TYPE_CHECKING:
    from qoslab.scenario.model import Scenario
    from qoslab.sweep import PointResult


_JsonOption = Annotated[
    bool, typer.Option("--json", help="Print the records of every measured point as JSON on stdout.")
]
_PcapOption = Annotated[
    Path | None,
    typer.Option(
        "--pcap", help="Write every port's frames as pcap files under this directory (one subdirectory per test)."
    ),
]
_ReportOption = Annotated[
    Path | None,
    typer.Option(
        "--report",
        help="Also write DIR/report.html (set-up, a figure per test, the records), figures and the records as CSV/Parquet/JSON.",
    ),
]
_JobsOption = Annotated[
    int | None, typer.Option("--jobs", "-j", min=1, help="Sweep points run at once; default: one per local core.")
]
_DetailOption = Annotated[
    bool, typer.Option("--detail", help="With a [sweep], print every point's full tables, not only the sweep table.")
]


def run(
    file: ScenarioFile,
    json_out: _JsonOption = False,
    pcap: _PcapOption = None,
    seed: SeedOption = None,
    report: _ReportOption = None,
    jobs: _JobsOption = None,
    detail: _DetailOption = False,
    max_events: MaxEventsOption = None,
    max_memory: MaxMemoryOption = None,
    pcap_snaplen: PcapSnaplenOption = None,
    pcap_max_size: PcapMaxSizeOption = None,
    backend: BackendOption = Backend.sim,
    emu_links: EmuLinksOption = None,
) -> None:
    """Simulate the scenario's tests, each in a fresh run, and summarise what they measured.

    Per test: each flow's sent/received/lost, throughput, latency and jitter; each
    link's utilisation or airtime; each node's CPU (also over the test's traffic where
    the method measures that: `cpu_util_test_pct`) and its IPsec tunnels' packet and
    byte counts; drops with their reasons; the ARP, L3F and bridge tables at the end.
    With `--json`, stdout gets
    `{"scenario", "backend": "sim", "seed", "results": [...], "nodes": [...]}`, one
    record per measured point. Exit 1 if a simulation failed, 2 on bad input.

    Every metric printed (goodput, throughput, loss, latency, jitter, RTT, drained and
    late datagrams, link use, CPU busy, drops) is defined in docs/metrics.md: what is
    counted, between which instants, at which layer, in which unit (SI prefixes: 1 Mb/s
    = 10^6 bit/s, 1 MB = 10^6 B).

    A `[sweep]` runs every point (on every local core, `--jobs` to change) and prints one
    table with a row per point and test; each record then carries `point` and `sweep`
    (the point's values). Every point uses the same seed.

    Example: `qoslab run examples/seed000_ics.toml --json > ics.json`

    Example: `qoslab run examples/seed004_asymmetric.toml --jobs 2`

    Example: `qoslab run examples/seed000_fig9.toml --report fig9/`

    `--backend emu` builds the scenario out of network namespaces on this Linux machine
    (root) and measures ping, udp.flow, tcp.bulk, tcp.transfer and udp.echo with iputils
    ping, iperf3 and qoslab's own ttcp and UDP echo; the
    records carry `backend`, `kernel` and `link_implementation` (docs/architecture.md,
    "The emulation backend"). Its links run through the link emulator (the scenario's
    rate, delay, loss, queue limits; `--emu-links direct`: plain veth pairs, no link
    model); the run prints which. `--seed` there picks the link emulator's loss streams. `qoslab emu clean` removes what a killed run left.

    Example: `sudo qoslab run my-lab.toml --backend emu --json`
    """
    sim_only = {
        "--pcap": pcap,
        "--report": report,
        "--jobs": jobs,
        "--detail": detail,
        "--max-events": max_events,
        "--max-memory": max_memory,
        "--pcap-snaplen": pcap_snaplen,
        "--pcap-max-size": pcap_max_size,
    }
    if _ran_on_emu(file, backend, json_out=json_out, emu_links=emu_links, seed=seed, sim_only=sim_only):
        return
    _run_on_sim(
        file,
        seed=seed,
        json_out=json_out,
        pcap=pcap,
        report=report,
        jobs=jobs,
        detail=detail,
        max_events=max_events,
        max_memory=max_memory,
        pcap_snaplen=pcap_snaplen,
        pcap_max_size=pcap_max_size,
    )


def _run_on_sim(
    file: Path,
    *,
    seed: int | None,
    json_out: bool,
    pcap: Path | None,
    report: Path | None,
    jobs: int | None,
    detail: bool,
    max_events: int | None,
    max_memory: int | None,
    pcap_snaplen: int | None,
    pcap_max_size: int | None,
) -> None:
    """`qoslab run` on the simulator: every point and test, its tables, report and JSON."""
    from qoslab.backends.sim import SimulationError
    from qoslab.report.terminal import sweep_table

    scenario = _load(file, pcap=pcap, report=report, pcap_snaplen=pcap_snaplen, pcap_max_size=pcap_max_size)
    swept = scenario.sweep is not None and bool(scenario.sweep.values)
    try:
        points = _run_points(
            scenario,
            file,
            seed=seed,
            jobs=jobs,
            pcap=pcap,
            show=_PointPrinter(swept=swept, detail=detail),
            max_events=max_events,
            max_memory=max_memory,
            pcap_snaplen=pcap_snaplen,
            pcap_max_size=pcap_max_size,
        )
    except SimulationError as err:
        sim_failed(err)
    except KeyboardInterrupt:
        interrupted("stopped (Ctrl-C).")
    records = [rec for p in points for rec in p.records()]
    if swept:
        stderr.print(sweep_table(records))
    _write_outputs(scenario, file, seed, records, points, report=report, json_out=json_out)


def _write_outputs(
    scenario: Scenario,
    file: Path,
    seed: int | None,
    records: list[dict[str, Any]],
    points: list[PointResult],
    *,
    report: Path | None,
    json_out: bool,
) -> None:
    """The run's HTML report (`--report`) and its JSON on stdout (`--json`), from the
    same records the terminal printed."""
    if report is not None:
        from qoslab.report.html import write_run_report

        page = write_run_report(scenario, file, records, report)
        stderr.print(f"report: {page}")
    if json_out:
        emit_json(_run_json(scenario, file, seed, records, points))


def _ran_on_emu(
    file: Path,
    backend: Backend,
    *,
    json_out: bool,
    emu_links: EmuLinks | None,
    seed: int | None,
    sim_only: dict[str, Any],
) -> bool:
    """Runs the scenario on the emulation backend if `--backend emu` asks for it (the
    simulator's own options refused there), and says whether it did; `--emu-links`
    without it is refused."""
    if backend is Backend.emu:
        from qoslab.commands.emu import refuse_sim_options, run_emu

        refuse_sim_options(sim_only)
        run_emu(file, json_out=json_out, links=emu_links, seed=seed)
        return True
    if emu_links is not None:
        from qoslab.errors import InputError, Problem

        raise InputError(
            "--emu-links",
            [Problem("--emu-links applies to --backend emu", expected="--backend emu", found="--backend sim")],
        )
    return False


def _load(
    file: Path, *, pcap: Path | None, report: Path | None, pcap_snaplen: int | None, pcap_max_size: int | None
) -> Scenario:
    """The scenario, once the options and the output places are known to be usable."""
    from qoslab.places import output_dir
    from qoslab.scenario import load_scenario

    pcap_options_need_pcap(pcap, pcap_snaplen, pcap_max_size)
    scenario = load_scenario(file)
    if pcap is not None:
        output_dir(pcap, "--pcap")
    if report is not None:
        output_dir(report, "--report")
    return scenario


def _run_json(
    scenario: Scenario, file: Path, seed: int | None, records: list[dict[str, Any]], points: list[PointResult]
) -> dict[str, Any]:
    """``run --json``'s output (output_schema.py, "run"): the records and every node's end state."""
    return stamp(
        "run",
        {
            "scenario": scenario.scenario.name,
            "file": str(file),
            "backend": "sim",
            "seed": scenario.scenario.seed if seed is None else seed,
            "results": records,
            "nodes": [node for p in points for node in _node_records(p)],
        },
    )


class _PointPrinter:
    """What ``run`` prints as each point finishes: every test's tables, or with a
    ``[sweep]`` one line per point (and the tables too with ``--detail``)."""

    def __init__(self, *, swept: bool, detail: bool) -> None:
        self.swept = swept
        self.detail = detail

    def __call__(self, result: PointResult, total: int) -> None:
        from qoslab.report.terminal import render_test_run

        point, net = result.point, result.network
        if self.swept:
            rep = f" (replication {result.replication})" if result.replication is not None else ""
            stderr.print(Text(f"point {point.index + 1}/{total}: ", style="bold") + Text(point.label() + rep))
            if not self.detail:
                for test_run in result.runs:
                    say_capture_cut(test_run.results)
                return
        for test_run in result.runs:
            render_test_run(stderr, net, test_run)
            say_capture_cut(test_run.results)


def _run_points(
    scenario: Scenario,
    file: Path,
    *,
    seed: int | None,
    jobs: int | None,
    pcap: Path | None,
    show: Callable[[PointResult, int], None],
    max_events: int | None,
    max_memory: int | None,
    pcap_snaplen: int | None,
    pcap_max_size: int | None,
) -> list[PointResult]:
    """Every point of the scenario, behind a spinner that names the simulation running."""
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    from qoslab.sweep import run_sweep

    with Progress(
        SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(), console=stderr, transient=True
    ) as progress:
        task = progress.add_task("starting", total=None)
        return run_sweep(
            scenario,
            source=file,
            seed=seed,
            jobs=jobs,
            pcap_dir=pcap,
            on_point=show,
            on_trial=lambda words: progress.update(task, description=words),
            max_events=max_events,
            max_memory=max_memory,
            pcap_snaplen=pcap_snaplen,
            pcap_max_size=pcap_max_size,
        )


def _node_records(p: PointResult) -> list[dict[str, Any]]:
    """``--json``'s ``nodes``: each node of each test run at point ``p``, its role, CPU
    and tables as the core returned them at the end of the run."""
    from qoslab.methods.common import bridge_rows, sa_row, table_rows

    net = p.network
    nodes: list[dict[str, Any]] = []
    for r in p.runs:
        for n in r.results.nodes:
            cfg = next((c for c in net.config.nodes if c.name == n.name), None)
            window = n.cpu_utilization_window
            node = {
                "test": r.label,
                "name": n.name,
                "role": cfg.role.value if cfg else None,
                "cpu_profile": cfg.cpu.profile if cfg else None,
                "cpu_util_pct": round(100.0 * float(n.cpu_utilization), 3),
                "cpu_util_test_pct": None if window is None else round(100.0 * float(window), 3),
                "ipsec": [sa_row(sa) for sa in n.ipsec],
                "arp_table": table_rows(n.arp_table),
                "l3f_table": table_rows(n.l3f_table),
                "bridge_table": bridge_rows(n.bridge_table),
                "drops": dict(n.drops),
            }
            if p.point.values:
                node["point"] = p.point.index
            nodes.append(node)
    return nodes
