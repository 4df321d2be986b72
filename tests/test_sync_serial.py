"""A synchronous serial line (issue 15 §2): PPP in bit-synchronous HDLC framing
(RFC 1662 §5) on a leased line or ISDN B channel. Checked against computations written
here: the bits of a frame (8 per octet, flags, and a zero inserted after every five
ones, counted bit by bit in this file), the MTU analyzer's overheads and worst case, a
UDP run at 64 kb/s sync and async with the goodputs predicted from the framing, and
refusals with exit code 2 naming the key."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from qoslab.analysis.mtu import analyse

EXAMPLE = Path(__file__).parent.parent / "examples" / "isdn_b_channel_sync.toml"


def qoslab(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "qoslab", *args], capture_output=True, text=True, check=False, timeout=600
    )


def inserted_zeros(frame: bytes) -> int:
    """RFC 1662 §5.2 done bit by bit: octets sent least significant bit first, a zero
    after every run of five ones (the run may cross octets; the zero ends it)."""
    ones = zeros = 0
    for octet in frame:
        for bit in range(8):
            if octet >> bit & 1:
                ones += 1
                if ones == 5:
                    zeros, ones = zeros + 1, 0
            else:
                ones = 0
    return zeros


def fcs16(data: bytes) -> int:
    """RFC 1662 §C.2, bit by bit: reflected polynomial 0x8408, initial 0xffff, complemented."""
    crc = 0xFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ 0x8408 if crc & 1 else crc >> 1
    return crc ^ 0xFFFF


def test_mtu_analyzer_counts_sync_frames_bit_by_bit():
    report = analyse("sync/ppp/ipv4/udp", size=1500)
    d = report.datagram
    [line] = d.frames
    # Flag, ff 03, protocol 00 21, the datagram, FCS-16 (low octet first), flag.
    assert line[:5] == bytes([0x7E, 0xFF, 0x03, 0x00, 0x21]) and line[-1] == 0x7E
    frame = line[1:-1]
    assert len(frame) == 1500 + 6
    assert int.from_bytes(frame[-2:], "little") == fcs16(frame[:-2])
    assert d.wire_bytes == 1508
    assert d.wire_bits == 8 * 1508 + inserted_zeros(frame)
    # Worst case: data of all ones, one zero per five bits of the 1506 octets.
    assert d.wire_bits_max == 8 * 1508 + (8 * 1506) // 5
    # The same stack asynchronous with pppd's ACCM 0: ten bits a character, octet
    # stuffing only of 0x7e and 0x7d (RFC 1662 §4.2).
    async_report = analyse("serial(8n1)/ppp/ipv4/udp", size=1500)
    async_line = async_report.datagram.frames[0]
    assert async_report.datagram.wire_bits == 10 * len(async_line)
    assert len(async_line) == 1508 + sum(1 for b in frame if b in (0x7E, 0x7D))
    # The PPP layer's overhead: flags, address, control, protocol, FCS.
    names = dict(next(layer for layer in report.layers if layer.name == "ppp").fields)
    assert names == {"opening flag": 1, "address": 1, "control": 1, "ppp protocol": 2, "fcs": 2, "closing flag": 1}


def test_mtu_analyzer_ppp_options_on_a_sync_line():
    base = analyse("sync/ppp/ipv4/udp", size=576).datagram
    compressed = analyse("sync/ppp(acfc=yes,pfc=yes)/ipv4/udp", size=576).datagram
    fcs32 = analyse("sync/ppp(fcs=32)/ipv4/udp", size=576).datagram
    # RFC 1661 §6.6 and §6.5: 2 + 1 octets fewer; RFC 1570 / RFC 1662 §C.3: 2 more.
    assert base.wire_bytes - compressed.wire_bytes == 3
    assert fcs32.wire_bytes - base.wire_bytes == 2
    for d in (base, compressed, fcs32):
        frame = d.frames[0][1:-1]
        assert d.wire_bits == 8 * (len(frame) + 2) + inserted_zeros(frame)


def goodput(text: str, tmp_path: Path, name: str) -> float:
    path = tmp_path / f"{name}.toml"
    path.write_text(text)
    proc = qoslab("run", str(path), "--json")
    assert proc.returncode == 0, proc.stderr
    [record] = json.loads(proc.stdout)["results"]
    return record["metrics"]["goodput_mbps"] * 1e6


def test_udp_goodput_sync_versus_async_at_64_kbps(tmp_path):
    """A saturating UDP flow of 512-byte payloads over 64 kb/s. Each datagram is 540
    octets (IPv4 20, UDP 8); a PPP frame adds address, control, protocol 2 and FCS 2,
    and the two flags: 548 octets.

    Sync (RFC 1662 §5): 8 bits an octet, 4384 bits, plus inserted zeros. Only the 48
    octets of headers, probe (16: flow, sequence, send time) and FCS can hold ones (the
    rest of the payload is zeros), so at most 8 × 48 / 5 = 76 zeros: 4384 to 4460 bits.

    Async (8N1, RFC 1662 §4.2, the ACCM of all ones a link starts with, §7.1): 10 bits a
    character; every octet below 0x20 is escaped, so the 496 zero payload octets double,
    and of the 48 others any may: 548 + 496 to 548 + 544 characters, 10440 to 10920 bits.
    """
    text = EXAMPLE.read_text()
    udp_only = (
        text.split("[[test]]")[0]
        + '[[test]]\nmethod = "udp.flow"\nfrom = "lan-a"\nto = "lan-b"\npayload = 512\nrate = "200 kbps"\nduration = "20 s"\n'
    )
    sync = goodput(udp_only, tmp_path, "sync")
    asyn = goodput(udp_only.replace('clocking = "sync"', 'clocking = "async"'), tmp_path, "async")
    rate, bits = 64_000, 512 * 8
    # 1 % for the measurement window's edges (a frame more or less in 20 s of ~290).
    assert rate * bits / 4460 * 0.99 <= sync <= rate * bits / 4384 * 1.01, sync
    assert rate * bits / 10920 * 0.99 <= asyn <= rate * bits / 10440 * 1.01, asyn
    assert 10440 / 4460 * 0.98 <= sync / asyn <= 10920 / 4384 * 1.02


@pytest.mark.parametrize(
    "link, key",
    [
        ('clocking = "sync"\nframing = "slip"', "framing"),
        ('clocking = "sync"\nframing = "ppp"\nformat = "7e1"', "format"),
        ('clocking = "sync"\nframing = "ppp"\ncompression = 2.0', "compression"),
        ('framing = "slip"\nacfc = true', "acfc"),
        ('framing = "ppp"\nfcs = 24', "fcs"),
        ('clocking = "isochronous"\nframing = "ppp"', "clocking"),
    ],
)
def test_bad_sync_lines_are_refused_at_check(tmp_path, link, key):
    text = EXAMPLE.read_text().replace(
        'clocking = "sync"              # leased line / ISDN: bit-synchronous HDLC\nframing = "ppp"', link
    )
    assert link in text
    path = tmp_path / "bad.toml"
    path.write_text(text)
    proc = qoslab("check", str(path))
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    assert key in proc.stderr and "bad.toml" in proc.stderr, proc.stderr


def test_example_runs():
    proc = qoslab("check", str(EXAMPLE))
    assert proc.returncode == 0, proc.stderr
