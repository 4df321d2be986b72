"""How a plan's link becomes real: a :class:`LinkRunner` makes the two interfaces a
link's ends see, one in each end's namespace, named after the plan's ports.

:class:`DirectVeth` ("direct veth") joins them as a veth pair: frames cross at once,
with no rate, delay, loss or queue model of the link. :class:`EmulatedLink`
("emulated", the default) makes a TAP device at each end and forwards between them with
the simulator's link models in real time (crates/emu, ``qoslab._core.emulate_link``) in a
child process (:mod:`qoslab.backends.emu.link_child`); an 802.11 cell gets a TAP device
per member and the simulator's ``WifiCell`` (``qoslab._core.emulate_plan_link``). The
topology calls only :meth:`LinkRunner.start` (a line), :meth:`LinkRunner.start_many` (a
cell) and :meth:`LinkRunner.stop`. Every run records and prints
:attr:`LinkRunner.implementation`.
"""

from __future__ import annotations

import ctypes
import fcntl
import json
import os
import select
import struct
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Protocol

from qoslab.backends.emu.registry import RunRecord
from qoslab.plan.models import LinkConfig, SerialLink, SimConfig


@dataclass(frozen=True)
class LinkEnd:
    """One end of a link: the namespace it is in and the interface name it gets."""

    namespace: str
    ifname: str


@dataclass
class LinkHandle:
    """A link made by a runner: what :meth:`LinkRunner.stop` needs to undo it."""

    name: str
    ends: tuple[LinkEnd, ...]
    pid: int | None = None
    """The process that carries the link's frames (an emulator), if any."""
    report: dict[str, Any] | None = None
    """The emulator's report once stopped (docs/metrics.md, "The link emulator")."""
    process: subprocess.Popen[bytes] | None = None
    stop_fd: int | None = None
    """The write end of the emulator's stop pipe."""


class LinkRunner(Protocol):
    """Makes the interfaces of a link and carries its frames."""

    implementation: str
    """What the run records and prints: ``direct veth`` or ``emulated``."""

    def start(self, link: LinkConfig, a: LinkEnd, b: LinkEnd, registry: RunRecord, *, index: int = 0) -> LinkHandle:
        """Create the interfaces ``a`` and ``b`` (down, no addresses) for the plan's
        ``link`` (link ``index`` of the plan, its model in ``link.root``) and start carrying frames between them. Anything it creates outside the
        run's namespaces, or any process, goes into ``registry`` first."""
        ...

    def start_many(self, plan: SimConfig, index: int, ends: list[LinkEnd], registry: RunRecord) -> LinkHandle:
        """As :meth:`start`, for link ``index`` of ``plan`` with many ends (an 802.11
        cell: ``ends`` are its members, the AP first, as ``_core.emulated_link_ends``
        orders them)."""
        ...

    def stop(self, handle: LinkHandle) -> None:
        """Stop carrying frames; the interfaces go with their namespaces."""
        ...


class DirectVeth:
    """A veth pair straight between the two namespaces: the kernel's own path, no link
    model (no rate, delay, loss, queue limit)."""

    implementation = "direct veth"

    def start(self, link: LinkConfig, a: LinkEnd, b: LinkEnd, registry: RunRecord, *, index: int = 0) -> LinkHandle:
        from pyroute2 import NetNS

        # Made inside a's namespace with its peer put straight into b's: no interface
        # of the run ever exists in the root namespace, even for an instant.
        with NetNS(a.namespace) as ns:
            ns.link("add", ifname=a.ifname, kind="veth", peer={"ifname": b.ifname, "net_ns_fd": b.namespace})
        return LinkHandle(link.root.name, (a, b))

    def start_many(self, plan: SimConfig, index: int, ends: list[LinkEnd], registry: RunRecord) -> LinkHandle:
        from qoslab.backends.emu.topology import EmulationError

        link = plan.links[index].root
        raise EmulationError(
            f"link {link.name!r} ({link.type}) cannot be a direct veth: its model (an 802.11 cell's airtime "
            "and its station adapters' address rules, the ATM network's cells and ATMARP) is what the run is "
            "about; use the emulated links"
        )

    def stop(self, handle: LinkHandle) -> None:
        return None


TUNSETIFF = 0x400454CA
"""``_IOW('T', 202, int)``: attach a /dev/net/tun descriptor to a new TUN/TAP device
(include/uapi/linux/if_tun.h)."""
IFF_TAP = 0x0002
IFF_NO_PI = 0x1000
"""Ethernet frames, with no packet-information header before them (if_tun.h)."""
CLONE_NEWNET = 0x40000000
"""setns(2)'s nstype for a network namespace (include/uapi/linux/sched.h)."""

FIFO_PRIORITY = 50
"""SCHED_FIFO priority of each emulator (sched(7): 1-99). Above every normal process,
so a busy machine does not delay a frame; measured on this kind of machine by
benchmarks/emu_link.py: p99 timing error ~100-180 us with it, ~3.9 ms without."""

START_TIMEOUT_S = 20.0
"""Longest wait for an emulator process to start (import qoslab on a loaded machine)."""

STOP_TIMEOUT_S = 10.0
"""Longest wait for an emulator to print its report after its stop pipe was written."""

_libc = ctypes.CDLL(None, use_errno=True)


@contextmanager
def _inside(namespace: str) -> Iterator[None]:
    """This thread in ``namespace`` (setns(2) on /run/netns/NAME, ip-netns(8)), back home
    after: a TAP device is made in the namespace of the thread that opens it."""
    home = os.open("/proc/thread-self/ns/net", os.O_RDONLY | os.O_CLOEXEC)
    try:
        target = os.open(f"/run/netns/{namespace}", os.O_RDONLY | os.O_CLOEXEC)
        try:
            if _libc.setns(target, CLONE_NEWNET) != 0:
                err = ctypes.get_errno()
                raise OSError(err, f"setns into {namespace}: {os.strerror(err)}")
            try:
                yield
            finally:
                if _libc.setns(home, CLONE_NEWNET) != 0:  # pragma: no cover - the home namespace is ours
                    raise OSError(ctypes.get_errno(), "setns back to the home namespace")
        finally:
            os.close(target)
    finally:
        os.close(home)


def open_tap(end: LinkEnd) -> int:
    """A TAP device named ``end.ifname`` made in ``end.namespace``; its descriptor (the
    device lives as long as a descriptor of it is open)."""
    with _inside(end.namespace):
        fd = os.open("/dev/net/tun", os.O_RDWR | os.O_CLOEXEC)
        try:
            fcntl.ioctl(fd, TUNSETIFF, struct.pack("16sH22x", end.ifname.encode(), IFF_TAP | IFF_NO_PI))
        except OSError:
            os.close(fd)
            raise
    return fd


def _no_arp(end: LinkEnd) -> None:
    """``ip link set DEV arp off`` (IFF_NOARP) on the end's device, through netlink."""
    from pyroute2 import NetNS

    iff_noarp = 0x80  # include/uapi/linux/if.h
    with NetNS(end.namespace) as ns:
        idx = ns.link_lookup(ifname=end.ifname)[0]
        ns.link("set", index=idx, flags=iff_noarp, change=iff_noarp)


class EmulatedLink:
    """A TAP device at each end, and a child process (:mod:`.link_child`) forwarding
    frames between them through the plan link's model (rate, delay, loss, queue limits;
    a serial line's character timing and SLIP/CSLIP/PPP framing, its TAPs ``arp off``;
    crates/emu) in real time, under SCHED_FIFO. Its loss streams are those of the
    simulator's run of the same ``seed`` (the link's index picks the stream)."""

    implementation = "emulated"

    def __init__(self, seed: int, *, fifo_priority: int | None = FIFO_PRIORITY) -> None:
        self.seed = seed
        self.fifo_priority = fifo_priority

    def start(self, link: LinkConfig, a: LinkEnd, b: LinkEnd, registry: RunRecord, *, index: int = 0) -> LinkHandle:
        # The link's JSON as the core reads it in a plan (defaults written too).
        return self._start(
            link.root.name,
            [a, b],
            link.model_dump_json(by_alias=True),
            registry,
            index=index,
            serial=isinstance(link.root, SerialLink),
        )

    def start_many(self, plan: SimConfig, index: int, ends: list[LinkEnd], registry: RunRecord) -> LinkHandle:
        from qoslab.lower.lowered import plan_json

        # The whole plan: a cell's adapters take their members' MACs from the nodes' ports,
        # the ATM network its switches and every ATM link.
        document = json.dumps({"plan_link": index, "plan": plan_json(plan)})
        return self._start(plan.links[index].root.name, ends, document, registry, index=index, serial=False)

    def _start(
        self, name: str, ends: list[LinkEnd], document: str, registry: RunRecord, *, index: int, serial: bool
    ) -> LinkHandle:
        fds: list[int] = []
        stop_r, stop_w = os.pipe()  # both close-on-exec; the child gets stop_r by pass_fds
        try:
            for end in ends:
                fds.append(open_tap(end))
            if serial:
                # A serial line has no ARP: the emulator carries IP datagrams only and
                # addresses each to the MAC the far kernel sends from (crates/emu line.rs).
                for end in ends:
                    _no_arp(end)
            argv = [",".join(map(str, fds)), str(stop_r), str(self.seed), str(index), str(self.fifo_priority or 0)]
            argv.append(str(os.getpid()))
            child = subprocess.Popen(
                [sys.executable, "-m", "qoslab.backends.emu.link_child", *argv],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                pass_fds=(*fds, stop_r),
                # If the run dies (kill -9), its end of the stop pipe closes and the
                # emulator stops; the child also asks for SIGTERM on its parent's death.
            )
        except BaseException:
            for fd in (*fds, stop_r, stop_w):
                os.close(fd)
            raise
        registry.add_pid(child.pid)
        # The child holds the devices and the pipe's read end now: so that it alone
        # keeps them, the devices vanish with it.
        for fd in (*fds, stop_r):
            os.close(fd)
        assert child.stdin is not None
        child.stdin.write(document.encode())
        child.stdin.close()
        child.stdin = None  # written whole: communicate() at the stop only reads
        handle = LinkHandle(name, tuple(ends), pid=child.pid, process=child, stop_fd=stop_w)
        self._wait_ready(handle)
        return handle

    def _wait_ready(self, handle: LinkHandle) -> None:
        """Until the child printed that it enters its loop (or died: then its error)."""
        from qoslab.backends.emu.link_child import READY
        from qoslab.backends.emu.topology import EmulationError

        child = handle.process
        assert child is not None and child.stdout is not None
        ready, _, _ = select.select([child.stdout], [], [], START_TIMEOUT_S)
        line = child.stdout.readline() if ready else b""
        if line.decode() != READY:
            self.stop(handle)  # raises with the child's error if it has one
            raise EmulationError(f"the link emulator of link {handle.name!r} did not start in {START_TIMEOUT_S} s")

    def stop(self, handle: LinkHandle) -> None:
        from qoslab.backends.emu.topology import EmulationError

        child = handle.process
        if child is None:
            return
        if handle.stop_fd is not None:
            try:
                os.write(handle.stop_fd, b"s")
            except OSError:
                pass  # the child is gone: its output says why
            os.close(handle.stop_fd)
            handle.stop_fd = None
        try:
            out, err = child.communicate(timeout=STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            child.kill()
            out, err = child.communicate()
        handle.process = None
        if child.returncode != 0 or not out.strip():
            why = err.decode(errors="replace").strip().splitlines()
            raise EmulationError(
                f"the link emulator of link {handle.name!r} failed (exit {child.returncode}): "
                + (why[-1] if why else "no report")
            )
        handle.report = json.loads(out.decode().strip().splitlines()[-1])


def link_counters(report: dict[str, Any]) -> dict[str, Any]:
    """What a run's record keeps of an emulator's report: per direction, frames and
    bytes offered and delivered, drops by reason (only reasons that dropped), and what
    was still queued or in flight at the stop; for a cell, per member (docs/metrics.md,
    "The emulation backend")."""
    if report.get("members"):
        members = [
            {
                "port": m["port"],
                "offered": m["offered"],
                "delivered": m["delivered"],
                "refused": m["refused"],
                "dropped": m["dropped"],
                "lateness_p99_us": round(m["lateness_ns"]["p99"] / 1000, 3)
                if m["lateness_ns"].get("p99") is not None
                else None,
            }
            for m in report["members"]
        ]
        return {"link": report["link"], "kind": report["kind"], "members": members}
    directions = []
    for d in report["directions"]:
        directions.append(
            {
                "from": d["from"],
                "to": d["to"],
                "offered": d["offered"],
                "delivered": d["delivered"],
                "dropped": {k: v for k, v in d["dropped"].items() if v["frames"]},
                "queued_at_stop": d["queued_at_stop"],
                "in_flight_at_stop": d["in_flight_at_stop"],
                "lateness_p99_us": round(d["lateness_ns"]["p99"] / 1000, 3)
                if d["lateness_ns"].get("p99") is not None
                else None,
            }
        )
    return {"link": report["link"], "kind": report["kind"], "directions": directions}
