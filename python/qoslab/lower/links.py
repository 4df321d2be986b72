"""Links: impairments of each direction, queues, and 802.11 cells (members in AP-first
order, ``hears``, error rates, beacons), each built as the plan's typed model
(:mod:`qoslab.plan.models`).
"""

from __future__ import annotations

from typing import Any

from qoslab.lower.common import ETHERNET_OVERHEAD, RTS_NEVER, TX_QUEUE_FRAMES, _members
from qoslab.plan import models as plan
from qoslab.scenario.model import WIFI_RATES_MBPS, Ethernet, GilbertElliott, Scenario, Wifi


def _directions(direction: str) -> list[int]:
    """The link directions a loss or shaper applies to: 0 is ends[0] → ends[1]."""
    return {"both": [0, 1], "forward": [0], "reverse": [1]}[direction]


NO_IMPAIRMENT = plan.Impairment(loss=None, shaper=None)
"""A direction with no loss model and no shaper: most links' both directions, one object
shared by them all (a plan's tables are read, never changed; a 2,000-host switch made
4,000 alike)."""


def _impairments(link: Any) -> list[plan.Impairment]:
    """Each direction's loss model and shaper (``[a → b, b → a]``)."""
    if not link.loss and not link.shaper:
        return [NO_IMPAIRMENT, NO_IMPAIRMENT]
    losses: list[plan.LossConfig | None] = [None, None]
    shapers: list[plan.ShaperConfig | None] = [None, None]
    for model in link.loss:
        loss: plan.BernoulliLoss | plan.GilbertElliottLoss
        if isinstance(model, GilbertElliott):
            loss = plan.GilbertElliottLoss(
                model="gilbert-elliott", p=model.p, r=model.r, k=1.0 - model.loss_good, h=1.0 - model.loss_bad
            )
        else:
            loss = plan.BernoulliLoss(model="bernoulli", p=model.rate)
        for d in _directions(model.direction):
            losses[d] = plan.LossConfig(loss)
    for shaper in link.shaper:
        for d in _directions(shaper.direction):
            shapers[d] = plan.ShaperConfig(
                rate_bps=shaper.rate,
                burst_bytes=int(shaper.burst),
                police=shaper.action == "police",
                queue_bytes=None if shaper.queue is None else int(shaper.queue),
            )
    return [plan.Impairment(loss=losses[d], shaper=shapers[d]) for d in (0, 1)]


BEACON_RATE_BPS = 1_000_000
"""Beacons at the lowest basic rate, 1 Mb/s, the mandatory rate every 802.11b/g station decodes (IEEE 802.11-2020 §16.1.1)."""

DEFAULT_SSID = "linksys"
"""SSID of an AP whose node gives none: the Linksys WRT54G's factory SSID (seed 000's AP is a Linksys Wireless-G router)."""

AP_TX_QUEUE_FRAMES = 100
"""Transmit queue of an access point's 802.11 interface, frames: Linux 2.4's ether_setup() set
tx_queue_len = 100 ("Ethernet wants good queues", drivers/net/net_init.c), and 2004 APs such as the
Linksys WRT54G (Linux 2.4.20, Broadcom wl registered as an Ethernet device) kept it. Stations keep
TX_QUEUE_FRAMES."""

WIFI_SLOT_NS = {"long": 20_000, "short": 9_000}
"""aSlotTime: 20 us for DSSS/HR-DSSS and mixed ERP cells (IEEE 802.11-2020 Table 15-5/16-4), 9 us for ERP-only (Table 18-5)."""


def _link_index(sc: Scenario, ref: str) -> int:
    return next(j for j in range(len(sc.link)) if sc.link[j].name == ref or ref == f"link[{j}]")


def _queue(link: Ethernet) -> tuple[int, int]:
    """(frames, bytes) of each end's queue: the scenario's limit, the other one never binding."""
    largest = link.mtu + ETHERNET_OVERHEAD + 4  # with an 802.1Q tag
    if link.queue is None:
        return TX_QUEUE_FRAMES, TX_QUEUE_FRAMES * largest
    if link.queue.frames is not None:
        return link.queue.frames, link.queue.frames * largest
    nbytes = int(link.queue.bytes or 0)
    return max(1, nbytes // 64), nbytes  # 64 bytes: the shortest Ethernet frame


def _wifi(sc: Scenario, link: Wifi, name: str, refs: list[plan.PortRef]) -> plan.WifiLink:
    members = _members(link)
    rate = link.rate if link.rate is not None else int(max(WIFI_RATES_MBPS[link.standard]) * 1_000_000)
    hears = None
    if link.hears is not None:
        hears = [
            [i == j or link.hears.get(a) is None or b in link.hears[a] for j, b in enumerate(members)]
            for i, a in enumerate(members)
        ]
    has_ap = link.ap is not None
    # 4-address frames between the AP and a station need both WDS-capable (checked in _check_wds).
    wds_members = [has_ap and _wds_capable(sc, link, m) for m in members]
    wds = any(wds_members)
    if isinstance(link.queue, int):
        queues = [link.queue] * len(members)
    else:
        given = link.queue or {}
        queues = [
            given.get(m, AP_TX_QUEUE_FRAMES if has_ap and i == 0 else TX_QUEUE_FRAMES) for i, m in enumerate(members)
        ]
    beacon = None
    if link.ap is not None and link.beacons:
        beacon = plan.BeaconConfig(
            interval_ns=link.beacon_interval,
            rate_bps=link.beacon_rate or BEACON_RATE_BPS,
            ssid=getattr(sc.node[link.ap], "ssid", None) or DEFAULT_SSID,
        )
    return plan.WifiLink(
        type="wifi",
        name=name,
        # The simulator's mixed 802.11g cell: ERP protection, long slot, CWmin 31.
        standard=plan.WifiStandard("802.11g-mixed" if link.erp_protection else link.standard),
        rate_bps=rate,
        preamble=plan.Preamble(link.preamble),
        security=plan.WifiSecurity(link.security),
        ap=refs[0] if has_ap else None,
        stations=refs[1:] if has_ap else refs,
        rts_threshold=int(link.rts_threshold) if link.rts_threshold is not None else RTS_NEVER,
        hears=hears,
        frame_error_rate=[float(link.frame_error_rate.get(m, 0.0)) for m in members],
        wds=wds,
        wds_members=wds_members,
        relay=not (link.ap is not None and getattr(sc.node[link.ap], "isolate_stations", False)),
        foreign_source=plan.ForeignSource.drop,
        queue_frames=TX_QUEUE_FRAMES,
        member_queue_frames=[plan.MemberQueueFrame(q) for q in queues],
        retry_limit=link.retry_limit,
        link_acks=link.link_acks,
        delay_ns=link.delay,
        access=plan.Access(link.access),
        control_preamble=plan.ControlPreamble(link.control_preamble),
        member_preamble=[plan.Preamble(link.preambles.get(m, link.preamble)) for m in members]
        if link.preambles
        else [],
        channel=link.channel,
        beacon=beacon,
    )


def _wds_capable(sc: Scenario, link: Wifi, member: str) -> bool:
    """Whether `member` exchanges 4-address frames on `link`: the link's `wds` makes every
    member capable; otherwise the node's own `wds` (an AP or a bridge) says."""
    return link.wds or bool(getattr(sc.node[member], "wds", False))
