"""Node roles on real kernels: what a plan's node does besides having interfaces.

- An ``l2`` bridge is a kernel bridge (built with the node's interfaces,
  :func:`qoslab.backends.emu.topology._bridge`); a router is the kernel's forwarding
  (``ip_forward`` from the plan).
- NAT (the plan's ``nat``: Windows ICS, a SOHO router's WAN) is nftables in the node's
  namespace: masquerade on the outside interface (source NAT with conntrack), the plan's
  port forwards as destination NAT, and a FORWARD rule that drops what comes in on the
  outside interface unless conntrack knows it as a reply or as a forwarded port:
  masquerading alone does not stop a host outside from sending to an inside address
  through the NAT node when it routes that subnet there (as seed 000 Fig. 8's AP does).
- An ``l3f`` bridge (seed 000 §2.2) is the kernel's proxy ARP and forwarding between its
  ports, with qoslab's daemon (:mod:`qoslab.backends.emu.l3f`) learning where each host
  is and installing /32 routes, as Debian's parprouted does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from qoslab.backends.emu.topology import BRIDGE_IFNAME, EmulationError, in_namespace, l3f_ports, run_in
from qoslab.plan.models import NatConfig, NodeConfig

if TYPE_CHECKING:
    from qoslab.backends.emu.topology import Topology

DAEMON_READY_S = 20.0
"""Longest wait for the L3F daemon to listen (a Python start-up, slow on a loaded machine)."""

NFT_TABLE = "qoslab_nat"
"""The nftables table of a NAT node (in the node's own namespace)."""


def apply(topo: Topology, node: NodeConfig) -> None:
    """Give ``node`` its role's configuration beyond interfaces and routes."""
    if node.nat is not None:
        nat(topo.namespace(node.name), node)
    if l3f_ports(node):
        l3f(topo, node)


def l3f(topo: Topology, node: NodeConfig) -> None:
    """Start seed 000's L3F daemon (:mod:`qoslab.backends.emu.l3f`) in the node's
    namespace; it ends with the run (its parent) and is killed at teardown."""
    import select
    import subprocess
    import sys

    bridge = node.bridge
    assert bridge is not None  # l3f_ports found its ports
    own = "0.0.0.0/0" if bridge.address is None else f"{bridge.address[0]}/{bridge.address[1].root}"
    argv = [sys.executable, "-m", "qoslab.backends.emu.l3f", own, *l3f_ports(node)]
    proc = subprocess.Popen(
        in_namespace(topo.namespace(node.name), argv), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE
    )
    topo.registry.add_pid(proc.pid)
    topo.daemons.append(proc)
    assert proc.stdout is not None
    ready, _, _ = select.select([proc.stdout], [], [], DAEMON_READY_S)
    if not ready or proc.stdout.readline() != b"ready\n":
        raise EmulationError(f"the L3F daemon of {node.name} did not start within {DAEMON_READY_S:.0f} s")


def _nat(node: NodeConfig) -> NatConfig:
    """The NAT of a node :func:`apply` found one on."""
    assert node.nat is not None, node.name
    return node.nat


def nat_ruleset(node: NodeConfig) -> str:
    """The nftables ruleset of a NAT node (nft(8) syntax)."""
    cfg = _nat(node)
    outside = BRIDGE_IFNAME if cfg.outside_port is None else node.ports[cfg.outside_port].name
    dnat = [
        f'        iifname "{outside}" {f.protocol.value} dport {f.port} dnat to {f.to}:{f.to_port}'
        for f in cfg.port_forwards or []
    ]
    return "\n".join(
        [
            f"table ip {NFT_TABLE} {{",
            "    chain prerouting {",
            "        type nat hook prerouting priority dstnat; policy accept;",
            *dnat,
            "    }",
            "    chain postrouting {",
            "        type nat hook postrouting priority srcnat; policy accept;",
            f'        oifname "{outside}" masquerade',
            "    }",
            "    chain forward {",
            "        type filter hook forward priority filter; policy accept;",
            # Replies to what the inside opened, and the forwarded ports, come in;
            # nothing else that arrives on the outside is forwarded.
            f'        iifname "{outside}" ct state established,related accept',
            f'        iifname "{outside}" ct status dnat accept',
            f'        iifname "{outside}" drop',
            "    }",
            "}",
            "",
        ]
    )


def nat(namespace: str, node: NodeConfig) -> None:
    """Load the NAT ruleset into ``namespace``, and the plan's UDP mapping timeout into
    its conntrack (``nf_conntrack_udp_timeout``, per namespace, present once conntrack is
    in use; ``-e``: skipped on a kernel without the knob)."""
    run_in(namespace, ["nft", "-f", "-"], stdin=nat_ruleset(node))
    seconds = max(1, _nat(node).udp_timeout_ns // 1_000_000_000)
    run_in(namespace, ["sysctl", "-q", "-e", "-w", f"net.netfilter.nf_conntrack_udp_timeout={seconds}"])
