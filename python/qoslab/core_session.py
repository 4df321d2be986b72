"""Tests on one network share a core session: the network is encoded and decoded once.

A sweep of 1,000 pings among 1,000 hosts, or a scenario of 1,000 tests, runs 1,000
simulations of one network that differ only in what each test sets: its flows, run
length, seed and windows (:meth:`qoslab.backends.sim.Network.with_flows`). Sending the
whole configuration each time made the core decode the network's 1.2 MB of JSON per
test, most of its time per test. Here the network's configuration goes to the core once
per process (``qoslab._core.Session``, crates/sim/src/session.rs) and each test sends
only its part; the core puts the part into a copy of the decoded network and builds a
world of its own for the test. The configuration is the one the test has alone, field
for field (the network's plan, :attr:`qoslab.lower.lowered.RunConfig.network`, with the
test's fields over it), so the results are the same bytes (tests/test_sweep_session.py compares them
for every test of every example); a world is never shared between tests, since one run
leaves state (ARP caches, bridge tables, queues, random streams) another would inherit.

A configuration not made by ``Network.with_flows``, or one that changed a network part,
goes whole to ``qoslab._core.simulate`` as before.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any, cast

from qoslab.lower.lowered import TEST_FIELDS, RunConfig, _encode
from qoslab.plan import models as plan

TEST_KEYS = TEST_FIELDS
"""The plan's fields a test sets (crates/sim/src/session.rs ``TestPart``)."""

_SESSIONS: dict[int, tuple[plan.SimConfig, Any]] = {}
"""id(network plan) -> (that plan, its core session); the plan is held so that its id is
not reused while the entry lives."""
_LOCK = threading.Lock()
_MAX = 8
"""Sessions kept per process (a sweep over a link's rate has a network per point)."""


def split(config: plan.SimConfig) -> tuple[plan.SimConfig, str] | None:
    """(the network's plan, the JSON of the test's part) of a plan made by
    ``Network.with_flows``: the part is every test field it sets (a field left out keeps
    the network's value). None for any other plan, or one whose network fields are not
    the network's own."""
    base = config.network if isinstance(config, RunConfig) else None
    if base is None:
        return None
    for name in config.model_fields_set | base.model_fields_set:
        if name in TEST_KEYS:
            continue
        ours, theirs = getattr(config, name), getattr(base, name)
        # The tables by identity (the same objects); a number by value.
        if not (ours is theirs or (isinstance(ours, int) and ours == theirs)):
            return None
        if name not in config.model_fields_set or name not in base.model_fields_set:
            return None
    return base, _encode(config, only=TEST_KEYS)


def session_for(base: plan.SimConfig) -> Any:
    """The core session of a network's plan (made on first use in this process)."""
    from qoslab import _core

    with _LOCK:
        hit = _SESSIONS.get(id(base))
    if hit is not None and hit[0] is base:
        return hit[1]
    session = cast(Any, _core).Session(_encode(base))  # _core.pyi does not list Session
    with _LOCK:
        if len(_SESSIONS) >= _MAX:
            _SESSIONS.pop(next(iter(_SESSIONS)))
        _SESSIONS[id(base)] = (base, session)
    return session


def simulate_test(
    config: plan.SimConfig,
    pcap_dir: str | Path | None = None,
    pcap_snaplen: int | None = None,
    pcap_max_size: int | None = None,
) -> str | None:
    """The core's results (JSON text) for ``config`` through its network's session, or
    None when it is not a test on a network (the caller sends it whole to
    ``qoslab._core.simulate``). Raises what the core raises."""
    from qoslab import _core

    parts = split(config) if hasattr(_core, "Session") else None
    if parts is None:
        return None
    base, test = parts
    where = None if pcap_dir is None else str(pcap_dir)
    return str(session_for(base).simulate(test, where, pcap_snaplen, pcap_max_size))


def validate_test(config: plan.SimConfig) -> bool:
    """``qoslab._core.validate`` of ``config`` (build its world, run nothing) through its
    network's session: True when done so, False when it is not a test on a network (the
    caller validates it whole). Raises ValueError naming the refused field."""
    from qoslab import _core

    parts = split(config) if hasattr(_core, "Session") else None
    if parts is None:
        return False
    base, test = parts
    session_for(base).validate(test)
    return True


__all__ = ["TEST_KEYS", "split", "session_for", "simulate_test", "validate_test"]
