"""The link emulator's process: ``python -m qoslab.backends.emu.link_child FD,FD[,FD...]
STOP_FD SEED LINK_INDEX FIFO_PRIORITY PARENT_PID`` with, on stdin, the plan link's JSON (a
line: two descriptors, its ``a`` and ``b``) or ``{"plan_link": INDEX, "plan": PLAN}`` (an
802.11 cell: one descriptor per member, the AP first). It prints ``ready``, then runs
``qoslab._core.emulate_link`` (or ``emulate_plan_link``) on the inherited TAP descriptors until its stop pipe
is written to or closed (the run's process writes it at the end of the test; a run
killed with ``kill -9`` closes it), or SIGTERM; then prints the report (docs/metrics.md,
"The link emulator") as one JSON line on stdout.

A process of its own, not a thread of the run: SCHED_FIFO applies to it alone, the
run's GIL never delays a frame, and ``qoslab emu clean`` can kill it by pid.
"""

from __future__ import annotations

import sys

READY = "ready\n"
"""The line the child prints when it is about to enter the emulator's loop."""


PR_SET_PDEATHSIG = 1
"""prctl(2): the signal this process gets when its parent dies (include/uapi/linux/prctl.h)."""


def _die_with_parent(parent: int) -> None:
    """SIGTERM when the run's process dies (the emulator stops cleanly on it), or exit
    now if it already has: a run killed with ``kill -9`` leaves no emulator behind even
    if it died before registering this one. (Its end of the stop pipe closing stops the
    emulator too; this covers a copy of that end a forked helper may hold.)"""
    import ctypes
    import os
    import signal

    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0)
    if os.getppid() != parent:
        sys.exit(1)


def main(argv: list[str]) -> int:
    fds = [int(v) for v in argv[0].split(",")]
    stop_fd, seed, index, fifo, parent = (int(v) for v in argv[1:])
    _die_with_parent(parent)
    import json

    from qoslab import _core

    document = sys.stdin.read()
    whole = json.loads(document)
    priority = fifo if fifo > 0 else None
    # Imported and configured: the parent waits for this line before it lets traffic
    # start, so no frame waits in a TAP's queue for the emulator to come up.
    sys.stdout.write(READY)
    sys.stdout.flush()
    if "plan_link" in whole:
        plan = json.dumps(whole["plan"])
        report = _core.emulate_plan_link(fds, plan, whole["plan_link"], stop_fd, seed=seed, fifo_priority=priority)
    else:
        fd_a, fd_b = fds
        report = _core.emulate_link(fd_a, fd_b, document, seed, stop_fd, link_index=index, fifo_priority=priority)
    sys.stdout.write(report + "\n")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
