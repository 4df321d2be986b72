"""qoslab's own ttcp for ``tcp.transfer`` on the emulation backend: a receiver (in the
``to`` node's namespace) and a transmitter (in the ``from`` node's) that move ``bytes``
once over one TCP connection and time it as docs/metrics.md's TCP section defines
``transfer_time_s``, ``sender_time_s`` and ``receiver_time_s``.

Why not iperf3 ``-n``: iperf3 starts its clocks after its control connection and its
own set-up, and its sender stops when it has *written* the bytes, not when they are
acknowledged; the metric's window begins at the data connection's ``connect()`` (the
handshake and ARP in it) and ends at the last byte at the receiver. Both ends here read
CLOCK_MONOTONIC, which network namespaces share (only a time namespace would not), so
an instant taken by the receiver and one taken by the transmitter are on one clock.

Run as ``python -m qoslab.backends.emu.transfer_tool receive|send ...``; each prints
one JSON object on stdout (the receiver first a ``ready`` line once it listens).

The instants (CLOCK_MONOTONIC, ns):

- ``start_ns`` (transmitter): just before ``connect()``;
- ``first_tx_ns`` (transmitter): just before the first ``send()`` of data;
- ``acked_ns`` (transmitter): the first poll (every :data:`POLL_S`) after the last
  write that finds nothing left in the socket's send queue (``SIOCOUTQ`` = 0, tcp(7):
  written and not yet acknowledged), so the last byte's acknowledgement at most one
  poll earlier;
- ``first_rx_ns``, ``first_rx_bytes`` (receiver): the return of the first ``recv()``
  that brought data, and how many bytes it brought (the first in-order delivery);
- ``last_rx_ns`` (receiver): the return of the ``recv()`` that brought the last byte.

Socket buffers: ``--rcvbuf`` sets SO_RCVBUF at the receiver before ``listen()`` (so the
window scale is chosen with it, tcp(7)), ``--sndbuf`` SO_SNDBUF at the transmitter before
``connect()``; either left out keeps Linux's own autotuned buffer (tcp_rmem, tcp_wmem).
Linux doubles the value for its bookkeeping (socket(7)), and each end reports what it
asked for and was granted (``getsockopt``) and, at the end, its TCP_INFO.
"""

from __future__ import annotations

import argparse
import fcntl
import json
import socket
import struct
import sys
import time
from typing import Any

SIOCOUTQ = 0x5411
"""TIOCOUTQ, the ioctl tcp(7) calls SIOCOUTQ: bytes in the send queue not yet
acknowledged (include/uapi/asm-generic/ioctls.h)."""
TCP_INFO_FORMAT = "7Bx24I"
"""The head of ``struct tcp_info`` (include/uapi/linux/tcp.h): state, ca_state,
retransmits, probes, backoff, options, the window scales' byte (snd_wscale in the low
nibble), one byte of flags, then 24 u32: rto, ato, snd_mss, rcv_mss, unacked, sacked, lost, retrans,
fackets, last_data_sent, last_ack_sent, last_data_recv, last_ack_recv, pmtu,
rcv_ssthresh, rtt, rttvar, snd_ssthresh, snd_cwnd, advmss, reordering, rcv_rtt,
rcv_space, total_retrans."""
TCP_INFO_FIELDS = (
    "rto_us",
    "ato_us",
    "snd_mss",
    "rcv_mss",
    "unacked",
    "sacked",
    "lost",
    "retrans",
    "fackets",
    "last_data_sent_ms",
    "last_ack_sent_ms",
    "last_data_recv_ms",
    "last_ack_recv_ms",
    "pmtu",
    "rcv_ssthresh",
    "rtt_us",
    "rttvar_us",
    "snd_ssthresh",
    "snd_cwnd",
    "advmss",
    "reordering",
    "rcv_rtt_us",
    "rcv_space",
    "total_retrans",
)
POLL_S = 0.0005
"""How often the transmitter looks at its send queue after the last write: the
resolution of ``acked_ns`` (0.5 ms; a serial line's ACK takes 4.7 ms at 115.2 kb/s)."""
READ_SIZE = 65536
"""The receiver's read call, bytes (what arrives is handed over as it is in order)."""


def cpu_wait_ns() -> int:
    """Nanoseconds this (single-threaded) process has spent runnable and waiting for a
    CPU so far: /proc/self/schedstat's second field, run_delay (Linux
    Documentation/scheduler/sched-stats.rst). A receiver that waits for a CPU reads late
    and its kernel ACKs late; a transfer over which the tools waited long measured the
    machine's load."""
    with open("/proc/self/schedstat") as f:
        return int(f.read().split()[1])


def tcp_info(sock: socket.socket) -> dict[str, int]:
    """The kernel's ``struct tcp_info`` head (:data:`TCP_INFO_FIELDS`, and the
    negotiated window scales ``snd_wscale`` and ``rcv_wscale``)."""
    size = struct.calcsize(TCP_INFO_FORMAT)
    raw = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, size)
    values = struct.unpack(TCP_INFO_FORMAT, raw[:size])
    out = dict(zip(TCP_INFO_FIELDS, values[7:], strict=True))
    out["snd_wscale"], out["rcv_wscale"] = values[6] & 0x0F, values[6] >> 4
    return out


def _buffers(sock: socket.socket, option: int, size: int | None) -> dict[str, int | None]:
    """Set one socket buffer to ``size`` (if given); what was asked and granted."""
    if size:
        sock.setsockopt(socket.SOL_SOCKET, option, size)
    return {"asked": size, "granted": sock.getsockopt(socket.SOL_SOCKET, option)}


def receive(address: str, port: int, size: int, rcvbuf: int | None) -> dict[str, Any]:
    """Accept one connection on ``address:port`` and read ``size`` bytes from it."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    granted = _buffers(listener, socket.SO_RCVBUF, rcvbuf)
    listener.bind((address, port))
    listener.listen(1)
    print("ready", flush=True)
    conn, _ = listener.accept()
    waited = cpu_wait_ns()
    listener.close()
    got = 0
    first_ns = first_bytes = last_ns = None
    buf = bytearray(READ_SIZE)
    while True:
        n = conn.recv_into(buf)
        now = time.monotonic_ns()
        if n == 0:
            break
        if first_ns is None:
            first_ns, first_bytes = now, n
        got += n
        if got >= size and last_ns is None:
            last_ns = now
    info = tcp_info(conn)
    # Where Linux's autotuning took an unset buffer by the end (tcp_rmem).
    granted["at_end"] = conn.getsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF)
    conn.close()
    waited = cpu_wait_ns() - waited
    return {
        "bytes": got,
        "first_rx_ns": first_ns,
        "first_rx_bytes": first_bytes,
        "last_rx_ns": last_ns,
        "rcvbuf": granted,
        "cpu_wait_ns": waited,
        "tcp_info": info,
    }


def send(
    address: str, port: int, size: int, sndbuf: int | None, write: int, congestion: str, mss: int | None
) -> dict[str, Any]:
    """Connect to ``address:port``, write ``size`` bytes ``write`` at a time, and wait
    for their acknowledgement."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    granted = _buffers(sock, socket.SO_SNDBUF, sndbuf)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, congestion.encode())
    if mss:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_MAXSEG, mss)
    block = bytes(write)
    waited = cpu_wait_ns()
    start_ns = time.monotonic_ns()
    sock.connect((address, port))
    connected_ns = time.monotonic_ns()
    first_tx_ns = None
    left = size
    while left > 0:
        chunk = block if left >= write else block[:left]
        if first_tx_ns is None:
            first_tx_ns = time.monotonic_ns()
        sock.sendall(chunk)
        left -= len(chunk)
    unacked = bytearray(4)
    while True:
        fcntl.ioctl(sock.fileno(), SIOCOUTQ, unacked)
        if struct.unpack("i", unacked)[0] == 0:
            acked_ns = time.monotonic_ns()
            break
        time.sleep(POLL_S)
    waited = cpu_wait_ns() - waited
    info = tcp_info(sock)
    granted["at_end"] = sock.getsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF)
    sock.close()
    return {
        "bytes": size,
        "start_ns": start_ns,
        "connected_ns": connected_ns,
        "first_tx_ns": first_tx_ns,
        "acked_ns": acked_ns,
        "sndbuf": granted,
        "cpu_wait_ns": waited,
        "congestion": congestion,
        "tcp_info": info,
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="qoslab.backends.emu.transfer_tool")
    sub = p.add_subparsers(dest="role", required=True)
    r = sub.add_parser("receive")
    r.add_argument("address")
    r.add_argument("--port", type=int, required=True)
    r.add_argument("--bytes", type=int, required=True)
    r.add_argument("--rcvbuf", type=int)
    s = sub.add_parser("send")
    s.add_argument("address")
    s.add_argument("--port", type=int, required=True)
    s.add_argument("--bytes", type=int, required=True)
    s.add_argument("--sndbuf", type=int)
    s.add_argument("--write", type=int, required=True)
    s.add_argument("--congestion", required=True)
    s.add_argument("--mss", type=int)
    a = p.parse_args(argv)
    if a.role == "receive":
        out = receive(a.address, a.port, a.bytes, a.rcvbuf)
    else:
        out = send(a.address, a.port, a.bytes, a.sndbuf, a.write, a.congestion, a.mss)
    json.dump(out, sys.stdout)
    print(flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
