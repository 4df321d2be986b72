"""One tcp.bulk scenario on both backends, several runs each: the simulator with seeds
S..S+N-1 (S: the scenario's seed, 1 in the default file) and Linux (``--backend emu``,
emulated links) with the same seeds for the link emulator's loss streams; each run's
receiver goodput, and the means and their relative difference (issue 17's acceptance:
"TCP CUBIC over 30 Mb/s, a few ms RTT, 1 % loss: simulator and Linux within 10 % over 5
runs each").

Needs root for the emulated runs. The runs are ``qoslab compare FILE --runs N --out DIR``
as a user runs it (docs/compare.md); this script prints the TCP figures of its
runs.json and the goodput's row of its compare.json. The scenario's first test must be
a tcp.bulk.

    sudo .venv/bin/python benchmarks/emu_vs_sim_tcp.py [FILE] [--runs 5] [--json]

FILE defaults to python/qoslab/examples/cubic_30mbps_loss.toml.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

DEFAULT = Path(__file__).resolve().parent.parent / "python" / "qoslab" / "examples" / "cubic_30mbps_loss.toml"


def compare(path: Path, runs: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """``qoslab compare``'s runs.json and compare.json for ``path``."""
    with tempfile.TemporaryDirectory(prefix="emu_vs_sim_") as out:
        done = subprocess.run(
            [sys.executable, "-m", "qoslab", "compare", str(path), "--runs", str(runs), "--out", out],
            capture_output=True,
            text=True,
            timeout=600 * runs,
        )
        if done.returncode != 0:
            raise SystemExit(f"qoslab compare failed: {done.stderr.strip()[-400:]}")
        return json.loads((Path(out) / "runs.json").read_text()), json.loads((Path(out) / "compare.json").read_text())


def headline(backend: str, run: dict[str, Any]) -> dict[str, Any]:
    """The first record's headline TCP figures of one run."""
    m = run["records"][0]["metrics"]
    return {
        "backend": backend,
        "seed": run["seed"],
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
    runs_json, report = compare(args.file, args.runs)
    runs = [headline(b, r) for b in ("sim", "emu") for r in runs_json[b]]
    goodput = next(m for m in report["tests"][0]["metrics"] if m["metric"] == "throughput_mbps")
    means = {b: goodput[b]["mean"] for b in ("sim", "emu")}
    spread = {b: goodput[b]["sd"] for b in ("sim", "emu")}
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
    print(
        f"sim vs emu: {100 * diff:+.1f} % (compare: {'within' if goodput['within'] else 'beyond'} the spread, "
        f"reasons {', '.join(goodput['reasons']) or '-'})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
