"""The versioned contract of qoslab's machine-readable output: every ``--json`` record
carries ``"schema": N`` (the version of its shape) and ``"output"`` (which command wrote
it), and ``qoslab schema --output KIND`` prints the JSON Schema (draft 2020-12) it
validates against. A field's meaning and unit are defined once, in docs/metrics.md; the
schemas point there.

Versions change when a field is renamed, removed or changes meaning; adding a field does
not change them (consumers must ignore fields they do not know).

Units are in the names (docs/metrics.md, "Units"): ``_mbps`` megabits per second
(10^6 bit/s), ``_fps`` frames per second, ``_ms`` and ``_s`` milliseconds and seconds,
``_pct`` percent, ``_bytes`` octets. Counts without a unit in the name (``sent``,
``received``, ``lost``, ``drained``, ``late``) count datagrams (UDP, ping, UDP echo) or
frames (RFC 2544), never bytes; byte counts always end in ``bytes``.

>>> stamp("mtu", {"stack": "ethernet/ipv4"})["schema"]
1
>>> sorted(schema("run")["required"])
['backend', 'output', 'results', 'schema', 'seed']
"""

from __future__ import annotations

from typing import Any

VERSIONS: dict[str, int] = {"run": 1, "mtu": 1, "reach": 1, "reproduce": 1, "bench": 1, "compare": 1}
"""Each ``--json`` output and the version of its shape."""

DRAFT = "https://json-schema.org/draft/2020-12/schema"

_NUMBER = {"type": ["number", "null"]}
_COUNT = {"type": ["integer", "null"], "minimum": 0}

_UNITS = {
    "_mbps$": {**_NUMBER, "description": "megabits per second, 10^6 bit/s (docs/metrics.md)"},
    "_fps$": {**_NUMBER, "description": "frames per second (docs/metrics.md)"},
    "_ms$": {
        "type": ["number", "null", "array"],
        "description": "milliseconds (a list: one value per datagram or probe)",
    },
    "_s$": {**_NUMBER, "description": "seconds"},
    "_pct$": {
        "anyOf": [_NUMBER, {"type": "object", "additionalProperties": {"type": "number"}}],
        "description": "percent (0-100); cpu_util_pct is a mapping, node name to percent (docs/metrics.md)",
    },
    "_bytes$": {"type": ["integer", "number", "null"], "description": "octets"},
}

_COUNTS = {
    name: {**_COUNT, "description": what}
    for name, what in {
        "sent": "datagrams (UDP, ping, UDP echo) or frames (RFC 2544) sent in the measurement window; never bytes",
        "received": "datagrams or frames received inside the window (docs/metrics.md#window); never bytes",
        "lost": "sent minus received: datagrams or frames, never bytes",
        "drained": "datagrams or frames that arrived after the sender stopped (counted as lost when also late)",
        "late": "datagrams or frames that arrived after the window's end: lost (docs/metrics.md#window)",
    }.items()
}

_RECORD = {
    "type": "object",
    "description": "One measured point (docs/metrics.md): the test, its parameters and its metrics.",
    "required": ["test", "name", "from", "to", "parameters", "metrics"],
    "properties": {
        "test": {
            "type": "string",
            "description": "The method: udp.flow, udp.echo, ping, tcp.bulk, tcp.transfer, rfc2544.*, pcap.replay",
        },
        "name": {"type": ["string", "null"], "description": "The test's own name, if it has one."},
        "from": {"type": "string", "description": "The sending node."},
        "to": {"type": "string", "description": "The receiving node (or the address the test names)."},
        "parameters": {
            "type": "object",
            "description": "What the test was asked to do.",
            "properties": _COUNTS,
            "patternProperties": _UNITS,
        },
        "metrics": {
            "type": "object",
            "description": "What it measured; each name is defined in docs/metrics.md.",
            "properties": _COUNTS,
            "patternProperties": _UNITS,
        },
        "point": {"type": "integer", "minimum": 0, "description": "The sweep point's index (a [sweep] only)."},
        "sweep": {"type": "object", "description": "The swept values at this point, by key path (a [sweep] only)."},
        "backend": {
            "enum": ["emu"],
            "description": 'emu only: measured on network namespaces (docs/metrics.md, "The emulation backend").',
        },
        "kernel": {"type": "string", "description": "emu only: the kernel's release (uname -r)."},
        "link_implementation": {
            "type": "string",
            "description": "emu only: how links were made: 'direct veth' or 'emulated'.",
        },
        "tunnel_implementation": {
            "type": "string",
            "description": "emu with tunnels: the openvpn that ran OpenVPN ones (its version and key mode), and/or qoslab's user-space tunnel ends (PPPoE, IPsec tunnel mode), joined by '; '.",
        },
        "user_space_tunnels": {
            "type": "array",
            "description": "emu with PPPoE or IPsec tunnel-mode tunnels: per end, its user-space daemon's counters (inner and outer packets each way, drops by reason, when it came up; docs/metrics.md).",
        },
        "emulated_links": {
            "type": "array",
            "description": "emu with emulated links: per link, the link emulator's counters per direction (offered, delivered, dropped by reason, queued and in flight at the stop; docs/metrics.md).",
        },
        "streams": {
            "type": "array",
            "description": "TCP: per connection, iperf3's end-of-test sender and receiver (bits_per_second, bytes, retransmits).",
        },
        "intervals": {"type": "array", "description": "TCP: iperf3's interval reports (-i), per stream and summed."},
        "timestamps": {
            "type": "object",
            "description": "emu udp.echo only: what the kernel timestamps timed (echoes with both, transmit timestamps read) and the echo server's turnaround percentiles (docs/metrics.md).",
        },
        "iperf3": {
            "type": "object",
            "description": "udp.flow: the record's numbers in iperf3 -u --json's end block (sum, sum_sent, sum_received), under iperf3's names: bytes are UDP payload, packets and lost_packets datagrams.",
            "properties": {
                "end": {
                    "type": "object",
                    "required": ["sum", "sum_sent", "sum_received"],
                    "additionalProperties": {
                        "type": "object",
                        "required": [
                            "start",
                            "end",
                            "seconds",
                            "bytes",
                            "bits_per_second",
                            "jitter_ms",
                            "lost_packets",
                            "packets",
                            "lost_percent",
                            "sender",
                        ],
                        "properties": {
                            "bytes": {"type": "integer", "minimum": 0},
                            "packets": {"type": "integer", "minimum": 0},
                            "lost_packets": {"type": "integer", "minimum": 0},
                            "bits_per_second": {"type": "number", "minimum": 0},
                            "sender": {"type": "boolean"},
                        },
                    },
                }
            },
        },
    },
}

_SCHEMAS: dict[str, dict[str, Any]] = {
    "run": {
        "title": "qoslab run --json",
        "type": "object",
        "required": ["schema", "output", "backend", "seed", "results"],
        "properties": {
            "scenario": {"type": "string", "description": "The scenario's name."},
            "file": {"type": "string", "description": "The scenario file."},
            "backend": {
                "enum": ["sim", "emu"],
                "description": "The backend that ran it: the simulator, or network namespaces (then `kernel` and `link_implementation` say which kernel and links).",
            },
            "kernel": {"type": "string", "description": "emu: the kernel's release (uname -r)."},
            "link_implementation": {"type": "string", "description": "emu: 'direct veth' or 'emulated'."},
            "seed": {"type": "integer", "minimum": 0},
            "results": {"type": "array", "items": _RECORD},
            "nodes": {
                "type": "array",
                "description": "Per test and node: CPU utilisation, tables and drops by reason.",
                "items": {
                    "type": "object",
                    "required": ["test", "name"],
                    "properties": {
                        "test": {"type": "string"},
                        "name": {"type": "string"},
                        "cpu_util_pct": _NUMBER,
                        "cpu_util_test_pct": _NUMBER,
                        "drops": {
                            "type": "object",
                            "additionalProperties": {"type": "integer", "minimum": 0},
                            "description": "frames dropped, by reason",
                        },
                    },
                },
            },
        },
    },
    "mtu": {
        "title": "qoslab mtu --json",
        "type": "object",
        "required": ["schema", "output", "stack", "layers", "interfaces", "mtu", "tcp_mss", "udp_max_payload"],
        "properties": {
            "stack": {"type": "string"},
            "layers": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["name", "overhead_bytes", "fields"],
                    "properties": {
                        "name": {"type": "string"},
                        "overhead_bytes": {
                            "type": "integer",
                            "description": "octets this layer adds to a full-size packet",
                        },
                        "fields": {
                            "type": "array",
                            "items": {
                                "type": "object",
                                "required": ["name", "bytes"],
                                "properties": {"name": {"type": "string"}, "bytes": {"type": "integer", "minimum": 0}},
                            },
                        },
                    },
                },
            },
            "interfaces": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["name", "layer", "mtu", "largest_fitting", "source"],
                    "properties": {
                        "name": {"type": "string"},
                        "layer": {"type": "string"},
                        "mtu": {"type": "integer", "minimum": 0, "description": "octets"},
                        "largest_fitting": {"type": "integer"},
                        "source": {"type": "string"},
                    },
                },
            },
            "mtu": {"type": "integer", "description": "the innermost interface's MTU, octets"},
            "tcp_mss": {"type": "integer", "description": "octets (RFC 879: MTU - 40 without options)"},
            "udp_max_payload": {"type": "integer", "description": "octets"},
            "efficiency": {"type": "array"},
            "count_fcs": {"type": "boolean"},
            "notes": {"type": "array", "items": {"type": "string"}},
            "datagram": {
                "type": "object",
                "required": ["bytes", "wire_bytes", "wire_bits", "fragments"],
                "properties": {
                    "bytes": {"type": "integer"},
                    "wire_bytes": {"type": "integer"},
                    "wire_bits": {"type": "integer"},
                    "fragments": {"type": "integer", "minimum": 1},
                    "ip_hex": {"type": "string", "pattern": "^[0-9a-f]*$"},
                },
            },
        },
    },
    "reach": {
        "title": "qoslab reach --json",
        "type": "object",
        "required": ["schema", "output", "pairs"],
        "properties": {
            "scenario": {"type": "string"},
            "file": {"type": "string"},
            "backend": {"enum": ["sim"]},
            "seed": {"type": "integer", "minimum": 0},
            "pairs": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["from", "to", "sent", "received", "reachable"],
                    "properties": {
                        "from": {"type": "string"},
                        "to": {"type": "string"},
                        "sent": _COUNTS["sent"],
                        "received": _COUNTS["received"],
                        "reachable": {"type": "boolean"},
                        "rtt_ms": _UNITS["_ms$"],
                    },
                },
            },
        },
    },
    "reproduce": {
        "title": "qoslab reproduce --json",
        "type": "object",
        "required": ["schema", "output", "rows"],
        "properties": {
            "rows": {
                "type": "array",
                "description": "summary.json's rows: every number a seed publishes beside ours (docs/agreement.md).",
                "items": {
                    "type": "object",
                    "required": ["seed", "item", "paper", "ours", "unit", "tolerance", "status"],
                    "properties": {
                        "seed": {"type": "string", "pattern": "^[0-9]{3}$"},
                        "item": {"type": "string"},
                        "unit": {"type": "string"},
                        "tolerance": {"type": "string"},
                        "status": {
                            "enum": [
                                "agrees",
                                "differs",
                                "setting",
                                "derived",
                                "calibration",
                                "not reproduced",
                                "no value",
                            ]
                        },
                        "ours_sd": _NUMBER,
                        "seeds_agreeing": {"type": ["string", "null"], "pattern": "^[0-9]+/[0-9]+$"},
                    },
                },
            },
            "points_run": {"type": "integer", "minimum": 0},
            "points": {"type": "integer", "minimum": 0},
            "seeds": {"type": "integer", "minimum": 1},
        },
    },
    "bench": {
        "title": "qoslab bench --json",
        "type": "object",
        "required": ["schema", "output", "scenarios", "skipped", "failed"],
        "properties": {
            "scenarios": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["name", "events", "wall_s", "events_per_s", "sim_time_s"],
                    "properties": {
                        "name": {"type": "string"},
                        "events": {"type": "integer", "minimum": 0},
                        "wall_s": {"type": "number", "minimum": 0},
                        "events_per_s": {"type": "number", "minimum": 0},
                        "sim_time_s": {"type": "number", "minimum": 0},
                    },
                },
            },
            "comparisons": {"type": "array"},
            "ns3": {"type": "array"},
            "emulator": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["name", "frame_bytes", "throughput", "timing", "machine_before", "machine_after"],
                },
            },
            "skipped": {"type": "array", "items": {"type": "object", "required": ["name", "reason"]}},
            "failed": {"type": "array", "items": {"type": "object", "required": ["name", "reason"]}},
        },
    },
    "compare": {
        "title": "qoslab compare --json (and --out DIR/compare.json)",
        "type": "object",
        "required": ["schema", "output", "scenario", "complete", "sim_seeds", "emu_seeds", "tests"],
        "properties": {
            "scenario": {"type": "string"},
            "file": {"type": "string"},
            "complete": {"type": "boolean", "description": "false: interrupted, over the runs that finished"},
            "sim_seeds": {"type": "array", "items": {"type": "integer"}},
            "emu_seeds": {"type": "array", "items": {"type": "integer"}},
            "kernel": {"type": ["string", "null"]},
            "link_implementation": {"type": ["string", "null"]},
            "rule": {"type": "object"},
            "tests": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["test", "name", "from", "to", "record", "metrics"],
                    "properties": {
                        "metrics": {
                            "type": "array",
                            "items": {
                                "type": "object",
                                "required": ["metric", "sim", "emu", "diff", "diff_pct", "within", "reasons"],
                                "properties": {
                                    "diff": {**_NUMBER, "description": "emu mean - sim mean (docs/compare.md)"},
                                    "diff_pct": {**_NUMBER, "description": "diff over |sim mean|, percent"},
                                    "within": {"type": ["boolean", "null"]},
                                    "reasons": {"type": "array", "items": {"type": "string"}},
                                },
                            },
                        }
                    },
                },
            },
        },
    },
}


def stamp(kind: str, record: dict[str, Any]) -> dict[str, Any]:
    """``record`` with its schema version and output kind first."""
    return {"schema": VERSIONS[kind], "output": kind, **record}


def schema(kind: str) -> dict[str, Any]:
    """The JSON Schema of output ``kind`` (one of :data:`VERSIONS`)."""
    body = dict(_SCHEMAS[kind])
    properties = {
        "schema": {"const": VERSIONS[kind], "description": "the version of this output's shape"},
        "output": {"const": kind},
        **body.pop("properties"),
    }
    return {
        "$schema": DRAFT,
        "$id": f"https://qoslab.invalid/schema/{kind}/{VERSIONS[kind]}",
        **body,
        "properties": properties,
    }


__all__ = ["VERSIONS", "stamp", "schema"]
