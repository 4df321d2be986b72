"""Benchmark seed004_download in ns-3: seed 004's 10 MB download, 2 Mb/s 802.11 downlink,
ACKs over a 57.6 kb/s serial line.

The same chain as examples/seed004_asymmetric.toml at its 57.6 kb/s point
(python/qoslab/bench.py, ``seed004_download_config``):

- left —(10 Mb/s CSMA)— r1 —(802.11 DSSS 2 Mb/s, ad hoc, long preamble)— r2 —(10 Mb/s
  CSMA)— right, and r2 → r1 over a point-to-point line. Static routes make the path
  asymmetric: r1 reaches right over the radio, r2 reaches left over the line.
- **The line.** ns-3 has no SLIP or asynchronous serial device. Its PointToPoint device
  frames a packet with a 2-byte PPP protocol field, the same 2 octets SLIP's two ENDs
  add to a 40-byte ACK, and sends 8 bits per octet; an 8N1 line sends 10. So the line
  runs at 57 600 × 8 / 10 = 46 080 b/s: each 42-octet ACK then takes the 7.29 ms it
  takes on qoslab's SLIP line. (SLIP's escapes are not modelled by ns-3; the example's
  addresses need none.) 10-frame drop-tail queue, as Linux slip.c.
- **TCP** as the example's ``stack = "netbsd-1.1"``: NewReno, 1460-byte segments, a fixed
  16 KiB window (send and receive buffers 16384, no window scaling), no SACK, no
  timestamps (40-byte ACKs), delayed ACK every 2 segments or 200 ms, minimum RTO 1 s,
  initial window 1 segment. ttcp writes 8192 bytes at a time (BulkSend SendSize).
- The transfer starts at 0.1 s (qoslab's ``tcp.transfer`` START). ``Simulator.Run()`` is
  run in 10-ms slices until the sink has every byte; only the slices are timed.
  Throughput = 10 MB × 8 / (completion − 0.1 s), as qoslab's ``tcp.transfer``.

Run with the benchmark venv: ``.venv-bench/bin/python benchmarks/ns3/seed004_download.py``.
It prints one JSON line on stdout.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

PORT = 5201
START_S = 0.1
SLICE_S = 0.01
"""Run() slices, s: the completion time is known to this; see the README for what slicing costs."""


def _ns3_version() -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("ns3")
    except PackageNotFoundError:
        return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--sim-seconds",
        type=float,
        default=60.0,
        help="ignored: the transfer runs to its end (kept for `qoslab bench`)",
    )
    parser.add_argument("--bytes", type=int, default=10_000_000, help="bytes to transfer (default 10 MB)")
    parser.add_argument(
        "--ack-rate", type=int, default=57_600, help="the serial line's rate in b/s, 8N1 (default 57600)"
    )
    parser.add_argument("--seed", type=int, default=1, help="ns-3 RngRun")
    parser.add_argument(
        "--slice", type=float, default=SLICE_S, help="seconds of simulated time per Run() call (default 0.01)"
    )
    args = parser.parse_args(argv)

    from ns import ns  # slow (cppyy loads the headers): after argument checks

    ns.RngSeedManager.SetSeed(1)
    ns.RngSeedManager.SetRun(args.seed)
    d = ns.Config.SetDefault
    d("ns3::TcpL4Protocol::SocketType", ns.StringValue("ns3::TcpNewReno"))
    d("ns3::TcpSocket::SegmentSize", ns.UintegerValue(1460))
    d("ns3::TcpSocket::SndBufSize", ns.UintegerValue(16384))
    d("ns3::TcpSocket::RcvBufSize", ns.UintegerValue(16384))
    d("ns3::TcpSocket::InitialCwnd", ns.UintegerValue(1))
    d("ns3::TcpSocket::DelAckTimeout", ns.TimeValue(ns.MilliSeconds(200)))
    d("ns3::TcpSocket::DelAckCount", ns.UintegerValue(2))
    d("ns3::TcpSocketBase::Sack", ns.BooleanValue(False))
    d("ns3::TcpSocketBase::Timestamp", ns.BooleanValue(False))
    d("ns3::TcpSocketBase::WindowScaling", ns.BooleanValue(False))
    d("ns3::TcpSocketBase::MinRto", ns.TimeValue(ns.Seconds(1.0)))

    nodes = ns.NodeContainer()
    nodes.Create(4)
    left, r1, r2, right = (nodes.Get(i) for i in range(4))
    ns.InternetStackHelper().Install(nodes)

    def pair(a, b):
        c = ns.NodeContainer()
        c.Add(a)
        c.Add(b)
        return c

    csma = ns.CsmaHelper()
    csma.SetChannelAttribute("DataRate", ns.StringValue("10Mbps"))
    csma.SetChannelAttribute("Delay", ns.TimeValue(ns.NanoSeconds(0)))
    lan_left = csma.Install(pair(left, r1))
    lan_right = csma.Install(pair(r2, right))

    channel = ns.YansWifiChannelHelper.Default()
    phy = ns.YansWifiPhyHelper()
    phy.SetChannel(channel.Create())
    phy.Set("ShortPlcpPreambleSupported", ns.BooleanValue(False))
    wifi = ns.WifiHelper()
    wifi.SetStandard(ns.WIFI_STANDARD_80211b)
    wifi.SetRemoteStationManager(
        "ns3::ConstantRateWifiManager",
        "DataMode",
        ns.StringValue("DsssRate2Mbps"),
        "ControlMode",
        ns.StringValue("DsssRate1Mbps"),
    )
    mac = ns.WifiMacHelper()
    mac.SetType("ns3::AdhocWifiMac")
    radio = wifi.Install(phy, mac, pair(r1, r2))
    mobility = ns.MobilityHelper()
    positions = ns.ListPositionAllocator()
    positions.Add(ns.Vector(0.0, 0.0, 0.0))
    positions.Add(ns.Vector(5.0, 0.0, 0.0))
    mobility.SetPositionAllocator(positions)
    mobility.SetMobilityModel("ns3::ConstantPositionMobilityModel")
    mobility.Install(pair(r1, r2))

    p2p = ns.PointToPointHelper()
    p2p.SetDeviceAttribute("DataRate", ns.StringValue(f"{args.ack_rate * 8 // 10}bps"))
    p2p.SetChannelAttribute("Delay", ns.TimeValue(ns.NanoSeconds(0)))
    p2p.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", ns.StringValue("10p"))
    line = p2p.Install(pair(r2, r1))

    addresses = ns.Ipv4AddressHelper()
    interfaces = {}
    for name, devices, base in (
        ("left", lan_left, "10.0.0.0"),
        ("radio", radio, "10.0.1.0"),
        ("line", line, "10.0.2.0"),
        ("right", lan_right, "10.0.3.0"),
    ):
        addresses.SetBase(ns.Ipv4Address(base), ns.Ipv4Mask("255.255.255.0"))
        interfaces[name] = addresses.Assign(devices)
    for devices in (lan_left, radio, line, lan_right):
        ns.TrafficControlHelper().Uninstall(devices)

    mask = ns.Ipv4Mask("255.255.255.0")
    static = ns.Ipv4StaticRoutingHelper()

    def routing(node):
        return static.GetStaticRouting(node.GetObject[ns.Ipv4]())

    def iface(node, device):
        return node.GetObject[ns.Ipv4]().GetInterfaceForDevice(device)

    routing(left).SetDefaultRoute(ns.Ipv4Address("10.0.0.2"), iface(left, lan_left.Get(0)))
    routing(right).SetDefaultRoute(ns.Ipv4Address("10.0.3.1"), iface(right, lan_right.Get(1)))
    # Download over the radio; ACKs over the line.
    routing(r1).AddNetworkRouteTo(ns.Ipv4Address("10.0.3.0"), mask, ns.Ipv4Address("10.0.1.2"), iface(r1, radio.Get(0)))
    routing(r2).AddNetworkRouteTo(ns.Ipv4Address("10.0.0.0"), mask, ns.Ipv4Address("10.0.2.2"), iface(r2, line.Get(0)))

    sink_apps = ns.PacketSinkHelper(
        "ns3::TcpSocketFactory", ns.InetSocketAddress(ns.Ipv4Address.GetAny(), PORT).ConvertTo()
    ).Install(right)
    sink_apps.Start(ns.Seconds(0.0))
    sender = ns.BulkSendHelper(
        "ns3::TcpSocketFactory", ns.InetSocketAddress(interfaces["right"].GetAddress(1), PORT).ConvertTo()
    )
    sender.SetAttribute("MaxBytes", ns.UintegerValue(args.bytes))
    sender.SetAttribute("SendSize", ns.UintegerValue(8192))
    sender.Install(left).Start(ns.Seconds(START_S))
    sink = ns.DynamicCast["ns3::PacketSink"](sink_apps.Get(0))

    wall = cpu = 0.0
    t = 0.0
    limit = 3600.0
    while int(sink.GetTotalRx()) < args.bytes and t < limit:
        t += args.slice
        ns.Simulator.Stop(ns.Seconds(t) - ns.Simulator.Now())
        start, cpu_start = time.perf_counter(), time.thread_time()
        ns.Simulator.Run()
        wall += time.perf_counter() - start
        cpu += time.thread_time() - cpu_start
    events = int(ns.Simulator.GetEventCount())
    done = int(sink.GetTotalRx()) >= args.bytes
    record = {
        "name": "seed004_download",
        "tool": "ns3",
        "ns3_version": _ns3_version(),
        "sim_time_s": ns.Simulator.Now().GetSeconds(),
        "wall_s": wall,
        "cpu_s": cpu,
        "completed": done,
        "transfer_time_s": (t - START_S) if done else None,
        "throughput_mbps": args.bytes * 8 / (t - START_S) / 1e6 if done else None,
        "events": events,
        "events_per_s": events / wall if wall > 0 else None,
        "rx_payload_bytes": int(sink.GetTotalRx()),
    }
    ns.Simulator.Destroy()
    sys.stdout.write(json.dumps(record) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
