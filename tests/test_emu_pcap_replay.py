"""``pcap.replay`` on the emulation backend (qoslab's own sender and receiver in the
namespaces, timed with kernel SO_TIMESTAMPING timestamps, backends/emu/stream_tool.py;
the schedule and the record are the simulator's, methods/pcap_replay.py), run on
examples/pcap_replay_call.toml with a 10 ms delay on its 2 Mb/s access line: the
datagrams sent are the capture's IPv4 packets as tshark reads them, every one lost is
one the emulator's queue dropped, and the shortest delay is a voice packet's
store-and-forward time over both lines plus the delay, within the emulator's timing
error.

These tests need root and network namespaces (and tshark, to read the capture
independently); without them they are skipped, saying why.
"""

from __future__ import annotations

import shutil
import subprocess
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from emu_host import own_emu_registry, why_no_namespaces  # noqa: F401 (an autouse fixture)
from qoslab.scenario import load_scenario

WHY = why_no_namespaces() or (None if shutil.which("tshark") else "tshark is not installed")
pytestmark = pytest.mark.skipif(WHY is not None, reason=WHY or "")

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
DELAY_MS = 10.0
TIMING_ERROR_MS = 0.2
"""The emulator's timing error per crossing of a link (tests/test_emu_echo.py)."""
RATES_BPS = (100e6, 2e6)
"""The example's lines, laptop -> router -> server."""


def capture_ip_lengths() -> list[tuple[int, int]]:
    """(IPv4 total length, header length) of each IPv4 packet of the example's capture
    that is not a later fragment, as tshark dissects it."""
    out = subprocess.run(
        ["tshark", "-r", str(EXAMPLES / "video_call.pcap"), "-Y", "ip && ip.frag_offset == 0", "-T", "fields"]
        + ["-e", "ip.len", "-e", "ip.hdr_len"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return [(int(a), int(b)) for a, b in (line.split() for line in out.splitlines())]


def _run(tmp_path: Path) -> list[dict[str, Any]]:
    from qoslab.backends.emu import run_tests

    text = (EXAMPLES / "pcap_replay_call.toml").read_text()
    text = text.replace('rate = "2 Mbps"\n', f'rate = "2 Mbps"\ndelay = "{DELAY_MS:g} ms"\n', 1)
    path = tmp_path / "pcap_replay_call.toml"
    path.write_text(text)
    (tmp_path / "video_call.pcap").symlink_to(EXAMPLES / "video_call.pcap")
    _net, runs, link = run_tests(load_scenario(path), source=path)
    assert link == "emulated"
    return [r for run in runs for r in run.records]


def test_replay_counts_the_captures_packets_and_the_delay_is_the_lines(tmp_path: Path) -> None:
    lengths = capture_ip_lengths()
    assert len(lengths) > 700  # the example's call: 762 IPv4 packets
    as_recorded, faster = _run(tmp_path)
    for r in (as_recorded, faster):
        m = r["metrics"]
        assert r["parameters"]["replayed"] == len(lengths)
        assert m["sent"] == len(lengths) and m["sent"] == m["received"] + m["lost"]
        assert r["backend"] == "emu"
    # Every datagram lost is one the emulator's queue on the access line dropped,
    # router -> server (link 1, direction a -> b): the counts agree exactly.
    # (A replay void and sent again, timestamps.void_runs, left its drops in the counts.)
    for r in (as_recorded, faster):
        access = r["emulated_links"][1]["directions"][0]
        dropped = sum(d["frames"] for d in access["dropped"].values())
        if r["timestamps"]["void_runs"] == 0:
            assert r["metrics"]["lost"] == dropped
        else:
            assert r["metrics"]["lost"] <= dropped
    assert as_recorded["metrics"]["lost"] == 0  # 0.74 Mb/s with its bursts fits the 2 Mb/s line's queue
    assert faster["metrics"]["lost"] > 0  # three times as fast: 2.2 Mb/s into 2 Mb/s
    # The voice packets (the smallest size the capture has 100 times or more: one each
    # 20 ms for 6 s) often find
    # both lines idle: queued nowhere, one takes its frame's time on each line (preamble
    # and SFD 8 + Ethernet 18 + IPv4 20 + UDP 8 + payload bytes, the payload the packet's
    # IPv4 payload less the UDP header) plus the delay. The shortest delay is theirs: the
    # few smaller packets of the capture (one of each size) are all sent right behind a
    # video frame, and no datagram crosses faster than its own line times.
    voice = min(size for size, n in Counter(lengths).items() if n >= 100)
    payload = voice[0] - voice[1] - 8
    expected = sum((8 + 18 + 20 + 8 + payload) * 8 / rate * 1e3 for rate in RATES_BPS) + DELAY_MS
    assert expected == pytest.approx(10.92208)  # 226 bytes at 100 Mb/s and at 2 Mb/s, and 10 ms
    low, high = expected - 2 * TIMING_ERROR_MS, expected + 2 * TIMING_ERROR_MS
    assert low <= as_recorded["metrics"]["latency_min_ms"] <= high, (as_recorded["metrics"], expected)

    # The records have the simulator's keys and parameters (the same schedule).
    from qoslab.backends.sim import run_tests as run_sim

    _net, runs = run_sim(load_scenario(tmp_path / "pcap_replay_call.toml"), source=tmp_path / "pcap_replay_call.toml")
    for e, s in zip((as_recorded, faster), [r for run in runs for r in run.records], strict=True):
        assert set(e["metrics"]) == set(s["metrics"])
        assert e["parameters"] == s["parameters"]
