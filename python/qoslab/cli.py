"""The ``qoslab`` command.

Human output goes to stderr through rich; with ``--json`` the machine-readable record
goes to stdout (../DESIGN.md, "Machine-readable output"). Exit codes: 0 success, 1 a
measurement failed, 2 bad input (a message, never a traceback).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.console import Console
from rich.text import Text

from qoslab import __version__
from qoslab.errors import InputError

stderr = Console(stderr=True, highlight=False)

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
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode="markdown",
)


def _emit_json(record: object) -> None:
    sys.stdout.write(json.dumps(record, indent=2, sort_keys=False) + "\n")


@app.command()
def version() -> None:
    """Print qoslab's version.

    Example: `qoslab version`
    """
    from qoslab import _core

    stderr.print(f"qoslab {__version__} (core {_core.core_version()})")
    sys.stdout.write(f"{__version__}\n")


@app.command()
def check(
    file: Annotated[Path, typer.Argument(help="Scenario file (TOML).", show_default=False)],
    json_out: Annotated[bool, typer.Option("--json", help="Print the validated scenario as JSON on stdout.")] = False,
) -> None:
    """Validate a scenario and print its topology as a tree.

    Every problem is reported with file:line:column, the key path, what was expected
    and what was found; the exit code is 2 if there is any.

    Example: `qoslab check examples/seed000_l3f.toml`
    """
    from qoslab.scenario import load_scenario, topology_tree

    scenario = load_scenario(file)
    stderr.print(topology_tree(scenario))
    if json_out:
        _emit_json(scenario.model_dump(mode="json", by_alias=True, exclude_none=True))


@app.command()
def schema() -> None:
    """Print the JSON Schema of the scenario language (for editors and validators).

    Example: `qoslab schema > qoslab.schema.json`
    """
    from qoslab.scenario import json_schema

    _emit_json(json_schema())


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
        Optional[int],
        typer.Option("--size", min=1, help="Also give the wire cost of one datagram of N bytes at the innermost IP layer."),
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
        Optional[Path],
        typer.Option("--pcap", help="Write the frames of the --size datagram (or a full-size one) to this pcap file "
                     "(stacks over ethernet or wifi); Wireshark opens it."),
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

    report = analyse(stack, count_fcs=count_fcs, size=size, pcap=pcap)
    render_mtu(report, stderr)
    if json_out:
        _emit_json(report.to_json())


@app.command()
def bench(
    json_out: Annotated[bool, typer.Option("--json", help="Print the record as JSON on stdout.")] = False,
    sim_seconds: Annotated[
        float, typer.Option("--sim-seconds", help="Simulated seconds of traffic in each scenario (the issue's target: 60).")
    ] = 60.0,
    with_ns3: Annotated[
        bool,
        typer.Option("--with-ns3", help="Run the same scenarios in ns-3 (the .venv-bench venv or $QOSLAB_NS3_PYTHON) "
                     "and give the speed-ups."),
    ] = False,
    only: Annotated[
        Optional[list[str]],
        typer.Option("--only", help="Run only this benchmark (repeat, or separate with commas): "
                     "wifi_80211b_saturation, ethernet_chain_10, switch_1000_hosts, wire."),
    ] = None,
) -> None:
    """Speed benchmarks of the simulator, and the speed-up over ns-3 on the same scenarios.

    Times only the simulation itself: qoslab's simulate call, ns-3's Simulator.Run().
    The machine may be shared: read the speed-up (a ratio measured in the same run),
    not the seconds. Exit code 1 if a benchmark failed or none could run.

    Examples:

    `qoslab bench --json`

    `qoslab bench --with-ns3 --only wifi_80211b_saturation --sim-seconds 10`
    """
    from qoslab import bench as benchmarks

    names = benchmarks.select(only)
    report = benchmarks.run(names, sim_seconds=sim_seconds, with_ns3=with_ns3,
                            log=lambda msg: stderr.print(Text(msg, style="dim")))
    benchmarks.render(report, stderr)
    if json_out:
        _emit_json(report.to_json())
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
