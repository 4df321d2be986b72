"""Issue 16's size rule, kept: no source file over 800 lines and no function over 80,
outside tests and generated code (python/qoslab/plan/models.py and results_models.py,
generated from schema/plan.schema.json and schema/results.schema.json by
scripts/gen_plan.sh).

Python functions are measured by their AST (first line of the ``def`` to the last line of
the body, docstring included). Rust functions from the ``fn`` line to the line where
their braces balance; a file's trailing ``#[cfg(test)]`` module is a test and not
counted."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MAX_FILE_LINES = 800
MAX_FUNCTION_LINES = 80
GENERATED = {ROOT / "python/qoslab/plan/models.py", ROOT / "python/qoslab/plan/results_models.py"}
RUST_FN = re.compile(r"\s*(pub(\([^)]*\))?\s+)?(const\s+)?(unsafe\s+)?fn\s+(\w+)")


def _sources() -> list[Path]:
    rust = [p for p in ROOT.glob("crates/*/src/**/*.rs") if p.name != "tests.rs" and "tests" not in p.parts]
    python = [p for p in ROOT.glob("python/qoslab/**/*.py") if p not in GENERATED]
    return sorted(rust + python)


def _code_lines(path: Path) -> list[str]:
    lines = path.read_text().splitlines()
    if path.suffix == ".rs":
        for i, line in enumerate(lines):
            if line.startswith("#[cfg(test)]"):
                return lines[:i]
    return lines


def _long_rust_functions(path: Path, lines: list[str]) -> list[str]:
    found = []
    for i, line in enumerate(lines):
        m = RUST_FN.match(line)
        if not m:
            continue
        depth, opened, j = 0, False, i
        while j < len(lines):
            depth += lines[j].count("{") - lines[j].count("}")
            opened = opened or "{" in lines[j]
            if (opened and depth <= 0) or (not opened and lines[j].rstrip().endswith(";")):
                break
            j += 1
        if j - i + 1 > MAX_FUNCTION_LINES:
            found.append(f"{path.relative_to(ROOT)}:{i + 1} fn {m.group(5)}: {j - i + 1} lines")
    return found


def _long_python_functions(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            length = (node.end_lineno or node.lineno) - node.lineno + 1
            if length > MAX_FUNCTION_LINES:
                found.append(f"{path.relative_to(ROOT)}:{node.lineno} def {node.name}: {length} lines")
    return found


def test_the_rule_sees_the_sources() -> None:
    sources = _sources()
    assert any(p.suffix == ".rs" for p in sources) and any(p.suffix == ".py" for p in sources)
    # The Rust measure finds a function it is shown, and its length.
    sample = ["pub fn f() {"] + ["    x();"] * 90 + ["}"]
    assert _long_rust_functions(ROOT / "crates/sim/src/lib.rs", sample) == ["crates/sim/src/lib.rs:1 fn f: 92 lines"]


def test_no_source_file_is_over_800_lines() -> None:
    long = [f"{p.relative_to(ROOT)}: {n} lines" for p in _sources() if (n := len(_code_lines(p))) > MAX_FILE_LINES]
    assert not long, "\n".join(long)


def test_no_function_is_over_80_lines() -> None:
    long: list[str] = []
    for path in _sources():
        if path.suffix == ".rs":
            long += _long_rust_functions(path, _code_lines(path))
        else:
            long += _long_python_functions(path)
    assert not long, "\n".join(long)
