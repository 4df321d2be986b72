"""A plan made real: a network namespace per node, the links' interfaces named after the
plan's ports with the plan's MAC, MTU and IPv4 addresses, loopback up, the plan's
routes, bridges and forwarding, all through netlink (pyroute2); and its removal.

Namespaces are named ``qoslab-<run>-<node>`` (:func:`registry.namespace_name`) and
registered before they are made (:mod:`qoslab.backends.emu.registry`). Nothing is made
in the root namespace: a veth pair is created inside one end's namespace with its peer
put straight into the other's (:class:`qoslab.backends.emu.links.DirectVeth`).
"""

from __future__ import annotations

import json
import subprocess
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from qoslab.backends.emu.links import LinkEnd, LinkHandle, LinkRunner
from qoslab.backends.emu.registry import RunRecord, namespace_name
from qoslab.plan.models import (
    AtmLink,
    BridgeConfig,
    BridgeMode,
    EthernetLink,
    MacItem,
    NodeConfig,
    PortRef,
    SerialLink,
    SimConfig,
    WifiLink,
)

if TYPE_CHECKING:
    from qoslab.backends.emu.openvpn import Tunnel
    from qoslab.backends.emu.tunnels import TunnelProcess

BRIDGE_IFNAME = "br0"
"""The interface of a node's bridge (the plan gives a bridge no name)."""

NS_PER_CENTISECOND = 10_000_000
"""The bridge's ageing time goes to the kernel in clock_t, 1/100 s (USER_HZ, time(7);
IFLA_BR_AGEING_TIME)."""

COMMAND_TIMEOUT_S = 10.0
"""Longest wait for a one-shot configuration command (sysctl, nft) in a namespace."""


def format_mac(mac: list[MacItem]) -> str:
    return ":".join(f"{b.root:02x}" for b in mac)


def in_namespace(namespace: str, argv: list[str]) -> list[str]:
    """``argv`` run inside ``namespace`` (``ip netns exec`` enters its network namespace
    and execs the program, so the pid is the program's)."""
    return ["ip", "netns", "exec", namespace, *argv]


def run_in(namespace: str, argv: list[str], *, stdin: str | None = None) -> None:
    """Run a configuration command in ``namespace``; raise with its stderr if it fails."""
    done = subprocess.run(
        in_namespace(namespace, argv), input=stdin, capture_output=True, text=True, timeout=COMMAND_TIMEOUT_S
    )
    if done.returncode != 0:
        raise EmulationError(f"{' '.join(argv)} in {namespace} failed: {done.stderr.strip()}")


class EmulationError(RuntimeError):
    """The emulated network could not be built or a tool in it failed."""


@dataclass
class Topology:
    """A plan's network made of namespaces: which namespace each node is in, the links'
    handles, the run's registry entry."""

    plan: SimConfig
    registry: RunRecord
    runner: LinkRunner
    namespaces: dict[str, str] = field(default_factory=dict)
    """Node name -> its namespace."""
    links: list[LinkHandle] = field(default_factory=list)
    daemons: list[subprocess.Popen[bytes]] = field(default_factory=list)
    """Processes a role runs in a namespace (the L3F daemon, openvpn)."""
    tunnels: list[Tunnel] = field(default_factory=list)
    """The OpenVPN ends running (:class:`qoslab.backends.emu.openvpn.Tunnel`)."""
    modelled: set[tuple[int, int]] = field(default_factory=set)
    """(node, port) indices that exist only inside a link model (an ATM switch's ports,
    inside the emulated ATM network): no interface is made for them."""
    user_tunnels: list[TunnelProcess] = field(default_factory=list)
    """The user-space tunnel ends (PPPoE, IPsec tunnel mode; :mod:`.tunnels`)."""

    def namespace(self, node: str) -> str:
        return self.namespaces[node]

    def node_index(self, name: str) -> int:
        return next(i for i, n in enumerate(self.plan.nodes) if n.name == name)


def build(
    plan: SimConfig, registry: RunRecord, runner: LinkRunner, *, mtu_disc: str = "no", user_tunnels: bool = True
) -> Topology:
    """Make the plan's network (``plan``: the lowered SimConfig, ``Network.config``; its
    links Ethernet, serial, 802.11 or ATM with CLIP, which :mod:`qoslab.backends.emu.refusals` made sure of).
    ``mtu_disc``: openvpn's ``--mtu-disc`` for its outer packets (:mod:`.openvpn`);
    ``user_tunnels``: start the user-space tunnel ends (:mod:`.tunnels`; a test that
    puts a real peer at one end starts the other itself)."""
    from pyroute2 import netns

    from qoslab.backends.emu import openvpn, roles

    topo = Topology(plan, registry, runner)
    for node in plan.nodes:
        name = namespace_name(registry.run, node.name)
        registry.add_namespace(name)
        netns.create(name)
        topo.namespaces[node.name] = name
        # The plan is IPv4: no IPv6 on any interface, so no link-local addresses,
        # neighbour discovery or MLD reports that the simulated nodes do not send.
        run_in(name, ["sysctl", "-q", "-w", "net.ipv6.conf.all.disable_ipv6=1", "net.ipv6.conf.default.disable_ipv6=1"])
    linked: set[tuple[int, int]] = set()
    atm_started = False
    for k, link in enumerate(plan.links):
        if isinstance(link.root, WifiLink | AtmLink):
            if isinstance(link.root, AtmLink):
                # One emulator for the whole ATM network (switches and every ATM link),
                # started at its first link; a switch's ports get no device.
                if atm_started:
                    continue
                atm_started = True
            # One TAP per member or host endpoint, in the core's order (the AP first).
            from qoslab import _core
            from qoslab.lower.lowered import plan_json

            members = _core.emulated_link_ends(json.dumps(plan_json(plan)), k)
            ends = [_end(topo, PortRef(node=n, port=p)) for n, p in members]
            topo.links.append(runner.start_many(plan, k, ends, registry))
            linked |= set(members)
            if isinstance(link.root, AtmLink):
                # The switches' ports are inside the emulated network: no interface.
                for other in plan.links:
                    if isinstance(other.root, AtmLink):
                        for ref in (other.root.a, other.root.b):
                            if (ref.node, ref.port) not in set(members):
                                topo.modelled.add((ref.node, ref.port))
            continue
        # Two ends: a line.
        assert isinstance(link.root, EthernetLink | SerialLink), f"{link.root.type} link {link.root.name!r}"
        a, b = link.root.a, link.root.b
        ends = [_end(topo, ref) for ref in (a, b)]
        topo.links.append(runner.start(link, ends[0], ends[1], registry, index=k))
        linked |= {(a.node, a.port), (b.node, b.port)}
    # OpenVPN's TUN/TAP devices exist before the nodes are configured: a TAP port gets
    # its MAC, MTU, address and bridge as a link's port does.
    linked |= openvpn.make_devices(topo)
    for i, node in enumerate(plan.nodes):
        _configure_node(topo, i, node, linked)
        roles.apply(topo, node)
    openvpn.route_tun(topo)
    # A TAP device has carrier only once openvpn holds it: the wait skips them, and
    # openvpn starts on links that are up (its first packets are not lost to a carrier
    # still down, which would hold its start-up for its 10 s retry).
    inside = {(topo.plan.nodes[n].name, topo.plan.nodes[n].ports[p].name) for n, p in topo.modelled}
    _wait_up(topo, skip=set(openvpn.tap_ports(topo.plan)) | inside)
    topo.tunnels = openvpn.start(topo, mtu_disc=mtu_disc)
    # Over the links and OpenVPN's TAP ports (PPPoE rides on one in seed 002).
    from qoslab.backends.emu import tunnels

    if user_tunnels:
        topo.user_tunnels = tunnels.start(topo)
    return topo


SETTLE_S = 5.0
"""Longest wait for every interface of a new network to be up."""


def _wait_up(topo: Topology, *, skip: set[tuple[str, str]] | None = None) -> None:
    """Until every port and bridge of the network is operationally up (RFC 2863 ifOperStatus,
    IFLA_OPERSTATE). The kernel learns a veth's carrier in its link-watch work, up to a
    second after both ends came up, and a bridge forwards on a port only after that: a
    test started at once loses its first ARP request (and its first RTT is ~1 s, the ARP
    retransmission time). ``skip``: (node, port) names not waited for."""
    from pyroute2 import NetNS

    deadline = time.monotonic() + SETTLE_S
    for node in topo.plan.nodes:
        bridged = node.bridge is not None and not l3f_ports(node)
        names = [p.name for p in node.ports if (node.name, p.name) not in (skip or set())]
        names += [BRIDGE_IFNAME] if bridged else []
        with NetNS(topo.namespaces[node.name]) as ns:
            while True:
                states = {str(link.get("ifname")): link.get("operstate") for link in ns.link("dump")}
                # A dummy port (on no link) stays UNKNOWN: it has no carrier to report.
                down = [n for n in names if states.get(n) not in ("UP", "UNKNOWN")]
                if not down:
                    break
                if time.monotonic() > deadline:
                    raise EmulationError(f"{', '.join(down)} of {node.name} not up after {SETTLE_S} s")
                time.sleep(0.02)


def _end(topo: Topology, ref: PortRef) -> LinkEnd:
    node = topo.plan.nodes[ref.node]
    return LinkEnd(topo.namespaces[node.name], node.ports[ref.port].name)


def _configure_node(topo: Topology, index: int, node: NodeConfig, linked: set[tuple[int, int]]) -> None:
    """Loopback, ports, bridge, routes and the node's sysctls."""
    from pyroute2 import NetNS

    name = topo.namespaces[node.name]
    with NetNS(name) as ns:
        ns.link("set", index=ns.link_lookup(ifname="lo")[0], state="up")
        ports = [(p, port) for p, port in enumerate(node.ports) if (index, p) not in topo.modelled]
        for p, port in ports:
            if (index, p) not in linked:
                # A port on no link still has its address, as the simulator's does.
                ns.link("add", ifname=port.name, kind="dummy")
            idx = ns.link_lookup(ifname=port.name)[0]
            ns.link("set", index=idx, address=format_mac(port.mac), mtu=port.mtu)
            if port.address is not None:
                address, prefix = port.address
                ns.addr("add", index=idx, address=str(address), prefixlen=prefix.root)
        bridge = node.bridge
        if bridge is not None and bridge.mode == BridgeMode.l3f:
            _l3f_addresses(ns, node, bridge)
        elif bridge is not None:
            _bridge(ns, node, bridge)
        for _, port in ports:
            ns.link("set", index=ns.link_lookup(ifname=port.name)[0], state="up")
        for route in node.routes or []:
            ns.route("add", dst=str(route.destination), dst_len=route.prefix_len, gateway=str(route.via))
    run_in(name, ["sysctl", "-q", "-w", *_sysctls(node)])


def _bridge(ns: Any, node: NodeConfig, bridge: BridgeConfig) -> None:
    """An ``l2`` bridge: a kernel bridge (IEEE 802.1D learning, no STP) of the bridged
    ports, with the plan's MAC, ageing time and address."""
    ns.link(
        "add",
        ifname=BRIDGE_IFNAME,
        kind="bridge",
        address=format_mac(bridge.mac),
        br_ageing_time=max(1, bridge.aging_ns // NS_PER_CENTISECOND),
        br_stp_state=0,
        # Forward at once: the simulator's bridge has no listening and learning states.
        br_forward_delay=0,
    )
    br = ns.link_lookup(ifname=BRIDGE_IFNAME)[0]
    for p in bridge.ports:
        ns.link("set", index=ns.link_lookup(ifname=node.ports[p.root].name)[0], master=br)
    if bridge.address is not None:
        address, prefix = bridge.address
        ns.addr("add", index=br, address=str(address), prefixlen=prefix.root)
    # A bridge takes the lowest MAC of its ports unless one is set: set it again after
    # the ports joined, so the plan's MAC stays.
    ns.link("set", index=br, address=format_mac(bridge.mac), state="up")


def _l3f_addresses(ns: Any, node: NodeConfig, bridge: BridgeConfig) -> None:
    """An ``l3f`` bridge has no kernel bridge: its ports route (the daemon of
    :mod:`qoslab.backends.emu.l3f`). The bridge's address goes on its first port with
    the prefix (the segment's connected route) and as a /32 on the others, so the node
    speaks from the same address on every port, as the simulator's bridge interface does."""
    if bridge.address is None:
        return
    address, prefix = bridge.address
    for k, p in enumerate(bridge.ports):
        idx = ns.link_lookup(ifname=node.ports[p.root].name)[0]
        ns.addr("add", index=idx, address=str(address), prefixlen=prefix.root if k == 0 else 32)


def l3f_ports(node: NodeConfig) -> list[str]:
    """The names of an ``l3f`` bridge's ports (none for another node)."""
    bridge = node.bridge
    if bridge is None or bridge.mode != BridgeMode.l3f:
        return []
    return [node.ports[p.root].name for p in bridge.ports]


def interfaces(node: NodeConfig) -> list[str]:
    """The node's IP interfaces: its addressed ports and its bridge (an ``l3f`` bridge's
    ports, each of which is one)."""
    names = [p.name for p in node.ports if p.address is not None]
    if l3f_ports(node):
        names += l3f_ports(node)
    elif node.bridge is not None:
        names.append(BRIDGE_IFNAME)
    return names


def _sysctls(node: NodeConfig) -> list[str]:
    """``ip_forward`` from the plan, and the ARP timeout where the kernel has a knob."""
    settings = [f"net.ipv4.ip_forward={1 if node.ip_forward else 0}"]
    # Linux keeps a neighbour REACHABLE for a random time between 0.5 and 1.5 times
    # base_reachable_time (ip-sysctl.rst, neigh/default/base_reachable_time_ms), then
    # revalidates it; the plan's arp_timeout is that lifetime. The kernel has no knob
    # for a fixed lifetime, so the mean is set. Per interface: a namespace other than
    # the first has no neigh/default (the ARP table's defaults are registered once).
    timeout_ms = max(1, node.arp_timeout_ns // 1_000_000)
    for ifname in interfaces(node):
        settings.append(f"net.ipv4.neigh.{ifname}.base_reachable_time_ms={timeout_ms}")
    for ifname in l3f_ports(node):
        # Seed 000 §2.2 on the kernel: forward, and answer ARP for hosts routed through
        # another port at once (proxy_delay's default, 80 jiffies, delays the first reply
        # by up to 0.8 s; ip-sysctl.rst).
        settings[0] = "net.ipv4.ip_forward=1"
        settings += [f"net.ipv4.conf.{ifname}.proxy_arp=1", f"net.ipv4.neigh.{ifname}.proxy_delay=0"]
    return settings


def teardown(topo: Topology) -> None:
    """Stop the links and remove the run (namespaces with all in them, processes, file)."""
    import os

    from qoslab.backends.emu.registry import remove_run

    if os.getpid() != topo.registry.owner_pid:
        return  # a forked helper that inherited the owner's stack: only the owner cleans
    try:
        from qoslab.backends.emu import tunnels

        tunnels.stop(topo.user_tunnels)  # their reports, before the links go
        for handle in topo.links:
            topo.runner.stop(handle)
    finally:
        # An emulator that failed still leaves a network to remove.
        remove_run(topo.registry)
    for proc in topo.daemons:
        proc.wait()  # killed by remove_run: reaped here
        if proc.stdout is not None:
            proc.stdout.close()
