"""The bottleneck of a test's path: the lowest frame rate any link on it carries for a
test frame of a given size (docs/metrics.md#bottleneck).

RFC 2544's binary search needs a scale for its resolution: a fraction of the sender's
line rate is ±7-14 % of an 802.11b link behind a 100 Mb/s Ethernet. This module gives the
scale from the path's links instead. The path is the shortest chain of links (fewest
hops) between the test's two nodes in the scenario; tunnels are not followed (a path
through one counts its carrying links). Each link's rate is computed for one frame of
``frame_size`` bytes (Ethernet header through FCS, RFC 2544 §9.1), i.e. an IPv4 packet
of ``frame_size - 18`` bytes:

- Ethernet: ``rate / ((S + 20) × 8)``, with the 8-byte preamble and SFD and the 12-byte
  inter-frame gap (IEEE 802.3 §4.4.2);
- 802.11: one frame per DCF cycle of a lone sender without collisions: DIFS, the mean
  first backoff (CWmin/2 slots), the data PPDU, SIFS and the Ack (and, with ERP
  protection, a CTS-to-self and SIFS first); the standard's timing cited below;
- serial: the line's character bits for the packet and its SLIP (RFC 1055: two ENDs) or
  PPP (RFC 1662: flag, address, control, protocol, FCS-16, flag: 8 octets) framing,
  escapes not counted; times the modem compression ratio when one is set;
- ATM: 53-octet cells at the cell rate, the packet in an AAL5 CPCS-PDU with RFC 2684
  LLC/SNAP (8 octets) and the AAL5 trailer (8 octets), padded to 48-octet cell payloads.

These are the links' limits for a frame stream, not what every device on the path
forwards (a CPU may be slower): the search still finds the rate, the resolution is only
relative to this scale.
"""

from __future__ import annotations

import math
from collections import deque
from typing import TYPE_CHECKING

from qoslab.scenario.link_tables import Atm, Ethernet, Link, Serial, Wifi

if TYPE_CHECKING:
    from qoslab.backends.sim import Network

ETHERNET_HEADER_FCS = 18
"""IEEE 802.3 §3.1.1: 14-byte header and 4-byte FCS."""
PREAMBLE_AND_GAP = 20
"""IEEE 802.3 §4.4.2: 7-byte preamble + SFD, and the 96-bit (12-byte) inter-frame gap."""

# IEEE 802.11-2020 Table 15-2/16-4 (DSSS, HR/DSSS) and Table 18-5/19-8 (ERP).
SIFS_US = 10
"""aSIFSTime in the 2.4 GHz band (DSSS, HR/DSSS, ERP)."""
LONG_SLOT_US, SHORT_SLOT_US = 20, 9
"""aSlotTime: 20 µs (DSSS, HR/DSSS, ERP with non-ERP stations), 9 µs (ERP only)."""
CW_MIN_DSSS, CW_MIN_OFDM = 31, 15
"""aCWmin of DSSS/HR-DSSS and of an ERP-only BSS."""
PLCP_LONG_US, PLCP_SHORT_US = 192, 96
"""PLCP preamble and header of DSSS/HR-DSSS (§16.2.2, §16.2.3): long 144 + 48 µs, short 72 + 24 µs."""
OFDM_PREAMBLE_US, OFDM_SYMBOL_US, OFDM_SIGNAL_EXTENSION_US = 20, 4, 6
"""ERP-OFDM PPDU (§18.3.2.4, §19.3.2.4): 16 µs preamble + 4 µs SIGNAL, 4 µs symbols, 6 µs signal extension."""
OFDM_SERVICE_TAIL_BITS = 16 + 6
"""SERVICE field and tail bits of an OFDM PSDU (§17.3.5.2)."""
ACK_BYTES = CTS_BYTES = 14
"""Ack and CTS frames: 14 octets with FCS (§9.3.1.3, §9.3.1.2)."""
MAC_HEADER, LLC_SNAP, FCS = 24, 8, 4
"""A data MPDU: 24-octet header (three addresses), RFC 1042 LLC/SNAP, 4-octet FCS."""
SECURITY_BYTES = {"open": 0, "wep-40": 8, "wep-104": 8, "tkip": 20, "ccmp": 16}
"""Octets security adds to an MPDU: WEP IV + ICV (§12.3.2.2), TKIP IV/Ext IV + MIC + ICV (§12.5.2.2), CCMP header + MIC (§12.5.3.2)."""
DSSS_RATES = (1.0, 2.0, 5.5, 11.0)
BASIC_DSSS = {"802.11": (1.0, 2.0), "802.11b": (1.0, 2.0), "802.11g": (1.0, 2.0, 5.5, 11.0)}
"""BSSBasicRateSet, DSSS/CCK part: 1 and 2 Mb/s (an 802.11b AP's usual default); 802.11g mixed mode adds 5.5 and 11."""
BASIC_OFDM = (6.0, 12.0, 24.0)
"""BSSBasicRateSet, OFDM part of an 802.11g BSS (the mandatory rates)."""

SLIP_FRAMING = 2
"""RFC 1055: an END character before and after each packet."""
PPP_FRAMING = 8
"""RFC 1662 §3.1: flag, address, control, 2-octet protocol (RFC 1661), FCS-16, flag."""
AAL5_TRAILER, LLC_SNAP_ATM, CELL_PAYLOAD, CELL = 8, 8, 48, 53
"""ITU-T I.363.5 AAL5 trailer; RFC 2684 §5 LLC/SNAP; an ATM cell's payload and size."""


def _ppdu_us(nbytes: int, rate_mbps: float, preamble: str) -> float:
    if rate_mbps in DSSS_RATES:
        plcp = PLCP_SHORT_US if preamble == "short" and rate_mbps != 1.0 else PLCP_LONG_US
        return plcp + math.ceil(nbytes * 8 / rate_mbps)
    symbols = math.ceil((OFDM_SERVICE_TAIL_BITS + 8 * nbytes) / (rate_mbps * OFDM_SYMBOL_US))
    return OFDM_PREAMBLE_US + OFDM_SYMBOL_US * symbols + OFDM_SIGNAL_EXTENSION_US


def wifi_frame_us(link: Wifi, ip_bytes: int) -> float:
    """The DCF cycle of one data frame carrying ``ip_bytes`` of IPv4 packet, from a lone
    sender with nothing to collide with (IEEE 802.11-2020 §10.3.2.3, §10.3.4)."""
    from qoslab.scenario.model import WIFI_RATES_MBPS

    rate = link.rate / 1e6 if link.rate is not None else max(WIFI_RATES_MBPS[link.standard])
    ofdm = rate not in DSSS_RATES
    protected = ofdm and link.erp_protection
    slot = SHORT_SLOT_US if link.standard == "802.11g" and not link.erp_protection else LONG_SLOT_US
    cw_min = CW_MIN_OFDM if link.standard == "802.11g" and not link.erp_protection else CW_MIN_DSSS
    difs = SIFS_US + 2 * slot  # §10.3.2.3.5
    basic = BASIC_OFDM if ofdm else BASIC_DSSS[link.standard]
    ack_rate = max((r for r in basic if r <= rate), default=min(basic))  # §10.6.6.5
    mpdu = MAC_HEADER + LLC_SNAP + ip_bytes + SECURITY_BYTES.get(link.security, 0) + FCS
    cycle = (
        difs
        + cw_min / 2 * slot
        + _ppdu_us(mpdu, rate, link.preamble)
        + SIFS_US
        + _ppdu_us(ACK_BYTES, ack_rate, link.preamble)
    )
    if protected:  # §10.26.2: a CTS-to-self at the highest DSSS basic rate, then SIFS
        cycle += _ppdu_us(CTS_BYTES, max(BASIC_DSSS[link.standard]), link.preamble) + SIFS_US
    return cycle


def link_fps(link: Link, frame_size: int) -> float | None:
    """Frames per second ``link`` carries of ``frame_size``-byte test frames; None for a
    kind this module does not know."""
    ip_bytes = frame_size - ETHERNET_HEADER_FCS
    if isinstance(link, Ethernet):
        return link.rate / ((frame_size + PREAMBLE_AND_GAP) * 8)
    if isinstance(link, Wifi):
        return 1e6 / wifi_frame_us(link, ip_bytes)
    if isinstance(link, Serial):
        from qoslab import _core

        if link.clocking == "sync":
            # RFC 1662 §5: 8 bits an octet of flags and frame, no start/stop bits; the
            # zero bits inserted (data-dependent) are left out of this scale.
            octets = ip_bytes + PPP_FRAMING - 2 * link.acfc - link.pfc + (link.fcs - 16) // 8
            return link.rate / (octets * 8)
        framing = PPP_FRAMING if link.framing == "ppp" else SLIP_FRAMING
        return link.rate * (link.compression or 1.0) / _core.serial_line_bits(link.format, ip_bytes + framing)
    if isinstance(link, Atm):
        cells = math.ceil((ip_bytes + LLC_SNAP_ATM + AAL5_TRAILER) / CELL_PAYLOAD)
        return link.cell_rate / (cells * CELL * 8)
    return None


def path_links(net: Network, src: str, dst: str) -> list[int]:
    """Indices (in ``scenario.link``) of the links on the fewest-hop chain from node
    ``src`` to node ``dst``; empty if no chain of links joins them."""
    from qoslab.backends.sim import _members

    links = net.scenario.link
    by_node: dict[str, list[int]] = {}
    for i, link in enumerate(links):
        for name in _members(link):
            by_node.setdefault(name, []).append(i)
    came: dict[str, tuple[str, int] | None] = {src: None}
    todo = deque([src])
    while todo:
        node = todo.popleft()
        if node == dst:
            break
        for i in by_node.get(node, []):
            for other in _members(links[i]):
                if other not in came:
                    came[other] = (node, i)
                    todo.append(other)
    if dst not in came:
        return []
    out = []
    node = dst
    while came[node] is not None:
        prev, i = came[node]  # type: ignore[misc]
        out.append(i)
        node = prev
    return out[::-1]


def bottleneck_fps(net: Network, src: str, dst: str, frame_size: int) -> tuple[float, str] | None:
    """(frames per second, link name) of the slowest link on the path for
    ``frame_size``-byte frames; None when the path or its links' rates are unknown."""
    best: tuple[float, str] | None = None
    for i in path_links(net, src, dst):
        link = net.scenario.link[i]
        fps = link_fps(link, frame_size)
        if fps is not None and (best is None or fps < best[0]):
            best = (fps, link.name or f"link[{i}]")
    return best


__all__ = ["bottleneck_fps", "link_fps", "path_links", "wifi_frame_us"]
