"""What the emulation backend's tests share: why this host cannot run them (root,
pyroute2, a network namespace made and removed), and a run registry of each test's own
(imported by the test modules, so that its autouse fixture applies to them)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT_NEEDED = "the emulation backend needs root (network namespaces and interfaces)"


def why_no_namespaces(root_needed: str = ROOT_NEEDED) -> str | None:
    """None when this host can make network namespaces, else why not (a skip's reason)."""
    if os.geteuid() != 0:
        return root_needed
    try:
        from pyroute2 import netns
    except ImportError:
        return "pyroute2 is not installed (pip install 'qoslab[emu]')"
    name = f"qoslab-probe{os.getpid()}"
    try:
        netns.create(name)
        netns.remove(name)
    except OSError as err:
        return f"a network namespace cannot be made here: {err}"
    return None


@pytest.fixture(autouse=True)
def own_emu_registry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A registry of this test's own; whatever it left is removed after it."""
    registry = tmp_path / "registry"
    monkeypatch.setenv("QOSLAB_EMU_REGISTRY", str(registry))
    yield registry
    from qoslab.backends.emu.registry import registered_runs, remove_run

    for run in registered_runs():
        remove_run(run)
