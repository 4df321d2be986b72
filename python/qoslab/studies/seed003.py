"""Seed 003 (003_17c68763cd72f496.txt): what 1, 2 or 3 simultaneous IPsec VPNs cost a
slow 802.11b client — throughput, loss each way, round-trip time and CPU against UDP
payload size and packet rate.

Design, from ``examples/seed003_ipsec.toml``: UDP echo (LanTraffic) of 10 000 datagrams
per VPN, payloads 25 … 1600 bytes (with both sides of each fragmentation knee), 1 ms and
5 ms apart, with 0 (baseline), 1, 2 and 3 VPNs, each VPN carrying its own stream at
once (the k-th VPN's selector takes UDP port 7 + k - 1, and its stream goes there).

The client's CPU is ``pentium-ii-300mhz``, whose per_byte_esp is calibrated on ONE point
of this seed (Fig. 10: 3 VPNs, 5 ms, 600 bytes, 98 %; the row ``cpu.3vpn.5ms.600`` is
marked calibrated and does not count as agreement); the other rows are predictions. CPU
utilisation is taken over each run's traffic (the sending interval), as Windows'
Performance Monitor averaged over a test, not over the learning ping and the drain.
More rows plug in by adding to :meth:`Seed003.ours` as the model grows.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from qoslab.studies import EXACT, EXAMPLES, Figure, Ours, PaperTable, Point, Published, Study, Tolerance

PAYLOADS = [25, 50, 150, 400, 600, 1000, 1200, 1400, 1438, 1439, 1472, 1473, 1600]
GAPS = {"1 ms": 1_000_000, "5 ms": 5_000_000}
PAYLOADS_AT = {"1 ms": [25, 50, 150, 400, 600, 1000, 1400, 1472, 1600], "5 ms": PAYLOADS}
"""At 1 ms the client is overloaded above ~600 bytes and each run simulates long queues, so
fewer payloads there keep ``qoslab reproduce`` within its 10 minutes; both knees are
found at 5 ms, where nothing is lost."""
VPNS = [0, 1, 2, 3]
COUNT = 10_000

THROUGHPUT_TOL = Tolerance("echo throughput over 802.11b depends on the client's CPU, whose ESP cost is calibrated on one CPU point only, and on what the seed counts as throughput (one way or both); 15 %", rel=0.15)
LOSS_TOL = Tolerance("loss of short datagrams at 1 ms depends on socket buffers and the adapter's processing, which the seed does not give; ±10 percentage points", abs=10.0)
CPU_TOL = Tolerance("Windows 2000's Performance Monitor average; the model's per-packet costs are uncalibrated: ±5 percentage points", abs=5.0)
PAYLOAD_TOL = Tolerance("the seed's payload steps are coarse: ±200 bytes", abs=200.0)


def _k(vpns: int, gap: str) -> str:
    return f"v{vpns}/{gap.replace(' ', '')}"


class Seed003(Study):
    seed = "003"
    title = "IPsec VPNs on a slow 802.11b client"
    paper = "K. S. Munasinghe and S. A. Shahrestani, Wireless VPNs: An Evaluation of QoS Metrics and Measures (University of Western Sydney)"
    question = "What do 1, 2 or 3 simultaneous IPsec VPNs cost a slow wireless client: throughput, loss each way, round-trip time and CPU, against payload size and packet rate?"
    scenarios = ["seed003_ipsec.toml"]

    def published(self) -> list[Published]:
        return [
            Published("max.base.1ms", "§4.1 / Fig. 2: highest average throughput, baseline (no VPN), 1 ms gap", 5.97, "Mb/s", THROUGHPUT_TOL, source="§4.1"),
            Published("max.vpn1.1ms", "§4.1 / Fig. 2: highest average throughput, one IPsec VPN, 1 ms gap", 4.94, "Mb/s", THROUGHPUT_TOL, source="§4.1"),
            Published("knee.base", "§4.1: largest UDP payload before fragmentation, baseline", 1472, "bytes", EXACT, source="§4.1"),
            Published("knee.vpn", "§4.1: largest UDP payload before fragmentation, IPsec (ESP)", 1438, "bytes", EXACT, source="§4.1"),
            Published("loss.tx.short", "§4.2 / Fig. 5: transmit (outbound) loss for 25-50-byte payloads at 1 ms, up to about", 35.0, "%", LOSS_TOL, source="§4.2"),
            Published("loss.rx.short", "§4.2 / Fig. 6: receive (inbound) loss for 25-50-byte payloads at 1 ms, up to about", 20.0, "%", LOSS_TOL, source="§4.2"),
            Published("loss.vpn_below_base", "§4.2 / Fig. 5: from this payload on, VPNs lose less than the baseline at 1 ms", 400, "bytes", PAYLOAD_TOL, source="§4.2"),
            Published("fig3.small", "§4.1 / Fig. 3: up to this payload more VPNs give more total throughput (1 ms)", 150, "bytes", PAYLOAD_TOL, source="§4.1"),
            Published("fig4.slope", "§4.1 / Fig. 4: 3 VPNs' throughput slope drops from this payload (5 ms)", 600, "bytes", PAYLOAD_TOL, source="§4.1"),
            Published("fig8.loss", "§4.2 / Fig. 8: 3 VPNs' inbound loss grows above this payload (5 ms)", 600, "bytes", PAYLOAD_TOL, source="§4.2"),
            Published("cpu.max.1ms", "§4.3 / Fig. 9: highest average CPU utilisation, 1 ms", 99.2, "%", CPU_TOL, source="§4.3"),
            Published("cpu.3vpn.5ms.600", "§4.3 / Fig. 10: CPU, 3 VPNs, 600-byte payload, 5 ms: where '98% and over' begins (pentium-ii-300mhz's per_byte_esp is set on it)", 98.0, "%", Tolerance("the calibration's bisection: ±1 percentage point", abs=1.0), calibrated=True, source="§4.3"),
            Published("cpu.3vpn.5ms.1200", "§4.3 / Fig. 10: CPU, 3 VPNs, 1200-byte payload, 5 ms", 100.0, "%", CPU_TOL, source="§4.3"),
            Published("cpu.3vpn.5ms.1400", "§4.3 / Fig. 10: CPU, 3 VPNs, 1400-byte payload, 5 ms", 100.0, "%", CPU_TOL, source="§4.3"),
            Published("cpu.3vpn.5ms.over600", "§4.3 / Fig. 10: lowest CPU, 3 VPNs, payloads over 600 bytes, 5 ms (98 % and over)", 98.0, "%", Tolerance("'98 % and over': ours must be at least 93 % (5 points of model uncertainty)", abs=5.0), source="§4.3"),
        ]

    def points(self, workdir: Path | None = None) -> list[Point]:
        points = []
        for gap in GAPS:
            for vpns in VPNS:
                key = _k(vpns, gap)

                def run(progress: Any, vpns: int = vpns, gap: str = gap) -> list[dict[str, Any]]:
                    return run_echo(vpns, GAPS[gap], progress, PAYLOADS_AT[gap])

                points.append(Point(key, f"seed 003: {vpns} VPN(s), {gap} gap, {len(PAYLOADS_AT[gap])} payloads", run, spec={"vpns": vpns, "gap": gap, "payloads": PAYLOADS_AT[gap], "count": COUNT, "example": (EXAMPLES / "seed003_ipsec.toml").read_text()}, weight=1 + vpns))
        return points

    def ours(self, data: dict[str, list[dict[str, Any]]]) -> dict[str, Ours]:
        o: dict[str, Ours] = {}

        def series(vpns: int, gap: str) -> dict[int, dict[str, Any]]:
            """payload -> total over the VPNs: throughput, loss each way, rtt, cpu."""
            out: dict[int, dict[str, Any]] = {}
            for r in data.get(_k(vpns, gap), []):
                p = r["parameters"]["payload_bytes"]
                s = out.setdefault(p, {"throughput_mbps": 0.0, "sent": 0, "fwd": 0, "recv": 0, "cpu": r["metrics"]["cpu_util_pct"].get("wireless")})
                s["throughput_mbps"] += r["metrics"]["throughput_mbps"]
                s["sent"] += r["metrics"]["sent"]
                s["fwd"] += r["metrics"]["forward_received"]
                s["recv"] += r["metrics"]["received"]
            for s in out.values():
                s["loss_tx"] = 100.0 * (s["sent"] - s["fwd"]) / s["sent"] if s["sent"] else None
                s["loss_rx"] = 100.0 * (s["fwd"] - s["recv"]) / s["fwd"] if s["fwd"] else None
            return out

        b1, v1 = series(0, "1 ms"), series(1, "1 ms")
        if b1:
            best = max(b1, key=lambda p: b1[p]["throughput_mbps"])
            o["max.base.1ms"] = Ours(b1[best]["throughput_mbps"], f"at {best} bytes")
        if _knee(data, 0) is not None:
            o["knee.base"] = Ours(_knee(data, 0), "largest payload whose datagram crossed the LAN in one frame (frames counted on the wired link)")
        if v1:
            best = max(v1, key=lambda p: v1[p]["throughput_mbps"])
            o["max.vpn1.1ms"] = Ours(v1[best]["throughput_mbps"], f"at {best} bytes")
        if _knee(data, 1) is not None:
            o["knee.vpn"] = Ours(_knee(data, 1), "largest payload whose ESP datagram crossed the LAN in one frame (frames counted on the wired link)")
        short = [series(v, "1 ms") for v in VPNS]
        tx = [s[p]["loss_tx"] for s in short for p in (25, 50) if p in s and s[p]["loss_tx"] is not None]
        rx = [s[p]["loss_rx"] for s in short for p in (25, 50) if p in s and s[p]["loss_rx"] is not None]
        if tx:
            o["loss.tx.short"] = Ours(max(tx), "highest over 0-3 VPNs at 25 and 50 bytes")
        if rx:
            o["loss.rx.short"] = Ours(max(rx), "highest over 0-3 VPNs at 25 and 50 bytes")
        cpus = [s[p]["cpu"] for s in short for p in s if s[p]["cpu"] is not None]
        if cpus:
            o["cpu.max.1ms"] = Ours(max(cpus), "highest over payloads and 0-3 VPNs")
        v3 = series(3, "5 ms")
        if v3:
            for p in (600, 1200, 1400):
                if p in v3:
                    o[f"cpu.3vpn.5ms.{p}"] = Ours(v3[p]["cpu"], "the wireless client's CPU over the test's traffic")
            over = [v3[p]["cpu"] for p in v3 if p > 600 and v3[p]["cpu"] is not None]
            if over:
                o["cpu.3vpn.5ms.over600"] = Ours(min(over), "lowest over payloads above 600 bytes")
        return o

    def figures(self, data: dict[str, list[dict[str, Any]]]) -> list[Figure]:
        import matplotlib.pyplot as plt

        figs = []
        styles = [dict(color="black", marker="o", linestyle="-"), dict(color="0.4", marker="s", linestyle="--"), dict(color="black", marker="^", linestyle=":"), dict(color="0.4", marker="D", linestyle="-.")]
        for metric, ylabel, name, title, marks in (
            ("throughput_mbps", "total echoed throughput (Mb/s)", "seed003_throughput", "How much do the VPNs carry? (Figs. 2 and 4)", {("1 ms", 0): 5.97, ("1 ms", 1): 4.94}),
            ("cpu", "client CPU utilisation (%)", "seed003_cpu", "What do the VPNs cost the CPU? (Figs. 9 and 10)", {}),
        ):
            fig, axes = plt.subplots(1, 2, figsize=(10, 4), sharey=True)
            for ax, gap in zip(axes, GAPS):
                for v in VPNS:
                    recs = data.get(_k(v, gap), [])
                    per: dict[int, float] = {}
                    for r in recs:
                        p = r["parameters"]["payload_bytes"]
                        val = r["metrics"]["throughput_mbps"] if metric == "throughput_mbps" else r["metrics"]["cpu_util_pct"].get("wireless", 0.0)
                        per[p] = per.get(p, 0.0) + val if metric == "throughput_mbps" else val
                    if per:
                        xs = sorted(per)
                        ax.plot(xs, [per[x] for x in xs], label=f"{v} VPN{'s' if v != 1 else ''} (ours)" if v else "baseline (ours)", **styles[v])
                for (g, v), y in marks.items():
                    if g == gap:
                        ax.axhline(y, color="0.3", linewidth=0.8, linestyle=(0, (2, 2)))
                        ax.annotate(f"paper: {'baseline' if v == 0 else f'{v} VPN'} max {y} Mb/s", (30, y), fontsize=7, va="bottom")
                if metric == "cpu" and gap == "5 ms":
                    ax.plot([1200, 1400], [100, 100], "k*", markersize=10, label="paper: 3 VPNs 100 %")
                if metric == "cpu" and gap == "1 ms":
                    ax.axhline(99.2, color="0.3", linewidth=0.8, linestyle=(0, (2, 2)))
                    ax.annotate("paper: highest 99.2 %", (30, 99.2), fontsize=7, va="bottom")
                for knee in (1438, 1472):
                    ax.axvline(knee, color="0.75", linewidth=0.8)
                ax.set_xlabel("UDP payload (bytes)")
                ax.set_title(f"{gap} between datagrams", fontsize=9)
                ax.grid(True, color="0.9")
                ax.legend(fontsize=7)
            axes[0].set_ylabel(ylabel)
            fig.suptitle(title)
            fig.tight_layout()
            figs.append(Figure(name, title, "Lines: ours (10 000 echoed datagrams per VPN, all VPNs at once). Grey verticals: the fragmentation knees at 1438 (ESP) and 1472 bytes. Marks: numbers the seed states in its text.", fig))
        return figs

    def tables(self) -> list[PaperTable]:
        return []

    def discussion(self, rows: list[dict[str, Any]], data: dict[str, list[dict[str, Any]]]) -> list[str]:
        return [
            "The fragmentation knees come out of the bytes: 1472 bytes of UDP payload fill a 1500-byte IP MTU in clear, and 1438 with transport-mode ESP (3DES-CBC, HMAC-SHA1-96: 8 + 8 + pad8(1438 + 8 + 2) + 12 = 1496).",
            "The client's CPU is pentium-ii-300mhz: 3DES-CBC + HMAC-SHA1 at 432 cycles a byte of ESP, calibrated on Fig. 10's saturation onset (3 VPNs, 5 ms, 600 bytes, 98 %), with uncalibrated per-packet costs; every other CPU, throughput and loss row is a prediction of that one number. The streams are one per VPN, each at the gap: with three of them at 5 ms the 802.11b cell itself cannot carry the echoes of large payloads, which the seed's Fig. 7 (little outbound loss at 5 ms) does not show - the seed's streams may have shared the gap.",
            *_loss_paragraph(rows),
        ]


def _loss_paragraph(rows: list[dict[str, Any]]) -> list[str]:
    """What the short-datagram loss rows say, from the numbers."""
    by = {r["key"]: r for r in rows}
    tx, rx = by.get("loss.tx.short"), by.get("loss.rx.short")
    if not tx or tx["ours"] is None or not rx or rx["ours"] is None:
        return []
    return [
        f"Short datagrams at 1 ms: the seed saw up to about 35 % lost on the way out and 20 % on the way back, and blames socket-buffer shortages and the adapter's per-frame processing. "
        f"The model loses up to {tx['ours']:.0f} % on the way out (its stand-in CPU pays per packet and drops when its queue is full) and {rx['ours']:.0f} % on the way back: it has no socket-buffer limit and no adapter per-frame cost, so where the seed's losses come from is not what limits the model.",
        "Four rows (where VPNs start to lose less than the baseline, Fig. 3's crossing, Fig. 4's slope and Fig. 8's loss growth) have no value of ours yet: they need a rule that reads a knee off a curve, which this study does not have yet.",
    ]


def _knee(data: dict[str, list[dict[str, Any]]], vpns: int) -> int | None:
    """The largest payload whose datagrams crossed in one frame each, as counted on the
    wired link (``frames_per_datagram``), at 5 ms where nothing is lost."""
    best = None
    for r in data.get(_k(vpns, "5 ms"), []):
        p = r["parameters"]["payload_bytes"]
        if r["metrics"].get("frames_per_datagram") == 1 and (best is None or p > best):
            best = p
    return best


def run_echo(vpns: int, gap_ns: int, progress: Any, payloads: list[int] = PAYLOADS) -> list[dict[str, Any]]:
    """The payload sweep for ``vpns`` VPNs (0 = baseline), all VPNs' echo streams at once."""
    import re

    from qoslab.backends.sim import lower_network, simulate
    from qoslab.methods import DRAIN_NS, LEARNING_NS, cpu_metrics
    from qoslab.methods.common import flow_result, ms
    from qoslab.scenario.load import loads_scenario

    text = (EXAMPLES / "seed003_ipsec.toml").read_text(encoding="utf-8")
    # Keep the first `vpns` tunnels (none for the baseline).
    blocks = re.findall(r"\[\[tunnel\]\]\n(?:[^\[\n][^\n]*\n)*\n?", text)
    for block in blocks[vpns:]:
        text = text.replace(block, "", 1)
    net = lower_network(loads_scenario(text, "examples/seed003_ipsec.toml"))
    w = net.node_index("wireless")
    dst = str(net.destination("wireless", "wired"))
    streams = max(1, vpns)
    records = []
    for payload in payloads:
        progress(f"{vpns} VPN(s), {gap_ns / 1e6:g} ms gap: {payload}-byte payloads, {streams} × {COUNT} echoes")
        flows = [{"kind": "ping", "id": 0, "from": w, "to": dst, "count": 1, "interval_ns": 1_000_000_000, "payload": 56, "start_ns": 0}]
        flows += [
            {"kind": "udp-echo", "id": 1 + j, "from": w, "to": dst, "dst_port": 7 + j, "payload": payload, "count": COUNT, "interval_ns": gap_ns, "start_ns": LEARNING_NS}
            for j in range(streams)
        ]
        interval = COUNT * gap_ns
        config = net.with_flows(flows, LEARNING_NS + interval + DRAIN_NS)
        config["cpu_window_ns"] = [LEARNING_NS, LEARNING_NS + interval]  # the CPU over the test's traffic
        results = simulate(config)
        cpu = cpu_metrics(net, results)
        # Frames per datagram, counted on the wired link towards the server (the learning
        # ping and ARP add a few frames, negligible against 10 000 datagrams).
        lan = next(x for x in results["links"] if x["name"] == "lan")
        forwarded = sum(int((flow_result(results, 1 + j).get("echo") or {}).get("forward_received", 0)) for j in range(streams))
        per_datagram = round(lan["frames"][0] / forwarded) if forwarded else None
        for j in range(streams):
            f = flow_result(results, 1 + j)
            echo = f.get("echo") or {}
            sent, forward, received = int(f["sent"]), int(echo.get("forward_received", 0)), int(f["received"])
            rtt = echo.get("rtt_ns") or {}
            records.append(
                {
                    "test": "udp.echo",
                    "name": f"vpn{j + 1}" if vpns else "baseline",
                    "from": "wireless",
                    "to": "wired",
                    "parameters": {"vpns": vpns, "payload_bytes": payload, "gap_ms": gap_ns / 1e6, "count": COUNT, "port": 7 + j},
                    "metrics": {
                        "sent": sent,
                        "forward_received": forward,
                        "received": received,
                        "loss_forward_pct": round(100.0 * (sent - forward) / sent, 6) if sent else None,
                        "loss_reverse_pct": round(100.0 * (forward - received) / forward, 6) if forward else None,
                        "rtt_mean_ms": ms(rtt.get("mean")),
                        "throughput_mbps": round(int(f["bytes_received"]) * 8 / (interval / 1e9) / 1e6, 6),
                        "frames_per_datagram": per_datagram,
                        "cpu_util_pct": cpu,
                    },
                }
            )
    return records


__all__ = ["Seed003"]
