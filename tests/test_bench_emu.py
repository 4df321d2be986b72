"""`qoslab bench --only emu_link`: the link emulator beside a direct veth (issue 17, "Speed").

No timing is asserted (DESIGN.md: speed is measured in benchmarks/). What is checked is
that the entry is opt-in, is skipped with its reason where it cannot run, and, where it
runs (root and namespaces), that its figures are defined as docs/metrics.md says: Mb/s is
frames/s × 1514 bytes × 8 bits, percentiles are ordered, the emulator's counters balance
and the frames it delivered are the ones the far kernel counted.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

import pytest
from qoslab import bench, bench_emu
from qoslab.output_schema import schema

needs_root = pytest.mark.skipif(
    os.geteuid() != 0 or not os.path.exists("/dev/net/tun"),
    reason="network namespaces and TAP devices need root and /dev/net/tun",
)


def test_emu_link_runs_only_when_named() -> None:
    assert "emu_link" not in bench.select(None)
    assert bench.select(["emu_link"]) == ["emu_link"]
    assert bench.select(["ethernet_chain_10,emu_link"]) == ["ethernet_chain_10", "emu_link"]


def test_emu_link_without_root_is_skipped_with_the_reason(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    report = bench.run(["emu_link"])
    assert report.emulator is None and report.failed == []
    assert len(report.skipped) == 1 and report.skipped[0]["name"] == "emu_link"
    assert "root" in report.skipped[0]["reason"]
    assert "emulator" not in report.to_json()


def _check_record(record: dict[str, Any]) -> None:
    assert record["name"] == "emu_link" and record["frame_bytes"] == 1514
    by_path = {t["path"]: t for t in record["throughput"]}
    assert set(by_path) == {"veth", "emulated"}
    for tp in by_path.values():
        # docs/metrics.md: Mb/s of frame bytes without FCS, 10^6 bit/s; frames/s is rounded
        # to a frame and Mb/s to 0.1, so they agree to within those roundings.
        bits = 1514 * 8
        assert abs(tp["mbps"] - tp["frames_per_s"] * bits / 1e6) <= 0.05 + 0.5 * bits / 1e6, tp
        assert tp["frames_per_s"] > 0
    emulated = by_path["emulated"]
    # The emulated link against the veth of the same run, and per second of the emulator's
    # CPU (docs/metrics.md): ratios of the figures above, up to their roundings.
    ratio = emulated["frames_per_s"] / by_path["veth"]["frames_per_s"]
    assert abs(emulated["ratio_to_veth"] - ratio) <= 1e-4 + ratio * 1e-5, emulated
    per_cpu = emulated["mbps"] / emulated["emulator_cpu_share"]
    assert abs(emulated["mbps_per_emulator_cpu_s"] - per_cpu) <= 0.01 * per_cpu + 0.2, emulated
    e = emulated["emulator"]
    held = e["queued_at_stop"]["frames"] + e["in_flight_at_stop"]["frames"]
    dropped = sum(c["frames"] for c in e["dropped"].values())
    assert e["offered"]["frames"] == e["delivered"]["frames"] + dropped + held
    # The receive counter's frames over the span are frames the emulator wrote to b.
    assert emulated["frames_per_s"] * emulated["seconds"] <= e["delivered"]["frames"] * 1.001 + 1
    for t in record["timing"]:
        p = t["error" if t["path"] == "emulated" else "transit"]
        assert 0 < p["frames"] <= t["received"] <= t["sent"]
        assert p["p50_us"] <= p["p99_us"] <= p["p999_us"] <= p["max_us"]
    emulated_timing = next(t for t in record["timing"] if t["path"] == "emulated")
    # Kernel timestamps against the model: the emulator never delivers before the line
    # would (20 µs of slack for the two kernel clocks' reads).
    assert emulated_timing["error"]["p50_us"] > -20
    assert emulated_timing["emulator_lateness_ns"]["frames"] >= emulated_timing["received"]
    # Each frame was timed from its kernel timestamp on the sending TAP (crates/emu
    # stamps.rs; root can open the packet socket in the TAP's namespace).
    arrivals = emulated_timing["emulator_arrivals"]
    assert arrivals["clock"] == "kernel", arrivals
    assert arrivals["stamped"] >= emulated_timing["received"] and arrivals["unstamped"] == 0, arrivals


@needs_root
def test_emu_link_record_is_consistent() -> None:
    report = bench.run(["emu_link"], emu_seconds=0.5)
    if report.skipped:
        pytest.skip(report.skipped[0]["reason"])
    assert report.failed == [], report.failed
    assert report.emulator is not None and len(report.emulator) == 1
    _check_record(report.emulator[0])


@needs_root
def test_qoslab_bench_only_emu_link_json_follows_its_schema() -> None:
    jsonschema = pytest.importorskip("jsonschema")
    proc = subprocess.run(
        [sys.executable, "-m", "qoslab", "bench", "--only", "emu_link", "--quick", "--json"],
        capture_output=True,
        text=True,
        check=False,
    )
    if bench_emu.unavailable_reason() is not None:
        assert proc.returncode == 1 and "skipped emu_link" in proc.stderr
        return
    assert proc.returncode == 0, proc.stderr
    record = json.loads(proc.stdout)
    jsonschema.validate(record, schema("bench"))
    assert "link emulator vs direct veth" in proc.stderr
    _check_record(record["emulator"][0])


def test_the_timing_model_queues_frames_sent_back_to_back_behind_each_other() -> None:
    # IEEE 802.3 at 1 Gb/s, written out here: a 1514-byte frame's last bit is out
    # (1514 + 8 preamble/SFD + 4 FCS) × 8 ns after its first, and the next frame may start
    # 12 bytes of inter-frame gap (§4.4.2) later: (1514 + 8 + 4 + 12) × 8 = 12,304 ns.
    last_bit, slot, delay = 12_208, 12_304, 1_000_000
    sent = {b"1": 0, b"2": 1_000, b"3": 1_000_000, b"4": 1_000_000 + slot}
    assert bench_emu.model_arrivals(sent, emulated=True) == {
        b"1": last_bit + delay,
        b"2": slot + last_bit + delay,  # sent while 1 was on the wire: starts after it
        b"3": 1_000_000 + last_bit + delay,  # the line idle again: starts when sent
        b"4": 1_000_000 + slot + last_bit + delay,  # sent the instant the gap after 3 ends
    }
    assert bench_emu.model_arrivals(sent, emulated=False) == sent
