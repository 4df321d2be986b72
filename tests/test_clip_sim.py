"""Classical IP over ATM in the simulator through the scenario language: two logical IP
subnets on one switch that serves ATMARP, a router between them (examples/clip_two_lis.toml),
SVCs set up on the first packet, and the AAL5 capture of an ATM port dissected by tshark
(Q.2931, ATMARP, InATMARP, the AAL5 CRC-32 checked by Wireshark itself)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from qoslab.backends.sim import lower, run_tests, simulate
from qoslab.scenario import load_scenario

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "clip_two_lis.toml"
SIGNALLING_MS = 2.0  # the example's signalling_delay


def test_two_lis_through_a_router_with_svcs():
    sc = load_scenario(EXAMPLE)
    results = simulate(lower(sc, test_index=0))
    flow = results.flows[0]
    assert flow.received == flow.sent == 5
    atm = results.atm
    # Registrations of ws1, r1 (twice: one port per LIS) and ws2 with the server on the
    # switch, then ws1 -> r1 and r1 -> ws2; the replies use the same SVCs (the called
    # side learns the caller with InATMARP).
    assert atm.svc_setups == 6, atm
    setups = sorted(atm.svc_setup_ns)
    assert all(SIGNALLING_MS * 1e6 <= t < SIGNALLING_MS * 1e6 + 100_000 for t in setups[:4]), setups
    assert all(2 * SIGNALLING_MS * 1e6 <= t < 2 * SIGNALLING_MS * 1e6 + 100_000 for t in setups[4:]), setups
    rtts = flow.rtt_ns
    # The first echo waits for the VC to the server, then two calls (SETUP and CONNECT
    # each processed by the switch); later ones take cell times only.
    assert rtts[0] >= (SIGNALLING_MS + 2 * 2 * SIGNALLING_MS) * 1e6, rtts
    assert all(r < 100_000 for r in rtts[1:]), rtts
    # The router forwarded: ws1 has no SVC to ws2 (its only calls: the server, r1).
    assert atm.frames_corrupt == 0


@pytest.mark.skipif(shutil.which("tshark") is None, reason="tshark not installed")
def test_the_aal5_capture_dissects(tmp_path):
    sc = load_scenario(EXAMPLE)
    run_tests(sc, source=EXAMPLE, pcap_dir=tmp_path)
    pcap = tmp_path / "test0" / "ws1-atm0-aal5.pcap"
    fields = subprocess.run(
        [
            "tshark",
            "-r",
            str(pcap),
            "-T",
            "fields",
            "-e",
            "atm.vci",
            "-e",
            "q2931.message_type",
            "-e",
            "arp.opcode",
            "-e",
            "arp.hw.type",
            "-e",
            "icmp.type",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    rows = [line.split("\t") for line in fields]
    # Q.2931 on the signalling VC 0/5 (I.361 Table 2): SETUP 0x05, CONNECT 0x07, CONNECT ACK 0x0f.
    assert {r[1] for r in rows if r[0] == "5"} == {"0x05", "0x07", "0x0f"}
    # ATMARP (hardware type 19, RFC 2225 §8.7.1): ws1's requests to the server and its
    # replies; InATMARP (8, 9) when r1, called by ws1, asks who called it.
    atmarp = {(r[2], r[3]) for r in rows if r[2]}
    assert {("1", "19"), ("2", "19"), ("8", "19"), ("9", "19")} <= atmarp
    assert any(r[4] == "8" for r in rows) and any(r[4] == "0" for r in rows), "echo request and reply"
    verbose = subprocess.run(["tshark", "-r", str(pcap), "-V"], capture_output=True, text=True, check=True).stdout
    crcs = [line for line in verbose.splitlines() if "AAL5 CRC:" in line]
    assert len(crcs) == len(rows) and all("(correct)" in line for line in crcs), crcs[:3]
