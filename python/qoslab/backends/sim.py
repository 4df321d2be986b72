"""The simulator backend: a plan run on the core, and its results read back.

The plan comes from :mod:`qoslab.lower` (a scenario lowered into the typed network plan
of crates/plan); :func:`simulate` runs one through ``qoslab._core.simulate`` and returns
its results as the typed :class:`~qoslab.plan.results_models.Results` (generated from
schema/results.schema.json, docs/results-schema.md), :func:`run_tests` plans,
runs and reads every test of a scenario, :func:`reachability` pings between nodes.

The lowering's names (``lower``, ``lower_network``, ``Network``, ``mac_for`` ...) stay
importable from here for the code written before :mod:`qoslab.lower` existed.
"""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from qoslab.lower.common import SECOND_NS, LocatedProblems, Port, _members, format_mac, mac_for
from qoslab.lower.lowered import Network, _encode
from qoslab.lower.network import lower, lower_network, planned_config
from qoslab.plan import RESULTS_SCHEMA
from qoslab.plan import models as plan_models
from qoslab.scenario.model import Scenario

if TYPE_CHECKING:
    # Imported where a run is read (read_results): building the 45 model classes would
    # cost a command that never simulates (check, schema) some 30-80 ms.
    from qoslab.plan.results_models import FlowResult, Results


class SimulationError(RuntimeError):
    """The simulation could not complete (a budget exceeded, a configuration refused)."""


# --------------------------------------------------------------------------- running


REPLICA: ContextVar[int] = ContextVar("qoslab_replica", default=0)
"""Which of ``qoslab reproduce --seeds N``'s seeds runs in this thread: 0 runs every
simulation with the seed its scenario gives; k > 0 replaces it by :func:`replica_seed`,
so each replica draws independent random streams and replica 0 is the run as written."""


def replica_seed(seed: int, k: int) -> int:
    """The seed of replica ``k`` (> 0) of a run whose own seed is ``seed``: the first 8
    octets of SHA-256("seed/k"), kept below 2^63 (any seed the core takes)."""
    import hashlib

    return int.from_bytes(hashlib.sha256(f"{seed}/{k}".encode()).digest()[:8], "big") >> 1


def simulate(
    config: plan_models.SimConfig,
    *,
    pcap_dir: str | Path | None = None,
    pcap_snaplen: int | None = None,
    pcap_max_size: int | None = None,
) -> Results:
    """Run one simulation and return its results (the JSON of ``qoslab._core.simulate``,
    read once into the typed :class:`Results`).
    Under a :data:`REPLICA` k > 0 the run's seed is :func:`replica_seed` (seed, k).
    With ``pcap_dir``, the core writes its captures there as the run goes, each record
    at most ``pcap_snaplen`` bytes of its frame, the files together at most
    ``pcap_max_size`` bytes; the results' ``capture`` says what was written.

    Raises
    ------
    SimulationError
        If this build of the core has no simulator, or the run stopped (a budget
        exceeded names the queue that grew; a configuration refused names its field).
    """
    from qoslab import _core, core_session

    run = getattr(_core, "simulate", None)
    if run is None:
        raise SimulationError(
            "this build of qoslab._core has no simulator (qoslab._core.simulate); rebuild it with `pip install -e .`"
        )
    if REPLICA.get():
        # A shallow copy: the network's tables stay shared (and its core session with them).
        config = config.model_copy(update={"seed": replica_seed(config.seed, REPLICA.get())})
    if pcap_dir is not None:
        Path(pcap_dir).mkdir(parents=True, exist_ok=True)
    try:
        # A test on a network: only its part goes to the core (qoslab.core_session).
        text = core_session.simulate_test(config, pcap_dir, pcap_snaplen, pcap_max_size)
        if text is None and pcap_dir is not None:
            text = run(_encode(config), str(pcap_dir), pcap_snaplen, pcap_max_size)
        elif text is None:
            text = run(_encode(config), None)
    except Exception as err:  # the core maps its errors to Python exceptions; each is a failed run
        raise SimulationError(f"the simulation failed: {err}") from err
    return read_results(text)


def read_results(text: str) -> Results:
    """The core's results JSON as :class:`Results`, checked against its models (one pass
    of pydantic-core over the text: benchmarks/README.md "Reading the results")."""
    import pydantic

    from qoslab.plan.results_models import Results

    try:
        results = Results.model_validate_json(text)
    except pydantic.ValidationError as err:
        raise SimulationError(f"the core's results do not match schema/results.schema.json: {err}") from err
    if results.schema_ != RESULTS_SCHEMA:
        raise SimulationError(
            f"the core wrote results of schema {results.schema_}, this qoslab reads schema {RESULTS_SCHEMA}: "
            "rebuild the core with `pip install -e .`"
        )
    return results


@dataclass
class TestRun:
    """One test run: which test, its plan, the simulator's results and the records."""

    index: int
    label: str
    plan: Any
    results: Results
    records: list[dict[str, Any]]


def run_tests(
    scenario: Scenario,
    *,
    source: str | Path | None = None,
    seed: int | None = None,
    pcap_dir: str | Path | None = None,
    on_run: Any = None,
    on_trial: Any = None,
    max_events: int | None = None,
    network: Network | None = None,
    pcap_snaplen: int | None = None,
    pcap_max_size: int | None = None,
) -> tuple[Network, list[TestRun]]:
    """Run every test of the scenario, each in a fresh simulation, in file order.
    ``network``: the scenario's network lowered before (a sweep's points that differ
    only in their tests share one lowering), else it is lowered here.

    Every test is checked before the first runs, so bad input fails fast (InputError).
    ``on_run(network, run)`` is called after each run (the CLI prints it); ``on_trial(words)``
    before each simulation (RFC 2544 tests take many). With ``pcap_dir``,
    each run captures into ``pcap_dir/test<N>`` (``pcap_snaplen`` and ``pcap_max_size``
    as :func:`simulate` takes them); a capture cut by the size limit is said in the
    test's records (``parameters.pcap_cut_s``, ``pcap_cut_frame``).

    Raises
    ------
    InputError
        For anything the simulator cannot run.
    SimulationError
        If a run fails.
    """
    from qoslab.methods import Search, check_runnable, plan_test

    net = lower_network(scenario, source=source) if network is None else network
    net.max_events = max_events
    check_runnable(scenario, source=source)
    if not scenario.test:
        out = LocatedProblems(source)
        out.add(
            ("scenario",),
            "the scenario has no [[test]]: nothing to measure",
            expected="a [[test]] table (udp.flow or ping)",
            found="none",
            hint="`qoslab reach FILE` pings between every pair of nodes",
        )
        out.raise_if_any()
    plans = [plan_test(net, i, source=source, seed=seed) for i in range(len(scenario.test))]
    runs: list[TestRun] = []
    for i, plan in enumerate(plans):
        if isinstance(plan, Search):
            run = _run_search(scenario, i, plan, on_trial, pcap_dir, pcap_snaplen, pcap_max_size)
        else:
            run = _run_one(scenario, net, i, plan, seed, on_trial, pcap_dir, pcap_snaplen, pcap_max_size)
        runs.append(run)
        if on_run is not None:
            on_run(net, run)
    return net, runs


def _run_search(
    scenario: Scenario,
    i: int,
    plan: Any,
    on_trial: Any,
    pcap_dir: str | Path | None,
    pcap_snaplen: int | None,
    pcap_max_size: int | None,
) -> TestRun:
    """Test ``i``, an RFC 2544 search: one simulation per trial. A capture of every trial
    would be as long as the whole search; with ``pcap_dir`` the search's last trial is run
    once more, capturing (the same seed and configuration give the same frames), into
    test<N>/ as a single-run test's capture is."""
    from qoslab.methods import test_label

    plan.trials.on_trial = on_trial
    records = plan.trials.run()
    last = plan.trials.last_config
    if plan.trials.last_results is None:
        raise SimulationError(f"{test_label(scenario, i)}: the search ran no trial")
    if pcap_dir is not None and last is not None:
        if on_trial is not None:
            on_trial(f"{test_label(scenario, i)}: the last trial again, captured")
        captured = simulate(
            last.model_copy(update={"capture": True}),
            pcap_dir=Path(pcap_dir) / f"test{i}",
            pcap_snaplen=pcap_snaplen,
            pcap_max_size=pcap_max_size,
        )
        for record in records:
            record.setdefault("parameters", {})["pcap"] = "the search's last trial"
            _note_capture_cut(record, captured)
    return TestRun(i, test_label(scenario, i), plan, plan.trials.last_results, records)


def _run_one(
    scenario: Scenario,
    net: Network,
    i: int,
    plan: Any,
    seed: int | None,
    on_trial: Any,
    pcap_dir: str | Path | None,
    pcap_snaplen: int | None,
    pcap_max_size: int | None,
) -> TestRun:
    """Test ``i`` as one simulation: its flows on ``net``, run and read into records."""
    from qoslab.methods import test_label
    from qoslab.methods.common import adaptive_records

    if on_trial is not None:
        on_trial(test_label(scenario, i))
    config = net.with_flows(
        plan.flows,
        plan.duration_ns,
        seed=seed,
        capture=pcap_dir is not None,
        windows=plan.windows,
        cpu_window_ns=plan.cpu_window_ns,
    )
    results = simulate(
        config,
        pcap_dir=Path(pcap_dir) / f"test{i}" if pcap_dir is not None else None,
        pcap_snaplen=pcap_snaplen,
        pcap_max_size=pcap_max_size,
    )
    records = plan.records(results)
    for record in records:
        _note_capture_cut(record, results)
    adaptive = adaptive_records(results)
    if adaptive:
        for record in records:
            record["adaptive"] = adaptive
    return TestRun(i, test_label(scenario, i), plan, results, records)


def _note_capture_cut(record: dict[str, Any], results: Results) -> None:
    """Say in a record where its run's capture was cut by ``--pcap-max-size``: the time
    (s) and the number (over all the run's capture points, from 1) of the first frame
    left out of the files (docs/metrics.md "Capture")."""
    cut = results.capture.cut if results.capture else None
    if cut:
        parameters = record.setdefault("parameters", {})
        parameters["pcap_cut_s"] = cut.time_ns / 1e9
        parameters["pcap_cut_frame"] = cut.frame


REACH_COUNT = 3
"""Echo requests per pair in `qoslab reach`."""


def reachability(
    scenario: Scenario, *, source: str | Path | None = None, seed: int | None = None, on_pair: Any = None
) -> tuple[Network, list[dict[str, Any]]]:
    """Ping from every node with an address to every other such node, each pair in a fresh run.

    Returns the network and one entry per ordered pair: ``from``, ``to``,
    ``to_address``, ``sent``, ``received``, ``reachable``, ``rtt_ms``, ``drops`` (where
    the flow's packets died: node, port, reason, count, first_ms, summary) and ``tables``
    (each node's ARP and L3F tables at the end of the run).

    On a network of more than :data:`qoslab.reach_groups.EXHAUSTIVE_UP_TO` speakers,
    interchangeable nodes (:func:`qoslab.reach_groups.interchangeable`: alike in every
    setting, on the same neighbour, named nowhere else) are pinged through one
    representative: one entry per ordered pair of groups, and one inside each group of two
    or more, each with ``from_group`` and ``to_group`` (how many nodes it stands for) and
    ``represents`` (how many ordered pairs).
    """
    from qoslab.methods.common import table_rows
    from qoslab.methods.ping import ping_flow, rtt_metrics, rtt_metrics_of, run_length
    from qoslab.reach_groups import EXHAUSTIVE_UP_TO, interchangeable
    from qoslab.report.terminal import death_points

    net = lower_network(scenario, source=source)
    speakers = [n for n in net.node_names if net.addresses.get(n)]
    if len(speakers) > EXHAUSTIVE_UP_TO:
        groups = interchangeable(scenario, speakers, _members)
    else:
        groups = [[n] for n in speakers]
    interval = SECOND_NS  # ping's default interval
    pairs: list[dict[str, Any]] = []
    for ga in groups:
        for gb in groups:
            if ga is gb and len(ga) < 2:
                continue
            a, b = ga[0], (gb[1] if ga is gb else gb[0])
            dst = str(net.destination(a, b))
            flow = ping_flow(net.node_index(a), dst, count=REACH_COUNT, interval_ns=interval, payload=56)
            results = simulate(net.with_flows([flow], run_length(REACH_COUNT, interval), seed=seed))
            f: FlowResult | None = next((x for x in results.flows if x.id == flow.id), None)
            m = rtt_metrics(f) if f is not None else rtt_metrics_of(REACH_COUNT, 0, [])
            pair = {
                "from": a,
                "to": b,
                "to_address": dst,
                "sent": m["sent"],
                "received": m["received"],
                "reachable": m["received"] > 0,
                "rtt_ms": m["rtt_ms"],
                "drops": death_points(results, flow.id),
                # Every node's ARP and L3F tables at the end of the pair's run (seed 000
                # Tables 2 and 3 are such tables).
                "tables": {
                    n.name: {"arp_table": table_rows(n.arp_table), "l3f_table": table_rows(n.l3f_table)}
                    for n in results.nodes
                },
            }
            if len(ga) > 1 or len(gb) > 1:
                pair["from_group"], pair["to_group"] = len(ga), len(gb)
                pair["represents"] = len(ga) * (len(gb) - 1) if ga is gb else len(ga) * len(gb)
            pairs.append(pair)
            if on_pair is not None:
                on_pair(pair)
    return net, pairs


__all__ = [
    "REPLICA",
    "read_results",
    "_encode",
    "_members",
    "planned_config",
    "replica_seed",
    "run_tests",
    "reachability",
    "TestRun",
    "lower",
    "lower_network",
    "simulate",
    "Network",
    "Port",
    "SimulationError",
    "LocatedProblems",
    "mac_for",
    "format_mac",
]
