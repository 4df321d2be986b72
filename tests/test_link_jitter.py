"""Link jitter (issue 17 item 2): each frame's one-way delay on an Ethernet or serial link
is ``delay + U``, U uniform in [0, jitter] from the direction's own stream, frames never
overtaking. Through ``qoslab run``: a ``udp.echo`` round trip is the two line times plus
U₁ + U₂, so its spread and mean grow with the jitter as computed here; the plan carries
``jitter_ns`` in ns; a negative jitter is refused. On the emulation backend (root, namespaces) the same model runs through
``line_of_plan``: the round trips lie within the bounds computed here."""

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
from qoslab.lower import lower, plan_json
from qoslab.scenario import load_scenario, loads_scenario

ECHO = """
[scenario]
name = "UDP echo over a jittery line"
seed = 5

[node.a]
role = "host"
address = "10.0.0.1/24"

[node.b]
role = "host"
address = "10.0.0.2/24"

[[link]]
name = "a-b"
type = "ethernet"
rate = "{rate}"
delay = "{delay_ms:g} ms"
jitter = "{jitter}"
ends = ["a", "b"]

[[test]]
method = "udp.echo"
from = "a"
to = "b"
payload = {payload}
gap = "{gap}"
count = {count}
"""

PAYLOAD = 1000
SD = 5.0
"""Standard deviations a mean of seeded draws may stray (as in the Rust tests)."""


def line_ms(rate_bps: float, delay_ms: float, payload: int = PAYLOAD) -> float:
    """IEEE 802.3 §4.4.2: first preamble bit to last FCS bit of the echo's frame (preamble
    and SFD 8, header 14, IPv4 20, UDP 8, payload, FCS 4 bytes), plus the delay: one way."""
    return (8 + 14 + 20 + 8 + payload + 4) * 8 / rate_bps * 1e3 + delay_ms


def _run_cli(tmp_path: Path, jitter: str, count: int = 1000) -> dict[str, Any]:
    path = tmp_path / "jitter.toml"
    path.write_text(
        ECHO.format(rate="100 Mbps", delay_ms=1.0, jitter=jitter, payload=PAYLOAD, gap="10 ms", count=count)
    )
    proc = subprocess.run(
        [sys.executable, "-m", "qoslab", "run", str(path), "--json"], capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0, proc.stderr
    (record,) = json.loads(proc.stdout)["results"]
    metrics: dict[str, Any] = record["metrics"]
    return metrics


def test_rtt_spread_grows_with_jitter_as_two_uniform_draws(tmp_path: Path) -> None:
    n, jitter_ms = 1000, 2.0
    two_lines = 2 * line_ms(100e6, 1.0)  # 2 × (84.32 µs + 1 ms)
    still = _run_cli(tmp_path, "0 s", n)
    assert still["rtt_min_ms"] == pytest.approx(two_lines, abs=1e-6)
    assert still["rtt_max_ms"] == pytest.approx(two_lines, abs=1e-6)
    m = _run_cli(tmp_path, f"{jitter_ms:g} ms", n)
    assert m["received"] == n
    # Echoes 10 ms apart, each way on its own (10 ms > 1.08 ms + 2 ms): no frame waits for
    # the one before, so each round trip is two_lines + U₁ + U₂, U uniform in [0, J].
    assert m["rtt_min_ms"] >= two_lines - 1e-6
    assert m["rtt_max_ms"] <= two_lines + 2 * jitter_ms + 1e-6
    # U₁ + U₂ has mean J and variance 2·J²/12: the mean of n within SD standard deviations.
    sd_of_mean = math.sqrt(2 * jitter_ms**2 / 12 / n)
    assert abs(m["rtt_mean_ms"] - (two_lines + jitter_ms)) < SD * sd_of_mean, m["rtt_mean_ms"]
    # The spread: n triangular draws on [0, 2J] all within a width J has a chance below
    # n·(3/4)^(n−1) (each of the others within J of the least): none at n = 1000.
    assert m["rtt_max_ms"] - m["rtt_min_ms"] > jitter_ms


def test_the_plan_carries_the_jitter_in_ns() -> None:
    def link_json(jitter: str) -> dict[str, Any]:
        text = ECHO.format(rate="100 Mbps", delay_ms=1.0, jitter=jitter, payload=PAYLOAD, gap="10 ms", count=10)
        link: dict[str, Any] = plan_json(lower(loads_scenario(text), test_index=0))["links"][0]
        return link

    assert link_json("0 s")["jitter_ns"] == 0
    assert link_json("250 us")["jitter_ns"] == 250_000


def test_a_negative_jitter_is_refused_by_check_and_run(tmp_path: Path) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(ECHO.format(rate="100 Mbps", delay_ms=1.0, jitter="-1 ms", payload=PAYLOAD, gap="10 ms", count=10))
    line = next(i for i, text in enumerate(path.read_text().splitlines(), 1) if text.startswith("jitter"))
    for command in ("check", "run"):
        proc = subprocess.run(
            [sys.executable, "-m", "qoslab", command, str(path)], capture_output=True, text=True, check=False
        )
        assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
        assert f"bad.toml:{line}" in proc.stderr and "jitter" in proc.stderr, proc.stderr
        assert "expected" in proc.stderr and "found" in proc.stderr, proc.stderr


EMU_RATE_BPS, EMU_DELAY_MS, EMU_JITTER_MS, EMU_COUNT = 10e6, 5.0, 3.0, 100

TIMING_ERROR_MS = 0.2
"""The emulator's timing error per crossing of a link, as tests/test_emu_echo.py allows it
(its largest measured 99th percentile against kernel timestamps, 182 µs, rounded up)."""


@pytest.mark.skipif(why_no_namespaces() is not None, reason=why_no_namespaces() or "")
def test_an_emulated_line_has_the_jitter_through_line_of_plan(tmp_path: Path) -> None:
    from qoslab.backends.emu import run_tests

    path = tmp_path / "echo.toml"
    text = ECHO.format(
        rate="10 Mbps",
        delay_ms=EMU_DELAY_MS,
        jitter=f"{EMU_JITTER_MS:g} ms",
        payload=PAYLOAD,
        gap="20 ms",
        count=EMU_COUNT,
    )
    path.write_text(textwrap.dedent(text))
    _net, runs, link = run_tests(load_scenario(path), source=path)
    assert link == "emulated"
    (record,) = runs[0].records
    m = record["metrics"]
    assert m["received"] == EMU_COUNT
    serialization = 2 * (line_ms(EMU_RATE_BPS, 0.0))  # 2 × 843.2 µs
    turnaround = record["timestamps"]["server_turnaround_p99_ms"]
    # Each crossing: its line time + delay + U, U in [0, J], within the emulator's error.
    assert m["rtt_min_ms"] >= 2 * EMU_DELAY_MS + serialization - 2 * TIMING_ERROR_MS
    high = 2 * (EMU_DELAY_MS + EMU_JITTER_MS) + serialization + 2 * TIMING_ERROR_MS + turnaround
    assert m["rtt_p99_ms"] <= high, (m["rtt_p99_ms"], high)
    # The jitter shows: the spread of 100 round trips of U₁ + U₂ is more than the error.
    assert m["rtt_p90_ms"] - m["rtt_min_ms"] > EMU_JITTER_MS / 2
