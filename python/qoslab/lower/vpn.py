"""OpenVPN (TAP and TUN, UDP and TCP) and PPPoE tunnels: TAP ports and their bridges,
the PPPoE server's and client's ports, one ``OpenVpnConfig`` or ``PppoeConfig`` on each
end (see the lowering rules in :mod:`qoslab.lower`).
"""

from __future__ import annotations

from ipaddress import IPv4Address, IPv4Interface
from typing import Any, cast

from qoslab.lower.common import _NOT_YET, LocatedProblems, PathT, Port, _is_transparent, _members, mac_for
from qoslab.lower.lowered import Network, addressing
from qoslab.lower.nodes import _bridged, _protected_behind, ends_of
from qoslab.plan import models as plan
from qoslab.scenario.model import OpenVpn, Pppoe, Pptp, Scenario
from qoslab.scenario.tunnels import OPENVPN_DEFAULT_MTU, PPPOE_MAX_MTU, PPPOE_OVERHEAD, below, interface_mtu

# --------------------------------------------------------------------------- OpenVPN and PPPoE


def _check_vpn(sc: Scenario, i: int, t: Any, out: LocatedProblems) -> None:
    """Refuses what the simulator's OpenVPN and PPPoE cannot run yet (stacks without
    room are refused for every command by the scenario checks, `scenario.tunnels`)."""
    base: PathT = ("tunnel", i)
    under = below(sc, t)
    if isinstance(t, OpenVpn):
        if t.auth == "md5":
            out.add(
                base + ("auth",),
                f"OpenVPN with HMAC-MD5: {_NOT_YET}",
                expected="'none', 'sha1', 'sha256' or 'sha512'",
                found="'md5'",
            )
        if under is not None and under[0] == "tunnel" and not isinstance(sc.tunnel[under[1]], Pppoe):
            out.add(
                base + ("over",),
                f"OpenVPN over a {sc.tunnel[under[1]].type} tunnel: {_NOT_YET}",
                expected="a link, a PPPoE tunnel or no `over` (the routed path)",
                found=repr(t.over),
            )


def _tap_ports(
    sc: Scenario, names: list[str], ports: list[list[Port]], counters: list[dict[str, int]]
) -> dict[tuple[int, int], Port]:
    """A port for each end of each TAP tunnel, after the link ports: (tunnel, end) -> port."""
    taps: dict[tuple[int, int], Port] = {}
    for i, t in enumerate(sc.tunnel):
        if not (isinstance(t, OpenVpn) and t.dev == "tap"):
            continue
        for k, end in enumerate((t.from_, t.to)):
            n = names.index(end)
            idx = len(ports[n])
            port = Port(n, idx, f"tap{counters[n]['tap']}", -1, "tap", mac_for(n, idx), t.mtu or OPENVPN_DEFAULT_MTU)
            counters[n]["tap"] += 1
            ports[n].append(port)
            taps[(i, k)] = port
    return taps


def _tap_bridge(
    sc: Scenario, name: str, mine: list[Port], chosen: dict[int, IPv4Interface], taps: dict[tuple[int, int], Port]
) -> list[Port]:
    """At a TAP tunnel's server end (``to``), the TAP device bridged with the node's
    Ethernet ports that carry no address, as an OpenVPN server bridges tap0 to its LAN
    (``brctl addif br0 tap0 eth1``, seed 002 §2.1); none when there is no such port."""
    server_taps = [p for (i, k), p in taps.items() if k == 1 and sc.tunnel[i].to == name and p in mine]
    lan = [p for p in mine if p.kind == "ethernet" and p.index not in chosen]
    if server_taps and lan:
        return lan + server_taps
    return []


def _l2_port(sc: Scenario, names: list[str], ports: list[list[Port]], node: int, targets: set[int]) -> Port | None:
    """The Ethernet port of ``node`` whose segment (across switches, APs and L2/L3F
    bridges) reaches one of ``targets``."""
    for p in ports[node]:
        if p.link < 0:
            continue
        seen = {node}
        todo = [names.index(m) for m in _members(sc.link[p.link]) if m != names[node]]
        while todo:
            k = todo.pop(0)
            if k in seen:
                continue
            seen.add(k)
            if k in targets:
                return p
            if _is_transparent(sc.node[names[k]]):
                for q in ports[k]:
                    if q.link >= 0:
                        todo.extend(names.index(m) for m in _members(sc.link[q.link]) if names.index(m) not in seen)
    return None


def _pppoe_port(
    sc: Scenario,
    names: list[str],
    ports: list[list[Port]],
    taps: dict[tuple[int, int], Port],
    t: Pppoe | Pptp,
    k: int,
) -> Port | None:
    """The port end ``k`` of PPPoE tunnel ``t`` runs on: the TAP port when the node is an
    end of the TAP tunnel below, else its port on (or reaching) the link or the TAP's far end."""
    node = names.index((t.from_, t.to)[k])
    what = below(sc, t)
    if what is None:
        return None
    kind, j = what
    if kind == "tunnel":
        u = sc.tunnel[j]
        for e, end in enumerate((u.from_, u.to)):
            if names.index(end) == node:
                return taps.get((j, e))
        return _l2_port(sc, names, ports, node, {names.index(u.from_), names.index(u.to)})
    members = {names.index(m) for m in _members(sc.link[j])}
    if node in members:
        return next((p for p in ports[node] if p.link == j), None)
    return _l2_port(sc, names, ports, node, members)


def _vpn_tunnels(
    sc: Scenario,
    names: list[str],
    nodes: list[plan.NodeConfig],
    ports: list[list[Port]],
    addresses: dict[str, list[IPv4Interface]],
    taps: dict[tuple[int, int], Port],
    out: LocatedProblems,
) -> None:
    """PPPoE sessions, then OpenVPN ends (which may ride on a PPPoE link), on each end node.

    PPPoE: the server (``to``) is the Access Concentrator; its PPP address is its address
    on the port the session runs on (else its first); it assigns the client the first
    free host address of that subnet with IPCP. Service-Name = ``service_name`` (empty:
    any), AC-Name = the server's node name, session id = tunnel index + 1, user = the
    client's node name, secret shared by both ends. MTU = ``mtu``, else the interface
    below less 8, at most 1492 (RFC 2516 §7). The client routes the server's PPP address
    and what lies behind a forwarding server into ``ppp0``; the server routes the
    client's address.

    OpenVPN: UDP (or, with ``proto = "tcp"``, a TCP connection client → server ``port``)
    between the ends' addresses (their PPP addresses when over a PPPoE
    tunnel), port ``port`` at both ends (OpenVPN binds 1194 on both unless --nobind);
    TAP ends are the ports made by :func:`_tap_ports`; a TUN end is an interface of MTU
    ``mtu`` (default 1500, OpenVPN's --tun-mtu) protecting what lies behind the other end
    as an IPsec tunnel does. Keys derive from the tunnel index.
    """
    net = addressing(sc, names, ports, addresses)
    used = {a.ip for addrs in addresses.values() for a in addrs}
    ppp_addresses: dict[int, tuple[IPv4Address, IPv4Address]] = {}
    ppp_count = [0 for _ in names]
    for i, t in enumerate(sc.tunnel):
        if isinstance(t, Pppoe):
            session = _pppoe_session(sc, i, t, names, nodes, ports, addresses, taps, used, ppp_count, out)
            if session is not None:
                ppp_addresses[i] = session
    tun_count = [0 for _ in names]
    for i, t in enumerate(sc.tunnel):
        if isinstance(t, OpenVpn):
            _openvpn_ends(sc, i, t, net, names, nodes, addresses, taps, ppp_addresses, tun_count, out)


def _pppoe_ends(
    sc: Scenario,
    i: int,
    t: Pppoe,
    names: list[str],
    nodes: list[plan.NodeConfig],
    ports: list[list[Port]],
    addresses: dict[str, list[IPv4Interface]],
    taps: dict[tuple[int, int], Port],
    used: set[IPv4Address],
    out: LocatedProblems,
) -> tuple[Port, Port, IPv4Interface, IPv4Address] | None:
    """PPPoE tunnel ``i``'s client and server ports, the server's address (its PPP
    address, in the subnet the client's comes from) and the client's; None, refused
    at its key, when it has none of them."""
    ends = [t.from_, t.to]
    found = [_pppoe_port(sc, names, ports, taps, t, k) for k in (0, 1)]
    if found[0] is None or found[1] is None:
        k = 0 if found[0] is None else 1
        out.add(
            ("tunnel", i, "over"),
            f"node {ends[k]} has no port on {t.over!r} for PPPoE",
            expected=f"{ends[k]!r} on that Ethernet segment or an end of that TAP tunnel",
            found=repr(t.over),
        )
        return None
    client_port, server_port = found[0], found[1]
    assert client_port is not None and server_port is not None  # refused above otherwise
    bridged = [(k, p) for k, p in enumerate((client_port, server_port)) if _bridged(nodes[p.node], p.index)]
    if bridged:
        k, p = bridged[0]
        out.add(
            ("tunnel", i, "to" if k else "from"),
            f"PPPoE on {ends[k]}'s bridged port {p.name}: {_NOT_YET}",
            expected="a host or router end (a routed port or a TAP port)",
            found=f"{ends[k]!r} ({sc.node[ends[k]].role})",
        )
        return None
    server_if = server_port.address or next(iter(addresses.get(ends[1], [])), None)
    if server_if is None:
        out.add(
            ("tunnel", i, "to"),
            "a PPPoE server needs an IPv4 address for its PPP link and a subnet to assign the client an address from",
            expected=f"an address on node {ends[1]!r}",
            found="none",
        )
        return None
    client_ip = next((h for h in server_if.network.hosts() if h not in used), None)
    if client_ip is None:
        out.add(
            ("tunnel", i, "to"),
            "no free address for the PPPoE client in the server's subnet",
            expected=f"a free host address in {server_if.network}",
            found="all in use",
        )
        return None
    return client_port, server_port, server_if, client_ip


def _pppoe_session(
    sc: Scenario,
    i: int,
    t: Pppoe,
    names: list[str],
    nodes: list[plan.NodeConfig],
    ports: list[list[Port]],
    addresses: dict[str, list[IPv4Interface]],
    taps: dict[tuple[int, int], Port],
    used: set[IPv4Address],
    ppp_count: list[int],
    out: LocatedProblems,
) -> tuple[IPv4Address, IPv4Address] | None:
    """PPPoE tunnel ``i`` as a PppoeConfig on each end (rules in :func:`_vpn_tunnels`);
    its (client, server) PPP addresses, or None when it is refused."""
    ends = [t.from_, t.to]
    found = _pppoe_ends(sc, i, t, names, nodes, ports, addresses, taps, used, out)
    if found is None:
        return None
    client_port, server_port, server_if, client_ip = found
    n_client, n_server = names.index(ends[0]), names.index(ends[1])
    used.add(client_ip)
    under = interface_mtu(sc, below(sc, t)) or 1500
    mtu = t.mtu or min(PPPOE_MAX_MTU, under - PPPOE_OVERHEAD)
    behind = (
        []
        if not nodes[n_server].ip_forward
        else [
            (str(a.network.network_address), a.network.prefixlen)
            for a in addresses[ends[1]]
            if a.ip != server_if.ip and a.network != server_if.network
        ]
    )
    for n, port, server, local, peer, routes in (
        (n_server, server_port, True, server_if.ip, client_ip, [[str(client_ip), 32]]),
        (
            n_client,
            client_port,
            False,
            client_ip,
            server_if.ip,
            [[str(server_if.ip), 32]] + [[a, p] for a, p in behind],
        ),
    ):
        end = plan.PppoeConfig(
            name=f"ppp{ppp_count[n]}",
            port=port.index,
            server=server,
            session_id=i + 1 if server else 0,
            local=local,
            peer=peer,
            routes=[plan.Route.model_validate(r) for r in routes],
            service_name=t.service_name or "",
            ac_name=ends[1],
            auth=plan.PppAuth(t.auth),
            user=ends[0],
            secret=f"qoslab-{t.name}",
            mtu=mtu,
        )
        ends_of(nodes[n].pppoe).append(end)
        ppp_count[n] += 1
    addresses[ends[0]].append(IPv4Interface(f"{client_ip}/{server_if.network.prefixlen}"))
    return client_ip, server_if.ip


def _openvpn_ends(
    sc: Scenario,
    i: int,
    t: OpenVpn,
    net: Network,
    names: list[str],
    nodes: list[plan.NodeConfig],
    addresses: dict[str, list[IPv4Interface]],
    taps: dict[tuple[int, int], Port],
    ppp_addresses: dict[int, tuple[IPv4Address, IPv4Address]],
    tun_count: list[int],
    out: LocatedProblems,
) -> None:
    """OpenVPN tunnel ``i`` as an OpenVpnConfig on each end (rules in :func:`_vpn_tunnels`)."""
    ends = [t.from_, t.to]
    what = below(sc, t)
    if what is not None and what[0] == "tunnel" and what[1] in ppp_addresses:
        u = sc.tunnel[what[1]]
        client_ip, server_ip = ppp_addresses[what[1]]
        by_node = {u.from_: client_ip, u.to: server_ip}
        local = [by_node.get(ends[0]), by_node.get(ends[1])]
    else:
        local = [net.destination(ends[1], ends[0]), net.destination(ends[0], ends[1])]
    for k, key in enumerate(("from", "to")):
        if local[k] is None:
            out.add(
                ("tunnel", i, key),
                "an OpenVPN end needs an IPv4 address",
                expected=f"an address on node {ends[k]} (on {t.over!r})" if t.over else f"an address on node {ends[k]}",
                found="none",
            )
    if local[0] is None or local[1] is None:
        return
    for k in (0, 1):
        n, far = names.index(ends[k]), names.index(ends[1 - k])
        tap = taps.get((i, k))
        if tap is not None:
            name, protects = tap.name, []
        else:
            name = f"tun{tun_count[n]}"
            tun_count[n] += 1
            protects = [
                [a, p]
                for a, p in _protected_behind(nodes[far], addresses[ends[1 - k]], cast(IPv4Address, local[1 - k]))
            ]
        end = plan.OpenVpnConfig(
            name=name,
            dev=plan.OpenVpnDev(t.dev),
            server=k == 1,
            port=tap.index if tap is not None else None,
            local=cast(IPv4Address, local[k]),
            remote=cast(IPv4Address, local[1 - k]),
            local_port=t.port,
            remote_port=t.port,
            proto=plan.OpenVpnProto(t.proto),
            cipher=plan.OpenVpnCipher(t.cipher),
            auth=plan.OpenVpnAuth(t.auth),
            replay=t.replay,
            fragment=int(t.fragment) if t.fragment is not None else None,
            mtu=t.mtu or OPENVPN_DEFAULT_MTU,
            protects=[plan.Protect1.model_validate(p) for p in protects],
            key=i,
        )
        ends_of(nodes[n].openvpn).append(end)
