"""The link emulator (crates/emu) against a direct veth pair, in one run (issue 17, "Speed"),
with more variants than ``qoslab bench --only emu_link`` runs.

The measurements are python/qoslab/bench_emu.py's (throughput of 1514-byte frames, and
the timing error against kernel timestamps through a 1 Gb/s, 1 ms link; its docstring
and docs/metrics.md say how). Here the emulator runs once as a normal process and once
under SCHED_FIFO (``--fifo``, the binding's ``fifo_priority``): on a loaded machine a
normal process waits for a CPU for milliseconds after its frame or deadline came. The
timing runs under SCHED_FIFO go once with the emulator's own spin (50 µs before each
deadline, growing up to 500 µs while the kernel wakes it late) and once with each fixed
spin of ``--spins`` (default: 50 µs and none; ``busy``: never sleep, the binding's
``busy_poll``).

``--arrivals N`` instead runs, on the emulated path under SCHED_FIFO with its own spin,
N rounds of a throughput and a timing run with each frame offered at its kernel
timestamp on the sending TAP (the default, crates/emu/src/stamps.rs) and then at the
instant it is read (the binding's ``kernel_arrivals=False``, as before stamps), so that
the two are compared in the same minutes.

    sudo .venv/bin/python benchmarks/emu_link.py [--seconds 3] [--timing-frames 3000] [--arrivals N] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys

from qoslab import _core
from qoslab.bench_emu import BUSY, Path, make_path, remove, throughput, timing


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="each throughput run (default 3)")
    parser.add_argument("--timing-frames", type=int, default=3000, help="frames per timing run (default 3000)")
    parser.add_argument("--gap-us", type=int, default=1000, help="between timing frames (default 1000)")
    parser.add_argument(
        "--fifo", type=int, default=50, help="the SCHED_FIFO priority of the real-time runs (default 50)"
    )
    parser.add_argument(
        "--spins",
        type=lambda text: [BUSY if x == "busy" else int(x) for x in text.split(",")],
        default=[50, 0],
        help="the fixed spins (µs, or busy: never sleep) of the SCHED_FIFO timing runs, comma-separated (default 50,0)",
    )
    parser.add_argument(
        "--arrivals",
        type=int,
        default=0,
        help="N rounds comparing kernel-timestamp arrivals with read instants (SCHED_FIFO, own spin)",
    )
    parser.add_argument("--json", action="store_true", help="the results as JSON on stdout")
    args = parser.parse_args()
    if os.geteuid() != 0:
        print("emu_link.py needs root: network namespaces and TAP devices", file=sys.stderr)
        return 2
    if not hasattr(_core, "emulate_link"):
        print("this build of qoslab._core has no emulate_link: rebuild (scripts/install.sh)", file=sys.stderr)
        return 2
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    results: dict[str, list[dict[str, object]]] = {"throughput": [], "timing": []}
    stem = f"qoslab-b-{os.getpid()}"
    paths: list[Path] = []
    try:
        for kind in ("veth", "emulated"):
            path = make_path(kind, f"{stem}-{kind[0]}")
            paths.append(path)
            # The emulator as a normal process, then under SCHED_FIFO (a loaded machine
            # keeps a normal one waiting for a CPU), with and without the spin.
            if kind == "emulated" and args.arrivals:
                for _ in range(args.arrivals):
                    for stamps in (True, False):
                        results["throughput"].append(throughput(path, args.seconds, args.fifo, stamps))
                        results["timing"].append(timing(path, args.timing_frames, args.gap_us, None, args.fifo, stamps))
                continue
            fifos: list[int | None] = [None, args.fifo] if kind == "emulated" else [None]
            for fifo in fifos:
                results["throughput"].append(throughput(path, args.seconds, fifo))
            runs: list[tuple[int | None, int | None]] = [(None, None), (None, args.fifo)]
            runs += [(spin, args.fifo) for spin in args.spins]
            for spin, fifo in runs if kind == "emulated" else [(None, None)]:
                results["timing"].append(timing(path, args.timing_frames, args.gap_us, spin, fifo))
    finally:
        for path in paths:
            remove(path)
    if args.json:
        print(json.dumps(results, indent=2))
    else:
        for r in results["throughput"]:
            extra = f", emulator CPU {r['emulator_cpu_share']:.0%} of a core" if "emulator_cpu_share" in r else ""
            rt = f" SCHED_FIFO {r['fifo_priority']}" if r["fifo_priority"] is not None else ""
            rt += {True: " kernel arrivals", False: " read arrivals", None: ""}[r["kernel_arrivals"]]
            print(
                f"throughput {r['path']:>8}{rt}: {r['frames_per_s']:>8} frames/s {r['mbps']:>8} Mb/s (offered {r['offered_frames_per_s']} frames/s){extra}"
            )
        for r in results["timing"]:
            key = "error" if r["path"] == "emulated" else "transit"
            p = r[key]
            assert isinstance(p, dict)
            how = (
                f" spin {r['spin_us']}" + (" µs" if isinstance(r["spin_us"], int) else "")
                if r["path"] == "emulated"
                else ""
            )
            how += f" SCHED_FIFO {r['fifo_priority']}" if r["fifo_priority"] is not None else ""
            how += {True: " kernel arrivals", False: " read arrivals", None: ""}[r["kernel_arrivals"]]
            if "emulator_lateness_ns" in r:
                late = r["emulator_lateness_ns"]
                assert isinstance(late, dict)
                how += f" [own lateness p99 {late['p99'] / 1000:g} µs]"
            print(
                f"timing {r['path']:>8}{how}: {key} p50 {p['p50_us']} µs, p99 {p['p99_us']} µs, p99.9 {p['p999_us']} µs, max {p['max_us']} µs ({r['received']}/{r['sent']} frames)"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
