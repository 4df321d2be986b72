"""The ``qoslab`` command.

Human output goes to stderr through rich; with ``--json`` the machine-readable record
goes to stdout (../DESIGN.md, "Machine-readable output"). Exit codes: 0 success, 1 a
measurement failed, 2 bad input (a message, never a traceback).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer
from rich.console import Console
from rich.text import Text

from qoslab import __version__
from qoslab.bench import ALL_BENCHMARKS, DEFAULT_REPEAT
from qoslab.errors import InputError
from qoslab.output_schema import VERSIONS as OUTPUT_VERSIONS
from qoslab.output_schema import stamp

# Wide tables (a sweep's) stay whole when stderr is a file or a pipe: rich would assume 80 columns.
stderr = Console(stderr=True, highlight=False, width=None if sys.stderr.isatty() else 160)

app = typer.Typer(
    name="qoslab",
    help=(
        "A lab for layered network paths: describe a path in a scenario file, and qoslab "
        "analyses its overheads and MTUs and measures its QoS."
    ),
    epilog=(
        "Examples:\n\n"
        "  qoslab check examples/seed000_l3f.toml\n\n"
        "  qoslab mtu 'ethernet/ipv4/udp/openvpn(cipher=none,auth=sha1)/ethernet/pppoe/ipv4/tcp'\n\n"
        "  qoslab schema > qoslab.schema.json"
    ),
    no_args_is_help=True,
    # --install-completion / --show-completion for bash, zsh, fish and PowerShell (typer's).
    add_completion=True,
    context_settings={"help_option_names": ["-h", "--help"]},
    pretty_exceptions_enable=False,
    rich_markup_mode="markdown",
)


def _print_version(value: bool) -> None:
    if value:
        sys.stdout.write(f"qoslab {__version__}\n")
        raise typer.Exit()


@app.callback()
def _options(
    version: Annotated[
        bool,
        typer.Option(
            "--version", "-V", help="Print qoslab's version and exit.", callback=_print_version, is_eager=True
        ),
    ] = False,
) -> None:
    """A lab for layered network paths: describe a path in a scenario file, and qoslab
    analyses its overheads and MTUs and measures its QoS."""


MAX_EVENTS_HELP = (
    "The most events one simulation may take (default 2e9, about 3-5 minutes); a run estimated above it "
    "is refused before it starts, with the estimate."
)


MAX_MEMORY_HELP = (
    "The most memory one simulation may need, e.g. '8 GB' (default: half of this machine's RAM); a run "
    "estimated above it is refused before it starts, with the estimate."
)
PCAP_SNAPLEN_HELP = (
    "With --pcap: keep at most N bytes of each frame (the pcap snapshot length; default 262144, tcpdump's); "
    "each record still gives the frame's full length."
)
PCAP_MAX_SIZE_HELP = (
    "With --pcap: the most the files of one test may take together, e.g. '500 MB'; the capture stops before "
    "the record that would pass it (the files stay valid) and the records say where. Default: no limit, "
    "but a capture estimated above the free disk space is refused before the run."
)


def _size_option(option: str, minimum: int = 1) -> Any:
    """A typer callback reading a size ('1 GB', '64 KiB', bytes) for ``option``."""

    def parse(value: str | None) -> int | None:
        if value is None:
            return None
        from qoslab.units import UnitError, parse_size

        try:
            size = parse_size(value.strip())
        except (UnitError, ValueError) as err:
            hint = getattr(err, "hint", None)
            raise typer.BadParameter(
                f"{err}; expected a size such as '1 GB' or '500 MB'"
                + (f" ({hint})" if hint else " (SI prefixes; KiB, MiB, GiB also)"),
                param_hint=option,
            ) from None
        if size < minimum:
            raise typer.BadParameter(
                f"{value!r}: at least {minimum} byte{'s' if minimum > 1 else ''}", param_hint=option
            )
        return size

    return parse


def _emit_json(record: object) -> None:
    sys.stdout.write(json.dumps(record, indent=2, sort_keys=False) + "\n")


@app.command()
def version() -> None:
    """Print qoslab's version.

    Example: `qoslab version`
    """
    from qoslab import _core

    stderr.print(f"qoslab {__version__} (core {_core.core_version()}, {_core.core_build()} build)")
    sys.stdout.write(f"{__version__}\n")


examples_app = typer.Typer(
    help="The example scenarios shipped with qoslab: list them, or copy one out to start from.",
    no_args_is_help=False,
    invoke_without_command=True,
)
app.add_typer(examples_app, name="examples")


@examples_app.callback()
def examples_list(ctx: typer.Context) -> None:
    """List the example scenarios shipped with qoslab (name and title).

    Examples:

    `qoslab examples`

    `qoslab examples copy seed000_l3f.toml .`
    """
    if ctx.invoked_subcommand is not None:
        return
    from rich.table import Table

    from qoslab.data import examples

    table = Table("example", "what it shows", box=None, pad_edge=False)
    for name, title in examples.listing():
        table.add_row(name, title)
    stderr.print(table)
    for name, _ in examples.listing():
        sys.stdout.write(name + "\n")


@examples_app.command("copy")
def examples_copy(
    name: Annotated[
        str,
        typer.Argument(
            help="An example's file name (see `qoslab examples`); '.toml' may be left out.", show_default=False
        ),
    ],
    directory: Annotated[Path, typer.Argument(help="Where to write it (made if missing).")] = Path("."),
    force: Annotated[bool, typer.Option("--force", help="Replace a file of the same name.")] = False,
) -> None:
    """Write one example scenario into DIRECTORY, to run or to start from.

    Example: `qoslab examples copy seed000_l3f my-lab/` then `qoslab run my-lab/seed000_l3f.toml`
    """
    from qoslab.data import examples
    from qoslab.places import output_dir

    output_dir(directory, "DIRECTORY")
    path = examples.copy(name, directory, force=force)
    stderr.print(f"wrote {path}")


@app.command()
def check(
    file: Annotated[Path, typer.Argument(help="Scenario file (TOML).", show_default=False)],
    json_out: Annotated[bool, typer.Option("--json", help="Print the validated scenario as JSON on stdout.")] = False,
    max_events: Annotated[int | None, typer.Option("--max-events", min=1, help=MAX_EVENTS_HELP)] = None,
    max_memory: Annotated[
        str | None, typer.Option("--max-memory", callback=_size_option("--max-memory"), help=MAX_MEMORY_HELP)
    ] = None,
    pcap: Annotated[
        Path | None,
        typer.Option("--pcap", help="Also check that `run --pcap DIR` would have room for its captures there."),
    ] = None,
    pcap_snaplen: Annotated[
        int | None, typer.Option("--pcap-snaplen", min=1, max=2**32 - 1, help=PCAP_SNAPLEN_HELP)
    ] = None,
    pcap_max_size: Annotated[
        str | None, typer.Option("--pcap-max-size", callback=_size_option("--pcap-max-size"), help=PCAP_MAX_SIZE_HELP)
    ] = None,
) -> None:
    """Validate a scenario and print its topology as a tree.

    Every problem is reported with file:line:column, the key path, what was expected
    and what was found; the exit code is 2 if there is any.

    Example: `qoslab check examples/seed000_l3f.toml`
    """
    from qoslab.budget import SNAPLEN, PcapOptions
    from qoslab.scenario import load_scenario, topology_tree
    from qoslab.sweep import prepare

    _pcap_options_need_pcap(pcap, pcap_snaplen, pcap_max_size)
    scenario = load_scenario(file)
    # What `run` refuses, `check` refuses first with the same message: the checks
    # qoslab.sweep.run_sweep makes before it runs anything, on every point.
    options = (
        PcapOptions(pcap, SNAPLEN if pcap_snaplen is None else pcap_snaplen, pcap_max_size)
        if pcap is not None
        else None
    )
    prepare(scenario, source=file, max_events=max_events, max_memory=max_memory, pcap=options)  # type: ignore[arg-type]
    stderr.print(topology_tree(scenario))
    if json_out:
        _emit_json(scenario.model_dump(mode="json", by_alias=True, exclude_none=True))


@app.command()
def schema(
    output: Annotated[
        str | None,
        typer.Option(
            "--output",
            help="Print instead the JSON Schema of a command's --json output: " + ", ".join(OUTPUT_VERSIONS) + ".",
        ),
    ] = None,
) -> None:
    """Print the JSON Schema of the scenario language (for editors and validators), or
    with --output that of a command's --json output (each carries "schema": N, the
    version of its shape).

    Examples:

    `qoslab schema > qoslab.schema.json`

    `qoslab schema --output run > run.schema.json`
    """
    from qoslab.errors import Problem
    from qoslab.output_schema import schema as output_schema
    from qoslab.scenario import json_schema

    if output is None:
        _emit_json(json_schema())
        return
    if output not in OUTPUT_VERSIONS:
        raise InputError(
            "qoslab schema",
            [
                Problem(
                    "no such output",
                    key="--output",
                    expected="one of " + ", ".join(OUTPUT_VERSIONS),
                    found=repr(output),
                )
            ],
        )
    _emit_json(output_schema(output))


@app.command()
def mtu(
    stack: Annotated[
        str,
        typer.Argument(
            help="Layers from the physical link inward, separated by '/', each with optional "
            "options in parentheses: ethernet/ipv4/udp/openvpn(cipher=none,auth=sha1)/ethernet/pppoe/ipv4/tcp",
            show_default=False,
        ),
    ],
    size: Annotated[
        int | None,
        typer.Option(
            "--size",
            min=1,
            max=65_535,
            help="Also give the wire cost of one datagram of N bytes at the innermost IP layer (an IPv4 datagram is at most 65,535 bytes, RFC 791 §3.1).",
        ),
    ] = None,
    count_fcs: Annotated[
        bool,
        typer.Option(
            "--count-fcs",
            help="Count a 4-byte FCS in every Ethernet frame carried inside a tunnel, as seed 002 does "
            "(real TAP devices carry no FCS; the default is the precise accounting).",
        ),
    ] = False,
    pcap: Annotated[
        Path | None,
        typer.Option(
            "--pcap",
            help="Write the frames of the --size datagram (or a full-size one) to this pcap file "
            "(stacks over ethernet or wifi); Wireshark opens it.",
        ),
    ] = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print the analysis as JSON on stdout.")] = False,
) -> None:
    """Per-layer overhead, the MTU of every interface, TCP MSS and wire efficiency of a stack.

    Examples:

    `qoslab mtu ethernet/ipv4/tcp`

    `qoslab mtu 'ethernet/ipv4/udp/openvpn(cipher=none,auth=sha1)/ethernet/pppoe/ipv4/tcp' --count-fcs`

    `qoslab mtu 'ethernet/ipv4/esp(mode=transport,cipher=3des-cbc,auth=hmac-sha1-96)/udp'`

    `qoslab mtu atm/aal5/llc-snap/ipv4 --size 9180`

    `qoslab mtu 'serial(8n1)/slip/ipv4/tcp' --size 40`

    `qoslab mtu 'ethernet/pppoe/ipv4/udp' --size 4000 --pcap fragments.pcap`
    """
    from qoslab.analysis.mtu import analyse
    from qoslab.analysis.render import render_mtu
    from qoslab.places import output_file

    if pcap is not None:
        output_file(pcap, "--pcap")
    report = analyse(stack, count_fcs=count_fcs, size=size, pcap=pcap)
    render_mtu(report, stderr)
    if json_out:
        _emit_json(stamp("mtu", report.to_json()))


def _interrupted(message: str) -> NoReturn:
    """Stop at once after Ctrl-C, exit code 130 (128 + SIGINT).

    Simulations still running in the pool's threads are not waited for: Python would
    join them at exit, and a second Ctrl-C during that join ends in a threading
    traceback. Every finished point is already on disk (saved atomically as it
    finished), so nothing is lost by leaving now; a half-run point leaves at most a
    ``.tmp`` file that the next run overwrites.
    """
    import os
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C while we leave is moot
    stderr.print(Text(message, style="yellow"))
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(130)


def _pcap_options_need_pcap(pcap: Path | None, snaplen: int | None, max_size: int | None) -> None:
    """--pcap-snaplen and --pcap-max-size say how to capture: without --pcap they would
    do nothing, which is more likely a mistake than meant."""
    given = [name for name, value in (("--pcap-snaplen", snaplen), ("--pcap-max-size", max_size)) if value is not None]
    if pcap is None and given:
        from qoslab.errors import InputError, Problem

        raise InputError(
            given[0],
            [
                Problem(
                    "applies to a capture, and there is none",
                    expected="--pcap DIR as well",
                    found=f"{given[0]} without --pcap",
                )
            ],
        )


def _say_capture_cut(results: dict) -> None:
    """One line when a run's capture was cut by --pcap-max-size."""
    capture = results.get("capture") or {}
    cut = capture.get("cut")
    if cut:
        from qoslab.budget import describe_bytes

        stderr.print(
            Text("capture cut: ", style="bold yellow")
            + Text(
                f"the files reached --pcap-max-size {describe_bytes(capture['max_bytes'])} at {cut['time_ns'] / 1e9:.9f} s; "
                f"frame {cut['frame']:,} (at {cut['point']}) and those after it are not in them ({capture['frames']:,} frames written)."
            ),
            soft_wrap=True,
        )


def _sim_failed(err: Exception) -> None:
    stderr.print(Text("error: ", style="bold red") + Text(str(err)), soft_wrap=True)
    raise typer.Exit(1)


@app.command()
def run(
    file: Annotated[Path, typer.Argument(help="Scenario file (TOML).", show_default=False)],
    json_out: Annotated[
        bool, typer.Option("--json", help="Print the records of every measured point as JSON on stdout.")
    ] = False,
    pcap: Annotated[
        Path | None,
        typer.Option(
            "--pcap", help="Write every port's frames as pcap files under this directory (one subdirectory per test)."
        ),
    ] = None,
    seed: Annotated[
        int | None,
        typer.Option(
            "--seed", min=0, max=2**64 - 1, help="Seed of the random streams (0 to 2^64 - 1); default: the scenario's."
        ),
    ] = None,
    report: Annotated[
        Path | None,
        typer.Option(
            "--report",
            help="Also write DIR/report.html (set-up, a figure per test, the records), figures and the records as CSV/Parquet/JSON.",
        ),
    ] = None,
    jobs: Annotated[
        int | None, typer.Option("--jobs", "-j", min=1, help="Sweep points run at once; default: one per local core.")
    ] = None,
    detail: Annotated[
        bool,
        typer.Option("--detail", help="With a [sweep], print every point's full tables, not only the sweep table."),
    ] = False,
    max_events: Annotated[int | None, typer.Option("--max-events", min=1, help=MAX_EVENTS_HELP)] = None,
    max_memory: Annotated[
        str | None, typer.Option("--max-memory", callback=_size_option("--max-memory"), help=MAX_MEMORY_HELP)
    ] = None,
    pcap_snaplen: Annotated[
        int | None, typer.Option("--pcap-snaplen", min=1, max=2**32 - 1, help=PCAP_SNAPLEN_HELP)
    ] = None,
    pcap_max_size: Annotated[
        str | None, typer.Option("--pcap-max-size", callback=_size_option("--pcap-max-size"), help=PCAP_MAX_SIZE_HELP)
    ] = None,
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
    """
    from qoslab.backends.sim import SimulationError
    from qoslab.places import output_dir
    from qoslab.report.terminal import render_test_run, sweep_table
    from qoslab.scenario import load_scenario
    from qoslab.sweep import run_sweep

    _pcap_options_need_pcap(pcap, pcap_snaplen, pcap_max_size)
    scenario = load_scenario(file)
    if pcap is not None:
        output_dir(pcap, "--pcap")
    if report is not None:
        output_dir(report, "--report")
    used_seed = scenario.scenario.seed if seed is None else seed
    swept = scenario.sweep is not None and bool(scenario.sweep.values)

    def show(result, total: int) -> None:
        point, net = result.point, result.network
        if swept:
            rep = f" (replication {result.replication})" if result.replication is not None else ""
            stderr.print(Text(f"point {point.index + 1}/{total}: ", style="bold") + Text(point.label() + rep))
            if not detail:
                for run in result.runs:
                    _say_capture_cut(run.results)
                return
        for run in result.runs:
            render_test_run(stderr, net, run)
            _say_capture_cut(run.results)

    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    try:
        with Progress(
            SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(), console=stderr, transient=True
        ) as progress:
            task = progress.add_task("starting", total=None)
            points = run_sweep(
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
            )  # type: ignore[arg-type]
    except SimulationError as err:
        _sim_failed(err)
        return
    except KeyboardInterrupt:
        _interrupted("stopped (Ctrl-C).")
    records = [rec for p in points for rec in p.records()]
    if swept:
        stderr.print(sweep_table(records))
    if report is not None:
        from qoslab.report.html import write_run_report

        page = write_run_report(scenario, file, records, report)
        stderr.print(f"report: {page}")
    if json_out:
        nodes = []
        for p in points:
            net = p.network
            for r in p.runs:
                for n in r.results.get("nodes", []):
                    cfg = next((c for c in net.config["nodes"] if c["name"] == n["name"]), None)
                    node = {
                        "test": r.label,
                        "name": n["name"],
                        "role": cfg["role"] if cfg else None,
                        "cpu_profile": cfg["cpu"]["profile"] if cfg else None,
                        "cpu_util_pct": round(100.0 * float(n.get("cpu_utilization", 0.0)), 3),
                        "cpu_util_test_pct": None
                        if n.get("cpu_utilization_window") is None
                        else round(100.0 * float(n["cpu_utilization_window"]), 3),
                        "ipsec": n.get("ipsec", []),
                        "arp_table": n.get("arp_table", []),
                        "l3f_table": n.get("l3f_table", []),
                        "bridge_table": n.get("bridge_table", []),
                        "drops": n.get("drops", {}),
                    }
                    if p.point.values:
                        node["point"] = p.point.index
                    nodes.append(node)
        _emit_json(
            stamp(
                "run",
                {
                    "scenario": scenario.scenario.name,
                    "file": str(file),
                    "backend": "sim",
                    "seed": used_seed,
                    "results": records,
                    "nodes": nodes,
                },
            )
        )


@app.command()
def sweep(
    file: Annotated[Path, typer.Argument(help="Scenario file (TOML) with a [sweep].", show_default=False)],
    out: Annotated[
        Path,
        typer.Option(
            "--out",
            help="Results store: DIR/points/part-*.parquet, the finished points appended as they finish (docs/results-store.md).",
            show_default=False,
        ),
    ],
    jobs: Annotated[
        int | None,
        typer.Option(
            "--jobs",
            "-j",
            min=1,
            help="Points run at once on this machine, each in a worker process; default: one per local core.",
        ),
    ] = None,
    cluster: Annotated[
        str | None,
        typer.Option(
            "--cluster",
            help="Send the points to the Dask scheduler at tcp://HOST:PORT (default: $QOSLAB_DASK_SCHEDULER; none: this machine).",
        ),
    ] = None,
    seed: Annotated[
        int | None,
        typer.Option("--seed", min=0, max=2**63 - 1, help="Base seed (replication 0's); default: the scenario's."),
    ] = None,
    report: Annotated[
        bool,
        typer.Option(
            "--report",
            help="Also write DIR/report.html (each swept key against each metric, mean with its 95 % confidence interval; the aggregated table; the failed points and their errors), DIR/figures/ and DIR/summary.json.",
        ),
    ] = False,
    progress: Annotated[
        bool | None,
        typer.Option(
            "--progress/--no-progress", help="The progress bar on stderr; default: when stderr is a terminal."
        ),
    ] = None,
    workers: Annotated[
        bool,
        typer.Option(
            "--workers",
            help="Below the progress bar, a live table of the workers: each one's current point, the time on it, points done.",
        ),
    ] = False,
    json_out: Annotated[
        bool, typer.Option("--json", help="Print what ran (points, kept, failed with their errors) as JSON on stdout.")
    ] = False,
    max_events: Annotated[int | None, typer.Option("--max-events", min=1, help=MAX_EVENTS_HELP)] = None,
) -> None:
    """Run every point of a sweep (× its replications) into a results store that loses nothing.

    Finished points are appended to DIR/points/ as they finish (Parquet part files, each
    written atomically; a point counts as done once its part is on disk, so a crash or
    Ctrl-C loses no point counted done); running the same command again computes only the
    points missing there. A point that fails is recorded with its error and the sweep goes
    on. Points run on every local core (`--jobs`), or on an existing Dask cluster
    (`--cluster tcp://HOST:8786` or `QOSLAB_DASK_SCHEDULER`). Query the store with
    `qoslab results DIR "SELECT ..."`.

    Exit codes: 0 every point ran, 1 some failed (how many on stderr), 2 bad input (a
    sweep path naming no key, an empty range, an unreachable scheduler; nothing has
    run), 130 stopped by Ctrl-C (finished points kept).

    Example: `qoslab sweep examples/seed004_asymmetric.toml --out sweep004/`

    Example: `qoslab sweep big.toml --out big/ --cluster tcp://10.0.0.5:8786 --report`
    """
    import os

    from qoslab import sweep_run
    from qoslab.places import output_dir
    from qoslab.scenario import load_scenario
    from qoslab.store import ResultsStore

    scenario = load_scenario(file)
    output_dir(out, "--out")
    planned = sweep_run.plan(scenario, source=file, seed=seed, max_events=max_events)
    address, where = (
        (cluster, "--cluster")
        if cluster
        else (os.environ.get(sweep_run.SCHEDULER_ENV) or None, sweep_run.SCHEDULER_ENV)
    )
    client = sweep_run.connect_cluster(address, where=where) if address else None
    store = ResultsStore(out)
    kept = len(planned.tasks) - len([t for t in planned.tasks if t.point_id not in store.done()])
    show = sys.stderr.isatty() if progress is None else progress
    workers_n = max(1, min(jobs or os.cpu_count() or 1, len(planned.tasks) - kept))
    stderr.print(
        Text(
            f"{len(planned.tasks)} points ({planned.points} × {planned.replications} replication{'s' if planned.replications > 1 else ''})"
            + (f", {kept} already in {out}" if kept else "")
            + (
                f", on the Dask cluster at {address}"
                if client
                else f", on {workers_n} local process{'es' if workers_n > 1 else ''}"
            ),
            style="dim",
        )
    )
    # The local workers are started (forked) before the progress display's thread.
    todo = [t for t in planned.tasks if t.point_id not in store.done()]
    pool = sweep_run.LocalPool(todo, jobs, watch=workers) if client is None and todo else None
    try:
        with sweep_run.SweepProgress(stderr, len(planned.tasks), kept, enabled=show, workers=workers) as bar:
            outcome = sweep_run.run(
                planned, store, jobs=jobs, client=client, on_done=bar.done, status=bar.status, pool=pool
            )
    except KeyboardInterrupt:
        _interrupted(
            f"stopped (Ctrl-C): every finished point is kept in {out}/points; run the same command again to compute only the others."
        )
    finally:
        if client is not None:
            client.close()
    for task, error in outcome.failed:
        stderr.print(
            Text(
                f"point {task.index}"
                + (f" replication {task.replication}" if planned.replications > 1 else "")
                + f" ({task.label()}) failed: ",
                style="red",
            )
            + Text(error),
            soft_wrap=True,
        )
    stderr.print(
        f"{out}: {outcome.total} points, {outcome.ran} run now, {outcome.kept} kept from before, {len(outcome.failed)} failed"
    )
    if report:
        from qoslab.report.sweep_report import write_sweep_report
        from qoslab.store import aggregate

        page, figures = write_sweep_report(
            scenario,
            file,
            out,
            points=planned.points,
            replications=planned.replications,
            sweep_id=planned.sweep_id,
        )
        keys, rows = aggregate(out)
        (out / "summary.json").write_text(
            json.dumps({"swept": keys, "rows": rows}, indent=1, default=str) + "\n", encoding="utf-8"
        )
        stderr.print(f"report: {page} ({figures} figures, also in {out / 'figures'}), {out / 'summary.json'}")
    if json_out:
        _emit_json(
            {
                "file": str(file),
                "out": str(out),
                "sweep_id": planned.sweep_id,
                "points": outcome.total,
                "run": outcome.ran,
                "kept": outcome.kept,
                "failed": [
                    {
                        "point": t.index,
                        "replication": t.replication,
                        "point_id": t.point_id,
                        "values": t.written,
                        "error": e,
                    }
                    for t, e in outcome.failed
                ],
            }
        )
    if outcome.failed:
        stderr.print(Text(f"{len(outcome.failed)} of {outcome.total} points failed", style="bold red"))
        raise typer.Exit(1)


@app.command()
def results(
    directory: Annotated[Path, typer.Argument(help="A results store (qoslab sweep --out DIR).", show_default=False)],
    sql: Annotated[
        str | None,
        typer.Argument(
            help="DuckDB SQL over the view `results` (one row per record of every point); default: every row.",
            show_default=False,
        ),
    ] = None,
    summary: Annotated[
        bool,
        typer.Option(
            "--summary",
            help="Mean, standard deviation and 95 % confidence interval (Student t) of every metric over replications, per point and flow.",
        ),
    ] = False,
    json_out: Annotated[
        bool, typer.Option("--json", help="Print the rows as JSON on stdout (a list of objects).")
    ] = False,
) -> None:
    """Query a sweep's results store with DuckDB.

    The view `results` holds every point's records (docs/results-store.md lists the
    columns and their units). Exit 2 if DIR holds no results or the SQL is refused.

    Example: `qoslab results sweep004/ "SELECT \"link[0].rate\", avg(throughput_mbps) FROM results GROUP BY 1 ORDER BY 1"`

    Example: `qoslab results sweep004/ --summary --json`
    """
    from rich.table import Table

    from qoslab.errors import Problem
    from qoslab.store import iter_point_files, long_summary, query

    if not list(iter_point_files(directory)):
        raise InputError(
            str(directory),
            [
                Problem(
                    "no results here",
                    key="DIR",
                    expected="a directory `qoslab sweep --out DIR` wrote (DIR/points/*.parquet)",
                    found=str(directory),
                )
            ],
        )
    if summary:
        agg = long_summary(directory)
        names = list(dict.fromkeys(k for row in agg for k in row))
        rows = [tuple(row.get(n) for n in names) for row in agg]
    else:
        try:
            names, rows = query(directory, sql or "SELECT * FROM results ORDER BY point, replication")
        except Exception as err:  # duckdb's errors: the SQL is the user's input
            raise InputError(
                "qoslab results",
                [
                    Problem(
                        "DuckDB refused the query",
                        key="SQL",
                        expected="SQL over the view `results`",
                        found=str(err).splitlines()[0],
                    )
                ],
            ) from None
    if json_out:
        # DuckDB hands back decimals, dates and maps as Python objects: their text is JSON.
        _emit_json(json.loads(json.dumps([dict(zip(names, row)) for row in rows] if names else [], default=str)))
        return

    def cell(v: object) -> str:
        if isinstance(v, float):
            return f"{v:.6g}"
        return "" if v is None else str(v)

    table = Table(*names, title=str(directory), title_style="bold")
    for row in rows:
        table.add_row(*(cell(v) for v in row))
    stderr.print(table)


@app.command()
def reproduce(
    seed: Annotated[
        str | None, typer.Argument(help="Seed number (000 to 004); all seeds when left out.", show_default=False)
    ] = None,
    out: Annotated[
        Path, typer.Option("--out", help="Output directory: report.html, summary.json, figures/, data/.")
    ] = Path("results"),
    json_out: Annotated[bool, typer.Option("--json", help="Print summary.json's rows on stdout too.")] = False,
    jobs: Annotated[
        int,
        typer.Option(
            "--jobs",
            "-j",
            min=0,
            help="Points run at once (threads: the simulator releases the GIL); 0 (default): the machine's cores.",
        ),
    ] = 0,
    seeds: Annotated[
        int,
        typer.Option(
            "--seeds",
            min=1,
            help="Random seeds each simulated point runs with; each row is the mean over them, with its standard deviation and how many seeds agree.",
        ),
    ] = 5,
) -> None:
    """Re-run each seed's experiment from its examples/ scenarios and compare with the paper.

    Writes DIR/report.html (one self-contained page: the question, the set-up, figures
    with the published points overlaid, the paper's tables with ours beside them, what
    agrees and what does not and why), figures as PNG and SVG, the data as CSV, Parquet
    and JSON, and DIR/summary.json: every number the seed publishes beside ours, with a
    tolerance and its reason; calibration rows, settings and rows derived from another
    row are marked and never count as agreement (docs/agreement.md). Each simulated point
    runs with --seeds random seeds; a row's "ours" is the mean over them. Finished points
    are kept: Ctrl-C stops cleanly, and running again with the same --out skips them.
    One seed's study into a directory that holds others' results adds or replaces that
    seed's rows and keeps the rest. Exit 2 on an unknown seed. Every metric ("ours") is defined in
    docs/metrics.md, as `qoslab run` measures it.

    Examples:

    `qoslab reproduce --out results/`

    `qoslab reproduce 000 --out seed000/`
    """
    from qoslab.errors import Problem
    from qoslab.places import output_dir
    from qoslab.studies import registry
    from qoslab.studies.runner import reproduce as run_reproduce

    studies = registry()
    if seed is not None:
        key = seed.zfill(3)
        if key not in studies:
            raise InputError(
                "qoslab reproduce",
                [
                    Problem(
                        "no study for this seed", key="SEED", expected="one of " + ", ".join(studies), found=repr(seed)
                    )
                ],
            )
        chosen = [studies[key]]
    else:
        chosen = list(studies.values())
    output_dir(out, "--out")
    try:
        import os

        result = run_reproduce(chosen, out, console=stderr, jobs=jobs or os.cpu_count() or 1, seeds=seeds)
    except KeyboardInterrupt:
        _interrupted(
            f"stopped (Ctrl-C): every finished point is kept in {out}/data; run the same command again to resume."
        )
    from qoslab.report.html import agreement, calibration_misses, counts

    c = counts(result["summary"])
    kept = result["points"] - result["points_run"]
    stderr.print(
        f"{out}/report.html, {out}/summary.json: "
        + ", ".join(f"{v} {k}" for k, v in c.items())
        + f" ({result['points_run']} point runs, {seeds} seed{'s' if seeds > 1 else ''} each"
        + (f", {kept} kept from before" if kept else "")
        + ")"
        + (f"; rows of seed {', '.join(result['kept_seeds'])} kept from before" if result.get("kept_seeds") else "")
    )
    stderr.print(agreement(c))
    misses = calibration_misses(result["summary"])
    if misses:
        stderr.print(
            Text(
                f"{len(misses)} calibration row{'s' if len(misses) > 1 else ''} miss{'' if len(misses) > 1 else 'es'} {'their' if len(misses) > 1 else 'its'} own target:",
                style="yellow",
            )
        )
        for m in misses:
            stderr.print(Text("  " + m, style="yellow"))
    if json_out:
        _emit_json(
            stamp(
                "reproduce",
                {
                    "rows": result["summary"],
                    "points_run": result["points_run"],
                    "points": result["points"],
                    "seeds": result["seeds"],
                },
            )
        )


@app.command()
def reach(
    file: Annotated[Path, typer.Argument(help="Scenario file (TOML).", show_default=False)],
    json_out: Annotated[bool, typer.Option("--json", help="Print every pair's result as JSON on stdout.")] = False,
    seed: Annotated[
        int | None,
        typer.Option(
            "--seed", min=0, max=2**64 - 1, help="Seed of the random streams (0 to 2^64 - 1); default: the scenario's."
        ),
    ] = None,
) -> None:
    """Who reaches whom: 3 pings between every ordered pair of nodes with an address.

    Each pair runs in a fresh simulation (empty ARP and bridge tables). Where a pair
    fails, it prints the hop where the packets died and why, from the simulator's drop
    log (a station adapter refusing a foreign source MAC, NAT refusing an unsolicited
    packet, no route, …). Exit 1 if a simulation failed, 2 on bad input.

    Example: `qoslab reach examples/seed000_l2f_station.toml`
    """
    from qoslab.backends.sim import SimulationError, reachability
    from qoslab.report.terminal import render_reach
    from qoslab.scenario import load_scenario

    scenario = load_scenario(file)
    try:
        net, pairs = reachability(scenario, source=file, seed=seed)
    except SimulationError as err:
        _sim_failed(err)
        return
    speakers = [n for n in net.node_names if net.addresses.get(n)]
    render_reach(stderr, speakers, pairs)
    if json_out:
        _emit_json(
            stamp(
                "reach",
                {
                    "scenario": scenario.scenario.name,
                    "file": str(file),
                    "backend": "sim",
                    "seed": scenario.scenario.seed if seed is None else seed,
                    "pairs": pairs,
                },
            )
        )


@app.command()
def bench(
    json_out: Annotated[bool, typer.Option("--json", help="Print the record as JSON on stdout.")] = False,
    sim_seconds: Annotated[
        float | None,
        typer.Option(
            "--sim-seconds",
            help="Simulated seconds of traffic in each scenario (default 60; 1 with --quick).",
            show_default=False,
        ),
    ] = None,
    quick: Annotated[
        bool,
        typer.Option(
            "--quick",
            help="A short run to see that everything works: every simulator benchmark but the 10,000-host one, "
            "1 simulated second each, one timed run (unless --only, --sim-seconds or --repeat say otherwise).",
        ),
    ] = False,
    with_ns3: Annotated[
        bool,
        typer.Option(
            "--with-ns3",
            help="Run the same scenarios in ns-3 (the .venv-bench venv or $QOSLAB_NS3_PYTHON) and give the speed-ups.",
        ),
    ] = False,
    only: Annotated[
        list[str] | None,
        typer.Option(
            "--only",
            help="Run only this benchmark (repeat, or separate with commas): " + ", ".join(ALL_BENCHMARKS) + ".",
        ),
    ] = None,
    repeat: Annotated[
        int | None,
        typer.Option(
            "--repeat",
            min=1,
            help=f"Timed runs of each tool per benchmark (default {DEFAULT_REPEAT}; 1 with --quick); "
            "the median is reported (qoslab's simulate call, ns-3's Simulator.Run()).",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Speed benchmarks of the simulator, and the speed-up over ns-3 on the same scenarios.

    Times only the simulation itself: qoslab's simulate call, ns-3's Simulator.Run(),
    each --repeat times (the median is reported). The machine may be shared: read the speed-up (a ratio measured in the same run),
    not the seconds. Exit code 1 if a benchmark failed or none could run.

    Examples:

    `qoslab bench --json`

    `qoslab bench --quick`

    `qoslab bench --with-ns3 --only wifi_80211b_saturation --sim-seconds 10`
    """
    import math

    from qoslab import bench as benchmarks
    from qoslab.errors import Problem

    if sim_seconds is None:
        sim_seconds = 1.0 if quick else 60.0
    if repeat is None:
        repeat = 1 if quick else DEFAULT_REPEAT
    if not (math.isfinite(sim_seconds) and sim_seconds > 0):
        raise InputError(
            "qoslab bench",
            [
                Problem(
                    "simulated seconds must be a finite time above 0",
                    key="--sim-seconds",
                    expected="a number of seconds, e.g. 60",
                    found=str(sim_seconds),
                )
            ],
        )
    names = benchmarks.select(only) if only or not quick else list(benchmarks.QUICK_BENCHMARKS)
    report = benchmarks.run(
        names,
        sim_seconds=sim_seconds,
        with_ns3=with_ns3,
        repeat=repeat,
        log=lambda msg: stderr.print(Text(msg, style="dim")),
    )
    benchmarks.render(report, stderr)
    if json_out:
        _emit_json(stamp("bench", report.to_json()))
    if report.failed or not (report.scenarios or report.ns3):
        sys.exit(1)


def main() -> None:
    """Entry point: usage errors are typer's (message, exit 2); bad input in files and
    values becomes a message and exit code 2; never a traceback for either."""
    try:
        app()
    except InputError as err:
        # The message may quote TOML such as "[[link]]": print it as text, not markup.
        stderr.print(Text("error: ", style="bold red") + Text(str(err)), soft_wrap=True)
        sys.exit(2)
    except OSError as err:
        from qoslab.places import disk_full

        if not disk_full(err):
            raise
        # What was written before stays: finished points, earlier files.
        where = f" writing {err.filename}" if err.filename else ""
        stderr.print(
            Text("error: ", style="bold red") + Text(f"no space left{where}; stopped (what finished is kept)"),
            soft_wrap=True,
        )
        sys.exit(1)
