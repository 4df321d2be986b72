"""The records print some of the core's sub-objects whole (an adaptive upstream's
counters and ARQ counters, a TCP sender's per-ACK trace). The methods read them from the
typed results (qoslab.plan.results_models), whose fields are in the schema's order, and
write them out field by field: these tests hold them to the order the core itself writes
(serde writes a struct's fields in their declaration order), so that ``--json`` prints
the same bytes as before the results were typed."""

from __future__ import annotations

import json

from qoslab import _core, bench
from qoslab.backends.sim import _encode, lower, read_results
from qoslab.data import examples
from qoslab.methods.common import adaptive_records
from qoslab.methods.tcp import _trace
from qoslab.plan import models as plan
from qoslab.scenario import load_scenario


def test_adaptive_counters_keep_the_cores_order_and_values() -> None:
    path = examples.path("seed004_hidden_terminals.toml")
    config = lower(load_scenario(path), test_index=0, source=path)
    config.duration_ns = min(config.duration_ns, 3_000_000_000)
    text = _core.simulate(_encode(config), None)
    raw = json.loads(text)
    (record,) = adaptive_records(read_results(text))
    (written,) = raw["adaptive"]
    assert list(record["counters"].items()) == list(written["counters"].items())
    assert list(record["arq"].items()) == list(written["arq_sender"].items())
    assert record["radio_delivered_attempts"] == written["radio_lifetime"]
    assert [s["from"] for s in record["switches"]] == [s["from"] for s in written["switches"]]


def test_a_tcp_trace_keeps_the_cores_columns_in_order() -> None:
    config = bench.tcp_cubic_config(1.0)
    (bulk,) = config.flows or []
    assert isinstance(bulk.root, plan.TcpFlow)
    bulk.root.trace = True
    text = _core.simulate(_encode(config), None)
    (written,) = json.loads(text)["flows"]
    (flow,) = read_results(text).flows
    assert flow.tcp is not None
    trace = _trace(flow.tcp.trace)
    assert trace is not None and len(trace["time_ns"]) > 100
    assert list(trace.items()) == list(written["tcp"]["trace"].items())
