"""``qoslab run FILE --backend emu`` (the scenario on network namespaces, measured with
real tools) and ``qoslab emu clean`` (what crashed emulation runs left)."""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.text import Text

from qoslab.commands.common import emit_json, interrupted, stderr
from qoslab.errors import InputError, Problem
from qoslab.output_schema import stamp

if TYPE_CHECKING:
    from qoslab.backends.emu import EmuRun


class Backend(str, Enum):
    """Where ``run`` measures a scenario."""

    sim = "sim"
    emu = "emu"


BackendOption = Annotated[
    Backend,
    typer.Option(
        "--backend",
        help="sim: the deterministic simulator (default); emu: network namespaces on this Linux machine, "
        "real kernels and tools (root).",
    ),
]


class EmuLinks(str, Enum):
    """How ``run --backend emu`` makes the plan's links."""

    emulated = "emulated"
    direct = "direct"


EmuLinksOption = Annotated[
    EmuLinks | None,
    typer.Option(
        "--emu-links",
        help="--backend emu: 'emulated' (default): each link through the link emulator (rate, delay, loss, "
        "queue limits of the scenario); 'direct': veth pairs, the kernel's own path with no link model.",
    ),
]

emu_app = typer.Typer(help="The emulation backend's housekeeping.", no_args_is_help=True)


@emu_app.command("clean")
def clean(
    all_runs: Annotated[
        bool, typer.Option("--all", help="Also remove runs whose owner is still running (their tools are killed).")
    ] = False,
) -> None:
    """Remove what emulation runs whose process is gone left behind: their namespaces
    (with their interfaces, bridges and nftables tables), root-namespace interfaces and
    processes, as the run registry (/run/qoslab/emu) names them. Nothing else is touched.

    Example: `qoslab emu clean`
    """
    from qoslab.backends.emu import check_host
    from qoslab.backends.emu.registry import clean as clean_runs

    check_host()
    removed, left = clean_runs(include_live=all_runs)
    for line in removed:
        stderr.print(f"removed {line}")
    for record in left:
        stderr.print(f"left run {record.run}: its owner (pid {record.owner_pid}) is running; --all removes it")
    if not removed:
        stderr.print("nothing to clean")


def refuse_sim_options(given: dict[str, Any]) -> None:
    """Options of the simulator that mean nothing on the emulation backend."""
    used = [name for name, value in given.items() if value not in (None, False)]
    if used:
        raise InputError(
            used[0],
            [
                Problem(
                    f"{used[0]} applies to the simulator, not to --backend emu",
                    expected="--backend sim, or no " + used[0],
                    found=f"{used[0]} with --backend emu",
                )
            ],
        )


def run_emu(file: Path, *, json_out: bool, links: EmuLinks | None = None, seed: int | None = None) -> None:
    """``run --backend emu``: every test on its own emulated network, a table per test."""
    from qoslab.backends.emu import EmulationError, run_tests
    from qoslab.scenario import load_scenario

    scenario = load_scenario(file)
    try:
        _net, runs, link = run_tests(
            scenario,
            source=file,
            links=(links or EmuLinks.emulated).value,
            seed=seed,
            on_test=lambda label: stderr.print(Text("emu: ", style="bold") + Text(label)),
        )
    except EmulationError as err:
        stderr.print(Text("error: ", style="bold red") + Text(str(err)), soft_wrap=True)
        raise typer.Exit(1) from None
    except KeyboardInterrupt:
        interrupted("stopped; the emulated network was removed.")
    from qoslab.backends.emu.measure import kernel

    stderr.print(Text("links: ", style="bold") + Text(f"{link} (kernel {kernel()})"))
    tunnels = {rec["tunnel_implementation"] for r in runs for rec in r.records if "tunnel_implementation" in rec}
    for tunnel in sorted(tunnels):
        stderr.print(Text("tunnels: ", style="bold") + Text(tunnel))
    for r in runs:
        _show(r)
        for rec in r.records[:1]:  # every record of a test has its network's counters
            for counters in rec.get("emulated_links", []):
                _show_link(r.label, counters)
            for counters in rec.get("user_space_tunnels", []):
                _show_tunnel(r.label, counters)
    if json_out:
        records = [rec for r in runs for rec in r.records]
        emit_json(
            stamp(
                "run",
                {
                    "scenario": scenario.scenario.name,
                    "file": str(file),
                    "backend": "emu",
                    "kernel": kernel(),
                    "link_implementation": link,
                    "seed": scenario.scenario.seed if seed is None else seed,
                    "results": records,
                    "nodes": [n for r in runs for n in r.nodes],
                },
            )
        )


def _show(r: EmuRun) -> None:
    """One line per record: the test and its headline figures."""
    for rec in r.records:
        m = rec["metrics"]
        if rec["test"] == "ping":
            text = f"{m['received']}/{m['sent']} replies, loss {m['loss_pct']} %, rtt mean {m['rtt_mean_ms']} ms"
        elif rec["test"] == "udp.flow":
            text = (
                f"{m['received']}/{m['sent']} datagrams, loss {m['loss_pct']} %, "
                f"throughput {m['throughput_mbps']} Mb/s, goodput {m['goodput_mbps']} Mb/s, jitter {m['jitter_ms']} ms"
            )
        elif rec["test"] == "udp.echo":
            text = (
                f"{m['received']}/{m['sent']} echoes ({m['forward_received']} reached the server), "
                f"loss {m['loss_pct']} %, rtt mean {m['rtt_mean_ms']} ms, p50 {m['rtt_p50_ms']} ms"
            )
        elif rec["test"] == "pcap.replay" or rec["test"].startswith("rfc2544."):
            text = _stream_text(rec)
        else:
            text = f"goodput {m['throughput_mbps']} Mb/s over {m['window_s']} s, {m['retransmits']} retransmits"
        stderr.print(Text(f"{r.label}: ", style="bold") + Text(text))


def _stream_text(rec: dict[str, Any]) -> str:
    """The headline of a pcap.replay or RFC 2544 record (qoslab's own streams)."""
    m, p = rec["metrics"], rec["parameters"]
    if rec["test"] == "pcap.replay":
        return (
            f"{m['received']}/{m['sent']} datagrams, loss {m['loss_pct']} %, latency mean {m['latency_ms']} ms, "
            f"max {m['latency_max_ms']} ms, jitter {m['jitter_ms']} ms"
        )
    shown = ("throughput_fps", "throughput_mbps", "latency_ms", "frame_loss_pct", "back_to_back_frames", "loss_pct")
    figures = ", ".join(f"{k} {m[k]}" for k in shown if m.get(k) is not None)
    load = f" at {p['load_pct']} %" if "load_pct" in p else ""
    return f"{p.get('frame_bytes')} B{load}: {figures}"


def _show_tunnel(label: str, c: dict[str, Any]) -> None:
    """One line per user-space tunnel end: inner and outer packets each way, drops."""
    drops = ", ".join(f"{reason} {n['packets']}" for reason, n in c["dropped"].items()) or "none"
    stderr.print(
        Text(f"{label}: ", style="bold")
        + Text(
            f"tunnel {c['tunnel']} at {c['node']} ({c['kind']}): inner in {c['inner_in']['packets']}, "
            f"out {c['inner_out']['packets']}; outer out {c['outer_out']['packets']}, "
            f"in {c['outer_in']['packets']}; dropped {drops}"
        )
    )


def _show_link(label: str, counters: dict[str, Any]) -> None:
    """One line per emulated link and direction (a cell: per member): frames offered,
    delivered, dropped by reason."""
    for m in counters.get("members", []):
        refused = {**m["refused"], **m["dropped"]}
        drops = ", ".join(f"{reason} {c['frames']}" for reason, c in refused.items()) or "none"
        stderr.print(
            Text(f"{label}: ", style="bold")
            + Text(
                f"link {counters['link']} at {m['port']}: offered {m['offered']['frames']}, "
                f"delivered {m['delivered']['frames']}, dropped {drops}"
            )
        )
    for d in counters.get("directions", []):
        drops = ", ".join(f"{reason} {c['frames']}" for reason, c in d["dropped"].items()) or "none"
        held = d["queued_at_stop"]["frames"] + d["in_flight_at_stop"]["frames"]
        stderr.print(
            Text(f"{label}: ", style="bold")
            + Text(
                f"link {counters['link']} {d['from']}->{d['to']}: offered {d['offered']['frames']}, "
                f"delivered {d['delivered']['frames']}, dropped {drops}, held at stop {held} frames"
            )
        )
