"""Units: accepted and refused spellings, and format -> parse round trips."""

from __future__ import annotations

import doctest

import pytest
from hypothesis import given
from hypothesis import strategies as st
from qoslab import units
from qoslab.units import (
    UnitError,
    format_rate,
    format_ratio,
    format_size,
    format_time,
    parse_rate,
    parse_ratio,
    parse_size,
    parse_time,
)

ACCEPTED = [
    (parse_rate, "11 Mbps", 11_000_000),
    (parse_rate, "11Mb/s", 11_000_000),
    (parse_rate, "1200 bps", 1200),
    (parse_rate, "2 Mbit/s", 2_000_000),
    (parse_rate, "155.52 Mbps", 155_520_000),
    (parse_rate, "64 kbps", 64_000),
    (parse_rate, "64 Kbps", 64_000),
    (parse_rate, "57.6 kb/s", 57_600),
    (parse_rate, "1 Gbps", 1_000_000_000),
    (parse_rate, "2 mbps", 2_000_000),
    (parse_rate, "1 MB/s", 8_000_000),
    (parse_rate, "  30 Mbps ", 30_000_000),
    (parse_time, "1.5 ms", 1_500_000),
    (parse_time, "10 s", 10_000_000_000),
    (parse_time, "40ms", 40_000_000),
    (parse_time, "2 us", 2_000),
    (parse_time, "2 µs", 2_000),
    (parse_time, "1 min", 60_000_000_000),
    (parse_time, "250 ns", 250),
    (parse_time, 0, 0),
    (parse_size, "64 KiB", 65_536),
    (parse_size, "16 KiB", 16_384),
    (parse_size, "9180 B", 9180),
    (parse_size, "1500 bytes", 1500),
    (parse_size, "1 MB", 1_000_000),
    (parse_size, "85.3 kB", 85_300),
    (parse_size, 1518, 1518),
    (parse_ratio, "1 %", 0.01),
    (parse_ratio, "1%", 0.01),
    (parse_ratio, "0.01", 0.01),
    (parse_ratio, 0.01, 0.01),
    (parse_ratio, 1, 1.0),
]

REFUSED = [
    (parse_rate, "11 Mhz", "units accepted"),
    (parse_rate, 11, "write e.g."),
    (parse_rate, "11", "write e.g."),
    (parse_rate, "fast", "units accepted"),
    (parse_rate, "-1 Mbps", None),
    (parse_rate, "0.5 bps", "whole bits"),
    (parse_rate, True, None),
    (parse_time, "10", "write e.g."),
    (parse_time, 10, "write e.g."),
    (parse_time, "10 parsecs", "units accepted"),
    (parse_time, "0.5 ns", "whole nanoseconds"),
    (parse_size, "64 Kib", None),
    (parse_size, "100 kb", "'b' is a bit"),
    (parse_size, "1.5 B", "whole bytes"),
    (parse_size, "-1 B", None),
    (parse_size, [1500], None),
    (parse_ratio, "1 dB", None),
    (parse_ratio, 1.5, None),
    (parse_ratio, 5, "did you mean '5 %'?"),
    (parse_ratio, "150 %", None),
]


@pytest.mark.parametrize(("parse", "text", "value"), ACCEPTED, ids=[repr(a[1]) for a in ACCEPTED])
def test_accepted(parse, text, value):
    assert parse(text) == value
    assert type(parse(text)) is type(value)


@pytest.mark.parametrize(("parse", "text", "hint"), REFUSED, ids=[repr(r[1]) for r in REFUSED])
def test_refused(parse, text, hint):
    with pytest.raises(UnitError) as info:
        parse(text)
    err = info.value
    assert err.expected.startswith("a ")
    assert err.found  # names what was there
    if hint is not None:
        assert hint in (err.hint or "")


def test_bad_rate_message_names_expected_found_and_units():
    with pytest.raises(UnitError) as info:
        parse_rate("11 Mhz")
    assert info.value.expected == "a rate such as '11 Mbps'"
    assert info.value.found == "'11 Mhz'"
    assert "Mbps" in info.value.hint


@given(st.integers(min_value=0, max_value=10**13))
def test_rate_round_trip(bps):
    assert parse_rate(format_rate(bps)) == bps


@given(st.integers(min_value=0, max_value=10**15))
def test_time_round_trip(ns):
    assert parse_time(format_time(ns)) == ns


@given(st.integers(min_value=0, max_value=2**40))
def test_size_round_trip(n):
    assert parse_size(format_size(n)) == n


@given(st.integers(min_value=0, max_value=10_000))
def test_ratio_round_trip(basis_points):
    fraction = basis_points / 10_000
    assert parse_ratio(format_ratio(fraction)) == pytest.approx(fraction, abs=1e-15)


@given(st.integers(min_value=1, max_value=10**6), st.sampled_from(["bps", "kbps", "Mbps", "Gbps"]))
def test_rate_units_scale_by_thousands(n, unit):
    factor = {"bps": 1, "kbps": 10**3, "Mbps": 10**6, "Gbps": 10**9}[unit]
    if n * factor > 2**64 - 1:
        # Past the simulator's 64-bit rate (issue 20): refused, not wrapped.
        with pytest.raises(UnitError, match="beyond what the simulator counts"):
            parse_rate(f"{n} {unit}")
        return
    assert parse_rate(f"{n} {unit}") == n * factor


def test_units_doctests():
    result = doctest.testmod(units, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0
