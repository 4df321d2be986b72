"""The ``[[link]]`` tables (Ethernet, 802.11, serial lines, ATM; ``type`` picks the
kind) and the impairments a link may carry (loss, shapers, queue limits)."""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import (
    BeforeValidator,
    Field,
    WithJsonSchema,
    model_validator,
)

from qoslab.scenario.base import U32_MAX, FieldProblem, NodeName, Strict, as_list
from qoslab.units import Rate, Ratio, Size, Time, format_rate

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
    return as_list(value)


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
    shaper: Annotated[list[Shaper], BeforeValidator(as_list)] = Field(
        default_factory=list, description="Rate limits (token buckets), one table or a list, each with a direction."
    )
    delay: Time = Field(  # type: ignore[assignment]  # a default as written, validated as a value
        "0 s",
        description="One-way propagation delay, e.g. '1 ms'. On a wifi link: the air's, at most a slot's worth "
        "(the 802.11 MAC's timeouts budget it inside aSlotTime), e.g. '1 us' for 300 m.",
    )


TwoEnds = Annotated[list[NodeName], Field(min_length=2, max_length=2)]


class Ethernet(LinkBase):
    """A point-to-point Ethernet (IEEE 802.3) link, full or half duplex."""

    type: Literal["ethernet"] = Field(description="Link kind.")
    jitter: Time = Field(  # type: ignore[assignment]  # a default as written, validated as a value
        "0 s",
        ge=0,
        description="Jitter, e.g. '2 ms': each frame's one-way delay is delay + U, U drawn uniformly from "
        "[0, jitter] from the direction's own random stream (not the loss model's); frames never overtake "
        "each other (a line does not reorder). Default 0: the delay is constant.",
    )
    rate: Rate = Field("100 Mbps", description="Line rate: '10 Mbps', '100 Mbps', '1 Gbps'.")  # type: ignore[assignment]  # a default as written, validated as a value
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
    beacon_interval: Time = Field(  # type: ignore[assignment]  # a default as written, validated as a value
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
        # The rule is the plan's (qoslab_plan::WifiStandard::preamble_problem), asked of the
        # core so that the scenario and a hand-written plan are refused by one statement.
        from qoslab._core import wifi_preamble_problem

        problem = wifi_preamble_problem(self.standard, self.preamble)
        if problem is not None:
            raise FieldProblem("preamble", problem, expected="'long'", found=repr(self.preamble))
        for member, kind in self.preambles.items():
            problem = wifi_preamble_problem(self.standard, kind)
            if problem is not None:
                raise FieldProblem(f"preambles.{member}", problem, expected="'long'", found=repr(kind))
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
    jitter: Time = Field(  # type: ignore[assignment]  # a default as written, validated as a value
        "0 s",
        ge=0,
        description="Jitter, e.g. '2 ms': each frame's one-way delay is delay + U, U drawn uniformly from "
        "[0, jitter] from the direction's own random stream (not the loss model's); frames never overtake "
        "each other (a line does not reorder). Default 0: the delay is constant.",
    )
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
