"""The scenario language: examples load, the tree shows them, the schema describes them."""

from __future__ import annotations

import doctest
import importlib
import json
import tomllib

import jsonschema
import pytest
from conftest import EXAMPLES
from qoslab.scenario import json_schema, load_scenario, loads_scenario, topology_tree
from qoslab.scenario.model import Bridge, Ethernet, Wifi
from rich.console import Console

EXAMPLE_FILES = sorted(EXAMPLES.glob("*.toml"))
SEED_EXAMPLES = [
    "seed000_l2f_wired.toml",
    "seed000_l2f_station.toml",
    "seed000_l3f.toml",
    "seed000_ics.toml",
    "seed000_fig9.toml",
    "seed001_clip.toml",
    "seed002_pppoe_over_openvpn.toml",
    "seed003_ipsec.toml",
    "seed004_asymmetric.toml",
]


def render(tree) -> str:
    console = Console(width=200, color_system=None, record=True)
    with console.capture() as cap:
        console.print(tree)
    return cap.get()


def test_every_seed_example_exists():
    names = {p.name for p in EXAMPLE_FILES}
    assert set(SEED_EXAMPLES) <= names


@pytest.mark.parametrize("path", EXAMPLE_FILES, ids=lambda p: p.name)
def test_example_loads_and_names_its_seed(path):
    scenario = load_scenario(path)
    assert scenario.scenario.name
    header = path.read_text().splitlines()[0]
    # DESIGN.md: one example per seed experiment, "and small teaching ones".
    assert header.startswith(("# Seed 00", "# Teaching example")), (
        "each example opens with the seed section it follows, or says it teaches"
    )


@pytest.mark.parametrize("path", EXAMPLE_FILES, ids=lambda p: p.name)
def test_tree_shows_nodes_and_links(path):
    scenario = load_scenario(path)
    raw = tomllib.loads(path.read_text())
    text = render(topology_tree(scenario))
    assert raw["scenario"]["name"] in text
    for name in raw.get("node", {}):
        assert name in text
    for i, link in enumerate(raw.get("link", [])):
        assert (link.get("name") or f"link[{i}]") in text
        assert link["type"] in text
    for tunnel in raw.get("tunnel", []):
        assert tunnel["name"] in text
    for test in raw.get("test", []):
        assert test["method"] in text


def test_tree_stacks_tunnels_under_what_they_run_over():
    text = render(topology_tree(load_scenario(EXAMPLES / "seed002_pppoe_over_openvpn.toml")))
    lines = text.splitlines()
    wan = next(i for i, line in enumerate(lines) if "wan ethernet" in line)
    ovpn = next(i for i, line in enumerate(lines) if "ovpn openvpn" in line)
    ppp = next(i for i, line in enumerate(lines) if "ppp0 pppoe" in line)
    indent = lambda line: len(line) - len(line.lstrip("│ ├└─"))  # noqa: E731
    assert wan < ovpn < ppp
    assert indent(lines[wan]) < indent(lines[ovpn]) < indent(lines[ppp])


def test_tree_wifi_shows_ap_stations_standard_rate_security():
    text = render(topology_tree(load_scenario(EXAMPLES / "seed000_l3f.toml")))
    wifi = next(line for line in text.splitlines() if " wifi " in line)
    for word in ("802.11b", "11 Mbps", "wep-104", "AP ap", "stations a"):
        assert word in wifi


def test_l3f_example_matches_seed_000_figure_6():
    sc = load_scenario(EXAMPLES / "seed000_l3f.toml")
    a = sc.node["a"]
    assert isinstance(a, Bridge) and a.forwarding == "l3f"
    assert [str(x) for x in sc.node["ws1"].address] == ["192.168.1.100/24"]
    wifi = next(link for link in sc.link if isinstance(link, Wifi))
    assert (wifi.standard, wifi.rate, wifi.security, wifi.ap, wifi.stations) == (
        "802.11b",
        11_000_000,
        "wep-104",
        "ap",
        ["a"],
    )
    assert all(link.rate == 100_000_000 for link in sc.link if isinstance(link, Ethernet))


def test_security_aliases_normalise():
    sc = load_scenario(EXAMPLES / "seed000_fig9.toml")
    wifi = next(link for link in sc.link if isinstance(link, Wifi))
    assert wifi.security == "wep-40"  # written "wep-64"


def test_units_in_models_are_si():
    sc = load_scenario(EXAMPLES / "seed004_asymmetric.toml")
    assert sc.link[2].rate == 9600
    assert sc.test[0].bytes == 10_000_000
    assert sc.test[0].window == 16 * 1024
    sc3 = load_scenario(EXAMPLES / "seed003_ipsec.toml")
    assert sc3.test[0].gap == 1_000_000


def test_json_dump_round_trips_through_the_loader():
    for path in EXAMPLE_FILES:
        sc = load_scenario(path)
        dumped = sc.model_dump(mode="json", by_alias=True, exclude_none=True)
        again = loads_scenario(_to_toml(dumped), source=path.name)
        assert again == sc, path.name


def _to_toml(data, prefix=()):
    """A minimal TOML writer for the dump (tables, arrays of tables, scalars, lists)."""
    out: list[str] = []

    def value(v):
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, (int, float)):
            return repr(v)
        if isinstance(v, str):
            return json.dumps(v)
        if isinstance(v, list):
            return "[" + ", ".join(value(x) for x in v) + "]"
        if isinstance(v, dict):
            return "{ " + ", ".join(f"{json.dumps(k)} = {value(x)}" for k, x in v.items()) + " }"
        raise TypeError(v)

    for key, v in data.items():
        if isinstance(v, dict) and key in ("scenario", "sweep"):
            out.append(f"[{key}]")
            out += [f"{json.dumps(k)} = {value(x)}" for k, x in v.items()]
        elif key == "node":
            for name, node in v.items():
                out.append(f"[node.{json.dumps(name)}]")
                out += [f"{json.dumps(k)} = {value(x)}" for k, x in node.items()]
        elif isinstance(v, list):
            for item in v:
                out.append(f"[[{key}]]")
                out += [f"{json.dumps(k)} = {value(x)}" for k, x in item.items()]
    return "\n".join(out) + "\n"


def test_schema_is_valid_json_schema_with_descriptions():
    schema = json_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    json.dumps(schema)  # serialisable
    defs = schema["$defs"]
    for name in ("Ethernet", "Wifi", "Serial", "Atm", "Bridge", "OpenVpn", "Ipsec", "Rfc2544Throughput", "UdpEcho"):
        assert name in defs
        for field, prop in defs[name]["properties"].items():
            assert prop.get("description"), f"{name}.{field} has no description"
    assert "802.1D" in defs["Bridge"]["properties"]["forwarding"]["description"]


@pytest.mark.parametrize("path", EXAMPLE_FILES, ids=lambda p: p.name)
def test_examples_validate_against_the_schema(path):
    jsonschema.validate(tomllib.loads(path.read_text()), json_schema(), cls=jsonschema.Draft202012Validator)


def test_schema_refuses_an_unknown_key():
    data = tomllib.loads((EXAMPLES / "seed000_l3f.toml").read_text())
    data["link"][0]["colour"] = "blue"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(data, json_schema(), cls=jsonschema.Draft202012Validator)


@pytest.mark.parametrize(
    "module",
    [
        "qoslab.api",
        "qoslab.scenario.model",
        "qoslab.scenario",
        "qoslab.scenario.load",
        "qoslab.scenario.checks",
        "qoslab.scenario.tree",
        "qoslab.errors",
        "qoslab.report.html",
    ],
)
def test_doctests(module):
    result = doctest.testmod(importlib.import_module(module), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0


def test_toml_key_spans_positions_keys_values_and_array_elements():
    from qoslab._core import toml_key_spans

    text = '[scenario]\nname = "café"\n\n[[link]]\nends = ["wš1", "b"]\n\n[[link]]\nx.y = 2\n'
    spans = toml_key_spans(text)
    lines = text.split("\n")

    def at(line: int, token: str) -> tuple[int, int]:
        return (line, lines[line - 1].index(token) + 1)  # characters, not bytes

    assert spans[("scenario", "name")] == (at(2, "name"), at(2, '"café"'))
    assert spans[("link", 0)][1] == at(4, "[[link]]")
    assert spans[("link", 0, "ends")] == (at(5, "ends"), at(5, "["))
    assert spans[("link", 0, "ends", 1)] == (None, at(5, '"b"'))  # after a multi-byte character
    assert spans[("link", 1)][1] == at(7, "[[link]]")
    assert spans[("link", 1, "x", "y")] == (at(8, "y"), at(8, "2"))


def test_toml_key_spans_refuses_bad_toml():
    from qoslab._core import toml_key_spans

    with pytest.raises(ValueError):
        toml_key_spans("a = ")
