"""What the emulation backend cannot run yet, refused before anything is built (``check
--backend emu`` and ``run --backend emu`` share :func:`check_scenario`), and the host it
needs (:func:`check_host`: root and network namespaces).

Each refusal names the key and what is missing, and says which part of issue 17 adds
it: the link emulator (crates/emu) for LAN emulation over ATM (802.11 cells and
Classical IP over ATM run there); the user-space tunnels for GRE. OpenVPN runs the real
openvpn (:mod:`.openvpn`), PPPoE, PPTP and IPsec tunnel mode the simulator's own ends in
user space (:mod:`.tunnels`); each refuses what it cannot run as the plan says.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from qoslab.backends.emu import openvpn, tunnels
from qoslab.errors import InputError, Problem
from qoslab.methods.rfc2544 import METHODS as RFC2544_METHODS

if TYPE_CHECKING:
    from qoslab.lower.lowered import Network

METHODS = ("ping", "udp.flow", "tcp.bulk", "tcp.transfer", "udp.echo", "pcap.replay", *RFC2544_METHODS)
"""The test methods the emulation backend runs (with iputils ping, iperf3, qoslab's own
UDP echo, backends/emu/echo_tool.py, its own UDP streams, backends/emu/stream_tool.py, and
its own ttcp, backends/emu/transfer_tool.py)."""

IFNAMSIZ = 16
"""Linux's interface name buffer, the terminating NUL included (include/uapi/linux/if.h):
names of at most 15 characters."""

_LANE = (
    "LAN emulation (LANE) and MPOA over ATM are not emulated: the link emulator runs Classical IP over ATM only "
    "(crates/emu shared.rs answers the kernel's ARP for CLIP next hops; an LE client's LE-ARP, BUS and MPOA "
    "shortcuts would need the kernel's frames bridged into the ELAN, not done yet)"
)


def check_scenario(net: Network, *, source: str | Path | None = None) -> None:
    """Refuse every part of the scenario the emulation backend cannot build or measure
    yet, all at once (InputError, exit 2 in the CLI)."""
    from qoslab.lower.common import LocatedProblems

    scenario = net.scenario
    out = LocatedProblems(source)
    for i, link in enumerate(scenario.link):
        elan = getattr(link, "elan", None) if link.type == "atm" else None
        if elan is not None:
            named = f" {link.name!r}" if getattr(link, "name", None) else ""
            out.add(
                ("link", i, "elan"),
                f"link{named} cannot run on the emulation backend yet: {_LANE}",
                expected="no elan: Classical IP over ATM (backend emu)",
                found=repr(elan),
                hint="run it on the simulator (`--backend sim`, the default)",
            )
    for name, node in scenario.node.items():
        if node.role in ("lane-server", "mpoa-server"):
            out.add(
                ("node", name, "role"),
                f"node {name!r} cannot run on the emulation backend yet: {_LANE}",
                expected="a role other than 'lane-server' or 'mpoa-server' (backend emu)",
                found=repr(node.role),
                hint="run it on the simulator (`--backend sim`, the default)",
            )
    for i, tunnel in enumerate(scenario.tunnel):
        if tunnel.type in ("openvpn", "pppoe", "ipsec", "pptp", "gre"):
            continue  # the real openvpn (:mod:`.openvpn`) or a user-space end (:mod:`.tunnels`), refused below where not
        named = f" {tunnel.name!r}" if getattr(tunnel, "name", None) else ""
        out.add(
            ("tunnel", i, "type"),
            f"tunnel{named} cannot run on the emulation backend yet: its user-space tunnel "
            "(or the real daemon) is not part of the backend yet (issue 17 part 3)",
            expected="an 'openvpn' tunnel, or none (backend emu)",
            found=repr(tunnel.type),
            hint="run it on the simulator (`--backend sim`, the default)",
        )
    openvpn.check(net, out)
    tunnels.check(net, out)
    _check_nodes(out, net)
    _check_tests(out, net)
    if scenario.background:
        out.add(
            ("background",),
            "background traffic is not run on the emulation backend yet",
            expected="no [[background]] (backend emu)",
            found=f"{len(scenario.background)} table(s)",
        )
    if scenario.sweep is not None and scenario.sweep.values:
        out.add(
            ("sweep",),
            "a [sweep] is not run on the emulation backend yet: one point per run",
            expected="no [sweep] (backend emu)",
            found="[sweep]",
        )
    out.raise_if_any()


def _check_tests(out: Any, net: Network) -> None:
    """Promiscuous sniffing ports, and the tests: their method, a raw stream's MACs and
    a TCP stack other than this machine's."""
    scenario = net.scenario
    for name, node in scenario.node.items():
        if getattr(node, "promiscuous", False):
            out.add(
                ("node", name, "promiscuous"),
                "promiscuous ports are not emulated: Linux's IP layer drops a frame its NIC took for another MAC "
                "(PACKET_OTHERHOST in ip_rcv), and no Linux bridge relays frames for its own address (seed 000 Fig. 10)",
                expected="false (backend emu)",
                found="true",
                hint="run it on the simulator (`--backend sim`, the default)",
            )
    for i, t in enumerate(scenario.test):
        if t.method not in METHODS:
            out.add(
                ("test", i, "method"),
                f"{t.method} is not run on the emulation backend yet: it runs {', '.join(METHODS)} "
                "(with iputils ping, iperf3 and qoslab's own UDP echo, streams and ttcp)",
                expected=" or ".join(repr(m) for m in METHODS),
                found=repr(t.method),
            )
        dst_mac = getattr(t, "dst_mac", None)
        if dst_mac is not None:
            out.add(
                ("test", i, "dst_mac"),
                "a raw stream (frames with given MACs, no ARP) is not sent on the emulation backend: iperf3 sends "
                "through the kernel's stack, which resolves its next hop by ARP",
                expected="no dst_mac (backend emu)",
                found=repr(dst_mac),
                hint="run it on the simulator (`--backend sim`, the default)",
            )
        stack = getattr(t, "stack", "linux")
        if t.method in METHODS and stack != "linux":
            out.add(
                ("test", i, "stack"),
                f"stack {stack!r} cannot run on the emulation backend: its TCP is this machine's Linux",
                expected="'linux' (backend emu)",
                found=repr(stack),
            )


def _check_nodes(out: Any, net: Network) -> None:
    """Nodes whose role has no real-kernel counterpart yet, and interface names the
    kernel cannot take."""
    config = net.config
    for node in config.nodes:
        key = ("node", node.name)
        for port in node.ports:
            if len(port.name.encode()) >= IFNAMSIZ:
                out.add(
                    key,
                    f"node {node.name!r}'s port {port.name!r} cannot be a Linux interface name",
                    expected=f"at most {IFNAMSIZ - 1} bytes (IFNAMSIZ)",
                    found=f"{len(port.name.encode())} bytes",
                )
    for entry in config.adaptive or []:
        name = config.nodes[entry.node].name
        out.add(
            ("node", name),
            f"node {name!r} is seed 004's adaptive router: not on the emulation backend yet",
            expected="a plain router (backend emu)",
            found="an adaptive upstream",
        )


def check_host() -> None:
    """Refuse a host where the backend cannot run: not root, or no network namespaces."""
    why = None
    if os.geteuid() != 0:
        why = "the emulation backend makes network namespaces and interfaces: it needs root"
    elif not Path("/proc/self/ns/net").exists():
        why = "this kernel has no network namespaces (/proc/self/ns/net is missing)"
    else:
        try:
            import pyroute2  # noqa: F401
        except ImportError:
            why = "the emulation backend needs pyroute2: pip install 'qoslab[emu]'"
    if why is not None:
        raise InputError(
            "--backend emu", [Problem(why, key="--backend", expected="a host that can run it", found="emu")]
        )
