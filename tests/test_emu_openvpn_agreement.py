"""OpenVPN's throughput on the simulator and on real openvpn agree (the issue "OpenVPN
throughput: why the simulator and real Linux disagree").

examples/openvpn_tcp.toml (TUN, 1 % Bernoulli loss each way on the WAN, tcp.bulk through
the tunnel) gave emu 52.2 against sim 15.7 Mb/s over a TCP transport and 5.9 against
11.1 over UDP. Three causes, each checked here by what the kernel itself reports:

- openvpn sets no congestion control on its socket, and a new namespace takes the
  host's default (BBR on the machine it was found on): the outer connection ran BBR,
  which 1 % loss hardly slows, where the simulator's runs CUBIC. The emulation backend
  gives it CUBIC by its route (``ss -ti`` names the algorithm of the connection).
- openvpn ran as a normal process beside the SCHED_FIFO link emulators and waited most
  of the test for a CPU (the kernel's scheduling policy of each openvpn process).
- the simulator's outer connection ran ``TcpConfig::default()`` (ns-3-matched CUBIC,
  no PRR, no HyStart) where the kernel runs tcp_cubic.c with PRR and HyStart: 15.7
  against Linux's 9.8 Mb/s through the same loss.

The agreement: the receiver's goodput of tcp.bulk through a TCP-transport tunnel, the
simulator over seeds 1..8 against the emulation over seeds 1..3, with the inner TCP of
the simulator set to what the kernel runs (``[test.tcp]`` as
examples/cubic_30mbps_loss.toml sets it), so that only the tunnel is compared. The
tolerance is three standard errors of the difference of the two means, from a run's
spread ``SPREAD_MBPS`` (below), not from the values compared.

These tests need root, network namespaces and openvpn; without them they are skipped,
saying why. The agreement test takes about two minutes.
"""

from __future__ import annotations

import math
import os
import re
import shutil
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from emu_host import own_emu_registry, why_no_namespaces  # noqa: F401 (an autouse fixture)
from qoslab.scenario import load_scenario

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "openvpn_tcp.toml"


def _why_not() -> str | None:
    if os.geteuid() == 0 and shutil.which("openvpn") is None:
        return "openvpn is not installed (scripts/install.sh installs it: apt-get install openvpn)"
    return why_no_namespaces()


WHY = _why_not()
pytestmark = pytest.mark.skipif(WHY is not None, reason=WHY or "")

LINUX_INNER_TCP = '\n[test.tcp]\ncubic_alpha = "linux"\nprr = true\nhystart = "classic"\n'
"""The simulator's inner TCP set to what the kernel's iperf3 connection runs (tcp_cubic.c's
arithmetic, PRR since Linux 3.2, HyStart hystart=1), as examples/cubic_30mbps_loss.toml
sets it; the emulation backend ignores the table."""

SIM_SEEDS = range(1, 9)
EMU_SEEDS = range(1, 4)

SPREAD_MBPS = 2.0
"""A run's standard deviation of the goodput through this tunnel: the largest seen in
the runs this test was written from, rounded up (docs/compare.md, "OpenVPN"): the
simulator over seeds 1-8, 1.79 Mb/s through the TCP transport and 1.33 through UDP; the
emulation over seeds 1-5 after the fix, 1.05 and 0.96 (its inner TCP the kernel's).
The loss draws fall on other packets in every run, so single runs vary this much on
either backend. With 8 and 3 runs the tolerance is 4.06 Mb/s; before the fix the TCP
transport's means were 7-36 Mb/s apart."""


def _scenario(tmp_path: Path, proto: str) -> Path:
    text = EXAMPLE.read_text().replace('proto = "tcp"', f'proto = "{proto}"') + LINUX_INNER_TCP
    path = tmp_path / f"openvpn_{proto}.toml"
    path.write_text(text)
    return path


def _goodput(records: list[dict[str, Any]]) -> float:
    (rec,) = [r for r in records if r["test"] == "tcp.bulk"]
    return float(rec["metrics"]["throughput_mbps"])


def _emu_goodput(path: Path, seed: int) -> float:
    """One emulation run, as a user starts it (the link emulator's loss seeded with ``seed``)."""
    import json

    done = subprocess.run(
        [sys.executable, "-m", "qoslab", "run", str(path), "--backend", "emu", "--seed", str(seed), "--json"],
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert done.returncode == 0, done.stderr
    return _goodput(json.loads(done.stdout)["results"])


def test_the_outer_connection_runs_cubic_and_openvpn_runs_under_sched_fifo(tmp_path: Path) -> None:
    """The kernel's own view of a TCP-transport tunnel the emulation backend started:
    both ends of the connection on port 1194 run CUBIC (``ss -ti``), whatever the host's
    default, and every openvpn process is SCHED_FIFO (sched_getscheduler(2))."""
    from qoslab.backends.emu import prepare, registry, topology
    from qoslab.backends.emu.links import DirectVeth

    path = _scenario(tmp_path, "tcp")
    net = prepare(load_scenario(path), source=path)
    record = registry.RunRecord.start(str(path), DirectVeth.implementation)
    topo = topology.build(net.config, record, DirectVeth())
    try:
        algorithms = {}
        for node in ("client", "vpnserver"):
            shown = subprocess.run(
                ["ip", "netns", "exec", topo.namespace(node), "ss", "-tin", "( sport = :1194 or dport = :1194 )"],
                capture_output=True,
                text=True,
                check=True,
                timeout=10,
            ).stdout
            # ss -i prints the connection's line, then its TCP info starting with the
            # congestion control's name (ss(8)).
            algorithms[node] = re.findall(r"^\s+([a-z0-9_]+) ", shown, re.MULTILINE)
        policies = [os.sched_getscheduler(t.process.pid) for t in topo.tunnels]
    finally:
        topology.teardown(topo)
    assert algorithms == {"client": ["cubic"], "vpnserver": ["cubic"]}
    assert len(policies) == 2 and all(p == os.SCHED_FIFO for p in policies)


def _mean_sd(values: list[float]) -> tuple[float, float]:
    return statistics.fmean(values), statistics.stdev(values)


@pytest.mark.parametrize("proto", ["tcp", "udp"])
def test_goodput_through_openvpn_agrees_between_simulator_and_linux(tmp_path: Path, proto: str) -> None:
    """tcp.bulk through the tunnel: |emu mean - sim mean| within three standard errors
    of the difference (SPREAD_MBPS per run, SIM_SEEDS and EMU_SEEDS runs)."""
    from qoslab.compare import run_sim

    path = _scenario(tmp_path, proto)
    scenario = load_scenario(path)
    sim = [_goodput(run_sim(scenario, path, seed)) for seed in SIM_SEEDS]
    emu = [_emu_goodput(path, seed) for seed in EMU_SEEDS]
    tolerance = 3 * SPREAD_MBPS * math.sqrt(1 / len(sim) + 1 / len(emu))
    (sim_mean, sim_sd), (emu_mean, emu_sd) = _mean_sd(sim), _mean_sd(emu)
    summary = (
        f"sim {sim_mean:.2f} ± {sim_sd:.2f} {sim}, emu {emu_mean:.2f} ± {emu_sd:.2f} {emu}, tolerance {tolerance:.2f}"
    )
    print(summary)
    assert abs(emu_mean - sim_mean) <= tolerance, summary
