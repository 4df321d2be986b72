"""One source for each figure: for several scenarios, what `qoslab run` prints in its
terminal tables, its `--json`, the records `--report` writes (JSON, CSV, Parquet) and
the HTML report say the same number for the same metric, and a TCP test's intervals
add up to its totals.

The terminal's numbers are parsed from the rendered text; the sums are computed here.
Before this, examples/openvpn_tcp.toml printed 21.73 Mb/s in the table and 15.71 in the
JSON, and its total (7.77 MBytes) was not the sum of its intervals (5.62).
"""

from __future__ import annotations

import csv
import json
import os
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).parent.parent / "examples"

ROUTER_TWO_TESTS = """
[scenario]
name = "UDP and two TCP streams through a router onto 10 Mb/s"
seed = 1
[node.a]
role = "host"
address = "10.0.0.1/24"
gateway = "10.0.0.2"
[node.r]
role = "router"
address = ["10.0.0.2/24", "10.0.1.1/24"]
[node.b]
role = "host"
address = "10.0.1.2/24"
gateway = "10.0.1.1"
[[link]]
name = "l1"
type = "ethernet"
rate = "100 Mbps"
ends = ["a", "r"]
[[link]]
name = "l2"
type = "ethernet"
rate = "10 Mbps"
ends = ["r", "b"]
[[test]]
method = "udp.flow"
from = "a"
to = "b"
rate = "5 Mbps"
payload = 1472
duration = "1 s"
[[test]]
method = "ping"
from = "b"
to = "a"
count = 5
[[test]]
method = "tcp.bulk"
from = "a"
to = "b"
duration = "2 s"
streams = 2
interval = "0.5 s"
[[test]]
method = "tcp.transfer"
from = "b"
to = "a"
bytes = "300 kB"
"""


def _run(path: Path, report: Path) -> tuple[dict, str]:
    env = dict(os.environ, COLUMNS="250", NO_COLOR="1")
    proc = subprocess.run(
        [sys.executable, "-m", "qoslab", "run", str(path), "--json", "--report", str(report)],
        capture_output=True,
        text=True,
        timeout=900,
        env=env,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout), proc.stderr


def _sections(text: str) -> list[str]:
    """The terminal output of each test, in order (each begins with a rule: its title
    between two lines of ─)."""
    parts = re.split(r"^─{3,} .* ─{3,}$", text, flags=re.M)
    return parts[1:]


ROW = re.compile(r"^\s*(\d+|SUM)\s+(\d+\.\d+-\d+\.\d+|sender|receiver)\s+(\S+)\s+(\S+)\s*(\d*)")
FLOW_ROW = re.compile(r"^\s*(tcp|udp|ping|udp-echo) (?!.*\(learn\))\S+\s+(\d+)\s+(\d+)\s+(\d+)\s+(\S+)\s+(\S+)")


def _tcp_rows(section: str) -> list[tuple[str, str, str, str, str]]:
    """The TCP table's rows: (ID, interval or sender/receiver, MB, Mbit/s, retr)."""
    table = section[section.index("MB (10^6 B)") :]
    return [m.groups() for line in table.splitlines() if (m := ROW.match(line))]


def _flow_rows(section: str) -> list[tuple[str, ...]]:
    """The flows table's rows: (kind, sent, recv, lost, loss%, Mb/s)."""
    table = section[section.index("Flows (") :]
    table = table[: min(i for i in (table.find("TCP path MTU"), table.find("Links"), len(table)) if i >= 0)]
    return [m.groups() for line in table.splitlines() if (m := FLOW_ROW.match(line))]


class _Tables(HTMLParser):
    """The HTML report's result tables: a list of rows of cell texts, header first."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: list[list[list[str]]] = []
        self._cell: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        if tag == "table":
            self.tables.append([])
        elif tag == "tr":
            self.tables[-1].append([])
        elif tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            self.tables[-1][-1].append("".join(self._cell))
            self._cell = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)


def _mb(n: int) -> str:
    return f"{n / 1e6:.3f}"


def _mbit(bps: float | None) -> str:
    return "–" if bps is None else f"{bps / 1e6:.2f}"


SCENARIOS = [
    pytest.param(EXAMPLES / "openvpn_tcp.toml", id="openvpn_tcp"),
    pytest.param(EXAMPLES / "pmtu_blackhole.toml", id="pmtu_blackhole"),
    pytest.param(None, id="router_udp_tcp_streams"),
]


@pytest.mark.parametrize("example", SCENARIOS)
def test_table_json_records_and_html_agree(tmp_path, example):
    if example is None:
        example = tmp_path / "router.toml"
        example.write_text(ROUTER_TWO_TESTS, encoding="utf-8")
    out, text = _run(example, tmp_path / "report")
    records = out["results"]
    sections = _sections(text)
    assert len(sections) == len(records)
    data = tmp_path / "report" / "data"
    stored = json.loads((data / "records.json").read_text())
    with (data / "records.csv").open(newline="") as fh:
        rows_csv = list(csv.DictReader(fh))
    import pyarrow.parquet as pq

    rows_parquet = pq.read_table(data / "records.parquet").to_pylist()
    assert len(stored) == len(rows_csv) == len(rows_parquet) == len(records)
    html = _Tables()
    html.feed((tmp_path / "report" / "report.html").read_text(encoding="utf-8"))
    html_rows = [dict(zip(t[0], row)) for t in html.tables for row in t[1:]]

    tcp_tests = 0
    for rec, section, row, row_csv, row_pq, row_html in zip(
        records, sections, stored, rows_csv, rows_parquet, html_rows
    ):
        m = rec["metrics"]
        # The records (JSON, CSV, Parquet, HTML) hold the JSON's metric values.
        for key in ("throughput_mbps", "bytes_received", "retransmits", "loss_pct"):
            if key not in m:
                continue
            assert row[key] == m[key]
            assert row_pq[key] == pytest.approx(m[key], rel=1e-12)
            assert float(row_csv[key]) == pytest.approx(m[key], rel=1e-12)
            assert row_html[key] == (f"{m[key]:.4g}" if isinstance(m[key], float) else str(m[key]))
        flows = _flow_rows(section)
        if rec["test"] == "udp.flow":
            (flow,) = [f for f in flows if f[0] == "udp"]
            assert flow[1:] == (
                str(m["sent"]),
                str(m["received"]),
                str(m["lost"]),
                f"{m['loss_pct']:.2f}",
                f"{m['throughput_mbps']:.3f}",
            )
            assert f"{m['latency_ms']:.3f} / {m['latency_p99_ms']:.3f}" in section
        if rec["test"] == "ping":
            (flow,) = flows
            assert flow[1:5] == (
                str(m["sent"]),
                str(m["received"]),
                str(m["sent"] - m["received"]),
                f"{m['loss_pct']:.2f}",
            )
            assert f"rtt {m['rtt_mean_ms']:.3f}" in section
        if not rec["test"].startswith("tcp."):
            continue
        tcp_tests += 1
        streams = rec["streams"]
        assert "stalled" in m and m["stalled"] == row["stalled"]
        # The flows table: one row per stream, its sender's and receiver's figures.
        assert len(flows) == len(streams)
        for flow, st in zip(flows, streams):
            assert int(flow[1]) == st["sender"]["bytes_sent"]
            assert int(flow[2]) == st["receiver"]["bytes"]
            assert flow[5] == (
                "–" if st["receiver"]["bits_per_second"] is None else f"{st['receiver']['bits_per_second'] / 1e6:.3f}"
            )
        # The TCP table: each interval, then each stream's sender and receiver.
        rows = _tcp_rows(section)
        want = []
        for iv in rec.get("intervals") or []:
            for s in iv["streams"]:
                want.append(
                    (
                        str(s["id"]),
                        f"{s['start_s']:.2f}-{s['end_s']:.2f}",
                        _mb(s["bytes"]),
                        _mbit(s["bits_per_second"]),
                        str(s["retransmits"]),
                    )
                )
            if len(iv["streams"]) > 1:
                su = iv["sum"]
                want.append(
                    (
                        "SUM",
                        f"{su['start_s']:.2f}-{su['end_s']:.2f}",
                        _mb(su["bytes"]),
                        _mbit(su["bits_per_second"]),
                        str(su["retransmits"]),
                    )
                )
        for st in streams:
            want.append(
                (
                    str(st["id"]),
                    "sender",
                    _mb(st["sender"]["bytes"]),
                    _mbit(st["sender"]["bits_per_second"]),
                    str(st["sender"]["retransmits"]),
                )
            )
            want.append(
                (str(st["id"]), "receiver", _mb(st["receiver"]["bytes"]), _mbit(st["receiver"]["bits_per_second"]), "")
            )
        assert rows == want
        # The record's goodput is its streams' bytes over the test's window.
        total = sum(st["receiver"]["bytes"] for st in streams)
        assert m["bytes_received"] == total
        assert m["throughput_mbps"] == pytest.approx(total * 8 / m["window_s"] / 1e6, abs=1e-6)
        if len(streams) == 1:
            assert _mbit(streams[0]["receiver"]["bits_per_second"]) == f"{m['throughput_mbps']:.2f}"
        # Intervals add up to the totals exactly, per stream and summed.
        if rec.get("intervals"):
            for st in streams:
                got = sum(s["bytes"] for iv in rec["intervals"] for s in iv["streams"] if s["id"] == st["id"])
                retr = sum(s["retransmits"] for iv in rec["intervals"] for s in iv["streams"] if s["id"] == st["id"])
                assert got == st["receiver"]["bytes"]
                assert retr == st["sender"]["retransmits"]
            assert sum(iv["sum"]["bytes"] for iv in rec["intervals"]) == m["bytes_received"]
            # The table's interval MB add up to its receiver MB (each rounded to 1 kB).
            per_stream = [r for r in rows if r[0] != "SUM" and "-" in r[1]]
            assert sum(float(r[2]) for r in per_stream) == pytest.approx(
                total / 1e6, abs=0.0005 * len(per_stream) + 1e-9
            )
    assert tcp_tests >= 1


RFC2544 = """
[scenario]
name = "RFC 2544 throughput on 10 Mb/s"
seed = 1
[node.a]
role = "host"
address = "10.0.0.1/24"
[node.b]
role = "host"
address = "10.0.0.2/24"
[[link]]
type = "ethernet"
rate = "10 Mbps"
ends = ["a", "b"]
[[test]]
method = "rfc2544.throughput"
from = "a"
to = "b"
frame_sizes = [64, 1518]
duration = "1 s"
"""


def test_an_rfc2544_table_and_its_last_trial_are_not_mixed(tmp_path):
    """The method's table prints the records' values; the last trial's flows below it
    print that trial's own (before, the 1518-byte trial's flow showed the 64-byte
    frames' throughput, the first record's)."""
    path = tmp_path / "rfc2544.toml"
    path.write_text(RFC2544, encoding="utf-8")
    out, text = _run(path, tmp_path / "report")
    records = out["results"]
    lines = text.splitlines()
    head = next(i for i, line in enumerate(lines) if "frame B" in line and "Mb/s" in line)
    columns = re.split(r"\s{2,}", lines[head].strip())
    body = [re.split(r"\s{2,}", line.strip()) for line in lines[head + 2 : head + 2 + len(records)]]
    for rec, row in zip(records, body):
        cells = dict(zip(columns, row))
        assert cells["frame B"] == str(rec["parameters"]["frame_bytes"])
        v = rec["metrics"]["throughput_mbps"]
        assert cells["Mb/s"] == f"{v:,.3f}".rstrip("0").rstrip(".")
    # The last trial (1518-byte frames) in detail: its UDP row is its own payload rate
    # (frames received × 1472 payload bytes over the trial's 1 s of sending, to the
    # last frame's gap), not a record's.
    (udp,) = [f for f in _flow_rows(text[text.index("the last trial in detail") :]) if f[0] == "udp"]
    received = int(udp[2])
    assert float(udp[5]) == pytest.approx(received * 1472 * 8 / 1.0 / 1e6, rel=2e-3)
    assert all(float(udp[5]) != pytest.approx(r["metrics"]["throughput_mbps"], rel=2e-3) for r in records)
