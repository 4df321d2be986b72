"""IPsec ESP tunnels in the simulator: the lowering of ``[[tunnel]] type = "ipsec"``, runs
through it, the ESP (AH) on the wire, the CPU it costs, transport mode and several VPNs
between two hosts, and what is still refused (``over``, single DES, other tunnels).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from conftest import pcap_packets
from qoslab.backends.sim import lower, run_tests
from qoslab.errors import InputError
from qoslab.lower.lowered import plan_json
from qoslab.scenario import load_scenario

NETWORK = """
[scenario]
name = "a client, a router, a server"
seed = 3
[node.client]
role = "host"
address = "10.0.1.1/24"
gateway = "10.0.1.254"
[node.gw]
role = "router"
address = ["10.0.1.254/24", "10.0.2.254/24"]
[node.server]
role = "host"
address = "10.0.2.1/24"
gateway = "10.0.2.254"
cpu = "generic-host"
[[link]]
type = "ethernet"
rate = "100 Mbps"
ends = ["client", "gw"]
[[link]]
type = "ethernet"
rate = "100 Mbps"
ends = ["gw", "server"]
"""

TUNNEL = """
[[tunnel]]
type = "ipsec"
name = "vpn0"
from = "client"
to = "server"
cipher = "3des-cbc"
auth = "hmac-sha1-96"
"""

TESTS = """
[[test]]
method = "udp.flow"
from = "client"
to = "server"
payload = 1000
gap = "10 ms"
duration = "1 s"
[[test]]
method = "ping"
from = "client"
to = "server"
count = 3
interval = "100 ms"
"""


def scenario_file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "ipsec.toml"
    path.write_text(text, encoding="utf-8")
    return path


def locate(path: Path, needle: str) -> tuple[int, int]:
    for n, line in enumerate(path.read_text().splitlines(), 1):
        if needle in line:
            return n, line.index(needle) + 1
    raise AssertionError(needle)


def test_host_to_host_tunnel_lowers_to_a_mirrored_pair(tmp_path):
    config = plan_json(lower(load_scenario(scenario_file(tmp_path, NETWORK + TUNNEL))))
    nodes = {n["name"]: n for n in config["nodes"]}
    assert nodes["gw"]["ipsec"] == []
    (c,) = nodes["client"]["ipsec"]
    (s,) = nodes["server"]["ipsec"]
    assert c == {
        "name": "vpn0",
        "local": "10.0.1.1",
        "remote": "10.0.2.1",
        "spi_out": 0x1000,
        "spi_in": 0x1001,
        "cipher": "3des-cbc",
        "auth": "hmac-sha1-96",
        "protects": [["10.0.2.1", 32]],
        "mtu": 1500,
        "mode": "tunnel",
        "protocol": "esp",
        "select_protocol": None,
        "select_local_port": None,
        "select_remote_port": None,
        "fragment": "after",
    }
    assert (s["local"], s["remote"], s["spi_out"], s["spi_in"], s["protects"]) == (
        "10.0.2.1",
        "10.0.1.1",
        0x1001,
        0x1000,
        [["10.0.1.1", 32]],
    )


def test_a_tunnel_to_a_gateway_protects_the_subnets_behind_it(tmp_path):
    text = (
        NETWORK
        + TUNNEL.replace('to = "server"', 'to = "gw"')
        + TUNNEL.replace('name = "vpn0"', 'name = "vpn1"')
        .replace('from = "client"', 'from = "server"')
        .replace('to = "server"', 'to = "client"')
        .replace("hmac-sha1-96", "hmac-md5-96")
    )
    config = plan_json(lower(load_scenario(scenario_file(tmp_path, text))))
    nodes = {n["name"]: n for n in config["nodes"]}
    client = {t["name"]: t for t in nodes["client"]["ipsec"]}
    # The client reaches the gateway at 10.0.1.254; behind it lies 10.0.2.0/24.
    assert client["vpn0"]["remote"] == "10.0.1.254" and client["vpn0"]["protects"] == [["10.0.2.0", 24]]
    assert nodes["gw"]["ipsec"][0]["protects"] == [["10.0.1.1", 32]]
    # The second tunnel (index 1) takes the next SPI pair; a host is protected by its address.
    assert (client["vpn1"]["spi_out"], client["vpn1"]["spi_in"], client["vpn1"]["protects"]) == (
        0x1003,
        0x1002,
        [["10.0.2.1", 32]],
    )


def test_two_tunnels_protecting_one_destination_are_refused(tmp_path):
    text = NETWORK + TUNNEL + TUNNEL.replace('name = "vpn0"', 'name = "vpn1"')
    path = scenario_file(tmp_path, text)
    with pytest.raises(InputError) as err:
        plan_json(lower(load_scenario(path), source=path))
    assert "tunnel[1].to" in str(err.value) and "already sends 10.0.2.1/32 into tunnel[0]" in str(err.value)


def test_udp_and_ping_cross_the_tunnel_as_esp(tmp_path):
    path = scenario_file(tmp_path, NETWORK + TUNNEL + TESTS)
    _, runs = run_tests(load_scenario(path), source=path, pcap_dir=tmp_path / "pcap")
    udp, ping = runs[0].records[0], runs[1].records[0]
    assert (udp["metrics"]["sent"], udp["metrics"]["received"], udp["metrics"]["loss_pct"]) == (100, 100, 0.0)
    assert (ping["metrics"]["sent"], ping["metrics"]["received"]) == (3, 3)
    # On the wire between client and gateway: ESP (IPv4 protocol 50) only, besides ARP.
    frames = pcap_packets(next((tmp_path / "pcap" / "test0").glob("gw-eth0*.pcap")))
    ipv4 = [f for f in frames if f[12:14] == b"\x08\x00"]
    assert len(ipv4) >= 100
    assert {f[14 + 9] for f in ipv4} == {50}
    spis = {int.from_bytes(f[34:38], "big") for f in ipv4 if f[26:30] == bytes([10, 0, 1, 1])}
    assert spis == {0x1000}


def test_the_receiving_end_pays_for_decryption(tmp_path):
    busy_s = {}
    for name, text in (("clear", NETWORK + TESTS), ("esp", NETWORK + TUNNEL + TESTS)):
        path = scenario_file(tmp_path, text)
        _, runs = run_tests(load_scenario(path), source=path)
        results = runs[0].results
        server = next(n for n in results.nodes if n.name == "server")
        busy_s[name] = server.cpu_utilization * results.sim_time_ns / 1e9

    # generic-host (cpu_profiles.toml): 100 datagrams, and the warm-up ping's request,
    # each an ESP packet of 8 + 8 + pad8(inner + 2) + 12 bytes opened at 120 cycles a
    # byte and 3000 a packet, at 2 GHz; the ping's reply is sealed too (billed to the
    # next frame received). Everything else is the same in both runs.
    def esp(inner: int) -> int:
        return 8 + 8 + -(-(inner + 2) // 8) * 8 + 12

    cycles = 100 * (3000 + 120 * esp(20 + 8 + 1000)) + 2 * (3000 + 120 * esp(20 + 8 + 56))
    assert busy_s["esp"] - busy_s["clear"] == pytest.approx(cycles / 2e9, rel=0.02)


@pytest.mark.parametrize(
    ("change", "key", "words"),
    [
        ('over = "link[0]"', "tunnel[0].over", "follows the routed path"),
        ('cipher = "des-cbc"', "tunnel[0].cipher", "'3des-cbc'"),
    ],
)
def test_what_is_not_simulated_yet_is_refused_at_its_key(tmp_path, change, key, words):
    tunnel = TUNNEL.replace('cipher = "3des-cbc"\n', "") + change + "\n"
    path = scenario_file(tmp_path, NETWORK + tunnel + TESTS)
    with pytest.raises(InputError) as err:
        plan_json(lower(load_scenario(path), source=path))
    message = str(err.value)
    value = change.splitlines()[0].split(" = ")[1]
    line, column = locate(path, value)
    assert f"{path}:{line}:{column}: {key}" in message, message
    assert words in message


def test_gcm_with_an_hmac_is_refused(tmp_path):
    path = scenario_file(tmp_path, NETWORK + TUNNEL.replace("3des-cbc", "aes-128-gcm") + TESTS)
    with pytest.raises(InputError) as err:
        plan_json(lower(load_scenario(path), source=path))
    assert "tunnel[0].auth" in str(err.value) and "RFC 4106" in str(err.value)


def test_other_tunnels_are_still_refused(tmp_path):
    text = NETWORK + '[[tunnel]]\ntype = "gre"\nname = "gre0"\nfrom = "client"\nto = "server"\n' + TESTS
    path = scenario_file(tmp_path, text)
    with pytest.raises(InputError) as err:
        plan_json(lower(load_scenario(path), source=path))
    assert "tunnel[0].type" in str(err.value) and "gre tunnels" in str(err.value)


def test_qoslab_run_exits_2_on_over(tmp_path):
    path = scenario_file(tmp_path, NETWORK + TUNNEL + 'over = "link[0]"\n' + TESTS)
    proc = subprocess.run(
        [sys.executable, "-m", "qoslab", "run", str(path)], capture_output=True, text=True, check=False, timeout=600
    )
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "tunnel[0].over" in proc.stderr


def test_ah_without_an_icv_is_refused(tmp_path):
    path = scenario_file(
        tmp_path,
        NETWORK
        + TUNNEL.replace('cipher = "3des-cbc"', 'protocol = "ah"\ncipher = "null"').replace('"hmac-sha1-96"', '"none"')
        + TESTS,
    )
    with pytest.raises(InputError) as err:
        plan_json(lower(load_scenario(path), source=path))
    assert "tunnel[0].auth" in str(err.value) and "RFC 4302" in str(err.value)


def test_transport_mode_tunnels_between_two_hosts_are_told_apart_by_their_selectors(tmp_path):
    transport = TUNNEL.replace('cipher = "3des-cbc"', 'mode = "transport"\ncipher = "3des-cbc"')
    selectors = ["", 'selector = { protocol = "udp", port = 8 }\n', 'selector = { protocol = "tcp", port = 9 }\n']
    text = NETWORK + "".join(
        transport.replace('name = "vpn0"', f'name = "vpn{k}"') + sel for k, sel in enumerate(selectors)
    )
    config = plan_json(lower(load_scenario(scenario_file(tmp_path, text))))
    nodes = {n["name"]: n for n in config["nodes"]}
    # The port is the server's (`to`'s): the client's remote port, the server's local one
    # (RFC 4301 §4.4.1.1); UDP and TCP by their IANA protocol numbers 17 and 6.
    wanted = {
        "client": [("transport", None, None, None), ("transport", 17, None, 8), ("transport", 6, None, 9)],
        "server": [("transport", None, None, None), ("transport", 17, 8, None), ("transport", 6, 9, None)],
    }
    for end, rows in wanted.items():
        got = [
            (t["mode"], t["select_protocol"], t["select_local_port"], t["select_remote_port"])
            for t in nodes[end]["ipsec"]
        ]
        assert got == rows, end
    assert nodes["client"]["ipsec"][2]["remote"] == "10.0.2.1" and nodes["server"]["ipsec"][2]["spi_out"] == 0x1005


@pytest.mark.parametrize(
    ("second", "key", "words"),
    [
        ("", "tunnel[1].to", "tunnel[0] already carries everything between them"),
        (
            'selector = { protocol = "udp", port = 8 }\n',
            "tunnel[1].selector",
            "the same traffic (protocol udp, port 8)",
        ),
    ],
)
def test_two_transport_tunnels_carrying_the_same_traffic_are_refused(tmp_path, second, key, words):
    transport = TUNNEL.replace('cipher = "3des-cbc"', 'mode = "transport"\ncipher = "3des-cbc"')
    first = second
    text = NETWORK + transport + first + transport.replace('name = "vpn0"', 'name = "vpn1"') + second
    path = scenario_file(tmp_path, text)
    with pytest.raises(InputError) as err:
        plan_json(lower(load_scenario(path), source=path))
    assert key in str(err.value) and words in str(err.value), str(err.value)


def test_a_port_selector_needs_udp_or_tcp_and_tunnel_mode_takes_none(tmp_path):
    path = scenario_file(
        tmp_path,
        NETWORK
        + TUNNEL.replace('cipher = "3des-cbc"', 'mode = "transport"\ncipher = "3des-cbc"')
        + "selector = { port = 8 }\n",
    )
    with pytest.raises(InputError) as err:
        load_scenario(path)
    assert "tunnel[0].selector: a port selector needs" in str(err.value) and "'udp' or 'tcp'" in str(err.value), str(
        err.value
    )
    path = scenario_file(tmp_path, NETWORK + TUNNEL + 'selector = { protocol = "udp", port = 8 }\n')
    with pytest.raises(InputError) as err:
        plan_json(lower(load_scenario(path), source=path))
    assert "tunnel[0].selector" in str(err.value) and "tunnel-mode" in str(err.value), str(err.value)


@pytest.mark.parametrize("mode", ["transport", "tunnel"])
def test_ah_carries_udp_and_ping_in_both_modes(tmp_path, mode):
    tunnel = TUNNEL.replace('cipher = "3des-cbc"', f'mode = "{mode}"\nprotocol = "ah"\ncipher = "null"')
    path = scenario_file(tmp_path, NETWORK + tunnel + TESTS)
    _, runs = run_tests(load_scenario(path), source=path, pcap_dir=tmp_path / "pcap")
    udp, ping = runs[0].records[0]["metrics"], runs[1].records[0]["metrics"]
    assert (udp["received"], ping["received"]) == (100, 3)
    frames = [
        f for f in pcap_packets(next((tmp_path / "pcap" / "test0").glob("gw-eth0*.pcap"))) if f[12:14] == b"\x08\x00"
    ]
    assert {f[14 + 9] for f in frames} == {51}
    # AH's own next header: UDP (17) in transport mode, IPv4 (4) in tunnel mode.
    assert {f[14 + 20] for f in frames if f[26:30] == bytes([10, 0, 1, 1]) and len(f) > 200} == (
        {17} if mode == "transport" else {4}
    )


def test_a_tunnel_to_the_gateway_carries_traffic_to_the_network_behind_it(tmp_path):
    # The client seals for the gateway, which opens and forwards to the server in clear;
    # the server's replies are sealed by the gateway on the way back (ping).
    path = scenario_file(tmp_path, NETWORK + TUNNEL.replace('to = "server"', 'to = "gw"') + TESTS)
    _, runs = run_tests(load_scenario(path), source=path, pcap_dir=tmp_path / "pcap")
    udp, ping = runs[0].records[0]["metrics"], runs[1].records[0]["metrics"]
    assert (udp["received"], ping["received"]) == (100, 3)
    inside = [
        f for f in pcap_packets(next((tmp_path / "pcap" / "test1").glob("gw-eth0*.pcap"))) if f[12:14] == b"\x08\x00"
    ]
    behind = [
        f for f in pcap_packets(next((tmp_path / "pcap" / "test1").glob("gw-eth1*.pcap"))) if f[12:14] == b"\x08\x00"
    ]
    assert {f[14 + 9] for f in inside} == {50}, "ESP between client and gateway"
    assert {f[14 + 9] for f in behind} == {1}, "clear ICMP behind the gateway"
