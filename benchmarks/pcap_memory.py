"""Peak memory of `qoslab run --pcap` on a long capture (issue 20: under 200 MB).

One UDP flow at 90 Mb/s (1472-byte payloads) over 100 Mb/s Ethernet for 120 s, captured
at both ports: 2.7 GB of pcap. The run goes in a child process; its peak resident memory
is the kernel's (getrusage RUSAGE_CHILDREN, ru_maxrss), with and without --pcap, and the
capture's size is read from the disk. Memory is a measurement here, not a timed test:
tests/test_pcap_limits.py asserts the same bound on shorter runs.

    .venv/bin/python benchmarks/pcap_memory.py [--seconds 120] [--keep DIR] [--json]
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SCENARIO = """\
[scenario]
name = "pcap memory"
seed = 1

[node.a]
role = "host"
address = "10.0.0.1/24"

[node.b]
role = "host"
address = "10.0.0.2/24"

[[link]]
name = "l"
type = "ethernet"
rate = "100 Mbps"
ends = ["a", "b"]

[[test]]
method = "udp.flow"
from = "a"
to = "b"
rate = "90 Mbps"
payload = 1472
duration = "{seconds} s"
"""


def measure(args: list[str]) -> dict[str, float]:
    """Run ``qoslab ARGS`` in a child of a fresh child, so that RUSAGE_CHILDREN is that run's."""
    code = (
        "import json, resource, subprocess, sys, time\n"
        "t = time.monotonic()\n"
        "r = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
        "wall = time.monotonic() - t\n"
        "u = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
        "print(json.dumps({'exit': r.returncode, 'peak_rss_mb': u.ru_maxrss / 1000, 'cpu_s': u.ru_utime + u.ru_stime, 'wall_s': wall, 'stderr': r.stderr[-2000:]}))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code, sys.executable, "-m", "qoslab", *args], capture_output=True, text=True, check=True
    )
    return json.loads(proc.stdout)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=120.0)
    parser.add_argument("--keep", type=Path, help="write the capture here and keep it (default: a temporary directory)")
    parser.add_argument("--json", action="store_true")
    opts = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="qoslab-pcap-memory-"))
    try:
        scenario = work / "udp90.toml"
        scenario.write_text(SCENARIO.format(seconds=f"{opts.seconds:g}"))
        out = opts.keep or work / "cap"
        plain = measure(["run", str(scenario)])
        captured = measure(["run", str(scenario), "--pcap", str(out)])
        files = sorted(out.rglob("*.pcap"))
        record = {
            "date": time.strftime("%Y-%m-%d", time.gmtime()),
            "seconds": opts.seconds,
            "without_pcap": {k: v for k, v in plain.items() if k != "stderr"},
            "with_pcap": {k: v for k, v in captured.items() if k != "stderr"},
            "pcap_bytes": sum(f.stat().st_size for f in files),
            "pcap_files": len(files),
        }
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if opts.json:
        print(json.dumps(record, indent=2))
    else:
        w, p = record["without_pcap"], record["with_pcap"]
        print(
            f"{opts.seconds:g} s of 90 Mb/s UDP: without --pcap {w['peak_rss_mb']:.1f} MB peak, {w['cpu_s']:.1f} s CPU; "
            f"with --pcap {p['peak_rss_mb']:.1f} MB peak, {p['cpu_s']:.1f} s CPU, {p['wall_s']:.1f} s wall, "
            f"{record['pcap_bytes'] / 1e9:.3f} GB in {record['pcap_files']} files"
        )
    ok = record["with_pcap"]["exit"] == 0 and record["without_pcap"]["exit"] == 0
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
