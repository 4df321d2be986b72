"""The run registry: what each emulation run created, written down before it is created.

One JSON file per run, ``/run/qoslab/emu/<run>.json`` (``QOSLAB_EMU_REGISTRY`` moves the
directory, for tests): the owner process (pid and its start time, so a reused pid is not
taken for the owner), the namespaces, any interfaces in the root namespace, and the
child processes. A name is added to the file *before* the thing is made, so that a run
killed at any instant (``kill -9`` included) leaves nothing the registry does not name.

:func:`clean` removes the runs whose owner is gone (the next run's start calls it, and
``qoslab emu clean``): it kills their registered processes (when the pid still is the
same process), deletes their namespaces (which takes their interfaces, bridges and
nftables tables with them), their root-namespace interfaces and their own temporary
directories. It touches nothing a
registry file does not name, and only names of qoslab's form (``qoslab-<run>-...``).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import shutil
import signal
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

REGISTRY_DIR = Path("/run/qoslab/emu")
"""Where the run files live: /run is a tmpfs (FHS 3.0 §3.15), emptied at boot, as the
namespaces and interfaces it describes are."""

RUN_ID = re.compile(r"^[0-9a-f]{6}$")
"""A run's id: 6 hex digits, short so that names built from it fit IFNAMSIZ (15)."""


def registry_dir() -> Path:
    """The registry's directory: ``QOSLAB_EMU_REGISTRY`` or :data:`REGISTRY_DIR`."""
    return Path(os.environ.get("QOSLAB_EMU_REGISTRY") or REGISTRY_DIR)


def new_run_id() -> str:
    """A fresh run id (:data:`RUN_ID`) not used by a registered run."""
    while True:
        run = secrets.token_hex(3)
        if not (registry_dir() / f"{run}.json").exists():
            return run


def namespace_name(run: str, node: str) -> str:
    """The namespace of ``node`` in run ``run``: ``qoslab-<run>-<node>``."""
    return f"qoslab-{run}-{node}"


def process_start(pid: int) -> int | None:
    """The start time of process ``pid`` (clock ticks after boot, proc(5)
    ``/proc/PID/stat`` field 22), or None when there is no such process."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name (field 2) is in parentheses and may hold spaces: split after it.
    return int(stat.rsplit(")", 1)[1].split()[19])


def alive(pid: int, start: int | None) -> bool:
    """Process ``pid`` exists, is the one that started at ``start``, and has not exited
    (a zombie, state Z or X in proc(5) ``/proc/PID/stat`` field 3, waits only for its
    new parent to reap it)."""
    now = process_start(pid)
    if now is None or (start is not None and now != start):
        return False
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


@dataclass
class RunRecord:
    """One run's registry file."""

    run: str
    owner_pid: int
    owner_start: int | None
    scenario: str = ""
    link: str = ""
    """The link implementation of the run (:mod:`qoslab.backends.emu.links`)."""
    namespaces: list[str] = field(default_factory=list)
    root_interfaces: list[str] = field(default_factory=list)
    pids: list[list[int | None]] = field(default_factory=list)
    """[pid, start time] of each child process."""
    temp_dirs: list[str] = field(default_factory=list)
    """Directories of the run's own files (an OpenVPN tunnel's static key and logs),
    each named ``qoslab-<run>`` under the system's temporary directory."""

    @property
    def path(self) -> Path:
        return registry_dir() / f"{self.run}.json"

    def save(self) -> None:
        """Write the file whole (a temporary file renamed over it), so a reader never
        sees half of it."""
        directory = registry_dir()
        directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        tmp = directory / f".{self.run}.json.tmp"
        tmp.write_text(json.dumps(asdict(self), indent=1))
        os.replace(tmp, self.path)

    def add_namespace(self, name: str) -> None:
        self._own(name)
        self.namespaces.append(name)
        self.save()

    def add_root_interface(self, name: str) -> None:
        self.root_interfaces.append(name)
        self.save()

    def add_pid(self, pid: int) -> None:
        self.pids.append([pid, process_start(pid)])
        self.save()

    def add_temp_dir(self) -> Path:
        """Make the run's directory for its own files (mode 0700), registered first."""
        path = Path(tempfile.gettempdir()) / f"qoslab-{self.run}"
        self.temp_dirs.append(str(path))
        self.save()
        path.mkdir(mode=0o700)
        return path

    def _own(self, name: str) -> None:
        if not name.startswith(f"qoslab-{self.run}-"):
            raise ValueError(f"{name!r} is not a name of run {self.run}")

    @classmethod
    def start(cls, scenario: str, link: str) -> RunRecord:
        """A new run owned by this process, its file written."""
        pid = os.getpid()
        record = cls(new_run_id(), pid, process_start(pid), scenario=scenario, link=link)
        record.save()
        return record

    @classmethod
    def load(cls, path: Path) -> RunRecord | None:
        """The record in ``path``, or None if it is not one of ours."""
        try:
            data: dict[str, Any] = json.loads(path.read_text())
            record = cls(**data)
        except (OSError, ValueError, TypeError):
            return None
        if not RUN_ID.match(record.run) or path.name != f"{record.run}.json":
            return None
        return record

    def owner_alive(self) -> bool:
        return alive(self.owner_pid, self.owner_start)


def registered_runs() -> list[RunRecord]:
    """Every run in the registry, in order of id."""
    directory = registry_dir()
    if not directory.is_dir():
        return []
    runs = (RunRecord.load(p) for p in sorted(directory.glob("*.json")))
    return [r for r in runs if r is not None]


NETNS_DIR = Path("/run/netns")
"""Where named network namespaces are mounted (ip-netns(8), pyroute2's netns)."""


def _kill_inside(namespace: Path) -> list[int]:
    """Kill every process whose network namespace is ``namespace`` (the same inode as
    ``/proc/PID/ns/net``, namespaces(7)); returns their pids."""
    try:
        target = namespace.stat()
    except OSError:
        return []
    killed = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            st = (entry / "ns" / "net").stat()
        except OSError:
            continue
        if (st.st_dev, st.st_ino) == (target.st_dev, target.st_ino):
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(entry.name), signal.SIGKILL)
                killed.append(int(entry.name))
    return killed


def remove_run(record: RunRecord) -> list[str]:
    """Undo everything ``record`` names, then delete its file; returns what was removed
    (``namespace NAME``, ``interface NAME``, ``process PID``)."""
    from pyroute2 import IPRoute, netns

    removed: list[str] = []
    for pid, start in record.pids:
        if pid is not None and pid != os.getpid() and alive(pid, start):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
                removed.append(f"process {pid}")
    existing = set(netns.listnetns())
    for name in record.namespaces:
        # Only names of this run's form: a registry file edited by hand cannot make
        # clean delete someone else's namespace.
        if name.startswith(f"qoslab-{record.run}-") and name in existing:
            # A tool started an instant before its owner was killed may not be in the
            # file yet: whatever runs inside the run's namespace is the run's.
            removed += [f"process {pid}" for pid in _kill_inside(NETNS_DIR / name)]
            netns.remove(name)
            removed.append(f"namespace {name}")
    if record.root_interfaces:
        with IPRoute() as ipr:
            for name in record.root_interfaces:
                if not name.startswith(f"q{record.run}"):
                    continue
                found = ipr.link_lookup(ifname=name)
                if found:
                    ipr.link("del", index=found[0])
                    removed.append(f"interface {name}")
    for directory in record.temp_dirs:
        path = Path(directory)
        # Only the run's own name: a registry file edited by hand cannot make clean
        # delete another directory.
        if path.name == f"qoslab-{record.run}" and path.parent == Path(tempfile.gettempdir()) and path.is_dir():
            shutil.rmtree(path, ignore_errors=True)
            removed.append(f"directory {path}")
    record.path.unlink(missing_ok=True)
    return removed


def clean(*, include_live: bool = False) -> tuple[list[str], list[RunRecord]]:
    """Remove every registered run whose owner is gone (and with ``include_live``, the
    live ones too, their owners' children killed). Returns what was removed and the
    live runs left alone."""
    removed: list[str] = []
    left: list[RunRecord] = []
    for record in registered_runs():
        if record.owner_pid == os.getpid():
            continue
        if record.owner_alive() and not include_live:
            left.append(record)
            continue
        removed += [f"run {record.run}: {what}" for what in remove_run(record)]
    return removed, left
