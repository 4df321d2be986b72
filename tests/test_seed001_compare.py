"""Seed 001's comparison of CLIP, LANE and MPOA for one pair of hosts (the study's
``compare/*`` points, examples/seed001_compare_{clip,lane,mpoa}.toml): the two
Pentium-II hosts with the same CPU profiles, buffers and OC-3 links over each method.

Checked against what follows from the standards and the set-up, computed here: at MTU
1500 a full TCP segment is 32 cells with CLIP's LLC/SNAP (RFC 2684 §5.1) and with LANE's
LE and Ethernet headers (af-lane-0021.000), so with the same hosts the goodputs agree;
the MPOA shortcut carries the flow only when its threshold can be reached; LANE and MPOA
clients join before they carry anything, CLIP hosts do not."""

from __future__ import annotations

from functools import cache

import pytest
from qoslab.studies.seed001 import COMPARE, Seed001, compare_rows, run_compare


def cells(octets: int) -> int:
    return -(-octets // 48)


@cache
def record(key: str) -> dict:
    return run_compare(key, seconds=2)["metrics"]


def test_full_segments_cost_the_same_cells_over_clip_and_lane():
    mss = 1500 - 40
    clip = cells(mss + 40 + 8 + 8)  # LLC/SNAP header, AAL5 trailer
    lane = cells(mss + 40 + 14 + 2 + 8)  # Ethernet header, LE header, AAL5 trailer
    assert clip == lane == 32
    assert record("clip")["cells_per_segment"] == clip
    assert record("lane")["cells_per_segment"] == lane
    assert record("mpoa")["cells_per_segment"] == clip  # routed LLC/SNAP on the shortcut
    assert record("clip9180")["cells_per_segment"] == cells(9180 + 8 + 8)


def test_same_hosts_same_goodput_at_the_same_mtu():
    # The same cells per segment and the same host CPUs: the hosts bind, not the method.
    base = record("clip")["throughput_mbps"]
    for key in ("lane", "mpoa-routed", "mpoa"):
        assert record(key)["throughput_mbps"] == pytest.approx(base, rel=0.02), key
    # CLIP's own MTU carries six times the payload per packet: more goodput, by what the
    # adapters give a segment of each size (cpu_profiles.toml atm_nic: a set-up per PDU,
    # then the cells at the engine's rate), computed here. NT 4.0 sends no timestamps, so
    # a segment carries MTU - 40 octets. The start (slow start from one segment, NT's lone
    # first segments waiting 200 ms) costs both runs about the same share of their 2 s.
    from qoslab.data import cpu_profiles

    nic = cpu_profiles()["pentium-ii-350mhz"].atm_nic

    def adapter_rate(mtu: int) -> float:
        return (mtu - 40) / (nic.sar_pdu_ns / 1e9 + cells(mtu + 8 + 8) / nic.sar_cell_rate)

    ratio = record("clip9180")["throughput_mbps"] / base
    assert ratio == pytest.approx(adapter_rate(9180) / adapter_rate(1500), rel=0.05)
    assert ratio > 1.4


def test_mpoa_shortcut_only_when_its_threshold_is_reachable():
    assert record("mpoa")["shortcut_packets"] > 0
    assert record("mpoa-routed")["shortcut_packets"] == 0
    # Through the route server one more hop than on the shortcut.
    assert record("mpoa-routed")["ping_last_ms"] > record("mpoa")["ping_last_ms"]


def test_lane_clients_join_first_and_first_packets_pay_for_resolution():
    assert record("clip")["joined_ms"] == 0
    assert record("lane")["joined_ms"] > 0 and record("mpoa")["joined_ms"] > 0
    for key, *_ in COMPARE:
        x = record(key)
        assert x["ping_first_ms"] > x["ping_last_ms"], key
        assert x["svc_setups"] >= 1, key


def test_the_report_shows_one_figure_and_one_table_of_the_comparison():
    data = {f"compare/{k}": [run_compare(k, seconds=2)] for k, *_ in COMPARE}
    study = Seed001()
    assert [r["parameters"]["method"] for r in compare_rows(data)] == [k for k, *_ in COMPARE]
    names = [f.name for f in study.figures(data)]
    assert names == ["seed001_compare"]
    tables = study.measured_tables(data)
    assert len(tables) == 1
    title, header, rows = tables[0]
    assert len(rows) == len(COMPARE) and len(rows[0]) == len(header)
