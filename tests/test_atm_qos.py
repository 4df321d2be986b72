"""ATM service categories from the scenario language (ATM Forum TM 4.0): the VC and
switch keys reach the simulator, and examples/atm_abr_vs_ubr.toml shows ABR changing the
result on a shared OC-3 port. Expected figures are computed here from the line rate."""

from __future__ import annotations

from pathlib import Path

from qoslab.backends.sim import lower, run_tests
from qoslab.lower.lowered import plan_json
from qoslab.scenario import load_scenario
from qoslab.scenario.load import loads_scenario
from qoslab.sweep import scenario_at

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "atm_abr_vs_ubr.toml"

OC3_CELLS_PER_S = 149_760_000 / 424
"""ITU-T G.707 §10.1.1: 149.76 Mb/s of 53-octet cells in the OC-3c payload."""

VBR = """
[scenario]
name = "a VBR PVC"
[node.a]
role = "host"
address = "192.0.2.1/24"
[node.b]
role = "host"
address = "192.0.2.2/24"
[node.sw]
role = "atm-switch"
queues = { cbr = 64, ubr = 4096 }
[[link]]
type = "atm"
ends = ["a", "sw"]
vcs = [{ vci = 100, service = "rt-vbr", pcr = "100 Mbps", scr = "10 Mbps", mbs = 200 }]
[[link]]
type = "atm"
ends = ["sw", "b"]
vcs = [{ vci = 100, service = "abr", pcr = "50 Mbps", mcr = "1 Mbps", icr = "10 Mbps", rif = 0.125, rdf = 0.25 }]
"""


def test_contract_keys_are_lowered_in_simulator_units():
    config = plan_json(lower(loads_scenario(VBR)))
    pvcs = [link["pvcs"][0] for link in config["links"]]
    # What the scenario leaves out keeps TM 4.0's defaults (MCR 0, ICR = PCR, RIF = RDF =
    # 1/16, §5.10.2), written out by the lowering.
    unset = {"scr_bps": None, "mbs_cells": None, "mcr_bps": 0, "icr_bps": None, "rif": 1 / 16, "rdf": 1 / 16}
    assert pvcs[0] == unset | {
        "vpi": 0,
        "vci": 100,
        "service": "rt-vbr",
        "pcr_bps": 100_000_000,
        "scr_bps": 10_000_000,
        "mbs_cells": 200,
    }
    assert pvcs[1] == unset | {
        "vpi": 0,
        "vci": 100,
        "service": "abr",
        "pcr_bps": 50_000_000,
        "mcr_bps": 1_000_000,
        "icr_bps": 10_000_000,
        "rif": 0.125,
        "rdf": 0.25,
    }
    switch = config["atm"]["switches"][0]
    assert switch["category_queue_cells"] == {"cbr": 64, "vbr": None, "abr": None, "ubr": 4096}
    assert switch["abr_ci_threshold_cells"] == 256


def test_abr_holds_a_fair_share_where_ubr_loses_the_frames():
    sc = load_scenario(EXAMPLE)
    measured = {}
    for service in ("abr", "ubr"):
        point = scenario_at(
            sc, {f"link[{i}].vcs[{j}].service": service for i, j in ((0, 0), (1, 0), (2, 0), (2, 1))}, source=EXAMPLE
        )
        point.test[0].duration = 500_000_000
        _, runs = run_tests(point, source=EXAMPLE)
        flow = next(f for f in runs[0].results.flows if f.kind == "udp" and f.id < 1000)
        measured[service] = (flow.throughput_bps, runs[0].results.atm)
    # Half the port's cells, less one in Nrm = 32 for forward RM cells (TM 4.0 §5.10.4
    # rule 3), in 1472-octet datagrams of 32 cells (1472 + 28 + 8 + 8 octets).
    fair = OC3_CELLS_PER_S / 2 * 31 / 32 / 32 * 1472 * 8
    abr_bps, abr_atm = measured["abr"]
    ubr_bps, ubr_atm = measured["ubr"]
    assert abs(abr_bps - fair) / fair < 0.1, (abr_bps, fair)
    assert sum(abr_atm.cells_lost) == 0 and abr_atm.frames_corrupt == 0
    assert sum(ubr_atm.cells_lost) > 0 and ubr_atm.frames_corrupt > 0
    assert ubr_bps < abr_bps
