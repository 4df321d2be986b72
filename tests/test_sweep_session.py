"""Many tests on one network share a core session (python/qoslab/core_session.py,
crates/sim/src/session.rs): the network is encoded and decoded once, each test runs in a
world of its own. Every test's results must be the bytes the same test gives alone.

Independent check: the reference is the test run alone, its whole configuration sent to
``qoslab._core.simulate`` as before sessions existed; the pcap files of a capture are
compared byte for byte too.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from qoslab.plan.models import FlowConfig
from qoslab.scenario.load import loads_scenario

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = sorted((ROOT / "python" / "qoslab" / "examples").glob("*.toml"))

SHORT_NS = 200_000_000
"""Each test's run is cut to 0.2 s (in both runs alike): the comparison needs the same
configuration, not the whole run."""


def _configs(example: Path) -> list[tuple[object, dict]]:
    from qoslab.backends.sim import lower_network
    from qoslab.methods import Search, plan_test
    from qoslab.scenario import load_scenario

    sc = load_scenario(example)
    net = lower_network(sc)
    out = []
    for i in range(len(sc.test)):
        plan = plan_test(net, i, seed=11)
        if isinstance(plan, Search):
            flows, duration, windows = plan.trials.first_flows()
            config = net.with_flows(flows, min(duration, SHORT_NS), seed=11, windows=windows)
        else:
            config = net.with_flows(
                plan.flows,
                min(plan.duration_ns, SHORT_NS),
                seed=11,
                windows=plan.windows,
                cpu_window_ns=plan.cpu_window_ns,
            )
        out.append((net, config))
    return out


@pytest.mark.parametrize("example", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_every_test_of_every_example_gives_the_same_bytes_through_a_session(example):
    from qoslab import _core
    from qoslab.backends.sim import _encode
    from qoslab.core_session import session_for, split

    configs = _configs(example)
    if not configs:
        pytest.skip("no test")
    # Twice over: a session's results do not depend on the tests it ran before.
    for _ in range(2):
        for _, config in configs:
            parts = split(config)
            assert parts is not None, "a test's configuration is a network and its part"
            base, part = parts
            alone = _core.simulate(_encode(config), None)
            assert session_for(base).simulate(part, None, None, None) == alone
            session_for(base).validate(part)  # accepted as alone


def test_a_capture_through_a_session_writes_the_same_files(tmp_path):
    from qoslab import _core
    from qoslab.backends.sim import _encode
    from qoslab.core_session import session_for, split

    net, config = _configs(ROOT / "examples" / "seed003_ipsec_2vpn.toml")[0]
    config = config.model_copy(update={"capture": True})
    base, part = split(config)
    alone = _core.simulate(_encode(config), str(tmp_path / "alone"), 200, None)
    shared = session_for(base).simulate(part, str(tmp_path / "session"), 200, None)
    assert shared.replace("session", "alone") == alone
    files = sorted(p.name for p in (tmp_path / "alone").iterdir())
    assert files and files == sorted(p.name for p in (tmp_path / "session").iterdir())
    for name in files:
        assert (tmp_path / "alone" / name).read_bytes() == (tmp_path / "session" / name).read_bytes()


def test_a_refused_test_is_refused_as_alone():
    from qoslab import _core
    from qoslab.backends.sim import _encode
    from qoslab.core_session import session_for, split

    net, config = _configs(ROOT / "examples" / "seed003_ipsec_2vpn.toml")[0]
    stranger = config.flows[0].root.model_copy(update={"from_": 10_000})  # a node the network lacks
    config = config.model_copy(update={"flows": [FlowConfig(stranger)]})
    base, part = split(config)
    with pytest.raises(ValueError) as alone:
        _core.validate(_encode(config))
    with pytest.raises(ValueError) as shared:
        session_for(base).validate(part)
    assert str(shared.value) == str(alone.value)
    with pytest.raises(ValueError) as alone_run:
        _core.simulate(_encode(config), None)
    with pytest.raises(ValueError) as shared_run:
        session_for(base).simulate(part, None, None, None)
    assert str(shared_run.value) == str(alone_run.value) == "flows[0].from: no node 10000"


def _many(hosts: int, points: int) -> str:
    lines = ["[scenario]", 'name = "many pings"', "seed = 1", "[node.sw]", 'role = "switch"']
    for i in range(hosts):
        lines += [f"[node.h{i}]", 'role = "host"', f'address = "10.0.{i // 250}.{i % 250 + 1}/16"']
    for i in range(hosts):
        lines += ["[[link]]", 'type = "ethernet"', 'rate = "100 Mbps"', f'ends = ["h{i}", "sw"]']
    lines += ["[[test]]", 'method = "ping"', "count = 2", 'interval = "0.1 s"', 'from = "h0"', 'to = "h1"']
    lines += ["[sweep]", '"test[0].to" = [' + ", ".join(f'"h{i}"' for i in range(1, points + 1)) + "]"]
    return "\n".join(lines) + "\n"


def test_a_sweep_over_many_tests_decodes_the_network_once_and_each_point_is_as_alone(monkeypatch):
    from qoslab import _core, core_session, sweep_run
    from qoslab.backends.sim import run_tests
    from qoslab.scenario.load import loads_scenario as load

    made: list[int] = []
    real = _core.Session

    def counting(text: str) -> object:
        made.append(len(text))
        return real(text)

    monkeypatch.setattr(_core, "Session", counting)
    core_session._SESSIONS.clear()
    sweep_run._NETWORKS.clear()
    sweep_run._SCENARIOS.clear()
    sc = loads_scenario(_many(60, 12))
    plan = sweep_run.plan(sc)  # checks every point: each test's world built through the session
    results = [sweep_run.run_point(t) for t in plan.tasks]
    assert len(made) == 1, "one network, decoded once by the core for the check and the 12 runs"
    # Each point's records are those of its scenario run alone, whole configurations to the core.
    monkeypatch.setattr(core_session, "split", lambda config: None)
    for task, result in zip(plan.tasks, results):
        alone = load(_many(60, 12).split("[sweep]")[0].replace('to = "h1"', f'to = "{task.written["test[0].to"]}"'))
        _, runs = run_tests(alone, seed=task.seed)
        want = [rec for run in runs for rec in run.records]
        assert json.dumps(result["records"], sort_keys=True) == json.dumps(want, sort_keys=True)
        assert result["records"][0]["metrics"]["received"] == 2
