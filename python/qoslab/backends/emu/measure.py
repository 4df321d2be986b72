"""The tests of a scenario measured with real tools in the namespaces, read into records
of the same names and metrics as the simulator's (python/qoslab/methods/,
docs/metrics.md "The emulation backend" says which metric is measured how here).

- ``ping``: iputils ping in the ``from`` node's namespace; sent and received from its
  summary, each reply's round trip from its ``time=`` (microsecond resolution).
- ``udp.flow``: a learning ping, then iperf3 ``-u`` (client in ``from``, server in
  ``to``): the receiver's counts, interval and RFC 3550 jitter are the server's, as the
  client's JSON reports them back (``end.sum_received``).
- ``tcp.bulk``: iperf3 (TCP) with the test's streams, interval, congestion control and
  window; goodput is the receiver's.

Metrics no tool here measures (one-way latency, drained and late datagrams, the CPU,
the simulator's TCP internals) are None, so the record's keys stay the simulator's.
Every tool runs with a deadline.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import time
from ipaddress import IPv4Address
from typing import TYPE_CHECKING, Any

from qoslab.backends.emu.topology import EmulationError, in_namespace
from qoslab.plan import models as plan_models

if TYPE_CHECKING:
    from qoslab.backends.emu.topology import Topology
    from qoslab.lower.lowered import Network
    from qoslab.methods import Plan

IPERF3_PORT = 5201
"""iperf3's default port (the simulator's TCP tests use it too)."""
SLACK_S = 15.0
"""A tool's deadline beyond the time its test asks for: start-up, ARP, the server's
report."""
SERVER_READY_S = 5.0
"""Longest wait for the iperf3 server to listen."""

IPERF3_FIFO_PRIORITY = 40
"""SCHED_FIFO priority (sched(7)) of iperf3's TCP client and server, below the link
emulators' (links.FIFO_PRIORITY, 50). Linux ACKs at once only data its application has
read or a window it can open (tcp_input.c `__tcp_ack_snd_check`): a receiving iperf3
that waits for a CPU makes the kernel's ACKs late and stretched, and the sender slower,
a measure of the machine's load, not of TCP. Measured with
python/qoslab/examples/cubic_30mbps_loss.toml at load average 13 on a 2-core machine:
seeds 1-2 15.2-18.6 Mb/s with an ACK per 1.95-2.4 data frames as normal processes,
20.3-22.0 Mb/s with an ACK per 1.6 under SCHED_FIFO, as on a quiet machine. A TCP
iperf3 waits on its socket, so it does not hold the CPU."""

_REPLY = re.compile(r"icmp_seq=(\d+) .*time=([0-9.]+) ms")
_SUMMARY = re.compile(r"(\d+) packets transmitted, (\d+) received")


def _run(topo: Topology, node: str, argv: list[str], timeout_s: float) -> subprocess.CompletedProcess[str]:
    """``argv`` in ``node``'s namespace, registered while it runs, killed at its deadline."""
    proc = subprocess.Popen(
        in_namespace(topo.namespace(node), argv), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    topo.registry.add_pid(proc.pid)
    try:
        out, err = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        raise EmulationError(f"{argv[0]} in {node} did not finish within {timeout_s:.0f} s") from None
    return subprocess.CompletedProcess(argv, proc.returncode, out, err)


def ping(
    topo: Topology, node: str, dst: str, *, count: int, interval_s: float, payload: int, wait_s: float
) -> dict[str, Any]:
    """iputils ping: ``{"sent", "received", "rtt_ns"}`` as the core's flow result has them."""
    deadline = (count - 1) * interval_s + wait_s
    # -c and -W: count requests, then at most wait_s for the last reply (ping(8)); no
    # -w, with which ping sends more than count requests while replies are missing.
    argv = ["ping", "-n", "-c", str(count), "-i", f"{interval_s:.6f}", "-s", str(payload), "-W", f"{wait_s:.3f}", dst]
    done = _run(topo, node, argv, deadline + SLACK_S)
    summary = _SUMMARY.search(done.stdout)
    if summary is None:
        raise EmulationError(f"ping in {node} printed no summary: {done.stderr.strip() or done.stdout.strip()}")
    seen: dict[int, int] = {}
    for m in _REPLY.finditer(done.stdout):
        seen.setdefault(int(m.group(1)), round(float(m.group(2)) * 1e6))
    return {"sent": int(summary.group(1)), "received": int(summary.group(2)), "rtt_ns": list(seen.values())}


IPV4_ICMP_HEADERS = 20 + 8
"""An echo request's IPv4 header (RFC 791 §3.1, no options) and ICMP echo header
(RFC 792): what ``ping -s N`` adds to its N data octets."""


def df_ping(topo: Topology, node: str, dst: str, size: int, *, count: int = 2, wait_s: float = 1.0) -> bool:
    """Whether an IPv4 packet of ``size`` octets (total length) with DF set crosses from
    ``node`` to ``dst`` and back: iputils ``ping -M do -s size-28``, any of ``count``
    replies. A packet too big for the sender's own interface or route fails at once
    (``ping: local error: message too long``); one too big further on is dropped (with
    or without an ICMP "fragmentation needed", RFC 1191 §4) and has no reply."""
    argv = ["ping", "-n", "-M", "do", "-c", str(count), "-i", "0.2", "-W", f"{wait_s:.3f}"]
    argv += ["-s", str(size - IPV4_ICMP_HEADERS), dst]
    done = _run(topo, node, argv, count * 0.2 + wait_s + SLACK_S)
    summary = _SUMMARY.search(done.stdout)
    return summary is not None and int(summary.group(2)) > 0


def path_mtu(topo: Topology, node: str, dst: str, *, high: int = 1500, count: int = 2) -> int:
    """The path MTU from ``node`` to ``dst`` as DF pings find it: the largest IPv4 packet
    (total length, octets, at most ``high``) that crosses with DF set and is answered,
    by bisection between the smallest echo request (28 octets) and ``high``. Assumes what
    passes at one size passes at every smaller one (no loss on the path: a lost probe
    would read as too big; ``count`` probes per size guard against a single loss)."""
    low = IPV4_ICMP_HEADERS
    if not df_ping(topo, node, dst, low, count=count):
        raise EmulationError(f"no reply to a {low}-byte DF ping from {node} to {dst}: the path is down")
    if df_ping(topo, node, dst, high, count=count):
        return high
    # Invariant: low passes, high does not.
    while high - low > 1:
        mid = (low + high) // 2
        if df_ping(topo, node, dst, mid, count=count):
            low = mid
        else:
            high = mid
    return low


def _wait_listening(topo: Topology, node: str, port: int) -> None:
    """Until something in ``node``'s namespace listens on TCP ``port`` (iperf3's control
    connection), read from the namespace's own /proc/net."""
    deadline = time.monotonic() + SERVER_READY_S
    want = f":{port:04X} "
    while time.monotonic() < deadline:
        done = subprocess.run(
            in_namespace(topo.namespace(node), ["cat", "/proc/net/tcp", "/proc/net/tcp6"]),
            capture_output=True,
            text=True,
            timeout=5,
        )
        # proc(5) /proc/net/tcp and tcp6 (iperf3 listens on a dual-stack socket where it
        # can): local_address "IP:PORT" in hex, state 0A = LISTEN.
        if any(want in line and line.split()[3] == "0A" for line in done.stdout.splitlines() if ":" in line):
            return
        time.sleep(0.05)
    raise EmulationError(f"the iperf3 server in {node} did not listen on port {port} within {SERVER_READY_S} s")


def iperf3(
    topo: Topology,
    src: str,
    dst_node: str,
    dst: str,
    client_args: list[str],
    run_s: float,
    *,
    interval_s: float | None = None,
    realtime: bool = False,
) -> dict[str, Any]:
    """One iperf3 test: a one-off server in ``dst_node``'s namespace, the client in
    ``src``'s; the client's JSON, with the server's as ``server_output_json`` (its
    intervals every ``interval_s``: a server reports on its own clock, 1 s by default).
    ``realtime``: both under SCHED_FIFO :data:`IPERF3_FIFO_PRIORITY` (``chrt -f``)."""
    rt = ["chrt", "-f", str(IPERF3_FIFO_PRIORITY)] if realtime else []
    server_args = [*rt, "iperf3", "-s", "-1", "-J", "-p", str(IPERF3_PORT), "-i", str(interval_s or 0)]
    server = subprocess.Popen(
        in_namespace(topo.namespace(dst_node), server_args),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    topo.registry.add_pid(server.pid)
    try:
        _wait_listening(topo, dst_node, IPERF3_PORT)
        argv = [*rt, "iperf3", "-c", dst, "-p", str(IPERF3_PORT), "-J", "--get-server-output", *client_args]
        done = _run(topo, src, argv, run_s + SLACK_S)
        try:
            result: dict[str, Any] = json.loads(done.stdout)
        except ValueError:
            raise EmulationError(f"iperf3 in {src} printed no JSON: {done.stderr.strip()}") from None
        if result.get("error"):
            raise EmulationError(f"iperf3 in {src}: {result['error']}")
        return result
    finally:
        if server.poll() is None:
            server.kill()
        server.wait()
        if server.stderr is not None:
            server.stderr.close()  # else a ResourceWarning when the Popen is collected


def _timed_ns(plan: Plan) -> int:
    """The sending interval of the plan's measured flow (its last), ns."""
    f = plan.flows[-1]
    assert isinstance(f, plan_models.UdpFlow | plan_models.TcpFlow | plan_models.UdpReplayFlow)
    return int(f.stop_ns) - int(f.start_ns)


def ping_record(topo: Topology, net: Network, index: int, plan: Plan) -> dict[str, Any]:
    """A ``ping`` test's record."""
    from qoslab.methods.ping import REPLY_WAIT_NS, rtt_metrics_of

    t = net.scenario.test[index]
    f = plan.flows[0]
    assert isinstance(f, plan_models.PingFlow)
    res = ping(
        topo,
        t.from_,
        str(f.to),
        count=int(f.count),
        interval_s=int(f.interval_ns) / 1e9,
        payload=int(f.payload),
        wait_s=REPLY_WAIT_NS / 1e9,
    )
    metrics = rtt_metrics_of(res["sent"], res["received"], res["rtt_ns"])
    metrics["cpu_util_pct"] = {}
    return _record(t, plan, metrics)


def udp_record(topo: Topology, net: Network, index: int, plan: Plan) -> dict[str, Any]:
    """A ``udp.flow`` test's record, from iperf3 -u."""
    from qoslab.methods.udp import iperf3_end

    t = net.scenario.test[index]
    f = plan.flows[-1]
    assert isinstance(f, plan_models.UdpFlow)
    dst = str(f.to)
    payload, pps = int(f.payload), float(f.rate_pps)
    ping(topo, t.from_, dst, count=1, interval_s=1.0, payload=56, wait_s=2.0)  # learning (ARP, bridges)
    send_s = _timed_ns(plan) / 1e9
    # iperf3's -b counts UDP payload bits; the plan's rate counts Ethernet frames.
    args = ["-u", "-l", str(payload), "-b", str(round(pps * payload * 8)) if pps else "0"]
    count = getattr(t, "count", None)
    if count is None and pps:
        # iperf3 -t takes whole seconds; the datagrams a rated stream sends in its
        # interval give any duration exactly.
        count = max(1, round(send_s * pps))
    # A saturating stream has no count: whole seconds, at least one (-t 0 runs forever).
    args += ["-k", str(count)] if count is not None else ["-t", f"{max(1, round(send_s))}"]
    if f.dont_fragment:
        args.append("--dont-fragment")
    out = iperf3(topo, t.from_, t.to, dst, args, send_s + float(plan.duration_ns) / 1e9)
    # iperf3 3.12's client JSON holds both sides: sum_sent is the client's, sum_received
    # the server's (its packets up to the highest sequence number, its gaps, its clock).
    sent_sum, server = out["end"]["sum_sent"], out["end"]["sum_received"]
    sent = int(sent_sum["packets"])
    received = int(server["packets"]) - int(server["lost_packets"])
    receive_s = float(server["seconds"])
    frame = int(plan.parameters["frame_bytes"])
    metrics: dict[str, Any] = {
        "sent": sent,
        "received": received,
        "lost": sent - received,
        "loss_pct": round(100.0 * (sent - received) / sent, 6) if sent else None,
        "drained": None,
        "late": None,
        "receive_interval_s": receive_s,
        "throughput_mbps": round(received * frame * 8 / receive_s / 1e6, 6) if receive_s else None,
        "throughput_fps": round(received / receive_s, 6) if receive_s else None,
        "goodput_mbps": round(received * payload * 8 / receive_s / 1e6, 6) if receive_s else None,
        "latency_ms": None,
        "latency_min_ms": None,
        "latency_p50_ms": None,
        "latency_p90_ms": None,
        "latency_p99_ms": None,
        "latency_max_ms": None,
        "jitter_ms": float(server["jitter_ms"]),
        "cpu_util_pct": {},
    }
    record = _record(t, plan, metrics)
    record["iperf3"] = iperf3_end(sent, payload, float(sent_sum["seconds"]), received * payload, receive_s, metrics)
    return record


def tcp_record(topo: Topology, net: Network, index: int, plan: Plan) -> dict[str, Any]:
    """A ``tcp.bulk`` test's record, from iperf3 (TCP)."""
    from qoslab.backends.emu.tcp_record import tcp_bulk_record

    t = net.scenario.test[index]
    dst = str(plan.flows[0].to)
    params = plan.parameters
    congestion = "reno" if params["congestion"] == "newreno" else "cubic"  # Linux's reno is NewReno (RFC 6582)
    args = ["-C", congestion, "-P", str(int(params["streams"]))]
    interval = params.get("interval_s")
    args += ["-i", str(interval) if interval else "0"]
    if params.get("window_bytes"):
        args += ["-w", str(int(params["window_bytes"]))]
    if "bytes" in params:
        args += ["-n", str(int(params["bytes"]))]
        run_s = float(params["max_duration_s"])
    else:
        run_s = float(params["duration_s"])
        args += ["-t", f"{max(1, round(run_s))}"]
    out = iperf3(topo, t.from_, t.to, dst, args, run_s, interval_s=interval, realtime=True)
    return tcp_bulk_record(t, plan, out)


def _record(t: Any, plan: Plan, metrics: dict[str, Any]) -> dict[str, Any]:
    return {
        "test": t.method,
        "name": t.name,
        "from": t.from_,
        "to": t.to,
        "parameters": dict(plan.parameters),
        "metrics": metrics,
    }


def kernel() -> str:
    """The kernel the emulation ran on (``uname -r``)."""
    return os.uname().release


NUD_VALID = 0x02 | 0x04 | 0x08 | 0x10 | 0x80
"""Neighbour states with a link address learned or set: reachable, stale, delay, probe,
permanent (Linux NUD_VALID less NUD_NOARP 0x40, include/net/neighbour.h; the bits of
include/uapi/linux/neighbour.h). What an ARP table lists: incomplete and failed entries
have no address, and a NOARP entry (a serial line's device, `arp off`) was never
resolved, as the simulator's serial line keeps no ARP table."""


def node_tables(topo: Topology) -> list[dict[str, Any]]:
    """Each node's ARP table as its kernel holds it at the end of a test (the simulator's
    ``arp_table`` entries: ip, mac, port), and an ``l3f`` bridge's learned hosts (its /32
    routes, with the MAC its ARP table holds for each: ``l3f_table``)."""
    from pyroute2 import NetNS

    out = []
    for node in topo.plan.nodes:
        with NetNS(topo.namespace(node.name)) as ns:
            names = {link["index"]: str(link.get("ifname")) for link in ns.link("dump")}
            arp = []
            for n in ns.get_neighbours(family=socket.AF_INET):
                if n.get("lladdr") and n["state"] & NUD_VALID:
                    arp.append({"ip": n.get("dst"), "mac": n.get("lladdr"), "port": names.get(n["ifindex"], "?")})
            arp.sort(key=lambda e: (e["port"], IPv4Address(e["ip"])))
            l3f = []
            if node.bridge is not None and node.bridge.mode == plan_models.BridgeMode.l3f:
                macs = {e["ip"]: e["mac"] for e in arp}
                for r in ns.route("dump", family=socket.AF_INET, table=254):
                    if r["dst_len"] == 32 and r.get("dst"):
                        l3f.append({"ip": r.get("dst"), "mac": macs.get(r.get("dst")), "port": names.get(r.get("oif"))})
                l3f.sort(key=lambda e: IPv4Address(e["ip"]))
        out.append({"name": node.name, "role": node.role.value, "arp_table": arp, "l3f_table": l3f})
    return out
