"""OpenVPN on the emulation backend (python/qoslab/backends/emu/openvpn.py): the real
openvpn between two namespaces, and issue 17's acceptance "Path MTU through real
OpenVPN (static key, no cipher, SHA1) measured with DF pings equals what `qoslab mtu`
says for that mode".

The path MTU is measured with iputils ping -M do (DF) by bisection, openvpn sending its
own packets with DF too (--mtu-disc yes), so that nothing is fragmented anywhere. It is
compared with `qoslab mtu` for the same stack, and both with the header arithmetic
written here from OpenVPN's sources (no opcode with a static key; HMAC-SHA1 20 octets,
RFC 2104/FIPS 180-4; the long packet ID of static-key mode, id 4 + time 4,
`packet_id.h`), IPv4 20 (RFC 791) and UDP 8 (RFC 768).

These tests need root, network namespaces and openvpn; without them they are skipped,
saying why.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from emu_host import own_emu_registry, why_no_namespaces  # noqa: F401 (an autouse fixture)
from qoslab.scenario import load_scenario


def _why_not() -> str | None:
    if os.geteuid() == 0 and shutil.which("openvpn") is None:
        return "openvpn is not installed (scripts/install.sh installs it: apt-get install openvpn)"
    return why_no_namespaces()


WHY = _why_not()
pytestmark = pytest.mark.skipif(WHY is not None, reason=WHY or "")

QOSLAB = [sys.executable, "-m", "qoslab"]

ETHERNET_MTU = 1500
"""IEEE 802.3 §3.2.7: the MAC client data field of an Ethernet II frame, at most 1500 octets."""
IPV4 = 20
"""RFC 791 §3.1: the header without options."""
UDP = 8
"""RFC 768."""
HMAC_SHA1 = 20
"""RFC 2104 with SHA-1 (FIPS 180-4: a 160-bit digest): OpenVPN's `--auth SHA1`, untruncated."""
PACKET_ID_LONG = 4 + 4
"""OpenVPN `packet_id.h`: a static key's packet ID is the long form, a 32-bit id and a
32-bit time (`init_crypto_static` sets `CO_PACKET_ID_LONG_FORM`); a static-key packet
has no opcode (`forward.c` adds one only for TLS, in `tls_post_encrypt`)."""
ETHERNET_HEADER = 14
"""IEEE 802.3 §3.1.1: destination, source, type; a TAP device's frames carry no FCS."""


def _scenario(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "scenario.toml"
    path.write_text(textwrap.dedent(text))
    return path


def tunnel_scenario(dev: str, replay: bool, proto: str = "udp") -> str:
    """A client, an OpenVPN server that routes, and a host behind it (examples/openvpn_tcp.toml's shape)."""
    return f"""
    [scenario]
    name = "OpenVPN {dev} over {proto}, static key"
    seed = 1

    [node.client]
    role = "host"
    address = "198.51.100.2/24"

    [node.vpnserver]
    role = "router"
    address = ["198.51.100.1/24", "10.9.0.1/24"]

    [node.host]
    role = "host"
    address = "10.9.0.2/24"
    gateway = "10.9.0.1"

    [[link]]
    name = "wan"
    type = "ethernet"
    rate = "100 Mbps"
    ends = ["client", "vpnserver"]

    [[link]]
    name = "lan"
    type = "ethernet"
    rate = "100 Mbps"
    ends = ["vpnserver", "host"]

    [[tunnel]]
    name = "ovpn"
    type = "openvpn"
    over = "wan"
    from = "client"
    to = "vpnserver"
    proto = "{proto}"
    dev = "{dev}"
    cipher = "none"
    auth = "sha1"
    replay = {"true" if replay else "false"}

    [[test]]
    method = "ping"
    from = "client"
    to = "host"
    count = 3
    interval = "0.2 s"
    """


def _build(path: Path, *, mtu_disc: str) -> Any:
    """The scenario's network, its links direct veth pairs (the path MTU is the
    interfaces' and the tunnel's, not the link model's)."""
    from qoslab.backends.emu import prepare, registry, topology
    from qoslab.backends.emu.links import DirectVeth

    net = prepare(load_scenario(path), source=path)
    record = registry.RunRecord.start(str(path), DirectVeth.implementation)
    return topology.build(net.config, record, DirectVeth(), mtu_disc=mtu_disc)


def _tap_addresses(topo: Any) -> str:
    """Qoslab's lowering puts no address on a TAP port (PPPoE rides on it, seed 002): a
    /30 on each end's TAP device (RFC 5737 TEST-NET-3), for IP through it. Returns the
    server end's address."""
    from pyroute2 import NetNS

    for node, address in (("client", "203.0.113.1"), ("vpnserver", "203.0.113.2")):
        with NetNS(topo.namespace(node)) as ns:
            idx = ns.link_lookup(ifname="tap0")[0]
            ns.addr("add", index=idx, address=address, prefixlen=30)
    return "203.0.113.2"


@pytest.mark.parametrize(
    ("dev", "replay", "inner_header"),
    [("tap", True, ETHERNET_HEADER), ("tun", True, 0), ("tap", False, ETHERNET_HEADER)],
)
def test_path_mtu_through_real_openvpn_equals_qoslab_mtu(
    tmp_path: Path, dev: str, replay: bool, inner_header: int
) -> None:
    from qoslab.analysis.mtu import analyse
    from qoslab.backends.emu import measure, openvpn, topology

    overhead = HMAC_SHA1 + (PACKET_ID_LONG if replay else 0)
    # The arithmetic, then the analyser, then openvpn between two kernels.
    written = ETHERNET_MTU - IPV4 - UDP - overhead - inner_header
    inner = "ethernet/ipv4" if dev == "tap" else "ipv4"
    stack = f"ethernet/ipv4/udp/openvpn(key=static,cipher=none,auth=sha1,replay={'yes' if replay else 'no'})/{inner}"
    analysed = analyse(stack).mtu
    assert analysed == written
    if dev == "tap" and replay:
        assert written == 1430  # issue 17: measured on a machine of this kind

    topo = _build(_scenario(tmp_path, tunnel_scenario(dev, replay)), mtu_disc="yes")
    try:
        assert len(topo.tunnels) == 2  # one openvpn per end
        assert all(t.process.poll() is None for t in topo.tunnels)
        assert "--secret" in topo.tunnels[0].argv and "--mtu-disc" in topo.tunnels[0].argv
        dst = _tap_addresses(topo) if dev == "tap" else "10.9.0.2"
        measured = measure.path_mtu(topo, "client", dst)
        assert openvpn.version().startswith("OpenVPN ")
    finally:
        topology.teardown(topo)
    assert measured == analysed


def test_run_openvpn_tcp_example_end_to_end(tmp_path: Path) -> None:
    """examples/openvpn_tcp.toml on the emulation backend, with a ping added: its
    tcp.bulk and the ping through the real openvpn over TCP, records saying which
    openvpn ran, and nothing left after."""
    import json

    from qoslab.backends.emu.registry import registered_runs

    example = Path(__file__).resolve().parent.parent / "examples" / "openvpn_tcp.toml"
    text = example.read_text().replace('duration = "3 s"', 'duration = "2 s"')
    text += '\n[[test]]\nmethod = "ping"\nfrom = "client"\nto = "host"\ncount = 3\ninterval = "0.2 s"\n'
    path = tmp_path / "openvpn_tcp.toml"
    path.write_text(text)
    done = subprocess.run(
        [*QOSLAB, "run", str(path), "--backend", "emu", "--json"], capture_output=True, text=True, timeout=240
    )
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    rec, ping = out["results"]
    assert ping["test"] == "ping" and ping["metrics"]["received"] == 3
    assert ping["tunnel_implementation"] == rec["tunnel_implementation"]
    assert rec["tunnel_implementation"].startswith("OpenVPN 2.")
    assert "static key" in rec["tunnel_implementation"]
    assert "tunnels: OpenVPN" in done.stderr
    # The client has no gateway: its only route to the host is the tunnel's.
    assert rec["metrics"]["throughput_mbps"] > 0 and rec["metrics"]["bytes_received"] > 0
    assert registered_runs() == []


def test_check_refuses_what_openvpn_cannot_run_as_planned(tmp_path: Path) -> None:
    """A GCM cipher (no static-key layout modelled) is refused by `check --backend emu`
    at its key, exit 2, and the simulator still takes the scenario."""
    text = tunnel_scenario("tun", True).replace('cipher = "none"', 'cipher = "aes-128-gcm"')
    path = _scenario(tmp_path, text)
    done = subprocess.run([*QOSLAB, "check", str(path), "--backend", "emu"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2, done.stderr
    assert "tunnel[0].cipher" in done.stderr and "static key" in done.stderr
    assert "Traceback" not in done.stderr
    sim = subprocess.run([*QOSLAB, "check", str(path)], capture_output=True, text=True, timeout=60)
    assert sim.returncode == 0, sim.stderr


def test_kill_9_of_an_openvpn_run_then_emu_clean_leaves_nothing(tmp_path: Path) -> None:
    """After kill -9 of a run whose openvpn ends are up, `qoslab emu clean` leaves no
    namespace, no openvpn of the run, and not its directory (the static key)."""
    import signal
    import time

    from pyroute2 import netns
    from qoslab.backends.emu.registry import alive, registered_runs

    text = tunnel_scenario("tun", True).replace("count = 3", "count = 100")
    path = _scenario(tmp_path, text)
    run = subprocess.Popen([*QOSLAB, "run", str(path), "--backend", "emu"], stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 90
        record = None
        while time.monotonic() < deadline:
            runs = registered_runs()
            # Running: two emulators, two openvpn and the ping.
            if runs and len(runs[0].pids) >= 5:
                record = runs[0]
                break
            time.sleep(0.1)
        assert record is not None, "the run did not start its ping within 90 s"
        assert record.temp_dirs and Path(record.temp_dirs[0]).is_dir()
        assert list(Path(record.temp_dirs[0]).glob("*.key"))
        os.kill(run.pid, signal.SIGKILL)
        run.wait(timeout=10)
    finally:
        if run.poll() is None:
            run.kill()
    assert [n for n in netns.listnetns() if n.startswith(f"qoslab-{record.run}-")]  # killed: still there
    done = subprocess.run([*QOSLAB, "emu", "clean"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert not [n for n in netns.listnetns() if n.startswith(f"qoslab-{record.run}")]
    assert not [pid for pid, start in record.pids if pid is not None and alive(pid, start)]
    assert not Path(record.temp_dirs[0]).exists()
    assert not (Path(os.environ["QOSLAB_EMU_REGISTRY"]) / f"{record.run}.json").exists()


def _udp_payloads(pcap: bytes) -> list[bytes]:
    """The UDP payloads of a classic pcap of Ethernet II frames carrying IPv4 (pcap's
    file format, LINKTYPE_ETHERNET; IPv4 header length from its IHL, RFC 791)."""
    import struct

    out, at = [], 24
    while at + 16 <= len(pcap):
        (caplen,) = struct.unpack_from("<I", pcap, at + 8)
        frame = pcap[at + 16 : at + 16 + caplen]
        at += 16 + caplen
        if frame[12:14] == b"\x08\x00" and frame[23] == 17:
            ihl = (frame[14] & 0x0F) * 4
            out.append(frame[14 + ihl + 8 :])
    return out


def test_real_static_key_packets_have_the_layout_qoslab_mtu_counts(tmp_path: Path) -> None:
    """A data packet openvpn itself sent, captured by tshark, has the layout wire encodes
    for openvpn(key=static): HMAC-SHA1 over the rest (checked with Python's hmac and the
    run's key file), 4-byte packet id, 4-byte time, then the inner IPv4 packet."""
    import hashlib
    import hmac
    import time

    from qoslab.analysis.mtu import analyse
    from qoslab.backends.emu import measure, topology

    if shutil.which("tshark") is None and not os.environ.get("QOSLAB_REQUIRE_TSHARK"):
        pytest.skip("tshark is not installed")
    stack = "ethernet/ipv4/udp/openvpn(key=static,cipher=none,auth=sha1,replay=yes)/ipv4"
    (layer,) = [x for x in analyse(stack).layers if x.name.startswith("openvpn")]
    assert layer.fields == [("hmac", 20), ("packet id", 4), ("packet id time", 4)]

    topo = _build(_scenario(tmp_path, tunnel_scenario("tun", True)), mtu_disc="no")
    capture = tmp_path / "server_to_client.pcap"
    try:
        tshark = subprocess.Popen(
            ["ip", "netns", "exec", topo.namespace("client"), "tshark", "-i", "eth0", "-F", "pcap", "-w", str(capture)]
            + ["-c", "1", "-f", "udp and src host 198.51.100.1 and src port 1194"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        topo.registry.add_pid(tshark.pid)
        assert tshark.stderr is not None
        deadline = time.monotonic() + 30
        while "Capturing on" not in tshark.stderr.readline():
            assert time.monotonic() < deadline and tshark.poll() is None, "tshark did not start"
        # The echo reply comes back through the tunnel: the server's openvpn seals it.
        assert measure.df_ping(topo, "client", "10.9.0.2", 84)
        tshark.wait(timeout=30)
        tshark.stderr.close()
        key_file = Path(topo.registry.temp_dirs[0]) / "tunnel0.key"
        text = key_file.read_text()
    finally:
        topology.teardown(topo)
    (packet,) = _udp_payloads(capture.read_bytes())
    hexa = "".join(line for line in text.splitlines() if line and not line.startswith(("#", "-")))
    key = bytes.fromhex(hexa)
    # openvpn's static key file: 4 slots of 64 bytes, (cipher, HMAC) for direction 0 then
    # for 1 (crypto.c key_direction_state_init: direction 0 sends with slot pair 0); the
    # server runs with direction 0, and HMAC-SHA1 takes the HMAC slot's first 20 bytes.
    assert len(key) == 256
    hmac_key = key[64 : 64 + 20]
    assert hmac.new(hmac_key, packet[20:], hashlib.sha1).digest() == packet[:20]
    packet_id, sent_at = int.from_bytes(packet[20:24], "big"), int.from_bytes(packet[24:28], "big")
    assert 1 <= packet_id < 100
    assert abs(sent_at - time.time()) < 3600
    inner = packet[28:]
    assert inner[0] >> 4 == 4 and int.from_bytes(inner[2:4], "big") == len(inner) == 84
