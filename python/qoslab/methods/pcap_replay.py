"""``pcap.replay``: a capture file's IPv4 packets replayed from ``from`` to ``to`` as one
UDP stream, with their sizes and the times between them (what tcpreplay keeps of a
capture when it rewrites the addresses).

What is replayed of each IPv4 packet (:mod:`qoslab.methods.pcap_file` reads them):

- its **size**: a UDP datagram carrying the packet's IPv4 payload less the 8-octet UDP
  header, so the replayed datagram has the captured one's IPv4 payload (a UDP packet's
  own payload; a TCP segment or ICMP message becomes a UDP datagram of its length). The
  first 16 octets carry the test's probe (sequence number and send time, as udp.flow's):
  a smaller packet is sent with 16 and counted in ``padded``;
- its **time**: the capture's time since its first IPv4 packet, divided by ``speed``, from
  the test's start (exact to the capture's resolution, rounded to the ns). A packet
  stamped before the one ahead of it in the file (pcapng interfaces can interleave so)
  keeps its place in the file and is sent at that one's time (``clamped``);
- not its **addresses or ports**: every datagram goes from the sender's address to the
  test's ``to`` at port 5001 (udp.flow's), from port 49152. The capture's addresses,
  ports, TTLs, options and payload bytes are not used.

``loop`` sends the capture again: each pass starts one mean gap of the capture (its span
over its packets less one) after the last packet of the pass before, so a looped capture
keeps its mean rate. Packets that are not IPv4 (ARP, IPv6, ...), IPv4 fragments after the
first, and packets without a timestamp are skipped and counted (``skipped``).

A learning ping goes first, as in udp.flow (RFC 2544 §23's learning frames), and the
replay starts 1 s later. The measurement window and every metric are udp.flow's
(docs/metrics.md#window, #goodput, #throughput, #pcap-replay), with the frame size taken
per datagram.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from ipaddress import IPv4Address
from pathlib import Path
from typing import TYPE_CHECKING, Any

from qoslab.methods import LEARNING_NS, Plan, cpu_metrics, learning_ping, window
from qoslab.methods.common import count_metrics, endpoints, flow_result, ms, test_of
from qoslab.methods.pcap_file import SKIP_REASONS, Capture, CaptureError, read_ipv4, replay_payload
from qoslab.methods.udp import DST_PORT, ETHERNET_OVERHEAD, IPV4_HEADER, PROBE_HEADER, UDP_HEADER, wire_bytes
from qoslab.plan import Flow
from qoslab.plan import models as plan_models
from qoslab.scenario.test_tables import PcapReplay

if TYPE_CHECKING:
    from qoslab.backends.sim import LocatedProblems, Network
    from qoslab.plan.results_models import Results

MEASURED, LEARNING = 1, 0
NS_PER_S = 10**9


@dataclass(frozen=True)
class Schedule:
    """One pass of a replay: what the plan's ``udp-replay`` flow carries."""

    payloads: list[int]
    """UDP payload octets of each datagram (at least the probe's 16)."""
    offsets_ns: list[int]
    """Each datagram's send time after the pass's start, ns: from 0, never decreasing."""
    period_ns: int
    """From one pass's start to the next's: the pass's span plus one mean gap."""
    padded: int
    """Datagrams whose packet was smaller than the probe, sent with 16 octets."""
    clamped: int
    """Datagrams stamped before the one ahead of them, sent at that one's time."""
    capture_span_ns: int
    """The capture's own time from its first IPv4 packet to its last, ns (speed 1)."""


def schedule(capture: Capture, speed: float) -> Schedule:
    """The replay of ``capture``'s IPv4 datagrams at ``speed`` (see the module's text).

    >>> from qoslab.methods.pcap_file import Datagram
    >>> c = Capture("pcap", 3, [Datagram(Fraction(10), 100, 17), Datagram(Fraction(10) + Fraction(1, 1000), 20, 6),
    ...                         Datagram(Fraction(10) + Fraction(3, 1000), 1500, 17)])
    >>> s = schedule(c, 2.0)
    >>> s.payloads, s.offsets_ns, s.period_ns, s.padded
    ([92, 16, 1492], [0, 500000, 1500000], 2250000, 1)
    """
    first = capture.datagrams[0].time
    rate = Fraction(speed)
    offsets: list[int] = []
    payloads: list[int] = []
    padded = clamped = 0
    for d in capture.datagrams:
        at = round((d.time - first) * NS_PER_S / rate)
        if offsets and at < offsets[-1]:
            at, clamped = offsets[-1], clamped + 1
        offsets.append(max(at, 0))
        size = replay_payload(d)
        padded += size < PROBE_HEADER
        payloads.append(max(size, PROBE_HEADER))
    span = offsets[-1]
    period = span + (round(Fraction(span, len(offsets) - 1)) if len(offsets) > 1 else 0)
    capture_span = round((max(d.time for d in capture.datagrams) - first) * NS_PER_S)
    return Schedule(payloads, offsets, period, padded, clamped, capture_span)


def sending_interval_ns(s: Schedule, passes: int) -> int:
    """The replay's sending interval (docs/metrics.md#goodput): the span from its first
    send to its last, stretched by one mean gap, (span · n / (n − 1)) for n sends, as a
    steady stream of n datagrams one gap apart is sent over n gaps; at least 1 ns past
    the last send.

    >>> sending_interval_ns(Schedule([16] * 3, [0, 10, 20], 30, 0, 0, 20), 2)  # 6 sends over 50 ns
    60
    """
    n = len(s.offsets_ns) * passes
    span = (passes - 1) * s.period_ns + s.offsets_ns[-1]
    stretched = -(-span * n // (n - 1)) if n > 1 else 0
    return max(stretched, span + 1)


def capture_path(t: PcapReplay, source: str | Path | None) -> Path:
    """The capture's file: a relative ``file`` from the scenario file's folder (the
    working directory for a scenario that has no file)."""
    path = Path(t.file).expanduser()
    if not path.is_absolute() and source is not None and Path(source).is_file():
        path = Path(source).parent / path
    return path


def read_capture(
    t: PcapReplay, index: int, source: str | Path | None, out: LocatedProblems, *, loaded_from: str | None = None
) -> Capture | None:
    """The capture of test ``index``; None, with the problem added to ``out`` at the
    test's ``file``, when it cannot be read or holds no IPv4 packet to replay. A relative
    ``file`` is read from the folder of ``source``, else of the file the scenario was
    loaded from (``loaded_from``), else from the working directory."""
    at = ("test", index, "file")
    path = capture_path(t, source if source is not None else loaded_from)
    try:
        capture = read_ipv4(path)
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        out.add(at, "no capture file there", expected="a pcap or pcapng file", found=str(path))
        return None
    except OSError as err:
        out.add(at, "the capture file cannot be read", expected="a readable file", found=f"{path}: {err.strerror}")
        return None
    except CaptureError as err:
        out.add(at, f"{path.name}: {err.message}", expected=err.expected, found=err.found)
        return None
    if not capture.datagrams:
        reasons = ", ".join(f"{n} {SKIP_REASONS[k].split(' (')[0]}" for k, n in sorted(capture.skipped.items()))
        out.add(
            at,
            f"{path.name}: the capture has no IPv4 packet to replay",
            expected="a capture with one IPv4 packet or more",
            found=f"{capture.packets} packets" + (f": {reasons}" if reasons else ""),
        )
        return None
    return capture


def _frame_bytes_received(
    s: Schedule, passes: int, sent: int, received: int, bytes_received: int, mtu: int
) -> int | None:
    """Ethernet frame octets of the datagrams received (docs/metrics.md#pcap-replay): exact
    when no datagram fragments (each frame is its payload + 46) or when every datagram
    sent arrived; None otherwise, as which ones arrived is not known."""
    if all(p + UDP_HEADER + IPV4_HEADER <= mtu for p in s.payloads):
        return bytes_received + received * (UDP_HEADER + IPV4_HEADER + ETHERNET_OVERHEAD)
    if received == sent:
        n = len(s.payloads)
        return sum(wire_bytes(s.payloads[k % n], mtu) for k in range(min(sent, n * passes)))
    return None


def plan(net: Network, index: int, *, source: str | Path | None = None) -> Plan:
    """The flows of a ``pcap.replay`` test: a learning ping, then the capture's schedule."""
    from qoslab.backends.sim import LocatedProblems

    t = test_of(net, index, PcapReplay)
    out = LocatedProblems(source)
    capture = read_capture(t, index, source, out, loaded_from=net.scenario._source)
    if capture is not None and t.loop > 1 and len(capture.datagrams) < 2:
        out.add(
            ("test", index, "loop"),
            "a capture of one IPv4 packet has no gap to loop it at",
            expected="loop = 1, or a capture of two IPv4 packets or more",
            found=f"loop = {t.loop}",
        )
    out.raise_if_any()
    assert capture is not None  # raise_if_any raised otherwise
    src, dst = endpoints(net, index, source=source)
    mtu = next((p.mtu for p in net.ports[src] if p.address is not None), 1500)
    s = schedule(capture, t.speed)
    start = LEARNING_NS
    interval = sending_interval_ns(s, t.loop)
    stop = start + interval
    wait = int(t.wait)
    if stop + wait >= 2**64:
        out.add(
            ("test", index, "speed"),
            "the replay would last past the simulator's clock (2^64 ns, 584 years)",
            expected="a speed that replays the capture sooner",
            found=f"speed = {t.speed}: {interval / NS_PER_S:.3g} s of sending",
        )
        out.raise_if_any()
    flows = _flows(t, s, src, dst, start, stop)
    parameters = _parameters(t, capture, s, mtu, interval, wait, dst)

    def records(results: Results) -> list[dict[str, Any]]:
        record = {"test": t.method, "name": t.name, "from": t.from_, "to": t.to, "parameters": dict(parameters)}
        return [{**record, "metrics": _metrics(net, results, s, t.loop, mtu)}]

    return Plan(flows, stop + wait, records, [MEASURED], windows=[window(MEASURED, stop, stop + wait)])


def _flows(t: PcapReplay, s: Schedule, src: int, dst: str, start: int, stop: int) -> list[Flow]:
    """A learning ping (ARP filled before the replay), then the capture's schedule."""
    return [
        learning_ping(LEARNING, src, dst),
        plan_models.UdpReplayFlow(
            kind="udp-replay",
            id=MEASURED,
            from_=src,
            to=IPv4Address(dst),
            dst_port=DST_PORT,
            payloads=[plan_models.Payload(p) for p in s.payloads],
            offsets_ns=[plan_models.OffsetsN(o) for o in s.offsets_ns],
            passes=t.loop,
            period_ns=s.period_ns,
            start_ns=start,
            stop_ns=stop,
            dont_fragment=t.dont_fragment,
        ),
    ]


def _parameters(
    t: PcapReplay, capture: Capture, s: Schedule, mtu: int, interval: int, wait: int, dst: str
) -> dict[str, Any]:
    """What the record says of the capture and its replay (docs/metrics.md#pcap-replay)."""
    pass_frames = sum(wire_bytes(p, mtu) for p in s.payloads)
    return {
        "file": t.file,
        "format": capture.format,
        "link_types": sorted(capture.link_types),
        "packets": capture.packets,
        "replayed": len(s.payloads),
        "skipped": sum(capture.skipped.values()),
        "skipped_by_reason": dict(sorted(capture.skipped.items())),
        "padded": s.padded,
        "clamped": s.clamped,
        "capture_duration_s": s.capture_span_ns / NS_PER_S,
        "speed": t.speed,
        "loop": t.loop,
        "schedule_payload_bytes": sum(s.payloads) * t.loop,
        "schedule_frame_bytes": pass_frames * t.loop,
        "offered_mbps": round(pass_frames * t.loop * 8 / (interval / NS_PER_S) / 1e6, 6),
        "duration_s": interval / NS_PER_S,
        "wait_s": wait / NS_PER_S,
        "destination": dst,
    }


def _metrics(net: Network, results: Results, s: Schedule, passes: int, mtu: int) -> dict[str, Any]:
    """The replayed flow's metrics, as udp.flow's (docs/metrics.md#pcap-replay)."""
    f = flow_result(results, MEASURED)
    sent, received = f.sent, f.received
    bytes_received = f.bytes_received
    receive_s = f.receive_interval_ns / NS_PER_S
    frames = _frame_bytes_received(s, passes, sent, received, bytes_received, mtu)
    # One datagram has no interval to be a rate over (docs/metrics.md#pcap-replay).
    rates = sent > 1 and receive_s > 0
    lat = f.latency_ns
    return {
        **count_metrics(f),
        "throughput_mbps": round(frames * 8 / receive_s / 1e6, 6) if rates and frames is not None else None,
        "throughput_fps": round(received / receive_s, 6) if rates else None,
        "goodput_mbps": round(bytes_received * 8 / receive_s / 1e6, 6) if rates else None,
        "bytes_received": bytes_received,
        "latency_ms": ms(lat.mean if lat else None),
        "latency_min_ms": ms(lat.min if lat else None),
        "latency_p50_ms": ms(lat.p50 if lat else None),
        "latency_p90_ms": ms(lat.p90 if lat else None),
        "latency_p99_ms": ms(lat.p99 if lat else None),
        "latency_max_ms": ms(lat.max if lat else None),
        "jitter_ms": ms(f.jitter_ns),
        "cpu_util_pct": cpu_metrics(net, results),
    }
