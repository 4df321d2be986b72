"""The simulator backend: a scenario lowered to the simulator's input, run, and read back.

:func:`lower` turns a :class:`~qoslab.scenario.Scenario` into a ``SimConfig``
(crates/sim/src/config.rs) as a JSON-ready dict; :func:`simulate` runs one through
``qoslab._core.simulate`` and returns its results.

Lowering rules
--------------
Nodes
    Index order is scenario order (the order of the ``[node.*]`` tables).
Ports
    Every link end becomes a port of its node, in link order: an Ethernet link gives
    each end one port, a wifi link gives its AP and each station one. Ports are named
    as a Linux user would see them, counted per kind on each node: ``eth0``, ``eth1``
    for Ethernet, ``wlan0`` for 802.11.
MACs
    Locally administered unicast (IEEE 802-2014 §8.4: the U/L bit of the first octet
    set, the I/G bit clear), derived from the node index and the port index:
    ``02:NN:NN:NN:PP:PP`` with NN:NN:NN the node index (24 bits) and PP:PP the port
    index counted from 1 (16 bits; 0 is never a port's, so ``02:xx:xx:xx:00:00`` stays
    free for the simulator's own use). A scenario of fewer than 65,536 nodes with fewer
    than 255 ports each reads ``02:00:NN:NN:00:PP``, so station A's ports read as the
    seed's MAC-A1, MAC-A2. Distinct (node, port) pairs give distinct MACs up to
    :data:`MAX_NODES` nodes and :data:`MAX_PORTS_PER_NODE` ports a node, the limits
    ``qoslab check`` enforces. A bridge interface takes
    the MAC of its wifi port if it has one, else of its first port (Linux gives a bridge
    the lowest port MAC; over a station adapter only the adapter's own MAC may send,
    seed 000 §2.1, so the node's own frames must carry it).
Addresses
    A node's addresses go to its ports by subnet: each address to the first port whose
    segment (the nodes reached through the link, across switches, APs and L2/L3F
    bridges) holds another address of that subnet; the rest in order. A gateway becomes
    the route 0.0.0.0/0; static routes keep their order (the lowest metric wins among
    equal prefixes).
Roles
    - ``host``: its ports and addresses, routes.
    - ``router``: the same with ``ip_forward``.
    - ``bridge``, forwarding ``l2`` / ``l3f``: a bridge of all its ports in mode ``l2`` /
      ``l3f`` with the node's address on the bridge interface.
    - ``bridge``, forwarding ``nat`` (Windows ICS, seed 000 §2.3, Fig. 7):
      ``ip_forward`` and NAT with the wireless adapter as the outside; with no wireless
      port, the port towards the gateway.
    - ``switch``: a bridge of all its ports, mode ``l2``, no address, CPU ``asic``.
    - ``ap``: a bridge of its wired ports and its wifi port, its address on the bridge.
    - ``ap-router`` (a SOHO router): a bridge of its LAN ports and its wifi port with the
      LAN address (the first address), ``ip_forward``. With a second address, the
      Ethernet port whose segment lies in that subnet is the WAN port, routed, with NAT
      if ``nat = true``. Without one there is no WAN and ``nat`` has nothing to do.
Links
    Ethernet → ``LinkConfig::Ethernet``; wifi → ``LinkConfig::Wifi`` with the AP first,
    then the stations, the ``hears`` matrix and the frame error rates in that member
    order. ATM links go to ``backends.sim_atm``. What the simulator does not model yet (GRE tunnels, MPPE,
    half duplex, ...) is refused with the key that asks for it.
IPsec tunnels (``[[tunnel]] type = "ipsec"``: ESP or AH, tunnel or transport mode)
    One ``IpsecTunnelConfig`` on each end, named as the tunnel, with its ``mode`` and
    ``protocol``. The outer addresses (the SA's peers) are
    the ends' addresses each uses to reach the other (:meth:`Network.destination`).
    SPIs: tunnel N (its index among ``[[tunnel]]``) uses ``0x1000 + 2N`` from ``from``
    to ``to`` and ``0x1000 + 2N + 1`` back (RFC 4303 §2.1: above the reserved 1-255);
    both ends derive the keys from the SPIs (no IKE). What each end protects - the
    destinations it routes into the tunnel - is what lies at or behind the other end:
    a node that forwards (router, AP router, ICS bridge) protects the subnets of its
    addresses other than the tunnel's end (the networks behind the gateway; its own
    address alone if it has no other); any other node is protected by its addresses,
    each as a /32. Two tunnels of one node may not protect the same destination. The
    tunnel MTU is the tunnel's ``mtu``, else the MTU of the port the tunnel leaves by,
    so that a full-size inner packet is encapsulated whole and its outer packet
    fragmented (fragmentation after encapsulation).
    Transport mode protects the two ends' own traffic to each other (``protects`` and
    the MTU are unused; the ESP/AH datagram is fragmented after the transform, as a host
    does). A ``selector`` narrows it to one protocol and one port of ``to`` (RFC 4301
    §4.4.1.1): ``from``'s SA selects it as its remote port, ``to``'s as its local port,
    so several VPNs between two hosts (seed 003: up to three from one client) each carry
    their own traffic; the most specific selector wins. Two transport tunnels between the
    same two nodes with the same selector are refused (the second would carry nothing).
    Selectors on tunnel-mode tunnels are refused (routes pick a tunnel-mode tunnel).
    ``over`` is refused (the tunnel follows the routed path).
OpenVPN tunnels (``[[tunnel]] type = "openvpn"``, UDP or TCP; seed 002)
    One ``OpenVpnConfig`` on each end (``to`` is the server). TAP: each end gets a port
    ``tapN`` after its link ports (MTU: the tunnel's ``mtu``, else OpenVPN's default
    1500); at the server, when the node has Ethernet ports without an address, the TAP
    port is bridged with them (an OpenVPN server bridging tap0 to its LAN). TUN: an
    interface ``tunN`` protecting what lies behind the other end, as an IPsec tunnel.
    The outer datagrams go between the ends' addresses (their PPP addresses when
    ``over`` names a PPPoE tunnel) on ``port`` at both ends; ``fragment`` and
    ``replay`` (default off, seed 002 §3.2's 24 bytes) as given; keys derive from the
    tunnel index. ``proto = "tcp"``: the client connects to the server's ``port`` from
    an ephemeral port and the packets go length-prefixed on that TCP connection
    (``sim::openvpn_tcp``). See :func:`_vpn_tunnels`.
PPPoE tunnels (``[[tunnel]] type = "pppoe"``)
    The server (``to``) is the Access Concentrator on the port that reaches ``over``
    (the link, or the TAP tunnel's bridged LAN), the client on its TAP port or its port
    on the link; discovery, LCP, CHAP/PAP and IPCP run in the simulation before IP
    flows, and a TCP test starts once the PPP link is up. Addresses, names and MTU:
    :func:`_vpn_tunnels`.
PPTP tunnels (``[[tunnel]] type = "pptp"``; seed 002 §3.4)
    A ``PptpConfig`` on each end (``to`` is the server, pptpd): the control connection
    on TCP 1723, then LCP, the ``auth`` protocol and IPCP in enhanced GRE, before IP
    flows. Outer addresses, PPP addresses, call IDs, names and MTU: :func:`_pptp_tunnels`.
"""

from __future__ import annotations

import json
import threading
from bisect import bisect_left, bisect_right
from collections import deque
from contextvars import ContextVar
from dataclasses import dataclass, field
from ipaddress import IPv4Address, IPv4Interface
from pathlib import Path
from typing import Any

from qoslab.backends.sim_atm import atm_config, atm_link, is_lane_port
from qoslab.data import DEFAULT_PROFILE, HARDWARE_PROFILE, cpu_profiles
from qoslab.errors import InputError, Problem, did_you_mean
from qoslab.plan import PLAN_SCHEMA
from qoslab.scenario.checks import MAX_NODES, MAX_PORTS_PER_NODE
from qoslab.scenario.model import (
    WIFI_RATES_MBPS,
    AccessPoint,
    Atm,
    Bridge,
    Ethernet,
    GilbertElliott,
    Ipsec,
    MpoaServer,
    OpenVpn,
    Pppoe,
    Pptp,
    Router,
    Scenario,
    Serial,
    Switch,
    Wifi,
)
from qoslab.scenario.tunnels import (
    OPENVPN_DEFAULT_MTU,
    PPPOE_MAX_MTU,
    PPPOE_OVERHEAD,
    PPTP_OVERHEAD,
    below,
    interface_mtu,
)

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


class SimulationError(RuntimeError):
    """The simulation could not complete (a budget exceeded, a configuration refused)."""


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


def _iface(address: IPv4Interface) -> list[Any]:
    return [str(address.ip), address.network.prefixlen]


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


@dataclass
class Network:
    """A lowered network: the SimConfig without traffic, and the names to read it by.

    ``config`` is the JSON-ready ``SimConfig`` dict (``flows`` empty). ``ports[i]`` lists
    node i's ports in index order. ``addresses`` maps a node name to its IPv4 addresses
    (port addresses, then the bridge's).
    """

    scenario: Scenario
    config: dict[str, Any]
    node_names: list[str]
    ports: list[list[Port]]
    addresses: dict[str, list[IPv4Interface]] = field(default_factory=dict)
    max_events: int | None = None
    """The simulator's event budget for each run, when raised above its default (``--max-events``)."""

    def node_index(self, name: str) -> int:
        return self.node_names.index(name)

    def destination(self, src: str, dst: str) -> IPv4Address | None:
        """The address ``src`` sends to in order to reach ``dst``: one of ``dst``'s
        addresses on a subnet ``src`` is on, else ``dst``'s first address."""
        theirs = self.addresses.get(dst, [])
        if not theirs:
            return None
        ours = self.addresses.get(src, [])
        for a in theirs:
            if any(a.ip in mine.network for mine in ours):
                return a.ip
        return theirs[0].ip

    def with_flows(
        self,
        flows: list[dict[str, Any]],
        duration_ns: int,
        *,
        seed: int | None = None,
        capture: bool = False,
        windows: list[dict[str, int]] | None = None,
    ) -> dict[str, Any]:
        """A copy of the configuration with this traffic (and the scenario's
        ``[[background]]`` traffic beside it), run length and seed, and the measured
        flows' windows (docs/metrics.md#window).

        The copy is shallow: its nodes, links and the rest are the network's own, shared
        by every test run on it (read them, never change them), so that many tests on
        one large network copy and encode it once (:class:`_RunConfig`), not per test."""
        config = _RunConfig(self.config)
        config.network = self
        config["flows"] = list(flows) + background_flows(self, duration_ns)
        if windows:
            config["windows"] = list(windows)
        config["duration_ns"] = int(duration_ns)
        config["capture"] = capture
        if seed is not None:
            config["seed"] = seed
        if self.max_events is not None:
            config["budget"] = {"max_events": int(self.max_events)}
        return config


class _RunConfig(dict):
    """A ``SimConfig`` made by :meth:`Network.with_flows`: its network parts are the
    network's own objects, so :func:`_encode` reuses their JSON text from one test to
    the next (a network of 1,000 hosts is about 1.2 MB of JSON, some 0.1 s to encode)."""

    network: Network | None = None


_ENCODED: dict[int, tuple[Any, str]] = {}
"""id(value) -> (value, its JSON text) for the network parts of recent configs; the value
is held so that its id is not reused while the entry lives."""
_ENCODED_LOCK = threading.Lock()
_ENCODED_MAX = 64


def _encode(config: dict[str, Any]) -> str:
    """``json.dumps(config)``, byte for byte, reusing the text of the network's parts
    (the values a :class:`_RunConfig` shares with its network's ``config``)."""
    net = getattr(config, "network", None)
    if net is None:
        return json.dumps(config)
    parts = []
    for key, value in config.items():
        shared = isinstance(value, (list, dict)) and net.config.get(key) is value
        text = None
        if shared:
            with _ENCODED_LOCK:
                hit = _ENCODED.get(id(value))
            if hit is not None and hit[0] is value:
                text = hit[1]
            else:
                text = json.dumps(value)
                with _ENCODED_LOCK:
                    if len(_ENCODED) >= _ENCODED_MAX:
                        _ENCODED.pop(next(iter(_ENCODED)))
                    _ENCODED[id(value)] = (value, text)
        parts.append(json.dumps(key) + ": " + (text if text is not None else json.dumps(value)))
    return "{" + ", ".join(parts) + "}"


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

IPSEC_CIPHERS = ("null", "3des-cbc", "aes-128-cbc", "aes-256-cbc", "aes-128-gcm")
"""The ESP ciphers of the scenario language that wire::ipsec implements (single DES is not)."""

IPSEC_SPI_BASE = 0x1000

"""First SPI the lowering hands out; RFC 4303 §2.1 reserves 1-255."""

IP_PROTOCOL_NUMBERS = {"icmp": 1, "tcp": 6, "udp": 17}
"""IANA Assigned Internet Protocol Numbers of the selector's protocols (RFC 790 / RFC 5237 registry)."""


def _directions(direction: str) -> list[int]:
    """The link directions a loss or shaper applies to: 0 is ends[0] → ends[1]."""
    return {"both": [0, 1], "forward": [0], "reverse": [1]}[direction]


def _impairments(link: Any) -> list[dict[str, Any]]:
    """Each direction's loss model and shaper, as the simulator takes them."""
    impair: list[dict[str, Any]] = [{}, {}]
    for model in link.loss:
        if isinstance(model, GilbertElliott):
            loss = {
                "model": "gilbert-elliott",
                "p": model.p,
                "r": model.r,
                "k": 1.0 - model.loss_good,
                "h": 1.0 - model.loss_bad,
            }
        else:
            loss = {"model": "bernoulli", "p": model.rate}
        for d in _directions(model.direction):
            impair[d]["loss"] = loss
    for shaper in link.shaper:
        for d in _directions(shaper.direction):
            impair[d]["shaper"] = {
                "rate_bps": shaper.rate,
                "burst_bytes": int(shaper.burst),
                "police": shaper.action == "police",
                "queue_bytes": None if shaper.queue is None else int(shaper.queue),
            }
    return impair


BEACON_RATE_BPS = 1_000_000
"""Beacons at the lowest basic rate, 1 Mb/s, the mandatory rate every 802.11b/g station decodes (IEEE 802.11-2020 §16.1.1)."""

DEFAULT_SSID = "linksys"
"""SSID of an AP whose node gives none: the Linksys WRT54G's factory SSID (seed 000's AP is a Linksys Wireless-G router)."""

AP_TX_QUEUE_FRAMES = 100
"""Transmit queue of an access point's 802.11 interface, frames: Linux 2.4's ether_setup() set
tx_queue_len = 100 ("Ethernet wants good queues", drivers/net/net_init.c), and 2004 APs such as the
Linksys WRT54G (Linux 2.4.20, Broadcom wl registered as an Ethernet device) kept it. Stations keep
TX_QUEUE_FRAMES."""

WIFI_SLOT_NS = {"long": 20_000, "short": 9_000}
"""aSlotTime: 20 us for DSSS/HR-DSSS and mixed ERP cells (IEEE 802.11-2020 Table 15-5/16-4), 9 us for ERP-only (Table 18-5)."""


def _wifi_max_delay_ns(link: Wifi) -> int:
    """Longest propagation delay a wifi link accepts: half a slot, so that the Ack's round trip still
    starts within ACKTimeout (SIFS + aSlotTime + aRxPHYStartDelay)."""
    short_slot = link.standard == "802.11g" and not link.erp_protection
    return WIFI_SLOT_NS["short" if short_slot else "long"] // 2


def _wds_capable(sc: Scenario, link: Wifi, member: str) -> bool:
    """Whether `member` exchanges 4-address frames on `link`: the link's `wds` makes every
    member capable; otherwise the node's own `wds` (an AP or a bridge) says."""
    return link.wds or bool(getattr(sc.node[member], "wds", False))


def _check_wds(sc: Scenario, base: PathT, link: Wifi, out: LocatedProblems) -> None:
    """A 4-address link needs both ends WDS-capable (IEEE 802.11-2020 Table 9-26, To DS = From DS = 1):
    refuse a `wds` that no peer on this BSS could use, rather than let it silently do nothing."""
    if link.wds:
        if link.ap is None:
            out.add(
                base + ("wds",),
                "4-address (WDS) frames need an access point: an ad hoc cell sends case-00 frames only",
                expected="wds = false in mode = 'adhoc'",
                found="wds = true",
            )
        return
    members = _members(link)
    if link.ap is None:
        for m in members:
            if getattr(sc.node[m], "wds", False):
                out.add(
                    ("node", m, "wds"),
                    f"node {m!r} is WDS-capable but {link.name or 'its wifi link'} is an ad hoc cell, which has no 4-address frames",
                    expected="wds = false",
                    found="wds = true",
                )
        return
    ap_wds = _wds_capable(sc, link, link.ap)
    station_wds = [m for m in link.stations if _wds_capable(sc, link, m)]
    if ap_wds and not station_wds:
        out.add(
            ("node", link.ap, "wds"),
            f"access point {link.ap!r} accepts 4-address frames but none of its stations sends them: the setting would do nothing",
            expected="wds = true on a station (a bridge or repeater) too, or on the link",
            found="wds = true on the AP only",
            hint="4-address frames need WDS at both ends (IEEE 802.11-2020 Table 9-26)",
        )
    if station_wds and not ap_wds:
        for m in station_wds:
            out.add(
                ("node", m, "wds"),
                f"station {m!r} sends 4-address frames but access point {link.ap!r} does not accept them",
                expected=f"wds = true on node {link.ap!r} too, or on the link",
                found=f"wds = true on {m!r} only",
                hint="4-address frames need WDS at both ends (IEEE 802.11-2020 Table 9-26)",
            )


def _refuse_unsupported(sc: Scenario, out: LocatedProblems) -> None:
    for name, node in sc.node.items():
        if isinstance(node, AccessPoint) and node.role == "ap" and node.routes:
            out.add(
                ("node", name, "routes"),
                "a plain access point is a bridge: it forwards frames, not IP packets, so routes would route nothing",
                expected="no routes on role = 'ap'",
                found=f"{len(node.routes)} route(s)",
                hint="use role = 'ap-router' (a SOHO router with an AP) to route",
            )
    for i, link in enumerate(sc.link):
        base: PathT = ("link", i)
        if isinstance(link, Atm):
            if link.loss:
                out.add(
                    base + ("loss",),
                    f"loss on an ATM link: {_NOT_YET}",
                    expected="no loss (cells are lost in switch queues)",
                    found=f"{len(link.loss)} loss model(s)",
                )
            if link.shaper:
                out.add(
                    base + ("shaper",),
                    "a shaper on an ATM link",
                    expected="a peak cell rate on the VC: vcs = [{ vci = ..., pcr = '...' }]",
                    found=f"{len(link.shaper)} shaper(s)",
                )
            continue
        if isinstance(link, Wifi) and link.loss:
            out.add(
                base + ("loss",),
                "loss on a wifi cell",
                expected="frame_error_rate per station",
                found=f"{len(link.loss)} loss model(s)",
            )
        if isinstance(link, Wifi) and link.shaper:
            out.add(
                base + ("shaper",),
                "a shaper on a wifi cell",
                expected="a shaper on an Ethernet or serial link",
                found=f"{len(link.shaper)} shaper(s)",
            )
        directions = [d for model in list(link.loss) for d in _directions(model.direction)]
        if len(directions) != len(set(directions)):
            out.add(
                base + ("loss",),
                "two loss models on one direction",
                expected="one loss model per direction",
                found=f"{len(link.loss)} loss models",
            )
        directions = [d for shaper in link.shaper for d in _directions(shaper.direction)]
        if len(directions) != len(set(directions)):
            out.add(
                base + ("shaper",),
                "two shapers on one direction",
                expected="one shaper per direction",
                found=f"{len(link.shaper)} shapers",
            )
        if isinstance(link, Ethernet) and link.duplex == "half":
            out.add(base + ("duplex",), f"half-duplex Ethernet: {_NOT_YET}", expected="'full'", found="'half'")
        if isinstance(link, Wifi):
            most = _wifi_max_delay_ns(link)
            if link.delay > most:
                out.add(
                    base + ("delay",),
                    "a propagation delay longer than half a slot: the Ack would start after the sender's ACKTimeout "
                    "(SIFS + aSlotTime + aRxPHYStartDelay, IEEE 802.11-2020 §10.3.2.9), which the simulator's MAC does not model",
                    expected=f"at most {most / 1000:g} us on this {link.standard} cell",
                    found=f"{link.delay / 1000:g} us",
                )
            _check_wds(sc, base, link, out)
            for member in link.preambles:
                if member not in _members(link):
                    out.add(
                        base + ("preambles", member),
                        "a preamble for a node that is not a member of this BSS",
                        expected="the ap or one of the stations: " + ", ".join(_members(link)),
                        found=repr(member),
                    )
            for member in (link.queue or {}) if isinstance(link.queue, dict) else ():
                if member not in _members(link):
                    out.add(
                        base + ("queue", member),
                        "a queue for a node that is not a member of this BSS",
                        expected="the ap or one of the stations: " + ", ".join(_members(link)),
                        found=repr(member),
                    )
            if link.retry_limit < 1:
                out.add(
                    base + ("retry_limit",),
                    "a frame is sent at least once",
                    expected="1 (send once, no retry) or more",
                    found=str(link.retry_limit),
                )
    for i, _t in enumerate(sc.tunnel):
        base: PathT = ("tunnel", i)
        if isinstance(_t, (OpenVpn, Pppoe)):
            _check_vpn(sc, i, _t, out)
            continue
        if isinstance(_t, Pptp):
            _check_pptp(sc, i, _t, out)
            continue
        if not isinstance(_t, Ipsec):
            out.add(
                base + ("type",),
                f"{_t.type} tunnels in a simulation: {_NOT_YET}",
                expected="'ipsec', 'openvpn', 'pppoe' or 'pptp' for `qoslab run`",
                found=repr(_t.type),
                hint="`qoslab mtu` analyses tunnel stacks",
            )
            continue
        if _t.protocol == "ah" and _t.auth == "none":
            out.add(
                base + ("auth",),
                "AH always carries an ICV (RFC 4302 §3.2)",
                expected="'hmac-md5-96', 'hmac-sha1-96' or 'hmac-sha256-128'",
                found="'none'",
            )
        if _t.selector is not None and _t.mode == "tunnel":
            out.add(
                base + ("selector",),
                f"a selector on a tunnel-mode tunnel: {_NOT_YET} (routes pick a tunnel-mode tunnel by destination)",
                expected="mode = 'transport' with a selector, or no selector",
                found="a selector with mode = 'tunnel'",
            )
        if _t.over is not None:
            out.add(
                base + ("over",),
                f"an IPsec tunnel over a named link or tunnel: {_NOT_YET}",
                expected="no `over`: the tunnel follows the routed path between its ends",
                found=repr(_t.over),
            )
        if _t.cipher not in IPSEC_CIPHERS:
            out.add(
                base + ("cipher",),
                f"{_t.cipher} in a simulation: {_NOT_YET}",
                expected=" or ".join(repr(c) for c in IPSEC_CIPHERS),
                found=repr(_t.cipher),
            )
        elif _t.cipher.endswith("-gcm") and _t.auth != "none":
            out.add(
                base + ("auth",),
                "AES-GCM carries its own 16-byte ICV (RFC 4106 §6): no separate HMAC",
                expected="'none' with a GCM cipher",
                found=repr(_t.auth),
            )
    for name, node in sc.node.items():
        if isinstance(node, Bridge) and node.promiscuous:
            out.add(
                ("node", name, "promiscuous"),
                f"promiscuous adapters (seed 000 Fig. 10): {_NOT_YET}",
                expected="false",
                found="true",
            )


# --------------------------------------------------------------------------- lowering


def _cpu(name: str, node: Any, out: LocatedProblems) -> dict[str, Any]:
    profiles = cpu_profiles()
    wanted = node.cpu
    if wanted is None:
        wanted = HARDWARE_PROFILE if node.role in HARDWARE_ROLES else DEFAULT_PROFILE
    profile = profiles.get(wanted)
    if profile is None:
        out.add(
            ("node", name, "cpu"),
            "unknown CPU profile",
            expected="one of " + ", ".join(repr(p) for p in profiles),
            found=repr(wanted),
            hint=did_you_mean(wanted, list(profiles)) or "profiles live in python/qoslab/data/cpu_profiles.toml",
        )
        profile = profiles[DEFAULT_PROFILE]
    return profile.sim_config()


class _Segments:
    """The segments of a scenario's links, to place addresses on ports (:func:`_assign`).

    The segment behind a port is the nodes its link reaches across L2-transparent nodes
    (switches, APs, L2/L3F bridges). Seen from a node that is not transparent itself,
    that is every node of the link's component (the links joined through transparent
    nodes) but the node: each component's addresses are gathered once and kept sorted,
    so placing the addresses of N hosts on one switch takes N log N steps, not the N²
    of walking the segment from every host (10,000 hosts: issue 14).
    """

    def __init__(self, sc: Scenario, names: list[str], ports: list[list[Port]]) -> None:
        self.sc, self.names, self.ports = sc, names, ports
        self.index = {name: i for i, name in enumerate(names)}
        parent = list(range(len(sc.link)))

        def find(x: int) -> int:
            while parent[x] != x:
                parent[x] = parent[parent[x]]
                x = parent[x]
            return x

        for k, name in enumerate(names):
            if _is_transparent(sc.node[name]):
                links = [p.link for p in ports[k] if p.link >= 0]
                for other in links[1:]:
                    a, b = find(links[0]), find(other)
                    if a != b:
                        parent[b] = a
        self.component = [find(li) for li in range(len(sc.link))]
        members: dict[int, set[int]] = {}
        for li, link in enumerate(sc.link):
            members.setdefault(self.component[li], set()).update(self.index[m] for m in _members(link))
        self.addresses = {
            c: sorted(int(a.ip) for k in ks for a in sc.node[names[k]].address) for c, ks in members.items()
        }

    def walk(self, node: int, port: Port) -> list[IPv4Address]:
        """Addresses of the nodes on the segment behind ``port``, walked across
        L2-transparent nodes (for a transparent ``node``, whose own ports split it)."""
        names, ports, sc = self.names, self.ports, self.sc
        seen = {node}
        todo = deque(self.index[m] for m in _members(sc.link[port.link]) if m != names[node])
        found: list[IPv4Address] = []
        while todo:
            k = todo.popleft()
            if k in seen:
                continue
            seen.add(k)
            other = sc.node[names[k]]
            found.extend(a.ip for a in other.address)
            if _is_transparent(other):
                for p in ports[k]:
                    if p.link < 0:  # a TAP port: no link of the scenario
                        continue
                    todo.extend(j for j in (self.index[m] for m in _members(sc.link[p.link])) if j not in seen)
        return found

    def shares_subnet(self, node: int, port: Port, a: IPv4Interface) -> bool:
        """Whether another node on the segment behind ``port`` has an address in the
        subnet of ``a`` (other than ``a`` itself)."""
        if _is_transparent(self.sc.node[self.names[node]]):
            return any(ip in a.network and ip != a.ip for ip in self.walk(node, port))
        lo, hi, me = int(a.network.network_address), int(a.network.broadcast_address), int(a.ip)
        ips = self.addresses[self.component[port.link]]
        own = [int(b.ip) for b in self.sc.node[self.names[node]].address]
        in_subnet = bisect_right(ips, hi) - bisect_left(ips, lo) - sum(1 for x in own if lo <= x <= hi)
        same = bisect_right(ips, me) - bisect_left(ips, me) - own.count(me)
        return in_subnet - same > 0


def _assign(
    addresses: list[IPv4Interface], candidates: list[Port], segments: _Segments, node: int
) -> dict[int, IPv4Interface]:
    """Port index -> address: each address to the first free port whose segment shares its subnet, the rest in order."""
    chosen: dict[int, IPv4Interface] = {}
    left: list[IPv4Interface] = []
    for a in addresses:
        for p in candidates:
            if p.index in chosen:
                continue
            if segments.shares_subnet(node, p, a):
                chosen[p.index] = a
                break
        else:
            left.append(a)
    free = [p for p in candidates if p.index not in chosen]
    for a, p in zip(left, free):
        chosen[p.index] = a
    return chosen


def _routes(node: Any) -> list[dict[str, Any]]:
    best: dict[Any, Any] = {}
    order: list[Any] = []
    for r in node.routes:
        if r.to not in best:
            order.append(r.to)
            best[r.to] = r
        elif r.metric < best[r.to].metric:
            best[r.to] = r
    routes = [
        {"destination": str(best[n].to.network_address), "prefix_len": best[n].to.prefixlen, "via": str(best[n].via)}
        for n in order
    ]
    if node.gateway is not None and not any(r.to.prefixlen == 0 for r in node.routes):
        routes.append({"destination": "0.0.0.0", "prefix_len": 0, "via": str(node.gateway)})
    return routes


def _port_forwards(node: Any) -> list[dict[str, Any]]:
    out = []
    for pf in node.port_forwards:
        to, _, to_port = pf.to.partition(":")
        out.append({"protocol": pf.proto, "port": pf.port, "to": to, "to_port": int(to_port) if to_port else pf.port})
    return out


def lower_network(scenario: Scenario, *, source: str | Path | None = None) -> Network:
    """The scenario's network as the simulator's configuration, without traffic.

    Parameters
    ----------
    scenario:
        A validated scenario.
    source:
        The scenario file, to position problems at file:line:column.

    Raises
    ------
    InputError
        For what the simulator cannot run (with the key that asks for it) and unknown
        CPU profiles.
    """
    out = LocatedProblems(source)
    _refuse_unsupported(scenario, out)
    out.raise_if_any()

    names = list(scenario.node)
    ports: list[list[Port]] = [[] for _ in names]
    counters: list[dict[str, int]] = [{"ethernet": 0, "wifi": 0, "serial": 0, "tap": 0, "atm": 0} for _ in names]
    link_ports: list[list[Port]] = []
    node_index = {name: i for i, name in enumerate(names)}
    for li, link in enumerate(scenario.link):
        kind = (
            "wifi"
            if isinstance(link, Wifi)
            else ("serial" if isinstance(link, Serial) else ("atm" if isinstance(link, Atm) else "ethernet"))
        )
        if isinstance(link, Wifi):
            mtu = WIFI_MTU
        elif isinstance(link, Serial):
            # RFC 1055: SLIP's 1006 bytes; RFC 1661 §6.1: PPP's default MRU 1500.
            mtu = link.mtu or (1500 if link.framing == "ppp" else 1006)
        else:
            mtu = link.mtu
        ends = []
        for member in _members(link):
            n = node_index[member]
            idx = len(ports[n])
            prefix = {
                "wifi": "wlan",
                "serial": "ppp" if isinstance(link, Serial) and link.framing == "ppp" else "sl",
                "atm": "atm",
            }.get(kind, "eth")
            port = Port(n, idx, f"{prefix}{counters[n][kind]}", li, kind, mac_for(n, idx), mtu)
            counters[n][kind] += 1
            ports[n].append(port)
            ends.append(port)
        link_ports.append(ends)
    taps = _tap_ports(scenario, names, ports, counters)
    segments = _Segments(scenario, names, ports)

    nodes: list[dict[str, Any]] = []
    addresses: dict[str, list[IPv4Interface]] = {}
    for n, name in enumerate(names):
        node = scenario.node[name]
        mine = ports[n]
        cfg: dict[str, Any] = {
            "name": name,
            "role": node.role,
            "ports": [],
            "bridge": None,
            "ip_forward": False,
            "routes": _routes(node),
            "nat": None,
            "cpu": _cpu(name, node, out),
            "arp_timeout_ns": ARP_TIMEOUT_NS,
            "reassembly_timeout_ns": REASSEMBLY_TIMEOUT_NS,
            "ipsec": [],
            # The rest of PmtuConfig (rate limit, cache aging, min_pmtu) keeps Linux's values.
            "pmtu": {"frag_needed": node.frag_needed, "filter_icmp_unreachable": node.block_icmp_unreachable},
            "openvpn": [],
            "pppoe": [],
            "pptp": [],
        }
        bridge_ports: list[Port] = []
        bridge_address: IPv4Interface | None = None
        routed: list[Port] = [p for p in mine if p.kind != "tap"]  # ports that carry their own address
        addrs = list(node.address)

        if isinstance(node, Bridge) and node.forwarding in ("l2", "l3f") or isinstance(node, Switch):
            bridge_ports, routed = list(mine), []
            if len(addrs) > 1:
                out.add(
                    ("node", name, "address"),
                    "a bridge has one address, on its bridge interface",
                    expected="one address",
                    found=", ".join(str(a) for a in addrs),
                )
            bridge_address = addrs[0] if addrs else None
            addrs = []
        elif isinstance(node, AccessPoint):
            wan: Port | None = None
            if node.role == "ap-router" and len(addrs) > 1:
                wired = [p for p in mine if p.kind == "ethernet"]
                hit = _assign(addrs[1:2], wired, segments, n)
                if hit:
                    wan = next(p for p in wired if p.index in hit)
                else:
                    out.add(
                        ("node", name, "address"),
                        "no Ethernet port leads to the WAN subnet of the second address",
                        expected="a WAN link to a node in " + str(addrs[1].network),
                        found="none",
                    )
            bridge_ports = [p for p in mine if p is not wan]
            routed = [wan] if wan is not None else []
            bridge_address = addrs[0] if addrs else None
            addrs = addrs[1:2] if wan is not None else []
            if len(node.address) > 2:
                out.add(
                    ("node", name, "address"),
                    "an AP router has a LAN address and at most a WAN address",
                    expected="one or two addresses",
                    found=", ".join(str(a) for a in node.address),
                )
            if node.role == "ap-router":
                cfg["ip_forward"] = True
                if wan is not None and node.nat:
                    cfg["nat"] = {
                        "outside_port": wan.index,
                        "port_forwards": _port_forwards(node),
                        "udp_timeout_ns": NAT_UDP_TIMEOUT_NS,
                    }
        elif isinstance(node, (Router, MpoaServer)) or (isinstance(node, Bridge) and node.forwarding == "nat"):
            cfg["ip_forward"] = True

        if len(bridge_ports) == 1:
            # One port is no bridge: the address sits on the port itself (beside an
            # ap-router's routed WAN port, if it has one).
            routed, bridge_ports = bridge_ports + routed, []
            addrs = ([bridge_address] if bridge_address else []) + addrs
            bridge_address = None
        if len(addrs) > len(routed):
            out.add(
                ("node", name, "address"),
                f"{len(addrs)} addresses but {len(routed)} interface(s) to put them on",
                expected=f"at most {len(routed)} address(es), one per link",
                found=", ".join(str(a) for a in addrs),
            )
        chosen = _assign(addrs, routed, segments, n)
        if not bridge_ports:
            bridge_ports = _tap_bridge(scenario, name, mine, chosen, taps)
        for p in mine:
            p.address = chosen.get(p.index)
            cfg["ports"].append(
                {
                    "name": p.name,
                    "mac": p.mac,
                    "address": _iface(p.address) if p.address else None,
                    "mtu": p.mtu,
                    "point_to_point": p.kind == "serial" or p.kind == "atm" and not is_lane_port(scenario, p),
                }
            )
        if bridge_ports:
            wifi = [p for p in bridge_ports if p.kind == "wifi"]
            mac = (wifi[0] if wifi else bridge_ports[0]).mac
            mode = node.forwarding if isinstance(node, Bridge) else "l2"
            cfg["bridge"] = {
                "ports": [p.index for p in bridge_ports],
                "mode": mode,
                "mac": list(mac),
                "address": _iface(bridge_address) if bridge_address else None,
                "aging_ns": BRIDGE_AGING_NS,
            }

        if isinstance(node, Bridge) and node.forwarding == "nat":
            outside = _nat_outside(scenario, node, mine, names, ports, n)
            if outside is None:
                out.add(
                    ("node", name, "forwarding"),
                    "NAT needs an outside interface",
                    expected="a wireless port, or a gateway on one of the ports' subnets",
                    found="neither",
                )
            else:
                cfg["nat"] = {
                    "outside_port": outside.index,
                    "port_forwards": _port_forwards(node),
                    "udp_timeout_ns": NAT_UDP_TIMEOUT_NS,
                }

        addresses[name] = [p.address for p in mine if p.address is not None] + (
            [bridge_address] if bridge_address else []
        )
        nodes.append(cfg)

    links: list[dict[str, Any]] = []
    for li, link in enumerate(scenario.link):
        ends = link_ports[li]
        refs = [{"node": p.node, "port": p.index} for p in ends]
        lname = scenario.link_name(li)
        if isinstance(link, Ethernet):
            frames, nbytes = _queue(link)
            links.append(
                {
                    "type": "ethernet",
                    "name": lname,
                    "a": refs[0],
                    "b": refs[1],
                    "rate_bps": link.rate,
                    "delay_ns": link.delay,
                    "queue_frames": frames,
                    "queue_bytes": nbytes,
                    "impair": _impairments(link),
                }
            )
        elif isinstance(link, Serial):
            links.append(
                {
                    "type": "serial",
                    "name": lname,
                    "a": refs[0],
                    "b": refs[1],
                    "rate_bps": link.rate,
                    "format": link.format,
                    "framing": link.framing,
                    "clocking": link.clocking,
                    "acfc": link.acfc,
                    "pfc": link.pfc,
                    "fcs_bits": link.fcs,
                    "compression": link.compression or 1.0,
                    "delay_ns": link.delay,
                    "queue_frames": SERIAL_QUEUE_FRAMES,
                    "impair": _impairments(link),
                }
            )
        elif isinstance(link, Atm):
            links.append(atm_link(link, lname, refs))
        else:
            links.append(_wifi(scenario, link, lname, refs))
    _ipsec_tunnels(scenario, names, nodes, ports, addresses, out)
    atm = atm_config(scenario, names, ports, out)
    adaptive = _adaptive(scenario, names, ports)
    _vpn_tunnels(scenario, names, nodes, ports, addresses, taps, out)
    _pptp_tunnels(scenario, names, nodes, ports, addresses, taps, out)
    out.raise_if_any()

    config = {
        "schema": PLAN_SCHEMA,
        "seed": scenario.scenario.seed,
        "duration_ns": scenario.scenario.duration or 10 * SECOND_NS,
        "nodes": nodes,
        "links": links,
        "flows": [],
        "capture": False,
        "atm": atm,
        "adaptive": adaptive,
    }
    return Network(scenario, config, names, ports, addresses)


def _link_index(sc: Scenario, ref: str) -> int:
    return next(j for j in range(len(sc.link)) if sc.link[j].name == ref or ref == f"link[{j}]")


def _adaptive(sc: Scenario, names: list[str], ports: list[list[Port]]) -> list[dict[str, Any]]:
    """Each router's ``adaptive`` table as an ``AdaptiveConfig`` (crates/sim/src/upstream.rs);
    the links were checked by :mod:`qoslab.scenario.checks`."""
    out = []
    for name, node in sc.node.items():
        a = getattr(node, "adaptive", None)
        if a is None:
            continue
        n = names.index(name)
        radio, modem = _link_index(sc, a.radio), _link_index(sc, a.modem)
        peer_name = next(e for e in sc.link[modem].ends if e != name)
        peer = names.index(peer_name)
        port_on = lambda k, link: next(p.index for p in ports[k] if p.link == link)  # noqa: E731
        out.append(
            {
                "node": n,
                "radio_port": port_on(n, radio),
                "modem_port": port_on(n, modem),
                "peer": peer,
                "peer_radio_port": port_on(peer, radio),
                "initial_timeout_ns": a.initial_timeout,
                "max_timeout_ns": a.max_timeout,
                "max_attempts": a.max_attempts,
                "ratio_window": a.window,
                "ratio_min_samples": a.min_samples,
                "low": a.low,
                "high": a.high,
                "probe_interval_ns": a.probe_interval,
                "sample_interval_ns": a.sample_interval,
            }
        )
    return out


BACKGROUND_FLOW_BASE = 1000
"""Flow ids of ``[[background]]`` traffic: ``1000 + N``, clear of every method's ids."""

BACKGROUND_PORT = 9
"""UDP discard (RFC 863): background datagrams go to a port nothing answers on."""


def background_flows(net: Network, duration_ns: int) -> list[dict[str, Any]]:
    """The scenario's ``[[background]]`` traffic as saturating or paced UDP flows."""
    from qoslab.methods.udp import wire_bytes

    flows = []
    for i, b in enumerate(net.scenario.background):
        src = net.node_index(b.from_)
        dst = net.destination(b.from_, b.to)
        mtu = next((p.mtu for p in net.ports[src] if p.address is not None), 1500)
        pps = b.rate / (8 * wire_bytes(b.payload, mtu)) if b.rate else 0.0
        stop = duration_ns if b.duration is None else min(duration_ns, b.start + b.duration)
        flows.append(
            {
                "kind": "udp",
                "id": BACKGROUND_FLOW_BASE + i,
                "from": src,
                "to": str(dst),
                "dst_port": BACKGROUND_PORT,
                "payload": max(16, int(b.payload)),
                "rate_pps": pps,
                "start_ns": b.start,
                "stop_ns": stop,
            }
        )
    return flows


def _ipsec_tunnels(
    sc: Scenario,
    names: list[str],
    nodes: list[dict[str, Any]],
    ports: list[list[Port]],
    addresses: dict[str, list[IPv4Interface]],
    out: LocatedProblems,
) -> None:
    """Each IPsec tunnel as a pair of IpsecTunnelConfig, one on each end (rules in the module doc)."""
    net = Network(sc, {}, names, ports, addresses)
    protected: dict[int, dict[tuple[str, int], int]] = {}  # node -> (network, prefix) -> tunnel index
    carried: dict[tuple[Any, ...], int] = {}  # transport traffic (pair, protocol, port, port's node) -> tunnel index
    for i, t in enumerate(sc.tunnel):
        if not isinstance(t, Ipsec):
            continue
        ends = [t.from_, t.to]
        local = [net.destination(ends[1], ends[0]), net.destination(ends[0], ends[1])]
        for k, key in enumerate(("from", "to")):
            if local[k] is None:
                out.add(
                    ("tunnel", i, key),
                    "an IPsec tunnel end needs an IPv4 address",
                    expected=f"an address on node {ends[k]}",
                    found="none",
                )
        if local[0] is None or local[1] is None:
            continue
        spis = [IPSEC_SPI_BASE + 2 * i, IPSEC_SPI_BASE + 2 * i + 1]
        common = {"cipher": t.cipher, "auth": t.auth, "mode": t.mode, "protocol": t.protocol}
        if t.mode == "transport":
            sel = t.selector
            protocol = None if sel is None or sel.protocol == "any" else IP_PROTOCOL_NUMBERS[sel.protocol]
            port = sel.port if sel is not None else None
            traffic = (frozenset(ends), protocol, port, t.to if port is not None else None)
            if traffic in carried:
                j = carried[traffic]
                what = (
                    "everything between them"
                    if sel is None
                    else f"the same traffic (protocol {sel.protocol}, port {port if port is not None else 'any'})"
                )
                out.add(
                    ("tunnel", i, "selector" if sel is not None else "to"),
                    f"tunnel[{j}] already carries {what} between {ends[0]} and {ends[1]}",
                    expected="transport tunnels between two nodes with different selectors",
                    found=f"tunnel[{j}] and tunnel[{i}] alike",
                    hint="give each VPN its own traffic: selector = { protocol = 'udp', port = 8 }",
                )
                continue
            carried[traffic] = i
            for k in (0, 1):
                n = names.index(ends[k])
                nodes[n]["ipsec"].append(
                    {
                        "name": t.name,
                        "local": str(local[k]),
                        "remote": str(local[1 - k]),
                        "spi_out": spis[k],
                        "spi_in": spis[1 - k],
                        "protects": [],
                        "mtu": 1500,
                        **common,
                        "select_protocol": protocol,
                        # The port is `to`'s: remote at `from`, local at `to` (RFC 4301 §4.4.1.1).
                        "select_local_port": port if k == 1 else None,
                        "select_remote_port": port if k == 0 else None,
                    }
                )
            continue
        for k in (0, 1):
            n, far = names.index(ends[k]), names.index(ends[1 - k])
            protects = _protected_behind(nodes[far], addresses[ends[1 - k]], local[1 - k])
            seen = protected.setdefault(n, {})
            for dest in protects:
                if dest in seen:
                    out.add(
                        ("tunnel", i, "to" if k == 0 else "from"),
                        f"node {ends[k]} already sends {dest[0]}/{dest[1]} into tunnel[{seen[dest]}]",
                        expected="tunnels of one node that protect different destinations",
                        found=f"{dest[0]}/{dest[1]} twice",
                        hint="each tunnel needs its own far address or subnet; several VPNs between two hosts: mode = 'transport', each with its own selector",
                    )
                seen.setdefault(dest, i)
            port = next((p for p in ports[n] if p.address is not None and p.address.ip == local[k]), None)
            mtu = t.mtu or (port.mtu if port is not None else 1500)
            nodes[n]["ipsec"].append(
                {
                    "name": t.name,
                    "local": str(local[k]),
                    "remote": str(local[1 - k]),
                    "spi_out": spis[k],
                    "spi_in": spis[1 - k],
                    "cipher": t.cipher,
                    "auth": t.auth,
                    "protects": [[a, p] for a, p in protects],
                    "mtu": mtu,
                    "mode": t.mode,
                    "protocol": t.protocol,
                    "select_protocol": None,
                    "select_local_port": None,
                    "select_remote_port": None,
                    "fragment": t.fragment,
                }
            )


# --------------------------------------------------------------------------- OpenVPN and PPPoE


def _check_vpn(sc: Scenario, i: int, t: Any, out: LocatedProblems) -> None:
    """Refuses what the simulator's OpenVPN and PPPoE cannot run yet (stacks without
    room are refused for every command by the scenario checks, `scenario.tunnels`)."""
    base: PathT = ("tunnel", i)
    under = below(sc, t)
    if isinstance(t, OpenVpn):
        if t.auth == "md5":
            out.add(
                base + ("auth",),
                f"OpenVPN with HMAC-MD5: {_NOT_YET}",
                expected="'none', 'sha1', 'sha256' or 'sha512'",
                found="'md5'",
            )
        if under is not None and under[0] == "tunnel" and not isinstance(sc.tunnel[under[1]], Pppoe):
            out.add(
                base + ("over",),
                f"OpenVPN over a {sc.tunnel[under[1]].type} tunnel: {_NOT_YET}",
                expected="a link, a PPPoE tunnel or no `over` (the routed path)",
                found=repr(t.over),
            )


def _tap_ports(
    sc: Scenario, names: list[str], ports: list[list[Port]], counters: list[dict[str, int]]
) -> dict[tuple[int, int], Port]:
    """A port for each end of each TAP tunnel, after the link ports: (tunnel, end) -> port."""
    taps: dict[tuple[int, int], Port] = {}
    for i, t in enumerate(sc.tunnel):
        if not (isinstance(t, OpenVpn) and t.dev == "tap"):
            continue
        for k, end in enumerate((t.from_, t.to)):
            n = names.index(end)
            idx = len(ports[n])
            port = Port(n, idx, f"tap{counters[n]['tap']}", -1, "tap", mac_for(n, idx), t.mtu or OPENVPN_DEFAULT_MTU)
            counters[n]["tap"] += 1
            ports[n].append(port)
            taps[(i, k)] = port
    return taps


def _tap_bridge(
    sc: Scenario, name: str, mine: list[Port], chosen: dict[int, IPv4Interface], taps: dict[tuple[int, int], Port]
) -> list[Port]:
    """At a TAP tunnel's server end (``to``), the TAP device bridged with the node's
    Ethernet ports that carry no address, as an OpenVPN server bridges tap0 to its LAN
    (``brctl addif br0 tap0 eth1``, seed 002 §2.1); none when there is no such port."""
    server_taps = [p for (i, k), p in taps.items() if k == 1 and sc.tunnel[i].to == name and p in mine]
    lan = [p for p in mine if p.kind == "ethernet" and p.index not in chosen]
    if server_taps and lan:
        return lan + server_taps
    return []


def _l2_port(sc: Scenario, names: list[str], ports: list[list[Port]], node: int, targets: set[int]) -> Port | None:
    """The Ethernet port of ``node`` whose segment (across switches, APs and L2/L3F
    bridges) reaches one of ``targets``."""
    for p in ports[node]:
        if p.link < 0:
            continue
        seen = {node}
        todo = [names.index(m) for m in _members(sc.link[p.link]) if m != names[node]]
        while todo:
            k = todo.pop(0)
            if k in seen:
                continue
            seen.add(k)
            if k in targets:
                return p
            if _is_transparent(sc.node[names[k]]):
                for q in ports[k]:
                    if q.link >= 0:
                        todo.extend(names.index(m) for m in _members(sc.link[q.link]) if names.index(m) not in seen)
    return None


def _pppoe_port(
    sc: Scenario, names: list[str], ports: list[list[Port]], taps: dict[tuple[int, int], Port], t: Pppoe, k: int
) -> Port | None:
    """The port end ``k`` of PPPoE tunnel ``t`` runs on: the TAP port when the node is an
    end of the TAP tunnel below, else its port on (or reaching) the link or the TAP's far end."""
    node = names.index((t.from_, t.to)[k])
    what = below(sc, t)
    if what is None:
        return None
    kind, j = what
    if kind == "tunnel":
        u = sc.tunnel[j]
        for e, end in enumerate((u.from_, u.to)):
            if names.index(end) == node:
                return taps.get((j, e))
        return _l2_port(sc, names, ports, node, {names.index(u.from_), names.index(u.to)})
    members = {names.index(m) for m in _members(sc.link[j])}
    if node in members:
        return next((p for p in ports[node] if p.link == j), None)
    return _l2_port(sc, names, ports, node, members)


def _vpn_tunnels(
    sc: Scenario,
    names: list[str],
    nodes: list[dict[str, Any]],
    ports: list[list[Port]],
    addresses: dict[str, list[IPv4Interface]],
    taps: dict[tuple[int, int], Port],
    out: LocatedProblems,
) -> None:
    """PPPoE sessions, then OpenVPN ends (which may ride on a PPPoE link), on each end node.

    PPPoE: the server (``to``) is the Access Concentrator; its PPP address is its address
    on the port the session runs on (else its first); it assigns the client the first
    free host address of that subnet with IPCP. Service-Name = ``service_name`` (empty:
    any), AC-Name = the server's node name, session id = tunnel index + 1, user = the
    client's node name, secret shared by both ends. MTU = ``mtu``, else the interface
    below less 8, at most 1492 (RFC 2516 §7). The client routes the server's PPP address
    and what lies behind a forwarding server into ``ppp0``; the server routes the
    client's address.

    OpenVPN: UDP (or, with ``proto = "tcp"``, a TCP connection client → server ``port``)
    between the ends' addresses (their PPP addresses when over a PPPoE
    tunnel), port ``port`` at both ends (OpenVPN binds 1194 on both unless --nobind);
    TAP ends are the ports made by :func:`_tap_ports`; a TUN end is an interface of MTU
    ``mtu`` (default 1500, OpenVPN's --tun-mtu) protecting what lies behind the other end
    as an IPsec tunnel does. Keys derive from the tunnel index.
    """
    net = Network(sc, {}, names, ports, addresses)
    used = {a.ip for addrs in addresses.values() for a in addrs}
    ppp_addresses: dict[int, tuple[IPv4Address, IPv4Address]] = {}
    ppp_count = [0 for _ in names]
    for i, t in enumerate(sc.tunnel):
        if not isinstance(t, Pppoe):
            continue
        ends = [t.from_, t.to]
        found = [_pppoe_port(sc, names, ports, taps, t, k) for k in (0, 1)]
        if found[0] is None or found[1] is None:
            k = 0 if found[0] is None else 1
            out.add(
                ("tunnel", i, "over"),
                f"node {ends[k]} has no port on {t.over!r} for PPPoE",
                expected=f"{ends[k]!r} on that Ethernet segment or an end of that TAP tunnel",
                found=repr(t.over),
            )
            continue
        client_port, server_port = found[0], found[1]
        n_client, n_server = names.index(ends[0]), names.index(ends[1])
        bridged = [
            (k, p)
            for k, p in enumerate(found)
            if nodes[p.node]["bridge"] and p.index in nodes[p.node]["bridge"]["ports"]
        ]
        if bridged:
            k, p = bridged[0]
            out.add(
                ("tunnel", i, "to" if k else "from"),
                f"PPPoE on {ends[k]}'s bridged port {p.name}: {_NOT_YET}",
                expected="a host or router end (a routed port or a TAP port)",
                found=f"{ends[k]!r} ({sc.node[ends[k]].role})",
            )
            continue
        server_if = server_port.address or next(iter(addresses.get(ends[1], [])), None)
        if server_if is None:
            out.add(
                ("tunnel", i, "to"),
                "a PPPoE server needs an IPv4 address for its PPP link and a subnet to assign the client an address from",
                expected=f"an address on node {ends[1]!r}",
                found="none",
            )
            continue
        client_ip = next((h for h in server_if.network.hosts() if h not in used), None)
        if client_ip is None:
            out.add(
                ("tunnel", i, "to"),
                "no free address for the PPPoE client in the server's subnet",
                expected=f"a free host address in {server_if.network}",
                found="all in use",
            )
            continue
        used.add(client_ip)
        under = interface_mtu(sc, below(sc, t)) or 1500
        mtu = t.mtu or min(PPPOE_MAX_MTU, under - PPPOE_OVERHEAD)
        behind = (
            []
            if not nodes[n_server]["ip_forward"]
            else [
                (str(a.network.network_address), a.network.prefixlen)
                for a in addresses[ends[1]]
                if a.ip != server_if.ip and a.network != server_if.network
            ]
        )
        common = {
            "service_name": t.service_name or "",
            "ac_name": ends[1],
            "auth": t.auth,
            "user": ends[0],
            "secret": f"qoslab-{t.name}",
            "mtu": mtu,
        }
        for n, port, server, local, peer, routes in (
            (n_server, server_port, True, server_if.ip, client_ip, [[str(client_ip), 32]]),
            (
                n_client,
                client_port,
                False,
                client_ip,
                server_if.ip,
                [[str(server_if.ip), 32]] + [[a, p] for a, p in behind],
            ),
        ):
            nodes[n]["pppoe"].append(
                {
                    "name": f"ppp{ppp_count[n]}",
                    "port": port.index,
                    "server": server,
                    "session_id": i + 1 if server else 0,
                    "local": str(local),
                    "peer": str(peer),
                    "routes": routes,
                    **common,
                }
            )
            ppp_count[n] += 1
        addresses[ends[0]].append(IPv4Interface(f"{client_ip}/{server_if.network.prefixlen}"))
        ppp_addresses[i] = (client_ip, server_if.ip)

    tun_count = [0 for _ in names]
    for i, t in enumerate(sc.tunnel):
        if not isinstance(t, OpenVpn):
            continue
        ends = [t.from_, t.to]
        what = below(sc, t)
        if what is not None and what[0] == "tunnel" and what[1] in ppp_addresses:
            u = sc.tunnel[what[1]]
            client_ip, server_ip = ppp_addresses[what[1]]
            by_node = {u.from_: client_ip, u.to: server_ip}
            local = [by_node.get(ends[0]), by_node.get(ends[1])]
        else:
            local = [net.destination(ends[1], ends[0]), net.destination(ends[0], ends[1])]
        for k, key in enumerate(("from", "to")):
            if local[k] is None:
                out.add(
                    ("tunnel", i, key),
                    "an OpenVPN end needs an IPv4 address",
                    expected=f"an address on node {ends[k]} (on {t.over!r})"
                    if t.over
                    else f"an address on node {ends[k]}",
                    found="none",
                )
        if local[0] is None or local[1] is None:
            continue
        for k in (0, 1):
            n, far = names.index(ends[k]), names.index(ends[1 - k])
            tap = taps.get((i, k))
            if tap is not None:
                name, protects = tap.name, []
            else:
                name = f"tun{tun_count[n]}"
                tun_count[n] += 1
                protects = [[a, p] for a, p in _protected_behind(nodes[far], addresses[ends[1 - k]], local[1 - k])]
            nodes[n]["openvpn"].append(
                {
                    "name": name,
                    "dev": t.dev,
                    "server": k == 1,
                    "port": tap.index if tap is not None else None,
                    "local": str(local[k]),
                    "remote": str(local[1 - k]),
                    "local_port": t.port,
                    "remote_port": t.port,
                    "proto": t.proto,
                    "cipher": t.cipher,
                    "auth": t.auth,
                    "replay": t.replay,
                    "fragment": int(t.fragment) if t.fragment is not None else None,
                    "mtu": t.mtu or OPENVPN_DEFAULT_MTU,
                    "protects": protects,
                    "key": i,
                }
            )


PPTP_CALL_ID_BASE = (0x0001, 0x4001)
"""Call IDs (RFC 2637 §2.7-§2.8: each side picks its own, unique among its calls):
the client's (PNS) ``0x0001`` and the server's (PAC) ``0x4001``, plus the tunnel's
index, so the two directions' GRE keys differ in a capture."""


def _check_pptp(sc: Scenario, i: int, t: Pptp, out: LocatedProblems) -> None:
    """Refuses what the simulator's PPTP cannot run yet: MPPE, and PPTP over a tunnel
    other than an OpenVPN TAP (its outer IP would have to ride a tunnel interface)."""
    base: PathT = ("tunnel", i)
    if t.mppe:
        out.add(
            base + ("mppe",),
            f"MPPE (RFC 3078): {_NOT_YET}",
            expected="false",
            found="true",
            hint="`qoslab mtu` analyses PPTP stacks",
        )
    under = below(sc, t)
    if under is not None and under[0] == "tunnel":
        u = sc.tunnel[under[1]]
        if not (isinstance(u, OpenVpn) and u.dev == "tap"):
            out.add(
                base + ("over",),
                f"PPTP over a {u.type} tunnel: {_NOT_YET}",
                expected="a link, an OpenVPN TAP tunnel or no `over` (the routed path)",
                found=repr(t.over),
            )


def _free_host(network: Any, used: set[IPv4Address]) -> IPv4Address | None:
    """The first host address of ``network`` nobody holds, now taken."""
    ip = next((h for h in network.hosts() if h not in used), None)
    if ip is not None:
        used.add(ip)
    return ip


def _pptp_tunnels(
    sc: Scenario,
    names: list[str],
    nodes: list[dict[str, Any]],
    ports: list[list[Port]],
    addresses: dict[str, list[IPv4Interface]],
    taps: dict[tuple[int, int], Port],
    out: LocatedProblems,
) -> None:
    """A ``PptpConfig`` on each end of each PPTP tunnel, as PPPoE's are made.

    The server (``to``) is pptpd. Its outer address is its address on the port that
    reaches ``over`` (a link, or the LAN an OpenVPN TAP is bridged to), else the one the
    client reaches it by; its PPP address is the same (pptpd's usual ``localip``), and
    it assigns the client the first free host address of that subnet with IPCP
    (``remoteip``). A client whose port on ``over`` is a TAP port without an address
    first takes the next free address of that subnet on it, as from a DHCP server on the
    bridged LAN; otherwise its outer address is its address on that port, or the one
    the server reaches it by. The ends' outer packets (TCP 1723 and GRE) never enter a
    tunnel interface (crates/sim/src/pptp_vif.rs), so the server's PPP address may equal
    its outer one. User = the client's node name, secret shared by both ends, call IDs
    :data:`PPTP_CALL_ID_BASE` + tunnel index. MTU = ``mtu``, else the interface below
    less 33 (:data:`qoslab.scenario.tunnels.PPTP_OVERHEAD`: seed 002 §3.4's 1397 in a
    1430 TAP). Routes as PPPoE's: the client routes the server's PPP address and what
    lies behind a forwarding server into ``pppN``; the server routes the client's.
    """
    net = Network(sc, {}, names, ports, addresses)
    used = {a.ip for addrs in addresses.values() for a in addrs}
    ppp_count = [len(node["pppoe"]) for node in nodes]  # after the PPPoE interfaces
    for i, t in enumerate(sc.tunnel):
        if not isinstance(t, Pptp):
            continue
        ends = [t.from_, t.to]
        n_client, n_server = names.index(ends[0]), names.index(ends[1])
        what = below(sc, t)
        found: list[Port | None] = [None, None]
        if what is not None:
            found = [_pppoe_port(sc, names, ports, taps, t, k) for k in (0, 1)]
            if found[0] is None or found[1] is None:
                k = 0 if found[0] is None else 1
                out.add(
                    ("tunnel", i, "to" if k else "from"),
                    f"node {ends[k]} has no port on {t.over!r} for PPTP",
                    expected=f"{ends[k]!r} on that link's segment or an end of that TAP tunnel",
                    found=repr(t.over),
                )
                continue
        server_port, client_port = found[1], found[0]
        server_ip = (
            server_port.address.ip
            if server_port is not None and server_port.address is not None
            else net.destination(ends[0], ends[1])
        )
        server_if = next((a for a in addresses.get(ends[1], []) if a.ip == server_ip), None)
        if server_if is None:
            out.add(
                ("tunnel", i, "to"),
                "a PPTP server needs an IPv4 address for the control connection and a subnet to assign the client an address from",
                expected=f"an address on node {ends[1]!r}",
                found="none",
            )
            continue
        client_outer: IPv4Address | None
        if (
            client_port is not None
            and client_port.address is None
            and client_port.kind == "tap"
            and not (nodes[n_client]["bridge"] and client_port.index in nodes[n_client]["bridge"]["ports"])
        ):
            client_outer = _free_host(server_if.network, used)
            if client_outer is not None:
                client_port.address = IPv4Interface(f"{client_outer}/{server_if.network.prefixlen}")
                nodes[n_client]["ports"][client_port.index]["address"] = _iface(client_port.address)
        elif client_port is not None and client_port.address is not None:
            client_outer = client_port.address.ip
        else:
            client_outer = net.destination(ends[1], ends[0])
        if client_outer is None:
            out.add(
                ("tunnel", i, "from"),
                "a PPTP client needs an IPv4 address to reach the server from",
                expected=f"an address on node {ends[0]!r}",
                found="none",
            )
            continue
        client_ppp = _free_host(server_if.network, used)
        if client_ppp is None:
            out.add(
                ("tunnel", i, "to"),
                "no free address for the PPTP client in the server's subnet",
                expected=f"a free host address in {server_if.network}",
                found="all in use",
            )
            continue
        under = interface_mtu(sc, what) or 1500
        mtu = t.mtu or under - PPTP_OVERHEAD
        behind = (
            []
            if not nodes[n_server]["ip_forward"]
            else [
                [str(a.network.network_address), a.network.prefixlen]
                for a in addresses[ends[1]]
                if a.ip != server_if.ip and a.network != server_if.network
            ]
        )
        common = {"auth": t.auth, "user": ends[0], "secret": f"qoslab-{t.name}", "mtu": mtu}
        for n, server, local, remote, ppp_local, ppp_peer, routes in (
            (n_server, True, server_if.ip, client_outer, server_if.ip, client_ppp, [[str(client_ppp), 32]]),
            (n_client, False, client_outer, server_if.ip, client_ppp, server_if.ip, [[str(server_if.ip), 32]] + behind),
        ):
            nodes[n]["pptp"].append(
                {
                    "name": f"ppp{ppp_count[n]}",
                    "server": server,
                    "local": str(local),
                    "remote": str(remote),
                    "ppp_local": str(ppp_local),
                    "ppp_peer": str(ppp_peer),
                    "routes": routes,
                    "call_id": PPTP_CALL_ID_BASE[1 if server else 0] + i,
                    **common,
                }
            )
            ppp_count[n] += 1
        # The PPP address first: it is the one the server's traffic to the client takes.
        addresses[ends[0]].append(IPv4Interface(f"{client_ppp}/{server_if.network.prefixlen}"))
        if (
            client_port is not None
            and client_port.address is not None
            and client_port.address.ip == client_outer
            and client_port.address not in addresses[ends[0]]
        ):
            addresses[ends[0]].append(client_port.address)


def _protected_behind(
    far: dict[str, Any], far_addresses: list[IPv4Interface], far_end: IPv4Address
) -> list[tuple[str, int]]:
    """What a tunnel to ``far`` protects: the subnets behind a forwarding node, else its addresses."""
    if far["ip_forward"]:
        behind = [(str(a.network.network_address), a.network.prefixlen) for a in far_addresses if a.ip != far_end]
        if behind:
            return list(dict.fromkeys(behind))
        return [(str(far_end), 32)]
    return [(str(a.ip), 32) for a in far_addresses]


def _nat_outside(
    sc: Scenario, node: Bridge, mine: list[Port], names: list[str], ports: list[list[Port]], n: int
) -> Port | None:
    """ICS's outside interface: the wireless adapter (seed 000 §2.3, Fig. 7); else the port towards the gateway."""
    wifi = [p for p in mine if p.kind == "wifi"]
    if wifi:
        return wifi[0]
    if node.gateway is not None:
        for p in mine:
            if p.address is not None and node.gateway in p.address.network:
                return p
    return None


def _queue(link: Ethernet) -> tuple[int, int]:
    """(frames, bytes) of each end's queue: the scenario's limit, the other one never binding."""
    largest = link.mtu + ETHERNET_OVERHEAD + 4  # with an 802.1Q tag
    if link.queue is None:
        return TX_QUEUE_FRAMES, TX_QUEUE_FRAMES * largest
    if link.queue.frames is not None:
        return link.queue.frames, link.queue.frames * largest
    nbytes = int(link.queue.bytes or 0)
    return max(1, nbytes // 64), nbytes  # 64 bytes: the shortest Ethernet frame


def _wifi(sc: Scenario, link: Wifi, name: str, refs: list[dict[str, int]]) -> dict[str, Any]:
    members = _members(link)
    rate = link.rate if link.rate is not None else int(max(WIFI_RATES_MBPS[link.standard]) * 1_000_000)
    hears = None
    if link.hears is not None:
        hears = [
            [i == j or link.hears.get(a) is None or b in link.hears[a] for j, b in enumerate(members)]
            for i, a in enumerate(members)
        ]
    has_ap = link.ap is not None
    # 4-address frames between the AP and a station need both WDS-capable (checked in _check_wds).
    wds_members = [has_ap and _wds_capable(sc, link, m) for m in members]
    wds = any(wds_members)
    if isinstance(link.queue, int):
        queues = [link.queue] * len(members)
    else:
        given = link.queue or {}
        queues = [
            given.get(m, AP_TX_QUEUE_FRAMES if has_ap and i == 0 else TX_QUEUE_FRAMES) for i, m in enumerate(members)
        ]
    return {
        "type": "wifi",
        "name": name,
        # The simulator's mixed 802.11g cell: ERP protection, long slot, CWmin 31.
        "standard": "802.11g-mixed" if link.erp_protection else link.standard,
        "rate_bps": rate,
        "preamble": link.preamble,
        "security": link.security,
        "ap": refs[0] if has_ap else None,
        "stations": refs[1:] if has_ap else refs,
        "rts_threshold": int(link.rts_threshold) if link.rts_threshold is not None else RTS_NEVER,
        "hears": hears,
        "frame_error_rate": [float(link.frame_error_rate.get(m, 0.0)) for m in members],
        "wds": wds,
        "wds_members": wds_members,
        "relay": not (has_ap and getattr(sc.node[link.ap], "isolate_stations", False)),
        "foreign_source": "drop",
        "queue_frames": TX_QUEUE_FRAMES,
        "member_queue_frames": queues,
        "retry_limit": link.retry_limit,
        "link_acks": link.link_acks,
        "delay_ns": link.delay,
        "access": link.access,
        "control_preamble": link.control_preamble,
        "member_preamble": [link.preambles.get(m, link.preamble) for m in members] if link.preambles else [],
        "channel": link.channel,
        "beacon": {
            "interval_ns": link.beacon_interval,
            "rate_bps": link.beacon_rate or BEACON_RATE_BPS,
            "ssid": getattr(sc.node[link.ap], "ssid", None) or DEFAULT_SSID,
        }
        if has_ap and link.beacons
        else None,
    }


def lower(scenario: Scenario, *, test_index: int | None = None, source: str | Path | None = None) -> dict[str, Any]:
    """A scenario as the simulator's ``SimConfig``, a JSON-ready dict.

    Parameters
    ----------
    scenario:
        A validated scenario.
    test_index:
        Lower the traffic of ``scenario.test[test_index]`` (its flows and run length; of
        an RFC 2544 search, its first trial); ``None`` lowers the network alone, without flows.
    source:
        The scenario file, to position problems at file:line:column.

    Raises
    ------
    InputError
        For what the simulator cannot run, unknown CPU profiles, tests no method runs.

    Examples
    --------
    >>> from qoslab.scenario import load_scenario
    >>> config = lower(load_scenario("examples/seed000_l3f.toml"))
    >>> a = next(n for n in config["nodes"] if n["name"] == "a")
    >>> [p["name"] for p in a["ports"]], a["bridge"]["mode"]
    (['wlan0', 'eth0'], 'l3f')
    """
    net = lower_network(scenario, source=source)
    if test_index is None:
        return net.config
    from qoslab.methods import plan_test

    return planned_config(net, plan_test(net, test_index, source=source))


def planned_config(net: Network, plan: Any) -> dict[str, Any]:
    """The ``SimConfig`` of a planned test: its flows, run length and windows on ``net``;
    of an RFC 2544 search, its first trial's (the first frame size at the maximum rate:
    the trials differ only in rate and size)."""
    from qoslab.methods import Search

    if isinstance(plan, Search):
        flows, duration, windows = plan.trials.first_flows()
        return net.with_flows(flows, duration, windows=windows)
    return net.with_flows(plan.flows, plan.duration_ns, windows=plan.windows)


# --------------------------------------------------------------------------- running


REPLICA: ContextVar[int] = ContextVar("qoslab_replica", default=0)
"""Which of ``qoslab reproduce --seeds N``'s seeds runs in this thread: 0 runs every
simulation with the seed its scenario gives; k > 0 replaces it by :func:`replica_seed`,
so each replica draws independent random streams and replica 0 is the run as written."""


def replica_seed(seed: int, k: int) -> int:
    """The seed of replica ``k`` (> 0) of a run whose own seed is ``seed``: the first 8
    octets of SHA-256("seed/k"), kept below 2^63 (any seed the core takes)."""
    import hashlib

    return int.from_bytes(hashlib.sha256(f"{seed}/{k}".encode()).digest()[:8], "big") >> 1


def simulate(
    config: dict[str, Any],
    *,
    pcap_dir: str | Path | None = None,
    pcap_snaplen: int | None = None,
    pcap_max_size: int | None = None,
) -> dict[str, Any]:
    """Run one simulation and return its results (the JSON of ``qoslab._core.simulate``).
    Under a :data:`REPLICA` k > 0 the run's seed is :func:`replica_seed` (seed, k).
    With ``pcap_dir``, the core writes its captures there as the run goes, each record
    at most ``pcap_snaplen`` bytes of its frame, the files together at most
    ``pcap_max_size`` bytes; the results' ``capture`` says what was written.

    Raises
    ------
    SimulationError
        If this build of the core has no simulator, or the run stopped (a budget
        exceeded names the queue that grew; a configuration refused names its field).
    """
    from qoslab import _core

    run = getattr(_core, "simulate", None)
    if run is None:
        raise SimulationError(
            "this build of qoslab._core has no simulator (qoslab._core.simulate); rebuild it with `pip install -e .`"
        )
    if REPLICA.get():
        network = getattr(config, "network", None)
        config = type(config)(config, seed=replica_seed(int(config.get("seed") or 0), REPLICA.get()))
        if network is not None:
            config.network = network  # type: ignore[attr-defined]
    if pcap_dir is not None:
        Path(pcap_dir).mkdir(parents=True, exist_ok=True)
    try:
        if pcap_dir is not None:
            text = run(_encode(config), str(pcap_dir), pcap_snaplen, pcap_max_size)
        else:
            text = run(_encode(config), None)
    except Exception as err:  # the core maps its errors to Python exceptions; each is a failed run
        raise SimulationError(f"the simulation failed: {err}") from err
    return json.loads(text)


@dataclass
class TestRun:
    """One test run: which test, its plan, the simulator's results and the records."""

    index: int
    label: str
    plan: Any
    results: dict[str, Any]
    records: list[dict[str, Any]]


def run_tests(
    scenario: Scenario,
    *,
    source: str | Path | None = None,
    seed: int | None = None,
    pcap_dir: str | Path | None = None,
    on_run: Any = None,
    on_trial: Any = None,
    max_events: int | None = None,
    network: Network | None = None,
    pcap_snaplen: int | None = None,
    pcap_max_size: int | None = None,
) -> tuple[Network, list[TestRun]]:
    """Run every test of the scenario, each in a fresh simulation, in file order.
    ``network``: the scenario's network lowered before (a sweep's points that differ
    only in their tests share one lowering), else it is lowered here.

    Every test is checked before the first runs, so bad input fails fast (InputError).
    ``on_run(network, run)`` is called after each run (the CLI prints it); ``on_trial(words)``
    before each simulation (RFC 2544 tests take many). With ``pcap_dir``,
    each run captures into ``pcap_dir/test<N>`` (``pcap_snaplen`` and ``pcap_max_size``
    as :func:`simulate` takes them); a capture cut by the size limit is said in the
    test's records (``parameters.pcap_cut_s``, ``pcap_cut_frame``).

    Raises
    ------
    InputError
        For anything the simulator cannot run.
    SimulationError
        If a run fails.
    """
    from qoslab.methods import Search, check_runnable, plan_test, test_label
    from qoslab.methods.common import adaptive_records

    net = lower_network(scenario, source=source) if network is None else network
    net.max_events = max_events
    check_runnable(scenario, source=source)
    if not scenario.test:
        out = LocatedProblems(source)
        out.add(
            ("scenario",),
            "the scenario has no [[test]]: nothing to measure",
            expected="a [[test]] table (udp.flow or ping)",
            found="none",
            hint="`qoslab reach FILE` pings between every pair of nodes",
        )
        out.raise_if_any()
    plans = [plan_test(net, i, source=source, seed=seed) for i in range(len(scenario.test))]
    runs: list[TestRun] = []
    for i, plan in enumerate(plans):
        if isinstance(plan, Search):
            # RFC 2544: one simulation per trial. A capture of every trial would be as long
            # as the whole search; with --pcap the search's last trial is run once more,
            # capturing (the same seed and configuration give the same frames), into
            # test<N>/ as a single-run test's capture is.
            plan.trials.on_trial = on_trial
            records = plan.trials.run()
            last = plan.trials.last_config
            if pcap_dir is not None and last is not None:
                if on_trial is not None:
                    on_trial(f"{test_label(scenario, i)}: the last trial again, captured")
                captured = simulate(
                    dict(last, capture=True),
                    pcap_dir=Path(pcap_dir) / f"test{i}",
                    pcap_snaplen=pcap_snaplen,
                    pcap_max_size=pcap_max_size,
                )
                for record in records:
                    record.setdefault("parameters", {})["pcap"] = "the search's last trial"
                    _note_capture_cut(record, captured)
            run = TestRun(i, test_label(scenario, i), plan, plan.trials.last_results, records)
            runs.append(run)
            if on_run is not None:
                on_run(net, run)
            continue
        if on_trial is not None:
            on_trial(test_label(scenario, i))
        config = net.with_flows(
            plan.flows, plan.duration_ns, seed=seed, capture=pcap_dir is not None, windows=plan.windows
        )
        if plan.cpu_window_ns is not None:
            config["cpu_window_ns"] = list(plan.cpu_window_ns)
        results = simulate(
            config,
            pcap_dir=Path(pcap_dir) / f"test{i}" if pcap_dir is not None else None,
            pcap_snaplen=pcap_snaplen,
            pcap_max_size=pcap_max_size,
        )
        records = plan.records(results)
        for record in records:
            _note_capture_cut(record, results)
        adaptive = adaptive_records(results)
        if adaptive:
            for record in records:
                record["adaptive"] = adaptive
        run = TestRun(i, test_label(scenario, i), plan, results, records)
        runs.append(run)
        if on_run is not None:
            on_run(net, run)
    return net, runs


def _note_capture_cut(record: dict[str, Any], results: dict[str, Any]) -> None:
    """Say in a record where its run's capture was cut by ``--pcap-max-size``: the time
    (s) and the number (over all the run's capture points, from 1) of the first frame
    left out of the files (docs/metrics.md "Capture")."""
    cut = (results.get("capture") or {}).get("cut")
    if cut:
        parameters = record.setdefault("parameters", {})
        parameters["pcap_cut_s"] = cut["time_ns"] / 1e9
        parameters["pcap_cut_frame"] = cut["frame"]


REACH_COUNT = 3
"""Echo requests per pair in `qoslab reach`."""


def reachability(
    scenario: Scenario, *, source: str | Path | None = None, seed: int | None = None, on_pair: Any = None
) -> tuple[Network, list[dict[str, Any]]]:
    """Ping from every node with an address to every other such node, each pair in a fresh run.

    Returns the network and one entry per ordered pair: ``from``, ``to``,
    ``to_address``, ``sent``, ``received``, ``reachable``, ``rtt_ms``, ``drops`` (where
    the flow's packets died: node, port, reason, count, first_ms, summary) and ``tables``
    (each node's ARP and L3F tables at the end of the run).

    On a network of more than :data:`qoslab.reach_groups.EXHAUSTIVE_UP_TO` speakers,
    interchangeable nodes (:func:`qoslab.reach_groups.interchangeable`: alike in every
    setting, on the same neighbour, named nowhere else) are pinged through one
    representative: one entry per ordered pair of groups, and one inside each group of two
    or more, each with ``from_group`` and ``to_group`` (how many nodes it stands for) and
    ``represents`` (how many ordered pairs).
    """
    from qoslab.methods.ping import ping_flow, rtt_metrics, run_length
    from qoslab.reach_groups import EXHAUSTIVE_UP_TO, interchangeable
    from qoslab.report.terminal import death_points

    net = lower_network(scenario, source=source)
    speakers = [n for n in net.node_names if net.addresses.get(n)]
    if len(speakers) > EXHAUSTIVE_UP_TO:
        groups = interchangeable(scenario, speakers, _members)
    else:
        groups = [[n] for n in speakers]
    interval = SECOND_NS  # ping's default interval
    pairs: list[dict[str, Any]] = []
    for ga in groups:
        for gb in groups:
            if ga is gb and len(ga) < 2:
                continue
            a, b = ga[0], (gb[1] if ga is gb else gb[0])
            dst = str(net.destination(a, b))
            flow = ping_flow(net.node_index(a), dst, count=REACH_COUNT, interval_ns=interval, payload=56)
            results = simulate(net.with_flows([flow], run_length(REACH_COUNT, interval), seed=seed))
            f = next(
                (x for x in results.get("flows", []) if x["id"] == flow["id"]), {"sent": REACH_COUNT, "received": 0}
            )
            m = rtt_metrics(f)
            pair = {
                "from": a,
                "to": b,
                "to_address": dst,
                "sent": m["sent"],
                "received": m["received"],
                "reachable": m["received"] > 0,
                "rtt_ms": m["rtt_ms"],
                "drops": death_points(results, flow["id"]),
                # Every node's ARP and L3F tables at the end of the pair's run (seed 000
                # Tables 2 and 3 are such tables).
                "tables": {
                    n["name"]: {"arp_table": n.get("arp_table", []), "l3f_table": n.get("l3f_table", [])}
                    for n in results.get("nodes", [])
                },
            }
            if len(ga) > 1 or len(gb) > 1:
                pair["from_group"], pair["to_group"] = len(ga), len(gb)
                pair["represents"] = len(ga) * (len(gb) - 1) if ga is gb else len(ga) * len(gb)
            pairs.append(pair)
            if on_pair is not None:
                on_pair(pair)
    return net, pairs


__all__ = [
    "run_tests",
    "reachability",
    "TestRun",
    "lower",
    "lower_network",
    "simulate",
    "Network",
    "Port",
    "SimulationError",
    "LocatedProblems",
    "mac_for",
    "format_mac",
]
