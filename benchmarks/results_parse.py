"""What reading the core's results costs Python (issue 16 item 1): the JSON text of one
run read by ``json.loads`` (what the methods read before the results were typed) and by
``Results.model_validate_json`` (what ``qoslab.backends.sim.read_results`` does now: one
pass of pydantic-core over the text, every field checked against the generated models).

Runs, each simulated once, its text then read ``--repeat`` times by each reader (median):

- ``ping``: one ping of 3 requests between two hosts (a `qoslab reach` pair's run, the
  smallest result);
- ``switch_1000``: `qoslab bench`'s 1,000 hosts on one switch, 2 s (1,000 nodes with
  their ARP tables and drop counters: the largest result of the benchmarks);
- ``tcp_traced``: `qoslab bench`'s CUBIC flow over 30 Mb/s with 1 % loss, 10 s, with the
  sender's per-ACK trace (nine columns, one entry per ACK);
- ``atm_clip``: `qoslab bench`'s ATM network (the ``atm`` part), 2 s.

Usage: ``python benchmarks/results_parse.py [--repeat N]``. The machine is usually shared:
compare the two readers of one run, not runs of different days.
"""

from __future__ import annotations

import argparse
import functools
import json
import statistics
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from qoslab.plan.models import SimConfig


def _median_s(f: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        f()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _configs() -> dict[str, SimConfig]:
    from qoslab import bench
    from qoslab.backends.sim import lower_network
    from qoslab.methods.ping import ping_flow, run_length
    from qoslab.plan.models import TcpFlow
    from qoslab.scenario import loads_scenario

    net = lower_network(loads_scenario(bench.switch_scenario_text(2)))
    a, b = net.node_names[1], net.node_names[2]
    ping = ping_flow(net.node_index(a), str(net.destination(a, b)), count=3, interval_ns=10**9, payload=56)
    traced = bench.tcp_cubic_config(10.0)
    (flow,) = traced.flows or []
    assert isinstance(flow.root, TcpFlow)
    flow.root.trace = True
    return {
        "ping": net.with_flows([ping], run_length(3, 10**9)),
        "switch_1000": bench.switch_config(2.0),
        "tcp_traced": traced,
        "atm_clip": bench.atm_clip_config(2.0),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    from qoslab import _core
    from qoslab.backends.sim import _encode
    from qoslab.plan.results_models import Results

    print(f"{'run':<12} {'JSON':>9} {'json.loads':>11} {'typed':>9} {'ratio':>6}")
    for name, config in _configs().items():
        text = _core.simulate(_encode(config), None)
        loads = _median_s(functools.partial(json.loads, text), args.repeat)
        typed = _median_s(functools.partial(Results.model_validate_json, text), args.repeat)
        size = f"{len(text) / 1e3:.1f} kB"
        print(f"{name:<12} {size:>9} {loads * 1e3:>8.3f} ms {typed * 1e3:>6.3f} ms {typed / loads:>6.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
