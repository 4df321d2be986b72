"""Shared fixtures: paths to the repository's examples and bad scenarios."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
BAD = Path(__file__).resolve().parent / "bad_scenarios"


@pytest.fixture
def root() -> Path:
    return ROOT
