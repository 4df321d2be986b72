"""The wheel is the product: built by maturin, installed into a fresh venv outside the
checkout, and used from an empty directory as a new user would (issue 19). Slow: it
compiles the Rust core once more (without LTO, which changes no result) and installs
qoslab's dependencies from PyPI into the new venv."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _run(
    args: list[str], cwd: Path, env: dict[str, str] | None = None, timeout: int = 1800
) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(args, cwd=cwd, capture_output=True, text=True, check=False, timeout=timeout, env=env)
    assert proc.returncode == 0, (args, proc.stdout[-2000:], proc.stderr[-4000:])
    return proc


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    """A venv outside the checkout with qoslab's wheel installed; its bin directory."""
    base = tmp_path_factory.mktemp("wheel")
    dist = base / "dist"
    env = {
        **os.environ,
        "CARGO_PROFILE_RELEASE_LTO": "false",
        "CARGO_PROFILE_RELEASE_CODEGEN_UNITS": "16",
        "CARGO_TARGET_DIR": str(ROOT / "target" / "wheel"),
    }
    env.pop("RUSTFLAGS", None)
    _run([sys.executable, "-m", "maturin", "build", "--release", "--out", str(dist)], cwd=ROOT, env=env)
    (wheel,) = dist.glob("qoslab-*.whl")
    venv = base / "venv"
    _run([sys.executable, "-m", "venv", str(venv)], cwd=base)
    _run([str(venv / "bin" / "pip"), "install", "-q", str(wheel)], cwd=base)
    return venv / "bin"


@pytest.mark.slow
def test_the_wheel_carries_the_examples_and_runs_from_an_empty_directory(installed, tmp_path):
    qoslab = str(installed / "qoslab")
    work = tmp_path / "empty"
    work.mkdir()
    clean = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "QOSLAB_SOURCE_ROOT", "VIRTUAL_ENV")}
    # Not the checkout's qoslab: the venv's, from site-packages.
    where = _run(
        [str(installed / "python"), "-c", "import qoslab, pathlib; print(pathlib.Path(qoslab.__file__).resolve())"],
        cwd=work,
        env=clean,
    ).stdout.strip()
    assert "site-packages" in where and not where.startswith(str(ROOT))
    version = _run([qoslab, "--version"], cwd=work, env=clean).stdout
    assert version.startswith("qoslab ")
    # The examples are package data.
    listed = _run([qoslab, "examples"], cwd=work, env=clean).stdout.split()
    assert listed == sorted(p.name for p in (ROOT / "examples").glob("*.toml"))
    _run([qoslab, "examples", "copy", "openvpn_tcp", "."], cwd=work, env=clean)
    run = json.loads(_run([qoslab, "run", "openvpn_tcp.toml", "--json"], cwd=work, env=clean).stdout)
    assert run["results"] and run["output"] == "run"
    mtu = json.loads(_run([qoslab, "mtu", "ethernet/pppoe/ipv4/tcp", "--json"], cwd=work, env=clean).stdout)
    assert mtu["tcp_mss"] == 1500 - 8 - 20 - 20  # RFC 2516 §7: PPPoE takes 8 octets of the 1500
    bench = json.loads(_run([qoslab, "bench", "--quick", "--json"], cwd=work, env=clean).stdout)
    assert bench["scenarios"] and not bench["failed"]
    _run([qoslab, "reproduce", "002", "--out", "r"], cwd=work, env=clean, timeout=1800)
    summary = json.loads((work / "r" / "summary.json").read_text())
    assert {r["seed"] for r in summary} == {"002"} and (work / "r" / "report.html").exists()
