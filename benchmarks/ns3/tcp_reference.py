"""ns-3's side of the TCP reference comparison (benchmarks/tcp_reference.py).

One bulk TCP flow over one lossy point-to-point link, for several RngRun seeds in one
process (ns-3's import takes seconds; each seed's simulation is built afresh and
``Simulator.Destroy()``-ed after it). The set-up is benchmarks/ns3/tcp_cubic.py's
(benchmarks/README.md lists every parameter against qoslab's), with two more knobs:

- ``--congestion newreno|cubic``: ``TcpNewReno`` (slow start and congestion avoidance
  once per ACK, ``TcpNewReno::SlowStart`` / ``CongestionAvoidance``) or ``TcpCubic``
  (HyStart off);
- ``--mtu``: the devices' MTU; the segment size is MTU − 40 (IPv4 and TCP headers) −
  12 (timestamps), so every full segment is an MTU-sized IP packet.

Recovery is ``TcpClassicRecovery`` (RFC 6675 SACK recovery, not PRR), as in the
benchmark. Prints one JSON line per seed: the payload the sink received in the
``--sim-seconds`` after ``--warmup`` and its rate, and the sender's timeouts and fast
recoveries (entries into CA_LOSS and CA_RECOVERY on its ``CongState`` trace).

ns-3 numbers its random streams automatically and the count carries on from one
simulation to the next in a process, so the k-th seed of a list is not the same
realisation as a lone run with that RngRun; a given list gives the same results
every time.

Run with the benchmark venv: ``.venv-bench/bin/python benchmarks/ns3/tcp_reference.py``.
"""

from __future__ import annotations

import argparse
import json
import sys

PORT = 5201
QUEUE_PACKETS = 100
IP_TCP_HEADERS = 40
TIMESTAMPS = 12


#: Counts the sender's congestion-state changes (TcpSocketBase "CongState" trace):
#: entries into CA_LOSS (a retransmission timeout) and CA_RECOVERY (fast recovery).
COUNTERS = """
namespace qoslab_ref {
int timeouts = 0;
int recoveries = 0;
void OnCongState(ns3::TcpSocketState::TcpCongState_t, ns3::TcpSocketState::TcpCongState_t now) {
    if (now == ns3::TcpSocketState::CA_LOSS) ++timeouts;
    if (now == ns3::TcpSocketState::CA_RECOVERY) ++recoveries;
}
void Hook() {
    ns3::Config::ConnectWithoutContext("/NodeList/0/$ns3::TcpL4Protocol/SocketList/0/CongState",
                                       ns3::MakeCallback(&OnCongState));
}
void Arm(double at_s) {
    timeouts = 0;
    recoveries = 0;
    ns3::Simulator::Schedule(ns3::Seconds(at_s), &Hook);
}
}
"""


def run_one(ns, args: argparse.Namespace, seed: int) -> dict:
    import cppyy

    ns.RngSeedManager.SetSeed(1)
    ns.RngSeedManager.SetRun(seed)
    segment = args.mtu - IP_TCP_HEADERS - TIMESTAMPS

    d = ns.Config.SetDefault
    socket_type = ns.TcpCubic.GetTypeId() if args.congestion == "cubic" else ns.TcpNewReno.GetTypeId()
    d("ns3::TcpL4Protocol::SocketType", ns.TypeIdValue(socket_type))
    d("ns3::TcpL4Protocol::RecoveryType", ns.TypeIdValue(ns.TcpClassicRecovery.GetTypeId()))
    d("ns3::TcpCubic::HyStart", ns.BooleanValue(False))
    d("ns3::TcpSocket::SegmentSize", ns.UintegerValue(segment))
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
    p2p.SetDeviceAttribute("Mtu", ns.UintegerValue(args.mtu))
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
    source.SetAttribute("SendSize", ns.UintegerValue(segment))
    source_apps = source.Install(nodes.Get(0))
    source_apps.Start(ns.Seconds(args.warmup))
    end = args.warmup + args.sim_seconds
    source_apps.Stop(ns.Seconds(end))

    ns.Simulator.Stop(ns.Seconds(end))
    # The sender's socket exists once BulkSend starts: hook its trace just after.
    cppyy.gbl.qoslab_ref.Arm(args.warmup + 0.001)
    ns.Simulator.Run()
    rx_bytes = int(ns.DynamicCast["ns3::PacketSink"](sink_apps.Get(0)).GetTotalRx())
    ns.Simulator.Destroy()
    return {
        "tool": "ns3",
        "congestion": args.congestion,
        "mtu": args.mtu,
        "seed": seed,
        "sim_seconds": args.sim_seconds,
        "rx_payload_bytes": rx_bytes,
        "throughput_mbps": rx_bytes * 8 / args.sim_seconds / 1e6,
        "timeouts": int(cppyy.gbl.qoslab_ref.timeouts),
        "fast_retransmits": int(cppyy.gbl.qoslab_ref.recoveries),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--congestion", choices=("newreno", "cubic"), default="cubic")
    parser.add_argument("--mtu", type=int, default=1500, help="device MTU, bytes (576..1500)")
    parser.add_argument("--seeds", type=int, nargs="+", default=[1], help="ns-3 RngRun values")
    parser.add_argument("--sim-seconds", type=float, default=20.0, help="simulated seconds of traffic")
    parser.add_argument("--warmup", type=float, default=0.25, help="seconds before the flow starts")
    parser.add_argument("--rate-mbps", type=float, default=30.0)
    parser.add_argument("--delay-ms", type=float, default=10.0, help="one-way delay, ms")
    parser.add_argument("--loss", type=float, default=0.01, help="packet loss probability, forward direction")
    args = parser.parse_args(argv)
    if not 576 <= args.mtu <= 1500:
        parser.error("--mtu must be within 576..1500")
    if args.sim_seconds <= 0:
        parser.error("--sim-seconds must be positive")

    import cppyy
    from ns import ns  # slow (cppyy loads the headers): after argument checks

    cppyy.cppdef(COUNTERS)

    for seed in args.seeds:
        sys.stdout.write(json.dumps(run_one(ns, args, seed)) + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
