"""The simulator crate's modules depend on each other one way (issue 16): no import cycle,
checked by scripts/module_cycles.py, whose cycle finder is checked here on small crates
written in the test."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("module_cycles", ROOT / "scripts" / "module_cycles.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _crate(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return tmp_path


def test_finds_a_cycle_through_three_modules(tmp_path: Path) -> None:
    mc = _load()
    root = _crate(
        tmp_path,
        {
            "lib.rs": "pub mod a;\npub mod b;\npub mod c;\npub mod d;\n",
            "a.rs": "use crate::b::X;\n",
            "b/mod.rs": "pub mod inner;\nuse crate::c::Y;\n",
            "b/inner.rs": "use crate::d::Z;\n",
            "c.rs": "fn f() { crate::a::g(); }\n",
            "d.rs": "// crate::a::g() in a comment is no dependency\n",
        },
    )
    assert mc.cycles(mc.dependencies(root)) == [["a", "b", "c"]]


def test_ignores_tests_comments_and_chapters(tmp_path: Path) -> None:
    mc = _load()
    root = _crate(
        tmp_path,
        {
            "lib.rs": "pub mod a;\npub mod b;\n",
            "a/mod.rs": "mod chapter;\nuse crate::b::X;\n",
            "a/chapter.rs": "use super::A;\n",
            "b.rs": "// see crate::a\n#[cfg(test)]\nmod test {\n    use crate::a::A;\n}\n",
        },
    )
    assert mc.dependencies(root)["b"] == set()
    assert mc.cycles(mc.dependencies(root)) == []


def test_the_simulator_has_no_import_cycle() -> None:
    mc = _load()
    edges = mc.dependencies(ROOT / "crates" / "sim" / "src")
    assert "world" in edges and "node::ip" in edges["tunnel::ipsec"]
    assert mc.cycles(edges) == []
