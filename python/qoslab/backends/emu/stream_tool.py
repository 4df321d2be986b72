"""qoslab's own one-way UDP test streams for the emulation backend (RFC 2544 trials and
pcap replays): a sender and a receiver run inside the namespaces (``python -m
qoslab.backends.emu.stream_tool send|receive ...``), each datagram timed with the
kernel's software timestamps (SO_TIMESTAMPING) as :mod:`.echo_tool`'s are, with its
helpers and its 16-byte probe header (sequence number, stream, the sender's monotonic
send time).

- The **receiver** binds the test's port, prints ``ready``, and keeps, for every
  datagram that reaches it, its stream, sequence number, UDP payload octets and receive
  timestamp (the kernel's, CLOCK_REALTIME: when the device handed the frame to the stack,
  docs/metrics.md "The emulation backend"). When its standard input closes it prints
  them as one JSON line.
- The **sender** reads its schedule from standard input (one JSON line: each datagram's
  send offset in ns, stream, sequence number and UDP payload octets, in send order),
  prints ``ready``, and at the line ``go`` takes its start instant and sends each
  datagram at the start plus its offset (sleeping until it is due; one that is already
  due is sent at once, so a late start shifts nothing after it). It prints one JSON line:
  its start on CLOCK_REALTIME (``real0_ns``, read beside the monotonic start), the
  datagrams it handed to its IP layer per stream, and each one's transmit timestamp (the
  kernel's, in the device's transmit routine).

Both run under SCHED_FIFO (the backend starts them with ``chrt``) and sleep between
datagrams, so a loaded machine delays a datagram by a wake-up, not by a time slice.
"""

from __future__ import annotations

import argparse
import errno
import gc
import json
import os
import select
import socket
import sys
import time
from typing import Any

from qoslab.backends.emu.echo_tool import (
    ANCILLARY,
    HEADER,
    NS,
    drain_tx_timestamps,
    enable_timestamps,
    software_ns,
)

SO_RCVBUFFORCE = 33
"""include/uapi/asm-generic/socket.h: set the receive buffer past net.core.rmem_max (root).
Python's socket module does not name it."""
BUFFER_BYTES = 16 * 1024 * 1024
"""Receive buffer of both ends: the receiver's holds the arrivals between its reads, the
sender's holds its transmit timestamps (the error queue is charged to it) between
drains; 16 MB is a second of 64-byte frames at 100 Mb/s with the kernel's per-packet
overhead."""
DRAIN_EVERY = 64
"""The sender reads its transmit timestamps at least every this many datagrams."""
SPIN_NS = 50_000
"""A datagram due within this is sent without sleeping first (a sleep's wake-up costs
about as much)."""
IP_MTU_DISCOVER, IP_PMTUDISC_DO = 10, 2
"""include/uapi/linux/in.h: path MTU discovery per socket, and its "always set DF" mode
(a datagram larger than the path MTU is refused, not fragmented). Python's socket module
names them only on some builds."""
SOURCE_PORT = 49152
"""The sender's port, the simulator's source port of its UDP streams."""


def _big_buffer(sock: socket.socket) -> None:
    try:
        sock.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, BUFFER_BYTES)
    except PermissionError:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, BUFFER_BYTES)


def receive(address: str, port: int) -> dict[str, Any]:
    """The receiver: until standard input closes. Returns every arrival as
    ``[stream, seq, payload octets, rx_ns]`` in arrival order."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    _big_buffer(sock)
    sock.bind((address, port))
    enable_timestamps(sock)
    print("ready", flush=True)
    arrivals: list[list[int]] = []
    untimed = 0
    stdin = sys.stdin.fileno()

    def read() -> None:
        nonlocal untimed
        while True:
            try:
                data, anc, _flags, _peer = sock.recvmsg(65535, ANCILLARY, socket.MSG_DONTWAIT)
            except BlockingIOError:
                return
            if len(data) < HEADER.size:
                continue
            seq, stream, _sent = HEADER.unpack_from(data)
            ts = software_ns(anc)
            if ts is None:
                untimed += 1
                ts = time.time_ns()  # the read's own instant: later than the arrival
            arrivals.append([stream, seq, len(data), ts])

    while True:
        ready, _, _ = select.select([stdin, sock.fileno()], [], [])
        if sock.fileno() in ready:
            read()
        if stdin in ready and not os.read(stdin, 4096):
            break
    read()
    return {"arrivals": arrivals, "untimed": untimed}


def send(address: str, port: int, schedule: list[list[int]], *, dont_fragment: bool) -> dict[str, Any]:
    """The sender: ``schedule`` is ``[offset_ns, stream, seq, payload]`` per datagram in
    send order; it starts at the line ``go`` on standard input."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    _big_buffer(sock)
    try:
        sock.bind(("0.0.0.0", SOURCE_PORT))
    except OSError:
        pass  # taken (another sender in this namespace): any port
    if dont_fragment:
        sock.setsockopt(socket.IPPROTO_IP, IP_MTU_DISCOVER, IP_PMTUDISC_DO)
    enable_timestamps(sock)
    sock.connect((address, port))
    keys: list[tuple[int, int]] = []
    """(stream, seq) of each datagram the kernel took, in order: the OPT_ID key is the index."""
    sent: dict[int, int] = {}
    errors: dict[str, int] = {}
    tx: list[list[int]] = []

    def drain() -> None:
        for key, ts in drain_tx_timestamps(sock):
            if 0 <= key < len(keys):
                tx.append([*keys[key], ts])

    print("ready", flush=True)
    if sys.stdin.readline().strip() != "go":
        return {"real0_ns": None, "sent": {}, "tx": [], "errors": {"no go": 1}, "late_ns": {"p99": 0, "max": 0}}
    late: list[int] = []
    """How late each datagram was handed to the socket, ns (0: on time)."""
    zeros = {payload: bytes(payload - HEADER.size) for _o, _s, _q, payload in schedule}
    start, real0 = time.monotonic_ns(), time.time_ns()
    for k, (offset, stream, seq, payload) in enumerate(schedule):
        left = start + offset - time.monotonic_ns()
        if left > SPIN_NS:
            drain()
            left = start + offset - time.monotonic_ns()
            if left > 0:
                time.sleep(left / NS)
        elif k % DRAIN_EVERY == 0:
            drain()
        # Handed to IP: sent, as the simulator counts a datagram its own queue then drops.
        sent[stream] = sent.get(stream, 0) + 1
        late.append(max(0, time.monotonic_ns() - start - offset))
        try:
            sock.send(HEADER.pack(seq, stream, time.monotonic_ns()) + zeros[payload])
        except OSError as err:
            name = errno.errorcode.get(err.errno or 0, str(err.errno))
            errors[name] = errors.get(name, 0) + 1
            continue
        keys.append((stream, seq))
    time.sleep(0.05)  # the last datagrams' transmit timestamps
    drain()
    late.sort()
    lateness = {"p99": late[int(0.99 * (len(late) - 1))], "max": late[-1]} if late else {"p99": 0, "max": 0}
    return {
        "real0_ns": real0,
        "sent": {str(s): n for s, n in sent.items()},
        "tx": tx,
        "errors": errors,
        "late_ns": lateness,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m qoslab.backends.emu.stream_tool", description=__doc__)
    parser.add_argument("role", choices=["send", "receive"])
    parser.add_argument("address", help="receive: the address to bind; send: the receiver's address")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--dont-fragment", action="store_true")
    args = parser.parse_args(argv)
    # No collector pauses while timing: the arrivals and timestamps kept are plain lists
    # that hold no cycles, and a full collection over them takes milliseconds.
    gc.disable()
    if args.role == "receive":
        out = receive(args.address, args.port)
    else:
        schedule = json.loads(sys.stdin.readline())
        out = send(args.address, args.port, schedule, dont_fragment=args.dont_fragment)
    print(json.dumps(out), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
