"""``qoslab compare``: a small ping scenario over an emulated Ethernet link on both
backends. Both round trips agree within the spread rule of docs/compare.md; the report's
difference is the emulation runs' mean minus the simulator runs' mean, computed here from
the per-run records the command also writes; the rule's verdict is recomputed here; the
JSON validates against its schema; without root it refuses (exit 2) before running
anything, and an interrupted compare keeps the runs that finished.

The comparison itself needs root and network namespaces (skipped without, saying why);
the refusal and the interruption do not.
"""

from __future__ import annotations

import json
import math
import statistics
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from emu_host import why_no_namespaces

PING = """
    [scenario]
    name = "ping over an emulated Ethernet link"
    seed = 7

    [node.a]
    role = "host"
    address = "10.0.0.1/24"

    [node.b]
    role = "host"
    address = "10.0.0.2/24"

    [[link]]
    type = "ethernet"
    rate = "10 Mbps"
    delay = "2 ms"
    ends = ["a", "b"]

    [[test]]
    method = "ping"
    from = "a"
    to = "b"
    count = 10
    interval = "0.1 s"
"""

RUNS = 3


WHY = why_no_namespaces("qoslab compare runs the emulation backend: it needs root")


def _scenario(tmp_path: Path) -> Path:
    path = tmp_path / "ping.toml"
    path.write_text(textwrap.dedent(PING))
    return path


def _values(runs: list[dict[str, Any]], metric: str) -> list[float]:
    return [float(r["records"][0]["metrics"][metric]) for r in runs]


@pytest.mark.skipif(WHY is not None, reason=WHY or "")
def test_ping_agrees_within_the_spread_and_the_diff_is_emu_minus_sim(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import jsonschema
    from qoslab.output_schema import schema

    monkeypatch.setenv("QOSLAB_EMU_REGISTRY", str(tmp_path / "registry"))
    out = tmp_path / "cmp"
    done = subprocess.run(
        [sys.executable, "-m", "qoslab", "compare", str(_scenario(tmp_path)), "--runs", str(RUNS), "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads((out / "compare.json").read_text())
    runs = json.loads((out / "runs.json").read_text())
    jsonschema.validate(report, schema("compare"))
    assert report["complete"] and (out / "compare.html").exists()
    assert report["sim_seeds"] == report["emu_seeds"] == [7, 8, 9]
    assert [r["seed"] for r in runs["sim"]] == [7, 8, 9] and len(runs["emu"]) == RUNS
    (test,) = report["tests"]
    by_name = {m["metric"]: m for m in test["metrics"]}
    for metric in ("rtt_mean_ms", "rtt_min_ms", "sent", "received", "loss_pct"):
        m = by_name[metric]
        sim, emu = _values(runs["sim"], metric), _values(runs["emu"], metric)
        assert m["diff"] == pytest.approx(statistics.fmean(emu) - statistics.fmean(sim), abs=1e-12)
        # docs/compare.md: within when |diff| <= 2 sqrt(sd_sim^2/n + sd_emu^2/m) + floor.
        se = math.sqrt(statistics.stdev(sim) ** 2 / len(sim) + statistics.stdev(emu) ** 2 / len(emu))
        assert m["within"] == (abs(m["diff"]) <= 2 * se + m["floor"]), metric
    # The shortest round trip (the first also waits for ARP): 2 x (IEEE 802.3 line time
    # of the echo frame, preamble to FCS: 8 + 14 + 20 + 8 + 56 ICMP data + 4 = 110
    # bytes at 10 Mb/s, 88 µs, + 2 ms).
    expected = 2 * ((8 + 14 + 20 + 8 + 56 + 4) * 8 / 10e6 * 1e3 + 2.0)
    assert _values(runs["sim"], "rtt_min_ms") == pytest.approx([expected] * RUNS, abs=1e-6)
    rtt = by_name["rtt_mean_ms"]
    # Both sides' round trip within the spread: the emulated link crossed twice, each
    # within the emulator's timing error (0.2 ms per crossing, compare.TIMING_ERROR_MS).
    assert test["crossings"] == 2 and rtt["floor"] == pytest.approx(0.4)
    assert rtt["within"], rtt
    assert by_name["sent"]["within"] and by_name["sent"]["diff"] == 0


def _cli_with(tmp_path: Path, patch: str, *args: str) -> subprocess.CompletedProcess[str]:
    """``qoslab compare`` in a child Python whose ``patch`` ran first (the CLI's Ctrl-C
    path leaves with os._exit, so it cannot run inside pytest's process)."""
    code = (
        textwrap.dedent(patch)
        + "\nimport sys\nfrom qoslab.cli import main\nsys.argv = ['qoslab', *sys.argv[1:]]\nmain()\n"
    )
    return subprocess.run(
        [sys.executable, "-c", code, "compare", str(_scenario(tmp_path)), *args],
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_without_root_compare_refuses_before_running_anything(tmp_path: Path) -> None:
    done = _cli_with(tmp_path, "import os\nos.geteuid = lambda: 1000\n", "--out", str(tmp_path / "cmp"))
    assert done.returncode == 2, done.stderr
    assert "needs root" in done.stderr and "--backend" in done.stderr
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "cmp" / "runs.json").exists()


def test_an_interrupted_compare_keeps_the_runs_that_finished(tmp_path: Path) -> None:
    # The host check passes and the first emulation run is "interrupted" (Ctrl-C):
    # the simulator's runs, finished before it, are kept and compared.
    patch = """
        import qoslab.backends.emu as emu
        import qoslab.compare as compare
        emu.check_host = lambda: None
        def interrupted(*args, **kwargs):
            raise KeyboardInterrupt
        compare.run_emu = interrupted
    """
    out = tmp_path / "cmp"
    done = _cli_with(tmp_path, patch, "--runs", "2", "--out", str(out))
    assert done.returncode == 130, done.stderr
    runs = json.loads((out / "runs.json").read_text())
    assert [r["seed"] for r in runs["sim"]] == [7, 8] and runs["emu"] == []
    report = json.loads((out / "compare.json").read_text())
    assert report["complete"] is False and report["sim_seeds"] == [7, 8] and report["emu_seeds"] == []
    rtt = next(m for m in report["tests"][0]["metrics"] if m["metric"] == "rtt_mean_ms")
    assert rtt["sim"]["n"] == 2 and rtt["emu"]["n"] == 0 and rtt["reasons"] == ["emu_not_run"]
