"""Classical IP over ATM (RFC 2225) on real kernels through the emulated ATM network
(crates/emu driving the simulator's own AtmNet: switches, AAL5 cells on OC-3 slots,
ATMARP and SVC set-up), examples/clip_two_lis.toml: its ping test runs as it is, as in
the simulator, and the one-way time of a datagram from a host to the router in its LIS,
read from the two kernels' own timestamps, is the cell arithmetic written here.

Needs root and network namespaces (skipped otherwise, saying why).
"""

from __future__ import annotations

import math
import select
import socket
import struct
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import EXAMPLES
from emu_host import own_emu_registry, why_no_namespaces  # noqa: F401 (an autouse fixture)
from qoslab.scenario import load_scenario

WHY = why_no_namespaces()
pytestmark = pytest.mark.skipif(WHY is not None, reason=WHY or "")

EXAMPLE = EXAMPLES / "clip_two_lis.toml"

OC3_CELL_RATE_BPS = 149_760_000
"""ITU-T G.707 §10.1.1: the C-4 container of STM-1/OC-3c carries cells at 260 x 9 x 8 x
8000 = 149.76 Mb/s (the line's 155.52 Mb/s less the section, line and path overhead)."""
CELL_BITS = 53 * 8
"""ITU-T I.361 §2.1: a cell is 53 octets, 48 of them payload."""
LLC_SNAP = 8
"""RFC 2684 §5.1: LLC 0xAA-AA-03, OUI 00-00-00, EtherType 0x0800 before a routed IPv4 PDU."""
AAL5_TRAILER = 8
"""ITU-T I.363.5: the CPCS-PDU trailer (UU, CPI, Length, CRC-32); the PDU is padded to
a whole number of 48-octet cell payloads."""
IP_UDP = 20 + 8
"""RFC 791 and RFC 768 headers."""

TIMING_ERROR_NS = 150_000
"""The emulator's timing error this test allows on the fastest of the datagrams: issue
17's target for one write is 100 us at the 99th percentile (benchmarks/emu_link.py
measures it), and a datagram is read from one TAP as well as written to another. The
host's delays only add to the model's time, so the fastest of ten is the estimate of
it (a path's fixed delay is its minimum, RFC 7679's Type-P-One-way-Delay-Minimum); in
two full runs of the test suite on the shared machine the median of ten carried
275-300 us of host delay where the fastest carried 59 and 103 us."""

SO_TIMESTAMPNS = 35
"""include/uapi/asm-generic/socket.h (x86-64): nanosecond receive timestamps in a
``SCM_TIMESTAMPNS`` control message (the same number)."""
ETH_P_ALL = 0x0003
"""include/uapi/linux/if_ether.h: every protocol; a packet socket sees the frames its host
sends only with it (dev_queue_xmit_nit hands them to ptype_all taps)."""
PACKET_OUTGOING = 4
"""include/uapi/linux/if_packet.h: a frame this host sent, seen by a packet socket."""


def cells(ip_length: int) -> int:
    """AAL5 cells of a routed IPv4 datagram of ``ip_length`` octets, LLC/SNAP encapsulated."""
    return math.ceil((ip_length + LLC_SNAP + AAL5_TRAILER) / 48)


def one_way_ns(ip_length: int) -> float:
    """From the host handing the datagram to its NIC to its last cell reaching the
    router's NIC, through one switch: the host's NIC sends the cells back to back, each
    in the first free cell slot of its OC-3 link (on average half a slot after it is
    handed over); the switch forwards each cell in the next slot of its output link, so
    the last one arrives one cell time after it reached the switch. The links have no
    propagation delay (the example gives none) and the hosts no SAR engine (their CPU
    profile gives none)."""
    cell_ns = CELL_BITS / OC3_CELL_RATE_BPS * 1e9
    return (cells(ip_length) + 1) * cell_ns + cell_ns / 2


def test_clip_two_lis_pings_through_the_emulated_atm_network_as_in_the_simulator() -> None:
    from qoslab.backends.emu import run_tests as run_emu
    from qoslab.backends.sim import run_tests as run_sim

    _, runs, _ = run_emu(load_scenario(EXAMPLE), source=EXAMPLE)
    record = runs[0].records[0]
    assert record["metrics"]["sent"] == record["metrics"]["received"] == 5
    (atm,) = record["emulated_links"]
    assert atm["kind"] == "atm"
    # Every host endpoint (ws1, both of r1's, ws2) carried the echoes both ways.
    assert sorted(m["port"] for m in atm["members"]) == ["r1/atm0", "r1/atm1", "ws1/atm0", "ws2/atm0"]
    assert all(m["delivered"]["frames"] >= 5 and not m["refused"] for m in atm["members"])
    _, sim_runs = run_sim(load_scenario(EXAMPLE), source=EXAMPLE)
    sim = sim_runs[0].records[0]["metrics"]
    assert sim["sent"] == sim["received"] == 5


def _packet_socket(ifname: str) -> socket.socket:
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    s.bind((ifname, ETH_P_ALL))
    s.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
    s.setblocking(False)
    return s


def _stamps(s: socket.socket, port: int, outgoing: bool) -> dict[int, int]:
    """Sequence number -> kernel timestamp (ns) of the UDP datagrams to ``port`` the
    packet socket saw (sent by this host if ``outgoing``, else received)."""
    got: dict[int, int] = {}
    while select.select([s], [], [], 0.2)[0]:
        data, anc, _, addr = s.recvmsg(65536, socket.CMSG_SPACE(16))
        ipv4 = data[12:14] == b"\x08\x00"
        if (addr[2] == PACKET_OUTGOING) != outgoing or not ipv4 or len(data) < 14 + 28 + 4 or data[14 + 9] != 17:
            continue
        ihl = (data[14] & 0x0F) * 4
        dport = struct.unpack("!H", data[14 + ihl + 2 : 14 + ihl + 4])[0]
        if dport != port:
            continue
        seq = struct.unpack("!I", data[14 + ihl + 8 : 14 + ihl + 12])[0]
        for level, kind, value in anc:
            if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS:
                sec, nsec = struct.unpack("qq", value[:16])
                got[seq] = sec * 1_000_000_000 + nsec
    return got


def _one_way(topo: Any, payload: int, count: int, port: int) -> list[int]:
    """One-way times (ns) of ``count`` UDP datagrams of ``payload`` octets from ws1 to
    r1's address in its LIS, 20 ms apart: r1's kernel's receive timestamp on its ATM
    port's TAP less ws1's kernel's transmit timestamp on its own."""
    from qoslab.backends.emu.links import _inside

    with _inside(topo.namespace("ws1")):
        sent_at = _packet_socket("atm0")
        sender = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    with _inside(topo.namespace("r1")):
        received_at = _packet_socket("atm0")
        receiver = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        receiver.bind(("192.0.2.254", port))
    try:
        # The first datagram waits for ARP, ATMARP and the SVC's set-up: not timed.
        sender.sendto(struct.pack("!I", 0xFFFFFFFF) + bytes(payload - 4), ("192.0.2.254", port))
        time.sleep(0.5)
        _stamps(sent_at, port, True), _stamps(received_at, port, False)
        for seq in range(count):
            sender.sendto(struct.pack("!I", seq) + bytes(payload - 4), ("192.0.2.254", port))
            time.sleep(0.02)
        out, into = _stamps(sent_at, port, True), _stamps(received_at, port, False)
    finally:
        for s in (sent_at, sender, received_at, receiver):
            s.close()
    return [into[k] - out[k] for k in range(count) if k in out and k in into]


# The largest datagram of the LIS (RFC 2225's default MTU, 9180): its 192 cells take
# 546 us, so the model's timing dominates the host's own delay and a store-and-forward
# switch (1087 us) would fail the test. A small datagram's 3 cells (11.3 us) lie below
# the host's read and write of a frame (45-300 us on the shared machine), so its one-way
# time measures the host, not the model: it is not asserted here (benchmarks/emu_link.py
# measures the host's timing error).
@pytest.mark.parametrize("payload", [9180 - IP_UDP])
def test_one_way_time_of_a_datagram_is_the_cell_arithmetic(tmp_path: Path, payload: int) -> None:
    from qoslab.backends.emu import prepare, topology
    from qoslab.backends.emu.links import EmulatedLink
    from qoslab.backends.emu.registry import RunRecord

    text = EXAMPLE.read_text()
    path = tmp_path / "clip.toml"
    path.write_text(text[: text.index("[[test]]")])
    scenario = load_scenario(path)
    net = prepare(scenario, source=path)
    runner = EmulatedLink(scenario.scenario.seed)
    topo = topology.build(net.config, RunRecord.start(str(path), runner.implementation), runner)
    try:
        times = _one_way(topo, payload, 10, 5001)
    finally:
        topology.teardown(topo)
    assert len(times) >= 8, times
    expected = one_way_ns(payload + IP_UDP)
    # 100 octets: 3 cells, 11.3 us; 9152: 192 cells, 546 us (a switch that stored the
    # whole PDU before forwarding it would take 1087 us).
    assert min(times) == pytest.approx(expected, abs=TIMING_ERROR_NS), (expected, sorted(times))


def test_lane_and_mpoa_are_refused_by_check_with_the_reason() -> None:
    import subprocess
    import sys

    for example, keys in (
        ("seed001_lane.toml", ["node.lane.role", "link[2].elan"]),
        ("seed001_mpoa.toml", ["node.rs.role", "link[2].elan"]),
    ):
        done = subprocess.run(
            [sys.executable, "-m", "qoslab", "check", str(EXAMPLES / example), "--backend", "emu"],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 2, done.stderr
        assert all(key in done.stderr for key in keys), done.stderr
        assert "LAN emulation (LANE) and MPOA over ATM are not emulated" in done.stderr
        assert "Traceback" not in done.stderr
    # Classical IP over ATM and 802.11 cells pass.
    for example in ("clip_two_lis.toml", "seed000_l2f_station.toml", "seed000_ics.toml"):
        done = subprocess.run(
            [sys.executable, "-m", "qoslab", "check", str(EXAMPLES / example), "--backend", "emu"],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
