"""A sweep's progress on the terminal (``qoslab sweep``): one bar with the points done,
failed, rate and ETA, and on request (``--workers``) a live table of each worker's
current point, its time on it and the points it finished."""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from qoslab.sweep_run import PointTask


class WorkerStatus:
    """Each worker's current point, how long it has been on it and how many points it
    finished (``qoslab sweep --workers``). Told by the sweep as points start and finish;
    the times are this process's clock, so a remote worker's clock does not matter."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.current: dict[str, tuple[PointTask | None, float]] = {}
        self.done: dict[str, int] = {}
        self._finished: set[str] = set()

    def started(self, worker: str, task: PointTask | None) -> None:
        """``worker`` is on ``task`` now (None: on nothing of this sweep). A start heard
        after the point's result (the two come by different ways) is ignored."""
        with self._lock:
            if task is not None and task.point_id in self._finished:
                return
            was = self.current.get(worker)
            if was is None or was[0] is not task:
                self.current[worker] = (task, time.monotonic())
            self.done.setdefault(worker, 0)

    def finished(self, task: PointTask, result: dict[str, Any]) -> None:
        worker = str(result.get("worker") or "?")
        with self._lock:
            self._finished.add(task.point_id)
            self.done[worker] = self.done.get(worker, 0) + 1
            was = self.current.get(worker)
            if was is not None and was[0] is not None and was[0].point_id == task.point_id:
                self.current[worker] = (None, time.monotonic())

    def rows(self) -> list[tuple[str, str, float | None, int]]:
        """(worker, its current point or "", seconds on it or None, points done), by worker."""
        now = time.monotonic()
        with self._lock:
            names = sorted(set(self.current) | set(self.done))
            out = []
            for w in names:
                task, since = self.current.get(w, (None, now))
                out.append((w, task.label() if task else "", now - since if task else None, self.done.get(w, 0)))
        return out

    def __rich__(self) -> Any:
        from rich.table import Table

        table = Table(box=None, pad_edge=False, header_style="dim")
        table.add_column("worker")
        table.add_column("point")
        table.add_column("on it", justify="right")
        table.add_column("done", justify="right")
        for worker, point, seconds, done in self.rows():
            table.add_row(worker, point or "[dim]idle", "" if seconds is None else f"{seconds:.1f} s", str(done))
        return table


class SweepProgress:
    """One rich progress bar on stderr: points done of all, failed, rate (points/s over
    this run) and the time left at that rate. With ``workers``, a live table below it
    (:class:`WorkerStatus`): each worker, its current point, time on it, points done."""

    def __init__(self, console: Any, total: int, kept: int, *, enabled: bool, workers: bool = False) -> None:
        self.enabled = enabled
        self.failed = 0
        self._lock = threading.Lock()
        self.status: WorkerStatus | None = WorkerStatus() if workers else None
        if not enabled:
            return
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        self.progress = Progress(
            TextColumn("[bold]sweep"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[failed]} failed"),
            TextColumn("{task.fields[rate]}"),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=console,
            transient=False,
        )
        self.task = self.progress.add_task("sweep", total=total, completed=kept, failed=0, rate="")
        self.start = time.monotonic()
        self.ran = 0
        self.live: Any = None
        if self.status is not None:
            from rich.console import Group
            from rich.live import Live

            # The bar and the table in one live display, redrawn 4 times a second.
            self.live = Live(Group(self.progress, self.status), console=console, refresh_per_second=4)

    def __enter__(self) -> SweepProgress:
        if self.enabled:
            (self.live or self.progress).__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self.enabled:
            (self.live or self.progress).__exit__(*exc)
            if self.live is not None and not self.live.console.is_terminal:
                self.live.console.line()  # a file or a pipe got the last frame without its newline

    def done(self, task: PointTask, result: dict[str, Any]) -> None:
        with self._lock:
            if "error" in result:
                self.failed += 1
            if not self.enabled:
                return
            self.ran += 1
            rate = self.ran / max(time.monotonic() - self.start, 1e-9)
            self.progress.update(self.task, advance=1, failed=self.failed, rate=f"{rate:.3g} points/s")
