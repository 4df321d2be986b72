"""``tcp.transfer`` on the emulation backend (python/qoslab/backends/emu/transfer_tool.py
and transfer_record.py): a sized transfer over one emulated Ethernet line takes the time
the line's arithmetic gives, its record has the simulator's keys, its counts are
conserved, and the kernel granted twice the socket buffers asked (socket(7)).

Needs root and network namespaces, as tests/test_emu_backend.py; skipped without them,
saying why.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from emu_host import own_emu_registry, why_no_namespaces  # noqa: F401 (an autouse fixture)

WHY = why_no_namespaces()
pytestmark = pytest.mark.skipif(WHY is not None, reason=WHY or "")

QOSLAB = [sys.executable, "-m", "qoslab"]

RATE = 10_000_000
SIZE = 2_000_000
WINDOW = 65536
LINE = f"""
    [scenario]
    name = "one sized transfer over one line"
    seed = 1

    [node.a]
    role = "host"
    address = "10.0.0.1/24"

    [node.b]
    role = "host"
    address = "10.0.0.2/24"

    [[link]]
    type = "ethernet"
    rate = "{RATE} bps"
    ends = ["a", "b"]

    [[test]]
    method = "tcp.transfer"
    from = "a"
    to = "b"
    bytes = "{SIZE} B"
    window = "{WINDOW} B"
    tcp = {{ send_buffer = "{WINDOW} B" }}
"""

# What a full segment costs on the line: Linux sends 1448 data octets per segment on a
# 1500-byte MTU with timestamps (RFC 7323 §3: 10 octets of option, padded to 12), in an
# IPv4 header (20, RFC 791) and a TCP header (20 + 12, RFC 9293 §3.1), an Ethernet frame
# (14 header + 4 FCS) with its preamble and SFD (8) and inter-frame gap (12), IEEE 802.3
# §4.4.2 and §3.1.1.
PAYLOAD = 1500 - 20 - 20 - 12
FRAME_ON_WIRE = 1500 + 14 + 4 + 8 + 12


def _run(tmp_path: Path, text: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The scenario on the emulation backend (``run --backend emu --json``) and on the
    simulator: the test's record from each."""
    path = tmp_path / "transfer.toml"
    path.write_text(textwrap.dedent(text))
    done = subprocess.run(
        [*QOSLAB, "run", str(path), "--backend", "emu", "--json"], capture_output=True, text=True, timeout=180
    )
    assert done.returncode == 0, done.stderr
    emu = json.loads(done.stdout)["results"][0]
    done = subprocess.run([*QOSLAB, "run", str(path), "--json"], capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr
    sim = json.loads(done.stdout)["results"][0]
    return emu, sim


def _keys(value: Any, prefix: str = "") -> set[str]:
    """Every key path of a record (lists: their first element)."""
    out: set[str] = set()
    if isinstance(value, dict):
        for k, v in value.items():
            out.add(prefix + k)
            if k != "cpu_util_pct":
                out |= _keys(v, prefix + k + ".")
    elif isinstance(value, list) and value and isinstance(value[0], dict):
        out |= _keys(value[0], prefix + "[].")
    return out


EMU_ONLY = {
    "backend",
    "kernel",
    "link_implementation",
    "emulated_links",
    "socket_buffers",
    "tcp_info",
    "tool_cpu_wait_s",
}


def test_a_sized_transfer_over_an_emulated_line_takes_the_lines_time(tmp_path: Path) -> None:
    emu, sim = _run(tmp_path, LINE)
    m = emu["metrics"]
    assert emu["backend"] == "emu" and m["completed"] is True
    # The record has the simulator's keys (and the backend's own blocks).
    assert set(emu) == set(sim) | EMU_ONLY
    assert {k for k in _keys(emu) if k.split(".")[0] not in EMU_ONLY} == _keys(sim)
    assert emu["parameters"] == sim["parameters"]
    # Every byte arrived, in full segments of the arithmetic's size.
    assert m["bytes_received"] == SIZE
    assert m["mss_bytes"] == PAYLOAD
    # The window (64 KiB) holds more than the line's round trip (two frames' time), so
    # the line is busy from the first window on: the time is the line's for every
    # segment, plus the handshake, ARP and the first segment's way (a few ms).
    segments = math.ceil(SIZE / PAYLOAD)
    line_s = segments * FRAME_ON_WIRE * 8 / RATE
    assert line_s <= m["transfer_time_s"] <= line_s * 1.02 + 0.010, (m["transfer_time_s"], line_s)
    assert m["throughput_mbps"] == pytest.approx(SIZE * 8 / m["transfer_time_s"] / 1e6, rel=1e-5)
    # ttcp's two clocks inside the window: the receiver's from its first delivery to the
    # last byte, the transmitter's from its first write to the last acknowledgement.
    assert 0 < m["receiver_time_s"] < m["transfer_time_s"]
    assert m["sender_time_s"] > 0
    assert m["receiver_bytes_timed"] < SIZE
    # socket(7): "The kernel doubles this value (to allow space for bookkeeping overhead)":
    # the window sets SO_RCVBUF, the tcp table's send_buffer SO_SNDBUF.
    buffers = emu["socket_buffers"]
    assert buffers["sndbuf"]["asked"] == buffers["rcvbuf"]["asked"] == WINDOW
    assert buffers["sndbuf"]["granted"] == buffers["rcvbuf"]["granted"] == 2 * WINDOW
    # Conservation on the emulated line, per direction, in frames: what was read from a
    # TAP was delivered, dropped, queued or in flight at the stop; the data direction
    # carried at least one frame per segment.
    (link,) = emu["emulated_links"]
    for d in link["directions"]:
        dropped = sum(x["frames"] for x in d["dropped"].values())
        held = d["queued_at_stop"]["frames"] + d["in_flight_at_stop"]["frames"]
        assert d["offered"]["frames"] == d["delivered"]["frames"] + dropped + held
    assert link["directions"][0]["delivered"]["frames"] >= segments
    # The simulator's record of the same file agrees on the arithmetic too.
    assert line_s <= sim["metrics"]["transfer_time_s"] <= line_s * 1.02 + 0.010
