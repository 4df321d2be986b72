"""The ``[node.NAME]`` tables: hosts, routers, bridges, access points, switches and the
ATM nodes; ``role`` picks the kind."""

from __future__ import annotations

from ipaddress import IPv4Address, IPv4Interface, IPv4Network
from typing import Annotated, Any, Literal

from pydantic import (
    BeforeValidator,
    Field,
    model_validator,
)

from qoslab.scenario.base import U32_MAX, FieldProblem, Strict, as_list
from qoslab.units import Ratio, Size, Time, UnitError

# --------------------------------------------------------------------------- nodes


def _addresses_as_text(value: Any) -> Any:
    """One address or a list, each written as text: pydantic would read the integer 1
    as 0.0.0.1/32, which nobody means."""
    value = as_list(value)
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
    promiscuous: bool = Field(
        False,
        description="Its NICs take every frame, whatever the destination MAC (a sniffing tester port: seed 000 §3's "
        "IXIA port 2 captured frames addressed to station A); default false: only its own MAC, broadcasts and multicasts.",
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
    initial_timeout: Time = Field(  # type: ignore[assignment]  # a default as written, validated as a value
        "20 ms",
        description=(
            "Link-ack timeout after a first transmission; it doubles per retry up to `max_timeout`. Seed 004 gives "
            "none. 20 ms is twice the worst clean-channel wait of seed 004's 2 Mb/s radio: a 84-byte upstream frame "
            "(0.9 ms with DIFS and up to 31 slots of backoff, 1.5 ms), the ack queued behind the 1536-byte downstream "
            "MPDU on the air at the peer (6.65 ms + 0.67 ms of access) and its own 44-byte exchange (1.35 ms): 10.2 ms."
        ),
    )
    max_timeout: Time = Field(  # type: ignore[assignment]  # a default as written, validated as a value
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
    probe_interval: Time = Field(  # type: ignore[assignment]  # a default as written, validated as a value
        "50 ms",
        description="While on the modem, a probe frame over the radio this often keeps its ratio measured (seed 004 is silent; < 1 % of 2 Mb/s).",
    )
    sample_interval: Time = Field(  # type: ignore[assignment]  # a default as written, validated as a value
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
        False,
        description="Windows XP's bridge adapters in promiscuous mode (seed 000 §3, Fig. 10; forwarding = 'l2' only): "
        "a frame addressed to the bridge's own MAC is relayed to its other ports as well as delivered to it ('all frames "
        "received by this wireless adapter were forwarded to all the ports of switch 2'). Default false: such a frame "
        "goes to the node only (IEEE 802.1D-2004 §7.5).",
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
    signalling_delay: Time = Field(  # type: ignore[assignment]  # a default as written, validated as a value
        "1 ms", description="Call processing per UNI signalling message (SETUP, CONNECT), per switch; uncalibrated."
    )
    atmarp_server: bool = Field(
        False, description="Serve ATMARP (RFC 2225 §8.4) for the logical IP subnets of the hosts on this ATM network."
    )
    cross_connects: list[CrossConnect] = Field(
        default_factory=list,
        description="PVC cross-connects; none = join each PVC number that the `vcs` of exactly two of the switch's links list.",
    )


LaneService = Literal["lecs", "les", "bus"]
LANE_SERVICES: tuple[LaneService, ...] = ("lecs", "les", "bus")


class LaneServer(NodeBase):
    """LAN Emulation services (ATM Forum LANE v1): configuration, LE server, broadcast and unknown server."""

    role: Literal["lane-server"] = Field(description="Node kind.")
    services: list[LaneService] = Field(
        default_factory=lambda: list(LANE_SERVICES), description="Which LANE services this node runs."
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
    shortcut_time: Time = Field(  # type: ignore[assignment]  # a default as written, validated as a value
        "1 s",
        description="MPC-p2 Shortcut-Setup Frame Time: the window of those packets (af-mpoa-0087.000 §5.2.1: 1 s).",
    )


Node = Annotated[
    Host | Router | Bridge | AccessPoint | Switch | AtmSwitch | LaneServer | MpoaServer,
    Field(discriminator="role"),
]

NODE_ROLES = ("host", "router", "bridge", "ap", "ap-router", "switch", "atm-switch", "lane-server", "mpoa-server")
