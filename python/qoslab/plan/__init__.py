"""The network plan: what the lowering (:mod:`qoslab.lower`) writes and a backend runs.

The plan is defined once, in Rust (``crates/plan``, the ``qoslab-plan`` crate); its JSON
Schema is generated from those types into ``schema/plan.schema.json``, and
:mod:`qoslab.plan.models` holds the pydantic models generated from that schema
(docs/architecture.md#the-plan says how to regenerate both). ``tests/test_plan_schema.py``
fails when the models, the schema file and the core's types disagree.

The results come back the same way: ``crates/sim/src/results.rs`` defines them, their
schema is ``schema/results.schema.json`` and :mod:`qoslab.plan.results_models` holds the
models generated from it (``Results`` is one run's record, docs/results-schema.md).
"""

from __future__ import annotations

from typing import TypeAlias

from qoslab.plan.models import PingFlow, TcpFlow, UdpEchoFlow, UdpFlow, UdpReplayFlow

PLAN_SCHEMA = 2
"""The version of the plan's JSON, the ``schema`` field of every plan
(``qoslab_plan::PLAN_SCHEMA`` in Rust; the core refuses a plan of another version)."""

RESULTS_SCHEMA = 1
"""The version of the results' JSON, the ``schema`` field of every run's results
(``sim::results::RESULTS_SCHEMA`` in Rust); :func:`qoslab.backends.sim.simulate` refuses
results of another version rather than read them with the wrong models."""

Flow: TypeAlias = UdpFlow | PingFlow | UdpEchoFlow | UdpReplayFlow | TcpFlow
"""One flow of a plan, as a method builds it: a variant of ``FlowConfig`` (the plan's
``flows`` hold each wrapped in ``models.FlowConfig``, the tagged union of the schema)."""

__all__ = ["PLAN_SCHEMA", "RESULTS_SCHEMA", "Flow"]
