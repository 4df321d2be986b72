"""Lowering scenarios to the simulator's input, checked as a reader of seed 000 would.

The expectations come from the scenario files (read here with tomllib, not through the
models), from seed 000 (Fig. 5, 6, 7) and from the Rust side's field lists
(schema/plan.schema.json, generated from crates/plan: the simulator denies unknown
fields), never
from the lowering's own output.
"""

from __future__ import annotations

import json
import re
import tomllib
from ipaddress import IPv4Interface
from pathlib import Path

import pytest
from conftest import EXAMPLES, ROOT
from qoslab.backends.sim import lower
from qoslab.errors import InputError
from qoslab.lower.lowered import plan_json
from qoslab.scenario import load_scenario

SEED000 = sorted(EXAMPLES.glob("seed000_*.toml"))
PLAN_SCHEMA_FILE = ROOT / "schema" / "plan.schema.json"


def raw(path: Path) -> dict:
    return tomllib.loads(path.read_text())


def node(config: dict, name: str) -> tuple[int, dict]:
    for i, n in enumerate(config["nodes"]):
        if n["name"] == name:
            return i, n
    raise AssertionError(f"no node {name}")


def port_on_link(config: dict, link: dict, node_index: int) -> int:
    """The port index of node ``node_index`` on ``link`` (from the link's PortRefs)."""
    refs = (
        [link["a"], link["b"]]
        if link["type"] == "ethernet"
        else ([link["ap"]] if link["ap"] else []) + link["stations"]
    )
    hits = [r["port"] for r in refs if r["node"] == node_index]
    assert len(hits) == 1
    return hits[0]


def link_named(config: dict, name: str) -> dict:
    return next(link for link in config["links"] if link["name"] == name)


def addresses_of(n: dict) -> set[IPv4Interface]:
    out = {IPv4Interface(f"{p['address'][0]}/{p['address'][1]}") for p in n["ports"] if p["address"]}
    if n["bridge"] and n["bridge"]["address"]:
        a = n["bridge"]["address"]
        out.add(IPv4Interface(f"{a[0]}/{a[1]}"))
    return out


# --------------------------------------------------------------------------- every example


@pytest.fixture(params=SEED000, ids=lambda p: p.stem)
def example(request) -> tuple[Path, dict]:
    path = request.param
    return path, plan_json(lower(load_scenario(path)))


def test_seed000_examples_exist():
    assert {p.stem for p in SEED000} >= {
        "seed000_l3f",
        "seed000_ics",
        "seed000_l2f_station",
        "seed000_l2f_wired",
        "seed000_fig9",
    }


def test_json_ready(example):
    _, config = example
    assert json.loads(json.dumps(config)) == config


def test_nodes_in_scenario_order(example):
    path, config = example
    assert [n["name"] for n in config["nodes"]] == list(raw(path)["node"])


def test_macs_unique_locally_administered_unicast(example):
    _, config = example
    macs = [tuple(p["mac"]) for n in config["nodes"] for p in n["ports"]]
    assert len(macs) == len(set(macs))
    for mac in macs:
        assert len(mac) == 6 and all(0 <= b <= 255 for b in mac)
        assert mac[0] & 0x02, "locally administered (U/L bit)"
        assert not mac[0] & 0x01, "unicast (I/G bit clear)"
    for n in config["nodes"]:
        if n["bridge"]:
            # the bridge interface uses one of its own ports' MACs, no other node's
            assert tuple(n["bridge"]["mac"]) in {tuple(p["mac"]) for p in n["ports"]}


def test_port_refs_point_at_real_ports_each_on_one_link(example):
    path, config = example
    used: list[tuple[int, int]] = []
    for link in config["links"]:
        refs = (
            [link["a"], link["b"]]
            if link["type"] == "ethernet"
            else ([link["ap"]] if link["ap"] else []) + link["stations"]
        )
        for r in refs:
            assert 0 <= r["node"] < len(config["nodes"])
            assert 0 <= r["port"] < len(config["nodes"][r["node"]]["ports"])
            used.append((r["node"], r["port"]))
    assert len(used) == len(set(used)), "a port on two links"
    every = {(i, j) for i, n in enumerate(config["nodes"]) for j in range(len(n["ports"]))}
    assert set(used) == every, "every port is a link end"


def test_links_follow_the_scenario(example):
    path, config = example
    links = raw(path)["link"]
    names = [n["name"] for n in config["nodes"]]
    assert len(config["links"]) == len(links)
    for lowered, written in zip(config["links"], links):
        assert lowered["type"] == written["type"]
        if written["type"] == "ethernet":
            assert [names[lowered["a"]["node"]], names[lowered["b"]["node"]]] == written["ends"]
        else:
            assert names[lowered["ap"]["node"]] == written["ap"]
            assert [names[s["node"]] for s in lowered["stations"]] == written["stations"]


def test_port_names_by_link_type(example):
    _, config = example
    for i, n in enumerate(config["nodes"]):
        for link in config["links"]:
            refs = (
                [link["a"], link["b"]]
                if link["type"] == "ethernet"
                else ([link["ap"]] if link["ap"] else []) + link["stations"]
            )
            for r in refs:
                if r["node"] == i:
                    name = n["ports"][r["port"]]["name"]
                    assert re.fullmatch(r"wlan\d+" if link["type"] == "wifi" else r"eth\d+", name)
        assert len({p["name"] for p in n["ports"]}) == len(n["ports"])


def test_addresses_as_in_the_scenario(example):
    path, config = example
    for name, table in raw(path)["node"].items():
        written = table.get("address", [])
        written = [written] if isinstance(written, str) else written
        _, n = node(config, name)
        assert addresses_of(n) == {IPv4Interface(a) for a in written}, name


def test_gateways_become_default_routes(example):
    path, config = example
    for name, table in raw(path)["node"].items():
        _, n = node(config, name)
        defaults = [r for r in n["routes"] if r["prefix_len"] == 0]
        if "gateway" in table:
            assert defaults == [{"destination": "0.0.0.0", "prefix_len": 0, "via": table["gateway"]}]
        else:
            assert defaults == []


def test_switches_bridge_in_hardware_without_address(example):
    path, config = example
    for name, table in raw(path)["node"].items():
        if table["role"] == "switch":
            _, n = node(config, name)
            assert n["bridge"]["mode"] == "l2" and n["bridge"]["address"] is None
            assert sorted(n["bridge"]["ports"]) == list(range(len(n["ports"])))
            assert n["cpu"]["hz"] == 0


def test_stations_cpu_is_the_named_profile(example):
    path, config = example
    for name, table in raw(path)["node"].items():
        if table.get("cpu") == "pentium-m-1.6ghz":
            _, n = node(config, name)
            assert n["cpu"]["profile"] == "pentium-m-1.6ghz"
            assert n["cpu"]["hz"] == 1_600_000_000


# --------------------------------------------------------------------------- seed 000 figures


def test_l3f_is_a_bridge_in_mode_l3f_over_both_ports():
    """Fig. 6: station A joins its wireless and wired adapters by L3F; its address is the bridge's."""
    config = plan_json(lower(load_scenario(EXAMPLES / "seed000_l3f.toml")))
    i, a = node(config, "a")
    assert a["bridge"]["mode"] == "l3f"
    wlan = port_on_link(config, link_named(config, "wlan"), i)
    lan2 = port_on_link(config, link_named(config, "lan2"), i)
    assert sorted(a["bridge"]["ports"]) == sorted([wlan, lan2])
    assert a["ports"][wlan]["name"].startswith("wlan") and a["ports"][lan2]["name"].startswith("eth")
    assert a["bridge"]["address"] == ["192.168.1.101", 24]
    assert all(p["address"] is None for p in a["ports"])
    assert a["ip_forward"] is False and a["nat"] is None
    # over a station adapter only the adapter's own MAC may send (§2.1): the bridge uses it
    assert a["bridge"]["mac"] == a["ports"][wlan]["mac"]


def test_ics_is_ip_forward_and_nat_on_the_wireless_port():
    """Fig. 7: the wireless adapter (192.168.1.101) is outside, the wired one (192.168.0.1) inside."""
    config = plan_json(lower(load_scenario(EXAMPLES / "seed000_ics.toml")))
    i, a = node(config, "a")
    wlan = port_on_link(config, link_named(config, "wlan"), i)
    lan2 = port_on_link(config, link_named(config, "lan2"), i)
    assert a["ip_forward"] is True
    assert a["bridge"] is None
    assert a["nat"]["outside_port"] == wlan
    assert a["ports"][wlan]["address"] == ["192.168.1.101", 24]
    assert a["ports"][lan2]["address"] == ["192.168.0.1", 24]
    assert {"destination": "0.0.0.0", "prefix_len": 0, "via": "192.168.1.1"} in a["routes"]
    _, ap = node(config, "ap")
    # Fig. 8: the AP's static route to LAN2 through A, and the AP routes (it is a router)
    assert {"destination": "192.168.0.0", "prefix_len": 24, "via": "192.168.1.101"} in ap["routes"]
    assert ap["ip_forward"] is True


def test_l2f_station_keeps_three_address_frames():
    """Fig. 5: a station adapter sends no 4-address frames, and the AP drops foreign sources."""
    config = plan_json(lower(load_scenario(EXAMPLES / "seed000_l2f_station.toml")))
    i, a = node(config, "a")
    assert a["bridge"]["mode"] == "l2" and len(a["bridge"]["ports"]) == 2
    wlan = link_named(config, "wlan")
    assert wlan["wds"] is False
    assert wlan["foreign_source"] == "drop"
    assert wlan["security"] == "wep-104"  # wep-128 is the 104-bit key (802.11-2020 §12.3.2)
    assert wlan["rate_bps"] == 11_000_000 and wlan["standard"] == "802.11b" and wlan["preamble"] == "long"
    assert wlan["rts_threshold"] == 2347
    ap_index, _ = node(config, "ap")
    assert wlan["ap"]["node"] == ap_index and [s["node"] for s in wlan["stations"]] == [i]


def test_ap_router_bridges_lan_and_wifi_with_the_lan_address():
    config = plan_json(lower(load_scenario(EXAMPLES / "seed000_l3f.toml")))
    i, ap = node(config, "ap")
    lan1 = port_on_link(config, link_named(config, "lan1"), i)
    wlan = port_on_link(config, link_named(config, "wlan"), i)
    assert sorted(ap["bridge"]["ports"]) == sorted([lan1, wlan])
    assert ap["bridge"]["address"] == ["192.168.1.1", 24]
    assert ap["nat"] is None  # no WAN link in the scenario: nothing to translate


# --------------------------------------------------------------------------- small scenarios

HEAD = """
[scenario]
name = "t"
[node.ap]
role = "ap"
address = "10.0.0.1/24"
[node.s1]
role = "host"
address = "10.0.0.2/24"
[node.s2]
role = "host"
address = "10.0.0.3/24"
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "s.toml"
    path.write_text(text)
    return path


def test_wifi_members_ap_first_hears_and_error_rates(tmp_path):
    path = write(
        tmp_path,
        HEAD
        + """
[[link]]
type = "wifi"
standard = "802.11g"
ap = "ap"
stations = ["s1", "s2"]
hears = { s1 = ["ap"], s2 = ["ap", "s1"] }
frame_error_rate = { s2 = "2 %" }
""",
    )
    config = plan_json(lower(load_scenario(path), source=path))
    w = config["links"][0]
    assert w["rate_bps"] == 54_000_000  # none given: the standard's highest
    # members: ap, s1, s2. ap hears everybody (not listed); s1 hears only the AP.
    assert w["hears"] == [[True, True, True], [True, True, False], [True, True, True]]
    assert w["frame_error_rate"] == [0.0, 0.0, 0.02]


def test_udp_flow_rate_counts_rfc2544_frames(tmp_path):
    """1472 payload bytes make a 1518-byte frame; 12.144 Mb/s of those frames is 1000 frames/s."""
    path = write(
        tmp_path,
        HEAD
        + """
[[link]]
type = "wifi"
ap = "ap"
stations = ["s1", "s2"]
[[test]]
method = "udp.flow"
from = "s1"
to = "s2"
payload = 1472
rate = "12.144 Mbps"
duration = "3 s"
""",
    )
    config = plan_json(lower(load_scenario(path), test_index=0, source=path))
    udp = [f for f in config["flows"] if f["kind"] == "udp"]
    assert len(udp) == 1
    f = udp[0]
    assert f["payload"] == 1472 and f["to"] == "10.0.0.3" and f["from"] == 1
    assert f["rate_pps"] == pytest.approx(12.144e6 / (8 * (1472 + 8 + 20 + 18)))
    assert f["rate_pps"] == pytest.approx(1000.0)
    assert f["stop_ns"] - f["start_ns"] == 3_000_000_000
    assert config["duration_ns"] > f["stop_ns"]
    # the learning frames go before the trial (RFC 2544 §23)
    assert all(g["start_ns"] < f["start_ns"] for g in config["flows"] if g is not f)


def test_ping_test_becomes_a_ping_flow(tmp_path):
    path = write(
        tmp_path,
        HEAD
        + """
[[link]]
type = "wifi"
ap = "ap"
stations = ["s1", "s2"]
[[test]]
method = "ping"
from = "s2"
to = "ap"
count = 4
interval = "200 ms"
payload = 100
""",
    )
    config = plan_json(lower(load_scenario(path), test_index=0))
    assert config["flows"] == [
        {
            "kind": "ping",
            "id": 0,
            "from": 2,
            "to": "10.0.0.1",
            "count": 4,
            "interval_ns": 200_000_000,
            "payload": 100,
            "start_ns": 0,
        }
    ]


def locate(path: Path, needle: str) -> tuple[int, int]:
    for i, line in enumerate(path.read_text().splitlines()):
        if needle in line:
            return i + 1, line.index(needle) + 1
    raise AssertionError(needle)


def test_unknown_cpu_profile_names_the_key_and_lists_profiles(tmp_path):
    text = (
        HEAD.replace('address = "10.0.0.2/24"', 'address = "10.0.0.2/24"\ncpu = "pentium-4"')
        + '[[link]]\ntype = "wifi"\nap = "ap"\nstations = ["s1", "s2"]\n'
    )
    path = write(tmp_path, text)
    with pytest.raises(InputError) as err:
        plan_json(lower(load_scenario(path), source=path))
    line, column = locate(path, '"pentium-4"')
    message = str(err.value)
    assert f"{path}:{line}:{column}: node.s1.cpu" in message
    for profile in ("asic", "pentium-m-1.6ghz", "generic-host", "soho-router"):
        assert profile in message


def test_what_the_simulator_lacks_is_refused_at_its_key(tmp_path):
    path = write(
        tmp_path,
        HEAD
        + """
[node.les]
role = "lane-server"
[[link]]
type = "atm"
ends = ["s1", "s2"]
vcs = [{vci = 32}]
loss = "1 %"
[[link]]
type = "atm"
ends = ["les", "s2"]
""",
    )
    with pytest.raises(InputError) as err:
        plan_json(lower(load_scenario(path), source=path))
    message = str(err.value)
    # Cells are lost in switch queues, not by a loss model (a LANE server is lowered).
    assert "node.les.role" not in message
    assert "link[0].loss" in message and "ATM link" in message


def test_serial_lines_loss_and_shapers_lower_per_direction(tmp_path):
    path = write(
        tmp_path,
        HEAD
        + """
[[link]]
type = "serial"
rate = "9600 bps"
framing = "ppp"
compression = 2.0
ends = ["s1", "s2"]
[[link]]
type = "ethernet"
ends = ["ap", "s1"]
loss = [{model = "bernoulli", rate = "1 %", direction = "forward"}, {model = "gilbert-elliott", p = 0.01, r = 0.5, direction = "reverse"}]
shaper = {rate = "30 Mbps", burst = "15 kB"}
""",
    )
    config = plan_json(lower(load_scenario(path), source=path))
    serial, ethernet = config["links"][0], config["links"][1]
    assert (
        serial["type"] == "serial"
        and serial["rate_bps"] == 9600
        and serial["framing"] == "ppp"
        and serial["compression"] == 2.0
    )
    ports = [config["nodes"][serial[end]["node"]]["ports"][serial[end]["port"]] for end in ("a", "b")]
    assert all(p["point_to_point"] and p["mtu"] == 1500 and p["name"].startswith("ppp") for p in ports)
    forward, reverse = ethernet["impair"]
    assert forward["loss"] == {"model": "bernoulli", "p": 0.01}
    assert reverse["loss"] == {"model": "gilbert-elliott", "p": 0.01, "r": 0.5, "k": 1.0, "h": 0.0}
    assert (
        forward["shaper"]
        == reverse["shaper"]
        == {"rate_bps": 30_000_000, "burst_bytes": 15_000, "police": False, "queue_bytes": None}
    )


# --------------------------------------------------------------------------- the Rust contract


def _plan_schema() -> dict:
    return json.loads(PLAN_SCHEMA_FILE.read_text())


def rust_fields(struct: str) -> list[str]:
    """Field names of a plan type (crates/plan), from its generated JSON Schema."""
    schema = _plan_schema()
    d = schema if schema["title"] == struct else schema["$defs"][struct]
    return list(d["properties"])


def rust_variant(enum: str, variant: str) -> list[str]:
    """Field names of a variant of a tagged plan enum, its tag excluded."""
    for member in _plan_schema()["$defs"][enum]["oneOf"]:
        if member.get("title") == variant:
            tag = next(k for k, v in member["properties"].items() if "const" in v)
            return [f for f in member["properties"] if f != tag]
    raise AssertionError(variant)


@pytest.mark.skipif(not PLAN_SCHEMA_FILE.exists(), reason="schema/plan.schema.json not in this tree")
def test_every_key_is_a_field_the_simulator_knows(example):
    """config.rs denies unknown fields: the lowering must emit exactly its field names."""
    _, config = example
    assert set(config) <= set(rust_fields("SimConfig"))
    for n in config["nodes"]:
        assert set(n) == set(rust_fields("NodeConfig"))
        for p in n["ports"]:
            assert set(p) == set(rust_fields("PortConfig"))
        if n["bridge"]:
            assert set(n["bridge"]) == set(rust_fields("BridgeConfig"))
            assert n["bridge"]["mode"] in ("l2", "l3f")
        if n["nat"]:
            assert set(n["nat"]) == set(rust_fields("NatConfig"))
        assert set(n["cpu"]) == set(rust_fields("CpuConfig"))
        assert set(n["cpu"]["cycles"]) == set(rust_fields("CpuCycles"))
    for link in config["links"]:
        if link["type"] == "wifi":
            assert set(link) - {"type"} == set(rust_variant("LinkConfig", "WifiLink"))
        else:
            assert set(link) - {"type"} == set(rust_variant("LinkConfig", "EthernetLink"))


def test_flow_keys_match_the_simulator(tmp_path):
    path = write(
        tmp_path,
        HEAD
        + '[[link]]\ntype = "wifi"\nap = "ap"\nstations = ["s1", "s2"]\n[[test]]\nmethod = "udp.flow"\nfrom = "s1"\nto = "s2"\nrate = "1 Mbps"\n[[test]]\nmethod = "ping"\nfrom = "s1"\nto = "s2"\n',
    )
    scenario = load_scenario(path)
    flow_config = json.loads((ROOT / "schema" / "plan.schema.json").read_text())["$defs"]["FlowConfig"]["oneOf"]
    for index in (0, 1):
        for f in plan_json(lower(scenario, test_index=index))["flows"]:
            variant = {"udp": "UdpFlow", "ping": "PingFlow"}[f["kind"]]
            fields = set(rust_variant("FlowConfig", variant))
            # Every key is a field the simulator reads (its Rust source), and every field
            # the plan's schema requires (no serde default) is given; an optional field
            # a method leaves out (a raw stream's MACs) takes the core's default.
            (schema,) = [v for v in flow_config if v["properties"]["kind"].get("const") == f["kind"]]
            assert set(f) - {"kind"} <= fields
            assert set(schema["required"]) - {"kind"} <= set(f)
            assert set(schema["properties"]) - {"kind"} == fields


def test_cpu_profiles_say_where_every_number_comes_from():
    from qoslab.data import CpuCycles, cpu_profiles

    profiles = cpu_profiles()
    assert {"asic", "pentium-m-1.6ghz", "generic-host", "soho-router"} <= set(profiles)
    assert profiles["asic"].hz == 0
    for p in profiles.values():
        notes = p.calibration
        for key in ["hz", "queue_limit"] + ([] if "cycles" in notes else list(CpuCycles.model_fields)):
            assert notes.get(key, "").strip(), (p.name, key)
        if p.hz > 0:
            # a per-packet cost no standard gives is either calibrated on a named point or says it is not
            assert all(
                ("uncalibrated" in notes[k] or "calibrated on" in notes[k] or notes[k].startswith("0:"))
                for k in CpuCycles.model_fields
            ), p.name
