"""Sweeps: the points of a ``[sweep]`` (grid and zip order), the values put in place, and
``qoslab run`` running every point, each measured as a file with that value would be.

Numbers are checked against IEEE 802.3 arithmetic written here: one UDP datagram of
``P`` payload bytes on one full-duplex Ethernet link is ``P + 8 + 20 + 14 + 4`` frame
bytes plus the 8-byte preamble and SFD (802.3 clause 3.1.1, 4.2.3.2), so its one-way
latency is that many bits over the line rate (the link has no propagation delay here).
"""

from __future__ import annotations

import itertools
import json
import subprocess
import sys

import pytest
from conftest import TWO_HOSTS
from qoslab.errors import InputError
from qoslab.scenario.load import loads_scenario
from qoslab.sweep import run_sweep, sweep_points

BASE = (
    TWO_HOSTS.format(name="one link, swept", seed=3)
    + """[[link]]
type = "ethernet"
rate = "10 Mbps"
ends = ["a", "b"]
[[test]]
method = "udp.flow"
from = "a"
to = "b"
payload = 100
rate = "100 kbps"
duration = "1 s"
"""
)


def _latency_ms(payload: int, rate_bps: float) -> float:
    frame = payload + 8 + 20 + 14 + 4  # UDP, IPv4, Ethernet II header, FCS
    return (frame + 8) * 8 / rate_bps * 1e3  # + preamble and SFD


def test_grid_runs_every_combination_last_parameter_fastest():
    sc = loads_scenario(
        BASE + '[sweep]\n"link[0].rate" = ["10 Mbps", "100 Mbps"]\n"test[0].payload" = [100, 200, 300]\n'
    )
    points = sweep_points(sc)
    want = list(itertools.product(["10 Mbps", "100 Mbps"], [100, 200, 300]))
    assert [(p.values["link[0].rate"], p.values["test[0].payload"]) for p in points] == want
    assert [p.index for p in points] == list(range(6))
    # The values are in place, parsed as the loader parses a file.
    assert [(p.scenario.link[0].rate, int(p.scenario.test[0].payload)) for p in points] == [
        (10_000_000 if r == "10 Mbps" else 100_000_000, s) for r, s in want
    ]
    # The base scenario is untouched.
    assert sc.link[0].rate == 10_000_000 and int(sc.test[0].payload) == 100


def test_zip_pairs_the_nth_values():
    sc = loads_scenario(
        BASE + '[sweep]\nmode = "zip"\n"link[0].rate" = ["10 Mbps", "100 Mbps"]\n"test[0].payload" = [100, 200]\n'
    )
    assert [p.values for p in sweep_points(sc)] == [
        {"link[0].rate": "10 Mbps", "test[0].payload": 100},
        {"link[0].rate": "100 Mbps", "test[0].payload": 200},
    ]


def test_no_sweep_is_one_point():
    sc = loads_scenario(BASE)
    points = sweep_points(sc)
    assert len(points) == 1 and points[0].values == {} and points[0].scenario == sc


def test_a_grid_point_that_does_not_validate_is_refused_with_its_values():
    # 2 × 2 × 65 = 260 points: more than the loader checks together, so it checks each
    # value alone (all fine) and the pair from = to = "a" is found when the points are made.
    payloads = ", ".join(str(n) for n in range(100, 165))
    sc = loads_scenario(
        BASE + f'[sweep]\n"test[0].from" = ["a", "b"]\n"test[0].to" = ["b", "a"]\n"test[0].payload" = [{payloads}]\n'
    )
    with pytest.raises(InputError) as err:
        sweep_points(sc, source="x.toml")
    text = str(err.value)
    assert "test[0].from = 'a', test[0].to = 'a'" in text and "a test from a node to itself" in text


def test_each_point_measures_what_its_values_say():
    rates = [10e6, 100e6]
    payloads = [100, 1000]
    sc = loads_scenario(BASE + '[sweep]\n"link[0].rate" = ["10 Mbps", "100 Mbps"]\n"test[0].payload" = [100, 1000]\n')
    points = run_sweep(sc, jobs=2)
    records = [r for p in points for r in p.records()]
    assert [r["point"] for r in records] == [0, 1, 2, 3]
    for rec, (rate, payload) in zip(records, itertools.product(rates, payloads)):
        assert rec["sweep"] == {"link[0].rate": f"{rate / 1e6:g} Mbps", "test[0].payload": payload}
        assert rec["metrics"]["lost"] == 0
        assert rec["metrics"]["latency_ms"] == pytest.approx(_latency_ms(payload, rate), rel=1e-6)


def test_the_result_does_not_depend_on_how_many_points_run_at_once():
    sc = loads_scenario(BASE + '[sweep]\n"link[0].rate" = ["10 Mbps", "20 Mbps", "50 Mbps"]\n')
    one = [r for p in run_sweep(sc, jobs=1) for r in p.records()]
    two = [r for p in run_sweep(sc, jobs=2) for r in p.records()]
    assert json.dumps(one, sort_keys=True) == json.dumps(two, sort_keys=True)


def test_cli_runs_the_sweep_and_tags_records(tmp_path):
    path = tmp_path / "swept.toml"
    path.write_text(BASE + '[sweep]\n"link[0].rate" = ["10 Mbps", "100 Mbps"]\n')
    proc = subprocess.run(
        [sys.executable, "-m", "qoslab", "run", str(path), "--json"], capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert [(r["point"], r["sweep"]["link[0].rate"]) for r in out["results"]] == [(0, "10 Mbps"), (1, "100 Mbps")]
    assert "Sweep: one row per point and test" in proc.stderr
    assert "point 2/2: link[0].rate = 100 Mbps" in proc.stderr
