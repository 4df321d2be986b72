"""The emulation backend: a scenario's plan built out of network namespaces on this
Linux machine and measured with real tools (issue 17).

Rooms: :mod:`.refusals` (what cannot run yet, and the host it needs), :mod:`.registry`
(what each run made, written before it is made; ``qoslab emu clean``), :mod:`.topology`
(namespaces, interfaces, addresses, routes, bridges, sysctls through netlink),
:mod:`.links` (a :class:`~.links.LinkRunner` makes each link: ``emulated`` through
the link emulator by default, or ``direct veth``), :mod:`.roles` (NAT with nftables, L3F with :mod:`.l3f`),
:mod:`.openvpn` (the real openvpn with a static key), :mod:`.measure` and
:mod:`.tcp_record` (ping and iperf3 read into the simulator's records), :mod:`.echo_tool`
and :mod:`.echo_record` (qoslab's own UDP echo, timed with kernel timestamps).

Each test runs on a network of its own, built before it and removed after it, as each
test of the simulator runs in a fresh simulation.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any

from qoslab.backends.emu.links import DirectVeth, EmulatedLink, LinkRunner, link_counters
from qoslab.backends.emu.refusals import check_host, check_scenario
from qoslab.backends.emu.topology import EmulationError

if TYPE_CHECKING:
    from qoslab.lower.lowered import Network
    from qoslab.methods import Plan, Search
    from qoslab.scenario.model import Scenario

BACKEND = "emu"


@dataclass
class EmuRun:
    """One test measured on the emulated network: its label, plan and records."""

    index: int
    label: str
    plan: Plan | Search
    records: list[dict[str, Any]]
    nodes: list[dict[str, Any]]
    """Each node's tables at the end of the test (:func:`measure.node_tables`)."""


def prepare(scenario: Scenario, *, source: str | Path | None = None) -> Network:
    """The scenario lowered and checked for this backend (``check --backend emu`` and
    ``run --backend emu`` both call it, so run refuses nothing check accepted)."""
    from qoslab.lower.network import lower_network
    from qoslab.methods import plan_test

    net = lower_network(scenario, source=source)
    check_scenario(net, source=source)
    for i in range(len(scenario.test)):
        plan_test(net, i, source=source)
    return net


@contextmanager
def _terminate_as_interrupt() -> Iterator[None]:
    """SIGTERM raises KeyboardInterrupt while the run lasts, so the same ``finally``
    removes the network on Ctrl-C and on ``kill`` (kill -9 leaves it to ``emu clean``)."""

    owner = os.getpid()

    def stop(signum: int, frame: FrameType | None) -> None:
        if os.getpid() != owner:
            # A process forked from this one (pyroute2 enters a namespace in a forked
            # helper and ends it with SIGTERM) must not run the owner's cleanup.
            os._exit(128 + signum)
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def run_tests(
    scenario: Scenario,
    *,
    source: str | Path | None = None,
    runner: LinkRunner | None = None,
    links: str = "emulated",
    seed: int | None = None,
    on_test: Callable[[str], None] | None = None,
) -> tuple[Network, list[EmuRun], str]:
    """Run every test of the scenario on its own emulated network, in file order.
    Returns the network, the runs, and the link implementation used: ``runner``, else
    ``links`` (``"emulated"``: the link emulator with the scenario's seed; ``"direct"``:
    veth pairs with no link model). ``seed`` (default: the scenario's) seeds the link
    emulator's loss streams, as it seeds the simulator's.

    Raises
    ------
    InputError
        If the host cannot run the backend or the scenario has what it cannot run yet.
    EmulationError
        If the network could not be built or a tool failed.
    """
    from qoslab.backends.emu import measure, registry, topology
    from qoslab.methods import plan_test, test_label

    check_host()
    net = prepare(scenario, source=source)
    if runner is None:
        runner = DirectVeth() if links == "direct" else EmulatedLink(scenario.scenario.seed if seed is None else seed)
    registry.clean()  # what crashed runs left
    kernel = measure.kernel()
    from qoslab.backends.emu import openvpn
    from qoslab.backends.emu import tunnels as user_space

    made = [openvpn.implementation()] if openvpn.ends(net.config) else []
    made += [user_space.IMPLEMENTATION] if user_space.ends(net.config) else []
    tunnels = "; ".join(made) or None
    readers = _readers()
    runs: list[EmuRun] = []
    with _terminate_as_interrupt():
        for i, t in enumerate(scenario.test):
            plan = plan_test(net, i, source=source, seed=seed)
            label = test_label(scenario, i)
            if on_test is not None:
                on_test(label)
            record_file = registry.RunRecord.start(str(source or ""), runner.implementation)
            topo = None
            try:
                topo = topology.build(net.config, record_file, runner)
                read = readers[t.method](topo, net, i, plan)
                records = read if isinstance(read, list) else [read]
                nodes = [{"test": label, **n} for n in measure.node_tables(topo)]
            finally:
                if topo is not None:
                    topology.teardown(topo)
                else:
                    registry.remove_run(record_file)
            reports = [h.report for h in topo.links if h.report is not None] if topo is not None else []
            tunnel_ends = [t.report for t in topo.user_tunnels if t.report is not None] if topo is not None else []
            for record in records:
                record.update(backend=BACKEND, kernel=kernel, link_implementation=runner.implementation)
                if tunnels is not None:
                    record["tunnel_implementation"] = tunnels
                if reports:
                    record["emulated_links"] = [link_counters(r) for r in reports]
                if tunnel_ends:
                    record["user_space_tunnels"] = [user_space.counters(r) for r in tunnel_ends]
            runs.append(EmuRun(i, label, plan, records, nodes))
    return net, runs, runner.implementation


def _readers() -> dict[str, Callable[..., Any]]:
    """Each method's reader: it measures the test on its built network and returns its
    record (or records) with the simulator's keys."""
    from qoslab.backends.emu import measure
    from qoslab.backends.emu.echo_record import echo_record
    from qoslab.backends.emu.stream_record import replay_record, rfc2544_records
    from qoslab.backends.emu.transfer_record import transfer_record
    from qoslab.methods.rfc2544 import METHODS as RFC2544_METHODS

    return {
        "ping": measure.ping_record,
        "udp.flow": measure.udp_record,
        "tcp.bulk": measure.tcp_record,
        "tcp.transfer": transfer_record,
        "udp.echo": echo_record,
        "pcap.replay": replay_record,
        **dict.fromkeys(RFC2544_METHODS, rfc2544_records),
    }


__all__ = ["BACKEND", "EmuRun", "EmulationError", "check_host", "check_scenario", "prepare", "run_tests"]
