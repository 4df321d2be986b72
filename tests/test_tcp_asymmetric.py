"""TCP through the simulator: a download whose acknowledgements return over a slow SLIP
line (seed 004's set-up) is paced by the line time of its ACKs, computed here from
RFC 1055 and the 8N1 character format."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from qoslab.backends.sim import run_tests
from qoslab.scenario import loads_scenario

ASYMMETRIC = """
[scenario]
name = "download over Ethernet, acknowledgements over SLIP"
seed = 4

[node.server]
role = "host"
address = ["10.0.0.1/24", "10.0.1.1/24"]

[node.client]
role = "host"
address = ["10.0.0.2/24", "10.0.1.2/24"]
# Acknowledgements to the server go over the modem line, not back over Ethernet.
routes = [{{to = "10.0.0.1/32", via = "10.0.1.1"}}]

[[link]]
name = "down"
type = "ethernet"
rate = "10 Mbps"
ends = ["server", "client"]

[[link]]
name = "modem"
type = "serial"
rate = "{rate}"
framing = "slip"
ends = ["server", "client"]

[[test]]
method = "tcp.transfer"
from = "server"
to = "client"
bytes = "{size}"
window = "16 KiB"
congestion = "newreno"
"""


def run(rate: str, size: str = "500 kB") -> dict:
    scenario = loads_scenario(ASYMMETRIC.format(rate=rate, size=size))
    _, (run_,) = run_tests(scenario)
    (record,) = run_.records
    return record["metrics"]


def test_download_is_paced_by_the_acknowledgements_on_the_modem():
    metrics = run("9600 bps")
    assert metrics["completed"]
    # Linux-like TCP with timestamps: a pure ACK is 20 (IPv4) + 20 (TCP) + 12 (timestamps)
    # = 52 bytes, framed by SLIP with two ENDs; 8N1 sends 10 bits a byte at 9600 b/s.
    # Delayed ACKs acknowledge two 1448-byte segments each, so the download cannot beat
    # 2 × 1448 bytes per ACK line time (RFC 1055 escapes only make ACKs longer).
    ack_line_s = (52 + 2) * 10 / 9600
    ceiling_mbps = 2 * 1448 * 8 / ack_line_s / 1e6
    assert metrics["throughput_mbps"] <= ceiling_mbps * 1.001
    assert metrics["throughput_mbps"] > 0.8 * ceiling_mbps


def test_download_speed_follows_the_upload_speed():
    slow, fast = run("4800 bps"), run("9600 bps")
    # While the ACK line is the bottleneck, doubling its rate doubles the download.
    assert fast["throughput_mbps"] == pytest.approx(2 * slow["throughput_mbps"], rel=0.1)


def test_cli_runs_tcp_transfers(tmp_path):
    path = tmp_path / "asym.toml"
    path.write_text(ASYMMETRIC.format(rate="19200 bps", size="200 kB"))
    proc = subprocess.run(
        [sys.executable, "-m", "qoslab", "run", str(path), "--json"], capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0, proc.stderr
    record = json.loads(proc.stdout)["results"][0]
    assert record["test"] == "tcp.transfer" and record["metrics"]["completed"]
    assert record["metrics"]["bytes_received"] == 200_000
