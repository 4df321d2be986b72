"""Tunnel stacks: what each tunnel rides on, the MTU below it, and whether it leaves room.

A tunnel's ``over`` names a link or another tunnel; the interface below has an MTU (the
link's, or the tunnel's own ``mtu`` or the default its kind computes), and the tunnel's
own headers must leave room for the least datagram IPv4 carries (RFC 791 §3.2: 68
octets). Shared by the scenario checks (a stack with no room is bad input for every
command) and the simulator's lowering.
"""

from __future__ import annotations

from typing import Any

from qoslab.scenario.model import OpenVpn, Pppoe, Pptp, Scenario, Serial, Wifi

OPENVPN_DEFAULT_MTU = 1500
"""OpenVPN's default --tun-mtu (1500) for a TAP or TUN device whose tunnel sets no ``mtu``."""

PPPOE_MAX_MTU = 1492
"""RFC 2516 §7: the MRU MUST NOT be negotiated above 1492 (1500 less PPPoE 6 and PPP 2)."""

PPPOE_OVERHEAD = 8
"""RFC 2516 §4, §7: the PPPoE header (6) and the PPP protocol field (2)."""

PPTP_OVERHEAD = 20 + 12 + 1
"""Seed 002 §3.4: the outer IPv4 header (RFC 791: 20), enhanced GRE with key and
sequence number (RFC 2637 §4.1: 4 + 4 + 4) and PPP's compressed protocol field (1, PFC
and ACFC agreed, RFC 1661 §6.5-6.6): 1430 - 33 = 1397. The acknowledgment number (4
more) rides only when an end has one to send; the seed does not count it."""

IPV4_MIN_MTU = 68
"""RFC 791 §3.2: every internet module must forward a 68-octet datagram without fragmenting it."""

WIFI_MTU = 1500
"""IP MTU over 802.11 with LLC/SNAP (RFC 1042), as the simulator lowers it."""

OPENVPN_HMAC = {"none": 0, "md5": 16, "sha1": 20, "sha256": 32, "sha512": 64}
"""HMAC lengths on the wire (OpenVPN --auth)."""


def openvpn_overhead(t: OpenVpn) -> int:
    """The most octets OpenVPN's data channel adds to a payload (P_DATA_V2).

    Opcode and peer id 4, then for GCM the packet id 4 and tag 16; otherwise the HMAC,
    the CBC IV and a whole block of padding at most, and the packet id with ``replay``;
    4 more for the ``--fragment`` header (wire::openvpn::DataChannel::overhead_fields).
    Seed 002 §3.2's 24 octets with ``cipher none`` and SHA1:

    >>> from qoslab.scenario.model import OpenVpn
    >>> openvpn_overhead(OpenVpn(type="openvpn", name="o", **{"from": "a"}, to="b"))
    24
    """
    total = 4 + (4 if t.fragment else 0)
    if t.cipher.endswith("-gcm"):
        return total + 4 + 16
    block = {"bf-cbc": 8, "aes-128-cbc": 16, "aes-256-cbc": 16}.get(t.cipher, 0)
    return total + OPENVPN_HMAC[t.auth] + (4 if t.replay else 0) + 2 * block


def below(sc: Scenario, t: Any) -> tuple[str, int] | None:
    """What ``over`` names: ("tunnel", index) or ("link", index); None when absent or unknown."""
    if t.over is None:
        return None
    for j, u in enumerate(sc.tunnel):
        if u.name == t.over:
            return ("tunnel", j)
    for j in range(len(sc.link)):
        if sc.link_name(j) == t.over or f"link[{j}]" == t.over:
            return ("link", j)
    return None


def link_mtu(link: Any) -> int:
    """A link's IP MTU as the simulator gives its ports."""
    if isinstance(link, Wifi):
        return WIFI_MTU
    if isinstance(link, Serial):
        return link.mtu or (1500 if link.framing == "ppp" else 1006)
    return int(link.mtu)


def interface_mtu(sc: Scenario, what: tuple[str, int] | None, depth: int = 0) -> int | None:
    """The MTU of the interface ``what`` (a link, or a tunnel's), when it can be told."""
    if what is None or depth > len(sc.tunnel):
        return None
    kind, j = what
    if kind == "link":
        return link_mtu(sc.link[j])
    u = sc.tunnel[j]
    if isinstance(u, OpenVpn):
        return u.mtu or OPENVPN_DEFAULT_MTU
    if isinstance(u, Pppoe):
        under = interface_mtu(sc, below(sc, u), depth + 1)
        return u.mtu or (min(PPPOE_MAX_MTU, under - PPPOE_OVERHEAD) if under else PPPOE_MAX_MTU)
    if isinstance(u, Pptp):
        under = interface_mtu(sc, below(sc, u), depth + 1)
        return u.mtu or (under or 1500) - PPTP_OVERHEAD
    return u.mtu


def room_problems(sc: Scenario) -> list[tuple[tuple[Any, ...], str, str, str]]:
    """OpenVPN and PPPoE tunnels whose interface below leaves no room for a 68-octet
    datagram, and PPPoE MTUs above 1492: (key path, message, expected, found)."""
    found: list[tuple[tuple[Any, ...], str, str, str]] = []
    for i, t in enumerate(sc.tunnel):
        base = ("tunnel", i)
        under = interface_mtu(sc, below(sc, t))
        if isinstance(t, OpenVpn):
            inner = 14 if t.dev == "tap" else 0
            overhead = openvpn_overhead(t)
            # Over TCP the stream is cut into segments whatever the packet size: no room test.
            if t.proto == "udp" and under is not None and under - 20 - 8 - overhead - inner < IPV4_MIN_MTU:
                need = IPV4_MIN_MTU + 20 + 8 + overhead + inner
                tap = " + Ethernet 14" if inner else ""
                found.append(
                    (
                        base + ("over",),
                        "the interface below leaves no room for a 68-byte datagram (RFC 791 §3.2) inside OpenVPN",
                        f"an MTU below of at least {need} (IPv4 20 + UDP 8 + OpenVPN {overhead}{tap} + 68)",
                        f"{t.over!r} with MTU {under}",
                    )
                )
            if t.fragment is not None and int(t.fragment) - overhead < 4:
                found.append(
                    (
                        base + ("fragment",),
                        "--fragment leaves no room for data after the data channel's own bytes",
                        f"at least {overhead + 4} (OpenVPN {overhead} + 4)",
                        str(int(t.fragment)),
                    )
                )
        elif isinstance(t, Pppoe):
            if t.mtu is not None and t.mtu > PPPOE_MAX_MTU:
                found.append(
                    (
                        base + ("mtu",),
                        "a PPPoE MTU above 1492 (RFC 2516 §7: the MRU MUST NOT be negotiated larger)",
                        "68 to 1492",
                        str(t.mtu),
                    )
                )
            if under is not None and under - PPPOE_OVERHEAD < IPV4_MIN_MTU:
                found.append(
                    (
                        base + ("over",),
                        "the interface below leaves no room for a 68-byte datagram (RFC 791 §3.2) inside PPPoE",
                        f"an MTU below of at least {IPV4_MIN_MTU + PPPOE_OVERHEAD} (PPPoE 6 + PPP 2 + 68)",
                        f"{t.over!r} with MTU {under}",
                    )
                )
    return found


__all__ = [
    "openvpn_overhead",
    "below",
    "link_mtu",
    "interface_mtu",
    "room_problems",
    "OPENVPN_DEFAULT_MTU",
    "PPPOE_MAX_MTU",
    "PPPOE_OVERHEAD",
    "PPTP_OVERHEAD",
    "IPV4_MIN_MTU",
]
