"""The lowering itself: :func:`lower_network` builds the plan of a scenario's network
(nodes, ports, addresses, links, tunnels), :class:`Network` keeps it with the names to
read it by and adds a test's traffic, :func:`lower` and :func:`planned_config` give the
plan of one test.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager
from ipaddress import IPv4Address, IPv4Interface
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import TypeAdapter

from qoslab.lower.atm import atm_config, atm_link, is_lane_port
from qoslab.lower.common import (
    ARP_TIMEOUT_NS,
    BRIDGE_AGING_NS,
    NAT_UDP_TIMEOUT_NS,
    REASSEMBLY_TIMEOUT_NS,
    SECOND_NS,
    SERIAL_QUEUE_FRAMES,
    WIFI_MTU,
    LocatedProblems,
    Port,
    _members,
    mac_for,
)
from qoslab.lower.flows import _adaptive
from qoslab.lower.ipsec import _ipsec_tunnels
from qoslab.lower.links import _impairments, _queue, _wifi
from qoslab.lower.lowered import Network, RunConfig
from qoslab.lower.nodes import _assign, _cpu, _nat_outside, _port_forwards, _routes, _Segments
from qoslab.lower.pptp import _pptp_tunnels
from qoslab.lower.refusals import _refuse_unsupported
from qoslab.lower.vpn import _tap_bridge, _tap_ports, _vpn_tunnels
from qoslab.plan import PLAN_SCHEMA
from qoslab.plan import models as plan
from qoslab.scenario.model import AccessPoint, Atm, Bridge, Ethernet, MpoaServer, Router, Scenario, Serial, Switch, Wifi

if TYPE_CHECKING:
    from qoslab.methods import Plan, Search


def lower_network(scenario: Scenario, *, source: str | Path | None = None) -> Network:
    """The scenario's network as the simulator's configuration, without traffic.

    Parameters
    ----------
    scenario:
        A validated scenario.
    source:
        The scenario file, to position problems at file:line:column.

    Raises
    ------
    InputError
        For what the simulator cannot run (with the key that asks for it) and unknown
        CPU profiles.
    """
    with _collector_paused():
        return _lower_network(scenario, source)


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Python's cycle collector paused while a network's plan is built, then restored as
    it was. The plan of a large network is tens of thousands of small models, none in a
    cycle, and the collector, started every 700 new objects, walked them again and again
    (benchmarks/README.md, "Lowering a large network")."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def _lower_network(scenario: Scenario, source: str | Path | None) -> Network:
    out = LocatedProblems(source)
    _refuse_unsupported(scenario, out)
    out.raise_if_any()

    names = list(scenario.node)
    ports, counters, link_ports = _ports(scenario, names)
    taps = _tap_ports(scenario, names, ports, counters)
    segments = _Segments(scenario, names, ports)

    nodes: list[plan.NodeConfig] = []
    addresses: dict[str, list[IPv4Interface]] = {}
    cpus: dict[str, plan.CpuConfig] = {}
    for n, name in enumerate(names):
        cfg, addresses[name] = _node(scenario, names, ports, n, segments, taps, out, cpus)
        nodes.append(cfg)  # the tunnels below add their ends to it

    links = [plan.LinkConfig(_link(scenario, li, link, link_ports[li])) for li, link in enumerate(scenario.link)]
    _ipsec_tunnels(scenario, names, nodes, ports, addresses, out)
    atm = atm_config(scenario, names, ports, out)
    adaptive = _adaptive(scenario, names, ports)
    _vpn_tunnels(scenario, names, nodes, ports, addresses, taps, out)
    _pptp_tunnels(scenario, names, nodes, ports, addresses, taps, out)
    out.raise_if_any()

    # model_construct: its parts are models built, and so validated, above; validating
    # the whole again would copy every list of a large network for nothing.
    config = plan.SimConfig.model_construct(
        schema_=PLAN_SCHEMA,
        seed=scenario.scenario.seed,
        duration_ns=scenario.scenario.duration or 10 * SECOND_NS,
        nodes=nodes,
        links=links,
        flows=[],
        capture=False,
        atm=atm,
        adaptive=adaptive,
    )
    return Network(scenario, config, names, ports, addresses)


def _ports(scenario: Scenario, names: list[str]) -> tuple[list[list[Port]], list[dict[str, int]], list[list[Port]]]:
    """Every link end as a port of its node, in link order (rules in the package doc):
    each node's ports, its count of ports per kind (for the names), each link's ports."""
    ports: list[list[Port]] = [[] for _ in names]
    counters: list[dict[str, int]] = [{"ethernet": 0, "wifi": 0, "serial": 0, "tap": 0, "atm": 0} for _ in names]
    link_ports: list[list[Port]] = []
    node_index = {name: i for i, name in enumerate(names)}
    for li, link in enumerate(scenario.link):
        kind = (
            "wifi"
            if isinstance(link, Wifi)
            else ("serial" if isinstance(link, Serial) else ("atm" if isinstance(link, Atm) else "ethernet"))
        )
        if isinstance(link, Wifi):
            mtu = WIFI_MTU
        elif isinstance(link, Serial):
            # RFC 1055: SLIP's 1006 bytes; RFC 1661 §6.1: PPP's default MRU 1500.
            mtu = link.mtu or (1500 if link.framing == "ppp" else 1006)
        else:
            mtu = link.mtu
        ends = []
        for member in _members(link):
            n = node_index[member]
            idx = len(ports[n])
            prefix = {
                "wifi": "wlan",
                "serial": "ppp" if isinstance(link, Serial) and link.framing == "ppp" else "sl",
                "atm": "atm",
            }.get(kind, "eth")
            port = Port(n, idx, f"{prefix}{counters[n][kind]}", li, kind, mac_for(n, idx), mtu)
            counters[n][kind] += 1
            ports[n].append(port)
            ends.append(port)
        link_ports.append(ends)
    return ports, counters, link_ports


def _node(
    scenario: Scenario,
    names: list[str],
    ports: list[list[Port]],
    n: int,
    segments: _Segments,
    taps: Any,
    out: LocatedProblems,
    cpus: dict[str, plan.CpuConfig],
) -> tuple[plan.NodeConfig, list[IPv4Interface]]:
    """Node ``n``'s NodeConfig (its ports addressed, its bridge, NAT and CPU, from
    ``cpus`` when another node has its profile; tunnels come later) and its addresses
    (port addresses, then the bridge's)."""
    name = names[n]
    node = scenario.node[name]
    mine = ports[n]
    cfg = plan.NodeConfig(
        name=name,
        role=plan.NodeRole(node.role),
        ports=[],
        routes=_routes(node),
        cpu=_cpu(name, node, out, cpus),
        arp_timeout_ns=ARP_TIMEOUT_NS,
        reassembly_timeout_ns=REASSEMBLY_TIMEOUT_NS,
        # The rest of PmtuConfig (rate limit, cache aging, min_pmtu) keeps Linux's values.
        pmtu=plan.PmtuConfig(
            frag_needed=plan.FragNeeded(node.frag_needed), filter_icmp_unreachable=node.block_icmp_unreachable
        ),
        # Given, not defaulted: pydantic deep-copies a default list for every node.
        ipsec=[],
        openvpn=[],
        pppoe=[],
        pptp=[],
    )
    bridge_ports, bridge_address, routed, addrs = _interfaces(cfg, node, name, mine, segments, n, out)
    if len(addrs) > len(routed):
        out.add(
            ("node", name, "address"),
            f"{len(addrs)} addresses but {len(routed)} interface(s) to put them on",
            expected=f"at most {len(routed)} address(es), one per link",
            found=", ".join(str(a) for a in addrs),
        )
    chosen = _assign(addrs, routed, segments, n)
    if not bridge_ports:
        bridge_ports = _tap_bridge(scenario, name, mine, chosen, taps)
    for p in mine:
        p.address = chosen.get(p.index)
        cfg.ports.append(
            plan.PortConfig(
                name=p.name,
                mac=_mac(p.mac),
                address=_address(p.address) if p.address else None,
                mtu=p.mtu,
                point_to_point=p.kind == "serial" or p.kind == "atm" and not is_lane_port(scenario, p),
                # A sniffing host's NICs, or an L2 bridge's adapters (seed 000 Fig. 10).
                promiscuous=bool(getattr(node, "promiscuous", False)),
            )
        )
    if bridge_ports:
        wifi = [p for p in bridge_ports if p.kind == "wifi"]
        mac = (wifi[0] if wifi else bridge_ports[0]).mac
        mode = node.forwarding if isinstance(node, Bridge) else "l2"
        cfg.bridge = plan.BridgeConfig(
            ports=_PORTS.validate_python([p.index for p in bridge_ports]),
            mode=plan.BridgeMode(mode),
            mac=_mac(mac),
            address=_address(bridge_address) if bridge_address else None,
            aging_ns=BRIDGE_AGING_NS,
        )

    if isinstance(node, Bridge) and node.forwarding == "nat":
        _ics_nat(cfg, scenario, node, names, ports, n, out)
    addresses = [p.address for p in mine if p.address is not None] + ([bridge_address] if bridge_address else [])
    return cfg, addresses


_MAC: TypeAdapter[list[plan.MacItem]] = TypeAdapter(list[plan.MacItem])
_PORTS: TypeAdapter[list[plan.Port]] = TypeAdapter(list[plan.Port])
"""A MAC's octets and a bridge's ports, each list made in one call of the validator: a
2,000-host switch has 24,000 octets, and a model made per octet took most of the
lowering's time (benchmarks/README.md, "Lowering a large network")."""


def _mac(mac: list[int]) -> list[plan.MacItem]:
    return _MAC.validate_python(mac)


def _address(address: IPv4Interface) -> tuple[IPv4Address, plan.AddressItem]:
    """An interface address as the plan writes it: (address, prefix length)."""
    return address.ip, plan.AddressItem(address.network.prefixlen)


def _ics_nat(
    cfg: plan.NodeConfig,
    scenario: Scenario,
    node: Bridge,
    names: list[str],
    ports: list[list[Port]],
    n: int,
    out: LocatedProblems,
) -> None:
    """An ICS bridge's NAT (seed 000 §2.3): on its wireless port, else the port towards
    its gateway; refused without either."""
    name = names[n]
    outside = _nat_outside(scenario, node, ports[n], names, ports, n)
    if outside is None:
        out.add(
            ("node", name, "forwarding"),
            "NAT needs an outside interface",
            expected="a wireless port, or a gateway on one of the ports' subnets",
            found="neither",
        )
    else:
        cfg.nat = plan.NatConfig(
            outside_port=outside.index, port_forwards=_port_forwards(node), udp_timeout_ns=NAT_UDP_TIMEOUT_NS
        )


def _interfaces(
    cfg: plan.NodeConfig,
    node: Any,
    name: str,
    mine: list[Port],
    segments: _Segments,
    n: int,
    out: LocatedProblems,
) -> tuple[list[Port], IPv4Interface | None, list[Port], list[IPv4Interface]]:
    """Where a node's addresses go, by its role (rules in the package doc): its bridged
    ports, the bridge's address, its routed ports and the addresses left for them.
    Sets ``cfg``'s ``ip_forward`` and an AP router's WAN NAT."""
    bridge_ports: list[Port] = []
    bridge_address: IPv4Interface | None = None
    routed: list[Port] = [p for p in mine if p.kind != "tap"]  # ports that carry their own address
    addrs = list(node.address)

    if isinstance(node, Bridge) and node.forwarding in ("l2", "l3f") or isinstance(node, Switch):
        bridge_ports, routed = list(mine), []
        if len(addrs) > 1:
            out.add(
                ("node", name, "address"),
                "a bridge has one address, on its bridge interface",
                expected="one address",
                found=", ".join(str(a) for a in addrs),
            )
        bridge_address = addrs[0] if addrs else None
        addrs = []
    elif isinstance(node, AccessPoint):
        bridge_ports, bridge_address, routed, addrs = _ap_interfaces(cfg, node, name, mine, segments, n, out)
    elif isinstance(node, (Router, MpoaServer)) or (isinstance(node, Bridge) and node.forwarding == "nat"):
        cfg.ip_forward = True

    if len(bridge_ports) == 1:
        # One port is no bridge: the address sits on the port itself (beside an
        # ap-router's routed WAN port, if it has one).
        routed, bridge_ports = bridge_ports + routed, []
        addrs = ([bridge_address] if bridge_address else []) + addrs
        bridge_address = None
    return bridge_ports, bridge_address, routed, addrs


def _ap_interfaces(
    cfg: plan.NodeConfig,
    node: AccessPoint,
    name: str,
    mine: list[Port],
    segments: _Segments,
    n: int,
    out: LocatedProblems,
) -> tuple[list[Port], IPv4Interface | None, list[Port], list[IPv4Interface]]:
    """An AP's (or AP router's) bridge of its LAN ports and wifi port with the LAN address,
    and an AP router's routed WAN port with the second address (and NAT on it)."""
    addrs = list(node.address)
    wan: Port | None = None
    if node.role == "ap-router" and len(addrs) > 1:
        wired = [p for p in mine if p.kind == "ethernet"]
        hit = _assign(addrs[1:2], wired, segments, n)
        if hit:
            wan = next(p for p in wired if p.index in hit)
        else:
            out.add(
                ("node", name, "address"),
                "no Ethernet port leads to the WAN subnet of the second address",
                expected="a WAN link to a node in " + str(addrs[1].network),
                found="none",
            )
    bridge_ports = [p for p in mine if p is not wan]
    routed = [wan] if wan is not None else []
    bridge_address = addrs[0] if addrs else None
    addrs = addrs[1:2] if wan is not None else []
    if len(node.address) > 2:
        out.add(
            ("node", name, "address"),
            "an AP router has a LAN address and at most a WAN address",
            expected="one or two addresses",
            found=", ".join(str(a) for a in node.address),
        )
    if node.role == "ap-router":
        cfg.ip_forward = True
        if wan is not None and node.nat:
            cfg.nat = plan.NatConfig(
                outside_port=wan.index, port_forwards=_port_forwards(node), udp_timeout_ns=NAT_UDP_TIMEOUT_NS
            )
    return bridge_ports, bridge_address, routed, addrs


def _link(
    scenario: Scenario, li: int, link: Any, ends: list[Port]
) -> plan.EthernetLink | plan.SerialLink | plan.WifiLink | plan.AtmLink:
    """Link ``li`` as the plan's LinkConfig between its ports ``ends``."""
    refs = [plan.PortRef(node=p.node, port=p.index) for p in ends]
    lname = scenario.link_name(li)
    if isinstance(link, Ethernet):
        frames, nbytes = _queue(link)
        return plan.EthernetLink(
            type="ethernet",
            name=lname,
            a=refs[0],
            b=refs[1],
            rate_bps=link.rate,
            delay_ns=link.delay,
            jitter_ns=link.jitter,
            queue_frames=frames,
            queue_bytes=nbytes,
            impair=_impairments(link),
        )
    if isinstance(link, Serial):
        return plan.SerialLink(
            type="serial",
            name=lname,
            a=refs[0],
            b=refs[1],
            rate_bps=link.rate,
            format=link.format,
            framing=plan.SerialFraming(link.framing),
            clocking=plan.Clocking(link.clocking),
            acfc=link.acfc,
            pfc=link.pfc,
            fcs_bits=link.fcs,
            compression=link.compression or 1.0,
            delay_ns=link.delay,
            jitter_ns=link.jitter,
            queue_frames=SERIAL_QUEUE_FRAMES,
            impair=_impairments(link),
        )
    if isinstance(link, Atm):
        return atm_link(link, lname, refs)
    return _wifi(scenario, link, lname, refs)


def lower(scenario: Scenario, *, test_index: int | None = None, source: str | Path | None = None) -> plan.SimConfig:
    """A scenario as the plan a backend runs (``SimConfig``).

    Parameters
    ----------
    scenario:
        A validated scenario.
    test_index:
        Lower the traffic of ``scenario.test[test_index]`` (its flows and run length; of
        an RFC 2544 search, its first trial); ``None`` lowers the network alone, without flows.
    source:
        The scenario file, to position problems at file:line:column.

    Raises
    ------
    InputError
        For what the simulator cannot run, unknown CPU profiles, tests no method runs.

    Examples
    --------
    >>> from qoslab.scenario import load_scenario
    >>> config = lower(load_scenario("examples/seed000_l3f.toml"))
    >>> a = next(n for n in config.nodes if n.name == "a")
    >>> [p.name for p in a.ports], a.bridge.mode.value
    (['wlan0', 'eth0'], 'l3f')
    """
    net = lower_network(scenario, source=source)
    if test_index is None:
        return net.config
    from qoslab.methods import plan_test

    return planned_config(net, plan_test(net, test_index, source=source))


def planned_config(net: Network, planned: Plan | Search) -> RunConfig:
    """The ``SimConfig`` of a planned test: its flows, run length and windows on ``net``;
    of an RFC 2544 search, its first trial's (the first frame size at the maximum rate:
    the trials differ only in rate and size)."""
    from qoslab.methods import Search

    if isinstance(planned, Search):
        flows, duration, windows = planned.trials.first_flows()
        return net.with_flows(flows, duration, windows=windows)
    return net.with_flows(planned.flows, planned.duration_ns, windows=planned.windows)
