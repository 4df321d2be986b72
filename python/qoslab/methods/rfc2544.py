"""RFC 2544 §26 benchmarks, each a series of trials, every trial one simulation.

- ``rfc2544.throughput`` (§26.1): the highest rate at which no frame is lost, by a
  binary search between 0 and the medium's maximum rate; ``resolution`` ends the search,
  a fraction of the path's bottleneck (the slowest link for the frame size,
  :mod:`qoslab.methods.bottleneck`; ``max_rate`` when given), ``duration`` is the
  trial's length (§24: at least 60 s).
- ``rfc2544.latency`` (§26.2): at the throughput rate (searched first unless ``rate`` or
  ``frame_rate`` is given), one frame half-way through each trial is tagged and its
  latency taken (store-and-forward: last bit out to first bit in, as the simulator
  stamps a frame when it is handed to the sender's interface and when it is received
  whole); the mean of ``trials`` trials (§26.2: at least 20) is reported.
- ``rfc2544.frame_loss`` (§26.3): the loss at 100 % of the maximum rate, then at loads
  ``step`` lower (at most 10 %), until two successive trials lose no frame.
- ``rfc2544.back_to_back`` (§26.4): the longest burst at the minimum inter-frame gap
  that is forwarded without loss, by a binary search over the burst length up to
  ``duration`` worth of frames; repeated ``trials`` times (§26.4: 50), mean reported.
- ``rfc2544.overload``: fixed offered frame rates (seed 000 Table 4's sweep beyond the
  knee), throughput and latency at each; RFC 2544's frame counting and trials.

Frame sizes are Ethernet frames from destination MAC through FCS (§9.1: 64, 128, 256,
512, 1024, 1280, 1518); a frame of S bytes carries S − 18 − 20 − 8 bytes of UDP payload.
The maximum frame rate of an Ethernet medium counts the 8-byte preamble and SFD and the
12-byte inter-frame gap (IEEE 802.3 §4.4.2): ``rate / ((S + 20) × 8)``. On 802.11 the
PHY rate over the frame's bits is the bound.

Every trial follows §23: learning frames (one ping) a second before the stream so ARP and
bridge tables are filled, and a ``wait`` (2 s by default) after it for residual frames:
the trial's measurement window (docs/metrics.md#window) ends there, and a frame that
arrives later is lost. Every record carries ``duration_s`` and ``wait_s``. A trial at
whose stop more than 1 % of its frames were still on the way (a queue on the path held
them: they arrived after the stop) gets a ``warning``: its result depends on the trial's
length. Rates received (the overload sweep) are over the receiving interval
(docs/metrics.md#goodput), so a queue drained after the stop is not counted as capacity.
With
``bidirectional`` (§14) the receiver sends the same stream back at once, and a trial
passes only if neither direction loses a frame. Trial k of a repeated measurement runs
with seed ``seed + k`` so that repetitions are independent draws of the random streams.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from ipaddress import IPv4Address
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from qoslab.methods import LEARNING_NS, cpu_metrics, learning_ping, window
from qoslab.methods.common import RawMacs, endpoints, flow_result, ms, raw_stream_macs, receive_interval_ns
from qoslab.methods.udp import DST_PORT, ETHERNET_OVERHEAD, IPV4_HEADER, PROBE_HEADER, UDP_HEADER
from qoslab.plan import Flow
from qoslab.plan import models as plan_models
from qoslab.scenario.link_tables import Wifi
from qoslab.scenario.test_tables import (
    Rfc2544BackToBack,
    Rfc2544FrameLoss,
    Rfc2544Latency,
    Rfc2544Overload,
    Rfc2544Test,
    Rfc2544Throughput,
)

if TYPE_CHECKING:
    from qoslab.backends.sim import Network
    from qoslab.plan.results_models import FlowResult, Results

Rfc2544T = TypeVar("Rfc2544T", Rfc2544Throughput, Rfc2544Latency, Rfc2544FrameLoss, Rfc2544BackToBack, Rfc2544Overload)

PREAMBLE_AND_GAP = 20
"""IEEE 802.3 §4.4.2 and Clause 22: 7-byte preamble + SFD, and the 96-bit (12-byte) inter-frame gap."""

FORWARD, REVERSE, LEARN_FORWARD, LEARN_REVERSE = 1, 2, 0, 3
"""Flow ids: the stream each way (tagged frames add 10 and 20) and the learning pings."""

QUEUED_AT_STOP_WARN = 0.01
"""The share of a trial's frames still on the way at its stop above which the result is
flagged as depending on the trial's length (more than 1 %)."""

METHODS = ("rfc2544.throughput", "rfc2544.latency", "rfc2544.frame_loss", "rfc2544.back_to_back", "rfc2544.overload")


def payload_for(frame_size: int) -> int:
    """UDP payload bytes of an Ethernet frame of ``frame_size`` bytes (header through FCS).

    >>> payload_for(64), payload_for(1518)
    (18, 1472)
    """
    return frame_size - ETHERNET_OVERHEAD - IPV4_HEADER - UDP_HEADER


def ethernet_max_fps(rate_bps: float, frame_size: int) -> float:
    """The medium's maximum frame rate: RFC 2544 Appendix A / IEEE 802.3 framing.

    >>> round(ethernet_max_fps(100e6, 64), 1), round(ethernet_max_fps(10e6, 1518), 2)
    (148809.5, 812.74)
    """
    return rate_bps / ((frame_size + PREAMBLE_AND_GAP) * 8)


@dataclass
class Trial:
    """What one trial measured, each direction."""

    frame_size: int
    offered_fps: float
    duration_s: float
    seed: int
    directions: list[dict[str, Any]]
    results: Results = field(repr=False)
    wait_s: float = 2.0

    @property
    def queued_at_stop(self) -> int:
        """Frames still on the way when the trial stopped: those that arrived after its
        stop (in the wait, or late), both directions; a lower bound, as frames a queue
        held and then dropped are not told apart from frames lost before the stop."""
        return sum(d["drained"] + d["late"] for d in self.directions)

    def queued_at_stop_pct(self) -> float:
        return round(100.0 * self.queued_at_stop / self.sent, 6) if self.sent else 0.0

    def warning(self) -> str | None:
        """Words for a trial whose result depends on its length (None if it does not)."""
        if not self.sent or self.queued_at_stop <= QUEUED_AT_STOP_WARN * self.sent:
            return None
        return (
            f"{self.queued_at_stop} of {self.sent} frames ({self.queued_at_stop_pct():.1f} %) were still queued on the path when the "
            f"{self.duration_s:g} s trial stopped (more than {100 * QUEUED_AT_STOP_WARN:g} %): the result depends on the trial's length"
        )

    @property
    def lost(self) -> int:
        return sum(d["lost"] for d in self.directions)

    @property
    def sent(self) -> int:
        return sum(d["sent"] for d in self.directions)

    def loss_pct(self) -> float:
        """§26.3: ((input count − output count) × 100) / input count, both directions together."""
        return round(100.0 * self.lost / self.sent, 6) if self.sent else 0.0


def _rfc2544_test(net: Network, index: int) -> Rfc2544Test:
    """Test ``index`` as one of the RFC 2544 benchmarks (plan_test sends only those here)."""
    t = net.scenario.test[index]
    if not isinstance(t, Rfc2544Test):
        raise TypeError(f"test[{index}] is a {t.method!r} test, not an RFC 2544 one")
    return t


class Trials:
    """Runs the trials of one ``[[test]]`` on a lowered network.

    ``simulate(config) -> results`` runs one simulation (the backend's); ``on_trial`` is
    told each trial in words (the progress display).
    """

    def __init__(
        self,
        net: Network,
        index: int,
        *,
        seed: int | None = None,
        source: str | Path | None = None,
        simulate: Callable[[plan_models.SimConfig], Results] | None = None,
        on_trial: Callable[[str], None] | None = None,
    ) -> None:
        from qoslab.backends.sim import LocatedProblems
        from qoslab.backends.sim import simulate as sim_simulate

        self.net = net
        self.index = index
        self.test = _rfc2544_test(net, index)
        self.seed = net.scenario.scenario.seed if seed is None else seed
        self.simulate = simulate or sim_simulate
        self.on_trial = on_trial
        self.count = 0
        self.last_flows: list[Flow] = []
        self.last_results: Results | None = None
        self.last_config: plan_models.SimConfig | None = None
        """The configuration of the last trial run, so that it can be run again with a
        capture (the run is deterministic: the same frames, byte for byte)."""
        out = LocatedProblems(source)
        for k, size in enumerate(self.test.frame_sizes):
            if payload_for(int(size)) < PROBE_HEADER:
                out.add(
                    ("test", index, "frame_sizes", k),
                    "too small for the test frame's UDP header, sequence number and timestamp",
                    expected=f"at least {PROBE_HEADER + ETHERNET_OVERHEAD + IPV4_HEADER + UDP_HEADER} bytes",
                    found=f"{size} bytes",
                )
        self.src, self.dst = endpoints(net, index, source=source)
        self.raw_macs = raw_stream_macs(net, index, source=source)
        """The stream's MACs when the test is a raw stream (``dst_mac``), else {}."""
        self.rsrc, self.rdst = net.node_index(self.test.to), net.destination(self.test.to, self.test.from_)
        if self.test.bidirectional and self.rdst is None:
            out.add(
                ("test", index, "from"),
                "a bidirectional test sends back to the sender, which has no address",
                expected="a node with an address",
                found=repr(self.test.from_),
            )
        mtu = next((p.mtu for p in net.ports[self.src] if p.address is not None), 1500)
        for k, size in enumerate(self.test.frame_sizes):
            if int(size) - ETHERNET_OVERHEAD > mtu:
                out.add(
                    ("test", index, "frame_sizes", k),
                    "larger than the sender's MTU allows in one frame",
                    expected=f"at most {mtu + ETHERNET_OVERHEAD} bytes",
                    found=f"{size} bytes",
                )
        out.raise_if_any()

    # ------------------------------------------------------------------ the medium

    def line_rate_bps(self) -> tuple[float, str]:
        """The sender's medium: its link's rate and kind."""
        port = next((p for p in self.net.ports[self.src] if p.address is not None), self.net.ports[self.src][0])
        link = self.net.scenario.link[port.link]
        rate: float | None = link.rate
        if rate is None:
            # 802.11 without a fixed rate: its standard's fastest.
            if not isinstance(link, Wifi):
                raise TypeError(f"a {port.kind} link with no rate has no line rate for RFC 2544")
            from qoslab.scenario.model import WIFI_RATES_MBPS

            rate = max(WIFI_RATES_MBPS[link.standard]) * 1e6
        return float(rate), port.kind

    def scale_fps(self, frame_size: int) -> float:
        """The throughput search's scale (docs/metrics.md#rfc2544-throughput): the
        ``max_rate`` the user gives, else the path's bottleneck for the frame size, never
        above the sender's maximum rate."""
        top = self.max_fps(frame_size, getattr(self.test, "max_rate", None))
        if getattr(self.test, "max_rate", None) is not None:
            return top
        from qoslab.methods.bottleneck import bottleneck_fps

        found = bottleneck_fps(self.net, self.test.from_, self.test.to, frame_size)
        return min(top, found[0]) if found else top

    def max_fps(self, frame_size: int, max_rate: float | None = None) -> float:
        """The 100 % load: ``max_rate`` (or the sender's line rate) in frames per second."""
        rate, kind = self.line_rate_bps()
        if max_rate is not None:
            rate = float(max_rate)
        return ethernet_max_fps(rate, frame_size) if kind == "ethernet" else rate / (frame_size * 8)

    # ------------------------------------------------------------------ one trial

    def flows(
        self, frame_size: int, fps: float, duration_ns: int, *, count: int | None = None, tag: bool = False
    ) -> tuple[list[Flow], list[tuple[int, int, str]], int, int]:
        """The flows of one trial: (flows, (id, sender, destination) per direction, frames per direction, end of the stream in ns)."""
        payload = payload_for(frame_size)
        interval = 1e9 / fps
        n = count if count is not None else max(1, round(duration_ns / interval))
        start = LEARNING_NS
        flows: list[Flow] = [
            learning_ping(LEARN_FORWARD, self.src, self.dst),
        ]
        pairs = [(FORWARD, self.src, self.dst)]
        if self.test.bidirectional:
            flows.append(learning_ping(LEARN_REVERSE, self.rsrc, str(self.rdst)))
            pairs.append((REVERSE, self.rsrc, str(self.rdst)))
        for fid, src, dst in pairs:
            # A tester's raw stream: its frames' MACs as given (seed 000 §3), one way only.
            macs = self.raw_macs if fid == FORWARD else RawMacs()

            def stream(
                flow_id: int,
                start_ns: int,
                stop_ns: int,
                src: int = src,
                dst: str = dst,
                macs: RawMacs = macs,
            ) -> plan_models.UdpFlow:
                return macs.apply(
                    plan_models.UdpFlow(
                        kind="udp",
                        from_=src,
                        to=IPv4Address(dst),
                        dst_port=DST_PORT,
                        payload=payload,
                        rate_pps=fps,
                        id=flow_id,
                        start_ns=start_ns,
                        stop_ns=stop_ns,
                    )
                )

            if tag and n >= 3:
                middle = n // 2  # the frame sent half-way through the trial (§26.2)
                at = start + round(middle * interval)
                flows.append(stream(fid, start, at - round(interval / 2)))
                flows.append(stream(fid + 10, at, at + round(interval / 2)))
                flows.append(stream(fid + 20, at + round(interval), start + round((n - 0.5) * interval)))
            else:
                flows.append(stream(fid, start, start + round((n - 0.5) * interval)))
        stop = start + round(n * interval)
        return flows, pairs, n, stop

    @property
    def wait_ns(self) -> int:
        """RFC 2544 §23's wait after a trial, the test's ``wait``."""
        return int(self.test.wait)

    def windows(self, flows: list[Flow], stop: int) -> list[plan_models.WindowConfig]:
        """One measurement window for every stream flow of a trial: the trial's stop, and its wait."""
        return [window(f.id, stop, stop + self.wait_ns) for f in flows if isinstance(f, plan_models.UdpFlow)]

    def first_flows(self) -> tuple[list[Flow], int, list[plan_models.WindowConfig]]:
        """The first trial's flows, run length and windows (the first frame size at the maximum rate), without running it."""
        size = int(self.test.frame_sizes[0])
        fps = float(getattr(self.test, "frame_rate", None) or self.max_fps(size, getattr(self.test, "max_rate", None)))
        flows, _, _, stop = self.flows(size, fps, int(getattr(self.test, "duration", 1_000_000_000)))
        return flows, stop + self.wait_ns, self.windows(flows, stop)

    def trial(
        self,
        frame_size: int,
        fps: float,
        duration_ns: int,
        *,
        seed_offset: int = 0,
        count: int | None = None,
        tag: bool = False,
        what: str = "",
    ) -> Trial:
        """One trial: a stream of ``frame_size``-byte frames at ``fps`` for ``duration_ns``
        (or exactly ``count`` frames), after learning frames; with ``tag`` the frame sent
        half-way is its own flow so its latency can be read alone."""
        flows, pairs, n, stop = self.flows(frame_size, fps, duration_ns, count=count, tag=tag)
        interval = 1e9 / fps
        seed = self.seed + seed_offset
        config = self.net.with_flows(flows, stop + self.wait_ns, seed=seed, windows=self.windows(flows, stop))
        self.count += 1
        if self.on_trial is not None:
            self.on_trial(f"{self.test.method} {frame_size} B at {fps:,.1f} fps{(' — ' + what) if what else ''}")
        results = self.simulate(config)
        self.last_flows, self.last_results, self.last_config = flows, results, config
        directions = []
        for fid, _, _ in pairs:
            parts = [
                f
                for f in (
                    flow_result_or_none(results, fid),
                    flow_result_or_none(results, fid + 10),
                    flow_result_or_none(results, fid + 20),
                )
                if f is not None
            ]
            sent = sum(f.sent for f in parts)
            received = sum(f.received for f in parts)
            lost = sum(f.lost for f in parts)
            timed = [(f, f.latency_ns) for f in parts if f.latency_ns is not None]
            lat_n = sum(f.received for f, _ in timed)
            mean = sum(lat.mean * f.received for f, lat in timed) / lat_n if lat_n else None
            tagged = flow_result_or_none(results, fid + 10)
            tag_ns = tagged.latency_ns.mean if tagged and tagged.received and tagged.latency_ns else None
            firsts = [f.first_rx_ns for f in parts if f.first_rx_ns is not None]
            lasts = [f.last_rx_ns for f in parts if f.last_rx_ns is not None]
            directions.append(
                {
                    "direction": "forward" if fid == FORWARD else "reverse",
                    "sent": sent,
                    "received": received,
                    "lost": lost,
                    "drained": sum(f.drained for f in parts),
                    "late": sum(f.late for f in parts),
                    # The trial's receiving interval over all its parts (docs/metrics.md#goodput).
                    "receive_interval_ns": receive_interval_ns(
                        received, min(firsts, default=None), max(lasts, default=None), round(n * interval)
                    ),
                    "latency_mean_ns": mean,
                    "latency_max_ns": max((lat.max for _, lat in timed), default=None),
                    "tagged_latency_ns": tag_ns,
                }
            )
        return Trial(frame_size, fps, n * interval / 1e9, seed, directions, results, self.wait_ns / 1e9)

    # ------------------------------------------------------------------ records

    def record(
        self,
        parameters: dict[str, Any],
        metrics: dict[str, Any],
        results: Results | None = None,
        trials: list[Trial] | None = None,
    ) -> dict[str, Any]:
        """A record; with ``trials`` (those its result rests on) it carries the frames still
        queued at their stop and, when that is above 1 % of a trial's frames, a warning."""
        t = self.test
        if trials:
            worst = max(trials, key=lambda tr: (tr.queued_at_stop / tr.sent) if tr.sent else 0.0)
            metrics["queued_at_stop"] = worst.queued_at_stop
            metrics["queued_at_stop_pct"] = worst.queued_at_stop_pct()
            metrics["warning"] = worst.warning()
        if results is not None:
            metrics["cpu_util_pct"] = cpu_metrics(self.net, results)
        return {
            "test": t.method,
            "name": t.name,
            "from": t.from_,
            "to": t.to,
            "parameters": {**parameters, "wait_s": self.wait_ns / 1e9, "bidirectional": t.bidirectional},
            "metrics": metrics,
        }

    @staticmethod
    def mbps(fps: float, frame_size: int) -> float:
        """Frames per second as megabits per second of frames (§20: the frame's bits, header through FCS)."""
        return round(fps * frame_size * 8 / 1e6, 6)

    # ------------------------------------------------------------------ §26.1

    def throughput(self, frame_size: int) -> tuple[float, list[Trial]]:
        """§26.1: binary search for the highest frame rate with no loss (within
        ``loss_tolerance``), from the maximum rate down; stops when the interval is under
        ``resolution`` of the maximum."""
        t = self.test
        top = self.max_fps(frame_size, getattr(t, "max_rate", None))
        tolerance = float(getattr(t, "loss_tolerance", 0.0))
        resolution = float(getattr(t, "resolution", 0.005)) * self.scale_fps(frame_size)
        duration = int(getattr(t, "duration", 60_000_000_000)) if t.method == "rfc2544.throughput" else 60_000_000_000
        lo, hi, rate = 0.0, top, top
        trials: list[Trial] = []
        while True:
            trial = self.trial(
                frame_size,
                rate,
                duration,
                what=f"search step {len(trials) + 1}, passing {lo:,.1f} fps, failing {hi:,.1f}"
                if trials
                else "search step 1 at the maximum rate",
            )
            trials.append(trial)
            passed = trial.loss_pct() <= 100.0 * tolerance
            if passed:
                lo = rate
            else:
                hi = rate
            if (passed and rate == top) or hi - lo <= resolution:
                return lo, trials
            rate = (lo + hi) / 2

    def _as(self, kind: type[Rfc2544T]) -> Rfc2544T:
        """The test as the benchmark ``run`` picked by its method reads it."""
        if not isinstance(self.test, kind):
            raise TypeError(f"{self.test.method} is not {kind.__name__}")
        return self.test

    def run_throughput(self) -> list[dict[str, Any]]:
        t = self._as(Rfc2544Throughput)
        records = []
        for size in map(int, t.frame_sizes):
            fps, trials = self.throughput(size)
            top = self.max_fps(size, t.max_rate)
            best = next((tr for tr in reversed(trials) if tr.offered_fps == fps), None)
            metrics = {
                "throughput_fps": round(fps, 3),
                "throughput_mbps": self.mbps(fps, size),
                "throughput_pct": round(100.0 * fps / top, 4),
                "trials": len(trials),
                "latency_ms": ms(best.directions[0]["latency_mean_ns"]) if best else None,
            }
            scale = self.scale_fps(size)
            params = {
                "frame_bytes": size,
                "max_fps": round(top, 3),
                "bottleneck_fps": round(scale, 3),
                "resolution_fps": round(t.resolution * scale, 3),
                "duration_s": t.duration / 1e9,
                "resolution_pct": 100.0 * t.resolution,
            }
            # The result rests on its passing trial: flagged if a queue absorbed its excess.
            records.append(
                self.record(
                    params, metrics, best.results if best else trials[-1].results, trials=[best] if best else None
                )
            )
        return records

    # ------------------------------------------------------------------ §26.2

    def run_latency(self) -> list[dict[str, Any]]:
        t = self._as(Rfc2544Latency)
        records = []
        for size in map(int, t.frame_sizes):
            if t.frame_rate is not None:
                fps = float(t.frame_rate)
            elif t.rate is not None:
                fps = float(t.rate) / (size * 8)
            else:
                fps, _ = self.throughput(size)
            if fps <= 0:
                records.append(
                    self.record(
                        {"frame_bytes": size, "offered_fps": 0.0},
                        {"latency_ms": None, "trials": 0, "note": "throughput is 0: no rate to measure latency at"},
                    )
                )
                continue
            tagged: list[list[float | None]] = []
            last: Trial | None = None
            done: list[Trial] = []
            for k in range(t.trials):
                last = self.trial(
                    size, fps, t.duration, seed_offset=k, tag=True, what=f"latency trial {k + 1} of {t.trials}"
                )
                done.append(last)
                tagged.append([d["tagged_latency_ns"] for d in last.directions])
            assert last is not None
            metrics: dict[str, Any] = {}
            for j, d in enumerate(last.directions):
                values = [v for row in tagged if (v := row[j]) is not None]
                key = "" if d["direction"] == "forward" else "_reverse"
                metrics[f"latency{key}_ms"] = ms(sum(values) / len(values)) if values else None
                metrics[f"latency{key}_min_ms"] = ms(min(values)) if values else None
                metrics[f"latency{key}_max_ms"] = ms(max(values)) if values else None
                metrics[f"tagged_lost{key}"] = len(tagged) - len(values)
            metrics["trials"] = t.trials
            params = {
                "frame_bytes": size,
                "offered_fps": round(fps, 3),
                "offered_mbps": self.mbps(fps, size),
                "duration_s": t.duration / 1e9,
            }
            records.append(self.record(params, metrics, last.results, trials=done))
        return records

    # ------------------------------------------------------------------ §26.3

    def frame_loss(self, frame_size: int) -> list[Trial]:
        """§26.3: trials from 100 % of the maximum rate down by ``step`` until two
        successive trials lose nothing (or the load would reach 0)."""
        t = self._as(Rfc2544FrameLoss)
        top = self.max_fps(frame_size, t.max_rate)
        trials: list[Trial] = []
        clean = 0
        k = 0
        while clean < 2:
            load = 1.0 - k * float(t.step)
            if load <= 1e-9:
                break
            trial = self.trial(frame_size, top * load, t.duration, what=f"load {100 * load:.0f} %")
            trials.append(trial)
            clean = clean + 1 if trial.lost == 0 else 0
            k += 1
        return trials

    def run_frame_loss(self) -> list[dict[str, Any]]:
        t = self._as(Rfc2544FrameLoss)
        records = []
        for size in map(int, t.frame_sizes):
            top = self.max_fps(size, t.max_rate)
            for trial in self.frame_loss(size):
                params = {
                    "frame_bytes": size,
                    "load_pct": round(100.0 * trial.offered_fps / top, 6),
                    "offered_fps": round(trial.offered_fps, 3),
                    "offered_mbps": self.mbps(trial.offered_fps, size),
                    "duration_s": t.duration / 1e9,
                }
                metrics = {"sent": trial.sent, "lost": trial.lost, "frame_loss_pct": trial.loss_pct()}
                records.append(self.record(params, metrics, trial.results, trials=[trial]))
        return records

    # ------------------------------------------------------------------ §26.4

    def back_to_back(self, frame_size: int, seed_offset: int = 0) -> tuple[int, int]:
        """§26.4, one repetition: the longest burst (frames at the medium's rate) with no
        loss, searched between 1 and ``duration`` worth of frames. Returns (frames, trials)."""
        t = self._as(Rfc2544BackToBack)
        fps = self.max_fps(frame_size, t.max_rate)
        longest = max(1, int(fps * t.duration / 1e9))
        burst = self.trial(
            frame_size, fps, 0, count=longest, seed_offset=seed_offset, what=f"burst of {longest} frames"
        )
        if burst.lost == 0:
            return longest, 1
        lo, hi, n = 0, longest, 1
        while hi - lo > 1:
            mid = (lo + hi) // 2
            trial = self.trial(
                frame_size,
                fps,
                0,
                count=mid,
                seed_offset=seed_offset,
                what=f"burst of {mid} frames (passing {lo}, failing {hi})",
            )
            n += 1
            if trial.lost == 0:
                lo = mid
            else:
                hi = mid
        return lo, n

    def run_back_to_back(self) -> list[dict[str, Any]]:
        t = self._as(Rfc2544BackToBack)
        records = []
        for size in map(int, t.frame_sizes):
            fps = self.max_fps(size, t.max_rate)
            found = [self.back_to_back(size, k) for k in range(t.trials)]
            frames = [f for f, _ in found]
            mean = sum(frames) / len(frames)
            metrics = {
                "back_to_back_frames": round(mean, 3),
                "back_to_back_min_frames": min(frames),
                "back_to_back_max_frames": max(frames),
                "burst_s": round(mean / fps, 9),
                "trials": sum(n for _, n in found),
            }
            params = {
                "frame_bytes": size,
                "burst_fps": round(fps, 3),
                "repetitions": t.trials,
                "longest_s": t.duration / 1e9,
            }
            records.append(self.record(params, metrics, self.last_results))
        return records

    # ------------------------------------------------------------------ overload

    def run_overload(self) -> list[dict[str, Any]]:
        t = self._as(Rfc2544Overload)
        records = []
        for size in map(int, t.frame_sizes):
            for fps in t.frame_rates:
                trial = self.trial(size, float(fps), t.duration, tag=True, what=f"offered {fps:g} fps")
                d = trial.directions[0]
                received = d["received"]
                # Forwarding rate (RFC 2285 §3.6.1) over the receiving interval: the
                # frames a queue still held at the stop took their time to come out.
                receive_s = d["receive_interval_ns"] / 1e9
                metrics = {
                    "throughput_mbps": self.mbps(received / receive_s, size),
                    "throughput_fps": round(received / receive_s, 3),
                    "receive_interval_s": receive_s,
                    "latency_ms": ms(d["latency_mean_ns"]),
                    "latency_max_ms": ms(d["latency_max_ns"]),
                    "tagged_latency_ms": ms(d["tagged_latency_ns"]),
                    "sent": trial.sent,
                    "lost": trial.lost,
                    "loss_pct": trial.loss_pct(),
                }
                params = {
                    "frame_bytes": size,
                    "offered_fps": float(fps),
                    "offered_mbps": self.mbps(float(fps), size),
                    "duration_s": t.duration / 1e9,
                }
                records.append(self.record(params, metrics, trial.results, trials=[trial]))
        return records

    def run(self) -> list[dict[str, Any]]:
        """Every point of the test, one record each."""
        return {
            "rfc2544.throughput": self.run_throughput,
            "rfc2544.latency": self.run_latency,
            "rfc2544.frame_loss": self.run_frame_loss,
            "rfc2544.back_to_back": self.run_back_to_back,
            "rfc2544.overload": self.run_overload,
        }[self.test.method]()


def flow_result_or_none(results: Results, flow_id: int) -> FlowResult | None:
    try:
        return flow_result(results, flow_id)
    except KeyError:
        return None


__all__ = ["Trials", "Trial", "payload_for", "ethernet_max_fps", "METHODS", "PREAMBLE_AND_GAP"]
