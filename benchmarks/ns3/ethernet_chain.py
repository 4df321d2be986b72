"""Benchmark (b) in ns-3: a chain of 10 hosts and routers on 100 Mb/s Ethernet.

The same scenario as qoslab's ``ethernet_chain_10`` (python/qoslab/bench.py,
``ethernet_chain_config``); benchmarks/README.md lists every parameter side by side.

- host0 — r1 — r2 — … — r8 — host9: nine links, link i joining node i (10.0.i.1/24)
  and node i+1 (10.0.i.2/24); routes from ``Ipv4GlobalRoutingHelper`` (the same
  shortest paths as qoslab's static routes). Routers forward at no CPU cost.
- Each link is an ns-3 CSMA channel with two devices: 100 Mb/s, 500 ns delay, Ethernet
  II framing (14-byte header + 4-byte FCS; ns-3 CSMA adds both). ns-3 sends no
  preamble and no interframe gap by default; the device's interframe gap is set to
  1.6 µs = (8-byte preamble/SFD + 12-byte IFG) × 80 ns, so that a 1500-byte packet
  occupies the wire 123.04 µs, as on real 100BASE-TX. ns-3's CSMA channel is half
  duplex; the traffic is one-way, so nothing contends after the initial ARP.
- Queues: each device a 100-frame drop-tail queue; ns-3's traffic-control queue disc
  is removed.
- Traffic: UDP, 1472-byte payload (1500-byte IP packets), an OnOff source always on
  at ``--offered-mbps`` (100 Mb/s of payload, about 4.5 % above the 95.7 Mb/s the
  link carries) from ``--warmup`` (0.25 s) to the end; the excess is dropped at
  host0's queue. Sink on host9.
- Throughput: bytes the PacketSink received (UDP payload) × 8 / ``--sim-seconds``.

Only ``Simulator.Run()`` is timed; ``events`` is ``Simulator::GetEventCount()``.
Run with the benchmark venv: ``.venv-bench/bin/python benchmarks/ns3/ethernet_chain.py``
It prints one JSON line on stdout.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

UDP_PAYLOAD = 1472
PORT = 5001
QUEUE_FRAMES = 100


def _ns3_version() -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("ns3")
    except PackageNotFoundError:
        return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sim-seconds", type=float, default=60.0, help="simulated seconds of traffic (default 60)")
    parser.add_argument("--warmup", type=float, default=0.25, help="seconds before the flow starts")
    parser.add_argument("--offered-mbps", type=float, default=100.0, help="UDP payload offered by the source, Mb/s")
    parser.add_argument("--nodes", type=int, default=10, help="hosts and routers in the chain (default 10)")
    parser.add_argument("--ifg-ns", type=int, default=1600, help="interframe gap + preamble time, ns (default 1600)")
    parser.add_argument("--seed", type=int, default=1, help="ns-3 RngRun")
    args = parser.parse_args(argv)
    if args.sim_seconds <= 0:
        parser.error("--sim-seconds must be positive")
    if args.nodes < 2:
        parser.error("--nodes must be 2 or more")

    from ns import ns  # slow (cppyy loads the headers): after argument checks

    ns.RngSeedManager.SetSeed(1)
    ns.RngSeedManager.SetRun(args.seed)

    nodes = ns.NodeContainer()
    nodes.Create(args.nodes)
    ns.InternetStackHelper().Install(nodes)

    csma = ns.CsmaHelper()
    csma.SetChannelAttribute("DataRate", ns.StringValue("100Mbps"))
    csma.SetChannelAttribute("Delay", ns.TimeValue(ns.NanoSeconds(500)))
    csma.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", ns.StringValue(f"{QUEUE_FRAMES}p"))

    addresses = ns.Ipv4AddressHelper()
    last = None
    for i in range(args.nodes - 1):
        pair = ns.NodeContainer()
        pair.Add(nodes.Get(i))
        pair.Add(nodes.Get(i + 1))
        devices = csma.Install(pair)
        for d in range(devices.GetN()):
            ns.DynamicCast["ns3::CsmaNetDevice"](devices.Get(d)).SetInterframeGap(ns.NanoSeconds(args.ifg_ns))
        addresses.SetBase(ns.Ipv4Address(f"10.0.{i}.0"), ns.Ipv4Mask("255.255.255.0"))
        last = addresses.Assign(devices)  # node i .1, node i+1 .2
        ns.TrafficControlHelper().Uninstall(devices)
    ns.Ipv4GlobalRoutingHelper.PopulateRoutingTables()

    sink_helper = ns.PacketSinkHelper(
        "ns3::UdpSocketFactory", ns.InetSocketAddress(ns.Ipv4Address.GetAny(), PORT).ConvertTo()
    )
    sink_apps = sink_helper.Install(nodes.Get(args.nodes - 1))
    sink_apps.Start(ns.Seconds(0.0))

    source = ns.OnOffHelper("ns3::UdpSocketFactory", ns.InetSocketAddress(last.GetAddress(1), PORT).ConvertTo())
    source.SetConstantRate(ns.DataRate(f"{args.offered_mbps}Mbps"), UDP_PAYLOAD)
    source_apps = source.Install(nodes.Get(0))
    source_apps.Start(ns.Seconds(args.warmup))
    end = args.warmup + args.sim_seconds
    source_apps.Stop(ns.Seconds(end))

    ns.Simulator.Stop(ns.Seconds(end))
    start, cpu_start = time.perf_counter(), time.thread_time()
    ns.Simulator.Run()
    wall = time.perf_counter() - start
    cpu = time.thread_time() - cpu_start  # this thread's CPU time: steadier on a busy machine
    events = int(ns.Simulator.GetEventCount())
    sim_time = ns.Simulator.Now().GetSeconds()  # warm-up + traffic, as qoslab's sim_time_ns

    rx_bytes = int(ns.DynamicCast["ns3::PacketSink"](sink_apps.Get(0)).GetTotalRx())
    record = {
        "name": "ethernet_chain_10" if args.nodes == 10 else f"ethernet_chain_{args.nodes}",
        "tool": "ns3",
        "ns3_version": _ns3_version(),
        "sim_time_s": sim_time,
        "traffic_s": args.sim_seconds,
        "wall_s": wall,
        "cpu_s": cpu,
        "throughput_mbps": rx_bytes * 8 / args.sim_seconds / 1e6,
        "events": events,
        "events_per_s": events / wall if wall > 0 else None,
        "rx_payload_bytes": rx_bytes,
    }
    ns.Simulator.Destroy()
    sys.stdout.write(json.dumps(record) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
