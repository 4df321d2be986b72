"""Traffic the scenario adds beside a test's: ``[[background]]`` flows, and seed 004's
adaptive upstreams.
"""

from __future__ import annotations

from ipaddress import IPv4Address
from typing import TYPE_CHECKING

from qoslab.lower.common import Port, _members
from qoslab.lower.links import _link_index
from qoslab.plan import models as plan
from qoslab.scenario.model import Scenario

if TYPE_CHECKING:
    from qoslab.lower.lowered import Network


def _adaptive(sc: Scenario, names: list[str], ports: list[list[Port]]) -> list[plan.AdaptiveConfig]:
    """Each router's ``adaptive`` table as an ``AdaptiveConfig`` (crates/sim/src/upstream.rs);
    the links were checked by :mod:`qoslab.scenario.checks`."""
    out = []
    for name, node in sc.node.items():
        a = getattr(node, "adaptive", None)
        if a is None:
            continue
        n = names.index(name)
        radio, modem = _link_index(sc, a.radio), _link_index(sc, a.modem)
        peer_name = next(e for e in _members(sc.link[modem]) if e != name)
        peer = names.index(peer_name)

        def port_on(k: int, link: int) -> int:
            return next(p.index for p in ports[k] if p.link == link)

        out.append(
            plan.AdaptiveConfig(
                node=n,
                radio_port=port_on(n, radio),
                modem_port=port_on(n, modem),
                peer=peer,
                peer_radio_port=port_on(peer, radio),
                initial_timeout_ns=a.initial_timeout,
                max_timeout_ns=a.max_timeout,
                max_attempts=a.max_attempts,
                ratio_window=a.window,
                ratio_min_samples=a.min_samples,
                low=a.low,
                high=a.high,
                probe_interval_ns=a.probe_interval,
                sample_interval_ns=a.sample_interval,
            )
        )
    return out


BACKGROUND_FLOW_BASE = 1000
"""Flow ids of ``[[background]]`` traffic: ``1000 + N``, clear of every method's ids."""

BACKGROUND_PORT = 9
"""UDP discard (RFC 863): background datagrams go to a port nothing answers on."""


def background_flows(net: Network, duration_ns: int) -> list[plan.UdpFlow]:
    """The scenario's ``[[background]]`` traffic as saturating or paced UDP flows."""
    from qoslab.methods.udp import wire_bytes

    flows = []
    for i, b in enumerate(net.scenario.background):
        src = net.node_index(b.from_)
        dst = net.destination(b.from_, b.to)
        mtu = next((p.mtu for p in net.ports[src] if p.address is not None), 1500)
        pps = b.rate / (8 * wire_bytes(b.payload, mtu)) if b.rate else 0.0
        stop = duration_ns if b.duration is None else min(duration_ns, b.start + b.duration)
        flows.append(
            plan.UdpFlow(
                kind="udp",
                id=BACKGROUND_FLOW_BASE + i,
                from_=src,
                to=IPv4Address(str(dst)),
                dst_port=BACKGROUND_PORT,
                payload=max(16, int(b.payload)),
                rate_pps=pps,
                start_ns=b.start,
                stop_ns=stop,
            )
        )
    return flows
