"""The ``qoslab`` command.

Human output goes to stderr through rich; with ``--json`` the machine-readable record
goes to stdout (../DESIGN.md, "Machine-readable output"). Exit codes: 0 success, 1 a
measurement failed, 2 bad input (a message, never a traceback).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.text import Text

from qoslab import __version__
from qoslab.commands.bench import bench
from qoslab.commands.common import (
    MaxEventsOption,
    MaxMemoryOption,
    PcapMaxSizeOption,
    PcapSnaplenOption,
    ScenarioFile,
    stderr,
)
from qoslab.commands.common import emit_json as _emit_json
from qoslab.commands.common import pcap_options_need_pcap as _pcap_options_need_pcap
from qoslab.commands.compare import compare
from qoslab.commands.emu import Backend, BackendOption, emu_app
from qoslab.commands.reach import reach
from qoslab.commands.reproduce import reproduce
from qoslab.commands.run import run
from qoslab.commands.sweep import sweep
from qoslab.errors import InputError
from qoslab.output_schema import VERSIONS as OUTPUT_VERSIONS
from qoslab.output_schema import stamp

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
    file: ScenarioFile,
    json_out: Annotated[bool, typer.Option("--json", help="Print the validated scenario as JSON on stdout.")] = False,
    max_events: MaxEventsOption = None,
    max_memory: MaxMemoryOption = None,
    pcap: Annotated[
        Path | None,
        typer.Option("--pcap", help="Also check that `run --pcap DIR` would have room for its captures there."),
    ] = None,
    pcap_snaplen: PcapSnaplenOption = None,
    pcap_max_size: PcapMaxSizeOption = None,
    backend: BackendOption = Backend.sim,
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
    prepare(scenario, source=file, max_events=max_events, max_memory=max_memory, pcap=options)
    if backend is Backend.emu:
        # What `run --backend emu` refuses of the scenario, refused here first.
        from qoslab.backends.emu import check_host
        from qoslab.backends.emu import prepare as prepare_emu

        check_host()
        prepare_emu(scenario, source=file)
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


app.command()(run)


app.command()(sweep)


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


app.command()(reproduce)
app.command()(reach)
app.command()(bench)
app.command()(compare)
app.add_typer(emu_app, name="emu")


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
