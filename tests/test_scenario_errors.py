"""Bad scenarios: every problem names file:line:column, key path, expected and found.

Positions are computed here from the file's text (the line holding the offending
token, and its column), not taken from the loader.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from conftest import BAD, ROOT
from qoslab.errors import InputError
from qoslab.scenario import load_scenario, loads_scenario


def locate(path: Path, needle: str, after: str | None = None) -> tuple[int, int]:
    """1-based (line, column) of the first ``needle`` (after the line holding ``after``)."""
    lines = path.read_text().splitlines()
    start = 0
    if after is not None:
        start = next(i for i, line in enumerate(lines) if after in line) + 1
    for i in range(start, len(lines)):
        if needle in lines[i]:
            return i + 1, lines[i].index(needle) + 1
    raise AssertionError(f"{needle!r} not in {path}")


# file, (needle, after), key path, message, expected, found, hint
CASES = [
    (
        "openvpn_no_room.toml",
        ('"wan"', "[[tunnel]]"),
        "tunnel[0].over",
        "the interface below leaves no room for a 68-byte datagram (RFC 791 §3.2) inside OpenVPN",
        "an MTU below of at least 134 (IPv4 20 + UDP 8 + OpenVPN 24 + Ethernet 14 + 68)",
        "'wan' with MTU 120",
        None,
    ),
    (
        "openvpn_tcp_fragment.toml",
        ("1300", "[[tunnel]]"),
        "tunnel[0].fragment",
        "OpenVPN refuses --fragment with proto = 'tcp' (TCP carries each packet whole)",
        "no `fragment` with proto = 'tcp' (or proto = 'udp')",
        "1300",
        "--mssfix, the TCP-mode alternative, is not modelled",
    ),
    (
        "pppoe_no_room.toml",
        ('"lan"', "[[tunnel]]"),
        "tunnel[0].over",
        "the interface below leaves no room for a 68-byte datagram (RFC 791 §3.2) inside PPPoE",
        "an MTU below of at least 76 (PPPoE 6 + PPP 2 + 68)",
        "'lan' with MTU 70",
        None,
    ),
    (
        "unknown_key.toml",
        ("standrd", None),
        "link[0].standrd",
        "unknown key",
        None,
        "'standrd'",
        "did you mean 'standard'?",
    ),
    (
        "bad_unit.toml",
        ('"11 Mhz"', None),
        "link[0].rate",
        "unknown rate unit 'Mhz'",
        "a rate such as '11 Mbps'",
        "'11 Mhz'",
        "units accepted",
    ),
    ("wrong_type.toml", ('"1500"', None), "link[0].mtu", "wrong type", "an integer", "'1500' (a string)", None),
    (
        "unknown_node.toml",
        ('"ws3"', None),
        "link[1].ends[1]",
        "unknown node",
        "one of 'ap', 'ws1', 'ws2'",
        "'ws3'",
        "did you mean 'ws2'?",
    ),
    (
        "duplicate_address.toml",
        ('"192.168.1.100/24"', "[node.ws2]"),
        "node.ws2.address[1]",
        "address already used by node 'ws1'",
        "an address no other node has",
        "'192.168.1.100/24'",
        None,
    ),
    (
        "gateway_outside_subnet.toml",
        ('"192.168.0.1"', None),
        "node.ws1.gateway",
        "next hop outside the node's subnets",
        "an address in 192.168.1.0/24",
        "'192.168.0.1'",
        None,
    ),
    (
        "tunnel_over_nothing.toml",
        ('"lna"', None),
        "tunnel[0].over",
        "names no tunnel or link",
        "one of 'vpn', 'lan', 'link[0]'",
        "'lna'",
        "did you mean 'lan'?",
    ),
    (
        "tunnel_loop.toml",
        ('"inner"', None),
        "tunnel[0].over",
        "tunnels run over each other in a loop",
        None,
        "outer over inner over outer",
        None,
    ),
    (
        "wifi_station_not_node.toml",
        ('"station-a"', None),
        "link[0].stations[1]",
        "unknown node (station)",
        "one of 'ap', 'ws1', 'ws2'",
        "'station-a'",
        None,
    ),
    (
        "bridge_one_port.toml",
        ("[node.a]", None),
        "node.a",
        "a bridge needs at least two ports",
        "two or more links with this node as an end",
        "1 link: link[0]",
        None,
    ),
    (
        "atm_vbr_scr_over_pcr.toml",
        ('"80 Mbps"', None),
        "link[0].vcs[0].scr",
        "the sustainable cell rate must be above 0 and at most the peak cell rate (TM 4.0 §3.6.1.2)",
        "0 < scr <= pcr (50 Mbps)",
        "'80 Mbps'",
        None,
    ),
    (
        "atm_abr_rdf_out_of_range.toml",
        ("16 }", None),
        "link[0].vcs[0].rdf",
        "RDF is a factor between 1/32768 and 1 (TM 4.0 §5.10.2)",
        "0 < factor <= 1, e.g. 0.0625",
        "16.0",
        None,
    ),
    ("missing_key.toml", ("[[link]]", None), "link[0].rate", "missing required key 'rate'", None, "nothing", None),
    (
        "wifi_no_ap.toml",
        ("[[link]]", None),
        "link[0].ap",
        "wifi link has no AP",
        "ap = NODE (or mode = 'adhoc')",
        "nothing",
        None,
    ),
    (
        "sweep_unknown_parameter.toml",
        ('"link[0].rat"', None),
        'sweep."link[0].rat"',
        "names no parameter",
        None,
        "'link[0].rat'",
        "did you mean 'rate'?",
    ),
    (
        "ipsec_selector_port_without_protocol.toml",
        ("{ port = 8 }", None),
        "tunnel[0].selector",
        "a port selector needs a protocol with ports",
        "'udp' or 'tcp' with `port`",
        "'any'",
        None,
    ),
    (
        "serial_rate_zero.toml",
        ('"0 bps"', None),
        "link[0].rate",
        "a serial line sends nothing at this rate",
        "at least 300 bps (ITU-T V.21, the slowest modem)",
        "'0 bps'",
        None,
    ),
    (
        "unknown_link_type.toml",
        ('"ethernt"', None),
        "link[0].type",
        "unknown type",
        "one of 'ethernet', 'wifi', 'serial', 'atm'",
        "'ethernt'",
        "did you mean 'ethernet'?",
    ),
    (
        "lane_no_les.toml",
        ('"marketing"', None),
        "link[1].elan",
        "an LE client with no LES: no lane-server runs ELAN 'marketing'",
        "'sales'",
        "'marketing'",
        None,
    ),
    (
        "atm_cross_connect_port.toml",
        ('"atm5"', None),
        "node.atmsw.cross_connects[0].b",
        "switch atmsw has no ATM port 'atm5'",
        "one of 'atm0', 'atm1', 'ws1', 'ws2'",
        "'atm5'",
        None,
    ),
    (
        # A test names its ends by node, not by address: the message must say so, not
        # "expected a string, found a string".
        "test_to_address.toml",
        ('"192.168.1.102"', "[[test]]"),
        "test[0].to",
        "not a node name",
        "a node's name: a key of the [node.*] tables (a letter, then letters, digits, '_', '.' or '-')",
        "'192.168.1.102'",
        None,
    ),
    (
        "atm_mtu_over_aal5.toml",
        ("65535", None),
        "link[0].mtu",
        "an IP packet of 65535 octets with llc-snap (8 octets) is an AAL5 SDU of 65543; AAL5 carries at most 65,535 (ITU-T I.363.5)",
        "at most 65527 with llc-snap (65,535 with vc-mux)",
        "65535",
        None,
    ),
]


def expected_head(path: Path, needle: str, after: str | None, key: str, message: str) -> str:
    line, column = locate(path, needle, after)
    return f"{path}:{line}:{column}: {key}: {message}"


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_problem_is_located_and_explained(case):
    name, (needle, after), key, message, expected, found, hint = case
    path = BAD / name
    with pytest.raises(InputError) as info:
        load_scenario(path)
    text = str(info.value)
    lines = text.splitlines()
    assert lines[0] == expected_head(path, needle, after, key, message)
    if expected is not None:
        assert f"    expected: {expected}" in lines
    if found is not None:
        assert f"    found:    {found}" in lines
    if hint is not None:
        assert any(line.startswith("    hint:") and hint in line for line in lines)
    assert len(info.value.problems) == 1, text


def test_syntax_error_is_located():
    path = BAD / "syntax_error.toml"
    line, column = locate(path, "2", "name =")  # "seed = 1 2": the stray 2
    with pytest.raises(InputError) as info:
        load_scenario(path)
    assert str(info.value).startswith(f"{path}:{line}:{column}: TOML syntax error: ")


ALL_BAD = sorted(BAD.glob("*.toml"))


@pytest.mark.parametrize("path", ALL_BAD, ids=lambda p: p.name)
def test_cli_check_exits_2_with_the_message(path):
    with pytest.raises(InputError) as info:
        load_scenario(path.relative_to(ROOT))
    done = subprocess.run(
        [sys.executable, "-m", "qoslab", "check", str(path.relative_to(ROOT))],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert str(info.value) in done.stderr
    assert done.stdout == ""


def test_every_problem_is_reported_not_only_the_first():
    text = """\
[scenario]
name = "many problems"
seed = "one"

[node.a]
role = "hots"

[node.b]
role = "host"
address = "10.0.0.300/24"

[[link]]
type = "ethernet"
rate = "fast"
ends = ["a", "b"]
colour = "blue"
"""
    with pytest.raises(InputError) as info:
        loads_scenario(text, "many.toml")
    keys = [p.key for p in info.value.problems]
    assert keys == ["scenario.seed", "node.a.role", "node.b.address", "link[0].rate", "link[0].colour"]
    lines = [p.line for p in info.value.problems]
    assert lines == [3, 6, 10, 14, 16]


def test_cross_reference_problems_are_all_reported():
    text = """\
[scenario]
name = "refs"

[node.a]
role = "host"
address = "10.0.0.1/24"
gateway = "10.9.0.1"

[[link]]
type = "ethernet"
ends = ["a", "x"]

[[test]]
method = "ping"
from = "a"
to = "y"
"""
    with pytest.raises(InputError) as info:
        loads_scenario(text)
    keys = [p.key for p in info.value.problems]
    assert keys == ["node.a.gateway", "link[0].ends[1]", "test[0].to"]


def test_missing_file_is_an_input_error(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        load_scenario(tmp_path / "nope.toml")


def test_directory_is_an_input_error(tmp_path):
    with pytest.raises(InputError, match="directory"):
        load_scenario(tmp_path)


def test_not_utf8_is_located(tmp_path):
    path = tmp_path / "latin1.toml"
    path.write_bytes(b'[scenario]\nname = "caf\xe9"\n')
    with pytest.raises(InputError) as info:
        load_scenario(path)
    problem = info.value.problems[0]
    assert (problem.line, problem.column) == (2, 12)  # 'name = "caf' is 11 characters
    assert problem.found == "byte 0xe9"


def test_empty_file_misses_the_scenario_table():
    with pytest.raises(InputError) as info:
        loads_scenario("", "empty.toml")
    assert str(info.value).startswith("empty.toml:1:1: scenario: missing required")


def test_missing_discriminator_names_the_choices():
    text = '[scenario]\nname = "x"\n[[link]]\nends = ["a", "b"]\n'
    with pytest.raises(InputError) as info:
        loads_scenario(text, "t.toml")
    problem = info.value.problems[0]
    assert (problem.key, problem.line, problem.column) == ("link[0].type", 3, 1)
    assert problem.expected == "one of 'ethernet', 'wifi', 'serial', 'atm'"


def test_wifi_rate_must_exist_in_the_standard():
    text = """\
[scenario]
name = "x"
[node.ap]
role = "ap"
[node.s]
role = "host"
[[link]]
type = "wifi"
standard = "802.11b"
rate = "54 Mbps"
ap = "ap"
stations = ["s"]
"""
    with pytest.raises(InputError) as info:
        loads_scenario(text, "w.toml")
    problem = info.value.problems[0]
    assert (problem.key, problem.line, problem.column) == ("link[0].rate", 10, 8)
    assert problem.expected == "one of 1, 2, 5.5, 11 Mbps"


def test_wifi_without_ap():
    text = '[scenario]\nname = "x"\n[node.s]\nrole = "host"\n[[link]]\ntype = "wifi"\nstations = ["s"]\n'
    with pytest.raises(InputError) as info:
        loads_scenario(text, "w.toml")
    problem = info.value.problems[0]
    assert (problem.key, problem.message, problem.line) == ("link[0].ap", "wifi link has no AP", 5)


def test_bad_sweep_value_is_located_in_the_sweep():
    text = """\
[scenario]
name = "x"
[node.a]
role = "host"
[node.b]
role = "host"
[[link]]
type = "serial"
rate = "9600 bps"
ends = ["a", "b"]
[sweep]
"link[0].rate" = ["1200 bps", "2400 baud"]
"""
    with pytest.raises(InputError) as info:
        loads_scenario(text, "s.toml")
    problem = info.value.problems[0]
    assert (problem.key, problem.line, problem.column) == ('sweep."link[0].rate"[1]', 12, 31)
    assert problem.found == "'2400 baud'"
