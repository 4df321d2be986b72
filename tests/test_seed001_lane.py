"""Seed 001 §2.2-2.5: LAN emulation and MPOA, from the scenario language.

Expected values are computed here from the standards — IEEE 802.3 frame sizes at
10 Mb/s, AAL5 cell counts at OC-3 — not taken from the simulator. One number is
calibrated: the BUS's capacity, 53,000 cells/s, on the seed's Fig. 4; the rest are
predictions, compared with the seed's figures with the tolerance stated at each.
"""

from __future__ import annotations

import math
import subprocess
import sys
from functools import cache
from ipaddress import IPv4Address
from pathlib import Path

import pytest
from qoslab.backends.sim import lower, simulate
from qoslab.scenario import load_scenario, loads_scenario
from qoslab.studies.seed001 import BUS_FLOOD

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
LANE = EXAMPLES / "seed001_lane.toml"
MPOA = EXAMPLES / "seed001_mpoa.toml"

ETH_RATE = 10_000_000
PREAMBLE_SFD, IFG, FCS, ETH_HEADER = 8, 12, 4, 14
"""IEEE 802.3 §4.4.2 / §3.2: preamble + SFD, inter-frame gap, FCS, MAC header (octets)."""
OC3_CELLS_PER_S = 149_760_000 / 424
"""ITU-T G.707 §10.1.1: 149.76 Mb/s of 53-octet cells in OC-3c."""
LE_HEADER, AAL5_TRAILER, LLC_SNAP = 2, 8, 8
"""af-lane-0021.000 (LE header), I.363.5 (AAL5 trailer), RFC 2684 §5.1 (LLC/SNAP)."""


def cells(sdu: int) -> int:
    """AAL5 cells of an SDU: pad to 48 with the 8-octet trailer."""
    return math.ceil((sdu + AAL5_TRAILER) / 48)


def ethernet_frame(payload: int) -> int:
    """802.3 frame (header through FCS) of a UDP datagram."""
    return payload + 8 + 20 + ETH_HEADER + FCS


@cache
def run(path: Path, duration_s: float = 3.0, **edits):
    sc = load_scenario(path)
    test = sc.test[0]
    object.__setattr__(test, "duration", int(duration_s * 1e9))
    for key, value in edits.items():
        object.__setattr__(test, key, value)
    return simulate(lower(sc, test_index=0))


def sending_seconds(r) -> float:
    flow = r.flows[-1]
    return (flow.last_rx_ns - flow.first_rx_ns) / 1e9


def test_ethernet_to_ethernet_through_lane_fills_10_mbps():
    """Fig. 3: 'an effective exploitation of 99,4 %' of 10 Mb/s Ethernet with LANE edge
    devices. Full-sized frames: the goodput is the 802.3 payload efficiency of a
    1518-octet frame, and the Ethernet line is busy all the time."""
    r = run(LANE)
    flow = r.flows[-1]
    frame = ethernet_frame(1472)
    assert frame == 1518
    expected = ETH_RATE * 1472 / (frame + PREAMBLE_SFD + IFG)
    assert flow.throughput_bps == pytest.approx(expected, rel=0.01)
    assert flow.lost <= 0.01 * flow.sent
    # Utilisation of the tester's port while sending: frame bits plus preamble and gap
    # over the line's bits; the seed's 99.4 % ± 1 point.
    frames_per_s = flow.received / sending_seconds(r)
    utilisation = frames_per_s * (frame + PREAMBLE_SFD + IFG) * 8 / ETH_RATE
    assert utilisation == pytest.approx(0.994, abs=0.01)


def test_lane_joins_and_floods_only_while_resolving():
    """Fig. 5: 'The unknown packets did not load the BUS ... only 5-6 frames'. Only the
    ARP broadcasts and at most C10 = 1 frame per destination before each data-direct
    VCC (af-lane-0021.000 §5.2) go through the BUS."""
    r = run(LANE)
    lane = r.atm.lane
    assert len(lane.joined) == 2
    assert lane.data_direct_vccs >= 1
    # Two proxies, each resolving the other's side once: ≤ 1 unknown frame each way,
    # plus the broadcasts of ARP.
    assert lane.unknown_frames <= 2
    # With the flush protocol each client that flooded a frame to a destination sends
    # one LE_FLUSH_REQUEST down the BUS path before using its data-direct VCC.
    assert lane.flush_requests <= lane.unknown_frames
    assert lane.flush_responses == lane.flush_requests
    assert lane.bus_frames_in == lane.unknown_frames + lane.broadcast_frames + lane.flush_requests
    assert 1 <= lane.bus_frames_in <= 8, lane.bus_frames_in


# The study's own BUS flood scenario: the test and `qoslab reproduce 001` measure the same set-up.
BUS_SCENARIO = BUS_FLOOD


def test_the_bus_forwards_at_its_calibrated_cell_rate():
    """Fig. 4: 'The maximum BUS throughput is approx. 53.000 cells per second' — the
    calibration point: a host on OC-3 floods broadcasts, the BUS forwards 53,000 cells/s
    of them and drops the rest."""
    config = lower(loads_scenario(BUS_SCENARIO), test_index=0)
    # A test's destination is a node; the flood goes to the subnet's broadcast address.
    flow = next(f.root for f in config.flows if f.root.kind == "udp")
    flow.to = IPv4Address("192.0.2.255")
    r = simulate(config)
    lane = r.atm.lane
    per_frame = cells(ethernet_frame(1472) - FCS + LE_HEADER)
    assert per_frame == 32
    # Frames the BUS forwarded in the 2 s of the flood; after it, its queue (64 frames,
    # the default) and the frame in service drain.
    forwarded_cells = (lane.bus_frames_out - 65) * per_frame
    assert forwarded_cells / 2.0 == pytest.approx(53_000, rel=0.01)
    offered = OC3_CELLS_PER_S / per_frame * 2.0
    assert lane.bus_frames_dropped == pytest.approx(offered - lane.bus_frames_out, rel=0.02)


def test_mpoa_shortcut_carries_the_flow_at_the_seeds_cell_rate():
    """§2.5: 'With MPOA the route server established a shortcut ... 27.000 cells as the
    maximum throughput ... 11,45 Mbps ... unidirectional'. A prediction: one 10 Mb/s
    Ethernet's full-sized frames, as LLC/SNAP IP packets (RFC 2684 §5.1) on the
    shortcut, in cells."""
    r = run(MPOA)
    lane = r.atm.lane
    flow = r.flows[-1]
    assert lane.shortcuts == 1 and lane.mpoa_resolution_requests == 1
    # Af-mpoa-0087.000 MPC-p1: the first 10 packets go through the route server.
    assert flow.received - lane.shortcut_packets == pytest.approx(10, abs=3)
    frames_per_s = ETH_RATE / ((ethernet_frame(1472) + PREAMBLE_SFD + IFG) * 8)
    per_packet = cells(1500 + LLC_SNAP)
    shortcut_cells = frames_per_s * per_packet
    assert shortcut_cells == pytest.approx(27_000, rel=0.05)  # the seed, ±5 %
    # The simulated shortcut carries exactly that: packets on it over the sending time.
    measured = lane.shortcut_packets * per_packet / sending_seconds(r)
    assert measured == pytest.approx(shortcut_cells, rel=0.01)
    assert measured * 424 / 1e6 == pytest.approx(11.45, rel=0.05)


def test_mpoa_equals_lane_without_a_router():
    """§2.5: 'Otherwise the performance was identical with LANE without router
    integration'. Ethernet to Ethernet, the same 10 Mb/s goodput either way."""
    lane = run(LANE).flows[-1].throughput_bps
    mpoa = run(MPOA).flows[-1].throughput_bps
    assert mpoa == pytest.approx(lane, rel=0.01)


def pair_scenario(method: str, payload: int) -> str:
    """ws1 and ws2 on OC-3 through one switch, by CLIP, LANE (one ELAN) or MPOA (two
    ELANs and a route server)."""
    head = '[scenario]\nname = "pair"\nseed = 1\n[node.sw]\nrole = "atm-switch"\n'
    test = f'[[test]]\nmethod = "udp.flow"\nfrom = "ws1"\nto = "{{to}}"\npayload = {payload}\nrate = "0 bps"\nduration = "1 s"\n'
    if method == "clip":
        return (
            head
            + '[node.ws1]\nrole = "host"\naddress = "192.0.2.1/24"\n[node.ws2]\nrole = "host"\naddress = "192.0.2.2/24"\n'
            + "atmarp_server = true\n"
            + '[[link]]\ntype = "atm"\nends = ["ws1", "sw"]\n[[link]]\ntype = "atm"\nends = ["sw", "ws2"]\n'
            + test.format(to="ws2")
        )
    if method == "lane":
        return (
            head
            + '[node.ws1]\nrole = "host"\naddress = "192.0.2.1/24"\n[node.ws2]\nrole = "host"\naddress = "192.0.2.2/24"\n'
            + '[node.lane]\nrole = "lane-server"\nelans = ["e"]\n'
            + '[[link]]\ntype = "atm"\nends = ["ws1", "sw"]\nelan = "e"\n[[link]]\ntype = "atm"\nends = ["sw", "ws2"]\nelan = "e"\n'
            + '[[link]]\ntype = "atm"\nends = ["lane", "sw"]\n'
            + test.format(to="ws2")
        )
    return (
        head
        + '[node.ws1]\nrole = "host"\naddress = "192.0.2.1/25"\ngateway = "192.0.2.126"\n'
        + '[node.ws2]\nrole = "host"\naddress = "192.0.2.129/25"\ngateway = "192.0.2.254"\n'
        + '[node.rs]\nrole = "mpoa-server"\naddress = ["192.0.2.126/25", "192.0.2.254/25"]\n'
        + '[node.lane]\nrole = "lane-server"\nelans = ["a", "b"]\n'
        + '[[link]]\ntype = "atm"\nends = ["ws1", "sw"]\nelan = "a"\n[[link]]\ntype = "atm"\nends = ["sw", "ws2"]\nelan = "b"\n'
        + '[[link]]\ntype = "atm"\nends = ["rs", "sw"]\nelan = "a"\n[[link]]\ntype = "atm"\nends = ["rs", "sw"]\nelan = "b"\n'
        + '[[link]]\ntype = "atm"\nends = ["lane", "sw"]\n'
        + test.format(to="ws2")
    )


PAIR_PAYLOAD = 1440
"""A payload where the three differ: 1468-octet IP packets are 31 cells with CLIP's
LLC/SNAP but 32 with LANE's Ethernet and LE headers."""


def pair_cells(method: str, payload: int) -> int:
    ip = payload + 8 + 20
    if method == "lane":
        return cells(ip + ETH_HEADER + LE_HEADER)
    return cells(ip + LLC_SNAP)  # CLIP, and MPOA's shortcut


@pytest.mark.parametrize("method", ["clip", "lane", "mpoa"])
def test_clip_lane_mpoa_on_one_host_pair(method):
    """The same two hosts on OC-3: goodput is the cell rate over each method's cells per
    datagram (MPOA after its shortcut: CLIP's encapsulation)."""
    r = simulate(lower(loads_scenario(pair_scenario(method, PAIR_PAYLOAD)), test_index=0))
    flow = r.flows[-1]
    expected = OC3_CELLS_PER_S / pair_cells(method, PAIR_PAYLOAD) * PAIR_PAYLOAD * 8
    assert flow.throughput_bps == pytest.approx(expected, rel=0.02), (
        method,
        flow.throughput_bps / 1e6,
        expected / 1e6,
    )


def test_pair_cells_differ_as_computed():
    assert (pair_cells("clip", PAIR_PAYLOAD), pair_cells("lane", PAIR_PAYLOAD), pair_cells("mpoa", PAIR_PAYLOAD)) == (
        31,
        32,
        31,
    )


def test_examples_run_under_qoslab_run():
    for path in (LANE, MPOA):
        proc = subprocess.run(
            [sys.executable, "-m", "qoslab", "run", str(path)], capture_output=True, text=True, check=False, timeout=600
        )
        assert proc.returncode == 0, proc.stderr[-2000:]
        assert "Traceback" not in proc.stderr


def test_the_studys_utilisation_never_passes_the_line():
    """The study's Fig. 3 row: N frames received span N - 1 frame times, so a line kept
    full reads 100 %, never more."""
    from qoslab.studies.seed001 import run_lane

    util = run_lane("seed001_lane.toml", seconds=1)["metrics"]["utilisation_pct"]
    assert 99.0 <= util <= 100.0, util
