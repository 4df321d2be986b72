"""`qoslab reach` on a large network: interchangeable nodes are pinged through one
representative, and what the representative finds is what every pair it stands for
would find (checked here by pinging sampled pairs in runs of their own)."""

from __future__ import annotations

import random

from qoslab.backends.sim import reachability, simulate
from qoslab.methods.ping import ping_flow, rtt_metrics, run_length
from qoslab.reach_groups import EXHAUSTIVE_UP_TO
from qoslab.scenario import loads_scenario


def star(hosts: int, *, lonely: int = 0) -> str:
    """``hosts`` hosts on one switch with a router, in 10.0.0.0/16 behind gateway r; one
    host with another CPU; one named by a test; and ``lonely`` hosts in 10.1.0.0/16 with
    no gateway (they reach only each other)."""
    lines = [
        "[scenario]",
        'name = "star"',
        "seed = 1",
        "[node.sw]",
        'role = "switch"',
        "[node.r]",
        'role = "router"',
        'address = "10.0.0.1/16"',
    ]
    names = []
    for i in range(hosts):
        lines += [
            f"[node.h{i}]",
            'role = "host"',
            f'address = "10.0.{i // 200}.{i % 200 + 2}/16"',
            'gateway = "10.0.0.1"',
        ]
        names.append(f"h{i}")
    for i in range(lonely):
        lines += [f"[node.l{i}]", 'role = "host"', f'address = "10.1.0.{i + 2}/16"']
        names.append(f"l{i}")
    lines += [
        "[node.odd]",
        'role = "host"',
        'address = "10.0.9.9/16"',
        'gateway = "10.0.0.1"',
        'cpu = "pentium-ii-300mhz"',
    ]
    names += ["odd", "r"]
    for n in names:
        if n != "r":
            lines += ["[[link]]", 'type = "ethernet"', 'rate = "100 Mbps"', f'ends = ["{n}", "sw"]']
    lines += ["[[link]]", 'type = "ethernet"', 'rate = "100 Mbps"', 'ends = ["r", "sw"]']
    lines += ["[[test]]", 'method = "ping"', 'from = "h1"', 'to = "odd"']
    return "\n".join(lines) + "\n"


def direct(scenario, a: str, b: str) -> int:
    """Replies to 3 pings from ``a`` to ``b`` in a fresh run of their own."""
    from qoslab.backends.sim import lower_network

    net = lower_network(scenario)
    flow = ping_flow(net.node_index(a), str(net.destination(a, b)), count=3, interval_ns=10**9, payload=56)
    results = simulate(net.with_flows([flow], run_length(3, 10**9)))
    return rtt_metrics(next(f for f in results.flows if f.id == flow.id))["received"]


def test_groups_stand_for_every_ordered_pair_and_agree_with_direct_pings():
    scenario = loads_scenario(star(80, lonely=6))
    speakers = 80 + 6 + 2
    assert speakers > EXHAUSTIVE_UP_TO
    _, pairs = reachability(scenario)
    # Every ordered pair of distinct speakers is stood for exactly once.
    assert sum(p.get("represents", 1) for p in pairs) == speakers * (speakers - 1)
    # The routed hosts form one group (h1 is named by the test, odd has its own CPU,
    # the lonely hosts another subnet and no gateway): far fewer runs than pairs.
    sizes = {p["from"]: p.get("from_group", 1) for p in pairs}
    assert sorted(sizes.values()) == [1, 1, 1, 6, 79]
    assert len(pairs) < 40
    # Outcomes as the network decides them: the lonely hosts reach only each other
    # (no gateway to 10.0.0.0/16) and nobody outside reaches them.
    lonely = next(n for n, s in sizes.items() if s == 6)
    for p in pairs:
        assert p["reachable"] == ((p["from"] == lonely) == (p["to"].startswith("l"))), p
    # What a representative found is what its members find, pinged one pair at a time.
    rng = random.Random(7)
    outcome = {}
    groups = {"h": [f"h{i}" for i in range(80) if i != 1], "l": [f"l{i}" for i in range(6)]}
    for p in pairs:
        outcome[
            (
                p["from"][0] if p.get("from_group", 1) > 1 else p["from"],
                p["to"][0] if p.get("to_group", 1) > 1 else p["to"],
            )
        ] = p["received"]
    for (fa, fb), received in outcome.items():
        a = rng.choice(groups[fa]) if fa in groups else fa
        b = rng.choice([n for n in groups[fb] if n != a]) if fb in groups else fb
        assert direct(scenario, a, b) == received, (a, b)


def test_small_networks_are_pinged_pair_by_pair():
    scenario = loads_scenario(star(20))
    _, pairs = reachability(scenario)
    n = 20 + 2
    assert len(pairs) == n * (n - 1)
    assert not any("represents" in p for p in pairs)
