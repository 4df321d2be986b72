"""What the simulator cannot run, refused with the key that asks for it: the checks
the scenario alone cannot make (802.11 WDS, delays, unsupported features).
"""

from __future__ import annotations

from typing import Any

from qoslab.lower.common import _NOT_YET, LocatedProblems, PathT, _members
from qoslab.lower.ipsec import IPSEC_CIPHERS
from qoslab.lower.links import WIFI_SLOT_NS, _directions, _wds_capable
from qoslab.lower.pptp import _check_pptp
from qoslab.lower.vpn import _check_vpn
from qoslab.scenario.model import AccessPoint, Atm, Bridge, Ethernet, Ipsec, OpenVpn, Pppoe, Pptp, Scenario, Wifi


def _wifi_max_delay_ns(link: Wifi) -> int:
    """Longest propagation delay a wifi link accepts: half a slot, so that the Ack's round trip still
    starts within ACKTimeout (SIFS + aSlotTime + aRxPHYStartDelay)."""
    short_slot = link.standard == "802.11g" and not link.erp_protection
    return WIFI_SLOT_NS["short" if short_slot else "long"] // 2


def _check_wds(sc: Scenario, base: PathT, link: Wifi, out: LocatedProblems) -> None:
    """A 4-address link needs both ends WDS-capable (IEEE 802.11-2020 Table 9-26, To DS = From DS = 1):
    refuse a `wds` that no peer on this BSS could use, rather than let it silently do nothing."""
    if link.wds:
        if link.ap is None:
            out.add(
                base + ("wds",),
                "4-address (WDS) frames need an access point: an ad hoc cell sends case-00 frames only",
                expected="wds = false in mode = 'adhoc'",
                found="wds = true",
            )
        return
    members = _members(link)
    if link.ap is None:
        for m in members:
            if getattr(sc.node[m], "wds", False):
                out.add(
                    ("node", m, "wds"),
                    f"node {m!r} is WDS-capable but {link.name or 'its wifi link'} is an ad hoc cell, which has no 4-address frames",
                    expected="wds = false",
                    found="wds = true",
                )
        return
    ap_wds = _wds_capable(sc, link, link.ap)
    station_wds = [m for m in link.stations if _wds_capable(sc, link, m)]
    if ap_wds and not station_wds:
        out.add(
            ("node", link.ap, "wds"),
            f"access point {link.ap!r} accepts 4-address frames but none of its stations sends them: the setting would do nothing",
            expected="wds = true on a station (a bridge or repeater) too, or on the link",
            found="wds = true on the AP only",
            hint="4-address frames need WDS at both ends (IEEE 802.11-2020 Table 9-26)",
        )
    if station_wds and not ap_wds:
        for m in station_wds:
            out.add(
                ("node", m, "wds"),
                f"station {m!r} sends 4-address frames but access point {link.ap!r} does not accept them",
                expected=f"wds = true on node {link.ap!r} too, or on the link",
                found=f"wds = true on {m!r} only",
                hint="4-address frames need WDS at both ends (IEEE 802.11-2020 Table 9-26)",
            )


def _refuse_unsupported(sc: Scenario, out: LocatedProblems) -> None:
    """What the simulator cannot run, each refused at the key that asks for it."""
    for name, node in sc.node.items():
        if isinstance(node, AccessPoint) and node.role == "ap" and node.routes:
            out.add(
                ("node", name, "routes"),
                "a plain access point is a bridge: it forwards frames, not IP packets, so routes would route nothing",
                expected="no routes on role = 'ap'",
                found=f"{len(node.routes)} route(s)",
                hint="use role = 'ap-router' (a SOHO router with an AP) to route",
            )
    for i, link in enumerate(sc.link):
        _refuse_link(sc, i, link, out)
    for i, tunnel in enumerate(sc.tunnel):
        _refuse_tunnel(sc, i, tunnel, out)
    for name, node in sc.node.items():
        if isinstance(node, Bridge) and node.promiscuous and node.forwarding != "l2":
            out.add(
                ("node", name, "promiscuous"),
                f"promiscuous adapters on an {node.forwarding.upper()} station (seed 000 Fig. 10 measured an L2 bridge): "
                f"{_NOT_YET}",
                expected="forwarding = 'l2', or promiscuous = false",
                found=f"forwarding = {node.forwarding!r}",
            )


def _refuse_link(sc: Scenario, i: int, link: Any, out: LocatedProblems) -> None:
    """Link ``i``: impairments the simulator does not put on it, half duplex, 802.11 limits."""
    base: PathT = ("link", i)
    if isinstance(link, Atm):
        if link.loss:
            out.add(
                base + ("loss",),
                f"loss on an ATM link: {_NOT_YET}",
                expected="no loss (cells are lost in switch queues)",
                found=f"{len(link.loss)} loss model(s)",
            )
        if link.shaper:
            out.add(
                base + ("shaper",),
                "a shaper on an ATM link",
                expected="a peak cell rate on the VC: vcs = [{ vci = ..., pcr = '...' }]",
                found=f"{len(link.shaper)} shaper(s)",
            )
        return
    if isinstance(link, Wifi) and link.loss:
        out.add(
            base + ("loss",),
            "loss on a wifi cell",
            expected="frame_error_rate per station",
            found=f"{len(link.loss)} loss model(s)",
        )
    if isinstance(link, Wifi) and link.shaper:
        out.add(
            base + ("shaper",),
            "a shaper on a wifi cell",
            expected="a shaper on an Ethernet or serial link",
            found=f"{len(link.shaper)} shaper(s)",
        )
    directions = [d for model in list(link.loss) for d in _directions(model.direction)]
    if len(directions) != len(set(directions)):
        out.add(
            base + ("loss",),
            "two loss models on one direction",
            expected="one loss model per direction",
            found=f"{len(link.loss)} loss models",
        )
    directions = [d for shaper in link.shaper for d in _directions(shaper.direction)]
    if len(directions) != len(set(directions)):
        out.add(
            base + ("shaper",),
            "two shapers on one direction",
            expected="one shaper per direction",
            found=f"{len(link.shaper)} shapers",
        )
    if isinstance(link, Ethernet) and link.duplex == "half":
        out.add(base + ("duplex",), f"half-duplex Ethernet: {_NOT_YET}", expected="'full'", found="'half'")
    if isinstance(link, Wifi):
        _refuse_wifi(sc, base, link, out)


def _refuse_wifi(sc: Scenario, base: PathT, link: Wifi, out: LocatedProblems) -> None:
    """An 802.11 cell: its delay within half a slot, WDS, per-member keys naming members, retries."""
    most = _wifi_max_delay_ns(link)
    if link.delay > most:
        out.add(
            base + ("delay",),
            "a propagation delay longer than half a slot: the Ack would start after the sender's ACKTimeout "
            "(SIFS + aSlotTime + aRxPHYStartDelay, IEEE 802.11-2020 §10.3.2.9), which the simulator's MAC does not model",
            expected=f"at most {most / 1000:g} us on this {link.standard} cell",
            found=f"{link.delay / 1000:g} us",
        )
    _check_wds(sc, base, link, out)
    for member in link.preambles:
        if member not in _members(link):
            out.add(
                base + ("preambles", member),
                "a preamble for a node that is not a member of this BSS",
                expected="the ap or one of the stations: " + ", ".join(_members(link)),
                found=repr(member),
            )
    for member in (link.queue or {}) if isinstance(link.queue, dict) else ():
        if member not in _members(link):
            out.add(
                base + ("queue", member),
                "a queue for a node that is not a member of this BSS",
                expected="the ap or one of the stations: " + ", ".join(_members(link)),
                found=repr(member),
            )
    if link.retry_limit < 1:
        out.add(
            base + ("retry_limit",),
            "a frame is sent at least once",
            expected="1 (send once, no retry) or more",
            found=str(link.retry_limit),
        )


def _refuse_tunnel(sc: Scenario, i: int, _t: Any, out: LocatedProblems) -> None:
    """Tunnel ``i``: the families the simulator runs, and IPsec's combinations."""
    base = ("tunnel", i)
    if isinstance(_t, (OpenVpn, Pppoe)):
        _check_vpn(sc, i, _t, out)
        return
    if isinstance(_t, Pptp):
        _check_pptp(sc, i, _t, out)
        return
    if not isinstance(_t, Ipsec):
        out.add(
            base + ("type",),
            f"{_t.type} tunnels in a simulation: {_NOT_YET}",
            expected="'ipsec', 'openvpn', 'pppoe' or 'pptp' for `qoslab run`",
            found=repr(_t.type),
            hint="`qoslab mtu` analyses tunnel stacks",
        )
        return
    if _t.protocol == "ah" and _t.auth == "none":
        out.add(
            base + ("auth",),
            "AH always carries an ICV (RFC 4302 §3.2)",
            expected="'hmac-md5-96', 'hmac-sha1-96' or 'hmac-sha256-128'",
            found="'none'",
        )
    if _t.selector is not None and _t.mode == "tunnel":
        out.add(
            base + ("selector",),
            f"a selector on a tunnel-mode tunnel: {_NOT_YET} (routes pick a tunnel-mode tunnel by destination)",
            expected="mode = 'transport' with a selector, or no selector",
            found="a selector with mode = 'tunnel'",
        )
    if _t.over is not None:
        out.add(
            base + ("over",),
            f"an IPsec tunnel over a named link or tunnel: {_NOT_YET}",
            expected="no `over`: the tunnel follows the routed path between its ends",
            found=repr(_t.over),
        )
    if _t.cipher not in IPSEC_CIPHERS:
        out.add(
            base + ("cipher",),
            f"{_t.cipher} in a simulation: {_NOT_YET}",
            expected=" or ".join(repr(c) for c in IPSEC_CIPHERS),
            found=repr(_t.cipher),
        )
    elif _t.cipher.endswith("-gcm") and _t.auth != "none":
        out.add(
            base + ("auth",),
            "AES-GCM carries its own 16-byte ICV (RFC 4106 §6): no separate HMAC",
            expected="'none' with a GCM cipher",
            found=repr(_t.auth),
        )
