"""How a plan's link becomes real: a :class:`LinkRunner` makes the two interfaces a
link's ends see, one in each end's namespace, named after the plan's ports.

:class:`DirectVeth` ("direct veth") joins them as a veth pair: frames cross at once,
with no rate, delay, loss or queue model of the link. The link emulator of issue 17
(crates/emu, ``qoslab._core.emulate_link``) will be a second runner that makes a TAP
device at each end and forwards between them with the simulator's link models in a
child process; the topology calls only :meth:`LinkRunner.start` and
:meth:`LinkRunner.stop`, so it replaces this one here and nowhere else. Every run
records and prints :attr:`LinkRunner.implementation`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from qoslab.backends.emu.registry import RunRecord


@dataclass(frozen=True)
class LinkEnd:
    """One end of a link: the namespace it is in and the interface name it gets."""

    namespace: str
    ifname: str


@dataclass
class LinkHandle:
    """A link made by a runner: what :meth:`LinkRunner.stop` needs to undo it."""

    name: str
    ends: tuple[LinkEnd, LinkEnd]
    pid: int | None = None
    """The process that carries the link's frames (an emulator), if any."""


class LinkRunner(Protocol):
    """Makes the interfaces of a link and carries its frames."""

    implementation: str
    """What the run records and prints: ``direct veth`` or ``emulated``."""

    def start(self, link: dict[str, Any], a: LinkEnd, b: LinkEnd, registry: RunRecord) -> LinkHandle:
        """Create the interfaces ``a`` and ``b`` (down, no addresses) for the plan's
        ``link`` and start carrying frames between them. Anything it creates outside the
        run's namespaces, or any process, goes into ``registry`` first."""
        ...

    def stop(self, handle: LinkHandle) -> None:
        """Stop carrying frames; the interfaces go with their namespaces."""
        ...


class DirectVeth:
    """A veth pair straight between the two namespaces: the kernel's own path, no link
    model (no rate, delay, loss, queue limit)."""

    implementation = "direct veth"

    def start(self, link: dict[str, Any], a: LinkEnd, b: LinkEnd, registry: RunRecord) -> LinkHandle:
        from pyroute2 import NetNS

        # Made inside a's namespace with its peer put straight into b's: no interface
        # of the run ever exists in the root namespace, even for an instant.
        with NetNS(a.namespace) as ns:
            ns.link("add", ifname=a.ifname, kind="veth", peer={"ifname": b.ifname, "net_ns_fd": b.namespace})
        return LinkHandle(str(link.get("name", "")), (a, b))

    def stop(self, handle: LinkHandle) -> None:
        return None
