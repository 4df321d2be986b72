"""``pcap.replay``: a capture's IPv4 packets replayed through the simulator.

Every expectation comes from outside qoslab's reader: the captures are written here by
scapy (and converted to pcapng by Wireshark's editcap), what they hold is read back by
scapy and by tshark, the replay is watched in the simulator's own captures through
tshark, and the rates over a 10 Mb/s line are IEEE 802.3 arithmetic written here.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from decimal import Decimal
from fractions import Fraction
from pathlib import Path

import pytest
from conftest import EXAMPLES, TWO_HOSTS
from qoslab.backends.sim import run_tests
from qoslab.methods.pcap_file import read_ipv4, replay_payload
from qoslab.scenario import load_scenario

scapy = pytest.importorskip("scapy.all")
from scapy.all import (  # noqa: E402  # after the skip: scapy is a test dependency
    ARP,
    ICMP,
    IP,
    TCP,
    UDP,
    CookedLinux,
    CookedLinuxV2,
    Dot1Q,
    Ether,
    IPv6,
    Loopback,
    PcapWriter,
    Raw,
    fragment,
    rdpcap,
)

TSHARK = shutil.which("tshark")
EDITCAP = shutil.which("editcap")
needs_tshark = pytest.mark.skipif(TSHARK is None, reason="tshark not installed")
needs_editcap = pytest.mark.skipif(EDITCAP is None, reason="editcap not installed")

BASE = Decimal("1700000000.000000")
PROBE = 16  # the probe every test datagram carries (udp.flow's)
DST_PORT = 5001


def _mixed() -> list:
    """A capture of every kind of packet the reader meets, 2 ms or more apart: UDP of
    several sizes (one below the probe), TCP, ICMP, ARP, IPv6, an 802.1Q-tagged datagram
    and a UDP datagram in three fragments."""
    mac = {"src": "02:00:00:00:00:01", "dst": "02:00:00:00:00:02"}
    ip = {"src": "192.0.2.1", "dst": "192.0.2.2"}
    big = fragment(IP(**ip, id=77) / UDP(sport=1, dport=2) / Raw(bytes(3000)), fragsize=1480)
    assert len(big) == 3
    packets = [
        Ether(**mac) / IP(**ip) / UDP(sport=1, dport=2) / Raw(bytes(100)),
        Ether(**mac) / ARP(psrc="192.0.2.1", pdst="192.0.2.2"),
        Ether(**mac) / IP(**ip) / UDP(sport=1, dport=2) / Raw(bytes(1472)),
        Ether(**mac) / IP(**ip) / TCP(sport=1, dport=2) / Raw(bytes(500)),
        Ether(**mac) / IPv6() / UDP() / Raw(bytes(40)),
        Ether(**mac) / IP(**ip) / UDP(sport=1, dport=2) / Raw(bytes(4)),
        Ether(**mac) / IP(**ip) / ICMP() / Raw(bytes(56)),
        Ether(**mac) / Dot1Q(vlan=7) / IP(**ip) / UDP(sport=1, dport=2) / Raw(bytes(300)),
        *(Ether(**mac) / f for f in big),
        Ether(**mac) / IP(**ip) / UDP(sport=1, dport=2) / Raw(bytes(700)),
    ]
    gaps_us = [0, 2000, 2500, 7000, 2000, 3000, 4000, 2000, 5000, 30, 30, 9000]
    assert len(gaps_us) == len(packets)
    at = BASE
    for p, gap in zip(packets, gaps_us, strict=True):
        at += Decimal(gap) / 10**6
        p.time = at
    return packets


def write_pcap(path: Path, packets: list, *, linktype: int | None = None, nano: bool = False, order: str = "<") -> Path:
    writer = PcapWriter(str(path), linktype=linktype, nano=nano, endianness=order, sync=True)
    writer.write(packets)
    writer.close()
    return path


def scapy_expected(path: Path) -> list[tuple[Decimal, int]]:
    """(time, replayed UDP payload) of each datagram, as scapy reads the file: an IPv4
    packet that is not a later fragment, replayed with its IPv4 payload less 8 (a UDP
    first fragment: its UDP length less 8), at least nothing."""
    out = []
    for p in rdpcap(str(path)):
        if IP not in p or p[IP].frag > 0:
            continue
        ip = p[IP]
        size = ip[UDP].len - 8 if ip.flags.MF and UDP in ip else ip.len - ip.ihl * 4 - 8
        out.append((Decimal(p.time), max(size, 0)))
    return out


def tshark_fields(path: Path, display_filter: str, *fields: str, reassemble: bool = True) -> list[list[str]]:
    args = [TSHARK or "tshark", "-n", "-r", str(path), "-Y", display_filter, "-T", "fields"]
    if not reassemble:
        args += ["-o", "ip.defragment:FALSE"]
    for f in fields:
        args += ["-e", f]
    proc = subprocess.run(args, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    return [line.split("\t") for line in proc.stdout.splitlines()]


def reader_view(path: Path) -> list[tuple[Fraction, int]]:
    return [(d.time, replay_payload(d)) for d in read_ipv4(path).datagrams]


# --------------------------------------------------------------------------- reading


def test_reader_agrees_with_scapy_and_tshark_on_sizes_and_times(tmp_path):
    path = write_pcap(tmp_path / "mixed.pcap", _mixed())
    ours = reader_view(path)
    theirs = scapy_expected(path)
    assert [(Fraction(t), s) for t, s in theirs] == ours
    assert [s for _, s in ours] == [100, 1472, 512, 4, 56, 300, 3000, 700]
    capture = read_ipv4(path)
    # Every record is either replayed or skipped, and the skipped ones are named.
    assert capture.packets == len(rdpcap(str(path))) == 12
    assert dict(capture.skipped) == {"not_ipv4": 2, "later_fragment": 2}
    if TSHARK:
        rows = tshark_fields(
            path,
            "ip && ip.frag_offset == 0",
            "frame.time_epoch",
            "ip.len",
            "ip.hdr_len",
            "ip.flags.mf",
            "udp.length",
            reassemble=False,
        )
        from_tshark = [
            (
                Fraction(Decimal(t)),
                max(int(udp) - 8 if mf in ("1", "True") and udp else int(length) - int(hdr) - 8, 0),
            )
            for t, length, hdr, mf, udp in rows
        ]
        assert from_tshark == ours


@pytest.mark.parametrize(
    ("linktype", "frame"),
    [
        (101, lambda p: p[IP]),  # LINKTYPE_RAW
        (228, lambda p: p[IP]),  # LINKTYPE_IPV4
        (113, lambda p: CookedLinux(proto=0x0800) / p[IP]),  # LINKTYPE_LINUX_SLL
        (276, lambda p: CookedLinuxV2(proto=0x0800) / p[IP]),  # LINKTYPE_LINUX_SLL2
        (0, lambda p: Loopback(type=2) / p[IP]),  # LINKTYPE_NULL, the writer's byte order
        (108, lambda p: Raw(b"\x00\x00\x00\x02") / p[IP]),  # LINKTYPE_LOOP, network order
    ],
)
def test_other_link_types_give_the_same_datagrams(tmp_path, linktype, frame):
    ipv4 = [p for p in _mixed() if IP in p and p[IP].frag == 0]
    packets = []
    for p in ipv4:
        q = frame(p)
        q.time = p.time
        packets.append(q)
    ethernet = write_pcap(tmp_path / "eth.pcap", ipv4)
    other = write_pcap(tmp_path / f"lt{linktype}.pcap", packets, linktype=linktype)
    assert read_ipv4(other).link_types == {linktype}
    assert reader_view(other) == reader_view(ethernet)


def test_a_file_cut_short_keeps_its_whole_records(tmp_path):
    path = write_pcap(tmp_path / "mixed.pcap", _mixed())
    whole = scapy_expected(path)
    cut = tmp_path / "cut.pcap"
    cut.write_bytes(path.read_bytes()[:-10])  # the last record loses 10 octets
    capture = read_ipv4(cut)
    assert capture.packets == 12 and capture.skipped["cut_short"] == 1
    assert reader_view(cut) == [(Fraction(t), s) for t, s in whole[:-1]]


@needs_editcap
@pytest.mark.parametrize(("nano", "order"), [(False, "<"), (True, ">")])
def test_pcapng_reads_as_the_pcap_it_was_converted_from(tmp_path, nano, order):
    pcap = write_pcap(tmp_path / "mixed.pcap", _mixed(), nano=nano, order=order)
    ng = tmp_path / "mixed.pcapng"
    subprocess.run([EDITCAP or "editcap", "-F", "pcapng", str(pcap), str(ng)], check=True, capture_output=True)
    assert ng.read_bytes()[:4] == b"\x0a\x0d\x0d\x0a"
    capture = read_ipv4(ng)
    assert capture.format == "pcapng"
    assert reader_view(ng) == reader_view(pcap)
    assert capture.packets == read_ipv4(pcap).packets


# --------------------------------------------------------------------------- replaying

LINE = """
[[link]]
name = "l"
type = "ethernet"
rate = "{rate}"
ends = ["a", "b"]
"""


def replay_scenario(tmp_path: Path, capture: Path, *, rate: str = "100 Mbps", test: str = "") -> Path:
    text = TWO_HOSTS.format(name="replay", seed=1) + LINE.format(rate=rate)
    text += f'\n[[test]]\nmethod = "pcap.replay"\nfrom = "a"\nto = "b"\nfile = "{capture.name}"\n{test}\n'
    path = tmp_path / "replay.toml"
    path.write_text(text)
    return path


@needs_tshark
@pytest.mark.parametrize(("speed", "loop"), [(1.0, 1), (2.0, 2)])
def test_the_run_sends_the_captures_sizes_at_its_times(tmp_path, speed, loop):
    capture = write_pcap(tmp_path / "mixed.pcap", _mixed())
    expected = scapy_expected(capture)
    path = replay_scenario(tmp_path, capture, test=f"speed = {speed}\nloop = {loop}")
    _, (run,) = run_tests(load_scenario(path), source=path, pcap_dir=tmp_path / "out")
    (record,) = run.records
    m = record["metrics"]
    assert m["sent"] == m["received"] == len(expected) * loop
    assert record["parameters"]["replayed"] == len(expected)
    assert record["parameters"]["skipped"] == 4 and record["parameters"]["packets"] == 12
    assert record["parameters"]["padded"] == sum(1 for _, s in expected if s < PROBE)

    # What b received, as tshark reassembles it: every datagram's UDP payload, in order.
    files = sorted((tmp_path / "out").rglob("b-eth0.pcap"))
    assert len(files) == 1
    sizes = [int(u) - 8 for (u,) in tshark_fields(files[0], f"udp.dstport == {DST_PORT}", "udp.length")]
    assert sizes == [max(s, PROBE) for _, s in expected] * loop

    # When a sent them, as a's own capture stamps them (ns): the capture's times from its
    # first IPv4 packet over the speed, each pass one mean gap after the one before.
    (sender,) = sorted((tmp_path / "out").rglob("a-eth0.pcap"))
    sent = [
        Decimal(t) for (t,) in tshark_fields(sender, f"udp.dstport == {DST_PORT}", "frame.time_epoch", reassemble=False)
    ]
    first = expected[0][0]
    one_pass = [round(Fraction(t - first) * 10**9 / Fraction(speed)) for t, _ in expected]
    period = one_pass[-1] + round(Fraction(one_pass[-1], len(one_pass) - 1))
    wanted = [p * period + o for p in range(loop) for o in one_pass]
    assert [int((t - sent[0]) * 10**9) for t in sent] == wanted


def _burst(path: Path, n: int, payload: int, gap_us: int) -> Path:
    mac = {"src": "02:00:00:00:00:01", "dst": "02:00:00:00:00:02"}
    packets = []
    for k in range(n):
        p = Ether(**mac) / IP(src="192.0.2.1", dst="192.0.2.2") / UDP(sport=1, dport=2) / Raw(bytes(payload))
        p.time = BASE + Decimal(k * gap_us) / 10**6
        packets.append(p)
    return write_pcap(path, packets)


def test_a_capture_faster_than_the_line_gets_the_lines_rate_and_conserves(tmp_path):
    # 3000 datagrams of 1472 octets every 100 µs: 121 Mb/s of frames into 10 Mb/s.
    capture = _burst(tmp_path / "fast.pcap", 3000, 1472, 100)
    path = replay_scenario(tmp_path, capture, rate="10 Mbps")
    _, (run,) = run_tests(load_scenario(path), source=path)
    (record,) = run.records
    m = record["metrics"]
    # IEEE 802.3: each frame is 1472 + 8 + 20 + 18 octets, and holds the line for those
    # and 8 of preamble and SFD and 12 of gap; arrivals come one line time apart.
    frame, on_wire = 1472 + 8 + 20 + 18, 1472 + 8 + 20 + 18 + 8 + 12
    line_time_s = on_wire * 8 / 10e6
    assert m["throughput_mbps"] == pytest.approx(frame * 8 / line_time_s / 1e6, abs=1e-6)
    assert m["goodput_mbps"] == pytest.approx(1472 * 8 / line_time_s / 1e6, abs=1e-6)
    assert m["throughput_fps"] == pytest.approx(1 / line_time_s, abs=1e-3)
    assert record["parameters"]["offered_mbps"] == pytest.approx(frame * 8 / 100e-6 / 1e6, rel=1e-3)
    assert 0 < m["received"] < m["sent"] == 3000
    # Every datagram is accounted for (docs/metrics.md#conservation).
    (flow,) = [f for f in run.results.flows if f.id == 1]
    c = flow.conservation
    assert c is not None
    assert c.sent == c.received + c.dropped + c.in_network == 3000
    assert c.dropped == m["lost"] == m["sent"] - m["received"]


# --------------------------------------------------------------------------- bad input


def invoke(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    """``qoslab ARGS`` in this process, as the installed command runs."""
    from qoslab.cli import main

    argv, sys.argv = sys.argv, ["qoslab", *args]
    code = 0
    try:
        main()
    except SystemExit as exit:
        code = exit.code if isinstance(exit.code, int) else (0 if exit.code is None else 1)
    finally:
        sys.argv = argv
    out = capsys.readouterr()
    return code, out.err + out.out


def _line(text: str, needle: str) -> int:
    return text[: text.index(needle)].count("\n") + 1


@pytest.mark.parametrize(
    ("case", "words"),
    [
        ("missing", ["no capture file there", "expected: a pcap or pcapng file"]),
        ("not a pcap", ["not a capture file", "first octets 5B5B5B5B"]),
        ("no IPv4", ["no IPv4 packet to replay", "2 packets: 2 not IPv4"]),
        ("loop of one", ["no gap to loop it at", "loop = 3"]),
        ("rate too", ["rate"]),
    ],
)
def test_bad_input_is_refused_at_its_key_by_check_and_run(tmp_path, capsys, case, words):
    target = tmp_path / "c.pcap"
    test = ""
    needle = 'file = "c.pcap"'
    if case == "not a pcap":
        target.write_text("[[[[ not a capture\n")
    elif case == "no IPv4":
        write_pcap(target, [Ether() / ARP(), Ether() / IPv6() / UDP()])
    elif case == "loop of one":
        write_pcap(target, [Ether() / IP(dst="192.0.2.2") / UDP() / Raw(bytes(40))])
        test, needle = "loop = 3", "loop = 3"
    elif case == "rate too":
        _burst(target, 3, 100, 1000)
        test, needle = 'rate = "1 Mbps"', 'rate = "1 Mbps"'
    path = replay_scenario(tmp_path, target, test=test)
    text = path.read_text()
    for command in ("check", "run"):
        code, message = invoke([command, str(path)], capsys)
        assert code == 2, message
        assert "Traceback" not in message and "panicked" not in message, message
        assert f"{path}:{_line(text, needle)}" in message, message
        for word in words:
            assert word in message, f"{word!r} not in:\n{message}"


# --------------------------------------------------------------------------- the example


def test_the_example_replays_its_capture_and_copies_with_it(tmp_path, capsys):
    example = EXAMPLES / "pcap_replay_call.toml"
    capture = EXAMPLES / "video_call.pcap"
    theirs = scapy_expected(capture)
    code, _ = invoke(["examples", "copy", "pcap_replay_call", str(tmp_path)], capsys)
    assert code == 0
    assert (tmp_path / "video_call.pcap").read_bytes() == capture.read_bytes()
    _, runs = run_tests(load_scenario(example), source=example)
    recorded, fast = (r.records[0] for r in runs)
    assert recorded["metrics"]["sent"] == len(theirs) == 762
    assert recorded["parameters"]["skipped_by_reason"] == {"not_ipv4": 3}
    assert recorded["metrics"]["loss_pct"] == 0.0
    # Three times as fast offers more than the 2 Mb/s line carries: it loses, and its
    # goodput stays under the line's rate.
    assert fast["parameters"]["offered_mbps"] > 2.0
    assert fast["metrics"]["lost"] > 0
    assert fast["metrics"]["goodput_mbps"] < 2.0


def test_the_methods_worked_examples():
    import doctest

    from qoslab.data import examples
    from qoslab.methods import pcap_replay

    for module in (pcap_replay, examples):
        result = doctest.testmod(module)
        assert result.attempted > 0 and result.failed == 0
