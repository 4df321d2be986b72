"""The networks ``qoslab bench`` times, built as the core's configuration directly (the
plan's models, python/qoslab/plan/models.py: a SimConfig, crates/sim/src/config.rs), so
that a benchmark times the simulation alone; the ns-3 scripts in benchmarks/ns3/ build
the same networks (benchmarks/README.md lists the parameters side by side). :mod:`qoslab.bench` runs them and reports."""

from __future__ import annotations

from collections.abc import Callable
from ipaddress import IPv4Address
from typing import TYPE_CHECKING

from pydantic import TypeAdapter

from qoslab.lower.lowered import _encode
from qoslab.plan import PLAN_SCHEMA, Flow
from qoslab.plan import models as plan

if TYPE_CHECKING:
    from qoslab.plan.results_models import Results

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
# SimConfig builders (crates/sim/src/config.rs): the plan's models, written as the core
# reads them by config_json
# ---------------------------------------------------------------------------------------


def _ns(seconds: float) -> int:
    return round(seconds * NS)


def config_json(config: plan.SimConfig) -> str:
    """The plan's JSON text as ``_core.simulate`` takes it (the lowering's encoder: the
    nodes and links whole, the other fields as set)."""
    return _encode(config)


_MACS: TypeAdapter[list[plan.MacItem]] = TypeAdapter(list[plan.MacItem])
_PORT_INDICES: TypeAdapter[list[plan.Port]] = TypeAdapter(list[plan.Port])


def _cpu_free() -> plan.CpuConfig:
    """A node that forwards at no CPU cost: the benchmarks time the network models."""
    return plan.CpuConfig(
        profile="none",
        hz=0,
        queue_limit=1000,
        cycles=plan.CpuCycles(
            per_rx_packet=0,
            per_tx_packet=0,
            per_byte_copied=0.0,
            per_bridge_lookup=0,
            per_route_lookup=0,
            per_nat_translation=0,
            per_byte_rc4=0.0,
            per_byte_aes=0.0,
        ),
    )


def _mac(node: int, port: int) -> list[int]:
    """A locally administered unicast MAC, unique per (node, port)."""
    return [0x02, 0x00, (node >> 8) & 0xFF, node & 0xFF, (port >> 8) & 0xFF, port & 0xFF]


#: A bridge interface's own MAC: second byte 1, apart from every port's.
BRIDGE_MAC = [0x02, 0x01, 0x00, 0x00, 0x00, 0x00]


def _port(
    name: str, node: int, index: int, address: str | None, prefix: int = 24, *, mtu: int = 1500, **extra: bool
) -> plan.PortConfig:
    return plan.PortConfig(
        name=name,
        mac=_MACS.validate_python(_mac(node, index)),
        mtu=mtu,
        address=None if address is None else (IPv4Address(address), plan.AddressItem(prefix)),
        **extra,
    )


def _node(
    name: str,
    role: str,
    ports: list[plan.PortConfig],
    *,
    ip_forward: bool = False,
    routes: list[plan.RouteConfig] | None = None,
    bridge: plan.BridgeConfig | None = None,
) -> plan.NodeConfig:
    return plan.NodeConfig(
        name=name,
        role=plan.NodeRole(role),
        ports=ports,
        cpu=_cpu_free(),
        arp_timeout_ns=ARP_TIMEOUT_NS,
        reassembly_timeout_ns=REASSEMBLY_TIMEOUT_NS,
        ip_forward=ip_forward,
        routes=routes or [],
        bridge=bridge,
    )


def _end(node: int, port: int) -> plan.PortRef:
    return plan.PortRef(node=node, port=port)


def _udp_flow(flow_id: int, src: int, dst: str, sim_seconds: float) -> plan.UdpFlow:
    """A saturating UDP flow: ``rate_pps`` 0 keeps the sender's queue non-empty."""
    return plan.UdpFlow(
        kind="udp",
        id=flow_id,
        from_=src,
        to=IPv4Address(dst),
        dst_port=UDP_PORT,
        payload=UDP_PAYLOAD,
        rate_pps=0.0,
        start_ns=_ns(WARMUP_S),
        stop_ns=_ns(WARMUP_S + sim_seconds),
    )


def _sim_config(
    nodes: list[plan.NodeConfig],
    links: list[plan.EthernetLink | plan.WifiLink | plan.AtmLink],
    flows: list[Flow],
    sim_seconds: float,
    seed: int = 1,
    atm: plan.AtmConfig | None = None,
) -> plan.SimConfig:
    config = plan.SimConfig(
        schema_=PLAN_SCHEMA,
        seed=seed,
        duration_ns=_ns(WARMUP_S + sim_seconds),
        nodes=nodes,
        links=[plan.LinkConfig(link) for link in links],
        flows=[plan.FlowConfig(flow) for flow in flows],
        capture=False,
    )
    if atm is not None:
        config.atm = atm
    return config


def wifi_saturation_config(sim_seconds: float = DEFAULT_SIM_SECONDS) -> plan.SimConfig:
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
    bss = plan.WifiLink(
        type="wifi",
        name="bss",
        standard=plan.WifiStandard("802.11b"),
        rate_bps=11_000_000,
        preamble=plan.Preamble("long"),
        security=plan.WifiSecurity("open"),
        ap=_end(0, 0),
        stations=[_end(1, 0)],
        rts_threshold=2347,
        wds=False,
        foreign_source=plan.ForeignSource("drop"),
        queue_frames=QUEUE_FRAMES,
    )
    flows: list[Flow] = [_udp_flow(1, 1, "10.1.0.1", sim_seconds)]
    return _sim_config(nodes, [bss], flows, sim_seconds)


def _ethernet_link(
    name: str,
    a: tuple[int, int],
    b: tuple[int, int],
    rate_bps: int = ETHERNET_RATE_BPS,
    delay_ns: int = ETHERNET_DELAY_NS,
    impair: list[plan.Impairment] | None = None,
) -> plan.EthernetLink:
    link = plan.EthernetLink(
        type="ethernet",
        name=name,
        a=_end(*a),
        b=_end(*b),
        rate_bps=rate_bps,
        delay_ns=delay_ns,
        queue_frames=QUEUE_FRAMES,
        queue_bytes=QUEUE_FRAMES * 1518,
    )
    if impair is not None:
        link.impair = impair  # set only when given, as the plan's JSON then carries it
    return link


def ethernet_chain_config(sim_seconds: float = DEFAULT_SIM_SECONDS, n: int = CHAIN_NODES) -> plan.SimConfig:
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
        ports: list[plan.PortConfig] = []
        if k > 0:
            ports.append(_port(f"eth{len(ports)}", k, len(ports), f"10.0.{k - 1}.2"))
        if k < n - 1:
            ports.append(_port(f"eth{len(ports)}", k, len(ports), f"10.0.{k}.1"))
        routes = []
        for subnet in range(n - 1):
            if subnet in (k - 1, k):
                continue  # connected
            via = f"10.0.{k - 1}.1" if subnet < k - 1 else f"10.0.{k}.2"
            routes.append(
                plan.RouteConfig(destination=IPv4Address(f"10.0.{subnet}.0"), prefix_len=24, via=IPv4Address(via))
            )
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
    links: list[plan.EthernetLink | plan.WifiLink | plan.AtmLink] = [
        _ethernet_link(f"l{i}", (i, 0 if i == 0 else 1), (i + 1, 0)) for i in range(n - 1)
    ]
    flows: list[Flow] = [_udp_flow(1, 0, f"10.0.{n - 2}.2", sim_seconds)]
    return _sim_config(nodes, links, flows, sim_seconds)


def switch_config(sim_seconds: float, hosts: int = SWITCH_HOSTS) -> plan.SimConfig:
    """(c) ``hosts`` hosts on one 802.1D learning switch (a bridge of ``hosts`` ports),
    each pinging the next host once a second: the figure is peak memory."""
    switch_ports = [_port(f"p{i}", 0, i, None) for i in range(hosts)]
    bridge = plan.BridgeConfig(
        ports=_PORT_INDICES.validate_python(list(range(hosts))),
        mode=plan.BridgeMode("l2"),
        mac=_MACS.validate_python(BRIDGE_MAC),
        aging_ns=300 * NS,
    )
    switch = _node("sw", "switch", switch_ports, bridge=bridge)

    # 10.2.0.0/16: host i is 10.2.(i+1 >> 8).(i+1 & 255).
    def addr(i: int) -> str:
        return f"10.2.{(i + 1) >> 8}.{(i + 1) & 0xFF}"

    nodes = [switch] + [_node(f"h{i}", "host", [_port("eth0", i + 1, 0, addr(i), 16)]) for i in range(hosts)]
    links: list[plan.EthernetLink | plan.WifiLink | plan.AtmLink] = [
        _ethernet_link(f"l{i}", (0, i), (i + 1, 0)) for i in range(hosts)
    ]
    count = max(1, int(sim_seconds))
    flows: list[Flow] = [
        plan.PingFlow(
            kind="ping",
            id=i + 1,
            from_=i + 1,
            to=IPv4Address(addr((i + 1) % hosts)),
            count=count,
            interval_ns=NS,
            payload=56,
            start_ns=_ns(WARMUP_S) + i * 1000,
        )
        for i in range(hosts)
    ]
    return _sim_config(nodes, links, flows, sim_seconds)


#: CLIP's default MTU (RFC 2225 §5) and a 64-KiB window: seed 001's best case.
ATM_MTU = 9180
ATM_WINDOW = 65536


def atm_clip_config(sim_seconds: float = DEFAULT_SIM_SECONDS) -> plan.SimConfig:
    """(f) TCP over CLIP: host — ATM switch — host on OC-3 (149.76 Mb/s of cells), one
    LLC/SNAP PVC (0/100) cross-connected in the switch, MTU 9180, a NewReno bulk transfer
    with 64 KiB buffers and no CPU cost. OC-3 carries 353,208 cells/s: 10 s is about 3.5
    million cells each way across the switch (and the ACKs' cells back)."""

    def port(name: str, node: int, index: int, address: str | None) -> plan.PortConfig:
        return _port(name, node, index, address, mtu=ATM_MTU, point_to_point=True)

    switch = _node("sw", "atm-switch", [port("atm0", 2, 0, None), port("atm1", 2, 1, None)])
    nodes = [
        _node("ws1", "host", [port("atm0", 0, 0, "10.3.0.1")]),
        _node("ws2", "host", [port("atm0", 1, 0, "10.3.0.2")]),
        switch,
    ]

    def link(name: str, a: tuple[int, int], b: tuple[int, int]) -> plan.AtmLink:
        return plan.AtmLink(
            type="atm",
            name=name,
            a=_end(*a),
            b=_end(*b),
            phy=plan.AtmPhy("oc3"),
            encapsulation=plan.AtmEncapsulation("llc-snap"),
            pvcs=[plan.PvcConfig(vpi=0, vci=100)],
        )

    links: list[plan.EthernetLink | plan.WifiLink | plan.AtmLink] = [
        link("l1", (0, 0), (2, 0)),
        link("l2", (2, 1), (1, 0)),
    ]
    flows: list[Flow] = [
        plan.TcpFlow(
            kind="tcp",
            id=1,
            from_=0,
            to=IPv4Address("10.3.0.2"),
            dst_port=UDP_PORT,
            start_ns=_ns(WARMUP_S),
            stop_ns=_ns(WARMUP_S + sim_seconds),
            tcp=plan.TcpOptions(
                congestion=plan.CongestionControl("newreno"),
                send_buffer=ATM_WINDOW,
                recv_buffer=ATM_WINDOW,
                max_window=ATM_WINDOW,
            ),
        )
    ]
    cross_connect = plan.CrossConnect(a=plan.VcEnd(port=0, vpi=0, vci=100), b=plan.VcEnd(port=1, vpi=0, vci=100))
    atm = plan.AtmConfig(switches=[plan.SwitchConfig(node=2, cross_connects=[cross_connect])])
    return _sim_config(nodes, links, flows, sim_seconds, atm=atm)


def seed004_download_config(sim_seconds: float = DEFAULT_SIM_SECONDS) -> plan.SimConfig:
    """examples/seed004_asymmetric.toml at its 57.6 kb/s point, lowered with its test
    (a sized transfer: it runs to its end, whatever ``sim_seconds`` says)."""
    from qoslab.backends.sim import lower
    from qoslab.data.examples import path as example
    from qoslab.scenario import load_scenario
    from qoslab.sweep import sweep_points

    points = sweep_points(load_scenario(example("seed004_asymmetric.toml")))
    (point,) = [p for p in points if p.values.get("link[2].rate") == SEED004_ACK_RATE]
    return lower(point.scenario, test_index=0)


def transfer_throughput_mbps(results: Results) -> float | None:
    """Bytes of the sized TCP transfer × 8 over the time from its start to its last byte."""
    from qoslab.methods.tcp import START_NS

    for flow in results.flows:
        done = flow.tcp.completed_ns if flow.tcp else None
        if done:
            return float(flow.bytes_received * 8 / ((done - START_NS) / NS) / 1e6)
    return None


def tcp_cubic_config(sim_seconds: float = DEFAULT_SIM_SECONDS) -> plan.SimConfig:
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
    lossy = plan.Impairment(loss=plan.LossConfig(plan.BernoulliLoss(model="bernoulli", p=TCP_LOSS)))
    link = _ethernet_link(
        "l0", (0, 0), (1, 0), rate_bps=TCP_RATE_BPS, delay_ns=TCP_DELAY_NS, impair=[lossy, plan.Impairment()]
    )
    flows: list[Flow] = [
        plan.TcpFlow(
            kind="tcp",
            id=1,
            from_=0,
            to=IPv4Address("10.3.0.2"),
            dst_port=5201,
            start_ns=_ns(WARMUP_S),
            stop_ns=_ns(WARMUP_S + sim_seconds),
            tcp=plan.TcpOptions(rack=False, tlp=False),
        )
    ]
    return _sim_config(nodes, [link], flows, sim_seconds)


CONFIG_BUILDERS: dict[str, Callable[[float], plan.SimConfig]] = {
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
