"""qoslab's own UDP echo (RFC 862) for the emulation backend: a server and a client run
inside the namespaces (``python -m qoslab.backends.emu.echo_tool server|client ...``),
each datagram timed with the kernel's software timestamps (SO_TIMESTAMPING,
Documentation/networking/timestamping.rst).

- The **server** binds the test's ports, returns every datagram unchanged to where it
  came from, counts what reached it per port and, for each echo, its turnaround: the
  echo's transmit timestamp minus the datagram's receive timestamp (both the kernel's,
  CLOCK_REALTIME). It prints ``ready`` once bound, and its counts as one JSON line when
  its standard input closes (the backend closes it after the client is done; a server
  whose parent died stops the same way).
- The **client** sends ``count`` datagrams of ``payload`` bytes ``gap`` apart on each
  stream (one connected socket per destination port, the streams sent together, as the
  simulator's sources start together), reads the echoes until ``wait`` after the sending
  interval (the measurement window of docs/metrics.md#window) or until every echo is
  back, and prints one JSON line: per stream the datagrams sent, the echoes received
  (the first copy of each sequence number) and, per echo, its round trip: the echo's
  receive timestamp minus the datagram's transmit timestamp, both the kernel's.

Where the timestamps are taken (Linux): the transmit one in the device's transmit
routine (``skb_tx_timestamp``: tun_net_xmit for the TAP of an emulated link, veth_xmit
for a direct veth), the receive one when the device hands the frame to the stack
(``netif_rx``/``netif_receive_skb``). So a round trip counts the links, the far host's
kernel and the echo server, and not the client's own user-space time or its send and
receive system calls.

Every datagram's first 16 bytes are its sequence number (u32), its stream (u32) and the
client's send time (u64, CLOCK_MONOTONIC ns, informative), big-endian, as the
simulator's probe header is 16 bytes (methods/udp.py ``PROBE_HEADER``); the rest zeros.
"""

from __future__ import annotations

import argparse
import errno
import json
import os
import select
import socket
import struct
import sys
import time
from dataclasses import dataclass, field
from typing import Any

SO_TIMESTAMPING = 37
"""SO_TIMESTAMPING_OLD of include/uapi/asm-generic/socket.h, which is SO_TIMESTAMPING on
64-bit architectures (64-bit time_t: struct timespec of two 64-bit fields); also the
control message's type, SCM_TIMESTAMPING. Python's socket module does not name it."""

# include/uapi/linux/net_tstamp.h, enum SOF_TIMESTAMPING_*.
SOF_TIMESTAMPING_TX_SOFTWARE = 1 << 1
"""A transmit timestamp when the device driver sends the frame (``skb_tx_timestamp``)."""
SOF_TIMESTAMPING_RX_SOFTWARE = 1 << 3
"""A receive timestamp when the frame enters the stack from the device."""
SOF_TIMESTAMPING_SOFTWARE = 1 << 4
"""Report software timestamps (in ``ts[0]`` of struct scm_timestamping)."""
SOF_TIMESTAMPING_OPT_ID = 1 << 7
"""Each transmit timestamp carries a per-socket counter of the datagrams sent (from 0,
in ``ee_data``), which says which datagram it belongs to."""
SOF_TIMESTAMPING_OPT_TSONLY = 1 << 11
"""A transmit timestamp comes back without the datagram's bytes (only the control
messages), so no payload is looped back."""

FLAGS = (
    SOF_TIMESTAMPING_TX_SOFTWARE
    | SOF_TIMESTAMPING_RX_SOFTWARE
    | SOF_TIMESTAMPING_SOFTWARE
    | SOF_TIMESTAMPING_OPT_TSONLY
    | SOF_TIMESTAMPING_OPT_ID
)

SO_EE_ORIGIN_TIMESTAMPING = 4
"""struct sock_extended_err's ee_origin of a timestamp (include/uapi/linux/errqueue.h)."""
_EXTENDED_ERR = struct.Struct("=IBBBBII")
"""struct sock_extended_err: ee_errno, ee_origin, ee_type, ee_code, ee_pad, ee_info, ee_data."""
_TIMESPECS = struct.Struct("=qqqqqq")
"""struct scm_timestamping: ts[3] of struct timespec (tv_sec, tv_nsec); ts[0] is software."""
HEADER = struct.Struct("!IIQ")
"""The datagram's first 16 bytes: sequence number, stream, client send time."""
ANCILLARY = 512
"""Control message buffer: a timestamp and an extended error fit many times over."""
NS = 1_000_000_000


def enable_timestamps(sock: socket.socket) -> None:
    """Software transmit and receive timestamps on ``sock``."""
    sock.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPING, FLAGS)


def software_ns(ancdata: list[tuple[int, int, bytes]]) -> int | None:
    """``ts[0]`` of an SCM_TIMESTAMPING control message, in ns; None if absent or zero."""
    for level, kind, data in ancdata:
        if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPING and len(data) >= _TIMESPECS.size:
            sec, nsec = _TIMESPECS.unpack_from(data)[:2]
            return sec * NS + nsec if sec or nsec else None
    return None


def _timestamp_key(ancdata: list[tuple[int, int, bytes]]) -> int | None:
    """The OPT_ID key of a transmit timestamp read from the error queue (its
    sock_extended_err's ee_data, with origin SO_EE_ORIGIN_TIMESTAMPING)."""
    for level, _kind, data in ancdata:
        if level == socket.IPPROTO_IP and len(data) >= _EXTENDED_ERR.size:
            _errno, origin, _t, _c, _p, _info, key = _EXTENDED_ERR.unpack_from(data)
            if origin == SO_EE_ORIGIN_TIMESTAMPING:
                return int(key)
    return None


def drain_tx_timestamps(sock: socket.socket) -> list[tuple[int, int]]:
    """Every transmit timestamp waiting on ``sock``'s error queue: (key, ns)."""
    out: list[tuple[int, int]] = []
    while True:
        try:
            _data, anc, _flags, _addr = sock.recvmsg(0, ANCILLARY, socket.MSG_ERRQUEUE | socket.MSG_DONTWAIT)
        except BlockingIOError:
            return out
        key, ts = _timestamp_key(anc), software_ns(anc)
        if key is not None and ts is not None:
            out.append((key, ts))


def _quantile(sorted_ns: list[int], q: float) -> int | None:
    """Nearest-rank percentile (the smallest value with at least q of them at or below)."""
    if not sorted_ns:
        return None
    rank = max(1, -(-len(sorted_ns) * round(q * 1000) // 1000))
    return sorted_ns[min(rank, len(sorted_ns)) - 1]


def summary_ns(values: list[int]) -> dict[str, Any]:
    """min, mean, p50, p90, p99, max of ``values`` (ns; nearest rank), None when empty."""
    v = sorted(values)
    return {
        "count": len(v),
        "min": v[0] if v else None,
        "mean": sum(v) / len(v) if v else None,
        "p50": _quantile(v, 0.50),
        "p90": _quantile(v, 0.90),
        "p99": _quantile(v, 0.99),
        "max": v[-1] if v else None,
    }


@dataclass
class _ServerPort:
    sock: socket.socket
    port: int
    received: int = 0
    echoed: list[int] = field(default_factory=list)
    """The receive timestamp (ns, or 0 without one) of each echo sent, in send order (the
    OPT_ID key is the index)."""
    turnaround_ns: list[int] = field(default_factory=list)


def _serve_one(p: _ServerPort) -> None:
    """Answer every datagram waiting on ``p``'s socket, and read its transmit timestamps."""
    while True:
        try:
            data, anc, _flags, peer = p.sock.recvmsg(65535, ANCILLARY, socket.MSG_DONTWAIT)
        except BlockingIOError:
            break
        except ConnectionRefusedError:
            continue  # an earlier echo's ICMP port unreachable: the client is gone
        p.received += 1
        try:
            p.sock.sendto(data, peer)
        except OSError:
            continue
        p.echoed.append(software_ns(anc) or 0)
    for key, ts in drain_tx_timestamps(p.sock):
        if 0 <= key < len(p.echoed) and p.echoed[key]:
            p.turnaround_ns.append(ts - p.echoed[key])


def serve(address: str, ports: list[int]) -> dict[str, Any]:
    """The echo server: until standard input closes; returns its counts."""
    served = []
    for port in ports:
        sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        sock.bind((address, port))
        enable_timestamps(sock)
        served.append(_ServerPort(sock, port))
    print("ready", flush=True)
    by_fd = {p.sock.fileno(): p for p in served}
    stdin = sys.stdin.fileno()
    while True:
        ready, _, _ = select.select([stdin, *by_fd], [], [])
        for fd in ready:
            if fd != stdin:
                _serve_one(by_fd[fd])
        if stdin in ready and not os.read(stdin, 4096):
            break
    time.sleep(0.05)  # the last echoes' transmit timestamps
    for p in served:
        _serve_one(p)
    turnaround = [t for p in served for t in p.turnaround_ns]
    return {
        "ports": [{"port": p.port, "received": p.received, "echoed": len(p.echoed)} for p in served],
        "turnaround_ns": summary_ns(turnaround),
    }


@dataclass
class _Stream:
    sock: socket.socket
    port: int
    sent_seq: list[int] = field(default_factory=list)
    """Sequence number of each datagram the kernel took, in order (the OPT_ID key is the index)."""
    tx_ns: dict[int, int] = field(default_factory=dict)
    rx_ns: dict[int, int | None] = field(default_factory=dict)
    """Each echo received (first copy), with its receive timestamp (None: the kernel gave
    none; the echo counts, its round trip is not timed)."""
    refused: int = 0


def _read_stream(s: _Stream, stream: int, count: int) -> None:
    """The echoes and transmit timestamps waiting on stream ``s``'s socket."""
    while True:
        try:
            data, anc, _flags, _peer = s.sock.recvmsg(65535, ANCILLARY, socket.MSG_DONTWAIT)
        except BlockingIOError:
            break
        except ConnectionRefusedError:
            s.refused += 1  # ICMP port unreachable for an earlier datagram
            continue
        if len(data) < HEADER.size:
            continue
        seq, sid, _sent = HEADER.unpack_from(data)
        ts = software_ns(anc)
        if sid == stream and seq < count and seq not in s.rx_ns:
            s.rx_ns[seq] = ts
    for key, ts in drain_tx_timestamps(s.sock):
        if 0 <= key < len(s.sent_seq):
            s.tx_ns[s.sent_seq[key]] = ts


def _send(s: _Stream, stream: int, seq: int, payload: int) -> None:
    datagram = HEADER.pack(seq, stream, time.monotonic_ns()) + bytes(payload - HEADER.size)
    try:
        s.sock.send(datagram)
    except OSError as err:
        if err.errno not in (errno.ECONNREFUSED, errno.ENOBUFS, errno.EAGAIN):
            raise
        s.refused += err.errno == errno.ECONNREFUSED
        return
    s.sent_seq.append(seq)


def _wait(streams: list[_Stream], until_ns: int, count: int) -> None:
    """Read whatever arrives until the monotonic instant ``until_ns``."""
    by_fd = {s.sock.fileno(): (k, s) for k, s in enumerate(streams)}
    while True:
        left = until_ns - time.monotonic_ns()
        if left <= 0:
            return
        ready, _, _ = select.select(list(by_fd), [], [], left / NS)
        for fd in ready:
            k, s = by_fd[fd]
            _read_stream(s, k, count)


def client(address: str, ports: list[int], *, payload: int, count: int, gap_ns: int, wait_ns: int) -> dict[str, Any]:
    """The echo client: every stream's datagrams sent and their round trips timed."""
    streams = []
    for port in ports:
        sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        enable_timestamps(sock)
        sock.connect((address, port))
        streams.append(_Stream(sock, port))
    start = time.monotonic_ns()
    for seq in range(count):
        _wait(streams, start + seq * gap_ns, count)
        for k, s in enumerate(streams):
            _send(s, k, seq, payload)
    close = start + count * gap_ns + wait_ns
    # The window closes `wait` after the sending interval; stop earlier once every echo
    # of a timestamped datagram is back (nothing more can then arrive in the window).
    while time.monotonic_ns() < close and any(len(s.rx_ns) < len(s.sent_seq) for s in streams):
        _wait(streams, min(close, time.monotonic_ns() + 10_000_000), count)
    for k, s in enumerate(streams):
        _read_stream(s, k, count)
    return {"streams": [_stream_result(s) for s in streams]}


def _stream_result(s: _Stream) -> dict[str, Any]:
    """One stream's counts and round trips (echoes with both timestamps)."""
    rx = sorted(ts for ts in s.rx_ns.values() if ts is not None)
    timed = {seq: ts - s.tx_ns[seq] for seq, ts in s.rx_ns.items() if ts is not None and seq in s.tx_ns}
    return {
        "port": s.port,
        "sent": len(s.sent_seq),
        "received": len(s.rx_ns),
        "tx_timestamps": len(s.tx_ns),
        "refused": s.refused,
        "rtt_ns": [timed[seq] for seq in sorted(timed)],
        "first_rx_ns": rx[0] if rx else None,
        "last_rx_ns": rx[-1] if rx else None,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m qoslab.backends.emu.echo_tool", description=__doc__)
    parser.add_argument("role", choices=["server", "client"])
    parser.add_argument("address", help="server: the address to bind; client: the server's address")
    parser.add_argument("--ports", type=int, nargs="+", required=True)
    parser.add_argument("--payload", type=int, default=64)
    parser.add_argument("--count", type=int, default=1)
    parser.add_argument("--gap-ns", type=int, default=1_000_000)
    parser.add_argument("--wait-ns", type=int, default=2 * NS)
    args = parser.parse_args(argv)
    if args.role == "server":
        out = serve(args.address, args.ports)
    else:
        out = client(
            args.address, args.ports, payload=args.payload, count=args.count, gap_ns=args.gap_ns, wait_ns=args.wait_ns
        )
    print(json.dumps(out), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
