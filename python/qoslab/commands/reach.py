"""``qoslab reach``: who reaches whom, and where the packets of a failing pair died."""

from __future__ import annotations

from typing import Annotated

import typer

from qoslab.commands.common import ScenarioFile, SeedOption, emit_json, sim_failed, stderr
from qoslab.output_schema import stamp


def reach(
    file: ScenarioFile,
    json_out: Annotated[bool, typer.Option("--json", help="Print every pair's result as JSON on stdout.")] = False,
    seed: SeedOption = None,
) -> None:
    """Who reaches whom: 3 pings between every ordered pair of nodes with an address.

    Each pair runs in a fresh simulation (empty ARP and bridge tables). Where a pair
    fails, it prints the hop where the packets died and why, from the simulator's drop
    log (a station adapter refusing a foreign source MAC, NAT refusing an unsolicited
    packet, no route, …). Exit 1 if a simulation failed, 2 on bad input.

    Example: `qoslab reach examples/seed000_l2f_station.toml`
    """
    from qoslab.backends.sim import SimulationError, reachability
    from qoslab.report.terminal import render_reach
    from qoslab.scenario import load_scenario

    scenario = load_scenario(file)
    try:
        net, pairs = reachability(scenario, source=file, seed=seed)
    except SimulationError as err:
        sim_failed(err)
    speakers = [n for n in net.node_names if net.addresses.get(n)]
    render_reach(stderr, speakers, pairs)
    if json_out:
        emit_json(
            stamp(
                "reach",
                {
                    "scenario": scenario.scenario.name,
                    "file": str(file),
                    "backend": "sim",
                    "seed": scenario.scenario.seed if seed is None else seed,
                    "pairs": pairs,
                },
            )
        )
