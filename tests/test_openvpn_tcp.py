"""OpenVPN over TCP through `qoslab run`: the example's TUN tunnel runs with 1 % WAN loss,
its WAN capture is TCP to port 1194 that tshark dissects as OpenVPN without a malformed
packet, and `fragment` with `proto = "tcp"` is refused as OpenVPN refuses it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import EXAMPLES, pcap_packets

EXAMPLE = EXAMPLES / "openvpn_tcp.toml"
TSHARK = shutil.which("tshark")


def qoslab(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "qoslab", *args], capture_output=True, text=True, check=False, timeout=600
    )


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict, Path]:
    pcaps = tmp_path_factory.mktemp("pcap")
    proc = qoslab("run", str(EXAMPLE), "--json", "--pcap", str(pcaps))
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)["results"][0]["metrics"], pcaps / "test0"


def test_the_example_carries_tcp_through_the_tunnel(run):
    metrics, pcaps = run
    assert metrics["bytes_received"] > 1_000_000, metrics
    # Only TCP between the ends leaves the client on the WAN: the client's ephemeral port
    # (Linux 32768-60999) to the server's 1194, and back.
    ports = set()
    for f in pcap_packets(pcaps / "client-eth0.pcap"):
        if f[12:14] != b"\x08\x00":
            continue
        ip = f[14:]
        assert ip[9] == 6, "TCP"
        if int.from_bytes(ip[6:8], "big") & 0x1FFF:
            continue  # a later IPv4 fragment: no TCP header (a segment with SACK blocks is
            # sent 1512 octets long by the simulated TCP, which does not shrink it as Linux does)
        header = (ip[0] & 15) * 4
        sport, dport = (
            int.from_bytes(ip[header : header + 2], "big"),
            int.from_bytes(ip[header + 2 : header + 4], "big"),
        )
        ports.add((sport, dport) if dport == 1194 else (dport, sport))
    assert len(ports) == 1
    ((client_port, server_port),) = ports
    assert server_port == 1194 and 32768 <= client_port <= 60999


@pytest.mark.skipif(TSHARK is None and not os.environ.get("QOSLAB_REQUIRE_TSHARK"), reason="tshark not installed")
def test_tshark_dissects_the_wan_as_openvpn_over_tcp(run):
    _, pcaps = run
    wan = str(pcaps / "client-eth0.pcap")
    # OpenVPN packets run across TCP segment boundaries, so tshark must reassemble the
    # stream, also where a retransmission fills a hole after later segments arrived
    # (out of order on the wire): without that it loses the packet boundaries there.
    decode = [
        "-d",
        "tcp.port==1194,openvpn",
        "-o",
        "tcp.check_checksum:TRUE",
        "-o",
        "ip.check_checksum:TRUE",
        "-o",
        "tcp.reassemble_out_of_order:TRUE",
    ]
    fields = subprocess.run(
        [
            TSHARK or "tshark",
            "-n",
            "-r",
            wan,
            *decode,
            "-T",
            "fields",
            "-e",
            "frame.protocols",
            "-e",
            "openvpn.plen",
            "-e",
            "openvpn.opcode",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    rows = [line.split("\t") for line in fields]
    openvpn = [r for r in rows if "openvpn" in r[0]]
    assert openvpn and all(r[0].startswith("eth:ethertype:ip:tcp:openvpn") for r in openvpn)
    # The 2-byte packet length tshark reads is there (the TCP form), and every packet is
    # P_DATA_V2 (opcode 9).
    assert all(r[1] for r in openvpn)
    assert {op for r in openvpn for op in r[2].split(",")} == {"0x09"}
    verbose = subprocess.run(
        [TSHARK or "tshark", "-n", "-r", wan, *decode, "-V"], capture_output=True, text=True, check=True
    ).stdout
    for bad in ("Malformed Packet", "[Checksum: Bad]", "Exception occurred"):
        assert bad not in verbose


def test_fragment_with_tcp_is_refused_at_its_key(tmp_path: Path):
    body = EXAMPLE.read_text(encoding="utf-8").replace('auth = "sha1"', 'auth = "sha1"\nfragment = 1300')
    path = tmp_path / "fragment.toml"
    path.write_text(body, encoding="utf-8")
    proc = qoslab("run", str(path))
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    line = next(i for i, text in enumerate(body.splitlines(), 1) if text.startswith("fragment = "))
    assert f"{path}:{line}:" in proc.stderr
    assert "tunnel[0].fragment" in proc.stderr and "--fragment" in proc.stderr and "1300" in proc.stderr
    assert "mssfix" in proc.stderr
