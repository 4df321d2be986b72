"""Import cycles between the modules of a Rust crate (issue 16: "the import cycles between
node/vif/pptp_vif, world/results and app/config/upstream/ip/ipsec are gone").

A module is a source file (`a/mod.rs` is module `a`, `lib.rs` the crate root). Module A
depends on module B when A's code (comments and its `#[cfg(test)] mod test` left out)
names a path `crate::…` whose longest prefix that is a module is B. `super::` paths are
not followed: a chapter's `impl` of its parent's type (`world/lines.rs`, `node/vifs.rs`)
is that type's own code. A cycle is a strongly connected set of more than one module.

Usage::

    python scripts/module_cycles.py crates/sim/src          # prints the cycles, exit 1 if any
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

_COMMENT = re.compile(r"//.*")
_CRATE_PATH = re.compile(r"\bcrate((?:::\w+)+)")


def modules(root: Path) -> dict[str, Path]:
    """Every module of the crate at `root` (its src directory), by path (`node::ip`)."""
    found: dict[str, Path] = {}
    for path in sorted(root.rglob("*.rs")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "mod":
            parts = parts[:-1]
        if parts in (["lib"], ["main"]):
            parts = []
        found["::".join(parts)] = path
    return found


def _code(text: str) -> str:
    text = _COMMENT.sub("", text)
    at = text.find("#[cfg(test)]\nmod test")
    return text if at < 0 else text[:at]


def dependencies(root: Path) -> dict[str, set[str]]:
    """Module → the other modules it names by a `crate::` path."""
    mods = modules(root)
    edges: dict[str, set[str]] = {m: set() for m in mods}
    for name, path in mods.items():
        for found in _CRATE_PATH.findall(_code(path.read_text(encoding="utf-8"))):
            parts = found.strip(":").split("::")
            for k in range(len(parts), 0, -1):
                target = "::".join(parts[:k])
                if target in mods:
                    if target != name:
                        edges[name].add(target)
                    break
    return edges


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected sets of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component: list[str] = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10 * len(edges) + 100))
    for v in sorted(edges):
        if v not in index:
            visit(v)
    return sorted(found)


def main(argv: list[str]) -> int:
    root = Path(argv[1] if len(argv) > 1 else "crates/sim/src")
    edges = dependencies(root)
    found = cycles(edges)
    for component in found:
        print("cycle: " + " ".join(component))
        for m in component:
            print(f"    {m or 'crate'} -> " + ", ".join(sorted(d for d in edges[m] if d in component)))
    if not found:
        print(f"no import cycles among the {len(edges)} modules of {root}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
