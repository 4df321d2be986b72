"""Bad input of every kind, to every command: exit 2 (1 for a failed measurement), a
message that names the place, and never a traceback or a Rust panic.

The corpus is written here: each case is a command line and, where it reads one, a
scenario text. The place a message must name is computed here too: the scenario file
and the line of the offending text (found in the text by this test, not taken from
qoslab), or the option given on the command line.

Most cases run in this process through ``qoslab.cli.main`` (as the installed command
does, with its error handling), which is fast; a few that are about the process itself
(a second Ctrl-C, /dev/zero) run as a real subprocess.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import EXAMPLES, ROOT

BASE = """\
[scenario]
name = "corpus"
seed = 1

[node.a]
role = "host"
address = "10.0.0.1/24"

[node.b]
role = "host"
address = "10.0.0.2/24"

[[link]]
name = "l"
type = "ethernet"
rate = "10 Mbps"
ends = ["a", "b"]

[[test]]
method = "udp.flow"
from = "a"
to = "b"
rate = "1 Mbps"
payload = 1000
duration = "1 s"
"""
"""A valid scenario; every scenario case below changes one thing in it."""


@dataclass
class Case:
    """One bad input: the arguments, the scenario text (if any), and what the message
    must contain: ``needle`` is the offending text, whose line in the scenario the
    message must name; ``names`` are words it must contain (an option's name)."""

    id: str
    args: list[str]
    text: str | None = None
    needle: str | None = None
    names: tuple[str, ...] = ()
    code: int = 2


def replace(old: str, new: str) -> str:
    assert old in BASE, old
    return BASE.replace(old, new, 1)


def scenario_cases() -> list[Case]:
    """One change each to BASE, every one of them bad input."""
    cases: list[Case] = []

    def add(id: str, text: str, needle: str | None) -> None:
        for command in ("check", "run"):
            cases.append(Case(f"{command}-{id}", [command, "{file}"], text, needle))

    values = {
        # key line in BASE -> bad values for it
        'rate = "10 Mbps"': [
            '"0 bps"',
            '"-1 Mbps"',
            '"1e30 bps"',
            '"ten Mbps"',
            "10",
            "true",
            "[]",
            "{}",
            '"10 Mbpz"',
            '""',
            "nan",
            "inf",
        ],
        'rate = "1 Mbps"': ['"-1 Mbps"', '"1e30 bps"', '"fast"', "1", "false"],
        "payload = 1000": [
            "0",
            "-1",
            "1000000000",
            '"1 parsec"',
            "1.5",
            "true",
            "65508",
            "70000",
            "18446744073709551616",
        ],
        'duration = "1 s"': ['"0 s"', '"-1 s"', '"1e12 s"', '"soon"', "1", '"1 parsec"'],
        "seed = 1": ["-1", "18446744073709551616", "1.5", '"one"', "true"],
        'address = "10.0.0.1/24"': ['"300.0.0.1/24"', '"10.0.0.1/33"', '"x"', "1", '"0.0.0.0/0"'],
        'role = "host"': ['"hots"', "1", '""'],
        'ends = ["a", "b"]': ['["a"]', '["a", "zz"]', "[]", '"a"', '["a", "a"]', '["a", "b", "a"]'],
        'type = "ethernet"': ['"ethernt"', '"token-ring"', "3"],
        'method = "udp.flow"': ['"udp.flw"', '"tcp"', '""'],
        'from = "a"': ['"zz"', '"l"', "1"],
        'to = "b"': ['"zz"', '"a"', '"10.9.9.9"'],
        'name = "corpus"': ["1", "[]"],
    }
    for line, bads in values.items():
        key = line.split(" = ")[0]
        for bad in bads:
            add(f"{key}={bad}", replace(line, f"{key} = {bad}"), f"{key} = {bad}")
    # Keys that do not belong, or are missing.
    # The same address twice: the message is at the second node to claim it.
    dup = replace('address = "10.0.0.1/24"', 'address = "10.0.0.2/24"')
    add("duplicate-address", dup, None)
    add("unknown-key", replace('type = "ethernet"', 'type = "ethernet"\nspeed = "10 Mbps"'), "speed")
    add("unknown-table", BASE + '\n[nodes.c]\nrole = "host"\n', "[nodes.c]")
    add("no-ends", replace('ends = ["a", "b"]\n', ""), None)
    add("no-scenario", BASE.replace('[scenario]\nname = "corpus"\nseed = 1\n', ""), None)
    add("delay-negative", replace('rate = "10 Mbps"', 'rate = "10 Mbps"\ndelay = "-5 ms"'), 'delay = "-5 ms"')
    add("delay-huge", replace('rate = "10 Mbps"', 'rate = "10 Mbps"\ndelay = "1e12 s"'), 'delay = "1e12 s"')
    add("mtu-zero", replace('rate = "10 Mbps"', 'rate = "10 Mbps"\nmtu = 0'), "mtu = 0")
    add("mtu-huge", replace('rate = "10 Mbps"', 'rate = "10 Mbps"\nmtu = 100000'), "mtu = 100000")
    # A raw stream's MACs (seed 000 Fig. 10): a port that does not exist, a malformed MAC,
    # a source MAC without a raw stream, a group address as source (IEEE 802.3 §3.2.3).
    for key, value in (
        ("dst_mac", '"b/eth9"'),
        ("dst_mac", '"zz/eth0"'),
        ("dst_mac", '"02:00:00:00:00"'),
        ("src_mac", '"02:00:00:00:00:01"'),
    ):
        add(f"{key}={value}", replace("payload = 1000", f"payload = 1000\n{key} = {value}"), f"{key} = {value}")
    group_source = 'dst_mac = "b/eth0"\nsrc_mac = "01:00:5e:00:00:01"'
    add("src_mac-group", replace("payload = 1000", f"payload = 1000\n{group_source}"), 'src_mac = "01:00:5e:00:00:01"')
    add(
        "loss-over",
        replace('rate = "10 Mbps"', 'rate = "10 Mbps"\nloss = { model = "bernoulli", rate = "150 %" }'),
        "150 %",
    )
    add("cpu-unknown", replace('role = "host"', 'role = "host"\ncpu = "pentium-9"'), '"pentium-9"')
    add(
        "gateway-outside",
        replace('address = "10.0.0.1/24"', 'address = "10.0.0.1/24"\ngateway = "192.0.2.1"'),
        '"192.0.2.1"',
    )
    add("node-without-link", BASE + '\n[node.c]\nrole = "host"\naddress = "10.0.0.3/24"\n', None)
    add(
        "test-at-switch",
        BASE.replace('[[link]]\nname = "l"', '[node.s]\nrole = "switch"\n\n[[link]]\nname = "l"')
        .replace(
            'ends = ["a", "b"]',
            'ends = ["a", "s"]\n\n[[link]]\nname = "m"\ntype = "ethernet"\nrate = "10 Mbps"\nends = ["s", "b"]',
        )
        .replace('to = "b"', 'to = "s"'),
        'to = "s"',
    )
    # Values past the width the simulator keeps them in (crates/sim/src/config.rs: u32
    # windows and buffers, a u16 MSS): refused at their key, not by the core's decoder.
    tcp = BASE.replace('method = "udp.flow"', 'method = "tcp.bulk"').replace('rate = "1 Mbps"\npayload = 1000\n', "")
    add("tcp-window-5GB", tcp + 'window = "5 GB"\n', 'window = "5 GB"')
    add("tcp-mss-70000", tcp + "mss = 70000\n", "mss = 70000")
    add("tcp-initial-window-2-32", tcp + "[test.tcp]\ninitial_window = 4294967296\n", "initial_window = 4294967296")
    add(
        "host-socket-buffer-5GB",
        replace('role = "host"', 'role = "host"\nsocket_buffer = "5 GB"'),
        'socket_buffer = "5 GB"',
    )
    add("count-huge", replace('duration = "1 s"', "count = 1000000000000"), "count = 1000000000000")
    add("sweep-unknown", BASE + '\n[sweep]\nvalues = { "link[0].speed" = ["1 Mbps"] }\n', "[sweep]")
    add("sweep-empty", BASE + '\n[sweep]\nvalues = { "link[0].rate" = [] }\n', '"link[0].rate" = []')
    add("sweep-bad-value", BASE + '\n[sweep]\nvalues = { "link[0].rate" = ["0 bps"] }\n', '"link[0].rate"')
    # TOML that is not TOML, or not text.
    for i, text in enumerate(
        [
            "[scenario",
            "a = ",
            'a = "unterminated',
            "[[link]]\n[[link]\n",
            "a = 1\na = 2",
            "= 1",
            "a = [1,",
            "a = {b = 1",
            "a = 1 2",
            "[a]\n[a]",
        ]
    ):
        add(f"syntax-{i}", text, None)
    add("nested-arrays", "a = " + "[" * 200 + "]" * 200, None)
    add("nested-tables", "a = " + "{b = " * 200 + "1" + "}" * 200, None)
    add("dotted-key", "a." * 5000 + "b = 1", None)
    add("header-key", "[" + "a." * 5000 + "b]", None)
    return cases


def option_cases() -> list[Case]:
    """Bad values of options and arguments, to every command."""
    example = str(EXAMPLES / "seed000_l3f.toml")
    return [
        Case("mtu-no-stack", ["mtu", ""], names=("STACK",)),
        Case("mtu-unknown-layer", ["mtu", "ethernet/ipv5/tcp"], names=("ipv5",)),
        Case("mtu-bad-option", ["mtu", "ethernet/ipv4/udp/openvpn(cipher=rot13)"], names=("rot13",)),
        Case("mtu-empty-options", ["mtu", "ethernet/ipv4/udp/openvpn("], names=("openvpn",)),
        Case("mtu-size-zero", ["mtu", "ethernet/ipv4/tcp", "--size", "0"], names=("--size",)),
        Case("mtu-size-negative", ["mtu", "ethernet/ipv4/tcp", "--size", "-5"], names=("--size",)),
        Case("mtu-size-text", ["mtu", "ethernet/ipv4/tcp", "--size", "big"], names=("--size",)),
        Case("mtu-size-over-ip", ["mtu", "ethernet/ipv4/tcp", "--size", "70000"], names=("--size", "65535")),
        Case("mtu-size-2-64", ["mtu", "ethernet/ipv4/udp", "--size", str(2**64)], names=("--size",)),
        Case("mtu-pcap-dir", ["mtu", "ethernet/ipv4/tcp", "--pcap", "{tmp}"], names=("--pcap",)),
        Case("mtu-pcap-no-parent", ["mtu", "ethernet/ipv4/tcp", "--pcap", "{tmp}/no/such/x.pcap"], names=("--pcap",)),
        Case(
            "mtu-deep-stack",
            [
                "mtu",
                "/".join(["ethernet"] + ["ipv4/udp/openvpn(cipher=none,auth=none)/ethernet"] * 1000 + ["ipv4/tcp"]),
            ],
            names=("64 layers",),
        ),
        Case("run-missing-file", ["run", "{tmp}/absent.toml"], names=("absent.toml",)),
        Case("run-directory", ["run", "{tmp}"], names=("directory",)),
        Case("run-seed-negative", ["run", example, "--seed", "-1"], names=("--seed",)),
        Case("run-seed-2-64", ["run", "{file}", "--seed", str(2**64)], text=BASE, names=("--seed",)),
        Case("run-jobs-zero", ["run", example, "--jobs", "0"], names=("--jobs",)),
        Case("run-report-devnull", ["run", "{file}", "--report", "/dev/null"], text=BASE, names=("--report",)),
        Case("run-report-file", ["run", "{file}", "--report", "{file}"], text=BASE, names=("--report",)),
        Case("run-report-below-file", ["run", "{file}", "--report", "{file}/r"], text=BASE, names=("--report",)),
        Case("run-pcap-devnull", ["run", "{file}", "--pcap", "/dev/null"], text=BASE, names=("--pcap",)),
        Case("run-pcap-below-file", ["run", "{file}", "--pcap", "{file}/p"], text=BASE, names=("--pcap",)),
        Case(
            "run-pcap-snaplen-zero",
            ["run", "{file}", "--pcap", "{tmp}/p", "--pcap-snaplen", "0"],
            text=BASE,
            names=("--pcap-snaplen",),
        ),
        Case(
            "run-pcap-snaplen-negative",
            ["run", "{file}", "--pcap", "{tmp}/p", "--pcap-snaplen", "-1"],
            text=BASE,
            names=("--pcap-snaplen",),
        ),
        Case(
            "run-pcap-snaplen-text",
            ["run", "{file}", "--pcap", "{tmp}/p", "--pcap-snaplen", "all"],
            text=BASE,
            names=("--pcap-snaplen",),
        ),
        Case(
            "run-pcap-snaplen-2-32",
            ["run", "{file}", "--pcap", "{tmp}/p", "--pcap-snaplen", str(2**32)],
            text=BASE,
            names=("--pcap-snaplen",),
        ),
        Case(
            "run-pcap-snaplen-without-pcap",
            ["run", "{file}", "--pcap-snaplen", "96"],
            text=BASE,
            names=("--pcap-snaplen", "--pcap"),
        ),
        Case(
            "run-pcap-max-size-zero",
            ["run", "{file}", "--pcap", "{tmp}/p", "--pcap-max-size", "0"],
            text=BASE,
            names=("--pcap-max-size",),
        ),
        Case(
            "run-pcap-max-size-text",
            ["run", "{file}", "--pcap", "{tmp}/p", "--pcap-max-size", "big"],
            text=BASE,
            names=("--pcap-max-size",),
        ),
        Case(
            "run-pcap-max-size-bits",
            ["run", "{file}", "--pcap", "{tmp}/p", "--pcap-max-size", "10 Mb"],
            text=BASE,
            names=("--pcap-max-size", "bit"),
        ),
        Case(
            "run-pcap-max-size-without-pcap",
            ["run", "{file}", "--pcap-max-size", "1 GB"],
            text=BASE,
            names=("--pcap-max-size", "--pcap"),
        ),
        Case("run-max-memory-zero", ["run", "{file}", "--max-memory", "0"], text=BASE, names=("--max-memory",)),
        Case("run-max-memory-negative", ["run", "{file}", "--max-memory", "-1 GB"], text=BASE, names=("--max-memory",)),
        Case("run-max-memory-text", ["run", "{file}", "--max-memory", "plenty"], text=BASE, names=("--max-memory",)),
        Case(
            "run-max-memory-too-small",
            ["run", "{file}", "--max-memory", "1 kB"],
            text=BASE,
            names=("--max-memory", "too much memory"),
        ),
        Case("check-max-memory-zero", ["check", "{file}", "--max-memory", "0"], text=BASE, names=("--max-memory",)),
        Case(
            "check-max-memory-too-small",
            ["check", "{file}", "--max-memory", "1 kB"],
            text=BASE,
            names=("--max-memory", "too much memory"),
        ),
        Case(
            "check-pcap-snaplen-zero",
            ["check", "{file}", "--pcap", "{tmp}/p", "--pcap-snaplen", "0"],
            text=BASE,
            names=("--pcap-snaplen",),
        ),
        Case("reproduce-unknown", ["reproduce", "9", "--out", "{tmp}/r"], names=("SEED",)),
        Case("reproduce-text", ["reproduce", "abc", "--out", "{tmp}/r"], names=("SEED",)),
        Case("reproduce-out-file", ["reproduce", "002", "--out", "{file}"], text=BASE, names=("--out",)),
        Case("reproduce-out-devnull", ["reproduce", "002", "--out", "/dev/null"], names=("--out",)),
        Case("reproduce-jobs-negative", ["reproduce", "002", "--jobs", "-1"], names=("--jobs",)),
        Case("reach-missing", ["reach", "{tmp}/absent.toml"], names=("absent.toml",)),
        Case("reach-seed-negative", ["reach", example, "--seed", "-3"], names=("--seed",)),
        Case("bench-inf", ["bench", "--sim-seconds", "inf"], names=("--sim-seconds",)),
        Case("bench-nan", ["bench", "--sim-seconds", "nan"], names=("--sim-seconds",)),
        Case("bench-zero", ["bench", "--sim-seconds", "0"], names=("--sim-seconds",)),
        Case("bench-negative", ["bench", "--sim-seconds", "-1"], names=("--sim-seconds",)),
        Case("bench-unknown", ["bench", "--only", "no_such_bench"], names=("no_such_bench",)),
        Case("bench-repeat-zero", ["bench", "--repeat", "0"], names=("--repeat",)),
        Case("unknown-command", ["frobnicate"], names=("frobnicate",)),
        Case("unknown-option", ["check", example, "--frob"], names=("--frob",)),
        Case("check-no-file", ["check"], names=("file",)),
    ]


CASES = scenario_cases() + option_cases()


def invoke(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    """Run ``qoslab ARGS`` in this process as the installed command does."""
    from qoslab.cli import main

    argv = sys.argv
    sys.argv = ["qoslab", *args]
    code = 0
    try:
        main()
    except SystemExit as exit:
        code = exit.code if isinstance(exit.code, int) else (0 if exit.code is None else 1)
    finally:
        sys.argv = argv
    out = capsys.readouterr()
    return code, out.err + out.out


def line_of(text: str, needle: str) -> int:
    """1-based line of the first occurrence of ``needle`` in ``text``."""
    at = text.index(needle)
    return text.count("\n", 0, at) + 1


def test_corpus_is_large() -> None:
    # The issue asks for at least 200 bad inputs across every command.
    assert len(CASES) >= 200
    commands = {c.args[0] for c in CASES}
    assert {"check", "run", "mtu", "reproduce", "reach", "bench"} <= commands


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_bad_input(case: Case, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    file = tmp_path / "bad.toml"
    if case.text is not None:
        file.write_text(case.text)
    args = [a.replace("{file}", str(file)).replace("{tmp}", str(tmp_path)) for a in case.args]
    code, message = invoke(args, capsys)
    assert "Traceback" not in message and "panicked" not in message, message
    assert code == case.code, f"exit {code}, expected {case.code}:\n{message}"
    if case.text is not None and case.args[1] == "{file}" and not case.names:
        assert f"{file}:" in message or str(file) in message, message
        if case.needle is not None:
            assert f"{file}:{line_of(case.text, case.needle)}" in message, message
    for word in case.names:
        assert word in message, f"{word!r} not in:\n{message}"
    # Nothing half-written: a refused run leaves no report or capture behind.
    assert not (tmp_path / "r").exists() or case.args[0] != "reproduce"


def subprocess_qoslab(args: list[str], **kw: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "qoslab", *args], capture_output=True, text=True, timeout=120, cwd=ROOT, **kw
    )  # type: ignore[call-overload]


def test_dev_zero_is_refused_quickly() -> None:
    # /dev/zero never ends: the file is read in one bounded call and refused.
    result = subprocess_qoslab(["check", "/dev/zero"])
    assert result.returncode == 2
    assert "/dev/zero" in result.stderr and "too large" in result.stderr
    assert "Traceback" not in result.stderr


def test_second_ctrl_c_leaves_without_traceback(tmp_path: Path) -> None:
    # A reproduce runs simulations on a thread pool; Ctrl-C twice must still leave
    # cleanly (exit 130, 128 + SIGINT) with the finished points kept.
    proc = subprocess.Popen(
        [sys.executable, "-m", "qoslab", "reproduce", "000", "--out", str(tmp_path / "r"), "--jobs", "2"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    points = tmp_path / "r" / "data" / "seed000" / "points"
    while time.monotonic() < deadline and not (points.exists() and any(points.glob("*.json"))):
        time.sleep(0.2)
    proc.send_signal(signal.SIGINT)
    time.sleep(0.05)
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "Traceback" not in err, err
    assert "stopped (Ctrl-C)" in err
    kept = list(points.glob("*.json")) if points.exists() else []
    for path in kept:  # every kept point is whole JSON
        import json

        json.loads(path.read_text())


@pytest.mark.parametrize(
    "damage",
    ["not-utf8", "json-list", "missing-key", "directory", "truncated", "records-not-list"],
)
def test_damaged_point_file_is_recomputed(damage: str, tmp_path: Path) -> None:
    # A point file that is readable but damaged means "not finished": reproduce runs the
    # point again and rewrites it, and never crashes on it.
    from qoslab.studies import registry
    from qoslab.studies.runner import _point_file, load_finished, save_point

    study = registry()["002"]
    point = study.points()[0]
    out = tmp_path / "r"
    path = _point_file(out, study, point)
    path.parent.mkdir(parents=True)
    if damage == "not-utf8":
        path.write_bytes(b"\xff\xfe{")
    elif damage == "json-list":
        path.write_text("[1, 2]")
    elif damage == "missing-key":
        path.write_text('{"key": "x"}')
    elif damage == "directory":
        path.mkdir()
    elif damage == "truncated":
        path.write_text('{"key": "x", "digest": "')
    else:
        path.write_text(f'{{"key": "{point.key}", "digest": "{point.digest()}", "records": 3}}')
    assert load_finished(out, study, point) is None
    save_point(out, study, point, [{"x": 1}])
    assert load_finished(out, study, point) == [{"x": 1}]


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full to fill a 'disk'")
def test_full_disk_is_exit_1_one_line() -> None:
    # A write that finds the disk full (here: /dev/full as stdout, ENOSPC on every
    # write) stops the command with exit 1 and one line on stderr.
    with open("/dev/full", "w") as full:
        result = subprocess.run(
            [sys.executable, "-m", "qoslab", "schema"],
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
            cwd=ROOT,
        )
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    assert "no space left" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_every_example_checks(capsys: pytest.CaptureFixture[str]) -> None:
    # The corpus's counterpart: the examples are good input, and check says so.
    for path in sorted(EXAMPLES.glob("*.toml")):
        code, message = invoke(["check", str(path)], capsys)
        assert code == 0, f"{path.name}: {message}"


def test_check_refuses_what_the_simulator_refuses(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # A host with no gateway cannot reach another subnet: the simulator refuses a TCP
    # connection when it builds the network (crates/sim/src/world/build.rs), and check must say
    # so first, at the test's `to`.
    text = (
        BASE.replace('address = "10.0.0.2/24"', 'address = "10.0.1.2/24"')
        .replace('method = "udp.flow"', 'method = "tcp.bulk"')
        .replace('rate = "1 Mbps"\npayload = 1000\n', "")
    )
    file = tmp_path / "s.toml"
    file.write_text(text)
    code, message = invoke(["check", str(file)], capsys)
    assert code == 2, message
    assert f"{file}:{line_of(text, 'to = ')}" in message, message
    assert "no route" in message
