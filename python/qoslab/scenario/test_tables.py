"""The ``[[test]]`` tables: RFC 2544, ping, UDP flows and echo, TCP bulk and transfer, a
capture's replay, with their background traffic and TCP settings; ``method`` picks the kind."""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import (
    Field,
    model_validator,
)

from qoslab.scenario.base import U16_MAX, U32_MAX, FieldProblem, NodeName, Strict, ip_payload_fits
from qoslab.units import Rate, Ratio, Size, Time

# --------------------------------------------------------------------------- tests

RFC2544_FRAME_SIZES = [64, 128, 256, 512, 1024, 1280, 1518]
"""RFC 2544 §9.1: Ethernet frame sizes to test."""

FrameSizes = Annotated[list[Size], Field(min_length=1)]


class TestBase(Strict):
    """Fields every test has."""

    __test__ = False  # not a pytest test class

    name: str | None = Field(None, description="A label for the results.")
    from_: NodeName = Field(alias="from", description="The node that sends (the tester's transmit port).")
    to: NodeName = Field(description="The node that receives (the tester's receive port).")

    @model_validator(mode="after")
    def _lasts_some_time(self) -> TestBase:
        # A test of no duration measures nothing, and every rate would divide by zero.
        if getattr(self, "duration", None) == 0:
            raise FieldProblem(
                "duration", "a test must last some time", expected="a duration above 0, e.g. '10 s'", found="0 s"
            )
        return self


MAC_LITERAL_PATTERN = r"^[0-9A-Fa-f]{2}([:-][0-9A-Fa-f]{2}){5}$"
"""A MAC address as written: six octets in hex, ':' or '-' between them."""
MAC_OR_PORT_PATTERN = r"^([0-9A-Fa-f]{2}([:-][0-9A-Fa-f]{2}){5}|[A-Za-z][A-Za-z0-9_.-]*/[A-Za-z0-9_.-]+)$"
"""A MAC address, or a port's as 'node/port' (the port names `qoslab check` and the reports show: 'a/wlan0')."""


class RawStream(Strict):
    """A tester's raw stream (IXIA, Spirent): frames with the MACs given, no ARP (seed 000 §3, Fig. 10)."""

    dst_mac: Annotated[str, Field(pattern=MAC_OR_PORT_PATTERN)] | None = Field(
        None,
        description="Every test frame carries this destination MAC, whoever holds `to`'s address: a MAC "
        "('02:00:00:00:00:01') or a port's, 'node/port' ('a/wlan0'). Seed 000 Fig. 10 sent to station A's wireless "
        "adapter and received by sniffing (`promiscuous` on the receiver). None (default): resolved by ARP.",
    )
    src_mac: Annotated[str, Field(pattern=MAC_OR_PORT_PATTERN)] | None = Field(
        None,
        description="With `dst_mac`: the source MAC of the test frames, a MAC or 'node/port' (seed 000 Fig. 10: 'any "
        "virtual MAC address'); an individual address (IEEE 802.3 §3.2.3). None: the sender's own.",
    )

    @model_validator(mode="after")
    def _raw_macs(self) -> RawStream:
        if self.src_mac is not None and self.dst_mac is None:
            raise FieldProblem(
                "src_mac",
                "a source MAC is written only on a raw stream",
                expected="dst_mac too, or no src_mac",
                found=f"src_mac = {self.src_mac!r} alone",
            )
        src = self.src_mac or ""
        if re.match(MAC_LITERAL_PATTERN, src) and int(src[:2], 16) & 1:
            raise FieldProblem(
                "src_mac",
                "a source address is an individual address, its group bit clear (IEEE 802.3 §3.2.3)",
                expected="a first octet with bit 0 clear, e.g. '02:…'",
                found=repr(src),
            )
        if self.dst_mac is not None and getattr(self, "bidirectional", False):
            raise FieldProblem(
                "bidirectional",
                "a raw stream goes one way (its MACs are the forward direction's)",
                expected="false with dst_mac",
                found="true",
            )
        return self


class Rfc2544Base(TestBase, RawStream):
    """Fields the RFC 2544 methods share."""

    bidirectional: bool = Field(
        False,
        description="Send the same stream from `to` back to `from` at once (RFC 2544 §14: bidirectional "
        "traffic; rates are per direction).",
    )
    wait: Time = Field(  # type: ignore[assignment]  # a default as written, validated as a value
        "2 s",
        description="How long the receiver keeps counting after a trial's last frame (RFC 2544 §23: 'about 2 seconds' "
        "for frames still in the device); a frame that arrives later is lost (docs/metrics.md#window).",
    )


class Rfc2544Throughput(Rfc2544Base):
    """RFC 2544 §26.1: the highest rate at which no frame is lost, by binary search."""

    method: Literal["rfc2544.throughput"] = Field(description="Test method.")
    frame_sizes: FrameSizes = Field(
        default_factory=lambda: list(RFC2544_FRAME_SIZES), description="Frame sizes in bytes (RFC 2544 §9.1)."
    )
    duration: Time = Field("60 s", description="Length of each trial (RFC 2544 §24: at least 60 s).")  # type: ignore[assignment]  # a default as written, validated as a value
    max_rate: Rate | None = Field(None, description="Upper bound of the search; none = the sender's line rate.")
    loss_tolerance: Ratio = Field(0.0, description="Loss accepted as 'no loss' (0 by RFC 2544).")
    resolution: Ratio = Field(
        0.005,
        description="Stop the search when the interval between the highest passing and the lowest failing rate is this fraction "
        "of the path's bottleneck (`max_rate` when given; docs/metrics.md#rfc2544-throughput).",
    )


class Rfc2544Latency(Rfc2544Base):
    """RFC 2544 §26.2: latency at the throughput rate, per frame size."""

    method: Literal["rfc2544.latency"] = Field(description="Test method.")
    frame_sizes: FrameSizes = Field(
        default_factory=lambda: list(RFC2544_FRAME_SIZES), description="Frame sizes in bytes (RFC 2544 §9.1)."
    )
    rate: Rate | None = Field(None, description="Offered load; none = the measured throughput.")
    frame_rate: float | None = Field(
        None, gt=0, description="Offered load in frames per second (seed 000 uses 10 fps); overrides `rate`."
    )
    duration: Time = Field("120 s", description="Length of each trial (RFC 2544: 120 s).")  # type: ignore[assignment]  # a default as written, validated as a value
    trials: int = Field(20, ge=1, description="Repetitions averaged (RFC 2544: at least 20).")


class Rfc2544FrameLoss(Rfc2544Base):
    """RFC 2544 §26.3: frame loss rate at loads from 100 % down in steps."""

    method: Literal["rfc2544.frame_loss"] = Field(description="Test method.")
    frame_sizes: FrameSizes = Field(
        default_factory=lambda: list(RFC2544_FRAME_SIZES), description="Frame sizes in bytes."
    )
    step: Ratio = Field(0.1, description="Load decrement, a fraction of the line rate (RFC 2544: at most 10 %).")
    duration: Time = Field("60 s", description="Length of each trial (RFC 2544 §24: at least 60 s).")  # type: ignore[assignment]  # a default as written, validated as a value
    max_rate: Rate | None = Field(
        None, description="The 100 % load; none = the sender's line rate (the medium's maximum, RFC 2544 §26.3)."
    )


class Rfc2544BackToBack(Rfc2544Base):
    """RFC 2544 §26.4: the longest burst at line rate forwarded without loss."""

    method: Literal["rfc2544.back_to_back"] = Field(description="Test method.")
    frame_sizes: FrameSizes = Field(
        default_factory=lambda: list(RFC2544_FRAME_SIZES), description="Frame sizes in bytes."
    )
    duration: Time = Field("2 s", description="Longest burst to try (RFC 2544: at least 2 s).")  # type: ignore[assignment]  # a default as written, validated as a value
    trials: int = Field(50, ge=1, description="Repetitions (RFC 2544: at least 50).")
    max_rate: Rate | None = Field(
        None,
        description="The rate of the bursts; none = the sender's line rate (minimum inter-frame gap, RFC 2544 §26.4).",
    )


class Rfc2544Overload(Rfc2544Base):
    """An overload sweep as seed 000 Table 4: fixed offered frame rates, beyond the knee too;
    throughput and latency at each (not an RFC 2544 search; its trials and frame counting)."""

    method: Literal["rfc2544.overload"] = Field(description="Test method.")
    frame_sizes: FrameSizes = Field(
        default_factory=lambda: [1450], description="Frame sizes in bytes (seed 000 Table 4: 1450)."
    )
    frame_rates: Annotated[list[Annotated[float, Field(gt=0)]], Field(min_length=1)] = Field(
        default_factory=lambda: [float(fps) for fps in (10, 100, 500, 600, 620, 625, 630, 650, 700, 1000)],
        description="Offered loads in frames per second (seed 000 Table 4's FPS column).",
    )
    duration: Time = Field("60 s", description="Length of each trial (RFC 2544 §24: at least 60 s).")  # type: ignore[assignment]  # a default as written, validated as a value


Rfc2544Test = Rfc2544Throughput | Rfc2544Latency | Rfc2544FrameLoss | Rfc2544BackToBack | Rfc2544Overload
"""The RFC 2544 benchmarks: each a search of several trials (methods/rfc2544.py)."""


class Ping(TestBase):
    """ICMP echo: round-trip time and loss."""

    method: Literal["ping"] = Field(description="Test method.")
    count: int = Field(10, ge=1, description="Echo requests to send.")
    interval: Time = Field("1 s", description="Time between requests.")  # type: ignore[assignment]  # a default as written, validated as a value
    payload: Size = Field(56, description="ICMP data bytes (ping -s), at most 65,507 (an IPv4 datagram of 65,535).")

    @model_validator(mode="after")
    def _payload_fits(self) -> Ping:
        ip_payload_fits(self.payload, "ICMP echo data")
        return self


class UdpFlow(TestBase, RawStream):
    """A one-way UDP stream at a fixed rate or gap: throughput, loss, one-way delay, jitter."""

    method: Literal["udp.flow"] = Field(description="Test method.")
    payload: Size = Field(
        1472,
        description="UDP payload bytes per datagram; at most 65,507 (RFC 791 total length 65,535 less the IPv4 and UDP headers).",
    )
    dont_fragment: bool = Field(
        False,
        description="Set DF on every datagram (iperf3 --dont-fragment): too big for the path, it is refused at the sender or dropped by a router with ICMP 'fragmentation needed'; default false, datagrams are fragmented.",
    )
    rate: Rate | None = Field(None, description="Offered load; give this or `gap`.")
    gap: Time | None = Field(None, description="Time between datagrams; give this or `rate`.")
    count: int | None = Field(None, ge=1, description="Datagrams to send; none = for `duration`.")
    duration: Time = Field("10 s", description="How long to send when `count` is not given.")  # type: ignore[assignment]  # a default as written, validated as a value
    wait: Time = Field(  # type: ignore[assignment]  # a default as written, validated as a value
        "2 s",
        description="How long the receiver keeps counting after the sending stops (as RFC 2544 §23 waits for frames still "
        "on the way); a datagram that arrives later is late: counted apart and lost (docs/metrics.md#window).",
    )

    @model_validator(mode="after")
    def _rate_or_gap(self) -> UdpFlow:
        ip_payload_fits(self.payload, "UDP payload")
        if (self.rate is None) == (self.gap is None):
            raise FieldProblem(
                "rate",
                "give exactly one of 'rate' or 'gap'",
                expected="rate = RATE or gap = TIME",
                found="both" if self.rate else "neither",
            )
        return self


class UdpEcho(TestBase):
    """UDP datagrams echoed back by the receiver (seed 003): throughput and loss each way, RTT."""

    method: Literal["udp.echo"] = Field(description="Test method.")
    payload: Size = Field(1472, description="UDP payload bytes per datagram (seed 003: 25 to 1600); at most 65,507.")
    gap: Time = Field("1 ms", description="Time between datagrams (seed 003: 1 ms and 5 ms).")  # type: ignore[assignment]  # a default as written, validated as a value
    count: int = Field(10000, ge=1, description="Datagrams to send (seed 003: 10 000).")
    port: int = Field(7, ge=1, le=65535, description="The echo server's UDP port (RFC 862: 7).")
    streams: int = Field(
        1,
        ge=1,
        le=64,
        description="Echo streams sent at once, each `count` datagrams `gap` apart (seed 003: one per VPN); stream k (from 0) goes to port `port` + k.",
    )

    @model_validator(mode="after")
    def _ports_fit(self) -> UdpEcho:
        ip_payload_fits(self.payload, "UDP payload")
        if self.port + self.streams - 1 > 65535:
            raise FieldProblem(
                "streams",
                "the streams' ports run past 65535",
                expected=f"at most {65536 - self.port} streams from port {self.port}",
                found=str(self.streams),
            )
        return self


class PcapReplay(TestBase):
    """A capture file's IPv4 packets replayed as one UDP stream: each packet's size and the
    times between them (as tcpreplay keeps them), with the test's own addresses and port,
    not the capture's; throughput, loss, one-way delay and jitter as udp.flow's."""

    method: Literal["pcap.replay"] = Field(description="Test method.")
    file: str = Field(
        description="The capture to replay: classic pcap (link types Ethernet 1, raw IP 101, IPv4 228, Linux cooked 113 and 276, BSD loopback 0 and 108) or pcapng. A relative path is read from the scenario file's folder. Each IPv4 packet becomes one UDP datagram carrying its IPv4 payload less the 8-octet UDP header (at least the 16-octet probe); other packets are skipped and counted.",
    )
    speed: float = Field(
        1.0,
        gt=0,
        allow_inf_nan=False,
        description="Replay speed: the capture's times from its first IPv4 packet divided by this (2 = twice as fast, tcpreplay --multiplier).",
    )
    loop: int = Field(
        1,
        ge=1,
        le=U32_MAX,
        description="Times to send the capture (tcpreplay --loop); each pass starts one mean gap of the capture after the last packet of the pass before.",
    )
    dont_fragment: bool = Field(
        False,
        description="Set DF on every datagram (as udp.flow's): a datagram too big for the path is refused at the sender or dropped by a router with ICMP 'fragmentation needed'.",
    )
    wait: Time = Field(  # type: ignore[assignment]  # a default as written, validated as a value
        "2 s",
        description="How long the receiver keeps counting after the last datagram (as udp.flow's wait); a datagram that arrives later is late: counted apart and lost (docs/metrics.md#window).",
    )


TcpStack = Literal["linux", "netbsd-1.1", "windows-nt-4.0"]
_STACK_DOC = (
    "TCP implementation at both ends: 'linux' (CUBIC/NewReno, SACK, timestamps, 40 ms delayed ACK, 200 ms min RTO, "
    "IW 10, RACK-TLP, byte counting), 'netbsd-1.1' (seed 004's laptops, 4.4BSD-Lite TCP: no SACK or RACK-TLP, 200 ms delayed-ACK clock, ACK at once on PSH, 1 s min RTO, IW 1, "
    "no timestamps, 4.4BSD growth per ACK, 6 s initial RTO, 16 KiB socket buffers rounded up to whole segments, a 2 kB writer low water mark) or 'windows-nt-4.0' (seed 001's workstations: no SACK, timestamps or window scaling, "
    "200 ms delayed ACK for every second segment of any size, no window update on a read, IW 1, growth per ACK, fast retransmit after 2 duplicate ACKs, 3 s initial RTO, "
    "8 KiB of receive window rounded up to four or more whole segments unless a buffer is given); qoslab.methods.tcp.STACKS cites each."
)


class TcpSettings(Strict):
    """The TCP settings of a test's connections (both ends). Every default is Linux's, as
    crates/sim/src/tcp/config.rs documents with its source."""

    hystart: Literal["off", "classic", "hystart++"] = Field(
        "off",
        description="Leave slow start early on a rising RTT: 'classic' is Linux CUBIC's HyStart (ACK train + delay, Linux's own default), 'hystart++' is RFC 9406; 'off' = plain slow start to the first loss.",
    )
    sack: bool = Field(True, description="Offer SACK (RFC 2018) and recover with RFC 6675 when both ends do.")
    timestamps: bool = Field(
        True, description="Offer timestamps (RFC 7323 §3): 12 option bytes per segment, an RTT sample per ACK."
    )
    window_scaling: bool = Field(
        True, description="Offer window scaling (RFC 7323 §2); off caps the window at 65 535 bytes."
    )
    nagle: bool = Field(True, description="Nagle's algorithm (RFC 896); false = TCP_NODELAY.")
    delayed_ack: Time = Field(  # type: ignore[assignment]  # a default as written, validated as a value
        "40 ms",
        description="Delayed-ACK timer (RFC 5681 §4.2): Linux 40 ms, BSD 200 ms; '0 s' ACKs every segment at once.",
    )
    delayed_ack_segments: int = Field(
        2, ge=1, description="ACK at once after this many full-sized segments (RFC 5681 §4.2: 2)."
    )
    delayed_ack_clock: bool = Field(
        False,
        description="The delayed ACK waits for the next tick of one host-wide clock of period delayed_ack (4.4BSD's tcp_fasttimo every 200 ms), so 0 to delayed_ack, not a full delayed_ack per segment (Linux). On under stack 'netbsd-1.1'.",
    )
    ack_on_push: bool = Field(
        False,
        description="ACK at once an in-order segment that carries PSH (NetBSD's tcp_input since 1994, rev 1.10: TH_PUSH sets TF_ACKNOW). On under stack 'netbsd-1.1'.",
    )
    send_low_water: Size | None = Field(
        None,
        le=U32_MAX,
        description="A bulk sender's writer as 4.4BSD's sosend: blocked on a full send buffer it writes again only once this much is free (so_snd.sb_lowat = MCLBYTES, 2048 on i386), and PSH marks the segment that sends the last octet written; none = the buffer refilled at once, no PSH. 2 kB under stack 'netbsd-1.1'.",
    )
    delayed_ack_any_segment: bool = Field(
        False,
        description="Count segments of any size toward delayed_ack_segments (Windows NT: an ACK for every second segment, else after the delayed-ACK timer); false = full-sized segments as RFC 5681 §4.2, Linux and BSD. True under stack 'windows-nt-4.0'.",
    )
    dup_ack_threshold: int = Field(
        3,
        ge=1,
        le=U32_MAX,
        description="Duplicate ACKs that trigger fast retransmit (RFC 5681 §3.2: 3); 2 under stack 'windows-nt-4.0' (TcpMaxDupAcks' default, NT 4.0 SP2 and later).",
    )
    window_update_on_read: bool = Field(
        True,
        description="Send a window update when the application's read opens the window by half the buffer (4.4BSD tcp_output, Linux); false = the window reopens only on the delayed-ACK rule's ACKs (Windows NT 4.0's receiver as Microsoft describes it). False under stack 'windows-nt-4.0'.",
    )
    min_rto: Time = Field(  # type: ignore[assignment]  # a default as written, validated as a value
        "200 ms", description="Lower bound of the retransmission timeout: Linux 200 ms, RFC 6298 §2.4 1 s."
    )
    rto_backoff_cap: Time | None = Field(
        None,
        description="Cap on the exponentially backed-off RTO (seed 004's router: 100 ms); none = only RFC 6298's 60 s.",
    )
    initial_window: int = Field(10, ge=1, le=U32_MAX, description="Initial congestion window, segments (RFC 6928: 10).")
    send_buffer: Size | None = Field(
        None,
        le=U32_MAX,
        description="Send socket buffer (bounds the bytes in flight); none = the host's socket_buffer, else Linux's 4 MiB.",
    )
    recv_buffer: Size | None = Field(
        None,
        le=U32_MAX,
        description="Receive socket buffer (the largest window advertised); none = the host's socket_buffer, else Linux's 6 MiB.",
    )
    pmtu_discovery: bool = Field(
        True,
        description="Path MTU discovery (RFC 1191): DF on every segment, the MSS lowered on ICMP 'fragmentation needed' (Linux ip_no_pmtu_disc = 0, the default).",
    )
    mtu_probing: Literal[0, 1, 2] = Field(
        0,
        description="Packetization-layer PMTUD (RFC 4821) as Linux tcp_mtu_probing: 0 off (default), 1 after a black hole is detected, 2 always.",
    )
    base_mss: Size = Field(
        1024, le=U16_MAX, description="MSS MTU probing starts from (Linux tcp_base_mss, 1024 since Linux 4.2)."
    )
    rack: bool = Field(
        True,
        description="RACK time-based loss detection (RFC 8985 §6), with SACK: finds lost retransmissions without waiting for the RTO. Linux's default since 4.4 (tcp_recovery = 1); off under stack 'netbsd-1.1'.",
    )
    tlp: bool = Field(
        True,
        description="Tail Loss Probe (RFC 8985 §7), with SACK and RACK: a probe after 2·SRTT without ACKs, so tail losses are found before the RTO. Linux's default since 3.10 (tcp_early_retrans = 3); off under stack 'netbsd-1.1'.",
    )
    prr: bool = Field(
        False,
        description="Proportional Rate Reduction (RFC 6937) in SACK recovery: each ACK releases data in proportion to what it delivered instead of RFC 6675's cwnd = ssthresh at once. Linux's default since 3.2; off here, as ns-3's classic recovery.",
    )
    cubic_alpha: Literal["rfc9438", "constant", "linux"] = Field(
        "rfc9438",
        description="CUBIC's Reno-friendly estimate: 'rfc9438' grows it by 3(1−β)/(1+β) per window until it reaches the window before the last loss, then by 1 (RFC 9438 §4.3); 'constant' keeps 3(1−β)/(1+β) (RFC 8312, ns-3's TcpCubic); 'linux' is Linux's tcp_cubic.c as it runs: the constant α in whole packets, the growth rate recomputed only when cwnd changed or HZ/32 (HZ = 250) passed, so cwnd follows the estimate in steps (crates/sim/src/tcp/linux_cubic.rs).",
    )
    cwnd_growth: Literal["bytes", "acks", "4.4bsd"] = Field(
        "bytes",
        description="What an ACK of new data grows the congestion window by: 'bytes' counts the bytes acknowledged (RFC 3465; Linux), 'acks' grows once per ACK (RFC 5681 Eq. 2 and 3; 4.4BSD and NetBSD 1.1, Windows NT 4.0, ns-3's NewReno), half as fast with an ACK every second segment; '4.4bsd' is 4.4BSD's per-ACK rule, whose avoidance adds maxseg²/cwnd + maxseg/8. '4.4bsd' under stack 'netbsd-1.1', 'acks' under 'windows-nt-4.0'.",
    )
    slow_start_limit: int | None = Field(
        2,
        ge=1,
        description="Slow start's L with cwnd_growth 'bytes': the most one ACK adds, in segments (RFC 3465 §2.2: 2); none = no bound (Linux since 3.9 adds every segment acknowledged).",
    )
    initial_rto: Time = Field(  # type: ignore[assignment]  # a default as written, validated as a value
        "1 s",
        description="Retransmission timeout before the first RTT sample, so the SYN's retry timer: RFC 6298 §2.1 and Linux 1 s, RFC 1122's older 3 s; 6 s under stack 'netbsd-1.1', 3 s under 'windows-nt-4.0'.",
    )

    @model_validator(mode="after")
    def _initial_rto_positive(self) -> TcpSettings:
        if int(self.initial_rto) <= 0:
            raise FieldProblem(
                "initial_rto",
                "an initial RTO of 0 would retransmit the SYN at once",
                expected="a time above 0 (RFC 6298 §2.1: 1 s)",
                found="0 s",
            )
        return self


class TcpBulk(TestBase):
    """An iperf3-like TCP transfer for a fixed time (or a number of bytes): goodput,
    retransmissions and the congestion window, in interval reports and totals."""

    method: Literal["tcp.bulk"] = Field(description="Test method.")
    duration: Time = Field(  # type: ignore[assignment]  # a default as written, validated as a value
        "10 s", description="How long to send (iperf3 -t); with `bytes`, the longest the run may take."
    )
    bytes: Size | None = Field(
        None, description="Send this many bytes in all, shared by the streams, instead of for `duration` (iperf3 -n)."
    )
    window: Size | None = Field(
        None,
        le=U32_MAX,
        description="Socket buffer / window (iperf3 -w): both buffers and a fixed maximum window; none = the stack's default.",
    )
    streams: int = Field(1, ge=1, description="Parallel connections (iperf3 -P).")
    interval: Time = Field("1 s", description="Interval between reports (iperf3 -i); '0 s' = none.")  # type: ignore[assignment]  # a default as written, validated as a value
    congestion: Literal["cubic", "reno", "newreno"] = Field(
        "cubic", description="Congestion control (RFC 9438 CUBIC, RFC 6582 NewReno)."
    )
    mss: Size | None = Field(
        None,
        le=U16_MAX,
        description="Maximum segment size; none = from the route MTU (MTU − 40). At most 65,535: the MSS option is 16 bits (RFC 9293 §3.2).",
    )
    stack: TcpStack = Field("linux", description=_STACK_DOC)
    trace: bool = Field(
        False,
        description="Keep each sender's per-ACK trace (cwnd, ssthresh, RTT, RTO, retransmissions) in the JSON record; large.",
    )
    tcp: TcpSettings = Field(
        default_factory=TcpSettings,
        description="TCP settings (HyStart, SACK, timestamps, delayed ACK, RTO, buffers, path MTU discovery); a key written here wins over `stack`.",
    )


class TcpTransfer(TestBase):
    """A ttcp-like transfer of a fixed number of bytes: the time it takes and the rate."""

    method: Literal["tcp.transfer"] = Field(description="Test method.")
    bytes: Size = Field(10_000_000, description="Bytes to transfer (seed 004: a 10 MB file).")
    buffer: Size = Field(8192, description="Bytes per write (ttcp -l).")
    window: Size | None = Field(
        None, le=U32_MAX, description="Fixed TCP window (seed 004's NetBSD); none = the stack's default."
    )
    congestion: Literal["cubic", "reno", "newreno"] = Field("newreno", description="Congestion control.")
    mss: Size | None = Field(
        None,
        le=U16_MAX,
        description="Maximum segment size; none = from the route MTU (MTU − 40). At most 65,535: the MSS option is 16 bits (RFC 9293 §3.2).",
    )
    stack: TcpStack = Field("linux", description=_STACK_DOC)
    trace: bool = Field(False, description="Keep the sender's per-ACK trace in the JSON record; large.")
    tcp: TcpSettings = Field(
        default_factory=TcpSettings,
        description="TCP settings (HyStart, SACK, timestamps, delayed ACK, RTO, buffers, path MTU discovery); a key written here wins over `stack`.",
    )


class Background(Strict):
    """Traffic that runs alongside every test, unmeasured: the load a test shares the
    network with (seed 004: Wireless Andrew's transceivers sending while the router's
    upstream frames are on the air)."""

    from_: NodeName = Field(alias="from", description="The node that sends.")
    to: NodeName = Field(description="The node it sends to.")
    payload: Size = Field(
        1472,
        description="UDP payload bytes per datagram (at least 16: the test frame's sequence number and time; at most 65,507).",
    )
    rate: Rate = Field(  # type: ignore[assignment]  # a default as written, validated as a value
        "0 bps", description="Offered load; '0 bps' saturates (the sender keeps its interface queue full)."
    )
    start: Time = Field("0 s", description="When it starts, from the start of each test's run.")  # type: ignore[assignment]  # a default as written, validated as a value
    duration: Time | None = Field(None, description="How long it sends; none = as long as the test runs.")

    @model_validator(mode="after")
    def _payload_fits(self) -> Background:
        ip_payload_fits(self.payload, "UDP payload")
        return self


Test = Annotated[
    Rfc2544Throughput
    | Rfc2544Latency
    | Rfc2544FrameLoss
    | Rfc2544BackToBack
    | Rfc2544Overload
    | Ping
    | UdpFlow
    | UdpEcho
    | TcpBulk
    | TcpTransfer
    | PcapReplay,
    Field(discriminator="method"),
]
