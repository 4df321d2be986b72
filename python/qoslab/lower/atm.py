"""Lowering of ATM links, switches and CLIP subnets into the plan (crates/plan/src/atm.rs).

Rules:

* Every ATM link becomes an ``AtmLinkConfig``: ``phy`` (``oc3`` = 149.76 Mb/s of cells,
  ITU-T G.707 §10.1.1; ``25m`` = af-phy-0040's 25.6 Mb/s with one command octet per
  cell), ``rate`` overriding the cell rate, ``delay``, the RFC 2684 encapsulation and the
  PVCs its ``vcs`` list (with their service category and PCR).
* A switch's PVC cross-connects are its ``cross_connects`` (ports named by the
  neighbour node or by port name, ``atm0`` …); without them, every VC number that the
  ``vcs`` of exactly two of its links list is joined.
* A logical IP subnet (RFC 2225 §5) is the subnet of an ATM host port. Its ATMARP
  server is the host or router with ``atmarp_server = true`` that has an ATM port in
  it, else the first ATM switch (in file order) with ``atmarp_server = true``; with
  neither, hosts resolve their PVCs with InATMARP only (RFC 2225 §8.2).
* LAN emulation (af-lane-0021.000): an ATM link with ``elan`` makes its end system (a
  host, a router, an MPOA server, or an Ethernet edge device — a ``switch`` or
  ``bridge`` node, which joins as a proxy client) an LE client of that ELAN. The LES and
  BUS of an ELAN run on the ``lane-server`` node whose ``elans`` (default: its name)
  list it, on its first ATM port; the LECS on the first ``lane-server`` whose
  ``services`` include ``lecs`` (without one, clients are configured with their LES,
  §5.3.2). LANE ports are no CLIP subnet.
* MPOA (af-mpoa-0087.000): every LANE port of an ``mpoa-server`` (a router) runs an
  MPS; the other clients of those ELANs are MPCs with the server's ``shortcut_frames``
  in ``shortcut_time``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from qoslab.lower.common import _members
from qoslab.plan import models as plan
from qoslab.scenario.model import Atm, AtmSwitch, Bridge, LaneServer, MpoaServer, Switch, VirtualCircuit

if TYPE_CHECKING:
    from qoslab.lower.common import LocatedProblems, Port
    from qoslab.scenario.model import Scenario


def _atm(sc: Scenario, link: int) -> Atm:
    """Link ``link``, the ATM link an ATM port is on."""
    found = sc.link[link]
    assert isinstance(found, Atm), link
    return found


NIC_QUEUE_FRAMES = 64
"""A host NIC's transmit ring, AAL5 frames (an NDIS driver's ring; uncalibrated)."""


def pvc(vc: VirtualCircuit) -> plan.PvcConfig:
    """The plan's ``PvcConfig``: numbers and TM 4.0 traffic contract; a key left out
    takes the plan's default (crates/plan/src/atm.rs, the same as the scenario's)."""
    out: dict[str, int | float | str | None] = {"vpi": vc.vpi, "vci": vc.vci, "service": vc.service, "pcr_bps": vc.pcr}
    for key, sim_key in (
        ("scr", "scr_bps"),
        ("mbs", "mbs_cells"),
        ("mcr", "mcr_bps"),
        ("icr", "icr_bps"),
        ("rif", "rif"),
        ("rdf", "rdf"),
    ):
        if getattr(vc, key) is not None:
            out[sim_key] = getattr(vc, key)
    return plan.PvcConfig.model_validate(out)


def atm_link(link: Atm, name: str, refs: list[plan.PortRef]) -> plan.AtmLink:
    """The plan's ``AtmLinkConfig`` of one [[link]] type = 'atm'."""
    return plan.AtmLink(
        type="atm",
        name=name,
        a=refs[0],
        b=refs[1],
        phy=plan.AtmPhy(link.phy),
        cell_rate_bps=link.rate,
        delay_ns=int(link.delay),
        encapsulation=plan.AtmEncapsulation(link.encapsulation),
        pvcs=[pvc(vc) for vc in link.vcs],
        nic_queue_frames=NIC_QUEUE_FRAMES,
    )


def is_lane_port(sc: Scenario, p: Port) -> bool:
    """Whether port ``p`` is on an ATM link that joins an ELAN (an LE client or server's port)."""
    link = sc.link[p.link]
    return isinstance(link, Atm) and link.elan is not None


def _lane(sc: Scenario, names: list[str], ports: list[list[Port]], out: LocatedProblems) -> plan.LaneConfig:
    """The simulator's ``LaneConfig``: ELANs with their LES/BUS, the LECS, clients, MPOA."""
    elans: list[plan.ElanConfig] = []
    index: dict[str, int] = {}
    lecs = None
    for n, name in enumerate(names):
        node = sc.node[name]
        if not isinstance(node, LaneServer):
            continue
        atm_ports = [p for p in ports[n] if p.kind == "atm"]
        if not atm_ports:
            out.add(
                ("node", name, "role"),
                f"LANE server {name} has no ATM link",
                expected="an [[link]] type = 'atm' to an ATM switch",
                found="none",
            )
            continue
        ref = plan.PortRef(node=n, port=atm_ports[0].index)
        if "lecs" in node.services and lecs is None:
            lecs = ref
        if "les" in node.services or "bus" in node.services:
            for e in node.served_elans(name):
                if e in index:
                    out.add(
                        ("node", name, "elans"),
                        f"ELAN {e!r} is served twice",
                        expected="one LES and BUS per ELAN",
                        found=f"{e!r} also on another lane-server",
                    )
                    continue
                index[e] = len(elans)
                elans.append(
                    plan.ElanConfig(
                        name=e,
                        les=ref,
                        bus=ref,
                        bus_cells_per_second=node.bus_rate,
                        bus_frames_per_second=node.bus_frames,
                        bus_queue_frames=node.bus_queue,
                    )
                )
    clients: list[plan.LecConfig] = []
    mps: list[plan.PortRef] = []
    mpoa_params: tuple[int, int] | None = None
    for li, link in enumerate(sc.link):
        if not isinstance(link, Atm) or link.elan is None:
            continue
        if link.elan not in index:
            served = sorted(index)
            out.add(
                ("link", li, "elan"),
                f"an LE client with no LES: no lane-server runs ELAN {link.elan!r}",
                expected="one of " + ", ".join(repr(e) for e in served)
                if served
                else "a [node.X] role = 'lane-server' whose `elans` list it",
                found=repr(link.elan),
            )
            continue
        for end in link.ends:
            n = names.index(end)
            node = sc.node[end]
            if isinstance(node, (AtmSwitch, LaneServer)):
                continue
            port = next(p for p in ports[n] if p.link == li)
            ref = plan.PortRef(node=n, port=port.index)
            clients.append(plan.LecConfig(port=ref, elan=index[link.elan], proxy=isinstance(node, (Switch, Bridge))))
            if isinstance(node, MpoaServer):
                mps.append(ref)
                mpoa_params = (node.shortcut_frames, int(node.shortcut_time))
    mpoa = None
    if mps and mpoa_params is not None:
        mpoa = plan.MpoaConfig(servers=mps, shortcut_frames=mpoa_params[0], shortcut_time_ns=mpoa_params[1])
    return plan.LaneConfig(elans=elans, lecs=lecs, clients=clients, mpoa=mpoa)


def _switch_port(sc: Scenario, names: list[str], ports: list[list[Port]], n: int, ref: str) -> Port | None:
    """The port of node ``n`` named ``ref``: by port name, or by the node at its link's far end."""
    for p in ports[n]:
        if p.name == ref:
            return p
    for p in ports[n]:
        link = sc.link[p.link]
        if isinstance(link, Atm) and ref in link.ends and ref != names[n]:
            return p
    return None


def atm_config(sc: Scenario, names: list[str], ports: list[list[Port]], out: LocatedProblems) -> plan.AtmConfig:
    """The simulator's ``AtmConfig``: switches with their cross-connects, and the LISs.
    The models are given the keys the plan has always had written (a key left out takes
    the plan's default; the JSON holds only those given)."""
    switches: list[plan.SwitchConfig] = []
    for n, name in enumerate(names):
        node = sc.node[name]
        if not isinstance(node, AtmSwitch):
            continue
        cross = _cross_connects(sc, names, ports, n, node, out)
        switches.append(
            plan.SwitchConfig(
                node=n,
                queue_cells=node.queue,
                epd_threshold_cells=node.epd_threshold,
                ppd=node.ppd,
                signalling_ns=int(node.signalling_delay),
                cross_connects=cross,
                category_queue_cells=plan.CategoryQueues(
                    cbr=node.queues.cbr, vbr=node.queues.vbr, abr=node.queues.abr, ubr=node.queues.ubr
                ),
                abr_ci_threshold_cells=node.abr_ci_threshold,
            )
        )
    lis = _lis(sc, names, ports, out)
    return plan.AtmConfig(switches=switches, lis=lis, host_signalling_ns=0, lane=_lane(sc, names, ports, out))


def _cross_connects(
    sc: Scenario, names: list[str], ports: list[list[Port]], n: int, node: AtmSwitch, out: LocatedProblems
) -> list[plan.CrossConnect]:
    """Switch ``n``'s PVC cross-connects: its ``cross_connects``, else every VC number
    that exactly two of its links carry (rules in the module doc)."""
    name = names[n]
    atm_ports = [p for p in ports[n] if p.kind == "atm"]
    cross: list[plan.CrossConnect] = []
    if node.cross_connects:
        for i, c in enumerate(node.cross_connects):
            ends = []
            for key, ref in (("a", c.a), ("b", c.b)):
                p = _switch_port(sc, names, ports, n, ref)
                if p is None or p.kind != "atm":
                    choices = [q.name for q in atm_ports] + [
                        e for q in atm_ports for e in _members(sc.link[q.link]) if e != name
                    ]
                    out.add(
                        ("node", name, "cross_connects", i, key),
                        f"switch {name} has no ATM port {ref!r}",
                        expected="one of " + ", ".join(repr(x) for x in choices)
                        if choices
                        else "an ATM link to the switch",
                        found=repr(ref),
                    )
                ends.append(p)
            a, b = ends
            if a is None or b is None:
                continue
            cross.append(
                plan.CrossConnect(
                    a=plan.VcEnd(port=a.index, vpi=c.vpi, vci=c.vci),
                    b=plan.VcEnd(
                        port=b.index,
                        vpi=c.b_vpi if c.b_vpi is not None else c.vpi,
                        vci=c.b_vci if c.b_vci is not None else c.vci,
                    ),
                )
            )
    else:
        carriers: dict[tuple[int, int], list[Port]] = {}
        for p in atm_ports:
            for vc in _atm(sc, p.link).vcs:
                carriers.setdefault((vc.vpi, vc.vci), []).append(p)
        for (vpi, vci), ps in carriers.items():
            if len(ps) == 2:
                cross.append(
                    plan.CrossConnect(
                        a=plan.VcEnd(port=ps[0].index, vpi=vpi, vci=vci),
                        b=plan.VcEnd(port=ps[1].index, vpi=vpi, vci=vci),
                    )
                )
            elif len(ps) > 2:
                out.add(
                    ("node", name, "role"),
                    f"PVC {vpi}/{vci} is on {len(ps)} links of switch {name}: which two does it join?",
                    expected="cross_connects = [{ a = ..., b = ..., vci = ... }] on the switch",
                    found=", ".join(p.name for p in ps),
                )
    return cross


def _lis(sc: Scenario, names: list[str], ports: list[list[Port]], out: LocatedProblems) -> list[plan.LisConfig]:
    """The logical IP subnets of the ATM hosts and their ATMARP servers; a PVC-less port
    whose subnet has no server is refused (it reaches no one)."""
    lis: list[plan.LisConfig] = []
    seen: set[Any] = set()
    switch_server = next(
        (names.index(s) for s, nd in sc.node.items() if isinstance(nd, AtmSwitch) and nd.atmarp_server), None
    )
    for n in range(len(names)):
        for p in ports[n]:
            if p.kind != "atm" or p.address is None or p.address.network in seen or is_lane_port(sc, p):
                continue
            subnet = p.address.network
            seen.add(subnet)
            server = None
            for m, other in enumerate(names):
                if getattr(sc.node[other], "atmarp_server", False) and not isinstance(sc.node[other], AtmSwitch):
                    if any(q.kind == "atm" and q.address is not None and q.address.network == subnet for q in ports[m]):
                        server = m
                        break
            if server is None:
                server = switch_server
            if server is not None:
                lis.append(plan.LisConfig(network=subnet.network_address, prefix_len=subnet.prefixlen, server=server))
    served = {f"{entry.network}/{entry.prefix_len}" for entry in lis}
    for n, name in enumerate(names):
        for p in ports[n]:
            if (
                p.kind == "atm"
                and p.address is not None
                and not _atm(sc, p.link).vcs
                and str(p.address.network) not in served
                and not is_lane_port(sc, p)
            ):
                out.add(
                    ("link", p.link, "vcs"),
                    f"{name}'s ATM port has no PVC and its LIS {p.address.network} no ATMARP server: it can reach no one",
                    expected="vcs = [{ vci = ... }] on the link, or atmarp_server = true on an ATM switch or a host of the LIS",
                    found="no vcs, no ATMARP server",
                )
    return lis


__all__ = ["atm_link", "atm_config", "is_lane_port", "NIC_QUEUE_FRAMES"]
