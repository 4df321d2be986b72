"""A user-space tunnel end's process: ``python -m qoslab.backends.emu.tunnel_child NAME
STOP_FD PARENT_PID`` run inside the end node's namespace (``ip netns exec``), with the
plan node's JSON on stdin. It runs ``qoslab._core.run_tunnel`` (crates/emu ``tunnel``),
which prints ``ready`` once its TUN device and sockets are open and ``up`` when the end
can carry packets, until its stop pipe is written to or closed (the run's process writes
it at the end of the test; a run killed with ``kill -9`` closes it), or SIGTERM; then it
prints the report (docs/metrics.md, "User-space tunnels") as one JSON line on stdout.
"""

from __future__ import annotations

import sys

from qoslab.backends.emu.link_child import _die_with_parent


def main(argv: list[str]) -> int:
    name, stop_fd, parent = argv[0], int(argv[1]), int(argv[2])
    _die_with_parent(parent)
    from qoslab import _core

    node_json = sys.stdin.read()
    sys.stdout.flush()
    report = _core.run_tunnel(node_json, name, stop_fd, notify_fd=sys.stdout.fileno())
    sys.stdout.write(report + "\n")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
