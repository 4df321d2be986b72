"""Every --json output carries its schema version and validates against the JSON Schema
`qoslab schema --output KIND` prints (jsonschema, draft 2020-12, is the independent
validator)."""

from __future__ import annotations

import json
import subprocess
import sys

import jsonschema
import pytest
from qoslab.output_schema import VERSIONS

HOSTS = """
[scenario]
name = "two hosts and a switch"
seed = 2
[node.a]
role = "host"
address = "10.0.0.1/24"
[node.sw]
role = "switch"
[node.b]
role = "host"
address = "10.0.0.2/24"
[[link]]
type = "ethernet"
rate = "100 Mbps"
ends = ["a", "sw"]
[[link]]
type = "ethernet"
rate = "10 Mbps"
ends = ["sw", "b"]
"""

TESTS = {
    "udp_and_ping": '[[test]]\nmethod = "udp.flow"\nfrom = "a"\nto = "b"\nrate = "12 Mbps"\nduration = "1 s"\n[[test]]\nmethod = "ping"\nfrom = "a"\nto = "b"\ncount = 4\n',
    "tcp": '[[test]]\nmethod = "tcp.bulk"\nfrom = "a"\nto = "b"\nduration = "2 s"\n',
    "echo": '[[test]]\nmethod = "udp.echo"\nfrom = "a"\nto = "b"\ncount = 20\npayload = 100\ngap = "1 ms"\n',
    "rfc2544": '[[test]]\nmethod = "rfc2544.throughput"\nfrom = "a"\nto = "b"\nframe_sizes = [64, 1518]\nduration = "1 s"\n',
    "sweep": '[[test]]\nmethod = "ping"\nfrom = "a"\nto = "b"\ncount = 2\n[sweep]\n"link[1].rate" = ["1 Mbps", "10 Mbps"]\n',
}


def qoslab(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "qoslab", *args], capture_output=True, text=True, check=False, timeout=600
    )


def printed_schema(kind: str) -> dict:
    proc = qoslab("schema", "--output", kind)
    assert proc.returncode == 0, proc.stderr
    schema = json.loads(proc.stdout)
    jsonschema.Draft202012Validator.check_schema(schema)
    return schema


def valid(kind: str, stdout: str) -> dict:
    record = json.loads(stdout)
    assert record["schema"] == VERSIONS[kind] and record["output"] == kind
    jsonschema.validate(record, printed_schema(kind), cls=jsonschema.Draft202012Validator)
    return record


@pytest.mark.parametrize("name", sorted(TESTS))
def test_run_json_validates(name, tmp_path):
    path = tmp_path / "s.toml"
    path.write_text(HOSTS + TESTS[name], encoding="utf-8")
    proc = qoslab("run", str(path), "--json")
    assert proc.returncode == 0, proc.stderr[-2000:]
    record = valid("run", proc.stdout)
    assert record["results"]


@pytest.mark.parametrize(
    "args",
    [
        ["ethernet/ipv4/tcp"],
        ["ethernet/pppoe/ipv4/udp", "--size", "4000"],
        ["atm/aal5/llc-snap/ipv4", "--size", "9180"],
        ["serial(8n1)/slip/ipv4/tcp", "--size", "40"],
    ],
)
def test_mtu_json_validates(args):
    proc = qoslab("mtu", *args, "--json")
    assert proc.returncode == 0, proc.stderr
    valid("mtu", proc.stdout)


def test_reach_json_validates(tmp_path):
    path = tmp_path / "s.toml"
    path.write_text(HOSTS, encoding="utf-8")
    proc = qoslab("reach", str(path), "--json")
    assert proc.returncode == 0, proc.stderr
    record = valid("reach", proc.stdout)
    assert all(p["reachable"] for p in record["pairs"])


def test_bench_json_validates():
    proc = qoslab("bench", "--json", "--only", "ethernet_chain_10", "--sim-seconds", "0.001", "--repeat", "1")
    assert proc.returncode == 0, proc.stderr
    valid("bench", proc.stdout)


def test_the_schemas_can_fail(tmp_path):
    """A record of the wrong shape is refused: a count of bytes where datagrams are
    counted (a float), a missing field, another output's version."""
    path = tmp_path / "s.toml"
    path.write_text(HOSTS + TESTS["udp_and_ping"], encoding="utf-8")
    record = json.loads(qoslab("run", str(path), "--json").stdout)
    schema = printed_schema("run")
    validator = jsonschema.Draft202012Validator(schema)
    assert validator.is_valid(record)
    for broken in (
        {**record, "results": [{**record["results"][0], "metrics": {**record["results"][0]["metrics"], "sent": 12.5}}]},
        {k: v for k, v in record.items() if k != "results"},
        {**record, "schema": VERSIONS["run"] + 1},
        {
            **record,
            "results": [{**record["results"][0], "metrics": {**record["results"][0]["metrics"], "loss_pct": "none"}}],
        },
    ):
        assert not validator.is_valid(broken)


def test_unknown_output_is_bad_input():
    proc = qoslab("schema", "--output", "nonsense")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr and "run" in proc.stderr


def test_udp_records_read_as_iperf3_json_does(tmp_path):
    """A udp.flow record's `iperf3.end` has the keys real iperf3 (Debian's, run here on
    127.0.0.1) puts in its own `end.sum`, `end.sum_sent` and `end.sum_received`, and
    the values are the record's metrics under those names."""
    import shutil
    import socket
    import time

    iperf3 = shutil.which("iperf3")
    if iperf3 is None:
        pytest.skip("iperf3 is not installed (scripts/install.sh installs it)")
    blocks = ("sum", "sum_sent", "sum_received")

    def one_iperf3_run() -> dict | None:
        """One real iperf3 UDP test on 127.0.0.1 with a one-off server of its own: its
        `end`, or None when the run failed or its `end` lacks a block (a loaded machine
        can cut a run short, and a one-off server that saw a failed run has exited)."""
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        server = subprocess.Popen(
            [iperf3, "-s", "-1", "-B", "127.0.0.1", "-p", str(port)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            for _ in range(50):  # a client that finds no server yet fails at once: try again
                client = subprocess.run(
                    [iperf3, "-c", "127.0.0.1", "-p", str(port), "-u", "-b", "1M", "-t", "1", "--json"],
                    capture_output=True,
                    text=True,
                    check=False,
                    timeout=60,
                )
                if client.returncode == 0:
                    break
                time.sleep(0.1)
        finally:
            server.kill()
            server.wait()
        try:
            end = json.loads(client.stdout)["end"]
        except (ValueError, KeyError):
            return None
        return end if client.returncode == 0 and all(b in end for b in blocks) else None

    real = None
    for _ in range(5):
        real = one_iperf3_run()
        if real is not None:
            break
    assert real is not None, "five real iperf3 runs on 127.0.0.1 all failed or lacked an end block"
    path = tmp_path / "s.toml"
    path.write_text(HOSTS + TESTS["udp_and_ping"], encoding="utf-8")
    record = next(
        r for r in json.loads(qoslab("run", str(path), "--json").stdout)["results"] if r["test"] == "udp.flow"
    )
    ours = record["iperf3"]["end"]
    for block in blocks:
        assert set(ours[block]) == set(real[block]), block
    m = record["metrics"]
    received = ours["sum_received"]
    assert received["lost_packets"] == m["lost"] and received["packets"] == m["sent"]
    assert received["lost_percent"] == m["loss_pct"] and received["jitter_ms"] == m["jitter_ms"]
    # goodput_mbps is payload bits over the receiving interval (docs/metrics.md#goodput)
    assert received["bits_per_second"] == pytest.approx(m["goodput_mbps"] * 1e6, rel=1e-6)
    assert received["seconds"] == m["receive_interval_s"] and ours["sum_sent"]["sender"] is True
