"""The plan is defined once, in Rust (crates/plan): its JSON Schema, the Python models
and the lowering's output must agree with those types.

Three independent checks: the schema file is what the core's own types generate
(``_core.plan_schema``, built from crates/plan); the Python models in
``qoslab.plan.models`` have exactly the schema's fields, required fields, enumerations
and unions; and every example's lowered plan validates against the JSON Schema (by the
``jsonschema`` package, an implementation independent of both pydantic and serde) and
against the models.
"""

from __future__ import annotations

import enum
import json
import types
from pathlib import Path
from typing import Any

import jsonschema
import pydantic
import pytest
from conftest import EXAMPLES, ROOT
from qoslab import _core
from qoslab.backends.sim import lower
from qoslab.lower.lowered import plan_json
from qoslab.plan import PLAN_SCHEMA, RESULTS_SCHEMA, models, results_models
from qoslab.scenario import load_scenario

SCHEMA_FILE = ROOT / "schema" / "plan.schema.json"
SCHEMA: dict[str, Any] = json.loads(SCHEMA_FILE.read_text())


def test_the_schema_file_is_what_the_core_types_generate() -> None:
    text, version = _core.plan_schema()
    assert text == SCHEMA_FILE.read_text(), "regenerate with scripts/gen_plan.sh"
    assert version == PLAN_SCHEMA


def _definitions() -> dict[str, dict[str, Any]]:
    """Every named schema: the $defs, the root (SimConfig) and the titled variants of the
    tagged unions (oneOf members), by the name the models give them."""
    named = {name: d for name, d in SCHEMA["$defs"].items()}
    named[SCHEMA["title"]] = SCHEMA
    for d in list(named.values()):
        for member in d.get("oneOf", []):
            if "title" in member:
                named[member["title"]] = member
    return named


def _model(name: str) -> Any:
    model = getattr(models, name, None)
    assert model is not None, f"qoslab.plan.models has no {name} (the schema has)"
    return model


@pytest.mark.parametrize("name", sorted(n for n, d in _definitions().items() if "properties" in d))
def test_each_model_has_the_schema_fields(name: str) -> None:
    schema = _definitions()[name]
    model = _model(name)
    assert issubclass(model, pydantic.BaseModel)
    # A key that is a Python keyword (a flow's "from") is the alias of its field.
    fields = {info.alias or f: info for f, info in model.model_fields.items()}
    assert set(fields) == set(schema["properties"]), name
    required = {f for f, info in fields.items() if info.is_required()}
    assert required == set(schema.get("required", [])), name
    # deny_unknown_fields in Rust: unknown keys refused on both sides.
    assert schema.get("additionalProperties") is False
    assert model.model_config.get("extra") == "forbid", name


def _enum_values(d: dict[str, Any]) -> list[str] | None:
    if "enum" in d:
        return list(d["enum"])
    if "oneOf" in d and all("const" in m for m in d["oneOf"]):
        return [m["const"] for m in d["oneOf"]]
    return None


@pytest.mark.parametrize("name", sorted(n for n, d in SCHEMA["$defs"].items() if _enum_values(d) is not None))
def test_each_enumeration_has_the_schema_values(name: str) -> None:
    model = _model(name)
    assert issubclass(model, enum.Enum)
    assert [m.value for m in model] == _enum_values(SCHEMA["$defs"][name])


@pytest.mark.parametrize(
    "name", sorted(n for n, d in SCHEMA["$defs"].items() if "oneOf" in d and _enum_values(d) is None)
)
def test_each_tagged_union_has_the_schema_variants(name: str) -> None:
    model = _model(name)
    annotation = model.model_fields["root"].annotation
    assert isinstance(annotation, types.UnionType)
    assert [a.__name__ for a in annotation.__args__] == [m["title"] for m in SCHEMA["$defs"][name]["oneOf"]]


def _lowered_plans() -> list[tuple[str, dict[str, Any]]]:
    plans = []
    for path in sorted(EXAMPLES.glob("*.toml")):
        scenario = load_scenario(path)
        plans.append((path.stem, plan_json(lower(scenario, source=path))))
        for index in range(len(scenario.test or [])):
            plans.append((f"{path.stem}[{index}]", plan_json(lower(scenario, test_index=index, source=path))))
    return plans


@pytest.fixture(scope="module")
def lowered() -> list[tuple[str, dict[str, Any]]]:
    return _lowered_plans()


def test_every_lowered_example_is_a_valid_plan(lowered: list[tuple[str, dict[str, Any]]]) -> None:
    validator = jsonschema.Draft202012Validator(SCHEMA, format_checker=jsonschema.FormatChecker())
    assert len(lowered) > len(list(EXAMPLES.glob("*.toml")))
    for name, plan in lowered:
        errors = sorted(validator.iter_errors(json.loads(json.dumps(plan))), key=lambda e: list(e.path))
        assert not errors, f"{name}: {[(list(e.path), e.message) for e in errors[:3]]}"
        assert plan["schema"] == PLAN_SCHEMA
        typed = models.SimConfig.model_validate(plan)
        # The typed models read back exactly what was written.
        again = typed.model_dump(mode="json", exclude_unset=True, by_alias=True)
        assert again == json.loads(json.dumps(plan)), name


def test_the_schema_refuses_what_the_core_refuses() -> None:
    """An unknown key and a wrong tag, refused by the schema, the models and the core alike."""
    plan = {"schema": PLAN_SCHEMA, "seed": 1, "duration_ns": 1, "nodes": [], "links": []}
    validator = jsonschema.Draft202012Validator(SCHEMA)
    _core.validate(json.dumps(plan))
    for bad in ({**plan, "colour": "red"}, {**plan, "links": [{"type": "token-ring", "name": "x"}]}):
        assert list(validator.iter_errors(bad))
        with pytest.raises(pydantic.ValidationError):
            models.SimConfig.model_validate(bad)
        with pytest.raises(ValueError):
            _core.validate(json.dumps(bad))


def test_regeneration_is_documented() -> None:
    assert "scripts/gen_plan.sh" in (ROOT / "docs" / "architecture.md").read_text()
    assert Path(ROOT / "scripts" / "gen_plan.sh").exists()


RESULTS_SCHEMA_FILE = ROOT / "schema" / "results.schema.json"


RESULTS_SCHEMA_DEFS: dict[str, Any] = json.loads(RESULTS_SCHEMA_FILE.read_text())


def test_the_results_schema_file_is_what_the_core_types_generate() -> None:
    text, version = _core.results_schema()
    assert text == RESULTS_SCHEMA_FILE.read_text(), "regenerate with scripts/gen_plan.sh"
    assert json.loads(text)["properties"]["schema"]["type"] == "integer"
    assert version == RESULTS_SCHEMA


def _results_definitions() -> dict[str, dict[str, Any]]:
    named = dict(RESULTS_SCHEMA_DEFS["$defs"])
    named[RESULTS_SCHEMA_DEFS["title"]] = RESULTS_SCHEMA_DEFS
    return named


def _json_type(schema: dict[str, Any]) -> set[str]:
    """The JSON types a field's schema allows ("integer", "number", "null" ...)."""
    kinds = schema.get("type", [])
    found = set(kinds if isinstance(kinds, list) else [kinds])
    for member in schema.get("anyOf", []) + schema.get("oneOf", []) + schema.get("allOf", []):
        found |= _json_type(member) if "$ref" not in member else {"object"}
    if "$ref" in schema:
        found.add("object")
    return found


@pytest.mark.parametrize("name", sorted(n for n, d in _results_definitions().items() if "properties" in d))
def test_each_results_model_has_the_schema_fields_and_types(name: str) -> None:
    """The results models (qoslab.plan.results_models) against the results' schema: the
    same fields, the same required ones, and every integer of the schema an ``int`` in
    Python (a ``float`` field would turn the core's 3 into 3.0 in the records)."""
    schema = _results_definitions()[name]
    model = getattr(results_models, name, None)
    assert model is not None, f"qoslab.plan.results_models has no {name} (the schema has): run scripts/gen_plan.sh"
    assert issubclass(model, pydantic.BaseModel)
    fields = {info.alias or f: info for f, info in model.model_fields.items()}
    assert set(fields) == set(schema["properties"]), f"{name}: run scripts/gen_plan.sh"
    required = {f for f, info in fields.items() if info.is_required()}
    assert required == set(schema.get("required", [])), name
    for field, info in fields.items():
        kinds = _json_type(schema["properties"][field])
        annotation = info.annotation
        members = set(getattr(annotation, "__args__", (annotation,))) - {type(None)}
        if kinds - {"null"} == {"integer"}:
            assert members == {int}, (name, field, annotation)
        elif kinds - {"null"} == {"number"}:
            assert members == {float}, (name, field, annotation)
        if "null" in kinds:
            assert type(None) in getattr(annotation, "__args__", ()), (name, field, annotation)


@pytest.mark.parametrize("example", ["seed000_l3f.toml", "seed001_clip.toml", "seed004_asymmetric.toml"])
def test_real_results_validate_against_the_results_schema(example: str) -> None:
    """A run's results (flows, links, nodes; ATM and adaptive parts where the example has
    them), one simulated second, checked by jsonschema against the generated schema."""
    path = EXAMPLES / example
    plan = plan_json(lower(load_scenario(path), test_index=0, source=path))
    plan = {**plan, "duration_ns": min(plan["duration_ns"], 1_000_000_000)}
    results = json.loads(_core.simulate(json.dumps(plan), None))
    _, version = _core.results_schema()
    assert results["schema"] == version
    validator = jsonschema.Draft202012Validator(json.loads(RESULTS_SCHEMA_FILE.read_text()))
    errors = [(list(e.path), e.message) for e in validator.iter_errors(results)]
    assert not errors, errors[:3]
    # The typed results read the same run back to the same JSON: every field, and every
    # number with its JSON type (an int stays an int, a float a float).
    typed = results_models.Results.model_validate(results)
    again = typed.model_dump(mode="json", exclude_unset=True, by_alias=True)
    assert again == results
    assert _types(again) == _types(results)


def _types(value: Any) -> Any:
    """``value`` with every leaf replaced by its Python type's name."""
    if isinstance(value, dict):
        return {k: _types(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_types(v) for v in value]
    return type(value).__name__


# The plan's closed sets are enums (issue 16: "enums, not strings"): the fields below take
# only the values their Rust enum names, and the generated models make them Enum classes.
CLOSED_SETS = {
    "WifiLink": ["standard", "preamble", "control_preamble", "security", "access", "foreign_source"],
    "SerialLink": ["framing", "clocking"],
    "NodeConfig": ["role"],
    "PortForward": ["protocol"],
    "AtmLink": ["phy", "encapsulation"],
    "OpenVpnConfig": ["dev", "proto", "cipher", "auth"],
    "IpsecTunnelConfig": ["cipher", "auth", "mode", "protocol"],
    "PppoeConfig": ["auth"],
    "PptpConfig": ["auth"],
}


@pytest.mark.parametrize("owner", sorted(CLOSED_SETS))
def test_closed_sets_are_enumerations_in_the_schema_and_the_models(owner: str) -> None:
    schema = _definitions()[owner]
    model = _model(owner)
    for name in CLOSED_SETS[owner]:
        ref = schema["properties"][name].get("$ref") or (schema["properties"][name].get("allOf") or [{}])[0].get("$ref")
        assert ref is not None, f"{owner}.{name} is not an enumeration in the schema"
        target = SCHEMA["$defs"][ref.rsplit("/", 1)[1]]
        values = _enum_values(target)
        assert values, f"{owner}.{name}: {target}"
        annotation = model.model_fields[name].annotation
        enums = [a for a in getattr(annotation, "__args__", (annotation,)) if isinstance(a, type)]
        assert any(issubclass(a, enum.Enum) and [m.value for m in a] == values for a in enums), (owner, name)
    member_preamble = _definitions()["WifiLink"]["properties"]["member_preamble"]
    assert member_preamble["items"]["$ref"] == _definitions()["WifiLink"]["properties"]["preamble"]["$ref"]


def _wifi_plan(standard: str, preamble: str, member_preamble: list[str] | None = None) -> dict[str, Any]:
    """A hand-written plan: an AP and a station in one 802.11 cell at 2 Mb/s (a rate of
    every standard), nothing else."""

    def node(name: str, role: str, mac: int) -> dict[str, Any]:
        port = {"name": "wlan0", "mac": [2, 0, 0, 0, 0, mac], "address": [f"10.0.0.{mac}", 24], "mtu": 1500}
        cpu = {
            "profile": "none",
            "hz": 0,
            "queue_limit": 100,
            "cycles": {
                "per_rx_packet": 0,
                "per_tx_packet": 0,
                "per_byte_copied": 0.0,
                "per_bridge_lookup": 0,
                "per_route_lookup": 0,
                "per_nat_translation": 0,
                "per_byte_rc4": 0.0,
                "per_byte_aes": 0.0,
            },
        }
        return {
            "name": name,
            "role": role,
            "ports": [port],
            "cpu": cpu,
            "arp_timeout_ns": 120_000_000_000,
            "reassembly_timeout_ns": 30_000_000_000,
        }

    wifi = {
        "type": "wifi",
        "name": "cell",
        "standard": standard,
        "rate_bps": 2_000_000,
        "preamble": preamble,
        "security": "open",
        "ap": {"node": 0, "port": 0},
        "stations": [{"node": 1, "port": 0}],
        "rts_threshold": 2347,
        "foreign_source": "drop",
        "queue_frames": 10,
    }
    if member_preamble is not None:
        wifi["member_preamble"] = member_preamble
    return {
        "schema": PLAN_SCHEMA,
        "seed": 1,
        "duration_ns": 1_000_000,
        "nodes": [node("ap", "ap", 1), node("sta", "host", 2)],
        "links": [wifi],
    }


def test_a_hand_written_plan_with_an_unknown_value_is_refused_naming_the_field() -> None:
    _core.validate(json.dumps(_wifi_plan("802.11b", "short")))
    cases = [
        (["links", 0, "standard"], "802.11n", "links[0].standard"),
        (["links", 0, "security"], "wpa3", "links[0].security"),
        (["nodes", 1, "role"], "gateway", "nodes[1].role"),
    ]
    validator = jsonschema.Draft202012Validator(SCHEMA)
    for path, value, field in cases:
        plan = _wifi_plan("802.11b", "long")
        target: Any = plan
        for step in path[:-1]:
            target = target[step]
        target[path[-1]] = value
        # The core names the field and the value, and lists what it expected.
        with pytest.raises(ValueError) as info:
            _core.validate(json.dumps(plan))
        message = str(info.value)
        assert f"{field}: unknown variant `{value}`, expected" in message, message
        # The schema and the models refuse it too, at the same place.
        # (Inside a tagged union jsonschema reports the union's failure, with each
        # variant's errors in its context: the refused field is among them.)
        errors = list(validator.iter_errors(plan))
        found = [e for error in errors for e in (error, *(error.context or []))]
        assert errors and any(list(e.absolute_path) == path for e in found), field
        with pytest.raises(pydantic.ValidationError):
            models.SimConfig.model_validate(plan)


def test_the_long_preamble_rule_has_one_source() -> None:
    """802.11 DSSS (clause 15) has only the long preamble: the scenario's refusal and the
    refusal of a hand-written plan are one statement of the rule, the plan's
    (``WifiStandard::preamble_problem``, asked through ``_core.wifi_preamble_problem``)."""
    from qoslab.errors import InputError
    from qoslab.scenario import loads_scenario

    rule = _core.wifi_preamble_problem("802.11", "short")
    assert rule is not None
    # Clause 15 has one PPDU format; HR/DSSS (§16.2.2.3) and ERP keep the short option.
    assert _core.wifi_preamble_problem("802.11", "long") is None
    for standard in ("802.11b", "802.11g", "802.11g-mixed"):
        assert _core.wifi_preamble_problem(standard, "short") is None
    with pytest.raises(ValueError, match="unknown variant `802.11n`"):
        _core.wifi_preamble_problem("802.11n", "short")

    scenario = """
[scenario]
name = "dsss"
[node.ap]
role = "ap"
address = "10.0.0.1/24"
[node.sta]
role = "host"
address = "10.0.0.2/24"
[[link]]
type = "wifi"
standard = "802.11"
ap = "ap"
stations = ["sta"]
"""
    for extra, key in (('preamble = "short"', "preamble"), ('preambles = { sta = "short" }', "preambles.sta")):
        with pytest.raises(InputError) as info:
            loads_scenario(scenario + extra + "\n")
        problems = info.value.problems
        assert len(problems) == 1 and problems[0].message == rule, str(info.value)
        assert problems[0].key is not None and problems[0].key.endswith(key), problems[0].key

    for plan, field in (
        (_wifi_plan("802.11", "short"), "links[0].preamble"),
        (_wifi_plan("802.11", "long", ["long", "short"]), "links[0].member_preamble[1]"),
    ):
        with pytest.raises(ValueError) as plan_info:
            _core.validate(json.dumps(plan))
        assert str(plan_info.value).endswith(f": {field}: {rule}"), str(plan_info.value)
    _core.validate(json.dumps(_wifi_plan("802.11", "long", ["long", "long"])))
