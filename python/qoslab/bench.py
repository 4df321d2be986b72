"""Speed benchmarks: how fast qoslab's simulator runs, and how that compares with ns-3.

``qoslab bench`` runs these and prints the record of ../DESIGN.md ("Machine-readable
output")::

    {"scenarios": [{"name", "events", "wall_s", "events_per_s", "sim_time_s", ...}],
     "comparisons": [{"name", "qoslab_wall_s", "ns3_wall_s", "speedup",
                      "qoslab_throughput_mbps", "ns3_throughput_mbps",
                      "throughput_diff_pct"}],
     "skipped": [{"name", "reason"}]}

``comparisons`` is there with ``--with-ns3`` only. The machine is shared and noisy, so
speed is never asserted anywhere: it is measured here, and compared with ns-3 on the
same scenario in the same run, as a ratio (benchmarks/README.md).

The benchmarks:

``wifi_80211b_saturation``
    One 802.11b station saturating its AP with UDP (1472-byte payload, 1500-byte IP
    packets, 11 Mb/s, long preamble, Ack at 2 Mb/s, RTS off, no rate adaptation).
    ns-3: benchmarks/ns3/wifi_saturation.py.
``ethernet_chain_10``
    Ten nodes in a line (host, eight routers, host) joined by nine 100 Mb/s Ethernet
    links; one saturating UDP flow from end to end. ns-3: benchmarks/ns3/ethernet_chain.py.
``seed004_download``
    Seed 004's 10 MB download (examples/seed004_asymmetric.toml at its 57.6 kb/s point):
    a 2 Mb/s 802.11 downlink, the TCP ACKs over a SLIP line, NetBSD 1.1's fixed 16 KiB
    window. Runs to the end of the transfer (``--sim-seconds`` does not apply).
    ns-3: benchmarks/ns3/seed004_download.py (a PointToPoint line at 8/10 of the rate
    standing in for SLIP over 8N1; the script says why the octets match).
``tcp_cubic_30mbps_1pct``
    One CUBIC flow for 60 s over 30 Mb/s with 10 ms each way and 1 % loss on the
    forward direction (seed 002's lossy link). ns-3: benchmarks/ns3/tcp_cubic.py.
``switch_1000_hosts``
    Peak memory of 1,000 hosts on one learning switch, each pinging its neighbour
    once a second; run in a child process so that its peak RSS is the simulation's.
``switch_10000_hosts_scenario``
    10,000 hosts on one switch written as a scenario file's text, taken the whole way a
    user's ``qoslab run`` takes it: parsed and checked (``load_s``), lowered, run and
    read back (``run_s``: a 3-echo ping from the first host to the last, ``sim_s`` of it
    in ``_core.simulate``); ``wall_s`` is their sum, ``peak_rss_mib`` the child's peak.
    Run once, in a child process; ``--sim-seconds`` does not apply.
``wire``
    crates/wire encode+decode (``cargo bench -p qoslab-benchmarks --bench wire``); run
    only from a source checkout with cargo on PATH.

Both tools measure only the simulation's run: qoslab's ``_core.simulate`` call (the
configuration already built), ns-3's ``Simulator.Run()`` (import and set-up excluded).
Each is timed ``repeat`` times (default 3, ``--repeat``) in the same bench run and the
median is reported (``wall_s``; every run's time in ``wall_runs_s``): qoslab calls
``simulate`` again on the same configuration in the same process (and checks the results
are byte-identical), ns-3's script runs again in a new process. The speed-up is the ratio
of the two medians. Each run's CPU time (``time.thread_time`` over the same span) is kept
too (``cpu_s``, ``cpu_runs_s``) with ``cpu_speedup`` beside ``speedup``: on a machine
shared with other jobs, wall time counts the time the run waited for a core and CPU time
does not.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from qoslab.errors import InputError, Problem, did_you_mean
from qoslab.plan import PLAN_SCHEMA

# ---------------------------------------------------------------------------------------
# Shared parameters of the scenarios. The ns-3 scripts take the same values from their
# own defaults; benchmarks/README.md lists them side by side.
# ---------------------------------------------------------------------------------------

#: Simulated seconds of traffic by default (the issue's target: 60 s).
DEFAULT_SIM_SECONDS = 60.0
#: Time before the flow starts, in both tools. ns-3 spends it on active scanning and
#: association (its probe timeout is 50 ms); qoslab does not model association and is
#: idle for it, so that both flows start and stop at the same instants.
WARMUP_S = 0.25
#: UDP payload: 1472 + 8 (UDP) + 20 (IPv4) = a 1500-byte IP packet, a full Ethernet MTU.
UDP_PAYLOAD = 1472
UDP_PORT = 5001
#: Transmit queues, frames, of every port (ns-3: CsmaNetDevice TxQueue and the wifi MAC
#: queue set to the same; its traffic-control queue discs are removed).
QUEUE_FRAMES = 100
ETHERNET_RATE_BPS = 100_000_000
#: 100 m of copper at about 5 ns/m.
ETHERNET_DELAY_NS = 500
CHAIN_NODES = 10
SWITCH_HOSTS = 1000
#: ns-3's ArpCache AliveTimeout (120 s): no entry expires during a 60-s run in either tool.
ARP_TIMEOUT_NS = 120_000_000_000
REASSEMBLY_TIMEOUT_NS = 30_000_000_000

#: (d) the TCP benchmark: link rate, one-way delay (RTT 20 ms) and forward loss.
TCP_RATE_BPS = 30_000_000
TCP_DELAY_NS = 10_000_000
TCP_LOSS = 0.01

SIM_SCENARIOS = (
    "wifi_80211b_saturation",
    "ethernet_chain_10",
    "seed004_download",
    "switch_1000_hosts",
    "switch_10000_hosts_scenario",
    "tcp_cubic_30mbps_1pct",
    "atm_clip_tcp",
)
#: Hosts of the scenario-file benchmark (issue 14's target for one switch).
SCENARIO_SWITCH_HOSTS = 10_000
#: The benchmarks ns-3 also runs, and its script for each.
NS3_SCRIPTS = {
    "wifi_80211b_saturation": "wifi_saturation.py",
    "ethernet_chain_10": "ethernet_chain.py",
    "seed004_download": "seed004_download.py",
    "tcp_cubic_30mbps_1pct": "tcp_cubic.py",
}
#: Seed 004's benchmark: the ACK line's rate (the example's 57.6 kb/s "sweet spot").
SEED004_ACK_RATE = "57.6 kbps"
ALL_BENCHMARKS = (*SIM_SCENARIOS, "wire")
#: ``qoslab bench --quick``: what runs anywhere qoslab is installed, in seconds (no cargo
#: for the wire codec, not the 10,000-host scenario).
QUICK_BENCHMARKS = tuple(n for n in SIM_SCENARIOS if n != "switch_10000_hosts_scenario")

#: How to get ns-3 when --with-ns3 cannot find it.
NS3_INSTALL_HINT = (
    "install ns-3 for the benchmarks in a separate venv: "
    "`python3 -m venv .venv-bench && .venv-bench/bin/pip install ns3` at the top of the "
    "source checkout (about 70 MB), or point QOSLAB_NS3_PYTHON at a Python that can "
    "`from ns import ns`"
)

NS = 1_000_000_000

#: Timed runs of each tool per benchmark; the median is reported (``--repeat``).
DEFAULT_REPEAT = 3


# ---------------------------------------------------------------------------------------
# SimConfig builders (crates/sim/src/config.rs)
# ---------------------------------------------------------------------------------------


def _ns(seconds: float) -> int:
    return round(seconds * NS)


def _cpu_free() -> dict[str, Any]:
    """A node that forwards at no CPU cost: the benchmarks time the network models."""
    return {
        "profile": "none",
        "hz": 0,
        "queue_limit": 1000,
        "cycles": {
            "per_rx_packet": 0,
            "per_tx_packet": 0,
            "per_byte_copied": 0.0,
            "per_bridge_lookup": 0,
            "per_route_lookup": 0,
            "per_nat_translation": 0,
            "per_byte_rc4": 0.0,
            "per_byte_aes": 0.0,
        },
    }


def _mac(node: int, port: int) -> list[int]:
    """A locally administered unicast MAC, unique per (node, port)."""
    return [0x02, 0x00, (node >> 8) & 0xFF, node & 0xFF, (port >> 8) & 0xFF, port & 0xFF]


#: A bridge interface's own MAC: second byte 1, apart from every port's.
BRIDGE_MAC = [0x02, 0x01, 0x00, 0x00, 0x00, 0x00]


def _port(name: str, node: int, index: int, address: str | None, prefix: int = 24) -> dict[str, Any]:
    port: dict[str, Any] = {"name": name, "mac": _mac(node, index), "mtu": 1500}
    if address is not None:
        port["address"] = [address, prefix]
    return port


def _node(name: str, role: str, ports: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    node = {
        "name": name,
        "role": role,
        "ports": ports,
        "cpu": _cpu_free(),
        "arp_timeout_ns": ARP_TIMEOUT_NS,
        "reassembly_timeout_ns": REASSEMBLY_TIMEOUT_NS,
    }
    node.update(extra)
    return node


def _udp_flow(flow_id: int, src: int, dst: str, sim_seconds: float) -> dict[str, Any]:
    """A saturating UDP flow: ``rate_pps`` 0 keeps the sender's queue non-empty."""
    return {
        "kind": "udp",
        "id": flow_id,
        "from": src,
        "to": dst,
        "dst_port": UDP_PORT,
        "payload": UDP_PAYLOAD,
        "rate_pps": 0.0,
        "start_ns": _ns(WARMUP_S),
        "stop_ns": _ns(WARMUP_S + sim_seconds),
    }


def _sim_config(nodes: list, links: list, flows: list, sim_seconds: float, seed: int = 1) -> dict[str, Any]:
    return {
        "schema": PLAN_SCHEMA,
        "seed": seed,
        "duration_ns": _ns(WARMUP_S + sim_seconds),
        "nodes": nodes,
        "links": links,
        "flows": flows,
        "capture": False,
    }


def wifi_saturation_config(sim_seconds: float = DEFAULT_SIM_SECONDS) -> dict[str, Any]:
    """(a) One 802.11b station sending saturating UDP to the AP itself.

    The receiver is the AP's own address, not a host behind it, so that the run times
    the BSS alone (no Ethernet hop, no forwarding) as benchmarks/ns3/wifi_saturation.py
    does. MPDU: 24 (MAC header) + 8 (LLC/SNAP) + 1500 (IP) + 4 (FCS) = 1536 bytes at
    11 Mb/s with a long preamble; its Ack at 2 Mb/s, the highest basic rate not above
    11 Mb/s (basic set {1, 2} Mb/s, as ns-3's AP advertises); CW 31..1023, slot 20 µs,
    SIFS 10 µs; RTS off (threshold 2347), open system, no frame errors.
    """
    nodes = [
        _node("ap", "ap", [_port("wlan0", 0, 0, "10.1.0.1")]),
        _node("sta", "host", [_port("wlan0", 1, 0, "10.1.0.2")]),
    ]
    links = [
        {
            "type": "wifi",
            "name": "bss",
            "standard": "802.11b",
            "rate_bps": 11_000_000,
            "preamble": "long",
            "security": "open",
            "ap": {"node": 0, "port": 0},
            "stations": [{"node": 1, "port": 0}],
            "rts_threshold": 2347,
            "wds": False,
            "foreign_source": "drop",
            "queue_frames": QUEUE_FRAMES,
        }
    ]
    flows = [_udp_flow(1, 1, "10.1.0.1", sim_seconds)]
    return _sim_config(nodes, links, flows, sim_seconds)


def _ethernet_link(name: str, a: tuple[int, int], b: tuple[int, int]) -> dict[str, Any]:
    return {
        "type": "ethernet",
        "name": name,
        "a": {"node": a[0], "port": a[1]},
        "b": {"node": b[0], "port": b[1]},
        "rate_bps": ETHERNET_RATE_BPS,
        "delay_ns": ETHERNET_DELAY_NS,
        "queue_frames": QUEUE_FRAMES,
        "queue_bytes": QUEUE_FRAMES * 1518,
    }


def ethernet_chain_config(sim_seconds: float = DEFAULT_SIM_SECONDS, n: int = CHAIN_NODES) -> dict[str, Any]:
    """(b) host0 — r1 — … — r8 — host9 on 100 Mb/s Ethernet, UDP from end to end.

    Link i (0 ≤ i < n−1) joins node i (10.0.i.1/24) and node i+1 (10.0.i.2/24). Every
    router has a route to each subnet that is not connected, via its left or right
    neighbour; the hosts have a default route. Each link: full duplex, 500 ns, 100-frame
    drop-tail queue per end.
    """
    if n < 2:
        raise ValueError("a chain needs two nodes or more")
    nodes = []
    for k in range(n):
        ports = []
        if k > 0:
            ports.append(_port(f"eth{len(ports)}", k, len(ports), f"10.0.{k - 1}.2"))
        if k < n - 1:
            ports.append(_port(f"eth{len(ports)}", k, len(ports), f"10.0.{k}.1"))
        routes = []
        for subnet in range(n - 1):
            if subnet in (k - 1, k):
                continue  # connected
            via = f"10.0.{k - 1}.1" if subnet < k - 1 else f"10.0.{k}.2"
            routes.append({"destination": f"10.0.{subnet}.0", "prefix_len": 24, "via": via})
        is_host = k in (0, n - 1)
        nodes.append(
            _node(
                f"h{k}" if is_host else f"r{k}",
                "host" if is_host else "router",
                ports,
                ip_forward=not is_host,
                routes=routes,
            )
        )
    links = [_ethernet_link(f"l{i}", (i, 0 if i == 0 else 1), (i + 1, 0)) for i in range(n - 1)]
    flows = [_udp_flow(1, 0, f"10.0.{n - 2}.2", sim_seconds)]
    return _sim_config(nodes, links, flows, sim_seconds)


def switch_config(sim_seconds: float, hosts: int = SWITCH_HOSTS) -> dict[str, Any]:
    """(c) ``hosts`` hosts on one 802.1D learning switch (a bridge of ``hosts`` ports),
    each pinging the next host once a second: the figure is peak memory."""
    switch_ports = [_port(f"p{i}", 0, i, None) for i in range(hosts)]
    switch = _node(
        "sw",
        "switch",
        switch_ports,
        bridge={"ports": list(range(hosts)), "mode": "l2", "mac": BRIDGE_MAC, "aging_ns": 300 * NS},
    )

    # 10.2.0.0/16: host i is 10.2.(i+1 >> 8).(i+1 & 255).
    def addr(i: int) -> str:
        return f"10.2.{(i + 1) >> 8}.{(i + 1) & 0xFF}"

    nodes = [switch] + [_node(f"h{i}", "host", [_port("eth0", i + 1, 0, addr(i), 16)]) for i in range(hosts)]
    links = [_ethernet_link(f"l{i}", (0, i), (i + 1, 0)) for i in range(hosts)]
    count = max(1, int(sim_seconds))
    flows = [
        {
            "kind": "ping",
            "id": i + 1,
            "from": i + 1,
            "to": addr((i + 1) % hosts),
            "count": count,
            "interval_ns": NS,
            "payload": 56,
            "start_ns": _ns(WARMUP_S) + i * 1000,
        }
        for i in range(hosts)
    ]
    return _sim_config(nodes, links, flows, sim_seconds)


#: CLIP's default MTU (RFC 2225 §5) and a 64-KiB window: seed 001's best case.
ATM_MTU = 9180
ATM_WINDOW = 65536


def atm_clip_config(sim_seconds: float = DEFAULT_SIM_SECONDS) -> dict[str, Any]:
    """(f) TCP over CLIP: host — ATM switch — host on OC-3 (149.76 Mb/s of cells), one
    LLC/SNAP PVC (0/100) cross-connected in the switch, MTU 9180, a NewReno bulk transfer
    with 64 KiB buffers and no CPU cost. OC-3 carries 353,208 cells/s: 10 s is about 3.5
    million cells each way across the switch (and the ACKs' cells back)."""

    def port(node: int, address: str | None) -> dict[str, Any]:
        p = {"name": "atm0", "mac": _mac(node, 0), "mtu": ATM_MTU, "point_to_point": True}
        if address is not None:
            p["address"] = [address, 24]
        return p

    switch = _node(
        "sw", "atm-switch", [dict(port(2, None), name="atm0"), dict(port(2, None), name="atm1", mac=_mac(2, 1))]
    )
    nodes = [_node("ws1", "host", [port(0, "10.3.0.1")]), _node("ws2", "host", [port(1, "10.3.0.2")]), switch]

    def link(name: str, a: tuple[int, int], b: tuple[int, int]) -> dict[str, Any]:
        return {
            "type": "atm",
            "name": name,
            "a": {"node": a[0], "port": a[1]},
            "b": {"node": b[0], "port": b[1]},
            "phy": "oc3",
            "encapsulation": "llc-snap",
            "pvcs": [{"vpi": 0, "vci": 100}],
        }

    links = [link("l1", (0, 0), (2, 0)), link("l2", (2, 1), (1, 0))]
    flows = [
        {
            "kind": "tcp",
            "id": 1,
            "from": 0,
            "to": "10.3.0.2",
            "dst_port": UDP_PORT,
            "start_ns": _ns(WARMUP_S),
            "stop_ns": _ns(WARMUP_S + sim_seconds),
            "tcp": {
                "congestion": "newreno",
                "send_buffer": ATM_WINDOW,
                "recv_buffer": ATM_WINDOW,
                "max_window": ATM_WINDOW,
            },
        }
    ]
    config = _sim_config(nodes, links, flows, sim_seconds)
    config["atm"] = {
        "switches": [
            {
                "node": 2,
                "cross_connects": [{"a": {"port": 0, "vpi": 0, "vci": 100}, "b": {"port": 1, "vpi": 0, "vci": 100}}],
            }
        ]
    }
    return config


def seed004_download_config(sim_seconds: float = DEFAULT_SIM_SECONDS) -> dict[str, Any]:
    """examples/seed004_asymmetric.toml at its 57.6 kb/s point, lowered with its test
    (a sized transfer: it runs to its end, whatever ``sim_seconds`` says)."""
    from qoslab.backends.sim import lower
    from qoslab.data.examples import path as example
    from qoslab.scenario import load_scenario
    from qoslab.sweep import sweep_points

    points = sweep_points(load_scenario(example("seed004_asymmetric.toml")))
    (point,) = [p for p in points if p.values.get("link[2].rate") == SEED004_ACK_RATE]
    return lower(point.scenario, test_index=0)


def transfer_throughput_mbps(results: dict[str, Any]) -> float | None:
    """Bytes of the sized TCP transfer × 8 over the time from its start to its last byte."""
    from qoslab.methods.tcp import START_NS

    for flow in results.get("flows") or []:
        done = (flow.get("tcp") or {}).get("completed_ns")
        if done:
            return flow["bytes_received"] * 8 / ((done - START_NS) / NS) / 1e6
    return None


def tcp_cubic_config(sim_seconds: float = DEFAULT_SIM_SECONDS) -> dict[str, Any]:
    """(d) One CUBIC flow from 10.3.0.1 to 10.3.0.2 over a 30 Mb/s Ethernet link with
    10 ms of delay each way and 1 % Bernoulli loss on every frame towards 10.3.0.2.

    TCP is the simulator's default (crates/sim/src/tcp/config.rs, Linux's values):
    CUBIC, HyStart off, SACK, timestamps, window scaling, MSS 1460 (1448 bytes of data
    with timestamps), initial window 10, delayed ACK every 2nd segment or 40 ms, min RTO
    200 ms, 4 MiB send and 6 MiB receive buffers; the bulk source never runs dry.
    RACK and TLP (RFC 8985) off, unlike Linux: ns-3 3.44's TcpSocketBase has neither
    (only classic and PRR recovery, tcp-recovery-ops.h / tcp-prr-recovery.h), so both
    tools recover with RFC 6675 SACK alone. Queues: 100 frames each end. ns-3:
    benchmarks/ns3/tcp_cubic.py.
    """
    nodes = [
        _node("a", "host", [_port("eth0", 0, 0, "10.3.0.1")]),
        _node("b", "host", [_port("eth0", 1, 0, "10.3.0.2")]),
    ]
    link = _ethernet_link("l0", (0, 0), (1, 0))
    link.update(
        rate_bps=TCP_RATE_BPS, delay_ns=TCP_DELAY_NS, impair=[{"loss": {"model": "bernoulli", "p": TCP_LOSS}}, {}]
    )
    flows = [
        {
            "kind": "tcp",
            "id": 1,
            "from": 0,
            "to": "10.3.0.2",
            "dst_port": 5201,
            "start_ns": _ns(WARMUP_S),
            "stop_ns": _ns(WARMUP_S + sim_seconds),
            "tcp": {"rack": False, "tlp": False},
        }
    ]
    return _sim_config(nodes, [link], flows, sim_seconds)


CONFIG_BUILDERS: dict[str, Callable[[float], dict[str, Any]]] = {
    "atm_clip_tcp": atm_clip_config,
    "wifi_80211b_saturation": wifi_saturation_config,
    "ethernet_chain_10": ethernet_chain_config,
    "seed004_download": seed004_download_config,
    "switch_1000_hosts": switch_config,
    "tcp_cubic_30mbps_1pct": tcp_cubic_config,
}

# ---------------------------------------------------------------------------------------
# Running
# ---------------------------------------------------------------------------------------


class Unavailable(Exception):
    """A benchmark that cannot run here (a tool or a core function missing)."""


class BenchFailed(Exception):
    """A benchmark that ran and failed."""


def _simulate() -> Callable[[str, Any], str]:
    from qoslab import _core

    simulate = getattr(_core, "simulate", None)
    if simulate is None:
        raise Unavailable("this build of qoslab._core has no simulate(); rebuild it (maturin develop)")
    return simulate


def _core_build() -> str:
    """How the core that ran was compiled (``"pgo"`` or ``"release"``, see
    scripts/install.sh): a profile-guided build runs the per-packet path in fewer
    instructions, so a speed figure says which build it is of."""
    from qoslab import _core

    return getattr(_core, "core_build", lambda: "release")()


def flow_throughput_mbps(results: dict[str, Any], flow_id: int, seconds: float) -> float | None:
    """UDP payload throughput of one flow from the simulator's results, Mb/s.

    Looks for the flow's record in ``results["flows"]`` (by ``id``) and uses the first
    of ``throughput_mbps`` or a received-payload byte count it has. None when the results
    carry neither (the results format is the simulator's; see benchmarks/README.md).
    """
    for flow in results.get("flows") or []:
        if not isinstance(flow, dict) or flow.get("id") != flow_id:
            continue
        if isinstance(flow.get("throughput_mbps"), (int, float)):
            return float(flow["throughput_mbps"])
        for key in ("rx_payload_bytes", "rx_bytes", "received_bytes", "bytes_received"):
            if isinstance(flow.get(key), (int, float)) and seconds > 0:
                return flow[key] * 8 / seconds / 1e6
    return None


def _scenario_record(name: str, events: int | None, wall_s: float, sim_time_s: float | None, **extra: Any) -> dict:
    record: dict[str, Any] = {
        "name": name,
        "events": events,
        "wall_s": wall_s,
        "events_per_s": (events / wall_s) if events is not None and wall_s > 0 else None,
        "sim_time_s": sim_time_s,
    }
    record.update(extra)
    return record


def run_sim(
    name: str, sim_seconds: float, simulate: Callable[[str, Any], str] | None = None, repeat: int = DEFAULT_REPEAT
) -> dict[str, Any]:
    """Runs one simulator scenario in this process ``repeat`` times and times the
    ``simulate`` call only; the record's ``wall_s`` is the median. The runs must give
    byte-identical results (the determinism contract), else the benchmark fails."""
    simulate = simulate or _simulate()
    config_json = json.dumps(CONFIG_BUILDERS[name](sim_seconds))
    walls: list[float] = []
    cpus: list[float] = []
    out: Any = None
    for _ in range(repeat):
        # The run releases the GIL but stays on this thread: its CPU time is this thread's.
        start, cpu_start = time.perf_counter(), time.thread_time()
        try:
            again = simulate(config_json, None)
        except Exception as err:  # the core maps its errors to Python exceptions
            raise BenchFailed(f"{name}: the simulator refused or failed: {err}") from err
        walls.append(time.perf_counter() - start)
        cpus.append(time.thread_time() - cpu_start)
        if out is not None and again != out:
            raise BenchFailed(f"{name}: two runs of the same configuration gave different results")
        out = again
    wall = statistics.median(walls)
    results = json.loads(out) if isinstance(out, (str, bytes)) else out
    sim_time_ns = results.get("sim_time_ns")
    extra: dict[str, Any] = {
        "tool": "qoslab",
        "repeat": repeat,
        "wall_runs_s": walls,
        "cpu_s": statistics.median(cpus),
        "cpu_runs_s": cpus,
        "core_build": _core_build(),
    }
    if name == "seed004_download":
        extra["throughput_mbps"] = transfer_throughput_mbps(results)
    elif name in NS3_SCRIPTS:
        extra["throughput_mbps"] = flow_throughput_mbps(results, 1, sim_seconds)
    if isinstance(results.get("atm"), dict):
        cells = sum(sum(per_link) for per_link in results["atm"].get("cells", []))
        extra.update(
            cells=cells,
            cells_per_s=cells / wall if wall > 0 else None,
            throughput_mbps=flow_throughput_mbps(results, 1, sim_seconds),
        )
    return _scenario_record(
        name, results.get("events"), wall, sim_time_ns / NS if sim_time_ns is not None else None, **extra
    )


_MEMORY_CHILD = """
import json, resource, sys, time
from qoslab import _core, bench
simulate = getattr(_core, "simulate", None)
if simulate is None:
    print(json.dumps({"unavailable": "this build of qoslab._core has no simulate()"})); sys.exit(0)
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
config = json.dumps(bench.switch_config(float(sys.argv[1])))
t = time.perf_counter()
results = json.loads(simulate(config, None))
wall = time.perf_counter() - t
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"events": results.get("events"), "sim_time_ns": results.get("sim_time_ns"),
                  "wall_s": wall, "base_rss_kib": base, "peak_rss_kib": peak}))
"""


def run_switch_memory(sim_seconds: float) -> dict[str, Any]:
    """(c) in a child Python: peak RSS of the whole child, and that above the RSS the
    child had with qoslab imported and the configuration not yet built."""
    proc = subprocess.run(
        [sys.executable, "-c", _MEMORY_CHILD, repr(sim_seconds)], capture_output=True, text=True, check=False
    )
    if proc.returncode != 0:
        raise BenchFailed(f"switch_1000_hosts: the child failed: {proc.stderr.strip()[-2000:]}")
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    if "unavailable" in out:
        raise Unavailable(out["unavailable"])
    sim_ns = out.get("sim_time_ns")
    return _scenario_record(
        "switch_1000_hosts",
        out.get("events"),
        out["wall_s"],
        sim_ns / NS if sim_ns is not None else None,
        tool="qoslab",
        peak_rss_mib=out["peak_rss_kib"] / 1024,
        sim_rss_mib=(out["peak_rss_kib"] - out["base_rss_kib"]) / 1024,
    )


def switch_scenario_text(hosts: int = SCENARIO_SWITCH_HOSTS) -> str:
    """``hosts`` hosts on one switch (10.0.0.0/16, host i at 10.0.0.0 + i + 1) as a
    scenario file, with a 3-echo ping from the first host to the last."""
    out = ["[scenario]", f'name = "{hosts} hosts on one switch"', "seed = 1", "", "[node.sw]", 'role = "switch"', ""]
    for i in range(hosts):
        a = (10 << 24) + i + 1
        out += [f"[node.h{i}]", 'role = "host"', f'address = "10.{(a >> 16) & 255}.{(a >> 8) & 255}.{a & 255}/16"', ""]
    for i in range(hosts):
        out += ["[[link]]", 'type = "ethernet"', 'rate = "100 Mbps"', f'ends = ["h{i}", "sw"]', ""]
    out += ["[[test]]", 'method = "ping"', 'from = "h0"', f'to = "h{hosts - 1}"', "count = 3", ""]
    return "\n".join(out)


_SCENARIO_CHILD = """
import json, resource, sys, time
from qoslab import bench
from qoslab.backends import sim
from qoslab.scenario import loads_scenario
text = bench.switch_scenario_text(int(sys.argv[1]))
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
inner = sim.simulate
spent = []
def timed(*args, **kw):
    t = time.perf_counter()
    out = inner(*args, **kw)
    spent.append(time.perf_counter() - t)
    return out
sim.simulate = timed
t0 = time.perf_counter()
scenario = loads_scenario(text)
t1 = time.perf_counter()
_, runs = sim.run_tests(scenario)
t2 = time.perf_counter()
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
(run,) = runs
(record,) = run.records
print(json.dumps({"events": run.results.get("events"), "sim_time_ns": run.results.get("sim_time_ns"),
                  "load_s": t1 - t0, "run_s": t2 - t1, "sim_s": sum(spent),
                  "received": record["metrics"]["received"], "sent": record["metrics"]["sent"],
                  "base_rss_kib": base, "peak_rss_kib": peak}))
"""


def run_switch_scenario(hosts: int = SCENARIO_SWITCH_HOSTS) -> dict[str, Any]:
    """``switch_10000_hosts_scenario`` in a child Python: time and peak RSS of a scenario
    file of ``hosts`` hosts on one switch, from its text to the ping's record."""
    proc = subprocess.run(
        [sys.executable, "-c", _SCENARIO_CHILD, str(hosts)], capture_output=True, text=True, check=False
    )
    if proc.returncode != 0:
        raise BenchFailed(f"switch_10000_hosts_scenario: the child failed: {proc.stderr.strip()[-2000:]}")
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    if out["received"] != out["sent"]:
        raise BenchFailed(f"switch_10000_hosts_scenario: {out['received']} of {out['sent']} echo replies")
    sim_ns = out.get("sim_time_ns")
    return _scenario_record(
        "switch_10000_hosts_scenario",
        out.get("events"),
        out["load_s"] + out["run_s"],
        sim_ns / NS if sim_ns is not None else None,
        tool="qoslab",
        hosts=hosts,
        load_s=out["load_s"],
        run_s=out["run_s"],
        sim_s=out["sim_s"],
        peak_rss_mib=out["peak_rss_kib"] / 1024,
        scenario_rss_mib=(out["peak_rss_kib"] - out["base_rss_kib"]) / 1024,
    )


def source_root() -> Path | None:
    """The source checkout this qoslab runs from (benchmarks/ beside python/), if any."""
    env = os.environ.get("QOSLAB_SOURCE_ROOT")
    root = Path(env) if env else Path(__file__).resolve().parents[2]
    return root if (root / "benchmarks").is_dir() else None


def run_wire() -> list[dict[str, Any]]:
    """crates/wire's benchmark through cargo; each JSON line becomes a scenario with
    ``events`` = frames encoded and decoded, ``sim_time_s`` null (nothing simulated)."""
    root = source_root()
    cargo = shutil.which("cargo")
    if root is None or cargo is None:
        raise Unavailable("the wire benchmark needs a source checkout and cargo on PATH")
    proc = subprocess.run(
        [cargo, "bench", "-q", "-p", "qoslab-benchmarks", "--bench", "wire"],
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        raise BenchFailed(f"wire: cargo bench failed: {proc.stderr.strip()[-2000:]}")
    records = []
    for line in proc.stdout.splitlines():
        line = line.strip()
        if not line.startswith("{"):
            continue
        m = json.loads(line)
        records.append(_scenario_record(m["bench"], m["iterations"], m["wall_s"], None, tool="qoslab", unit="frames"))
    if not records:
        raise BenchFailed("wire: cargo bench printed no JSON line")
    return records


def ns3_python() -> Path | None:
    """The Python with ns-3: $QOSLAB_NS3_PYTHON, else the checkout's .venv-bench."""
    env = os.environ.get("QOSLAB_NS3_PYTHON")
    if env:
        return Path(env)
    root = source_root()
    if root is None:
        return None
    candidate = root / ".venv-bench" / "bin" / "python"
    return candidate if candidate.exists() else None


def run_ns3(name: str, sim_seconds: float, python: Path | None = None) -> dict[str, Any]:
    """Runs benchmarks/ns3/<script> in the bench venv and returns its JSON line."""
    python = python or ns3_python()
    root = source_root()
    if python is None or root is None:
        raise Unavailable(f"no Python with ns-3 found; {NS3_INSTALL_HINT}")
    if not python.exists():
        raise Unavailable(f"{python} does not exist; {NS3_INSTALL_HINT}")
    script = root / "benchmarks" / "ns3" / NS3_SCRIPTS[name]
    proc = subprocess.run(
        [str(python), str(script), "--sim-seconds", repr(sim_seconds)], capture_output=True, text=True, check=False
    )
    if proc.returncode != 0:
        if "No module named 'ns'" in proc.stderr or "ModuleNotFoundError" in proc.stderr:
            raise Unavailable(f"{python} cannot import ns-3; {NS3_INSTALL_HINT}")
        raise BenchFailed(f"{name}: the ns-3 script failed: {proc.stderr.strip()[-2000:]}")
    lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    if not lines:
        raise BenchFailed(f"{name}: the ns-3 script printed no JSON line")
    return json.loads(lines[-1])


def ns3_median(records: list[dict[str, Any]]) -> dict[str, Any]:
    """One record of several runs of an ns-3 script: the first run's figures, with
    ``wall_s`` the median of the runs' ``Simulator.Run()`` times (every one in
    ``wall_runs_s``) and ``runs_identical`` whether they all gave the same events and
    bytes (ns-3 is deterministic for a given ``--seed``)."""
    first = dict(records[0])
    walls = [r["wall_s"] for r in records]
    first["wall_s"] = statistics.median(walls)
    first["wall_runs_s"] = walls
    first["repeat"] = len(records)
    cpus = [r["cpu_s"] for r in records if isinstance(r.get("cpu_s"), (int, float))]
    if len(cpus) == len(records):
        first["cpu_s"] = statistics.median(cpus)
        first["cpu_runs_s"] = cpus
    events = first.get("events")
    first["events_per_s"] = events / first["wall_s"] if events is not None and first["wall_s"] > 0 else None
    first["runs_identical"] = all(
        (r.get("events"), r.get("rx_payload_bytes")) == (records[0].get("events"), records[0].get("rx_payload_bytes"))
        for r in records
    )
    return first


def compare(ours: dict[str, Any], theirs: dict[str, Any]) -> dict[str, Any]:
    """One row of ``comparisons``: speedup = ns-3's Run() time / qoslab's simulate time
    (each the median of its runs)."""
    q_tp, n_tp = ours.get("throughput_mbps"), theirs.get("throughput_mbps")
    return {
        "name": ours["name"],
        "qoslab_wall_s": ours["wall_s"],
        "ns3_wall_s": theirs["wall_s"],
        "speedup": theirs["wall_s"] / ours["wall_s"] if ours["wall_s"] > 0 else None,
        "qoslab_cpu_s": ours.get("cpu_s"),
        "ns3_cpu_s": theirs.get("cpu_s"),
        "cpu_speedup": theirs["cpu_s"] / ours["cpu_s"] if ours.get("cpu_s") and theirs.get("cpu_s") else None,
        "qoslab_throughput_mbps": q_tp,
        "ns3_throughput_mbps": n_tp,
        "throughput_diff_pct": 100 * (q_tp - n_tp) / n_tp if q_tp is not None and n_tp else None,
        "qoslab_events": ours.get("events"),
        "ns3_events": theirs.get("events"),
    }


@dataclass
class BenchReport:
    scenarios: list[dict[str, Any]]
    comparisons: list[dict[str, Any]] | None
    ns3: list[dict[str, Any]]
    skipped: list[dict[str, str]]
    failed: list[dict[str, str]]

    def to_json(self) -> dict[str, Any]:
        record: dict[str, Any] = {"scenarios": self.scenarios}
        if self.comparisons is not None:
            record["comparisons"] = self.comparisons
            record["ns3"] = self.ns3
        record["skipped"] = self.skipped
        record["failed"] = self.failed
        return record


def select(only: Iterable[str] | None) -> list[str]:
    """The benchmarks to run, in their usual order; ``only`` names some of them."""
    if not only:
        return list(ALL_BENCHMARKS)
    wanted = []
    for item in only:
        for name in item.split(","):
            name = name.strip()
            if name not in ALL_BENCHMARKS:
                raise InputError(
                    "--only",
                    [
                        Problem(
                            "no such benchmark",
                            expected=", ".join(ALL_BENCHMARKS),
                            found=repr(name),
                            hint=did_you_mean(name, ALL_BENCHMARKS),
                        )
                    ],
                )
            wanted.append(name)
    return [b for b in ALL_BENCHMARKS if b in wanted]


def run(
    names: list[str],
    sim_seconds: float = DEFAULT_SIM_SECONDS,
    with_ns3: bool = False,
    simulate: Callable[[str, Any], str] | None = None,
    ns3_runner: Callable[[str, float], dict[str, Any]] | None = None,
    log: Callable[[str], None] = lambda _msg: None,
    repeat: int = DEFAULT_REPEAT,
) -> BenchReport:
    """Runs ``names`` (see :func:`select`) and gathers the record.

    Each tool's timed run is repeated ``repeat`` times and the median kept (qoslab's
    simulate call in this process, ns-3's script in a new process each time); the
    memory benchmark and ``wire`` (which keeps its fastest batch) run once.
    ``simulate`` and ``ns3_runner`` replace ``_core.simulate`` and :func:`run_ns3` (tests).
    A benchmark that cannot run here goes to ``skipped`` with the reason; one that ran
    and failed goes to ``failed``.
    """
    if not sim_seconds > 0:
        raise InputError(
            "--sim-seconds",
            [Problem("simulated time must be positive", expected="seconds > 0", found=repr(sim_seconds))],
        )
    if repeat < 1:
        raise InputError(
            "--repeat", [Problem("each benchmark must run at least once", expected="a count >= 1", found=repr(repeat))]
        )
    ns3_runner = ns3_runner or run_ns3
    report = BenchReport([], [] if with_ns3 else None, [], [], [])
    for name in names:
        log(f"running {name} ...")
        ours: dict[str, Any] | None = None
        try:
            if name == "wire":
                report.scenarios.extend(run_wire())
            elif name == "switch_1000_hosts":
                report.scenarios.append(run_switch_memory(sim_seconds))
            elif name == "switch_10000_hosts_scenario":
                report.scenarios.append(run_switch_scenario())
            else:
                ours = run_sim(name, sim_seconds, simulate, repeat)
                report.scenarios.append(ours)
        except Unavailable as why:
            report.skipped.append({"name": name, "reason": str(why)})
        except BenchFailed as err:
            report.failed.append({"name": name, "reason": str(err)})
        # ns-3 runs even when qoslab's side could not: its figures stand on their own.
        if with_ns3 and name in NS3_SCRIPTS:
            log(f"running {name} in ns-3 ({repeat} run{'s' if repeat > 1 else ''}) ...")
            try:
                theirs = ns3_median([ns3_runner(name, sim_seconds) for _ in range(repeat)])
            except Unavailable as why:
                report.skipped.append({"name": f"{name} (ns-3)", "reason": str(why)})
                continue
            except BenchFailed as err:
                report.failed.append({"name": f"{name} (ns-3)", "reason": str(err)})
                continue
            report.ns3.append(theirs)
            if ours is not None:
                assert report.comparisons is not None
                report.comparisons.append(compare(ours, theirs))
    return report


# ---------------------------------------------------------------------------------------
# Human output (stderr)
# ---------------------------------------------------------------------------------------


def _fmt(value: Any, spec: str) -> str:
    return "—" if value is None else format(value, spec)


def _spread(record: dict[str, Any]) -> str:
    """The fastest and slowest of a record's timed runs, s."""
    runs = record.get("wall_runs_s") or []
    return f"{min(runs):.3f}–{max(runs):.3f}" if len(runs) > 1 else "—"


def render(report: BenchReport, console: Any) -> None:
    """Tables of the scenarios and the ns-3 comparisons on ``console`` (rich)."""
    from rich.table import Table
    from rich.text import Text

    if report.scenarios:
        runs = {s.get("repeat") for s in report.scenarios if s.get("repeat")}
        builds = {s["core_build"] for s in report.scenarios if s.get("core_build")}
        title = "qoslab" + (f" (simulate call, median of {runs.pop()} runs)" if len(runs) == 1 else "")
        title += f", {builds.pop()} build of the core" if len(builds) == 1 else ""
        table = Table(title=title, title_justify="left")
        for col in ("benchmark", "events", "wall s", "runs s", "events/s", "sim s", "Mb/s", "peak RSS MiB"):
            table.add_column(col, justify="left" if col == "benchmark" else "right")
        for s in report.scenarios:
            table.add_row(
                s["name"],
                _fmt(s.get("events"), ","),
                _fmt(s.get("wall_s"), ".3f"),
                _spread(s),
                _fmt(s.get("events_per_s"), ",.0f"),
                _fmt(s.get("sim_time_s"), "g"),
                _fmt(s.get("throughput_mbps"), ".3f"),
                _fmt(s.get("peak_rss_mib"), ".1f"),
            )
        console.print(table)
    if report.ns3:
        runs = {s.get("repeat") for s in report.ns3 if s.get("repeat")}
        median = f", median of {runs.pop()} runs" if len(runs) == 1 else ""
        table = Table(title=f"ns-3 (Simulator.Run() only{median})", title_justify="left")
        for col in ("benchmark", "events", "wall s", "runs s", "events/s", "sim s", "Mb/s"):
            table.add_column(col, justify="left" if col == "benchmark" else "right")
        for s in report.ns3:
            table.add_row(
                s["name"],
                _fmt(s.get("events"), ","),
                _fmt(s.get("wall_s"), ".3f"),
                _spread(s),
                _fmt(s.get("events_per_s"), ",.0f"),
                _fmt(s.get("sim_time_s"), "g"),
                _fmt(s.get("throughput_mbps"), ".3f"),
            )
        console.print(table)
    if report.comparisons:
        table = Table(title="qoslab vs ns-3, same run (speed-up = ratio of the medians)", title_justify="left")
        for col in ("benchmark", "speed-up", "CPU-time speed-up", "qoslab Mb/s", "ns-3 Mb/s", "Δ throughput"):
            table.add_column(col, justify="left" if col == "benchmark" else "right")
        for c in report.comparisons:
            cpu = c.get("cpu_speedup")
            table.add_row(
                c["name"],
                _fmt(c["speedup"], ".1f") + "×",
                "—" if cpu is None else f"{cpu:.1f}×",
                _fmt(c["qoslab_throughput_mbps"], ".3f"),
                _fmt(c["ns3_throughput_mbps"], ".3f"),
                _fmt(c["throughput_diff_pct"], "+.2f") + " %",
            )
        console.print(table)
    for s in report.skipped:
        console.print(Text(f"skipped {s['name']}: {s['reason']}", style="yellow"))
    for f in report.failed:
        console.print(Text(f"failed {f['name']}: {f['reason']}", style="red"))
