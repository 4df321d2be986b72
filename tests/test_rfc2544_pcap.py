"""`--pcap` on an RFC 2544 search: the search's last trial, run once more with a capture.

The frames are counted in the capture by reading the pcap here (Ethernet II, IPv4, UDP
headers decoded by hand: RFC 791, RFC 768), and compared with what the simulator says
that trial sent."""

from __future__ import annotations

import struct
from pathlib import Path

from conftest import TWO_HOSTS, pcap_packets
from qoslab.backends.sim import run_tests
from qoslab.methods.rfc2544 import DST_PORT
from qoslab.scenario import loads_scenario

SEARCH = (
    TWO_HOSTS.format(name="rfc2544 capture", seed=1)
    + """
[[link]]
type = "ethernet"
rate = "10 Mbps"
ends = ["a", "b"]

[[test]]
method = "rfc2544.throughput"
from = "a"
to = "b"
frame_sizes = [1518]
duration = "1 s"
wait = "0.1 s"
"""
)
"""Two hosts on 10 Mb/s Ethernet and one short RFC 2544 throughput search between them."""


def test_rfc2544_search_captures_its_last_trial(tmp_path: Path) -> None:
    scenario = loads_scenario(SEARCH)
    _, runs = run_tests(scenario, pcap_dir=tmp_path)
    (run,) = runs
    files = sorted(p.name for p in (tmp_path / "test0").glob("*.pcap"))
    assert "a-eth0.pcap" in files and "b-eth0.pcap" in files, files
    # The test frames a put on its port: IPv4 (ethertype 0x0800), UDP (protocol 17),
    # from a's address to b's, to the tester's port.
    sent_in_capture = 0
    for frame in pcap_packets(tmp_path / "test0" / "a-eth0.pcap"):
        if struct.unpack("!H", frame[12:14])[0] != 0x0800:
            continue
        ip = frame[14:]
        header = (ip[0] & 0x0F) * 4
        if ip[9] != 17 or ip[12:16] != bytes([10, 0, 0, 1]) or ip[16:20] != bytes([10, 0, 0, 2]):
            continue
        if struct.unpack("!H", ip[header + 2 : header + 4])[0] == DST_PORT:
            sent_in_capture += 1
    udp = [f for f in run.results.flows if f.kind == "udp"]
    assert udp and sent_in_capture == sum(f.sent for f in udp) > 0
    assert all(r["parameters"]["pcap"] == "the search's last trial" for r in run.records)


def test_without_pcap_nothing_is_captured_or_said(tmp_path: Path) -> None:
    _, runs = run_tests(loads_scenario(SEARCH))
    assert all("pcap" not in r["parameters"] for r in runs[0].records)
