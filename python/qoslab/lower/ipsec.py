"""IPsec tunnels (ESP or AH, tunnel or transport mode): one ``IpsecTunnelConfig`` on
each end (see the lowering rules in :mod:`qoslab.lower`), built as the plan's typed model.
"""

from __future__ import annotations

from ipaddress import IPv4Address, IPv4Interface
from typing import Any, cast

from qoslab.lower.common import LocatedProblems, Port
from qoslab.lower.lowered import Network, addressing
from qoslab.lower.nodes import _protected_behind, ends_of
from qoslab.plan import models as plan
from qoslab.scenario.model import Ipsec, Scenario

IPSEC_CIPHERS = ("null", "3des-cbc", "aes-128-cbc", "aes-256-cbc", "aes-128-gcm")
"""The ESP ciphers of the scenario language that wire::ipsec implements (single DES is not)."""

IPSEC_SPI_BASE = 0x1000

"""First SPI the lowering hands out; RFC 4303 §2.1 reserves 1-255."""

IP_PROTOCOL_NUMBERS = {"icmp": 1, "tcp": 6, "udp": 17}
"""IANA Assigned Internet Protocol Numbers of the selector's protocols (RFC 790 / RFC 5237 registry)."""


def _ipsec_tunnels(
    sc: Scenario,
    names: list[str],
    nodes: list[plan.NodeConfig],
    ports: list[list[Port]],
    addresses: dict[str, list[IPv4Interface]],
    out: LocatedProblems,
) -> None:
    """Each IPsec tunnel as a pair of IpsecTunnelConfig, one on each end (rules in the module doc)."""
    net = addressing(sc, names, ports, addresses)
    protected: dict[int, dict[tuple[str, int], int]] = {}  # node -> (network, prefix) -> tunnel index
    carried: dict[tuple[Any, ...], int] = {}  # transport traffic (pair, protocol, port, port's node) -> tunnel index
    for i, t in enumerate(sc.tunnel):
        if isinstance(t, Ipsec):
            _ipsec_tunnel(sc, i, t, names, nodes, ports, addresses, out, net, protected, carried)


def _ipsec_tunnel(
    sc: Scenario,
    i: int,
    t: Ipsec,
    names: list[str],
    nodes: list[plan.NodeConfig],
    ports: list[list[Port]],
    addresses: dict[str, list[IPv4Interface]],
    out: LocatedProblems,
    net: Network,
    protected: dict[int, dict[tuple[str, int], int]],
    carried: dict[tuple[Any, ...], int],
) -> None:
    """IPsec tunnel ``i`` as an IpsecTunnelConfig on each end; ``protected`` and ``carried`` hold what the tunnels before it took."""
    ends = [t.from_, t.to]
    local = [net.destination(ends[1], ends[0]), net.destination(ends[0], ends[1])]
    for k, key in enumerate(("from", "to")):
        if local[k] is None:
            out.add(
                ("tunnel", i, key),
                "an IPsec tunnel end needs an IPv4 address",
                expected=f"an address on node {ends[k]}",
                found="none",
            )
    if local[0] is None or local[1] is None:
        return
    spis = [IPSEC_SPI_BASE + 2 * i, IPSEC_SPI_BASE + 2 * i + 1]
    if t.mode == "transport":
        _ipsec_transport(i, t, ends, local, spis, names, nodes, carried, out)
        return
    for k in (0, 1):
        n, far = names.index(ends[k]), names.index(ends[1 - k])
        protects = _protected_behind(nodes[far], addresses[ends[1 - k]], cast(IPv4Address, local[1 - k]))
        seen = protected.setdefault(n, {})
        for dest in protects:
            if dest in seen:
                out.add(
                    ("tunnel", i, "to" if k == 0 else "from"),
                    f"node {ends[k]} already sends {dest[0]}/{dest[1]} into tunnel[{seen[dest]}]",
                    expected="tunnels of one node that protect different destinations",
                    found=f"{dest[0]}/{dest[1]} twice",
                    hint="each tunnel needs its own far address or subnet; several VPNs between two hosts: mode = 'transport', each with its own selector",
                )
            seen.setdefault(dest, i)
        egress = next((p for p in ports[n] if p.address is not None and p.address.ip == local[k]), None)
        mtu = t.mtu or (egress.mtu if egress is not None else 1500)
        end = _end(t, cast(IPv4Address, local[k]), cast(IPv4Address, local[1 - k]), spis[k], spis[1 - k], mtu)
        end.protects = [plan.Protect((IPv4Address(a), plan.ProtectItem(p))) for a, p in protects]
        end.fragment = plan.TunnelFragment(t.fragment)
        ends_of(nodes[n].ipsec).append(end)


def _end(
    t: Ipsec, local: IPv4Address, remote: IPv4Address, spi_out: int, spi_in: int, mtu: int
) -> plan.IpsecTunnelConfig:
    """One end of tunnel ``t``: its addresses, SPIs, algorithms and mode; nothing protected
    or selected yet."""
    return plan.IpsecTunnelConfig(
        name=t.name,
        local=local,
        remote=remote,
        spi_out=spi_out,
        spi_in=spi_in,
        cipher=plan.IpsecCipher(t.cipher),
        auth=plan.IpsecAuth(t.auth),
        protects=[],
        mtu=mtu,
        mode=plan.IpsecMode(t.mode),
        protocol=plan.IpsecProtocol(t.protocol),
    )


def _ipsec_transport(
    i: int,
    t: Ipsec,
    ends: list[str],
    local: list[IPv4Address | None],
    spis: list[int],
    names: list[str],
    nodes: list[plan.NodeConfig],
    carried: dict[tuple[Any, ...], int],
    out: LocatedProblems,
) -> None:
    """Transport-mode tunnel ``i``: an SA pair for the ends' own traffic that its selector
    picks, refused when an earlier tunnel already carries that traffic."""
    sel = t.selector
    protocol = None if sel is None or sel.protocol == "any" else IP_PROTOCOL_NUMBERS[sel.protocol]
    port = sel.port if sel is not None else None
    traffic = (frozenset(ends), protocol, port, t.to if port is not None else None)
    if traffic in carried:
        j = carried[traffic]
        what = (
            "everything between them"
            if sel is None
            else f"the same traffic (protocol {sel.protocol}, port {port if port is not None else 'any'})"
        )
        out.add(
            ("tunnel", i, "selector" if sel is not None else "to"),
            f"tunnel[{j}] already carries {what} between {ends[0]} and {ends[1]}",
            expected="transport tunnels between two nodes with different selectors",
            found=f"tunnel[{j}] and tunnel[{i}] alike",
            hint="give each VPN its own traffic: selector = { protocol = 'udp', port = 8 }",
        )
        return
    carried[traffic] = i
    for k in (0, 1):
        n = names.index(ends[k])
        end = _end(t, cast(IPv4Address, local[k]), cast(IPv4Address, local[1 - k]), spis[k], spis[1 - k], 1500)
        end.select_protocol = protocol
        # The port is `to`'s: remote at `from`, local at `to` (RFC 4301 §4.4.1.1).
        end.select_local_port = port if k == 1 else None
        end.select_remote_port = port if k == 0 else None
        ends_of(nodes[n].ipsec).append(end)
