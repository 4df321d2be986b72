"""An 802.11b cell through the link emulator (crates/emu driving the simulator's own
WifiCell, one TAP per member) against the simulator's run of the same scenario and seed:
a station saturating its AP with 1500-byte datagrams gets the simulator's throughput,
and both are the DCF computation of tests/test_seed000.py (IEEE 802.11-2020 clauses 16
and 10.3) within its spread.

Needs root and network namespaces (skipped otherwise, saying why).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from emu_host import own_emu_registry, why_no_namespaces  # noqa: F401 (an autouse fixture)
from qoslab.scenario import load_scenario
from test_seed000 import mbps

WHY = why_no_namespaces()
pytestmark = pytest.mark.skipif(WHY is not None, reason=WHY or "")

SATURATED = """
[scenario]
name = "one 802.11b station saturating its AP"
seed = 3

[node.ap]
role = "ap"
address = "10.0.0.1/24"

[node.sta]
role = "host"
address = "10.0.0.2/24"

[[link]]
name = "air"
type = "wifi"
standard = "802.11b"
rate = "11 Mbps"
preamble = "long"
ap = "ap"
stations = ["sta"]

[[test]]
method = "udp.flow"
from = "sta"
to = "ap"
payload = 1472
rate = "10 Mbps"
duration = "3 s"
"""


def test_a_saturated_cell_carries_the_simulators_throughput(tmp_path: Path) -> None:
    from qoslab.backends.emu import run_tests as run_emu
    from qoslab.backends.sim import run_tests as run_sim

    path = tmp_path / "saturated.toml"
    path.write_text(SATURATED)
    _, runs, _ = run_emu(load_scenario(path), source=path)
    emu = runs[0].records[0]
    _, sim_runs = run_sim(load_scenario(path), source=path)
    sim = sim_runs[0].records[0]
    # Offered 10 Mb/s is more than the cell carries: the cell's DCF sets what arrives.
    dcf = mbps(1500, 192)
    assert sim["metrics"]["throughput_mbps"] == pytest.approx(dcf, rel=0.05)
    assert emu["metrics"]["throughput_mbps"] == pytest.approx(sim["metrics"]["throughput_mbps"], rel=0.05)
    (cell,) = [c for c in emu["emulated_links"] if c["kind"] == "wifi"]
    assert [m["port"] for m in cell["members"]] == ["ap/wlan0", "sta/wlan0"]
