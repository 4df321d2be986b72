"""Seed 004's download on both backends, per rate of the serial line that carries the
acknowledgements: the simulator and Linux (``--backend emu``, emulated links), several
runs each, the transfer time's mean and standard deviation per backend and their
relative difference (issue 17's acceptance: "The seed-004 download (2 Mb/s down, SLIP
acknowledgements up at 9.6-115.2 kb/s): simulator and Linux within 15 %").

Each point is the scenario file with the serial line's rate set, the test's ``stack``
set to ``"linux"`` on both backends (the emulation backend's TCP is this machine's
Linux) and ``bytes`` set to ``--bytes``, run by ``qoslab compare``'s own functions
(python/qoslab/compare.py ``run_both`` and ``compare``), as ``qoslab compare`` runs a
file. FILE defaults to python/qoslab/examples/seed004_asymmetric_wired.toml (the 2 Mb/s
downlink as a wired line: the emulation backend has no 802.11 cells yet); the WaveLAN
file runs the same way once it has.

Needs root and network namespaces for the emulated runs.

    sudo .venv/bin/python benchmarks/emu_vs_sim_seed004.py [FILE] [--runs 3] [--bytes 200kB]
        [--rate 9600bps --rate ...] [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

EXAMPLES = Path(__file__).resolve().parent.parent / "python" / "qoslab" / "examples"
DEFAULT = EXAMPLES / "seed004_asymmetric_wired.toml"
RATES = ["9600 bps", "19.2 kbps", "38.4 kbps", "115.2 kbps"]
"""The acknowledgements' serial line rates the acceptance asks for (seed 004's sweep
runs 1200 b/s to 115.2 kb/s)."""
BYTES = "300 kB"
"""The transfer's size: about 6.4 s per run at 9.6 kb/s, 1.3 s at 115.2 kb/s, so that
the acceptance runs in CI in a few minutes. The size does not change the comparison:
both backends reach their steady state (the window full, an ACK per two segments, or
the 2 Mb/s line busy) within the first 16 KiB window, and both count the same start
(handshake, ARP, slow start) in the time, so only the start's share changes with the
size. Measured with 1 MB (the seed's 10 MB would take 3.5 min per run at 9.6 kb/s), 2
runs per backend: 9.6 kb/s sim 21.436 s, emu 21.882 s (+2.1 %; +/-1 % at 300 kB),
38.4 kb/s sim 4.984 s, emu 4.853 s (-2.6 %; -5.0 % at 300 kB)."""
SERIAL_LINK = "modem"
"""The name of the scenario's serial line (the acknowledgements' path)."""
METRICS = ("transfer_time_s", "throughput_mbps", "retransmits")


def serial_index(scenario: Any) -> int:
    """The index in ``[[link]]`` of the acknowledgements' serial line."""
    return next(i for i, link in enumerate(scenario.link) if getattr(link, "name", None) == SERIAL_LINK)


def point(path: Path, rate: str, size: str) -> Any:
    """The scenario of one point: the serial line at ``rate``, Linux's stack, ``size``
    bytes, no sweep."""
    from qoslab.scenario import load_scenario
    from qoslab.sweep import scenario_at

    base = load_scenario(path)
    return scenario_at(
        base,
        {f"link[{serial_index(base)}].rate": rate, "test[0].stack": "linux", "test[0].bytes": size},
        source=path,
    )


def run_point(path: Path, rate: str, size: str, runs: int) -> dict[str, Any]:
    """Both backends at one rate: each metric of :data:`METRICS` compared (compare.py's
    entry: sim and emu values, mean, sd, diff, within), the emulated links' counters of
    every emulated run, and the kernel."""
    from qoslab.compare import Runs, compare, run_both

    done = run_both(point(path, rate, size), path, sim_runs=runs, emu_runs=runs, into=Runs())
    place = compare(done)[0]
    metrics = {m["metric"]: m for m in place["metrics"] if m["metric"] in METRICS}
    emu_records = [r["records"][0] for r in done.emu]
    return {
        "rate": rate,
        "bytes": size,
        "metrics": metrics,
        "emu_runs": [run_summary(r) for r in emu_records],
        "emulated_links": [r.get("emulated_links") for r in emu_records],
        "socket_buffers": [r.get("socket_buffers") for r in emu_records],
        "kernel": done.kernel,
    }


def run_summary(record: dict[str, Any]) -> dict[str, Any]:
    """One emulated run at a glance: its time, retransmissions, the ACKs the serial line
    carried, and the emulators' worst p99 lateness (µs: how late the machine let them
    write frames, docs/metrics.md "The link emulator")."""
    links = record.get("emulated_links") or []
    serial = next((link for link in links if link["kind"] == "serial"), None)
    late = [d["lateness_p99_us"] for link in links for d in link["directions"] if d["lateness_p99_us"] is not None]
    return {
        "transfer_time_s": record["metrics"]["transfer_time_s"],
        "retransmits": record["metrics"]["retransmits"],
        "serial_frames": None if serial is None else serial["directions"][0]["delivered"]["frames"],
        "worst_lateness_p99_us": max(late, default=None),
    }


def diff_pct(entry: dict[str, Any]) -> float:
    """emu − sim in % of sim, from compare.py's entry of one metric."""
    sim, emu = float(entry["sim"]["mean"]), float(entry["emu"]["mean"])
    return 100.0 * (emu - sim) / sim


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("file", nargs="?", type=Path, default=DEFAULT)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--bytes", default=BYTES)
    parser.add_argument("--rate", action="append", help="a serial line rate (repeat); default: " + ", ".join(RATES))
    parser.add_argument("--json", action="store_true", help="print every point as JSON")
    args = parser.parse_args()
    points = [run_point(args.file, rate, args.bytes, args.runs) for rate in args.rate or RATES]
    if args.json:
        print(json.dumps({"file": str(args.file), "runs": args.runs, "points": points}, indent=1))
        return 0
    print(f"{args.file.name}, {args.bytes}, {args.runs} runs per backend, kernel {points[0]['kernel']}")
    print(f"{'ack line':>11} | {'sim transfer s':>17} | {'emu transfer s':>17} | {'diff':>7}")
    for p in points:
        t = p["metrics"]["transfer_time_s"]
        sim, emu = t["sim"], t["emu"]
        print(
            f"{p['rate']:>11} | {sim['mean']:8.3f} ± {sim['sd']:6.3f} | {emu['mean']:8.3f} ± {emu['sd']:6.3f} | "
            f"{diff_pct(t):+6.1f} %"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
