"""Issue 17's acceptance for seed 004: "The seed-004 download (2 Mb/s down, SLIP
acknowledgements up at 9.6-115.2 kb/s): simulator and Linux within 15 %".

benchmarks/emu_vs_sim_seed004.py runs :data:`SCENARIO`'s download at each rate of the
acknowledgements' serial line, the test's stack ``linux`` on both backends, on the
simulator and on this machine's Linux through the link emulator (``qoslab compare``'s
own functions), :data:`RUNS` times each; the mean transfer times must be within 15 %
(Linux's over the runs the machine did not hold up, :data:`CLEAN_RUNS`).

The downlink is the seed's own 2 Mb/s WaveLAN radio (examples/seed004_asymmetric.toml,
an 802.11 ad hoc cell without link acknowledgements), emulated by the simulator's own
cell (crates/emu shared.rs); seed004_asymmetric_wired.toml, with a wired 2 Mb/s line in
its place, runs the same way (the one line :data:`SCENARIO`).

Needs root and network namespaces, as tests/test_emu_backend.py; skipped without them,
saying why. About three minutes under load: four rates, five runs per backend, each
emulated run 1.3-6.5 s of transfer plus building and removing its namespaces.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
from pathlib import Path

import pytest
from emu_host import own_emu_registry, why_no_namespaces  # noqa: F401 (an autouse fixture)

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "benchmarks" / "emu_vs_sim_seed004.py"
SCENARIO = ROOT / "python" / "qoslab" / "examples" / "seed004_asymmetric.toml"
RATES = ["9600 bps", "19.2 kbps", "38.4 kbps", "115.2 kbps"]
RUNS = 5
"""Runs per backend and rate: the issue's "several runs"."""
CLEAN_RUNS = 3
"""Emulated runs per rate that the machine did not hold up, at least: a run whose ttcp
ends waited 0.1 s or more for a CPU, or whose link emulators were 10 ms late at their
99th percentile, measured the machine's load (benchmarks/emu_vs_sim_seed004.py
``TOOL_WAIT_S``, ``LATENESS_P99_US``: one such run took 14.1 s where the others took
6.3-6.4 s) and is left out of the emulation's mean."""
TOLERANCE = 0.15
"""Issue 17: "simulator and Linux within 15 %"."""

WHY = why_no_namespaces()
pytestmark = pytest.mark.skipif(WHY is not None, reason=WHY or "")


def _points(*extra: str) -> list[dict]:
    argv = [sys.executable, str(SCRIPT), str(SCENARIO), "--runs", str(RUNS), "--json", *extra]
    for rate in RATES:
        argv += ["--rate", rate]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=1200)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)["points"]


def test_seed004_download_sim_within_15_percent_of_linux_at_each_ack_line_rate() -> None:
    points = _points()
    assert [p["rate"] for p in points] == RATES
    table = []
    means = []
    for p in points:
        t = p["metrics"]["transfer_time_s"]
        sim, emu = t["sim"], t["emu"]
        # Every run of both backends finished its transfer.
        assert sim["n"] == emu["n"] == RUNS, p["rate"]
        clean = [v for v, run in zip(emu["values"], p["emu_runs"], strict=True) if not run["held_up"]]
        assert len(clean) >= CLEAN_RUNS, f"{p['rate']}: the machine held up too many runs: {p['emu_runs']}"
        emu = {"mean": statistics.fmean(clean), "sd": statistics.stdev(clean)}
        diff = (emu["mean"] - sim["mean"]) / sim["mean"]
        means.append((sim["mean"], emu["mean"], diff))
        table.append(
            f"{p['rate']}: sim {sim['mean']:.3f} ± {sim['sd']:.3f} s, emu {emu['mean']:.3f} ± {emu['sd']:.3f} s, "
            f"{100 * diff:+.1f} %; emu runs {p['emu_runs']}"
        )
        # The acknowledgements crossed the serial line (link 2, r2 -> r1) and nothing
        # was dropped on it for a reason other than the queue (no loss is configured).
        for links in p["emulated_links"]:
            serial = links[2]["directions"][0]
            assert serial["delivered"]["frames"] > 0
            assert set(serial["dropped"]) <= {"queue_full", "not_ip"}
    for _sim, _emu, diff in means:
        assert abs(diff) <= TOLERANCE, "\n".join(table)
    # A slower acknowledgement line never makes the download faster, on either backend.
    for side in (0, 1):
        times = [m[side] for m in means]
        assert times == sorted(times, reverse=True), (side, times)


def test_the_chain_forwards_over_its_one_way_serial_line(tmp_path: Path) -> None:
    """r1 never sends on the serial line (its route to the right LAN is the downlink), so
    its kernel's MAC is never seen there: the emulator must still address each datagram
    to r1's device itself, since Linux forwards only frames addressed to it (ip_forward
    drops a frame whose pkt_type is not PACKET_HOST). Every echo request goes down the
    2 Mb/s line and every reply up the serial line."""
    from qoslab.backends.emu import run_tests
    from qoslab.scenario import load_scenario

    network = SCENARIO.read_text().split("[[test]]")[0]
    path = tmp_path / "ping.toml"
    path.write_text(network + '[[test]]\nmethod = "ping"\nfrom = "left"\nto = "right"\ncount = 3\n')
    _net, runs, _impl = run_tests(load_scenario(path), source=path)
    record = runs[0].records[0]
    assert record["metrics"]["received"] == record["metrics"]["sent"] == 3
    serial = next(link for link in record["emulated_links"] if link["kind"] == "serial")
    r2_to_r1, r1_to_r2 = serial["directions"]
    assert r2_to_r1["delivered"]["frames"] == 3 and r1_to_r2["offered"]["frames"] == 0
