"""The emulation backend's links through the link emulator (python/qoslab/backends/emu/
links.py, ``EmulatedLink``), as a user runs them: ``qoslab run FILE --backend emu``.
Each checks the link model against a figure computed here from the standard: IEEE
802.3's framing overheads for the rate, twice the one-way delay for ping's RTT; and
that a ``kill -9`` of a run leaves no emulator process after ``qoslab emu clean``.

They need root and network namespaces; without them they are skipped, saying why.
Each uses a registry directory of its own (QOSLAB_EMU_REGISTRY).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest
from emu_host import own_emu_registry, why_no_namespaces  # noqa: F401 (an autouse fixture)


def _why_no_namespaces() -> str | None:
    if os.geteuid() == 0 and not os.path.exists("/dev/net/tun"):
        return "the link emulator needs TAP devices (/dev/net/tun)"
    return why_no_namespaces()


WHY = _why_no_namespaces()
pytestmark = pytest.mark.skipif(WHY is not None, reason=WHY or "")

QOSLAB = [sys.executable, "-m", "qoslab"]

# IEEE 802.3 framing around a UDP payload on the wire: UDP header 8 B (RFC 768), IPv4
# header 20 B (RFC 791, no options), MAC header 14 B and FCS 4 B (IEEE 802.3 §3.1.1),
# preamble and SFD 8 B (§3.2.1-2), inter-frame gap 96 bit times = 12 B (§4.4.2).
UDP, IPV4, MAC, FCS, PREAMBLE, IFG = 8, 20, 14, 4, 8, 12


def _two_hosts(tmp_path: Path, link: str, test: str) -> Path:
    path = tmp_path / "scenario.toml"
    text = f"""
        [scenario]
        name = "two hosts, one emulated link"
        seed = 1

        [node.h1]
        role = "host"
        address = "10.0.0.1/24"

        [node.h2]
        role = "host"
        address = "10.0.0.2/24"

        [[link]]
        name = "wire"
        type = "ethernet"
        ends = ["h1", "h2"]
        {link}

        [[test]]
        from = "h1"
        to = "h2"
        {test}
    """
    path.write_text(textwrap.dedent(text).replace("\n        ", "\n"))
    return path


def _run(path: Path, *extra: str) -> dict[str, Any]:
    done = subprocess.run(
        [*QOSLAB, "run", str(path), "--backend", "emu", "--json", *extra], capture_output=True, text=True, timeout=180
    )
    assert done.returncode == 0, done.stderr
    out: dict[str, Any] = json.loads(done.stdout)
    return out


def _balances(direction: dict[str, Any]) -> bool:
    """docs/metrics.md, "The link emulator": offered = delivered + dropped + held."""
    dropped = sum(c["frames"] for c in direction["dropped"].values())
    held = direction["queued_at_stop"]["frames"] + direction["in_flight_at_stop"]["frames"]
    return bool(direction["offered"]["frames"] == direction["delivered"]["frames"] + dropped + held)


def test_a_10_mbps_link_carries_10_mbps_of_wire_bits_when_offered_20(tmp_path: Path) -> None:
    payload = 1000
    path = _two_hosts(
        tmp_path,
        'rate = "10 Mbps"',
        f'method = "udp.flow"\nrate = "20 Mbps"\npayload = {payload}\nduration = "2 s"',
    )
    out = _run(path)
    assert out["link_implementation"] == "emulated"
    rec = out["results"][0]
    assert rec["link_implementation"] == "emulated"
    m = rec["metrics"]
    # The receiver gets what the line serializes: 10 Mb/s of wire bits, of which each
    # datagram's payload is payload / (payload + every header and the wire's overheads).
    wire = payload + UDP + IPV4 + MAC + FCS + PREAMBLE + IFG
    expected = 10.0 * payload / wire
    assert m["goodput_mbps"] == pytest.approx(expected, rel=0.03)
    # Twice the line's rate is offered for 2 s: the line sends 10 Mb/s of wire frames,
    # the queue (the scenario's default, 1000 frames) fills, the rest is dropped there.
    (link,) = rec["emulated_links"]
    forward = link["directions"][0]
    assert (forward["from"], forward["to"]) == ("a", "b")
    line_fps = 10e6 / (8 * wire)
    expected_drops = m["sent"] - line_fps * 2.0 - 1000
    assert forward["dropped"]["queue_full"]["frames"] == pytest.approx(expected_drops, abs=0.03 * m["sent"])
    assert all(_balances(d) for d in link["directions"])
    # The datagrams iperf3 counts received are the frames the emulator delivered,
    # less the learning ping's and iperf3's control connection's (a few tens).
    assert 0 <= forward["delivered"]["frames"] - m["received"] < 100


def test_a_20_ms_link_gives_ping_an_rtt_of_two_delays(tmp_path: Path) -> None:
    path = _two_hosts(
        tmp_path,
        'rate = "100 Mbps"\ndelay = "20 ms"',
        'method = "ping"\ncount = 6\ninterval = "0.2 s"',
    )
    rec = _run(path)["results"][0]
    rtts = rec["metrics"]["rtt_ms"]
    assert len(rtts) == 6
    # Request and reply each take the delay plus their serialization (84 B ICMP + IPv4
    # + MAC + FCS + preamble + IFG = 126 B, 10 us at 100 Mb/s): at least 40 ms. The
    # first also waits for ARP's request and reply (two more delays).
    two_delays = 2 * 20.0
    assert all(rtt >= two_delays for rtt in rtts)
    assert rtts[0] >= 2 * two_delays
    # The rest: the kernels' and the emulator's own time, a few ms at most.
    assert all(rtt < two_delays + 5.0 for rtt in rtts[1:]), rtts


def test_direct_veth_stays_available_and_is_recorded(tmp_path: Path) -> None:
    path = _two_hosts(
        tmp_path,
        'rate = "100 Mbps"\ndelay = "20 ms"',
        'method = "ping"\ncount = 3\ninterval = "0.2 s"',
    )
    out = _run(path, "--emu-links", "direct")
    rec = out["results"][0]
    assert out["link_implementation"] == rec["link_implementation"] == "direct veth"
    assert "emulated_links" not in rec
    # No link model: the 20 ms delay is not there.
    assert max(rec["metrics"]["rtt_ms"][1:]) < 20.0


def test_a_slip_line_at_9600_gives_ping_the_rtt_of_its_characters(tmp_path: Path) -> None:
    path = tmp_path / "serial.toml"
    path.write_text(
        textwrap.dedent(
            """
            [scenario]
            name = "a SLIP line"
            seed = 1

            [node.h1]
            role = "host"
            address = "10.0.0.1/30"

            [node.h2]
            role = "host"
            address = "10.0.0.2/30"

            [[link]]
            name = "modem"
            type = "serial"
            rate = "9600 bps"
            framing = "slip"
            ends = ["h1", "h2"]

            [[test]]
            method = "ping"
            from = "h1"
            to = "h2"
            count = 4
            interval = "0.5 s"
            """
        )
    )
    check = subprocess.run([*QOSLAB, "check", str(path), "--backend", "emu"], capture_output=True, text=True)
    assert check.returncode == 0, check.stderr
    out = _run(path)
    rec = out["results"][0]
    (link,) = rec["emulated_links"]
    assert link["kind"] == "serial"
    # An echo request or reply of 56 payload bytes is an 84-byte IPv4 datagram (ICMP 8,
    # IPv4 20, RFC 792/791); SLIP sends END before and after it (RFC 1055), each octet
    # as 10 bits (start, 8 data, stop: 8N1). ESC-doubled octets, if any, add 2 each;
    # no ARP crosses the line (arp off), so even the first ping takes two datagrams only.
    one_way_ms = (84 + 2) * 10 / 9600 * 1000
    rtts = rec["metrics"]["rtt_ms"]
    assert len(rtts) == 4
    assert all(2 * one_way_ms - 0.5 <= rtt < 2 * one_way_ms + 2 * 4 * 10 / 9600 * 1000 + 5.0 for rtt in rtts), rtts
    # And the kernels keep no ARP entry for a serial line, as the simulator's nodes do.
    assert all(n["arp_table"] == [] for n in out["nodes"])


def _alive(pid: int, start: int | None) -> bool:
    from qoslab.backends.emu.registry import alive

    return alive(pid, start)


def _emulators(parent: int | None = None) -> set[int]:
    """The link emulator processes on the machine; with ``parent``, those started for the
    run of that pid (link_child's last argument), so that other runs on the machine at the
    same time do not count."""
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmdline = (entry / "cmdline").read_bytes()
            except OSError:
                continue
            if b"qoslab.backends.emu.link_child" in cmdline:
                if parent is None or cmdline.rstrip(b"\0").split(b"\0")[-1] == str(parent).encode():
                    found.add(int(entry.name))
    return found


def test_kill_9_of_a_run_then_emu_clean_leaves_no_emulator(tmp_path: Path) -> None:
    from qoslab.backends.emu.registry import registered_runs

    path = _two_hosts(
        tmp_path,
        'rate = "100 Mbps"\ndelay = "1 ms"',
        'method = "ping"\ncount = 300\ninterval = "0.1 s"',
    )
    run = subprocess.Popen([*QOSLAB, "run", str(path), "--backend", "emu"], stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            runs = registered_runs()
            if runs and len(runs[0].pids) >= 2:  # the link's emulator, then ping
                break
            time.sleep(0.1)
        else:
            pytest.fail("the run did not start its emulator and ping within 60 s")
        record = runs[0]
        emulator_pid, emulator_start = record.pids[0]
        assert emulator_pid is not None and emulator_pid in _emulators(parent=run.pid)
        os.kill(run.pid, signal.SIGKILL)
        run.wait(timeout=10)
    finally:
        if run.poll() is None:
            run.kill()
    done = subprocess.run([*QOSLAB, "emu", "clean"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert not _alive(emulator_pid, emulator_start)
    assert not _emulators(parent=run.pid)
    from pyroute2 import netns

    assert not [n for n in netns.listnetns() if n.startswith(f"qoslab-{record.run}-")]
