"""Shared fixtures: paths to the repository's examples and bad scenarios."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
BAD = Path(__file__).resolve().parent / "bad_scenarios"

TWO_HOSTS = """
[scenario]
name = "{name}"
seed = {seed}
[node.a]
role = "host"
address = "10.0.0.1/24"
[node.b]
role = "host"
address = "10.0.0.2/24"
"""
"""The head of a scenario of two hosts a (10.0.0.1) and b (10.0.0.2); add the link and tests."""


@pytest.fixture
def root() -> Path:
    return ROOT
