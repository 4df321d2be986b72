"""qoslab._core.emulate_link as the emulation backend calls it: in a child process, with
TAP descriptors opened in two namespaces the test makes (qoslab-t-py<pid>-*, removed at
the end), stopped by SIGTERM or by closing its stop descriptor. The report's counters
must balance by the rule of docs/metrics.md ("The link emulator"), and pings over a 5 ms
link must take two delays. Needs root and /dev/net/tun; skipped elsewhere, saying why."""

from __future__ import annotations

import ctypes
import fcntl
import json
import os
import re
import signal
import struct
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from qoslab import _core

TUNSETIFF = 0x400454CA  # linux/if_tun.h: _IOW('T', 202, int)
IFF_TAP, IFF_NO_PI = 0x0002, 0x1000
CLONE_NEWNET = 0x40000000

needs_root = pytest.mark.skipif(
    os.geteuid() != 0 or not os.path.exists("/dev/net/tun"),
    reason="network namespaces and TAP devices need root and /dev/net/tun",
)

LINK: dict[str, Any] = {
    "type": "ethernet",
    "name": "l",
    "a": {"node": 0, "port": 0},
    "b": {"node": 1, "port": 0},
    "rate_bps": 100_000_000,
    "delay_ns": 5_000_000,
    "queue_frames": 100,
    "queue_bytes": 1_000_000,
}

_libc = ctypes.CDLL(None, use_errno=True)


@contextmanager
def _inside(ns: str) -> Iterator[None]:
    home = os.open("/proc/thread-self/ns/net", os.O_RDONLY)
    target = os.open(f"/run/netns/{ns}", os.O_RDONLY)
    try:
        assert _libc.setns(target, CLONE_NEWNET) == 0, os.strerror(ctypes.get_errno())
        yield
    finally:
        assert _libc.setns(home, CLONE_NEWNET) == 0
        os.close(target)
        os.close(home)


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True)


@pytest.fixture
def lab() -> Iterator[tuple[str, str, int, int]]:
    """Namespaces a and b, a TAP in each (10.201.0.1/24, 10.201.0.2/24); their descriptors."""
    stem = f"qoslab-t-py{os.getpid()}"
    names = (f"{stem}-a", f"{stem}-b")
    fds: list[int] = []
    try:
        for i, ns in enumerate(names):
            try:
                _ip("netns", "add", ns)
            except subprocess.CalledProcessError as e:
                pytest.skip(f"network namespaces cannot be made here: {e.stderr.decode().strip()}")
            dev = f"qoslab-t-{'ab'[i]}"
            with _inside(ns):
                fd = os.open("/dev/net/tun", os.O_RDWR | os.O_CLOEXEC)
                fcntl.ioctl(fd, TUNSETIFF, struct.pack("16sH22x", dev.encode(), IFF_TAP | IFF_NO_PI))
            fds.append(fd)
            _ip("-n", ns, "addr", "add", f"10.201.0.{i + 1}/24", "dev", dev)
            _ip("-n", ns, "link", "set", dev, "up")
        yield names[0], names[1], fds[0], fds[1]
    finally:
        for fd in fds:
            os.close(fd)
        for ns in names:
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)


def _start(fd_a: int, fd_b: int, link: dict[str, Any]) -> tuple[subprocess.Popen[str], int]:
    stop_r, stop_w = os.pipe()
    code = (
        "import sys; from qoslab._core import emulate_link; "
        "print(emulate_link(int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], 7, int(sys.argv[4])))"
    )
    child = subprocess.Popen(
        [sys.executable, "-c", code, str(fd_a), str(fd_b), json.dumps(link), str(stop_r)],
        pass_fds=(fd_a, fd_b, stop_r),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    os.close(stop_r)
    time.sleep(0.5)  # the child imports qoslab and enters its loop
    return child, stop_w


def _balances(direction: dict[str, Any]) -> bool:
    dropped = sum(c["frames"] for c in direction["dropped"].values())
    held = direction["queued_at_stop"]["frames"] + direction["in_flight_at_stop"]["frames"]
    return bool(direction["offered"]["frames"] == direction["delivered"]["frames"] + dropped + held)


@needs_root
def test_sigterm_stops_the_child_cleanly_with_balanced_counters(lab: tuple[str, str, int, int]) -> None:
    ns_a, _ns_b, fd_a, fd_b = lab
    child, stop_w = _start(fd_a, fd_b, LINK)
    try:
        ping = subprocess.run(
            ["ip", "netns", "exec", ns_a, "ping", "-n", "-c", "4", "-i", "0.2", "-W", "2", "10.201.0.2"],
            capture_output=True,
            text=True,
            check=True,
        )
        child.send_signal(signal.SIGTERM)
        out, err = child.communicate(timeout=10)
    finally:
        os.close(stop_w)
        if child.poll() is None:
            child.kill()
    assert child.returncode == 0, err
    report = json.loads(out)
    assert report["stopped_by"] == "SIGTERM"
    assert (report["link"], report["kind"], report["ends"], report["seed"]) == ("l", "ethernet", ["tap", "tap"], 7)
    # Two 5 ms delays each way at least (ping prints to 0.1 ms or finer).
    rtts = [float(t) for t in re.findall(r"time=([\d.]+) ms", ping.stdout)]
    assert len(rtts) == 4 and min(rtts) >= 10.0, ping.stdout
    ab, ba = report["directions"]
    assert (ab["from"], ab["to"]) == ("a", "b")
    assert ab["offered"]["frames"] >= 4 and ba["delivered"]["frames"] >= 4, report
    assert _balances(ab) and _balances(ba), report
    assert ab["lateness_ns"]["frames"] == ab["delivered"]["frames"]


@needs_root
def test_closing_the_stop_descriptor_stops_it(lab: tuple[str, str, int, int]) -> None:
    _ns_a, _ns_b, fd_a, fd_b = lab
    child, stop_w = _start(fd_a, fd_b, LINK)
    os.close(stop_w)  # the parent gone: the pipe's read end sees the hang-up
    out, err = child.communicate(timeout=10)
    assert child.returncode == 0, err
    assert json.loads(out)["stopped_by"] == "stop fd closed"


@needs_root
def test_bad_links_are_refused_at_their_field(lab: tuple[str, str, int, int]) -> None:
    _ns_a, _ns_b, fd_a, fd_b = lab
    r, w = os.pipe()
    try:
        # Not a plan link at all (an ATM link lacks most of its fields): serde's refusal.
        with pytest.raises(ValueError, match="plan link"):
            _core.emulate_link(fd_a, fd_b, json.dumps({"type": "atm", "name": "x"}), 1, r)
        # A plan link whose loss the simulator's own builder refuses, at its field.
        bad_loss = dict(LINK, impair=[{"loss": {"model": "bernoulli", "p": 1.5}}, {}])
        with pytest.raises(ValueError, match=r"links\[3\]\.impair\[0\].*probability"):
            _core.emulate_link(fd_a, fd_b, json.dumps(bad_loss), 1, r, link_index=3)
    finally:
        os.close(r)
        os.close(w)


def test_a_descriptor_that_is_not_a_tap_is_refused() -> None:
    r, w = os.pipe()
    try:
        with pytest.raises(OSError, match="not an attached TUN/TAP device"):
            _core.emulate_link(r, w, json.dumps(LINK), 1, r)
    finally:
        os.close(r)
        os.close(w)
