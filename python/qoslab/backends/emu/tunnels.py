"""User-space tunnels on the emulation backend (issue 17 part 3): what this machine's
kernel lacks (PPP, ESP, AH, GRE) runs as crates/sim's own sans-IO tunnel end, one process per
end in its node's namespace (:mod:`.tunnel_child`, crates/emu ``tunnel``).

Each end is built by the simulator's own constructor from the plan node, so it has the
same model, seeds, SPIs and keys as in a simulation. Its inner side is a TUN device named
after the tunnel, which this module gives the plan's address, MTU and routes; its outer
side is raw sockets: ``AF_PACKET`` on the port a PPPoE end rides on (EtherTypes
0x8863/0x8864, RFC 2516 §4), a raw IPv4 socket of protocol ESP (50) or AH (51) for IPsec
in tunnel mode.

What each plan field becomes:

- ``PppoeConfig``: the TUN device ``name`` with ``local``/32 and MTU ``mtu``, a route
  to each of ``routes`` through it; ``port``: the interface whose frames the end reads
  and writes. Discovery, LCP, CHAP/PAP and IPCP are the model's (crates/sim
  ``tunnel/pppoe.rs``, ``link/ppp``); traffic waits until both ends say ``up`` (IPCP
  Opened), as the simulator holds applications back until then.
- ``IpsecTunnelConfig`` (mode ``tunnel``): the TUN device ``name`` with MTU ``mtu`` and
  no address (the simulator's tunnel interface has none), a route to each of
  ``protects`` through it. The outer packets are the model's, sent whole
  (``IP_HDRINCL``) and fragmented by the daemon when they exceed the route's MTU
  (``fragment = "after"``, the plan's default).

- ``PptpConfig``: the TUN device ``name`` with ``ppp_local``/32 and MTU ``mtu``, its
  ``routes`` in a table of their own (:func:`_pptp_namespace`); the outer side raw IPv4
  sockets of protocols TCP and GRE bound to ``local``. The control connection is the
  model's own TCP (crates/sim ``tunnel/pptp``), its segments sent and read raw; the
  kernel's resets of them are dropped by nftables in the namespace. As in the simulator
  (a PPP interface the node drives, not the stack) packets are fitted to the interface
  MTU alone and a GRE datagram too big for the path is fragmented after encapsulation,
  here by the kernel (the raw socket's datagrams, RFC 791).

Refused (:func:`check`): GRE (no model end yet), IPsec transport mode (it transforms the
kernel's own datagrams, which no TUN device sees).
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from qoslab.backends.emu.topology import EmulationError, in_namespace, run_in
from qoslab.plan.models import IpsecMode, IpsecTunnelConfig, NodeConfig, PppoeConfig, PptpConfig, SimConfig

if TYPE_CHECKING:
    from qoslab.backends.emu.topology import Topology
    from qoslab.lower.common import LocatedProblems
    from qoslab.lower.lowered import Network

READY_S = 20.0
"""Longest wait for an end's process to open its device and sockets (import qoslab on a
loaded machine)."""

UP_S = 30.0
"""Longest wait for every end to be up. PPPoE: discovery, LCP, CHAP and IPCP take a few
round trips; a lost PADI is sent again after 5 s (rp-pppoe's PADI_TIMEOUT, the model's
``DISCOVERY_TIMEOUT_NS``)."""

STOP_TIMEOUT_S = 10.0
"""Longest wait for an end to print its report after its stop pipe was written."""

IMPLEMENTATION = "qoslab user-space tunnel ends (crates/sim models on TUN and raw sockets)"
"""What a record says ran the tunnels."""


@dataclass
class TunnelProcess:
    """One running user-space tunnel end."""

    node: str
    name: str
    kind: str
    config: PppoeConfig | IpsecTunnelConfig | PptpConfig
    process: subprocess.Popen[bytes]
    stop_fd: int | None
    up: bool = False
    report: dict[str, Any] | None = None
    lines: list[str] = field(default_factory=list)
    """What it printed so far, line by line."""
    pending: bytes = b""

    def inner_mtu(self) -> int | None:
        """The effective MTU the end said (``inner_mtu N``), if it has a far address."""
        said = [int(line.split()[1]) for line in self.lines if line.startswith("inner_mtu ")]
        return said[0] if said else None


def ends(plan: SimConfig) -> list[tuple[NodeConfig, str, PppoeConfig | IpsecTunnelConfig | PptpConfig]]:
    """Every end the daemon runs: (node, kind, its plan config), servers first, then in
    plan order."""
    out: list[tuple[NodeConfig, str, PppoeConfig | IpsecTunnelConfig | PptpConfig]] = []
    for node in plan.nodes:
        out += [(node, "pppoe", end) for end in node.pppoe or []]
        out += [(node, "ipsec", end) for end in node.ipsec or [] if end.mode == IpsecMode.tunnel]
        out += [(node, "pptp", end) for end in node.pptp or []]
    # Servers first: a PPPoE client's first PADI, a PPTP client's SYN, finds its server.
    return sorted(out, key=lambda e: not (isinstance(e[2], PppoeConfig | PptpConfig) and e[2].server))


def check(net: Network, out: LocatedProblems) -> None:
    """Refuse the tunnels no user-space end runs, at the tunnel's key."""
    from qoslab.scenario.model import Ipsec

    for i, t in enumerate(net.scenario.tunnel):
        named = f" {t.name!r}" if getattr(t, "name", None) else ""
        why = None
        if t.type == "gre":
            why = "GRE has no tunnel end in the simulator to drive, and this kernel has no GRE"
        elif isinstance(t, Ipsec) and t.mode == "transport":
            why = (
                "IPsec transport mode transforms the kernel's own datagrams, which no TUN device sees, and this "
                "kernel has no ESP; tunnel mode runs in user space"
            )
        if why is not None:
            out.add(
                ("tunnel", i, "mode" if isinstance(t, Ipsec) else "type"),
                f"tunnel{named} cannot run on the emulation backend yet: {why}",
                expected="an openvpn, pppoe or pptp tunnel, or ipsec with mode = 'tunnel' (backend emu)",
                found=repr(t.mode if isinstance(t, Ipsec) else t.type),
                hint="run it on the simulator (`--backend sim`, the default)",
            )


def start(topo: Topology) -> list[TunnelProcess]:
    """Start every user-space end of the plan, configure its TUN device, and wait until
    all are up. Each process is registered before anything waits on it."""
    started: list[TunnelProcess] = []
    try:
        for node, kind, end in ends(topo.plan):
            started.append(start_end(topo, node, kind, end))
        wait_up(started)
    except BaseException:
        stop(started)
        raise
    return started


def start_end(
    topo: Topology, node: NodeConfig, kind: str, end: PppoeConfig | IpsecTunnelConfig | PptpConfig
) -> TunnelProcess:
    """One end's process in its node's namespace, ready (device and sockets open) and
    its device configured; not waited up."""
    if isinstance(end, PptpConfig):
        _pptp_namespace(topo, node.name)
    stop_r, stop_w = os.pipe()
    try:
        argv = [sys.executable, "-m", "qoslab.backends.emu.tunnel_child", end.name, str(stop_r), str(os.getpid())]
        child = subprocess.Popen(
            in_namespace(topo.namespace(node.name), argv),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            pass_fds=(stop_r,),
        )
    except BaseException:
        os.close(stop_w)
        raise
    finally:
        os.close(stop_r)
    topo.registry.add_pid(child.pid)
    topo.daemons.append(child)
    assert child.stdin is not None
    child.stdin.write(node.model_dump_json(by_alias=True).encode())
    child.stdin.close()
    child.stdin = None
    handle = TunnelProcess(node.name, end.name, kind, end, child, stop_w)
    try:
        _expect(handle, "ready", READY_S)
        _configure(topo, node.name, end, handle.inner_mtu() if isinstance(end, IpsecTunnelConfig) else None)
    except BaseException:
        stop([handle])  # its pipe closed and the process reaped; the error stands
        raise
    return handle


def _expect(handle: TunnelProcess, word: str, timeout_s: float) -> None:
    """Until the end printed ``word`` (or died, or ``timeout_s``: an error quoting it).
    Its stdout is read unbuffered, so a line read with another is never left behind."""
    child = handle.process
    assert child.stdout is not None
    fd = child.stdout.fileno()
    deadline = time.monotonic() + timeout_s
    while word not in handle.lines:
        left = deadline - time.monotonic()
        ready, _, _ = select.select([fd], [], [], max(0.0, left))
        chunk = os.read(fd, 65536) if ready else b""
        if chunk:
            handle.pending += chunk
            *lines, rest = handle.pending.split(b"\n")
            handle.pending = rest
            handle.lines += [line.decode(errors="replace") for line in lines]
            continue
        state = "exited" if child.poll() is not None else f"not {word} after {timeout_s:.0f} s"
        why = ""
        if child.poll() is not None and child.stderr is not None:
            err = child.stderr.read().decode(errors="replace").strip().splitlines()
            why = f": {err[-1]}" if err else ""
        raise EmulationError(f"user-space tunnel {handle.name} in {handle.node} {state}{why}")


def wait_up(handles: list[TunnelProcess], timeout_s: float = UP_S) -> None:
    """Until every end said ``up`` (PPPoE, PPTP: IPCP Opened at both ends)."""
    deadline = time.monotonic() + timeout_s
    for h in handles:
        _expect(h, "up", max(0.1, deadline - time.monotonic()))
        h.up = True


def _configure(
    topo: Topology, node: str, end: PppoeConfig | IpsecTunnelConfig | PptpConfig, inner_mtu: int | None
) -> None:
    """The TUN device's MTU, address (PPPoE: local/32) and routes, then up. An IPsec
    end's routes carry the tunnel's effective MTU, ``inner_mtu`` (the largest inner
    packet whose ESP/AH packet fits the route to the far end, from the end itself) when
    it is below the device's: the kernel then answers a DF packet above it with
    "fragmentation needed" and that MTU, as the simulator's stack does (RFC 4301 §8.2.1).
    A packet without DF above it is fragmented by the kernel before encapsulation here,
    where the simulator (``fragment = "after"``) fragments the outer packet."""
    from pyroute2 import NetNS

    with NetNS(topo.namespace(node)) as ns:
        idx = ns.link_lookup(ifname=end.name)[0]
        ns.link("set", index=idx, mtu=end.mtu, state="up")
        routes: list[tuple[str, int]]
        extra: dict[str, Any] = {}
        if isinstance(end, PppoeConfig):
            ns.addr("add", index=idx, address=str(end.local), prefixlen=32)
            routes = [(str(r.root[0]), r.root[1].root) for r in end.routes]
        elif isinstance(end, PptpConfig):
            ns.addr("add", index=idx, address=str(end.ppp_local), prefixlen=32)
            routes = [(str(r.root[0]), r.root[1].root) for r in end.routes]
            extra["table"] = PPTP_TABLE
        else:
            routes = [(str(p.root[0]), p.root[1].root) for p in end.protects or []]
        if inner_mtu is not None and inner_mtu < end.mtu:
            extra["metrics"] = {"mtu": inner_mtu}
        for destination, prefix in routes:
            ns.route("add", dst=destination, dst_len=prefix, oif=idx, **extra)


PPTP_MARK = 0x52
"""The firewall mark of a PPTP end's own outer packets (crates/emu ``tunnel::PPTP_MARK``)."""

PPTP_TABLE = 52
"""The routing table of the PPTP ends' routes (any id but 253-255, rtnetlink(7))."""

PPTP_RULE_PRIORITY = 101
"""The rule ``not fwmark PPTP_MARK lookup PPTP_TABLE``: before main (32766)."""

FIB_RULE_INVERT = 0x2
"""``include/uapi/linux/fib_rules.h``: the rule matches what its selector does not."""


def _pptp_namespace(topo: Topology, node: str) -> None:
    """What a PPTP end needs of its namespace, once per node:

    - The routes into its PPP interface go into :data:`PPTP_TABLE`, looked up for every
      packet but the end's own (marked :data:`PPTP_MARK`), which the main table routes:
      a PPTP tunnel routes its far end's outer address into itself (seed 002: the client
      reaches 192.0.2.1 through ppp0, and its GRE goes to 192.0.2.1), and the simulator's
      stack never sends an outer packet back into a tunnel.
    - The kernel's TCP sees the model's control segments (the raw socket's copy goes to
      it too) and, having no socket for them, answers each with a reset (RFC 9293
      §3.10.7.1); an nftables table ``qoslab_pptp`` drops those resets (any reset from or
      to port 1723 not marked as the end's own) on output."""
    from pyroute2 import NetNS

    namespace = topo.namespace(node)
    with NetNS(namespace) as ns:
        if any(r.get("table") == PPTP_TABLE for r in ns.rule("dump")):
            return
        ns.rule(
            "add",
            table=PPTP_TABLE,
            priority=PPTP_RULE_PRIORITY,
            fwmark=PPTP_MARK,
            fwmask=0xFFFFFFFF,
            flags=FIB_RULE_INVERT,
        )
    rules = f"""
    table ip qoslab_pptp {{
        chain output {{
            type filter hook output priority 0; policy accept;
            meta mark != {PPTP_MARK:#x} tcp sport 1723 tcp flags & rst == rst drop
            meta mark != {PPTP_MARK:#x} tcp dport 1723 tcp flags & rst == rst drop
        }}
    }}
    """
    run_in(namespace, ["nft", "-f", "-"], stdin=rules)


def stop(handles: list[TunnelProcess]) -> None:
    """Stop each end and read its report (an end that died leaves none)."""
    for h in handles:
        if h.stop_fd is not None:
            try:
                os.write(h.stop_fd, b"s")
            except OSError:
                pass
            os.close(h.stop_fd)
            h.stop_fd = None
        try:
            out, _ = h.process.communicate(timeout=STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            h.process.kill()
            out, _ = h.process.communicate()
        text = (h.pending + out).decode(errors="replace")
        last = [line for line in [*h.lines, *text.splitlines()] if line.startswith("{")]
        if last:
            h.report = json.loads(last[-1])


def counters(report: dict[str, Any]) -> dict[str, Any]:
    """What a run's record keeps of an end's report (docs/metrics.md, "User-space
    tunnels"): packets and octets each way, drops by reason, when it came up."""
    keys = ("node", "tunnel", "kind", "up_after_ns", "inner_in", "inner_out", "outer_out", "outer_in")
    return {**{k: report[k] for k in keys}, "dropped": report["dropped"]}
