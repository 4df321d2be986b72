"""``udp.echo`` on the emulation backend (qoslab's own echo client and server, timed with
kernel SO_TIMESTAMPING timestamps, backends/emu/echo_tool.py): over an emulated 10 Mb/s,
5 ms Ethernet link the median round trip is two IEEE 802.3 line times plus two delays,
within the emulator's measured timing error; counts are conserved; a loss the emulator
draws on the way back shows as reverse loss only, as its own counters say; the record
has the simulator's keys.

These tests need root and network namespaces; without them they are skipped, saying why.
"""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest
from emu_host import own_emu_registry, why_no_namespaces  # noqa: F401 (an autouse fixture)
from qoslab.scenario import load_scenario

WHY = why_no_namespaces()
pytestmark = pytest.mark.skipif(WHY is not None, reason=WHY or "")


RATE_BPS, DELAY_MS, PAYLOAD, COUNT = 10e6, 5.0, 1000, 200

ECHO = f"""
    [scenario]
    name = "udp echo over an emulated 10 Mb/s, 5 ms line"
    seed = 4

    [node.a]
    role = "host"
    address = "10.0.0.1/24"

    [node.b]
    role = "host"
    address = "10.0.0.2/24"

    [[link]]
    name = "a-b"
    type = "ethernet"
    rate = "10 Mbps"
    delay = "{DELAY_MS:g} ms"
    ends = ["a", "b"]
    LOSS

    [[test]]
    method = "udp.echo"
    from = "a"
    to = "b"
    payload = {PAYLOAD}
    gap = "5 ms"
    count = {COUNT}
"""

TIMING_ERROR_MS = 0.2
"""The emulator's timing error per crossing of a link: its largest measured 99th
percentile against kernel timestamps, 182 µs (benchmarks/README.md, "The link
emulator"), rounded up (qoslab.compare.TIMING_ERROR_MS)."""


def line_ms(payload: int) -> float:
    """IEEE 802.3 §4.4.2: the time from the first preamble bit to the last FCS bit of the
    echo's frame at 10 Mb/s (preamble and SFD 8, header 14, IPv4 20, UDP 8, payload,
    FCS 4 bytes), plus the propagation delay: one way."""
    return (8 + 14 + 20 + 8 + payload + 4) * 8 / RATE_BPS * 1e3 + DELAY_MS


def _run(tmp_path: Path, loss: str = "") -> dict[str, Any]:
    from qoslab.backends.emu import run_tests

    path = tmp_path / "echo.toml"
    path.write_text(textwrap.dedent(ECHO).replace("LOSS", loss))
    _net, runs, link = run_tests(load_scenario(path), source=path)
    assert link == "emulated"
    (record,) = runs[0].records
    return record


def test_median_rtt_is_two_line_times_within_the_emulators_timing_error(tmp_path: Path) -> None:
    record = _run(tmp_path)
    m = record["metrics"]
    assert (m["sent"], m["forward_received"], m["received"]) == (COUNT, COUNT, COUNT)
    assert m["sent"] == m["received"] + m["lost_forward"] + m["lost_reverse"]
    assert record["timestamps"]["rtt_timed"] == COUNT  # every echo had both kernel timestamps
    expected = 2 * line_ms(PAYLOAD)
    assert expected == pytest.approx(11.6864)  # 2 × (843.2 µs + 5 ms)
    # The round trip crosses the emulated link twice, each crossing within the emulator's
    # timing error (either side of its schedule), and waits in the echo server between
    # its receive and transmit timestamps: at most that server's own 99th percentile,
    # which it measured with the same kernel timestamps. The serialization alone is
    # 1.686 ms of the round trip, more than the whole allowance (0.8 ms + turnaround).
    turnaround = record["timestamps"]["server_turnaround_p99_ms"]
    low = expected - 2 * TIMING_ERROR_MS
    high = expected + 2 * TIMING_ERROR_MS + turnaround
    assert low <= m["rtt_p50_ms"] <= high, (m["rtt_p50_ms"], expected, turnaround)
    assert m["rtt_min_ms"] >= low


def test_the_record_has_the_simulators_keys(tmp_path: Path) -> None:
    from qoslab.backends.sim import run_tests as run_sim

    record = _run(tmp_path)
    path = tmp_path / "echo.toml"
    _net, runs = run_sim(load_scenario(path), source=path)
    (sim,) = runs[0].records
    assert set(record["metrics"]) == set(sim["metrics"])
    assert [set(s) for s in record["streams"]] == [set(s) for s in sim["streams"]]
    assert record["parameters"] == sim["parameters"]
    assert record["backend"] == "emu" and record["emulated_links"]


def test_loss_on_the_way_back_is_reverse_loss_as_the_emulator_counted_it(tmp_path: Path) -> None:
    record = _run(tmp_path, 'loss = {model = "bernoulli", rate = "5 %", direction = "reverse"}')
    m = record["metrics"]
    assert m["forward_received"] == m["sent"] == COUNT
    assert m["lost_forward"] == 0
    assert m["sent"] == m["received"] + m["lost_forward"] + m["lost_reverse"]
    assert m["lost_reverse"] > 0  # P(no loss in 200 at 5 %) = 0.95^200 ≈ 3.5e-5
    # The emulator's own count of what its loss model dropped b -> a: every lost echo,
    # and at most the other frames it carried that way (ARP, the learning ping's reply).
    (link,) = record["emulated_links"]
    back = link["directions"][1]  # [a -> b, b -> a] (docs/metrics.md, "The link emulator")
    dropped = back["dropped"].get("lost", {"frames": 0})["frames"]
    others = back["offered"]["frames"] - m["forward_received"]
    assert m["lost_reverse"] <= dropped <= m["lost_reverse"] + others
