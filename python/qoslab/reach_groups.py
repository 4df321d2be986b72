"""Interchangeable nodes, so that ``qoslab reach`` on a large network pings one pair per
pair of groups instead of every ordered pair.

Who reaches whom on 10,000 hosts is 10^8 ordered pairs, each a simulation of its own:
days of work, and a matrix nobody can read. But most hosts of a large network are alike:
each hangs off the same switch (or the same access point) by a link of the same kind,
with the same settings, an address in the same subnet, and nothing else in the scenario
names it. Swapping two such hosts (names and addresses with them) maps the network onto
itself, so a ping between any two of them, or from any of them to a third node, has the
same outcome as between any other two: one representative pair stands for them all.

Two speakers are put in one group only when all of this holds for both:

- each is on exactly one link, and on the same neighbour (the other end of a
  point-to-point link) or the same 802.11 link (as a station);
- their node tables are equal once the name and the host part of each address are set
  aside (same role, CPU, gateway, routes, prefix lengths and subnets);
- their links' tables are equal once the link's name and the node itself are set aside;
- nothing else in the scenario names them or one of their addresses (a test, a route, a
  tunnel, a NAT forward, an IPsec selector, a sweep): such a node is special and stays
  alone.

Groups are used only above :data:`EXHAUSTIVE_UP_TO` speakers; below it every ordered pair
is still pinged, as before.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from typing import Any

EXHAUSTIVE_UP_TO = 64
"""Networks with at most this many speakers are pinged pair by pair (4,032 ordered pairs)."""


_QUOTED = re.compile(r'"((?:[^"\\]|\\.)*)"')


def interchangeable(scenario: Any, speakers: list[str], members_of: Any) -> list[list[str]]:
    """Groups of interchangeable speakers, in the order of ``speakers`` (see the module's
    docstring); a speaker that is like no other is a group of one.

    ``members_of(link)`` lists a link's nodes (``qoslab.backends.sim._members``).
    """
    dump = scenario.model_dump(mode="json", by_alias=True, exclude_none=True)
    # Every string of the scenario counted once, in one pass: a node that nothing else
    # names appears twice (its own table's key, one link end), each of its addresses
    # once (its own table), and never bare (a gateway, a route, a test's `to`).
    strings = Counter(_QUOTED.findall(json.dumps(dump)))
    links = scenario.link
    on: dict[str, list[int]] = {}
    for i, link in enumerate(links):
        for n in members_of(link):
            on.setdefault(n, []).append(i)
    signatures: dict[str, str] = {}
    for n in speakers:
        mine = on.get(n, [])
        node = dict(dump["node"][n])
        addresses = [str(a) for a in node.get("address", [])]
        if len(mine) != 1 or strings[n] != 2:
            continue
        if any(strings[a] != 1 or strings[a.split("/")[0]] for a in addresses):
            continue
        members = members_of(links[mine[0]])
        if len(members) > 2:  # a shared medium (802.11): the same one, in the same place
            where: Any = ["shared", mine[0], members.index(n) == 0]
            link_dump: Any = None
        else:  # a link of its own, to the same neighbour, with the same settings
            where = ["to", [m for m in members if m != n], members.index(n)]
            link_dump = {k: v for k, v in dump["link"][mine[0]].items() if k not in ("name", "ends")}
        node["address"] = [_subnet(a) for a in addresses]
        signatures[n] = json.dumps([where, link_dump, node], sort_keys=True)
    groups: dict[str, list[str]] = {}
    order: list[list[str]] = []
    for n in speakers:
        key = signatures.get(n)
        if key is None:
            order.append([n])
        elif key in groups:
            groups[key].append(n)
        else:
            groups[key] = [n]
            order.append(groups[key])
    return order


def _subnet(address: str) -> str:
    """The subnet of ``10.0.0.5/24``: ``10.0.0.0/24``."""
    from ipaddress import IPv4Interface

    return str(IPv4Interface(address).network)


__all__ = ["EXHAUSTIVE_UP_TO", "interchangeable"]
