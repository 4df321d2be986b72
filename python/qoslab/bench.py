"""Speed benchmarks: how fast qoslab's simulator runs, and how that compares with ns-3.

``qoslab bench`` runs these and prints the record of ../DESIGN.md ("Machine-readable
output")::

    {"scenarios": [{"name", "events", "wall_s", "events_per_s", "sim_time_s", ...}],
     "comparisons": [{"name", "qoslab_wall_s", "ns3_wall_s", "speedup",
                      "qoslab_throughput_mbps", "ns3_throughput_mbps",
                      "throughput_diff_pct"}],
     "skipped": [{"name", "reason"}]}

``comparisons`` is there with ``--with-ns3`` only. The machine is shared and noisy, so
speed is never asserted anywhere: it is measured here, and compared with ns-3 on the
same scenario in the same run, as a ratio (benchmarks/README.md).

The benchmarks:

``wifi_80211b_saturation``
    One 802.11b station saturating its AP with UDP (1472-byte payload, 1500-byte IP
    packets, 11 Mb/s, long preamble, Ack at 2 Mb/s, RTS off, no rate adaptation).
    ns-3: benchmarks/ns3/wifi_saturation.py.
``ethernet_chain_10``
    Ten nodes in a line (host, eight routers, host) joined by nine 100 Mb/s Ethernet
    links; one saturating UDP flow from end to end. ns-3: benchmarks/ns3/ethernet_chain.py.
``seed004_download``
    Seed 004's 10 MB download (examples/seed004_asymmetric.toml at its 57.6 kb/s point):
    a 2 Mb/s 802.11 downlink, the TCP ACKs over a SLIP line, NetBSD 1.1's fixed 16 KiB
    window. Runs to the end of the transfer (``--sim-seconds`` does not apply).
    ns-3: benchmarks/ns3/seed004_download.py (a PointToPoint line at 8/10 of the rate
    standing in for SLIP over 8N1; the script says why the octets match).
``tcp_cubic_30mbps_1pct``
    One CUBIC flow for 60 s over 30 Mb/s with 10 ms each way and 1 % loss on the
    forward direction (seed 002's lossy link). ns-3: benchmarks/ns3/tcp_cubic.py.
``switch_1000_hosts``
    Peak memory of 1,000 hosts on one learning switch, each pinging its neighbour
    once a second; run in a child process so that its peak RSS is the simulation's.
``switch_10000_hosts_scenario``
    10,000 hosts on one switch written as a scenario file's text, taken the whole way a
    user's ``qoslab run`` takes it: parsed and checked (``load_s``), lowered, run and
    read back (``run_s``: a 3-echo ping from the first host to the last, ``sim_s`` of it
    in ``_core.simulate``); ``wall_s`` is their sum, ``peak_rss_mib`` the child's peak.
    Run once, in a child process; ``--sim-seconds`` does not apply.
``wire``
    crates/wire encode+decode (``cargo bench -p qoslab-benchmarks --bench wire``); run
    only from a source checkout with cargo on PATH.
``emu_link`` (only when named: ``--only emu_link``)
    The link emulator (crates/emu) beside a direct veth pair in one run: 1514-byte frames'
    throughput (frames/s, Mb/s) and the timing error against kernel timestamps
    (python/qoslab/bench_emu.py). Needs root and network namespaces (skipped otherwise,
    with the reason); ``emu_seconds`` of traffic per throughput run and one timing frame
    a millisecond for as long. Its record goes to ``"emulator"``.

Both tools measure only the simulation's run: qoslab's ``_core.simulate`` call (the
configuration already built), ns-3's ``Simulator.Run()`` (import and set-up excluded).
Each is timed ``repeat`` times (default 3, ``--repeat``) in the same bench run and the
median is reported (``wall_s``; every run's time in ``wall_runs_s``): qoslab calls
``simulate`` again on the same configuration in the same process (and checks the results
are byte-identical), ns-3's script runs again in a new process. The speed-up is the ratio
of the two medians. Each run's CPU time (``time.thread_time`` over the same span) is kept
too (``cpu_s``, ``cpu_runs_s``) with ``cpu_speedup`` beside ``speedup``: on a machine
shared with other jobs, wall time counts the time the run waited for a core and CPU time
does not.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from qoslab.bench_networks import (
    ALL_BENCHMARKS,
    BRIDGE_MAC,
    CONFIG_BUILDERS,
    DEFAULT_REPEAT,
    DEFAULT_SIM_SECONDS,
    NS,
    NS3_INSTALL_HINT,
    NS3_SCRIPTS,
    QUICK_BENCHMARKS,
    SCENARIO_SWITCH_HOSTS,
    WARMUP_S,
    _ns,
    atm_clip_config,
    config_json,
    ethernet_chain_config,
    seed004_download_config,
    switch_config,
    tcp_cubic_config,
    transfer_throughput_mbps,
    wifi_saturation_config,
)
from qoslab.errors import InputError, Problem, did_you_mean

if TYPE_CHECKING:
    from qoslab.plan.results_models import Results

OPT_IN_BENCHMARKS = ("emu_link",)
"""Benchmarks run only when named (``--only``): the emulator needs root and namespaces,
and its frames share the machine's cores with whatever else runs."""

DEFAULT_EMU_SECONDS = 3.0
"""Seconds of traffic of each of ``emu_link``'s throughput and timing runs."""


class Unavailable(Exception):
    """A benchmark that cannot run here (a tool or a core function missing)."""


class BenchFailed(Exception):
    """A benchmark that ran and failed."""


def _simulate() -> Callable[[str, Any], str]:
    from qoslab import _core

    simulate: Callable[[str, Any], str] | None = getattr(_core, "simulate", None)
    if simulate is None:
        raise Unavailable("this build of qoslab._core has no simulate(); rebuild it (maturin develop)")
    return simulate


def _core_build() -> str:
    """How the core that ran was compiled (``"pgo"`` or ``"release"``, see
    scripts/install.sh): a profile-guided build runs the per-packet path in fewer
    instructions, so a speed figure says which build it is of."""
    from qoslab import _core

    return getattr(_core, "core_build", lambda: "release")()


def flow_throughput_mbps(results: Results, flow_id: int, seconds: float) -> float | None:
    """UDP payload throughput of one flow from the simulator's results, Mb/s: the
    payload octets it received (``bytes_received``) × 8 over ``seconds``. None when the
    results have no flow ``flow_id`` (or ``seconds`` is not positive)."""
    for flow in results.flows:
        if flow.id == flow_id and seconds > 0:
            return float(flow.bytes_received * 8 / seconds / 1e6)
    return None


def _scenario_record(
    name: str, events: int | None, wall_s: float, sim_time_s: float | None, **extra: Any
) -> dict[str, Any]:
    record: dict[str, Any] = {
        "name": name,
        "events": events,
        "wall_s": wall_s,
        "events_per_s": (events / wall_s) if events is not None and wall_s > 0 else None,
        "sim_time_s": sim_time_s,
    }
    record.update(extra)
    return record


def run_sim(
    name: str, sim_seconds: float, simulate: Callable[[str, Any], str] | None = None, repeat: int = DEFAULT_REPEAT
) -> dict[str, Any]:
    """Runs one simulator scenario in this process ``repeat`` times and times the
    ``simulate`` call only; the record's ``wall_s`` is the median. The runs must give
    byte-identical results (the determinism contract), else the benchmark fails."""
    simulate = simulate or _simulate()
    text = config_json(CONFIG_BUILDERS[name](sim_seconds))
    walls: list[float] = []
    cpus: list[float] = []
    out: Any = None
    for _ in range(repeat):
        # The run releases the GIL but stays on this thread: its CPU time is this thread's.
        start, cpu_start = time.perf_counter(), time.thread_time()
        try:
            again = simulate(text, None)
        except Exception as err:  # the core maps its errors to Python exceptions
            raise BenchFailed(f"{name}: the simulator refused or failed: {err}") from err
        walls.append(time.perf_counter() - start)
        cpus.append(time.thread_time() - cpu_start)
        if out is not None and again != out:
            raise BenchFailed(f"{name}: two runs of the same configuration gave different results")
        out = again
    wall = statistics.median(walls)
    from qoslab.backends.sim import SimulationError, read_results

    try:
        results = read_results(out)
    except SimulationError as err:
        raise BenchFailed(f"{name}: {err}") from err
    sim_time_ns = results.sim_time_ns
    extra: dict[str, Any] = {
        "tool": "qoslab",
        "repeat": repeat,
        "wall_runs_s": walls,
        "cpu_s": statistics.median(cpus),
        "cpu_runs_s": cpus,
        "core_build": _core_build(),
    }
    if name == "seed004_download":
        extra["throughput_mbps"] = transfer_throughput_mbps(results)
    elif name in NS3_SCRIPTS:
        extra["throughput_mbps"] = flow_throughput_mbps(results, 1, sim_seconds)
    if results.atm is not None:
        cells = sum(sum(per_link) for per_link in results.atm.cells)
        extra.update(
            cells=cells,
            cells_per_s=cells / wall if wall > 0 else None,
            throughput_mbps=flow_throughput_mbps(results, 1, sim_seconds),
        )
    return _scenario_record(name, results.events, wall, sim_time_ns / NS, **extra)


_MEMORY_CHILD = """
import json, resource, sys, time
from qoslab import _core, bench
simulate = getattr(_core, "simulate", None)
if simulate is None:
    print(json.dumps({"unavailable": "this build of qoslab._core has no simulate()"})); sys.exit(0)
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
config = bench.config_json(bench.switch_config(float(sys.argv[1])))
t = time.perf_counter()
results = json.loads(simulate(config, None))
wall = time.perf_counter() - t
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"events": results.get("events"), "sim_time_ns": results.get("sim_time_ns"),
                  "wall_s": wall, "base_rss_kib": base, "peak_rss_kib": peak}))
"""


def run_switch_memory(sim_seconds: float) -> dict[str, Any]:
    """(c) in a child Python: peak RSS of the whole child, and that above the RSS the
    child had with qoslab imported and the configuration not yet built."""
    proc = subprocess.run(
        [sys.executable, "-c", _MEMORY_CHILD, repr(sim_seconds)], capture_output=True, text=True, check=False
    )
    if proc.returncode != 0:
        raise BenchFailed(f"switch_1000_hosts: the child failed: {proc.stderr.strip()[-2000:]}")
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    if "unavailable" in out:
        raise Unavailable(out["unavailable"])
    sim_ns = out.get("sim_time_ns")
    return _scenario_record(
        "switch_1000_hosts",
        out.get("events"),
        out["wall_s"],
        sim_ns / NS if sim_ns is not None else None,
        tool="qoslab",
        peak_rss_mib=out["peak_rss_kib"] / 1024,
        sim_rss_mib=(out["peak_rss_kib"] - out["base_rss_kib"]) / 1024,
    )


def switch_scenario_text(hosts: int = SCENARIO_SWITCH_HOSTS) -> str:
    """``hosts`` hosts on one switch (10.0.0.0/16, host i at 10.0.0.0 + i + 1) as a
    scenario file, with a 3-echo ping from the first host to the last."""
    out = ["[scenario]", f'name = "{hosts} hosts on one switch"', "seed = 1", "", "[node.sw]", 'role = "switch"', ""]
    for i in range(hosts):
        a = (10 << 24) + i + 1
        out += [f"[node.h{i}]", 'role = "host"', f'address = "10.{(a >> 16) & 255}.{(a >> 8) & 255}.{a & 255}/16"', ""]
    for i in range(hosts):
        out += ["[[link]]", 'type = "ethernet"', 'rate = "100 Mbps"', f'ends = ["h{i}", "sw"]', ""]
    out += ["[[test]]", 'method = "ping"', 'from = "h0"', f'to = "h{hosts - 1}"', "count = 3", ""]
    return "\n".join(out)


_SCENARIO_CHILD = """
import json, resource, sys, time
from qoslab import bench
from qoslab.backends import sim
from qoslab.scenario import loads_scenario
text = bench.switch_scenario_text(int(sys.argv[1]))
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
inner = sim.simulate
spent = []
def timed(*args, **kw):
    t = time.perf_counter()
    out = inner(*args, **kw)
    spent.append(time.perf_counter() - t)
    return out
sim.simulate = timed
t0 = time.perf_counter()
scenario = loads_scenario(text)
t1 = time.perf_counter()
_, runs = sim.run_tests(scenario)
t2 = time.perf_counter()
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
(run,) = runs
(record,) = run.records
print(json.dumps({"events": run.results.events, "sim_time_ns": run.results.sim_time_ns,
                  "load_s": t1 - t0, "run_s": t2 - t1, "sim_s": sum(spent),
                  "received": record["metrics"]["received"], "sent": record["metrics"]["sent"],
                  "base_rss_kib": base, "peak_rss_kib": peak}))
"""


def run_switch_scenario(hosts: int = SCENARIO_SWITCH_HOSTS) -> dict[str, Any]:
    """``switch_10000_hosts_scenario`` in a child Python: time and peak RSS of a scenario
    file of ``hosts`` hosts on one switch, from its text to the ping's record."""
    proc = subprocess.run(
        [sys.executable, "-c", _SCENARIO_CHILD, str(hosts)], capture_output=True, text=True, check=False
    )
    if proc.returncode != 0:
        raise BenchFailed(f"switch_10000_hosts_scenario: the child failed: {proc.stderr.strip()[-2000:]}")
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    if out["received"] != out["sent"]:
        raise BenchFailed(f"switch_10000_hosts_scenario: {out['received']} of {out['sent']} echo replies")
    sim_ns = out.get("sim_time_ns")
    return _scenario_record(
        "switch_10000_hosts_scenario",
        out.get("events"),
        out["load_s"] + out["run_s"],
        sim_ns / NS if sim_ns is not None else None,
        tool="qoslab",
        hosts=hosts,
        load_s=out["load_s"],
        run_s=out["run_s"],
        sim_s=out["sim_s"],
        peak_rss_mib=out["peak_rss_kib"] / 1024,
        scenario_rss_mib=(out["peak_rss_kib"] - out["base_rss_kib"]) / 1024,
    )


def source_root() -> Path | None:
    """The source checkout this qoslab runs from (benchmarks/ beside python/), if any."""
    env = os.environ.get("QOSLAB_SOURCE_ROOT")
    root = Path(env) if env else Path(__file__).resolve().parents[2]
    return root if (root / "benchmarks").is_dir() else None


def run_wire() -> list[dict[str, Any]]:
    """crates/wire's benchmark through cargo; each JSON line becomes a scenario with
    ``events`` = frames encoded and decoded, ``sim_time_s`` null (nothing simulated)."""
    root = source_root()
    cargo = shutil.which("cargo")
    if root is None or cargo is None:
        raise Unavailable("the wire benchmark needs a source checkout and cargo on PATH")
    proc = subprocess.run(
        [cargo, "bench", "-q", "-p", "qoslab-benchmarks", "--bench", "wire"],
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        raise BenchFailed(f"wire: cargo bench failed: {proc.stderr.strip()[-2000:]}")
    records = []
    for line in proc.stdout.splitlines():
        line = line.strip()
        if not line.startswith("{"):
            continue
        m = json.loads(line)
        records.append(_scenario_record(m["bench"], m["iterations"], m["wall_s"], None, tool="qoslab", unit="frames"))
    if not records:
        raise BenchFailed("wire: cargo bench printed no JSON line")
    return records


def ns3_python() -> Path | None:
    """The Python with ns-3: $QOSLAB_NS3_PYTHON, else the checkout's .venv-bench."""
    env = os.environ.get("QOSLAB_NS3_PYTHON")
    if env:
        return Path(env)
    root = source_root()
    if root is None:
        return None
    candidate = root / ".venv-bench" / "bin" / "python"
    return candidate if candidate.exists() else None


def run_ns3(name: str, sim_seconds: float, python: Path | None = None) -> dict[str, Any]:
    """Runs benchmarks/ns3/<script> in the bench venv and returns its JSON line."""
    python = python or ns3_python()
    root = source_root()
    if python is None or root is None:
        raise Unavailable(f"no Python with ns-3 found; {NS3_INSTALL_HINT}")
    if not python.exists():
        raise Unavailable(f"{python} does not exist; {NS3_INSTALL_HINT}")
    script = root / "benchmarks" / "ns3" / NS3_SCRIPTS[name]
    proc = subprocess.run(
        [str(python), str(script), "--sim-seconds", repr(sim_seconds)], capture_output=True, text=True, check=False
    )
    if proc.returncode != 0:
        if "No module named 'ns'" in proc.stderr or "ModuleNotFoundError" in proc.stderr:
            raise Unavailable(f"{python} cannot import ns-3; {NS3_INSTALL_HINT}")
        raise BenchFailed(f"{name}: the ns-3 script failed: {proc.stderr.strip()[-2000:]}")
    lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    if not lines:
        raise BenchFailed(f"{name}: the ns-3 script printed no JSON line")
    record: dict[str, Any] = json.loads(lines[-1])
    return record


def ns3_median(records: list[dict[str, Any]]) -> dict[str, Any]:
    """One record of several runs of an ns-3 script: the first run's figures, with
    ``wall_s`` the median of the runs' ``Simulator.Run()`` times (every one in
    ``wall_runs_s``) and ``runs_identical`` whether they all gave the same events and
    bytes (ns-3 is deterministic for a given ``--seed``)."""
    first = dict(records[0])
    walls = [r["wall_s"] for r in records]
    first["wall_s"] = statistics.median(walls)
    first["wall_runs_s"] = walls
    first["repeat"] = len(records)
    cpus = [r["cpu_s"] for r in records if isinstance(r.get("cpu_s"), (int, float))]
    if len(cpus) == len(records):
        first["cpu_s"] = statistics.median(cpus)
        first["cpu_runs_s"] = cpus
    events = first.get("events")
    first["events_per_s"] = events / first["wall_s"] if events is not None and first["wall_s"] > 0 else None
    first["runs_identical"] = all(
        (r.get("events"), r.get("rx_payload_bytes")) == (records[0].get("events"), records[0].get("rx_payload_bytes"))
        for r in records
    )
    return first


def compare(ours: dict[str, Any], theirs: dict[str, Any]) -> dict[str, Any]:
    """One row of ``comparisons``: speedup = ns-3's Run() time / qoslab's simulate time
    (each the median of its runs)."""
    q_tp, n_tp = ours.get("throughput_mbps"), theirs.get("throughput_mbps")
    return {
        "name": ours["name"],
        "qoslab_wall_s": ours["wall_s"],
        "ns3_wall_s": theirs["wall_s"],
        "speedup": theirs["wall_s"] / ours["wall_s"] if ours["wall_s"] > 0 else None,
        "qoslab_cpu_s": ours.get("cpu_s"),
        "ns3_cpu_s": theirs.get("cpu_s"),
        "cpu_speedup": theirs["cpu_s"] / ours["cpu_s"] if ours.get("cpu_s") and theirs.get("cpu_s") else None,
        "qoslab_throughput_mbps": q_tp,
        "ns3_throughput_mbps": n_tp,
        "throughput_diff_pct": 100 * (q_tp - n_tp) / n_tp if q_tp is not None and n_tp else None,
        "qoslab_events": ours.get("events"),
        "ns3_events": theirs.get("events"),
    }


@dataclass
class BenchReport:
    scenarios: list[dict[str, Any]]
    comparisons: list[dict[str, Any]] | None
    ns3: list[dict[str, Any]]
    skipped: list[dict[str, str]]
    failed: list[dict[str, str]]
    emulator: list[dict[str, Any]] | None = None
    """``emu_link``'s record (:func:`qoslab.bench_emu.run_emu_link`), when it ran."""

    def to_json(self) -> dict[str, Any]:
        record: dict[str, Any] = {"scenarios": self.scenarios}
        if self.comparisons is not None:
            record["comparisons"] = self.comparisons
            record["ns3"] = self.ns3
        if self.emulator is not None:
            record["emulator"] = self.emulator
        record["skipped"] = self.skipped
        record["failed"] = self.failed
        return record


def select(only: Iterable[str] | None) -> list[str]:
    """The benchmarks to run, in their usual order; ``only`` names some of them (and the
    opt-in ones, :data:`OPT_IN_BENCHMARKS`, run only when named)."""
    if not only:
        return list(ALL_BENCHMARKS)
    known = (*ALL_BENCHMARKS, *OPT_IN_BENCHMARKS)
    wanted = []
    for item in only:
        for name in item.split(","):
            name = name.strip()
            if name not in known:
                raise InputError(
                    "--only",
                    [
                        Problem(
                            "no such benchmark",
                            expected=", ".join(known),
                            found=repr(name),
                            hint=did_you_mean(name, known),
                        )
                    ],
                )
            wanted.append(name)
    return [b for b in known if b in wanted]


def run(
    names: list[str],
    sim_seconds: float = DEFAULT_SIM_SECONDS,
    with_ns3: bool = False,
    simulate: Callable[[str, Any], str] | None = None,
    ns3_runner: Callable[[str, float], dict[str, Any]] | None = None,
    log: Callable[[str], None] = lambda _msg: None,
    repeat: int = DEFAULT_REPEAT,
    emu_seconds: float = DEFAULT_EMU_SECONDS,
) -> BenchReport:
    """Runs ``names`` (see :func:`select`) and gathers the record.

    Each tool's timed run is repeated ``repeat`` times and the median kept (qoslab's
    simulate call in this process, ns-3's script in a new process each time); the
    memory benchmark and ``wire`` (which keeps its fastest batch) run once.
    ``simulate`` and ``ns3_runner`` replace ``_core.simulate`` and :func:`run_ns3` (tests).
    A benchmark that cannot run here goes to ``skipped`` with the reason; one that ran
    and failed goes to ``failed``.
    """
    if not sim_seconds > 0:
        raise InputError(
            "--sim-seconds",
            [Problem("simulated time must be positive", expected="seconds > 0", found=repr(sim_seconds))],
        )
    if repeat < 1:
        raise InputError(
            "--repeat", [Problem("each benchmark must run at least once", expected="a count >= 1", found=repr(repeat))]
        )
    ns3_runner = ns3_runner or run_ns3
    report = BenchReport([], [] if with_ns3 else None, [], [], [])
    for name in names:
        log(f"running {name} ...")
        ours: dict[str, Any] | None = None
        try:
            if name == "wire":
                report.scenarios.extend(run_wire())
            elif name == "switch_1000_hosts":
                report.scenarios.append(run_switch_memory(sim_seconds))
            elif name == "switch_10000_hosts_scenario":
                report.scenarios.append(run_switch_scenario())
            elif name == "emu_link":
                report.emulator = [*(report.emulator or []), run_emu(emu_seconds)]
            else:
                ours = run_sim(name, sim_seconds, simulate, repeat)
                report.scenarios.append(ours)
        except Unavailable as why:
            report.skipped.append({"name": name, "reason": str(why)})
        except BenchFailed as err:
            report.failed.append({"name": name, "reason": str(err)})
        # ns-3 runs even when qoslab's side could not: its figures stand on their own.
        if with_ns3 and name in NS3_SCRIPTS:
            log(f"running {name} in ns-3 ({repeat} run{'s' if repeat > 1 else ''}) ...")
            try:
                theirs = ns3_median([ns3_runner(name, sim_seconds) for _ in range(repeat)])
            except Unavailable as why:
                report.skipped.append({"name": f"{name} (ns-3)", "reason": str(why)})
                continue
            except BenchFailed as err:
                report.failed.append({"name": f"{name} (ns-3)", "reason": str(err)})
                continue
            report.ns3.append(theirs)
            if ours is not None:
                assert report.comparisons is not None
                report.comparisons.append(compare(ours, theirs))
    return report


def run_emu(seconds: float) -> dict[str, Any]:
    """``emu_link``: the emulator beside a direct veth (:mod:`qoslab.bench_emu`), ``seconds``
    of throughput and as many seconds of timing frames, one a millisecond."""
    from qoslab import bench_emu

    why = bench_emu.unavailable_reason()
    if why is not None:
        raise Unavailable(why)
    try:
        return bench_emu.run_emu_link(seconds, timing_frames=max(1, round(seconds * 1000)), gap_us=1000)
    except (OSError, subprocess.SubprocessError, ValueError, KeyError) as err:
        raise BenchFailed(f"emu_link: {err}") from err


# ---------------------------------------------------------------------------------------
# Human output (stderr)
# ---------------------------------------------------------------------------------------


def _fmt(value: Any, spec: str) -> str:
    return "—" if value is None else format(value, spec)


def _spread(record: dict[str, Any]) -> str:
    """The fastest and slowest of a record's timed runs, s."""
    runs = record.get("wall_runs_s") or []
    return f"{min(runs):.3f}–{max(runs):.3f}" if len(runs) > 1 else "—"


def render(report: BenchReport, console: Any) -> None:
    """Tables of the scenarios and the ns-3 comparisons on ``console`` (rich)."""
    from rich.table import Table
    from rich.text import Text

    if report.scenarios:
        runs = {s.get("repeat") for s in report.scenarios if s.get("repeat")}
        builds = {s["core_build"] for s in report.scenarios if s.get("core_build")}
        title = "qoslab" + (f" (simulate call, median of {runs.pop()} runs)" if len(runs) == 1 else "")
        title += f", {builds.pop()} build of the core" if len(builds) == 1 else ""
        table = Table(title=title, title_justify="left")
        for col in ("benchmark", "events", "wall s", "runs s", "events/s", "sim s", "Mb/s", "peak RSS MiB"):
            table.add_column(col, justify="left" if col == "benchmark" else "right")
        for s in report.scenarios:
            table.add_row(
                s["name"],
                _fmt(s.get("events"), ","),
                _fmt(s.get("wall_s"), ".3f"),
                _spread(s),
                _fmt(s.get("events_per_s"), ",.0f"),
                _fmt(s.get("sim_time_s"), "g"),
                _fmt(s.get("throughput_mbps"), ".3f"),
                _fmt(s.get("peak_rss_mib"), ".1f"),
            )
        console.print(table)
    if report.ns3:
        runs = {s.get("repeat") for s in report.ns3 if s.get("repeat")}
        median = f", median of {runs.pop()} runs" if len(runs) == 1 else ""
        table = Table(title=f"ns-3 (Simulator.Run() only{median})", title_justify="left")
        for col in ("benchmark", "events", "wall s", "runs s", "events/s", "sim s", "Mb/s"):
            table.add_column(col, justify="left" if col == "benchmark" else "right")
        for s in report.ns3:
            table.add_row(
                s["name"],
                _fmt(s.get("events"), ","),
                _fmt(s.get("wall_s"), ".3f"),
                _spread(s),
                _fmt(s.get("events_per_s"), ",.0f"),
                _fmt(s.get("sim_time_s"), "g"),
                _fmt(s.get("throughput_mbps"), ".3f"),
            )
        console.print(table)
    if report.comparisons:
        table = Table(title="qoslab vs ns-3, same run (speed-up = ratio of the medians)", title_justify="left")
        for col in ("benchmark", "speed-up", "CPU-time speed-up", "qoslab Mb/s", "ns-3 Mb/s", "Δ throughput"):
            table.add_column(col, justify="left" if col == "benchmark" else "right")
        for c in report.comparisons:
            cpu = c.get("cpu_speedup")
            table.add_row(
                c["name"],
                _fmt(c["speedup"], ".1f") + "×",
                "—" if cpu is None else f"{cpu:.1f}×",
                _fmt(c["qoslab_throughput_mbps"], ".3f"),
                _fmt(c["ns3_throughput_mbps"], ".3f"),
                _fmt(c["throughput_diff_pct"], "+.2f") + " %",
            )
        console.print(table)
    for record in report.emulator or []:
        _render_emulator(record, console)
    for s in report.skipped:
        console.print(Text(f"skipped {s['name']}: {s['reason']}", style="yellow"))
    for f in report.failed:
        console.print(Text(f"failed {f['name']}: {f['reason']}", style="red"))


def _render_emulator(record: dict[str, Any], console: Any) -> None:
    """``emu_link``'s table: each path's throughput and timing figures side by side."""
    from rich.table import Table

    load = record["machine_before"]["load_avg"][0], record["machine_after"]["load_avg"][0]
    title = (
        f"link emulator vs direct veth ({record['frame_bytes']}-byte frames; emulator under SCHED_FIFO "
        f"{record['fifo_priority']}; load {load[0]:.1f} → {load[1]:.1f} on {record['machine_before']['cpus']} CPUs)"
    )
    table = Table(title=title, title_justify="left")
    for col in ("path", "frames/s", "Mb/s", "emulator CPU", "timing", "p50 µs", "p99 µs", "p99.9 µs", "max µs"):
        table.add_column(col, justify="left" if col in ("path", "timing") else "right")
    timings = {t["path"]: t for t in record["timing"]}
    for tp in record["throughput"]:
        t = timings.get(tp["path"], {})
        key = "error" if tp["path"] == "emulated" else "transit"
        p = t.get(key, {})
        share = tp.get("emulator_cpu_share")
        table.add_row(
            tp["path"],
            _fmt(tp["frames_per_s"], ","),
            _fmt(tp["mbps"], ",.1f"),
            "—" if share is None else f"{share:.0%}",
            key,
            *(_fmt(p.get(k), ".1f") for k in ("p50_us", "p99_us", "p999_us", "max_us")),
        )
    console.print(table)


# The networks are built in bench_networks; their builders and constants stay importable
# from here (the tests, scripts/results_identity.py, benchmarks/README.md).
__all__ = [
    "ALL_BENCHMARKS",
    "OPT_IN_BENCHMARKS",
    "QUICK_BENCHMARKS",
    "DEFAULT_REPEAT",
    "DEFAULT_SIM_SECONDS",
    "NS",
    "WARMUP_S",
    "BRIDGE_MAC",
    "_ns",
    "wifi_saturation_config",
    "ethernet_chain_config",
    "switch_config",
    "atm_clip_config",
    "seed004_download_config",
    "tcp_cubic_config",
    "config_json",
    "transfer_throughput_mbps",
    "BenchReport",
    "Unavailable",
    "BenchFailed",
    "flow_throughput_mbps",
    "run_sim",
    "run_switch_memory",
    "switch_scenario_text",
    "run_switch_scenario",
    "source_root",
    "run_wire",
    "run_emu",
    "ns3_python",
    "run_ns3",
    "ns3_median",
    "compare",
    "select",
    "run",
    "render",
]
