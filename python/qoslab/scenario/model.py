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
"""

from __future__ import annotations

import re
from ipaddress import IPv4Address, IPv4Interface, IPv4Network
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    WithJsonSchema,
    model_validator,
)

from qoslab.units import Rate, Ratio, Size, Time, UnitError, format_rate


class FieldProblem(ValueError):
    """A problem found by a table's own check, located at one of its keys.

    Model validators see the whole table, so pydantic locates their errors at the
    table; the loader appends ``key`` to point at the offending key instead.
    """

    def __init__(
        self, key: str, message: str, *, expected: str | None = None, found: str | None = None, hint: str | None = None
    ):
        super().__init__(message)
        self.key, self.message, self.expected, self.found, self.hint = key, message, expected, found, hint


MAX_IPV4_DATA_AFTER_8 = 65_535 - 20 - 8
"""The most data bytes a UDP datagram or an ICMP echo carries in one IPv4 datagram:
65,535 bytes in all (RFC 791 §3.1, a 16-bit Total Length), less the 20-byte IPv4
header and the 8-byte UDP (RFC 768) or echo (RFC 792) header. Linux's ``ping -s``
and UDP sockets stop there too."""


def _ip_payload_fits(payload: int, what: str) -> None:
    """Refuses a payload no IPv4 datagram can carry (it would wrap the length fields)."""
    if payload > MAX_IPV4_DATA_AFTER_8:
        raise FieldProblem(
            "payload",
            f"{what} of {payload:,} bytes does not fit in one IPv4 datagram (RFC 791 §3.1: 65,535 bytes with the 20-byte IPv4 and 8-byte {what.split()[0]} headers)",
            expected=f"at most {MAX_IPV4_DATA_AFTER_8:,} bytes",
            found=f"{payload:,}",
        )


U16_MAX = 2**16 - 1
"""Fields the simulator keeps in 16 bits (crates/sim/src/config.rs: an MSS, OpenVPN's
--fragment size)."""
U32_MAX = 2**32 - 1
"""Fields the simulator keeps in 32 bits (socket buffers and windows, segment counts,
the RTS threshold)."""

NODE_NAME_PATTERN = r"^[A-Za-z][A-Za-z0-9_.-]*$"
NodeName = Annotated[
    str,
    Field(
        pattern=NODE_NAME_PATTERN,
        description="A node's name: a key of the [node.*] tables.",
    ),
]


def _as_list(value: Any) -> Any:
    """Accept one item where a list is expected (``address = "10.0.0.1/24"``)."""
    return [value] if value is not None and not isinstance(value, list) else value


class Strict(BaseModel):
    """Base of every table: unknown keys are errors, defaults are validated."""

    # strict: TOML is typed, so "1500" (a string) is not the integer 1500. Fields that
    # are parsed from text (units, IP addresses) say strict=False or parse first.
    model_config = ConfigDict(extra="forbid", populate_by_name=True, validate_default=True, strict=True)


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


# --------------------------------------------------------------------------- nodes


def _addresses_as_text(value: Any) -> Any:
    """One address or a list, each written as text: pydantic would read the integer 1
    as 0.0.0.1/32, which nobody means."""
    value = _as_list(value)
    for item in value if isinstance(value, list) else []:
        if not isinstance(item, str):
            raise UnitError(
                "an address is written as text",
                expected="an IPv4 address with its prefix length, e.g. '192.168.1.100/24'",
                found=repr(item),
            )
    return value


def _prefix_as_text(value: Any) -> Any:
    if not isinstance(value, str):
        raise UnitError(
            "a prefix is written as text", expected="an IPv4 prefix, e.g. '192.168.0.0/24'", found=repr(value)
        )
    return value


def _address_as_text(value: Any) -> Any:
    if value is not None and not isinstance(value, str):
        raise UnitError(
            "an address is written as text", expected="an IPv4 address, e.g. '192.168.1.1'", found=repr(value)
        )
    return value


class Route(Strict):
    """A static route: packets to ``to`` are sent to the next hop ``via``."""

    to: Annotated[IPv4Network, Field(strict=False), BeforeValidator(_prefix_as_text)] = Field(
        description="Destination prefix, e.g. '192.168.0.0/24' ('0.0.0.0/0' for a default route)."
    )
    via: Annotated[IPv4Address, Field(strict=False), BeforeValidator(_address_as_text)] = Field(
        description="Next-hop address; it must lie in one of the node's subnets."
    )
    metric: int = Field(1, ge=0, description="Route preference; the lowest metric wins among equal prefixes.")


class PortForward(Strict):
    """A NAT port forward: connections to ``port`` on the outside go to ``to`` inside."""

    proto: Literal["tcp", "udp"] = Field("tcp", description="Transport protocol.")
    port: int = Field(ge=1, le=65535, description="Port on the NAT's outside address.")
    to: str = Field(
        pattern=r"^\d+\.\d+\.\d+\.\d+(:\d+)?$",
        description="Inside address, optionally with a port: '192.168.0.2' or '192.168.0.2:8080'.",
    )


class NodeBase(Strict):
    """Fields every node has."""

    address: Annotated[list[Annotated[IPv4Interface, Field(strict=False)]], BeforeValidator(_addresses_as_text)] = (
        Field(
            default_factory=list,
            description="IPv4 address(es) with prefix length, one per interface that has one: '192.168.1.100/24' or a list.",
        )
    )
    gateway: Annotated[Annotated[IPv4Address, Field(strict=False)] | None, BeforeValidator(_address_as_text)] = Field(
        None, description="Default gateway; it must lie in one of the node's subnets."
    )
    routes: list[Route] = Field(default_factory=list, description="Static routes, tried before the default gateway.")
    cpu: str | None = Field(
        None,
        description="CPU profile (per-packet and per-byte costs), e.g. 'pentium-m-1.6ghz'; none = an infinitely fast CPU.",
    )
    frag_needed: Literal["mtu", "zero-mtu", "silent"] = Field(
        "mtu",
        description=(
            "What the node answers when it cannot forward a DF packet for its size: 'mtu' = ICMP "
            "'fragmentation needed' with the next-hop MTU (RFC 1191 §4, the default); 'zero-mtu' = the same "
            "without the MTU, as pre-RFC 1191 routers (the host falls back on RFC 1191 §7's plateaus); "
            "'silent' = nothing, a PMTU black hole (RFC 2923 §2.1)."
        ),
    )
    block_icmp_unreachable: bool = Field(
        False,
        description="Drop every ICMP Destination Unreachable passing through or arriving, as an 'all ICMP' firewall does (another PMTU black hole).",
    )


class Host(NodeBase):
    """An end system: sends and receives test traffic, does not forward."""

    role: Literal["host"] = Field(description="Node kind.")
    socket_buffer: Size | None = Field(
        None,
        le=U32_MAX,
        description="TCP send and receive socket buffer, e.g. '64 KiB' (seed 001); a test's `window` overrides it; none = the stack's default.",
    )
    atmarp_server: bool = Field(
        False, description="Serve ATMARP (RFC 2225 §8.4) for the logical IP subnet of this host's ATM port."
    )


class AdaptiveUpstream(Strict):
    """Seed 004's adaptive router: upstream datagrams to a peer router go over a radio
    with link acknowledgements (retries with a capped backoff), or over a modem when the
    radio's delivery ratio falls, with hysteresis (crates/sim/src/node/adaptive_router/mod.rs).

    Seed 004: "the router now has the capacity to adaptively decide whether to send
    packets from home to school using the radio transmitter or the modem, based on the
    percentage of packets sent using the transmitter that are successfully received at
    the campus end"; its acknowledgements mechanism "moderated the maximum backoff time
    so that it never exceed a tenth of a second".
    """

    radio: str = Field(
        description="The wifi link (its `name` or 'link[N]') both routers are on: the radio upstream, with link acks."
    )
    modem: str = Field(
        description="The serial link (its `name` or 'link[N]') from this router to the peer: the fallback upstream."
    )
    initial_timeout: Time = Field(
        "20 ms",
        description=(
            "Link-ack timeout after a first transmission; it doubles per retry up to `max_timeout`. Seed 004 gives "
            "none. 20 ms is twice the worst clean-channel wait of seed 004's 2 Mb/s radio: a 84-byte upstream frame "
            "(0.9 ms with DIFS and up to 31 slots of backoff, 1.5 ms), the ack queued behind the 1536-byte downstream "
            "MPDU on the air at the peer (6.65 ms + 0.67 ms of access) and its own 44-byte exchange (1.35 ms): 10.2 ms."
        ),
    )
    max_timeout: Time = Field(
        "100 ms", description="Cap on the backoff: seed 004's 'never exceed a tenth of a second'."
    )
    max_attempts: int = Field(
        7,
        ge=1,
        le=255,
        description="Transmissions of one frame before it is given up; seed 004 is silent, 7 is 802.11's dot11ShortRetryLimit.",
    )
    window: int = Field(
        100,
        ge=1,
        description="Attempts the delivery ratio is measured over (a sliding window; one outcome = one percentage point). Seed 004 gives none.",
    )
    min_samples: int = Field(50, ge=1, description="Attempts needed before the ratio is trusted (half the window).")
    low: Ratio = Field(
        0.90,
        description="Leave the radio when its ratio falls below this: seed 004, 'once packet losses approach 10%' TCP 'effectively shuts down'.",
    )
    high: Ratio = Field(
        0.97,
        description="Return to the radio when its ratio rises above this (seed 004 gives none; a 7-point band, over twice the ratio's standard deviation at 90 % with a 100-attempt window).",
    )
    probe_interval: Time = Field(
        "50 ms",
        description="While on the modem, a probe frame over the radio this often keeps its ratio measured (seed 004 is silent; < 1 % of 2 Mb/s).",
    )
    sample_interval: Time = Field(
        "100 ms", description="Shortest time between two samples of the ratios in the results."
    )

    @model_validator(mode="after")
    def _band(self) -> AdaptiveUpstream:
        if self.low > self.high:
            raise FieldProblem(
                "high",
                "the return threshold is below the leave threshold",
                expected=f"high >= low ({self.low:g})",
                found=f"{self.high:g}",
            )
        if self.min_samples > self.window:
            raise FieldProblem(
                "min_samples",
                "more samples needed than the window holds",
                expected=f"at most window ({self.window})",
                found=str(self.min_samples),
            )
        if self.initial_timeout <= 0 or self.max_timeout < self.initial_timeout:
            raise FieldProblem(
                "max_timeout",
                "the backoff cap is below the first timeout",
                expected="0 < initial_timeout <= max_timeout",
                found=f"{self.initial_timeout} ns, {self.max_timeout} ns",
            )
        if self.probe_interval <= 0:
            raise FieldProblem(
                "probe_interval", "probes need a positive interval", expected="a time above 0", found="0 s"
            )
        return self


class Router(NodeBase):
    """An IP router: forwards between its interfaces by its routes."""

    role: Literal["router"] = Field(description="Node kind.")
    atmarp_server: bool = Field(
        False, description="Serve ATMARP (RFC 2225 §8.4) for the logical IP subnets of this router's ATM ports."
    )
    adaptive: AdaptiveUpstream | None = Field(
        None,
        description="Seed 004's adaptive upstream to the router at the other end of `modem`: radio with link acks, or modem.",
    )


class Bridge(NodeBase):
    """A station that joins two segments (seed 000): a Windows XP network bridge or ICS."""

    role: Literal["bridge"] = Field(description="Node kind.")
    forwarding: Literal["l2", "l3f", "nat"] = Field(
        "l2",
        description=(
            "How frames cross: 'l2' = IEEE 802.1D learning bridge (fails across a station adapter, "
            "seed 000 §2.1, Fig. 5); 'l3f' = forwarding on IP addresses with proxy ARP, one subnet on "
            "both sides (seed 000 §2.2, Fig. 6); 'nat' = an IP router with address translation, "
            "Windows ICS (seed 000 §2.3, Fig. 7)."
        ),
    )
    port_forwards: list[PortForward] = Field(
        default_factory=list, description="Port forwards; only with forwarding = 'nat'."
    )
    wds: bool = Field(
        False,
        description="The wireless adapter sends 4-address (WDS, ToDS+FromDS) frames, as a repeater does; station adapters do "
        "not. Needs an AP with `wds` (or the link's `wds`): refused otherwise.",
    )
    promiscuous: bool = Field(
        False, description="Adapters receive every frame, not only those addressed to them (seed 000 Fig. 10)."
    )

    @model_validator(mode="after")
    def _port_forwards_need_nat(self) -> Bridge:
        if self.port_forwards and self.forwarding != "nat":
            raise FieldProblem(
                "port_forwards",
                "port forwards need forwarding = 'nat'",
                expected="forwarding = 'nat'",
                found=f"forwarding = {self.forwarding!r}",
            )
        return self


class AccessPoint(NodeBase):
    """An 802.11 access point ('ap'), or a SOHO router with NAT, a switch and an AP ('ap-router')."""

    role: Literal["ap", "ap-router"] = Field(description="Node kind.")
    ssid: str | None = Field(
        None,
        max_length=32,
        description="Network name, carried by the beacons; none = 'linksys' (the Linksys WRT54G's factory SSID).",
    )
    wds: bool = Field(
        False,
        description="Exchange 4-address (WDS) frames with the stations of its BSS that are WDS-capable too (a bridge with "
        "`wds`, or all with the link's `wds`): IEEE 802.11-2020 Table 9-26, To DS = From DS = 1. Refused when no station could.",
    )
    isolate_stations: bool = Field(
        False,
        description="Client isolation (hostapd `ap_isolate=1`): the AP does not relay frames between its own stations. "
        "Default: it relays them, as the distribution function does (IEEE 802.11-2020 §4.5.4.2, §11.3).",
    )
    nat: bool = Field(False, description="For 'ap-router': translate addresses towards the WAN port.")
    port_forwards: list[PortForward] = Field(
        default_factory=list, description="Port forwards on the WAN side (needs nat = true)."
    )


class Switch(NodeBase):
    """An Ethernet switch (802.1D learning, store and forward)."""

    role: Literal["switch"] = Field(description="Node kind.")


class CrossConnect(Strict):
    """A PVC cross-connect of an ATM switch: cells on `a` VPI/VCI leave on `b` and back."""

    a: str = Field(
        description="A port of the switch: the neighbour node its link leads to ('ws1'), or the port's name ('atm0')."
    )
    b: str = Field(description="The other port, named the same way.")
    vpi: int = Field(0, ge=0, le=255, description="VPI on `a` (UNI: 0-255).")
    vci: int = Field(ge=32, le=65535, description="VCI on `a`; 0-31 are reserved (ITU-T I.361 Table 2).")
    b_vpi: int | None = Field(None, ge=0, le=255, description="VPI on `b`; none = `vpi`.")
    b_vci: int | None = Field(None, ge=32, le=65535, description="VCI on `b`; none = `vci`.")


class CategoryQueues(Strict):
    """Cells each service-category queue of an ATM switch output port holds; none = the switch's `queue`."""

    cbr: int | None = Field(None, ge=1, description="CBR and rt-VBR (one queue, served first), cells.")
    vbr: int | None = Field(None, ge=1, description="Non-real-time VBR, cells.")
    abr: int | None = Field(None, ge=1, description="ABR, cells.")
    ubr: int | None = Field(None, ge=1, description="UBR (served last), cells.")


class AtmSwitch(NodeBase):
    """An ATM switch: relays cells on VCs between its ports."""

    role: Literal["atm-switch"] = Field(description="Node kind.")
    queue: int = Field(
        1024,
        ge=1,
        description="Cells each output port buffers (drop-tail); 1024 is of the order of 1998 workgroup switches' per-port buffers (uncalibrated).",
    )
    epd_threshold: int | None = Field(
        None,
        ge=1,
        description="Early packet discard: drop a whole AAL5 frame whose first cell finds this many cells queued (Romanow & Floyd 1995); none = off.",
    )
    ppd: bool = Field(
        False,
        description="Partial packet discard: after a cell loss, drop the rest of that frame but its last cell (Romanow & Floyd 1995).",
    )
    queues: CategoryQueues = Field(
        default_factory=CategoryQueues,
        description="Per-service-category cell limits of each output port (strict priority: CBR/rt-VBR, nrt-VBR, ABR, UBR); EPD acts per queue.",
    )
    abr_ci_threshold: int = Field(
        256,
        ge=1,
        description="ABR binary feedback (TM 4.0 §5.10.6, relative-rate marking): RM cells get CI = 1 while the port's ABR queue holds at least "
        "this many cells; 256 = a quarter of the default buffer (uncalibrated).",
    )
    signalling_delay: Time = Field(
        "1 ms", description="Call processing per UNI signalling message (SETUP, CONNECT), per switch; uncalibrated."
    )
    atmarp_server: bool = Field(
        False, description="Serve ATMARP (RFC 2225 §8.4) for the logical IP subnets of the hosts on this ATM network."
    )
    cross_connects: list[CrossConnect] = Field(
        default_factory=list,
        description="PVC cross-connects; none = join each PVC number that the `vcs` of exactly two of the switch's links list.",
    )


class LaneServer(NodeBase):
    """LAN Emulation services (ATM Forum LANE v1): configuration, LE server, broadcast and unknown server."""

    role: Literal["lane-server"] = Field(description="Node kind.")
    services: list[Literal["lecs", "les", "bus"]] = Field(
        default_factory=lambda: ["lecs", "les", "bus"], description="Which LANE services this node runs."
    )
    elans: list[str] = Field(
        default_factory=list,
        description="The emulated LANs whose LES and BUS this node runs (an ATM link's `elan` names one); none = one ELAN named after the node.",
    )
    bus_rate: int = Field(
        53_000,
        ge=1,
        description="BUS capacity, cells per second; 53,000 is seed 001 Fig. 4's Centillion 100 BUS ('approx. 53.000 cells per second'), the one point it is calibrated on.",
    )
    bus_frames: int | None = Field(
        None, ge=1, description="BUS capacity, frames per second; none = no frame limit (only `bus_rate`)."
    )
    bus_queue: int = Field(64, ge=0, description="Frames the BUS holds while busy; more are dropped (uncalibrated).")

    def served_elans(self, name: str) -> list[str]:
        """The ELANs this node's LES/BUS serve."""
        return self.elans or [name]


class MpoaServer(NodeBase):
    """An MPOA server / NHRP route server: answers shortcut resolution requests."""

    role: Literal["mpoa-server"] = Field(description="Node kind.")
    shortcut_frames: int = Field(
        10,
        ge=1,
        description="MPC-p1 Shortcut-Setup Frame Count its MPCs use: packets to one destination that trigger a shortcut (af-mpoa-0087.000 §5.2.1: 10).",
    )
    shortcut_time: Time = Field(
        "1 s",
        description="MPC-p2 Shortcut-Setup Frame Time: the window of those packets (af-mpoa-0087.000 §5.2.1: 1 s).",
    )


Node = Annotated[
    Host | Router | Bridge | AccessPoint | Switch | AtmSwitch | LaneServer | MpoaServer,
    Field(discriminator="role"),
]

NODE_ROLES = ("host", "router", "bridge", "ap", "ap-router", "switch", "atm-switch", "lane-server", "mpoa-server")


# --------------------------------------------------------------------------- impairments

Direction = Literal["both", "forward", "reverse"]
_DIRECTION_DOC = "Which way it applies: 'both', 'forward' (ends[0] to ends[1], or AP to stations) or 'reverse'."


class Bernoulli(Strict):
    """Independent losses: each frame is lost with probability ``rate``."""

    model: Literal["bernoulli"] = Field(description="Loss model.")
    rate: Ratio = Field(description="Loss probability, e.g. '1 %'.")
    direction: Direction = Field("both", description=_DIRECTION_DOC)


class GilbertElliott(Strict):
    """Bursty losses: a two-state Markov chain (good, bad), one loss probability per state."""

    model: Literal["gilbert-elliott"] = Field(description="Loss model.")
    p: Ratio = Field(description="Probability of going from good to bad, per frame.")
    r: Ratio = Field(description="Probability of going from bad to good, per frame.")
    loss_good: Ratio = Field(0.0, description="Loss probability in the good state.")
    loss_bad: Ratio = Field(1.0, description="Loss probability in the bad state.")
    direction: Direction = Field("both", description=_DIRECTION_DOC)


def _loss_shorthand(value: Any) -> Any:
    """``loss = "1 %"`` means Bernoulli 1 % both ways; one table means a list of one."""
    if isinstance(value, (str, float, int)) and not isinstance(value, bool):
        value = {"model": "bernoulli", "rate": value}
    return _as_list(value)


Loss = Annotated[Bernoulli | GilbertElliott, Field(discriminator="model")]


class Shaper(Strict):
    """A token-bucket rate limit (RFC 2697 §3) as `tc tbf` or a firewall's limit (seed 002: 30 Mb/s).

    ``action = "shape"`` holds a frame until its tokens are there (`tc tbf`);
    ``"police"`` drops a frame that finds too few tokens (`tc police … drop`, a
    firewall's rate limit). Frames are metered by their length without FCS (Ethernet)
    or as IP datagrams (serial lines), as Linux meters `skb->len`.
    """

    rate: Rate = Field(description="Sustained rate, e.g. '30 Mbps'.")
    burst: Size = Field(15000, description="Bucket depth, e.g. '15 kB'; the bucket starts full (RFC 2697 §3).")
    action: Literal["shape", "police"] = Field(
        "shape", description="'shape' delays frames to the rate; 'police' drops what exceeds it."
    )
    queue: Size | None = Field(
        None,
        description="Shaping only: bytes that may wait for tokens before drops (`tc tbf limit`); none = the link's own queue limit.",
    )
    direction: Direction = Field("both", description=_DIRECTION_DOC)

    @model_validator(mode="after")
    def _police_has_no_queue(self) -> Shaper:
        if self.action == "police" and self.queue is not None:
            raise FieldProblem(
                "queue",
                "a policer holds nothing back, so it has no queue",
                expected="no queue with action = 'police'",
                found=f"queue = {self.queue}",
                hint="use action = 'shape' to queue frames for tokens",
            )
        return self


class QueueLimit(Strict):
    """Transmit queue limit of an interface: in frames or in bytes (one of them)."""

    frames: int | None = Field(None, ge=1, description="Most frames waiting, e.g. 1000 (Linux txqueuelen).")
    bytes: Size | None = Field(None, description="Most bytes waiting, e.g. '64 KiB'.")

    @model_validator(mode="after")
    def _one_limit(self) -> QueueLimit:
        if (self.frames is None) == (self.bytes is None):
            raise FieldProblem(
                "frames",
                "give exactly one of 'frames' or 'bytes'",
                expected="frames = N or bytes = SIZE",
                found="both" if self.frames else "neither",
            )
        return self


class LinkBase(Strict):
    """Fields every link has."""

    name: str | None = Field(None, description="A name for the link, for tunnels' `over` and for reports.")
    loss: Annotated[list[Loss], BeforeValidator(_loss_shorthand)] = Field(
        default_factory=list,
        description="Frame loss: '1 %' (Bernoulli both ways), or tables with model = 'bernoulli' | 'gilbert-elliott' and a direction.",
    )
    shaper: Annotated[list[Shaper], BeforeValidator(_as_list)] = Field(
        default_factory=list, description="Rate limits (token buckets), one table or a list, each with a direction."
    )
    delay: Time = Field(
        "0 s",
        description="One-way propagation delay, e.g. '1 ms'. On a wifi link: the air's, at most a slot's worth "
        "(the 802.11 MAC's timeouts budget it inside aSlotTime), e.g. '1 us' for 300 m.",
    )


TwoEnds = Annotated[list[NodeName], Field(min_length=2, max_length=2)]


class Ethernet(LinkBase):
    """A point-to-point Ethernet (IEEE 802.3) link, full or half duplex."""

    type: Literal["ethernet"] = Field(description="Link kind.")
    rate: Rate = Field("100 Mbps", description="Line rate: '10 Mbps', '100 Mbps', '1 Gbps'.")
    ends: TwoEnds = Field(description="The two nodes the link joins: [a, b].")
    duplex: Literal["full", "half"] = Field("full", description="'half' shares the medium (CSMA/CD) between both ends.")
    queue: QueueLimit | None = Field(None, description="Transmit queue limit at each end; none = 1000 frames.")
    mtu: int = Field(
        1500, ge=68, le=9216, description="IP MTU of both interfaces (1500 per IEEE 802.3; jumbo up to 9216)."
    )


# IEEE 802.11-2020 §15 (DSSS), §16 (HR/DSSS, 802.11b), §18/§19 (ERP-OFDM, 802.11g).
WIFI_RATES_MBPS: dict[str, tuple[float, ...]] = {
    "802.11": (1, 2),
    "802.11b": (1, 2, 5.5, 11),
    "802.11g": (1, 2, 5.5, 11, 6, 9, 12, 18, 24, 36, 48, 54),
}
_SECURITY_ALIASES = {"wep-64": "wep-40", "wep-128": "wep-104", "none": "open", "wpa": "tkip", "wpa2": "ccmp"}


def _security_alias(value: Any) -> Any:
    return _SECURITY_ALIASES.get(value, value) if isinstance(value, str) else value


class Wifi(LinkBase):
    """An IEEE 802.11 BSS: one AP and its stations (infrastructure), or stations alone (ad hoc)."""

    type: Literal["wifi"] = Field(description="Link kind.")
    standard: Literal["802.11", "802.11b", "802.11g"] = Field(
        "802.11b", description="PHY: '802.11' (DSSS 1-2 Mb/s, as the 2 Mb/s WaveLAN of seed 004), '802.11b', '802.11g'."
    )
    rate: Rate | None = Field(
        None, description="Data rate, one the standard defines (e.g. '11 Mbps' for 802.11b); none = the highest."
    )
    preamble: Literal["long", "short"] = Field(
        "long", description="PLCP preamble: 'long' (192 us) or 'short' (96 us, 802.11b/g only)."
    )
    preambles: dict[NodeName, Literal["long", "short"]] = Field(
        default_factory=dict,
        description="Per member, the PLCP preamble of the frames it sends (its data frames, and the Acks answering them), "
        "overriding `preamble`, e.g. { a = 'long' }: a station whose driver sends the long format in a cell whose AP "
        "sends short ones (the long format is mandatory, IEEE 802.11-2020 §16.2.2.2).",
    )
    erp_protection: bool = Field(
        False,
        description="802.11g only: 802.11b stations share the BSS, so every OFDM frame is preceded by a "
        "CTS-to-self at a DSSS rate and the long slot and CWmin 31 apply (IEEE 802.11-2020 §10.26.2, §18).",
    )
    security: Annotated[
        Literal["open", "wep-40", "wep-104", "tkip", "ccmp"],
        BeforeValidator(_security_alias),
        WithJsonSchema({"type": "string", "enum": ["open", "wep-40", "wep-104", "tkip", "ccmp", *_SECURITY_ALIASES]}),
    ] = Field(
        "open",
        description="Link encryption: 'open', 'wep-40' (alias 'wep-64'), 'wep-104' (alias 'wep-128'), 'tkip' (WPA), 'ccmp' (WPA2).",
    )
    mode: Literal["infrastructure", "adhoc"] = Field(
        "infrastructure", description="'infrastructure' needs an `ap`; 'adhoc' has none."
    )
    ap: NodeName | None = Field(
        None, description="The access point's node (role 'ap', 'ap-router' or any node acting as one)."
    )
    stations: list[NodeName] = Field(
        default_factory=list, description="Nodes associated with the AP (or members of the ad hoc cell)."
    )
    rts_threshold: Size | None = Field(
        None, le=U32_MAX, description="Frames longer than this use RTS/CTS; none = never."
    )
    retry_limit: int = Field(
        7,
        ge=0,
        le=255,
        description="dot11ShortRetryLimit: transmission attempts of a frame, the first included, before it is dropped (IEEE 802.11-2020 Annex C: 7); 1 = never retried, as seed 004's WaveLAN, which had no link-layer acknowledgements.",
    )
    link_acks: bool = Field(
        True,
        description="Unicast data frames are acknowledged (an Ack after SIFS, retried on its absence; IEEE 802.11-2020 §10.3.2.11). "
        "false: each frame is sent once, unacknowledged, with nothing reserved for an Ack, as seed 004's pre-802.11 WaveLAN: "
        "'the wireless protocol does not provide any acknowledgements mechanism'.",
    )
    hears: dict[NodeName, list[NodeName]] | None = Field(
        None,
        description="Who hears whom: node -> nodes it can hear (hidden terminals, seed 004); none = everybody hears everybody.",
    )
    frame_error_rate: dict[NodeName, Ratio] = Field(
        default_factory=dict, description="Frame error rate of reception at a node, e.g. { a = '2 %' }."
    )
    wds: bool = Field(
        False,
        description="Every member of this BSS is WDS-capable: the AP and each station exchange 4-address frames "
        "(IEEE 802.11-2020 Table 9-26, To DS = From DS = 1). Without it, a pair uses them only when both nodes set `wds`.",
    )
    queue: Annotated[int, Field(ge=1)] | dict[NodeName, Annotated[int, Field(ge=1)]] | None = Field(
        None,
        description="Transmit queue of each member's 802.11 interface, in frames (drop-tail): one number for every "
        "member, or per node, e.g. { ap = 50 }. Default: 100 frames at the AP (Linux 2.4's ether_setup() "
        "tx_queue_len, the driver default of a 2004 AP such as the Linux 2.4 Linksys WRT54G), 1000 at a station.",
    )
    access: Literal["idle-difs", "arrival-difs"] = Field(
        "idle-difs",
        description="DCF basic access of a frame that finds the medium idle and no backoff pending: 'idle-difs' = it goes "
        "once the medium has been idle for DIFS, counted from when it went idle, so at once on a long-idle medium "
        "(IEEE 802.11-2020 §10.3.4.2); 'arrival-difs' = it waits DIFS counted from its arrival (ns-3's ChannelAccessManager).",
    )

    control_preamble: Literal["bss", "long"] = Field(
        "bss",
        description="PLCP preamble of Acks and CTSs: 'bss' = the cell's `preamble` (a short-preamble cell answers short; "
        "ns-3's choice), 'long' = always long, which every 802.11b receiver decodes (IEEE 802.11-2020 §16.2.2.2; "
        "§10.6.6.5 fixes the response's rate, not its preamble).",
    )
    beacons: bool = Field(
        True, description="The AP sends beacons (IEEE 802.11-2020 §11.1.3.2); ignored in an ad hoc cell."
    )
    beacon_interval: Time = Field(
        "102.4 ms",
        description="dot11BeaconPeriod: time between TBTTs, a whole number of TU (1 TU = 1024 us); 100 TU is the usual value.",
    )
    beacon_rate: Rate | None = Field(
        None, description="Rate of the beacons; none = the lowest basic rate, 1 Mbps (802.11b and g)."
    )
    channel: int | None = Field(
        6,
        ge=1,
        le=14,
        description="2.4 GHz channel: the beacons' DS Parameter Set and the captures' radiotap Channel (no interference "
        "between cells is modelled); 6 is the Linksys WRT54G's factory setting; none = unknown.",
    )

    @model_validator(mode="after")
    def _standard_rate(self) -> Wifi:
        rates = WIFI_RATES_MBPS[self.standard]
        if self.rate is not None and self.rate not in [int(r * 1_000_000) for r in rates]:
            listed = ", ".join(f"{r:g}" for r in sorted(rates))
            raise FieldProblem(
                "rate",
                f"{self.standard} defines no such rate",
                expected=f"one of {listed} Mbps",
                found=repr(format_rate(self.rate)),
            )
        if self.preamble == "short" and self.standard == "802.11":
            raise FieldProblem("preamble", "802.11 DSSS has only the long preamble", expected="'long'", found="'short'")
        if self.standard == "802.11":
            for member, kind in self.preambles.items():
                if kind == "short":
                    raise FieldProblem(
                        f"preambles.{member}",
                        "802.11 DSSS has only the long preamble",
                        expected="'long'",
                        found="'short'",
                    )
        if self.beacon_rate is not None and self.beacon_rate not in [int(r * 1_000_000) for r in rates]:
            raise FieldProblem(
                "beacon_rate",
                f"{self.standard} defines no such rate",
                expected="one of " + ", ".join(f"{r:g}" for r in sorted(rates)) + " Mbps",
                found=repr(format_rate(self.beacon_rate)),
            )
        if self.beacon_interval <= 0 or self.beacon_interval % 1_024_000 or self.beacon_interval // 1_024_000 > 65535:
            raise FieldProblem(
                "beacon_interval",
                "the beacon interval is a whole number of TU (1 TU = 1024 us)",
                expected="1 to 65535 TU, e.g. '102.4 ms' (100 TU)",
                found=f"{self.beacon_interval / 1e6:g} ms",
            )
        if self.erp_protection and self.standard != "802.11g":
            raise FieldProblem(
                "erp_protection",
                "ERP protection is for 802.11g cells with 802.11b stations",
                expected="standard = '802.11g'",
                found=repr(self.standard),
            )
        return self


SERIAL_MIN_RATE = 300
"""The slowest serial line, ITU-T V.21 / Bell 103 (crates/sim/src/link/serial.rs MIN_RATE_BPS)."""

_FORMAT = re.compile(r"^[5-8][noems][12]$")


class Serial(LinkBase):
    """A serial line: asynchronous (a modem or null-modem cable) with SLIP, CSLIP or PPP, or synchronous (a leased line, an ISDN B channel, an E1) with PPP."""

    type: Literal["serial"] = Field(description="Link kind.")
    rate: Rate = Field(description="Line rate in bits per second: '1200 bps', '57.6 kbps', '115.2 kbps'.")
    framing: Literal["slip", "cslip", "ppp"] = Field(
        "slip",
        description="'slip' (RFC 1055), 'cslip' (with Van Jacobson header compression, RFC 1144), 'ppp' (RFC 1661/1662).",
    )
    format: str = Field(
        "8n1",
        pattern=_FORMAT.pattern,
        description="Character format: data bits, parity (n/o/e/m/s), stop bits, e.g. '8n1' = 10 bit times per byte.",
    )
    clocking: Literal["async", "sync"] = Field(
        "async",
        description="'async': start-stop characters in the line's format (a modem, a null-modem cable). 'sync': a synchronous line "
        "(leased line, ISDN B channel, E1/T1) with PPP in bit-synchronous HDLC framing (RFC 1662 §5): 8 bits per octet, "
        "no start/stop bits, a zero bit inserted after every five ones; framing must be 'ppp'.",
    )
    acfc: bool = Field(
        False,
        description="PPP: address-and-control-field compression negotiated (RFC 1661 §6.6): frames drop 0xFF 0x03.",
    )
    pfc: bool = Field(
        False,
        description="PPP: protocol-field compression negotiated (RFC 1661 §6.5): a one-byte protocol field where it fits.",
    )
    fcs: Literal[16, 32] = Field(
        16, description="PPP: the frame check sequence in bits, 16 (RFC 1662 §C.2) or 32 (negotiated, RFC 1570 §2.1)."
    )
    ends: TwoEnds = Field(description="The two nodes the line joins: [a, b].")
    compression: float | None = Field(
        None, ge=1.0, description="Modem data compression ratio (V.42bis), e.g. 2.0 for 2:1 (seed 004); none = off."
    )
    mtu: int | None = Field(None, ge=68, le=65535, description="IP MTU; none = 1006 for SLIP (RFC 1055), 1500 for PPP.")

    @model_validator(mode="after")
    def _rate_from_300(self) -> Serial:
        if self.rate < SERIAL_MIN_RATE:
            raise FieldProblem(
                "rate",
                "a serial line sends nothing at this rate" if self.rate == 0 else "slower than any modem",
                expected=f"at least {format_rate(SERIAL_MIN_RATE)} (ITU-T V.21, the slowest modem)",
                found=repr(format_rate(self.rate)),
            )
        return self

    @model_validator(mode="after")
    def _sync_is_ppp(self) -> Serial:
        if self.framing != "ppp":
            for key in ("acfc", "pfc", "fcs"):
                if key in self.model_fields_set and getattr(self, key) != Serial.model_fields[key].default:
                    raise FieldProblem(
                        key, f"{key} is a PPP option", expected="framing = 'ppp'", found=repr(self.framing)
                    )
        if self.clocking == "sync":
            if self.framing != "ppp":
                raise FieldProblem(
                    "framing",
                    "a synchronous line carries PPP in bit-synchronous HDLC framing (RFC 1662 §5)",
                    expected="'ppp' with clocking = 'sync'",
                    found=repr(self.framing),
                )
            if self.format != Serial.model_fields["format"].default:
                raise FieldProblem(
                    "format",
                    "a synchronous line has no character format: 8 bits per octet, no start or stop bits",
                    expected="no format with clocking = 'sync'",
                    found=repr(self.format),
                )
            if self.compression is not None:
                raise FieldProblem(
                    "compression",
                    "modem compression (V.42bis) belongs to asynchronous modem lines",
                    expected="no compression with clocking = 'sync'",
                    found=repr(self.compression),
                )
        return self


class VirtualCircuit(Strict):
    """An ATM permanent virtual circuit and the traffic contract of the cells this end sends (ATM Forum TM 4.0)."""

    vpi: int = Field(0, ge=0, le=255, description="Virtual path identifier (UNI: 0-255).")
    vci: int = Field(ge=32, le=65535, description="Virtual channel identifier; 0-31 are reserved (ITU-T I.361).")
    service: Literal["ubr", "cbr", "vbr", "rt-vbr", "abr"] = Field(
        "ubr",
        description="Service category (TM 4.0 §2): 'cbr' and 'rt-vbr' are served first at a switch port, then 'vbr' (non-real-time), "
        "'abr', 'ubr' last. Give both ends of a PVC the same category.",
    )
    pcr: Rate | None = Field(
        None,
        description="Peak cell rate as a bit rate of 53-octet cells, e.g. '100 Mbps' (TM 4.0 §3.6.1.1); none = line rate; required for cbr, vbr, rt-vbr, abr.",
    )
    scr: Rate | None = Field(
        None, description="vbr/rt-vbr: sustainable cell rate, bits/s of cells (TM 4.0 §3.6.1.2), at most the PCR."
    )
    mbs: int | None = Field(
        None,
        ge=1,
        description="vbr/rt-vbr: maximum burst size, cells (TM 4.0 §3.6.1.3): MBS cells may leave at the PCR before the SCR applies.",
    )
    mcr: Rate | None = Field(None, description="abr: minimum cell rate, bits/s of cells (TM 4.0 §5.10.2); none = 0.")
    icr: Rate | None = Field(
        None, description="abr: initial cell rate, bits/s of cells (TM 4.0 §5.10.2); none = the PCR."
    )
    rif: float | None = Field(
        None,
        description="abr: rate increase factor, a fraction of the PCR per backward RM cell (TM 4.0 §5.10.2; 1/32768 to 1); none = 1/16.",
    )
    rdf: float | None = Field(
        None,
        description="abr: rate decrease factor, a fraction of the ACR per congested backward RM cell (TM 4.0 §5.10.2; 1/32768 to 1); none = 1/16.",
    )

    @model_validator(mode="after")
    def _contract(self) -> VirtualCircuit:
        vbr = self.service in ("vbr", "rt-vbr")
        if self.service != "ubr" and self.pcr is None:
            raise FieldProblem(
                "pcr",
                f"a {self.service} VC needs a peak cell rate (TM 4.0 §3.4)",
                expected="pcr = '<rate>'",
                found="nothing",
            )
        if self.pcr is not None and self.pcr <= 0:
            raise FieldProblem(
                "pcr",
                "a peak cell rate must be positive",
                expected="a rate above 0 bps",
                found=repr(format_rate(self.pcr)),
            )
        for key in ("scr", "mbs"):
            if not vbr and getattr(self, key) is not None:
                raise FieldProblem(
                    key,
                    f"only a vbr or rt-vbr VC has an {key.upper()} (TM 4.0 §3.6.1)",
                    expected=f"service = 'vbr' or no {key}",
                    found=repr(self.service),
                )
        for key in ("mcr", "icr", "rif", "rdf"):
            if self.service != "abr" and getattr(self, key) is not None:
                raise FieldProblem(
                    key,
                    f"only an abr VC has an {key.upper()} (TM 4.0 §5.10.2)",
                    expected=f"service = 'abr' or no {key}",
                    found=repr(self.service),
                )
        if vbr:
            if self.scr is None or self.mbs is None:
                key = "scr" if self.scr is None else "mbs"
                raise FieldProblem(
                    key,
                    f"a {self.service} VC needs an SCR and an MBS (TM 4.0 §3.6.1)",
                    expected=f"{key} = ...",
                    found="nothing",
                )
            if not 0 < self.scr <= (self.pcr or 0):
                raise FieldProblem(
                    "scr",
                    "the sustainable cell rate must be above 0 and at most the peak cell rate (TM 4.0 §3.6.1.2)",
                    expected=f"0 < scr <= pcr ({format_rate(self.pcr or 0)})",
                    found=repr(format_rate(self.scr)),
                )
        if self.service == "abr":
            mcr, icr = self.mcr or 0, self.icr if self.icr is not None else self.pcr
            if not mcr <= (icr or 0) <= (self.pcr or 0):
                key = "mcr" if self.mcr is not None and mcr > (icr or 0) else "icr"
                raise FieldProblem(
                    key,
                    "ABR rates must satisfy MCR <= ICR <= PCR (TM 4.0 §5.10.2)",
                    expected=f"mcr <= icr <= pcr ({format_rate(self.pcr or 0)})",
                    found=f"mcr {format_rate(mcr)}, icr {format_rate(icr or 0)}",
                )
            for key in ("rif", "rdf"):
                f = getattr(self, key)
                if f is not None and not 0 < f <= 1:
                    raise FieldProblem(
                        key,
                        f"{key.upper()} is a factor between 1/32768 and 1 (TM 4.0 §5.10.2)",
                        expected="0 < factor <= 1, e.g. 0.0625",
                        found=repr(f),
                    )
        return self


ATM_PHY = {"oc3": 149_760_000, "25m": 25_600_000}
"""Cell payload rates: OC-3c/STS-3c carries 149.76 Mb/s of cells (ITU-T I.432); ATM25 25.6 Mb/s (af-phy-0040)."""


class Atm(LinkBase):
    """An ATM link between two ports (host NIC, switch), carrying AAL5 on virtual circuits."""

    type: Literal["atm"] = Field(description="Link kind.")
    phy: Literal["oc3", "25m"] = Field(
        "oc3", description="Physical layer: 'oc3' (155.52 Mb/s SONET) or '25m' (25.6 Mb/s)."
    )
    rate: Rate | None = Field(None, description="Overrides the PHY's cell rate; none = from `phy`.")
    ends: TwoEnds = Field(description="The two nodes the link joins: [a, b] (hosts, ATM switches, LANE/MPOA servers).")
    vcs: list[VirtualCircuit] = Field(
        default_factory=list, description="PVCs on the link; none = SVCs set up by signalling."
    )
    encapsulation: Literal["llc-snap", "vc-mux"] = Field(
        "llc-snap", description="RFC 2684 multiprotocol encapsulation."
    )
    mtu: int = Field(9180, ge=68, le=65535, description="IP MTU; RFC 2225 (CLIP) default 9180; with `elan`, 1500.")
    elan: str | None = Field(
        None,
        description="LAN emulation: the emulated LAN that the link's end system (host, router, Ethernet edge device) joins as an LE client (af-lane-0021.000); none = CLIP.",
    )

    @model_validator(mode="after")
    def _mtu_fits_aal5(self) -> Atm:
        if self.elan is not None:
            if "mtu" not in self.model_fields_set:
                self.mtu = 1500
            elif self.mtu > 1500:
                raise FieldProblem(
                    "mtu",
                    "LANE v1 for Ethernet carries 802.3 frames of at most 1514 octets (MAXIMUM-FRAME-SIZE 1516 with the LE header, af-lane-0021.000)",
                    expected="at most 1500 with elan",
                    found=str(self.mtu),
                )
            return self
        header = 8 if self.encapsulation == "llc-snap" else 0
        if self.mtu + header > 65535:
            raise FieldProblem(
                "mtu",
                f"an IP packet of {self.mtu} octets with {self.encapsulation} ({header} octets) is an AAL5 SDU of {self.mtu + header}; AAL5 carries at most 65,535 (ITU-T I.363.5)",
                expected=f"at most {65535 - header} with {self.encapsulation}"
                + (" (65,535 with vc-mux)" if header else ""),
                found=str(self.mtu),
            )
        return self

    @property
    def cell_rate(self) -> int:
        """Bits per second of cells: `rate`, or the PHY's."""
        return self.rate if self.rate is not None else ATM_PHY[self.phy]


Link = Annotated[Ethernet | Wifi | Serial | Atm, Field(discriminator="type")]

# --------------------------------------------------------------------------- tunnels


def _lower(value: Any) -> Any:
    return value.lower() if isinstance(value, str) else value


class TunnelBase(Strict):
    """Fields every tunnel has."""

    name: str = Field(
        pattern=r"^[A-Za-z][A-Za-z0-9_.-]*$", description="The tunnel's name (its interface), for `over` and reports."
    )
    over: str | None = Field(
        None,
        description=(
            "What the tunnel rides on: another tunnel's name, a link's name, or 'link[N]'. "
            "None = the routed IP path from `from` to `to`."
        ),
    )
    from_: NodeName = Field(alias="from", description="The node at the near end (client, initiator).")
    to: NodeName = Field(description="The node at the far end (server, responder).")
    mtu: int | None = Field(
        None, ge=68, le=65535, description="The tunnel interface's MTU; none = computed from the layers below."
    )


class OpenVpn(TunnelBase):
    """An OpenVPN tunnel (seed 002): TAP (Ethernet, bridged) or TUN (IP), over UDP or TCP."""

    type: Literal["openvpn"] = Field(description="Tunnel kind.")
    proto: Literal["udp", "tcp"] = Field("udp", description="Transport carrying the tunnel.")
    dev: Literal["tap", "tun"] = Field(
        "tap", description="'tap' carries Ethernet frames (a layer-2 VPN), 'tun' IP packets."
    )
    cipher: Annotated[
        Literal["none", "bf-cbc", "aes-128-cbc", "aes-256-cbc", "aes-128-gcm", "aes-256-gcm"], BeforeValidator(_lower)
    ] = Field("none", description="Data channel cipher (--cipher); seed 002 runs without one.")
    auth: Annotated[Literal["none", "md5", "sha1", "sha256", "sha512"], BeforeValidator(_lower)] = Field(
        "sha1", description="HMAC digest (--auth); SHA1 adds 20 bytes."
    )
    fragment: Size | None = Field(
        None, le=U16_MAX, description="OpenVPN's own fragmentation (--fragment) at this size; none = off."
    )
    replay: bool = Field(
        False,
        description=(
            "Send the 4-byte packet ID of replay protection (--replay). OpenVPN does by default; seed 002 §3.2 counts "
            "none (24 bytes with SHA1), and the default follows the seed as `qoslab mtu` does."
        ),
    )
    port: int = Field(1194, ge=1, le=65535, description="Server port.")


class Pppoe(TunnelBase):
    """A PPPoE session (RFC 2516): PPP over an Ethernet segment or a TAP tunnel."""

    type: Literal["pppoe"] = Field(description="Tunnel kind.")
    service_name: str | None = Field(None, description="PPPoE Service-Name tag that picks the server (seed 002 §2.2).")
    auth: Literal["chap", "pap"] = Field("chap", description="PPP authentication.")


class Pptp(TunnelBase):
    """A PPTP tunnel (RFC 2637): PPP in enhanced GRE, control on TCP 1723."""

    type: Literal["pptp"] = Field(description="Tunnel kind.")
    auth: Literal["chap", "pap", "mschapv2"] = Field("mschapv2", description="PPP authentication.")
    mppe: bool = Field(False, description="Microsoft Point-to-Point Encryption on the PPP payload.")


class IpsecSelector(Strict):
    """Which traffic between a tunnel's two ends its SA pair carries: the selectors of
    an SPD entry (RFC 4301 §4.4.1.1) beyond the two addresses.

    Several VPNs between the same two hosts (seed 003: up to three from one client, each
    with its own IPsec policy) are told apart so: ``selector = { protocol = "udp",
    port = 8 }`` carries UDP to and from port 8 of ``to``. Where several tunnels select
    a packet, the most specific wins (RFC 4301 §4.4.1: the SPD is ordered, specific
    entries first); a tunnel without a selector carries the rest.
    """

    protocol: Literal["any", "udp", "tcp", "icmp"] = Field(
        "any", description="Next layer protocol (RFC 4301 §4.4.1.1); 'any' = every protocol."
    )
    port: int | None = Field(
        None,
        ge=1,
        le=65535,
        description="The UDP/TCP port at `to` (the service's port): `from`'s remote port, `to`'s local port (RFC 4301 §4.4.1.1). None = any port; needs protocol 'udp' or 'tcp'.",
    )

    @model_validator(mode="after")
    def _ports_need_udp_or_tcp(self) -> IpsecSelector:
        if self.port is not None and self.protocol not in ("udp", "tcp"):
            raise FieldProblem(
                "protocol",
                "a port selector needs a protocol with ports",
                expected="'udp' or 'tcp' with `port`",
                found=repr(self.protocol),
            )
        return self


class Ipsec(TunnelBase):
    """An IPsec security association pair (RFC 4301): ESP or AH, tunnel or transport mode."""

    type: Literal["ipsec"] = Field(description="Tunnel kind.")
    mode: Literal["tunnel", "transport"] = Field(
        "tunnel", description="'tunnel' adds an outer IP header; 'transport' protects the payload only."
    )
    protocol: Literal["esp", "ah"] = Field("esp", description="ESP (RFC 4303) or AH (RFC 4302).")
    fragment: Literal["before", "after"] = Field(
        "after",
        description=(
            "Tunnel mode, an inner packet too big for the tunnel (DF clear): 'before' = fragment it to the tunnel's "
            "effective MTU and seal each fragment, as Linux does for IPv4 ESP (RFC 4459 §3 pre-fragmentation); "
            "'after' = seal it whole and fragment the outer packet (the default, as the tunnel MTU defaults to the port's). "
            "With DF set either way, ICMP 'fragmentation needed' returns the effective MTU (RFC 4301 §8.2.1)."
        ),
    )
    cipher: Annotated[
        Literal["null", "des-cbc", "3des-cbc", "aes-128-cbc", "aes-256-cbc", "aes-128-gcm"], BeforeValidator(_lower)
    ] = Field("3des-cbc", description="ESP cipher; must be 'null' for AH.")
    auth: Annotated[Literal["none", "hmac-md5-96", "hmac-sha1-96", "hmac-sha256-128"], BeforeValidator(_lower)] = Field(
        "hmac-sha1-96", description="Integrity check (ICV)."
    )
    selector: IpsecSelector | None = Field(
        None,
        description="Transport mode: which traffic between `from` and `to` this tunnel carries (RFC 4301 §4.4.1.1 selectors); none = all of it not selected by a more specific tunnel.",
    )

    @model_validator(mode="after")
    def _ah_has_no_cipher(self) -> Ipsec:
        if self.protocol == "ah" and self.cipher != "null":
            raise FieldProblem(
                "cipher",
                "AH does not encrypt",
                expected="'null' with protocol = 'ah'",
                found=repr(self.cipher),
                hint="set cipher = 'null' or protocol = 'esp'",
            )
        return self


class Gre(TunnelBase):
    """A GRE tunnel (RFC 2784/2890) carrying IP."""

    type: Literal["gre"] = Field(description="Tunnel kind.")
    key: int | None = Field(None, ge=0, le=2**32 - 1, description="GRE key (RFC 2890); none = no key field.")
    checksum: bool = Field(False, description="Add the GRE checksum field.")


Tunnel = Annotated[OpenVpn | Pppoe | Pptp | Ipsec | Gre, Field(discriminator="type")]

# --------------------------------------------------------------------------- tests

RFC2544_FRAME_SIZES = [64, 128, 256, 512, 1024, 1280, 1518]
"""RFC 2544 §9.1: Ethernet frame sizes to test."""

FrameSizes = Annotated[list[Size], Field(min_length=1)]


class TestBase(Strict):
    """Fields every test has."""

    __test__ = False  # not a pytest test class

    name: str | None = Field(None, description="A label for the results.")
    from_: NodeName = Field(alias="from", description="The node that sends (the tester's transmit port).")
    to: NodeName = Field(description="The node that receives (the tester's receive port).")

    @model_validator(mode="after")
    def _lasts_some_time(self) -> TestBase:
        # A test of no duration measures nothing, and every rate would divide by zero.
        if getattr(self, "duration", None) == 0:
            raise FieldProblem(
                "duration", "a test must last some time", expected="a duration above 0, e.g. '10 s'", found="0 s"
            )
        return self


class Rfc2544Base(TestBase):
    """Fields the RFC 2544 methods share."""

    bidirectional: bool = Field(
        False,
        description="Send the same stream from `to` back to `from` at once (RFC 2544 §14: bidirectional "
        "traffic; rates are per direction).",
    )
    wait: Time = Field(
        "2 s",
        description="How long the receiver keeps counting after a trial's last frame (RFC 2544 §23: 'about 2 seconds' "
        "for frames still in the device); a frame that arrives later is lost (docs/metrics.md#window).",
    )


class Rfc2544Throughput(Rfc2544Base):
    """RFC 2544 §26.1: the highest rate at which no frame is lost, by binary search."""

    method: Literal["rfc2544.throughput"] = Field(description="Test method.")
    frame_sizes: FrameSizes = Field(
        default_factory=lambda: list(RFC2544_FRAME_SIZES), description="Frame sizes in bytes (RFC 2544 §9.1)."
    )
    duration: Time = Field("60 s", description="Length of each trial (RFC 2544 §24: at least 60 s).")
    max_rate: Rate | None = Field(None, description="Upper bound of the search; none = the sender's line rate.")
    loss_tolerance: Ratio = Field(0.0, description="Loss accepted as 'no loss' (0 by RFC 2544).")
    resolution: Ratio = Field(
        0.005,
        description="Stop the search when the interval between the highest passing and the lowest failing rate is this fraction "
        "of the path's bottleneck (`max_rate` when given; docs/metrics.md#rfc2544-throughput).",
    )


class Rfc2544Latency(Rfc2544Base):
    """RFC 2544 §26.2: latency at the throughput rate, per frame size."""

    method: Literal["rfc2544.latency"] = Field(description="Test method.")
    frame_sizes: FrameSizes = Field(
        default_factory=lambda: list(RFC2544_FRAME_SIZES), description="Frame sizes in bytes (RFC 2544 §9.1)."
    )
    rate: Rate | None = Field(None, description="Offered load; none = the measured throughput.")
    frame_rate: float | None = Field(
        None, gt=0, description="Offered load in frames per second (seed 000 uses 10 fps); overrides `rate`."
    )
    duration: Time = Field("120 s", description="Length of each trial (RFC 2544: 120 s).")
    trials: int = Field(20, ge=1, description="Repetitions averaged (RFC 2544: at least 20).")


class Rfc2544FrameLoss(Rfc2544Base):
    """RFC 2544 §26.3: frame loss rate at loads from 100 % down in steps."""

    method: Literal["rfc2544.frame_loss"] = Field(description="Test method.")
    frame_sizes: FrameSizes = Field(
        default_factory=lambda: list(RFC2544_FRAME_SIZES), description="Frame sizes in bytes."
    )
    step: Ratio = Field(0.1, description="Load decrement, a fraction of the line rate (RFC 2544: at most 10 %).")
    duration: Time = Field("60 s", description="Length of each trial (RFC 2544 §24: at least 60 s).")
    max_rate: Rate | None = Field(
        None, description="The 100 % load; none = the sender's line rate (the medium's maximum, RFC 2544 §26.3)."
    )


class Rfc2544BackToBack(Rfc2544Base):
    """RFC 2544 §26.4: the longest burst at line rate forwarded without loss."""

    method: Literal["rfc2544.back_to_back"] = Field(description="Test method.")
    frame_sizes: FrameSizes = Field(
        default_factory=lambda: list(RFC2544_FRAME_SIZES), description="Frame sizes in bytes."
    )
    duration: Time = Field("2 s", description="Longest burst to try (RFC 2544: at least 2 s).")
    trials: int = Field(50, ge=1, description="Repetitions (RFC 2544: at least 50).")
    max_rate: Rate | None = Field(
        None,
        description="The rate of the bursts; none = the sender's line rate (minimum inter-frame gap, RFC 2544 §26.4).",
    )


class Rfc2544Overload(Rfc2544Base):
    """An overload sweep as seed 000 Table 4: fixed offered frame rates, beyond the knee too;
    throughput and latency at each (not an RFC 2544 search; its trials and frame counting)."""

    method: Literal["rfc2544.overload"] = Field(description="Test method.")
    frame_sizes: FrameSizes = Field(
        default_factory=lambda: [1450], description="Frame sizes in bytes (seed 000 Table 4: 1450)."
    )
    frame_rates: Annotated[list[Annotated[float, Field(gt=0)]], Field(min_length=1)] = Field(
        default_factory=lambda: [10, 100, 500, 600, 620, 625, 630, 650, 700, 1000],
        description="Offered loads in frames per second (seed 000 Table 4's FPS column).",
    )
    duration: Time = Field("60 s", description="Length of each trial (RFC 2544 §24: at least 60 s).")


class Ping(TestBase):
    """ICMP echo: round-trip time and loss."""

    method: Literal["ping"] = Field(description="Test method.")
    count: int = Field(10, ge=1, description="Echo requests to send.")
    interval: Time = Field("1 s", description="Time between requests.")
    payload: Size = Field(56, description="ICMP data bytes (ping -s), at most 65,507 (an IPv4 datagram of 65,535).")

    @model_validator(mode="after")
    def _payload_fits(self) -> Ping:
        _ip_payload_fits(self.payload, "ICMP echo data")
        return self


class UdpFlow(TestBase):
    """A one-way UDP stream at a fixed rate or gap: throughput, loss, one-way delay, jitter."""

    method: Literal["udp.flow"] = Field(description="Test method.")
    payload: Size = Field(
        1472,
        description="UDP payload bytes per datagram; at most 65,507 (RFC 791 total length 65,535 less the IPv4 and UDP headers).",
    )
    dont_fragment: bool = Field(
        False,
        description="Set DF on every datagram (iperf3 --dont-fragment): too big for the path, it is refused at the sender or dropped by a router with ICMP 'fragmentation needed'; default false, datagrams are fragmented.",
    )
    rate: Rate | None = Field(None, description="Offered load; give this or `gap`.")
    gap: Time | None = Field(None, description="Time between datagrams; give this or `rate`.")
    count: int | None = Field(None, ge=1, description="Datagrams to send; none = for `duration`.")
    duration: Time = Field("10 s", description="How long to send when `count` is not given.")
    wait: Time = Field(
        "2 s",
        description="How long the receiver keeps counting after the sending stops (as RFC 2544 §23 waits for frames still "
        "on the way); a datagram that arrives later is late: counted apart and lost (docs/metrics.md#window).",
    )

    @model_validator(mode="after")
    def _rate_or_gap(self) -> UdpFlow:
        _ip_payload_fits(self.payload, "UDP payload")
        if (self.rate is None) == (self.gap is None):
            raise FieldProblem(
                "rate",
                "give exactly one of 'rate' or 'gap'",
                expected="rate = RATE or gap = TIME",
                found="both" if self.rate else "neither",
            )
        return self


class UdpEcho(TestBase):
    """UDP datagrams echoed back by the receiver (seed 003): throughput and loss each way, RTT."""

    method: Literal["udp.echo"] = Field(description="Test method.")
    payload: Size = Field(1472, description="UDP payload bytes per datagram (seed 003: 25 to 1600); at most 65,507.")
    gap: Time = Field("1 ms", description="Time between datagrams (seed 003: 1 ms and 5 ms).")
    count: int = Field(10000, ge=1, description="Datagrams to send (seed 003: 10 000).")
    port: int = Field(7, ge=1, le=65535, description="The echo server's UDP port (RFC 862: 7).")
    streams: int = Field(
        1,
        ge=1,
        le=64,
        description="Echo streams sent at once, each `count` datagrams `gap` apart (seed 003: one per VPN); stream k (from 0) goes to port `port` + k.",
    )

    @model_validator(mode="after")
    def _ports_fit(self) -> UdpEcho:
        _ip_payload_fits(self.payload, "UDP payload")
        if self.port + self.streams - 1 > 65535:
            raise FieldProblem(
                "streams",
                "the streams' ports run past 65535",
                expected=f"at most {65536 - self.port} streams from port {self.port}",
                found=str(self.streams),
            )
        return self


TcpStack = Literal["linux", "netbsd-1.1", "windows-nt-4.0"]
_STACK_DOC = (
    "TCP implementation at both ends: 'linux' (CUBIC/NewReno, SACK, timestamps, 40 ms delayed ACK, 200 ms min RTO, "
    "IW 10, RACK-TLP, byte counting), 'netbsd-1.1' (seed 004's laptops, 4.4BSD-Lite TCP: no SACK or RACK-TLP, 200 ms delayed-ACK clock, ACK at once on PSH, 1 s min RTO, IW 1, "
    "no timestamps, 4.4BSD growth per ACK, 6 s initial RTO, 16 KiB socket buffers rounded up to whole segments, a 2 kB writer low water mark) or 'windows-nt-4.0' (seed 001's workstations: no SACK, timestamps or window scaling, "
    "200 ms delayed ACK for every second segment of any size, no window update on a read, IW 1, growth per ACK, fast retransmit after 2 duplicate ACKs, 3 s initial RTO, "
    "8 KiB of receive window rounded up to four or more whole segments unless a buffer is given); qoslab.methods.tcp.STACKS cites each."
)


class TcpSettings(Strict):
    """The TCP settings of a test's connections (both ends). Every default is Linux's, as
    crates/sim/src/tcp/config.rs documents with its source."""

    hystart: Literal["off", "classic", "hystart++"] = Field(
        "off",
        description="Leave slow start early on a rising RTT: 'classic' is Linux CUBIC's HyStart (ACK train + delay, Linux's own default), 'hystart++' is RFC 9406; 'off' = plain slow start to the first loss.",
    )
    sack: bool = Field(True, description="Offer SACK (RFC 2018) and recover with RFC 6675 when both ends do.")
    timestamps: bool = Field(
        True, description="Offer timestamps (RFC 7323 §3): 12 option bytes per segment, an RTT sample per ACK."
    )
    window_scaling: bool = Field(
        True, description="Offer window scaling (RFC 7323 §2); off caps the window at 65 535 bytes."
    )
    nagle: bool = Field(True, description="Nagle's algorithm (RFC 896); false = TCP_NODELAY.")
    delayed_ack: Time = Field(
        "40 ms",
        description="Delayed-ACK timer (RFC 5681 §4.2): Linux 40 ms, BSD 200 ms; '0 s' ACKs every segment at once.",
    )
    delayed_ack_segments: int = Field(
        2, ge=1, description="ACK at once after this many full-sized segments (RFC 5681 §4.2: 2)."
    )
    delayed_ack_clock: bool = Field(
        False,
        description="The delayed ACK waits for the next tick of one host-wide clock of period delayed_ack (4.4BSD's tcp_fasttimo every 200 ms), so 0 to delayed_ack, not a full delayed_ack per segment (Linux). On under stack 'netbsd-1.1'.",
    )
    ack_on_push: bool = Field(
        False,
        description="ACK at once an in-order segment that carries PSH (NetBSD's tcp_input since 1994, rev 1.10: TH_PUSH sets TF_ACKNOW). On under stack 'netbsd-1.1'.",
    )
    send_low_water: Size | None = Field(
        None,
        le=U32_MAX,
        description="A bulk sender's writer as 4.4BSD's sosend: blocked on a full send buffer it writes again only once this much is free (so_snd.sb_lowat = MCLBYTES, 2048 on i386), and PSH marks the segment that sends the last octet written; none = the buffer refilled at once, no PSH. 2 kB under stack 'netbsd-1.1'.",
    )
    delayed_ack_any_segment: bool = Field(
        False,
        description="Count segments of any size toward delayed_ack_segments (Windows NT: an ACK for every second segment, else after the delayed-ACK timer); false = full-sized segments as RFC 5681 §4.2, Linux and BSD. True under stack 'windows-nt-4.0'.",
    )
    dup_ack_threshold: int = Field(
        3,
        ge=1,
        le=U32_MAX,
        description="Duplicate ACKs that trigger fast retransmit (RFC 5681 §3.2: 3); 2 under stack 'windows-nt-4.0' (TcpMaxDupAcks' default, NT 4.0 SP2 and later).",
    )
    window_update_on_read: bool = Field(
        True,
        description="Send a window update when the application's read opens the window by half the buffer (4.4BSD tcp_output, Linux); false = the window reopens only on the delayed-ACK rule's ACKs (Windows NT 4.0's receiver as Microsoft describes it). False under stack 'windows-nt-4.0'.",
    )
    min_rto: Time = Field(
        "200 ms", description="Lower bound of the retransmission timeout: Linux 200 ms, RFC 6298 §2.4 1 s."
    )
    rto_backoff_cap: Time | None = Field(
        None,
        description="Cap on the exponentially backed-off RTO (seed 004's router: 100 ms); none = only RFC 6298's 60 s.",
    )
    initial_window: int = Field(10, ge=1, le=U32_MAX, description="Initial congestion window, segments (RFC 6928: 10).")
    send_buffer: Size | None = Field(
        None,
        le=U32_MAX,
        description="Send socket buffer (bounds the bytes in flight); none = the host's socket_buffer, else Linux's 4 MiB.",
    )
    recv_buffer: Size | None = Field(
        None,
        le=U32_MAX,
        description="Receive socket buffer (the largest window advertised); none = the host's socket_buffer, else Linux's 6 MiB.",
    )
    pmtu_discovery: bool = Field(
        True,
        description="Path MTU discovery (RFC 1191): DF on every segment, the MSS lowered on ICMP 'fragmentation needed' (Linux ip_no_pmtu_disc = 0, the default).",
    )
    mtu_probing: Literal[0, 1, 2] = Field(
        0,
        description="Packetization-layer PMTUD (RFC 4821) as Linux tcp_mtu_probing: 0 off (default), 1 after a black hole is detected, 2 always.",
    )
    base_mss: Size = Field(
        1024, le=U16_MAX, description="MSS MTU probing starts from (Linux tcp_base_mss, 1024 since Linux 4.2)."
    )
    rack: bool = Field(
        True,
        description="RACK time-based loss detection (RFC 8985 §6), with SACK: finds lost retransmissions without waiting for the RTO. Linux's default since 4.4 (tcp_recovery = 1); off under stack 'netbsd-1.1'.",
    )
    tlp: bool = Field(
        True,
        description="Tail Loss Probe (RFC 8985 §7), with SACK and RACK: a probe after 2·SRTT without ACKs, so tail losses are found before the RTO. Linux's default since 3.10 (tcp_early_retrans = 3); off under stack 'netbsd-1.1'.",
    )
    prr: bool = Field(
        False,
        description="Proportional Rate Reduction (RFC 6937) in SACK recovery: each ACK releases data in proportion to what it delivered instead of RFC 6675's cwnd = ssthresh at once. Linux's default since 3.2; off here, as ns-3's classic recovery.",
    )
    cubic_alpha: Literal["rfc9438", "constant"] = Field(
        "rfc9438",
        description="CUBIC's Reno-friendly estimate: 'rfc9438' grows it by 3(1−β)/(1+β) per window until it reaches the window before the last loss, then by 1 (RFC 9438 §4.3); 'constant' keeps 3(1−β)/(1+β) (RFC 8312, Linux's tcp_cubic and ns-3's TcpCubic).",
    )
    cwnd_growth: Literal["bytes", "acks", "4.4bsd"] = Field(
        "bytes",
        description="What an ACK of new data grows the congestion window by: 'bytes' counts the bytes acknowledged (RFC 3465; Linux), 'acks' grows once per ACK (RFC 5681 Eq. 2 and 3; 4.4BSD and NetBSD 1.1, Windows NT 4.0, ns-3's NewReno), half as fast with an ACK every second segment; '4.4bsd' is 4.4BSD's per-ACK rule, whose avoidance adds maxseg²/cwnd + maxseg/8. '4.4bsd' under stack 'netbsd-1.1', 'acks' under 'windows-nt-4.0'.",
    )
    slow_start_limit: int | None = Field(
        2,
        ge=1,
        description="Slow start's L with cwnd_growth 'bytes': the most one ACK adds, in segments (RFC 3465 §2.2: 2); none = no bound (Linux since 3.9 adds every segment acknowledged).",
    )
    initial_rto: Time = Field(
        "1 s",
        description="Retransmission timeout before the first RTT sample, so the SYN's retry timer: RFC 6298 §2.1 and Linux 1 s, RFC 1122's older 3 s; 6 s under stack 'netbsd-1.1', 3 s under 'windows-nt-4.0'.",
    )

    @model_validator(mode="after")
    def _initial_rto_positive(self) -> TcpSettings:
        if int(self.initial_rto) <= 0:
            raise FieldProblem(
                "initial_rto",
                "an initial RTO of 0 would retransmit the SYN at once",
                expected="a time above 0 (RFC 6298 §2.1: 1 s)",
                found="0 s",
            )
        return self


class TcpBulk(TestBase):
    """An iperf3-like TCP transfer for a fixed time (or a number of bytes): goodput,
    retransmissions and the congestion window, in interval reports and totals."""

    method: Literal["tcp.bulk"] = Field(description="Test method.")
    duration: Time = Field(
        "10 s", description="How long to send (iperf3 -t); with `bytes`, the longest the run may take."
    )
    bytes: Size | None = Field(
        None, description="Send this many bytes in all, shared by the streams, instead of for `duration` (iperf3 -n)."
    )
    window: Size | None = Field(
        None,
        le=U32_MAX,
        description="Socket buffer / window (iperf3 -w): both buffers and a fixed maximum window; none = the stack's default.",
    )
    streams: int = Field(1, ge=1, description="Parallel connections (iperf3 -P).")
    interval: Time = Field("1 s", description="Interval between reports (iperf3 -i); '0 s' = none.")
    congestion: Literal["cubic", "reno", "newreno"] = Field(
        "cubic", description="Congestion control (RFC 9438 CUBIC, RFC 6582 NewReno)."
    )
    mss: Size | None = Field(
        None,
        le=U16_MAX,
        description="Maximum segment size; none = from the route MTU (MTU − 40). At most 65,535: the MSS option is 16 bits (RFC 9293 §3.2).",
    )
    stack: TcpStack = Field("linux", description=_STACK_DOC)
    trace: bool = Field(
        False,
        description="Keep each sender's per-ACK trace (cwnd, ssthresh, RTT, RTO, retransmissions) in the JSON record; large.",
    )
    tcp: TcpSettings = Field(
        default_factory=TcpSettings,
        description="TCP settings (HyStart, SACK, timestamps, delayed ACK, RTO, buffers, path MTU discovery); a key written here wins over `stack`.",
    )


class TcpTransfer(TestBase):
    """A ttcp-like transfer of a fixed number of bytes: the time it takes and the rate."""

    method: Literal["tcp.transfer"] = Field(description="Test method.")
    bytes: Size = Field(10_000_000, description="Bytes to transfer (seed 004: a 10 MB file).")
    buffer: Size = Field(8192, description="Bytes per write (ttcp -l).")
    window: Size | None = Field(
        None, le=U32_MAX, description="Fixed TCP window (seed 004's NetBSD); none = the stack's default."
    )
    congestion: Literal["cubic", "reno", "newreno"] = Field("newreno", description="Congestion control.")
    mss: Size | None = Field(
        None,
        le=U16_MAX,
        description="Maximum segment size; none = from the route MTU (MTU − 40). At most 65,535: the MSS option is 16 bits (RFC 9293 §3.2).",
    )
    stack: TcpStack = Field("linux", description=_STACK_DOC)
    trace: bool = Field(False, description="Keep the sender's per-ACK trace in the JSON record; large.")
    tcp: TcpSettings = Field(
        default_factory=TcpSettings,
        description="TCP settings (HyStart, SACK, timestamps, delayed ACK, RTO, buffers, path MTU discovery); a key written here wins over `stack`.",
    )


class Background(Strict):
    """Traffic that runs alongside every test, unmeasured: the load a test shares the
    network with (seed 004: Wireless Andrew's transceivers sending while the router's
    upstream frames are on the air)."""

    from_: NodeName = Field(alias="from", description="The node that sends.")
    to: NodeName = Field(description="The node it sends to.")
    payload: Size = Field(
        1472,
        description="UDP payload bytes per datagram (at least 16: the test frame's sequence number and time; at most 65,507).",
    )
    rate: Rate = Field(
        "0 bps", description="Offered load; '0 bps' saturates (the sender keeps its interface queue full)."
    )
    start: Time = Field("0 s", description="When it starts, from the start of each test's run.")
    duration: Time | None = Field(None, description="How long it sends; none = as long as the test runs.")

    @model_validator(mode="after")
    def _payload_fits(self) -> Background:
        _ip_payload_fits(self.payload, "UDP payload")
        return self


Test = Annotated[
    Rfc2544Throughput
    | Rfc2544Latency
    | Rfc2544FrameLoss
    | Rfc2544BackToBack
    | Rfc2544Overload
    | Ping
    | UdpFlow
    | UdpEcho
    | TcpBulk
    | TcpTransfer,
    Field(discriminator="method"),
]

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
    import re

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
    "Sweep",
    "sweep_range",
    "FieldProblem",
    "WIFI_RATES_MBPS",
    "ATM_PHY",
    "NODE_ROLES",
]
