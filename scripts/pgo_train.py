"""The training run of the profile-guided build (scripts/install.sh).

Runs the simulator core on what users run: every test of every scenario in examples/,
lowered as ``qoslab run`` lowers it, with its simulated time cut to a few seconds (the
per-packet code is the same in the first seconds as in the rest). The benchmark
configurations of ``qoslab bench`` are deliberately not in the set, so the speed the
benchmarks measure is that of a build trained on other work.

Usage: .venv/bin/python scripts/pgo_train.py [SECONDS]   (default 3 simulated seconds)
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from qoslab import _core
from qoslab.backends.sim import lower
from qoslab.lower.lowered import _encode
from qoslab.scenario.load import load_scenario

NS = 1_000_000_000


def main() -> int:
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 3.0
    examples = sorted((Path(__file__).resolve().parent.parent / "examples").glob("*.toml"))
    started, runs = time.perf_counter(), 0
    for path in examples:
        scenario = load_scenario(path)
        for index, _ in enumerate(scenario.test or []):
            config = lower(scenario, test_index=index, source=path)
            config.duration_ns = min(config.duration_ns or NS, int(seconds * NS))
            _core.simulate(_encode(config), None)
            runs += 1
    print(
        f"pgo training: {runs} runs of {len(examples)} example scenarios "
        f"({seconds:g} simulated s each at most) in {time.perf_counter() - started:.1f} s",
        file=sys.stderr,
    )
    return 0 if runs else 1


if __name__ == "__main__":
    raise SystemExit(main())
