"""The ``[[tunnel]]`` tables: OpenVPN, PPPoE, PPTP, IPsec and GRE; ``type`` picks the kind."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import (
    BeforeValidator,
    Field,
    model_validator,
)

from qoslab.scenario.base import U16_MAX, FieldProblem, NodeName, Strict
from qoslab.units import Size

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
