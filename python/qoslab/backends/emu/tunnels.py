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

- ``IpsecTunnelConfig`` (mode ``transport``, RFC 4301 §4.1): the SA transforms the
  kernel's own datagrams, which no TUN device sees: an nftables table ``qoslab_ipsec``
  in the node's namespace (gone with it) queues the node's outgoing datagrams the SA
  selects (output hook) and the ESP/AH from ``remote`` with SPI ``spi_in`` (prerouting,
  priority -300: after reassembly, before conntrack) to NFQUEUE queue N (the SA's index
  in the node's ``ipsec`` list); the end (crates/emu ``tunnel::run_transport``) returns
  each protected or restored by the model, or drops it with the model's reason. As in
  the simulator, the sockets size datagrams by the interface's MTU (the SA is no
  interface; `qoslab mtu` says so), and a protected datagram that no longer fits is
  sent without DF and fragmented after the transform (RFC 4303 §3.1.1), where Linux's
  own IPsec would lower the route's MTU by the SA's overhead.

Refused (:func:`check`): GRE (no model end yet).
"""

from __future__ import annotations

import json
import os
import select
import struct
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

IMPLEMENTATION = "qoslab user-space tunnel ends (crates/sim models on TUN, raw sockets and NFQUEUE)"
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
        # Transport-mode SAs most specific first (stable), the order crates/sim's stack
        # asks them in: each one's output rule is appended as its end starts.
        transport = [end for end in node.ipsec or [] if end.mode == IpsecMode.transport]
        out += [(node, "ipsec-transport", end) for end in sorted(transport, key=lambda e: -_specificity(e))]
        out += [(node, "pptp", end) for end in node.pptp or []]
    # Servers first: a PPPoE client's first PADI, a PPTP client's SYN, finds its server.
    return sorted(out, key=lambda e: not (isinstance(e[2], PppoeConfig | PptpConfig) and e[2].server))


def _specificity(end: IpsecTunnelConfig) -> int:
    """How specific a transport-mode SA's selector is, as crates/sim
    ``IpsecTransport::specificity`` counts it: the protocol 1, each port 2."""
    return (
        int(end.select_protocol is not None)
        + 2 * int(end.select_local_port is not None)
        + 2 * int(end.select_remote_port is not None)
    )


def check(net: Network, out: LocatedProblems) -> None:
    """Refuse the tunnels no user-space end runs, at the tunnel's key."""
    for i, t in enumerate(net.scenario.tunnel):
        named = f" {t.name!r}" if getattr(t, "name", None) else ""
        if t.type == "gre":
            why = "GRE has no tunnel end in the simulator to drive, and this kernel has no GRE"
            out.add(
                ("tunnel", i, "type"),
                f"tunnel{named} cannot run on the emulation backend yet: {why}",
                expected="an openvpn, pppoe, pptp or ipsec tunnel (backend emu)",
                found=repr(t.type),
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
    transport = isinstance(end, IpsecTunnelConfig) and end.mode == IpsecMode.transport
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
        if transport:
            assert isinstance(end, IpsecTunnelConfig)
            _transport_namespace(topo, node, end)
        else:
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


TRANSPORT_NFT_TABLE = "qoslab_ipsec"
"""The nftables table of the transport-mode SAs' queue rules (one per namespace)."""


def _transport_namespace(topo: Topology, node: NodeConfig, end: IpsecTunnelConfig) -> None:
    """What transport-mode SA ``end`` needs of its node's namespace (see the module doc):
    its queue rules in :data:`TRANSPORT_NFT_TABLE`."""
    namespace = topo.namespace(node.name)
    queue = [c.name for c in node.ipsec or []].index(end.name)
    remote, local = str(end.remote), str(end.local)
    # RFC 4301 §4.4.1: the SA's selector, as crates/sim IpsecTransport::selects reads it
    # (outbound: the local port is the source, the remote port the destination).
    # A port selector without a protocol takes UDP and TCP (the protocols with ports).
    select = f"ip saddr {local} ip daddr {remote}"
    protocol = end.select_protocol
    ports = end.select_local_port is not None or end.select_remote_port is not None
    if protocol is not None:
        select += f" meta l4proto {protocol}"
    elif ports:
        select += " meta l4proto { tcp, udp }"
    if end.select_local_port is not None:
        select += f" th sport {end.select_local_port}"
    if end.select_remote_port is not None:
        select += f" th dport {end.select_remote_port}"
    inbound = "esp" if end.protocol is None or end.protocol.value == "esp" else "ah"
    # Prerouting at -300: after defragmentation (-400), before conntrack (-200). The ct
    # expression (it only counts) makes the kernel reassemble datagrams before this
    # chain in this namespace (it registers conntrack and its defrag), so that an ESP
    # datagram fragmented after the transform reaches the end whole.
    # This kind of kernel has no nftables ``queue`` expression (CONFIG_NFT_QUEUE unset)
    # but has xtables' NFQUEUE target and nft_compat: the selector's rule jumps to a
    # chain of the SA's own whose one rule is that target, which the nft tool cannot
    # write and :func:`_add_nfqueue_rule` writes through netlink.
    chain = f"sa{queue}"
    rules = f"""
    table ip {TRANSPORT_NFT_TABLE} {{
        chain output {{
            type filter hook output priority 0; policy accept;
        }}
        chain prerouting {{
            type filter hook prerouting priority -300; policy accept;
        }}
        chain defrag {{
            type filter hook prerouting priority -250; policy accept;
            meta l4proto {{ esp, ah }} ct state invalid counter
        }}
        chain {chain} {{
        }}
    }}
    add rule ip {TRANSPORT_NFT_TABLE} output {select} jump {chain}
    add rule ip {TRANSPORT_NFT_TABLE} prerouting ip saddr {remote} ip daddr {local} {inbound} spi {end.spi_in} jump {chain}
    """
    run_in(namespace, ["nft", "-f", "-"], stdin=rules)
    with _NetnsOf(namespace):
        _add_nfqueue_rule(TRANSPORT_NFT_TABLE, chain, queue)


class _NetnsOf:
    """The calling thread inside network namespace ``name`` (``setns``) for a ``with``
    block, then back in its own."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.own = -1

    def __enter__(self) -> None:
        self.own = os.open("/proc/thread-self/ns/net", os.O_RDONLY)
        fd = os.open(f"/run/netns/{self.name}", os.O_RDONLY)
        try:
            _setns(fd)
        finally:
            os.close(fd)

    def __exit__(self, *_: object) -> None:
        _setns(self.own)
        os.close(self.own)


CLONE_NEWNET = 0x40000000
"""sched.h: setns(2)'s network namespace type."""


def _setns(fd: int) -> None:
    """setns(2) of the calling thread into the network namespace ``fd`` (Python 3.11's
    os has no setns)."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    if libc.setns(fd, CLONE_NEWNET) != 0:
        raise OSError(ctypes.get_errno(), f"setns: {os.strerror(ctypes.get_errno())}")


# include/uapi/linux/netlink.h, netfilter/nfnetlink.h and nf_tables.h.
_NETLINK_NETFILTER = 12
_NLM_F_REQUEST, _NLM_F_ACK, _NLM_F_CREATE, _NLM_F_APPEND = 0x1, 0x4, 0x400, 0x800
_NLA_F_NESTED = 0x8000
_NFNL_MSG_BATCH_BEGIN, _NFNL_MSG_BATCH_END = 0x10, 0x11
_NFNL_SUBSYS_NFTABLES = 10
_NFT_MSG_NEWRULE = 6
_NFTA_RULE_TABLE, _NFTA_RULE_CHAIN, _NFTA_RULE_EXPRESSIONS = 1, 2, 4
_NFTA_LIST_ELEM = 1
_NFTA_EXPR_NAME, _NFTA_EXPR_DATA = 1, 2
_NFTA_TARGET_NAME, _NFTA_TARGET_REV, _NFTA_TARGET_INFO = 1, 2, 3
_NFPROTO_IPV4 = 2
_NFQUEUE_REVISION = 3
"""include/uapi/linux/netfilter/xt_NFQUEUE.h: ``struct xt_NFQ_info_v3`` (queuenum,
queues_total, flags; u16 each, host order)."""


def _nla(kind: int, value: bytes) -> bytes:
    body = struct.pack("=HH", 4 + len(value), kind) + value
    return body + b"\0" * (-len(body) % 4)


def _add_nfqueue_rule(table: str, chain: str, queue: int) -> None:
    """Appends to ``chain`` of nftables table ``ip table`` (in the calling thread's
    namespace) one rule whose only expression is xtables' NFQUEUE target (revision 3,
    nft_compat) to ``queue``, in one netlink batch, and checks the kernel's answer."""
    import socket

    info = struct.pack("=HHH", queue, 1, 0) + b"\0\0"  # XT_ALIGN'd to 8 octets
    target = (
        _nla(_NFTA_TARGET_NAME, b"NFQUEUE\0")
        + _nla(_NFTA_TARGET_REV, struct.pack(">I", _NFQUEUE_REVISION))
        + _nla(_NFTA_TARGET_INFO, info)
    )
    expression = _nla(_NFTA_EXPR_NAME, b"target\0") + _nla(_NFTA_EXPR_DATA | _NLA_F_NESTED, target)
    attrs = (
        _nla(_NFTA_RULE_TABLE, table.encode() + b"\0")
        + _nla(_NFTA_RULE_CHAIN, chain.encode() + b"\0")
        + _nla(_NFTA_RULE_EXPRESSIONS | _NLA_F_NESTED, _nla(_NFTA_LIST_ELEM | _NLA_F_NESTED, expression))
    )

    def message(kind: int, flags: int, seq: int, family: int, res_id: int, body: bytes) -> bytes:
        return (
            struct.pack("=IHHII", 16 + 4 + len(body), kind, flags, seq, 0)
            + struct.pack("!BBH", family, 0, res_id)
            + body
        )

    seq = 1
    batch = (
        message(_NFNL_MSG_BATCH_BEGIN, _NLM_F_REQUEST, seq, 0, _NFNL_SUBSYS_NFTABLES, b"")
        + message(
            (_NFNL_SUBSYS_NFTABLES << 8) | _NFT_MSG_NEWRULE,
            _NLM_F_REQUEST | _NLM_F_ACK | _NLM_F_CREATE | _NLM_F_APPEND,
            seq + 1,
            _NFPROTO_IPV4,
            0,
            attrs,
        )
        + message(_NFNL_MSG_BATCH_END, _NLM_F_REQUEST, seq + 2, 0, _NFNL_SUBSYS_NFTABLES, b"")
    )
    with socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, _NETLINK_NETFILTER) as sock:
        sock.bind((0, 0))
        sock.settimeout(5.0)
        sock.send(batch)
        answer = sock.recv(65536)
    # NLMSG_ERROR (2): the error (0: the acknowledgement) after the 16-octet header.
    kind = struct.unpack_from("=H", answer, 4)[0]
    error = struct.unpack_from("=i", answer, 16)[0] if kind == 2 else 0
    if error != 0:
        raise EmulationError(
            f"nftables rule NFQUEUE {queue} in {table} {chain}: {os.strerror(-error)} "
            "(the kernel needs nft_compat and xt_NFQUEUE)"
        )


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
