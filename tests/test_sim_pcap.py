"""Captures of simulated runs: tshark reads every file without an error, the 802.11
frames on the air carry the address cases of seed 000 Table 1, and the same scenario
and seed give byte-identical files."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from qoslab.backends.sim import format_mac, lower_network, simulate
from qoslab.methods.ping import ping_flow
from qoslab.scenario import load_scenario

EXAMPLES = Path(__file__).parent.parent / "examples"
TSHARK = shutil.which("tshark")
pytestmark = pytest.mark.skipif(
    TSHARK is None and not os.environ.get("QOSLAB_REQUIRE_TSHARK"), reason="tshark not installed"
)
SECOND = 1_000_000_000


def capture(example: str, out: Path) -> dict:
    net = lower_network(load_scenario(EXAMPLES / example))
    ix = net.node_index
    flows = [
        ping_flow(ix("ws1"), str(net.destination("ws1", "ws2")), count=2, interval_ns=SECOND, payload=56, flow_id=1),
        ping_flow(
            ix("ws2"),
            str(net.destination("ws2", "ap")),
            count=2,
            interval_ns=SECOND,
            payload=56,
            flow_id=2,
            start_ns=SECOND // 2,
        ),
    ]
    return simulate(net.with_flows(flows, 4 * SECOND), pcap_dir=out)


def tshark(pcap: Path, *args: str) -> str:
    proc = subprocess.run(
        [TSHARK or "tshark", "-n", "-r", str(pcap), *args], capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0, f"{pcap.name}: {proc.stderr}"
    return proc.stdout


def test_every_capture_reads_cleanly_and_the_air_shows_table_1(tmp_path):
    results = capture("seed000_l3f.toml", tmp_path)
    assert all(f.received == f.sent for f in results.flows)
    files = sorted(tmp_path.glob("*.pcap"))
    names = {f.stem for f in files}
    assert {"ws1-eth0", "ws2-eth0", "a-wlan0", "a-eth0", "wlan-air"} <= names
    for pcap in files:
        text = tshark(pcap, "-V", "-o", "ip.check_checksum:TRUE")
        for bad in ("Malformed Packet", "[Checksum Status: Bad]", "Exception occurred"):
            assert bad not in text, f"{pcap.name}: {bad}"
    # On the air, station A sends To-DS data frames (Table 1 case 01, wlan.fc.ds == 1) and
    # the AP From-DS ones (case 10, ds == 2); nobody sends four-address frames (ds == 3).
    # (Beacons and the control frames, also on the air, have ds == 0.)
    ds = set(tshark(tmp_path / "wlan-air.pcap", "-Y", "wlan.fc.type == 2", "-T", "fields", "-e", "wlan.fc.ds").split())
    assert {int(v, 16) for v in ds} == {1, 2}
    # Every frame station A sends on the air (To-DS) has its own adapter's MAC as source
    # address: L3F rewrites the MAC header, so the adapter never meets a foreign source.
    net = lower_network(load_scenario(EXAMPLES / "seed000_l3f.toml"))
    a_wifi = format_mac(next(p.mac for p in net.ports[net.node_index("a")] if p.kind == "wifi"))
    rows = [
        line.split()
        for line in tshark(
            tmp_path / "wlan-air.pcap", "-Y", "wlan.fc.type == 2", "-T", "fields", "-e", "wlan.fc.ds", "-e", "wlan.sa"
        ).splitlines()
    ]
    to_ds_sources = {sa for ds, sa in rows if int(ds, 16) == 1}
    assert to_ds_sources == {a_wifi}


def test_same_scenario_and_seed_give_identical_captures(tmp_path):
    capture("seed000_l3f.toml", tmp_path / "one")
    capture("seed000_l3f.toml", tmp_path / "two")
    one = {p.name: p.read_bytes() for p in (tmp_path / "one").glob("*.pcap")}
    two = {p.name: p.read_bytes() for p in (tmp_path / "two").glob("*.pcap")}
    assert one and one == two
