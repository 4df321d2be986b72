"""PPTP tunnels (RFC 2637, seed 002 §3.4): one ``PptpConfig`` on each end, its call IDs,
PPP addresses and MTU (see the lowering rules in :mod:`qoslab.lower`).
"""

from __future__ import annotations

from ipaddress import IPv4Address, IPv4Interface
from typing import Any

from qoslab.lower.common import _NOT_YET, LocatedProblems, PathT, Port
from qoslab.lower.lowered import Network, addressing
from qoslab.lower.nodes import _bridged, ends_of
from qoslab.lower.vpn import _pppoe_port
from qoslab.plan import models as plan
from qoslab.scenario.model import OpenVpn, Pptp, Scenario
from qoslab.scenario.tunnels import PPTP_OVERHEAD, below, interface_mtu

PPTP_CALL_ID_BASE = (0x0001, 0x4001)
"""Call IDs (RFC 2637 §2.7-§2.8: each side picks its own, unique among its calls):
the client's (PNS) ``0x0001`` and the server's (PAC) ``0x4001``, plus the tunnel's
index, so the two directions' GRE keys differ in a capture."""


def _check_pptp(sc: Scenario, i: int, t: Pptp, out: LocatedProblems) -> None:
    """Refuses what the simulator's PPTP cannot run yet: MPPE, and PPTP over a tunnel
    other than an OpenVPN TAP (its outer IP would have to ride a tunnel interface)."""
    base: PathT = ("tunnel", i)
    if t.mppe:
        out.add(
            base + ("mppe",),
            f"MPPE (RFC 3078): {_NOT_YET}",
            expected="false",
            found="true",
            hint="`qoslab mtu` analyses PPTP stacks",
        )
    under = below(sc, t)
    if under is not None and under[0] == "tunnel":
        u = sc.tunnel[under[1]]
        if not (isinstance(u, OpenVpn) and u.dev == "tap"):
            out.add(
                base + ("over",),
                f"PPTP over a {u.type} tunnel: {_NOT_YET}",
                expected="a link, an OpenVPN TAP tunnel or no `over` (the routed path)",
                found=repr(t.over),
            )


def _free_host(network: Any, used: set[IPv4Address]) -> IPv4Address | None:
    """The first host address of ``network`` nobody holds, now taken."""
    ip = next((h for h in network.hosts() if h not in used), None)
    if ip is not None:
        used.add(ip)
    return ip


def _pptp_tunnels(
    sc: Scenario,
    names: list[str],
    nodes: list[plan.NodeConfig],
    ports: list[list[Port]],
    addresses: dict[str, list[IPv4Interface]],
    taps: dict[tuple[int, int], Port],
    out: LocatedProblems,
) -> None:
    """A ``PptpConfig`` on each end of each PPTP tunnel, as PPPoE's are made.

    The server (``to``) is pptpd. Its outer address is its address on the port that
    reaches ``over`` (a link, or the LAN an OpenVPN TAP is bridged to), else the one the
    client reaches it by; its PPP address is the same (pptpd's usual ``localip``), and
    it assigns the client the first free host address of that subnet with IPCP
    (``remoteip``). A client whose port on ``over`` is a TAP port without an address
    first takes the next free address of that subnet on it, as from a DHCP server on the
    bridged LAN; otherwise its outer address is its address on that port, or the one
    the server reaches it by. The ends' outer packets (TCP 1723 and GRE) never enter a
    tunnel interface (crates/sim/src/pptp_vif.rs), so the server's PPP address may equal
    its outer one. User = the client's node name, secret shared by both ends, call IDs
    :data:`PPTP_CALL_ID_BASE` + tunnel index. MTU = ``mtu``, else the interface below
    less 33 (:data:`qoslab.scenario.tunnels.PPTP_OVERHEAD`: seed 002 §3.4's 1397 in a
    1430 TAP). Routes as PPPoE's: the client routes the server's PPP address and what
    lies behind a forwarding server into ``pppN``; the server routes the client's.
    """
    net = addressing(sc, names, ports, addresses)
    used = {a.ip for addrs in addresses.values() for a in addrs}
    ppp_count = [len(node.pppoe or []) for node in nodes]  # after the PPPoE interfaces
    for i, t in enumerate(sc.tunnel):
        if isinstance(t, Pptp):
            _pptp_tunnel(sc, i, t, names, nodes, ports, addresses, taps, out, net, used, ppp_count)


def _pptp_tunnel(
    sc: Scenario,
    i: int,
    t: Pptp,
    names: list[str],
    nodes: list[plan.NodeConfig],
    ports: list[list[Port]],
    addresses: dict[str, list[IPv4Interface]],
    taps: dict[tuple[int, int], Port],
    out: LocatedProblems,
    net: Network,
    used: set[IPv4Address],
    ppp_count: list[int],
) -> None:
    """PPTP tunnel ``i`` as a PptpConfig on each end (rules in :func:`_pptp_tunnels`); ``used`` holds the addresses taken so far."""
    ends = [t.from_, t.to]
    n_client, n_server = names.index(ends[0]), names.index(ends[1])
    what = below(sc, t)
    found: list[Port | None] = [None, None]
    if what is not None:
        found = [_pppoe_port(sc, names, ports, taps, t, k) for k in (0, 1)]
        if found[0] is None or found[1] is None:
            k = 0 if found[0] is None else 1
            out.add(
                ("tunnel", i, "to" if k else "from"),
                f"node {ends[k]} has no port on {t.over!r} for PPTP",
                expected=f"{ends[k]!r} on that link's segment or an end of that TAP tunnel",
                found=repr(t.over),
            )
            return
    server_port, client_port = found[1], found[0]
    server_ip = (
        server_port.address.ip
        if server_port is not None and server_port.address is not None
        else net.destination(ends[0], ends[1])
    )
    server_if = next((a for a in addresses.get(ends[1], []) if a.ip == server_ip), None)
    if server_if is None:
        out.add(
            ("tunnel", i, "to"),
            "a PPTP server needs an IPv4 address for the control connection and a subnet to assign the client an address from",
            expected=f"an address on node {ends[1]!r}",
            found="none",
        )
        return
    client_outer = _pptp_client_outer(i, ends, client_port, server_if, nodes, n_client, net, used, out)
    if client_outer is None:
        return
    client_ppp = _free_host(server_if.network, used)
    if client_ppp is None:
        out.add(
            ("tunnel", i, "to"),
            "no free address for the PPTP client in the server's subnet",
            expected=f"a free host address in {server_if.network}",
            found="all in use",
        )
        return
    _pptp_configs(
        sc,
        i,
        t,
        what,
        nodes,
        addresses,
        ppp_count,
        n_client,
        n_server,
        client_port,
        server_if,
        client_outer,
        client_ppp,
    )


def _pptp_configs(
    sc: Scenario,
    i: int,
    t: Pptp,
    what: Any,
    nodes: list[plan.NodeConfig],
    addresses: dict[str, list[IPv4Interface]],
    ppp_count: list[int],
    n_client: int,
    n_server: int,
    client_port: Port | None,
    server_if: IPv4Interface,
    client_outer: IPv4Address,
    client_ppp: IPv4Address,
) -> None:
    """The PptpConfig of each end of tunnel ``i``, its addresses found; the client's PPP
    address (and its new outer one) among its addresses."""
    ends = [t.from_, t.to]
    under = interface_mtu(sc, what) or 1500
    mtu = t.mtu or under - PPTP_OVERHEAD
    behind = (
        []
        if not nodes[n_server].ip_forward
        else [
            [str(a.network.network_address), a.network.prefixlen]
            for a in addresses[ends[1]]
            if a.ip != server_if.ip and a.network != server_if.network
        ]
    )
    for n, server, local, remote, ppp_local, ppp_peer, routes in (
        (n_server, True, server_if.ip, client_outer, server_if.ip, client_ppp, [[str(client_ppp), 32]]),
        (n_client, False, client_outer, server_if.ip, client_ppp, server_if.ip, [[str(server_if.ip), 32]] + behind),
    ):
        end = plan.PptpConfig(
            name=f"ppp{ppp_count[n]}",
            server=server,
            local=local,
            remote=remote,
            ppp_local=ppp_local,
            ppp_peer=ppp_peer,
            routes=[plan.Route1.model_validate(r) for r in routes],
            call_id=PPTP_CALL_ID_BASE[1 if server else 0] + i,
            auth=plan.PppAuth(t.auth),
            user=ends[0],
            secret=f"qoslab-{t.name}",
            mtu=mtu,
        )
        ends_of(nodes[n].pptp).append(end)
        ppp_count[n] += 1
    # The PPP address first: it is the one the server's traffic to the client takes.
    addresses[ends[0]].append(IPv4Interface(f"{client_ppp}/{server_if.network.prefixlen}"))
    if (
        client_port is not None
        and client_port.address is not None
        and client_port.address.ip == client_outer
        and client_port.address not in addresses[ends[0]]
    ):
        addresses[ends[0]].append(client_port.address)


def _pptp_client_outer(
    i: int,
    ends: list[str],
    client_port: Port | None,
    server_if: IPv4Interface,
    nodes: list[plan.NodeConfig],
    n_client: int,
    net: Network,
    used: set[IPv4Address],
    out: LocatedProblems,
) -> IPv4Address | None:
    """The client's outer address (rules in :func:`_pptp_tunnels`): a TAP port without an
    address first takes the next free one of the server's subnet; None, refused, when the
    client has none."""
    client_outer: IPv4Address | None
    if (
        client_port is not None
        and client_port.address is None
        and client_port.kind == "tap"
        and not _bridged(nodes[n_client], client_port.index)
    ):
        client_outer = _free_host(server_if.network, used)
        if client_outer is not None:
            client_port.address = IPv4Interface(f"{client_outer}/{server_if.network.prefixlen}")
            address = (client_port.address.ip, plan.AddressItem(client_port.address.network.prefixlen))
            nodes[n_client].ports[client_port.index].address = address
    elif client_port is not None and client_port.address is not None:
        client_outer = client_port.address.ip
    else:
        client_outer = net.destination(ends[1], ends[0])
    if client_outer is None:
        out.add(
            ("tunnel", i, "from"),
            "a PPTP client needs an IPv4 address to reach the server from",
            expected=f"an address on node {ends[0]!r}",
            found="none",
        )
    return client_outer
