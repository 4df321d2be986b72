"""What every table of the scenario language shares: the strict base model, node names,
and the problem a table's own check raises at one of its keys."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
)


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


def ip_payload_fits(payload: int, what: str) -> None:
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


def as_list(value: Any) -> Any:
    """Accept one item where a list is expected (``address = "10.0.0.1/24"``)."""
    return [value] if value is not None and not isinstance(value, list) else value


class Strict(BaseModel):
    """Base of every table: unknown keys are errors, defaults are validated."""

    # strict: TOML is typed, so "1500" (a string) is not the integer 1500. Fields that
    # are parsed from text (units, IP addresses) say strict=False or parse first.
    model_config = ConfigDict(extra="forbid", populate_by_name=True, validate_default=True, strict=True)
