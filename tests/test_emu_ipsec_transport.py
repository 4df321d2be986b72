"""IPsec transport mode on the emulation backend (python/qoslab/backends/emu/tunnels.py,
crates/emu/src/tunnel.rs ``run_transport``, crates/emu/src/nfqueue.rs): this kernel has
no ESP, so nftables queues the hosts' own datagrams through NFQUEUE to crates/sim's own
``IpsecTransport``, which protects and restores them.

What each test checks against something independent:

- traffic: ping and udp.flow between two hosts whose only path is a transport-mode SA
  pair (every echo request is answered, every UDP datagram arrives, and each end counted
  the datagrams it protected and restored);
- the wire: a captured packet is IPv4 protocol 50 (ESP, RFC 4303) with the plan's
  outbound SPI, sequence number 1, the length RFC 4303's arithmetic gives for an echo
  request in transport mode, and an ICV that HMAC-SHA1-96 (RFC 2404) with the key
  derived here (tests/test_emu_tunnels.py ``derive_key``) verifies;
- the path MTU by DF pings equals ``qoslab mtu`` for transport mode and the header
  arithmetic written here.

These tests need root and network namespaces; without them they are skipped, saying why.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from emu_host import own_emu_registry, why_no_namespaces  # noqa: F401 (an autouse fixture)
from test_emu_tunnels import (
    DES3_BLOCK,
    DES3_IV,
    ESP_HEADER,
    ESP_TRAILER,
    ETHERNET_MTU,
    HMAC_SHA1_96,
    IPV4,
    PING,
    QOSLAB,
    UDP_FLOW,
    _build,
    _end,
    _need_tshark,
    _run,
    _stop_capture,
    _tshark_capture,
    _write,
    check_esp_packet,
)

WHY = why_no_namespaces()
pytestmark = pytest.mark.skipif(WHY is not None, reason=WHY or "")

ICMP_ECHO = 8
"""RFC 792: the echo header (type, code, checksum, identifier, sequence number)."""


def transport_scenario(tests: str) -> str:
    """Two hosts on one Ethernet link whose traffic an ESP transport-mode SA pair
    (3DES-CBC, HMAC-SHA1-96, no selector: every datagram between them) protects."""
    return f"""
    [scenario]
    name = "ESP transport mode"
    seed = 1

    [node.a]
    role = "host"
    address = "192.0.2.10/24"

    [node.b]
    role = "host"
    address = "192.0.2.20/24"

    [[link]]
    name = "lan"
    type = "ethernet"
    rate = "100 Mbps"
    ends = ["a", "b"]

    [[tunnel]]
    name = "sa0"
    type = "ipsec"
    mode = "transport"
    protocol = "esp"
    from = "a"
    to = "b"
    cipher = "3des-cbc"
    auth = "hmac-sha1-96"
    {tests}
    """


def test_ping_and_udp_flow_through_a_transport_mode_sa_pair(tmp_path: Path) -> None:
    """Every echo request is answered; each was protected once at a (3 requests) and
    restored at b, and the replies the other way; the UDP flow's datagrams all arrive,
    each restored at b; nothing dropped."""
    path = _write(tmp_path, transport_scenario(PING.format(a="a", b="b") + UDP_FLOW.format(a="a", b="b")))
    out = _run(path)
    ping, flow = out["results"]
    assert ping["metrics"]["sent"] == 3 and ping["metrics"]["received"] == 3
    a, b = _end(ping, "a"), _end(ping, "b")
    assert a["kind"] == b["kind"] == "ipsec-transport"
    assert a["inner_in"]["packets"] >= 3 and b["inner_out"]["packets"] >= 3
    assert b["inner_in"]["packets"] >= 3 and a["inner_out"]["packets"] >= 3  # the replies
    # ESP adds octets: what left is larger than what was protected.
    assert a["outer_out"]["bytes"] > a["inner_in"]["bytes"]
    assert all(e["dropped"] == {} for e in ping["user_space_tunnels"])
    received = flow["iperf3"]["end"]["sum_received"]
    assert received["packets"] == flow["iperf3"]["end"]["sum_sent"]["packets"] > 0
    assert _end(flow, "b")["inner_out"]["packets"] >= received["packets"]


def test_esp_transport_packet_on_the_wire_and_its_icv(tmp_path: Path) -> None:
    """An echo request of 84 octets a sent, captured on b's port: tshark dissects IPv4 /
    ESP (protocol 50) with a's outbound SPI and sequence number 1 (RFC 4303 §3.3.3); its
    length is 20 + 8 + 8 + (64 + 2 padded to 8) + 12 (transport mode: the datagram's own
    header, then ESP around its payload); its ICV is HMAC-SHA1-96 over ESP header, IV
    and ciphertext with the key derived here, and not with another SPI's key."""
    _need_tshark()
    from qoslab.backends.emu import measure, topology

    topo = _build(_write(tmp_path, transport_scenario("")))
    pcap = tmp_path / "lan.pcap"
    try:
        cap = _tshark_capture(topo, "b", "eth0", pcap, "ip proto 50")
        assert measure.df_ping(topo, "a", "192.0.2.20", 84, count=1)
        _stop_capture(cap)
        (a,) = [n for n in topo.plan.nodes if n.name == "a"]
        spi = a.ipsec[0].spi_out
    finally:
        topology.teardown(topo)
    # Transport mode: the datagram keeps its own header; ESP protects its 64-octet payload.
    check_esp_packet(pcap, "192.0.2.10", spi, 84 - IPV4)


def test_transport_path_mtu_equals_qoslab_mtu(tmp_path: Path) -> None:
    """A transport-mode SA is no interface: `qoslab mtu` says the path MTU is the
    interface's, 1500 (IEEE 802.3), and DF pings find 1500 here too: the end clears DF on
    a protected datagram that no longer fits and the kernel fragments it after the
    transform, as the simulator's stack does (RFC 4303 §3.1.1). The largest datagram
    whose ESP datagram is not fragmented is smaller: 20 + 8 + 8 + pad8(L - 20 + 2) + 12
    <= 1500, L = 1466, the 1438-octet UDP payload `qoslab mtu` names."""
    from qoslab.analysis.mtu import analyse
    from qoslab.backends.emu import measure, topology

    report = analyse("ethernet/ipv4/esp(mode=transport,cipher=3des-cbc,auth=hmac-sha1-96)/udp")
    assert report.mtu == ETHERNET_MTU
    room = ETHERNET_MTU - IPV4 - ESP_HEADER - DES3_IV - HMAC_SHA1_96
    assert IPV4 + room // DES3_BLOCK * DES3_BLOCK - ESP_TRAILER == 1466 == 1438 + 8 + IPV4
    topo = _build(_write(tmp_path, transport_scenario("")))
    try:
        measured = measure.path_mtu(topo, "a", "192.0.2.20")
    finally:
        topology.teardown(topo)
    assert measured == report.mtu


def test_a_datagram_too_big_after_the_transform_arrives_in_fragments(tmp_path: Path) -> None:
    """UDP datagrams of 1500 octets (1472 of payload), each protected into an ESP
    datagram above 1500 and so fragmented after the transform: all arrive, each restored
    whole at b (the ESP fragments reassembled before the end's queue)."""
    flow = UDP_FLOW.format(a="a", b="b").replace("payload = 1000", f"payload = {ETHERNET_MTU - IPV4 - 8}")
    out = _run(_write(tmp_path, transport_scenario(flow)))
    (result,) = out["results"]
    received = result["iperf3"]["end"]["sum_received"]
    assert received["packets"] == result["iperf3"]["end"]["sum_sent"]["packets"] > 0
    b = _end(result, "b")
    assert b["inner_out"]["packets"] >= received["packets"] and b["dropped"] == {}


def test_check_takes_ipsec_transport_mode(tmp_path: Path) -> None:
    """`check --backend emu` takes transport mode (it runs through NFQUEUE now)."""
    path = _write(tmp_path, transport_scenario(PING.format(a="a", b="b")))
    done = subprocess.run([*QOSLAB, "check", str(path), "--backend", "emu"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr


def test_the_most_specific_sa_takes_the_datagram_as_in_the_simulator(tmp_path: Path) -> None:
    """Two SA pairs between a and b: sa0 selects everything, sa1 (listed second) only UDP
    to port 5201 (iperf3's). RFC 4301 §4.4.1 and crates/sim's stack: the most specific
    selector wins, so the UDP flow's datagrams are sa1's and the echo requests sa0's."""
    specific = """
    [[tunnel]]
    name = "sa1"
    type = "ipsec"
    mode = "transport"
    protocol = "esp"
    from = "a"
    to = "b"
    cipher = "3des-cbc"
    auth = "hmac-sha1-96"
    selector = { protocol = "udp", port = 5201 }
    """
    path = _write(tmp_path, transport_scenario(specific + PING.format(a="a", b="b") + UDP_FLOW.format(a="a", b="b")))
    ping, flow = _run(path)["results"]
    assert ping["metrics"]["received"] == 3
    by_sa = {e["tunnel"]: e for e in flow["user_space_tunnels"] if e["node"] == "b"}
    received = flow["iperf3"]["end"]["sum_received"]["packets"]
    assert received > 0
    # sa1: every datagram of the flow (and iperf3's opening UDP datagram to the port);
    # sa0: only the TCP control connection's segments, far fewer.
    assert by_sa["sa1"]["inner_out"]["packets"] >= received
    assert by_sa["sa0"]["inner_out"]["packets"] < received / 2
    pings = {e["tunnel"]: e for e in ping["user_space_tunnels"] if e["node"] == "b"}
    assert pings["sa0"]["inner_out"]["packets"] >= 3 and pings["sa1"]["inner_out"]["packets"] == 0
