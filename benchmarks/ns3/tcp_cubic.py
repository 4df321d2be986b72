"""Benchmark (d) in ns-3: one CUBIC flow for 60 s at 30 Mb/s with 1 % loss.

The same scenario as qoslab's ``tcp_cubic_30mbps_1pct`` (python/qoslab/bench.py,
``tcp_cubic_config``); benchmarks/README.md lists every parameter side by side.

- Two nodes, 10.3.0.1 and 10.3.0.2, on a point-to-point link of 30 Mb/s each way,
  10 ms one-way delay (RTT 20 ms plus serialisation); a 100-packet drop-tail queue at
  each end, ns-3's traffic-control queue disc removed.
- Loss: a ``RateErrorModel`` with ``ErrorUnit`` packet and ``ErrorRate`` 0.01 on the
  receiving device, so each packet from 10.3.0.1 to 10.3.0.2 (SYN and data) is lost
  with probability 1 %; nothing is lost on the way back (ACKs).
- TCP: ``TcpCubic`` (β 0.7, C 0.4, fast convergence, TCP-friendliness) with
  ``HyStart`` off; SACK, timestamps and window scaling on; segment size 1448 (an MSS
  of 1460 less 12 bytes of timestamps, so a 1500-byte IP packet); initial window 10;
  delayed ACK every 2nd segment or 40 ms; minimum RTO 200 ms, clock granularity 1 ms;
  send buffer 4 MiB, receive buffer 6 MiB; classic (RFC 6675-style) recovery, not PRR.
- Traffic: ``BulkSendApplication`` from ``--warmup`` (0.25 s) to the end, to a
  ``PacketSink``. Throughput: bytes the sink received × 8 / ``--sim-seconds``.

Only ``Simulator.Run()`` is timed; ``events`` is ``Simulator::GetEventCount()``.
Run with the benchmark venv: ``.venv-bench/bin/python benchmarks/ns3/tcp_cubic.py``
It prints one JSON line on stdout.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

PORT = 5201
QUEUE_PACKETS = 100
SEGMENT = 1448


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
    parser.add_argument("--rate-mbps", type=float, default=30.0, help="link rate each way, Mb/s")
    parser.add_argument("--delay-ms", type=float, default=10.0, help="one-way delay, ms")
    parser.add_argument("--loss", type=float, default=0.01, help="packet loss probability, forward direction")
    parser.add_argument("--seed", type=int, default=1, help="ns-3 RngRun")
    args = parser.parse_args(argv)
    if args.sim_seconds <= 0:
        parser.error("--sim-seconds must be positive")

    from ns import ns  # slow (cppyy loads the headers): after argument checks

    ns.RngSeedManager.SetSeed(1)
    ns.RngSeedManager.SetRun(args.seed)

    d = ns.Config.SetDefault
    d("ns3::TcpL4Protocol::SocketType", ns.TypeIdValue(ns.TcpCubic.GetTypeId()))
    d("ns3::TcpL4Protocol::RecoveryType", ns.TypeIdValue(ns.TcpClassicRecovery.GetTypeId()))
    d("ns3::TcpCubic::HyStart", ns.BooleanValue(False))
    d("ns3::TcpSocket::SegmentSize", ns.UintegerValue(SEGMENT))
    d("ns3::TcpSocket::InitialCwnd", ns.UintegerValue(10))
    d("ns3::TcpSocket::DelAckCount", ns.UintegerValue(2))
    d("ns3::TcpSocket::DelAckTimeout", ns.TimeValue(ns.MilliSeconds(40)))
    d("ns3::TcpSocket::SndBufSize", ns.UintegerValue(4 * 1024 * 1024))
    d("ns3::TcpSocket::RcvBufSize", ns.UintegerValue(6 * 1024 * 1024))
    d("ns3::TcpSocketBase::MinRto", ns.TimeValue(ns.MilliSeconds(200)))
    d("ns3::TcpSocketBase::ClockGranularity", ns.TimeValue(ns.MilliSeconds(1)))
    d("ns3::TcpSocketBase::Sack", ns.BooleanValue(True))
    d("ns3::TcpSocketBase::Timestamp", ns.BooleanValue(True))
    d("ns3::TcpSocketBase::WindowScaling", ns.BooleanValue(True))

    nodes = ns.NodeContainer()
    nodes.Create(2)
    p2p = ns.PointToPointHelper()
    p2p.SetDeviceAttribute("DataRate", ns.StringValue(f"{args.rate_mbps}Mbps"))
    p2p.SetChannelAttribute("Delay", ns.TimeValue(ns.MicroSeconds(int(args.delay_ms * 1000))))
    p2p.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", ns.StringValue(f"{QUEUE_PACKETS}p"))
    devices = p2p.Install(nodes)

    error = ns.CreateObject["RateErrorModel"]()
    error.SetAttribute("ErrorUnit", ns.StringValue("ERROR_UNIT_PACKET"))
    error.SetAttribute("ErrorRate", ns.DoubleValue(args.loss))
    devices.Get(1).SetAttribute("ReceiveErrorModel", ns.PointerValue(error))

    ns.InternetStackHelper().Install(nodes)
    addresses = ns.Ipv4AddressHelper()
    addresses.SetBase(ns.Ipv4Address("10.3.0.0"), ns.Ipv4Mask("255.255.255.0"))
    interfaces = addresses.Assign(devices)
    ns.TrafficControlHelper().Uninstall(devices)

    sink_helper = ns.PacketSinkHelper(
        "ns3::TcpSocketFactory", ns.InetSocketAddress(ns.Ipv4Address.GetAny(), PORT).ConvertTo()
    )
    sink_apps = sink_helper.Install(nodes.Get(1))
    sink_apps.Start(ns.Seconds(0.0))

    source = ns.BulkSendHelper(
        "ns3::TcpSocketFactory", ns.InetSocketAddress(interfaces.GetAddress(1), PORT).ConvertTo()
    )
    source.SetAttribute("MaxBytes", ns.UintegerValue(0))
    source.SetAttribute("SendSize", ns.UintegerValue(SEGMENT))
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
    sim_time = ns.Simulator.Now().GetSeconds()

    rx_bytes = int(ns.DynamicCast["ns3::PacketSink"](sink_apps.Get(0)).GetTotalRx())
    record = {
        "name": "tcp_cubic_30mbps_1pct",
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
