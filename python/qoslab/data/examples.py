"""The example scenarios shipped with qoslab: every seed's experiment and a few teaching
ones. `qoslab reproduce`, `qoslab bench` and the studies read them from here, so a wheel
installed anywhere finds them; `qoslab examples` lists them and `qoslab examples copy`
writes one out to start from.

They live in the package, ``python/qoslab/examples`` (read through importlib.resources),
so the wheel carries them; the repository's ``examples`` is a link to that folder, so
``examples/seed000_l3f.toml`` works in a checkout.
"""

from __future__ import annotations

import difflib
import shutil
import tomllib
from importlib.resources import files
from pathlib import Path

from qoslab.errors import InputError, Problem


def folder() -> Path:
    """The folder holding the example scenarios (the repository's ``examples`` is a link
    to the same folder)."""
    return Path(str(files("qoslab"))) / "examples"


def names() -> list[str]:
    """Every example's file name, sorted."""
    return sorted(p.name for p in folder().glob("*.toml"))


def listing() -> list[tuple[str, str]]:
    """(file name, the scenario's own name) of every example."""
    out = []
    for name in names():
        try:
            title = tomllib.loads((folder() / name).read_text(encoding="utf-8")).get("scenario", {}).get("name", "")
        except (OSError, tomllib.TOMLDecodeError):
            title = ""
        out.append((name, str(title)))
    return out


def path(name: str) -> Path:
    """The file of example ``name`` (``.toml`` may be left out).

    >>> path("seed000_l3f").name
    'seed000_l3f.toml'
    >>> path("seed000_l3")
    Traceback (most recent call last):
    ...
    qoslab.errors.InputError: qoslab examples: NAME: no such example
        expected: one of the names `qoslab examples` lists
        found:    'seed000_l3'
        hint:     did you mean 'seed000_l3f.toml'?
    """
    wanted = name if name.endswith(".toml") else f"{name}.toml"
    known = names()
    if wanted not in known:
        close = difflib.get_close_matches(wanted, known, n=1)
        hint = f"did you mean {close[0]!r}?" if close else None
        raise InputError(
            "qoslab examples",
            [
                Problem(
                    "no such example",
                    key="NAME",
                    expected="one of the names `qoslab examples` lists",
                    found=repr(name),
                    hint=hint,
                )
            ],
        )
    return folder() / wanted


def companions(source: Path) -> list[Path]:
    """The files an example reads beside itself: the captures its ``pcap.replay`` tests
    name by a relative path (``file = "video_call.pcap"``).

    >>> [p.name for p in companions(path("pcap_replay_call"))]
    ['video_call.pcap']
    """
    tests = tomllib.loads(source.read_text(encoding="utf-8")).get("test", [])
    names = {t["file"] for t in tests if isinstance(t, dict) and isinstance(t.get("file"), str)}
    return [source.parent / n for n in sorted(names) if not Path(n).is_absolute() and (source.parent / n).is_file()]


def copy(name: str, directory: Path, *, force: bool = False) -> Path:
    """Write example ``name`` into ``directory``, with the files it reads beside itself
    (:func:`companions`); an existing file is kept unless ``force``."""
    source = path(name)
    target = directory / source.name
    files = [(source, target)] + [(c, directory / c.relative_to(source.parent)) for c in companions(source)]
    for _, out in files:
        if out.exists() and not force:
            raise InputError(
                "qoslab examples copy",
                [
                    Problem(
                        "the file exists",
                        key="DIRECTORY",
                        expected="a directory without this file, or --force",
                        found=str(out),
                    )
                ],
            )
    for src, out in files:
        out.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, out)
    return target


__all__ = ["folder", "names", "listing", "path", "copy", "companions"]
