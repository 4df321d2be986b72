"""The topology of a scenario as a tree a network engineer reads at a glance."""

from __future__ import annotations

from rich.markup import escape
from rich.tree import Tree

from qoslab.scenario.model import (
    WIFI_RATES_MBPS,
    Atm,
    Bernoulli,
    Bridge,
    Ethernet,
    Ipsec,
    Link,
    OpenVpn,
    Pppoe,
    Pptp,
    Scenario,
    Serial,
    Test,
    Tunnel,
    Wifi,
)
from qoslab.units import format_rate, format_ratio, format_size, format_time

_FORWARDING = {"l2": "L2 802.1D bridge", "l3f": "L3F proxy-ARP bridge", "nat": "NAT router (ICS)"}


def _impairments(link: Link) -> list[str]:
    parts = []
    if link.delay:
        parts.append(f"delay {format_time(link.delay)}")
    for loss in link.loss:
        way = "" if loss.direction == "both" else f" {loss.direction}"
        if isinstance(loss, Bernoulli):
            parts.append(f"loss {format_ratio(loss.rate)}{way}")
        else:
            parts.append(f"loss gilbert-elliott p={format_ratio(loss.p)} r={format_ratio(loss.r)}{way}")
    for sh in link.shaper:
        way = "" if sh.direction == "both" else f" {sh.direction}"
        parts.append(f"shaped {format_rate(sh.rate)} burst {format_size(sh.burst)}{way}")
    return parts


def _link_label(sc: Scenario, i: int) -> str:
    link = sc.link[i]
    name = escape(sc.link_name(i))
    if isinstance(link, Ethernet):
        text = f"[bold]{name}[/] ethernet {format_rate(link.rate)} {link.duplex}-duplex  {link.ends[0]} ⇄ {link.ends[1]}  mtu {link.mtu}"
    elif isinstance(link, Wifi):
        rate = link.rate if link.rate is not None else int(max(WIFI_RATES_MBPS[link.standard]) * 1_000_000)
        head = f"AP {link.ap}" if link.ap else "ad hoc"
        text = (
            f"[bold]{name}[/] wifi {link.standard} {format_rate(rate)} {link.preamble} preamble, {link.security}"
            f"  {head} ⇄ stations {', '.join(link.stations) or '(none)'}"
        )
        if link.rts_threshold is not None:
            text += f"  rts>{format_size(link.rts_threshold)}"
        if link.wds:
            text += "  wds"
    elif isinstance(link, Serial):
        text = f"[bold]{name}[/] serial {format_rate(link.rate)} {link.framing} {link.format}  {link.ends[0]} ⇄ {link.ends[1]}"
        if link.compression:
            text += f"  compression {link.compression:g}:1"
    elif isinstance(link, Atm):
        text = (
            f"[bold]{name}[/] atm {link.phy} {format_rate(link.cell_rate)} {link.encapsulation} mtu {link.mtu}"
            f"  {link.ends[0]} ⇄ {link.ends[1]}"
        )
        if link.vcs:
            text += "  vcs " + ", ".join(f"{vc.vpi}/{vc.vci} {vc.service}" for vc in link.vcs)
    else:  # pragma: no cover - every link type is listed above
        text = f"[bold]{name}[/] {link.type}"
    extra = _impairments(link)
    return text + ("  " + ", ".join(extra) if extra else "")


def _tunnel_label(t: Tunnel) -> str:
    text = f"[bold]{escape(t.name)}[/] {t.type} {t.from_} → {t.to}"
    if isinstance(t, OpenVpn):
        text += f"  {t.proto}/{t.dev} cipher {t.cipher} auth {t.auth}"
        if t.fragment:
            text += f" fragment {t.fragment}"
    elif isinstance(t, Pppoe):
        text += f"  auth {t.auth}" + (f" service {t.service_name!r}" if t.service_name else "")
    elif isinstance(t, Pptp):
        text += f"  auth {t.auth}" + (" mppe" if t.mppe else "")
    elif isinstance(t, Ipsec):
        text += f"  {t.protocol} {t.mode} {t.cipher} {t.auth}"
        if t.selector is not None:
            text += f"  selects {t.selector.protocol}" + (
                f" port {t.selector.port}" if t.selector.port is not None else ""
            )
    if t.mtu:
        text += f"  mtu {t.mtu}"
    return text


def _test_label(t: Test) -> str:
    text = f"[bold]{t.method}[/] {t.from_} → {t.to}"
    params = []
    for name in (
        "frame_sizes",
        "payload",
        "rate",
        "gap",
        "count",
        "duration",
        "bytes",
        "window",
        "streams",
        "frame_rate",
    ):
        if name in type(t).model_fields:
            value = getattr(t, name)
            if value is None:
                continue
            if name in ("rate",):
                value = format_rate(value)
            elif name in ("gap", "duration"):
                value = format_time(value)
            elif name in ("bytes", "window", "payload"):
                value = format_size(value)
            params.append(f"{name} {value}")
    return text + ("  " + ", ".join(params) if params else "")


def topology_tree(scenario: Scenario) -> Tree:
    """The topology as a rich Tree: nodes, links, tunnels stacked on what they run over, tests, sweep.

    Examples
    --------
    >>> from rich.console import Console
    >>> from qoslab.scenario import loads_scenario
    >>> sc = loads_scenario('''
    ... [scenario]
    ... name = "demo"
    ... [node.a]
    ... role = "host"
    ... address = "10.0.0.1/24"
    ... [node.b]
    ... role = "host"
    ... address = "10.0.0.2/24"
    ... [[link]]
    ... type = "ethernet"
    ... ends = ["a", "b"]
    ... ''')
    >>> console = Console(width=100, color_system=None)
    >>> with console.capture() as cap:
    ...     console.print(topology_tree(sc))
    >>> print(cap.get().rstrip())
    demo  (seed 1)
    ├── nodes
    │   ├── a host 10.0.0.1/24
    │   └── b host 10.0.0.2/24
    └── links
        └── link[0] ethernet 100 Mbps full-duplex  a ⇄ b  mtu 1500
    """
    sc = scenario
    meta = sc.scenario
    title = f"[bold]{escape(meta.name)}[/]  (seed {meta.seed})"
    if meta.duration:
        title += f"  duration {format_time(meta.duration)}"
    root = Tree(title)
    if sc.node:
        _add_nodes(root.add("nodes"), sc)
    if sc.link or sc.tunnel:
        _add_links(root.add("links"), sc)
    if sc.test:
        tests = root.add("tests")
        for test in sc.test:
            tests.add(_test_label(test))
    if sc.sweep and sc.sweep.values:
        reps = f", {sc.sweep.replications} replications" if sc.sweep.replications > 1 else ""
        sweep = root.add(f"sweep ({sc.sweep.mode}{reps})")
        for key, values in sc.sweep.values.items():
            sweep.add(f"{escape(key)} = {escape(', '.join(str(v) for v in values))}")
    return root


def _add_nodes(nodes: Tree, sc: Scenario) -> None:
    """A branch per node: its role, addresses, forwarding, gateway, CPU, routes and port forwards."""
    for name, node in sc.node.items():
        text = f"[bold]{escape(name)}[/] {node.role}"
        if node.address:
            text += " " + ", ".join(str(a) for a in node.address)
        if isinstance(node, Bridge):
            text += f"  {_FORWARDING[node.forwarding]}"
        if node.gateway:
            text += f"  gw {node.gateway}"
        if node.cpu:
            text += f"  cpu {escape(node.cpu)}"
        branch = nodes.add(text)
        for r in node.routes:
            branch.add(f"route {r.to} via {r.via}")
        for pf in getattr(node, "port_forwards", []):
            branch.add(f"forward {pf.proto}/{pf.port} → {pf.to}")


def _add_links(links: Tree, sc: Scenario) -> None:
    """A branch per link, each tunnel under what it runs over, and the tunnels that
    follow the routed IP path under a branch of their own."""
    link_names = {link.name: i for i, link in enumerate(sc.link) if link.name}
    children: dict[str, list[Tunnel]] = {}
    routed: list[Tunnel] = []
    for t in sc.tunnel:
        if t.over is None:
            routed.append(t)
        else:
            key = f"link[{link_names[t.over]}]" if t.over in link_names else t.over
            children.setdefault(key, []).append(t)

    def add_tunnels(branch: Tree, key: str, seen: frozenset[str]) -> None:
        for t in children.get(key, []):
            if t.name in seen:
                continue
            sub = branch.add(_tunnel_label(t))
            add_tunnels(sub, t.name, seen | {t.name})

    for i in range(len(sc.link)):
        branch = links.add(_link_label(sc, i))
        add_tunnels(branch, f"link[{i}]", frozenset())
    if routed:
        ip = links.add("routed IP path")
        for t in routed:
            sub = ip.add(_tunnel_label(t))
            add_tunnels(sub, t.name, frozenset({t.name}))
