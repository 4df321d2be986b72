"""Quantities as network people write them: ``"11 Mbps"``, ``"1.5 ms"``, ``"64 KiB"``, ``"1 %"``.

Each parser turns a spelling into an SI base value, exactly (decimal arithmetic, no
float rounding):

========  ===============================================  ======================
kind      accepted units                                   result
========  ===============================================  ======================
rate      ``bps b/s bit/s`` (bits), ``Bps B/s`` (bytes),   bits per second, int
          each with an SI prefix ``k M G T`` (``K`` = k)
time      ``ns us µs ms s sec min h``                      nanoseconds, int
size      ``B byte bytes``; SI ``kB MB GB`` (10³ᵏ, ``KB``  bytes, int
          = kB); IEC ``KiB MiB GiB`` (2¹⁰ᵏ)
ratio     ``%`` or a bare number in [0, 1]                 a fraction, float
========  ===============================================  ======================

Bare numbers: a *size* without a unit is bytes (MTUs and frame sizes are always written
so); a *ratio* without ``%`` is a fraction (``0.01`` is 1 %). A *rate* or a *time*
without a unit is refused: ``11`` could be Mb/s or b/s, ``10`` could be ms or s (a bare
``0`` time is accepted: zero in any unit).

Lower-case ``m`` before ``bps`` is read as mega (``"2 mbps"``): nobody means
millibits. In sizes and rates, ``b`` is a bit and ``B`` a byte.

The ``Rate``, ``Time``, ``Size`` and ``Ratio`` annotated types plug these parsers into
pydantic models; they serialize back to JSON as the human spelling.

>>> parse_rate("155.52 Mbps")
155520000
>>> parse_time("1.5 ms")
1500000
>>> parse_size("64 KiB")
65536
>>> parse_ratio("1 %")
0.01
>>> format_rate(11_000_000), format_time(40_000_000), format_size(16384)
('11 Mbps', '40 ms', '16 KiB')
"""

from __future__ import annotations

import re
from decimal import MAX_EMAX, MIN_EMIN, Decimal, InvalidOperation, localcontext
from typing import Annotated, Any

from pydantic import BeforeValidator, PlainSerializer, WithJsonSchema

__all__ = [
    "UnitError",
    "parse_rate",
    "parse_time",
    "parse_size",
    "parse_ratio",
    "format_rate",
    "format_time",
    "format_size",
    "format_ratio",
    "Rate",
    "Time",
    "Size",
    "Ratio",
]


class UnitError(ValueError):
    """A quantity that cannot be read.

    Carries what was expected, what was found and a hint, so the scenario loader can
    report them separately.

    >>> try:
    ...     parse_rate("11 Mhz")
    ... except UnitError as err:
    ...     print(err.expected, "|", err.found)
    a rate such as '11 Mbps' | '11 Mhz'
    """

    def __init__(self, message: str, *, expected: str, found: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.expected = expected
        self.found = found
        self.hint = hint

    def __str__(self) -> str:  # pydantic shows "Value error, <this>"
        return self.message


_NUMBER = r"(?P<num>[+-]?(?:\d+(?:_\d+)*(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?)"
_QUANTITY = re.compile(rf"^\s*{_NUMBER}\s*(?P<unit>[^\s\d].*?)?\s*$")

_SI = {"": 0, "k": 3, "K": 3, "M": 6, "m": 6, "G": 9, "g": 9, "T": 12, "t": 12}

_RATE_UNITS: dict[str, Decimal] = {}
for _p, _e in _SI.items():
    for _u in ("bps", "b/s", "bit/s", "bits/s", "bit/sec"):
        _RATE_UNITS[_p + _u] = Decimal(10) ** _e
    for _u in ("Bps", "B/s", "byte/s", "bytes/s"):
        _RATE_UNITS[_p + _u] = Decimal(8) * Decimal(10) ** _e
for _u in ("Kbit/s", "kbit/s", "Mbit/s", "Gbit/s"):
    _RATE_UNITS[_u] = Decimal(10) ** _SI[_u[0]]

_TIME_UNITS: dict[str, Decimal] = {
    "ns": Decimal(1),
    "us": Decimal(10**3),
    "µs": Decimal(10**3),
    "μs": Decimal(10**3),
    "ms": Decimal(10**6),
    "s": Decimal(10**9),
    "sec": Decimal(10**9),
    "secs": Decimal(10**9),
    "second": Decimal(10**9),
    "seconds": Decimal(10**9),
    "min": Decimal(60 * 10**9),
    "mins": Decimal(60 * 10**9),
    "minute": Decimal(60 * 10**9),
    "minutes": Decimal(60 * 10**9),
    "h": Decimal(3600 * 10**9),
    "hour": Decimal(3600 * 10**9),
    "hours": Decimal(3600 * 10**9),
}

_SIZE_UNITS: dict[str, Decimal] = {
    "B": Decimal(1),
    "byte": Decimal(1),
    "bytes": Decimal(1),
    "octet": Decimal(1),
    "octets": Decimal(1),
    "kB": Decimal(10**3),
    "KB": Decimal(10**3),
    "MB": Decimal(10**6),
    "GB": Decimal(10**9),
    "KiB": Decimal(2**10),
    "kiB": Decimal(2**10),
    "MiB": Decimal(2**20),
    "GiB": Decimal(2**30),
    "kbyte": Decimal(10**3),
    "kbytes": Decimal(10**3),
}

_RATE_EXPECTED = "a rate such as '11 Mbps'"
_TIME_EXPECTED = "a time such as '1.5 ms'"
_SIZE_EXPECTED = "a size such as '1500 B' or '64 KiB'"
_RATIO_EXPECTED = "a ratio such as '1 %' or 0.01"

_RATE_HINT = "units accepted: bps, kbps, Mbps, Gbps (also b/s, kb/s, Mbit/s…; Bps = bytes/s)"
_TIME_HINT = "units accepted: ns, us, ms, s, min, h"
_SIZE_HINT = "units accepted: B (bytes), kB, MB, GB (powers of 1000), KiB, MiB, GiB (powers of 1024)"


MAX_RATE_BPS = 2**64 - 1
"""The fastest rate the simulator takes: it counts bits per second in 64 bits
(crates/sim/src/config.rs, ``rate_bps: u64``)."""

MAX_TIME_NS = 2**62
"""The longest time the simulator takes, about 146 years: it counts nanoseconds in 64
bits (crates/sim/src/time.rs, 584 years), and a run adds a few times together (a
test's start, its duration, the drain after it), so each one alone is held to a
quarter of that range."""

MAX_SIZE_BYTES = 2**64 - 1
"""The largest size the simulator takes: it counts bytes in at most 64 bits."""


def _scaled(number: Decimal, factor: Decimal) -> Decimal:
    """``number`` × ``factor`` without the default context's exponent limit (a written
    '1e999999999 s' is refused by its size below, not by a decimal.Overflow)."""
    with localcontext() as ctx:
        ctx.Emax, ctx.Emin = MAX_EMAX, MIN_EMIN
        return number * factor


def _at_most(value: Decimal, limit: int, what: str, shown: str, original: Any, expected: str) -> Decimal:
    # Compared before any conversion to int: '1e999999999 s' must not build the integer.
    if value > limit:
        raise UnitError(
            f"{what} beyond what the simulator counts",
            expected=f"{expected.split(' such')[0]} of at most {shown}",
            found=_found(original),
        )
    return value


def _found(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return repr(value)


def _split(value: Any, expected: str, hint: str) -> tuple[Decimal, str]:
    """Number and unit of a quantity written as a string (or a bare number)."""
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise UnitError(f"not {expected.split(' such')[0]}", expected=expected, found=_found(value), hint=hint)
    if isinstance(value, (int, float)):
        return Decimal(str(value)), ""
    match = _QUANTITY.match(value)
    if not match:
        raise UnitError(
            f"cannot read {value!r} as {expected.split(' such')[0]}", expected=expected, found=_found(value), hint=hint
        )
    try:
        number = Decimal(match["num"].replace("_", ""))
    except InvalidOperation:  # pragma: no cover - the regex admits only numbers
        raise UnitError("bad number", expected=expected, found=_found(value), hint=hint) from None
    return number, (match["unit"] or "")


def _closest_unit(unit: str, units: dict[str, Decimal]) -> str | None:
    from difflib import get_close_matches

    close = get_close_matches(unit, list(units), n=1, cutoff=0.5)
    return close[0] if close else None


def _unit_hint(unit: str, units: dict[str, Decimal], base: str) -> str:
    close = _closest_unit(unit, units)
    return f"did you mean {close!r}? {base}" if close else base


def _integral(value: Decimal, what: str, original: Any, expected: str, hint: str) -> int:
    if value != value.to_integral_value():
        raise UnitError(
            f"{what} is not a whole number of base units",
            expected=expected,
            found=_found(original),
            hint=hint,
        )
    return int(value)


def parse_rate(value: Any) -> int:
    """A data rate in bits per second.

    Parameters
    ----------
    value:
        A string with a unit: ``"11 Mbps"``, ``"11Mb/s"``, ``"2 Mbit/s"``,
        ``"1200 bps"``, ``"64 kbps"``, ``"155.52 Mbps"``, ``"1 MB/s"`` (bytes: ×8).
        A bare number is refused: the unit is ambiguous.

    Returns
    -------
    int
        Bits per second.

    Raises
    ------
    UnitError
        If the unit is missing or unknown, or the rate is negative or fractional in b/s.

    Examples
    --------
    >>> parse_rate("11 Mbps"), parse_rate("11Mb/s"), parse_rate("2 Mbit/s")
    (11000000, 11000000, 2000000)
    >>> parse_rate("1200 bps"), parse_rate("64 kbps"), parse_rate("155.52 Mbps")
    (1200, 64000, 155520000)
    >>> parse_rate(11)
    Traceback (most recent call last):
    ...
    qoslab.units.UnitError: a rate needs a unit
    """
    number, unit = _split(value, _RATE_EXPECTED, _RATE_HINT)
    if not unit:
        raise UnitError(
            "a rate needs a unit",
            expected=_RATE_EXPECTED,
            found=_found(value),
            hint=f"write e.g. '{value} Mbps' or '{value} bps'; {_RATE_HINT}",
        )
    if unit not in _RATE_UNITS:
        raise UnitError(
            f"unknown rate unit {unit!r}",
            expected=_RATE_EXPECTED,
            found=_found(value),
            hint=_unit_hint(unit, _RATE_UNITS, _RATE_HINT),
        )
    if number < 0:
        raise UnitError("a rate cannot be negative", expected=_RATE_EXPECTED, found=_found(value))
    bps = _at_most(_scaled(number, _RATE_UNITS[unit]), MAX_RATE_BPS, "a rate", "2^64 - 1 bit/s", value, _RATE_EXPECTED)
    return _integral(bps, "the rate", value, _RATE_EXPECTED, "rates are whole bits per second")


def parse_time(value: Any) -> int:
    """A time or duration in nanoseconds.

    Parameters
    ----------
    value:
        A string with a unit: ``"1.5 ms"``, ``"10 s"``, ``"40ms"``, ``"2 us"``,
        ``"1 min"``. A bare number is refused (``10`` could be ms or s), except 0.

    Returns
    -------
    int
        Nanoseconds.

    Examples
    --------
    >>> parse_time("1.5 ms"), parse_time("10 s"), parse_time("40ms")
    (1500000, 10000000000, 40000000)
    >>> parse_time("2 us"), parse_time("1 min")
    (2000, 60000000000)
    """
    number, unit = _split(value, _TIME_EXPECTED, _TIME_HINT)
    if not unit and number == 0:
        return 0  # zero is zero in any unit
    if not unit:
        raise UnitError(
            "a time needs a unit",
            expected=_TIME_EXPECTED,
            found=_found(value),
            hint=f"write e.g. '{value} ms' or '{value} s'; {_TIME_HINT}",
        )
    if unit not in _TIME_UNITS:
        raise UnitError(
            f"unknown time unit {unit!r}",
            expected=_TIME_EXPECTED,
            found=_found(value),
            hint=_unit_hint(unit, _TIME_UNITS, _TIME_HINT),
        )
    if number < 0:
        raise UnitError("a time cannot be negative", expected=_TIME_EXPECTED, found=_found(value))
    ns = _at_most(
        _scaled(number, _TIME_UNITS[unit]), MAX_TIME_NS, "a time", "2^62 ns (about 146 years)", value, _TIME_EXPECTED
    )
    return _integral(ns, "the time", value, _TIME_EXPECTED, "times resolve to whole nanoseconds")


def parse_size(value: Any) -> int:
    """A size in bytes.

    Parameters
    ----------
    value:
        A string with a unit (``"64 KiB"``, ``"9180 B"``, ``"1500 bytes"``, ``"1 MB"``)
        or a bare integer, read as bytes.

    Returns
    -------
    int
        Bytes. ``kB``/``KB``/``MB``/``GB`` are powers of 1000; ``KiB``/``MiB``/``GiB``
        powers of 1024.

    Examples
    --------
    >>> parse_size("64 KiB"), parse_size("9180 B"), parse_size("1500 bytes")
    (65536, 9180, 1500)
    >>> parse_size("1 MB"), parse_size("16 KiB"), parse_size(1518)
    (1000000, 16384, 1518)
    """
    number, unit = _split(value, _SIZE_EXPECTED, _SIZE_HINT)
    if unit and unit not in _SIZE_UNITS:
        hint = _SIZE_HINT
        if unit in ("b", "bit", "bits", "kb", "Kb", "Mb", "kbit", "Mbit"):
            hint = "sizes are in bytes ('B'); 'b' is a bit. " + _SIZE_HINT
        else:
            hint = _unit_hint(unit, _SIZE_UNITS, _SIZE_HINT)
        raise UnitError(f"unknown size unit {unit!r}", expected=_SIZE_EXPECTED, found=_found(value), hint=hint)
    if number < 0:
        raise UnitError("a size cannot be negative", expected=_SIZE_EXPECTED, found=_found(value))
    size = _at_most(
        _scaled(number, _SIZE_UNITS.get(unit, Decimal(1))),
        MAX_SIZE_BYTES,
        "a size",
        "2^64 - 1 bytes",
        value,
        _SIZE_EXPECTED,
    )
    return _integral(size, "the size", value, _SIZE_EXPECTED, "sizes are whole bytes")


def parse_ratio(value: Any) -> float:
    """A ratio (loss rate, error rate) as a fraction in [0, 1].

    Parameters
    ----------
    value:
        ``"1 %"``, ``"0.5%"`` or a bare number in [0, 1] (``0.01``).

    Examples
    --------
    >>> parse_ratio("1 %"), parse_ratio("0.5%"), parse_ratio(0.01), parse_ratio(0)
    (0.01, 0.005, 0.01, 0.0)
    """
    number, unit = _split(value, _RATIO_EXPECTED, "write a percentage ('1 %') or a fraction (0.01)")
    if unit == "%":
        number = number / 100
    elif unit:
        raise UnitError(
            f"unknown ratio unit {unit!r}",
            expected=_RATIO_EXPECTED,
            found=_found(value),
            hint="write a percentage ('1 %') or a fraction (0.01)",
        )
    if not 0 <= number <= 1:
        hint = f"did you mean '{value} %'?" if not unit and 1 < number <= 100 else None
        raise UnitError(
            "a ratio must lie between 0 and 1 (0 % and 100 %)", expected=_RATIO_EXPECTED, found=_found(value), hint=hint
        )
    return float(number)


def _format(value: int, steps: list[tuple[int, str]], base_unit: str) -> str:
    # The largest unit not above the value; the quotient is exact (a power of ten).
    for factor, unit in steps:
        if value >= factor:
            text = format((Decimal(value) / Decimal(factor)).normalize(), "f")
            return f"{text} {unit}"
    return f"{value} {base_unit}"


def format_rate(bps: int) -> str:
    """A rate in bits per second as people write it, exactly (``parse_rate`` reads it back).

    >>> format_rate(11_000_000), format_rate(1200), format_rate(155_520_000), format_rate(300)
    ('11 Mbps', '1.2 kbps', '155.52 Mbps', '300 bps')
    """
    return _format(bps, [(10**9, "Gbps"), (10**6, "Mbps"), (10**3, "kbps")], "bps")


def format_time(ns: int) -> str:
    """A time in nanoseconds as people write it, exactly (``parse_time`` reads it back).

    >>> format_time(1_500_000), format_time(10**10), format_time(2000), format_time(7)
    ('1.5 ms', '10 s', '2 us', '7 ns')
    """
    return _format(ns, [(10**9, "s"), (10**6, "ms"), (10**3, "us")], "ns")


def format_size(n: int) -> str:
    """A size in bytes: IEC or SI units when a whole number of them, else bytes.

    >>> format_size(16384), format_size(65536), format_size(1500), format_size(10**7)
    ('16 KiB', '64 KiB', '1500 B', '10 MB')
    """
    for factor, unit in ((2**30, "GiB"), (2**20, "MiB"), (2**10, "KiB"), (10**9, "GB"), (10**6, "MB"), (10**3, "kB")):
        if n and n % factor == 0:
            return f"{n // factor} {unit}"
    return f"{n} B"


def format_ratio(fraction: float) -> str:
    """A fraction as a percentage.

    >>> format_ratio(0.01), format_ratio(0.125)
    ('1 %', '12.5 %')
    """
    text = format((Decimal(repr(fraction)) * 100).normalize(), "f")
    return f"{text} %"


def _schema(kind: str, example: str, description: str, allow_int: bool = False) -> WithJsonSchema:
    schema: dict[str, Any] = {"type": "string", "description": description, "examples": [example]}
    if allow_int:
        schema = {
            "anyOf": [{"type": "integer", "minimum": 0}, {"type": "string"}],
            "description": description,
            "examples": [example],
        }
    if kind == "ratio":
        schema = {
            "anyOf": [{"type": "number", "minimum": 0, "maximum": 1}, {"type": "string"}],
            "description": description,
            "examples": [example],
        }
    return WithJsonSchema(schema)


Rate = Annotated[
    int,
    BeforeValidator(parse_rate),
    PlainSerializer(format_rate, return_type=str, when_used="json"),
    _schema("rate", "11 Mbps", "A data rate with its unit: '11 Mbps', '64 kbps', '1200 bps'."),
]
"""Bits per second, written with a unit (``"11 Mbps"``)."""

Time = Annotated[
    int,
    BeforeValidator(parse_time),
    PlainSerializer(format_time, return_type=str, when_used="json"),
    _schema("time", "1.5 ms", "A time with its unit: '1.5 ms', '10 s', '2 us', '1 min'."),
]
"""Nanoseconds, written with a unit (``"1.5 ms"``)."""

Size = Annotated[
    int,
    BeforeValidator(parse_size),
    PlainSerializer(format_size, return_type=str, when_used="json"),
    _schema(
        "size", "64 KiB", "A size in bytes: a bare integer, or with a unit: '1500 B', '64 KiB', '1 MB'.", allow_int=True
    ),
]
"""Bytes: a bare integer or written with a unit (``"64 KiB"``)."""

Ratio = Annotated[
    float,
    BeforeValidator(parse_ratio),
    PlainSerializer(format_ratio, return_type=str, when_used="json"),
    _schema("ratio", "1 %", "A ratio: a percentage ('1 %') or a fraction between 0 and 1 (0.01)."),
]
"""A fraction in [0, 1], written as ``"1 %"`` or ``0.01``."""
