"""How much work a run would be, estimated before it starts, against a budget.

A scenario can ask for a run that never ends in practice (``count = 1e12``, a ping
count of 10^9, a UDP rate of 1e30 bit/s): the simulator would grind until its own event
budget stops it, minutes or hours later. The estimate here is made from the lowered
configuration before anything runs, and a run above the budget is refused as bad input
(exit 2) with the estimate printed; ``--max-events`` raises the budget, and the
simulator's own budget (``BudgetConfig.max_events`` in crates/sim/src/config.rs) is
raised with it, so a run that was allowed is not then stopped for the same reason.

The estimate is an upper bound of the right order, not a prediction: packets per flow
(from its count, its rate over its sending time, or for a saturating or TCP flow the
fastest link's rate in 64-byte frames), times the events one packet costs on each link
it may cross (start of transmission, end, arrival) and at its two ends.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:
    from qoslab.backends.sim import Network

DEFAULT_MAX_EVENTS = 2_000_000_000
"""The simulator's default event budget (crates/sim/src/config.rs, ``BudgetConfig``):
about three to five minutes of simulation at the engine's 6-14 M events/s
(benchmarks/README.md)."""
EVENTS_PER_HOP = 3
"""Start of transmission, end of transmission, arrival at the far end."""
EVENTS_AT_ENDS = 4
"""The sender's application event and send, the receiver's delivery, a timer."""
MAX_HOPS = 64
"""Links a packet is counted to cross at most (a path longer than this is unusual)."""
UDP_FRAME_OVERHEAD = 8 + 20 + 18
"""UDP (RFC 768), IPv4 (RFC 791) and Ethernet header and FCS (IEEE 802.3 §3.1.1) bytes
around a saturating UDP flow's payload: the smallest frame that carries it."""
TCP_MIN_PACKET_BITS = 576 * 8
"""TCP sends full segments while it has data (RFC 9293 §3.7.4, Nagle), at least the
576-byte datagram every host accepts (RFC 791 §3.1); its ACKs are counted apart."""
ACKS_PER_SEGMENT = 1.0
"""At most one ACK per data segment (RFC 5681 §4.2 asks for one per two)."""


def _fastest_bps(config: dict[str, Any]) -> float:
    rates = [float(link.get("rate_bps", 0) or 0) for link in config.get("links", [])]
    return max(rates, default=0.0) or 1e9


class _Path:
    """What the estimate knows of one flow's path: its hops and the frame rates of its
    first link (what the sender can send) and of its slowest (what TCP can get through)."""

    def __init__(self, hops: int, first_fps: Callable[[int], float] | None, slowest_fps: Callable[[int], float] | None) -> None:
        self.hops, self.first_fps, self.slowest_fps = hops, first_fps, slowest_fps


def _path(flow: dict[str, Any], config: dict[str, Any], net: "Network | None") -> _Path:
    """The flow's path in ``net`` (fewest hops, as :mod:`qoslab.methods.bottleneck`
    finds it), or, without one, every link of the network at the fastest link's rate."""
    fastest = _fastest_bps(config)
    fallback = _Path(min(len(config.get("links", [])), MAX_HOPS) or 1, None, None)
    if net is None or not isinstance(flow.get("from"), int):
        return fallback
    from qoslab.methods.bottleneck import link_fps, path_links

    src = net.node_names[flow["from"]]
    dst = next((name for name, addrs in net.addresses.items() if any(str(a.ip) == str(flow.get("to")) for a in addrs)), None)
    links = path_links(net, src, dst) if dst is not None else []
    if not links:
        return fallback
    scenario_links = [net.scenario.link[i] for i in links]

    def first(frame: int) -> float:
        return link_fps(scenario_links[0], frame) or fastest / (8 * frame)

    def slowest(frame: int) -> float:
        return min((link_fps(link, frame) or fastest / (8 * frame)) for link in scenario_links)

    return _Path(len(links), first, slowest)


def packets(flow: dict[str, Any], config: dict[str, Any], path: _Path | None = None) -> float:
    """An upper bound of the packets ``flow`` sends in ``config``'s run."""
    run_ns = float(config.get("duration_ns", 0))
    start = float(flow.get("start_ns", 0))
    kind = flow.get("kind")
    if kind == "ping":
        return float(flow.get("count", 1))
    if kind == "udp-echo":
        return 2.0 * float(flow.get("count", 1))
    fastest = _fastest_bps(config)
    sending_s = max(0.0, min(float(flow.get("stop_ns", run_ns) or run_ns), run_ns) - start) / 1e9
    if kind == "udp":
        pps = float(flow.get("rate_pps", 0) or 0)
        frame = int(flow.get("payload", 0)) + UDP_FRAME_OVERHEAD
        line = path.first_fps(frame) if path is not None and path.first_fps is not None else fastest / (8 * frame)
        # A sender cannot put more frames on its line than it carries; what it offers
        # above that is dropped at its own queue, one event each at most.
        return sending_s * (min(pps, line) + max(0.0, pps - line) / EVENTS_PER_HOP if pps > 0 else line)
    # TCP and anything else: full segments at the path's slowest link, and their ACKs.
    tcp_pps = path.slowest_fps(TCP_MIN_PACKET_BITS // 8) if path is not None and path.slowest_fps is not None else fastest / TCP_MIN_PACKET_BITS
    return (1.0 + ACKS_PER_SEGMENT) * sending_s * tcp_pps


def estimate_events(config: dict[str, Any], net: "Network | None" = None) -> float:
    """Events a run of ``config`` may take at most (see the module's docstring); with
    ``net``, each flow counts the links of its own path.

    >>> config = {"duration_ns": 10**9, "links": [{"rate_bps": 10**7}], "flows": [
    ...     {"kind": "ping", "count": 3}, {"kind": "udp", "rate_pps": 1000.0, "start_ns": 0}]}
    >>> estimate_events(config)  # (3 + 1000) packets, (4 + 3 x 1 link) events each
    7021.0
    """
    total = 0.0
    for flow in config.get("flows", []):
        path = _path(flow, config, net)
        total += packets(flow, config, path) * (EVENTS_AT_ENDS + EVENTS_PER_HOP * path.hops)
    return total


def describe(events: float) -> str:
    """An event count in words a person can weigh.

    >>> describe(3.2e12)
    '3.2e+12 events (about 3.7 days at 10 M events/s)'
    """
    seconds = events / 1e7
    for unit, size in (("days", 86400.0), ("hours", 3600.0), ("minutes", 60.0)):
        if seconds >= size:
            return f"{events:.2g} events (about {seconds / size:.2g} {unit} at 10 M events/s)"
    return f"{events:.2g} events (about {seconds:.2g} s at 10 M events/s)"
