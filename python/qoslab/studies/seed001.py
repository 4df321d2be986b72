"""Seed 001 (001_1bddba40cb4b88d6.txt): IP over ATM — CLIP vs LANE vs MPOA, the BUS and
route-server limits, TCP throughput against MTU and socket buffer.

Every number the seed states is transcribed. TCP over CLIP (§2.6, Figs. 8-11) runs: the
example ``seed001_clip.toml`` with the MTU (576, 1500, 9180, 65,535) and the socket
buffers (16, 32, 40, 55, 64 KiB) swept, 10 s each, both ends Windows NT 4.0's TCP (the
``windows-nt-4.0`` preset of qoslab.methods.tcp.STACKS: no window scaling, an ACK for
every second segment of any size or after 200 ms). The seed's "buffer size" is netperf's
socket buffer at both ends (§2.3: "The sender buffer varied between 16-64 kbyte, whilst
the receiver buffer was always of the same value"), so the test's ``window`` (both
buffers and the largest window). The ForeRunnerLE155 adapters bind: their cell rate is
the seed's §3 ceiling of 100 Mb/s, an input (the ``clip.nic.max`` row, a setting), and
their set-up time per PDU is the one calibrated number, on MTU 1500 / 64 KiB = 60 Mb/s
(the ``clip.1500`` row); the other CLIP rows are predictions. LANE and MPOA (§2.4-2.5) run the examples
``seed001_lane.toml`` and ``seed001_mpoa.toml`` (10 Mb/s Ethernet to Ethernet through
edge devices) and a BUS flood; the BUS's 53,000 cells/s is the calibration of that part
(``lane.bus.cells``), the Ethernet utilisation, the unknown frames and the shortcut's
cell rate are predictions.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from ipaddress import IPv4Address
from pathlib import Path
from typing import TYPE_CHECKING, Any

from qoslab.data import AtmNic
from qoslab.plan import models as plan_models
from qoslab.studies import EXAMPLES, Figure, Ours, Point, Published, Study, finish_axes
from qoslab.studies.seed001_paper import published_rows

STOPPED = (plan_models.UdpFlow, plan_models.TcpFlow, plan_models.UdpReplayFlow)
"""The flows with a stop time (a ping or an echo stops after its count)."""

if TYPE_CHECKING:
    from qoslab.plan.results_models import LaneStats, Results

MTUS = (576, 1500, 9180, 65535)
BUFFERS_KIB = (16, 32, 40, 55, 64)
SECONDS = 10
CLIP_SECONDS = 60
"""§2.6: 'The test phase had a time duration of 60 seconds for each measurement via
Netperf'. The start matters under NT's rules: slow start from one segment, and a lone
first segment waits for the 200 ms delayed ACK (10 s would weigh it six times more)."""
CALIBRATION_POINT = (1500, 64)
# What §2.6 says of each MTU (Figs. 8-11 are traces; only these numbers are in the text).
SEED_CLIP_TEXT = {
    576: "about 35 Mb/s, buffers 15-64 kbyte",
    1500: "limited to about 60 Mb/s; fluctuations with the buffer size",
    9180: "up to 80 Mb/s; best at 40 and 65 kbyte, fluctuations at 55 kbyte and small buffers",
    65535: "best up to 100 Mb/s; at first down to about 5 Mb/s",
}


def encapsulation(mtu: int) -> str:
    """LLC/SNAP (RFC 2225's default), except for 65,535: 65,535 + 8 octets of LLC/SNAP
    exceed AAL5's 65,535-octet SDU, so that point uses VC multiplexing (RFC 2684 §6.1)."""
    return "vc-mux" if mtu + 8 > 65535 else "llc-snap"


def run_clip(mtu: int, buffer_kib: int, seconds: int = CLIP_SECONDS) -> dict[str, Any]:
    """One point of §2.6: the example with both links' MTU and encapsulation set and the
    test's window (both socket buffers, netperf -s/-S) set; returns the TCP record."""
    from qoslab.backends.sim import lower, simulate
    from qoslab.scenario import load_scenario

    sc = load_scenario(EXAMPLES / "seed001_clip.toml")
    for link in sc.link:
        object.__setattr__(link, "mtu", mtu)
        object.__setattr__(link, "encapsulation", encapsulation(mtu))
    test = sc.test[0]
    object.__setattr__(test, "window", buffer_kib * 1024)
    object.__setattr__(test, "duration", seconds * 1_000_000_000)
    if buffer_kib * 1024 < mtu - 40:
        # A buffer below one full segment (16-55 KiB with the 64 K MTU): the sender never
        # sends more than the window the receiver offers, so its segments are as large
        # as the buffer (RFC 1122 §4.2.3.4, sender SWS avoidance: at least Fs = 1/2 of
        # the largest window seen may go); netperf's runs had exactly that. Under NT's
        # rule each such segment is a whole window and alone: it waits for the 200 ms
        # delayed-ACK timer.
        object.__setattr__(test, "mss", buffer_kib * 1024)
    from qoslab.methods.tcp import goodput_mbps, stream_window

    results = simulate(lower(sc, test_index=0))
    flow = results.flows[0]
    window = stream_window(flow)
    return {
        "parameters": {"mtu": mtu, "buffer_kib": buffer_kib, "encapsulation": encapsulation(mtu), "seconds": seconds},
        # Over the test's window (docs/metrics.md "TCP"), as `qoslab run` prints it.
        "metrics": {
            "throughput_mbps": goodput_mbps(flow),
            "bytes_received": window["bytes_received"],
            "retransmits": window["retransmits"],
        },
    }


LANE_MODEL = "LANE v1 with the flush protocol and C17 aging; MPOA with NHRP forwarding between MPSs"
"""In the LANE points' specs, so that results kept from before these mechanisms are run again."""
BUS_FLOOD = """
[scenario]
name = "BUS flood"
seed = 1
[node.ws1]
role = "host"
address = "192.0.2.1/24"
[node.ws2]
role = "host"
address = "192.0.2.2/24"
[node.lane]
role = "lane-server"
elans = ["e"]
[node.sw]
role = "atm-switch"
[[link]]
type = "atm"
ends = ["ws1", "sw"]
elan = "e"
[[link]]
type = "atm"
ends = ["sw", "ws2"]
elan = "e"
[[link]]
type = "atm"
ends = ["lane", "sw"]
[[test]]
method = "udp.flow"
from = "ws1"
to = "ws2"
payload = 1472
rate = "0 bps"
duration = "2 s"
"""
"""A host on OC-3 floods subnet broadcasts through the BUS (its `to` is rewritten to
192.0.2.255 after lowering: a test's destination is a node)."""


def _adapter() -> AtmNic:
    """The ATM adapter of the seed's Pentium-II hosts (cpu_profiles.toml), whose set-up
    time per PDU and cell rate are calibrated on the seed."""
    from qoslab.data import cpu_profiles

    nic = cpu_profiles()["pentium-ii-350mhz"].atm_nic
    if nic is None:
        raise ValueError("cpu_profiles.toml: pentium-ii-350mhz has no atm_nic")
    return nic


def _one_record(run: Callable[[], dict[str, Any]]) -> Callable[[Callable[[str], None]], list[dict[str, Any]]]:
    """A point's ``run`` that makes one record and has no progress of its own to tell."""

    def point(progress: Callable[[str], None]) -> list[dict[str, Any]]:
        return [run()]

    return point


def run_lane(example: str, seconds: int = 5) -> dict[str, Any]:
    """§2.4/§2.5 Ethernet to Ethernet through LANE (or MPOA) edge devices at 100 % load."""
    from qoslab.backends.sim import lower, simulate
    from qoslab.scenario import load_scenario

    sc = load_scenario(EXAMPLES / example)
    object.__setattr__(sc.test[0], "duration", seconds * 1_000_000_000)
    r = simulate(lower(sc, test_index=0))
    flow = r.flows[-1]
    lane = _lane(r)
    if flow.first_rx_ns is None or flow.last_rx_ns is None:
        raise RuntimeError(f"{example}: the flow received nothing in {seconds} s")
    busy_s = (flow.last_rx_ns - flow.first_rx_ns) / 1e9
    # 1472-octet payloads: 1518-octet frames, plus 8 of preamble and 12 of gap (802.3).
    # From the first arrival to the last lie received - 1 frame times (counting the
    # first frame too would put a line at full load above 100 %).
    util = 100 * (flow.received - 1) / busy_s * (1518 + 20) * 8 / 10e6
    shortcut_cells = lane.shortcut_packets * 32 / busy_s  # 1500 + 8 LLC/SNAP + 8 AAL5: 32 cells
    return {
        "parameters": {"example": example, "seconds": seconds},
        "metrics": {
            "throughput_mbps": flow.throughput_bps / 1e6,
            "utilisation_pct": util,
            "bus_frames_in": lane.bus_frames_in,
            "unknown_frames": lane.unknown_frames,
            "flush_requests": lane.flush_requests,
            "shortcut_cells_per_s": shortcut_cells,
        },
    }


def _lane(results: Results) -> LaneStats:
    """The LANE counters of a run on an ATM network (a run without ATM has none)."""
    if results.atm is None:
        raise RuntimeError("the run has no ATM results: the scenario has no ATM link")
    return results.atm.lane


def run_bus() -> dict[str, Any]:
    """§2.4 Fig. 4: the BUS's forwarding rate under a flood (the calibration point)."""
    from qoslab.backends.sim import lower, simulate
    from qoslab.scenario import loads_scenario

    config = lower(loads_scenario(BUS_FLOOD), test_index=0)
    flood = next(f.root for f in config.flows or [] if isinstance(f.root, plan_models.UdpFlow))
    flood.to = IPv4Address("192.0.2.255")
    lane = _lane(simulate(config))
    # 32 cells per frame; 65 frames (its queue and the one in service) drain after the 2 s.
    cells_per_s = (lane.bus_frames_out - 65) * 32 / 2.0
    return {
        "parameters": {"seconds": 2},
        "metrics": {"cells_per_s": cells_per_s, "dropped": lane.bus_frames_dropped},
    }


# CLIP vs LANE vs MPOA for the same pair of hosts (the comparison of the seed's title):
# (key, label, example, MTU override, shortcut threshold override).
COMPARE = (
    ("clip9180", "CLIP, MTU 9180", "seed001_compare_clip.toml", 9180, None),
    ("clip", "CLIP, MTU 1500", "seed001_compare_clip.toml", None, None),
    ("lane", "LANE, one ELAN", "seed001_compare_lane.toml", None, None),
    ("mpoa-routed", "MPOA, routed (no shortcut)", "seed001_compare_mpoa.toml", None, 1_000_000_000),
    ("mpoa", "MPOA, shortcut after 10 packets", "seed001_compare_mpoa.toml", None, None),
)
COMPARE_STACK = {
    "clip9180": "atm/aal5/llc-snap(mtu=9180)/ipv4/tcp",
    "clip": "atm/aal5/llc-snap(mtu=1500)/ipv4/tcp",
    "lane": "atm/aal5/lane/ethernet/ipv4/tcp",
    "mpoa-routed": "atm/aal5/lane/ethernet/ipv4/tcp",
    # The shortcut carries routed LLC/SNAP PDUs (RFC 2684 §5.1), the ELAN's MTU.
    "mpoa": "atm/aal5/llc-snap(mtu=1500)/ipv4/tcp",
}


def run_compare(key: str, seconds: int = SECONDS) -> dict[str, Any]:
    """One method of the comparison: the example's TCP transfer (test 0) and its pings
    (test 1), each in a fresh run; with the wire efficiency of a full segment from the
    stack analysis (cells of 53 octets, SONET overhead apart)."""
    from qoslab.analysis.mtu import analyse
    from qoslab.backends.sim import lower, simulate
    from qoslab.scenario import load_scenario

    _, label, example, mtu, threshold = next(c for c in COMPARE if c[0] == key)
    out: dict[str, Any] = {}
    for index in (0, 1):
        sc = load_scenario(EXAMPLES / example)
        if mtu is not None:
            for link in sc.link:
                object.__setattr__(link, "mtu", mtu)
        if threshold is not None:
            for node in sc.node.values():
                if getattr(node, "role", "") == "mpoa-server":
                    object.__setattr__(node, "shortcut_frames", threshold)
        test = sc.test[index]
        if index == 0:
            object.__setattr__(test, "duration", seconds * 1_000_000_000)
        config = lower(sc, test_index=index)
        # Both tests start at 100 ms, after the LE clients have joined (about 8 ms):
        # the first packet then pays for resolution and set-up only, not for the join.
        for f in config.flows or []:
            f.root.start_ns = 100_000_000
            if isinstance(f.root, STOPPED) and index == 0:
                f.root.stop_ns = 100_000_000 + seconds * 1_000_000_000
        r = simulate(config)
        flow = r.flows[0]
        atm = r.atm
        lane = atm.lane if atm else None
        if index == 0:
            from qoslab.methods.tcp import goodput_mbps, stream_window

            out["throughput_mbps"] = goodput_mbps(flow)
            out["retransmits"] = stream_window(flow)["retransmits"]
            # Time from the connect() to the first data byte at the receiver: the SYN
            # exchange plus whatever the first packets wait for (ATMARP and SVC set-up,
            # LE_ARP, the BUS, the data-direct VCC).
            start = 100_000_000
            out["first_byte_ms"] = (flow.first_rx_ns - start) / 1e6 if flow.first_rx_ns else None
            out["shortcut_packets"] = lane.shortcut_packets if lane else 0
            out["svc_setups"] = atm.svc_setups if atm else 0
            setups = atm.svc_setup_ns if atm else []
            out["svc_setup_ms"] = sum(setups) / len(setups) / 1e6 if setups else None
            out["joined_ms"] = max((j.root[1] for j in (lane.joined if lane else [])), default=0) / 1e6
        else:
            rtts = [t / 1e6 for t in flow.rtt_ns]
            out["ping_first_ms"] = rtts[0] if rtts else None
            # Steady state: the median of the later half of the echoes.
            later = sorted(rtts[len(rtts) // 2 :])
            out["ping_last_ms"] = later[len(later) // 2] if later else None
            out["ping_rtts_ms"] = rtts
            out["ping_shortcut_packets"] = lane.shortcut_packets if lane else 0
    eff = analyse(COMPARE_STACK[key]).efficiency[-1]
    out["cells_per_segment"] = eff["wire_bytes"] // 53
    out["wire_efficiency_pct"] = eff["efficiency_pct"]
    return {"parameters": {"method": key, "label": label, "example": example, "seconds": seconds}, "metrics": out}


def compare_rows(data: dict[str, list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """The comparison's records in COMPARE's order (those that have run)."""
    return [data[f"compare/{k}"][0] for k, *_ in COMPARE if data.get(f"compare/{k}")]


def _stack_spec() -> str:
    """The NT preset and the adapters' numbers, in the CLIP points' specs: a result kept
    from before a change of either is run again."""
    import json

    from qoslab.methods.tcp import STACKS

    nic = _adapter()
    return json.dumps({"stack": STACKS["windows-nt-4.0"], "nic": [nic.sar_pdu_ns, nic.sar_cell_rate]}, sort_keys=True)


STACK_SPEC = _stack_spec()
EIES = (("eies.clip", "seed001_compare_clip.toml", 9180), ("eies.lane", "seed001_compare_lane.toml", None))
"""§3's earlier EIES measurements (two Sun Solaris workstations, 'high buffers'): the
comparison examples with hosts that do not bind (no CPU profile, no adapter set-up: the
seed names neither the Suns nor their adapters), CLIP at RFC 2225's default MTU of 9180
and LANE at its Ethernet ELAN's 1500 (the seed states neither), 1 MiB socket buffers
with window scaling (RFC 1323, in Solaris 2.6 of 1997), a Linux-like stack. What is
left is the OC-3 line and each method's cell tax."""


def run_eies(key: str, seconds: int = SECONDS) -> dict[str, Any]:
    """One of §3's EIES points: the comparison example with ideal hosts and large buffers."""
    from qoslab.backends.sim import lower, simulate
    from qoslab.methods.tcp import goodput_mbps
    from qoslab.scenario import load_scenario

    _, example, mtu = next(e for e in EIES if e[0] == key)
    sc = load_scenario(EXAMPLES / example)
    for node in sc.node.values():
        if getattr(node, "role", "") == "host":
            object.__setattr__(node, "cpu", None)
            object.__setattr__(node, "socket_buffer", None)
    if mtu is not None:
        for link in sc.link:
            object.__setattr__(link, "mtu", mtu)
    test = sc.test[0]
    object.__setattr__(test, "stack", "linux")
    object.__setattr__(test, "window", 1 << 20)
    object.__setattr__(test, "duration", seconds * 1_000_000_000)
    config = lower(sc, test_index=0)
    for f in config.flows or []:
        # After the LE clients' join (about 8 ms), as run_compare does.
        f.root.start_ns = 100_000_000
        if isinstance(f.root, STOPPED):
            f.root.stop_ns = 100_000_000 + seconds * 1_000_000_000
    flow = simulate(config).flows[0]
    return {
        "parameters": {"row": key, "example": example, "mtu": mtu or 1500, "seconds": seconds},
        "metrics": {"throughput_mbps": goodput_mbps(flow)},
    }


class Seed001(Study):
    seed = "001"
    title = "IP over ATM: CLIP, LANE and MPOA"
    paper = "K.-O. Detken, Quality-of-Service (QoS) in heterogeneous networks: CLIP, LANE, and MPOA performance test (WWL Internet)"
    question = "What do CLIP, LANE and MPOA cost IP over ATM: the BUS and route-server limits, and TCP throughput against MTU (576/1500/9180/65 K) and socket buffer (16-64 KiB)?"
    scenarios = [
        "seed001_clip.toml",
        "seed001_lane.toml",
        "seed001_mpoa.toml",
        "seed001_compare_clip.toml",
        "seed001_compare_lane.toml",
        "seed001_compare_mpoa.toml",
    ]

    def published(self) -> list[Published]:
        return published_rows()

    def points(self, workdir: Path | None = None) -> list[Point]:
        # Seed 001's points run the examples as they are: no variant is written to workdir.
        points = []
        for mtu in MTUS:

            def run(progress: Any, mtu: int = mtu) -> list[dict[str, Any]]:
                records = []
                for b in BUFFERS_KIB:
                    progress(f"TCP over CLIP, MTU {mtu}, {b} KiB buffers")
                    records.append(run_clip(mtu, b))
                return records

            spec = {
                "mtu": mtu,
                "buffers": BUFFERS_KIB,
                "seconds": CLIP_SECONDS,
                "example": (EXAMPLES / "seed001_clip.toml").read_text(),
                "stack": STACK_SPEC,
            }
            points.append(
                Point(
                    f"clip/{mtu}",
                    f"seed 001 §2.6: TCP over CLIP, MTU {mtu}, buffers 16-64 KiB",
                    run,
                    spec=spec,
                    weight=len(BUFFERS_KIB),
                )
            )
        for key, example in (("lane/eth", "seed001_lane.toml"), ("mpoa/eth", "seed001_mpoa.toml")):
            points.append(
                Point(
                    key,
                    f"seed 001 §2.4-2.5: Ethernet to Ethernet through {key[:4].upper()} edge devices",
                    _one_record(functools.partial(run_lane, example)),
                    spec={"example": (EXAMPLES / example).read_text(), "model": LANE_MODEL},
                )
            )
        points.append(
            Point(
                "lane/bus",
                "seed 001 §2.4 Fig. 4: BUS flood",
                _one_record(run_bus),
                spec={"scenario": BUS_FLOOD, "model": LANE_MODEL},
            )
        )
        for key, example, eies_mtu in EIES:
            points.append(
                Point(
                    f"eies/{key.split('.')[1]}",
                    f"seed 001 §3: EIES, {key.split('.')[1].upper()} between hosts that do not bind",
                    _one_record(functools.partial(run_eies, key)),
                    spec={
                        "example": (EXAMPLES / example).read_text(),
                        "mtu": eies_mtu,
                        "seconds": SECONDS,
                        "model": "ideal hosts, 1 MiB windows",
                    },
                )
            )
        for key, label, example, compare_mtu, threshold in COMPARE:
            points.append(
                Point(
                    f"compare/{key}",
                    f"seed 001: the same two hosts over {label}",
                    _one_record(functools.partial(run_compare, key)),
                    spec={
                        "example": (EXAMPLES / example).read_text(),
                        "mtu": compare_mtu,
                        "threshold": threshold,
                        "seconds": SECONDS,
                        "stack": COMPARE_STACK[key],
                    },
                )
            )
        return points

    def figures(self, data: dict[str, list[dict[str, Any]]]) -> list[Figure]:
        import matplotlib.pyplot as plt

        figs = []
        have = [m for m in MTUS if data.get(f"clip/{m}")]
        if have:
            fig, ax = plt.subplots(figsize=(7, 4))
            styles = {576: ("o", "-"), 1500: ("s", "--"), 9180: ("^", "-."), 65535: ("D", ":")}
            seed = {576: [35], 1500: [60], 9180: [80], 65535: [100, 5]}
            for m in have:
                recs = sorted(data[f"clip/{m}"], key=lambda r: r["parameters"]["buffer_kib"])
                line = ax.plot(
                    [r["parameters"]["buffer_kib"] for r in recs],
                    [r["metrics"]["throughput_mbps"] for r in recs],
                    color="black",
                    marker=styles[m][0],
                    linestyle=styles[m][1],
                    label=f"MTU {m} (ours)",
                )[0]
                for y in seed[m]:
                    ax.plot([15, 64], [y, y], color=line.get_color(), linestyle=styles[m][1], alpha=0.35, linewidth=3)
                    ax.annotate(f"seed, MTU {m}: {y}", (64.5, y), fontsize=7, va="center")
            ax.plot([64], [60], "k*", markersize=11, label="calibration point")
            ax.set_xlim(14, 78)
            finish_axes(
                ax,
                xlabel="socket buffers, both ends (KiB)",
                ylabel="TCP goodput (Mb/s)",
                title="TCP over CLIP, OC-3: MTU and socket buffer (Figs. 8-11)",
                title_size=10,
                legend_loc="upper left",
            )
            fig.tight_layout()
            figs.append(
                Figure(
                    "seed001_clip",
                    "TCP over CLIP against MTU and buffer (Figs. 8-11)",
                    "Lines: ours, 60 s netperf-like transfers (both ends Windows NT 4.0's TCP), Pentium-II 350 sending to Pentium-II 266 (cpu_profiles.toml). Broad pale bars: the throughput the seed's text states per MTU (its figures are traces over the 60 s, not given as numbers). Star: the point the adapters' set-up time per PDU is calibrated on.",
                    fig,
                )
            )
        return figs + self._compare_figures(data)

    def _compare_figures(self, data: dict[str, list[dict[str, Any]]]) -> list[Figure]:
        """The same two hosts over CLIP, LANE and MPOA: goodput, first byte, first ping."""
        import matplotlib.pyplot as plt

        rows = compare_rows(data)
        if not rows:
            return []
        labels = [r["parameters"]["label"] for r in rows]
        per_row = [r["metrics"] for r in rows]
        fig, axes = plt.subplots(1, 3, figsize=(13, 4), gridspec_kw={"width_ratios": [1.6, 1, 1]})
        ys = range(len(rows))
        panels = (
            ("throughput_mbps", "TCP goodput (Mb/s), 64 KiB buffers, 10 s; cell tax"),
            ("first_byte_ms", "first data byte after connect() (ms)"),
            ("ping_first_ms", "first ping RTT (ms); dot: steady RTT"),
        )
        for ax, (metric, title) in zip(axes, panels):
            vals = [x.get(metric) or 0.0 for x in per_row]
            ax.barh(list(ys), vals, color=["0.25", "0.45", "0.6", "0.75", "0.85"][: len(rows)], edgecolor="black")
            for y, v, x in zip(ys, vals, per_row):
                # The goodput bars also carry the cell tax of a full segment.
                text = (
                    f"{v:.1f}  ({x['cells_per_segment']} cells/segment, {x['wire_efficiency_pct']:.1f} % payload)"
                    if metric == "throughput_mbps"
                    else f"{v:.2f}"
                )
                ax.annotate(text, (v, y), xytext=(3, 0), textcoords="offset points", va="center", fontsize=7)
            if metric == "throughput_mbps":
                ax.set_xlim(0, max(vals) * 2.1)
            if metric == "ping_first_ms":
                ax.plot([x.get("ping_last_ms") or 0.0 for x in per_row], list(ys), "ko", markersize=4)
            ax.set_yticks(list(ys))
            ax.set_yticklabels(labels if ax is axes[0] else [], fontsize=8)
            ax.invert_yaxis()
            ax.set_title(title, fontsize=9)
            ax.grid(True, axis="x", color="0.9")
        fig.suptitle("The same two Pentium-II hosts over CLIP, LANE and MPOA (OC-3)")
        fig.tight_layout()
        return [
            Figure(
                "seed001_compare",
                "CLIP vs LANE vs MPOA for the same pair of hosts",
                "Bars: ours (examples/seed001_compare_{clip,lane,mpoa}.toml; the same host CPU profiles, socket buffers and OC-3 links in all five). "
                "The seed measured TCP over CLIP only and LANE/MPOA Ethernet to Ethernet, so it has no published point for this comparison; its §3 says LANE performs as MPOA when no router is in the path. "
                "First data byte: connect() to the first payload octet at the receiver. MPOA routed: the shortcut threshold set out of reach.",
                fig,
            )
        ]

    def measured_tables(self, data: dict[str, list[dict[str, Any]]]) -> list[tuple[str, list[str], list[list[str]]]]:
        """Tables of our own measurements beside what the seed's text says: TCP over CLIP
        at every MTU and buffer, and the CLIP/LANE/MPOA comparison."""
        tables = []
        grid = {
            (r["parameters"]["mtu"], r["parameters"]["buffer_kib"]): r["metrics"]["throughput_mbps"]
            for mtu in MTUS
            for r in data.get(f"clip/{mtu}", [])
        }
        if grid:
            header = ["MTU (bytes)"] + [f"{b} KiB" for b in BUFFERS_KIB] + ["the seed's text (§2.6)"]
            body = []
            for mtu in MTUS:
                cells = [
                    f"{grid[(mtu, b)]:.1f}" + (" (calibration)" if (mtu, b) == CALIBRATION_POINT else "")
                    if (mtu, b) in grid
                    else "–"
                    for b in BUFFERS_KIB
                ]
                body.append([str(mtu)] + cells + [SEED_CLIP_TEXT[mtu]])
            tables.append(
                ("TCP over CLIP, Mb/s, every MTU and socket buffer (ours) beside the seed's Figs. 8-11", header, body)
            )
        rows = compare_rows(data)
        if not rows:
            return tables
        header = [
            "method",
            "TCP goodput (Mb/s)",
            "cells per full segment",
            "wire efficiency (% of cell octets)",
            "LE clients joined at (ms)",
            "SVCs set up (mean set-up, ms)",
            "first data byte after connect() (ms)",
            "first / steady ping RTT (ms)",
            "TCP segments on the shortcut",
        ]
        body = []
        for r in rows:
            x = r["metrics"]
            fb = "–" if x.get("first_byte_ms") is None else f"{x['first_byte_ms']:.2f}"
            ping = "–" if x.get("ping_first_ms") is None else f"{x['ping_first_ms']:.3f} / {x['ping_last_ms']:.3f}"
            joined = f"{x['joined_ms']:.2f}" if x.get("joined_ms") else "– (no join)"
            svc = f"{x.get('svc_setups', 0)}" + (f" ({x['svc_setup_ms']:.2f})" if x.get("svc_setup_ms") else "")
            body.append(
                [
                    r["parameters"]["label"],
                    f"{x['throughput_mbps']:.1f}",
                    str(x["cells_per_segment"]),
                    f"{x['wire_efficiency_pct']:.2f}",
                    joined,
                    svc,
                    fb,
                    ping,
                    str(x.get("shortcut_packets", 0)),
                ]
            )
        tables.append(("CLIP vs LANE vs MPOA, the same two hosts (ours)", header, body))
        return tables

    def ours(self, data: dict[str, list[dict[str, Any]]]) -> dict[str, Ours]:
        o: dict[str, Ours] = {}
        best: dict[int, tuple[float, int]] = {}
        for mtu in MTUS:
            recs = data.get(f"clip/{mtu}", [])
            if not recs:
                continue
            rates = {r["parameters"]["buffer_kib"]: r["metrics"]["throughput_mbps"] for r in recs}
            top = max(rates, key=lambda b: rates[b])
            best[mtu] = (rates[top], top)
            key = {576: "clip.576", 1500: "clip.1500", 9180: "clip.9180", 65535: "clip.65k.best"}[mtu]
            note = f"best over 16-64 KiB buffers, at {top} KiB" + (" (the calibration point)" if mtu == 1500 else "")
            if mtu == 9180:
                note += (
                    "; the adapters bind (67 µs a PDU + 192 cells at §3's 100 Mb/s = 804 µs a 9140-octet segment). "
                    "Above the seed's 80 because the set-up per PDU and the cell rate that give its 576 and 1500 points give 91 here: "
                    "a per-PDU-plus-per-cell adapter cannot put 9180 at 80 and 576 at 35 with 1500 at 60; a cost that grows "
                    "faster than the cells (the receiving adapter's 2 KB buffers per PDU, the copies) would, and the seed gives none"
                )
            if mtu == 65535:
                note += (
                    "; no buffer escapes NT's stall: a 65,535 window holds one 65,495-octet segment, which waits 200 ms for its ACK. "
                    "The seed's 100 Mb/s needs a receiver that acknowledges a lone segment at once (BSD's window update on the read), "
                    "which would also remove the seed's 5 Mb/s collapse: NT 4.0's receiver with a one-segment window would settle it"
                )
            o[key] = Ours(rates[top], note)
            if mtu == 65535:
                low = min(rates, key=lambda b: rates[b])
                o["clip.65k.low"] = Ours(
                    rates[low],
                    f"lowest over the buffers, at {low} KiB ({encapsulation(mtu)}): one {low * 1024}-octet segment per 200 ms delayed ACK "
                    "(NT 4.0: an ACK for a second segment or after 200 ms). The seed's 5 Mb/s would be one 64 KiB window per 105 ms; "
                    "at 16 KiB ours is 8 times under it, at 64 KiB half of it",
                )
        for key, prefix in (("lane/eth", "lane"), ("mpoa/eth", "mpoa")):
            if data.get(key):
                m = data[key][0]["metrics"]
                o[f"{prefix}.eth.util"] = Ours(
                    round(m["utilisation_pct"], 2),
                    "1518-octet frames with preamble and gap over 10 Mb/s while sending (full duplex)",
                )
                if prefix == "lane":
                    o["lane.unknown.frames"] = Ours(
                        m["bus_frames_in"],
                        f"every frame through the BUS: ARP broadcasts, {m['unknown_frames']} unknown unicast (C10 = 1 per destination until the data-direct VCC) and {m.get('flush_requests', 0)} LE_FLUSH_REQUESTs (one per client before it switches to its data-direct VCC)",
                    )
                else:
                    o["mpoa.shortcut.cells"] = Ours(
                        round(m["shortcut_cells_per_s"]),
                        "one 10 Mb/s Ethernet's 1518-octet frames as 32-cell LLC/SNAP packets on the shortcut",
                    )
                    o["mpoa.shortcut.mbps"] = Ours(
                        round(m["shortcut_cells_per_s"] * 424 / 1e6, 2), "the shortcut's cells × 424 bits"
                    )
        if data.get("lane/bus"):
            cps = data["lane/bus"][0]["metrics"]["cells_per_s"]
            o["lane.bus.cells"] = Ours(
                round(cps), "the BUS's capacity is set to 53,000 cells/s on this row (calibration)"
            )
            o["lane.bus.mbps"] = Ours(round(cps * 424 / 1e6, 2), "the calibrated cells × 424 bits")
        if len(best) == len(MTUS):
            peak = max(best.values())
            nic = _adapter()
            o["clip.nic.max"] = Ours(
                round(nic.sar_cell_rate * 48 * 8 / 1e6, 2),
                f"the adapters' cell payload rate, set from this row (cpu_profiles.toml atm_nic.sar_cell_rate), so a setting; our best TCP goodput over every MTU and buffer is {peak[0]:.1f} Mb/s (MTU {max(best, key=lambda m: best[m])}, {peak[1]} KiB)",
            )
        for key, _, eies_mtu in EIES:
            recs = data.get(f"eies/{key.split('.')[1]}", [])
            if recs:
                what = "CLIP at RFC 2225's default MTU 9180" if eies_mtu else "LANE on an Ethernet ELAN (MTU 1500)"
                o[key] = Ours(
                    round(recs[0]["metrics"]["throughput_mbps"], 2),
                    f"{what}, hosts and adapters that do not bind, 1 MiB windows: the OC-3 line less the cell tax (the seed names neither the Suns, their adapters, the MTU nor the buffers)",
                )
        return o

    def discussion(self, rows: list[dict[str, Any]], data: dict[str, list[dict[str, Any]]]) -> list[str]:
        by = {r["key"]: r for r in rows}
        got = [k for k in ("clip.576", "clip.9180", "clip.65k.best") if by.get(k, {}).get("ours") is not None]
        if not got:
            return ["TCP over CLIP has not run yet."] + self._lane_discussion(by) + self._compare_discussion(data)
        text = ", ".join(f"{by[k]['ours']:.1f} Mb/s for {k.split('.')[1]} (seed {by[k]['paper']})" for k in got)
        grid = {
            (r["parameters"]["mtu"], r["parameters"]["buffer_kib"]): r["metrics"]["throughput_mbps"]
            for m in MTUS
            for r in data.get(f"clip/{m}", [])
        }
        # The seed's own 576 and 1500 points, if one engine's set-up per PDU plus a time per
        # cell binds both (13 and 32 cells a segment): the time per cell they imply.
        t576, t1500 = 536 * 8 / 35e6, 1460 * 8 / 60e6
        per_cell = (t1500 - t576) / (32 - 13)
        low = by.get("clip.65k.low", {}).get("ours")
        stall = {b: b * 1024 * 8 / 0.2 / 1e6 for b in (16, 64)}
        out = [
            "TCP over CLIP: the adapters bind, not the hosts. The seed says so itself: the ForeRunnerLE155 works 'without influence the CPU of the workstation' (§2.6), and 'the adapter boards from Fore Systems and Olicom showed only a maximum throughput of approx. 100 Mbps, if you use CLIP' (§3), on a line that carries 134 Mb/s of IP. "
            "So each machine's adapter is a segmentation engine (cpu_profiles.toml, atm_nic) that spends a set-up time on each PDU, then sends its cells at its own rate: 260,417 cells/s, §3's 100 Mb/s of 48-octet cell payloads taken as an input (so the clip.nic.max row is a setting), and 67 µs per PDU, the one number calibrated, on MTU 1500 with 64 KiB buffers = 60 Mb/s. "
            f"The seed's own 576 and 1500 points agree with that split: they put {per_cell * 1e6:.1f} µs on each cell ({48 * 8 / per_cell / 1e6:.0f} Mb/s of cell payload); OC-3's own cell rate (§2.2's '155 Mbps', 353,208 cells/s) with the set-up calibrated again on the same point (100 µs) predicts about 30 Mb/s at 576 and 111 at 9180. "
            f"Both hosts run Windows NT 4.0's TCP (the 'windows-nt-4.0' preset): no window scaling (KB Q199947: at most 65,535 octets of window), an ACK for every second segment of whatever size or after 200 ms (Microsoft's 'TCP/IP Implementation Details'), no window update on the application's read, slow start from one segment. The predictions: {text}. The table above gives every MTU and buffer.",
        ]
        if (9180, 16) in grid and (9180, 64) in grid:
            out.append(
                f"MTU 9180: with 32-64 KiB the window holds three to seven 9140-octet segments, the receiver acknowledges every second one and the adapters bind ({grid[(9180, 64)]:.1f} Mb/s, {100 * (grid[(9180, 64)] / 80 - 1):+.0f} % against the seed's 'up to 80'); "
                f"with 16 KiB one segment goes, the 7244 octets left of the window are held (sender silly-window avoidance, RFC 1122 §4.2.3.4: less than half the largest window offered), and the lone segment waits for NT's 200 ms timer: {grid[(9180, 16)]:.2f} Mb/s, one segment per 200 ms. "
                "The seed's 'fluctuations ... especially on less buffer sizes' matches where, not how much: its figure is a trace, and a collapse this deep would have been more than a fluctuation; NT 4.0's window rounding to whole segments (its default window is 'adjusted to even increments of the MSS') would give 16 KiB two segments and no stall, but Microsoft describes that rounding for the default window, not for a window set with setsockopt(), as netperf's -s/-S do, so it is not applied."
            )
        if low is not None:
            out.append(
                f"MTU 65,535: the collapse is the stack's, not a penalty. A 65,495-octet segment cannot fit twice in any window NT 4.0 can offer (65,535), so at every buffer one segment (the whole buffer, below 64 KiB: sender silly-window avoidance lets a sender fill the window it is offered) is all that can be outstanding, the receiver waits for a second segment that cannot come, and its 200 ms delayed-ACK timer paces the transfer: "
                f"one window per 200 ms, {stall[16]:.2f} Mb/s at 16 KiB to {stall[64]:.2f} at 64 KiB (computed), ours {low:.2f} to {by['clip.65k.best']['ours']:.2f}. This is the deadlock Moldeklev and Gunningberg traced on large ATM MTUs (1995, 'How a large ATM MTU causes deadlocks in TCP data transfers'). "
                "It reproduces the seed's 'at first the throughput went down to approx. 5 Mbps' in kind (a few Mb/s, an order of magnitude under the others) but not its number, and it leaves no buffer at which the seed's 'best data rates till 100 Mbps' could come: 100 Mb/s with one segment outstanding needs each segment acknowledged at once, which is the BSD receiver's window update on the read (the 'linux' preset: 69-76 Mb/s at every buffer, no collapse). "
                "One receiver rule cannot give both of the seed's numbers; what would settle it is NT 4.0's receiver behaviour with a window of one segment (a packet trace: does the read's window update go out at once?), and whether Fig. 11's 5 and 100 are two buffers or two moments of one run."
            )
        return out + self._lane_discussion(by) + self._compare_discussion(data)

    def _compare_discussion(self, data: dict[str, list[dict[str, Any]]]) -> list[str]:
        rows = {r["parameters"]["method"]: r["metrics"] for r in compare_rows(data)}
        if len(rows) < len(COMPARE):
            return ["The CLIP/LANE/MPOA comparison has not run yet."]
        clip, lane, mr, m, c9 = rows["clip"], rows["lane"], rows["mpoa-routed"], rows["mpoa"], rows["clip9180"]
        return [
            f"CLIP vs LANE vs MPOA for the same two hosts (same CPU profiles, 64 KiB buffers, OC-3): at MTU 1500 a full TCP segment is {clip['cells_per_segment']} cells with CLIP's LLC/SNAP and {lane['cells_per_segment']} with LANE's LE and Ethernet headers (the 8 extra octets fit the last cell), so the wire efficiency is the same ({clip['wire_efficiency_pct']:.2f} % of the cell octets) and so is the goodput: "
            f"{clip['throughput_mbps']:.1f} (CLIP), {lane['throughput_mbps']:.1f} (LANE), {mr['throughput_mbps']:.1f} (MPOA routed) and {m['throughput_mbps']:.1f} Mb/s (MPOA with its shortcut) — the adapters bind, not the method; CLIP with its own MTU of 9180 gives {c9['throughput_mbps']:.1f}. "
            "The existing UDP test at line rate (tests/test_seed001_lane.py) shows where the cells do differ: 1440-octet payloads are 31 cells by CLIP or a shortcut and 32 by LANE.",
            f"What differs is set-up. LANE and MPOA clients must join their ELAN first ({lane['joined_ms']:.1f} ms: LECS, LES, BUS); their first frames go through the BUS while LE_ARP and the data-direct VCC proceed, and the flush protocol holds the rest until the BUS path is empty. "
            f"The first data byte arrives {clip['first_byte_ms']:.2f} ms after connect() over CLIP (ATMARP and an SVC), {lane['first_byte_ms']:.2f} ms over LANE and {m['first_byte_ms']:.2f} ms over MPOA (two ELANs and the route server); the first ping's round trip takes {clip['ping_first_ms']:.2f}, {lane['ping_first_ms']:.2f} and {m['ping_first_ms']:.2f} ms against {clip['ping_last_ms']:.3f} ms steady. "
            f"Through the route server a round trip is {mr['ping_last_ms']:.3f} ms, over the shortcut {m['ping_last_ms']:.3f} ms; the shortcut, opened after 10 packets in 1 s, carried {m['shortcut_packets']:,} segments of the transfer. "
            "As the seed's §3 says, without a router bottleneck LANE performs as MPOA; the route server here has no CPU model (it forwards at no cost: the seed gives no figure for the VIVID route server's forwarding), so its path costs one hop of latency and no throughput.",
        ]

    def _lane_discussion(self, by: dict[str, Any]) -> list[str]:
        got = {
            k: by[k]["ours"]
            for k in ("lane.eth.util", "mpoa.eth.util", "lane.unknown.frames", "mpoa.shortcut.cells")
            if by.get(k, {}).get("ours") is not None
        }
        if len(got) < 4:
            return ["LANE and MPOA have not run yet."]
        return [
            f"LANE and MPOA, Ethernet to Ethernet at 10 Mb/s: {got['lane.eth.util']:.1f} % and {got['mpoa.eth.util']:.1f} % utilisation (seed 99.4 % both): the edge devices and the ATM side never bind, so both are the Ethernet line, as the seed found. "
            f"{got['lane.unknown.frames']} frames crossed the BUS in the LANE test (seed: 5-6): ARP's broadcast, at most one unknown frame per destination (LANE C10) before the data-direct VCC is up, and one LE_FLUSH_REQUEST per client before it switches to that VCC; the seed does not say what its 5-6 frames were, so the agreement in count is no evidence of the same frames. "
            f"The MPOA shortcut carries {got['mpoa.shortcut.cells']:,} cells/s (seed 27,000): a 10 Mb/s Ethernet's frames in 32-cell packets; the seed's few per cent more may be its tester's ATM-side count or frame sizes. "
            "The BUS rate is calibrated, not predicted; the BUS failing under sustained overload and half-duplex collisions are not modelled.",
        ]


__all__ = ["Seed001"]
