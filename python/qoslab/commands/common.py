"""What the commands of ``qoslab`` share: the console for human output (stderr), the
help of options several commands take, and how a command prints JSON, stops on Ctrl-C
and says a simulation failed."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, NoReturn

import typer
from rich.console import Console
from rich.text import Text

from qoslab.errors import InputError

if TYPE_CHECKING:
    from qoslab.plan.results_models import Results

# Wide tables (a sweep's) stay whole when stderr is a file or a pipe: rich would assume 80 columns.
stderr = Console(stderr=True, highlight=False, width=None if sys.stderr.isatty() else 160)


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


def size_option(option: str, minimum: int = 1) -> Callable[[str | None], int | None]:
    """A reader of a size ('1 GB', '64 KiB', bytes) for ``option``: typer's ``parser`` of
    the option (or its callback)."""

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


# The arguments and options several commands take, each written once (typer reads the
# Annotated metadata; the parameter's default stays at the command).
ScenarioFile = Annotated[Path, typer.Argument(help="Scenario file (TOML).", show_default=False)]
SeedOption = Annotated[
    int | None,
    typer.Option(
        "--seed", min=0, max=2**64 - 1, help="Seed of the random streams (0 to 2^64 - 1); default: the scenario's."
    ),
]
MaxEventsOption = Annotated[int | None, typer.Option("--max-events", min=1, help=MAX_EVENTS_HELP)]
MaxMemoryOption = Annotated[
    int | None,
    typer.Option("--max-memory", parser=size_option("--max-memory"), metavar="SIZE", help=MAX_MEMORY_HELP),
]
PcapSnaplenOption = Annotated[int | None, typer.Option("--pcap-snaplen", min=1, max=2**32 - 1, help=PCAP_SNAPLEN_HELP)]
PcapMaxSizeOption = Annotated[
    int | None,
    typer.Option("--pcap-max-size", parser=size_option("--pcap-max-size"), metavar="SIZE", help=PCAP_MAX_SIZE_HELP),
]


def emit_json(record: object) -> None:
    sys.stdout.write(json.dumps(record, indent=2, sort_keys=False) + "\n")


def interrupted(message: str) -> NoReturn:
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


def pcap_options_need_pcap(pcap: Path | None, snaplen: int | None, max_size: int | None) -> None:
    """--pcap-snaplen and --pcap-max-size say how to capture: without --pcap they would
    do nothing, which is more likely a mistake than meant."""
    given = [name for name, value in (("--pcap-snaplen", snaplen), ("--pcap-max-size", max_size)) if value is not None]
    if pcap is None and given:
        from qoslab.errors import Problem

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


def say_capture_cut(results: Results) -> None:
    """One line when a run's capture was cut by --pcap-max-size."""
    capture = results.capture
    cut = capture.cut if capture else None
    if capture and cut:
        from qoslab.budget import describe_bytes

        stderr.print(
            Text("capture cut: ", style="bold yellow")
            + Text(
                f"the files reached --pcap-max-size {describe_bytes(capture.max_bytes or 0)} at {cut.time_ns / 1e9:.9f} s; "
                f"frame {cut.frame:,} (at {cut.point}) and those after it are not in them ({capture.frames:,} frames written)."
            ),
            soft_wrap=True,
        )


def sim_failed(err: Exception) -> NoReturn:
    stderr.print(Text("error: ", style="bold red") + Text(str(err)), soft_wrap=True)
    raise typer.Exit(1)
