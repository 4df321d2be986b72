"""Many hosts on one switch (issue 14): 255 and more ports on a node used to end
`qoslab run` in a traceback ("port 255 out of the MAC scheme's range") after
`qoslab check` had passed.

What is checked, and against what:
- every port MAC is a locally administered unicast address (IEEE 802-2014 §8.4: the
  U/L bit, 0x02 of the first octet, set; the I/G bit, 0x01, clear) and no two ports
  share one, for switches of 255, 256, 1,000 and 10,000 hosts;
- scenarios within the old scheme keep their MACs: ``02:00:NN:NN:00:PP``, node index
  and port index + 1, as backends/sim.py documented it before (the seed-000 examples'
  captures and tables are unchanged);
- chosen pairs ping each other across the switch (the learning bridge at ports past
  255 and 1,000);
- the limits are the language's: more ports on a node than the MAC scheme can number
  is refused by `qoslab check` with exit 2, the place and the limit.
"""

from __future__ import annotations

import json
import subprocess
import sys
from ipaddress import IPv4Address
from pathlib import Path

import pytest
from qoslab.backends.sim import format_mac, lower_network, mac_for, run_tests
from qoslab.errors import InputError
from qoslab.lower.lowered import plan_json
from qoslab.scenario import checks, loads_scenario


def host_address(i: int) -> str:
    # 10.0.0.0/16 holds 65,534 hosts; host i gets 10.0.0.0 + i + 1.
    return str(IPv4Address("10.0.0.0") + i + 1)


def switch_scenario(n: int, pairs: list[tuple[int, int]]) -> str:
    out = ["[scenario]", f'name = "{n} hosts on one switch"', "seed = 1", "", "[node.sw]", 'role = "switch"', ""]
    for i in range(n):
        out += [f"[node.h{i}]", 'role = "host"', f'address = "{host_address(i)}/16"', ""]
    for i in range(n):
        out += ["[[link]]", 'type = "ethernet"', 'rate = "100 Mbps"', f'ends = ["h{i}", "sw"]', ""]
    for a, b in pairs:
        out += ["[[test]]", 'method = "ping"', f'from = "h{a}"', f'to = "h{b}"', "count = 2", 'interval = "0.1 s"', ""]
    return "\n".join(out)


def all_macs(config: dict) -> list[tuple[int, ...]]:
    macs = [tuple(p["mac"]) for n in config["nodes"] for p in n["ports"]]
    return macs


def check_switch(n: int) -> None:
    # Pairs across the old limit (port 255 of the switch is host 255's), the first and
    # the last host, both ways.
    pairs = [(0, n - 1), (n - 1, 0), (254, 255 % n), (n // 2, 1)]
    scenario = loads_scenario(switch_scenario(n, pairs))
    net = lower_network(scenario)
    macs = all_macs(plan_json(net.config))
    assert len(macs) == 2 * n  # each host's port and each of the switch's n ports
    assert len(set(macs)) == len(macs), "two ports share a MAC"
    for mac in macs:
        assert len(mac) == 6 and all(0 <= b <= 255 for b in mac)
        assert mac[0] & 0x02, f"{format_mac(mac)}: U/L bit clear (not locally administered)"
        assert not mac[0] & 0x01, f"{format_mac(mac)}: I/G bit set (a group address)"
    sw = next(node for node in plan_json(net.config)["nodes"] if node["name"] == "sw")
    assert len(sw["ports"]) == n
    _, runs = run_tests(scenario)
    for (a, b), run in zip(pairs, runs):
        (record,) = run.records
        m = record["metrics"]
        assert (m["sent"], m["received"]) == (2, 2), f"h{a} -> h{b}: {m}"


@pytest.mark.parametrize("n", [255, 256, 1000])
def test_switch_of_n_hosts_runs_with_unique_macs(n):
    check_switch(n)


@pytest.mark.slow
def test_switch_of_10000_hosts_runs_with_unique_macs():
    check_switch(10_000)


def test_small_scenarios_keep_the_old_macs():
    # The scheme before issue 14, as backends/sim.py documented it: 02:00:NN:NN:00:PP.
    for node in (0, 1, 2, 255, 256, 65_535):
        for port in (0, 1, 100, 253):
            assert mac_for(node, port) == [0x02, 0x00, node >> 8, node & 0xFF, 0x00, port + 1]


def test_macs_are_unique_across_the_whole_range():
    # Distinct (node, port) pairs give distinct MACs: the map is injective on a grid
    # that covers every octet boundary, up to the limits.
    nodes = [0, 1, 254, 255, 256, 65_535, 65_536, 1 << 20, checks.MAX_NODES - 1]
    ports = [0, 1, 253, 254, 255, 256, 9_999, checks.MAX_PORTS_PER_NODE - 1]
    seen = {tuple(mac_for(n, p)) for n in nodes for p in ports}
    assert len(seen) == len(nodes) * len(ports)
    for mac in seen:
        assert mac[0] == 0x02
        assert mac[4:] != (0, 0), "02:xx:xx:xx:00:00 is kept free"
    with pytest.raises(ValueError):
        mac_for(checks.MAX_NODES, 0)
    with pytest.raises(ValueError):
        mac_for(0, checks.MAX_PORTS_PER_NODE)


def test_the_limits_fit_the_core():
    # The simulator numbers ports with a u16 and nodes with a u32
    # (crates/plan, PortRef, as its generated schema says): the language's limits are within them.
    schema = json.loads((Path(__file__).parent.parent / "schema" / "plan.schema.json").read_text())
    port_ref = schema["$defs"]["PortRef"]["properties"]
    assert port_ref["node"]["format"] == "uint32" and port_ref["port"]["format"] == "uint16"
    assert checks.MAX_PORTS_PER_NODE <= 1 << 16
    assert checks.MAX_NODES <= 1 << 32


def test_too_many_ports_on_a_node_is_refused_with_its_place(monkeypatch):
    # The rule, at a limit small enough to write out: 4 links on a switch allowed 3.
    monkeypatch.setattr(checks, "MAX_PORTS_PER_NODE", 3)
    with pytest.raises(InputError) as info:
        loads_scenario(switch_scenario(4, [(0, 1)]))
    (p,) = info.value.problems
    assert p.key == "node.sw"
    assert p.line == 5  # [node.sw]
    assert "4 ports" in p.message and p.expected == "at most 3 links and TAP tunnels on one node"


def test_too_many_nodes_is_refused_with_its_place(monkeypatch):
    monkeypatch.setattr(checks, "MAX_NODES", 3)
    with pytest.raises(InputError) as info:
        loads_scenario(switch_scenario(3, [(0, 1)]))  # the switch and 3 hosts: 4 nodes
    (p,) = info.value.problems
    assert p.key == "node.h2" and p.expected == "at most 3 nodes"


@pytest.mark.slow
def test_check_refuses_a_node_past_the_port_limit(tmp_path):
    # 65,536 links between two nodes: one more than a node's 16-bit port field holds
    # (0 is kept free). `qoslab check` exits 2 naming both nodes, no traceback.
    n = checks.MAX_PORTS_PER_NODE + 1
    lines = [
        "[scenario]",
        'name = "past the port limit"',
        "",
        "[node.a]",
        'role = "host"',
        "",
        "[node.b]",
        'role = "switch"',
        "",
    ]
    lines += ['[[link]]\ntype = "ethernet"\nends = ["a", "b"]\n'] * n
    path = tmp_path / "limit.toml"
    path.write_text("\n".join(lines))
    proc = subprocess.run([sys.executable, "-m", "qoslab", "check", str(path)], capture_output=True, text=True)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert f"{path}:4:7: node.a: 65,536 ports" in proc.stderr
    assert f"{path}:7:7: node.b: 65,536 ports" in proc.stderr
    assert "at most 65,535 links and TAP tunnels on one node" in proc.stderr
