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

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from qoslab.plan import Flow
from qoslab.plan import models as plan

if TYPE_CHECKING:
    from qoslab.backends.sim import Network

Link = plan.EthernetLink | plan.SerialLink | plan.WifiLink | plan.AtmLink
"""One link of a plan (a variant of ``LinkConfig``)."""

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
REPLAY_ENTRY_BYTES = 2 * (4 + 8) + 2 * (8 + 32) + 2 * 12
"""Memory per datagram of a replay's schedule (``pcap.replay``): its size and time as a
u32 and a u64 in the core's two copies (the plan and the source), as two list entries of
Python ints (a pointer and an int object of up to 32 bytes each), and as JSON text (up
to 12 characters each) on the way."""


def _links(config: plan.SimConfig) -> list[Link]:
    return [link.root for link in config.links]


def _flows(config: plan.SimConfig) -> list[Flow]:
    return [flow.root for flow in config.flows or []]


def _fastest_bps(config: plan.SimConfig) -> float:
    # An ATM link's cell rate is its PHY's (crates/plan/src/atm.rs), not counted here.
    rates = [float(link.rate_bps) for link in _links(config) if not isinstance(link, plan.AtmLink)]
    return max(rates, default=0.0) or 1e9


class _Path:
    """What the estimate knows of one flow's path: its hops and the frame rates of its
    first link (what the sender can send) and of its slowest (what TCP can get through),
    and its links' indices (None: not known, any link may be on it)."""

    def __init__(
        self,
        hops: int,
        first_fps: Callable[[int], float] | None,
        slowest_fps: Callable[[int], float] | None,
        links: list[int] | None = None,
    ) -> None:
        self.hops, self.first_fps, self.slowest_fps, self.links = hops, first_fps, slowest_fps, links


def _path(flow: Flow, config: plan.SimConfig, net: Network | None) -> _Path:
    """The flow's path in ``net`` (fewest hops, as :mod:`qoslab.methods.bottleneck`
    finds it), or, without one, every link of the network at the fastest link's rate."""
    fastest = _fastest_bps(config)
    fallback = _Path(min(len(config.links), MAX_HOPS) or 1, None, None)
    if net is None:
        return fallback
    from qoslab.methods.bottleneck import link_fps, path_links

    src = net.node_names[flow.from_]
    dst = next((name for name, addrs in net.addresses.items() if any(a.ip == flow.to for a in addrs)), None)
    links = path_links(net, src, dst) if dst is not None else []
    if not links:
        return fallback
    scenario_links = [net.scenario.link[i] for i in links]

    def first(frame: int) -> float:
        return link_fps(scenario_links[0], frame) or fastest / (8 * frame)

    def slowest(frame: int) -> float:
        return min((link_fps(link, frame) or fastest / (8 * frame)) for link in scenario_links)

    return _Path(len(links), first, slowest, list(links))


def packets(flow: Flow, config: plan.SimConfig, path: _Path | None = None) -> float:
    """An upper bound of the packets ``flow`` sends in ``config``'s run."""
    run_ns = float(config.duration_ns)
    start = float(flow.start_ns)
    if isinstance(flow, plan.PingFlow):
        return float(flow.count)
    if isinstance(flow, plan.UdpEchoFlow):
        return 2.0 * float(flow.count)
    if isinstance(flow, plan.UdpReplayFlow):
        return float(len(flow.payloads)) * float(flow.passes)
    fastest = _fastest_bps(config)
    sending_s = max(0.0, min(float(flow.stop_ns or run_ns), run_ns) - start) / 1e9
    if isinstance(flow, plan.UdpFlow):
        pps = float(flow.rate_pps or 0)
        frame = int(flow.payload) + UDP_FRAME_OVERHEAD
        line = path.first_fps(frame) if path is not None and path.first_fps is not None else fastest / (8 * frame)
        # A sender cannot put more frames on its line than it carries; what it offers
        # above that is dropped at its own queue, one event each at most.
        return sending_s * (min(pps, line) + max(0.0, pps - line) / EVENTS_PER_HOP if pps > 0 else line)
    # TCP and anything else: full segments at the path's slowest link, and their ACKs.
    tcp_pps = (
        path.slowest_fps(TCP_MIN_PACKET_BITS // 8)
        if path is not None and path.slowest_fps is not None
        else fastest / TCP_MIN_PACKET_BITS
    )
    return (1.0 + ACKS_PER_SEGMENT) * sending_s * tcp_pps


def estimate_events(config: plan.SimConfig, net: Network | None = None) -> float:
    """Events a run of ``config`` may take at most (see the module's docstring); with
    ``net``, each flow counts the links of its own path.

    >>> from qoslab.budget import _example
    >>> ping = plan.PingFlow(kind="ping", id=0, from_=0, to="10.0.0.2", count=3, interval_ns=10**9,
    ...     payload=56, start_ns=0)
    >>> udp = plan.UdpFlow(kind="udp", id=1, from_=0, to="10.0.0.2", dst_port=9, payload=18,
    ...     rate_pps=1000.0, start_ns=0, stop_ns=10**9)
    >>> estimate_events(_example([ping, udp]))  # (3 + 1000) packets, (4 + 3 x 1 link) events each
    7021.0
    """
    total = 0.0
    for flow in _flows(config):
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


# --------------------------------------------------------------------------- memory

MIB = 1 << 20

PROCESS_BYTES = 47_100_000
"""A small run's whole process (Python, qoslab, the core, the results): calibrated on
one measurement (2026-11-27, this machine): peak RSS of `qoslab run` of 10 pings
between two hosts on one Ethernet link, 47.1 MB."""
PER_NODE_BYTES = 20_000
"""Each node with its link (stack, tables, ports, queues' empty structures, its config
and results on the Python side): calibrated on one measurement (2026-11-27): 2,000
hosts on one switch (2,001 nodes, 2,000 links) and one 1-s UDP flow, `run --json`,
87.2 MB peak RSS; (87.2 - 47.1) MB / 2,001 = 20.0 kB."""
PER_RTT_BYTES = 183
"""Each ping's RTT, kept by the core and reported (a list in the results JSON, parsed
by Python): calibrated on one measurement (2026-11-27): 10^6 pings at 0.1 ms between
two hosts, `run --json`, 229.4 MB peak RSS against 47.1 MB for 10; 182.3 B each."""
PER_TRACE_ACK_BYTES = 1_400
"""Each row of a traced TCP sender's per-ACK trace (in the core, its JSON and Python's
lists): calibrated on one measurement (2026-11-27): a 60-s tcp.bulk over 100 Mb/s
Ethernet, `run --json`, 394.3 MB peak RSS with `trace = true` (251,401 rows) against
49.1 MB without; 1,373 B a row."""
QUEUED_FRAME_OVERHEAD = 64
"""Bytes a queued frame costs beyond its own: its buffer's header (a Rust ``Vec``, 24
bytes), the allocator's rounding and header (up to 16), the queue's slot and its
arrival time (24)."""
WIFI_MPDU_BYTES = 2346
"""The largest 802.11 MPDU (IEEE 802.11-2020 §9.2.4.7.1: 2,304-byte body, 30-byte
header, 4-byte FCS, 8 bytes of WEP/TKIP), what one queued 802.11 frame may hold."""
SERIAL_FRAME_BYTES = 1518
"""A serial line's queued frames are the IP datagrams of a 1,500-byte MTU (RFC 1661
§2's default MRU) in their Ethernet frame, as the stack wrote them."""
ATM_FRAME_BYTES = 9180 + 8 + 8
"""An AAL5 frame of the CLIP MTU (RFC 2225 §5: 9,180), its LLC/SNAP header (RFC 2684)
and trailer (ITU-T I.363.5)."""
TCP_SEND_BUFFER = 4 * 1024 * 1024
"""Linux's tcp_wmem maximum, the simulator's default (crates/sim/src/tcp/config.rs)."""
TCP_RECV_BUFFER = 6 * 1024 * 1024
"""Linux's tcp_rmem maximum, the simulator's default (crates/sim/src/tcp/config.rs)."""
CAPTURE_BUFFER_BYTES = 64 * 1024
"""What one capture file's records wait in memory before they are written
(crates/py/src/capture.rs ``BUFFER_BYTES``)."""
CAPTURE_BUFFERED_TOTAL = 16 * MIB
"""What all files' records may wait in memory together (``BUFFERED_TOTAL`` there)."""
MEMORY_FRACTION = 0.5
"""The default ``--max-memory``: half of this machine's RAM, so that a run refused
nothing still leaves the other half to the system and to other programs."""


def machine_memory() -> int | None:
    """This machine's physical RAM in bytes, or None where the system does not say."""
    import os

    try:
        return int(os.sysconf("SC_PAGE_SIZE")) * int(os.sysconf("SC_PHYS_PAGES"))
    except (AttributeError, ValueError, OSError):
        return None


def default_max_memory() -> int | None:
    """``--max-memory``'s default: :data:`MEMORY_FRACTION` of :func:`machine_memory`."""
    ram = machine_memory()
    return None if ram is None else int(ram * MEMORY_FRACTION)


def _link_queue_bytes(link: Link) -> float:
    """The most bytes the queues of one link (both ends, every 802.11 member) hold."""
    if isinstance(link, plan.EthernetLink):
        frames = int(link.queue_frames)
        return 2.0 * min(
            float(link.queue_bytes) + frames * QUEUED_FRAME_OVERHEAD,
            frames * (1522 + QUEUED_FRAME_OVERHEAD),
        )
    if isinstance(link, plan.SerialLink):
        return 2.0 * int(link.queue_frames) * (SERIAL_FRAME_BYTES + QUEUED_FRAME_OVERHEAD)
    if isinstance(link, plan.WifiLink):
        members = ([link.ap] if link.ap else []) + list(link.stations)
        per = [int(q.root) for q in link.member_queue_frames or []] or [int(link.queue_frames)] * len(members)
        return float(sum(per)) * (WIFI_MPDU_BYTES + QUEUED_FRAME_OVERHEAD)
    # ATM: each host NIC's ring of AAL5 frames.
    return 2.0 * int(link.nic_queue_frames or 64) * (ATM_FRAME_BYTES + QUEUED_FRAME_OVERHEAD)


def estimate_memory(config: plan.SimConfig, net: Network | None = None, *, capture_files: int = 0) -> float:
    """Bytes a run of ``config`` may hold at its peak, this process included: what
    drives memory in the core, each priced by a constant measured once (beside it).

    - the process (Python, qoslab and the core loaded, a small run): :data:`PROCESS_BYTES`;
    - each node (its stack, tables, ports): :data:`PER_NODE_BYTES`;
    - the queues the traffic can fill: for each flow, those of the links on its path,
      full (each link counted once);
    - what grows with the packets: one bit per UDP datagram (the receiver's duplicate
      check), each ping's RTT (:data:`PER_RTT_BYTES`, kept and reported), each ACK of a
      traced TCP sender (:data:`PER_TRACE_ACK_BYTES`); a TCP flow's socket buffers;
    - a capture: each file's buffer (:data:`CAPTURE_BUFFER_BYTES`), all of them together
      at most :data:`CAPTURE_BUFFERED_TOTAL` (the frames themselves go to disk).

    >>> from qoslab.budget import _example
    >>> estimate_memory(_example([])) == PROCESS_BYTES + 2 * PER_NODE_BYTES
    True
    """
    links = _links(config)
    total = float(PROCESS_BYTES) + PER_NODE_BYTES * len(config.nodes)
    queued: set[int] = set()
    for flow in _flows(config):
        path = _path(flow, config, net)
        queued.update(path.links if path.links is not None else range(len(links)))
        n = packets(flow, config, path)
        if isinstance(flow, plan.PingFlow):
            total += PER_RTT_BYTES * n
        elif isinstance(flow, (plan.UdpFlow, plan.UdpEchoFlow)):
            total += n / 8
        elif isinstance(flow, plan.UdpReplayFlow):
            total += n / 8 + REPLAY_ENTRY_BYTES * len(flow.payloads)
        else:
            tcp = flow.tcp or plan.TcpOptions()
            total += 2 * (int(tcp.send_buffer or TCP_SEND_BUFFER) + int(tcp.recv_buffer or TCP_RECV_BUFFER))
            if flow.trace:
                total += PER_TRACE_ACK_BYTES * _tcp_segments(flow, config, path)
    total += sum(_link_queue_bytes(links[i]) for i in queued if i < len(links))
    if capture_files:
        total += min(capture_files * CAPTURE_BUFFER_BYTES, CAPTURE_BUFFERED_TOTAL + CAPTURE_BUFFER_BYTES)
    return total


# --------------------------------------------------------------------------- capture

SNAPLEN = 262_144
"""The default snapshot length: tcpdump's (since 4.0, its MAXIMUM_SNAPLEN), larger than
any frame qoslab builds (crates/wire/src/pcap.rs ``SNAPLEN``)."""
MAX_SNAPLEN = 2**32 - 1
"""The pcap header's SnapLen is a 32-bit field (draft-ietf-opsawg-pcap §4)."""
PCAP_FILE_HEADER = 24
"""draft-ietf-opsawg-pcap §4: the file header."""
PCAP_RECORD_HEADER = 16
"""draft-ietf-opsawg-pcap §5: each record's header."""
ETHERNET_HEADER = 14
"""A captured Ethernet frame's header, without FCS (LINKTYPE_ETHERNET)."""
IP_UDP_HEADERS = 20 + 8
"""IPv4 (RFC 791) and UDP (RFC 768), or ICMP echo (RFC 792), headers."""
TCP_ACK_FRAME = ETHERNET_HEADER + 20 + 20 + 12
"""A pure ACK: Ethernet, IPv4, TCP with the timestamps option (RFC 7323 §3)."""
AIR_ACK_RECORD = 14 + 14
"""An 802.11 Ack (IEEE 802.11-2020 §9.3.1.3, 14 bytes without FCS) behind a radiotap
header of at most 14 bytes (crates/sim/src/world/wifi.rs ``air_record``)."""
ATM_PORTS_PER_LINK = 2


TCP_DEFAULT_MSS = 536
"""RFC 9293 §3.7.1: the send MSS when the peer says nothing, smaller than any a path here
negotiates: a sized transfer of B bytes sends at most about B / 536 new segments."""


def _tcp_segments(flow: plan.TcpFlow, config: plan.SimConfig, path: _Path) -> float:
    """Data segments of a TCP flow: at its path's rate (:func:`packets`), and for a sized
    transfer (``bytes``) no more than it takes in 536-byte segments (a path that loses
    many and retransmits them may send more)."""
    segments = packets(flow, config, path) / (1.0 + ACKS_PER_SEGMENT)
    if flow.bytes:
        segments = min(segments, float(flow.bytes) / TCP_DEFAULT_MSS + 1)
    return segments


def capture_files(config: plan.SimConfig) -> int:
    """Files a capture of ``config`` writes at most: one per port, one per 802.11
    medium, one per ATM port that carries AAL5 PDUs."""
    ports = sum(len(n.ports) for n in config.nodes)
    links = _links(config)
    return (
        ports
        + sum(1 for link in links if isinstance(link, plan.WifiLink))
        + ATM_PORTS_PER_LINK * sum(1 for link in links if isinstance(link, plan.AtmLink))
    )


def _record(frame: int, snaplen: int) -> int:
    return PCAP_RECORD_HEADER + min(frame, snaplen)


def estimate_capture(config: plan.SimConfig, net: Network | None = None, *, snaplen: int = SNAPLEN) -> float:
    """Bytes the pcap files of a run of ``config`` may take: a file header per file,
    and for each packet of each flow (:func:`packets`), a record at both ports of every
    link it crosses, and on an 802.11 link one more on the air and its Ack:
    frames × (16 + min(frame, snaplen)) + 24 per file.

    >>> from qoslab.budget import _example
    >>> ping = plan.PingFlow(kind="ping", id=0, from_=0, to="10.0.0.2", count=3, interval_ns=10**9,
    ...     payload=56, start_ns=0)
    >>> estimate_capture(_example([ping]))  # 2 files; 3 pings and replies, at 2 ports, 16 + 98 bytes each
    1416.0
    """
    links = _links(config)
    total = float(PCAP_FILE_HEADER * capture_files(config))
    for flow in _flows(config):
        path = _path(flow, config, net)
        on_path = [links[i] for i in path.links if i < len(links)] if path.links is not None else []
        wifi_hops = sum(1 for link in on_path if isinstance(link, plan.WifiLink))
        points = 2 * path.hops + wifi_hops
        if isinstance(flow, plan.TcpFlow):
            segments = _tcp_segments(flow, config, path)
            acks = segments * ACKS_PER_SEGMENT
            total += segments * (
                points * _record(TCP_MIN_PACKET_BITS // 8 + ETHERNET_HEADER, snaplen) + wifi_hops * AIR_ACK_RECORD
            )
            total += acks * (points * _record(TCP_ACK_FRAME, snaplen) + wifi_hops * AIR_ACK_RECORD)
            continue
        n = packets(flow, config, path)
        if isinstance(flow, plan.UdpReplayFlow):
            payload = max((int(p.root) for p in flow.payloads), default=0)
        else:
            payload = flow.payload
        frame = int(payload) + IP_UDP_HEADERS + ETHERNET_HEADER
        if isinstance(flow, plan.PingFlow):  # and each request's echo reply (RFC 792), as long
            n *= 2
        total += n * (points * _record(frame, snaplen) + wifi_hops * AIR_ACK_RECORD)
    return total


def describe_bytes(n: float) -> str:
    """A byte count with an SI prefix.

    >>> describe_bytes(2.7e9)
    '2.7 GB'
    """
    for unit, size in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= size:
            return f"{n / size:.3g} {unit}"
    return f"{n:.0f} B"


@dataclass(frozen=True)
class PcapOptions:
    """``--pcap DIR`` and how much of it: each record keeps at most ``snaplen`` bytes of
    its frame; with ``max_bytes`` the files of one run (one ``test<N>/`` directory)
    stop growing before they pass it (``--pcap-max-size``)."""

    dir: Path
    snaplen: int = SNAPLEN
    max_bytes: int | None = None


def free_bytes(path: Path) -> int | None:
    """Bytes free to this user on the file system ``path`` is (or will be made) on."""
    import shutil

    for place in (path, *path.parents):
        if place.exists():
            try:
                return int(shutil.disk_usage(place).free)
            except OSError:
                return None
    return None


EXAMPLE_NETWORK = """
[scenario]
name = "two hosts"

[node.a]
role = "host"
address = "10.0.0.1/24"

[node.b]
role = "host"
address = "10.0.0.2/24"

[[link]]
type = "ethernet"
rate = "10 Mbps"
ends = ["a", "b"]
"""
"""The docstrings' examples' network: two hosts of one port each on one 10 Mb/s Ethernet link."""


def _example(flows: list[Flow]) -> plan.SimConfig:
    """:data:`EXAMPLE_NETWORK` lowered, carrying ``flows`` for one second."""
    from qoslab.lower import lower_network
    from qoslab.scenario import loads_scenario

    return lower_network(loads_scenario(EXAMPLE_NETWORK)).with_flows(flows, 10**9)
