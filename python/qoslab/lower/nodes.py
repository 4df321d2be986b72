"""Nodes: CPU profiles, segments and the assignment of addresses to ports, static
routes, NAT and port forwards, and what lies behind a node.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections import deque
from ipaddress import IPv4Address, IPv4Interface
from typing import Any, TypeVar

from qoslab.data import DEFAULT_PROFILE, HARDWARE_PROFILE, cpu_profiles
from qoslab.errors import did_you_mean
from qoslab.lower.common import HARDWARE_ROLES, LocatedProblems, Port, _is_transparent, _members
from qoslab.plan import models as plan
from qoslab.scenario.model import Bridge, Scenario

# --------------------------------------------------------------------------- lowering


def _cpu(name: str, node: Any, out: LocatedProblems, made: dict[str, plan.CpuConfig] | None = None) -> plan.CpuConfig:
    """Node ``name``'s CPU profile as the plan's ``CpuConfig``. ``made`` holds those one
    lowering made already, by profile: the nodes of one profile share it (a 2,000-host
    switch made 2,000 alike; a plan's tables are read, never changed). It lives for one
    lowering only, so a profile changed in :func:`cpu_profiles` is read afresh."""
    profiles = cpu_profiles()
    wanted = node.cpu
    if wanted is None:
        wanted = HARDWARE_PROFILE if node.role in HARDWARE_ROLES else DEFAULT_PROFILE
    profile = profiles.get(wanted)
    if profile is None:
        out.add(
            ("node", name, "cpu"),
            "unknown CPU profile",
            expected="one of " + ", ".join(repr(p) for p in profiles),
            found=repr(wanted),
            hint=did_you_mean(wanted, list(profiles)) or "profiles live in python/qoslab/data/cpu_profiles.toml",
        )
        wanted, profile = DEFAULT_PROFILE, profiles[DEFAULT_PROFILE]
    if made is None:
        return plan.CpuConfig.model_validate(profile.sim_config())
    if wanted not in made:
        made[wanted] = plan.CpuConfig.model_validate(profile.sim_config())
    return made[wanted]


class _Segments:
    """The segments of a scenario's links, to place addresses on ports (:func:`_assign`).

    The segment behind a port is the nodes its link reaches across L2-transparent nodes
    (switches, APs, L2/L3F bridges). Seen from a node that is not transparent itself,
    that is every node of the link's component (the links joined through transparent
    nodes) but the node: each component's addresses are gathered once and kept sorted,
    so placing the addresses of N hosts on one switch takes N log N steps, not the N²
    of walking the segment from every host (10,000 hosts: issue 14).
    """

    def __init__(self, sc: Scenario, names: list[str], ports: list[list[Port]]) -> None:
        self.sc, self.names, self.ports = sc, names, ports
        self.index = {name: i for i, name in enumerate(names)}
        parent = list(range(len(sc.link)))

        def find(x: int) -> int:
            while parent[x] != x:
                parent[x] = parent[parent[x]]
                x = parent[x]
            return x

        for k, name in enumerate(names):
            if _is_transparent(sc.node[name]):
                links = [p.link for p in ports[k] if p.link >= 0]
                for other in links[1:]:
                    a, b = find(links[0]), find(other)
                    if a != b:
                        parent[b] = a
        self.component = [find(li) for li in range(len(sc.link))]
        members: dict[int, set[int]] = {}
        for li, link in enumerate(sc.link):
            members.setdefault(self.component[li], set()).update(self.index[m] for m in _members(link))
        self.addresses = {
            c: sorted(int(a.ip) for k in ks for a in sc.node[names[k]].address) for c, ks in members.items()
        }

    def walk(self, node: int, port: Port) -> list[IPv4Address]:
        """Addresses of the nodes on the segment behind ``port``, walked across
        L2-transparent nodes (for a transparent ``node``, whose own ports split it)."""
        names, ports, sc = self.names, self.ports, self.sc
        seen = {node}
        todo = deque(self.index[m] for m in _members(sc.link[port.link]) if m != names[node])
        found: list[IPv4Address] = []
        while todo:
            k = todo.popleft()
            if k in seen:
                continue
            seen.add(k)
            other = sc.node[names[k]]
            found.extend(a.ip for a in other.address)
            if _is_transparent(other):
                for p in ports[k]:
                    if p.link < 0:  # a TAP port: no link of the scenario
                        continue
                    todo.extend(j for j in (self.index[m] for m in _members(sc.link[p.link])) if j not in seen)
        return found

    def shares_subnet(self, node: int, port: Port, a: IPv4Interface) -> bool:
        """Whether another node on the segment behind ``port`` has an address in the
        subnet of ``a`` (other than ``a`` itself)."""
        if _is_transparent(self.sc.node[self.names[node]]):
            return any(ip in a.network and ip != a.ip for ip in self.walk(node, port))
        lo, hi, me = int(a.network.network_address), int(a.network.broadcast_address), int(a.ip)
        ips = self.addresses[self.component[port.link]]
        own = [int(b.ip) for b in self.sc.node[self.names[node]].address]
        in_subnet = bisect_right(ips, hi) - bisect_left(ips, lo) - sum(1 for x in own if lo <= x <= hi)
        same = bisect_right(ips, me) - bisect_left(ips, me) - own.count(me)
        return in_subnet - same > 0


def _assign(
    addresses: list[IPv4Interface], candidates: list[Port], segments: _Segments, node: int
) -> dict[int, IPv4Interface]:
    """Port index -> address: each address to the first free port whose segment shares its subnet, the rest in order."""
    chosen: dict[int, IPv4Interface] = {}
    left: list[IPv4Interface] = []
    for a in addresses:
        for p in candidates:
            if p.index in chosen:
                continue
            if segments.shares_subnet(node, p, a):
                chosen[p.index] = a
                break
        else:
            left.append(a)
    free = [p for p in candidates if p.index not in chosen]
    for a, p in zip(left, free):
        chosen[p.index] = a
    return chosen


def _routes(node: Any) -> list[plan.RouteConfig]:
    best: dict[Any, Any] = {}
    order: list[Any] = []
    for r in node.routes:
        if r.to not in best:
            order.append(r.to)
            best[r.to] = r
        elif r.metric < best[r.to].metric:
            best[r.to] = r
    routes = [
        plan.RouteConfig(destination=best[n].to.network_address, prefix_len=best[n].to.prefixlen, via=best[n].via)
        for n in order
    ]
    if node.gateway is not None and not any(r.to.prefixlen == 0 for r in node.routes):
        routes.append(plan.RouteConfig(destination=IPv4Address("0.0.0.0"), prefix_len=0, via=node.gateway))
    return routes


def _port_forwards(node: Any) -> list[plan.PortForward]:
    out = []
    for pf in node.port_forwards:
        to, _, to_port = pf.to.partition(":")
        out.append(
            plan.PortForward(
                protocol=plan.ForwardProtocol(pf.proto),
                port=pf.port,
                to=IPv4Address(to),
                to_port=int(to_port) if to_port else pf.port,
            )
        )
    return out


T = TypeVar("T")


def ends_of(ends: list[T] | None) -> list[T]:
    """A node's tunnel ends of one kind (``ipsec``, ``openvpn``, ...): the lowering gives
    every node each list, empty, before the tunnels add their ends."""
    assert ends is not None, "the lowering gives every node its lists of tunnel ends"
    return ends


def _bridged(node: plan.NodeConfig, port: int) -> bool:
    """Whether port ``port`` of ``node`` is one of its bridge's."""
    return node.bridge is not None and any(p.root == port for p in node.bridge.ports)


def _protected_behind(
    far: plan.NodeConfig, far_addresses: list[IPv4Interface], far_end: IPv4Address
) -> list[tuple[str, int]]:
    """What a tunnel to ``far`` protects: the subnets behind a forwarding node, else its addresses."""
    if far.ip_forward:
        behind = [(str(a.network.network_address), a.network.prefixlen) for a in far_addresses if a.ip != far_end]
        if behind:
            return list(dict.fromkeys(behind))
        return [(str(far_end), 32)]
    return [(str(a.ip), 32) for a in far_addresses]


def _nat_outside(
    sc: Scenario, node: Bridge, mine: list[Port], names: list[str], ports: list[list[Port]], n: int
) -> Port | None:
    """ICS's outside interface: the wireless adapter (seed 000 §2.3, Fig. 7); else the port towards the gateway."""
    wifi = [p for p in mine if p.kind == "wifi"]
    if wifi:
        return wifi[0]
    if node.gateway is not None:
        for p in mine:
            if p.address is not None and node.gateway in p.address.network:
                return p
    return None
