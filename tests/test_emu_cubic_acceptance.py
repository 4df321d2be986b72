"""Issue 17's acceptance for TCP: "TCP CUBIC over 30 Mb/s, a few ms RTT, 1 % loss:
simulator and Linux within 10 % over 5 runs each". benchmarks/emu_vs_sim_tcp.py runs
python/qoslab/examples/cubic_30mbps_loss.toml five times on the simulator and five
times on this machine's Linux through the link emulator (`--backend emu`), as a user
would; the simulator's mean goodput must be within 10 % of the kernel's.

Needs root and network namespaces, as tests/test_emu_backend.py; skipped without them,
saying why. About 1.5 minutes (ten 10-s transfers).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from emu_host import own_emu_registry, why_no_namespaces  # noqa: F401 (an autouse fixture)

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "benchmarks" / "emu_vs_sim_tcp.py"


WHY = why_no_namespaces()
pytestmark = pytest.mark.skipif(WHY is not None, reason=WHY or "")


def test_cubic_30mbps_4ms_1pct_sim_within_10_percent_of_linux_over_5_runs_each() -> None:
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--runs", "5", "--json"], capture_output=True, text=True, timeout=900
    )
    assert done.returncode == 0, done.stderr[-2000:]
    out = json.loads(done.stdout)
    runs = out["runs"]
    assert [(r["backend"], r["seed"]) for r in runs] == [(b, k) for b in ("sim", "emu") for k in range(1, 6)]
    mean = {b: sum(r["throughput_mbps"] for r in runs if r["backend"] == b) / 5 for b in ("sim", "emu")}
    # Every emulated run moved data through the loss (1 % of frames lost, so retransmissions).
    assert all(r["retransmits"] > 0 for r in runs if r["backend"] == "emu")
    diff = (mean["sim"] - mean["emu"]) / mean["emu"]
    assert abs(diff) <= 0.10, f"sim {mean['sim']:.2f} Mb/s, Linux {mean['emu']:.2f} Mb/s: {100 * diff:+.1f} %"
