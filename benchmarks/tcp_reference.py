"""qoslab's TCP against ns-3's on one lossy link, over many seeds (issue 14, section 3).

One bulk flow for ``--sim-seconds`` over a 30 Mb/s link with 10 ms of delay each way
and 1 % random loss towards the receiver (benchmarks/README.md, "TCP against
references", lists the settings side by side), for each congestion control (NewReno,
CUBIC) and MTU (576, 1500), over seeds 1..``--seeds``: qoslab's seed k and ns-3's
RngRun k, each tool drawing its own loss realisation. Prints the comparison table
(Markdown) and, with ``--json FILE``, every run's record.

qoslab runs in this process (``qoslab._core.simulate`` on ``qoslab.bench``'s
``tcp_cubic_30mbps_1pct`` configuration with the MTU, congestion control and seed
changed); ns-3 runs benchmarks/ns3/tcp_reference.py under ``--ns3-python`` (the
``.venv-bench`` venv with PyPI's ``ns3``), one process per protocol and MTU, niced.

Settings are matched to ns-3's: RACK and TLP off (ns-3 3.44 has neither), window growth
as ns-3's: ``TcpNewReno`` grows once per ACK in slow start and congestion avoidance
(``cwnd_growth = "acks"``); ``TcpCubic`` adds every segment acknowledged in slow start
(``cwnd_growth = "bytes"`` with no L), counts segments in congestion avoidance and
keeps its Reno-friendly α at 3(1 − β)/(1 + β) (``cubic_alpha = "constant"``, as
Linux). qoslab runs twice: with RFC 6675's recovery alone (RACK off) and with RACK
(RFC 8985, TLP off), which repairs lost retransmissions without the RTO as ns-3's
retransmission of the first unacknowledged segment on each partial ACK does. The last
column is qoslab's defaults (byte counting with L = 2, RFC 9438's α, RACK off).

    .venv/bin/python benchmarks/tcp_reference.py --seeds 20 --sim-seconds 20
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from qoslab.plan.models import SimConfig

ROOT = Path(__file__).resolve().parents[1]
NS3_SCRIPT = ROOT / "benchmarks" / "ns3" / "tcp_reference.py"

#: Window growth that matches ns-3's congestion controls (see the module docstring).
MATCHED = {
    "newreno": {"cwnd_growth": "acks"},
    "cubic": {"cwnd_growth": "bytes", "slow_start_limit": 0, "cubic_alpha": "constant"},
}


def qoslab_config(congestion: str, mtu: int, seed: int, sim_seconds: float, extra: dict[str, Any]) -> SimConfig:
    from qoslab.bench import tcp_cubic_config
    from qoslab.plan.models import TcpFlow, TcpOptions

    config = tcp_cubic_config(sim_seconds)
    config.seed = seed
    for node in config.nodes:
        for port in node.ports:
            port.mtu = mtu
    (flow,) = config.flows or []
    assert isinstance(flow.root, TcpFlow)
    # RACK off unless `extra` turns it on; TLP always off (ns-3 3.44 has neither).
    flow.root.tcp = TcpOptions.model_validate({"rack": False, "tlp": False, "congestion": congestion, **extra})
    return config


def run_qoslab(congestion: str, mtu: int, seed: int, sim_seconds: float, extra: dict[str, Any]) -> dict[str, Any]:
    from qoslab import _core
    from qoslab.bench import config_json

    results = json.loads(_core.simulate(config_json(qoslab_config(congestion, mtu, seed, sim_seconds, extra)), None))
    (flow,) = results["flows"]
    tcp = flow.get("tcp") or {}
    return {
        "tool": "qoslab",
        "congestion": congestion,
        "mtu": mtu,
        "seed": seed,
        "settings": extra,
        "sim_seconds": sim_seconds,
        "rx_payload_bytes": flow["bytes_received"],
        "throughput_mbps": flow["bytes_received"] * 8 / sim_seconds / 1e6,
        "timeouts": tcp.get("timeouts"),
        "fast_retransmits": tcp.get("fast_retransmits"),
        "retransmits": tcp.get("retransmits"),
    }


def run_ns3(python: str, congestion: str, mtu: int, seeds: list[int], sim_seconds: float) -> list[dict[str, Any]]:
    cmd = [
        "nice",
        python,
        str(NS3_SCRIPT),
        "--congestion",
        congestion,
        "--mtu",
        str(mtu),
        "--sim-seconds",
        str(sim_seconds),
        "--seeds",
        *map(str, seeds),
    ]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return [json.loads(line) for line in out.splitlines() if line.startswith("{")]


def mean_sd(xs: list[float]) -> tuple[float, float]:
    return statistics.fmean(xs), (statistics.stdev(xs) if len(xs) > 1 else math.nan)


def table(records: list[dict[str, Any]]) -> str:
    lines = [
        "| protocol | MTU | ns-3, Mb/s | qoslab RFC 6675 alone, Mb/s | difference | qoslab with RACK, Mb/s | difference | RTOs per run: ns-3 / qoslab / with RACK | fast recoveries per run: ns-3 / qoslab / with RACK | qoslab, Linux's growth, Mb/s |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    keys = sorted({(r["congestion"], r["mtu"]) for r in records}, key=lambda k: (k[0] != "newreno", k[1]))

    def cell(rs: list[dict[str, Any]]) -> str:
        if not rs:
            return "—"
        m, sd = mean_sd([r["throughput_mbps"] for r in rs])
        return f"{m:.3f} ± {sd:.3f} ({len(rs)})"

    def diff(rs: list[dict[str, Any]], ref: list[dict[str, Any]]) -> str:
        if not rs or not ref:
            return "—"
        m, n = statistics.fmean(r["throughput_mbps"] for r in rs), statistics.fmean(r["throughput_mbps"] for r in ref)
        return f"{(m - n) / n * 100:+.1f} %"

    def per_run(rs: list[dict[str, Any]], key: str, digits: int) -> str:
        return f"{statistics.fmean(r.get(key) or 0 for r in rs):.{digits}f}" if rs else "—"

    def pick(cc: str, mtu: int, tool: str, variant: str | None = None) -> list[dict[str, Any]]:
        return [
            r
            for r in records
            if r["tool"] == tool
            and r["congestion"] == cc
            and r["mtu"] == mtu
            and (variant is None or r.get("variant") == variant)
        ]

    for cc, mtu in keys:
        n, q = pick(cc, mtu, "ns3"), pick(cc, mtu, "qoslab", "matched")
        qr, lin = pick(cc, mtu, "qoslab", "matched_rack"), pick(cc, mtu, "qoslab", "linux")
        rto = " / ".join(per_run(x, "timeouts", 2) for x in (n, q, qr))
        frx = " / ".join(per_run(x, "fast_retransmits", 1) for x in (n, q, qr))
        lines.append(
            f"| {cc} | {mtu} | {cell(n)} | {cell(q)} | {diff(q, n)} | {cell(qr)} | {diff(qr, n)} | {rto} | {frx} | {cell(lin)} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=20, help="seeds 1..N for each tool (default 20)")
    parser.add_argument(
        "--sim-seconds", type=float, default=20.0, help="simulated seconds of traffic per run (default 20)"
    )
    parser.add_argument("--mtu", type=int, nargs="+", default=[576, 1500])
    parser.add_argument("--congestion", nargs="+", choices=("newreno", "cubic"), default=["newreno", "cubic"])
    parser.add_argument(
        "--ns3-python",
        default=str(ROOT / ".venv-bench" / "bin" / "python"),
        help="a Python with PyPI's ns3 (default .venv-bench/bin/python)",
    )
    parser.add_argument("--no-ns3", action="store_true", help="qoslab only")
    parser.add_argument(
        "--ns3-json", type=Path, help="take ns-3's records from this earlier --json file instead of running ns-3"
    )
    parser.add_argument("--json", type=Path, help="write every run's record here")
    args = parser.parse_args(argv)
    if args.seeds < 1 or args.sim_seconds <= 0:
        parser.error("--seeds and --sim-seconds must be positive")
    seeds = list(range(1, args.seeds + 1))
    records: list[dict[str, Any]] = []
    for cc in args.congestion:
        for mtu in args.mtu:
            for seed in seeds:
                for variant, extra in (
                    ("matched", MATCHED[cc]),
                    ("matched_rack", {**MATCHED[cc], "rack": True}),
                    ("linux", {}),
                ):
                    r = run_qoslab(cc, mtu, seed, args.sim_seconds, extra)
                    r["variant"] = variant
                    records.append(r)
            if args.ns3_json:
                records.extend(
                    r
                    for r in json.loads(args.ns3_json.read_text())
                    if r["tool"] == "ns3" and r["congestion"] == cc and r["mtu"] == mtu and r["seed"] in seeds
                )
            elif not args.no_ns3:
                if not os.path.exists(args.ns3_python):
                    parser.error(f"{args.ns3_python}: no such Python (create .venv-bench, see benchmarks/README.md)")
                records.extend(run_ns3(args.ns3_python, cc, mtu, seeds, args.sim_seconds))
            print(f"done: {cc} MTU {mtu}", file=sys.stderr)
    if args.json:
        args.json.write_text(json.dumps(records, indent=1) + "\n")
    print(table(records))
    return 0


if __name__ == "__main__":
    sys.exit(main())
