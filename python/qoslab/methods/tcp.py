"""TCP methods: ``tcp.bulk`` (iperf3-like) and ``tcp.transfer`` (ttcp-like).

``tcp.bulk`` sends for ``duration`` (iperf3 ``-t``) or ``bytes`` in all (``-n``) over
``streams`` parallel connections (``-P``) and reports, as iperf3's JSON does, an entry
per interval (``-i``, default 1 s: bytes delivered, bits per second, retransmissions,
the congestion window and smoothed RTT at the interval's end, per stream and summed),
and per stream a sender and a receiver summary.

Every figure counts the measurement window (docs/metrics.md, "TCP"): from the
application's start to a timed test's stop, or to the last byte of a sized transfer at
the receiver. Intervals add up to the window's totals exactly; what the receiver gets
after the stop (a deep queue draining) is ``bytes_after_stop``, never added in. Each
figure is computed once, here (:func:`stream_window`, :func:`rate_bps`); the terminal
tables, ``--json`` and the records print these values. ``tcp.transfer`` sends ``bytes`` once
and reports how long it took as ttcp does: the transmitter's time from its first byte
to the acknowledgement of its last, the receiver's from first byte to last byte, and
the rates over each.

The simulator runs the sans-IO TCP of ``crates/sim/src/tcp`` (RFC 9293, NewReno per
RFC 6582, CUBIC per RFC 9438, SACK per RFC 2018/6675, RTO per RFC 6298, HyStart or
RFC 9406 HyStart++ when asked, RACK-TLP per RFC 8985) with Linux's defaults unless the test's ``tcp`` table
says otherwise. With ``trace = true`` each stream's record carries the sender's
per-ACK trace in columns (time, cwnd, ssthresh, SRTT, RTT sample, RTO, bytes in
flight, retransmissions, recovery).

``stack`` picks another implementation's defaults (seed 004's NetBSD 1.1, see
:data:`STACKS`); a key written in the ``tcp`` table wins over both.

Path MTU: each record says where the sender's path MTU ended (``path_mtu_bytes``, the IP
size of its full segments), the ICMP "fragmentation needed" it accepted and the routers
sent (RFC 1191), the black holes its MTU probing detected (RFC 4821, Linux
``tcp_mtu_probing``) and the longest time the receiver got nothing new
(``longest_stall_s``): a PMTU black hole shows as a stall to the end (``stalled``: the
receiver got nothing new for at least :data:`STALL_NS` before the window's end, the
transfer unfinished; a stall in the middle that recovers is not one).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from ipaddress import IPv4Address
from pathlib import Path
from typing import TYPE_CHECKING, Any

from qoslab.methods import DRAIN_NS, Plan, cpu_metrics
from qoslab.methods.common import endpoints, flow_result, ms
from qoslab.plan import Flow
from qoslab.plan import models as plan_models
from qoslab.scenario.node_tables import Host
from qoslab.scenario.test_tables import TcpBulk, TcpTransfer

if TYPE_CHECKING:
    from qoslab.backends.sim import Network
    from qoslab.plan.results_models import FlowResult, Results, TcpResult, TraceColumns

FLOW = 0
PORT = 5201  # iperf3's default port
START_NS = 100_000_000
"""The connection opens 100 ms into the run, after nothing: ARP is part of the transfer, as in a real run."""
SIZED_LIMIT_NS = 3600 * 1_000_000_000
"""A sized transfer has as long as it needs; the run stops an hour in at most."""
IPV4_TCP_HEADERS = 40
"""IPv4 and TCP headers without options: MSS = MTU − 40 (RFC 9293 §3.7.1)."""

MS = 1_000_000
"""One millisecond in ns."""

STACKS: dict[str, dict[str, Any]] = {
    "linux": {},
    # NetBSD 1.1 (1995), seed 004's laptops: the 4.4BSD-Lite TCP.
    "netbsd-1.1": {
        # 4.4BSD tcp_fasttimo runs every 200 ms (PR_FASTHZ = 5) for the whole host and
        # sends every pending delayed ACK (TF_DELACK): the ACK waits for the next tick,
        # 0-200 ms (Wright and Stevens, TCP/IP Illustrated vol. 2, §25.4). A second full
        # segment is acknowledged at once by tcp_output's window-update rule (the window
        # advanced by 2 segments, or by half the buffer; NetBSD 1.0 tcp_output.c rev
        # 1.10, 4.4BSD-Lite2 tcp_output.c 8.4), which the simulator applies on arrival,
        # as ttcp reads each segment as it comes.
        "delayed_ack_ns": 200 * MS,
        "delayed_ack_clock": True,
        # NetBSD's own change to 4.4BSD: an in-order segment with PSH is ACKed at once
        # (TH_PUSH -> TF_ACKNOW in TCP_REASS and in header prediction; NetBSD 1.0
        # sys/netinet/tcp_input.c rev 1.10 of 1994-06-29, still in rev 1.23.4.2 of
        # NetBSD 1.2, so in NetBSD 1.1 between them).
        "ack_on_push": True,
        # The sender's PSH is 4.4BSD tcp_output's "If we're sending everything we've
        # got, set PUSH" (off + len == so_snd.sb_cc), and what it has got is what ttcp's
        # write() calls put in the buffer: sosend sleeps until the space reaches
        # so_snd.sb_lowat, which soreserve sets to MCLBYTES (NetBSD 1.0
        # kern/uipc_socket2.c; 2048 on i386), or the rest of the write call.
        "send_low_water": 2048,
        # TCP_SENDSPACE = TCP_RECVSPACE = 1024*16 (NetBSD 1.0 netinet/tcp_usrreq.c),
        # which tcp_mss() rounds up to whole segments (see ROUNDED_BUFFERS).
        "send_buffer": 16384,
        "recv_buffer": 16384,
        # TCPTV_MIN: 2 slow-timer ticks of 500 ms (PR_SLOWHZ = 2), so the RTO is >= 1 s.
        "min_rto_ns": 1000 * MS,
        # SACK (RFC 2018, 1996) came to NetBSD years later.
        "sack": False,
        # 4.4BSD-Lite implements RFC 1323, but seed 004 says the ACKs are "40-byte
        # datagrams comprised of a 20-byte IP header and a 20-byte TCP header, and no
        # data": no timestamp option on the wire, so none here.
        "timestamps": False,
        # 4.4BSD tcp_mss(): snd_cwnd starts at one segment (slow start from 1 MSS).
        "initial_window": 1,
        # RACK and TLP (RFC 8985, 2021; Linux 3.10/4.4) did not exist in 1995.
        "rack": False,
        "tlp": False,
        # 4.4BSD tcp_input opens the window once per ACK of new data: by t_maxseg below
        # snd_ssthresh, by t_maxseg²/snd_cwnd above it, whatever the ACK covers
        # (Wright and Stevens, TCP/IP Illustrated vol. 2, ch. 29, tcp_input's ACK
        # processing, "open the congestion window"; byte counting, RFC 3465, is of 2003).
        # Net/3's avoidance also adds maxseg/8 per ACK ("to help larger windows open
        # quickly enough"), which NetBSD removed only later: NetBSD 1.0's tcp_input.c rev
        # 1.10 and NetBSD 1.2's rev 1.23.4.2 both have `incr * incr / cw + incr / 8`.
        "cwnd_growth": "4.4bsd",
        # 4.4BSD tcp_newtcpcb: t_rxtcur = ((TCPTV_SRTTBASE >> 2) + (TCPTV_SRTTDFLT << 2))
        # >> 1 = (0 + 24) >> 1 = 12 ticks of 500 ms: the SYN is retried after about 6 s
        # (Stevens, TCP/IP Illustrated vol. 1, §18.3 "Timeout of Connection
        # Establishment": 5.8 s, then 24 s, on a 500-ms clock).
        "initial_rto_ns": 6000 * MS,
    },
    # Windows NT 4.0 (1996), seed 001's workstations.
    "windows-nt-4.0": {
        # Delayed ACKs: every second segment or after 200 ms (TcpDelAckTicks, default 2
        # ticks of 100 ms, settable from NT 4.0 SP4; JSI tip 1424, Windows 2000 registry
        # reference "TcpDelAckTicks").
        "delayed_ack_ns": 200 * MS,
        # Microsoft, "TCP/IP Implementation Details" (the Windows NT 3.5x text, kept in
        # the later editions and in the Windows CE documentation, "Delayed
        # Acknowledgments"): "As data is received by TCP on a given connection, it only
        # sends an acknowledgment back if one of the following conditions is met: No
        # ACK was sent for the previous segment received. A segment is received, but no
        # other segment arrives within 200 milliseconds for that connection." So every
        # second segment of whatever size, not RFC 5681's every second full-sized one:
        # a lone segment waits the 200 ms, even a 65,495-octet one.
        "delayed_ack_any_segment": True,
        # The same list is the only occasion for an ACK: no window update when the
        # application's read reopens the window (4.4BSD's tcp_output sends one when
        # the edge moves by half the buffer). Microsoft's text describes none; read
        # literally, the window reopens with the next ACK of that rule.
        "window_update_on_read": False,
        # KB Q162179, "TCP Fast Retransmit and Recovery Added in WinNT 4.0 SP2", with
        # TcpMaxDupAcks (range 1-3) "the default is 2" (JSI tip 0730): two duplicate
        # ACKs, not RFC 5681's three. Nagle (RFC 896) and RFC 1122's silly-window
        # avoidance at both ends are the simulator's defaults and NT's too (KB Q214397,
        # "Design issues - Sending small data segments over TCP with Winsock", describes
        # Winsock's Nagle and the 200 ms delayed ACK together).
        "dup_ack_threshold": 2,
        # RFC 2001 §2 (1997), the slow start of the period: "initializes cwnd to one
        # segment". Microsoft's description of NT 4.0's initial window was not found;
        # larger initial windows (RFC 2414, 1998) came later.
        "initial_window": 1,
        # RFC 1323 window scaling and timestamps and RFC 2018 SACK arrived with Windows
        # 2000 (Microsoft, "Microsoft Windows 2000 TCP/IP Implementation Details"). KB
        # Q199947, "TCP/IP: Windows NT 4.0 Does Not Support TCP Scale Option": the
        # largest receive window of NT 4.0 is 65,535 bytes, the 16-bit header field.
        "sack": False,
        "timestamps": False,
        "window_scaling": False,
        "rack": False,
        "tlp": False,
        # Slow start and congestion avoidance of RFC 2001 (1997), once per ACK: byte
        # counting (RFC 3465) is of 2003. (The per-ACK rule is RFC 2001's; Microsoft's
        # own description of NT 4.0's growth was not found, so this is the era's rule,
        # not a measured one.)
        "cwnd_growth": "acks",
        # KB Q223450: "The initial TCP retransmission timer was hard-coded to three
        # seconds" (RFC 1122 §4.2.3.1's value; TcpInitialRtt came with NT 4.0 SP6).
        "initial_rto_ns": 3000 * MS,
    },
}
"""TCP settings of each ``stack`` of a test, on top of the simulator's Linux defaults
(crates/sim/src/tcp/config.rs)."""

ROUNDED_BUFFERS = {"netbsd-1.1"}
"""Stacks whose socket buffers (and so the window) are whole segments: 4.4BSD tcp_mss()
"Make the socket buffers an integral number of mss units" (bufsize = roundup(bufsize,
mss), at most sb_max = 256 KiB; NetBSD 1.0 netinet/tcp_input.c): 16384 becomes 17520
with a 1460-octet MSS."""

SB_MAX = 256 * 1024
"""4.4BSD's sb_max (SB_MAX, sys/socketvar.h), the most tcp_mss() rounds a buffer up to."""


def bsd_buffer(size: int, mss: int) -> int:
    """A socket buffer as 4.4BSD tcp_mss() leaves it: rounded up to whole segments, at
    most sb_max (a buffer under one segment stays; tcp_mss lowers the MSS instead).

    >>> bsd_buffer(16384, 1460)
    17520
    >>> bsd_buffer(16384, 1024)
    16384
    """
    if size <= mss:
        return size
    return min(-(-size // mss) * mss, max(SB_MAX, size))


def nt4_default_window(mss: int) -> int:
    """Windows NT 4.0's receive window when neither TcpWindowSize nor setsockopt() sets
    one. Microsoft, Windows NT Server 4.0 Resource Kit, "TcpWindowSize": "By default,
    TcpWindowSize is set to 8 kilobytes (K) rounded up to the nearest MSS increment for
    the connection. If that increment is not at least four times the MSS, then it is
    adjusted to four times the MSS, with a maximum size of 64K" (65,535: KB Q199947, no
    window scaling).

    >>> nt4_default_window(1460)  # "The default is 8760 for Ethernet"
    8760
    >>> nt4_default_window(9140)  # CLIP's MTU 9180: four segments
    36560
    """
    rounded = -(-8192 // mss) * mss
    return min(max(rounded, 4 * mss), 65535)


def route_mss(net: Network, sender: str, destination: str) -> int:
    """The MSS the sender offers: the MTU of the port it sends by, less 40.

    The port is the one on the destination's subnet, else the one on the subnet of the
    sender's gateway, else its first addressed port (the simulator takes the route's).
    """
    from ipaddress import IPv4Address

    node = net.node_index(sender)
    ports = [p for p in net.ports[node] if p.address is not None]
    dst = IPv4Address(destination)
    gateway = getattr(net.scenario.node[sender], "gateway", None)
    for target in (dst, gateway):
        if target is None:
            continue
        for p in ports:
            if p.address is not None and target in p.address.network:
                return p.mtu - IPV4_TCP_HEADERS
    mtus = [p.mtu for p in (ports or net.ports[node])]
    return (mtus[0] if mtus else 1500) - IPV4_TCP_HEADERS


OPTION_FIELDS = {"delayed_ack_ns": "delayed_ack", "min_rto_ns": "min_rto", "initial_rto_ns": "initial_rto"}
"""Simulator option -> the ``tcp`` table's field, where the names differ."""


def _tcp_test(net: Network, index: int) -> TcpBulk | TcpTransfer:
    """Test ``index`` as a TCP test (plan_test sends only those here)."""
    t = net.scenario.test[index]
    if not isinstance(t, TcpBulk | TcpTransfer):
        raise TypeError(f"test[{index}] is a {t.method!r} test, not a TCP one")
    return t


def _stack_options(t: TcpBulk | TcpTransfer) -> dict[str, Any]:
    """The test's ``tcp`` table as config.rs ``TcpOptions``, with the stack's own defaults
    (:data:`STACKS`) where the table does not say otherwise."""
    stack = t.tcp
    opts: dict[str, Any] = {
        "congestion": "newreno" if t.congestion in ("reno", "newreno") else "cubic",
        "hystart": stack.hystart,
        "sack": stack.sack,
        "timestamps": stack.timestamps,
        "window_scaling": stack.window_scaling,
        "nagle": stack.nagle,
        "delayed_ack_ns": int(stack.delayed_ack),
        "delayed_ack_segments": stack.delayed_ack_segments,
        "delayed_ack_any_segment": stack.delayed_ack_any_segment,
        "window_update_on_read": stack.window_update_on_read,
        "dup_ack_threshold": stack.dup_ack_threshold,
        "min_rto_ns": int(stack.min_rto),
        "initial_window": stack.initial_window,
        "pmtu_discovery": stack.pmtu_discovery,
        "mtu_probing": stack.mtu_probing,
        "base_mss": int(stack.base_mss),
        "rack": stack.rack,
        "tlp": stack.tlp,
        "prr": stack.prr,
        "cubic_alpha": stack.cubic_alpha,
        "cwnd_growth": stack.cwnd_growth,
        # 0 = no bound (config.rs TcpOptions).
        "slow_start_limit": stack.slow_start_limit or 0,
        "initial_rto_ns": int(stack.initial_rto),
        "ack_on_push": stack.ack_on_push,
        "delayed_ack_clock": stack.delayed_ack_clock,
        "send_low_water": int(stack.send_low_water) if stack.send_low_water is not None else 0,
        # ttcp -l: the writer's write call (used only with a low water mark).
        "write_size": int(getattr(t, "buffer", 0) or 0),
    }
    # The stack's own defaults, where the tcp table does not say otherwise.
    written = stack.model_fields_set
    for key, value in STACKS[t.stack].items():
        if OPTION_FIELDS.get(key, key) not in written:
            opts[key] = value
    if stack.rto_backoff_cap is not None:
        opts["rto_backoff_cap_ns"] = int(stack.rto_backoff_cap)
    return opts


def _refuse_small_buffers(
    sizes: list[tuple[tuple[Any, ...], str, int]], mss: int, t: TcpBulk | TcpTransfer, source: str | Path | None
) -> None:
    """InputError at each buffer or window (``sizes``: where it was written, what, bytes)
    that cannot hold one segment."""
    from qoslab.backends.sim import LocatedProblems

    out = LocatedProblems(source)
    for path, what, value in sizes:
        if value < mss:
            out.add(
                path,
                f"a TCP {what.replace('_', ' ')} of {value} bytes is smaller than one segment: no full segment could ever be sent",
                expected=f"at least the MSS, {mss} bytes" + ("" if t.mss else " (the route MTU less 40)"),
                found=f"{value} bytes",
            )
    out.raise_if_any()


def options(net: Network, index: int, destination: str, *, source: str | Path | None = None) -> plan_models.TcpOptions:
    """The ``tcp`` options of the simulator's flows for test ``index`` (the plan's
    ``TcpOptions``, only the keys set here written: the core gives the rest Linux's
    values); refuses (InputError) a buffer or window below one segment."""

    t = _tcp_test(net, index)
    opts = _stack_options(t)
    stack = t.tcp
    if t.mss:
        opts["mss"] = int(t.mss)
    mss = int(t.mss) if t.mss else route_mss(net, t.from_, destination)
    # Where each buffer comes from, for the message if it is too small.
    sizes: list[tuple[tuple[Any, ...], str, int]] = []
    for key, host in (("send_buffer", t.from_), ("recv_buffer", t.to)):
        value = getattr(stack, key)
        if value is not None:
            sizes.append((("test", index, "tcp", key), key, int(value)))
            opts[key] = int(value)
        elif isinstance(node := net.scenario.node[host], Host) and node.socket_buffer is not None:
            # Seed 001: the hosts' socket buffers (SO_SNDBUF at the sender, SO_RCVBUF at the receiver).
            value = int(node.socket_buffer)
            sizes.append((("node", host, "socket_buffer"), key, value))
            opts[key] = value
    if t.stack == "windows-nt-4.0" and "recv_buffer" not in opts and not t.window:
        # No buffer given: NT 4.0's own receive window (TcpWindowSize's default).
        opts["recv_buffer"] = nt4_default_window(mss)
    if t.window:
        # iperf3 -w sets both socket buffers; a fixed window (seed 004's NetBSD) caps it.
        w = int(t.window)
        sizes.append((("test", index, "window"), "window", w))
        # The stack's own window scaling (off in 'windows-nt-4.0') stays off.
        opts.update(send_buffer=w, recv_buffer=w, max_window=w, window_scaling=opts["window_scaling"] and w > 65535)
    if t.stack in ROUNDED_BUFFERS:
        for key in ("send_buffer", "recv_buffer", "max_window"):
            if key in opts:
                opts[key] = bsd_buffer(int(opts[key]), mss)
    _refuse_small_buffers(sizes, mss, t, source)
    return plan_models.TcpOptions(**opts)


def rate_bps(octets: int, ns: int) -> float | None:
    """Bits per second of ``octets`` over ``ns`` nanoseconds, rounded to the milli-bit
    (iperf3's ``bits_per_second``); None over no time. Every TCP rate is this.

    >>> rate_bps(1_250_000, 1_000_000_000)
    10000000.0
    """
    return round(octets * 8 * 1e9 / ns, 3) if ns > 0 else None


def stream_window(f: FlowResult) -> dict[str, int]:
    """One connection's measurement window from its result entry: start and end (ns),
    and its counters inside it (``window`` of crates/sim/src/results.rs); a flow with no
    ``tcp`` entry has an empty window at :data:`START_NS`."""
    tcp = f.tcp
    if tcp is None:
        return dict.fromkeys(("bytes_received", "bytes_acked", "bytes_sent", "retransmits", "bytes_after_stop"), 0) | {
            "start_ns": START_NS,
            "end_ns": START_NS,
        }
    w = tcp.window
    return {
        "start_ns": tcp.start_ns,
        "end_ns": w.end_ns,
        "bytes_received": w.bytes_received,
        "bytes_acked": w.bytes_acked,
        "bytes_sent": w.bytes_sent,
        "retransmits": w.retransmits,
        "bytes_after_stop": tcp.bytes_after_stop,
    }


def goodput_mbps(f: FlowResult) -> float:
    """One connection's goodput (its result entry): data octets received in order inside
    its measurement window over the window, Mb/s; the figure its record prints."""
    w = stream_window(f)
    bps = rate_bps(w["bytes_received"], w["end_ns"] - w["start_ns"])
    return 0.0 if bps is None else bps / 1e6


def _stream_summary(f: FlowResult) -> dict[str, Any]:
    """iperf3's ``end.streams[]`` entry of one connection: sender and receiver, both
    over the connection's measurement window."""
    tcp = f.tcp
    w = stream_window(f)
    ns = w["end_ns"] - w["start_ns"]
    hystart = tcp.hystart_exit if tcp else None
    return {
        "id": f.id,
        "start_s": 0.0,
        "end_s": round(ns / 1e9, 9),
        "sender": {
            # Acknowledged by the window's end: what the sender knows arrived.
            "bytes": w["bytes_acked"],
            "bits_per_second": rate_bps(w["bytes_acked"], ns),
            "bytes_sent": w["bytes_sent"],
            "retransmits": w["retransmits"],
            "fast_retransmits": tcp.fast_retransmits if tcp else 0,
            "timeouts": tcp.timeouts if tcp else 0,
            "tlp_probes": tcp.tlp_probes if tcp else 0,
            "rack_lost": tcp.rack_lost if tcp else 0,
            "max_snd_cwnd_bytes": tcp.max_cwnd_bytes if tcp else None,
            "min_rtt_ms": ms(tcp.min_rtt_ns if tcp else None),
            "mean_rtt_ms": ms(tcp.mean_rtt_ns if tcp else None),
            "max_rtt_ms": ms(tcp.max_rtt_ns if tcp else None),
            "hystart_exit": None
            if hystart is None
            else {"time_ns": hystart.time_ns, "cwnd_bytes": hystart.cwnd_bytes, "reason": hystart.reason},
        },
        "receiver": {
            "bytes": w["bytes_received"],
            "bits_per_second": rate_bps(w["bytes_received"], ns),
            "bytes_after_stop": w["bytes_after_stop"],
        },
    }


def intervals(each: list[FlowResult], start_ns: int) -> list[dict[str, Any]]:
    """iperf3's ``intervals``: per interval, each stream's delta and the sum.

    ``bytes`` is what the receiver got in order during the interval (so
    ``bits_per_second`` is goodput); ``sent_bytes`` what the sender put on the wire,
    retransmissions included; ``snd_cwnd_bytes`` and ``rtt_ms`` the sender's state at
    the interval's end.
    """
    from qoslab.plan.results_models import IntervalRecord

    rows = [(f.id, (f.tcp.intervals if f.tcp else None) or []) for f in each]
    n = max((len(r) for _, r in rows), default=0)
    out = []
    before = IntervalRecord(
        end_ns=start_ns, bytes_received=0, bytes_sent=0, retransmits=0, bytes_acked=0, cwnd_bytes=0, srtt_ns=None
    )
    for k in range(n):
        streams: list[dict[str, Any]] = []
        for fid, recs in rows:
            if k >= len(recs):
                continue
            r = recs[k]
            prev = recs[k - 1] if k else before
            got = r.bytes_received - prev.bytes_received
            streams.append(
                {
                    "id": fid,
                    "start_s": round((prev.end_ns - start_ns) / 1e9, 9),
                    "end_s": round((r.end_ns - start_ns) / 1e9, 9),
                    "bytes": got,
                    "bits_per_second": rate_bps(got, r.end_ns - prev.end_ns),
                    "sent_bytes": r.bytes_sent - prev.bytes_sent,
                    "retransmits": r.retransmits - prev.retransmits,
                    "snd_cwnd_bytes": r.cwnd_bytes,
                    "rtt_ms": ms(r.srtt_ns),
                }
            )
        if not streams:
            continue
        total = sum(s["bytes"] for s in streams)
        span_ns = round((streams[0]["end_s"] - streams[0]["start_s"]) * 1e9)
        out.append(
            {
                "streams": streams,
                "sum": {
                    "start_s": streams[0]["start_s"],
                    "end_s": streams[0]["end_s"],
                    "bytes": total,
                    "bits_per_second": rate_bps(total, span_ns),
                    "retransmits": sum(s["retransmits"] for s in streams),
                },
            }
        )
    return out


def _sum_metrics(each: list[FlowResult], tcps: list[TcpResult], began: int) -> dict[str, Any]:
    """The test's totals over its streams (``each``, their ``tcp`` entries ``tcps``),
    from ``began``, the application's own start."""
    # The measurement window of the test (iperf3's sum): from the first start to the
    # last stream's end; the streams' own windows sum inside it.
    windows = [stream_window(x) for x in each]
    ended = max((w["end_ns"] for w in windows), default=began)
    delivered = sum(w["bytes_received"] for w in windows)
    goodput = rate_bps(delivered, ended - began)
    metrics: dict[str, Any] = {
        "throughput_mbps": round(goodput / 1e6, 6) if goodput is not None else 0.0,
        "window_s": round((ended - began) / 1e9, 9),
        "bytes_received": delivered,
        "bytes_after_stop": sum(w["bytes_after_stop"] for w in windows),
        "bytes_acked": sum(w["bytes_acked"] for w in windows),
        "bytes_sent": sum(w["bytes_sent"] for w in windows),
        "retransmits": sum(w["retransmits"] for w in windows),
        "fast_retransmits": sum(x.fast_retransmits for x in tcps),
        "timeouts": sum(x.timeouts for x in tcps),
        "tlp_probes": sum(x.tlp_probes for x in tcps),
        "rack_lost": sum(x.rack_lost for x in tcps),
        "srtt_ms": ms(each[0].tcp.srtt_ns if each[0].tcp else None),
        "max_cwnd_bytes": max((x.max_cwnd_bytes for x in tcps), default=0),
        # How long the test waited for its link (a PPP session's discovery,
        # authentication and IPCP) before it began.
        "link_wait_s": round((began - START_NS) / 1e9, 9),
    }
    return metrics


def _transfer_metrics(t: TcpTransfer, flow: FlowResult, began: int) -> dict[str, Any]:
    """A sized transfer's completion, and its times and rates by ttcp's two clocks."""
    out: dict[str, Any] = {}
    tcp = flow.tcp
    done, acked = (tcp.completed_ns, tcp.acked_ns) if tcp else (None, None)
    first_tx, first_rx = tcp.first_tx_ns if tcp else None, flow.first_rx_ns
    out["completed"] = done is not None
    out["transfer_time_s"] = None if done is None else round((done - began) / 1e9, 9)
    # ttcp -t: the transmitter's clock, first byte sent to last byte acknowledged;
    # ttcp -r: the receiver's, first byte to last byte received. The receiver's
    # rate counts what arrived after its clock started: the first delivery (a
    # segment or more) crossed the path before, and counting it would put a
    # transfer of a few segments above the line (2 segments in 1 segment time).
    tx_ns = None if acked is None or first_tx is None else acked - first_tx
    rx_ns = None if done is None or first_rx is None else done - first_rx
    after_first = int(t.bytes) - (tcp.first_rx_bytes if tcp else 0)
    out["sender_time_s"] = None if tx_ns is None else round(tx_ns / 1e9, 9)
    out["receiver_time_s"] = None if rx_ns is None else round(rx_ns / 1e9, 9)
    out["receiver_bytes_timed"] = None if rx_ns is None else after_first
    tx_bps = rate_bps(int(t.bytes), tx_ns) if tx_ns else None
    rx_bps = rate_bps(after_first, rx_ns) if rx_ns else None
    out["sender_rate_mbps"] = None if tx_bps is None else round(tx_bps / 1e6, 6)
    out["receiver_rate_mbps"] = None if rx_bps is None else round(rx_bps / 1e6, 6)
    return out


def _flows_of(
    t: TcpBulk | TcpTransfer,
    common: Callable[..., plan_models.TcpFlow],
    parameters: dict[str, Any],
    streams: int,
    interval_ns: int,
) -> tuple[list[Flow], int]:
    """The test's TCP flows (``common`` given each stream's id, port and end) and the
    run's length; adds what the test sends to ``parameters``."""
    if isinstance(t, TcpBulk):
        sized = t.bytes is not None
        shares: list[int] = []
        if t.bytes is not None:
            # iperf3 -n counts the bytes of all streams together: share them out.
            total = int(t.bytes)
            shares = [total // streams + (1 if i < total % streams else 0) for i in range(streams)]
        stop = START_NS + int(t.duration)
        record_ns = interval_ns
        flows: list[Flow] = [
            common(
                id=FLOW + i,
                dst_port=PORT + i,
                stop_ns=stop,
                **({"bytes": shares[i]} if sized else {}),
                **({"interval_ns": record_ns} if record_ns > 0 else {}),
            )
            for i in range(streams)
        ]
        duration = stop + DRAIN_NS
        parameters.update(streams=streams, interval_s=interval_ns / 1e9 if interval_ns else None)
        if t.bytes is not None:
            parameters["bytes"] = int(t.bytes)
            parameters["max_duration_s"] = int(t.duration) / 1e9
        else:
            parameters["duration_s"] = int(t.duration) / 1e9
    else:
        stop = START_NS + SIZED_LIMIT_NS
        flows = [common(id=FLOW, dst_port=PORT, bytes=int(t.bytes), stop_ns=stop)]
        duration = stop
        parameters.update(bytes=int(t.bytes))
    return flows, duration


def plan(net: Network, index: int, *, source: str | Path | None = None) -> Plan:
    """The flows of a ``tcp.bulk`` or ``tcp.transfer`` test, and how to read them back."""
    t = _tcp_test(net, index)
    src, dst = endpoints(net, index, source=source)
    opts = options(net, index, dst, source=source)
    streams = getattr(t, "streams", 1)
    interval_ns = int(getattr(t, "interval", 0) or 0)
    common = partial(
        plan_models.TcpFlow,
        kind="tcp",
        from_=src,
        to=IPv4Address(dst),
        start_ns=START_NS,
        tcp=opts,
        trace=bool(t.trace),
    )
    parameters: dict[str, Any] = {
        "window_bytes": t.window,
        "congestion": opts.congestion.value if opts.congestion is not None else None,
        "hystart": opts.hystart.value if opts.hystart is not None else None,
        "stack": t.stack,
        "destination": dst,
    }
    flows, duration = _flows_of(t, common, parameters, streams, interval_ns)

    def records(results: Results) -> list[dict[str, Any]]:
        each = [flow_result(results, f.id) for f in flows]
        tcps = [x.tcp for x in each if x.tcp is not None]
        # The application's own start and stop: later than planned when it waited for
        # its PPP link (iperf is run once pppd says the link is up).
        began = min((x.tcp.start_ns if x.tcp else START_NS for x in each), default=START_NS)
        metrics = _sum_metrics(each, tcps, began)
        metrics.update(path_metrics(results, each))
        if isinstance(t, TcpTransfer):
            metrics.update(_transfer_metrics(t, each[0], began))
        metrics["cpu_util_pct"] = cpu_metrics(net, results)
        record: dict[str, Any] = {
            "test": t.method,
            "name": t.name,
            "from": t.from_,
            "to": t.to,
            "parameters": dict(parameters),
            "metrics": metrics,
            "streams": [_stream_summary(x) for x in each],
        }
        if t.method == "tcp.bulk" and interval_ns > 0:
            record["intervals"] = intervals(each, began)
        if t.trace:
            for stream, x in zip(record["streams"], each):
                stream["trace"] = _trace(x.tcp.trace if x.tcp else None)
        return [record]

    return Plan(flows, duration, records, [f.id for f in flows], parameters=parameters)


STALL_NS = 1_000_000_000
"""A transfer whose receiver got nothing new for this long before its window's end, the
transfer unfinished, is stalled (a PMTU black hole); a gap in the middle is not."""


def path_metrics(results: Results, flows: list[FlowResult]) -> dict[str, Any]:
    """What the senders of ``flows`` (result entries) learned of the path MTU: the
    smallest path MTU and MSS, ICMP "fragmentation needed" sent (by the routers) and
    received (by the senders), black holes found, probes, and the longest stall."""
    paths = [x.tcp for x in flows if x.tcp is not None]
    nodes = results.nodes
    stall = max((p.longest_stall_ns for p in paths), default=0)
    stalled = any(is_stalled(p) for p in paths)
    return {
        "path_mtu_bytes": min((v for p in paths if (v := p.path_mtu_bytes)), default=None),
        "mss_bytes": min((v for p in paths if (v := p.mss_bytes)), default=None),
        "frag_needed_received": sum(p.frag_needed_received for p in paths),
        "frag_needed_sent": sum(n.frag_needed_sent for n in nodes),
        "too_big_dropped_silently": sum(n.frag_needed_silent for n in nodes),
        "black_holes_detected": sum(p.black_holes_detected for p in paths),
        "mtu_probes": sum(p.mtu_probes for p in paths),
        "mtu_probes_failed": sum(p.mtu_probes_failed for p in paths),
        "longest_stall_s": round(stall / 1e9, 9),
        "stalled": stalled,
    }


def is_stalled(tcp: TcpResult) -> bool:
    """A connection (its result's ``tcp`` entry) stalled at the end: unfinished, its
    receiver had got nothing new for :data:`STALL_NS` or more when the window ended."""
    return tcp.stall_at_end_ns >= STALL_NS


def _trace(trace: TraceColumns | None) -> dict[str, list[Any]] | None:
    """A sender's per-ACK trace as its stream's ``trace`` prints it: the columns in the
    order the core writes them (docs/metrics.md, TCP trace)."""
    if trace is None:
        return None
    return {
        "time_ns": trace.time_ns,
        "cwnd_bytes": trace.cwnd_bytes,
        "ssthresh_bytes": trace.ssthresh_bytes,
        "srtt_ns": trace.srtt_ns,
        "rtt_sample_ns": trace.rtt_sample_ns,
        "rto_ns": trace.rto_ns,
        "bytes_in_flight": trace.bytes_in_flight,
        "retransmits": trace.retransmits,
        "in_recovery": trace.in_recovery,
    }
