"""The scenario language as typed models (pydantic v2).

A scenario file is TOML with these top-level tables::

    [scenario]            name, seed, description, duration
    [node.NAME]           one table per node; `role` picks its kind
    [[link]]              one per link; `type` picks its kind
    [[tunnel]]            one per tunnel or VPN; `type` picks its kind
    [[test]]              one per measurement; `method` picks its kind
    [sweep]               parameters to vary: "link[0].rate" = ["1 Mbps", "2 Mbps"]

Every field carries its description and default beside it; units are typed by
:mod:`qoslab.units` (``"11 Mbps"``, ``"1.5 ms"``, ``"64 KiB"``, ``"1 %"``). Unknown keys
are errors. Checks that need the whole scenario (a link end that names no node, a
tunnel loop, …) live in :mod:`qoslab.scenario.checks`.

References between tables
-------------------------
- Link ends, wifi ``ap`` and ``stations``, tunnel and test ``from``/``to`` name nodes
  (the keys of ``[node.*]``).
- A tunnel's ``over`` names what its packets ride on: another tunnel's ``name``, a
  link's ``name``, or ``link[N]`` (the N-th ``[[link]]``, from 0). Leave it out for an
  IP tunnel (openvpn, pptp, ipsec, gre) that follows the routed path from ``from`` to
  ``to``; PPPoE, an Ethernet-layer protocol, needs it.

The tables' models live in one module each (``node_tables``, ``link_tables``,
``tunnel_tables``, ``test_tables``; ``base`` holds what they share); this module holds
the ``[scenario]`` and ``[sweep]`` tables and the whole ``Scenario``, and re-exports the
rest, so ``from qoslab.scenario.model import Wifi`` keeps working.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    model_validator,
)

from qoslab.scenario.base import (
    MAX_IPV4_DATA_AFTER_8,
    NODE_NAME_PATTERN,
    U16_MAX,
    U32_MAX,
    FieldProblem,
    NodeName,
    Strict,
)
from qoslab.scenario.link_tables import (
    ATM_PHY,
    SERIAL_MIN_RATE,
    WIFI_RATES_MBPS,
    Atm,
    Bernoulli,
    Direction,
    Ethernet,
    GilbertElliott,
    Link,
    LinkBase,
    Loss,
    QueueLimit,
    Serial,
    Shaper,
    VirtualCircuit,
    Wifi,
)
from qoslab.scenario.node_tables import (
    NODE_ROLES,
    AccessPoint,
    AdaptiveUpstream,
    AtmSwitch,
    Bridge,
    CategoryQueues,
    CrossConnect,
    Host,
    LaneServer,
    MpoaServer,
    Node,
    NodeBase,
    PortForward,
    Route,
    Router,
    Switch,
)
from qoslab.scenario.test_tables import (
    RFC2544_FRAME_SIZES,
    Background,
    PcapReplay,
    Ping,
    Rfc2544BackToBack,
    Rfc2544FrameLoss,
    Rfc2544Latency,
    Rfc2544Overload,
    Rfc2544Throughput,
    TcpBulk,
    TcpSettings,
    TcpStack,
    TcpTransfer,
    Test,
    TestBase,
    UdpEcho,
    UdpFlow,
)
from qoslab.scenario.tunnel_tables import Gre, Ipsec, IpsecSelector, OpenVpn, Pppoe, Pptp, Tunnel, TunnelBase
from qoslab.units import Time

# --------------------------------------------------------------------------- scenario


class Meta(Strict):
    """The ``[scenario]`` table: what this scenario is."""

    name: str = Field(description="A title for the scenario, shown in reports.")
    seed: int = Field(
        1,
        ge=0,
        le=2**64 - 1,
        description="Seed of every random stream (the core's 64 bits: 0 to 2^64 - 1); the same scenario and seed give the same results.",
    )
    description: str | None = Field(
        None, description="Free text: what the scenario models and which seed/figure it follows."
    )
    duration: Time | None = Field(None, description="Simulated time to run when a test gives none, e.g. '10 s'.")


# --------------------------------------------------------------------------- sweep


SWEEP_RANGE_MAX = 1_000_000
"""The most values one range may give (a typo such as a step of 0.0001 would otherwise
make millions of points before anything says so)."""


def sweep_range(key: str, spec: dict[str, Any]) -> list[Any]:
    """The values of a range ``{start, stop, step}`` in ``[sweep]``: ``start``,
    ``start + step``, … up to ``stop`` (included when it falls on a step, to within
    10^-9 of a step, so decimal steps such as 0.1 land on ``stop``). Quantities keep
    their unit, written as in the range.

    >>> sweep_range("test[0].payload", {"start": 64, "stop": 256, "step": 64})
    [64, 128, 192, 256]
    >>> sweep_range("link[0].rate", {"start": "1 Mbps", "stop": "2 Mbps", "step": "0.5 Mbps"})
    ['1 Mbps', '1.5 Mbps', '2 Mbps']
    """

    def bad(
        message: str,
        found: str,
        expected: str = '{start = 64, stop = 1518, step = 64} or {start = "1 Mbps", stop = "10 Mbps", step = "1 Mbps"}',
    ) -> FieldProblem:
        return FieldProblem(key, f"{message} (a range of values for {key})", expected=expected, found=found)

    if set(spec) != {"start", "stop", "step"}:
        raise bad(
            "a range has exactly the keys start, stop and step",
            found=", ".join(sorted(map(str, spec))) or "an empty table",
        )
    parts: list[tuple[float, str]] = []
    for name in ("start", "stop", "step"):
        v = spec[name]
        if isinstance(v, bool):
            raise bad(f"{name} is not a number", found=repr(v))
        if isinstance(v, (int, float)):
            parts.append((float(v), ""))
            continue
        m = re.fullmatch(r"\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*(.*?)\s*", str(v))
        if m is None:
            raise bad(f"{name} is not a number or a quantity", found=repr(v))
        parts.append((float(m[1]), m[2]))
    units = {u for _, u in parts}
    if len(units) > 1:
        raise bad(
            "start, stop and step need one and the same unit",
            found=", ".join(repr(spec[n]) for n in ("start", "stop", "step")),
        )
    (start, _), (stop, _), (step, unit) = parts
    import math

    if not all(math.isfinite(x) for x in (start, stop, step)):
        raise bad("start, stop and step must be finite", found=repr(spec))
    if step <= 0:
        raise bad(
            "the range is empty: step must be above 0", found=f"step = {spec['step']!r}", expected="a step above 0"
        )
    if start > stop:
        raise bad(
            "the range is empty: start is above stop",
            found=f"start = {spec['start']!r}, stop = {spec['stop']!r}",
            expected="start at most stop",
        )
    n = int(math.floor((stop - start) / step + 1e-9)) + 1
    if n > SWEEP_RANGE_MAX:
        raise bad("the range has too many values", found=f"{n:,} values", expected=f"at most {SWEEP_RANGE_MAX:,}")
    integral = unit == "" and all(isinstance(spec[k], int) for k in ("start", "stop", "step"))
    out: list[Any] = []
    for i in range(n):
        x = start + i * step
        x = round(x, 12) if not integral else int(spec["start"]) + i * int(spec["step"])
        if unit:
            out.append(f"{x:.12g} {unit}")
        else:
            out.append(x if integral else float(x))
    return out


class Sweep(BaseModel):
    """The ``[sweep]`` table: parameters to vary, each a dotted path to a list of values.

    ``"link[0].rate" = ["1200 bps", "9600 bps"]`` varies the first link's rate;
    ``mode = "grid"`` runs every combination, ``"zip"`` pairs the n-th values (all lists
    then have one length). Paths: ``node.NAME.FIELD``, ``link[N].FIELD``,
    ``tunnel[N].FIELD``, ``test[N].FIELD``, ``scenario.FIELD``.

    A value list may be written as a range, an inline table
    ``{start = 64, stop = 1518, step = 64}``: ``start``, ``start + step``, … up to
    ``stop`` (included when it falls on a step). The three are numbers, or quantities
    with one and the same unit (``{start = "1 Mbps", stop = "10 Mbps", step = "1 Mbps"}``);
    ``step`` is above 0 and ``start`` at most ``stop``. ``replications = N`` runs every
    point N times: replication 0 with the scenario's seed, replication k > 0 with
    :func:`qoslab.backends.sim.replica_seed` (seed, k), the first 8 octets of
    SHA-256("SEED/k") shifted right by one bit.
    """

    model_config = ConfigDict(extra="forbid", strict=True)

    mode: Literal["grid", "zip"] = Field(
        "grid", description="'grid' = every combination, 'zip' = the n-th value of each list together."
    )
    replications: int = Field(
        1,
        ge=1,
        le=1_000_000,
        description="Runs of every point, each with its own seed (replication 0: the scenario's seed; k > 0: replica_seed(seed, k)).",
    )
    values: dict[str, Annotated[list[Any], Field(min_length=1)]] = Field(
        default_factory=dict,
        description="Parameter path -> list of values, or a range {start, stop, step} (written directly in [sweep]).",
    )

    @model_validator(mode="before")
    @classmethod
    def _collect(cls, data: Any) -> Any:
        if isinstance(data, dict) and "values" not in data:
            data = dict(data)
            values = {k: data.pop(k) for k in list(data) if k not in ("mode", "replications")}
            data["values"] = {k: sweep_range(k, v) if isinstance(v, dict) else v for k, v in values.items()}
        return data

    @model_validator(mode="after")
    def _zip_lengths(self) -> Sweep:
        if self.mode == "zip" and len({len(v) for v in self.values.values()}) > 1:
            lengths = ", ".join(f"{k}: {len(v)}" for k, v in self.values.items())
            raise FieldProblem(
                "mode",
                "with mode = 'zip' every list needs the same length",
                expected="lists of one length",
                found=lengths,
                hint="use mode = 'grid' for every combination",
            )
        return self


Sweep.model_config["json_schema_extra"] = {
    "additionalProperties": {
        "anyOf": [
            {"type": "array", "minItems": 1},
            {
                "type": "object",
                "required": ["start", "stop", "step"],
                "additionalProperties": False,
                "properties": {k: {"type": ["number", "string"]} for k in ("start", "stop", "step")},
            },
        ],
        "description": "A parameter path such as 'link[0].rate' and its values: a list, or a range {start, stop, step}.",
    },
}

# --------------------------------------------------------------------------- scenario


class Scenario(Strict):
    """A scenario: the nodes of a path, the links and tunnels between them, and the tests to run on it."""

    scenario: Meta = Field(description="Name, seed and description of the scenario.")
    node: dict[NodeName, Node] = Field(
        default_factory=dict, description="The nodes, by name: [node.ws1] role = 'host' …"
    )
    link: list[Link] = Field(
        default_factory=list, description="The links, [[link]] type = 'ethernet' | 'wifi' | 'serial' | 'atm'."
    )
    tunnel: list[Tunnel] = Field(
        default_factory=list,
        description="Tunnels and VPNs, [[tunnel]] type = 'openvpn' | 'pppoe' | 'pptp' | 'ipsec' | 'gre'.",
    )
    test: list[Test] = Field(
        default_factory=list, description="Measurements, [[test]] method = 'rfc2544.throughput' | 'ping' | …"
    )
    background: list[Background] = Field(
        default_factory=list,
        description="Unmeasured UDP load that runs alongside every test, [[background]] from, to, rate.",
    )
    sweep: Sweep | None = Field(None, description="Parameters to vary over runs.")

    _raw: dict[str, Any] | None = PrivateAttr(None)
    """The TOML data the scenario was validated from (set by the loader), so a sweep can
    put its values in place as the user wrote them and validate each point again."""
    _source: str | None = PrivateAttr(None)
    """The name the loader read the scenario under (its file): a file the scenario names
    by a relative path (a ``pcap.replay`` capture) is read from that file's folder, also
    when the scenario is run through the API without its source."""

    def __init__(self, /, **data: Any) -> None:
        """A scenario built in code, validated as a file is: the tables as a file holds
        them (dicts, lists, quantities as text such as ``"10 Mbps"``), every problem
        raised at once as :class:`~qoslab.errors.InputError` with its key path, and the
        cross-references checked (a link end that names no node, an address outside its
        subnet), as :func:`~qoslab.scenario.loads_scenario` checks a file. (The loader
        validates with ``model_validate``, which does not pass through here.)

        >>> Scenario(scenario={"name": "x"}, node={"a": {"role": "host"}}, link=[{"type": "ethernet", "rate": "10 Mbps", "ends": ["a", "zz"]}])
        Traceback (most recent call last):
        ...
        qoslab.errors.InputError: <code>: link[0].ends[1]: unknown node
            expected: 'a'
            found:    'zz'
        """
        from qoslab.errors import InputError
        from qoslab.scenario.checks import cross_check
        from qoslab.scenario.load import Spans, _order, pydantic_problems

        no_positions = Spans("")
        try:
            super().__init__(**data)
        except ValidationError as err:
            raise InputError("<code>", sorted(pydantic_problems(err, data, no_positions), key=_order)) from None
        problems = cross_check(self, data, no_positions)
        if problems:
            raise InputError("<code>", sorted(problems, key=_order))
        self._raw = data

    # pydantic calls a model's own __init__ from model_validate too, unless the __init__
    # carries this mark (pydantic/main.py marks BaseModel.__init__ and RootModel's the
    # same way): the loader's model_validate must keep its positioned problems.
    __init__.__pydantic_base_init__ = True  # type: ignore[attr-defined]

    def __eq__(self, other: object) -> bool:
        # Two scenarios are equal when what they say is equal, however they were written.
        return isinstance(other, Scenario) and self.__dict__ == other.__dict__

    __hash__ = None  # type: ignore[assignment]  # mutable, as every pydantic model

    def link_name(self, index: int) -> str:
        """The display name of link ``index``: its ``name`` or ``link[N]``."""
        return self.link[index].name or f"link[{index}]"


__all__ = [
    "Scenario",
    "Meta",
    "Node",
    "Host",
    "Router",
    "AdaptiveUpstream",
    "Background",
    "Bridge",
    "AccessPoint",
    "Switch",
    "AtmSwitch",
    "CrossConnect",
    "LaneServer",
    "MpoaServer",
    "Route",
    "PortForward",
    "Link",
    "Ethernet",
    "Wifi",
    "Serial",
    "Atm",
    "VirtualCircuit",
    "Bernoulli",
    "GilbertElliott",
    "Shaper",
    "QueueLimit",
    "Tunnel",
    "OpenVpn",
    "Pppoe",
    "Pptp",
    "Ipsec",
    "IpsecSelector",
    "Gre",
    "Test",
    "Rfc2544Throughput",
    "Rfc2544Latency",
    "Rfc2544FrameLoss",
    "Rfc2544BackToBack",
    "Rfc2544Overload",
    "Ping",
    "UdpFlow",
    "UdpEcho",
    "TcpBulk",
    "TcpStack",
    "TcpSettings",
    "TcpTransfer",
    "PcapReplay",
    "Sweep",
    "sweep_range",
    "FieldProblem",
    "WIFI_RATES_MBPS",
    "ATM_PHY",
    "NODE_ROLES",
    # The tables' parts and limits, for the checks, the lowering and the loader.
    "Strict",
    "NodeName",
    "NODE_NAME_PATTERN",
    "NodeBase",
    "CategoryQueues",
    "LinkBase",
    "Direction",
    "Loss",
    "TunnelBase",
    "TestBase",
    "RFC2544_FRAME_SIZES",
    "SERIAL_MIN_RATE",
    "SWEEP_RANGE_MAX",
    "MAX_IPV4_DATA_AFTER_8",
    "U16_MAX",
    "U32_MAX",
]
