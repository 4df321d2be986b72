"""The STACK language of ``qoslab mtu``: layers from the physical link inward.

A stack is a ``/``-separated list of layers, each with optional options in
parentheses: ``ethernet/ipv4/udp/openvpn(cipher=none,auth=sha1)/ethernet/pppoe/ipv4/tcp``.
A bare word inside the parentheses sets the layer's main option (``serial(8n1)`` sets
the character format, ``gre(pptp)`` the GRE variant).

This module knows, for every layer, its options (with their ranges) and which layers it
can carry, and turns a string into a checked list of :class:`Layer`. Every refusal names
the offending token, its column, and what would fit there.

>>> [layer.name for layer in parse_stack("eth/ip/udp")]
['ethernet', 'ipv4', 'udp']
>>> parse_stack("serial(8n1)/slip/ipv4")[0].options["format"]
'8n1'
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import Enum

from qoslab.errors import InputError, Problem, did_you_mean

SOURCE = "STACK"


class Role(str, Enum):
    """Where a layer sits in a stack."""

    PHYSICAL = "physical"  # the line itself: serial characters, ATM cells
    ADAPTATION = "adaptation"  # AAL5: frames to cells
    LINK = "link"  # frames that carry a network packet: Ethernet, PPP, SLIP, LLC/SNAP
    NETWORK = "network"  # IPv4
    TRANSPORT = "transport"  # UDP, TCP, ICMP
    TUNNEL = "tunnel"  # carried by IP or UDP/TCP, carries frames or packets


@dataclass(frozen=True)
class OptionSpec:
    """One option of a layer: its values and default."""

    name: str
    doc: str
    choices: tuple[str, ...] | None = None
    minimum: int | None = None
    maximum: int | None = None
    pattern: str | None = None  # a regular expression the value must match
    pattern_doc: str | None = None
    default: str | int | None = None

    def expected(self) -> str:
        if self.choices:
            return "one of " + ", ".join(repr(c) for c in self.choices)
        if self.minimum is not None:
            return f"an integer from {self.minimum} to {self.maximum}"
        return self.pattern_doc or "a value"

    def coerce(self, raw: str) -> str | int | None:
        """The value for ``raw``, or None if it does not fit."""
        if self.choices:
            value = raw.lower()
            return value if value in self.choices else None
        if self.minimum is not None:
            try:
                number = int(raw, 0)
            except ValueError:
                return None
            return number if self.minimum <= number <= (self.maximum or number) else None
        if self.pattern:
            return raw.lower() if re.fullmatch(self.pattern, raw, re.IGNORECASE) else None
        return raw


@dataclass(frozen=True)
class LayerSpec:
    """What a layer is: its role, options, and which layers it can carry."""

    name: str
    role: Role
    doc: str
    carries: tuple[str, ...]
    aliases: tuple[str, ...] = ()
    options: tuple[OptionSpec, ...] = ()
    positional: str | None = None  # the option a bare word sets
    default_mtu: int | None = None  # MTU when this is the outermost interface
    max_mtu: int | None = None
    mtu_source: str | None = None  # the standard that sets default_mtu

    def option(self, name: str) -> OptionSpec | None:
        return next((o for o in self.options if o.name == name), None)


def _mtu_option(maximum: int) -> OptionSpec:
    return OptionSpec(
        "mtu",
        "The interface's configured MTU; by default the standard's (outermost) or the largest that fits (inside a tunnel).",
        minimum=68,  # RFC 791: every host must accept 68-byte datagrams
        maximum=maximum,
    )


_IPSEC_CIPHERS = ("null", "3des-cbc", "aes-128-cbc", "aes-192-cbc", "aes-256-cbc", "aes-128-gcm", "aes-256-gcm")
_IPSEC_AUTHS = ("none", "hmac-md5-96", "hmac-sha1-96", "hmac-sha256-128")
_IPSEC_OPTIONS = (
    OptionSpec(
        "mode",
        "transport (protects the payload) or tunnel (a new outer IPv4 header).",
        ("transport", "tunnel"),
        default="tunnel",
    ),
    OptionSpec("cipher", "Encryption transform (RFC 2410, 2451, 3602, 4106).", _IPSEC_CIPHERS, default="aes-128-cbc"),
    OptionSpec("auth", "Integrity transform (RFC 2403, 2404, 4868).", _IPSEC_AUTHS, default="hmac-sha1-96"),
)

LAYERS: tuple[LayerSpec, ...] = (
    LayerSpec(
        "ethernet",
        Role.LINK,
        "Ethernet II (IEEE 802.3): 14-byte header and 4-byte FCS; as the physical link, also preamble, SFD, "
        "padding to 64 bytes and the inter-frame gap. Inside a tunnel (a TAP device) it carries no FCS.",
        carries=("ipv4", "pppoe"),
        aliases=("eth", "ether", "802.3"),
        options=(
            _mtu_option(9216),
            OptionSpec("fcs", "Count the 4-byte FCS (default: yes on a real link, no inside a tunnel).", ("yes", "no")),
        ),
        default_mtu=1500,
        max_mtu=9216,
        mtu_source="IEEE 802.3 §3.2.7: 1500-byte MAC client data",
    ),
    LayerSpec(
        "wifi",
        Role.LINK,
        "IEEE 802.11 data frame: 24-byte MAC header (30 with four addresses), LLC/SNAP (RFC 1042), FCS, and the "
        "security encapsulation (WEP IV/ICV, TKIP, CCMP).",
        carries=("ipv4", "pppoe"),
        aliases=("802.11", "dot11", "wlan"),
        options=(
            _mtu_option(2296),
            OptionSpec(
                "security",
                "Frame protection.",
                ("open", "wep-40", "wep-64", "wep-104", "wep-128", "tkip", "ccmp"),
                default="open",
            ),
            OptionSpec("addresses", "3 (station to AP) or 4 (WDS) address fields.", minimum=3, maximum=4, default=3),
        ),
        default_mtu=1500,
        max_mtu=2296,  # IEEE 802.11 MSDU of 2304 bytes less the 8-byte LLC/SNAP header
        mtu_source="1500 as bridged to Ethernet (IEEE 802.11 allows an MSDU of 2304 bytes)",
    ),
    LayerSpec(
        "serial",
        Role.PHYSICAL,
        "Asynchronous serial line: every byte framed by a start bit, data bits, optional parity and stop bits.",
        carries=("slip", "cslip", "ppp"),
        aliases=("async", "uart"),
        options=(
            OptionSpec(
                "format",
                "Character format: data bits, parity (n/e/o/m/s), stop bits.",
                pattern=r"[5-8][neoms](1|1\.5|2)",
                pattern_doc="a character format such as '8n1', '7e1' or '8n2'",
                default="8n1",
            ),
            OptionSpec("rate", "Line rate in bit/s, for the time on the line.", minimum=50, maximum=10_000_000),
        ),
        positional="format",
    ),
    LayerSpec(
        "sync",
        Role.PHYSICAL,
        "Synchronous serial line (leased line, ISDN B channel, E1/T1): PPP in bit-synchronous HDLC framing (RFC 1662 §5), "
        "8 bits per octet, no start or stop bits, a zero bit inserted after every five ones.",
        carries=("ppp",),
        aliases=("hdlc-sync", "leased-line"),
        options=(
            OptionSpec(
                "rate",
                "Line rate in bit/s, for the time on the line (64000 for an ISDN B channel, 2048000 for E1).",
                minimum=300,
                maximum=100_000_000,
            ),
        ),
    ),
    LayerSpec(
        "slip",
        Role.LINK,
        "SLIP (RFC 1055): END-delimited frames with END and ESC escaped.",
        carries=("ipv4",),
        options=(_mtu_option(65535),),
        default_mtu=1006,
        max_mtu=65535,
        mtu_source="RFC 1055: 1006 bytes, the Berkeley UNIX SLIP drivers' maximum",
    ),
    LayerSpec(
        "cslip",
        Role.LINK,
        "Compressed SLIP: SLIP with Van Jacobson TCP/IP header compression (RFC 1144).",
        carries=("ipv4",),
        aliases=("vj",),
        options=(_mtu_option(65535),),
        default_mtu=1006,
        max_mtu=65535,
        mtu_source="RFC 1055 (the SLIP maximum; RFC 1144 §5.2 suggests smaller for interactive use)",
    ),
    LayerSpec(
        "ppp",
        Role.LINK,
        "PPP (RFC 1661). Over a serial line in HDLC-like framing (RFC 1662: flags, address, control, FCS-16, octet "
        "stuffing); inside PPTP's GRE, bare, with address/control and protocol-field compression as seed 002 counts it.",
        carries=("ipv4",),
        options=(
            _mtu_option(65535),
            OptionSpec("pfc", "Protocol-field compression (RFC 1661 §6.5).", ("yes", "no")),
            OptionSpec("acfc", "Address-and-control-field compression (RFC 1661 §6.6).", ("yes", "no")),
            OptionSpec(
                "fcs",
                "Frame check sequence in bits over a serial line: 16 (RFC 1662 §C.2) or 32 (RFC 1570 §2.1).",
                ("16", "32"),
                default="16",
            ),
            OptionSpec(
                "accm",
                "Async-Control-Character-Map of HDLC-like framing (RFC 1662 §7.1): the control characters escaped. "
                "RFC 1662's default before negotiation is 0xffffffff; pppd negotiates 0 (asyncmap 0), the default here.",
                pattern=r"0x[0-9a-f]{1,8}",
                pattern_doc="a 32-bit mask in hex such as '0x00000000' or '0xffffffff'",
                default="0x00000000",
            ),
        ),
        default_mtu=1500,
        max_mtu=65535,
        mtu_source="RFC 1661 §6.1: default MRU 1500",
    ),
    LayerSpec(
        "atm",
        Role.PHYSICAL,
        "ATM cells (ITU-T I.361): 5-byte header and 48-byte payload.",
        carries=("aal5",),
        options=(
            OptionSpec("header", "UNI or NNI cell header.", ("uni", "nni"), default="uni"),
            OptionSpec("vpi", "Virtual path identifier.", minimum=0, maximum=4095, default=0),
            OptionSpec("vci", "Virtual channel identifier.", minimum=0, maximum=65535, default=32),
        ),
    ),
    LayerSpec(
        "aal5",
        Role.ADAPTATION,
        "AAL5 CPCS-PDU (ITU-T I.363.5): payload padded so that with the 8-byte trailer (UU, CPI, length, CRC-32) it "
        "fills whole cells.",
        carries=("llc-snap", "vc-mux", "lane"),
    ),
    LayerSpec(
        "llc-snap",
        Role.LINK,
        "RFC 2684 LLC/SNAP encapsulation: 8 bytes (AA-AA-03, OUI, EtherType) routed, 10 bridged.",
        carries=("ipv4", "ethernet"),
        aliases=("llc", "snap", "rfc2684"),
        options=(_mtu_option(65527),),
        default_mtu=9180,
        max_mtu=65527,  # AAL5's 65,535-byte SDU less the 8-byte LLC/SNAP header
        mtu_source="RFC 2225 §5: the default MTU of Classical IP over ATM",
    ),
    LayerSpec(
        "vc-mux",
        Role.LINK,
        "RFC 2684 VC multiplexing: no header when routed, a 2-byte pad when bridged.",
        carries=("ipv4", "ethernet"),
        aliases=("vcmux", "null-encap"),
        options=(_mtu_option(65535),),
        default_mtu=9180,
        max_mtu=65535,
        mtu_source="RFC 2225 §5: the default MTU of Classical IP over ATM",
    ),
    LayerSpec(
        "lane",
        Role.LINK,
        "ATM Forum LANE v1 data frame: the 2-byte LE header (LECID) before an Ethernet frame without FCS.",
        carries=("ethernet",),
        aliases=("le",),
    ),
    LayerSpec(
        "pppoe",
        Role.LINK,
        "PPPoE session (RFC 2516): 6-byte header and the 2-byte PPP protocol field.",
        carries=("ipv4",),
        options=(_mtu_option(1492),),
        default_mtu=1492,
        max_mtu=1492,
        mtu_source="RFC 2516 §7: MRU no more than 1492",
    ),
    LayerSpec(
        "ipv4",
        Role.NETWORK,
        "IPv4 (RFC 791): a 20-byte header, more with options.",
        carries=("udp", "tcp", "icmp", "esp", "ah", "gre", "ipv4"),
        aliases=("ip", "ip4", "ipip"),
        options=(OptionSpec("options", "Bytes of IP options (a multiple of 4).", minimum=0, maximum=40, default=0),),
    ),
    LayerSpec(
        "udp",
        Role.TRANSPORT,
        "UDP (RFC 768): an 8-byte header.",
        carries=("openvpn",),
        options=(OptionSpec("port", "Destination port.", minimum=1, maximum=65535),),
    ),
    LayerSpec(
        "tcp",
        Role.TRANSPORT,
        "TCP (RFC 9293): a 20-byte header, more with options (timestamps add 12, RFC 7323).",
        carries=("openvpn",),
        options=(
            OptionSpec(
                "timestamps", "Carry the timestamps option on every segment (RFC 7323 §3).", ("yes", "no"), default="no"
            ),
            OptionSpec("port", "Destination port.", minimum=1, maximum=65535),
        ),
    ),
    LayerSpec("icmp", Role.TRANSPORT, "ICMP echo (RFC 792): an 8-byte header.", carries=()),
    LayerSpec(
        "openvpn",
        Role.TUNNEL,
        "OpenVPN data channel over UDP (or TCP with a 2-byte length). TAP mode when it carries Ethernet, TUN when IPv4.",
        carries=("ethernet", "ipv4"),
        aliases=("ovpn",),
        options=(
            OptionSpec(
                "cipher",
                "Data-channel cipher.",
                ("none", "bf-cbc", "aes-128-cbc", "aes-256-cbc", "aes-128-gcm", "aes-256-gcm"),
                default="none",
            ),
            OptionSpec(
                "auth",
                "HMAC digest (ignored by the GCM ciphers).",
                ("none", "sha1", "sha256", "sha512"),
                default="sha1",
            ),
            OptionSpec(
                "opcode",
                "P_DATA_V1 (1-byte opcode) or P_DATA_V2 (opcode and 3-byte peer id); TLS mode only.",
                ("v1", "v2"),
                default="v2",
            ),
            OptionSpec(
                "key",
                "How the data channel's keys come: 'tls' (negotiated, an opcode on every packet) or 'static' (a "
                "pre-shared key, --secret: no opcode, and the packet ID is the 8-byte long form, id and time; GCM not modelled).",
                ("tls", "static"),
                default="tls",
            ),
            OptionSpec(
                "replay",
                "Send the 4-byte packet ID of replay protection. OpenVPN does by default; seed 002 counts none, and "
                "the default here follows the seed so that its MTUs come out.",
                ("yes", "no"),
                default="no",
            ),
            OptionSpec(
                "fragment",
                "OpenVPN's internal fragmentation (--fragment): the largest UDP payload it sends.",
                minimum=68,
                maximum=65535,
            ),
        ),
    ),
    LayerSpec(
        "gre",
        Role.TUNNEL,
        "GRE (RFC 2784, RFC 2890) or PPTP's enhanced GRE (RFC 2637 §4.1: key, sequence; 12 bytes).",
        carries=("ppp", "ipv4", "ethernet"),
        options=(
            OptionSpec("variant", "plain GRE or PPTP's enhanced GRE.", ("plain", "pptp"), default="plain"),
            OptionSpec("ack", "Enhanced GRE: carry the 4-byte acknowledgement number.", ("yes", "no"), default="no"),
            OptionSpec("key", "Plain GRE: carry a 4-byte key (RFC 2890).", ("yes", "no"), default="no"),
            OptionSpec("seq", "Plain GRE: carry a 4-byte sequence number (RFC 2890).", ("yes", "no"), default="no"),
        ),
        positional="variant",
    ),
    LayerSpec(
        "esp",
        Role.TUNNEL,
        "IPsec ESP (RFC 4303): SPI, sequence, IV, payload padded to the cipher's block, pad length, next header, ICV.",
        carries=("udp", "tcp", "icmp", "gre", "ipv4"),
        options=_IPSEC_OPTIONS + (_mtu_option(65535),),
        positional="mode",
    ),
    LayerSpec(
        "ah",
        Role.TUNNEL,
        "IPsec AH (RFC 4302): 12 bytes and the ICV, authenticating the IP header's immutable fields.",
        carries=("udp", "tcp", "icmp", "gre", "ipv4"),
        options=(
            OptionSpec("mode", "transport or tunnel.", ("transport", "tunnel"), default="tunnel"),
            OptionSpec("auth", "Integrity transform.", _IPSEC_AUTHS[1:], default="hmac-sha1-96"),
            _mtu_option(65535),
        ),
        positional="mode",
    ),
)

BY_NAME: dict[str, LayerSpec] = {}
for _spec in LAYERS:
    BY_NAME[_spec.name] = _spec
    for _alias in _spec.aliases:
        BY_NAME[_alias] = _spec

OUTERMOST = tuple(s.name for s in LAYERS if s.role in (Role.PHYSICAL,) or s.name in ("ethernet", "wifi"))


@dataclass
class Layer:
    """One layer of a parsed stack: its spec, its options, where it stood in the string."""

    spec: LayerSpec
    options: dict[str, str | int] = field(default_factory=dict)
    token: str = ""
    column: int = 1  # 1-based column of the token in the stack string

    @property
    def name(self) -> str:
        return self.spec.name

    def option(self, name: str) -> str | int | None:
        """The option's value, or its default."""
        if name in self.options:
            return self.options[name]
        spec = self.spec.option(name)
        return spec.default if spec else None

    def label(self) -> str:
        """The layer as it would be written back, with the options that were given."""
        if not self.options:
            return self.name
        inner = ",".join(f"{k}={v}" for k, v in self.options.items())
        return f"{self.name}({inner})"


_TOKEN = re.compile(r"\s*([A-Za-z0-9.\-_]+)\s*(?:\((.*?)\))?\s*$")


def _split(stack: str) -> list[tuple[str, int]]:
    """Splits on '/' outside parentheses; returns (token, 1-based column)."""
    parts: list[tuple[str, int]] = []
    depth, start = 0, 0
    for i, ch in enumerate(stack):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "/" and depth == 0:
            parts.append((stack[start:i], start + 1))
            start = i + 1
    parts.append((stack[start:], start + 1))
    return parts


def _problem(
    stack: str, column: int, key: str, message: str, expected: str, found: str, hint: str | None = None
) -> InputError:
    caret = f"{stack}\n    {' ' * (column - 1)}^"
    return InputError(
        SOURCE,
        [Problem(message, key=key, expected=expected, found=found, line=1, column=column, hint=hint or None)],
    ).with_context(caret)


MAX_LAYERS = 64
"""More layers than any real stack has: each tunnel adds about four (outer IPv4, UDP,
the tunnel, inner Ethernet), and 16 tunnels deep leave no room for a 68-byte datagram
(RFC 791 §3.2) inside 1500 bytes anyway."""


def parse_stack(stack: str) -> list[Layer]:
    """Parses and checks a stack string.

    Raises
    ------
    InputError
        For an unknown layer or option, an option value out of range, or an order that
        cannot be (IPv4 over nothing, TCP under IPv4).

    >>> parse_stack("ethernet/tcp")
    Traceback (most recent call last):
    ...
    qoslab.errors.InputError: STACK:1:10: layer 2 'tcp': 'ethernet' cannot carry 'tcp'
        expected: one of 'ipv4', 'pppoe'
        found:    'tcp'
    ...
    """
    if not stack.strip():
        raise _problem(stack, 1, "layer 1", "empty stack", "layers such as 'ethernet/ipv4/tcp'", "''")
    count = len(_split(stack))
    if count > MAX_LAYERS:
        raise _problem(stack, 1, "stack", f"a stack of {count} layers", f"at most {MAX_LAYERS} layers", str(count))
    layers: list[Layer] = []
    for index, (token, column) in enumerate(_split(stack), start=1):
        key = f"layer {index}"
        stripped = token.strip()
        column += len(token) - len(token.lstrip())
        match = _TOKEN.match(token)
        if not stripped or not match:
            raise _problem(
                stack, column, key, "not a layer", "a layer name with optional '(option=value,...)'", repr(stripped)
            )
        word, args = match.group(1), match.group(2)
        spec = BY_NAME.get(word.lower())
        if spec is None:
            raise _problem(
                stack,
                column,
                key,
                "unknown layer",
                "one of " + ", ".join(repr(s.name) for s in LAYERS),
                repr(word),
                did_you_mean(word.lower(), list(BY_NAME)),
            )
        layer = Layer(spec, token=stripped, column=column)
        if args is not None:
            _parse_options(stack, layer, key, args, column + token.lstrip().index("(") + 1)
            _check_static_key(stack, layer, key)
        _check_order(stack, layers, layer, key)
        layers.append(layer)
    return layers


def _parse_options(stack: str, layer: Layer, key: str, args: str, column: int) -> None:
    spec = layer.spec
    offset = 0
    for raw in args.split(","):
        col = column + offset + (len(raw) - len(raw.lstrip()))
        offset += len(raw) + 1
        item = raw.strip()
        if not item:
            continue
        if "=" in item:
            name, value = (s.strip() for s in item.split("=", 1))
        elif spec.positional:
            name, value = spec.positional, item
        else:
            option = spec.option(item.lower())
            if option and option.choices and "yes" in option.choices:
                name, value = item.lower(), "yes"
            else:
                names = ", ".join(repr(o.name) for o in spec.options) or "none"
                raise _problem(
                    stack,
                    col,
                    f"{key} '{spec.name}'",
                    "option needs a value",
                    f"name=value, with a name among {names}",
                    repr(item),
                )
        option = spec.option(name.lower())
        if option is None:
            option_names = [o.name for o in spec.options]
            raise _problem(
                stack,
                col,
                f"{key} '{spec.name}'",
                "unknown option",
                ("one of " + ", ".join(repr(n) for n in option_names))
                if option_names
                else f"no options: '{spec.name}' takes none",
                repr(name),
                did_you_mean(name.lower(), option_names),
            )
        coerced = option.coerce(value)
        if coerced is None:
            hint = did_you_mean(value.lower(), list(option.choices)) if option.choices else None
            raise _problem(
                stack,
                col,
                f"{key} '{spec.name}' option '{option.name}'",
                "value out of range",
                option.expected(),
                repr(value),
                hint,
            )
        layer.options[option.name] = coerced


def _check_static_key(stack: str, layer: Layer, key: str) -> None:
    """An OpenVPN static key (--secret) sends no opcode, and its GCM layout is not modelled."""
    if layer.spec.name != "openvpn" or layer.options.get("key") != "static":
        return
    where = f"{key} 'openvpn'"
    if "opcode" in layer.options:
        raise _problem(
            stack, layer.column, where, "a static key sends no opcode", "no opcode= with key=static", "opcode="
        )
    cipher = str(layer.options.get("cipher", ""))
    if cipher.endswith("-gcm"):
        raise _problem(
            stack,
            layer.column,
            where,
            "a static key's GCM layout is not modelled",
            "cipher none, bf-cbc, aes-128-cbc or aes-256-cbc with key=static",
            repr(cipher),
        )


def _check_order(stack: str, below: list[Layer], layer: Layer, key: str) -> None:
    if not below:
        if layer.name not in OUTERMOST:
            raise _problem(
                stack,
                layer.column,
                key,
                f"'{layer.name}' cannot be the outermost layer: it needs a link to run over",
                "a physical link first: " + ", ".join(repr(n) for n in OUTERMOST),
                repr(layer.token),
                f"try 'ethernet/{stack.strip()}'" if layer.spec.role in (Role.NETWORK, Role.TRANSPORT) else None,
            )
        return
    outer = below[-1]
    if layer.name not in outer.spec.carries:
        if outer.spec.carries:
            expected = "one of " + ", ".join(repr(n) for n in outer.spec.carries)
            hint = None
            if layer.spec.role == Role.TRANSPORT and outer.spec.role != Role.NETWORK:
                hint = f"{layer.name} runs over IP: '{outer.name}/ipv4/{layer.name}'"
            elif layer.spec.role == Role.NETWORK and outer.spec.role == Role.TRANSPORT:
                hint = "IP does not run over a transport protocol; did you mean a tunnel such as 'udp/openvpn/ipv4'?"
        else:
            expected, hint = f"nothing: '{outer.name}' ends the stack", None
        raise _problem(
            stack, layer.column, key, f"'{outer.name}' cannot carry '{layer.name}'", expected, repr(layer.token), hint
        )
