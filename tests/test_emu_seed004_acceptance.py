"""Issue 17's acceptance for seed 004: "The seed-004 download (2 Mb/s down, SLIP
acknowledgements up at 9.6-115.2 kb/s): simulator and Linux within 15 %".

benchmarks/emu_vs_sim_seed004.py runs :data:`SCENARIO`'s download at each rate of the
acknowledgements' serial line, the test's stack ``linux`` on both backends, on the
simulator and on this machine's Linux through the link emulator (``qoslab compare``'s
own functions), :data:`RUNS` times each; the mean transfer times must be within 15 %.

The downlink is seed004_asymmetric_wired.toml's 2 Mb/s wired line while the emulation
backend has no 802.11 cells; the WaveLAN file runs the same way: switching is the one
line :data:`SCENARIO`.

Needs root and network namespaces, as tests/test_emu_backend.py; skipped without them,
saying why. About three minutes under load: four rates, five runs per backend, each
emulated run 1.3-6.5 s of transfer plus building and removing its namespaces.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from emu_host import own_emu_registry, why_no_namespaces  # noqa: F401 (an autouse fixture)

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "benchmarks" / "emu_vs_sim_seed004.py"
SCENARIO = ROOT / "python" / "qoslab" / "examples" / "seed004_asymmetric_wired.toml"
RATES = ["9600 bps", "19.2 kbps", "38.4 kbps", "115.2 kbps"]
RUNS = 5
"""Runs per backend and rate: the machine's load now and then makes one emulated run
seconds slower (its link emulators late by tens of ms, which regroups the segments and
the ACKs), and the mean of five is the issue's "several runs" that one such run does
not carry past the tolerance."""
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
    for p in points:
        t = p["metrics"]["transfer_time_s"]
        sim, emu = t["sim"], t["emu"]
        # Every run of both backends finished its transfer.
        assert sim["n"] == emu["n"] == RUNS, p["rate"]
        diff = (emu["mean"] - sim["mean"]) / sim["mean"]
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
    for p in points:
        t = p["metrics"]["transfer_time_s"]
        diff = (t["emu"]["mean"] - t["sim"]["mean"]) / t["sim"]["mean"]
        assert abs(diff) <= TOLERANCE, "\n".join(table)
    # A slower acknowledgement line never makes the download faster, on either backend.
    for side in ("sim", "emu"):
        times = [p["metrics"]["transfer_time_s"][side]["mean"] for p in points]
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
