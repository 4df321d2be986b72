"""Byte-identity of results across a refactoring (issue 16's "results byte-identical on
the configurations").

Runs every example scenario (python/qoslab/examples, every point of its sweep, jobs=1)
and every `qoslab bench` configuration at a short simulated length, and writes a
manifest: for each configuration the SHA-256 of

- ``records``: the user-facing records (what ``--json`` and the tables print), with the
  host-dependent fields (wall time, paths) removed: the contract that must not change;
- ``core``: the simulator's own results text for every simulation, in order: the
  strict check (events included), which may change only where a commit says why.

Usage::

    python scripts/results_identity.py OUT.json            # write a manifest
    python scripts/results_identity.py OUT.json --against BASE.json   # and compare

Exit code 1 when ``--against`` finds a difference (each named), 0 otherwise.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path
from typing import Any

# Fields of a record that depend on the host or the clock, not on the model.
HOST_FIELDS = {"wall_s", "cpu_s", "elapsed_s", "pcap", "pcap_files", "created", "host", "started", "finished"}

BENCH_SECONDS = 2.0

# Quick mode (the default): every test lasts at most this long and repeats at most
# QUICK_TRIALS times, so a refactoring can be checked in minutes; the code paths are those
# of the full scenarios. `--full` runs the examples as written (hours under load: RFC 2544
# trials of 60 s at many rates).
QUICK_DURATION = "1 s"
QUICK_TRIALS = 1


# Top-level keys of the core's results left out of the `core` digest (`--drop-core-key`):
# a versioned field added by a commit that says so (e.g. the results' "schema"), so the
# digest still says whether anything else changed.
DROPPED_CORE_KEYS: set[str] = set()


def _core_text(text: str) -> str:
    """The core's results JSON ``text``, its keys sorted, without DROPPED_CORE_KEYS."""
    results = json.loads(text)
    return json.dumps({k: v for k, v in results.items() if k not in DROPPED_CORE_KEYS}, sort_keys=True)


def _recording_core_texts(texts: list[str]) -> Any:
    """Replaces ``qoslab.backends.sim.read_results`` (where every simulation's JSON text
    is read into the typed results) by one that also appends the text, as
    :func:`_core_text` makes it, to ``texts``; returns the original to put back."""
    from qoslab.backends import sim as sim_backend

    real = sim_backend.read_results

    def recording(text: str) -> Any:
        texts.append(_core_text(text))
        return real(text)

    sim_backend.read_results = recording
    return real


def _strip(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _strip(v) for k, v in value.items() if k not in HOST_FIELDS}
    if isinstance(value, list):
        return [_strip(v) for v in value]
    return value


def _digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, default=str).encode()).hexdigest()


def quick_scenario(path: Path) -> Any:
    """The example at ``path`` with every test shortened (see QUICK_DURATION): each
    ``[[test]]`` gets ``duration`` and ``trials`` where its method takes them."""
    import tomllib

    import qoslab
    import tomli_w

    data = tomllib.loads(path.read_text(encoding="utf-8"))
    tests = data.get("test", [])
    for test in tests:
        test["duration"] = QUICK_DURATION
        if "trials" in test or test.get("method", "").startswith("rfc2544."):
            test["trials"] = QUICK_TRIALS
    for _ in range(4 * len(tests) + 1):
        try:
            return qoslab.loads(tomli_w.dumps(data), str(path))
        except qoslab.InputError as err:
            text = str(err)
            removed = False
            for test in tests:
                for key in ("trials", "duration"):
                    if key in test and f".{key}" in text:
                        del test[key]
                        removed = True
                        break
                if removed:
                    break
            if not removed:
                raise
    raise RuntimeError(f"{path}: could not shorten its tests")


def examples_manifest(names: list[str] | None, *, full: bool) -> dict[str, dict[str, str]]:
    import qoslab
    from qoslab.backends import sim as sim_backend
    from qoslab.data import examples

    out: dict[str, dict[str, str]] = {}
    for name in names or examples.names():
        texts: list[str] = []
        real = _recording_core_texts(texts)
        try:
            scenario = qoslab.load(examples.path(name)) if full else quick_scenario(examples.path(name))
            results = qoslab.run(scenario, jobs=1)
        finally:
            sim_backend.read_results = real
        out[f"example:{name}"] = {
            "records": _digest(_strip(results.records)),
            "core": hashlib.sha256("\n".join(texts).encode()).hexdigest(),
            "simulations": str(len(texts)),
        }
        print(f"{name}: {len(texts)} simulations", file=sys.stderr, flush=True)
    return out


def bench_manifest() -> dict[str, dict[str, str]]:
    from qoslab import _core, bench

    configs = {
        "wifi_saturation": bench.wifi_saturation_config(BENCH_SECONDS),
        "ethernet_chain": bench.ethernet_chain_config(BENCH_SECONDS),
        "switch_1000": bench.switch_config(BENCH_SECONDS),
        "atm_clip": bench.atm_clip_config(BENCH_SECONDS),
        "seed004_download": bench.seed004_download_config(BENCH_SECONDS),
    }
    out = {}
    for name, config in configs.items():
        # Run as `qoslab bench` runs them: the plan's JSON text straight to the core.
        text = _core_text(_core.simulate(bench.config_json(config), None))
        out[f"bench:{name}"] = {"core": hashlib.sha256(text.encode()).hexdigest()}
        print(f"bench {name}", file=sys.stderr, flush=True)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--against", type=Path, help="a manifest to compare with")
    parser.add_argument("--examples", nargs="*", help="only these examples (file names)")
    parser.add_argument("--no-bench", action="store_true")
    parser.add_argument("--full", action="store_true", help="the examples' tests at their written length")
    parser.add_argument(
        "--drop-core-key", action="append", default=[], help="a top-level key of the core's results not hashed"
    )
    args = parser.parse_args()
    DROPPED_CORE_KEYS.update(args.drop_core_key)
    manifest = examples_manifest(args.examples, full=args.full)
    if not args.no_bench:
        manifest.update(bench_manifest())
    args.out.write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    if args.against is None:
        return 0
    base = json.loads(args.against.read_text())
    differ = 0
    for name, digests in sorted(manifest.items()):
        old = base.get(name)
        if old is None:
            print(f"new   {name}")
            continue
        for kind, value in sorted(digests.items()):
            if old.get(kind) != value:
                differ += 1
                print(f"DIFF  {name} {kind}")
    print(f"{len(manifest)} configurations, {differ} digests differ", file=sys.stderr)
    return 1 if differ else 0


if __name__ == "__main__":
    raise SystemExit(main())
