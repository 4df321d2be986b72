"""Reading a capture file's IPv4 datagrams, for ``pcap.replay``: their times and sizes.

Two formats, told apart by their first four octets:

- classic pcap, draft-ietf-opsawg-pcap (libpcap's savefile, pcap-savefile(5)): a 24-octet
  File Header (§4: the magic number gives the byte order and whether the fraction of a
  second is in µs or ns; the LinkType is the lower 16 bits of its last field), then
  Packet Records (§5: seconds, fraction, captured length, original length, data);
- pcapng, draft-ietf-opsawg-pcapng: blocks (§3.1: type, total length, body, total length
  again), a Section Header Block (§4.1: its Byte-Order Magic gives the byte order of its
  section), Interface Description Blocks (§4.2: the link type and the ``if_tsresol`` and
  ``if_tsoffset`` options), and the packets in Enhanced Packet Blocks (§4.3: a 64-bit
  count of ``if_tsresol`` units) or the obsolete Packet Blocks (Appendix A). A Simple
  Packet Block (§4.4) has no timestamp, so its packet cannot be replayed in time: it is
  skipped and counted. Other blocks carry no packet and are passed over (§3.1: "a parser
  that does not understand them can simply ignore their content").

Link types (draft-ietf-opsawg-pcaplinktype's registry; the layouts are tcpdump.org's
LINKTYPE_ pages): ETHERNET 1 (Ethernet II, any 802.1Q or 802.1ad tags passed over), RAW
101 and IPV4 228 (the packet is the IP datagram), LINUX_SLL 113 and LINUX_SLL2 276 (Linux
"any" captures: a 16- or 20-octet header with the EtherType), NULL 0 and LOOP 108 (BSD
loopback: a 4-octet address family, AF_INET = 2, in the writer's or network byte order).

What is read of each packet is its IPv4 header, not the captured length: a capture cut
at a snap length still gives every datagram's size, and an Ethernet frame's padding is not
counted. The replay sends each datagram's IPv4 payload as a UDP datagram (see
:func:`replay_payload`), so its size on the path is the captured one's.
"""

from __future__ import annotations

import struct
from collections import Counter
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import BinaryIO

LINKTYPE_NULL = 0
LINKTYPE_ETHERNET = 1
LINKTYPE_RAW = 101
LINKTYPE_LOOP = 108
LINKTYPE_LINUX_SLL = 113
LINKTYPE_IPV4 = 228
LINKTYPE_LINUX_SLL2 = 276
LINK_TYPES = {
    LINKTYPE_NULL: "NULL (BSD loopback)",
    LINKTYPE_ETHERNET: "ETHERNET",
    LINKTYPE_RAW: "RAW (IP)",
    LINKTYPE_LOOP: "LOOP (OpenBSD loopback)",
    LINKTYPE_LINUX_SLL: "LINUX_SLL",
    LINKTYPE_IPV4: "IPV4",
    LINKTYPE_LINUX_SLL2: "LINUX_SLL2",
}
"""The link types read, by number (draft-ietf-opsawg-pcaplinktype's registry)."""

ETHERTYPE_IPV4 = 0x0800  # IEEE 802 numbers (IANA's ieee-802-numbers registry)
VLAN_TAGS = (0x8100, 0x88A8, 0x9100)  # IEEE 802.1Q C-tag, 802.1ad S-tag, the older QinQ tag
AF_INET = 2  # the BSD loopback header's address family for IPv4 (LINKTYPE_NULL, LINKTYPE_LOOP)
UDP = 17  # IANA protocol number (RFC 768)
UDP_HEADER = 8  # RFC 768
IPV4_MIN_HEADER = 20  # RFC 791 §3.1: IHL of 5 words
MAX_UDP_PAYLOAD = 65_535 - IPV4_MIN_HEADER - UDP_HEADER
"""RFC 791 §3.1: a Total Length of 16 bits; less a 20-octet header and UDP's 8 (RFC 768)."""

PCAP_MAGIC_US = 0xA1B2C3D4  # draft-ietf-opsawg-pcap §4: fractions in microseconds
PCAP_MAGIC_NS = 0xA1B23C4D  # ... in nanoseconds
PCAPNG_SHB = 0x0A0D0D0A  # draft-ietf-opsawg-pcapng §4.1: Section Header Block type
PCAPNG_BYTE_ORDER_MAGIC = 0x1A2B3C4D  # §4.1
PCAPNG_IDB, PCAPNG_PB, PCAPNG_SPB, PCAPNG_EPB = 1, 2, 3, 6  # §4.2, Appendix A, §4.4, §4.3
OPT_ENDOFOPT, OPT_IF_TSRESOL, OPT_IF_TSOFFSET = 0, 9, 14  # §3.5, §4.2
MAX_RECORD = 1 << 28
"""A packet of more than 256 MiB is taken for a corrupt length field rather than read."""

SKIP_REASONS = {
    "not_ipv4": "not IPv4 (ARP, IPv6, another EtherType or address family)",
    "later_fragment": "an IPv4 fragment after the first (the first one stands for its datagram)",
    "malformed_ipv4": "an IPv4 header that is cut short or not IPv4's (version, IHL, Total Length)",
    "unknown_link_type": "on a pcapng interface of a link type not read here",
    "no_timestamp": "in a pcapng Simple Packet Block, which has no timestamp",
    "cut_short": "the last record, cut short by the end of the file",
}
"""Why a packet of the file is not replayed, by the key the record's parameters count it under."""


@dataclass(frozen=True)
class Datagram:
    """One IPv4 datagram of a capture."""

    time: Fraction
    """Its timestamp in seconds, exact, on the file's clock."""
    ip_payload: int
    """Octets after its IPv4 header: Total Length less 4·IHL (RFC 791 §3.1); for the first
    fragment of a UDP datagram, the whole datagram's UDP Length (RFC 768)."""
    protocol: int
    """Its IPv4 Protocol field."""


@dataclass
class Capture:
    """What a capture file holds for a replay."""

    format: str
    """``"pcap"`` or ``"pcapng"``."""
    packets: int = 0
    """Packets in the file, replayed or not."""
    datagrams: list[Datagram] = field(default_factory=list)
    skipped: Counter[str] = field(default_factory=Counter)
    """Packets not replayed, by reason (:data:`SKIP_REASONS`)."""
    link_types: set[int] = field(default_factory=set)
    """The link types of the packets read."""


class CaptureError(Exception):
    """A file that is not a capture this reader reads: what is wrong, and where."""

    def __init__(self, message: str, *, expected: str, found: str) -> None:
        super().__init__(message)
        self.message, self.expected, self.found = message, expected, found


def replay_payload(d: Datagram) -> int:
    """The UDP payload octets that replay ``d``: its IPv4 payload less the 8-octet UDP
    header, so that the replayed datagram has the captured one's IPv4 payload (a UDP
    datagram's own payload; a TCP segment's or ICMP message's whole length less 8), and
    0 when that payload is shorter than a UDP header."""
    return max(0, d.ip_payload - UDP_HEADER)


def read_ipv4(path: Path) -> Capture:
    """The IPv4 datagrams of the capture at ``path``, in file order.

    Raises
    ------
    OSError
        If the file cannot be read.
    CaptureError
        If it is neither pcap nor pcapng, or its structure is broken.
    """
    with path.open("rb") as f:
        head = f.read(4)
        if len(head) < 4:
            raise CaptureError(
                "the file is too short to be a capture",
                expected="a pcap or pcapng file",
                found=f"{len(head)} octets",
            )
        if struct.unpack("<I", head)[0] == PCAPNG_SHB:
            return _read_pcapng(f, head)
        for order in "<>":
            magic = struct.unpack(order + "I", head)[0]
            if magic in (PCAP_MAGIC_US, PCAP_MAGIC_NS):
                return _read_pcap(f, order, 10**9 if magic == PCAP_MAGIC_NS else 10**6)
    raise CaptureError(
        "not a capture file",
        expected="pcap (magic A1B2C3D4 or A1B23C4D, either byte order) or pcapng (0A0D0D0A)",
        found=f"first octets {head.hex().upper()}",
    )


def _read_pcap(f: BinaryIO, order: str, per_second: int) -> Capture:
    """A classic pcap file after its magic number (draft-ietf-opsawg-pcap §4, §5)."""
    header = f.read(20)
    if len(header) < 20:
        raise CaptureError("the pcap File Header is cut short", expected="24 octets", found=f"{len(header) + 4}")
    major, minor, _r1, _r2, _snaplen, link = struct.unpack(order + "HHIIII", header)
    if major != 2:
        raise CaptureError("a pcap file of another major version", expected="version 2.4", found=f"{major}.{minor}")
    link_type = link & 0xFFFF  # §4: the upper bits carry the FCS length, not the link type
    if link_type not in LINK_TYPES:
        raise CaptureError(
            "a link type this reader does not read",
            expected="one of " + ", ".join(f"{n} {name}" for n, name in LINK_TYPES.items()),
            found=f"LinkType {link_type}",
        )
    capture = Capture(format="pcap", link_types={link_type})
    record = struct.Struct(order + "IIII")
    while True:
        head = f.read(16)
        if not head:
            return capture
        capture.packets += 1
        if len(head) < 16:
            capture.skipped["cut_short"] += 1
            return capture
        seconds, fraction, caplen, _origlen = record.unpack(head)
        if caplen > MAX_RECORD:
            raise CaptureError(
                f"packet record {capture.packets} has a corrupt length",
                expected=f"at most {MAX_RECORD} octets",
                found=str(caplen),
            )
        data = f.read(caplen)
        if len(data) < caplen:
            capture.skipped["cut_short"] += 1
            return capture
        _take(capture, link_type, data, Fraction(seconds) + Fraction(fraction, per_second))


@dataclass
class _Interface:
    link_type: int
    units_per_second: int
    offset_s: int


def _read_pcapng(f: BinaryIO, first: bytes) -> Capture:
    """A pcapng file from its first block (draft-ietf-opsawg-pcapng §3, §4)."""
    capture = Capture(format="pcapng")
    order = "<"
    interfaces: list[_Interface] = []
    head = first + f.read(4)
    n_block = 0
    while head:
        n_block += 1
        if len(head) < 8:
            raise CaptureError(
                f"pcapng block {n_block} is cut short", expected="8 octets or more", found=str(len(head))
            )
        block_type = struct.unpack(order + "I", head[:4])[0]
        if block_type == PCAPNG_SHB:
            magic = f.read(4)
            if magic == struct.pack("<I", PCAPNG_BYTE_ORDER_MAGIC):
                order = "<"
            elif magic == struct.pack(">I", PCAPNG_BYTE_ORDER_MAGIC):
                order = ">"
            else:
                raise CaptureError(
                    f"pcapng block {n_block}: a Section Header Block without its Byte-Order Magic",
                    expected="1A2B3C4D in either byte order",
                    found=magic.hex().upper(),
                )
            interfaces = []  # §4.2: interface ids are numbered per section
            length = struct.unpack(order + "I", head[4:8])[0]
            body = magic + _block_body(f, order, length, n_block, already=4)
        else:
            length = struct.unpack(order + "I", head[4:8])[0]
            body = _block_body(f, order, length, n_block)
        if block_type == PCAPNG_IDB:
            interfaces.append(_interface(body, order, n_block))
        elif block_type in (PCAPNG_EPB, PCAPNG_PB):
            _take_block(capture, block_type, body, order, interfaces, n_block)
        elif block_type == PCAPNG_SPB:
            capture.packets += 1
            capture.skipped["no_timestamp"] += 1
        head = f.read(8)
    return capture


def _block_body(f: BinaryIO, order: str, length: int, n_block: int, already: int = 0) -> bytes:
    """A block's body (§3.1), after its type and length (and ``already`` octets of it);
    its trailing length is read and checked."""
    if length < 12 or length % 4 or length > MAX_RECORD:
        raise CaptureError(
            f"pcapng block {n_block} has a corrupt Block Total Length",
            expected="a multiple of 4, at least 12",
            found=str(length),
        )
    rest = f.read(length - 8 - already)
    if len(rest) < length - 8 - already:
        raise CaptureError(
            f"pcapng block {n_block} is cut short by the end of the file",
            expected=f"{length} octets",
            found=f"{len(rest) + 8 + already}",
        )
    body, trailer = rest[:-4], struct.unpack(order + "I", rest[-4:])[0]
    if trailer != length:
        raise CaptureError(
            f"pcapng block {n_block}: its two Block Total Lengths differ",
            expected=str(length),
            found=str(trailer),
        )
    return body


def _interface(body: bytes, order: str, n_block: int) -> _Interface:
    """An Interface Description Block (§4.2): link type, ``if_tsresol``, ``if_tsoffset``."""
    if len(body) < 8:
        raise CaptureError(
            f"pcapng block {n_block}: an Interface Description Block is cut short",
            expected="8 octets of body or more",
            found=str(len(body)),
        )
    link_type = struct.unpack(order + "H", body[:2])[0]
    units, offset = 10**6, 0  # §4.2: without if_tsresol, microseconds
    at = 8
    while at + 4 <= len(body):
        code, size = struct.unpack(order + "HH", body[at : at + 4])
        value = body[at + 4 : at + 4 + size]
        if code == OPT_ENDOFOPT:
            break
        if code == OPT_IF_TSRESOL and size == 1:
            # §4.2: the most significant bit chooses a negative power of 2, else of 10.
            units = 2 ** (value[0] & 0x7F) if value[0] & 0x80 else 10 ** value[0]
        elif code == OPT_IF_TSOFFSET and size == 8:
            offset = struct.unpack(order + "q", value)[0]
        at += 4 + (size + 3) // 4 * 4  # §3.5: values are padded to 32 bits
    return _Interface(link_type, units, offset)


def _take_block(capture: Capture, block_type: int, body: bytes, order: str, ifs: list[_Interface], n: int) -> None:
    """An Enhanced Packet Block (§4.3) or an obsolete Packet Block (Appendix A)."""
    capture.packets += 1
    if block_type == PCAPNG_EPB:
        if len(body) < 20:
            raise CaptureError(
                f"pcapng block {n}: an Enhanced Packet Block is cut short",
                expected="20 octets of body",
                found=str(len(body)),
            )
        iface, high, low, caplen, _origlen = struct.unpack(order + "IIIII", body[:20])
        data = body[20 : 20 + caplen]
    else:
        if len(body) < 20:
            raise CaptureError(
                f"pcapng block {n}: a Packet Block is cut short", expected="20 octets of body", found=str(len(body))
            )
        iface, _drops, high, low, caplen, _origlen = struct.unpack(order + "HHIIII", body[:20])
        data = body[20 : 20 + caplen]
    if iface >= len(ifs):
        raise CaptureError(
            f"pcapng block {n}: a packet of an interface not described before it (§4.3)",
            expected=f"an interface id below {len(ifs)}",
            found=str(iface),
        )
    interface = ifs[iface]
    if interface.link_type not in LINK_TYPES:
        capture.skipped["unknown_link_type"] += 1
        return
    capture.link_types.add(interface.link_type)
    time = Fraction((high << 32) | low, interface.units_per_second) + interface.offset_s
    _take(capture, interface.link_type, data, time)


def _ip_offset(link_type: int, data: bytes) -> int | None:
    """Where the IPv4 header starts in a packet of ``link_type``; None when the packet
    is not IPv4."""
    if link_type in (LINKTYPE_RAW, LINKTYPE_IPV4):
        return 0 if data and data[0] >> 4 == 4 else None
    if link_type == LINKTYPE_ETHERNET:
        at = 12  # destination and source addresses (IEEE 802.3 §3.2.3, §3.2.4)
        while len(data) >= at + 2 and int.from_bytes(data[at : at + 2], "big") in VLAN_TAGS:
            at += 4  # a tag: its TPID and TCI, then the next type (IEEE 802.1Q §9.3)
        if len(data) >= at + 2 and int.from_bytes(data[at : at + 2], "big") == ETHERTYPE_IPV4:
            return at + 2
        return None
    if link_type == LINKTYPE_LINUX_SLL:
        return 16 if len(data) >= 16 and int.from_bytes(data[14:16], "big") == ETHERTYPE_IPV4 else None
    if link_type == LINKTYPE_LINUX_SLL2:
        return 20 if len(data) >= 20 and int.from_bytes(data[0:2], "big") == ETHERTYPE_IPV4 else None
    if link_type == LINKTYPE_NULL:
        # The writer's own byte order, which the reader does not know: either reads 2.
        family = data[:4]
        return 4 if len(family) == 4 and AF_INET in (family[0], family[3]) and sum(family) == AF_INET else None
    if link_type == LINKTYPE_LOOP:
        return 4 if data[:4] == AF_INET.to_bytes(4, "big") else None
    return None


def _take(capture: Capture, link_type: int, data: bytes, time: Fraction) -> None:
    """One packet: its IPv4 datagram kept, or the reason it is skipped counted."""
    at = _ip_offset(link_type, data)
    if at is None:
        capture.skipped["not_ipv4"] += 1
        return
    header = data[at : at + IPV4_MIN_HEADER]
    if len(header) < IPV4_MIN_HEADER or header[0] >> 4 != 4:
        capture.skipped["malformed_ipv4"] += 1
        return
    ihl = (header[0] & 0x0F) * 4
    total = int.from_bytes(header[2:4], "big")
    fragment = int.from_bytes(header[6:8], "big")
    protocol = header[9]
    if ihl < IPV4_MIN_HEADER or total < ihl:
        capture.skipped["malformed_ipv4"] += 1
        return
    if fragment & 0x1FFF:  # RFC 791 §3.1: Fragment Offset
        capture.skipped["later_fragment"] += 1
        return
    payload = total - ihl
    if fragment & 0x2000 and protocol == UDP:  # MF: the first fragment of a UDP datagram
        udp = data[at + ihl : at + ihl + UDP_HEADER]
        length = int.from_bytes(udp[4:6], "big") if len(udp) == UDP_HEADER else 0
        if not UDP_HEADER <= length <= MAX_UDP_PAYLOAD + UDP_HEADER:
            capture.skipped["malformed_ipv4"] += 1
            return
        payload = length
    capture.datagrams.append(Datagram(time, payload, protocol))


__all__ = [
    "Capture",
    "CaptureError",
    "Datagram",
    "LINK_TYPES",
    "SKIP_REASONS",
    "read_ipv4",
    "replay_payload",
]
