"""`run --pcap` with a snap length and a size limit, and the memory and capture budget.

What each test checks against something independent:
- the snap length: tshark's own reading of the files (frame.len, frame.cap_len) against
  the frame length computed here from the payload (UDP 8 + IPv4 20 + Ethernet 14 bytes,
  RFC 768, RFC 791, IEEE 802.3 without FCS) and the libpcap rule
  incl_len = min(orig_len, snaplen) (draft-ietf-opsawg-pcap §5);
- the size limit: the files' sizes on disk, tshark reading every record of them without
  complaint, and the records counted here against the frame number the run says it cut at;
- the budget: the estimate, recomputed here from the record layout, and a refusal (exit
  2) before anything runs;
- memory: the child's peak RSS, from the kernel (getrusage), not from qoslab.
"""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT, TWO_HOSTS, pcap_packets

TSHARK = shutil.which("tshark")
needs_tshark = pytest.mark.skipif(
    TSHARK is None and not os.environ.get("QOSLAB_REQUIRE_TSHARK"), reason="tshark not installed"
)

PAYLOAD = 1000
FRAME = PAYLOAD + 8 + 20 + 14
"""The UDP test datagrams' Ethernet frame as captured: payload, UDP, IPv4, Ethernet
header (no FCS in LINKTYPE_ETHERNET)."""


def udp_scenario(duration: str = "1 s", rate: str = "1 Mbps", link: str = "10 Mbps", payload: int = PAYLOAD) -> str:
    return (
        TWO_HOSTS.format(name="pcap limits", seed=3)
        + f"""
[[link]]
name = "l"
type = "ethernet"
rate = "{link}"
ends = ["a", "b"]

[[test]]
method = "udp.flow"
from = "a"
to = "b"
rate = "{rate}"
payload = {payload}
duration = "{duration}"
"""
    )


def qoslab(args: list[str], cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "qoslab", *args], capture_output=True, text=True, timeout=600, cwd=cwd or ROOT
    )


def tshark_rows(pcap: Path, *fields: str) -> tuple[list[list[str]], str]:
    args = [TSHARK or "tshark", "-n", "-r", str(pcap), "-T", "fields"]
    for f in fields:
        args += ["-e", f]
    proc = subprocess.run(args, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, f"{pcap.name}: {proc.stderr}"
    return [line.split("\t") for line in proc.stdout.splitlines()], proc.stderr


@needs_tshark
def test_snaplen_cuts_each_record_and_keeps_the_frame_length(tmp_path: Path) -> None:
    file = tmp_path / "s.toml"
    file.write_text(udp_scenario())
    result = qoslab(["run", str(file), "--pcap", str(tmp_path / "cap"), "--pcap-snaplen", "100"])
    assert result.returncode == 0, result.stderr
    pcap = tmp_path / "cap" / "test0" / "a-eth0.pcap"
    assert struct.unpack("<I", pcap.read_bytes()[16:20])[0] == 100  # the header's SnapLen
    rows, _ = tshark_rows(pcap, "frame.len", "frame.cap_len", "udp.length")
    data = [(int(length), int(cap)) for length, cap, udp in rows if udp == str(PAYLOAD + 8)]
    assert len(data) > 100
    assert all(length == FRAME and cap == min(FRAME, 100) for length, cap in data), data[:3]
    # Short frames (ARP, 42 bytes) are whole: incl_len = orig_len below the snap length.
    short = [(int(length), int(cap)) for length, cap, _ in rows if int(length) < 100]
    assert short and all(length == cap for length, cap in short)


@needs_tshark
def test_size_limit_leaves_valid_files_and_says_where_it_cut(tmp_path: Path) -> None:
    file = tmp_path / "s.toml"
    file.write_text(udp_scenario(duration="2 s"))
    limit = 50_000
    result = qoslab(["run", str(file), "--json", "--pcap", str(tmp_path / "cap"), "--pcap-max-size", "50 kB"])
    assert result.returncode == 0, result.stderr
    assert "capture cut" in result.stderr and "--pcap-max-size" in result.stderr, result.stderr
    files = sorted((tmp_path / "cap" / "test0").glob("*.pcap"))
    assert [f.name for f in files] == ["a-eth0.pcap", "b-eth0.pcap"]
    assert sum(f.stat().st_size for f in files) <= limit
    records = 0
    last = 0.0
    for f in files:
        rows, stderr = tshark_rows(f, "frame.number", "frame.time_relative", "frame.len")
        assert "cut short" not in stderr and "appears to be damaged" not in stderr, stderr
        # tshark read as many records as the file holds, counted here from its bytes.
        assert len(rows) == len(pcap_packets(f))
        records += len(rows)
        last = max([last, *_record_times(f)])
    import json

    record = json.loads(result.stdout)["results"][0]
    cut_frame = record["parameters"]["pcap_cut_frame"]
    cut_s = record["parameters"]["pcap_cut_s"]
    # Every frame before the one cut is in the files, none after it.
    assert records == cut_frame - 1
    assert last <= cut_s < 2.0
    # The next record (16 + 1042 bytes at most) would have passed the limit.
    assert sum(f.stat().st_size for f in files) + 16 + FRAME > limit


def _record_times(pcap: Path) -> list[float]:
    """Each record's time (s), from its header: seconds and nanoseconds (the file's
    magic 0xa1b23c4d says nanoseconds, draft-ietf-opsawg-pcap §4)."""
    data = pcap.read_bytes()
    assert struct.unpack("<I", data[:4])[0] == 0xA1B23C4D
    out, at = [], 24
    while at < len(data):
        seconds, nanos, captured = struct.unpack("<III", data[at : at + 12])
        out.append(seconds + nanos / 1e9)
        at += 16 + captured
    return out


def test_max_memory_refuses_before_the_run_with_the_estimate(tmp_path: Path) -> None:
    file = tmp_path / "s.toml"
    file.write_text(udp_scenario())
    for command in (["check", str(file)], ["run", str(file), "--pcap", str(tmp_path / "cap")]):
        result = qoslab([*command, "--max-memory", "1 MB"])
        assert result.returncode == 2, result.stderr
        assert "Traceback" not in result.stderr
        assert "too much memory" in result.stderr and "--max-memory" in result.stderr and "about" in result.stderr
        assert f"{file}:" in result.stderr  # located at the test
    assert not any((tmp_path / "cap").rglob("*.pcap")), "nothing ran"
    # The same scenario within the budget runs.
    assert qoslab(["check", str(file), "--max-memory", "8 GB"]).returncode == 0


def test_capture_estimate_is_records_and_headers() -> None:
    # frames x (16 + min(frame, snaplen)) + 24 per file, for a count-limited ping over
    # one link: each request and its reply seen at the two ports.
    from qoslab.budget import _example, estimate_capture
    from qoslab.plan.models import PingFlow

    # Two hosts of one port each on one Ethernet link (budget.EXAMPLE_NETWORK).
    ping = PingFlow(kind="ping", id=0, from_=0, to="10.0.0.2", count=10, interval_ns=10**9, payload=1458, start_ns=0)
    config = _example([ping])
    frame = 1458 + 8 + 20 + 14
    assert estimate_capture(config) == 2 * 24 + 10 * 2 * 2 * (16 + frame)
    assert estimate_capture(config, snaplen=64) == 2 * 24 + 10 * 2 * 2 * (16 + 64)


def test_capture_larger_than_the_disk_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The free space is what the system says; here it says 1 MB, and a 10-s run at
    # 5 Mb/s captures about 12.5 MB at each of two ports.
    from qoslab import budget
    from qoslab.errors import InputError
    from qoslab.scenario import loads_scenario
    from qoslab.sweep import prepare

    monkeypatch.setattr(budget, "free_bytes", lambda path: 10**6)
    scenario = loads_scenario(udp_scenario(duration="10 s", rate="5 Mbps"))
    with pytest.raises(InputError) as err:
        prepare(scenario, pcap=budget.PcapOptions(tmp_path))
    text = str(err.value)
    assert "--pcap" in text and "would not fit" in text and "--pcap-max-size" in text
    # With a limit below the free space, it fits.
    prepare(scenario, pcap=budget.PcapOptions(tmp_path, max_bytes=500_000))


def peak_rss_mb(args: list[str], cwd: Path) -> float:
    """Peak resident memory (MB) of ``qoslab ARGS`` run in a child of a fresh child, so
    that RUSAGE_CHILDREN holds that run alone."""
    code = (
        "import resource, subprocess, sys\n"
        "r = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
        "assert r.returncode == 0, r.stderr\n"
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code, sys.executable, "-m", "qoslab", *args],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=cwd,
    )
    assert proc.returncode == 0, proc.stderr
    return int(proc.stdout.split()[-1]) / 1000.0  # Linux: kilobytes


@pytest.mark.skipif(sys.platform != "linux", reason="ru_maxrss in kilobytes is Linux's")
def test_capture_memory_does_not_grow_with_the_capture(tmp_path: Path) -> None:
    # A 90 Mb/s UDP flow on 100 Mb/s Ethernet, captured at both ports: 10 s give
    # 227 MB of pcap, 40 s four times that. Held in memory until the end (before), the
    # 40-s run peaked 680 MB above the 10-s one; streamed, the difference is the buffers'.
    rss = {}
    for seconds in (10, 40):
        file = tmp_path / f"s{seconds}.toml"
        file.write_text(udp_scenario(duration=f"{seconds} s", rate="90 Mbps", link="100 Mbps", payload=1472))
        out = tmp_path / f"cap{seconds}"
        rss[seconds] = peak_rss_mb(["run", str(file), "--pcap", str(out)], tmp_path)
        size = sum(f.stat().st_size for f in out.rglob("*.pcap"))
        # The offered rate counts whole Ethernet frames, FCS included (docs/metrics.md
        # "Offered load"): 90e6 / (8 x 1518) datagrams a second, each a record of
        # 16 + 1514 bytes (no FCS in the capture) at each of two ports.
        expected = seconds * 90e6 / (8 * 1518) * 2 * (16 + 1514)
        assert abs(size - expected) / expected < 0.01, (size, expected)
        shutil.rmtree(out)
    assert rss[40] - rss[10] < 5.0, rss
    assert rss[40] < 200.0, rss


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("mount") is None, reason="mounting a small tmpfs needs root")
def test_a_disk_that_fills_during_the_run_stops_it_with_exit_1_and_one_line(tmp_path):
    """The capture's disk fills in the middle of the run (a 1 MiB tmpfs the test mounts,
    and a free-space check told there is room, as when another program fills the disk
    after the run's start): exit 1, one line naming the file and the kernel's ENOSPC,
    no traceback, and the files written so far are kept."""
    disk = tmp_path / "disk"
    disk.mkdir()
    if (
        subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(disk)], check=False, capture_output=True
        ).returncode
        != 0
    ):
        pytest.skip("cannot mount a tmpfs here")
    try:
        path = tmp_path / "s.toml"
        path.write_text(udp_scenario(duration="2 s", rate="20 Mbps", link="100 Mbps"), encoding="utf-8")
        script = (
            "import sys\n"
            "import qoslab.budget as budget\n"
            "budget.free_bytes = lambda where: 10**12  # the disk fills after the start\n"
            "from qoslab.cli import main\n"
            f"sys.argv = ['qoslab', 'run', {str(path)!r}, '--pcap', {str(disk / 'cap')!r}]\n"
            "main()\n"
        )
        proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=False, timeout=300)
        assert proc.returncode == 1, proc.stderr[-2000:]
        assert "Traceback" not in proc.stderr
        errors = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
        assert len(errors) == 1 and "No space left on device" in errors[0] and str(disk / "cap") in errors[0], (
            proc.stderr[-2000:]
        )
        assert any(f.stat().st_size > 24 for f in (disk / "cap").rglob("*.pcap"))
    finally:
        subprocess.run(["umount", str(disk)], check=False)
