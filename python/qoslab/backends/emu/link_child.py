"""The link emulator's process: ``python -m qoslab.backends.emu.link_child FD_A FD_B
STOP_FD SEED LINK_INDEX FIFO_PRIORITY`` with the plan link's JSON on stdin. It prints
``ready``, then runs
``qoslab._core.emulate_link`` on the two inherited TAP descriptors until its stop pipe
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


def main(argv: list[str]) -> int:
    from qoslab import _core

    fd_a, fd_b, stop_fd, seed, index, fifo = (int(v) for v in argv)
    link_json = sys.stdin.read()
    # Imported and configured: the parent waits for this line before it lets traffic
    # start, so no frame waits in a TAP's queue for the emulator to come up.
    sys.stdout.write(READY)
    sys.stdout.flush()
    report = _core.emulate_link(
        fd_a, fd_b, link_json, seed, stop_fd, link_index=index, fifo_priority=fifo if fifo > 0 else None
    )
    sys.stdout.write(report + "\n")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
