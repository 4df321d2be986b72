"""A lowered network: the plan of a scenario's network without traffic, the names to
read it by, and a test's traffic added to it (:meth:`Network.with_flows`); the JSON text
of a plan, its network parts encoded once (:func:`_encode`).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from ipaddress import IPv4Address, IPv4Interface
from typing import Any, cast

from pydantic import PrivateAttr, TypeAdapter

from qoslab.lower.common import Port
from qoslab.lower.flows import background_flows
from qoslab.plan import PLAN_SCHEMA, Flow
from qoslab.plan import models as plan
from qoslab.scenario.model import Scenario

TEST_FIELDS = frozenset({"seed", "duration_ns", "flows", "capture", "budget", "cpu_window_ns", "windows"})
"""The plan's fields a test sets on top of its network (crates/sim/src/session.rs ``TestPart``)."""

NETWORK_PARTS = frozenset({"nodes", "links", "atm", "adaptive"})
"""The plan's fields that are the network's tables, shared by every test run on it (and
their JSON text with them, :func:`_encode`)."""


class RunConfig(plan.SimConfig):
    """A ``SimConfig`` made by :meth:`Network.with_flows`: one test's traffic, run length
    and seed on a network whose tables (:data:`NETWORK_PARTS`) are the network's own
    objects, shared by every test run on it (read them, never change them). So many tests
    on one large network encode those tables once (:func:`_encode`) and send them to the
    core once (:mod:`qoslab.core_session`), not per test."""

    _network: plan.SimConfig | None = PrivateAttr(default=None)

    @property
    def network(self) -> plan.SimConfig | None:
        """The plan of the network this test runs on (its flows empty), or None."""
        return self._network


@dataclass
class Network:
    """A lowered network: the plan without traffic, and the names to read it by.

    ``config`` is the network's ``SimConfig`` (``flows`` empty). ``ports[i]`` lists
    node i's ports in index order. ``addresses`` maps a node name to its IPv4 addresses
    (port addresses, then the bridge's).
    """

    scenario: Scenario
    config: plan.SimConfig
    node_names: list[str]
    ports: list[list[Port]]
    addresses: dict[str, list[IPv4Interface]] = field(default_factory=dict)
    max_events: int | None = None
    """The simulator's event budget for each run, when raised above its default (``--max-events``)."""

    def node_index(self, name: str) -> int:
        return self.node_names.index(name)

    def destination(self, src: str, dst: str) -> IPv4Address | None:
        """The address ``src`` sends to in order to reach ``dst``: one of ``dst``'s
        addresses on a subnet ``src`` is on, else ``dst``'s first address."""
        theirs = self.addresses.get(dst, [])
        if not theirs:
            return None
        ours = self.addresses.get(src, [])
        for a in theirs:
            if any(a.ip in mine.network for mine in ours):
                return a.ip
        return theirs[0].ip

    def with_flows(
        self,
        flows: Sequence[Flow],
        duration_ns: int,
        *,
        seed: int | None = None,
        capture: bool = False,
        windows: Sequence[plan.WindowConfig] | None = None,
        cpu_window_ns: tuple[int, int] | None = None,
    ) -> RunConfig:
        """The plan of a test on this network: this traffic (and the scenario's
        ``[[background]]`` traffic beside it), run length and seed, the measured flows'
        windows (docs/metrics.md#window) and the CPU window.

        The network's tables are shared, not copied (:class:`RunConfig`)."""
        base = self.config
        fields = set(base.model_fields_set) | {"flows", "duration_ns", "capture"}
        if windows:
            fields.add("windows")
        if cpu_window_ns is not None:
            fields.add("cpu_window_ns")
        budget = plan.BudgetConfig()
        if self.max_events is not None:
            budget = plan.BudgetConfig(max_events=int(self.max_events))
            fields.add("budget")
        every = [*flows, *background_flows(self, duration_ns)]
        # model_construct: the network's tables are shared as they are (validation would
        # copy every list), and every value is a model built, and so validated, already.
        run = RunConfig.model_construct(
            _fields_set=fields,
            schema_=base.schema_,
            seed=base.seed if seed is None else seed,
            duration_ns=int(duration_ns),
            nodes=base.nodes,
            links=base.links,
            atm=base.atm,
            adaptive=base.adaptive,
            flows=[plan.FlowConfig(f) for f in every],
            capture=capture,
            budget=budget,
            windows=list(windows or []),
            cpu_window_ns=None
            if cpu_window_ns is None
            else (plan.CpuWindowN(cpu_window_ns[0]), plan.CpuWindowN(cpu_window_ns[1])),
        )
        run._network = base
        return run


_ADAPTERS: dict[str, TypeAdapter[Any]] = {
    name: TypeAdapter(cast(Any, info.annotation)) for name, info in plan.SimConfig.model_fields.items()
}
"""Each field of the plan by its type, to write its JSON alone."""

_WHOLE = frozenset({"nodes", "links"})
"""Fields written with every value, defaults too (the nodes and links have always been
written so); the others only with what the lowering or the method set, as their JSON
always had it."""


def _part(name: str, value: Any) -> str:
    """The JSON text of one field's value."""
    return _ADAPTERS[name].dump_json(value, by_alias=True, exclude_unset=name not in _WHOLE).decode()


_ENCODED: dict[int, tuple[Any, str]] = {}
"""id(value) -> (value, its JSON text) for the network parts of recent plans; the value
is held so that its id is not reused while the entry lives."""
_ENCODED_LOCK = threading.Lock()
_ENCODED_MAX = 64


def _network_part(name: str, value: Any) -> str:
    """The JSON text of a network table, encoded once per table object: a network of
    1,000 hosts is about 1.2 MB of JSON, which every test on it shares."""
    with _ENCODED_LOCK:
        hit = _ENCODED.get(id(value))
    if hit is not None and hit[0] is value:
        return hit[1]
    text = _part(name, value)
    with _ENCODED_LOCK:
        if len(_ENCODED) >= _ENCODED_MAX:
            _ENCODED.pop(next(iter(_ENCODED)))
        _ENCODED[id(value)] = (value, text)
    return text


def _encode(config: plan.SimConfig, only: Iterable[str] | None = None) -> str:
    """The plan's JSON text, as the core reads it: the fields set (by the lowering, the
    method or :meth:`Network.with_flows`; a field left out takes the core's default),
    or only those of ``only`` among them. The network's tables reuse their text
    (:func:`_network_part`)."""
    wanted = config.model_fields_set if only is None else config.model_fields_set & set(only)
    parts = []
    for name, info in plan.SimConfig.model_fields.items():
        if name not in wanted:
            continue
        value = getattr(config, name)
        text = _network_part(name, value) if name in NETWORK_PARTS else _part(name, value)
        parts.append(json.dumps(info.alias or name) + ":" + text)
    return "{" + ",".join(parts) + "}"


def plan_json(config: plan.SimConfig) -> dict[str, Any]:
    """The plan as the JSON document the core reads (for a backend or a reader that
    takes the plan's JSON, not its models)."""
    document: dict[str, Any] = json.loads(_encode(config))
    return document


def addressing(
    scenario: Scenario, names: list[str], ports: list[list[Port]], addresses: dict[str, list[IPv4Interface]]
) -> Network:
    """A network whose plan is not made yet, to ask :meth:`Network.destination` while the
    tunnels are lowered (the plan is empty: read only the addresses)."""
    empty = plan.SimConfig.model_construct(schema_=PLAN_SCHEMA, seed=0, duration_ns=0, nodes=[], links=[])
    return Network(scenario, empty, names, ports, addresses)
