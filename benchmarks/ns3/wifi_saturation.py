"""Benchmark (a) in ns-3: one 802.11b station saturating its AP with UDP.

The same scenario as qoslab's ``wifi_80211b_saturation`` (python/qoslab/bench.py,
``wifi_saturation_config``); benchmarks/README.md lists every parameter side by side.

- One AP and one station, 1 m apart, Yans channel (log-distance loss, speed-of-light
  delay): no frame errors.
- IEEE 802.11b (``WIFI_STANDARD_80211b``): slot 20 µs, SIFS 10 µs, CW 31..1023, DCF
  (no QoS, no EDCA), long PLCP preamble (``WifiPhy::ShortPlcpPreambleSupported`` false).
- Data at 11 Mb/s CCK from ``ConstantRateWifiManager`` (no rate adaptation). The Ack
  goes at the highest basic rate not above the data rate: ns-3's AP puts the mandatory
  DSSS rates, 1 and 2 Mb/s, in its basic rate set, so the Ack is at 2 Mb/s (checked
  after the run and reported as ``ack_rate_mbps``). ``ControlMode`` is 2 Mb/s too; it
  governs RTS only, and RTS is off (threshold above any frame).
- UDP payload 1472 bytes: IP packet 1500, MPDU 24 + 8 (LLC/SNAP) + 1500 + 4 (FCS) =
  1536 bytes. The station sends to the AP's own address (no wired hop).
- No beacons: qoslab does not model management traffic, so the AP sends none
  (``BeaconGeneration`` false) and the station associates by active probing.
- Queues: ns-3's traffic-control queue disc is removed; the wifi MAC queue holds 100
  frames (qoslab: ``queue_frames`` 100).
- Traffic: an OnOff source always on at ``--offered-mbps`` (7 Mb/s of payload, above
  the ~6.1 Mb/s the BSS can carry), from ``--warmup`` (0.25 s, time to associate) to
  the end. The excess is dropped at the MAC queue: ns-3 has no "keep the queue
  non-empty" source as qoslab's ``rate_pps: 0`` is, and the small excess keeps the
  extra events low.
- Throughput: bytes the PacketSink received (UDP payload) × 8 / ``--sim-seconds``.

Only ``Simulator.Run()`` is timed (``time.perf_counter`` around it); import and set-up
are not. ``events`` is ``Simulator::GetEventCount()``: events executed in the run.

Run with the benchmark venv: ``.venv-bench/bin/python benchmarks/ns3/wifi_saturation.py``
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
    parser.add_argument("--warmup", type=float, default=0.25, help="seconds before the flow starts (association)")
    parser.add_argument("--offered-mbps", type=float, default=7.0, help="UDP payload offered by the source, Mb/s")
    parser.add_argument("--seed", type=int, default=1, help="ns-3 RngRun")
    args = parser.parse_args(argv)
    if args.sim_seconds <= 0:
        parser.error("--sim-seconds must be positive")

    from ns import ns  # slow (cppyy loads the headers): after argument checks

    ns.RngSeedManager.SetSeed(1)
    ns.RngSeedManager.SetRun(args.seed)

    nodes = ns.NodeContainer()
    nodes.Create(2)
    ap_node, sta_node = nodes.Get(0), nodes.Get(1)

    channel = ns.YansWifiChannelHelper.Default()
    phy = ns.YansWifiPhyHelper()
    phy.SetChannel(channel.Create())
    phy.Set("ShortPlcpPreambleSupported", ns.BooleanValue(False))

    wifi = ns.WifiHelper()
    wifi.SetStandard(ns.WIFI_STANDARD_80211b)
    wifi.SetRemoteStationManager(
        "ns3::ConstantRateWifiManager",
        "DataMode",
        ns.StringValue("DsssRate11Mbps"),
        "ControlMode",
        ns.StringValue("DsssRate2Mbps"),
        "RtsCtsThreshold",
        ns.UintegerValue(65535),
        "FragmentationThreshold",
        ns.UintegerValue(65535),
    )

    ssid = ns.Ssid("qoslab-bench")
    mac = ns.WifiMacHelper()
    mac.SetType("ns3::StaWifiMac", "Ssid", ns.SsidValue(ssid), "ActiveProbing", ns.BooleanValue(True))
    sta_devs = wifi.Install(phy, mac, sta_node)
    mac.SetType("ns3::ApWifiMac", "Ssid", ns.SsidValue(ssid), "BeaconGeneration", ns.BooleanValue(False))
    ap_devs = wifi.Install(phy, mac, ap_node)

    mobility = ns.MobilityHelper()
    positions = ns.ListPositionAllocator()
    positions.Add(ns.Vector(0.0, 0.0, 0.0))
    positions.Add(ns.Vector(1.0, 0.0, 0.0))
    mobility.SetPositionAllocator(positions)
    mobility.SetMobilityModel("ns3::ConstantPositionMobilityModel")
    mobility.Install(nodes)

    ns.InternetStackHelper().Install(nodes)
    devices = ns.NetDeviceContainer(ap_devs, sta_devs)
    addresses = ns.Ipv4AddressHelper()
    addresses.SetBase(ns.Ipv4Address("10.1.0.0"), ns.Ipv4Mask("255.255.255.0"))
    interfaces = addresses.Assign(devices)  # AP 10.1.0.1, station 10.1.0.2
    ns.TrafficControlHelper().Uninstall(devices)

    for i in range(devices.GetN()):
        dev = ns.DynamicCast["ns3::WifiNetDevice"](devices.Get(i))
        dev.GetMac().GetTxop().GetWifiMacQueue().SetMaxSize(ns.QueueSize(f"{QUEUE_FRAMES}p"))

    sink_helper = ns.PacketSinkHelper(
        "ns3::UdpSocketFactory", ns.InetSocketAddress(ns.Ipv4Address.GetAny(), PORT).ConvertTo()
    )
    sink_apps = sink_helper.Install(ap_node)
    sink_apps.Start(ns.Seconds(0.0))

    source = ns.OnOffHelper("ns3::UdpSocketFactory", ns.InetSocketAddress(interfaces.GetAddress(0), PORT).ConvertTo())
    source.SetConstantRate(ns.DataRate(f"{args.offered_mbps}Mbps"), UDP_PAYLOAD)
    source_apps = source.Install(sta_node)
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

    sink = ns.DynamicCast["ns3::PacketSink"](sink_apps.Get(0))
    rx_bytes = int(sink.GetTotalRx())
    sta_dev = ns.DynamicCast["ns3::WifiNetDevice"](sta_devs.Get(0))
    sta_phy = sta_dev.GetPhy()
    txop = sta_dev.GetMac().GetTxop()
    ack_mode = sta_dev.GetRemoteStationManager().GetControlAnswerMode(ns.WifiMode("DsssRate11Mbps"))
    record = {
        "name": "wifi_80211b_saturation",
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
        "slot_us": sta_phy.GetSlot().GetMicroSeconds(),
        "sifs_us": sta_phy.GetSifs().GetMicroSeconds(),
        "cw_min": int(txop.GetMinCw()),
        "cw_max": int(txop.GetMaxCw()),
        "ack_rate_mbps": ack_mode.GetDataRate(22) / 1e6,
        "short_preamble": bool(sta_dev.GetRemoteStationManager().GetShortPreambleEnabled()),
    }
    ns.Simulator.Destroy()
    sys.stdout.write(json.dumps(record) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
