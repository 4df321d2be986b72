"""Conservation (docs/metrics.md, "Conservation") over every test of every scenario in
examples/: for every flow, sent = received + dropped + in the network at the end; for
every link direction, frames in = frames out + dropped + queued.

Each test runs cut short (at most ``CUT_NS``), so that many runs end with packets in
queues, on wires, in CPU queues and in ATM trains: the identities must hold at any
instant, not only once the network is quiet. The counts are also checked against the
numbers each flow and link reports elsewhere in the results (the receiver's count, the
serializers' frame counts), which the conservation code does not compute."""

from __future__ import annotations

from pathlib import Path

import pytest
from qoslab.backends.sim import lower, simulate
from qoslab.plan.models import SimConfig
from qoslab.plan.results_models import FlowResult, LinkResult, Results
from qoslab.scenario import load_scenario

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
CUT_NS = 1_500_000_000
"""Longest simulated time of one test here: long enough for every example's traffic to
start (PPPoE, PPTP and OpenVPN sessions come up, ATM SVCs are set up), short enough for
the suite."""


def example_tests() -> list[tuple[str, int]]:
    cases = []
    for path in sorted(EXAMPLES.glob("*.toml")):
        scenario = load_scenario(path)
        cases += [(path.name, i) for i in range(len(scenario.test))]
    return cases


def check_flow(flow: FlowResult) -> None:
    c = flow.conservation
    where = f"flow {flow.id} ({flow.kind}): {c}"
    assert c is not None, where
    assert c.sent == c.received + c.dropped + c.in_network, where
    assert sum(c.drops.values()) == c.dropped, where
    if flow.kind == "tcp":
        assert c.unit == "segments", where
        # At least the SYN went out, and every segment carrying data is one of them.
        assert c.sent >= 1, where
    else:
        # The sender's and the receiver's own counts (crates/sim/src/app/stats.rs).
        assert c.unit == "datagrams", where
        # A late datagram (after its window, docs/metrics.md "Drained and late") arrived.
        assert (c.sent, c.received) == (flow.sent, flow.received + flow.late), where


def check_link(link: LinkResult) -> None:
    entries = link.conservation
    where = f"link {link.name} ({link.type}): {entries}"
    assert entries is not None, where
    # One per direction (p2p, ATM), one per member's transmitter (802.11).
    assert len(entries) == len(link.frames), where
    for c, sent in zip(entries, link.frames):
        assert c.frames_in == c.frames_out + c.dropped + c.queued, where
        if link.type in ("ethernet", "serial"):
            # A frame delivered or lost on the wire was serialized first; what waits in
            # the queue was not.
            assert c.frames_out <= sent <= c.frames_in, where
        elif link.type == "wifi":
            assert c.frames_out == sent, where
        else:
            assert c.frames_in == sent, where


def run_cut(config: SimConfig, cut_ns: int) -> Results:
    config = config.model_copy(update={"duration_ns": min(int(config.duration_ns), cut_ns)})
    return simulate(config)


@pytest.mark.parametrize(("example", "index"), example_tests())
def test_every_example_test_conserves_packets_and_frames(example: str, index: int) -> None:
    path = EXAMPLES / example
    config = lower(load_scenario(path), test_index=index, source=path)
    results = run_cut(config, CUT_NS)
    assert results.flows, "a test without flows checks nothing"
    for flow in results.flows:
        check_flow(flow)
    for link in results.links:
        check_link(link)


def test_a_run_cut_while_a_queue_is_full_counts_what_it_holds() -> None:
    """A saturating UDP flow into a slower link: at the cut the 100 Mb/s → 10 Mb/s
    router's queue is full, so in_network is at least its limit, and the drops are the
    router's drop-tail ones."""
    from qoslab.scenario import loads_scenario

    text = """
[scenario]
name = "overload"
seed = 1
[node.a]
role = "host"
address = "10.0.0.1/24"
gateway = "10.0.0.254"
[node.r]
role = "router"
address = ["10.0.0.254/24", "10.0.1.254/24"]
[node.b]
role = "host"
address = "10.0.1.1/24"
gateway = "10.0.1.254"
[[link]]
type = "ethernet"
rate = "100 Mbps"
ends = ["a", "r"]
[[link]]
type = "ethernet"
rate = "10 Mbps"
ends = ["r", "b"]
[[test]]
method = "udp.flow"
from = "a"
to = "b"
payload = 1000
rate = "0 bps"
duration = "2 s"
"""
    scenario = loads_scenario(text, "overload.toml")
    config = lower(scenario, test_index=0)
    udp = next(f.root for f in config.flows if f.root.kind == "udp")
    # Cut half a second into the stream: the 10 Mb/s queue filled long before.
    results = run_cut(config, udp.start_ns + 500_000_000)
    flow = next(f for f in results.flows if f.kind == "udp")
    check_flow(flow)
    c = flow.conservation
    assert c is not None
    queue_frames = config.links[1].root.queue_frames
    # The router's output queue toward b holds its limit, one more frame is on its
    # wire; the sender keeps 2 frames waiting at its own port (crates/sim,
    # SATURATION_BACKLOG), one on a's wire, and at most one in the router's hands.
    assert queue_frames + 1 <= c.in_network <= queue_frames + 5, c
    assert c.dropped > 0 and set(c.drops) == {"output queue full (drop-tail)"}, c
    for link in results.links:
        check_link(link)
