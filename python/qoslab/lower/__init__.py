"""The lowering: a scenario made into the network plan every backend runs.

:func:`lower` turns a :class:`~qoslab.scenario.Scenario` into a plan (``SimConfig``, the
type of crates/plan; its JSON Schema is schema/plan.schema.json and its Python models
:mod:`qoslab.plan.models`), built as those models; :mod:`qoslab.backends.sim` runs one
(:func:`~qoslab.lower.lowered._encode` writes the JSON the core reads, :func:`plan_json`
gives it as a document).

Modules, along the seams of the plan: :mod:`~qoslab.lower.common` (units, the MAC rule,
ports, problems), :mod:`~qoslab.lower.refusals`, :mod:`~qoslab.lower.nodes`,
:mod:`~qoslab.lower.links`, :mod:`~qoslab.lower.flows`, the tunnel families
(:mod:`~qoslab.lower.ipsec`, :mod:`~qoslab.lower.vpn` for OpenVPN and PPPoE,
:mod:`~qoslab.lower.pptp`), :mod:`~qoslab.lower.atm`, and :mod:`~qoslab.lower.network`,
which puts them together.

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
    order. ATM links go to :mod:`qoslab.lower.atm`. What the simulator does not model yet (GRE tunnels, MPPE,
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

from qoslab.lower.common import LocatedProblems, Port, format_mac, mac_for
from qoslab.lower.flows import background_flows
from qoslab.lower.lowered import Network, RunConfig, plan_json
from qoslab.lower.network import lower, lower_network, planned_config

__all__ = [
    "LocatedProblems",
    "Network",
    "Port",
    "RunConfig",
    "background_flows",
    "format_mac",
    "lower",
    "lower_network",
    "mac_for",
    "plan_json",
    "planned_config",
]
