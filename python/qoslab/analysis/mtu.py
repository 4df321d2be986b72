"""MTU analysis of a layer stack, from real bytes.

Every number here comes from encoding real frames with the Rust wire crate
(``qoslab._core.wrap``): a layer's overhead is the length its encoding adds, padding and
escapes included, and an interface's MTU is found by searching for the largest packet
whose encapsulation still fits every interface outside it.

Definitions used throughout:

* An **interface** is where a network packet (or, for Ethernet, a frame) is handed to a
  link: the physical NIC, a TAP or TUN device, a PPP interface, an IPsec tunnel
  interface. Its **MTU** is the largest packet it accepts. The outermost interface takes
  its standard's value (Ethernet 1500, SLIP 1006, CLIP 9180 ...); an interface inside a
  tunnel takes the largest size that fits, unless the stack sets ``mtu=``.
* ``tcp_mss`` and ``udp_max_payload`` are the largest TCP segment payload and UDP payload
  that cross the whole path without fragmentation anywhere.
* **Wire bytes** are what the outermost link transmits: for Ethernet the frame with FCS,
  padding to 64 bytes, preamble and SFD and the 12-byte inter-frame gap (IEEE 802.3
  §4.4.2); for ATM whole 53-byte cells; for a serial line the characters, and the line
  bits with start, parity and stop bits.
"""

from __future__ import annotations

import builtins
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from qoslab import _core
from qoslab.analysis.stack import BY_NAME, Layer, Role, parse_stack
from qoslab.errors import InputError, Problem

# IEEE 802.3 §3.2.2, §3.2.3 and §4.4.2: 7 bytes preamble, 1 byte SFD, 96 bit times IFG.
ETHERNET_PREAMBLE_SFD = 8
ETHERNET_IFG = 12
ETHERNET_FCS = 4

# Addresses for the synthetic packets, one pair per IPv4 layer: RFC 5737 documentation
# ranges, so nothing here can be mistaken for a real host.
# 192.0.2.0/24 comes last: its first byte is 0xC0, SLIP's END, and would add escapes
# to every SLIP frame that no real path of the seeds had.
_ADDRESS_PAIRS = [
    ("198.51.100.1", "198.51.100.2"),
    ("203.0.113.1", "203.0.113.2"),
    ("192.0.2.1", "192.0.2.2"),
]

EFFICIENCY_SIZES = (64, 256, 512, 1024)

# Outermost layers whose frames a pcap can hold (LINKTYPE_ETHERNET, LINKTYPE_IEEE802_11).
PCAP_LINKS = ("ethernet", "wifi")

_INTERFACE_PREFIX = {
    "ethernet": "eth",
    "wifi": "wlan",
    "slip": "sl",
    "cslip": "sl",
    "ppp": "ppp",
    "pppoe": "ppp",
    "llc-snap": "atm",
    "vc-mux": "atm",
    "openvpn": "tun",
    "gre": "gre",
    "esp": "ipsec",
    "ah": "ipsec",
}


@dataclass
class LayerCost:
    """What one layer adds to a full-size packet."""

    name: str
    label: str
    overhead_bytes: int
    fields: list[tuple[str, int]]
    note: str | None = None

    def to_json(self) -> dict[str, Any]:
        record: dict[str, Any] = {
            "name": self.name,
            "label": self.label,
            "overhead_bytes": self.overhead_bytes,
            "fields": [{"name": n, "bytes": b} for n, b in self.fields],
        }
        if self.note:
            record["note"] = self.note
        return record


@dataclass
class Interface:
    """An interface of the stack and its MTU."""

    name: str
    layer: str
    index: int
    mtu: int
    fits: int  # the largest packet that fits every interface outside this one
    source: str  # where the MTU comes from

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "layer": self.layer,
            "mtu": self.mtu,
            "largest_fitting": self.fits,
            "source": self.source,
        }


@dataclass
class WireCost:
    """The cost on the outermost link of carrying some bytes."""

    bytes: int  # size at the innermost IP layer (or the payload, for efficiency rows)
    wire_bytes: int
    wire_bits: int
    fragments: int
    cells: int | None
    dropped: str | None = None
    frames: list[builtins.bytes] = field(default_factory=list, repr=False)  # `bytes` is a field here
    # A synchronous line's bits if every data bit were a one (most zero bits inserted).
    wire_bits_max: int | None = None

    def to_json(self) -> dict[str, Any]:
        record: dict[str, Any] = {
            "bytes": self.bytes,
            "wire_bytes": self.wire_bytes,
            "wire_bits": self.wire_bits,
            "fragments": self.fragments,
            "cells": self.cells,
        }
        if self.wire_bits_max is not None:
            record["wire_bits_max"] = self.wire_bits_max
        if self.dropped:
            record["dropped"] = self.dropped
        return record


@dataclass
class MtuReport:
    """The result of :func:`analyse`."""

    stack: str
    layers: list[LayerCost]
    interfaces: list[Interface]
    mtu: int
    tcp_mss: int
    udp_max_payload: int
    efficiency: list[dict[str, Any]]
    count_fcs: bool
    notes: list[str]
    datagram: WireCost | None = None
    datagram_bytes: bytes | None = None
    physical: str = ""

    def to_json(self) -> dict[str, Any]:
        record: dict[str, Any] = {
            "stack": self.stack,
            "layers": [layer.to_json() for layer in self.layers],
            "interfaces": [i.to_json() for i in self.interfaces],
            "mtu": self.mtu,
            "tcp_mss": self.tcp_mss,
            "udp_max_payload": self.udp_max_payload,
            "efficiency": self.efficiency,
            "count_fcs": self.count_fcs,
            "notes": self.notes,
        }
        if self.datagram is not None:
            record["datagram"] = self.datagram.to_json()
            assert self.datagram_bytes is not None
            record["datagram"]["ip_hex"] = self.datagram_bytes.hex()
        return record


class _Path:
    """A parsed stack with each layer's encoding context resolved."""

    def __init__(self, layers: list[Layer], count_fcs: bool):
        self.layers = layers
        self.count_fcs = count_fcs
        self.contexts = [self._context(i) for i in range(len(layers))]

    def _context(self, i: int) -> dict[str, Any]:
        layer = self.layers[i]
        outer = self.layers[i - 1].name if i > 0 else None
        ctx: dict[str, Any] = {"outer": outer or ""}
        options = dict(layer.options)
        if layer.name == "ethernet":
            physical = i == 0
            fcs = layer.option("fcs")
            ctx["fcs"] = (fcs == "yes") if fcs else (physical or self.count_fcs)
            ctx["pad"] = physical
        elif layer.name == "ppp":
            ctx["hdlc"] = outer == "serial"
            default = "no" if outer in ("serial", "sync") else "yes"  # PPTP as seed 002 counts it: 1 byte
            ctx["pfc"] = (layer.option("pfc") or default) == "yes"
            ctx["acfc"] = (layer.option("acfc") or default) == "yes"
            ctx["accm"] = int(str(layer.option("accm")), 16)
        elif layer.name in ("ipv4", "udp", "tcp", "icmp", "esp", "ah"):
            ip_index = i if layer.name == "ipv4" else self._enclosing_ipv4(i)
            pair = sum(1 for x in self.layers[: ip_index + 1] if x.name == "ipv4") - 1
            ctx["src"], ctx["dst"] = _ADDRESS_PAIRS[pair % len(_ADDRESS_PAIRS)]
        static_key = layer.name == "openvpn" and options.get("key") == "static"
        for spec in layer.spec.options:
            # A static key sends no opcode: no default one (one given is refused by the encoder).
            if spec.name not in options and spec.default is not None and not (static_key and spec.name == "opcode"):
                options[spec.name] = spec.default
        ctx["options"] = {k: str(v) for k, v in options.items()}
        return ctx

    def _enclosing_ipv4(self, i: int) -> int:
        for j in range(i - 1, -1, -1):
            if self.layers[j].name == "ipv4":
                return j
        return 0

    def wrap(self, i: int, payload: bytes) -> tuple[bytes, list[tuple[str, int]]]:
        """Encodes layer ``i`` around ``payload`` (the encoding of layer i+1 and inward)."""
        return _core.wrap(self.layers[i].name, self.contexts[i]["options"], self.neighbours(i), payload)

    def neighbours(self, i: int) -> dict[str, Any]:
        """Layer ``i``'s context with what it carries: the inner layer and its options."""
        if i + 1 < len(self.layers):
            return {
                **self.contexts[i],
                "inner": self.layers[i + 1].name,
                "inner_options": self.contexts[i + 1]["options"],
            }
        return {**self.contexts[i], "inner": ""}


def _is_interface(layers: list[Layer], i: int) -> bool:
    layer = layers[i]
    nxt = layers[i + 1].name if i + 1 < len(layers) else None
    if layer.spec.role == Role.LINK:
        return nxt in (None, "ipv4") or layer.name in ("ethernet", "wifi")
    if layer.spec.role == Role.TUNNEL:
        return nxt == "ipv4"
    return False


def _is_aead(layer: Layer) -> bool:
    return str(layer.option("cipher")).endswith("gcm")


def _carries_transport(layer: Layer) -> bool:
    """Whether ``layer`` carries UDP or TCP directly: IPv4, or IPsec in transport mode."""
    return layer.name == "ipv4" or (layer.name in ("esp", "ah") and layer.option("mode") == "transport")


def _complete(layers: list[Layer], transport: str) -> list[Layer]:
    """The stack with its innermost transport replaced by ``transport``, completing a
    stack that ends in a link or tunnel with the IPv4 it would carry."""
    core = list(layers)
    if core[-1].spec.role == Role.TRANSPORT:
        core = core[:-1]
    last = core[-1]
    if _carries_transport(last):
        pass
    elif last.name != "ipv4":
        if "ipv4" in last.spec.carries:
            core.append(Layer(BY_NAME["ipv4"], token="ipv4"))
        elif "ppp" in last.spec.carries:
            core += [Layer(BY_NAME["ppp"], token="ppp"), Layer(BY_NAME["ipv4"], token="ipv4")]
        elif "aal5" in last.spec.carries:
            core += [Layer(BY_NAME[n], token=n) for n in ("aal5", "llc-snap", "ipv4")]
        elif "llc-snap" in last.spec.carries:
            core += [Layer(BY_NAME[n], token=n) for n in ("llc-snap", "ipv4")]
        elif "slip" in last.spec.carries:
            core += [Layer(BY_NAME[n], token=n) for n in ("slip", "ipv4")]
    core.append(Layer(BY_NAME[transport], token=transport))
    return core


class _Analysis:
    def __init__(self, layers: list[Layer], count_fcs: bool):
        self.layers = layers
        self.count_fcs = count_fcs
        self.path = _Path(layers, count_fcs)
        self.interface_indices = [i for i in range(len(layers)) if _is_interface(layers, i)]
        self.mtus: dict[int, int] = {}
        self.interfaces: list[Interface] = []
        counters: dict[str, int] = {}
        for k in self.interface_indices:
            layer = layers[k]
            prefix = _INTERFACE_PREFIX.get(layer.name, layer.name)
            if layer.name == "ethernet" and k > 0:
                prefix = (
                    "tap"
                    if any(x.name == "openvpn" for x in layers[:k])
                    else ("elan" if layers[k - 1].name == "lane" else "eth")
                )
            name = f"{prefix}{counters.get(prefix, 0)}"
            counters[prefix] = counters.get(prefix, 0) + 1
            outer = [j for j in self.interface_indices if j < k]
            configured = layer.options.get("mtu")
            if not outer:
                fits = int(configured or layer.spec.default_mtu or 1500)
                mtu, source = fits, ("configured" if configured else (layer.spec.mtu_source or "default"))
            else:
                fits = self._largest_fitting(k)
                cap = layer.spec.max_mtu
                if configured:
                    mtu, source = int(configured), "configured"
                elif cap is not None and fits > cap:
                    mtu, source = cap, f"the layer's maximum ({layer.spec.mtu_source})"
                else:
                    mtu, source = fits, "largest that fits the interfaces outside it"
            self.mtus[k] = mtu
            self.interfaces.append(Interface(name, layer.name, k, mtu, fits, source))

    # -- encoding -------------------------------------------------------------------

    def encode_outward(self, path: _Path, start: int, payload: bytes) -> list[int]:
        """Wraps ``payload`` from layer ``start`` outward, no fragmentation; returns the
        input length at every layer index (the bytes handed to that layer)."""
        inputs = [0] * (start + 1)
        data = payload
        for i in range(start, -1, -1):
            inputs[i] = len(data)
            data, _ = path.wrap(i, data)
        return inputs

    def fits(self, path: _Path, start: int, payload: bytes, upto: int | None = None) -> bool:
        try:
            inputs = self.encode_outward(path, start, payload)
        except ValueError:
            # A layer refused to encode a payload this large (AAL5 carries at most
            # 65,535 octets, ITU-T I.363.5; IPv4 at most 65,535 in all, RFC 791): the
            # packet does not fit. The searches probe sizes above every limit.
            return False
        for k, mtu in self.mtus.items():
            if k <= start and (upto is None or k < upto) and inputs[k] > mtu:
                return False
        return True

    def _largest_fitting(self, k: int) -> int:
        """The largest packet handed to interface ``k`` whose encapsulation fits every
        interface outside it (binary search; the encodings grow monotonically)."""
        outer_mtu = max(self.mtus[j] for j in self.mtus if j < k)
        lo, hi = 0, outer_mtu
        if not self.fits(self.path, k, bytes(lo), upto=k):
            return 0
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if self.fits(self.path, k, bytes(mid), upto=k):
                lo = mid
            else:
                hi = mid - 1
        return lo

    def largest_payload(self, transport: str) -> int:
        """The largest application payload over ``transport`` that crosses the path
        without fragmentation."""
        layers = _complete(self.layers, transport)
        path = _Path(layers, self.count_fcs)
        top = len(layers) - 1
        hi = max(self.mtus.values())
        if not self.fits(path, top, b""):
            return 0
        lo = 0
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if self.fits(path, top, bytes(mid)):
                lo = mid
            else:
                hi = mid - 1
        return lo

    # -- transmission with fragmentation ------------------------------------------

    def transmit(self, path: _Path, start: int, payload: bytes) -> tuple[list[bytes], str | None]:
        """Carries ``payload`` (the encoding of layer ``start + 1`` inward) out through
        every layer, fragmenting IPv4 where a packet exceeds the interface carrying it
        and OpenVPN payloads where its ``fragment`` option says; returns the frames of the
        outermost layer and why anything was dropped."""
        units = [payload]
        dropped = None
        for i in range(start, -1, -1):
            layer = path.layers[i]
            if i in self.mtus:
                mtu = self.mtus[i]
                inner = path.layers[i + 1].name if i + 1 < len(path.layers) else "data"
                if inner == "ipv4":
                    # RFC 791 §3.2: the IPv4 layer cuts a datagram too big for the
                    # interface that carries it (our datagrams never set DF).
                    units = [f for u in units for f in (_core.ipv4_fragment(u, mtu) if len(u) > mtu else [u])]
                else:
                    too_big = [u for u in units if len(u) > mtu]
                    if too_big:
                        dropped = (
                            f"a {len(too_big[0])}-byte {inner} frame exceeds the {mtu}-byte MTU of the "
                            f"{layer.name} interface, and {inner} cannot be fragmented there"
                        )
                        units = [u for u in units if len(u) <= mtu]
            if layer.name == "openvpn" and layer.options.get("fragment"):
                # OpenVPN's --fragment: split the payload so that no UDP payload exceeds the
                # limit; each piece is a whole OpenVPN packet with its fragment header.
                units = [
                    w for u in units for w in _core.openvpn_fragment(path.contexts[i]["options"], path.neighbours(i), u)
                ]
                continue
            units = [path.wrap(i, u)[0] for u in units]
        return units, dropped

    def wire_cost(self, frames: list[bytes], size: int, dropped: str | None) -> WireCost:
        outermost = self.layers[0]
        frame_bytes = sum(len(f) for f in frames)
        if outermost.name == "ethernet":
            wire_bytes = frame_bytes + len(frames) * (ETHERNET_PREAMBLE_SFD + ETHERNET_IFG)
            return WireCost(size, wire_bytes, wire_bytes * 8, len(frames), None, dropped, frames)
        if outermost.name == "atm":
            cells = frame_bytes // 53
            return WireCost(size, frame_bytes, frame_bytes * 8, len(frames), cells, dropped, frames)
        if outermost.name == "serial":
            bits = _core.serial_line_bits(str(self.path.contexts[0]["options"].get("format", "8n1")), frame_bytes)
            return WireCost(size, frame_bytes, bits, len(frames), None, dropped, frames)
        if outermost.name == "sync":
            # RFC 1662 §5.2: the zero bits inserted depend on the octets; these frames'
            # (their data is zeros, so few are inserted: the typical case for headers
            # and text), and the worst case, one after every five bits of all-ones data.
            counts = [_core.sync_line_bits(f) for f in frames]
            bits, worst = sum(c[0] for c in counts), sum(c[1] for c in counts)
            return WireCost(size, frame_bytes, bits, len(frames), None, dropped, frames, wire_bits_max=worst)
        return WireCost(size, frame_bytes, frame_bytes * 8, len(frames), None, dropped, frames)

    def cost_of_payload(self, transport: str, payload_len: int) -> WireCost:
        layers = _complete(self.layers, transport)
        path = _Path(layers, self.count_fcs)
        frames, dropped = self.transmit(path, len(layers) - 1, bytes(payload_len))
        return self.wire_cost(frames, payload_len, dropped)


def _datagram_of_size(analysis: _Analysis, size: int) -> tuple[_Path, int, bytes]:
    """A datagram of ``size`` bytes at the innermost IPv4 layer, carrying the stack's
    transport (UDP if it names none) with as much data as fits: a bare header when
    ``size`` leaves no room for data. Where padding (ESP) makes ``size`` unreachable,
    the largest datagram below it. Returns the path, the IPv4 layer's index and the
    datagram's bytes."""
    transport = analysis.layers[-1].name if analysis.layers[-1].spec.role == Role.TRANSPORT else "udp"
    layers = _complete(analysis.layers, transport)
    path = _Path(layers, analysis.count_fcs)
    ip_index = max(i for i, layer in enumerate(layers) if layer.name == "ipv4")

    def datagram(data_len: int) -> bytes:
        data = bytes(data_len)
        for i in range(len(layers) - 1, ip_index - 1, -1):
            data, _ = path.wrap(i, data)
        return data

    smallest = datagram(0)
    if len(smallest) > size:
        from qoslab.errors import InputError, Problem

        raise InputError(
            "--size",
            [
                Problem(
                    "datagram too small for its headers",
                    key="--size",
                    expected=f"at least {len(smallest)} bytes (the headers of {'/'.join(layer.name for layer in layers[ip_index:])})",
                    found=str(size),
                )
            ],
        )

    def fits(data_len: int) -> bool:
        try:
            return len(datagram(data_len)) <= size
        except ValueError:
            # A layer's length field cannot say it (RFC 791 §3.1: 65,535 bytes): too big.
            return False

    lo, hi = 0, size
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if fits(mid):
            lo = mid
        else:
            hi = mid - 1
    return path, ip_index, datagram(lo)


IPV4_MIN_MTU = 68
"""RFC 791 §3.2: every internet module must forward a 68-octet datagram unfragmented."""
IPV4_MAX_TOTAL_LENGTH = 65_535
"""RFC 791 §3.1: Total Length, 16 bits, of the whole datagram."""


def _refused(what: str, message: str, *, key: str, expected: str, found: str) -> InputError:
    return InputError(what, [Problem(message, key=key, expected=expected, found=found)])


def _notes(analysis: _Analysis, layers: list[Layer], count_fcs: bool) -> list[str]:
    """What the reader of the analysis should know: MTUs configured above what fits,
    OpenVPN's packet ID, the FCS inside tunnels, a synchronous line's zero bits."""
    notes: list[str] = []
    for iface in analysis.interfaces:
        if iface.mtu > iface.fits and iface.source == "configured" and iface is not analysis.interfaces[0]:
            notes.append(
                f"{iface.name}: the configured MTU {iface.mtu} exceeds the {iface.fits} bytes that fit; "
                "full-size packets are fragmented outside it (or dropped where nothing can fragment them)."
            )
    for layer in layers:
        if layer.name == "openvpn" and layer.option("replay") == "no" and not _is_aead(layer):
            # A static key's packet ID is the long form: 4-byte id and 4-byte time (packet_id.h).
            size = 8 if layer.option("key") == "static" else 4
            notes.append(
                f"openvpn: no {size}-byte packet ID is counted (replay=no), as seed 002 counts it; OpenVPN sends one by "
                f"default for replay protection, so with OpenVPN's defaults (replay=yes) each MTU inside is {size} bytes smaller."
            )
    inner_eth = [i for i in analysis.interfaces if i.layer == "ethernet" and i.index > 0]
    if inner_eth:
        if count_fcs:
            notes.append(
                "FCS counted: every Ethernet frame inside a tunnel is counted with a 4-byte FCS, as seed 002 does; "
                "TAP devices carry no FCS, so each such MTU is 4 bytes larger without --count-fcs."
            )
        else:
            notes.append(
                "Precise accounting: Ethernet frames inside a tunnel (TAP) carry no FCS. Seed 002 counts one; "
                "--count-fcs gives that accounting, with each such MTU 4 bytes smaller."
            )
    if layers[0].name == "sync":
        notes.append(
            "Synchronous line (RFC 1662 §5): wire bits are 8 per octet (flags, address, control, protocol, FCS, data) plus the "
            "zero bits inserted into these frames, whose data is zeros (few insertions, the typical case for headers and text); "
            "data of all ones would insert one zero per five bits, wire_bits_max in --json."
        )
    return notes


def _layer_costs(layers: list[Layer], transport: str, payload_len: int, count_fcs: bool) -> list[LayerCost]:
    """Each layer's overhead on a packet of ``payload_len`` bytes of ``transport``, with
    the layers the stack was completed with and Ethernet's preamble and gap."""
    full = _complete(layers, transport)
    full_path = _Path(full, count_fcs)
    data = bytes(payload_len)
    costs_inner_first: list[LayerCost] = []
    for i in range(len(full) - 1, -1, -1):
        wrapped, fields = full_path.wrap(i, data)
        costs_inner_first.append(LayerCost(full[i].name, full[i].label(), len(wrapped) - len(data), fields))
        data = wrapped
    costs = list(reversed(costs_inner_first))
    for added in costs[len(layers) :]:
        added.note = "added to complete the stack"
    if layers[0].name == "ethernet":
        costs[0].fields = costs[0].fields + [
            ("preamble and SFD (on the wire)", ETHERNET_PREAMBLE_SFD),
            ("inter-frame gap (on the wire)", ETHERNET_IFG),
        ]
        costs[0].overhead_bytes += ETHERNET_PREAMBLE_SFD + ETHERNET_IFG
    return costs


def _efficiency(analysis: _Analysis, transport: str, payload_len: int) -> list[dict[str, Any]]:
    """Wire cost and efficiency of payloads of the usual sizes up to ``payload_len``."""
    top_size = max(payload_len, 1)
    efficiency: list[dict[str, Any]] = []
    for p in sorted(set(s for s in EFFICIENCY_SIZES if s < top_size) | {top_size}):
        cost = analysis.cost_of_payload(transport, p)
        efficiency.append(
            {
                "transport": transport,
                "payload_bytes": p,
                "wire_bytes": cost.wire_bytes,
                "wire_bits": cost.wire_bits,
                "frames": cost.fragments,
                "efficiency_pct": round(100.0 * p / cost.wire_bytes, 2) if cost.wire_bytes else 0.0,
            }
        )
        if cost.wire_bits_max is not None:
            efficiency[-1]["wire_bits_max"] = cost.wire_bits_max
    return efficiency


def _innermost(analysis: _Analysis, stack: str) -> Interface:
    """The innermost interface; InputError if the stack has none, or one too small for
    the least IPv4 datagram."""
    cramped = next((i for i in analysis.interfaces if i.fits < IPV4_MIN_MTU), None)
    if cramped is not None:
        raise _refused(
            "STACK",
            f"the layers outside {cramped.name} leave no room for a {IPV4_MIN_MTU}-byte datagram",
            key="stack",
            expected=f"every interface able to carry {IPV4_MIN_MTU} bytes (RFC 791 §3.2)",
            found=f"{cramped.fits} bytes at {cramped.name}",
        )
    innermost = analysis.interfaces[-1] if analysis.interfaces else None
    if innermost is None:
        raise _refused(
            "STACK",
            "the stack has no interface that carries packets",
            key="stack",
            expected="a link layer such as ethernet, slip or llc-snap",
            found=stack,
        )
    return innermost


def analyse(
    stack: str, *, count_fcs: bool = False, size: int | None = None, pcap: str | Path | None = None
) -> MtuReport:
    """Analyses a stack: each layer's overhead, each interface's MTU, TCP MSS, the
    largest unfragmented UDP payload and wire efficiency.

    Parameters
    ----------
    stack:
        Layers from the physical link inward, e.g. ``"ethernet/ipv4/tcp"``.
    count_fcs:
        Count a 4-byte FCS in Ethernet frames carried inside a tunnel (seed 002's
        accounting). Real TAP devices carry none.
    size:
        Also cost one datagram of this many bytes at the innermost IPv4 layer.
    pcap:
        Write the frames of that datagram (a full-size one if ``size`` is not given) to
        this pcap file; for stacks over Ethernet or 802.11.

    >>> analyse("ethernet/ipv4").mtu
    1500
    >>> analyse("ethernet/ipv4/udp").udp_max_payload
    1472
    """
    if size is not None and not 1 <= size <= IPV4_MAX_TOTAL_LENGTH:
        # RFC 791 §3.1: the total length is a 16-bit field, header included.
        raise _refused(
            "--size",
            "no IPv4 datagram has this size",
            key="--size",
            expected=f"1 to {IPV4_MAX_TOTAL_LENGTH} bytes (RFC 791 §3.1: 16-bit total length)",
            found=str(size),
        )
    layers = parse_stack(stack)
    if pcap is not None and layers[0].name not in PCAP_LINKS:
        raise _refused(
            "--pcap",
            f"no capture format for frames of a {layers[0].name} link here",
            key="--pcap",
            expected="a stack over " + " or ".join(PCAP_LINKS),
            found=stack,
        )
    analysis = _Analysis(layers, count_fcs)
    innermost = _innermost(analysis, stack)
    tcp_mss = analysis.largest_payload("tcp")
    udp_max = analysis.largest_payload("udp")
    # Overheads at a full-size packet of the stack's own transport (TCP if it has none).
    transport = layers[-1].name if layers[-1].spec.role == Role.TRANSPORT else "tcp"
    payload_len = tcp_mss if transport == "tcp" else udp_max
    report = MtuReport(
        stack=stack,
        layers=_layer_costs(layers, transport, payload_len, count_fcs),
        interfaces=analysis.interfaces,
        mtu=innermost.mtu,
        tcp_mss=tcp_mss,
        udp_max_payload=udp_max,
        efficiency=_efficiency(analysis, transport, payload_len),
        count_fcs=count_fcs,
        notes=_notes(analysis, layers, count_fcs),
        physical=layers[0].name,
    )
    if pcap is not None and size is None:
        size = innermost.mtu
    if size is not None:
        _add_datagram(report, analysis, size, pcap)
    return report


def _add_datagram(report: MtuReport, analysis: _Analysis, size: int, pcap: str | Path | None) -> None:
    """The wire cost of one datagram of ``size`` bytes at the innermost IPv4 layer, and
    its frames written to ``pcap``."""
    path, ip_index, datagram = _datagram_of_size(analysis, size)
    frames, dropped = analysis.transmit(path, ip_index - 1, datagram)
    report.datagram = analysis.wire_cost(frames, len(datagram), dropped)
    report.datagram_bytes = datagram
    if pcap is not None:
        _core.write_pcap(str(pcap), report.physical, frames)
