"""A lowered network: the plan of a scenario's network without traffic, the names to
read it by, and a test's traffic added to it (:meth:`Network.with_flows`); the JSON text
of a plan, its network parts encoded once (:func:`_encode`).
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from ipaddress import IPv4Address, IPv4Interface
from typing import Any

from qoslab.lower.common import Port
from qoslab.lower.flows import background_flows
from qoslab.scenario.model import Scenario


@dataclass
class Network:
    """A lowered network: the SimConfig without traffic, and the names to read it by.

    ``config`` is the JSON-ready ``SimConfig`` dict (``flows`` empty). ``ports[i]`` lists
    node i's ports in index order. ``addresses`` maps a node name to its IPv4 addresses
    (port addresses, then the bridge's).
    """

    scenario: Scenario
    config: dict[str, Any]
    node_names: list[str]
    ports: list[list[Port]]
    addresses: dict[str, list[IPv4Interface]] = field(default_factory=dict)
    max_events: int | None = None
    """The simulator's event budget for each run, when raised above its default (``--max-events``)."""

    def node_index(self, name: str) -> int:
        return self.node_names.index(name)

    def destination(self, src: str, dst: str) -> IPv4Address | None:
        """The address ``src`` sends to in order to reach ``dst``: one of ``dst``'s
        addresses on a subnet ``src`` is on, else ``dst``'s first address."""
        theirs = self.addresses.get(dst, [])
        if not theirs:
            return None
        ours = self.addresses.get(src, [])
        for a in theirs:
            if any(a.ip in mine.network for mine in ours):
                return a.ip
        return theirs[0].ip

    def with_flows(
        self,
        flows: list[dict[str, Any]],
        duration_ns: int,
        *,
        seed: int | None = None,
        capture: bool = False,
        windows: list[dict[str, int]] | None = None,
    ) -> dict[str, Any]:
        """A copy of the configuration with this traffic (and the scenario's
        ``[[background]]`` traffic beside it), run length and seed, and the measured
        flows' windows (docs/metrics.md#window).

        The copy is shallow: its nodes, links and the rest are the network's own, shared
        by every test run on it (read them, never change them), so that many tests on
        one large network copy and encode it once (:class:`_RunConfig`), not per test."""
        config = _RunConfig(self.config)
        config.network = self
        config["flows"] = list(flows) + background_flows(self, duration_ns)
        if windows:
            config["windows"] = list(windows)
        config["duration_ns"] = int(duration_ns)
        config["capture"] = capture
        if seed is not None:
            config["seed"] = seed
        if self.max_events is not None:
            config["budget"] = {"max_events": int(self.max_events)}
        return config


class _RunConfig(dict[str, Any]):
    """A ``SimConfig`` made by :meth:`Network.with_flows`: its network parts are the
    network's own objects, so :func:`_encode` reuses their JSON text from one test to
    the next (a network of 1,000 hosts is about 1.2 MB of JSON, some 0.1 s to encode)."""

    network: Network | None = None


_ENCODED: dict[int, tuple[Any, str]] = {}
"""id(value) -> (value, its JSON text) for the network parts of recent configs; the value
is held so that its id is not reused while the entry lives."""
_ENCODED_LOCK = threading.Lock()
_ENCODED_MAX = 64


def _encode(config: dict[str, Any]) -> str:
    """``json.dumps(config)``, byte for byte, reusing the text of the network's parts
    (the values a :class:`_RunConfig` shares with its network's ``config``)."""
    net = getattr(config, "network", None)
    if net is None:
        return json.dumps(config)
    parts = []
    for key, value in config.items():
        shared = isinstance(value, (list, dict)) and net.config.get(key) is value
        text = None
        if shared:
            with _ENCODED_LOCK:
                hit = _ENCODED.get(id(value))
            if hit is not None and hit[0] is value:
                text = hit[1]
            else:
                text = json.dumps(value)
                with _ENCODED_LOCK:
                    if len(_ENCODED) >= _ENCODED_MAX:
                        _ENCODED.pop(next(iter(_ENCODED)))
                    _ENCODED[id(value)] = (value, text)
        parts.append(json.dumps(key) + ": " + (text if text is not None else json.dumps(value)))
    return "{" + ", ".join(parts) + "}"
