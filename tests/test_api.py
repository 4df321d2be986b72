"""The Python API (qoslab.api): the same checks and numbers as the command line, which is
the independent path each test compares with."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import qoslab
import tomli_w
from qoslab.errors import InputError

TWO_HOSTS = {
    "scenario": {"name": "two hosts", "seed": 3},
    "node": {
        "a": {"role": "host", "address": "10.0.0.1/24"},
        "sw": {"role": "switch"},
        "b": {"role": "host", "address": "10.0.0.2/24"},
    },
    "link": [
        {"type": "ethernet", "rate": "100 Mbps", "ends": ["a", "sw"]},
        {"type": "ethernet", "rate": "10 Mbps", "ends": ["sw", "b"]},
    ],
    "test": [
        {"method": "udp.flow", "from": "a", "to": "b", "rate": "5 Mbps", "payload": 1000, "duration": "1 s"},
        {"method": "ping", "from": "a", "to": "b", "count": 5},
    ],
}


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "qoslab", *args], capture_output=True, text=True, check=False, timeout=300
    )


def test_a_scenario_built_in_code_equals_the_same_tables_read_from_a_file(tmp_path):
    path = tmp_path / "s.toml"
    path.write_text(tomli_w.dumps(TWO_HOSTS), encoding="utf-8")
    assert qoslab.Scenario(**TWO_HOSTS) == qoslab.load(path) == qoslab.loads(path.read_text(), "s.toml")


def _problems(steps) -> list[tuple[object, ...]]:
    """The problems the first failing step raises, without their position."""
    try:
        for step in steps:
            step()
    except InputError as err:
        assert "Traceback" not in str(err)
        return [(p.key, p.message, p.expected, p.found) for p in err.problems]
    return []


@pytest.mark.parametrize(
    "change",
    [
        lambda d: d["link"][0].__setitem__("ends", ["a", "zz"]),  # a reference to no node
        lambda d: d["link"][1].__setitem__("rate", "10 Mbit"),  # a unit nobody writes
        lambda d: d["link"][1].__setitem__("colour", "blue"),  # an unknown key
        lambda d: d["node"]["a"].__setitem__("gateway", "10.9.9.9"),  # a gateway outside its subnet
        lambda d: d["test"][1].__setitem__("to", "sw"),  # a test aimed at a switch
    ],
)
def test_code_built_scenarios_get_the_files_problems(change):
    """A code-built scenario gets the problems the loader and `run` find in the same
    tables written to a file: same key path, message, expected and found (only the
    position differs: code has no line)."""
    data = json.loads(json.dumps(TWO_HOSTS))
    change(data)
    built: list[object] = []
    from_code = _problems([lambda: built.append(qoslab.Scenario(**data)), lambda: qoslab.run(built[0])])
    read: list[object] = []
    from_file = _problems(
        [lambda: read.append(qoslab.loads(tomli_w.dumps(data), "s.toml")), lambda: qoslab.run(read[0])]
    )
    assert from_code and from_code == from_file


def test_run_gives_the_records_qoslab_run_json_prints(tmp_path):
    path = tmp_path / "s.toml"
    path.write_text(tomli_w.dumps(TWO_HOSTS), encoding="utf-8")
    proc = cli("run", str(path), "--json")
    assert proc.returncode == 0, proc.stderr[-2000:]
    results = qoslab.run(qoslab.Scenario(**TWO_HOSTS))
    assert json.loads(json.dumps(results.records)) == json.loads(proc.stdout)["results"]
    assert results.seed == 3 and qoslab.run(path, seed=4).seed == 4


def test_results_as_arrow_and_rows():
    results = qoslab.run(qoslab.Scenario(**TWO_HOSTS))
    table = results.to_arrow()
    assert table.num_rows == len(results.records) == 2
    rows = table.to_pylist()
    udp = next(r for r in rows if r["test"] == "udp.flow")
    # 5 Mb/s of 1000-byte payloads (1028-byte IP datagrams) fit 10 Mb/s: nothing lost.
    assert udp["loss_pct"] == 0.0
    assert set(results.rows()[0]) == set(rows[0]) | set(results.rows()[0])


def test_to_pandas_or_a_clear_message():
    results = qoslab.run(qoslab.Scenario(**TWO_HOSTS))
    try:
        import pandas  # noqa: F401
    except ImportError:
        with pytest.raises(ImportError, match="pip install pandas"):
            results.to_pandas()
    else:
        frame = results.to_pandas()
        assert list(frame["test"]) == ["udp.flow", "ping"]


def test_run_with_pcap_lists_the_captures_tshark_reads(tmp_path):
    import shutil

    results = qoslab.run(qoslab.Scenario(**TWO_HOSTS), pcap=tmp_path / "cap")
    assert results.pcap_files and all(
        p.suffix == ".pcap" and p.is_relative_to(tmp_path / "cap") for p in results.pcap_files
    )
    if shutil.which("tshark") is None:
        pytest.skip("tshark is not installed (scripts/install.sh installs it)")
    for p in results.pcap_files:
        proc = subprocess.run(
            ["tshark", "-r", str(p), "-Y", "udp or icmp"], capture_output=True, text=True, check=False, timeout=120
        )
        assert proc.returncode == 0 and proc.stdout.strip(), (p, proc.stderr)


def test_run_refuses_an_unknown_backend():
    with pytest.raises(InputError, match="unknown backend"):
        qoslab.run(qoslab.Scenario(**TWO_HOSTS), backend="emu2")


def test_mtu_is_the_analysis_qoslab_mtu_json_prints():
    stack = "ethernet/ipv4/udp/openvpn(cipher=none,auth=sha1)/ethernet/pppoe/ipv4/tcp"
    proc = cli("mtu", stack, "--json", "--size", "1000")
    assert proc.returncode == 0, proc.stderr
    report = qoslab.mtu(stack, size=1000)
    from qoslab.output_schema import stamp

    assert stamp("mtu", report.to_json()) == json.loads(proc.stdout)
    # RFC 879: MSS = MTU - 40 for IPv4 and TCP without options.
    assert report.tcp_mss == report.mtu - 40


def test_mtu_bad_stack_is_input_error():
    with pytest.raises(InputError):
        qoslab.mtu("ethernet/ipv9")


def test_results_print_shows_the_tables(capsys):
    from rich.console import Console

    results = qoslab.run(qoslab.Scenario(**TWO_HOSTS))
    console = Console(record=True, width=160)
    results.print(console)
    text = console.export_text()
    assert "udp.flow" in text and "ping" in text


def test_the_api_example_runs(tmp_path):
    """docs/api_example.py, the notebook-style example, runs as a script."""
    example = Path(__file__).resolve().parents[1] / "docs" / "api_example.py"
    proc = subprocess.run(
        [sys.executable, str(example)], capture_output=True, text=True, check=False, timeout=600, cwd=tmp_path
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
