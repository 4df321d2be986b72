"""CPU time of lowering a large network into its plan, and of the plan's first encoding.

    python benchmarks/lowering.py [HOSTS] [RUNS]

HOSTS hosts (default 2,000) on one switch, the scenario text ``qoslab bench``'s
``switch_10000_hosts_scenario`` uses (qoslab.bench.switch_scenario_text), loaded once;
then RUNS times (default 7): ``lower_network`` (the typed plan of the network), and
``_encode`` of its plan (the JSON text the core reads, made once per network). Prints the
minimum and the median of each, in CPU milliseconds of this process (process_time), and
the length of the text. benchmarks/README.md ("Lowering a large network") has figures.
"""

from __future__ import annotations

import sys
import time

from qoslab.backends.sim import _encode, lower_network
from qoslab.bench import switch_scenario_text
from qoslab.scenario import loads_scenario


def main() -> None:
    hosts = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 7
    scenario = loads_scenario(switch_scenario_text(hosts))
    lower_network(scenario)  # the modules imported and warmed once
    lowering, encoding = [], []
    text = ""
    for _ in range(runs):
        t0 = time.process_time()
        net = lower_network(scenario)
        t1 = time.process_time()
        text = _encode(net.config)
        t2 = time.process_time()
        lowering.append(t1 - t0)
        encoding.append(t2 - t1)

    def ms(values: list[float]) -> str:
        return f"min {min(values) * 1e3:.1f} ms, median {sorted(values)[len(values) // 2] * 1e3:.1f} ms"

    print(f"{hosts} hosts: lower_network {ms(lowering)}; first encoding {ms(encoding)}; {len(text):,} characters")


if __name__ == "__main__":
    main()
