"""The TCP methods end to end: iperf3-like ``tcp.bulk`` (duration or bytes, parallel
streams, interval reports, traces, HyStart) and ttcp-like ``tcp.transfer``, and the
refusal of a TCP buffer smaller than one segment.

Expected rates come from the line: on Ethernet a 1500-byte IP packet takes 1538
bytes of the wire (preamble and SFD 8, header 14, FCS 4, gap 12: IEEE 802.3), and with
timestamps it carries 1448 bytes of data (1500 − 20 IP − 20 TCP − 12 option), so TCP
goodput can never pass rate × 1448 / 1538.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from qoslab.backends.sim import run_tests
from qoslab.report.terminal import tcp_report
from qoslab.scenario import loads_scenario
from rich.console import Console

PATH = """
[scenario]
name = "two hosts, one link"
seed = 3

[node.a]
role = "host"
address = "10.0.0.1/24"

[node.b]
role = "host"
address = "10.0.0.2/24"

[[link]]
type = "ethernet"
rate = "{rate}"
delay = "{delay}"
ends = ["a", "b"]
{queue}"""

LINE_GOODPUT = 1448 / 1538


def scenario_text(rate: str = "30 Mbps", delay: str = "10 ms", queue: str = "") -> str:
    return PATH.format(rate=rate, delay=delay, queue=queue)


def run(test: str, rate: str = "30 Mbps", delay: str = "10 ms", queue: str = "") -> dict:
    scenario = loads_scenario(scenario_text(rate, delay, queue) + test)
    _, (r,) = run_tests(scenario)
    (record,) = r.records
    return record


def test_bulk_streams_and_intervals_add_up():
    record = run(
        """
[[test]]
method = "tcp.bulk"
from = "a"
to = "b"
duration = "4 s"
streams = 3
interval = "0.5 s"
"""
    )
    intervals = record["intervals"]
    assert [iv["sum"]["end_s"] for iv in intervals] == [0.5 * k for k in range(1, 9)]
    ceiling = 30e6 * LINE_GOODPUT
    delivered_so_far = 0
    for iv in intervals:
        assert {s["id"] for s in iv["streams"]} == {0, 1, 2}
        assert iv["sum"]["bytes"] == sum(s["bytes"] for s in iv["streams"])
        assert iv["sum"]["retransmits"] == sum(s["retransmits"] for s in iv["streams"])
        # Delivered, not carried: a retransmission that fills a hole hands over at once
        # every byte queued behind it, which crossed the line in earlier intervals (after
        # a slow start's overshoot, a whole queue's worth). What has been delivered by an
        # interval's end, though, crossed the line by then.
        delivered_so_far += iv["sum"]["bytes"]
        assert delivered_so_far * 8 <= ceiling * iv["sum"]["end_s"] * 1.01
        for s in iv["streams"]:
            assert s["bits_per_second"] == pytest.approx(s["bytes"] * 8 / 0.5)
            assert s["snd_cwnd_bytes"] > 0 and s["rtt_ms"] >= 20.0
    # Three slow starts overshoot into the 1000-frame queue (410 ms at 30 Mb/s) and
    # recover, with timeouts; the line still carries most of the 4 s.
    assert sum(iv["sum"]["bytes"] for iv in intervals) * 8 > 0.7 * ceiling * 4.0
    # What the intervals delivered is what arrived by the test's end: the throughput.
    delivered = sum(iv["sum"]["bytes"] for iv in intervals)
    assert delivered * 8 <= ceiling * 4.0
    assert record["metrics"]["throughput_mbps"] == pytest.approx(delivered * 8 / 4.0 / 1e6, rel=1e-6)
    # Totals per stream, both over the 4 s: the sender counts what was acknowledged by
    # the stop, so no more than the receiver got, and short of it by at most what was
    # in flight (the ACKs still on their way back).
    assert len(record["streams"]) == 3
    for s in record["streams"]:
        assert 0 <= s["receiver"]["bytes"] - s["sender"]["bytes"] <= s["sender"]["max_snd_cwnd_bytes"]
        assert s["sender"]["min_rtt_ms"] >= 20.0
        assert s["sender"]["min_rtt_ms"] <= s["sender"]["mean_rtt_ms"] <= s["sender"]["max_rtt_ms"]
    assert record["metrics"]["retransmits"] == sum(s["sender"]["retransmits"] for s in record["streams"])
    assert "trace" not in record["streams"][0]


def test_bulk_bytes_is_shared_by_the_streams_and_delivered_exactly():
    # iperf3 -n 1000000 -P 3: 333 334 + 333 333 + 333 333 bytes.
    record = run(
        """
[[test]]
method = "tcp.bulk"
from = "a"
to = "b"
bytes = 1000000
streams = 3
"""
    )
    assert [s["receiver"]["bytes"] for s in record["streams"]] == [333_334, 333_333, 333_333]
    assert record["metrics"]["bytes_received"] == 1_000_000
    assert record["parameters"]["bytes"] == 1_000_000
    assert 0 < record["metrics"]["throughput_mbps"] <= 30 * LINE_GOODPUT


def test_transfer_reports_ttcp_times():
    record = run(
        """
[[test]]
method = "tcp.transfer"
from = "a"
to = "b"
bytes = 2000000
"""
    )
    m = record["metrics"]
    assert m["completed"]
    # The receiver's clock runs from its first byte to its last; the sender's from its
    # first byte to the last ACK, one RTT (≥ 20 ms) later at each end at least.
    assert m["receiver_time_s"] < m["sender_time_s"]
    assert m["sender_time_s"] - m["receiver_time_s"] >= 0.019
    # The receiver's clock starts with its first delivery, so its rate counts the
    # bytes after it (2 000 000 less one or more segments of 1448).
    timed = m["receiver_bytes_timed"]
    assert 2_000_000 - timed >= 1448 and (2_000_000 - timed) % 1448 == 0
    assert m["receiver_rate_mbps"] == pytest.approx(timed * 8 / m["receiver_time_s"] / 1e6)
    assert m["receiver_rate_mbps"] <= 30 * LINE_GOODPUT and m["sender_rate_mbps"] <= 30 * LINE_GOODPUT
    # 2 MB cannot move faster than the line's goodput.
    assert m["receiver_time_s"] >= 2_000_000 * 8 / (30e6 * LINE_GOODPUT) - 0.02
    console = Console(record=True, width=100)
    tcp_report(console, record)
    text = console.export_text()
    assert "ttcp-t: 2000000 bytes in" in text and "ttcp-r: 2000000 bytes in" in text


def test_trace_is_opt_in_and_in_columns():
    record = run(
        """
[[test]]
method = "tcp.transfer"
from = "a"
to = "b"
bytes = 300000
trace = true
"""
    )
    trace = record["streams"][0]["trace"]
    n = len(trace["time_ns"])
    # 300 000 bytes in 1448-byte segments, an ACK every second one (delayed ACK): about
    # 104 ACKs, plus the handshake's.
    assert 90 <= n <= 220
    for column in (
        "cwnd_bytes",
        "ssthresh_bytes",
        "srtt_ns",
        "rtt_sample_ns",
        "rto_ns",
        "bytes_in_flight",
        "retransmits",
        "in_recovery",
    ):
        assert len(trace[column]) == n
    assert trace["time_ns"] == sorted(trace["time_ns"])
    # The first row follows the first ACK, of two segments (delayed ACK): RFC 6928's
    # initial window of 10 plus slow start's min(acked, 2 SMSS) (RFC 5681, RFC 3465).
    assert trace["cwnd_bytes"][0] == 10 * 1448 + 2 * 1448
    assert trace["ssthresh_bytes"][0] is None


@pytest.mark.parametrize("mode,reason", [("off", None), ("classic", {"delay", "ack-train"}), ("hystart++", {"css"})])
def test_hystart_setting_reaches_the_sender(mode, reason):
    # 100 Mb/s, 40 ms RTT and a queue of 10 000 frames (1.2 s) that 3 s of one flow
    # cannot fill: only HyStart can end slow start (the Rust tests check where; here,
    # that the setting arrives).
    record = run(
        f"""
[[test]]
method = "tcp.bulk"
from = "a"
to = "b"
duration = "3 s"
tcp = {{ hystart = "{mode}" }}
""",
        rate="100 Mbps",
        delay="20 ms",
        queue="queue = { frames = 10000 }\n",
    )
    exit_ = record["streams"][0]["sender"]["hystart_exit"]
    assert record["parameters"]["hystart"] == mode
    if reason is None:
        assert exit_ is None
    else:
        assert exit_ is not None and exit_["reason"] in reason


def test_tcp_settings_are_lowered():
    from qoslab.backends.sim import lower_network
    from qoslab.methods import plan_test

    scenario = loads_scenario(
        scenario_text(rate="10 Mbps", delay="1 ms")
        + """
[[test]]
method = "tcp.transfer"
from = "a"
to = "b"
bytes = 1000
congestion = "reno"
tcp = { sack = false, timestamps = false, window_scaling = false, nagle = false, delayed_ack = "200 ms", delayed_ack_segments = 3, min_rto = "1 s", rto_backoff_cap = "100 ms", initial_window = 4, send_buffer = "64 KiB", recv_buffer = "32 KiB" }
"""
    )
    opts = plan_test(lower_network(scenario), 0).flows[0].tcp.model_dump(mode="json", exclude_unset=True)
    assert opts == {
        "congestion": "newreno",
        "hystart": "off",
        "sack": False,
        "timestamps": False,
        "window_scaling": False,
        "nagle": False,
        "delayed_ack_ns": 200_000_000,
        "delayed_ack_segments": 3,
        # Not written: RFC 5681's full-sized count and BSD's update on a read.
        "delayed_ack_any_segment": False,
        "window_update_on_read": True,
        "dup_ack_threshold": 3,
        "min_rto_ns": 1_000_000_000,
        "rto_backoff_cap_ns": 100_000_000,
        "initial_window": 4,
        "send_buffer": 65536,
        "recv_buffer": 32768,
        # Not written, so Linux's: RFC 1191 discovery on, RFC 4821 probing off.
        "pmtu_discovery": True,
        "mtu_probing": 0,
        "base_mss": 1024,
        # RFC 8985 RACK-TLP, Linux's defaults (tcp_recovery = 1, tcp_early_retrans = 3).
        "rack": True,
        "tlp": True,
        # RFC 6675 recovery without PRR; byte counting with RFC 3465's L = 2; RFC 6298's
        # 1-s initial RTO.
        "prr": False,
        "cubic_alpha": "rfc9438",
        "cwnd_growth": "bytes",
        "slow_start_limit": 2,
        "initial_rto_ns": 1_000_000_000,
        # Linux's receiver and writer: no ACK on PSH, a per-segment delayed-ACK timer, a
        # writer that refills at once (ttcp -l 8192 is passed on, used only with a mark).
        "ack_on_push": False,
        "delayed_ack_clock": False,
        "send_low_water": 0,
        "write_size": 8192,
    }


@pytest.mark.parametrize(
    "stack,table,rack,tlp",
    [
        ("linux", "", True, True),
        ("netbsd-1.1", "", False, False),
        # A key written in the tcp table wins over the stack's value.
        ("netbsd-1.1", "tcp = { sack = true, rack = true }", True, False),
        ("linux", "tcp = { tlp = false }", True, False),
    ],
)
def test_rack_and_tlp_follow_the_stack_and_the_table(stack, table, rack, tlp):
    from qoslab.backends.sim import lower_network
    from qoslab.methods import plan_test

    scenario = loads_scenario(
        scenario_text(rate="10 Mbps", delay="1 ms")
        + f"""
[[test]]
method = "tcp.bulk"
from = "a"
to = "b"
stack = "{stack}"
{table}
"""
    )
    opts = plan_test(lower_network(scenario), 0).flows[0].tcp.model_dump(mode="json", exclude_unset=True)
    assert (opts["rack"], opts["tlp"]) == (rack, tlp)


@pytest.mark.parametrize("line,found", [('rack = "yes"', "'yes' (a string)"), ("tlp = 1", "1 (an integer)")])
def test_rack_and_tlp_must_be_booleans(tmp_path, line, found):
    text = (
        scenario_text(rate="10 Mbps", delay="1 ms")
        + f"""
[[test]]
method = "tcp.bulk"
from = "a"
to = "b"
tcp = {{ {line} }}
"""
    )
    path = tmp_path / "scenario.toml"
    path.write_text(text)
    at = len(text.splitlines())
    key = line.split()[0]
    proc = subprocess.run(
        [sys.executable, "-m", "qoslab", "run", str(path)], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    assert f"scenario.toml:{at}:" in proc.stderr and f"test[0].tcp.{key}" in proc.stderr, proc.stderr
    assert found in proc.stderr, proc.stderr


BAD_BUFFERS = [
    ('window = "1 KiB"', "window", "test[0].window", "1024 bytes", "1460"),
    ("tcp = { recv_buffer = 1000 }", "1000", "test[0].tcp.recv_buffer", "1000 bytes", "1460"),
    ("mss = 536\nwindow = 500", "500", "test[0].window", "500 bytes", "536"),
]


@pytest.mark.parametrize("line,needle,key,found,mss", BAD_BUFFERS)
def test_buffer_below_one_segment_is_refused(tmp_path, line, needle, key, found, mss):
    text = (
        scenario_text(rate="10 Mbps", delay="1 ms")
        + f"""
[[test]]
method = "tcp.bulk"
from = "a"
to = "b"
{line}
"""
    )
    path = tmp_path / "scenario.toml"
    path.write_text(text)
    lines = text.splitlines()
    at = max(i for i, t in enumerate(lines, 1) if needle in t and ("=" in t))
    proc = subprocess.run(
        [sys.executable, "-m", "qoslab", "run", str(path)], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    assert f"scenario.toml:{at}:" in proc.stderr and key in proc.stderr
    assert "smaller than one segment" in proc.stderr
    assert f"found:    {found}" in proc.stderr
    assert f"at least the MSS, {mss} bytes" in proc.stderr


def test_host_socket_buffer_below_one_segment_is_refused_at_the_host(tmp_path):
    text = (
        scenario_text(rate="10 Mbps", delay="1 ms").replace(
            'address = "10.0.0.2/24"', 'address = "10.0.0.2/24"\nsocket_buffer = 1024'
        )
        + """
[[test]]
method = "tcp.transfer"
from = "a"
to = "b"
"""
    )
    path = tmp_path / "scenario.toml"
    path.write_text(text)
    at = next(i for i, t in enumerate(text.splitlines(), 1) if "socket_buffer" in t)
    proc = subprocess.run(
        [sys.executable, "-m", "qoslab", "run", str(path)], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert f"scenario.toml:{at}:" in proc.stderr and "node.b.socket_buffer" in proc.stderr


def test_a_stack_preset_fills_in_what_the_tcp_table_does_not_write():
    from qoslab.backends.sim import lower_network
    from qoslab.methods import plan_test

    scenario = loads_scenario(
        scenario_text(rate="10 Mbps", delay="1 ms")
        + """
[[test]]
method = "tcp.transfer"
from = "a"
to = "b"
bytes = 1000
stack = "netbsd-1.1"
tcp = { delayed_ack = "100 ms" }
"""
    )
    opts = plan_test(lower_network(scenario), 0).flows[0].tcp.model_dump(mode="json", exclude_unset=True)
    # Written in the tcp table: it wins over the preset's 200 ms.
    assert opts["delayed_ack_ns"] == 100_000_000
    # Not written: 4.4BSD's values (TCPTV_MIN 1 s, slow start from one segment, no SACK).
    assert (opts["min_rto_ns"], opts["initial_window"], opts["sack"], opts["timestamps"]) == (
        1_000_000_000,
        1,
        False,
        False,
    )


@pytest.mark.parametrize(
    "stack,table,growth,limit,initial_rto_ns,prr",
    [
        # Linux: byte counting (RFC 3465, L = 2 here), RFC 6298's 1-s initial RTO.
        ("linux", "", "bytes", 2, 1_000_000_000, False),
        # 4.4BSD tcp_input grows once per ACK, with avoidance's extra maxseg/8;
        # tcp_newtcpcb's first RTO is 12 ticks of 500 ms.
        ("netbsd-1.1", "", "4.4bsd", 2, 6_000_000_000, False),
        # Windows NT 4.0: per ACK, TcpInitialRtt 3 s.
        ("windows-nt-4.0", "", "acks", 2, 3_000_000_000, False),
        # Written in the tcp table: wins over the stack.
        ("netbsd-1.1", 'tcp = { cwnd_growth = "bytes", initial_rto = "1 s" }', "bytes", 2, 1_000_000_000, False),
        # No L (Linux since 3.9) lowers to 0; PRR on.
        ("linux", "tcp = { slow_start_limit = 10, prr = true }", "bytes", 10, 1_000_000_000, True),
    ],
)
def test_window_growth_initial_rto_and_prr_follow_the_stack_and_the_table(
    stack, table, growth, limit, initial_rto_ns, prr
):
    from qoslab.backends.sim import lower_network
    from qoslab.methods import plan_test

    scenario = loads_scenario(
        scenario_text(rate="10 Mbps", delay="1 ms")
        + f"""
[[test]]
method = "tcp.bulk"
from = "a"
to = "b"
stack = "{stack}"
{table}
"""
    )
    opts = plan_test(lower_network(scenario), 0).flows[0].tcp.model_dump(mode="json", exclude_unset=True)
    assert (opts["cwnd_growth"], opts["slow_start_limit"], opts["initial_rto_ns"], opts["prr"]) == (
        growth,
        limit,
        initial_rto_ns,
        prr,
    )


def test_windows_nt_preset_has_no_rfc_1323_or_sack():
    from qoslab.backends.sim import lower_network
    from qoslab.methods import plan_test

    scenario = loads_scenario(
        scenario_text(rate="10 Mbps", delay="1 ms")
        + """
[[test]]
method = "tcp.bulk"
from = "a"
to = "b"
stack = "windows-nt-4.0"
"""
    )
    opts = plan_test(lower_network(scenario), 0).flows[0].tcp.model_dump(mode="json", exclude_unset=True)
    assert (opts["sack"], opts["timestamps"], opts["window_scaling"], opts["delayed_ack_ns"]) == (
        False,
        False,
        False,
        200_000_000,
    )
    # Microsoft, TCP/IP Implementation Details, "Delayed Acknowledgments": an ACK when "no
    # ACK was sent for the previous segment received" (any size), else after 200 ms; no
    # other occasion, so no window update on a read. RFC 2001 §2: cwnd starts at one segment.
    assert (
        opts["delayed_ack_any_segment"],
        opts["delayed_ack_segments"],
        opts["window_update_on_read"],
        opts["initial_window"],
    ) == (True, 2, False, 1)
    # KB Q162179: fast retransmit since NT 4.0 SP2; TcpMaxDupAcks' default is 2.
    assert opts["dup_ack_threshold"] == 2
    # No buffer given: NT 4.0's default window, 8 KiB rounded up to whole segments and at
    # least four (NT 4.0 Resource Kit, TcpWindowSize: "The default is 8760 for Ethernet").
    assert opts["recv_buffer"] == 6 * 1460 == 8760


def test_nt4_default_window_follows_the_resource_kit_rule():
    import doctest

    from qoslab.methods import tcp

    finder = doctest.DocTestFinder()
    runner = doctest.DocTestRunner()
    for test in finder.find(
        tcp.nt4_default_window, "nt4_default_window", globs={"nt4_default_window": tcp.nt4_default_window}
    ):
        runner.run(test)
    assert runner.failures == 0 and runner.tries >= 2
    # 8192 rounded up to whole 536-octet segments (16 of them), already over four; and an
    # MSS whose four segments pass 64 KiB is capped at 65,535 (no window scaling).
    assert tcp.nt4_default_window(536) == 16 * 536
    assert tcp.nt4_default_window(65495) == 65535


def test_a_64_kib_test_window_does_not_turn_window_scaling_on_under_windows_nt():
    # KB Q199947: NT 4.0 has no RFC 1323 window scale, so its window is at most 65,535
    # whatever the test asks for; Linux scales a window above 65,535 (RFC 7323 §2).
    from qoslab.backends.sim import lower_network
    from qoslab.methods import plan_test

    def opts(stack: str) -> dict:
        scenario = loads_scenario(
            scenario_text(rate="10 Mbps", delay="1 ms")
            + f"""
[[test]]
method = "tcp.bulk"
from = "a"
to = "b"
window = "64 KiB"
stack = "{stack}"
"""
        )
        return plan_test(lower_network(scenario), 0).flows[0].tcp.model_dump(mode="json", exclude_unset=True)

    assert opts("windows-nt-4.0")["window_scaling"] is False
    assert opts("linux")["window_scaling"] is True
    assert opts("linux")["delayed_ack_any_segment"] is False and opts("linux")["window_update_on_read"] is True


def test_per_ack_growth_is_slower_than_byte_counting_on_a_lossy_link():
    # RFC 5681 once per ACK with an ACK every second segment opens the window about half
    # as fast in congestion avoidance as RFC 3465's byte counting: on a loss-limited path
    # (Mathis: rate ∝ the growth per RTT's square root) NewReno runs slower.
    from qoslab import _core
    from qoslab.bench import config_json, tcp_cubic_config
    from qoslab.plan import models as plan

    def rate(growth: str, seed: int) -> float:
        config = tcp_cubic_config(10.0)
        config.seed = seed
        (bulk,) = config.flows or []
        assert isinstance(bulk.root, plan.TcpFlow)
        bulk.root.tcp = plan.TcpOptions(
            rack=False, tlp=False, congestion=plan.CongestionControl("newreno"), cwnd_growth=plan.CwndGrowth(growth)
        )
        (flow,) = json.loads(_core.simulate(config_json(config), None))["flows"]
        return flow["bytes_received"]

    acks = sum(rate("acks", s) for s in (1, 2, 3))
    bytes_ = sum(rate("bytes", s) for s in (1, 2, 3))
    # Mathis' rate goes with √(growth per RTT): √(1/2) ≈ 0.71 of byte counting's.
    assert 0.6 < acks / bytes_ < 0.85


@pytest.mark.parametrize(
    "line,key",
    [
        ('tcp = { initial_rto = "0 s" }', "initial_rto"),
        ('tcp = { cwnd_growth = "packets" }', "cwnd_growth"),
        ("tcp = { slow_start_limit = 0 }", "slow_start_limit"),
        ('tcp = { cubic_alpha = "rfc8312" }', "cubic_alpha"),
    ],
)
def test_bad_growth_and_timer_settings_are_refused_by_check(tmp_path, line, key):
    text = (
        scenario_text(rate="10 Mbps", delay="1 ms")
        + f"""
[[test]]
method = "tcp.bulk"
from = "a"
to = "b"
{line}
"""
    )
    path = tmp_path / "scenario.toml"
    path.write_text(text)
    proc = subprocess.run(
        [sys.executable, "-m", "qoslab", "check", str(path)], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    assert "scenario.toml:" in proc.stderr and key in proc.stderr, proc.stderr


def test_netbsd_preset_buffers_ack_rules_and_writer_come_from_the_source():
    """NetBSD 1.1's receiver and writer, each value computed here from its source:
    TCP_SENDSPACE = TCP_RECVSPACE = 1024*16 (netinet/tcp_usrreq.c), rounded up by
    tcp_mss() to whole segments; so_snd.sb_lowat = MCLBYTES = 1 << MCLSHIFT (11 on
    i386, kern/uipc_socket2.c soreserve); TH_PUSH -> TF_ACKNOW (netinet/tcp_input.c);
    tcp_fasttimo's 200-ms clock (PR_FASTHZ = 5)."""
    from qoslab.backends.sim import lower_network
    from qoslab.methods import plan_test

    scenario = loads_scenario(
        scenario_text(rate="10 Mbps", delay="1 ms")
        + """
[[test]]
method = "tcp.transfer"
from = "a"
to = "b"
stack = "netbsd-1.1"
"""
    )
    opts = plan_test(lower_network(scenario), 0).flows[0].tcp.model_dump(mode="json", exclude_unset=True)
    mss = 1500 - 40
    space = 1024 * 16
    rounded = -(-space // mss) * mss
    assert rounded == 12 * mss == 17_520
    assert (opts["send_buffer"], opts["recv_buffer"]) == (rounded, rounded)
    assert opts["send_low_water"] == 1 << 11
    assert opts["ack_on_push"] is True and opts["delayed_ack_clock"] is True
    assert opts["delayed_ack_ns"] == 1_000_000_000 // 5
    assert opts["write_size"] == 8192  # ttcp -l's default, the method's buffer


def test_a_fixed_window_under_netbsd_is_whole_segments():
    from qoslab.backends.sim import lower_network
    from qoslab.methods import plan_test

    scenario = loads_scenario(
        scenario_text(rate="10 Mbps", delay="1 ms")
        + """
[[test]]
method = "tcp.transfer"
from = "a"
to = "b"
stack = "netbsd-1.1"
window = "16 KiB"
tcp = { send_low_water = "4 KiB", ack_on_push = false }
"""
    )
    opts = plan_test(lower_network(scenario), 0).flows[0].tcp.model_dump(mode="json", exclude_unset=True)
    # tcp_mss(): roundup(16384, 1460) = 17520 for both buffers and so the window.
    assert (opts["send_buffer"], opts["recv_buffer"], opts["max_window"]) == (17_520, 17_520, 17_520)
    # Written in the tcp table: wins over the preset.
    assert (opts["send_low_water"], opts["ack_on_push"]) == (4096, False)
