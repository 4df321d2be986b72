"""What every part of the lowering shares: units and defaults, the MAC rule, ports as
lowered, and the problems found on the way (:class:`LocatedProblems`).
"""

from __future__ import annotations

from dataclasses import dataclass
from ipaddress import IPv4Interface
from pathlib import Path
from typing import Any

from qoslab.errors import InputError, Problem
from qoslab.scenario.checks import MAX_NODES, MAX_PORTS_PER_NODE
from qoslab.scenario.model import Bridge, Wifi

PathT = tuple[str | int, ...]

# --------------------------------------------------------------------------- constants

SECOND_NS = 1_000_000_000

ARP_TIMEOUT_NS = 120 * SECOND_NS
"""Windows XP keeps a used ARP entry 120 s (ArpCacheLife, Microsoft KB 949589); seed 000's stations run XP."""

REASSEMBLY_TIMEOUT_NS = 30 * SECOND_NS
"""Linux's net.ipv4.ipfrag_time (30 s); RFC 791 §3.2 suggests 15 s as a lower bound."""

BRIDGE_AGING_NS = 300 * SECOND_NS
"""IEEE 802.1D-2004 §7.9.2, Table 7-5: recommended Ageing Time 300 s."""

NAT_UDP_TIMEOUT_NS = 30 * SECOND_NS
"""Linux nf_conntrack_udp_timeout (30 s); Windows XP ICS documents none."""

TX_QUEUE_FRAMES = 1000
"""Linux's default txqueuelen for Ethernet and 802.11 devices; uncalibrated for 2004 drivers."""

WIFI_MTU = 1500
"""IP MTU over 802.11 with LLC/SNAP as Linux and Windows configure it (RFC 1042 encapsulation)."""

RTS_NEVER = 2347
"""dot11RTSThreshold default: no MPDU is that long, so RTS/CTS is never used (IEEE 802.11-2020 Annex C)."""


ETHERNET_OVERHEAD = 18
"""Ethernet header (14) and FCS (4), IEEE 802.3 §3.1.1: what an RFC 2544 frame size counts besides the IP packet."""

HARDWARE_ROLES = ("switch", "ap", "ap-router", "atm-switch")
"""Roles whose forwarding is in hardware unless the scenario names a CPU profile."""

TRANSPARENT = {"switch", "ap", "atm-switch"}
"""Roles a segment extends through (with L2/L3F bridges): they join their ports into one subnet."""


# --------------------------------------------------------------------------- helpers


SERIAL_QUEUE_FRAMES = 10
"""Linux slip.c's transmit queue (and a modem's small buffer)."""


def mac_for(node: int, port: int) -> list[int]:
    """The MAC of port ``port`` (0-based) of node ``node``, as the simulator takes it.

    Octet 0 is 0x02 (IEEE 802-2014 §8.4: U/L = 1, locally administered; I/G = 0,
    unicast); octets 1-3 are the node index, octets 4-5 the port index plus one.

    >>> format_mac(mac_for(2, 0))
    '02:00:00:02:00:01'
    >>> format_mac(mac_for(10_000, 9_999))
    '02:00:27:10:27:10'
    >>> format_mac(mac_for(MAX_NODES - 1, MAX_PORTS_PER_NODE - 1))
    '02:ff:ff:ff:ff:ff'
    """
    if not 0 <= node < MAX_NODES or not 0 <= port < MAX_PORTS_PER_NODE:
        # check_limits refuses such a scenario first (exit 2, with the place).
        raise ValueError(f"node {node} port {port} out of the MAC scheme's range")
    p = port + 1
    return [0x02, node >> 16, (node >> 8) & 0xFF, node & 0xFF, p >> 8, p & 0xFF]


def format_mac(mac: list[int] | tuple[int, ...]) -> str:
    """``02:00:00:02:00:01`` from six integers."""
    return ":".join(f"{b:02x}" for b in mac)


@dataclass
class Port:
    """A port as lowered: which node, its index there, its name, the link it is on."""

    node: int
    index: int
    name: str
    link: int
    kind: str  # "ethernet" | "wifi"
    mac: list[int]
    mtu: int
    address: IPv4Interface | None = None


class LocatedProblems:
    """Problems found while lowering, positioned in the scenario file where it is known."""

    def __init__(self, source: str | Path | None) -> None:
        self.source = str(source) if source is not None else None
        self._spans: Any = None
        self.problems: list[Problem] = []

    @property
    def spans(self) -> Any:
        """The file's key positions, read at the first problem (a clean run of a
        10,000-host file reads them never, rather than once per check)."""
        if self._spans is None and self.source is not None:
            try:
                from qoslab.scenario.load import Spans

                self._spans = Spans(Path(self.source).read_text(encoding="utf-8"))
            except OSError:
                self._spans = None
        return self._spans

    def add(self, path: PathT, message: str, **kw: Any) -> None:
        from qoslab.scenario.load import format_path

        line = column = None
        spans = self.spans
        if spans is not None:
            line, column = spans.value(path)
        self.problems.append(Problem(message, key=format_path(path) or None, line=line, column=column, **kw))

    def raise_if_any(self) -> None:
        if self.problems:
            raise InputError(self.source, sorted(self.problems, key=lambda p: (p.line or 0, p.column or 0)))


def _members(link: Any) -> list[str]:
    if isinstance(link, Wifi):
        return ([link.ap] if link.ap else []) + list(link.stations)
    return list(link.ends)


def _is_transparent(node: Any) -> bool:
    return node.role in TRANSPARENT or (isinstance(node, Bridge) and node.forwarding in ("l2", "l3f"))


# --------------------------------------------------------------------------- refusals


_NOT_YET = "the simulator does not model this yet"
