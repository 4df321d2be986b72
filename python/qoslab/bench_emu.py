"""The link emulator (crates/emu) against a direct veth pair, in one run (issue 17, "Speed").

``qoslab bench --only emu_link`` runs :func:`run_emu_link`; benchmarks/emu_link.py runs the
same measurements with more variants (a normal process, other spins). Two namespaces
``qoslab-b-<pid>-<path>-a`` and ``-b`` are made for each path and removed at the end, a
failed or interrupted run's included. Needs root (namespaces, TAP devices) and a core
built with ``emulate_link``; :func:`unavailable_reason` says why not otherwise. Two
measurements, each on both paths (definitions in docs/metrics.md, "The link emulator"):

1. **Throughput.** A packet socket in namespace a sends 1514-byte Ethernet frames (a
   1500-byte payload, EtherType 0x88b5, IEEE 802 local experimental) as fast as it can for
   ``seconds``; the frames/s and Mb/s (frame bytes without FCS) are the far device's
   receive counter over the same span, read from its kernel. The emulated link is
   Ethernet at 100 Gb/s with no delay (its serializer, 0.12 µs a frame, never the
   limit) and a 1000-frame queue; the emulator's CPU time is that of its process.
2. **Timing error.** Frames go about one every ``gap_us`` (gaps uniform from half to one
   and a half of it) through an Ethernet link of 1 Gb/s and 1 ms; packet sockets with
   kernel timestamps (SO_TIMESTAMPNS) on the sending device (outgoing) and the receiving
   one (incoming) give each frame's send and arrival. The emulated link's error is
   ``arrival − (start + last bit + delay)``, IEEE 802.3's last bit of a 1514-byte frame
   at 1 Gb/s being (1514 + 8 + 4) × 8 ns, and its start its send, or the end of the
   frame before it and the inter-frame gap after that if later (:func:`model_arrivals`);
   the veth's figure is its own transit, ``arrival − send``, what a direct link adds.
"""

from __future__ import annotations

import ctypes
import fcntl
import itertools
import json
import math
import os
import platform
import random
import resource
import socket
import struct
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

CLONE_NEWNET = 0x40000000
TUNSETIFF = 0x400454CA  # linux/if_tun.h: _IOW('T', 202, int)
IFF_TAP, IFF_NO_PI = 0x0002, 0x1000
SO_TIMESTAMPNS = 35  # asm-generic/socket.h; SCM_TIMESTAMPNS is the same number
SO_RCVBUFFORCE = 33  # asm-generic/socket.h
ETH_P_ALL = 0x0003
PACKET_OUTGOING = 4
ETHERTYPE = 0x88B5  # IEEE 802 local experimental EtherType 1: no stack takes it
FRAME = 1514
"""Bytes of each frame without FCS: a 1500-byte payload and the 14-byte header."""
# The throughput frames' sequence number, which no timing frame has: a frame of the
# throughput run still in a TAP's ring when the timing run starts is not taken for one.
THROUGHPUT_SEQ = 0xFFFFFFFF
SEND_BATCH = 64
"""Frames per ``sendmmsg`` of the throughput sender."""
BUSY = 1_000_000
"""A spin of this many µs stands for busy polling (the binding's ``busy_poll``)."""
DEFAULT_SPIN = "adaptive"
"""The emulator's own spin before each deadline (crates/emu/src/run.rs, ``Options``): 50 µs,
or longer, up to 500 µs, while the kernel wakes it late."""
MAC_A, MAC_B = bytes.fromhex("020000000b0a"), bytes.fromhex("020000000b0b")
# The timing link: IEEE 802.3 last bit of a 1514-byte frame at 1 Gb/s (preamble + SFD 8,
# FCS 4), plus the link's delay.
TIMING_RATE_BPS, TIMING_DELAY_NS = 1_000_000_000, 1_000_000
LAST_BIT_NS = (FRAME + 8 + 4) * 8 * 10**9 // TIMING_RATE_BPS
# ... and the time from its first bit until the next frame may start: the inter-frame gap
# of 96 bit times after it (IEEE 802.3 §4.4.2).
SLOT_NS = (FRAME + 8 + 4 + 12) * 8 * 10**9 // TIMING_RATE_BPS

_libc = ctypes.CDLL(None, use_errno=True)


def _setns(fd: int) -> None:
    if _libc.setns(fd, CLONE_NEWNET) != 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))


@contextmanager
def inside(ns: str) -> Iterator[None]:
    """This thread in namespace ``ns`` (sockets and devices made here belong to it)."""
    home = os.open("/proc/thread-self/ns/net", os.O_RDONLY)
    target = os.open(f"/run/netns/{ns}", os.O_RDONLY)
    try:
        _setns(target)
        yield
    finally:
        _setns(home)
        os.close(target)
        os.close(home)


def ip(*args: str) -> str:
    return subprocess.run(["ip", *args], check=True, capture_output=True, text=True).stdout


def unavailable_reason() -> str | None:
    """Why the emulator cannot be measured here, or None if it can."""
    from qoslab import _core

    if os.geteuid() != 0:
        return "needs root: it makes network namespaces and TAP devices (run it with sudo)"
    if not os.path.exists("/dev/net/tun"):
        return "no /dev/net/tun: the kernel has no TUN/TAP devices here"
    if not hasattr(_core, "emulate_link"):
        return "this build of qoslab._core has no emulate_link: rebuild it (scripts/install.sh)"
    probe = f"qoslab-b-{os.getpid()}-probe"
    made = subprocess.run(["ip", "netns", "add", probe], capture_output=True, text=True)
    if made.returncode != 0:
        return f"network namespaces cannot be made here: {made.stderr.strip()}"
    subprocess.run(["ip", "netns", "del", probe], capture_output=True)
    return None


def rx_packets(ns: str, dev: str) -> int:
    stats = json.loads(ip("-n", ns, "-s", "-j", "link", "show", "dev", dev))
    return int(stats[0]["stats64"]["rx"]["packets"])


def open_tap(ns: str, name: str) -> int:
    with inside(ns):
        fd = os.open("/dev/net/tun", os.O_RDWR | os.O_CLOEXEC)
        fcntl.ioctl(fd, TUNSETIFF, struct.pack("16sH22x", name.encode(), IFF_TAP | IFF_NO_PI))
    return fd


def packet_socket(ns: str, dev: str, *, timestamps: bool = False) -> socket.socket:
    with inside(ns):
        s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
        if timestamps:
            s.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
            s.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, 64 << 20)
        s.bind((dev, 0))
    return s


@dataclass
class Path:
    """Two namespaces and a device in each; for the emulated path, the emulator's child."""

    kind: str  # "veth" or "emulated"
    ns_a: str
    ns_b: str
    dev_a: str
    dev_b: str
    tap_fds: tuple[int, int] | None = None
    child: subprocess.Popen[str] | None = None
    stop_w: int | None = None

    def start(
        self, link: dict[str, object], spin_us: int | None = None, fifo: int | None = None, kernel_arrivals: bool = True
    ) -> None:
        """The emulator in a child process on the TAPs (nothing for the veth); with
        ``kernel_arrivals`` False, each frame is timed from its read (the binding's option)."""
        if self.tap_fds is None:
            return
        stop_r, self.stop_w = os.pipe()
        fa, fb = self.tap_fds
        code = (
            f"import sys; from qoslab._core import emulate_link; BUSY = {BUSY}; "
            "a, b, s, spin, fifo, stamps = (int(x) for x in sys.argv[1:7]); "
            "print(emulate_link(a, b, sys.stdin.read(), 1, s, spin_us=None if spin < 0 else spin, "
            "busy_poll=spin == BUSY, fifo_priority=None if fifo < 0 else fifo, kernel_arrivals=stamps == 1))"
        )
        spin = -1 if spin_us is None else spin_us
        self.child = subprocess.Popen(
            [
                *(sys.executable, "-c", code, str(fa), str(fb), str(stop_r), str(spin)),
                *(str(-1 if fifo is None else fifo), str(int(kernel_arrivals))),
            ],
            pass_fds=(fa, fb, stop_r),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        os.close(stop_r)
        assert self.child.stdin is not None
        self.child.stdin.write(json.dumps(link))
        self.child.stdin.close()
        self.child.stdin = None  # written and closed: communicate() has nothing to send
        time.sleep(0.3)  # the child imports qoslab and enters its loop

    def stop(self) -> tuple[dict[str, Any] | None, float]:
        """The emulator's report and its CPU seconds (None, 0 for the veth)."""
        if self.child is None or self.stop_w is None:
            return None, 0.0
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        os.write(self.stop_w, b"x")
        out, _ = self.child.communicate(timeout=30)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        os.close(self.stop_w)
        self.child, self.stop_w = None, None
        cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
        report: dict[str, Any] = json.loads(out)
        return report, cpu


def make_path(kind: str, stem: str) -> Path:
    """Namespaces ``stem-a`` and ``stem-b`` joined by a veth pair or by two TAPs."""
    ns_a, ns_b = f"{stem}-a", f"{stem}-b"
    dev_a, dev_b = "qoslab-b-a", "qoslab-b-b"
    path = Path(kind, ns_a, ns_b, dev_a, dev_b)
    for ns in (ns_a, ns_b):
        ip("netns", "add", ns)
        with inside(ns):
            for knob in ("all", "default"):
                with open(f"/proc/sys/net/ipv6/conf/{knob}/disable_ipv6", "w") as f:
                    f.write("1")
        ip("-n", ns, "link", "set", "lo", "up")
    if kind == "veth":
        ip("-n", ns_a, "link", "add", dev_a, "type", "veth", "peer", "name", dev_b, "netns", ns_b)
    else:
        path.tap_fds = (open_tap(ns_a, dev_a), open_tap(ns_b, dev_b))
    for ns, dev, mac in ((ns_a, dev_a, MAC_A), (ns_b, dev_b, MAC_B)):
        ip("-n", ns, "link", "set", dev, "address", mac.hex(":"), "up")
    return path


def remove(path: Path) -> None:
    """The path's emulator stopped, its descriptors closed and its namespaces removed."""
    if path.child is not None:
        path.child.kill()
        path.child.wait()
    if path.tap_fds is not None:
        for fd in path.tap_fds:
            os.close(fd)
    for ns in (path.ns_a, path.ns_b):
        subprocess.run(["ip", "netns", "del", ns], capture_output=True)


def ethernet_link(rate_bps: int, delay_ns: int, queue_frames: int) -> dict[str, object]:
    """The plan's Ethernet link between the two namespaces' devices."""
    return {
        "type": "ethernet",
        "name": "bench",
        "a": {"node": 0, "port": 0},
        "b": {"node": 1, "port": 0},
        "rate_bps": rate_bps,
        "delay_ns": delay_ns,
        "queue_frames": queue_frames,
        "queue_bytes": queue_frames * FRAME,
    }


def frame(seq: int) -> bytearray:
    f = bytearray(MAC_B + MAC_A + ETHERTYPE.to_bytes(2, "big") + bytes(FRAME - 14))
    f[14:18] = seq.to_bytes(4, "big")
    return f


class _Iovec(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]


class _Msghdr(ctypes.Structure):
    _fields_ = [
        ("name", ctypes.c_void_p),
        ("namelen", ctypes.c_uint32),
        ("iov", ctypes.POINTER(_Iovec)),
        ("iovlen", ctypes.c_size_t),
        ("control", ctypes.c_void_p),
        ("controllen", ctypes.c_size_t),
        ("flags", ctypes.c_int),
    ]


class _Mmsghdr(ctypes.Structure):
    _fields_ = [("hdr", _Msghdr), ("len", ctypes.c_uint)]


class SendBatch:
    """``SEND_BATCH`` copies of one frame sent with one ``sendmmsg(2)`` on a bound packet
    socket: a sender from Python that a forwarder of a million frames a second does not
    outrun (one ``send`` per frame from Python reached about 130,000 frames/s here)."""

    def __init__(self, sock: socket.socket, data: bytes) -> None:
        self.fd = sock.fileno()
        self.buf = ctypes.create_string_buffer(data, len(data))
        self.iov = _Iovec(ctypes.cast(self.buf, ctypes.c_void_p), len(data))
        self.msgs = (_Mmsghdr * SEND_BATCH)()
        for m in self.msgs:
            m.hdr.iov = ctypes.pointer(self.iov)
            m.hdr.iovlen = 1

    def send(self) -> int:
        """Frames the kernel took (-1: none, the device's queue full)."""
        n: int = _libc.sendmmsg(self.fd, self.msgs, SEND_BATCH, 0)
        return n


def throughput(path: Path, seconds: float, fifo: int | None = None, kernel_arrivals: bool = True) -> dict[str, Any]:
    """Frames/s and Mb/s the far device received while the sender sent for ``seconds``."""
    path.start(ethernet_link(100 * 10**9, 0, 1000), fifo=fifo, kernel_arrivals=kernel_arrivals)
    sender = packet_socket(path.ns_a, path.dev_a)
    batch = SendBatch(sender, bytes(frame(THROUGHPUT_SEQ)))
    sent = refused = 0
    rx0 = rx_packets(path.ns_b, path.dev_b)
    start = time.perf_counter()
    end = start + seconds
    while time.perf_counter() < end:
        n = batch.send()
        if n > 0:
            sent += n
        else:  # ENOBUFS: the device's queue is full
            refused += 1
    span = time.perf_counter() - start
    rx1 = rx_packets(path.ns_b, path.dev_b)
    sender.close()
    time.sleep(0.1)
    report, cpu = path.stop()
    frames = rx1 - rx0
    result: dict[str, Any] = {
        "path": path.kind,
        "fifo_priority": fifo,
        "kernel_arrivals": kernel_arrivals if path.kind == "emulated" else None,
        "seconds": round(span, 3),
        "offered_frames_per_s": round(sent / span),
        "refused_sends": refused,
        "frames_per_s": round(frames / span),
        "mbps": round(frames * FRAME * 8 / span / 1e6, 1),
    }
    if report is not None:
        result["emulator_cpu_s"] = round(cpu, 3)
        result["emulator_cpu_share"] = round(cpu / span, 3)
        # What one core of the emulator carries at this cost a frame: Mb/s delivered per
        # second of its CPU time (the run's Mb/s where it used a whole core).
        result["mbps_per_emulator_cpu_s"] = round(frames * FRAME * 8 / cpu / 1e6, 1) if cpu > 0 else None
        result["emulator"] = report["directions"][0]
    return result


def _recv_all(s: socket.socket) -> list[tuple[int, bool, bytes]]:
    """(kernel timestamp ns, outgoing, first 18 bytes) of every frame waiting on ``s``."""
    out: list[tuple[int, bool, bytes]] = []
    s.setblocking(False)
    while True:
        try:
            data, anc, _flags, addr = s.recvmsg(64, socket.CMSG_SPACE(16))
        except BlockingIOError:
            return out
        except OSError:  # ENETDOWN once, when the emulator's device has gone
            continue
        for level, kind, payload in anc:
            if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS:
                sec, nsec = struct.unpack("qq", payload[:16])
                out.append((sec * 10**9 + nsec, addr[2] == PACKET_OUTGOING, data[:18]))


def percentiles(values: list[int]) -> dict[str, float]:
    """Nearest-rank percentiles of ``values`` (ns), in µs."""
    v = sorted(values)

    def q(p: float) -> float:
        k = min(len(v), max(1, math.ceil(p * len(v))))
        return v[k - 1] / 1000

    return {"frames": len(v), "p50_us": q(0.5), "p99_us": q(0.99), "p999_us": q(0.999), "max_us": v[-1] / 1000}


def model_arrivals(sent: dict[bytes, int], emulated: bool) -> dict[bytes, int]:
    """When each frame sent at ``sent[k]`` (kernel timestamp, ns) should arrive: on the
    emulated link, IEEE 802.3 at ``TIMING_RATE_BPS`` with ``TIMING_DELAY_NS``, in the
    order sent: a frame starts when it is sent or when the frame before it and the
    inter-frame gap after that are out (§4.4.2), whichever is later (the sender, a Python
    loop, sends frames back to back after a late wake-up), and arrives its last bit and
    the delay later; on the veth, when it was sent."""
    if not emulated:
        return dict(sent)
    out: dict[bytes, int] = {}
    free = None
    for k, t in sorted(sent.items(), key=lambda item: item[1]):
        start = t if free is None else max(t, free)
        free = start + SLOT_NS
        out[k] = start + LAST_BIT_NS + TIMING_DELAY_NS
    return out


def timing(
    path: Path, frames: int, gap_us: int, spin_us: int | None, fifo: int | None = None, kernel_arrivals: bool = True
) -> dict[str, Any]:
    """Each frame's receive − send kernel timestamp, less the model's time on an emulated path."""
    path.start(ethernet_link(TIMING_RATE_BPS, TIMING_DELAY_NS, 1000), spin_us, fifo, kernel_arrivals)
    out_a = packet_socket(path.ns_a, path.dev_a, timestamps=True)
    in_b = packet_socket(path.ns_b, path.dev_b, timestamps=True)
    sender = packet_socket(path.ns_a, path.dev_a)
    # Gaps drawn uniformly from [0.5, 1.5] × gap_us (seeded), so sends do not line up
    # with the link's delay and the emulator's wake-ups.
    rng = random.Random(1)
    offsets = list(itertools.accumulate(rng.uniform(0.5, 1.5) * gap_us / 1e6 for _ in range(frames)))
    start = time.perf_counter()
    for seq in range(frames):
        due = start + offsets[seq]
        wait = due - time.perf_counter()
        if wait > 0:
            time.sleep(wait)
        sender.send(bytes(frame(seq)))
    time.sleep(0.2)
    report, cpu = path.stop()
    sent = {d[14:18]: t for t, outgoing, d in _recv_all(out_a) if outgoing and d[12:14] == b"\x88\xb5"}
    got = {d[14:18]: t for t, outgoing, d in _recv_all(in_b) if not outgoing and d[12:14] == b"\x88\xb5"}
    errors = [got[k] - due for k, due in model_arrivals(sent, path.kind == "emulated").items() if k in got]
    result: dict[str, Any] = {"path": path.kind, "sent": len(sent), "received": len(got)}
    spin: object = "busy" if spin_us == BUSY else DEFAULT_SPIN if spin_us is None else spin_us
    result["spin_us"] = spin if path.kind == "emulated" else None
    result["fifo_priority"] = fifo
    result["kernel_arrivals"] = kernel_arrivals if path.kind == "emulated" else None
    result["error" if path.kind == "emulated" else "transit"] = percentiles(errors)
    if report is not None:
        result["emulator_lateness_ns"] = report["directions"][0]["lateness_ns"]
        result["emulator_wake_overshoot_ns"] = report["wake_overshoot_ns"]
        # Whether the frames were timed from their kernel timestamps, and how long they
        # waited in the TAP to be read (docs/metrics.md, "The link emulator").
        result["emulator_arrivals"] = report["arrivals"][0]
        # The spin's cost: the emulator's CPU time over its run, start to stop.
        result["emulator_cpu_share"] = round(cpu / (report["duration_ns"] / 1e9), 3)
    for s in (out_a, in_b, sender):
        s.close()
    return result


def machine() -> dict[str, Any]:
    """What the figures depend on besides the code: cores, load, kernel."""
    return {"cpus": os.cpu_count(), "load_avg": [round(x, 2) for x in os.getloadavg()], "kernel": platform.release()}


def run_emu_link(seconds: float = 3.0, timing_frames: int = 3000, gap_us: int = 1000) -> dict[str, Any]:
    """The ``emu_link`` record of ``qoslab bench``: throughput and timing of a direct veth
    and of the emulated link, the emulator run as the emulation backend runs it (SCHED_FIFO
    at its priority, the default spin), and the machine's load before and after."""
    from qoslab.backends.emu.links import FIFO_PRIORITY

    record: dict[str, Any] = {"name": "emu_link", "frame_bytes": FRAME, "fifo_priority": FIFO_PRIORITY}
    record["machine_before"] = machine()
    throughputs: list[dict[str, Any]] = []
    timings: list[dict[str, Any]] = []
    stem = f"qoslab-b-{os.getpid()}"
    paths: list[Path] = []
    try:
        for kind in ("veth", "emulated"):
            path = make_path(kind, f"{stem}-{kind[0]}")
            paths.append(path)
            fifo = FIFO_PRIORITY if kind == "emulated" else None
            throughputs.append(throughput(path, seconds, fifo))
            timings.append(timing(path, timing_frames, gap_us, None, fifo))
    finally:
        for path in paths:
            remove(path)
    record["machine_after"] = machine()
    by_path = {t["path"]: t for t in throughputs}
    if by_path.get("veth", {}).get("frames_per_s"):
        # The emulated link against the direct veth of the same run.
        by_path["emulated"]["ratio_to_veth"] = round(
            by_path["emulated"]["frames_per_s"] / by_path["veth"]["frames_per_s"], 4
        )
    record["throughput"] = throughputs
    record["timing"] = timings
    return record
