"""qoslab as a user meets it: --version and -h, shell completion, the example scenarios
listed and copied out (they are read through importlib.resources, as a wheel holds them)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import qoslab

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def qoslab_cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "qoslab", *args], capture_output=True, text=True, check=False, timeout=120, cwd=cwd
    )


def test_version_flag_and_short_help():
    proc = qoslab_cli("--version")
    assert proc.returncode == 0 and proc.stdout == f"qoslab {qoslab.__version__}\n"
    assert qoslab_cli("-V").stdout == proc.stdout
    short, long = qoslab_cli("-h"), qoslab_cli("--help")
    assert short.returncode == 0 and short.stdout == long.stdout and "Usage" in short.stdout
    assert qoslab_cli("run", "-h").stdout == qoslab_cli("run", "--help").stdout


def test_shell_completion_can_be_installed():
    help_text = qoslab_cli("--help").stdout
    assert "--install-completion" in help_text and "--show-completion" in help_text


def test_examples_lists_every_example_file(tmp_path):
    proc = qoslab_cli("examples", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == sorted(p.name for p in EXAMPLES.glob("*.toml"))


def test_examples_copy_writes_the_file_and_it_runs(tmp_path):
    proc = qoslab_cli("examples", "copy", "seed000_l3f", "lab", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    copied = tmp_path / "lab" / "seed000_l3f.toml"
    assert copied.read_bytes() == (EXAMPLES / "seed000_l3f.toml").read_bytes()
    assert qoslab_cli("check", str(copied)).returncode == 0
    # A second copy does not overwrite without --force.
    again = qoslab_cli("examples", "copy", "seed000_l3f.toml", "lab", cwd=tmp_path)
    assert again.returncode == 2 and "--force" in again.stderr and "Traceback" not in again.stderr
    assert qoslab_cli("examples", "copy", "seed000_l3f.toml", "lab", "--force", cwd=tmp_path).returncode == 0


def test_examples_copy_of_an_unknown_name_says_what_exists(tmp_path):
    proc = qoslab_cli("examples", "copy", "seed000_l3", cwd=tmp_path)
    assert proc.returncode == 2 and "did you mean 'seed000_l3f.toml'" in proc.stderr and "Traceback" not in proc.stderr
    assert not any(tmp_path.iterdir())
