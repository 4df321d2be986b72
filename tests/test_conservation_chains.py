"""Random chains of Ethernet, 802.11, serial and ATM links (hypothesis), each carrying a
saturating UDP flow or a TCP bulk flow from one end to the other:

- conservation (docs/metrics.md, "Conservation") holds for every flow and link;
- the goodput the records print is never above the capacity of the path's bottleneck
  for that payload, computed here from each link's rate and per-frame overhead as the
  standards give them (not from qoslab's own bottleneck code):

  * Ethernet (IEEE 802.3 §3.1.1, §3.2.8, §4.4.2): 14-octet header and 4-octet FCS,
    padding to 64 octets, 8 of preamble and SFD and 12 of inter-frame gap per frame;
  * serial, asynchronous (8n1: a start and a stop bit, 10 bit times per octet): SLIP
    (RFC 1055) an END octet before and after each datagram; PPP in HDLC-like framing
    (RFC 1662) at least a flag, a protocol octet and a 2-octet FCS (address, control
    and the second protocol octet compressed away, flags shared), escapes not counted
    (they only lower the capacity);
  * ATM: the IP packet with 8 octets of LLC/SNAP (RFC 2684 §5) and the 8-octet AAL5
    trailer, padded to a multiple of 48 (ITU-T I.363.5), in 53-octet cells at the
    link's cell rate;
  * 802.11: an upper bound, the PHY rate times the payload's share of the MPDU (24-octet
    MAC header, 8 of LLC/SNAP, 4 of FCS; no PLCP preamble, no DIFS, no backoff, no ACK).
"""

from __future__ import annotations

import math

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from qoslab.backends.sim import run_tests
from qoslab.plan.results_models import Results
from qoslab.scenario import loads_scenario
from test_conservation import check_flow, check_link

IP_HEADER, UDP_HEADER, TCP_HEADER = 20, 8, 20  # RFC 791, RFC 768, RFC 9293 (no options)
ETHERNET_MTU, SLIP_MTU, PPP_MTU, ATM_MTU, WIFI_MTU = 1500, 1006, 1500, 9180, 1500
"""IP MTUs: Ethernet, SLIP (RFC 1055), PPP (RFC 1661 MRU), CLIP (RFC 2225), 802.11 with
LLC/SNAP as qoslab's default."""

ETHERNET_RATES = [1_000_000, 10_000_000, 25_000_000, 100_000_000]
WIFI_RATES = ["1 Mbps", "2 Mbps", "5.5 Mbps", "11 Mbps"]
WIFI_BPS = {"1 Mbps": 1_000_000, "2 Mbps": 2_000_000, "5.5 Mbps": 5_500_000, "11 Mbps": 11_000_000}
SERIAL_RATES = [19_200, 38_400, 57_600, 115_200]
ATM_RATES = [2_000_000, 10_000_000, 34_000_000]


def wire_octets(kind: str, framing: str | None, packet: int) -> float:
    """Octets (bit times / 8 for a serial line's octet: see `bits_per_octet`) one IP
    packet of `packet` octets takes on a link of `kind`."""
    if kind == "ethernet":
        return max(packet + 18, 64) + 8 + 12
    if kind == "serial":
        return packet + (2 if framing == "slip" else 4)
    if kind == "atm":
        return math.ceil((packet + 8 + 8) / 48) * 53
    return packet + 24 + 8 + 4


def capacity_bps(link: dict, packet: int, payload: int) -> float:
    """Payload bits per second a link carries when every packet of `packet` octets
    holds `payload` of them."""
    rate = link["bps"]
    if link["kind"] == "serial":
        rate = rate * 8 / 10  # 8n1: 10 bit times per octet
    return rate * payload / wire_octets(link["kind"], link.get("framing"), packet)


def mtu(link: dict) -> int:
    return {"ethernet": ETHERNET_MTU, "atm": ATM_MTU, "wifi": WIFI_MTU}.get(link["kind"]) or (
        SLIP_MTU if link["framing"] == "slip" else PPP_MTU
    )


@st.composite
def chains(draw: st.DrawFn) -> list[dict]:
    links = []
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["ethernet", "wifi", "serial", "atm"]))
        if kind == "ethernet":
            links.append({"kind": kind, "bps": draw(st.sampled_from(ETHERNET_RATES))})
        elif kind == "wifi":
            rate = draw(st.sampled_from(WIFI_RATES))
            links.append({"kind": kind, "bps": WIFI_BPS[rate], "rate": rate})
        elif kind == "serial":
            links.append(
                {
                    "kind": kind,
                    "bps": draw(st.sampled_from(SERIAL_RATES)),
                    "framing": draw(st.sampled_from(["slip", "ppp"])),
                }
            )
        else:
            links.append({"kind": kind, "bps": draw(st.sampled_from(ATM_RATES))})
    return links


def scenario_text(links: list[dict], test: str) -> str:
    """Hosts a and b at the ends, routers between; link i is subnet 10.0.i.0/24 (.1 on
    its left end, .2 on its right), each router with routes to the subnets beyond its
    neighbours."""
    n = len(links)
    names = ["a"] + [f"r{k}" for k in range(1, n)] + ["b"]
    out = ['[scenario]\nname = "chain"\nseed = 7\n']
    out.append('[node.a]\nrole = "host"\naddress = "10.0.0.1/24"\n' + ('gateway = "10.0.0.2"\n' if n > 1 else ""))
    for k in range(1, n):
        routes = [f'{{ to = "10.0.{j}.0/24", via = "10.0.{k - 1}.1" }}' for j in range(k - 1)]
        routes += [f'{{ to = "10.0.{j}.0/24", via = "10.0.{k}.2" }}' for j in range(k + 1, n)]
        out.append(
            f'[node.r{k}]\nrole = "router"\naddress = ["10.0.{k - 1}.2/24", "10.0.{k}.1/24"]\nroutes = [{", ".join(routes)}]\n'
        )
    out.append(
        f'[node.b]\nrole = "host"\naddress = "10.0.{n - 1}.2/24"\n' + (f'gateway = "10.0.{n - 1}.1"\n' if n > 1 else "")
    )
    for i, link in enumerate(links):
        ends = f'["{names[i]}", "{names[i + 1]}"]'
        if link["kind"] == "ethernet":
            out.append(f'[[link]]\ntype = "ethernet"\nrate = "{link["bps"]} bps"\nends = {ends}\n')
        elif link["kind"] == "wifi":
            out.append(
                f'[[link]]\ntype = "wifi"\nstandard = "802.11b"\nrate = "{link["rate"]}"\nmode = "adhoc"\nstations = {ends}\n'
            )
        elif link["kind"] == "serial":
            out.append(
                f'[[link]]\ntype = "serial"\nrate = "{link["bps"]} bps"\nframing = "{link["framing"]}"\nends = {ends}\n'
            )
        else:
            out.append(f'[[link]]\ntype = "atm"\nrate = "{link["bps"]} bps"\nends = {ends}\nvcs = [{{ vci = 100 }}]\n')
    out.append(test)
    return "\n".join(out)


def run_chain(links: list[dict], test: str) -> tuple[Results, dict]:
    scenario = loads_scenario(scenario_text(links, test), "chain.toml")
    _, runs = run_tests(scenario)
    (run,) = runs
    for flow in run.results.flows:
        check_flow(flow)
    for link in run.results.links:
        check_link(link)
    return run.results, run.records[0]["metrics"]


CHAIN_SETTINGS = settings(
    max_examples=16, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)


@CHAIN_SETTINGS
@given(links=chains(), payload=st.sampled_from([16, 64, 200, 472, 960]))
def test_a_saturating_udp_flow_conserves_and_stays_below_the_bottleneck(links: list[dict], payload: int) -> None:
    test = (
        f'[[test]]\nmethod = "udp.flow"\nfrom = "a"\nto = "b"\npayload = {payload}\nrate = "0 bps"\nduration = "1 s"\n'
    )
    results, metrics = run_chain(links, test)
    # Every payload chosen fits every MTU here (960 + 28 < 1006): one packet per datagram.
    packet = payload + UDP_HEADER + IP_HEADER
    bottleneck = min(capacity_bps(link, packet, payload) for link in links)
    assert metrics["received"] > 0, (links, metrics)
    assert metrics["goodput_mbps"] * 1e6 <= bottleneck * 1.000001, (
        links,
        payload,
        metrics["goodput_mbps"],
        bottleneck / 1e6,
    )


@CHAIN_SETTINGS
@given(links=chains())
def test_a_tcp_bulk_flow_conserves_and_stays_below_the_bottleneck(links: list[dict]) -> None:
    test = '[[test]]\nmethod = "tcp.bulk"\nfrom = "a"\nto = "b"\nduration = "1 s"\ninterval = "0 s"\n'
    results, metrics = run_chain(links, test)
    path_mtu = min(mtu(link) for link in links)
    # A segment in a packet of L octets carries at most L - 40 (path MTU discovery keeps
    # every packet within the path MTU); the best share over every size bounds any mix.
    bottleneck = min(
        max(
            capacity_bps(link, size, size - IP_HEADER - TCP_HEADER)
            for size in range(IP_HEADER + TCP_HEADER + 1, path_mtu + 1)
        )
        for link in links
    )
    assert metrics["throughput_mbps"] * 1e6 <= bottleneck * 1.000001, (
        links,
        metrics["throughput_mbps"],
        bottleneck / 1e6,
    )
