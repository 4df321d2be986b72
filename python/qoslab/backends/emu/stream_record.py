"""The RFC 2544 benchmarks and ``pcap.replay`` on the emulation backend: the simulator's
own methods (python/qoslab/methods/rfc2544.py ``Trials``, methods/pcap_replay.py
``plan``) plan each run's flows and read its results into their records; here a run is
not a simulation but the flows sent on the emulated network by qoslab's sender and
received by its receiver (:mod:`.stream_tool`, kernel timestamps), counted into the
simulator's result shape (:class:`~qoslab.plan.results_models.FlowResult`) by the
simulator's own rules (crates/sim/src/app/stats.rs ``FlowStats::record_arrival``: the
measurement window, duplicates, late, drained, reordering, latency, RFC 3550 jitter).
So the records have the simulator's keys and definitions, with the instants of
docs/metrics.md "The emulation backend".

One network per test, as for every method: an RFC 2544 test's trials run one after
another on it, each with its learning ping first (RFC 2544 §23), its stream, and its
wait. The link emulator's loss streams are seeded once per test (run's seed and link
index), not per trial as the simulator's ``seed + k``.
"""

from __future__ import annotations

import json
import select
import subprocess
import sys
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from qoslab.backends.emu.topology import EmulationError, in_namespace
from qoslab.plan import RESULTS_SCHEMA
from qoslab.plan import models as plan_models
from qoslab.plan.results_models import FlowResult, LatencySummary, Results

if TYPE_CHECKING:
    from qoslab.backends.emu.topology import Topology
    from qoslab.lower.lowered import Network
    from qoslab.methods import Plan, Search

TOOL = [sys.executable, "-m", "qoslab.backends.emu.stream_tool"]
FIFO_PRIORITY = 40
"""SCHED_FIFO priority (sched(7)) of the sender and receiver: below the link emulators'
(links.FIFO_PRIORITY, 50), as iperf3's (measure.IPERF3_FIFO_PRIORITY): a loaded machine
then delays a datagram by a wake-up, not by another process's time slice, so the offered
rate is the plan's and the receiver reads its socket before its buffer fills."""
READY_S = 15.0
"""Longest wait for a tool to start (a Python start-up on a loaded machine)."""
MARGIN_NS = 200_000_000
"""The receiver reads this long past the last window's end, so that a late arrival is
seen and counted late (not missed)."""
SLACK_S = 30.0
"""A tool's deadline beyond its schedule."""
VOID_LATE_NS = 20_000_000
"""A trial whose sender handed some datagram to its socket more than 20 ms after its plan
instant is void: the host, not the network, held the sender up (a blocked send while the
link emulator was not running, a loaded CPU), and the burst it then sends is not the
offered load. Calibrated on this project's shared 2-core machine (2026-11-27, 64-byte
frames at 9,000-14,000 a second on an emulated 10 Mb/s line): undisturbed trials were at
most 2-11 ms late, disturbed ones 50 ms to 2 s, and only those lost frames below the
line's rate."""
VOID_TRIES = 3
"""Sendings of one trial at most; the last one counts whatever its lateness."""

StreamFlow = plan_models.UdpFlow | plan_models.UdpReplayFlow


def schedule(flow: StreamFlow) -> list[tuple[int, int]]:
    """(send instant on the plan's clock, UDP payload octets) of each datagram of
    ``flow``, as the simulator's source sends them (crates/sim/src/app/source.rs): a UDP
    flow every ``round(1e9 / rate_pps)`` ns from ``start_ns`` while before ``stop_ns``; a
    replay at ``start_ns`` plus each datagram's offset, pass after pass
    (``FlowConfig::replay_offset_ns``).

    >>> from ipaddress import IPv4Address
    >>> f = plan_models.UdpFlow(kind="udp", id=1, from_=0, to=IPv4Address("10.0.0.2"), dst_port=5001,
    ...                         payload=18, rate_pps=1000.0, start_ns=10, stop_ns=2_500_000)
    >>> schedule(f)
    [(10, 18), (1000010, 18), (2000010, 18)]
    """
    if isinstance(flow, plan_models.UdpReplayFlow):
        sizes = [int(p.root) for p in flow.payloads]
        offsets = [int(o.root) for o in flow.offsets_ns]
        n = len(offsets)
        return [
            (flow.start_ns + (k // n) * flow.period_ns + offsets[k % n], sizes[k % n]) for k in range(n * flow.passes)
        ]
    if flow.rate_pps <= 0:
        raise EmulationError("a saturating UDP stream (rate 0) is not sent by the emulation backend's stream tool")
    interval = max(1, round(1e9 / flow.rate_pps))
    count = max(0, -(-(flow.stop_ns - flow.start_ns) // interval))
    return [(flow.start_ns + k * interval, int(flow.payload)) for k in range(count)]


@dataclass
class _Sender:
    """One sender process: the streams one node sends to one address and port."""

    node: str
    address: str
    port: int
    flows: list[StreamFlow]
    proc: subprocess.Popen[str] | None = None
    out: dict[str, Any] = field(default_factory=dict)


class EmuStreams:
    """Runs a plan's UDP streams on a built emulated network: ``simulate(config)`` has
    the signature of :func:`qoslab.backends.sim.simulate`, so the simulator's methods
    (RFC 2544's ``Trials``, ``pcap.replay``'s records) run their trials through it."""

    def __init__(self, topo: Topology, net: Network) -> None:
        self.topo = topo
        self.net = net
        self.names = [n.name for n in net.config.nodes]
        self.owner = {str(a.ip): name for name, addresses in net.addresses.items() for a in addresses}
        self.trials = 0
        self.untimed = 0
        """Arrivals without a kernel receive timestamp, over every trial (0 expected)."""
        self.tx_missing = 0
        """Datagrams sent without a kernel transmit timestamp (their latency is not taken)."""
        self.send_errors: dict[str, int] = {}
        self.void = 0
        """Trials sent again because their sender was held up (:data:`VOID_LATE_NS`)."""
        self.send_late_ns = {"p99": 0, "max": 0}
        """The sender's lateness (hand-over to the socket after the plan's instant): the
        largest 99th percentile and maximum over the trials."""

    def _start(self, node: str, argv: list[str]) -> subprocess.Popen[str]:
        proc = subprocess.Popen(
            in_namespace(self.topo.namespace(node), ["chrt", "-f", str(FIFO_PRIORITY), *argv]),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.topo.registry.add_pid(proc.pid)
        return proc

    def _ready(self, proc: subprocess.Popen[str], what: str) -> None:
        assert proc.stdout is not None
        ready, _, _ = select.select([proc.stdout], [], [], READY_S)
        if (proc.stdout.readline().strip() if ready else "") != "ready":
            proc.kill()
            _, err = proc.communicate()
            raise EmulationError(f"the stream {what} did not start: {err.strip() or 'no ready line'}")

    @staticmethod
    def _result(proc: subprocess.Popen[str], what: str, timeout_s: float, data: str | None = None) -> dict[str, Any]:
        try:
            out, err = proc.communicate(input=data, timeout=timeout_s)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            raise EmulationError(f"the stream {what} did not finish within {timeout_s:.0f} s") from None
        try:
            result: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
        except (ValueError, IndexError):
            raise EmulationError(f"the stream {what} printed no result: {err.strip()}") from None
        return result

    def simulate(self, config: plan_models.SimConfig) -> Results:
        """Send ``config``'s flows on the emulated network and count them as the simulator
        would: its learning pings first (iputils ping), then every UDP stream at its plan
        times from one start, received until the last window's end. A trial whose sender
        was held up longer than :data:`VOID_LATE_NS` is void and sent again (at most
        :data:`VOID_TRIES` times in all)."""
        from qoslab.backends.emu.measure import ping

        self.trials += 1
        every = [getattr(f, "root", f) for f in config.flows or []]  # a FlowConfig wraps its kind
        streams = [f for f in every if isinstance(f, (plan_models.UdpFlow, plan_models.UdpReplayFlow))]
        windows = {w.flow: w for w in config.windows or []}
        base = min(f.start_ns for f in streams)
        for attempt in range(VOID_TRIES):
            for f in every:
                if isinstance(f, plan_models.PingFlow):  # RFC 2544 §23's learning frames
                    ping(self.topo, self.names[f.from_], str(f.to), count=1, interval_s=1.0, payload=56, wait_s=2.0)
            senders, arrivals = self._attempt(streams, windows, base)
            held_up = max(int(s.out["late_ns"]["max"]) for s in senders.values())
            if held_up <= VOID_LATE_NS or attempt == VOID_TRIES - 1:
                break
            self.void += 1
        flows = []
        for s in senders.values():
            got = arrivals[(self._receiver(s.address), s.port)]
            self.untimed += int(got["untimed"])
            for q in ("p99", "max"):
                self.send_late_ns[q] = max(self.send_late_ns[q], int(s.out["late_ns"][q]))
            for name, n in s.out["errors"].items():
                self.send_errors[name] = self.send_errors.get(name, 0) + n
            flows += [self._count(f, s.out, got["arrivals"], windows.get(f.id), base) for f in s.flows]
        return Results(
            drop_log=[],
            events=0,
            flows=flows,
            links=[],
            nodes=[],
            schema_=RESULTS_SCHEMA,
            sim_time_ns=config.duration_ns,
        )

    def _attempt(
        self, streams: list[StreamFlow], windows: dict[int, plan_models.WindowConfig], base: int
    ) -> tuple[dict[tuple[str, str, int], _Sender], dict[tuple[str, int], dict[str, Any]]]:
        """One sending of the streams: the senders (with what they printed) and what each
        receiver got."""
        senders: dict[tuple[str, str, int], _Sender] = {}
        for f in streams:
            key = (self.names[f.from_], str(f.to), f.dst_port)
            senders.setdefault(key, _Sender(*key, []))
            senders[key].flows.append(f)
        receivers = {}
        for node, port in sorted({(self._receiver(str(f.to)), f.dst_port) for f in streams}):
            proc = self._start(node, [*TOOL, "receive", "0.0.0.0", "--port", str(port)])
            self._ready(proc, f"receiver in {node}")
            receivers[(node, port)] = proc
        try:
            self._send(senders, base)
        finally:
            # Read until the last window closes (plus a margin for late arrivals).
            end = max([w.end_ns for w in windows.values()] + [f.stop_ns for f in streams])
            real0 = min((s.out.get("real0_ns") or time.time_ns()) for s in senders.values())
            time.sleep(max(0.0, (real0 + end - base + MARGIN_NS - time.time_ns()) / 1e9))
            arrivals = {k: self._result(p, f"receiver in {k[0]}", SLACK_S, "") for k, p in receivers.items()}
        return senders, arrivals

    def _receiver(self, address: str) -> str:
        try:
            return self.owner[address]
        except KeyError:
            raise EmulationError(f"no node of the plan has the address {address}") from None

    def _send(self, senders: dict[tuple[str, str, int], _Sender], base: int) -> None:
        """Start every sender with its schedule, then let them all go at once."""
        for s in senders.values():
            sends = sorted(
                (at - base, f.id, seq, payload) for f in s.flows for seq, (at, payload) in enumerate(schedule(f))
            )
            argv = [*TOOL, "send", s.address, "--port", str(s.port)]
            if any(getattr(f, "dont_fragment", False) for f in s.flows):
                argv.append("--dont-fragment")
            s.proc = self._start(s.node, argv)
            assert s.proc.stdin is not None
            s.proc.stdin.write(json.dumps([list(x) for x in sends]) + "\n")
            s.proc.stdin.flush()
            self._ready(s.proc, f"sender in {s.node}")
        for s in senders.values():
            assert s.proc is not None and s.proc.stdin is not None
            s.proc.stdin.write("go\n")
            s.proc.stdin.flush()
        for s in senders.values():
            assert s.proc is not None
            last = max(f.stop_ns for f in s.flows) - base
            s.out = self._result(s.proc, f"sender in {s.node}", last / 1e9 + SLACK_S)

    def _count(
        self,
        flow: StreamFlow,
        sender: dict[str, Any],
        arrivals: list[list[int]],
        window: plan_models.WindowConfig | None,
        base: int,
    ) -> FlowResult:
        """One flow's result by the simulator's counting rules, its instants moved onto
        the plan's clock (the sender's start is ``base``)."""
        real0 = int(sender["real0_ns"])
        tx = {seq: ts for fid, seq, ts in sender["tx"] if fid == flow.id}
        sent = int(sender["sent"].get(str(flow.id), 0))
        self.tx_missing += sent - len(tx)
        stop = window.stop_ns if window is not None else flow.stop_ns
        end = window.end_ns if window is not None else flow.stop_ns
        seen: set[int] = set()
        received = duplicates = late = drained = reordered = bytes_received = 0
        highest: int | None = None
        first = last = None
        delays: list[int] = []
        jitter, last_transit = 0.0, None
        for _fid, seq, octets, rx in sorted((a for a in arrivals if a[0] == flow.id), key=lambda a: a[3]):
            if seq in seen:
                duplicates += 1
                continue
            seen.add(seq)
            at = rx - real0 + base  # the arrival on the plan's clock
            if at > end:
                late += 1
                continue
            drained += at > stop
            if highest is not None and seq < highest:
                reordered += 1
            else:
                highest = seq
            received += 1
            bytes_received += octets
            first = at if first is None else first
            last = at
            if seq in tx:
                transit = rx - tx[seq]
                delays.append(max(0, transit))
                if last_transit is not None:
                    jitter += (abs(transit - last_transit) - jitter) / 16.0  # RFC 3550 §6.4.1
                last_transit = transit
        from qoslab.backends.emu.echo_tool import summary_ns
        from qoslab.methods.common import receive_interval_ns

        start, flow_stop = flow.start_ns, flow.stop_ns
        interval = receive_interval_ns(received, first, last, flow_stop - start)
        lat = summary_ns(delays)
        summary = (
            LatencySummary(
                min=lat["min"], max=lat["max"], mean=round(lat["mean"]), p50=lat["p50"], p90=lat["p90"], p99=lat["p99"]
            )
            if delays
            else None
        )
        return FlowResult(
            id=flow.id,
            kind="udp-replay" if isinstance(flow, plan_models.UdpReplayFlow) else "udp",
            sent=sent,
            received=received,
            lost=max(0, sent - received),
            duplicates=duplicates,
            reordered=reordered or None,
            bytes_received=bytes_received,
            drained=drained,
            late=late,
            first_rx_ns=first,
            last_rx_ns=last,
            receive_interval_ns=interval,
            throughput_bps=bytes_received * 8e9 / interval if interval else 0.0,
            latency_ns=summary,
            jitter_ns=jitter if last_transit is not None else None,
            rtt_ns=[],
        )


def rfc2544_records(topo: Topology, net: Network, index: int, plan: Search) -> list[dict[str, Any]]:
    """An RFC 2544 test's records: the simulator's ``Trials`` with every trial sent here."""
    from qoslab.methods.rfc2544 import Trials

    runner = EmuStreams(topo, net)
    trials = Trials(net, index, seed=plan.trials.seed, simulate=runner.simulate)
    records = trials.run()
    for r in records:
        r["timestamps"] = _timestamps(runner)
    return records


def replay_record(topo: Topology, net: Network, index: int, plan: Plan) -> dict[str, Any]:
    """A ``pcap.replay`` test's record: the capture's schedule sent here, read by the
    simulator's own reader (``plan.records``)."""
    runner = EmuStreams(topo, net)
    config = net.with_flows(plan.flows, plan.duration_ns, windows=plan.windows)
    (record,) = plan.records(runner.simulate(config))
    record["timestamps"] = _timestamps(runner)
    return record


def _timestamps(runner: EmuStreams) -> dict[str, Any]:
    """What was timed, as udp.echo's record says it (docs/metrics.md "The emulation backend")."""
    return {
        "kind": "SO_TIMESTAMPING software (kernel), CLOCK_REALTIME",
        "runs": runner.trials,
        "void_runs": runner.void,
        "rx_untimed": runner.untimed,
        "tx_missing": runner.tx_missing,
        "send_errors": dict(sorted(runner.send_errors.items())),
        "send_late_p99_ms": runner.send_late_ns["p99"] / 1e6,
        "send_late_max_ms": runner.send_late_ns["max"] / 1e6,
    }
