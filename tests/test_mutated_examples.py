"""Property: whatever one value of an example scenario is changed to, ``qoslab check``
answers with exit 0 or exit 2 and a message naming the file, never a traceback or a
Rust panic. And what ``check`` accepts, ``run`` accepts: both call
:func:`qoslab.sweep.prepare`, which has the simulator build every test's network.
"""

from __future__ import annotations

import sys
import tomllib
from typing import Any

import pytest
import tomli_w
from conftest import EXAMPLES
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

EXAMPLE_FILES = sorted(EXAMPLES.glob("*.toml"))

# Values a person might plausibly (or mistakenly) write, and the edges of every type.
UNITS = [
    "0 bps",
    "-1 Mbps",
    "1e30 bps",
    "1 bps",
    "0 s",
    "-1 ms",
    "1e12 s",
    "1 ns",
    "0 B",
    "1e9 B",
    "65536 B",
    "150 %",
    "-1 %",
    "100 %",
    "1 parsec",
    "",
    "10.0.0.1/33",
    "0.0.0.0/0",
    "255.255.255.255/32",
    "a",
]
VALUES = st.one_of(
    st.integers(min_value=-(2**70), max_value=2**70),
    st.sampled_from([0, -1, 1, 255, 256, 65535, 65536, 2**32, 2**63, 2**64]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from(UNITS),
    st.text(max_size=12),
    st.booleans(),
    st.lists(st.sampled_from(UNITS + ["a", "b"]), max_size=3),
    st.just({}),
)


def leaves(data: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path to a value in ``data`` (tables and arrays walked, their items listed)."""
    found = [path] if path else []
    if isinstance(data, dict):
        for key, value in data.items():
            found += leaves(value, path + (key,))
    elif isinstance(data, list):
        for i, value in enumerate(data):
            found += leaves(value, path + (i,))
    return found


def set_at(data: Any, path: tuple[Any, ...], value: Any, delete: bool) -> None:
    for step in path[:-1]:
        data = data[step]
    if delete:
        del data[path[-1]]
    else:
        data[path[-1]] = value


@st.composite
def mutated(draw: st.DrawFn) -> tuple[str, str]:
    path = draw(st.sampled_from(EXAMPLE_FILES))
    data = tomllib.loads(path.read_text())
    where = draw(st.sampled_from(leaves(data)))
    delete = draw(st.booleans()) and draw(st.booleans())  # a quarter of the cases remove a key
    set_at(data, where, draw(VALUES), delete)
    return path.name, tomli_w.dumps(data)


@settings(
    max_examples=150,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(case=mutated())
def test_mutated_example_is_accepted_or_refused_with_a_place(
    case: tuple[str, str], tmp_path_factory: pytest.TempPathFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    from qoslab.cli import main

    name, text = case
    file = tmp_path_factory.mktemp("mut") / name
    file.write_text(text)
    argv, sys.argv = sys.argv, ["qoslab", "check", str(file)]
    code = 0
    try:
        main()  # an exception other than SystemExit fails the test with its traceback
    except SystemExit as exit:
        code = exit.code if isinstance(exit.code, int) else 1
    finally:
        sys.argv = argv
    err = capsys.readouterr().err
    assert "panicked" not in err and "Traceback" not in err, err
    assert code in (0, 2), f"exit {code}:\n{err}"
    if code == 2:
        assert str(file) in err, err
