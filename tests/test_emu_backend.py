"""The emulation backend (python/qoslab/backends/emu/) on this machine's kernel: the
plan's topology read back from the namespaces through netlink, real pings through a
router, a kernel bridge's ARP, NAT's one-way door, cleanup after kill -9, refusals, and
records with the simulator's keys.

These tests need root and network namespaces; without them they are skipped, saying
why. Each uses a registry directory of its own (QOSLAB_EMU_REGISTRY), so a test never
sees another's runs, and removes every namespace it made.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest
from emu_host import own_emu_registry, why_no_namespaces  # noqa: F401 (an autouse fixture)
from qoslab.scenario import load_scenario

WHY = why_no_namespaces()
pytestmark = pytest.mark.skipif(WHY is not None, reason=WHY or "")

QOSLAB = [sys.executable, "-m", "qoslab"]


def _scenario(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "scenario.toml"
    path.write_text(textwrap.dedent(text))
    return path


ROUTED = """
    [scenario]
    name = "two hosts and a router"
    seed = 1

    [node.h1]
    role = "host"
    address = "10.0.1.2/24"
    gateway = "10.0.1.1"

    [node.r]
    role = "router"
    address = ["10.0.1.1/24", "10.0.2.1/24"]

    [node.h2]
    role = "host"
    address = "10.0.2.2/24"
    gateway = "10.0.2.1"

    [[link]]
    name = "left"
    type = "ethernet"
    rate = "100 Mbps"
    ends = ["h1", "r"]

    [[link]]
    name = "right"
    type = "ethernet"
    rate = "100 Mbps"
    ends = ["r", "h2"]
"""

# Seed 000's ICS shape (python/qoslab/examples/seed000_ics.toml, Fig. 7 and Fig. 8) with
# the wireless hop made Ethernet (a switch in the AP's place): station A masquerades
# LAN2 behind its outside address, and the AP routes LAN2's subnet to A (Fig. 8), so
# only NAT's own rules keep LAN1 out.
ICS = """
    [scenario]
    name = "ICS shape on Ethernet"
    seed = 1

    [node.ap]
    role = "router"
    address = "192.168.1.1/24"
    routes = [{ to = "192.168.0.0/24", via = "192.168.1.101" }]

    [node.ws1]
    role = "host"
    address = "192.168.1.100/24"
    gateway = "192.168.1.1"

    [node.sw]
    role = "bridge"
    forwarding = "l2"

    [node.a]
    role = "bridge"
    forwarding = "nat"
    address = ["192.168.1.101/24", "192.168.0.1/24"]
    gateway = "192.168.1.1"

    [node.ws2]
    role = "host"
    address = "192.168.0.102/24"
    gateway = "192.168.0.1"

    [[link]]
    type = "ethernet"
    rate = "100 Mbps"
    ends = ["ws1", "sw"]

    [[link]]
    type = "ethernet"
    rate = "100 Mbps"
    ends = ["ap", "sw"]

    [[link]]
    type = "ethernet"
    rate = "100 Mbps"
    ends = ["a", "sw"]

    [[link]]
    type = "ethernet"
    rate = "100 Mbps"
    ends = ["a", "ws2"]

    [[test]]
    method = "ping"
    from = "ws2"
    to = "ws1"
"""


def _build(path: Path) -> Any:
    """The scenario's network built (a Topology), as run --backend emu builds it."""
    from qoslab.backends.emu import prepare, topology
    from qoslab.backends.emu.links import DirectVeth
    from qoslab.backends.emu.registry import RunRecord

    scenario = load_scenario(path)
    net = prepare(scenario, source=path)
    runner = DirectVeth()
    # A build that fails half-way is removed by the fixture, through the registry.
    return net, topology.build(net.config, RunRecord.start(str(path), runner.implementation), runner)


def _ping(topo: Any, src: str, dst: str, count: int = 3) -> dict[str, Any]:
    from qoslab.backends.emu.measure import ping

    result: dict[str, Any] = ping(topo, src, dst, count=count, interval_s=0.2, payload=56, wait_s=1.0)
    return result


def test_router_pings_both_ways_and_the_kernel_has_the_plans_routes(tmp_path: Path) -> None:
    from pyroute2 import NetNS
    from qoslab.backends.emu import topology

    _, topo = _build(_scenario(tmp_path, ROUTED + '\n[[test]]\nmethod = "ping"\nfrom = "h1"\nto = "h2"\n'))
    try:
        assert _ping(topo, "h1", "10.0.2.2")["received"] == 3
        assert _ping(topo, "h2", "10.0.1.2")["received"] == 3
        for node in topo.plan.nodes:
            with NetNS(topo.namespace(node.name)) as ns:
                # The plan's static routes, as the kernel's main table holds them
                # (the connected ones come from the addresses, as the plan says).
                kernel = {
                    (r.get("dst") or "0.0.0.0", r["dst_len"], r.get("gateway"))
                    for r in ns.route("dump", family=2, table=254)
                    if r.get("gateway")
                }
                planned = {(str(r.destination), r.prefix_len, str(r.via)) for r in node.routes or []}
                assert kernel == planned, node.name
                # Every port: the plan's name, MAC, MTU and address.
                for port in node.ports:
                    link = ns.link("get", index=ns.link_lookup(ifname=port.name)[0])[0]
                    assert link.get("address") == ":".join(f"{b.root:02x}" for b in port.mac)
                    assert link.get("mtu") == port.mtu
                    addrs = {(a.get("address"), a["prefixlen"]) for a in ns.addr("dump", index=link["index"])}
                    assert port.address is not None
                    assert addrs == {(str(port.address[0]), port.address[1].root)}
                forward = subprocess.run(
                    topology.in_namespace(topo.namespace(node.name), ["cat", "/proc/sys/net/ipv4/ip_forward"]),
                    capture_output=True,
                    text=True,
                    check=True,
                ).stdout.strip()
                assert forward == ("1" if node.ip_forward else "0"), node.name
    finally:
        topology.teardown(topo)


BRIDGED = """
    [scenario]
    name = "an l2 bridge"
    seed = 1

    [node.h1]
    role = "host"
    address = "10.0.0.1/24"

    [node.b]
    role = "bridge"
    forwarding = "l2"

    [node.h2]
    role = "host"
    address = "10.0.0.2/24"

    [[link]]
    type = "ethernet"
    rate = "100 Mbps"
    ends = ["h1", "b"]

    [[link]]
    type = "ethernet"
    rate = "100 Mbps"
    ends = ["b", "h2"]

    [[test]]
    method = "ping"
    from = "h1"
    to = "h2"
"""


def test_an_l2_bridge_joins_two_hosts_and_arp_learns_the_plans_mac(tmp_path: Path) -> None:
    from pyroute2 import NetNS
    from qoslab.backends.emu import topology

    _, topo = _build(_scenario(tmp_path, BRIDGED))
    try:
        assert _ping(topo, "h1", "10.0.0.2")["received"] == 3
        h2 = topo.plan.nodes[topo.node_index("h2")]
        with NetNS(topo.namespace("h1")) as ns:
            table = {n.get("dst"): n.get("lladdr") for n in ns.get_neighbours(family=2)}
        assert table.get("10.0.0.2") == topology.format_mac(h2.ports[0].mac)
        b = topo.plan.nodes[topo.node_index("b")]
        with NetNS(topo.namespace("b")) as ns:
            br = ns.link_lookup(ifname=topology.BRIDGE_IFNAME)[0]
            members = {link.get("ifname") for link in ns.link("dump") if link.get("master") == br}
        assert members == {b.ports[p.root].name for p in b.bridge.ports}
    finally:
        topology.teardown(topo)


def test_an_l3f_bridge_routes_by_proxy_arp_and_learned_host_routes(tmp_path: Path) -> None:
    """Seed 000 §2.2: hosts on both sides of an L3F bridge reach each other; each sees
    the other's address at the bridge's MAC of its own side (proxy ARP), and the bridge
    routes each host through the port its link is on (a /32 route learned from ARP)."""
    from pyroute2 import NetNS
    from qoslab.backends.emu import topology
    from qoslab.backends.emu.measure import node_tables

    text = BRIDGED.replace('forwarding = "l2"', 'forwarding = "l3f"\n    address = "10.0.0.3/24"')
    _, topo = _build(_scenario(tmp_path, text))
    try:
        # The first request waits for the bridge to learn (ARP retries, 1 s apart).
        assert _ping(topo, "h1", "10.0.0.2", count=20)["received"] >= 10
        after_first = {n["name"]: n for n in node_tables(topo)}
        assert _ping(topo, "h2", "10.0.0.1")["received"] == 3
        plan = topo.plan
        b = topo.node_index("b")
        side = {}  # host -> the bridge's port its link is on
        for link in plan.links:
            ends = {link.root.a.node: link.root.a, link.root.b.node: link.root.b}
            host = next(n for n in ends if n != b)
            side[plan.nodes[host].name] = plan.nodes[b].ports[ends[b].port]
        address = {"h1": "10.0.0.1", "h2": "10.0.0.2"}
        for host, other in (("h1", "h2"), ("h2", "h1")):
            with NetNS(topo.namespace(host)) as ns:
                table = {n.get("dst"): n.get("lladdr") for n in ns.get_neighbours(family=2)}
            assert table.get(address[other]) == topology.format_mac(side[host].mac)
        with NetNS(topo.namespace("b")) as ns:
            names = {link["index"]: link.get("ifname") for link in ns.link("dump")}
            routes = {
                r.get("dst"): names[r.get("oif")] for r in ns.route("dump", family=2, table=254) if r["dst_len"] == 32
            }
        assert routes == {address[h]: side[h].name for h in ("h1", "h2")}
    finally:
        topology.teardown(topo)
    # The simulator's L3F bridge (seed 000 §2.2), after the same ping h1 -> h2 on a fresh
    # network, holds the same tables: each host's ARP table and the bridge's learned hosts.
    from qoslab.backends.sim import run_tests as run_sim

    path = _scenario(tmp_path, text)
    _, runs = run_sim(load_scenario(path), source=path)
    from qoslab.methods.common import table_rows

    sim = {n.name: n for n in runs[0].results.nodes}
    for host in ("h1", "h2"):
        assert after_first[host]["arp_table"] == table_rows(sim[host].arp_table), host
    assert after_first["b"]["l3f_table"] == table_rows(sim["b"].l3f_table)


def _ics(tmp_path: Path) -> Path:
    return _scenario(tmp_path, ICS)


PROBE = """
import socket, sys
kind, mode, addr, port = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
family = socket.SOCK_DGRAM if kind == "udp" else socket.SOCK_STREAM
s = socket.socket(socket.AF_INET, family)
s.settimeout(2.0)
try:
    if mode == "listen":
        s.bind((addr, port))
        if kind == "udp":
            data, peer = s.recvfrom(100)
        else:
            s.listen(1)
            conn, peer = s.accept()
            data = conn.recv(100)
        print("got", peer[0])
    else:
        if kind == "udp":
            for _ in range(5):
                s.sendto(b"probe", (addr, port))
        else:
            s.connect((addr, port))
            s.sendall(b"probe")
        print("sent")
except OSError as err:
    print("none", type(err).__name__)
"""


def _probe(topo: Any, kind: str, src: str, dst: str, dst_addr: str, port: int = 7000) -> str:
    """A UDP or TCP probe from ``src`` to ``dst_addr``:``port`` (a listener on ``dst``'s
    port 7000): what the listener saw (``got <source address>``, or ``none``)."""
    from qoslab.backends.emu.topology import in_namespace

    listener = subprocess.Popen(
        in_namespace(topo.namespace(dst), [sys.executable, "-c", PROBE, kind, "listen", "0.0.0.0", "7000"]),
        stdout=subprocess.PIPE,
        text=True,
    )
    time.sleep(0.3)
    subprocess.run(
        in_namespace(topo.namespace(src), [sys.executable, "-c", PROBE, kind, "send", dst_addr, str(port)]),
        capture_output=True,
        timeout=10,
    )
    out, _ = listener.communicate(timeout=10)
    return out.strip()


def test_nat_lets_the_inside_out_and_keeps_unsolicited_traffic_from_outside_out(tmp_path: Path) -> None:
    from qoslab.backends.emu import topology

    _, topo = _build(_ics(tmp_path))
    try:
        # Inside -> outside: works, and the outside sees A's outside address (masquerade).
        assert _ping(topo, "ws2", "192.168.1.100")["received"] == 3
        assert _probe(topo, "udp", "ws2", "ws1", "192.168.1.100") == "got 192.168.1.101"
        assert _probe(topo, "tcp", "ws2", "ws1", "192.168.1.100") == "got 192.168.1.101"
        # Outside -> inside, although the AP routes 192.168.0.0/24 to A: nothing gets in.
        assert _ping(topo, "ws1", "192.168.0.102")["received"] == 0
        assert _probe(topo, "udp", "ws1", "ws2", "192.168.0.102").startswith("none")
        assert _probe(topo, "tcp", "ws1", "ws2", "192.168.0.102").startswith("none")
    finally:
        topology.teardown(topo)


def test_a_nat_port_forward_lets_that_one_port_in(tmp_path: Path) -> None:
    from qoslab.backends.emu import topology

    text = ICS.replace(
        'address = ["192.168.1.101/24", "192.168.0.1/24"]',
        'address = ["192.168.1.101/24", "192.168.0.1/24"]\n'
        '    port_forwards = [{ proto = "tcp", port = 8000, to = "192.168.0.102:7000" }]',
    )
    _, topo = _build(_scenario(tmp_path, text))
    try:
        # To A's outside address and the forwarded port: in, to ws2's port 7000 (the
        # source stays ws1's: a port forward translates the destination only).
        assert _probe(topo, "tcp", "ws1", "ws2", "192.168.1.101", port=8000) == "got 192.168.1.100"
        # Any other port of A's outside address, or ws2's own address: still nothing.
        assert _probe(topo, "udp", "ws1", "ws2", "192.168.1.101", port=8000).startswith("none")
        assert _probe(topo, "tcp", "ws1", "ws2", "192.168.0.102").startswith("none")
    finally:
        topology.teardown(topo)


def _root_state() -> tuple[set[str], set[str], str]:
    """The root namespace's namespaces, interfaces and nftables tables."""
    from pyroute2 import IPRoute, netns

    with IPRoute() as ipr:
        links = {str(link.get("ifname")) for link in ipr.link("dump")}
    tables = subprocess.run(["nft", "list", "tables"], capture_output=True, text=True).stdout
    return set(netns.listnetns()), links, tables


def _running(pid: int, start: int | None) -> bool:
    """Process ``pid`` is the one that started at ``start`` and is not a zombie (a killed
    child waits as one until its new parent reaps it)."""
    from qoslab.backends.emu.registry import alive

    if not alive(pid, start):
        return False
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_kill_9_of_a_run_then_emu_clean_leaves_nothing(tmp_path: Path) -> None:
    from qoslab.backends.emu.registry import registered_runs

    path = _ics(tmp_path)
    path.write_text(
        path.read_text().replace(
            'from = "ws2"\nto = "ws1"', 'from = "ws2"\nto = "ws1"\ncount = 200\ninterval = "0.1 s"'
        )
    )
    before = _root_state()
    run = subprocess.Popen([*QOSLAB, "run", str(path), "--backend", "emu"], stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            runs = registered_runs()
            # Running: the namespaces are made, the four links' emulators and the ping
            # are started.
            if runs and len(runs[0].pids) > 4:
                break
            time.sleep(0.1)
        else:
            pytest.fail("the run did not start its ping within 60 s")
        record = runs[0]
        inside = subprocess.run(
            ["ip", "netns", "exec", f"qoslab-{record.run}-a", "nft", "list", "tables"], capture_output=True, text=True
        )
        assert "qoslab_nat" in inside.stdout  # the NAT node's table, to be left behind by the kill
        os.kill(run.pid, signal.SIGKILL)
        run.wait(timeout=10)
    finally:
        if run.poll() is None:
            run.kill()
    from pyroute2 import netns

    left = [n for n in netns.listnetns() if n.startswith(f"qoslab-{record.run}-")]
    assert len(left) == 5  # killed: everything is still there
    done = subprocess.run([*QOSLAB, "emu", "clean"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    after = _root_state()
    # Other programs may make namespaces and interfaces meanwhile: only the run's names
    # (and the ports of its plan, were they left in the root namespace) count.
    assert not [n for n in after[0] if n.startswith(f"qoslab-{record.run}")]
    ports = {"eth0", "eth1", "eth2"}
    assert not [n for n in after[1] - before[1] if record.run in n or n in ports]
    assert "qoslab" not in after[2]
    assert not [pid for pid, start in record.pids if pid is not None and _running(pid, start)]
    assert not (Path(os.environ["QOSLAB_EMU_REGISTRY"]) / f"{record.run}.json").exists()


REFUSED = {
    "an RFC 2544 tester's raw stream": (
        BRIDGED.replace('method = "ping"', 'method = "rfc2544.throughput"\ndst_mac = "b/eth0"'),
        "test[0].dst_mac",
        "raw stream",
    ),
    "a NetBSD stack": (
        BRIDGED.replace('method = "ping"', 'method = "tcp.bulk"\nstack = "netbsd-1.1"'),
        "test[0].stack",
        "this machine's Linux",
    ),
    # Seed 000 Fig. 10's mechanisms: iperf3 resolves by ARP, Linux drops PACKET_OTHERHOST.
    "a raw stream": (
        BRIDGED.replace('method = "ping"', 'method = "udp.flow"\nrate = "1 Mbps"\ndst_mac = "b/eth0"'),
        "test[0].dst_mac",
        "raw stream",
    ),
    "a promiscuous bridge": (
        BRIDGED.replace('forwarding = "l2"', 'forwarding = "l2"\npromiscuous = true'),
        "node.b.promiscuous",
        "promiscuous ports are not emulated",
    ),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_what_the_emulation_backend_cannot_run_yet_is_refused_by_check(tmp_path: Path, case: str) -> None:
    text, key, words = REFUSED[case]
    done = subprocess.run(
        [*QOSLAB, "check", str(_scenario(tmp_path, text)), "--backend", "emu"], capture_output=True, text=True
    )
    assert done.returncode == 2, done.stderr
    assert key in done.stderr and words in done.stderr, done.stderr
    assert "Traceback" not in done.stderr


def test_without_root_the_backend_refuses_to_start(monkeypatch: pytest.MonkeyPatch) -> None:
    from qoslab.backends.emu import check_host
    from qoslab.errors import InputError

    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    with pytest.raises(InputError, match="needs root"):
        check_host()


def test_sigterm_removes_the_network_without_emu_clean(tmp_path: Path) -> None:
    from pyroute2 import netns
    from qoslab.backends.emu.registry import registered_runs

    path = _scenario(
        tmp_path, ROUTED + '\n[[test]]\nmethod = "ping"\nfrom = "h1"\nto = "h2"\ncount = 200\ninterval = "0.1 s"\n'
    )
    run = subprocess.Popen([*QOSLAB, "run", str(path), "--backend", "emu"], stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while not (registered_runs() and registered_runs()[0].pids):
            assert time.monotonic() < deadline, "the run did not start its ping within 60 s"
            time.sleep(0.1)
        record = registered_runs()[0]
        run.send_signal(signal.SIGTERM)
        assert run.wait(timeout=30) != 0
    finally:
        if run.poll() is None:
            run.kill()
    assert not [n for n in netns.listnetns() if n.startswith(f"qoslab-{record.run}-")]
    assert not (Path(os.environ["QOSLAB_EMU_REGISTRY"]) / f"{record.run}.json").exists()


FLOWS = (
    ROUTED
    + """
    [[test]]
    method = "udp.flow"
    from = "h1"
    to = "h2"
    rate = "10 Mbps"
    payload = 1000
    duration = "1 s"

    [[test]]
    method = "tcp.bulk"
    from = "h1"
    to = "h2"
    duration = "1 s"
    interval = "0.5 s"
"""
)

EMU_ONLY = {"backend", "kernel", "link_implementation", "emulated_links"}
"""What an emulation record has beyond the simulator's keys."""


def _keys(value: Any, prefix: str = "") -> set[str]:
    """Every key path of a record (lists: their first element)."""
    out: set[str] = set()
    if isinstance(value, dict):
        for k, v in value.items():
            out.add(prefix + k)
            # cpu_util_pct maps node names (the simulator's modelled CPUs) to percent.
            if k != "cpu_util_pct":
                out |= _keys(v, prefix + k + ".")
    elif isinstance(value, list) and value and isinstance(value[0], dict):
        out |= _keys(value[0], prefix + "[].")
    return out


def test_udp_flow_and_tcp_bulk_records_have_the_simulators_keys(tmp_path: Path) -> None:
    from qoslab.backends.sim import run_tests as run_sim

    path = _scenario(tmp_path, FLOWS)
    done = subprocess.run(
        [*QOSLAB, "run", str(path), "--backend", "emu", "--json"], capture_output=True, text=True, timeout=180
    )
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["backend"] == "emu" and out["link_implementation"] == "emulated"
    emu = out["results"]
    _, runs = run_sim(load_scenario(path), source=path)
    sim = [rec for r in runs for rec in r.records]
    assert [r["test"] for r in emu] == [r["test"] for r in sim] == ["udp.flow", "tcp.bulk"]
    for e, s in zip(emu, sim, strict=True):
        assert set(e) == set(s) | EMU_ONLY
        assert e["backend"] == "emu" and e["kernel"] == os.uname().release
        assert {k for k in _keys(e) if k.split(".")[0] not in EMU_ONLY} == _keys(s), e["test"]
        assert e["parameters"] == s["parameters"]
    udp, tcp = emu
    # The 100 Mb/s emulated links carry the offered 10 Mb/s (of Ethernet frames): the datagrams the
    # plan's rate sends in 1 s, and nearly all of them arrive (a loaded machine may
    # overflow the receiver's socket buffer now and then).
    assert udp["metrics"]["sent"] == round(10e6 / (8 * udp["parameters"]["frame_bytes"]))
    assert udp["metrics"]["received"] >= 0.99 * udp["metrics"]["sent"]
    assert udp["metrics"]["throughput_mbps"] == pytest.approx(10.0, rel=0.05)
    assert tcp["metrics"]["throughput_mbps"] > 0
