"""Checks that need the whole scenario: references between tables, addressing, sweeps.

They run after every table validated on its own, and report every problem at the
key or value that causes it.
"""

from __future__ import annotations

import copy
import re
from ipaddress import IPv4Address
from typing import Any

from pydantic import BaseModel, ValidationError

from qoslab.errors import Problem, did_you_mean
from qoslab.scenario.load import PathT, Spans, format_path, one_of, problem, pydantic_problems, show
from qoslab.scenario.model import Atm, AtmSwitch, Bridge, Ethernet, LaneServer, OpenVpn, Scenario, Serial, Tunnel, Wifi

MAX_NODES = 1 << 24
"""Nodes a scenario may have: each port's MAC holds its node's index in 24 bits
(``02:NN:NN:NN:PP:PP``, :func:`qoslab.backends.sim.mac_for`)."""

MAX_PORTS_PER_NODE = (1 << 16) - 1
"""Ports a node may have (one per link it is on, one per TAP tunnel it ends): the
MAC's 16-bit port field, whose 0 is kept free, and the simulator's 16-bit port index."""

_STEP = re.compile(r"\.?([A-Za-z_][A-Za-z0-9_-]*)|\[(\d+)\]")


def parse_param_path(text: str) -> list[str | int] | None:
    """Split a sweep parameter path into keys and indices; None if malformed.

    >>> parse_param_path("link[0].rate")
    ['link', 0, 'rate']
    >>> parse_param_path("node.a.forwarding")
    ['node', 'a', 'forwarding']
    >>> parse_param_path("link[0]..rate") is None
    True
    """
    steps: list[str | int] = []
    pos = 0
    while pos < len(text):
        m = _STEP.match(text, pos)
        if not m or (pos == 0 and text.startswith(".")):
            return None
        steps.append(m[1] if m[1] is not None else int(m[2]))
        pos = m.end()
    return steps or None


def point_indices(mode: str, lengths: list[int]) -> list[tuple[int, ...]]:
    """The points of a sweep as one value index per parameter, in run order.

    ``grid`` is every combination, the last parameter varying fastest (as nested loops
    written in the file's order); ``zip`` pairs the n-th values.

    >>> point_indices("grid", [2, 3])
    [(0, 0), (0, 1), (0, 2), (1, 0), (1, 1), (1, 2)]
    >>> point_indices("zip", [3, 3])
    [(0, 0), (1, 1), (2, 2)]
    """
    import itertools

    if mode == "zip":
        return [tuple([n] * len(lengths)) for n in range(min(lengths, default=0))]
    return list(itertools.product(*(range(k) for k in lengths)))


def put(data: dict[str, Any], steps: PathT | list[str | int], value: Any) -> None:
    """Put ``value`` at the parameter path ``steps`` of raw scenario data (in place).

    >>> d = {"link": [{"rate": "1 Mbps"}]}
    >>> put(d, ["link", 0, "rate"], "2 Mbps"); d
    {'link': [{'rate': '2 Mbps'}]}
    """
    cur: Any = data
    for step in steps[:-1]:
        if isinstance(cur, dict) and step not in cur:
            cur[step] = {}
        cur = cur[step]
    cur[steps[-1]] = value


def link_nodes(link: Any) -> list[str]:
    """Every node a link touches: its ends, or a wifi link's AP and stations."""
    if isinstance(link, Wifi):
        return ([link.ap] if link.ap else []) + list(link.stations)
    return list(link.ends)


def _raw_index_path(data: dict[str, Any], base: PathT, index: int) -> PathT:
    """``base + (index,)`` if the raw value at base is a list, else ``base`` (a single item)."""
    cur: Any = data
    for step in base:
        try:
            cur = cur[step]
        except (KeyError, IndexError, TypeError):
            return base
    return base + (index,) if isinstance(cur, list) else base


class _Checker:
    def __init__(self, scenario: Scenario, data: dict[str, Any], spans: Spans) -> None:
        self.sc = scenario
        self.data = data
        self.spans = spans
        self.problems: list[Problem] = []
        self.nodes = list(scenario.node)

    def add(self, path: PathT, message: str, *, at: str = "value", **kw: Any) -> None:
        self.problems.append(problem(self.spans, path, message, at=at, **kw))

    def node_ref(self, path: PathT, name: str, what: str = "node") -> None:
        if name not in self.sc.node:
            self.add(
                path,
                f"unknown {what}",
                expected=one_of(self.nodes) if self.nodes else "a node defined in a [node.NAME] table",
                found=repr(name),
                hint=did_you_mean(name, self.nodes)
                or ("define it with a [node.NAME] table" if not self.nodes else None),
            )

    # ------------------------------------------------------------------ links
    def links(self) -> None:
        names: dict[str, int] = {}
        for i, link in enumerate(self.sc.link):
            base: PathT = ("link", i)
            if link.name:
                if link.name in names:
                    self.add(
                        base + ("name",),
                        "link name already used",
                        expected="a name no other link has",
                        found=repr(link.name),
                        hint=f"link[{names[link.name]}] has it",
                    )
                names.setdefault(link.name, i)
            if isinstance(link, (Ethernet, Serial, Atm)):
                for j, end in enumerate(link.ends):
                    self.node_ref(base + ("ends", j), end)
                if link.ends[0] == link.ends[1] and link.ends[0] in self.sc.node:
                    self.add(
                        base + ("ends", 1),
                        "a link joins a node to itself",
                        expected="two different nodes",
                        found=show(link.ends),
                    )
            elif isinstance(link, Wifi):
                if link.mode == "infrastructure":
                    if link.ap is None:
                        self.add(base, "wifi link has no AP", expected="ap = NODE (or mode = 'adhoc')", found="nothing")
                        self.problems[-1].key = format_path(base + ("ap",))
                    else:
                        self.node_ref(base + ("ap",), link.ap, "node (AP)")
                elif link.ap is not None:
                    self.add(
                        base + ("ap",),
                        "an ad hoc cell has no AP",
                        expected="no ap with mode = 'adhoc'",
                        found=repr(link.ap),
                    )
                if not link.stations:
                    self.add(base, "wifi link has no station", expected="stations = [NODE, …]", found="nothing")
                    self.problems[-1].key = format_path(base + ("stations",))
                for j, st in enumerate(link.stations):
                    self.node_ref(base + ("stations", j), st, "node (station)")
                    if st == link.ap:
                        self.add(
                            base + ("stations", j),
                            "the AP is listed as a station",
                            expected="stations other than the AP",
                            found=repr(st),
                        )
                members = link_nodes(link)
                for who, heard in (link.hears or {}).items():
                    if who not in members:
                        self.add(
                            base + ("hears", who),
                            "not on this wifi link",
                            at="key",
                            expected=one_of(members),
                            found=repr(who),
                            hint=did_you_mean(who, members),
                        )
                    for j, other in enumerate(heard):
                        if other not in members:
                            self.add(
                                base + ("hears", who, j),
                                "not on this wifi link",
                                expected=one_of(members),
                                found=repr(other),
                                hint=did_you_mean(other, members),
                            )
                for who in link.frame_error_rate:
                    if who not in members:
                        self.add(
                            base + ("frame_error_rate", who),
                            "not on this wifi link",
                            at="key",
                            expected=one_of(members),
                            found=repr(who),
                            hint=did_you_mean(who, members),
                        )

    # ------------------------------------------------------------------ ATM
    def atm(self) -> None:
        """A switch's cross-connects name its ports: a neighbour over an ATM link, or the
        port's name (atm0, atm1, … in the order of the switch's ATM links)."""
        for name, node in self.sc.node.items():
            if not isinstance(node, AtmSwitch) or not node.cross_connects:
                continue
            neighbours = [
                e
                for link in self.sc.link
                if isinstance(link, Atm) and name in link.ends
                for e in link.ends
                if e != name
            ]
            ports = [f"atm{k}" for k in range(len(neighbours))]
            choices = ports + neighbours
            for i, c in enumerate(node.cross_connects):
                for key, ref in (("a", c.a), ("b", c.b)):
                    if ref not in choices:
                        self.add(
                            ("node", name, "cross_connects", i, key),
                            f"switch {name} has no ATM port {ref!r}",
                            expected=one_of(choices) if choices else "an ATM link with the switch as an end",
                            found=repr(ref),
                            hint=did_you_mean(ref, choices) if choices else None,
                        )
                if c.a == c.b:
                    self.add(
                        ("node", name, "cross_connects", i, "b"),
                        "a cross-connect joins a port to itself",
                        expected="two different ports",
                        found=repr(c.b),
                    )

        # LANE: an LE client's ELAN must have an LES (a lane-server that serves it).
        served = sorted(
            {
                e
                for name, node in self.sc.node.items()
                if isinstance(node, LaneServer) and "les" in node.services
                for e in node.served_elans(name)
            }
        )
        for li, link in enumerate(self.sc.link):
            if isinstance(link, Atm) and link.elan is not None and link.elan not in served:
                self.add(
                    ("link", li, "elan"),
                    f"an LE client with no LES: no lane-server runs ELAN {link.elan!r}",
                    expected=one_of(served) if served else "a [node.X] role = 'lane-server' whose `elans` list it",
                    found=repr(link.elan),
                    hint=did_you_mean(link.elan, served) if served else None,
                )

    # ------------------------------------------------------------------ nodes
    def nodes_(self) -> None:
        owners: dict[IPv4Address, tuple[str, int]] = {}
        for name, node in self.sc.node.items():
            base: PathT = ("node", name)
            for k, iface in enumerate(node.address):
                where = _raw_index_path(self.data, base + ("address",), k)
                if iface.ip in owners and owners[iface.ip][0] != name:
                    other = owners[iface.ip][0]
                    self.add(
                        where,
                        f"address already used by node {other!r}",
                        expected="an address no other node has",
                        found=repr(str(iface)),
                    )
                elif iface.ip == iface.network.network_address and iface.network.prefixlen < 31:
                    self.add(
                        where,
                        "a network address, not a host's",
                        expected=f"a host address in {iface.network}",
                        found=repr(str(iface)),
                    )
                elif iface.ip == iface.network.broadcast_address and iface.network.prefixlen < 31:
                    self.add(
                        where,
                        "the broadcast address, not a host's",
                        expected=f"a host address in {iface.network}",
                        found=repr(str(iface)),
                    )
                owners.setdefault(iface.ip, (name, k))
            subnets = [iface.network for iface in node.address]
            subnet_text = ", ".join(str(s) for s in subnets)
            hops: list[tuple[PathT, IPv4Address]] = []
            if node.gateway is not None:
                hops.append((base + ("gateway",), node.gateway))
            for r, route in enumerate(node.routes):
                hops.append((base + ("routes", r, "via"), route.via))
            for path, hop in hops:
                if not subnets:
                    self.add(
                        path,
                        "a next hop but no address to reach it from",
                        expected="an address on the node (address = 'a.b.c.d/len')",
                        found=repr(str(hop)),
                    )
                elif not any(hop in s for s in subnets):
                    self.add(
                        path,
                        "next hop outside the node's subnets",
                        expected=f"an address in {subnet_text}",
                        found=repr(str(hop)),
                    )
                elif any(hop == iface.ip for iface in node.address):
                    self.add(
                        path,
                        "the next hop is the node itself",
                        expected=f"another address in {subnet_text}",
                        found=repr(str(hop)),
                    )
            if isinstance(node, Bridge):
                ports = [i for i, link in enumerate(self.sc.link) if name in link_nodes(link)]
                if len(ports) < 2:
                    found = "no link" if not ports else f"{len(ports)} link: {self.sc.link_name(ports[0])}"
                    self.add(
                        base,
                        "a bridge needs at least two ports",
                        expected="two or more links with this node as an end",
                        found=found,
                    )
            if node.role in ("switch", "atm-switch"):
                pass  # a switch with one port is odd but harmless

    # ------------------------------------------------------------------ limits
    def limits(self) -> None:
        """The sizes the MAC scheme can number: every port of every node its own MAC."""
        if len(self.sc.node) > MAX_NODES:
            first_extra = list(self.sc.node)[MAX_NODES]
            self.add(
                ("node", first_extra),
                f"{len(self.sc.node):,} nodes: more than a scenario may have (each port's MAC numbers its node in 24 bits)",
                at="key",
                expected=f"at most {MAX_NODES:,} nodes",
                found=f"{len(self.sc.node):,}",
            )
        ports: dict[str, int] = {}
        for link in self.sc.link:
            for member in link_nodes(link):
                ports[member] = ports.get(member, 0) + 1
        for t in self.sc.tunnel:
            if isinstance(t, OpenVpn) and t.dev == "tap":
                for end in (t.from_, t.to):
                    ports[end] = ports.get(end, 0) + 1
        for name, count in ports.items():
            if count > MAX_PORTS_PER_NODE and name in self.sc.node:
                self.add(
                    ("node", name),
                    f"{count:,} ports (links and TAP tunnels): more than a node may have (each port's MAC numbers it in 16 bits)",
                    at="key",
                    expected=f"at most {MAX_PORTS_PER_NODE:,} links and TAP tunnels on one node",
                    found=f"{count:,}",
                    hint="spread the links over more nodes (several switches joined by links)",
                )

    # ------------------------------------------------------------------ tunnels
    def tunnels(self) -> None:
        names, link_names = self._tunnel_names()
        choices = list(names) + list(link_names) + [f"link[{j}]" for j in range(len(self.sc.link))]
        below: dict[int, int] = {}  # tunnel index -> tunnel index it runs over
        for i, t in enumerate(self.sc.tunnel):
            self._tunnel(i, t, names, link_names, choices, below)
        if not self._tunnel_loops(below):
            from qoslab.scenario.tunnels import room_problems

            for path, message, expected, found in room_problems(self.sc):
                self.add(path, message, expected=expected, found=found)

    def _tunnel_names(self) -> tuple[dict[str, int], dict[str, int]]:
        """Each tunnel's name -> its index, each link's; a name used twice is refused."""
        names: dict[str, int] = {}
        for i, t in enumerate(self.sc.tunnel):
            if t.name in names:
                self.add(
                    ("tunnel", i, "name"),
                    "tunnel name already used",
                    expected="a name no other tunnel has",
                    found=repr(t.name),
                    hint=f"tunnel[{names[t.name]}] has it",
                )
            names.setdefault(t.name, i)
        link_names = {link.name: j for j, link in enumerate(self.sc.link) if link.name}
        for name in set(names) & set(link_names):
            self.add(
                ("tunnel", names[name], "name"),
                "a link has this name too",
                expected="a name no link has",
                found=repr(name),
                hint="`over` could not tell them apart",
            )
        return names, link_names

    def _tunnel(
        self,
        i: int,
        t: Tunnel,
        names: dict[str, int],
        link_names: dict[str, int],
        choices: list[str],
        below: dict[int, int],
    ) -> None:
        """Tunnel ``i``'s ends, options and what it runs over (recorded in ``below``
        when that is another tunnel)."""
        base: PathT = ("tunnel", i)
        self.node_ref(base + ("from",), t.from_)
        self.node_ref(base + ("to",), t.to)
        if t.from_ == t.to and t.from_ in self.sc.node:
            self.add(base + ("to",), "a tunnel from a node to itself", expected="another node", found=repr(t.to))
        if t.type == "openvpn" and t.proto == "tcp" and t.fragment is not None:
            # OpenVPN 2.4 manual, --fragment: "should only be used when you are tunneling
            # over UDP"; options.c refuses it with a TCP --proto.
            self.add(
                base + ("fragment",),
                "OpenVPN refuses --fragment with proto = 'tcp' (TCP carries each packet whole)",
                expected="no `fragment` with proto = 'tcp' (or proto = 'udp')",
                found=str(int(t.fragment)),
                hint="--mssfix, the TCP-mode alternative, is not modelled",
            )
        if t.over is None:
            if t.type == "pppoe":
                self.add(
                    base,
                    "missing required key 'over'",
                    expected="the Ethernet link or TAP tunnel PPPoE runs on",
                    found="nothing",
                )
                self.problems[-1].key = format_path(base + ("over",))
            return
        m = re.fullmatch(r"link\[(\d+)\]", t.over)
        if t.over in names:
            below[i] = names[t.over]
            under = self.sc.tunnel[names[t.over]]
            if t.type == "pppoe" and not (under.type == "openvpn" and under.dev == "tap"):
                self.add(
                    base + ("over",),
                    "PPPoE needs an Ethernet layer below",
                    expected="an Ethernet link or an OpenVPN tunnel with dev = 'tap'",
                    found=repr(t.over),
                )
        elif t.over in link_names or (m and int(m[1]) < len(self.sc.link)):
            j = link_names.get(t.over, int(m[1]) if m else -1)
            link = self.sc.link[j]
            ends = link_nodes(link)
            if t.from_ not in ends and t.to not in ends:
                self.add(
                    base + ("over",),
                    "neither end of the tunnel is on that link",
                    expected=f"a link touching {t.from_!r} or {t.to!r}",
                    found=f"{t.over!r} (joins {', '.join(map(repr, ends))})",
                )
        else:
            self.add(
                base + ("over",),
                "names no tunnel or link",
                expected=one_of(choices) if choices else "a tunnel name, a link name or 'link[N]'",
                found=repr(t.over),
                hint=did_you_mean(t.over, choices),
            )

    def _tunnel_loops(self, below: dict[int, int]) -> bool:
        """Follow ``over`` from each tunnel; report each loop once, at its first tunnel.
        Whether there was one."""
        reported: set[frozenset[int]] = set()
        for start in range(len(self.sc.tunnel)):
            seen: list[int] = []
            cur: int | None = start
            while cur is not None and cur not in seen:
                seen.append(cur)
                cur = below.get(cur)
            if cur is None:
                continue
            loop = seen[seen.index(cur) :]
            key = frozenset(loop)
            if key in reported:
                continue
            reported.add(key)
            first = min(loop)
            k = loop.index(first)
            order = loop[k:] + loop[:k] + [first]
            chain = " over ".join(self.sc.tunnel[x].name for x in order)
            self.add(
                ("tunnel", first, "over"),
                "tunnels run over each other in a loop",
                expected="a stack that ends on a link or the routed path",
                found=chain,
            )
        return bool(reported)

    # ------------------------------------------------------------------ tests
    def tests(self) -> None:
        for i, t in enumerate(self.sc.test):
            self.node_ref(("test", i, "from"), t.from_)
            self.node_ref(("test", i, "to"), t.to)
            if t.from_ == t.to and t.from_ in self.sc.node:
                self.add(("test", i, "to"), "a test from a node to itself", expected="another node", found=repr(t.to))

        for i, b in enumerate(self.sc.background):
            self.node_ref(("background", i, "from"), b.from_)
            self.node_ref(("background", i, "to"), b.to)
            if b.from_ == b.to and b.from_ in self.sc.node:
                self.add(
                    ("background", i, "to"),
                    "background traffic from a node to itself",
                    expected="another node",
                    found=repr(b.to),
                )

    # ------------------------------------------------------------------ adaptive routers
    def link_index(self, ref: str) -> int | None:
        """The link a name or 'link[N]' names, if any."""
        for j, link in enumerate(self.sc.link):
            if link.name == ref or ref == f"link[{j}]":
                return j
        return None

    def adaptive(self) -> None:
        """Seed 004's adaptive upstream: `modem` a serial line from the router to its
        peer, `radio` an 802.11 cell both are on."""
        choices = [self.sc.link_name(j) for j in range(len(self.sc.link))]
        for name, node in self.sc.node.items():
            a = getattr(node, "adaptive", None)
            if a is None:
                continue
            base: PathT = ("node", name, "adaptive")
            peer = None
            m = self.link_index(a.modem)
            if m is None:
                self.add(
                    base + ("modem",),
                    "names no link",
                    expected=one_of(choices) if choices else "a serial link",
                    found=repr(a.modem),
                    hint=did_you_mean(a.modem, choices),
                )
            elif not isinstance(modem := self.sc.link[m], Serial) or name not in modem.ends:
                self.add(
                    base + ("modem",),
                    "not a serial line from this router",
                    expected=f"a serial link with {name!r} as an end",
                    found=f"{a.modem!r} ({modem.type}, joins {', '.join(map(repr, link_nodes(modem)))})",
                )
            else:
                peer = next(e for e in modem.ends if e != name)
            r = self.link_index(a.radio)
            if r is None:
                self.add(
                    base + ("radio",),
                    "names no link",
                    expected=one_of(choices) if choices else "a wifi link",
                    found=repr(a.radio),
                    hint=did_you_mean(a.radio, choices),
                )
            elif (
                not isinstance(self.sc.link[r], Wifi)
                or name not in link_nodes(self.sc.link[r])
                or (peer is not None and peer not in link_nodes(self.sc.link[r]))
            ):
                want = f"a wifi link with {name!r}" + (f" and {peer!r}" if peer else "")
                self.add(
                    base + ("radio",),
                    "not a radio both routers are on",
                    expected=want,
                    found=f"{a.radio!r} ({self.sc.link[r].type}, joins {', '.join(map(repr, link_nodes(self.sc.link[r])))})",
                )

    # ------------------------------------------------------------------ sweep
    def sweep(self) -> None:
        if self.sc.sweep is None:
            return
        params: list[tuple[str, PathT, list[Any]]] = []
        for key, values in self.sc.sweep.values.items():
            where: PathT = ("sweep", key)
            steps = parse_param_path(key)
            if steps is None:
                self.add(
                    where,
                    "not a parameter path",
                    at="key",
                    expected="a path such as 'link[0].rate' or 'node.a.forwarding'",
                    found=repr(key),
                )
                continue
            missing = self._walk(steps)
            if missing is not None:
                prefix, choices = missing
                self.add(
                    where,
                    "names no parameter",
                    at="key",
                    expected=one_of(choices) if choices else "a parameter path such as 'link[0].rate'",
                    found=repr(key),
                    hint=did_you_mean(str(steps[len(prefix)]), choices) if choices else None,
                )
                continue
            params.append((key, tuple(steps), values))
        self._check_points(params)

    def _walk(self, steps: list[str | int]) -> tuple[list[str | int], list[str]] | None:
        """None if ``steps`` names a parameter; else the valid prefix and the choices after it."""
        cur: Any = self.sc
        for k, step in enumerate(steps):
            prefix = steps[:k]
            if isinstance(cur, BaseModel):
                fields = {f.alias or n: n for n, f in type(cur).model_fields.items()}
                if not isinstance(step, str) or step not in fields:
                    return prefix, list(fields)
                cur = getattr(cur, fields[step])
            elif isinstance(cur, dict):
                if step not in cur:
                    return prefix, [str(x) for x in cur]
                cur = cur[step]
            elif isinstance(cur, list):
                if not isinstance(step, int) or not 0 <= step < len(cur):
                    return prefix, [f"[{x}]" for x in range(len(cur))]
                cur = cur[step]
            else:
                return prefix, []
        return None

    def _check_points(self, params: list[tuple[str, PathT, list[Any]]]) -> None:
        """Validate the scenario at each point of the sweep (values put in place together).

        A value that fails is reported at its position in [sweep]; each once. A grid
        of more than 256 points is checked one parameter at a time instead.
        """
        import itertools

        if not params:
            return
        indices = [range(len(values)) for _, _, values in params]
        mode = self.sc.sweep.mode if self.sc.sweep is not None else "grid"
        if mode == "zip" or sum(1 for _ in itertools.islice(itertools.product(*indices), 257)) <= 256:
            points: list[tuple[int | None, ...]] = list(point_indices(mode, [len(values) for _, _, values in params]))
        else:
            points = [
                tuple(n if k == p else None for k in range(len(params))) for p, r in enumerate(indices) for n in r
            ]
        reported: set[tuple[int, int]] = set()
        tests_only = all(key.startswith("test[") for key, _, _ in params)
        for point in points:
            # Only the tests change when only tests are swept: the rest is shared, not copied.
            data = (
                dict(self.data, test=copy.deepcopy(self.data.get("test", [])))
                if tests_only
                else copy.deepcopy(self.data)
            )
            data.pop("sweep", None)
            for (_key, steps, values), n in zip(params, point):
                if n is not None:
                    put(data, steps, values[n])
            if (
                with_tests_of(self.sc, data, [key for (key, _, _), n in zip(params, point) if n is not None])
                is not None
            ):
                continue
            try:
                Scenario.model_validate(data)
                continue
            except ValidationError as err:
                found = pydantic_problems(err, data, Spans(""))
            for p in found:
                for k, ((key, steps, _values), n) in enumerate(zip(params, point)):
                    prefix = format_path(steps)
                    if n is None or (k, n) in reported or not p.key:
                        continue
                    parent = format_path(steps[:-1])
                    if p.key == prefix or p.key.startswith((prefix + ".", prefix + "[")) or p.key == parent:
                        reported.add((k, n))
                        where: PathT = ("sweep", key, n)
                        line, column = self.spans.value(where)
                        self.problems.append(
                            Problem(
                                f"sweep value for {prefix}: {p.message}",
                                key=format_path(where),
                                expected=p.expected,
                                found=p.found,
                                hint=p.hint,
                                line=line,
                                column=column,
                            )
                        )

    def run(self) -> list[Problem]:
        self.nodes_()
        self.limits()
        self.links()
        self.atm()
        self.tunnels()
        self.tests()
        self.adaptive()
        self.sweep()
        return self.problems


_TESTS_ADAPTER: Any = None


def with_tests_of(base: Scenario, data: dict[str, Any], keys: list[str] | Any) -> Scenario | None:
    """``base`` with the tests of ``data`` (raw scenario data that differs from what
    ``base`` was validated from only under ``test``), when every swept key is a test's
    (``test[N]...``) and those tests validate and name nodes that exist; else None, and
    the caller validates the whole scenario (which also words any problem).

    A sweep over a test's parameters on a large network (1,000 pings between the hosts
    of a 1,000-host network) validates the network once, not once per point: the
    network's tables are the same objects in every point's scenario."""
    global _TESTS_ADAPTER
    if not keys or not all(str(k).startswith("test[") for k in keys):
        return None
    from pydantic import TypeAdapter

    from qoslab.scenario.model import Test

    if _TESTS_ADAPTER is None:
        _TESTS_ADAPTER = TypeAdapter(list[Test])
    try:
        tests = _TESTS_ADAPTER.validate_python(data.get("test", []))
    except ValidationError:
        return None
    sc = base.model_copy(update={"test": tests, "sweep": None})
    checker = _Checker(sc, data, Spans(""))
    checker.tests()
    return None if checker.problems else sc


def cross_check(scenario: Scenario, data: dict[str, Any], spans: Spans) -> list[Problem]:
    """Every cross-reference problem of a scenario that validated table by table."""
    return _Checker(scenario, data, spans).run()
