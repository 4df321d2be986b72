"""A ``tcp.transfer`` test on the emulation backend: qoslab's own ttcp
(:mod:`.transfer_tool`: the receiver in the ``to`` node's namespace, the transmitter in
the ``from`` node's, both under SCHED_FIFO as iperf3 is for ``tcp.bulk``), read into the
simulator's record (python/qoslab/methods/tcp.py: the same keys; the rates by the same
``rate_bps``).

docs/metrics.md, "The emulation backend", says what each metric is here. The kernel's
own TCP settings are used, not the rest of the test's ``tcp`` table (as for ``tcp.bulk``);
``congestion`` and ``mss`` set the socket's options, ``buffer`` the write size, and the
socket buffers are :func:`socket_buffers`'s.
"""

from __future__ import annotations

import json
import select
import subprocess
import sys
from typing import TYPE_CHECKING, Any

from qoslab.backends.emu.measure import IPERF3_FIFO_PRIORITY
from qoslab.backends.emu.topology import EmulationError, in_namespace

if TYPE_CHECKING:
    from qoslab.backends.emu.topology import Topology
    from qoslab.lower.lowered import Network
    from qoslab.methods import Plan
    from qoslab.scenario.test_tables import TcpTransfer

TOOL = [sys.executable, "-m", "qoslab.backends.emu.transfer_tool"]
PORT = 5201
"""The simulator's TCP tests' port (methods/tcp.py ``PORT``)."""
RECEIVER_READY_S = 10.0
"""Longest wait for the receiver to listen (a Python start-up on a loaded machine)."""
SLACK_S = 15.0
"""The transmitter's deadline beyond the test's own limit: start-up and the close."""


def _realtime(argv: list[str]) -> list[str]:
    """``argv`` under SCHED_FIFO :data:`~.measure.IPERF3_FIFO_PRIORITY`, below the link
    emulators: Linux ACKs data its application has read (tcp_input.c
    ``__tcp_ack_snd_check``), so a receiver waiting for a CPU would make its ACKs late."""
    return ["chrt", "-f", str(IPERF3_FIFO_PRIORITY), *argv]


def _json(done: str, who: str, err: str) -> dict[str, Any]:
    try:
        out: dict[str, Any] = json.loads(done.strip().splitlines()[-1])
    except (ValueError, IndexError):
        raise EmulationError(f"the transfer {who} printed no result: {err.strip()}") from None
    return out


def socket_buffers(t: TcpTransfer) -> tuple[int | None, int | None]:
    """SO_SNDBUF at the transmitter and SO_RCVBUF at the receiver for test ``t`` (None:
    Linux's own, autotuned).

    The receive buffer is the fixed window (``window``), or the ``tcp`` table's
    ``recv_buffer``: what the receiver advertises, as the simulator's ``max_window``
    and ``recv_buffer``. The send buffer is set only when the ``tcp`` table writes
    ``send_buffer``: the simulator's send buffer (``window`` also sets it) counts data
    octets, and a ``window``'s worth of data always fits in it, as in NetBSD's 16 KiB
    ``so_snd`` (``sb_hiwat`` counts data octets). Linux's SO_SNDBUF of the same value
    does not hold that: it doubles the value and counts every queued skb's truesize
    against it (socket(7), net/core/sock.c ``sk_setsockopt``, ``sk_wmem_queued``), so
    fewer octets than the window fit in flight and the writer starves between its write
    calls; each starved write then ends in a short segment that Linux pushes at once
    (tcp_push, Nagle with Minshall's rule) and that draws an ACK of its own, which a slow
    acknowledgement line turns into a slower download (seed 004 at 9.6 kb/s, 300 kB in
    8192-byte writes: 140 ACKs and 11 short segments, 7.46 s, against 121 ACKs and 2
    short segments, 6.34 s, with Linux's own send buffer). Linux's own send buffer,
    autotuned (tcp_wmem), holds the window, as the simulator's does."""
    send = int(t.tcp.send_buffer) if t.tcp.send_buffer is not None else None
    if t.tcp.recv_buffer is not None:
        return send, int(t.tcp.recv_buffer)
    return send, int(t.window) if t.window else None


def run_transfer(
    topo: Topology,
    src: str,
    dst_node: str,
    dst: str,
    *,
    size: int,
    send_buffer: int | None,
    recv_buffer: int | None,
    write: int,
    congestion: str,
    mss: int | None,
    limit_s: float,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """One transfer of ``size`` bytes from ``src``'s namespace to ``dst`` (in
    ``dst_node``'s): the transmitter's and the receiver's JSON (:mod:`.transfer_tool`)."""
    rcvbuf = ["--rcvbuf", str(recv_buffer)] if recv_buffer else []
    sndbuf = ["--sndbuf", str(send_buffer)] if send_buffer else []
    receiver = subprocess.Popen(
        in_namespace(
            topo.namespace(dst_node),
            _realtime([*TOOL, "receive", "0.0.0.0", "--port", str(PORT), "--bytes", str(size), *rcvbuf]),
        ),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    topo.registry.add_pid(receiver.pid)
    try:
        assert receiver.stdout is not None
        ready, _, _ = select.select([receiver.stdout], [], [], RECEIVER_READY_S)
        if not ready or receiver.stdout.readline().strip() != "ready":
            receiver.kill()
            _, err = receiver.communicate()
            raise EmulationError(
                f"the transfer receiver in {dst_node} did not listen: {err.strip() or 'no ready line'}"
            )
        argv = [*TOOL, "send", dst, "--port", str(PORT), "--bytes", str(size), "--write", str(write)]
        argv += [*sndbuf, "--congestion", congestion, *(["--mss", str(mss)] if mss else [])]
        sender = subprocess.Popen(
            in_namespace(topo.namespace(src), _realtime(argv)),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        topo.registry.add_pid(sender.pid)
        try:
            s_out, s_err = sender.communicate(timeout=limit_s + SLACK_S)
        except subprocess.TimeoutExpired:
            sender.kill()
            sender.communicate()
            raise EmulationError(f"the transfer from {src} did not finish within {limit_s + SLACK_S:.0f} s") from None
        if sender.returncode != 0:
            raise EmulationError(f"the transfer transmitter in {src} failed: {s_err.strip()}")
        try:
            r_out, r_err = receiver.communicate(timeout=SLACK_S)
        except subprocess.TimeoutExpired:
            raise EmulationError(f"the transfer receiver in {dst_node} did not end after the close") from None
        return _json(s_out, "transmitter", s_err), _json(r_out, "receiver", r_err)
    finally:
        if receiver.poll() is None:
            receiver.kill()
            receiver.wait()


def transfer_metrics(size: int, tx: dict[str, Any], rx: dict[str, Any]) -> dict[str, Any]:
    """The record's metrics from the two ends' instants (CLOCK_MONOTONIC ns), by the
    definitions of docs/metrics.md's TCP section; what no end measures is None."""
    from qoslab.methods.tcp import rate_bps

    start, last = int(tx["start_ns"]), rx.get("last_rx_ns")
    received = int(rx["bytes"])
    done = last is not None and received >= size
    window_ns = int(last) - start if done and last is not None else None
    goodput = rate_bps(received, window_ns) if window_ns else None
    tx_ns = int(tx["acked_ns"]) - int(tx["first_tx_ns"]) if tx.get("first_tx_ns") is not None else None
    rx_ns = int(last) - int(rx["first_rx_ns"]) if done and last is not None and rx.get("first_rx_ns") else None
    after_first = size - int(rx.get("first_rx_bytes") or 0)
    tx_bps = rate_bps(size, tx_ns) if tx_ns else None
    rx_bps = rate_bps(after_first, rx_ns) if rx_ns else None
    info = tx.get("tcp_info") or {}
    return {
        "throughput_mbps": round(goodput / 1e6, 6) if goodput is not None else 0.0,
        "window_s": None if window_ns is None else round(window_ns / 1e9, 9),
        "bytes_received": received,
        "bytes_after_stop": None,
        # Acknowledged by the window's end: the transmitter learns it only after (acked_ns).
        "bytes_acked": None,
        "bytes_sent": None,
        "retransmits": info.get("total_retrans"),
        "fast_retransmits": None,
        "timeouts": None,
        "tlp_probes": None,
        "rack_lost": None,
        "srtt_ms": None if info.get("rtt_us") is None else round(info["rtt_us"] / 1000, 6),
        "max_cwnd_bytes": None,
        "link_wait_s": 0.0,
        "path_mtu_bytes": info.get("pmtu"),
        "mss_bytes": info.get("snd_mss"),
        "frag_needed_received": None,
        "frag_needed_sent": None,
        "too_big_dropped_silently": None,
        "black_holes_detected": None,
        "mtu_probes": None,
        "mtu_probes_failed": None,
        "longest_stall_s": None,
        "stalled": None,
        "completed": done,
        "transfer_time_s": None if window_ns is None else round(window_ns / 1e9, 9),
        "sender_time_s": None if tx_ns is None else round(tx_ns / 1e9, 9),
        "receiver_time_s": None if rx_ns is None else round(rx_ns / 1e9, 9),
        "receiver_bytes_timed": None if rx_ns is None else after_first,
        "sender_rate_mbps": None if tx_bps is None else round(tx_bps / 1e6, 6),
        "receiver_rate_mbps": None if rx_bps is None else round(rx_bps / 1e6, 6),
        "cpu_util_pct": {},
    }


def transfer_record(topo: Topology, net: Network, index: int, plan: Plan) -> dict[str, Any]:
    """A ``tcp.transfer`` test's record (the simulator's keys), with ``socket_buffers``:
    what each end asked for and what its kernel granted."""
    from qoslab.scenario.test_tables import TcpTransfer

    t = net.scenario.test[index]
    assert isinstance(t, TcpTransfer)
    params = plan.parameters
    size = int(params["bytes"])
    send_buffer, recv_buffer = socket_buffers(t)
    # Linux's "reno" is NewReno's recovery (RFC 6582), as for tcp.bulk.
    congestion = "cubic" if t.congestion == "cubic" else "reno"
    tx, rx = run_transfer(
        topo,
        t.from_,
        t.to,
        str(plan.flows[0].to),
        size=size,
        send_buffer=send_buffer,
        recv_buffer=recv_buffer,
        write=int(t.buffer),
        congestion=congestion,
        mss=int(t.mss) if t.mss else None,
        limit_s=(int(plan.duration_ns) - int(plan.flows[0].start_ns)) / 1e9,
    )
    metrics = transfer_metrics(size, tx, rx)
    window_ns = None if metrics["window_s"] is None else round(metrics["window_s"] * 1e9)
    info = tx.get("tcp_info") or {}
    rinfo = rx.get("tcp_info") or {}
    stream = {
        "id": 0,
        "start_s": 0.0,
        "end_s": metrics["window_s"],
        "sender": {
            "bytes": None,
            "bits_per_second": None,
            "bytes_sent": None,
            "retransmits": info.get("total_retrans"),
            "fast_retransmits": None,
            "timeouts": None,
            "tlp_probes": None,
            "rack_lost": None,
            "max_snd_cwnd_bytes": None,
            "min_rtt_ms": None,
            "mean_rtt_ms": None,
            "max_rtt_ms": None,
            "hystart_exit": None,
        },
        "receiver": {"bytes": metrics["bytes_received"], "bits_per_second": None, "bytes_after_stop": None},
    }
    if window_ns:
        from qoslab.methods.tcp import rate_bps

        stream["receiver"]["bits_per_second"] = rate_bps(int(metrics["bytes_received"]), window_ns)
    return {
        "test": t.method,
        "name": t.name,
        "from": t.from_,
        "to": t.to,
        "parameters": dict(params),
        "metrics": metrics,
        "streams": [stream],
        "socket_buffers": {
            "sndbuf": tx.get("sndbuf"),
            "rcvbuf": rx.get("rcvbuf"),
            "snd_wscale": info.get("snd_wscale"),
            "rcv_wscale": rinfo.get("rcv_wscale"),
            "receiver_rcv_space": rinfo.get("rcv_space"),
            "receiver_rcv_ssthresh": rinfo.get("rcv_ssthresh"),
        },
        "tcp_info": {"sender": info, "receiver": rinfo},
        # How long each tool was runnable and waited for a CPU over the transfer (s).
        "tool_cpu_wait_s": {
            "transmitter": round(int(tx.get("cpu_wait_ns") or 0) / 1e9, 6),
            "receiver": round(int(rx.get("cpu_wait_ns") or 0) / 1e9, 6),
        },
    }
