"""Seed 002 §3.4 (PPTP over an OpenVPN-UDP layer-2 VPN) through the simulator: the
example runs under `qoslab run`, the PPTP control connection (RFC 2637 §3.1) comes
before the first GRE packet, the largest PPTP MTU that crosses the TAP without
fragmentation is the one the layer sizes give (and `qoslab mtu` computes), and tshark
dissects the captures layer by layer.

The seed publishes no PPTP throughput (Fig. 6 sweeps the PPPoE MTU only), so there is
no throughput check here; the example's TCP result is reported, not asserted.
"""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import EXAMPLES, pcap_packets
from qoslab.analysis.mtu import analyse
from qoslab.backends.sim import run_tests
from qoslab.scenario import load_scenario

EXAMPLE = EXAMPLES / "seed002_pptp_over_openvpn.toml"
TAP_MTU = 1430
"""Seed 002 §3.2: the TAP interface's MTU (1448 octets of OpenVPN payload less 18)."""
PPTP_MTU = TAP_MTU - 20 - 12 - 1
"""Seed 002 §3.4: less the outer IPv4 header (RFC 791: 20), enhanced GRE with key and
sequence number (RFC 2637 §4.1: 8 + 4) and PPP's compressed protocol field (1)."""
PPTP_PORT = 1723  # RFC 2637 §2 (IANA)
MAGIC_COOKIE = 0x1A2B3C4D  # RFC 2637 §2.1
CONTROL_TYPES = {1: "SCCRQ", 2: "SCCRP", 7: "OCRQ", 8: "OCRP"}  # RFC 2637 §2.1-§2.8
IPPROTO_TCP, IPPROTO_GRE = 6, 47
PPTPD = bytes([192, 0, 2, 1])
"""pptpd's address in the example: the outer destination of the client's GRE."""

TSHARK = shutil.which("tshark")


def ipv4_packets(path: Path) -> list[bytes]:
    """The IPv4 packets of an Ethernet capture (EtherType 0x0800)."""
    return [f[14:] for f in pcap_packets(path) if f[12:14] == b"\x08\x00"]


def events(path: Path) -> list[str]:
    """PPTP control messages by name and GRE packets ("GRE"), in capture order."""
    order: list[str] = []
    for ip in ipv4_packets(path):
        ihl = (ip[0] & 0x0F) * 4
        if ip[9] == IPPROTO_TCP:
            tcp = ip[ihl:]
            sport, dport = struct.unpack("!HH", tcp[:4])
            assert PPTP_PORT in (sport, dport), f"TCP {sport} -> {dport} on the TAP"
            data = tcp[(tcp[12] >> 4) * 4 :]
            while len(data) >= 10:
                length, _, cookie, ctype = struct.unpack("!HHIH", data[:10])
                assert cookie == MAGIC_COOKIE
                order.append(CONTROL_TYPES.get(ctype, str(ctype)))
                data = data[length:]
        elif ip[9] == IPPROTO_GRE:
            order.append("GRE")
    return order


def test_the_example_runs_and_the_control_connection_precedes_gre(tmp_path: Path):
    done = subprocess.run(
        [sys.executable, "-m", "qoslab", "run", str(EXAMPLE), "--pcap", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    order = events(tmp_path / "test0" / "client-tap0.pcap")
    assert order[:5] == ["SCCRQ", "SCCRP", "OCRQ", "OCRP", "GRE"], order[:8]
    assert order.count("GRE") > 1000, "the TCP transfer rode in GRE"


def udp_scenario(tmp_path: Path, mtu: int, payload: int) -> Path:
    """The example with the PPTP MTU set and a one-way UDP stream of ``payload`` octets
    (no data back, so no acknowledgment rides on the client's GRE packets)."""
    text = EXAMPLE.read_text(encoding="utf-8")
    text = text.replace("mtu = 1397", f"mtu = {mtu}")
    text = text[: text.index("[[test]]")] + (
        '[[test]]\nmethod = "udp.flow"\nfrom = "client"\nto = "pptpd"\n'
        f'payload = {payload}\nrate = "1 Mbps"\nduration = "1 s"\n'
    )
    path = tmp_path / f"pptp_{mtu}.toml"
    path.write_text(text, encoding="utf-8")
    return path


def fragmented(ip: bytes) -> bool:
    flags_offset = struct.unpack("!H", ip[6:8])[0]
    return bool(flags_offset & 0x2000 or flags_offset & 0x1FFF)  # MF, or a fragment offset


def client_gre(tmp_path: Path, mtu: int) -> list[bytes]:
    """The client's outer GRE data packets (or fragments of them) on its TAP, with
    datagrams of exactly ``mtu`` octets sent."""
    path = udp_scenario(tmp_path, mtu, mtu - 20 - 8)
    out = tmp_path / f"cap{mtu}"
    run_tests(load_scenario(path), source=path, pcap_dir=out)
    to_server = [
        ip for ip in ipv4_packets(out / "test0" / "client-tap0.pcap") if ip[9] == IPPROTO_GRE and ip[16:20] == PPTPD
    ]
    return [ip for ip in to_server if len(ip) > 1000 or fragmented(ip)]


def test_the_largest_unfragmented_pptp_mtu_is_what_qoslab_mtu_computes(tmp_path: Path):
    stack = "ethernet/ipv4/udp/openvpn(cipher=none,auth=sha1)/ethernet/ipv4/gre(pptp)/ppp/ipv4"
    computed = analyse(stack, count_fcs=True).interfaces[-1].mtu  # the seed's accounting (FCS in the 1448)
    assert computed == PPTP_MTU == 1397
    # At the computed MTU a full-size datagram leaves as one outer packet filling the TAP.
    fits = client_gre(tmp_path, computed)
    assert fits and all(len(ip) == TAP_MTU and not fragmented(ip) for ip in fits), sorted(
        {(len(ip), fragmented(ip)) for ip in fits}
    )
    # One octet more and the outer packet no longer fits: fragmented after encapsulation.
    over = client_gre(tmp_path, computed + 1)
    assert over and any(fragmented(ip) for ip in over)


@pytest.mark.skipif(TSHARK is None and not os.environ.get("QOSLAB_REQUIRE_TSHARK"), reason="tshark not installed")
def test_tshark_dissects_gre_ppp_and_the_pptp_control_connection(tmp_path: Path):
    sc = load_scenario(EXAMPLE)
    sc.test[0].duration = 1_000_000_000
    run_tests(sc, source=EXAMPLE, pcap_dir=tmp_path)
    tap = tmp_path / "test0" / "client-tap0.pcap"
    checks = ("-o", "tcp.check_checksum:TRUE", "-o", "ip.check_checksum:TRUE")

    def fields(*options: str) -> list[str]:
        args = [TSHARK or "tshark", "-n", "-r", str(tap), *checks, *options, "-T", "fields", "-e", "frame.protocols"]
        return subprocess.run(args, capture_output=True, text=True, check=True).stdout.split()

    protocols = set(fields())
    # PPP inside enhanced GRE: LCP, MS-CHAPv2 (CHAP), IPCP, then TCP in IP in PPP.
    assert {
        "eth:ethertype:ip:gre:ppp:lcp",
        "eth:ethertype:ip:gre:ppp:chap",
        "eth:ethertype:ip:gre:ppp:ipcp",
    } <= protocols, protocols
    assert any(p.startswith("eth:ethertype:ip:gre:ppp:ip:tcp") for p in protocols), protocols
    control = fields("-Y", "tcp.port == 1723 && tcp.len > 0")
    assert control and all(p.endswith(":pptp") for p in control), control
    types = subprocess.run(
        [TSHARK or "tshark", "-n", "-r", str(tap), "-Y", "pptp", "-T", "fields", "-e", "pptp.control_message_type"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert types[:4] == ["1", "2", "7", "8"], types  # SCCRQ, SCCRP, OCRQ, OCRP (RFC 2637 §2.1)
    verbose = subprocess.run(
        [TSHARK or "tshark", "-n", "-r", str(tap), "-V", *checks], capture_output=True, text=True, check=True
    ).stdout
    for bad in ("Malformed Packet", "[Checksum: Bad]", "Exception occurred"):
        assert bad not in verbose


def test_mppe_is_refused_at_its_key(tmp_path: Path):
    from qoslab.backends.sim import lower_network
    from qoslab.errors import InputError

    body = EXAMPLE.read_text(encoding="utf-8").replace('auth = "mschapv2"', 'auth = "mschapv2"\nmppe = true')
    path = tmp_path / "mppe.toml"
    path.write_text(body, encoding="utf-8")
    with pytest.raises(InputError) as info:
        lower_network(load_scenario(path), source=path)
    line = next(i for i, text_line in enumerate(body.splitlines(), 1) if text_line == "mppe = true")
    assert str(info.value).startswith(f"{path}:{line}:"), str(info.value)
    assert "tunnel[1].mppe: " in str(info.value) and "does not model this yet" in str(info.value)
    done = subprocess.run(
        [sys.executable, "-m", "qoslab", "run", str(path)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 2 and "Traceback" not in done.stderr
