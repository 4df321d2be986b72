"""Shared fixtures: paths to the repository's examples and bad scenarios."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
BAD = Path(__file__).resolve().parent / "bad_scenarios"

TWO_HOSTS = """
[scenario]
name = "{name}"
seed = {seed}
[node.a]
role = "host"
address = "10.0.0.1/24"
[node.b]
role = "host"
address = "10.0.0.2/24"
"""
"""The head of a scenario of two hosts a (10.0.0.1) and b (10.0.0.2); add the link and tests."""


@pytest.fixture
def root() -> Path:
    return ROOT


def pcap_packets(path: Path) -> list[bytes]:
    """The frames of a classic pcap file (24-byte header, 16-byte record headers)."""
    import struct

    data = path.read_bytes()
    order = "<" if struct.unpack("<I", data[:4])[0] in (0xA1B2C3D4, 0xA1B23C4D) else ">"
    frames, at = [], 24
    while at < len(data):
        _, _, length, _ = struct.unpack(order + "IIII", data[at : at + 16])
        frames.append(data[at + 16 : at + 16 + length])
        at += 16 + length
    return frames
