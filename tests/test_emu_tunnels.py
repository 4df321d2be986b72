"""User-space tunnels on the emulation backend (python/qoslab/backends/emu/tunnels.py,
crates/emu/src/tunnel.rs): PPPoE and IPsec ESP tunnel mode run as crates/sim's own tunnel
ends between a TUN device and raw sockets, since this machine's kernel has no PPP or ESP.

What each test checks against something independent:

- traffic: ping and udp.flow cross the tunnel (the replies come back, and the ends
  counted every echo request as an inner packet: the only route to the far address is
  the tunnel's);
- the path MTU measured with DF pings (iputils ``ping -M do``) equals ``qoslab mtu`` for
  that stack and the header arithmetic written here from the RFCs;
- the frames on the wire dissected by tshark (PPPoE discovery codes RFC 2516 §5, the
  session's PPP protocols, ESP's SPI and sequence number);
- ESP's ICV recomputed here with hmac/hashlib and the SA's key derived here from its SPI
  by the derivation crates/sim/src/rng.rs documents (SplitMix64 sponge, xoshiro256++);
- rp-pppoe (Debian ``pppoe``), a real PPPoE implementation: its ``pppoe-server``
  answers our client's discovery, and its ``pppoe`` client's discovery gets our server's
  PADS.

These tests need root and network namespaces; without them they are skipped, saying why.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest
from emu_host import own_emu_registry, why_no_namespaces  # noqa: F401 (an autouse fixture)
from qoslab.scenario import load_scenario

WHY = why_no_namespaces()
pytestmark = pytest.mark.skipif(WHY is not None, reason=WHY or "")

QOSLAB = [sys.executable, "-m", "qoslab"]

ETHERNET_MTU = 1500
"""IEEE 802.3 §3.2.7: the MAC client data field of an Ethernet II frame."""
PPPOE_HEADER = 6
"""RFC 2516 §4: VER/TYPE, CODE, SESSION_ID, LENGTH."""
PPP_PROTOCOL = 2
"""RFC 2516 §7 / RFC 1661 §2: the PPP Protocol field in each session frame."""
IPV4 = 20
"""RFC 791 §3.1, no options."""
ESP_HEADER = 8
"""RFC 4303 §2: SPI 4 + sequence number 4."""
DES3_IV = DES3_BLOCK = 8
"""RFC 2451 §2.3/§2.5: 3DES-CBC's IV and block are 64 bits."""
ESP_TRAILER = 2
"""RFC 4303 §2.4-2.6: Pad Length and Next Header."""
HMAC_SHA1_96 = 12
"""RFC 2404 §3: HMAC-SHA-1 truncated to 96 bits."""
HMAC_SHA1_KEY = 20
"""RFC 2404 §3: a 160-bit key."""


def pppoe_scenario(tests: str, *, mtu: int = 1492) -> str:
    """Two hosts on one Ethernet link with a PPPoE session between them (CHAP)."""
    return f"""
    [scenario]
    name = "PPPoE between two hosts"
    seed = 1

    [node.client]
    role = "host"
    address = "198.51.100.2/24"

    [node.server]
    role = "host"
    address = "198.51.100.1/24"

    [[link]]
    name = "lan"
    type = "ethernet"
    rate = "100 Mbps"
    ends = ["client", "server"]

    [[tunnel]]
    name = "ppp0"
    type = "pppoe"
    over = "lan"
    from = "client"
    to = "server"
    auth = "chap"
    mtu = {mtu}
    {tests}
    """


def pptp_scenario(tests: str) -> str:
    """The PPPoE scenario's two hosts with a PPTP tunnel instead (MS-CHAPv2)."""
    return (
        pppoe_scenario(tests, mtu=1400)
        .replace('type = "pppoe"', 'type = "pptp"')
        .replace('auth = "chap"', 'auth = "mschapv2"')
    )


def esp_scenario(tests: str) -> str:
    """Two LANs joined by two gateways with an ESP tunnel between them (seed 003's
    algorithms: 3DES-CBC, HMAC-SHA1-96), the LANs routed into it."""
    return f"""
    [scenario]
    name = "ESP tunnel mode between two gateways"
    seed = 1

    [node.left]
    role = "host"
    address = "10.1.0.2/24"
    gateway = "10.1.0.1"

    [node.gwl]
    role = "router"
    address = ["10.1.0.1/24", "198.51.100.1/24"]

    [node.gwr]
    role = "router"
    address = ["198.51.100.2/24", "10.2.0.1/24"]

    [node.right]
    role = "host"
    address = "10.2.0.2/24"
    gateway = "10.2.0.1"

    [[link]]
    name = "lanl"
    type = "ethernet"
    rate = "100 Mbps"
    ends = ["left", "gwl"]

    [[link]]
    name = "wan"
    type = "ethernet"
    rate = "100 Mbps"
    ends = ["gwl", "gwr"]

    [[link]]
    name = "lanr"
    type = "ethernet"
    rate = "100 Mbps"
    ends = ["gwr", "right"]

    [[tunnel]]
    name = "vpn0"
    type = "ipsec"
    mode = "tunnel"
    protocol = "esp"
    from = "gwl"
    to = "gwr"
    cipher = "3des-cbc"
    auth = "hmac-sha1-96"
    {tests}
    """


def ah_scenario(tests: str) -> str:
    """The ESP scenario with AH instead (RFC 4302: integrity only, over the outer header
    too, HMAC-SHA1-96): the model's outer header must reach the far end as written."""
    return (
        esp_scenario(tests)
        .replace('protocol = "esp"', 'protocol = "ah"')
        .replace('cipher = "3des-cbc"', 'cipher = "null"')
    )


PING = """
    [[test]]
    method = "ping"
    from = "{a}"
    to = "{b}"
    count = 3
    interval = "0.2 s"
"""

UDP_FLOW = """
    [[test]]
    method = "udp.flow"
    from = "{a}"
    to = "{b}"
    rate = "2 Mbps"
    payload = 1000
    duration = "1 s"
"""


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "scenario.toml"
    path.write_text(textwrap.dedent(text))
    return path


def _run(path: Path) -> dict[str, Any]:
    done = subprocess.run(
        [*QOSLAB, "run", str(path), "--backend", "emu", "--json"], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert "user-space tunnel ends" in done.stderr
    assert "inner in " in done.stderr  # each end's counters printed
    out: dict[str, Any] = json.loads(done.stdout)
    return out


def _build(path: Path, *, user_tunnels: bool = True) -> Any:
    """The scenario's network on direct veth pairs (the path MTU is the interfaces' and
    the tunnel's, not a link model's)."""
    from qoslab.backends.emu import prepare, registry, topology
    from qoslab.backends.emu.links import DirectVeth

    net = prepare(load_scenario(path), source=path)
    record = registry.RunRecord.start(str(path), DirectVeth.implementation)
    return topology.build(net.config, record, DirectVeth(), user_tunnels=user_tunnels)


def _end(records: dict[str, Any], node: str) -> dict[str, Any]:
    (end,) = [e for e in records["user_space_tunnels"] if e["node"] == node]
    found: dict[str, Any] = end
    return found


@pytest.mark.parametrize(
    ("scenario", "a", "b", "far"),
    [
        (pppoe_scenario, "client", "server", "server"),
        (pptp_scenario, "client", "server", "server"),
        (esp_scenario, "left", "right", "gwr"),
        (ah_scenario, "left", "right", "gwr"),
    ],
    ids=["pppoe", "pptp", "esp", "ah"],
)
def test_ping_and_udp_flow_cross_the_tunnel(tmp_path: Path, scenario: Any, a: str, b: str, far: str) -> None:
    """Every echo request is answered, and each crossed the tunnel once each way (the
    near end took 3 inner packets from the kernel, the far end delivered 3); the UDP
    flow's datagrams arrive and each crossed the tunnel."""
    near = {"client": "client", "left": "gwl"}[a]
    path = _write(tmp_path, scenario(PING.format(a=a, b=b) + UDP_FLOW.format(a=a, b=b)))
    out = _run(path)
    ping, flow = out["results"]
    assert ping["metrics"]["sent"] == 3 and ping["metrics"]["received"] == 3
    assert "user-space" in ping["tunnel_implementation"]
    assert _end(ping, near)["inner_in"]["packets"] == 3
    assert _end(ping, far)["inner_out"]["packets"] == 3
    assert _end(ping, near)["inner_out"]["packets"] == 3  # the replies
    assert all(e["up_after_ns"] is not None and e["dropped"] == {} for e in ping["user_space_tunnels"])
    received = flow["iperf3"]["end"]["sum_received"]
    # Every datagram iperf3 sent arrived (its lost_packets may still count one: it is
    # read from the sequence numbers at the end of the test, not from what crossed).
    assert received["packets"] == flow["iperf3"]["end"]["sum_sent"]["packets"] > 0
    # Each datagram is one inner packet at the far end (1000 + 8 + 20 < every MTU here);
    # iperf3's control connection crosses too.
    assert _end(flow, far)["inner_out"]["packets"] >= received["packets"]


def test_pppoe_path_mtu_equals_qoslab_mtu(tmp_path: Path) -> None:
    """DF pings through the PPPoE session find 1492 = 1500 - 6 - 2 (RFC 2516 §7), what
    `qoslab mtu ethernet/pppoe/ipv4` says."""
    from qoslab.analysis.mtu import analyse
    from qoslab.backends.emu import measure, topology

    written = ETHERNET_MTU - PPPOE_HEADER - PPP_PROTOCOL
    assert analyse("ethernet/pppoe/ipv4").mtu == written == 1492
    topo = _build(_write(tmp_path, pppoe_scenario("")))
    try:
        measured = measure.path_mtu(topo, "client", "198.51.100.1")
    finally:
        topology.teardown(topo)
    assert measured == written


def test_esp_path_mtu_equals_qoslab_mtu(tmp_path: Path) -> None:
    """DF pings from one LAN to the other find the largest inner packet whose ESP packet
    fits 1500 octets: 20 + 8 + 8 + (L + 2, padded to 8) + 12 <= 1500, so L = 1446
    (RFC 4303 §2.4 padding to the cipher's block); `qoslab mtu` says the same, and so does
    the simulator. A larger DF packet gets "fragmentation needed" (RFC 4301 §8.2.1), so
    the bisection ends there."""
    from qoslab.analysis.mtu import analyse
    from qoslab.backends.emu import measure, topology

    room = ETHERNET_MTU - IPV4 - ESP_HEADER - DES3_IV - HMAC_SHA1_96
    written = room // DES3_BLOCK * DES3_BLOCK - ESP_TRAILER
    assert analyse("ethernet/ipv4/esp(mode=tunnel,cipher=3des-cbc,auth=hmac-sha1-96)/ipv4").mtu == written == 1446
    # The simulator on the same file: 1446 octets with DF cross, 1447 do not.
    assert _sim_df_flow_arrives(tmp_path, esp_scenario(""), "left", "right", written)
    assert not _sim_df_flow_arrives(tmp_path, esp_scenario(""), "left", "right", written + 1)
    topo = _build(_write(tmp_path, esp_scenario("")))
    try:
        measured = measure.path_mtu(topo, "left", "10.2.0.2")
    finally:
        topology.teardown(topo)
    assert measured == written


def _sim_df_flow_arrives(tmp_path: Path, text: str, a: str, b: str, size: int) -> bool:
    """Whether the simulator delivers UDP datagrams of ``size`` octets of IPv4 (total
    length) with DF set from ``a`` to ``b`` in scenario ``text`` (three of them)."""
    flow = f"""
    [[test]]
    method = "udp.flow"
    from = "{a}"
    to = "{b}"
    payload = {size - IPV4 - 8}
    dont_fragment = true
    count = 3
    gap = "10 ms"
    """
    path = tmp_path / "sim.toml"
    path.write_text(textwrap.dedent(text + flow))
    done = subprocess.run([*QOSLAB, "run", str(path), "--json"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    received: int = json.loads(done.stdout)["results"][0]["metrics"]["received"]
    return received == 3


def test_pptp_path_mtu_is_the_interface_mtu_as_in_the_simulator(tmp_path: Path) -> None:
    """A PPTP end is a PPP interface the node drives (not the IP stack): the stack fits
    packets to the interface MTU alone and the GRE datagram is fragmented after
    encapsulation when it exceeds the path (crates/sim tunnel/pptp/end.rs; RFC 791), so
    DF pings through PPTP with an interface MTU of 1492 find 1492, which the kernel's
    own fragmentation of the raw GRE datagrams gives here; and the simulator, asked with
    DF datagrams on the same file, passes 1492 octets and refuses 1493.

    `qoslab mtu ethernet/ipv4/gre(pptp)/ppp/ipv4` says 1467, the largest inner packet
    whose GRE packet (12 octets, PPP 1 after PFC and ACFC) is not fragmented: below the
    interface MTU here, so the outer packets of 1468 to 1492 octets travel in two
    fragments."""
    from qoslab.analysis.mtu import analyse
    from qoslab.backends.emu import measure, topology

    assert analyse("ethernet/ipv4/gre(pptp)/ppp/ipv4").mtu == ETHERNET_MTU - IPV4 - 12 - 1
    interface = 1492
    text = pptp_scenario("").replace("mtu = 1400", f"mtu = {interface}")
    assert _sim_df_flow_arrives(tmp_path, text, "client", "server", interface)
    assert not _sim_df_flow_arrives(tmp_path, text, "client", "server", interface + 1)
    topo = _build(_write(tmp_path, text))
    try:
        measured = measure.path_mtu(topo, "client", "198.51.100.1")
    finally:
        topology.teardown(topo)
    assert measured == interface


def _tshark_capture(topo: Any, node: str, port: str, out: Path, bpf: str) -> subprocess.Popen[str]:
    """tshark capturing on ``port`` of ``node`` into ``out``, started (its "Capturing on"
    line read) and registered."""
    proc = subprocess.Popen(
        ["ip", "netns", "exec", topo.namespace(node), "tshark", "-i", port, "-F", "pcap", "-w", str(out), "-f", bpf],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    topo.registry.add_pid(proc.pid)
    assert proc.stderr is not None
    deadline = time.monotonic() + 30
    while "Capturing on" not in proc.stderr.readline():
        assert time.monotonic() < deadline and proc.poll() is None, "tshark did not start"
    time.sleep(0.5)  # dumpcap says it is capturing a moment before its filter is on
    return proc


def _stop_capture(proc: subprocess.Popen[str]) -> None:
    time.sleep(0.3)  # what is in flight reaches the capture
    proc.send_signal(signal.SIGINT)
    proc.wait(timeout=30)
    if proc.stderr is not None:
        proc.stderr.close()


def _dissect(pcap: Path, *fields: str, display: str = "", occurrence: str = "a") -> list[list[str]]:
    """tshark's fields of each frame of ``pcap`` (one list per frame); ``occurrence``
    ``f``: of a field that occurs more than once (an inner and an outer IPv4 header), the
    first (outermost) only; ``a``: all, comma-separated."""
    argv = ["tshark", "-r", str(pcap), "-T", "fields", "-E", "separator=|", "-E", f"occurrence={occurrence}"]
    argv += [x for f in fields for x in ("-e", f)]
    if display:
        argv += ["-Y", display]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=True)
    return [line.split("|") for line in done.stdout.splitlines()]


def _need_tshark() -> None:
    if shutil.which("tshark") is None and not os.environ.get("QOSLAB_REQUIRE_TSHARK"):
        pytest.skip("tshark is not installed")


def test_pppoe_frames_as_tshark_dissects_them(tmp_path: Path) -> None:
    """The frames on the client's port, dissected by tshark: discovery PADI, PADO, PADR,
    PADS in that order (codes 0x09, 0x07, 0x19, 0x65, RFC 2516 §5.1-5.4), the PADS with
    the server's session id; then session frames (0x8864) of that session carrying LCP,
    CHAP, IPCP and finally the ICMP echo in IPv4."""
    _need_tshark()
    from qoslab.backends.emu import measure, topology, tunnels

    topo = _build(_write(tmp_path, pppoe_scenario("")), user_tunnels=False)
    pcap = tmp_path / "client.pcap"
    try:
        cap = _tshark_capture(topo, "client", "eth0", pcap, "pppoed or pppoes")
        topo.user_tunnels = tunnels.start(topo)
        assert measure.df_ping(topo, "client", "198.51.100.1", 84)
        _stop_capture(cap)
        (server,) = [n for n in topo.plan.nodes if n.name == "server"]
        session_id = server.pppoe[0].session_id
    finally:
        topology.teardown(topo)
    discovery = _dissect(pcap, "pppoe.code", "pppoe.session_id", display="pppoed")
    codes = [int(code, 0) for code, _ in discovery]
    assert codes[:4] == [0x09, 0x07, 0x19, 0x65]
    assert int(discovery[3][1], 0) == session_id != 0
    session = _dissect(pcap, "frame.protocols", "pppoe.session_id", display="pppoes")
    protocols = [p for p, _ in session]
    assert {int(s, 0) for _, s in session} == {session_id}
    assert any(p.endswith("pppoes:ppp:lcp") for p in protocols)
    assert any(p.endswith("pppoes:ppp:chap") for p in protocols)
    assert any(p.endswith("pppoes:ppp:ipcp") for p in protocols)
    assert "eth:ethertype:pppoes:ppp:ip:icmp:data" in protocols


def _need_rp_pppoe(program: str) -> str:
    path = shutil.which(program) or (f"/usr/sbin/{program}" if os.path.exists(f"/usr/sbin/{program}") else None)
    if path is None:
        pytest.skip(f"{program} (rp-pppoe, Debian package pppoe) is not installed; scripts/install.sh installs it")
    assert path is not None
    return path


RP_OFFSET = 41
"""pppoe-server -o 41: "Instead of numbering PPPoE sessions starting at 1, they will be
numbered starting at offset+1" (pppoe-server(8)): its first PADS carries session 42."""


def test_our_client_discovery_against_rp_pppoe_server(tmp_path: Path) -> None:
    """Our PPPoE client's discovery against Debian's rp-pppoe ``pppoe-server`` completes:
    its PADO names the AC and services it was started with (``-C``, ``-S``; the client
    asks for any service, RFC 2516 §5.1, and pppoe-server(8) gives the first ``-S`` then),
    and its PADS carries session offset + 1 (``-o``).

    Only discovery: pppoe-server's session stage is pppd with kernel PPP (the ppp_generic
    and pppoe modules), which this kernel lacks, so the server's pppd fails at once and
    pppoe-server ends the session with a PADT; LCP never opens and no IP crosses. What can
    be asserted is asserted: the discovery exchange our end logged, and tshark's
    dissection of the frames (AC-Name, Service-Name, session id) when tshark is present."""
    server_bin = _need_rp_pppoe("pppoe-server")
    from qoslab.backends.emu import topology, tunnels

    topo = _build(_write(tmp_path, pppoe_scenario("")), user_tunnels=False)
    pcap = tmp_path / "client.pcap"
    tshark = shutil.which("tshark") is not None
    try:
        cap = _tshark_capture(topo, "client", "eth0", pcap, "pppoed") if tshark else None
        argv = [server_bin, "-F", "-I", "eth0", "-C", "rp-ac", "-S", "isp", "-S", "other", "-o", str(RP_OFFSET)]
        server = subprocess.Popen(
            ["ip", "netns", "exec", topo.namespace("server"), *argv],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        topo.registry.add_pid(server.pid)
        topo.daemons.append(server)
        time.sleep(0.5)  # its packet socket open before the first PADI
        (client,) = [n for n in topo.plan.nodes if n.name == "client"]
        end = tunnels.start_end(topo, client, "pppoe", client.pppoe[0])
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and not pcap_has_pads(pcap, tshark):
            time.sleep(0.2)
        time.sleep(0.5)
        tunnels.stop([end])
        if cap is not None:
            _stop_capture(cap)
    finally:
        topology.teardown(topo)
    assert end.report is not None
    exchange = [(e["direction"], e["code"], e["session_id"]) for e in end.report["discovery"]]
    assert exchange[:4] == [("out", "PADI", 0), ("in", "PADO", 0), ("out", "PADR", 0), ("in", "PADS", RP_OFFSET + 1)]
    if not tshark:
        return
    pado = _dissect(pcap, "pppoed.tags.ac_name", "pppoed.tags.service_name", display="pppoe.code == 0x07")
    assert pado and pado[0][0] == "rp-ac"
    assert pado[0][1].split(",") == ["isp", "other"]
    pads = _dissect(pcap, "pppoe.session_id", display="pppoe.code == 0x65")
    assert [int(s, 0) for (s,) in pads] == [RP_OFFSET + 1]


def pcap_has_pads(pcap: Path, tshark: bool) -> bool:
    """Whether the capture so far holds a PADS (without tshark: wait the full time)."""
    if not tshark or not pcap.exists() or pcap.stat().st_size <= 24:
        return False
    done = subprocess.run(
        ["tshark", "-r", str(pcap), "-Y", "pppoe.code == 0x65"], capture_output=True, text=True, timeout=30
    )
    return bool(done.stdout.strip())


def test_rp_pppoe_client_discovery_against_our_server(tmp_path: Path) -> None:
    """Debian's rp-pppoe client against our PPPoE server: ``pppoe -A`` prints our PADO's
    AC-Name (the plan's, the server node's name) and that it got a cookie, and ``pppoe
    -d`` completes discovery and prints ``SESSION:MAC`` (pppoe(8)) with the plan's session
    id and the server port's MAC."""
    client_bin = _need_rp_pppoe("pppoe")
    from qoslab.backends.emu import topology, tunnels
    from qoslab.backends.emu.topology import format_mac

    topo = _build(_write(tmp_path, pppoe_scenario("")), user_tunnels=False)
    try:
        (server,) = [n for n in topo.plan.nodes if n.name == "server"]
        config = server.pppoe[0]
        end = tunnels.start_end(topo, server, "pppoe", config)
        ns = topo.namespace("client")
        probe = subprocess.run(
            ["ip", "netns", "exec", ns, client_bin, "-I", "eth0", "-t", "3", "-A"],
            capture_output=True,
            text=True,
            timeout=30,
        )
        discovery = subprocess.run(
            ["ip", "netns", "exec", ns, client_bin, "-I", "eth0", "-t", "3", "-d"],
            capture_output=True,
            text=True,
            timeout=30,
        )
        tunnels.stop([end])
        mac = format_mac(server.ports[config.port].mac)
    finally:
        topology.teardown(topo)
    assert probe.returncode == 0, probe.stderr
    assert f"Access-Concentrator: {config.ac_name}" in probe.stdout
    assert "Got a cookie" in probe.stdout
    assert f"AC-Ethernet-Address: {mac}" in probe.stdout
    assert discovery.returncode == 0, discovery.stderr
    assert discovery.stdout.strip() == f"{config.session_id}:{mac}"
    assert end.report is not None
    assert ("out", "PADS", config.session_id) in [
        (e["direction"], e["code"], e["session_id"]) for e in end.report["discovery"]
    ]


def test_pptp_packets_as_tshark_dissects_them(tmp_path: Path) -> None:
    """The packets on the server's port, dissected by tshark: the control connection on
    TCP port 1723 with Start-Control-Connection-Request/Reply and
    Outgoing-Call-Request/Reply (message types 1, 2, 7, 8, RFC 2637 §2.1-2.8) in that
    order; then enhanced GRE (version 1, RFC 2637 §4.1) carrying PPP LCP, MS-CHAPv2
    (CHAP's protocol, RFC 2759), IPCP and the ICMP echo, each GRE packet to the server
    keyed with the server's Call ID and each from it with the client's."""
    _need_tshark()
    from qoslab.backends.emu import measure, topology, tunnels

    topo = _build(_write(tmp_path, pptp_scenario("")), user_tunnels=False)
    pcap = tmp_path / "server.pcap"
    try:
        cap = _tshark_capture(topo, "server", "eth0", pcap, "tcp port 1723 or ip proto 47")
        topo.user_tunnels = tunnels.start(topo)
        ppp_server = next(n for n in topo.plan.nodes if n.name == "server").pptp[0]
        ppp_client = next(n for n in topo.plan.nodes if n.name == "client").pptp[0]
        assert measure.df_ping(topo, "client", str(ppp_client.ppp_peer), 84)
        _stop_capture(cap)
    finally:
        topology.teardown(topo)
    control = _dissect(pcap, "pptp.control_message_type", display="pptp")
    kinds = [int(t) for (t,) in control]
    assert kinds[:4] == [1, 2, 7, 8]
    gre = _dissect(pcap, "frame.protocols", "gre.key.call_id", "ip.dst", display="gre", occurrence="f")
    protocols = [p for p, _, _ in gre]
    assert any(p.endswith("gre:ppp:lcp") for p in protocols)
    assert any(p.endswith("gre:ppp:chap") for p in protocols)
    assert any(p.endswith("gre:ppp:ipcp") for p in protocols)
    assert "eth:ethertype:ip:gre:ppp:ip:icmp:data" in protocols
    for _, call, dst in gre:
        to_server = dst == str(ppp_server.local)
        assert int(call, 0) == (ppp_server.call_id if to_server else ppp_client.call_id)


@pytest.mark.parametrize("example", ["seed002_pppoe_over_openvpn.toml", "seed002_pptp_over_openvpn.toml"])
def test_seed002_tunnels_over_real_openvpn(tmp_path: Path, example: str) -> None:
    """Seed 002's stacks on the emulation backend: PPPoE (or PPTP) in user space over the
    real openvpn's TAP tunnel, the bridged LAN behind it; a ping from the client to the
    PPPoE (PPTP) server crosses both, and every echo request was an inner packet of the
    client's end."""
    if shutil.which("openvpn") is None:
        pytest.skip("openvpn is not installed (scripts/install.sh installs it)")
    source = (Path(__file__).resolve().parent.parent / "examples" / example).read_text()
    server = "pppoe-srv" if "pppoe" in example else "pptpd"
    text = source.split("[[test]]")[0] + PING.format(a="client", b=server).replace("    ", "")
    path = tmp_path / example
    path.write_text(text)
    out = _run(path)
    (ping,) = out["results"]
    assert ping["metrics"]["received"] == 3
    assert "OpenVPN" in ping["tunnel_implementation"]
    assert _end(ping, "client")["inner_in"]["packets"] == 3
    assert _end(ping, server)["inner_out"]["packets"] == 3


# --- ESP's key, derived here as crates/sim/src/rng.rs documents it ----------------------

MASK = (1 << 64) - 1
GOLDEN_GAMMA = 0x9E3779B97F4A7C15
SPONGE_START = 0x716F736C6162


def _mix64(z: int) -> int:
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return z ^ (z >> 31)


def _absorb(h: int, word: int) -> int:
    return _mix64(((h + GOLDEN_GAMMA) & MASK) ^ word)


def _stream_key(run_seed: int, component: int, purpose: str) -> int:
    h = _absorb(_absorb(SPONGE_START, run_seed), component)
    raw = purpose.encode()
    for at in range(0, len(raw), 8):
        h = _absorb(h, int.from_bytes(raw[at : at + 8].ljust(8, b"\0"), "little"))
    return _absorb(h, len(raw))


def _xoshiro256pp(key: int) -> Any:
    """Blackman & Vigna's xoshiro256++, its state the first four SplitMix64 outputs of
    ``key``."""
    s = [_mix64((key + GOLDEN_GAMMA * (i + 1)) & MASK) for i in range(4)]

    def rotl(x: int, k: int) -> int:
        return ((x << k) | (x >> (64 - k))) & MASK

    while True:
        result = (rotl((s[0] + s[3]) & MASK, 23) + s[0]) & MASK
        t = (s[1] << 17) & MASK
        s[2] ^= s[0]
        s[3] ^= s[1]
        s[1] ^= s[2]
        s[0] ^= s[3]
        s[2] ^= t
        s[3] = rotl(s[3], 45)
        yield result


def derive_key(spi: int, purpose: str, length: int) -> bytes:
    """The SA key: `length` octets of little-endian u64s from the stream (run seed 0,
    component = SPI, purpose "ipsec-<purpose>-key"), as the plan's IpsecTunnelConfig says
    both ends derive it in place of IKE."""
    out = b""
    stream = _xoshiro256pp(_stream_key(0, spi, f"ipsec-{purpose}-key"))
    while len(out) < length:
        out += next(stream).to_bytes(8, "little")
    return out[:length]


def test_esp_packet_on_the_wire_and_its_icv(tmp_path: Path) -> None:
    """An ESP packet gwl sent, captured on gwr's outer port: tshark dissects IPv4 / ESP
    with gwl's outbound SPI and sequence number 1; its length is the arithmetic of RFC
    4303 for an 84-octet echo request in tunnel mode; and its ICV is HMAC-SHA1-96 (RFC
    2404) over the ESP header, IV and ciphertext, computed here with the key derived here."""
    _need_tshark()
    from qoslab.backends.emu import measure, topology

    topo = _build(_write(tmp_path, esp_scenario("")))
    pcap = tmp_path / "wan.pcap"
    try:
        cap = _tshark_capture(topo, "gwr", "eth0", pcap, "ip proto 50")
        assert measure.df_ping(topo, "left", "10.2.0.2", 84, count=1)
        _stop_capture(cap)
        (gwl,) = [n for n in topo.plan.nodes if n.name == "gwl"]
        spi = gwl.ipsec[0].spi_out
    finally:
        topology.teardown(topo)
    # Tunnel mode: the whole 84-octet echo request is ESP's payload.
    check_esp_packet(pcap, "198.51.100.1", spi, 84)


def check_esp_packet(pcap: Path, src: str, spi: int, protected: int) -> None:
    """The first ESP packet from ``src`` in ``pcap``: tshark dissects IPv4 / ESP with SPI
    ``spi`` and sequence number 1 (RFC 4303 §3.3.3); its IPv4 length is 20 + 8 + 8 +
    (``protected`` + 2 padded to 3DES's 8) + 12; its ICV is HMAC-SHA1-96 (RFC 2404) over
    the ESP header, IV and ciphertext with the key derived here, and not with another
    SPI's key."""
    fields = _dissect(pcap, "frame.protocols", "esp.spi", "esp.sequence", "ip.len", display=f"ip.src == {src}")
    assert fields, "no ESP packet captured"
    protocols, spi_text, sequence, length = fields[0]
    assert protocols == "eth:ethertype:ip:esp"
    assert int(spi_text, 0) == spi and int(sequence) == 1
    padded = -(-(protected + ESP_TRAILER) // DES3_BLOCK) * DES3_BLOCK
    assert int(length) == IPV4 + ESP_HEADER + DES3_IV + padded + HMAC_SHA1_96
    packet = _first_ip_packet(pcap.read_bytes())  # the request comes first
    assert packet[9] == 50 and packet[12:16] == bytes(int(b) for b in src.split("."))
    esp = packet[IPV4:]
    key = derive_key(spi, "auth", HMAC_SHA1_KEY)
    icv = hmac.new(key, esp[:-HMAC_SHA1_96], hashlib.sha1).digest()[:HMAC_SHA1_96]
    assert icv == esp[-HMAC_SHA1_96:]
    wrong = derive_key(spi + 1, "auth", HMAC_SHA1_KEY)
    assert hmac.new(wrong, esp[:-HMAC_SHA1_96], hashlib.sha1).digest()[:HMAC_SHA1_96] != icv


def _first_ip_packet(pcap: bytes) -> bytes:
    """The IPv4 packet of the first Ethernet II frame of a classic pcap (LINKTYPE_ETHERNET)."""
    import struct

    (caplen,) = struct.unpack_from("<I", pcap, 24 + 8)
    frame = pcap[24 + 16 : 24 + 16 + caplen]
    assert frame[12:14] == b"\x08\x00"
    return frame[14:]


def test_check_takes_pppoe_pptp_and_esp_tunnel_mode(tmp_path: Path) -> None:
    """`check --backend emu` takes PPPoE, PPTP and ESP in tunnel mode (each runs in user
    space now)."""
    for text in (
        pppoe_scenario(PING.format(a="client", b="server")),
        pptp_scenario(PING.format(a="client", b="server")),
        esp_scenario(PING.format(a="left", b="right")),
    ):
        path = _write(tmp_path, text)
        argv = [*QOSLAB, "check", str(path), "--backend", "emu"]
        done = subprocess.run(argv, capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr


def test_kill_9_of_a_pppoe_run_then_emu_clean_leaves_nothing(tmp_path: Path) -> None:
    """After kill -9 of a run whose PPPoE ends are up, `qoslab emu clean` leaves no
    namespace of the run and none of its processes (tunnel ends, emulators, ping)."""
    from pyroute2 import netns
    from qoslab.backends.emu.registry import alive, registered_runs

    text = pppoe_scenario(PING.format(a="client", b="server").replace("count = 3", "count = 100"))
    run = subprocess.Popen([*QOSLAB, "run", str(_write(tmp_path, text)), "--backend", "emu"], stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 90
        record = None
        while time.monotonic() < deadline:
            runs = registered_runs()
            # Running: one emulator, two tunnel ends and the ping.
            if runs and len(runs[0].pids) >= 4:
                record = runs[0]
                break
            time.sleep(0.1)
        assert record is not None, "the run did not start its ping within 90 s"
        os.kill(run.pid, signal.SIGKILL)
        run.wait(timeout=10)
    finally:
        if run.poll() is None:
            run.kill()
    done = subprocess.run([*QOSLAB, "emu", "clean"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert not [n for n in netns.listnetns() if n.startswith(f"qoslab-{record.run}")]
    assert not [pid for pid, start in record.pids if pid is not None and alive(pid, start)]
    assert not (Path(os.environ["QOSLAB_EMU_REGISTRY"]) / f"{record.run}.json").exists()
