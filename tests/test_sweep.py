"""python/qoslab/sweep.py: the points of a [sweep] in a fixed order, the values put in
place as the file writes them, one record per point and test."""

from __future__ import annotations

import doctest
import importlib

from qoslab.backends.sim import run_tests
from qoslab.scenario import loads_scenario
from qoslab.sweep import points, scenario_at

TWO_HOSTS = """
[scenario]
name = "two hosts"
seed = 5
[node.a]
role = "host"
address = "10.0.0.1/24"
[node.b]
role = "host"
address = "10.0.0.2/24"
[[link]]
type = "ethernet"
rate = "10 Mbps"
ends = ["a", "b"]
[[test]]
method = "udp.echo"
from = "a"
to = "b"
payload = 100
gap = "10 ms"
count = 20
"""


def test_doctests():
    assert doctest.testmod(importlib.import_module("qoslab.sweep")).failed == 0


def test_grid_and_zip_orders():
    grid = loads_scenario(TWO_HOSTS + '[sweep]\n"link[0].rate" = ["1 Mbps", "10 Mbps"]\n"test[0].payload" = [100, 200, 300]\n')
    assert [(p["link[0].rate"], p["test[0].payload"]) for p in points(grid)] == [
        ("1 Mbps", 100), ("1 Mbps", 200), ("1 Mbps", 300), ("10 Mbps", 100), ("10 Mbps", 200), ("10 Mbps", 300)
    ]
    zipped = loads_scenario(TWO_HOSTS + '[sweep]\nmode = "zip"\n"link[0].rate" = ["1 Mbps", "10 Mbps"]\n"test[0].payload" = [100, 200]\n')
    assert points(zipped) == [{"link[0].rate": "1 Mbps", "test[0].payload": 100}, {"link[0].rate": "10 Mbps", "test[0].payload": 200}]
    assert points(loads_scenario(TWO_HOSTS)) == []


def test_a_point_is_the_scenario_with_its_values_in_place():
    import tomllib

    data = tomllib.loads(TWO_HOSTS)
    sc = scenario_at(data, {"link[0].rate": "1 Mbps", "test[0].payload": 500}, "x.toml")
    assert (sc.link[0].rate, sc.test[0].payload, sc.test[0].gap) == (1_000_000, 500, 10_000_000)
    assert data["test"][0]["payload"] == 100, "the file's data is left as it was"
    # A point runs as the same scenario written out by hand: the same numbers.
    by_hand = loads_scenario(TWO_HOSTS.replace('rate = "10 Mbps"', 'rate = "1 Mbps"').replace("payload = 100", "payload = 500"))
    _, a = run_tests(sc)
    _, b = run_tests(by_hand)
    assert a[0].records == b[0].records
    # 500 bytes of payload and 28 of headers at 1 Mb/s, twice (echo): the round trip
    # exceeds twice the serialisation time of the 546-byte frame (preamble and gap aside).
    assert a[0].records[0]["metrics"]["rtt_min_ms"] > 2 * 546 * 8 / 1e6 * 1e3
