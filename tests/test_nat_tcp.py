"""TCP through a NAT (issue 14): a host behind a masquerading router opens a TCP
connection to a server outside and moves data at the bottleneck's rate, and an
unsolicited connection from outside is refused, as seed 000 §2.3 says of Windows ICS
("any traffic initiated from outside hosts cannot be forwarded to internal hosts").

The server sees the connection come from the router's outside address (RFC 3022 §2.2,
NAPT); before the fix it looked the segments up by the inside address and dropped them
all ("no TCP socket"), so nothing moved.

The bottleneck is the 10 Mb/s WAN Ethernet: a 1500-byte IP packet takes 1538 bytes of
the wire (preamble and SFD 8, header 14, FCS 4, inter-frame gap 12: IEEE 802.3), and
carries 1448 bytes of TCP data (1500 − 20 IP − 20 TCP − 12 timestamp option, RFC 7323),
so goodput is at most 10 Mb/s × 1448 / 1538.
"""

from __future__ import annotations

import pytest
from qoslab.backends.sim import run_tests
from qoslab.scenario import loads_scenario

WAN_RATE = 10e6
LINE_GOODPUT = 1448 / 1538

NETWORK = """
[scenario]
name = "a host behind a NAT router, a server outside"
seed = 1

[node.inside]
role = "host"
address = "192.168.0.2/24"
gateway = "192.168.0.1"

[node.gw]
role = "{role}"
address = ["192.168.0.1/24", "203.0.113.1/24"]
{nat}

[node.server]
role = "host"
address = "203.0.113.2/24"
routes = [{{ to = "192.168.0.0/24", via = "203.0.113.1" }}]

[[link]]
name = "lan"
type = "ethernet"
rate = "100 Mbps"
ends = ["inside", "gw"]

[[link]]
name = "wan"
type = "ethernet"
rate = "10 Mbps"
delay = "5 ms"
ends = ["gw", "server"]
"""

# A SOHO router (nat = true on its WAN port) and Windows ICS (a bridge node with
# forwarding = "nat", its outside the port towards its gateway): the two NATs the
# language has.
NATS = {
    "ap-router": ("ap-router", "nat = true"),
    "ics": ("bridge", 'forwarding = "nat"\ngateway = "203.0.113.2"'),
}


def bulk(nat: str, src: str, dst: str, duration: float = 5.0, window: str | None = None) -> dict:
    role, setting = NATS[nat]
    text = (
        NETWORK.format(role=role, nat=setting)
        + f'\n[[test]]\nmethod = "tcp.bulk"\nfrom = "{src}"\nto = "{dst}"\nduration = "{duration} s"\n'
    )
    if window:
        text += f'window = "{window}"\n'
    _, (run,) = run_tests(loads_scenario(text))
    (record,) = run.records
    record["drop_log"] = run.results.drop_log
    return record


@pytest.mark.parametrize("nat", sorted(NATS))
def test_outbound_tcp_through_the_nat_fills_the_bottleneck(nat):
    duration = 5.0
    # iperf3 -w 64K: a window above the path's bandwidth-delay product (10 Mb/s × a
    # round trip of 2 × (5 ms + 1.23 ms + 0.12 ms) of propagation and serialisation,
    # about 16 kB) keeps the line busy, and below the 1000-frame queue it cannot
    # overflow it: what is measured is the path, not a congestion controller's losses.
    rtt_s = 2 * (0.005 + 1538 * 8 / WAN_RATE + 1538 * 8 / 100e6)
    assert WAN_RATE * rtt_s / 8 < 64_000 < 1000 * 1448
    record = bulk(nat, "inside", "server", duration, window="64 kB")
    ceiling_mbps = WAN_RATE * LINE_GOODPUT / 1e6
    # What the receiver got inside the test's window: the interval reports, which add
    # up to the whole test (iperf3's convention).
    in_window = sum(iv["sum"]["bytes"] for iv in record["intervals"])
    assert record["intervals"][-1]["sum"]["end_s"] == duration
    for iv in record["intervals"]:
        assert iv["sum"]["bits_per_second"] / 1e6 <= ceiling_mbps * 1.001
    # One slow start of a few round trips, then the line: within 5 % of the ceiling
    # (before the fix: nothing at all).
    assert record["metrics"]["throughput_mbps"] >= 0.95 * ceiling_mbps
    assert record["metrics"]["throughput_mbps"] == pytest.approx(in_window * 8 / duration / 1e6, rel=1e-3)
    assert record["metrics"]["retransmits"] == 0


@pytest.mark.parametrize("nat", sorted(NATS))
def test_inbound_unsolicited_tcp_is_refused(nat):
    # The server has a route to the inside subnet through the router, so its SYNs reach
    # the NAT: with no mapping they go no further (RFC 3022 §2.2: a session is opened
    # from inside; seed 000 §2.3).
    record = bulk(nat, "server", "inside", duration=2.0)
    assert record["metrics"]["bytes_received"] == 0
    drops = record["drop_log"]
    # The SYN and its retransmission one initial RTO later (RFC 6298 §2.1: 1 s).
    assert len(drops) == 2
    for d in drops:
        assert d.node == "gw"
        assert "no mapping for inbound TCP to 192.168.0.2:5201" in d.reason
        assert d.summary.startswith("TCP 203.0.113.2 -> 192.168.0.2")


@pytest.mark.parametrize("nat", sorted(NATS))
def test_parallel_streams_through_the_nat_each_reach_their_own_receiver(nat):
    # iperf3 -P 3: three connections from one inside host, each its own source port,
    # each mapped by the NAT; every receiver must get its own connection's bytes, and
    # the three share the line: each about a third of it (20 kB windows, 60 kB in all,
    # above the path's ~16 kB bandwidth-delay product).
    duration = 3.0
    role, setting = NATS[nat]
    text = NETWORK.format(role=role, nat=setting) + (
        f'\n[[test]]\nmethod = "tcp.bulk"\nfrom = "inside"\nto = "server"\nduration = "{duration} s"\nstreams = 3\nwindow = "20 kB"\n'
    )
    _, (run,) = run_tests(loads_scenario(text))
    (record,) = run.records
    ceiling_mbps = WAN_RATE * LINE_GOODPUT / 1e6
    assert record["metrics"]["throughput_mbps"] >= 0.95 * ceiling_mbps
    for s in record["streams"]:
        assert s["receiver"]["bytes"] * 8 / duration / 1e6 >= 0.9 * ceiling_mbps / 3
    assert run.results.drop_log == []
