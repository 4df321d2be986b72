"""OpenVPN tunnels on the emulation backend: the real ``openvpn`` binary (issue 17 part 3),
one process per end in its node's namespace, with a static key made for the run.

What each field of the plan's ``OpenVpnConfig`` becomes (``openvpn(8)``, 2.6):

- ``dev``, ``name``: ``--dev NAME --dev-type tap|tun``. The device is made beforehand
  as a persistent TUN/TAP device in the node's namespace (:func:`make_devices`), so the
  topology gives a TAP port the plan's MAC, MTU, address and bridge like any port, and
  ``openvpn`` only attaches to it (``--ifconfig-noexec``, ``--route-noexec``: addresses
  and routes are the plan's, set through netlink; a TUN device's ``protects`` routes in a
  table that openvpn's own marked packets pass by, :func:`route_tun`).
- ``proto``: ``--proto udp``; TCP: ``tcp-server`` at the server end, ``tcp-client``
  (``--nobind``, an ephemeral port, as the simulator's client) at the other.
- ``local``, ``remote``, ``local_port``, ``remote_port``: ``--local --lport --remote
  --rport`` (the TCP server has no ``--remote``: it takes the connection that comes).
- ``key``: a static key (``--secret``) per tunnel, made for the run by ``openvpn --genkey
  secret`` in the run's own directory; key direction 0 at the server, 1 at the client.
  The simulator's keys stand in for a TLS handshake; a static key has the same data
  channel less the opcode (``wire::openvpn::DataOpcode::StaticKey``: no opcode, an
  8-byte packet ID), so ``qoslab mtu`` counts it with ``openvpn(key=static,...)``.
- ``cipher``, ``auth``: ``--cipher``, ``--auth`` (``none`` is ``none``); Blowfish needs
  OpenSSL 3's legacy provider (``--providers legacy default``). GCM is refused: its
  static-key layout is not modelled.
- ``replay``: ``--no-replay`` when false (OpenVPN 2.6 still accepts it, with a warning).
- ``fragment``: ``--fragment N`` (UDP only, which the scenario checks already require).
- ``mtu``: ``--tun-mtu`` (a TUN device's MTU; for TAP the port's MTU, which the plan
  holds).
- Nothing in the plan clamps the TCP MSS, and the simulator does not (``--mssfix`` is not
  modelled, crates/sim/src/tunnel/openvpn_tcp.rs): ``--mssfix 0``.
- The simulator fragments an outer datagram too large for its egress interface (its
  OpenVPN end sets no DF): ``--mtu-disc no``. ``mtu_disc="yes"`` (the path-MTU
  measurement, :func:`qoslab.backends.emu.measure.path_mtu`) sets DF on every outer
  packet instead, so that nothing is fragmented anywhere on the path.

Two things the plan does not say but the simulator has, and a namespace would not:

- ``proto tcp``: the simulator's transport connection is its TCP model with Linux's
  defaults (crates/sim/src/tunnel/openvpn_tcp.rs, ``TcpConfig::default()``: CUBIC).
  openvpn sets no congestion control on its socket, so the kernel's default applies,
  and a new namespace takes the host's (``net.ipv4.tcp_congestion_control``, which may
  be BBR, as on the machine where the outer connection ran BBR and carried 52 Mb/s
  through examples/openvpn_tcp.toml's 1 % loss, where Linux's CUBIC carries about 10:
  docs/compare.md, "OpenVPN"). A namespace may set its default only to an
  algorithm of the host's ``tcp_allowed_congestion_control`` (``tcp_cong.c``
  ``tcp_set_default_congestion_control``: EPERM otherwise), so the outer connection
  gets CUBIC from its route instead: a /32 route to the far end with ``congctl cubic``
  (RTAX_CC_ALGO, rtnetlink(7)), which Linux applies to a connection it opens
  (``tcp_ca_dst_init``) or accepts (``tcp_ca_openreq_child``) on that route
  (:func:`outer_congestion`).
- The simulator's OpenVPN ends cost no time unless their node has a CPU profile; the
  real openvpn is a user process, and under the link emulators' SCHED_FIFO (and other
  runs' load) on a 2-core machine it waited 1.6-1.8 s of a 3 s test for a CPU
  (``/proc/PID/schedstat``), delaying the tunnel's packets by up to 0.2 s at a time.
  It runs under SCHED_FIFO :data:`FIFO_PRIORITY`, below the emulators and above
  iperf3: it waits on epoll, so it holds a CPU only while it has packets to move.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from qoslab.backends.emu.topology import EmulationError, in_namespace
from qoslab.plan.models import OpenVpnConfig, OpenVpnDev, OpenVpnProto, SimConfig

if TYPE_CHECKING:
    from qoslab.backends.emu.topology import Topology
    from qoslab.lower.common import LocatedProblems
    from qoslab.lower.lowered import Network

BINARY = "openvpn"
"""The program, looked up in PATH."""

FIFO_PRIORITY = 45
"""SCHED_FIFO priority (sched(7)) of each openvpn: below the link emulators'
(``links.FIFO_PRIORITY``, 50), whose timing it must not disturb, above iperf3's
(``measure.IPERF3_FIFO_PRIORITY``, 40), whose packets it carries. Measured with
examples/openvpn_tcp.toml over UDP at load average 4.5 on the 2-core machine: openvpn
waited 0.44-1.85 s of the 3 s test for a CPU as a normal process, 0.04-0.12 s under
SCHED_FIFO."""

OUTER_CONGESTION = "cubic"
"""The congestion control of a TCP transport's connection: the simulator's
``TcpConfig::default()`` (CUBIC, Linux's default since 2.6.19)."""

READY_S = 20.0
"""Longest wait for both ends of a tunnel to complete their initialisation."""

TOOL_TIMEOUT_S = 10.0
"""Longest wait for ``openvpn --genkey`` or ``--version``."""

READY_LINES = {
    "udp": ("link local (bound)", "Initialization Sequence Completed"),
    "tcp": ("TCP connection established", "Initialization Sequence Completed"),
}
"""What openvpn logs once its data channel carries packets. A static key needs no
handshake: over UDP the bound socket is enough, over TCP the connection. openvpn logs
"Initialization Sequence Completed" only when the first packet from its peer arrives,
and with no traffic of its own (no ``--ping``) the first is its OCC request, 10 s after
the start (``occ.h`` OCC_INTERVAL_SECONDS): waiting for it would add 10 s to every test."""

_CIPHERS = {"none": "none", "bf-cbc": "BF-CBC", "aes-128-cbc": "AES-128-CBC", "aes-256-cbc": "AES-256-CBC"}
"""The plan's ciphers that run with a static key, as openvpn names them."""

_AUTHS = {"none": "none", "sha1": "SHA1", "sha256": "SHA256", "sha512": "SHA512"}


@dataclass
class Tunnel:
    """One running OpenVPN end."""

    node: str
    name: str
    process: subprocess.Popen[bytes]
    log: Path
    argv: list[str]


def binary() -> str | None:
    """The path of the openvpn binary, or None when it is not installed."""
    return shutil.which(BINARY)


def version() -> str:
    """openvpn's version line (``openvpn --version``'s first line, e.g. ``OpenVPN 2.6.14
    x86_64-pc-linux-gnu [SSL (OpenSSL)] ...``), up to its feature list."""
    path = binary()
    if path is None:
        raise EmulationError("openvpn is not installed")
    done = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=TOOL_TIMEOUT_S)
    first = (done.stdout or done.stderr).splitlines()[0] if (done.stdout or done.stderr) else "openvpn ?"
    return first.split(" [", 1)[0].strip()


def implementation() -> str:
    """What a record says ran the tunnels: the binary, its version and the key mode."""
    return f"{version()} ({binary()}), static key"


def check(net: Network, out: LocatedProblems) -> None:
    """Refuse what the real openvpn cannot run as the plan says, at the tunnel's key."""
    from qoslab.scenario.model import OpenVpn

    for i, t in enumerate(net.scenario.tunnel):
        if not isinstance(t, OpenVpn):
            continue
        named = f" {t.name!r}"
        if binary() is None:
            out.add(
                ("tunnel", i, "type"),
                f"tunnel{named} runs the real openvpn on the emulation backend, and openvpn is not installed",
                expected="the openvpn program in PATH (Debian: apt-get install openvpn)",
                found="none",
                hint="scripts/install.sh installs it; or run it on the simulator (`--backend sim`)",
            )
        if t.cipher not in _CIPHERS:
            out.add(
                ("tunnel", i, "cipher"),
                f"tunnel{named}: the emulation backend runs OpenVPN with a static key (--secret), and a GCM "
                "cipher's static-key layout is not modelled (wire::openvpn, `qoslab mtu` could not count it)",
                expected=" or ".join(repr(c) for c in _CIPHERS),
                found=repr(t.cipher),
            )


def ends(plan: SimConfig) -> list[tuple[str, OpenVpnConfig]]:
    """Every OpenVPN end of the plan: (node name, its OpenVpnConfig)."""
    return [(node.name, end) for node in plan.nodes for end in node.openvpn or []]


def _tap_port(end: OpenVpnConfig) -> int:
    """The port of a TAP end (the lowering gives every TAP end one)."""
    assert end.port is not None, end.name
    return end.port


def tap_ports(plan: SimConfig) -> list[tuple[str, str]]:
    """(node, port name) of every TAP port: up only once openvpn holds its device."""
    out = []
    for node in plan.nodes:
        for end in node.openvpn or []:
            if end.dev == OpenVpnDev.tap:
                out.append((node.name, node.ports[_tap_port(end)].name))
    return out


def make_devices(topo: Topology) -> set[tuple[int, int]]:
    """Make each end's TUN/TAP device, persistent and down, in its node's namespace;
    returns the (node, port) of the TAP ports made (a TUN device is no port of the plan)."""
    from pyroute2 import NetNS

    made: set[tuple[int, int]] = set()
    for n, node in enumerate(topo.plan.nodes):
        for end in node.openvpn or []:
            with NetNS(topo.namespace(node.name)) as ns:
                ns.link("add", ifname=end.name, kind="tuntap", mode=end.dev.value)
                if end.dev == OpenVpnDev.tun:
                    ns.link("set", index=ns.link_lookup(ifname=end.name)[0], mtu=end.mtu)
            if end.dev == OpenVpnDev.tap:
                made.add((n, _tap_port(end)))
    return made


MARK = 0x51
"""The firewall mark of openvpn's own sockets (``--mark``, SO_MARK): what the
:data:`TUNNEL_TABLE` rule lets pass by the tunnel's routes."""

TUNNEL_TABLE = 51
"""The routing table of the TUN devices' ``protects`` routes (any id but 253-255, which
Linux reserves for default, main and local, rtnetlink(7))."""

RULE_PRIORITY = 100
"""The rule ``not fwmark MARK lookup TUNNEL_TABLE``: before main (32766), after local (0)."""

FIB_RULE_INVERT = 0x2
"""``include/uapi/linux/fib_rules.h``: the rule matches what its selector does not."""


def route_tun(topo: Topology) -> None:
    """A TUN end up, and the destinations it protects routed into it (the plan's
    ``protects``); a TAP port is configured by the topology as any port.

    A tunnel may protect its own far end's outer address (a server protects the client's
    only address, 198.51.100.2/32): the simulator's OpenVPN end sends its own outer
    packets past the tunnel's routes. Here the routes go into a table of their own,
    looked up for every packet but openvpn's own (marked :data:`MARK`), which the main
    table routes."""
    from pyroute2 import NetNS

    by_node: dict[str, list[OpenVpnConfig]] = {}
    for node, end in ends(topo.plan):
        if end.dev == OpenVpnDev.tun:
            by_node.setdefault(node, []).append(end)
    for node, tuns in by_node.items():
        with NetNS(topo.namespace(node)) as ns:
            for end in tuns:
                idx = ns.link_lookup(ifname=end.name)[0]
                ns.link("set", index=idx, state="up")
                for protected in end.protects or []:
                    destination, prefix = protected.root
                    ns.route("add", dst=str(destination), dst_len=prefix.root, oif=idx, table=TUNNEL_TABLE)
            ns.rule(
                "add", table=TUNNEL_TABLE, priority=RULE_PRIORITY, fwmark=MARK, fwmask=0xFFFFFFFF, flags=FIB_RULE_INVERT
            )


def argv(end: OpenVpnConfig, key: Path, log: Path, *, mtu_disc: str = "no", tap_mtu: int | None = None) -> list[str]:
    """The openvpn command line of one end (the module's doc maps each field)."""
    server = end.server
    args = [binary() or BINARY, "--dev", end.name, "--dev-type", end.dev.value]
    if end.proto == OpenVpnProto.udp:
        args += ["--proto", "udp", "--local", str(end.local), "--lport", str(end.local_port)]
        args += ["--remote", str(end.remote), "--rport", str(end.remote_port)]
    elif server:
        args += ["--proto", "tcp-server", "--local", str(end.local), "--lport", str(end.local_port)]
    else:
        args += ["--proto", "tcp-client", "--nobind", "--remote", str(end.remote), "--rport", str(end.remote_port)]
        args += ["--connect-retry", "1", "1"]
    args += ["--secret", str(key), "0" if server else "1"]
    cipher = end.cipher.value
    args += ["--cipher", _CIPHERS[cipher], "--auth", _AUTHS[end.auth.value]]
    if cipher == "bf-cbc":
        args += ["--providers", "legacy", "default"]
    if not end.replay:
        args.append("--no-replay")
    if end.fragment is not None:
        args += ["--fragment", str(end.fragment)]
    mtu = end.mtu if end.dev == OpenVpnDev.tun or tap_mtu is None else tap_mtu
    args += ["--tun-mtu", str(mtu), "--mssfix", "0", "--mtu-disc", mtu_disc]
    # A tunnel may route its far end's outer address into itself (route_tun); openvpn
    # would drop such packets as "recursive routing" though its own are marked past it.
    args += ["--allow-recursive-routing"]
    args += ["--mark", str(MARK), "--ifconfig-noexec", "--route-noexec", "--verb", "3", "--log", str(log)]
    return args


def start(topo: Topology, *, mtu_disc: str = "no") -> list[Tunnel]:
    """Start every end of every OpenVPN tunnel of the plan and wait until each has its
    data channel up. Each process is registered before anything waits on it."""
    plan_ends = ends(topo.plan)
    if not plan_ends:
        return []
    directory = topo.registry.add_temp_dir()
    keys: dict[int, Path] = {}
    tunnels: list[Tunnel] = []
    # Servers first, each end's socket bound (or listening) before the next starts, so
    # that a TCP client's first connection finds its server.
    for node, end in sorted(plan_ends, key=lambda e: not e[1].server):
        key = keys.get(end.key)
        if key is None:
            key = keys[end.key] = directory / f"tunnel{end.key}.key"
            _genkey(key)
        log = directory / f"{node}-{end.name}.log"
        tap_mtu = None
        if end.dev == OpenVpnDev.tap:
            plan_node = topo.plan.nodes[topo.node_index(node)]
            tap_mtu = plan_node.ports[_tap_port(end)].mtu
        args = argv(end, key, log, mtu_disc=mtu_disc, tap_mtu=tap_mtu)
        if end.proto == OpenVpnProto.tcp:
            outer_congestion(topo, node, end)
        proc = subprocess.Popen(
            in_namespace(topo.namespace(node), ["chrt", "-f", str(FIFO_PRIORITY), *args]),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        topo.registry.add_pid(proc.pid)
        topo.daemons.append(proc)
        tunnels.append(Tunnel(node, end.name, proc, log, args))
        _wait_for(tunnels[-1], BOUND_LINES)
    for t, (_, end) in zip(tunnels, sorted(plan_ends, key=lambda e: not e[1].server), strict=True):
        _wait_for(t, READY_LINES[end.proto.value])
    return tunnels


def outer_congestion(topo: Topology, node: str, end: OpenVpnConfig) -> None:
    """A /32 route to a TCP end's far end (the next hop and device the main table gives
    openvpn's marked packets) with ``congctl`` :data:`OUTER_CONGESTION`, so that the
    connection openvpn opens or accepts on it runs CUBIC as the simulator's does,
    whatever the host's default (the module's doc)."""
    from pyroute2 import NetNS

    with NetNS(topo.namespace(node)) as ns:
        (found,) = ns.route("get", dst=str(end.remote), mark=MARK)
        via = found.get_attr("RTA_GATEWAY")
        oif = found.get_attr("RTA_OIF")
        route = {"dst": str(end.remote), "dst_len": 32, "oif": oif, "metrics": {"RTAX_CC_ALGO": OUTER_CONGESTION}}
        if via is not None:
            route["gateway"] = via
        ns.route("add", **route)


def _genkey(path: Path) -> None:
    """A new static key (2048 bits, OpenVPN's ``--genkey secret``) in ``path``."""
    path_bin = binary()
    if path_bin is None:
        raise EmulationError("openvpn is not installed")
    done = subprocess.run(
        [path_bin, "--genkey", "secret", str(path)], capture_output=True, text=True, timeout=TOOL_TIMEOUT_S
    )
    if done.returncode != 0:
        raise EmulationError(f"openvpn --genkey secret failed: {done.stderr.strip() or done.stdout.strip()}")


_FATAL = re.compile(r"(Exiting due to fatal error|Options error: .*|Cannot .*)")


BOUND_LINES = ("link local (bound)", "Listening for incoming TCP connection", "Attempting to establish TCP connection")
"""What openvpn logs once its socket is bound (UDP, a TCP server) or connecting (a TCP
client, ``socket.c``)."""


def _wait_for(t: Tunnel, lines: tuple[str, ...]) -> None:
    """Until ``t`` has logged one of ``lines``; its exit, or :data:`READY_S`, is an
    error quoting its log."""
    deadline = time.monotonic() + READY_S
    while True:
        text = t.log.read_text(errors="replace") if t.log.exists() else ""
        if any(line in text for line in lines):
            return
        if t.process.poll() is not None or time.monotonic() > deadline:
            fatal = _FATAL.findall(text)
            why = fatal[0] if fatal else (text.strip().splitlines() or ["no log"])[-1]
            state = "exited" if t.process.poll() is not None else f"not up after {READY_S:.0f} s"
            raise EmulationError(f"openvpn {t.name} in {t.node} {state}: {why}")
        time.sleep(0.02)
