"""One tcp.bulk scenario on both backends, several runs each: the simulator with seeds
1..N and Linux (``--backend emu``, emulated links) with the same seeds for the link
emulator's loss streams; each run's receiver goodput, and the means and their relative
difference (issue 17's acceptance: "TCP CUBIC over 30 Mb/s, a few ms RTT, 1 % loss:
simulator and Linux within 10 % over 5 runs each").

Needs root for the emulated runs. Each run goes through the command line as a user runs
it (``qoslab run FILE [--backend emu] --seed K --json``); the scenario's first test must
be a tcp.bulk.

    sudo .venv/bin/python benchmarks/emu_vs_sim_tcp.py [FILE] [--runs 5] [--json]

FILE defaults to python/qoslab/examples/cubic_30mbps_loss.toml.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

DEFAULT = Path(__file__).resolve().parent.parent / "python" / "qoslab" / "examples" / "cubic_30mbps_loss.toml"


def one_run(path: Path, backend: str, seed: int) -> dict[str, Any]:
    """The first record's headline TCP figures of one run."""
    done = subprocess.run(
        [sys.executable, "-m", "qoslab", "run", str(path), "--backend", backend, "--seed", str(seed), "--json"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    if done.returncode != 0:
        raise SystemExit(f"{backend} run with seed {seed} failed: {done.stderr.strip()[-400:]}")
    rec = json.loads(done.stdout)["results"][0]
    m = rec["metrics"]
    return {
        "backend": backend,
        "seed": seed,
        "throughput_mbps": m["throughput_mbps"],
        "retransmits": m["retransmits"],
        "srtt_ms": m["srtt_ms"],
        "max_cwnd_bytes": m["max_cwnd_bytes"],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("file", nargs="?", type=Path, default=DEFAULT)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--json", action="store_true", help="print the runs and means as JSON")
    args = parser.parse_args()
    runs = [one_run(args.file, backend, seed) for backend in ("sim", "emu") for seed in range(1, args.runs + 1)]
    means = {b: statistics.fmean(r["throughput_mbps"] for r in runs if r["backend"] == b) for b in ("sim", "emu")}
    spread = {
        b: statistics.stdev([r["throughput_mbps"] for r in runs if r["backend"] == b]) if args.runs > 1 else 0.0
        for b in ("sim", "emu")
    }
    # Relative to Linux: how far the simulator is from the real stack.
    diff = (means["sim"] - means["emu"]) / means["emu"]
    if args.json:
        print(json.dumps({"runs": runs, "mean_mbps": means, "stdev_mbps": spread, "sim_vs_emu": diff}, indent=1))
        return 0
    for r in runs:
        print(
            f"{r['backend']} seed {r['seed']}: {r['throughput_mbps']:.2f} Mb/s, {r['retransmits']} retransmits, "
            f"srtt {r['srtt_ms']} ms, max cwnd {r['max_cwnd_bytes']} B"
        )
    for b in ("sim", "emu"):
        print(f"{b}: mean {means[b]:.2f} Mb/s, stdev {spread[b]:.2f}")
    print(f"sim vs emu: {100 * diff:+.1f} %")
    return 0


if __name__ == "__main__":
    sys.exit(main())
