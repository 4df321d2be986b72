"""Writes python/qoslab/examples/video_call.pcap, the capture that the example
python/qoslab/examples/pcap_replay_call.toml replays.

It stands for a recording of a laptop's side of a video call, made with a snap length of
64 octets (``tcpdump -s 64``, headers only: the replay reads each packet's size from its
IPv4 header, so the payload octets need not be kept). Six seconds of:

- G.711 voice: RTP over UDP every 20 ms (RFC 3551 §4.5.14: 8000 samples/s of one octet,
  so 160 octets per 20 ms, plus the 12-octet RTP header of RFC 3550 §5.1: a 172-octet UDP
  payload), each packet up to 2 ms late (the laptop's scheduling);
- 25 frames/s of video: an intra frame of about 20 kB every 2 s and predicted frames of
  1.5 to 4 kB between them, each cut into RTP packets of at most 1200 octets sent 100 µs
  apart;
- around them, what a capture of a real interface also holds: the ARP exchange for the
  gateway at the start and an IPv6 neighbour solicitation, which the replay skips and
  counts.

Addresses are from the documentation ranges (RFC 5737, RFC 3849, RFC 7042's MACs).
The numbers are drawn from ``random.Random(2026)``, so the file is the same on every
run; it is written with ``struct`` after draft-ietf-opsawg-pcap (§4 File Header, §5
Packet Record, microsecond timestamps, LinkType 1). Run from the repository's root:

    python scripts/make_replay_example.py
"""

from __future__ import annotations

import random
import struct
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "python" / "qoslab" / "examples" / "video_call.pcap"
SNAPLEN = 64
START_S = 1_790_000_000  # any instant: the replay uses times from the first IPv4 packet
SECONDS = 6

LAPTOP_MAC = bytes.fromhex("00005e005301")  # RFC 7042 §2.1.1: documentation unicast MACs
GATEWAY_MAC = bytes.fromhex("00005e005302")
LAPTOP_IP = bytes([192, 0, 2, 23])  # RFC 5737 TEST-NET-1
GATEWAY_IP = bytes([192, 0, 2, 1])
PEER_IP = bytes([198, 51, 100, 50])  # RFC 5737 TEST-NET-2

VOICE_PAYLOAD = 12 + 160  # RTP header (RFC 3550 §5.1) + 20 ms of G.711 (RFC 3551 §4.5.14)
VIDEO_MTU_PAYLOAD = 1200


def ipv4_checksum(header: bytes) -> int:
    """RFC 791 §3.1: the one's complement of the one's complement sum of the header's words."""
    total = sum(struct.unpack(f"!{len(header) // 2}H", header))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


def udp_frame(ident: int, src_port: int, dst_port: int, payload: int) -> bytes:
    """An Ethernet II frame with the laptop's IPv4/UDP datagram of ``payload`` octets
    (zeros: the capture keeps only the first SNAPLEN octets anyway)."""
    udp = struct.pack("!HHHH", src_port, dst_port, 8 + payload, 0) + bytes(payload)
    header = struct.pack("!BBHHHBBH4s4s", 0x45, 0xB8, 20 + len(udp), ident, 0x4000, 64, 17, 0, LAPTOP_IP, PEER_IP)
    header = header[:10] + struct.pack("!H", ipv4_checksum(header)) + header[12:]
    return GATEWAY_MAC + LAPTOP_MAC + b"\x08\x00" + header + udp


def arp_frame(request: bool) -> bytes:
    """RFC 826: the laptop asks for the gateway's address, and the gateway answers."""
    if request:
        eth = b"\xff" * 6 + LAPTOP_MAC + b"\x08\x06"
        body = struct.pack("!HHBBH6s4s6s4s", 1, 0x0800, 6, 4, 1, LAPTOP_MAC, LAPTOP_IP, bytes(6), GATEWAY_IP)
    else:
        eth = LAPTOP_MAC + GATEWAY_MAC + b"\x08\x06"
        body = struct.pack("!HHBBH6s4s6s4s", 1, 0x0800, 6, 4, 2, GATEWAY_MAC, GATEWAY_IP, LAPTOP_MAC, LAPTOP_IP)
    return eth + body + bytes(18)  # padded to Ethernet's 60-octet minimum


def ipv6_solicitation() -> bytes:
    """RFC 4861 §4.3: a neighbour solicitation from the laptop (2001:db8::/32, RFC 3849)."""
    src = bytes.fromhex("20010db8000000000000000000000017")
    target = bytes.fromhex("20010db8000000000000000000000001")
    dst = bytes.fromhex("ff0200000000000000000001ff000001")
    icmp = struct.pack("!BBHI", 135, 0, 0, 0) + target
    ip6 = struct.pack("!IHBB", 6 << 28, len(icmp), 58, 255) + src + dst
    return bytes.fromhex("3333ff000001") + LAPTOP_MAC + b"\x86\xdd" + ip6 + icmp


def packets() -> list[tuple[int, bytes]]:
    """(microseconds from the start, frame) of every packet, in time order."""
    rng = random.Random(2026)
    out: list[tuple[int, bytes]] = [(0, arp_frame(True)), (350, arp_frame(False))]
    ident = 1
    for k in range(SECONDS * 50):  # voice: every 20 ms, up to 2 ms late
        out.append((10_000 + k * 20_000 + rng.randrange(2_000), udp_frame(ident, 5004, 5004, VOICE_PAYLOAD)))
        ident += 1
    for k in range(SECONDS * 25):  # video: 25 frames/s
        size = rng.randrange(18_000, 22_000) if k % 50 == 0 else rng.randrange(1_500, 4_000)
        at = 12_000 + k * 40_000
        while size > 0:
            part = min(size, VIDEO_MTU_PAYLOAD)
            out.append((at, udp_frame(ident, 5006, 5006, 12 + part)))
            ident += 1
            size -= part
            at += 100
    out.append((3_000_000, ipv6_solicitation()))
    return sorted(out, key=lambda p: p[0])


def write(path: Path) -> int:
    """Writes the capture; the number of packets."""
    records = packets()
    with path.open("wb") as f:
        # §4: magic (µs), version 2.4, two reserved words, SnapLen, LinkType 1 (Ethernet).
        f.write(struct.pack("<IHHIIII", 0xA1B2C3D4, 2, 4, 0, 0, SNAPLEN, 1))
        for at_us, frame in records:
            kept = frame[:SNAPLEN]
            seconds, micros = divmod(at_us, 1_000_000)
            f.write(struct.pack("<IIII", START_S + seconds, micros, len(kept), len(frame)) + kept)
    return len(records)


if __name__ == "__main__":
    n = write(OUT)
    print(f"{OUT.name}: {n} packets")
