"""The command line as a person meets it: help with examples, version, schema."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import qoslab
from qoslab.cli import app

COMMANDS = ["version", "check", "schema", "mtu", "run", "reach", "bench"]


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "qoslab", *args], capture_output=True, text=True, check=False)


def test_top_level_help_lists_commands_and_examples():
    proc = run("--help")
    assert proc.returncode == 0
    for command in COMMANDS:
        assert command in proc.stdout
    assert "Examples" in proc.stdout


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_has_an_example(command):
    proc = run(command, "--help")
    assert proc.returncode == 0, proc.stderr
    assert "Example" in proc.stdout
    assert f"qoslab {command}" in proc.stdout


def test_version_matches_package():
    proc = run("version")
    assert proc.returncode == 0
    assert proc.stdout.strip() == qoslab.__version__


def test_schema_is_json_schema_of_the_scenario():
    proc = run("schema")
    assert proc.returncode == 0, proc.stderr
    schema = json.loads(proc.stdout)
    assert schema.get("type") == "object"
    assert {"scenario", "node", "link"} <= set(schema["properties"])


def test_usage_error_exit_code_2():
    proc = run("mtu")
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr


def test_app_object_is_typer():
    import typer

    assert isinstance(app, typer.Typer)
