"""802.11 defects of issue 14, each with the scenario that shows it and an expectation from
the standard's rule or a computation written here (IEEE 802.11-2020 clauses 9, 10, 11, 16):

- an AP relays between two of its stations (§4.5.4.2, §11.3: To DS from one, From DS to
  the other), and not with client isolation;
- WDS takes effect when both ends are WDS-capable (Table 9-26 case 11), is refused otherwise;
- the AP's transmit queue bounds the delay beyond the knee: (queue + 1) frame services;
- beacons every 100 TU at 1 Mb/s, 0.69 % of the air; the air capture shows every PPDU once
  with a radiotap header, as tshark dissects it;
- a propagation delay on a wifi link, refused beyond half a slot by `check` and `run` alike;
- routes on a plain AP are refused;
- the L3F bridge's own first datagram is held while ARP resolves (RFC 1122 §2.3.2.2).
"""

from __future__ import annotations

import math
import os
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from qoslab.backends.sim import format_mac, lower_network, reachability, simulate
from qoslab.errors import InputError
from qoslab.methods.ping import ping_flow
from qoslab.plan.models import UdpFlow
from qoslab.scenario import load_scenario, loads_scenario

EXAMPLES = Path(__file__).parent.parent / "examples"
TSHARK = shutil.which("tshark")
needs_tshark = pytest.mark.skipif(
    TSHARK is None and not os.environ.get("QOSLAB_REQUIRE_TSHARK"), reason="tshark not installed"
)
SECOND = 1_000_000_000
US = 1_000

# IEEE 802.11-2020 clause 16 (HR/DSSS) timing, long preamble.
DIFS_US, SLOT_US, SIFS_US, CW_MIN = 50, 20, 10, 31
PLCP_LONG_US, PLCP_SHORT_US = 192, 96


def txtime_us(psdu_bytes: int, kbps: int, plcp_us: int = PLCP_LONG_US) -> int:
    """TXTIME of a DSSS/CCK PPDU: PLCP + 8 x bytes / rate, rounded up to whole us (§16.2.3.5)."""
    return plcp_us + math.ceil(psdu_bytes * 8 * 1000 / kbps)


# A Beacon (§9.3.3.2, Table 9-27) of an 802.11b AP with SSID "linksys": header 24,
# Timestamp 8, Beacon Interval 2, Capability 2, SSID 2 + 7, Supported Rates 2 + 4,
# DS Parameter Set 2 + 1, TIM 2 + 4, FCS 4.
BEACON_BYTES = 24 + 8 + 2 + 2 + (2 + 7) + (2 + 4) + (2 + 1) + (2 + 4) + 4
BEACON_US = txtime_us(BEACON_BYTES, 1000)  # at 1 Mb/s, always the long format
TU_US = 1024
BEACON_INTERVAL_US = 100 * TU_US


def bss(extra_link: str = "", extra_ap: str = "", stations: int = 2, preamble: str = "long") -> str:
    names = [f"s{i + 1}" for i in range(stations)]
    nodes = "".join(f'\n[node.{n}]\nrole = "host"\naddress = "10.0.0.{11 + i}/24"\n' for i, n in enumerate(names))
    return f"""
[scenario]
name = "one BSS"
seed = 1

[node.ap]
role = "ap"
address = "10.0.0.1/24"
{extra_ap}
{nodes}
[[link]]
name = "wlan"
type = "wifi"
standard = "802.11b"
rate = "11 Mbps"
preamble = "{preamble}"
ap = "ap"
stations = {names!r}
{extra_link}
""".replace("'", '"')


def ping(net, a: str, b: str, count: int = 3, start_ns: int = 0, flow_id: int = 1) -> dict:
    return ping_flow(
        net.node_index(a),
        str(net.destination(a, b)),
        count=count,
        interval_ns=SECOND,
        payload=56,
        flow_id=flow_id,
        start_ns=start_ns,
    )


def tshark_fields(pcap: Path, *fields: str, display: str | None = None) -> list[list[str]]:
    args = [TSHARK or "tshark", "-n", "-r", str(pcap), "-T", "fields", "-E", "separator=|"]
    if display:
        args += ["-Y", display]
    for f in fields:
        args += ["-e", f]
    proc = subprocess.run(args, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    return [line.split("|") for line in proc.stdout.splitlines()]


# --------------------------------------------------------------------------- relay


def test_two_stations_of_one_ap_reach_each_other_through_its_relay():
    _, pairs = reachability(loads_scenario(bss()))
    by = {(p["from"], p["to"]): p for p in pairs}
    for pair in (("s1", "s2"), ("s2", "s1"), ("s1", "ap"), ("ap", "s2")):
        assert by[pair]["received"] == by[pair]["sent"] > 0, (pair, by[pair]["drops"])


def test_client_isolation_stops_the_relay():
    _, pairs = reachability(loads_scenario(bss(extra_ap="isolate_stations = true")))
    by = {(p["from"], p["to"]): p for p in pairs}
    assert by[("s1", "s2")]["received"] == 0
    assert by[("s1", "ap")]["received"] == by[("s1", "ap")]["sent"]


@needs_tshark
def test_the_air_shows_to_ds_from_the_sender_and_from_ds_from_the_ap(tmp_path):
    net = lower_network(loads_scenario(bss()))
    results = simulate(net.with_flows([ping(net, "s1", "s2")], 4 * SECOND), pcap_dir=tmp_path)
    assert results.flows[0].received == 3
    mac = {
        n: format_mac(next(p.mac for p in net.ports[net.node_index(n)] if p.kind == "wifi")) for n in ("ap", "s1", "s2")
    }
    rows = tshark_fields(
        tmp_path / "wlan-air.pcap", "wlan.fc.ds", "wlan.ta", "wlan.ra", "wlan.sa", "wlan.da", display="icmp"
    )
    # Table 9-26: each echo request goes s1 -> AP To DS (RA = BSSID, DA = s2), then AP -> s2 From
    # DS (RA = DA = s2, SA = s1); the replies the other way; nothing goes station to station.
    requests = [r for r in rows if r[3] == mac["s1"]]
    assert Counter((r[0], r[1], r[2]) for r in requests) == {
        ("0x01", mac["s1"], mac["ap"]): 3,
        ("0x02", mac["ap"], mac["s2"]): 3,
    }
    assert all(r[4] == mac["s2"] for r in requests)


# --------------------------------------------------------------------------- WDS


def test_wds_on_one_end_only_is_refused_with_its_reason():
    l2f = (EXAMPLES / "seed000_l2f_station.toml").read_text()
    ap_only = l2f.replace("nat = true", "nat = true\nwds = true", 1)
    with pytest.raises(InputError) as err:
        lower_network(loads_scenario(ap_only))
    assert "none of its stations sends them" in str(err.value) and "node.ap.wds" in str(err.value)
    station_only = l2f.replace("wds = false", "wds = true")
    with pytest.raises(InputError) as err:
        lower_network(loads_scenario(station_only))
    assert "does not accept them" in str(err.value) and "node.a.wds" in str(err.value)


@needs_tshark
def test_wds_at_both_ends_carries_the_wired_source_in_four_address_frames(tmp_path):
    # Seed 000 §2.1: L2F through a station works only with case 11 (Table 1) at both ends.
    both = (
        (EXAMPLES / "seed000_l2f_station.toml")
        .read_text()
        .replace("wds = false", "wds = true")
        .replace("nat = true", "nat = true\nwds = true", 1)
    )
    scenario = loads_scenario(both)
    _, pairs = reachability(scenario)
    by = {(p["from"], p["to"]): p for p in pairs}
    assert by[("ws1", "ws2")]["received"] == by[("ws1", "ws2")]["sent"] > 0
    assert by[("ws2", "ws1")]["received"] == by[("ws2", "ws1")]["sent"] > 0
    net = lower_network(scenario)
    simulate(net.with_flows([ping(net, "ws2", "ws1", count=1)], 3 * SECOND), pcap_dir=tmp_path)
    ws2 = format_mac(net.ports[net.node_index("ws2")][0].mac)
    # The frames are WEP-protected (the example's wep-128): the MAC header tells the case.
    # Every individually addressed data frame between the AP and A has four addresses;
    # group frames from the AP stay three-address (From DS) as the standard's case 10.
    rows = tshark_fields(
        tmp_path / "wlan-air.pcap", "wlan.fc.ds", "wlan.sa", display="wlan.fc.type == 2 && wlan.ra != ff:ff:ff:ff:ff:ff"
    )
    assert rows and all(r[0] == "0x03" for r in rows)
    assert ws2 in {r[1] for r in rows}


# --------------------------------------------------------------------------- the AP's queue


def downlink(queue: str) -> tuple[dict, dict]:
    text = f"""
[scenario]
name = "downlink through an AP"
seed = 1
[node.h]
role = "host"
address = "10.0.0.2/24"
[node.ap]
role = "ap"
address = "10.0.0.1/24"
[node.s1]
role = "host"
address = "10.0.0.11/24"
[[link]]
type = "ethernet"
rate = "100 Mbps"
ends = ["h", "ap"]
[[link]]
name = "wlan"
type = "wifi"
standard = "802.11b"
rate = "11 Mbps"
ap = "ap"
stations = ["s1"]
{queue}
"""
    net = lower_network(loads_scenario(text))
    warm = ping(net, "h", "s1", count=1, flow_id=9)  # ARP resolved before the load
    udp = UdpFlow(
        kind="udp",
        id=1,
        from_=net.node_index("h"),
        to=str(net.destination("h", "s1")),
        dst_port=5001,
        payload=1472,
        rate_pps=1000.0,
        start_ns=SECOND,
        stop_ns=4 * SECOND,
    )
    results = simulate(net.with_flows([warm, udp], 5 * SECOND))
    flow = next(f for f in results.flows if f.id == 1)
    return flow, results.links[1].members[0]


# One 1472-byte UDP datagram from the AP alone (no contention): DIFS, the mean of CWmin's
# backoff (15.5 slots), the 1536-byte MPDU at 11 Mb/s, SIFS, the Ack at 2 Mb/s (§10.3,
# clause 16); beacons take BEACON_US of every 100 TU of air besides.
SERVICE_US = (DIFS_US + CW_MIN / 2 * SLOT_US + txtime_us(1536, 11000) + SIFS_US + txtime_us(14, 2000)) / (
    1 - BEACON_US / BEACON_INTERVAL_US
)


@pytest.mark.parametrize(("queue", "frames"), [("", 100), ("queue = { ap = 20 }", 20)])
def test_the_aps_queue_bounds_the_delay_beyond_the_knee(queue, frames):
    # 11.8 Mb/s offered into 6.1 Mb/s: the AP's queue stays full. A place frees when a
    # frame leaves and the next frame to start is the head; the first datagram to arrive
    # after that (1 ms apart: on average 0.5 ms later) takes the place, and waits for the
    # frames - 1 ahead of it, the head already 0.5 ms into its service, and its own service.
    flow, ap = downlink(queue)
    assert ap.queue_drops > 0
    expected_us = frames * SERVICE_US - 500
    assert flow.latency_ns.p50 / US == pytest.approx(expected_us, rel=0.05)


# --------------------------------------------------------------------------- beacons and the air


def test_beacons_every_100_tu_take_0_69_percent_of_the_air():
    net = lower_network(loads_scenario(bss(stations=1)))
    results = simulate(net.with_flows([], SECOND))
    ap = results.links[0].members[0]
    # TBTTs at 0, 102.4, ..., 921.6 ms within the first second.
    assert ap.beacons == 10
    assert ap.airtime_ns == 10 * BEACON_US * US
    assert BEACON_US / BEACON_INTERVAL_US == pytest.approx(0.006875)


@needs_tshark
@pytest.mark.parametrize(
    ("preamble", "control", "ack_short"), [("long", "bss", "0"), ("short", "bss", "1"), ("short", "long", "0")]
)
def test_the_air_capture_shows_every_ppdu_once_with_its_rate_and_preamble(tmp_path, preamble, control, ack_short):
    net = lower_network(loads_scenario(bss(preamble=preamble, extra_link=f'control_preamble = "{control}"')))
    # Pings from 0.5 s, away from the first beacon (at DIFS after time 0).
    results = simulate(net.with_flows([ping(net, "s1", "s2", start_ns=SECOND // 2)], 4 * SECOND), pcap_dir=tmp_path)
    assert results.flows[0].received == 3
    members = results.links[0].members
    rows = tshark_fields(
        tmp_path / "wlan-air.pcap",
        "wlan.fc.type_subtype",
        "wlan.fc.ds",
        "wlan.ra",
        "radiotap.datarate",
        "radiotap.flags.preamble",
        "wlan.ds.current_channel",
        "wlan.ssid",
        "radiotap.channel.freq",
    )
    kinds = Counter(r[0] for r in rows)
    beacons, acks, data = kinds.pop("0x0008"), kinds.pop("0x001d"), kinds.pop("0x0020")
    assert not kinds, kinds  # nothing else: no RTS/CTS below the threshold
    assert beacons == members[0].beacons
    # Every frame once: each unicast data frame is acknowledged once (no losses here), and
    # every frame a member counted as sent is on the air once, a group frame too.
    unicast = [r for r in rows if r[0] == "0x0020" and r[2] != "ff:ff:ff:ff:ff:ff"]
    assert acks == len(unicast)
    assert data == sum(m.frames_sent for m in members) == sum(m.attempts for m in members)
    ack_rows = [r for r in rows if r[0] == "0x001d"]
    assert {(r[3], r[4]) for r in ack_rows} == {("2", ack_short)}
    data_short = "1" if preamble == "short" else "0"
    assert {(r[3], r[4]) for r in unicast} == {("11", data_short)}
    group = [r for r in rows if r[0] == "0x0020" and r[2] == "ff:ff:ff:ff:ff:ff"]
    assert group and {(r[1], r[3]) for r in group} == {("0x02", "2")}  # relayed From DS at the basic rate
    beacon_rows = [r for r in rows if r[0] == "0x0008"]
    assert {(r[3], r[4], r[5], r[6], r[7]) for r in beacon_rows} == {("1", "0", "6", b"linksys".hex(), "2437")}


# --------------------------------------------------------------------------- propagation delay; check = run


def test_a_propagation_delay_delays_the_delivery():
    def rtts(delay: str) -> list[int]:
        net = lower_network(loads_scenario(bss(stations=1, extra_link=f'delay = "{delay}"')))
        results = simulate(net.with_flows([ping(net, "s1", "ap", count=4)], 6 * SECOND))
        return results.flows[0].rtt_ns

    base, delayed = rtts("0 s"), rtts("5 us")
    assert len(base) == len(delayed) == 4
    # The request reaches the AP 5 us later and the reply reaches s1 5 us later; the MAC's
    # own timing (the AP's Ack, its DIFS and backoff before the reply) does not move.
    for b, d in zip(base[1:], delayed[1:]):
        assert 5 * US <= d - b <= 10 * US


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "qoslab", *args], capture_output=True, text=True, check=False)


@pytest.mark.parametrize(
    ("edit", "words"),
    [
        (
            lambda t: t.replace('preamble = "long"', 'preamble = "long"\ndelay = "1 ms"'),
            "propagation delay longer than half a slot",
        ),
        (
            lambda t: t.replace(
                'address = "10.0.0.1/24"',
                'address = "10.0.0.1/24"\nroutes = [{ to = "10.9.0.0/16", via = "10.0.0.11" }]',
                1,
            ),
            "a plain access point is a bridge",
        ),
        (
            lambda t: t.replace('address = "10.0.0.1/24"', 'address = "10.0.0.1/24"\nwds = true', 1),
            "none of its stations sends them",
        ),
    ],
)
def test_check_refuses_first_what_run_refuses_with_the_same_message(tmp_path, edit, words):
    text = edit(bss(stations=1)) + '\n[[test]]\nmethod = "ping"\nfrom = "s1"\nto = "ap"\ncount = 1\n'
    path = tmp_path / "bad.toml"
    path.write_text(text)
    check, run = run_cli("check", str(path)), run_cli("run", str(path))
    assert check.returncode == run.returncode == 2
    assert words in check.stderr
    assert check.stderr.strip().splitlines()[0] == run.stderr.strip().splitlines()[0]
    assert "Traceback" not in check.stderr + run.stderr


def test_a_short_delay_is_valid_for_check():
    text = bss(stations=1, extra_link='delay = "1 us"')
    lower_network(loads_scenario(text))


# --------------------------------------------------------------------------- L3F


def test_the_l3f_bridges_own_first_datagram_waits_for_arp():
    # RFC 1122 §2.3.2.2: the bridge's stack saves the datagram while ARP resolves, so the
    # first ping of station A (the bridge) to each side gets through.
    net = lower_network(load_scenario(EXAMPLES / "seed000_l3f.toml"))
    for target in ("ws1", "ws2"):
        results = simulate(net.with_flows([ping(net, "a", target, count=1)], 2 * SECOND))
        assert results.flows[0].received == 1, target


@needs_tshark
def test_rts_and_cts_are_on_the_air_capture_once_per_protected_frame(tmp_path):
    # dot11RTSThreshold 100 bytes: the echo frames (24 + 8 + 84 + 4 = 120 bytes) go after
    # RTS/CTS (§10.3.2.5), the ARP ones (64 bytes) without.
    net = lower_network(loads_scenario(bss(extra_link='rts_threshold = "100 B"')))
    results = simulate(net.with_flows([ping(net, "s1", "s2", start_ns=SECOND // 2)], 4 * SECOND), pcap_dir=tmp_path)
    assert results.flows[0].received == 3
    rows = tshark_fields(tmp_path / "wlan-air.pcap", "wlan.fc.type_subtype", "frame.len", "radiotap.datarate")
    kinds = Counter(r[0] for r in rows)
    echo_frames = len(tshark_fields(tmp_path / "wlan-air.pcap", "frame.number", display="icmp"))
    assert echo_frames == 12  # 3 requests and 3 replies, each To DS then From DS
    assert kinds["0x001b"] == kinds["0x001c"] == echo_frames
    # Every control frame at 2 Mb/s, the highest basic rate not above 11 Mb/s (§10.6.6.5).
    assert {r[2] for r in rows if r[0] in ("0x001b", "0x001c", "0x001d")} == {"2"}
